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
import { asciiBytes, BYTES_FROM } from "./words.ts";

/** The class of every code unit that stands in no lead and is no letter a-z (beyond ASCII too). */
const OTHER = 0;
/** The class of the letters a-z that stand in no lead. */
const OTHER_LETTER = 1;

/** States of the automaton before it has read anything of a range: after a non-letter, and inside a word. */
const AT_WORD_START = 0;
const IN_WORD = 1;

/** The trie of a set of leads: per node its children by class, its depth, and the rules whose lead ends there. */
interface Trie {
  children: Map<number, number>[];
  depth: number[];
  ends: number[][];
}

/** A lead finder over the leads of a set of rules (see `Rule.leads`). */
export class LeadFinder {
  /** The rules, in the order `find` returns their positions. */
  readonly rules: readonly Rule[];
  /** Character class of each ASCII code unit (see `OTHER`, `OTHER_LETTER`). */
  #classes = new Uint8Array(128);
  /** Bits of a class: `#next[(state << #shift) | class]` is the state after reading a unit of that class. */
  #shift: number;
  #next: Uint16Array | Int32Array;
  /** States from this one on end some lead. */
  #firstEmitting: number;
  /** Per emitting state `s`, its leads `[#emitStart[s - #firstEmitting], … + 1)` of `#emitRule`, `#emitDepth`. */
  #emitStart: Int32Array;
  #emitRule: Int32Array;
  #emitDepth: Int32Array;
  /** The length of the longest lead. */
  #longest = 0;
  /** For `#grouped`: where each rule's starts begin in `grouped` (and where the last ends), and the next free slot. */
  #at: Int32Array;
  #fill: Int32Array;

  /** Builds the automaton of every lead of every rule in `rules` (rules without leads are left out). */
  constructor(rules: readonly Rule[]) {
    this.rules = rules.filter((rule) => rule.leads && rule.leads.length > 0);
    this.#at = new Int32Array(this.rules.length + 1);
    this.#fill = new Int32Array(this.rules.length);
    const letterClass = this.#classify();
    const trie = this.#trie();
    const { next, emits, width } = determinise(trie, letterClass);
    this.#shift = Math.max(1, Math.ceil(Math.log2(width)));
    const order = renumbered(emits);
    const states = emits.length;
    this.#next = states < 0x10000
      ? new Uint16Array(states << this.#shift)
      : new Int32Array(states << this.#shift);
    for (let s = 0; s < states; s++) {
      for (let c = 0; c < width; c++) this.#next[(order[s] << this.#shift) | c] = order[next[s][c]];
    }
    const emitting = emits.map((e, s) => [order[s], e] as const).filter(([, e]) => e.length > 0)
      .sort((a, b) => a[0] - b[0]);
    this.#firstEmitting = states - emitting.length;
    this.#emitStart = new Int32Array(emitting.length + 1);
    emitting.forEach(([, e], k) => this.#emitStart[k + 1] = this.#emitStart[k] + e.length);
    const flat = emitting.flatMap(([, e]) => e);
    this.#emitRule = Int32Array.from(flat, ([rule]) => rule);
    this.#emitDepth = Int32Array.from(flat, ([, depth]) => depth);
  }

  /** Gives each character of a lead a class of its own; returns, per class, whether it is a letter a-z. */
  #classify(): boolean[] {
    const letterClass = [false, true];
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
          this.#classes[c] = letterClass.length;
          letterClass.push(isLetter(c));
        }
      }
    }
    return letterClass;
  }

  /** The trie of the leads, over classes. */
  #trie(): Trie {
    const trie: Trie = { children: [new Map()], depth: [0], ends: [[]] };
    this.rules.forEach((rule, r) => {
      for (const lead of rule.leads!) {
        let node = 0;
        for (let i = 0; i < lead.length; i++) {
          const c = this.#classes[lead.charCodeAt(i)];
          let child = trie.children[node].get(c);
          if (child === undefined) {
            child = trie.children.length;
            trie.children.push(new Map());
            trie.depth.push(i + 1);
            trie.ends.push([]);
            trie.children[node].set(c, child);
          }
          node = child;
        }
        if (!trie.ends[node].includes(r)) trie.ends[node].push(r);
      }
    });
    return trie;
  }

  /**
   * Per rule (in the order of `rules`), the positions in `[start, end)` of `t` where one of its leads begins
   * at a word start (no letter a-z before it), ascending; undefined for a rule with none. The lists share one
   * buffer, which the next call overwrites: a window's thousands of positions leave no garbage behind.
   */
  find(t: string, start: number, end: number): (Int32Array | undefined)[] {
    // A lead that starts before `end` ends before `stop`.
    const stop = Math.min(t.length, end + this.#longest - 1);
    const first = start === 0 || !isLetter(t.charCodeAt(start - 1)) ? AT_WORD_START : IN_WORD;
    const bytes = t.length >= BYTES_FROM ? asciiBytes(t) : null;
    const classes = this.#classes;
    const shift = this.#shift;
    const next = this.#next;
    const emitting = this.#firstEmitting;
    let s = first;
    let pairs = 0;
    if (bytes !== null) {
      for (let j = start; j < stop; j++) {
        s = next[(s << shift) | classes[bytes[j]]];
        if (s >= emitting) pairs = this.#emit(s, j, end, pairs);
      }
    } else {
      for (let j = start; j < stop; j++) {
        const c = t.charCodeAt(j);
        s = next[(s << shift) | (c < 128 ? classes[c] : OTHER)];
        if (s >= emitting) pairs = this.#emit(s, j, end, pairs);
      }
    }
    return this.#grouped(pairs);
  }

  /**
   * Appends to `found` (from slot `pairs` on) a (rule, start) pair for each lead state `s` ends (at `j`,
   * inclusive) that begins before `end`; returns the slots now used.
   */
  #emit(s: number, j: number, end: number, pairs: number): number {
    const k = s - this.#firstEmitting;
    for (let e = this.#emitStart[k], stop = this.#emitStart[k + 1]; e < stop; e++) {
      const p = j + 1 - this.#emitDepth[e];
      if (p >= end) continue;
      if (pairs + 2 > found.length) found = grownBy(found, 2);
      found[pairs++] = this.#emitRule[e];
      found[pairs++] = p;
    }
    return pairs;
  }

  /**
   * The first `pairs` slots of `found` as one ascending list of starts per rule, in `grouped`. Pairs come in
   * the order their leads end: a rule's longer lead that began earlier may come after a shorter one that began
   * later, and two leads of a rule may begin at one word start.
   */
  #grouped(pairs: number): (Int32Array | undefined)[] {
    const rules = this.rules.length;
    const at = this.#at.fill(0);
    for (let i = 0; i < pairs; i += 2) at[found[i] + 1]++;
    for (let r = 0; r < rules; r++) at[r + 1] += at[r];
    if (grouped.length < pairs >> 1) grouped = grownBy(grouped, (pairs >> 1) - grouped.length);
    const fill = this.#fill;
    fill.set(at.subarray(0, rules));
    for (let i = 0; i < pairs; i += 2) grouped[fill[found[i]]++] = found[i + 1];
    const lists: (Int32Array | undefined)[] = new Array(rules);
    for (let r = 0; r < rules; r++) {
      if (at[r] === at[r + 1]) continue;
      const list = grouped.subarray(at[r], at[r + 1]);
      lists[r] = ascending(list) ? list : list.subarray(0, sortedUnique(list));
    }
    return lists;
  }
}

/** Where `find` gathers (rule, start) pairs, and then the starts by rule; grown as needed, kept between calls. */
let found: Int32Array = new Int32Array(0);
let grouped: Int32Array = new Int32Array(0);

/** A copy of `a` with room for at least `more` further elements. */
function grownBy(a: Int32Array, more: number): Int32Array {
  const b = new Int32Array(Math.max(2 * a.length, a.length + more));
  b.set(a);
  return b;
}

/** Whether `list` is strictly ascending. */
function ascending(list: Int32Array): boolean {
  for (let i = 1; i < list.length; i++) if (list[i] <= list[i - 1]) return false;
  return true;
}

/** Sorts `list` and moves its distinct values to its front, ascending; returns how many there are. */
function sortedUnique(list: Int32Array): number {
  list.sort();
  let k = 0;
  for (let i = 0; i < list.length; i++) if (k === 0 || list[i] !== list[k - 1]) list[k++] = list[i];
  return k;
}

/**
 * The subset construction over the trie: a state is whether the next unit stands at a word start and the set of
 * trie nodes (lead prefixes begun at word starts) the text read so far ends with. States 0 and 1 are the empty
 * set at and not at a word start (`AT_WORD_START`, `IN_WORD`). Returns each state's successor per class and the
 * leads (rule, length) it ends.
 */
function determinise(
  trie: Trie,
  letterClass: readonly boolean[],
): { next: Int32Array[]; emits: [number, number][][]; width: number } {
  const width = letterClass.length;
  const keys = new Map<string, number>();
  const sets: { atStart: boolean; nodes: number[] }[] = [];
  // Indexed loops and one list for every transition: this runs once per plan, in the interpreter, where each
  // iterator step and each list would be garbage.
  const to: number[] = [];
  const stateOf = (atStart: boolean) => {
    to.sort((a, b) => a - b);
    const key = `${atStart ? 1 : 0}:${to.join(",")}`;
    let s = keys.get(key);
    if (s === undefined) {
      s = sets.length;
      keys.set(key, s);
      sets.push({ atStart, nodes: to.slice() });
    }
    return s;
  };
  stateOf(true);
  stateOf(false);
  const next: Int32Array[] = [];
  for (let s = 0; s < sets.length; s++) {
    const { atStart, nodes } = sets[s];
    const row = new Int32Array(width);
    for (let c = 0; c < width; c++) {
      // No two nodes of a trie share a child, and the root is in no set: the children are distinct.
      to.length = 0;
      for (let i = 0; i < nodes.length; i++) {
        const child = trie.children[nodes[i]].get(c);
        if (child !== undefined) to.push(child);
      }
      const fresh = atStart ? trie.children[0].get(c) : undefined;
      if (fresh !== undefined) to.push(fresh);
      row[c] = stateOf(!letterClass[c]);
    }
    next.push(row);
  }
  const emits = sets.map(({ nodes }) =>
    nodes.flatMap((node) => trie.ends[node].map((r) => [r, trie.depth[node]] as [number, number]))
  );
  return { next, emits, width };
}

/**
 * New numbers for the states: those that end no lead first (in their order, so `AT_WORD_START` and `IN_WORD`
 * keep theirs), then the others, so that one comparison tells whether a state ends a lead.
 */
function renumbered(emits: readonly (readonly unknown[])[]): Int32Array {
  const order = new Int32Array(emits.length);
  let k = 0;
  emits.forEach((e, s) => {
    if (e.length === 0) order[s] = k++;
  });
  emits.forEach((e, s) => {
    if (e.length > 0) order[s] = k++;
  });
  return order;
}
