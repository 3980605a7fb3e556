/**
 * XML with the tool name in an `invoke` element and each argument in its own element:
 *
 * ```
 * <minimax:tool_call>                               MiniMax M2 (also the Claude-style <function_calls>)
 * <invoke name="NAME">
 * <parameter name="KEY">VALUE</parameter>
 * </invoke>
 * </minimax:tool_call>
 * ```
 *
 * The same grammar with a prefix on the element names: DeepSeek V3.2 DSML (`<｜DSML｜invoke>`, where
 * `string="true"` marks a value as text and `string="false"` as JSON), Step3 (`<steptml:invoke>`, inside
 * DeepSeek-style section tokens, read by `deepseek.ts`) and Muse Glimmer (`<atem:invoke>`). MiniMax M3 names
 * each argument by its element (`<city>Paris</city>`) and writes a separator token `]<]minimax[>[` before
 * every tag; the separator is skipped. GigaChat 3.5 writes DSML's grammar under `<｜GCML｜…>`.
 *
 * @module
 */
import type { CallDraft, Scan } from "../scan.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { boundedIndexOf, decodeEntities, defineOwn, isSpace, trimOneNewline } from "../text.ts";
import type { ExtractFormat } from "../types.ts";
import { parseJsonSafe } from "../../_common/json.ts";

/** MiniMax M3's separator token, written before every tag. */
export const MINIMAX_SEPARATOR = "]<]minimax[>[";

/** One wrapper around invoke elements. */
interface Wrapper {
  open: string;
  close: string;
  prefix: string;
  format: ExtractFormat;
  /** A parameter without a `string` attribute is text (GigaChat 3.5); otherwise the schema decides. */
  stringByDefault?: boolean;
  /** Values are trimmed of all surrounding white space (Step3), not just one framing line break. */
  trimValues?: boolean;
}

/** The element prefix and value conventions of one invoke grammar. */
export type InvokeSyntax = Pick<Wrapper, "prefix" | "stringByDefault" | "trimValues">;

const WRAPPERS: readonly Wrapper[] = [
  { open: "<minimax:tool_call>", close: "</minimax:tool_call>", prefix: "", format: "minimax" },
  { open: "<tool_call>", close: "</tool_call>", prefix: "", format: "minimax" },
  {
    open: "<｜DSML｜function_calls>",
    close: "</｜DSML｜function_calls>",
    prefix: "｜DSML｜",
    format: "deepseek_dsml",
  },
  {
    open: "<｜DSML｜tool_calls>",
    close: "</｜DSML｜tool_calls>",
    prefix: "｜DSML｜",
    format: "deepseek_dsml",
  },
  {
    open: "<｜GCML｜tool_calls>",
    close: "</｜GCML｜tool_calls>",
    prefix: "｜GCML｜",
    format: "gigachat",
    stringByDefault: true,
  },
  { open: "<atem:function_calls>", close: "</atem:function_calls>", prefix: "atem:", format: "glimmer" },
  { open: "<function_calls>", close: "</function_calls>", prefix: "", format: "invoke_xml" },
];
const BARE: readonly Wrapper[] = [
  { open: "<steptml:invoke", close: "", prefix: "steptml:", format: "step3", trimValues: true },
  { open: "<invoke name=", close: "", prefix: "", format: "invoke_xml" },
];
const BY_OPEN = new Map<string, Wrapper>([...WRAPPERS, ...BARE].map((w) => [w.open, w]));

/** Invoke-element calls (MiniMax, DSML, Glimmer, Step3). */
export const invoke: Reader = {
  name: "invoke",
  markers: [...BY_OPEN.keys(), MINIMAX_SEPARATOR],
  read(scan, at, opening) {
    const text = scan.text;
    if (opening === MINIMAX_SEPARATOR) {
      // MiniMax M3 writes the separator before its <tool_call> too; the call's markup starts here.
      const next = at + MINIMAX_SEPARATOR.length;
      return text.startsWith("<tool_call>", next) ? invoke.read(scan, next, "<tool_call>") : -1;
    }
    const w = BY_OPEN.get(opening)!;
    if (w.close === "") {
      const one = readInvoke(scan, at, text.length, w);
      if (!one) return -1;
      if (one.cutOff) return cutOff(scan, w.format, at, one.draft.name);
      scan.add(one.draft, w.format, at, one.end, { start: at, end: one.end });
      return one.end;
    }
    const body = bodyOf(scan, at + opening.length, [w.close], [opening]);
    let pos = skipFiller(text, body.start, body.end);
    if (pos >= body.end && !body.closed) scan.ranOut(at);
    if (!text.startsWith(`<${w.prefix}invoke`, pos)) return -1;
    const start = text.startsWith(MINIMAX_SEPARATOR, at - MINIMAX_SEPARATOR.length)
      ? at - MINIMAX_SEPARATOR.length
      : at;
    const block = { start, end: body.blockEnd };
    while (text.startsWith(`<${w.prefix}invoke`, pos)) {
      const one = readInvoke(scan, pos, body.end, w);
      if (!one) break;
      if (one.cutOff) {
        cutOff(scan, w.format, pos, one.draft.name);
        break;
      }
      if (!body.closed) one.draft.error ??= `the ${opening} block is not closed`;
      scan.add(one.draft, w.format, pos, one.end, block);
      pos = skipFiller(text, one.end, body.end);
    }
    return block.end;
  },
};

/** Reports a call cut off by the end of the text (running it would use truncated values); returns the end. */
function cutOff(scan: Scan, format: ExtractFormat, at: number, name: string): number {
  scan.unreadable(format, at, `the call to "${name}" is cut off by the end of the text`);
  return scan.text.length;
}

/** White space and MiniMax separators from `pos`, up to `limit`. */
function skipFiller(text: string, pos: number, limit: number): number {
  for (;;) {
    while (pos < limit && isSpace(text, pos)) pos++;
    if (text.startsWith(MINIMAX_SEPARATOR, pos)) pos += MINIMAX_SEPARATOR.length;
    else return pos;
  }
}

/** An attribute's value from the text inside a tag. */
function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return m ? decodeEntities(m[1] ?? m[2]) : undefined;
}

/**
 * Reads one `<PREFIXinvoke name="…">…</PREFIXinvoke>` at `at`, up to `limit`: the call and the index past it.
 * Undefined when no named invoke tag is there.
 */
export function readInvoke(
  scan: Scan,
  at: number,
  limit: number,
  syntax: InvokeSyntax,
): { draft: CallDraft; end: number; cutOff: boolean } | undefined {
  const text = scan.text;
  const prefix = syntax.prefix;
  const tagEnd = boundedIndexOf(text, ">", at, 512);
  if (tagEnd < 0 || tagEnd >= limit) {
    if (limit === text.length) scan.ranOut(at);
    return undefined;
  }
  const tag = text.slice(at + prefix.length + "<invoke".length, tagEnd);
  const name = attribute(tag, "name");
  if (!name) return undefined;
  if (tag.trimEnd().endsWith("/")) return { draft: { name, arguments: {} }, end: tagEnd + 1, cutOff: false };
  const closeTag = `</${prefix}invoke>`;
  let close = scan.find(closeTag, tagEnd);
  const closed = close >= 0 && close <= limit;
  if (!closed) {
    close = limit;
    const next = scan.find(`<${prefix}invoke`, tagEnd);
    if (next >= 0 && next < close) close = next;
    if (close === text.length) scan.ranOut(at);
  }
  const { args, cutOff } = readParameters(scan, name, tagEnd + 1, close, syntax);
  const draft: CallDraft = { name, arguments: args };
  if (!closed) draft.error = `the <${prefix}invoke> element is not closed`;
  return { draft, end: closed ? close + closeTag.length : close, cutOff: !closed && cutOff };
}

/** The arguments between an invoke's tags: `<PREFIXparameter name="K">V</…>` or MiniMax M3's `<K>V</K>`. */
function readParameters(
  scan: Scan,
  tool: string,
  from: number,
  limit: number,
  syntax: InvokeSyntax,
): { args: Record<string, unknown>; cutOff: boolean } {
  const text = scan.text;
  const prefix = syntax.prefix;
  const args: Record<string, unknown> = {};
  let open = false; // the last value read has no closing tag
  const opening = `<${prefix}parameter`;
  const closeTag = `</${prefix}parameter>`;
  let pos = skipFiller(text, from, limit);
  while (pos < limit && text[pos] === "<") {
    let key: string | undefined;
    let valueStart: number;
    let close: string;
    let kind: string | undefined;
    if (text.startsWith(opening, pos)) {
      const tagEnd = boundedIndexOf(text, ">", pos, 512);
      if (tagEnd < 0 || tagEnd >= limit) break;
      const tag = text.slice(pos + opening.length, tagEnd);
      key = attribute(tag, "name");
      kind = attribute(tag, "string") ?? (syntax.stringByDefault ? "true" : undefined);
      valueStart = tagEnd + 1;
      close = closeTag;
    } else {
      const m = /<([\p{L}\p{N}_][\p{L}\p{N}_.:-]{0,127})>/uy;
      m.lastIndex = pos;
      const hit = m.exec(text);
      if (!hit) break;
      key = hit[1];
      valueStart = pos + hit[0].length;
      close = `</${key}>`;
    }
    if (key === undefined) break;
    let valueEnd = scan.find(close, valueStart);
    open = valueEnd < 0 || valueEnd > limit;
    if (open) valueEnd = limit;
    const raw = text.slice(valueStart, valueEnd).split(MINIMAX_SEPARATOR).join("");
    defineOwn(args, key, valueOf(scan, { tool, key, raw, kind, trim: syntax.trimValues }));
    pos = skipFiller(text, Math.min(limit, valueEnd + close.length), limit);
  }
  // At the end of the text, a value without its closing tag or a tag begun and not finished is cut off.
  return { args, cutOff: limit === text.length && (open || pos < limit) };
}

/**
 * A parameter's value: DSML's `string` attribute decides when present (`true`: the text exactly as written),
 * else the declared schema reads the text without its framing line breaks (or all surrounding space).
 */
function valueOf(
  scan: Scan,
  v: { tool: string; key: string; raw: string; kind: string | undefined; trim?: boolean },
): unknown {
  if (v.kind === "true") return v.raw;
  if (v.kind === "false") {
    const parsed = parseJsonSafe(v.raw.trim());
    if (parsed.ok) return parsed.value;
  }
  return scan.typer.text(v.tool, v.key, v.trim ? v.raw.trim() : trimOneNewline(v.raw));
}
