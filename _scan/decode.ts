/**
 * Text as a reader of the web and of JSON takes it: the encodings a page or a JSON document carries as a
 * matter of course read as what they stand for. A model given raw HTML or raw JSON reads `&#73;gnore`,
 * `Ignore&nbsp;all`, `Ignore all <em>previous</em> instructions`, `\u0049gnore` and `%49gnore` as the words
 * they spell, while rules that read the text as it is see no word. The scanner reads such text twice: as it is
 * (the markup itself may be the evidence: a comment, a hidden element) and as decoded here, with every finding
 * mapped back to the original's offsets (a finding covers the encoded characters behind it).
 *
 * Decoded, in one pass from left to right (what a decode produces is not read again in the same pass):
 * - HTML character references: decimal `&#73;` and hexadecimal `&#x49;` (without the `;` or with leading
 *   zeros, as browsers allow), and the named ones that hide or spell text (`namedRefs`), each with its `;` but
 *   for those a browser reads without (`NO_SEMICOLON`: `&nbsp`, `&lt`);
 * - tags and comments: a comment `<!-- ... -->` and an inline tag (`inlineNames`: `<em>`, `<a href=...>`,
 *   `<span>`, `<label>`, `<button>`..., and a custom element's, whose name holds a hyphen) inside a word (a letter
 *   or digit before it, one or another tag after it) read as nothing, as a browser draws them, so
 *   `Ig<span>no</span>re` is one word (but a button, label or custom element closed right before another of its
 *   name opens, a row of them with a word in each, reads as a space); elsewhere as a space, which the fold joins
 *   to the blanks around it: `all <em>previous</em> instructions` reads as its words, and a name in a tag before
 *   a comma (`<b>Assistant</b>, Marketing`) stays apart from the comma, as the rules read a name in bold. Any other
 *   tag (`<p>`, `<br>`, `<div>`, a declaration `<!DOCTYPE ...>`, `<?xml ...?>`) reads as a space, as the break a
 *   browser draws there, so that two blocks do not join into one word. A comment opened as `<!-->` or `<!--->`
 *   ends there, as a browser ends it;
 * - JSON string escapes: `\uXXXX`, `\n`, `\t`, `\r`, `\"`, `\/`, `\\` (a pair of backslashes is one backslash
 *   and escapes nothing after it);
 * - URL encoding: `%XX`, where it spells ASCII or a whole UTF-8 character.
 *
 * Each search for a tag's or a comment's end starts past the last one found (see `DecodedText`), and every
 * other decode reads a bounded stretch: linear in the text's length.
 *
 * @module
 */
import { grownBy, runAt } from "../_common/bytes.ts";

/**
 * True when `text` holds a character that may start an encoding (`&`, `\`, `%`, or `<` before what may start a
 * tag or comment): native searches, which cost plain text next to nothing.
 */
export function holdsEncodings(text: string): boolean {
  if (text.indexOf("&") !== -1 || text.indexOf("\\") !== -1 || text.indexOf("%") !== -1) return true;
  // (a `<` that starts no tag, as in code or in "<|im_start|>", costs no decode pass)
  if (!denseWithLowByte(text, LT) && text.indexOf("<") === -1) return false;
  // Every tag and comment ends in `>`: without one no `<` starts one, and a text dense with `<` is not searched
  // (that took a search that stops at each `<`: a tenth of the scan of a text of chat-token prefixes).
  if (!denseWithLowByte(text, GT) && text.indexOf(">") === -1) return false;
  return TAG_START.test(text);
}

/** What may start a tag or a comment. */
const TAG_START = /<[!/?a-zA-Z]/;

/**
 * Whether the start of `text` is dense with code units beyond Latin-1 whose low byte is that of `unit` (`<`:
 * the emoji of U+1F300-U+1F3FF, whose high surrogate is U+D83C; `>`: those of U+1F900-U+1F9FF): V8 looks for
 * one character in a two-byte string by its low byte, and stops at each such unit (an emoji-dense text took a
 * quarter of its scan's time to search), where a regular expression reads it at an even pace.
 */
function denseWithLowByte(text: string, unit: number): boolean {
  let seen = 0;
  for (let i = 0, n = Math.min(text.length, DENSE_PROBE); i < n; i++) {
    const c = text.charCodeAt(i);
    if ((c & 0xff) === unit && c > 0xff) seen++;
  }
  return seen >= DENSE_FROM;
}

/**
 * `denseWithLowByte` looks at this many units, and calls the text dense from this many such units on: a look
 * that costs next to nothing per call (4 KiB pieces of a stream each take one).
 */
const DENSE_PROBE = 64;
const DENSE_FROM = 4;

/** The characters that may start an encoding, for the rule screen (see screen.ts). */
export const ENCODING_STARTS = "&<\\%";

/**
 * True when an encoding may start at index `i` of `text` (a character of `ENCODING_STARTS`): a character
 * reference, a JSON escape, a `%XX`, or what starts a tag or a comment (whose end is not looked for: a bounded
 * look, which may say yes where the decode finds no tag). For the rule screen, which must not clear a text the
 * decoded reading could find something in.
 */
export function encodingAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c === AMP) return referenceAt(text, i) !== -1;
  if (c === BACKSLASH) return jsonEscapeAt(text, i) !== -1;
  if (c === PERCENT) return percentAt(text, i) !== -1;
  if (c === LT) return tagStartAt(text, i) !== NO_TAG;
  return false;
}

const AMP = 0x26;
const LT = 0x3c;
const GT = 0x3e;
const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const SEMICOLON = 0x3b;

/**
 * Named character references decoded, by `nameKey`: those that hide, space or spell text, and the markup ones.
 * The spaces, quotes and dashes decode to the ASCII the fold makes of them (see fold.ts): the decoded text of a
 * page stays ASCII, which the scanner reads at its fastest. Made on first use (`named`): importing the scanner
 * builds nothing.
 */
function namedRefs(): ReadonlyMap<number, string> {
  const list: [string, string][] = [
    ["nbsp", " "],
    ["ensp", " "],
    ["emsp", " "],
    ["thinsp", " "],
    ["shy", "\u00ad"],
    ["zwj", "\u200d"],
    ["zwnj", "\u200c"],
    ["lrm", "\u200e"],
    ["rlm", "\u200f"],
    ["lt", "<"],
    ["gt", ">"],
    ["amp", "&"],
    ["quot", '"'],
    ["apos", "'"],
    ["colon", ":"],
    ["sol", "/"],
    ["period", "."],
    ["comma", ","],
    ["lsquo", "'"],
    ["rsquo", "'"],
    ["ldquo", '"'],
    ["rdquo", '"'],
    ["ndash", "-"],
    ["mdash", "-"],
    ["hyphen", "-"],
    ["tab", "\t"],
    ["newline", "\n"],
  ];
  return new Map(list.map(([name, text]) => [nameKey(name, 0, name.length), text]));
}

/**
 * The names of `namedRefs` a browser reads without their `;` (HTML's legacy references): "Ignore&nbspall" is
 * drawn as two words, and "&LTsystem&GT" as "<system>" (the markup names are legacy in capitals too).
 */
const NO_SEMICOLON = ["nbsp", "shy", "amp", "quot", "lt", "gt", "AMP", "QUOT", "LT", "GT"];

/**
 * Inline elements, by `nameKey`: a browser draws no break at their tags, so they read as nothing. Made on
 * first use (`inline`).
 */
function inlineNames(): ReadonlySet<number> {
  return new Set(
    ("a abbr b bdi bdo big button cite code data del dfn em font i ins kbd label mark q s samp small span strike " +
      "strong sub sup time tt u var wbr").split(" ").map((name) => nameKey(name, 0, name.length)),
  );
}

/** `namedRefs` and `inlineNames`, once made (module variables the decode reads at every `&` and tag). */
let named: ReadonlyMap<number, string> | undefined;
let inline: ReadonlySet<number> | undefined;

/** `nameKey` reads names of at most this many letters: the longest of `namedRefs` and `inlineNames`. */
const KEYED_MOST = 7;

/**
 * The name `text[from, to)` as a number, in either case (five bits a letter), or -1 when it is longer than
 * `KEYED_MOST` or holds other than ASCII letters: a look-up by it makes no string (a page has a tag or a
 * reference every few words).
 */
function nameKey(text: string, from: number, to: number): number {
  if (to - from > KEYED_MOST) return -1;
  let key = 0;
  for (let j = from; j < to; j++) {
    const c = text.charCodeAt(j) | 0x20;
    if (c < 0x61 || c > 0x7a) return -1;
    key = key * 32 + (c - 0x60);
  }
  return key;
}

/** A tag's name is at most this long, and a tag at most `TAG_MOST` characters (else it is read as text). */
const TAG_NAME_MOST = 16;
const TAG_MOST = 1024;

/**
 * What the last decode at one place (`referenceAt`, `jsonEscapeAt`, `percentAt`, each returning where in the
 * text it ends, or -1) stands for: one string the decode loop reads at once, not an object per decode.
 */
let decodedAs = "";

/** `tagStartAt`'s answer where no tag or comment starts. */
const NO_TAG = 0;
/** A comment starts (`<!--`). */
const COMMENT = 1;
/** A tag whose name ends at the index returned (`INLINE_TAG`, or `OTHER_TAG` for a space). */
const INLINE_TAG = 2;
const OTHER_TAG = 3;
/**
 * An inline tag of a box of its own: a custom element's, a `<label>`'s or a `<button>`'s. Inside a word it reads
 * as nothing, as `INLINE_TAG`; but one that closes right before another of its name opens (`</x-a><x-a>`,
 * `</button><button>`) reads as a space: a row of buttons, labels or one component holds a word in each.
 */
const BOX_TAG = 4;

/** `nameKey` of `<button>` and `<label>`, the inline names that are `BOX_TAG`s. */
const BUTTON_KEY = nameKey("button", 0, 6);
const LABEL_KEY = nameKey("label", 0, 5);

/**
 * What starts at `text[i]` (a `<`): a comment, an inline tag or another tag (see the module's doc), or none. A
 * tag is `<`, an optional `/`, a letter, up to `TAG_NAME_MOST` name characters, then a blank, `/` or `>`; or
 * `<!` and a letter (a declaration), or `<?`.
 */
function tagStartAt(text: string, i: number): number {
  let j = i + 1;
  let c = text.charCodeAt(j);
  if (c === 0x21) { // "!"
    if (text.charCodeAt(j + 1) === 0x2d && text.charCodeAt(j + 2) === 0x2d) return COMMENT;
    return isAsciiLetter(text.charCodeAt(j + 1)) ? OTHER_TAG : NO_TAG;
  }
  if (c === 0x3f) return OTHER_TAG; // "?"
  if (c === 0x2f) c = text.charCodeAt(++j); // "/"
  if (!isAsciiLetter(c)) return NO_TAG;
  const from = j;
  // (a custom element's name holds a hyphen, and a browser draws it inline: `<x-word>` joins as `<span>` does)
  let custom = false;
  for (j++; j - from < TAG_NAME_MOST; j++) {
    c = text.charCodeAt(j);
    if (!isNameUnit(c)) break;
    if (c === 0x2d) custom = true;
  }
  c = text.charCodeAt(j);
  if (!(c === GT || c === 0x2f || c === 0x20 || (c >= 0x09 && c <= 0x0d))) return NO_TAG;
  if (custom) return BOX_TAG;
  const key = nameKey(text, from, j);
  if (!(inline ??= inlineNames()).has(key)) return OTHER_TAG;
  return key === BUTTON_KEY || key === LABEL_KEY ? BOX_TAG : INLINE_TAG;
}

/** Whether the tag names at `text[a]` and `text[b]` are one name, in either case (`b` not a closing tag's). */
function sameName(text: string, a: number, b: number): boolean {
  for (;; a++, b++) {
    const c = text.charCodeAt(a);
    const named = isNameUnit(c);
    if (named !== isNameUnit(text.charCodeAt(b))) return false;
    if (!named) return true;
    if ((c | 0x20) !== (text.charCodeAt(b) | 0x20)) return false;
  }
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** A letter, a digit or a unit beyond ASCII (NaN, past the text's end, is none). */
function isWordUnit(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0x30 && c <= 0x39) || c >= 0x80;
}

function isNameUnit(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}

function hexValue(c: number): number {
  return c >= 0x30 && c <= 0x39
    ? c - 0x30
    : c >= 0x61 && c <= 0x66
    ? c - 0x57
    : c >= 0x41 && c <= 0x46
    ? c - 0x37
    : -1;
}

/**
 * Where the character reference at `text[i]` (an `&`) ends, what it stands for in `decodedAs`; or -1. Reads
 * at most a dozen characters past a number's leading zeros.
 */
function referenceAt(text: string, i: number): number {
  const n = text.length;
  if (text.charCodeAt(i + 1) === 0x23) { // "#"
    let j = i + 2;
    const hex = (text.charCodeAt(j) | 0x20) === 0x78; // "x"
    if (hex) j++;
    // (leading zeros, however many: a browser reads "&#00000073;" as "I"; the run is read once, by the one
    // reference it follows)
    while (text.charCodeAt(j) === 0x30) j++;
    const from = j;
    let cp = 0;
    for (; j < n && j - from < (hex ? 6 : 7); j++) {
      const d = hex ? hexValue(text.charCodeAt(j)) : text.charCodeAt(j) - 0x30;
      if (d < 0 || d > (hex ? 15 : 9)) break;
      cp = cp * (hex ? 16 : 10) + d;
    }
    if (j === from || cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
    if (text.charCodeAt(j) === SEMICOLON) j++;
    decodedAs = String.fromCodePoint(cp);
    return j;
  }
  let j = i + 1;
  for (; j < n && j - i <= KEYED_MOST && isAsciiLetter(text.charCodeAt(j)); j++);
  if (j > i + 1 && text.charCodeAt(j) === SEMICOLON) {
    const decoded = (named ??= namedRefs()).get(nameKey(text, i + 1, j));
    if (decoded !== undefined) {
      decodedAs = decoded;
      return j + 1;
    }
  }
  // (no known name before a `;`: a browser still reads a legacy name at the start, "&nbspall;" as a space and
  // "all;")
  const legacy = NO_SEMICOLON.find((name) => text.startsWith(name, i + 1));
  if (legacy === undefined) return -1;
  decodedAs = (named ??= namedRefs()).get(nameKey(legacy, 0, legacy.length))!;
  return i + 1 + legacy.length;
}

/**
 * What JSON's one-character escapes stand for, by the code of the character after the backslash (`\b` and
 * `\f` are left: they stand for no text): a switch, no table to build at load.
 */
function jsonEscaped(c: number): string | undefined {
  switch (c) {
    case 0x6e: // "n"
      return "\n";
    case 0x74: // "t"
      return "\t";
    case 0x72: // "r"
      return "\r";
    case 0x22:
      return '"';
    case 0x2f:
      return "/";
    case BACKSLASH:
      return "\\";
    default:
      return undefined;
  }
}

/** Where the JSON escape at `text[i]` (a backslash) ends, what it stands for in `decodedAs`; or -1. */
function jsonEscapeAt(text: string, i: number): number {
  const c = text.charCodeAt(i + 1);
  if (c === 0x75) { // "u"
    let unit = 0;
    for (let j = i + 2; j < i + 6; j++) {
      const d = hexValue(text.charCodeAt(j));
      if (d < 0) return -1;
      unit = unit * 16 + d;
    }
    decodedAs = String.fromCharCode(unit);
    return i + 6;
  }
  const escaped = jsonEscaped(c);
  if (escaped === undefined) return -1;
  decodedAs = escaped;
  return i + 2;
}

/** The byte `%XX` at `text[i]` stands for, or -1. */
function byteAt(text: string, i: number): number {
  if (text.charCodeAt(i) !== PERCENT) return -1;
  const a = hexValue(text.charCodeAt(i + 1));
  const b = hexValue(text.charCodeAt(i + 2));
  return a < 0 || b < 0 ? -1 : a * 16 + b;
}

/**
 * Where the URL encoding at `text[i]` (a `%`) ends, what it stands for in `decodedAs`; or -1: one `%XX` of an
 * ASCII character other than NUL, or the `%XX` run of one whole UTF-8 character (two to four bytes); anything
 * else is left as it is.
 */
function percentAt(text: string, i: number): number {
  const b = byteAt(text, i);
  if (b <= 0) return -1;
  if (b < 0x80) {
    decodedAs = String.fromCharCode(b);
    return i + 3;
  }
  const more = b >= 0xf0 && b < 0xf5 ? 3 : b >= 0xe0 ? 2 : b >= 0xc2 && b < 0xe0 ? 1 : -1;
  if (more < 0) return -1;
  let cp = b & (0x3f >> more);
  for (let k = 1; k <= more; k++) {
    const next = byteAt(text, i + 3 * k);
    if (next < 0x80 || next > 0xbf) return -1;
    cp = (cp << 6) | (next & 0x3f);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are no character.
  const least = more === 1 ? 0x80 : more === 2 ? 0x800 : 0x10000;
  if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  decodedAs = String.fromCodePoint(cp);
  return i + 3 * (more + 1);
}

/** Pieces of the decoded text joined into one string at a time: the list of pieces stays short. */
const JOIN_EVERY = 1024;

/**
 * `text` decoded (see the module's doc), with the map back to `text`. `decoded(text)` makes one, or tells that
 * there is nothing to decode.
 */
export class DecodedText {
  /** The decoded text. */
  readonly text: string;
  /**
   * Per run of the decoded text, the first `#count` in three slots each (`RUN`): where it starts in the decoded
   * text (ascending), where its original starts, and where that ends for a decoded run (each of its characters
   * stands for all of it), or -1 for a copied run (character for character).
   */
  readonly #runs: Int32Array;
  readonly #count: number;
  /**
   * Whether some decode made a character that may start an encoding (`&lt;` made a `<`, `\u0026` an `&`): only
   * then may the decoded text hold an encoding the original did not, and be worth decoding again.
   */
  readonly nested: boolean;

  /** Takes what `decoded` made. */
  constructor(
    text: string,
    runs: Int32Array,
    count: number,
    nested: boolean,
  ) {
    this.text = text;
    this.nested = nested;
    this.#runs = runs;
    this.#count = count;
  }

  /**
   * The span of the original behind decoded characters `start` to `end` (`start < end`): from the first one's
   * start to the last one's end, so an encoding a finding begins or ends inside is in its span whole, and tags
   * dropped inside it are in it too.
   */
  span(start: number, end: number): [number, number] {
    const runs = this.#runs;
    const a = RUN * runAt(runs, this.#count, start, RUN);
    const b = RUN * runAt(runs, this.#count, end - 1, RUN);
    const s = runs[a + TO] < 0 ? runs[a + FROM] + (start - runs[a]) : runs[a + FROM];
    const e = runs[b + TO] < 0 ? runs[b + FROM] + (end - runs[b]) : runs[b + TO];
    return [s, e];
  }

  /**
   * The stretches of the decoded text within `reach` of a place a decode changed (a decoded run, or where a
   * tag read as nothing was dropped), those that touch or overlap merged: pairs of start and end, ascending,
   * in a list as long as they need. Elsewhere the decoded text is the original's, character for character.
   */
  changedWithin(reach: number): Int32Array {
    const n = this.text.length;
    const runs = this.#runs;
    const last = RUN * (this.#count - 1);
    let out = new Int32Array(16);
    let k = 0;
    for (let r = 0; r <= last; r += RUN) {
      // (a copied run right after another copied run: a tag between them was dropped)
      if (runs[r + TO] < 0 && (r === 0 || runs[r - RUN + TO] >= 0)) continue;
      const start = Math.max(0, runs[r] - reach);
      const end = Math.min(n, (runs[r + TO] < 0 ? runs[r] : r < last ? runs[r + RUN] : n) + reach);
      if (k > 0 && start <= out[k - 1]) {
        out[k - 1] = end;
        continue;
      }
      if (k + 2 > out.length) out = grownBy(out, 2);
      out[k++] = start;
      out[k++] = end;
    }
    return out.subarray(0, k);
  }
}

/**
 * A run's slots in `DecodedText`'s list: where it starts in the decoded text, `FROM`, `TO`. One list, not three:
 * Deno makes each typed array natively (0.3 us, Bun 10 ns), a third of a dev row's decode.
 */
const RUN = 3;
const FROM = 1;
const TO = 2;
/** The list of runs `decoded` makes holds at first at most this many runs (see `grownBy`). */
const RUNS_MOST_AT_FIRST = 4096;
/** No runs yet. */
const NO_RUNS = new Int32Array(0);

/**
 * `text` decoded, or null when nothing in it decodes (see the module's doc). Linear: every decode reads a
 * bounded stretch, except the search for a tag's or a comment's end, which starts past the last one found
 * (a tag or comment with no end in reach is read as text, and the next `<` reuses what the search found).
 *
 * @example A character reference, a tag and a JSON escape, decoded and mapped back
 * ```ts
 * import assert from "node:assert/strict";
 * import { decoded } from "./decode.ts";
 *
 * const text = "&#73;gn<em>or</em>e all previous\\u0020instructions";
 * const d = decoded(text)!;
 * assert.equal(d.text, "Ignore all previous instructions");
 * assert.deepEqual(d.span(0, 6), [0, 19]); // "&#73;gn<em>or</em>e"
 * assert.equal(decoded("plain text, 5 < 6"), null);
 * ```
 */
export function decoded(text: string): DecodedText | null {
  const n = text.length;
  // Made at the first decode (a text where nothing decodes makes none), with room for a decode every 16
  // characters up to a bound: most texts then never grow them.
  let runs = NO_RUNS;
  let count = 0;
  let length = 0;
  const pieces: string[] = [];
  const joined: string[] = [];
  let changed = false;
  let nested = false;
  // The last unit of the decoded text so far (0: none), which tells whether a tag is inside a word.
  let last = 0;
  // The next place of each character that may start an encoding at or after the search's place (-1: none
  // left), and of a tag's and a comment's end: each search starts past the last, so the text is read once.
  let nextAmp = text.indexOf("&");
  let nextLt = text.indexOf("<");
  let nextSlash = text.indexOf("\\");
  let nextPct = text.indexOf("%");
  let nextGt = -2;
  let nextCommentEnd = -2;
  // `i`: where the text not yet kept starts; `s`: where the search for the next start goes on from.
  let i = 0;
  for (let s = 0; i < n;) {
    if (nextAmp !== -1 && nextAmp < s) nextAmp = text.indexOf("&", s);
    if (nextLt !== -1 && nextLt < s) nextLt = text.indexOf("<", s);
    if (nextSlash !== -1 && nextSlash < s) nextSlash = text.indexOf("\\", s);
    if (nextPct !== -1 && nextPct < s) nextPct = text.indexOf("%", s);
    let p = n;
    if (nextAmp !== -1) p = nextAmp;
    if (nextLt !== -1 && nextLt < p) p = nextLt;
    if (nextSlash !== -1 && nextSlash < p) p = nextSlash;
    if (nextPct !== -1 && nextPct < p) p = nextPct;
    if (p === n) break;
    const c = text.charCodeAt(p);
    // Where the decode at `p` ends (-1: none), what it stands for in `decodedAs`.
    let end = -1;
    if (c === AMP) end = referenceAt(text, p);
    else if (c === BACKSLASH) end = jsonEscapeAt(text, p);
    else if (c === PERCENT) end = percentAt(text, p);
    else {
      const kind = tagStartAt(text, p);
      if (kind === COMMENT) {
        // (a browser closes "<!-->" and "<!--->" where they stand: the text after them is drawn)
        const abrupt = text.startsWith(">", p + 4) ? p + 5 : text.startsWith("->", p + 4) ? p + 6 : -1;
        if (abrupt === -1 && nextCommentEnd !== -1 && nextCommentEnd < p + 4) {
          nextCommentEnd = text.indexOf("-->", p + 4);
        }
        if (abrupt !== -1) end = abrupt;
        else if (nextCommentEnd !== -1) end = nextCommentEnd + 3;
      } else if (kind !== NO_TAG) {
        if (nextGt !== -1 && nextGt < p) nextGt = text.indexOf(">", p);
        if (nextGt !== -1 && nextGt - p < TAG_MOST) end = nextGt + 1;
      }
      if (end !== -1) {
        // (the unit before: the last one decoded, or the one before `p` when it has not been kept yet)
        const before = p > i ? text.charCodeAt(p - 1) : last;
        const after = text.charCodeAt(end);
        const inWord = kind !== OTHER_TAG && isWordUnit(before) && (isWordUnit(after) || after === LT) &&
          !(kind === BOX_TAG && after === LT && text.charCodeAt(p + 1) === 0x2f &&
            sameName(text, p + 2, end + 1));
        decodedAs = inWord ? "" : " ";
      }
    }
    if (end === -1) {
      s = p + 1;
      continue;
    }
    // Room for the two runs this decode may add: the text kept before it, and its own.
    if (RUN * (count + 2) > runs.length) {
      runs = grownBy(runs, RUN * (runs.length === 0 ? Math.min(RUNS_MOST_AT_FIRST, 16 + (n >> 3)) : 2));
    }
    if (p > i) {
      // (a kept run after a tag read as nothing starts where that tag ended: a run of its own all the same)
      const r = RUN * count++;
      runs[r] = length;
      runs[r + FROM] = i;
      runs[r + TO] = -1;
      pieces.push(text.slice(i, p));
      length += p - i;
      last = text.charCodeAt(p - 1);
    }
    changed = true;
    const units = decodedAs;
    if (units.length > 0) {
      const r = RUN * count++;
      runs[r] = length;
      runs[r + FROM] = p;
      runs[r + TO] = end;
      pieces.push(units);
      length += units.length;
      last = units.charCodeAt(units.length - 1);
      if (!nested && ENCODING_STARTS.includes(units)) nested = true;
    }
    if (pieces.length >= JOIN_EVERY) {
      joined.push(pieces.join(""));
      pieces.length = 0;
    }
    i = s = end;
  }
  if (!changed) return null;
  if (i < n) {
    if (RUN * (count + 1) > runs.length) runs = grownBy(runs, RUN);
    const r = RUN * count++;
    runs[r] = length;
    runs[r + FROM] = i;
    runs[r + TO] = -1;
    pieces.push(text.slice(i, n));
  }
  joined.push(pieces.join(""));
  return new DecodedText(joined.length === 1 ? joined[0] : joined.join(""), runs, count, nested);
}
