/**
 * JSON value helpers of the schema engine, used by the interpreter at check time and called by name from
 * the generated code: JSON equality, code-point length, `multipleOf`, duplicate items and regular
 * expressions that never throw at check time.
 *
 * @module
 */
import { firstHole, heldIndices } from "../_common/values.ts";
import {
  answersLinearly,
  boundedRegExp,
  confirmLinearly,
  failsQuietly,
  linearRegExp,
  MatchTooCostly,
} from "./linear_regexp.ts";
import { SchemaError } from "./keywords.ts";

/**
 * Deep JSON equality: numbers by value (1 equals 1.0), objects regardless of key order, an array's hole or
 * `undefined` as the `null` JSON sends (a sparse array built in code costs what it holds).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const aa = Array.isArray(a), ba = Array.isArray(b);
  if (aa !== ba) return false;
  if (aa) {
    const x = a as unknown[], y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) {
      const p = x[i], q = y[i];
      if ((p === undefined && !(i in x)) || (q === undefined && !(i in y))) return sameFrom(x, y, i);
      if (!deepEqual(p ?? null, q ?? null)) return false;
    }
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

/**
 * Whether arrays `x` and `y` of one length, one of which has a hole at `from`, are equal from there on: at
 * the indices either holds (a hole is `null`), so a sparse array costs what it holds, not its length.
 */
function sameFrom(x: readonly unknown[], y: readonly unknown[], from: number): boolean {
  const hx = heldIndices(x, from), hy = heldIndices(y, from);
  // (an index neither holds is null in both)
  for (let i = 0, j = 0; i < hx.length || j < hy.length;) {
    const k = j >= hy.length || (i < hx.length && hx[i] <= hy[j]) ? hx[i] : hy[j];
    if (!deepEqual(x[k] ?? null, y[k] ?? null)) return false;
    if (hx[i] === k) i++;
    if (hy[j] === k) j++;
  }
  return true;
}

/**
 * The members of a schema's list (`enum`, `type`) as JSON sends them: the list itself when it has no hole,
 * else what it holds with one `null` at its first hole (JSON writes each hole `null`; for a set of members
 * one says as much). A sparse list built in code, kept with its holes past 100 000 slots (see `copyAsSent`),
 * costs what it holds, not its length.
 */
export function membersAsSent(list: readonly unknown[]): readonly unknown[] {
  const hole = firstHole(list);
  if (hole < 0) return list;
  const members: unknown[] = list.slice(0, hole);
  members.push(null);
  for (const i of heldIndices(list, hole + 1)) members.push(list[i] ?? null);
  return members;
}

/**
 * A canonical text for a JSON value, equal for deep-equal values (an array's hole is `null`; a run of nulls
 * is written as its count, so a sparse array built in code costs what it holds, not its length).
 */
export function canonical(v: unknown): string {
  if (typeof v !== "object" || v === null) return typeof v === "string" ? JSON.stringify(v) : String(v);
  if (Array.isArray(v)) return canonicalList(v);
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

/**
 * {@link canonical} of an array: by index to its first hole, then by the indices it holds; each run of nulls
 * (holes, `undefined` or `null`, all sent as `null`) as `<count>*null`, which no other value's text is.
 */
function canonicalList(v: readonly unknown[]): string {
  let text = "[";
  let nulls = 0; // (the nulls read since the last other item)
  const add = (x: unknown) => {
    if (x === undefined || x === null) return void nulls++;
    if (nulls > 0) text += `${nulls}*null,`;
    nulls = 0;
    text += canonical(x) + ",";
  };
  const hole = firstHole(v);
  for (let i = 0; i < (hole < 0 ? v.length : hole); i++) add(v[i]);
  if (hole >= 0) {
    let next = hole; // the first index not yet counted
    for (const i of heldIndices(v, hole + 1)) {
      nulls += i - next;
      add(v[i]);
      next = i + 1;
    }
    nulls += v.length - next;
  }
  return text + (nulls > 0 ? `${nulls}*null,` : "") + "]";
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
 * earlier item `first` (JSON equality: a hole or `undefined` is the `null` JSON sends, so a sparse array
 * built in code ends at its second hole), or null when all differ.
 */
export function firstDuplicate(v: unknown[]): [number, number] | null {
  let prim = v.length <= 16;
  for (let i = 0; prim && i < v.length; i++) prim = typeof v[i] !== "object" || v[i] === null;
  if (prim) {
    // few primitives: compare pairs (SameValueZero, as a Map does), no Map to allocate
    for (let i = 1; i < v.length; i++) {
      const x = v[i] ?? null;
      for (let j = 0; j < i; j++) {
        const y = v[j] ?? null;
        if (x === y || (x !== x && y !== y)) return [j, i];
      }
    }
    return null;
  }
  // primitives are their own keys (a Map compares them as JSON does); objects go by canonical text
  const seen = new Map<unknown, number>();
  const seenObj = new Map<string, number>();
  for (let i = 0; i < v.length; i++) {
    const x = v[i] ?? null;
    const isO = typeof x === "object" && x !== null;
    const key = isO ? canonical(x) : x;
    const map = isO ? seenObj : seen;
    const first = map.get(key as never);
    if (first !== undefined) return [first, i];
    map.set(key as never, i);
  }
  return null;
}

/**
 * True when no two items of the array are equal (JSON equality; a hole or `undefined` is `null`, as in
 * {@link firstDuplicate}).
 */
export function uniqueOk(v: unknown[]): boolean {
  // primitives compare exactly as JSON does inside a Set (1 and 1.0 are one number; "1" is not 1)
  let prim = true;
  let hole = false; // (a hole or undefined: null, read one by one below, not by `new Set(v)`)
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x === undefined) {
      if (hole) return false; // a second null
      hole = true;
    } else if (typeof x === "object" && x !== null) {
      prim = false;
      break;
    }
  }
  if (prim) {
    // few items (the usual case): compare pairs, no Set to allocate; SameValueZero, as a Set compares
    if (v.length <= 16) {
      for (let i = 1; i < v.length; i++) {
        const x = v[i] ?? null;
        for (let j = 0; j < i; j++) {
          const y = v[j] ?? null;
          if (x === y || (x !== x && y !== y)) return false;
        }
      }
      return true;
    }
    if (!hole) return new Set(v).size === v.length;
  }
  const seen = new Set<string>();
  for (let i = 0; i < v.length; i++) {
    const x = v[i] ?? null;
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
 * Dropped once asked again, and by {@linkcode forgetFailedTest} at the end of each judging: a value that fails
 * with no report (under `not`, `anyOf` or `if`, or an MCP key test) would else be kept, megabytes in a relay,
 * until the next long string failed.
 */
let remembered: { source: string; flags: string; text: string } | null = null;
/** Below this length a second test costs less than comparing the string with the one remembered. */
const REMEMBERED_FROM = 256;
/**
 * From this length a native "no" is asked again of the linear-time matcher where it reads the pattern:
 * JavaScriptCore's engine answers "no" where its stack runs out (about 2 M characters of `^(?:a|b)*$`)
 * instead of throwing as V8's does; this stays well below that, and a "no" costs then about 40 ms more. Where
 * the matcher does not read the pattern, JavaScriptCore's "no" is unchecked.
 */
const CONFIRMED_FROM = 100_000;

/**
 * Thrown where the native engine failed on a value (V8 exhausts its stack on about 8 M characters of
 * `^(?:a|b)*$`) and the linear-time matcher cannot read the pattern, or where the matcher ran out of its steps
 * (a program of thousands of instructions, `(?:a?b?){2500}x`, on a long value): neither "matches" nor "does not match"
 * is known, and either, under `not`, would let a value by. Callers turn it into a finding.
 */
export class PatternUnchecked extends Error {
  /** Creates the error for the pattern `source` and the engine's `cause`. */
  constructor(source: string, cause: unknown) {
    super(
      `a value could not be checked against the pattern ${source} (the regular expression engine ` +
        `failed: ${cause instanceof Error ? cause.message : String(cause)}); send a shorter value`,
    );
    this.name = "PatternUnchecked";
  }
}

/**
 * Tests `s` against `re`. Where the native engine throws (stack exhaustion on a long value), the linear-time
 * matcher answers, as the engine would; where it cannot read the pattern, {@linkcode PatternUnchecked} is
 * thrown: never a guess, nor where the matcher runs out of its steps. On an engine that fails quietly
 * (JavaScriptCore), a "no" on a string of {@linkcode CONFIRMED_FROM} units or more is asked of it too. A
 * long string that failed, asked again of the same pattern (source and flags: the reporting function's copy of
 * the one that decided), fails unrun.
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
    // (JavaScriptCore answers "no" where V8 throws: from 2 M characters of `^(?:a|b)*$`)
    // (V8's "no" is an answer, as it throws where it fails: asked again, a costly pattern ran 4.9 s to be
    // refused as unchecked where the engine said "no" in 0 ms)
    if (!answer && failsQuietly() && s.length >= CONFIRMED_FROM && !answersLinearly(re, s.length)) {
      // (where the matcher cannot read the pattern, JavaScriptCore's "no" is no answer: `^(?:a|b)*(?!xy)$` is
      // "no" on 2 M characters that match, and under `not` a forbidden value went by)
      answer = linearTest(re, s) ?? unchecked(re, QUIET_NO);
    }
  } catch (e) {
    // (the confirmation above gave no answer, or the matcher ran out of steps: asked again, the same)
    if (e instanceof PatternUnchecked) throw e;
    answer = (e instanceof MatchTooCostly ? null : linearTest(re, s)) ?? unchecked(re, e);
  }
  if (long && !answer) remembered = { source: re.source, flags: re.flags, text: s };
  return answer;
}

/**
 * Whether `s` matches `re` on the linear-time matcher, for a value the native engine failed on; null where the
 * matcher cannot read the pattern. (Read anew from the source: rare, and `re` may be a cut of the pattern or
 * answer short strings natively.)
 */
function linearTest(re: RegExp, s: string): boolean | null {
  let linear: RegExp | null = null;
  try {
    linear = linearRegExp(re.source, { flags: re.flags });
  } catch {
    // (syntax or flags the matcher lacks: no answer)
  }
  if (linear === null) return null;
  try {
    // (what every match takes, looked for once: `test` of a program that may run out looked again)
    return confirmLinearly(linear, s);
  } catch (e) {
    if (e instanceof MatchTooCostly) unchecked(re, e);
    throw e;
  }
}

/** The cause of a {@linkcode PatternUnchecked} for a "no" from an engine that answers "no" where it fails. */
const QUIET_NO =
  "JavaScriptCore answers no where its stack runs out, and the linear-time matcher cannot read " +
  "the pattern to confirm it";

/** Throws {@linkcode PatternUnchecked} for `re`, which the native engine threw `cause` on. */
function unchecked(re: RegExp, cause: unknown): never {
  throw new PatternUnchecked(re.source, cause);
}

/**
 * Drops the long string {@linkcode safeTest} keeps after it failed, once what would ask it again is done.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forgetFailedTest, safeTest } from "./values.ts";
 *
 * const re = /^\d+$/u;
 * assert.equal(safeTest(re, "1".repeat(300) + "x"), false);
 * forgetFailedTest();
 * re.test = () => true; // (run again: nothing is remembered)
 * assert.equal(safeTest(re, "1".repeat(300) + "x"), true);
 * ```
 */
export function forgetFailedTest(): void {
  remembered = null;
}
