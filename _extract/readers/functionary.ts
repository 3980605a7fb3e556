/**
 * Functionary. v3.1 (Llama 3.1 based): `<function=NAME>{…}</function>`, told apart from Qwen3-Coder XML by
 * the JSON right after the tag. v3.2: `>>>NAME\n{…}` per call, where the chat template's generation prompt
 * supplies the first `>>>`, so the answer may also open with `NAME\n{…}`; the recipient `all` means prose.
 *
 * @module
 */
import { draftFromValue, isCallShaped, readJsonRun } from "../json_calls.ts";
import type { Scan } from "../scan.ts";
import type { AnchoredReader, Reader } from "../reader.ts";
import { widen } from "../markup.ts";
import { skipSpace } from "../text.ts";

const HEADER = /<function=([^>\n]{1,128})>/y;
const RECIPIENT = /([A-Za-z_][\w.-]{0,127})[ \t]*\r?\n/y;

/** Functionary `<function=NAME>{…}</function>` and `>>>NAME\n{…}`. */
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
    const call = readObject(scan, p);
    if (!call) return -1;
    const block = { start: at, end: call.end };
    widen(text, block, "", "</function>");
    widen(text, block, "<tool_call>", "</tool_call>"); // old Hermes 2 Pro: <tool_call><function=f>{…}
    const draft = draftFromValue({ name: head[1].trim(), arguments: call.value });
    scan.add(draft, "functionary", p, call.end, block);
    return block.end;
  },
};

/** Functionary v3.2 when the answer opens with `NAME\n{…}` (the `>>>` was in the prompt). */
export const functionaryStart: AnchoredReader = {
  name: "functionary_start",
  read: (scan, at) => readRecipient(scan, at, at, { weak: true }),
};

/** `NAME\n{…}` from `from` (just after `>>>`, or the answer's start); `all` (prose) and other bodies decline. */
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
  if (text[p] !== "{") return -1;
  const call = readObject(scan, p);
  // A call object after a word line is a JSON call with a stray label (`json\n{"name": …}`), not v3.2.
  if (!call || isCallShaped(call.value)) return -1;
  const draft = draftFromValue({ name, arguments: call.value });
  return scan.add(draft, "functionary", p, call.end, { start: at, end: call.end }, options) ? call.end : -1;
}

function readObject(scan: Scan, p: number): { value: unknown; end: number } | undefined {
  const run = readJsonRun(scan.text, p, scan.text.length);
  if (run.items.length === 0) {
    if (run.open) scan.ranOut(p);
    return undefined;
  }
  return { value: run.items[0].value, end: run.items[0].end };
}
