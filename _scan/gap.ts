/**
 * The sentence gap of the scanner's rules, in one home for rules.ts and translated.ts: the characters between
 * an order's words that stay inside one sentence (no "!", "?" or line break, and a dot only before a
 * non-space), in two forms, and the same gap running on across a line break, as `acrossLines` in rules.ts
 * reads a wrapped line.
 *
 * @module
 */

/** One character of `gap`: not a sentence's end (a dot must be followed by a non-space). */
const GAP_SOURCE = "(?:[^.!?\\n]|\\.(?=[^\\s]))";

/**
 * `GAP_SOURCE` across a line break as well: the newline in its one class, not a third alternative tried at
 * each character of the gap.
 */
const GAP_ACROSS = "(?:[^.!?]|\\.(?=[^\\s]))";

/**
 * A gap of up to `n` characters that stays inside one sentence (a dot must be followed by a non-space).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gap } from "./gap.ts";
 *
 * const re = new RegExp(`^send ${gap(20)} to x@y\\.co`);
 * assert.ok(re.test("send the v1.2 build to x@y.co"));
 * assert.ok(!re.test("send it. to x@y.co"));
 * ```
 */
export const gap = (n: number): string => `${GAP_SOURCE}{0,${n}}?`;

/** The scan of `gapThen`, and the same scan across a line break as well. */
const GAP_THEN = "(?<gap>[^!?\\n]";
const GAP_THEN_ACROSS = "(?<gap>[^!?]";

/**
 * `gap(n)` followed by `rest`, which ends the pattern or its alternative and whose matches never start with a
 * "." (a boundary, a letter or a space comes first): the same matches, found another way. A lookahead, which
 * never backs into itself, scans a set to the first place where `rest` matches or a sentence ends (". "); the
 * scan stops at whichever comes first, and only `rest` lets the match go on, from that same place. Bun's engine
 * steps a repeated group such as `gap`'s about twice as slowly as a repeated set: 35-38% less time in these
 * rules there, the same in Deno. The group is named, so that the pattern's other groups keep their numbers;
 * a pattern can hold one (`rest` appears twice, and a name may not repeat).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gapThen } from "./gap.ts";
 *
 * const re = new RegExp(`^send ${gapThen(20, " to x@y\\.co")}`);
 * assert.equal(re.exec("send the v1.2 build to x@y.co")?.[0], "send the v1.2 build to x@y.co");
 * assert.equal(re.exec("send it. to x@y.co"), null);
 * ```
 */
export const gapThen = (n: number, rest: string): string =>
  `(?=${GAP_THEN}{0,${n}}?)(?:${rest}|\\.\\s))\\k<gap>${rest}`;

/**
 * `source` with each of its gaps (`gap` and `gapThen`) running on across a line break.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acrossGaps, gapThen } from "./gap.ts";
 *
 * const re = new RegExp(`^send ${acrossGaps(gapThen(20, " to x@y\\.co"))}`);
 * assert.ok(re.test("send the\nfile to x@y.co"));
 * ```
 */
export function acrossGaps(source: string): string {
  return source.replaceAll(GAP_SOURCE, GAP_ACROSS).replaceAll(GAP_THEN, GAP_THEN_ACROSS);
}
