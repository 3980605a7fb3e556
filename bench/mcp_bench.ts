/**
 * CPU cost of the MCP guard per `tools/call` round trip, without the pipes: framing and parsing a call and
 * its result (the baseline, what any relay must do) against the full session (framing, parsing, validating
 * the call, matching the response, and scanning the result with `scanOutput`). The end-to-end latency the
 * relay adds over a direct connection is measured by `scripts/mcp_latency.ts`. `deno task bench` or
 * `bun run bench/bun.ts mcp`.
 *
 * @module
 */
import { register } from "./_harness.ts";
import { createFramer } from "../_mcp/framing.ts";
import { createMcpGuard, type McpFrame } from "../mcp.ts";

const encoder = new TextEncoder();
const call = encoder.encode(
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "echo", arguments: { message: "latency probe" } },
  }) + "\n",
);
const answer = encoder.encode(
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: { content: [{ type: "text", text: "Echo: latency probe" }] },
  }) +
    "\n",
);
const ECHO = {
  name: "echo",
  inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
};

function session(scanOutput: boolean) {
  const guard = createMcpGuard({ scanOutput });
  guard.setTools([ECHO]);
  const out: McpFrame[] = [];
  return guard.connect({ toServer: (f) => void out.push(f), toClient: () => void (out.length = 0) });
}

const fromClient = createFramer();
const fromServer = createFramer();
const plain = session(false);
const scanning = session(true);

register([
  {
    name: "frame + parse only",
    group: "mcp round trip",
    baseline: true,
    fn: () => fromClient.push(call).length + fromServer.push(answer).length,
  },
  {
    name: "session (validate)",
    group: "mcp round trip",
    fn: () => {
      for (const f of fromClient.push(call)) plain.fromClient(f);
      for (const f of fromServer.push(answer)) plain.fromServer(f);
    },
  },
  {
    name: "session (validate + scanOutput)",
    group: "mcp round trip",
    fn: () => {
      for (const f of fromClient.push(call)) scanning.fromClient(f);
      for (const f of fromServer.push(answer)) scanning.fromServer(f);
    },
  },
]);
