// scripts/check_deps.ts, the proof that the library imports nothing beyond the runtime, covers what an entry
// point loads with import() on first use too: a lazily loaded module that imports an npm package fails it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { isDeno, isWindows } from "./_runtime.ts";
import { fileTempDir } from "./_temp.ts";

const script = fileURLToPath(new URL("../scripts/check_deps.ts", import.meta.url));
const deno = isDeno ? process.execPath : "deno";
const dir = fileTempDir("toolguard-check-deps-");

/** Runs check_deps.ts on `entry.ts` in the temp folder, whose lazily loaded `lazy.ts` holds `lazySource`. */
function checkLazy(lazySource: string): { status: number | null; output: string } {
  writeFileSync(join(dir, "entry.ts"), 'export const load = () => import("./lazy.ts");\n');
  writeFileSync(join(dir, "lazy.ts"), lazySource);
  const r = spawnSync(deno, ["run", "-A", script, "entry.ts"], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}${r.error ?? ""}` };
}

test("check deps: a module loaded on first use that imports an npm package fails the check", {
  timeout: 120_000,
  skip: isWindows ? "deno task check runs this check on Linux" : false,
}, () => {
  const local = checkLazy("export const answer = 42;\n");
  assert.equal(local.status, 0, local.output);
  assert.match(local.output, /entry\.ts: 2 local modules, no npm:, jsr: or remote imports/);
  const npm = checkLazy('import { parse } from "npm:jsonc-parser@^3.3.1";\nexport const read = parse;\n');
  assert.equal(npm.status, 1, npm.output);
  assert.match(npm.output, /entry\.ts imports beyond the runtime:\n {2}npm:\/?jsonc-parser@/);
});
