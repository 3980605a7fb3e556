/**
 * Streamed tool calls: rebuilding complete calls from provider stream events, and a byte-stream transform
 * that withholds the tool-call part of a stream until a judge has seen the assembled calls.
 *
 * @module
 */
import { errorText, isRecord } from "../_common/values.ts";

import { parseJsonSafe } from "../_common/json.ts";
import { formatSse, ndjsonParser, sseParser } from "./sse.ts";
import type { Verdict } from "../types.ts";
import { normaliseCalls } from "../_validate/providers.ts";
import { type ExtractedToolCall, extractToolCalls } from "../_extract/extract.ts";

// ---------------------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------------------

/** The stream dialects toolguard understands. */
export type StreamDialect = "openai_chat" | "openai_responses" | "anthropic" | "ollama";

/** One tool call rebuilt from stream events. */
export interface AssembledToolCall {
  /** The provider's call id, or a stable synthetic one (`call_` + hash) when the stream carried none. */
  id: string;
  /** True when `id` was made up because the stream carried none. */
  syntheticId: boolean;
  /** The tool name. */
  name: string;
  /** The argument text exactly as assembled (JSON text; may be incomplete or invalid: the validator judges). */
  arguments: string;
  /** Which stream dialect the call came from. */
  dialect: StreamDialect;
  /** For OpenAI Chat streams, the choice the call belongs to; otherwise 0. */
  choice: number;
  /** The slot the stream addressed the call by: the delta `index`, `output_index` or content block index. */
  slot: number;
}

/** What can be wrong with a stream event. Never an exception: a finding. */
export type StreamFindingCode =
  | "malformed_event"
  | "unknown_event"
  | "orphan_delta"
  | "missing_index"
  | "reused_index";

/** One problem found while reading a stream. */
export interface StreamFinding {
  /** What kind of problem. */
  code: StreamFindingCode;
  /** Plain words. */
  message: string;
  /** The position of the event in the stream (0-based). */
  event: number;
}

/** What {@linkcode assembleToolCalls} returns. */
export interface AssembledCalls {
  /** The rebuilt calls, in the order they started. */
  calls: AssembledToolCall[];
  /** Problems with individual events; the events were skipped. */
  findings: StreamFinding[];
}

// ---------------------------------------------------------------------------------------------------------
// Synthetic ids
// ---------------------------------------------------------------------------------------------------------

/**
 * A stable id for a call that came without one: `call_` and 16 hex digits of a 64-bit FNV-1a hash over the
 * tool name, the argument text and the call's position. Same input, same id; two identical calls in one
 * message still differ by position.
 */
export function syntheticCallId(name: string, args: string, position: number): string {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x050c5d1f | 0;
  const text = `${name}\u0000${args}\u0000${position}`;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193) ^ (h1 >>> 7);
  }
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0");
  return `call_${hex(h1)}${hex(h2)}`;
}

// ---------------------------------------------------------------------------------------------------------
// Assembly
// ---------------------------------------------------------------------------------------------------------

interface Slot {
  key: string;
  choice: number;
  slot: number;
  id: string;
  name: string;
  args: string;
  /** Authoritative full argument text from a `.done` event, replacing the deltas. */
  final?: string;
  /** Anthropic `content_block_start` input, used when no deltas came. */
  initialInput?: string;
  /** Ollama's argument object as sent (ids are derived from it exactly as the validator does). */
  value?: unknown;
  dialect: StreamDialect;
}

/** An incremental assembler: push parsed events one at a time, read the calls at any point. */
export interface Assembler {
  /** Feeds one event (a parsed JSON object, or JSON text). Never throws. */
  push(event: unknown): void;
  /** The calls and findings so far. */
  result(): AssembledCalls;
  /** True once any tool-call event has been seen. */
  readonly started: boolean;
}

/** Which dialect an event belongs to, or undefined when it does not look like any. */
export function eventDialect(event: unknown): StreamDialect | undefined {
  if (!isRecord(event)) return undefined;
  const type = event.type;
  if (typeof type === "string") {
    if (type.startsWith("response.")) return "openai_responses";
    if (/^(message_start|message_delta|message_stop|content_block_(start|delta|stop)|ping)$/.test(type)) {
      return "anthropic";
    }
    if (type === "error" && isRecord(event.error)) return undefined;
  }
  if (Array.isArray(event.choices)) return "openai_chat";
  if (isRecord(event.message) || typeof event.done === "boolean") return "ollama";
  return undefined;
}

/** Creates an incremental assembler for stream events of any supported dialect. */
export function createAssembler(): Assembler {
  const slots: Slot[] = [];
  const byKey = new Map<string, Slot>();
  const lastByChoice = new Map<number, Slot>();
  const findings: StreamFinding[] = [];
  const missingIndexReported = new Set<Slot>();
  const itemIds = new Map<Slot, string>();
  let count = 0;
  let generation = 0;

  const finding = (code: StreamFindingCode, message: string): void => {
    findings.push({ code, message, event: count - 1 });
  };

  const open = (key: string, dialect: StreamDialect, choice: number, slot: number): Slot => {
    const s: Slot = { key, choice, slot, id: "", name: "", args: "", dialect };
    slots.push(s);
    byKey.set(key, s);
    lastByChoice.set(choice, s);
    return s;
  };

  const appendName = (s: Slot, name: unknown) => {
    if (typeof name !== "string" || name === "") return;
    // OpenAI sends a name once; some servers repeat it on every delta. Never double it.
    if (s.name === "" || s.name === name) s.name = name;
    else s.name += name;
  };

  const appendArgs = (s: Slot, args: unknown) => {
    if (typeof args === "string") s.args += args;
    else if (isRecord(args)) s.args += JSON.stringify(args);
    else if (args !== undefined && args !== null) {
      finding("malformed_event", "tool call arguments are not text");
    }
  };

  const chatDelta = (choice: number, td: unknown) => {
    if (!isRecord(td)) return finding("malformed_event", "a tool_calls delta is not an object");
    const fn = isRecord(td.function) ? td.function : {};
    const id = typeof td.id === "string" && td.id !== "" ? td.id : undefined;
    let s: Slot | undefined;
    if (typeof td.index === "number" && Number.isInteger(td.index) && td.index >= 0) {
      s = byKey.get(`c${choice}:${td.index}:${generation}`);
      // A server that numbers every parallel call 0 would glue them into one argument string. A delta
      // that names a tool, on a slot whose call already has an id or a complete argument object and a
      // different id, starts a new call instead.
      if (
        s && ((id && s.id && id !== s.id) || (!id && typeof fn.name === "string" && fn.name !== "" &&
          s.name !== "" && completeObject(s.args)))
      ) {
        finding("reused_index", `index ${td.index} was reused for a new call; it was kept separate`);
        generation++;
        for (const old of slots) if (old.choice === choice) byKey.delete(old.key);
        s = undefined;
      }
      s ??= open(`c${choice}:${td.index}:${generation}`, "openai_chat", choice, td.index);
    } else {
      const last = lastByChoice.get(choice);
      if (last && (!id || last.id === "" || last.id === id)) s = last;
      else s = open(`c${choice}:auto${slots.length}`, "openai_chat", choice, slots.length);
      if (!missingIndexReported.has(s)) {
        missingIndexReported.add(s);
        finding("missing_index", "a tool_calls delta has no index; it was matched by id and order");
      }
    }
    if (id && s.id === "") s.id = id;
    appendName(s, fn.name);
    appendArgs(s, fn.arguments);
  };

  const pushChat = (event: Record<string, unknown>) => {
    for (const choice of event.choices as unknown[]) {
      if (!isRecord(choice)) {
        finding("malformed_event", "a choice is not an object");
        continue;
      }
      const ci = typeof choice.index === "number" ? choice.index : 0;
      const delta = isRecord(choice.delta) ? choice.delta : isRecord(choice.message) ? choice.message : {};
      if (Array.isArray(delta.tool_calls)) { for (const td of delta.tool_calls) chatDelta(ci, td); }
      else if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
        finding("malformed_event", "tool_calls is not an array");
      }
      if (isRecord(delta.function_call)) {
        // The legacy single function_call: one call per choice.
        const s = byKey.get(`c${ci}:legacy`) ?? open(`c${ci}:legacy`, "openai_chat", ci, 0);
        appendName(s, delta.function_call.name);
        appendArgs(s, delta.function_call.arguments);
      }
    }
  };

  const pushResponses = (event: Record<string, unknown>) => {
    const type = event.type as string;
    const oi = typeof event.output_index === "number" ? event.output_index : undefined;
    const item = isRecord(event.item) ? event.item : undefined;
    const find = (): Slot | undefined => {
      if (oi !== undefined && byKey.get(`o${oi}`)) return byKey.get(`o${oi}`);
      if (typeof event.item_id === "string") {
        return slots.find((s) => s.key === `o${s.slot}` && itemIds.get(s) === event.item_id);
      }
      return undefined;
    };
    if ((type === "response.output_item.added" || type === "response.output_item.done") && item) {
      if (item.type !== "function_call") return;
      let s = find();
      if (!s) {
        const slot = oi ?? slots.length;
        s = open(`o${slot}`, "openai_responses", 0, slot);
        if (typeof item.id === "string") itemIds.set(s, item.id);
      }
      if (typeof item.call_id === "string" && item.call_id !== "") s.id = item.call_id;
      if (typeof item.name === "string" && item.name !== "") s.name = item.name;
      if (type === "response.output_item.done" && typeof item.arguments === "string") {
        s.final = item.arguments;
      } else if (typeof item.arguments === "string" && item.arguments !== "" && s.args === "") {
        s.args = item.arguments;
      }
    } else if (type === "response.function_call_arguments.delta") {
      const s = find();
      if (!s) return finding("orphan_delta", "function_call_arguments.delta for an item that never started");
      if (typeof event.delta === "string") s.args += event.delta;
    } else if (type === "response.function_call_arguments.done") {
      const s = find();
      if (!s) return finding("orphan_delta", "function_call_arguments.done for an item that never started");
      if (typeof event.arguments === "string") s.final = event.arguments;
      if (typeof event.name === "string" && event.name !== "" && s.name === "") s.name = event.name;
    } else if (
      (type === "response.completed" || type === "response.incomplete") && isRecord(event.response) &&
      Array.isArray(event.response.output)
    ) {
      // The final snapshot is authoritative for calls the deltas may have missed.
      event.response.output.forEach((out: unknown, i: number) => {
        if (!isRecord(out) || out.type !== "function_call") return;
        let s = byKey.get(`o${i}`);
        if (!s) s = open(`o${i}`, "openai_responses", 0, i);
        if (typeof out.call_id === "string" && out.call_id !== "") s.id = out.call_id;
        if (typeof out.name === "string" && out.name !== "") s.name = out.name;
        if (typeof out.arguments === "string") s.final = out.arguments;
      });
    }
  };

  const pushAnthropic = (event: Record<string, unknown>) => {
    const type = event.type;
    const index = typeof event.index === "number" ? event.index : undefined;
    if (type === "content_block_start" && isRecord(event.content_block)) {
      const block = event.content_block;
      if (block.type !== "tool_use") return;
      if (index === undefined) return finding("missing_index", "content_block_start has no index");
      const s = open(`a${index}`, "anthropic", 0, index);
      if (typeof block.id === "string") s.id = block.id;
      if (typeof block.name === "string") s.name = block.name;
      if (isRecord(block.input) && Object.keys(block.input).length > 0) {
        s.initialInput = JSON.stringify(block.input);
      }
    } else if (type === "content_block_delta" && isRecord(event.delta)) {
      if (event.delta.type !== "input_json_delta") return;
      const s = index === undefined ? undefined : byKey.get(`a${index}`);
      if (!s) {
        return finding("orphan_delta", `input_json_delta for content block ${index} that is not a tool_use`);
      }
      if (typeof event.delta.partial_json === "string") s.args += event.delta.partial_json;
      else finding("malformed_event", "input_json_delta without partial_json text");
    }
  };

  const pushOllama = (event: Record<string, unknown>) => {
    const message = isRecord(event.message) ? event.message : undefined;
    if (!message || message.tool_calls === undefined || message.tool_calls === null) return;
    if (!Array.isArray(message.tool_calls)) {
      return finding("malformed_event", "message.tool_calls is not an array");
    }
    // Ollama sends each call whole; every entry is a new call, never a fragment to append.
    for (const tc of message.tool_calls) {
      if (!isRecord(tc)) {
        finding("malformed_event", "a tool call is not an object");
        continue;
      }
      const fn = isRecord(tc.function) ? tc.function : tc;
      const s = open(`l${slots.length}`, "ollama", 0, slots.length);
      if (typeof tc.id === "string") s.id = tc.id;
      if (typeof fn.name === "string") s.name = fn.name;
      if (typeof fn.arguments === "string") s.args = fn.arguments;
      else if (fn.arguments !== undefined) {
        s.args = safeStringify(fn.arguments);
        s.value = fn.arguments;
      }
    }
  };

  return {
    push(raw: unknown): void {
      count++;
      try {
        let event = raw;
        if (typeof raw === "string") {
          const parsed = parseJsonSafe(raw);
          if (!parsed.ok) return void finding("malformed_event", `event is not JSON: ${parsed.error}`);
          event = parsed.value;
        }
        if (!isRecord(event)) return void finding("malformed_event", "event is not a JSON object");
        switch (eventDialect(event)) {
          case "openai_chat":
            return pushChat(event);
          case "openai_responses":
            return pushResponses(event);
          case "anthropic":
            return pushAnthropic(event);
          case "ollama":
            return pushOllama(event);
          default:
            if (event.type !== "error" && event.error === undefined) {
              finding("unknown_event", "event matches no known stream dialect");
            }
        }
      } catch (e) {
        finding("malformed_event", `event could not be read: ${errorText(e)}`);
      }
    },
    result(): AssembledCalls {
      const texts = slots.map((s) => {
        let args = s.final ?? s.args;
        if (args === "" && s.initialInput !== undefined) args = s.initialInput;
        // Anthropic sends an empty input_json for a call without arguments: that is `{}`.
        if (args === "" && s.dialect === "anthropic") args = "{}";
        return args;
      });
      // Synthetic ids come from the validator's own rule, so a call gets the same id streamed or not.
      const ids = normaliseCalls(slots.map((s, i) => ({
        function: { name: s.name, arguments: s.value !== undefined ? s.value : texts[i] },
      }))).map((c) => c.id);
      const calls = slots.map((s, position): AssembledToolCall => {
        const args = texts[position];
        const call: AssembledToolCall = {
          id: s.id,
          syntheticId: s.id === "",
          name: s.name,
          arguments: args,
          dialect: s.dialect,
          choice: s.choice,
          slot: s.slot,
        };
        if (call.syntheticId) call.id = ids[position] ?? syntheticCallId(s.name, args, position);
        return call;
      });
      return { calls, findings: findings.slice() };
    },
    get started(): boolean {
      return slots.length > 0;
    },
  };
}

function completeObject(text: string): boolean {
  const t = text.trim();
  if (!t.startsWith("{") || !t.endsWith("}")) return false;
  const p = parseJsonSafe(t);
  return p.ok && isRecord(p.value);
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/**
 * Rebuilds complete tool calls from the events of a streamed response: OpenAI Chat Completions chunks
 * (`choices[].delta.tool_calls`, assembled by `index`, so parallel calls stay apart even when their deltas
 * interleave), OpenAI Responses events (`response.output_item.added`, `response.function_call_arguments.*`),
 * Anthropic Messages events (`content_block_start` with `tool_use`, `input_json_delta`) and Ollama `/api/chat`
 * chunks (`message.tool_calls`, each call whole). Events may be parsed objects or their JSON text. Calls
 * without an id get a stable synthetic one. Malformed events never throw: they become findings.
 */
export function assembleToolCalls(events: Iterable<unknown>): AssembledCalls {
  const assembler = createAssembler();
  try {
    for (const event of events) assembler.push(event);
  } catch {
    // An iterable that throws ends the input; what was assembled so far still counts.
  }
  return assembler.result();
}

/** The shape the validator reads for an assembled call (OpenAI Chat style, arguments as JSON text). */
export function callForValidation(call: AssembledToolCall): Record<string, unknown> {
  return { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } };
}

// ---------------------------------------------------------------------------------------------------------
// Calls written into streamed text
// ---------------------------------------------------------------------------------------------------------

const MARKERS = ["<tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<function=", "```"];
const CALL_FENCE = /^(json|jsonc|json5|tool_call|tool_calls|tool_code|)$/i;

/**
 * Watches the text of one streamed message for the start of a call written into it. Text before a marker is
 * released at once; from the marker on, text is held until the stream ends and the calls are judged. A tail
 * that could be the start of a marker (`<tool_`) is held until the next piece settles it.
 */
export interface TextWatcher {
  /** Feeds a piece of text; returns the part that may be shown now. */
  push(text: string): string;
  /** Releases a held ambiguous tail (the stream moved on, so it cannot become a marker). */
  flushTail(): string;
  /** True once a marker was seen: everything after it is held. */
  readonly holding: boolean;
  /** Text released so far. */
  readonly visible: string;
  /** Text held: from the marker on, plus any ambiguous tail. */
  readonly held: string;
}

/** Creates a {@linkcode TextWatcher}. */
export function textWatcher(): TextWatcher {
  let visible = "";
  let held = "";
  let tail = "";
  let holding = false;
  let fences = 0; // fences opened and closed in the released text; odd means inside a code block

  const release = (text: string): string => {
    visible += text;
    return text;
  };

  return {
    push(text: string): string {
      if (holding) {
        held += text;
        return "";
      }
      const s = tail + text;
      tail = "";
      // A whole message that opens with JSON may be a bare call: hold it all.
      if (visible.trim() === "") {
        const first = s.search(/\S/);
        const second = first >= 0 ? s.slice(first + 1).search(/\S/) : -1;
        const opensArray = first >= 0 && s[first] === "[";
        if (opensArray && second < 0) {
          tail = s.slice(first); // "[" alone: a call array or a list like "[1] ..."; the next piece tells
          return release(s.slice(0, first));
        }
        if (first >= 0 && (s[first] === "{" || (opensArray && s[first + 1 + second] === "{"))) {
          holding = true;
          held = s.slice(first);
          return release(s.slice(0, first));
        }
      }
      let cut = -1;
      let ambiguous = false;
      for (let i = 0; i < s.length && cut < 0; i++) {
        if (s[i] !== "<" && s[i] !== "[" && s[i] !== "`") continue;
        for (const m of MARKERS) {
          if (!s.startsWith(m, i)) continue;
          if (m !== "```") {
            cut = i;
            break;
          }
          // A fence: a closing one, or one for another language, is just text.
          if (fences % 2 === 1) {
            fences++;
            i += 2;
            break;
          }
          const nl = s.indexOf("\n", i + 3);
          if (nl < 0) {
            cut = i;
            ambiguous = true;
          } else if (CALL_FENCE.test(s.slice(i + 3, nl).trim())) cut = i;
          else {
            fences++;
            i += 2;
          }
          break;
        }
      }
      if (cut >= 0 && !ambiguous) {
        holding = true;
        held = s.slice(cut);
        return release(s.slice(0, cut));
      }
      if (ambiguous) {
        tail = s.slice(cut);
        return release(s.slice(0, cut));
      }
      // Hold a tail that could still grow into a marker.
      for (let k = Math.min(s.length, 13); k > 0; k--) {
        const end = s.slice(s.length - k);
        if (MARKERS.some((m) => m.length > k && m.startsWith(end))) {
          tail = end;
          return release(s.slice(0, s.length - k));
        }
      }
      return release(s);
    },
    flushTail(): string {
      const t = tail;
      tail = "";
      return release(t);
    },
    get holding(): boolean {
      return holding;
    },
    get visible(): string {
      return visible;
    },
    get held(): string {
      return holding ? held : tail;
    },
  };
}

/** Removes the markup of every call written into a text and tidies the seams. */
export function cutCalls(text: string, calls: ExtractedToolCall[] = extractToolCalls(text)): string {
  if (calls.length === 0) return text;
  let out = "";
  let at = 0;
  for (const c of calls) {
    if (c.block.start < at) continue; // several calls in one block
    out += text.slice(at, c.block.start);
    at = c.block.end;
  }
  out += text.slice(at);
  return out.replace(/\n{3,}/g, "\n\n").trim();
}

/** Turns calls recovered from text into assembled calls, with the validator's synthetic ids. */
function textCalls(extracted: ExtractedToolCall[], dialect: StreamDialect): AssembledToolCall[] {
  const ids = normaliseCalls(extracted.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })));
  return extracted.map((c, i) => ({
    id: ids[i]?.id ?? c.id ?? "",
    syntheticId: c.id === undefined,
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    dialect,
    choice: 0,
    slot: i,
  }));
}

// ---------------------------------------------------------------------------------------------------------
// The streaming gate
// ---------------------------------------------------------------------------------------------------------

/** What a judge says about the calls of one stream. */
export interface StreamJudgement {
  /** The verdict from the validator. */
  verdict: Verdict;
  /** The text the client sees in place of the calls when the verdict rejects them. */
  reason: string;
}

/** What the stream gate reports when the stream ends. */
export interface StreamReport {
  /** The dialect the stream was read as. */
  dialect: StreamDialect;
  /** The calls the stream carried. */
  calls: AssembledToolCall[];
  /** The verdict, or undefined when the stream carried no calls. */
  verdict?: Verdict;
  /** Problems with individual events (malformed ones were dropped from the forwarded stream). */
  findings: StreamFinding[];
  /** True when the calls were replaced by a text event. */
  replaced: boolean;
}

/** Options for {@linkcode gateStream}. */
export interface GateStreamOptions {
  /** Judges the assembled calls once the stream has ended. */
  judge: (calls: AssembledToolCall[]) => StreamJudgement | Promise<StreamJudgement>;
  /** Called once when the stream ends, with what happened. Errors it throws are swallowed. */
  onReport?: (report: StreamReport) => void;
  /**
   * Watch the text of OpenAI Chat and Ollama streams for calls written into it (`<tool_call>`, fenced JSON,
   * ...) and hold them back until judged, as the native calls are. Default true.
   */
  extract?: boolean;
}

interface Held {
  /** Text to emit when the calls are allowed. */
  raw: string;
  /** The parsed event, when it parsed. */
  event?: Record<string, unknown>;
  /** True when the frame is part of a tool call (dropped on rejection). */
  tool: boolean;
}

/**
 * A transform over the bytes of a streamed response that passes text through as it comes and withholds
 * the tool-call part until the stream ends and `judge` has seen the assembled calls. Allowed calls are then
 * released byte for byte; rejected ones are replaced by a text event carrying the reason and a proper stop.
 */
export function gateStream(
  dialect: StreamDialect,
  options: GateStreamOptions,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const ndjson = dialect === "ollama";
  const sse = sseParser();
  const lines = ndjsonParser();
  const assembler = createAssembler();
  const dropped: StreamFinding[] = [];
  const held: Held[] = [];
  let pending = false;
  let eventCount = 0;
  let doneFrame: string | undefined; // OpenAI's `data: [DONE]`
  let textSeen = false;
  let template: Record<string, unknown> | undefined; // fields copied into synthesised events
  let lastSeq = -1;
  const watcher = options.extract === false || (dialect !== "openai_chat" && dialect !== "ollama")
    ? undefined
    : textWatcher();

  const drop = (message: string) => dropped.push({ code: "malformed_event", message, event: eventCount - 1 });

  const onFrame = (raw: string, data: string | undefined, out: string[]) => {
    eventCount++;
    if (data === undefined || data.trim() === "") {
      // Comments, keep-alives, blank lines: forward unless a call is pending (then keep the order).
      if (pending) held.push({ raw, tool: false });
      else out.push(raw);
      return;
    }
    if (!ndjson && data.trim() === "[DONE]") {
      doneFrame = raw;
      return;
    }
    const parsed = parseJsonSafe(data);
    if (!parsed.ok || !isRecord(parsed.value)) {
      // A client would throw on this frame; it carries nothing a judge can use.
      drop(
        parsed.ok
          ? "stream event is not a JSON object; it was dropped"
          : `stream event is not JSON; it was dropped`,
      );
      return;
    }
    const event = parsed.value;
    assembler.push(event);
    if (typeof event.sequence_number === "number") lastSeq = Math.max(lastSeq, event.sequence_number);
    switch (dialect) {
      case "openai_chat":
        return chatFrame(raw, event, out);
      case "ollama":
        return ollamaFrame(raw, event, out);
      default:
        return blockFrame(raw, event, out);
    }
  };

  const chatFrame = (rawIn: string, eventIn: Record<string, unknown>, out: string[]) => {
    template ??= pick(eventIn, ["id", "object", "created", "model", "system_fingerprint", "service_tier"]);
    const watched = watcher ? watchChat(rawIn, eventIn, out) : [rawIn, eventIn] as const;
    if (!watched) return;
    const [raw, event] = watched;
    const choices = Array.isArray(event.choices) ? event.choices : [];
    const toolish = choices.some((c) =>
      isRecord(c) && ((isRecord(c.delta) && (c.delta.tool_calls != null || c.delta.function_call != null)) ||
        c.finish_reason === "tool_calls" || c.finish_reason === "function_call")
    );
    const hasText = choices.some((c) => isRecord(c) && isRecord(c.delta) && textOf(c.delta) !== "");
    if (!toolish && !pending) {
      if (hasText) textSeen = true;
      out.push(raw);
      return;
    }
    if (!toolish) {
      // Pending: text still flows (OpenAI text deltas carry no position); anything else waits.
      if (hasText && !choices.some((c) => isRecord(c) && c.finish_reason != null)) {
        textSeen = true;
        out.push(raw);
      } else {
        held.push({ raw, event, tool: false });
      }
      return;
    }
    pending = true;
    if (hasText) {
      // Split: the text part goes now, the tool part waits.
      textSeen = true;
      const textPart = {
        ...event,
        choices: choices.map((c) =>
          isRecord(c) && isRecord(c.delta)
            ? { ...c, delta: withoutKeys(c.delta, ["tool_calls", "function_call"]), finish_reason: null }
            : c
        ),
      };
      out.push(formatSse(JSON.stringify(textPart)));
      const toolPart = {
        ...event,
        choices: choices.map((c) =>
          isRecord(c) && isRecord(c.delta)
            ? { ...c, delta: withoutKeys(c.delta, ["content", "reasoning_content", "reasoning", "refusal"]) }
            : c
        ),
      };
      held.push({ raw: formatSse(JSON.stringify(toolPart)), event: toolPart, tool: true });
    } else {
      held.push({ raw, event, tool: true });
    }
  };

  const ollamaFrame = (rawIn: string, eventIn: Record<string, unknown>, out: string[]) => {
    template ??= pick(eventIn, ["model", "created_at"]);
    const watched = watcher ? watchOllama(rawIn, eventIn, out) : [rawIn, eventIn] as const;
    if (!watched) return;
    const [raw, event] = watched;
    const message = isRecord(event.message) ? event.message : undefined;
    const hasCalls = !!message && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    const hasText = !!message && (textOf(message) !== "");
    if (!hasCalls && !pending) {
      if (hasText) textSeen = true;
      out.push(raw);
      return;
    }
    if (!hasCalls) {
      if (hasText && event.done !== true) {
        textSeen = true;
        out.push(raw);
      } else held.push({ raw, event, tool: false });
      return;
    }
    pending = true;
    if (hasText) {
      textSeen = true;
      out.push(
        JSON.stringify({ ...event, message: withoutKeys(message!, ["tool_calls"]), done: false }) + "\n",
      );
      const toolPart = { ...event, message: { ...message!, content: "" } };
      delete (toolPart.message as Record<string, unknown>).thinking;
      held.push({ raw: JSON.stringify(toolPart) + "\n", event: toolPart, tool: true });
    } else {
      held.push({ raw, event, tool: true });
    }
  };

  // Anthropic and OpenAI Responses address content by position, so once a call starts everything after it
  // waits, to be released as is or renumbered around the dropped call.
  const toolIndices = new Set<number>();
  const finishedItems: Record<string, unknown>[] = []; // Responses output items other than calls, in order
  const blockFrame = (raw: string, event: Record<string, unknown>, out: string[]) => {
    const type = event.type;
    if (dialect === "anthropic") {
      if (type === "message_start" && isRecord(event.message)) template ??= event.message;
      if (
        type === "content_block_start" && isRecord(event.content_block) &&
        event.content_block.type === "tool_use"
      ) {
        pending = true;
        if (typeof event.index === "number") toolIndices.add(event.index);
      }
      if (type === "error") {
        out.push(raw); // errors reach the client at once; they carry no call
        return;
      }
      if (!pending) {
        if (type === "content_block_delta") textSeen = true;
        out.push(raw);
        return;
      }
      const index = typeof event.index === "number" ? event.index : -1;
      held.push({ raw, event, tool: toolIndices.has(index) });
      return;
    }
    // OpenAI Responses
    if (type === "response.created" && isRecord(event.response)) template ??= event.response;
    const item = isRecord(event.item) ? event.item : undefined;
    if (type === "response.output_item.done" && item && item.type !== "function_call") {
      finishedItems.push(item);
    }
    if (type === "response.output_item.added" && item?.type === "function_call") {
      pending = true;
      if (typeof event.output_index === "number") toolIndices.add(event.output_index);
    }
    if (type === "error" || type === "response.failed") {
      out.push(raw);
      return;
    }
    if (!pending) {
      if (type === "response.output_text.delta") textSeen = true;
      out.push(raw);
      return;
    }
    const oi = typeof event.output_index === "number" ? event.output_index : -1;
    held.push({ raw, event, tool: toolIndices.has(oi) || type === "response.function_call_arguments.delta" });
  };

  // --- calls written into the text (OpenAI Chat choice 0, Ollama) ---

  const chatText = (text: string): string =>
    formatSse(JSON.stringify({
      ...(template ?? { object: "chat.completion.chunk" }),
      choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
    }));
  const ollamaText = (text: string): string =>
    JSON.stringify({ ...(template ?? {}), message: { role: "assistant", content: text }, done: false }) +
    "\n";
  const emitText = (text: string): string => (dialect === "ollama" ? ollamaText(text) : chatText(text));

  /** Holds a frame that arrived while text is held, keeping stream order. */
  const holdWhileWatching = (raw: string, event: Record<string, unknown>, toolish: boolean) => {
    if (toolish) pending = true;
    held.push({ raw, event, tool: toolish });
  };

  /**
   * Runs a frame's text through the watcher. Returns the frame to process as usual (possibly with its text
   * removed), or undefined when the frame was fully handled here.
   */
  const watchFrame = (
    raw: string,
    event: Record<string, unknown>,
    out: string[],
    text: string,
    strip: () => Record<string, unknown> | undefined,
    toolish: boolean,
  ): readonly [string, Record<string, unknown>] | undefined => {
    const w = watcher!;
    if (text === "") {
      if (!w.holding && w.held !== "") out.push(emitText(w.flushTail())); // the stream moved on
      if (w.holding) return void holdWhileWatching(raw, event, toolish);
      return [raw, event];
    }
    const now = w.push(text);
    if (now === text && !w.holding) return [raw, event];
    if (now !== "") {
      textSeen = true;
      out.push(emitText(now));
    }
    const stripped = strip();
    if (!stripped) return undefined;
    const sraw = ndjson ? JSON.stringify(stripped) + "\n" : formatSse(JSON.stringify(stripped));
    if (w.holding) return void holdWhileWatching(sraw, stripped, toolish);
    return [sraw, stripped];
  };

  const watchChat = (raw: string, event: Record<string, unknown>, out: string[]) => {
    const choices = Array.isArray(event.choices) ? event.choices : [];
    const c0 = choices.find((c) => isRecord(c) && (c.index ?? 0) === 0);
    const delta = isRecord(c0) && isRecord(c0.delta) ? c0.delta : undefined;
    const text = delta && typeof delta.content === "string" ? delta.content : "";
    const toolish = choices.some((c) =>
      isRecord(c) && ((isRecord(c.delta) && (c.delta.tool_calls != null || c.delta.function_call != null)) ||
        c.finish_reason === "tool_calls" || c.finish_reason === "function_call")
    );
    return watchFrame(raw, event, out, text, () => {
      const next = choices.map((c) => (c === c0 ? { ...c0, delta: withoutKeys(delta!, ["content"]) } : c));
      const empty = event.usage == null && next.every((c) =>
        isRecord(c) && c.finish_reason == null &&
        (!isRecord(c.delta) || Object.entries(c.delta).every(([k, v]) => k === "role" || v == null))
      );
      return empty ? undefined : { ...event, choices: next };
    }, toolish);
  };

  const watchOllama = (raw: string, event: Record<string, unknown>, out: string[]) => {
    const message = isRecord(event.message) ? event.message : undefined;
    const text = message && typeof message.content === "string" ? message.content : "";
    const toolish = !!message && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    return watchFrame(raw, event, out, text, () => {
      const next = { ...event, message: { ...message!, content: "" } };
      const empty = event.done !== true && !toolish &&
        !(typeof message!.thinking === "string" && message!.thinking);
      return empty ? undefined : next;
    }, toolish);
  };

  /** At the end: judge calls written into held text. Returns true when it wrote the whole ending. */
  const finishText = async (
    out: string[],
    nativeCalls: number,
    findings: StreamFinding[],
  ): Promise<boolean> => {
    const w = watcher;
    if (!w || (!w.holding && w.held === "")) return false;
    const heldText = w.held;
    const extracted = w.holding && nativeCalls === 0 ? extractToolCalls(w.visible + heldText) : [];
    if (extracted.length === 0) {
      out.push(emitText(heldText)); // nothing to judge: release, then the usual ending
      return false;
    }
    const calls = textCalls(extracted, dialect);
    const judgement = await judgeSafely(calls);
    if (judgement.verdict.allowed) out.push(emitText(heldText));
    else {
      const rest = cutCalls(heldText);
      const lead = rest !== "" ? `${rest}\n\n` : w.visible.trim() !== "" ? "\n\n" : "";
      out.push(emitText(lead + judgement.reason));
    }
    for (const h of held) out.push(h.raw);
    if (doneFrame !== undefined) out.push(doneFrame);
    report({ dialect, calls, verdict: judgement.verdict, findings, replaced: !judgement.verdict.allowed });
    return true;
  };

  const judgeSafely = async (calls: AssembledToolCall[]): Promise<StreamJudgement> => {
    try {
      return await options.judge(calls);
    } catch (e) {
      // A judge that fails must not let the calls through: fail closed with the reason.
      const message = errorText(e);
      return {
        verdict: {
          allowed: false,
          blocked: calls.map((_, i) => i),
          calls: calls.map((c, index) => ({ index, id: c.id, name: c.name, allowed: false, findings: [] })),
        },
        reason: `toolguard could not judge the tool call(s), so none ran: ${message}`,
      };
    }
  };

  const report = (r: StreamReport) => {
    try {
      options.onReport?.(r);
    } catch {
      // A report hook must not break the stream.
    }
  };

  const finish = async (out: string[]): Promise<void> => {
    const { calls, findings } = assembler.result();
    const allFindings = [...dropped, ...findings];
    if (await finishText(out, pending ? calls.length : 0, allFindings)) return;
    let verdict: Verdict | undefined;
    let replaced = false;
    if (pending && calls.length > 0) {
      const judgement = await judgeSafely(calls);
      verdict = judgement.verdict;
      if (judgement.verdict.allowed) {
        for (const h of held) out.push(h.raw);
      } else {
        replaced = true;
        replace(judgement.reason, calls, out);
      }
    } else {
      for (const h of held) out.push(h.raw);
    }
    if (doneFrame !== undefined) out.push(doneFrame);
    report({ dialect, calls, verdict, findings: allFindings, replaced });
  };

  const replace = (reason: string, calls: AssembledToolCall[], out: string[]) => {
    const text = (textSeen ? "\n\n" : "") + reason;
    if (dialect === "openai_chat") {
      const base = {
        ...(template ?? { id: "chatcmpl-toolguard", object: "chat.completion.chunk", model: "" }),
      };
      base.created ??= Math.floor(Date.now() / 1000);
      const choiceIdx = [...new Set(calls.map((c) => c.choice))];
      out.push(formatSse(JSON.stringify({
        ...base,
        choices: choiceIdx.map((index) => ({
          index,
          delta: { role: "assistant", content: text },
          finish_reason: null,
        })),
      })));
      out.push(formatSse(JSON.stringify({
        ...base,
        choices: choiceIdx.map((index) => ({ index, delta: {}, finish_reason: "stop" })),
      })));
      for (const h of held) {
        if (h.tool || !h.event) continue;
        const choices = Array.isArray(h.event.choices) ? h.event.choices : [];
        if (choices.some((c) => isRecord(c) && c.finish_reason != null)) {
          const rest = choices.filter((c) => isRecord(c) && !choiceIdx.includes(c.index as number));
          if (rest.length === 0) continue;
          out.push(formatSse(JSON.stringify({ ...h.event, choices: rest })));
        } else out.push(h.raw); // usage chunks and the like
      }
      return;
    }
    if (dialect === "ollama") {
      const base = template ?? { model: "" };
      out.push(
        JSON.stringify({ ...base, message: { role: "assistant", content: text }, done: false }) + "\n",
      );
      const done = held.find((h) => h.event?.done === true);
      const final = done?.event
        ? { ...done.event, message: { role: "assistant", content: "" }, done_reason: "stop" }
        : { ...base, message: { role: "assistant", content: "" }, done: true, done_reason: "stop" };
      out.push(JSON.stringify(final) + "\n");
      return;
    }
    if (dialect === "anthropic") return replaceAnthropic(text, out);
    return replaceResponses(text, out);
  };

  const renumber = (index: number) => {
    let n = index;
    for (const t of toolIndices) if (t < index) n--;
    return n;
  };

  const replaceAnthropic = (text: string, out: string[]) => {
    let next = 0;
    let messageDelta: Record<string, unknown> | undefined;
    const emit = (event: Record<string, unknown>) =>
      out.push(formatSse(JSON.stringify(event), event.type as string));
    for (const h of held) {
      const e = h.event;
      if (!e || h.tool || e.type === "ping") continue;
      if (e.type === "message_delta") {
        messageDelta = e;
        continue;
      }
      if (e.type === "message_stop") continue;
      if (typeof e.index === "number") {
        const index = renumber(e.index);
        next = Math.max(next, index + 1);
        emit({ ...e, index });
      } else out.push(h.raw);
    }
    const firstTool = Math.min(...toolIndices);
    next = Math.max(next, Number.isFinite(firstTool) ? renumber(firstTool) : 0);
    emit({ type: "content_block_start", index: next, content_block: { type: "text", text: "" } });
    emit({ type: "content_block_delta", index: next, delta: { type: "text_delta", text } });
    emit({ type: "content_block_stop", index: next });
    const delta = isRecord(messageDelta?.delta) ? messageDelta.delta : {};
    emit({
      ...(messageDelta ?? { usage: { output_tokens: 0 } }),
      type: "message_delta",
      delta: { ...delta, stop_reason: "end_turn", stop_sequence: null },
    });
    emit({ type: "message_stop" });
  };

  const replaceResponses = (text: string, out: string[]) => {
    let seq = lastSeq + 1;
    let next = 0;
    const emit = (event: Record<string, unknown>) => {
      const e = lastSeq >= 0 ? { ...event, sequence_number: seq++ } : event;
      out.push(formatSse(JSON.stringify(e), e.type as string));
    };
    // Renumber what is replayed after the first held event so sequence numbers stay increasing.
    const firstHeldSeq = held.find((h) => typeof h.event?.sequence_number === "number")?.event
      ?.sequence_number;
    if (typeof firstHeldSeq === "number") seq = firstHeldSeq;
    let terminal: Record<string, unknown> | undefined;
    for (const h of held) {
      const e = h.event;
      if (!e || h.tool) continue;
      if (e.type === "response.completed" || e.type === "response.incomplete" || e.type === "response.done") {
        terminal = e;
        continue;
      }
      if (typeof e.output_index === "number") {
        const output_index = renumber(e.output_index);
        next = Math.max(next, output_index + 1);
        emit({ ...e, output_index });
      } else emit(e);
    }
    const firstTool = Math.min(...toolIndices);
    next = Math.max(next, Number.isFinite(firstTool) ? renumber(firstTool) : 0);
    const itemId = `msg_toolguard_${next}`;
    const part = { type: "output_text", text, annotations: [] as unknown[] };
    const item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [part] };
    emit({
      type: "response.output_item.added",
      output_index: next,
      item: { ...item, status: "in_progress", content: [] },
    });
    emit({
      type: "response.content_part.added",
      item_id: itemId,
      output_index: next,
      content_index: 0,
      part: { ...part, text: "" },
    });
    emit({
      type: "response.output_text.delta",
      item_id: itemId,
      output_index: next,
      content_index: 0,
      delta: text,
      logprobs: [],
    });
    emit({
      type: "response.output_text.done",
      item_id: itemId,
      output_index: next,
      content_index: 0,
      text,
      logprobs: [],
    });
    emit({ type: "response.content_part.done", item_id: itemId, output_index: next, content_index: 0, part });
    emit({ type: "response.output_item.done", output_index: next, item });
    const base = isRecord(terminal?.response) ? terminal.response : template ?? {};
    // The final snapshot's items when it lists them, else the items this stream finished.
    const listed = Array.isArray(base.output)
      ? base.output.filter((o) => !(isRecord(o) && o.type === "function_call"))
      : [];
    const priorOutput = listed.length >= finishedItems.length ? listed : finishedItems;
    emit({
      type: "response.completed",
      response: { ...base, status: "completed", output: [...priorOutput, item] },
    });
  };

  let out: string[] = [];
  const flushOut = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (out.length > 0) controller.enqueue(encoder.encode(out.join("")));
    out = [];
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      try {
        const text = decoder.decode(chunk, { stream: true });
        if (ndjson) { for (const line of lines.push(text)) onFrame(line.raw, line.text, out); }
        else for (const ev of sse.push(text)) onFrame(ev.raw, ev.data, out);
      } catch (e) {
        drop(`stream could not be read: ${errorText(e)}`);
      }
      flushOut(controller);
    },
    async flush(controller) {
      try {
        const text = decoder.decode();
        if (ndjson) {
          for (const line of [...lines.push(text), ...lines.end()]) onFrame(line.raw, line.text, out);
        } else for (const ev of [...sse.push(text), ...sse.end()]) onFrame(ev.raw, ev.data, out);
        await finish(out);
      } catch (e) {
        drop(`stream could not be read: ${errorText(e)}`);
      }
      flushOut(controller);
    },
  });
}

function textOf(delta: Record<string, unknown>): string {
  let s = "";
  for (const k of ["content", "refusal", "reasoning_content", "reasoning", "thinking"]) {
    if (typeof delta[k] === "string") s += delta[k];
  }
  return s;
}

function withoutKeys(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const copy = { ...obj };
  for (const k of keys) delete copy[k];
  return copy;
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}
