// Ending a tool's tree that holds a process whose environment the guard may not read (a set-uid or
// non-dumpable program: `prctl(PR_SET_DUMPABLE, 0)` here, through python3's ctypes), so that its marker
// cannot be seen: it is found by its parent instead, and the detail says how it was found.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";
import { promisify } from "node:util";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitGone } from "./_guard_helpers.ts";
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
const running = runTool("/bin/sh", ["-c", 'PYTHON -c "$1" "$0/pid" & wait', dir, DESCENDANT], {
  signal: controller.signal,
  timeoutMs: 30_000,
});
const pid = () => { try { return readFileSync(dir + "/pid", "utf8"); } catch { return ""; } };
while (!pid().endsWith("\\n")) await new Promise((resolve) => setTimeout(resolve, 20));
controller.abort();
const r = await running;
console.log(JSON.stringify({ kind: r.kind, detail: r.detail, pid: Number(pid()) }));
`;

test(
  "runTool: a descendant whose environment cannot be read is ended by its parent link, and the detail says so",
  { timeout: 60_000, skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-unread-"));
    let pid = 0;
    try {
      chmodSync(dir, 0o777); // nobody writes the pid, and Deno its cache, here
      const host = join(dir, "host.ts");
      const guard = JSON.stringify(fileURLToPath(new URL("../guard.ts", import.meta.url)));
      writeFileSync(
        host,
        HOST.replace("GUARD", guard).replace("PYTHON", python!).replace(
          "DESCENDANT",
          JSON.stringify(DESCENDANT),
        ),
      );
      const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
      const runtime = isDeno ? [deno!.execPath(), "run", "-A", host, dir] : [process.execPath, host, dir];
      const asNobody = isRoot ? [setpriv!, "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : [];
      const [command, ...args] = [...asNobody, ...runtime];
      const { stdout } = await promisify(execFile)(command, args, {
        encoding: "utf8",
        env: { ...process.env, HOME: dir, DENO_DIR: join(dir, "deno") },
      });
      const r = JSON.parse(stdout) as { kind: string; detail: string; pid: number };
      pid = r.pid;
      assert.ok(pid > 0, stdout);
      assert.equal(r.kind, "timeout", r.detail);
      assert.deepEqual(await waitGone([pid]), [], "the non-dumpable descendant was ended");
      assert.match(
        r.detail,
        /the guard ended the process tree, though a process in it whose environment could not/,
      );
    } finally {
      if (pid > 0) {
        try {
          process.kill(pid, "SIGKILL"); // what the guard missed
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
