/**
 * Whether a text holds any of many strings, in one pass of table reads (an Aho-Corasick automaton). A regular
 * expression that alternates a hundred strings tries them one by one at every position where none matches, so
 * on text that holds none of them it costs several times more than this.
 *
 * @module
 */

/** Texts from this long on are read as bytes (see `asciiBytes`). */
export const BYTES_FROM = 256;
/**
 * The byte buffer `asciiBytes` and `utf8Of` keep between calls: the UTF-8 of a window or a forced piece of a
 * long text (up to a million code units, three bytes each at most) fits, so reading one after another makes no
 * garbage; longer texts get one of their own.
 */
export const KEPT_BYTES = 3 << 20;
let byteBuffer: Uint8Array | undefined;
let encoder: TextEncoder | undefined;
/** The text whose bytes `byteBuffer` holds (the lead finder and the word sets read one window's text in turn). */
let bytesOfText: string | undefined;
/** The last text found not to be ASCII: the readers after the first need not encode it again to learn that. */
let notAscii: string | undefined;
/** Whether `byteBuffer` holds the whole UTF-8 of `notAscii`, and in how many bytes (see `utf8Of`). */
let utf8Held = false;
let utf8Written = 0;

/**
 * `t` as bytes, one per code unit, when it is ASCII (the fold of most text is); else null. The engines read a
 * typed array several times faster than `charCodeAt` (V8 above all), and encode ASCII at a small fraction of
 * that cost. The bytes are valid until the next call for another text.
 */
export function asciiBytes(t: string): Uint8Array | null {
  const n = t.length;
  if (t === bytesOfText) return byteBuffer!;
  if (t === notAscii) return null;
  const bytes = n <= KEPT_BYTES ? bytesFor(n) : new Uint8Array(n);
  // Into the whole buffer, not a view of `n` bytes (which would stop the encoder early on text beyond ASCII):
  // a view costs every call, on Bun most of all, and most texts are ASCII.
  const { read, written } = (encoder ??= new TextEncoder()).encodeInto(t, bytes);
  const ascii = read === n && written === n;
  bytesOfText = ascii && bytes === byteBuffer ? t : undefined;
  notAscii = ascii ? undefined : t;
  // the buffer may have been too short for all of the UTF-8 (`read` short of `n`)
  utf8Held = !ascii && bytes === byteBuffer && read === n;
  utf8Written = written;
  return ascii ? bytes : null;
}

/**
 * The UTF-8 of `t`, exactly (most often what `asciiBytes` found not to be ASCII left in the buffer), for readers
 * of text beyond ASCII: a byte beyond ASCII is in no class of their 256-entry tables, and a run of such reads
 * as one (see `UNITS_OF_BYTE` for positions). The engines read a typed array faster than `charCodeAt`.
 * Valid, as `asciiBytes`' are, until the next call for another text.
 */
export function utf8Of(t: string): Uint8Array {
  const n = t.length;
  if (!utf8Held || t !== notAscii) {
    // Room for any text: a unit takes three bytes at most (a pair of surrogates four).
    const bytes = 3 * n <= KEPT_BYTES ? bytesFor(3 * n) : new Uint8Array(3 * n);
    const { written } = (encoder ??= new TextEncoder()).encodeInto(t, bytes);
    notAscii = t;
    utf8Held = bytes === byteBuffer;
    utf8Written = written;
    if (!utf8Held) return bytes.subarray(0, written);
  }
  return byteBuffer!.subarray(0, utf8Written);
}

/**
 * The code units of UTF-16 each byte of UTF-8 ends: none for a continuation byte, two for a pair's first byte.
 * Made by native fills: `Uint8Array.from` with a function cost Bun half a millisecond at import.
 */
export const UNITS_OF_BYTE: Uint8Array = new Uint8Array(256).fill(1).fill(0, 0x80, 0xc0).fill(2, 0xf0);

/**
 * The kept byte buffer, at least `n` long (at most `KEPT_BYTES`), for a caller that writes a text's bytes itself
 * and then names the text with `keepBytes`; it no longer holds the bytes of the text it held.
 */
export function bytesFor(n: number): Uint8Array {
  bytesOfText = undefined;
  utf8Held = false;
  if (byteBuffer === undefined || byteBuffer.length < n) {
    byteBuffer = new Uint8Array(Math.min(KEPT_BYTES, Math.max(n, 1 << 16)));
  }
  return byteBuffer;
}

/** The kept buffer when it holds the bytes of `t` (see `keepBytes`), else null: no need to encode `t` again. */
export function heldBytes(t: string): Uint8Array | null {
  return t === bytesOfText ? byteBuffer! : null;
}

/**
 * Notes that the buffer `bytesFor` gave holds the whole UTF-8 of `t` (not ASCII) in its first `written` bytes:
 * a fold that wrote them (see `sparseFold`) spares the readers of its text an encode (`utf8Of`).
 */
export function keepUtf8(t: string, written: number): void {
  bytesOfText = undefined;
  notAscii = t;
  utf8Held = true;
  utf8Written = written;
}

/** Notes that the buffer `bytesFor` gave holds the bytes of `t`, so `asciiBytes(t)` need not encode it. */
export function keepBytes(t: string): void {
  bytesOfText = t;
}

/** A `WordSet`'s automaton, as its `bitsIn` reads it. */
export interface WordTables {
  /** Character class of each byte (0: in no string; every byte beyond ASCII, see `utf8Of`). */
  readonly classes: Uint8Array;
  /** Bits of a character class: rows of `next` are `1 << shift` wide. */
  readonly shift: number;
  /** `next[(state << shift) | class]`: the state after reading a character of that class. */
  readonly next: Uint16Array | Int32Array;
  /** Per state, the bits of the strings that end there (OR-ed; 0: none ends). */
  readonly accepts: Int32Array;
}

/** A set of ASCII strings that can tell whether a text holds one of them, or which of them it holds. */
export class WordSet {
  /** Character class of each byte (0: in no string; every byte beyond ASCII, see `utf8Of`). */
  #classes = new Uint8Array(256);
  /** Bits of a character class: rows are `1 << #shift` wide, wide enough for every class. */
  #shift: number;
  /** `#next[(state << #shift) | class]`: the state after reading a character of that class. */
  #next: Uint16Array | Int32Array;
  /** Per state, the bits of the strings that end there (OR-ed; 0: none ends). */
  #accepts: Int32Array;
  /** The automaton's tables, for a pass that steps it beside another automaton (see `LeadFinder.findWithBits`). */
  readonly tables: WordTables;
  /** The length of the longest string. */
  #longest = 0;

  /**
   * Builds the automaton of `words` (ASCII, none empty); `bits` gives each string the bits `bitsIn` reports
   * for it (default 1 each).
   *
   * @throws {Error} When a string is empty or not ASCII.
   */
  constructor(words: readonly string[], bits?: readonly number[]) {
    let width = 1;
    for (const w of words) {
      if (w.length === 0) throw new Error("WordSet: an empty string matches everywhere");
      this.#longest = Math.max(this.#longest, w.length);
      for (let i = 0; i < w.length; i++) {
        const c = w.charCodeAt(i);
        if (c >= 128) throw new Error(`WordSet: "${w}" is not ASCII`);
        if (this.#classes[c] === 0) this.#classes[c] = width++;
        if (width > 128) throw new Error("WordSet: more than 127 distinct characters");
      }
    }
    const shift = this.#shift = Math.max(1, Math.ceil(Math.log2(width)));
    // The trie in flat tables sized for the worst case (a state per character), each state's children in a
    // list: this runs on a scanner's first use, in the interpreter, where a map per state cost most of the build.
    let most = 1;
    for (const w of words) most += w.length;
    const trie = new Int32Array(most << shift);
    const firstChild = new Int32Array(most);
    const sibling = new Int32Array(most);
    const classOf = new Int32Array(most);
    const ends = new Int32Array(most);
    let states = 1;
    for (let k = 0; k < words.length; k++) {
      const w = words[k];
      let s = 0;
      for (let i = 0; i < w.length; i++) {
        const c = this.#classes[w.charCodeAt(i)];
        let t = trie[(s << shift) | c];
        if (t === 0) {
          t = states++;
          trie[(s << shift) | c] = t;
          classOf[t] = c;
          sibling[t] = firstChild[s];
          firstChild[s] = t;
        }
        s = t;
      }
      ends[s] |= bits?.[k] ?? 1;
    }
    // Breadth first, each state's row is its trie children over its failure state's row (any order within a
    // depth will do: a failure state is always shallower, so its row is complete).
    const next = states < 0x10000 ? new Uint16Array(states << shift) : new Int32Array(states << shift);
    const fail = new Int32Array(states);
    const queue = new Int32Array(states);
    let queued = 0;
    for (let t = firstChild[0]; t !== 0; t = sibling[t]) {
      next[classOf[t]] = t;
      queue[queued++] = t;
    }
    for (let q = 0; q < queued; q++) {
      const s = queue[q];
      const f = fail[s];
      ends[s] |= ends[f];
      next.copyWithin(s << shift, f << shift, (f + 1) << shift);
      for (let t = firstChild[s]; t !== 0; t = sibling[t]) {
        const c = classOf[t];
        fail[t] = next[(f << shift) | c];
        next[(s << shift) | c] = t;
        queue[queued++] = t;
      }
    }
    this.#next = next;
    this.#accepts = ends.slice(0, states);
    this.tables = { classes: this.#classes, shift, next, accepts: this.#accepts };
  }

  /** True when `text` holds one of the strings. */
  foundIn(text: string): boolean {
    const classes = this.#classes;
    const shift = this.#shift;
    const next = this.#next;
    const accepts = this.#accepts;
    let s = 0;
    const n = text.length;
    let bytes = n >= BYTES_FROM ? asciiBytes(text) : null;
    let m = n;
    // (UTF-8 beyond ASCII, as in `bitsIn`)
    if (bytes === null && n >= BYTES_FROM) m = (bytes = utf8Of(text)).length;
    if (bytes !== null) {
      for (let i = 0; i < m; i++) {
        s = next[(s << shift) | classes[bytes[i]]];
        if (accepts[s] !== 0) return true;
      }
      return false;
    }
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      s = next[(s << shift) | (c < 128 ? classes[c] : 0)];
      if (accepts[s] !== 0) return true;
    }
    return false;
  }

  /**
   * The bits of the strings `text` holds, OR-ed (see the constructor); the pass ends once it has found `all`.
   * One pass for what a test per list of strings would tell.
   */
  bitsIn(text: string, all: number): number {
    const classes = this.#classes;
    const shift = this.#shift;
    const next = this.#next;
    const accepts = this.#accepts;
    let s = 0;
    let found = 0;
    const n = text.length;
    let bytes = n >= BYTES_FROM ? asciiBytes(text) : null;
    let m = n;
    // Text beyond ASCII is read as UTF-8 (see `utf8Of`): no string holds a byte beyond ASCII, and a run of them
    // leaves the automaton at its start, as one unit beyond ASCII does.
    if (bytes === null && n >= BYTES_FROM) m = (bytes = utf8Of(text)).length;
    if (bytes !== null && m >= TWO_LANES_FROM) return this.#bitsInHalves(bytes, m, all);
    if (bytes !== null) {
      for (let i = 0; i < m; i++) {
        s = next[(s << shift) | classes[bytes[i]]];
        if (accepts[s] !== 0 && (found |= accepts[s]) === all) return found;
      }
      return found;
    }
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      s = next[(s << shift) | (c < 128 ? classes[c] : 0)];
      if (accepts[s] !== 0 && (found |= accepts[s]) === all) return found;
    }
    return found;
  }

  /**
   * `bitsIn` over the first `n` of `bytes`, read as two halves at once, each by its own automaton state: a step
   * waits for the state before it, so one pass runs at the latency of a table read, and two independent ones
   * take about the time of one. The first half reads on past the middle by the longest string less one, so
   * every string that starts in it is seen whole; the second starts afresh at the middle.
   */
  #bitsInHalves(bytes: Uint8Array, n: number, all: number): number {
    const classes = this.#classes;
    const shift = this.#shift;
    const next = this.#next;
    const accepts = this.#accepts;
    const mid = n >> 1;
    const endA = Math.min(n, mid + this.#longest - 1);
    const both = Math.min(endA, n - mid);
    let a = 0;
    let b = 0;
    let found = 0;
    for (let i = 0; i < both; i++) {
      a = next[(a << shift) | classes[bytes[i]]];
      b = next[(b << shift) | classes[bytes[mid + i]]];
      const hit = accepts[a] | accepts[b];
      if (hit !== 0 && (found |= hit) === all) return found;
    }
    for (let i = both; i < endA; i++) {
      a = next[(a << shift) | classes[bytes[i]]];
      if (accepts[a] !== 0 && (found |= accepts[a]) === all) return found;
    }
    for (let i = mid + both; i < n; i++) {
      b = next[(b << shift) | classes[bytes[i]]];
      if (accepts[b] !== 0 && (found |= accepts[b]) === all) return found;
    }
    return found;
  }
}

/** Texts from this long on are read by `bitsIn` in two halves at once (see `#bitsInHalves`). */
export const TWO_LANES_FROM = 1 << 12;
