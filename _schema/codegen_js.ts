/**
 * The pieces of generated JavaScript both passes of the code generator share: which schema nodes it
 * specialises, the type tests, and the snippets that report a finding. Also the {@link Emit} interface
 * through which the pass emitters ask the generator for constants and for the functions of other nodes.
 *
 * @module
 */
import { ANNOTATION_KEYWORDS } from "./keywords.ts";

/** A schema object. */
export type Obj = Record<string, unknown>;

/** What the pass emitters need from the generator (implemented by its emitter in codegen.ts). */
export interface Emit {
  /** Whether formats are asserted. */
  readonly assertFormats: boolean;
  /** The name of a generated constant holding `value`. */
  constant(value: unknown): string;
  /** The name of the interpreter's check for `schema` (same messages on both paths), as a constant. */
  reporter(schema: unknown, ptr: string): string;
  /** The name of the reporting function for `schema`; `sp` is its pointer when known in advance. */
  reportFn(schema: unknown, ptr: string, sp?: string | null): string;
  /** The name of the yes/no function for `schema`. */
  okFn(schema: unknown, ptr: string): string;
  /** The generated test that `v` matches `re` (a character loop for simple anchored patterns). */
  matches(re: RegExp): string;
  /** Resolves a `$ref` found in `holder`. */
  resolve(ref: string, at: string, holder: object): { schema: unknown; ptr: string };
  /** The yes/no function for a resolved `$ref` target, spending a step of the check's budget. */
  okRef(target: { schema: unknown; ptr: string }): string;
  /** The reporting function for a resolved `$ref` target, spending a step of the check's budget. */
  reportRef(target: { schema: unknown; ptr: string }, sp: string | null): string;
}

/** The keywords the generator specialises; a node with any other assertion goes to the interpreter. */
const SPECIALISED: ReadonlySet<string> = new Set([
  "type",
  "nullable",
  "enum",
  "const",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "items",
  "prefixItems",
  "minItems",
  "maxItems",
  "uniqueItems",
  "properties",
  "required",
  "additionalProperties",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$ref",
  "$defs",
  "definitions",
]);

/** A key that asserts nothing: an annotation keyword or an `x-` extension. */
export const isAnnotation = (key: string): boolean => ANNOTATION_KEYWORDS.has(key) || key.startsWith("x-");

/** A schema node every keyword of which this generator specialises. */
export const isPlainSchema = (schema: Obj): boolean =>
  Object.keys(schema).every((key) => SPECIALISED.has(key) || isAnnotation(key)) &&
  typeof schema.exclusiveMinimum !== "boolean" && typeof schema.exclusiveMaximum !== "boolean" &&
  !Array.isArray(schema.items);

/** A value as a JavaScript literal. */
export const lit = (v: unknown): string => JSON.stringify(v);

/** True for a value `===` compares as JSON equality does. */
const isPrim = (v: unknown): boolean =>
  v === null || typeof v === "string" || typeof v === "boolean" || typeof v === "number";

const TYPE_EXPR: Record<string, string> = {
  string: 'typeof v === "string"',
  integer: 'typeof v === "number" && isSafe(v)',
  number: 'typeof v === "number" && isFin(v)',
  boolean: 'typeof v === "boolean"',
  null: "v === null",
  array: "isArr(v)",
  object: 'typeof v === "object" && v !== null && !isArr(v)',
};

/** The generated test that `v` has one of `types` (JSON Schema type names). */
export const typeCondition = (types: readonly string[]): string =>
  types.map((t) => `(${TYPE_EXPR[t]})`).join(" || ");

/** The `type` of a node, as a list. */
export const typesOf = (s: Obj): string[] => (Array.isArray(s.type) ? s.type : [s.type]) as string[];

/**
 * The JavaScript type a value has once the node's `type` test passed ("" when `type` names several or
 * none): the later keyword tests then skip their own `typeof`.
 */
export function knownType(s: Obj): string {
  if (s.type === undefined) return "";
  const types = typesOf(s);
  if (types.length !== 1) return "";
  return types[0] === "integer" ? "number" : types[0];
}

/** The test of a generated `enum`, shared with the yes/no pass. */
export function enumCondition(e: Emit, vals: readonly unknown[]): string {
  if (!vals.every(isPrim)) return `${e.constant(vals)}.some((x) => eq(x, v))`;
  if (vals.length > 8) return `${e.constant(new Set(vals))}.has(v)`;
  return vals.length ? vals.map((x) => `v === ${lit(x)}`).join(" || ") : "false";
}

/** The test of a generated `const`, shared with the yes/no pass. */
export function constCondition(e: Emit, c: unknown): string {
  return isPrim(c) ? `v === ${lit(c)}` : `eq(${e.constant(c)}, v)`;
}

/** A numeric bound a node sets: its generated test, and the words of its finding. */
export interface NumberBound {
  /** The test that `v` keeps the bound, e.g. `v >= 1`. */
  test: string;
  /** The finding's `expected`, e.g. `>= 1`. */
  expected: string;
  /** The end of the finding's message, e.g. `at least 1`. */
  words: string;
}

/** The numeric bounds of a node, in the interpreter's order (its findings come in that order). */
export function numberBounds(s: Obj): NumberBound[] {
  const bounds: NumberBound[] = [];
  const { minimum: min, maximum: max, exclusiveMinimum: xmin, exclusiveMaximum: xmax, multipleOf: m } = s;
  if (min !== undefined) {
    bounds.push({ test: `v >= ${lit(min)}`, expected: `>= ${min}`, words: `at least ${min}` });
  }
  if (max !== undefined) {
    bounds.push({ test: `v <= ${lit(max)}`, expected: `<= ${max}`, words: `at most ${max}` });
  }
  if (xmin !== undefined) {
    bounds.push({ test: `v > ${lit(xmin)}`, expected: `> ${xmin}`, words: `greater than ${xmin}` });
  }
  if (xmax !== undefined) {
    bounds.push({ test: `v < ${lit(xmax)}`, expected: `< ${xmax}`, words: `less than ${xmax}` });
  }
  if (m !== undefined) {
    bounds.push({ test: `mult(v, ${lit(m)})`, expected: `a multiple of ${m}`, words: `a multiple of ${m}` });
  }
  return bounds;
}

/** True when the node has any of the array keywords the generator handles. */
export const hasArrayKeywords = (s: Obj): boolean =>
  (Array.isArray(s.prefixItems) && s.prefixItems.length > 0) || s.items !== undefined ||
  s.minItems !== undefined || s.maxItems !== undefined || s.uniqueItems === true;

/** The node's object keywords the generator handles, read loosely (the interpreter has validated them). */
export function objectKeywords(s: Obj): { props: Obj; propKeys: string[]; required: string[] } {
  const props = typeof s.properties === "object" && s.properties !== null && !Array.isArray(s.properties)
    ? s.properties as Obj
    : {};
  const required = Array.isArray(s.required) ? s.required as string[] : [];
  return { props, propKeys: Object.keys(props), required };
}

/** True when the node has any of the object keywords the generator handles. */
export const hasObjectKeywords = (s: Obj, o: { propKeys: string[]; required: string[] }): boolean =>
  o.propKeys.length > 0 || o.required.length > 0 || s.additionalProperties !== undefined;

/** The opening of a block that runs only for values of `type` ("{" when the type is already known). */
export function typeBlock(type: "string" | "array" | "object", known: string): string {
  if (known === type) return "{";
  if (type === "string") return 'if (typeof v === "string") {';
  if (type === "array") return "if (isArr(v)) {";
  return 'if (typeof v === "object" && v !== null && !isArr(v)) {';
}

/** A finding built inline, each field a JavaScript expression. */
export interface InlineFinding {
  /** The finding code, e.g. `'"argument_constraint"'`. */
  code: string;
  /** The message. */
  message: string;
  /** What was expected. */
  expected: string;
  /** What was received. */
  received: string;
  /** The finding's pointer (default `p`, the value's own). */
  path?: string;
}

/** The code for `argument_constraint`. */
export const CONSTRAINT = '"argument_constraint"';

/** The statement pushing finding `f` onto `out`. */
export const pushFinding = (f: InlineFinding): string =>
  `out.push({ code: ${f.code}, path: ${
    f.path ?? "p"
  }, message: ${f.message}, expected: ${f.expected}, received: ${f.received} });`;

/**
 * The block run when a keyword fails and reports its own finding: the yes/no answer in the yes/no mode, the
 * finding in the reporting mode. With `showsValue`, the finding's expressions may use `sv`, the value
 * shown (computed once, as a string value is shown).
 */
export const failInline = (f: InlineFinding & { showsValue?: boolean }): string =>
  `{ if (out === null) return false; ok = false; ${f.showsValue ? "const sv = SS(v); " : ""}${
    pushFinding(f)
  } }`;

/** The block run when a keyword fails and the interpreter's check `reporter` explains it. */
export const failWith = (reporter: string): string =>
  `{ if (out === null) return false; ok = false; ${reporter}(v, p, out); }`;

/** The block run when a child failed (its own function has already reported it). */
export const SUBFAIL = "{ if (out === null) return false; ok = false; }";
