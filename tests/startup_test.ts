// Start-up (issue 18): importing the library does no table building that the first call can do instead. On Bun
// the first calls of `Array.prototype.flatMap` and of what its callback runs took 0.2 to 0.5 ms of the import
// where a module's top level made a list with it, so no module on any face's import path calls it at load.
// Run in a child process: modules this runner has already loaded (Bun runs every test file in one process)
// would not run their top level again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { evalCommand } from "./_runtime.ts";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

test("start-up: importing mod.ts (every face) calls Array.prototype.flatMap nowhere", () => {
  const mod = pathToFileURL(join(root, "mod.ts")).href;
  const code = "let calls = 0; const flatMap = Array.prototype.flatMap;" +
    "Array.prototype.flatMap = function (...a) { calls++; return flatMap.apply(this, a); };" +
    `await import(${JSON.stringify(mod)}); console.log(calls);`;
  const { command, args } = evalCommand(code);
  const out = execFileSync(command, args, { encoding: "utf8" });
  assert.equal(out.trim(), "0");
});
