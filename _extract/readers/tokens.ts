/**
 * Readers of calls framed by special tokens: DeepSeek's section tokens, Kimi K2 and K3, and gpt-oss harmony
 * headers.
 *
 * @module
 */
import { parseJsonSafe } from "../../_common/json.ts";
import { isRecord } from "../../_common/values.ts";
import { draftFromValue, readJsonRun } from "../json_calls.ts";
import {
  bodyOf,
  boundedIndexOf,
  decodeEntities,
  defineOwn,
  isSpace,
  skipSpace,
  trimEnd,
  valueEnd,
} from "../text.ts";
import type { Reader } from "../reader.ts";
import type { CallDraft, Scan } from "../scan.ts";
import type { ExtractFormat } from "../types.ts";
import { readInvoke } from "./xml.ts";

/*
 * DeepSeek's section tokens, in the spellings models write them (U+2581 "lower one eighth block", `_` or a space
 * between the words). Below, `|` stands for the fullwidth bar U+FF5C and `~` for U+2581 (the sources are ASCII):
 *
 * ```
 * <|tool~calls~begin|><|tool~call~begin|>function<|tool~sep|>NAME
 * ```json
 * {...}
 * ```<|tool~call~end|><|tool~calls~end|>                       V3, R1 (type, separator, name, fenced JSON)
 *
 * <|tool~call~begin|>NAME<|tool~sep|>{...}<|tool~call~end|>             V3.1 (name, separator, JSON)
 * ```
 *
 * Step3 writes the same section tokens around `<steptml:invoke>` elements (read as the `invoke` elements in `xml.ts`).
 */

const GAP = ["\u2581", "_", " ", "\\_"];
const spell = (words: string[]) => GAP.map((g) => `<\uff5c${words.join(g)}\uff5c>`);
const SECTION_OPEN = [...spell(["tool", "calls", "begin"]), "<\uff5ctool\u2581calls\uff5c>"];
const CALL_OPEN = spell(["tool", "call", "begin"]);
const TOKEN =
  /<\uff5ctool(?:[\u2581_ ]|\\_)(calls?)(?:(?:[\u2581_ ]|\\_)(begin|end))?\uff5c>|<\uff5ctool(?:[\u2581_ ]|\\_)sep\uff5c>/g;

/** DeepSeek V3/R1/V3.1 and Step3 calls. */
export const deepseek: Reader = {
  name: "deepseek",
  markers: [...SECTION_OPEN, ...CALL_OPEN],
  read(scan, at, opening) {
    const text = scan.text;
    const section = SECTION_OPEN.includes(opening);
    let tokens = tokensFrom(text, section ? at + opening.length : at);
    if (tokens.length === 0) {
      scan.ranOut(at);
      return -1;
    }
    const block = { start: at, end: at + opening.length };
    let closed = false;
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k];
      if (t.kind === "calls_end") {
        block.end = t.end;
        closed = true;
        break;
      }
      if (t.kind !== "call_begin") continue;
      let j = k + 1;
      while (j < tokens.length && tokens[j].kind === "sep") j++;
      let next = tokens[j] as Token | undefined;
      const sep = j > k + 1 ? tokens[k + 1] : undefined;
      let bodyEnd = next ? next.at : text.length;
      const call = readCall(scan, t.end, sep, bodyEnd);
      if (call && call.end > bodyEnd) {
        // The JSON held section tokens in its strings: they are data; the tokens go on after the call.
        while (j < tokens.length && tokens[j].at < call.end) j++;
        if (j === tokens.length && tokens[j - 1].kind === "calls_end") {
          tokens = tokensFrom(text, call.end); // the list stopped at a section end inside the JSON
          j = 0;
        }
        next = tokens[j];
        bodyEnd = next ? next.at : text.length;
      }
      if (call) scan.add(call.draft, call.format, t.end, call.end, block);
      else if (next) {
        scan.unreadable("deepseek", t.at, "the call between the section tokens could not be read");
      }
      block.end = next?.kind === "call_end" ? next.end : bodyEnd;
      k = next?.kind === "call_end" ? j : j - 1;
    }
    if (!closed && (section || block.end >= text.length)) scan.ranOut(at);
    return block.end;
  },
};

interface Token {
  kind: "calls_begin" | "calls_end" | "call_begin" | "call_end" | "sep";
  at: number;
  end: number;
}

/** The section tokens from `from` up to the section's end (or the end of the text). */
function tokensFrom(text: string, from: number): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = from;
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(text)) !== null) {
    const kind = (m[1] ? `${m[1]}_${m[2] ?? "begin"}` : "sep") as Token["kind"];
    if (kind === "calls_begin") break; // the next section
    out.push({ kind, at: m.index, end: m.index + m[0].length });
    if (kind === "calls_end") break;
  }
  return out;
}

/** One call's body from `from` to `limit`, with its separator token if any. */
function readCall(
  scan: Scan,
  from: number,
  sep: Token | undefined,
  limit: number,
): { draft: CallDraft; end: number; format: ExtractFormat } | undefined {
  const text = scan.text;
  const step = skipSpace(text, sep ? sep.end : from);
  if (text.startsWith("<steptml:invoke", step)) {
    const one = readInvoke(scan, step, limit, {
      prefix: "steptml:",
      trimValues: true,
      typing: { python: true },
    });
    return one && !one.cutOff ? { draft: one.draft, end: one.end, format: "step3" } : undefined;
  }
  if (!sep) return undefined;
  const afterSep = skipSpace(text, sep.end);
  if (text[afterSep] === "{") {
    // V3.1: NAME<|tool~sep|>{...} (written as in the note at the top)
    const args = jsonAt(scan, afterSep, limit);
    const name = text.slice(from, sep.at).trim();
    return args &&
      { draft: draftFromValue({ name, arguments: args.value }), end: args.end, format: "deepseek" };
  }
  // V3 / R1: TYPE<|tool~sep|>NAME\n```json\n{...}\n```
  const nl = text.indexOf("\n", sep.end);
  const nameEnd = nl >= 0 && nl < limit ? nl : limit;
  const name = text.slice(sep.end, nameEnd).trim();
  let p = skipSpace(text, nameEnd);
  if (text.startsWith("```", p)) {
    const line = text.indexOf("\n", p);
    p = skipSpace(text, line >= 0 && line < limit ? line + 1 : p + 3);
  }
  const args = jsonAt(scan, p, limit);
  return args &&
    { draft: draftFromValue({ name, arguments: args.value }), end: args.end, format: "deepseek" };
}

/**
 * The JSON value at `p`, read up to `limit` (the next section token); when it does not close there, read on
 * past it (within the shared budget), since a section token inside a JSON string is data.
 */
function jsonAt(scan: Scan, p: number, limit: number): { value: unknown; end: number } | undefined {
  const text = scan.text;
  let run = readJsonRun(text, p, limit);
  if (run.items.length === 0 && run.open) {
    const e = valueEnd(scan, p);
    if (e > limit) run = readJsonRun(text, p, e);
  }
  return run.items.length > 0 ? { value: run.items[0].value, end: run.items[0].end } : undefined;
}

/*
 * Kimi. K2:
 *
 * ```
 * <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>
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
 */

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
  let end = scan.find(K2_CALL_END, Math.max(p, valueEnd(scan, p))); // one inside the JSON is data
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

/*
 * gpt-oss harmony: a message whose header names a recipient is a call to it.
 *
 * ```
 * <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>
 * ```
 *
 * The recipient may stand before or after the channel (`to=functions.NAME<|channel|>analysis`), the
 * generation prompt may have supplied `<|start|>assistant`, and the body runs to `<|call|>`, `<|end|>` or the
 * next `<|start|>`. `functions.` is dropped from the name; built-in recipients (`browser.search`) keep theirs.
 * A header whose body is other call markup (Muse Glimmer's `to=NAME<|message|><atem:function_calls>`) is
 * left to that markup's reader.
 */

const RECIPIENT = /to=([^\s<]{1,128})/y;
/** The rest of a header: channel, and a content type with or without `<|constrain|>` (`json`, `json-schema`). */
const HEADER_REST = /(?:\s*(?:<\|channel\|>\s*\w+|<\|constrain\|>\s*[\w-]+|json|code))*\s*<\|message\|>/y;
const ENDS = ["<|call|>", "<|end|>", "<|return|>", "<|start|>", "<|eom|>", "<|eot|>"];
const NOT_TOOLS = new Set(["assistant", "user", "all", "self", "system", "developer"]);
const CONSUMED_ENDS = new Set(["<|call|>", "<|end|>", "<|return|>", "<|eom|>", "<|eot|>"]);

/** Harmony recipient headers. */
export const harmony: Reader = {
  name: "harmony",
  markers: ["<|start|>", "<|channel|>", "to="],
  read(scan, at, opening) {
    const head = opening === "to=" ? bareHeader(scan, at) : openedHeader(scan, at);
    if (!head) return -1;
    const text = scan.text;
    const p = skipSpace(text, head.bodyStart);
    // An end token inside the JSON's strings is data: the body ends at the first one after the value.
    const json = valueEnd(scan, p);
    const { at: bodyEnd, token: endToken } = firstEnd(scan, Math.max(head.bodyStart, json));
    if (p < bodyEnd && text[p] === "<") return -1; // other markup carries the call
    const name = head.recipient.replace(/^functions\./, "");
    if (NOT_TOOLS.has(name)) return -1; // a message to a person (or a tool's reply), not a call
    const block = {
      start: head.start,
      end: CONSUMED_ENDS.has(endToken) ? bodyEnd + endToken.length : bodyEnd,
    };
    const limit = trimEnd(text, p, bodyEnd);
    if (endToken === "") scan.ranOut(head.start);
    if (p >= limit) return endToken === "" ? -1 : block.end;
    // With no end token after it, a value `valueEnd` found unclosed (within the shared budget) is not read
    // again up to the end of the text: the header is declined, and every header declined so cost the rest of
    // the text (quadratic on a run of them). A body that ends at a token is consumed, so reading it is linear.
    const run = text[p] === "{" && (endToken !== "" || json >= 0) ? readJsonRun(text, p, limit) : undefined;
    if (run && run.items.length > 0) {
      const args = run.items[0];
      scan.add(draftFromValue({ name, arguments: args.value }), "harmony", p, args.end, block);
    } else if (endToken !== "") {
      const raw = text.slice(p, limit);
      scan.add(
        { name, arguments: raw, error: "the arguments are not a JSON object" },
        "harmony",
        p,
        limit,
        block,
      );
    } else return -1;
    return block.end;
  },
};

/** The first harmony end token at or after `from`, or the end of the text with token `""`. */
function firstEnd(scan: Scan, from: number): { at: number; token: string } {
  let at = scan.text.length;
  let token = "";
  for (const e of ENDS) {
    const i = scan.find(e, from);
    if (i >= 0 && i < at) {
      at = i;
      token = e;
    }
  }
  return { at, token };
}

interface Header {
  /** Where the header (and the call's markup) starts. */
  start: number;
  /** The recipient as written (`functions.NAME`). */
  recipient: string;
  /** Index just after `<|message|>`. */
  bodyStart: number;
}

/** A header opened by `<|start|>` or `<|channel|>` at `at`, if it names a recipient. */
function openedHeader(scan: Scan, at: number): Header | undefined {
  const text = scan.text;
  const msg = boundedIndexOf(text, "<|message|>", at + 1, 256);
  if (msg < 0) {
    if (text.length - at < 256) scan.ranOut(at); // the header may be unfinished
    return undefined;
  }
  const header = text.slice(at, msg);
  if (/<\|(?:end|call|return)\|>/.test(header) || header.indexOf("<|start|>", 1) >= 0) return undefined;
  const r = /\sto=([^\s<]{1,128})/.exec(header);
  return r ? { start: at, recipient: r[1], bodyStart: msg + "<|message|>".length } : undefined;
}

/** A header whose opening the prompt supplied: ` to=NAME...<|message|>` at `at`. */
function bareHeader(scan: Scan, at: number): Header | undefined {
  const text = scan.text;
  if (at > 0 && !isSpace(text, at - 1)) return undefined;
  RECIPIENT.lastIndex = at;
  const r = RECIPIENT.exec(text);
  if (!r) return undefined;
  HEADER_REST.lastIndex = at + r[0].length;
  const h = HEADER_REST.exec(text);
  if (!h) {
    if (text.length - at < 200 && !text.includes("\n", at)) scan.ranOut(at); // the header may be unfinished
    return undefined;
  }
  return { start: headerStart(text, at), recipient: r[1], bodyStart: at + r[0].length + h[0].length };
}

/** Where the header holding `to=` at `at` begins: its `<|start|>` or `<|channel|>`, if close by. */
function headerStart(text: string, at: number): number {
  const from = Math.max(0, at - 64);
  const before = text.slice(from, at);
  const start = before.lastIndexOf("<|start|>");
  const channel = before.lastIndexOf("<|channel|>");
  const cut = Math.max(before.lastIndexOf("<|message|>"), before.lastIndexOf("<|end|>"));
  const open = start >= 0 && start > cut ? start : channel > cut ? channel : -1;
  return open >= 0 ? from + open : at;
}
