// The TypeScript examples of README.md and of every public module's doc, run under the runtime running the
// tests: `deno test --doc` runs them under Deno alone, and the README says the library works on Bun too, so an
// example that only Deno can run (`Deno.makeTempFile`, `deno eval` as the tool) fails here under Bun. Each
// block is written to a temporary file with `@toolguard/toolguard` and its faces pointed at this checkout, and
// imported; a block that imports a package (the gate's `openai` client) is left to `deno test --doc`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { fileTempDir } from "./_temp.ts";

const root = new URL("..", import.meta.url);
const dir = fileTempDir("toolguard-doc-examples-");
const exports = (JSON.parse(readFileSync(new URL("deno.json", root), "utf8")) as {
  exports: Record<string, string>;
}).exports;

/** The file URL of the module a specifier of the package names, or undefined for any other specifier. */
function face(specifier: string): string | undefined {
  const key = specifier === "@toolguard/toolguard"
    ? "."
    : specifier.replace(/^@toolguard\/toolguard\//, "./");
  return exports[key] === undefined ? undefined : new URL(exports[key], root).href;
}

/** The `ts` blocks of a Markdown text (fences tagged `ignore` left out). */
function tsBlocks(markdown: string): string[] {
  // A fence ends its line in \r\n too (a checkout with Windows line ends), or the blocks would go unseen.
  return [...markdown.matchAll(/^```ts\r?\n([\s\S]*?)^```/gm)].map((match) => match[1]);
}

/** The text of a module's leading doc comment, its ` * ` margins removed. */
function moduleDoc(path: string): string {
  const source = readFileSync(new URL(path, root), "utf8");
  const doc = source.match(/\/\*\*([\s\S]*?)\*\//)?.[1] ?? "";
  return doc.split("\n").map((line) => line.replace(/^ \* ?| \*$/, "")).join("\n");
}

const examples: { name: string; source: string; code: string }[] = [];
const sources = ["README.md", ...new Set(Object.values(exports))];
for (const source of sources) {
  const text = source === "README.md" ? readFileSync(new URL(source, root), "utf8") : moduleDoc(source);
  const what = source === "README.md" ? "" : " module doc";
  tsBlocks(text).forEach((code, i) =>
    examples.push({ name: `${source}${what} block ${i + 1}`, source, code })
  );
}

/** The package's own specifiers: a face the package does not export is the example's error, not a package. */
const OWN = /^@toolguard\/toolguard(\/|$)/;

for (const [n, { name, code }] of examples.entries()) {
  const specifiers = [...code.matchAll(/from "([^"]+)"/g)].map((match) => match[1]);
  const foreign = specifiers.find((s) => !s.startsWith("node:") && !OWN.test(s));
  test(`doc example: ${name} runs on this runtime`, { skip: foreign && `imports ${foreign}` }, async () => {
    const missing = specifiers.filter((s) => OWN.test(s) && face(s) === undefined);
    assert.deepEqual(missing, [], "the package exports no such face (deno.json exports)");
    const file = join(dir, `example_${n}.ts`);
    writeFileSync(file, code.replace(/from "(@toolguard\/toolguard[^"]*)"/g, (_, s) => `from "${face(s)}"`));
    await import(pathToFileURL(file).href);
  });
}

test("doc example: the README and every public module's doc have examples to run", () => {
  const without = sources.filter((source) => !examples.some((example) => example.source === source));
  assert.deepEqual(without, [], "no ts block found: are they still fenced as ```ts?");
});
