/**
 * Mistral `[TOOL_CALLS]`: a JSON array of calls (Mistral 7B v0.3, Nemo; optionally closed by `[/TOOL_CALLS]`),
 * `NAME[ARGS]{…}` with an optional `[CALL_ID]id` (tokenizer v11+: Ministral, Devstral, Magistral) or
 * `NAME{…}` (v11 without the `[ARGS]` token). Junk between the marker and the JSON is skipped, as vLLM does.
 *
 * @module
 */
import { addJsonCalls, draftFromValue, readJsonRun } from "../json_calls.ts";
import type { Scan } from "../scan.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { scanValueEnd, skipSpace, trimEnd } from "../text.ts";

const TAG = "[TOOL_CALLS]";
const CLOSE = "[/TOOL_CALLS]";
const NAME = /[A-Za-z_][\w.-]{0,127}/y;

/** Mistral `[TOOL_CALLS]` calls. */
export const mistral: Reader = {
  name: "mistral",
  markers: [TAG],
  read(scan, at) {
    const text = scan.text;
    const body = bodyOf(scan, at + TAG.length, ["</s>", CLOSE], [TAG]);
    const pos = skipSpace(text, body.start);
    const limit = trimEnd(text, pos, body.end);
    if (pos >= limit) {
      if (!body.closed && body.end === text.length) scan.ranOut(at);
      return -1; // nothing but space before the next marker or the end
    }
    let end = text[pos] === "[" || text[pos] === "{"
      ? readJsonForm(scan, at, pos, limit)
      : readNamedForm(scan, at, pos, limit);
    if (end < 0) end = readAfterJunk(scan, at, pos, limit);
    if (end >= 0) return withClose(scan, end);
    if (!body.closed && body.end === text.length) scan.ranOut(at);
    scan.unreadable("mistral", at, "the text after [TOOL_CALLS] is neither JSON calls nor NAME[ARGS]{...}");
    return body.end;
  },
};

/** `end`, moved past a `[/TOOL_CALLS]` that follows it (and the calls' shared block with it). */
function withClose(scan: Scan, end: number): number {
  const at = skipSpace(scan.text, end);
  if (!scan.text.startsWith(CLOSE, at)) return end;
  const last = scan.calls[scan.calls.length - 1];
  if (last && last.block.end === end) last.block.end = at + CLOSE.length;
  return at + CLOSE.length;
}

function readJsonForm(scan: Scan, at: number, pos: number, limit: number): number {
  const run = readJsonRun(scan.text, pos, limit);
  if (run.items.length === 0) return -1;
  const block = { start: at, end: run.next };
  return addJsonCalls(scan, run.items, { format: "mistral", block }) > 0 ? run.next : -1;
}

/** `NAME[CALL_ID]id[ARGS]{…}`, `NAME[ARGS]{…}` or `NAME{…}`, possibly several in a row. */
function readNamedForm(scan: Scan, at: number, pos: number, limit: number): number {
  const text = scan.text;
  const block = { start: at, end: pos };
  let n = 0;
  while (pos < limit) {
    NAME.lastIndex = pos;
    const m = NAME.exec(text);
    if (!m) break;
    let i = pos + m[0].length;
    let id: string | undefined;
    if (text.startsWith("[CALL_ID]", i)) {
      const args = scan.find("[ARGS]", i);
      if (args < 0 || args > limit || args - i > 200) break;
      id = text.slice(i + "[CALL_ID]".length, args).trim();
      i = args;
    }
    if (text.startsWith("[ARGS]", i)) i += "[ARGS]".length;
    const json = skipSpace(text, i);
    if (text[json] !== "{") break;
    const e = scanValueEnd(text, json, limit);
    if (e < 0) {
      if (skipSpace(text, limit) >= text.length) scan.ranOut(at);
      break;
    }
    const run = readJsonRun(text, json, e);
    const draft = run.items.length > 0
      ? draftFromValue({ name: m[0], arguments: run.items[0].value })
      : { name: m[0], arguments: text.slice(json, e), error: "the arguments are not valid JSON" };
    if (id) draft.id = id;
    block.end = e;
    if (scan.add(draft, "mistral", pos, e, block)) n++;
    pos = skipSpace(text, e);
  }
  return n > 0 ? block.end : -1;
}

/** vLLM's fallback: the first JSON array or object of calls anywhere in the body. */
function readAfterJunk(scan: Scan, at: number, pos: number, limit: number): number {
  const text = scan.text;
  for (let i = pos; i < limit; i++) {
    const c = text[i];
    if (c !== "[" && c !== "{") continue;
    if (!scan.spend(limit - i)) return -1;
    const run = readJsonRun(text, i, limit);
    if (run.items.length === 0) continue;
    const block = { start: at, end: run.next };
    if (addJsonCalls(scan, run.items, { format: "mistral", block, requireShape: true }) > 0) return run.next;
    i = run.next - 1;
  }
  return -1;
}
