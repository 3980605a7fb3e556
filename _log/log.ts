/**
 * The JSONL call log: one bounded, append-mode line per event.
 *
 * @module
 */
import { byteCount, concatBytes, utf8Length } from "../_common/bytes.ts";
import { checkSwitches, cutUnits, errorText, idText, isRecord, showHidden } from "../_common/values.ts";
import { describe } from "../_describe/describe.ts";
import { describeVerdict } from "../_describe/verdict.ts";
import { fileId, type OpenFile, openFile } from "./files.ts";
import type { CallVerdict, Finding, OutcomeKind, ToolCallRecord, ToolResult, Verdict } from "../types.ts";
import type { McpEvent } from "../_mcp/types.ts";

/** A line for one tool run (written by `onResult`). */
export interface ResultLine {
  /** When the line was written, ISO 8601 in UTC. */
  ts: string;
  /** Always `"result"`. */
  event: "result";
  /** The tool: the command's file name without directory or Windows extension (`/usr/bin/rg` -> `rg`). */
  tool: string;
  /** The outcome kind. */
  kind: OutcomeKind;
  /** Whether the tool ran successfully. */
  ok: boolean;
  /** The exit code, or null. */
  exitCode: number | null;
  /** The signal that ended the process, or null. */
  signal: string | null;
  /**
   * Wall-clock duration in milliseconds; null when the result carried no duration that is a finite number
   * of at least 0 (a hand-made or corrupted result): a made-up 0 would pull the percentiles down.
   */
  durationMs: number | null;
  /** The result's detail (shortened when the line would be too long). */
  detail: string;
  /** How many items the tool returned; null for failures. */
  itemCount: number | null;
  /** The sentence the model received (`describe(result)`), shortened when the line would be too long. */
  sentence: string;
  /** Scanner categories found in the output (the result's warnings), distinct, in first-seen order. */
  findings: string[];
  /** The `model` option, when given. */
  model?: string;
  /** The full command as given; only with `includeArguments`. */
  command?: string;
  /** The arguments; only with `includeArguments`. */
  args?: string[];
  /** The items; only with `includeItems`. */
  items?: unknown[] | null;
  /** Fields that were shortened or dropped to keep the line under `maxLineBytes`. */
  cut?: string[];
}

/** A line for one validated tool call (written by `onVerdict`, one per call in the verdict). */
export interface VerdictLine {
  /** When the line was written, ISO 8601 in UTC. */
  ts: string;
  /** Always `"verdict"`. */
  event: "verdict";
  /** The tool name the call asked for. */
  tool: string;
  /** `"allowed"` or `"blocked"`. */
  verdict: "allowed" | "blocked";
  /** Same as `verdict === "allowed"`. */
  ok: boolean;
  /** The call's id, when it has one. */
  callId?: string;
  /** The call's position in the list that was validated. */
  index: number;
  /** The finding codes, distinct, in first-seen order. */
  findings: string[];
  /** For a blocked call, the feedback the model received (`describeVerdict(call)`); `""` when allowed. */
  sentence: string;
  /** The `model` option, when given. */
  model?: string;
  /** The parsed arguments; only with `includeArguments`. */
  arguments?: Record<string, unknown>;
  /** Fields that were shortened or dropped to keep the line under `maxLineBytes`. */
  cut?: string[];
}

/**
 * A line for an MCP relay event that is not a call (the server started or exited, tools were listed,
 * output was flagged, a frame was too large): written by `onMcpEvent`; the relay's calls are `VerdictLine`s.
 */
export interface McpLine {
  /** When the line was written, ISO 8601 in UTC. */
  ts: string;
  /** Always `"mcp"`. */
  event: "mcp";
  /** The relay event: `tools`, `output_flagged`, `spawn`, `spawn_failed`, `server_closed`, `exit`, ... */
  type: string;
  /** The tool concerned, or `""` for events of the relay itself. */
  tool: string;
  /** The scanner categories or finding codes the event carries, distinct. */
  findings: string[];
  /**
   * What went wrong, for the events that say (`spawn_failed`, `tools_fetch_failed`, `post_failed`,
   * `stream_failed`, `session_id_ignored`); else `""`.
   */
  detail: string;
  /**
   * The relay event's own fields: `pid` and `command` of `spawn` (its `args` only with `includeArguments`),
   * `reason` and `exitCode` of `exit`, ...
   */
  [field: string]: unknown;
  /** The `model` option, when given. */
  model?: string;
  /** Fields that were shortened or dropped to keep the line under `maxLineBytes`. */
  cut?: string[];
}

/** Any line `jsonlLog` writes. Discriminate on `event`. */
export type LogLine = ResultLine | VerdictLine | McpLine;

/** Options for `jsonlLog`. All optional. */
export interface JsonlLogOptions {
  /** Log the items of successful runs. Default false: items may hold private data. */
  includeItems?: boolean;
  /**
   * Log the command, its arguments and the parsed call arguments, and the values a rejected call's feedback
   * quotes (the match an `argument_injection` finding quotes, a credential passed as a property name; also an
   * MCP relay's, the arguments of the server it started, and the text of a client line it refused). Default
   * false: they may hold private data.
   */
  includeArguments?: boolean;
  /**
   * Longest line in bytes, newline included. Default 4096 (PIPE_BUF on Linux), so that one line is one
   * atomic write even when the target is a pipe. Items and arguments are dropped first, then free text
   * is shortened, then an MCP relay event's own fields (a diff, a list of names) are dropped; what was cut
   * is listed in the line's `cut`. At least 512.
   */
  maxLineBytes?: number;
  /** A label written on every line (e.g. the model's name), so runs of two models can be compared. */
  model?: string;
  /** Called when a line could not be written. Errors it throws are swallowed. */
  onError?: (error: Error, line: string) => void;
  /**
   * Longest wait in `close()` for a stream to take the pending lines, in milliseconds. Default 5000. A
   * stream that never drains must not hang the agent's shutdown; lines still pending then count as failed.
   */
  closeTimeoutMs?: number;
  /** The clock, for tests. Default `() => new Date()`. */
  now?: () => Date;
}

/** The hooks and counters `jsonlLog` returns. */
export interface JsonlLog {
  /** Log one tool run. Matches `RunOptions.onResult`; never throws. */
  onResult(result: ToolResult, call: ToolCallRecord): void;
  /** Log a validation verdict (one line per call), or a single call verdict. Never throws. */
  onVerdict(verdict: Verdict | CallVerdict): void;
  /**
   * Log an MCP relay event (matches `McpGuardOptions.onEvent`): a judged call becomes a `VerdictLine` with
   * `source: "mcp"`, anything else an `McpLine`, so `toolguard stats` reads a relay's log like any other.
   * Never throws.
   */
  onMcpEvent(event: McpEvent): void;
  /** Wait for pending writes, then close the file or stream. Later events are counted as failed. */
  close(): Promise<void>;
  /** Lines written so far. */
  readonly written: number;
  /** Lines that could not be written (full disk, closed stream, closed log, ...). */
  readonly failed: number;
}

const encoder = new TextEncoder();
const LINE_BREAK = new Uint8Array([0x0a]);
const DEFAULT_MAX_LINE = 4096;
// A stream that stops draining must not make the agent's memory grow: past this many queued lines,
// new lines are counted as failed instead of queued.
const MAX_QUEUED = 1024;

/**
 * Open a JSON Lines call log.
 *
 * `target` is a file path or a `WritableStream<Uint8Array>` (each line is one chunk). A path is opened for
 * appending and created when missing; each line is one `write` call on an `O_APPEND` descriptor, so several
 * processes can share one file. When the file is renamed or deleted while open (log rotation), the next
 * line goes to a file opened anew at the path (under Deno, when the program may read the log); after a write
 * cut short by a full disk, the next line starts on a line of its own. Opening a path that cannot be opened
 * throws right away, before any tool runs (its `cause` is the runtime's error, with its `code`), and so does
 * a FIFO that no process reads, instead of waiting for one; after that nothing throws.
 *
 * @example Append to a file that several processes share
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtempSync, readFileSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { jsonlLog } from "@toolguard/toolguard/log";
 *
 * const dir = mkdtempSync(join(tmpdir(), "toolguard-log-"));
 * const path = join(dir, "calls.jsonl");
 * const log = jsonlLog(path, { model: "qwen3:4b" });
 * log.onResult({
 *   ok: true, kind: "empty", items: [], exitCode: 0, signal: null, detail: "",
 *   durationMs: 8, warnings: [], truncated: false, stderr: "",
 * }, { command: "/usr/bin/rg", args: ["TODO"] });
 * await log.close();
 *
 * const [line] = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
 * assert.equal(line.tool, "rg"); // the command's file name
 * assert.equal(line.kind, "empty");
 * assert.equal(line.model, "qwen3:4b");
 * rmSync(dir, { recursive: true });
 * ```
 *
 * @example One line per call of a verdict
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonlLog } from "@toolguard/toolguard/log";
 *
 * const lines: string[] = [];
 * const log = jsonlLog(new WritableStream<Uint8Array>({
 *   write(chunk) { lines.push(new TextDecoder().decode(chunk)); },
 * }));
 * log.onVerdict({
 *   allowed: false, blocked: true, rejectedIndices: [1],
 *   calls: [
 *     { index: 0, name: "search", allowed: true, findings: [] },
 *     {
 *       index: 1, name: "delete_all", allowed: false,
 *       findings: [{ code: "unknown_tool", path: "", message: "delete_all is not declared" }],
 *     },
 *   ],
 * });
 * await log.close();
 *
 * const [first, second] = lines.map((l) => JSON.parse(l));
 * assert.equal(first.verdict, "allowed");
 * assert.equal(first.sentence, "");
 * assert.equal(second.verdict, "blocked");
 * assert.deepEqual(second.findings, ["unknown_tool"]);
 * assert.match(second.sentence, /^Your call to delete_all was rejected/);
 * ```
 *
 * @param target A file path or a writable byte stream.
 * @param options What to include, the line size limit and an error callback.
 * @returns Hooks for `runTool` (`onResult`) and for validation (`onVerdict`), `close()` and counters.
 * @throws {RangeError} When `maxLineBytes` is not an integer of at least 512.
 * @throws {TypeError} When `includeItems` or `includeArguments` is not true or false.
 * @throws {Error} When `target` is a path that cannot be opened for appending (a folder, a FIFO that no process
 * reads, no permission); the runtime's error is its `cause`.
 */
export function jsonlLog(
  target: string | WritableStream<Uint8Array>,
  options: JsonlLogOptions = {},
): JsonlLog {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE;
  if (!Number.isInteger(maxLineBytes) || maxLineBytes < 512) {
    throw new RangeError(`jsonlLog: maxLineBytes must be an integer of at least 512, got ${maxLineBytes}`);
  }
  // `includeItems: "false"` (read from an environment variable, say) would log what it was meant to keep out
  checkSwitches(options, ["includeItems", "includeArguments"], "jsonlLog: ");
  const now = options.now ?? (() => new Date());
  const sink = typeof target === "string"
    ? fileSink(target)
    : streamSink(target, options.closeTimeoutMs ?? 5000);
  let written = 0;
  let failed = 0;
  let closed = false;

  const report = (error: unknown, line: string): void => {
    const err = error instanceof Error ? error : new Error(String(error));
    try {
      options.onError?.(err, line);
    } catch {
      // The error hook must not break the agent either.
    }
  };
  const fail = (error: unknown, line: string): void => {
    failed++;
    report(error, line);
  };

  const emit = (record: Record<string, unknown>): void => {
    let line = "";
    try {
      line = fitLineOrWritable(record, maxLineBytes);
      if (closed) throw new Error("jsonlLog: the log is closed; the line was not written");
      sink.write(encoder.encode(line), () => written++, (e) => fail(e, line));
    } catch (e) {
      fail(e, line);
    }
  };

  return {
    onResult(result: ToolResult, call: ToolCallRecord): void {
      try {
        emit(resultRecord(result, call, options, now()));
      } catch (e) {
        fail(e, "");
      }
    },
    onVerdict(verdict: Verdict | CallVerdict): void {
      try {
        const calls = "calls" in verdict && Array.isArray(verdict.calls)
          ? verdict.calls
          : [verdict as CallVerdict];
        const ts = now();
        for (const call of calls) emit(verdictRecord(call, options, ts));
      } catch (e) {
        fail(e, "");
      }
    },
    onMcpEvent(event: McpEvent): void {
      try {
        emit(mcpRecord(event, options, now()));
      } catch (e) {
        fail(e, "");
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      try {
        await sink.close();
      } catch (e) {
        report(e, ""); // closing is not a line: reported, not counted
      }
    },
    get written() {
      return written;
    },
    get failed() {
      return failed;
    },
  };
}

function resultRecord(
  result: ToolResult,
  call: ToolCallRecord,
  options: JsonlLogOptions,
  at: Date,
): Record<string, unknown> {
  const record: Record<string, unknown> = {
    ts: at.toISOString(),
    event: "result",
    tool: toolName(String(call?.command ?? "")),
    kind: result.kind,
    ok: result.ok,
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    durationMs: roundMs(result.durationMs),
    detail: String(result.detail ?? ""),
    itemCount: Array.isArray(result.items) ? result.items.length : null,
    sentence: safeSentence(() => {
      const sentence = describe(result);
      return options.includeItems ? sentence : withoutItems(sentence, result);
    }),
    findings: distinct((result.warnings ?? []).map((w) => String(w.category))),
  };
  if (options.model !== undefined) record.model = options.model;
  if (options.includeArguments) {
    record.command = String(call?.command ?? "");
    record.args = Array.isArray(call?.args) ? call.args.map(String) : [];
  }
  if (options.includeItems && Array.isArray(result.items)) record.items = result.items;
  return record;
}

function verdictRecord(call: CallVerdict, options: JsonlLogOptions, at: Date): Record<string, unknown> {
  const record: Record<string, unknown> = {
    ts: at.toISOString(),
    event: "verdict",
    tool: String(call.name ?? ""),
    verdict: call.allowed ? "allowed" : "blocked",
    ok: call.allowed === true,
  };
  if (call.id !== undefined) record.callId = String(call.id);
  record.index = call.index;
  record.findings = distinct((call.findings ?? []).map((f) => String(f.code)));
  record.sentence = call.allowed
    ? ""
    : safeSentence(() => describeVerdict(options.includeArguments ? call : withoutValues(call)));
  if (options.model !== undefined) record.model = options.model;
  if (options.includeArguments && call.arguments !== undefined) record.arguments = call.arguments;
  return record;
}

/** One relay event as a log line: calls in the verdict schema, everything else as an `McpLine`. */
function mcpRecord(event: McpEvent, options: JsonlLogOptions, at: Date): Record<string, unknown> {
  const ts = at.toISOString();
  const model = options.model !== undefined ? { model: options.model } : {};
  switch (event.event) {
    case "call_allowed":
    case "unchecked_call":
    case "call_rejected": {
      const rejected = event.event === "call_rejected";
      return {
        ts,
        event: "verdict",
        source: "mcp",
        tool: event.name,
        verdict: rejected ? "blocked" : "allowed",
        ok: !rejected,
        callId: idText(event.id),
        index: 0,
        findings: rejected ? distinct(event.findings.map((f) => String(f.code))) : [],
        // The relay's feedback quotes the values received; without includeArguments, only what was wrong.
        sentence: !rejected
          ? ""
          : options.includeArguments
          ? event.feedback
          : safeSentence(() =>
            describeVerdict(
              withoutValues({ index: 0, name: event.name, allowed: false, findings: event.findings }),
            )
          ),
        ...(event.event === "unchecked_call" ? { detail: `forwarded unchecked: ${event.error}` } : {}),
        ...model,
      };
    }
    case "output_flagged":
      return {
        ts,
        event: "mcp",
        type: event.event,
        tool: event.name,
        findings: distinct(event.findings.map((f) => String(f.category))),
        detail: event.redacted ? "flagged spans were cut out" : "output carries instructions",
        ...model,
      };
    case "spawn":
    case "client_message_refused": {
      // The server's arguments may carry a token or a password (`--api-key ...`), and a refused line (a
      // tools/call the guard could not parse) quotes its arguments: like a call's arguments, opt-in.
      const { event: type, ...fields }: Record<string, unknown> = event;
      if (!options.includeArguments) delete fields[event.event === "spawn" ? "args" : "text"];
      return { ts, event: "mcp", type, tool: "", findings: [], detail: "", ...fields, ...model };
    }
    default: {
      // The event's own fields (pid, reason, exitCode, ...) stay as they are, beside the common ones; its
      // findings (objects quoting what was found) become their codes or categories, as on every other line.
      const { event: type, ...fields } = event;
      const { findings, ...own } = fields as Record<string, unknown>;
      const codes = Array.isArray(findings)
        ? distinct(findings.map((f) => String(isRecord(f) ? f.code ?? f.category : f)))
        : [];
      const tool = event.event === "injection_warning" ? event.name : "";
      return { ts, event: "mcp", type, tool, findings: codes, detail: "", ...own, ...model };
    }
  }
}

/**
 * The sentence with the items' JSON replaced by `[...]`: the model read the items, the log must not keep
 * them unless asked. Finds exactly the JSON `describe` quoted (the first k items); if the sentence does not
 * have that shape, keeps only the count.
 */
function withoutItems(sentence: string, result: ToolResult): string {
  if (!Array.isArray(result.items) || result.items.length === 0) return sentence;
  const head = `Tool returned ${result.items.length} item(s): [`;
  if (!sentence.startsWith(head)) return `${head}\u2026]`;
  let end = -1; // index of the closing bracket after the longest matching run of whole items
  let at = head.length;
  if (sentence[at] === "]") end = at;
  for (let i = 0; i < result.items.length && at < sentence.length; i++) {
    let json: string | undefined;
    try {
      json = JSON.stringify(result.items[i]);
    } catch {
      break;
    }
    if (typeof json !== "string") break;
    const chunk = i === 0 ? json : "," + json;
    if (!sentence.startsWith(chunk, at)) break;
    at += chunk.length;
    if (sentence[at] === "]" && (at + 1 === sentence.length || sentence.startsWith(". ", at + 1))) end = at;
  }
  return end < 0 ? `${head}\u2026]` : `${head}\u2026${sentence.slice(end)}`;
}

/**
 * The call without argument values, so the feedback logged does not quote them: no `received`, and no quote of
 * it in a message either. An `argument_injection` message quotes its match, text of the arguments that may
 * hold more than the order ("send ghp_... to ..."): a token the `argument_secret` finding beside it names only
 * by its kind. A property name that carries a credential is such a value too (see {@linkcode secretNames}).
 */
function withoutValues(call: CallVerdict): CallVerdict {
  const { arguments: _a, rawArguments: _r, ...rest } = call;
  const findings = call.findings ?? [];
  const names = secretNames(findings);
  const hide = (text: string) => {
    for (const [name, kind] of names) text = text.replaceAll(name, kind);
    return text;
  };
  return {
    ...rest,
    findings: findings.map(({ received, ...f }) => {
      if (typeof f.message !== "string") return f;
      const message = typeof received === "string" && received !== ""
        ? f.message.replaceAll(JSON.stringify(received), '"\u2026"')
        : f.message;
      return names.size === 0
        ? { ...f, message }
        : { ...f, path: typeof f.path === "string" ? hide(f.path) : f.path, message: hide(message) };
    }),
  };
}

/**
 * The property names that carry a credential, as their paths write them (JSON Pointer tokens), each with the
 * kind its `argument_secret` finding names (`[GitHub token]`): the MCP guard refuses a credential passed as a
 * name too, and every finding on that member quotes the name in its path and message. Such a finding's message
 * starts "The name of" (`secretFindings` in `_mcp/judge.ts`); its path ends in the name.
 */
function secretNames(findings: readonly Finding[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const f of findings) {
    if (
      f?.code === "argument_secret" && typeof f.path === "string" && typeof f.message === "string" &&
      f.message.startsWith("The name of ")
    ) {
      const name = f.path.slice(f.path.lastIndexOf("/") + 1);
      if (name !== "") names.set(name, typeof f.received === "string" ? f.received : "[a credential]");
    }
  }
  return names;
}

/** A field of some log line. */
type LineField = keyof ResultLine | keyof VerdictLine;

/** Optional payloads, dropped first when a line is too long: its point is the outcome, not the data. */
const BULKY_FIELDS = ["items", "arguments", "args"] as const satisfies readonly LineField[];
/** Free text, shortened next, in this order. */
const TEXT_FIELDS = ["detail", "sentence", "command"] as const satisfies readonly LineField[];
/** Names and labels, cut to 64 units last: only a very long tool name, id or model is left to cut. */
const LABEL_FIELDS = ["tool", "callId", "model"] as const satisfies readonly LineField[];
/** Every field of the three line shapes; a relay event's other fields are dropped before labels are cut. */
const LINE_FIELDS: ReadonlySet<string> = new Set<LineField | "type" | "source">([
  "ts",
  "event",
  "type",
  "source",
  "tool",
  "kind",
  "verdict",
  "ok",
  "exitCode",
  "signal",
  "durationMs",
  "detail",
  "itemCount",
  "sentence",
  "findings",
  "callId",
  "index",
  "model",
  "cut",
]);

/**
 * Serialise a record as one line of at most `max` bytes (newline included). Items and arguments are dropped
 * first, then the free text is shortened (detail, then sentence, then command), then the labels are cut.
 */
function fitLine(record: Record<string, unknown>, max: number): string {
  let line = lineText(record);
  if (utf8Length(line) <= max) return line;
  const cut: string[] = [];
  record.cut = cut;
  const mark = (field: string) => {
    if (!cut.includes(field)) cut.push(field);
  };
  for (const field of BULKY_FIELDS) {
    if (field in record && JSON.stringify(record[field] ?? null).length > 2) {
      delete record[field];
      mark(field);
      line = lineText(record);
      if (utf8Length(line) <= max) return line;
    }
  }
  for (const field of TEXT_FIELDS) {
    while (typeof record[field] === "string" && (record[field] as string).length > 0) {
      const value = record[field] as string;
      const over = utf8Length(line) - max;
      if (over <= 0) return line;
      // Cut what is over, guessing the field's bytes per UTF-16 unit from the whole field (escapes and
      // multi-byte characters cost more); the loop corrects a guess that was too small.
      const perUnit = utf8Length(jsonText(value)) / value.length;
      const keep = Math.max(0, Math.floor(value.length - (over + 4) / perUnit) - 1);
      record[field] = keep > 0 ? cutUnits(value, keep) + "\u2026" : "";
      mark(field);
      line = lineText(record);
    }
    if (utf8Length(line) <= max) return line;
  }
  // An MCP relay event's own fields (a changed tool's diff, the names pinned, ...): largest first.
  const extra = Object.keys(record).filter((k) => !LINE_FIELDS.has(k))
    .map((k) => [k, JSON.stringify(record[k] ?? null).length] as const)
    .sort((a, b) => b[1] - a[1]);
  for (const [field] of extra) {
    delete record[field];
    mark(field);
    line = lineText(record);
    if (utf8Length(line) <= max) return line;
  }
  // Only the fixed fields are left and they are still too long: a very long tool name or id.
  for (const field of LABEL_FIELDS) {
    if (typeof record[field] === "string") {
      record[field] = cutUnits(record[field] as string, 64);
      mark(field);
    }
  }
  record.findings = (record.findings as unknown[]).slice(0, 16).map((f) => cutUnits(String(f), 64));
  return lineText(record);
}

/**
 * {@link fitLine}, or when the arguments cannot be written as JSON (a BigInt, which JSON has no form for, in a
 * call built in code and refused), {@link fitLine} of the record with each BigInt in them written as its
 * decimal text and `n` (`"5n"`, as a finding's `received` shows it): a log never loses a verdict's line over
 * the value it refused. Only a line that failed pays for the second try.
 */
function fitLineOrWritable(record: Record<string, unknown>, max: number): string {
  try {
    return fitLine(record, max);
  } catch (e) {
    if (!("arguments" in record)) throw e;
    record.arguments = JSON.parse(
      JSON.stringify(record.arguments, (_key, v) => typeof v === "bigint" ? `${v}n` : v) ?? "null",
    );
    return fitLine(record, max);
  }
}

/** A record as one log line: {@linkcode jsonText} and a newline. */
function lineText(record: Record<string, unknown>): string {
  return jsonText(record) + "\n";
}

/**
 * A value as JSON text for the log. Characters that a terminal acts on or that hide or reorder text are
 * JSON escapes, not raw: `tail -f calls.jsonl` shows a tool's bidi override or escape sequence as `\u202e`,
 * and the line parses to the same value.
 */
function jsonText(value: unknown): string {
  return showHidden(JSON.stringify(value), { form: "json" });
}

function safeSentence(make: () => string): string {
  try {
    return String(make());
  } catch (e) {
    return `(describe failed: ${errorText(e)})`;
  }
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

/** A duration to the microsecond, or null when it is not a finite number of at least 0. */
function roundMs(ms: number): number | null {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? Math.round(ms * 1000) / 1000 : null;
}

/** `/usr/bin/rg` -> `rg`, `C:\\tools\\npx.cmd` -> `npx`. */
function toolName(command: string): string {
  const base = command.split(/[\\/]/).pop() ?? command;
  return base.replace(/\.(exe|cmd|bat|com)$/i, "") || command;
}

interface Sink {
  write(bytes: Uint8Array, ok: () => void, fail: (error: unknown) => void): void;
  close(): Promise<void>;
}

function fileSink(path: string): Sink {
  let file: OpenFile | null;
  try {
    // Appending: every write lands at the current end of file, atomically per write call.
    file = openFile(path, "append");
  } catch (e) {
    throw new Error(
      `jsonlLog: cannot open ${path} for appending (${errorText(e)}); ` +
        ((e as { code?: unknown })?.code === "ENXIO"
          ? "it is a FIFO that no process reads: start its reader first"
          : "check that the directory exists and is writable"),
      { cause: e }, // the runtime's error, with its code
    );
  }
  // After a write cut short (a full disk, a file size limit), the file ends inside our line: the next line
  // would be glued to that fragment and both lost to the reader, so it starts with the fragment's newline.
  let torn = false;
  return {
    write(bytes, ok, fail) {
      if (file === null) return fail(new Error("jsonlLog: the log file is closed"));
      // A rotated log (renamed by logrotate, then compressed, or deleted) would take every later line where
      // no one reads it: when the path no longer names the open file, write to a file opened there anew.
      if (file.id !== null && fileId(path) !== file.id) {
        try {
          const fresh = openFile(path, "append");
          file.close();
          file = fresh;
          torn = false;
        } catch {
          // Nothing can be opened there (its folder went away): the old file is better than none.
        }
      }
      const out = torn ? concatBytes([LINE_BREAK, bytes], bytes.length + 1) : bytes;
      // One synchronous write per line: no queue to grow, no interleaving with other processes.
      const n = file.write(out);
      if (n === out.length) {
        torn = false;
        ok();
      } else {
        // Part of the line reached the file without its newline: the next line must end it.
        if (n > 0) torn = true;
        fail(new Error(`jsonlLog: short write to ${path}: ${n} of ${byteCount(out.length)}`));
      }
    },
    close() {
      if (file !== null) {
        const f = file;
        file = null;
        f.close();
      }
      return Promise.resolve();
    },
  };
}

function streamSink(stream: WritableStream<Uint8Array>, closeTimeoutMs: number): Sink {
  let writer: WritableStreamDefaultWriter<Uint8Array>;
  try {
    writer = stream.getWriter();
  } catch (e) {
    throw new Error(
      `jsonlLog: cannot write to the stream (${errorText(e)}); ` +
        "pass a stream that is not locked to another writer",
    );
  }
  // A stream that errors later must not surface as an unhandled rejection in the agent.
  writer.closed.catch(() => {});
  let queued = 0;
  const pending = new Set<{ fail: (e: unknown) => void; done: Promise<void> }>();
  return {
    write(bytes, ok, fail) {
      if (queued >= MAX_QUEUED) {
        return fail(new Error(`jsonlLog: the stream is not draining (${queued} lines queued); line dropped`));
      }
      queued++;
      let settled = false;
      const entry = {
        fail: (e: unknown) => {
          if (!settled) {
            settled = true;
            fail(e);
          }
        },
        done: Promise.resolve(),
      };
      entry.done = writer.write(bytes).then(() => {
        if (!settled) {
          settled = true;
          ok();
        }
      }, entry.fail).finally(() => {
        queued--;
        pending.delete(entry);
      });
      pending.add(entry);
    },
    async close() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), closeTimeoutMs);
      });
      const drained = Promise.allSettled([...pending].map((p) => p.done)).then(() => writer.close())
        .then(() => "closed" as const, () => "closed" as const);
      const how = await Promise.race([drained, timedOut]);
      clearTimeout(timer);
      if (how === "timeout") {
        const err = new Error(
          `jsonlLog: the stream did not take the pending lines within ${closeTimeoutMs} ms`,
        );
        for (const p of [...pending]) p.fail(err);
        writer.abort(err).catch(() => {});
      }
    },
  };
}
