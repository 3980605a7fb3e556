/**
 * One pass over the folded text for the leads of many rules at once (an Aho-Corasick automaton), so that each
 * rule's expression is tried, sticky, only where one of its matches could start, instead of each expression
 * scanning the whole text on its own.
 *
 * @module
 */
import type { Rule } from "./rules.ts";
import { isLetter } from "./fold.ts";

/** Bits of a character class: the trie's rows are `1 << SHIFT` wide, so a child is found with a shift. */
const SHIFT = 6;

/** A trie over the leads of a set of rules (see `Rule.leads`), walked from every word start. */
export class LeadFinder {
  /** The rules, in the order `find` returns their positions. */
  readonly rules: readonly Rule[];
  /** Character class of each ASCII code unit (0: no lead holds it). */
  #classes = new Uint8Array(128);
  /** Number of classes so far (at most `1 << SHIFT`). */
  #width = 1;
  /** `#child[(node << SHIFT) | class]`: the child of a trie node, 0 for none (the root is node 0). */
  #child: Int32Array;
  /** Rules whose lead ends at node `n`: `#ends[#endStart[n] .. #endStart[n + 1])`. */
  #endStart: Int32Array;
  #ends: Int32Array;

  /** Builds the trie of every lead of every rule in `rules` (rules without leads are left out). */
  constructor(rules: readonly Rule[]) {
    this.rules = rules.filter((rule) => rule.leads && rule.leads.length > 0);
    for (const rule of this.rules) {
      for (const lead of rule.leads!) {
        const first = lead.charCodeAt(0);
        if (!(first >= 0x61 && first <= 0x7a)) {
          throw new Error(`${rule.name}: a lead starts with a letter a-z`);
        }
        for (let i = 0; i < lead.length; i++) {
          const c = lead.charCodeAt(i);
          if (c >= 128) throw new Error(`${rule.name}: leads are ASCII`);
          if (this.#classes[c] === 0) this.#classes[c] = this.#width++;
          if (this.#width > 1 << SHIFT) throw new Error(`leads use more than ${(1 << SHIFT) - 1} characters`);
        }
      }
    }
    const children: Map<number, number>[] = [new Map()];
    const ends: number[][] = [[]];
    this.rules.forEach((rule, r) => {
      for (const lead of rule.leads!) {
        let node = 0;
        for (let i = 0; i < lead.length; i++) {
          const c = this.#classes[lead.charCodeAt(i)];
          let child = children[node].get(c);
          if (child === undefined) {
            child = children.length;
            children.push(new Map());
            ends.push([]);
            children[node].set(c, child);
          }
          node = child;
        }
        if (!ends[node].includes(r)) ends[node].push(r);
      }
    });
    this.#child = new Int32Array(children.length << SHIFT);
    children.forEach((map, node) => {
      for (const [c, child] of map) this.#child[(node << SHIFT) | c] = child;
    });
    this.#endStart = new Int32Array(children.length + 1);
    ends.forEach((e, node) => this.#endStart[node + 1] = this.#endStart[node] + e.length);
    this.#ends = Int32Array.from(ends.flat());
  }

  /**
   * Per rule (in the order of `rules`), the positions in `[start, end)` of `t` where one of its leads begins
   * at a word start (no letter a-z before it), ascending; undefined for a rule with none.
   */
  find(t: string, start: number, end: number): (number[] | undefined)[] {
    // Lists are made on a rule's first position: most rules have none in a short text.
    const lists: (number[] | undefined)[] = new Array(this.rules.length);
    const classes = this.#classes;
    const child = this.#child;
    const endStart = this.#endStart;
    const ends = this.#ends;
    const n = t.length;
    // Inside a word (after a letter a-z) no lead starts: a walk starts at the first letter after anything else,
    // and the rest of the word is skipped in a loop of its own.
    let p = start;
    if (p > 0 && isLetter(t.charCodeAt(p - 1))) { while (p < end && isLetter(t.charCodeAt(p))) p++; }
    while (p < end) {
      const c = t.charCodeAt(p);
      if (c < 0x61 || c > 0x7a) {
        p++;
        continue;
      }
      // Walk the trie along the text from p: every node passed that ends a lead is a lead starting at p.
      let node = 0;
      for (let j = p; j < n; j++) {
        const d = t.charCodeAt(j);
        node = d < 128 ? child[(node << SHIFT) | classes[d]] : 0;
        if (node === 0) break;
        for (let e = endStart[node], stop = endStart[node + 1]; e < stop; e++) {
          const list = lists[ends[e]];
          if (list === undefined) lists[ends[e]] = [p];
          else if (list[list.length - 1] !== p) list.push(p);
        }
      }
      p++;
      while (p < end && isLetter(t.charCodeAt(p))) p++;
    }
    return lists;
  }
}
