/**
 * Readers of calls written as JSON: behind a tag (Hermes, Granite, Nemotron and the rest of the table in
 * `registry.ts`), where the answer begins, in a fence, after Mistral's `[TOOL_CALLS]`, after Llama's
 * `<|python_tag|>`, and after Functionary's `<function=NAME>` or `>>>NAME`.
 *
 * @module
 */
import { parseJsonSafe } from "../../_common/json.ts";
import {
  addJsonCalls,
  draftFromValue,
  holdsCalls,
  isCallShaped,
  readFirstValue,
  readJsonRun,
  salvageName,
} from "../json_calls.ts";
import { LiteralReader, PYTHON } from "../literal.ts";
import { bodyOf, jsonBody, scanValueEnd, skipSpace, trimEnd, widen } from "../text.ts";
import type { AnchoredReader, Reader } from "../reader.ts";
import type { CallDraft, Scan } from "../scan.ts";
import type { ExtractFormat } from "../types.ts";

/*
 * JSON behind a tag: `<tool_call>{...}</tool_call>` (Hermes, Qwen 2.5), `<|tool_call|>[...]` (Granite),
 * `<TOOLCALL>[...]</TOOLCALL>` (Nemotron), `<tool_calls>[...]</tool_calls>` (Jamba, MiniMax-M1, Apriel),
 * `functools[...]` (Phi-4, Firefunction) and the rest of the table in `registry.ts`. One grammar: an opening
 * tag, then a JSON call object, an array of them, or several objects in a row, then an optional closing tag.
 */

/** One JSON-behind-a-tag family. */
export interface JsonTagSpec {
  /** The reader's name. */
  name: string;
  /** The family reported on its calls. */
  format: ExtractFormat;
  /** The opening tags. */
  open: readonly string[];
  /** The closing tags; empty when the format writes none (the body then runs to the next opening tag). */
  close: readonly string[];
  /**
   * `strong`: the tag only ever holds calls, so a body that cannot be read is reported. `soft`: the tag is
   * also used for other content (old Hermes `<response>`, `<tools>`), so only call-shaped JSON counts.
   */
  strength: "strong" | "soft";
  /** The format always writes its closing tag: a call in a block without one is flagged. */
  flagUnclosed?: boolean;
  /** How one JSON value becomes a call (Apertus writes `{"NAME": {...}}`). */
  draft?: (value: unknown) => CallDraft;
}

/** A reader for one JSON-behind-a-tag family. */
export function jsonTag(spec: JsonTagSpec): Reader {
  return {
    name: spec.name,
    markers: spec.open,
    read: (scan, at, opening) => readJsonTag(scan, at, opening, spec),
  };
}

function readJsonTag(scan: Scan, at: number, opening: string, spec: JsonTagSpec): number {
  const text = scan.text;
  let body = jsonBody(scan, at + opening.length, spec.close, spec.open);
  const p = skipSpace(text, body.start);
  const cut = bodyOf(scan, body.start, spec.close, spec.open); // where the first closer ends it
  let limit = trimEnd(text, p, body.end);
  if (p >= limit) {
    // (nothing yet: the call may still come, unless the next opening tag cut the body off)
    if (!body.closed && body.end === text.length) scan.ranOut(at);
    return -1;
  }
  if (text[p] !== "{" && text[p] !== "[") {
    // Prose that mentions the tag, or other markup inside it (`<tool_call><function=f>{...}`) for its reader.
    if (spec.strength === "soft" || !body.closed || text[p] === "<") return -1;
    scan.unreadable(spec.format, at, `the text after ${opening} is not JSON`);
    return body.blockEnd;
  }
  let run = readJsonRun(text, p, limit);
  if (run.items.length === 0 && body.end !== cut.end) {
    // Read past the first closer, the JSON still does not parse: the block is what the closer cut.
    body = cut;
    limit = trimEnd(text, p, body.end);
    run = readJsonRun(text, p, limit);
  }
  if (run.items.length === 0) return unreadableRun(scan, at, opening, spec, body, p, limit, run);
  const block = { start: at, end: body.closed ? body.blockEnd : run.next };
  const before = scan.calls.length;
  const n = addJsonCalls(scan, run.items, {
    format: spec.format,
    block,
    requireShape: spec.strength === "soft",
    draft: spec.draft,
  });
  if (n === 0 && spec.strength === "soft") return -1;
  // Granite 3.1 writes `<tool_call>[...]` with no closing tag by design; a lone object is a cut-off block.
  if (!body.closed && spec.flagUnclosed && text[p] !== "[") {
    for (const c of scan.calls.slice(before)) c.error ??= `the ${opening} block is not closed`;
  }
  return block.end;
}

/** A strong tag whose JSON did not read: a call with the raw text when a name shows, else a finding. */
function unreadableRun(
  scan: Scan,
  at: number,
  opening: string,
  spec: JsonTagSpec,
  body: { closed: boolean; blockEnd: number; end: number },
  p: number,
  limit: number,
  run: { error?: string; open?: boolean },
): number {
  if (run.open && !body.closed && body.end === scan.text.length) scan.ranOut(at);
  if (spec.strength === "soft") return -1;
  const raw = scan.text.slice(p, limit);
  const name = body.closed ? salvageName(raw) : "";
  if (name !== "") {
    // The model meant a call and got the JSON wrong: the gate can tell it so.
    scan.add(
      { name, arguments: raw, error: `the call is not valid JSON: ${run.error}` },
      spec.format,
      p,
      limit,
      { start: at, end: body.blockEnd },
    );
  } else {
    scan.unreadable(spec.format, at, `the JSON after ${opening} is not valid (${run.error})`);
  }
  // Unclosed, the body runs on to the end: resume right after the tag so later calls are still read.
  return body.closed ? body.blockEnd : at + opening.length;
}

/*
 * JSON where the answer begins, with no marker: Llama 3 JSON (`{"name", "parameters"}`, several separated by
 * `;`, with prose after them), a JSON array of calls (xLAM, `tool_choice: required` outputs), the generic
 * `{"tool_calls": [...]}` wrapper. A message that opens with JSON that is not a call is a JSON answer: nothing
 * later in it is taken for a call quoted in prose.
 */

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
    const shaped = items.length > 0 && items.every((i) => holdsCalls(i.value));
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
    if (!holdsCalls(item.value)) break;
    out.push(item);
  }
  return out;
}

/** A call object quoted in prose: `Sure: {"name": "f", "arguments": {...}}`. Only call keys are allowed. */
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

/*
 * A fenced code block marked `json` (or unmarked, `tool_call`, `tool_code`) holding a call object or an
 * array of them, as small models write when told to answer with JSON (also Command R+ `Action:` blocks and
 * xLAM). JSON in a fence that is not shaped like a call is just JSON; a fence of another language is code and
 * is skipped whole, so nothing in it is read as a call.
 */

const FENCE = "```";
/** Fence languages that may hold calls. */
export const CALL_FENCE_LANGUAGES: readonly string[] = [
  "json",
  "jsonc",
  "json5",
  "tool_call",
  "tool_calls",
  "tool_code",
  "",
];
/** {@link CALL_FENCE_LANGUAGES} as one expression, for a language line's trimmed text. */
export const CALL_FENCE = new RegExp(`^(${CALL_FENCE_LANGUAGES.join("|")})$`, "i");
/** Fence languages whose content is other markup to read (a `<tool_call>` written inside ```xml). */
const MARKUP_FENCE = /^(xml|html)$/i;

/** Fenced JSON calls. */
export const fence: Reader = {
  name: "fence",
  markers: [FENCE],
  read(scan, at) {
    const text = scan.text;
    const lineEnd = scan.find("\n", at + 3);
    if (lineEnd < 0) {
      if (text.length - at < 40) scan.ranOut(at); // the language line is not finished yet
      return -1;
    }
    const lang = text.slice(at + 3, lineEnd).trim();
    const close = scan.find(FENCE, lineEnd + 1);
    if (MARKUP_FENCE.test(lang)) return -1;
    if (!CALL_FENCE.test(lang)) {
      if (close < 0) return -1;
      scan.codeFences.push({ start: lineEnd + 1, end: close, lang }); // code: skipped whole
      return close + 3;
    }
    if (close < 0) {
      scan.ranOut(at);
      return -1;
    }
    const block = { start: at, end: close + 3 };
    const start = skipSpace(text, lineEnd + 1);
    const end = trimEnd(text, start, close);
    if (text[start] !== "{" && text[start] !== "[") return lang === "" ? -1 : block.end;
    const run = readJsonRun(text, start, end);
    if (run.items.length === 0) return block.end;
    addJsonCalls(scan, run.items, { format: "fenced_json", block, requireShape: true, weak: true });
    return block.end;
  },
};

/*
 * Mistral `[TOOL_CALLS]`: a JSON array of calls (Mistral 7B v0.3, Nemo; optionally closed by `[/TOOL_CALLS]`),
 * `NAME[ARGS]{...}` with an optional `[CALL_ID]id` (tokenizer v11+: Ministral, Devstral, Magistral) or
 * `NAME{...}` (v11 without the `[ARGS]` token). Junk between the marker and the JSON is skipped, as vLLM does.
 */

const MISTRAL_TAG = "[TOOL_CALLS]";
const MISTRAL_CLOSE = "[/TOOL_CALLS]";
const MISTRAL_ENDS = ["</s>", MISTRAL_CLOSE];
const NAME = /[A-Za-z_][\w.-]{0,127}/y;

/** Mistral `[TOOL_CALLS]` calls. */
export const mistral: Reader = {
  name: "mistral",
  markers: [MISTRAL_TAG],
  read(scan, at) {
    const text = scan.text;
    const body = jsonBody(scan, at + MISTRAL_TAG.length, MISTRAL_ENDS, [MISTRAL_TAG]);
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
    return body.closed ? body.blockEnd : at + MISTRAL_TAG.length; // unclosed: later calls are still read
  },
};

/** `end`, moved past a `[/TOOL_CALLS]` that follows it (and the calls' shared block with it). */
function withClose(scan: Scan, end: number): number {
  const at = skipSpace(scan.text, end);
  if (!scan.text.startsWith(MISTRAL_CLOSE, at)) return end;
  const last = scan.calls[scan.calls.length - 1];
  if (last && last.block.end === end) last.block.end = at + MISTRAL_CLOSE.length;
  return at + MISTRAL_CLOSE.length;
}

function readJsonForm(scan: Scan, at: number, pos: number, limit: number): number {
  const run = readJsonRun(scan.text, pos, limit);
  if (run.items.length === 0) return -1;
  const block = { start: at, end: run.next };
  return addJsonCalls(scan, run.items, { format: "mistral", block }) > 0 ? run.next : -1;
}

/** `NAME[CALL_ID]id[ARGS]{...}`, `NAME[ARGS]{...}` or `NAME{...}`, possibly several in a row. */
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

/*
 * Llama 3.1+ after `<|python_tag|>`: JSON calls (`{"name", "parameters"}`, several separated by `;`) and the
 * built-in call syntax `brave_search.call(query="...")`, up to `<|eom_id|>` or `<|eot_id|>`. Any other text there is
 * raw code: a call to the declared `python` (or `ipython`) tool when there is one, else a finding.
 */

const PYTHON_TAG = "<|python_tag|>";
const ENDS = ["<|eom_id|>", "<|eot_id|>", "<|eom|>", "<|end_of_text|>"];

/** Llama `<|python_tag|>` calls. */
export const llama: Reader = {
  name: "llama",
  markers: [PYTHON_TAG],
  read(scan, at) {
    const text = scan.text;
    const body = jsonBody(scan, at + PYTHON_TAG.length, ENDS, [PYTHON_TAG]);
    let pos = skipSpace(text, body.start);
    const block = { start: at, end: body.blockEnd };
    const limit = trimEnd(text, body.start, body.end);
    if (pos >= limit) {
      if (!body.closed) scan.ranOut(at);
      return -1;
    }
    let found = 0;
    let read = at + PYTHON_TAG.length; // one past the last call read
    while (pos < limit) {
      if (text[pos] === "{" || text[pos] === "[") {
        const run = readJsonRun(text, pos, limit);
        if (run.items.length === 0) break;
        found += addJsonCalls(scan, run.items, { format: "llama_json", block });
        pos = read = run.next;
      } else {
        const end = readBuiltin(scan, pos, limit, block);
        if (end < 0) break;
        found++;
        pos = read = end;
      }
      pos = skipSpace(text, pos);
      if (text[pos] === ";" || text[pos] === ",") pos = skipSpace(text, pos + 1);
      else break;
    }
    const code = found === 0 ? scan.typer.codeTool() : undefined;
    if (code) {
      // A declared python tool takes the text as its code (Functionary v3.1, llama.cpp's raw python).
      if (!body.closed && body.end === text.length) scan.ranOut(at);
      const args = { [code.key]: text.slice(pos, limit) };
      scan.add({ name: code.name, arguments: args }, "llama_python", pos, limit, block);
      return block.end;
    }
    if (found === 0) {
      if (!body.closed && body.end === text.length) scan.ranOut(at);
      scan.unreadable(
        "llama_json",
        at,
        "the text after <|python_tag|> is neither JSON calls nor NAME.call(...)",
      );
    }
    // Unclosed, the body runs on to the end: what follows the calls read is left for the other readers.
    if (!body.closed) block.end = read;
    return block.end;
  },
};

/** `name.call(key=value, ...)` at `pos`: adds the call and returns its end, or `-1` when no call head is there. */
function readBuiltin(scan: Scan, pos: number, limit: number, block: { start: number; end: number }): number {
  const reader = new LiteralReader(scan.text, pos, limit, PYTHON);
  const call = reader.call();
  if (call.name === "") return -1;
  const name = call.name.endsWith(".call") ? call.name.slice(0, -".call".length) : call.name;
  if ("error" in call) {
    if (scan.typer.codeTool()) return -1; // not NAME.call(...): code for the declared python tool
    const raw = scan.text.slice(pos, limit);
    scan.add({ name, arguments: raw, error: call.error }, "llama_python", pos, limit, block);
    return limit;
  }
  scan.add(
    { name, arguments: scan.typer.literalArgs(name, call.args) },
    "llama_python",
    pos,
    reader.pos,
    block,
  );
  return reader.pos;
}

/*
 * Functionary. v3.1 (Llama 3.1 based): `<function=NAME>{...}</function>`, told apart from Qwen3-Coder XML by
 * the JSON right after the tag. v3.2: `>>>NAME\n{...}` per call, where the chat template's generation prompt
 * supplies the first `>>>`, so the answer may also open with `NAME\n{...}`; the recipient `all` means prose.
 */

const HEADER = /<function=([^>\n]{1,128})>/y;
const RECIPIENT = /([A-Za-z_][\w.-]{0,127})[ \t]*\r?\n/y;

/** Functionary `<function=NAME>{...}</function>` and `>>>NAME\n{...}`. */
export const functionary: Reader = {
  name: "functionary",
  markers: ["<function=", ">>>"],
  read(scan, at, opening) {
    if (opening === ">>>") return readRecipient(scan, at, at + 3, { weak: false });
    const text = scan.text;
    HEADER.lastIndex = at;
    const head = HEADER.exec(text);
    if (!head) return -1;
    const p = skipSpace(text, at + head[0].length);
    if (text[p] !== "{") return -1;
    const call = readFirstValue(scan, p, p, "<function=");
    if (!call) return -1;
    const block = { start: at, end: call.end };
    widen(text, block, "", "</function>");
    widen(text, block, "<tool_call>", "</tool_call>"); // old Hermes 2 Pro: <tool_call><function=f>{...}
    const draft = draftFromValue({ name: head[1].trim(), arguments: call.value });
    scan.add(draft, "functionary", p, call.end, block);
    return block.end;
  },
};

/**
 * `>>>python` followed by code rather than JSON: the code, up to the next recipient, is the argument of a call
 * to `python` (llama.cpp reads Functionary v3.2 so). The argument is named as the declared python tool names
 * its one string parameter, else `code`.
 */
function readRawPython(scan: Scan, at: number, p: number): number {
  const text = scan.text;
  const next = scan.find(">>>", p);
  const end = next < 0 ? text.length : next;
  const limit = trimEnd(text, p, end);
  if (next < 0) scan.ranOut(at); // more code may follow
  const key = scan.typer.codeTool()?.key ?? "code";
  scan.add({ name: "python", arguments: { [key]: text.slice(p, limit) } }, "functionary", p, limit, {
    start: at,
    end,
  });
  return end;
}

/** Functionary v3.2 when the answer opens with `NAME\n{...}` (the `>>>` was in the prompt). */
export const functionaryStart: AnchoredReader = {
  name: "functionary_start",
  read: (scan, at) => readRecipient(scan, at, at, { weak: true }),
};

/** `NAME\n{...}` from `from` (just after `>>>`, or the answer's start); `all` (prose) and other bodies decline. */
function readRecipient(scan: Scan, at: number, from: number, options: { weak: boolean }): number {
  const text = scan.text;
  RECIPIENT.lastIndex = from;
  const m = RECIPIENT.exec(text);
  if (!m) {
    if (/^[A-Za-z_][\w.-]{0,127}[ \t]*$/.test(text.slice(from, from + 140)) && text.length - from <= 140) {
      scan.ranOut(at); // the recipient line is not finished yet
    }
    return -1;
  }
  const name = m[1];
  if (name === "all") return -1;
  const p = skipSpace(text, from + m[0].length);
  if (p >= text.length) {
    scan.ranOut(at);
    return -1;
  }
  if (text[p] !== "{") return name === "python" && !options.weak ? readRawPython(scan, at, p) : -1;
  const call = readFirstValue(scan, p, p, ">>>");
  // A call object after a word line is a JSON call with a stray label (`json\n{"name": ...}`), not v3.2.
  if (!call || isCallShaped(call.value)) return -1;
  const draft = draftFromValue({ name, arguments: call.value });
  return scan.add(draft, "functionary", p, call.end, { start: at, end: call.end }, options) ? call.end : -1;
}
