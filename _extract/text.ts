/**
 * Small, linear-time text helpers shared by the readers, and finding the body of tag-delimited markup.
 *
 * @module
 */
import type { Scan } from "./scan.ts";

/** Whether the code unit at `i` is white space (the JSON set plus the other ASCII and Unicode spaces). */
export function isSpace(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  return c > 127 && /\s/.test(text[i]);
}

/** The first index at or after `i` that is not white space (or `text.length`). */
export function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text, i)) i++;
  return i;
}

/** `end` moved back over white space, never below `start`. */
export function trimEnd(text: string, start: number, end: number): number {
  while (end > start && isSpace(text, end - 1)) end--;
  return end;
}

/**
 * The index one past the JSON object or array starting at `start` (strings and escapes respected), or `-1`
 * when it does not close before `limit`. Linear in the distance scanned.
 */
export function scanValueEnd(text: string, start: number, limit: number): number {
  return resumeValueEnd(text, { at: start, depth: 0, inString: false }, limit);
}

/** Where a scan of a JSON value stopped, so it can go on past its limit. */
export interface ValueScan {
  /** The next index to read. */
  at: number;
  depth: number;
  /** Whether the scan stopped inside a string. */
  inString: boolean;
}

/** {@link scanValueEnd} from the state `scan` (which it updates); `-1` when the value does not close. */
export function resumeValueEnd(text: string, scan: ValueScan, limit: number): number {
  let { depth, inString } = scan;
  let i = scan.at;
  for (; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  scan.at = Math.max(i, limit);
  scan.depth = depth;
  scan.inString = inString;
  return -1;
}

/** `text.indexOf(needle, from)`, looking at most `span` code units ahead; `-1` beyond that. */
export function boundedIndexOf(text: string, needle: string, from: number, span: number): number {
  const i = text.slice(from, from + span + needle.length).indexOf(needle);
  return i < 0 ? -1 : from + i;
}

/** Sets an own property even for `__proto__`, never touching a prototype. */
export function defineOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `text` with one leading and one trailing line break removed (how XML formats frame a value). */
export function trimOneNewline(text: string): string {
  let s = text;
  if (s.startsWith("\r\n")) s = s.slice(2);
  else if (s.startsWith("\n")) s = s.slice(1);
  if (s.endsWith("\r\n")) s = s.slice(0, -2);
  else if (s.endsWith("\n")) s = s.slice(0, -1);
  return s;
}

/** Decodes the five XML entities (and numeric ones) in an attribute or value. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(quot|amp|lt|gt|apos));/g, (m, dec, hex, name) => {
    if (name) return { quot: '"', amp: "&", lt: "<", gt: ">", apos: "'" }[name as "quot"];
    const code = dec ? Number(dec) : parseInt(hex, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : m;
  });
}

/**
 * `text.indexOf(needle, from)` remembered per needle, so a text with many unclosed markers is still read in
 * linear time: a search that found nothing (or found a later match) answers every later search from there.
 */
export type Finder = (needle: string, from: number) => number;

/** Makes a {@link Finder} over `text`. */
export function makeFinder(text: string): Finder {
  const memo = new Map<string, { from: number; at: number }>();
  return (needle, from) => {
    const hit = memo.get(needle);
    if (hit && from >= hit.from && (hit.at < 0 || hit.at >= from)) return hit.at;
    const at = text.indexOf(needle, from);
    memo.set(needle, { from, at });
    return at;
  };
}

/** A match of a {@link Seeker}: where it begins and what it matched. */
export interface Sought {
  at: number;
  match: string;
}

/**
 * The first match of a global expression at or after `from`, remembered like a {@link Finder}: callers walk
 * the text forward, so a match found ahead answers every search until the caller passes it.
 */
export type Seeker = (from: number) => Sought | null;

/**
 * Makes a {@link Seeker} over `text`. `re` must be global or sticky-free (`g`); it may be shared with other
 * seekers, since each sets `lastIndex` just before its `exec`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeSeeker } from "./text.ts";
 * const seek = makeSeeker("a <x> b <y>", /<\w>/g);
 * assert.deepEqual(seek(0), { at: 2, match: "<x>" });
 * assert.deepEqual(seek(3), { at: 8, match: "<y>" });
 * assert.equal(seek(9), null);
 * ```
 */
export function makeSeeker(text: string, re: RegExp): Seeker {
  let ahead: Sought | null | undefined;
  let searchedFrom = -1;
  return (from) => {
    if (ahead !== undefined && from >= searchedFrom && (ahead === null || ahead.at >= from)) return ahead;
    re.lastIndex = from;
    const m = re.exec(text);
    searchedFrom = from;
    ahead = m ? { at: m.index, match: m[0] } : null;
    return ahead;
  };
}

/*
 * Finding the body of tag-delimited markup.
 */

/** Where a block's body lies and how it ends. */
export interface Body {
  /** Index of the first code unit after the opening tag. */
  start: number;
  /** Index where the body ends: the closing tag, the first stop, or the end of the text. */
  end: number;
  /** Whether a closing tag was found. */
  closed: boolean;
  /** Index one past the closing tag, or `end` when there is none. */
  blockEnd: number;
}

/**
 * The body of the block whose opening tag ends at `start`: up to the first of `closers`, else up to the first
 * of `stops` (say the next opening tag), else up to the end of the text.
 */
export function bodyOf(
  scan: Scan,
  start: number,
  closers: readonly string[],
  stops: readonly string[] = [],
): Body {
  let close = -1;
  let closeLength = 0;
  for (const c of closers) {
    const i = scan.find(c, start);
    if (i >= 0 && (close < 0 || i < close)) {
      close = i;
      closeLength = c.length;
    }
  }
  let stop = scan.text.length;
  for (const s of stops) {
    const i = scan.find(s, start);
    if (i >= 0 && i < stop) stop = i;
  }
  if (close >= 0 && close <= stop) return { start, end: close, closed: true, blockEnd: close + closeLength };
  return { start, end: stop, closed: false, blockEnd: stop };
}

/**
 * One past the JSON object or array at `p` (read within the shared scan budget), or `-1` when there is none
 * or it does not close: where a closing token may begin, since one inside the value's strings is data.
 */
export function valueEnd(scan: Scan, p: number): number {
  const text = scan.text;
  if (text[p] !== "{" && text[p] !== "[") return -1;
  const far = Math.min(text.length, p + scan.allowance());
  const e = scanValueEnd(text, p, far);
  scan.spend((e < 0 ? far : e) - p);
  return e;
}

/**
 * The body of markup whose content opens with JSON, from `start`: like {@link bodyOf}, but a closing tag or
 * stop token written inside a JSON string is data, so when the JSON values that open the body run past the
 * first closer, the closer is looked for after them (as llama.cpp's JSON-aware reader does). Values are
 * objects or arrays one after another (separated by space, `,` or `;`); reading them is charged to the
 * shared budget.
 */
export function jsonBody(
  scan: Scan,
  start: number,
  closers: readonly string[],
  stops: readonly string[] = [],
): Body {
  const text = scan.text;
  const body = bodyOf(scan, start, closers, stops);
  let q = skipSpace(text, start);
  let last = -1;
  while (text[q] === "{" || text[q] === "[") {
    const e = valueEnd(scan, q);
    if (e < 0) break;
    last = e;
    q = skipSpace(text, e);
    if (text[q] === "," || text[q] === ";") q = skipSpace(text, q + 1);
  }
  if (last <= body.end) return body;
  return { ...bodyOf(scan, last, closers, stops), start };
}

/**
 * `block` widened over an `open` tag just before it and a `close` tag just after it (white space between
 * allowed): a reader that found its markup inside another family's wrapper takes the wrapper along.
 */
export function widen(
  text: string,
  block: { start: number; end: number },
  open: string,
  close: string,
): void {
  let before = block.start;
  while (before > 0 && /\s/.test(text[before - 1])) before--;
  if (open !== "" && text.startsWith(open, before - open.length)) block.start = before - open.length;
  let after = block.end;
  while (after < text.length && /\s/.test(text[after])) after++;
  if (text.startsWith(close, after)) block.end = after + close.length;
}
