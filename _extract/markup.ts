/**
 * Finding the body of tag-delimited markup.
 *
 * @module
 */
import type { Scan } from "./scan.ts";

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
