/**
 * The runtime layer under the guard: one way to start a child process, read its pipes and end its whole
 * process tree, implemented with `Deno.Command` on Deno, `Bun.spawn` on Bun and `node:child_process`
 * elsewhere. Every branch behaves the same: the guard can end the child's whole process tree, stdin is
 * `/dev/null` unless bytes are given, and nothing goes through a shell. One exception: under Deno, signalling a
 * process by its pid needs run permission for every program (on Windows, running `taskkill`), so with a
 * partial `--allow-run` the guard ends the tool alone, through its own handle (which never prompts), and says
 * so ({@linkcode LiveChild.killReached}).
 *
 * How the tree is found (POSIX): on Linux with a readable `/proc`, every child carries a marker in its
 * environment that its descendants inherit, and ending the tree signals every process carrying it (./tree.ts),
 * which also reaches a descendant that started its own session. Under Bun and Node the child also leads its
 * own process group (`detached`), which is signalled as well. Under Deno the marker alone is used there: a
 * process group costs Deno a fork of its whole address space (`detached`) or an extra exec (`setsid`) on every
 * spawn, so those run only where `/proc` cannot be read (macOS, a restricted `--allow-read`).
 *
 * It also keeps the set of live children so that when the host process exits or is interrupted
 * (SIGINT/SIGTERM/SIGHUP) their process trees are ended too. Handlers are registered only while at least one
 * child is live.
 *
 * @module
 */

import {
  type BunFileSink,
  bunSink,
  type ByteSink,
  type ByteSource,
  byteStreamSource,
  ENDED,
  type NodeReadable,
  nodeSink,
  nodeSource,
  type NodeWritable,
  webSink,
  webSource,
} from "./pipes.ts";
import {
  noTaskkillNote,
  ownKillReach,
  planWindowsLaunch,
  TASKKILL_TREE_NOTE,
  taskkillGoneNote,
  watchWindowsExitCode,
  windowsTreeKill,
} from "./windows.ts";
import {
  exitedUnreaped,
  markedRunning,
  newTreeMarker,
  type OurEnds,
  ourEnds,
  signalMarked,
  type TreeLook,
  type TreeLookOptions,
  type TreeMarker,
  treeMarkersWork,
  type TreeOwner,
  treeState,
  whyNoMarkers,
} from "./tree.ts";

export type { ByteSink, ByteSource } from "./pipes.ts";
export type { TreeLook, TreeOwner, TreeState } from "./tree.ts";
import { nodeBuiltin } from "../_common/values.ts";

// Minimal structural views of the runtime APIs used here, so this file type-checks under Deno and Bun alike.
interface DenoChild {
  pid: number;
  stdin: WritableStream<Uint8Array>;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  status: Promise<{ code: number; signal: string | null }>;
  kill(signal: string): void;
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
  permissions: {
    querySync(
      descriptor: { name: string; path?: string; command?: string },
    ): { state: string; partial?: boolean };
  };
  stdin: { isTerminal(): boolean };
  stdout: { isTerminal(): boolean };
  stderr: { isTerminal(): boolean };
  openSync(path: string, options: { read: boolean }): { close(): void };
  kill(pid: number, signal: string | 0): void; // (signal 0, a probe, is taken as kill(2) takes it)
  exit(code: number): never;
  addSignalListener(signal: string, handler: () => void): void;
  removeSignalListener(signal: string, handler: () => void): void;
  Command: new (command: string, options: Record<string, unknown>) => {
    spawn(): DenoChild;
    outputSync(): unknown;
  };
}
interface BunSubprocess {
  pid: number;
  stdin: BunFileSink | null;
  stdout: ReadableStream<Uint8Array>;
  /** Undefined unless stderr is piped. */
  stderr: ReadableStream<Uint8Array> | undefined;
  exited: Promise<number>;
  exitCode: number | null;
  signalCode: string | null;
  kill(signal?: string | number): void;
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
// Read on use, never at load: under Deno the first touch of `globalThis.process` loads the Node layer.
const nodeProcess = (): NodeProcess | undefined => (globalThis as { process?: NodeProcess }).process;

/** True on Windows, whatever the runtime. */
export const isWindows: boolean = denoApi
  ? denoApi.build.os === "windows"
  : nodeProcess()?.platform === "win32";

const isLinux = denoApi ? denoApi.build.os === "linux" : nodeProcess()?.platform === "linux";

// Under Bun (or Node), TOOLGUARD_SPAWN=node forces the node:child_process branch, so the test suite can
// exercise the fallback too. Deno is never asked: reading the environment there needs a permission.
const forceNode = !denoApi && nodeProcess()?.env.TOOLGUARD_SPAWN === "node";

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
  /**
   * The child's stdin: these bytes, then end-of-file; `null` for `/dev/null`; or `"piped"` for a pipe the
   * caller keeps writing to through {@linkcode LiveChild.stdin} (a long-lived child such as an MCP server).
   */
  stdin: Uint8Array | null | "piped";
  /**
   * The child's stderr: `"piped"` (default) to read it through {@linkcode LiveChild.stderr}, `"inherit"` to
   * share ours, `"ignore"` to drop it.
   */
  stderr?: StderrMode;
}

/** Where a child's stderr goes. */
export type StderrMode = "piped" | "inherit" | "ignore";

/** How a child ended. Exactly one of `code` and `signal` is non-null. */
export interface ChildExit {
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** Signal name such as `"SIGKILL"`, or null. */
  signal: string | null;
}

/** A started child process. */
export interface LiveChild {
  /** Process id (also the process group id on POSIX, unless the tree is found by marker alone). */
  pid: number;
  /** The child's stdin, when the spec asked for `"piped"`; otherwise null. */
  stdin: ByteSink | null;
  /** The child's stdout. */
  stdout: ByteSource;
  /** The child's stderr (at end-of-file at once unless the spec's `stderr` is `"piped"`). */
  stderr: ByteSource;
  /** Resolves when the child itself has exited, whether or not its pipes are closed. */
  exited: Promise<ChildExit>;
  /**
   * Signal the child's whole process tree (POSIX: every process carrying its marker, and its process group
   * where it has one, unless the child is reaped and its pid given to another process; Windows:
   * `taskkill /T /F`). Never throws.
   */
  killTree(signal: "SIGTERM" | "SIGKILL", options?: KillTreeOptions): void;
  /**
   * How ending the tree may have missed part of it, for the result's detail (after "the guard ended the
   * process tree, "), asked once the guard has ended it: on Linux, when `/proc` cannot be read and the process
   * group alone is signalled (macOS: the group is the only way, and says nothing); on Windows, that
   * `taskkill /T` misses a process whose parent had already exited; undefined when nothing was missed that
   * way. Where the tree could not be signalled at all ({@linkcode LiveChild.killReached}), why, and what to
   * grant (said after how far the kill reached instead). `owner`: what the note calls the child (default
   * `"tool"`; the relay's is the MCP server).
   */
  treeNote(owner?: TreeOwner): string | undefined;
  /**
   * Set once the guard tried to end the tree and could not signal it (Deno without run permission for every
   * program, which `Deno.kill` needs, or on Windows for `taskkill`, or on Windows a tool that had exited, from
   * which `taskkill /T` finds nothing): `"tool"` when the child's own kill ended the tool alone, `"none"` when
   * it reached no process (the tool had exited: under Bun and Node on Windows, told by the tool's exit once
   * known); undefined when the tree was signalled.
   */
  killReached(): KillReach | undefined;
  /**
   * Whether a kill of the tree found a live process to signal: on POSIX its process group had members, a
   * process carried its marker, or the child was unreaped (on Linux, a child that had exited by itself, a
   * zombie, is no live process: where the kill met nothing else, nothing was found); on Windows once a kill was sent while the tool was
   * unreaped (what `taskkill` finds is not known, and from a tool that exited it finds nothing). False before
   * any kill, and after sweeps that found the tree already gone.
   */
  killFound(): boolean;
  /**
   * What the live processes of the tree are doing (Linux: found by the marker in `/proc`); its state is null
   * where that cannot be told: no marker (macOS, Windows), `/proc` not readable, or no process found. Given the
   * pids of the last look, a recheck that finds one of them still busy reads only theirs; told how many of
   * the output pipes are still open, it counts every process when fewer are found held; told to trust the gap
   * of its last whole look, a recheck counts every one of the pids (see {@linkcode treeState}).
   */
  treeState(look?: Pick<TreeLookOptions, "known" | "openPipes" | "gap">): TreeLook;
  /**
   * Whether a process of the tree that a kill could still reach may be running (POSIX): the child while it is
   * unreaped; then a live process carrying its marker (Linux, as the kill finds them), else a member of its
   * process group. False on Windows (`taskkill /F` is forceful at once) and where only the child's own kill
   * may be used (Deno with a partial `--allow-run`) once it is reaped. For a grace between SIGTERM and SIGKILL
   * that ends as soon as the tree has.
   */
  treeRunning(): boolean;
  /**
   * Set when the child was started through a launcher (`setsid`) that execs the tool: given how the child
   * ended, whether it wrote to stdout and its stderr, returns why the launcher could not start the tool, or
   * null when the tool itself ran (its own exit 126/127 stays its own).
   */
  startFailure?(exit: ChildExit, wroteStdout: boolean, stderr: Uint8Array): string | null;
}

/** How far a kill reached when the tree could not be signalled: the tool alone, or no process. */
export type KillReach = "tool" | "none";

/** The result of trying to start a child. */
export type SpawnAttempt = { ok: true; child: LiveChild } | { ok: false; reason: string };

/**
 * A start failure's message with the system's error code (`ENOENT`, `EACCES`) where the message leaves it
 * out: unlike `errorText` in `_common/values.ts`, the code is what tells a missing program from a refused one.
 */
function spawnErrorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${error.message} (${code})`
      : error.message;
  }
  return String(error);
}

/**
 * A fresh copy of the host's environment, as a dictionary (null prototype): ours to extend, and `__proto__` is
 * a name like any other there; null where it cannot be read (Deno without `env` permission, where only
 * Deno's own spawn, which merges `env` over it, reads it: see {@linkcode spawnDeno}).
 */
function hostEnv(): Record<string, string> | null {
  const out: Record<string, string> = Object.create(null);
  let env: Record<string, string | undefined>;
  try {
    env = denoApi ? denoApi.env.toObject() : nodeProcess()?.env ?? {};
  } catch {
    return null;
  }
  for (const k of Object.keys(env)) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * The whole environment the child gets: the host's (unless `clearEnv`; `host` when given, a fresh copy the
 * merge may change), the caller's over it, then `marker`.
 */
function effectiveEnv(
  spec: SpawnSpec,
  marker: TreeMarker | null = null,
  host?: Record<string, string>,
): Record<string, string> {
  // (never null on Bun and Node, whose spawns take it; on Deno, it only plans a Windows launch: see hostEnv)
  const env = spec.clearEnv ? { ...spec.env } : host ?? hostEnv() ?? Object.create(null);
  const given = spec.env;
  if (!spec.clearEnv && given !== undefined) {
    if (isWindows) {
      // Windows names ignore case: a caller's `PATH` replaces the host's `Path` instead of sitting beside it.
      const names = new Set(Object.keys(given).map((k) => k.toUpperCase()));
      for (const k of Object.keys(env)) if (names.has(k.toUpperCase()) && !(k in given)) delete env[k];
    }
    for (const k of Object.keys(given)) env[k] = given[k];
  }
  if (marker !== null) env[marker.name] = marker.value;
  return env;
}

/**
 * The `env` to hand to Bun.spawn / child_process, built in one copy: undefined (inherit, no copy) when nothing
 * changes.
 */
function spawnEnv(spec: SpawnSpec, marker: TreeMarker | null): Record<string, string> | undefined {
  return !spec.clearEnv && spec.env === undefined && marker === null ? undefined : effectiveEnv(spec, marker);
}

function isFileSync(path: string): boolean {
  return pathKind(path) === "file";
}

/**
 * What is at `path` (links followed): a file, a directory, something else, `"missing"` when nothing is, or
 * null when that cannot be told (no permission to look, say).
 */
function pathKind(path: string): "file" | "directory" | "other" | "missing" | null {
  try {
    if (denoApi) {
      const info = denoApi.statSync(path);
      return info.isFile ? "file" : info.isDirectory ? "directory" : "other";
    }
    const fs = (nodeProcess() as { getBuiltinModule?: (id: string) => unknown } | undefined)
      ?.getBuiltinModule?.(
        "node:fs",
      ) as { statSync(p: string): { isFile(): boolean; isDirectory(): boolean } } | undefined;
    if (!fs) return null;
    const info = fs.statSync(path);
    return info.isFile() ? "file" : info.isDirectory() ? "directory" : "other";
  } catch (error) {
    const { code, name } = error as { code?: unknown; name?: unknown };
    return code === "ENOENT" || code === "ENOTDIR" || name === "NotFound" || name === "NotADirectory"
      ? "missing"
      : null;
  }
}

/**
 * Where the spawn looks for `spec.command` (POSIX): a name with a slash is a path (from the cwd when
 * relative), one without is looked for in each folder of PATH, in order; null when the host's PATH it would
 * search cannot be read (Deno without `env` permission: an empty one would name the cwd's file instead).
 */
function commandCandidates(spec: SpawnSpec): string[] | null {
  const command = spec.command;
  if (command.includes("/")) {
    return [command.startsWith("/") || spec.cwd === undefined ? command : `${spec.cwd}/${command}`];
  }
  let path: string | undefined;
  if (spec.env !== undefined && Object.hasOwn(spec.env, "PATH")) path = spec.env.PATH;
  else if (!spec.clearEnv) {
    const host = hostEnv();
    if (host === null) return null;
    path = host.PATH;
  }
  return (path ?? "").split(":").map((dir) => `${dir || "."}/${command}`);
}

/**
 * The script /bin/sh is to run for `spec.command`, a file the system cannot execute itself: the command as
 * given when it is a path (the shell, started in the cwd, finds it as the spawn did), else the first file of
 * that name in an absolute folder of PATH. Undefined when there is none.
 */
function scriptPath(spec: SpawnSpec): string | undefined {
  if (spec.command.includes("/")) return spec.command;
  return commandCandidates(spec)?.find((path) => path.startsWith("/") && isFileSync(path));
}

/** The error codes {@linkcode startFailureText} words itself. */
const START_FAILURE_CODES: ReadonlySet<unknown> = new Set(["ENOENT", "ENOTDIR", "EACCES", "ENOEXEC"]);

/**
 * Why `spec` could not be started (`error` is what the spawn threw), in the same words under Deno, Bun and
 * Node for the common causes, with the error code: each runtime words them its own way, and some name the
 * wrong thing (Bun says "ENOENT ... posix_spawn 'sh'" for a missing cwd, which reads as a missing program).
 * The cause is told apart by looking at the cwd and the file. Any other error, one whose cause cannot be
 * looked at, and any on Windows (where the launch is planned and checked before) keep the runtime's words.
 */
function startFailureText(spec: SpawnSpec, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code as string;
  const own = spawnErrorText(error);
  if (isWindows || !START_FAILURE_CODES.has(code)) return own;
  if (spec.cwd !== undefined) {
    const cwd = pathKind(spec.cwd);
    if (cwd === null) return own;
    if (cwd === "missing") return "the working directory does not exist (ENOENT)";
    if (cwd !== "directory") return "the working directory is not a directory (ENOTDIR)";
  }
  if (code === "ENOEXEC") {
    return "not a program this system can run: a script needs a #! line such as #!/bin/sh (ENOEXEC)";
  }
  const command = spec.command;
  const named = command.includes("/");
  const candidates = commandCandidates(spec);
  if (candidates === null) return own;
  const kind = candidates.map(pathKind).find((k) => k !== "missing") ?? "missing";
  if (kind === null) return own;
  if (kind === "directory") return `it is a directory, not a program (${code})`;
  if (code === "EACCES") {
    return "permission denied: the file is not executable (chmod +x) or a folder on its path cannot be " +
      "entered (EACCES)";
  }
  if (kind !== "missing") return `the interpreter that its #! line names was not found (${code})`;
  return named ? `no such file (${code})` : `no program of that name on PATH (${code})`;
}

/** Whether the child's stderr is read through `LiveChild.stderr` (the default). */
function stderrPiped(spec: SpawnSpec): boolean {
  return spec.stderr === undefined || spec.stderr === "piped";
}

/**
 * Signal the process group `pid` leads; signal 0 asks only whether it has a member (a zombie counts). True
 * where the group was there to signal.
 */
function signalGroup(pid: number, signal: "SIGTERM" | "SIGKILL" | 0): boolean {
  // A negative pid addresses the process group the detached child leads; the group outlives its leader. The
  // bare pid is never signalled here: once the leader is reaped its number may belong to someone else.
  try {
    if (denoApi) denoApi.kill(-pid, signal);
    else nodeProcess()?.kill(-pid, signal);
    return true;
  } catch {
    // ESRCH: the group is gone. EPERM: not ours to signal. Either way nothing more to do.
    return false;
  }
}

/** How a tree is ended. */
export interface KillTreeOptions {
  /**
   * Windows: wait until `taskkill` has finished, for when the host is about to exit and a background
   * `taskkill` might never run. POSIX signals are sent at once either way. Default false.
   */
  wait?: boolean;
}

/** What the guard knows about one child's tree, for ending it. */
interface Tree {
  /** The child's pid. */
  pid: number;
  /** Whether the child was started to lead its own process group (it may not have made it yet: setsid). */
  grouped: boolean;
  /** The environment marker its descendants inherit, or null. */
  marker: TreeMarker | null;
  /** Set once the runtime has reaped the child: from then on its pid may belong to someone else. */
  reaped: boolean;
  /**
   * The child's own kill (Deno's `ChildProcess.kill`, which needs no permission; Bun's and Node's), which
   * reaches the tool alone: the way left where `Deno.kill` may not be used, or `taskkill` cannot be started.
   * False where it found no process to signal (Node's kill says so; Bun's does not).
   */
  own?: (signal: "SIGTERM" | "SIGKILL") => boolean | void;
  /** Set once a kill could not signal the tree: how far it reached ({@linkcode LiveChild.killReached}). */
  reach?: KillReach;
  /** Set once a kill found a live process to signal ({@linkcode LiveChild.killFound}). */
  found?: boolean;
  /** Set on Windows once taskkill could not be run or started, and the tool's own kill was used instead. */
  noTaskkill?: boolean;
  /**
   * How the child exited, kept under Bun and Node on Windows, whose own kill may have found the tool exited
   * but unreaped (Bun's says nothing of it), and on POSIX, where a kill cannot see that without
   * `/proc/PID/stat` (macOS; under Deno it needs --allow-all): the exit tells ({@linkcode ownKillReach}).
   */
  exit?: ChildExit;
  /** The pids a kill found in the tree (Linux markers): an unreadable one is still known once its parent exits. */
  members?: Set<number>;
  /** Set once a kill met a process of the tree whose environment could not be read (found by parent or group). */
  unread?: boolean;
  /** Set once a kill met a process of the tree it was not allowed to signal. */
  unsignalled?: boolean;
  /**
   * Set at the first kill on POSIX: whether the tool had exited by itself but was not reaped yet (a zombie,
   * which a signal reaches and does not end); null where `/proc/PID/stat` cannot tell (macOS, Deno without
   * --allow-all), and then the tool's exit does ({@linkcode treeNote}).
   */
  exited?: boolean | null;
  /**
   * Our ends of the pipes we read, kept from the first look at the tree that needed them: the child's stay
   * open while its output is read, and reading them all again on every recheck costs as much as a /proc scan.
   */
  ours?: OurEnds;
}

/**
 * Signal a child's whole tree: on Windows `taskkill /T /F`, which is forceful whatever the signal; on POSIX
 * its process group (when it leads one) and every process carrying its marker (when it has one), and the
 * child itself while it is unreaped and neither reached it.
 */
function endTree(tree: Tree, signal: "SIGTERM" | "SIGKILL", options: KillTreeOptions = {}): void {
  if (isWindows) {
    // taskkill /T finds a tree from a running tool down: from one that exited it finds nothing, and the pid
    // may since name another process, whose tree it would end. Nothing is reached, and the note says why.
    if (tree.reaped) return void (tree.reach ??= "none");
    // Where taskkill may not run, or cannot be started (not on this host's PATH), the tool's own handle is
    // what is left: the tree is not claimed ended.
    const toolOnly = () => {
      tree.noTaskkill = true;
      if (tree.own !== undefined) endToolOnly(tree, tree.own, signal);
    };
    tree.found = true;
    if (!mayRunTaskkill()) return toolOnly();
    return windowsKill(tree.pid, options, toolOnly);
  }
  // Read before the guard's first signal, after which a tool it ended looks the same. (Deno reads /proc/PID/stat
  // only with --allow-all, which also grants the signals: where only the tool's own kill is left, it cannot.)
  tree.exited ??= tree.reaped ? false : exitedUnreaped(tree.pid) ?? null;
  if (tree.own !== undefined && !maySignal()) return endToolOnly(tree, tree.own, signal);
  const group = groupOf(tree);
  // Reaped, the child's pid links nothing of the tree (its children have a new parent): a process given that
  // number since, or one it starts, would be taken for the tree's by its parent link.
  if (tree.reaped) tree.members?.delete(tree.pid);
  if (tree.marker !== null && treeMarkersWork()) {
    const { signalled, unread, unsignalled } = signalMarked(tree.marker, signal, {
      // An unreaped child is still ours even if it rewrote its environment (unless its group had the signal).
      include: tree.reaped ? null : tree.pid,
      group,
      // Sent once /proc was scanned: a process whose parent it ends is still linked to the tree there.
      signalGroup: group !== null ? () => signalGroup(group, signal) : undefined,
      members: tree.members ??= new Set(),
    });
    if (signalled > 0) tree.found = true;
    if (unread) tree.unread = true;
    if (unsignalled) tree.unsignalled = true;
    return;
  }
  const viaGroup = group !== null && signalGroup(group, signal);
  if (viaGroup) tree.found = true;
  if (viaGroup || tree.reaped) return;
  // Started through setsid, which has not made its group yet (or found by a marker /proc no longer shows):
  // the unreaped, so still ours, pid is signalled, which ends setsid before it can exec the tool.
  try {
    if (denoApi) denoApi.kill(tree.pid, signal);
    else nodeProcess()?.kill(tree.pid, signal);
    tree.found = true;
  } catch {
    // Already gone.
  }
}

/**
 * Whether this host may signal processes by pid: always under Bun and Node; under Deno only with run
 * permission for every program, which `Deno.kill` needs (a partial `--allow-run` makes it throw, and on a
 * terminal it would prompt first). Asked without prompting, on each kill: a permission may be revoked.
 */
function maySignal(): boolean {
  return !denoApi || runPermission()?.state === "granted";
}

/**
 * Deno's run permission, for every program or for `command`, asked without prompting; undefined where the
 * query throws (read as not granted by every caller).
 */
function runPermission(command?: string): { state: string; partial?: boolean } | undefined {
  try {
    return denoApi!.permissions.querySync(command === undefined ? { name: "run" } : { name: "run", command });
  } catch {
    return undefined;
  }
}

/**
 * Whether this host may run `taskkill`, which ends a tree on Windows: always under Bun and Node; under Deno a
 * partial `--allow-run` that leaves it out (or a `--deny-run` that names it) would make the spawn throw, and
 * the tree stay. Asked without prompting, on each kill.
 */
function mayRunTaskkill(): boolean {
  return !denoApi || runPermission(windowsTreeKill(1).command)?.state === "granted";
}

/**
 * End what the child's own kill reaches, where the tree cannot be signalled ({@linkcode maySignal}): the tool
 * alone while it is unreaped, nothing after; its descendants stay, and the tree's note says so.
 */
function endToolOnly(tree: Tree, own: NonNullable<Tree["own"]>, signal: "SIGTERM" | "SIGKILL"): void {
  tree.reach ??= "none";
  if (tree.reaped) return;
  try {
    if (own(signal) === false) return; // the tool had exited (Node's kill found no process)
    tree.reach = "tool";
    tree.found = true;
  } catch {
    // Exited meanwhile: nothing of the tree was reached by this signal.
  }
}

/**
 * Start `taskkill` on `pid`'s tree, calling `failed` (once) where it could not be started: a spawn that threw
 * (Deno, Bun), or Node's spawn error, which comes later.
 */
function windowsKill(pid: number, { wait = false }: KillTreeOptions, failed: () => void): void {
  const { command, args } = windowsTreeKill(pid);
  try {
    if (denoApi) {
      const cmd = new denoApi.Command(command, { args, stdin: "null", stdout: "null", stderr: "null" });
      if (wait) cmd.outputSync();
      else cmd.spawn().status.catch(() => {});
    } else if (bunApi) {
      const opts = { stdin: "ignore", stdout: "ignore", stderr: "ignore", windowsHide: true };
      if (wait) bunApi.spawnSync([command, ...args], opts);
      else bunApi.spawn([command, ...args], opts).exited.catch(() => {});
    } else {
      const cp = (nodeProcess() as { getBuiltinModule?: (id: string) => unknown } | undefined)
        ?.getBuiltinModule?.(
          "node:child_process",
        ) as {
          spawnSync(c: string, a: string[], o: unknown): { error?: unknown };
          spawn(c: string, a: string[], o: unknown): { on(e: string, h: () => void): void };
        } | undefined;
      if (!cp) return failed();
      const opts = { stdio: "ignore", windowsHide: true };
      if (wait) {
        if (cp.spawnSync(command, args, opts).error !== undefined) failed();
      } else cp.spawn(command, args, opts).on("error", failed);
    }
  } catch {
    // taskkill missing (or refused): the caller ends what its own handle reaches.
    failed();
  }
}

/** The `killTree` of one child. */
function treeKiller(tree: Tree): LiveChild["killTree"] {
  if (!isWindows) return (signal, options) => endTree(tree, signal, options);
  let sent = false;
  // taskkill /T /F is already forceful, so the SIGKILL step after the grace period has nothing to add.
  return (signal, options) => {
    if (sent) return;
    sent = true;
    endTree(tree, signal, options);
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
      killTree: (signal, options) => {
        killed = true;
        child.killTree(signal, options);
      },
      exited: child.exited.then((e) => (killed ? { code: null, signal: null } : e)),
    },
  };
}

/** What is actually started: on Windows a `.cmd` becomes cmd.exe with one raw command line. */
interface Launch {
  command: string;
  args: readonly string[];
  /** `args` holds one complete, already-quoted Windows command line. */
  rawArguments: boolean;
}

/** The launch for `spec`: itself on POSIX; on Windows the resolved program, or why it cannot start safely. */
function planLaunch(spec: SpawnSpec): ({ ok: true } & Launch) | { ok: false; reason: string } {
  if (!isWindows) return { ok: true, command: spec.command, args: spec.args, rawArguments: false };
  // planWindowsLaunch reads PATH, PATHEXT and ComSpec itself, matching names case-insensitively. Where the
  // host's environment cannot be read (Deno without env permission) and the caller gives no PATH, it is told
  // so: an empty PATH would say the program is in no PATH folder.
  const given = spec.env === undefined ? [] : Object.keys(spec.env);
  if (spec.clearEnv || given.some((k) => k.toUpperCase() === "PATH")) {
    return planWindowsLaunch(spec.command, spec.args, effectiveEnv(spec), isFileSync, spec.cwd);
  }
  const host = hostEnv() ?? launchNames();
  const env = host === null ? null : effectiveEnv(spec, null, host);
  return planWindowsLaunch(spec.command, spec.args, env, isFileSync, spec.cwd);
}

/**
 * The host's PATH, PATHEXT and ComSpec read one by one, for Deno granted env permission for these names
 * alone (`--allow-env=PATH,PATHEXT,ComSpec`), which cannot read the whole environment; null when PATH cannot
 * be read (an unset one is known: it names no folder).
 */
function launchNames(): Record<string, string> | null {
  const out: Record<string, string> = Object.create(null);
  for (const name of ["PATH", "PATHEXT", "ComSpec"]) {
    let value: string | undefined;
    try {
      value = denoApi?.env.get(name);
    } catch {
      if (name === "PATH") return null;
    }
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Start a child per `spec`. Never throws: a failure to start comes back as `{ ok: false, reason }`.
 *
 * @param spec What to start, and how its stdin and stderr are connected.
 * @returns The live child, or why it could not start.
 */
export async function spawnChild(spec: SpawnSpec): Promise<SpawnAttempt> {
  const launch = planLaunch(spec);
  if (!launch.ok) return { ok: false, reason: launch.reason };
  // Deno spawns one way or another by whether the marker can find the tree, so it asks now. Bun and Node give
  // the child a process group of their own anyway, with the marker as a second net: on Linux it is always
  // added, and /proc is asked only when a tree is ended (under Bun the probe loads node:fs, 1.5-3 ms of a
  // one-shot `toolguard run`).
  const marker = runtimeName === "deno"
    ? (!isWindows && treeMarkersWork() ? newTreeMarker() : null)
    : (isLinux ? newTreeMarker() : null);
  try {
    if (runtimeName === "deno") {
      const marked = marker === null ? spec : { ...spec, env: withMarker(spec.env, marker) };
      // Where the marker finds the tree, Deno spawns plainly: a process group would cost a fork or an exec.
      // Not where the host has a terminal: a tool in the host's session could open it (an ssh or git
      // password prompt would wait on the user's keyboard until the timeout), so there it gets a session of
      // its own, and the marker still finds descendants that leave it.
      if (marker !== null && !hostHasTerminal()) {
        return { ok: true, child: spawnDeno(marked, launch, { via: "marked", marker }) };
      }
      const grouped = canUseSetsid(spec) ? await spawnDenoViaSetsid(marked, marker) : null;
      if (grouped) return { ok: true, child: grouped };
      // Detached, with the marker where markers work: a descendant that leaves the group is still found.
      return windowsExit({ ok: true, child: spawnDeno(marked, launch, { via: "direct", marker }) });
    }
    if (runtimeName === "bun") {
      try {
        return windowsExit({ ok: true, child: spawnBun(spec, launch, marker) });
      } catch (error) {
        // A script without a #! line: Deno and Node start it with /bin/sh, as execvp and the shells do.
        const script = (error as { code?: unknown })?.code === "ENOEXEC" && !isWindows
          ? scriptPath(spec)
          : undefined;
        if (script === undefined) throw error;
        const viaShell = { ...launch, command: "/bin/sh", args: [script, ...launch.args] };
        return { ok: true, child: spawnBun(spec, viaShell, marker) };
      }
    }
    return windowsExit(await spawnNode(spec, launch, marker));
  } catch (error) {
    return { ok: false, reason: startFailureText(spec, error) };
  }
}

/** `env` with `marker` added (Deno merges it over the host's environment itself). */
function withMarker(env: Record<string, string> | undefined, marker: TreeMarker): Record<string, string> {
  const marked: Record<string, string> = Object.create(null);
  const given = env ?? {};
  for (const name of Object.keys(given)) marked[name] = given[name];
  marked[marker.name] = marker.value;
  return marked;
}

/** How Deno starts the child. */
interface DenoStart {
  /**
   * `"marked"`: plainly, the tree found by its marker; `"direct"`: `detached` on POSIX (its own group);
   * `"setsid"`: through the setsid launcher (its own group, without a fork).
   */
  via: "marked" | "direct" | "setsid";
  /** The marker in the child's environment, whichever way it starts (null where markers do not work). */
  marker: TreeMarker | null;
}

/**
 * {@linkcode LiveChild.killReached} for `tree`: a kill through the tool's own handle (on Windows under Bun and
 * Node, under Deno with a partial --allow-run) that the tool's exit does not show ended it is not said to have
 * reached it.
 */
function reachOf(tree: Tree): KillReach | undefined {
  if (exitedAlone(tree)) return "none";
  return tree.reach === "tool" && tree.exit !== undefined ? ownKillReach(tree.exit) : tree.reach;
}

/**
 * Linux: whether the tool had exited by itself (unreaped) when the guard came to end its tree, and the tree's
 * markers led to no other process: the guard reached nothing, though its signals to the zombie succeeded.
 */
function exitedAlone(tree: Tree): boolean {
  if (tree.reach !== undefined || !tree.exited || tree.members === undefined) return false;
  for (const pid of tree.members) if (pid !== tree.pid) return false;
  return true;
}

/** {@linkcode LiveChild.killFound} for `tree`: a zombie tool, all a kill met, was no live process. */
function foundOf(tree: Tree): boolean {
  return tree.found === true && !exitedAlone(tree);
}

/** {@linkcode LiveChild.treeNote} for `tree`, calling the child `owner`. */
function treeNote(tree: Tree, owner: TreeOwner = "tool"): string | undefined {
  const reach = reachOf(tree);
  if (reach !== undefined) {
    if (isWindows) {
      return tree.noTaskkill ? noTaskkillNote(runtimeName, reach === "none", owner) : taskkillGoneNote(owner);
    }
    return tree.reach === undefined ? exitedAloneNote(owner) : PARTIAL_RUN_NOTE;
  }
  if (isWindows) return TASKKILL_TREE_NOTE;
  const note = ofSignalledTree(tree);
  if (tree.exited) return exitedTreeNote(note, owner);
  // Where a zombie cannot be seen, the exit tells: a code, or a signal the kill never sends, was the tool's own
  // (it had exited first, or left on a SIGTERM it caught: not "by itself"), though its group was signalled and
  // may have held more.
  const ownExit = tree.exited === null && tree.exit !== undefined && ownKillReach(tree.exit) === "none";
  return ownExit ? exitedTreeNote(note, owner, false) : note;
}

/**
 * The tree note where the tool itself had exited first (not yet reaped): {@linkcode EXITED_NOTE} alone, or
 * after `note` (what may still be running), which comes first as the graver: classify cuts a tree note at 200
 * characters, and a cut must take the lesser part. Every note fits whole with the exit said (tests/tree_note_cut_test.ts).
 * Where a zombie cannot be seen (`seen` false: macOS, Deno without --allow-all) the tool's exit says only that
 * it was its own, not the kill's ({@linkcode EXITED_ITSELF_NOTE}): not when, nor why (it may have exited first,
 * or on a SIGTERM it caught, then with a code of its choosing).
 *
 * @param note What {@linkcode treeNote} says of the signalled tree; undefined: nothing was missed.
 * @param owner What the note calls the process started (the relay's is the server).
 * @param seen Whether the exit was seen before the guard's first signal (a zombie), not told by the exit.
 * @returns The note to give.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXITED_NOTE, exitedTreeNote, UNSIGNALLED_NOTE } from "./runtime.ts";
 *
 * assert.equal(exitedTreeNote(undefined), EXITED_NOTE);
 * assert.match(exitedTreeNote(UNSIGNALLED_NOTE), /may still be running, and the tool had already exited$/);
 * assert.equal(exitedTreeNote(undefined, "server"), "but the server itself had already exited");
 * assert.equal(exitedTreeNote(undefined, "tool", false), "but the tool's exit was its own");
 * ```
 */
export function exitedTreeNote(note: string | undefined, owner: TreeOwner = "tool", seen = true): string {
  const exited = seen ? `the ${owner} had already exited` : `the ${owner}'s exit was its own`;
  if (note !== undefined) return `${note}, and ${exited}`;
  return seen ? `but the ${owner} itself had already exited` : `but ${exited}`;
}

/** What {@linkcode treeNote} says of a POSIX tree that was signalled, beside whether the tool had exited. */
function ofSignalledTree(tree: Tree): string | undefined {
  // One note, the graver first: a process left running outranks one found another way.
  if (tree.unsignalled) return UNSIGNALLED_NOTE;
  if (tree.unread) return UNREAD_NOTE;
  if (!isLinux || (tree.marker !== null && treeMarkersWork())) return undefined;
  // Said after "the guard ended the process tree, " (classify says that once, whatever ended it). Every
  // spawn carries the marker where markers work, so here they do not, and why is said.
  return groupOnlyNote(whyNoMarkers());
}

/**
 * What {@linkcode treeNote} says where the tree was found by its process group only, `why` being why
 * ({@linkcode whyNoMarkers}).
 *
 * @param why Why the tree's markers could not be read.
 * @returns The note, ending with what may have survived.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { groupOnlyNote } from "./runtime.ts";
 *
 * assert.match(groupOnlyNote("/proc is not readable here"), /^found by its process group only \(\/proc/);
 * ```
 */
export function groupOnlyNote(why: string): string {
  return `found by its process group only (${why}): a descendant that left the group may have survived`;
}

/**
 * Said after "the guard ended the process tree, " where the tool itself had exited first (not yet reaped):
 * alone, it says nothing of a part of the tree missed.
 */
export const EXITED_NOTE: string = exitedTreeNote(undefined);

/**
 * Said where the tool's exit, not a zombie seen in `/proc` (macOS, Deno without --allow-all), shows the kill did
 * not end it: an exit code, or a signal the kill never sends.
 */
export const EXITED_ITSELF_NOTE: string = exitedTreeNote(undefined, "tool", false);

/**
 * Said after "the guard could not end the process tree, " where the process started had exited first (not yet
 * reaped) and its marker led to no process it started.
 *
 * @param owner What the note calls the process started (the relay's is the server).
 * @returns The note.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exitedAloneNote } from "./runtime.ts";
 *
 * assert.match(exitedAloneNote("server"), /^as the server had already exited/);
 * ```
 */
export function exitedAloneNote(owner: TreeOwner = "tool"): string {
  return `as the ${owner} had already exited and no process it started was found running`;
}

/** {@linkcode exitedAloneNote} of a tool. */
export const EXITED_ALONE_NOTE: string = exitedAloneNote();

/**
 * Said after "the guard ended the process tree, " where a process of it did not let its environment (and so
 * its marker) be read: it was found by its parent or its group instead, which misses a descendant of it that
 * left the group once its parent had exited.
 */
export const UNREAD_NOTE: string =
  "though a process in it with an unreadable environment (set-uid or non-dumpable) " +
  "was found only by parent or group: a descendant that left both may still be running";

/** Said after "the guard ended the process tree, " where a process of it was not ours to signal (EPERM). */
export const UNSIGNALLED_NOTE =
  "though a process in it could not be signalled (not ours to signal) and may still be running";

/**
 * Why a kill reached the tool at most, said after how far it reached ("the guard ended the tool but not its
 * process tree, " or "the guard could not end the process tree, "), with what to grant.
 */
export const PARTIAL_RUN_NOTE: string =
  "as Deno's run permission is partial: signalling a process needs --allow-run for " +
  "every program (no list), so processes it started may still be running";

/**
 * The process group the child leads (its pid), or null where it leads none, or where that number has since
 * been given to another process: the kernel keeps a group's number from reuse only while a member lives, so
 * once the child is reaped and a process has its pid, a group by that number is that process's, not the
 * tree's (another guard's detached tool, say), and is not signalled.
 */
function groupOf(tree: Tree): number | null {
  if (!tree.grouped) return null;
  return tree.reaped && pidTaken(tree.pid) ? null : tree.pid;
}

/** Whether a process has pid `pid` (one not ours to signal counts). Signal 0 sends nothing. */
function pidTaken(pid: number): boolean {
  try {
    if (denoApi) denoApi.kill(pid, 0);
    else nodeProcess()?.kill(pid, 0);
    return true;
  } catch (error) {
    const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
    return name === "PermissionDenied" || code === "EPERM";
  }
}

/** {@linkcode LiveChild.treeRunning} for `tree`. */
function treeRunning(tree: Tree): boolean {
  if (isWindows) return false;
  if (!tree.reaped) return true;
  if (tree.own !== undefined && !maySignal()) return false; // (nothing is left that a kill could reach)
  tree.members?.delete(tree.pid); // (its pid is no parent link of the tree's any more: see endTree)
  const group = groupOf(tree);
  const marked = tree.marker === null ? undefined : markedRunning(tree.marker, group, tree.members ?? []);
  // A group counts its zombies too: the markers, which do not, are asked first where they work.
  return marked ?? (group !== null && signalGroup(group, 0));
}

/** {@linkcode LiveChild.treeState} for `tree`: only its marker finds the processes. */
function stateOfTree(tree: Tree, look: Pick<TreeLookOptions, "known" | "openPipes" | "gap"> = {}): TreeLook {
  if (tree.marker === null) return { state: null, pids: [] };
  return treeState(tree.marker, { ...look, ours: () => (tree.ours ??= ourEnds()) });
}

function spawnDeno(spec: SpawnSpec, launch: Launch, { via, marker }: DenoStart): LiveChild {
  const child = new denoApi!.Command(launch.command, {
    args: [...launch.args],
    cwd: spec.cwd,
    env: spec.env,
    clearEnv: spec.clearEnv ?? false,
    stdin: spec.stdin === null ? "null" : "piped",
    stdout: "piped",
    stderr: stderrPiped(spec) ? "piped" : spec.stderr === "inherit" ? "inherit" : "null",
    detached: !isWindows && via === "direct",
    windowsRawArguments: launch.rawArguments,
  }).spawn();
  let stdin: ByteSink | null = null;
  if (spec.stdin === "piped") stdin = webSink(child.stdin);
  else if (spec.stdin) {
    const writer = child.stdin.getWriter();
    writer.write(spec.stdin).then(() => writer.close()).catch(() => {});
  }
  const tree: Tree = {
    pid: child.pid,
    grouped: via !== "marked" && !isWindows,
    marker,
    reaped: false,
    own: (signal) => child.kill(signal),
  };
  const exited = child.status.then(
    (s) => {
      tree.reaped = true;
      const exit = s.signal ? { code: null, signal: s.signal } : { code: s.code, signal: null };
      // POSIX: where /proc/PID/stat, which shows a tool that had exited first, is refused (it needs
      // --allow-all: a partial --allow-run, or a full one without -A), the exit tells instead. (On Windows Deno's
      // kill ends the tool with code 1, which tells nothing.)
      if (!isWindows) tree.exit = exit;
      return exit;
    },
    () => {
      tree.reaped = true;
      return { code: null, signal: null };
    },
  );
  const started: LiveChild = {
    pid: child.pid,
    stdin,
    stdout: byteStreamSource(child.stdout),
    stderr: stderrPiped(spec) ? byteStreamSource(child.stderr) : ENDED,
    exited,
    killTree: treeKiller(tree),
    treeNote: (owner) => treeNote(tree, owner),
    killReached: () => reachOf(tree),
    killFound: () => foundOf(tree),
    treeState: (look) => stateOfTree(tree, look),
    treeRunning: () => treeRunning(tree),
  };
  if (via === "setsid") {
    started.startFailure = (exit, wroteStdout, stderr) => setsidFailure(spec, exit, wroteStdout, stderr);
  }
  return started;
}

// ---------------------------------------------------------------------------------------------------------
// Deno on POSIX where /proc cannot be read: the child's own process group without `detached`
// ---------------------------------------------------------------------------------------------------------

// `detached: true` makes Deno fork() its whole address space on the event-loop thread instead of using
// posix_spawn(): on a Linux VM that made runTool ~1.4x slower per call and 20 concurrent calls ~2x slower
// (scripts/measure_guard.ts). Spawned without `detached`, `setsid` is not a process-group leader, so it calls setsid() and execs
// the tool in place (no fork): the pid we hold becomes the tool's, its session and its process group id,
// just as `detached` gives. Used only when a one-time probe confirms exactly that, when `run` is granted
// outright (so the launcher widens no permission) and when the tool and cwd pass the checks the spawn would
// make; otherwise, and on any error starting the launcher, the `detached` spawn runs and reports as before.
const SETSID_CANDIDATES: readonly string[] = ["/usr/bin/setsid", "/bin/setsid"];
let setsidFound: Promise<string | null> | undefined;

let terminal: boolean | undefined;

/**
 * Whether this Deno host has a controlling terminal a child in its session could open: a standard stream
 * is a terminal, or `/dev/tty` opens. Where reading `/dev/tty` is not granted it says yes (the safe answer:
 * the child then gets its own session), and asking never prompts. Probed once.
 */
function hostHasTerminal(): boolean {
  if (terminal !== undefined) return terminal;
  const deno = denoApi!;
  try {
    if (deno.stdin.isTerminal() || deno.stdout.isTerminal() || deno.stderr.isTerminal()) {
      return terminal = true;
    }
    if (deno.permissions.querySync({ name: "read", path: "/dev/tty" }).state !== "granted") {
      return terminal = true;
    }
    deno.openSync("/dev/tty", { read: true }).close();
    return terminal = true;
  } catch {
    return terminal = false; // ENXIO: no controlling terminal
  }
}

async function spawnDenoViaSetsid(spec: SpawnSpec, marker: TreeMarker | null): Promise<LiveChild | null> {
  if (!runGrantedOutright()) return null; // the launcher would widen a partial permission
  const setsid = await (setsidFound ??= findSetsid());
  if (setsid === null || !preflightSetsid(spec)) return null;
  try {
    const launch = { command: setsid, args: ["--", spec.command, ...spec.args], rawArguments: false };
    return spawnDeno(spec, launch, { via: "setsid", marker });
  } catch {
    return null; // the direct spawn will report the real problem in its own words
  }
}

/**
 * Whether Deno may run every program, so that the setsid launcher, which execs the tool itself, widens no
 * permission: not with an allow list (`--allow-run=...`, state "prompt") nor a deny list (`--deny-run=...`,
 * "granted" but partial), which `Deno.kill` ignores ({@linkcode maySignal}) but a launched tool would escape.
 */
function runGrantedOutright(): boolean {
  const status = runPermission();
  return status?.state === "granted" && status.partial !== true;
}

/**
 * Whether the setsid launcher may be tried for `spec`: on POSIX, and only when stderr is piped, because
 * setsid's own report of a failed exec arrives there and is what tells a failure to start from the tool's
 * exit (a long-lived child whose stderr is shared, such as an MCP server, starts `detached`).
 */
function canUseSetsid(spec: SpawnSpec): boolean {
  return !isWindows && stderrPiped(spec);
}

/**
 * Given how a child started through setsid ended, whether it wrote to stdout and its stderr: why setsid could
 * not start the tool, or null when the tool itself ran (its own exit 126/127 stays its own).
 */
function setsidFailure(
  spec: SpawnSpec,
  exit: ChildExit,
  wroteStdout: boolean,
  stderr: Uint8Array,
): string | null {
  if (wroteStdout || (exit.code !== 126 && exit.code !== 127)) return null;
  const text = new TextDecoder().decode(stderr).trim();
  if (!text.startsWith("setsid: ") || text.includes("\n")) return null;
  // Only setsid's own one-line report on this very command (util-linux, busybox wording), or a tool that
  // no longer passes the checks, is a failure to start; a tool's own exit 126/127 stays an exit.
  const own = text.startsWith(`setsid: failed to execute ${spec.command}: `) ||
    text.startsWith(`setsid: can't execute '${spec.command}': `);
  if (!own && preflightSetsid(spec)) return null;
  // Worded as a direct spawn's failure would be: the system's message ends the line.
  const code = Object.entries(SYSTEM_MESSAGES).find(([, message]) => text.endsWith(`: ${message}`))?.[0];
  return code === undefined
    ? text.slice("setsid: ".length)
    : startFailureText(spec, Object.assign(new Error(text.slice("setsid: ".length)), { code }));
}

/** The system's messages (`strerror`) for the codes {@linkcode startFailureText} words, as setsid prints them. */
const SYSTEM_MESSAGES: Record<string, string> = {
  ENOENT: "No such file or directory",
  ENOTDIR: "Not a directory",
  EACCES: "Permission denied",
  ENOEXEC: "Exec format error",
};

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

function spawnBun(spec: SpawnSpec, launch: Launch, marker: TreeMarker | null): LiveChild {
  const proc = bunApi!.spawn([launch.command, ...launch.args], {
    cwd: spec.cwd,
    env: spawnEnv(spec, marker),
    stdin: spec.stdin === null ? "ignore" : "pipe",
    stdout: "pipe",
    stderr: stderrPiped(spec) ? "pipe" : spec.stderr,
    detached: !isWindows,
    windowsVerbatimArguments: launch.rawArguments,
    windowsHide: true,
  });
  // Windows: Bun keeps only the low 8 bits of the exit code (oven-sh/bun#33720); read the full one.
  const watch = isWindows ? watchWindowsExitCode(proc.pid) : null;
  let stdin: ByteSink | null = null;
  if (spec.stdin === "piped") stdin = proc.stdin ? bunSink(proc.stdin) : null;
  else if (spec.stdin && proc.stdin) {
    try {
      proc.stdin.write(spec.stdin);
      Promise.resolve(proc.stdin.end()).catch(() => {});
    } catch {
      // The tool closed stdin early (EPIPE): it did not want the input.
    }
  }
  const tree: Tree = {
    pid: proc.pid,
    grouped: !isWindows,
    marker,
    reaped: false,
    // Bun's kill of a tool that exited unreaped says nothing (nor, under Wine, does its exit): Windows' code does.
    own: (signal) => watch?.exited() ? false : void proc.kill(signal),
  };
  const reaped = () => (tree.reaped = true);
  return {
    pid: proc.pid,
    stdin,
    stdout: webSource(proc.stdout),
    stderr: proc.stderr ? webSource(proc.stderr) : ENDED,
    exited: proc.exited.then(
      () => {
        reaped();
        const code = watch ? watch.full(proc.exitCode) : proc.exitCode; // (releases the handle either way)
        const exit = proc.signalCode ? { code: null, signal: proc.signalCode } : { code, signal: null };
        tree.exit = exit;
        return exit;
      },
      () => (reaped(), { code: null, signal: null }),
    ),
    killTree: treeKiller(tree),
    treeNote: (owner) => treeNote(tree, owner),
    killReached: () => reachOf(tree),
    killFound: () => foundOf(tree),
    treeState: (look) => stateOfTree(tree, look),
    treeRunning: () => treeRunning(tree),
  };
}

interface NodeChildProcess {
  pid?: number;
  stdin: NodeWritable | null;
  stdout: NodeReadable;
  stderr: NodeReadable | null;
  kill(signal?: string): boolean;
  on(event: string, handler: (...a: unknown[]) => void): unknown;
  once(event: string, handler: (...a: unknown[]) => void): unknown;
}

async function spawnNode(spec: SpawnSpec, launch: Launch, marker: TreeMarker | null): Promise<SpawnAttempt> {
  const cp = nodeBuiltin<{ spawn(c: string, a: string[], o: unknown): NodeChildProcess }>(
    "node:child_process",
  );
  const proc = cp.spawn(launch.command, [...launch.args], {
    cwd: spec.cwd,
    env: spawnEnv(spec, marker),
    stdio: [spec.stdin === null ? "ignore" : "pipe", "pipe", stderrPiped(spec) ? "pipe" : spec.stderr],
    detached: !isWindows,
    windowsVerbatimArguments: launch.rawArguments,
    windowsHide: true,
    shell: false,
  });
  const tree: Tree = {
    pid: proc.pid ?? -1,
    grouped: !isWindows,
    marker,
    reaped: false,
    own: (signal) => proc.kill(signal),
  };
  const exited = new Promise<ChildExit>((resolve) => {
    proc.on("exit", (code, signal) => {
      tree.reaped = true;
      const exit = signal ? { code: null, signal: String(signal) } : { code: code as number, signal: null };
      tree.exit = exit;
      resolve(exit);
    });
  });
  const started = await new Promise<string | null>((resolve) => {
    proc.once("spawn", () => resolve(null));
    proc.once("error", (error) => resolve(startFailureText(spec, error)));
  });
  if (started !== null || proc.pid === undefined) return { ok: false, reason: started ?? "no pid" };
  let stdin: ByteSink | null = null;
  if (spec.stdin === "piped") stdin = proc.stdin ? nodeSink(proc.stdin) : null;
  else if (spec.stdin && proc.stdin) {
    proc.stdin.on("error", () => {});
    proc.stdin.write(spec.stdin);
    proc.stdin.end();
  }
  return {
    ok: true,
    child: {
      pid: proc.pid,
      stdin,
      stdout: nodeSource(proc.stdout),
      stderr: proc.stderr ? nodeSource(proc.stderr) : ENDED,
      exited,
      killTree: treeKiller(tree),
      treeNote: (owner) => treeNote(tree, owner),
      killReached: () => reachOf(tree),
      killFound: () => foundOf(tree),
      treeState: (look) => stateOfTree(tree, look),
      treeRunning: () => treeRunning(tree),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Ending live trees when the host goes away
// ---------------------------------------------------------------------------------------------------------

const live = new Map<number, LiveChild>();
const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
let stopListening: () => void = () => {};

/**
 * The exit status a shell expects of a command that one of {@linkcode INTERRUPT_SIGNALS} ended: 128 plus
 * the signal's number (130 for SIGINT).
 */
export function interruptStatus(signal: string): number {
  return 128 + (signalNumbers[signal] ?? 0);
}

/** The signals that interrupt a host: SIGINT, and on POSIX also SIGTERM and SIGHUP. */
export const INTERRUPT_SIGNALS: readonly string[] = isWindows ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];

/** How many {@linkcode onInterrupt} listeners the host has: while any, an interrupt is theirs to act on. */
let hostListeners = 0;

/**
 * Call `handler` with the signal's name whenever the host receives one of {@linkcode INTERRUPT_SIGNALS}.
 * While anyone listens, such a signal no longer ends the host by itself: live trees are still ended at
 * once, and the listener decides when the host exits.
 *
 * @param handler Told which signal arrived.
 * @returns The function that stops listening.
 */
export function onInterrupt(handler: (signal: string) => void): () => void {
  const stop = listen(handler);
  hostListeners++;
  let listening = true;
  return () => {
    if (listening) hostListeners--;
    listening = false;
    stop();
  };
}

/** Adds `handler` for each of {@linkcode INTERRUPT_SIGNALS}; returns the function that removes them. */
function listen(handler: (signal: string) => void): () => void {
  const added: [string, () => void][] = [];
  for (const name of INTERRUPT_SIGNALS) {
    const listener = () => handler(name);
    try {
      if (denoApi) denoApi.addSignalListener(name, listener);
      else nodeProcess()?.on(name, listener);
      added.push([name, listener]);
    } catch {
      // This platform does not support listening for this signal.
    }
  }
  return () => {
    for (const [name, listener] of added.splice(0)) {
      try {
        if (denoApi) denoApi.removeSignalListener(name, listener);
        else nodeProcess()?.off(name, listener);
      } catch {
        // ignore
      }
    }
  };
}

function killAllLive(): void {
  for (const child of live.values()) {
    // The host is going away: there is no time for a grace period, nor for a taskkill in the background.
    child.killTree("SIGKILL", { wait: true });
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

/** The host was interrupted: end every live tree, then exit as the signal would have. */
function onHostInterrupt(name: string): void {
  killAllLive();
  uninstallHandlers();
  // Adding a listener suppressed the default action (terminate), so restore it: exit as the signal would,
  // unless the host listens for it itself (then it decides; under Deno, whose listeners cannot be counted,
  // one added through onInterrupt).
  if (hostListeners > 0) return;
  if (denoApi) denoApi.exit(interruptStatus(name));
  else {
    const host = nodeProcess();
    if (!host || host.listenerCount(name) === 0) host?.exit(interruptStatus(name));
  }
}

function installHandlers(): void {
  handlersInstalled = true;
  stopListening = listen(onHostInterrupt);
  if (denoApi) {
    globalThis.addEventListener("unload", onHostExit);
    globalThis.addEventListener("error", onHostCrash);
    globalThis.addEventListener("unhandledrejection", onHostCrash);
  } else nodeProcess()?.on("exit", onHostExit);
}

function uninstallHandlers(): void {
  handlersInstalled = false;
  stopListening();
  if (denoApi) {
    globalThis.removeEventListener("unload", onHostExit);
    globalThis.removeEventListener("error", onHostCrash);
    globalThis.removeEventListener("unhandledrejection", onHostCrash);
  } else nodeProcess()?.off("exit", onHostExit);
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

/** Remember a live child's process tree so it is ended if the host exits or is interrupted first. */
export function trackLive(child: LiveChild): void {
  if (!handlersInstalled) installHandlers();
  live.set(child.pid, child);
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

/** `Atomics.waitAsync`, which the TypeScript library of every runtime may not declare yet. */
type WaitAsync = (
  cell: Int32Array,
  index: number,
  value: number,
  ms: number,
) => { async: boolean; value: Promise<string> | string };

/** The cell `unrefTimeout` waits on under Deno: never written, so every wait ends by its timeout. */
let timerCell: Int32Array | undefined;

/** A timer that does not keep the host alive. */
export function unrefTimeout(fn: () => void, ms: number): void {
  const wait = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;
  if (denoApi && typeof wait === "function") {
    // Deno's setTimeout is node:timers' (a Timeout object, not a number): its first call loads that module,
    // about 4 ms of a one-shot `toolguard run`. A timed-out `Atomics.waitAsync` is a timer that Deno's event
    // loop does not wait for, as this one must not be (a wait of 0 would end at once, without a promise).
    const r = wait(timerCell ??= new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(ms, 1));
    if (typeof r.value !== "string") r.value.then(fn);
    else queueMicrotask(fn);
    return;
  }
  const id = setTimeout(fn, ms) as unknown;
  (id as { unref?: () => void }).unref?.();
}

/**
 * Start a process that shares our stdout/stderr and is not waited for (used by the fake tool to leave a
 * descendant holding the pipes). Returns its pid.
 */
export function spawnInherited(command: string, args: readonly string[]): number {
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
  const cp = nodeBuiltin<{ spawn(c: string, a: string[], o: unknown): NodeChildProcess & { unref(): void } }>(
    "node:child_process",
  );
  const proc = cp.spawn(command, [...args], { stdio: ["ignore", "inherit", "inherit"] });
  proc.on("error", () => {});
  proc.unref();
  return proc.pid ?? -1;
}

// ---------------------------------------------------------------------------------------------------------
// This process's own stdin and stdout (for a relay that speaks over them)
// ---------------------------------------------------------------------------------------------------------

interface HostStreams {
  stdin: AsyncIterable<Uint8Array>;
  stdout: {
    write(bytes: Uint8Array, done: (error?: Error | null) => void): unknown;
    on(event: string, handler: (...a: unknown[]) => void): unknown;
  };
}

function hostStreams(): HostStreams {
  const streams = nodeProcess() as Partial<HostStreams> | undefined;
  if (!streams?.stdin || !streams.stdout) throw new Error("this runtime has no process.stdin/stdout");
  return streams as HostStreams;
}

/**
 * This process's stdin as a stream of bytes (the Node-compatible `process.stdin` that Deno, Bun and Node
 * all provide).
 *
 * @returns The bytes, in chunks as they arrive.
 */
export function hostInput(): AsyncIterable<Uint8Array> {
  return hostStreams().stdin;
}

/**
 * A writer for this process's stdout: each write resolves once the bytes are handed to the OS and rejects
 * when stdout is gone (EPIPE), so a reader that went away is noticed instead of crashing the process.
 *
 * @returns The writer.
 */
export function hostOutput(): (bytes: Uint8Array) => Promise<void> {
  const stdout = hostStreams().stdout;
  stdout.on("error", () => {}); // EPIPE surfaces through the write callback below
  return (bytes) =>
    new Promise<void>((resolve, reject) => {
      stdout.write(bytes, (error) => (error ? reject(error) : resolve()));
    });
}
