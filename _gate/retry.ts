/**
 * The transparent retry's follow-up request: the request that was sent, with the assistant's rejected turn
 * and one tool result per call carrying the feedback appended, in the provider's own shape (Chat: `tool`
 * messages; Responses: `function_call_output`; Anthropic: `tool_result` with `is_error: true`; Ollama:
 * `role: "tool"`; Gemini: `functionResponse`; Cohere: `role: "tool"`).
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import type { CallVerdict, Verdict } from "../types.ts";
import type { StreamDialect } from "./calls.ts";
import { contentText, REASONING_FIELDS } from "./dialects/shared.ts";
import { isClientCall } from "./dialects/readers.ts";
import { cutCalls, cutJoined, describeVerdict } from "./engines.ts";

/** One call of the rejected turn, as the follow-up repeats it. */
export interface TurnCall {
  /** The call id (the provider's, or the synthetic one the gate gave it). */
  id: string;
  /** The tool name. */
  name: string;
  /** The argument text (JSON; a custom tool's free text when `freeText`). */
  arguments: string;
  /** Set for an OpenAI Responses custom tool's free-text input. */
  freeText?: true;
}

/** The assistant's rejected turn. */
export interface RejectedTurn {
  /** The calls, in order (as judged). */
  calls: readonly TurnCall[];
  /** The verdict on them. */
  verdict: Verdict;
  /**
   * What the assistant said, as a whole response body of the dialect: the body it came in, or what a
   * stream said (its text and reasoning, see `TurnRecorder`). Sent back as the assistant's turn.
   */
  body?: Record<string, unknown>;
  /** Set when the calls were written into the text: the text goes back without them. */
  fromText?: true;
}

/** The feedback each call of a rejected turn gets as its tool result. */
export function callFeedback(verdict: Verdict, tools: readonly unknown[] | undefined): string[] {
  const rejected = verdict.calls.filter((c) => !c.allowed).length;
  const others = rejected === 1
    ? "another call in the same turn was"
    : `${rejected} other calls in the same turn were`;
  // (a rejected call's description says itself that it was rejected and did not run)
  return verdict.calls.map((c: CallVerdict) =>
    c.allowed
      ? `toolguard did not run ${c.name}: ${others} rejected. Call it again if it is still needed.`
      : describeVerdict(c, { tools })
  );
}

/** Parses argument text into an object (`{}` when it is not one). */
function argObject(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

/** A list field of the request, copied (empty when absent). */
function list(request: Record<string, unknown>, key: string): unknown[] {
  const v = request[key];
  return Array.isArray(v) ? [...v] : [];
}

/** The first choice's / candidate's message of a body. */
function firstOf(
  body: Record<string, unknown> | undefined,
  key: string,
): Record<string, unknown> | undefined {
  const items = body && Array.isArray(body[key]) ? body[key] as unknown[] : [];
  return isRecord(items[0]) ? items[0] : undefined;
}

type Builder = (request: Record<string, unknown>, turn: RejectedTurn, feedback: string[]) => Record<
  string,
  unknown
>;

/**
 * `text` as the follow-up sends it back: without the calls when they were written into it, since they go
 * back as structured calls too, and a model shown its call twice tends to write it again.
 */
function spoken(text: string, turn: RejectedTurn): string {
  return turn.fromText ? tidied([text], [cutCalls(text)])[0] : text;
}

/**
 * The `cut` texts of `texts` trimmed where a call was cut from them: the text before a call stays as it
 * came in what the client gets (a stream sent it), but the model is sent its words, and Anthropic refuses a
 * text block of white space alone.
 */
function tidied(texts: readonly string[], cut: readonly string[]): string[] {
  return cut.map((t, i) => t === texts[i] ? t : t.trim());
}

/**
 * The assistant's text in `message`: its `content` (a string, or the text of its parts), without the calls
 * when they were written into it.
 */
function messageText(message: unknown, turn: RejectedTurn): string {
  return spoken(isRecord(message) ? contentText(message) ?? "" : "", turn);
}

/**
 * The blocks or parts of what the assistant said (Anthropic `content`, Gemini `parts`, Cohere `content`, a
 * Responses message's `content`), each answer text without the calls written into it. A text left empty is
 * dropped (Anthropic refuses an empty text block), unless it carries a `thoughtSignature` (Gemini wants it
 * back as it came).
 */
function spokenParts(
  parts: readonly unknown[],
  turn: RejectedTurn,
  isAnswerText: (part: Record<string, unknown>) => boolean = isTextBlock,
): unknown[] {
  if (!turn.fromText) return [...parts];
  const texts = parts.filter((p) => isAnswer(p, isAnswerText)).map((p) => p.text);
  const said = tidied(texts, cutJoined(texts));
  let next = 0;
  return parts.flatMap((p) => {
    if (!isAnswer(p, isAnswerText)) return [p];
    const text = said[next++];
    return text !== "" || p.thoughtSignature !== undefined ? [{ ...p, text }] : [];
  });
}

/** A part of answer text. */
function isAnswer(
  part: unknown,
  isAnswerText: (part: Record<string, unknown>) => boolean,
): part is Record<string, unknown> & { text: string } {
  return isRecord(part) && typeof part.text === "string" && isAnswerText(part);
}

/** Answer text: not an Anthropic / Cohere block of another type, not a Gemini thought. */
const isTextBlock = (p: Record<string, unknown>) => (p.type ?? "text") === "text" && p.thought !== true;

/**
 * The items of a Responses `output`, each message's `output_text` parts without the calls written into them
 * (read across the parts of every message, as the stream's watch reads them); a message left with no part
 * (its text was only the call) is dropped.
 */
function spokenItems(items: readonly unknown[], turn: RejectedTurn): unknown[] {
  if (!turn.fromText) return [...items];
  const isMessage = (item: unknown): item is Record<string, unknown> & { content: unknown[] } =>
    isRecord(item) && item.type === "message" && Array.isArray(item.content);
  const isOutputText = (p: Record<string, unknown>) => p.type === "output_text";
  const texts = items.filter(isMessage).flatMap((item) =>
    item.content.filter((p) => isAnswer(p, isOutputText))
  )
    .map((p) => (p as { text: string }).text);
  const said = tidied(texts, cutJoined(texts));
  let next = 0;
  return items.flatMap((item) => {
    if (!isMessage(item)) return [item];
    const content = item.content.flatMap((p) => {
      if (!isAnswer(p, isOutputText)) return [p];
      const text = said[next++];
      return text !== "" ? [{ ...p, text }] : [];
    });
    return content.length > 0 || item.content.length === 0 ? [{ ...item, content }] : [];
  });
}

/** The reasoning fields of a message that a server sent (DeepSeek, vLLM, Ollama): sent back as they came. */
function reasoningOf(message: unknown, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) {
    if (isRecord(message) && typeof message[k] === "string" && message[k] !== "") out[k] = message[k];
  }
  return out;
}

/** The calls as OpenAI-style `tool_calls` (Chat, Cohere). */
const toolCalls = (turn: RejectedTurn) =>
  turn.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));

const chat: Builder = (request, turn, feedback) => {
  const m = firstOf(turn.body, "choices")?.message;
  const text = messageText(m, turn);
  const assistant = {
    role: "assistant",
    content: text === "" ? null : text,
    ...reasoningOf(m, REASONING_FIELDS),
    tool_calls: toolCalls(turn),
  };
  const results = turn.calls.map((c, i) => ({ role: "tool", tool_call_id: c.id, content: feedback[i] }));
  return { ...request, messages: [...list(request, "messages"), assistant, ...results] };
};

const responses: Builder = (request, turn, feedback) => {
  const input = typeof request.input === "string"
    ? [{ role: "user", content: request.input }]
    : list(request, "input");
  // What the response said (reasoning items with their ids and `encrypted_content`, messages, calls); the
  // calls as judged when it listed none.
  const said = spokenItems(turn.body && Array.isArray(turn.body.output) ? turn.body.output : [], turn);
  const output = said.some(isClientCall) ? said : [
    ...said,
    ...turn.calls.map((c) =>
      c.freeText
        ? { type: "custom_tool_call", call_id: c.id, name: c.name, input: c.arguments }
        : { type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments }
    ),
  ];
  const custom = new Set(
    output.filter((o) => isRecord(o) && o.type === "custom_tool_call").map((o) =>
      (o as { call_id?: unknown }).call_id
    ),
  );
  const results = turn.calls.map((c, i) => ({
    type: c.freeText || custom.has(c.id) ? "custom_tool_call_output" : "function_call_output",
    call_id: c.id,
    output: feedback[i],
  }));
  // A conversation kept by the server continues from the rejected response: only the results are new.
  const id = turn.body?.id;
  if (typeof request.previous_response_id === "string" && typeof id === "string") {
    return { ...request, previous_response_id: id, input: results };
  }
  const out: Record<string, unknown> = { ...request, input: [...input, ...output, ...results] };
  delete out.previous_response_id; // the whole conversation is in `input` now
  return out;
};

const anthropic: Builder = (request, turn, feedback) => {
  // The blocks as they came, in order (thinking with its signature, text, tool_use); the calls as judged
  // when there were none.
  // (a text block of white space alone goes, the model's own too: the API refuses one sent back)
  const said = spokenParts(turn.body && Array.isArray(turn.body.content) ? turn.body.content : [], turn)
    .filter((b) => !(isRecord(b) && b.type === "text" && typeof b.text === "string" && b.text.trim() === ""));
  const content = said.some((b) => isRecord(b) && b.type === "tool_use") ? withJudgedInputs(said, turn) : [
    ...said,
    ...turn.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: argObject(c.arguments) })),
  ];
  const results = turn.calls.map((c, i) => ({
    type: "tool_result",
    tool_use_id: c.id,
    content: feedback[i],
    is_error: true,
  }));
  return {
    ...request,
    messages: [...list(request, "messages"), { role: "assistant", content }, {
      role: "user",
      content: results,
    }],
  };
};

/**
 * The `tool_use` blocks of what a stream said, each with the input of its call as judged (matched by id, in
 * order): a block streamed with one input at its start and another in its deltas went back with the input
 * the stream kept (its deltas') while its tool result described the rejected one (its start's).
 */
function withJudgedInputs(blocks: readonly unknown[], turn: RejectedTurn): unknown[] {
  const byId = new Map<string, { calls: TurnCall[]; next: number }>();
  for (const c of turn.calls) {
    const known = byId.get(c.id);
    if (known) known.calls.push(c);
    else byId.set(c.id, { calls: [c], next: 0 });
  }
  return blocks.map((b) => {
    if (!isRecord(b) || b.type !== "tool_use" || typeof b.id !== "string") return b;
    const known = byId.get(b.id);
    const call = known?.calls[known.next++];
    if (call === undefined) return b;
    const input = argObject(call.arguments);
    return JSON.stringify(input) === JSON.stringify(b.input) ? b : { ...b, input };
  });
}

const ollama: Builder = (request, turn, feedback) => {
  const m = turn.body?.message;
  const assistant = {
    role: "assistant",
    content: messageText(m, turn),
    ...reasoningOf(m, ["thinking"]),
    tool_calls: turn.calls.map((c) => ({ function: { name: c.name, arguments: argObject(c.arguments) } })),
  };
  const results = turn.calls.map((c, i) => ({ role: "tool", tool_name: c.name, content: feedback[i] }));
  return { ...request, messages: [...list(request, "messages"), assistant, ...results] };
};

const gemini: Builder = (request, turn, feedback) => {
  const content = firstOf(turn.body, "candidates")?.content;
  // The parts as they came (a functionCall keeps its thoughtSignature); the calls as judged when none is.
  const said = spokenParts(isRecord(content) && Array.isArray(content.parts) ? content.parts : [], turn);
  const model = {
    role: "model",
    parts: said.some((p) => isRecord(p) && isRecord(p.functionCall)) ? said : [
      ...said,
      ...turn.calls.map((c) => ({ functionCall: { name: c.name, args: argObject(c.arguments) } })),
    ],
  };
  const parts = turn.calls.map((c, i) => ({
    functionResponse: { name: c.name, response: { error: feedback[i] } },
  }));
  return { ...request, contents: [...list(request, "contents"), model, { role: "user", parts }] };
};

const cohere: Builder = (request, turn, feedback) => {
  const m = turn.body?.message;
  const assistant: Record<string, unknown> = { role: "assistant", tool_calls: toolCalls(turn) };
  const said = isRecord(m) ? m.content : undefined;
  const content = typeof said === "string"
    ? spoken(said, turn)
    : Array.isArray(said)
    ? spokenParts(said, turn)
    : [];
  if (content.length > 0) assistant.content = content;
  if (isRecord(m) && typeof m.tool_plan === "string") assistant.tool_plan = m.tool_plan;
  const results = turn.calls.map((c, i) => ({ role: "tool", tool_call_id: c.id, content: feedback[i] }));
  return { ...request, messages: [...list(request, "messages"), assistant, ...results] };
};

const BUILDERS: Readonly<Record<StreamDialect, Builder>> = {
  openai_chat: chat,
  openai_responses: responses,
  anthropic,
  ollama,
  gemini,
  cohere,
};

/**
 * The follow-up request for a rejected turn: `request` with the assistant's turn and one tool result per
 * call (the feedback) appended in `dialect`'s shape.
 */
export function followUp(
  dialect: StreamDialect,
  request: Record<string, unknown>,
  turn: RejectedTurn,
  tools: readonly unknown[] | undefined,
): Record<string, unknown> {
  return BUILDERS[dialect](request, turn, callFeedback(turn.verdict, tools));
}
