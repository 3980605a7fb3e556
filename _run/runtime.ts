/**
 * The runtime layer under the guard: one way to start a child process, read its pipes and end its whole
 * process tree, implemented with `Deno.Command` on Deno, `Bun.spawn` on Bun and `node:child_process`
 * elsewhere. Every branch behaves the same: the child runs in its own process group (POSIX) so the guard can
 * signal the group, stdin is `/dev/null` unless bytes are given, and nothing goes through a shell. Under Deno
 * on POSIX the group comes from `setsid` (when present and verified) rather than `detached`, which would make
 * Deno fork its whole address space for every tool.
 *
 * It also keeps the set of live children so that when the host process exits or is interrupted
 * (SIGINT/SIGTERM/SIGHUP) their process trees are ended too. Handlers are registered only while at least one
 * child is live.
 *
 * @module
 */

import { planWindowsLaunch, windowsTreeKill } from "./windows.ts";
import { watchWindowsExitCode } from "./windows_exit.ts";

// Minimal structural views of the runtime APIs used here, so this file type-checks under Deno and Bun alike.
interface DenoChild {
  pid: number;
  stdin: WritableStream<Uint8Array>;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  status: Promise<{ code: number; signal: string | null }>;
  unref(): void;
}
interface DenoApi {
  build: { os: string };
  pid: number;
  env: { toObject(): Record<string, string>; get(name: string): string | undefined };
  execPath(): string;
  statSync(
    path: string,
  ): { isFile: boolean; isDirectory: boolean; mode: number | null; uid: number | null; gid: number | null };
  uid(): number | null;
  gid(): number | null;
  permissions: { querySync(descriptor: { name: string }): { state: string } };
  kill(pid: number, signal: string): void;
  exit(code: number): never;
  addSignalListener(signal: string, handler: () => void): void;
  removeSignalListener(signal: string, handler: () => void): void;
  unrefTimer(id: number): void;
  Command: new (command: string, options: Record<string, unknown>) => {
    spawn(): DenoChild;
    outputSync(): unknown;
  };
}
interface BunSubprocess {
  pid: number;
  stdin: { write(chunk: Uint8Array): unknown; end(): unknown } | null;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  exited: Promise<number>;
  exitCode: number | null;
  signalCode: string | null;
  unref(): void;
}
interface BunApi {
  spawn(cmd: string[], options: Record<string, unknown>): BunSubprocess;
  spawnSync(cmd: string[], options: Record<string, unknown>): unknown;
}
interface NodeProcess {
  platform: string;
  pid: number;
  env: Record<string, string | undefined>;
  kill(pid: number, signal?: string | number): boolean;
  exit(code?: number): never;
  on(event: string, handler: (...a: unknown[]) => void): unknown;
  off(event: string, handler: (...a: unknown[]) => void): unknown;
  listenerCount(event: string): number;
}

const denoApi = (globalThis as { Deno?: DenoApi }).Deno;
const bunApi = (globalThis as { Bun?: BunApi }).Bun;
const nodeProcess = (globalThis as { process?: NodeProcess }).process;

/** True on Windows, whatever the runtime. */
export const isWindows: boolean = denoApi
  ? denoApi.build.os === "windows"
  : nodeProcess?.platform === "win32";

// Under Bun (or Node), TOOLGUARD_SPAWN=node forces the node:child_process branch, so the test suite can
// exercise the fallback too. Deno is never asked: reading the environment there needs a permission.
const forceNode = !denoApi && nodeProcess?.env.TOOLGUARD_SPAWN === "node";

/** Which spawn implementation this runtime uses. */
export const runtimeName: "deno" | "bun" | "node" = denoApi ? "deno" : bunApi && !forceNode ? "bun" : "node";

/** What to start. `command` is run directly, never through a shell. */
export interface SpawnSpec {
  /** Program name or path. */
  command: string;
  /** Arguments, each passed as one argv entry. */
  args: readonly string[];
  /** Working directory. */
  cwd?: string;
  /** Extra environment variables, merged over the host's unless `clearEnv`. */
  env?: Record<string, string>;
  /** Start from an empty environment. */
  clearEnv?: boolean;
  /** Bytes written to stdin, which is then closed; null means stdin is `/dev/null`. */
  stdin: Uint8Array | null;
}

/** How a child ended. Exactly one of `code` and `signal` is non-null. */
export interface ChildExit {
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** Signal name such as `"SIGKILL"`, or null. */
  signal: string | null;
}

/** A pull-based byte source over a child's pipe. `read()` resolves null at end-of-file or after `cancel()`. */
export interface ByteSource {
  /** The next chunk, or null at end-of-file. */
  read(): Promise<Uint8Array | null>;
  /** Stop reading and close our end of the pipe. */
  cancel(): void;
}

/** A started child process. */
export interface LiveChild {
  /** Process id (also the process group id on POSIX). */
  pid: number;
  /** The child's stdout. */
  stdout: ByteSource;
  /** The child's stderr. */
  stderr: ByteSource;
  /** Resolves when the child itself has exited, whether or not its pipes are closed. */
  exited: Promise<ChildExit>;
  /** Signal the child's whole process tree (POSIX: its process group; Windows: `taskkill /T /F`). */
  killTree(signal: "SIGTERM" | "SIGKILL"): void;
  /**
   * Set when the child was started through a launcher (`setsid`) that execs the tool: given how the child
   * ended, whether it wrote to stdout and its stderr, returns why the launcher could not start the tool, or
   * null when the tool itself ran (its own exit 126/127 stays its own).
   */
  startFailure?(exit: ChildExit, wroteStdout: boolean, stderr: Uint8Array): string | null;
}

/** The result of trying to start a child. */
export type SpawnAttempt = { ok: true; child: LiveChild } | { ok: false; reason: string };

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${error.message} (${code})`
      : error.message;
  }
  return String(error);
}

function hostEnv(): Record<string, string> {
  if (denoApi) {
    try {
      return denoApi.env.toObject();
    } catch {
      return {};
    }
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(nodeProcess?.env ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

function effectiveEnv(spec: SpawnSpec): Record<string, string> {
  if (spec.clearEnv) return { ...spec.env };
  const host = hostEnv();
  if (isWindows && spec.env) {
    // Windows names ignore case: a caller's `PATH` replaces the host's `Path` instead of sitting beside it.
    const given = new Set(Object.keys(spec.env).map((k) => k.toUpperCase()));
    for (const k of Object.keys(host)) if (given.has(k.toUpperCase()) && !(k in spec.env)) delete host[k];
  }
  return { ...host, ...spec.env };
}

/** The `env` to hand to Bun.spawn / child_process: undefined (inherit, no copy) when nothing changes. */
function spawnEnv(spec: SpawnSpec): Record<string, string> | undefined {
  return !spec.clearEnv && spec.env === undefined ? undefined : effectiveEnv(spec);
}

function isFileSync(path: string): boolean {
  try {
    if (denoApi) return denoApi.statSync(path).isFile;
    const fs = (nodeProcess as { getBuiltinModule?: (id: string) => unknown } | undefined)
      ?.getBuiltinModule?.(
        "node:fs",
      ) as { statSync(p: string): { isFile(): boolean } } | undefined;
    return fs ? fs.statSync(path).isFile() : false;
  } catch {
    return false;
  }
}

function webSource(stream: ReadableStream<Uint8Array>): ByteSource {
  const reader = stream.getReader();
  let done = false;
  return {
    async read() {
      if (done) return null;
      try {
        const r = await reader.read();
        if (r.done) {
          done = true;
          return null;
        }
        return r.value;
      } catch {
        done = true;
        return null;
      }
    },
    cancel() {
      if (done) return;
      done = true;
      reader.cancel().catch(() => {});
    },
  };
}

interface NodeReadable {
  on(event: string, handler: (...a: unknown[]) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  destroy(): unknown;
}

function nodeSource(stream: NodeReadable): ByteSource {
  const queue: Uint8Array[] = [];
  let ended = false;
  let waiter: (() => void) | null = null;
  const wake = () => {
    const w = waiter;
    waiter = null;
    w?.();
  };
  stream.on("data", (chunk) => {
    queue.push(chunk as Uint8Array);
    stream.pause(); // backpressure: one chunk at a time, resumed on read()
    wake();
  });
  stream.on("end", () => {
    ended = true;
    wake();
  });
  stream.on("close", () => {
    ended = true;
    wake();
  });
  stream.on("error", () => {
    ended = true;
    wake();
  });
  return {
    async read() {
      while (queue.length === 0 && !ended) {
        stream.resume();
        await new Promise<void>((resolve) => (waiter = resolve));
      }
      return queue.shift() ?? null;
    },
    cancel() {
      ended = true;
      queue.length = 0;
      stream.destroy();
      wake();
    },
  };
}

function signalGroup(pid: number, signal: "SIGTERM" | "SIGKILL"): boolean {
  // A negative pid addresses the process group the detached child leads; the group outlives its leader. The
  // bare pid is never signalled here: once the leader is reaped its number may belong to someone else.
  try {
    if (denoApi) denoApi.kill(-pid, signal);
    else nodeProcess?.kill(-pid, signal);
    return true;
  } catch {
    // ESRCH: the group is gone. EPERM: not ours to signal. Either way nothing more to do.
    return false;
  }
}

function windowsKill(pid: number, sync: boolean): void {
  const { command, args } = windowsTreeKill(pid);
  try {
    if (denoApi) {
      const cmd = new denoApi.Command(command, { args, stdin: "null", stdout: "null", stderr: "null" });
      if (sync) cmd.outputSync();
      else cmd.spawn().status.catch(() => {});
    } else if (bunApi) {
      const opts = { stdin: "ignore", stdout: "ignore", stderr: "ignore", windowsHide: true };
      if (sync) bunApi.spawnSync([command, ...args], opts);
      else bunApi.spawn([command, ...args], opts).exited.catch(() => {});
    } else {
      const cp = (nodeProcess as { getBuiltinModule?: (id: string) => unknown } | undefined)
        ?.getBuiltinModule?.(
          "node:child_process",
        ) as {
          spawnSync(c: string, a: string[], o: unknown): unknown;
          spawn(c: string, a: string[], o: unknown): { on(e: string, h: () => void): void };
        } | undefined;
      if (!cp) return;
      const opts = { stdio: "ignore", windowsHide: true };
      if (sync) cp.spawnSync(command, args, opts);
      else cp.spawn(command, args, opts).on("error", () => {});
    }
  } catch {
    // taskkill missing or the tree already gone: nothing more we can do.
  }
}

function makeKiller(pid: number): (signal: "SIGTERM" | "SIGKILL") => void {
  if (!isWindows) return (signal) => signalGroup(pid, signal);
  let sent = false;
  // taskkill /T /F is already forceful, so the SIGKILL step after the grace period has nothing to add.
  return () => {
    if (sent) return;
    sent = true;
    windowsKill(pid, false);
  };
}

/**
 * Windows: `taskkill /F` ends each process with exit code 1, which is the guard's doing, not the tool's. Once
 * the guard has ended the tree, report the exit as POSIX does for a killed child: no exit code.
 */
function windowsExit(attempt: SpawnAttempt): SpawnAttempt {
  if (!isWindows || !attempt.ok) return attempt;
  const child = attempt.child;
  let killed = false;
  return {
    ok: true,
    child: {
      ...child,
      killTree: (signal) => {
        killed = true;
        child.killTree(signal);
      },
      exited: child.exited.then((e) => (killed ? { code: null, signal: null } : e)),
    },
  };
}

/** Start a child per `spec`. Never throws: a failure to start comes back as `{ ok: false, reason }`. */
export async function spawnChild(spec: SpawnSpec): Promise<SpawnAttempt> {
  let command = spec.command;
  let args: readonly string[] = spec.args;
  let rawArguments = false;
  if (isWindows) {
    // planWindowsLaunch reads PATH, PATHEXT and ComSpec itself, matching names case-insensitively.
    const plan = planWindowsLaunch(spec.command, spec.args, effectiveEnv(spec), isFileSync, spec.cwd);
    if (!plan.ok) return { ok: false, reason: plan.reason };
    command = plan.command;
    args = plan.args;
    rawArguments = plan.rawArguments;
  }
  try {
    if (runtimeName === "deno") {
      const grouped = isWindows ? null : await spawnDenoViaSetsid(spec);
      if (grouped) return { ok: true, child: grouped };
      return windowsExit({ ok: true, child: spawnDeno(command, args, rawArguments, spec) });
    }
    if (runtimeName === "bun") {
      return windowsExit({ ok: true, child: spawnBun(command, args, rawArguments, spec) });
    }
    return windowsExit(await spawnNode(command, args, rawArguments, spec));
  } catch (error) {
    return { ok: false, reason: errorText(error) };
  }
}

function spawnDeno(
  command: string,
  args: readonly string[],
  raw: boolean,
  spec: SpawnSpec,
  viaSetsid = false,
): LiveChild {
  const child = new denoApi!.Command(command, {
    args: [...args],
    cwd: spec.cwd,
    env: spec.env,
    clearEnv: spec.clearEnv ?? false,
    stdin: spec.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    detached: !isWindows && !viaSetsid,
    windowsRawArguments: raw,
  }).spawn();
  if (spec.stdin) {
    const writer = child.stdin.getWriter();
    writer.write(spec.stdin).then(() => writer.close()).catch(() => {});
  }
  let reaped = false;
  const exited = child.status.then(
    (s) => {
      reaped = true;
      setsidKillers.delete(child.pid);
      return s.signal ? { code: null, signal: s.signal } : { code: s.code, signal: null };
    },
    () => {
      reaped = true;
      setsidKillers.delete(child.pid);
      return { code: null, signal: null };
    },
  );
  // For the first instants setsid has not yet made its group: then the (unreaped, so still ours) pid is
  // signalled, which ends setsid before it can exec the tool.
  const killTree = (signal: "SIGTERM" | "SIGKILL") => {
    if (signalGroup(child.pid, signal) || reaped) return;
    try {
      denoApi!.kill(child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const base = { pid: child.pid, stdout: webSource(child.stdout), stderr: webSource(child.stderr), exited };
  if (!viaSetsid) return { ...base, killTree: makeKiller(child.pid) };
  setsidKillers.set(child.pid, killTree); // `exited` has not run yet: its callbacks are asynchronous
  return {
    ...base,
    killTree,
    startFailure: (exit, wroteStdout, stderr) => {
      if (wroteStdout || (exit.code !== 126 && exit.code !== 127)) return null;
      const text = new TextDecoder().decode(stderr).trim();
      if (!text.startsWith("setsid: ") || text.includes("\n")) return null;
      // Only setsid's own one-line report on this very command (util-linux, busybox wording), or a tool that
      // no longer passes the checks, is a failure to start; a tool's own exit 126/127 stays an exit.
      const own = text.startsWith(`setsid: failed to execute ${spec.command}: `) ||
        text.startsWith(`setsid: can't execute '${spec.command}': `);
      return own || !preflightSetsid(spec) ? text.slice("setsid: ".length) : null;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Deno on POSIX: the child's own process group without `detached`
// ---------------------------------------------------------------------------------------------------------

// `detached: true` makes Deno fork() its whole address space on the event-loop thread instead of using
// posix_spawn(): on a Linux VM that made runTool ~1.4x slower per call and 20 concurrent calls ~2x slower
// (scripts/measure_guard.ts). Spawned without `detached`, `setsid` is not a process-group leader, so it calls setsid() and execs
// the tool in place (no fork): the pid we hold becomes the tool's, its session and its process group id,
// just as `detached` gives. Used only when a one-time probe confirms exactly that, when `run` is granted
// outright (so the launcher widens no permission) and when the tool and cwd pass the checks the spawn would
// make; otherwise, and on any error starting the launcher, the `detached` spawn runs and reports as before.
const SETSID_CANDIDATES: readonly string[] = ["/usr/bin/setsid", "/bin/setsid"];
// Children started through setsid and not yet reaped, with their tree killers (see killAllLive).
const setsidKillers = new Map<number, (signal: "SIGTERM" | "SIGKILL") => void>();
let setsidFound: Promise<string | null> | undefined;

async function spawnDenoViaSetsid(spec: SpawnSpec): Promise<LiveChild | null> {
  try {
    if (denoApi!.permissions.querySync({ name: "run" }).state !== "granted") return null;
  } catch {
    return null;
  }
  const setsid = await (setsidFound ??= findSetsid());
  if (setsid === null || !preflightSetsid(spec)) return null;
  try {
    return spawnDeno(setsid, ["--", spec.command, ...spec.args], false, spec, true);
  } catch {
    return null; // the direct spawn will report the real problem in its own words
  }
}

async function findSetsid(): Promise<string | null> {
  for (const path of SETSID_CANDIDATES) {
    if (canExecute(path)) return (await probeSetsid(path)) ? path : null;
  }
  return null;
}

/** `setsid -- /bin/sh -c 'echo $$; read x'` must print the very pid we hold, and that pid must lead a group. */
async function probeSetsid(path: string): Promise<boolean> {
  let child: DenoChild;
  try {
    child = new denoApi!.Command(path, {
      args: ["--", "/bin/sh", "-c", "echo $$; read x"],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
  } catch {
    return false;
  }
  const reader = child.stdout.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const first = await Promise.race([
      reader.read(),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 5000))),
    ]);
    const said = first && !first.done ? new TextDecoder().decode(first.value).trim() : "";
    // Signalling the group both proves it exists and ends the probe.
    return said === String(child.pid) && signalGroup(child.pid, "SIGKILL");
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    child.stdin.close().catch(() => {}); // `read` sees end-of-file, so the probe ends in every case
    reader.cancel().catch(() => {});
    await child.status.catch(() => {});
  }
}

/**
 * Whether `path` is a regular file this process may execute: owner/group/other bits, or any x bit for root
 * or when our uid is not readable (no `sys` permission). Supplementary groups are not seen; where this guesses
 * wrong, setsid's own report of the failed exec still makes the run `spawn`.
 */
function canExecute(path: string): boolean {
  try {
    const info = denoApi!.statSync(path);
    if (!info.isFile || info.mode === null) return false;
    let uid: number | null = null;
    try {
      uid = denoApi!.uid();
    } catch {
      // no `sys` permission
    }
    if (uid === null || uid === 0) return (info.mode & 0o111) !== 0;
    if (info.uid === uid) return (info.mode & 0o100) !== 0;
    if (info.gid === denoApi!.gid()) return (info.mode & 0o010) !== 0;
    return (info.mode & 0o001) !== 0;
  } catch {
    return false;
  }
}

/**
 * Whether the launcher would find and run the tool as a direct spawn would: cwd is a directory and the
 * command resolves (relative to cwd, or through an all-absolute PATH) to a file we may execute. When unsure,
 * false, and the direct spawn runs instead.
 */
function preflightSetsid(spec: SpawnSpec): boolean {
  try {
    if (spec.cwd !== undefined && !denoApi!.statSync(spec.cwd).isDirectory) return false;
    const command = spec.command;
    if (command.includes("/")) {
      return canExecute(
        command.startsWith("/") || spec.cwd === undefined ? command : `${spec.cwd}/${command}`,
      );
    }
    const path = spec.env?.PATH ?? (spec.clearEnv ? undefined : denoApi!.env.get("PATH"));
    if (!path) return false;
    // Remember where a name was found (re-checked each time: one stat instead of one per PATH entry). Which
    // file runs is still setsid's PATH search, the same search a direct spawn makes.
    const key = `${command}\0${path}`;
    const known = foundOnPath.get(key);
    if (known !== undefined && canExecute(known)) return true;
    for (const dir of path.split(":")) {
      if (!dir.startsWith("/")) return false; // an empty or relative entry depends on whose cwd: not ours to guess
      const candidate = `${dir}/${command}`;
      if (canExecute(candidate)) {
        if (foundOnPath.size >= 256) foundOnPath.clear();
        foundOnPath.set(key, candidate);
        return true;
      }
    }
    return false;
  } catch {
    return false;
  }
}

const foundOnPath = new Map<string, string>();

function spawnBun(command: string, args: readonly string[], raw: boolean, spec: SpawnSpec): LiveChild {
  const proc = bunApi!.spawn([command, ...args], {
    cwd: spec.cwd,
    env: spawnEnv(spec),
    stdin: spec.stdin ? "pipe" : "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: !isWindows,
    windowsVerbatimArguments: raw,
    windowsHide: true,
  });
  // Windows: Bun keeps only the low 8 bits of the exit code (oven-sh/bun#33720); read the full one.
  const fullExitCode = isWindows ? watchWindowsExitCode(proc.pid) : (low: number | null) => low;
  if (spec.stdin && proc.stdin) {
    try {
      proc.stdin.write(spec.stdin);
      Promise.resolve(proc.stdin.end()).catch(() => {});
    } catch {
      // The tool closed stdin early (EPIPE): it did not want the input.
    }
  }
  return {
    pid: proc.pid,
    stdout: webSource(proc.stdout),
    stderr: webSource(proc.stderr),
    exited: proc.exited.then(
      () => (proc.signalCode
        ? { code: null, signal: proc.signalCode }
        : { code: fullExitCode(proc.exitCode), signal: null }),
      () => ({ code: null, signal: null }),
    ),
    killTree: makeKiller(proc.pid),
  };
}

interface NodeChildProcess {
  pid?: number;
  stdin: { write(b: Uint8Array): unknown; end(): unknown; on(e: string, h: () => void): unknown } | null;
  stdout: NodeReadable;
  stderr: NodeReadable;
  on(event: string, handler: (...a: unknown[]) => void): unknown;
  once(event: string, handler: (...a: unknown[]) => void): unknown;
}

async function spawnNode(
  command: string,
  args: readonly string[],
  raw: boolean,
  spec: SpawnSpec,
): Promise<SpawnAttempt> {
  const cp = await import("node:child_process") as unknown as {
    spawn(c: string, a: string[], o: unknown): NodeChildProcess;
  };
  const proc = cp.spawn(command, [...args], {
    cwd: spec.cwd,
    env: spawnEnv(spec),
    stdio: [spec.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    detached: !isWindows,
    windowsVerbatimArguments: raw,
    windowsHide: true,
    shell: false,
  });
  const exited = new Promise<ChildExit>((resolve) => {
    proc.on(
      "exit",
      (code, signal) =>
        resolve(signal ? { code: null, signal: String(signal) } : { code: code as number, signal: null }),
    );
  });
  const started = await new Promise<string | null>((resolve) => {
    proc.once("spawn", () => resolve(null));
    proc.once("error", (error) => resolve(errorText(error)));
  });
  if (started !== null || proc.pid === undefined) return { ok: false, reason: started ?? "no pid" };
  if (spec.stdin && proc.stdin) {
    proc.stdin.on("error", () => {});
    proc.stdin.write(spec.stdin);
    proc.stdin.end();
  }
  return {
    ok: true,
    child: {
      pid: proc.pid,
      stdout: nodeSource(proc.stdout),
      stderr: nodeSource(proc.stderr),
      exited,
      killTree: makeKiller(proc.pid),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Ending live trees when the host goes away
// ---------------------------------------------------------------------------------------------------------

const live = new Set<number>();
const hostSignals: readonly string[] = isWindows ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
const signalHandlers = new Map<string, () => void>();

function killAllLive(): void {
  for (const pid of live) {
    if (isWindows) windowsKill(pid, true);
    else if (setsidKillers.has(pid)) setsidKillers.get(pid)!("SIGKILL"); // may not lead its group yet
    else signalGroup(pid, "SIGKILL"); // the host is going away: there is no time for a grace period
  }
  live.clear();
}

function onHostExit(): void {
  killAllLive();
}

// Deno does not fire "unload" when an uncaught error ends the program, so watch for those too. A host that
// handles the error itself (preventDefault, usually in a listener added before ours) keeps its tools.
function onHostCrash(event: Event): void {
  if (!event.defaultPrevented) killAllLive();
}

function installHandlers(): void {
  handlersInstalled = true;
  for (const name of hostSignals) {
    const handler = () => {
      killAllLive();
      uninstallHandlers();
      // Adding a listener suppressed the default action (terminate), so restore it: exit as the signal would,
      // unless the host has its own listener for this signal (then it decides).
      if (denoApi) denoApi.exit(128 + (signalNumbers[name] ?? 0));
      else if (!nodeProcess || nodeProcess.listenerCount(name) === 0) {
        nodeProcess?.exit(128 + (signalNumbers[name] ?? 0));
      }
    };
    try {
      if (denoApi) denoApi.addSignalListener(name, handler);
      else nodeProcess?.on(name, handler);
      signalHandlers.set(name, handler);
    } catch {
      // This platform does not support listening for this signal.
    }
  }
  if (denoApi) {
    globalThis.addEventListener("unload", onHostExit);
    globalThis.addEventListener("error", onHostCrash);
    globalThis.addEventListener("unhandledrejection", onHostCrash);
  } else nodeProcess?.on("exit", onHostExit);
}

function uninstallHandlers(): void {
  handlersInstalled = false;
  for (const [name, handler] of signalHandlers) {
    try {
      if (denoApi) denoApi.removeSignalListener(name, handler);
      else nodeProcess?.off(name, handler);
    } catch {
      // ignore
    }
  }
  signalHandlers.clear();
  if (denoApi) {
    globalThis.removeEventListener("unload", onHostExit);
    globalThis.removeEventListener("error", onHostCrash);
    globalThis.removeEventListener("unhandledrejection", onHostCrash);
  } else nodeProcess?.off("exit", onHostExit);
}

// The handlers stay a moment after the last tree is gone, so back-to-back calls do not add and remove them
// each time (that costs more than the rest of the guard's own work on Bun). Nothing is live meanwhile, and
// neither the handlers nor the timer keep the host alive.
const HANDLER_LINGER_MS = 100;
let handlersInstalled = false;
let lingerArmed = false;
let emptySince = 0;

function armLinger(delay: number): void {
  if (lingerArmed) return;
  lingerArmed = true;
  unrefTimeout(() => {
    lingerArmed = false;
    if (live.size > 0 || !handlersInstalled) return; // the next tree to go re-arms it
    const left = HANDLER_LINGER_MS - (performance.now() - emptySince);
    if (left > 1) armLinger(left);
    else uninstallHandlers();
  }, delay);
}

/** Remember a live process tree so it is ended if the host exits or is interrupted first. */
export function trackLive(pid: number): void {
  if (!handlersInstalled) installHandlers();
  live.add(pid);
}

/** Forget a process tree that has been dealt with. Handlers go shortly after the last one does. */
export function untrackLive(pid: number): void {
  if (!live.delete(pid)) return;
  if (live.size === 0) {
    emptySince = performance.now();
    armLinger(HANDLER_LINGER_MS);
  }
}

/** Number of process trees currently tracked (for tests). */
export function liveCount(): number {
  return live.size;
}

/** A timer that does not keep the host alive. */
export function unrefTimeout(fn: () => void, ms: number): void {
  const id = setTimeout(fn, ms) as unknown;
  if (typeof id === "number") denoApi?.unrefTimer(id);
  else (id as { unref?: () => void }).unref?.();
}

/**
 * Start a process that shares our stdout/stderr and is not waited for (used by the fake tool to leave a
 * descendant holding the pipes). Returns its pid.
 */
export async function spawnInherited(command: string, args: readonly string[]): Promise<number> {
  if (denoApi) {
    const child = new denoApi.Command(command, {
      args: [...args],
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    child.status.catch(() => {});
    child.unref();
    return child.pid;
  }
  if (bunApi) {
    const proc = bunApi.spawn([command, ...args], { stdin: "ignore", stdout: "inherit", stderr: "inherit" });
    proc.unref();
    return proc.pid;
  }
  const cp = await import("node:child_process") as unknown as {
    spawn(c: string, a: string[], o: unknown): NodeChildProcess & { unref(): void };
  };
  const proc = cp.spawn(command, [...args], { stdio: ["ignore", "inherit", "inherit"] });
  proc.on("error", () => {});
  proc.unref();
  return proc.pid ?? -1;
}
