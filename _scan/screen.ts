/**
 * The rule screen, for short texts that fold to their own lower case (see `foldsToLowerCase`): one pass over
 * the text names the rules that could match it, so the scanner runs only those, and for most arguments none.
 *
 * A rule can only match where its evidence is: one of its anchors (its needles when it has no anchors)
 * somewhere in the folded text (for a rule over the letters-only text: somewhere in the letters), and, when it
 * has leads, one of them at a word start (see `Rule`). The one pass looks for anchors only: it keeps the last
 * three characters (and the last three letters) as a key into a bit set of the anchors' rarest three-character
 * pieces (grams; a shorter anchor stands for every gram that ends in it), and checks the whole anchor where its
 * gram occurs. Only when some rule with leads has an anchor in the text are its leads looked for, word start by
 * word start. JavaScript loops are slow per character, so the pass does little more than that.
 *
 * @module
 */
import type { Rule } from "./rules.ts";
import { foldsToLowerCase } from "./prefilter.ts";

/** A gram key is three character classes of `CLASS_BITS` bits. */
const CLASS_BITS = 6;
const CLASS_MASK = (1 << CLASS_BITS) - 1;
const PAIR_KEY = (1 << (2 * CLASS_BITS)) - 1;
const GRAM_KEY = (1 << (3 * CLASS_BITS)) - 1;
/** A letters-only gram key is three letters (a-z as 1-26) of 5 bits. */
const LETTER_BITS = 5;
const LETTER_KEY = (1 << (3 * LETTER_BITS)) - 1;

/**
 * What `RuleScreen.candidates` reads per ASCII code unit, in one number: the class in the low bits, then the
 * letter's code and shift for the letters-only key (both 0 for a non-letter, which leaves that key as it is),
 * then flags for the test that the text folds to its lower case.
 */
const LETTER_CODE_AT = 8;
const LETTER_SHIFT_AT = 16;
const LETTER = 1 << 20;
/** A space or a newline: two in a row are folded to one. */
const BLANK = 1 << 21;
/** A spacer of letter spacing (see `isSpacer` in fold.ts). */
const SPACER = 1 << 22;
/** Tab, vertical tab, form feed, carriage return: folded to a space or a newline. */
const ODD_SPACE = 1 << 23;

/**
 * How often a character occurs in ordinary text (per cent; English letters, a space between words), for
 * picking each anchor's rarest gram: a common gram only costs checks, never a wrong answer.
 */
const FREQUENCY: Readonly<Record<string, number>> = {
  " ": 18,
  e: 10.4,
  t: 7.5,
  a: 6.7,
  o: 6.2,
  i: 5.7,
  n: 5.5,
  s: 5.2,
  h: 5,
  r: 4.9,
  d: 3.5,
  l: 3.3,
  c: 2.3,
  u: 2.3,
  m: 2,
  w: 2,
  f: 1.8,
  g: 1.6,
  y: 1.6,
  p: 1.6,
  b: 1.2,
  v: 0.8,
  k: 0.6,
};

/** The index in `s` (three characters or more) of its rarest three-character piece. */
function rarestGram(s: string): number {
  let best = 0;
  let bestScore = Infinity;
  for (let i = 0; i + 3 <= s.length; i++) {
    let score = 1;
    for (let j = i; j < i + 3; j++) score *= FREQUENCY[s[j]] ?? 0.3;
    if (score < bestScore) [best, bestScore] = [i, score];
  }
  return best;
}

/** True when `s` can occur in a text that folds to its own lower case: ASCII without upper-case letters. */
function canOccur(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80 || (c >= 0x41 && c <= 0x5a)) return false;
  }
  return true;
}

/** True when `text` holds `s` (lower-case) at `start`, ignoring the case of the text's letters. */
function holdsAt(text: string, start: number, s: string): boolean {
  if (start < 0 || start + s.length > text.length) return false;
  for (let j = 0; j < s.length; j++) {
    let c = text.charCodeAt(start + j);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== s.charCodeAt(j)) return false;
  }
  return true;
}

/** True when the code unit is a letter a-z or A-Z. */
function isLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** Sets bit `key` of a bit set. */
function setBit(bits: Int32Array, key: number): void {
  bits[key >>> 5] |= 1 << (key & 31);
}

/** A string that is evidence for some rules, checked whole where its gram (or its first letters) occurs. */
interface Probe {
  /** The string (lower-case ASCII). */
  readonly text: string;
  /** Where its gram starts in it. */
  readonly at: number;
  /** The rules it is evidence for, as bits. */
  rules: number;
}

/**
 * Which of a set of rules could match a short text. Built once per scanning context, on first use; bit `i` of
 * every mask stands for `rules[i]`, so at most 32 rules.
 */
export class RuleScreen {
  /** Bit of each rule. */
  readonly bits: ReadonlyMap<Rule, number>;
  /** Rules whose evidence the screen cannot judge (an empty anchor, a short letters-only one): always run. */
  #always = 0;
  /** Rules with leads: they also need a lead at a word start. */
  #needLead = 0;
  /** Per ASCII code unit: its class (0: in no anchor, upper-case letters as lower-case), letter code and flags. */
  #units = new Int32Array(128);
  #classCount = 1;
  /** Bit set over gram keys: the key of some anchor's gram, or one ending in an anchor of one or two characters. */
  #grams = new Int32Array(1 << (3 * CLASS_BITS - 5));
  /** Anchors of three characters or more, by their gram's key. */
  #anywhere = new Map<number, Probe[]>();
  /** Rules by the class of a one-character anchor, and by the pair key of a two-character one. */
  #singles = new Int32Array(1 << CLASS_BITS);
  #pairs = new Int32Array(PAIR_KEY + 1);
  /** Leads by their first two characters (`c0 << 7 | c1`; a one-character lead by `c0 << 7`). */
  #leads = new Map<number, Probe[]>();
  /** Bit set over letters-only gram keys: the rarest gram of an anchor of a letters-only rule. */
  #letterGrams = new Int32Array(1 << (3 * LETTER_BITS - 5));
  /** The letters-only rules' anchors, checked in the letters when one of their grams occurs. */
  #letterAnchors: Probe[] = [];

  /** Builds the screen of `rules` (those over the folded or the letters-only text; raw rules never match ASCII). */
  constructor(rules: readonly Rule[]) {
    if (rules.length > 32) throw new Error(`the rule screen holds 32 rules, not ${rules.length}`);
    this.bits = new Map(rules.map((rule, i) => [rule, 1 << i]));
    for (let c = 0; c < 128; c++) {
      const lower = c | 0x20;
      const letter = lower >= 0x61 && lower <= 0x7a;
      this.#units[c] =
        (letter ? LETTER | ((lower - 0x60) << LETTER_CODE_AT) | (LETTER_BITS << LETTER_SHIFT_AT) : 0) |
        (c === 0x20 || c === 0x0a ? BLANK : 0) | (" .-_*|/".includes(String.fromCharCode(c)) ? SPACER : 0) |
        (c === 0x09 || c === 0x0b || c === 0x0c || c === 0x0d ? ODD_SPACE : 0);
    }
    rules.forEach((rule, i) => this.#add(rule, 1 << i));
  }

  /** Enters the evidence of one rule. */
  #add(rule: Rule, bit: number): void {
    const anchors = rule.anchors ?? rule.needles;
    if (rule.raw || !anchors) throw new Error(`${rule.name}: the screen needs anchors or needles`);
    if (rule.squashed) {
      for (const anchor of anchors) {
        if (!/^[a-z]*$/.test(anchor)) continue; // the letters-only text holds no other character
        if (anchor.length < 3) this.#always |= bit;
        else this.#addLetterAnchor(anchor, bit);
      }
      return;
    }
    for (const anchor of anchors) {
      if (!canOccur(anchor)) continue;
      if (anchor.length === 0) this.#always |= bit;
      else if (anchor.length === 1) this.#singles[this.#endingIn(anchor)] |= bit;
      else if (anchor.length === 2) this.#pairs[this.#endingIn(anchor)] |= bit;
      else this.#addAnchor(anchor, bit);
    }
    if (!rule.leads) return;
    this.#needLead |= bit;
    for (const lead of rule.leads) {
      if (!canOccur(lead)) continue;
      if (lead.length === 0) this.#always |= bit;
      else this.#addProbe(this.#leads, (lead.charCodeAt(0) << 7) | (lead.charCodeAt(1) || 0), lead, 0, bit);
    }
  }

  /** Enters an anchor of three characters or more under the key of its rarest gram. */
  #addAnchor(anchor: string, bit: number): void {
    const at = rarestGram(anchor);
    const key = this.#keyOf(anchor.slice(at, at + 3));
    setBit(this.#grams, key);
    this.#addProbe(this.#anywhere, key, anchor, at, bit);
  }

  /** Adds `bit` to the probe for `s` under `key`. */
  #addProbe(table: Map<number, Probe[]>, key: number, s: string, at: number, bit: number): void {
    const probes = table.get(key) ?? [];
    const same = probes.find((p) => p.text === s && p.at === at);
    if (same) same.rules |= bit;
    else probes.push({ text: s, at, rules: bit });
    table.set(key, probes);
  }

  /**
   * Marks every gram key that ends in the one or two characters `s` (whatever classes come before) and returns
   * the key of `s` alone.
   */
  #endingIn(s: string): number {
    const key = this.#keyOf(s);
    const before = 3 - s.length;
    for (let k = 0; k < 1 << (before * CLASS_BITS); k++) {
      setBit(this.#grams, (k << (s.length * CLASS_BITS)) | key);
    }
    return key;
  }

  /** Enters an anchor of a letters-only rule under its rarest gram. */
  #addLetterAnchor(anchor: string, bit: number): void {
    const at = rarestGram(anchor);
    let key = 0;
    for (let j = at; j < at + 3; j++) key = (key << LETTER_BITS) | (anchor.charCodeAt(j) - 0x60);
    setBit(this.#letterGrams, key);
    this.#letterAnchors.push({ text: anchor, at, rules: bit });
  }

  /** The key of one to three characters, giving each a class on first sight. */
  #keyOf(s: string): number {
    let key = 0;
    for (let j = 0; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if ((this.#units[c] & CLASS_MASK) === 0) {
        if (this.#classCount > CLASS_MASK) {
          throw new Error("the rule screen's anchors use too many characters");
        }
        const cls = this.#classCount++;
        this.#units[c] |= cls;
        if (c >= 0x61 && c <= 0x7a) this.#units[c - 0x20] |= cls;
      }
      key = (key << CLASS_BITS) | (this.#units[c] & CLASS_MASK);
    }
    return key;
  }

  /**
   * The rules (as bits) that could match `text`, or -1 when `text` does not fold to its own lower case (see
   * `foldsToLowerCase`; the screen cannot judge it). 0 proves that no rule can match.
   */
  candidates(text: string): number {
    const units = this.#units;
    const grams = this.#grams;
    const letterGrams = this.#letterGrams;
    let found = 0;
    let key = 0;
    let letterKey = 0;
    let letterHit = 0;
    // The folding test's evidence: any code unit beyond ASCII, and the flags that call for the whole test.
    let all = 0;
    let unsure = 0;
    let previous = 0;
    let c1 = -1;
    let c2 = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      all |= c;
      const u = units[c & 0x7f];
      key = ((key << CLASS_BITS) | (u & CLASS_MASK)) & GRAM_KEY;
      if ((grams[key >>> 5] & (1 << (key & 31))) !== 0) found |= this.#anchorsAt(text, i, key);
      letterKey = ((letterKey << ((u >>> LETTER_SHIFT_AT) & 7)) | ((u >>> LETTER_CODE_AT) & 31)) & LETTER_KEY;
      letterHit |= letterGrams[letterKey >>> 5] & (1 << (letterKey & 31));
      unsure |= (u & ODD_SPACE) | (u & previous & BLANK);
      // Letter spacing is seen from its second spacer: a spacer, a letter, the same spacer.
      if (c === c2 && (u & SPACER) !== 0 && (previous & LETTER) !== 0) unsure |= SPACER;
      previous = u;
      c2 = c1;
      c1 = c;
    }
    if (all >= 0x80 || (unsure !== 0 && !foldsToLowerCase(text))) return -1;
    if (letterHit !== 0) found |= this.#inLetters(text);
    found |= this.#always;
    const needLead = found & this.#needLead;
    return needLead === 0 ? found : (found & ~needLead) | this.#leadsIn(text, needLead);
  }

  /** Rules with an anchor that ends at index `end`, where the gram `key` ends. */
  #anchorsAt(text: string, end: number, key: number): number {
    let rules = this.#singles[key & CLASS_MASK] | this.#pairs[key & PAIR_KEY];
    const probes = this.#anywhere.get(key);
    if (probes === undefined) return rules;
    for (const p of probes) if (holdsAt(text, end - 2 - p.at, p.text)) rules |= p.rules;
    return rules;
  }

  /** Rules over the letters-only text with an anchor in the letters of `text`. */
  #inLetters(text: string): number {
    const letters = text.toLowerCase().replace(/[^a-z]+/g, "");
    let rules = 0;
    for (const a of this.#letterAnchors) if (letters.includes(a.text)) rules |= a.rules;
    return rules;
  }

  /** Those of the rules `wanted` that have a lead at a word start (a letter after anything but a letter). */
  #leadsIn(text: string, wanted: number): number {
    let rules = 0;
    for (let p = 0; p < text.length; p++) {
      const c = text.charCodeAt(p) | 0x20;
      if (!isLetter(c) || (p > 0 && isLetter(text.charCodeAt(p - 1)))) continue;
      const next = p + 1 < text.length ? text.charCodeAt(p + 1) : 0;
      rules |= this.#leadsAt(text, p, c << 7, wanted) |
        this.#leadsAt(text, p, (c << 7) | (isLetter(next) ? next | 0x20 : next), wanted);
      if ((rules & wanted) === wanted) break;
    }
    return rules & wanted;
  }

  /** Those of the rules `wanted` with a lead under `key` at `p`. */
  #leadsAt(text: string, p: number, key: number, wanted: number): number {
    const leads = this.#leads.get(key);
    if (leads === undefined) return 0;
    let rules = 0;
    for (const lead of leads) {
      if ((lead.rules & wanted) !== 0 && holdsAt(text, p, lead.text)) rules |= lead.rules;
    }
    return rules;
  }
}
