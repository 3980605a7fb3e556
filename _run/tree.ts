/**
 * Finding a child's process tree at kill time (Linux): the child is started with an environment variable of
 * its own, a {@linkcode TreeMarker}, which every descendant inherits, whatever process group or session it
 * moves to. Ending the tree reads `/proc/PID/environ` of every process and signals each one that carries the
 * marker. Nothing is paid on spawn beyond one more environment variable; the scan (a few milliseconds for a
 * hundred processes) is paid only when a tree is ended.
 *
 * The same scan tells what a tree left running after the tool exited is doing ({@linkcode treeState}): the
 * states of its threads in `/proc/PID/task/TID/stat` tell a daemon asleep from a writer starved or stopped.
 *
 * A descendant that clears its environment (`env -i`) or rewrites it in place carries no marker; a process
 * whose environment we may not read (another user's, a set-uid program) is not seen. Where the process group
 * is available too, the runtime signals it as well.
 *
 * @module
 */

interface DenoFs {
  build: { os: string };
  pid: number;
  readDirSync(path: string): Iterable<{ name: string }>;
  readFileSync(path: string): Uint8Array;
  kill(pid: number, signal: string): void;
  permissions: { querySync(descriptor: { name: string; path?: string }): { state: string } };
}
interface NodeFs {
  readdirSync(path: string): string[];
  readFileSync(path: string): Uint8Array;
}
interface NodeProcess {
  platform: string;
  pid: number;
  kill(pid: number, signal: string): boolean;
  getBuiltinModule?(id: string): unknown;
}

const denoApi = (globalThis as { Deno?: DenoFs }).Deno;
// Read on use, never at load: under Deno the first touch of `globalThis.process` loads the Node layer.
const nodeProcess = (): NodeProcess | undefined => (globalThis as { process?: NodeProcess }).process;

/** The environment variable that marks one child's tree: `name=value` in each of its processes. */
export interface TreeMarker {
  /** The variable's name, the same for every child of this host. */
  name: string;
  /** Its value, this child's own. */
  value: string;
}

/** How to read `/proc` under this runtime, or null where it cannot be read. Each call may throw. */
interface ProcReader {
  /** The names in a folder of `/proc` (`/proc` itself, `/proc/PID/task`). */
  list(path: string): string[];
  /** A file of `/proc`: `/proc/PID/environ` (NUL-separated `NAME=value`, empty for a zombie), `.../stat`. */
  read(path: string): Uint8Array;
  /** Our own pid, never signalled. */
  self: number;
}

let reader: ProcReader | null | undefined;

function procReader(): ProcReader | null {
  if (reader !== undefined) return reader;
  reader = null;
  try {
    const candidate = denoApi ? denoReader() : nodeReader();
    // Our own environment must be readable, or the scan would see nothing (listing /proc waits for a kill).
    if (candidate && candidate.read(`/proc/${candidate.self}/environ`).length > 0) reader = candidate;
  } catch {
    // No /proc, or not readable here: the process group stays the only way to find the tree.
  }
  return reader;
}

function denoReader(): ProcReader | null {
  const deno = denoApi!;
  if (deno.build.os !== "linux") return null;
  // Without read access to /proc, asking would prompt or throw: the group path runs instead.
  if (deno.permissions.querySync({ name: "read", path: "/proc" }).state !== "granted") return null;
  return {
    self: deno.pid,
    list: (path) => {
      const out: string[] = [];
      for (const entry of deno.readDirSync(path)) out.push(entry.name);
      return out;
    },
    read: (path) => deno.readFileSync(path),
  };
}

function nodeReader(): ProcReader | null {
  const host = nodeProcess();
  if (!host || host.platform !== "linux") return null;
  const fs = host.getBuiltinModule?.("node:fs") as NodeFs | undefined;
  if (!fs) return null;
  return {
    self: host.pid,
    list: (path) => fs.readdirSync(path),
    read: (path) => fs.readFileSync(path),
  };
}

function isPid(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 48 && c <= 57;
}

/** Whether trees can be found by marker here (Linux with a readable `/proc`). Probed once. */
export function treeMarkersWork(): boolean {
  return procReader() !== null;
}

// A random part makes the names of different hosts distinct (pid namespaces repeat pids), so a nested guard
// adds its marker beside ours; the counter makes each child's value distinct. One name per host, not one per
// child: every environment built for a child then has the same keys, which JavaScriptCore and V8 copy along
// a known shape (a fresh key per child made a new one each time: about 20 µs per spawn on Bun).
let hostName: string | undefined;
let count = 0;

/** A fresh marker for one child. */
export function newTreeMarker(): TreeMarker {
  hostName ??= `TOOLGUARD_TREE_${Math.random().toString(36).slice(2, 10)}`;
  return { name: hostName, value: String(++count) };
}

/** The `NAME=value` entry of `marker`, as it appears in `/proc/PID/environ`. */
function entryOf(marker: TreeMarker): Uint8Array {
  return new TextEncoder().encode(`${marker.name}=${marker.value}`);
}

/** The pids (as found in `/proc`) of live processes whose environment carries `needle` (`NAME=value`). */
function findMarked(proc: ProcReader, needle: Uint8Array): number[] {
  const found: number[] = [];
  for (const pid of proc.list("/proc")) {
    if (isPid(pid) && carries(proc, Number(pid), needle)) found.push(Number(pid));
  }
  return found.filter((pid) => pid !== proc.self);
}

/** Whether process `pid` is alive and its environment carries `needle` (a zombie's is empty). Never throws. */
function carries(proc: ProcReader, pid: number, needle: Uint8Array): boolean {
  try {
    return holdsEntry(proc.read(`/proc/${pid}/environ`), needle);
  } catch {
    return false; // gone, or not ours to read (EACCES)
  }
}

/** Whether the NUL-separated `environ` holds the entry `needle` (`NAME=value`) whole. Exported for tests. */
export function holdsEntry(environ: Uint8Array, needle: Uint8Array): boolean {
  const last = environ.length - needle.length;
  let i = 0;
  while (i <= last) {
    let j = 0;
    while (j < needle.length && environ[i + j] === needle[j]) j++;
    // The entry must end here: value 1 is not value 12.
    if (j === needle.length && (i + j === environ.length || environ[i + j] === 0)) return true;
    const end = environ.indexOf(0, i);
    if (end < 0) return false;
    i = end + 1;
  }
  return false;
}

function send(pid: number, signal: "SIGTERM" | "SIGKILL"): void {
  try {
    if (denoApi) denoApi.kill(pid, signal);
    else nodeProcess()?.kill(pid, signal);
  } catch {
    // Gone meanwhile, or not ours to signal.
  }
}

/** Rounds of scanning for SIGKILL: processes forked while a round was signalling are found by the next. */
const MAX_KILL_ROUNDS = 8;

/** Which processes {@linkcode signalMarked} adds to or leaves out of those carrying the marker. */
export interface SignalMarkedOptions {
  /** A pid to signal as well, found or not (the child itself while unreaped); null for none. */
  include?: number | null;
  /** A process group already signalled: its members are not signalled twice; null for none. */
  skipGroup?: number | null;
}

/**
 * Signal every live process that carries `marker`. SIGTERM scans once (the SIGKILL that follows scans
 * again); SIGKILL scans until a round finds no process it has not signalled yet, so a descendant forked
 * meanwhile is caught too. Never throws.
 *
 * @param marker The child's marker.
 * @param signal The signal to send.
 * @param options A pid to add, a group to leave out.
 * @returns How many processes were signalled, or -1 when `/proc` cannot be read here.
 */
export function signalMarked(
  marker: TreeMarker,
  signal: "SIGTERM" | "SIGKILL",
  { include = null, skipGroup = null }: SignalMarkedOptions = {},
): number {
  const proc = procReader();
  if (proc === null) return -1;
  const needle = entryOf(marker);
  const seen = new Set<number>();
  let signalled = 0;
  const hit = (pid: number) => {
    seen.add(pid);
    if (skipGroup !== null && groupOf(proc, pid) === skipGroup) return;
    send(pid, signal);
    signalled++;
  };
  if (include !== null) hit(include);
  const rounds = signal === "SIGKILL" ? MAX_KILL_ROUNDS : 1;
  for (let round = 0; round < rounds; round++) {
    let fresh = 0;
    try {
      for (const pid of findMarked(proc, needle)) {
        if (seen.has(pid)) continue;
        fresh++;
        hit(pid);
      }
    } catch {
      break; // /proc went away under us: what was signalled stays signalled
    }
    if (fresh === 0) break;
  }
  return signalled;
}

/**
 * What the processes of a tree are doing, by the states of their threads: `"busy"` when one may run (R:
 * runnable but not given the CPU yet; D: waiting on the disk, as a page fault under memory pressure does),
 * else `"stopped"` when one is stopped (T, t: by a signal or a debugger), else `"quiet"` (every thread
 * asleep: a daemon waiting for work).
 */
export type TreeState = "busy" | "stopped" | "quiet";

/** What {@linkcode treeState} saw of a tree. */
export interface TreeLook {
  /**
   * The busiest state found, or null where `/proc` cannot be read or no process carries the marker (one that
   * cleared its environment).
   */
  state: TreeState | null;
  /** The pids found carrying the marker: given back to {@linkcode treeState}, they make a recheck cheap. */
  pids: readonly number[];
}

/**
 * What the live processes carrying `marker` are doing. Asked when the pipes have gone quiet after the tool
 * exited while one of them still holds stdout: a busy or stopped one may write more; a sleeping one is a
 * daemon. Which of them holds stdout is not asked: Bun's pipes are socket pairs, whose two ends `/proc` does
 * not link, so a busy process whose own output goes elsewhere counts too (the result then says it may be
 * incomplete: the cautious side). Never throws.
 *
 * Finding the tree reads the environment of every process on the host; a recheck given the pids of the last
 * look reads only theirs, and only a busy verdict is taken from it. A process one of them forked since is
 * not among them, so when none of them is busy any more the whole of `/proc` is read again before the tree
 * is called asleep or stopped: a parent that now waits for a busy child must not read as a daemon.
 *
 * @param marker The child's marker.
 * @param known The pids of the last look, if any.
 * @returns The busiest state found and the pids it was found in.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newTreeMarker, treeState } from "./tree.ts";
 *
 * // No process carries a fresh marker: nothing is known of its tree.
 * assert.deepEqual(treeState(newTreeMarker()), { state: null, pids: [] });
 * ```
 */
export function treeState(marker: TreeMarker, known: readonly number[] = []): TreeLook {
  const proc = procReader();
  if (proc === null) return { state: null, pids: [] };
  const needle = entryOf(marker);
  // A pid that no longer carries the marker ended (or was reused by a stranger): it is not read.
  const still = known.filter((pid) => carries(proc, pid, needle));
  if (still.length > 0 && stateOfAll(proc, still) === "busy") return { state: "busy", pids: still };
  let pids: number[];
  try {
    pids = findMarked(proc, needle);
  } catch {
    return { state: null, pids: [] }; // /proc went away under us
  }
  return { state: stateOfAll(proc, pids), pids };
}

/** The busiest state among the processes `pids`, or null for none. */
function stateOfAll(proc: ProcReader, pids: readonly number[]): TreeState | null {
  let found: TreeState | null = null;
  for (const pid of pids) {
    const state = stateOf(proc, pid);
    // A busy process may still write: the caller waits for it, so it outranks a stopped one.
    if (state === "busy") return state;
    if (state === "stopped" || found === null) found = state;
  }
  return found;
}

/**
 * The busiest state among the threads of `pid` (its main thread may sleep while another writes). A process
 * gone meanwhile reads as quiet.
 */
function stateOf(proc: ProcReader, pid: number): TreeState {
  let stopped = false;
  let tids: string[];
  try {
    tids = proc.list(`/proc/${pid}/task`);
  } catch {
    return "quiet";
  }
  for (const tid of tids) {
    let state: string | undefined;
    try {
      state = statFields(proc, `/proc/${pid}/task/${tid}/stat`)[0];
    } catch {
      continue; // the thread ended
    }
    if (state === "R" || state === "D") return "busy";
    if (state === "T" || state === "t") stopped = true;
  }
  return stopped ? "stopped" : "quiet";
}

/** The fields of a `stat` file from the third on (state, ppid, pgrp, ...). Throws when it cannot be read. */
function statFields(proc: ProcReader, path: string): string[] {
  const stat = new TextDecoder().decode(proc.read(path));
  // The command name (field 2) may hold spaces and parentheses: count fields from the last ')'.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** The process group of `pid` (field 5 of `/proc/PID/stat`), or -1. */
function groupOf(proc: ProcReader, pid: number): number {
  try {
    return Number(statFields(proc, `/proc/${pid}/stat`)[2]);
  } catch {
    return -1;
  }
}
