/**
 * JSON value helpers of the schema engine, used by the interpreter at check time and called by name from
 * the generated code: JSON equality, code-point length, `multipleOf`, duplicate items and regular
 * expressions that never throw at check time.
 *
 * @module
 */
import { boundedRegExp } from "./linear_regexp.ts";
import { SchemaError } from "./keywords.ts";

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

/** A canonical text for a JSON value, equal for deep-equal values. */
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

/** True when `v` is a multiple of `m`, allowing for binary floating point. */
export function isMultiple(v: number, m: number): boolean {
  const q = v / m;
  if (!Number.isFinite(q)) return false;
  if (Number.isInteger(q)) return true;
  // binary floating point: 0.0075 / 0.0001 is 74.99999999999999
  return Math.abs(q - Math.round(q)) < 1e-9 * Math.max(1, Math.abs(q)) && Math.abs(q) < 2 ** 53;
}

/**
 * The first repeated item of an array: `[first, i]` where item `i` (the lowest such index) equals the
 * earlier item `first` (JSON equality), or null when all differ.
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

/**
 * Compiles a schema regular expression with the Unicode flag (falling back to none for legacy syntax). A
 * pattern backtracking could take exponential time on runs on a linear-time matcher (see linear_regexp.ts).
 */
export function makeRegExp(source: string, pointer: string, keyword: string): RegExp {
  let native: RegExp;
  try {
    native = new RegExp(source, "u");
  } catch {
    try {
      native = new RegExp(source);
    } catch (e) {
      throw new SchemaError(
        keyword,
        pointer,
        `"${keyword}" at ${pointer} is not a valid regular expression: ${(e as Error).message}`,
      );
    }
  }
  try {
    return boundedRegExp(source, native);
  } catch (e) {
    throw new SchemaError(keyword, pointer, `"${keyword}" at ${pointer} is refused: ${(e as Error).message}`);
  }
}

/**
 * The last "no" {@linkcode safeTest} gave for a string of at least {@linkcode REMEMBERED_FROM} units: a value
 * that fails its pattern is tested again by the reporting function, with its own copy of the same pattern.
 * Dropped once asked again, so that no long string is kept past its report.
 */
let remembered: { source: string; flags: string; text: string } | null = null;
/** Below this length a second test costs less than comparing the string with the one remembered. */
const REMEMBERED_FROM = 256;

/**
 * Tests `s` against `re`; an engine error counts as no match. A long string that failed, asked again of the
 * same pattern (source and flags: the reporting function's copy of the one that decided), fails unrun.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safeTest } from "./values.ts";
 *
 * assert.equal(safeTest(/^\d+$/u, "123"), true);
 * assert.equal(safeTest(/^\d+$/u, "1".repeat(300) + "x"), false);
 * assert.equal(safeTest(new RegExp("^\\d+$", "u"), "1".repeat(300) + "x"), false);
 * ```
 */
export function safeTest(re: RegExp, s: string): boolean {
  const long = s.length >= REMEMBERED_FROM;
  if (
    long && remembered !== null && remembered.source === re.source && remembered.flags === re.flags &&
    remembered.text === s
  ) {
    remembered = null;
    return false;
  }
  let answer: boolean;
  try {
    re.lastIndex = 0;
    answer = re.test(s);
  } catch {
    // an engine error (e.g. stack exhaustion on a pathological input) counts as no match, never a crash
    answer = false;
  }
  if (long && !answer) remembered = { source: re.source, flags: re.flags, text: s };
  return answer;
}
