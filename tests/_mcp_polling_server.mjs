// A Streamable HTTP MCP server, built with the official SDK, that uses SSE polling (SEP-1699): it keeps its
// events for resumption, asks clients to come back after `retry:` 50 ms, and its `slow-echo` tool closes the
// answer's event stream before it answers, so a client gets the answer only by resuming the stream with
// GET and Last-Event-ID. Its `close-listen` tool logs on the server's own GET stream, ends that stream,
// then logs again, which a client sees only if it resumes that stream too. Its `end-session` tool answers,
// then ends its session, whose id it answers with 404 from then on, as MCP says.
// Run: node _mcp_polling_server.mjs; it prints "listening on port N" on stderr.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/**
 * Events kept for resumption, numbered in order. (The SDK's example store reads the stream from the event
 * id's text, which fails for the server's own stream, "_GET_stream".)
 */
class EventStore {
  #events = new Map();
  #next = 0;
  storeEvent(streamId, message) {
    const id = String(++this.#next);
    this.#events.set(id, { streamId, message });
    return Promise.resolve(id);
  }
  getStreamIdForEventId(id) {
    return Promise.resolve(this.#events.get(id)?.streamId);
  }
  async replayEventsAfter(lastEventId, { send }) {
    const streamId = this.#events.get(lastEventId)?.streamId;
    if (streamId === undefined) return "";
    for (const [id, event] of this.#events) {
      if (Number(id) > Number(lastEventId) && event.streamId === streamId) await send(id, event.message);
    }
    return streamId;
  }
}

/** One session: a server with the two tools, on a transport that keeps its events. */
async function newSession() {
  const server = new McpServer(
    { name: "polling", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: new EventStore(),
    retryInterval: 50,
    onsessioninitialized: (id) => void sessions.set(id, transport),
  });
  server.registerTool(
    "slow-echo",
    { description: "Echoes, after closing its event stream.", inputSchema: { text: z.string() } },
    async ({ text }, extra) => {
      extra.closeSSEStream?.();
      await new Promise((resolve) => setTimeout(resolve, 150));
      return { content: [{ type: "text", text: `echo: ${text}` }] };
    },
  );
  server.registerTool(
    "close-listen",
    { description: "Ends the server's own stream, then logs on it.", inputSchema: {} },
    async (_args, extra) => {
      // An event on the stream first, so that a client has an event id to resume from.
      await server.server.sendLoggingMessage({ level: "info", data: "before the stream was closed" });
      extra.closeStandaloneSSEStream?.();
      setTimeout(() => {
        void server.server.sendLoggingMessage({ level: "info", data: "after the stream was closed" });
      }, 20);
      return { content: [{ type: "text", text: "closed" }] };
    },
  );
  server.registerTool(
    "end-session",
    { description: "Answers, then ends its session: its id is answered with 404 after.", inputSchema: {} },
    () => {
      setTimeout(() => {
        sessions.delete(transport.sessionId);
        void transport.close();
      }, 20);
      return { content: [{ type: "text", text: "ending" }] };
    },
  );
  await server.connect(transport);
  return transport;
}

/** Live sessions by their id. */
const sessions = new Map();

const http = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const id = req.headers["mcp-session-id"];
    const transport = id === undefined ? await newSession() : sessions.get(id);
    if (transport === undefined) {
      // (as the SDK's own transport answers an id it does not know)
      const error = { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null };
      return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(error));
    }
    await transport.handleRequest(req, res, body);
  });
});
http.listen(0, "127.0.0.1", () => {
  process.stderr.write(`listening on port ${http.address().port}\n`);
});
