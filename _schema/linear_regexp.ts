/**
 * Schema patterns that a backtracking engine can take exponential time on (`^(a+)+$`, `^(a|a)*$`: a repeat
 * inside a repeat, or alternatives inside one) or high polynomial time on (`^a*a*a*a*$`: unbounded repeats
 * side by side that can take the same character) run on a linear-time matcher instead: a Thompson NFA
 * simulated over the code points of the string (a Pike VM without captures), O(length x pattern). A hostile
 * tool schema (an MCP server's) could otherwise stall `validate()` on a short argument. Other patterns keep
 * the native engine. The matcher decides `^`, `$`, `\b`, `\B` and a lookaround of one character or class
 * (`(?=\d)`, `(?<!x)`) from the characters beside a position, runs a wide counted repeat of one set
 * (`\d{1,30001}`), or of a group of a few sets read one way (`(?:ab){1000}`), on a count per thread, and reads
 * the `s` and `m` flags (not `i`). A program that keeps thousands of threads alive a character
 * (`(?:a?b?){2500}x`) first fails unrun a value lacking a character every match takes (the `x`); on others it
 * stops at a budget of steps (on Bun keeping the native engine's "yes"), and the value is refused as
 * unchecked. An exponential pattern that uses syntax it lacks (back-references, a wider lookaround) is
 * refused when compiled: no bound on its time could be given; a polynomial one keeps the native engine
 * (bounded, and common in real schemas). A
 * search may start anywhere: a repeat of a set at an unanchored end is cut to its least count first (`\d+b`
 * is searched as `\db`), and a repeat a search reaches from many starts that no cut removes (`\d\d+b` on a
 * run of digits, n^2; `(?=\d)\d+b`; `\d.\d{1,30001}b`, n x 30 001) is polynomial too.
 *
 * @module
 */
import { lazy } from "../_common/values.ts";
import { DIGIT, WORD } from "./pattern.ts";

/**
 * A set of code points as inclusive ranges, possibly negated; with Unicode property escapes (`\p{L}`), each
 * tested on one code point by the native engine (constant time per character, so still linear).
 */
interface CharSet {
  k: "set";
  ranges: [number, number][];
  neg: boolean;
  props?: RegExp[];
}

/** The pattern's syntax tree. */
type Node =
  | CharSet
  | { k: "cat"; items: Node[] }
  | { k: "alt"; alts: Node[]; byFirst?: boolean }
  | { k: "rep"; node: Node; min: number; max: number; span?: Span }
  | { k: "bol" }
  | { k: "eol" }
  | Look
  | { k: "word"; neg: boolean };

/**
 * A lookahead (`(?=\d)`, `(?!x)`) or lookbehind (`(?<=\d)`, `(?<!x)`) whose body is one character or class:
 * decided by the one character after (before) the position.
 */
interface Look {
  k: "look";
  behind: boolean;
  neg: boolean;
  set: CharSet;
}

/** Where a repeat was written, by index into what the reader reads: its atom from `from` to `atomEnd`, then its quantifier to `to`. */
interface Span {
  from: number;
  atomEnd: number;
  to: number;
}

/** Syntax this matcher does not handle: the caller decides what to do with the pattern. */
class Unsupported extends Error {}

/**
 * Thrown by the matcher's `test` where a string would take it past {@linkcode MATCH_STEPS}: a program of
 * thousands of instructions (`(?:a?b?){2500}x`, `(?:ab|cd){1,500}x`) costs its size a character. Neither "matches"
 * nor "does not match" is then known: the caller refuses the value as unchecked.
 */
export class MatchTooCostly extends Error {
  /** Creates the error for a string of `length` units. */
  constructor(length: number) {
    super(
      `the linear-time matcher would take more than ${MATCH_STEPS.base} + ${MATCH_STEPS.perChar} steps a ` +
        `character on ${length} characters`,
    );
    this.name = "MatchTooCostly";
  }
}

/**
 * The steps the matcher may take on a string of n characters: `base` + `perChar` x n (a step is an instruction a
 * thread runs, 50-100 ns on V8). A pattern with few threads alive a character (`^(?:a|b)*$`: about 5) runs
 * to the end of a string of any length; one that keeps thousands alive gives up after about a tenth of a second.
 */
const MATCH_STEPS = { base: 2 ** 21, perChar: 32 };

const SPACE: [number, number][] = [
  [9, 13],
  [32, 32],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
/** What `.` does not match (without the `s` flag). */
const LINE_ENDS: [number, number][] = [[10, 10], [13, 13], [0x2028, 0x2029]];
const MAX_CP = 0x10ffff;
/** The largest program the matcher builds (counted repeats are expanded); larger risky patterns are refused. */
const MAX_PROGRAM = 20_000;

/** The complement of sorted, non-overlapping `ranges`. */
function complement(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

/** A recursive-descent reader of the pattern language JSON Schema uses (ECMA-262 with the `u` flag). */
class Reader {
  #cps: number[];
  #i = 0;
  /** Property escapes read since the set they belong to was begun (see {@linkcode Reader.#takeProps}). */
  #props: RegExp[] = [];

  /** Whether the pattern is read with the `u` flag: by code point, with `\p{...}` and `\u{...}`. */
  #unicode: boolean;

  /** Whether `.` takes every character (the `s` flag). */
  #dotAll: boolean;

  /** Whether the sets read are the characters they take (no `i` flag): see {@linkcode Reader.#oneOf}. */
  #caseSensitive: boolean;

  /** Whether alternatives the next character picks between are marked so (see {@linkcode choosesByFirst}). */
  #byFirst: boolean;

  /**
   * Prepares to read `source`, by code point (`unicode`) or, as the legacy syntax reads it, by code unit;
   * `.` takes line ends too with `dotAll`; with `caseSensitive` false (the `i` flag, or unknown) no
   * alternatives are read as one set, nor as picked by their first character, as they are not either without
   * `byFirst` (a shape read with a lookahead as a group: `(?!a)[ab]|b` is no `a[ab]|b`).
   */
  constructor(
    source: string,
    { unicode, dotAll = false, caseSensitive = false, byFirst = false }: {
      unicode: boolean;
      dotAll?: boolean;
      caseSensitive?: boolean;
      byFirst?: boolean;
    },
  ) {
    this.#unicode = unicode;
    this.#dotAll = dotAll;
    this.#caseSensitive = caseSensitive;
    this.#byFirst = byFirst && caseSensitive;
    this.#cps = unicode ? Array.from(source, (c) => c.codePointAt(0)!) : codeUnits(source);
  }

  /** How many code points (or, in the legacy syntax, code units) the reader reads. */
  get length(): number {
    return this.#cps.length;
  }

  /** The source from code point (or, in the legacy syntax, code unit) `from` to before `to`. */
  text(from: number, to: number): string {
    let out = "";
    for (let i = from; i < to; i++) {
      out += this.#unicode ? String.fromCodePoint(this.#cps[i]) : String.fromCharCode(this.#cps[i]);
    }
    return out;
  }

  /** The whole pattern. */
  pattern(): Node {
    const node = this.#alternation();
    if (this.#i < this.#cps.length) throw new Unsupported("unbalanced )");
    return node;
  }

  #peek(): number | undefined {
    return this.#cps[this.#i];
  }

  #alternation(): Node {
    const alts = [this.#sequence()];
    while (this.#peek() === 0x7c) { // |
      this.#i++;
      alts.push(this.#sequence());
    }
    if (alts.length === 1) return alts[0];
    // (read without `i` only: with it, `a|Ab` begin alike)
    return this.#oneOf(alts) ?? { k: "alt", alts, byFirst: this.#byFirst && choosesByFirst(alts) };
  }

  /**
   * Alternatives of one set each that share no character (`(?:a|b)`, `(?:\d|[a-f])`) as the one set they
   * make, or null: a backtracking engine tries each at most once a character, as it reads a class, so a
   * repeat of them is no repeat of alternatives (`(?:a|b){2,5000}c` was refused as too large to copy). Not
   * with the `i` flag, which makes `a` and `A` one; nor with a property escape, whose characters are unknown.
   */
  #oneOf(alts: Node[]): CharSet | null {
    if (!this.#caseSensitive) return null;
    const sets: [number, number][][] = [];
    for (const alt of alts) {
      const item = alt.k === "cat" && alt.items.length === 1 ? alt.items[0] : alt;
      const chars = item.k === "set" ? charsOf(item) : null;
      if (chars === null || sets.some((seen) => meet(seen, chars))) return null;
      sets.push(chars);
    }
    return { k: "set", ranges: sets.flat(), neg: false };
  }

  /**
   * The items the pattern begins with, up to its first `|` or the first this reader lacks the syntax of
   * (`\d+` of `\d+(?=b)`).
   */
  leading(): Node[] {
    const items: Node[] = [];
    try {
      for (let c = this.#peek(); c !== undefined && c !== 0x7c && c !== 0x29; c = this.#peek()) {
        items.push(this.#item());
      }
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
    }
    return items;
  }

  #sequence(): Node {
    const items: Node[] = [];
    for (let c = this.#peek(); c !== undefined && c !== 0x7c && c !== 0x29; c = this.#peek()) {
      items.push(this.#item());
    }
    return { k: "cat", items };
  }

  /** An atom and its quantifier; a repeat knows where it was written. */
  #item(): Node {
    const from = this.#i;
    const atom = this.#atom();
    const atomEnd = this.#i;
    const item = this.#quantified(atom);
    if (item.k === "rep") item.span = { from, atomEnd, to: this.#i };
    return item;
  }

  #quantified(atom: Node): Node {
    const c = this.#peek();
    let min: number, max: number;
    if (c === 0x2a) [min, max] = [0, Infinity];
    else if (c === 0x2b) [min, max] = [1, Infinity];
    else if (c === 0x3f) [min, max] = [0, 1];
    else if (c === 0x7b) {
      // read whole, however many digits: the legacy syntax reads `x{1,99999999999999999999999}?` as a count
      // too, and a count misread as text and cut as `}?` would leave `x{1,9999...9`, literal, behind
      const count = this.#count();
      if (count === null && !this.#unicode) return atom; // the legacy syntax reads a "{" that counts nothing as itself
      if (count === null) throw new Unsupported("{");
      [min, max] = count;
    } else return atom;
    this.#i++;
    if (this.#peek() === 0x3f) this.#i++; // lazy: the same yes or no for a test
    if (atom.k === "bol" || atom.k === "eol" || atom.k === "look" || atom.k === "word") {
      throw new Unsupported("quantified assertion"); // (the legacy syntax takes `(?=a)*`)
    }
    return { k: "rep", node: atom, min, max };
  }

  /** The least and most of a count `{n}`, `{n,}` or `{n,m}` at `{`, leaving the reader on its `}`; null for none. */
  #count(): [number, number] | null {
    const digits = (from: number): number => {
      let at = from;
      while (this.#cps[at] !== undefined && this.#cps[at] >= 0x30 && this.#cps[at] <= 0x39) at++;
      return at;
    };
    const minEnd = digits(this.#i + 1);
    if (minEnd === this.#i + 1) return null;
    const min = Number(this.text(this.#i + 1, minEnd));
    let max = min;
    let end = minEnd;
    if (this.#cps[end] === 0x2c) { // ,
      end = digits(end + 1);
      max = end === minEnd + 1 ? Infinity : Number(this.text(minEnd + 1, end));
    }
    if (this.#cps[end] !== 0x7d) return null;
    this.#i = end;
    return [min, max];
  }

  #atom(): Node {
    const c = this.#cps[this.#i++];
    switch (c) {
      case 0x5e:
        return { k: "bol" };
      case 0x24:
        return { k: "eol" };
      case 0x2e:
        return { k: "set", ranges: this.#dotAll ? [] : LINE_ENDS, neg: true };
      case 0x28: { // (
        const captures = this.#peek() !== 0x3f || this.#cps[this.#i + 1] !== 0x3a;
        if (this.#peek() === 0x3f) { // (?
          const next = this.#cps[this.#i + 1];
          if (next === 0x3a) this.#i += 2; // (?:
          else if (next === 0x3c && this.#cps[this.#i + 2] !== 0x3d && this.#cps[this.#i + 2] !== 0x21) {
            const close = this.#cps.indexOf(0x3e, this.#i);
            if (close < 0) throw new Unsupported("group name");
            this.#i = close + 1; // a named group: its name does not change what matches
          } else return this.#look();
        }
        const inner = this.#alternation();
        if (this.#cps[this.#i++] !== 0x29) throw new Unsupported("unclosed (");
        // a group of one set is that set, as its alternatives of one set each are (see Reader.#oneOf): a
        // count of it runs on a counter and is cut as one (`(?:\d){1,30001}b` stayed native, 9-12 s on
        // 100 000 digits, where `\d{1,30001}b` is cut to `\db`). Not a group that captures: a cut would drop
        // or move what a back-reference the reader lacks reads (`(a)*\1b` cut to `\1b` is, without `u`, an
        // octal escape: "b" was refused)
        const one = inner.k === "cat" && inner.items.length === 1 ? inner.items[0] : inner;
        if (one.k !== "set") return inner;
        return captures ? { k: "cat", items: [one] } : one;
      }
      case 0x5b:
        return this.#class();
      case 0x5c: {
        const e = this.#peek();
        if (e === 0x62 || e === 0x42) { // \b, \B
          this.#i++;
          return { k: "word", neg: e === 0x42 };
        }
        const ranges = this.#escape(false);
        return { k: "set", ranges, neg: false, ...this.#takeProps() };
      }
      case 0x7b:
      case 0x7d:
      case 0x5d:
        // the legacy syntax reads a "{", "}" or "]" that opens or closes nothing as itself (`^(\[\d+])$`: the
        // native engine compiled the pattern, so here they can be nothing else)
        if (!this.#unicode) return { k: "set", ranges: [[c, c]], neg: false };
        throw new Unsupported("unexpected character");
      case 0x2a:
      case 0x2b:
      case 0x3f:
      case undefined:
        throw new Unsupported("unexpected character");
      default:
        return { k: "set", ranges: [[c, c]], neg: false };
    }
  }

  /**
   * A lookaround, from after its `(`: one whose body is a single character or class; any other (two
   * characters, a repeat, a group, a `\b`) is syntax the matcher lacks.
   */
  #look(): Look {
    const behind = this.#cps[this.#i + 1] === 0x3c;
    this.#i += behind ? 2 : 1;
    const kind = this.#cps[this.#i++];
    if (kind !== 0x3d && kind !== 0x21) throw new Unsupported("group modifier"); // (?i: and the like
    const neg = kind === 0x21;
    const body = this.#alternation();
    if (this.#cps[this.#i++] !== 0x29) throw new Unsupported("unclosed (");
    const one = body.k === "cat" && body.items.length === 1 ? body.items[0] : body;
    if (one.k !== "set") throw new Unsupported("lookaround of more than one character");
    return { k: "look", behind, neg, set: one };
  }

  /** The code points an escape (after its backslash) stands for; `inClass` reads `\b` as backspace. */
  #escape(inClass: boolean): [number, number][] {
    const c = this.#cps[this.#i++];
    switch (c) {
      case 0x64: // d
        return DIGIT;
      case 0x44:
        return complement(DIGIT);
      case 0x77: // w
        return WORD;
      case 0x57:
        return complement(WORD);
      case 0x73: // s
        return SPACE;
      case 0x53:
        return complement(SPACE);
      case 0x6e:
        return [[10, 10]];
      case 0x72:
        return [[13, 13]];
      case 0x74:
        return [[9, 9]];
      case 0x76:
        return [[11, 11]];
      case 0x66:
        return [[12, 12]];
      case 0x30:
        if (this.#peek() !== undefined && this.#peek()! >= 0x30 && this.#peek()! <= 0x39) {
          throw new Unsupported("octal");
        }
        return [[0, 0]];
      case 0x70: // p{...}, P{...}: the native engine tests one code point; no ranges of its own
      case 0x50: {
        if (!this.#unicode) throw new Unsupported("escape"); // a literal p in the legacy syntax
        const close = this.#cps.indexOf(0x7d, this.#i);
        if (this.#peek() !== 0x7b || close < 0) throw new Unsupported("escape");
        const source = `^\\${String.fromCodePoint(c)}${
          String.fromCodePoint(...this.#cps.slice(this.#i, close + 1))
        }$`;
        try {
          this.#props.push(new RegExp(source, "u"));
        } catch {
          throw new Unsupported("escape");
        }
        this.#i = close + 1;
        return [];
      }
      case 0x62: // b
        if (inClass) return [[8, 8]];
        throw new Unsupported("word boundary");
      case 0x78: { // xHH
        const hex = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 2));
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new Unsupported("\\x");
        this.#i += 2;
        const n = parseInt(hex, 16);
        return [[n, n]];
      }
      case 0x75: { // uHHHH or u{H...}
        const rest = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 10));
        const m = /^(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})/.exec(rest);
        if (m === null || (m[2] !== undefined && !this.#unicode)) throw new Unsupported("\\u");
        this.#i += m[0].length;
        let n = parseInt(m[1] ?? m[2], 16);
        // a surrogate pair written as two escapes is one code point (two code units in the legacy syntax)
        if (this.#unicode && m[1] !== undefined && n >= 0xd800 && n <= 0xdbff) {
          const low = /^\\u(d[c-f][0-9a-f]{2})/i.exec(
            String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 6)),
          );
          if (low !== null) {
            n = 0x10000 + ((n - 0xd800) << 10) + (parseInt(low[1], 16) - 0xdc00);
            this.#i += 6;
          }
        }
        return [[n, n]];
      }
      case undefined:
        throw new Unsupported("trailing \\");
      default:
        // letters and digits escape into features this matcher lacks (\p, \k, \1, \c); the rest is literal
        if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) {
          throw new Unsupported("escape");
        }
        return [[c, c]];
    }
  }

  /** The property escapes read for the set being built, as its `props` (none: nothing). */
  #takeProps(): { props?: RegExp[] } {
    if (this.#props.length === 0) return {};
    const props = this.#props;
    this.#props = [];
    return { props };
  }

  /** A class, from after its `[`. */
  #class(): CharSet {
    const neg = this.#peek() === 0x5e;
    if (neg) this.#i++;
    const ranges: [number, number][] = [];
    while (true) {
      const c = this.#cps[this.#i++];
      if (c === undefined) throw new Unsupported("unclosed [");
      if (c === 0x5d) break;
      let lo: [number, number][];
      if (c === 0x5c) lo = this.#escape(true);
      else lo = [[c, c]]; // "[" too: a class nests only with the v flag, which schema patterns never get
      if (this.#peek() === 0x2d && this.#cps[this.#i + 1] !== 0x5d && this.#cps[this.#i + 1] !== undefined) {
        this.#i++;
        const d = this.#cps[this.#i++];
        const hi = d === 0x5c ? this.#escape(true) : [[d, d] as [number, number]];
        if (lo.length !== 1 || hi.length !== 1 || lo[0][0] !== lo[0][1] || hi[0][0] !== hi[0][1]) {
          throw new Unsupported("class range of a class");
        }
        ranges.push([lo[0][0], hi[0][0]]);
      } else ranges.push(...lo);
    }
    return { k: "set", ranges, neg, ...this.#takeProps() };
  }
}

/**
 * True when `node` repeats something that itself repeats or has alternatives, or whose optional items can take
 * a character another item of it could (two rounds of it read as one): backtracking can explode
 * (`(?:a?a?)+` cuts a run of "a" into ones and twos every way there is; `(?:[a-z]-?)+` cuts one way).
 */
function exponential(node: Node, inRepeat = false): boolean {
  switch (node.k) {
    case "rep":
      if (fixed(node)) return false;
      if (
        !inRepeat && node.max > 1 && (splitsOneWay(node.node) || node.node.k === "alt" && node.node.byFirst)
      ) {
        return false;
      }
      if (inRepeat && node.max > 1) return true;
      if (!inRepeat && node.max > 1 && polynomial({ k: "cat", items: [node.node, node.node] }, varies)) {
        return true;
      }
      return exponential(node.node, inRepeat || node.max > 1);
    case "cat":
      return node.items.some((n) => exponential(n, inRepeat));
    case "alt":
      return inRepeat || node.alts.some((n) => exponential(n, inRepeat));
    default:
      return false;
  }
}

/**
 * True when a repeat of `body` reads a string one way only, and backtracking on it stays linear: `body` is
 * characters and repeats of characters, no alternatives or groups, and each of its items that vary is followed
 * (in the next round, for the last) by an item that must take a character it cannot: where it stops is then
 * fixed (`(?:-[a-z0-9]+)*` of a slug, `(?:[0-9a-f]{3})` of a colour; not `(?:[a-z]+-?)*`, whose rounds a run
 * of letters cuts every way, nor `(?:[ab]+ab)*` or `(?:a+[ab]b+c)*`, where the item after takes its
 * characters: their runs shift between items and rounds, as many ways as there are rounds).
 */
function splitsOneWay(body: Node): boolean {
  const items = body.k === "cat" ? body.items : [body];
  const plain = items.every((n) => n.k === "set" || (n.k === "rep" && n.node.k === "set"));
  const stops = items.every((n, i) => {
    const next = items[(i + 1) % items.length];
    return n.k !== "rep" || !varies(n) || (!nullable(next) && !meet(charsOf(n), charsOf(next)));
  });
  return plain && stops && !polynomial(body, varies) &&
    !polynomial({ k: "cat", items: [body, body] }, varies);
}

/**
 * The most alternatives {@linkcode choosesByFirst} takes: a round tries each before the one it takes, a native
 * step each, where a set is one step (`^(?:...)*$` of 4 000 alternatives took V8 0.8 s and Bun 1.5 s on 20 000
 * characters; 8 of two characters counted 99 times cost Bun about what 2 do, 32 four times that).
 */
const BY_FIRST_ALTS = 8;

/**
 * True when `alts`, at most {@linkcode BY_FIRST_ALTS}, are sets read one way each ({@linkcode setSequence})
 * whose first sets share no character (`a|bb`, `-\d|_[a-z]{2}`): the next character picks the one alternative a round can take, so a repeat of
 * them, as of one set, reads a string one way (`(?:a|bb){99}x`, refused as unchecked by the matcher on 99 001
 * characters, takes about 300 native steps a start).
 */
function choosesByFirst(alts: Node[]): boolean {
  if (alts.length > BY_FIRST_ALTS) return false;
  const firsts: ([number, number][] | null)[] = [];
  for (const alt of alts) {
    const sets = setSequence(alt);
    if (sets === null) return false;
    const first = charsOf(sets[0]);
    if (firsts.some((f) => meet(f, first))) return false;
    firsts.push(first);
  }
  return true;
}

/**
 * True when `node` reads one way only: sets, assertions and counts of one way each round of which takes a
 * character (`(?:[a-z]{2}){150}`, a run of 300 letters), no alternatives or counts that vary. Repeated, it is
 * a longer such run, no choice made.
 */
function fixed(node: Node): boolean {
  switch (node.k) {
    case "rep":
      // (each round takes a character: a count of an empty part, `(?:){99999999999}`, is that many steps)
      return node.min === node.max && fixed(node.node) && (node.max <= 1 || !nullable(node.node));
    case "cat":
      return node.items.every(fixed);
    case "alt":
      return false;
    default:
      return true;
  }
}

/** True when `node` can match the empty string. */
function nullable(node: Node): boolean {
  switch (node.k) {
    case "set":
      return false;
    case "rep":
      return node.min === 0 || nullable(node.node);
    case "cat":
      return node.items.every(nullable);
    case "alt":
      return node.alts.some(nullable);
    default:
      return true;
  }
}

/** The code points `node` can ever consume, as ranges; null when a property escape makes that unknown. */
function charsOf(node: Node): [number, number][] | null {
  switch (node.k) {
    case "set":
      if (node.props !== undefined) return null;
      return node.neg ? complement(node.ranges) : node.ranges;
    case "rep":
      return charsOf(node.node);
    case "cat":
    case "alt": {
      const out: [number, number][] = [];
      for (const n of node.k === "cat" ? node.items : node.alts) {
        const r = charsOf(n);
        if (r === null) return null;
        out.push(...r);
      }
      return out;
    }
    default:
      return [];
  }
}

/** The code points two sets from {@linkcode charsOf} share (an unknown set: the other one). */
function shared(a: [number, number][] | null, b: [number, number][] | null): [number, number][] | null {
  if (a === null || b === null) return a ?? b;
  const out: [number, number][] = [];
  for (const [lo, hi] of a) {
    for (const [l, h] of b) if (lo <= h && l <= hi) out.push([Math.max(lo, l), Math.min(hi, h)]);
  }
  return out;
}

/** Whether two sets from {@linkcode charsOf} share a code point (an unknown set shares with any). */
function meet(a: [number, number][] | null, b: [number, number][] | null): boolean {
  const both = shared(a, b);
  return both === null || both.length > 0;
}

/** Which repeats split a run more than one way: the unbounded ones (`*`, `+`, `{n,}`), or all that vary. */
type Opens = (rep: { min: number; max: number; node?: Node }) => boolean;
const unbounded: Opens = (rep) => rep.max === Infinity;
const varies: Opens = (rep) => rep.min < rep.max;

/**
 * A repeat open at an edge (see {@linkcode edge}): the characters it takes, and those of each item that must
 * take one between it and that edge.
 */
type Open = { chars: [number, number][] | null; between: ([number, number][] | null)[] };

/**
 * The repeats that `opens` picks (the unbounded ones) at one edge of `node`: those with only nullable items,
 * or items that take some of their characters too, between them and that edge. `(?:.*a)` ends in `.*` for a
 * run of "a", as `.*a` does; `(?:[ab]*ab)` in `[ab]*` for a run of "ab".
 */
function edge(node: Node, side: "head" | "tail", opens: Opens): Open[] {
  switch (node.k) {
    case "rep":
      return opens(node) ? [{ chars: charsOf(node.node), between: [] }] : edge(node.node, side, opens);
    case "alt":
      return node.alts.flatMap((n) => edge(n, side, opens));
    case "cat": {
      let open: Open[] = [];
      for (const n of side === "tail" ? node.items : [...node.items].reverse()) {
        open = [...through(open, n), ...edge(n, side, opens)];
      }
      return open;
    }
    default:
      return [];
  }
}

/**
 * The repeats of `open` (as {@linkcode edge} gives them) still open past `node`: past an item that must take
 * a character, those that can take one it takes. Not only the characters both take: `[ab]*` takes the "ab"
 * after it, though `a` and `b` share none.
 */
function through(open: Open[], node: Node): Open[] {
  if (nullable(node)) return open;
  const chars = charsOf(node);
  return open.filter((o) => meet(o.chars, chars)).map((o) => ({ ...o, between: [...o.between, chars] }));
}

/**
 * Whether a repeat open at a tail and one open at the next head can take each other's characters, and those of
 * the items between them: the run between them can then be cut at many places (`[ab]*ab[ab]*` on "abab...").
 */
function overlap(tail: Open, head: Open): boolean {
  return meet(tail.chars, head.chars) && tail.between.every((b) => meet(b, head.chars)) &&
    head.between.every((b) => meet(b, tail.chars));
}

/**
 * True when a concatenation in `node` holds two unbounded repeats that can take the same character with only
 * nullable items, or items that can take that character too, between them (`a*a*`, `\w+\d+`, `.*.*`,
 * `.*a.*`): a backtracking engine tries every split of a run between them, O(n^k) for k such repeats.
 * `[a-z]+-[0-9]+` splits one way only. With `opens` of {@linkcode varies}, the same for optional items.
 */
function polynomial(node: Node, opens: Opens = unbounded): boolean {
  switch (node.k) {
    case "rep":
      return polynomial(node.node, opens);
    case "alt":
      return node.alts.some((n) => polynomial(n, opens));
    case "cat": {
      let open: Open[] = [];
      for (const n of node.items) {
        if (polynomial(n, opens)) return true;
        if (edge(n, "head", opens).some((h) => open.some((o) => overlap(o, h)))) return true;
        open = [...through(open, n), ...edge(n, "tail", opens)];
      }
      return false;
    }
    default:
      return false;
  }
}

/**
 * The ways a backtracking engine can take a path through `node` (not {@linkcode exponential}) on a string of
 * `n` characters, past its unbounded repeats (see {@linkcode unboundedRepeats}): the product of the choices
 * of its counted repeats (at most `n + 1` lengths each) and the sum over each set of alternatives. Seven
 * `a{0,20}` side by side, or thirty `(?:a|a)`, make billions; two unbounded repeats need not be there.
 */
function choices(node: Node, n: number, once?: Node): number {
  switch (node.k) {
    case "rep":
      if (node.max === Infinity || node === once) return 1;
      // a repeat of more than one holds no choice the next character leaves open in a tree not exponential
      if (node.max > 1) return Math.min(node.max - node.min + 1, n + 1);
      return (node.min === 0 ? 1 : 0) + choices(node.node, n, once);
    case "cat":
      return node.items.reduce((product, item) => product * choices(item, n, once), 1);
    case "alt":
      return node.alts.reduce((sum, alt) => sum + choices(alt, n, once), 0);
    default:
      return 1;
  }
}

/** The counted repeat of a range (`{1,255}`) that {@linkcode choices} multiplies by the most, if any. */
function widest(node: Node): Node | undefined {
  switch (node.k) {
    case "rep":
      if (node.max === Infinity) return undefined;
      return node.max > 1 ? node : widest(node.node);
    case "cat":
    case "alt": {
      const range = (r: Node | undefined) => r?.k === "rep" ? r.max - r.min : -1;
      // (a cut can leave a sequence empty: `.*` is nothing to find)
      return (node.k === "cat" ? node.items : node.alts).map(widest).reduce<Node | undefined>(
        (a, b) => range(b) > range(a) ? b : a,
        undefined,
      );
    }
    default:
      return undefined;
  }
}

/**
 * The {@linkcode choices} that multiply a backtracking engine's work: all of them where two items that vary
 * can take the same character, else all but the widest counted repeat's. With none such side by side
 * (`^[^@]{1,64}@[^@]{1,255}$`, `^[A-Za-z0-9+/]{0,2000000}={0,2}$`), the engine gives that repeat's
 * characters back one at a time, each tried once, as it does a lone `*`'s, which counts no choice either.
 */
function costlyChoices(tree: Node): number {
  return choices(tree, Infinity, polynomial(tree, varies) ? undefined : widest(tree));
}

/**
 * The most paths through a pattern's counted repeats and alternatives that stays native whatever the string:
 * each is tried at each start, so a native search costs at most about this many times the string's length.
 */
const MAX_CHOICES = 2 ** 12;

/**
 * True when backtracking on `node` can take more than linear time: {@linkcode exponential}, polynomial, or
 * with many {@linkcode costlyChoices}.
 */
function risky(node: Node): boolean {
  return exponential(node) || polynomial(node) || costlyChoices(node) > MAX_CHOICES;
}

/** One instruction of the matcher's program. */
type Op =
  | { op: "set"; set: CharSet }
  | { op: "split"; x: number; y: number }
  | { op: "jmp"; x: number }
  | { op: "bol" }
  | { op: "eol" }
  | { op: "look"; look: Look }
  | { op: "word"; neg: boolean }
  | CountOp
  | { op: "match" };

/**
 * A counted repeat of one set (`\d{1,30001}`) or of a group that reads a few sets one way (`(?:ab){1000}`,
 * `(?:[a-f]{2}){150}`), run with a count instead of a copy of the group per count: the program stays small.
 * `sets` are the group's sets in order, `min` and `max` its counts. A thread that entered after `r`
 * characters reads at `t` the set `(t - r) mod sets.length`: threads are kept by that phase, each phase the
 * positions its threads entered at in order, oldest first (see {@linkcode run}).
 */
interface CountOp {
  op: "count";
  sets: CharSet[];
  min: number;
  max: number;
}

/** The most sets a group run as a {@linkcode CountOp} reads a round: each costs a test a character. */
const COUNTED_WIDTH = 64;

/**
 * The sets `node` reads one after another, one way only (`ab`, `[a-z]{2}`, `(?:\d-){2}`), if at most `limit`;
 * else null (alternatives, a count that varies, an assertion, nothing at all).
 */
function setSequence(node: Node, limit = COUNTED_WIDTH): CharSet[] | null {
  switch (node.k) {
    case "set":
      return [node];
    case "cat": {
      const out: CharSet[] = [];
      for (const item of node.items) {
        const sets = setSequence(item, limit - out.length);
        if (sets === null) return null;
        out.push(...sets);
      }
      return out.length > 0 ? out : null;
    }
    case "rep": {
      if (node.min !== node.max || node.min < 1) return null;
      const sets = setSequence(node.node, limit);
      if (sets === null || sets.length * node.min > limit) return null;
      return Array.from({ length: node.min }, () => sets).flat();
    }
    default:
      return null;
  }
}

/**
 * A count past which a repeat of one set (or of a {@linkcode setSequence}) runs as a {@linkcode CountOp} rather than as copies: a copy per
 * count costs an instruction each, and a search from every start walks them all.
 */
const COUNTED = 64;

/**
 * Appends the instructions for `node` to `prog`; a wide repeat of a {@linkcode setSequence} as a {@linkcode CountOp} unless
 * `counted` is false (each count a copy).
 */
function emit(node: Node, prog: Op[], counted: boolean): void {
  if (prog.length > MAX_PROGRAM) throw new Unsupported("too large");
  switch (node.k) {
    case "set":
      prog.push({ op: "set", set: node });
      return;
    case "bol":
    case "eol":
      prog.push({ op: node.k });
      return;
    case "look":
      prog.push({ op: "look", look: node });
      return;
    case "word":
      prog.push({ op: "word", neg: node.neg });
      return;
    case "cat":
      for (const n of node.items) emit(n, prog, counted);
      return;
    case "alt": {
      const jumps: { op: "jmp"; x: number }[] = [];
      for (let i = 0; i < node.alts.length; i++) {
        if (i < node.alts.length - 1) {
          const split: Op = { op: "split", x: prog.length + 1, y: 0 };
          prog.push(split);
          emit(node.alts[i], prog, counted);
          const jmp = { op: "jmp" as const, x: 0 };
          prog.push(jmp);
          jumps.push(jmp);
          split.y = prog.length;
        } else emit(node.alts[i], prog, counted);
      }
      for (const j of jumps) j.x = prog.length;
      return;
    }
    case "rep": {
      const rep = joined(node);
      // (counted by the characters a round spans: `(?:\w{64}){4}` is 256 copies)
      const sets = counted && rep.max > 1 ? setSequence(rep.node) : null;
      const most = rep.max === Infinity ? rep.min : rep.max;
      if (sets !== null && most * sets.length > COUNTED) {
        prog.push({ op: "count", sets, min: rep.min, max: rep.max });
        return;
      }
      // Each copy adds at least one instruction or none at all: a count past the program's limit is refused
      // before copying (an empty part copied a hundred million times would never grow the program).
      if (rep.min > MAX_PROGRAM || (rep.max !== Infinity && rep.max > MAX_PROGRAM)) {
        throw new Unsupported("too large");
      }
      for (let i = 0; i < rep.min; i++) emit(rep.node, prog, counted);
      if (rep.max === Infinity) {
        const split: Op = { op: "split", x: prog.length + 1, y: 0 };
        const start = prog.length;
        prog.push(split);
        emit(rep.node, prog, counted);
        prog.push({ op: "jmp", x: start });
        split.y = prog.length;
        return;
      }
      const splits: { op: "split"; x: number; y: number }[] = [];
      for (let i = rep.min; i < rep.max; i++) {
        const split = { op: "split" as const, x: prog.length + 1, y: 0 };
        prog.push(split);
        splits.push(split);
        emit(rep.node, prog, counted);
      }
      for (const s of splits) s.y = prog.length;
      return;
    }
  }
}

/**
 * `rep` with a repeat it repeats joined into one count where that matches the same strings: `(?:(?:ab){1,999}){1,999}`
 * is `(?:ab){1,998001}`, as k rounds of 1 to 999 take any count from k to 999k and those ranges meet. Copied,
 * the inner count's threads were alive in each of 999 copies: `^((?:ab){1,999}){1,999}$` ran out of steps on
 * 100 000 characters. (Not where the counts leave gaps: `(?:(?:ab){3}){1,2}` takes 3 or 6.)
 */
function joined(rep: Node & { k: "rep" }): Node & { k: "rep" } {
  let inner = rep.node;
  while (inner.k === "cat" && inner.items.length === 1) inner = inner.items[0];
  if (inner.k !== "rep") return rep;
  const { node, min: a, max: b } = joined(inner);
  const { min: c, max: d } = rep;
  // k rounds take k*a to k*b; the ranges for k and k + 1 meet where (k + 1)a <= kb + 1, least so at k = c
  const meets = c === d || (c === 0 ? a <= 1 : b === Infinity || c * (b - a) >= a - 1);
  if (!meets) return rep;
  const times = (x: number, y: number) => x === 0 || y === 0 ? 0 : x * y;
  return { k: "rep", node, min: times(a, c), max: times(b, d) };
}

/** True when code point `c` is in `set`. */
function inSet(set: CharSet, c: number): boolean {
  let hit = false;
  for (const [lo, hi] of set.ranges) {
    if (c >= lo && c <= hi) {
      hit = true;
      break;
    }
  }
  if (!hit && set.props !== undefined) hit = set.props.some((re) => re.test(String.fromCodePoint(c)));
  return hit !== set.neg;
}

/** The UTF-16 code units of `s`: what a pattern without the `u` flag reads, one per `.` or class. */
function codeUnits(s: string): number[] {
  const units: number[] = [];
  for (let i = 0; i < s.length; i++) units.push(s.charCodeAt(i));
  return units;
}

/**
 * Whether this engine, with the `u` flag, tries a match between the halves of a pair: V8 does (`\B` is found
 * in "a\u{1F600}b"), JavaScriptCore, as the standard says, does not. Asked on first use: importing runs no
 * expression.
 */
const searchesInPairs = lazy(() => /\B/u.test("a\u{1F600}b"));

/**
 * Whether the native engine may answer "no" where it fails rather than throw: JavaScriptCore's does (false on
 * 2 M characters of `^(?:a|b)*$`, which match), V8's throws ("Maximum call stack size exceeded"). Told apart
 * by the one other difference between them this module reads (see {@linkcode searchesInPairs}).
 */
export const failsQuietly: () => boolean = lazy(() => !searchesInPairs());

/** The characters `^` and `$` meet before and after with the `m` flag. */
function isLineEnd(c: number): boolean {
  return c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
}

/** Whether code unit `c` is one `\b` reads as part of a word (`\w` without the `i` flag). */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122);
}

/** The counts' entry positions of a program without counts: never read. */
const NO_COUNTS = new Int32Array(0);

/** Whether `prog` has a {@linkcode CountOp}, whose threads {@linkcode run} keeps books for. */
function hasCounts(prog: Op[]): boolean {
  return prog.some((op) => op.op === "count");
}

/**
 * Whether `prog` matches somewhere in `s`, read by code point (`unicode`) or by code unit as a pattern without
 * the `u` flag reads it (`.` takes half of an astral character there), with `^` and `$` at line ends too
 * (`multiline`), in O(length x program) steps. An assertion is decided by the characters beside the
 * position; a {@linkcode CountOp} keeps the character counts its threads entered at, each entered and
 * dropped once, so it costs no more than a set. Past {@linkcode MATCH_STEPS} it throws
 * {@linkcode MatchTooCostly}; `paced`, as soon as its steps pass those of the characters read so far.
 */
function run(
  prog: Op[],
  s: string,
  { unicode, multiline, counts, paced = false }: {
    unicode: boolean;
    multiline: boolean;
    counts: boolean;
    paced?: boolean;
  },
): boolean {
  // read in place, by index into `s`: a list of its code points took 27 bytes a character (276 MB for 10 MB)
  const n = s.length;
  const mark = new Int32Array(prog.length).fill(-1);
  // (a count's bookkeeping only where `prog` has counts (see {@linkcode hasCounts}): built and walked for
  // each string, it cost a program without them, the hostname pattern's, 7% on short strings)
  const entered = counts ? new Int32Array(prog.length).fill(-1) : NO_COUNTS;
  // per count and phase: the number of characters read when each of its threads entered, oldest first from
  // `heads`
  const entries: number[][][] = counts
    ? prog.map((op) => op.op === "count" ? op.sets.map(() => []) : [])
    : [];
  const heads: number[][] = counts ? prog.map((op) => op.op === "count" ? op.sets.map(() => 0) : []) : [];
  let current: number[] = [];
  let next: number[] = [];
  const stack: number[] = [];
  let steps = 0;
  const maxSteps = MATCH_STEPS.base + MATCH_STEPS.perChar * n;
  /** The character at `i` (-1 at the end). */
  const at = (i: number) => i >= n ? -1 : unicode ? s.codePointAt(i)! : s.charCodeAt(i);
  /** The character before `i` (-1 at the start), a pair read whole with `unicode`, as a lookbehind reads it. */
  const before = (i: number) => {
    if (i <= 0) return -1;
    const low = s.charCodeAt(i - 1);
    const high = i >= 2 ? s.charCodeAt(i - 2) : 0;
    return unicode && low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff
      ? 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
      : low;
  };
  /** Whether the assertion `op` holds at `i` (`inPair`: between the halves of a pair, read as neither). */
  const holds = (op: Op, i: number, inPair = false): boolean => {
    switch (op.op) {
      case "bol":
        return i === 0 || (multiline && isLineEnd(s.charCodeAt(i - 1)));
      case "eol":
        return i === n || (multiline && isLineEnd(s.charCodeAt(i)));
      case "word":
        return ((i > 0 && isWordChar(s.charCodeAt(i - 1))) !== (i < n && isWordChar(s.charCodeAt(i)))) !==
          op.neg;
      case "look": {
        const c = inPair ? -1 : op.look.behind ? before(i) : at(i);
        return (c >= 0 && inSet(op.look.set, c)) !== op.look.neg;
      }
      default:
        return false;
    }
  };
  // adds the thread at `pc` and those its jumps reach at position `i`, after `read` characters; true when one
  // reaches a match
  const add = (list: number[], pc0: number, i: number, read: number): boolean => {
    stack.push(pc0);
    while (stack.length > 0) {
      const pc = stack.pop()!;
      steps++;
      const op = prog[pc];
      if (op.op === "count") {
        // a thread enters a count that is listed already: its count starts here (an older one, with no most,
        // takes all a younger one would)
        const queue = entries[pc][read % op.sets.length];
        if (entered[pc] !== i) {
          entered[pc] = i;
          if (op.max !== Infinity || queue.length === 0) queue.push(read);
          if (op.min === 0) stack.push(pc + 1);
        }
        if (mark[pc] !== i) {
          mark[pc] = i;
          list.push(pc);
        }
        continue;
      }
      if (mark[pc] === i) continue;
      mark[pc] = i;
      switch (op.op) {
        case "match":
          stack.length = 0;
          return true;
        case "jmp":
          stack.push(op.x);
          break;
        case "split":
          stack.push(op.y, op.x);
          break;
        case "bol":
        case "eol":
        case "word":
        case "look":
          if (holds(op, i)) stack.push(pc + 1);
          break;
        default:
          list.push(pc);
      }
    }
    return false;
  };
  // (made on the first pair, on V8: most strings have none)
  let inPair: Int32Array | null = null;
  /**
   * Whether a match that takes no character starts at `i`, between the halves of a pair: V8 (not
   * JavaScriptCore) searches from there too, where no character is read whole (`\B`, `(?!x)` hold).
   */
  const emptyInPair = (i: number): boolean => {
    inPair ??= new Int32Array(prog.length).fill(-1);
    stack.push(0);
    while (stack.length > 0) {
      const pc = stack.pop()!;
      if (inPair[pc] === i) continue;
      inPair[pc] = i;
      const op = prog[pc];
      if (op.op === "match") {
        stack.length = 0;
        return true;
      }
      if (op.op === "jmp") stack.push(op.x);
      else if (op.op === "split") stack.push(op.y, op.x);
      else if (op.op === "count" ? op.min === 0 : op.op !== "set" && holds(op, i, true)) stack.push(pc + 1);
    }
    return false;
  };
  // (a program that starts with `^` and no `m` flag starts no thread past 0: once none is alive, no match)
  const startsOnce = !multiline && prog[0].op === "bol";
  for (let i = 0, read = 0; i <= n; read++) {
    // a match may start anywhere, as RegExp#test searches
    if (add(current, 0, i, read)) return true;
    if (i === n || (startsOnce && current.length === 0)) break;
    steps += current.length;
    if (steps > maxSteps || (paced && steps > MATCH_STEPS.base + MATCH_STEPS.perChar * i)) {
      throw new MatchTooCostly(n);
    }
    const c = at(i);
    const after = i + (c > 0xffff ? 2 : 1);
    if (c > 0xffff && searchesInPairs() && emptyInPair(i + 1)) return true;
    next.length = 0;
    // each count first takes the character (or ends), before a thread this step enters it anew
    if (counts) {
      for (const pc of current) {
        const op = prog[pc];
        if (op.op !== "count") continue;
        const w = op.sets.length;
        const most = op.max * w;
        // (each phase is read twice a character, here and below, about a step's cost for two: 30 counts
        // of 64 sets kept alive ran 14 times past the budget uncounted, 2 s on 20 000 characters)
        steps += w >> 1;
        for (let phase = 0; phase < w; phase++) {
          const queue = entries[pc][phase];
          let head = heads[pc][phase];
          if (head === queue.length) continue;
          // (a thread that entered after r characters, r = phase mod w, reads its set (read - r) mod w)
          if (inSet(op.sets[(read - phase + w) % w], c)) {
            while (head < queue.length && read + 1 - queue[head] > most) head++;
          } else head = queue.length;
          if (head === queue.length || (head > 1024 && 2 * head > queue.length)) {
            queue.splice(0, head); // (dropped at most once each)
            head = 0;
          }
          heads[pc][phase] = head;
        }
      }
    }
    for (const pc of current) {
      const op = prog[pc];
      if (op.op === "count") {
        if (entries[pc].every((queue) => queue.length === 0)) continue;
        if (mark[pc] !== after) {
          mark[pc] = after;
          next.push(pc);
        }
        // a round ends for the threads that entered a whole number of rounds ago
        const w = op.sets.length;
        const phase = (read + 1) % w;
        const queue = entries[pc][phase];
        if (
          queue.length > 0 && read + 1 - queue[heads[pc][phase]] >= op.min * w &&
          add(next, pc + 1, after, read + 1)
        ) return true;
      } else if (inSet((op as { set: CharSet }).set, c) && add(next, pc + 1, after, read + 1)) return true;
    }
    [current, next] = [next, current];
    i = after;
  }
  return false;
}

/** A `RegExp` whose `test` runs the linear-time matcher (what the schema checks call). */
class LinearRegExp extends RegExp {
  readonly #prog: Op[];
  readonly #counts: boolean;
  readonly #native: RegExp | null;
  readonly #nativeBelow: number;
  readonly #needed: CharSet[];
  readonly #mayRunOut: boolean;
  readonly #matchedBy: RegExp | null;
  readonly #rounds: Round[] | null;

  /**
   * `source` with `flags` (`u`, or none for a pattern only the legacy syntax reads), matched by `prog`; a
   * string shorter than `nativeBelow` by `native` instead, where backtracking on it is bounded. `needed`: sets
   * every match takes a character of (see {@linkcode LinearRegExp.rulesOut}). `matchedBy`: an engine whose
   * "yes" is a match (JavaScriptCore fails only by saying no), asked first where a program that may run out
   * of its steps reads a value past their pace, before the matcher is asked again whole. `rounds`: the
   * alternatives of the groups JavaScriptCore repeats (see {@linkcode manyRounds}); a value that cannot take
   * many rounds of them is asked of `matchedBy` first.
   */
  constructor(
    source: string,
    flags: string,
    prog: Op[],
    { native = null, nativeBelow = 0, needed = [], matchedBy = null, rounds = null }: NativeBelow & {
      needed?: CharSet[];
      matchedBy?: RegExp | null;
      rounds?: Round[] | null;
    } = {},
  ) {
    super(source, flags);
    this.#prog = prog;
    this.#counts = hasCounts(prog);
    this.#native = native;
    this.#nativeBelow = nativeBelow;
    this.#needed = needed;
    this.#mayRunOut = stepsPerChar(prog) > MATCH_STEPS.perChar;
    this.#matchedBy = matchedBy;
    this.#rounds = rounds;
  }

  /** Whether `s` has no character of a set every match takes one of: no match, unrun. */
  rulesOut(s: string): boolean {
    return this.#needed.some((set) => !hasCharIn(set, s, this.unicode));
  }

  /** Whether a string of `length` units is answered by the linear-time matcher (not the native engine). */
  linearAt(length: number): boolean {
    return this.#native === null || length >= this.#nativeBelow;
  }

  /** Whether the pattern matches somewhere in `s`, in time linear in its length. */
  override test(s: string): boolean {
    const text = String(s);
    if (this.#native !== null && text.length < this.#nativeBelow) return this.#native.test(text);
    // (a program that may run out of its steps first looks for what every match takes: `(?:a?b?){2500}x` on
    // 2 000 "a" is "no", where it was refused as unchecked; one that cannot is not slowed by the passes)
    return this.#mayRunOut ? this.confirm(text) : this.#match(text);
  }

  /**
   * Whether the pattern matches somewhere in `s`, for a value that may lack a character every match takes:
   * that first (a pass of `s` a set), then the matcher.
   */
  confirm(s: string): boolean {
    return !this.rulesOut(s) && this.#match(s);
  }

  /** The answer of the matcher, or of `matchedBy` where it stands (see the constructor). */
  #match(text: string): boolean {
    const options = { unicode: this.unicode, multiline: this.multiline, counts: this.#counts };
    // (a value that cannot take many rounds of a repeated group is asked of JavaScriptCore first, whose "yes"
    // stands: 2 M "b" of `^(?:a|b{20})*$`, 100 000 rounds, took it 60 ms and the matcher 0.5 s; a program that
    // may run out of its steps, slower a character, takes the matcher from a round every 1.5 characters; one
    // that cannot from a round every 3.5, as a "no" is then asked of the matcher too: on 2 M characters of
    // `^(?:[a-z]{3})*$` JavaScriptCore first took "abc" 0.17 s of CPU and "abc" and "!" 0.41 s, the matcher
    // 0.23 s and 0.22 s; of `^(?:[a-z]{4})*$` 0.13 s and 0.35 s against 0.22 s and 0.18 s, left to it)
    if (
      this.#rounds !== null && this.#matchedBy !== null &&
      !manyRounds(this.#rounds, text, this.unicode, this.#mayRunOut ? 1.5 : 3.5)
    ) {
      return this.#matchedBy.test(text) || run(this.#prog, text, options);
    }
    if (!this.#mayRunOut || this.#matchedBy === null) return run(this.#prog, text, options);
    // (where the native "yes" stands, a value the matcher reads past its budget's pace so far is asked of the
    // native engine first: run out at the end of 2 M digits of `(?:\d{40}|z)(?:a|b{20})+`, the matcher spent
    // 2.7 s before the native "yes"; the native "no" is no answer there, and the matcher is asked again whole)
    try {
      return run(this.#prog, text, { ...options, paced: true });
    } catch (e) {
      if (!(e instanceof MatchTooCostly)) throw e;
    }
    return this.#matchedBy.test(text) || run(this.#prog, text, options);
  }
}

/**
 * Whether `re`, from {@linkcode linearRegExp}, matches `s`: first whether `s` lacks a character every match
 * takes (`x` of `(?:a{30}b{40}){10}x`), in one pass of `s` a set and no program run (the matcher, asked to
 * confirm JavaScriptCore's "no" on a million characters of that pattern, ran out of its steps), then the
 * matcher. Throws {@linkcode MatchTooCostly} where the matcher runs out of its steps.
 */
export function confirmLinearly(re: RegExp, s: string): boolean {
  return re instanceof LinearRegExp ? re.confirm(s) : re.test(s);
}

/** Whether `s`, read by code point (`unicode`) or code unit, has a character in `set`. */
function hasCharIn(set: CharSet, s: string, unicode: boolean): boolean {
  for (let i = 0; i < s.length;) {
    const c = unicode ? s.codePointAt(i)! : s.charCodeAt(i);
    if (inSet(set, c)) return true;
    i += c > 0xffff ? 2 : 1;
  }
  return false;
}

/** The most sets {@linkcode needed} gives: each costs a pass of the string where none is missing. */
const MAX_NEEDED = 4;

/**
 * Sets `node` takes a character of wherever it matches (no property escapes, whose test is costly), at most
 * {@linkcode MAX_NEEDED}, one of each: the sets of its items that must take one, not of alternatives.
 */
function needed(node: Node, out: CharSet[] = []): CharSet[] {
  if (out.length >= MAX_NEEDED) return out;
  if (node.k === "set") {
    if (node.props === undefined && !out.includes(node)) out.push(node);
  } else if (node.k === "cat") { for (const item of node.items) needed(item, out); }
  else if (node.k === "rep" && node.min >= 1) needed(node.node, out);
  return out;
}

/** Whether `re` answers a string of `length` units on the linear-time matcher: its "no" needs no second asking. */
export function answersLinearly(re: RegExp, length: number): boolean {
  return re instanceof LinearRegExp && re.linearAt(length);
}

/** Where a polynomial pattern's native engine may still be used: strings shorter than `nativeBelow`. */
interface NativeBelow {
  native?: RegExp | null;
  nativeBelow?: number;
}

/**
 * Backtracking steps a polynomial pattern may take on the native engine (about a millisecond): the linear
 * matcher costs microseconds per test where the native engine costs tens of nanoseconds, so the short
 * strings most arguments are stay native.
 */
const NATIVE_STEPS = 2 ** 20;

/** The unbounded repeats (`*`, `+`, `{n,}`) in `node`: each splits a run of n characters at most n ways. */
function unboundedRepeats(node: Node): number {
  switch (node.k) {
    case "rep":
      return (node.max === Infinity ? 1 : 0) + unboundedRepeats(node.node);
    case "cat":
      return node.items.reduce((sum, n) => sum + unboundedRepeats(n), 0);
    case "alt":
      return node.alts.reduce((sum, n) => sum + unboundedRepeats(n), 0);
    default:
      return 0;
  }
}

/**
 * The largest least count of a counted repeat in `node` (1 for none): characters a start reads with no
 * choice made, which {@linkcode choices} does not count (`\d{1001}` is one way, read from every start).
 */
function leastCount(node: Node): number {
  switch (node.k) {
    case "rep":
      return Math.max(node.max === Infinity ? 1 : node.min, leastCount(node.node));
    case "cat":
      return node.items.reduce((most, n) => Math.max(most, leastCount(n)), 1);
    case "alt":
      return node.alts.reduce((most, n) => Math.max(most, leastCount(n)), 1);
    default:
      return 1;
  }
}

/**
 * The length below which backtracking on a polynomial (not exponential) `tree` stays within
 * {@link NATIVE_STEPS}: with k unbounded repeats, c {@linkcode choices}, a least count of w
 * ({@linkcode leastCount}) and a search from every start, at most c n^(k+1) min(n, w) steps. The largest n
 * within them, so that a string shorter than it is native.
 */
function nativeBelowOf(tree: Node): number {
  const k = unboundedRepeats(tree);
  const w = leastCount(tree);
  const steps = (n: number) => choices(tree, n) * n ** (k + 1) * Math.min(n, w);
  let [within, past] = [0, NATIVE_STEPS + 1];
  while (past - within > 1) {
    const mid = Math.floor((within + past) / 2);
    if (steps(mid) <= NATIVE_STEPS) within = mid;
    else past = mid;
  }
  return within;
}

/** A repeat applied to a group (`)*`, `)+`, `){`): the shape every exponential pattern has. */
const GROUP_REPEAT = /\)[*+{]/;
/** Two unbounded repeats (`*`, `+`, `{n,}`): the least a polynomial pattern has. */
const TWO_REPEATS = /(?:[*+]|,\})[^]*?(?:[*+]|,\})/;
/** Two optional items, alternatives or counted repeats of a range: the least many {@linkcode choices} need. */
const TWO_CHOICES = /[?|,][^]*?[?|,]/;
/** A count of a hundred or more (see {@linkcode WIDE}): backtracking can run through it from each of many places. */
const WIDE_COUNT = /\{(?:\d*,)?\d{3,}\}/;
/** A repeat of a varying count (`*`, `+`, `{m,}`, `{m,n}`): what a search from every start can run through. */
const ONE_REPEAT = /[*+]|\{\d+,/;
/**
 * A group repeated any number of times, or up to a thousand or more (`(?:a|b)*`, `(a)+`, `(?:ab){2,}`,
 * `(?:ab){0,5000}`): see {@linkcode JSC_ROUNDS}. (`(?:[0-9a-f]{3}){1,2}` cannot take that many rounds.)
 */
const SLOW_ON_JSC = /\)(?:[*+]|\{\d+,(?:\d{4,})?\})/;
/**
 * From this length a pattern that repeats a group ({@linkcode SLOW_ON_JSC}) runs on the linear-time matcher on
 * JavaScriptCore, whose compiled code gives up past about 150 000 rounds (fewer deeper in the stack) and
 * leaves the rest to its interpreter, about a microsecond a round: a round a character, that many rounds on
 * as many characters. (What a longer value takes, {@linkcode manyRounds} decides.)
 */
const JSC_ROUNDS = 100_000;
/**
 * The rounds JavaScriptCore takes in its compiled code (see {@linkcode JSC_ROUNDS}), less a margin for a deeper
 * stack (it left it between 150 000 and 170 000 rounds of `^(?:a|b{20})*$` at the top): fewer, it answers first.
 */
const JSC_COMPILED_ROUNDS = 120_000;
/** The most alternatives {@linkcode manyRounds} counts the characters of, a test a character each. */
const MAX_COUNTED_ROUNDS = 8;

/** An alternative of a group repeated as {@linkcode SLOW_ON_JSC} reads: the characters it can begin with and the fewest a round of it takes (at least 1). */
interface Round {
  set: CharSet | null;
  least: number;
}

/**
 * The alternatives of the groups in `node` repeated any number of times or up to a thousand or more
 * ({@linkcode SLOW_ON_JSC}), each a {@linkcode Round}.
 */
function roundsOf(node: Node, out: Round[] = []): Round[] {
  if (node.k === "rep") {
    if (node.node.k !== "set" && (node.max === Infinity || node.max >= 1000)) {
      for (const alt of node.node.k === "alt" ? node.node.alts : [node.node]) {
        const chars = firstOf(alt);
        out.push({
          set: chars === null ? null : { k: "set", ranges: chars, neg: false },
          least: Math.max(1, least(alt)),
        });
      }
    }
    roundsOf(node.node, out);
  } else if (node.k === "cat") { for (const item of node.items) roundsOf(item, out); }
  else if (node.k === "alt") { for (const alt of node.alts) roundsOf(alt, out); }
  return out;
}

/** The code points a match of `node` can begin with, as ranges; null when a property escape makes that unknown. */
function firstOf(node: Node): [number, number][] | null {
  switch (node.k) {
    case "set":
      return charsOf(node);
    case "rep":
      return node.max === 0 ? [] : firstOf(node.node);
    case "alt":
    case "cat": {
      const out: [number, number][] = [];
      for (const n of node.k === "cat" ? node.items : node.alts) {
        const r = firstOf(n);
        if (r === null) return null;
        out.push(...r);
        if (node.k === "cat" && !nullable(n)) break;
      }
      return out;
    }
    default:
      return [];
  }
}

/**
 * Whether `s` may take JavaScriptCore more rounds of `rounds` than its compiled code takes, and at least a
 * round every `every` characters, where the matcher is the faster: about a microsecond a round past
 * {@linkcode JSC_COMPILED_ROUNDS} on JavaScriptCore against a third to a half of that a character on the
 * matcher. On 2 M characters, rounds of two of `^(?:[ab][ab])*$` (a program of few steps a character) took
 * 0.86 s and 0.61 s, of `^(?:ab|c{40})*$` (of more steps than the matcher's pace) 0.97 s and 1.0 s, of three
 * of `^(?:abc|d{40})*$` 0.36 s and 0.75 s. Each alternative takes at most a round for each character in `s`
 * it can begin with (a round that takes one starts on one), and at most the length of `s` over its fewest.
 */
function manyRounds(rounds: Round[], s: string, unicode: boolean, every: number): boolean {
  const n = s.length;
  // (whole rounds: 2 M "ab" and "!" takes a round every two characters but for one, and its "no", sent to
  // JavaScriptCore first, took its interpreter 1.1 s before the matcher was asked)
  const enoughFor = (chars: number) => Math.max(JSC_COMPILED_ROUNDS, Math.floor(chars / every));
  // (the matcher reads a pair as one character: 1 M rounds of `^(?:[^\\]|\\[a-z]{20})*$` on 1 M pairs, read as
  // 2 M characters of too few rounds, went to JavaScriptCore first, whose "no" took its interpreter 1.2 s before
  // the matcher; a value's length in code units is the most characters it has, and bounds what it needs)
  const most = rounds.map((r) => Math.floor(n / r.least));
  if (most.reduce((sum, m) => sum + m, 0) < enoughFor(n)) return false;
  if (rounds.length > MAX_COUNTED_ROUNDS || rounds.some((r) => r.set === null)) return true;
  let bits = BMP_BITS.get(rounds);
  if (bits === undefined) BMP_BITS.set(rounds, bits = bmpBits(rounds));
  // (what `n` characters, the most `s` can be of, take: reached, enough whatever its pairs)
  const enough = enoughFor(n);
  const taken = rounds.map(() => 0);
  let total = 0;
  let pairs = 0;
  // (read by code unit, a pair put together: a count of `codePointAt` tells the matcher's reading apart)
  for (let i = 0; i < n; i++) {
    // (now and then, whether the rest can still bring enough: on 2 M "c" of `^(?:ab|c{40})*$`, from the middle
    // on it cannot; and whether what was read has rounds enough as densely: 2 M "ab" reached a round every two
    // characters only at its end)
    if ((i & 0x3fff) === 0 && i > 0) {
      const left = n - i;
      if (
        most.reduce((sum, m, k) => sum + Math.min(m - taken[k], left), total) <
          enoughFor(i - pairs + left)
      ) return false;
      if (total >= JSC_COMPILED_ROUNDS && every * total >= i - pairs) return true;
    }
    const c = s.charCodeAt(i);
    let m = bits[c];
    if (unicode && c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const low = s.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        m = rounds.reduce((b, r, k) => inSet(r.set!, cp) ? b | (1 << k) : b, 0);
        i++;
        pairs++;
      }
    }
    for (; m !== 0; m &= m - 1) {
      const k = 31 - Math.clz32(m & -m);
      if (taken[k] < most[k]) {
        taken[k]++;
        if (++total >= enough) return true;
      }
    }
  }
  return total >= enoughFor(n - pairs);
}

/** What {@linkcode bmpBits} made for each list of rounds (once a pattern, on the first long value). */
const BMP_BITS = new WeakMap<Round[], Uint8Array>();

/** For each code unit, a bit for each of `rounds` that can begin with it: a lookup a character, not a search of ranges. */
function bmpBits(rounds: Round[]): Uint8Array {
  const bits = new Uint8Array(0x10000);
  rounds.forEach((r, k) => {
    for (const [lo, hi] of r.set!.ranges) {
      for (let c = lo; c <= Math.min(hi, 0xffff); c++) bits[c] |= 1 << k;
    }
  });
  return bits;
}

/** The fewest characters a match of `node` takes. */
function least(node: Node): number {
  switch (node.k) {
    case "set":
      return 1;
    case "rep":
      return node.min * least(node.node);
    case "cat":
      return node.items.reduce((sum, n) => sum + least(n), 0);
    case "alt":
      return Math.min(...node.alts.map(least));
    default:
      return 0;
  }
}

/** Flags under which the ends of a pattern can be cut (see {@linkcode cutEnds}): no `g` or `y` (a match's end is read), no `v`. */
const CUTTABLE_FLAGS = /^[dimsu]*$/;
/** Flags the linear-time matcher reads as the native engine does (not `i`: see {@linkcode boundedRegExp}). */
const MATCHED_FLAGS = /^[dmsu]*$/;

/**
 * The regular expression to test `source` with: `native` itself when backtracking cannot explode on it,
 * else one that matches in linear time. Throws a message (for the caller's `SchemaError`) when the pattern
 * is risky but uses syntax the linear matcher lacks. A pattern whose cost is only polynomial keeps `native`
 * for strings short enough that backtracking on them stays bounded, as does, on JavaScriptCore, one that
 * repeats a group (see {@linkcode JSC_ROUNDS}) (`shortNative: false`: neither, as the tests that compare the
 * two engines ask). A repeat of a set at an unanchored end of the pattern is first cut to its least count
 * (see {@linkcode cutEnds}); what answers then keeps the pattern's own `source`.
 */
export function boundedRegExp(
  source: string,
  native: RegExp,
  { shortNative = true }: { shortNative?: boolean } = {},
): RegExp {
  const plain = !GROUP_REPEAT.test(source) && !TWO_REPEATS.test(source) && !TWO_CHOICES.test(source) &&
    !WIDE_COUNT.test(source);
  // nothing to backtrack on, nor a repeat a search from every start runs through
  if (plain && !(ONE_REPEAT.test(source) && unanchored(source))) return native;
  let tree: Node;
  let reader: Reader;
  try {
    // A pattern only the legacy syntax reads (`\-` outside a class) is read, and matched, as it reads it.
    reader = new Reader(source, {
      unicode: native.unicode,
      dotAll: native.dotAll,
      caseSensitive: !native.ignoreCase,
      byFirst: true,
    });
    tree = reader.pattern();
  } catch (e) {
    // Syntax the matcher lacks: harmless where nothing is repeated inside a repeat (`^((?!x).)*$`). Where
    // the cost is only polynomial (`^(?!x)\w*\d*$`) the native engine stays: such patterns are common in
    // real schemas, and refusing them would refuse the tool; n^k on an argument is bounded, 2^n is not.
    // What it begins with is cut as below (`\d+(?=b)` is searched as `(?:\d)(?=b)`).
    if (
      plain ||
      (e instanceof Unsupported &&
        (!GROUP_REPEAT.test(source) || !riskyShape(source, { caseSensitive: !native.ignoreCase })))
    ) {
      return cutLeading(source, native);
    }
    if (!(e instanceof Unsupported)) throw e;
    throw new Error(
      `it repeats a group, which a backtracking engine can take exponential time on, and uses syntax ` +
        `(${e.message}) the linear-time matcher lacks; rewrite it without that syntax or without the nested repeat`,
    );
  }
  const cut = CUTTABLE_FLAGS.test(native.flags) ? cutEnds(tree, reader, native) : null;
  let runs = native;
  if (cut !== null) {
    try {
      runs = new RegExp(cut.source, native.flags);
      tree = cut.tree;
    } catch {
      // (a cut the engine reads otherwise: the pattern as written)
    }
  }
  // (the matcher reads no `i`: schema patterns never have it, and a search costs no more than n^2)
  const searched = MATCHED_FLAGS.test(native.flags) && searchPolynomial(tree);
  if (!risky(tree) && !searched) {
    const slow = failsQuietly() && SLOW_ON_JSC.test(source) && MATCHED_FLAGS.test(native.flags)
      ? program(tree)
      : null;
    // JavaScriptCore leaves its compiled code for its interpreter past about 150 000 rounds of such a group
    // (fewer deeper in the stack): on Bun `^(?:a|b)*$` took 2.7 s on 2 M characters, and 1.8 s to a "no" on 1 M
    // (asked again), the matcher 0.8-1.1 s and 0.6 s; shorter strings stay native (1 ms on 100 000), unless
    // `shortNative` is false (tests comparing the engines)
    // (a program that may run out of steps too, `^(?:a|b{20})*$`: left native, JavaScriptCore's wrong "no" on
    // 2 M "a" was asked again of the matcher, 0.64 s where the matcher alone took 0.24 s; where it runs out,
    // JavaScriptCore's "yes" stands. A value that cannot take many rounds is asked of JavaScriptCore first
    // (see {@linkcode manyRounds}): a million characters of base64's `(?:[A-Za-z0-9+/]{4})*` took it 0.5 s,
    // the matcher 1.2 s)
    const rounds = slow === null ? [] : roundsOf(tree);
    if (slow !== null && (stepsPerChar(slow) <= MATCH_STEPS.perChar || rounds.length > 0)) {
      const below = shortNative
        ? { native: runs, nativeBelow: JSC_ROUNDS, rounds: rounds.length > 0 ? rounds : null }
        : {};
      return new LinearRegExp(source, native.flags, slow, {
        ...below,
        needed: needed(tree),
        matchedBy: runs,
      });
    }
    return runs === native ? native : new CutRegExp(source, runs);
  }
  let prog = native.ignoreCase ? null : program(tree);
  // Counted repeats too wide to copy kept the native engine where its cost is bounded: still so where no two
  // items that vary take the same character and no search runs through them from every start
  // (`^[a-z]{1,10000}\.[a-z]{1,10000}$` is linear natively); counts take the others (`\d.\d{1,30001}b`,
  // `^\d{1,30001}\d*$`: n x 30 001 steps natively).
  // (not where a count repeats a count, `^(?:(?:ab){1,99}){1,99}$`: exponential natively, refused when it went
  // native)
  if (
    prog !== null && !searched && !exponential(tree) && !polynomial(tree, varies) &&
    program(tree, { counted: false }) === null
  ) {
    prog = null;
  }
  if (prog === null) {
    // a polynomial cost is bounded: kept, as where syntax is lacking; millions of choices are not, nor a search
    // through a count too wide to copy (`(?:a{30}b{40}){1000}x`: 70 000 native steps from
    // each start)
    if (!searched && !exponential(tree) && costlyChoices(tree) <= NATIVE_STEPS) {
      return runs === native ? native : new CutRegExp(source, runs);
    }
    throw new Error(
      native.ignoreCase
        ? "it repeats a group, or chains counted repeats a backtracking engine can take millions of ways, and " +
          "the linear-time matcher does not read the i flag; write both cases into the pattern ([Aa]) instead"
        : "it repeats a group, or chains counted repeats a backtracking engine can take millions of ways, and " +
          "is too large for the linear-time matcher; simplify it",
    );
  }
  // a polynomial cost is bounded on a short string: there the native engine, many times faster, answers
  const below = !shortNative || exponential(tree) || native.global || native.sticky
    ? {}
    : { native: runs, nativeBelow: nativeBelowOf(tree) };
  return new LinearRegExp(source, native.flags, prog, { ...below, needed: needed(tree) });
}

/**
 * `native`, or where the pattern begins with a repeat {@linkcode cutEnds} cuts at its start, one that answers
 * as it with the cut pattern: for a pattern this reader cannot read to the end (`\d+(?=b)`, `\d\d+\b`), whose
 * rest a start moved right meets at the same place.
 */
function cutLeading(source: string, native: RegExp): RegExp {
  if (!CUTTABLE_FLAGS.test(native.flags)) return native;
  const reader = new Reader(source, { unicode: native.unicode, dotAll: native.dotAll });
  const cut = cutEnds({ k: "cat", items: reader.leading() }, reader, native, { leadingOnly: true });
  if (cut === null) return native;
  try {
    return new CutRegExp(source, new RegExp(cut.source, native.flags));
  } catch {
    return native; // (a cut the engine reads otherwise: the pattern as written)
  }
}

/** Whether a search for `source` may start anywhere: it does not begin with `^` or end with `$`, or has alternatives. */
function unanchored(source: string): boolean {
  return !source.startsWith("^") || !source.endsWith("$") || source.includes("|");
}

/** A `RegExp` that keeps the pattern as written (for messages) and answers `test` with `runs`, an equal one. */
class CutRegExp extends RegExp {
  readonly #runs: RegExp;

  /** `source`, answered by `runs`, whose flags it takes. */
  constructor(source: string, runs: RegExp) {
    super(source, runs.flags);
    this.#runs = runs;
  }

  /** Whether the pattern matches somewhere in `s`. */
  override test(s: string): boolean {
    return this.#runs.test(s);
  }
}

/** A repeat of every character, as many times as it likes: what a search that may start anywhere skips. */
const ANYWHERE: Node = { k: "rep", node: { k: "set", ranges: [], neg: true }, min: 0, max: Infinity };

/**
 * True when a search that may start anywhere (an alternative not after `^`) backtracks through one of the
 * pattern's unbounded repeats, or counted repeats of more than {@linkcode WIDE}, from many of those starts:
 * the search is then `[^]*?` before the pattern, polynomial as {@linkcode polynomial} says (`\d\d+b` on a run
 * of digits, `(?:ab)+c` on "abab...": each start runs to the end of the run, n^2 in all; `\d.\d{1,30001}b`:
 * n x 30 001). `ab\d+c` reaches its repeat from one start in a run.
 */
function searchPolynomial(tree: Node): boolean {
  const alts = tree.k === "alt" ? tree.alts : [tree];
  return alts.some((alt) => {
    const items = alt.k === "cat" ? alt.items : [alt];
    return items[0]?.k !== "bol" && polynomial({ k: "cat", items: [ANYWHERE, alt] }, wide);
  });
}

/**
 * The count past which a repeat a search runs through from every start costs the native engine more than
 * the linear-time matcher does on a long string: about a hundred native steps a character on V8, the engine
 * that {@linkcode searchesInPairs} (6 ns a step on ASCII, 30 with `u` on astral characters, against about
 * 0.7 us a character on the matcher). JavaScriptCore's steps cost about a fifth: it breaks even past 500 on
 * ASCII (`.{150}.{0,9}\d` on 100 000 characters: 44 ms, the matcher 200), near 100 with `u` on emoji; at 200
 * it takes there at most about twice the matcher's time (`\B.{200}x` on 100 000 emoji: 172 ms, the matcher
 * 87). At a thousand, `\B.{1000}x` took V8 1.5 s on 50 000 emoji.
 */
const WIDE = lazy(() => searchesInPairs() ? 100 : 200);
/**
 * The unbounded repeats, and counts past {@linkcode WIDE} characters (of a group the matcher counts, its
 * characters a round times its count): a search through `(?:ab){1000}x` from every start of 100 000
 * characters took V8 7 s, through `(?:[a-z]{64}){100}x` of 300 000, 17 s. The matcher counts a set or a group of sets read one way (see
 * {@linkcode setSequence}), and copies any other group once a count, on its budget of steps.
 */
const wide: Opens = (rep) =>
  rep.max === Infinity || rep.max * (rep.node === undefined ? 1 : roundWidth(rep.node)) > WIDE();

/**
 * The characters a round of `node` counts for in {@linkcode wide}: a group of sets read one way, its sets; a
 * choice of such groups by the next character (see {@linkcode choosesByFirst}), a quarter of the native steps
 * a round takes (its longest alternative, after a step for each other one tried): the matcher copies it and
 * gives up on a long string (`(?:a|bb){99}x`, 300 steps a start), so the native engine is given the time of
 * the matcher's budget, about four times what {@linkcode WIDE} breaks even at. `(?:a|b{64}){99}x` took V8
 * 7 s on 100 000 characters, 500 alternatives of two characters took JavaScriptCore 13 s.
 */
function roundWidth(node: Node): number {
  if (node.k !== "alt" || !node.byFirst) return setSequence(node)?.length ?? 1;
  const longest = Math.max(...node.alts.map((alt) => setSequence(alt)?.length ?? 1));
  return (longest + node.alts.length - 1) / 4;
}

/** A repeat of one set whose count varies, written where {@linkcode cutEnds} can rewrite it. */
type SetRepeat = { k: "rep"; node: CharSet; min: number; max: number; span: Span };

/** Whether every character `inner` takes, `outer` takes (as the reader knows them; a property escape: unknown, no). */
function covers(outer: Node, inner: Node): boolean {
  const out = charsOf(outer);
  const ins = charsOf(inner);
  if (out === null || ins === null) return false;
  const merged = [...out].sort((a, b) => a[0] - b[0]).reduce<[number, number][]>((acc, [lo, hi]) => {
    const top = acc.at(-1);
    if (top !== undefined && lo <= top[1] + 1) top[1] = Math.max(top[1], hi);
    else acc.push([lo, hi]);
    return acc;
  }, []);
  return ins.every(([lo, hi]) => merged.some(([l, h]) => l <= lo && hi <= h));
}

/** Whether `node` is a {@linkcode SetRepeat}. */
function isSetRepeat(node: Node | undefined): node is SetRepeat {
  // (a least count past 2^53 would be written back as `1e+23`)
  return node?.k === "rep" && node.node.k === "set" && node.span !== undefined && node.min < node.max &&
    Number.isSafeInteger(node.min);
}

/**
 * `tree` (read by `reader`) with each repeat of a set that begins a top-level alternative not after `^`, or
 * ends one not before `$`, cut to its least count, again while what is cut can be empty, and its source;
 * null when nothing is cut. `test` asks only whether a match starts somewhere: where `\d+b` matches, `\db`
 * matches at its last digit, and where `a\d*` matches, `a` does (`.*x` is `x`, `\d{2,5}b` is `\d{2}b`,
 * `\s+$` is `\s$`). A search from every start then runs through no run of digits: `\d+b` on 100 000 digits
 * took 7 s, `\d{1,30001}b` 12 s. A repeat after single sets each of which takes what it and the sets after
 * take is cut too (`\d\d+b` is `\d\db`, `.\w*x` is `.x`). Only the repeat's own text is rewritten, so flags
 * read the rest as before. With `leadingOnly`, `tree` is the items the pattern begins with (see
 * {@linkcode Reader.leading}): only they are cut.
 */
function cutEnds(
  tree: Node,
  reader: Reader,
  { dotAll, ignoreCase, unicode }: { dotAll: boolean; ignoreCase: boolean; unicode: boolean },
  { leadingOnly = false }: { leadingOnly?: boolean } = {},
): { tree: Node; source: string } | null {
  const edits: { from: number; to: number; text: string }[] = [];
  // What is kept goes in a group of its own, and a repeat dropped between two items leaves an empty one: an
  // escape written next to another is read as one with it (`\uD83D+\uDE00`, which matches nothing, is no
  // `\uD83D\uDE00`; without `u`, `\0+1` is no `\01`). At an end of an alternative nothing is left to join.
  const cutOne = (rep: SetRepeat, { atEnd }: { atEnd: boolean }): Node | null => {
    const atom = reader.text(rep.span.from, rep.span.atomEnd);
    const text = rep.min === 0 ? (atEnd ? "" : "(?:)") : `(?:${atom})${rep.min === 1 ? "" : `{${rep.min}}`}`;
    edits.push({ from: rep.span.from, to: rep.span.to, text });
    return rep.min === 0
      ? null
      : rep.min === 1
      ? rep.node
      : { k: "rep", node: rep.node, min: rep.min, max: rep.min };
  };
  const cutAlt = (alt: Node): Node => {
    if (alt.k !== "cat") return alt;
    const items = [...alt.items];
    for (let first = items[0]; isSetRepeat(first); first = items[0]) {
      const kept = cutOne(first, { atEnd: true });
      if (kept !== null) {
        items[0] = kept;
        break;
      }
      items.shift();
    }
    // `\d\d+b` is `\d\db`: a start moved right has its sets take characters the repeat, or a set after them,
    // took, which each can take (with the `s` flag, `.` takes more than the reader knows; with `i`, `[^a]`
    // takes less: no "A")
    let sets = 0;
    while (items[sets]?.k === "set") sets++;
    const rep = items[sets];
    if (
      !dotAll && !ignoreCase && sets > 0 && isSetRepeat(rep) &&
      items.slice(0, sets).every((x, i) => [rep.node, ...items.slice(i + 1, sets)].every((y) => covers(x, y)))
    ) {
      const kept = cutOne(rep, { atEnd: false });
      if (kept === null) items.splice(sets, 1);
      else items[sets] = kept;
    }
    for (let last = items.at(-1); !leadingOnly && isSetRepeat(last); last = items.at(-1)) {
      const kept = cutOne(last, { atEnd: true });
      if (kept !== null) {
        items[items.length - 1] = kept;
        break;
      }
      items.pop();
    }
    return { k: "cat", items };
  };
  const cutTree = tree.k === "alt" ? { k: "alt" as const, alts: tree.alts.map(cutAlt) } : cutAlt(tree);
  if (edits.length === 0) return null;
  edits.sort((a, b) => a.from - b.from);
  let source = "";
  let at = 0;
  for (const { from, to, text } of edits) {
    source += reader.text(at, from) + text;
    at = to;
  }
  source += reader.text(at, reader.length);
  // V8 15 (Deno 2.9) with `u` refuses what a fixed run of characters before `$` takes where a class in it
  // can take a pair: `(?:[\W])$`, as `[\S]+$` is cut, refused an emoji, which `[\S]+$` takes. Another
  // alternative, which matches nothing, keeps the engine from that reading of the end.
  if (unicode && source.includes("$")) source += "|(?!)";
  return { tree: cutTree, source };
}

/**
 * Whether `source` repeats a repeat or alternatives when the syntax the matcher lacks is read for its shape
 * alone: a lookaround as a plain group, `\b` as nothing, `\p{...}` as one character, a back-reference as a
 * repeat (it can match any length). Unknown to the end (the shape cannot be read): risky.
 */
function riskyShape(source: string, { caseSensitive }: { caseSensitive: boolean }): boolean {
  const shape = source.replace(
    /\\(?:[pP]\{[^}]*\}|k<[^>]*>|[1-9]\d*|[bB])|\\.|\(\?<?[=!]/g,
    (m) =>
      m.startsWith("(")
        ? "(?:"
        : /^\\[pP]/.test(m)
        ? "."
        : /^\\[bB]$/.test(m)
        ? ""
        : /^\\[1-9k]/.test(m)
        ? ".*"
        : m,
  );
  try {
    // (alternatives of one set each read as that set, as where the matcher reads the pattern: `(?:a|b)+(?=xy)`
    // is no more a repeat of alternatives than `(?:[ab])+(?=xy)`)
    return exponential(new Reader(shape, { unicode: true, caseSensitive }).pattern());
  } catch {
    return true;
  }
}

/**
 * The most steps `prog` takes a character, wherever it is: each instruction runs at most once a position,
 * and a step is counted for each thread it starts (two for a split) and each set that reads the character;
 * Infinity with a {@linkcode CountOp}, whose threads are not bounded so. Within
 * {@linkcode MATCH_STEPS}' `perChar`, the matcher answers any string.
 */
function stepsPerChar(prog: Op[]): number {
  let steps = 1; // (the thread each position starts)
  for (const op of prog) {
    if (op.op === "count") return Infinity;
    steps += op.op === "set" || op.op === "split" ? 2 : 1;
  }
  return steps;
}

/**
 * The matcher's program for `tree`, or null when it would be too large; with `counted` false, each count of
 * a repeat is a copy (see {@linkcode emit}).
 */
function program(tree: Node, { counted = true }: { counted?: boolean } = {}): Op[] | null {
  const prog: Op[] = [];
  try {
    emit(tree, prog, counted);
  } catch {
    return null;
  }
  prog.push({ op: "match" });
  return prog;
}

/**
 * `source` with `flags` (`u` unless told; any of `u`, `s`, `m`, `d`) on the linear-time matcher whatever its
 * shape, or null where the matcher lacks its syntax or flags or it is too large: for comparing the matcher
 * with the native engine.
 */
export function linearRegExp(source: string, { flags = "u" }: { flags?: string } = {}): RegExp | null {
  if (!MATCHED_FLAGS.test(flags)) return null;
  try {
    const reader = new Reader(source, {
      unicode: flags.includes("u"),
      dotAll: flags.includes("s"),
      caseSensitive: true,
    });
    const tree = reader.pattern();
    const prog = program(tree);
    return prog === null ? null : new LinearRegExp(source, flags, prog, { needed: needed(tree) });
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
}
