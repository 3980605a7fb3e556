/**
 * Run a command-line tool and classify its outcome so that "the tool failed" can never be read as "the tool
 * found nothing". Every run ends in exactly one of seven kinds: `spawn`, `timeout`, `exit`, `protocol`,
 * `refused` (failures, `items === null`) or `empty`, `results` (successes, `items` is an array).
 *
 * The guard never uses a shell, ends the whole process tree on timeout, abort or output overflow, keeps memory
 * bounded whatever the tool prints, and refuses model-supplied arguments that a tool would read as options
 * (mark them with {@linkcode fromModel}).
 *
 * @example Run a tool and read its outcome
 * ```ts
 * import { fromModel, runTool } from "./guard.ts";
 *
 * const runtime = (globalThis as { Deno?: { execPath(): string } }).Deno;
 * const command = runtime ? runtime.execPath() : process.execPath;
 * const script = 'console.log(JSON.stringify({ ok: true, items: [Deno.args[0] ?? process.argv[2]] }))';
 * const args = runtime ? ["eval", script, fromModel("needle")] : ["-e", script, fromModel("needle")];
 * const result = await runTool(command, args, { timeoutMs: 20_000 });
 * if (result.ok) console.log(result.kind, result.items); // "results" [ "needle" ]
 * else console.log(`failed (${result.kind}): ${result.detail}`);
 * ```
 *
 * @example A model-chosen value that looks like an option is refused before anything runs
 * ```ts
 * import { fromModel, runTool } from "./guard.ts";
 *
 * const result = await runTool("rg", ["--json", fromModel("--pre=./evil.sh"), "."]);
 * console.log(result.kind, result.items); // "spawn" null
 * ```
 *
 * @module
 */

import { spawnChild, trackLive, unrefTimeout, untrackLive } from "./_runtime.ts";
import { scan } from "./scan.ts";
import type {
  FailureKind,
  Protocol,
  RunOptions,
  ScanFinding,
  ToolCallRecord,
  ToolFailure,
  ToolResult,
  ToolSuccess,
} from "./types.ts";

export type * from "./types.ts";

/** Default `timeoutMs`: 10 seconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default `maxOutputBytes`: 8 MiB of stdout. */
export const DEFAULT_MAX_OUTPUT_BYTES: number = 8 * 1024 * 1024;
/** Default `maxDetail`: 400 characters. */
export const DEFAULT_MAX_DETAIL = 400;
/** Bytes of stderr kept (the tail). */
export const STDERR_TAIL_BYTES = 8192;
/** Milliseconds between SIGTERM and SIGKILL when the guard ends a process tree. */
export const KILL_GRACE_MS = 200;
/**
 * After the child exits, how long the guard waits for more output before it stops reading pipes a
 * descendant still holds open (the wait restarts whenever bytes arrive).
 */
export const DRAIN_IDLE_MS = 150;
/** After SIGKILL, how long the guard waits for the exit status before it settles anyway. */
const SETTLE_SLACK_MS = 60;

/** A model-supplied argument, made by {@linkcode fromModel}. The guard checks it before anything runs. */
export interface ModelValue {
  /** Marks the value as chosen by a model. */
  readonly fromModel: true;
  /** The argument text. */
  readonly value: string;
}

/** One argument for {@linkcode runTool}: a plain string from the developer, or a value marked as the model's. */
export type ToolArg = string | ModelValue;

/**
 * Mark an argument value as chosen by a model. When the argument list is run, a marked value that starts with
 * `-` (so a tool would read it as an option, e.g. `--pre=./evil.sh`, `-o`, `-e`) is refused as kind `spawn`
 * before anything starts, unless it comes after a developer-written `--`.
 *
 * Numbers and booleans become their string form; other values their JSON text.
 *
 * @example
 * ```ts
 * import { fromModel, runTool } from "./guard.ts";
 * const pattern = "-e"; // what the model asked for
 * const unsafe = await runTool("rg", ["--json", fromModel(pattern), "src"]);
 * console.log(unsafe.kind); // "spawn": refused, nothing ran
 * // After a developer-written "--" the same value is only a search pattern:
 * const safeArgs = ["--json", "--", fromModel(pattern), "src"];
 * void safeArgs;
 * ```
 */
export function fromModel(value: unknown): ModelValue {
  const text = typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean" || typeof value === "bigint"
    ? String(value)
    : JSON.stringify(value) ?? String(value);
  return Object.freeze({ fromModel: true as const, value: text });
}

function isModelValue(arg: unknown): arg is ModelValue {
  return typeof arg === "object" && arg !== null && (arg as ModelValue).fromModel === true &&
    typeof (arg as ModelValue).value === "string";
}

/** Why the guard itself ended the process tree. */
export type KilledBy = "timeout" | "abort" | "overflow";

/** A finished process as {@linkcode classify} sees it. */
export interface ProcessOutcome {
  /** Set when the program could not be started (or the call was refused before starting): the reason. */
  spawnError?: string;
  /** Exit code, or null (never started, or ended by a signal). */
  exitCode: number | null;
  /** Name of the signal that ended the process, or null. */
  signal: string | null;
  /** Everything read from stdout (at most the cap when the guard cut it), as bytes or already-decoded text. */
  stdout: Uint8Array | string;
  /** The tail of stderr, as bytes or text. */
  stderr?: Uint8Array | string;
  /** Why the guard ended the tree, or null/absent when it did not. */
  killedBy?: KilledBy | null;
  /** For `killedBy: "abort"`: the abort reason, as text. */
  abortReason?: string;
  /** Wall-clock milliseconds from spawn to settle. */
  durationMs?: number;
}

/** The options {@linkcode classify} uses (the same names and defaults as {@linkcode RunOptions}). */
export type ClassifyOptions = Pick<
  RunOptions,
  "timeoutMs" | "maxOutputBytes" | "onOverflow" | "maxDetail" | "encoding" | "protocol" | "exitCodes"
>;

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return text.slice(0, Math.max(0, max));
  let cut = max - 1;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--; // do not split a surrogate pair
  return text.slice(0, cut) + "…";
}

function excerpt(text: string, max = 80): string {
  return JSON.stringify(clip(text.trim().replace(/\s+/g, " "), max));
}

function decode(bytes: Uint8Array | string, encoding: string, stream = false): string {
  if (typeof bytes === "string") return bytes.charCodeAt(0) === 0xfeff ? bytes.slice(1) : bytes;
  // fatal: false turns bad bytes into U+FFFD; ignoreBOM: false drops a leading BOM. With stream: true an
  // incomplete character at the end is held back (and discarded): used to cut at a character boundary.
  return new TextDecoder(encoding, { fatal: false, ignoreBOM: false }).decode(bytes, { stream });
}

function stderrText(stderr: Uint8Array | string | undefined, encoding: string): string {
  if (stderr === undefined) return "";
  let text = decode(stderr, encoding);
  if (text.charCodeAt(0) === 0xfffd) text = text.slice(1); // a character cut by the tail window
  return text;
}

function stderrSummary(stderr: string): string {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  return lines.slice(-3).join(" | ");
}

interface Common {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  stderr: string;
  maxDetail: number;
}

function failure(kind: FailureKind, detail: string, c: Common): ToolFailure {
  return {
    ok: false,
    kind,
    items: null,
    exitCode: c.exitCode,
    signal: c.signal,
    detail: clip(detail, c.maxDetail),
    durationMs: c.durationMs,
    warnings: [],
    truncated: false,
    stderr: c.stderr,
  };
}

function success(items: unknown[], detail: string, truncated: boolean, c: Common): ToolSuccess {
  return {
    ok: true,
    kind: items.length === 0 ? "empty" : "results",
    items,
    exitCode: c.exitCode,
    signal: c.signal,
    detail: clip(detail, c.maxDetail),
    durationMs: c.durationMs,
    warnings: [],
    truncated,
    stderr: c.stderr,
  };
}

type Parsed = { ok: true; items: unknown[] } | { ok: false; kind: "protocol" | "refused"; detail: string };

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function describeJsonType(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

function refusalDetail(error: unknown): string {
  if (typeof error === "string" && error.trim() !== "") return error;
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const codeText = typeof code === "string" || typeof code === "number" ? String(code) : "REFUSED";
    const messageText = typeof message === "string" ? message : JSON.stringify(error);
    return `${codeText}: ${messageText}`;
  }
  return "REFUSED: the tool answered ok: false without an error message";
}

/** One JSON document on stdout (`json`, `envelope`): empty or unparseable stdout is `protocol`. */
function parseDocument(
  trimmed: string,
  expected: string,
): { ok: true; value: unknown } | { ok: false; kind: "protocol"; detail: string } {
  if (trimmed === "") {
    return { ok: false, kind: "protocol", detail: `stdout is empty (expected ${expected})` };
  }
  const parsed = parseJson(trimmed);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    kind: "protocol",
    detail: `stdout is not valid JSON (${parsed.error}); it starts ${excerpt(trimmed)}`,
  };
}

function parseStdout(text: string, protocol: Protocol): Parsed {
  if (typeof protocol === "function") {
    try {
      const items = protocol(text);
      if (!Array.isArray(items)) {
        return {
          ok: false,
          kind: "protocol",
          detail: `the protocol function returned ${describeJsonType(items)}`,
        };
      }
      return { ok: true, items };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, kind: "protocol", detail: `the protocol function rejected stdout: ${message}` };
    }
  }
  const trimmed = text.trim();
  switch (protocol) {
    case "lines":
      return {
        ok: true,
        items: text.split("\n").map((l) => l.replace(/\r$/, "")).filter((l) => l.trim() !== ""),
      };
    case "text":
      return { ok: true, items: trimmed === "" ? [] : [trimmed] };
    case "jsonl": {
      if (trimmed === "") {
        return { ok: false, kind: "protocol", detail: "stdout is empty (expected JSON lines)" };
      }
      const items: unknown[] = [];
      const lines = text.split("\n");
      for (let i = 0; i < lines.length; i++) {
        if (lines[i].trim() === "") continue;
        const parsed = parseJson(lines[i]);
        if (!parsed.ok) {
          return {
            ok: false,
            kind: "protocol",
            detail: `line ${i + 1} of stdout is not valid JSON (${parsed.error}): ${excerpt(lines[i])}`,
          };
        }
        items.push(parsed.value);
      }
      return { ok: true, items };
    }
    case "json": {
      const parsed = parseDocument(trimmed, "JSON");
      if (!parsed.ok) return parsed;
      return { ok: true, items: Array.isArray(parsed.value) ? parsed.value : [parsed.value] };
    }
    default: {
      // "envelope"
      const parsed = parseDocument(trimmed, "a JSON envelope");
      if (!parsed.ok) return parsed;
      const value = parsed.value;
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return {
          ok: false,
          kind: "protocol",
          detail: `stdout is ${describeJsonType(value)}, not a JSON envelope object`,
        };
      }
      const envelope = value as { ok?: unknown; items?: unknown; error?: unknown };
      if (envelope.ok !== true) return { ok: false, kind: "refused", detail: refusalDetail(envelope.error) };
      if (!Array.isArray(envelope.items)) {
        return {
          ok: false,
          kind: "protocol",
          detail: `the envelope says ok: true but its items is ${
            "items" in envelope ? describeJsonType(envelope.items) : "missing"
          }, not an array`,
        };
      }
      return { ok: true, items: envelope.items };
    }
  }
}

/**
 * Classify a finished process: the pure function from what happened (exit code, signal, stdout, stderr,
 * whether and why the guard ended it) to a {@linkcode ToolResult}. {@linkcode runTool} uses it; it is exported
 * for runners of your own and for tests. It never throws.
 *
 * @example
 * ```ts
 * import { classify } from "./guard.ts";
 * const r = classify({ exitCode: 0, signal: null, stdout: '{"ok":true,"items":[]}' });
 * console.log(r.kind, r.items); // "empty" []
 * const s = classify({ exitCode: 0, signal: null, stdout: "" });
 * console.log(s.kind, s.items); // "protocol" null: silence is never an answer
 * ```
 */
export function classify(outcome: ProcessOutcome, options: ClassifyOptions = {}): ToolResult {
  const maxDetail = options.maxDetail ?? DEFAULT_MAX_DETAIL;
  const encoding = options.encoding ?? "utf-8";
  const common: Common = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    durationMs: Math.round(outcome.durationMs ?? 0),
    stderr: "",
    maxDetail,
  };
  try {
    common.stderr = stderrText(outcome.stderr, encoding);
  } catch (error) {
    return failure("spawn", `invalid encoding ${JSON.stringify(encoding)}: ${String(error)}`, common);
  }
  if (outcome.spawnError !== undefined) return failure("spawn", outcome.spawnError, common);
  if (outcome.killedBy === "timeout") {
    const ms = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return failure("timeout", `timed out after ${ms} ms; the guard ended the process tree`, common);
  }
  if (outcome.killedBy === "abort") {
    const reason = outcome.abortReason ? ` (${outcome.abortReason})` : "";
    return failure(
      "timeout",
      `aborted by the caller's AbortSignal${reason}; the guard ended the process tree`,
      common,
    );
  }
  const protocol = options.protocol ?? "envelope";
  const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const truncate = outcome.killedBy === "overflow" && options.onOverflow === "truncate" &&
    (protocol === "lines" || protocol === "text");
  if (outcome.killedBy === "overflow" && !truncate) {
    return failure("protocol", `stdout exceeded ${cap} bytes; the guard ended the process tree`, common);
  }
  if (!truncate) {
    if (outcome.signal !== null) {
      const tail = stderrSummary(common.stderr);
      return failure("exit", `killed by signal ${outcome.signal}${tail ? `; stderr: ${tail}` : ""}`, common);
    }
    if (outcome.exitCode !== 0) {
      if (outcome.exitCode !== null && options.exitCodes?.[outcome.exitCode] === "empty") {
        return success([], "", false, common);
      }
      const tail = stderrSummary(common.stderr);
      const code = outcome.exitCode === null ? "an unknown status" : `exit code ${outcome.exitCode}`;
      return failure("exit", `the tool ended with ${code}${tail ? `; stderr: ${tail}` : ""}`, common);
    }
  }
  let text: string;
  try {
    if (truncate) {
      text = decode(toBytes(outcome.stdout).subarray(0, cap), encoding, true); // cut at a character boundary
      if (protocol === "lines") text = text.slice(0, text.lastIndexOf("\n") + 1); // and at a line boundary
    } else {
      text = decode(outcome.stdout, encoding);
    }
  } catch (error) {
    return failure("spawn", `invalid encoding ${JSON.stringify(encoding)}: ${String(error)}`, common);
  }
  const parsed = parseStdout(text, protocol);
  if (!parsed.ok) return failure(parsed.kind, parsed.detail, common);
  if (truncate) {
    if (parsed.items.length === 0) {
      // A cut output with nothing whole in it must not read as "found nothing".
      return failure("protocol", `stdout exceeded ${cap} bytes before one whole item ended`, common);
    }
    return success(parsed.items, `stdout was cut at ${cap} bytes; there may be more`, true, common);
  }
  return success(parsed.items, "", false, common);
}

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

type PreparedArgs = { ok: true; argv: string[] } | { ok: false; reason: string };

function prepareArgs(args: readonly ToolArg[]): PreparedArgs {
  if (!Array.isArray(args)) return { ok: false, reason: "args must be an array of strings" };
  const argv: string[] = [];
  let afterDoubleDash = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let value: string;
    if (typeof arg === "string") {
      value = arg;
      if (arg === "--") afterDoubleDash = true;
    } else if (isModelValue(arg)) {
      value = arg.value;
      if (!afterDoubleDash && value.startsWith("-")) {
        return {
          ok: false,
          reason: `refused before running: argument ${i + 1} came from the model and starts with "-" ` +
            `(${excerpt(value, 60)}), so the tool would read it as an option; put it after a "--" argument ` +
            `or reject the call`,
        };
      }
    } else {
      return {
        ok: false,
        reason: `argument ${i + 1} is ${
          describeJsonType(arg)
        }: give strings, or values marked with fromModel()`,
      };
    }
    if (value.includes("\0")) {
      return {
        ok: false,
        reason: `argument ${i + 1} contains a NUL character, which no program can receive`,
      };
    }
    argv.push(value);
  }
  return { ok: true, argv };
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

function toBytes(input: string | Uint8Array): Uint8Array {
  return typeof input === "string" ? new TextEncoder().encode(input) : input;
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
 * import { runTool } from "./guard.ts";
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
