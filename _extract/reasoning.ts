/**
 * Where a message reasons before it answers. A call quoted inside a closed reasoning block is the model
 * thinking about a call, not making one, so the readers skip those blocks.
 *
 * - A block is an opening tag and its closing tag: `<think>…</think>`, `[THINK]…[/THINK]`,
 *   `<|START_THINKING|>…<|END_THINKING|>`, Gemma's `<|channel>…<channel|>`, harmony's analysis messages
 *   (`<|channel|>analysis<|message|>…<|end|>` with no recipient), and the other spellings in `PAIRS`.
 * - A closing tag with no opening tag before it closes a block that began at the start of the text: the chat
 *   template put the opening tag in the prompt (Qwen3, DeepSeek R1, GLM, Command R7B, Apriel's
 *   `[BEGIN FINAL RESPONSE]`).
 * - An opening tag that never closes leaves the rest of the text in an unclosed block. Calls found there are
 *   still returned (with a `call_in_unclosed_reasoning` finding): the text may have been cut off, and a
 *   client that does not understand reasoning would run them, so the gate must see them.
 *
 * @module
 */
import { lazy } from "../_common/lazy.ts";
import { escapeRegExp, skipSpace } from "./text.ts";

/** Opening and closing spellings of reasoning blocks. */
export const PAIRS: readonly (readonly [open: string, close: string])[] = [
  ["<think>", "</think>"],
  ["<thinking>", "</thinking>"],
  ["<seed:think>", "</seed:think>"],
  ["<mm:think>", "</mm:think>"],
  ["[THINK]", "[/THINK]"],
  ["<|START_THINKING|>", "<|END_THINKING|>"],
  ["<|channel>", "<channel|>"],
  ["◁think▷", "◁/think▷"],
  ["<|begin_of_thought|>", "<|end_of_thought|>"],
];

/** Closing spellings that also end reasoning begun in the prompt, beyond the closers of `PAIRS`. */
const LONE_CLOSERS: readonly string[] = ["[BEGIN FINAL RESPONSE]"];

const HARMONY_ANALYSIS = /<\|channel\|>analysis(?:\s*<\|constrain\|>\s*\w+)?\s*<\|message\|>/y;
const HARMONY_ENDS = ["<|end|>", "<|start|>", "<|return|>", "<|call|>"];

/** The reasoning blocks of one text. */
export interface Reasoning {
  /** Closed blocks `[start, end)`, in order, not overlapping. */
  closed: { start: number; end: number }[];
  /** Where an unclosed block begins, or `-1`. */
  unclosedAt: number;
  /** Index of the first character of the answer: after leading white space and closed blocks. */
  contentStart: number;
}

/** Every reasoning token in one expression, each opener's closer, and the closers: made on first use. */
const tokens = lazy(() => {
  const all = [...PAIRS.flat(), ...LONE_CLOSERS, "<|channel|>analysis"];
  return {
    re: new RegExp([...new Set(all)].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"), "g"),
    closerOf: new Map<string, string>(PAIRS.map(([o, c]) => [o, c])),
    closers: new Set<string>([...PAIRS.map(([, c]) => c), ...LONE_CLOSERS]),
  };
});

/** Finds the reasoning blocks of `text` in one pass. */
export function findReasoning(text: string): Reasoning {
  const closed: { start: number; end: number }[] = [];
  let unclosedAt = -1;
  let first = true; // no reasoning token seen yet
  const { re, closerOf, closers } = tokens();
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const token = m[0];
    const at = m.index;
    if (token === "<|channel|>analysis") {
      const span = harmonyAnalysis(text, at);
      if (span) {
        if (span.end < 0) {
          unclosedAt = at;
          break;
        }
        closed.push({ start: at, end: span.end });
        re.lastIndex = span.end;
        first = false;
      }
      continue;
    }
    const closer = closerOf.get(token);
    if (closer !== undefined) {
      const end = text.indexOf(closer, at + token.length);
      if (end < 0) {
        unclosedAt = at;
        break;
      }
      closed.push({ start: at, end: end + closer.length });
      re.lastIndex = end + closer.length;
      first = false;
      continue;
    }
    if (closers.has(token) && first) {
      // Reasoning opened by the prompt: everything before this closer.
      closed.push({ start: 0, end: at + token.length });
    }
    first = false;
  }
  return { closed, unclosedAt, contentStart: contentStart(text, closed) };
}

/** A harmony analysis message at `at` (no recipient): its end, `-1` when it runs to the end; else undefined. */
function harmonyAnalysis(text: string, at: number): { end: number } | undefined {
  HARMONY_ANALYSIS.lastIndex = at;
  const m = HARMONY_ANALYSIS.exec(text);
  if (!m) return undefined;
  // A recipient earlier in the same header (`<|start|>assistant to=functions.f<|channel|>analysis`) makes
  // this message a call, not reasoning.
  const headerFrom = Math.max(0, at - 256);
  const before = text.slice(headerFrom, at);
  const cut = Math.max(...HARMONY_ENDS.map((e) => before.lastIndexOf(e)));
  if (/\bto=/.test(cut >= 0 ? before.slice(cut) : before)) return undefined;
  const bodyStart = at + m[0].length;
  let end = -1;
  let endToken = "";
  for (const e of HARMONY_ENDS) {
    const i = text.indexOf(e, bodyStart);
    if (i >= 0 && (end < 0 || i < end)) {
      end = i;
      endToken = e;
    }
  }
  // `<|end|>` belongs to the message; a following `<|start|>` begins the next one.
  return { end: endToken === "<|end|>" ? end + endToken.length : end };
}

function contentStart(text: string, closed: readonly { start: number; end: number }[]): number {
  let i = skipSpace(text, 0);
  for (const span of closed) {
    if (span.start > i) break;
    if (span.end > i) i = skipSpace(text, span.end);
  }
  return i;
}
