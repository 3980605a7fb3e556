// Ending a tool's tree that holds a process whose environment the guard may not read (a set-uid or
// non-dumpable program: `prctl(PR_SET_DUMPABLE, 0)` here, through python3's ctypes), so that its marker
// cannot be seen: it is found by its parent instead, and the detail says how it was found.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";
import { promisify } from "node:util";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitGone } from "./_guard_helpers.ts";
import { MAX_TREE_NOTE } from "../_common/values.ts";
import { exitedTreeNote, UNREAD_NOTE } from "../_run/runtime.ts";
import { isDeno, isLinux } from "./_runtime.ts";

const python = ["/usr/bin/python3", "/usr/local/bin/python3"].find((path) => existsSync(path));
const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
const isRoot = process.getuid?.() === 0;
// Root (with CAP_SYS_PTRACE) reads every environment: the host is run as nobody there, through setpriv.
const skip = !isLinux
  ? "finds trees through /proc"
  : python === undefined
  ? "no python3 to make a non-dumpable process"
  : isRoot && setpriv === undefined
  ? "as root every environment is readable, and no setpriv to run the host as another user"
  : false;

// The descendant leaves the tool's session and group, ignores SIGTERM (so that its parent is gone by the
// SIGKILL), makes itself non-dumpable (its environment is then the kernel's to show, not its user's), records
// its pid and sleeps, holding the tool's stdout.
const DESCENDANT = [
  "import ctypes, os, signal, sys, time",
  "os.setsid()",
  "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
  "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)",
  "open(sys.argv[1], 'w').write(str(os.getpid()) + '\\n')",
  "time.sleep(30)",
].join("\n");

const HOST = `import { runTool } from GUARD;
import { readFileSync } from "node:fs";
import process from "node:process";
const dir = process.argv[process.argv.length - 1];
const controller = new AbortController();
const running = runTool("/bin/sh", ["-c", SCRIPT, dir, DESCENDANT], {
  signal: controller.signal,
  timeoutMs: 30_000,
});
const pid = () => { try { return readFileSync(dir + "/pid", "utf8"); } catch { return ""; } };
while (!pid().endsWith("\\n")) await new Promise((resolve) => setTimeout(resolve, 20));
// (until the process that wrote it is one whose environment cannot be read: a tool that execs a set-uid one)
const readable = () => { try { return readFileSync("/proc/" + Number(pid()) + "/environ"), true; } catch { return false; } };
for (let i = 0; i < 250 && readable(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
controller.abort();
const r = await running;
console.log(JSON.stringify({ kind: r.kind, detail: r.detail, pid: Number(pid()) }));
`;

// The MCP relay's host: its server is the shell, and once the descendant's environment is unreadable the relay
// is aborted, which ends the server's tree. Prints the relay's exit and the descendant's pid.
const RELAY_HOST = `import { relayMcp } from MCP;
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
const dir = process.argv[process.argv.length - 1];
const controller = new AbortController();
const input = (async function* () {
  await new Promise((resolve) => controller.signal.addEventListener("abort", resolve));
})();
const running = relayMcp({
  command: "/bin/sh",
  args: ["-c", SCRIPT, dir, DESCENDANT],
  input,
  output: () => {},
  stderr: "ignore",
  signal: controller.signal,
});
const pid = () => { try { return readFileSync(dir + "/pid", "utf8"); } catch { return ""; } };
while (!pid().endsWith("\\n")) await new Promise((resolve) => setTimeout(resolve, 20));
const readable = () => { try { return readFileSync("/proc/" + Number(pid()) + "/environ"), true; } catch { return false; } };
for (let i = 0; i < 250 && readable(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
// A server that wrote its pid to DIR/server exits once DIR/go exists: the host then blocks (so the runtime
// cannot reap it) until /proc shows it a zombie, and aborts.
if (existsSync(dir + "/server")) {
  const stat = "/proc/" + Number(readFileSync(dir + "/server", "utf8")) + "/stat";
  writeFileSync(dir + "/go", "");
  const until = Date.now() + 20_000;
  while (Date.now() < until && !/\\) Z /.test(readFileSync(stat, "utf8")));
}
controller.abort();
const exit = await running;
console.log(JSON.stringify({ ...exit, pid: Number(pid()) }));
process.exit(0);
`;

/**
 * Where a host's folder is made: as root, /tmp itself, which nobody may enter, where the suite's own temporary
 * folder (`deno task check` gives it one only its owner enters) may be closed to nobody.
 */
function hostBase(): string {
  return isRoot && existsSync("/tmp") ? "/tmp" : tmpdir();
}

/**
 * The guard and the runtime where nobody can read them: the checkout, the runtime (Bun is a dev dependency) and
 * the temporary folder may each sit in a folder only its owner enters (CI's clone and `deno task check`'s
 * TMPDIR do), so the library's modules are copied into `dir` and the runtime linked there (copied across file
 * systems). As another user the tests run the checkout as it is.
 */
function readableByNobody(dir: string, runtime: string): { lib: string; runtime: string } {
  if (!isRoot) return { lib: fileURLToPath(new URL("..", import.meta.url)), runtime };
  const root = fileURLToPath(new URL("..", import.meta.url));
  const lib = join(dir, "lib");
  for (const name of readdirSync(root)) {
    // (the faces and their private folders: what guard.ts can load)
    if (name.endsWith(".ts") || (name.startsWith("_") && !name.includes("."))) {
      cpSync(join(root, name), join(lib, name), { recursive: true });
    }
  }
  const linked = join(dir, "runtime");
  try {
    linkSync(runtime, linked);
  } catch {
    copyFileSync(runtime, linked);
  }
  chmodSync(linked, 0o755);
  return { lib, runtime: linked };
}

/**
 * Run `template` (HOST, or RELAY_HOST) as nobody (when root) with `script` as the tool's `sh -c`; `$0` is the
 * folder for the pid file. Returns what the host printed.
 */
async function runHost<T = { kind: string; detail: string; pid: number }>(
  dir: string,
  script: string,
  template = HOST,
): Promise<T> {
  chmodSync(dir, 0o777); // nobody writes the pid, and Deno its cache, here
  const host = join(dir, "host.ts");
  const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
  const readable = readableByNobody(dir, isDeno ? deno!.execPath() : process.execPath);
  const guard = JSON.stringify(join(readable.lib, "guard.ts"));
  const mcp = JSON.stringify(join(readable.lib, "mcp.ts"));
  writeFileSync(
    host,
    // (functions, as a replacement string would read "$$" in the script as "$")
    template.replace("GUARD", () => guard).replace("MCP", () => mcp).replace(
      "SCRIPT",
      () => JSON.stringify(script),
    )
      .replace("DESCENDANT", () => JSON.stringify(DESCENDANT)),
  );
  const runtime = isDeno ? [readable.runtime, "run", "-A", host, dir] : [readable.runtime, host, dir];
  const asNobody = isRoot ? [setpriv!, ...NOBODY, "--"] : [];
  const [command, ...args] = [...asNobody, ...runtime];
  const { stdout } = await promisify(execFile)(command, args, {
    cwd: dir, // (the runtimes read the folder they start in: the checkout's may be closed to nobody)
    encoding: "utf8",
    env: { ...process.env, HOME: dir, DENO_DIR: join(dir, "deno") },
  });
  return JSON.parse(stdout);
}

const NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"];

/** End `pid` if the guard missed it. */
function cleanUp(pid: number): void {
  if (pid <= 0) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

test(
  "runTool: a descendant whose environment cannot be read is ended by its parent link, and the detail says so",
  { timeout: 60_000, skip },
  async () => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-unread-"));
    let pid = 0;
    try {
      const r = await runHost(dir, `${python} -c "$1" "$0/pid" & wait`);
      pid = r.pid;
      assert.ok(pid > 0, JSON.stringify(r));
      assert.equal(r.kind, "timeout", r.detail);
      assert.deepEqual(await waitGone([pid]), [], "the non-dumpable descendant was ended");
      assert.match(
        r.detail,
        /the guard ended the process tree, though a process in it with an unreadable environment .* may still be running/,
      );
    } finally {
      cleanUp(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

// A set-uid copy of setpriv makes, for nobody, a process of root's in the tool's own group: nobody may
// neither read its environment nor signal it, and the group's kill skips it without a word.
const suidSkip = skip || (!isRoot ? "needs root to make a set-uid program" : false);

test(
  "runTool: a process of the tool's group that is not ours to signal is said to be maybe still running",
  { timeout: 60_000, skip: suidSkip },
  async (t) => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-unsignalled-"));
    let pid = 0;
    try {
      chmodSync(dir, 0o777); // nobody runs the copy from here
      const suid = join(dir, "setpriv");
      copyFileSync(setpriv!, suid);
      chmodSync(suid, 0o4755);
      const asRoot = `${suid} --reuid=0 --regid=0 --clear-groups --`;
      const probe = await promisify(execFile)(
        setpriv!,
        [...NOBODY, "--", "/bin/sh", "-c", `${asRoot} id -u`],
        {
          encoding: "utf8",
        },
      ).catch(() => ({ stdout: "" }));
      if (probe.stdout.trim() !== "0") {
        return void t.skip("set-uid programs do not run as root here (nosuid)");
      }
      // root's shell writes its pid once it is root's, then becomes the sleep
      const r = await runHost(
        dir,
        `${asRoot} /bin/sh -c 'echo $$ > "$0/pid"; exec /bin/sleep 30' "$0" & wait`,
      );
      pid = r.pid;
      assert.ok(pid > 0, JSON.stringify(r));
      assert.equal(r.kind, "timeout", r.detail);
      assert.match(
        r.detail,
        /though a process in it could not be signalled \(not ours to signal\) and may still/,
      );
    } finally {
      cleanUp(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "runTool: a tool that is itself a set-uid program is found by its pid, not said to be found by its group",
  { timeout: 60_000, skip: suidSkip },
  async () => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-suid-tool-"));
    try {
      chmodSync(dir, 0o777); // nobody runs the copy from here
      const suid = join(dir, "sleep");
      copyFileSync("/bin/sleep", suid);
      chmodSync(suid, 0o4755); // root's, run by nobody: ours to signal, its environment not ours to read
      const r = await runHost(dir, `echo $$ > "$0/pid"; exec ${suid} 30`);
      assert.equal(r.kind, "timeout", r.detail);
      assert.match(r.detail, /the guard ended the process tree$/);
      assert.deepEqual(await waitGone([r.pid]), [], "the tool was ended");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcp: a server's descendant whose environment cannot be read is named in the exit's tree note, whole",
  { timeout: 60_000, skip },
  async () => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-relay-unread-"));
    let pid = 0;
    try {
      const exit = await runHost<{ reason: string; detail: string; tree?: string; pid: number }>(
        dir,
        `${python} -c "$1" "$0/pid" & wait`,
        RELAY_HOST,
      );
      pid = exit.pid;
      assert.ok(pid > 0, JSON.stringify(exit));
      assert.equal(exit.reason, "aborted", exit.detail);
      assert.equal(exit.tree, "group_only", exit.detail);
      // It ignores SIGTERM, and the server left on it: the relay's SIGKILL still comes (the host exits at once).
      assert.deepEqual(await waitGone([pid]), [], "the non-dumpable descendant was ended");
      // The note, as runTool's detail gives it, cut at 200 characters where it would be longer: this one is whole.
      const said = "; the relay ended the server's process tree, ";
      const note = exit.detail.slice(exit.detail.lastIndexOf(said) + said.length);
      assert.ok(exit.detail.includes(said), exit.detail);
      assert.equal(note, UNREAD_NOTE);
      assert.ok(note.length <= MAX_TREE_NOTE);
    } finally {
      cleanUp(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcp: a server that had exited, leaving a descendant whose environment cannot be read, is named in the note",
  { timeout: 60_000, skip },
  async () => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-relay-exited-"));
    let pid = 0;
    try {
      const exit = await runHost<{ reason: string; detail: string; exitCode: number | null; pid: number }>(
        dir,
        // (through a shell that waits for it: a process whose parent exited and that left the group is found
        // by nothing once its marker cannot be read)
        `/bin/sh -c '${python} -c "$1" "$0/pid" & wait' "$0" "$1" & echo $$ > "$0/server"; ` +
          `while [ ! -e "$0/go" ]; do sleep 0.01; done; exit 3`,
        RELAY_HOST,
      );
      pid = exit.pid;
      assert.ok(pid > 0, JSON.stringify(exit));
      assert.equal(exit.exitCode, 3, exit.detail);
      assert.deepEqual(await waitGone([pid]), [], "the non-dumpable descendant was ended");
      // The longest note the relay gives (198 characters), whole, and in the server's words.
      const note = exitedTreeNote(UNREAD_NOTE, "server");
      assert.ok(note.length <= MAX_TREE_NOTE);
      assert.ok(exit.detail.endsWith(`; the relay ended the server's process tree, ${note}`), exit.detail);
      assert.doesNotMatch(exit.detail, /\btool\b/);
    } finally {
      cleanUp(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcp: a server that had exited, leaving a descendant nothing leads to, is not said to have left none",
  { timeout: 60_000, skip },
  async () => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-relay-hidden-"));
    let pid = 0;
    try {
      // The descendant left the session and hides its marker; its parent, the server, exits before the abort:
      // neither marker nor parent nor group leads to it, and the relay cannot tell it is there.
      const exit = await runHost<{ reason: string; detail: string; exitCode: number | null; pid: number }>(
        dir,
        `${python} -c "$1" "$0/pid" & echo $$ > "$0/server"; while [ ! -e "$0/go" ]; do sleep 0.01; done; exit 3`,
        RELAY_HOST,
      );
      pid = exit.pid;
      assert.ok(pid > 0, JSON.stringify(exit));
      assert.equal(exit.exitCode, 3, exit.detail);
      assert.ok(exit.detail.endsWith("; no process of the server's tree was found running"), exit.detail);
    } finally {
      cleanUp(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

// The relay's host for a reused pid: its server leaves on SIGTERM, leaving a child in a session of its own that
// ignores it (the relay's grace then lasts its bound). Once the server is reaped its pid is handed, through
// DIR/fifo, to the root shell that gives it (GIVER below); the process given it starts a non-dumpable child.
const REUSE_HOST = `import { relayMcp } from MCP;
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
const dir = process.argv[process.argv.length - 1];
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const read = (name) => { try { return readFileSync(dir + "/" + name, "utf8"); } catch { return ""; } };
const controller = new AbortController();
let server = 0;
const running = relayMcp({
  command: "/bin/sh",
  args: ["-c", SCRIPT, dir],
  input: (async function* () { await new Promise((r) => controller.signal.addEventListener("abort", r)); yield* []; })(),
  output: () => {},
  stderr: "ignore",
  signal: controller.signal,
  onEvent: (event) => { if (event.event === "spawn") server = event.pid; },
});
while (!existsSync(dir + "/ready")) await wait(5);
controller.abort();
while (alive(server)) await wait(2);
writeFileSync(dir + "/fifo", server + "\\n");
while (!read("victim").endsWith("\\n")) await wait(2);
const exit = await running;
const victim = Number(read("victim"));
for (let i = 0; i < 50 && alive(victim); i++) await wait(10); // (a SIGKILL lands at once; its parent reaps it)
console.log(JSON.stringify({ server, newcomer: Number(read("newcomer")), victim, alive: alive(victim), detail: exit.detail }));
process.exit(0);
`;

test(
  "relayMcp: once the server is reaped, a non-dumpable child of a process given its pid is not taken for the tree's",
  {
    timeout: 60_000,
    skip: skip ||
      (isRoot && existsSync("/usr/bin/unshare") ? false : "needs root and unshare, to reuse a pid"),
  },
  async () => {
    const dir = mkdtempSync(join(hostBase(), "toolguard-reuse-"));
    try {
      chmodSync(dir, 0o777);
      await promisify(execFile)("mkfifo", ["-m", "666", join(dir, "fifo")]);
      const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
      const readable = readableByNobody(dir, isDeno ? deno!.execPath() : process.execPath);
      const host = join(dir, "host.ts");
      const script =
        `setsid sh -c 'trap "" TERM; echo > "$0/ready"; sleep 5' "$0" </dev/null >/dev/null 2>&1 & wait`;
      writeFileSync(
        host,
        REUSE_HOST.replace("MCP", () => JSON.stringify(join(readable.lib, "mcp.ts"))).replace(
          "SCRIPT",
          () => JSON.stringify(script),
        ),
      );
      const runtime = isDeno ? [readable.runtime, "run", "-A", host, dir] : [readable.runtime, host, dir];
      // Root, in the pid namespace: reads the pid, makes it the next one given, and starts as nobody a shell (that
      // pid) whose python child makes itself non-dumpable, then records its pid.
      const victimCode = "import ctypes, os, sys, time\nctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n" +
        "open(sys.argv[1], 'w').write(str(os.getpid()) + '\\n')\ntime.sleep(30)";
      const giver = `read n < "$0/fifo"; echo $((n - 1)) > /proc/sys/kernel/ns_last_pid; ` +
        `${setpriv} ${NOBODY.join(" ")} -- sh -c '"$1" -c "$2" "$0/victim" & wait' "$0" ${python} "$1" & ` +
        `echo $! > "$0/newcomer"; wait`;
      const init = `sh -c '${giver.replaceAll("'", "'\\''")}' "$0" "$1" & shift; ` +
        `${setpriv} ${NOBODY.join(" ")} -- "$@"; exit $?`;
      const { stdout } = await promisify(execFile)(
        "/usr/bin/unshare",
        ["--pid", "--fork", "--mount-proc", "sh", "-c", init, dir, victimCode, ...runtime],
        { cwd: dir, encoding: "utf8", env: { ...process.env, HOME: dir, DENO_DIR: join(dir, "deno") } },
      );
      const r = JSON.parse(stdout) as {
        server: number;
        newcomer: number;
        victim: number;
        alive: boolean;
        detail: string;
      };
      // (what the namespace holds ends with its first process, sh, when the host exits)
      assert.equal(r.newcomer, r.server, `the shell was given the server's pid: ${stdout}`);
      assert.ok(
        r.alive,
        `the non-dumpable child of the process given the server's pid was left alone: ${r.detail}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
