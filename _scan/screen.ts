/**
 * The rule screen, for short texts that fold to their own lower case (ASCII without odd spaces, runs of blanks
 * or letter spacing: see fold.ts) and hold no escape sequence (see terminal.ts): one pass over the text names
 * the rules that could match it, so the scanner runs only those, and for most arguments none.
 *
 * A rule can only match where its evidence is: one of its anchors (its needles when it has no anchors)
 * somewhere in the folded text (for a rule over the letters-only text: somewhere in the letters), and, when it
 * has leads, one of them at a word start (see `Rule`). The one pass looks for anchors only: it keeps the last
 * three characters as a key into a bit set of the anchors' rarest three-character pieces (grams; a shorter
 * anchor stands for every gram that ends in it), and checks the whole anchor where its gram occurs; and it
 * notes which letters the text holds: only a text with every letter of a letters-only anchor is searched for
 * one. The keys after which the fold may differ from the lower case are marked too, and the pass tells there
 * whether it does. Only when some rule with leads has an anchor in the text are its leads looked for, word start
 * by word start. JavaScript loops are slow per character, so the pass does little more than that.
 *
 * @module
 */
import type { Rule } from "./rules.ts";
import { isSpacer, lettersOnly } from "./fold.ts";
import { grownBy } from "../_common/bytes.ts";
import { ENCODING_STARTS, encodingAt } from "./decode.ts";

/** A gram key is three character classes of `CLASS_BITS` bits. */
const CLASS_BITS = 6;
const CLASS_MASK = (1 << CLASS_BITS) - 1;
const PAIR_KEY = (1 << (2 * CLASS_BITS)) - 1;
const GRAM_KEY = (1 << (3 * CLASS_BITS)) - 1;
/** A letters-only gram key is three letters (a-z as 1-26) of 5 bits. */
const LETTER_BITS = 5;
const LETTER_KEY = (1 << (3 * LETTER_BITS)) - 1;
/**
 * What `RuleScreen.candidates` reads per ASCII code unit, in one number: the class in the low `CLASS_BITS`
 * bits, then (for a letter, in either case) one bit per letter from `PRESENT_AT`, a..z, so that OR-ing the
 * numbers of a text says which letters it holds. 26 letters and 6 class bits fill the 32.
 */
const PRESENT_AT = CLASS_BITS;
/** What the letters-only pass (`#lettersHit`) reads per ASCII letter: its code (1-26) and its shift. */
const LETTER_CODE_AT = 0;
const LETTER_SHIFT_AT = 8;
/** A bit of the masks no rule uses: the text may not fold to its lower case where the key ends. */
const UNSURE = 1 << 31;
/** Spacers of letter spacing (see `isSpacer` in fold.ts), blanks of a run, and spaces the fold rewrites. */
const SPACERS = " .-_*|/";
const BLANKS = " \n";
const ODD_SPACES = "\t\v\f\r";
/** ESC: text with an escape sequence is also read as a terminal shows it (see terminal.ts), not its lower case. */
const ESCAPE = "\x1b";

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

/**
 * Three-letter pieces common in English words and in the words of tool arguments (code, files, dates), which
 * letter frequencies alone rate too rare: an anchor is looked for by another of its pieces where it has one. A
 * text that holds an anchor's piece costs the screen a look-up and the anchor's check (on Bun about as much as
 * eight more characters), so "agent" is looked for by "gen", not by the "age" of message, page, image, usage.
 */
const COMMON =
  "|the|and|ing|ion|tio|ent|for|her|tha|hat|his|you|all|not|are|ver|ati|ons|con|ted|com|ith|wit|" +
  "thi|men|pro|our|est|ate|rea|sta|ess|can|one|out|ers|ort|per|ect|ome|ove|ain|ine|ive|ell|omp|omm|tex|ord|ask|" +
  "sag|equ|low|gen|mod|cal|top|dir|pol|cop|ins|ool|pri|imp|vel|ssi|nse|uth|rmi|hou|ou |ur |ll |do |hav|nev|ode|" +
  "ile|fil|dat|age|";

/**
 * `FREQUENCY` as a map and `COMMON` as a set, made on first use: `rarestGram` runs on the first scan of a short
 * text, in the interpreter, where V8 looks up a character in an object literal several times slower than in a
 * map (and JavaScriptCore reads the one-unit strings and slices faster than a loop over code units).
 */
let frequencies: Map<string, number> | undefined;
let commonGrams: Set<string> | undefined;

/** The index in `s` (three characters or more) of its rarest three-character piece. */
function rarestGram(s: string): number {
  frequencies ??= new Map(Object.entries(FREQUENCY));
  commonGrams ??= new Set(COMMON.split("|"));
  let best = 0;
  let bestScore = Infinity;
  for (let i = 0; i + 3 <= s.length; i++) {
    let score = commonGrams.has(s.slice(i, i + 3)) ? 30 : 1;
    for (let j = i; j < i + 3; j++) score *= frequencies.get(s[j]) ?? 0.3;
    if (score < bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

/**
 * An expression that matches where the letters of a text hold `word` (lower-case letters) with anything but
 * letters between them: "ignore" becomes `g[^a-z]*n[^a-z]*o[^a-z]*r[^a-z]*e(?<=i[^a-z]*g[^a-z]*n[^a-z]*o[^a-z]*r[^a-z]*e)`.
 * Entered at the word's rarest letter (by `FREQUENCY`), the engine tries a match only where that letter stands;
 * the letters before it are checked by a look back over the whole word once the rest has matched. Behind the
 * rest, not in front of the rarest letter: JavaScriptCore then skips to that letter, which it does not past a
 * look-behind (half the time on prose), and the look back runs only where the rest matched. Linear:
 * `[^a-z]*` and the next letter cannot both match a character, so each run of non-letters is read a bounded
 * number of times, and the matches of the rest hold disjoint runs of letters.
 */
export function spreadPattern(word: string): string {
  const spread = (s: string) => s.split("").join("[^a-z]*");
  const frequency = (c: string) => FREQUENCY[c] ?? 0;
  let k = 0;
  for (let i = 1; i < word.length; i++) if (frequency(word[i]) < frequency(word[k])) k = i;
  return k === 0 ? spread(word) : `${spread(word.slice(k))}(?<=${spread(word)})`;
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

/** True for a blank of the fold: a space, a newline, or a tab, vertical tab, form feed or CR. */
function isBlank(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/**
 * True when the fold of `text` is not its lower case because of what ends at index `i`, where the pass found a
 * key that may fold otherwise (see `RuleScreen.#unsure`): a blank after a blank (a run, which the fold
 * collapses), a tab, vertical tab, form feed or CR (which it rewrites), or letter spacing (which it joins); or
 * not the only text read: an ESC (the text as a terminal shows it is read too), or the start of an encoding
 * (see decode.ts: the text as decoded is read too).
 */
function foldsOtherwiseAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return (isBlank(c) && ((c !== 0x20 && c !== 0x0a) || isBlank(text.charCodeAt(i - 1)))) || c === 0x1b ||
    lettersSpacedAt(text, i) || encodingAt(text, i);
}

/**
 * True when a text of at most `maxLength` units, each of a code in `codes`, can form a key (the last three
 * codes of `bits` bits each, 0 before the text's start) marked in `bits`. Over-counts (0 anywhere before the
 * last code), never under-counts.
 */
function reachable(
  codes: ReadonlySet<number>,
  maxLength: number,
  width: number,
  marked: Int32Array,
): boolean {
  if (maxLength === 0 || codes.size === 0) return false;
  const last = [...codes];
  const before = maxLength >= 2 ? [0, ...codes] : [0];
  const first = maxLength >= 3 ? [0, ...codes] : [0];
  for (const a of first) {
    for (const b of before) {
      for (const c of last) {
        const key = (a << (2 * width)) | (b << width) | c;
        if ((marked[key >>> 5] & (1 << key)) !== 0) return true;
      }
    }
  }
  return false;
}

/** The `#units` bit of letter `c` (a-z or A-Z) that says a text holds it (see `PRESENT_AT`). */
function presentBit(c: number): number {
  return 1 << (PRESENT_AT + (c | 0x20) - 0x61);
}

/** Texts shorter than this look for letters-only anchors with a loop, longer ones with an expression. */
const LETTER_LOOP_UNDER = 16;

/** A lead key is the low `LEAD_BITS` bits of a word's first three units (0 past the text's end). */
const LEAD_BITS = 5;
const LEAD_MASK = (1 << LEAD_BITS) - 1;
const LEAD_KEYS = 1 << (3 * LEAD_BITS);

/**
 * The lead key of units `c0`, `c1`, `c2`. The low five bits are the same for a letter in either case, so the
 * key needs no fold; other units that share them share keys, which costs a check, never a lead.
 */
function leadKey(c0: number, c1: number, c2: number): number {
  return ((c0 & LEAD_MASK) << (2 * LEAD_BITS)) | ((c1 & LEAD_MASK) << LEAD_BITS) | (c2 & LEAD_MASK);
}

/** Slots of the hash table of anchor grams (a power of two, at least twice the grams). */
const SLOTS = 1024;

/** The first slot to look at for a gram key (Fibonacci hashing). */
function slotOf(key: number): number {
  return Math.imul(key, 0x9e3779b1) >>> 22;
}

/** Sets bit `key` of a bit set. */
function setBit(bits: Int32Array, key: number): void {
  bits[key >>> 5] |= 1 << (key & 31);
}

/**
 * Sets in `bits` (a power of two long) every key that ends in a class of `ends` (a bit set over the 64
 * classes, two words): key `k << 6 | c` is bit `c & 31` of word `2k + (c >> 5)`, so every pair of words is
 * `ends`. Overwrites, doubling the filled part with each native copy, not a loop over the words: this runs on
 * a scanner's first use, in the interpreter.
 */
function fillPairs(bits: Int32Array, ends: Int32Array): void {
  bits.set(ends);
  for (let n = ends.length; n < bits.length; n *= 2) bits.copyWithin(n, 0, n);
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

/** Adds `bit` to the probe for `s` (its gram at `at`) under `key` of `table`. */
function addProbe(table: Map<number, Probe[]>, key: number, s: string, at: number, bit: number): void {
  const probes = table.get(key);
  if (probes === undefined) {
    table.set(key, [{ text: s, at, rules: bit }]);
    return;
  }
  for (const p of probes) {
    if (p.text === s && p.at === at) {
      p.rules |= bit;
      return;
    }
  }
  probes.push({ text: s, at, rules: bit });
}

/** Enters a lead in `table` under the key of its first three characters (each key they begin, if fewer). */
function addLead(table: Map<number, Probe[]>, lead: string, bit: number): void {
  // Each of the three places: the lead's unit, or every unit where it is shorter. Loops over ranges, no
  // arrays: this runs in the interpreter.
  const low = (j: number) => j < lead.length ? lead.charCodeAt(j) : 0;
  const high = (j: number) => j < lead.length ? lead.charCodeAt(j) : LEAD_MASK;
  for (let u0 = low(0); u0 <= high(0); u0++) {
    for (let u1 = low(1); u1 <= high(1); u1++) {
      for (let u2 = low(2); u2 <= high(2); u2++) addProbe(table, leadKey(u0, u1, u2), lead, 0, bit);
    }
  }
}

/**
 * Lays the lists of `byKey` out end to end in key order, and sets `start` so that the list under key `k` is
 * `start[k]` to `start[k + 1]` of the result (empty for a key with none). Over the keys that hold a list,
 * filling the ranges between them natively, not key by key: this runs in the interpreter.
 */
function layOut(byKey: ReadonlyMap<number, readonly Probe[]>, start: Int32Array): Probe[] {
  const all: Probe[] = [];
  let next = 0;
  for (const key of [...byKey.keys()].sort((a, b) => a - b)) {
    start.fill(all.length, next, key + 1);
    for (const p of byKey.get(key)!) all.push(p);
    next = key + 1;
  }
  start.fill(all.length, next);
  return all;
}

/**
 * The bit of each of `rules` in the masks of their screen (`RuleScreen.bits`): bit `i` for `rules[i]`, so at
 * most 31 rules. Known without the screen, for the scanner's plan, which a long text reads without the
 * screen.
 */
export function ruleBits(rules: readonly Rule[]): Map<Rule, number> {
  if (rules.length > 31) throw new Error(`the rule screen holds 31 rules, not ${rules.length}`);
  return new Map(rules.map((rule, i) => [rule, 1 << i]));
}

/**
 * Which of a set of rules could match a short text. Built once per scanning context, on first use; bit `i` of
 * every mask stands for `rules[i]`, so at most 31 rules.
 */
export class RuleScreen {
  /** Bit of each rule. */
  readonly bits: ReadonlyMap<Rule, number>;
  /** Rules whose evidence the screen cannot judge (an empty anchor, a short letters-only one): always run. */
  #always = 0;
  /** Rules with leads: they also need a lead at a word start. */
  #needLead = 0;
  /** Per ASCII code unit: its class (0: in no gram; upper-case letters as lower-case) and its letter's bit. */
  #units = new Int32Array(128);
  /** Per ASCII code unit: its letter's code and shift for the letters-only key (0 for a non-letter). */
  #letterUnits = new Int32Array(128);
  #classCount = 1;
  /**
   * Bit set over gram keys: the key of some anchor's gram, one ending in an anchor of one or two characters, or
   * one that may fold to something else (`#unsure`).
   */
  #grams = new Int32Array(1 << (3 * CLASS_BITS - 5));
  /**
   * `#grams` without the keys marked for one-character anchors alone: what the pass reads once it has found
   * every rule with one (a digit is evidence for an address: most tool outputs hold many).
   */
  #gramsPast = new Int32Array(1 << (3 * CLASS_BITS - 5));
  /** The rules with a one-character anchor. */
  #singleRules = 0;
  /**
   * Bit set over the gram keys that may fold to something else: a spacer, a letter, the same spacer; two blanks;
   * an odd space; ESC.
   */
  #unsure = new Int32Array(1 << (3 * CLASS_BITS - 5));
  /** Anchors of three characters or more, by their gram's key, while the screen is built. */
  #anywhere = new Map<number, Probe[]>();
  /** The same as a hash table for `candidates`: slot of a key, and the key (plus 1; 0 for none) in each slot. */
  #slotKeys = new Int32Array(SLOTS);
  /** The probes of slot `s`: `#probeText` and so on from `#slotStart[s]` to `#slotStart[s + 1]`. */
  #slotStart = new Int32Array(SLOTS + 1);
  #probeText: string[] = [];
  #probeAt = new Int32Array(0);
  #probeRules = new Int32Array(0);
  /** Rules by the class of a one-character anchor, and by the pair key of a two-character one. */
  #singles = new Int32Array(1 << CLASS_BITS);
  #pairs = new Int32Array(PAIR_KEY + 1);
  /**
   * The leads of each rule with leads, and its bit, until a text first needs the tables below (null since):
   * most texts a screen reads hold no anchor of a rule with leads, and a one-shot scan of such a text never
   * does, so the screen is built without them.
   */
  #pendingLeads: [leads: readonly string[], bit: number][] | null = [];
  /**
   * The leads as a table for `#leadsAt`, laid out when a text first needs it: the leads under key `k` are
   * `#leadText` and `#leadRules` from `#leadStart[k]` to `#leadStart[k + 1]` (a read per word start, not a
   * look-up in a map).
   */
  #leadStart = new Int32Array(0);
  #leadText: string[] = [];
  #leadRules = new Int32Array(0);
  /**
   * Per lead key, the rules of the leads under it. One read passes a word start that begins none: three units,
   * not two, as many leads share their first two ("re": reveal, remove, reset, ...) with common words.
   */
  #leadRulesAt = new Int32Array(0);
  /** Bit set over letters-only gram keys: the rarest gram of an anchor of a letters-only rule. */
  #letterGrams = new Int32Array(1 << (3 * LETTER_BITS - 5));
  /** The letters-only rules' anchors, checked in the letters when one of their grams occurs. */
  #letterAnchors: Probe[] = [];
  /** Per letters-only anchor, the `#units` bits of its letters: a text without all of them cannot hold it. */
  #letterNeeds = new Int32Array(0);
  /** The bits every letters-only anchor needs (all set for none): most short texts lack one of them. */
  #letterNeedsOfAll = -1;
  /**
   * Matches an ASCII text exactly when its letters (lower-cased) hold a letters-only anchor (see
   * `spreadPattern`), case-insensitive (`[^a-z]` then passes no letter of either case). Null for none.
   */
  #letterGate: RegExp | null = null;
  /** The rules of every letters-only anchor when they all stand for the same rules (0 when not). */
  #letterRulesOfAll = 0;
  /**
   * What the last `candidates` call that looked for leads found (see `leadCount`): the text, the rules it
   * looked for, and each word start where a lead of one begins, with the bits of those rules. A later call
   * that did not look leaves them: they depend on the text alone, so they hold for it still.
   */
  #walked: string | undefined;
  #walkWanted = 0;
  #walkAt = new Int32Array(64);
  #walkRules = new Int32Array(64);
  #walkCount = 0;
  /** The starts `leadCount` writes, in a buffer it overwrites. */
  #startsOut = new Int32Array(64);

  /** Builds the screen of `rules` (those over the folded or the letters-only text; raw rules never match ASCII). */
  constructor(rules: readonly Rule[]) {
    this.bits = ruleBits(rules);
    for (let c = 0x61; c <= 0x7a; c++) {
      this.#units[c] = this.#units[c - 0x20] = presentBit(c);
      this.#letterUnits[c] = this.#letterUnits[c - 0x20] = ((c - 0x60) << LETTER_CODE_AT) |
        (LETTER_BITS << LETTER_SHIFT_AT);
      this.#keyOf(String.fromCharCode(c));
    }
    this.#addSingles(rules);
    this.#addUnsure();
    rules.forEach((rule, i) => this.#add(rule, 1 << i));
    this.#gateLetters();
    this.#hashAnchors();
  }

  /** Lays the leads out in the tables that `#leadsIn` and `#leadsAt` read. */
  #tableLeads(pending: readonly [leads: readonly string[], bit: number][]): void {
    this.#pendingLeads = null;
    const byKey = new Map<number, Probe[]>();
    for (const [leads, bit] of pending) {
      for (const lead of leads) if (lead.length > 0 && canOccur(lead)) addLead(byKey, lead, bit);
    }
    this.#leadStart = new Int32Array(LEAD_KEYS + 1);
    this.#leadRulesAt = new Int32Array(LEAD_KEYS);
    for (const [key, probes] of byKey) {
      let rules = 0;
      for (const p of probes) rules |= p.rules;
      this.#leadRulesAt[key] = rules;
    }
    const all = layOut(byKey, this.#leadStart);
    this.#leadText = all.map((p) => p.text);
    this.#leadRules = Int32Array.from(all, (p) => p.rules);
  }

  /** Lays the anchors out in the hash table that `candidates` reads (open addressing, linear probing). */
  #hashAnchors(): void {
    if (this.#anywhere.size * 2 > SLOTS) throw new Error(`the rule screen holds ${SLOTS / 2} grams`);
    const bySlot = new Map<number, Probe[]>();
    for (const [key, probes] of this.#anywhere) {
      let slot = slotOf(key);
      while (this.#slotKeys[slot] !== 0) slot = (slot + 1) & (SLOTS - 1);
      this.#slotKeys[slot] = key + 1;
      bySlot.set(slot, probes);
    }
    const all = layOut(bySlot, this.#slotStart);
    this.#probeText = all.map((p) => p.text);
    this.#probeAt = Int32Array.from(all, (p) => p.at);
    this.#probeRules = Int32Array.from(all, (p) => p.rules);
  }

  /**
   * Marks the gram keys that end in one character of note whatever comes before it: an odd space or ESC (in
   * every bit set: the fold rewrites the one, the scanner reads text with the other twice) and a one-character
   * anchor (in `#grams` alone: the pass reads `#gramsPast` once it has found every rule with one). First,
   * before any other bit is set, so each bit set takes them with one native fill: key `k << 6 | c` is bit
   * `c & 31` of word `2k + (c >> 5)`, so every pair of words holds the same bits.
   */
  #addSingles(rules: readonly Rule[]): void {
    const odd = Int32Array.of(0, 0);
    for (const unit of ODD_SPACES + ESCAPE + ENCODING_STARTS) setBit(odd, this.#keyOf(unit));
    const anchored = odd.slice();
    rules.forEach((rule, i) => {
      if (rule.squashed) return;
      for (const a of rule.anchors ?? rule.needles ?? []) {
        if (a.length !== 1 || !canOccur(a)) continue;
        const key = this.#keyOf(a);
        this.#singles[key] |= 1 << i;
        this.#singleRules |= 1 << i;
        setBit(anchored, key);
      }
    });
    fillPairs(this.#grams, anchored);
    fillPairs(this.#gramsPast, odd);
    fillPairs(this.#unsure, odd);
  }

  /** Marks the gram keys after which the text may fold to something else than its lower case. */
  #addUnsure(): void {
    for (const spacer of SPACERS) {
      const s = this.#keyOf(spacer);
      for (let c = 0x61; c <= 0x7a; c++) {
        this.#markUnsure((s << (2 * CLASS_BITS)) | ((this.#units[c] & CLASS_MASK) << CLASS_BITS) | s);
      }
    }
    for (const a of BLANKS) {
      for (const b of BLANKS) {
        const pair = this.#keyOf(a + b);
        for (let k = 0; k < 1 << CLASS_BITS; k++) this.#markUnsure((k << (2 * CLASS_BITS)) | pair);
      }
    }
  }

  /** Marks `key` in `#grams`, `#gramsPast` and `#unsure`. */
  #markUnsure(key: number): void {
    const word = key >>> 5;
    const bit = 1 << (key & 31);
    this.#grams[word] |= bit;
    this.#gramsPast[word] |= bit;
    this.#unsure[word] |= bit;
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
    for (const a of anchors) {
      if (!canOccur(a)) continue;
      if (a.length === 0) this.#always |= bit;
      else if (a.length === 2) this.#pairs[this.#endingInPair(a)] |= bit;
      else if (a.length > 2) this.#addAnchor(a, bit);
      // (one character: see `#addSingles`)
    }
    if (!rule.leads) return;
    this.#needLead |= bit;
    if (rule.leads.includes("")) this.#always |= bit;
    this.#pendingLeads!.push([rule.leads, bit]);
  }

  /** Enters an anchor of three characters or more under the key of its rarest gram. */
  #addAnchor(anchor: string, bit: number): void {
    const at = rarestGram(anchor);
    const key = this.#keyOf(anchor.slice(at, at + 3));
    setBit(this.#grams, key);
    setBit(this.#gramsPast, key);
    addProbe(this.#anywhere, key, anchor, at, bit);
  }

  /**
   * Marks in `#grams` and `#gramsPast` every gram key that ends in the two characters `s`, whatever class
   * comes before them, and returns the key of `s` alone.
   */
  #endingInPair(s: string): number {
    const pair = this.#keyOf(s);
    for (let k = 0; k < 1 << CLASS_BITS; k++) {
      const key = (k << (2 * CLASS_BITS)) | pair;
      setBit(this.#grams, key);
      setBit(this.#gramsPast, key);
    }
    return pair;
  }

  /** Enters an anchor of a letters-only rule under its rarest gram. */
  #addLetterAnchor(anchor: string, bit: number): void {
    const at = rarestGram(anchor);
    let key = 0;
    for (let j = at; j < at + 3; j++) key = (key << LETTER_BITS) | (anchor.charCodeAt(j) - 0x60);
    setBit(this.#letterGrams, key);
    this.#letterAnchors.push({ text: anchor, at, rules: bit });
  }

  /** Makes what `#judged` reads of the letters-only anchors: the letters each needs, and `#letterGate`. */
  #gateLetters(): void {
    const anchors = this.#letterAnchors;
    if (anchors.length === 0) return;
    this.#letterNeeds = Int32Array.from(anchors, (a) => {
      let needs = 0;
      for (let j = 0; j < a.text.length; j++) needs |= presentBit(a.text.charCodeAt(j));
      return needs;
    });
    this.#letterNeedsOfAll = this.#letterNeeds.reduce((all, needs) => all & needs, -1);
    if (anchors.every((a) => a.rules === anchors[0].rules)) this.#letterRulesOfAll = anchors[0].rules;
    this.#letterGate = new RegExp(anchors.map((a) => spreadPattern(a.text)).join("|"), "i");
  }

  /** The key of one to three characters, giving each a class on first sight. */
  #keyOf(s: string): number {
    let key = 0;
    for (let j = 0; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if ((this.#units[c] & CLASS_MASK) === 0) {
        if (this.#classCount > CLASS_MASK) throw new Error("the rule screen's grams use too many characters");
        const cls = this.#classCount++;
        this.#units[c] |= cls;
        if (c >= 0x61 && c <= 0x7a) this.#units[c - 0x20] |= cls;
      }
      key = (key << CLASS_BITS) | (this.#units[c] & CLASS_MASK);
    }
    return key;
  }

  /**
   * The rules (as bits) that could match `text`, or -1 when `text` does not fold to its own lower case (the
   * screen cannot judge it). 0 proves that no rule can match.
   */
  candidates(text: string): number {
    const units = this.#units;
    const grams = this.#grams;
    const n = text.length;
    let key = 0;
    let present = 0;
    let all = 0;
    let i = 0;
    // Most texts mark no gram key from start to end: a loop with nothing else in it reads them.
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      all |= c;
      const u = units[c & 0x7f];
      // Which letters the text holds, for the letters-only rules: one OR, not a key of their own per unit.
      present |= u;
      key = ((key << CLASS_BITS) | (u & CLASS_MASK)) & GRAM_KEY;
      // (a shift count is taken modulo 32: `1 << key` is bit `key & 31`)
      if ((grams[key >>> 5] & (1 << key)) !== 0) return this.#fromMarked(text, i, key, all, present);
    }
    return this.#judged(text, 0, all, present);
  }

  /**
   * `candidates` from the first marked gram key on (`key`, ending at `i`), with the `all` and `present` of the
   * text before it: looks for anchors at each marked key to the text's end.
   */
  #fromMarked(text: string, i: number, key: number, all: number, present: number): number {
    const units = this.#units;
    let grams = this.#grams;
    const n = text.length;
    let found = 0;
    while (i < n) {
      found |= this.#anchorsAt(text, i, key, found);
      if ((found & this.#singleRules) === this.#singleRules) grams = this.#gramsPast;
      // A key that may fold otherwise ends here: the fold's own tests, made where it ends, not over the text.
      if ((found & UNSURE) !== 0) {
        if (foldsOtherwiseAt(text, i)) return -1;
        found &= ~UNSURE;
      }
      for (i++; i < n; i++) {
        const c = text.charCodeAt(i);
        all |= c;
        const u = units[c & 0x7f];
        present |= u;
        key = ((key << CLASS_BITS) | (u & CLASS_MASK)) & GRAM_KEY;
        if ((grams[key >>> 5] & (1 << key)) !== 0) break;
      }
    }
    return this.#judged(text, found, all, present);
  }

  /**
   * `candidates` once the pass has read the whole text: the rules with an anchor in it (`found`), every unit
   * OR-ed (`all`) and the letters (`present`).
   */
  #judged(text: string, found: number, all: number, present: number): number {
    if (all >= 0x80) return -1;
    const letters = this.#mayHoldLetterAnchor(present) && this.#lettersMayHold(text) ? 1 : 0;
    // Most texts: no evidence at all.
    if ((found | letters | this.#always) === 0) return 0;
    if (letters !== 0) found |= this.#inLetters(text);
    found |= this.#always;
    const needLead = found & this.#needLead;
    return needLead === 0 ? found : (found & ~needLead) | this.#leadsIn(text, needLead);
  }

  /**
   * True when `candidates` is 0 for every text of at most `maxLength` characters, each one of `alphabet`
   * (ASCII; letters in either case stand for themselves): no gram key such a text can form (the last three
   * classes, fewer at its start) is marked, nor any letters-only key, and no rule is always run. A proof from
   * the tables `candidates` reads, not a sample; false where it does not hold.
   */
  clears(alphabet: string, maxLength: number): boolean {
    if (this.#always !== 0 || !Number.isInteger(maxLength) || maxLength < 0) return false;
    const classes = new Set<number>();
    const letters = new Set<number>();
    for (let i = 0; i < alphabet.length; i++) {
      const c = alphabet.charCodeAt(i);
      if (c >= 0x80) return false;
      classes.add(this.#units[c] & CLASS_MASK);
      const u = this.#letterUnits[c];
      if (u !== 0) letters.add((u >>> LETTER_CODE_AT) & 31);
    }
    return !reachable(classes, maxLength, CLASS_BITS, this.#grams) &&
      !reachable(letters, maxLength, LETTER_BITS, this.#letterGrams);
  }

  /** Rules with an anchor that ends at `end`, where gram `key` does (`UNSURE`: it may fold), but for `found`. */
  #anchorsAt(text: string, end: number, key: number, found: number): number {
    let rules = this.#singles[key & CLASS_MASK] | this.#pairs[key & PAIR_KEY] |
      ((this.#unsure[key >>> 5] & (1 << (key & 31))) !== 0 ? UNSURE : 0);
    const keys = this.#slotKeys;
    let slot = slotOf(key);
    while (keys[slot] !== key + 1) {
      if (keys[slot] === 0) return rules;
      slot = (slot + 1) & (SLOTS - 1);
    }
    for (let i = this.#slotStart[slot], stop = this.#slotStart[slot + 1]; i < stop; i++) {
      const probeRules = this.#probeRules[i];
      if ((probeRules & ~found) !== 0 && holdsAt(text, end - 2 - this.#probeAt[i], this.#probeText[i])) {
        rules |= probeRules;
      }
    }
    return rules;
  }

  /**
   * False when the letters `present` (OR of the `#units` of a text) lack a letter of every letters-only
   * anchor: such a text's letters hold none of them, so `#lettersHit` would find no gram of one.
   */
  #mayHoldLetterAnchor(present: number): boolean {
    // (a text without a letter that every anchor needs holds none of them: one test, not one per anchor)
    if ((present & this.#letterNeedsOfAll) !== this.#letterNeedsOfAll) return false;
    const needs = this.#letterNeeds;
    for (let i = 0; i < needs.length; i++) if ((present & needs[i]) === needs[i]) return true;
    return false;
  }

  /**
   * False when the letters of `text` (ASCII) hold no letters-only anchor. Short texts take the letter-key loop
   * (a necessary test), longer ones the native expression (an exact one), which costs more per call and less
   * per character.
   */
  #lettersMayHold(text: string): boolean {
    return text.length < LETTER_LOOP_UNDER ? this.#lettersHit(text) !== 0 : this.#letterGate!.test(text);
  }

  /**
   * Nonzero when the letters of `text` (ASCII) hold the rarest gram of a letters-only anchor: the last three
   * letters as a key, moved by letters only (a non-letter's shift and code are 0). No branch: whether a
   * character is a letter changes at every word's ends, too often for the processor to guess.
   */
  #lettersHit(text: string): number {
    const letterUnits = this.#letterUnits;
    const letterGrams = this.#letterGrams;
    let letterKey = 0;
    let hit = 0;
    for (let i = 0; i < text.length; i++) {
      const u = letterUnits[text.charCodeAt(i) & 0x7f];
      letterKey = ((letterKey << (u >>> LETTER_SHIFT_AT)) | ((u >>> LETTER_CODE_AT) & 31)) & LETTER_KEY;
      hit |= letterGrams[letterKey >>> 5] & (1 << letterKey);
    }
    return hit;
  }

  /**
   * Rules over the letters-only text with an anchor in the letters of `text`, where `#lettersMayHold` said
   * they may hold one. For a long text it said so exactly: when every anchor stands for the same rules (the one
   * letters-only rule there is), those are the rules, and the letters need not be made (most long texts that
   * hold an anchor are injections).
   */
  #inLetters(text: string): number {
    if (text.length >= LETTER_LOOP_UNDER && this.#letterRulesOfAll !== 0) return this.#letterRulesOfAll;
    const letters = lettersOnly(text.toLowerCase());
    let rules = 0;
    for (const a of this.#letterAnchors) if (letters.includes(a.text)) rules |= a.rules;
    return rules;
  }

  /**
   * Those of the rules `wanted` that have a lead at a word start (a letter after anything but a letter). Every
   * word start is read, and where leads begin is noted for `leadCount`: the scanner, which runs these rules
   * next, then tries each only there, not with a pass of its own over the text.
   */
  #leadsIn(text: string, wanted: number): number {
    if (this.#pendingLeads !== null) this.#tableLeads(this.#pendingLeads);
    const leadRulesAt = this.#leadRulesAt;
    const n = text.length;
    let rules = 0;
    let count = 0;
    let afterLetter = false;
    for (let p = 0; p < n; p++) {
      const c = text.charCodeAt(p) | 0x20;
      const letter = c >= 0x61 && c <= 0x7a;
      if (!letter || afterLetter) {
        afterLetter = letter;
        continue;
      }
      afterLetter = true;
      const key = leadKey(c, p + 1 < n ? text.charCodeAt(p + 1) : 0, p + 2 < n ? text.charCodeAt(p + 2) : 0);
      // A word start that begins no lead of a rule wanted is passed by with one read of the table.
      if ((leadRulesAt[key] & wanted) === 0) continue;
      const here = this.#leadsAt(text, p, key, wanted);
      if (here === 0) continue;
      rules |= here;
      if (count === this.#walkAt.length) this.#growWalk();
      this.#walkAt[count] = p;
      this.#walkRules[count++] = here;
    }
    this.#walked = text;
    this.#walkWanted = wanted;
    this.#walkCount = count;
    return rules & wanted;
  }

  /** Grows the buffers of `#leadsIn`'s notes, and `leadCount`'s output with them. */
  #growWalk(): void {
    this.#walkAt = grownBy(this.#walkAt, 1);
    this.#walkRules = grownBy(this.#walkRules, 1);
    this.#startsOut = new Int32Array(this.#walkAt.length);
  }

  /**
   * How many word starts of `text` (the same as of its lower case) begin a lead of the rule with bit `bit`,
   * their places written ascending to the front of `startsBuffer`, when the last `candidates` call that looked
   * for leads was for `text` and looked for that rule's (it does for every rule with leads it returns); else -1.
   * Valid until the next call.
   */
  leadCount(text: string, bit: number): number {
    if (text !== this.#walked || (bit & this.#walkWanted) === 0) return -1;
    const at = this.#walkAt;
    const rules = this.#walkRules;
    const out = this.#startsOut;
    let k = 0;
    for (let i = 0; i < this.#walkCount; i++) if ((rules[i] & bit) !== 0) out[k++] = at[i];
    return k;
  }

  get startsBuffer(): Int32Array {
    return this.#startsOut;
  }

  /** Those of the rules `wanted` with a lead under `key` at `p`. */
  #leadsAt(text: string, p: number, key: number, wanted: number): number {
    let rules = 0;
    for (let i = this.#leadStart[key], stop = this.#leadStart[key + 1]; i < stop; i++) {
      const leadRules = this.#leadRules[i];
      if ((leadRules & wanted) !== 0 && holdsAt(text, p, this.#leadText[i])) rules |= leadRules;
    }
    return rules;
  }
}

// The screen's cheapest test, for short strings: where the fold would join letter spacing, which the pass
// asks only where it finds a key that may be it, so that it can read the original as the rules would read its
// fold. (Once a module of its own: one file fewer to load.)

/** True when the code unit is a letter a-z or A-Z. */
function isAsciiLetter(c: number): boolean {
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
 * import { lettersSpacedAt } from "./screen.ts";
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
