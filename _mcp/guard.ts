/**
 * The MCP guard: holds one server's tools and judges calls and results against them (through the judge in
 * `judge.ts`), and starts sessions (`session.ts`) that apply those judgements to a live connection, or to
 * an SDK transport (`guardMcpTransport`).
 *
 * @module
 */
import {
  callName,
  type CaseStray,
  caseStray,
  caseTwin,
  type CompiledTools,
  compileTools,
  type DeferredCheck,
  judgeCall,
  type JudgeOptions,
  refuseChanged,
  refusePoisoned,
  refuseRepeated,
  refuseStray,
  refuseUnchecked,
  scanResult,
  summarise,
  toolPlace,
  unreadableTool,
} from "./judge.ts";
import { GuardedSession } from "./session.ts";
import { type PinReview, PinStore } from "./pins.ts";
import { cleanListing } from "./poisoning.ts";
import type {
  InjectionPolicy,
  McpEvent,
  McpFrame,
  McpGuard,
  McpGuardOptions,
  UncheckedToolPolicy,
} from "./types.ts";
import { checkSwitches, givenValue, idText, isRecord, objectArg, orList } from "../_common/values.ts";
import { pastMeasure, schemaGraphProblem, walkProblem, whileMeasured } from "../_common/measure.ts";
import { DEFAULT_MAX_DEPTH } from "../_validate/validator.ts";
import { PatternUnchecked } from "../_schema/values.ts";
import type { JsonRpcMessage } from "./jsonrpc.ts";

/** The argument-injection policies (`McpGuardOptions.injection`, `toolguard mcp --injection`). */
export const INJECTION_POLICIES: readonly InjectionPolicy[] = ["block", "warn", "off"];
/** The policies for tools whose schema cannot be enforced (`McpGuardOptions.uncheckedTools`). */
const UNCHECKED_POLICIES: readonly UncheckedToolPolicy[] = ["reject", "forward"];
/** How client batches are passed on (`McpGuardOptions.batches`). */
const BATCH_MODES: readonly NonNullable<McpGuardOptions["batches"]>[] = ["forward", "split"];

/**
 * Throws a `TypeError` on an option the guard would otherwise read as something else, in silence: a misspelt
 * policy (`injection: "blok"` would turn the argument scan off, as `"off"` does) or a switch given as a
 * string (`redact: "true"` would not redact). The relays call it before they start the server.
 */
export function checkGuardOptions(options: McpGuardOptions): void {
  objectArg(options, "createMcpGuard", "options");
  const words: [keyof McpGuardOptions, readonly string[]][] = [
    ["injection", INJECTION_POLICIES],
    ["uncheckedTools", UNCHECKED_POLICIES],
    ["batches", BATCH_MODES],
  ];
  for (const [name, allowed] of words) {
    const value = options[name];
    if (value !== undefined && !allowed.includes(value as string)) {
      throw new TypeError(
        `MCP guard: options.${name} must be ${orList(allowed.map((w) => `"${w}"`))}, got ${
          givenValue(value)
        }`,
      );
    }
  }
  checkSwitches(options, ["scanOutput", "redact", "strict", "allowSecrets"], "MCP guard: options.");
}

/** Report `event` to an `onEvent` hook; a hook that throws never breaks the guard or the relay. */
export function emitTo(onEvent: ((event: McpEvent) => void) | undefined, event: McpEvent): void {
  try {
    onEvent?.(event);
  } catch {
    // A logging hook must never break the relay.
  }
}

/** Report what a pin review found: new pins, changed definitions, a pin file that failed. */
function reportPins(review: PinReview, emit: (event: McpEvent) => void): void {
  if (review.added.length > 0) emit({ event: "tools_pinned", names: review.added });
  for (const c of review.changed) emit({ event: "tool_changed", ...c });
  if (review.error !== undefined) emit({ event: "pins_error", detail: review.error });
}

/**
 * Create an MCP guard. It knows nothing until it sees tools: through {@linkcode McpGuard.setTools}, or, in a
 * session, from the server's `tools/list` answers (fetching the list itself when a call comes first).
 * A guard holds one server's tools: use one guard per server.
 *
 * @example Reject a call whose arguments do not match the tool's schema
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMcpGuard } from "@toolguard/toolguard/mcp";
 *
 * const guard = createMcpGuard();
 * guard.setTools([{
 *   name: "get-sum",
 *   inputSchema: {
 *     type: "object",
 *     properties: { a: { type: "number" }, b: { type: "number" } },
 *     required: ["a", "b"],
 *   },
 * }]);
 * assert.equal(guard.checkCall({ name: "get-sum", arguments: { a: 1, b: 2 } }).allowed, true);
 * const bad = guard.checkCall({ name: "get-sum", arguments: { a: "one" } });
 * assert.equal(bad.allowed, false);
 * // The rejection is a tool result the model can read and retry from.
 * if (!bad.allowed) assert.equal(bad.result.isError, true);
 * ```
 *
 * @example Guard a session of plain JSON-RPC objects
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMcpGuard, type JsonRpcMessage } from "@toolguard/toolguard/mcp";
 *
 * const toServer: unknown[] = [];
 * const toClient: JsonRpcMessage[] = [];
 * const session = createMcpGuard().connect({
 *   toServer: (frame) => void toServer.push(frame.message),
 *   toClient: (frame) => void toClient.push(frame.message as JsonRpcMessage),
 * });
 * // The client lists the tools: the guard learns them from the server's answer.
 * session.fromClient({ message: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
 * const echo = { type: "object", properties: { text: { type: "string" } } };
 * const tools = [{ name: "echo", inputSchema: echo }];
 * session.fromServer({ message: { jsonrpc: "2.0", id: 1, result: { tools } } });
 * // A call with a wrong argument type is answered by the guard and never reaches the server.
 * const params = { name: "echo", arguments: { text: 7 } };
 * session.fromClient({ message: { jsonrpc: "2.0", id: 2, method: "tools/call", params } });
 * assert.equal(toServer.length, 1);
 * assert.equal(toClient[1].id, 2);
 * assert.equal((toClient[1].result as { isError: boolean }).isError, true);
 * ```
 *
 * @param options Output scanning, redaction, the policy for unenforceable schemas, an event hook.
 * @returns The guard.
 * @throws {TypeError} When an option that takes one of a few words, or true or false, has another value.
 */
export function createMcpGuard(options: McpGuardOptions = {}): McpGuard {
  checkGuardOptions(options);
  const redact = options.redact === true;
  const scanning = options.scanOutput === true || redact;
  const strict = options.strict === true;
  const judging: JudgeOptions = {
    policy: options.uncheckedTools ?? "reject",
    injection: options.injection ?? "warn",
    allowSecrets: options.allowSecrets === true,
  };
  let compiled: CompiledTools | null = null;
  let stale = false;
  /** With `strict`: tools whose description or title was flagged, refused like undeclared ones. */
  let poisoned = new Set<string>();
  const pins = options.pins ? new PinStore(options.pins) : null;
  const emit = (event: McpEvent) => emitTo(options.onEvent, event);
  const declared = () => compiled === null ? null : new Set(compiled.tools.map((t) => t.name));
  /** Judge a call: changed (pinned) and hidden (poisoned) tools first, then its arguments. */
  const judge = (
    params: unknown,
    { deferWarnings, callId, repeated }: { deferWarnings: boolean; callId?: string; repeated?: string },
  ): DeferredCheck => {
    if (compiled === null) {
      throw new Error("checkCall: no tools recorded yet; call setTools() with the server's tools/list first");
    }
    if (repeated !== undefined) return refuseRepeated(params, { pointer: repeated }, compiled.tools);
    // params built in code that share their objects past measure: the validator refuses their arguments
    // (written out, or walked as a tree, they would never end). One walk of them answers too for the
    // arguments (as the judge and its validator ask), unless it finds something: then each asks as before.
    const problem = walkProblem(params, DEFAULT_MAX_DEPTH + 1);
    const walkable = problem === null || !pastMeasure(params);
    const twin = walkable ? caseTwin(params, "/params") : undefined;
    if (twin !== undefined) return refuseRepeated(params, twin, compiled.tools);
    let stray: CaseStray | undefined;
    try {
      stray = walkable ? caseStray(params, compiled.tools) : undefined;
    } catch (error) {
      // (a key a pattern could not be checked against: the validator, asked next, would refuse it too)
      if (error instanceof PatternUnchecked) return refuseUnchecked(params, error, compiled.tools);
      throw error;
    }
    if (stray !== undefined) return refuseStray(params, stray, compiled.tools);
    const name = callName(params);
    const change = pins?.refused(name);
    if (change !== undefined) return refuseChanged(change);
    if (poisoned.has(name)) return refusePoisoned(name);
    const args = problem === null && isRecord(params) ? params.arguments : undefined;
    const judged = () => judgeCall(params, compiled!, { ...judging, deferWarnings, callId });
    return typeof args === "object" && args !== null
      ? whileMeasured(args, DEFAULT_MAX_DEPTH, judged)
      : judged();
  };
  const guard: McpGuard = {
    setTools(list) {
      refuseUnwalkable(list);
      // Only "block" needs the validator's scan; "warn" scans in judgeCall (or after forwarding, in
      // sessions).
      const next = compileTools(list, { scan: judging.injection === "block" });
      const names = new Set(next.tools.map((t) => t.name));
      const hidden = strict
        ? new Set(cleanListing("tools/list", { tools: list }, { declared: names, strict }).hidden)
        : poisoned;
      const review = pins?.review(list);
      // Adopted only once every check has run: a list that makes one throw leaves the guard as it was,
      // never with the new tools and no pin review (their calls would go on unreviewed).
      compiled = next;
      stale = false;
      poisoned = hidden;
      if (review !== undefined) reportPins(review, emit);
      return summarise(compiled);
    },
    get toolsKnown() {
      return compiled !== null && !stale;
    },
    checkCall: (params) => judge(params, { deferWarnings: false }),
    checkResult(result) {
      if (!scanning) return { flagged: false, findings: [], result };
      const check = scanResult(result, { redact });
      return check.flagged ? check : { ...check, result }; // (the caller's own object, when clean)
    },
    connect(sinks) {
      return new GuardedSession(guard, sinks, {
        emit,
        redact,
        scanning,
        strict,
        declared,
        judge: (params, { id, repeated }) =>
          judge(params, { deferWarnings: true, callId: idText(id), repeated }),
        markStale: () => (stale = true),
        toolsTimeoutMs: options.toolsTimeoutMs ?? 30_000,
        splitBatches: options.batches === "split",
      });
    },
  };
  return guard;
}

/**
 * Throws a TypeError for a tool of `list` that contains itself or shares its objects past measure: every
 * walk `setTools` makes reads a tool as a tree (a listing read from JSON always is), and would never end;
 * and for one that cannot be read (a getter that throws), naming it. Reads each tool once: its
 * `inputSchema`, then the rest (a BigInt in it is refused where it is compiled: see `compileTools`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseUnwalkable } from "./guard.ts";
 *
 * const self: Record<string, unknown> = { type: "object" };
 * self.properties = { self };
 * assert.throws(() => refuseUnwalkable([{ name: "t", inputSchema: self }]), /tools\[0\] \("t"\) inputSchema/);
 * refuseUnwalkable([{ name: "t", inputSchema: { type: "object" } }]);
 * ```
 */
export function refuseUnwalkable(list: readonly unknown[]): void {
  if (!Array.isArray(list)) return;
  list.forEach((tool, i) => {
    // the schema on its own first, so that the pointers (and a "$ref" suggested) are the schema's own; then
    // the rest of the tool, without reading the schema a second time
    let inSchema: ReturnType<typeof schemaGraphProblem>;
    let problem: ReturnType<typeof schemaGraphProblem>;
    try {
      inSchema = isRecord(tool) ? schemaGraphProblem(tool.inputSchema) : null;
      problem = inSchema ?? schemaGraphProblem(isRecord(tool) ? { ...tool, inputSchema: null } : tool);
    } catch (error) {
      throw unreadableTool(i, tool, error); // (a getter that throws)
    }
    if (problem !== null) {
      throw new TypeError(
        `setTools(): ${toolPlace(i, tool)}${inSchema ? " inputSchema" : ""}: ${problem.message}`,
      );
    }
  });
}

/*
 * Guarding an MCP client transport in code: the wrapped transport judges every message the client sends
 * and every result the server returns, through a guard session.
 */

/**
 * The shape of an MCP client transport (as in `@modelcontextprotocol/sdk`), declared structurally so the
 * library needs no SDK import.
 */
export interface McpTransport {
  /** Start the connection. */
  start(): Promise<void>;
  /** Send one message. */
  send(message: JsonRpcMessage, options?: unknown): Promise<void>;
  /** Close the connection. */
  close(): Promise<void>;
  /** Set by the client: called with each message received. */
  onmessage?: (message: JsonRpcMessage, extra?: unknown) => void;
  /** Set by the client: called on errors. */
  onerror?: (error: Error) => void;
  /** Set by the client: called once the connection is closed. */
  onclose?: () => void;
  /** The session id, for transports that have one. */
  sessionId?: string;
  /** Told the negotiated protocol version, for transports that care. */
  setProtocolVersion?: (version: string) => void;
}

/**
 * Wrap an MCP client transport so every `tools/call` the client sends is validated against the server's
 * tools first. Rejected calls never reach the server: the client receives a result with `isError: true`
 * and feedback text. Use the returned transport wherever the original was used (e.g. `client.connect()`).
 *
 * @example Answer an invalid call before the server sees it
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardMcpTransport, type JsonRpcMessage, type McpTransport } from "@toolguard/toolguard/mcp";
 *
 * // A stand-in for a real transport: a server with one tool, answering in memory.
 * const tools = [{
 *   name: "echo",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 * }];
 * const reachedServer: unknown[] = [];
 * const inner: McpTransport = {
 *   async start() {},
 *   async close() {},
 *   async send(message) {
 *     reachedServer.push(message.method);
 *     const ran = { content: [{ type: "text", text: "ran" }] };
 *     const result = message.method === "tools/list" ? { tools } : ran;
 *     queueMicrotask(() => inner.onmessage?.({ jsonrpc: "2.0", id: message.id, result }));
 *   },
 * };
 *
 * const transport = guardMcpTransport(inner);
 * const received: JsonRpcMessage[] = [];
 * transport.onmessage = (message) => void received.push(message);
 * await transport.start();
 * await transport.send({
 *   jsonrpc: "2.0",
 *   id: 1,
 *   method: "tools/call",
 *   params: { name: "echo", arguments: {} },
 * });
 * await new Promise((resolve) => setTimeout(resolve, 0));
 * // The guard read the tool list itself; the call, missing `text`, never reached the server.
 * assert.deepEqual(reachedServer, ["tools/list"]);
 * assert.equal(received[0].id, 1);
 * assert.equal((received[0].result as { isError: boolean }).isError, true);
 * ```
 *
 * @example Wrap the official SDK's stdio transport
 * ```ts ignore
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
 * import { guardMcpTransport } from "@toolguard/toolguard/mcp";
 *
 * const transport = new StdioClientTransport({
 *   command: "npx",
 *   args: ["@modelcontextprotocol/server-everything"],
 * });
 * const client = new Client({ name: "agent", version: "1.0.0" });
 * await client.connect(guardMcpTransport(transport, { scanOutput: true }));
 * ```
 *
 * @param transport The transport to wrap (not started yet).
 * @param options Guard options.
 * @returns A transport of the same shape.
 * @throws {TypeError} On an option {@linkcode createMcpGuard} refuses.
 */
export function guardMcpTransport(transport: McpTransport, options: McpGuardOptions = {}): McpTransport {
  const guard = createMcpGuard(options);
  let closedNotified = false;
  /** Tell the client's `onerror`; one that throws is ignored (in a microtask it would end the process). */
  const reportError = (error: unknown) => {
    try {
      wrapper.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // ignored
    }
  };
  const deliver = (frame: McpFrame) => {
    // Deliver asynchronously, in order, so an answer never arrives inside the client's own send().
    queueMicrotask(() => {
      if (frame.message === undefined) return;
      try {
        wrapper.onmessage?.(frame.message as JsonRpcMessage, frame.extra);
      } catch (error) {
        reportError(error); // a client whose handler throws must not take the process down
      }
    });
  };
  const session = guard.connect({
    toServer: (frame) => transport.send(frame.message as JsonRpcMessage, frame.extra),
    onError: reportError,
    toClient: deliver,
  });
  const wrapper: McpTransport = {
    start() {
      transport.onmessage = (message, extra) => session.fromServer({ message, extra });
      transport.onerror = (error) => wrapper.onerror?.(error);
      transport.onclose = () => {
        session.serverClosed("closed the connection");
        queueMicrotask(() => {
          if (closedNotified) return;
          closedNotified = true;
          wrapper.onclose?.();
        });
      };
      return transport.start();
    },
    async send(message, sendOptions) {
      await session.fromClient({ message, extra: sendOptions });
    },
    close() {
      return transport.close();
    },
    get sessionId() {
      return transport.sessionId;
    },
    setProtocolVersion(version: string) {
      transport.setProtocolVersion?.(version);
    },
  };
  return wrapper;
}
