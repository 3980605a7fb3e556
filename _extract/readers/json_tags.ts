/**
 * JSON behind a tag: `<tool_call>{…}</tool_call>` (Hermes, Qwen 2.5), `<|tool_call|>[…]` (Granite),
 * `<TOOLCALL>[…]</TOOLCALL>` (Nemotron), `<tool_calls>[…]</tool_calls>` (Jamba, MiniMax-M1, Apriel),
 * `functools[…]` (Phi-4, Firefunction) and the rest of the table in `registry.ts`. One grammar: an opening
 * tag, then a JSON call object, an array of them, or several objects in a row, then an optional closing tag.
 *
 * @module
 */
import { addJsonCalls, readJsonRun, salvageName } from "../json_calls.ts";
import type { CallDraft, Scan } from "../scan.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { skipSpace, trimEnd } from "../text.ts";
import type { ExtractFormat } from "../types.ts";

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
  /** How one JSON value becomes a call (Apertus writes `{"NAME": {…}}`). */
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
  const body = bodyOf(scan, at + opening.length, spec.close, spec.open);
  const p = skipSpace(text, body.start);
  const limit = trimEnd(text, p, body.end);
  if (p >= limit) {
    if (!body.closed) scan.ranOut(at); // nothing yet: the call may still come
    return -1;
  }
  if (text[p] !== "{" && text[p] !== "[") {
    // Prose that mentions the tag, or other markup inside it (`<tool_call><function=f>{…}`) for its reader.
    if (spec.strength === "soft" || !body.closed || text[p] === "<") return -1;
    scan.unreadable(spec.format, at, `the text after ${opening} is not JSON`);
    return body.blockEnd;
  }
  const run = readJsonRun(text, p, limit);
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
  // Granite 3.1 writes `<tool_call>[…]` with no closing tag by design; a lone object is a cut-off block.
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
  return body.closed ? body.blockEnd : body.end;
}
