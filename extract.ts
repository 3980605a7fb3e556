/**
 * Recover tool calls that a local model wrote into its message text instead of the provider's structured
 * `tool_calls` field. Small models served raw (llama.cpp, vLLM or SGLang without a tool parser, LM Studio,
 * older Ollama templates) answer in their family's own markup; this module reads every format that the
 * tool-call parsers of llama.cpp, vLLM, SGLang and Ollama read, among them:
 *
 * - JSON behind a marker: Hermes/Qwen `<tool_call>{...}</tool_call>`, Llama `<|python_tag|>{...}`, Mistral
 *   `[TOOL_CALLS][...]`, Granite `<|tool_call|>`, Phi-4 `functools[...]`, Nemotron `<TOOLCALL>`, Jamba
 *   `<tool_calls>`, InternLM, Command R7B `<|START_ACTION|>`, GigaChat, Apertus, fenced `json` code
 *   blocks and whole-message JSON;
 * - a name, then JSON: DeepSeek V3/R1/V3.1, Kimi K2, Functionary, Mistral `NAME[ARGS]{...}`, gpt-oss harmony;
 * - XML: Qwen3-Coder `<function=...><parameter=...>`, GLM `<arg_key>/<arg_value>`, MiniMax `<invoke>`, DeepSeek
 *   V3.2 DSML, Step3, Seed-OSS, MiniCPM, Kimi K3, Muse Glimmer;
 * - Python and custom literals: `[f(a=1), g()]` (Llama 3.2/4), LFM2, OLMo 3, Gemma 4 `call:NAME{...}`,
 *   FunctionGemma.
 *
 * Every call comes back with its span in the text (`start`, `end`), the span of the markup around it
 * (`block`), and its family (`format`), so a caller can cut the calls out of the text. Calls quoted inside a
 * closed reasoning block (`<think>...</think>`, `[THINK]...[/THINK]`, harmony analysis) are not calls; calls in
 * a block that never closes are returned, with a finding (the text may have been cut off, and a client that
 * does not understand reasoning would run them). Markup that cannot be read never comes back as a nameless
 * call: `extractToolCallsDetailed` reports it as a finding with the format and offset; so does a call whose
 * arguments the end of the text cut off (a truncated value must never run). Given the request's
 * `tools`, values written as text are typed by the declared schema, and call-shaped text without a marker
 * (bare JSON, a Python list) counts only when it names a declared tool; without them, text that is exactly a
 * JSON literal is read as one and other text stays text. `callMayStart` and `CALL_START_MARKERS` serve a
 * streaming watcher. Nothing here throws.
 *
 * @example Cut a call out of the prose around it
 * ```ts
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 * import assert from "node:assert/strict";
 * const text = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
 * const [call] = extractToolCalls(text);
 * assert.equal(call.name, "get_weather");
 * assert.deepEqual(call.arguments, { city: "Oslo" });
 * const prose = text.slice(0, call.block.start) + text.slice(call.block.end);
 * assert.equal(prose.trim(), "Let me check.");
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_extract/text.ts";
import "./_extract/reasoning.ts";
import "./_extract/scan.ts";
import "./_common/values.ts";
import "./_common/pointer.ts";
import "./_common/measure.ts";
import "./_common/json.ts";
import "./_extract/literal.ts";
import "./_extract/json_calls.ts";
import "./_extract/readers/json.ts";
import "./_validate/providers.ts";
import "./_extract/typing.ts";
import "./_extract/readers/xml.ts";
import "./_extract/readers/tokens.ts";
import "./_extract/readers/python.ts";
import "./_extract/registry.ts";

export { extractToolCalls, extractToolCallsDetailed } from "./_extract/extract.ts";
export { CALL_START_MARKERS, callMayStart } from "./_extract/watch.ts";
export type {
  ExtractedToolCall,
  ExtractFinding,
  ExtractFindingCode,
  ExtractFormat,
  ExtractOptions,
  ExtractResult,
} from "./_extract/types.ts";
