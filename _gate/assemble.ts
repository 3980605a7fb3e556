/**
 * Streamed tool calls: rebuilding complete calls from provider stream events, whatever dialect each event
 * is in.
 *
 * @module
 */
import { errorText, isRecord } from "../_common/values.ts";
import { parseJsonSafe } from "../_common/json.ts";
import { type AssembledCalls, type AssembledToolCall, SlotBook, type StreamDialect } from "./calls.ts";
import { type EventReader, READERS } from "./dialects/readers.ts";

const ANTHROPIC_EVENT = /^(message_start|message_delta|message_stop|content_block_(start|delta|stop)|ping)$/;
const COHERE_EVENT = /^(message|content|tool-plan|tool-call|citation)-[a-z]+$/;

/** Which dialect an event belongs to, or undefined when it does not look like any. */
export function eventDialect(event: unknown): StreamDialect | undefined {
  if (!isRecord(event)) return undefined;
  const type = event.type;
  if (typeof type === "string") {
    if (type.startsWith("response.")) return "openai_responses";
    if (ANTHROPIC_EVENT.test(type)) return "anthropic";
    if (COHERE_EVENT.test(type)) return "cohere";
    if (type === "error" && isRecord(event.error)) return undefined;
  }
  if (Array.isArray(event.choices)) return "openai_chat";
  if (Array.isArray(event.candidates)) return "gemini";
  // (a Gemini chunk of usage alone, after the last candidate's finish, or of a prompt blocked: no candidates)
  if (isRecord(event.usageMetadata) || isRecord(event.promptFeedback)) return "gemini";
  if (isRecord(event.message) || typeof event.done === "boolean") return "ollama";
  return undefined;
}

/**
 * An incremental assembler: push parsed events one at a time (of any dialect, each detected on its own),
 * read the calls at any point.
 */
export class CallAssembler {
  readonly #book = new SlotBook();
  /** One reader per dialect met so far: readers keep state between the events of their dialect. */
  readonly #readers: Partial<Record<StreamDialect, EventReader>> = {};

  /** Feeds one event (a parsed JSON object, or JSON text). Never throws. */
  push(raw: unknown): void {
    const book = this.#book;
    book.nextEvent();
    try {
      let event = raw;
      if (typeof raw === "string") {
        const parsed = parseJsonSafe(raw);
        if (!parsed.ok) return book.finding("malformed_event", `event is not JSON: ${parsed.error}`);
        event = parsed.value;
      }
      if (!isRecord(event)) return book.finding("malformed_event", "event is not a JSON object");
      const dialect = eventDialect(event);
      if (dialect) return (this.#readers[dialect] ??= READERS[dialect]()).read(event, book);
      if (event.type !== "error" && event.error === undefined) {
        book.finding("unknown_event", "event matches no known stream dialect");
      }
    } catch (e) {
      book.finding("malformed_event", `event could not be read: ${errorText(e)}`);
    }
  }

  /**
   * The call position (`slot`) the reader filed a pushed event under, or undefined for an event it filed
   * under none (Cohere's call events and OpenAI Responses' call items and argument events are filed).
   */
  filed(event: Record<string, unknown>): number | undefined {
    return this.#book.filed(event);
  }

  /** The calls and findings so far. */
  result(): AssembledCalls {
    return this.#book.result();
  }
}

/**
 * Rebuilds complete tool calls from the events of a streamed response, so they can be validated before
 * anything runs. Reads OpenAI Chat Completions chunks (`choices[].delta.tool_calls`, assembled by `index`
 * so parallel calls stay apart even when their deltas interleave), OpenAI Responses events
 * (`response.output_item.added`, `response.function_call_arguments.delta`/`.done`), Anthropic Messages events
 * (`content_block_start` with `tool_use`, `input_json_delta`) and Ollama `/api/chat` chunks (`message.tool_calls`,
 * each call whole). Events may be parsed objects or their JSON text. Calls without an id get a stable
 * synthetic one (same input, same id). Malformed events never throw: they become findings.
 *
 * @param events The parsed `data` of each SSE event, or each NDJSON line, in order.
 * @returns The calls, with argument text as assembled, and findings about events that could not be used.
 *
 * @example Rebuild two parallel calls whose deltas interleave
 * ```ts
 * import { assembleToolCalls } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * const chunk = (toolCall: unknown) => ({
 *   object: "chat.completion.chunk",
 *   choices: [{ index: 0, delta: { tool_calls: [toolCall] } }],
 * });
 * const { calls, findings } = assembleToolCalls([
 *   chunk({ index: 0, id: "call_a", function: { name: "search", arguments: '{"q":' } }),
 *   chunk({ index: 1, id: "call_b", function: { name: "fetch", arguments: '{"url":' } }),
 *   chunk({ index: 0, function: { arguments: '"cats"}' } }),
 *   chunk({ index: 1, function: { arguments: '"https://x.test"}' } }),
 * ]);
 * assert.deepEqual(calls.map((c) => [c.id, c.name, c.arguments]), [
 *   ["call_a", "search", '{"q":"cats"}'],
 *   ["call_b", "fetch", '{"url":"https://x.test"}'],
 * ]);
 * assert.deepEqual(findings, []);
 * ```
 *
 * @example A malformed event becomes a finding, not an exception
 * ```ts
 * import { assembleToolCalls } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * const { calls, findings } = assembleToolCalls([
 *   "{not json",
 *   { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "list" } },
 *   { type: "content_block_stop", index: 0 },
 * ]);
 * assert.equal(findings[0].code, "malformed_event");
 * assert.equal(findings[0].event, 0);
 * assert.deepEqual(calls.map((c) => [c.id, c.name, c.arguments]), [["toolu_1", "list", "{}"]]);
 * ```
 */
export function assembleToolCalls(events: Iterable<unknown>): AssembledCalls {
  const assembler = new CallAssembler();
  try {
    for (const event of events) assembler.push(event);
  } catch {
    // An iterable that throws ends the input; what was assembled so far still counts.
  }
  return assembler.result();
}

/**
 * The shape the validator reads for an assembled call (OpenAI Chat style, arguments as JSON text, or as the
 * object the stream sent them as, see `AssembledToolCall.value`). A custom tool's free-text input is judged
 * as the argument `input`, so the scanner reads it.
 */
export function callForValidation(call: AssembledToolCall): Record<string, unknown> {
  const args = call.freeText
    ? JSON.stringify({ input: call.arguments })
    : "value" in call
    ? call.value
    : call.arguments;
  return { id: call.id, type: "function", function: { name: call.name, arguments: args } };
}
