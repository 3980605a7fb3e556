/**
 * Where a message reasons before it answers. A call quoted inside a closed reasoning block is the model
 * thinking about a call, not making one, so the readers skip those blocks.
 *
 * - A block is an opening tag and its closing tag: `<think>...</think>`, `[THINK]...[/THINK]`,
 *   `<|START_THINKING|>...<|END_THINKING|>`, Gemma's `<|channel>...<channel|>`, harmony's analysis messages
 *   (`<|channel|>analysis<|message|>...<|end|>` with no recipient), and the other spellings in `PAIRS`.
 * - A closing tag with no opening tag before it closes a block that began at the start of the text: the chat
 *   template put the opening tag in the prompt (Qwen3, DeepSeek R1, GLM, Command R7B, Apriel's
 *   `[BEGIN FINAL RESPONSE]`).
 * - Only tags outside call markup count: the scan walks tags and calls in one pass and never looks for tags
 *   inside a call it read (`"cmd": "echo </think>"` is data).
 * - An opening tag that never closes leaves the rest of the text in an unclosed block. Calls found there are
 *   still returned (with a `call_in_unclosed_reasoning` finding): the text may have been cut off, and a
 *   client that does not understand reasoning would run them, so the gate must see them.
 *
 * @module
 */
import { escapeRegExp, lazy } from "../_common/values.ts";
import { type Finder, makeSeeker, type Seeker } from "./text.ts";

/** Opening and closing spellings of reasoning blocks. */
export const PAIRS: readonly (readonly [open: string, close: string])[] = [
  ["<think>", "</think>"],
  ["<thinking>", "</thinking>"],
  ["<seed:think>", "</seed:think>"],
  ["<mm:think>", "</mm:think>"],
  ["[THINK]", "[/THINK]"],
  ["<|START_THINKING|>", "<|END_THINKING|>"],
  ["<|channel>", "<channel|>"],
  ["\u25c1think\u25b7", "\u25c1/think\u25b7"],
  ["<|begin_of_thought|>", "<|end_of_thought|>"],
  ["<|open|>think<|sep|>", "<|close|>think<|sep|>"], // Kimi K3 (XTML)
];

/** Closing spellings that also end reasoning begun in the prompt, beyond the closers of `PAIRS`. */
const LONE_CLOSERS: readonly string[] = ["[BEGIN FINAL RESPONSE]"];

const HARMONY_ANALYSIS = /<\|channel\|>analysis(?:\s*<\|constrain\|>\s*\w+)?\s*<\|message\|>/y;
/** The tokens that end a harmony message: `<|end|>` belongs to it, the others begin what follows. */
export const HARMONY_ENDS: readonly string[] = ["<|end|>", "<|start|>", "<|return|>", "<|call|>"];

/** One piece of reasoning found by a {@link ReasoningWalker}. */
export interface ReasoningSpan {
  /**
   * `block`: an opening tag and its closer, `[start, end)`. `lone`: a closing tag with no opening before it,
   * `[start, end)` being the tag itself (the prompt opened the block). `unclosed`: an opening tag that never
   * closes, at `start` (`end` is the end of the text).
   */
  kind: "block" | "lone" | "unclosed";
  start: number;
  end: number;
}

/** Every reasoning token in one expression, each opener's closer, and the closers: made on first use. */
export const tokens: () => { re: RegExp; closerOf: Map<string, string>; closers: Set<string> } = lazy(() => {
  const all = [...PAIRS.flat(), ...LONE_CLOSERS, "<|channel|>analysis"];
  return {
    // One for every walker: each sets `lastIndex` just before its `exec`, and none is left between the two.
    re: new RegExp([...new Set(all)].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"), "g"),
    closerOf: new Map<string, string>(PAIRS.map(([o, c]) => [o, c])),
    closers: new Set<string>([...PAIRS.map(([, c]) => c), ...LONE_CLOSERS]),
  };
});

/**
 * Walks the reasoning tokens of one text in order. The caller (the scan) asks from where it stands, so a
 * token inside call markup the scan consumed (`"cmd": "echo </think>"`) is never seen: only tags that lie
 * outside call markup are reasoning. Linear over the whole walk: a token found ahead is remembered until the
 * caller passes it, and end tokens are found with a {@link Finder}.
 */
export class ReasoningWalker {
  readonly #text: string;
  readonly #seek: Seeker;
  readonly #find: Finder;
  /** No reasoning token has been taken yet (a closing tag is lone only then). */
  #first = true;

  /** @param find `text.indexOf`, remembered per needle (the scan's finder). */
  constructor(text: string, find: Finder) {
    this.#text = text;
    this.#seek = makeSeeker(text, tokens().re);
    this.#find = find;
  }

  /** Where the next reasoning token at or after `from` begins (`Infinity` when none), without taking it. */
  peek(from: number): number {
    const t = this.#seek(from);
    return t ? t.at : Infinity;
  }

  /**
   * Takes the reasoning token at or after `from` and returns its span; `undefined` when the token there is
   * not reasoning (a harmony analysis header with a recipient, a closing tag after other reasoning), in which
   * case the caller goes on past it.
   */
  take(from: number): ReasoningSpan | undefined {
    const t = this.#seek(from);
    if (!t) return undefined;
    const { at, match: token } = t;
    const { closerOf, closers } = tokens();
    if (token === "<|channel|>analysis") {
      const span = harmonyAnalysis(this.#text, at, this.#find);
      if (!span) return undefined;
      this.#first = false;
      return span.end < 0
        ? { kind: "unclosed", start: at, end: this.#text.length }
        : { kind: "block", start: at, end: span.end };
    }
    const wasFirst = this.#first;
    this.#first = false;
    const closer = closerOf.get(token);
    if (closer !== undefined) {
      const end = this.#find(closer, at + token.length);
      return end < 0
        ? { kind: "unclosed", start: at, end: this.#text.length }
        : { kind: "block", start: at, end: end + closer.length };
    }
    if (closers.has(token) && wasFirst) return { kind: "lone", start: at, end: at + token.length };
    return undefined;
  }
}

/**
 * Where the body of a harmony analysis message whose header starts at `at` begins; undefined when the header
 * is none, or names a recipient (the message is then a call, not reasoning).
 */
export function harmonyBody(text: string, at: number): number | undefined {
  HARMONY_ANALYSIS.lastIndex = at;
  const m = HARMONY_ANALYSIS.exec(text);
  if (!m) return undefined;
  // A recipient earlier in the same header (`<|start|>assistant to=functions.f<|channel|>analysis`) makes
  // this message a call, not reasoning.
  const headerFrom = Math.max(0, at - 256);
  const before = text.slice(headerFrom, at);
  const cut = Math.max(...HARMONY_ENDS.map((e) => before.lastIndexOf(e)));
  if (/\bto=/.test(cut >= 0 ? before.slice(cut) : before)) return undefined;
  return at + m[0].length;
}

/** A harmony analysis message at `at` (no recipient): its end, `-1` when it runs to the end; else undefined. */
function harmonyAnalysis(text: string, at: number, find: Finder): { end: number } | undefined {
  const bodyStart = harmonyBody(text, at);
  if (bodyStart === undefined) return undefined;
  let end = -1;
  let endToken = "";
  for (const e of HARMONY_ENDS) {
    const i = find(e, bodyStart);
    if (i >= 0 && (end < 0 || i < end)) {
      end = i;
      endToken = e;
    }
  }
  // `<|end|>` belongs to the message; a following `<|start|>` begins the next one.
  return { end: endToken === "<|end|>" ? end + endToken.length : end };
}
