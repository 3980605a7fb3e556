/**
 * Windows under Deno and Bun: where `taskkill` cannot be started (not on the host's PATH), the guard ends the
 * tool through its own handle and says the tree was not ended, never that it was; where it can, the detail says
 * how far `taskkill /T` finds the tree. Runs only on Windows (a real runner, or deno.exe and bun.exe under Wine
 * through `deno task check:windows`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";
import process from "node:process";
import { runTool } from "../guard.ts";
import { isDeno, isWindows, underWine } from "./_runtime.ts";

// The host finds nothing on its PATH, so the tool and what it starts are named by their full paths. What the
// tool starts (the last argument) is a copy of ping.exe under a name of this run's own, which the test ends.
const HOST = `import { runTool } from GUARD;
import process from "node:process";
const sys = process.env.SystemRoot + "\\\\System32";
const left = process.argv[process.argv.length - 1];
const r = await runTool(sys + "\\\\cmd.exe", ["/c", left + " -n 10 127.0.0.1"], {
  protocol: "text",
  timeoutMs: 300,
});
console.log(JSON.stringify({ kind: r.kind, detail: r.detail }));
`;

test("runTool: Deno or Bun on Windows whose PATH has no taskkill ends the tool alone and says so", {
  skip: isWindows ? false : "Windows only",
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-taskkill-"));
  const sys = join(process.env.SystemRoot ?? "C:\\Windows", "System32");
  const left = join(dir, `toolguard-left-${process.pid}.exe`);
  try {
    const host = join(dir, "host.ts");
    const guard = pathToFileURL(fileURLToPath(new URL("../guard.ts", import.meta.url))).href;
    writeFileSync(host, HOST.replace("GUARD", JSON.stringify(guard)));
    // (Windows names are case-insensitive: a real runner's "Path" must not stay beside the PATH given here)
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name.toUpperCase() !== "PATH"),
    );
    env.PATH = join(dir, "nothing-here");
    copyFileSync(join(sys, "ping.exe"), left);
    const args = isDeno ? ["run", "-A", "--no-lock", host, left] : ["run", host, left];
    const { stdout } = await promisify(execFile)(process.execPath, args, { env, encoding: "utf8" });
    const r = JSON.parse(stdout) as { kind: string; detail: string };
    assert.equal(r.kind, "timeout", r.detail);
    assert.match(
      r.detail,
      isDeno
        ? /the guard ended the tool but not its process tree, as Deno could not run taskkill/
        : /the guard ended the tool but not its process tree, as taskkill could not be started here/,
    );
  } finally {
    // The descendant the guard could not reach, ended here (under Wine such an orphan may hang on).
    await promisify(execFile)(join(sys, "taskkill.exe"), ["/IM", basename(left), "/F"]).catch(() => {});
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});

// The tool (cmd.exe) records that it started, runs a ping for about a second, records that it is done and exits.
// The host holds its event loop from the start until well after that, so the exit is not reaped when the abort
// comes: the tool's own kill then finds it exited (Bun's kill says nothing of that; Windows' exit code does).
const RACE_HOST = `import { runTool } from GUARD;
import { existsSync } from "node:fs";
import process from "node:process";
const sys = process.env.SystemRoot + "\\\\System32";
const dir = process.argv[process.argv.length - 1];
const line = "echo s> " + dir + "\\\\started & " + sys + "\\\\ping.exe -n 2 127.0.0.1 >nul & echo d> " + dir + "\\\\done";
const controller = new AbortController();
const running = runTool(sys + "\\\\cmd.exe", ["/c", line], {
  protocol: "text",
  signal: controller.signal,
  timeoutMs: 60_000,
});
while (!existsSync(dir + "\\\\started")) await new Promise((resolve) => setTimeout(resolve, 20));
const until = Date.now() + 30_000;
while (!existsSync(dir + "\\\\done") && Date.now() < until);
const after = Date.now() + 1_000;
while (Date.now() < after);
controller.abort();
const r = await running;
console.log(JSON.stringify({ kind: r.kind, detail: r.detail }));
`;

test("runTool: Deno or Bun on Windows without taskkill, whose own kill came after the tool exited, says so", {
  // (Wine's TerminateProcess succeeds on a process that has exited, where Windows' fails: Deno's kill, which
  // has no other way to tell, then reads as having ended it. Bun reads Windows' exit code first.)
  skip: !isWindows
    ? "Windows only"
    : isDeno && underWine
    ? "Wine ends a process that has exited without an error, so Deno's kill cannot tell"
    : false,
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-race-"));
  try {
    const host = join(dir, "host.ts");
    const guard = pathToFileURL(fileURLToPath(new URL("../guard.ts", import.meta.url))).href;
    writeFileSync(host, RACE_HOST.replace("GUARD", JSON.stringify(guard)));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name.toUpperCase() !== "PATH"),
    );
    env.PATH = join(dir, "nothing-here");
    const args = isDeno ? ["run", "-A", "--no-lock", host, dir] : ["run", host, dir];
    const { stdout } = await promisify(execFile)(process.execPath, args, { env, encoding: "utf8" });
    const r = JSON.parse(stdout) as { kind: string; detail: string };
    assert.equal(r.kind, "timeout", r.detail);
    assert.match(
      r.detail,
      /the guard could not end the process tree, as (Deno could not run|taskkill could not be started).*, and the tool had already exited, so/,
    );
    assert.doesNotMatch(r.detail, /ended the tool/);
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});

test("runTool: on Windows a timeout says how far taskkill /T found the tree, not that it ended all of it", {
  skip: isWindows ? false : "Windows only",
  timeout: 60_000,
}, async () => {
  // taskkill /T follows parent links from the tool down: one whose parent had already exited is missed.
  const r = await runTool("cmd.exe", ["/c", "ping -n 10 127.0.0.1"], { protocol: "text", timeoutMs: 300 });
  assert.equal(r.kind, "timeout", r.detail);
  assert.match(
    r.detail,
    /; the guard ended the process tree, as far as taskkill \/T finds it: a process whose parent had already exited is not found/,
  );
});

test(
  "runTool: on Windows a descendant holding the output after the tool exited is said not ended, never the tree",
  { skip: isWindows ? false : "Windows only", timeout: 60_000 },
  async () => {
    // cmd.exe exits at once; what it started (a copy of ping.exe named for this run) holds stdout for about
    // 2 s, past the 1 s drain. taskkill /T from the exited tool's pid finds nothing, so the guard says it could
    // not end the tree; the test ends the copy by its name afterwards.
    const dir = mkdtempSync(join(tmpdir(), "toolguard-gone-"));
    const sys = join(process.env.SystemRoot ?? "C:\\Windows", "System32");
    const left = join(dir, `toolguard-gone-${process.pid}.exe`);
    try {
      copyFileSync(join(sys, "ping.exe"), left);
      const r = await runTool("cmd.exe", ["/c", `start /b ${left} -n 3 127.0.0.1 & echo started`], {
        protocol: "text",
        timeoutMs: 30_000,
      });
      assert.equal(r.kind, "results", r.detail);
      // (held quiet, or still writing when the drain's bound cut it: either sentence, then the tree)
      assert.match(
        r.detail,
        /^a process the tool left running (held its output open, and|still held stdout open .*;)/,
      );
      assert.match(
        r.detail,
        /the guard could not end the process tree, as taskkill \/T finds a tree only under a process still running/,
      );
      assert.doesNotMatch(r.detail, /the guard ended the process tree/);
    } finally {
      await promisify(execFile)(join(sys, "taskkill.exe"), ["/IM", basename(left), "/F"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    }
  },
);
