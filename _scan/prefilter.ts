/**
 * The scanner's cheapest test, for short strings: one loop that proves a string folds to its own lower case,
 * character for character, so that the rule screen (screen.ts) can read the original as the rules would read
 * its fold.
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

/**
 * True when `fold(text).text` is `text.toLowerCase()` with the identity map: ASCII with no tab, vertical tab,
 * form feed or CR, no run of spaces and newlines, and no letter spacing ("i g n o r e": a stand-alone letter,
 * a spacer, a letter, the same spacer, a letter, then no letter or digit). `fold` tests the same things.
 *
 * @example Which strings fold to their lower case
 * ```ts
 * import assert from "node:assert/strict";
 * import { foldsToLowerCase } from "./prefilter.ts";
 *
 * assert.equal(foldsToLowerCase("Plain ASCII, one space each."), true);
 * assert.equal(foldsToLowerCase("two  spaces"), false);
 * assert.equal(foldsToLowerCase("i.g.n.o.r.e"), false);
 * assert.equal(foldsToLowerCase("café"), false);
 * ```
 */
export function foldsToLowerCase(text: string): boolean {
  let previous = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 || (c >= 0x09 && c <= 0x0d && c !== 0x0a)) return false;
    if (c === 0x20 || c === 0x0a) {
      if (previous === 0x20 || previous === 0x0a) return false;
    }
    // Letter spacing, seen from its second spacer: L S L S L.
    if (
      isSpacer(c) && isAsciiLetter(previous) && text.charCodeAt(i - 2) === c &&
      isAsciiLetter(text.charCodeAt(i - 3)) &&
      !isAlnum(text.charCodeAt(i - 4)) && isAsciiLetter(text.charCodeAt(i + 1)) &&
      !isAlnum(text.charCodeAt(i + 2))
    ) return false;
    previous = c;
  }
  return true;
}
