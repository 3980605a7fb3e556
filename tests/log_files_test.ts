// File access for the log and the report (_log/files.ts), chosen at run time, and the property it buys:
// log.ts and stats.ts import no `node:` module statically, so they bundle for a browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { fileId, openFile } from "../_log/files.ts";
import { jsonlLog } from "../log.ts";
import { statsFromFile } from "../stats.ts";
import { fileTempDir } from "./_temp.ts";

const dir = fileTempDir("toolguard-files-");
const root = fileURLToPath(new URL("..", import.meta.url));

test("openFile: append mode creates the file and every write lands at its end", () => {
  const path = join(dir, "shared.log");
  const a = openFile(path, "append");
  const b = openFile(path, "append");
  try {
    assert.equal(a.write(new TextEncoder().encode("one\n")), 4);
    assert.equal(b.write(new TextEncoder().encode("two\n")), 4);
    assert.equal(a.write(new TextEncoder().encode("three\n")), 6);
  } finally {
    a.close();
    b.close();
  }
  assert.equal(readFileSync(path, "utf8"), "one\ntwo\nthree\n");
});

test("openFile: read mode reads in order and returns 0 at end of file", () => {
  const path = join(dir, "read.txt");
  writeFileSync(path, "abcdefg");
  const file = openFile(path, "read");
  const buf = new Uint8Array(4);
  try {
    assert.equal(file.read(buf), 4);
    assert.equal(new TextDecoder().decode(buf), "abcd");
    assert.equal(file.read(buf), 3);
    assert.equal(new TextDecoder().decode(buf.subarray(0, 3)), "efg");
    assert.equal(file.read(buf), 0);
  } finally {
    file.close();
  }
});

test("openFile: a missing file is the runtime's error, with its code", () => {
  assert.throws(() => openFile(join(dir, "missing", "x.log"), "read"), (e: unknown) => {
    return (e as { code?: string }).code === "ENOENT";
  });
});

test("fileId: names the open file while the path does, not after a rename; null when nothing is there", {
  skip: process.platform === "win32" ? "inodes are checked on POSIX systems" : false,
}, () => {
  const path = join(dir, "rotated.log");
  const file = openFile(path, "append");
  try {
    assert.notEqual(file.id, null);
    assert.equal(fileId(path), file.id);
    renameSync(path, `${path}.1`);
    assert.equal(fileId(path), null);
    assert.equal(fileId(`${path}.1`), file.id);
    writeFileSync(path, "");
    assert.notEqual(fileId(path), file.id);
  } finally {
    file.close();
  }
});

test("jsonlLog and statsFromFile: two logs appending to one file are both read back", async () => {
  const path = join(dir, "calls.jsonl");
  const logs = [jsonlLog(path, { model: "a" }), jsonlLog(path, { model: "b" })];
  for (let i = 0; i < 10; i++) {
    logs[i % 2].onResult({
      ok: true,
      kind: "empty",
      items: [],
      exitCode: 0,
      signal: null,
      detail: "",
      durationMs: i,
      warnings: [],
      truncated: false,
      stderr: "",
    }, { command: "rg", args: [] });
  }
  for (const log of logs) await log.close();
  const report = await statsFromFile(path, { by: "model" });
  assert.equal(report.malformed.count, 0);
  assert.deepEqual(report.runs.groups.map((g) => [g.key, g.runs]), [["a", 5], ["b", 5]]);
});

/** The static (value) imports of a module and everything it imports, by specifier. */
function staticImports(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    const text = readFileSync(path, "utf8");
    const specifiers: string[] = [];
    // `import ... from "x"` and `export ... from "x"`, but not `import type` / `export type`.
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+"([^"]+)"/gms)) {
      specifiers.push(m[1]);
    }
    for (const m of text.matchAll(/^\s*import\s+"([^"]+)"/gm)) specifiers.push(m[1]);
    seen.set(path, specifiers);
    for (const s of specifiers) if (s.startsWith(".")) visit(resolve(dirname(path), s));
  };
  visit(join(root, entry));
  return seen;
}

test("log.ts and stats.ts import no node: module statically (they bundle for a browser)", () => {
  for (const entry of ["log.ts", "stats.ts"]) {
    const graph = staticImports(entry);
    assert.ok(graph.size > 3, `${entry}: only ${graph.size} modules found`);
    for (const [path, specifiers] of graph) {
      const builtins = specifiers.filter((s) => !s.startsWith("."));
      assert.deepEqual(builtins, [], `${path.slice(root.length)} imports ${builtins.join(", ")}`);
    }
  }
});

test("jsonlLog: a Deno program allowed to write its log but not to read it is not asked for read access", {
  skip: !("Deno" in globalThis) && "a Deno permission",
}, () => {
  const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
  const log = join(dir, "write-only.jsonl");
  const child = join(dir, "write_only_child.ts");
  // A prompt the child cannot show (stdin is no terminal) is denied, and the state says so afterwards; with a
  // terminal the user would have been asked, mid-run, for access the log never needed before.
  writeFileSync(
    child,
    `import { jsonlLog } from ${JSON.stringify(new URL("../log.ts", import.meta.url).href)};\n` +
      `const log = jsonlLog(${JSON.stringify(log)});\n` +
      `log.onMcpEvent({ event: "exit", reason: "client_closed", exitCode: 0, signal: null });\n` +
      `await log.close();\n` +
      `console.log(log.written, Deno.permissions.querySync({ name: "read", path: ${
        JSON.stringify(log)
      } }).state);\n`,
  );
  const out = spawnSync(deno, ["run", `--allow-read=${root},${child}`, `--allow-write=${log}`, child], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), "1 prompt");
  assert.equal(readFileSync(log, "utf8").split("\n").length, 2);
});
