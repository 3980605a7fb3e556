/**
 * From a finished process to a `ToolResult`: the pure half of the guard, one of seven kinds.
 *
 * @module
 */
import { byteCount } from "../_common/bytes.ts";
import {
  clip,
  errorText,
  givenValue,
  isRecord,
  MAX_TIMER_MS,
  MAX_TREE_NOTE,
  objectArg,
  optionsArg,
  orList,
} from "../_common/values.ts";
import type { FailureKind, Protocol, RunOptions, ToolFailure, ToolResult, ToolSuccess } from "../types.ts";

/** Default `timeoutMs`: 10 seconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default `maxOutputBytes`: 8 MiB of stdout. */
export const DEFAULT_MAX_OUTPUT_BYTES: number = 8 * 1024 * 1024;
/** Default `maxDetail`: 400 characters. */
export const DEFAULT_MAX_DETAIL = 400;
/** Bytes of stderr kept (the tail). */
export const STDERR_TAIL_BYTES = 8192;

/** The named stdout protocols (a {@linkcode Protocol} may also be a parsing function). */
export type ProtocolName = Exclude<Protocol, (stdout: string) => unknown[]>;
/** Every {@linkcode ProtocolName}; the check below fails to compile if `Protocol` gains a name this lacks. */
export const PROTOCOL_NAMES = [
  "envelope",
  "json",
  "jsonl",
  "lines",
  "text",
] as const satisfies readonly ProtocolName[];
const protocolNamesComplete: [Exclude<ProtocolName, typeof PROTOCOL_NAMES[number]>] extends [never] ? true
  : never = true;
void protocolNamesComplete;

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
  /**
   * For `killedBy: "overflow"`: the exit status is the tool's own doing (a failure the cut output must not
   * hide): it arrived before the guard ended the tree, or it is a SIGKILL (or exit code 137) from before the
   * guard sent one.
   * Absent: only a SIGTERM, SIGKILL or SIGPIPE after the kill is the guard's.
   */
  exitedFirst?: boolean;
  /**
   * The tool exited, but a process it left running still held stdout open when the guard stopped reading
   * (after a short drain): what was read may be incomplete, for `lines` and `jsonl` a last line without its
   * newline is dropped, and nothing whole read is `protocol`, never an empty answer.
   */
  stdoutHeld?: boolean;
  /**
   * Set when reading stdout failed before its end (an I/O error on the pipe): why. What was read may be only
   * part of what the tool wrote, so the run is a failure (`protocol`), never results nor an empty answer.
   * Any value other than `undefined` or `null` (an `Error` caught from the read, say) is taken as a failure.
   */
  stdoutReadError?: string;
  /**
   * Set when reading stderr failed before its end: why. Only a note in the detail, never a failure by itself:
   * stderr holds no result, and the tool's stdout and exit status still decide (a tool that died of the closed
   * pipe fails by that status). Any value other than `undefined` or `null` is taken, as for stdout.
   */
  stderrReadError?: string;
  /**
   * Set when the guard ended the process tree and may have missed part of it: how (on Linux without a readable
   * `/proc`: "found by its process group only ..."). The detail says "the guard ended the process tree, " and
   * then this note, once: in the sentence of a timeout, an abort or an output overflow, and otherwise right
   * after the sentence, before any other note and before the tool's output, so a long stderr never pushes it out
   * of `maxDetail`. With no `killedBy` and no `stdoutReadError`, the guard ended what the tool left running
   * holding its pipes after it exited, and the detail says that first. Any value other than `undefined` or
   * `null` is taken as text, trimmed (a blank note is none) and cut at 200 characters.
   */
  treeNote?: string;
  /**
   * Set when the guard could not signal the process tree (Deno with a partial `--allow-run`: signalling a
   * process by its pid needs run permission for every program, and on Windows running `taskkill`): `"tool"`
   * when it ended the tool alone through the child's own handle, `"none"` when it reached no process (the
   * tool had exited). The detail then says "the guard ended the tool but not its process tree" or "the guard
   * could not end the process tree" where it would say "the guard ended the process tree", followed by the
   * {@linkcode ProcessOutcome.treeNote} (why).
   * Any other value is taken as absent.
   */
  killReached?: "tool" | "none";
  /** Wall-clock milliseconds from spawn to settle. */
  durationMs?: number;
}

/** The options {@linkcode classify} uses (the same names and defaults as {@linkcode RunOptions}). */
export type ClassifyOptions = Pick<
  RunOptions,
  "timeoutMs" | "maxOutputBytes" | "onOverflow" | "maxDetail" | "encoding" | "protocol" | "exitCodes"
>;

/**
 * The options as read once (inherited ones too, as a plain read finds them) into a plain object that the checks
 * and the run then read alone: an option built in code whose getter answers one value to the check and another
 * to the run ("lines", then "csv") is never used unchecked. `run`: read `runTool`'s own options too, else only
 * those of {@linkcode ClassifyOptions}. `exitCodes` is taken as its own entries, each read once
 * ({@linkcode OwnEntries}), `env` as a copy ({@linkcode envCopy}), an `encoding` object as its text
 * ({@linkcode labelText}). A read that throws (a getter, a Proxy's trap) is the caller's fault and comes back
 * as a sentence saying so, for `runTool` to refuse and {@linkcode classify} to throw. (Each option read by its
 * name: a loop over the names costs `classify` more than the rest of its checks.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOptions } from "./classify.ts";
 *
 * let reads = 0;
 * const options = { get protocol() { return reads++ === 0 ? "lines" : "csv"; } };
 * assert.equal((readOptions(options, false) as { protocol: string }).protocol, "lines");
 * assert.equal(reads, 1);
 * const throwing = { get maxDetail(): number { throw new Error("no"); } };
 * assert.equal(readOptions(throwing, false), "invalid options: reading maxDetail threw: no");
 * ```
 */
export function readOptions(options: object, run: boolean): RunOptions | string {
  const o = options as RunOptions;
  let at = "timeoutMs";
  try {
    const timeoutMs = o.timeoutMs;
    at = "maxOutputBytes";
    const maxOutputBytes = o.maxOutputBytes;
    at = "onOverflow";
    const onOverflow = o.onOverflow;
    at = "maxDetail";
    const maxDetail = o.maxDetail;
    at = "encoding";
    const encoding = labelText(o.encoding) as string | undefined;
    at = "protocol";
    const protocol = o.protocol;
    at = "exitCodes";
    const exitCodes = ownEntries(o.exitCodes) as RunOptions["exitCodes"];
    const shared = { timeoutMs, maxOutputBytes, onOverflow, maxDetail, encoding, protocol, exitCodes };
    // (every option named: these fail to compile when an option is added without its read)
    if (!run) return shared satisfies Record<keyof ClassifyOptions, unknown>;
    at = "signal";
    const signal = o.signal;
    at = "cwd";
    const cwd = o.cwd;
    at = "env";
    const env = envCopy(o.env) as RunOptions["env"];
    at = "clearEnv";
    const clearEnv = o.clearEnv;
    at = "stdin";
    const stdin = o.stdin;
    at = "scanOutput";
    const scanOutput = o.scanOutput;
    at = "onResult";
    const onResult = o.onResult;
    return {
      timeoutMs,
      maxOutputBytes,
      onOverflow,
      maxDetail,
      encoding,
      protocol,
      exitCodes,
      signal,
      cwd,
      env,
      clearEnv,
      stdin,
      scanOutput,
      onResult,
    } satisfies Record<keyof RunOptions, unknown>;
  } catch (error) {
    const key = entryKey(error);
    const what = key === undefined ? at : `exitCodes entry ${givenValue(key)}`;
    return `invalid options: reading ${what} threw: ${clip(errorText(error), 200)}`;
  }
}

/**
 * The key of the `exitCodes` entry whose read threw, when `error` is an {@linkcode EntryReadError}. Never throws:
 * the value thrown is the caller's (a Proxy whose prototype cannot be read), and runTool never rejects.
 */
function entryKey(error: unknown): string | undefined {
  try {
    return error instanceof EntryReadError ? error.key : undefined;
  } catch {
    return undefined;
  }
}

/** A read of an `exitCodes` entry that threw: its key, and the error's text as its message. */
class EntryReadError extends Error {
  constructor(readonly key: string, error: unknown) {
    super(errorText(error));
  }
}

/**
 * `exitCodes` as read once: each own entry (enumerable or not, as a plain object's are all read) as its key and
 * the value read, one after the other. The check and the run read these alone; kept as a list, not copied into
 * an object, since listing an object's keys again costs more than the rest of `classify`.
 */
class OwnEntries {
  constructor(readonly keysAndValues: readonly unknown[]) {}

  /** Whether `code` is mapped to "empty". */
  empty(code: number): boolean {
    const key = String(code);
    const kv = this.keysAndValues;
    for (let i = 0; i < kv.length; i += 2) if (kv[i] === key) return kv[i + 1] === "empty";
    return false;
  }
}

/**
 * An encoding label given as an object (a boxed string, one with a `toString`) made text once, here, where the
 * decoders made text of it at each use (the check's, then the run's, which could differ or throw); anything else
 * as it is.
 */
function labelText(encoding: unknown): unknown {
  return (typeof encoding === "object" && encoding !== null) || typeof encoding === "function"
    ? String(encoding)
    : encoding;
}

/**
 * `env` as read once: a copy of its own enumerable entries (those the check and the spawn read), each read once,
 * so that a getter cannot show the check a string and the spawn another value; with no prototype, so that
 * `__proto__` stays a name like any other. Anything that is no plain object as it is, for the check to refuse.
 */
function envCopy(env: unknown): unknown {
  if (!isRecord(env)) return env;
  const copy: Record<string, unknown> = Object.create(null);
  for (const name of Object.keys(env)) copy[name] = env[name];
  return copy;
}

/**
 * `exitCodes` as {@linkcode OwnEntries}; anything that is no plain object as it is (a Map or a Set as an empty
 * one of its kind: their entries are no properties), for the check to refuse.
 */
function ownEntries(exitCodes: unknown): unknown {
  if (!isRecord(exitCodes)) return exitCodes;
  if (exitCodes instanceof Map) return new Map();
  if (exitCodes instanceof Set) return new Set();
  const keysAndValues: unknown[] = [];
  for (const code of Object.getOwnPropertyNames(exitCodes)) {
    try {
      keysAndValues.push(code, exitCodes[code]);
    } catch (error) {
      throw new EntryReadError(code, error);
    }
  }
  return new OwnEntries(keysAndValues);
}

/**
 * What is wrong with the options {@linkcode classify} and `runTool` share, as a sentence saying what to give, or
 * null when they are all usable: one check for both, so that an option `runTool` refuses is never read another
 * way by `classify`. It takes the options as {@linkcode readOptions} read them, once, as both callers do: the
 * run then reads that snapshot alone, so what passed is what runs. Of options not so read, only an `exitCodes`
 * can be told apart (it is no {@linkcode OwnEntries}: the run would not read it as its own entries), and is
 * refused; any other is checked as given, a getter read once here and again by whoever runs. An `exitCodes`
 * entry must be an exit code of its own meaning `"empty"`, and never 0, which already means success (the CLI
 * refuses `--empty-exit 0` likewise). An inherited entry is neither read nor refused: refusing it would refuse
 * every call once anything set a number key on `Object.prototype`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { classifyOptionsProblem, readOptions } from "./classify.ts";
 *
 * const read = (options: object) => readOptions(options, false) as Parameters<typeof classifyOptionsProblem>[0];
 * assert.equal(classifyOptionsProblem(read({ protocol: "lines", exitCodes: { 1: "empty" } })), null);
 * assert.match(classifyOptionsProblem(read({ exitCodes: { 1: "emtpy" } })) ?? "", /^invalid option exitCodes/);
 * // the caller's own object, not read once: refused
 * assert.match(classifyOptionsProblem({ exitCodes: { 1: "empty" } }) ?? "", /read once through readOptions/);
 * ```
 */
export function classifyOptionsProblem(options: ClassifyOptions): string | null {
  const { timeoutMs, maxOutputBytes, maxDetail, encoding, protocol, onOverflow } = options;
  if (
    timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)
  ) {
    return `invalid option timeoutMs ${
      givenValue(timeoutMs)
    }: give a number of milliseconds above 0, at most ${MAX_TIMER_MS}`;
  }
  if (
    maxOutputBytes !== undefined &&
    !(typeof maxOutputBytes === "number" && Number.isSafeInteger(maxOutputBytes) && maxOutputBytes > 0)
  ) {
    return `invalid option maxOutputBytes ${
      givenValue(maxOutputBytes)
    }: give a whole number of bytes above 0`;
  }
  if (maxDetail !== undefined && !isMaxDetail(maxDetail)) {
    return `invalid option maxDetail ${givenValue(maxDetail)}: give a number of characters of at least 1`;
  }
  if (encoding !== undefined) {
    try {
      wholeDecoder(encoding); // (kept for the run's decode: a label's decoder is made once)
    } catch {
      return `invalid option encoding ${givenValue(encoding)}: give a WHATWG encoding label such as "utf-8"`;
    }
  }
  if (
    protocol !== undefined && typeof protocol !== "function" &&
    !(PROTOCOL_NAMES as readonly unknown[]).includes(protocol)
  ) {
    return `invalid option protocol ${givenValue(protocol)}: use ${
      orList([...PROTOCOL_NAMES, "a function"])
    }`;
  }
  if (onOverflow !== undefined && onOverflow !== "fail" && onOverflow !== "truncate") {
    return `invalid option onOverflow ${givenValue(onOverflow)}: use "fail" or "truncate"`;
  }
  return exitCodesProblem(options.exitCodes);
}

/**
 * Whether `key` is an exit status as a runtime reports it, written as JavaScript writes the number: 32 bits at
 * most (Windows keeps all 32, signed or not; POSIX 8), with no leading zero ("01") or fraction ("1.0").
 */
function isExitStatus(key: string): boolean {
  return /^-?[1-9]\d{0,9}$/.test(key) && Number(key) >= -0x80000000 && Number(key) <= 0xffffffff;
}

/** Whether `value` is a usable `maxDetail`: a number of characters of at least 1. */
function isMaxDetail(value: unknown): value is number {
  return typeof value === "number" && value >= 1;
}

/**
 * The `maxDetail` a detail is cut at: the one given when it is usable, else the default, so that the refusal
 * of an unusable one (a 0, a string, a BigInt) is never cut to nothing by it nor throws.
 */
function maxDetailOf(value: unknown): number {
  return isMaxDetail(value) ? value : DEFAULT_MAX_DETAIL;
}

/**
 * What is wrong with `exitCodes`, or null. A key that is no exit code as the status is written ("01", "one"),
 * a meaning misspelt ("emtpy"), or exit 0 (success already) would be ignored without a word.
 */
function exitCodesProblem(exitCodes: unknown): string | null {
  if (exitCodes === undefined) return null;
  if (!isRecord(exitCodes)) {
    return `invalid option exitCodes ${givenValue(exitCodes)}: give an object such as { 1: "empty" }`;
  }
  // A Map's entries, or a Set's codes, are no properties of it: they would never be read.
  if (exitCodes instanceof Map || exitCodes instanceof Set) {
    return `invalid option exitCodes ${
      exitCodes instanceof Map ? "Map" : "Set"
    }: give a plain object such as { 1: "empty" }`;
  }
  // (a plain object not taken as OwnEntries: options not read through readOptions, which the run would read
  // again, getters and all)
  if (!(exitCodes instanceof OwnEntries)) {
    return "invalid option exitCodes: the options were not read once through readOptions; check what it read";
  }
  const kv = exitCodes.keysAndValues;
  for (let i = 0; i < kv.length; i += 2) {
    const problem = exitCodeProblem(kv[i] as string, kv[i + 1]);
    if (problem !== null) return problem;
  }
  return null;
}

/** What is wrong with one `exitCodes` entry, or null. */
function exitCodeProblem(code: string, meaning: unknown): string | null {
  if (meaning === "empty" && code !== "0" && isExitStatus(code)) return null;
  // (the sentence made only for a wrong entry: echoing a value costs more than the checks)
  const entry = `invalid option exitCodes { ${givenValue(code)}: ${givenValue(meaning)} }`;
  return code === "0"
    ? `${entry}: exit code 0 already means success; give the other codes, such as { 1: "empty" }`
    : `${entry}: give exit codes meaning "empty", such as { 1: "empty" }`;
}

export function excerpt(text: string, max = 80): string {
  return JSON.stringify(clip(text.trim().replace(/\s+/g, " "), max));
}

function decode(bytes: Uint8Array | string, encoding: string, stream = false): string {
  if (typeof bytes === "string") return bytes.charCodeAt(0) === 0xfeff ? bytes.slice(1) : bytes;
  // With stream: true an incomplete character at the end is held back (and discarded): used to cut at a
  // character boundary. Such a decoder keeps state, so it is never reused.
  if (stream) return newDecoder(encoding).decode(bytes, { stream });
  const decoder = wholeDecoder(encoding); // an invalid label throws here, even for no bytes
  return bytes.length === 0 ? "" : decoder.decode(bytes);
}

function newDecoder(encoding: string): TextDecoder {
  // fatal: false turns bad bytes into U+FFFD; ignoreBOM: false drops a leading BOM.
  return new TextDecoder(encoding, { fatal: false, ignoreBOM: false });
}

/**
 * Decoders by label for whole decodes, which leave no state behind: constructing a decoder costs Deno more
 * than decoding a tool's usual few hundred bytes.
 */
const wholeDecoders = new Map<string, TextDecoder>();

function wholeDecoder(encoding: string): TextDecoder {
  let decoder = wholeDecoders.get(encoding);
  if (decoder === undefined) {
    decoder = newDecoder(encoding);
    if (wholeDecoders.size >= 16) wholeDecoders.clear();
    wholeDecoders.set(encoding, decoder);
  }
  return decoder;
}

function stderrText(stderr: Uint8Array | string | undefined, encoding: string): string {
  if (stderr === undefined) return "";
  let text = decode(stderr, encoding);
  if (text.charCodeAt(0) === 0xfffd) text = text.slice(1); // a character cut by the tail window
  return text;
}

function lastLines(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  return lines.slice(-3).join(" | ");
}

/** The detail of a result whose stdout a leftover process still held open when the guard stopped reading. */
const HELD_DETAIL =
  "a process the tool left running still held stdout open when the guard stopped reading, " +
  "so the output may be incomplete";

/** Bytes of stdout read for a failure's detail: enough for the last lines, never the whole output. */
const STDOUT_TAIL_BYTES = 2048;

/**
 * Why a tool that failed says it failed: the last lines of stderr, or of stdout when stderr is empty (many
 * linters and test runners report there), as `; stderr: ...` / `; stdout: ...`, or "" when both are empty.
 */
function outputSummary(stderr: string, stdout: Uint8Array | string, encoding: string): string {
  const err = lastLines(stderr);
  if (err !== "") return `; stderr: ${err}`;
  const bytes = toBytes(stdout);
  let text = decode(bytes.subarray(Math.max(0, bytes.length - STDOUT_TAIL_BYTES)), encoding);
  if (bytes.length > STDOUT_TAIL_BYTES && text.charCodeAt(0) === 0xfffd) text = text.slice(1);
  const out = lastLines(text);
  return out === "" ? "" : `; stdout: ${out}`;
}

interface Common {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  stderr: string;
  maxDetail: number;
  /** What the detail says after its own sentence, before any summary of the output ("" or absent: nothing). */
  note?: string;
}

/**
 * A failure's result. `detail` is the guard's sentence; `summary` (the tool's last lines) comes after the note,
 * so that the cut at `maxDetail` takes the summary first, then the note, and the sentence last.
 */
export function failure(kind: FailureKind, detail: string, c: Common, summary = ""): ToolFailure {
  return {
    ok: false,
    kind,
    items: null,
    exitCode: c.exitCode,
    signal: c.signal,
    detail: clip(withNote(detail, c.note) + summary, c.maxDetail),
    durationMs: c.durationMs,
    warnings: [],
    truncated: false,
    stderr: c.stderr,
  };
}

/**
 * `options[name]` as the caller gave it, read once, or undefined where the options are not an object or the read
 * throws (a getter, a Proxy's trap): for the few options a refused or failed run still honours (its detail's
 * bound, its log hook), whose usual read already refused the options.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { optionGiven } from "./classify.ts";
 *
 * assert.equal(optionGiven({ maxDetail: 40 }, "maxDetail"), 40);
 * assert.equal(optionGiven(null, "maxDetail"), undefined);
 * assert.equal(optionGiven({ get maxDetail(): number { throw new Error("no"); } }, "maxDetail"), undefined);
 * ```
 */
export function optionGiven(options: unknown, name: keyof RunOptions): unknown {
  try {
    return (options as RunOptions | null | undefined)?.[name];
  } catch {
    return undefined;
  }
}

/**
 * The result when the guard itself failed around a run (a bug in it, a runner that would not load): kind
 * `spawn`, so it can never look like an answer. `what` says what failed; the error's message follows. `maxDetail`:
 * the caller's option as given (the default when it is unusable).
 */
export function guardFailure(what: string, error: unknown, maxDetail?: unknown): ToolFailure {
  return failure("spawn", `${what}: ${errorText(error)}`, {
    exitCode: null,
    signal: null,
    durationMs: 0,
    stderr: "",
    maxDetail: maxDetailOf(maxDetail),
  });
}

function success(items: unknown[], detail: string, truncated: boolean, c: Common): ToolSuccess {
  return {
    ok: true,
    kind: items.length === 0 ? "empty" : "results",
    items,
    exitCode: c.exitCode,
    signal: c.signal,
    detail: clip(withNote(detail, c.note), c.maxDetail),
    durationMs: c.durationMs,
    warnings: [],
    truncated,
    stderr: c.stderr,
  };
}

/** A detail's sentence followed by a note, when there is one. */
function withNote(detail: string, note: string | undefined): string {
  return !note ? detail : detail === "" ? note : `${detail}; ${note}`;
}

/**
 * Why a read or a load failed (`error`: what was thrown or passed, any value), said briefly: cut at 200
 * characters, so a long reason never pushes out what the run says of itself, and "no reason given" for none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { failedBecause } from "./classify.ts";
 *
 * assert.equal(failedBecause(new Error("EIO")), "EIO");
 * assert.equal(failedBecause(""), "no reason given");
 * assert.ok(failedBecause("x".repeat(1000)).length <= 200);
 * ```
 */
export function failedBecause(error: unknown): string {
  return clip(errorText(error), 200) || "no reason given";
}

/**
 * The note for a failed read of stderr ({@linkcode ProcessOutcome.stderrReadError}), or "" when there was none.
 * A note, never a failure: stdout and the exit status decide, and a good answer is not thrown away for its
 * diagnostics.
 */
function stderrReadNote(readError: unknown): string {
  if (readError === undefined || readError === null) return "";
  const why = failedBecause(readError);
  // The point first: a long reason, or notes before it, may be cut at maxDetail, and the cut takes the reason.
  return `stderr was read only in part: reading it failed (${why})`;
}

/**
 * {@linkcode ProcessOutcome.treeNote} as text: "" when absent; any other value taken as text (a boxed string is
 * its text, and a runner's slip must not throw), cut like a read error's reason so it cannot push out the notes
 * after it.
 */
function treeNoteOf(note: unknown): string {
  return note === undefined || note === null ? "" : clip(errorText(note).trim(), MAX_TREE_NOTE);
}

/**
 * What a result says when the guard ended the process tree (or tried to: how far it reached, from
 * {@linkcode ProcessOutcome.killReached}), with how it may have missed part of it ("": not).
 */
function treeEnded(treeNote: string, reached: unknown): string {
  const said = reached === "tool"
    ? "the guard ended the tool but not its process tree"
    : reached === "none"
    ? "the guard could not end the process tree"
    : "the guard ended the process tree";
  return treeNote === "" ? said : `${said}, ${treeNote}`;
}

/**
 * The fields of a failure whose sentence says the tree was ended (a timeout, an abort, an overflow): only the
 * read note follows it. Built in those branches only: classify runs once per tool run.
 */
function afterTreeSaid(common: Common, readNote: string): Common {
  return { ...common, note: readNote };
}

/** Why the guard ended the tree of a tool it did not stop (a success, the tool's own exit status). */
const LEFTOVER_HELD = "a process the tool left running held its output open";

type Parsed = { ok: true; items: unknown[] } | { ok: false; kind: "protocol" | "refused"; detail: string };

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: errorText(error) };
  }
}

export function describeJsonType(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/**
 * The detail of a refused envelope: `CODE: message` from its `error`, else what its `ok` was (missing, or a
 * value other than true), so the model is not told the tool said false when it did not.
 */
function refusalDetail(envelope: { ok?: unknown; error?: unknown }): string {
  const error = envelope.error;
  if (typeof error === "string" && error.trim() !== "") return error;
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const codeText = typeof code === "string" || typeof code === "number" ? String(code) : "REFUSED";
    const messageText = typeof message === "string" ? message : JSON.stringify(error);
    return `${codeText}: ${messageText}`;
  }
  if (envelope.ok === false) return "REFUSED: the tool answered ok: false without an error message";
  if (!("ok" in envelope)) return "REFUSED: the envelope has no ok field, so it is not an answer";
  const ok = envelope.ok;
  const shown = typeof ok === "string"
    ? `the string ${JSON.stringify(clip(ok, 40))}`
    : typeof ok === "object" && ok !== null
    ? describeJsonType(ok)
    : String(ok);
  return `REFUSED: the envelope's ok is ${shown}, not true`;
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

/**
 * `prefix` and then `quoted` (what the tool said: a refusal's message, a protocol function's error), the quoted
 * part cut so the whole fits in `room` (never below 40 characters of it): the guard's notes come after it in the
 * detail, and a long message from the tool must not push them out of `maxDetail`.
 */
function quote(prefix: string, quoted: string, room: number): string {
  return prefix + clip(quoted, Math.max(40, room - prefix.length));
}

/**
 * The items on stdout, or why there are none. `room`: the most a sentence quoting the tool may take of the
 * detail so that the notes after it keep theirs ({@linkcode quote}).
 */
function parseStdout(text: string, protocol: Protocol, room: number): Parsed {
  if (typeof protocol === "function") {
    let items: unknown;
    try {
      items = protocol(text);
    } catch (error) {
      const detail = quote("the protocol function rejected stdout: ", errorText(error), room);
      return { ok: false, kind: "protocol", detail };
    }
    try {
      if (!Array.isArray(items)) {
        return {
          ok: false,
          kind: "protocol",
          detail: `the protocol function returned ${describeJsonType(items)}`,
        };
      }
      // Its length read here, where a throw is the output's (a Proxy's trap), not a fault of the guard.
      if (typeof items.length === "number") return { ok: true, items };
      throw new TypeError("its length is not a number");
    } catch (error) {
      return {
        ok: false,
        kind: "protocol",
        detail: quote("the protocol function returned a list that cannot be read: ", errorText(error), room),
      };
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
      if (envelope.ok !== true) {
        return { ok: false, kind: "refused", detail: quote("", refusalDetail(envelope), room) };
      }
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
 * whether and why the guard ended it) to a {@linkcode ToolResult}. `runTool` (run_tool.ts) uses it; it is exported
 * for runners of your own and for tests. It never throws for anything the tool did; an outcome or options of
 * the wrong shape (written by the caller) are a `TypeError` saying what to give, the options checked as `runTool`
 * checks them (which refuses them as `spawn`, nothing run).
 *
 * @example Silence is never an answer
 * ```ts
 * import assert from "node:assert/strict";
 * import { classify } from "@toolguard/toolguard/guard";
 *
 * const empty = classify({ exitCode: 0, signal: null, stdout: '{"ok":true,"items":[]}' });
 * assert.equal(empty.kind, "empty");
 * assert.deepEqual(empty.items, []);
 * // A tool that printed nothing said nothing: that is a protocol failure, not "found nothing".
 * const silent = classify({ exitCode: 0, signal: null, stdout: "" });
 * assert.equal(silent.kind, "protocol");
 * assert.equal(silent.items, null);
 * ```
 *
 * @example Classify the outcome of a runner of your own
 * ```ts
 * import assert from "node:assert/strict";
 * import { classify } from "@toolguard/toolguard/guard";
 *
 * // One path per line, and exit 1 means "no match" (as grep and rg use it).
 * const found = classify(
 *   { exitCode: 0, signal: null, stdout: "src/a.ts\nsrc/b.ts\n" },
 *   { protocol: "lines", exitCodes: { 1: "empty" } },
 * );
 * assert.deepEqual(found.items, ["src/a.ts", "src/b.ts"]);
 * const none = classify({ exitCode: 1, signal: null, stdout: "" }, { protocol: "lines", exitCodes: { 1: "empty" } });
 * assert.equal(none.kind, "empty");
 * // Killed by a signal: a failure whatever stdout held.
 * const killed = classify({ exitCode: null, signal: "SIGKILL", stdout: "src/a.ts\n" }, { protocol: "lines" });
 * assert.equal(killed.ok, false);
 * assert.equal(killed.kind, "exit");
 * ```
 *
 * @example An option that would be ignored is refused
 * ```ts
 * import assert from "node:assert/strict";
 * import { classify } from "@toolguard/toolguard/guard";
 *
 * // A misspelt meaning would leave grep's "no match" a failure without a word.
 * assert.throws(
 *   () => classify({ exitCode: 1, signal: null, stdout: "" }, { exitCodes: { 1: "emtpy" as never } }),
 *   /^TypeError: classify\(\): invalid option exitCodes \{ "1": "emtpy" \}: give exit codes meaning "empty"/,
 * );
 * ```
 */
export function classify(outcome: ProcessOutcome, options?: ClassifyOptions): ToolResult {
  checkOutcome(outcome);
  const given = readOptions(optionsArg(options, "classify"), false);
  const problem = typeof given === "string" ? given : classifyOptionsProblem(given);
  if (problem !== null) throw new TypeError(`classify(): ${problem}`);
  return classifyOutcome(outcome, given as ClassifyOptions);
}

/**
 * {@linkcode classify} for `runTool`, which checked the options already: with options it refused, the outcome
 * carries the refusal as its `spawnError` and only `maxDetail` is read (the default when it is the one refused).
 */
export function classifyOutcome(outcome: ProcessOutcome, options: ClassifyOptions): ToolResult {
  const maxDetail = maxDetailOf(options.maxDetail);
  const encoding = options.encoding ?? "utf-8";
  const tree = treeNoteOf(outcome.treeNote);
  const readNote = stderrReadNote(outcome.stderrReadError);
  const readError: unknown = outcome.stdoutReadError;
  // (any value but none: a caller may pass the Error it caught, and a cut output must not pass for all of it)
  const readFailed = readError !== undefined && readError !== null;
  // The tree's note once: in the sentence of a kill that names the tree, else as the first note; a tree the
  // guard ended for no reason the sentence gives held the tool's pipes after it exited, and the note says so.
  const reached = outcome.killReached === "tool" || outcome.killReached === "none"
    ? outcome.killReached
    : undefined;
  const treeSaid = tree === "" && reached === undefined ? "" : treeEnded(tree, reached);
  const leftover = treeSaid !== "" && !outcome.killedBy && !readFailed;
  const common: Common = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    durationMs: Math.round(outcome.durationMs ?? 0),
    stderr: "",
    maxDetail,
    note: withNote(
      leftover ? `${LEFTOVER_HELD}${reached === "none" ? ", and" : ", so"} ${treeSaid}` : treeSaid,
      readNote,
    ),
  };
  try {
    common.stderr = stderrText(outcome.stderr, encoding);
  } catch (error) {
    return failure("spawn", `invalid encoding ${JSON.stringify(encoding)}: ${String(error)}`, common);
  }
  if (outcome.spawnError !== undefined) return failure("spawn", outcome.spawnError, common);
  if (outcome.killedBy === "timeout") {
    const ms = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return failure(
      "timeout",
      `timed out after ${ms} ms; ${treeEnded(tree, reached)}`,
      afterTreeSaid(common, readNote),
    );
  }
  if (outcome.killedBy === "abort") {
    // (cut like a read error's reason: a caller's long reason must not push out the rest, or the notes)
    const reason = outcome.abortReason ? ` (${clip(errorText(outcome.abortReason), 200)})` : "";
    return failure(
      "timeout",
      `aborted by the caller's AbortSignal${reason}; ${treeEnded(tree, reached)}`,
      afterTreeSaid(common, readNote),
    );
  }
  const protocol = options.protocol ?? "envelope";
  const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const truncate = outcome.killedBy === "overflow" && options.onOverflow === "truncate" &&
    (protocol === "lines" || protocol === "text");
  if (outcome.killedBy === "overflow" && !truncate) {
    return failure(
      "protocol",
      `stdout exceeded ${byteCount(cap)}; ${treeEnded(tree, reached)}`,
      afterTreeSaid(common, readNote),
    );
  }
  if (readFailed) {
    // Before the exit status: the guard ends a tool still running once the read failed, so a signal or code
    // after it may be that end, not the tool's answer.
    const why = failedBecause(readError);
    const read = byteCount(toBytes(outcome.stdout).length);
    return failure(
      "protocol",
      `reading stdout failed after ${read} (${why}), so the output may be incomplete and is withheld`,
      common,
      outputSummary(common.stderr, "", encoding),
    );
  }
  // A cut output excuses only the guard's own kill, never a status the tool ended with by itself.
  if (!(truncate && endedByGuard(outcome))) {
    if (outcome.signal !== null) {
      const why = outputSummary(common.stderr, outcome.stdout, encoding);
      return failure("exit", `killed by signal ${outcome.signal}`, common, why);
    }
    if (outcome.exitCode !== 0) {
      if (outcome.exitCode !== null && mapsToEmpty(options.exitCodes, outcome.exitCode)) {
        return success([], "", false, common);
      }
      const code = outcome.exitCode === null ? "an unknown status" : `exit code ${outcome.exitCode}`;
      return failure(
        "exit",
        `the tool ended with ${code}`,
        common,
        outputSummary(common.stderr, outcome.stdout, encoding),
      );
    }
  }
  const held = outcome.stdoutHeld === true && !truncate;
  // Said with a held stdout, which names the leftover already: the tree's note need not say what held it.
  const c = held ? { ...common, note: withNote(treeSaid, readNote) } : common;
  let text: string;
  try {
    text = truncate
      ? decode(toBytes(outcome.stdout).subarray(0, cap), encoding, true) // cut at a character boundary
      : decode(outcome.stdout, encoding);
    // A line cut at the limit, or one the leftover process had not finished, is not an item.
    if ((truncate && protocol === "lines") || (held && (protocol === "lines" || protocol === "jsonl"))) {
      text = text.slice(0, text.lastIndexOf("\n") + 1);
    }
  } catch (error) {
    return failure("spawn", `invalid encoding ${JSON.stringify(encoding)}: ${String(error)}`, common);
  }
  // What follows the sentence (the guard's notes) keeps its room; with none, the sentence may take all of it.
  const notes = withNote(held ? HELD_DETAIL : "", c.note);
  const room = notes === "" ? Infinity : Math.max(Math.ceil(maxDetail / 2), maxDetail - 2 - notes.length);
  const parsed = parseStdout(text, protocol, room);
  if (!parsed.ok) {
    return failure(parsed.kind, held ? `${parsed.detail}; ${HELD_DETAIL}` : parsed.detail, c);
  }
  if (held) {
    if (parsed.items.length === 0) {
      // Nothing whole read while a leftover may still write (it wrote a part, or on Linux it was busy or
      // stopped) must not read as "found nothing": that is all `[]` means.
      const read = outcome.stdout.length > 0 ? "no whole item had ended" : "nothing had come on stdout yet";
      return failure("protocol", `${read}; ${HELD_DETAIL}`, c); // (a string is empty when its bytes are)
    }
    return success(parsed.items, HELD_DETAIL, true, c);
  }
  if (truncate) {
    if (parsed.items.length === 0) {
      // A cut output with nothing whole in it must not read as "found nothing".
      return failure("protocol", `stdout exceeded ${byteCount(cap)} before one whole item ended`, common);
    }
    return success(parsed.items, `stdout was cut at ${byteCount(cap)}; there may be more`, true, common);
  }
  return success(parsed.items, "", false, common);
}

/**
 * Whether the guard's own overflow kill explains how the process ended: after the kill, a SIGTERM or SIGKILL
 * (the signals the guard sends), a SIGPIPE (the guard closed the pipe it stopped reading), the exit code a
 * handler gives for one of them (128 + its number: 143, 137, 141, as the JVM and shells do), or no status at
 * all (the guard stopped waiting for it). Any other status, or one that came first, is the tool's: a failure
 * is never passed off as a cut result.
 */
function endedByGuard(outcome: ProcessOutcome): boolean {
  if (outcome.exitedFirst === true) return false;
  const { signal, exitCode } = outcome;
  return signal === null ? exitCode === null || GUARD_EXIT_CODES.has(exitCode) : GUARD_SIGNALS.has(signal);
}

/** The signals by which a tree the guard ended at the output cap dies. */
const GUARD_SIGNALS: ReadonlySet<string> = new Set(["SIGTERM", "SIGKILL", "SIGPIPE"]);
/** Their exit codes when a handler or a shell reports them as a code (128 + 15, 9, 13). */
const GUARD_EXIT_CODES: ReadonlySet<number> = new Set([143, 137, 141]);

/** Whether `exitCodes` maps `code` to "empty" by an entry of its own: one inherited is never read. */
function mapsToEmpty(exitCodes: unknown, code: number): boolean {
  if (exitCodes instanceof OwnEntries) return exitCodes.empty(code);
  // (options not read through readOptions: a test's, or a runner's of its own calling classifyOutcome)
  const given = exitCodes as RunOptions["exitCodes"];
  return given !== undefined && Object.hasOwn(given, code) && given[code] === "empty";
}

/** A `TypeError` unless `outcome` is an object whose stdout (and stderr, when given) is bytes or text. */
function checkOutcome(outcome: ProcessOutcome): void {
  objectArg(outcome, "classify", "outcome");
  for (const name of ["stdout", "stderr"] as const) {
    const value = outcome[name];
    if (value === undefined && name === "stderr") continue;
    if (typeof value !== "string" && !(value instanceof Uint8Array)) {
      throw new TypeError(`classify(): outcome.${name} must be bytes or text, got ${givenValue(value)}`);
    }
  }
}

/** Bytes as they are, or text encoded as UTF-8. */
export function toBytes(input: string | Uint8Array): Uint8Array {
  return typeof input === "string" ? new TextEncoder().encode(input) : input;
}
