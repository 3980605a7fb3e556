/**
 * Llama 3.1+ after `<|python_tag|>`: JSON calls (`{"name", "parameters"}`, several separated by `;`) and the
 * built-in call syntax `brave_search.call(query="…")`, up to `<|eom_id|>` or `<|eot_id|>`.
 *
 * @module
 */
import { addJsonCalls, readJsonRun } from "../json_calls.ts";
import { LiteralReader, PYTHON } from "../literal.ts";
import type { Scan } from "../scan.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { skipSpace, trimEnd } from "../text.ts";

const TAG = "<|python_tag|>";
const ENDS = ["<|eom_id|>", "<|eot_id|>", "<|eom|>", "<|end_of_text|>"];

/** Llama `<|python_tag|>` calls. */
export const llama: Reader = {
  name: "llama",
  markers: [TAG],
  read(scan, at) {
    const text = scan.text;
    const body = bodyOf(scan, at + TAG.length, ENDS, [TAG]);
    const block = { start: at, end: body.blockEnd };
    const limit = trimEnd(text, body.start, body.end);
    let pos = skipSpace(text, body.start);
    if (pos >= limit) {
      if (!body.closed) scan.ranOut(at);
      return -1;
    }
    let found = 0;
    while (pos < limit) {
      if (text[pos] === "{" || text[pos] === "[") {
        const run = readJsonRun(text, pos, limit);
        if (run.items.length === 0) break;
        found += addJsonCalls(scan, run.items, { format: "llama_json", block });
        pos = run.next;
      } else {
        const end = readBuiltin(scan, pos, limit, block);
        if (end < 0) break;
        found++;
        pos = end;
      }
      pos = skipSpace(text, pos);
      if (text[pos] === ";" || text[pos] === ",") pos = skipSpace(text, pos + 1);
      else break;
    }
    if (found === 0) {
      if (!body.closed && body.end === text.length) scan.ranOut(at);
      scan.unreadable(
        "llama_json",
        at,
        "the text after <|python_tag|> is neither JSON calls nor NAME.call(...)",
      );
    }
    return block.end;
  },
};

/** `name.call(key=value, …)` at `pos`: adds the call and returns its end, or `-1` when no call head is there. */
function readBuiltin(scan: Scan, pos: number, limit: number, block: { start: number; end: number }): number {
  const reader = new LiteralReader(scan.text, pos, limit, PYTHON);
  const call = reader.call();
  if (call.name === "") return -1;
  const name = call.name.endsWith(".call") ? call.name.slice(0, -".call".length) : call.name;
  if ("error" in call) {
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
