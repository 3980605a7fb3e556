/**
 * Finding a child's process tree at kill time (Linux): the child is started with an environment variable of
 * its own, a {@linkcode TreeMarker}, which every descendant inherits, whatever process group or session it
 * moves to. Ending the tree reads `/proc/PID/environ` of every process and signals each one that carries the
 * marker. Nothing is paid on spawn beyond one more environment variable; the scan (a few milliseconds for a
 * hundred processes) is paid only when a tree is ended.
 *
 * The same scan tells what a tree left running after the tool exited is doing ({@linkcode treeState}): the
 * states of its threads in `/proc/PID/task/TID/stat` tell a daemon asleep from a writer starved or stopped,
 * and the links in `/proc/PID/fd` which of them still hold the tool's output pipes.
 *
 * A descendant that clears its environment (`env -i`) or rewrites it in place carries no marker; a process
 * whose environment we may not read (a set-uid or non-dumpable program) is ended where its parent chain leads
 * into the tree or it is in the tool's own group or session (`/proc/PID/stat` stays readable), and the detail
 * says so (and, where it is not ours to signal, that it may still be running). Where the process group is
 * available too, the runtime signals it as well. A process without the marker is not looked for by the pipes
 * it holds either: Linux does not say how many processes hold a pipe, finding them would read the open files
 * of every process on the host (three times the cost of a whole look, 25 ms for 130 processes), and outside
 * the tree nothing tells this child's pipes from our others (another run's, whose children hold them; our own
 * stdin, whose writer holds it; a socket next to one of ours), so a stranger would be taken for a holder, and
 * a tree still writing called quiet. Where a pipe of ours is held by no process found, every one counts.
 *
 * @module
 */

interface DenoFs {
  build: { os: string };
  pid: number;
  readDirSync(path: string): Iterable<{ name: string }>;
  readFileSync(path: string): Uint8Array;
  readLinkSync(path: string): string;
  kill(pid: number, signal: string): void;
  permissions: { querySync(descriptor: { name: string; path?: string }): { state: string } };
}
interface NodeFs {
  readdirSync(path: string): string[];
  readFileSync(path: string): Uint8Array;
  readlinkSync(path: string): string;
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
  /** Where a link of `/proc` points: `/proc/PID/fd/N` reads `pipe:[INODE]`, `socket:[INODE]`, a path. */
  link(path: string): string;
  /** Our own pid, never signalled. */
  self: number;
}

/** What a tree note calls the process the guard started: `runTool`'s tool, or the relay's MCP server. */
export type TreeOwner = "tool" | "server";

/**
 * {@linkcode whyNoMarkers} under Deno refused the environments in `/proc` (NotCapable). Short: the tree note
 * that quotes it must fit classify's cut with the tool's exit said after it.
 */
export const NOT_ALL_GRANTED =
  "Deno reads /proc environments only with --allow-all and no --deny or --ignore";

let reader: ProcReader | null | undefined;
/** Why {@linkcode procReader} found none, for {@linkcode whyNoMarkers}. */
let noReader = "/proc is not readable here";
let plain: ProcReader | null | undefined;

/**
 * How to read `/proc` where it may be read at all, environments or not: a `stat` line needs no more than read
 * access to `/proc` (Deno refuses only the environments without --allow-all).
 */
function plainReader(): ProcReader | null {
  if (plain !== undefined) return plain;
  try {
    plain = denoApi ? denoReader() : nodeReader();
  } catch {
    plain = null;
  }
  return plain;
}

function procReader(): ProcReader | null {
  if (reader !== undefined) return reader;
  reader = null;
  try {
    const candidate = plainReader();
    // Our own environment must be readable, or the scan would see nothing (listing /proc waits for a kill).
    // Empty is readable: a host started with `env -i` has none, and the marker is in each child's own.
    if (candidate) {
      candidate.read(`/proc/${candidate.self}/environ`);
      reader = candidate;
    }
  } catch (error) {
    // No /proc, or not readable here: the process group stays the only way to find the tree. Deno refuses
    // an environment in /proc to all but every permission granted, even with /proc granted to read, and to
    // --allow-all with any --deny or --ignore flag beside it.
    if ((error as { name?: unknown } | null)?.name === "NotCapable") {
      noReader = NOT_ALL_GRANTED;
    }
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
    link: (path) => deno.readLinkSync(path),
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
    link: (path) => fs.readlinkSync(path),
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

/**
 * Why trees cannot be found by marker here, once {@linkcode treeMarkersWork} has said they cannot: `/proc` is
 * not readable, or (Deno) it is but the environments in it are refused without `--allow-all` (or with a
 * `--deny-*` or `--ignore-*` flag).
 *
 * @returns The reason, in a few words.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { treeMarkersWork, whyNoMarkers } from "./tree.ts";
 *
 * if (!treeMarkersWork()) assert.ok(whyNoMarkers().includes("/proc"));
 * ```
 */
export function whyNoMarkers(): string {
  return noReader;
}

// A random part makes the names of different hosts distinct (pid namespaces repeat pids), so a nested guard
// adds its marker beside ours; the counter makes each child's value distinct. One name per host, not one per
// child: every environment built for a child then has the same keys, which JavaScriptCore and V8 copy along
// a known shape (a fresh key per child made a new one each time: about 20 us per spawn on Bun).
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

/**
 * The live processes of `/proc` by what their environment says of `needle` (`NAME=value`): the pids that
 * carry it, and (`withUnread`) those whose environment could not be read (a set-uid or non-dumpable program:
 * only its `stat` is ours to read), with their parent, group and session.
 */
function scanMarked(
  proc: ProcReader,
  needle: Uint8Array,
  withUnread = true,
): { marked: number[]; unread: Unread[] } {
  const marked: number[] = [];
  const unread: Unread[] = [];
  for (const name of proc.list("/proc")) {
    if (!isPid(name)) continue;
    const pid = Number(name);
    if (pid === proc.self) continue;
    let environ: Uint8Array;
    try {
      environ = proc.read(`/proc/${pid}/environ`);
    } catch (error) {
      // Not ours to read (EACCES), or gone: one exiting (ESRCH: its memory is released) or reaped (ENOENT).
      if (!withUnread || !refused(error)) continue;
      const fields = statOf(proc, pid)?.map(Number);
      if (fields !== undefined) unread.push({ pid, ppid: fields[1], group: fields[2], session: fields[3] });
      continue;
    }
    if (holdsEntry(environ, needle)) marked.push(pid);
  }
  return { marked, unread };
}

/** Whether `error` says a read or a signal was refused (EACCES, EPERM), not that the process is gone. */
function refused(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return name === "PermissionDenied" || code === "EACCES" || code === "EPERM";
}

/** A process whose environment could not be read, as its `stat` line places it. */
interface Unread {
  pid: number;
  ppid: number;
  group: number;
  session: number;
}

/** Fields 3 to 6 of `/proc/PID/stat` (state, ppid, pgrp, session), or undefined when it is gone. */
function statOf(proc: ProcReader, pid: number): string[] | undefined {
  try {
    return fieldsOf(procText(proc, `/proc/${pid}/stat`));
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid`, a child not reaped yet, has exited (a zombie, state Z in its `stat`): signalling it
 * succeeds and ends nothing. Undefined where that cannot be told: no `/proc` here (macOS), or its `stat` may
 * not be read (Deno without --allow-all), or `pid` is no process. Never throws.
 *
 * @param pid The process.
 * @returns Whether it is a zombie, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exitedUnreaped } from "./tree.ts";
 *
 * assert.equal(exitedUnreaped(-1), undefined);
 * ```
 */
export function exitedUnreaped(pid: number): boolean | undefined {
  const proc = plainReader();
  const state = proc === null ? undefined : statOf(proc, pid)?.[0];
  return state === undefined ? undefined : state === "Z";
}

/**
 * Whether a live process of the tree is left, as {@linkcode signalMarked} would find it: one carrying
 * `marker`, or one whose environment cannot be read whose parent chain leads into `members` or that is in
 * `group` (the tool's group and session, or null). A zombie carries nothing: it is none. Undefined where
 * `/proc` cannot be read here. Never throws.
 *
 * @param marker The child's marker.
 * @param group The tool's own group and session (its pid, where it leads them), or null.
 * @param members The pids of the tree found by earlier kills.
 * @returns Whether one is left, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { markedRunning, newTreeMarker, treeMarkersWork } from "./tree.ts";
 *
 * // No process carries a fresh marker.
 * assert.equal(markedRunning(newTreeMarker(), null, []), treeMarkersWork() ? false : undefined);
 * ```
 */
export function markedRunning(
  marker: TreeMarker,
  group: number | null,
  members: Iterable<number>,
): boolean | undefined {
  const proc = procReader();
  if (proc === null) return undefined;
  try {
    const { marked, unread } = scanMarked(proc, entryOf(marker));
    return marked.length > 0 || takeUnread(unread, new Set(members), new Set(), group).length > 0;
  } catch {
    return undefined; // /proc went away under us
  }
}

/**
 * The processes among `unread` that belong to the tree and are not `seen` yet: members already, or whose
 * parent chain leads into `members` (grown as they are taken: an unreadable child of an unreadable one
 * counts), or in the tool's own group or session (`group`, the tool's pid where it leads them; null where it
 * shares ours).
 */
function takeUnread(
  unread: readonly Unread[],
  members: Set<number>,
  seen: ReadonlySet<number>,
  group: number | null,
): number[] {
  const taken: number[] = [];
  const inGroup = (look: Unread) => group !== null && (look.group === group || look.session === group);
  for (let added = true; added;) {
    added = false;
    for (const look of unread) {
      if (seen.has(look.pid) || taken.includes(look.pid)) continue;
      if (!members.has(look.pid) && !members.has(look.ppid) && !inGroup(look)) continue;
      members.add(look.pid);
      taken.push(look.pid);
      added = true;
    }
  }
  return taken;
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

/** Send `signal` to `pid`: false only where it is not ours to signal (EPERM); one gone meanwhile is ended. */
function send(pid: number, signal: "SIGTERM" | "SIGKILL"): boolean {
  try {
    if (denoApi) denoApi.kill(pid, signal);
    else nodeProcess()?.kill(pid, signal);
  } catch (error) {
    return !refused(error);
  }
  return true;
}

/** Rounds of scanning for SIGKILL: processes forked while a round was signalling are found by the next. */
const MAX_KILL_ROUNDS = 8;

/** Which processes {@linkcode signalMarked} adds to those carrying the marker, and how it signals a group. */
export interface SignalMarkedOptions {
  /** A pid to signal as well, found or not (the child itself while unreaped), unless its group was; null for none. */
  include?: number | null;
  /**
   * The tool's own process group and session (its pid, where it leads them), whose members count even when
   * their environment cannot be read; null where it shares ours.
   */
  group?: number | null;
  /**
   * Signals that group, once the first scan has placed every process (a process whose parent the signal ends
   * is then still linked to the tree); true when it had members, which are then not signalled again (but
   * one whose environment could not be read: the group's kill skips unsaid one not ours to signal).
   */
  signalGroup?: () => boolean;
  /**
   * The pids of the tree found by earlier calls, added to: an unreadable process among them is still taken
   * once its parent has exited (a SIGTERM it ignored ended its parent).
   */
  members?: Set<number>;
}

/** What {@linkcode signalMarked} reached. */
export interface SignalReport {
  /** How many processes (or groups) were signalled, or -1 when `/proc` cannot be read here. */
  signalled: number;
  /** Whether a process of the tree could not have its environment read, and was found by parent or group. */
  unread: boolean;
  /** Whether a process of the tree was not ours to signal (EPERM): it may still be running. */
  unsignalled: boolean;
}

/**
 * Signal every live process that carries `marker`, and every one whose environment cannot be read (a
 * set-uid or non-dumpable program) but whose parent chain leads into those, or that is in the tool's own
 * group or session (`/proc/PID/stat` stays readable). SIGTERM scans once (the SIGKILL that follows scans
 * again); SIGKILL scans until a round finds no process it has not signalled yet, so a descendant forked
 * meanwhile is caught too. Each round scans before it signals. Never throws.
 *
 * @param marker The child's marker.
 * @param signal The signal to send.
 * @param options A pid to add, the tool's own group and how to signal it, the members found before.
 * @returns How many processes were signalled, and what of the tree could not be read or signalled.
 */
export function signalMarked(
  marker: TreeMarker,
  signal: "SIGTERM" | "SIGKILL",
  { include = null, group = null, signalGroup, members = new Set() }: SignalMarkedOptions = {},
): SignalReport {
  const report: SignalReport = { signalled: -1, unread: false, unsignalled: false };
  const proc = procReader();
  if (proc === null) return report;
  report.signalled = 0;
  const needle = entryOf(marker);
  let skipGroup: number | null = null;
  // The pids this call has met: each is signalled once.
  const seen = new Set<number>();
  // A process found unread is signalled even in the signalled group: a group's kill skips, unsaid, a member
  // not ours to signal (another user's), and only its own kill tells that it may still be running.
  const hit = (pid: number, unread = false) => {
    seen.add(pid);
    members.add(pid);
    if (!unread && skipGroup !== null && Number(statOf(proc, pid)?.[2] ?? -1) === skipGroup) return;
    if (!send(pid, signal)) report.unsignalled = true;
    report.signalled++;
  };
  const rounds = signal === "SIGKILL" ? MAX_KILL_ROUNDS : 1;
  for (let round = 0; round < rounds; round++) {
    let scan: ReturnType<typeof scanMarked> | null;
    try {
      scan = scanMarked(proc, needle);
    } catch {
      scan = null; // /proc went away under us: what was signalled stays signalled
    }
    if (round === 0) {
      if (include !== null) members.add(include);
      if (signalGroup?.()) {
        skipGroup = group;
        report.signalled++;
      } else if (include !== null) hit(include);
    }
    if (scan === null) break;
    let fresh = 0;
    for (const pid of scan.marked) {
      if (seen.has(pid)) continue;
      fresh++;
      hit(pid);
    }
    for (const pid of takeUnread(scan.unread, members, seen, group)) {
      fresh++;
      // The tool itself (a set-uid program) is known by its pid, not found only by its parent or group.
      if (pid !== include) report.unread = true;
      hit(pid, true);
    }
    if (fresh === 0) break;
  }
  return report;
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
  /**
   * Set by a whole look (all of /proc read) that asked which processes hold our pipes: whether a pipe of ours
   * still open was held by none of those found (its holder cleared its environment, or its end could not be
   * told), so that every process counted. Absent after a recheck, and where no one was busy or stopped.
   */
  gap?: boolean;
}

/**
 * What the live processes carrying `marker` are doing, as far as the tool's output goes. Asked when the
 * pipes have gone quiet after the tool exited while one of them still holds stdout: a busy or stopped one may
 * write more; a sleeping one is a daemon. Only a process that holds the writing end of a pipe we read (the
 * tool's stdout or stderr), one it started (a holder may be waiting for it, as
 * `sh -c 'sort big > tmp; cat tmp'` waits for `sort`), or one writing into a pipe such a process reads
 * (`work | cat &`), counts: one that closed them and computes on cannot add to the output. Where fewer of our
 * pipes are found held than are still open (`openPipes`; none found at all, say), the holder of one is not
 * among those found (it cleared its environment, or its end could not be told: {@linkcode isOurOutput}), and
 * every process counts: the cautious side. Never throws.
 *
 * Finding the tree reads the environment of every process on the host; a recheck given the pids of the last
 * look reads only theirs, and only a busy verdict is taken from it, one that rests on what they hold (a
 * holder busy, its child, a feeder of one): a process one of them forked since is not among them, and may
 * hold or read a pipe none of them does any more (a holder of stderr that double-forked and exited), so a
 * pipe held by none of them proves nothing there. Otherwise the whole of `/proc` is read again before the
 * tree is called asleep or stopped: a parent that now waits for a busy child must not read as a daemon. A
 * caller that trusts the gap of its last whole look (`gap`) has a busy one among them taken at once. The
 * open files (theirs and ours) are read only when one of them is busy or stopped; ours through `ours`, which
 * a caller that looks again may keep (reading them costs 20-35 us a descriptor under Deno).
 *
 * @param marker The child's marker.
 * @param options The pids of the last look, our ends, and how many of the tool's pipes are still open.
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
export function treeState(
  marker: TreeMarker,
  { known = [], ours = ourEnds, openPipes = 1, gap = false }: TreeLookOptions = {},
): TreeLook {
  const proc = procReader();
  if (proc === null) return { state: null, pids: [] };
  const needle = entryOf(marker);
  const ends = { ours, openPipes };
  // A pid that no longer carries the marker ended (or was reused by a stranger): it is not read.
  const still = known.filter((pid) => carries(proc, pid, needle));
  if (still.length > 0) {
    const looks = still.map((pid) => lookAt(proc, pid));
    // Only a busy one can make the recheck's answer; with the gap trusted, every one counts, as in the whole
    // look that found it, and no open files are read.
    if (
      busiest(looks) === "busy" &&
      (gap || verdictOn(proc, looks, { ...ends, found: "some" }).state === "busy")
    ) {
      return { state: "busy", pids: still };
    }
  }
  let pids: number[];
  try {
    pids = scanMarked(proc, needle, false).marked;
  } catch {
    return { state: null, pids: [] }; // /proc went away under us
  }
  const whole = verdictOn(proc, pids.map((pid) => lookAt(proc, pid)), { ...ends, found: "all" });
  return whole.gap === undefined
    ? { state: whole.state, pids }
    : { state: whole.state, pids, gap: whole.gap };
}

/** What {@linkcode treeState} is told beside the marker. */
export interface TreeLookOptions {
  /** The pids of the last look, if any. */
  known?: readonly number[];
  /** Our ends of the pipes we read, when first needed: {@linkcode ourEnds} unless kept. */
  ours?: () => OurEnds;
  /**
   * How many of the tool's output pipes (stdout, stderr) are still open, not at end-of-file: as many of ours
   * must be found held by the processes found, or a holder is not among them. Default 1 (stdout, open
   * whenever the tree is asked about).
   */
  openPipes?: number;
  /**
   * Whether the caller trusts the gap its last whole look found (a pipe of ours still open, held by none of
   * the processes found: its holder hides): then a recheck of `known` counts every one of them, as that look
   * did, and calls the tree busy when one is, without reading /proc whole nor anyone's open files. Only a busy
   * answer is taken from it, so trusting a gap that has closed meanwhile can only make the caller wait longer
   * (up to its bound) and mark the output as cut, never call a writer's output whole. Default false.
   */
  gap?: boolean;
}

/** The verdict on the processes `looks` (all of the tree's found, or only some), and whether a holder hides. */
function verdictOn(
  proc: ProcReader,
  looks: readonly ProcessLook[],
  { ours, openPipes, found }: Required<Omit<TreeLookOptions, "known" | "gap">> & Pick<TreeEnds, "found">,
): { state: TreeState | null; gap?: boolean } {
  // Our own ends are asked for only if a holder is, and once per verdict; each process's files at most once,
  // and a holder's only until as many of ours are found held as are open (all of them, if its pipes are
  // asked for).
  let mine: OurEnds | undefined;
  const held = new Set<string>();
  const links = new Map<number, Map<string, string>>();
  let asked = false;
  const holds = (pid: number) => {
    asked = true;
    let holder = false;
    const all = openLinks(proc, pid, (link) => {
      if (!isOurOutput(link, mine ??= ours())) return false;
      holder = true;
      held.add(link);
      return held.size >= openPipes;
    });
    if (all !== null) links.set(pid, all);
    return holder;
  };
  const unfound = () => held.size < openPipes;
  const pipes = new Map<number, PipeEnds>();
  const pipesOf = (pid: number) => {
    let found = pipes.get(pid);
    if (found === undefined) {
      const all = links.get(pid) ?? openLinks(proc, pid) ?? new Map();
      pipes.set(pid, found = pipeEnds(proc, pid, all, mine ??= ours()));
    }
    return found;
  };
  const state = treeVerdict(looks, { holds, pipesOf, unfound, found });
  // (known only where holders were asked for, each process's files read whole or until enough were found)
  return asked && found === "all" ? { state, gap: unfound() } : { state };
}

/** One process of a tree as its `stat` files read. */
export interface ProcessLook {
  /** Its pid. */
  pid: number;
  /** Its parent's pid (-1: not known). */
  ppid: number;
  /** The busiest state among its threads. */
  state: TreeState;
}

/** The pipes a process holds open, as `/proc` links them (`pipe:[INODE]`, the same at both ends). */
export interface PipeEnds {
  /** The pipes it holds the reading end of. */
  reads: readonly string[];
  /** The pipes it holds the writing end of. */
  writes: readonly string[];
}

const NO_PIPES: PipeEnds = { reads: [], writes: [] };

/** What {@linkcode treeVerdict} asks of the processes of a tree, by pid. */
export interface TreeEnds {
  /** Whether the process `pid` holds one of the tool's output pipes. */
  holds(pid: number): boolean;
  /** The pipes the process `pid` holds; none unless given. */
  pipesOf?(pid: number): PipeEnds;
  /**
   * Asked once `holds` was asked of every process: whether a pipe of ours still open was found held by none of
   * them (its holder was not found, or not told). Never, unless given.
   */
  unfound?(): boolean;
  /**
   * Whether the processes given are all those of the tree that were found (`"all"`, the default), or only
   * `"some"` (a recheck of the pids found last): then a pipe of ours held by none of them, or one that none
   * of them reads, proves nothing (a process not among them may hold or read it), and only what they hold
   * makes a process count.
   */
  found?: "all" | "some";
}

/**
 * The busiest state among the processes of a tree that may still add to the tool's output: those that hold
 * one of its pipes, those they started (a holder may be waiting for one), and those that write into a pipe
 * one of these reads (`work | cat &`: cat holds stdout asleep while the worker beside it computes what cat
 * will copy), or that no process found reads (`work | env -i cat &`: cat, which cleared its environment, may
 * hold stdout though every pipe is found held by another). A busy process outranks a stopped one (the caller
 * waits for it). Which processes hold a pipe is asked only when one of them is busy or stopped; when none of
 * them does, or a pipe still open is held by none of them (its holder was not found), every process counts,
 * unless only some of the tree's processes are given (`found: "some"`): then what none of them holds or
 * reads proves nothing, and only what they hold makes a process count.
 *
 * @param looks The processes found.
 * @param ends What each holds.
 * @returns The busiest state among those that count, or null when `looks` is empty.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { treeVerdict } from "./tree.ts";
 *
 * const daemon = { pid: 10, ppid: 1, state: "quiet" as const };
 * const spinner = { pid: 11, ppid: 1, state: "busy" as const };
 * const holds = (pid: number) => pid === 10;
 * const NONE = { reads: [], writes: [] };
 * // The spinner closed its output; the daemon holds it, asleep: nothing more will come.
 * assert.equal(treeVerdict([daemon, spinner], { holds }), "quiet");
 * // The spinner is the daemon's child: the daemon may be waiting for it to write.
 * assert.equal(treeVerdict([daemon, { ...spinner, ppid: 10 }], { holds }), "busy");
 * // No holder found, or one pipe's holder not found: the spinner may be one.
 * assert.equal(treeVerdict([daemon, spinner], { holds: () => false }), "busy");
 * assert.equal(treeVerdict([daemon, spinner], { holds, unfound: () => true }), "busy");
 * // The spinner writes into a pipe the daemon reads: what it writes may come out through the daemon.
 * const pipesOf = (pid: number) => pid === 10 ? { reads: ["pipe:[7]"], writes: [] } : { reads: [], writes: ["pipe:[7]"] };
 * assert.equal(treeVerdict([daemon, spinner], { holds, pipesOf }), "busy");
 * // Or into a pipe no process found reads (its reader was not found): the same may be true.
 * const intoNone = (pid: number) => pid === 10 ? NONE : { reads: [], writes: ["pipe:[8]"] };
 * assert.equal(treeVerdict([daemon, spinner], { holds, pipesOf: intoNone }), "busy");
 * // Not when only some of the tree is given: a process not given may hold or read what none given does.
 * assert.equal(treeVerdict([daemon, spinner], { holds, unfound: () => true, found: "some" }), "quiet");
 * assert.equal(treeVerdict([daemon, spinner], { holds, pipesOf: intoNone, found: "some" }), "quiet");
 * ```
 */
export function treeVerdict(
  looks: readonly ProcessLook[],
  { holds, pipesOf = () => NO_PIPES, unfound = () => false, found = "all" }: TreeEnds,
): TreeState | null {
  const all = busiest(looks);
  if (all === null || all === "quiet") return all;
  const counted = new Set(looks.filter((look) => holds(look.pid)).map((look) => look.pid));
  // Only when every process found is given does a pipe held (or read) by none of them mean one not found.
  const whole = found === "all";
  if (whole && (counted.size === 0 || unfound())) return all;
  // Given only some, with none of them a holder: nothing can count (no holder to be a child or a reader of).
  if (counted.size === 0) return "quiet";
  const parentOf = new Map(looks.map((look) => [look.pid, look.ppid]));
  // The pipes the counted processes read, and those any process found reads: asked for only once a process
  // yet to count writes into a pipe.
  let read: Set<string> | undefined;
  const readByCounted = () => read ??= new Set([...counted].flatMap((pid) => pipesOf(pid).reads));
  let readByAny: Set<string> | undefined;
  const readByFound = () => readByAny ??= new Set(looks.flatMap((look) => pipesOf(look.pid).reads));
  const counts = (pid: number) => {
    // Up the parents found in the tree; bounded, as a reused pid could close a loop.
    for (let p: number | undefined = pid, hops = 0; p !== undefined && hops <= looks.length; hops++) {
      if (counted.has(p)) return true;
      p = parentOf.get(p);
    }
    // (a pipe no process found reads leads to one not found, which may hold stdout: `work | env -i cat &`)
    return pipesOf(pid).writes.some((pipe) =>
      readByCounted().has(pipe) || (whole && !readByFound().has(pipe))
    );
  };
  // Until nothing more counts: a feeder's own feeders and children count too. At most one round per process.
  for (let added = true; added;) {
    added = false;
    for (const look of looks) {
      if (counted.has(look.pid) || !counts(look.pid)) continue;
      counted.add(look.pid);
      added = true;
      if (read !== undefined) { for (const pipe of pipesOf(look.pid).reads) read.add(pipe); }
    }
  }
  return busiest(looks.filter((look) => counted.has(look.pid))) ?? "quiet";
}

/** The busiest state among `looks`, or null for none. */
function busiest(looks: readonly ProcessLook[]): TreeState | null {
  let found: TreeState | null = null;
  for (const { state } of looks) {
    if (state === "busy") return state;
    if (state === "stopped" || found === null) found = state;
  }
  return found;
}

/** A short text file of `/proc` (a `stat` line, an `fdinfo`), read in every look: one decoder for all. */
function procText(proc: ProcReader, path: string): string {
  return procDecoder.decode(proc.read(path));
}

const procDecoder = new TextDecoder();

/**
 * Process `pid` by the busiest state among its threads (its main thread may sleep while another writes). A
 * process gone meanwhile reads as quiet.
 */
function lookAt(proc: ProcReader, pid: number): ProcessLook {
  const look: ProcessLook = { pid, ppid: -1, state: "quiet" };
  let tids: string[];
  try {
    tids = proc.list(`/proc/${pid}/task`);
  } catch {
    return look;
  }
  for (const tid of tids) {
    let thread: ThreadLook;
    try {
      thread = threadLook(procText(proc, `/proc/${pid}/task/${tid}/stat`));
    } catch {
      continue; // the thread ended
    }
    look.ppid = thread.ppid;
    if (thread.state === "busy") return { ...look, state: "busy" };
    if (thread.state === "stopped") look.state = "stopped";
  }
  return look;
}

/** One thread as its `stat` line reads. */
export interface ThreadLook {
  /** Busy (R, D), stopped (T, t) or quiet (asleep, idle, a zombie). */
  state: TreeState;
  /** Its process's parent (field 4). */
  ppid: number;
}

/**
 * What a `stat` line of `/proc` says of its thread: R (runnable) and D (uninterruptible: disk wait, a page
 * fault, a vfork waiting for its child) are busy; T and t (stopped by a signal, by a debugger) stopped;
 * anything else (S asleep, I idle, Z a zombie) quiet.
 *
 * @param stat The line, as `/proc/PID/task/TID/stat` holds it.
 * @returns Its state and its parent's pid.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { threadLook } from "./tree.ts";
 *
 * // The command name may hold spaces and parentheses.
 * assert.deepEqual(threadLook("42 (a) D (b) R 7 42 42 0 -1"), { state: "busy", ppid: 7 });
 * ```
 */
export function threadLook(stat: string): ThreadLook {
  const [letter, ppid] = fieldsOf(stat);
  const state = letter === "R" || letter === "D"
    ? "busy"
    : letter === "T" || letter === "t"
    ? "stopped"
    : "quiet";
  return { state, ppid: Number(ppid) };
}

/** The ends this process reads its children's output from (stdout, stderr), as `/proc` links them. */
export interface OurEnds {
  /** The `pipe:[INODE]` links of the pipes we read from: the writing end links the same (Deno's pipes). */
  pipes: ReadonlySet<string>;
  /** The inode numbers of our sockets: the ends of a socket pair are numbered one after the other. */
  sockets: ReadonlySet<number>;
  /**
   * The other pipes we hold (a child's stdin we write to, one our own parent left open to us, such as a make
   * jobserver's): a tree inherits those it holds from us, so they are none of its own pipes, and their
   * readers are not in it.
   */
  others?: ReadonlySet<string>;
}

/**
 * Whether an open file that `/proc` links as `link` is the writing end of one of `ours`: the same pipe, or
 * the other end of one of our socket pairs (Bun's and Node's pipes), which `/proc` does not link to ours;
 * its inode is told by its number, next to ours (the kernel numbers both ends in one call from one counter
 * per CPU: 2 000 of 2 000 children under Bun on a loaded host). Where that fails (the call moved between
 * CPUs) the holder is not found, and every process counts.
 *
 * @param link What `/proc/PID/fd/N` reads.
 * @param ours Our ends, from `/proc/self/fd`.
 * @returns Whether it writes to us.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isOurOutput } from "./tree.ts";
 *
 * const ours = { pipes: new Set(["pipe:[70]"]), sockets: new Set([90]) };
 * assert.equal(isOurOutput("pipe:[70]", ours), true);
 * assert.equal(isOurOutput("socket:[91]", ours), true);
 * assert.equal(isOurOutput("socket:[95]", ours), false);
 * assert.equal(isOurOutput("/dev/null", ours), false);
 * ```
 */
export function isOurOutput(link: string, ours: OurEnds): boolean {
  if (link.startsWith("pipe:[")) return ours.pipes.has(link);
  const inode = socketInode(link);
  return inode !== undefined && (ours.sockets.has(inode - 1) || ours.sockets.has(inode + 1));
}

/**
 * The inode number of a socket as `/proc` links it (`socket:[INODE]`, in decimal digits), or undefined for
 * any other link, and for one whose inode is written otherwise or is 0 (`/proc` writes none such; one taken
 * for ours would make its neighbours ours too, and `Number` reads `1e3` or `0x10` as a number).
 */
function socketInode(link: string): number | undefined {
  const digits = SOCKET_LINK.exec(link)?.[1];
  const inode = digits === undefined ? 0 : Number(digits);
  return inode > 0 && Number.isSafeInteger(inode) ? inode : undefined;
}

const SOCKET_LINK = /^socket:\[(\d{1,16})\]$/;

/**
 * Our own ends of pipes we read from and of sockets, from `/proc/self/fd` (a pipe we write to, a child's
 * stdin, or one our parent left open to us, is kept apart, in `others`). Every runtime opens them close-on-exec, so a process of one child's tree holds only
 * that child's. None when they cannot be read. Never throws.
 *
 * @returns Our ends.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ourEnds } from "./tree.ts";
 *
 * const { pipes, sockets, others } = ourEnds();
 * assert.ok([...pipes, ...others!].every((link) => link.startsWith("pipe:[")));
 * assert.ok([...sockets].every(Number.isSafeInteger));
 * ```
 */
export function ourEnds(): OurEnds {
  const pipes = new Set<string>();
  const sockets = new Set<number>();
  const others = new Set<string>();
  const proc = procReader();
  if (proc === null) return { pipes, sockets, others };
  try {
    for (const fd of proc.list(`/proc/${proc.self}/fd`)) {
      try {
        const link = proc.link(`/proc/${proc.self}/fd/${fd}`);
        const inode = socketInode(link);
        if (inode !== undefined) sockets.add(inode);
        else if (link.startsWith("pipe:[")) {
          (readOnly(proc, `/proc/${proc.self}/fdinfo/${fd}`) ? pipes : others).add(link);
        }
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // not readable here
  }
  return { pipes, sockets, others };
}

/** Whether the descriptor `fdinfo` describes was opened for reading only (its `flags`, in octal, end in 0). */
function readOnly(proc: ProcReader, fdinfo: string): boolean {
  const flags = /^flags:\s*([0-7]+)/m.exec(procText(proc, fdinfo));
  return flags !== null && (parseInt(flags[1], 8) & 3) === 0;
}

/**
 * What each open descriptor of process `pid` links to (none when it is gone or not ours to read), or null as
 * soon as one is `enough`. Never throws.
 */
function openLinks(
  proc: ProcReader,
  pid: number,
  enough: (link: string) => boolean = () => false,
): Map<string, string> | null {
  const links = new Map<string, string>();
  try {
    for (const fd of proc.list(`/proc/${pid}/fd`)) {
      let link: string;
      try {
        link = proc.link(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      if (enough(link)) return null;
      links.set(fd, link);
    }
  } catch {
    // gone, or not ours to read
  }
  return links;
}

/**
 * The pipes among `links` (process `pid`'s descriptors) that are neither ours nor any other we hold, by
 * direction. Never throws.
 */
function pipeEnds(proc: ProcReader, pid: number, links: Map<string, string>, ours: OurEnds): PipeEnds {
  const reads: string[] = [];
  const writes: string[] = [];
  for (const [fd, link] of links) {
    if (!link.startsWith("pipe:[") || ours.pipes.has(link) || ours.others?.has(link)) continue;
    try {
      (readOnly(proc, `/proc/${pid}/fdinfo/${fd}`) ? reads : writes).push(link);
    } catch {
      // closed meanwhile
    }
  }
  return { reads, writes };
}

/** Fields 3 to 6 of a `stat` line (state, ppid, pgrp, session): no caller reads further. */
function fieldsOf(stat: string): string[] {
  // The command name (field 2) may hold spaces and parentheses: count fields from the last ')'. The limit
  // spares splitting the ~46 fields after these on every process whose environment could not be read.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ", 4);
}
