/**
 * `<function name="NAME">…</function>`: with a JSON body it is the old Hermes variant that llama.cpp reads;
 * with `<param name="KEY">VALUE</param>` elements (optionally inside `<arguments>`, values optionally in
 * `<![CDATA[…]]>`) it is MiniCPM's XML.
 *
 * @module
 */
import { draftFromValue, readJsonRun } from "../json_calls.ts";
import type { Scan } from "../scan.ts";
import type { Reader } from "../reader.ts";
import { widen } from "../markup.ts";
import { boundedIndexOf, decodeEntities, defineOwn, skipSpace } from "../text.ts";

const OPEN = "<function name=";
const CLOSE = "</function>";

/** `<function name="…">` calls. */
export const functionTag: Reader = {
  name: "function_tag",
  markers: [OPEN],
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
  const run = readJsonRun(text, p, text.length);
  if (run.items.length === 0) {
    if (run.open) scan.ranOut(at);
    return -1;
  }
  const item = run.items[0];
  const block = { start: at, end: item.end };
  widen(text, block, "", CLOSE);
  widen(text, block, "<tool_call>", "</tool_call>");
  scan.add(draftFromValue({ name, arguments: item.value }), "hermes", p, item.end, block);
  return block.end;
}

function readParams(scan: Scan, at: number, name: string, p: number): number {
  const text = scan.text;
  const args: Record<string, unknown> = {};
  let pos = p;
  const wrapped = text.startsWith("<arguments>", pos);
  if (wrapped) pos = skipSpace(text, pos + "<arguments>".length);
  while (text.startsWith("<param", pos)) {
    const tagEnd = boundedIndexOf(text, ">", pos, 300);
    if (tagEnd < 0) break;
    const m = /^<param\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>$/.exec(text.slice(pos, tagEnd + 1));
    if (!m) break;
    const key = decodeEntities(m[1] ?? m[2]).trim();
    const value = readValue(scan, tagEnd + 1);
    if (!value) break;
    defineOwn(args, key, value.cdata ? value.text : scan.typer.text(name, key, value.text));
    pos = skipSpace(text, value.end);
  }
  if (wrapped && text.startsWith("</arguments>", pos)) pos = skipSpace(text, pos + "</arguments>".length);
  const closed = text.startsWith(CLOSE, pos);
  if (!closed) {
    if (skipSpace(text, pos) >= text.length) scan.ranOut(at);
    else return -1; // not this grammar
  }
  const end = closed ? pos + CLOSE.length : pos;
  const draft = closed
    ? { name, arguments: args }
    : { name, arguments: args, error: "the <function> block is not closed" };
  scan.add(draft, "minicpm", at, end, { start: at, end });
  return end;
}

/** A `<param>` value starting at `from`, through its `</param>`: CDATA is taken as written. */
function readValue(scan: Scan, from: number): { text: string; cdata: boolean; end: number } | undefined {
  const text = scan.text;
  const start = skipSpace(text, from);
  if (text.startsWith("<![CDATA[", start)) {
    const cdEnd = scan.find("]]>", start);
    if (cdEnd < 0) return undefined;
    const close = skipSpace(text, cdEnd + 3);
    if (!text.startsWith("</param>", close)) return undefined;
    return {
      text: text.slice(start + "<![CDATA[".length, cdEnd),
      cdata: true,
      end: close + "</param>".length,
    };
  }
  const close = scan.find("</param>", from);
  if (close < 0) return undefined;
  return {
    text: decodeEntities(text.slice(from, close)).trim(),
    cdata: false,
    end: close + "</param>".length,
  };
}
