// An MCP server whose JSON-RPC reader is `JSON.parse` and whose writer is `JSON.stringify`, as a hand-written
// JavaScript server's are: an id past 2^53 is read as the double it rounds to and answered under it
// (12345678901234567891 as 12345678901234567000, 1234567890123456789012 as 1.2345678901234568e+21). (The
// official SDK's server does not answer such a request at all: its schema takes safe integers only.) Its one
// tool, `echo`, answers with its `text`. Run: `node _mcp_rounding_server.mjs stdio` (a stdio server), or
// `node _mcp_rounding_server.mjs http` (Streamable HTTP on 127.0.0.1, JSON answers; it prints
// "listening on port N" on stderr).
import { createServer } from "node:http";
import { createInterface } from "node:readline";

const RESULTS = {
  initialize: () => ({
    protocolVersion: "2025-06-18",
    capabilities: { tools: {} },
    serverInfo: { name: "rounding", version: "1" },
  }),
  "tools/list": () => ({ tools: [{ name: "echo", inputSchema: { type: "object" } }] }),
  "tools/call": (params) => ({ content: [{ type: "text", text: String(params?.arguments?.text) }] }),
  ping: () => ({}),
};

/** The answer to one message's text, as JSON text (undefined for a notification). */
function answer(text) {
  const m = JSON.parse(text);
  if (m.id === undefined) return undefined;
  const result = RESULTS[m.method]?.(m.params);
  const error = { code: -32601, message: "Method not found" };
  return JSON.stringify(
    result === undefined ? { jsonrpc: "2.0", id: m.id, error } : { jsonrpc: "2.0", id: m.id, result },
  );
}

if (process.argv[2] === "stdio") {
  createInterface({ input: process.stdin }).on("line", (line) => {
    const text = line.trim() === "" ? undefined : answer(line);
    if (text !== undefined) process.stdout.write(text + "\n");
  });
} else {
  const http = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(req.method === "GET" ? 405 : 200).end();
      const body = Buffer.concat(chunks).toString("utf8");
      // (as MCP asks: every request after initialize carries the version its answer brought)
      if (!body.includes('"initialize"') && req.headers["mcp-protocol-version"] !== "2025-06-18") {
        return void res.writeHead(400).end("no MCP-Protocol-Version: 2025-06-18");
      }
      const text = answer(body);
      if (text === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s" }).end(text);
    });
  });
  http.listen(0, "127.0.0.1", () => {
    process.stderr.write(`listening on port ${http.address().port}\n`);
  });
}
