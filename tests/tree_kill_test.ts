// Ending a tool's whole process tree when its descendants try to escape it: a grandchild in its own session
// (setsid), a double-forked descendant, one that ignores SIGTERM, and a setsid'd orphan left holding stdout
// after the tool exited. Each one holds stdout open; none may be left running.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";
import { promisify } from "node:util";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "../guard.ts";
import { relayMcp } from "../mcp.ts";
import { KILL_GRACE_MS } from "../_run/run_tool.ts";
import { groupOnlyNote } from "../_run/runtime.ts";
import { NOT_ALL_GRANTED } from "../_run/tree.ts";
import { pidFile, waitGone, waitPids } from "./_guard_helpers.ts";
import { isDeno, isLinux, runtimeCommand } from "./_runtime.ts";

const treeTool = runtimeCommand(fileURLToPath(new URL("../fixtures/tree_tool.ts", import.meta.url)));
const hasSetsid = ["/usr/bin/setsid", "/bin/setsid"].some((p) => existsSync(p));
// The marker in the environment (read from /proc) is what reaches a descendant that left the process group.
const linuxOnly = { timeout: 60_000, skip: isLinux ? false : "finds escaped descendants through /proc" };
const withSetsid = { ...linuxOnly, skip: linuxOnly.skip || (hasSetsid ? false : "no setsid program") };
// Tells a run ended by the abort from one that waited for its descendants (timeoutMs, 30 s): a guard against
// hanging, not a measure of speed, so a slow or busy machine cannot fail it (real numbers:
// scripts/measure_guard.ts tree).
const SLACK_MS = 12_000;

/**
 * Run a tree_tool scenario; once its `expected` processes have recorded their pids, abort the run (unless
 * `abort` is false: the tool exits by itself). Returns the result, how long it took to settle after the abort
 * and which recorded processes are still running once they have had time to die.
 */
async function runScenario(scenario: string, expected: number, { abort = true } = {}) {
  const pids = pidFile();
  try {
    const controller = new AbortController();
    const running = runTool(treeTool.command, [...treeTool.args, scenario], {
      env: { TOOLGUARD_FAKE_PIDFILE: pids.path },
      signal: controller.signal,
      timeoutMs: 30_000,
    });
    let abortedAt = performance.now();
    if (abort) {
      await waitPids(pids, expected, 20_000);
      abortedAt = performance.now();
      controller.abort();
    }
    const r = await running;
    const settleMs = performance.now() - abortedAt;
    const started = [...new Set(pids.pids())];
    assert.ok(started.length >= expected, `${scenario}: ${started.length} of ${expected} pids recorded`);
    return { r, settleMs, survivors: await waitGone(started) };
  } finally {
    pids.cleanup();
  }
}

for (
  const [scenario, expected, options] of [
    ["setsid-grandchild", 3, withSetsid],
    ["double-fork", 2, linuxOnly],
    ["term-grandchild", 2, linuxOnly],
  ] as const
) {
  test(`runTool: ${scenario}, an abort ends every descendant and settles on time`, options, async () => {
    const { r, settleMs, survivors } = await runScenario(scenario, expected);
    assert.equal(r.kind, "timeout", r.detail);
    assert.match(r.detail, /abort/);
    assert.equal(r.items, null);
    assert.ok(settleMs < KILL_GRACE_MS + SLACK_MS, `settled ${settleMs} ms after the abort`);
    assert.deepEqual(survivors, [], "no descendant left alive");
  });
}

test(
  "runTool: a tool that is setsid itself (its own session, forking first where it leads a group) is ended on time",
  withSetsid,
  async () => {
    const pids = pidFile();
    try {
      const setsid = ["/usr/bin/setsid", "/bin/setsid"].find((p) => existsSync(p))!;
      const controller = new AbortController();
      // -w: where setsid leads the group it was started in (Bun and Node start it so), it forks, the child calls
      // setsid and execs the fake tool, and setsid waits for it; under Deno it calls setsid() in place.
      const running = runTool(setsid, ["-w", treeTool.command, ...treeTool.args, "hold", "30"], {
        env: { TOOLGUARD_FAKE_PIDFILE: pids.path },
        signal: controller.signal,
        timeoutMs: 30_000,
      });
      await waitPids(pids, 1, 20_000);
      const abortedAt = performance.now();
      controller.abort();
      const r = await running;
      const settleMs = performance.now() - abortedAt;
      assert.equal(r.kind, "timeout", r.detail);
      assert.ok(settleMs < KILL_GRACE_MS + SLACK_MS, `settled ${settleMs} ms after the abort`);
      const started = pids.pids();
      assert.equal(started.length, 1, "the fake tool recorded its pid");
      assert.deepEqual(await waitGone(started), [], "the tool in its own session was ended");
    } finally {
      pids.cleanup();
    }
  },
);

test(
  "runTool: setsid-orphan, what the tool printed is kept and its escaped descendant ended",
  withSetsid,
  async () => {
    const { r, survivors } = await runScenario("setsid-orphan", 2, { abort: false });
    assert.equal(r.kind, "results", r.detail);
    assert.deepEqual(r.items, ["kept"]);
    assert.deepEqual(survivors, [], "no descendant left alive");
  },
);

for (
  const [flags, why] of [
    [["--allow-run", "--allow-env"], "/proc is not readable here"],
    [["--allow-run", "--allow-env", "--allow-read=/proc"], NOT_ALL_GRANTED],
    // --allow-all with a deny flag beside it: the note must not ask for what is given.
    [["--allow-all", "--deny-run=uname"], NOT_ALL_GRANTED],
    // An --ignore flag refuses them as well (NotCapable), with --allow-all and no deny flag.
    [["--allow-all", "--ignore-env=TOOLGUARD_UNSET"], NOT_ALL_GRANTED],
  ] as const
) {
  test(
    `runTool: Deno ${flags.join(" ")}: the process group ends the tree, the detail says why`,
    { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
    async () => {
      const pids = pidFile();
      try {
        const host = fileURLToPath(new URL("../fixtures/restricted_host.ts", import.meta.url));
        const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
        // Not execFileSync: a host stalled on a starved machine must not also stall this runner past its timeout.
        const { stdout: out } = await promisify(execFile)(deno.execPath(), [
          "run",
          ...flags,
          host,
          "grandchild",
          pids.path,
          "2",
        ], { encoding: "utf8" });
        const r = JSON.parse(out) as { kind: string; detail: string };
        assert.equal(r.kind, "timeout", r.detail);
        assert.ok(
          r.detail.includes(`the guard ended the process tree, ${groupOnlyNote(why)}`),
          r.detail,
        );
        const started = [...new Set(pids.pids())];
        assert.ok(started.length >= 2, "tool and its descendant recorded their pids");
        assert.deepEqual(await waitGone(started), [], "no descendant left alive");
      } finally {
        pids.cleanup();
      }
    },
  );
}

/**
 * For fixtures/restricted_run.ts: once its third tool (pid in `dir/exited`) is a zombie, as this process may
 * read in /proc and the host may not, make `dir/zombie` for the host to abort it. Gives up once `hosting` ends.
 */
async function zombieSeen(dir: string, hosting: Promise<unknown>): Promise<void> {
  let ended = false;
  hosting.then(() => (ended = true), () => (ended = true));
  const pidText = () => existsSync(`${dir}/exited`) ? readFileSync(`${dir}/exited`, "utf8") : "";
  while (!ended && !pidText().endsWith("\n")) await new Promise((resolve) => setTimeout(resolve, 5));
  const stat = `/proc/${pidText().trim()}/stat`;
  while (!ended && !(existsSync(stat) && /\) Z /.test(readFileSync(stat, "utf8")))) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  writeFileSync(`${dir}/zombie`, "");
}

/** The results of fixtures/restricted_run.ts run in `dir` with `run` (an --allow-run flag) and no --allow-all. */
async function restrictedRun(dir: string, run: string) {
  const host = fileURLToPath(new URL("../fixtures/restricted_run.ts", import.meta.url));
  const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
  const hosting = promisify(execFile)(deno.execPath(), [
    "run",
    run,
    `--allow-read=${dir}`,
    `--allow-write=${dir}`,
    host,
    dir,
  ], { encoding: "utf8" });
  await zombieSeen(dir, hosting);
  return JSON.parse((await hosting).stdout) as Record<
    "abort" | "daemon" | "exited",
    { kind: string; detail: string; exitCode: number | null }
  >;
}

test(
  "runTool: Deno with a partial --allow-run ends the tool alone and says so, never that it ended the tree",
  { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  async () => {
    const pids = pidFile();
    const read = (name: string) => readFileSync(`${pids.dir}/${name}`, "utf8").trim().split(" ").map(Number);
    let sleeps: number[] = [];
    try {
      const r = await restrictedRun(pids.dir, "--allow-run=/bin/sh");
      const [tool, sleep] = read("abort");
      sleeps = [sleep, ...read("daemon")];
      assert.equal(r.abort.kind, "timeout", r.abort.detail);
      assert.match(
        r.abort.detail,
        /; the guard ended the tool but not its process tree, as Deno's run permission is partial: .*--allow-run/,
      );
      assert.deepEqual(await waitGone([tool]), [], "the tool itself was ended (through its own handle)");
      // The tool had exited: nothing was reached, and the detail does not say otherwise.
      assert.match(
        r.daemon.detail,
        /^a process the tool left running held its output open, and the guard could not end the process tree, as/,
      );
      assert.doesNotMatch(`${r.abort.detail} ${r.daemon.detail}`, /ended the process tree|\/proc/);
      // A tool that had exited by itself, unreaped, when the guard's own kill came: /proc/PID/stat, which tells
      // a zombie, is read only with --allow-all, so its exit tells; the guard does not say it ended the tool.
      assert.equal(r.exited.kind, "timeout", r.exited.detail);
      assert.equal(r.exited.exitCode, 3, "the tool exited by itself");
      assert.match(
        r.exited.detail,
        /; the guard could not end the process tree, as Deno's run permission is partial/,
      );
    } finally {
      for (const pid of sleeps) {
        try {
          process.kill(pid, "SIGKILL"); // what the guard could not reach
        } catch {
          // gone
        }
      }
      pids.cleanup();
    }
  },
);

test(
  "runTool: Deno with --allow-run but not --allow-all says a tool that had exited by itself did, not that it ended it",
  { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  async () => {
    const pids = pidFile();
    try {
      // Every program may run, so the process group is signalled; /proc/PID/stat, which would show the third
      // tool a zombie, is refused without --allow-all: its exit (code 3, not the kill's signal) tells.
      const r = await restrictedRun(pids.dir, "--allow-run");
      const groupOnly =
        "the guard ended the process tree, found by its process group only (/proc is not readable here)";
      assert.equal(r.abort.kind, "timeout", r.abort.detail);
      assert.ok(
        r.abort.detail.endsWith(`; ${groupOnly}: a descendant that left the group may have survived`),
        r.abort.detail,
      );
      assert.equal(r.exited.kind, "timeout", r.exited.detail);
      assert.equal(r.exited.exitCode, 3, "the tool exited by itself");
      assert.ok(
        r.exited.detail.endsWith(
          `; ${groupOnly}: a descendant that left the group may have survived, and the tool's exit was its own`,
        ),
        r.exited.detail,
      );
      const [, sleep] = readFileSync(`${pids.dir}/abort`, "utf8").trim().split(" ").map(Number);
      const daemon = Number(readFileSync(`${pids.dir}/daemon`, "utf8").trim());
      assert.deepEqual(await waitGone([sleep, daemon]), [], "the group's sleeps were ended");
    } finally {
      pids.cleanup();
    }
  },
);

test(
  "runTool: Deno with --allow-run but not --allow-all does not say a tool that left on a SIGTERM it caught exited by itself",
  { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-caught-"));
    try {
      const host = join(dir, "host.ts");
      // Still running at its time limit: it exits with code 3 only on the guard's SIGTERM.
      writeFileSync(
        host,
        `import { runTool } from ${JSON.stringify(fileURLToPath(new URL("../guard.ts", import.meta.url)))};
const r = await runTool("/bin/sh", ["-c", 'trap "exit 3" TERM; sleep 30 & wait'], { timeoutMs: 300 });
console.log(JSON.stringify({ kind: r.kind, exitCode: r.exitCode, detail: r.detail }));
`,
      );
      const root = fileURLToPath(new URL("..", import.meta.url));
      const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
      const { stdout } = await promisify(execFile)(deno.execPath(), [
        "run",
        "--allow-run",
        `--allow-read=${root},${dir}`,
        host,
      ], { encoding: "utf8" });
      const r = JSON.parse(stdout) as { kind: string; exitCode: number | null; detail: string };
      assert.equal(r.kind, "timeout", r.detail);
      assert.equal(r.exitCode, 3, "the tool caught the SIGTERM and exited with its code");
      assert.doesNotMatch(r.detail, /by itself/);
      assert.ok(r.detail.endsWith(", and the tool's exit was its own"), r.detail);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "runTool: Deno with --deny-run never starts a denied tool through the setsid launcher",
  {
    ...linuxOnly,
    skip: linuxOnly.skip || (isDeno && hasSetsid ? false : "needs Deno's permissions and setsid"),
  },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-deny-"));
    try {
      const host = join(dir, "host.ts");
      writeFileSync(
        host,
        `import { runTool } from ${JSON.stringify(fileURLToPath(new URL("../guard.ts", import.meta.url)))};
const r = await runTool("uname", [], { protocol: "text" });
console.log(JSON.stringify({ kind: r.kind, detail: r.detail }));
`,
      );
      const root = fileURLToPath(new URL("..", import.meta.url));
      const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
      // No /proc to read: the guard finds the tree by process group, through setsid where it may. `run` is
      // granted but for uname (partial): setsid would exec what Deno refuses to.
      const { stdout: out } = await promisify(execFile)(deno.execPath(), [
        "run",
        "--allow-run",
        "--deny-run=uname",
        "--allow-env",
        `--allow-read=${root},${dir},/usr/bin,/bin`,
        host,
      ], { encoding: "utf8" });
      const r = JSON.parse(out) as { kind: string; detail: string };
      assert.equal(r.kind, "spawn", r.detail);
      assert.match(r.detail, /run access/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcp: a server's descendant that ignores SIGTERM is ended when the server itself leaves on it",
  { timeout: 60_000, skip: process.platform === "win32" ? "POSIX signals" : false },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-relay-term-"));
    let sleep = 0;
    try {
      const controller = new AbortController();
      const input = silentUntil(controller.signal);
      // The shell dies of the relay's SIGTERM; its sleep, started with SIGTERM ignored, does not.
      const script = '(trap "" TERM; exec sleep 7.41) </dev/null >/dev/null 2>&1 & echo $! > "$0/pid"; wait';
      const running = relayMcp({
        command: "/bin/sh",
        args: ["-c", script, dir],
        input,
        output: () => {},
        stderr: "ignore",
        signal: controller.signal,
      });
      const pid = () => existsSync(join(dir, "pid")) ? readFileSync(join(dir, "pid"), "utf8") : "";
      while (!pid().endsWith("\n")) await new Promise((resolve) => setTimeout(resolve, 10));
      sleep = Number(pid());
      controller.abort();
      const exit = await running;
      assert.equal(exit.reason, "aborted", exit.detail);
      assert.equal(exit.signal, "SIGTERM", "the server left on the SIGTERM");
      assert.deepEqual(await waitGone([sleep]), [], "the sleep that ignores SIGTERM was ended");
    } finally {
      if (sleep > 0) {
        try {
          process.kill(sleep, "SIGKILL");
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcp: a server that leaves on SIGTERM does not cut its descendants' grace short: one cleaning up finishes",
  { timeout: 60_000, skip: process.platform === "win32" ? "POSIX signals" : false },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-relay-grace-"));
    let cleaner = 0;
    try {
      // The shell's child cleans up on SIGTERM (0.2 s, well inside the relay's 1 s grace), then exits: it
      // waits in `wait`, which a trapped signal interrupts at once (a foreground sleep would hold the trap back).
      writeFileSync(
        join(dir, "cleaner.sh"),
        'trap \'sleep 0.2; echo done > "$1/clean"; exit 0\' TERM\necho $$ > "$1/ready"\nsleep 30 & wait\n',
      );
      const controller = new AbortController();
      const input = silentUntil(controller.signal);
      const running = relayMcp({
        command: "/bin/sh",
        args: ["-c", 'sh "$0/cleaner.sh" "$0" </dev/null >/dev/null 2>&1 & wait', dir],
        input,
        output: () => {},
        stderr: "ignore",
        signal: controller.signal,
      });
      const ready = () => existsSync(join(dir, "ready")) ? readFileSync(join(dir, "ready"), "utf8") : "";
      while (!ready().endsWith("\n")) await new Promise((resolve) => setTimeout(resolve, 10));
      cleaner = Number(ready());
      controller.abort();
      const exit = await running;
      assert.equal(exit.reason, "aborted", exit.detail);
      assert.equal(exit.signal, "SIGTERM", "the server (the shell) left on the SIGTERM at once");
      assert.deepEqual(await waitGone([cleaner]), [], "the cleaner exited");
      assert.ok(existsSync(join(dir, "clean")), "the cleaner finished its cleanup before any SIGKILL");
    } finally {
      if (cleaner > 0) {
        try {
          process.kill(cleaner, "SIGKILL");
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

for (const how of ["exits by itself", "exits at the end of its input"] as const) {
  test(
    `relayMcp: a server that ${how} leaves its descendants SIGTERM and the grace to clean up before SIGKILL`,
    { timeout: 60_000, skip: process.platform === "win32" ? "POSIX signals" : false },
    async () => {
      // What outlived the server was sent SIGKILL at once: a child cleaning up on SIGTERM (0.2 s, well inside
      // the relay's 1 s grace) never got to. It waits in `wait`, which a trapped signal interrupts at once.
      const dir = mkdtempSync(join(tmpdir(), "toolguard-relay-left-"));
      let cleaner = 0;
      try {
        writeFileSync(
          join(dir, "cleaner.sh"),
          'trap \'sleep 0.2; echo done > "$1/clean"; exit 0\' TERM\necho $$ > "$1/ready"\nsleep 30 & wait\n',
        );
        const ready = () => existsSync(join(dir, "ready")) ? readFileSync(join(dir, "ready"), "utf8") : "";
        const untilReady = async () => {
          while (!ready().endsWith("\n")) await new Promise((resolve) => setTimeout(resolve, 10));
        };
        const leave = new AbortController();
        // The client stays until the server has gone (by itself), or leaves once the cleaner runs.
        const input = how === "exits by itself" ? silentUntil(leave.signal) : (async function* () {
          await untilReady();
          yield* [];
        })();
        const start = 'sh "$0/cleaner.sh" "$0" </dev/null >/dev/null 2>&1 & ';
        const exit = await relayMcp({
          command: "/bin/sh",
          args: [
            "-c",
            start +
            (how === "exits by itself"
              ? 'until [ -s "$0/ready" ]; do sleep 0.01; done; exit 0'
              : "cat >/dev/null; exit 0"),
            dir,
          ],
          input,
          output: () => {},
          stderr: "ignore",
        });
        leave.abort();
        await untilReady();
        cleaner = Number(ready());
        assert.equal(exit.reason, how === "exits by itself" ? "server_exited" : "client_closed", exit.detail);
        assert.equal(exit.exitCode, 0, "the server exited by itself");
        assert.deepEqual(await waitGone([cleaner]), [], "the cleaner was ended");
        assert.ok(existsSync(join(dir, "clean")), "the cleaner finished its cleanup before any SIGKILL");
      } finally {
        if (cleaner > 0) {
          try {
            process.kill(cleaner, "SIGKILL");
          } catch {
            // gone
          }
        }
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}

// Root may give a pid namespace its own next pid (/proc/sys/kernel/ns_last_pid): there a pid is reused on demand.
const canReusePids = isLinux && process.getuid?.() === 0 && existsSync("/usr/bin/unshare");

test(
  "relayMcp: once the server is reaped, a process given its pid (leading a group of that number) is not signalled",
  { timeout: 60_000, skip: canReusePids ? false : "needs root and unshare, to reuse a pid on demand" },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-relay-reuse-"));
    try {
      const host = join(dir, "host.ts");
      // The server leaves on SIGTERM; its child, in a session of its own (the server's group empty then),
      // ignores it, so the relay waits its grace before the SIGKILL. Meanwhile the server's pid is given to a
      // sleep leading a group of that number, by a shell ready beforehand: it forks as soon as it reads the pid
      // (the host's own threads take pids too).
      const script =
        `setsid sh -c 'trap "" TERM; echo > "$0/ready"; sleep 5' "$0" </dev/null >/dev/null 2>&1 & wait`;
      const giver = `read n < "$0/fifo"; echo $((n - 1)) > /proc/sys/kernel/ns_last_pid; ` +
        `setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $! > "$0/victim"; wait $!; echo $? > "$0/ended"`;
      writeFileSync(
        host,
        `import { relayMcp } from ${JSON.stringify(fileURLToPath(new URL("../mcp.ts", import.meta.url)))};
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
const dir = ${JSON.stringify(dir)};
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const ended = () => existsSync(dir + "/ended") ? readFileSync(dir + "/ended", "utf8").trim() : "";
execFileSync("mkfifo", [dir + "/fifo"]);
writeFileSync(dir + "/victim", "");
spawn("/bin/sh", ["-c", ${JSON.stringify(giver)}, dir], { stdio: "ignore" });
const controller = new AbortController();
let server = 0;
const relaying = relayMcp({
  command: "/bin/sh",
  args: ["-c", ${JSON.stringify(script)}, dir],
  input: (async function* () { await new Promise((r) => controller.signal.addEventListener("abort", r)); yield* []; })(),
  output: () => {},
  stderr: "ignore",
  signal: controller.signal,
  onEvent: (event) => { if (event.event === "spawn") server = event.pid; },
});
while (!existsSync(dir + "/ready")) await wait(5);
controller.abort();
while (alive(server)) await wait(2); // (until reaped)
writeFileSync(dir + "/fifo", server + "\\n");
while (!readFileSync(dir + "/victim", "utf8").endsWith("\\n")) await wait(2);
const victim = Number(readFileSync(dir + "/victim", "utf8"));
const exit = await relaying;
// (a SIGKILL sent lands at once: its shell reaps it and says so)
for (let i = 0; i < 50 && ended() === ""; i++) await wait(10);
console.log(JSON.stringify({ server, victim, ended: ended() || "running", detail: exit.detail }));
try { process.kill(victim, "SIGKILL"); } catch { /* gone */ }
`,
      );
      // Under Deno without --allow-all: the markers do not work, and the server's process group is signalled.
      const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
      const run = deno === undefined ? [process.execPath, host] : [
        deno.execPath(),
        "run",
        "--allow-run",
        "--allow-env",
        `--allow-read=${fileURLToPath(new URL("..", import.meta.url))},${dir}`,
        `--allow-write=${dir}`,
        host,
      ];
      // (sh, not the runtime, is the namespace's init; `exit` keeps it from exec'ing the runtime in its place)
      const { stdout } = await promisify(execFile)(
        "/usr/bin/unshare",
        ["--pid", "--fork", "--mount-proc", "sh", "-c", '"$@"; exit $?', "sh", ...run],
        { encoding: "utf8" },
      );
      const r = JSON.parse(stdout) as { server: number; victim: number; ended: string; detail: string };
      assert.equal(r.victim, r.server, "the sleep was given the server's pid");
      assert.equal(r.ended, "running", `the process given the server's pid was left alone: ${r.detail}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** A client that sends nothing, and leaves once `signal` aborts. */
async function* silentUntil(signal: AbortSignal): AsyncGenerator<Uint8Array> {
  await new Promise((resolve) => signal.addEventListener("abort", resolve));
  yield* [];
}

/** A server that leaves a sleep behind, its pid in DIR/pid, and reads its input to the end. */
const LEAVES_SLEEP = 'sleep 7.31 </dev/null >/dev/null 2>&1 & echo $! > "$0/pid"; cat >/dev/null';

// A relay under the same partial permission: the server is ended through its own handle, and the exit's
// detail says its descendants may have survived instead of saying nothing.
const RELAY_HOST = `import { relayMcp } from MCP;
const [dir] = Deno.args;
const controller = new AbortController();
const input = (async function* () {
  await new Promise((resolve) => controller.signal.addEventListener("abort", resolve));
})();
const script = SCRIPT;
const running = relayMcp({
  command: "/bin/sh",
  args: ["-c", script, dir],
  input,
  output: () => {},
  stderr: "ignore",
  signal: controller.signal,
});
let settled = false;
running.finally(() => (settled = true));
while (!settled && !(await Deno.readTextFile(dir + "/pid").catch(() => "")).endsWith("\\n")) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
controller.abort();
console.log(JSON.stringify(await running));
`;

/**
 * The exit of a Deno relay host run with `run` (its run permission) and read access to a fresh folder alone
 * (no /proc), whose server runs `script`; the sleep the server left is ended afterwards, whatever the relay did.
 */
async function relayHostExit(run: string, script: string): Promise<{ reason: string; detail: string }> {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-relay-"));
  let sleep = 0;
  try {
    const host = join(dir, "host.ts");
    const mcp = JSON.stringify(fileURLToPath(new URL("../mcp.ts", import.meta.url)));
    writeFileSync(host, RELAY_HOST.replace("MCP", mcp).replace("SCRIPT", JSON.stringify(script)));
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
    const { stdout: out } = await promisify(execFile)(deno.execPath(), [
      "run",
      run,
      `--allow-read=${dir}`,
      host,
      dir,
    ], { encoding: "utf8" });
    sleep = Number(readFileSync(join(dir, "pid"), "utf8").trim());
    return JSON.parse(out) as { reason: string; detail: string };
  } finally {
    if (sleep > 0) {
      try {
        process.kill(sleep, "SIGKILL"); // what the relay could not reach
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  "relayMcp: Deno with a partial --allow-run says the server's descendants may still be running",
  { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  async () => {
    const exit = await relayHostExit("--allow-run=/bin/sh", LEAVES_SLEEP);
    assert.equal(exit.reason, "aborted", exit.detail);
    // The relay closes the server's input, then signals it: a server that left at the end of its input (code 0)
    // was not ended by the signal, and its exit says so (run87): either way its descendants may still run.
    assert.match(
      exit.detail,
      /; the relay (ended the server but not its process tree|could not end the server's process tree), as Deno's run permission is partial: .*--allow-run/,
    );
  },
);

test(
  "relayMcp: Deno without /proc says the server's tree was found by its process group only",
  { ...withSetsid, skip: withSetsid.skip || (isDeno ? false : "needs Deno's permissions") },
  async () => {
    // The server's descendant starts a session of its own: only a marker, which needs /proc, finds it.
    const exit = await relayHostExit("--allow-run", `setsid ${LEAVES_SLEEP}`);
    assert.equal(exit.reason, "aborted", exit.detail);
    const said = "; the relay ended the server's process tree, found by its process group only " +
      "(/proc is not readable here): a descendant that left the group may have survived";
    // (a server that left at the end of its input before the SIGTERM came is said to have: its exit tells)
    assert.ok(
      [said, `${said}, and the server's exit was its own`].some((end) => exit.detail.endsWith(end)),
      exit.detail,
    );
  },
);

// A host started with an empty environment (`env -i`): /proc shows it none, yet each child's environment
// carries its marker, which still finds a descendant that left the group.
const EMPTY_ENV_HOST = `import { runTool } from GUARD;
const [dir, setsid] = process.argv.slice(-2);
const script = setsid + ' /bin/sleep 7.32 </dev/null >/dev/null 2>&1 & echo $! > "$0/pid"; exec /bin/sleep 7.33';
const r = await runTool("/bin/sh", ["-c", script, dir], { protocol: "text", timeoutMs: 300 });
console.log(JSON.stringify({ kind: r.kind, detail: r.detail }));
`;

test(
  "runTool: a host with an empty environment still finds by marker a descendant that left the group",
  withSetsid,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-emptyenv-"));
    let sleep = 0;
    try {
      const host = join(dir, "host.ts");
      const guard = JSON.stringify(fileURLToPath(new URL("../guard.ts", import.meta.url)));
      writeFileSync(host, `import process from "node:process";\n${EMPTY_ENV_HOST.replace("GUARD", guard)}`);
      const setsid = ["/usr/bin/setsid", "/bin/setsid"].find((p) => existsSync(p))!;
      const args = isDeno ? ["run", "-A", "--no-lock", host, dir, setsid] : [host, dir, setsid];
      const { stdout } = await promisify(execFile)("/usr/bin/env", ["-i", process.execPath, ...args], {
        encoding: "utf8",
      });
      sleep = Number(readFileSync(join(dir, "pid"), "utf8").trim());
      const r = JSON.parse(stdout) as { kind: string; detail: string };
      assert.equal(r.kind, "timeout", r.detail);
      assert.doesNotMatch(r.detail, /\/proc is not readable|process group only/);
      assert.deepEqual(await waitGone([sleep]), [], "the setsid'd descendant was ended");
    } finally {
      if (sleep > 0) {
        try {
          process.kill(sleep, "SIGKILL");
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcp: Deno without /proc, or with a partial --allow-run, says nothing of the server's tree after a server that exited leaving none",
  { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  async () => {
    // The server exits at once (its pid file holds no newline, so the host waits for the relay to settle).
    // Without /proc the sweep signals an empty group; with a partial --allow-run it can reach nothing at all.
    for (const run of ["--allow-run", "--allow-run=/bin/sh"]) {
      const exit = await relayHostExit(run, 'printf 0 > "$0/pid"');
      assert.equal(exit.reason, "server_exited", `${run}: ${exit.detail}`);
      assert.equal(exit.detail, "the MCP server exited with code 0", run);
    }
  },
);
