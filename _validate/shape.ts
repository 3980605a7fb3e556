/**
 * Shape specs, as agentvet writes them: `{ query: "string", limit: "number?" }` maps each argument to a type
 * name (`?` for optional), turned into the JSON Schema the validator enforces.
 *
 * @module
 */

const SHAPE_TYPES: Readonly<Record<string, string | null>> = {
  string: "string",
  str: "string",
  number: "number",
  float: "number",
  integer: "integer",
  int: "integer",
  boolean: "boolean",
  bool: "boolean",
  array: "array",
  list: "array",
  object: "object",
  dict: "object",
  null: "null",
  any: null,
};

/** The type names a shape accepts (each also with `?` for optional). */
export const SHAPE_TYPE_NAMES: readonly string[] = Object.keys(SHAPE_TYPES);

/** Thrown for a shape that cannot be read; the message names the key and the type names allowed. */
export class ShapeError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ShapeError";
  }
}

/** Keys that only a JSON Schema has at its root: an object with one of them is a schema, never a shape. */
const SCHEMA_KEYS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "$schema",
  "$ref",
  "$defs",
  "anyOf",
  "oneOf",
  "allOf",
  "enum",
  "const",
]);

/**
 * True when `value` reads as a shape spec: a plain object whose every value is a shape type name, and which
 * has none of the keys a JSON Schema's root has (so `{ type: "object" }` stays a schema).
 *
 * @example A shape, and a schema that looks like one
 * ```ts
 * import assert from "node:assert/strict";
 * import { isShape } from "./shape.ts";
 *
 * assert.equal(isShape({ query: "string", limit: "number?" }), true);
 * assert.equal(isShape({ type: "object" }), false);
 * ```
 */
export function isShape(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length > 0 &&
    entries.every(([key, type]) =>
      !SCHEMA_KEYS.has(key) && typeof type === "string" &&
      Object.hasOwn(SHAPE_TYPES, type.replace(/\?$/, "").trim().toLowerCase())
    );
}

/**
 * Turns a shape spec into a JSON Schema: each key a property of its type, required unless its type ends in
 * `?`, no other keys accepted.
 *
 * @example Required and optional arguments
 * ```ts
 * import assert from "node:assert/strict";
 * import { shapeToSchema } from "./shape.ts";
 *
 * assert.deepEqual(shapeToSchema({ query: "string", limit: "number?" }), {
 *   type: "object",
 *   properties: { query: { type: "string" }, limit: { type: "number" } },
 *   required: ["query"],
 *   additionalProperties: false,
 * });
 * ```
 *
 * @param shape The shape spec.
 * @param source Where it came from, for error messages (a file name, `--shape`).
 * @throws {ShapeError} When the shape is not an object of known type names.
 */
export function shapeToSchema(shape: unknown, source = "shape"): Record<string, unknown> {
  if (typeof shape !== "object" || shape === null || Array.isArray(shape)) {
    throw new ShapeError(`${source}: a shape must be a JSON object mapping argument names to types`);
  }
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [key, raw] of Object.entries(shape)) {
    if (typeof raw !== "string") {
      throw new ShapeError(
        `${source}: the type of ${JSON.stringify(key)} must be a string such as "string?"`,
      );
    }
    const optional = raw.endsWith("?");
    const name = (optional ? raw.slice(0, -1) : raw).trim().toLowerCase();
    if (!Object.hasOwn(SHAPE_TYPES, name)) {
      throw new ShapeError(
        `${source}: unknown type ${JSON.stringify(raw)} for ${JSON.stringify(key)}; ` +
          `use one of ${SHAPE_TYPE_NAMES.join(", ")}, with ? for optional`,
      );
    }
    const type = SHAPE_TYPES[name];
    // defineProperty: a key named __proto__ stays an own property, never a prototype.
    Object.defineProperty(properties, key, {
      value: type === null ? {} : { type },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    if (!optional) required.push(key);
  }
  return { type: "object", properties, required, additionalProperties: false };
}
