// How the guard starts a tool on POSIX: the tool leads its own session and process group (under Deno, where
// /proc cannot be read, through `setsid`, which avoids the fork that `detached` costs), a failure to exec the tool is `spawn` while a tool's
// own exit 126/127 stays `exit`, and an abort in the first instants of a run still ends the tool.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import process from "node:process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTool } from "../guard.ts";
import { liveCount } from "../_run/runtime.ts";
import { waitGone } from "./_guard_helpers.ts";
import { isAlive, isDeno, isLinux, isWindows, signalProcess } from "./_runtime.ts";

const T = { timeout: 60_000 };
const posixOnly = { ...T, skip: isWindows ? "POSIX process groups and /bin/sh" : false };
const linuxOnly = { ...T, skip: isLinux ? false : "reads /proc and relies on Linux's ETXTBSY" };

/** Pids of running processes whose command line contains `marker` (Linux). */
function pidsWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(marker)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found.filter(isAlive);
}

test("runTool: the tool leads its own session and process group", linuxOnly, async () => {
  // Fields 5 and 6 of /proc/PID/stat are the process group and session ids. Under Deno on Linux the guard
  // spawns without a process group (it would cost a fork or an exec per call) and finds the tree by the
  // marker in the tool's environment instead (tests/tree_kill_test.ts); Bun and Node have both.
  const script = "read pid comm state ppid pgrp session rest < /proc/$$/stat; " +
    'echo "$$ $pgrp $session $(env | grep -c ^TOOLGUARD_TREE_)"';
  const results = await Promise.all([
    runTool("/bin/sh", ["-c", script], { protocol: "text" }),
    runTool("sh", ["-c", script], { protocol: "text", cwd: tmpdir() }),
  ]);
  for (const r of results) {
    assert.equal(r.kind, "results", r.detail);
    const [pid, pgrp, session, markers] = String(r.items[0]).split(" ");
    assert.ok(Number(markers) >= 1, "the tool carries its tree's marker");
    if (isDeno) continue;
    assert.equal(pgrp, pid, "process group id is the tool's pid");
    assert.equal(session, pid, "session id is the tool's pid");
  }
});

test("runTool: a tool's own exit 126/127 stays exit, even with launcher-like stderr", posixOnly, async () => {
  for (const code of [126, 127]) {
    const r = await runTool("/bin/sh", [
      "-c",
      `echo "setsid: failed to execute x: No such file or directory" >&2; exit ${code}`,
    ]);
    assert.equal(r.kind, "exit", r.detail);
    assert.equal(r.exitCode, code);
    assert.equal(r.items, null);
  }
});

test("runTool: a program that passes the checks but cannot be executed is spawn", linuxOnly, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-launch-"));
  let fd: number | null = null;
  try {
    const path = join(dir, "busy.sh");
    writeFileSync(path, '#!/bin/sh\necho \'{"ok":true,"items":[1]}\'\n');
    chmodSync(path, 0o755);
    // Open for writing: exec fails with ETXTBSY although the file is executable.
    fd = openSync(path, "a");
    const busy = await runTool(path, []);
    assert.equal(busy.kind, "spawn", busy.detail);
    assert.equal(busy.items, null);
    assert.match(busy.detail, /busy/i);
    assert.ok(busy.detail.includes(path), busy.detail);
    closeSync(fd);
    // closed once only: the number may already belong to another file (a pipe of the next run), and
    // closing it again broke the runtime's own I/O (Bun's rmSync failed with EFAULT, now and then)
    fd = null;
    const ok = await runTool(path, []);
    assert.equal(ok.kind, "results", ok.detail);
  } finally {
    if (fd !== null) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("runTool: an abort in the first instants of a run still ends the tool", linuxOnly, async () => {
  // A unique fractional duration marks both the shell and its `sleep` in their command lines.
  const marker = `30.${Date.now() % 1_000_000}${Math.floor(Math.random() * 1e6)}`;
  try {
    for (const delay of [-1, 0, 1, 3, 10]) {
      const controller = new AbortController();
      const pending = runTool("/bin/sh", ["-c", `sleep ${marker} & wait`], {
        signal: controller.signal,
        timeoutMs: 20_000,
      });
      if (delay < 0) controller.abort(); // before the child has even been started
      else setTimeout(() => controller.abort(), delay);
      const r = await pending;
      assert.equal(r.kind, "timeout", `delay ${delay}: ${r.kind} ${r.detail}`);
      assert.match(r.detail, /abort/);
      assert.ok(r.durationMs < 10_000, `delay ${delay}: settled after ${r.durationMs} ms`);
    }
    assert.deepEqual(await waitGone(pidsWith(marker)), [], "no tool left running");
  } finally {
    // An assertion that failed above must not leave a `sleep` running for 30 s.
    for (const pid of pidsWith(marker)) signalProcess(pid);
  }
  // (forgotten when a SIGKILL timer fires, which a loaded machine can run late: waited for, up to 5 s)
  for (let i = 0; i < 200 && liveCount() > 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(liveCount(), 0, "no process group still tracked");
});

test(
  "runTool: why a tool could not start is said in the same words on every runtime",
  posixOnly,
  async () => {
    // Each runtime words these its own way, and Bun's for a missing cwd ("ENOENT: no such file or directory,
    // posix_spawn 'sh'") reads as a missing program: the cause and its code, the same under Deno, Bun and Node.
    const dir = mkdtempSync(join(tmpdir(), "toolguard-launch-"));
    try {
      const plain = join(dir, "plain.sh");
      writeFileSync(plain, "#!/bin/sh\necho hi\n");
      const orphan = join(dir, "orphan.sh");
      writeFileSync(orphan, "#!/no/such/interpreter\necho hi\n");
      chmodSync(orphan, 0o755);
      const cases: [Promise<{ detail: string }>, string][] = [
        [
          runTool("no-such-tool-xyz", []),
          'could not start "no-such-tool-xyz": no program of that name on PATH (ENOENT)',
        ],
        [runTool(join(dir, "gone"), []), `could not start "${join(dir, "gone")}": no such file (ENOENT)`],
        [
          runTool(plain, []),
          `could not start "${plain}": permission denied: the file is not executable (chmod +x) or a folder on ` +
          "its path cannot be entered (EACCES)",
        ],
        [runTool(dir, []), `could not start "${dir}": it is a directory, not a program (EACCES)`],
        [
          runTool(orphan, []),
          `could not start "${orphan}": the interpreter that its #! line names was not found (ENOENT)`,
        ],
        [
          runTool("/bin/sh", ["-c", "true"], { cwd: join(dir, "gone") }),
          `could not start "/bin/sh" (cwd "${
            join(dir, "gone")
          }"): the working directory does not exist (ENOENT)`,
        ],
        [
          runTool("/bin/sh", ["-c", "true"], { cwd: plain }),
          `could not start "/bin/sh" (cwd "${plain}"): the working directory is not a directory (ENOTDIR)`,
        ],
      ];
      for (const [pending, detail] of cases) {
        const r = await pending;
        assert.equal(r.detail, detail);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/**
 * The stdout of `code` (with `runTool` in scope) run as a script in `dir` by `deno run` with only the
 * permissions `flags` grant: not `deno eval`, which grants every permission whatever flags it is given.
 */
function denoProbe(
  dir: string,
  code: string,
  flags: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const guard = new URL("../guard.ts", import.meta.url).href;
  const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
  const script = join(dir, "probe.ts");
  writeFileSync(script, `const { runTool } = await import(${JSON.stringify(guard)});\n${code}`);
  return execFileSync(deno.execPath(), ["run", "--no-config", ...flags, script], {
    encoding: "utf8",
    ...options,
  });
}

test(
  "runTool: under Deno without read access to /proc (through setsid), a start failure is said in those words",
  { ...linuxOnly, skip: linuxOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-launch-"));
    try {
      const orphan = join(dir, "orphan.sh");
      writeFileSync(orphan, "#!/no/such/interpreter\necho hi\n");
      chmodSync(orphan, 0o755);
      // /proc cannot be read, setsid can: the guard starts the tool through setsid, which reports the failure.
      const out = denoProbe(
        dir,
        `if (Deno.permissions.querySync({ name: "read", path: "/proc" }).state === "granted") {\n` +
          `  throw new Error("/proc is readable: the test would not test what it says");\n` +
          `}\n` +
          `console.log((await runTool(${JSON.stringify(orphan)}, [])).detail);\n`,
        ["--allow-run", "--allow-env", `--allow-read=${dir},/usr/bin,/bin`],
      );
      assert.equal(
        out.trim(),
        `could not start "${orphan}": the interpreter that its #! line names was not found (ENOENT)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "runTool: under Deno without env permission, a child given env still has the host's, and no PATH is guessed",
  { ...posixOnly, skip: posixOnly.skip || (isDeno ? false : "needs Deno's permissions") },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-launch-"));
    try {
      mkdirSync(join(dir, "tooldir"));
      // Deno merges `env` over the host's environment it cannot show us; the failure of a name whose PATH
      // search cannot be repeated here keeps Deno's words instead of judging the cwd's "tooldir".
      const out = denoProbe(
        dir,
        `const seen = await runTool("/bin/sh", ["-c", "echo $FOO:$HOME:$PATH >&2"], { env: { FOO: "1" } });\n` +
          `console.log(seen.stderr.trim());\n` +
          `console.log((await runTool("tooldir", [], { env: { FOO: "1" } })).detail);\n`,
        ["--allow-run", "--allow-read"],
        { cwd: dir, env: { ...process.env, HOME: dir } },
      );
      const [seen, detail] = out.trim().split("\n");
      assert.equal(seen, `1:${dir}:${process.env.PATH}`);
      assert.match(detail, /^could not start "tooldir": /);
      assert.doesNotMatch(detail, /directory/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "runTool: on Windows under Deno, a bare name is looked for with env permission for PATH alone, never said to be on no PATH without",
  { ...T, skip: isWindows && isDeno ? false : "Deno's permissions on Windows" },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-launch-"));
    try {
      const guard = new URL("../guard.ts", import.meta.url).href;
      const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
      const script = join(dir, "probe.ts");
      writeFileSync(
        script,
        `const { runTool } = await import(${JSON.stringify(guard)});\n` +
          `const r = await runTool(Deno.args[0], Deno.args.slice(1));\n` +
          `console.log(r.kind, r.exitCode, r.detail);\n`,
      );
      const probe = (allow: string[], command: string[]) =>
        execFileSync(deno.execPath(), [
          "run",
          "--no-config",
          "--allow-run",
          "--allow-read",
          ...allow,
          script,
          ...command,
        ], {
          encoding: "utf8",
          cwd: dir,
        }).trim();
      const detail = probe([], ["toolguard-no-such-tool"]);
      assert.match(
        detail,
        /^spawn null could not start "toolguard-no-such-tool": .*the environment could not be read/,
      );
      assert.doesNotMatch(detail, /PATH folder/);
      // Granted only the names a launch is planned with, Deno cannot read the whole environment: these do.
      assert.match(probe(["--allow-env=PATH,PATHEXT,COMSPEC"], ["cmd", "/c", "exit 3"]), /^exit 3 /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "runTool: an executable script without a #! line runs through /bin/sh on every runtime",
  posixOnly,
  async () => {
    // Deno and Node start such a script with /bin/sh as execvp does (the shells' own rule); Bun refused it.
    const dir = mkdtempSync(join(tmpdir(), "toolguard-launch-"));
    try {
      const script = join(dir, "plain-script");
      writeFileSync(script, 'echo "$1"\n');
      chmodSync(script, 0o755);
      const byPath = await runTool(script, ["a b"], { protocol: "lines" });
      assert.equal(byPath.kind, "results", byPath.detail);
      assert.deepEqual(byPath.items, ["a b"]);
      const onPath = await runTool("plain-script", ["c"], {
        protocol: "lines",
        env: { PATH: `${dir}:${process.env.PATH ?? ""}` },
      });
      assert.equal(onPath.kind, "results", onPath.detail);
      assert.deepEqual(onPath.items, ["c"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
