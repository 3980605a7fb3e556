/**
 * What the relay reports about a tool's `inputSchema` in its `tools` event, for two kinds of legitimate
 * schema it accepts more leniently than the letter of the schema:
 *
 * - an unknown `format` (Notion's OpenAPI-derived `format: "json"`): an annotation, as in JSON Schema 2020-12
 *   (the compiler ignores it), so it is not enforced;
 * - a `required` property that declares a `default` (Playwright's zod output-type schemas): the server fills
 *   in the default, so a call may leave it out (the validator's `defaultsSatisfyRequired`, which the relay
 *   turns on).
 *
 * Nothing is rewritten here: the server's schema, which the client sees and the pins hash, is never touched.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import { escapePointer } from "../_common/pointer.ts";
import { KNOWN_FORMATS } from "../_schema/keywords.ts";
import { DATA_KEYWORDS, relaxDefaults, SCHEMA_MAPS } from "../_validate/defaults.ts";

/** One leniency the relay applies to a schema, for the `tools` event (what `lint` would report). */
export interface SchemaRelaxation {
  /** JSON Pointer in the schema. */
  pointer: string;
  /** What was relaxed. */
  note: string;
}

/** Note every unknown `format` in a schema and its subschemas. */
function noteFormats(schema: unknown, pointer: string, notes: SchemaRelaxation[], depth: number): void {
  if (depth > 64) return;
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => noteFormats(s, `${pointer}/${i}`, notes, depth + 1));
    return;
  }
  if (!isRecord(schema)) return;
  for (const [key, value] of Object.entries(schema)) {
    const p = `${pointer}/${escapePointer(key)}`;
    if (key === "format" && typeof value === "string" && !KNOWN_FORMATS.has(value)) {
      notes.push({ pointer: p, note: `unknown format "${value}" treated as an annotation` });
    } else if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      for (const [name, sub] of Object.entries(value)) {
        noteFormats(sub, `${p}/${escapePointer(name)}`, notes, depth + 1);
      }
    } else if (!DATA_KEYWORDS.has(key)) noteFormats(value, p, notes, depth + 1);
  }
}

/** What the relay accepts more leniently in `schema` than its letter (empty when nothing). */
export function schemaNotes(schema: unknown): SchemaRelaxation[] {
  const notes: SchemaRelaxation[] = [];
  noteFormats(schema, "", notes, 0);
  for (const { pointer, property } of relaxDefaults(schema).relaxed) {
    notes.push({ pointer, note: `required property "${property}" declares a default, so it may be omitted` });
  }
  return notes;
}
