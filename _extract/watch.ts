/**
 * For a streaming text watcher: where in a text that is still growing a call may begin, so that text is held
 * only from there and everything before it can be released at once.
 *
 * @module
 */
import { scanText } from "./extract.ts";
import { MARKERS, READERS } from "./registry.ts";
import { CALL_FENCE_LANGUAGES } from "./readers/json.ts";
import type { ExtractOptions } from "./types.ts";
import { lazy } from "../_common/values.ts";

/** Every literal text that opens call markup in some format, longest first. */
export const CALL_START_MARKERS: readonly string[] = MARKERS;
/**
 * Openings written as shapes rather than literals (`[name(`, `{"name":`), as sticky regular expressions: made
 * on first use (at load, Bun's first calls of `flatMap` and what it runs cost up to 0.2 ms of the import).
 */
export const callStartShapes: () => readonly RegExp[] = lazy(() =>
  READERS.flatMap((r) => r.shape ? [r.shape] : [])
);
export { CALL_OPENING_KEYS } from "./json_calls.ts";

/** The longest marker's length (they are listed longest first). */
const LONGEST = MARKERS[0].length;
/** Every proper prefix of a marker (`<`, `<t`, ... `<tool_cal`): made on first use. */
const prefixes = lazy(() =>
  new Set<string>(MARKERS.flatMap((m) => [...Array(m.length - 1).keys()].map((k) => m.slice(0, k + 1))))
);
/** How far back a shape's cut-off opening (`[get_wea`, `get_weather\n`) is looked for before it is prose. */
export const SHAPE_TAIL_LIMIT = 160;
/** Openings written as shapes, cut off at the end of the text: `[get_wea`, `{"na`. */
export const SHAPE_TAILS: readonly RegExp[] = [/\[\s*(?:[A-Za-z_][\w.-]*\s*)?$/, /\{\s*(?:"[a-z_]*"?\s*)?$/];
/** Functionary v3.2 where the answer begins (`NAME\n{`), and its start cut off by the end of the text. */
export const RECIPIENT_START = /^[A-Za-z_][\w.-]{0,127}[ \t]*\r?\n\s*\{/;
export const RECIPIENT_START_TAIL = /^[A-Za-z_][\w.-]{0,127}[ \t]*(?:\r?\n\s*)?$/;

/** The languages of a fence that holds calls (`json`, `tool_call`, none). */
export { CALL_FENCE } from "./readers/json.ts";

/**
 * Whether a fence's language line that the end of the text cut off (what follows the three backticks, no
 * line break yet) may still name the language of a fence that holds calls: `js` may become `json`, `json {`
 * and `python` cannot become one, so the text need not wait for the line's end.
 */
export function fenceMayHoldCalls(line: string): boolean {
  if (line.length > 64) return line.trim() === ""; // (the longest language with room for white space)
  const m = /^\s*(\S*)(\s*)$/.exec(line);
  if (!m) return false;
  const word = m[1].toLowerCase();
  return m[2] === ""
    ? CALL_FENCE_LANGUAGES.some((l) => l.startsWith(word))
    : CALL_FENCE_LANGUAGES.includes(word);
}

/**
 * The earliest index at or after `from` where a call may begin in `text` as it stands (it may still grow),
 * or `-1` when no call can begin there: everything from `from` on can be released. A call may begin at a
 * call that is already readable, at markup that ran out of text before it could be decided (a `<tool_call>`
 * whose body has not arrived, a bare `{` that has not closed), and at the start of a marker or shape cut off
 * by the end of the text (`<tool_ca`). Markup inside closed reasoning, and markup already decided not to be
 * a call (prose that mentions `<tool_call>`, once a few dozen characters follow it; a fence of Python code)
 * do not hold text.
 *
 * A watcher calls it with the whole text received so far and its release point as `from` (never a point
 * inside markup it is holding). The cost is linear: a fast pass over the whole text for reasoning, then the
 * readers from `from` on. While it holds a long call, a watcher need not ask on every chunk: asking again
 * once the held text has grown by half keeps the total work linear in the length of the message.
 *
 * @param text The message text received so far.
 * @param from Where to start looking (the watcher's release point); default 0.
 * @param options `tools`, as for `extractToolCalls` (they change what counts as a call without a marker).
 * @returns An index in `[from, text.length]`, or `-1`.
 *
 * @example Hold a message only from where a call may begin
 * ```ts
 * import { callMayStart } from "@toolguard/toolguard/extract";
 * import assert from "node:assert/strict";
 * assert.equal(callMayStart("Let me check. <tool_ca"), 14); // a marker cut off by the end
 * assert.equal(callMayStart("Let me check. <tool_call>"), 14); // its body has not arrived
 * const prose = "I would use <tool_call> tags for that, with the JSON object of the call written inside them.";
 * assert.equal(callMayStart(prose), -1); // prose: decided once a few dozen characters follow the marker
 * assert.equal(callMayStart("<think>maybe <tool_call>{}</tool_call></think>Hello there."), -1); // reasoning
 * ```
 */
export function callMayStart(text: string, from = 0, options: ExtractOptions = {}): number {
  if (typeof text !== "string" || from >= text.length) return -1;
  const lo = Math.max(0, from);
  const { result, scan } = scanText(text, options, lo);
  let best = Infinity;
  for (const c of result.calls) {
    if (c.block.end > lo) {
      best = Math.max(lo, c.block.start);
      break;
    }
  }
  if (scan.ranOutAt >= lo) best = Math.min(best, scan.ranOutAt);
  best = Math.min(best, cutOffOpening(text, lo));
  return best === Infinity ? -1 : best;
}

/** Where a marker or shape that the end of the text cut off begins, at or after `from`; else Infinity. */
function cutOffOpening(text: string, from: number): number {
  const n = text.length;
  for (let k = Math.min(LONGEST - 1, n - from); k > 0; k--) {
    if (prefixes().has(text.slice(n - k))) return n - k;
  }
  const tail = text.slice(Math.max(from, n - SHAPE_TAIL_LIMIT));
  let best = Infinity;
  for (const re of SHAPE_TAILS) {
    const m = re.exec(tail);
    if (m) best = Math.min(best, n - tail.length + m.index);
  }
  return best;
}
