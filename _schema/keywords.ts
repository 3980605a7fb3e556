/**
 * The vocabulary the JSON Schema engine shares between its interpreter and its code generator: which
 * keywords it enforces and which it ignores, the error it throws for a schema it cannot enforce, and the
 * shape of a compiled check.
 *
 * @module
 */
import type { Finding } from "../types.ts";
import { FORMATS } from "./formats.ts";

/** A compiled check: true when `value` is valid; when `out` is an array, findings are pushed onto it. */
export type Check = (value: unknown, path: string, out: Finding[] | null) => boolean;

/** Compiles the schema node found at JSON Pointer `ptr` into a {@link Check}. */
export type NodeCompiler = (schema: unknown, ptr: string) => Check;

/** What a `$ref` resolves to: the target schema and its pointer (for messages and nested refs). */
export interface RefTarget {
  /** The schema the reference points at. */
  schema: unknown;
  /** Where it sits: a JSON Pointer (`/$defs/a`) or an anchor (`#name`). */
  ptr: string;
}

/** What the interpreter exposes to the code generator. */
export interface Tree {
  /** The interpreter's check for a schema node (cached per node object). */
  node: NodeCompiler;
  /** Resolves a `$ref` found in `holder`. */
  resolve: (ref: string, at: string, holder: object) => RefTarget;
  /** Whether formats are asserted. */
  assertFormats: boolean;
}

/**
 * Thrown when a schema cannot be compiled: unknown keyword, bad keyword value, unresolved `$ref`, or a schema
 * that reaches itself again through `$ref` and the applicators alone (checking a value would never end).
 *
 * @example Name the keyword a tool schema cannot use
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileSchema, SchemaError } from "@toolguard/toolguard/validate";
 *
 * assert.throws(
 *   () => compileSchema({ type: "object", unevaluatedProperties: false }),
 *   (e) => e instanceof SchemaError && e.keyword === "unevaluatedProperties" && e.pointer === "/unevaluatedProperties",
 * );
 * ```
 *
 * @example Point at a bad keyword value inside the schema
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileSchema, SchemaError } from "@toolguard/toolguard/validate";
 *
 * try {
 *   compileSchema({ properties: { n: { minimum: "1" } } });
 *   assert.fail("a string minimum compiles");
 * } catch (e) {
 *   assert.ok(e instanceof SchemaError);
 *   assert.equal(e.keyword, "minimum");
 *   assert.equal(e.pointer, "/properties/n/minimum");
 * }
 * ```
 */
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

/** The JSON Schema type names `type` accepts. */
export const TYPES: ReadonlySet<string> = new Set([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
  "null",
]);

/** OpenAPI numeric formats, asserted as the range they name. */
export const NUMERIC_FORMATS: Record<string, (n: number) => boolean> = {
  int32: (n) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647,
  int64: (n) => Number.isInteger(n),
  float: (n) => Number.isFinite(n),
  double: (n) => Number.isFinite(n),
};

/**
 * Every `format` the engine knows: the string formats it asserts, OpenAPI's numeric ones, and `enum`
 * (OpenAPI's annotation for enum strings). Any other format is an annotation, as 2020-12 has it.
 */
export const KNOWN_FORMATS: ReadonlySet<string> = new Set([
  ...Object.keys(FORMATS),
  ...Object.keys(NUMERIC_FORMATS),
  "enum",
]);

/** Accepts everything. */
export const TRUE: Check = () => true;
