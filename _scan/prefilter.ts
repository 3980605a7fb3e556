/**
 * The scanner's cheapest tests, for short strings: where the fold (fold.ts) would join letter spacing, which
 * the rule screen (screen.ts) asks only where its pass finds a key that may be it, so that it can read the
 * original as the rules would read its fold.
 *
 * @module
 */
import { isSpacer } from "./fold.ts";

/** True when the code unit is a letter a-z or A-Z. */
export function isAsciiLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

function isAlnum(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0x30 && c <= 0x39);
}

/** The spacer the fold reads for an ASCII unit: a space for a tab, vertical tab or form feed, else the unit. */
function spacerOf(c: number): number {
  return c === 0x09 || c === 0x0b || c === 0x0c ? 0x20 : c;
}

/**
 * True when index `i` of `text` is the second spacer of letter spacing, which the fold joins: L S L S L, a
 * stand-alone letter, a spacer (see `isSpacer`; a tab, vertical tab or form feed counts as a space), a letter,
 * the same spacer, a letter, then no letter or digit. The fold's own test, seen from the second spacer.
 *
 * @example Where letter spacing ends
 * ```ts
 * import assert from "node:assert/strict";
 * import { lettersSpacedAt } from "./prefilter.ts";
 *
 * assert.equal(lettersSpacedAt("i.g.n.o.r.e", 3), true);
 * assert.equal(lettersSpacedAt("a b\tc", 3), true);
 * assert.equal(lettersSpacedAt("a b-c", 3), false);
 * assert.equal(lettersSpacedAt("I am a dog", 4), false);
 * ```
 */
export function lettersSpacedAt(text: string, i: number): boolean {
  const s = spacerOf(text.charCodeAt(i));
  return isSpacer(s) && isAsciiLetter(text.charCodeAt(i - 1)) && spacerOf(text.charCodeAt(i - 2)) === s &&
    isAsciiLetter(text.charCodeAt(i - 3)) && !isAlnum(text.charCodeAt(i - 4)) &&
    isAsciiLetter(text.charCodeAt(i + 1)) && !isAlnum(text.charCodeAt(i + 2));
}
