/**
 * The JSON Schema engine: compiles a schema (2020-12 keywords that tool schemas use, plus OpenAPI
 * `nullable`) into a tree of small closures once, then checks values against it. Every check runs in two
 * modes: a fast yes/no pass (`out === null`) and a reporting pass that collects findings with JSON Pointer
 * paths. Valid values only ever take the fast pass.
 *
 * @module
 */
import { escapePointer, unescapePointer } from "../_common/pointer.ts";
import type { Finding, FindingCode } from "../types.ts";
import { FORMATS } from "./formats.ts";
import { generate } from "./codegen.ts";

/** A compiled check: true when `value` is valid; when `out` is an array, findings are pushed onto it. */
export type Check = (value: unknown, path: string, out: Finding[] | null) => boolean;

/** Thrown when a schema cannot be compiled: unknown keyword, bad keyword value, unresolved `$ref`. */
export class SchemaError extends Error {
  /** The offending keyword. */
  readonly keyword: string;
  /** JSON Pointer of the keyword inside the schema. */
  readonly pointer: string;
  /** Creates the error. */
  constructor(keyword: string, pointer: string, message: string) {
    super(message);
    this.name = "SchemaError";
    this.keyword = keyword;
    this.pointer = pointer;
  }
}

/** Keywords that carry no assertion and are ignored. */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  "$schema",
  "$id",
  "$comment",
  "$anchor",
  "$vocabulary",
  "title",
  "description",
  "default",
  "examples",
  "example",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentMediaType",
  "contentEncoding",
  "contentSchema",
  "propertyOrdering",
  "x-google-enum-descriptions",
  "discriminator",
  "externalDocs",
  "xml",
]);

/** Keywords the engine enforces. */
export const ASSERTION_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "nullable",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "enum",
  "const",
  "items",
  "prefixItems",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "dependentRequired",
  "minProperties",
  "maxProperties",
  "$ref",
  "$defs",
  "definitions",
]);

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
/** OpenAPI numeric formats, asserted as the range they name. */
/** OpenAPI numeric formats. */
export const NUMERIC_FORMATS: Record<string, (n: number) => boolean> = {
  int32: (n) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647,
  int64: (n) => Number.isInteger(n),
  float: (n) => Number.isFinite(n),
  double: (n) => Number.isFinite(n),
};

/** True when JSON.stringify would only wrap `s` in quotes (a loop: cheaper than a regex for short text). */
function plain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** How many characters {@link show} keeps by default. */
const SHOWN_MAX = 60;

/** True when `s`, quoted, fits in `max` characters as it is (the fast path of {@link show}). */
function quotable(s: string, max: number): boolean {
  return s.length <= max - 2 && plain(s);
}

/** Shortens a value for `received`. */
export function show(value: unknown, max = SHOWN_MAX): string {
  let s: string;
  if (value === undefined) return "nothing";
  // fast paths for the common cases: short plain strings, numbers, booleans, null
  if (typeof value === "string" && quotable(value, max)) return '"' + value + '"';
  if (typeof value === "number" || typeof value === "boolean" || value === null) {
    s = String(value);
    if (s.length <= max) return s;
  }
  try {
    s = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  } catch {
    s = Array.isArray(value) ? "an array" : "an object";
  }
  if (s.length > max) s = s.slice(0, max - 3) + "...";
  return s;
}

/** Internal: shared with the code generator. {@link show} for a value already known to be a string. */
export function showString(s: string): string {
  return quotable(s, SHOWN_MAX) ? '"' + s + '"' : show(s);
}

/** Internal: shared with the code generator. {@link received} for a value already known to be a string. */
export function receivedString(s: string): string {
  return quotable(s, SHOWN_MAX) ? 'string "' + s + '"' : "string " + show(s);
}

/** The JSON type name of a value. */
export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  const t = typeof value;
  if (t === "number") return Number.isInteger(value) ? "integer" : "number";
  return t;
}

/** Internal: shared with the code generator. */
export function received(value: unknown): string {
  if (typeof value === "string") return receivedString(value);
  const t = typeOf(value);
  if (t === "object" || t === "array") return t;
  return `${t} ${show(value)}`;
}

/** Human label for a pointer. */
export function where(path: string): string {
  // the pointer itself, as in `path`: no slicing, so no string flattening on the error path
  return path === "" ? "The arguments" : `"${path}"`;
}

/** Internal: shared with the code generator. */
export function push(
  out: Finding[],
  code: FindingCode,
  path: string,
  message: string,
  expected?: string,
  got?: string,
): void {
  if (expected !== undefined && got !== undefined) {
    out.push({ code, path, message, expected, received: got }); // one shape for the common case
    return;
  }
  const f: Finding = { code, path, message };
  if (expected !== undefined) f.expected = expected;
  if (got !== undefined) f.received = got;
  out.push(f);
}

/** Deep JSON equality: numbers by value (1 equals 1.0), objects regardless of key order. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const aa = Array.isArray(a), ba = Array.isArray(b);
  if (aa !== ba) return false;
  if (aa) {
    const x = a as unknown[], y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i])) return false;
    return true;
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (
      !Object.hasOwn(b, k) || !deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
    ) {
      return false;
    }
  }
  return true;
}

/** A canonical text for a JSON value, equal for deep-equal values. Iterative bound by value size. */
/** Internal: shared with the code generator. */
export function canonical(v: unknown): string {
  if (typeof v !== "object" || v === null) return typeof v === "string" ? JSON.stringify(v) : String(v);
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  const keys = Object.keys(v).sort();
  return "{" +
    keys.map((k) => JSON.stringify(k) + ":" + canonical((v as Record<string, unknown>)[k])).join(",") +
    "}";
}

/** Counts code points (a surrogate pair is one). */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Accepts everything. */
export const TRUE: Check = () => true;

/** Internal: shared with the code generator. */
export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Options for {@link compile}. */
export interface CompileOptions {
  /** Assert `format` (default true). With false, formats are annotations. */
  assertFormats?: boolean;
  /**
   * Generate a specialised function with `new Function` (default true). Where the runtime forbids code
   * generation, or with false, the closure interpreter runs instead; both give the same findings.
   */
  codegen?: boolean;
}

/** What the interpreter exposes to the code generator. */
export interface Tree {
  /** The interpreter's check for a schema node (cached per node object). */
  node: (schema: unknown, ptr: string) => Check;
  /** Resolves a `$ref` found in `holder`. */
  resolve: (ref: string, at: string, holder: object) => { schema: unknown; ptr: string };
  /** Whether formats are asserted. */
  assertFormats: boolean;
}

/** Compiles a schema into a {@link Check}. Throws {@link SchemaError} for anything it cannot enforce. */
export function compile(root: unknown, options: CompileOptions = {}): Check {
  const assertFormats = options.assertFormats ?? true;
  const cache = new Map<unknown, Check>();

  // base URIs ($id) and anchors, so "$ref" resolves the way 2020-12 says, within this one document
  const DEFAULT_BASE = "https://toolguard.invalid/schema.json";
  const bases = new Map<object, string>();
  const resources = new Map<string, unknown>();
  const anchors = new Map<string, unknown>();
  const noFragment = (u: string) => {
    const h = u.indexOf("#");
    return h < 0 ? u : u.slice(0, h);
  };
  const scanIds = (s: unknown, base: string, depth: number): void => {
    if (!isObj(s) || depth > 1000 || bases.has(s)) return;
    if (typeof s.$id === "string") {
      try {
        base = noFragment(new URL(s.$id, base).href);
      } catch {
        // an unparsable $id leaves the base as it was
      }
      resources.set(base, s);
    }
    bases.set(s, base);
    if (typeof s.$anchor === "string") anchors.set(`${base}#${s.$anchor}`, s);
    for (const k of ["properties", "patternProperties", "$defs", "definitions"]) {
      const m = s[k];
      if (isObj(m)) { for (const sub of Object.values(m)) scanIds(sub, base, depth + 1); }
    }
    for (const k of ["additionalProperties", "items", "not", "if", "then", "else", "propertyNames"]) {
      scanIds(s[k], base, depth + 1);
    }
    for (const k of ["prefixItems", "allOf", "anyOf", "oneOf", "items"]) {
      const a = s[k];
      if (Array.isArray(a)) { for (const sub of a) scanIds(sub, base, depth + 1); }
    }
  };
  resources.set(DEFAULT_BASE, root);
  scanIds(root, DEFAULT_BASE, 0);

  const resolve = (ref: string, at: string, holder: object): { schema: unknown; ptr: string } => {
    let full: string;
    try {
      full = new URL(ref, bases.get(holder) ?? DEFAULT_BASE).href;
    } catch {
      throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} is not a valid URI reference`);
    }
    const h = full.indexOf("#");
    const doc = h < 0 ? full : full.slice(0, h);
    let frag = h < 0 ? "" : full.slice(h + 1);
    const target = resources.get(doc);
    if (target === undefined) {
      throw new SchemaError(
        "$ref",
        at,
        `$ref "${ref}" at ${at} points outside this schema; only references within it are supported`,
      );
    }
    try {
      frag = decodeURIComponent(frag);
    } catch {
      throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} is not a valid URI fragment`);
    }
    if (frag !== "" && !frag.startsWith("/")) {
      const a = anchors.get(`${doc}#${frag}`);
      if (a === undefined) {
        throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} names an anchor that is not defined`);
      }
      return { schema: a, ptr: `#${frag}` };
    }
    let node: unknown = target;
    if (frag !== "") {
      for (const raw of frag.slice(1).split("/")) {
        const tok = unescapePointer(raw);
        if (typeof node !== "object" || node === null || !Object.hasOwn(node, tok)) {
          throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} points at nothing in this schema`);
        }
        node = (node as Record<string, unknown>)[tok];
      }
    }
    return { schema: node, ptr: frag };
  };

  const node = (schema: unknown, ptr: string): Check => {
    if (schema === true) return TRUE;
    if (schema === false) {
      return (v, p, out) => {
        if (out) {
          push(
            out,
            "unexpected_argument",
            p,
            `${where(p)} is not allowed here; leave it out.`,
            "nothing",
            received(v),
          );
        }
        return false;
      };
    }
    if (!isObj(schema)) {
      throw new SchemaError("", ptr, `the schema at ${ptr || "the root"} must be an object or a boolean`);
    }
    const hit = cache.get(schema);
    if (hit) return hit;
    // a forwarding slot so recursive $ref can point at a schema still being compiled
    let real: Check = TRUE;
    const slot: Check = (v, p, o) => real(v, p, o);
    cache.set(schema, slot);
    real = build(schema, ptr);
    cache.set(schema, real);
    return real;
  };

  const num = (s: Record<string, unknown>, k: string, ptr: string): number | undefined => {
    const v = s[k];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be a number`);
    }
    return v;
  };
  const count = (s: Record<string, unknown>, k: string, ptr: string): number | undefined => {
    const v = num(s, k, ptr);
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) {
      throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be a non-negative integer`);
    }
    return v;
  };
  const list = (s: Record<string, unknown>, k: string, ptr: string): Check[] => {
    const v = s[k];
    if (!Array.isArray(v) || v.length === 0) {
      throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be a non-empty array of schemas`);
    }
    return v.map((x, i) => node(x, `${ptr}/${k}/${i}`));
  };

  const build = (s: Record<string, unknown>, ptr: string): Check => {
    for (const k of Object.keys(s)) {
      if (ASSERTION_KEYWORDS.has(k) || ANNOTATION_KEYWORDS.has(k) || k.startsWith("x-")) continue;
      throw new SchemaError(
        k,
        `${ptr}/${escapePointer(k)}`,
        `keyword "${k}" at ${ptr}/${
          escapePointer(k)
        } is not supported, so the schema cannot be enforced; remove it or express it with supported keywords`,
      );
    }
    // $defs/definitions are compiled on demand through $ref, but must be schemas
    for (const d of ["$defs", "definitions"]) {
      if (s[d] !== undefined && !isObj(s[d])) {
        throw new SchemaError(d, `${ptr}/${d}`, `"${d}" at ${ptr}/${d} must be an object of schemas`);
      }
    }
    const checks: Check[] = [];
    let typeCheck: Check | null = null;

    // ---- type
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      for (const t of types) {
        if (typeof t !== "string" || !TYPES.has(t)) {
          throw new SchemaError("type", `${ptr}/type`, `"type" at ${ptr}/type has unknown type ${show(t)}`);
        }
      }
      typeCheck = typeChecker(types as string[]);
    }
    const nullable = s.nullable === true;
    if (s.nullable !== undefined && typeof s.nullable !== "boolean") {
      throw new SchemaError(
        "nullable",
        `${ptr}/nullable`,
        `"nullable" at ${ptr}/nullable must be true or false`,
      );
    }

    // ---- enum / const
    if (s.enum !== undefined) {
      if (!Array.isArray(s.enum)) {
        throw new SchemaError("enum", `${ptr}/enum`, `"enum" at ${ptr}/enum must be an array`);
      }
      checks.push(enumChecker(s.enum));
    }
    if (Object.hasOwn(s, "const")) checks.push(constChecker(s.const));

    // ---- numbers
    let min = num(s, "minimum", ptr), max = num(s, "maximum", ptr);
    let xmin: number | undefined, xmax: number | undefined;
    if (typeof s.exclusiveMinimum === "boolean") { // OpenAPI 3.0 / draft-04 form
      if (s.exclusiveMinimum && min !== undefined) [xmin, min] = [min, undefined];
    } else xmin = num(s, "exclusiveMinimum", ptr);
    if (typeof s.exclusiveMaximum === "boolean") {
      if (s.exclusiveMaximum && max !== undefined) [xmax, max] = [max, undefined];
    } else xmax = num(s, "exclusiveMaximum", ptr);
    const mult = num(s, "multipleOf", ptr);
    if (mult !== undefined && mult <= 0) {
      throw new SchemaError(
        "multipleOf",
        `${ptr}/multipleOf`,
        `"multipleOf" at ${ptr}/multipleOf must be above 0`,
      );
    }
    if (
      min !== undefined || max !== undefined || xmin !== undefined || xmax !== undefined || mult !== undefined
    ) {
      checks.push(numberChecker(min, max, xmin, xmax, mult));
    }

    // ---- strings
    const minLen = count(s, "minLength", ptr), maxLen = count(s, "maxLength", ptr);
    if (minLen !== undefined || maxLen !== undefined) checks.push(lengthChecker(minLen, maxLen));
    if (s.pattern !== undefined) {
      if (typeof s.pattern !== "string") {
        throw new SchemaError("pattern", `${ptr}/pattern`, `"pattern" at ${ptr}/pattern must be a string`);
      }
      checks.push(patternChecker(makeRegExp(s.pattern, `${ptr}/pattern`, "pattern")));
    }
    if (s.format !== undefined) {
      if (typeof s.format !== "string") {
        throw new SchemaError("format", `${ptr}/format`, `"format" at ${ptr}/format must be a string`);
      }
      const f = FORMATS[s.format];
      const nf = NUMERIC_FORMATS[s.format];
      if (f) {
        if (assertFormats) checks.push(formatChecker(s.format, f));
      } else if (nf) {
        if (assertFormats) checks.push(numericFormatChecker(s.format, nf));
      } else if (s.format !== "enum" && assertFormats) {
        throw new SchemaError(
          "format",
          `${ptr}/format`,
          `format "${s.format}" at ${ptr}/format is not supported; supported: ${
            Object.keys(FORMATS).join(", ")
          }, int32, int64, float, double`,
        );
      }
    }

    // ---- arrays
    let prefix: Check[] = [];
    let items: Check | null = null;
    if (Array.isArray(s.items)) { // draft-07 tuple form, read as prefixItems
      prefix = s.items.map((x, i) => node(x, `${ptr}/items/${i}`));
    } else if (s.items !== undefined) items = node(s.items, `${ptr}/items`);
    if (s.prefixItems !== undefined) prefix = list(s, "prefixItems", ptr);
    const minItems = count(s, "minItems", ptr), maxItems = count(s, "maxItems", ptr);
    const unique = s.uniqueItems === true;
    if (prefix.length || items || minItems !== undefined || maxItems !== undefined || unique) {
      checks.push(arrayChecker(prefix, items, minItems, maxItems, unique));
    }

    // ---- objects
    const hasObj = ["properties", "required", "additionalProperties", "patternProperties", "propertyNames"]
      .some((k) => s[k] !== undefined) ||
      s.minProperties !== undefined || s.maxProperties !== undefined ||
      s.dependentRequired !== undefined;
    if (hasObj) checks.push(objectChecker(s, ptr, node));

    // ---- applicators
    if (s.allOf !== undefined) checks.push(...list(s, "allOf", ptr));
    if (s.anyOf !== undefined) checks.push(anyOfChecker(list(s, "anyOf", ptr)));
    if (s.oneOf !== undefined) checks.push(oneOfChecker(list(s, "oneOf", ptr)));
    if (s.not !== undefined) {
      const sub = node(s.not, `${ptr}/not`);
      checks.push((v, p, out) => {
        if (!sub(v, p, null)) return true;
        if (out) {
          push(
            out,
            "argument_constraint",
            p,
            `${where(p)} has a value that is explicitly not allowed; choose a different value.`,
            "a value not matching the excluded schema",
            received(v),
          );
        }
        return false;
      });
    }
    if (s.if !== undefined) {
      const cond = node(s.if, `${ptr}/if`);
      const th = s.then !== undefined ? node(s.then, `${ptr}/then`) : TRUE;
      const el = s.else !== undefined ? node(s.else, `${ptr}/else`) : TRUE;
      checks.push((v, p, out) => cond(v, p, null) ? th(v, p, out) : el(v, p, out));
    } else {
      // then/else without if are inert, but must still be schemas
      if (s.then !== undefined) node(s.then, `${ptr}/then`);
      if (s.else !== undefined) node(s.else, `${ptr}/else`);
    }
    if (s.$ref !== undefined) {
      if (typeof s.$ref !== "string") {
        throw new SchemaError("$ref", `${ptr}/$ref`, `"$ref" at ${ptr}/$ref must be a string`);
      }
      const target = resolve(s.$ref, `${ptr}/$ref`, s);
      let compiled: Check | null = null;
      const ref = s.$ref;
      // resolved lazily so that a schema can refer to itself
      checks.push((v, p, out) => (compiled ??= node(target.schema, target.ptr))(v, p, out));
      // compile now too, so errors inside the target surface at compile time (cache keeps recursion finite)
      if (!cache.has(target.schema)) compiled = node(target.schema, target.ptr);
      void ref;
    }

    return combine(typeCheck, nullable, checks);
  };

  const rootCheck = node(root, "");
  if (options.codegen === false) return rootCheck;
  return generate(root, { node, resolve, assertFormats }) ?? rootCheck;
}

/** Internal: shared with the code generator. */
export function combine(typeCheck: Check | null, nullable: boolean, checks: Check[]): Check {
  const n = checks.length;
  if (!nullable) {
    if (n === 0) return typeCheck ?? TRUE;
    if (n === 1 && !typeCheck) return checks[0];
    if (n === 1 && typeCheck) {
      const t = typeCheck, c = checks[0];
      return (v, p, out) => t(v, p, out) && c(v, p, out);
    }
  }
  return (v, p, out) => {
    if (nullable && v === null) return true;
    if (typeCheck && !typeCheck(v, p, out)) return false;
    if (out === null) {
      for (let i = 0; i < n; i++) if (!checks[i](v, p, null)) return false;
      return true;
    }
    let ok = true;
    for (let i = 0; i < n; i++) if (!checks[i](v, p, out)) ok = false;
    return ok;
  };
}

/** Internal: shared with the code generator. */
export function isType(t: string, v: unknown): boolean {
  switch (t) {
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "integer":
      return typeof v === "number" && Number.isSafeInteger(v);
    case "boolean":
      return typeof v === "boolean";
    case "null":
      return v === null;
    case "array":
      return Array.isArray(v);
    default:
      return isObj(v);
  }
}

/** Internal: shared with the code generator. Reports a value of the wrong type; `expected` is e.g. "string or null". */
export function typeFail(out: Finding[], v: unknown, p: string, expected: string, head?: string): void {
  // beyond 2^53 a JSON integer cannot be represented exactly: the tool would get a different number
  const huge = typeof v === "number" &&
    (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v)));
  out.push({
    code: "argument_type_mismatch",
    path: p,
    message: huge
      ? `${where(p)} is a number too large to represent exactly; send ${
        article(expected)
      } within ±9007199254740991.`
      : (head ?? typeHead(p, expected)) + typeArticle(v) + ".",
    expected,
    received: received(v),
  });
}

/** Internal: shared with the code generator. The start of a type message, up to the received type. */
export function typeHead(p: string, expected: string): string {
  return `${where(p)} must be ${article(expected)}, not `;
}

/** `article(typeOf(v))` without building a string. */
function typeArticle(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    case "number":
      return Number.isInteger(v) ? "an integer" : "a number";
    case "object":
      return v === null ? "a null" : Array.isArray(v) ? "an array" : "an object";
    default:
      return article(typeOf(v));
  }
}

/** Internal: shared with the code generator. */
export function typeChecker(types: string[]): Check {
  const expected = types.join(" or ");
  const fail = (v: unknown, p: string, out: Finding[] | null) => {
    if (out) typeFail(out, v, p, expected);
    return false;
  };
  if (types.length === 1) {
    const t = types[0];
    switch (t) {
      case "string":
        return (v, p, out) => typeof v === "string" || fail(v, p, out);
      case "integer":
        return (v, p, out) => (typeof v === "number" && Number.isSafeInteger(v)) || fail(v, p, out);
      case "number":
        return (v, p, out) => (typeof v === "number" && Number.isFinite(v)) || fail(v, p, out);
      case "boolean":
        return (v, p, out) => typeof v === "boolean" || fail(v, p, out);
      case "object":
        return (v, p, out) => isObj(v) || fail(v, p, out);
      default:
        return (v, p, out) => isType(t, v) || fail(v, p, out);
    }
  }
  return (v, p, out) => {
    for (const t of types) if (isType(t, v)) return true;
    return fail(v, p, out);
  };
}

/** Internal: shared with the code generator. "a string", "an integer". */
export function article(t: string): string {
  const c = t.charCodeAt(0);
  return c === 97 || c === 101 || c === 105 || c === 111 || c === 117 ? `an ${t}` : `a ${t}`;
}

/** Internal: shared with the code generator. */
export function enumChecker(values: unknown[]): Check {
  const prim = values.every((x) => typeof x !== "object" || x === null);
  const set = prim ? new Set(values) : null;
  const expected = values.map((x) => show(x, 40)).join(", ");
  return (v, p, out) => {
    if (set ? set.has(v) : values.some((x) => deepEqual(x, v))) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must be one of: ${expected}.`,
        `one of ${expected}`,
        received(v),
      );
    }
    return false;
  };
}

/** Internal: shared with the code generator. */
export function constChecker(c: unknown): Check {
  return (v, p, out) => {
    if (deepEqual(c, v)) return true;
    if (out) {
      push(out, "argument_constraint", p, `${where(p)} must be exactly ${show(c)}.`, show(c), received(v));
    }
    return false;
  };
}

/** Internal: shared with the code generator. */
export function numberChecker(
  min: number | undefined,
  max: number | undefined,
  xmin: number | undefined,
  xmax: number | undefined,
  mult: number | undefined,
): Check {
  return (v, p, out) => {
    if (typeof v !== "number") return true;
    let ok = true;
    const bad = (expected: string, words: string) => {
      ok = false;
      if (out) {
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must be ${words}.`,
          expected,
          show(v),
        );
      }
    };
    if (min !== undefined && !(v >= min)) {
      bad(`>= ${min}`, `at least ${min}`);
      if (!out) return false;
    }
    if (max !== undefined && !(v <= max)) {
      bad(`<= ${max}`, `at most ${max}`);
      if (!out) return false;
    }
    if (xmin !== undefined && !(v > xmin)) {
      bad(`> ${xmin}`, `greater than ${xmin}`);
      if (!out) return false;
    }
    if (xmax !== undefined && !(v < xmax)) {
      bad(`< ${xmax}`, `less than ${xmax}`);
      if (!out) return false;
    }
    if (mult !== undefined && !isMultiple(v, mult)) bad(`a multiple of ${mult}`, `a multiple of ${mult}`);
    return ok;
  };
}

/** Internal: shared with the code generator. */
export function isMultiple(v: number, m: number): boolean {
  const q = v / m;
  if (!Number.isFinite(q)) return false;
  if (Number.isInteger(q)) return true;
  // binary floating point: 0.0075 / 0.0001 is 74.99999999999999
  return Math.abs(q - Math.round(q)) < 1e-9 * Math.max(1, Math.abs(q)) && Math.abs(q) < 2 ** 53;
}

/** Internal: shared with the code generator. */
export function lengthChecker(min: number | undefined, max: number | undefined): Check {
  return (v, p, out) => {
    if (typeof v !== "string") return true;
    // code points never exceed UTF-16 units, so the unit count settles most cases without counting
    if (max !== undefined && v.length > max && codePoints(v) > max) {
      if (out) {
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must be at most ${max} characters long.`,
          `at most ${max} characters`,
          `${codePoints(v)} characters`,
        );
      }
      return false;
    }
    if (min !== undefined && v.length < 2 * min && codePoints(v) < min) {
      if (out) {
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must be at least ${min} characters long.`,
          `at least ${min} characters`,
          `${codePoints(v)} characters`,
        );
      }
      return false;
    }
    return true;
  };
}

/** Compiles a schema regular expression with the Unicode flag (falling back to none for legacy syntax). */
export function makeRegExp(source: string, pointer: string, keyword: string): RegExp {
  try {
    return new RegExp(source, "u");
  } catch {
    try {
      return new RegExp(source);
    } catch (e) {
      throw new SchemaError(
        keyword,
        pointer,
        `"${keyword}" at ${pointer} is not a valid regular expression: ${(e as Error).message}`,
      );
    }
  }
}

/** Internal: shared with the code generator. */
export function safeTest(re: RegExp, s: string): boolean {
  try {
    re.lastIndex = 0;
    return re.test(s);
  } catch {
    // an engine error (e.g. stack exhaustion on a pathological input) counts as no match, never a crash
    return false;
  }
}

/** Internal: shared with the code generator. */
export function patternChecker(re: RegExp): Check {
  return (v, p, out) => {
    if (typeof v !== "string" || safeTest(re, v)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must match the pattern ${re.source}.`,
        `a string matching /${re.source}/`,
        show(v),
      );
    }
    return false;
  };
}

/** Internal: shared with the code generator. */
export function formatChecker(name: string, f: (s: string) => boolean): Check {
  return (v, p, out) => {
    if (typeof v !== "string" || f(v)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must be a valid ${name}.`,
        `format ${name}`,
        show(v),
      );
    }
    return false;
  };
}

/** Internal: shared with the code generator. */
export function numericFormatChecker(name: string, f: (n: number) => boolean): Check {
  return (v, p, out) => {
    if (typeof v !== "number" || f(v)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must be a valid ${name}.`,
        `format ${name}`,
        show(v),
      );
    }
    return false;
  };
}

/** Internal: shared with the code generator. */
export function arrayChecker(
  prefix: Check[],
  items: Check | null,
  minItems: number | undefined,
  maxItems: number | undefined,
  unique: boolean,
): Check {
  const np = prefix.length;
  return (v, p, out) => {
    if (!Array.isArray(v)) return true;
    let ok = true;
    const n = v.length;
    if (minItems !== undefined && n < minItems) {
      if (!out) return false;
      ok = false;
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must have at least ${minItems} item(s).`,
        `at least ${minItems} items`,
        `${n} items`,
      );
    }
    if (maxItems !== undefined && n > maxItems) {
      if (!out) return false;
      ok = false;
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must have at most ${maxItems} item(s).`,
        `at most ${maxItems} items`,
        `${n} items`,
      );
    }
    for (let i = 0; i < n; i++) {
      const c = i < np ? prefix[i] : items;
      if (c === null) break;
      if (!c(v[i], out ? `${p}/${i}` : p, out)) {
        if (!out) return false;
        ok = false;
      }
    }
    if (unique && n > 1) {
      const d = firstDuplicate(v);
      if (d !== null) {
        if (!out) return false;
        ok = false;
        push(
          out,
          "argument_constraint",
          p,
          duplicateMessage(p, d),
          "unique items",
          `duplicate ${show(v[d[1]])}`,
        );
      }
    }
    return ok;
  };
}

/** Internal: shared with the code generator. */
export function anyOfChecker(alts: Check[]): Check {
  return (v, p, out) => {
    for (const a of alts) if (a(v, p, null)) return true;
    if (out) reportAlternatives(alts, v, p, out, "any");
    return false;
  };
}

/** Internal: shared with the code generator. */
export function oneOfChecker(alts: Check[]): Check {
  return (v, p, out) => {
    let first = -1;
    for (let i = 0; i < alts.length; i++) {
      if (alts[i](v, p, null)) {
        if (first >= 0) {
          if (out) {
            push(
              out,
              "argument_constraint",
              p,
              `${where(p)} matches more than one of the allowed forms (${first + 1} and ${
                i + 1
              }); it must match exactly one.`,
              "exactly one matching form",
              "several matching forms",
            );
          }
          return false;
        }
        first = i;
      }
    }
    if (first >= 0) return true;
    if (out) reportAlternatives(alts, v, p, out, "one");
    return false;
  };
}

/** Explains why no alternative matched: a merged type finding, or the findings of the closest one. */
/** Internal: shared with the code generator. */
export function reportAlternatives(
  alts: Check[],
  v: unknown,
  p: string,
  out: Finding[],
  _kind: string,
  typeMisses?: readonly (string | null)[],
): void {
  // plain loops: this runs on every failed anyOf/oneOf, so it allocates only the per-alternative lists.
  // `typeMisses[i]`, when given and not null, says alternative i fails on its type alone (its findings would
  // be exactly one type mismatch expecting that type): it is then not run, and no finding is built for it.
  let expectedTypes: string[] | null = [];
  let best: Finding[] | null = null;
  for (let i = 0; i < alts.length; i++) {
    const miss = typeMisses === undefined ? null : typeMisses[i];
    if (miss !== null) {
      expectedTypes?.push(miss);
      continue;
    }
    const f: Finding[] = [];
    alts[i](v, p, f);
    if (f.length > 0 && f[0].code === "argument_type_mismatch" && f[0].path === p) {
      expectedTypes?.push(f[0].expected ?? "");
      continue;
    }
    expectedTypes = null; // one alternative got past its type: report that one's problems
    if (!best || f.length < best.length) best = f;
  }
  if (expectedTypes !== null) {
    const expected = [...new Set(expectedTypes)].join(" or ");
    push(
      out,
      "argument_type_mismatch",
      p,
      `${where(p)} must be ${expected}, not ${article(typeOf(v))}.`,
      expected,
      received(v),
    );
    return;
  }
  if (!best || best.length === 0) {
    push(
      out,
      "argument_constraint",
      p,
      `${where(p)} does not match any of the allowed forms.`,
      "one of the allowed forms",
      received(v),
    );
    return;
  }
  for (const f of best) out.push(f);
}

type NodeFn = (schema: unknown, ptr: string) => Check;

/** Internal: shared with the code generator. */
export function objectChecker(s: Record<string, unknown>, ptr: string, node: NodeFn): Check {
  const bad = (k: string, what: string): never => {
    throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be ${what}`);
  };
  // null-prototype table, so a property named "constructor" or "__proto__" is looked up safely
  const props: Record<string, Check> = Object.create(null);
  const propNames: string[] = [];
  if (s.properties !== undefined) {
    if (!isObj(s.properties)) bad("properties", "an object of schemas");
    for (const k of Object.keys(s.properties as object)) {
      props[k] = node((s.properties as Record<string, unknown>)[k], `${ptr}/properties/${escapePointer(k)}`);
      propNames.push(k);
    }
  }
  const patterns: [RegExp, Check][] = [];
  if (s.patternProperties !== undefined) {
    if (!isObj(s.patternProperties)) bad("patternProperties", "an object of schemas");
    for (const k of Object.keys(s.patternProperties as object)) {
      const at = `${ptr}/patternProperties/${escapePointer(k)}`;
      patterns.push([
        makeRegExp(k, at, "patternProperties"),
        node((s.patternProperties as Record<string, unknown>)[k], at),
      ]);
    }
  }
  const additional = s.additionalProperties === undefined
    ? null
    : node(s.additionalProperties, `${ptr}/additionalProperties`);
  const additionalFalse = s.additionalProperties === false;
  let required: string[] = [];
  if (s.required !== undefined) {
    if (!Array.isArray(s.required) || !s.required.every((x) => typeof x === "string")) {
      bad("required", "an array of property names");
    }
    required = s.required as string[];
  }
  const names = s.propertyNames === undefined ? null : node(s.propertyNames, `${ptr}/propertyNames`);
  const minP = s.minProperties, maxP = s.maxProperties;
  if (minP !== undefined && (typeof minP !== "number" || !Number.isInteger(minP) || minP < 0)) {
    bad("minProperties", "a non-negative integer");
  }
  if (maxP !== undefined && (typeof maxP !== "number" || !Number.isInteger(maxP) || maxP < 0)) {
    bad("maxProperties", "a non-negative integer");
  }
  const deps: [string, string[]][] = [];
  if (s.dependentRequired !== undefined) {
    if (!isObj(s.dependentRequired)) bad("dependentRequired", "an object of property-name arrays");
    for (const [k, v] of Object.entries(s.dependentRequired as object)) {
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
        bad("dependentRequired", "an object of property-name arrays");
      }
      deps.push([k, v as string[]]);
    }
  }
  const allowed = propNames.length > 0 ? propNames.map((k) => JSON.stringify(k)).join(", ") : "none";
  const needKeys = patterns.length > 0 || additional !== null || names !== null || minP !== undefined ||
    maxP !== undefined;
  const np = patterns.length;

  return (v, p, out) => {
    if (!isObj(v)) return true;
    let ok = true;
    for (let i = 0; i < required.length; i++) {
      const r = required[i];
      if (!Object.hasOwn(v, r)) {
        if (!out) return false;
        ok = false;
        push(
          out,
          "missing_required_argument",
          `${p}/${escapePointer(r)}`,
          `${where(`${p}/${escapePointer(r)}`)} is required but missing; add it.`,
          "present",
          "missing",
        );
      }
    }
    if (!needKeys) {
      for (let i = 0; i < propNames.length; i++) {
        const k = propNames[i];
        if (Object.hasOwn(v, k) && !props[k](v[k], out ? `${p}/${escapePointer(k)}` : p, out)) {
          if (!out) return false;
          ok = false;
        }
      }
    } else {
      const keys = Object.keys(v);
      if (minP !== undefined && keys.length < (minP as number)) {
        if (!out) return false;
        ok = false;
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must have at least ${minP} properties.`,
          `at least ${minP} properties`,
          `${keys.length} properties`,
        );
      }
      if (maxP !== undefined && keys.length > (maxP as number)) {
        if (!out) return false;
        ok = false;
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must have at most ${maxP} properties.`,
          `at most ${maxP} properties`,
          `${keys.length} properties`,
        );
      }
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const at = out ? `${p}/${escapePointer(k)}` : p;
        const x = v[k];
        if (names !== null) {
          const f: Finding[] | null = out ? [] : null;
          if (!names(k, at, f)) {
            if (!out) return false;
            ok = false;
            push(
              out,
              "unexpected_argument",
              at,
              `${where(at)} is not an allowed property name${
                f && f[0] ? ` (${f[0].message})` : ""
              }; rename or remove it.`,
              "an allowed property name",
              show(k),
            );
          }
        }
        let matched = false;
        const c = props[k];
        if (c !== undefined) {
          matched = true;
          if (!c(x, at, out)) {
            if (!out) return false;
            ok = false;
          }
        }
        for (let j = 0; j < np; j++) {
          if (safeTest(patterns[j][0], k)) {
            matched = true;
            if (!patterns[j][1](x, at, out)) {
              if (!out) return false;
              ok = false;
            }
          }
        }
        if (!matched && additional !== null) {
          if (additionalFalse) {
            if (!out) return false;
            ok = false;
            reportExtra(out, at, k, allowed);
          } else if (!additional(x, at, out)) {
            if (!out) return false;
            ok = false;
          }
        }
      }
    }
    for (let i = 0; i < deps.length; i++) {
      const [k, needs] = deps[i];
      if (!Object.hasOwn(v, k)) continue;
      for (const r of needs) {
        if (!Object.hasOwn(v, r)) {
          if (!out) return false;
          ok = false;
          const at = `${p}/${escapePointer(r)}`;
          push(
            out,
            "missing_required_argument",
            at,
            `${where(at)} is required when "${k}" is given; add it.`,
            "present",
            "missing",
          );
        }
      }
    }
    return ok;
  };
}

/** Reports a property that `additionalProperties: false` does not allow. */
export function reportExtra(out: Finding[], at: string, key: string, allowed: string): void {
  push(
    out,
    "unexpected_argument",
    at,
    `${where(at)} is not a parameter this tool accepts; remove it. Accepted: ${allowed}.`,
    `one of ${allowed}`,
    show(key),
  );
}

/**
 * Internal: shared with the code generator. The first repeated item of an array: `[first, i]` where item
 * `i` (the lowest such index) equals the earlier item `first` (JSON equality), or null when all differ.
 */
export function firstDuplicate(v: unknown[]): [number, number] | null {
  let prim = v.length <= 16;
  for (let i = 0; prim && i < v.length; i++) prim = typeof v[i] !== "object" || v[i] === null;
  if (prim) {
    // few primitives: compare pairs (SameValueZero, as a Map does), no Map to allocate
    for (let i = 1; i < v.length; i++) {
      const x = v[i];
      for (let j = 0; j < i; j++) {
        const y = v[j];
        if (x === y || (x !== x && y !== y)) return [j, i];
      }
    }
    return null;
  }
  // primitives are their own keys (a Map compares them as JSON does); objects go by canonical text
  const seen = new Map<unknown, number>();
  const seenObj = new Map<string, number>();
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    const isO = typeof x === "object" && x !== null;
    const key = isO ? canonical(x) : x;
    const map = isO ? seenObj : seen;
    const first = map.get(key as never);
    if (first !== undefined) return [first, i];
    map.set(key as never, i);
  }
  return null;
}

/** Internal: shared with the code generator. */
export function duplicateMessage(p: string, d: [number, number]): string {
  return `${where(p)} must not repeat items; items ${d[0]} and ${d[1]} are equal.`;
}

/** True when no two items of the array are equal (JSON equality). */
export function uniqueOk(v: unknown[]): boolean {
  // primitives compare exactly as JSON does inside a Set (1 and 1.0 are one number; "1" is not 1)
  let prim = true;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x === "object" && x !== null) {
      prim = false;
      break;
    }
  }
  if (prim) {
    // few items (the usual case): compare pairs, no Set to allocate; SameValueZero, as a Set compares
    if (v.length <= 16) {
      for (let i = 1; i < v.length; i++) {
        const x = v[i];
        for (let j = 0; j < i; j++) {
          const y = v[j];
          if (x === y || (x !== x && y !== y)) return false;
        }
      }
      return true;
    }
    return new Set(v).size === v.length;
  }
  const seen = new Set<string>();
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    const key = typeof x === "object" && x !== null ? "o" + canonical(x) : typeof x + ":" + String(x);
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}
