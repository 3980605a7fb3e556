/**
 * Compiles the simplest anchored `pattern`s (`^[a-z]{2}$`, `^\d{4}-\d{2}$`, `^[A-Za-z0-9_-]+$`) to a
 * character loop for the code generator: no regex call per value, and a result that equals
 * `new RegExp(source, "u").test(value)` for every string. Anything outside that small language returns
 * null and stays a regex.
 *
 * @module
 */

/** A set of UTF-16 code units, as inclusive ranges. */
type Ranges = [number, number][];

/** One atom of the pattern and how often it repeats. */
interface Step {
  set: Ranges;
  min: number;
  max: number;
}

const SYNTAX = "^$\\.*+?()[]{}|/";
/** What `\d` matches, as code point ranges. */
export const DIGIT: Ranges = [[48, 57]];
/** What `\w` matches (without the `i` flag), as code point ranges. */
export const WORD: Ranges = [[48, 57], [65, 90], [95, 95], [97, 122]];

/**
 * The body of a function of `v` (a string) that returns whether `source`, compiled with the `u` flag,
 * matches `v`; null when the pattern is not one this compiles. Compiles only `^...$` sequences of literal
 * characters, `\d`, `\w` and positive classes of them, each with an optional quantifier, and only where
 * matching greedily is exact: a repeat of variable length must be last or be followed by a required atom
 * whose characters it cannot take. Every character is in the Basic Multilingual Plane and no surrogate,
 * so code units and code points count alike.
 */
export function compilePattern(source: string): string | null {
  const steps = parse(source);
  if (steps === null) return null;
  for (let i = 0; i < steps.length - 1; i++) {
    const { min, max } = steps[i];
    if (min === max) continue;
    const next = steps[i + 1];
    if (next.min === 0 || overlaps(steps[i].set, next.set)) return null;
  }
  const L = ["const n = v.length;", "let i = 0;", "let c = 0;"];
  for (const { set, min, max } of steps) {
    const test = setTest(set);
    if (min === max && min <= 4) {
      for (let k = 0; k < min; k++) {
        L.push(`if (i >= n || (c = v.charCodeAt(i), !(${test}))) return false;`, "i++;");
      }
      continue;
    }
    // greedy: take the whole run, up to max, then require at least min
    L.push(
      `{ const s = i; const e = ${max === Infinity ? "n" : `Math.min(n, i + ${max})`}; ` +
        `while (i < e && (c = v.charCodeAt(i), ${test})) i++; if (i - s < ${min}) return false; }`,
    );
  }
  L.push("return i === n;");
  return L.join("\n");
}

/** The condition that code unit `c` is in `set`. */
function setTest(set: Ranges): string {
  return set.map(([a, b]) => a === b ? `c === ${a}` : `(c >= ${a} && c <= ${b})`).join(" || ") || "false";
}

function overlaps(a: Ranges, b: Ranges): boolean {
  return a.some(([x, y]) => b.some(([p, q]) => x <= q && p <= y));
}

/** The steps of a `^...$` pattern in the compiled language, or null. */
function parse(src: string): Step[] | null {
  if (src.length < 2 || src[0] !== "^" || src[src.length - 1] !== "$" || src[src.length - 2] === "\\") {
    return null;
  }
  const body = src.slice(1, -1);
  const steps: Step[] = [];
  let i = 0;
  while (i < body.length) {
    let set: Ranges | null;
    const ch = body[i];
    if (ch === "[") {
      const end = classEnd(body, i + 1);
      if (end < 0) return null;
      set = classSet(body.slice(i + 1, end));
      i = end + 1;
    } else if (ch === "\\") {
      set = escapeSet(body[i + 1]);
      i += 2;
    } else if (SYNTAX.includes(ch)) {
      return null; // alternation, groups, dot, anchors in the middle, a stray quantifier
    } else {
      set = charSet(ch.charCodeAt(0));
      i++;
    }
    if (set === null) return null;
    const q = quantifier(body, i);
    if (q === null) return null;
    i = q.next;
    steps.push({ set, min: q.min, max: q.max });
  }
  return steps.length ? steps : null;
}

/** Index of the `]` closing a class that starts at `from`, or -1. */
function classEnd(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === "]") return i;
  }
  return -1;
}

/** A single character as a set: only code units that are whole code points. */
function charSet(c: number): Ranges | null {
  return c >= 0xd800 && c <= 0xdfff ? null : [[c, c]];
}

/** `\d`, `\w`, or an escaped syntax character; null for anything else (`\s`, `\b`, `\u...`, ...). */
function escapeSet(e: string | undefined): Ranges | null {
  if (e === undefined) return null;
  if (e === "d") return DIGIT;
  if (e === "w") return WORD;
  return SYNTAX.includes(e) || e === "-" ? charSet(e.charCodeAt(0)) : null;
}

/** The set of a positive class body (`a-z0-9_\-`), or null (negation, nested or unknown escapes). */
function classSet(body: string): Ranges | null {
  if (body.length === 0 || body[0] === "^") return null;
  const out: Ranges = [];
  let i = 0;
  const one = (): Ranges | null => {
    const ch = body[i];
    if (ch === "\\") {
      const e = body[i + 1];
      i += 2;
      return escapeSet(e);
    }
    if (ch === "[") return null; // u-mode keeps "[" literal here, but it reads as a typo: leave it to the regex
    i++;
    return charSet(ch.charCodeAt(0));
  };
  // the one character a set holds, or -1 (a range needs single characters at both ends)
  const single = (r: Ranges | null) => r !== null && r.length === 1 && r[0][0] === r[0][1] ? r[0][0] : -1;
  while (i < body.length) {
    const first = one();
    if (first === null) return null;
    if (body[i] === "-" && i + 1 < body.length) {
      i++;
      const from = single(first), to = single(one());
      if (from < 0 || to < from) return null;
      out.push([from, to]);
    } else out.push(...first);
  }
  return out;
}

/** The quantifier at `i` (none means exactly once), or null for a lazy or malformed one. */
function quantifier(s: string, i: number): { min: number; max: number; next: number } | null {
  const ch = s[i];
  let q: { min: number; max: number; next: number };
  if (ch === "?") q = { min: 0, max: 1, next: i + 1 };
  else if (ch === "*") q = { min: 0, max: Infinity, next: i + 1 };
  else if (ch === "+") q = { min: 1, max: Infinity, next: i + 1 };
  else if (ch === "{") {
    const m = /^\{(\d{1,4})(?:(,)(\d{1,4})?)?\}/.exec(s.slice(i));
    if (!m) return null;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === undefined ? Infinity : Number(m[3]);
    if (max < min) return null;
    q = { min, max, next: i + m[0].length };
  } else return { min: 1, max: 1, next: i };
  // a lazy quantifier ("+?") matches the same strings when anchored at both ends, but keep the language small
  return s[q.next] === "?" ? null : q;
}
