/**
 * Provider shapes in, one shape out: tool declarations and tool calls from OpenAI Chat, OpenAI Responses,
 * Anthropic, Ollama, Gemini, MCP and plain `{ name, arguments }`.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";

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
 * Lower-cases OpenAPI/Gemini upper-case type names (`"STRING"` → `"string"`) throughout a schema, without
 * changing anything else. Returns the input untouched when there is nothing to change.
 */
export function lowerTypes(schema: unknown, depth = 0): unknown {
  if (depth > 200 || typeof schema !== "object" || schema === null) return schema;
  if (Array.isArray(schema)) {
    let changed = false;
    const out = schema.map((s) => {
      const r = lowerTypes(s, depth + 1);
      if (r !== s) changed = true;
      return r;
    });
    return changed ? out : schema;
  }
  let out: Obj | null = null;
  for (const [k, v] of Object.entries(schema)) {
    let r: unknown = v;
    if (k === "type") {
      if (typeof v === "string" && GEMINI_TYPES[v]) r = GEMINI_TYPES[v];
      else if (Array.isArray(v)) {
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
  const out: NormalisedTool[] = [];
  tools.forEach((t, i) => {
    if (!isRecord(t)) throw new TypeError(`tools[${i}] is not an object; expected a tool declaration`);
    const decls = t.functionDeclarations ?? t.function_declarations;
    if (Array.isArray(decls)) {
      for (const d of decls) {
        if (!isRecord(d)) throw new TypeError(`tools[${i}].functionDeclarations has a non-object entry`);
        out.push(tool(d.name, d.description, d.parametersJsonSchema ?? d.parameters, "gemini"));
      }
      return;
    }
    if (Array.isArray(t.tools)) { // an MCP tools/list result
      out.push(...normaliseTools(t.tools).map((x) => ({ ...x, shape: "mcp" as const })));
      return;
    }
    if (isRecord(t.function)) {
      const f = t.function;
      out.push(tool(f.name, f.description, f.parameters, "openai_chat", f.strict));
      return;
    }
    if (typeof t.name !== "string") {
      throw new TypeError(
        `tools[${i}] has no name; expected e.g. {type:"function", function:{name, parameters}}`,
      );
    }
    if (t.type === "function") {
      out.push(tool(t.name, t.description, t.parameters, "openai_responses", t.strict));
    } else if (t.input_schema !== undefined) {
      out.push(tool(t.name, t.description, t.input_schema, "anthropic"));
    } else if (t.inputSchema !== undefined) out.push(tool(t.name, t.description, t.inputSchema, "mcp"));
    else if (t.parametersJsonSchema !== undefined) {
      out.push(tool(t.name, t.description, t.parametersJsonSchema, "gemini"));
    } else out.push(tool(t.name, t.description, t.parameters ?? t.schema, "plain", t.strict));
  });
  return out;
}

/** Argument text past this many characters is not hashed whole: its length stands for the rest. */
const HASHED_MOST = 100_000;

/**
 * Two FNV-1a hashes (different seeds and multipliers) over the parts in turn, as 16 hex digits: the parts are
 * read one after another rather than joined, as a joined string is read more slowly until flattened.
 */
function hash(parts: readonly string[]): string {
  let a = 0x811c9dc5, b = 0x01000193 ^ 0x5bd1e995;
  for (const s of parts) {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
    }
  }
  return hex32(a) + hex32(b);
}

/**
 * The 32 bits of `n` as 8 hex digits, made from their character codes: V8 writes a number from 2^31 on (not a
 * small integer) in base 16 about six times slower than a small one, which made half of all synthetic ids cost
 * twice as much, and `toString(16)` with padding costs twice this even on small ones.
 */
function hex32(n: number): string {
  return String.fromCharCode(
    hexDigit(n >>> 28),
    hexDigit(n >>> 24 & 15),
    hexDigit(n >>> 20 & 15),
    hexDigit(n >>> 16 & 15),
    hexDigit(n >>> 12 & 15),
    hexDigit(n >>> 8 & 15),
    hexDigit(n >>> 4 & 15),
    hexDigit(n & 15),
  );
}

/** The character code of hex digit `v` (0–15), in lower case. */
function hexDigit(v: number): number {
  return v + (v < 10 ? 48 : 87);
}

function stable(v: unknown, depth = 0): string {
  if (depth > 64) return "…";
  if (typeof v !== "object" || v === null) {
    try {
      return JSON.stringify(v) ?? String(v);
    } catch {
      return String(v);
    }
  }
  if (Array.isArray(v)) return "[" + v.map((x) => stable(x, depth + 1)).join(",") + "]";
  return "{" +
    Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + stable((v as Obj)[k], depth + 1)).join(",") +
    "}";
}

/** A stable synthetic id for a call without one: same name, arguments and position give the same id. */
export function syntheticId(name: string, args: string, index: number): string {
  const text = args.length > HASHED_MOST ? args.slice(0, HASHED_MOST) + args.length : args;
  return "call_" + hash([String(index), "\u0000", name, "\u0000", text]);
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
    id: given ? id : syntheticId(n, text ? args : stable(args), index),
    syntheticId: !given,
    name: n,
    raw: text ? args : undefined,
    value: text ? undefined : args,
    shape,
  };
}

/**
 * Normalises tool calls from any supported provider shape. Assistant messages are expanded into their
 * calls (OpenAI `tool_calls`, Anthropic `content` blocks, Gemini `parts`); text blocks are skipped.
 * Never throws: an entry with no recognisable shape becomes a call with an empty name.
 */
export function normaliseCalls(calls: readonly unknown[]): NormalisedCall[] {
  const out: NormalisedCall[] = [];
  const list = Array.isArray(calls) ? calls : [calls];
  for (const c of list) one(c, out);
  return out;
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
  const args = c.arguments !== undefined
    ? c.arguments
    : c.args !== undefined
    ? c.args
    : c.input !== undefined
    ? c.input
    : c.parameters;
  out.push(call(i, c.id ?? c.call_id, c.name, args, c.args !== undefined ? "gemini" : "plain"));
}
