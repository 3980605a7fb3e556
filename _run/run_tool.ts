/**
 * The engine behind `runTool` and `classify`: spawning, reading and classifying a tool run, and the
 * deadlines that end one (one timer for every run's time limit, below).
 *
 * @module
 */

import {
  type ByteSource,
  type ChildExit,
  type LiveChild,
  spawnChild,
  trackLive,
  type TreeState,
  unrefTimeout,
  untrackLive,
} from "./runtime.ts";
import { logResult, prepareArgs, type ToolArg } from "./args.ts";
import {
  classifyOptionsProblem,
  classifyOutcome,
  DEFAULT_MAX_DETAIL,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_TIMEOUT_MS,
  failedBecause,
  failure,
  guardFailure,
  type KilledBy,
  optionGiven,
  readOptions,
  STDERR_TAIL_BYTES,
  toBytes,
} from "./classify.ts";
import { checkSwitches, errorText, givenValue, isRecord, stringsIn } from "../_common/values.ts";
import type { RunOptions, ToolResult, ToolSuccess } from "../types.ts";

/** Milliseconds between SIGTERM and SIGKILL when the guard ends a process tree. */
export const KILL_GRACE_MS = 200;
/**
 * After the child exits, how long the guard waits for more output before it stops reading pipes a
 * descendant still holds open (the wait restarts whenever bytes arrive).
 */
export const DRAIN_IDLE_MS = 150;
/**
 * The longest drain, however busy the descendant holding the pipes: the guard then stops reading and ends
 * it, and the result says the output may be incomplete. `timeoutMs` still bounds the drain when it is shorter.
 */
export const DRAIN_MAX_MS = 1000;
/**
 * While stdout is held and quiet after the tool exited and a process of the tree is runnable or waiting on the
 * disk (a writer starved of the CPU or of memory), how often the guard looks at the tree again.
 */
const BUSY_RECHECK_MS = 50;
/**
 * How long a gap the last whole look at the leftovers found (a pipe of ours held by none of them: its holder
 * hides) is trusted by the rechecks that follow, which then read only the known ones' states: a whole look
 * reads every process's environment (2-4 ms for 120 processes), and made every 50 ms it tripled the guard's
 * CPU over the drain. A gap that was only a moment's keeps the drain waiting at most this much longer before
 * a whole look sees it closed (and a trusted gap only ever says "busy": wait, or mark the output as cut).
 */
const GAP_TRUST_MS = 200;

/**
 * The drain's decision after a quiet spell with stdout still held, given what the leftover processes are doing,
 * what they were doing at the last look, and how long the drain may still last: how long to wait before
 * looking at them again, or null to stop reading now. Only a busy tree (a writer starved of the CPU or of
 * memory may yet write) is waited for; one asleep (a daemon), stopped, or not known is not, unless it was busy
 * at the last look: then it may have just written its last line and ended (or gone to sleep), and on a
 * starved machine those bytes and the end-of-file can come after the look, so it is looked at once more.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recheckAfter } from "./run_tool.ts";
 *
 * assert.equal(recheckAfter("busy", 400), 50);
 * assert.equal(recheckAfter("busy", 20), 20);
 * assert.equal(recheckAfter("quiet", 400), null);
 * assert.equal(recheckAfter(null, 400, "busy"), 50);
 * ```
 */
export function recheckAfter(
  state: TreeState | null,
  leftMs: number,
  previous: TreeState | null = null,
): number | null {
  const waits = state === "busy" || previous === "busy";
  return waits && leftMs > 0 ? Math.min(leftMs, BUSY_RECHECK_MS) : null;
}

/** Bounds of the engine that tests may widen; callers of `runTool` get the defaults. */
export interface EngineBounds {
  /** The drain's longest wait, {@linkcode DRAIN_MAX_MS} unless a test needs one that no load outlasts. */
  drainMaxMs?: number;
  /**
   * How `scanOutput` loads the scanner: the scanner module itself unless a test gives a loader that fails, as
   * an installation missing the module would (the public `runTool` never passes bounds).
   */
  loadScanner?: () => Promise<Pick<typeof import("../_scan/scan.ts"), "scan">>;
  /**
   * What the run reads the child's stdout through: the child's own pipe unless a test puts a stream between
   * that fails partway, as a read of a pipe can (EIO) but no real child can make it on demand.
   */
  readStdout?: (stdout: ByteSource) => ByteSource;
  /** What the run reads the child's stderr through: its own pipe unless a test puts a failing stream between. */
  readStderr?: (stderr: ByteSource) => ByteSource;
}
/** After SIGKILL, how long the guard waits for the exit status before it settles anyway. */
const SETTLE_SLACK_MS = 60;

// ---------------------------------------------------------------------------------------------------------
// runTool
// ---------------------------------------------------------------------------------------------------------

/**
 * The options read once ({@linkcode readOptions}), for the checks and the run to read alone, or why they
 * cannot be: not an object, or a read of one that threw.
 */
function takeOptions(options: unknown): RunOptions | string {
  try {
    if (!isRecord(options)) return `invalid options ${givenValue(options)}: give an object`;
  } catch (error) {
    return `invalid options: ${errorText(error)}`; // (a revoked Proxy)
  }
  return readOptions(options, true);
}

/**
 * The `onResult` of options that could not all be read, when it is a function: a refusal is a result, and
 * every result is logged. Read on its own, once; a read that throws (it may be the one that failed) means none.
 */
function logOf(options: unknown): RunOptions["onResult"] {
  const onResult = optionGiven(options, "onResult");
  return typeof onResult === "function" ? onResult as RunOptions["onResult"] : undefined;
}

/** What is wrong with the options, as a sentence saying what to give, or null when they are all usable. */
function checkOptions(options: RunOptions): string | null {
  return classifyOptionsProblem(options) ?? checkOptionTypes(options);
}

/**
 * The options the runtimes would otherwise each read their own way (or that would fail only after the tool
 * started): each must have its documented type.
 */
function checkOptionTypes(options: RunOptions): string | null {
  const { signal, stdin, env, cwd, onResult } = options;
  if (signal !== undefined && !isAbortSignal(signal)) {
    return `invalid option signal ${givenValue(signal)}: give an AbortSignal (AbortController's signal)`;
  }
  if (stdin !== undefined && typeof stdin !== "string" && !(stdin instanceof Uint8Array)) {
    return `invalid option stdin ${givenValue(stdin)}: give a string or a Uint8Array, or leave it out`;
  }
  if (env !== undefined && !(isRecord(env) && Object.values(env).every((v) => typeof v === "string"))) {
    return `invalid option env ${givenValue(env)}: give an object whose values are all strings`;
  }
  if (cwd !== undefined && typeof cwd !== "string") {
    return `invalid option cwd ${givenValue(cwd)}: give a directory path as a string`;
  }
  try {
    checkSwitches(options, ["clearEnv", "scanOutput"], "invalid option ");
  } catch (error) {
    return errorText(error);
  }
  if (onResult !== undefined && typeof onResult !== "function") {
    return `invalid option onResult ${givenValue(onResult)}: give a function`;
  }
  return null;
}

/** An AbortSignal, or anything that works as one here (a signal from another realm or a polyfill). */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof AbortSignal === "function" && value instanceof AbortSignal) return true;
  const v = value as Partial<AbortSignal> | null;
  return typeof v === "object" && v !== null && typeof v.aborted === "boolean" &&
    typeof v.addEventListener === "function" && typeof v.removeEventListener === "function";
}

/** The abort signal's reason as text for the detail; never throws (a reason may refuse to become text). */
function abortReasonText(signal: AbortSignal): string {
  try {
    const reason = signal.reason as unknown;
    if (reason instanceof Error) {
      return reason.name === "AbortError" ? reason.message : `${reason.name}: ${reason.message}`;
    }
    return reason === undefined ? "" : String(reason);
  } catch {
    return "a reason that cannot be shown as text";
  }
}

/** Start the tool and classify how its run ended. Throws only on a bug in the guard (runTool catches it). */
async function execute(
  command: string,
  args: readonly ToolArg[],
  options: RunOptions,
  refused: string | null,
  bounds: EngineBounds,
): Promise<ToolResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const notRun = (spawnError: string, durationMs?: number) =>
    classifyOutcome({ spawnError, exitCode: null, signal: null, stdout: "", durationMs }, options);
  const problem = typeof command !== "string" || command === ""
    ? "command must be a non-empty string"
    : refused ?? checkOptions(options);
  if (problem) return notRun(problem);
  const prepared = prepareArgs(args);
  if (!prepared.ok) return notRun(prepared.reason);
  if (options.signal?.aborted) return abortedBeforeStart(options.signal, options, elapsed());
  const attempt = await spawnChild({
    command,
    args: prepared.argv,
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.clearEnv,
    stdin: options.stdin === undefined ? null : toBytes(options.stdin),
  });
  const where = options.cwd ? ` (cwd ${JSON.stringify(options.cwd)})` : "";
  if (!attempt.ok) {
    return notRun(`could not start ${JSON.stringify(command)}${where}: ${attempt.reason}`, elapsed());
  }
  const { readStdout, readStderr } = bounds;
  const child = readStdout || readStderr
    ? {
      ...attempt.child,
      stdout: readStdout ? readStdout(attempt.child.stdout) : attempt.child.stdout,
      stderr: readStderr ? readStderr(attempt.child.stderr) : attempt.child.stderr,
    }
    : attempt.child;
  const run = await new ToolRun(child, options, bounds).finished();
  // Started through a launcher (setsid) that could not exec the tool: that is a failure to start, not an exit.
  const notStarted = run.exit && run.killedBy === null
    ? attempt.child.startFailure?.(run.exit, run.wroteStdout, run.stderr)
    : null;
  if (notStarted) {
    return notRun(`could not start ${JSON.stringify(command)}${where}: ${notStarted}`, elapsed());
  }
  return classifyOutcome({
    exitCode: run.exit?.code ?? null,
    signal: run.exit?.signal ?? null,
    stdout: run.stdout,
    stderr: run.stderr,
    killedBy: run.killedBy,
    abortReason: run.abortReason,
    exitedFirst: run.exitedFirst,
    stdoutHeld: run.stdoutHeld,
    ...(run.stdoutFailure !== null ? { stdoutReadError: run.stdoutFailure } : {}),
    ...(run.stderrFailure !== null ? { stderrReadError: run.stderrFailure } : {}),
    // How the tree was found (or how far a kill reached) matters only when the guard ended it.
    ...(run.treeEnded
      ? { treeNote: attempt.child.treeNote(), killReached: attempt.child.killReached() }
      : {}),
    durationMs: elapsed(),
  }, options);
}

/** The result for a signal that was aborted before the tool could start: nothing runs. */
function abortedBeforeStart(signal: AbortSignal, options: RunOptions, durationMs: number): ToolResult {
  const reason = abortReasonText(signal);
  return classifyOutcome({
    exitCode: null,
    signal: null,
    stdout: "",
    killedBy: "abort",
    abortReason: `before the tool started${reason ? `: ${reason}` : ""}`,
    durationMs,
  }, options);
}

/** What one run produced, ready to classify. */
interface RunOutcome {
  /** How the child ended, or null when the guard stopped waiting first. */
  exit: ChildExit | null;
  /** Stdout within the cap (empty after an overflow unless `onOverflow: "truncate"`). */
  stdout: Uint8Array;
  /** Whether the tool wrote anything to stdout at all. */
  wroteStdout: boolean;
  /** The last {@linkcode STDERR_TAIL_BYTES} of stderr. */
  stderr: Uint8Array;
  /** Why the guard ended the tree, or null when it did not. */
  killedBy: KilledBy | null;
  /** The abort signal's reason, when `killedBy` is `"abort"`. */
  abortReason: string;
  /** Whether the exit status had arrived before the guard ended the tree for overflow. */
  exitedFirst: boolean;
  /** Whether a process the tool left running still held stdout open when the guard stopped reading it. */
  stdoutHeld: boolean;
  /** Why reading stdout failed before its end, or null when it did not. */
  stdoutFailure: string | null;
  /** Why reading stderr failed before its end, or null when it did not. */
  stderrFailure: string | null;
  /**
   * Whether the guard ended the tree: a timeout, an abort, the output cap, a failed read of stdout, or, after
   * the tool exited, what it left holding a pipe when the drain stopped waiting (then even on a success).
   */
  treeEnded: boolean;
}

/**
 * One run of a started tool: reads stdout up to the cap and a bounded tail of stderr, ends the process tree
 * on overflow, timeout or abort, drains the pipes after the child exits (but not forever), and settles once.
 */
class ToolRun {
  readonly #child: LiveChild;
  readonly #options: RunOptions;
  readonly #cap: number;
  readonly #keepOnOverflow: boolean;
  readonly #stdout: Uint8Array[] = [];
  #stdoutBytes = 0;
  readonly #stderr = new TailBuffer(STDERR_TAIL_BYTES);
  #killedBy: KilledBy | null = null;
  #abortReason = "";
  #exit: ChildExit | null = null;
  /**
   * Set when the exit status is the tool's own, whatever stdout did: it arrived before the overflow, or it is a
   * SIGKILL (or its exit code, 137) the guard had not sent.
   */
  #exitedFirst = false;
  /** Whether the guard has sent SIGKILL to the tree. */
  #killSent = false;
  /**
   * While draining, when bytes last arrived on either pipe (the drain waits for a quiet spell, not for
   * end-of-file). Before the drain it is not needed, so the reads do not ask for the time.
   */
  #lastData = 0;
  #draining = false;
  /** Whether stdout brought data after the tool exited (a process it left behind was writing). */
  #stdoutAfterExit = false;
  /**
   * What the processes left in the tree were doing when the drain ended on a quiet spell (null: not known
   * here); undefined when it ended otherwise, and they are asked only if needed.
   */
  #leftover: TreeState | null | undefined = undefined;
  /** The pids of the leftover processes when last looked at: a recheck reads only theirs while one is busy. */
  #leftoverPids: readonly number[] = [];
  /** When the last whole look found a pipe of ours held by none of the leftovers, and how many were open. */
  #gapAt = -Infinity;
  #gapPipes = 0;
  readonly #drainMaxMs: number;
  readonly #timers: ReturnType<typeof setTimeout>[] = [];
  #cancelTimeout: () => void = () => {};
  /** Set once both pipes are at end-of-file. */
  #pipesClosed = false;
  /** Set once stdout is at end-of-file (or the guard stopped reading it at the cap, or a read failed). */
  #stdoutDone = false;
  /** Why a read of stdout failed, or null: what came before may be only part of the output. */
  #stdoutFailure: string | null = null;
  /** Set once stderr is at end-of-file (at once when it is not piped to us, or once a read failed). */
  #stderrDone = false;
  /** Why a read of stderr failed, or null: the stderr kept ends there (a note; stdout and the exit decide). */
  #stderrFailure: string | null = null;
  #killScheduled = false;
  #settled = false;
  #stopWaiting: () => void = () => {};
  readonly #stopped = new Promise<"stop">((resolve) => (this.#stopWaiting = () => resolve("stop")));

  constructor(child: LiveChild, options: RunOptions, { drainMaxMs = DRAIN_MAX_MS }: EngineBounds) {
    this.#child = child;
    this.#options = options;
    this.#drainMaxMs = drainMaxMs;
    this.#cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#keepOnOverflow = options.onOverflow === "truncate";
  }

  /** Watch the run until it is over, and return what it produced. */
  async finished(): Promise<RunOutcome> {
    trackLive(this.#child);
    const pipes = Promise.all([this.#readStdout(), this.#readStderr()]).then(() => {
      this.#pipesClosed = true;
      return "closed" as const;
    });
    this.#startTimer(this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#options.signal?.addEventListener("abort", this.#onAbort, { once: true });
    // An abort that fired while the child was being started has no event left to deliver.
    if (this.#options.signal?.aborted) this.#onAbort();
    const exited = this.#child.exited.then((exit) => {
      this.#exit = exit;
      // A SIGKILL the guard had not sent yet is the tool's own end (the OOM killer, say), even when a leftover
      // filled stdout before the status was read: a failure the cut output must not hide. So is the 137 a shell
      // or wrapper reports for it.
      if ((exit.signal === "SIGKILL" || exit.code === 137) && !this.#killSent) this.#exitedFirst = true;
      return "exited" as const;
    });
    let pipesClosed = false;
    try {
      if ((await Promise.race([exited, this.#stopped])) === "exited") {
        // Usually the pipes are closed by now: nothing to wait for, no timer to set.
        pipesClosed = this.#pipesClosed || await this.#drain(pipes);
      }
    } finally {
      this.#settled = true;
      this.#cancelTimeout();
      for (const timer of this.#timers) clearTimeout(timer);
      this.#options.signal?.removeEventListener("abort", this.#onAbort);
    }
    // Before the release, which cancels the pipes (and so ends the stdout read). A leftover that held stdout
    // but neither wrote after the tool exited, nor left a line unfinished, nor may still write (a daemon it
    // started, asleep) cut nothing.
    const stdoutHeld = this.#exit !== null && this.#killedBy === null && !this.#stdoutDone &&
      (this.#stdoutAfterExit || this.#lineUnfinished() || this.#leftoverMayWrite());
    this.#release(pipesClosed);
    const overflowed = this.#killedBy === "overflow" && !this.#keepOnOverflow;
    return {
      exit: this.#exit,
      stdout: overflowed ? new Uint8Array(0) : join(this.#stdout, this.#stdoutBytes),
      wroteStdout: this.#stdoutBytes > 0,
      stderr: this.#stderr.bytes(),
      killedBy: this.#killedBy,
      abortReason: this.#abortReason,
      exitedFirst: this.#exitedFirst,
      stdoutHeld,
      stdoutFailure: this.#stdoutFailure,
      stderrFailure: this.#stderrFailure,
      treeEnded: this.#killScheduled,
    };
  }

  /** Count stdout bytes as they arrive; past the cap, end the tree and stop reading (never buffer more). */
  async #readStdout(): Promise<void> {
    const source = this.#child.stdout;
    for (;;) {
      const chunk = await source.read();
      if (chunk === null) {
        this.#stdoutDone = true;
        this.#stdoutFailure = source.failure();
        // The output is withheld now, whatever follows; a tool still writing could block on a pipe no one
        // reads (a failed stream need not close it) and be waited on until the time limit, hiding why.
        if (this.#stdoutFailure !== null) this.#endTree();
        return;
      }
      if (this.#draining) {
        this.#lastData = performance.now();
        this.#stdoutAfterExit = true;
      }
      if (this.#stdoutBytes + chunk.length > this.#cap) {
        if (this.#keepOnOverflow) this.#stdout.push(chunk.subarray(0, this.#cap - this.#stdoutBytes));
        else this.#stdout.length = 0;
        this.#stdoutBytes = this.#cap;
        if (this.#killedBy === null) {
          this.#killedBy = "overflow";
          this.#exitedFirst = this.#exit !== null;
        }
        this.#stdoutDone = true;
        this.#endTree();
        source.cancel();
        return;
      }
      this.#stdout.push(chunk);
      this.#stdoutBytes += chunk.length;
    }
  }

  /**
   * Whether a process left in the tree may still write: one holding stdout or stderr (or started by a holder,
   * which may wait for it) that is runnable or in disk wait (starved), or stopped; any such one, when a pipe
   * still open has no holder among them. A sleeping one is a daemon, and one that closed both cannot add to
   * the output. Where `/proc` cannot tell (macOS, Windows), none is assumed to.
   */
  #leftoverMayWrite(): boolean {
    const state = this.#leftover === undefined ? this.#lookAtLeftovers() : this.#leftover;
    return state === "busy" || state === "stopped";
  }

  /** What the processes left in the tree are doing; after the first look, a cheap recheck while one is busy. */
  #lookAtLeftovers(): TreeState | null {
    // (as many of our pipes as are open must be found held, or a holder is not among the processes found)
    const openPipes = Number(!this.#stdoutDone) + Number(!this.#stderrDone);
    // The gap is trusted while recent, and only for as many open pipes as it was found with.
    const gap = openPipes === this.#gapPipes && performance.now() - this.#gapAt < GAP_TRUST_MS;
    const look = this.#child.treeState({ known: this.#leftoverPids, openPipes, gap });
    this.#leftoverPids = look.pids;
    if (look.gap !== undefined) {
      this.#gapAt = look.gap ? performance.now() : -Infinity;
      this.#gapPipes = openPipes;
    }
    return look.state;
  }

  /** Whether stdout so far ends inside a line (some bytes, the last of them no line break). */
  #lineUnfinished(): boolean {
    const last = this.#stdout.at(-1);
    return last !== undefined && last.length > 0 && last[last.length - 1] !== 0x0a;
  }

  /** Keep a bounded tail of stderr. */
  async #readStderr(): Promise<void> {
    const source = this.#child.stderr;
    for (;;) {
      const chunk = await source.read();
      if (chunk === null) {
        this.#stderrDone = true;
        // A failed read is only a note: stdout and the exit status decide, so the tool is not ended for it.
        // Whether our end of the pipe closes is the runtime's (a failed stream cannot be cancelled): Deno and Bun
        // close it (Bun on Windows too, within 100 ms: seen under Wine 10), so a tool still writing meets a broken
        // pipe; where it stayed open, the tool would block on it and the run end at the time limit, a failure
        // whose detail says the read failed.
        this.#stderrFailure = source.failure();
        return;
      }
      if (this.#draining) this.#lastData = performance.now();
      this.#stderr.push(chunk);
    }
  }

  /** The run's time limit: a tool still running then is ended; one that finished only has its drain cut short. */
  #startTimer(timeoutMs: number): void {
    this.#cancelTimeout = afterDelay(timeoutMs, () => {
      if (this.#exit === null) this.#endBecause("timeout");
      else this.#stopWaiting();
    });
  }

  readonly #onAbort = (): void => {
    // End first: nothing about the reason may keep the tree alive.
    this.#endBecause("abort");
    this.#abortReason = this.#options.signal ? abortReasonText(this.#options.signal) : "";
  };

  /**
   * End the tree because of a timeout or an abort. Once the tool has exited, a timeout only cuts the drain
   * short (the timer does that); an abort still ends what the tool left running and settles at once.
   */
  #endBecause(why: "timeout" | "abort"): void {
    if (this.#killedBy !== null || this.#settled || (this.#exit !== null && why !== "abort")) return;
    this.#killedBy = why;
    this.#endTree();
    if (this.#exit !== null) this.#stopWaiting();
  }

  /**
   * End the tree: SIGTERM now, SIGKILL after the grace period, then stop waiting shortly after. The SIGKILL
   * timer is not cleared on settle: a descendant that ignores SIGTERM must still die.
   */
  #endTree(): void {
    if (this.#killScheduled) return;
    this.#killScheduled = true;
    const child = this.#child;
    child.killTree("SIGTERM");
    unrefTimeout(() => {
      this.#killSent = true;
      child.killTree("SIGKILL");
      untrackLive(child.pid);
    }, KILL_GRACE_MS);
    if (!this.#settled) this.#timers.push(setTimeout(this.#stopWaiting, KILL_GRACE_MS + SETTLE_SLACK_MS));
  }

  /**
   * The child is gone and the pipes are still open: wait for end-of-file on both, but not for a descendant
   * that holds them open and stays silent. After a quiet spell with stdout still held, a process of the tree
   * that is runnable or in disk wait is waited for a while more (up to the drain's bound): a writer starved of
   * the CPU or of memory may still write what the caller would otherwise lose. A tree asleep (a daemon) or
   * stopped ends the drain at once. Returns whether the pipes closed.
   */
  async #drain(pipes: Promise<"closed">): Promise<boolean> {
    this.#draining = true;
    this.#lastData = performance.now();
    const until = this.#lastData + this.#drainMaxMs;
    let confirmed = false;
    /** What the last look at the leftovers saw (null: none yet, or nothing known). */
    let lastLook: TreeState | null = null;
    for (;;) {
      const left = until - performance.now();
      if (left <= 0) return false;
      let wait = Math.min(left, DRAIN_IDLE_MS - (performance.now() - this.#lastData));
      if (wait <= 0) {
        // Idle long enough. On a starved machine the timer and pending reads can become ready together,
        // so give pending reads one more short turn before cutting the pipes.
        if (!confirmed) {
          confirmed = true;
          wait = 15;
        } else if (this.#stdoutDone) {
          return false; // only stderr is held: nothing of the result can be missing
        } else {
          // Still quiet with stdout held: a tree asleep (a daemon) or stopped ends the drain now; a busy one
          // (a writer starved of the CPU or of memory) may yet write, so it is looked at again shortly.
          const previous = lastLook;
          this.#leftover = lastLook = this.#lookAtLeftovers();
          const again = recheckAfter(this.#leftover, left, previous);
          if (again === null) return false;
          wait = again;
        }
      } else confirmed = false;
      // On the shared timer: the end-of-file usually follows the exit at once, and a timer of its own per run
      // cost more than the rest of the drain.
      let cancel = () => {};
      const idle = new Promise<"idle">((resolve) => (cancel = afterDelay(wait, () => resolve("idle"))));
      const r = await Promise.race([pipes, this.#stopped, idle]);
      cancel();
      if (r === "closed") return true;
      this.#leftover = undefined; // what was seen is stale now: asked again if needed
      if (r === "stop") return false;
    }
  }

  /** After settling: whatever still holds our pipes is an orphan of this run; otherwise forget the tree. */
  #release(pipesClosed: boolean): void {
    if (!pipesClosed) {
      this.#child.stdout.cancel();
      this.#child.stderr.cancel();
      this.#endTree();
    } else if (!this.#killScheduled) {
      untrackLive(this.#child.pid);
    }
  }
}

/** The last `max` bytes of a stream, kept in few chunks. */
class TailBuffer {
  readonly #max: number;
  #chunks: Uint8Array[] = [];
  #bytes = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Add a chunk, dropping whole chunks that fell out of the tail. */
  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - this.#chunks[0].length >= this.#max) this.#bytes -= this.#chunks.shift()!.length;
    if (this.#chunks.length > 64) {
      this.#chunks = [this.bytes()];
      this.#bytes = this.#chunks[0].length;
    }
  }

  /** The tail: at most `max` bytes. */
  bytes(): Uint8Array {
    return tail(join(this.#chunks, this.#bytes), this.#max);
  }
}

function tail(bytes: Uint8Array, max: number): Uint8Array {
  return bytes.length <= max ? bytes : bytes.subarray(bytes.length - max);
}

function join(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0].length === total) return chunks[0];
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c.subarray(0, total - offset), offset);
    offset += c.length;
    if (offset >= total) break;
  }
  return out;
}

/** The runner behind the public `runTool` (`entry.ts`, which documents it and loads this module on first call). */
export async function runTool(
  command: string,
  args: readonly ToolArg[] = [],
  given: RunOptions = {},
  bounds: EngineBounds = {},
): Promise<ToolResult> {
  // Read once, here: the checks and the run see the same values, and a read that throws is the caller's fault.
  const taken = takeOptions(given ?? {});
  const options: RunOptions = typeof taken === "string" ? { onResult: logOf(given) } : taken;
  let result: ToolResult;
  try {
    result = await execute(command, args, options, typeof taken === "string" ? taken : null, bounds);
  } catch (error) {
    // A bug in the guard must still not look like an answer.
    result = guardFailure("internal error in the guard", error, options.maxDetail);
  }
  // Zero items (kind empty) hold nothing the model reads: nothing to scan. (The kind, not the items' length
  // read again: a protocol function's array may be a Proxy whose read throws, and runTool never rejects.)
  if (options.scanOutput && result.kind === "results") {
    result = await scanned(result, options, bounds.loadScanner ?? loadScanner);
  }
  await logResult(options.onResult, result, command, args, options.cwd);
  return result;
}

/** The scanner, loaded on the first scan so that importing the guard does not load it for callers who never scan. */
function loadScanner(): Promise<Pick<typeof import("../_scan/scan.ts"), "scan">> {
  return import("../_scan/scan.ts");
}

/**
 * A success with the scanner's findings on its items in `warnings`. Output the caller asked to have scanned
 * and that could not be is withheld as a failure: empty `warnings` must mean "scanned, nothing found", never
 * "not scanned". It is kind `protocol` with the tool's exit code, duration and stderr kept, since the tool did
 * run: whether its items cannot be read as text (only a `protocol` function can return such, e.g. an object
 * whose getter throws) or the scanner will not load (the detail says it is the guard's), never `spawn`, which
 * would tell the model and the log that the tool never started. A protocol function's items are scanned as
 * JSON writes them, the text the model is shown.
 */
async function scanned(
  result: ToolSuccess,
  { maxDetail, protocol }: RunOptions,
  load: () => Promise<Pick<typeof import("../_scan/scan.ts"), "scan">>,
): Promise<ToolResult> {
  // Items a protocol function built may be other than the JSON the model is shown (a toJSON, a boxed string):
  // those are scanned as JSON writes them. JSON items are that already.
  const built = typeof protocol === "function";
  let loaded = false;
  let why: string;
  try {
    const { scan } = await load();
    const copyAsSent = built ? (await import("../_common/json.ts")).copyAsSent : undefined;
    loaded = true;
    // Every string as the tool wrote it, line breaks and all (JSON text would turn them into `\n`); keys
    // written in words too, since the model reads them as much as the values. Items a protocol function
    // built may share parts or hold cycles (JSON never does, and a copy as sent keeps them): each part is then
    // walked once.
    // (holes kept: JSON writes null there, no text, and a parser's sparse arrays then cost what they hold)
    const items = copyAsSent === undefined ? result.items : copyAsSent(result.items, { holes: true });
    const text = stringsIn(items, { keys: "worded", once: built }).join("\n");
    result.warnings = scan(text, { context: "tool_output" }).findings;
    return result;
  } catch (error) {
    // (cut like a read error's reason: a long one must not push out what the run said of itself, below)
    const reason = failedBecause(error);
    why = loaded ? reason : `the guard could not load its scanner: ${reason}`;
  }
  return failure(
    "protocol",
    `its output could not be scanned for injected instructions, so it is withheld: ${why}`,
    {
      exitCode: result.exitCode,
      signal: result.signal,
      durationMs: result.durationMs,
      stderr: result.stderr,
      maxDetail: maxDetail ?? DEFAULT_MAX_DETAIL,
      note: result.detail, // what the run said of itself (a failed stderr read) still holds
    },
  );
}

/*
 * One timer for the time limits of every run. Arming and clearing a timer per run costs Deno about as much
 * as the rest of the guard's own work on a fast tool; here back-to-back runs arm nothing: the one timer is
 * set for the earliest deadline and, when it fires, runs what is due and is set again for the next. It does
 * not keep the host alive (a run's child does).
 */

interface Deadline {
  at: number;
  fn: () => void;
}

const pending = new Set<Deadline>();
/** When the timer is set to fire (Infinity: not set). */
let armedAt = Infinity;

/**
 * Call `fn` once `ms` milliseconds have passed, unless cancelled first.
 *
 * @param ms Milliseconds from now.
 * @param fn What to run then.
 * @returns The function that cancels it.
 */
export function afterDelay(ms: number, fn: () => void): () => void {
  const deadline: Deadline = { at: performance.now() + ms, fn };
  pending.add(deadline);
  if (deadline.at < armedAt) arm(deadline.at);
  return () => pending.delete(deadline);
}

let generation = 0;

function arm(at: number): void {
  armedAt = at;
  const mine = ++generation; // a timer set earlier for a later deadline finds itself stale and does nothing
  unrefTimeout(() => {
    if (mine === generation) fire();
  }, Math.max(0, at - performance.now()));
}

function fire(): void {
  armedAt = Infinity;
  const now = performance.now();
  const due: Deadline[] = [];
  let next = Infinity;
  for (const deadline of pending) {
    // Timers may fire a little early: within a millisecond counts as due.
    if (deadline.at <= now + 1) due.push(deadline);
    else next = Math.min(next, deadline.at);
  }
  for (const deadline of due) pending.delete(deadline);
  if (next < Infinity) arm(next);
  for (const deadline of due) deadline.fn();
}
