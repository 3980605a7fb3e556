/**
 * Guarding an MCP client transport in code: the wrapped transport judges every message the client sends
 * and every result the server returns, through a guard session.
 *
 * @module
 */
import { createMcpGuard } from "./guard.ts";
import type { JsonRpcMessage } from "./jsonrpc.ts";
import type { McpFrame, McpGuardOptions } from "./types.ts";

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
 *     const result = message.method === "tools/list" ? { tools } : { content: [{ type: "text", text: "ran" }] };
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
 * const transport = new StdioClientTransport({ command: "npx", args: ["@modelcontextprotocol/server-everything"] });
 * const client = new Client({ name: "agent", version: "1.0.0" });
 * await client.connect(guardMcpTransport(transport, { scanOutput: true }));
 * ```
 *
 * @param transport The transport to wrap (not started yet).
 * @param options Guard options.
 * @returns A transport of the same shape.
 */
export function guardMcpTransport(transport: McpTransport, options: McpGuardOptions = {}): McpTransport {
  const guard = createMcpGuard(options);
  let closedNotified = false;
  const deliver = (frame: McpFrame) => {
    // Deliver asynchronously, in order, so an answer never arrives inside the client's own send().
    queueMicrotask(() => {
      if (frame.message !== undefined) wrapper.onmessage?.(frame.message as JsonRpcMessage, frame.extra);
    });
  };
  const session = guard.connect({
    toServer: (frame) => transport.send(frame.message as JsonRpcMessage, frame.extra),
    onError: (error) => wrapper.onerror?.(error instanceof Error ? error : new Error(String(error))),
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
