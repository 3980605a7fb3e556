/**
 * The Bun tasks (`deno task compile:bun`, `test:bun`, `bench:bun`) start Bun through `scripts/bun.ts`: it
 * must find Bun and pass its output through.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { isDeno, underWine } from "./_runtime.ts";

const script = fileURLToPath(new URL("../scripts/bun.ts", import.meta.url));

test("scripts/bun.ts: runs Bun with the given arguments and passes its output and status through", {
  skip: !isDeno
    ? "runs under Deno only (the script is started by deno task)"
    // check:windows installs node_modules on the Linux side: its node_modules/bun/bin/bun.exe is Linux's Bun
    : underWine
    ? "under Wine, node_modules holds Linux's Bun (npm ran on the Linux side)"
    : false,
  timeout: 60_000,
}, () => {
  const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
  const version = spawnSync(deno, ["run", "-A", script, "--version"], { encoding: "utf8" });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, /^\d+\.\d+\.\d+/);
  const failing = spawnSync(deno, ["run", "-A", script, "-e", "process.exit(3)"], { encoding: "utf8" });
  assert.equal(failing.status, 3);
});
