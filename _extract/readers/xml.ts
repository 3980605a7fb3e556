/**
 * Readers of calls written as XML-like elements, one per argument: Qwen3-Coder `<function=NAME>`, GLM
 * `<arg_key>`/`<arg_value>`, `invoke` elements (MiniMax, Claude-style, DeepSeek DSML) and
 * `<function name="NAME">`.
 *
 * @module
 */
import { parseJsonSafe } from "../../_common/json.ts";
import { lazy } from "../../_common/values.ts";
import { draftFromValue, readFirstValue } from "../json_calls.ts";
import {
  bodyOf,
  boundedIndexOf,
  decodeEntities,
  defineOwn,
  isSpace,
  skipSpace,
  trimOneNewline,
  widen,
} from "../text.ts";
import { FAIL } from "../literal.ts";
import { inferText, type TextTyping } from "../typing.ts";
import type { Reader } from "../reader.ts";
import type { CallDraft, Scan } from "../scan.ts";
import type { ExtractFormat } from "../types.ts";

/*
 * Qwen3-Coder XML (also Qwen3.5, Step 3.5, and Seed-OSS inside `<seed:tool_call>`):
 *
 * ```
 * <tool_call>
 * <function=NAME>
 * <parameter=KEY>
 * VALUE
 * </parameter>
 * </function>
 * </tool_call>
 * ```
 *
 * One line break after the opening and before the closing parameter tag frames the value and is removed;
 * indentation inside is kept. Models sometimes drop the opening `<tool_call>` or a `</parameter>`; both are
 * read. A `<function=NAME>` followed by JSON is Functionary v3.1, read by `functionary` in `json.ts`.
 */

const FUNCTION = "<function=";
const HEADER = /<function=([^>\n]{1,128})>/y;
const PARAM = "<parameter=";
const QWEN_WRAPPERS: Record<string, { close: string; format: ExtractFormat }> = {
  "<tool_call>": { close: "</tool_call>", format: "qwen_xml" },
  "<seed:tool_call>": { close: "</seed:tool_call>", format: "seed_oss" },
};

/** Qwen3-Coder and Seed-OSS XML calls. */
export const qwenXml: Reader = {
  name: "qwen_xml",
  markers: [...Object.keys(QWEN_WRAPPERS), FUNCTION],
  read(scan, at, opening) {
    const text = scan.text;
    if (opening === FUNCTION) return readBare(scan, at);
    const { close, format } = QWEN_WRAPPERS[opening];
    const body = bodyOf(scan, at + opening.length, [close], [opening]);
    const p = skipSpace(text, body.start);
    if (p >= body.end && !body.closed && body.end === text.length) scan.ranOut(at); // (not cut off by the next)
    if (!text.startsWith(FUNCTION, p) || isJsonBody(text, p)) return -1;
    const block = { start: at, end: body.blockEnd };
    let pos = p;
    while (text.startsWith(FUNCTION, pos) && pos < body.end) {
      const fn = readFunction(scan, pos, body.end);
      if (!fn) break;
      if (fn.cutOff) {
        scan.unreadable(format, pos, `the call to "${fn.draft.name}" is cut off by the end of the text`);
        break;
      }
      if (!body.closed) fn.draft.error ??= `the ${opening} block is not closed`;
      scan.add(fn.draft, format, pos, fn.end, block);
      pos = skipSpace(text, fn.end);
    }
    return block.end;
  },
};

/** `<function=NAME>...</function>` without the `<tool_call>` around it. */
function readBare(scan: Scan, at: number): number {
  const text = scan.text;
  if (isJsonBody(text, at)) return -1;
  const fn = readFunction(scan, at, text.length);
  if (!fn) return -1;
  if (fn.cutOff) {
    scan.unreadable("qwen_xml", at, `the call to "${fn.draft.name}" is cut off by the end of the text`);
    return at + FUNCTION.length; // later markup in the rest of the text is still read
  }
  const block = { start: at, end: fn.end };
  widen(text, block, "", "</tool_call>"); // the opening tag was dropped
  scan.add(fn.draft, "qwen_xml", at, fn.end, block);
  return block.end;
}

/** Whether the `<function=NAME>` at `at` is followed by JSON (Functionary) rather than parameters. */
function isJsonBody(text: string, at: number): boolean {
  HEADER.lastIndex = at;
  const m = HEADER.exec(text);
  return m !== null && text[skipSpace(text, at + m[0].length)] === "{";
}

/** Reads `<function=NAME>` and its parameters up to `limit`; undefined when there is no header. */
function readFunction(
  scan: Scan,
  at: number,
  limit: number,
): { draft: CallDraft; end: number; cutOff: boolean } | undefined {
  const text = scan.text;
  HEADER.lastIndex = at;
  const head = HEADER.exec(text);
  if (!head) {
    if (text.length - at < 260 && !text.includes(">", at)) scan.ranOut(at);
    return undefined;
  }
  const name = unquote(head[1].trim());
  const from = at + head[0].length;
  const close = scan.find("</function>", from);
  const closed = close >= 0 && close <= limit;
  let fnEnd = closed ? close : limit;
  if (!closed) {
    const next = scan.find(FUNCTION, from);
    if (next >= 0 && next < fnEnd) fnEnd = next;
    if (fnEnd === text.length) scan.ranOut(at);
  }
  const args: Record<string, unknown> = {};
  let pos = from;
  let count = 0;
  let lastClosed = false; // whether the last value read ended at its own closing tag (or the next one's start)
  while (pos < fnEnd) {
    const p = scan.find(PARAM, pos);
    if (p < 0 || p >= fnEnd) break;
    const keyEnd = boundedIndexOf(text, ">", p + PARAM.length, 300);
    if (keyEnd < 0 || keyEnd >= fnEnd) break;
    const key = unquote(text.slice(p + PARAM.length, keyEnd).trim());
    let valueEnd = scan.find("</parameter>", keyEnd + 1);
    const nextParam = scan.find(PARAM, keyEnd + 1);
    if (valueEnd < 0 || valueEnd > fnEnd) valueEnd = fnEnd;
    if (nextParam >= 0 && nextParam < valueEnd) valueEnd = nextParam; // a dropped </parameter>
    const value = trimOneNewline(text.slice(keyEnd + 1, valueEnd));
    defineOwn(args, key, scan.typer.text(name, key, value, { nulls: true, untypedAsText: true }));
    count++;
    const valueClosed = text.startsWith("</parameter>", valueEnd);
    pos = valueClosed ? valueEnd + "</parameter>".length : valueEnd;
    lastClosed = valueClosed || valueEnd === nextParam;
  }
  // A value that runs into the end of the text is cut off: running the call would use a truncated value.
  const cutOff = !closed && fnEnd === text.length && (count === 0 || !lastClosed);
  const end = closed ? close + "</function>".length : fnEnd;
  const draft: CallDraft = { name, arguments: args };
  if (!closed) {
    draft.error = "the <function=...> block is not closed";
    if (count === 0) draft.arguments = text.slice(at, end);
  }
  return { draft, end, cutOff };
}

function unquote(s: string): string {
  return s.length >= 2 && (s[0] === '"' || s[0] === "'") && s.endsWith(s[0]) ? s.slice(1, -1) : s;
}

/*
 * GLM-4.5, 4.6 and 4.7 (also Ling and Spark): the tool name right after `<tool_call>`, then key/value tags:
 *
 * ```
 * <tool_call>NAME
 * <arg_key>KEY</arg_key>
 * <arg_value>VALUE</arg_value>
 * </tool_call>
 * ```
 *
 * A call with no arguments is `<tool_call>NAME</tool_call>` (4.7) or `<tool_call>NAME\n</tool_call>` (4.5 and 4.6,
 * whose template ends the name's line before the pairs that are not there).
 */

const GLM_OPEN = "<tool_call>";
const GLM_CLOSE = "</tool_call>";
/** The tool name: made on first use (a Unicode-property expression costs a little to create). */
const nameAt = lazy(() => /[\p{L}\p{N}_][\p{L}\p{N}_.:\/-]{0,255}/uy);

/** GLM `<tool_call>NAME<arg_key>...` calls. */
export const glm: Reader = {
  name: "glm",
  markers: [GLM_OPEN],
  read(scan, at) {
    const text = scan.text;
    const body = bodyOf(scan, at + GLM_OPEN.length, [GLM_CLOSE], [GLM_OPEN]);
    const p = skipSpace(text, body.start);
    const name = nameAt();
    name.lastIndex = p;
    const m = name.exec(text);
    if (!m || p + m[0].length > body.end) return -1;
    const nameEnd = p + m[0].length;
    const q = skipGlmSpace(text, nameEnd);
    const block = { start: at, end: body.blockEnd };
    if (q >= body.end) {
      if (!body.closed) {
        // `<tool_call>NAME` so far: arguments may follow, unless the next `<tool_call>` cut the body off
        if (body.end === text.length) scan.ranOut(at);
        return -1;
      }
      // No arguments: GLM writes the name right after the tag, then at most a line break (or a written `\n`);
      // prose that names the Hermes tags (`<tool_call> and </tool_call>`) has a space before the word. With
      // tools given, the name must be declared, as for call-shaped text without a marker.
      if (p !== body.start) return -1;
      scan.add({ name: m[0], arguments: {} }, "glm", p, nameEnd, block, { weak: true });
      return block.end;
    }
    if (!text.startsWith("<arg_key>", q)) return -1;
    const args = readPairs(scan, m[0], q, body.end);
    if (!body.closed) scan.ranOut(at);
    if (args.cutOff) {
      // Running the call would use a truncated value (or miss the arguments still to come).
      scan.unreadable("glm", at, `the call to "${m[0]}" is cut off by the end of the text`);
      return block.end;
    }
    const draft = body.closed ? { name: m[0], arguments: args.values } : {
      name: m[0],
      arguments: args.values,
      error: "the <tool_call> block is not closed",
    };
    scan.add(draft, "glm", p, args.end, block);
    return block.end;
  },
};

/**
 * White space between GLM's tags from `pos`, where a written `\n` (backslash and n, as some GLM outputs
 * escape their line breaks and SGLang's parser accepts) counts as a line break.
 */
function skipGlmSpace(text: string, pos: number): number {
  for (;;) {
    pos = skipSpace(text, pos);
    if (text[pos] === "\\" && text[pos + 1] === "n") pos += 2;
    else return pos;
  }
}

/** Reads `<arg_key>K</arg_key><arg_value>V</arg_value>` pairs from `pos` up to `limit`. */
function readPairs(scan: Scan, tool: string, pos: number, limit: number): {
  values: Record<string, unknown>;
  end: number;
  cutOff: boolean;
} {
  const text = scan.text;
  const values: Record<string, unknown> = {};
  let end = pos;
  let open = false; // the last value read has no closing tag
  while (text.startsWith("<arg_key>", pos)) {
    const keyEnd = scan.find("</arg_key>", pos);
    if (keyEnd < 0 || keyEnd > limit) break;
    const key = text.slice(pos + "<arg_key>".length, keyEnd).trim();
    const v = skipGlmSpace(text, keyEnd + "</arg_key>".length);
    if (!text.startsWith("<arg_value>", v)) break;
    let valueEnd = scan.find("</arg_value>", v);
    const closed = valueEnd >= 0 && valueEnd <= limit;
    if (!closed) valueEnd = limit;
    const raw = trimOneNewline(text.slice(v + "<arg_value>".length, valueEnd));
    defineOwn(values, key, scan.typer.text(tool, key, raw, { python: true }));
    end = closed ? valueEnd + "</arg_value>".length : valueEnd;
    open = !closed;
    pos = skipGlmSpace(text, end);
  }
  // At the end of the text, a value without its closing tag or a pair begun and not finished is cut off.
  const rest = text.slice(pos, limit);
  const partialPair = rest.startsWith("<arg_") || (rest !== "" && "<arg_key>".startsWith(rest));
  const cutOff = limit === text.length && (open || partialPair);
  return { values, end, cutOff };
}

/*
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
 * The same grammar with a prefix on the element names: DeepSeek V3.2 DSML (`<\uff5cDSML\uff5cinvoke>`, where
 * `string="true"` marks a value as text and `string="false"` as JSON), Step3 (`<steptml:invoke>`, inside
 * DeepSeek-style section tokens, read by `deepseek` in `tokens.ts`) and Muse Glimmer (`<atem:invoke>`).
 * MiniMax M3 names each argument by its element (`<city>Paris</city>`) and writes a separator token
 * `]<]minimax[>[` before every tag; the separator is skipped. GigaChat 3.5 writes DSML's grammar under `<\uff5cGCML\uff5c...>`.
 */

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
  /** How values are read beyond the declared schema (Python literals for Step3, `null` for MiniMax). */
  typing?: TextTyping;
}

/** The element prefix and value conventions of one invoke grammar. */
export type InvokeSyntax = Pick<Wrapper, "prefix" | "stringByDefault" | "trimValues" | "typing">;

const INVOKE_WRAPPERS: readonly Wrapper[] = [
  // MiniMax's parsers (its own, vLLM's, Ollama's) strip each value and read `null` as null whatever the type.
  {
    open: "<minimax:tool_call>",
    close: "</minimax:tool_call>",
    prefix: "",
    format: "minimax",
    trimValues: true,
    typing: { nulls: true },
  },
  { open: "<tool_call>", close: "</tool_call>", prefix: "", format: "minimax" },
  {
    open: "<\uff5cDSML\uff5cfunction_calls>",
    close: "</\uff5cDSML\uff5cfunction_calls>",
    prefix: "\uff5cDSML\uff5c",
    format: "deepseek_dsml",
  },
  {
    open: "<\uff5cDSML\uff5ctool_calls>",
    close: "</\uff5cDSML\uff5ctool_calls>",
    prefix: "\uff5cDSML\uff5c",
    format: "deepseek_dsml",
  },
  {
    open: "<\uff5cGCML\uff5ctool_calls>",
    close: "</\uff5cGCML\uff5ctool_calls>",
    prefix: "\uff5cGCML\uff5c",
    format: "gigachat",
    stringByDefault: true,
  },
  { open: "<atem:function_calls>", close: "</atem:function_calls>", prefix: "atem:", format: "glimmer" },
  { open: "<function_calls>", close: "</function_calls>", prefix: "", format: "invoke_xml" },
];
const BARE: readonly Wrapper[] = [
  {
    open: "<steptml:invoke",
    close: "",
    prefix: "steptml:",
    format: "step3",
    trimValues: true,
    typing: { python: true },
  },
  { open: "<invoke name=", close: "", prefix: "", format: "invoke_xml" },
];
const BY_OPEN = new Map<string, Wrapper>([...INVOKE_WRAPPERS, ...BARE].map((w) => [w.open, w]));

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
      if (one.cutOff) {
        cutOff(scan, w.format, at, one.draft.name);
        return at + opening.length; // later markup in the rest of the text is still read
      }
      scan.add(one.draft, w.format, at, one.end, { start: at, end: one.end });
      return one.end;
    }
    const body = bodyOf(scan, at + opening.length, [w.close], [opening]);
    let pos = skipFiller(text, body.start, body.end);
    if (pos >= body.end && !body.closed && body.end === text.length) scan.ranOut(at); // (not cut off by the next)
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
        if (!body.closed) block.end = pos + 1; // later markup in the rest of the text is still read
        break;
      }
      if (!body.closed) one.draft.error ??= `the ${opening} block is not closed`;
      scan.add(one.draft, w.format, pos, one.end, block);
      pos = skipFiller(text, one.end, body.end);
    }
    return block.end;
  },
};

/** Reports a call cut off by the end of the text (running it would use truncated values). */
function cutOff(scan: Scan, format: ExtractFormat, at: number, name: string): void {
  scan.unreadable(format, at, `the call to "${name}" is cut off by the end of the text`);
}

/** White space and MiniMax separators from `pos`, up to `limit`. */
function skipFiller(text: string, pos: number, limit: number): number {
  for (;;) {
    while (pos < limit && isSpace(text, pos)) pos++;
    if (text.startsWith(MINIMAX_SEPARATOR, pos)) pos += MINIMAX_SEPARATOR.length;
    else return pos;
  }
}

/**
 * An attribute's value from the text inside a tag. MiniMax's parser takes the name as whatever stands between
 * `name=` and `>`, quotes removed, so an unquoted value (`<invoke name=get_weather>`) counts too.
 */
function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'/>]+))`).exec(tag);
  return m ? decodeEntities(m[1] ?? m[2] ?? m[3]) : undefined;
}

/**
 * Reads one `<PREFIXinvoke name="...">...</PREFIXinvoke>` at `at`, up to `limit`: the call and the index past it.
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

/** The arguments between an invoke's tags: `<PREFIXparameter name="K">V</...>` or MiniMax M3's `<K>V</K>`. */
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
    let named = false; // MiniMax M3: the element is named by the argument
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
      named = true;
    }
    if (key === undefined) break;
    let valueEnd = scan.find(close, valueStart);
    open = valueEnd < 0 || valueEnd > limit;
    if (open) valueEnd = limit;
    const raw = text.slice(valueStart, valueEnd).split(MINIMAX_SEPARATOR).join("");
    const nested = named && !scan.typer.mayBeString(tool, key) ? elementsValue(raw, 0) : FAIL;
    defineOwn(
      args,
      key,
      nested !== FAIL
        ? nested
        : valueOf(scan, { tool, key, raw, kind, trim: syntax.trimValues, typing: syntax.typing }),
    );
    pos = skipFiller(text, Math.min(limit, valueEnd + close.length), limit);
  }
  // At the end of the text, a value without its closing tag or a tag begun and not finished is cut off.
  return { args, cutOff: limit === text.length && (open || pos < limit) };
}

/** An element's opening tag: made on first use, as `nameAt` is. */
const element = lazy(() => /<([\p{L}\p{N}_][\p{L}\p{N}_.:-]{0,127})>/uy);
const MAX_ELEMENT_DEPTH = 16;

/**
 * MiniMax M3 writes an object argument as one element per member (`<address><city>Paris</city></address>`) and
 * an array as `<item>` elements, recursively. `text` (separators removed) read so, or {@link FAIL} when it is
 * not wholly elements; leaves are read as {@link inferText} does. Each level scans its text once, and the
 * depth is bounded, so the work stays linear.
 */
function elementsValue(text: string, depth: number): unknown {
  let pos = skipSpace(text, 0);
  if (depth > MAX_ELEMENT_DEPTH || text[pos] !== "<") return FAIL;
  const members: [string, unknown][] = [];
  while (pos < text.length) {
    const tag = element();
    tag.lastIndex = pos;
    const m = tag.exec(text);
    if (!m) return FAIL;
    const start = pos + m[0].length;
    const end = text.indexOf(`</${m[1]}>`, start);
    if (end < 0) return FAIL;
    const inner = text.slice(start, end);
    const value = text[skipSpace(text, start)] === "<" && skipSpace(text, start) < end
      ? elementsValue(inner, depth + 1)
      : inferText(trimOneNewline(inner));
    if (value === FAIL) return FAIL;
    members.push([m[1], value]);
    pos = skipSpace(text, end + m[1].length + 3);
  }
  if (members.every(([name]) => name === "item")) return members.map(([, v]) => v);
  const out: Record<string, unknown> = {};
  for (const [name, v] of members) defineOwn(out, name, v);
  return out;
}

/**
 * A parameter's value: DSML's `string` attribute decides when present (`true`: the text exactly as written),
 * else the declared schema reads the text without its framing line breaks (or all surrounding space).
 */
function valueOf(
  scan: Scan,
  v: {
    tool: string;
    key: string;
    raw: string;
    kind: string | undefined;
    trim?: boolean;
    typing?: TextTyping;
  },
): unknown {
  if (v.kind === "true") return v.raw;
  if (v.kind === "false") {
    const parsed = parseJsonSafe(v.raw.trim());
    if (parsed.ok) return parsed.value;
  }
  return scan.typer.text(v.tool, v.key, v.trim ? v.raw.trim() : trimOneNewline(v.raw), v.typing);
}

/*
 * `<function name="NAME">...</function>`: with a JSON body it is the old Hermes variant that llama.cpp reads;
 * with `<param name="KEY">VALUE</param>` elements (optionally inside `<arguments>`, values optionally in
 * `<![CDATA[...]]>`) it is MiniCPM's XML.
 */

const FUNCTION_OPEN = "<function name=";
const FUNCTION_CLOSE = "</function>";

/** `<function name="...">` calls. */
export const functionTag: Reader = {
  name: "function_tag",
  markers: [FUNCTION_OPEN],
  read(scan, at) {
    const text = scan.text;
    const tagEnd = boundedIndexOf(text, ">", at, 300);
    if (tagEnd < 0) {
      if (text.length - at < 300) scan.ranOut(at);
      return -1;
    }
    const m = /^<function\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')/.exec(text.slice(at, tagEnd + 1));
    if (!m) return -1;
    const name = decodeEntities(m[1] ?? m[2]).trim();
    const p = skipSpace(text, tagEnd + 1);
    if (text[p] === "{") return readJsonBody(scan, at, name, p);
    return readParams(scan, at, name, p);
  },
};

function readJsonBody(scan: Scan, at: number, name: string, p: number): number {
  const text = scan.text;
  const item = readFirstValue(scan, at, p, FUNCTION_OPEN);
  if (!item) return -1;
  const block = { start: at, end: item.end };
  widen(text, block, "", FUNCTION_CLOSE);
  widen(text, block, "<tool_call>", "</tool_call>");
  scan.add(draftFromValue({ name, arguments: item.value }), "hermes", p, item.end, block);
  return block.end;
}

function readParams(scan: Scan, at: number, name: string, p: number): number {
  const text = scan.text;
  const args: Record<string, unknown> = {};
  let pos = p;
  let cut = false; // the text ends inside a <param> element: more text may finish it
  const wrapped = text.startsWith("<arguments>", pos);
  if (wrapped) pos = skipSpace(text, pos + "<arguments>".length);
  while (text.startsWith("<param", pos)) {
    const tagEnd = boundedIndexOf(text, ">", pos, 300);
    if (tagEnd < 0) {
      cut = text.length - pos < 300;
      break;
    }
    const m = /^<param\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>$/.exec(text.slice(pos, tagEnd + 1));
    if (!m) break;
    const key = decodeEntities(m[1] ?? m[2]).trim();
    const value = readValue(scan, tagEnd + 1);
    if (value === "cut") cut = true;
    if (!value || value === "cut") break;
    defineOwn(args, key, value.cdata ? value.text : scan.typer.text(name, key, value.text));
    pos = skipSpace(text, value.end);
  }
  if (wrapped && text.startsWith("</arguments>", pos)) pos = skipSpace(text, pos + "</arguments>".length);
  const closed = text.startsWith(FUNCTION_CLOSE, pos);
  if (!closed) {
    if (cut || isCutOffTag(text, pos)) pos = text.length;
    if (skipSpace(text, pos) >= text.length) scan.ranOut(at);
    else return -1; // not this grammar
  }
  const end = closed ? pos + FUNCTION_CLOSE.length : pos;
  const draft = closed
    ? { name, arguments: args }
    : { name, arguments: args, error: "the <function> block is not closed" };
  scan.add(draft, "minicpm", at, end, { start: at, end });
  return end;
}

/** Whether the text from `pos` on is the start of a tag of the grammar that the end of the text cut off. */
function isCutOffTag(text: string, pos: number): boolean {
  return pos < text.length && ["<param", "</arguments>", FUNCTION_CLOSE].some((t) => isCutOff(text, pos, t));
}

/**
 * A `<param>` value starting at `from`, through its `</param>`: CDATA is taken as written. `"cut"` when the
 * text ends before the value's closer: more text may still finish it.
 */
function readValue(
  scan: Scan,
  from: number,
): { text: string; cdata: boolean; end: number } | "cut" | undefined {
  const text = scan.text;
  const start = skipSpace(text, from);
  if (text.startsWith("<![CDATA[", start)) {
    const cdEnd = scan.find("]]>", start);
    if (cdEnd < 0) return "cut";
    const close = skipSpace(text, cdEnd + 3);
    if (!text.startsWith("</param>", close)) return isCutOff(text, close, "</param>") ? "cut" : undefined;
    return {
      text: text.slice(start + "<![CDATA[".length, cdEnd),
      cdata: true,
      end: close + "</param>".length,
    };
  }
  const close = scan.find("</param>", from);
  if (close < 0) return "cut";
  return {
    text: decodeEntities(text.slice(from, close)).trim(),
    cdata: false,
    end: close + "</param>".length,
  };
}

/** Whether the text from `pos` on is a proper start of `tag` (or nothing): the end of the text cut it off. */
function isCutOff(text: string, pos: number, tag: string): boolean {
  return text.length - pos < tag.length && tag.startsWith(text.slice(pos));
}
