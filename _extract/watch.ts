/**
 * For a streaming text watcher: where in a text that is still growing a call may begin, so that text is held
 * only from there and everything before it can be released at once.
 *
 * @module
 */
import { scanText } from "./extract.ts";
import { MARKERS, openingsPattern, READERS } from "./registry.ts";
import { HARMONY_ENDS, harmonyBody, tokens } from "./reasoning.ts";
import { resumeValueEnd, skipSpace, type ValueScan } from "./text.ts";
import { bareJson, CALL_FENCE_LANGUAGES } from "./readers/json.ts";
import { Scan } from "./scan.ts";
import { Typer } from "./typing.ts";
import type { ExtractOptions } from "./types.ts";
import { lazy } from "../_common/lazy.ts";

/** Every literal text that opens call markup in some format, longest first. */
export const CALL_START_MARKERS: readonly string[] = MARKERS;
/** Openings written as shapes rather than literals (`[name(`, `{"name":`), as sticky regular expressions. */
export const CALL_START_SHAPES: readonly RegExp[] = READERS.flatMap((r) => r.shape ? [r.shape] : []);
export { CALL_OPENING_KEYS } from "./json_calls.ts";

const LONGEST = Math.max(...MARKERS.map((m) => m.length));
/** Every proper prefix of a marker (`<`, `<t`, ... `<tool_cal`): made on first use. */
const prefixes = lazy(() =>
  new Set<string>(MARKERS.flatMap((m) => [...Array(m.length - 1).keys()].map((k) => m.slice(0, k + 1))))
);
/** How far back a shape's cut-off opening (`[get_wea`, `get_weather\n`) is looked for before it is prose. */
export const SHAPE_TAIL_LIMIT = 160;
/** Openings written as shapes, cut off at the end of the text: `[get_wea`, `{"na`. */
export const SHAPE_TAILS: readonly RegExp[] = [/\[\s*(?:[A-Za-z_][\w.-]*\s*)?$/, /\{\s*(?:"[a-z_]*"?\s*)?$/];
/** Functionary v3.2 where the answer begins (`NAME\n{`), and its start cut off by the end of the text. */
export const RECIPIENT_START = /^[A-Za-z_][\w.-]{0,127}[ \t]*\r?\n\s*\{/;
export const RECIPIENT_START_TAIL = /^[A-Za-z_][\w.-]{0,127}[ \t]*(?:\r?\n\s*)?$/;

/** The languages of a fence that holds calls (`json`, `tool_call`, none). */
export { CALL_FENCE } from "./readers/json.ts";

/**
 * Whether a fence's language line that the end of the text cut off (what follows the three backticks, no
 * line break yet) may still name the language of a fence that holds calls: `js` may become `json`, `json {`
 * and `python` cannot become one, so the text need not wait for the line's end.
 */
export function fenceMayHoldCalls(line: string): boolean {
  if (line.length > 64) return line.trim() === ""; // (the longest language with room for white space)
  const m = /^\s*(\S*)(\s*)$/.exec(line);
  if (!m) return false;
  const word = m[1].toLowerCase();
  return m[2] === ""
    ? CALL_FENCE_LANGUAGES.some((l) => l.startsWith(word))
    : CALL_FENCE_LANGUAGES.includes(word);
}

/**
 * The earliest index at or after `from` where a call may begin in `text` as it stands (it may still grow),
 * or `-1` when no call can begin there: everything from `from` on can be released. A call may begin at a
 * call that is already readable, at markup that ran out of text before it could be decided (a `<tool_call>`
 * whose body has not arrived, a bare `{` that has not closed), and at the start of a marker or shape cut off
 * by the end of the text (`<tool_ca`). Markup inside closed reasoning, and markup already decided not to be
 * a call (prose that mentions `<tool_call>`, once a few dozen characters follow it; a fence of Python code)
 * do not hold text.
 *
 * A watcher calls it with the whole text received so far and its release point as `from` (never a point
 * inside markup it is holding). The cost is linear: a fast pass over the whole text for reasoning, then the
 * readers from `from` on. While it holds a long call, a watcher need not ask on every chunk: asking again
 * once the held text has grown by half keeps the total work linear in the length of the message.
 *
 * @param text The message text received so far.
 * @param from Where to start looking (the watcher's release point); default 0.
 * @param options `tools`, as for `extractToolCalls` (they change what counts as a call without a marker).
 * @returns An index in `[from, text.length]`, or `-1`.
 *
 * @example Hold a message only from where a call may begin
 * ```ts
 * import { callMayStart } from "@toolguard/toolguard/extract";
 * import assert from "node:assert/strict";
 * assert.equal(callMayStart("Let me check. <tool_ca"), 14); // a marker cut off by the end
 * assert.equal(callMayStart("Let me check. <tool_call>"), 14); // its body has not arrived
 * const prose = "I would use <tool_call> tags for that, with the JSON object of the call written inside them.";
 * assert.equal(callMayStart(prose), -1); // prose: decided once a few dozen characters follow the marker
 * assert.equal(callMayStart("<think>maybe <tool_call>{}</tool_call></think>Hello there."), -1); // reasoning
 * ```
 */
export function callMayStart(text: string, from = 0, options: ExtractOptions = {}): number {
  if (typeof text !== "string" || from >= text.length) return -1;
  const lo = Math.max(0, from);
  const { result, scan } = scanText(text, options, lo);
  let best = Infinity;
  for (const c of result.calls) {
    if (c.block.end > lo) {
      best = Math.max(lo, c.block.start);
      break;
    }
  }
  if (scan.ranOutAt >= lo) best = Math.min(best, scan.ranOutAt);
  best = Math.min(best, cutOffOpening(text, lo));
  return best === Infinity ? -1 : best;
}

/** Where a marker or shape that the end of the text cut off begins, at or after `from`; else Infinity. */
function cutOffOpening(text: string, from: number): number {
  const n = text.length;
  for (let k = Math.min(LONGEST - 1, n - from); k > 0; k--) {
    if (prefixes().has(text.slice(n - k))) return n - k;
  }
  const tail = text.slice(Math.max(from, n - SHAPE_TAIL_LIMIT));
  let best = Infinity;
  for (const re of SHAPE_TAILS) {
    const m = re.exec(tail);
    if (m) best = Math.min(best, n - tail.length + m.index);
  }
  return best;
}

/** How much released text a {@link ReleasedText} window keeps before the release point (readers look back). */
const CONTEXT = 512;
/** How far back a harmony header is read for its recipient (see `harmonyBody`). */
const HEADER_BACK = 256;
/** The longest harmony message end, or recipient (`xto=`): how far past the window's start one may reach. */
const END_LONGEST = Math.max(4, ...HARMONY_ENDS.map((e) => e.length));
/** A closed reasoning block, to stand for the blocks the window leaves out (a later closing tag is then no lone one). */
const CLOSED_BLOCK = "<think></think>";
/** An answer of JSON that is no call, to stand for one the window leaves out (see `#jsonSettled`). */
const JSON_ANSWER = "[0]";
/** A call opening, to stand for one the window leaves out (a lone closing tag after it does not move the answer). */
const AN_OPENING = "[TOOL_CALLS]";

/** Whether a run of JSON objects that reached `end` has ended there: a character follows that goes on no run. */
function objectRunEnded(text: string, end: number): boolean {
  let p = skipSpace(text, end);
  if (text[p] === "," || text[p] === ";") p = skipSpace(text, p + 1);
  return p < text.length && text[p] !== "{";
}

/**
 * The released part of a message that a streaming watcher holds from a marker on, kept with what `runReaders`
 * learns from it (is the release point inside reasoning, where the answer began), so that asking whether a
 * call may begin after the release point reads a bounded window, not the whole text: asked at every marker
 * of a long answer that quotes markers in prose, reading the whole text each time was quadratic.
 *
 * The state is the reasoning walk of `runReaders` up to a settled point a little before the release point;
 * the window is a short stand-in for that state, then the real text from the settled point on. Where the
 * state is not yet settled (no answer text or only prose with no marker before the first hold, a message
 * that opens with JSON whose reader has read a value and may read more, JSON that closes in the held text)
 * {@link ReleasedText.window} says so, and the caller reads the whole text as before. JSON that has not closed
 * is scanned on as the text grows: until it closes its reader reads nothing, and the walk goes on as after
 * prose.
 */
export class ReleasedText {
  /** Released text from `#base` on. */
  #buf = "";
  #base = 0;
  /** Where the window starts: reasoning tokens before it are taken. */
  #at = 0;
  /** Tokens before this lie in a closed block (or were taken). */
  #pos = 0;
  /** No reasoning token was taken yet (a closing tag is lone only then). */
  #first = true;
  /** A reasoning block opened before `#at` that has not closed before it. */
  #open:
    | { token: string; closers: readonly string[]; from: number; harmony: boolean; atAnswer: boolean }
    | undefined;
  /** Where `runReaders` puts the answer: not yet known, or `final` (settled before `#at`). */
  #answer: "space" | "prose" | "leading" | "final" = "space";
  /** The answer's candidate start while it is not final. */
  #i = 0;
  /** Where the first call opening starts, once one was found before `#openingsTo`. */
  #opening = Infinity;
  #openingsTo = 0;
  /**
   * The answer opens with JSON (`bareJson` reads it first, and the text it spans is no call's): `pending`
   * until the released text shows where that JSON ends, then `done` (the walk goes on after it); `whole`
   * when it holds calls (the whole text is read). `open` while the value `bareJson` reads first has not
   * closed in the released text: until it closes, `bareJson` reads nothing there and the walk goes on as
   * after prose (see `#valueOpen`).
   */
  #json: "no" | "pending" | "open" | "done" | "whole" = "no";
  /**
   * The scan of the answer's first JSON value (an object, or an array whose first element is none) carried
   * over the released text as it grows (`at` counts from the start of the message), `closed` once it closed.
   */
  #value: ValueScan | "closed" | undefined;
  /**
   * The released text from `#leadBase` to `#base`, cut off the window's buffer while the answer's JSON is
   * open, kept for its reader once it closes (the buffer stays short: a long one is copied whole when read).
   */
  #lead = "";
  #leadBase = 0;

  /** The length of the released text. */
  get length(): number {
    return this.#base + this.#buf.length;
  }

  /** Appends released text. */
  push(text: string): void {
    this.#buf += text;
  }

  /**
   * A text that stands for the released text, for `callMayStart` asked from the release point `from`: a short
   * stand-in for the state before the window, then the released text from a little before `from` (append
   * the held text to it); `from` is the release point in it. Undefined when the whole text must be read.
   * `held` is the text held after the released text (a JSON answer that closes in it is read whole).
   */
  window(from: number, held = ""): { text: string; from: number } | undefined {
    if (this.#json === "whole" || from < 2 * CONTEXT) return undefined;
    this.#advance(from - CONTEXT);
    const json: string = this.#json; // (the walk may have changed it)
    if (json === "pending" || json === "whole" || this.#at > from) return undefined;
    // (JSON that closes in the held text is read as a whole by its reader: read the whole text then)
    if (json === "open" && this.#closesIn(held)) return undefined;
    let prefix: string;
    const open = this.#open;
    if (this.#answer === "final") {
      // (an answer of JSON that is no call stands as one: it turns off the reading of calls quoted in prose)
      const answer = json === "done" ? JSON_ANSWER : ".";
      prefix = answer + (open ? open.token : this.#first ? AN_OPENING : CLOSED_BLOCK) + this.#lookBack();
    } else if (this.#answer === "leading") {
      // (white space after it: the answer has not begun, and the text before the window is reasoning)
      prefix = (open ? open.token : CLOSED_BLOCK) + " ".repeat(HEADER_BACK);
    } else return undefined;
    const text = prefix + this.#buf.slice(this.#at - this.#base);
    const keep = this.#at - HEADER_BACK - this.#base;
    if (keep > CONTEXT) {
      if (json === "open") {
        if (this.#lead === "") this.#leadBase = this.#base;
        this.#lead += this.#buf.slice(0, keep);
      }
      this.#buf = this.#buf.slice(keep);
      this.#base += keep;
    }
    return { text, from: prefix.length + from - this.#at };
  }

  /**
   * The released text just before the window as a harmony header reads it back for a recipient
   * (`harmonyBody`): its recipients (`to=`) and message ends, the rest blanked, so that no reasoning tag or
   * call in it is read again. Ends inside an open harmony message cannot be there; those before it are
   * blanked, or its end would be found before it.
   */
  #lookBack(): string {
    const from = Math.max(this.#base, this.#at - HEADER_BACK);
    const back = this.#buf.slice(from - this.#base, this.#at - this.#base);
    // (a recipient or message end that the window's start cuts in two is kept: its part before the start
    // is written here, the rest is the window's own text)
    const both = back + this.#buf.slice(this.#at - this.#base, this.#at - this.#base + END_LONGEST);
    const out = Array<string>(HEADER_BACK).fill(" ");
    const pad = HEADER_BACK - back.length;
    const keep = (at: number, what: string) => {
      for (let k = 0; k < what.length && at + k < back.length; k++) out[pad + at + k] = what[k];
    };
    for (const m of both.matchAll(/(\w?)to=/g)) {
      if (m.index < back.length) keep(m.index, (m[1] ? "x" : "") + "to=");
    }
    if (!this.#open?.harmony) {
      for (const end of HARMONY_ENDS) {
        for (let k = both.indexOf(end); k >= 0 && k < back.length; k = both.indexOf(end, k + 1)) keep(k, end);
      }
    }
    return out.join("");
  }

  /** Takes the reasoning tokens that start before `limit`, as `runReaders` does, and settles the answer. */
  #advance(limit: number): void {
    // (the answer's open JSON may have closed in the text released since: the walk then starts after it)
    if (!this.#jsonSettled()) return;
    if (limit <= this.#at && this.#pos <= this.#at) return;
    const { re, closerOf, closers } = tokens();
    const buf = this.#buf;
    const base = this.#base;
    if (this.#first && this.#opening === Infinity && this.#openingsTo < limit) {
      const openings = openingsPattern();
      openings.lastIndex = this.#openingsTo - base;
      const m = openings.exec(buf);
      if (m && m.index + base < limit) this.#opening = m.index + base;
      else this.#openingsTo = limit;
    }
    for (;;) {
      if (!this.#jsonSettled()) return;
      const open = this.#open;
      if (open) {
        let at = Infinity;
        let end = -1;
        for (const c of open.closers) {
          const k = buf.indexOf(c, open.from - base);
          if (k >= 0 && k + base < at) {
            at = k + base;
            end = at + (open.harmony && c !== "<|end|>" ? 0 : c.length);
          }
        }
        if (at >= limit) {
          open.from = Math.max(open.from, limit);
          this.#at = Math.max(limit, open.from);
          return;
        }
        if (end > limit) {
          this.#at = at; // the closer straddles the limit: the window starts at it
          return;
        }
        this.#open = undefined;
        this.#pos = end;
        if (open.atAnswer && this.#answer === "leading") this.#i = end;
        continue;
      }
      re.lastIndex = this.#pos - base;
      const m = re.exec(buf);
      const r = m ? m.index + base : Infinity;
      this.#settleText(Math.min(r, limit));
      if (!this.#jsonSettled()) return;
      if (this.#pos > r) continue; // (the answer's JSON ended past the token)
      if (r >= limit) {
        this.#at = this.#pos = Math.max(limit, this.#pos); // (no token starts before it)
        return;
      }
      const token = m![0];
      this.#pos = r + 1;
      const pending = this.#answer !== "final";
      if (token === "<|channel|>analysis") {
        const body = harmonyBody(buf, r - base);
        if (body === undefined) {
          this.#answer = "final"; // a header with a recipient: a call, not reasoning
          continue;
        }
        this.#first = false;
        const atAnswer = pending && r === this.#i;
        this.#open = {
          token: buf.slice(r - base, body),
          closers: HARMONY_ENDS,
          from: body + base,
          harmony: true,
          atAnswer,
        };
        if (atAnswer) this.#answer = "leading";
        else this.#answer = "final";
        continue;
      }
      const wasFirst = this.#first;
      this.#first = false;
      const closer = closerOf.get(token);
      if (closer !== undefined) {
        const atAnswer = pending && r === this.#i;
        this.#open = { token, closers: [closer], from: r + token.length, harmony: false, atAnswer };
        this.#answer = atAnswer ? "leading" : "final";
      } else if (closers.has(token) && wasFirst && pending && r < this.#opening) {
        this.#answer = "leading"; // a lone closing tag: the answer begins after it
        this.#i = r + token.length;
        this.#json = "no";
      } else {
        this.#answer = "final"; // a closing tag after other reasoning: not reasoning, and the answer began
      }
    }
  }

  /** Moves the answer on over the text before `to` (no reasoning token starts there). */
  #settleText(to: number): void {
    if (this.#answer === "prose" && this.#opening < to) this.#answer = "final"; // no lone tag can move it now
    if (this.#answer !== "space" && this.#answer !== "leading") return;
    const i = skipSpace(this.#buf, this.#i - this.#base) + this.#base;
    this.#i = Math.min(i, to);
    if (i >= to) return;
    this.#answer = this.#answer === "leading" || this.#opening < to ? "final" : "prose";
    this.#checkJson();
  }

  /** An answer that opens with JSON is read by `bareJson` first: see `#jsonSettled`. */
  #checkJson(): void {
    const c = this.#buf[this.#i - this.#base];
    if (c === "{" || c === "[") this.#json = "pending";
    this.#value = undefined;
  }

  /**
   * Whether the JSON value that `bareJson` reads first has not closed in the released text, by a scan carried
   * on from where the last one stopped. While it is open `bareJson` reads nothing at the answer (an object
   * that does not close is no run; an array that does not close is read object by object, and its first
   * element is none or has not closed), so the whole text reads as if the answer were prose, until the text
   * closes it. False once it closed, or while an array's first element has not begun.
   */
  #valueOpen(): boolean {
    if (this.#value === "closed") return false;
    const buf = this.#buf;
    const base = this.#base;
    if (this.#value === undefined) {
      let p = this.#i - base;
      if (buf[p] === "[") {
        // (as `readArray` reads an array that does not close: its first element, after commas and white space)
        let q = skipSpace(buf, p + 1);
        while (buf[q] === "," || (q < buf.length && /\s/.test(buf[q]))) q++;
        if (q >= buf.length) return false;
        if (buf[q] === "{") p = q;
      }
      this.#value = { at: p + base, depth: 0, inString: false };
    }
    const scan = { ...this.#value, at: this.#value.at - base };
    if (resumeValueEnd(buf, scan, buf.length) >= 0) {
      this.#value = "closed";
      return false;
    }
    this.#value = { ...scan, at: scan.at + base };
    return true;
  }

  /** Whether the answer's open JSON value closes in `held`, the text that follows the released text. */
  #closesIn(held: string): boolean {
    const value = this.#value as ValueScan;
    return resumeValueEnd(held, { ...value, at: value.at - this.length }, held.length) >= 0;
  }

  /**
   * Once the answer, settled where the JSON it opens with starts, has that JSON end in the released text as
   * it would in any longer text: the walk starts again after it, as `runReaders` goes on after `bareJson`
   * (reasoning tokens inside it are not taken: those the walk took while it was open are given back). True
   * while its first value is open (the walk goes on as after prose); false while the end is not known.
   */
  #jsonSettled(): boolean {
    if ((this.#json !== "pending" && this.#json !== "open") || this.#answer !== "final") return true;
    if (this.#valueOpen()) {
      this.#json = "open";
      return true;
    }
    this.#json = "pending";
    if (this.#lead !== "") {
      this.#buf = this.#lead + this.#buf; // (once: the JSON closed)
      this.#base = this.#leadBase;
      this.#lead = "";
    }
    const buf = this.#buf;
    const at = this.#i - this.#base;
    const scan = new Scan(buf, new Typer());
    const end = bareJson.read(scan, at, "");
    if (end <= at) {
      if (scan.ranOutAt < Infinity) return false; // not closed yet
      this.#json = "no"; // no JSON value: the answer is prose
      return true;
    }
    if (!scan.jsonAnswer) {
      this.#json = "whole"; // calls: the whole text is read
      return false;
    }
    // A run of objects goes on over white space and a comma or semicolon; an array ends at its bracket.
    if (buf[at] === "[" ? buf[end - 1] !== "]" : !objectRunEnded(buf, end)) return false;
    this.#json = "done";
    this.#open = undefined;
    this.#first = true;
    this.#pos = end + this.#base;
    return true;
  }
}
