/**
 * A pre-pass over a tool's `inputSchema` before it is compiled, for two kinds of legitimate schema the
 * validator would otherwise refuse or enforce wrongly:
 *
 * - an unknown `format` (Notion's OpenAPI-derived `format: "json"`): an annotation, as in JSON Schema 2020-12
 *   (the compiler ignores it); only reported here, so the `tools` event says it is not enforced;
 * - a `required` property that declares a `default` (Playwright's zod output-type schemas): the server fills
 *   in the default, so a call that leaves it out works directly and must work through the relay.
 *
 * The cleaner home for the second is the validator (`_validate/`: an option to accept a missing required
 * property that has a `default`, reported by `lint`). Until that lands, this pass rewrites a copy of the
 * schema; the server's own schema, which the client sees and the pins hash, is never touched.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import { escapePointer } from "../_common/pointer.ts";
import { KNOWN_FORMATS } from "../_schema/keywords.ts";

/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);

/** Keywords whose value is data, not a schema: never rewritten. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["enum", "const", "default", "examples", "required"]);

/** One change the pre-pass made, for the `tools` event (what `lint` would report). */
export interface SchemaRelaxation {
  /** JSON Pointer in the schema. */
  pointer: string;
  /** What was relaxed. */
  note: string;
}

/** Rewrite one schema object (and its subschemas); returns the same object when nothing changed. */
function relaxSchema(schema: unknown, pointer: string, notes: SchemaRelaxation[], depth: number): unknown {
  if (depth > 64) return schema;
  if (Array.isArray(schema)) {
    let copy: unknown[] | null = null;
    schema.forEach((s, i) => {
      const r = relaxSchema(s, `${pointer}/${i}`, notes, depth + 1);
      if (r !== s) (copy ??= schema.slice())[i] = r;
    });
    return copy ?? schema;
  }
  if (!isRecord(schema)) return schema;
  let copy: Record<string, unknown> | null = null;
  const set = (key: string, value: unknown) => ((copy ??= { ...schema })[key] = value);
  for (const [key, value] of Object.entries(schema)) {
    const p = `${pointer}/${escapePointer(key)}`;
    if (key === "format" && typeof value === "string" && !KNOWN_FORMATS.has(value)) {
      // The compiler already ignores it: nothing to rewrite, only to say.
      notes.push({ pointer: p, note: `unknown format "${value}" treated as an annotation` });
    } else if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      let map: Record<string, unknown> | null = null;
      for (const [name, sub] of Object.entries(value)) {
        const r = relaxSchema(sub, `${p}/${escapePointer(name)}`, notes, depth + 1);
        if (r !== sub) (map ??= { ...value })[name] = r;
      }
      if (map !== null) set(key, map);
    } else if (!DATA_KEYWORDS.has(key) && (isRecord(value) || Array.isArray(value))) {
      const r = relaxSchema(value, p, notes, depth + 1);
      if (r !== value) set(key, r);
    }
  }
  const required = schema.required;
  const properties = schema.properties;
  if (Array.isArray(required) && isRecord(properties)) {
    const defaulted = required.filter((n) =>
      typeof n === "string" && isRecord(properties[n]) && Object.hasOwn(properties[n] as object, "default")
    );
    if (defaulted.length > 0) {
      set("required", required.filter((n) => !defaulted.includes(n)));
      for (const n of defaulted) {
        notes.push({
          pointer: `${pointer}/required`,
          note: `required property "${n}" declares a default, so it may be omitted`,
        });
      }
    }
  }
  return copy ?? schema;
}

/** The schema to compile for a tool, and what was relaxed (empty when the schema is used as declared). */
export function relaxInputSchema(schema: unknown): { schema: unknown; notes: SchemaRelaxation[] } {
  const notes: SchemaRelaxation[] = [];
  return { schema: relaxSchema(schema, "", notes, 0), notes };
}
