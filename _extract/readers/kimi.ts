/**
 * Kimi. K2:
 *
 * ```
 * <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>
 * ```
 *
 * The call id is `functions.NAME:0`; the name is the part between. K3 (XTML) writes a `tools` channel:
 *
 * ```
 * <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
 *   <|open|>argument key="K" type="number"<|sep|>1<|close|>argument<|sep|>
 * <|close|>call<|sep|><|close|>tools<|sep|>
 * ```
 *
 * where `type="string"` values are raw text and every other type is JSON; `<|open|>json type="object"<|sep|>`
 * carries all the arguments as one JSON object instead.
 *
 * @module
 */
import { parseJsonSafe } from "../../_common/json.ts";
import { isRecord } from "../../_common/values.ts";
import { draftFromValue, readJsonRun } from "../json_calls.ts";
import type { CallDraft, Scan } from "../scan.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { decodeEntities, defineOwn, skipSpace } from "../text.ts";

const K2_SECTIONS = ["<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"];
const K2_SECTION_ENDS = ["<|tool_calls_section_end|>", "<|tool_call_section_end|>"];
const K2_CALL = "<|tool_call_begin|>";
const K2_ARGS = "<|tool_call_argument_begin|>";
const K2_CALL_END = "<|tool_call_end|>";

/** Kimi K2 calls. */
export const kimiK2: Reader = {
  name: "kimi_k2",
  markers: [...K2_SECTIONS, K2_CALL],
  read(scan, at, opening) {
    const text = scan.text;
    const section = K2_SECTIONS.includes(opening)
      ? bodyOf(scan, at + opening.length, K2_SECTION_ENDS)
      : { start: at, end: text.length, closed: false, blockEnd: text.length };
    const block = { start: at, end: section.blockEnd };
    let pos = skipSpace(text, section.start);
    let n = 0;
    while (text.startsWith(K2_CALL, pos) && pos < section.end) {
      const end = readK2Call(scan, pos, section.end, block);
      if (end < 0) break;
      n++;
      pos = skipSpace(text, end);
    }
    if (n === 0) {
      if (pos >= text.length || !section.closed) scan.ranOut(at);
      if (section.closed) scan.unreadable("kimi_k2", at, "no call could be read in the tool-call section");
      return section.closed ? section.blockEnd : -1;
    }
    if (!K2_SECTIONS.includes(opening)) block.end = pos;
    return block.end;
  },
};

function readK2Call(scan: Scan, at: number, limit: number, block: { start: number; end: number }): number {
  const text = scan.text;
  const from = at + K2_CALL.length;
  const argsAt = scan.find(K2_ARGS, from);
  if (argsAt < 0 || argsAt > limit || argsAt - from > 300) {
    if (argsAt < 0) scan.ranOut(at);
    return -1;
  }
  const id = text.slice(from, argsAt).trim();
  const name = id.replace(/^functions\./, "").replace(/:\d+$/, "");
  const p = skipSpace(text, argsAt + K2_ARGS.length);
  let end = scan.find(K2_CALL_END, p);
  const closed = end >= 0 && end <= limit;
  if (!closed) end = limit;
  const run = readJsonRun(text, p, end);
  if (run.items.length === 0 && !closed) {
    scan.ranOut(at);
    scan.unreadable("kimi_k2", at, `the call to "${name}" is cut off by the end of the text`);
    return end;
  }
  const draft = run.items.length > 0
    ? draftFromValue({ name, arguments: run.items[0].value })
    : { name, arguments: text.slice(p, end).trim(), error: "the arguments are not valid JSON" };
  draft.id = id;
  if (!closed) {
    scan.ranOut(at);
    draft.error ??= "the call is not closed";
  }
  scan.add(draft, "kimi_k2", p, run.items.length > 0 ? run.items[0].end : end, block);
  return closed ? end + K2_CALL_END.length : end;
}

const K3_TOOLS = "<|open|>tools<|sep|>";
const K3_TOOLS_END = "<|close|>tools<|sep|>";
const K3_CALL = /<\|open\|>\s*call\s+([^<]*?)<\|sep\|>/y;
const K3_CALL_END = "<|close|>call<|sep|>";
const K3_ARG = /<\|open\|>\s*(argument|json)\s+([^<]*?)<\|sep\|>/y;

/** Kimi K3 XTML calls. */
export const kimiK3: Reader = {
  name: "kimi_k3",
  markers: [K3_TOOLS],
  read(scan, at) {
    const text = scan.text;
    const section = bodyOf(scan, at + K3_TOOLS.length, [K3_TOOLS_END]);
    const block = { start: at, end: section.blockEnd };
    let pos = skipSpace(text, section.start);
    let n = 0;
    for (;;) {
      K3_CALL.lastIndex = pos;
      const m = K3_CALL.exec(text);
      if (!m || pos >= section.end) break;
      const name = attributes(m[1]).tool ?? "";
      const bodyStart = pos + m[0].length;
      let close = scan.find(K3_CALL_END, bodyStart);
      const closed = close >= 0 && close <= section.end;
      if (!closed) close = section.end;
      const args = readK3Arguments(scan, name, bodyStart, close);
      if (args.cutOff) {
        scan.unreadable("kimi_k3", pos, `the call to "${name}" is cut off by the end of the text`);
        break;
      }
      const draft: CallDraft = { name, arguments: args.values };
      if (!closed) draft.error = "the call is not closed";
      if (scan.add(draft, "kimi_k3", pos, closed ? close + K3_CALL_END.length : close, block)) n++;
      pos = skipSpace(text, closed ? close + K3_CALL_END.length : close);
    }
    if (!section.closed) scan.ranOut(at);
    if (n === 0 && !section.closed) return -1;
    return block.end;
  },
};

function readK3Arguments(
  scan: Scan,
  tool: string,
  from: number,
  limit: number,
): { values: Record<string, unknown>; cutOff: boolean } {
  const text = scan.text;
  const args: Record<string, unknown> = {};
  let open = false; // the last value read has no closing tag
  let pos = skipSpace(text, from);
  while (pos < limit) {
    K3_ARG.lastIndex = pos;
    const m = K3_ARG.exec(text);
    if (!m) break;
    const kind = m[1];
    const attrs = attributes(m[2]);
    const closeTag = `<|close|>${kind}<|sep|>`;
    const valueStart = pos + m[0].length;
    let close = scan.find(closeTag, valueStart);
    open = close < 0 || close > limit;
    if (open) close = limit;
    const raw = text.slice(valueStart, close);
    if (kind === "json") {
      const parsed = parseJsonSafe(raw.trim());
      if (parsed.ok && isRecord(parsed.value)) {
        for (const [k, v] of Object.entries(parsed.value)) defineOwn(args, k, v);
      }
    } else if (attrs.key !== undefined) {
      defineOwn(args, attrs.key, k3Value(scan, tool, attrs.key, raw, attrs.type));
    }
    pos = skipSpace(text, Math.min(limit, close + closeTag.length));
  }
  // At the end of the text, a value without its closing tag or a tag begun and not finished is cut off.
  return { values: args, cutOff: limit === text.length && (open || pos < limit) };
}

function k3Value(scan: Scan, tool: string, key: string, raw: string, type: string | undefined): unknown {
  if (type === "string") return raw;
  if (type === undefined) return scan.typer.text(tool, key, raw);
  const parsed = parseJsonSafe(raw.trim());
  return parsed.ok ? parsed.value : raw;
}

function attributes(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/(\w+)="([^"]*)"/g)) defineOwn(out, m[1], decodeEntities(m[2]));
  return out;
}
