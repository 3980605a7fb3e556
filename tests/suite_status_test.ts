/**
 * `scripts/_suite_status.sh`: check:windows fails a test step by what the suite printed, because Wine
 * sometimes loses an exit status (a deno.exe run that printed "FAILED | 1258 passed | 1 failed" ended with 0).
 * Here it reads outputs as Deno and Bun print them: pass, failures, a crash before the summary; and
 * windows.sh refuses a suite time limit that is none.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isWindows } from "./_runtime.ts";

const script = fileURLToPath(new URL("../scripts/_suite_status.sh", import.meta.url));
const skip = isWindows ? "a bash script of check:windows, which runs on Linux" : false;

/** Runs the script on `output` as `kind`'s; its exit status and the line it printed. */
function status(kind: string, output: string): { code: number | null; said: string } {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-suite-status-"));
  try {
    const file = join(dir, "out.txt");
    writeFileSync(file, output);
    const run = spawnSync("bash", [script, kind, file], { encoding: "utf8" });
    return { code: run.status, said: run.stdout.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const deno = {
  passed:
    "running 3 tests from ./a_test.ts\na ... ok (1ms)\n\nok | 2 passed (1 step) | 0 failed | 1 ignored (4ms)\n\n",
  failed:
    "a ... FAILED (1ms)\n\n FAILURES \n\na => ./a_test.ts:4:1\n\nFAILED | 1257 passed | 1 failed (2m15s)\n\n" +
    "error: Test failed\n",
  // Deno.exit(0) in a test: the run ends with 0 and no summary
  exited:
    "running 2 tests from ./a_test.ts\na ...\nwarning A test called Deno.exit(0) while the exit sanitizer was " +
    "disabled (sanitizeExit: false). Aborting the test run.\n",
};
const bun = {
  passed: "bun test v1.4.5\n\na_test.ts:\n(pass) a [1.18ms]\n(skip) b\n\n 2 pass\n 1 skip\n 0 fail\n" +
    " 4 expect() calls\nRan 3 tests across 1 file. [19.00ms]\n",
  failed: "(fail) a [0.78ms]\n(pass) b [0.35ms]\n\n 1 pass\n 1 fail\nRan 2 tests across 1 file. [17.00ms]\n",
  // an error outside any test (a file that throws on load): " 0 fail" is not all
  errored:
    "error: load\n-------------------------------\n\n\n 0 pass\n 0 fail\n 1 error\nRan 0 tests across 1 file. [3.00ms]\n",
  exited: "bun test v1.4.5 (a7733435c)\n\na_test.ts:\n",
};

test("_suite_status.sh: Deno's summary line decides; none at all is a failure", { skip }, () => {
  assert.deepEqual(status("deno", deno.passed), {
    code: 0,
    said: "ok | 2 passed (1 step) | 0 failed | 1 ignored",
  });
  assert.deepEqual(status("deno", deno.failed), { code: 1, said: "FAILED | 1257 passed | 1 failed" });
  assert.deepEqual(status("deno", deno.exited), {
    code: 2,
    said: 'no summary line: the run ended before it, in ./a_test.ts, during "a"',
  });
  assert.equal(status("deno", "").code, 2);
  // the last summary counts: a test may print a nested run's output earlier
  assert.equal(status("deno", deno.failed + "more output\n" + deno.passed).code, 0);
  assert.equal(status("deno", deno.passed + deno.failed).code, 1);
});

test("_suite_status.sh: Bun's count lines decide, errors outside tests too; none at all is a failure", {
  skip,
}, () => {
  assert.deepEqual(status("bun", bun.passed), {
    code: 0,
    said: "2 pass, 1 skip, 0 fail, 4 expect() calls, Ran 3 tests across 1 file",
  });
  assert.deepEqual(status("bun", bun.failed), { code: 1, said: "1 pass, 1 fail, Ran 2 tests across 1 file" });
  assert.equal(status("bun", bun.errored).code, 1);
  assert.deepEqual(status("bun", bun.exited), {
    code: 2,
    said: "no summary lines: the run ended before them, in a_test.ts, before its first result",
  });
  assert.equal(status("bun", "Ran 2 tests across 1 file. [1.00ms]\n").code, 2);
  assert.equal(status("bun", bun.failed + "more output\n" + bun.passed).code, 0);
  assert.equal(status("bun", bun.passed + bun.failed).code, 1);
});

test(
  "_suite_status.sh: a run cut short (a time-out) is told by the file and the test it was in",
  { skip },
  () => {
    // Deno prints a test's name as it starts it: the one without a result is the one that hung
    const deno =
      "running 1 test from ./tests/a_test.ts\na ... ok (1ms)\nrunning 2 tests from ./tests/b_test.ts\n" +
      "b one ... ok (2ms)\nb two ...\n";
    assert.deepEqual(status("deno", deno), {
      code: 2,
      said: 'no summary line: the run ended before it, in ./tests/b_test.ts, during "b two"',
    });
    assert.equal(
      status("deno", "running 1 test from ./tests/a_test.ts\na ... ok (1ms)\n").said,
      "no summary line: the run ended before it, in ./tests/a_test.ts",
    );
    // Bun prints a file's name as it starts it, and a test's once it ended: the hung one is after the last
    const bun = "bun test v1.4.5\n\ntests\\a_test.ts:\n(pass) a [1.00ms]\n\ntests\\b_test.ts:\n" +
      "(pass) b one [2.00ms]\n(skip) b two\n";
    assert.deepEqual(status("bun", bun), {
      code: 2,
      said: 'no summary lines: the run ended before them, in tests\\b_test.ts, after "b two"',
    });
    assert.equal(status("bun", "").said, "no summary lines: the run ended before them");
  },
);

test("_suite_status.sh: what a test printed is not taken for where the run was", { skip }, () => {
  // Deno prints a test's console output between its name and its result: the hung test printed a line with
  // " ... " and one that names a file as a run does (a nested run's output), then never ended
  const deno = "------- pre-test output -------\nloading ... done\n----- pre-test output end -----\n" +
    "running 2 tests from ./tests/c_test.ts\nc one ... ok (1ms)\nc two ...\n------- output -------\n" +
    "late ... log\nrunning 9 tests from ./zz_test.ts\n";
  assert.equal(
    status("deno", deno).said,
    'no summary line: the run ended before it, in ./tests/c_test.ts, during "c two"',
  );
  assert.equal(
    status("deno", deno + "----- output end -----\nc two ... ok (30s)\n").said,
    "no summary line: the run ended before it, in ./tests/c_test.ts",
  );
});

test("check:windows: a suite time limit of 0 (no limit at all to `timeout`) or not a number is refused", {
  skip,
}, () => {
  const windows = fileURLToPath(new URL("../scripts/windows.sh", import.meta.url));
  for (const seconds of ["0", "abc", "15m", "-5"]) {
    const run = spawnSync("bash", [windows], {
      encoding: "utf8",
      env: { ...process.env, WIN_SUITE_SECONDS: seconds, WIN_SHARED: "/nonexistent" },
    });
    assert.equal(run.status, 64, `${seconds}: ${run.stderr}`);
    assert.match(run.stderr, /WIN_SUITE_SECONDS must be a whole number of seconds above 0/);
  }
});

test("_suite_status.sh: reads the output as the Windows runtimes write it: CRLF, colours", { skip }, () => {
  const windows = (s: string) => s.replaceAll("\n", "\r\n");
  const colour = "\x1b[0m\x1b[32mok\x1b[0m | 3 passed | 0 failed \x1b[0m\x1b[38;5;245m(22ms)\x1b[0m\n";
  assert.deepEqual(status("deno", windows(colour)), { code: 0, said: "ok | 3 passed | 0 failed" });
  assert.deepEqual(status("deno", windows(deno.failed)), {
    code: 1,
    said: "FAILED | 1257 passed | 1 failed",
  });
  assert.equal(status("bun", windows(bun.passed)).code, 0);
  assert.equal(status("bun", windows(bun.failed)).code, 1);
  assert.equal(status("node", deno.passed).code, 64);
});

/** Runs `_suite_status.sh left` on `output` for the test files `files`: its exit status and the files it listed. */
function left(output: string, files: string[]): { code: number | null; left: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-suite-left-"));
  try {
    const file = join(dir, "out.txt");
    writeFileSync(file, output);
    const run = spawnSync("bash", [script, "left", file, ...files], { encoding: "utf8" });
    return { code: run.status, left: run.stdout.split("\n").filter((line) => line !== "") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const panicked = "Deno has panicked. This is a bug in Deno. Please report this\nat https://github.com/...\n";

test(
  "_suite_status.sh left: a run Deno's own panic ended goes on from the file it ended in",
  { skip },
  () => {
    const files = ["tests/a_test.ts", "tests/b_test.ts", "tests/c_test.ts", "tests/d_test.ts"];
    const started =
      "running 1 test from ./tests/a_test.ts\na ... ok (1ms)\nrunning 2 tests from ./tests\\b_test.ts\n" +
      "b one ... ok (2ms)\nb two ...\n";
    assert.deepEqual(left(started + panicked, files), { code: 0, left: files.slice(1) });
    // the banner goes to stderr: it may land inside what the test printed
    assert.deepEqual(left(started + "------- output -------\nhi\n" + panicked, files), {
      code: 0,
      left: files.slice(1),
    });
    // a panic before any file started: all of them
    assert.deepEqual(left(panicked, files), { code: 0, left: files });
    // a test that failed before the panic is never skipped by going on past it; no panic, nothing to go on from
    assert.deepEqual(left(started.replace("b one ... ok", "b one ... FAILED") + panicked, files), {
      code: 1,
      left: [],
    });
    assert.deepEqual(left(started, files), { code: 1, left: [] });
    assert.deepEqual(left(deno.failed, files), { code: 1, left: [] });
  },
);

test(
  "check:windows: after deno.exe's own panic the suite goes on from there; a failed test reruns it all once",
  {
    skip,
  },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-suite-retried-"));
    try {
      // a stand-in for `wine deno.exe test`: its first run panics in its third file, the others pass or fail
      const runtime = join(dir, "runtime.sh");
      writeFileSync(
        runtime,
        `#!/usr/bin/env bash
n=$(( $(cat "${dir}/count" 2>/dev/null || echo 0) + 1 )); echo $n >"${dir}/count"; echo "$*" >>"${dir}/args"
i=0
for f in "$@"; do
  i=$((i + 1)); echo "running 1 test from ./$f"
  if [ $n = 1 ] && [ $i = 3 ]; then echo "x ..."; echo "Deno has panicked. This is a bug in Deno."; exit 1; fi
  if [ "$f" = "$FAIL_IN" ]; then echo "x ... FAILED (1ms)"; else echo "x ... ok (1ms)"; fi
done
[ -z "$FAIL_IN" ] || { echo "FAILED | $# passed | 1 failed (1ms)"; exit 1; }
echo "ok | $# passed | 0 failed (1ms)"
`,
      );
      const windows = fileURLToPath(new URL("../scripts/windows.sh", import.meta.url));
      // windows.sh's own `step`, `suite` and `retried`, run on five files
      const harness = `log() { :; }; eval "$(sed -n '/^# step NAME SECONDS CMD/,/^# at_once "KIND/p' "$1")"
names=() states=() secs=() sentinels=(); tests=(tests/a_test.ts tests/b_test.ts tests/c_test.ts tests/d_test.ts tests/e_test.ts)
retried deno "deno.exe test" 60 bash "$2" >/dev/null 2>&1; rc=$?
printf '%s\\n' "$rc" "\${names[@]}" "\${states[@]}"`;
      const cwd = fileURLToPath(new URL("..", import.meta.url));
      const run = (failIn: string) => {
        rmSync(join(dir, "count"), { force: true });
        rmSync(join(dir, "args"), { force: true });
        const out = spawnSync("bash", ["-c", harness, "harness", windows, runtime], {
          encoding: "utf8",
          cwd,
          env: { ...process.env, FAIL_IN: failIn },
        });
        const args = spawnSync("cat", [join(dir, "args")], { encoding: "utf8" }).stdout.trim().split("\n");
        return { lines: out.stdout.trim().split("\n"), args };
      };
      const resumed = run("");
      assert.equal(resumed.lines[0], "0");
      assert.equal(
        resumed.lines[1],
        "deno.exe test (after deno.exe's own panic, from tests/c_test.ts on: 3 files)",
      );
      assert.match(
        resumed.lines[2],
        /^PASS\(exit 0; the output: ok \| 3 passed \| 0 failed; before: deno\.exe test: FAIL/,
      );
      assert.deepEqual(resumed.args.slice(1), ["tests/c_test.ts tests/d_test.ts tests/e_test.ts"]);
      // a failure of ours (in a file after the panic) fails again on a whole rerun of what was left
      const failed = run("tests/d_test.ts");
      assert.equal(failed.lines[0], "1");
      assert.equal(failed.args.length, 3);
      assert.equal(failed.args[2], failed.args[1]);
      assert.match(failed.lines[2], /^FAIL\(1; the output: FAILED \| 3 passed \| 1 failed; before: .*panic/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
