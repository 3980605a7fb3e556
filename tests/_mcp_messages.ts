/** Messages the MCP tests' scripted clients send. */

/** A client's opening: `initialize` (id 0), then `notifications/initialized`. */
export const INIT: readonly unknown[] = [
  {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
];

/** A server's answer to that `initialize` (its `result`): tools, no more. */
export const INIT_RESULT = {
  protocolVersion: "2025-06-18",
  capabilities: { tools: {} },
  serverInfo: { name: "t", version: "1" },
} as const;
