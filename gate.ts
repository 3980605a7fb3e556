/**
 * Put the validator where it matters: between the model's response and the code that runs tools.
 *
 * - {@linkcode gateCompletion} judges the tool calls in one response body (OpenAI Chat Completions, OpenAI
 *   Responses, Anthropic Messages, Ollama `/api/chat`, Google Gemini `generateContent`, Cohere v2 chat)
 *   against the tools declared in the request, and when a call is rejected returns a body of the same shape
 *   that carries no tool call and says why. A caller that forwards the body cannot forward the rejected call.
 *   Every client-run call is judged: Responses `custom_tool_call` (its free-text input scanned),
 *   `local_shell_call`, `shell_call`, `apply_patch_call`, `namespace` members; Anthropic's client-run
 *   built-ins (`memory_*`, `bash_*`, `text_editor_*`, `computer_*`) are allowed by name when declared.
 * - {@linkcode guardFetch} wraps `fetch` so the official clients (`openai`, `@anthropic-ai/sdk`, `ollama`)
 *   and any OpenAI-compatible server (Ollama, llama.cpp, LM Studio, vLLM) get gated bodies, streamed or not.
 *   Frames the gate does not rewrite reach the client byte for byte (it drops malformed ones and those a client
 *   would read otherwise than the gate, see {@linkcode guardFetch}); a rejection keeps everything but the
 *   call (usage, ids, `system_fingerprint`, `logprobs`, reasoning). With `retry: N` a rejected turn is sent
 *   back to the model with the feedback as tool results, and the client gets the corrected answer: the
 *   follow-up carries what the turn said (text, Anthropic `thinking` with its `signature`, Gemini parts with
 *   their `thoughtSignature`, Responses `reasoning` items), and the answer's usage is every attempt's added
 *   up (each attempt's own is in `onVerdict`). With `onRejected: "drop-call"` the valid calls of a turn
 *   still run when one of them is rejected, in bodies and streams of every dialect.
 * - {@linkcode assembleToolCalls} rebuilds whole calls from stream events so they can be validated.
 *
 * Calls a local model wrote into its text (`<tool_call>`, `<|python_tag|>`, `[TOOL_CALLS]`, fenced JSON) are
 * judged too when the answer has no native calls (in a response of several answers, OpenAI Chat `n` or Gemini
 * `candidateCount`, each answer apart, whole or streamed); see `extract.ts`.
 *
 * @example Reject a call to a tool the request does not declare
 * ```ts
 * import { gateCompletion } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * const request = {
 *   model: "qwen3:4b",
 *   messages: [{ role: "user", content: "Weather in Oslo?" }],
 *   tools: [{
 *     type: "function",
 *     function: {
 *       name: "get_weather",
 *       parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *     },
 *   }],
 * };
 * const response = {
 *   id: "chatcmpl-1", object: "chat.completion", created: 0, model: "qwen3:4b",
 *   choices: [{
 *     index: 0, finish_reason: "tool_calls",
 *     message: {
 *       role: "assistant", content: null as string | null,
 *       tool_calls: [{ id: "call_1", type: "function", function: { name: "get_wether", arguments: "{}" } }],
 *     },
 *   }],
 * };
 * const gated = await gateCompletion(request, response);
 * assert.equal(gated.verdict.allowed, false);
 * const choice = (gated.response as typeof response).choices[0];
 * const message: Record<string, unknown> = choice.message;
 * assert.equal(choice.finish_reason, "stop");
 * assert.equal(message.tool_calls, undefined);
 * assert.match(String(message.content), /get_weather/); // the reason names the declared tool
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_common/values.ts";
import "./_common/pointer.ts";
import "./_common/measure.ts";
import "./_common/json.ts";
import "./_validate/providers.ts";
import "./_gate/calls.ts";
import "./_gate/dialects/readers.ts";
import "./_common/bytes.ts";
import "./_gate/bound.ts";

export { assembleToolCalls } from "./_gate/assemble.ts";
export { gateCompletion } from "./_gate/completion.ts";
export type { CompletionDialect, GateOptions, GateResult } from "./_gate/gate.ts";
export { guardFetch } from "./_gate/fetch.ts";
export type { FetchLike, GateEvent, GuardFetchOptions } from "./_gate/fetch.ts";
export type {
  AssembledCalls,
  AssembledToolCall,
  StreamDialect,
  StreamFinding,
  StreamFindingCode,
} from "./_gate/calls.ts";
