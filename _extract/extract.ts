/**
 * Recovers tool calls that models write into their text, in every markup family that llama.cpp, vLLM,
 * SGLang and Ollama read (see `registry.ts` for the list and `types.ts` for the family names).
 *
 * @module
 */
import { runReaders } from "./registry.ts";
import { Scan } from "./scan.ts";
import { typerFor } from "./typing.ts";
import type { ExtractedToolCall, ExtractOptions, ExtractResult } from "./types.ts";
import { optionsArg } from "../_common/values.ts";

export type {
  ExtractedToolCall,
  ExtractFinding,
  ExtractFindingCode,
  ExtractFormat,
  ExtractOptions,
  ExtractResult,
} from "./types.ts";

/**
 * Finds the tool calls written into `text`, in the order they appear. Returns `[]` for plain prose. Never
 * throws, and runs in time linear in the length of the text.
 *
 * @param text The assistant message text.
 * @param options `tools`: the tools offered, in any provider shape, to type values written as text (read once
 * per array; a later call with the same array reads each of its objects once to see that nothing changed).
 * @returns The recovered calls, each with its span in `text`.
 *
 * @example Read the calls of a Mistral message
 * ```ts
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 * import assert from "node:assert/strict";
 * const calls = extractToolCalls('[TOOL_CALLS][{"name":"a","arguments":{}},{"name":"b","arguments":{"x":1}}]');
 * assert.deepEqual(calls.map((c) => [c.name, c.arguments]), [["a", {}], ["b", { x: 1 }]]);
 * ```
 *
 * @example Type XML values by the declared schema
 * ```ts
 * import { extractToolCalls } from "@toolguard/toolguard/extract";
 * import assert from "node:assert/strict";
 * const text = "<tool_call>\n<function=lookup>\n<parameter=ref>\n5123123\n</parameter>\n</function>\n</tool_call>";
 * const tools = [{ name: "lookup", parameters: { type: "object", properties: { ref: { type: "string" } } } }];
 * assert.deepEqual(extractToolCalls(text, { tools })[0].arguments, { ref: "5123123" });
 * assert.deepEqual(extractToolCalls(text)[0].arguments, { ref: 5123123 }); // undeclared: read as written
 * ```
 */
export function extractToolCalls(text: string, options: ExtractOptions = {}): ExtractedToolCall[] {
  return extractToolCallsDetailed(text, options).calls;
}

/**
 * Like {@link extractToolCalls}, and also says what it saw but could not return as a call: markup of a
 * known format whose body could not be read (`unreadable_call`, with the format and offset), calls read
 * inside a reasoning block that never closed, call-shaped text naming an undeclared tool. Never throws.
 *
 * @param text The assistant message text.
 * @param options `tools`: the tools offered, in any provider shape.
 * @returns The calls and the findings.
 *
 * @example Report markup that could not be read
 * ```ts
 * import { extractToolCallsDetailed } from "@toolguard/toolguard/extract";
 * import assert from "node:assert/strict";
 * const { calls, findings } = extractToolCallsDetailed("[TOOL_CALLS] not json at all");
 * assert.deepEqual(calls, []);
 * assert.equal(findings[0].code, "unreadable_call");
 * assert.equal(findings[0].format, "mistral");
 * assert.equal(findings[0].offset, 0);
 * ```
 */
export function extractToolCallsDetailed(text: string, options?: ExtractOptions): ExtractResult {
  options = optionsArg(options, "extractToolCalls");
  if (typeof text !== "string" || text.length === 0) return { calls: [], findings: [] };
  return scanText(text, options).result;
}

/**
 * Runs every reader over `text` from `from` on (markup that starts earlier is not read, except a call where
 * the answer begins); the scan also says where markup ran out of text (for `callMayStart`).
 */
export function scanText(
  text: string,
  options: ExtractOptions = {},
  from = 0,
): { result: ExtractResult; scan: Scan } {
  const scan = new Scan(text, typerFor(options.tools));
  scan.ranOutFrom = from;
  try {
    const reasoning = runReaders(scan, from);
    scan.calls.sort((a, b) => a.start - b.start);
    if (reasoning.unclosedAt >= 0) {
      for (const c of scan.calls) {
        if (c.start < reasoning.unclosedAt) continue;
        scan.note(
          "call_in_unclosed_reasoning",
          c.format,
          c.block.start,
          `the call to "${c.name}" at offset ${c.start} is inside a reasoning block (opened at offset ${reasoning.unclosedAt}) that never closes`,
        );
      }
    }
  } catch {
    // Defensive: a reader bug must never surface as an exception on model output.
  }
  return { result: { calls: scan.calls, findings: scan.findings }, scan };
}
