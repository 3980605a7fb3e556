/**
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
 * read. A `<function=NAME>` followed by JSON is Functionary v3.1, read by `functionary.ts`.
 *
 * @module
 */
import type { CallDraft, Scan } from "../scan.ts";
import { bodyOf, widen } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { boundedIndexOf, defineOwn, skipSpace, trimOneNewline } from "../text.ts";
import type { ExtractFormat } from "../types.ts";

const FUNCTION = "<function=";
const HEADER = /<function=([^>\n]{1,128})>/y;
const PARAM = "<parameter=";
const WRAPPERS: Record<string, { close: string; format: ExtractFormat }> = {
  "<tool_call>": { close: "</tool_call>", format: "qwen_xml" },
  "<seed:tool_call>": { close: "</seed:tool_call>", format: "seed_oss" },
};

/** Qwen3-Coder and Seed-OSS XML calls. */
export const qwenXml: Reader = {
  name: "qwen_xml",
  markers: [...Object.keys(WRAPPERS), FUNCTION],
  read(scan, at, opening) {
    const text = scan.text;
    if (opening === FUNCTION) return readBare(scan, at);
    const { close, format } = WRAPPERS[opening];
    const body = bodyOf(scan, at + opening.length, [close], [opening]);
    const p = skipSpace(text, body.start);
    if (p >= body.end && !body.closed) scan.ranOut(at);
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

/** `<function=NAME>…</function>` without the `<tool_call>` around it. */
function readBare(scan: Scan, at: number): number {
  const text = scan.text;
  if (isJsonBody(text, at)) return -1;
  const fn = readFunction(scan, at, text.length);
  if (!fn) return -1;
  if (fn.cutOff) {
    scan.unreadable("qwen_xml", at, `the call to "${fn.draft.name}" is cut off by the end of the text`);
    return text.length;
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
    defineOwn(args, key, scan.typer.text(name, key, value));
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
