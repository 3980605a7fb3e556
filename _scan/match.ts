/**
 * Windowed matching for the scanner's rules: the leftmost match of a rule's expression at or after a
 * position, found by running the expression only near occurrences of the rule's anchors. Gives exactly the
 * match a run over the whole text would give (see `nextMatch`), at a fraction of the cost when anchors are
 * rare.
 *
 * @module
 */
import type { Rule } from "./rules.ts";

/** The least number of candidate start positions a window covers. */
const WINDOW = 32768;

/** Characters of context a window keeps on each side for look-behind, look-ahead and `\b`. */
const MARGIN = 16;

/** Escapes a string for use inside a regular expression. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Per rule, one global expression for its anchors (or needles), built on first use. */
const ANCHORS = new WeakMap<Rule, RegExp>();

/** The rule's anchors (or needles) as one global expression, or null when it has none. */
export function anchorsOf(rule: Rule): RegExp | null {
  const list = rule.anchors ?? rule.needles;
  if (!list || list.length === 0) return null;
  let re = ANCHORS.get(rule);
  if (re === undefined) {
    re = new RegExp(list.map(escapeRegExp).join("|"), "g");
    ANCHORS.set(rule, re);
  }
  return re;
}

/** Options for {@linkcode nextMatch}. */
export interface MatchOptions {
  /** Run the expression only on windows around anchor occurrences (for long text). Default false. */
  windowed?: boolean;
  /**
   * Written by `nextMatch`: the last window it read and for which rule. A caller that looks for the matches of
   * one text passes the same options each time, and a match inside that window then costs no new window.
   */
  last?: LastWindow;
}

/** A window `nextMatch` read: `w` is the text from `wa` on, exact for matches that start from `lo` to `hi`. */
interface LastWindow {
  rule: Rule;
  w: string;
  wa: number;
  lo: number;
  hi: number;
}

/**
 * The leftmost match of `rule.re` in `text` starting at or after `from`, exactly as `re.exec` from
 * `lastIndex = from` would find it, as `[start, end]`, or null.
 *
 * With `windowed` when the rule has anchors and `maxLen`, the expression runs only on windows around anchor
 * occurrences: a match holds an anchor and is at most `maxLen` long, so it starts at most `maxLen` before the
 * first anchor at or after `from`; the window keeps `MARGIN` characters either side so look-arounds and `\b`
 * read what they would read in the whole text, and a match is taken only when it starts where the window
 * sees all it could read. Anchors are found with one expression, so the search for the next one reads each
 * character once.
 */
export function nextMatch(
  rule: Rule,
  text: string,
  from: number,
  options: MatchOptions = {},
): [number, number] | null {
  const re = rule.re;
  const maxLen = rule.maxLen;
  const anchors = options.windowed && maxLen !== undefined ? anchorsOf(rule) : null;
  if (anchors === null || maxLen === undefined) {
    re.lastIndex = from;
    const m = re.exec(text);
    return m === null ? null : [m.index, m.index + m[0].length];
  }
  const n = text.length;
  let p = from;
  const last = options.last;
  if (last !== undefined && last.rule === rule && from >= last.lo && from <= last.hi) {
    // Where matches are dense, the next one is most often in the window the last one was found in.
    re.lastIndex = from - last.wa;
    const m = re.exec(last.w);
    if (m !== null && m.index + last.wa <= last.hi) {
      return [m.index + last.wa, m.index + last.wa + m[0].length];
    }
    p = last.hi + 1;
  }
  while (p <= n) {
    anchors.lastIndex = p;
    const a = anchors.exec(text);
    if (a === null) return null;
    const q = a.index;
    const lo = Math.max(p, q - maxLen);
    // Windows of at least WINDOW candidate starts: a window costs a slice and an `exec` setup, and neighbours
    // re-read only `maxLen + MARGIN` characters each, so dense anchors cost about one run over the text.
    const hi = q + Math.max(4 * maxLen, WINDOW);
    const wa = Math.max(0, lo - MARGIN);
    const wb = Math.min(n, hi + maxLen + MARGIN);
    const w = wa === 0 && wb === n ? text : text.slice(wa, wb);
    re.lastIndex = lo - wa;
    const m = re.exec(w);
    options.last = { rule, w, wa, lo, hi };
    if (m !== null && m.index + wa <= hi) return [m.index + wa, m.index + wa + m[0].length];
    p = hi + 1;
  }
  return null;
}
