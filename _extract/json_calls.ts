/**
 * Calls written as JSON: reading a run of JSON values out of the text (an array, or objects one after another
 * separated by commas, semicolons or line breaks, as models write them), and turning each value into a call.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import { parseJsonSafe, safeStringify } from "../_common/json.ts";
import type { CallDraft, Scan } from "./scan.ts";
import { resumeValueEnd, scanValueEnd, skipSpace } from "./text.ts";
import { FAIL, LiteralReader, PYTHON } from "./literal.ts";
import type { ExtractFormat } from "./types.ts";

/** Keys that name the tool, in the order they are looked at. */
export const NAME_KEYS = ["name", "tool_name", "tool", "function", "function_name"] as const;
/** Keys that hold the arguments, in the order they are looked at. */
export const ARG_KEYS = ["arguments", "parameters", "args", "input"] as const;
const ID_KEYS = ["id", "tool_call_id", "call_id"] as const;
/** Keys of an object that wraps the calls instead of being one (`{"tool_calls": [...]}`). */
const WRAPPER_KEYS = ["tool_calls", "tool_call", "function_call"] as const;
/** Every key a call object may have; a call quoted in prose must have no other. */
const CALL_KEYS = new Set<string>([...NAME_KEYS, ...ARG_KEYS, ...ID_KEYS, "type", "index"]);
/** Every key a JSON object holding calls may open with: a call's own keys and the wrappers' (for watchers). */
export const CALL_OPENING_KEYS: readonly string[] = [...CALL_KEYS, ...WRAPPER_KEYS];

/** A JSON value and where it sits in the text. */
export interface Located {
  value: unknown;
  start: number;
  end: number;
}

/** What {@link readJsonRun} found. */
export interface JsonRun {
  /** The values read, in order. */
  items: Located[];
  /** Index one past the last value read (`start` when none was). */
  next: number;
  /** Why nothing could be read at `start`. */
  error?: string;
  /** The first value did not close before `end`: more text might complete it. */
  open?: boolean;
}

/**
 * Reads the JSON values that start at `start` (which must be `{` or `[`) and follow one another up to `end`:
 * an array's elements, or objects separated by white space, `,` or `;`. A value that does not parse ends the
 * run; a doubled brace (`{{"name": ...}}`) is read as the object inside it. Linear in the text read.
 */
export function readJsonRun(text: string, start: number, end: number): JsonRun {
  if (text[start] === "[") return readArray(text, start, end);
  const items: Located[] = [];
  let pos = start;
  let next = start;
  let error: string | undefined;
  let open = false;
  while (text[pos] === "{") {
    const e = scanValueEnd(text, pos, end);
    if (e < 0) {
      open = items.length === 0;
      error = "the JSON object does not close";
      break;
    }
    const item = runItem(text, pos, e);
    if ("error" in item) {
      error = item.error; // the readers say what it is the error of
      break;
    }
    items.push(item.item);
    next = item.next;
    pos = skipSpace(text, next);
    if (text[pos] === "," || text[pos] === ";") pos = skipSpace(text, pos + 1);
  }
  return items.length > 0 ? { items, next } : { items, next: start, error: error ?? "no JSON value", open };
}

/**
 * The first JSON value at `p` (`{` or `[`) and its end. It is read as far as the end of the text while the
 * shared scan budget lasts, and past that only up to the next `marker` (the opening of the same markup):
 * many unclosed openings stay linear and a call after them is still read. A marker met inside one of the
 * value's strings is data, so the scan goes on to the next one (a few times at most). A value that the end
 * of the text cuts off is noted with `scan.ranOut(at)`.
 */
export function readFirstValue(scan: Scan, at: number, p: number, marker: string): Located | undefined {
  const text = scan.text;
  const state = { at: p, depth: 0, inString: false };
  let fence = scan.find(marker, p + 1);
  let limit = fence < 0 ? text.length : Math.max(fence, Math.min(text.length, p + scan.allowance()));
  let e = resumeValueEnd(text, state, limit);
  for (let hops = 0; e < 0 && state.inString && limit === fence && hops < MAX_FENCE_HOPS; hops++) {
    fence = scan.find(marker, fence + 1);
    limit = fence < 0 ? text.length : fence;
    e = resumeValueEnd(text, state, limit);
  }
  scan.spend((e < 0 ? limit : e) - p);
  if (e < 0) {
    if (limit === text.length) scan.ranOut(at);
    return undefined;
  }
  const run = readJsonRun(text, p, e);
  return run.items[0];
}

/** How many markers inside one value's strings {@link readFirstValue} reads past. */
const MAX_FENCE_HOPS = 16;

/**
 * `JSON.parse`, and when that fails on raw line breaks or tabs inside strings (which models write in code
 * arguments), once more with those escaped, as Python's `json.loads(strict=False)` reads them.
 */
export function parseLenient(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const first = parseJsonSafe(raw);
  if (first.ok || !hasControl(raw)) return first;
  let out = "";
  let run = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (!inString) {
      if (c === 34) inString = true;
      continue;
    }
    if (c === 92) i++;
    else if (c === 34) inString = false;
    else if (c < 0x20) {
      out += raw.slice(run, i) + "\\u" + c.toString(16).padStart(4, "0");
      run = i + 1;
    }
  }
  const second = parseJsonSafe(out + raw.slice(run));
  return second.ok ? second : first;
}

/**
 * {@link parseLenient}, and then the text read as a Python literal (single quotes, `True`/`None`, trailing
 * commas), which small models write where JSON belongs. Only a value that uses up the whole text counts.
 */
export function parseLoose(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const json = parseLenient(raw);
  if (json.ok) return json;
  const reader = new LiteralReader(raw, 0, raw.length, PYTHON);
  const value = reader.value();
  reader.space();
  return value !== FAIL && reader.pos === raw.length ? { ok: true, value } : json;
}

function hasControl(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) if (raw.charCodeAt(i) < 0x20) return true;
  return false;
}

/**
 * The object of a run of objects that starts at `pos` and closes at `e` (see {@link readJsonRun}), and where
 * the run reads on from; `error` when it does not parse (the run ends before it). A doubled brace (`{{...}}`)
 * is the object inside it.
 */
export function runItem(
  text: string,
  pos: number,
  e: number,
): { item: Located; next: number } | { error: string } {
  const parsed = parseLoose(text.slice(pos, e));
  if (parsed.ok) return { item: { value: parsed.value, start: pos, end: e }, next: e };
  return doubledBrace(text, pos, e) ?? { error: parsed.error };
}

/** `{{...}}`: the object inside the doubled braces, and the index after the closing pair. */
function doubledBrace(text: string, pos: number, e: number): { item: Located; next: number } | undefined {
  const q = skipSpace(text, pos + 1);
  if (text[q] !== "{") return undefined;
  const qe = scanValueEnd(text, q, e);
  if (qe < 0) return undefined;
  const parsed = parseLenient(text.slice(q, qe));
  if (!parsed.ok) return undefined;
  const after = skipSpace(text, qe);
  return { item: { value: parsed.value, start: q, end: qe }, next: text[after] === "}" ? after + 1 : qe };
}

function readArray(text: string, start: number, end: number): JsonRun {
  const e = scanValueEnd(text, start, end);
  if (e > 0) {
    const parsed = parseLenient(text.slice(start, e));
    if (parsed.ok && Array.isArray(parsed.value)) return locateElements(text, start, e, parsed.value);
  }
  // Not valid as a whole (a missing comma between objects, a cut-off end): read object by object.
  const items: Located[] = [];
  let pos = skipSpace(text, start + 1);
  let next = start;
  for (;;) {
    while (text[pos] === "," || (pos < end && /\s/.test(text[pos]))) pos++;
    if (text[pos] === "]") {
      next = pos + 1;
      break;
    }
    if (text[pos] !== "{") break;
    const oe = scanValueEnd(text, pos, end);
    if (oe < 0) break;
    const parsed = parseLenient(text.slice(pos, oe));
    if (!parsed.ok) break;
    items.push({ value: parsed.value, start: pos, end: oe });
    next = oe;
    pos = oe;
  }
  if (items.length > 0) return { items, next };
  return { items, next: start, error: "the JSON array is not valid", open: e < 0 };
}

/** Each element of a parsed array with its own span. */
function locateElements(text: string, start: number, end: number, values: unknown[]): JsonRun {
  const items: Located[] = [];
  let pos = skipSpace(text, start + 1);
  for (const value of values) {
    const e = elementEnd(text, pos, end);
    items.push({ value, start: pos, end: e });
    pos = skipSpace(text, e);
    if (text[pos] === ",") pos = skipSpace(text, pos + 1);
  }
  return { items, next: end };
}

function elementEnd(text: string, pos: number, end: number): number {
  if (text[pos] === "{" || text[pos] === "[") {
    const e = scanValueEnd(text, pos, end);
    return e < 0 ? end : e;
  }
  if (text[pos] === '"') {
    for (let i = pos + 1; i < end; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === '"') return i + 1;
    }
    return end;
  }
  let i = pos;
  while (i < end && !",]".includes(text[i]) && !/\s/.test(text[i])) i++;
  return i;
}

/** The values a JSON value holds as calls: itself, an array's elements, or a `tool_calls` wrapper's list. */
export function callValues(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isRecord(value) && !hasName(value)) {
    if (Array.isArray(value.tool_calls)) return value.tool_calls;
    if (isRecord(value.tool_call)) return [value.tool_call];
    if (isRecord(value.function_call)) return [value.function_call];
  }
  return [value];
}

/** Whether every value a JSON value holds as calls (see {@link callValues}) looks like a call. */
export function holdsCalls(value: unknown): boolean {
  return callValues(value).every((v) => isCallShaped(v));
}

function hasName(v: Record<string, unknown>): boolean {
  const inner = isRecord(v.function) ? v.function : v;
  return NAME_KEYS.some((k) => typeof inner[k] === "string");
}

/**
 * Whether `value` looks like a call: an object with a tool name and an arguments key. With `strict` (a call
 * quoted in prose), it may have no keys but those of a call, and its arguments must be an object.
 */
export function isCallShaped(value: unknown, options: { strict?: boolean } = {}): boolean {
  if (!isRecord(value)) return false;
  const inner = isRecord(value.function) ? value.function : value;
  if (!NAME_KEYS.some((k) => typeof inner[k] === "string" && inner[k] !== "")) return false;
  const argKey = ARG_KEYS.find((k) => Object.hasOwn(inner, k));
  if (argKey === undefined) return false;
  if (!options.strict) return true;
  if (!isRecord(inner[argKey]) && typeof inner[argKey] !== "string") return false;
  return Object.keys(value).every((k) => CALL_KEYS.has(k)) &&
    Object.keys(inner).every((k) => CALL_KEYS.has(k));
}

/** A call draft from a JSON call object (`{name, arguments}` and its variants); `name` is `""` when absent. */
export function draftFromValue(value: unknown): CallDraft {
  if (!isRecord(value)) {
    return { name: "", arguments: safeStringify(value), error: "the call is not a JSON object" };
  }
  const inner = isRecord(value.function) ? value.function : value;
  let name = "";
  for (const key of NAME_KEYS) {
    if (typeof inner[key] === "string") {
      name = inner[key] as string;
      break;
    }
  }
  const draft: CallDraft = { name, arguments: {} };
  for (const key of ID_KEYS) {
    if (typeof value[key] === "string") {
      draft.id = value[key] as string;
      break;
    }
  }
  const argKey = ARG_KEYS.find((k) => Object.hasOwn(inner, k));
  if (argKey === undefined) return draft; // no arguments: {} (the schema decides whether that is fine)
  const args = inner[argKey];
  if (isRecord(args)) draft.arguments = args;
  else if (typeof args === "string") {
    // Arguments given as JSON text (OpenAI style): parse it, keep the text when it is not an object.
    const parsed = parseJsonSafe(args);
    if (parsed.ok && isRecord(parsed.value)) draft.arguments = parsed.value;
    else {
      draft.arguments = args;
      draft.error = "the arguments are not a JSON object";
    }
  } else if (args === null) draft.arguments = {};
  else {
    draft.arguments = safeStringify(args);
    draft.error = "the arguments are not a JSON object";
  }
  return draft;
}

/** Apertus writes each call as `{"NAME": {arguments}}`. */
export function draftFromNameKey(value: unknown): CallDraft {
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && isRecord(value[keys[0]])) {
      return { name: keys[0], arguments: value[keys[0]] as Record<string, unknown> };
    }
  }
  return draftFromValue(value);
}

/** How {@link addJsonCalls} reads a run of values. */
export interface JsonCallOptions {
  /** The family reported on each call. */
  format: ExtractFormat;
  /** The markup around the calls. */
  block: { start: number; end: number };
  /** Every value must look like a call, or none is taken (markup that is also used for other JSON). */
  requireShape?: boolean | "strict";
  /** Call-shaped text without a marker: with declared tools, only declared names are taken. */
  weak?: boolean;
  /** How one value is turned into a call (default {@link draftFromValue}). */
  draft?: (value: unknown) => CallDraft;
}

/** Adds the calls of a run of JSON values; returns how many were added (`0` when the shape check failed). */
export function addJsonCalls(scan: Scan, items: readonly Located[], options: JsonCallOptions): number {
  const flat: Located[] = [];
  for (const item of items) for (const value of callValues(item.value)) flat.push({ ...item, value });
  if (flat.length === 0) return 0;
  if (options.requireShape) {
    const strict = options.requireShape === "strict";
    const draft = options.draft;
    const ok = flat.every((f) => draft ? draft(f.value).name !== "" : isCallShaped(f.value, { strict }));
    if (!ok) return 0;
  }
  let n = 0;
  for (const f of flat) {
    const draft = (options.draft ?? draftFromValue)(f.value);
    if (scan.add(draft, options.format, f.start, f.end, options.block, { weak: options.weak })) n++;
  }
  return n;
}

/** A tool name found in broken JSON text, or `""`. */
export function salvageName(raw: string): string {
  const m = /"(?:name|tool_name|tool|function)"\s*:\s*"([^"\\\n]{1,200})"/.exec(raw);
  return m ? m[1] : "";
}
