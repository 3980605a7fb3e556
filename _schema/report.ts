/**
 * The words of a finding, shared by the interpreter and the generated code so both say exactly the same
 * thing: how a value is shown, how a pointer is named, and the type-mismatch message.
 *
 * @module
 */
import type { Finding, FindingCode } from "../types.ts";
import { plural } from "../_common/values.ts";
import { MAX_QUOTED_POINTER, quotedPointer } from "../_common/pointer.ts";

/** True when JSON.stringify would only wrap `s` in quotes (a loop: cheaper than a regex for short text). */
function plain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** How many characters {@link show} keeps by default. */
const SHOWN_MAX = 60;

/** True when `s`, quoted, fits in `max` characters as it is (the fast path of {@link show}). */
function quotable(s: string, max: number): boolean {
  return s.length <= max - 2 && plain(s);
}

/** Shortens a value for `received`. */
export function show(value: unknown, max = SHOWN_MAX): string {
  let s: string;
  if (value === undefined) return "nothing";
  // fast paths for the common cases: short plain strings, numbers, booleans, null
  if (typeof value === "string" && quotable(value, max)) return '"' + value + '"';
  if (typeof value === "number" || typeof value === "boolean" || value === null) {
    s = String(value);
    if (s.length <= max) return s;
  }
  if (typeof value === "bigint") s = bigIntText(value, max); // (JSON.stringify throws on it: "an object")
  else {
    try {
      s = typeof value === "string"
        ? JSON.stringify(value)
        : JSON.stringify(value, shortLists(max)) ?? String(value);
    } catch {
      s = Array.isArray(value) ? "an array" : "an object";
    }
  }
  if (s.length > max) s = s.slice(0, max - 3) + "...";
  return s;
}

/**
 * A BigInt as its decimal text and `n`, or, when that would pass `max` characters, its sign and number of
 * digits: a BigInt is written in decimal in time that grows faster than its length (one of 4 M bits took
 * 1.4 s, to show 60 characters), in hex in linear time (1 ms), which tells the digits.
 */
function bigIntText(value: bigint, max: number): string {
  const hex = (value < 0n ? -value : value).toString(16);
  if (hex.length <= max) return `${value}n`; // (at most 1.21 times as many decimal digits: cut below)
  const bits = (hex.length - 1) * 4 + Math.floor(Math.log2(parseInt(hex[0], 16))) + 1;
  return `${value < 0n ? "-" : ""}a BigInt of about ${Math.floor((bits - 1) * Math.log10(2)) + 1} digits`;
}

/**
 * A replacer for `JSON.stringify` that writes only the first `max` items of a longer array: written out,
 * they already pass `max` characters, so the text cut there is the same, and a sparse array built in code
 * (length 2^32-1) is not written slot by slot (JavaScriptCore took 36 s for one).
 */
function shortLists(max: number): (key: string, value: unknown) => unknown {
  return (_, value) => Array.isArray(value) && value.length > max ? value.slice(0, max) : value;
}

/** {@link show} for a value already known to be a string. */
export function showString(s: string): string {
  return quotable(s, SHOWN_MAX) ? '"' + s + '"' : show(s);
}

/** {@link received} for a value already known to be a string. */
export function receivedString(s: string): string {
  return quotable(s, SHOWN_MAX) ? 'string "' + s + '"' : "string " + show(s);
}

/** The JSON type name of a value. */
export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  const t = typeof value;
  if (t === "number") return Number.isInteger(value) ? "integer" : "number";
  return t;
}

/** What a finding says it received: the type, and the value itself for scalars. */
export function received(value: unknown): string {
  // the JSON types spelt out: no type name looked up, and constant words where the value adds none
  switch (typeof value) {
    case "string":
      return receivedString(value);
    case "number":
      // (show gives a number as String gives it: never longer than SHOWN_MAX)
      return (Number.isInteger(value) ? "integer " : "number ") + value;
    case "boolean":
      return value ? "boolean true" : "boolean false";
    case "object":
      return value === null ? "null null" : Array.isArray(value) ? "array" : "object";
  }
  return `${typeOf(value)} ${show(value)}`;
}

/**
 * {@link show} of a string quoted inside a sentence: one cut short keeps its closing quote after its dots, so
 * the words that follow are not read as part of it (`named "eee..." . Available` read `named "eee....`).
 */
export function showQuoted(value: string): string {
  const s = show(value);
  return s.endsWith('"') ? s : s + '"';
}

/**
 * Human label for a pointer: the pointer in quotes, as in `path`, a long one cut as {@linkcode quotedPointer}
 * cuts it (a model's 5 000-character key is not said whole in each message at or under it; the finding's `path`
 * keeps it whole).
 */
export function where(path: string): string {
  // (sliced only where long: a short pointer is used as it is, so no string flattening on the error path)
  return path === "" ? "The arguments" : quotedPointer(path);
}

/** Counts below this have their words in a {@link countTable}. */
export const COUNTS_MADE = 32;

/** The words of each count below `COUNTS_MADE` with its noun ("0 items", "1 item", ...), made once. */
export function countTable(word: string): readonly string[] {
  return Array.from({ length: COUNTS_MADE }, (_, n) => `${n} ${plural(n, word)}`);
}

/** Pushes a finding; `expected` and `got` are left out when undefined. */
export function push(
  out: Finding[],
  code: FindingCode,
  path: string,
  message: string,
  expected?: string,
  got?: string,
): void {
  if (expected !== undefined && got !== undefined) {
    out.push({ code, path, message, expected, received: got }); // one shape for the common case
    return;
  }
  const f: Finding = { code, path, message };
  if (expected !== undefined) f.expected = expected;
  if (got !== undefined) f.received = got;
  out.push(f);
}

/**
 * A type name with its article ("a string", "an integer", and "null", which takes none), or each of a list of
 * them ("a string or null", "a boolean or an array": only the first had one, and null read "a null").
 */
export function article(t: string): string {
  return t.indexOf(" or ") < 0 ? oneArticle(t) : t.split(" or ").map(oneArticle).join(" or ");
}

/** {@link article} of one type name. */
function oneArticle(t: string): string {
  if (t === "null") return t;
  const c = t.charCodeAt(0);
  return c === 97 || c === 101 || c === 105 || c === 111 || c === 117 ? `an ${t}` : `a ${t}`;
}

/** The number types of `expected` (a type or a list of them), what a too-large number can be sent as. */
function numberTypes(expected: string): string {
  return expected.split(" or ").filter((t) => t === "number" || t === "integer").join(" or ");
}

/** Reports a value of the wrong type; `expected` is e.g. "string or null". */
export function typeFail(out: Finding[], v: unknown, p: string, expected: string, head?: string): void {
  // beyond 2^53 a JSON integer cannot be represented exactly: the tool would get a different number (said
  // only where a number is wanted: "send a string within +/-2^53" would make no sense)
  const huge = typeof v === "number" &&
    (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) &&
    (expected.includes("number") || expected.includes("integer"));
  out.push({
    code: "argument_type_mismatch",
    path: p,
    message: huge
      ? `${where(p)} is a number too large to represent exactly; send ${
        article(numberTypes(expected))
      } within \u00b19007199254740991.`
      : (head ?? typeHead(p, expected)) + typeArticle(v) + ".",
    expected,
    received: received(v),
  });
}

/** What {@link typeArticle} says of each received JSON type, in {@link typeSlot} order. */
const TYPE_ARTICLES = ["a string", "a boolean", "an integer", "a number", "null", "an array", "an object"];

/**
 * The slot of a value's JSON type in `TYPE_ARTICLES`, or -1 where {@link typeFail} has more to say (a number
 * too large to represent exactly) or no JSON text gives the value (undefined, a function).
 */
function typeSlot(v: unknown): number {
  switch (typeof v) {
    case "string":
      return 0;
    case "boolean":
      return 1;
    case "number":
      return Number.isSafeInteger(v) ? 2 : Number.isFinite(v) && !Number.isInteger(v) ? 3 : -1;
    case "object":
      return v === null ? 4 : Array.isArray(v) ? 5 : 6;
  }
  return -1;
}

/**
 * The type-mismatch messages of the value at `p` (known when the schema is compiled), one per received type
 * in `typeSlot` order, then the start they share ({@link typeHead}): what {@link typeFailAt} takes, made once
 * per schema node instead of per finding.
 */
export function typeMessages(p: string, expected: string): string[] {
  const head = typeHead(p, expected);
  return [...TYPE_ARTICLES.map((a) => head + a + "."), head];
}

/** {@link typeFail} with the messages made in advance (`messages`, from {@link typeMessages} for `p`). */
export function typeFailAt(
  out: Finding[],
  v: unknown,
  p: string,
  expected: string,
  messages: readonly string[],
): void {
  const slot = typeSlot(v);
  if (slot < 0) {
    typeFail(out, v, p, expected, messages[TYPE_ARTICLES.length]);
    return;
  }
  out.push({
    code: "argument_type_mismatch",
    path: p,
    message: messages[slot],
    expected,
    received: received(v),
  });
}

/**
 * The ends of the type-mismatch messages of a value whose pointer is only known when it is checked, from the
 * pointer's closing quote on, one per received type in `typeSlot` order: what {@link typeFailAfter} takes.
 */
export function typeTails(expected: string): string[] {
  return TYPE_ARTICLES.map((a) => `" must be ${article(expected)}, not ${a}.`);
}

/** {@link typeFail} with the message ends made in advance (`tails`, from {@link typeTails}). */
export function typeFailAfter(
  out: Finding[],
  v: unknown,
  p: string,
  expected: string,
  tails: readonly string[],
): void {
  const slot = typeSlot(v);
  // (a long pointer through where(), which cuts it)
  if (slot < 0 || p === "" || p.length > MAX_QUOTED_POINTER) {
    typeFail(out, v, p, expected);
    return;
  }
  out.push({
    code: "argument_type_mismatch",
    path: p,
    message: '"' + p + tails[slot],
    expected,
    received: received(v),
  });
}

/** The start of a type message, up to the received type. */
export function typeHead(p: string, expected: string): string {
  return `${where(p)} must be ${article(expected)}, not `;
}

/** `article(typeOf(v))` without building a string. */
function typeArticle(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    case "number":
      return Number.isInteger(v) ? "an integer" : "a number";
    case "object":
      return v === null ? "null" : Array.isArray(v) ? "an array" : "an object";
    default:
      return article(typeOf(v));
  }
}

/** The message for repeated array items `d` (`[first, i]`, as `firstDuplicate` gives them). */
export function duplicateMessage(p: string, d: [number, number]): string {
  return `${where(p)} must not repeat items; items ${d[0]} and ${d[1]} are equal.`;
}

/** Reports a property that `additionalProperties: false` does not allow. */
export function reportExtra(out: Finding[], at: string, key: string, allowed: string): void {
  push(
    out,
    "unexpected_argument",
    at,
    `${where(at)} is not a parameter this tool accepts; remove it. Accepted: ${allowed}.`,
    `one of ${allowed}`,
    show(key),
  );
}
