// The measuring scripts' command lines (scripts/_args.ts): `--help` prints the usage, and an unknown or
// malformed option or argument is one line naming the script and the usage, exit code 2, never a stack trace.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { runtimeCommand, withoutWineNoise } from "./_runtime.ts";

const script = (name: string) => fileURLToPath(new URL(`../scripts/${name}.ts`, import.meta.url));

/** Runs a script with `args` under the runtime running the tests. */
function run(name: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { command, args: full } = runtimeCommand(script(name), args);
  const r = spawnSync(command, full, {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { status: r.status, stdout: r.stdout, stderr: withoutWineNoise(r.stderr) };
}

const SCRIPTS = [
  "scan_identity",
  "validate_identity",
  "scan_ab",
  "eval",
  "measure_startup",
  "measure_guard",
  "gen_log",
  "gate_fuzz",
];
for (const name of SCRIPTS) {
  test(`${name}: --help prints the usage and exits 0; an unknown option is named, with the usage, exit 2`, () => {
    // (lines a module prints on import, such as the scan bench's note that the dev data is absent, may come
    // first: the usage and the error are looked for as whole lines)
    const help = run(name, ["--help"]);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, new RegExp(`^usage: ${name}\\.ts`, "m"));
    const bad = run(name, ["--no-such-option"]);
    assert.equal(bad.status, 2, bad.stderr);
    assert.doesNotMatch(bad.stdout, /usage/);
    assert.match(
      bad.stderr,
      new RegExp(`^${name}: Unknown option '--no-such-option'\nusage: ${name}\\.ts`, "m"),
    );
    assert.doesNotMatch(bad.stderr, /^\s+at /m); // no stack trace
  });
}

test("scan_ab: a missing option value is named; measure_guard: an unknown mode or a bad count is refused", () => {
  const missing = run("scan_ab", ["--rounds"]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^scan_ab: --rounds needs a value\nusage: scan_ab\.ts/m);
  for (const args of [["treee"], ["tree", "0"], ["tree", "5", "5"], ["overhead", "x"]]) {
    const r = run("measure_guard", args);
    assert.equal(r.status, 2, args.join(" "));
    assert.equal(
      r.stderr,
      `measure_guard: cannot read ${JSON.stringify(args.join(" "))}\n` +
        "usage: measure_guard.ts [overhead [N] [ROUNDS] | tree [N]]\n",
    );
  }
});
