/**
 * Calls a model writes into streamed text: a watcher that releases prose at once and holds text from a
 * call marker on, the frame-level hold the stream gate runs it in, and the cut that removes written calls
 * from a text.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import "../_extract/text.ts";
import "../_extract/scan.ts";
import "../_common/pointer.ts";
import "../_common/measure.ts";
import "../_extract/literal.ts";
import "../_extract/json_calls.ts";
import "../_extract/readers/json.ts";
import "../_extract/typing.ts";
import "../_extract/readers/xml.ts";
import "../_extract/readers/tokens.ts";
import "../_extract/readers/python.ts";
import "../_extract/registry.ts";
import "./engines.ts";

import { normaliseCalls } from "../_validate/providers.ts";
import { type ExtractedToolCall, extractToolCalls } from "../_extract/extract.ts";
import { safeStringify } from "../_common/json.ts";
import { errorText, lazy } from "../_common/values.ts";
import { utf8Length } from "../_common/bytes.ts";
import {
  CALL_FENCE,
  CALL_OPENING_KEYS,
  CALL_START_MARKERS,
  callMayStart,
  callStartShapes,
  fenceMayHoldCalls,
  RECIPIENT_START,
  RECIPIENT_START_TAIL,
  SHAPE_TAIL_LIMIT,
  SHAPE_TAILS,
} from "../_extract/watch.ts";
import { ReleasedText } from "../_extract/released.ts";
import { PAIRS } from "../_extract/reasoning.ts";
import type { AssembledToolCall, StreamDialect } from "./calls.ts";
import {
  type AnswerReason,
  hasWords,
  type Held,
  opensWithCall,
  PARAGRAPH,
  paragraphLead,
  sharedStart,
  type StreamFlow,
  type TextChange,
  type TextEnding,
  type TextFrames,
  type TextLength,
  type TextPart,
} from "./dialects/shared.ts";

/** Every literal opening of a call that `extractToolCalls` reads, in any of its formats. */
const MARKERS: readonly string[] = CALL_START_MARKERS;
/** The markers by their first character, so the scan for them looks only where one may start. */
const markersByFirst: () => ReadonlyMap<string, readonly string[]> = lazy(() => {
  const map = new Map<string, string[]>();
  for (const m of MARKERS) map.set(m[0], [...(map.get(m[0]) ?? []), m]);
  return map;
});
/** A letter or digit: inside a word, a word-like marker cannot begin. */
const WORD = /^[\p{L}\p{N}_]$/u;
/** Held text re-asked at every piece below this length; past it, each time it has grown by half. */
const RECHECK_EVERY_PIECE = 512;

/**
 * How much of a message held for opening with JSON is read to tell a call from structured output (its first
 * key): reading the whole held text at every piece made a long streamed answer quadratic.
 */
const JSON_HEAD = 4096;
/**
 * For tests only: a hook each piece of text fed to a {@linkcode TextWatcher} is shown first, so a test can
 * make the watch throw as a bug in it would (no model output is known to).
 */
export const watchFault: { push?: (text: string) => void } = {};

/** The longest tail that can still grow into a marker, plus one (the markers are listed longest first). */
const LONGEST_MARKER: number = MARKERS[0].length + 1;
/** The markers that begin like a word (`functools`, `to=`): let out inside a word, see `TextWatcher`. */
const WORD_MARKERS: () => readonly string[] = lazy(() => MARKERS.filter((m) => WORD.test(m[0])));

/**
 * Watches the text of one streamed message for the start of a call written into it. Text before a marker is
 * released at once; from the marker on, text is held until the stream ends and the calls are judged. A tail
 * that could be the start of a marker (`<tool_`) is held until the next piece settles it.
 */
export class TextWatcher {
  /** Whether a message that opens with JSON is held (it may be a bare call). */
  readonly #json: boolean;
  /** The request's declared tools, for asking whether held text may still be a call. */
  readonly #tools: readonly unknown[] | undefined;
  /** The held length at which a marker's hold is asked again (so a long hold stays linear). */
  #recheckAt = 0;
  /** True while the hold began at a JSON opening rather than at a marker. */
  #openedJson = false;
  /** The first {@linkcode JSON_HEAD} code units of the held text (what `couldBeCall` reads of JSON). */
  #head = "";
  /** Set once the held JSON's first key is one a call opens with: `couldBeCall` need not read it again. */
  #callKey = false;
  #visible = "";
  /** The released text again, with its reasoning state: `callMayStart` then reads a window of it. */
  readonly #released = new ReleasedText();
  /** Whether released text holds anything but white space (kept here: reading `#visible` is quadratic). */
  #seenText = false;
  /** The last character released, or "". */
  #lastReleased = "";
  /** The end of the released text where a word-like marker may have begun (`#visible` is costly to read). */
  #releasedEnd = "";
  #held = "";
  #tail = "";
  /** A tail let out by {@linkcode TextWatcher.flushTail}: the next piece is read with it, in case the text goes on. */
  #flushed = "";
  /** How far before the released text's end the held text's markup starts (a marker begun in a flushed tail). */
  #lookBack = 0;
  #holding = false;
  /** Fences opened and closed in the released text; odd means inside a code block. */
  #fences = 0;
  /** Inside the language line of a fence opened in the released text (backticks there open no fence). */
  #languageLine = false;
  /**
   * Set once the answer began: text outside the reasoning blocks it opens with (`<think>...</think>`) that
   * is not white space. Until then a message may still open with JSON: the extractor reads the answer
   * after such reasoning as it reads a whole message.
   */
  #answerBegun = false;
  /** Inside a reasoning block the answer opens with: its closer. */
  #leadCloser: string | undefined;
  /** The end of the text read for `#leadStart` that may begin a reasoning token (`<thi`), or its closer. */
  #leadTail = "";

  /**
   * Creates a watcher. With `json: false` (a request that declares no tools), a message that opens with
   * JSON is prose like any other: structured output is never held for looking like a call.
   */
  constructor(options: { json?: boolean; tools?: readonly unknown[] } = {}) {
    this.#json = options.json ?? true;
    this.#tools = options.tools;
  }

  /** Feeds a piece of text; returns the part that may be shown now. */
  push(text: string): string {
    watchFault.push?.(text);
    if (this.#holding) {
      this.#held += text;
      if (this.#head.length < JSON_HEAD) this.#head += text.slice(0, JSON_HEAD - this.#head.length);
      return "";
    }
    const s = this.#tail + text;
    this.#tail = "";
    const flushed = this.#flushed;
    this.#flushed = "";
    if (flushed !== "" && text !== "" && this.#continuesMarker(flushed + s, flushed.length)) {
      // A tail let out at a frame that should have ended the text (a finish, a block's end), and the text
      // went on: the marker it began is held from here, and read with the tail the client has.
      this.#holdFrom(s, 0);
      this.#lookBack = flushed.length;
      return "";
    }
    const begun = this.#wordMarkerGoesOn(s);
    if (begun !== undefined) {
      // A word-like marker let out inside a word (`...checkfun`, see `#tailStart`) goes on here (`ctools[`):
      // the extractor reads it there all the same, so it is held from here, read with the part the client
      // has (as a flushed tail is), and `s` waits while it may still become one.
      if (!begun.whole) {
        this.#tail = s;
        return "";
      }
      this.#holdFrom(s, 0);
      this.#lookBack = begun.back;
      return "";
    }
    const lead = this.#answerBegun ? -1 : this.#leadStart(text, s);
    if (this.#json && !this.#seenText) {
      const opened = this.#opening(s);
      if (opened !== undefined) return opened;
    }
    if (
      this.#json && lead >= 0 && (lead > 0 || this.#seenText) && /^\s*(\{|\[\s*(\{|$))/.test(s.slice(lead))
    ) {
      // The answer opens with JSON after the reasoning it began with: held as a message that opens with it
      // (let out, a call's start glued to the call the judge read reached the client, where a body cuts it)
      this.#release(s.slice(0, lead));
      return s.slice(0, lead) + this.#opening(s.slice(lead))!;
    }
    const found = this.#findMarker(s);
    if (found.ambiguous) {
      // A cut-off shape may also end in what may become a marker (`]<]minimax[>[`): keep from the earlier.
      const cut = Math.min(found.cut, this.#tailStart(s));
      this.#tail = s.slice(cut);
      return this.#release(s.slice(0, cut));
    }
    const cut = found.cut;
    if (cut >= 0) return this.#holdFrom(s, cut);
    return this.#keepTail(s);
  }

  /**
   * Reads `text` (the end of `s`, the rest of which was read before) for where the answer begins: its offset
   * in `s`, or -1 while all of it is reasoning the answer opens with or white space (see `#answerBegun`).
   */
  #leadStart(text: string, s: string): number {
    const t = this.#leadTail + text;
    const base = s.length - t.length; // (where `t` starts in `s`; below 0 when the tail was let out)
    let i = 0;
    for (;;) {
      if (this.#leadCloser !== undefined) {
        const j = t.indexOf(this.#leadCloser, i);
        if (j < 0) {
          this.#leadTail = t.slice(Math.max(i, t.length - this.#leadCloser.length + 1));
          return -1;
        }
        i = j + this.#leadCloser.length;
        this.#leadCloser = undefined;
        continue;
      }
      while (i < t.length && /\s/.test(t[i])) i++;
      const rest = t.slice(i);
      const pair = PAIRS.find(([open]) => rest.startsWith(open));
      if (pair) {
        this.#leadCloser = pair[1];
        i += pair[0].length;
        continue;
      }
      if (rest === "" || PAIRS.some(([open]) => open.startsWith(rest))) {
        this.#leadTail = rest;
        return -1;
      }
      this.#answerBegun = true;
      this.#leadTail = "";
      return Math.max(0, base + i);
    }
  }

  /** Releases a held ambiguous tail (the stream moved on, so it cannot become a marker). */
  flushTail(): string {
    const t = this.#tail;
    this.#tail = "";
    if (t !== "") this.#flushed = t;
    return this.#release(t);
  }

  /** True once a marker was seen: everything after it is held. */
  get holding(): boolean {
    return this.#holding;
  }

  /**
   * False once the held text can no longer be a call: a message held for opening with JSON whose first
   * key is none a written call starts with (`{"city": ...}` is structured output, `{"name": ...}` may be
   * a call). Text held from a marker may always be one.
   */
  couldBeCall(): boolean {
    if (!this.#holding) return true;
    if (!this.#openedJson) return this.#markerMayBeCall();
    if (this.#callKey) return true;
    // (a head whose first key has not begun is white space: the message may still be a call)
    const m = /^\s*\[?\s*\{\s*/.exec(this.#head);
    if (!m) return false;
    const rest = this.#head.slice(m[0].length);
    if (rest === "") return true;
    if (rest[0] === "}") return false;
    if (rest[0] !== '"') return false;
    const key = /^"((?:[^"\\]|\\.)*)("?)/.exec(rest)!;
    if (key[2] === "") return CALL_OPENING_KEYS.some((k) => k.startsWith(key[1])); // the key is still arriving
    this.#callKey = CALL_OPENING_KEYS.includes(key[1]);
    return this.#callKey;
  }

  /**
   * Whether text held from a marker may still be a call, by `callMayStart` (a marker quoted in prose is
   * released once enough text follows it). Asked at every piece while the hold is short, then each time it
   * has grown by half.
   */
  #markerMayBeCall(): boolean {
    const held = this.#held.length;
    if (held < this.#recheckAt) return true;
    this.#recheckAt = held < RECHECK_EVERY_PIECE ? held + 1 : held + Math.ceil(held / 2);
    const from = this.#visible.length - this.#lookBack;
    const window = this.#released.window(from, this.#held);
    if (window) return callMayStart(window.text + this.#held, window.from, { tools: this.#tools }) !== -1;
    return callMayStart(this.#visible + this.#held, from, { tools: this.#tools }) !== -1;
  }

  /**
   * Whether a word-like marker whose start was let out at the end of the released text (inside a word,
   * where `#tailStart` lets it go) goes on in `s`: `whole` when `s` completes it, else while `s` may still;
   * `back`, how far before the released text's end it begins. Undefined when none does.
   */
  #wordMarkerGoesOn(s: string): { back: number; whole: boolean } | undefined {
    if (s === "") return undefined;
    const end = this.#releasedEnd;
    for (let back = end.length; back > 0; back--) {
      const begun = end.slice(end.length - back);
      for (const m of WORD_MARKERS()) {
        if (m.length <= back || !m.startsWith(begun)) continue;
        const rest = m.slice(back);
        if (s.startsWith(rest)) return { back, whole: true };
        if (rest.startsWith(s)) return { back, whole: false };
      }
    }
    return undefined;
  }

  /** Whether a marker or shape starts in the first `before` code units of `s`, or may still grow into one. */
  #continuesMarker(s: string, before: number): boolean {
    const byFirst = markersByFirst();
    for (let i = 0; i < before; i++) {
      if ((s[i] === "[" || s[i] === "{") && this.#shapeAt(s, i) !== "no") return true;
      if (
        byFirst.get(s[i])?.some((m) =>
          s.startsWith(m, i) || (m.length > s.length - i && m.startsWith(s.slice(i)))
        )
      ) {
        return true;
      }
    }
    return false;
  }

  /**
   * Gives up the hold: the held text is prose after all and counts as released. A message held for opening
   * with JSON that is no call (`{<tool_call>...`, `{"x": 1} <tool_call>...`) is held on from a marker in it, or
   * what may become one: releasing it all let the marker pass unwatched.
   */
  abandon(): void {
    if (!this.#holding) return;
    const held = this.#held;
    const json = this.#openedJson;
    this.#holding = false;
    this.#openedJson = false;
    this.#held = "";
    if (json) {
      // (after the opening itself: its first key showed it is no call)
      const rest = held.slice(1);
      const found = this.#findMarker(rest);
      const at = found.cut >= 0 ? found.cut : this.#tailStart(rest);
      if (at < rest.length) {
        this.#holdFrom(held, at + 1);
        return;
      }
    }
    this.#release(held);
  }

  /** Whether the text released so far holds anything but white space. */
  get hasText(): boolean {
    return this.#seenText;
  }

  /** Text released so far. */
  get visible(): string {
    return this.#visible;
  }

  /** Text held: from the marker on, plus any ambiguous tail. */
  get held(): string {
    return this.#holding ? this.#held : this.#tail;
  }

  #release(text: string): string {
    if (text === "") return text;
    this.#visible += text;
    this.#released.push(text);
    this.#seenText ||= /\S/.test(text);
    this.#lastReleased = text[text.length - 1];
    this.#releasedEnd = (text.length >= LONGEST_MARKER ? text : this.#releasedEnd + text).slice(
      2 - LONGEST_MARKER,
    );
    return text;
  }

  #holdFrom(s: string, at: number): string {
    this.#holding = true;
    this.#lookBack = 0;
    this.#recheckAt = 0;
    this.#held = s.slice(at);
    this.#head = this.#held.slice(0, JSON_HEAD);
    this.#callKey = false;
    return this.#release(s.slice(0, at));
  }

  /** A whole message that opens with JSON may be a bare call: hold it all. Undefined when it does not. */
  #opening(s: string): string | undefined {
    const first = s.search(/\S/);
    const second = first >= 0 ? s.slice(first + 1).search(/\S/) : -1;
    const opensArray = first >= 0 && s[first] === "[";
    if (opensArray && second < 0) {
      this.#tail = s.slice(first); // "[" alone: a call array or a list like "[1] ..."; the next piece tells
      return this.#release(s.slice(0, first));
    }
    if (first >= 0 && (s[first] === "{" || (opensArray && s[first + 1 + second] === "{"))) {
      this.#openedJson = true;
      return this.#holdFrom(s, first);
    }
    // Functionary v3.2 answers `NAME\n{...}` (its `>>>` was in the prompt): hold it; wait while it may become one.
    const rest = first >= 0 ? s.slice(first, first + SHAPE_TAIL_LIMIT + 1) : "";
    if (RECIPIENT_START.test(rest)) return this.#holdFrom(s, first);
    if (rest.length <= SHAPE_TAIL_LIMIT && RECIPIENT_START_TAIL.test(rest)) {
      this.#tail = s.slice(first);
      return this.#release(s.slice(0, first));
    }
    return undefined;
  }

  /**
   * Whether a call written as a shape opens at `i` (`[name(`, `{"name":`): `yes`, `maybe` when the end of
   * `s` cuts off what may still become one, else `no`. Only with declared tools: such calls must name one.
   */
  #shapeAt(s: string, i: number): "yes" | "maybe" | "no" {
    if (!this.#json) return "no";
    for (const re of callStartShapes()) {
      re.lastIndex = i;
      if (re.test(s)) return "yes";
    }
    if (s.length - i > SHAPE_TAIL_LIMIT) return "no";
    const rest = s.slice(i);
    return SHAPE_TAILS.some((re) => re.exec(rest)?.index === 0) ? "maybe" : "no";
  }

  /**
   * Where the first marker or shape in `s` starts (-1: none). `ambiguous` when it is a fence whose language
   * line has not arrived yet, or a shape the end of `s` cut off. Counts the fences of other code blocks on the way.
   */
  #findMarker(s: string): { cut: number; ambiguous: boolean } {
    const byFirst = markersByFirst();
    for (let i = 0; i < s.length; i++) {
      if (s[i] === "\n") this.#languageLine = false;
      if (s[i] === "[" || s[i] === "{") {
        const shape = this.#shapeAt(s, i);
        if (shape !== "no") return { cut: i, ambiguous: shape === "maybe" };
      }
      const candidates = byFirst.get(s[i]);
      if (candidates === undefined) continue;
      const m = candidates.find((m) => s.startsWith(m, i));
      if (m === undefined) continue;
      if (m !== "```") return { cut: i, ambiguous: false };
      // A fence: a closing one, or one for another language, is just text; so are backticks in the language
      // line of one (extraction reads the line whole).
      if (this.#languageLine) {
        i += 2;
        continue;
      }
      if (this.#fences % 2 === 0) {
        const nl = s.indexOf("\n", i + 3);
        // (a language line cut off by the end waits only while it may still name a call's language)
        if (nl < 0 && fenceMayHoldCalls(s.slice(i + 3, i + 68))) return { cut: i, ambiguous: true };
        if (nl >= 0 && CALL_FENCE.test(s.slice(i + 3, nl).trim())) return { cut: i, ambiguous: false };
        this.#languageLine = true;
      }
      this.#fences++;
      i += 2;
    }
    return { cut: -1, ambiguous: false };
  }

  /** Releases `s` but a tail that could still grow into a marker. */
  #keepTail(s: string): string {
    const at = this.#tailStart(s);
    this.#tail = s.slice(at);
    return this.#release(s.slice(0, at));
  }

  /** Where a tail of `s` that could still grow into a marker begins (`s.length` when none does). */
  #tailStart(s: string): number {
    for (let k = Math.min(s.length, LONGEST_MARKER); k > 0; k--) {
      const end = s.slice(s.length - k);
      // A word-like marker (`functools`, `to=`) is held back only from the start of a word, or every piece
      // ending in "t" or "f" would wait for the next one.
      if (WORD.test(end[0]) && WORD.test(s[s.length - k - 1] ?? this.#lastReleased)) continue;
      if (MARKERS.some((m) => m.length > k && m.startsWith(end))) return s.length - k;
    }
    return s.length;
  }
}

/** Creates a {@linkcode TextWatcher}. */
export function textWatcher(): TextWatcher {
  return new TextWatcher();
}

/**
 * Whether the calls for which `gone` is true can be cut while the others stay: no block of markup holds both
 * one that goes and one that stays (a JSON array of calls, one fence holding two cannot be parted without
 * rewriting what the model wrote). One look-up per call: comparing every pair was quadratic, and a model
 * can write thousands.
 */
export function blocksPart(calls: readonly ExtractedToolCall[], gone: (i: number) => boolean): boolean {
  const goes = new Map<number, boolean>(); // by block start
  for (let i = 0; i < calls.length; i++) {
    const before = goes.get(calls[i].block.start);
    if (before === undefined) goes.set(calls[i].block.start, gone(i));
    else if (before !== gone(i)) return false;
  }
  return true;
}

/**
 * Removes the markup of every call written into a text and tidies what follows the first: the text before
 * it stays as it came, white space and all, as a stream let it out before the call began (a body that
 * trimmed it read otherwise than the stream of the same answer); what follows is trimmed at its end, and at
 * its start where nothing was said before it. One text of {@linkcode cutJoined}, which says what `options`
 * change.
 */
export function cutCalls(
  text: string,
  calls: readonly ExtractedToolCall[] = extractToolCalls(text),
  options: CutOptions = {},
): string {
  return cutJoined([text], calls, options)[0];
}

/** Where {@linkcode cutJoined} begins to tidy, and whether words came before. */
export interface CutOptions {
  /**
   * Whether something was said before the text tidied (its start is then kept); default, whether the text
   * before it holds more than white space.
   */
  said?: boolean;
  /**
   * Where the tidying begins, in the joined text; default, at the first call cut. Earlier where a stream
   * held the text from an earlier call on (one kept beside those cut): it let out none of it, and tidies it.
   */
  from?: number;
}

/**
 * The texts of one answer's parts without the calls written into them, the calls read from the texts joined
 * as the stream's watch reads them: a call written across two parts is cut from both. `calls` (read from the
 * joined text) are the calls to cut, default every one. Tidied as one text, as the stream's watch holds it:
 * the text before the first call stays as it came (see `options.from`); after it, blank lines run together
 * within a part, and the white space at the end of the whole goes (and at its start where nothing was said
 * before, see `options.said`), not at the end of each part a call touched: a stream let that out with the
 * part, and the next part's first word ran into the word before it.
 *
 * @example A call cut inside the first of two parts
 * ```ts
 * import assert from "node:assert/strict";
 * import { cutJoined } from "./text_watch.ts";
 *
 * const call = `<tool_call>{"name": "search", "arguments": {}}</tool_call>`;
 * assert.deepEqual(cutJoined([`Let me ${call}check the `, "weather. "]), ["Let me check the ", "weather."]);
 * ```
 */
export function cutJoined(
  texts: readonly string[],
  calls: readonly ExtractedToolCall[] = extractToolCalls(texts.join("")),
  options: CutOptions = {},
): string[] {
  if (calls.length === 0) return [...texts];
  // The joined text kept after the first call: from it to the end, less the calls' blocks (several calls
  // in one block, or a block inside one cut before it, are skipped).
  const first = Math.min(options.from ?? Infinity, calls[0].block.start);
  const kept: [number, number][] = [];
  let at = first;
  for (const c of calls) {
    if (c.block.start < at) continue;
    if (c.block.start > at) kept.push([at, c.block.start]);
    at = c.block.end;
  }
  const total = texts.reduce((n, t) => n + t.length, 0);
  if (at < total) kept.push([at, total]);
  const before: string[] = [];
  const rest: string[] = [];
  let start = 0;
  let k = 0;
  for (const text of texts) {
    const end = start + text.length;
    before.push(text.slice(0, Math.max(0, Math.min(first, end) - start)));
    let piece = "";
    while (k < kept.length && kept[k][1] <= start) k++;
    for (let i = k; i < kept.length && kept[i][0] < end; i++) {
      piece += text.slice(Math.max(kept[i][0], start) - start, Math.min(kept[i][1], end) - start);
    }
    rest.push(piece.replace(/\n{3,}/g, "\n\n"));
    start = end;
  }
  if (!(options.said ?? before.some((b) => b.trim() !== ""))) {
    for (let i = 0; i < rest.length; i++) {
      rest[i] = rest[i].trimStart();
      if (rest[i] !== "") break;
    }
  }
  for (let i = rest.length - 1; i >= 0; i--) {
    rest[i] = rest[i].trimEnd();
    if (rest[i] !== "") break;
  }
  return texts.map((_, i) => before[i] + rest[i]);
}

/** A frame for the router: its exact text and its parsed event. */
export interface RoutedFrame {
  raw: string;
  event: Record<string, unknown>;
}

/**
 * The stream gate's watch over the text of one message (an OpenAI Chat choice, a Gemini candidate, Ollama's
 * message, the text blocks or items of an Anthropic, OpenAI Responses or Cohere message): runs each frame's
 * text through a {@linkcode TextWatcher}, holds the frames that arrive once text is held, and at the end
 * hands over the calls written into the held text for judging.
 *
 * Frames are held whole and released as they came wherever the watcher allows it: a frame whose text ends
 * in what may become a marker waits for the next one and then goes out untouched; a message held because
 * it opens with JSON is released byte for byte once its first key shows it is not a call. The frame in which
 * a marker starts after prose is held whole too, its prose with it: most such markers turn out to be no call
 * (a code fence), and the stream then passes byte for byte; a rejected call's reason follows that prose.
 */
export class TextCalls {
  readonly #watcher: TextWatcher;
  readonly #dialect: StreamDialect;
  readonly #tools: readonly unknown[] | undefined;
  readonly #frames: TextFrames;
  /** The answer watched (OpenAI Chat choice index, Gemini candidate position; 0 where a stream has one). */
  readonly #answer: number;
  /** Frames waiting because their text ends in what may become a marker, in stream order. */
  #queue: { frame: RoutedFrame; part: TextPart; at: number }[] = [];
  /** The length of the queued frames' wire text (bounded with the frames held). */
  #queuedSize = 0;
  /** Text the watcher released while its frames were queued. */
  #unsent = "";
  /** The calls written into the text, as read at the end (offsets into the whole message text). */
  #extracted: ExtractedToolCall[] = [];
  /** Prose held with the frames in which a marker started: sent ahead of a rejected call's reason. */
  #prose = "";
  /** Where the held frames' text starts in the message's text (the client has what comes before). */
  #heldFrom = 0;
  /** The length of the text of the frames watched. */
  #seen = 0;
  /** Set when the watch threw (see {@linkcode TextCalls.failure}). */
  #failure: string | undefined;

  /**
   * Watches the text `frames` carry; with `json`, a message that opens with JSON is held too. The request's
   * `tools` decide what counts as a call written without a marker, and type the values written as text.
   */
  constructor(
    dialect: StreamDialect,
    frames: TextFrames,
    options: { json: boolean; tools?: readonly unknown[]; answer?: number } = { json: true },
  ) {
    this.#dialect = dialect;
    this.#frames = frames;
    this.#answer = options.answer ?? 0;
    this.#watcher = new TextWatcher({ json: options.json, tools: options.tools });
    this.#tools = options.tools;
  }

  /**
   * Runs a frame's text through the watcher. Returns the frames to route as usual, in order: none when the
   * frame was held here, the frame itself, or frames that waited for it.
   */
  watch(raw: string, event: Record<string, unknown>, flow: StreamFlow): RoutedFrame[] {
    if (this.#failure !== undefined) {
      this.#holdUnwatched({ raw, event }, flow);
      return [];
    }
    const holding = this.#watcher.holding;
    const seen = this.#seen;
    try {
      return this.#watch(raw, event, flow);
    } catch (e) {
      return this.#fail(e, { holding, seen, frame: { raw, event } }, flow);
    }
  }

  /**
   * Where the watch failed (a bug: it throws on no text it is given), the reason; undefined while it works.
   * A failed watch holds the rest of its answer's frames, to be withheld ({@linkcode TextCalls.withhold}).
   */
  get failure(): string | undefined {
    return this.#failure;
  }

  /**
   * The watch threw on a frame: from there on its answer is held whole, unread, and ends withheld (with the
   * prose held with a marker). Returns the frames to route: those queued on an ambiguous tail when nothing
   * was held yet (their text was let out but a tail that may begin a marker, and nothing follows it now).
   */
  #fail(
    e: unknown,
    at: { holding: boolean; seen: number; frame?: RoutedFrame },
    flow: StreamFlow,
  ): RoutedFrame[] {
    this.#failure = errorText(e);
    this.#prose = "";
    const frame = at.frame;
    const held = frame !== undefined && flow.held.some((h) => h.event === frame.event);
    if (at.holding || held) {
      // The hold began before the throw: it knows where its text starts, and holds the frames since.
      if (frame && !held) this.#holdUnwatched(frame, flow);
      return [];
    }
    this.#heldFrom = at.seen;
    const out = this.#takeQueue();
    if (frame) this.#holdUnwatched(frame, flow);
    return out;
  }

  /** Holds a frame of a failed watch whole: its text is withheld, the rest of it kept (all, if unreadable). */
  #holdUnwatched(frame: RoutedFrame, flow: StreamFlow): void {
    let held: Held;
    try {
      held = this.#whole(frame, this.#frames.read(frame.event, this.#answer));
    } catch {
      held = { ...frame, tool: false, written: {} };
    }
    this.#hold(held, flow);
  }

  #watch(raw: string, event: Record<string, unknown>, flow: StreamFlow): RoutedFrame[] {
    const w = this.#watcher;
    const part = this.#frames.read(event, this.#answer);
    const at = this.#seen;
    this.#seen += part.text.length;
    if (w.holding) {
      w.push(part.text);
      this.#holdWhole({ raw, event }, part, at, flow);
      this.#maybeRelease(flow);
      return [];
    }
    if (part.text === "") {
      if (this.#queue.length === 0) return [{ raw, event }];
      // (a place's blank start waits for its own next text alone: a frame of none ends the wait, an empty
      // delta does not: let out with the blank, the client kept it where the body drops it with the call;
      // nor does one the text goes on after while a tail may begin a marker: ` <too`, then `l_call>` in
      // the next part, let `<too` out where the body, reading the parts joined, cut it with the call)
      if (!part.goesOn || (this.#blankStart() && part.delta !== true && w.held === "")) {
        w.flushTail(); // the stream moved on: the tail cannot become a marker
        return [...this.#takeQueue(), { raw, event }];
      }
      // The text may go on after this frame (an empty delta, a reasoning piece): the tail that may become a
      // marker (`<tool_`) waits on, the frame queued behind it, until the text shows what it is. Flushed
      // here, the marker's rest passed unwatched; held as a marker, each such tail asked `callMayStart` of
      // the whole text, quadratic in a message of many.
      this.#enqueue({ raw, event }, part, at);
      return [];
    }
    this.#unsent += w.push(part.text);
    this.#enqueue({ raw, event }, part, at);
    if (w.holding) {
      this.#startHold(flow);
      this.#maybeRelease(flow);
      return [];
    }
    if (w.held !== "") return []; // an ambiguous tail: wait for the next piece
    if (this.#blankStart()) return [];
    return this.#takeQueue();
  }

  /**
   * Whether the text let out since the queue began is white space alone that opens a place (an OpenAI
   * Responses part, an Anthropic block): it waits for the place's next text, as a message's start waits
   * where it may open with JSON. A call written right after it is then held from the place's start, and
   * the blank start goes with the call as a body drops it (see `placeReason`); let out in a frame of its
   * own, the client kept the space where the body, which cannot tell how the frames fell, had none.
   */
  #blankStart(): boolean {
    const from = this.#watcher.visible.length - this.#unsent.length;
    return this.#unsent !== "" && this.#unsent.trim() === "" && this.#frames.opens?.(from) === true;
  }

  /** The length of the message's text kept to read calls from (what text without end grows). */
  get size(): number {
    return this.#watcher.visible.length + this.#watcher.held.length;
  }

  /**
   * The length of the wire text of the frames waiting on an ambiguous tail: a tail (`<tool_`) followed by
   * frames of no text without end (pings, block ends and starts, reasoning) kept them all unbounded.
   */
  get queued(): number {
    return this.#queuedSize;
  }

  /** True while this watch holds frames (text from a marker on, or frames waiting on an ambiguous tail). */
  get holding(): boolean {
    return this.#failure !== undefined || this.#watcher.holding || this.#queue.length > 0;
  }

  /** The frames still waiting on an ambiguous tail, for the end of the stream (the tail is released). */
  drain(flow: StreamFlow): RoutedFrame[] {
    if (this.#failure !== undefined || this.#queue.length === 0 || this.#watcher.holding) return [];
    try {
      this.#watcher.flushTail();
    } catch (e) {
      return this.#fail(e, { holding: false, seen: this.#seen }, flow);
    }
    return this.#takeQueue();
  }

  /**
   * At the end of the stream: the calls written into the held text, to be judged (then call
   * {@linkcode TextCalls.conclude}). Undefined when there are none (the held text, if any, is released as
   * it came) or when the stream carried native calls.
   */
  settle(
    stream: { nativeCalls: number },
    flow: StreamFlow,
    route: (frame: RoutedFrame) => void,
  ): AssembledToolCall[] | undefined {
    const w = this.#watcher;
    if (this.#failure !== undefined || !w.holding) return undefined;
    let extracted: ExtractedToolCall[] = [];
    try {
      if (stream.nativeCalls === 0) extracted = extractToolCalls(w.visible + w.held, { tools: this.#tools });
    } catch (e) {
      this.#fail(e, { holding: true, seen: this.#seen }, flow);
      return undefined;
    }
    if (extracted.length === 0) {
      // Nothing to judge: the held frames go out as they came, in stream order. While a call is held they
      // stay in its place, held as any frame after a call (a client addresses content by position: text
      // sent ahead of the call items, or of its part's start, names an item or part it does not have yet).
      this.#prose = "";
      // (held while a call is: the router notes their text as it sends them, see `StreamFlow.lead`; a
      // finish for tool calls held here holds none, as where the only call came in a frame dropped)
      const callHeld = stream.nativeCalls > 0 || flow.held.some((h) => h.tool && !this.#owns(h));
      if (flow.pending && callHeld) {
        flow.setHeld(flow.held.map((h) => h.written && this.#owns(h) ? { ...h, written: undefined } : h));
        return undefined;
      }
      const own = flow.held.filter((h) => this.#owns(h));
      flow.setHeld(flow.held.filter((h) => !this.#owns(h)));
      // Routed as frames the watch never held are: the router notes their text, and ends the message as
      // it ends one that flowed (an Anthropic stop for tool use whose only call it dropped as malformed).
      for (const h of own) h.event ? route({ raw: h.raw, event: h.event }) : flow.send(h.raw);
      return undefined;
    }
    this.#extracted = extracted;
    return textCalls(extracted, this.#dialect, this.#answer);
  }

  /**
   * Whether the calls at positions `drop` can be cut from the held text while the others stay: each sits
   * in markup of its own (`<tool_call>` tags, a fence), held. Calls written into one block together (a JSON
   * array of calls, one fence holding two) cannot be parted without rewriting what the model wrote, so
   * their turn is withheld whole. So is a turn with a call whose start the client has (a tail let out where
   * the text seemed to end, `{"`): that start cannot be taken back, and beside calls that run it would stay
   * for the text after the cut to complete in a reader more lenient than the judge's (withheld, stricter,
   * it says why).
   */
  separable(drop: ReadonlySet<number>): boolean {
    const calls = this.#extracted;
    const from = this.#watcher.visible.length;
    return calls.every((c) => c.block.start >= from) && blocksPart(calls, (i) => drop.has(i)) &&
      !this.#joinsCalls(this.#heldWithout((i) => drop.has(i)), calls.length - drop.size);
  }

  /**
   * The held text without the calls for which `cut` is true (a call whose markup began in a tail the client
   * has: its held part goes). Only the calls the judge read, with the declared tools: read again without
   * them, JSON in prose naming no declared tool (`{"name": "Ada", "arguments": ...}`) was cut as a call, where
   * the body gate and the turn allowed keep it.
   */
  #heldWithout(cut: (i: number) => boolean): string {
    return this.#heldCut([this.#watcher.held], cut)[0];
  }

  /**
   * The held text, in `texts` (its pieces in order), without the calls for which `cut` is true, tidied as
   * {@linkcode cutJoined} tidies (see `#heldWithout`).
   */
  #heldCut(texts: readonly string[], cut: (i: number) => boolean): string[] {
    const from = this.#watcher.visible.length;
    const calls = this.#extracted;
    return cutJoined(
      texts,
      calls.filter((c, i) => cut(i) && c.block.end > from).map((c) => ({
        ...c,
        block: { start: Math.max(0, c.block.start - from), end: c.block.end - from },
      })),
      {
        // (what was said before: the client's text, else the held text before the first call, as a body
        // reads it; told only the client's, the text after a cut call lost its space where only held text
        // came before)
        said: this.#watcher.hasText || undefined,
        // (tidied from the first call on, a kept one too: held from there, none of it reached the client)
        from: Math.max(0, (calls[0]?.block.start ?? from) - from),
      },
    );
  }

  /**
   * Whether the client's text, once `rest` follows what it has, reads as more than `kept` calls past what
   * it has: a cut joins the text on either side of the call it removes, and `{"na` before a rejected call
   * and `me": ...` after it make one the judge never read.
   */
  #joinsCalls(rest: string, kept: number): boolean {
    const sent = this.#watcher.visible;
    const read = extractToolCalls(sent + rest, { tools: this.#tools });
    return read.filter((c) => c.block.end > sent.length).length > kept;
  }

  /**
   * Keeps the held frames as they came when the calls are allowed, else their rest and `reason`; with
   * `drop` (see {@linkcode TextCalls.separable}), the held text without only those calls, then `reason`.
   * The text goes where the held text began; where the dialect's text has places (`TextFrames.placed`),
   * what is kept past a frame of another kind goes in its own place after that frame, `reason` after it.
   */
  conclude(
    judgement: { allowed: boolean; reason: AnswerReason; drop?: ReadonlySet<number> },
    flow: StreamFlow,
  ): void {
    if (judgement.allowed) return;
    const drop = judgement.drop;
    // (the words telling of calls dropped beside these go first: see `#afterTold`)
    const reason = this.#afterTold(judgement.reason(this.#answer), flow);
    const cut = drop ? (i: number) => drop.has(i) : () => true;
    let stretches = this.#frames.placed ? this.#keptStretches(cut, flow) : [];
    let rest = stretches.length > 0 ? stretches.map((k) => k.kept).join("") : this.#heldWithout(cut);
    // Withheld whole: held text that joins what the client has into a call goes too (see `#joinsCalls`).
    if (!drop && this.#joinsCalls(rest, 0)) {
      rest = "";
      stretches = stretches.map((k) => ({ at: k.at, tail: k.prose, prose: k.prose, kept: "" }));
    }
    const later = stretches.slice(1).filter((k) => k.tail.trim() !== "");
    const call = this.#callStretch(stretches, cut);
    if (later.length === 0 && call === 0) {
      // (blank prose alone in its place, the call's: the reason takes the place, as a body writes it, see
      // `placeReason`; after it, a doubled blank line or a trailing space)
      const alone = rest === "" && this.#prose.trim() === "" && this.#frames.opens?.(this.#heldFrom) === true;
      const kept = (alone ? "" : this.#prose) + rest;
      const tail = kept + flow.lead(this.#answer, kept) + reason;
      flow.sawText(tail, this.#answer);
      return this.#rewrite([{ at: this.#heldFrom, tail }], flow);
    }
    // Text kept past a frame of another kind (a refusal, a reasoning item, the end of a block) goes in its
    // own place, after that frame, as a body keeps it: written where the held text began, it came before
    // what came ahead of it (so does prose held with the call that came in a place before the call's). The
    // reason ends the last of it from the first cut call's place on, else stands in that place, as a body
    // places it: written where the held text began (a tail that may begin a marker held the end of an
    // earlier place), it stood in a place the body gives none of it. A place left blank goes.
    const target = Math.max(call, stretches.findLastIndex((k, i) => i >= call && k.tail.trim() !== ""));
    // A place of white space alone before the call's stays, as a body keeps it (see `mayGoBlank`), unless
    // only such places stand between it and the call's, which opens with the call: however the frames fell
    // (the words before the call in a frame of their own let the blank place out, held with it they did not).
    // (held from an earlier call on, the words before this one are held text, not prose: read in the whole
    // text, as a body reads its blocks joined)
    let from = call;
    const w = this.#watcher;
    if (opensWithCall(w.visible + w.held, stretches[call].at, this.#extracted)) {
      while (from > 0 && stretches[from - 1].tail.trim() === "") from--;
    }
    const blank = new Set(stretches.slice(0, from).filter((k) => k.tail.trim() === ""));
    // (a paragraph of its own after the text the client keeps before it: see `placeReason`)
    const tail = stretches[target].tail;
    const kept = stretches.slice(0, target).filter((k) => hasWords(k.tail) || blank.has(k));
    stretches[target].tail = hasWords(tail)
      ? tail + paragraphLead(tail) + reason
      : flow.lead(this.#answer, kept.map((k) => k.tail).join("")) + reason;
    flow.sawText(stretches[target].tail, this.#answer);
    this.#rewrite(
      [stretches[0], ...stretches.slice(1).filter((k) => k.tail.trim() !== "" || blank.has(k))],
      flow,
      blank,
    );
  }

  /**
   * The stretch (see `#keptStretches`) in which the first call `cut` takes out begins: where a body puts
   * the reason (0 when it begins before them all).
   */
  #callStretch(stretches: readonly KeptStretch[], cut: (i: number) => boolean): number {
    const first = this.#extracted.find((_, i) => cut(i));
    if (!first) return 0;
    return Math.max(0, stretches.findLastIndex((k) => k.at <= first.block.start));
  }

  /**
   * Writes the `changes` in place of the held text (see `#cutHeld`, `#end`). Where the text has places,
   * the first goes among the held frames too, after the frames that came before its text (the start of its
   * place, held until text followed it), and the places the client would get no text in are dropped first
   * (`TextFrames.tidy`): a place of only a cut call was left empty, which a provider refuses sent back.
   * The places of the `blank` changes (white space alone) stay: the model's own, before the call's words.
   */
  #rewrite(
    changes: readonly TextChange[],
    flow: StreamFlow,
    blank: ReadonlySet<TextChange> = new Set(),
  ): void {
    const placed = this.#frames.placed === true;
    const written = changes.filter((c) => c.tail.trim() !== "" || blank.has(c));
    if (placed) this.#frames.tidy?.(flow, written.map((c) => c.at));
    const first = this.#cutHeld(flow, changes.slice(1), placed ? changes[0] : undefined);
    this.#end(changes, flow, first);
  }

  /**
   * The held text without the calls for which `cut` is true (as {@linkcode cutCalls} tidies it, the seams
   * and the ends), in stretches: a held frame of this answer without text (the end of a place, another
   * kind of output) starts a new one at the next frame with text, where that text opens a place (not after
   * a citation inside one, `TextFrames.opens`). Each stretch has where its text starts,
   * and its text: the prose held with the call that falls in it (`prose`, as it came), then what is kept of
   * the held text (`kept`). The prose counts: held with the call's frame, it may have begun in a place
   * before the call's, and written all where it began, the call's place was left empty. None when the
   * held text is in one stretch.
   */
  #keptStretches(cut: (i: number) => boolean, flow: StreamFlow): KeptStretch[] {
    const from = this.#watcher.visible.length;
    const held = this.#watcher.held;
    // (from where the hold began: the prose held with the call is told in its place, as the deltas told it)
    const proseFrom = this.#heldFrom;
    const starts: number[] = [];
    let text = false;
    let gap = false;
    for (const h of flow.held) {
      if (!this.#owns(h)) continue;
      const at = h.written?.at;
      if (at === undefined) {
        gap = text;
        continue;
      }
      // (a frame of no text inside a place, a citation, starts none: the text either side is one place's)
      const opens = this.#frames.opens?.(at) ?? true;
      if (gap && opens && at > proseFrom && at > (starts.at(-1) ?? proseFrom)) starts.push(at);
      text = true;
      gap = false;
    }
    if (starts.length === 0) return [];
    const bounds = [proseFrom, ...starts, from + held.length];
    const texts = bounds.slice(0, -1).map((at, k) =>
      held.slice(Math.max(at, from) - from, Math.max(bounds[k + 1], from) - from)
    );
    // (tidied as one text, as a body tidies its blocks: see `cutJoined`)
    const kept = this.#heldCut(texts, cut);
    const out = bounds.slice(0, -1).map((at, k) => {
      const prose = this.#prose.slice(
        Math.min(at, from) - proseFrom,
        Math.min(bounds[k + 1], from) - proseFrom,
      );
      return { at, tail: "", prose, kept: kept[k] };
    });
    for (const k of out) k.tail = k.prose + k.kept;
    return out;
  }

  /**
   * Where the watch failed ({@linkcode TextCalls.failure}): the held text is withheld, the rest of its
   * frames kept, and `reason` (when given) told in its place, as a rejected call's text ends.
   */
  withhold(reason: string | undefined, flow: StreamFlow): void {
    const said = reason === undefined ? undefined : this.#afterTold(reason, flow);
    this.#cutHeld(flow);
    const tail = said === undefined ? "" : (this.#heldFrom > 0 ? "\n\n" : "") + said;
    this.#end([{ at: this.#heldFrom, tail }], flow);
  }

  /**
   * `reason` led by the words a router put among the held frames to tell this answer of calls it dropped
   * (see `FrameRouter.tellDropped`), taken from the held frames: left where they were held, after the
   * call's text, the model read them after the reason, where onVerdict reports them ahead of it.
   */
  #afterTold(reason: string, flow: StreamFlow): string {
    const told = flow.held.filter((h) => h.told?.answer === this.#answer);
    if (told.length > 0) flow.setHeld(flow.held.filter((h) => h.told?.answer !== this.#answer));
    return [...told.map((h) => h.told!.reason), reason].join(PARAGRAPH);
  }

  /**
   * The held frames of this answer without their text: the rest of each kept, then, at the frame where
   * one of the `later` stretches starts, a frame with its text; with `first`, a frame with its text at the
   * first frame whose text is cut. Returns whether `first` was written so.
   */
  #cutHeld(flow: StreamFlow, later: readonly TextChange[] = [], first?: TextChange): boolean {
    const text = new Map(later.map((k) => [k.at, k.tail]));
    const kept: Held[] = [];
    let placed = first === undefined;
    for (const h of flow.held) {
      if (!h.written || !this.#owns(h)) kept.push(h);
      else {
        if (!placed) {
          placed = true;
          const raw = first!.tail === "" ? "" : this.#frames.textFrame(first!.tail, this.#answer, first!.at);
          if (raw !== "") kept.push({ raw, tool: false, answer: this.#answer });
        }
        if (h.written.rest) kept.push({ ...h.written.rest, answer: this.#answer });
        const tail = h.written.at === undefined ? undefined : text.get(h.written.at);
        if (tail === undefined) continue;
        const raw = this.#frames.textFrame(tail, this.#answer, h.written.at!);
        if (raw !== "") kept.push({ raw, tool: false, answer: this.#answer });
      }
    }
    flow.setHeld(kept);
    return first !== undefined && placed;
  }

  /**
   * Sends the first change's tail where the held text began, unless it is `sent` among the held frames
   * (the others are, see `#cutHeld`), and has frames that repeat the text tell it as changed.
   */
  #end(changes: readonly TextChange[], flow: StreamFlow, sent = false): void {
    const retell = this.#frames.retell;
    if (retell) {
      // Frames that repeat the text (a final snapshot) tell it as the client now has it.
      // (a frame of text the gate cut, an annotation, goes with it)
      const kept = { answer: this.#answer, kept: this.#keptAhead(changes), ahead: flow.ahead(this.#answer) };
      flow.setHeld(flow.held.flatMap((h) => {
        if (!h.event || !this.#owns(h)) return [h];
        const told = retell(h.event, changes, kept);
        if (!told) return [];
        return told === h.event
          ? [h]
          : [{ ...h, raw: this.#frames.frame(told, { raw: h.raw, event: h.event }), event: told }];
      }));
    }
    const [first] = changes;
    if (!sent && first.tail !== "") flow.send(this.#frames.textFrame(first.tail, this.#answer, first.at));
  }

  /**
   * How much of the answer's text the client keeps where it was once the text from the first change's `at`
   * on is the changes' tails: the text before it, and as much of the held text as the tails begin with
   * (as `citingKept` reads a body's text), in UTF-16 units and in UTF-8 bytes (Gemini's offsets).
   */
  #keptAhead(changes: readonly TextChange[]): TextLength {
    const at = changes[0].at;
    const w = this.#watcher;
    // (the prose held with the call was released into the visible text: the held frames carry it)
    const from = w.visible.length;
    const was = at < from ? w.visible.slice(at) + w.held : w.held.slice(at - from);
    const chars = at + sharedStart(was, changes.map((c) => c.tail).join(""));
    const bytes = chars <= from
      ? utf8Length(w.visible.slice(0, chars))
      : utf8Length(w.visible) + utf8Length(w.held.slice(0, chars - from));
    return { chars, bytes };
  }

  /**
   * When a retry's stream takes the place of the held frames: the frames that give the client the prose
   * held with them (which it has not seen), and where the retry continues, as the dialect ends the text
   * there (see `TextFrames.resume`).
   */
  retryEnding(): TextEnding {
    const change = { at: this.#heldFrom, tail: this.#prose };
    const texts = [{ answer: this.#answer, text: change.tail }];
    const ending = this.#frames.resume?.(change);
    // (the dialect's, where its frames give the client other text: a place of white space alone that goes)
    if (ending) return { texts, ...ending };
    const frames = change.tail === "" ? "" : this.#frames.textFrame(change.tail, this.#answer, change.at);
    return { frames, texts };
  }

  /** Queues a frame behind an ambiguous tail. */
  #enqueue(frame: RoutedFrame, part: TextPart, at: number): void {
    this.#queue.push({ frame, part, at });
    this.#queuedSize += frame.raw.length;
  }

  /** The queued frames, emptied. */
  #takeQueue(): RoutedFrame[] {
    const out = this.#queue.map((q) => q.frame);
    this.#queue = [];
    this.#queuedSize = 0;
    this.#unsent = "";
    return out;
  }

  /**
   * A marker (or a JSON opening) was found in the queued text: the queued frames are held whole, the
   * prose before the marker with them, white space too: let out in a frame of its own, it reached the
   * client, and a body keeps the text before a call as it came (see `cutCalls`).
   */
  #startHold(flow: StreamFlow): void {
    const queue = this.#queue;
    // (where text has places, blank prose would leave a block of white space alone, which Anthropic
    // refuses sent back: it goes with the call, as a body drops a block the cut left blank)
    this.#prose = this.#unsent;
    this.#heldFrom = this.#watcher.visible.length - this.#unsent.length;
    if (this.#prose.trim() !== "") this.#frames.said?.(flow);
    this.#queue = [];
    this.#queuedSize = 0;
    this.#unsent = "";
    for (const q of queue) this.#holdWhole(q.frame, q.part, q.at, flow);
  }

  /** Holds a frame as it came; on rejection its text is cut and the rest of it kept. */
  #holdWhole(frame: RoutedFrame, part: TextPart, at: number, flow: StreamFlow): void {
    this.#hold(this.#whole(frame, part, at), flow);
  }

  /**
   * A frame to hold as it came, with what is left of it once its text is cut, and where its text starts in
   * the answer's text (`at`).
   */
  #whole(frame: RoutedFrame, part: TextPart, at?: number): Held {
    const held: Held = { raw: frame.raw, event: frame.event, tool: part.toolish };
    if (part.text !== "") {
      const rest = part.rest();
      held.written = rest
        ? { rest: { raw: this.#frames.frame(rest, frame), event: rest, tool: part.toolish }, at }
        : { at };
    }
    return held;
  }

  /** Releases the held text as it came once it can no longer become a call (and no call is pending). */
  #maybeRelease(flow: StreamFlow): void {
    const w = this.#watcher;
    if (flow.pending || w.couldBeCall()) return;
    w.abandon();
    if (w.holding) {
      // JSON that is no call, then what may be one: the frames stay held, the JSON is prose held with them.
      const prose = w.visible.slice(this.#heldFrom);
      this.#prose = prose;
      return this.#maybeRelease(flow);
    }
    this.#prose = "";
    flow.sawText(this.#heldText(), this.#answer);
    // Only this answer's frames: another answer's watch may be holding a call of its own.
    for (const h of flow.held) if (this.#owns(h)) flow.send(h.raw);
    flow.setHeld(flow.held.filter((h) => !this.#owns(h)));
  }

  /** The text of the frames held, from where the hold began (the prose held with a marker, then the held text). */
  #heldText(): string {
    const w = this.#watcher;
    return (w.visible + w.held).slice(this.#heldFrom);
  }

  /** Holds a frame that arrived while text is held, keeping stream order. */
  #hold(frame: Held, flow: StreamFlow): void {
    if (frame.tool) flow.pending = true;
    flow.hold({ ...frame, answer: this.#answer });
  }

  /** True when this watch held the frame. */
  #owns(frame: Held): boolean {
    return frame.answer === this.#answer;
  }
}

/**
 * The watches over the text of every answer a stream carries (OpenAI Chat `n`: one per choice index; Gemini:
 * one per candidate position, as its clients read; one where a stream carries one message), with the face
 * of one {@linkcode TextCalls}: a call written into the text of any answer is held and judged, not only one
 * written into the first.
 *
 * A frame that carries parts of several answers is first split into one frame per answer (OpenAI sends one
 * choice per chunk, so recorded streams pass as they came); each frame then goes through the watches of
 * the answers it carries a part of, and a frame of none (the usage) through the first answer's (as with one
 * message; going through every watch would cost each such frame one step per answer seen).
 */
export class TextWatches {
  readonly #dialect: StreamDialect;
  readonly #frames: TextFrames;
  readonly #options: { json: boolean; tools?: readonly unknown[] };
  readonly #watches = new Map<number, TextCalls>();
  readonly #answersOf = new WeakMap<Record<string, unknown>, ReadonlySet<number>>();
  /** The calls each watch found at the end, in the order of {@linkcode TextWatches.settle}'s list. */
  #found: { watch: TextCalls; count: number }[] = [];
  /** The answers whose watch holds frames, as left by the last frame each watched. */
  readonly #holders = new Set<number>();
  /** Frames of no answer (the usage) waiting behind the frames another answer's watch holds. */
  #deferred: RoutedFrame[] = [];
  /** The length of their wire text. */
  #deferredSize = 0;

  /** Watches the text `frames` carry, with the options of {@linkcode TextCalls}. */
  constructor(
    dialect: StreamDialect,
    frames: TextFrames,
    options: { json: boolean; tools?: readonly unknown[] } = { json: true },
  ) {
    this.#dialect = dialect;
    this.#frames = frames;
    this.#options = options;
  }

  /**
   * Runs a frame through the watches of its answers and hands `route` the frames to route, in order (see
   * `TextCalls.watch`). A frame split in pieces has each piece's frames routed before the next piece is
   * watched: a piece the watch holds must not overtake one the router holds (the start of its part).
   */
  watch(
    raw: string,
    event: Record<string, unknown>,
    flow: StreamFlow,
    route: (frame: RoutedFrame) => void,
  ): void {
    const agreed = this.#frames.agree?.(event);
    if (agreed) ({ raw, event } = { raw: this.#frames.frame(agreed, { raw, event }), event: agreed });
    const pieces = this.#pieces(event);
    if (!pieces) {
      for (const f of this.#through({ raw, event }, flow)) route(f);
      return;
    }
    const from = { raw, event };
    for (const piece of pieces) {
      for (const f of this.#through({ raw: this.#frames.frame(piece, from), event: piece }, flow)) route(f);
    }
  }

  /**
   * The frame in pieces, or undefined to watch it whole: one per answer whenever it carries parts of two or
   * more (any part: one answer's watch that holds the frame holds the others' parts with it, unread), each
   * then as the dialect splits a frame of one answer (`TextFrames.split`).
   */
  #pieces(event: Record<string, unknown>): Record<string, unknown>[] | undefined {
    const answers = this.#frames.answers?.(event) ?? [];
    const one = this.#frames.answerFrame;
    if (answers.length < 2 || !one) return this.#frames.split?.(event);
    const last = answers.length - 1;
    return answers.flatMap((answer, i) => {
      const piece = one(event, answer, { first: i === 0, last: i === last });
      return this.#frames.split?.(piece) ?? [piece];
    });
  }

  /**
   * The length of the wire text of the frames waiting here, not held in the flow: those queued on an
   * ambiguous tail (see {@linkcode TextCalls.queued}) and those of no answer deferred behind them.
   */
  get queued(): number {
    let size = this.#deferredSize;
    for (const w of this.#watches.values()) size += w.queued;
    return size;
  }

  /** The length of the text kept to read calls from, over every answer. */
  get size(): number {
    let size = this.#frames.size?.() ?? 0;
    for (const w of this.#watches.values()) size += w.size;
    return size;
  }

  /**
   * At the end of the stream: routes the frames still waiting on an ambiguous tail, then the frames of no
   * answer that waited behind them (held after the frames a watch still holds, to go out after them).
   */
  drain(flow: StreamFlow, route: (frame: RoutedFrame) => void): void {
    for (const f of this.#ordered().flatMap((w) => w.drain(flow))) route(f);
    for (const [answer, watch] of this.#watches) if (!watch.holding) this.#holders.delete(answer);
    const waiting = this.#deferred;
    this.#deferred = [];
    this.#deferredSize = 0;
    for (const f of waiting) {
      if (this.#othersHold()) flow.hold({ raw: f.raw, event: f.event, tool: false });
      else for (const g of this.#through(f, flow)) route(g);
    }
  }

  /**
   * At the end of the stream: the calls written into the held text of every answer whose own message
   * carried no native call (`nativeAnswers`), to be judged (then call {@linkcode TextWatches.conclude});
   * undefined when there are none.
   */
  settle(
    stream: { nativeAnswers: ReadonlySet<number> },
    flow: StreamFlow,
    route: (frame: RoutedFrame) => void,
  ): AssembledToolCall[] | undefined {
    const out: AssembledToolCall[] = [];
    this.#found = [];
    for (const [answer, watch] of this.#sorted()) {
      const nativeCalls = stream.nativeAnswers.has(answer) ? 1 : 0;
      const calls = watch.settle({ nativeCalls }, flow, route) ?? [];
      this.#found.push({ watch, count: calls.length });
      out.push(...calls);
    }
    return out.length > 0 ? out : undefined;
  }

  /**
   * When a retry's stream takes the place of the held frames: see {@linkcode TextCalls.retryEnding}, over
   * the answers whose watch found calls (the first that says where the retry continues says it).
   */
  retryEnding(): TextEnding {
    const endings = this.#found.filter((f) => f.count > 0).map((f) => f.watch.retryEnding());
    return {
      frames: endings.map((e) => e.frames).join(""),
      point: endings.find((e) => e.point !== undefined)?.point,
      texts: endings.flatMap((e) => e.texts ?? []),
    };
  }

  /** Where an answer's watch failed, the first such failure (see {@linkcode TextCalls.failure}). */
  get failure(): string | undefined {
    for (const watch of this.#watches.values()) if (watch.failure !== undefined) return watch.failure;
    return undefined;
  }

  /**
   * Where a watch failed: the held text of every answer that holds some is withheld and `reason` told in
   * its place (see {@linkcode TextCalls.withhold}); the calls it may hold go unjudged, as with a failed judge.
   * The answers in `quiet` have their text withheld with no reason told (their router tells it). Returns the
   * answers told.
   */
  withhold(reason: string, flow: StreamFlow, quiet: ReadonlySet<number> = new Set()): ReadonlySet<number> {
    const withheld = new Set<number>();
    for (const [answer, watch] of this.#sorted()) {
      if (!watch.holding) continue;
      watch.withhold(quiet.has(answer) ? undefined : reason, flow);
      if (!quiet.has(answer)) withheld.add(answer);
    }
    return withheld;
  }

  /** The answers whose watch holds text (see {@linkcode TextWatches.withhold}). */
  holding(): ReadonlySet<number> {
    return new Set([...this.#watches].flatMap(([answer, watch]) => watch.holding ? [answer] : []));
  }

  /** Whether the calls at positions `drop` (in `settle`'s list) can be cut while the others stay. */
  separable(drop: ReadonlySet<number>): boolean {
    return this.#local(drop).every(({ watch, drop }) => watch.separable(drop));
  }

  /**
   * Concludes every answer's watch: as {@linkcode TextCalls.conclude}; with `drop`, only the answers that
   * lose a call are rewritten (the others keep their text as it came).
   */
  conclude(
    judgement: { allowed: boolean; reason: AnswerReason; drop?: ReadonlySet<number> },
    flow: StreamFlow,
  ): void {
    if (judgement.allowed) return;
    for (const { watch, drop, count } of this.#local(judgement.drop ?? new Set())) {
      if (count === 0) continue;
      if (judgement.drop === undefined) watch.conclude(judgement, flow);
      else if (drop.size > 0) watch.conclude({ ...judgement, drop }, flow);
    }
  }

  /** `drop` (positions in the list `settle` returned) per watch, as positions in its own calls. */
  #local(drop: ReadonlySet<number>): { watch: TextCalls; drop: Set<number>; count: number }[] {
    let at = 0;
    return this.#found.map(({ watch, count }) => {
      const own = new Set<number>();
      for (let i = 0; i < count; i++) if (drop.has(at + i)) own.add(i);
      at += count;
      return { watch, drop: own, count };
    });
  }

  /**
   * Passes a frame through the watch of each answer it carries a part of (answer 0's: a frame of none). A
   * frame of none (the usage) waits while another answer's watch holds frames, and goes once they went:
   * let out ahead of them, it overtook that answer's text, and their `"usage": null` then blanked the usage
   * in the openai SDK's final completion.
   */
  #through(frame: RoutedFrame, flow: StreamFlow): RoutedFrame[] {
    const answers = this.#answers(frame.event);
    if (answers === NONE && (this.#deferred.length > 0 || this.#othersHold())) {
      this.#deferred.push(frame);
      this.#deferredSize += frame.raw.length;
      return [];
    }
    let frames = [frame];
    for (const answer of [...answers].sort((a, b) => a - b)) {
      const watch = this.#watch(answer);
      // Frames another watch let out (those it queued) belong to its answer: they pass this one.
      frames = frames.flatMap((f) =>
        this.#concerns(f.event, answer) ? watch.watch(f.raw, f.event, flow) : [f]
      );
      if (watch.holding) this.#holders.add(answer);
      else this.#holders.delete(answer);
    }
    if (this.#deferred.length > 0 && !this.#othersHold()) {
      const waiting = this.#deferred;
      this.#deferred = [];
      this.#deferredSize = 0;
      for (const f of waiting) frames.push(...this.#through(f, flow));
    }
    return frames;
  }

  /** True while the watch of an answer other than 0 holds frames (answer 0's holds a frame of none itself). */
  #othersHold(): boolean {
    return this.#holders.size > (this.#holders.has(0) ? 1 : 0);
  }

  /** True when a frame carries a part of `answer`. */
  #concerns(event: Record<string, unknown>, answer: number): boolean {
    return this.#answers(event).has(answer);
  }

  /** The answers a frame carries a part of (answer 0 for a frame of none), read once per frame. */
  #answers(event: Record<string, unknown>): ReadonlySet<number> {
    let answers = this.#answersOf.get(event);
    if (!answers) {
      const read = this.#frames.answers?.(event) ?? [];
      answers = read.length > 0 ? new Set(read) : NONE;
      this.#answersOf.set(event, answers);
    }
    return answers;
  }

  #watch(answer: number): TextCalls {
    let watch = this.#watches.get(answer);
    if (!watch) {
      watch = new TextCalls(this.#dialect, this.#frames, { ...this.#options, answer });
      this.#watches.set(answer, watch);
    }
    return watch;
  }

  #sorted(): [number, TextCalls][] {
    return [...this.#watches].sort(([a], [b]) => a - b);
  }

  #ordered(): TextCalls[] {
    return this.#sorted().map(([, w]) => w);
  }
}

/** A stretch of the kept text of a rejected call's held frames (see `TextCalls.#keptStretches`). */
interface KeptStretch extends TextChange {
  /** The prose held with the call that falls in this stretch, as it came. */
  prose: string;
  /** What is kept of the held text in this stretch, tidied. */
  kept: string;
}

/** The answers of a frame that carries a part of none: answer 0's watch reads it. */
const NONE: ReadonlySet<number> = new Set([0]);

/**
 * Turns calls recovered from one answer's text into assembled calls, with the validator's synthetic ids: what
 * a stream judges, and a body too (so the two read one answer alike).
 */
export function textCalls(
  extracted: ExtractedToolCall[],
  dialect: StreamDialect,
  answer: number,
): AssembledToolCall[] {
  const ids = normaliseCalls(extracted.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })));
  return extracted.map((c, i) => ({
    id: ids[i]?.id ?? c.id ?? "",
    syntheticId: c.id === undefined,
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : safeStringify(c.arguments),
    dialect,
    choice: answer,
    slot: i,
  }));
}
