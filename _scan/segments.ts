/**
 * Reading a long text in windows of bounded size, with the same findings as reading it whole.
 *
 * The text is cut into cores of about a segment each, at neutral cuts: positions with two solid characters on
 * each side (see `isSolid`), where folding the two sides separately gives exactly the fold of the whole. A
 * window is a core with context on both sides, also cut at neutral cuts, so its folded text is an exact slice
 * of the whole folded text. The engine (scan.ts) carries each rule's search position from window to window
 * and reports only matches that start in a core, which makes the findings those of one run over the whole text
 * as long as a window holds all a match and its checks read; when it might not, the engine asks for a wider
 * window.
 *
 * @module
 */
import { fold, type Folded, isSolid } from "./fold.ts";
import { asciiBytes, BYTES_FROM } from "./words.ts";

/** Folded characters of context a window keeps on each side of its core (unless it reaches the text's end). */
export const CONTEXT = 4096;
/** Letters of context a window keeps on each side, for the rules over the letters-only text. */
export const LETTER_CONTEXT = 512;
/**
 * How far (in original characters) a side reaches for those letters. Text with few letters a-z (Chinese,
 * digits, symbols) would otherwise widen every window to the whole text: quadratic. A letters-only match
 * whose letters lie further apart than this is no text a reader would take for words.
 */
export const LETTER_REACH = 4 * CONTEXT;

/** One window over the text. */
export interface Window {
  /** Index in the original text where the window starts. */
  readonly origin: number;
  /** The window folded; its maps index the window, so add `origin` for the original text. */
  readonly folded: Folded;
  /** Folded index where the core starts. */
  readonly coreStart: number;
  /** Folded index where the core ends (exclusive). */
  readonly coreEnd: number;
  /** Letters (a-z) of the folded text before `coreStart`. */
  readonly lettersBefore: number;
  /** Letters of the folded text from `coreEnd` on. */
  readonly lettersAfter: number;
  /** True when the window reaches the end of the text: a match may end where it ends. */
  readonly atEnd: boolean;
  /**
   * True when its core ends the text: no window follows, so its rules' search positions are not read. A
   * window whose context alone reaches the end (`atEnd`) is followed by one more.
   */
  readonly last: boolean;
}

/**
 * The first neutral cut at or after `p` and before `limit`, or the text's length. One read of each unit: a run
 * of four solid ones holds a cut between its second and third (text with no cut, as letter spacing, is read to
 * the limit, and a test per position read most units four times).
 */
export function cutAtOrAfter(text: string, p: number, limit: number = text.length): number {
  const last = Math.min(limit, text.length - 1);
  let run = 0;
  for (let i = Math.max(p, 2) - 2; i <= last; i++) {
    if (!isSolid(text.charCodeAt(i))) run = 0;
    else if (++run === 4) return i - 1;
  }
  return text.length;
}

/** The last neutral cut at or before `p`, or 0 (read as `cutAtOrAfter`, backwards). */
export function cutAtOrBefore(text: string, p: number): number {
  let run = 0;
  for (let i = Math.min(p, text.length - 2) + 1; i >= 0; i--) {
    if (!isSolid(text.charCodeAt(i))) run = 0;
    else if (++run === 4) return i + 2;
  }
  return 0;
}

/** Letters a-z in `s` before index `end` (all of `s` by default). */
export function lettersBefore(s: string, end: number = s.length): number {
  return lettersBetween(s, 0, end);
}

/** Letters a-z in `s` from index `from` to index `to` (exclusive). */
function lettersBetween(s: string, from: number, to: number): number {
  let n = 0;
  const e = Math.min(to, s.length);
  // Bytes where the text is long and ASCII: read faster than by `charCodeAt`, and a window's are made anyway.
  const bytes = s.length >= BYTES_FROM && e - from >= BYTES_FROM ? asciiBytes(s) : null;
  if (bytes !== null) {
    for (let i = from; i < e; i++) {
      const c = bytes[i];
      if (c >= 0x61 && c <= 0x7a) n++;
    }
    return n;
  }
  for (let i = from; i < e; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) n++;
  }
  return n;
}

/** The first folded index whose original index is at least `at` (the folded length when none is). */
function foldedIndexOf(folded: Folded, at: number): number {
  if (folded.identity) return Math.min(at, folded.text.length);
  const starts = folded.starts;
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Which side of a window holds too little context once folded, and how many original characters that side
 * reached (from the core to the cut it ended at, which may lie well beyond the context asked for: no cut falls
 * inside a run of characters that fold to nothing).
 */
export interface ShortContext {
  readonly side: "left" | "right";
  readonly reached: number;
}

/**
 * The window around the core `[start, end)` (neutral cuts of `text`) with about `left` and `right` original
 * characters of context, or which side holds too little context once folded (then ask again with more).
 * `ascii`: the caller knows the text is ASCII.
 */
export function windowOf(
  text: string,
  start: number,
  end: number,
  left: number,
  right: number,
  ascii: boolean,
): Window | ShortContext {
  const n = text.length;
  const ws = start === 0 ? 0 : cutAtOrBefore(text, start - left);
  const we = end === n ? n : cutAtOrAfter(text, end + right);
  // The window is folded once: its cuts are neutral, so its fold is the folds of the left context, the core and
  // the right context one after another, and the contexts' folded lengths and letters are read from it.
  // The engine reads one window at a time: each window's maps may take the place of the last one's.
  const folded = fold(ws === 0 && we === n ? text : text.slice(ws, we), { ascii, reuse: true });
  const t = folded.text;
  const coreStart = ws === start ? 0 : foldedIndexOf(folded, start - ws);
  const leftLetters = lettersBetween(t, 0, coreStart);
  if (ws > 0 && (coreStart < CONTEXT || (leftLetters < LETTER_CONTEXT && start - ws < LETTER_REACH))) {
    return { side: "left", reached: start - ws };
  }
  const coreEnd = we === end ? t.length : foldedIndexOf(folded, end - ws);
  const rightLetters = lettersBetween(t, coreEnd, t.length);
  if (
    we < n && (t.length - coreEnd < CONTEXT || (rightLetters < LETTER_CONTEXT && we - end < LETTER_REACH))
  ) {
    return { side: "right", reached: we - end };
  }
  return {
    origin: ws,
    folded,
    coreStart,
    coreEnd,
    lettersBefore: leftLetters,
    lettersAfter: rightLetters,
    atEnd: we === n,
    last: end === n,
  };
}

/**
 * The whole text as one window; `ascii`: the caller knows it is ASCII; `folded`: its fold (with `reuse`), where
 * the caller has it.
 */
export function wholeWindow(
  text: string,
  ascii: boolean,
  folded: Folded = fold(text, { ascii, reuse: true }),
): Window {
  return {
    origin: 0,
    folded,
    coreStart: 0,
    coreEnd: folded.text.length,
    lettersBefore: 0,
    lettersAfter: 0,
    atEnd: true,
    last: true,
  };
}
