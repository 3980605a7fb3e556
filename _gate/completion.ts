/**
 * The public entry of the response gate: {@linkcode gateCompletion}, which loads the gate's body
 * (`gate.ts`: dialect detection, the judge, the rewriting of bodies) on its first call, so that importing
 * `gate.ts` or `mod.ts` does not parse it (start-up, issue 18).
 *
 * @module
 */
import type { GateOptions, GateResult } from "./gate.ts";

/**
 * Judges the tool calls in one model response against the tools declared in its request.
 *
 * Reads OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Ollama `/api/chat`, Gemini
 * `generateContent` and Cohere v2 chat bodies. When an answer has no native calls, calls written into its
 * text (`extractToolCalls`) are judged instead; in a body of several answers (OpenAI Chat `n`, Gemini
 * `candidateCount`) with both kinds, all of them together, as one turn. When any call is rejected, `response`
 * is a copy of the same shape with every call removed (so a caller that forwards it cannot forward the
 * rejected call), the reason in its text, and `finish_reason` / `stop_reason` / `done_reason` set to a normal
 * stop so clients do not wait for tool results; with `onRejected: "drop-call"` only the rejected calls are
 * removed where they can be parted, and the turn keeps its stop reason for the calls left. Otherwise
 * `response` is the input, untouched. Never throws on model output; throws only when the declared tools cannot be compiled
 * (an unsupported schema keyword), since a schema is never half-enforced, or on an unknown `options.dialect`.
 * Tools handed over in code (a request object, `options.tools`) are compiled once per array: a later call
 * with the same array reads each of its objects once to see that nothing changed (an edit in place is read
 * anew).
 *
 * @param request The request body sent to the model (for its `tools`), or `undefined` with `options.tools`.
 * @param response The parsed response body.
 * @param options Tools, a prebuilt validator, validator options, a classifier, the rejection text.
 * @returns The verdict and the body to forward.
 * @throws {TypeError} When `options.dialect` names no dialect the gate reads.
 * @throws {SchemaError} When a declared tool's schema cannot be compiled. Both as rejections, never
 * synchronously, as is the failure to load the gate's engines (they load on the first call).
 *
 * @example Judge a call a small model wrote into its text
 * ```ts
 * import { gateCompletion } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * // Ollama /api/chat: a Hermes-style call in the text, missing its required argument.
 * const request = {
 *   model: "qwen2.5:3b",
 *   messages: [],
 *   tools: [{
 *     type: "function",
 *     function: {
 *       name: "search",
 *       parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
 *     },
 *   }],
 * };
 * const response = {
 *   model: "qwen2.5:3b",
 *   created_at: "2025-01-01T00:00:00Z",
 *   done: true,
 *   done_reason: "stop",
 *   message: { role: "assistant", content: '<tool_call>{"name": "search", "arguments": {}}</tool_call>' },
 * };
 * const { verdict, source, changed } = await gateCompletion(request, response);
 * assert.equal(source, "text");
 * assert.equal(changed, true);
 * assert.equal(verdict.calls[0].findings[0].code, "missing_required_argument");
 * ```
 *
 * @example Let an allowed call through untouched
 * ```ts
 * import { gateCompletion } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * const request = {
 *   tools: [{ name: "get_time", input_schema: { type: "object", properties: {} } }],
 * };
 * const response = {
 *   type: "message",
 *   role: "assistant",
 *   stop_reason: "tool_use",
 *   content: [{ type: "tool_use", id: "toolu_1", name: "get_time", input: {} }],
 * };
 * const gated = await gateCompletion(request, response);
 * assert.equal(gated.verdict.allowed, true);
 * assert.equal(gated.dialect, "anthropic");
 * assert.equal(gated.response, response); // the same object: nothing to forward differently
 * ```
 */
export async function gateCompletion(
  request: unknown,
  response: unknown,
  options: GateOptions = {},
): Promise<GateResult> {
  const { judgeCompletion } = await import("./gate.ts");
  return await judgeCompletion(request, response, options);
}
