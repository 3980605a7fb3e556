import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Every module of the library: the root modules and everything in the private folders (`_common`, `_scan`, ...,
 * with their subfolders such as `_extract/readers`), as paths from the root.
 */
function libraryModules(): string[] {
  const top = readdirSync(root, { withFileTypes: true });
  const roots = top.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => e.name);
  const inFolders = top.filter((e) => e.isDirectory() && e.name.startsWith("_")).flatMap((e) =>
    (readdirSync(join(root, e.name), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts"))
      .map((f) => join(e.name, f))
  );
  return [...roots, ...inFolders];
}

/** Each character beyond ASCII in `text`, as `line:column U+XXXX`. */
function nonAscii(text: string): string[] {
  const found: string[] = [];
  const lines = text.split("\n");
  for (let l = 0; l < lines.length; l++) {
    for (let c = 0; c < lines[l].length; c++) {
      const unit = lines[l].charCodeAt(c);
      if (unit >= 0x80) found.push(`${l + 1}:${c + 1} U+${unit.toString(16).toUpperCase().padStart(4, "0")}`);
    }
  }
  return found;
}

// Deno hands a module whose source is all ASCII to V8 as a one-byte string outside the heap; a single other
// character (a "…" in a comment) makes it decode the whole module, with its inline source map, into a two-byte
// string on the heap. Across the modules validate.ts loads that was about 450 KB, two young-generation
// collections and ~2 ms of CPU per import (13.1 -> 11.2 ms over a bare script, scripts/measure_startup.ts);
// across the rest of mod.ts's graph (the extractor's readers, the MCP guard, the log) 1.3 MB of emitted
// source, one collection and 3.3 M instructions (callgrind) of its import. Every face's modules, so no face
// pays it.
test("sources: every module of the library is ASCII, so Deno loads it without a copy", () => {
  const files = libraryModules();
  assert.ok(files.length > 120, `only ${files.length} files found`);
  const offenders = files.flatMap((f) =>
    nonAscii(readFileSync(join(root, f), "utf8")).slice(0, 3).map((at) => `${f}:${at}`)
  );
  assert.deepEqual(
    offenders,
    [],
    "write characters beyond ASCII as escapes in code (\\u2026 for an ellipsis) and in ASCII in comments " +
      '("..." or "-")',
  );
});

/**
 * The names `source` declares (a function, a variable, a class, a type) or imports, as a `{@link}` in it may
 * name them.
 */
function namesInScope(source: string): Set<string> {
  const names = new Set<string>();
  const declared = /\b(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g;
  for (const [, name] of source.matchAll(declared)) names.add(name);
  for (const [, list] of source.matchAll(/\b(?:import|export)\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of list.split(",")) {
      const name = part.replace(/\btype\s+/, "").split(/\s+as\s+/).pop()!.trim();
      if (name !== "") names.add(name);
    }
  }
  const whole = /\bimport\s+(?:type\s+)?(?:\*\s+as\s+)?([A-Za-z_$][\w$]*)\s+from/g; // a default or namespace
  for (const [, name] of source.matchAll(whole)) names.add(name);
  return names;
}

// A `{@link name}` the module neither declares nor imports links nowhere (deno doc and editors show it as
// plain text), and says where to look when the name has moved to another module: name it with its module in
// backquotes then, as "`copyAsSent` (json.ts)".
// {@link name}, {@linkcode name} and {@linkplain name} alike: the name each links (not a URL).
const LINK = /\{@link(?:code|plain)?\s+([A-Za-z_$][\w$]*)(?![\w$:])/g;

test("sources: every {@link} in a module of the library names what the module declares or imports", () => {
  let links = 0;
  const unresolved = libraryModules().flatMap((f) => {
    const source = readFileSync(join(root, f), "utf8");
    const names = namesInScope(source);
    const named = [...source.matchAll(LINK)].map(([, name]) => name);
    links += named.length;
    return named.filter((name) => !names.has(name) && !(name in globalThis)).map((name) => `${f}: ${name}`);
  });
  assert.ok(links > 100, `only ${links} links found`);
  assert.deepEqual(unresolved, [], "import the name, or write it in backquotes with its module");
});
