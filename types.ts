/**
 * The plain-data shapes shared by every part of toolguard: tool results, scan findings, validation findings
 * and verdicts. Everything here is a type; nothing runs.
 *
 * @example A result typed by hand: `items` is `[]` only when the tool ran and found nothing
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ToolResult } from "@toolguard/toolguard/types";
 *
 * const result: ToolResult = {
 *   ok: true, kind: "empty", items: [], exitCode: 0, signal: null, detail: "",
 *   durationMs: 3, warnings: [], truncated: false, stderr: "",
 * };
 * // The union keeps `ok` and `items` together: narrowing on `ok` gives an array, a failure gives null.
 * const count = (r: ToolResult): number | "failed" => r.ok ? r.items.length : "failed";
 * assert.equal(count(result), 0);
 * ```
 *
 * @module
 */

// ---------------------------------------------------------------------------------------------------------
// Scanning (scan.ts)
// ---------------------------------------------------------------------------------------------------------

/** The kinds of injected instruction the scanner recognises. */
export type ScanCategory =
  | "forced_tool_use"
  | "instruction_override"
  | "role_injection"
  | "hidden_text"
  | "exfiltration"
  | "option_injection";

/** One located piece of injected instruction. Offsets are JavaScript string indices into the scanned text. */
export interface ScanFinding {
  /** What kind of injection this is. */
  category: ScanCategory;
  /** Index of the first UTF-16 code unit of the match in the scanned text. */
  start: number;
  /** Index one past the last UTF-16 code unit of the match. */
  end: number;
  /**
   * A short, printable excerpt of the match (hidden characters made visible, as `\u{200B}`). One cut at
   * `maxExcerpt` ends in "..."; the cut falls between characters, never inside a surrogate pair or an escape.
   */
  excerpt: string;
  /** The name of the rule that fired, stable across releases. */
  rule: string;
}

/** What `scan()` returns: plain data, never an exception. */
export interface ScanResult {
  /** True when at least one finding is in a blocking category. */
  blocked: boolean;
  /** The distinct categories found, in first-seen order. */
  categories: ScanCategory[];
  /** Every finding, ordered by `start`. */
  findings: ScanFinding[];
}

/** Where the scanned text came from; some rules only apply in some places. */
export type ScanContext = "tool_output" | "user_text" | "tool_args" | "cli_arg";

/** Options for `scan()`. */
export interface ScanOptions {
  /** Where the text came from. Default `"tool_output"`. `option_injection` only runs for `"cli_arg"`. */
  context?: ScanContext;
  /** Only report these categories (an unknown one is a `TypeError`). Default: all that apply to the context. */
  categories?: readonly ScanCategory[];
  /** Longest excerpt in UTF-16 code units, its closing "..." included. Default 80. */
  maxExcerpt?: number;
}

/** A classifier's judgement of text the signature pass cleared. */
export interface ModelCheck {
  /** True when the classifier judged the text to carry injected instructions. */
  injection: boolean;
  /** The classifier's confidence from 0 to 1, when it gives one. */
  score?: number;
  /** A short reason, when the classifier gives one. */
  reason?: string;
  /** Set when the classifier itself failed (network, bad answer); the call is then judged by signatures alone. */
  error?: string;
}

/** An optional semantic second pass: given text, say whether it carries injected instructions. */
export type Classifier = (text: string, context: ScanContext) => Promise<ModelCheck>;

// ---------------------------------------------------------------------------------------------------------
// Running tools (guard.ts)
// ---------------------------------------------------------------------------------------------------------

/** The seven outcome kinds of a tool run, and no others. */
export type OutcomeKind = "spawn" | "timeout" | "exit" | "protocol" | "refused" | "empty" | "results";

/** Outcome kinds in which the tool did not run successfully. */
export type FailureKind = "spawn" | "timeout" | "exit" | "protocol" | "refused";

/** Fields every tool result carries. */
export interface ToolResultBase {
  /** The exit code, or null when the process never started or died by a signal. */
  exitCode: number | null;
  /** The signal that ended the process (e.g. `"SIGKILL"`), or null. */
  signal: string | null;
  /** A short human-readable explanation, at most `maxDetail` characters. Empty for plain successes. */
  detail: string;
  /** Wall-clock time from spawn to settle, in milliseconds. */
  durationMs: number;
  /** Scanner findings on the output (with `scanOutput`); empty when none. */
  warnings: ScanFinding[];
  /**
   * True when the output was cut: by `onOverflow: "truncate"` at the size limit, or because a process the
   * tool left behind still held stdout when the guard stopped reading and had written since the exit, left a
   * line unfinished, or (on Linux) was runnable or stopped rather than asleep (it, a process it started, or
   * one writing into a pipe it reads; any leftover, when a pipe still open has no holder among those found).
   * There may be more than `items` shows.
   */
  truncated: boolean;
  /** A bounded tail of what the tool wrote on stderr. */
  stderr: string;
}

/** A run that failed. `items` is `null`, never `[]`. */
export interface ToolFailure extends ToolResultBase {
  /** Always false for failures. */
  ok: false;
  /** Why it failed. */
  kind: FailureKind;
  /** Always null: a failure has no items. */
  items: null;
}

/** A run that succeeded. `items` is `[]` only when the tool ran and found nothing. */
export interface ToolSuccess extends ToolResultBase {
  /** Always true for successes. */
  ok: true;
  /** `"empty"` for zero items, `"results"` for one or more. */
  kind: "empty" | "results";
  /** What the tool answered. */
  items: unknown[];
}

/** The classified outcome of one tool run. Discriminate on `ok` or `kind`. */
export type ToolResult = ToolFailure | ToolSuccess;

/** How stdout is read. A function parses stdout itself; what it throws becomes `protocol`. */
export type Protocol = "envelope" | "json" | "jsonl" | "lines" | "text" | ((stdout: string) => unknown[]);

/** The call that produced a result, as handed to `onResult`. */
export interface ToolCallRecord {
  /** The command as given. */
  command: string;
  /** The arguments as given (model-supplied values as plain strings). */
  args: string[];
  /** The working directory, when one was given. */
  cwd?: string;
}

/** Options for `runTool`. All optional. */
export interface RunOptions {
  /** Milliseconds before the whole process tree is ended. Default 10 000. */
  timeoutMs?: number;
  /** A caller's abort signal; when it fires the tree is ended and the kind is `timeout`. */
  signal?: AbortSignal;
  /** Working directory for the tool. */
  cwd?: string;
  /**
   * Extra environment variables (merged over the host's unless `clearEnv`): the object's own enumerable entries,
   * each read once.
   */
  env?: Record<string, string>;
  /** Start from an empty environment instead of the host's. */
  clearEnv?: boolean;
  /** Bytes or text written to the tool's stdin, which is then closed. Default: no stdin (end-of-file). */
  stdin?: string | Uint8Array;
  /** Largest stdout in bytes before the tree is ended. Default 8 MiB. */
  maxOutputBytes?: number;
  /** What to do when stdout exceeds the cap: `"fail"` (default) or, for `lines`/`text`, `"truncate"`. */
  onOverflow?: "fail" | "truncate";
  /**
   * Longest `detail` in characters, at least 1 (a fraction counts as the whole characters below it). Default
   * 400. A detail cut to fit ends in an ellipsis (U+2026), so 1 leaves only that mark.
   */
  maxDetail?: number;
  /** A WHATWG encoding label for stdout and stderr. Default `"utf-8"`. */
  encoding?: string;
  /** How stdout is read. Default `"envelope"`. */
  protocol?: Protocol;
  /**
   * Extra exit codes that mean "ran, found nothing", e.g. `{ 1: "empty" }` for grep and ripgrep. Only the
   * object's own entries are read; 0 (success already) or a misspelt entry is refused, not ignored. An entry
   * inherited through the prototype is neither read nor refused: refusing it would refuse every call once
   * anything set a number key on `Object.prototype`.
   */
  exitCodes?: Record<number, "empty">;
  /**
   * Scan the items for injected instructions; findings go to `warnings`. A protocol function's items are
   * scanned as JSON writes them (a `toJSON`'s result), the text the model is shown. Output that cannot be
   * scanned is withheld as a failure (kind `protocol`: the tool ran), so empty `warnings` on a success means
   * scanned and clean.
   */
  scanOutput?: boolean;
  /** Called once with every result, for logs. Errors it throws are swallowed. */
  onResult?: (result: ToolResult, call: ToolCallRecord) => void | Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------
// Validating tool calls (validate.ts)
// ---------------------------------------------------------------------------------------------------------

/** The finding codes of call validation: the contract's seven, and the MCP relay's `argument_secret` and `tool_changed`. */
export type FindingCode =
  | "unknown_tool"
  | "malformed_arguments"
  | "missing_required_argument"
  | "unexpected_argument"
  | "argument_type_mismatch"
  | "argument_constraint"
  | "argument_injection"
  | "argument_secret"
  | "tool_changed";

/** One thing wrong with a tool call. */
export interface Finding {
  /** What kind of problem. */
  code: FindingCode;
  /** JSON Pointer into the arguments; `""` for the whole. */
  path: string;
  /** Plain words a model can act on. */
  message: string;
  /** What was expected, where it applies (a type, an enum list, a bound). */
  expected?: string;
  /** What was received, where it applies (shortened). */
  received?: string;
  /** Offset into the raw argument text where the finding starts (only when locatable there). */
  start?: number;
  /** Offset one past the end; replacing `raw.slice(start, end)` with a placeholder still gives valid JSON. */
  end?: number;
  /** The scanner category, for `argument_injection`. */
  category?: ScanCategory;
  /** For `unknown_tool`: the nearest declared name. */
  suggestion?: string;
}

/** The judgement of one call. */
export interface CallVerdict {
  /** Position of the call in the list given. */
  index: number;
  /** The call id from the provider, or a stable synthetic one (`call_` + hash) when it had none. */
  id?: string;
  /** The tool name the call asked for. */
  name: string;
  /** True when there are no findings (and the classifier did not object). */
  allowed: boolean;
  /** Everything wrong with the call. */
  findings: Finding[];
  /** The parsed arguments, when they parsed to an object. */
  arguments?: Record<string, unknown>;
  /** The raw argument text, when the call carried text. */
  rawArguments?: string;
  /** Repairs applied under `repair: true` (e.g. `"trailing_comma"`). */
  repairs?: string[];
  /** Coercions applied under `coerce: true`, each `"/path: string -> integer"`. */
  coercions?: string[];
  /** The classifier's answer, when one ran. */
  modelCheck?: ModelCheck;
}

/** The judgement of a list of calls. */
export interface Verdict {
  /** True when every call is allowed. */
  allowed: boolean;
  /** `!allowed`: true when any call was rejected. The same word means the same on every result. */
  blocked: boolean;
  /** Indices of the calls that were not allowed, in order (`[]` when every call is allowed). */
  rejectedIndices: number[];
  /** One verdict per call, in order. */
  calls: CallVerdict[];
}
