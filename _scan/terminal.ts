/**
 * Text as a terminal shows it: ANSI escape sequences read as nothing. Coloured output is the norm for
 * command-line tools, so tool output carries them, and one between the letters of a word ("ign\x1b[0more")
 * hides the word from rules that read the text as it is, while a model reads it whole. The scanner reads such
 * text twice: as it is (what a sequence carries, a window title or a link, reaches a model) and as shown here,
 * with every finding mapped back to the original's offsets.
 *
 * The sequences follow ECMA-48 as terminals parse them (the DEC/xterm state machine), in one pass:
 * - a control sequence: ESC `[` (or the 8-bit CSI, U+009B), parameter and intermediate bytes (0x20-0x3F), a
 *   final byte (0x40-0x7E);
 * - a control string: ESC `]` (OSC), `P` (DCS), `X` (SOS), `^` (PM) or `_` (APC), up to BEL, ST (ESC `\` or
 *   U+009C), or the next escape, which ends it and starts a sequence of its own;
 * - any other escape: ESC, intermediate bytes (0x20-0x2F), a final byte (0x30-0x7E).
 *
 * Inside a sequence a C0 control is carried out and the sequence goes on (so the control stays in the text);
 * CAN or SUB cancels it; anything else ends it unfinished, and is shown. A sequence the text ends inside is
 * read as nothing to the end.
 *
 * @module
 */
import { grownBy, runAt } from "../_common/bytes.ts";

const ESC = 0x1b;
/** The 8-bit control sequence introducer, and string terminator. */
const CSI_8BIT = 0x9b;
const ST_8BIT = 0x9c;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const DEL = 0x7f;

/** True when `text` holds a character that starts an escape sequence (ESC or the 8-bit CSI). Two native searches. */
export function holdsEscapes(text: string): boolean {
  return text.indexOf("\x1b") !== -1 || text.indexOf("\x9b") !== -1;
}

/** Where a sequence's parser is: after ESC, in an escape's intermediates, in a control sequence, in a string. */
const AFTER_ESC = 0;
const INTERMEDIATES = 1;
const CONTROL = 2;
const STRING = 3;

/** Pieces of the shown text joined into one string at a time: the list of pieces stays short. */
const JOIN_EVERY = 1024;

/** `text` as a terminal shows it (see the module's doc), with the map back to `text`. */
export class ShownText {
  /** The text with its escape sequences dropped. */
  readonly text: string;
  /** Per kept run of `text`: where it starts in the shown text (ascending) and in `text`. */
  readonly #shownAt: Int32Array;
  readonly #textAt: Int32Array;
  readonly #runs: number;
  /**
   * The stretches of `text` a terminal draws concealed (SGR 8, up to the SGR that ends it, 28 or a reset) in
   * which something is shown: a model reads them, a person at the terminal sees blank space.
   */
  readonly concealed: { start: number; end: number }[] = [];

  /** Reads `text` once (linear: each character is read once, each search for an escape starts past the last). */
  constructor(text: string) {
    const n = text.length;
    const runs = new Runs(text);
    let nextEsc = text.indexOf("\x1b");
    let nextCsi = text.indexOf("\x9b");
    // Where the concealed stretch began (-1: not concealing), and whether it shows anything yet.
    let concealFrom = -1;
    let concealShows = false;
    for (let i = 0; i < n;) {
      if (nextEsc !== -1 && nextEsc < i) nextEsc = text.indexOf("\x1b", i);
      if (nextCsi !== -1 && nextCsi < i) nextCsi = text.indexOf("\x9b", i);
      const at = nextEsc === -1 ? nextCsi : nextCsi === -1 ? nextEsc : Math.min(nextEsc, nextCsi);
      const to = at === -1 ? n : at;
      if (concealFrom >= 0 && !concealShows) concealShows = notBlank(text, i, to);
      runs.keep(i, to);
      if (at === -1) break;
      i = sequenceEnd(text, at, runs);
      const conceal = concealAfter(text, at, i);
      if (conceal === true && concealFrom < 0) {
        concealFrom = at;
        concealShows = false;
      } else if (conceal === false && concealFrom >= 0) {
        if (concealShows) this.concealed.push({ start: concealFrom, end: i });
        concealFrom = -1;
      }
    }
    if (concealFrom >= 0 && concealShows) this.concealed.push({ start: concealFrom, end: n });
    this.text = runs.joined();
    this.#shownAt = runs.shownAt;
    this.#textAt = runs.textAt;
    this.#runs = runs.count;
  }

  /**
   * The span of `text` behind shown characters `start` to `end` (`start < end`): from the first one's place to
   * just after the last one's, so sequences inside the span are in it and those around it are not.
   */
  span(start: number, end: number): [number, number] {
    return [this.#place(start), this.#place(end - 1) + 1];
  }

  /** The index in `text` of shown character `i`. */
  #place(i: number): number {
    // The last run that starts at or before `i` (the first starts at 0).
    const run = runAt(this.#shownAt, this.#runs, i);
    return this.#textAt[run] + (i - this.#shownAt[run]);
  }
}

/** The kept runs of a text as they are found: the pieces of the shown text and where each starts. */
class Runs {
  /** Per run, in the first `count` slots: where it starts in the shown text, and in the text. */
  shownAt = new Int32Array(16);
  textAt = new Int32Array(16);
  count = 0;
  readonly #text: string;
  /** The shown text's length so far, and where the last run kept ended in the text (-1: none yet). */
  #length = 0;
  #lastEnd = -1;
  /** The pieces not yet joined, and the strings each `JOIN_EVERY` of them were joined into. */
  #pieces: string[] = [];
  #joined: string[] = [];

  constructor(text: string) {
    this.#text = text;
  }

  /** Keeps characters `from` to `to` of the text; a run that goes on where the last one ended is the same run. */
  keep(from: number, to: number): void {
    if (to <= from) return;
    if (from !== this.#lastEnd) {
      if (this.count === this.shownAt.length) {
        this.shownAt = grownBy(this.shownAt, 1);
        this.textAt = grownBy(this.textAt, 1);
      }
      this.shownAt[this.count] = this.#length;
      this.textAt[this.count++] = from;
    }
    this.#pieces.push(this.#text.slice(from, to));
    if (this.#pieces.length === JOIN_EVERY) {
      this.#joined.push(this.#pieces.join(""));
      this.#pieces.length = 0;
    }
    this.#length += to - from;
    this.#lastEnd = to;
  }

  /** The shown text. */
  joined(): string {
    this.#joined.push(this.#pieces.join(""));
    return this.#joined.join("");
  }
}

/** Whether `text[from, to)` holds a character other than white space and C0 controls. */
function notBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x20 && c !== DEL && c !== 0xa0 && !(c >= 0x2000 && c <= 0x200b) && c !== 0x3000) return true;
  }
  return false;
}

/**
 * What the sequence `text[at, end)` does to concealment when it is an SGR (`ESC [ ... m` or CSI `... m`):
 * true when it turns it on (8), false when it turns it off (28, or a reset: 0 or no parameter), undefined
 * when it does neither. The colour forms 38/48/58 take their arguments along (`38;5;8` is a colour, not
 * concealment).
 */
function concealAfter(text: string, at: number, end: number): boolean | undefined {
  // ESC c, the full reset, ends concealment with everything else.
  if (end === at + 2 && text.charCodeAt(at) === ESC && text.charCodeAt(at + 1) === 0x63) return false;
  if (text.charCodeAt(end - 1) !== 0x6d) return undefined; // "m"
  const from = text.charCodeAt(at) === CSI_8BIT ? at + 1 : text.charCodeAt(at + 1) === 0x5b ? at + 2 : -1;
  // A private form (`ESC [ > 4 ; 8 m`, xterm's key modifiers) is no SGR.
  if (from < 0 || (text.charCodeAt(from) >= 0x3c && text.charCodeAt(from) <= 0x3f)) return undefined;
  let state: boolean | undefined;
  // Read in place, one parameter at a time (a colour's arguments are skipped: `colour` says how many remain).
  let value = -1; // -1: an empty parameter; -2: one that is no plain number
  let colour = 0; // arguments still to skip: -1 right after 38/48/58 (the next one says how many follow)
  for (let i = from; i < end; i++) {
    const c = i < end - 1 ? text.charCodeAt(i) : 0x3b; // the final byte ends the last parameter
    if (c >= 0x30 && c <= 0x39) {
      if (value !== -2) value = (value < 0 ? 0 : value * 10) + (c - 0x30);
      if (value > 1000) value = -2;
      continue;
    }
    if (c >= 0x20 && c <= 0x2f) return undefined; // an intermediate byte: another function than SGR
    if (c !== 0x3b) {
      value = -2; // a sub-parameter (`38:5:8`) or private form: neither conceals nor resets
      continue;
    }
    if (colour === -1) colour = value === 5 ? 1 : value === 2 ? 3 : 0;
    else if (colour > 0) colour--;
    else if (value === 38 || value === 48 || value === 58) colour = -1;
    else if (value === 8) state = true;
    else if (value === -1 || value === 0 || value === 28) state = false;
    value = -1;
  }
  return state;
}

/**
 * The index just past the escape sequence that starts at `at` (ESC or the 8-bit CSI), or where it ends
 * unfinished; the C0 controls carried out inside it go to `runs`.
 */
function sequenceEnd(text: string, at: number, runs: Runs): number {
  const n = text.length;
  let state = text.charCodeAt(at) === CSI_8BIT ? CONTROL : AFTER_ESC;
  for (let i = at + 1; i < n; i++) {
    const c = text.charCodeAt(i);
    if (state === STRING) {
      if (c === BEL || c === ST_8BIT || c === CAN || c === SUB) return i + 1;
      // ESC \ is the terminator; any other escape or CSI ends the string and starts a sequence of its own.
      if (c === ESC) return text.charCodeAt(i + 1) === 0x5c ? i + 2 : i;
      if (c === CSI_8BIT) return i;
      continue;
    }
    if (state === AFTER_ESC) {
      if (c === 0x5b) {
        state = CONTROL;
        continue;
      }
      if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) {
        state = STRING;
        continue;
      }
    }
    if (state === CONTROL) {
      if (c >= 0x20 && c <= 0x3f) continue;
      if (c >= 0x40 && c <= 0x7e) return i + 1;
    } else {
      if (c >= 0x20 && c <= 0x2f) {
        state = INTERMEDIATES;
        continue;
      }
      if (c >= 0x30 && c <= 0x7e) return i + 1;
    }
    if (c === ESC || c === CSI_8BIT) return i;
    if (c === CAN || c === SUB) return i + 1;
    if (c < 0x20) runs.keep(i, i + 1);
    else if (c !== DEL) return i;
  }
  return n;
}
