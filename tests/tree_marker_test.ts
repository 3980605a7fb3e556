// The environment marker that finds a child's tree: one name per host, one value per child, and a process
// matches only when it holds that very entry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import process from "node:process";
import {
  holdsEntry,
  isOurOutput,
  newTreeMarker,
  ourEnds,
  type PipeEnds,
  type ProcessLook,
  threadLook,
  type TreeLook,
  type TreeMarker,
  treeState,
  treeVerdict,
} from "../_run/tree.ts";
import { isLinux } from "./_runtime.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** Looks at the tree of `marker` every 20 ms, for up to 20 s, until `done` holds; returns the last look. */
async function lookUntil(marker: TreeMarker, done: (look: TreeLook) => boolean): Promise<TreeLook> {
  const end = Date.now() + 20_000;
  let look = treeState(marker);
  while (!done(look) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    look = treeState(marker);
  }
  return look;
}

test("tree marker: every child gets the host's name and a value of its own", () => {
  const a = newTreeMarker();
  const b = newTreeMarker();
  assert.match(a.name, /^TOOLGUARD_TREE_[0-9a-z]+$/);
  assert.equal(b.name, a.name);
  assert.notEqual(b.value, a.value);
});

test("tree marker: an environment matches only the whole entry", () => {
  const needle = bytes("TOOLGUARD_TREE_ab=1");
  assert.equal(holdsEntry(bytes("A=b\0TOOLGUARD_TREE_ab=1\0Z=9\0"), needle), true);
  assert.equal(holdsEntry(bytes("A=b\0TOOLGUARD_TREE_ab=1"), needle), true, "last entry without its NUL");
  assert.equal(holdsEntry(bytes("TOOLGUARD_TREE_ab=1\0"), needle), true, "first entry");
  assert.equal(holdsEntry(bytes("A=b\0TOOLGUARD_TREE_ab=12\0"), needle), false, "another child's value");
  assert.equal(holdsEntry(bytes("TOOLGUARD_TREE_ab=12"), needle), false, "another child's value, last");
  assert.equal(holdsEntry(bytes("X=TOOLGUARD_TREE_ab=1\0"), needle), false, "inside another entry's value");
  assert.equal(holdsEntry(bytes("XTOOLGUARD_TREE_ab=1\0"), needle), false, "inside another name");
  assert.equal(holdsEntry(bytes(""), needle), false, "a zombie's empty environment");
});

test(
  "tree state: a recheck of known pids takes only a busy verdict from them; a child forked since is still seen",
  { timeout: 60_000, skip: isLinux ? false : "the states of processes are read from /proc, on Linux only" },
  async () => {
    const marker = newTreeMarker();
    // The parent waits (asleep) for a child it started that spins (runnable): a recheck given only the
    // parent's pid must not call the tree asleep. The child is a forked subshell, not an exec'd shell: a
    // child caught in exec reads asleep for a moment, which made this test fail on a loaded machine. Both
    // hold stdout, a pipe of ours.
    const parent = spawn("/bin/sh", ["-c", "while :; do :; done & wait"], {
      env: { ...process.env, [marker.name]: marker.value },
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      // The parent is waited for in its wait too: just after the fork it is runnable a moment, and a recheck of
      // its pid alone took a busy verdict from it (failed 1 in 7 runs on a loaded machine).
      const waiting = () => threadLook(readFileSync(`/proc/${parent.pid}/stat`, "utf8")).state === "quiet";
      const look = await lookUntil(
        marker,
        (look) => look.pids.length === 2 && look.state === "busy" && waiting(),
      );
      assert.equal(look.pids.length, 2, "the parent and its spinning child carry the marker");
      // A known pid still busy is the verdict: /proc is not read through again (which lists the parent too).
      const child = look.pids.find((pid) => pid !== parent.pid)!;
      assert.deepEqual(treeState(marker, { known: [child] }), { state: "busy", pids: [child] });
      const again = treeState(marker, { known: [parent.pid!] });
      assert.equal(again.state, "busy", "the spinning child, not among the known pids, is found");
      assert.deepEqual([...again.pids].sort(), [...look.pids].sort());
      // A known pid that does not carry the marker (ended, or reused by another process) is not read: here
      // our own, which does not carry it, and which is running as it reads.
      const other = newTreeMarker();
      assert.deepEqual(treeState(other, { known: [process.pid] }), { state: null, pids: [] });
    } finally {
      process.kill(-parent.pid!, "SIGKILL");
    }
  },
);

test("tree state: a thread's stat line reads busy (R, D), stopped (T, t) or quiet (anything else)", () => {
  // Captured from /proc/PID/task/TID/stat on Linux 6.18 (cut after the tenth field). The D line is Python
  // waiting in posix_spawn for its vfork child (run_hostile_test.ts runs that process for real); a thread in
  // disk wait reads the same letter.
  const lines: [string, string, number][] = [
    ["17535 (python3) D 17534 17530 10185 0 -1 4194304 2884", "busy", 17534],
    ["17611 (python3) S 17535 17530 10185 0 -1 4194560 12", "quiet", 17535],
    ["2210 (sh) R 1 2209 2209 0 -1 4194304 161 0 0", "busy", 1],
    ["2230 (sh) T 2229 2209 2209 0 -1 4194304 98 0 0", "stopped", 2229],
    ["2231 (gdb-target) t 2229 2231 2209 0 -1 4194304 98", "stopped", 2229],
    ["11 (kworker/0:1-events) I 2 0 0 0 -1 69238880 0 0", "quiet", 2],
    ["2232 (sh) Z 2229 2209 2209 0 -1 4227084 0 0 0", "quiet", 2229],
    // A command name may hold spaces and parentheses, even a fake state: fields count from the last ')'.
    ["2240 (a) T (b) R 77 2240 2240 0 -1 4194304 0", "busy", 77],
    ["2241 (x) D) S 78 2241 2241 0 -1 4194304 0", "quiet", 78],
  ];
  for (const [line, state, ppid] of lines) assert.deepEqual(threadLook(line), { state, ppid }, line);
});

test("tree state: only processes that hold the output, or that one of them started, decide", () => {
  const look = (pid: number, ppid: number, state: ProcessLook["state"]): ProcessLook => ({
    pid,
    ppid,
    state,
  });
  const holder = look(10, 1, "quiet");
  const asked: number[] = [];
  const holds = (pid: number) => (asked.push(pid), pid === 10);
  // A spinner that closed stdout beside a holder asleep: nothing more can come.
  assert.equal(treeVerdict([holder, look(11, 1, "busy")], { holds }), "quiet");
  assert.equal(treeVerdict([holder, look(11, 1, "stopped")], { holds }), "quiet");
  // The holder's own child (it may be waiting for it), or a grandchild.
  assert.equal(treeVerdict([holder, look(11, 10, "busy")], { holds }), "busy");
  assert.equal(treeVerdict([holder, look(11, 10, "quiet"), look(12, 11, "stopped")], { holds }), "stopped");
  // The holder itself busy or stopped.
  assert.equal(treeVerdict([look(10, 1, "stopped"), look(11, 1, "quiet")], { holds }), "stopped");
  // Not known who holds stdout, or the holder not among them (it cleared its environment): every one counts.
  assert.equal(treeVerdict([look(12, 1, "quiet"), look(11, 1, "busy")], { holds }), "busy");
  // So when the holder of one pipe is found but another pipe's is not.
  assert.equal(treeVerdict([holder, look(11, 1, "busy")], { holds, unfound: () => true }), "busy");
  // A loop of parents (pids reused) ends.
  assert.equal(treeVerdict([holder, look(11, 12, "busy"), look(12, 11, "quiet")], { holds }), "quiet");
  assert.equal(treeVerdict([], { holds }), null);
  // Only some of the tree given (a recheck of the pids found last): no holder among them proves nothing.
  assert.equal(treeVerdict([look(12, 1, "quiet"), look(11, 1, "busy")], { holds, found: "some" }), "quiet");
  assert.equal(treeVerdict([holder, look(11, 10, "busy")], { holds, found: "some" }), "busy");
  // And with no holder among them, nobody's pipes are read: nothing can feed a holder not given.
  const piped: number[] = [];
  const pipesOf = (pid: number) => (piped.push(pid), { reads: [], writes: ["pipe:[9]"] });
  const noHolder = [look(12, 1, "quiet"), look(11, 1, "busy")];
  assert.equal(treeVerdict(noHolder, { holds, pipesOf, found: "some" }), "quiet");
  assert.deepEqual(piped, []);
  // All asleep: nobody's open files are read.
  asked.length = 0;
  assert.equal(treeVerdict([holder, look(11, 1, "quiet")], { holds }), "quiet");
  assert.deepEqual(asked, []);
});

test("tree state: a process that writes into a pipe a counted one reads counts, and what it started", () => {
  const look = (pid: number, ppid: number, state: ProcessLook["state"]): ProcessLook => ({
    pid,
    ppid,
    state,
  });
  const holds = (pid: number) => pid === 10;
  // `feeder | cat` (cat, pid 10, holds stdout) and `feeder2 | feeder`: a chain of pipes, in any order.
  const pipes: Record<number, PipeEnds> = {
    10: { reads: ["pipe:[1]"], writes: [] },
    11: { reads: ["pipe:[2]"], writes: ["pipe:[1]"] },
    12: { reads: [], writes: ["pipe:[2]"] },
    13: { reads: ["pipe:[3]"], writes: [] },
    15: { reads: [], writes: ["pipe:[3]"] },
    16: { reads: [], writes: ["pipe:[4]"] },
  };
  const asked: number[] = [];
  const pipesOf = (pid: number) => (asked.push(pid), pipes[pid] ?? { reads: [], writes: [] });
  const cat = look(10, 1, "quiet");
  assert.equal(treeVerdict([cat, look(11, 1, "busy")], { holds, pipesOf }), "busy");
  assert.equal(treeVerdict([look(12, 1, "busy"), look(11, 1, "quiet"), cat], { holds, pipesOf }), "busy");
  // A busy child of a feeder counts; a process that only reads (from cat, or a pipe of its own) does not.
  assert.equal(treeVerdict([cat, look(11, 1, "quiet"), look(14, 11, "busy")], { holds, pipesOf }), "busy");
  assert.equal(treeVerdict([cat, look(13, 1, "busy")], { holds, pipesOf }), "quiet");
  // A feeder of a reader found that does not count, does not count; one whose pipe no process found reads
  // does (`work | env -i cat &`: its reader cleared its environment, and may hold stdout beside cat).
  assert.equal(treeVerdict([cat, look(13, 1, "quiet"), look(15, 1, "busy")], { holds, pipesOf }), "quiet");
  assert.equal(treeVerdict([cat, look(16, 1, "busy")], { holds, pipesOf }), "busy");
  // The pipes of those that count are asked for only once one yet to count writes into a pipe.
  asked.length = 0;
  assert.equal(treeVerdict([cat, look(13, 1, "busy")], { holds, pipesOf }), "quiet");
  assert.deepEqual(asked, [13]);
});

test("tree state: a process that comes to count in one round makes its feeders count in the next", () => {
  // A shell asleep holding stdout (10) waits for its child (21), which reads a pipe fed by a busy worker (20)
  // that is no child of either: `mkfifo f; work > f & sh -c 'cat f > out'`. The worker is asked about first,
  // when the pipes the counted processes read are gathered (only the shell counts yet, reading none); the
  // child counts later in that round. Left as first gathered, the pipes read missed the child's, the worker
  // never counted, and the tree read quiet.
  const holds = (pid: number) => pid === 10;
  const pipes: Record<number, PipeEnds> = {
    10: { reads: [], writes: [] },
    20: { reads: [], writes: ["pipe:[9]"] },
    21: { reads: ["pipe:[9]"], writes: [] },
  };
  const pipesOf = (pid: number) => pipes[pid];
  const looks: ProcessLook[] = [
    { pid: 10, ppid: 1, state: "quiet" },
    { pid: 20, ppid: 1, state: "busy" },
    { pid: 21, ppid: 10, state: "quiet" },
  ];
  assert.equal(treeVerdict(looks, { holds, pipesOf }), "busy");
  // A feeder two pipes away, through a reader that counts only in the second round.
  pipes[20] = { reads: ["pipe:[8]"], writes: ["pipe:[9]"] };
  pipes[19] = { reads: [], writes: ["pipe:[8]"] };
  const chain = [
    { pid: 19, ppid: 1, state: "busy" as const },
    ...looks.map((l) => ({ ...l, state: "quiet" as const })),
  ];
  assert.equal(treeVerdict(chain, { holds, pipesOf }), "busy");
});

test("tree state: a writing end is ours when it is a pipe we read from, or next to one of our sockets", () => {
  const ours = { pipes: new Set(["pipe:[5656327]"]), sockets: new Set([5656458, 5656460]) };
  // Captured under Deno (pipes: both ends link one inode) and Bun (socket pairs: the child's end is numbered
  // after ours).
  assert.equal(isOurOutput("pipe:[5656327]", ours), true);
  assert.equal(isOurOutput("pipe:[5656328]", ours), false, "another pipe");
  assert.equal(isOurOutput("socket:[5656459]", ours), true);
  assert.equal(isOurOutput("socket:[5656461]", ours), true);
  assert.equal(isOurOutput("socket:[5656457]", ours), true, "either side");
  assert.equal(isOurOutput("socket:[5656463]", ours), false, "not next to ours");
  assert.equal(isOurOutput("socket:[5656458]", ours), false, "our own end, not its peer");
  for (
    const link of [
      "/dev/null",
      "/tmp/out.txt",
      "anon_inode:[eventfd]",
      "socket:[]",
      "socket:[x]",
      "socket:[5656459.0]",
      "socket:[5.656459e6]",
      "socket:[ 5656459]",
    ]
  ) {
    assert.equal(isOurOutput(link, ours), false, link);
  }
});

test(
  "tree state: only holders of our output pipes decide, found by their open files",
  { timeout: 60_000, skip: isLinux ? false : "open files are read from /proc, on Linux only" },
  async () => {
    // A tree of two processes (each a child of ours, so neither started the other): a holder of pipes to us,
    // asleep, and a spinner whose output goes to /dev/null. A second tree: the same, but the spinner writes
    // to a pipe of ours.
    const marker = newTreeMarker();
    const env = { ...process.env, [marker.name]: marker.value };
    const holder = spawn("sleep", ["100"], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const spinner = spawn("/bin/sh", ["-c", "while :; do :; done"], { env, detached: true, stdio: "ignore" });
    const marker2 = newTreeMarker();
    const env2 = { ...process.env, [marker2.name]: marker2.value };
    const holder2 = spawn("sleep", ["100"], { env: env2, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const writer = spawn("/bin/sh", ["-c", "while :; do :; done"], {
      env: env2,
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      // The holder may be runnable for a moment after it started; then it sleeps for good.
      const look = await lookUntil(marker, (look) => look.pids.length === 2 && look.state === "quiet");
      assert.equal(look.pids.length, 2);
      assert.equal(look.state, "quiet", "the holder is asleep; the spinner cannot add output");
      const look2 = await lookUntil(marker2, (look) => look.pids.length === 2);
      assert.equal(look2.state, "busy", "a spinner holding a pipe of ours may still write");
      // Our ends are asked for only when a process is busy or stopped, at most once a look; without them
      // (none found) every process counts.
      let asked = 0;
      const none = () => (asked++, { pipes: new Set<string>(), sockets: new Set<number>() });
      assert.equal(treeState(marker, { ours: none }).state, "busy", "no holder found: the spinner counts");
      assert.equal(asked, 1);
      asked = 0;
      assert.equal(treeState(marker, { ours: () => (asked++, ourEnds()) }).state, "quiet");
      assert.equal(asked, 1);
    } finally {
      for (const child of [holder, spinner, holder2, writer]) process.kill(-child.pid!, "SIGKILL");
    }
  },
);

/**
 * One tool's tree: the shell, become a sleep that holds stderr only, and a spinner that holds neither and is
 * no child of it (its parent left). Stdout is held, asleep, by a process that cleared its environment
 * (env -i), so it is not found. Killing the tool's group ends all three.
 */
function hiddenStdoutHolder(): { marker: TreeMarker; tool: ReturnType<typeof spawn> } {
  const marker = newTreeMarker();
  const script = `env -i /bin/sleep 100 2>/dev/null & ` +
    `( (while :; do :; done) </dev/null >/dev/null 2>&1 & ); exec /bin/sleep 100 >/dev/null`;
  const tool = spawn("/bin/sh", ["-c", script], {
    env: { ...process.env, [marker.name]: marker.value },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { marker, tool };
}

test(
  "tree state: when fewer of our pipes are found held than are open, a holder is missing and every process counts",
  { timeout: 60_000, skip: isLinux ? false : "open files are read from /proc, on Linux only" },
  async () => {
    // Stdout's holder cleared its environment: a writer the guard cannot see may hold stdout, and the spinner
    // may feed it. Told that both pipes are open, the look counts every process; told one, the holder found
    // is enough.
    const { marker, tool } = hiddenStdoutHolder();
    try {
      // Until the shell has become the sleep and the spinner's first parent has left (it was the shell's).
      const ones = await lookUntil(marker, (look) => look.pids.length === 2 && look.state === "quiet");
      assert.deepEqual(
        [ones.pids.length, ones.state],
        [2, "quiet"],
        "the holder of stderr, asleep, is found",
      );
      assert.equal(treeState(marker, { openPipes: 2 }).state, "busy", "stdout's holder is not found");
      assert.equal(treeState(marker, { openPipes: 1 }).state, "quiet");
    } finally {
      process.kill(-tool.pid!, "SIGKILL"); // (the hidden sleep and the spinner too: they stay in its group)
    }
  },
);

test(
  "tree state: a recheck that trusts the gap of the last whole look takes a busy known pid without reading files",
  { timeout: 60_000, skip: isLinux ? false : "open files are read from /proc, on Linux only" },
  async () => {
    // The whole look finds the gap (stdout held by no process found: its holder cleared its environment) and
    // counts every process; a recheck told to trust that gap counts every known one too, reading
    // neither /proc whole nor anyone's open files (before, each recheck read all of /proc again).
    const { marker, tool } = hiddenStdoutHolder();
    try {
      await lookUntil(marker, (look) => look.pids.length === 2 && look.state === "quiet");
      let asked = 0;
      const ours = () => (asked++, ourEnds());
      const whole = treeState(marker, { openPipes: 2, ours });
      assert.deepEqual(
        [whole.state, whole.pids.length, whole.gap],
        ["busy", 2, true],
        "stdout's holder hides",
      );
      assert.equal(asked, 1);
      asked = 0;
      const trusted = treeState(marker, { known: whole.pids, openPipes: 2, gap: true, ours });
      assert.deepEqual(trusted, { state: "busy", pids: whole.pids }, "a recheck: no gap of its own to tell");
      assert.equal(asked, 0, "no one's open files were read");
      // Not trusted: the known pids' files are read, then all of /proc, which finds the gap again.
      const untrusted = treeState(marker, { known: whole.pids, openPipes: 2, ours });
      assert.deepEqual([untrusted.state, untrusted.gap], ["busy", true]);
      assert.equal(asked, 2);
      // With only stderr open, its holder found is enough: no gap, and the spinner does not count.
      assert.deepEqual(treeState(marker, { openPipes: 1 }), { state: "quiet", pids: whole.pids, gap: false });
    } finally {
      process.kill(-tool.pid!, "SIGKILL"); // (the hidden sleep and the spinner too: they stay in its group)
    }
  },
);

test(
  "tree state: a busy process that writes into a pipe no process found reads counts, unless we hold that pipe",
  { timeout: 60_000, skip: isLinux ? false : "open files are read from /proc, on Linux only" },
  async () => {
    // One tool's tree: the shell, become a sleep that holds stdout and stderr, and a spinner that holds
    // neither and is no child of it: it writes into a pipe read by a process that cleared its environment
    // (env -i), which holds stdout too and is not found. What the spinner computes may come out through it.
    // A pipe we hold ourselves (one our parent left open to us, inherited by the tree) leads nowhere in it.
    const marker = newTreeMarker();
    const script =
      `( (exec 2>/dev/null; while :; do :; done) | env -i /bin/sleep 100 & ); exec /bin/sleep 100`;
    const tool = spawn("/bin/sh", ["-c", script], {
      env: { ...process.env, [marker.name]: marker.value },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      // Until the shell has become the sleep, asleep (just exec'd, it may still run for a moment), and the
      // other process is the spinner, writing into a pipe not ours (not the subshell that started it, nor env
      // before it clears its environment: both hold stdout).
      const slept = () =>
        readFileSync(`/proc/${tool.pid}/comm`, "utf8") === "sleep\n" &&
        / S /.test(readFileSync(`/proc/${tool.pid}/stat`, "utf8"));
      const feeds = (pid: number) => {
        try {
          const link = readlinkSync(`/proc/${pid}/fd/1`);
          return link.startsWith("pipe:[") && !ourEnds().pipes.has(link) ? link : null;
        } catch {
          return null; // gone
        }
      };
      const spinnerOf = (look: TreeLook) => look.pids.find((pid) => pid !== tool.pid && feeds(pid) !== null);
      const look = await lookUntil(
        marker,
        (look) => look.pids.length === 2 && look.state === "busy" && slept() && spinnerOf(look) !== undefined,
      );
      assert.deepEqual([look.pids.length, look.state], [2, "busy"], "the spinner feeds a reader not found");
      const fed = feeds(spinnerOf(look)!);
      assert.match(fed ?? "", /^pipe:\[/);
      const held = () => {
        const ours = ourEnds();
        return { ...ours, others: new Set([...ours.others ?? [], fed!]) };
      };
      assert.equal(treeState(marker, { openPipes: 2, ours: held }).state, "quiet");
    } finally {
      process.kill(-tool.pid!, "SIGKILL"); // (the hidden sleep and the spinner too: they stay in its group)
    }
  },
);
