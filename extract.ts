/**
 * Recover tool calls that a local model wrote into its message text instead of the provider's structured
 * `tool_calls` field. Small models served raw (llama.cpp, vLLM without a tool parser, LM Studio, older
 * Ollama templates) routinely answer with one of these conventions:
 *
 * - Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (also Qwen3-Coder's
 *   `<tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>`)
 * - Llama 3.1+: `<|python_tag|>{"name": ..., "parameters": {...}}` and the built-in form
 *   `<|python_tag|>brave_search.call(query="...")`
 * - Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}]` and `[TOOL_CALLS]NAME[ARGS]{...}`
 * - a fenced `json` code block, or a whole message, holding `{"name": ..., "arguments": {...}}` (or an
 *   array of such objects)
 *
 * Every call comes back with its span in the text (`start`, `end`) and the span of the markup around it
 * (`block`), so a caller can cut the calls out of the text. Nothing here throws: text that looks like a call
 * but does not parse comes back as a call whose `arguments` is the raw text and whose `error` says why, so
 * the validator rejects it instead of it being silently ignored.
 *
 * @example Recover a Hermes-style call and cut it out of the text
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 *
 * const text = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
 * const [call] = extractToolCalls(text);
 * assert.equal(call.format, "hermes");
 * assert.equal(call.name, "get_weather");
 * assert.deepEqual(call.arguments, { city: "Oslo" });
 * // Cutting the block out of the text leaves only the prose.
 * const prose = text.slice(0, call.block.start) + text.slice(call.block.end);
 * assert.equal(prose.trim(), "Let me check.");
 * ```
 *
 * @module
 */
export { extractToolCalls } from "./_extract/extract.ts";
export type { ExtractedToolCall, ExtractFormat } from "./_extract/extract.ts";
