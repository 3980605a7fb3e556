/**
 * GLM-4.5, 4.6 and 4.7 (also Ling and Spark): the tool name right after `<tool_call>`, then key/value tags:
 *
 * ```
 * <tool_call>NAME
 * <arg_key>KEY</arg_key>
 * <arg_value>VALUE</arg_value>
 * </tool_call>
 * ```
 *
 * A call with no arguments is just `<tool_call>NAME</tool_call>`.
 *
 * @module
 */
import type { Scan } from "../scan.ts";
import { lazy } from "../../_common/lazy.ts";
import { bodyOf } from "../markup.ts";
import type { Reader } from "../reader.ts";
import { defineOwn, skipSpace, trimOneNewline } from "../text.ts";

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";
/** The tool name: made on first use (a Unicode-property expression costs a little to create). */
const nameAt = lazy(() => /[\p{L}\p{N}_][\p{L}\p{N}_.:\/-]{0,255}/uy);

/** GLM `<tool_call>NAME<arg_key>…` calls. */
export const glm: Reader = {
  name: "glm",
  markers: [OPEN],
  read(scan, at) {
    const text = scan.text;
    const body = bodyOf(scan, at + OPEN.length, [CLOSE], [OPEN]);
    const p = skipSpace(text, body.start);
    const name = nameAt();
    name.lastIndex = p;
    const m = name.exec(text);
    if (!m || p + m[0].length > body.end) return -1;
    const q = skipSpace(text, p + m[0].length);
    const block = { start: at, end: body.blockEnd };
    if (q >= body.end) {
      if (!body.closed) {
        scan.ranOut(at); // `<tool_call>NAME` so far: arguments may follow
        return -1;
      }
      scan.add({ name: m[0], arguments: {} }, "glm", p, q, block);
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
    const v = skipSpace(text, keyEnd + "</arg_key>".length);
    if (!text.startsWith("<arg_value>", v)) break;
    let valueEnd = scan.find("</arg_value>", v);
    const closed = valueEnd >= 0 && valueEnd <= limit;
    if (!closed) valueEnd = limit;
    const raw = trimOneNewline(text.slice(v + "<arg_value>".length, valueEnd));
    defineOwn(values, key, scan.typer.text(tool, key, raw));
    end = closed ? valueEnd + "</arg_value>".length : valueEnd;
    open = !closed;
    pos = skipSpace(text, end);
  }
  // At the end of the text, a value without its closing tag or a pair begun and not finished is cut off.
  const rest = text.slice(pos, limit);
  const partialPair = rest.startsWith("<arg_") || (rest !== "" && "<arg_key>".startsWith(rest));
  const cutOff = limit === text.length && (open || partialPair);
  return { values, end, cutOff };
}
