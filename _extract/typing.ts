/**
 * Types the values that formats write as text (XML parameters, Python literals) by the declared schema of
 * each parameter, and says whether a tool name was declared.
 *
 * Without a declaration, text that is exactly a JSON literal (`42`, `3.5`, `true`, `null`, `{...}`, `[...]`) is
 * read as that literal and anything else stays the text as written: that is what the XML formats' own
 * templates produce (they write non-string values as JSON), and the validator's `coerce` remains there for
 * the rest. With a declaration, a parameter declared `string` keeps its text (`"5123123"` stays a string).
 *
 * @module
 */
import { normaliseTools } from "../_validate/providers.ts";
import { isRecord } from "../_common/values.ts";
import { parseJsonSafe, resolveLocalRef, SnapshotCache } from "../_common/json.ts";
import { FAIL, LiteralReader, PYTHON } from "./literal.ts";
import { defineOwn } from "./text.ts";

type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "object" | "array";

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/** Typers by the identity of the tools array, used while nothing in it changed (read per call). */
const typers = new SnapshotCache<Typer>();

/**
 * The {@link Typer} for `tools`, read once per tools array: extraction in a loop with the same array does
 * not read each declaration anew (a schema edited in place, or an entry added, is read on the next call).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { typerFor } from "./typing.ts";
 *
 * const tools = [{ name: "lookup", parameters: { type: "object" } }];
 * assert.equal(typerFor(tools), typerFor(tools));
 * assert.equal(typerFor(undefined).declared, undefined);
 * ```
 */
export function typerFor(tools: readonly unknown[] | undefined): Typer {
  if (!Array.isArray(tools)) return new Typer(tools);
  const roots = [tools];
  const known = typers.get(tools, "", roots);
  if (known !== undefined) return known;
  const made = new Typer(tools);
  typers.set(tools, "", roots, made);
  return made;
}

/** Types text values by declared schemas; built once per tools array (see {@link typerFor}). */
export class Typer {
  /** Declared tool names, or `undefined` when no tools were given. */
  readonly declared: ReadonlySet<string> | undefined;
  readonly #schemas = new Map<string, unknown>();
  /** {@link Typer.#types} remembered per tool and key. */
  readonly #typeMemo = new Map<string, Set<JsonType> | undefined>();

  /** @param tools Tool declarations in any provider shape; ones that cannot be read are skipped. */
  constructor(tools?: readonly unknown[]) {
    if (!Array.isArray(tools)) {
      this.declared = undefined;
      return;
    }
    const names = new Set<string>();
    for (const t of tools) {
      try {
        for (const n of normaliseTools([t])) {
          names.add(n.name);
          this.#schemas.set(n.name, n.schema);
        }
      } catch {
        // A declaration we cannot read types nothing; the validator reports it where it matters.
      }
    }
    this.declared = names;
  }

  /**
   * The declared tool that takes raw code (Functionary v3.1 and Llama 3.1 write `<|python_tag|>CODE`): one named
   * `python` or `ipython`, with the name of its one string parameter (`code` when it declares none).
   */
  codeTool(): { name: string; key: string } | undefined {
    for (const name of ["python", "ipython"]) {
      const schema = this.#schemas.get(name);
      if (schema === undefined) continue;
      const props = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
      const strings = Object.keys(props).filter((k) => this.#types(name, k)?.has("string"));
      return { name, key: strings.length === 1 ? strings[0] : "code" };
    }
    return undefined;
  }

  /** Whether parameter `key` of `tool` is declared to admit a string (then its text is kept as written). */
  mayBeString(tool: string, key: string): boolean {
    return this.#types(tool, key)?.has("string") ?? false;
  }

  /** Whether `name` may be taken for a call written without a marker (always, when no tools were given). */
  isDeclared(name: string): boolean {
    return this.declared === undefined || this.declared.has(name);
  }

  /**
   * The value of parameter `key` of tool `tool`, written as `text` (already unframed by the format). See
   * {@link TextTyping} for the conventions a format may add.
   */
  text(tool: string, key: string, text: string, how: TextTyping = {}): unknown {
    const types = this.#types(tool, key);
    if (how.nulls && text.trim().toLowerCase() === "null") return null;
    if (how.untypedAsText && types === undefined && this.declared !== undefined) return text;
    const infer = how.python ? inferPython : inferText;
    if (types === undefined) return infer(text);
    const typed = asDeclared(text, types);
    if (typed !== FAIL) return typed;
    return types.has("string") ? text : infer(text);
  }

  /** A literal value the model wrote for parameter `key` (Python, Gemma), fitted to its declared type. */
  literal(tool: string, key: string, value: unknown): unknown {
    const types = this.#types(tool, key);
    if (types === undefined || fits(value, types)) return value;
    if (typeof value === "string") {
      const typed = asDeclared(value, types);
      return typed === FAIL ? value : typed;
    }
    if (types.has("string") && (typeof value === "number" || typeof value === "boolean")) {
      return String(value);
    }
    return value;
  }

  /** `args` with each value fitted by {@link Typer.literal}, as a fresh object. */
  literalArgs(tool: string, args: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(args)) defineOwn(out, k, this.literal(tool, k, v));
    return out;
  }

  /** The JSON types declared for parameter `key` of `tool`, worked out once per pair. */
  #types(tool: string, key: string): Set<JsonType> | undefined {
    const id = `${tool}\u0000${key}`;
    if (this.#typeMemo.has(id)) return this.#typeMemo.get(id);
    const types = declaredTypes(this.#schemas.get(tool), key);
    this.#typeMemo.set(id, types);
    return types;
  }
}

/** How a format's parsers read a value written as text, beyond the declared schema. */
export interface TextTyping {
  /** A value not declared a string may be a Python literal (`True`, `None`, `['a']`): GLM and Step3. */
  python?: boolean;
  /** `null` (in any case) is null whatever the declared type: Qwen3-Coder, Seed-OSS and MiniMax parsers. */
  nulls?: boolean;
  /**
   * When tools were given, a parameter the schema does not type stays text, as the Qwen3-Coder parsers of
   * vLLM and SGLang read Qwen3-Coder and Seed-OSS XML.
   */
  untypedAsText?: boolean;
}

/** Text that is exactly a JSON literal, read as it; anything else, the text itself. */
export function inferText(text: string): unknown {
  const t = text.trim();
  if (t === "") return text;
  if (t === "true") return true;
  if (t === "false") return false;
  if (t === "null") return null;
  if (JSON_NUMBER.test(t)) {
    const n = asNumber(t);
    // Digits beyond double precision, and numbers beyond its range, stay text rather than silently change.
    return n === FAIL ? text : n;
  }
  if (t[0] === "{" || t[0] === "[") {
    const parsed = parseJsonSafe(t);
    if (parsed.ok) return parsed.value;
  }
  return text;
}

/** {@link inferText}, then a Python constant or container written whole (`True`, `None`, `{'a': 1}`). */
function inferPython(text: string): unknown {
  const inferred = inferText(text);
  if (inferred !== text) return inferred;
  const t = text.trim();
  if (t === "True") return true;
  if (t === "False") return false;
  if (t === "None") return null;
  if (t[0] !== "{" && t[0] !== "[") return text;
  const value = pythonLiteral(t);
  return value === FAIL ? text : value;
}

/** All of `t` read as one Python literal, or {@link FAIL}. */
function pythonLiteral(t: string): unknown {
  const reader = new LiteralReader(t, 0, t.length, PYTHON);
  const value = reader.value();
  reader.space();
  return reader.pos === t.length ? value : FAIL;
}

/** `text` read as one of the non-string types in `types`, or {@link FAIL}. */
function asDeclared(text: string, types: Set<JsonType>): unknown {
  const t = text.trim();
  if (types.has("null") && (t === "null" || t === "None")) return null;
  if (types.has("boolean")) {
    const lower = t.toLowerCase();
    if (lower === "true") return true;
    if (lower === "false") return false;
  }
  if ((types.has("number") || types.has("integer")) && JSON_NUMBER.test(t)) {
    const n = asNumber(t);
    if (n !== FAIL && (types.has("number") || Number.isInteger(n))) return n;
  }
  if ((types.has("object") || types.has("array")) && (t[0] === "{" || t[0] === "[")) {
    const parsed = parseJsonSafe(t);
    let value: unknown = parsed.ok ? parsed.value : FAIL;
    if (value === FAIL) value = pythonLiteral(t);
    if (value !== FAIL && fits(value, types)) return value;
  }
  return FAIL;
}

/**
 * The number JSON number text `t` stands for, or {@link FAIL} when a double cannot hold it as written: it
 * overflows (`1e400`) or is an integer past 2^53 (`99999999999999999999`).
 */
function asNumber(t: string): number | typeof FAIL {
  const n = Number(t);
  if (!Number.isFinite(n)) return FAIL;
  if (/^-?\d+$/.test(t) && !Number.isSafeInteger(n)) return FAIL;
  return n;
}

function fits(value: unknown, types: Set<JsonType>): boolean {
  if (value === null) return types.has("null");
  if (Array.isArray(value)) return types.has("array");
  switch (typeof value) {
    case "string":
      return types.has("string");
    case "boolean":
      return types.has("boolean");
    case "number":
      return types.has("number") || (types.has("integer") && Number.isInteger(value));
    case "object":
      return types.has("object");
    default:
      return false;
  }
}

const TYPE_NAMES = new Set<string>(["string", "number", "integer", "boolean", "null", "object", "array"]);

/**
 * The JSON type a schema's `type` names, also when it is written the way Python or SQL names types (`int`,
 * `float`, `bool`, `dict`, `str`): tool declarations written by hand do this, and the Qwen3-Coder and Seed-OSS
 * parsers type values by these names, so a value declared `int` is read as a number there.
 */
function typeName(t: string): JsonType | undefined {
  const lower = t.trim().toLowerCase();
  if (TYPE_NAMES.has(lower)) return lower as JsonType;
  if (/^(?:str|text|varchar|char|enum)$/.test(lower)) return "string";
  if (/^(?:int|uint|long|short|unsigned)/.test(lower)) return "integer";
  if (/^(?:num|float|double|decimal)/.test(lower)) return "number";
  if (/^(?:bool|binary)$/.test(lower)) return "boolean";
  if (/^(?:dict|map)/.test(lower)) return "object";
  if (/^(?:list|tuple|arr)/.test(lower)) return "array";
  return undefined;
}

/** The JSON types the schema of parameter `key` in the tool schema `root` admits; undefined when none. */
function declaredTypes(root: unknown, key: string): Set<JsonType> | undefined {
  if (!isRecord(root) || !isRecord(root.properties)) return undefined;
  if (!Object.hasOwn(root.properties, key)) return undefined;
  const types = typesOf(root, root.properties[key], new WeakMap(), 0, 0);
  return types.size > 0 ? new Set(types) : undefined;
}

/** How many local `$ref` hops, and how many levels of nesting, typing follows. */
const MAX_REF_HOPS = 16;
const MAX_NESTING = 64;
const NONE: ReadonlySet<JsonType> = new Set();

/**
 * The JSON types `schema` admits (through `type`, `anyOf`/`oneOf`, `allOf`, `enum`, `const`, local `$ref`).
 * Each schema node is worked out once (`memo`), so shared `$ref` targets cost nothing more; a node met
 * again while it is being worked out (a cycle) adds nothing.
 */
function typesOf(
  root: unknown,
  schema: unknown,
  memo: WeakMap<object, ReadonlySet<JsonType>>,
  hops: number,
  nesting: number,
): ReadonlySet<JsonType> {
  if (!isRecord(schema) || nesting > MAX_NESTING) return NONE;
  const known = memo.get(schema);
  if (known) return known;
  const out = new Set<JsonType>();
  memo.set(schema, out);
  const sub = (s: unknown, hop = 0) => typesOf(root, s, memo, hops + hop, nesting + 1);
  if (typeof schema.$ref === "string" && hops < MAX_REF_HOPS) {
    for (const t of sub(resolveLocalRef(root, schema.$ref), 1)) out.add(t);
  }
  const type = schema.type;
  for (const t of Array.isArray(type) ? type : [type]) {
    const name = typeof t === "string" ? typeName(t) : undefined;
    if (name) out.add(name);
  }
  if (schema.nullable === true) out.add("null");
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) { for (const s of list) for (const t of sub(s)) out.add(t); }
  }
  for (const t of allOfTypes(schema.allOf, sub)) out.add(t);
  const values = Array.isArray(schema.enum)
    ? schema.enum
    : Object.hasOwn(schema, "const")
    ? [schema.const]
    : [];
  for (const v of values) out.add(jsonType(v));
  return out;
}

/**
 * The types every branch of an `allOf` that declares types agrees on (Pydantic v1 writes a referenced enum
 * or model as `{"allOf": [{"$ref": ...}]}`).
 */
function allOfTypes(list: unknown, sub: (s: unknown) => ReadonlySet<JsonType>): Set<JsonType> {
  let common: Set<JsonType> | undefined;
  if (!Array.isArray(list)) return new Set();
  for (const s of list) {
    const types = sub(s);
    if (types.size === 0) continue;
    common = common ? new Set([...common].filter((t) => types.has(t))) : new Set(types);
  }
  return common ?? new Set();
}

function jsonType(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "string") return "string";
  return "object";
}
