/**
 * Leniency for local models, used only when asked for: `repair` fixes near-JSON argument text (code
 * fences, trailing commas, single quotes, Python `True`/`False`/`None`); `coerce` turns numeric and boolean
 * strings into the declared type. Each change is named so the verdict can list it.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { eachHeld, isRecord } from "../_common/values.ts";
import { resolveLocalRef } from "../_common/json.ts";

/** What {@link repairJson} did. */
export interface Repaired {
  /** The repaired text. */
  text: string;
  /** The repairs applied, in order: `code_fence`, `single_quotes`, `python_literals`, `trailing_comma`. */
  repairs: string[];
}

/** Strips a Markdown code fence (```json ... ```) around the text, without a backtracking regex. */
function unfence(text: string): string | null {
  const t = text.trim();
  if (t.length < 6 || !t.startsWith("```") || !t.endsWith("```")) return null;
  const firstLine = t.indexOf("\n");
  if (firstLine < 0) return t.slice(3, -3).trim();
  // the opening line may carry a language tag ("```json"); anything else there is content
  const tag = t.slice(3, firstLine).trim();
  const start = /^[a-zA-Z]*$/.test(tag) ? firstLine + 1 : 3;
  return t.slice(start, t.length - 3).trim();
}

/** Repairs near-JSON text in one linear pass. Text that is already JSON is returned unchanged. */
export function repairJson(text: string): Repaired {
  const repairs: string[] = [];
  let t = text;
  const fence = unfence(t);
  if (fence !== null) {
    t = fence;
    repairs.push("code_fence");
  }
  try {
    JSON.parse(t);
    return { text: t, repairs };
  } catch {
    // needs the token pass
  }
  let out = "";
  let single = false, python = false, trailing = false;
  const n = t.length;
  let i = 0;
  while (i < n) {
    const c = t[i];
    if (c === '"') {
      // copy a double-quoted string verbatim
      let j = i + 1;
      while (j < n && t[j] !== '"') j += t[j] === "\\" ? 2 : 1;
      out += t.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === "'") {
      single = true;
      let j = i + 1;
      let s = '"';
      while (j < n && t[j] !== "'") {
        if (t[j] === "\\" && j + 1 < n) {
          // \' becomes a plain quote; other escapes are kept
          s += t[j + 1] === "'" ? "'" : t[j] + t[j + 1];
          j += 2;
        } else {
          s += t[j] === '"' ? '\\"' : t[j];
          j++;
        }
      }
      out += s + '"';
      i = j + 1;
      continue;
    }
    if (c === ",") {
      let j = i + 1;
      while (j < n && /\s/.test(t[j])) j++;
      if (t[j] === "}" || t[j] === "]") {
        trailing = true;
        i++;
        continue;
      }
    }
    if (c === "T" || c === "F" || c === "N") {
      const word = /^(True|False|None)\b/.exec(t.slice(i, i + 6));
      const prev = i === 0 ? "" : t[i - 1];
      if (word && !/[\w$]/.test(prev)) {
        python = true;
        out += word[1] === "True" ? "true" : word[1] === "False" ? "false" : "null";
        i += word[1].length;
        continue;
      }
    }
    out += c;
    i++;
  }
  if (single) repairs.push("single_quotes");
  if (python) repairs.push("python_literals");
  if (trailing) repairs.push("trailing_comma");
  return { text: out, repairs };
}

type Obj = Record<string, unknown>;

function declaredTypes(s: Obj): string[] {
  return Array.isArray(s.type)
    ? s.type.filter((t): t is string => typeof t === "string")
    : typeof s.type === "string"
    ? [s.type]
    : [];
}

/**
 * Converts numeric and boolean strings to the type the schema declares for them (`"5"` -> `5` where an
 * integer is declared, `"true"` -> `true` where a boolean is), in place, following `properties`, `items`,
 * `prefixItems` and local `$ref`. Returns one entry per change: `"/path: string -> integer"`.
 */
export function coerceValue(
  value: unknown,
  schema: unknown,
  root: unknown = schema,
): { value: unknown; coercions: string[] } {
  const coercions: string[] = [];
  const walk = (v: unknown, s: unknown, path: string, depth: number): unknown => {
    if (depth > 64 || !isRecord(s)) return v;
    if (typeof s.$ref === "string") {
      const target = resolveLocalRef(root, s.$ref);
      if (target !== undefined && target !== s) v = walk(v, target, path, depth + 1);
    }
    const types = declaredTypes(s);
    if (typeof v === "string" && types.length > 0 && !types.includes("string")) {
      const t = v.trim();
      if (
        (types.includes("integer") || types.includes("number")) &&
        /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(t)
      ) {
        const n = Number(t);
        if (types.includes("number") || Number.isInteger(n)) {
          coercions.push(
            `${path}: string -> ${Number.isInteger(n) && types.includes("integer") ? "integer" : "number"}`,
          );
          return n;
        }
      }
      if (types.includes("boolean") && (t === "true" || t === "false")) {
        coercions.push(`${path}: string -> boolean`);
        return t === "true";
      }
      return v;
    }
    if (isRecord(v) && isRecord(s.properties)) {
      for (const k of Object.keys(s.properties)) {
        if (Object.hasOwn(v, k)) {
          const r = walk(v[k], s.properties[k], `${path}/${escapePointer(k)}`, depth + 1);
          if (r !== v[k]) v[k] = r;
        }
      }
    }
    if (Array.isArray(v)) {
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      // (what it holds: a hole has nothing to convert, and a sparse array built in code is 2^32-1 long)
      eachHeld(v, (item, i) => {
        const r = walk(item, i < prefix.length ? prefix[i] : s.items, `${path}/${i}`, depth + 1);
        if (r !== item) v[i] = r;
      });
    }
    return v;
  };
  const out = walk(value, schema, "", 0);
  return { value: out, coercions };
}
