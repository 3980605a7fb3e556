/**
 * One pass over the folded text for the leads of many rules at once, so that each rule's expression is tried,
 * sticky, only where one of its matches could start, instead of each expression scanning the whole text on its
 * own.
 *
 * The leads start at word starts (no letter a-z before them). The pass is a deterministic automaton: a state is
 * the set of lead prefixes that the text just read ends with, each begun at a word start, and whether the next
 * character stands at a word start. One table read per character and no branch that depends on the word
 * lengths: a walk from every word start costs several times more on prose, where the engines mispredict the end
 * of almost every word.
 *
 * @module
 */
import type { Rule } from "./rules.ts";
import { isLetter } from "./fold.ts";
import { asciiBytes, BYTES_FROM, UNITS_OF_BYTE, utf8Of, type WordTables } from "./words.ts";
import { grownBy } from "../_common/bytes.ts";

/** The class of every code unit that stands in no lead and is no letter a-z (beyond ASCII too). */
const OTHER = 0;
/** The class of the letters a-z that stand in no lead. */
const OTHER_LETTER = 1;

/** States of the automaton before it has read anything of a range: after a non-letter, and inside a word. */
const AT_WORD_START = 0;
const IN_WORD = 1;

/**
 * A transition not worked out yet. The automaton is built as texts reach its states: a scanner's first use
 * builds only the few states a short text visits, not the whole subset construction (which, run in the
 * interpreter, cost tens of milliseconds per plan).
 */
const UNBUILT = -0x80000000;

/**
 * The trie of a set of leads: `children[node * width + class]` (0 for none; the root is node 0, `nodes` in all),
 * and per node its depth and the rules whose lead ends there.
 */
interface Trie {
  children: Int32Array;
  nodes: number;
  depth: number[];
  ends: number[][];
}

/** The `ends` of a node where no lead ends: shared, never written (a node's first lead gets an array of its own). */
const NO_ENDS: number[] = [];

/**
 * What `LeadFinder.find` found: rule `r`'s starts, ascending, are `buffer` from `firstOf(r)` on, `countOf(r)` of
 * them (no view made per rule: that cost Bun 1.5% of a scan of the dev rows); valid until the next `find`.
 */
export interface LeadStarts {
  firstOf(r: number): number;
  countOf(r: number): number;
  readonly buffer: Int32Array;
}

/** Whether `rule` has leads: a `LeadFinder` numbers only those rules, in the order given. */
export function hasLeads(rule: Rule): boolean {
  return rule.leads !== undefined && rule.leads.length > 0;
}

/** A lead finder over the leads of a set of rules (see `Rule.leads`). */
export class LeadFinder {
  /** The rules, in the order `find` returns their positions. */
  readonly rules: readonly Rule[];
  /** Character class of each byte (see `OTHER`, `OTHER_LETTER`; every byte beyond ASCII is `OTHER`). */
  #classes = new Uint8Array(256);
  /** Per class, whether it is a letter a-z. */
  #letterClass: boolean[] = [false, true];
  /** Bits of a class: `#next[(state << #shift) | class]` is the state after reading a unit of that class. */
  #shift = 1;
  /**
   * The transitions: the next state; its complement (`~state`, negative) where that state ends some lead; or
   * `UNBUILT`. A negative entry is the one branch the pass takes off its straight path.
   */
  #next: Int32Array = new Int32Array(0);
  /**
   * The trie: `#children[node * width + class]`, 0 for none (the root is node 0); per node its depth and the
   * rules whose lead ends there.
   */
  #children = new Int32Array(0);
  #depth: number[] = [];
  #ends: number[][] = [];
  /** Per state: whether the next unit stands at a word start, and its trie nodes, ascending. */
  #states: { atStart: boolean; nodes: readonly number[] }[] = [];
  /** The state of each (word start, nodes) key. */
  #stateOf = new Map<string, number>();
  /** Per state `s`, the leads it ends: (rule, length) pairs in `#emits[#emitStart[s], #emitStart[s + 1])`. */
  #emitStart: Int32Array = new Int32Array(1);
  #emits: Int32Array = new Int32Array(0);
  /** Slots of `found`, and of `logged`, used by the pass under way. */
  #pairs = 0;
  #logged = 0;
  /** The length of the longest lead. */
  #longest = 0;
  /** For `#grouped`: where each rule's starts begin in `grouped` (and where the last ends), and the next free slot. */
  #at: Int32Array;
  #fill: Int32Array;
  /** Per rule, how many distinct starts the last `find` found for it. */
  #count: Int32Array;

  /** Builds the trie of every lead of every rule in `rules` (rules without leads are left out). */
  constructor(rules: readonly Rule[]) {
    this.rules = rules.filter(hasLeads);
    this.#at = new Int32Array(this.rules.length + 1);
    this.#fill = new Int32Array(this.rules.length);
    this.#count = new Int32Array(this.rules.length);
    this.#classify();
    const width = this.#letterClass.length;
    this.#shift = Math.max(1, Math.ceil(Math.log2(width)));
    const trie = this.#trieOf(width);
    this.#children = trie.children.slice(0, trie.nodes * width);
    this.#depth = trie.depth;
    this.#ends = trie.ends;
    this.#state(true, []);
    this.#state(false, []);
  }

  /** Gives each character of a lead a class of its own, and notes per class whether it is a letter a-z. */
  #classify(): void {
    for (let c = 0x61; c <= 0x7a; c++) this.#classes[c] = OTHER_LETTER;
    for (const rule of this.rules) {
      for (const lead of rule.leads!) {
        const first = lead.charCodeAt(0);
        if (!isLetter(first)) throw new Error(`${rule.name}: a lead starts with a letter a-z`);
        this.#longest = Math.max(this.#longest, lead.length);
        for (let i = 0; i < lead.length; i++) {
          const c = lead.charCodeAt(i);
          if (c >= 128) throw new Error(`${rule.name}: leads are ASCII`);
          if (this.#classes[c] > OTHER_LETTER) continue;
          this.#classes[c] = this.#letterClass.length;
          this.#letterClass.push(isLetter(c));
        }
      }
    }
  }

  /**
   * The trie of the leads, over classes (`width` of them). Its table is filled in place, in one array sized for
   * the worst case (a node per character of every lead): this runs on a scanner's first use, in the
   * interpreter, where a map per node cost more than the rest of the build.
   */
  #trieOf(width: number): Trie {
    let most = 1;
    for (const rule of this.rules) for (const lead of rule.leads!) most += lead.length;
    const children = new Int32Array(most * width);
    const depth = [0];
    const ends = [NO_ENDS];
    let nodes = 1;
    for (let r = 0; r < this.rules.length; r++) {
      for (const lead of this.rules[r].leads!) {
        let node = 0;
        for (let i = 0; i < lead.length; i++) {
          const at = node * width + this.#classes[lead.charCodeAt(i)];
          if (children[at] === 0) {
            children[at] = nodes++;
            depth.push(i + 1);
            ends.push(NO_ENDS);
          }
          node = children[at];
        }
        if (ends[node] === NO_ENDS) ends[node] = [r];
        else if (!ends[node].includes(r)) ends[node].push(r);
      }
    }
    return { children, nodes, depth, ends };
  }

  /**
   * The state of the set `nodes` (ascending) with the next unit at a word start or not, made if new: its row of
   * transitions is `UNBUILT` but for the two classes no lead holds, which empty the set.
   */
  #state(atStart: boolean, nodes: readonly number[]): number {
    const key = (atStart ? "1" : "0") + nodes.join(",");
    const known = this.#stateOf.get(key);
    if (known !== undefined) return known;
    const s = this.#states.length;
    this.#stateOf.set(key, s);
    this.#states.push({ atStart, nodes });
    const shift = this.#shift;
    if ((s + 1) << shift > this.#next.length) {
      const next = new Int32Array(Math.max(64, 2 * (this.#next.length >> shift)) << shift).fill(UNBUILT);
      next.set(this.#next);
      this.#next = next;
    }
    this.#next[(s << shift) | OTHER] = AT_WORD_START;
    this.#next[(s << shift) | OTHER_LETTER] = IN_WORD;
    let count = 0;
    for (const node of nodes) count += this.#ends[node].length;
    if (s + 2 > this.#emitStart.length) this.#emitStart = grownBy(this.#emitStart, 1);
    let e = this.#emitStart[s];
    if (e + 2 * count > this.#emits.length) this.#emits = grownBy(this.#emits, 2 * count);
    for (const node of nodes) {
      for (const rule of this.#ends[node]) {
        this.#emits[e++] = rule;
        this.#emits[e++] = this.#depth[node];
      }
    }
    this.#emitStart[s + 1] = e;
    return s;
  }

  /** Works out, and keeps, the transition from state `s` on a unit of class `c`; returns its entry. */
  #step(s: number, c: number): number {
    const { atStart, nodes } = this.#states[s];
    const width = this.#letterClass.length;
    // No two nodes of a trie share a child, and the root is in no set: the children are distinct.
    const to: number[] = [];
    for (const node of nodes) {
      const child = this.#children[node * width + c];
      if (child !== 0) to.push(child);
    }
    if (atStart && this.#children[c] !== 0) to.push(this.#children[c]);
    to.sort((a, b) => a - b);
    const next = this.#state(!this.#letterClass[c], to);
    const entry = this.#emitStart[next + 1] > this.#emitStart[next] ? ~next : next;
    this.#next[(s << this.#shift) | c] = entry;
    return entry;
  }

  /**
   * Per rule (in the order of `rules`), the positions in `[start, end)` of `t` where one of its leads begins
   * at a word start (no letter a-z before it), ascending (see `LeadStarts`). The lists share one buffer, which
   * the next call overwrites: a window's thousands of positions leave no garbage behind.
   */
  find(t: string, start: number, end: number): LeadStarts {
    // A lead that starts before `end` ends before `stop`.
    const stop = Math.min(t.length, end + this.#longest - 1);
    const bytes = t.length >= BYTES_FROM ? asciiBytes(t) : null;
    const classes = this.#classes;
    const shift = this.#shift;
    let next = this.#next;
    let s = start === 0 || !isLetter(t.charCodeAt(start - 1)) ? AT_WORD_START : IN_WORD;
    this.#pairs = 0;
    if (bytes !== null && end - start >= HALVES_FROM) this.#findHalves(bytes, s, start, end, stop);
    else if (bytes === null && start === 0 && stop === t.length && t.length >= BYTES_FROM) {
      this.#findUtf8(t, end);
    } else if (bytes !== null) {
      // (the loop `findWithBits` has too, written out in each: V8 ran a call of a shared one 10% slower here on
      // 4 KiB chunks of prose)
      for (let j = start; j < stop; j++) {
        const c = classes[bytes[j]];
        const entry = next[(s << shift) | c];
        if (entry >= 0) s = entry;
        else {
          s = this.#offPath(entry, s, c, j, end);
          next = this.#next;
        }
      }
    } else {
      for (let j = start; j < stop; j++) {
        const u = t.charCodeAt(j);
        const c = u < 128 ? classes[u] : OTHER;
        const entry = next[(s << shift) | c];
        if (entry >= 0) s = entry;
        else {
          s = this.#offPath(entry, s, c, j, end);
          next = this.#next;
        }
      }
    }
    this.#grouped(this.#pairs);
    return this;
  }

  /**
   * The pass of `find` over all of `t` (not ASCII) for leads that begin before `end`, read as UTF-8 (see
   * `utf8Of`): a run of bytes beyond ASCII moves the automaton to a word start as one unit beyond ASCII does, and
   * a lead (ASCII) ends at the unit its last byte is, which the pass counts beside the automaton's steps
   * (`UNITS_OF_BYTE`).
   */
  #findUtf8(t: string, end: number): void {
    const utf8 = utf8Of(t);
    const classes = this.#classes;
    const shift = this.#shift;
    let next = this.#next;
    let s = AT_WORD_START;
    // The units read, up to the one that ends at the byte read.
    let units = 0;
    for (let j = 0; j < utf8.length; j++) {
      const b = utf8[j];
      units += UNITS_OF_BYTE[b];
      const c = classes[b];
      const entry = next[(s << shift) | c];
      if (entry >= 0) s = entry;
      else {
        s = this.#offPath(entry, s, c, units - 1, end);
        next = this.#next;
      }
    }
  }

  /**
   * `find(t, 0, t.length)` for `t` whose bytes (ASCII) are `bytes`, with the automaton `words` (a `WordSet`'s)
   * stepped in the same loop: returns the bits its `bitsIn(t, all)` gives. One loop for both costs less than
   * two, where a text needs both; the leads are found only where the bits say they are `needed` (some rule with
   * leads could match): until the bits found so far say so, the words' automaton reads alone, and the finder
   * then catches up over what it read. When the whole text's bits do not, no lead is found (a text of one
   * word repeated reads no faster than with `find` on its own).
   */
  findWithBits(
    t: string,
    bytes: Uint8Array,
    words: WordTables,
    all: number,
    needed: (held: number) => boolean,
  ): number {
    const n = t.length;
    const { classes: wordClasses, shift: wordShift, next: wordNext, accepts } = words;
    let w = 0;
    let held = 0;
    let need = needed(0);
    let j = 0;
    // A bit new to `held` comes seldom, and at most once per bit: the loop stops there, and `needed` is asked
    // outside it (V8 ran the loop with the call in it 10% slower on letter-spaced 4 KiB chunks).
    while (!need && j < n) {
      for (; j < n; j++) {
        w = wordNext[(w << wordShift) | wordClasses[bytes[j]]];
        if ((accepts[w] & ~held) !== 0) break;
      }
      if (j === n) break;
      need = needed(held |= accepts[w]);
      j++;
    }
    this.#pairs = 0;
    if (need) {
      const classes = this.#classes;
      const shift = this.#shift;
      let next = this.#next;
      let s = AT_WORD_START;
      // (the finder's loop of `find`, written out here and below; see there)
      for (let i = 0; i < j; i++) {
        const c = classes[bytes[i]];
        const entry = next[(s << shift) | c];
        if (entry >= 0) s = entry;
        else {
          s = this.#offPath(entry, s, c, i, n);
          next = this.#next;
        }
      }
      for (; j < n && held !== all; j++) {
        const b = bytes[j];
        w = wordNext[(w << wordShift) | wordClasses[b]];
        held |= accepts[w];
        const c = classes[b];
        const entry = next[(s << shift) | c];
        if (entry >= 0) s = entry;
        else {
          s = this.#offPath(entry, s, c, j, n);
          next = this.#next;
        }
      }
      for (; j < n; j++) {
        const c = classes[bytes[j]];
        const entry = next[(s << shift) | c];
        if (entry >= 0) s = entry;
        else {
          s = this.#offPath(entry, s, c, j, n);
          next = this.#next;
        }
      }
    }
    this.#grouped(this.#pairs);
    return held;
  }

  /**
   * The pass of `find` over `bytes[start, stop)` from state `s`, as two halves at once, each by its own state: a
   * step waits for the state before it, so two independent chains take about the time of one. The first half
   * reads on past the middle by the longest lead less one and notes the leads that begin before the middle; the
   * second starts there afresh (at a word start or in a word) and logs where its states end leads (see
   * `#offPathLater`), noted after the first half's, so each rule's starts stay ascending.
   */
  #findHalves(bytes: Uint8Array, s: number, start: number, end: number, stop: number): void {
    const classes = this.#classes;
    const shift = this.#shift;
    let next = this.#next;
    const mid = start + ((end - start) >> 1);
    const stopA = Math.min(stop, mid + this.#longest - 1);
    // Where the first half's reads end while the second's go on too.
    const both = Math.min(stopA, stop - mid + start);
    let a = s;
    let b = isLetter(bytes[mid - 1]) ? IN_WORD : AT_WORD_START;
    this.#logged = 0;
    for (let i = start, k = mid; i < both; i++, k++) {
      const ca = classes[bytes[i]];
      const cb = classes[bytes[k]];
      const ea = next[(a << shift) | ca];
      const eb = next[(b << shift) | cb];
      if ((ea | eb) >= 0) {
        a = ea;
        b = eb;
        continue;
      }
      a = ea >= 0 ? ea : this.#offPath(ea, a, ca, i, mid);
      b = eb >= 0 ? eb : this.#offPathLater(eb, b, cb, k);
      next = this.#next;
    }
    for (let i = both; i < stopA; i++) {
      const c = classes[bytes[i]];
      const entry = next[(a << shift) | c];
      if (entry >= 0) a = entry;
      else {
        a = this.#offPath(entry, a, c, i, mid);
        next = this.#next;
      }
    }
    for (let k = mid + both - start; k < stop; k++) {
      const c = classes[bytes[k]];
      const entry = next[(b << shift) | c];
      if (entry >= 0) b = entry;
      else {
        b = this.#offPathLater(entry, b, c, k);
        next = this.#next;
      }
    }
    for (let i = 0; i < this.#logged; i += 2) this.#emit(logged[i + 1], logged[i], end);
  }

  /** `#offPath` for the second half of `#findHalves`: a state that ends leads is logged with `k`, not emitted. */
  #offPathLater(entry: number, s: number, c: number, k: number): number {
    if (entry === UNBUILT) entry = this.#step(s, c);
    if (entry >= 0) return entry;
    if (this.#logged + 2 > logged.length) logged = grownBy(logged, 2);
    logged[this.#logged++] = k;
    logged[this.#logged++] = ~entry;
    return ~entry;
  }

  /** See `LeadStarts`. */
  firstOf(r: number): number {
    return this.#at[r];
  }

  countOf(r: number): number {
    return this.#count[r];
  }

  get buffer(): Int32Array {
    return grouped;
  }

  /**
   * The state after a negative `entry` of state `s` on class `c` at `j`: the transition worked out where it is
   * `UNBUILT`, and the leads of a state that ends some noted.
   */
  #offPath(entry: number, s: number, c: number, j: number, end: number): number {
    if (entry === UNBUILT) entry = this.#step(s, c);
    if (entry >= 0) return entry;
    this.#emit(~entry, j, end);
    return ~entry;
  }

  /**
   * Appends to `found` (from slot `#pairs` on) a (rule, start) pair for each lead state `s` ends (at `j`,
   * inclusive) that begins before `end`.
   */
  #emit(s: number, j: number, end: number): void {
    const emits = this.#emits;
    let pairs = this.#pairs;
    for (let e = this.#emitStart[s], stop = this.#emitStart[s + 1]; e < stop; e += 2) {
      const p = j + 1 - emits[e + 1];
      if (p >= end) continue;
      if (pairs + 2 > found.length) found = grownBy(found, 2);
      found[pairs++] = emits[e];
      found[pairs++] = p;
    }
    this.#pairs = pairs;
  }

  /**
   * The first `pairs` slots of `found` as one ascending list of starts per rule, in `grouped` (rule `r`'s from
   * `#at[r]`, `#count[r]` of them). Pairs come in the order their leads end: a rule's longer lead that began
   * earlier may come after a shorter one that began later, and two leads of a rule may begin at one word start.
   * No list is made here: most rules' are never read.
   */
  #grouped(pairs: number): void {
    const rules = this.rules.length;
    const at = this.#at.fill(0);
    for (let i = 0; i < pairs; i += 2) at[found[i] + 1]++;
    for (let r = 0; r < rules; r++) at[r + 1] += at[r];
    if (grouped.length < pairs >> 1) grouped = grownBy(grouped, (pairs >> 1) - grouped.length);
    const fill = this.#fill;
    // (a loop over the few rules: a view of `at` to copy from costs more on Bun)
    for (let r = 0; r < rules; r++) fill[r] = at[r];
    for (let i = 0; i < pairs; i += 2) grouped[fill[found[i]]++] = found[i + 1];
    const count = this.#count;
    for (let r = 0; r < rules; r++) {
      const n = at[r + 1] - at[r];
      count[r] = n === 0 || ascending(grouped, at[r], at[r + 1])
        ? n
        : sortedUnique(grouped.subarray(at[r], at[r + 1]));
    }
  }
}

/** Where `find` gathers (rule, start) pairs, and then the starts by rule; grown as needed, kept between calls. */
let found: Int32Array = new Int32Array(0);
let grouped: Int32Array = new Int32Array(0);
/** Where the second half of a pass in two (see `#findHalves`) logs (position, state) pairs; kept between calls. */
let logged: Int32Array = new Int32Array(0);

/**
 * Ranges from this long on are read by `find` in two halves at once (see `#findHalves`): on shorter ones (4 KiB
 * chunks) the halves paid on prose and lost on text dense with leads.
 */
export const HALVES_FROM = 1 << 15;

/** Whether `list` is strictly ascending from `from` to `to`. */
function ascending(list: Int32Array, from: number, to: number): boolean {
  for (let i = from + 1; i < to; i++) if (list[i] <= list[i - 1]) return false;
  return true;
}

/** Sorts `list` and moves its distinct values to its front, ascending; returns how many there are. */
function sortedUnique(list: Int32Array): number {
  list.sort();
  let k = 0;
  for (let i = 0; i < list.length; i++) if (k === 0 || list[i] !== list[k - 1]) list[k++] = list[i];
  return k;
}
