/**
 * Gemma 4 `<|tool_call>call:NAME{key:value,…}<tool_call|>` and FunctionGemma
 * `<start_function_call>call:NAME{key:value,…}<end_function_call>`: bare keys, strings between `<|"|>`
 * (Gemma 4) or `<escape>` (FunctionGemma) tokens, JSON numbers and literals, nested objects and lists.
 *
 * @module
 */
import { LiteralReader, type LiteralSyntax } from "../literal.ts";
import type { Scan } from "../scan.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { boundedIndexOf, skipSpace, trimEnd } from "../text.ts";
import type { ExtractFormat } from "../types.ts";

interface GemmaSpec {
  name: string;
  format: ExtractFormat;
  open: string;
  close: string;
  syntax: LiteralSyntax;
}

/** A reader for one of the Gemma call notations. */
function gemmaReader(spec: GemmaSpec): Reader {
  return {
    name: spec.name,
    markers: [spec.open],
    read(scan, at) {
      const text = scan.text;
      const body = bodyOf(scan, at + spec.open.length, [spec.close], [spec.open]);
      const block = { start: at, end: body.blockEnd };
      let pos = skipSpace(text, body.start);
      const limit = trimEnd(text, pos, body.end);
      if (!body.closed) scan.ranOut(at);
      if (pos >= limit) return body.closed ? block.end : -1;
      let n = 0;
      while (text.startsWith("call:", pos) && pos < limit) {
        const end = readGemmaCall(scan, pos, limit, block, spec, body.closed);
        if (end < 0) break;
        n++;
        pos = skipSpace(text, end);
      }
      if (n === 0) {
        scan.unreadable(spec.format, at, `the text after ${spec.open} is not call:NAME{...}`);
        if (!body.closed) return -1;
      }
      return block.end;
    },
  };
}

function readGemmaCall(
  scan: Scan,
  at: number,
  limit: number,
  block: { start: number; end: number },
  spec: GemmaSpec,
  closed: boolean,
): number {
  const text = scan.text;
  const brace = boundedIndexOf(text, "{", at, 260);
  if (brace < 0 || brace >= limit) return -1;
  const name = text.slice(at + "call:".length, brace).trim();
  if (name === "" || /[\s{}]/.test(name)) return -1;
  const reader = new LiteralReader(text, brace, limit, spec.syntax);
  const args = reader.object();
  if (typeof args === "symbol") {
    if (!closed) return -1; // cut off: nothing to judge yet
    const raw = text.slice(brace, limit);
    scan.add(
      { name, arguments: raw, error: "the arguments could not be read" },
      spec.format,
      at,
      limit,
      block,
    );
    return limit;
  }
  scan.add({ name, arguments: scan.typer.literalArgs(name, args) }, spec.format, at, reader.pos, block);
  return reader.pos;
}

/** Gemma 4 calls. */
export const gemma: Reader = gemmaReader({
  name: "gemma",
  format: "gemma",
  open: "<|tool_call>",
  close: "<tool_call|>",
  syntax: { quotes: '"', tokens: ['<|"|>'], bareKeys: true, bareWords: true },
});

/** FunctionGemma calls. */
export const functionGemma: Reader = gemmaReader({
  name: "function_gemma",
  format: "function_gemma",
  open: "<start_function_call>",
  close: "<end_function_call>",
  syntax: { quotes: '"', tokens: ["<escape>"], bareKeys: true, bareWords: true },
});
