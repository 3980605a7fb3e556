// tests/_temp.ts: a test file's temporary folder is gone after its tests, when a filter ran some of them too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { isDeno } from "./_runtime.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const fixture = join(root, "fixtures", "temp_dir_tests.ts");

/** What a run of the fixture's tests matching `filter` leaves in a temporary folder of its own. */
function leftAfter(filter: string): string[] {
  const temp = mkdtempSync(join(tmpdir(), "toolguard-temp-run-"));
  try {
    const args = isDeno ? ["test", "-A", "--filter", filter, fixture] : ["test", "-t", filter, fixture];
    const run = spawnSync(process.execPath, args, {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, TMPDIR: temp, TMP: temp, TEMP: temp },
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    return readdirSync(temp);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

test(
  "fileTempDir: the folder is removed when a filter runs one of the file's tests (Deno skips the after hooks then)",
  {
    timeout: 120_000,
  },
  () => {
    assert.deepEqual(leftAfter("writes one"), []);
  },
);
