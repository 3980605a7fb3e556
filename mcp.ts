/**
 * Guard any Model Context Protocol server without changing it. The guard reads the server's `tools/list`
 * answers, validates every `tools/call` against that tool's `inputSchema` before the server sees it, and
 * answers a rejected call itself with a tool result whose `isError` is true and whose text tells the model
 * how to retry. With `scanOutput` it flags injected instructions in tool results (with `redact`, it cuts
 * them out). Other messages pass through unchanged, but for those it cannot judge or route: a `tools/call`
 * without an id, a request under the id of one still waiting, a line that is not JSON, an answer to no request
 * waiting (a second one, one to an unknown id or to none), a message that is both a request and an answer, a
 * message nested too deeply for the runtime to write it out again (either way; such an answer is replaced by
 * an error), a request past the 1024 messages that may wait while the guard reads the tool list and, over
 * HTTP, a request past `maxInFlight` are not passed on (a request among them is answered with an error).
 *
 * Four ways in:
 * - {@linkcode relayMcp} / {@linkcode relayMcpStdio}: start a stdio server as a child process and relay
 *   newline-delimited JSON-RPC between a client and it: any byte streams you pass in, or this process's
 *   own stdin/stdout (what `toolguard mcp -- CMD ARGS...` runs; `runMcpRelay` is its deprecated old name);
 * - {@linkcode guardMcpTransport}: wrap an MCP client transport in code (any object with the SDK's
 *   `start`/`send`/`close`/`onmessage` shape);
 * - {@linkcode relayMcpHttp}: the same for a Streamable HTTP server (`toolguard mcp --url URL`);
 * - {@linkcode createMcpGuard}: the judge on its own, for any other plumbing.
 *
 * Beyond arguments, the guard pins tool definitions (`pins`: a changed tool is refused until accepted),
 * cuts instructions aimed at the model out of descriptions and titles (tool poisoning, shadowing; `strict`
 * hides such tools), refuses credentials in arguments (`allowSecrets` to forward them), scans every
 * server-to-client payload with `scanOutput`, and answers every request, also when the server cannot.
 *
 * @example Judge calls against a server's tools
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMcpGuard } from "@toolguard/toolguard/mcp";
 *
 * const guard = createMcpGuard();
 * guard.setTools([{
 *   name: "get-sum",
 *   inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
 * }]);
 * const ok = guard.checkCall({ name: "get-sum", arguments: { a: 1, b: 2 } });
 * const bad = guard.checkCall({ name: "get-sum", arguments: { a: "one" } });
 * assert.equal(ok.allowed, true);
 * assert.equal(bad.allowed, false);
 * // The model reads the rejection's text (bad.result.content[0].text) and retries.
 * if (!bad.allowed) assert.equal(bad.result.isError, true);
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_common/values.ts";
import "./_common/bytes.ts";
import "./_common/pointer.ts";
import "./_common/measure.ts";
import "./_common/json.ts";
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
import "./_schema/formats.ts";
import "./_schema/keywords.ts";
import "./_schema/report.ts";
import "./_schema/pattern.ts";
import "./_schema/linear_regexp.ts";
import "./_schema/values.ts";
import "./_schema/checkers.ts";
import "./_schema/codegen_js.ts";
import "./_schema/codegen_ok.ts";
import "./_schema/codegen_report.ts";
import "./_schema/fallbacks.ts";
import "./_schema/codegen.ts";
import "./_schema/object_checker.ts";
import "./_schema/refs.ts";
import "./_schema/compile.ts";
import "./_validate/providers.ts";
import "./_validate/repair.ts";
import "./_validate/defaults.ts";
import "./_schema/strings.ts";
import "./_validate/validator.ts";
import "./_mcp/judge.ts";
import "./_mcp/poisoning.ts";
import "./_mcp/jsonrpc.ts";
import "./_mcp/session.ts";
import "./_mcp/pins.ts";

export { createMcpGuard } from "./_mcp/guard.ts";
export { guardMcpTransport } from "./_mcp/guard.ts";
export { relayMcp, relayMcpHttp, relayMcpStdio, runMcpRelay } from "./_mcp/relays.ts";
export type { McpHttpRelayOptions } from "./_mcp/http.ts";
export type { McpPinOptions, PinChange } from "./_mcp/pins.ts";
export type { DescribedKind, DescriptionCategory, DescriptionFinding } from "./_mcp/poisoning.ts";
export type {
  InjectionPolicy,
  McpCallCheck,
  McpEvent,
  McpFrame,
  McpGuard,
  McpGuardOptions,
  McpOutputFinding,
  McpRejection,
  McpRelayExit,
  McpResultCheck,
  McpSession,
  McpSinks,
  McpTextContent,
  McpToolsSummary,
  UncheckedToolPolicy,
} from "./_mcp/types.ts";
export type { McpRelayOptions } from "./_mcp/relay.ts";
export type { McpTransport } from "./_mcp/guard.ts";
export type { BigId, JsonRpcId, JsonRpcMessage } from "./_mcp/jsonrpc.ts";
