/**
 * Tool schemas more than one test file declares: read here, so that a test of the code generators
 * (schema_fallback_test.ts) covers the schemas the validator's tests use without importing their files (which
 * would register their tests too).
 *
 * @module
 */

/** The weather tool's parameters of the validator's tests: a city, its units, a number of days. */
export const WEATHER_PARAMS = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1, description: "City" },
    units: { type: "string", enum: ["c", "f"] },
    days: { type: "integer", minimum: 1, maximum: 14 },
  },
  required: ["city"],
  additionalProperties: false,
};

/**
 * A booking's parameters: guests by a `$ref` with an e-mail format, uniqueItems, an `anyOf` of an enum and a
 * bounded integer, a pattern.
 */
export const BOOKING_SCHEMA = {
  type: "object",
  $defs: { person: { type: "object", properties: { email: { type: "string", format: "email" } } } },
  properties: {
    guests: { type: "array", items: { $ref: "#/$defs/person" }, uniqueItems: true },
    room: { anyOf: [{ enum: ["single"] }, { type: "integer", minimum: 100 }] },
    lang: { type: "string", pattern: "^[a-z]{2}$" },
  },
  additionalProperties: false,
};

/** The schema of the validator's property tests: a pattern, a format, uniqueItems and a recursive `$ref`. */
export const PROPERTY_SCHEMA = {
  type: "object",
  properties: {
    q: { type: "string", maxLength: 50, pattern: "^\\p{L}" },
    n: { type: "integer", minimum: 0 },
    tags: { type: "array", items: { type: "string", format: "hostname" }, uniqueItems: true },
    nested: { $ref: "#/$defs/node" },
  },
  $defs: {
    node: { type: "object", properties: { next: { $ref: "#/$defs/node" }, v: { enum: [1, "a", null] } } },
  },
  required: ["q"],
  additionalProperties: false,
};
