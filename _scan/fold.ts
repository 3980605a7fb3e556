/**
 * Folding text for the scanner: one linear pass that undoes the cheap evasions (case, full-width forms,
 * homoglyphs, accents, zero-width characters inside words, letter spacing) and keeps an index map from every
 * folded character back to the original string, so a match on the folded text maps to an exact span.
 *
 * @module
 */

import { grownBy } from "../_common/bytes.ts";
import { lazy } from "../_common/values.ts";
import { asciiBytes, BYTES_FROM, bytesFor, heldBytes, keepBytes, keepUtf8, KEPT_BYTES } from "./words.ts";

/** Text folded for matching, with a map back to the original. */
export interface Folded {
  /** Lower-case, ASCII-leaning text: whitespace runs become one space (or one `\n` when a newline was in the run). */
  text: string;
  /** `starts[i]`: index in the original of the first code unit behind folded character `i`. */
  readonly starts: Int32Array;
  /** `ends[i]`: index in the original one past the last code unit behind folded character `i`. */
  readonly ends: Int32Array;
  /**
   * True when folded character `i` comes from original character `i` alone (text where every unit folds to one
   * unit, with no whitespace run and no letter spacing): `mapSpan` then needs no map, and `starts`/`ends` are
   * built only if read.
   */
  readonly identity?: boolean;
}

/** Cyrillic, Greek and other letters that look like Latin ones (lower-case targets). */
const HOMOGLYPHS: Record<string, string> = {
  // Cyrillic
  "\u0430": "a",
  "\u0432": "b",
  "\u0441": "c",
  "\u0501": "d",
  "\u0435": "e",
  "\u0451": "e",
  "\u04bb": "h",
  "\u0456": "i",
  "\u0457": "i",
  "\u0458": "j",
  "\u043a": "k",
  "\u04cf": "l",
  "\u043c": "m",
  "\u043d": "h",
  "\u043e": "o",
  "\u0440": "p",
  "\u051b": "q",
  "\u0433": "r",
  "\u0455": "s",
  "\u0442": "t",
  "\u0446": "u",
  "\u0475": "v",
  "\u051d": "w",
  "\u0445": "x",
  "\u0443": "y",
  "\u0437": "3",
  "\u044c": "b",
  "\u043f": "n",
  // Greek
  "\u03b1": "a",
  "\u03b2": "b",
  "\u03f2": "c",
  "\u03b4": "d",
  "\u03b5": "e",
  "\u03b7": "n",
  "\u03b9": "i",
  "\u03ba": "k",
  "\u03bd": "v",
  "\u03bf": "o",
  "\u03c1": "p",
  "\u03c4": "t",
  "\u03c5": "u",
  "\u03c7": "x",
  "\u03b3": "y",
  "\u03b6": "z",
  "\u03bc": "u",
  "\u03c9": "w",
  // Latin small capitals and other lookalikes
  "\u1d00": "a",
  "\ua730": "f",
  "\u0251": "a",
  "\u0299": "b",
  "\u1d04": "c",
  "\u1d05": "d",
  "\u1d07": "e",
  "\u0262": "g",
  "\u029c": "h",
  "\u026a": "i",
  "\u1d0a": "j",
  "\u1d0b": "k",
  "\u029f": "l",
  "\u1d0d": "m",
  "\u0274": "n",
  "\u1d0f": "o",
  "\u1d18": "p",
  "\u0280": "r",
  "\ua731": "s",
  "\u1d1b": "t",
  "\u1d1c": "u",
  "\u1d20": "v",
  "\u1d21": "w",
  "\u028f": "y",
  "\u1d22": "z",
  "\u0131": "i",
  "\u017f": "s",
  // Punctuation that matters to rules
  "\u2018": "'",
  "\u2019": "'",
  "\u201A": "'",
  "\u201B": "'",
  "\u2032": "'",
  "\u201C": '"',
  "\u201D": '"',
  "\u201E": '"',
  "\u2033": '"',
  "\u2010": "-",
  "\u2011": "-",
  "\u2012": "-",
  "\u2013": "-",
  "\u2014": "-",
  "\u2212": "-",
  "\uFE58": "-",
  "\uFE63": "-",
  "\u2024": ".",
  "\u3002": ".",
  "\uFF61": ".",
};

/** True for characters that render as nothing and may sit inside a word to break keyword matching. */
export function isInvisible(cp: number): boolean {
  return cp === 0x00AD || cp === 0x034F || cp === 0x061C || cp === 0x115F || cp === 0x1160 ||
    cp === 0x17B4 || cp === 0x17B5 || cp === 0x180E || (cp >= 0x200B && cp <= 0x200F) ||
    (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || cp === 0xFEFF ||
    cp === 0x3164 || cp === 0xFFA0 || (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0100 && cp <= 0xE01EF) ||
    (cp >= 0x1D173 && cp <= 0x1D17A);
}

function isSpace(cp: number): boolean {
  return cp === 0x20 || cp === 0x09 || cp === 0x0A || cp === 0x0B || cp === 0x0C || cp === 0x0D ||
    cp === 0xA0 || cp === 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp === 0x2028 || cp === 0x2029 ||
    cp === 0x202F || cp === 0x205F || cp === 0x3000 || cp === 0x85;
}

const cache = new Map<number, string>();

/** Folds one non-ASCII code point to a short lower-case string ("" drops it). Cached: text repeats. */
function foldCodePoint(cp: number): string {
  const hit = cache.get(cp);
  if (hit !== undefined) return hit;
  let out: string;
  const ch = String.fromCodePoint(cp);
  if (cp >= 0xE0020 && cp <= 0xE007E) {
    // Unicode tag characters spell ASCII invisibly ("ASCII smuggling"): read them as the letters they hide.
    out = String.fromCharCode(cp - 0xE0000).toLowerCase();
  } else if (cp >= 0xE0000 && cp <= 0xE007F) {
    out = "";
  } else if (HOMOGLYPHS[ch] !== undefined) {
    out = HOMOGLYPHS[ch];
  } else {
    const lower = ch.toLowerCase();
    if (HOMOGLYPHS[lower] !== undefined) {
      out = HOMOGLYPHS[lower];
    } else {
      // Compatibility decomposition turns full-width, mathematical and circled letters into ASCII; dropping
      // combining marks removes accents ("\u00efgn\u00f6r\u00e8" -> "ignore").
      const decomposed = ch.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
      out = decomposed.length > 0 && decomposed.length <= 4 ? decomposed : lower;
      if (out.length === 1 && HOMOGLYPHS[out] !== undefined) out = HOMOGLYPHS[out];
    }
  }
  if (cache.size < 65536) cache.set(cp, out);
  return out;
}

/** True for a letter a-z (the folded text's letters). */
export function isLetter(c: number): boolean {
  return c >= 0x61 && c <= 0x7a;
}

/** Separators an attacker puts between single letters: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e". */
export function isSpacer(c: number): boolean {
  return c === 0x20 || c === 0x2e || c === 0x2d || c === 0x5f || c === 0x2a || c === 0x7c || c === 0x2f;
}

/** Any code unit outside ASCII. */
// deno-lint-ignore no-control-regex -- the ASCII range starts at U+0000 on purpose
const NON_ASCII = /[^\x00-\x7f]/;

/** Texts from this long on are tested for ASCII by encoding them (see `isAscii`). */
const ENCODE_FROM = 1024;
/** Most code units `isAscii` encodes at a time, into a buffer of as many bytes made on first use. */
const ENCODE_PART = 1 << 16;
let encodeBuffer: Uint8Array | undefined;
let encoder: TextEncoder | undefined;

/**
 * True when every code unit of `text` is ASCII. A long text is encoded as UTF-8 a part at a time: ASCII is
 * exactly the text whose every unit takes one byte, and the runtimes encode it many times faster than an
 * expression reads it (a unit outside ASCII, a lone surrogate included, takes two bytes or more). The parts grow
 * fourfold from 4096 units: a text beyond ASCII stops the test within the part that shows it, not after all of
 * the text is encoded (on Deno at the encoder's slow path, a text stored two bytes a character).
 */
export function isAscii(text: string): boolean {
  const n = text.length;
  // Text outside ASCII most often shows it early: a look at the start spares encoding all of it.
  if (n < ENCODE_FROM) return !NON_ASCII.test(text);
  if (NON_ASCII.test(text.slice(0, ENCODE_FROM))) return false;
  const bytes = encodeBuffer ??= new Uint8Array(ENCODE_PART);
  encoder ??= new TextEncoder();
  for (
    let i = ENCODE_FROM, size = ENCODE_FROM << 2;
    i < n;
    i += size, size = Math.min(size << 2, ENCODE_PART)
  ) {
    const part = text.slice(i, i + size);
    const { read, written } = encoder.encodeInto(part, bytes);
    if (read !== part.length || written !== part.length) return false;
  }
  return true;
}
/** ASCII whitespace the fold rewrites (tab, vertical tab, form feed to a space; CR to LF). */
const ODD_SPACE = /[\t\v\f\r]/;
/** Where pass 2 could join letter spacing: a stand-alone letter, a spacer, a letter, the same spacer, a letter. */
const LETTER_SPACED = /(?<![a-z0-9])[a-z]([ .\-_*|/])[a-z]\1[a-z](?![a-z0-9])/;
/**
 * A run of spaces and newlines that holds a newline, from its first character (leading spaces, then the
 * newline), which pass 2 collapses to one newline; and a run of two spaces or more, which it collapses to one.
 * A lone newline is left out: it is its own collapse, and a replacement per line costs more than its test.
 * Spaces are tried only where their run starts (`(?<! )`): tried at every space of a long run without a
 * newline, ` +\n` read the rest of the run each time, quadratic (80 000 spaces took 3 s, 50 MB never ended).
 */
const NEWLINE_RUN = /(?<! ) +\n[ \n]*|\n[ \n]+/g;
const SPACES_RUN = / {2,}/g;
/**
 * Matches wherever `ODD_SPACE`, a run of two blanks or `LETTER_SPACED` would: one pass clears the common case.
 * Each alternative starts at a space or spacer (the letter before is a lookbehind), which the engines skip to
 * faster than to the letter `LETTER_SPACED` starts with.
 */
const NOT_PLAIN = /[\t\v\f\r]|[ \n][ \n]|(?<=(?<![a-z0-9])[a-z])([ .\-_*|/])[a-z]\1[a-z](?![a-z0-9])/;
/**
 * `NOT_PLAIN` with upper-case letters where it reads letters: it tells the same of ASCII text before its lower
 * case is made, which text that is not plain (most) never needs whole; Bun makes it at 1-2 ns a character.
 * Not the `i` flag: JavaScriptCore runs that slower.
 */
const NOT_PLAIN_ANY_CASE = new RegExp(NOT_PLAIN.source.replaceAll("a-z", "a-zA-Z"));

/** Options for `fold`. */
export interface FoldOptions {
  /** The caller knows `text` is ASCII. */
  ascii?: boolean;
  /**
   * The index maps may live in buffers the next fold with `reuse` overwrites: for the windows of one long text,
   * read one after another, so that each does not leave megabytes of maps for the collector.
   */
  reuse?: boolean;
}

/**
 * Folds `text` for matching. Linear in the length of `text`.
 *
 * Pure-ASCII text with no letter spacing (almost every argument and most prose) folds with a few native
 * string operations; its index maps are built only when a caller reads them, which happens only when a rule
 * matched. Everything else takes the code-point loop.
 *
 * @param text Any string, including lone surrogates.
 * @param options `ascii: true` when the caller knows `text` is ASCII (it skips that test); `reuse: true` when
 * the caller drops the result before it folds again with `reuse` (see `FoldOptions`).
 * @returns The folded text and its index maps into `text`.
 */
export function fold(text: string, options: FoldOptions = {}): Folded {
  const reuse = options.reuse === true;
  if (text.length <= LOOP_UP_TO) {
    return shortFold(text, reuse) ?? sparseFold(text, reuse) ?? foldFull(text, reuse);
  }
  // Fast native scans clear the common case: ASCII with no odd whitespace, whitespace run or letter spacing
  // folds to its lower case, character for character.
  if (!options.ascii && !isAscii(text)) return sparseFold(text, reuse) ?? foldFull(text, reuse);
  let t = text.toLowerCase();
  if (!NOT_PLAIN.test(t)) return new LazyFolded(t, text, "identity", reuse);
  // Else one pass over its bytes, as for short texts: the native replacements below cost a call per whitespace
  // run, and text laid out with whitespace (indented code, listings, tables) has one on every line (tab-indented
  // code read at a third of the speed).
  if (text.length <= KEPT_BYTES) {
    const f = shortFold(text, reuse);
    if (f !== null) return f;
  }
  // Longer texts (a caller's own, not the windows of a scan): single-purpose tests tell which occurs.
  t = spacesFolded(t);
  if (LETTER_SPACED.test(t)) return foldFullAscii(text, reuse, t);
  // Two replacements by plain strings, not a function called per run: each run holding a newline becomes one
  // newline, then each run of spaces one space. Only a run of two or more shortens the text.
  const collapsed = t.replace(NEWLINE_RUN, "\n").replace(SPACES_RUN, " ");
  return collapsed.length === t.length
    ? new LazyFolded(t, text, "identity", reuse)
    : new LazyFolded(collapsed, text, "collapsed spaces", reuse);
}

/**
 * The fold of `text` when it is ASCII (null when it is not), and for a short text in one loop (see `loopFold`),
 * which tells on the way whether it is ASCII: a caller that needs to know and to fold reads the text once.
 */
export function asciiFold(text: string, options: FoldOptions = {}): Folded | null {
  const reuse = options.reuse === true;
  if (text.length > LOOP_UP_TO) return isAscii(text) ? fold(text, { ascii: true, reuse }) : null;
  return shortFold(text, reuse);
}

/**
 * The fold of `text` (at most `KEPT_BYTES` units, which `loopFold` folds in the kept byte buffer) when it is
 * ASCII, null when it is not: `loopFold`, or the full fold where it finds letter spacing (which it tells only of
 * ASCII text).
 */
function shortFold(text: string, reuse: boolean): Folded | null {
  const f = loopFold(text, reuse);
  if (typeof f === "object") return f;
  return f === "letter spaced" ? foldFullAscii(text, reuse, spacesFolded(text.toLowerCase())) : null;
}

/** `t`, ASCII in lower case, with the odd spaces rewritten as the fold rewrites them (see `ASCII`). */
function spacesFolded(t: string): string {
  return ODD_SPACE.test(t) ? t.replace(/[\t\v\f]/g, " ").replace(/\r/g, "\n") : t;
}

/**
 * The fold of a text known to fold to its lower case (the rule screen, screen.ts, tells it for the texts it
 * judges), with no test: it would read the text again to learn what is known.
 */
export function lowerFold(text: string): Folded {
  return new LazyFolded(text.toLowerCase(), text, "identity", true);
}

/**
 * Texts from this long on may take `sparseFold`: on shorter ones its native calls and, where a rule matched, its
 * maps built after cost about what the loop costs (Bun, dev rows of 256 to 1024 units).
 */
const SPARSE_FROM = 1024;
/**
 * `sparseFold` leaves a text to the loop where more than one character in this many is beyond ASCII: among its
 * first `PROBE_UNITS` units, or (after the first `SPARSE_SLACK` such characters) in what it has read of a part
 * (see `PART_FROM`). Text dense beyond ASCII (Cyrillic, Chinese: Deno x0.5-0.8 read so) goes to the loop having
 * cost it a look at its start; text as dense as one character in 6 (emoji prose) or 14 (French) reads faster
 * so (x1.1-1.5).
 */
const UNITS_PER_CHAR = 5;
const SPARSE_SLACK = 16;
const PROBE_UNITS = 64;
/** `sparseFold` encodes and reads a text in parts, growing fourfold from this many units up to `PART_MOST`. */
const PART_FROM = 1 << 10;
const PART_MOST = 1 << 16;
/** The UTF-8 of a part (see `PART_FROM`), made on first use: three bytes a unit at most, and room for a pair. */
let partBytes: Uint8Array | undefined;
/** Where `sparseFold` notes the runs beyond ASCII (start, end pairs); grown as needed, kept between calls. */
let runList: Int32Array = new Int32Array(64);
/** Where `sparseFold` notes the blanks that join the unit before (see `SparseState`); kept as `runList` is. */
let blankList: Int32Array = new Int32Array(64);
/**
 * Where a fold with `reuse` keeps its runs for its maps, which it builds on first use (see `FoldOptions`): the
 * next such fold overwrites them. Not `runList`, which every fold writes.
 */
let keptRuns: Int32Array = new Int32Array(0);
/**
 * The UTF-8 decoder of every fold's text, which keeps a leading U+FEFF (there is none in a fold, but the count
 * must hold); made on first use.
 */
const utf8Exact = lazy(() => new TextDecoder("utf-8", { ignoreBOM: true }));

/**
 * The fold of `text`, beyond ASCII, when it is mostly ASCII (the typographic quotes, dashes and accents of
 * everyday prose), read as UTF-8: each ASCII byte is folded by the ASCII table, each character beyond ASCII as
 * the code-point loop folds it, each whitespace run collapsed on the way (as `loopFold` does), and the folded
 * UTF-8 decoded once; the maps are built only when read (see `sparseMaps`). The loop instead reads two bytes a
 * character with `charCodeAt`, writes three buffers and decodes its units as UTF-16; and the lead finder and
 * the word sets, which read the folded text as UTF-8, find it made (see `keepUtf8`). Undefined where the loop
 * must fold it: a short text, one dense beyond ASCII (see `UNITS_PER_CHAR`), one holding U+FFFD (a lone
 * surrogate encodes as that), or letter spacing.
 *
 * @param text Any string, including lone surrogates.
 * @param reuse As for `fold` (see `FoldOptions`).
 * @returns The fold, or undefined when `foldFull` must make it.
 */
export function sparseFold(text: string, reuse: boolean): Folded | undefined {
  const n = text.length;
  if (n < SPARSE_FROM) return undefined;
  // Text dense beyond ASCII most often shows it at once; left to the loop before any buffer is touched.
  for (let i = 0, probe = 0; i < PROBE_UNITS; i++) {
    if (text.charCodeAt(i) >= 0x80 && ++probe > PROBE_UNITS / UNITS_PER_CHAR) return undefined;
  }
  // Into the kept byte buffer (see `keepUtf8`), never one made for a fold: a long scan's windows (up to a
  // million units) would each leave megabytes for the collector (Deno's RSS +38 MiB for 50 MB). The fold of
  // mostly ASCII takes a little more than a byte a unit; whether it fits is checked as it is written (see
  // `sparsePart`), and a text longer than the buffer is left to the loop.
  if (n + MOST_BYTES > KEPT_BYTES) return undefined;
  const src = partBytes ??= new Uint8Array(3 * PART_MOST + 8);
  const out = bytesFor(Math.min(3 * n + MOST_BYTES, KEPT_BYTES));
  const st = new SparseState(out, n);
  for (let p = 0, size = PART_FROM; p < n; size = Math.min(size << 2, PART_MOST)) {
    let e = Math.min(n, p + size);
    // A part does not end between the two units of a pair.
    const end = text.charCodeAt(e - 1);
    if (e < n && end >= 0xD800 && end <= 0xDBFF) e++;
    const { written } = (encoder ??= new TextEncoder()).encodeInto(
      p === 0 && e === n ? text : text.slice(p, e),
      src,
    );
    if (!sparsePart(st, src, written, p)) return undefined;
    p = e;
  }
  const t = utf8Exact().decode(st.out.subarray(0, st.k));
  // Letter spacing takes the loop: where it may start, the test tells every place the loop would join (and a
  // few more: collapsed runs of blanks leave no letter spacing that was not there, and may make some).
  if (st.spaced && LETTER_SPACED.test(t)) return undefined;
  // The bytes for the readers of the text: ASCII (no unit took more than a byte) as `asciiBytes` would give them,
  // so that they take their ASCII paths, else its UTF-8.
  if (st.wider === 0) keepBytes(t);
  else keepUtf8(t, st.k);
  if (st.b === 0 && st.identity) return new LazyFolded(t, text, "identity", reuse);
  const runs = runsFor(st, reuse);
  return st.b === 0
    ? new LazyFolded(t, text, "sparse", reuse, runs)
    : new LazyFolded(t, text, "sparse", reuse, runs, st.blanks.slice(0, st.b), t.length + st.b);
}

/**
 * The runs `st` noted, for a fold's maps: in `keptRuns` where the fold has `reuse`, else in a copy of their own.
 * (A window of text dense with characters beyond ASCII has a run every few units: a copy per window would leave
 * a window's length in bytes for the collector, window after window.)
 */
function runsFor(st: SparseState, reuse: boolean): Int32Array {
  if (!reuse) return st.runs.slice(0, st.r);
  if (keptRuns.length < st.r) keptRuns = grownBy(keptRuns, st.r - keptRuns.length);
  const runs = keptRuns.subarray(0, st.r);
  runs.set(st.runs.subarray(0, st.r));
  return runs;
}

/** What `sparseFold` has made so far, carried from one part to the next (see `sparsePart`). */
class SparseState {
  /** The folded UTF-8, `k` bytes so far. */
  readonly out: Uint8Array;
  k = 0;
  /** The runs beyond ASCII (start, end pairs of original units), `r` slots so far. */
  runs: Int32Array = runList;
  r = 0;
  /** Characters beyond ASCII read. */
  beyond = 0;
  /** Whether each of them folded to one unit and was one unit. */
  identity = true;
  /**
   * Pass 2's work (see `loopFold`): each blank after a blank, which joins the unit before and is not written
   * (its index among pass 1's units; `b` slots so far), and whether letter spacing may start somewhere.
   */
  blanks: Int32Array = blankList;
  b = 0;
  spaced = false;
  /** Bytes written less units written so far: pass 1's unit written at `out[k]` is unit `k - wider + b`. */
  wider = 0;
  /** The kinds (see `BLANK`) of pass 1's last two units. */
  last = 0;
  before = 0;
  /** The text's length. */
  readonly n: number;
  constructor(out: Uint8Array, n: number) {
    this.out = out;
    this.n = n;
  }
}

/**
 * Folds one part of `sparseFold`'s text, whose UTF-8 is `src[0, written)` and which starts at original unit `p`,
 * onto `st`; false where the loop must fold the text (see `sparseFold`). A function of its own: written inside
 * the loop over parts, V8 left its optimized loop at each part's end (a deopt per part) and the fold ran 1.7
 * times as long.
 */
function sparsePart(st: SparseState, src: Uint8Array, written: number, p: number): boolean {
  const out = st.out;
  const cap = out.length;
  const known = bmpFolds ??= new Uint16Array(0x10000);
  const kind = kinds ??= kindsOf();
  let { k, r, runs, beyond, identity, blanks, b: nb, spaced, last, before, wider } = st;
  const beyondBefore = beyond;
  // Bytes read less units read so far in this part: the unit of byte `i` is `p + i - extra`.
  let extra = 0;
  // A byte beyond ASCII after the part ends the loop over ASCII below without a test of the index.
  src[written] = 0xFF;
  for (let i = 0; i < written; i++) {
    // A stretch of ASCII in a loop of its own: the engines keep its few variables in registers.
    let b = src[i];
    for (; b < 0x80; b = src[++i]) {
      const kc = kind[b];
      const m = ASCII[b];
      if ((kc & last & BLANK) === 0) out[k++] = m;
      else {
        // A blank after a blank joins the run's one unit so far, a newline when either is one (see `finish`).
        if (nb === blanks.length) blanks = blankList = grownBy(blanks, 1);
        blanks[nb] = k - wider + nb;
        nb++;
        if (m === 0x0a) out[k - 1] = m;
      }
      if ((kc & (last >> 1) & ~(before >> 2) & SPACER) !== 0 && !spaced) {
        spaced = spacedAt(src, i, written, m);
      }
      before = last;
      last = kc;
    }
    if (i >= written) break;
    const at = p + i - extra;
    // Text dense beyond ASCII gives up early, having cost little (see `UNITS_PER_CHAR`); told of each part, so
    // that a window of ASCII that reaches into such text gives up there, not once its whole is as dense.
    const inPart = ++beyond - beyondBefore;
    if (inPart > SPARSE_SLACK && inPart * UNITS_PER_CHAR > at - p) return false;
    let cp: number;
    let width = 1;
    if (b < 0xE0) {
      cp = ((b & 0x1F) << 6) | (src[++i] & 0x3F);
      extra += 1;
    } else if (b < 0xF0) {
      cp = ((b & 0x0F) << 12) | ((src[i + 1] & 0x3F) << 6) | (src[i + 2] & 0x3F);
      i += 2;
      extra += 2;
      // A lone surrogate encodes as U+FFFD: the loop keeps it, so it must fold the text.
      if (cp === 0xFFFD) return false;
    } else {
      cp = ((b & 0x07) << 18) | ((src[i + 1] & 0x3F) << 12) | ((src[i + 2] & 0x3F) << 6) |
        (src[i + 3] & 0x3F);
      i += 3;
      extra += 2;
      width = 2;
    }
    // Room for this character's fold and a byte for each unit after it (an ASCII one takes one; the check
    // before each character beyond ASCII, and the text's length at the start, keep it so).
    if (k + MOST_BYTES + st.n - at > cap) return false;
    const kf = width === 1 ? known[cp] : 0;
    // The folded units: one known (`kf`), or those of the fold made here; none for a hidden character.
    const f = kf >= 2 ? undefined : kf === 1 ? "" : foldOf(cp);
    if (f !== undefined && width === 1 && kf === 0) noteFold(known, cp, f);
    if (f !== undefined && (width !== 1 || f.length !== 1)) identity = false;
    const units = f === undefined ? 1 : f.length;
    for (let j = 0; j < units; j++) {
      const c = f === undefined ? kf - 2 : f.charCodeAt(j);
      const d = j + 1 < units ? f!.charCodeAt(j + 1) : 0;
      if (c >= 0xD800 && c <= 0xDBFF && d >= 0xDC00 && d <= 0xDFFF) {
        // A pair: two word units.
        k = putCodePoint(out, k, ((c - 0xD800) << 10) + (d - 0xDC00) + 0x10000);
        wider += 2;
        before = last = WORD;
        j++;
        continue;
      }
      // Pass 2 as for ASCII; where letter spacing may start, the text is tested for it after.
      const kc = c < 0x80 ? kind[c] : WORD;
      if ((kc & last & BLANK) === 0) {
        const at1 = k;
        k = putUnit(out, k, c);
        wider += k - at1 - 1;
      } else {
        if (nb === blanks.length) blanks = blankList = grownBy(blanks, 1);
        blanks[nb] = k - wider + nb;
        nb++;
        if (c === 0x0a) out[k - 1] = c;
      }
      if ((kc & (last >> 1) & ~(before >> 2) & SPACER) !== 0) spaced = true;
      before = last;
      last = kc;
    }
    // The runs beyond ASCII, in original units, for the maps (see `sparseMaps`).
    if (r > 0 && runs[r - 1] === at) runs[r - 1] = at + width;
    else {
      if (r + 2 > runs.length) runs = runList = grownBy(runs, 2);
      runs[r++] = at;
      runs[r++] = at + width;
    }
  }
  Object.assign(st, { k, r, runs, beyond, identity, blanks, b: nb, spaced, last, before, wider });
  return true;
}

/**
 * Whether letter spacing may start at the spacer `m` (folded) at `src[i]`, after a lone letter: a letter, the
 * same spacer and a lone letter follow (`loopFold`'s test), or a byte beyond ASCII or the part's end comes
 * before it is told (then the text is tested after).
 */
function spacedAt(src: Uint8Array, i: number, written: number, m: number): boolean {
  if (i + 4 >= written) return true;
  const a = src[i + 1];
  const b = src[i + 2];
  const c = src[i + 3];
  const d = src[i + 4];
  if ((a | b | c | d) >= 0x80) return true;
  return isLetter(ASCII[a]) && ASCII[b] === m && isLetter(ASCII[c]) && !isWordUnit(ASCII[d]);
}

/** Most UTF-8 bytes one character folds to: four units (see `foldCodePoint`) of three bytes. */
const MOST_BYTES = 12;

/** Writes code unit `c` (no surrogate) as UTF-8 at `out[k]`; returns the index after it. */
function putUnit(out: Uint8Array, k: number, c: number): number {
  if (c < 0x80) out[k++] = c;
  else if (c < 0x800) {
    out[k++] = 0xC0 | (c >> 6);
    out[k++] = 0x80 | (c & 0x3F);
  } else {
    out[k++] = 0xE0 | (c >> 12);
    out[k++] = 0x80 | ((c >> 6) & 0x3F);
    out[k++] = 0x80 | (c & 0x3F);
  }
  return k;
}

/** Writes code point `cp` (beyond the BMP) as UTF-8 at `out[k]`; returns the index after it. */
function putCodePoint(out: Uint8Array, k: number, cp: number): number {
  out[k++] = 0xF0 | (cp >> 18);
  out[k++] = 0x80 | ((cp >> 12) & 0x3F);
  out[k++] = 0x80 | ((cp >> 6) & 0x3F);
  out[k++] = 0x80 | (cp & 0x3F);
  return k;
}

/** What the code-point loop folds code point `cp` (beyond ASCII) to: a space, a newline, nothing, or its fold. */
function foldOf(cp: number): string {
  if (isSpace(cp)) return cp === 0x2028 || cp === 0x2029 || cp === 0x85 ? "\n" : " ";
  return isInvisible(cp) ? "" : foldCodePoint(cp);
}

/**
 * Notes in `known` (see `bmpFolds`) that BMP code point `cp` (no surrogate) folds to `f` (`foldOf`), where that is
 * one unit or none: the next time, both folds read the table instead of working it out.
 */
function noteFold(known: Uint16Array, cp: number, f: string): void {
  if (f.length <= 1) known[cp] = f.length === 0 ? 1 : f.charCodeAt(0) < 0xFFFE ? f.charCodeAt(0) + 2 : 0;
}

/**
 * The maps of pass 1 of the code-point loop over `text` as `sparseFold` read it (`runs`: the start and end of
 * each run beyond ASCII), from index 0 of `s1` and `e1`: each ASCII unit its own, each character of a run its
 * fold's units (see `foldOf`). What `foldFull` writes.
 */
function sparseMaps(text: string, runs: Int32Array, s1: Int32Array, e1: Int32Array): void {
  const n = text.length;
  let m = 0;
  let from = 0;
  for (let q = 0; q <= runs.length; q += 2) {
    const a = q < runs.length ? runs[q] : n;
    // (a loop: the stretches between runs are short, and a view and a native copy cost more, Bun's most)
    for (let i = from; i < a; i++, m++) {
      s1[m] = i;
      e1[m] = i + 1;
    }
    if (q === runs.length) break;
    const b = runs[q + 1];
    for (let i = a; i < b;) {
      const cp = text.codePointAt(i)!;
      // (how many units it folds to: from `bmpFolds`, which the fold filled, where it knows)
      const kf = cp <= 0xffff ? bmpFolds![cp] : 0;
      const units = kf >= 2 ? 1 : kf === 1 ? 0 : foldOf(cp).length;
      const width = cp > 0xffff ? 2 : 1;
      for (let j = 0; j < units; j++, m++) {
        s1[m] = i;
        e1[m] = i + width;
      }
      i += width;
    }
    from = b;
  }
}

/**
 * The maps of pass 2 from pass 1's maps `s1`, `e1` (`m` units; no letter spacing), into `starts` and `ends`: each
 * unit listed in `joins` (ascending; a blank after a blank) joins the unit before, whose end becomes its end,
 * the maps between copied (see `copyMaps`). What `finish` writes.
 */
function joinedMaps(
  joins: Int32Array,
  s1: Int32Array,
  e1: Int32Array,
  m: number,
  starts: Int32Array,
  ends: Int32Array,
): void {
  let from = 0;
  let k = 0;
  for (let q = 0; q < joins.length; q++) {
    const j = joins[q];
    copyMaps(s1, e1, from, j, starts, ends, k);
    k += j - from;
    ends[k - 1] = e1[j];
    from = j + 1;
  }
  copyMaps(s1, e1, from, m, starts, ends, k);
}

/**
 * Copies `s1` and `e1` from `i` to `end` into `starts` and `ends` from `k` on: natively from `COPY_MAPS_FROM`
 * units on, else by a loop (a view and a native copy cost more than a short stretch).
 */
function copyMaps(
  s1: Int32Array,
  e1: Int32Array,
  i: number,
  end: number,
  starts: Int32Array,
  ends: Int32Array,
  k: number,
): void {
  if (end - i >= COPY_MAPS_FROM) {
    starts.set(s1.subarray(i, end), k);
    ends.set(e1.subarray(i, end), k);
    return;
  }
  for (; i < end; i++, k++) {
    starts[k] = s1[i];
    ends[k] = e1[i];
  }
}

/**
 * ASCII texts up to this long fold in one loop over their code units (`loopFold`) at once: the native string
 * operations read a text several times, and cost more per call than a short text costs to read. Longer ones
 * take the loop where a native test finds them not plain (see `fold`).
 */
const LOOP_UP_TO = 1 << 14;

/**
 * What `loopFold` reads per ASCII unit, of the unit the fold writes for it: a blank (space, newline), a spacer
 * of letter spacing, a letter, a letter or digit.
 */
const BLANK = 1;
const SPACER = 2;
const LETTER = 4;
const WORD = 8;
/** The kinds of each ASCII unit (see `BLANK`), made on first use. */
let kinds: Uint8Array | undefined;

/** The kinds of the ASCII units (see `BLANK`). */
function kindsOf(): Uint8Array {
  const k = new Uint8Array(128);
  for (let c = 0; c < 128; c++) {
    const m = ASCII[c];
    k[c] = (m === 0x20 || m === 0x0a ? BLANK : 0) | (isSpacer(m) ? SPACER : 0) |
      (isLetter(m) ? LETTER | WORD : 0) | (m >= 0x30 && m <= 0x39 ? WORD : 0);
  }
  return k;
}

/** The byte at `i` of `bytes` (ASCII) as the fold writes it, 0 from `n` on. */
function foldedAt(bytes: Uint8Array, i: number, n: number): number {
  return i < n ? ASCII[bytes[i]] : 0;
}

/**
 * The fold of an ASCII text without letter spacing, in one pass over its bytes in the buffer the later passes
 * read (see `asciiBytes`), which it folds in place: lower case, odd spaces rewritten, each whitespace run one
 * space or one newline, with the maps of `LazyFolded`. What the native operations of `fold` give, and the same
 * tests: `"not ascii"` or `"letter spaced"` (the `LETTER_SPACED` test, made at each spacer after a lone
 * letter) where the code-point loop must fold it. Bytes, not `charCodeAt`: the engines encode ASCII many times
 * faster than a loop reads a string, and read a typed array several times faster.
 */
function loopFold(text: string, reuse: boolean): Folded | "not ascii" | "letter spaced" {
  const n = text.length;
  if (heldBytes(text) === null && !asciiInto(text)) return "not ascii";
  // Plain text (no odd space, run of blanks or letter spacing) folds to its lower case: native operations
  // tell it at a fraction of the loop's cost, and end early on text that is not.
  if (!NOT_PLAIN_ANY_CASE.test(text)) return new LazyFolded(text.toLowerCase(), text, "identity", reuse);
  const bytes = bytesFor(n);
  const kind = kinds ??= kindsOf();
  let k = 0;
  // The kinds of the two units before `i` (0: none).
  let last = 0;
  let before = 0;
  // No branch per unit but the rare one: whether a unit is a blank changes at every word's ends, too often
  // for the processor to guess.
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    const kc = kind[c];
    const m = ASCII[c];
    // A blank after a blank: the run's one unit so far (at `j`) becomes a newline when either is one.
    const more = kc & last & BLANK;
    const j = k - more;
    const was = m ^ ((bytes[j] ^ m) & (0 - more | 0));
    bytes[j] = (was & m) | ((was ^ m) & 0x0a);
    k = j + 1;
    // A spacer after a lone letter: letter spacing if a letter, the same spacer and a lone letter follow.
    if ((kc & (last >> 1) & ~(before >> 2) & SPACER) !== 0) {
      if (
        i + 3 < n && isLetter(foldedAt(bytes, i + 1, n)) && foldedAt(bytes, i + 2, n) === m &&
        isLetter(foldedAt(bytes, i + 3, n)) && !isWordUnit(foldedAt(bytes, i + 4, n))
      ) return "letter spaced";
    }
    before = last;
    last = kc;
  }
  const identity = k === n;
  const t = bytesToString(bytes, k);
  keepBytes(t);
  return new LazyFolded(t, text, identity ? "identity" : "collapsed spaces", reuse);
}

/** Units `asciiInto` looks at before it encodes; texts shorter than `COPY_UNDER` it copies unit by unit. */
const PROBE = 16;
const COPY_UNDER = 128;

/** Whether `text` (at most `KEPT_BYTES` long) is ASCII, its bytes then in the kept buffer (see `keepBytes`). */
function asciiInto(text: string): boolean {
  const n = text.length;
  // A short text is copied by a loop: a call to the encoder costs more than reading a few dozen units.
  if (n < COPY_UNDER) {
    const bytes = bytesFor(n);
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) return false;
      bytes[i] = c;
    }
    keepBytes(text);
    return true;
  }
  // Text beyond ASCII most often shows it at once (a homoglyph word, a run of hidden characters).
  for (let i = 0; i < PROBE; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return asciiBytes(text) !== null;
}

/**
 * The first `k` bytes (ASCII) as a string: one native decode, which costs about 0.1 us on either engine
 * whatever the length, or for a few bytes `fromCharCode` of a list of them (see `unitList`), which costs
 * less.
 */
function bytesToString(bytes: Uint8Array, k: number): string {
  if (k >= LIST_UNDER) return utf8Exact().decode(bytes.subarray(0, k));
  unitList.length = k;
  for (let i = 0; i < k; i++) unitList[i] = bytes[i];
  return String.fromCharCode.apply(null, unitList);
}

/** Strings shorter than this are made from a list of their units by `bytesToString`. */
const LIST_UNDER = 32;

/**
 * Where a lazily folded text's maps come from: `"identity"` when folded character `i` is original character
 * `i`, `"collapsed spaces"` when each whitespace run of the original is one folded character (see `collapsedMaps`),
 * `"sparse"` when `sparseFold` folded it (see `sparseMaps`); `"built"` when the maps come made (see `finish`).
 */
type MapSource = "identity" | "collapsed spaces" | "sparse" | "built";

/**
 * A folded text whose maps are built on first use (in the shared buffers when `reuse`, see `FoldOptions`), or
 * come made (`"built"`). A class, not an object literal with getters: those are slow to create. Every fold is
 * one, each field always set and of one type: folds of several shapes made Bun leave its compiled scanner.
 */
class LazyFolded implements Folded {
  readonly text: string;
  readonly identity: boolean;
  #original: string;
  #reuse: boolean;
  #built: boolean;
  #starts: Int32Array;
  #ends: Int32Array;
  /**
   * For `"sparse"` maps: the runs beyond ASCII `sparseFold` found; where pass 2 collapsed whitespace runs
   * (`#passOne` above 0), the blanks that joined the unit before and the length of pass 1 (see `joinedMaps`).
   */
  #runs: Int32Array;
  #joins: Int32Array;
  #passOne: number;
  #sparse: boolean;
  constructor(
    text: string,
    original: string,
    maps: MapSource,
    reuse: boolean,
    runs: Int32Array = EMPTY_I32,
    joins: Int32Array = EMPTY_I32,
    passOne = 0,
  ) {
    this.text = text;
    this.identity = maps === "identity";
    this.#original = original;
    this.#reuse = reuse;
    this.#built = false;
    this.#starts = EMPTY_I32;
    this.#ends = EMPTY_I32;
    this.#runs = runs;
    this.#joins = joins;
    this.#passOne = passOne;
    this.#sparse = maps === "sparse";
  }
  /** A fold whose maps are made. */
  static built(text: string, starts: Int32Array, ends: Int32Array): LazyFolded {
    const f = new LazyFolded(text, text, "built", false);
    f.#built = true;
    f.#starts = starts;
    f.#ends = ends;
    return f;
  }
  get starts(): Int32Array {
    if (!this.#built) this.#build();
    return this.#starts;
  }
  get ends(): Int32Array {
    if (!this.#built) this.#build();
    return this.#ends;
  }
  #build(): void {
    const n = this.text.length;
    const shared = outBuffersFor(n, this.#reuse);
    const starts = shared && this.#reuse ? shared[1].subarray(0, n) : new Int32Array(n);
    const ends = shared && this.#reuse ? shared[2].subarray(0, n) : new Int32Array(n);
    if (this.identity) {
      for (let i = 0; i < n; i++) {
        starts[i] = i;
        ends[i] = i + 1;
      }
    } else if (this.#sparse && this.#passOne === 0) {
      sparseMaps(this.#original, this.#runs, starts, ends);
    } else if (this.#sparse) {
      // Pass 1's maps in buffers of their own (a pass-1 set where `reuse` lets it), then pass 2's from them.
      const m = this.#passOne;
      const [, s1, e1] = passOneBuffersOf(m, this.#reuse);
      sparseMaps(this.#original, this.#runs, s1, e1);
      joinedMaps(this.#joins, s1, e1, m, starts, ends);
    } else {
      collapsedMaps(this.#original, starts, ends);
    }
    this.#built = true;
    this.#starts = starts;
    this.#ends = ends;
  }
}

/**
 * Writes into `starts` and `ends` (as long as the folded text) the maps of the fold of ASCII text with no letter
 * spacing: each run of whitespace (tab, LF, vertical tab, form feed, CR, space) is one folded character, every
 * other character is itself. What the code-point loop would build for such text, without its buffers and its
 * second pass.
 */
function collapsedMaps(original: string, starts: Int32Array, ends: Int32Array): void {
  const n = original.length;
  for (let i = 0, k = 0; i < n; k++) {
    starts[k] = i;
    const c = original.charCodeAt(i++);
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) {
      // (the bound tested before the read: a read past the end, at a text that ends in whitespace, made
      // JavaScriptCore leave its optimised code there every time)
      for (; i < n; i++) {
        const d = original.charCodeAt(i);
        if (d !== 0x20 && (d < 0x09 || d > 0x0d)) break;
      }
    }
    ends[k] = i;
  }
}

/** The code-point loop: any string, with index maps (in the shared buffers when `reuse`, see `FoldOptions`). */
function foldFull(text: string, reuse: boolean): Folded {
  const n = text.length;
  // Pass 1: per code point, fold to lower-case ASCII-leaning units, drop invisibles, mark spaces. Buffers
  // start at the input size or are the ones kept from the last call, and double where decompositions expand
  // the text or it is longer than those: a window that reaches across characters folding to nothing (a run of
  // zero-width ones) may be longer than the kept buffers, its fold seldom.
  let cap = n + 16;
  let [units, s1, e1] = passOneBuffers(cap, reuse);
  cap = units.length;
  const known = bmpFolds ??= new Uint16Array(0x10000);
  // While each unit folds to one unit it knows, unit `i` is folded unit `i` (as in `oneToOne`, here written out:
  // a call costs V8 a fifth on text folded so whole).
  let m = 0;
  // Whether every unit so far folded to itself, one for one: a fold that changed nothing is the original
  // string, not a copy of it (a long text of emoji or of a script without case left the collector a copy
  // per window: Bun's RSS +123 MiB for 50 MB of spaced emoji).
  let same = 0;
  for (const stop = Math.min(n, cap); m < stop; m++) {
    const c = text.charCodeAt(m);
    const k = c < 0x80 ? ASCII[c] + 2 : known[c];
    if (k < 2) break;
    units[m] = k - 2;
    same |= k - 2 - c;
  }
  // Where that stretch is the whole text and pass 2 has nothing to join or collapse, the fold is the identity
  // map's: no map is written at all (homoglyph text folds so).
  if (m === n && quietUntil(units, 0, m, 0) >= m - 1) {
    return new LazyFolded(same === 0 ? text : unitsToString(units, m), text, "identity", reuse);
  }
  // The kept `iotaTo` list, taken for the first stretch whose maps are copied natively; never one longer than
  // that list's most: a window that stretches across a long run of hidden characters would make one per fold.
  const most = Math.min(n, SCRATCH_UNITS);
  // (empty until taken: Bun left `stretchMaps` where it was undefined)
  let at = m >= COPY_MAPS_FROM ? iotaTo(most) : EMPTY_I32;
  stretchMaps(at, 0, m, s1, e1, 0);
  for (let i = m; i < n;) {
    const c = text.charCodeAt(i);
    // ASCII, or a character outside ASCII folded before to one unit or to nothing (see `bmpFolds`).
    const k = c < 0x80 ? ASCII[c] + 2 : known[c];
    if (k === 1) {
      // Characters folded to nothing come in runs (hidden characters): skip the run in a loop of its own.
      for (i++; i < n && known[text.charCodeAt(i)] === 1; i++);
      same = 1;
      continue;
    }
    if (k !== 0) {
      if (m === cap) {
        cap *= 2;
        [units, s1, e1] = grow(units, s1, e1, cap);
      }
      // A stretch of units that each fold to one unit (most text beyond ASCII: typographic quotes, dashes,
      // accents): only the units are written in the loop, and the maps of the stretch after.
      const end = oneToOne(text, i, Math.min(n, i + cap - m), units, m, known);
      same |= stretchChanged;
      if (end - i >= COPY_MAPS_FROM && at.length === 0) at = iotaTo(most);
      stretchMaps(at, i, end, s1, e1, m);
      m += end - i;
      i = end;
      continue;
    }
    let cp = c;
    let width = 1;
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xDC00 && d <= 0xDFFF) {
        if (pairFoldsToItself(c, d)) {
          if (m + 2 > cap) {
            cap *= 2;
            [units, s1, e1] = grow(units, s1, e1, cap);
          }
          units[m] = c;
          units[m + 1] = d;
          s1[m] = s1[m + 1] = i;
          e1[m] = e1[m + 1] = i + 2;
          m += 2;
          i += 2;
          continue;
        }
        cp = ((c - 0xD800) << 10) + (d - 0xDC00) + 0x10000;
        width = 2;
      }
    }
    const f = foldOf(cp);
    same = 1; // (rarely a fold to itself: taken as a change, which only costs the copy)
    if (width === 1 && (cp < 0xD800 || cp > 0xDFFF)) noteFold(known, cp, f);
    if (m + f.length > cap) {
      cap = cap * 2 + f.length;
      [units, s1, e1] = grow(units, s1, e1, cap);
    }
    for (let k = 0; k < f.length; k++) {
      units[m] = f.charCodeAt(k);
      s1[m] = i;
      e1[m] = i + width;
      m++;
    }
    i += width;
  }
  return finish(units, s1, e1, m, reuse, text, same === 0);
}

/**
 * Buffers for pass 1 of a fold of at least `cap` units (or the kept ones, which may be shorter, see `SCRATCH_UNITS`).
 * Pass 2 works in place, and the maps of a fold without `reuse` are views of these: only a fold with `reuse`
 * takes the kept ones.
 */
function passOneBuffers(cap: number, reuse: boolean): [Uint16Array, Int32Array, Int32Array] {
  return !reuse
    ? [new Uint16Array(cap), new Int32Array(cap), new Int32Array(cap)]
    : cap <= SMALL_UNITS
    ? smallScratch ??= grow(EMPTY_U16, EMPTY_I32, EMPTY_I32, SMALL_UNITS)
    : scratch();
}

/**
 * `passOneBuffers` of at least `n` units, for a caller that writes all of them at once (not a loop that grows
 * them as it goes, as `foldFull` does): the kept ones where they are long enough, else new ones.
 */
function passOneBuffersOf(n: number, reuse: boolean): [Uint16Array, Int32Array, Int32Array] {
  const buffers = passOneBuffers(n, reuse);
  return buffers[0].length < n ? grow(EMPTY_U16, EMPTY_I32, EMPTY_I32, n) : buffers;
}

/**
 * Pass 1 of `foldFull` from index `i` of `text` while each unit folds to one unit it knows (ASCII, or see
 * `bmpFolds`), up to `stop`: writes the units alone from `units[m]` on, and returns the index it stopped at. Unit
 * `i + d` is then folded unit `m + d`, whose maps `stretchMaps` writes after: two stores a unit fewer in the loop,
 * most of its writes.
 */
function oneToOne(
  text: string,
  i: number,
  stop: number,
  units: Uint16Array,
  m: number,
  known: Uint16Array,
): number {
  let changed = 0;
  for (; i < stop; i++) {
    const c = text.charCodeAt(i);
    const k = c < 0x80 ? ASCII[c] + 2 : known[c];
    if (k < 2) break;
    units[m++] = k - 2;
    changed |= k - 2 - c;
  }
  stretchChanged = changed;
  return i;
}

/** Nonzero when the last `oneToOne` stretch folded some unit to another: its second result. */
let stretchChanged = 0;

/** Stretches up to this long have their maps written by a loop: a native copy costs more to call. */
const COPY_MAPS_FROM = 32;

/**
 * The maps of a stretch `oneToOne` folded, original units `i` to `end` into folded units from `m` on: each
 * folded unit comes from its one original unit. Copied natively from `at` (`iotaTo`'s list, given for a stretch
 * of `COPY_MAPS_FROM` units or more, else empty) where it reaches the stretch's end, else written by a loop.
 */
function stretchMaps(
  at: Int32Array,
  i: number,
  end: number,
  s1: Int32Array,
  e1: Int32Array,
  m: number,
): void {
  if (end - i >= COPY_MAPS_FROM && end < at.length) {
    s1.set(at.subarray(i, end), m);
    e1.set(at.subarray(i + 1, end + 1), m);
    return;
  }
  for (; i < end; i++, m++) {
    s1[m] = i;
    e1[m] = i + 1;
  }
}

/**
 * `foldFull` of ASCII `text`, given what pass 1 makes of it unit for unit (`lower`: its lower case, odd spaces
 * rewritten): pass 1 is then native copies (each unit its own map entry), not a loop.
 */
function foldFullAscii(text: string, reuse: boolean, lower: string): Folded {
  const n = text.length;
  const [units, s1, e1] = passOneBuffersOf(n, reuse);
  units.set(asciiBytes(lower)!.subarray(0, n));
  const at = iotaTo(n);
  s1.set(at.subarray(0, n));
  e1.set(at.subarray(1, n + 1));
  return finish(units, s1, e1, n, reuse, text, false);
}

/** The kept `iotaTo` list, grown as needed up to `SCRATCH_UNITS + 1` entries. */
let iota: Int32Array | undefined;

/**
 * The integers 0 to `n` in order (at least), as pass 1 writes them into both maps for ASCII text: kept between
 * calls up to a window's length, so that native copies write the maps.
 */
function iotaTo(n: number): Int32Array {
  if (iota !== undefined && iota.length > n) return iota;
  const made = new Int32Array(
    n < SCRATCH_UNITS ? Math.min(SCRATCH_UNITS, Math.max(2 * n, 1 << 12)) + 1 : n + 1,
  );
  for (let i = 0; i < made.length; i++) made[i] = i;
  if (made.length <= SCRATCH_UNITS + 1) iota = made;
  return made;
}

/**
 * Per BMP code unit that is no surrogate, how the code-point loop folds it, once it has: 1 for nothing, the
 * one unit it folds to plus 2, 0 when not known yet (or not one unit). Made on first use; text repeats, and a
 * table read costs less than the space, invisible and fold tests.
 */
let bmpFolds: Uint16Array | undefined;

/**
 * Whether the surrogate pair `high`, `low` folds to itself (`foldOf`), as most characters beyond the BMP do
 * (emoji, CJK extensions): worked out once per pair and kept per high surrogate (see `pairFolds`), since emoji
 * come by the thousand in chat and a table read costs less than the cached fold's lookup.
 */
function pairFoldsToItself(high: number, low: number): boolean {
  const row = pairFolds[high - 0xD800] ??= new Uint8Array(0x400);
  let known = row[low - 0xDC00];
  if (known === 0) {
    const cp = ((high - 0xD800) << 10) + (low - 0xDC00) + 0x10000;
    known = row[low - 0xDC00] = foldOf(cp) === String.fromCharCode(high, low) ? SELF_FOLD : OTHER_FOLD;
  }
  return known === SELF_FOLD;
}

/** Per high surrogate, per low one: 0 not worked out yet, else `SELF_FOLD` or `OTHER_FOLD`. */
const pairFolds: (Uint8Array | undefined)[] = [];
const SELF_FOLD = 1;
const OTHER_FOLD = 2;

/**
 * Largest pass-1 buffers kept between calls (in code units): a window of the segmented scan fits, also most of
 * those that stretch across text with no neutral cut. A window writes only as much of them as it is long, and
 * only written pages take memory.
 */
const SCRATCH_UNITS = 1 << 20;
/** Shorter texts' lazily built maps do not take the long set (see `outBuffersFor`), unless they fold with `reuse`. */
const SCRATCH_FROM = 1 << 16;
/**
 * Texts up to this long (most arguments and messages, and 4 KiB pieces of a stream) folded with `reuse` share a
 * small set of their own, made on first use: three typed arrays made per fold cost more than folding a short
 * text.
 */
const SMALL_UNITS = 1 << 13;
let smallScratch: [Uint16Array, Int32Array, Int32Array] | undefined;
/** Map buffers of `SMALL_UNITS` for folds with `reuse` (see `outBuffersFor`), as `outBuffers` is for long ones. */
let smallOut: [Uint16Array, Int32Array, Int32Array] | undefined;
const EMPTY_U16 = new Uint16Array(0);
const EMPTY_I32 = new Int32Array(0);
let scratchBuffers: [Uint16Array, Int32Array, Int32Array] | undefined;
/** Map buffers of `SCRATCH_UNITS` for folds with `reuse` (see `outBuffersFor`), made on first use. */
let outBuffers: [Uint16Array, Int32Array, Int32Array] | undefined;

/**
 * Pass-1 buffers of `SCRATCH_UNITS`, made once: folding is synchronous and pass 2 copies the maps it keeps, so
 * one set serves every fold with `reuse`, and a long text read in windows does not leave a set per window for
 * the collector.
 */
function scratch(): [Uint16Array, Int32Array, Int32Array] {
  return scratchBuffers ??= grow(EMPTY_U16, EMPTY_I32, EMPTY_I32, SCRATCH_UNITS);
}

/** ASCII folding table: upper case to lower, CR to LF, other whitespace to a space. */
const ASCII = asciiFolds();

/**
 * Fills `ASCII`. The loop is in a function, not at the module's top level: there it had V8 compile the
 * module's top-level code to baseline code and re-parse the whole module for its source positions (0.3 to
 * 1.2 ms of Deno's import).
 */
function asciiFolds(): Uint16Array {
  const table = new Uint16Array(128);
  for (let c = 0; c < 128; c++) {
    table[c] = c >= 0x41 && c <= 0x5a
      ? c + 32
      : c === 0x0d
      ? 0x0a
      : c === 0x09 || c === 0x0b || c === 0x0c
      ? 0x20
      : c;
  }
  return table;
}

function grow(
  u: Uint16Array,
  s: Int32Array,
  e: Int32Array,
  cap: number,
): [Uint16Array, Int32Array, Int32Array] {
  const u2 = new Uint16Array(cap);
  u2.set(u);
  const s2 = new Int32Array(cap);
  s2.set(s);
  const e2 = new Int32Array(cap);
  e2.set(e);
  return [u2, s2, e2];
}

/**
 * The first index from `i` on where pass 2 (see `finish`) has work: a blank followed by a blank, or a letter
 * after no word unit (`before` is the unit before `i`) followed by a spacer; else the last index (or `i` when
 * it is `m`). One table read per unit: text that has no such place (most text beyond ASCII) is read at that
 * cost only.
 */
function quietUntil(u: Uint16Array, i: number, m: number, before: number): number {
  const kind = unitKinds ??= unitKindsOf();
  // The kinds (see `BLANK`) of the unit before `i`, of the unit at `i` and of the one after it.
  let kb = kind[before];
  let kc = i < m ? kind[u[i]] : 0;
  for (; i < m - 1; i++) {
    const kd = kind[u[i + 1]];
    if (((kc & kd & BLANK) | ((kc >> 1) & kd & ~(kb >> 2) & SPACER)) !== 0) return i;
    kb = kc;
    kc = kd;
  }
  return i;
}

/** The kinds (see `BLANK`) of every code unit pass 1 writes, made on first use: a word unit beyond ASCII. */
let unitKinds: Uint8Array | undefined;

/** The kinds of all code units (see `unitKinds`): one table read a unit, no test whether it is ASCII. */
function unitKindsOf(): Uint8Array {
  const k = new Uint8Array(0x10000).fill(WORD);
  k.set(kinds ??= kindsOf());
  return k;
}

/**
 * Pass 2: join letter-spaced words and collapse whitespace runs, carrying the index maps along. In place: each
 * output unit takes the place of one input unit or more, so the output never overtakes what is still to read,
 * and text with nothing to join or collapse is read without a write. The maps are views of the pass-1 buffers
 * (which only a fold with `reuse` shares, see `foldFull`), or for such a fold copies in the shared map buffers.
 * `original` is the text folded; `unchanged` says pass 1 folded each of its units to itself, and then a result
 * as long as `original` is `original` itself.
 */
function finish(
  u: Uint16Array,
  s1: Int32Array,
  e1: Int32Array,
  m: number,
  reuse: boolean,
  original: string,
  unchanged: boolean,
): Folded {
  let k = 0;
  let i = 0;
  // The input unit before `i` (0 at the start): the output may have overwritten its place.
  let before = 0;
  while (i < m) {
    // The units up to the next join or run stay as they are: skipped unwritten while nothing has moved, else
    // moved with their maps by native copies (after a blank line, all the rest of the text moves).
    const j = quietUntil(u, i, m, before);
    if (j !== i) {
      before = u[j - 1];
      if (k !== i) {
        u.copyWithin(k, i, j);
        s1.copyWithin(k, i, j);
        e1.copyWithin(k, i, j);
      }
      k += j - i;
      i = j;
    }
    const c = u[i];
    // Letter spacing: at a word start, three or more single letters each followed by the same one spacer.
    if (
      isLetter(c) && (i === 0 || !isWordUnit(before)) && i + 4 < m && isSpacer(u[i + 1]) &&
      isLetter(u[i + 2]) && u[i + 3] === u[i + 1] && isLetter(u[i + 4]) &&
      (i + 5 >= m || !isWordUnit(u[i + 5]))
    ) {
      const sep = u[i + 1];
      let j = i;
      // Consume letter (sep letter)* while each letter stands alone.
      while (j < m && isLetter(u[j]) && (j + 1 >= m || !isWordUnit(u[j + 1]))) {
        const letter = u[j];
        u[k] = letter;
        s1[k] = s1[j];
        e1[k] = e1[j];
        k++;
        before = letter;
        if (
          j + 2 < m && u[j + 1] === sep && isLetter(u[j + 2]) && (j + 3 >= m || !isWordUnit(u[j + 3]))
        ) j += 2;
        else {
          j++;
          break;
        }
      }
      i = j;
      continue;
    }
    if (c === 0x20 || c === 0x0a) {
      let j = i;
      let nl = false;
      while (j < m && (u[j] === 0x20 || u[j] === 0x0a)) {
        if (u[j] === 0x0a) nl = true;
        j++;
      }
      const start = s1[i];
      u[k] = nl ? 0x0a : 0x20;
      s1[k] = start;
      e1[k] = e1[j - 1];
      k++;
      before = 0x20;
      i = j;
      continue;
    }
    if (k !== i) {
      u[k] = c;
      s1[k] = s1[i];
      e1[k] = e1[i];
    }
    before = c;
    k++;
    i++;
  }
  // A fold with `reuse` leaves its maps in the shared map buffers, copied natively, not as views of the pass-1
  // buffers: views of those cost Bun twice the memory over a long scan (RSS +150 MiB for 50 MB, not +85).
  const shared = reuse ? outBuffersFor(k, true) : undefined;
  // (pass 2 only ever shortens the text: at the original's length, an unchanged pass 1 is the original)
  const text = unchanged && k === original.length ? original : unitsToString(u, k);
  // (a `LazyFolded` as every other fold is, not an object literal: see there)
  if (shared === undefined) {
    return LazyFolded.built(text, s1.subarray(0, k), e1.subarray(0, k));
  }
  const starts = shared[1].subarray(0, k);
  const ends = shared[2].subarray(0, k);
  starts.set(s1.subarray(0, k));
  ends.set(e1.subarray(0, k));
  return LazyFolded.built(text, starts, ends);
}

/**
 * The shared buffers whose maps a fold of `m` units takes when `reuse` (pass 2's, or a lazily folded text's),
 * made on first use, or undefined when it takes buffers of its own.
 */
function outBuffersFor(m: number, reuse: boolean): [Uint16Array, Int32Array, Int32Array] | undefined {
  return m <= SMALL_UNITS
    ? smallOut ??= grow(EMPTY_U16, EMPTY_I32, EMPTY_I32, SMALL_UNITS)
    : (m >= SCRATCH_FROM || reuse) && m <= SCRATCH_UNITS
    ? outBuffers ??= grow(EMPTY_U16, EMPTY_I32, EMPTY_I32, SCRATCH_UNITS)
    : undefined;
}

/** Bytes for `utf8String`'s ASCII, made on first use; a window's text fits. */
let asciiStringBytes: Uint8Array | undefined;

/** A list of lone surrogates `utf8String` found: unit index, then byte offset, for each. */
let loneList: Int32Array = new Int32Array(64);

/**
 * The first `k` code units as a string, by way of their UTF-8: both engines decode UTF-8 several times faster
 * than UTF-16 (Deno four times). The fold of ASCII (most folds) decodes to a string of one byte a character:
 * every later pass over it reads half the memory. Beyond ASCII, the bytes are written into the kept buffer
 * where they fit, and are what the readers of the folded text read (see `keepUtf8`): they need not encode it
 * again, which costs Deno as much once more. ASCII is written apart, leaving that buffer to the bytes it
 * holds (most often the original's). A surrogate that is not half of a pair (UTF-8 has none: a text cut
 * inside a pair) is written as the encoder writes it, U+FFFD, and put back into the string between decoded
 * stretches, or, where there are many, the string is built from the units in chunks.
 */
function utf8String(out: Uint16Array, k: number): string {
  const ascii = k <= SCRATCH_UNITS
    ? (asciiStringBytes ??= new Uint8Array(SCRATCH_UNITS)).subarray(0, k)
    : new Uint8Array(k);
  let i = 0;
  for (; i < k; i++) {
    const c = out[i];
    if (c >= 0x80) break;
    ascii[i] = c;
  }
  const decoder = utf8Exact();
  if (i === k) return decoder.decode(ascii);
  const kept = 3 * k <= KEPT_BYTES;
  const bytes = kept ? bytesFor(3 * k) : new Uint8Array(3 * k);
  bytes.set(ascii.subarray(0, i));
  let w = i;
  let lone = 0;
  for (;;) {
    for (; i < k; i++) {
      const c = out[i];
      if (c < 0x80) {
        bytes[w++] = c;
      } else if (c < 0x800) {
        bytes[w++] = 0xC0 | c >> 6;
        bytes[w++] = 0x80 | c & 0x3F;
      } else if ((c & 0xF800) !== 0xD800) {
        bytes[w++] = 0xE0 | c >> 12;
        bytes[w++] = 0x80 | c >> 6 & 0x3F;
        bytes[w++] = 0x80 | c & 0x3F;
      } else {
        const d = i + 1 < k ? out[i + 1] : 0;
        if (c > 0xDBFF || (d & 0xFC00) !== 0xDC00) break;
        const cp = ((c - 0xD800) << 10) + (d - 0xDC00) + 0x10000;
        bytes[w++] = 0xF0 | cp >> 18;
        bytes[w++] = 0x80 | cp >> 12 & 0x3F;
        bytes[w++] = 0x80 | cp >> 6 & 0x3F;
        bytes[w++] = 0x80 | cp & 0x3F;
        i++;
      }
    }
    if (i >= k) break;
    // A lone surrogate, out of the loop above: its test stays one branch there.
    if (lone + 2 > loneList.length) loneList = grownBy(loneList, 2);
    loneList[lone++] = i++;
    loneList[lone++] = w;
    bytes[w++] = 0xEF;
    bytes[w++] = 0xBF;
    bytes[w++] = 0xBD;
  }
  let text: string;
  if (lone === 0) text = decoder.decode(bytes.subarray(0, w));
  else if (lone >> 1 > k >> 10) text = unitsInChunks(out, k);
  else {
    const parts: string[] = [];
    let from = 0;
    for (let p = 0; p < lone; p += 2) {
      parts.push(
        decoder.decode(bytes.subarray(from, loneList[p + 1])),
        String.fromCharCode(out[loneList[p]]),
      );
      from = loneList[p + 1] + 3;
    }
    parts.push(decoder.decode(bytes.subarray(from, w)));
    text = parts.join("");
  }
  if (kept) keepUtf8(text, w);
  return text;
}

/** `lettersOnly`'s bytes and places, grown to the longest text it read (up to `SCRATCH_UNITS`; longer: their own). */
let letterBytes = new Uint8Array(0);
let letterPlaces = new Int32Array(0);
/** Where each letter of the text `lettersOnly` read last stands in it (see `lastLetterPlaces`). */
let placesOfLast = letterPlaces;

/**
 * The letters a-z of `s`, in order (`s` itself when it has nothing else), and where each stands in `s` (see
 * `lastLetterPlaces`). One pass writes both, then one native decode makes the string: a global replace of the
 * runs between letters costs more, and on a long text builds a list of every run first (a window of prose
 * leaves megabytes of them for the collector).
 */
export function lettersOnly(s: string): string {
  const n = s.length;
  const own = n <= SCRATCH_UNITS;
  if (own && n > letterBytes.length) {
    const size = Math.min(SCRATCH_UNITS, Math.max(n, 2 * letterBytes.length, 256));
    letterBytes = new Uint8Array(size);
    letterPlaces = new Int32Array(size);
  }
  const bytes = own ? letterBytes : new Uint8Array(n);
  const at = placesOfLast = own ? letterPlaces : new Int32Array(n);
  let k = 0;
  // Every unit is written, and the count moves past letters only: no branch, as whether a unit is a letter
  // changes at every word's ends, too often for the processor to guess. The folded text is most often ASCII,
  // and a longer one's bytes often made already (the lead finder reads them).
  const src = n >= BYTES_FROM ? asciiBytes(s) : null;
  if (src !== null) {
    for (let i = 0; i < n; i++) {
      const c = src[i];
      bytes[k] = c;
      at[k] = i;
      k += (c - 0x61) >>> 0 < 26 ? 1 : 0;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      bytes[k] = c;
      at[k] = i;
      k += (c - 0x61) >>> 0 < 26 ? 1 : 0;
    }
  }
  return k === n ? s : bytesToString(bytes, k);
}

/**
 * Where each letter of the text `lettersOnly` read last stands in that text: letter `i` of what it returned is
 * at index `lastLetterPlaces()[i]`. Valid until its next call.
 */
export function lastLetterPlaces(): Int32Array {
  return placesOfLast;
}

/** Folds longer than this are decoded (see `unitsToString`). */
const DECODE_FROM = 256;

/**
 * The first `k` code units as a string: one native decode of their UTF-8 for all but short texts
 * (`fromCharCode` over a few thousand units costs several times more, see `utf8String`).
 */
function unitsToString(out: Uint16Array, k: number): string {
  return k > DECODE_FROM ? utf8String(out, k) : unitsInChunks(out, k);
}

/**
 * The plain array `unitsInChunks` copies units into: `fromCharCode.apply` reads one twice as fast as a typed
 * array's view (up to a hundred units or so; past that, about as fast on Bun).
 */
const unitList: number[] = [];

/** The first `k` code units as a string, built by `fromCharCode` in chunks (its arguments are bounded). */
function unitsInChunks(out: Uint16Array, k: number): string {
  const CHUNK = 8192;
  let text = "";
  for (let p = 0; p < k; p += CHUNK) {
    const n = Math.min(k - p, CHUNK);
    unitList.length = n;
    for (let i = 0; i < n; i++) unitList[i] = out[p + i];
    text += String.fromCharCode.apply(null, unitList);
  }
  return text;
}

function isWordUnit(c: number): boolean {
  return isLetter(c) || (c >= 0x30 && c <= 0x39) || c > 0x7f;
}

/**
 * Maps a span of the folded text back to the original string.
 *
 * @param f The folded text.
 * @param start Folded start index.
 * @param end Folded end index (exclusive, greater than `start`).
 * @returns `[start, end]` in the original.
 */
export function mapSpan(f: Folded, start: number, end: number): [number, number] {
  if (f.identity) {
    const n = f.text.length;
    if (n === 0) return [0, 0];
    const s = Math.min(start, n - 1);
    const e = Math.max(s, Math.min(end, n) - 1);
    return [s, e + 1];
  }
  if (f.starts.length === 0) return [0, 0];
  const s = Math.min(start, f.starts.length - 1);
  const e = Math.max(s, Math.min(end, f.ends.length) - 1);
  return [f.starts[s], f.ends[e]];
}

/**
 * True when the code unit `c` folds to one or more word units (letters, digits, anything beyond ASCII) on its
 * own: an ASCII letter or digit, or a character outside ASCII that is no surrogate, no space and no invisible
 * character. Between two such units on each side the fold has no whitespace run or letter spacing to join, so
 * folding the text on either side separately gives the same as folding it whole (see segments.ts).
 */
export function isSolid(c: number): boolean {
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
  // The search for a cut asks of every unit of a long text: each unit beyond ASCII is worked out once.
  const known = solidUnits ??= new Uint8Array(0x10000);
  if (known[c] === 0) known[c] = solidBeyondAscii(c) ? SOLID : NOT_SOLID;
  return known[c] === SOLID;
}

/** `isSolid` of each code unit beyond ASCII as far as worked out: 0 not yet, else `SOLID` or `NOT_SOLID`. */
let solidUnits: Uint8Array | undefined;
const SOLID = 1;
const NOT_SOLID = 2;

/** `isSolid` of a code unit beyond ASCII. */
function solidBeyondAscii(c: number): boolean {
  if ((c >= 0xD800 && c <= 0xDFFF) || isSpace(c) || isInvisible(c)) return false;
  const f = foldCodePoint(c);
  if (f.length === 0) return false;
  for (let k = 0; k < f.length; k++) if (!isWordUnit(f.charCodeAt(k))) return false;
  return true;
}
