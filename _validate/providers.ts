/**
 * Provider shapes in, one shape out: tool declarations and tool calls from OpenAI Chat, OpenAI Responses,
 * Anthropic, Ollama, Gemini, MCP and plain `{ name, arguments }`.
 *
 * @module
 */
import { eachHeld, firstHole, givenValue, isRecord } from "../_common/values.ts";
import { copyAsSent } from "../_common/json.ts";
import { schemaGraphProblem } from "../_common/measure.ts";

/** Which provider shape a declaration or call came in. */
export type ProviderShape =
  | "openai_chat"
  | "openai_responses"
  | "anthropic"
  | "ollama"
  | "gemini"
  | "mcp"
  | "plain";

/** A tool declaration in one shape. */
export interface NormalisedTool {
  /** The tool name. */
  name: string;
  /** The description, when one was given. */
  description?: string;
  /** The root parameter schema as declared (Gemini types lower-cased); `undefined` when none was given. */
  schema: unknown;
  /** OpenAI `strict: true`. */
  strict?: boolean;
  /** The shape it came in. */
  shape: ProviderShape;
}

/** A tool call in one shape. */
export interface NormalisedCall {
  /** Position in the list given (after expanding messages into their calls). */
  index: number;
  /** The provider's call id, or a stable synthetic `call_` id when it had none. */
  id: string;
  /** Whether `id` was made up here. */
  syntheticId: boolean;
  /** The tool name ("" when the call named none). */
  name: string;
  /** The arguments as JSON text, when the call carried text. */
  raw?: string;
  /** The arguments as a value, when the call carried a value instead of text. */
  value?: unknown;
  /** The shape it came in. */
  shape: ProviderShape;
  /** What reading the entry threw (a throwing getter, a revoked proxy), or undefined when it was read. */
  unreadable: unknown;
}

type Obj = Record<string, unknown>;

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

const GEMINI_TYPES: Record<string, string> = {
  STRING: "string",
  NUMBER: "number",
  INTEGER: "integer",
  BOOLEAN: "boolean",
  ARRAY: "array",
  OBJECT: "object",
  NULL: "null",
};

/**
 * Lower-cases OpenAPI/Gemini upper-case type names (`"STRING"` -> `"string"`) throughout a schema, without
 * changing anything else. Returns the input untouched when there is nothing to change.
 */
export function lowerTypes(schema: unknown, depth = 0): unknown {
  if (depth > 200 || typeof schema !== "object" || schema === null) return schema;
  if (Array.isArray(schema)) {
    // (by what it holds, not by `map`, which asks for every index of a sparse array: 2^32-1 of them)
    const changes: [number, unknown][] = [];
    eachHeld(schema, (s, i) => {
      const r = lowerTypes(s, depth + 1);
      if (r !== s) changes.push([i, r]);
    });
    if (changes.length === 0) return schema;
    const out: unknown[] = new Array(schema.length);
    eachHeld(schema, (s, i) => out[i] = s);
    for (const [i, r] of changes) out[i] = r;
    return out;
  }
  let out: Obj | null = null;
  for (const [k, v] of Object.entries(schema)) {
    let r: unknown = v;
    if (k === "type") {
      if (typeof v === "string" && GEMINI_TYPES[v]) r = GEMINI_TYPES[v];
      // (a list with a hole is refused when compiled, null being no type: not read slot by slot by `map`)
      else if (Array.isArray(v) && firstHole(v) < 0) {
        const m = v.map((t) => typeof t === "string" && GEMINI_TYPES[t] ? GEMINI_TYPES[t] : t);
        if (m.some((t, i) => t !== v[i])) r = m;
      }
    } else if (
      k === "enum" || k === "const" || k === "default" || k === "examples" || k === "example" ||
      k === "required"
    ) {
      r = v;
    } else if (k === "properties" || k === "$defs" || k === "definitions" || k === "patternProperties") {
      if (isRecord(v)) {
        let inner: Obj | null = null;
        for (const [pk, pv] of Object.entries(v)) {
          const pr = lowerTypes(pv, depth + 1);
          if (pr !== pv) {
            inner ??= { ...v };
            Object.defineProperty(inner, pk, {
              value: pr,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          }
        }
        if (inner) r = inner;
      }
    } else if (typeof v === "object" && v !== null) r = lowerTypes(v, depth + 1);
    if (r !== v) {
      out ??= { ...schema } as Obj;
      out[k] = r;
    }
  }
  return out ?? schema;
}

function tool(
  name: unknown,
  description: unknown,
  schema: unknown,
  shape: ProviderShape,
  strict?: unknown,
): NormalisedTool {
  // Before any walk: every one reads the schema as a tree, which one built in code need not be.
  const problem = schemaGraphProblem(schema);
  if (problem !== null) throw new TypeError(`tool ${givenValue(name)}: ${problem.message}`);
  const t: NormalisedTool = { name: typeof name === "string" ? name : "", schema: lowerTypes(schema), shape };
  if (typeof description === "string") t.description = description;
  if (typeof strict === "boolean") t.strict = strict;
  return t;
}

/**
 * Normalises tool declarations from any supported provider shape. A Gemini `Tool` with several
 * `functionDeclarations` (and an MCP `tools/list` result) expands into several tools.
 * Throws a `TypeError` naming the position of an entry that has no recognisable shape.
 */
export function normaliseTools(tools: readonly unknown[]): NormalisedTool[] {
  if (!Array.isArray(tools)) throw new TypeError("tools must be an array of tool declarations");
  return tools.flatMap((t, i) => normaliseTool(t, `tools[${i}]`));
}

/**
 * Normalises one entry of a tools list, `place` naming it in errors (`tools[3]`): the tools it declares (a
 * Gemini `Tool` or an MCP `tools/list` result declares several).
 */
export function normaliseTool(entry: unknown, place: string): NormalisedTool[] {
  // what JSON carries of it, as the model is sent it (and as the tools caches compare it): a keyword the
  // model never sees is not enforced, on the first call or a later one
  const t = copyAsSent(entry);
  if (!isRecord(t)) throw new TypeError(`${place} is not an object; expected a tool declaration`);
  const decls = t.functionDeclarations ?? t.function_declarations;
  if (Array.isArray(decls)) {
    return decls.map((d) => {
      if (!isRecord(d)) throw new TypeError(`${place}.functionDeclarations has a non-object entry`);
      return tool(d.name, d.description, d.parametersJsonSchema ?? d.parameters, "gemini");
    });
  }
  if (Array.isArray(t.tools)) { // an MCP tools/list result
    return normaliseTools(t.tools).map((x) => ({ ...x, shape: "mcp" as const }));
  }
  if (isRecord(t.function)) {
    const f = t.function;
    return [tool(f.name, f.description, f.parameters, "openai_chat", f.strict)];
  }
  if (typeof t.name !== "string") {
    throw new TypeError(
      `${place} has no name; expected e.g. {type:"function", function:{name, parameters}}`,
    );
  }
  if (t.type === "function") return [tool(t.name, t.description, t.parameters, "openai_responses", t.strict)];
  if (t.input_schema !== undefined) return [tool(t.name, t.description, t.input_schema, "anthropic")];
  if (t.inputSchema !== undefined) return [tool(t.name, t.description, t.inputSchema, "mcp")];
  if (t.parametersJsonSchema !== undefined) {
    return [tool(t.name, t.description, t.parametersJsonSchema, "gemini")];
  }
  return [tool(t.name, t.description, t.parameters ?? t.schema, "plain", t.strict)];
}

/** Argument text past this many characters is not hashed whole: its length stands for the rest. */
const HASHED_MOST = 100_000;

/**
 * The two FNV-1a hashes (different seeds and multipliers) a synthetic id is made of, over the text read into
 * them in turn: the position, the name, then the argument text, of which the first `HASHED_MOST` characters
 * are hashed and the length stands for the rest. Pieces are read one after another, never joined first: a
 * joined string is read more slowly until flattened, and object arguments need no text of their own (see
 * `readValue`).
 */
class IdHash {
  // both seeds int32 (0x811c9dc5 alone is a double): JavaScriptCore then keeps the hashes int32 in `#mix`'s loop
  #a = 0x811c9dc5 | 0;
  #b = 0x01000193 ^ 0x5bd1e995;
  /** Characters of argument text still hashed. */
  #room = HASHED_MOST;
  /** The argument text's length so far. */
  #length = 0;

  /** Reads `s` whole. */
  add(s: string): void {
    this.#mix(s, s.length);
  }

  /** Reads `s` as the next piece of the argument text. */
  addArguments(s: string): void {
    this.#length += s.length;
    if (this.#room === 0) return;
    const n = Math.min(s.length, this.#room);
    this.#room -= n;
    this.#mix(s, n);
  }

  /** Reads the one code unit `c` as the next piece of the argument text. */
  addUnit(c: number): void {
    this.#length++;
    if (this.#room === 0) return;
    this.#room--;
    this.#a = Math.imul(this.#a ^ c, 0x01000193);
    this.#b = Math.imul(this.#b ^ c, 0x5bd1e995) ^ (this.#b >>> 15);
  }

  /**
   * Reads `JSON.stringify(s)` as the next piece of the argument text, without making it where `s` holds
   * nothing JSON escapes (a quote, a backslash, a control character, a surrogate: any, to keep the test
   * simple).
   */
  addJsonString(s: string): void {
    const a = this.#a, b = this.#b, room = this.#room;
    this.addUnit(0x22);
    const n = Math.min(s.length, this.#room);
    let i = 0;
    let ha = this.#a, hb = this.#b;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x22 || c === 0x5c || c < 0x20 || (c & 0xF800) === 0xD800) break;
      ha = Math.imul(ha ^ c, 0x01000193);
      hb = Math.imul(hb ^ c, 0x5bd1e995) ^ (hb >>> 15);
    }
    // past the hashed characters, the rest is still read: an escape there changes the text's length
    if (i === n) {
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c === 0x22 || c === 0x5c || c < 0x20 || (c & 0xF800) === 0xD800) break;
      }
    }
    if (i === s.length) {
      this.#a = ha;
      this.#b = hb;
      this.#room -= n;
      this.#length += s.length;
      this.addUnit(0x22);
      return;
    }
    this.#a = a;
    this.#b = b;
    this.#room = room;
    this.#length--;
    this.addArguments(JSON.stringify(s));
  }

  /** True once `HASHED_MOST` characters of argument text have been hashed: the rest is only counted. */
  get spent(): boolean {
    return this.#room === 0;
  }

  /**
   * `call_` and the two hashes as 16 hex digits, made as one flat string from its 21 codes: joined from eight
   * two-digit pieces, it was a rope, which whoever reads the id (to answer the call, to log it) flattens
   * again. Per id made and read: 0.035 us against 0.085 on V8 (Deno), 0.08 against 0.09-0.12 on
   * JavaScriptCore (Bun), where it costs 0.02 us more when nothing reads the id.
   */
  id(): string {
    if (this.#length > HASHED_MOST) this.add(String(this.#length));
    const a = this.#a, b = this.#b, d = HEX_DIGITS;
    // deno-fmt-ignore
    return String.fromCharCode(
      0x63, 0x61, 0x6c, 0x6c, 0x5f, // call_
      d[a >>> 28], d[a >>> 24 & 15], d[a >>> 20 & 15], d[a >>> 16 & 15],
      d[a >>> 12 & 15], d[a >>> 8 & 15], d[a >>> 4 & 15], d[a & 15],
      d[b >>> 28], d[b >>> 24 & 15], d[b >>> 20 & 15], d[b >>> 16 & 15],
      d[b >>> 12 & 15], d[b >>> 8 & 15], d[b >>> 4 & 15], d[b & 15],
    );
  }

  /**
   * Reads the first `n` characters of `s`. The loop is bound by the latency of the second hash's step (xor,
   * multiply, xor: about five cycles a character, 1.3-1.4 ns on both engines), the first hash's step running
   * beside it: what a synthetic id costs past a fixed part grows with the argument text at that rate.
   */
  #mix(s: string, n: number): void {
    let a = this.#a, b = this.#b;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
    }
    this.#a = a;
    this.#b = b;
  }
}

/**
 * The character codes of the hex digits, by value. Read a nibble at a time, not as `toString(16)`: V8 writes a
 * number from 2^31 on (not a small integer) in base 16 about six times slower than a small one, and half of
 * all hashes are such numbers.
 */
const HEX_DIGITS = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/** A hash started with a call's position and name, as every synthetic id is. */
function idHashOf(name: string, index: number): IdHash {
  const h = new IdHash();
  h.add(String(index));
  h.add("\u0000");
  h.add(name);
  h.add("\u0000");
  return h;
}

/**
 * A stable synthetic id for a call without one, from its argument text: same name, arguments and position
 * give the same id.
 */
export function syntheticId(name: string, args: string, index: number): string {
  const h = idHashOf(name, index);
  h.addArguments(args);
  return h.id();
}

/**
 * The synthetic id of a call whose arguments are a value (an Ollama call's object), not text: that of the
 * value's canonical text, its keys sorted at every level (`{"a":1,"b":[true,null]}`; nesting past 64 levels
 * is "..."), read straight into the hash. The value is read no further than `HASHED_MOST` characters of that
 * text (the length read so far then stands for the rest): an object a program built may hold itself more than
 * once, whose text would take longer to read than the age of the universe.
 */
export function syntheticIdOfValue(name: string, value: unknown, index: number): string {
  const h = idHashOf(name, index);
  readValue(h, value, 0);
  return h.id();
}

/**
 * The own enumerable keys of `o`, sorted as `sort()` sorts them (by code unit); a few (most arguments have a
 * handful) by insertion, which costs a third of the native sort's call on either engine.
 */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > k; j--) keys[j + 1] = keys[j];
    keys[j + 1] = k;
  }
  return keys;
}

/** Reads the canonical text of `v` (see `syntheticIdOfValue`) into `h`, piece by piece. */
function readValue(h: IdHash, v: unknown, depth: number): void {
  if (h.spent) return;
  if (depth > 64) h.addArguments("\u2026");
  else if (typeof v === "string") h.addJsonString(v);
  else if (typeof v === "number") h.addArguments(Number.isFinite(v) ? String(v) : "null");
  else if (typeof v !== "object" || v === null) {
    let text: string;
    try {
      text = JSON.stringify(v) ?? String(v);
    } catch {
      text = String(v); // a BigInt
    }
    h.addArguments(text);
  } else if (Array.isArray(v)) {
    h.addUnit(0x5b); // [
    // a hole is read as nothing between its commas, as `map` and `join` make it
    for (let i = 0; i < v.length && !h.spent; i++) {
      if (i > 0) h.addUnit(0x2c); // ,
      if (i in v) readValue(h, v[i], depth + 1);
    }
    h.addUnit(0x5d); // ]
  } else {
    h.addUnit(0x7b); // {
    const keys = sortedKeys(v);
    for (let i = 0; i < keys.length && !h.spent; i++) {
      if (i > 0) h.addUnit(0x2c); // ,
      h.addJsonString(keys[i]);
      h.addUnit(0x3a); // :
      readValue(h, (v as Obj)[keys[i]], depth + 1);
    }
    h.addUnit(0x7d); // }
  }
}

function call(
  index: number,
  id: unknown,
  name: unknown,
  args: unknown,
  shape: ProviderShape,
): NormalisedCall {
  const n = typeof name === "string" ? name : "";
  const text = typeof args === "string";
  const given = typeof id === "string" && id !== "";
  // one object literal, one shape
  return {
    index,
    id: given ? id : text ? syntheticId(n, args, index) : syntheticIdOfValue(n, args, index),
    syntheticId: !given,
    name: n,
    raw: text ? args : undefined,
    value: text ? undefined : args,
    shape,
    unreadable: undefined,
  };
}

/**
 * Normalises tool calls from any supported provider shape. Assistant messages are expanded into their
 * calls (OpenAI `tool_calls`, Anthropic `content` blocks, Gemini `parts`); text and reasoning blocks are
 * skipped, in a message or in a bare content list.
 * Never throws: an entry with no recognisable shape becomes a call with an empty name, and one whose reading
 * throws (a getter, a revoked proxy) a call with `unreadable` set.
 */
export function normaliseCalls(calls: readonly unknown[]): NormalisedCall[] {
  const out: NormalisedCall[] = [];
  let list: readonly unknown[];
  try {
    list = Array.isArray(calls) ? calls : [calls];
    for (const c of list) {
      const before = out.length;
      try {
        one(c, out);
      } catch (e) {
        out.length = before; // what the entry gave before it threw is not trusted either
        out.push(unreadableCall(before, e));
      }
    }
  } catch (e) {
    out.push(unreadableCall(out.length, e)); // the list itself could not be read
  }
  return out;
}

/** The call for an entry whose reading threw `error`. */
function unreadableCall(index: number, error: unknown): NormalisedCall {
  const c = call(index, undefined, undefined, undefined, "plain");
  c.unreadable = error ?? new Error("unknown error");
  return c;
}

function one(c: unknown, out: NormalisedCall[]): void {
  const i = out.length;
  if (!isRecord(c)) {
    out.push(call(i, undefined, undefined, undefined, "plain"));
    return;
  }
  // the common shapes first: every probe of an absent property costs on the hot path
  const fn = c.function;
  if (isRecord(fn)) { // OpenAI Chat (text arguments) or Ollama (object arguments)
    out.push(
      call(i, c.id, fn.name, fn.arguments, typeof fn.arguments === "string" ? "openai_chat" : "ollama"),
    );
    return;
  }
  const type = c.type;
  if (type === "function_call") {
    out.push(call(i, str(c.call_id) ?? c.id, c.name, c.arguments, "openai_responses"));
    return;
  }
  if (type === "tool_use") {
    out.push(call(i, c.id, c.name, c.input, "anthropic"));
    return;
  }
  if (isRecord(c.functionCall)) {
    const f = c.functionCall;
    out.push(call(i, f.id, f.name, f.args, "gemini"));
    return;
  }
  // whole messages
  if (Array.isArray(c.tool_calls)) {
    for (const x of c.tool_calls) one(x, out);
    return;
  }
  if (Array.isArray(c.content) && c.role !== undefined) {
    for (const x of c.content) if (isRecord(x) && x.type === "tool_use") one(x, out);
    return;
  }
  if (Array.isArray(c.parts)) {
    for (const x of c.parts) if (isRecord(x) && isRecord(x.functionCall)) one(x, out);
    return;
  }
  if (c.method === "tools/call" && isRecord(c.params)) {
    out.push(
      call(i, typeof c.id === "number" ? String(c.id) : c.id, c.params.name, c.params.arguments, "mcp"),
    );
    return;
  }
  if (isContentBlock(c)) return; // a text or reasoning block beside the calls of a bare content list
  const args = c.arguments !== undefined
    ? c.arguments
    : c.args !== undefined
    ? c.args
    : c.input !== undefined
    ? c.input
    : c.parameters;
  out.push(call(i, c.id ?? c.call_id, c.name, args, c.args !== undefined ? "gemini" : "plain"));
}

/**
 * Whether `c` is content that is no call: a text, reasoning or media block of a bare Anthropic `content`,
 * Gemini `parts` or Responses `output` list (`{type: "text", text}`, `{text}`, `{type: "reasoning"}`). It names
 * no tool and carries no arguments, so nothing could run from it; read as a call it would block the turn as a
 * nameless one.
 */
function isContentBlock(c: Record<string, unknown>): boolean {
  if (
    c.name !== undefined || c.arguments !== undefined || c.args !== undefined || c.input !== undefined ||
    c.parameters !== undefined
  ) return false;
  switch (c.type) {
    case undefined:
      return typeof c.text === "string"; // a Gemini text part
    case "text":
    case "thinking":
    case "redacted_thinking":
    case "reasoning":
    case "output_text":
    case "refusal":
    case "image":
    case "document":
      return true;
    default:
      return false;
  }
}
