/**
 * The stream-against-body fuzz of the response gate: a seeded generator of model answers in each dialect,
 * written as one body and as a stream, both passed through `guardFetch` with the same options, and what a
 * client reads from each compared. Shared by `gate_fuzz.ts` (the hunting tool) and `tests/gate_fuzz_test.ts`
 * (a fixed set of seeds).
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type GateEvent, guardFetch, type GuardFetchOptions } from "../gate.ts";
import { validateToolCalls } from "../validate.ts";
import { extractToolCalls } from "../extract.ts";
import { seeded } from "./_seeded.ts";

/** The dialects the fuzz writes answers in. */
export const FUZZ_DIALECTS = ["chat", "responses", "anthropic", "ollama", "gemini", "cohere"] as const;
/** A dialect the fuzz writes answers in. */
export type FuzzDialect = typeof FUZZ_DIALECTS[number];
/** The gate's modes the fuzz runs. */
export const FUZZ_MODES = ["withhold", "drop-call", "retry"] as const;
/** A mode of the gate. */
export type FuzzMode = typeof FUZZ_MODES[number];

/** One difference between what a client read from the stream and from the body. */
export interface Difference {
  /** Where (`answer 0 text`, `usage`, `wire`). */
  where: string;
  /** What the stream gave. */
  stream: unknown;
  /** What the body gave. */
  body: unknown;
}

/** What one seed found. */
export interface FuzzResult {
  /** Differences after white space is normalised, and faults in the stream's wire (each one a failure). */
  differences: Difference[];
  /** Differences in white space alone (text equal once white space is left out). */
  whitespace: Difference[];
  /** Set when the seed was not compared: stream and body differ by design (see `fuzzSeed`). */
  skipped?: true;
  /** Whether the gate rejected a call of the whole answer (what makes a seed test the rewriting). */
  rejected?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// The answers
// ---------------------------------------------------------------------------------------------------------

interface Call {
  id: string;
  name: string;
  /** The arguments as JSON text (an object). */
  args: string;
  /** The call's id goes on the wire where it is optional (Gemini's `functionCall.id`). */
  idShown?: boolean;
  /** Chat: the stream gives the call the `index` of the call before it, under its own id (`placesShared`). */
  reuse?: true;
  /** Anthropic: the input its block starts with, another version than `args` (`placesShared`). */
  start?: string;
}
/**
 * A piece of an answer. `opaque`: a part the gate must pass as it came (Anthropic `redacted_thinking` or a
 * server tool's use and result, Gemini's code execution), at times `n` of them.
 */
type Piece =
  | { kind: "text" | "thinking" | "refusal"; text: string; cite?: [number, number] }
  | { kind: "call"; call: Call }
  | { kind: "opaque"; n: number };
interface Answer {
  pieces: Piece[];
}
interface Turn {
  id: string;
  model: string;
  answers: Answer[];
  usage: { input: number; output: number };
  /** How a Gemini turn numbers and places its candidates (see `oddPlaces`); absent: as Gemini does. */
  places?: Places;
}

/**
 * The `index` each Gemini candidate names, in the body and in every chunk: `keep` its place, `omit-zero`
 * none for the first (as Gemini leaves out a zero), `shift` its place plus one, `swap` candidates 0 and 1
 * traded (one more than its place, of one candidate). The last two put a candidate out of place, which the
 * gate does not retry, whole or streamed. With `nulls`, a chunk holds the places before a candidate with
 * `null` where it would with `{}`.
 */
interface Places {
  label: "keep" | "omit-zero" | "shift" | "swap";
  nulls: boolean;
  /** A call comes in the chunk of the candidate's part before it. */
  joined: boolean;
}

const TOOLS = [
  {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, units: { type: "string", enum: ["c", "f"] } },
      required: ["city"],
      additionalProperties: false,
    },
  },
  {
    name: "search",
    parameters: {
      type: "object",
      properties: { query: { type: "string", minLength: 1 } },
      required: ["query"],
      additionalProperties: false,
    },
  },
];

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

const WORDS = ["Sure", "the", "weather", "in", "Oslo", "is", "cold", "é", "naïve", "🌧", "let", "me", "check"];
const GAPS = [" ", " ", " ", "\n", "\n\n", "  ", " \n"];

/** A few words and gaps (spaces, line breaks), at times none. */
function prose(r: Rand): string {
  let s = "";
  for (let i = int(r, 0, 8); i > 0; i--) s += pick(r, WORDS) + pick(r, GAPS);
  return r() < 0.2 ? s.trimEnd() : s;
}

/** Arguments valid and invalid against the tools, and calls to tools not declared. */
function callOf(r: Rand, id: string): Call {
  const choices: [string, unknown][] = [
    ["get_weather", { city: "Oslo" }],
    ["get_weather", { city: "Oslo", units: "c" }],
    ["search", { query: "rain é" }],
    ["get_weather", { city: 5 }],
    ["search", { query: "" }],
    ["get_weather", {}],
    ["delete_everything", { path: "/" }],
  ];
  const [name, args] = pick(r, choices);
  return { id, name, args: JSON.stringify(args), ...(r() < 0.5 ? { idShown: true } : {}) };
}

/** A call written into text, in one of the formats the text watch knows. */
function written(r: Rand, call: Call): string {
  const args = call.args;
  switch (int(r, 0, 5)) {
    case 0:
      return `<tool_call>\n{"name": "${call.name}", "arguments": ${args}}\n</tool_call>`;
    case 1:
      return `[TOOL_CALLS][{"name": "${call.name}", "arguments": ${args}}]`;
    case 2:
      return `<|python_tag|>{"name": "${call.name}", "parameters": ${args}}`;
    case 3:
      return "```json\n" + `{"name": "${call.name}", "arguments": ${args}}` + "\n```";
    case 4:
      return `<function=${call.name}>${args}</function>`;
    default:
      return `<tool_call>{"name": "${call.name}", "arguments": ${args}}</tool_call>`;
  }
}

interface Features {
  thinking: boolean;
  refusal: boolean;
  /** Calls carry ids. */
  ids: boolean;
  /** Arguments as an object in the body (Anthropic, Ollama, Gemini): always JSON. */
  objectArgs: boolean;
  answers: number;
  /** The dialect has parts the gate passes as they come (see `Piece`). */
  opaque: boolean;
  /** Text cites its sources (Cohere's citations, Responses' annotations: offsets in a text part). */
  cites?: boolean;
}

const FEATURES: Record<FuzzDialect, Features> = {
  chat: { thinking: true, refusal: true, ids: true, objectArgs: false, answers: 3, opaque: false },
  responses: {
    thinking: true,
    refusal: true,
    ids: true,
    objectArgs: false,
    answers: 1,
    opaque: false,
    cites: true,
  },
  anthropic: { thinking: true, refusal: false, ids: true, objectArgs: true, answers: 1, opaque: true },
  ollama: { thinking: true, refusal: false, ids: false, objectArgs: true, answers: 1, opaque: false },
  gemini: { thinking: true, refusal: false, ids: false, objectArgs: true, answers: 3, opaque: true },
  cohere: {
    thinking: true,
    refusal: false,
    ids: true,
    objectArgs: false,
    answers: 1,
    opaque: false,
    cites: true,
  },
};

/** One answer: reasoning, text parts (a call written in some, or cut across two), a refusal, native calls. */
function answerOf(r: Rand, f: Features, tag: string): Answer {
  const pieces: Piece[] = [];
  if (f.thinking && r() < 0.4) pieces.push({ kind: "thinking", text: prose(r) || "hmm" });
  const native = r() < 0.45;
  let n = 0;
  const texts = int(r, native ? 0 : 1, 3);
  for (let i = 0; i < texts; i++) {
    let text = prose(r) || pick(r, WORDS);
    if (!native && r() < 0.6) text += written(r, callOf(r, "")) + (r() < 0.5 ? prose(r) : "");
    if (!native && r() < 0.15) text += written(r, callOf(r, ""));
    const chars = [...text];
    if (r() < 0.25 && chars.length > 2) {
      // a text cut in two parts or blocks (a written call across them), between characters
      const at = int(r, 1, chars.length - 1);
      pieces.push({ kind: "text", text: chars.slice(0, at).join("") }, {
        kind: "text",
        text: chars.slice(at).join(""),
      });
    } else {
      // (a citation covers words before any call's markup, from a word's first character to a word's last:
      // what it covers stays as the model wrote it; white space at a part's edge is no promise, see `squeeze`)
      const safe = f.cites ? text.search(/[<[`{]|$/) : 0;
      const edges = [...text.slice(0, safe).matchAll(/\S+/g)].map((m) => [m.index, m.index + m[0].length]);
      const [from, to] = [pick(r, edges), pick(r, edges)].sort((x, y) => x?.[0] - y?.[0]);
      const cite = edges.length > 0 && r() < 0.35 ? { cite: [from[0], to[1]] as [number, number] } : {};
      pieces.push({ kind: "text", text, ...cite });
    }
    if (f.thinking && r() < 0.15) pieces.push({ kind: "thinking", text: prose(r) || "so" });
    if (f.opaque && r() < 0.15) pieces.push({ kind: "opaque", n: int(r, 0, 3) });
  }
  if (f.refusal && !native && r() < 0.1) pieces.push({ kind: "refusal", text: "I can't help with that." });
  if (native) {
    for (let i = int(r, 1, 3); i > 0; i--) {
      pieces.push({ kind: "call", call: callOf(r, `call_${tag}${n++}`) });
    }
  }
  return { pieces };
}

/** One response: one answer, or several where the dialect has them (Chat `n`, Gemini `candidateCount`). */
function turnOf(r: Rand, dialect: FuzzDialect, tag: string): Turn {
  const f = FEATURES[dialect];
  const count = f.answers > 1 && r() < 0.3 ? int(r, 2, f.answers) : 1;
  const answers = Array.from({ length: count }, (_, i) => answerOf(r, f, `${tag}${i}_`));
  return {
    id: `id_${tag}`,
    model: "fuzz-model",
    answers,
    usage: { input: int(r, 1, 99), output: int(r, 1, 99) },
  };
}

const calls = (a: Answer) => a.pieces.flatMap((p) => (p.kind === "call" ? [p.call] : []));
const texts = (a: Answer, kind: string) =>
  a.pieces.flatMap((p) => (p.kind === kind ? [(p as { text: string }).text] : [])).join("");

/**
 * Whether a Responses writer sends the text of the part `ci` of item `oi` only whole (no deltas): about one
 * part in ten, by a hash of the text and the place, so that no draw of the seed's `Rand` is spent on it.
 */
function wholeOnly(text: string, oi: number, ci: number): boolean {
  let h = oi * 31 + ci;
  for (let i = 0; i < text.length; i++) h = (h * 33 + text.charCodeAt(i)) | 0;
  return ((h >>> 0) % 10) === 0;
}

/** Splits `s` at random places into 1 to 4 pieces (none empty unless `s` is). */
function cut(r: Rand, s: string): string[] {
  const chars = [...s];
  if (chars.length < 2) return [s];
  const at = new Set<number>();
  for (let k = int(r, 0, 3); k > 0; k--) at.add(int(r, 1, chars.length - 1));
  const out: string[] = [];
  let from = 0;
  for (const i of [...at].sort((a, b) => a - b)) {
    out.push(chars.slice(from, i).join(""));
    from = i;
  }
  out.push(chars.slice(from).join(""));
  return out;
}

/**
 * The pieces of answer text `s` as `cut` splits it, with empty pieces (an empty text delta, which providers
 * send) put before or after them when `empties` is given: drawn from that stream of its own, so `r` draws
 * what it drew without them and a seed's other frames stay as they were. Half the pieces that open with
 * white space before more text let it out alone first, an empty piece after it: a part's lone blank start
 * then an empty delta is what a watch holding the blank must not take for the end of the part's text (one
 * seed in hundreds came to it cut at random).
 */
function cutText(r: Rand, s: string, empties: Rand | undefined): string[] {
  const pieces = cut(r, s);
  if (!empties || s === "") return pieces;
  const blank = (p: string) => {
    const lead = /^\s+(?=\S)/.exec(p)?.[0];
    return lead && empties() < 0.5 ? [lead, "", p.slice(lead.length)] : [p];
  };
  return [
    ...pieces.flatMap((p) => (empties() < 0.25 ? ["", ...blank(p)] : blank(p))),
    ...(empties() < 0.25 ? [""] : []),
  ];
}

/** Interleaves the frame lists of several answers at random, each list kept in its order. */
function interleave<T>(r: Rand, lists: T[][]): T[] {
  const at = lists.map(() => 0), out: T[] = [];
  for (;;) {
    const open = lists.flatMap((l, i) => (at[i] < l.length ? [i] : []));
    if (!open.length) return out;
    const i = pick(r, open);
    out.push(lists[i][at[i]++]);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Writing a turn as a body and as a stream, per dialect
// ---------------------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;
interface Writer {
  path: string;
  request(tools: boolean): Json;
  body(t: Turn): Json;
  /**
   * The stream's frames, each written out (SSE or an NDJSON line); with `empties`, answer text has empty
   * deltas among its pieces (see `cutText`).
   */
  stream(t: Turn, r: Rand, options?: { empties?: Rand }): string[];
}

const sse = (e: unknown, name?: string) => `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(e)}\n\n`;
const named = (e: Json) => sse(e, e.type as string);
const argsObject = (c: Call) => JSON.parse(c.args);

/** A request of chat messages (Chat, Ollama, Cohere), with the tools in the OpenAI shape when `tools`. */
const chatRequest = (tools: boolean): Json => ({
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  ...(tools ? { tools: TOOLS.map((t) => ({ type: "function", function: t })) } : {}),
});

const chat: Writer = {
  path: "/v1/chat/completions",
  request: (tools) => ({ ...chatRequest(tools), n: 3, stream_options: { include_usage: true } }),
  body: (t) => ({
    id: t.id,
    object: "chat.completion",
    created: 1,
    model: t.model,
    choices: t.answers.map((a, index) => {
      const cs = calls(a), refusal = texts(a, "refusal");
      const message: Json = { role: "assistant", content: texts(a, "text"), refusal: refusal || null };
      if (a.pieces.some((p) => p.kind === "thinking")) message.reasoning_content = texts(a, "thinking");
      if (cs.length) {
        message.tool_calls = cs.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.args },
        }));
      }
      return { index, message, logprobs: null, finish_reason: cs.length ? "tool_calls" : "stop" };
    }),
    usage: usageChat(t),
  }),
  stream(t, r, { empties } = {}) {
    // (with include_usage the API writes `usage: null` in every chunk but the last, at times)
    const nulls = r() < 0.5;
    const chunk = (index: number, delta: Json, finish: string | null = null) => ({
      id: t.id,
      object: "chat.completion.chunk",
      created: 1,
      model: t.model,
      choices: [{ index, delta, logprobs: null, finish_reason: finish }],
      ...(nulls ? { usage: null } : {}),
    });
    const lists = t.answers.map((a, index) => {
      const out: Json[] = [chunk(index, { role: "assistant", content: "" })];
      let ci = 0;
      for (const p of a.pieces) {
        if (p.kind === "call") {
          const i = p.call.reuse && ci > 0 ? ci - 1 : ci++;
          out.push(chunk(index, {
            tool_calls: [{
              index: i,
              id: p.call.id,
              type: "function",
              function: { name: p.call.name, arguments: "" },
            }],
          }));
          for (const s of cut(r, p.call.args)) {
            out.push(chunk(index, { tool_calls: [{ index: i, function: { arguments: s } }] }));
          }
        } else if (p.kind !== "opaque") {
          const field = p.kind === "text"
            ? "content"
            : p.kind === "refusal"
            ? "refusal"
            : "reasoning_content";
          for (const s of cutText(r, p.text, p.kind === "text" ? empties : undefined)) {
            out.push(chunk(index, { [field]: s }));
          }
        }
      }
      out.push(chunk(index, {}, calls(a).length ? "tool_calls" : "stop"));
      return out;
    });
    const frames = interleave(r, lists).map((c) => sse(c));
    frames.push(
      sse({
        id: t.id,
        object: "chat.completion.chunk",
        created: 1,
        model: t.model,
        choices: [],
        usage: usageChat(t),
      }),
    );
    frames.push("data: [DONE]\n\n");
    return frames;
  },
};

/** A Chat turn's `usage`. */
function usageChat(t: Turn) {
  return {
    prompt_tokens: t.usage.input,
    completion_tokens: t.usage.output,
    total_tokens: t.usage.input + t.usage.output,
  };
}

/** A Responses text part's annotations: a URL citation of the words it cites (their text as its title). */
function annotationsOf(p: Piece): Json[] {
  if (p.kind !== "text" || !p.cite) return [];
  const [start_index, end_index] = p.cite;
  return [{
    type: "url_citation",
    start_index,
    end_index,
    url: "https://example.com",
    title: p.text.slice(start_index, end_index),
  }];
}

/** A Responses turn as output items: reasoning, messages (a text part each, a refusal), calls. */
function responsesItems(t: Turn): Json[] {
  const items: Json[] = [];
  let message: Json | undefined;
  let n = 0;
  for (const p of t.answers[0].pieces) {
    if (p.kind === "text" || p.kind === "refusal") {
      if (!message) {
        message = { id: `msg_${n++}`, type: "message", status: "completed", role: "assistant", content: [] };
        items.push(message);
      }
      (message.content as Json[]).push(
        p.kind === "text"
          ? { type: "output_text", text: p.text, annotations: annotationsOf(p), logprobs: [] }
          : { type: "refusal", refusal: p.text },
      );
      continue;
    }
    message = undefined;
    if (p.kind === "thinking") {
      items.push({ id: `rs_${n++}`, type: "reasoning", summary: [{ type: "summary_text", text: p.text }] });
    } else if (p.kind === "call") {
      items.push({
        id: `fc_${n++}`,
        type: "function_call",
        status: "completed",
        call_id: p.call.id,
        name: p.call.name,
        arguments: p.call.args,
      });
    }
  }
  return items;
}

/** A Responses response object of `output`, with the usage once completed. */
function responsesResponse(t: Turn, output: Json[], status: string): Json {
  return {
    id: t.id,
    object: "response",
    created_at: 1,
    status,
    model: t.model,
    output,
    usage: status === "completed"
      ? {
        input_tokens: t.usage.input,
        output_tokens: t.usage.output,
        total_tokens: t.usage.input + t.usage.output,
      }
      : null,
  };
}

const responses: Writer = {
  path: "/v1/responses",
  request: (tools) => ({
    model: "m",
    input: "hi",
    ...(tools ? { tools: TOOLS.map((t) => ({ type: "function", ...t })) } : {}),
  }),
  body: (t) => responsesResponse(t, responsesItems(t), "completed"),
  stream(t, r, { empties } = {}) {
    let seq = 0;
    const out: string[] = [];
    const ev = (e: Json) => out.push(named({ ...e, sequence_number: seq++ }));
    ev({ type: "response.created", response: responsesResponse(t, [], "in_progress") });
    const items = responsesItems(t);
    items.forEach((item, oi) => {
      const id = item.id;
      if (item.type === "message") {
        ev({
          type: "response.output_item.added",
          output_index: oi,
          item: { ...item, status: "in_progress", content: [] },
        });
        (item.content as Json[]).forEach((part, ci) => {
          const at = { item_id: id, output_index: oi, content_index: ci };
          if (part.type === "output_text") {
            ev({ type: "response.content_part.added", ...at, part: { ...part, text: "", annotations: [] } });
            const annotations = [...part.annotations as Json[]];
            // A server may send a part's text only whole, in its .done events (the SDK takes it from them):
            // about one part in ten, told by its text and place (not drawn from `r`: the seeds found before
            // keep their frames).
            const whole = wholeOnly(part.text as string, oi, ci);
            const pieces = cutText(r, part.text as string, empties);
            let told = 0;
            for (const s of whole ? [] : pieces) {
              ev({ type: "response.output_text.delta", ...at, delta: s, logprobs: [] });
              told += s.length;
              // (an annotation comes once the text it covers did)
              if (annotations.length && (annotations[0].end_index as number) <= told) {
                ev({
                  type: "response.output_text.annotation.added",
                  ...at,
                  annotation_index: 0,
                  annotation: annotations.shift(),
                });
              }
            }
            ev({ type: "response.output_text.done", ...at, text: part.text, logprobs: [] });
            for (const annotation of whole ? annotations : []) {
              ev({ type: "response.output_text.annotation.added", ...at, annotation_index: 0, annotation });
            }
          } else {
            ev({ type: "response.content_part.added", ...at, part: { ...part, refusal: "" } });
            for (const s of cut(r, part.refusal as string)) {
              ev({ type: "response.refusal.delta", ...at, delta: s });
            }
            ev({ type: "response.refusal.done", ...at, refusal: part.refusal });
          }
          ev({ type: "response.content_part.done", ...at, part });
        });
      } else if (item.type === "reasoning") {
        ev({ type: "response.output_item.added", output_index: oi, item: { ...item, summary: [] } });
        const text = (item.summary as Json[])[0].text as string;
        const at = { item_id: id, output_index: oi, summary_index: 0 };
        ev({
          type: "response.reasoning_summary_part.added",
          ...at,
          part: { type: "summary_text", text: "" },
        });
        for (const s of cut(r, text)) ev({ type: "response.reasoning_summary_text.delta", ...at, delta: s });
        ev({ type: "response.reasoning_summary_text.done", ...at, text });
        ev({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text } });
      } else {
        ev({
          type: "response.output_item.added",
          output_index: oi,
          item: { ...item, status: "in_progress", arguments: "" },
        });
        for (const s of cut(r, item.arguments as string)) {
          ev({ type: "response.function_call_arguments.delta", item_id: id, output_index: oi, delta: s });
        }
        ev({
          type: "response.function_call_arguments.done",
          item_id: id,
          output_index: oi,
          arguments: item.arguments,
        });
      }
      ev({ type: "response.output_item.done", output_index: oi, item });
    });
    ev({ type: "response.completed", response: responsesResponse(t, items, "completed") });
    return out;
  },
};

/** Anthropic's blocks the gate passes as they come: redacted reasoning, a server tool's use and result. */
function anthropicOpaque(n: number, at: number): Json[] {
  const redacted = { type: "redacted_thinking", data: `enc${at}` };
  const use = { type: "server_tool_use", id: `srvtoolu_${at}`, name: "web_search", input: { query: "rain" } };
  const result = {
    type: "web_search_tool_result",
    tool_use_id: `srvtoolu_${at}`,
    content: [{
      type: "web_search_result",
      url: "https://example.com",
      title: "Rain",
      encrypted_content: "e",
    }],
  };
  return [[redacted], [use, result], [redacted, use, result], [redacted, redacted]][n];
}

/** The input a `tool_use` block of `anthropicBlocks` starts with in a stream, where it is not `{}`. */
const STARTS = new WeakMap<Json, Json>();

/** A `tool_use` block of `call`, noting the input its stream starts with (see `STARTS`). */
function toolUse(call: Call): Json {
  const block = { type: "tool_use", id: call.id, name: call.name, input: argsObject(call) };
  if (call.start !== undefined) STARTS.set(block, JSON.parse(call.start));
  return block;
}

/** An Anthropic turn as content blocks. */
function anthropicBlocks(t: Turn): Json[] {
  return t.answers[0].pieces.flatMap((p, i): Json[] =>
    p.kind === "opaque"
      ? anthropicOpaque(p.n, i)
      : p.kind === "call"
      ? [toolUse(p.call)]
      : p.kind === "thinking"
      ? [{ type: "thinking", thinking: p.text, signature: `sig${i}` }]
      : [{ type: "text", text: p.text }]
  );
}

const anthropicStop = (t: Turn) => (calls(t.answers[0]).length ? "tool_use" : "end_turn");

const anthropic: Writer = {
  path: "/v1/messages",
  request: (tools) => ({
    model: "m",
    max_tokens: 100,
    messages: [{ role: "user", content: "hi" }],
    ...(tools ? { tools: TOOLS.map((t) => ({ name: t.name, input_schema: t.parameters })) } : {}),
  }),
  body: (t) => ({
    id: t.id,
    type: "message",
    role: "assistant",
    model: t.model,
    content: anthropicBlocks(t),
    stop_reason: anthropicStop(t),
    stop_sequence: null,
    usage: { input_tokens: t.usage.input, output_tokens: t.usage.output },
  }),
  stream(t, r, { empties } = {}) {
    const out: string[] = [];
    const ev = (e: Json) => out.push(named(e));
    ev({
      type: "message_start",
      message: {
        id: t.id,
        type: "message",
        role: "assistant",
        model: t.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: t.usage.input, output_tokens: 1 },
      },
    });
    anthropicBlocks(t).forEach((block, index) => {
      if (block.type === "text") {
        ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
        for (const s of cutText(r, block.text as string, empties)) {
          ev({ type: "content_block_delta", index, delta: { type: "text_delta", text: s } });
        }
      } else if (block.type === "thinking") {
        ev({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        });
        for (const s of cut(r, block.thinking as string)) {
          ev({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: s } });
        }
        ev({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature },
        });
      } else if (block.type !== "tool_use" && block.type !== "server_tool_use") {
        ev({ type: "content_block_start", index, content_block: block });
      } else {
        const start = STARTS.get(block);
        ev({ type: "content_block_start", index, content_block: { ...block, input: start ?? {} } });
        for (const s of cut(r, JSON.stringify(block.input))) {
          ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: s } });
        }
      }
      ev({ type: "content_block_stop", index });
      if (r() < 0.2) ev({ type: "ping" });
    });
    ev({
      type: "message_delta",
      delta: { stop_reason: anthropicStop(t), stop_sequence: null },
      // (the API now tells the whole usage here too, at times)
      usage: r() < 0.5
        ? { output_tokens: t.usage.output }
        : { input_tokens: t.usage.input, output_tokens: t.usage.output },
    });
    ev({ type: "message_stop" });
    return out;
  },
};

const ollama: Writer = {
  path: "/api/chat",
  request: (tools) => chatRequest(tools),
  body(t) {
    const a = t.answers[0], cs = calls(a);
    const message: Json = { role: "assistant", content: texts(a, "text") };
    if (a.pieces.some((p) => p.kind === "thinking")) message.thinking = texts(a, "thinking");
    if (cs.length) {
      message.tool_calls = cs.map((c) => ({ function: { name: c.name, arguments: argsObject(c) } }));
    }
    return {
      model: t.model,
      created_at: "2025-01-01T00:00:00Z",
      message,
      done: true,
      done_reason: "stop",
      prompt_eval_count: t.usage.input,
      eval_count: t.usage.output,
    };
  },
  stream(t, r, { empties } = {}) {
    const line = (message: Json, done = false, extra: Json = {}) =>
      JSON.stringify({ model: t.model, created_at: "2025-01-01T00:00:00Z", message, done, ...extra }) + "\n";
    const out: string[] = [];
    const cs: Json[] = [];
    for (const p of t.answers[0].pieces) {
      if (p.kind === "call") {
        cs.push({ function: { name: p.call.name, arguments: argsObject(p.call) } });
        continue;
      }
      if (p.kind === "opaque") continue;
      for (const s of cutText(r, p.text, p.kind === "text" ? empties : undefined)) {
        out.push(
          line(
            p.kind === "text"
              ? { role: "assistant", content: s }
              : { role: "assistant", content: "", thinking: s },
          ),
        );
      }
    }
    if (cs.length) out.push(line({ role: "assistant", content: "", tool_calls: cs }));
    out.push(line({ role: "assistant", content: "" }, true, {
      done_reason: "stop",
      prompt_eval_count: t.usage.input,
      eval_count: t.usage.output,
    }));
    return out;
  },
};

/** A Gemini answer as parts (`thought` for reasoning, `functionCall` for calls, code the model ran). */
function geminiParts(a: Answer): Json[] {
  return a.pieces.flatMap((p): Json[] =>
    p.kind === "opaque"
      ? [
        { executableCode: { language: "PYTHON", code: `print(${p.n})` } },
        { codeExecutionResult: { outcome: "OUTCOME_OK", output: `${p.n}\n` } },
      ].slice(0, p.n === 0 ? 1 : 2)
      : p.kind === "call"
      ? [{
        functionCall: {
          ...(p.call.idShown ? { id: p.call.id } : {}),
          name: p.call.name,
          args: argsObject(p.call),
        },
      }]
      : p.kind === "thinking"
      ? [{ text: p.text, thought: true }]
      : [{ text: p.text }]
  );
}
const geminiUsage = (t: Turn) => ({
  promptTokenCount: t.usage.input,
  candidatesTokenCount: t.usage.output,
  totalTokenCount: t.usage.input + t.usage.output,
});

/** The `index` field the candidate at `place` of `count` names, as `places` numbers them. */
function geminiIndex(places: Places | undefined, place: number, count: number): { index?: number } {
  switch (places?.label) {
    case "omit-zero":
      return place === 0 ? {} : { index: place };
    case "shift":
      return { index: place + 1 };
    case "swap":
      return { index: count < 2 ? place + 1 : place < 2 ? 1 - place : place };
    default:
      return { index: place };
  }
}

const gemini: Writer = {
  path: "/v1beta/models/m:streamGenerateContent",
  request: (tools) => ({
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    generationConfig: { candidateCount: 3 },
    ...(tools ? { tools: [{ functionDeclarations: TOOLS }] } : {}),
  }),
  body: (t) => ({
    candidates: t.answers.map((a, index) => ({
      content: { role: "model", parts: geminiParts(a) },
      finishReason: "STOP",
      ...geminiIndex(t.places, index, t.answers.length),
    })),
    usageMetadata: geminiUsage(t),
    modelVersion: t.model,
    responseId: t.id,
  }),
  stream(t, r, { empties } = {}) {
    // (the API tells the usage so far in every chunk, at times; the last one's is the whole)
    const every = r() < 0.5;
    const chunk = (candidates: Json[], last: boolean) =>
      sse({
        candidates,
        ...(last
          ? { usageMetadata: geminiUsage(t) }
          : every
          ? { usageMetadata: { promptTokenCount: t.usage.input, totalTokenCount: t.usage.input } }
          : {}),
        modelVersion: t.model,
        responseId: t.id,
      });
    const lists = t.answers.map((a, index) => {
      const out: Json[] = [];
      for (const part of geminiParts(a)) {
        const last = out.at(-1)?.content as { parts: Json[] } | undefined;
        // (a call in the chunk of the words before it, as Gemini sends it at times)
        if (part.functionCall && t.places?.joined && last) last.parts.push(part);
        else if (typeof part.text !== "string") {
          out.push({ content: { role: "model", parts: [part] }, index });
        } else {
          // (an empty delta as a part of plain text: one with the signature of a thought would be another part)
          for (const s of cutText(r, part.text, part.thought === true ? undefined : empties)) {
            const piece = s === "" && s !== part.text ? { text: s } : { ...part, text: s };
            out.push({ content: { role: "model", parts: [piece] }, index });
          }
        }
      }
      if (!out.length) out.push({ content: { role: "model", parts: [{ text: "" }] }, index });
      out[out.length - 1] = { ...out[out.length - 1], finishReason: "STOP" };
      return out;
    });
    // A candidate stands at its position in a chunk (the clients and the gate read candidates by position,
    // not by \`index\`): empty ones before it; now and then the next pieces of several candidates share a chunk.
    const all = interleave(r, lists), out: string[] = [];
    while (all.length) {
      const row: Json[] = [all.shift()!];
      while (all.length && r() < 0.3 && !row.some((c) => c.index === all[0].index)) row.push(all.shift()!);
      const at: Json[] = [];
      for (const c of row) {
        const { index: place, ...rest } = c;
        // (as drawn by default: a seed's frames stay as they were)
        at[place as number] = t.places
          ? { ...rest, ...geminiIndex(t.places, place as number, t.answers.length) }
          : c;
      }
      const hole = t.places?.nulls ? null : {};
      out.push(chunk(Array.from(at, (c) => c ?? hole) as Json[], !all.length));
    }
    return out;
  },
};

/** A Cohere answer's `content` (text and thinking); its calls go in `tool_calls`. */
function cohereContent(a: Answer): Json[] {
  return a.pieces.flatMap((p): Json[] =>
    p.kind === "text"
      ? [{ type: "text", text: p.text }]
      : p.kind === "thinking"
      ? [{ type: "thinking", thinking: p.text }]
      : []
  );
}
/**
 * A Cohere answer's tool plan: an answer with native calls says which it calls first (none without), as
 * Cohere's models do before their calls; made from the answer, not drawn, so the seeds' streams stay as they
 * were otherwise.
 */
function coherePlan(a: Answer): string {
  const first = calls(a)[0];
  return first ? `I will call ${first.name} now.` : "";
}
/**
 * A Cohere answer's citations: the plan's first (`type: "PLAN"`, by offsets in the plan: it names the call),
 * then each in the text block it cites (`content_index`), by offsets in it.
 */
function cohereCitations(a: Answer): Json[] {
  const plan = coherePlan(a);
  const named = plan.slice(12, -5);
  const planned: Json[] = plan === "" ? [] : [{
    start: 12,
    end: 12 + named.length,
    text: named,
    sources: [{ type: "document", id: "doc_plan", document: { id: "doc_plan", snippet: "rain" } }],
    type: "PLAN",
  }];
  let block = 0;
  return planned.concat(a.pieces.flatMap((p): Json[] => {
    if (p.kind !== "text" && p.kind !== "thinking") return [];
    const at = block++;
    if (p.kind !== "text" || !p.cite) return [];
    const [start, end] = p.cite;
    return [{
      start,
      end,
      text: p.text.slice(start, end),
      sources: [{ type: "document", id: `doc_${at}`, document: { id: `doc_${at}`, snippet: "rain" } }],
      type: "TEXT_CONTENT",
      content_index: at,
    }];
  }));
}
const cohereUsage = (t: Turn) => ({
  billed_units: { input_tokens: t.usage.input, output_tokens: t.usage.output },
  tokens: { input_tokens: t.usage.input, output_tokens: t.usage.output },
});
const cohereFinish = (t: Turn) => (calls(t.answers[0]).length ? "TOOL_CALL" : "COMPLETE");

const cohere: Writer = {
  path: "/v2/chat",
  request: (tools) => chatRequest(tools),
  body(t) {
    const a = t.answers[0], cs = calls(a);
    const message: Json = { role: "assistant", content: cohereContent(a) };
    if (coherePlan(a)) message.tool_plan = coherePlan(a);
    const citations = cohereCitations(a);
    if (citations.length) message.citations = citations;
    if (cs.length) {
      message.tool_calls = cs.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.args },
      }));
    }
    return { id: t.id, finish_reason: cohereFinish(t), message, usage: cohereUsage(t) };
  },
  stream(t, r, { empties } = {}) {
    const out: string[] = [];
    const ev = (e: Json) => out.push(named(e));
    ev({ type: "message-start", id: t.id, delta: { message: { role: "assistant" } } });
    const a = t.answers[0];
    const citations = cohereCitations(a);
    let bi = 0, ci = 0, cited = 0;
    // (the plan comes first, then its citation)
    if (coherePlan(a)) {
      ev({ type: "tool-plan-delta", delta: { message: { tool_plan: coherePlan(a) } } });
      ev({ type: "citation-start", index: cited, delta: { message: { citations: citations[0] } } });
      ev({ type: "citation-end", index: cited++ });
    }
    for (const p of a.pieces) {
      if (p.kind === "call") {
        const index = ci++;
        ev({
          type: "tool-call-start",
          index,
          delta: {
            message: {
              tool_calls: { id: p.call.id, type: "function", function: { name: p.call.name, arguments: "" } },
            },
          },
        });
        for (const s of cut(r, p.call.args)) {
          ev({
            type: "tool-call-delta",
            index,
            delta: { message: { tool_calls: { function: { arguments: s } } } },
          });
        }
        ev({ type: "tool-call-end", index });
        continue;
      }
      if (p.kind === "opaque") continue;
      const index = bi++;
      const field = p.kind === "thinking" ? "thinking" : "text";
      ev({ type: "content-start", index, delta: { message: { content: { type: field, [field]: "" } } } });
      let told = 0;
      for (const s of cutText(r, p.text, field === "text" ? empties : undefined)) {
        ev({ type: "content-delta", index, delta: { message: { content: { [field]: s } } } });
        told += s.length;
        // (a citation comes once the text it covers did)
        const c = citations.find((c) => c.type !== "PLAN" && c.content_index === index);
        if (c && (c.end as number) <= told && !c.sent) {
          c.sent = true;
          const { sent: _, ...shown } = c;
          ev({ type: "citation-start", index: cited, delta: { message: { citations: shown } } });
          ev({ type: "citation-end", index: cited++ });
        }
      }
      ev({ type: "content-end", index });
    }
    ev({ type: "message-end", delta: { finish_reason: cohereFinish(t), usage: cohereUsage(t) } });
    return out;
  },
};

const WRITERS: Record<FuzzDialect, Writer> = { chat, responses, anthropic, ollama, gemini, cohere };

// ---------------------------------------------------------------------------------------------------------
// Reading what the client got
// ---------------------------------------------------------------------------------------------------------

interface ReadCall {
  id?: string;
  name: string;
  args: string;
  index?: number;
}
interface ReadAnswer {
  text: string;
  thinking: string;
  refusal: string;
  stop: unknown;
  calls: ReadCall[];
  /** The kinds of the answer's blocks, parts or items in order, where the dialect has them. */
  shape?: string[];
  /** The parts the gate passes as they come (see `Piece`), as JSON, in order. */
  other?: string[];
  /** The citations: the block, the offsets, the text, and whether the block's text there is that text. */
  cites?: string[];
  /** Cohere: the tool plan, where there is one. */
  plan?: string;
}
interface Read {
  id?: unknown;
  model?: unknown;
  usage?: unknown;
  answers: ReadAnswer[];
}

const blank = (): ReadAnswer => ({ text: "", thinking: "", refusal: "", stop: undefined, calls: [] });
const str = (v: unknown) => (typeof v === "string" ? v : "");
const canon = (args: unknown) => {
  const s = typeof args === "string" ? args : JSON.stringify(args ?? {});
  try {
    return JSON.stringify(JSON.parse(s));
  } catch {
    return s;
  }
};

/** The JSON `data:` payloads of an SSE text (Chat's `[DONE]` left out). */
function sseEvents(text: string): Json[] {
  const out: Json[] = [];
  for (const frame of text.split(/\r?\n\r?\n/)) {
    const data = frame.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) =>
      l.slice(5).replace(/^ /, "")
    );
    if (!data.length || data.join("\n").trim() === "[DONE]") continue;
    out.push(JSON.parse(data.join("\n")));
  }
  return out;
}

/** A Chat body as the client reads it. */
function readChatBody(b: Json): Read {
  return {
    id: b.id,
    model: b.model,
    usage: b.usage,
    answers: (b.choices as Json[]).map((c) => {
      const m = c.message as Json;
      return {
        text: str(m.content),
        thinking: str(m.reasoning_content),
        refusal: str(m.refusal),
        stop: c.finish_reason,
        calls: ((m.tool_calls ?? []) as Json[]).map((tc, index) => {
          const f = tc.function as Json;
          return { id: tc.id as string, name: f.name as string, args: canon(f.arguments), index };
        }),
      };
    }),
  };
}

/** A Chat stream as the openai SDK accumulates it: each choice by its index, each call by its index. */
function readChatStream(events: Json[], wire: Difference[]): Read {
  const out: Read = { answers: [] };
  for (const e of events) {
    out.id ??= e.id;
    out.model ??= e.model;
    if (e.usage) out.usage = e.usage;
    for (const c of (e.choices ?? []) as Json[]) {
      const a = out.answers[c.index as number] ??= blank();
      const d = (c.delta ?? {}) as Json;
      a.text += str(d.content);
      a.thinking += str(d.reasoning_content);
      a.refusal += str(d.refusal);
      if (c.finish_reason) a.stop = c.finish_reason;
      for (const tc of (d.tool_calls ?? []) as Json[]) {
        const i = tc.index as number;
        const f = (tc.function ?? {}) as Json;
        const call = (a.calls[i] ??= { name: "", args: "", index: i });
        if (tc.id) call.id = tc.id as string;
        // (the openai SDK keeps the last name sent at an index: a call that reused it renames the call)
        if (str(f.name)) call.name = str(f.name);
        call.args += str(f.arguments);
      }
    }
  }
  for (const a of out.answers) {
    if (a.calls.some((c) => c === undefined)) {
      wire.push({ where: "chat call indices", stream: a.calls.length, body: "dense" });
    }
    a.calls = a.calls.filter(Boolean).map((c) => ({ ...c, args: canon(c.args) }));
  }
  return out;
}

/** A Responses `output` read as one answer: text and refusals of its messages, reasoning summaries, calls. */
function readResponsesOutput(output: Json[], usage: unknown, b: Json): Read {
  const a = blank();
  a.shape = [];
  for (const item of output) {
    if (item.type === "message") {
      a.shape.push("message");
      for (const p of item.content as Json[]) {
        a.shape.push(p.type as string);
        a.text += str(p.text);
        a.refusal += str(p.refusal);
        for (const n of (p.annotations ?? []) as Json[]) {
          const holds = str(p.text).slice(n.start_index as number, n.end_index as number) === n.title;
          (a.cites ??= []).push(
            `${n.start_index}-${n.end_index}:${JSON.stringify(n.title)}:${holds ? "holds" : "misses"}`,
          );
        }
      }
    } else if (item.type === "reasoning") {
      a.shape.push("reasoning");
      for (const s of (item.summary ?? []) as Json[]) a.thinking += str(s.text);
    } else if (item.type === "function_call") {
      a.shape.push("function_call");
      a.calls.push({ id: item.call_id as string, name: item.name as string, args: canon(item.arguments) });
    } else a.shape.push(String(item.type));
  }
  a.stop = b.status;
  return { id: b.id, model: b.model, usage, answers: [a] };
}

/**
 * A Responses stream read as the openai SDK builds its running snapshot, with the wire checked on the way:
 * sequence numbers rise, items and parts are added at the next free index, each `.done` agrees with its
 * deltas, and the `response.completed` snapshot matches what the deltas built.
 */
function readResponsesStream(events: Json[], wire: Difference[]): Read {
  let last = -1;
  const output: Json[] = [];
  let completed: Json | undefined;
  const fault = (where: string, stream: unknown, body: unknown) =>
    wire.push({ where: `responses ${where}`, stream, body });
  for (const e of events) {
    const seq = e.sequence_number as number;
    if (!(seq > last)) fault("sequence_number", seq, `> ${last}`);
    last = seq;
    const item = output[e.output_index as number];
    switch (e.type) {
      case "response.output_item.added":
        if (e.output_index !== output.length) fault("output_index added", e.output_index, output.length);
        output[e.output_index as number] = structuredClone(e.item as Json);
        break;
      case "response.content_part.added": {
        const content = item?.content as Json[] | undefined;
        if (!content || e.content_index !== content.length) {
          fault("content_index added", e.content_index, content?.length);
        } else content.push(structuredClone(e.part as Json));
        break;
      }
      case "response.output_text.annotation.added": {
        const part = (item?.content as Json[] | undefined)?.[e.content_index as number];
        if (!part) fault("annotation to no part", e.content_index, "a part");
        else ((part.annotations ??= []) as Json[])[e.annotation_index as number] = e.annotation as Json;
        break;
      }
      case "response.reasoning_summary_part.added": {
        const summary = item?.summary as Json[] | undefined;
        if (!summary || e.summary_index !== summary.length) {
          fault("summary_index added", e.summary_index, summary?.length);
        } else summary.push(structuredClone(e.part as Json));
        break;
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const part = (item?.content as Json[] | undefined)?.[e.content_index as number];
        const key = e.type === "response.output_text.delta" ? "text" : "refusal";
        if (!part) fault(`${e.type} to no part`, e.content_index, "a part");
        else part[key] = str(part[key]) + str(e.delta);
        break;
      }
      case "response.reasoning_summary_text.delta": {
        const part = (item?.summary as Json[] | undefined)?.[e.summary_index as number];
        if (!part) fault("summary delta to no part", e.summary_index, "a part");
        else part.text = str(part.text) + str(e.delta);
        break;
      }
      case "response.function_call_arguments.delta":
        if (!item) fault("arguments delta to no item", e.output_index, "an item");
        else item.arguments = str(item.arguments) + str(e.delta);
        break;
      case "response.output_text.done":
      case "response.refusal.done": {
        const part = (item?.content as Json[] | undefined)?.[e.content_index as number];
        const key = e.type === "response.output_text.done" ? "text" : "refusal";
        // (a part that got no text from deltas takes the .done's, as the SDK does)
        if (part && part[key] === "" && typeof e[key] === "string") part[key] = e[key];
        else if (part?.[key] !== e[key]) fault(`${e.type} against deltas`, e[key], part?.[key]);
        break;
      }
      case "response.reasoning_summary_text.done": {
        const part = (item?.summary as Json[] | undefined)?.[e.summary_index as number];
        if (part?.text !== e.text) fault("summary .done against deltas", e.text, part?.text);
        break;
      }
      case "response.function_call_arguments.done":
        if (item?.arguments !== e.arguments) {
          fault("arguments .done against deltas", e.arguments, item?.arguments);
        }
        break;
      case "response.content_part.done": {
        const part = (item?.content as Json[] | undefined)?.[e.content_index as number];
        if (!isDeepStrictEqual(textOf(part), textOf(e.part as Json))) {
          fault("content_part.done against deltas", textOf(e.part as Json), textOf(part));
        }
        break;
      }
      case "response.output_item.done":
        if (!isDeepStrictEqual(itemText(item), itemText(e.item as Json))) {
          fault("output_item.done against deltas", itemText(e.item as Json), itemText(item));
        }
        output[e.output_index as number] = structuredClone(e.item as Json);
        break;
      case "response.completed":
        completed = e.response as Json;
        break;
    }
  }
  if (!completed) {
    fault("response.completed", "none", "one");
    return { answers: [] };
  }
  const built = (output.filter(Boolean)).map(itemText), final = (completed.output as Json[]).map(itemText);
  if (!isDeepStrictEqual(built, final)) fault("completed snapshot against deltas", final, built);
  for (const item of completed.output as Json[]) {
    if (item.type === "message" && !(item.content as Json[]).length) {
      fault("message with no part", item.id, "none");
    }
    // (the answers here have no empty part: one is the gate's)
    for (const p of (item.content ?? []) as Json[]) {
      if (p.type === "output_text" && p.text === "") fault("empty output_text part", item.id, "none");
    }
  }
  return readResponsesOutput(completed.output as Json[], completed.usage, completed);
}

const textOf = (p: Json | undefined) => p && { type: p.type, text: p.text ?? p.refusal };
const itemText = (i: Json | undefined) =>
  i && {
    type: i.type,
    id: i.id,
    content: (i.content as Json[] | undefined)?.map(textOf),
    summary: (i.summary as Json[] | undefined)?.map((s) => s.text),
    arguments: i.arguments,
    call_id: i.call_id,
  };

/** An Anthropic message as the client reads it. */
function readAnthropicBody(b: Json): Read {
  const a = blank();
  a.shape = [];
  a.other = [];
  for (const block of b.content as Json[]) {
    a.shape.push(block.type as string);
    if (block.type === "text") a.text += str(block.text);
    else if (block.type === "thinking") a.thinking += str(block.thinking);
    else if (block.type === "tool_use") {
      a.calls.push({ id: block.id as string, name: block.name as string, args: canon(block.input) });
    } else a.other.push(JSON.stringify(block));
  }
  a.stop = b.stop_reason;
  return { id: b.id, model: b.model, usage: b.usage, answers: [a] };
}

/** An Anthropic stream read as the SDK builds its message (blocks at their indices, the usage merged). */
function readAnthropicStream(events: Json[], wire: Difference[]): Read {
  let message: Json | undefined;
  for (const e of events) {
    if (e.type === "message_start") message = structuredClone(e.message as Json);
    if (!message) continue;
    const content = message.content as Json[];
    if (e.type === "content_block_start") {
      if (e.index !== content.length) {
        wire.push({ where: "anthropic block index", stream: e.index, body: content.length });
      }
      content[e.index as number] = structuredClone(e.content_block as Json);
      const b = content[e.index as number];
      if (b.type === "tool_use" || b.type === "server_tool_use") b.partial = "";
    }
    if (e.type === "content_block_delta") {
      const b = content[e.index as number], d = e.delta as Json;
      if (!b) {
        wire.push({ where: "anthropic delta to no block", stream: e.index, body: "a block" });
        continue;
      }
      if (d.type === "text_delta") b.text = str(b.text) + str(d.text);
      if (d.type === "thinking_delta") b.thinking = str(b.thinking) + str(d.thinking);
      if (d.type === "input_json_delta") b.partial = str(b.partial) + str(d.partial_json);
    }
    if (e.type === "message_delta") {
      Object.assign(message, e.delta as Json);
      message.usage = { ...message.usage as Json, ...e.usage as Json };
    }
  }
  if (!message) return { answers: [] };
  for (const b of message.content as Json[]) {
    if (b?.type === "tool_use" || b?.type === "server_tool_use") {
      b.input = b.partial ? JSON.parse(b.partial as string) : {};
      delete b.partial;
    }
    if (b?.type === "text" && str(b.text) === "") {
      wire.push({ where: "anthropic empty text block", stream: "", body: "none" });
    }
  }
  message.content = (message.content as Json[]).filter(Boolean);
  return readAnthropicBody(message);
}

/** An Ollama body as the client reads it (its usage: the prompt's and the answer's token counts). */
function readOllamaBody(b: Json): Read {
  const m = b.message as Json;
  const a: ReadAnswer = {
    text: str(m.content),
    thinking: str(m.thinking),
    refusal: "",
    stop: b.done_reason,
    calls: ((m.tool_calls ?? []) as Json[]).map((tc) => {
      const f = tc.function as Json;
      return { name: f.name as string, args: canon(f.arguments), index: f.index as number | undefined };
    }),
  };
  return { model: b.model, usage: [b.prompt_eval_count, b.eval_count], answers: [a] };
}

/** An Ollama stream as the ollama client joins it. */
function readOllamaStream(lines: Json[]): Read {
  const a = blank();
  let model: unknown, usage: unknown;
  for (const l of lines) {
    model ??= l.model;
    const m = (l.message ?? {}) as Json;
    a.text += str(m.content);
    a.thinking += str(m.thinking);
    for (const tc of (m.tool_calls ?? []) as Json[]) {
      const f = tc.function as Json;
      a.calls.push({
        name: f.name as string,
        args: canon(f.arguments),
        index: f.index as number | undefined,
      });
    }
    if (l.done) {
      a.stop = l.done_reason;
      usage = [l.prompt_eval_count, l.eval_count];
    }
  }
  return { model, usage, answers: [a] };
}

/** Gemini chunks (or one body) read as the clients read them: each candidate by its position in a chunk. */
function readGemini(chunks: Json[]): Read {
  const out: Read = { answers: [] };
  for (const c of chunks) {
    out.id ??= c.responseId;
    out.model ??= c.modelVersion;
    if (c.usageMetadata) out.usage = c.usageMetadata;
    for (const [at, cand] of ((c.candidates ?? []) as (Json | null)[]).entries()) {
      if (cand === null || !Object.keys(cand).length) continue;
      const a = out.answers[at] ??= { ...blank(), other: [] };
      for (const p of ((cand.content as Json | undefined)?.parts ?? []) as Json[]) {
        if (p.functionCall) {
          const f = p.functionCall as Json;
          a.calls.push({
            ...(f.id !== undefined ? { id: f.id as string } : {}),
            name: f.name as string,
            args: canon(f.args),
          });
        } else if (p.executableCode || p.codeExecutionResult) a.other!.push(JSON.stringify(p));
        else if (p.thought) a.thinking += str(p.text);
        else a.text += str(p.text);
      }
      if (cand.finishReason) a.stop = cand.finishReason;
    }
  }
  return out;
}

/** A Cohere body as the client reads it. */
function readCohereBody(b: Json): Read {
  const m = b.message as Json, a = blank();
  a.shape = [];
  const content = (m.content ?? []) as Json[];
  if (typeof m.tool_plan === "string") a.plan = m.tool_plan;
  for (const p of content) {
    a.shape.push(p.type as string);
    if (p.type === "text") a.text += str(p.text);
    if (p.type === "thinking") a.thinking += str(p.thinking);
  }
  a.cites = ((m.citations ?? []) as Json[]).map((c) => {
    // (a plan's citation: by offsets in the plan, the earlier attempts' first on a retried stream)
    const text = c.type === "PLAN" ? str(m.tool_plan) : str(content[c.content_index as number]?.text);
    const holds = text.slice(c.start as number, c.end as number) === c.text ? "holds" : "misses";
    return `${c.content_index}:${c.start}-${c.end}:${JSON.stringify(c.text)}:${holds}`;
  });
  a.calls = ((m.tool_calls ?? []) as Json[]).map((tc) => {
    const f = tc.function as Json;
    return { id: tc.id as string, name: f.name as string, args: canon(f.arguments) };
  });
  a.stop = b.finish_reason;
  return { id: b.id, usage: b.usage, answers: [a] };
}

/** A Cohere stream read as the AI SDK reads it: content by block index, calls by call index. */
function readCohereStream(events: Json[], wire: Difference[]): Read {
  const blocks: Json[] = [], cs: Json[] = [], citations: Json[] = [];
  let id: unknown, finish: unknown, usage: unknown, plan = "";
  for (const e of events) {
    const message = ((e.delta as Json | undefined)?.message ?? {}) as Json;
    if (e.type === "message-start") id = e.id;
    if (e.type === "tool-plan-delta") plan += str(message.tool_plan);
    if (e.type === "content-start") {
      if (e.index !== blocks.length) {
        wire.push({ where: "cohere block index", stream: e.index, body: blocks.length });
      }
      blocks[e.index as number] = { ...message.content as Json };
    }
    if (e.type === "content-delta") {
      const b = blocks[e.index as number], d = message.content as Json;
      if (!b) wire.push({ where: "cohere delta to no block", stream: e.index, body: "a block" });
      else if (b.type === "thinking") b.thinking = str(b.thinking) + str(d.thinking);
      else b.text = str(b.text) + str(d.text);
    }
    if (e.type === "citation-start") {
      if (e.index !== citations.length) {
        wire.push({ where: "cohere citation index", stream: e.index, body: citations.length });
      }
      citations.push(message.citations as Json);
    }
    if (e.type === "tool-call-start") cs[e.index as number] = structuredClone(message.tool_calls as Json);
    if (e.type === "tool-call-delta") {
      const f = (cs[e.index as number]?.function ?? {}) as Json;
      f.arguments = str(f.arguments) + str(((message.tool_calls as Json).function as Json).arguments);
    }
    if (e.type === "message-end") {
      finish = (e.delta as Json).finish_reason;
      usage = (e.delta as Json).usage;
    }
  }
  for (const b of blocks) {
    if (b?.type === "text" && !str(b.text)) {
      wire.push({ where: "cohere empty text block", stream: "", body: "none" });
    }
  }
  return readCohereBody({
    id,
    finish_reason: finish,
    usage,
    message: {
      content: blocks.filter(Boolean),
      tool_calls: cs.filter(Boolean),
      citations,
      ...(plan === "" ? {} : { tool_plan: plan }),
    },
  });
}

/** A gated stream as its client reads it; faults of its wire go to `wire`. */
function readStream(dialect: FuzzDialect, text: string, wire: Difference[]): Read {
  if (dialect === "ollama") {
    return readOllamaStream(text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)));
  }
  const events = sseEvents(text);
  switch (dialect) {
    case "chat":
      return readChatStream(events, wire);
    case "responses":
      return readResponsesStream(events, wire);
    case "anthropic":
      return readAnthropicStream(events, wire);
    case "gemini":
      return readGemini(events);
    default:
      return readCohereStream(events, wire);
  }
}

/** A gated body as its client reads it. */
function readBody(dialect: FuzzDialect, body: Json): Read {
  switch (dialect) {
    case "chat":
      return readChatBody(body);
    case "responses":
      return readResponsesOutput(body.output as Json[], body.usage, body);
    case "anthropic":
      return readAnthropicBody(body);
    case "ollama":
      return readOllamaBody(body);
    case "gemini":
      return readGemini([body]);
    default:
      return readCohereBody(body);
  }
}

// ---------------------------------------------------------------------------------------------------------
// One seed
// ---------------------------------------------------------------------------------------------------------

/** The marker that stands for the gate's reason in the compared text. */
const MARK = "⟦REASON⟧";

/** `s` with every reason replaced by the marker. */
function marked(s: string, reasons: readonly string[]): string {
  for (const r of [...reasons].sort((a, b) => b.length - a.length)) if (r) s = s.split(r).join(MARK);
  return s;
}

/**
 * `s` without its white space: a difference there is counted apart (words glued at a part's edge too), so a
 * hunt tells a space lost from a word lost; the README promises both alike (`--exact` counts it).
 */
const squeeze = (s: string) => s.replace(/\s+/g, "");

/** Bytes of `text` in 1 to 6 pieces cut anywhere (inside a character's UTF-8 too). */
function transport(r: Rand, text: string): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const at = [
    ...new Set(Array.from({ length: int(r, 0, 5) }, () => int(r, 1, Math.max(1, bytes.length - 1)))),
  ]
    .sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const i of [...at, bytes.length]) {
    if (i > from) out.push(bytes.slice(from, i));
    from = i;
  }
  return out;
}

/**
 * The fake provider: answers the n-th request with `turns[n]` (the last one again past the end); its streams
 * have empty text deltas drawn from `empties` when given.
 */
function provider(
  dialect: FuzzDialect,
  turns: Turn[],
  streamed: boolean,
  r: Rand,
  { empties, requests }: { empties?: Rand; requests?: Json[] } = {},
) {
  let n = 0;
  const writer = WRITERS[dialect];
  return (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = JSON.parse(String(init?.body ?? "{}"));
    requests?.push(request);
    // (as many answers as asked: a stream's retry asks for one)
    const asked = request.n ?? request.generationConfig?.candidateCount ?? 1;
    const turn = turns[Math.min(n++, turns.length - 1)];
    const t = { ...turn, answers: turn.answers.slice(0, asked) };
    if (!streamed) {
      return Promise.resolve(
        new Response(JSON.stringify(writer.body(t)), { headers: { "content-type": "application/json" } }),
      );
    }
    let frames = writer.stream(t, r, { empties });
    if (dialect !== "ollama") {
      // (SSE as servers and proxies write it at times: comments between frames, lines ended in CRLF)
      if (r() < 0.25) frames = frames.flatMap((f) => (r() < 0.3 ? [": keep-alive\n\n", f] : [f]));
      if (r() < 0.25) frames = frames.map((f) => f.replaceAll("\n", "\r\n"));
    }
    const pieces = transport(r, frames.join(""));
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = pieces.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    const type = dialect === "ollama" ? "application/x-ndjson" : "text/event-stream";
    return Promise.resolve(new Response(body, { headers: { "content-type": type } }));
  };
}

/**
 * The request and the turns (the first answer and, for a retry, the next ones) of one seed: the same on
 * every run and runtime.
 *
 * @example A seed's answers
 * ```ts
 * import assert from "node:assert/strict";
 * import { fuzzCase } from "./_gate_fuzz.ts";
 *
 * const { turns, path } = fuzzCase("anthropic", 3);
 * assert.equal(path, "/v1/messages");
 * assert.deepEqual(fuzzCase("anthropic", 3).turns, turns);
 * ```
 */
export function fuzzCase(
  dialect: FuzzDialect,
  seed: number,
  { emptyDeltas = false, oddCandidates = false, sharedPlaces = false }: SeedOptions = {},
): { request: Json; turns: Turn[]; path: string } {
  const r = seeded(seed * 7919 + FUZZ_DIALECTS.indexOf(dialect));
  const drawn = [turnOf(r, dialect, "a"), turnOf(r, dialect, "b"), turnOf(r, dialect, "c")];
  const writer = WRITERS[dialect];
  const request = writer.request(r() < 0.95);
  const blanked = emptyDeltas ? blankStarts(drawn, seeded(seed * 7901 + 7)) : drawn;
  const turns = sharedPlaces ? placesShared(blanked, seeded(seed * 7877 + 13)) : blanked;
  return {
    request,
    turns: oddCandidates ? oddPlaces(turns, seeded(seed * 7883 + 11)) : turns,
    path: writer.path,
  };
}

/**
 * `turns` with some native calls given a place or an input twice (drawn from `r`, a stream of its own):
 * a call after the first of its answer reuses the `index` of the one before it under its own id (Chat), and
 * a block starts with another call's input before its deltas stream its own (Anthropic). Only those two
 * writers read them. A body has no such call: see `placeChecks`.
 */
function placesShared(turns: Turn[], r: Rand): Turn[] {
  return turns.map((t) => ({
    ...t,
    answers: t.answers.map((a) => {
      let n = 0;
      return {
        pieces: a.pieces.map((p): Piece => {
          if (p.kind !== "call") return p;
          const reuse = n++ > 0 && r() < 0.5 ? { reuse: true as const } : {};
          const other = callOf(r, "").args;
          const start = r() < 0.5 && other !== p.call.args ? { start: other } : {};
          return { kind: "call", call: { ...p.call, ...reuse, ...start } };
        }),
      };
    }),
  }));
}

/**
 * `turns` each numbering and placing its candidates one of the ways of `Places` (drawn from `r`, a stream
 * of its own: a seed's answers and frames stay). Only the Gemini writer reads them.
 */
function oddPlaces(turns: Turn[], r: Rand): Turn[] {
  const labels = ["keep", "omit-zero", "shift", "swap"] as const;
  return turns.map((t) => ({
    ...t,
    places: { label: pick(r, labels), nulls: r() < 0.5, joined: r() < 0.5 },
  }));
}

/** Options of a seed's run. */
export interface SeedOptions {
  /**
   * Streams have empty text deltas among their pieces, drawn from a stream of their own (see `cutText`),
   * and some written calls open a part of their own after a blank (see `blankStarts`).
   */
  emptyDeltas?: boolean;
  /**
   * Gemini candidates name an `index` other than their place at times, chunks hold the places before a
   * candidate with `null`, and a call comes in the chunk of the words before it (see `Places`).
   */
  oddCandidates?: boolean;
  /**
   * Chat calls reuse the `index` of the call before them, Anthropic blocks start with another input than
   * their deltas stream (see `placesShared`); the stream is then checked against itself (`placeChecks`).
   */
  sharedPlaces?: boolean;
}

/**
 * `turns` with some texts that write a call after words parted in two before it (drawn from `r`, a stream
 * of its own): the call's part opens with the white space before the call (a space where there was none).
 * With `cutText`'s lone blank and empty delta after it, that is the start a watch holding the blank must
 * not let out ahead of a rejected call; parts cut at random came to it about once in a thousand seeds.
 */
function blankStarts(turns: Turn[], r: Rand): Turn[] {
  const part = (p: Piece): Piece[] => {
    if (p.kind !== "text" || p.cite !== undefined) return [p];
    const start = extractToolCalls(p.text)[0]?.block.start ?? 0;
    const blank = /\s*$/.exec(p.text.slice(0, start))![0];
    const at = start - blank.length;
    if (at === 0 || r() >= 0.3) return [p];
    const rest = (blank === "" ? " " : "") + p.text.slice(at);
    return [{ kind: "text", text: p.text.slice(0, at) }, { kind: "text", text: rest }];
  };
  return turns.map((t) => ({ ...t, answers: t.answers.map((a) => ({ pieces: a.pieces.flatMap(part) })) }));
}

/** One seed's request through `guardFetch` in `mode`, streamed or whole: what the client got, and the events. */
function through(
  dialect: FuzzDialect,
  mode: FuzzMode,
  seed: number,
  streamed: boolean,
  options: SeedOptions = {},
): Promise<{ text: string; events: GateEvent[]; requests: Json[] }> {
  const empties = options.emptyDeltas && streamed ? seeded(seed * 7907 + 104729) : undefined;
  return sent(
    fuzzCase(dialect, seed, options),
    { dialect, mode, streamed, empties },
    seeded(seed + (streamed ? 1 : 2)),
  );
}

/** A case's request through `guardFetch` in `mode`, streamed or whole (`r` cuts the frames). */
async function sent(
  { request, turns, path }: { request: Json; turns: Turn[]; path: string },
  { dialect, mode, streamed, empties }: {
    dialect: FuzzDialect;
    mode: FuzzMode;
    streamed: boolean;
    empties?: Rand;
  },
  r: Rand,
): Promise<{ text: string; events: GateEvent[]; requests: Json[] }> {
  const events: GateEvent[] = [], requests: Json[] = [];
  const options: GuardFetchOptions = {
    onVerdict: (e) => events.push(e),
    ...(mode === "drop-call" ? { onRejected: "drop-call" } : {}),
    ...(mode === "retry" ? { retry: 2 } : {}),
  };
  const gfetch = guardFetch(provider(dialect, turns, streamed, r, { empties, requests }), options);
  let url = `http://fuzz.test${path}`;
  if (dialect === "gemini" && streamed) url += "?alt=sse";
  if (dialect === "gemini" && !streamed) url = url.replace(":streamGenerateContent", ":generateContent");
  const body = { ...request, ...(streamed && dialect !== "gemini" ? { stream: true } : {}) };
  if (dialect === "ollama" && !streamed) body.stream = false;
  const response = await gfetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return { text: await response.text(), events, requests };
}

/**
 * The gated stream `text` read by the official SDK of its dialect (openai for Chat and Responses,
 * @anthropic-ai/sdk for Anthropic), as its final object; undefined for a dialect without one here. The SDK
 * throws on events its running snapshot cannot take (a part at an index it has not, a delta to no item).
 */
async function sdkRead(dialect: FuzzDialect, text: string): Promise<Read | undefined> {
  const fetch = () =>
    Promise.resolve(new Response(text, { headers: { "content-type": "text/event-stream" } }));
  const options = { apiKey: "k", baseURL: "http://fuzz.test/v1", fetch, maxRetries: 0 };
  const messages = [{ role: "user" as const, content: "hi" }];
  if (dialect === "chat") {
    const stream = new OpenAI(options).chat.completions.stream({ model: "m", messages, n: 3 });
    return readChatBody(await stream.finalChatCompletion() as unknown as Json);
  }
  if (dialect === "responses") {
    const stream = new OpenAI(options).responses.stream({ model: "m", input: "hi" });
    const final = await stream.finalResponse() as unknown as Json;
    return readResponsesOutput(final.output as Json[], final.usage, final);
  }
  if (dialect === "anthropic") {
    const client = new Anthropic({ ...options, baseURL: "http://fuzz.test" });
    const stream = client.messages.stream({ model: "m", max_tokens: 100, messages });
    return readAnthropicBody(await stream.finalMessage() as unknown as Json);
  }
  return undefined;
}

/**
 * What the client got, streamed and whole, the provider's first stream (`raw`) and the gate's events: for
 * replaying one seed by hand (`gate_fuzz.ts --dump`).
 *
 * @example One seed's wire
 * ```ts
 * import assert from "node:assert/strict";
 * import { debugSeed } from "./_gate_fuzz.ts";
 *
 * const dump = await debugSeed("ollama", "withhold", 1) as { stream: string; body: string };
 * assert.ok(dump.stream.endsWith("\n"));
 * assert.equal(typeof JSON.parse(dump.body), "object");
 * ```
 */
export async function debugSeed(
  dialect: FuzzDialect,
  mode: FuzzMode,
  seed: number,
  options: SeedOptions = {},
): Promise<unknown> {
  const s = await through(dialect, mode, seed, true, options);
  const b = await through(dialect, mode, seed, false, options);
  const brief = (e: GateEvent) => ({
    ...e,
    reason: e.reason?.length,
    calls: e.verdict.calls.map((c) => [c.name, c.allowed]),
    verdict: undefined,
  });
  const empties = options.emptyDeltas ? seeded(seed * 7907 + 104729) : undefined;
  const raw = WRITERS[dialect].stream(fuzzCase(dialect, seed, options).turns[0], seeded(seed + 1), {
    empties,
  }).join(
    "",
  );
  return {
    raw,
    stream: s.text,
    body: b.text,
    streamEvents: s.events.map(brief),
    bodyEvents: b.events.map(brief),
  };
}

/** A piece of an answer given to {@linkcode givenBothWays}: text, or a native call (arguments as an object). */
export type GivenPiece = { text: string } | { call: string; args: Record<string, unknown> };

/**
 * The text of one answer made of `pieces` (each text piece a part or block of its own where the dialect has
 * them, streamed in pieces cut by a fixed seed), as the client reads it through `guardFetch` in `mode`,
 * streamed and whole: for a test of one case the seeds may never write.
 *
 * @example Text and a call to a tool the request does not declare, withheld
 * ```ts
 * import assert from "node:assert/strict";
 * import { givenBothWays } from "./_gate_fuzz.ts";
 *
 * const pieces = [{ text: "Let me look." }, { call: "delete_everything", args: {} }];
 * const { stream, body } = await givenBothWays("ollama", "withhold", pieces);
 * assert.equal(stream, body);
 * assert.match(body, /^Let me look\.\n\ntoolguard stopped/);
 * ```
 */
export async function givenBothWays(
  dialect: FuzzDialect,
  mode: FuzzMode,
  pieces: readonly GivenPiece[],
): Promise<{ stream: string; body: string }> {
  let n = 0;
  const answer: Answer = {
    pieces: pieces.map((p): Piece =>
      "text" in p
        ? { kind: "text", text: p.text }
        : { kind: "call", call: { id: `call_given${n++}`, name: p.call, args: JSON.stringify(p.args) } }
    ),
  };
  const turn: Turn = {
    id: "id_given",
    model: "given-model",
    answers: [answer],
    usage: { input: 3, output: 4 },
  };
  const writer = WRITERS[dialect];
  const given = { request: writer.request(true), turns: [turn], path: writer.path };
  const read = async (streamed: boolean) => {
    const { text } = await sent(given, { dialect, mode, streamed }, seeded(streamed ? 1 : 2));
    const read = streamed ? readStream(dialect, text, []) : readBody(dialect, JSON.parse(text));
    return read.answers[0]?.text ?? "";
  };
  return { stream: await read(true), body: await read(false) };
}

/** The stop reason of an answer that leaves calls to run, in the dialects that name one. */
const TOOL_STOP: Partial<Record<FuzzDialect, string>> = { chat: "tool_calls", anthropic: "tool_use" };

/**
 * The checks of a stream that gives calls a place or an input twice (`placesShared`), which no body can
 * hold, so it is read against itself (`out` gets `stream`: what it read, `body`: what it should have): an
 * answer stops for its calls only where it has some; a reason saying the other calls were kept leaves the
 * calls it does not count as rejected (M - R of its "R of M calls"), and any other reason leaves none
 * (checked in answers of native calls: `last`, the turn the stream's client read last); each follow-up the
 * gate sent holds the calls its tool results describe (a result saying a call was rejected, of a call the
 * judge rejects; one saying it did not run, of one it accepts).
 */
async function placeChecks(
  dialect: FuzzDialect,
  read: Read,
  last: Turn | undefined,
  requests: readonly Json[],
  out: Difference[],
): Promise<void> {
  read.answers.forEach((a, i) => {
    const stop = TOOL_STOP[dialect];
    if (stop !== undefined && (a.stop === stop) !== (a.calls.length > 0)) {
      out.push({ where: `answer ${i} stop against its calls`, stream: a.stop, body: a.calls.length });
    }
    const at = Math.max(
      a.text.lastIndexOf("toolguard removed the rejected"),
      a.text.lastIndexOf("toolguard stopped"),
    );
    if (at < 0 || !last?.answers[i] || calls(last.answers[i]).length === 0) return;
    const reason = a.text.slice(at);
    const kept =
      /^toolguard removed the rejected tool calls? below; the other calls? of this turn (?:was|were) kept\./
        .test(reason);
    const counted = /(\d+) of (\d+) calls (?:was|were) rejected/.exec(reason);
    const left = kept ? (counted ? Number(counted[2]) - Number(counted[1]) : NaN) : 0;
    if (a.calls.length !== left) {
      const said = reason.split("\n").slice(0, 2).join(" / ");
      out.push({
        where: `answer ${i} calls against its reason`,
        stream: a.calls.length,
        body: `${left}: ${said}`,
      });
    }
  });
  for (const request of requests.slice(1)) {
    const turn = followUpTurn(request);
    if (!turn) continue;
    const verdict = await validateToolCalls(turn.calls, {
      tools: Array.isArray(request.tools) ? request.tools : undefined,
    });
    turn.results.forEach((text, k) => {
      const said = /^Your call to /.test(text)
        ? "rejected"
        : /^toolguard did not run /.test(text)
        ? "accepted"
        : text;
      const judged = verdict.calls[k] === undefined
        ? "no call"
        : verdict.calls[k].allowed
        ? "accepted"
        : "rejected";
      if (said !== judged) {
        out.push({ where: `follow-up call ${k} against its tool result`, stream: turn.calls[k], body: text });
      }
    });
  }
}

/**
 * The last assistant turn of a follow-up request (Chat, Anthropic) and its tool results, each result paired
 * with the call of its id (the n-th of an id with the n-th result of it); undefined for another dialect.
 */
function followUpTurn(request: Json): { calls: unknown[]; results: string[] } | undefined {
  const messages = Array.isArray(request.messages) ? request.messages as Json[] : [];
  const at = messages.findLastIndex((m) => m.role === "assistant");
  if (at < 0) return undefined;
  const assistant = messages[at];
  const made: { id: unknown; call: unknown }[] = Array.isArray(assistant.tool_calls)
    ? (assistant.tool_calls as Json[]).map((c) => ({ id: c.id, call: c }))
    : Array.isArray(assistant.content)
    ? (assistant.content as Json[]).filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, call: b }))
    : [];
  const answered: { id: unknown; text: string }[] = messages.slice(at + 1).flatMap((m) =>
    m.role === "tool"
      ? [{ id: m.tool_call_id, text: str(m.content) }]
      : Array.isArray(m.content)
      ? (m.content as Json[]).filter((b) => b.type === "tool_result").map((b) => ({
        id: b.tool_use_id,
        text: str(b.content),
      }))
      : []
  );
  const used = new Map<unknown, number>();
  const calls = answered.map(({ id }) => {
    const nth = used.get(id) ?? 0;
    used.set(id, nth + 1);
    return made.filter((c) => c.id === id)[nth]?.call;
  });
  return { calls, results: answered.map((r) => r.text) };
}

/** Notes a difference at `where` unless `a` (the stream's) and `b` (the body's) are deeply equal. */
function compare(a: unknown, b: unknown, where: string, out: Difference[]) {
  if (!isDeepStrictEqual(a, b)) out.push({ where, stream: a, body: b });
}

/**
 * Runs one seed: the same answer whole and streamed through the gate in `mode`, and the differences in what
 * the client read. Text is compared with the gate's reason replaced by a marker, so the reason's place
 * counts; white space apart, in `whitespace` (see `squeeze`). A retried stream keeps what it sent of
 * the rejected attempts: the body's answer must end it. Seeds where stream and body differ by design (a
 * response of several answers retried streamed, not whole) are `skipped`.
 *
 * @example A seed of Ollama answers, withheld
 * ```ts
 * import assert from "node:assert/strict";
 * import { fuzzSeed } from "./_gate_fuzz.ts";
 *
 * const { differences } = await fuzzSeed("ollama", "withhold", 1);
 * assert.deepEqual(differences, []);
 * ```
 */
export async function fuzzSeed(
  dialect: FuzzDialect,
  mode: FuzzMode,
  seed: number,
  options: SeedOptions = {},
): Promise<FuzzResult> {
  const differences: Difference[] = [], whitespace: Difference[] = [];
  let s: Awaited<ReturnType<typeof through>>, b: Awaited<ReturnType<typeof through>>;
  try {
    [s, b] = [
      await through(dialect, mode, seed, true, options),
      await through(dialect, mode, seed, false, options),
    ];
  } catch (error) {
    return { differences: [{ where: "threw", stream: String(error), body: "" }], whitespace };
  }
  let sr: Read, br: Read;
  try {
    sr = readStream(dialect, s.text, differences);
  } catch (error) {
    return {
      differences: [{ where: "stream unreadable", stream: String(error), body: s.text.slice(0, 400) }],
      whitespace,
    };
  }
  try {
    br = readBody(dialect, JSON.parse(b.text));
  } catch (error) {
    return {
      differences: [{ where: "body unreadable", stream: "", body: `${error}: ${b.text.slice(0, 400)}` }],
      whitespace,
    };
  }
  const retried = s.events.some((e) => e.retried);
  // A response of several answers whose written calls all came in the first is retried streamed, not whole
  // (README, \`retry\`), and a stream's retry asks for one answer (it continues the first), a body's for as
  // many as before: what the client reads then differs by design, and only the stream's wire is checked.
  const byDesign = retried && fuzzCase(dialect, seed).turns.some((t) => t.answers.length > 1);
  try {
    const sdk = await sdkRead(dialect, s.text);
    // (what the SDK builds and what the reader here builds of the same bytes, answer by answer)
    sdk?.answers.forEach((a, i) => {
      const mine = sr.answers[i] ?? blank();
      // (the openai SDK keeps only the last piece of a field Chat does not define, as reasoning_content)
      for (const key of ["text", "thinking", "refusal", "stop"] as const) {
        if (key === "thinking" && dialect === "chat") continue;
        compare(
          a[key],
          mine[key],
          `sdk answer ${i} ${key} (stream: the SDK's; body: read here)`,
          differences,
        );
      }
      compare(a.other, mine.other, `sdk answer ${i} other parts`, differences);
      compare(
        a.calls.map(({ index: _, ...c }) => c),
        mine.calls.map(({ index: _, ...c }) => c),
        `sdk answer ${i} calls`,
        differences,
      );
    });
  } catch (error) {
    differences.push({ where: "sdk threw on the stream", stream: String(error), body: "" });
  }
  if (byDesign) return { differences, whitespace: [], skipped: true };
  if (options.sharedPlaces) {
    // (checked against itself; against its body too where no call the stream sent has a place or an input
    // twice: the other dialects' writers, and a seed that drew none)
    const turns = fuzzCase(dialect, seed, options).turns;
    const last = turns[Math.min(s.requests.length, turns.length) - 1];
    await placeChecks(dialect, sr, last, s.requests, differences);
    const twice = (c: Call) => (dialect === "chat" && c.reuse) || (dialect === "anthropic" && c.start);
    if (turns.some((t) => t.answers.some((a) => calls(a).some(twice)))) {
      return { differences, whitespace, rejected: s.events.some((e) => !e.verdict.allowed) };
    }
  }
  const reasons = [...s.events, ...b.events].flatMap((e) => (e.reason ? [e.reason] : []));
  const sReasons = s.events.flatMap((e) => (e.reason ? [e.reason] : []));
  const bReasons = b.events.flatMap((e) => (e.reason ? [e.reason] : []));
  compare(sReasons.at(-1), bReasons.at(-1), "reason text", differences);
  // The events are the same plain data streamed and whole (README, \`onVerdict\`): but what only a stream has
  // (\`streamed\`, its \`findings\` and assembled \`calls\`), and the raw argument text, which a body of
  // arguments as an object (Anthropic, Ollama, Gemini) has not.
  const told = (events: GateEvent[]) =>
    events.map((e) => ({
      keys: Object.keys(e).filter((k) => !["streamed", "findings", "calls"].includes(k)).sort(),
      dialect: e.dialect,
      changed: e.changed,
      reason: e.reason === undefined ? undefined : marked(e.reason, reasons),
      attempt: e.attempt,
      retried: e.retried,
      usage: e.usage,
      allowed: e.verdict.allowed,
      rejected: e.verdict.rejectedIndices,
      calls: e.verdict.calls.map((c) => ({
        // (a synthetic id hashes the raw argument text too: see above)
        id: /^call_[0-9a-f]{16}$/.test(c.id ?? "") ? "synthetic" : c.id,
        name: c.name,
        allowed: c.allowed,
        arguments: c.arguments,
        findings: c.findings.map((f) => f.code),
      })),
    }));
  compare(told(s.events), told(b.events), "events", differences);
  compare(s.events.at(-1)?.verdict.allowed, b.events.at(-1)?.verdict.allowed, "verdict allowed", differences);
  // (a retried stream goes on in the message the client has: its id is the first attempt's)
  if (!retried) compare(sr.id, br.id, "id", differences);
  compare(sr.model, br.model, "model", differences);
  compare(sr.usage, br.usage, "usage", differences);
  // (a retry sends back the first answer's turn: the other answers a stream sent stay, the body has the
  // retry's alone)
  if (!retried) compare(sr.answers.length, br.answers.length, "answers", differences);
  // A retried stream keeps what it sent of the rejected attempts before the retry's answer: the body's
  // answer is the end of the stream's.
  // The reason is a paragraph of its own: one blank line before it after words, not more where the text
  // before it ends in line breaks of its own (the model's prose here never runs more than two in a row;
  // README, \`guardFetch\`), after a retry's stream too, whose reason follows the attempts' text before it.
  for (const [way, read] of [["stream", sr], ["body", br]] as const) {
    read.answers.forEach((a, i) => {
      for (const m of marked(a.text, reasons).matchAll(/(\s*)⟦REASON⟧/g)) {
        const breaks = m[1].split("\n").length - 1;
        const words = m.index > 0;
        if (breaks > 2 || (words && breaks < 2)) {
          differences.push({
            where: `answer ${i} text: ${breaks} line breaks before the reason, after ${
              words ? "words" : "none"
            } (${way})`,
            stream: marked(a.text, reasons).slice(Math.max(0, m.index - 40), m.index + m[0].length),
            body: "",
          });
        }
      }
    });
  }
  br.answers.forEach((ba, i) => {
    const sa = sr.answers[i] ?? blank();
    for (const key of ["text", "thinking", "refusal"] as const) {
      const st = marked(sa[key], reasons), bt = marked(ba[key], reasons);
      const same = retried ? (x: string, y: string) => x.endsWith(y) : (x: string, y: string) => x === y;
      if (same(squeeze(st), squeeze(bt)) || (retried && squeeze(st).endsWith(squeeze(bt)))) {
        if (!same(st, bt)) whitespace.push({ where: `answer ${i} ${key}`, stream: st, body: bt });
      } else differences.push({ where: `answer ${i} ${key}`, stream: st, body: bt });
    }
    // A retry's text does not join the earlier attempts' words: a blank line parts them, where the text runs
    // on in the client's and where it goes in a block or item of its own, whose text clients join too
    // (README, `retry`; this fuzz scores no tokens). (The answer's text here is its blocks' joined.)
    // So does a retry's Cohere tool plan, which clients append to the earlier attempts' as Chat's text.
    for (const key of ["text", "plan"] as const) {
      const st = sa[key] ?? "", bt = ba[key] ?? "";
      const before = st.length - bt.length - 1;
      if (!retried || before < 0 || !st.endsWith(bt)) continue;
      if (/\S/u.test(st[before]) && /^\S/u.test(bt)) {
        differences.push({
          where: `answer ${i} ${key}: the retry's runs on from the earlier attempts'`,
          stream: st.slice(Math.max(0, before - 40), before + 41),
          body: bt.slice(0, 40),
        });
      }
    }
    compare(sa.stop, ba.stop, `answer ${i} stop`, differences);
    compare(sa.calls, ba.calls, `answer ${i} calls`, differences);
    // (a retried stream keeps the parts of the attempts before: the body's end the stream's)
    const other = retried ? sa.other?.slice(-(ba.other?.length ?? 0)) : sa.other;
    if (!retried || ba.other?.length) compare(other, ba.other, `answer ${i} other parts`, differences);
    if (!retried) compare(sa.shape, ba.shape, `answer ${i} shape`, differences);
    if (!retried) compare(sa.cites, ba.cites, `answer ${i} citations`, differences);
    // (a retry's citations follow those the client has: each still covers the text it names)
    else if (sa.cites?.some((c) => c.endsWith(":misses"))) {
      differences.push({ where: `answer ${i} citations`, stream: sa.cites, body: ba.cites });
    }
  });
  return { differences, whitespace, rejected: b.events.some((e) => !e.verdict.allowed) };
}
