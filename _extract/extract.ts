/**
 * Recovers tool calls that models write into their text.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import { parseJsonSafe } from "../_common/json.ts";

/** Which text convention a call was written in. */
export type ExtractFormat =
  | "hermes"
  | "qwen_xml"
  | "llama_json"
  | "llama_python"
  | "mistral"
  | "fenced_json"
  | "bare_json";

/** One tool call recovered from message text. */
export interface ExtractedToolCall {
  /** The tool name; `""` when the markup held no recognisable name. */
  name: string;
  /** The arguments object, or the raw argument text when it did not parse to an object. */
  arguments: Record<string, unknown> | string;
  /** The call id, when the text carried one (Mistral). */
  id?: string;
  /** The convention the call was written in. */
  format: ExtractFormat;
  /** Index of the first code unit of the call itself (its JSON object or Python call) in the text. */
  start: number;
  /** Index one past the last code unit of the call itself. */
  end: number;
  /** The span of the markup around the call (tags, fence, prefix); several calls may share one block. */
  block: { start: number; end: number };
  /** `text.slice(start, end)`. */
  raw: string;
  /** Set when the call was recognised but could not be read completely; `arguments` is then raw text. */
  error?: string;
}

const NAME_KEYS = ["name", "tool", "tool_name", "function"] as const;
const ARG_KEYS = ["arguments", "parameters", "args", "input"] as const;

/**
 * Finds the tool calls written into `text`, in the order they appear. Returns `[]` for plain prose. Never
 * throws, and runs in time linear in the length of the text.
 *
 * @param text The assistant message text.
 * @returns The recovered calls, each with its span in `text`.
 *
 * @example Several calls in one Mistral block
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 *
 * const calls = extractToolCalls('[TOOL_CALLS][{"name":"a","arguments":{}},{"name":"b","arguments":{"x":1}}]');
 * assert.deepEqual(calls.map((c) => [c.format, c.name, c.arguments]), [
 *   ["mistral", "a", {}],
 *   ["mistral", "b", { x: 1 }],
 * ]);
 * assert.deepEqual(calls[0].block, calls[1].block); // one block of markup around both
 * ```
 *
 * @example A call that does not parse comes back with an error, not silently dropped
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 *
 * const [call] = extractToolCalls('<tool_call>{"name": "search", "arguments": {"q": "x"</tool_call>');
 * assert.equal(call.name, "search");
 * assert.equal(typeof call.arguments, "string"); // the raw text, for the validator to reject
 * assert.match(call.error!, /^the call is not valid JSON/);
 * ```
 *
 * @example Llama's built-in tool syntax, and plain prose
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 *
 * const [call] = extractToolCalls('<|python_tag|>brave_search.call(query="oslo weather")');
 * assert.equal(call.format, "llama_python");
 * assert.deepEqual(call.arguments, { query: "oslo weather" });
 * assert.deepEqual(extractToolCalls("Just prose, no calls."), []);
 * ```
 */
export function extractToolCalls(text: string): ExtractedToolCall[] {
  if (typeof text !== "string" || text.length === 0) return [];
  const calls: ExtractedToolCall[] = [];
  try {
    let covered = 0; // everything before this index already belongs to a recognised block
    const find = makeFinder(text);
    const markers = /<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|```/g;
    let m: RegExpExecArray | null;
    while ((m = markers.exec(text)) !== null) {
      if (m.index < covered) {
        markers.lastIndex = covered;
        continue;
      }
      let end: number;
      if (m[0] === "<tool_call>") end = readHermes(text, m.index, calls, find);
      else if (m[0] === "<|python_tag|>") end = readPythonTag(text, m.index, calls, find);
      else if (m[0] === "[TOOL_CALLS]") end = readMistral(text, m.index, calls, find);
      else end = readFence(text, m.index, calls, find);
      if (end > m.index) {
        covered = end;
        markers.lastIndex = end;
      }
    }
    if (calls.length === 0) readBare(text, calls);
  } catch {
    // Defensive: a parser bug must never surface as an exception on model output.
  }
  return calls;
}

// ---------------------------------------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------------------------------------

type Finder = (needle: string, from: number) => number;

function readHermes(text: string, at: number, out: ExtractedToolCall[], find: Finder): number {
  const open = "<tool_call>".length;
  const close = find("</tool_call>", at + open);
  const bodyStart = skipSpace(text, at + open);
  // An unclosed tag counts only when a call visibly starts after it; prose that mentions the tag is not a call.
  if (close < 0 && text[bodyStart] !== "{" && !text.startsWith("<function=", bodyStart)) return at;
  const bodyEnd = close < 0 ? text.length : close;
  const blockEnd = close < 0 ? text.length : close + "</tool_call>".length;
  const block = { start: at, end: blockEnd };
  if (text.startsWith("<function=", bodyStart)) {
    out.push(readQwenXml(text, bodyStart, trimEnd(text, bodyStart, bodyEnd), block, { unclosed: close < 0 }));
    return blockEnd;
  }
  const n = readJsonCalls(text, bodyStart, trimEnd(text, bodyStart, bodyEnd), "hermes", block, out);
  if (close < 0 && n > 0) out[out.length - 1].error ??= "the <tool_call> block is not closed";
  return blockEnd;
}

function readQwenXml(
  text: string,
  start: number,
  end: number,
  block: { start: number; end: number },
  { unclosed }: { unclosed: boolean },
): ExtractedToolCall {
  const body = text.slice(start, end);
  const head = /^<function=([^>\n]*)>/.exec(body);
  const name = head ? head[1].trim() : "";
  const args: Record<string, unknown> = {};
  const param = /<parameter=([^>\n]*)>([\s\S]*?)<\/parameter>/g;
  let p: RegExpExecArray | null;
  let count = 0;
  while ((p = param.exec(body)) !== null) {
    const key = p[1].trim();
    const value = p[2].replace(/^\n/, "").replace(/\n$/, "");
    defineOwn(args, key, parseLoose(value));
    count++;
  }
  const call: ExtractedToolCall = {
    name,
    arguments: args,
    format: "qwen_xml",
    start,
    end,
    block,
    raw: body,
  };
  if (!head) call.error = "the <function=...> header is missing";
  else if (!body.includes("</function>")) call.error = "the <function=...> block is not closed";
  else if (unclosed) call.error = "the <tool_call> block is not closed";
  if (call.error && count === 0) call.arguments = body;
  return call;
}

function readPythonTag(text: string, at: number, out: ExtractedToolCall[], find: Finder): number {
  const from = at + "<|python_tag|>".length;
  let bodyEnd = text.length;
  let blockEnd = text.length;
  for (const stop of ["<|eom_id|>", "<|eot_id|>", "<|eom|>", "<|end_of_text|>", "<|python_tag|>"]) {
    const i = find(stop, from);
    if (i >= 0 && i < bodyEnd) {
      bodyEnd = i;
      blockEnd = stop === "<|python_tag|>" ? i : i + stop.length;
    }
  }
  const block = { start: at, end: blockEnd };
  let pos = skipSpace(text, from);
  const limit = trimEnd(text, from, bodyEnd);
  let found = 0;
  while (pos < limit) {
    if (text[pos] === "{" || text[pos] === "[") {
      const valueEnd = scanValueEnd(text, pos, limit);
      found += readJsonCalls(text, pos, valueEnd, "llama_json", block, out);
      pos = valueEnd;
    } else {
      const call = readPythonCall(text, pos, limit, block);
      if (!call) break;
      out.push(call);
      found++;
      pos = call.end;
    }
    pos = skipSpace(text, pos);
    if (text[pos] === ";" || text[pos] === ",") pos = skipSpace(text, pos + 1);
    else break;
  }
  if (found === 0 && limit > from) {
    out.push({
      name: "",
      arguments: text.slice(skipSpace(text, from), limit),
      format: "llama_json",
      start: skipSpace(text, from),
      end: limit,
      block,
      raw: text.slice(skipSpace(text, from), limit),
      error: "the text after <|python_tag|> is neither a JSON call nor a name.call(...) call",
    });
  }
  return blockEnd;
}

function readMistral(text: string, at: number, out: ExtractedToolCall[], find: Finder): number {
  const from = at + "[TOOL_CALLS]".length;
  const next = find("[TOOL_CALLS]", from);
  const eos = find("</s>", from);
  let bodyEnd = text.length;
  if (next >= 0) bodyEnd = next;
  if (eos >= 0 && eos < bodyEnd) bodyEnd = eos;
  const pos = skipSpace(text, from);
  const limit = trimEnd(text, from, bodyEnd);
  if (pos >= limit) return at; // nothing but space before the next marker or the end
  if (text[pos] === "[" || text[pos] === "{") {
    const valueEnd = scanValueEnd(text, pos, limit);
    const block = { start: at, end: valueEnd };
    const n = readJsonCalls(text, pos, valueEnd, "mistral", block, out);
    return n > 0 ? valueEnd : at;
  }
  // v11+ tokenizer: [TOOL_CALLS]name[ARGS]{...}, optionally [CALL_ID]id before [ARGS].
  const argsAt = find("[ARGS]", pos);
  if (argsAt < 0 || argsAt >= limit) return at;
  let name = text.slice(pos, argsAt);
  let id: string | undefined;
  const idAt = name.indexOf("[CALL_ID]");
  if (idAt >= 0) {
    id = name.slice(idAt + "[CALL_ID]".length).trim();
    name = name.slice(0, idAt);
  }
  const jsonStart = skipSpace(text, argsAt + "[ARGS]".length);
  const jsonEnd = scanValueEnd(text, jsonStart, limit);
  const block = { start: at, end: jsonEnd };
  const call = objectCall(name.trim(), text, jsonStart, jsonEnd, "mistral", block);
  call.start = pos;
  call.raw = text.slice(pos, jsonEnd);
  if (id) call.id = id;
  out.push(call);
  return jsonEnd;
}

function readFence(text: string, at: number, out: ExtractedToolCall[], find: Finder): number {
  const lineEnd = find("\n", at + 3);
  if (lineEnd < 0) return at;
  const lang = text.slice(at + 3, lineEnd).trim().toLowerCase();
  if (!/^(json|jsonc|json5|tool_call|tool_calls|tool_code|)$/.test(lang)) {
    const close = find("```", lineEnd + 1);
    return close < 0 ? at : close + 3; // skip other code blocks whole so their content is never read
  }
  const close = find("```", lineEnd + 1);
  if (close < 0) return at;
  const block = { start: at, end: close + 3 };
  const start = skipSpace(text, lineEnd + 1);
  const end = trimEnd(text, start, close);
  if (text[start] !== "{" && text[start] !== "[") return block.end;
  const value = parseJsonSafe(text.slice(start, end));
  // A fenced block is only a call when it is shaped like one; other JSON in a fence is just JSON.
  if (!value.ok || !looksLikeCalls(value.value)) return block.end;
  readJsonCalls(text, start, end, "fenced_json", block, out);
  return block.end;
}

function readBare(text: string, out: ExtractedToolCall[]): void {
  const start = skipSpace(text, 0);
  if (text[start] !== "{" && text[start] !== "[") return;
  const end = trimEnd(text, start, text.length);
  const value = parseJsonSafe(text.slice(start, end));
  if (!value.ok || !looksLikeCalls(value.value)) return;
  readJsonCalls(text, start, end, "bare_json", { start, end }, out);
}

// ---------------------------------------------------------------------------------------------------------
// JSON-shaped calls
// ---------------------------------------------------------------------------------------------------------

/** Reads one JSON object or an array of them from `text[start, end)`; returns how many calls it pushed. */
function readJsonCalls(
  text: string,
  start: number,
  end: number,
  format: ExtractFormat,
  block: { start: number; end: number },
  out: ExtractedToolCall[],
): number {
  const raw = text.slice(start, end);
  const parsed = parseJsonSafe(raw);
  if (parsed.ok && Array.isArray(parsed.value)) {
    // Locate each element so every call gets its own span.
    let pos = skipSpace(text, start + 1);
    let n = 0;
    for (const element of parsed.value) {
      const elEnd = scanValueEnd(text, pos, end);
      out.push(callFromValue(element, text, pos, elEnd, format, block));
      n++;
      pos = skipSpace(text, elEnd);
      if (text[pos] === ",") pos = skipSpace(text, pos + 1);
    }
    return n;
  }
  if (parsed.ok) {
    out.push(callFromValue(parsed.value, text, start, end, format, block));
    return 1;
  }
  // Not JSON as a whole: maybe several objects in a row (Hermes models sometimes put two in one tag).
  if (text[start] === "{") {
    const first = scanValueEnd(text, start, end);
    if (first < end) {
      const firstValue = parseJsonSafe(text.slice(start, first));
      if (firstValue.ok) {
        out.push(callFromValue(firstValue.value, text, start, first, format, block));
        let pos = skipSpace(text, first);
        if (text[pos] === "," || text[pos] === ";") pos = skipSpace(text, pos + 1);
        return 1 + (pos < end ? readJsonCalls(text, pos, end, format, block, out) : 0);
      }
    }
  }
  out.push({
    name: salvageName(raw),
    arguments: raw,
    format,
    start,
    end,
    block,
    raw,
    error: `the call is not valid JSON: ${parsed.ok ? "" : parsed.error}`,
  });
  return 1;
}

function callFromValue(
  value: unknown,
  text: string,
  start: number,
  end: number,
  format: ExtractFormat,
  block: { start: number; end: number },
): ExtractedToolCall {
  const raw = text.slice(start, end);
  const base = { format, start, end, block, raw };
  if (!isRecord(value)) {
    return { ...base, name: "", arguments: raw, error: "the call is not a JSON object" };
  }
  // OpenAI-shaped {type: "function", function: {name, arguments}} written as text.
  const inner = isRecord(value.function) ? value.function : value;
  let name = "";
  for (const key of NAME_KEYS) {
    if (typeof inner[key] === "string") {
      name = inner[key] as string;
      break;
    }
  }
  const call: ExtractedToolCall = { ...base, name, arguments: {} };
  if (typeof value.id === "string") call.id = value.id;
  let args: unknown = undefined;
  let found = false;
  for (const key of ARG_KEYS) {
    if (Object.hasOwn(inner, key)) {
      args = inner[key];
      found = true;
      break;
    }
  }
  if (!name) call.error = "the call has no tool name";
  if (!found) return call; // a call with no arguments: {} (the schema decides whether that is fine)
  if (typeof args === "string") {
    // Arguments given as JSON text (OpenAI style): parse it, keep the text when it is not an object.
    const inner = parseJsonSafe(args);
    if (inner.ok && isRecord(inner.value)) call.arguments = inner.value;
    else {
      call.arguments = args;
      call.error ??= "the arguments are not a JSON object";
    }
  } else if (isRecord(args)) {
    call.arguments = args;
  } else {
    call.arguments = safeStringify(args);
    call.error ??= "the arguments are not a JSON object";
  }
  return call;
}

function objectCall(
  name: string,
  text: string,
  start: number,
  end: number,
  format: ExtractFormat,
  block: { start: number; end: number },
): ExtractedToolCall {
  const raw = text.slice(start, end);
  const parsed = parseJsonSafe(raw);
  const call: ExtractedToolCall = { name, arguments: raw, format, start, end, block, raw };
  if (parsed.ok && isRecord(parsed.value)) call.arguments = parsed.value;
  else call.error = "the arguments are not a JSON object";
  if (!name) call.error ??= "the call has no tool name";
  return call;
}

function looksLikeCalls(value: unknown): boolean {
  const one = (v: unknown): boolean => {
    if (!isRecord(v)) return false;
    const inner = isRecord(v.function) ? v.function : v;
    return typeof inner.name === "string" && ARG_KEYS.some((k) => Object.hasOwn(inner, k));
  };
  return Array.isArray(value) ? value.length > 0 && value.every(one) : one(value);
}

function salvageName(raw: string): string {
  const m = /"(?:name|tool|function)"\s*:\s*"([^"\\\n]{1,200})"/.exec(raw);
  return m ? m[1] : "";
}

// ---------------------------------------------------------------------------------------------------------
// Llama built-in call syntax: name.call(key="value", n=3) and name(key=...)
// ---------------------------------------------------------------------------------------------------------

function readPythonCall(
  text: string,
  pos: number,
  limit: number,
  block: { start: number; end: number },
): ExtractedToolCall | null {
  const head = /[A-Za-z_][\w.-]*/y;
  head.lastIndex = pos;
  const hm = head.exec(text);
  if (!hm || hm.index + hm[0].length >= limit) return null;
  let name = hm[0];
  let i = skipSpace(text, pos + name.length);
  if (text[i] !== "(") return null;
  if (name.endsWith(".call")) name = name.slice(0, -".call".length);
  i++;
  const args: Record<string, unknown> = {};
  const py = new PyReader(text, limit);
  let error: string | undefined;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= limit) {
      error = "the call is missing its closing parenthesis";
      break;
    }
    if (text[i] === ")") {
      i++;
      break;
    }
    const key = /[A-Za-z_]\w*/y;
    key.lastIndex = i;
    const km = key.exec(text);
    const eq = km ? skipSpace(text, i + km[0].length) : i;
    if (!km || text[eq] !== "=") {
      error = `expected name=value at offset ${i}`;
      break;
    }
    py.pos = skipSpace(text, eq + 1);
    const value = py.value();
    if (value === FAIL) {
      error = `could not read the value of ${km[0]} at offset ${py.pos}`;
      break;
    }
    defineOwn(args, km[0], value);
    i = skipSpace(text, py.pos);
    if (text[i] === ",") i++;
  }
  const end = error ? limit : i;
  const raw = text.slice(pos, end);
  const call: ExtractedToolCall = {
    name,
    arguments: error ? raw : args,
    format: "llama_python",
    start: pos,
    end,
    block,
    raw,
  };
  if (error) call.error = error;
  return call;
}

const FAIL: unique symbol = Symbol("fail");

/** A small reader for Python literals: strings, numbers, True/False/None, lists, tuples and dicts. */
class PyReader {
  pos = 0;
  depth = 0;
  constructor(readonly text: string, readonly limit: number) {}

  value(): unknown {
    const t = this.text;
    this.pos = skipSpace(t, this.pos);
    if (this.pos >= this.limit || this.depth > 64) return FAIL;
    const c = t[this.pos];
    if (c === '"' || c === "'") return this.string(c);
    if (c === "[" || c === "(") return this.list(c === "[" ? "]" : ")");
    if (c === "{") return this.dict();
    const word = /True|False|None|null|true|false|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/y;
    word.lastIndex = this.pos;
    const m = word.exec(t);
    if (!m || this.pos + m[0].length > this.limit) return FAIL;
    this.pos += m[0].length;
    if (m[0] === "True" || m[0] === "true") return true;
    if (m[0] === "False" || m[0] === "false") return false;
    if (m[0] === "None" || m[0] === "null") return null;
    return Number(m[0]);
  }

  string(quote: string): unknown {
    const t = this.text;
    const triple = t.startsWith(quote.repeat(3), this.pos);
    const close = triple ? quote.repeat(3) : quote;
    let i = this.pos + close.length;
    let s = "";
    while (i < this.limit) {
      const c = t[i];
      if (t.startsWith(close, i)) {
        this.pos = i + close.length;
        return s;
      }
      if (c === "\\" && i + 1 < this.limit) {
        const n = t[i + 1];
        s += n === "n" ? "\n" : n === "t" ? "\t" : n === "r" ? "\r" : n;
        i += 2;
        continue;
      }
      s += c;
      i++;
    }
    return FAIL;
  }

  list(close: string): unknown {
    const items: unknown[] = [];
    this.pos++;
    this.depth++;
    for (;;) {
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === close) {
        this.pos++;
        this.depth--;
        return items;
      }
      const v = this.value();
      if (v === FAIL) return FAIL;
      items.push(v);
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === ",") this.pos++;
      else if (this.text[this.pos] !== close) return FAIL;
    }
  }

  dict(): unknown {
    const obj: Record<string, unknown> = {};
    this.pos++;
    this.depth++;
    for (;;) {
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === "}") {
        this.pos++;
        this.depth--;
        return obj;
      }
      const k = this.value();
      if (k === FAIL || (typeof k !== "string" && typeof k !== "number")) return FAIL;
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] !== ":") return FAIL;
      this.pos++;
      const v = this.value();
      if (v === FAIL) return FAIL;
      defineOwn(obj, String(k), v);
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === ",") this.pos++;
      else if (this.text[this.pos] !== "}") return FAIL;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------------------

/** Sets an own property even for `__proto__`, never touching a prototype. */
function defineOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function parseLoose(text: string): unknown {
  const trimmed = text.trim();
  const parsed = parseJsonSafe(trimmed);
  return parsed.ok ? parsed.value : text;
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * `text.indexOf(needle, from)` remembered per needle, so a text with many unclosed markers is still read in
 * linear time: a search that found nothing (or found a later match) answers every later search from there.
 */
function makeFinder(text: string): (needle: string, from: number) => number {
  const memo = new Map<string, { from: number; at: number }>();
  return (needle, from) => {
    const hit = memo.get(needle);
    if (hit && from >= hit.from && (hit.at < 0 || hit.at >= from)) return hit.at;
    const at = text.indexOf(needle, from);
    memo.set(needle, { from, at });
    return at;
  };
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

function trimEnd(text: string, start: number, end: number): number {
  while (end > start && /\s/.test(text[end - 1])) end--;
  return end;
}

/**
 * Returns the index one past the JSON object or array starting at `start` (strings and escapes respected),
 * or `limit` when it never closes. Linear time.
 */
function scanValueEnd(text: string, start: number, limit: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return limit;
}
