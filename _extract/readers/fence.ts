/**
 * A fenced code block marked `json` (or unmarked, `tool_call`, `tool_code`) holding a call object or an
 * array of them, as small models write when told to answer with JSON (also Command R+ `Action:` blocks and
 * xLAM). JSON in a fence that is not shaped like a call is just JSON; a fence of another language is code and
 * is skipped whole, so nothing in it is read as a call.
 *
 * @module
 */
import { addJsonCalls, readJsonRun } from "../json_calls.ts";
import type { Reader } from "../reader.ts";
import { skipSpace, trimEnd } from "../text.ts";

const FENCE = "```";
/** Fence languages that may hold calls. */
export const CALL_FENCE = /^(json|jsonc|json5|tool_call|tool_calls|tool_code|)$/i;
/** Fence languages whose content is other markup to read (a `<tool_call>` written inside ```xml). */
const MARKUP_FENCE = /^(xml|html)$/i;

/** Fenced JSON calls. */
export const fence: Reader = {
  name: "fence",
  markers: [FENCE],
  read(scan, at) {
    const text = scan.text;
    const lineEnd = scan.find("\n", at + 3);
    if (lineEnd < 0) {
      if (text.length - at < 40) scan.ranOut(at); // the language line is not finished yet
      return -1;
    }
    const lang = text.slice(at + 3, lineEnd).trim();
    const close = scan.find(FENCE, lineEnd + 1);
    if (MARKUP_FENCE.test(lang)) return -1;
    if (!CALL_FENCE.test(lang)) return close < 0 ? -1 : close + 3; // code: skipped whole
    if (close < 0) {
      scan.ranOut(at);
      return -1;
    }
    const block = { start: at, end: close + 3 };
    const start = skipSpace(text, lineEnd + 1);
    const end = trimEnd(text, start, close);
    if (text[start] !== "{" && text[start] !== "[") return lang === "" ? -1 : block.end;
    const run = readJsonRun(text, start, end);
    if (run.items.length === 0) return block.end;
    addJsonCalls(scan, run.items, { format: "fenced_json", block, requireShape: true, weak: true });
    return block.end;
  },
};
