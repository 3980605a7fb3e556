/**
 * The three tools the validation benches use (weather, search, booking), each with a valid and an invalid
 * argument text: bench/validate_bench.ts times validation on them, bench/compile_bench.ts compiling them, and
 * scripts/validate_identity.ts hashes their findings. A module of its own, so that importing them registers
 * no bench.
 *
 * @module
 */

/** The three tools and, for each, a valid and an invalid argument text. */
export const TOOLS = {
  weather: {
    schema: {
      type: "object",
      properties: {
        city: { type: "string", minLength: 1, description: "City name" },
        units: { type: "string", enum: ["celsius", "fahrenheit"] },
        days: { type: "integer", minimum: 1, maximum: 14 },
      },
      required: ["city"],
      additionalProperties: false,
    },
    valid: '{"city":"Oslo","units":"celsius","days":3}',
    invalid: '{"city":"","units":"kelvin","days":30,"country":"NO"}',
  },
  search: {
    schema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 200 },
        engine: { type: "string", enum: ["web", "news", "images", "scholar"] },
        limit: { type: "integer", minimum: 1, maximum: 50 },
        offset: { type: "integer", minimum: 0, maximum: 1000 },
        safe: { type: "boolean" },
        filters: {
          type: "object",
          properties: {
            site: { type: "string", maxLength: 253 },
            after: { type: "string", format: "date" },
            lang: { type: "string", pattern: "^[a-z]{2}$" },
            tags: { type: "array", items: { type: "string" }, maxItems: 10, uniqueItems: true },
          },
          additionalProperties: false,
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    valid:
      '{"query":"rust async runtime comparison","engine":"web","limit":10,"safe":true,"filters":{"site":"github.com","after":"2024-01-01","lang":"en","tags":["rust","tokio"]}}',
    invalid:
      '{"query":"rust","engine":"video","limit":0,"offset":1.5,"filters":{"after":"yesterday","lang":"english","tags":["a","a"],"x":1}}',
  },
  booking: {
    schema: {
      type: "object",
      $defs: {
        person: {
          type: "object",
          properties: {
            name: { type: "string", minLength: 1 },
            email: { type: "string", format: "email" },
            age: { type: "integer", minimum: 0, maximum: 130 },
          },
          required: ["name"],
          additionalProperties: false,
        },
        day: { type: "string", format: "date" },
      },
      properties: {
        guests: { type: "array", items: { $ref: "#/$defs/person" }, minItems: 1, maxItems: 8 },
        checkin: { $ref: "#/$defs/day" },
        checkout: { $ref: "#/$defs/day" },
        room: {
          anyOf: [
            { type: "string", enum: ["single", "double", "suite"] },
            { type: "integer", minimum: 100, maximum: 999 },
          ],
        },
        notes: { type: ["string", "null"], maxLength: 500 },
      },
      required: ["guests", "checkin", "checkout", "room"],
      additionalProperties: false,
    },
    valid:
      '{"guests":[{"name":"Ada Lovelace","email":"ada@example.com","age":36},{"name":"Charles Babbage"}],"checkin":"2026-12-01","checkout":"2026-12-04","room":"double","notes":null}',
    invalid:
      '{"guests":[{"name":"","email":"not-an-email","age":-1},{"nick":"cb"}],"checkin":"2026-13-01","checkout":"tomorrow","room":"penthouse","notes":5}',
  },
} as const;
