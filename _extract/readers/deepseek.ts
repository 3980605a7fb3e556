/**
 * DeepSeek's section tokens, in the spellings models write them (`▁`, `_` or a space between the words):
 *
 * ```
 * <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
 * ```json
 * {…}
 * ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>                       V3, R1 (type, separator, name, fenced JSON)
 *
 * <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>             V3.1 (name, separator, JSON)
 * ```
 *
 * Step3 writes the same section tokens around `<steptml:invoke>` elements (read as in `invoke.ts`).
 *
 * @module
 */
import { draftFromValue, readJsonRun } from "../json_calls.ts";
import type { CallDraft, Scan } from "../scan.ts";
import type { Reader } from "../reader.ts";
import { skipSpace } from "../text.ts";
import type { ExtractFormat } from "../types.ts";
import { readInvoke } from "./invoke.ts";

const GAP = ["▁", "_", " ", "\\_"];
const spell = (words: string[]) => GAP.map((g) => `<｜${words.join(g)}｜>`);
const SECTION_OPEN = [...spell(["tool", "calls", "begin"]), "<｜tool▁calls｜>"];
const CALL_OPEN = spell(["tool", "call", "begin"]);
const TOKEN = /<｜tool(?:[▁_ ]|\\_)(calls?)(?:(?:[▁_ ]|\\_)(begin|end))?｜>|<｜tool(?:[▁_ ]|\\_)sep｜>/g;

/** DeepSeek V3/R1/V3.1 and Step3 calls. */
export const deepseek: Reader = {
  name: "deepseek",
  markers: [...SECTION_OPEN, ...CALL_OPEN],
  read(scan, at, opening) {
    const text = scan.text;
    const section = SECTION_OPEN.includes(opening);
    const tokens = tokensFrom(text, section ? at + opening.length : at);
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
      const next = tokens[j] as Token | undefined;
      const sep = j > k + 1 ? tokens[k + 1] : undefined;
      const bodyEnd = next ? next.at : text.length;
      const call = readCall(scan, t.end, sep, bodyEnd);
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
    const one = readInvoke(scan, step, limit, { prefix: "steptml:", trimValues: true });
    return one && !one.cutOff ? { draft: one.draft, end: one.end, format: "step3" } : undefined;
  }
  if (!sep) return undefined;
  const afterSep = skipSpace(text, sep.end);
  if (text[afterSep] === "{") {
    // V3.1: NAME<｜tool▁sep｜>{…}
    const args = jsonAt(scan, afterSep, limit);
    const name = text.slice(from, sep.at).trim();
    return args &&
      { draft: draftFromValue({ name, arguments: args.value }), end: args.end, format: "deepseek" };
  }
  // V3 / R1: TYPE<｜tool▁sep｜>NAME\n```json\n{…}\n```
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

function jsonAt(scan: Scan, p: number, limit: number): { value: unknown; end: number } | undefined {
  const run = readJsonRun(scan.text, p, limit);
  return run.items.length > 0 ? { value: run.items[0].value, end: run.items[0].end } : undefined;
}
