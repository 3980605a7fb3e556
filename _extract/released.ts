/**
 * The released text of a streaming text watcher, as a short window that stands for it (see
 * {@linkcode ReleasedText}). Apart from `watch.ts` because only the gate's text watcher (`_gate/text_watch.ts`,
 * loaded when the gate first reads a response) uses it: importing `extract.ts` or `mod.ts` does not load it.
 *
 * @module
 */
import { openingsPattern } from "./registry.ts";
import { HARMONY_ENDS, harmonyBody, tokens } from "./reasoning.ts";
import { resumeValueEnd, skipSpace, type ValueScan } from "./text.ts";
import { holdsCalls, parseLenient, runItem } from "./json_calls.ts";

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

/**
 * What `bareJson` reads at an answer that opens with JSON (a run of objects; an array, read whole once it
 * closes, else object by object), carried on over the released text as it grows: read again from the answer
 * at every held marker, JSON whose last value had not closed (`{"a": 1}, {"b": "...`, `[{"a": 1}, "...`) was
 * read whole each time. Positions count from the start of the message; the text is handed over as a buffer
 * from `base` on (no position it reads lies before it, see {@link AnswerJson.need}) and a way to slice any
 * released text.
 */
class AnswerJson {
  readonly #start: number;
  readonly #array: boolean;
  /** An array's own scan while it has not closed (read whole once it does). */
  #whole: ValueScan | undefined;
  /** The object being read (the run's next, or the array's next element), from `#from`. */
  #value: ValueScan | undefined;
  #from = 0;
  /** Where the text after the last value is read on from, while no object is being read. */
  #gap: number;
  /** The run (or the array's elements, read one by one) stopped for good. */
  #stopped = false;
  /** Values read. */
  items = 0;
  /** One past the last value read: where `bareJson` ends (with values read and no calls). */
  end: number;
  /** The values read are calls (the whole text is read then). */
  calls = false;
  /** No longer text can change what is read. */
  final = false;

  constructor(start: number, array: boolean) {
    this.#start = start;
    this.#array = array;
    this.end = start;
    this.#gap = array ? start + 1 : start;
    if (array) this.#whole = { at: start, depth: 0, inString: false };
  }

  /** The earliest position the next {@link AnswerJson.read} reads (the buffer must start at or before it). */
  get need(): number {
    return Math.min(this.#whole?.at ?? Infinity, this.#value?.at ?? (this.#stopped ? Infinity : this.#gap));
  }

  /** Reads on to the end of `buf` (the released text from `base` on). */
  read(buf: string, base: number, slice: (from: number, to: number) => string): void {
    if (this.final || this.calls) return;
    if (this.#whole) {
      const whole = { ...this.#whole, at: this.#whole.at - base };
      const e = resumeValueEnd(buf, whole, buf.length);
      if (e < 0) this.#whole = { ...whole, at: whole.at + base };
      else {
        // (as `readArray`: valid as a whole, its elements; else object by object, up to its end)
        this.#whole = undefined;
        this.final = true;
        const parsed = parseLenient(slice(this.#start, e + base));
        if (parsed.ok && Array.isArray(parsed.value)) {
          this.items = parsed.value.length;
          this.end = e + base;
          this.calls = this.items > 0 && parsed.value.every((v) => holdsCalls(v));
          return;
        }
      }
    }
    this.#values(buf, base, slice);
    if (this.#stopped && !this.#whole) this.final = true;
  }

  /** Reads the values one by one, as `readJsonRun` does, as far as `buf` goes. */
  #values(buf: string, base: number, slice: (from: number, to: number) => string): void {
    while (!this.#stopped && !this.calls) {
      if (this.#value) {
        const value = { ...this.#value, at: this.#value.at - base };
        const e = resumeValueEnd(buf, value, buf.length);
        if (e < 0) {
          this.#value = { ...value, at: value.at + base };
          return;
        }
        this.#value = undefined;
        const text = slice(this.#from, e + base);
        let next: number;
        let read: unknown;
        if (this.#array) {
          const parsed = parseLenient(text);
          if (!parsed.ok) break;
          [read, next] = [parsed.value, text.length];
        } else {
          const item = runItem(text, 0, text.length);
          if ("error" in item) break;
          [read, next] = [item.item.value, item.next];
        }
        this.items++;
        if (this.items === 1 && holdsCalls(read)) this.calls = true; // (an array's, once all its elements are)
        this.end = this.#gap = this.#from + next;
        continue;
      }
      let p = this.#gap - base;
      if (this.#array) {
        while (buf[p] === "," || (p < buf.length && /\s/.test(buf[p]))) p++;
      } else {
        p = skipSpace(buf, p);
        if (buf[p] === "," || buf[p] === ";") p = skipSpace(buf, p + 1);
      }
      if (p >= buf.length) return; // (the next character decides)
      if (buf[p] !== "{") {
        // (`]` only once the array closed and did not read whole: `readArray` then ends after it)
        if (this.#array && buf[p] === "]" && this.items > 0) this.end = p + 1 + base;
        break;
      }
      this.#from = p + base;
      this.#value = { at: p + base, depth: 0, inString: false };
    }
    this.#stopped = true;
  }

  /** Whether `held`, the text after the released text (which ends at `length`), may change what is read. */
  changedBy(held: string, length: number): boolean {
    if (this.final || this.calls) return false;
    const closes = (scan: ValueScan) =>
      resumeValueEnd(held, { ...scan, at: scan.at - length }, held.length) >= 0;
    if (this.#whole && closes(this.#whole)) return true;
    if (this.#value) return closes(this.#value);
    if (this.#stopped) return false;
    // (the released text ends between values: an object may follow in the held text)
    const p = skipSpace(held, Math.max(0, this.#gap - length));
    return /^[\s,;]*\{/.test(held.slice(p, p + 64));
  }
}

/**
 * The released part of a message that a streaming watcher holds from a marker on, kept with what `runReaders`
 * learns from it (is the release point inside reasoning, where the answer began), so that asking whether a
 * call may begin after the release point reads a bounded window, not the whole text: asked at every marker
 * of a long answer that quotes markers in prose, reading the whole text each time was quadratic.
 *
 * The state is the reasoning walk of `runReaders` up to a settled point a little before the release point;
 * the window is a short stand-in for that state, then the real text from the settled point on. Where the
 * state is not yet settled (no answer text or only prose with no marker before the first hold, JSON at the
 * answer whose reading the held text may carry on) {@link ReleasedText.window} says so, and the caller reads
 * the whole text as before. JSON at the answer is read on as the text grows (see `AnswerJson`): until its
 * reader has read a value the walk goes on as after prose, then after the last value read.
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
   * until its reading starts (see `#jsonSettled`); `open` while it has read no value yet but may (the walk
   * goes on as after prose); `growing` while it has read values and the next may still be read, `done` once
   * none can (the walk goes on after the values read); `whole` when they are calls (the whole text is read).
   */
  #json: "no" | "pending" | "open" | "growing" | "done" | "whole" = "no";
  /** What `bareJson` reads at the answer, carried on as the released text grows. */
  #reading: AnswerJson | undefined;
  /**
   * The released text from `#leadBase` to `#base` in pieces, cut off the window's buffer while the answer's
   * JSON may still be read on, for its reader to slice (the buffer stays short: a long one is copied whole
   * when read, and so is a string that grew by appending).
   */
  #lead: string[] = [];
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
   * `held` is the text held after the released text (JSON at the answer that it may read on is read whole).
   */
  window(from: number, held = ""): { text: string; from: number } | undefined {
    if (this.#json === "whole" || from < 2 * CONTEXT) return undefined;
    this.#advance(from - CONTEXT);
    const json: string = this.#json; // (the walk may have changed it)
    if (json === "pending" || json === "whole" || this.#at > from) return undefined;
    // (JSON that the held text may read on is read as a whole by its reader: read the whole text then)
    if ((json === "open" || json === "growing") && this.#reading!.changedBy(held, this.length)) {
      return undefined;
    }
    let prefix: string;
    const open = this.#open;
    if (this.#answer === "final") {
      // (an answer of JSON that is no call stands as one: it turns off the reading of calls quoted in prose)
      const answer = json === "done" || json === "growing" ? JSON_ANSWER : ".";
      prefix = answer + (open ? open.token : this.#first ? AN_OPENING : CLOSED_BLOCK) + this.#lookBack();
    } else if (this.#answer === "leading") {
      // (white space after it: the answer has not begun, and the text before the window is reasoning)
      prefix = (open ? open.token : CLOSED_BLOCK) + " ".repeat(HEADER_BACK);
    } else return undefined;
    const text = prefix + this.#buf.slice(this.#at - this.#base);
    const keep = this.#at - HEADER_BACK - this.#base;
    if (keep > CONTEXT) {
      if (json === "open" || json === "growing") {
        if (this.#lead.length === 0) this.#leadBase = this.#base;
        this.#lead.push(this.#buf.slice(0, keep));
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
    this.#reading = undefined;
  }

  /** The released text from `from` to `to` (`from` at or after `#leadBase`). */
  #slice(from: number, to: number): string {
    const base = this.#base;
    if (from >= base) return this.#buf.slice(from - base, to - base);
    const parts: string[] = [];
    let end = base;
    for (let k = this.#lead.length - 1; k >= 0 && end > from; k--) {
      const piece = this.#lead[k];
      parts.push(piece.slice(Math.max(0, from - (end - piece.length))));
      end -= piece.length;
    }
    return (parts.reverse().join("") + this.#buf.slice(0, Math.max(0, to - base))).slice(0, to - from);
  }

  /** Puts the pieces cut off the buffer back in front of it (once: a value read reaches back before it). */
  #rewind(): void {
    if (this.#lead.length === 0) return;
    this.#buf = this.#lead.join("") + this.#buf;
    this.#base = this.#leadBase;
    this.#lead = [];
  }

  /**
   * Reads on the JSON that the answer, settled where that JSON starts, opens with, as `bareJson` reads it in
   * any longer text, and moves the walk with it: while it has read no value, the walk goes on as after prose;
   * once it has, the walk starts again after the last value read, as `runReaders` goes on after `bareJson`
   * (reasoning tokens inside the values are not taken: those the walk took before they were read are given
   * back). False once it reads calls (the whole text is read).
   */
  #jsonSettled(): boolean {
    const json = this.#json;
    if ((json !== "pending" && json !== "open" && json !== "growing") || this.#answer !== "final") {
      return true;
    }
    const reading = this.#reading ??= new AnswerJson(this.#i, this.#buf[this.#i - this.#base] === "[");
    if (reading.need < this.#base) this.#rewind();
    const before = reading.items > 0 ? reading.end : -1;
    reading.read(this.#buf, this.#base, (from, to) => this.#slice(from, to));
    if (reading.calls) {
      this.#json = "whole";
      this.#lead = [];
      return false;
    }
    if (reading.items === 0) this.#json = reading.final ? "no" : "open";
    else {
      this.#json = reading.final ? "done" : "growing";
      if (reading.end !== before) {
        if (reading.end < this.#base) this.#rewind();
        this.#open = undefined;
        this.#first = true;
        this.#pos = reading.end;
        this.#at = Math.min(this.#at, reading.end);
      }
    }
    if (reading.final) this.#lead = [];
    return true;
  }
}
