// The README's Python example, run by python3 against the `toolguard` command (the CLI under the runtime
// running the tests, behind a `toolguard` shim on PATH).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readmeBlock, toolguardOnPath } from "./_readme.ts";
import { isWindows } from "./_runtime.ts";

const hasPython = !isWindows && spawnSync("python3", ["--version"]).status === 0;

test("README From Python: the example drives toolguard run --json and toolguard validate", {
  skip: hasPython ? false : "no python3 on PATH (or Windows): the README's Python example did not run",
  timeout: 120_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-python-"));
  try {
    const env = toolguardOnPath(dir);
    writeFileSync(join(dir, "example.py"), readmeBlock("From Python (or any language)", "python"));
    const run = spawnSync("python3", ["example.py"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 100_000,
      env,
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^Tool did not run successfully \(spawn, exit n\/a\)/);
    // the retry hint names the place as the model reads it, with what was expected and received
    assert.match(
      run.stdout,
      /^1\. argument_type_mismatch at "query": expected string, received integer 42\.$/m,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
