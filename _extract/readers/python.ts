/**
 * Readers of calls written as code: Python call lists (Llama 3.2 and 4, LFM2, OLMo 3) and the Gemma
 * `call:NAME{...}` notations.
 *
 * @module
 */
import { addJsonCalls, readJsonRun } from "../json_calls.ts";
import { LiteralReader, type LiteralSyntax, PYTHON } from "../literal.ts";
import { type Body, bodyOf, boundedIndexOf, skipSpace, trimEnd } from "../text.ts";
import type { Reader } from "../reader.ts";
import type { Scan } from "../scan.ts";
import type { ExtractFormat } from "../types.ts";

/*
 * Calls written as Python: a list `[get_weather(city='Paris'), search(q="x")]` with keyword arguments and
 * Python literals. Bare in the text (Llama 3.2 and 4 pythonic, told apart from a markdown link `[text](url)`
 * because the name is followed at once by `(` inside the brackets), after `<|python_start|>` (Llama 4), between
 * `<|tool_call_start|>` and `<|tool_call_end|>` (LFM2, which may also write JSON there), and between
 * `<function_calls>` tags one call per line, brackets optional (OLMo 3).
 */

interface Drafted {
  name: string;
  args: Record<string, unknown>;
  start: number;
  end: number;
}

/**
 * Reads Python calls from `pos` up to `limit`: a bracketed list, or (with `bare`) calls one after another
 * separated by white space, commas or semicolons. Returns the calls and the index past them, or the reason
 * nothing could be read (and the offset, for a named call whose arguments broke).
 */
function readCalls(
  text: string,
  pos: number,
  limit: number,
  options: { brackets: "required" | "optional"; syntax?: LiteralSyntax },
): { calls: Drafted[]; end: number } | { error: string; name: string; at: number; cutOff: boolean } {
  const reader = new LiteralReader(text, pos, limit, options.syntax ?? PYTHON);
  const bracketed = reader.eat("[");
  const fail = (error: string, name: string, at: number) => ({
    error,
    name,
    at,
    cutOff: reader.pos >= limit,
  });
  if (!bracketed && options.brackets === "required") return fail("no list", "", pos);
  const calls: Drafted[] = [];
  for (;;) {
    reader.space();
    if (bracketed && reader.eat("]")) break;
    if (!bracketed && (reader.pos >= limit || !/[A-Za-z_]/.test(text[reader.pos]))) break;
    const start = reader.pos;
    const call = reader.call();
    if ("error" in call) return fail(call.error, call.name, start);
    calls.push({ name: call.name, args: call.args, start, end: reader.pos });
    if (
      !reader.eat(",") && !reader.eat(";") && bracketed && !text.startsWith("]", skipSpace(text, reader.pos))
    ) {
      return fail("expected , or ]", "", reader.pos);
    }
  }
  if (calls.length === 0) return fail("no call", "", pos);
  return { calls, end: reader.pos };
}

function addCalls(
  scan: Scan,
  calls: Drafted[],
  format: ExtractFormat,
  block: { start: number; end: number },
  weak: boolean,
): number {
  let n = 0;
  // A bare list counts only as a whole: one undeclared or unreadable name and it is prose.
  if (weak && !calls.every((c) => scan.typer.isDeclared(c.name))) {
    for (const c of calls) {
      if (!scan.typer.isDeclared(c.name)) {
        scan.add({ name: c.name, arguments: c.args }, format, c.start, c.end, block, { weak });
      }
    }
    return 0;
  }
  for (const c of calls) {
    const draft = { name: c.name, arguments: scan.typer.literalArgs(c.name, c.args) };
    if (scan.add(draft, format, c.start, c.end, block)) n++;
  }
  return n;
}

/** A bare Python call list anywhere in the text. */
export const pythonicList: Reader = {
  name: "pythonic",
  markers: [],
  shape: /\[\s*[A-Za-z_][\w.-]*\s*\(/y,
  read(scan, at) {
    const text = scan.text;
    const limit = Math.min(text.length, at + scan.allowance());
    const got = readCalls(text, at, limit, { brackets: "required" });
    scan.spend(("error" in got ? got.at : got.end) - at + 1);
    if ("error" in got) {
      if (got.cutOff && limit === text.length) scan.ranOut(at);
      return -1;
    }
    return addCalls(scan, got.calls, "pythonic", { start: at, end: got.end }, true) > 0 ? got.end : -1;
  },
};

/**
 * The body of a block between `open` (at `at`) and `close`, with its start and end trimmed of white space and
 * the block it spans; an unclosed body tells the scan that the text ran out (a stream may still close it).
 */
function tagBody(
  scan: Scan,
  at: number,
  tags: { open: string; close: string },
): { body: Body; block: { start: number; end: number }; start: number; limit: number } {
  const body = bodyOf(scan, at + tags.open.length, [tags.close], [tags.open]);
  const start = skipSpace(scan.text, body.start);
  const limit = trimEnd(scan.text, start, body.end);
  if (!body.closed) scan.ranOut(at);
  return { body, block: { start: at, end: body.blockEnd }, start, limit };
}

interface PythonTagSpec {
  name: string;
  format: ExtractFormat;
  open: string;
  close: string;
  brackets: "required" | "optional";
  /** A second, lenient reading tried when the Python one fails (LFM2's bare words). */
  lenient?: LiteralSyntax;
}

/** A reader for Python calls between two tags. */
function pythonTag(spec: PythonTagSpec): Reader {
  return {
    name: spec.name,
    markers: [spec.open],
    read(scan, at) {
      const text = scan.text;
      const { body, block, start: p, limit } = tagBody(scan, at, spec);
      if (p >= limit) return body.closed ? block.end : -1;
      if (text[p] === "{" || (text[p] === "[" && text[skipSpace(text, p + 1)] === "{")) {
        const run = readJsonRun(text, p, limit); // LFM2 also writes JSON calls here
        if (run.items.length > 0 && addJsonCalls(scan, run.items, { format: spec.format, block }) > 0) {
          return block.end;
        }
      }
      let got = readCalls(text, p, limit, { brackets: spec.brackets });
      if ("error" in got && spec.lenient) {
        const again = readCalls(text, p, limit, { brackets: spec.brackets, syntax: spec.lenient });
        if (!("error" in again)) got = again;
      }
      if ("error" in got) {
        if (got.name !== "" && body.closed) {
          const raw = text.slice(got.at, limit);
          scan.add({ name: got.name, arguments: raw, error: got.error }, spec.format, got.at, limit, block);
        } else scan.unreadable(spec.format, at, got.error);
        return body.closed ? block.end : -1;
      }
      addCalls(scan, got.calls, spec.format, block, false);
      return block.end;
    },
  };
}

/** Llama 4 `<|python_start|>[...]<|python_end|>`. */
export const llama4Pythonic: Reader = pythonTag({
  name: "llama4_pythonic",
  format: "pythonic",
  open: "<|python_start|>",
  close: "<|python_end|>",
  brackets: "optional",
});

/** LFM2 `<|tool_call_start|>[...]<|tool_call_end|>`. */
export const lfm2: Reader = pythonTag({
  name: "lfm2",
  format: "lfm2",
  open: "<|tool_call_start|>",
  close: "<|tool_call_end|>",
  brackets: "optional",
  // Ollama's LFM2 parser reads an unquoted value that is no literal as text (`city=Paris`).
  lenient: { quotes: `"'`, bareWords: true, wordEnds: ",)]\n" },
});

/** OLMo 3 `<function_calls>f(a=1)\ng()</function_calls>`. */
export const olmo3: Reader = pythonTag({
  name: "olmo3",
  format: "olmo3",
  open: "<function_calls>",
  close: "</function_calls>",
  brackets: "optional",
});

/*
 * Gemma 4 `<|tool_call>call:NAME{key:value,...}<tool_call|>` and FunctionGemma
 * `<start_function_call>call:NAME{key:value,...}<end_function_call>`: bare keys, strings between `<|"|>`
 * (Gemma 4) or `<escape>` (FunctionGemma) tokens, JSON numbers and literals, nested objects and lists.
 */

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
      const { body, block, start, limit } = tagBody(scan, at, spec);
      if (start >= limit) return body.closed ? block.end : -1;
      let pos = start;
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
  // Gemma 4 sometimes quotes a value with ' instead of its <|"|> token; Ollama's parser reads it as a string.
  syntax: { quotes: `"'`, tokens: ['<|"|>'], bareKeys: true, bareWords: true },
});

/** FunctionGemma calls. */
export const functionGemma: Reader = gemmaReader({
  name: "function_gemma",
  format: "function_gemma",
  open: "<start_function_call>",
  close: "<end_function_call>",
  syntax: { quotes: '"', tokens: ["<escape>"], bareKeys: true, bareWords: true },
});
