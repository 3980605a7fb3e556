/**
 * JSON where the answer begins, with no marker: Llama 3 JSON (`{"name", "parameters"}`, several separated by
 * `;`, with prose after them), a JSON array of calls (xLAM, `tool_choice: required` outputs), the generic
 * `{"tool_calls": […]}` wrapper. A message that opens with JSON that is not a call is a JSON answer: nothing
 * later in it is taken for a call quoted in prose.
 *
 * @module
 */
import { addJsonCalls, callValues, isCallShaped, readJsonRun } from "../json_calls.ts";
import type { AnchoredReader, Reader } from "../reader.ts";
import { scanValueEnd } from "../text.ts";
import { parseJsonSafe } from "../../_common/json.ts";

/** A call (or calls) standing where the answer begins. */
export const bareJson: AnchoredReader = {
  name: "bare_json",
  read(scan, at) {
    const text = scan.text;
    if (text[at] !== "{" && text[at] !== "[") return -1;
    const run = readJsonRun(text, at, text.length);
    if (run.items.length === 0) {
      if (run.open) scan.ranOut(at);
      return -1; // not JSON as a whole: a call may still be quoted inside (read by inlineJson)
    }
    const items = text[at] === "[" ? run.items : leadingCalls(run.items);
    const shaped = items.length > 0 && items.every((i) => callValues(i.value).every((v) => isCallShaped(v)));
    if (!shaped) {
      scan.jsonAnswer = true;
      return run.next;
    }
    const end = items[items.length - 1].end;
    const block = { start: at, end: text[at] === "[" ? run.next : end };
    addJsonCalls(scan, items, { format: "bare_json", block, weak: true });
    return block.end;
  },
};

function leadingCalls<T extends { value: unknown }>(items: readonly T[]): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (!callValues(item.value).every((v) => isCallShaped(v))) break;
    out.push(item);
  }
  return out;
}

/** A call object quoted in prose: `Sure: {"name": "f", "arguments": {…}}`. Only call keys are allowed. */
export const inlineJson: Reader = {
  name: "inline_json",
  markers: [],
  shape: /\{\s*"(?:name|tool_name|tool|function)"\s*:/y,
  read(scan, at) {
    const text = scan.text;
    if (scan.jsonAnswer) return -1;
    const limit = Math.min(text.length, at + scan.allowance());
    const end = scanValueEnd(text, at, limit);
    scan.spend((end < 0 ? limit : end) - at);
    if (end < 0) {
      if (limit === text.length) scan.ranOut(at);
      return -1;
    }
    const parsed = parseJsonSafe(text.slice(at, end));
    if (!parsed.ok || !isCallShaped(parsed.value, { strict: true })) return -1;
    const block = { start: at, end };
    const n = addJsonCalls(scan, [{ value: parsed.value, start: at, end }], {
      format: "inline_json",
      block,
      weak: true,
    });
    return n > 0 ? end : -1;
  },
};
