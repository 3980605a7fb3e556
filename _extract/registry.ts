/**
 * Every reader, in the order they are tried. Adding a format is one reader (in its family's file under
 * `readers/`) and one line here.
 *
 * Where several readers share an opening (`<tool_call>` opens Qwen3-Coder XML, GLM, MiniMax M3 and Hermes
 * JSON), they are tried in the order of {@link READERS} and the first that recognises the body wins; the
 * readers for one opening are listed by {@link readersFor} and the order is pinned by a test. Two readers run
 * where the answer begins, before the scan ({@link ANCHORED}). Calls inside closed reasoning are skipped (see
 * `reasoning.ts`).
 *
 * @module
 */
import type { AnchoredReader, Reader } from "./reader.ts";
import { ReasoningWalker } from "./reasoning.ts";
import { Scan } from "./scan.ts";
import { makeSeeker, type Seeker, skipSpace } from "./text.ts";
import { escapeRegExp, lazy } from "../_common/values.ts";
import { draftFromNameKey } from "./json_calls.ts";
import {
  bareJson,
  fence,
  functionary,
  functionaryStart,
  inlineJson,
  jsonTag,
  llama,
  mistral,
} from "./readers/json.ts";
import { functionTag, glm, invoke, qwenXml } from "./readers/xml.ts";
import { deepseek, harmony, kimiK2, kimiK3 } from "./readers/tokens.ts";
import { functionGemma, gemma, lfm2, llama4Pythonic, olmo3, pythonicList } from "./readers/python.ts";

/** Old Hermes tags that also wrap other content: only call-shaped JSON inside them counts. */
const softHermes = (tag: string) =>
  jsonTag({
    name: `hermes_${tag}`,
    format: "hermes",
    open: [`<${tag}>`],
    close: [`</${tag}>`],
    strength: "soft",
  });

/** How many code units after a marker the readers need before their "not mine" is final (for `callMayStart`). */
const DECIDE_WINDOW = 64;

/** The readers, in the order they are tried where their openings coincide. */
export const READERS: readonly Reader[] = [
  qwenXml, // <tool_call><function=...  <seed:tool_call>  <function=NAME><parameter=...
  functionary, // <function=NAME>{...}  >>>NAME\n{...}
  glm, // <tool_call>NAME<arg_key>...
  invoke, // <tool_call><invoke ...  <minimax:tool_call>  DeepSeek DSML  <atem:...>  <function_calls><invoke ...
  olmo3, // <function_calls>f(a=1)
  jsonTag({
    name: "hermes",
    format: "hermes",
    open: ["<tool_call>"],
    close: ["</tool_call>"],
    strength: "strong",
    flagUnclosed: true,
  }),
  jsonTag({
    name: "granite_fc",
    format: "granite_fc",
    open: ["<function_call>"],
    close: ["</function_call>"],
    strength: "strong",
  }),
  softHermes("tools"),
  softHermes("tool"),
  softHermes("response"),
  softHermes("json"),
  softHermes("JSON"),
  softHermes("xml"),
  jsonTag({ name: "granite", format: "granite", open: ["<|tool_call|>"], close: [], strength: "strong" }),
  jsonTag({
    name: "gigachat",
    format: "gigachat",
    open: ["<|function_call|>", "function call<|role_sep|>"],
    close: [],
    strength: "strong",
  }),
  jsonTag({
    name: "nemotron",
    format: "nemotron",
    open: ["<TOOLCALL>"],
    close: ["</TOOLCALL>"],
    strength: "strong",
    flagUnclosed: true,
  }),
  jsonTag({
    name: "tool_calls_tag",
    format: "tool_calls_tag",
    open: ["<tool_calls>"],
    close: ["</tool_calls>"],
    strength: "strong",
  }),
  jsonTag({
    name: "internlm",
    format: "internlm",
    open: ["<|action_start|><|plugin|>"],
    close: ["<|action_end|>"],
    strength: "strong",
  }),
  jsonTag({
    name: "command_r",
    format: "command_r",
    open: ["<|START_ACTION|>"],
    close: ["<|END_ACTION|>"],
    strength: "strong",
  }),
  jsonTag({ name: "functools", format: "functools", open: ["functools"], close: [], strength: "strong" }),
  jsonTag({
    name: "apertus",
    format: "apertus",
    open: ["<|tools_prefix|>"],
    close: ["<|tools_suffix|>"],
    strength: "strong",
    draft: draftFromNameKey,
  }),
  functionTag, // <function name="...">
  llama, // <|python_tag|>
  mistral, // [TOOL_CALLS]
  deepseek, // DeepSeek's section and call tokens (see tokens.ts)
  kimiK2, // <|tool_calls_section_begin|>
  kimiK3, // <|open|>tools<|sep|>
  harmony, // to=functions.NAME ... <|message|>
  gemma, // <|tool_call>call:
  functionGemma, // <start_function_call>call:
  lfm2, // <|tool_call_start|>
  llama4Pythonic, // <|python_start|>
  fence, // ```json
  pythonicList, // [name(   (a shape, no marker)
  inlineJson, // {"name":   (a shape, no marker)
];

/** Readers tried once, where the answer begins (after leading reasoning), before the scan. */
export const ANCHORED: readonly AnchoredReader[] = [bareJson, functionaryStart];

/**
 * Every literal text that opens call markup (the `markers` of the {@linkcode READERS}, each once), longest
 * first, ties in code-unit order. Written out rather than collected and sorted at load, which cost about
 * 0.3 ms of every import of the extractor on Bun (issue 18); a test checks it against the readers.
 */
export const MARKERS: readonly string[] = [
  "<|tool_calls_section_begin|>",
  "<|tool_call_section_begin|>",
  "<|action_start|><|plugin|>",
  "function call<|role_sep|>",
  "<\uff5cDSML\uff5cfunction_calls>",
  "<\uff5ctool\\_calls\\_begin\uff5c>",
  "<atem:function_calls>",
  "<start_function_call>",
  "<\uff5ctool\\_call\\_begin\uff5c>",
  "<|open|>tools<|sep|>",
  "<\uff5ctool calls begin\uff5c>",
  "<\uff5ctool_calls_begin\uff5c>",
  "<\uff5ctool\u2581calls\u2581begin\uff5c>",
  "<minimax:tool_call>",
  "<|tool_call_begin|>",
  "<|tool_call_start|>",
  "<\uff5ctool call begin\uff5c>",
  "<\uff5ctool_call_begin\uff5c>",
  "<\uff5ctool\u2581call\u2581begin\uff5c>",
  "<\uff5cDSML\uff5ctool_calls>",
  "<\uff5cGCML\uff5ctool_calls>",
  "<|function_call|>",
  "<function_calls>",
  "<seed:tool_call>",
  "<|START_ACTION|>",
  "<|python_start|>",
  "<|tools_prefix|>",
  "<function name=",
  "<function_call>",
  "<steptml:invoke",
  "<|python_tag|>",
  "<\uff5ctool\u2581calls\uff5c>",
  "<invoke name=",
  "<|tool_call|>",
  "]<]minimax[>[",
  "<tool_calls>",
  "<|tool_call>",
  "[TOOL_CALLS]",
  "<tool_call>",
  "<|channel|>",
  "<TOOLCALL>",
  "<function=",
  "<response>",
  "<|start|>",
  "functools",
  "<tools>",
  "<JSON>",
  "<json>",
  "<tool>",
  "<xml>",
  ">>>",
  "```",
  "to=",
];

/** The readers of each marker, the readers of shapes, and all openings in one expression: made on first use. */
const tables = lazy(() => {
  const byMarker = new Map<string, Reader[]>();
  for (const r of READERS) for (const m of r.markers) byMarker.set(m, [...(byMarker.get(m) ?? []), r]);
  const shaped = READERS.filter((r) => r.shape !== undefined);
  // Literals first, longest first.
  const openings = new RegExp(
    [...MARKERS.map(escapeRegExp), ...shaped.map((r) => r.shape!.source)].join("|"),
    "g",
  );
  return { byMarker, shaped, openings };
});

/** Every call opening (markers, then shapes) in one global expression, shared: set `lastIndex` before `exec`. */
export function openingsPattern(): RegExp {
  return tables().openings;
}

/** The readers tried, in order, at an opening written as `opening` (a marker, or text matching a shape). */
export function readersFor(opening: string): readonly Reader[] {
  const { byMarker, shaped } = tables();
  const literal = byMarker.get(opening);
  if (literal) return literal;
  return shaped.filter((r) => {
    const re = r.shape!;
    re.lastIndex = 0;
    return re.test(opening);
  });
}

/** What a run of the readers learnt about reasoning: where a block that never closes begins, or `-1`. */
export interface ReadersRun {
  unclosedAt: number;
}

/**
 * Runs the anchored readers and then the scan over `scan.text` from `start` on, skipping closed reasoning.
 * Reasoning tags are found by the same forward pass, so only tags outside consumed call markup count: a
 * `</think>` inside a call's arguments is data. A closing tag with no opening (reasoning the prompt opened)
 * drops the calls written before it only when the answer after it makes calls of its own; otherwise those
 * calls are kept, since the tag may be prose and dropping them would let a call through unjudged.
 * A `start` past 0 (a streaming watcher's release point) must not fall inside markup that began earlier.
 */
export function runReaders(scan: Scan, start = 0): ReadersRun {
  const text = scan.text;
  const openings = makeSeeker(text, tables().openings); // call openings in order
  const answer = answerStart(scan, openings);
  let from = start; // calls are read from here on
  let pos = 0; // reasoning is looked for from here; calls from max(pos, from)
  for (const r of answer < text.length ? ANCHORED : []) {
    const end = readAt(scan, r, answer, "");
    if (end > answer) {
      from = Math.max(from, end);
      pos = end; // a tag inside the call read there is data
      break;
    }
  }
  const walker = new ReasoningWalker(text, scan.find);
  let unclosedAt = -1;
  let lone: { at: number; calls: number } | undefined;
  let reasonFrom = 0; // tokens before this were taken (or judged not reasoning)
  for (;;) {
    const m = openings(Math.max(pos, from));
    const r = unclosedAt < 0 ? walker.peek(Math.max(pos, reasonFrom)) : Infinity;
    if (r === Infinity && !m) break;
    if (r <= (m ? m.at : Infinity)) {
      const span = walker.take(r);
      reasonFrom = r + 1;
      if (span?.kind === "block") pos = span.end; // a call quoted in reasoning is not a call
      else if (span?.kind === "unclosed") unclosedAt = span.start;
      else if (span?.kind === "lone") lone = { at: span.start, calls: scan.calls.length };
      continue;
    }
    const fences = scan.codeFences.length;
    const end = tryReaders(scan, m!.at, m!.match);
    if (scan.codeFences.length > fences) noteCallsInCode(scan, scan.codeFences[fences]);
    pos = end > m!.at ? end : m!.at + 1;
  }
  // Before a closing tag whose opening the prompt wrote: calls drafted in the reasoning, unless the answer
  // opens with the call and makes no other (the tag is then taken for part of the call's text).
  if (lone && (scan.calls.length > lone.calls || wordsBeforeCall(scan, lone.at))) dropBefore(scan, lone.at);
  return { unclosedAt };
}

/**
 * Where the answer begins: after leading white space, leading reasoning blocks, and a closing tag that ends
 * reasoning the prompt opened, when no call markup comes before that tag (else it may lie inside a call).
 */
function answerStart(scan: Scan, openings: Seeker): number {
  const text = scan.text;
  const walker = new ReasoningWalker(text, scan.find);
  let i = skipSpace(text, 0);
  for (;;) {
    const at = walker.peek(i);
    if (at === Infinity) return i;
    const firstOpening = openings(0)?.at ?? Infinity;
    const span = walker.take(at);
    if (span?.kind === "lone" && at < firstOpening) i = skipSpace(text, span.end);
    else if (span?.kind === "block" && at === i) i = skipSpace(text, span.end);
    else return i;
  }
}

/**
 * Reports the calls written inside a fenced code block of another language, which was skipped whole: they
 * are code, not calls, but a client that finds calls with a pattern would still run them. The block's body
 * is read on its own, so the work stays linear in its length.
 */
function noteCallsInCode(scan: Scan, fence: { start: number; end: number; lang: string }): void {
  const inner = new Scan(scan.text.slice(fence.start, fence.end), scan.typer);
  runReaders(inner);
  for (const c of inner.calls) {
    const at = fence.start + c.block.start;
    scan.note(
      "call_in_code_fence",
      c.format,
      at,
      `the ${c.format} call to "${c.name}" at offset ${at} is inside a \`\`\`${fence.lang} code block, so it was not read as a call; write calls outside code blocks`,
    );
  }
}

/** Whether words come before the first call that starts before `at` (reasoning that drafts a call). */
function wordsBeforeCall(scan: Scan, at: number): boolean {
  const first = scan.calls.find((c) => c.block.start < at);
  return first !== undefined && /\S/.test(scan.text.slice(0, first.block.start));
}

/** Removes the calls and findings before `at`: they were quoted in reasoning the prompt opened. */
function dropBefore(scan: Scan, at: number): void {
  const calls = scan.calls.filter((c) => c.start >= at);
  scan.calls.length = 0;
  scan.calls.push(...calls);
  const findings = scan.findings.filter((f) => f.offset >= at);
  scan.findings.length = 0;
  scan.findings.push(...findings);
}

function tryReaders(scan: Scan, at: number, opening: string): number {
  const { byMarker, shaped } = tables();
  const literal = byMarker.get(opening);
  if (literal) {
    for (const r of literal) {
      const end = readAt(scan, r, at, opening);
      if (end > at) return end;
    }
    // Declined this close to the end, the body may just not have arrived yet (`<tool_call>\n<`).
    if (scan.text.length - at <= opening.length + DECIDE_WINDOW) scan.ranOut(at);
    return -1;
  }
  for (const r of shaped) {
    const re = r.shape!;
    re.lastIndex = at;
    if (!re.test(scan.text)) continue;
    const end = readAt(scan, r, at, opening);
    if (end > at) return end;
  }
  return -1;
}

/** `r.read`, with any markup that ran out of text inside it counted from `at`, where the markup begins. */
function readAt(scan: Scan, r: Reader | AnchoredReader, at: number, opening: string): number {
  const before = scan.ranOutAt;
  const end = r.read(scan, at, opening);
  if (scan.ranOutAt < before && scan.ranOutAt > at) scan.ranOutAt = Math.max(at, scan.ranOutFrom);
  return end;
}
