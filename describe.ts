/**
 * What the model reads: one honest sentence about a tool run, feedback a small model can use to retry a
 * rejected call, and provider-shaped tool-result messages ready to append to a conversation.
 *
 * Every sentence is built only from fields that agree with each other. A result whose `ok`, `kind` and
 * `items` contradict one another is described as a failure, never as an answer, so a buggy or forged
 * result cannot make the model report "found nothing".
 *
 * @example Tell the model what happened, in its provider's shape
 * ```ts
 * import assert from "node:assert/strict";
 * import { describe, describeVerdict, toolResultMessage } from "@toolguard/toolguard/describe";
 * import type { CallVerdict, ToolResult } from "@toolguard/toolguard/types";
 *
 * const empty: ToolResult = {
 *   ok: true, kind: "empty", items: [], exitCode: 0, signal: null, detail: "",
 *   durationMs: 3, warnings: [], truncated: false, stderr: "",
 * };
 * assert.equal(
 *   describe(empty),
 *   'Tool ran and returned zero items. That is a real answer: say "no results", not "the tool is broken".',
 * );
 *
 * const failed: ToolResult = {
 *   ok: false, kind: "exit", items: null, exitCode: 2, signal: null, detail: "rg: bad regex",
 *   durationMs: 5, warnings: [], truncated: false, stderr: "rg: bad regex",
 * };
 * const message = toolResultMessage("anthropic", { result: failed, callId: "toolu_1" });
 * assert.equal(message.is_error, true); // a failure is marked as an error
 *
 * const call: CallVerdict = {
 *   index: 0, id: "call_1", name: "search", allowed: false,
 *   findings: [{
 *     code: "argument_type_mismatch", path: "/limit", message: "limit must be an integer",
 *     expected: "integer", received: '"ten"',
 *   }],
 * };
 * assert.ok(describeVerdict(call).includes('at "limit": expected integer, received "ten".'));
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_common/pointer.ts";
import "./_common/values.ts";
import "./_common/measure.ts";
import "./_common/bytes.ts";
import "./_scan/words.ts";
import "./_scan/fold.ts";
import "./_scan/segments.ts";
import "./_scan/gap.ts";
import "./_scan/translated.ts";
import "./_scan/rules.ts";
import "./_scan/leads.ts";
import "./_scan/decode.ts";
import "./_scan/screen.ts";
import "./_scan/terminal.ts";
import "./_scan/scan.ts";
import "./_describe/facts.ts";
import "./_describe/verdict.ts";

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
