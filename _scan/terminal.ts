/**
 * Text as a terminal shows it: ANSI escape sequences read as nothing. Coloured output is the norm for
 * command-line tools, so tool output carries them, and one between the letters of a word ("ign\x1b[0more")
 * hides the word from rules that read the text as it is, while a model reads it whole. The scanner reads such
 * text twice: as it is (what a sequence carries, a window title or a link, reaches a model) and as shown here,
 * with every finding mapped back to the original's offsets.
 *
 * The sequences follow ECMA-48 as terminals parse them (the DEC/xterm state machine), in one pass:
 * - a control sequence: ESC `[` (or the 8-bit CSI, U+009B), parameter and intermediate bytes (0x20–0x3F), a
 *   final byte (0x40–0x7E);
 * - a control string: ESC `]` (OSC), `P` (DCS), `X` (SOS), `^` (PM) or `_` (APC), up to BEL, ST (ESC `\` or
 *   U+009C), or the next escape, which ends it and starts a sequence of its own;
 * - any other escape: ESC, intermediate bytes (0x20–0x2F), a final byte (0x30–0x7E).
 *
 * Inside a sequence a C0 control is carried out and the sequence goes on (so the control stays in the text);
 * CAN or SUB cancels it; anything else ends it unfinished, and is shown. A sequence the text ends inside is
 * read as nothing to the end.
 *
 * @module
 */
import { grownBy } from "../_common/bytes.ts";

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

  /** Reads `text` once (linear: each character is read once, each search for an escape starts past the last). */
  constructor(text: string) {
    const n = text.length;
    const runs = new Runs(text);
    let nextEsc = text.indexOf("\x1b");
    let nextCsi = text.indexOf("\x9b");
    for (let i = 0; i < n;) {
      if (nextEsc !== -1 && nextEsc < i) nextEsc = text.indexOf("\x1b", i);
      if (nextCsi !== -1 && nextCsi < i) nextCsi = text.indexOf("\x9b", i);
      const at = nextEsc === -1 ? nextCsi : nextCsi === -1 ? nextEsc : Math.min(nextEsc, nextCsi);
      if (at === -1) {
        runs.keep(i, n);
        break;
      }
      runs.keep(i, at);
      i = sequenceEnd(text, at, runs);
    }
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
    let lo = 0;
    let hi = this.#runs - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#shownAt[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return this.#textAt[lo] + (i - this.#shownAt[lo]);
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
