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

/** The class of every code unit that stands in no lead and is no letter a-z (beyond ASCII too). */
const OTHER = 0;
/** The class of the letters a-z that stand in no lead. */
const OTHER_LETTER = 1;

/** States of the automaton before it has read anything of a range: after a non-letter, and inside a word. */
const AT_WORD_START = 0;
const IN_WORD = 1;

/** Texts from this long on are read as bytes (see `bytesOf`). */
const BYTES_FROM = 256;
/** The byte buffer `bytesOf` keeps between calls (a window's text fits); longer texts get one of their own. */
const KEPT_BYTES = 1 << 20;
let byteBuffer: Uint8Array | undefined;
let encoder: TextEncoder | undefined;

/**
 * `t` as bytes, one per code unit, when it is ASCII (the fold of most text is); else null. The engines read a
 * typed array several times faster than `charCodeAt`, and encode ASCII at a small fraction of that cost.
 */
function bytesOf(t: string): Uint8Array | null {
  const n = t.length;
  const bytes = n <= KEPT_BYTES
    ? (byteBuffer !== undefined && byteBuffer.length >= n ? byteBuffer : byteBuffer = new Uint8Array(
      Math.min(KEPT_BYTES, Math.max(n, 1 << 16)),
    ))
    : new Uint8Array(n);
  const { read, written } = (encoder ??= new TextEncoder()).encodeInto(t, bytes);
  return read === n && written === n ? bytes : null;
}

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

  /** Builds the automaton of every lead of every rule in `rules` (rules without leads are left out). */
  constructor(rules: readonly Rule[]) {
    this.rules = rules.filter((rule) => rule.leads && rule.leads.length > 0);
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
   * at a word start (no letter a-z before it), ascending; undefined for a rule with none.
   */
  find(t: string, start: number, end: number): (number[] | undefined)[] {
    // Lists are made on a rule's first position: most rules have none in a short text.
    const lists: (number[] | undefined)[] = new Array(this.rules.length);
    // A lead that starts before `end` ends before `stop`.
    const stop = Math.min(t.length, end + this.#longest - 1);
    const first = start === 0 || !isLetter(t.charCodeAt(start - 1)) ? AT_WORD_START : IN_WORD;
    const bytes = t.length >= BYTES_FROM ? bytesOf(t) : null;
    const classes = this.#classes;
    const shift = this.#shift;
    const next = this.#next;
    const emitting = this.#firstEmitting;
    let s = first;
    if (bytes !== null) {
      for (let j = start; j < stop; j++) {
        s = next[(s << shift) | classes[bytes[j]]];
        if (s >= emitting) this.#emit(s, j, end, lists);
      }
    } else {
      for (let j = start; j < stop; j++) {
        const c = t.charCodeAt(j);
        s = next[(s << shift) | (c < 128 ? classes[c] : OTHER)];
        if (s >= emitting) this.#emit(s, j, end, lists);
      }
    }
    return lists;
  }

  /** Adds the starts of the leads state `s` ends (at `j`, inclusive) that begin before `end` to their rules' lists. */
  #emit(s: number, j: number, end: number, lists: (number[] | undefined)[]): void {
    const k = s - this.#firstEmitting;
    for (let e = this.#emitStart[k], stop = this.#emitStart[k + 1]; e < stop; e++) {
      const p = j + 1 - this.#emitDepth[e];
      if (p >= end) continue;
      const r = this.#emitRule[e];
      const list = lists[r];
      if (list === undefined) lists[r] = [p];
      else if (list[list.length - 1] < p) list.push(p);
      else insertSorted(list, p);
    }
  }
}

/**
 * Puts `p` into the ascending `list` unless it holds it: a rule's longer lead that began earlier ends after a
 * shorter one that began later.
 */
function insertSorted(list: number[], p: number): void {
  let i = list.length;
  while (i > 0 && list[i - 1] > p) i--;
  if (i > 0 && list[i - 1] === p) return;
  list.splice(i, 0, p);
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
): { next: number[][]; emits: [number, number][][]; width: number } {
  const width = letterClass.length;
  const keys = new Map<string, number>();
  const sets: { atStart: boolean; nodes: number[] }[] = [];
  const stateOf = (atStart: boolean, nodes: number[]) => {
    const key = `${atStart ? 1 : 0}:${nodes.join(",")}`;
    let s = keys.get(key);
    if (s === undefined) {
      s = sets.length;
      keys.set(key, s);
      sets.push({ atStart, nodes });
    }
    return s;
  };
  stateOf(true, []);
  stateOf(false, []);
  const next: number[][] = [];
  for (let s = 0; s < sets.length; s++) {
    const { atStart, nodes } = sets[s];
    const row: number[] = [];
    for (let c = 0; c < width; c++) {
      const to = new Set<number>();
      for (const node of nodes) {
        const child = trie.children[node].get(c);
        if (child !== undefined) to.add(child);
      }
      const fresh = atStart ? trie.children[0].get(c) : undefined;
      if (fresh !== undefined) to.add(fresh);
      row.push(stateOf(!letterClass[c], [...to].sort((a, b) => a - b)));
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
