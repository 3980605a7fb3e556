/**
 * Types the values that formats write as text (XML parameters, Python literals) by the declared schema of
 * each parameter, and says whether a tool name was declared.
 *
 * Without a declaration, text that is exactly a JSON literal (`42`, `3.5`, `true`, `null`, `{…}`, `[…]`) is
 * read as that literal and anything else stays the text as written: that is what the XML formats' own
 * templates produce (they write non-string values as JSON), and the validator's `coerce` remains there for
 * the rest. With a declaration, a parameter declared `string` keeps its text (`"5123123"` stays a string).
 *
 * @module
 */
import { normaliseTools } from "../_validate/providers.ts";
import { isRecord } from "../_common/values.ts";
import { parseJsonSafe, resolveLocalRef } from "../_common/json.ts";
import { FAIL, LiteralReader, PYTHON } from "./literal.ts";
import { defineOwn } from "./text.ts";

type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "object" | "array";

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/** Types text values by declared schemas; built once per extraction. */
export class Typer {
  /** Declared tool names, or `undefined` when no tools were given. */
  readonly declared: ReadonlySet<string> | undefined;
  readonly #schemas = new Map<string, unknown>();

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

  /** Whether `name` may be taken for a call written without a marker (always, when no tools were given). */
  isDeclared(name: string): boolean {
    return this.declared === undefined || this.declared.has(name);
  }

  /** The value of parameter `key` of tool `tool`, written as `text` (already unframed by the format). */
  text(tool: string, key: string, text: string): unknown {
    const types = this.#types(tool, key);
    if (types === undefined) return inferText(text);
    const typed = asDeclared(text, types);
    if (typed !== FAIL) return typed;
    return types.has("string") ? text : inferText(text);
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

  #types(tool: string, key: string): Set<JsonType> | undefined {
    const root = this.#schemas.get(tool);
    if (!isRecord(root) || !isRecord(root.properties)) return undefined;
    if (!Object.hasOwn(root.properties, key)) return undefined;
    const types = new Set<JsonType>();
    collectTypes(root, root.properties[key], types, 0);
    return types.size > 0 ? types : undefined;
  }
}

/** Text that is exactly a JSON literal, read as it; anything else, the text itself. */
export function inferText(text: string): unknown {
  const t = text.trim();
  if (t === "") return text;
  if (t === "true") return true;
  if (t === "false") return false;
  if (t === "null") return null;
  if (JSON_NUMBER.test(t)) {
    const n = Number(t);
    // Digits beyond double precision stay text rather than silently change.
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(t) ? n : text;
  }
  if (t[0] === "{" || t[0] === "[") {
    const parsed = parseJsonSafe(t);
    if (parsed.ok) return parsed.value;
  }
  return text;
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
    const n = Number(t);
    if (types.has("number") || Number.isInteger(n)) return n;
  }
  if ((types.has("object") || types.has("array")) && (t[0] === "{" || t[0] === "[")) {
    const parsed = parseJsonSafe(t);
    let value: unknown = parsed.ok ? parsed.value : FAIL;
    if (value === FAIL) {
      const reader = new LiteralReader(t, 0, t.length, PYTHON);
      value = reader.value();
      reader.space();
      if (reader.pos !== t.length) value = FAIL;
    }
    if (value !== FAIL && fits(value, types)) return value;
  }
  return FAIL;
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

/** Adds the JSON types `schema` admits (through `type`, `anyOf`/`oneOf`, `enum`, `const`, local `$ref`). */
function collectTypes(root: unknown, schema: unknown, out: Set<JsonType>, depth: number): void {
  if (depth > 16 || !isRecord(schema)) return;
  if (typeof schema.$ref === "string") collectTypes(root, resolveLocalRef(root, schema.$ref), out, depth + 1);
  const type = schema.type;
  for (const t of Array.isArray(type) ? type : [type]) {
    if (typeof t === "string" && TYPE_NAMES.has(t.toLowerCase())) out.add(t.toLowerCase() as JsonType);
  }
  if (schema.nullable === true) out.add("null");
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) { for (const s of list) collectTypes(root, s, out, depth + 1); }
  }
  const values = Array.isArray(schema.enum)
    ? schema.enum
    : Object.hasOwn(schema, "const")
    ? [schema.const]
    : [];
  for (const v of values) out.add(jsonType(v));
}

function jsonType(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "string") return "string";
  return "object";
}
