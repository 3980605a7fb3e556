/**
 * The engine behind `runTool` and `classify`: spawning, reading and classifying a tool run.
 *
 * @module
 */

import { spawnChild, trackLive, unrefTimeout, untrackLive } from "./runtime.ts";
import { scan } from "../_scan/scan.ts";
import { isModelValue, prepareArgs, type ToolArg } from "./args.ts";
import {
  classify,
  DEFAULT_MAX_DETAIL,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_TIMEOUT_MS,
  failure,
  type KilledBy,
  STDERR_TAIL_BYTES,
  toBytes,
} from "./classify.ts";
import type { RunOptions, ScanFinding, ToolCallRecord, ToolResult } from "../types.ts";

/** Milliseconds between SIGTERM and SIGKILL when the guard ends a process tree. */
export const KILL_GRACE_MS = 200;
/**
 * After the child exits, how long the guard waits for more output before it stops reading pipes a
 * descendant still holds open (the wait restarts whenever bytes arrive).
 */
export const DRAIN_IDLE_MS = 150;
/** After SIGKILL, how long the guard waits for the exit status before it settles anyway. */
const SETTLE_SLACK_MS = 60;

// ---------------------------------------------------------------------------------------------------------
// runTool
// ---------------------------------------------------------------------------------------------------------

function checkOptions(options: RunOptions): string | null {
  const { timeoutMs, maxOutputBytes, maxDetail, encoding, protocol, onOverflow } = options;
  if (
    timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)
  ) {
    return `invalid option timeoutMs ${String(timeoutMs)}: give a number of milliseconds above 0`;
  }
  if (
    maxOutputBytes !== undefined &&
    !(typeof maxOutputBytes === "number" && Number.isSafeInteger(maxOutputBytes) && maxOutputBytes > 0)
  ) {
    return `invalid option maxOutputBytes ${String(maxOutputBytes)}: give a whole number of bytes above 0`;
  }
  if (maxDetail !== undefined && !(typeof maxDetail === "number" && maxDetail >= 1)) {
    return `invalid option maxDetail ${String(maxDetail)}: give a number of characters of at least 1`;
  }
  if (encoding !== undefined) {
    try {
      new TextDecoder(encoding);
    } catch {
      return `invalid option encoding ${
        JSON.stringify(encoding)
      }: give a WHATWG encoding label such as "utf-8"`;
    }
  }
  if (
    protocol !== undefined && typeof protocol !== "function" &&
    !["envelope", "json", "jsonl", "lines", "text"].includes(protocol)
  ) {
    return `invalid option protocol ${
      JSON.stringify(protocol)
    }: use envelope, json, jsonl, lines, text or a function`;
  }
  if (onOverflow !== undefined && onOverflow !== "fail" && onOverflow !== "truncate") {
    return `invalid option onOverflow ${JSON.stringify(onOverflow)}: use "fail" or "truncate"`;
  }
  return null;
}

function itemsText(items: unknown[]): string {
  return items.map((item) => {
    if (typeof item === "string") return item;
    try {
      return JSON.stringify(item) ?? String(item);
    } catch {
      return String(item);
    }
  }).join("\n");
}

function abortReasonText(signal: AbortSignal): string {
  const reason = signal.reason as unknown;
  if (reason instanceof Error) {
    return reason.name === "AbortError" ? reason.message : `${reason.name}: ${reason.message}`;
  }
  return reason === undefined ? "" : String(reason);
}

async function execute(command: string, args: readonly ToolArg[], options: RunOptions): Promise<ToolResult> {
  const started = performance.now();
  const problem = typeof command !== "string" || command === ""
    ? "command must be a non-empty string"
    : checkOptions(options);
  const elapsed = () => performance.now() - started;
  const notRun = (spawnError: string, durationMs?: number) =>
    classify({ spawnError, exitCode: null, signal: null, stdout: "", durationMs }, options);
  if (problem) return notRun(problem);
  const prepared = prepareArgs(args);
  if (!prepared.ok) return notRun(prepared.reason);
  if (options.signal?.aborted) {
    const reason = abortReasonText(options.signal);
    return classify({
      exitCode: null,
      signal: null,
      stdout: "",
      killedBy: "abort",
      abortReason: `before the tool started${reason ? `: ${reason}` : ""}`,
      durationMs: elapsed(),
    }, options);
  }
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
  const child = attempt.child;
  trackLive(child.pid);

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const keepOnOverflow = options.onOverflow === "truncate";
  let killedBy: KilledBy | null = null;
  let abortReason = "";
  let exit: { code: number | null; signal: string | null } | null = null;
  let lastData = performance.now();
  let stopWaiting: () => void = () => {};
  const stopped = new Promise<"stop">((resolve) => (stopWaiting = () => resolve("stop")));
  const timers: ReturnType<typeof setTimeout>[] = [];
  let killScheduled = false;

  // End the tree: SIGTERM now, SIGKILL after the grace period, then stop waiting shortly after. The SIGKILL
  // timer is not cleared on settle: a descendant that ignores SIGTERM must still die.
  let settled = false;
  const endTree = () => {
    if (killScheduled) return;
    killScheduled = true;
    child.killTree("SIGTERM");
    unrefTimeout(() => {
      child.killTree("SIGKILL");
      untrackLive(child.pid);
    }, KILL_GRACE_MS);
    if (!settled) timers.push(setTimeout(stopWaiting, KILL_GRACE_MS + SETTLE_SLACK_MS));
  };
  const endBecause = (why: KilledBy) => {
    if (killedBy !== null || exit !== null) return;
    killedBy = why;
    endTree();
  };

  // stdout: count bytes as they arrive; past the cap, end the tree and stop reading (never buffer more).
  const chunks: Uint8Array[] = [];
  let total = 0;
  const readStdout = (async () => {
    for (;;) {
      const chunk = await child.stdout.read();
      if (chunk === null) return;
      lastData = performance.now();
      if (total + chunk.length > cap) {
        if (keepOnOverflow) chunks.push(chunk.subarray(0, cap - total));
        else chunks.length = 0;
        total = cap;
        if (killedBy === null) killedBy = "overflow";
        endTree();
        child.stdout.cancel();
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    }
  })();
  // stderr: keep a bounded tail.
  let errChunks: Uint8Array[] = [];
  let errBytes = 0;
  const readStderr = (async () => {
    for (;;) {
      const chunk = await child.stderr.read();
      if (chunk === null) return;
      lastData = performance.now();
      errChunks.push(chunk);
      errBytes += chunk.length;
      while (errBytes - errChunks[0].length >= STDERR_TAIL_BYTES) errBytes -= errChunks.shift()!.length;
      if (errChunks.length > 64) {
        errChunks = [tail(join(errChunks, errBytes), STDERR_TAIL_BYTES)];
        errBytes = errChunks[0].length;
      }
    }
  })();

  timers.push(setTimeout(() => {
    if (exit === null) endBecause("timeout");
    else stopWaiting(); // the tool itself finished in time; only the drain is cut short
  }, timeoutMs));
  const onAbort = () => {
    abortReason = options.signal ? abortReasonText(options.signal) : "";
    endBecause("abort");
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // An abort that fired while the child was being started has no event left to deliver.
  if (options.signal?.aborted) onAbort();

  const exited = child.exited.then((e) => {
    exit = e;
    return "exited" as const;
  });
  const pipes = Promise.all([readStdout, readStderr]).then(() => "closed" as const);
  let pipesClosed = false;
  try {
    if ((await Promise.race([exited, stopped])) === "exited") {
      // Drain: the child is gone; wait for end-of-file, but not for a descendant that holds the pipes open
      // and stays silent.
      lastData = Math.max(lastData, performance.now());
      let confirmed = false;
      for (;;) {
        let wait = DRAIN_IDLE_MS - (performance.now() - lastData);
        if (wait <= 0) {
          // Idle long enough. On a starved machine the timer and pending reads can become ready together,
          // so give pending reads one more short turn before cutting the pipes.
          if (confirmed) break;
          confirmed = true;
          wait = 15;
        } else confirmed = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const idle = new Promise<"idle">((resolve) => (timer = setTimeout(() => resolve("idle"), wait)));
        const r = await Promise.race([pipes, stopped, idle]);
        clearTimeout(timer);
        if (r === "closed") {
          pipesClosed = true;
          break;
        }
        if (r === "stop") break;
      }
    }
  } finally {
    settled = true;
    for (const t of timers) clearTimeout(t);
    options.signal?.removeEventListener("abort", onAbort);
  }
  if (!pipesClosed) {
    child.stdout.cancel();
    child.stderr.cancel();
    endTree(); // whatever still holds our pipes is an orphan of this run
  } else if (!killScheduled) {
    untrackLive(child.pid);
  }
  const final = exit as { code: number | null; signal: string | null } | null;
  const stderr = tail(join(errChunks, errBytes), STDERR_TAIL_BYTES);
  // Started through a launcher (setsid) that could not exec the tool: that is a failure to start, not an exit.
  const notStarted = final && killedBy === null ? child.startFailure?.(final, total > 0, stderr) : null;
  if (notStarted) {
    return notRun(`could not start ${JSON.stringify(command)}${where}: ${notStarted}`, elapsed());
  }
  return classify({
    exitCode: final?.code ?? null,
    signal: final?.signal ?? null,
    stdout: killedBy === "overflow" && !keepOnOverflow ? new Uint8Array(0) : join(chunks, total),
    stderr,
    killedBy,
    abortReason,
    durationMs: elapsed(),
  }, options);
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

/**
 * Run `command` with `args` (no shell, ever) and classify the outcome into one of seven kinds. Never rejects
 * and never throws for anything a tool or the OS does: a program that cannot start is kind `spawn`, a hung
 * one `timeout`, and so on. Invalid options are reported as kind `spawn` with a detail saying what to fix,
 * and nothing runs.
 *
 * @param command Program name (looked up on `PATH`) or path.
 * @param args Arguments; mark model-chosen values with {@linkcode fromModel}.
 * @param options See {@linkcode RunOptions}.
 * @returns The classified result; `items === null` exactly when `ok === false`.
 *
 * @example
 * ```ts
 * import { runTool } from "@toolguard/toolguard/guard";
 * const result = await runTool("./no-such-tool");
 * console.log(result.ok, result.kind, result.items); // false "spawn" null
 * ```
 */
export async function runTool(
  command: string,
  args: readonly ToolArg[] = [],
  options: RunOptions = {},
): Promise<ToolResult> {
  let result: ToolResult;
  try {
    result = await execute(command, args, options ?? {});
  } catch (error) {
    // A bug in the guard must still not look like an answer.
    result = failure(
      "spawn",
      `internal error in the guard: ${error instanceof Error ? error.message : error}`,
      {
        exitCode: null,
        signal: null,
        durationMs: 0,
        stderr: "",
        maxDetail: options?.maxDetail ?? DEFAULT_MAX_DETAIL,
      },
    );
  }
  if (options?.scanOutput && result.ok) {
    try {
      const warnings: ScanFinding[] = scan(itemsText(result.items), { context: "tool_output" }).findings;
      result.warnings = warnings;
    } catch {
      // The scanner never throws on text; if it ever did, the result stands without warnings.
    }
  }
  if (options?.onResult) {
    const record: ToolCallRecord = {
      command,
      args: Array.isArray(args) ? args.map((a) => (isModelValue(a) ? a.value : String(a))) : [],
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    };
    try {
      await options.onResult(result, record);
    } catch {
      // Logging must never change the outcome.
    }
  }
  return result;
}
