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

/** True when `q` is a neutral cut: two solid code units on each side. */
function isNeutral(text: string, q: number): boolean {
  return isSolid(text.charCodeAt(q - 2)) && isSolid(text.charCodeAt(q - 1)) && isSolid(text.charCodeAt(q)) &&
    isSolid(text.charCodeAt(q + 1));
}

/** The first neutral cut at or after `p`, or the text's length. */
export function cutAtOrAfter(text: string, p: number): number {
  for (let q = Math.max(p, 2); q + 1 < text.length; q++) if (isNeutral(text, q)) return q;
  return text.length;
}

/** The last neutral cut at or before `p`, or 0. */
export function cutAtOrBefore(text: string, p: number): number {
  for (let q = Math.min(p, text.length - 2); q >= 2; q--) if (isNeutral(text, q)) return q;
  return 0;
}

/** Letters a-z in `s` before index `end` (all of `s` by default). */
export function lettersBefore(s: string, end: number = s.length): number {
  let n = 0;
  const e = Math.min(end, s.length);
  // Bytes where the text is long and ASCII: read faster than by `charCodeAt`, and a window's are made anyway.
  const bytes = e >= BYTES_FROM ? asciiBytes(s) : null;
  if (bytes !== null) {
    for (let i = 0; i < e; i++) {
      const c = bytes[i];
      if (c >= 0x61 && c <= 0x7a) n++;
    }
    return n;
  }
  for (let i = 0; i < e; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) n++;
  }
  return n;
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
  // Only the contexts' folded texts are read: their maps may take the shared buffers.
  const before = ws === start ? "" : fold(text.slice(ws, start), { ascii, reuse: true }).text;
  const leftLetters = lettersBefore(before);
  if (ws > 0 && (before.length < CONTEXT || leftLetters < LETTER_CONTEXT)) {
    return { side: "left", reached: start - ws };
  }
  const after = we === end ? "" : fold(text.slice(end, we), { ascii, reuse: true }).text;
  const rightLetters = lettersBefore(after);
  if (we < n && (after.length < CONTEXT || rightLetters < LETTER_CONTEXT)) {
    return { side: "right", reached: we - end };
  }
  // The engine reads one window at a time: each window's maps may take the place of the last one's.
  const folded = fold(ws === 0 && we === n ? text : text.slice(ws, we), { ascii, reuse: true });
  return {
    origin: ws,
    folded,
    coreStart: before.length,
    coreEnd: folded.text.length - after.length,
    lettersBefore: leftLetters,
    lettersAfter: rightLetters,
    atEnd: we === n,
    last: end === n,
  };
}

/** The whole text as one window; `ascii`: the caller knows it is ASCII. */
export function wholeWindow(text: string, ascii: boolean): Window {
  const folded = fold(text, { ascii, reuse: true });
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
