/**
 * gpt-oss harmony: a message whose header names a recipient is a call to it.
 *
 * ```
 * <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
 * ```
 *
 * The recipient may stand before or after the channel (`to=functions.NAME<|channel|>analysis`), the
 * generation prompt may have supplied `<|start|>assistant`, and the body runs to `<|call|>`, `<|end|>` or the
 * next `<|start|>`. `functions.` is dropped from the name; built-in recipients (`browser.search`) keep theirs.
 * A header whose body is other call markup (Muse Glimmer's `to=NAME<|message|><atem:function_calls>`) is
 * left to that markup's reader.
 *
 * @module
 */
import { draftFromValue, readJsonRun } from "../json_calls.ts";
import type { Reader } from "../reader.ts";
import { boundedIndexOf, isSpace, skipSpace, trimEnd } from "../text.ts";
import type { Scan } from "../scan.ts";

const RECIPIENT = /to=([^\s<]{1,128})/y;
const HEADER_REST = /(?:\s*(?:<\|channel\|>\s*\w+|<\|constrain\|>\s*\w+|json|code))*\s*<\|message\|>/y;
const ENDS = ["<|call|>", "<|end|>", "<|return|>", "<|start|>", "<|eom|>", "<|eot|>"];
const NOT_TOOLS = new Set(["assistant", "user", "all", "self", "system", "developer"]);
const CONSUMED_ENDS = new Set(["<|call|>", "<|end|>", "<|return|>", "<|eom|>", "<|eot|>"]);

/** Harmony recipient headers. */
export const harmony: Reader = {
  name: "harmony",
  markers: ["<|start|>", "<|channel|>", "to="],
  read(scan, at, opening) {
    const head = opening === "to=" ? bareHeader(scan, at) : openedHeader(scan, at);
    if (!head) return -1;
    const text = scan.text;
    let bodyEnd = text.length;
    let endToken = "";
    for (const e of ENDS) {
      const i = scan.find(e, head.bodyStart);
      if (i >= 0 && i < bodyEnd) {
        bodyEnd = i;
        endToken = e;
      }
    }
    const p = skipSpace(text, head.bodyStart);
    if (p < bodyEnd && text[p] === "<") return -1; // other markup carries the call
    const name = head.recipient.replace(/^functions\./, "");
    if (NOT_TOOLS.has(name)) return -1; // a message to a person (or a tool's reply), not a call
    const block = {
      start: head.start,
      end: CONSUMED_ENDS.has(endToken) ? bodyEnd + endToken.length : bodyEnd,
    };
    const limit = trimEnd(text, p, bodyEnd);
    if (endToken === "") scan.ranOut(head.start);
    if (p >= limit) return endToken === "" ? -1 : block.end;
    const run = text[p] === "{" ? readJsonRun(text, p, limit) : undefined;
    if (run && run.items.length > 0) {
      const args = run.items[0];
      scan.add(draftFromValue({ name, arguments: args.value }), "harmony", p, args.end, block);
    } else if (endToken !== "") {
      const raw = text.slice(p, limit);
      scan.add(
        { name, arguments: raw, error: "the arguments are not a JSON object" },
        "harmony",
        p,
        limit,
        block,
      );
    } else return -1;
    return block.end;
  },
};

interface Header {
  /** Where the header (and the call's markup) starts. */
  start: number;
  /** The recipient as written (`functions.NAME`). */
  recipient: string;
  /** Index just after `<|message|>`. */
  bodyStart: number;
}

/** A header opened by `<|start|>` or `<|channel|>` at `at`, if it names a recipient. */
function openedHeader(scan: Scan, at: number): Header | undefined {
  const text = scan.text;
  const msg = boundedIndexOf(text, "<|message|>", at + 1, 256);
  if (msg < 0) {
    if (text.length - at < 256) scan.ranOut(at); // the header may be unfinished
    return undefined;
  }
  const header = text.slice(at, msg);
  if (/<\|(?:end|call|return)\|>/.test(header) || header.indexOf("<|start|>", 1) >= 0) return undefined;
  const r = /\sto=([^\s<]{1,128})/.exec(header);
  return r ? { start: at, recipient: r[1], bodyStart: msg + "<|message|>".length } : undefined;
}

/** A header whose opening the prompt supplied: ` to=NAME…<|message|>` at `at`. */
function bareHeader(scan: Scan, at: number): Header | undefined {
  const text = scan.text;
  if (at > 0 && !isSpace(text, at - 1)) return undefined;
  RECIPIENT.lastIndex = at;
  const r = RECIPIENT.exec(text);
  if (!r) return undefined;
  HEADER_REST.lastIndex = at + r[0].length;
  const h = HEADER_REST.exec(text);
  if (!h) {
    if (text.length - at < 200 && !text.includes("\n", at)) scan.ranOut(at); // the header may be unfinished
    return undefined;
  }
  return { start: headerStart(text, at), recipient: r[1], bodyStart: at + r[0].length + h[0].length };
}

/** Where the header holding `to=` at `at` begins: its `<|start|>` or `<|channel|>`, if close by. */
function headerStart(text: string, at: number): number {
  const from = Math.max(0, at - 64);
  const before = text.slice(from, at);
  const start = before.lastIndexOf("<|start|>");
  const channel = before.lastIndexOf("<|channel|>");
  const cut = Math.max(before.lastIndexOf("<|message|>"), before.lastIndexOf("<|end|>"));
  const open = start >= 0 && start > cut ? start : channel > cut ? channel : -1;
  return open >= 0 ? from + open : at;
}
