/**
 * What the model reads: one honest sentence about a tool run, feedback a small model can use to retry a
 * rejected call, and provider-shaped tool-result messages ready to append to a conversation.
 *
 * Every sentence is built only from fields that agree with each other. A result whose `ok`, `kind` and
 * `items` contradict one another is described as a failure, never as an answer, so a buggy or forged
 * result cannot make the model report "found nothing".
 *
 * @example
 * ```ts
 * import { describe, describeVerdict, toolResultMessage } from "@toolguard/toolguard/describe";
 * import type { CallVerdict, ToolResult } from "@toolguard/toolguard/types";
 *
 * const empty: ToolResult = {
 *   ok: true, kind: "empty", items: [], exitCode: 0, signal: null, detail: "",
 *   durationMs: 3, warnings: [], truncated: false, stderr: "",
 * };
 * console.log(describe(empty));
 * // Tool ran and returned zero items. That is a real answer: say "no results", not "the tool is broken".
 *
 * const failed: ToolResult = {
 *   ok: false, kind: "exit", items: null, exitCode: 2, signal: null, detail: "rg: bad regex",
 *   durationMs: 5, warnings: [], truncated: false, stderr: "rg: bad regex",
 * };
 * const message = toolResultMessage("anthropic", { result: failed, callId: "toolu_1" });
 * if (!message.is_error) throw new Error("a failure must be marked as an error");
 *
 * const call: CallVerdict = {
 *   index: 0, id: "call_1", name: "search", allowed: false,
 *   findings: [{
 *     code: "argument_type_mismatch", path: "/limit", message: "limit must be an integer",
 *     expected: "integer", received: '"ten"',
 *   }],
 * };
 * const feedback = describeVerdict(call);
 * if (!feedback.includes("expected integer")) throw new Error("feedback must say what was expected");
 * ```
 *
 * @module
 */
export {
  DEFAULT_BUDGET,
  describe,
  describeVerdict,
  isFailure,
  isRejected,
  toolResultMessage,
} from "./_describe/describe.ts";
export type {
  AnthropicToolResultBlock,
  DescribeOptions,
  DescribeVerdictOptions,
  OllamaToolMessage,
  OpenAIToolMessage,
  Provider,
  ToolResultInput,
} from "./_describe/describe.ts";
