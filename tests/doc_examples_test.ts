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
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((match) => match[1]);
}

/** The text of a module's leading doc comment, its ` * ` margins removed. */
function moduleDoc(path: string): string {
  const source = readFileSync(new URL(path, root), "utf8");
  const doc = source.match(/\/\*\*([\s\S]*?)\*\//)?.[1] ?? "";
  return doc.split("\n").map((line) => line.replace(/^ \* ?| \*$/, "")).join("\n");
}

const examples: { name: string; code: string }[] = [];
const readme = readFileSync(new URL("README.md", root), "utf8");
tsBlocks(readme).forEach((code, i) => examples.push({ name: `README.md block ${i + 1}`, code }));
for (const path of new Set(Object.values(exports))) {
  tsBlocks(moduleDoc(path)).forEach((code, i) =>
    examples.push({ name: `${path} module doc block ${i + 1}`, code })
  );
}

for (const [n, { name, code }] of examples.entries()) {
  const specifiers = [...code.matchAll(/from "([^"]+)"/g)].map((match) => match[1]);
  const foreign = specifiers.find((s) => !s.startsWith("node:") && face(s) === undefined);
  test(`doc example: ${name} runs on this runtime`, { skip: foreign && `imports ${foreign}` }, async () => {
    const file = join(dir, `example_${n}.ts`);
    writeFileSync(file, code.replace(/from "(@toolguard\/toolguard[^"]*)"/g, (_, s) => `from "${face(s)}"`));
    await import(pathToFileURL(file).href);
  });
}

test("doc example: the README and every public module's doc have examples to run", () => {
  assert.ok(examples.length >= 15, `${examples.length} examples`);
});
