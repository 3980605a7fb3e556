/**
 * The `defaultsSatisfyRequired` option of the validator: a `required` property that declares a `default`
 * may be left out of a call, because the tool fills the default in (Playwright's MCP server, whose zod
 * output-type schemas list defaulted properties as required, answers such calls directly). The schema is
 * rewritten as a copy before it is compiled; the declaration itself is never touched.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import { escapePointer } from "../_common/pointer.ts";

/** Keywords whose value maps names to subschemas. */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);

/** Keywords whose value is data, not a schema: never walked into. */
export const DATA_KEYWORDS: ReadonlySet<string> = new Set([
  "enum",
  "const",
  "default",
  "examples",
  "required",
]);

/** A required property made optional because it declares a default. */
export interface DefaultedRequired {
  /** JSON Pointer to the `required` keyword in the schema. */
  pointer: string;
  /** The property. */
  property: string;
}

/** The subschemas under `value` of keyword `key`, rewritten; the same value when nothing changed. */
function relaxChild(
  key: string,
  value: unknown,
  pointer: string,
  out: DefaultedRequired[],
  depth: number,
): unknown {
  if (SCHEMA_MAPS.has(key) && isRecord(value)) {
    let map: Record<string, unknown> | null = null;
    for (const [name, sub] of Object.entries(value)) {
      const r = relax(sub, `${pointer}/${escapePointer(name)}`, out, depth + 1);
      if (r !== sub) (map ??= { ...value })[name] = r;
    }
    return map ?? value;
  }
  if (!DATA_KEYWORDS.has(key) && (isRecord(value) || Array.isArray(value))) {
    return relax(value, pointer, out, depth + 1);
  }
  return value;
}

/** Rewrite one schema (and its subschemas), copying only what changes. */
function relax(schema: unknown, pointer: string, out: DefaultedRequired[], depth: number): unknown {
  if (depth > 64) return schema;
  if (Array.isArray(schema)) {
    let copy: unknown[] | null = null;
    schema.forEach((s, i) => {
      const r = relax(s, `${pointer}/${i}`, out, depth + 1);
      if (r !== s) (copy ??= schema.slice())[i] = r;
    });
    return copy ?? schema;
  }
  if (!isRecord(schema)) return schema;
  let copy: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(schema)) {
    const r = relaxChild(key, value, `${pointer}/${escapePointer(key)}`, out, depth);
    if (r !== value) (copy ??= { ...schema })[key] = r;
  }
  const { required, properties } = schema;
  if (Array.isArray(required) && isRecord(properties)) {
    const defaulted = required.filter((n): n is string =>
      typeof n === "string" && isRecord(properties[n]) && Object.hasOwn(properties[n] as object, "default")
    );
    if (defaulted.length > 0) {
      (copy ??= { ...schema }).required = required.filter((n) => !defaulted.includes(n as string));
      for (const property of defaulted) out.push({ pointer: `${pointer}/required`, property });
    }
  }
  return copy ?? schema;
}

/**
 * `schema` with every required property that declares a `default` made optional (a copy where anything
 * changed, else the same object), and where that happened.
 */
export function relaxDefaults(schema: unknown): { schema: unknown; relaxed: DefaultedRequired[] } {
  const relaxed: DefaultedRequired[] = [];
  return { schema: relax(schema, "", relaxed, 0), relaxed };
}
