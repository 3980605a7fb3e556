/**
 * The HTTP relay and a session the server ends: MCP (Streamable HTTP, session management) has a server
 * answer HTTP 404 to the id of a session it ended or never had, and a client that gets it start a new session
 * with an `initialize` without an id. The relay answers the request so, sends nothing more in that session,
 * and goes on in the session the client's next `initialize` starts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { runtimeCommand } from "./_runtime.ts";
import { answeredPlainly, errorOf, startPollingServer } from "./_mcp_http.ts";
import { type JsonRpcMessage, relayMcpHttp } from "../mcp.ts";
import { INIT, INIT_RESULT } from "./_mcp_messages.ts";

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null;
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

test(
  "toolguard mcp --url: a session the SDK's server ended (404) answers the next call so, saying to initialize again",
  { timeout: 60_000 },
  async () => {
    const server = await startPollingServer();
    const guarded = new Client({ name: "guarded", version: "1.0.0" });
    try {
      const r = runtimeCommand(join(root, "cli.ts"), ["mcp", "--pins", "none", "--url", server.url]);
      await guarded.connect(
        new StdioClientTransport({ command: r.command, args: r.args, cwd: root, stderr: "ignore" }),
      );
      await guarded.callTool({ name: "end-session", arguments: {} });
      await new Promise((resolve) => setTimeout(resolve, 100)); // (the server ends it 20 ms after answering)
      const call = { name: "slow-echo", arguments: { text: "hi" } };
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          guarded.callTool(call, undefined, { timeout: 10_000 }),
          /it ended the session \(HTTP 404 Not Found to its Mcp-Session-Id.*send initialize again/,
        );
      }
    } finally {
      await guarded.close().catch(() => {});
      server.stop();
    }
  },
);

/** What a scripted server saw: method, session id, request id. */
interface Seen {
  method: string;
  session: string | undefined;
  id?: unknown;
}

/** A server with sessions (see {@linkcode sessionServer}): its address, what it saw, its live sessions. */
interface SessionServer {
  url: string;
  seen: Seen[];
  live: Set<string>;
  stop: () => void;
}

/** Answer tools/call `m` with the text "ran". */
function ran(m: JsonRpcMessage, res: ServerResponse): void {
  const answer = { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "ran" }] } };
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
}

/**
 * A Streamable HTTP server on 127.0.0.1 whose n-th `initialize` starts session `s<n>`: `handle` answers a
 * request first when it returns true; else a request naming no live session gets 404 (with the MCP SDK's
 * body), a GET 405, a DELETE 200, notifications 202, `tools/list` an `echo` tool, and a call "ran".
 * What it saw is noted in `seen` (a GET or POST with Last-Event-ID as `method+resume`).
 */
async function sessionServer(
  handle: (m: JsonRpcMessage | undefined, req: IncomingMessage, res: ServerResponse) => boolean = () => false,
): Promise<SessionServer> {
  const seen: Seen[] = [];
  const live = new Set<string>();
  let sessions = 0;
  const http = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const session = req.headers["mcp-session-id"] as string | undefined;
      const m = body === "" ? undefined : JSON.parse(body) as JsonRpcMessage;
      const resumed = req.headers["last-event-id"] !== undefined ? "+resume" : "";
      seen.push({ method: (m?.method ?? req.method) + resumed, session, id: m?.id });
      if (handle(m, req, res)) return;
      if (req.method === "DELETE") return void res.writeHead(session && live.has(session) ? 200 : 404).end();
      if (m?.method === "initialize") {
        const id = `s${++sessions}`;
        live.add(id);
        const answer = { jsonrpc: "2.0", id: m.id, result: INIT_RESULT };
        return void res.writeHead(200, { "content-type": "application/json", "mcp-session-id": id })
          .end(JSON.stringify(answer));
      }
      if (session === undefined || !live.has(session)) {
        const error = { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null };
        return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(error));
      }
      if (m === undefined) return void res.writeHead(405).end();
      if (!answeredPlainly(m, res, [{ name: "echo" }])) ran(m, res);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`,
    seen,
    live,
    stop: () => {
      http.closeAllConnections?.();
      http.close();
    },
  };
}

/** A client's tools/call of `echo` under `id`. */
const call = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: {} },
});

test(
  "relayMcpHttp: after a 404 to its session id nothing more goes in that session; a new initialize goes on",
  { timeout: 30_000 },
  async () => {
    // The first session ends as its first call is answered.
    const server = await sessionServer((m, req, res) => {
      if (req.headers["mcp-session-id"] !== "s1" || m?.method !== "tools/call" || !server.live.has("s1")) {
        return false;
      }
      server.live.delete("s1");
      ran(m, res);
      return true;
    });
    try {
      // The client sends each phase once the one before is answered: the relay pipelines what comes at once.
      const answers = await relayInPhases(server.url, [
        [...INIT, call(2)],
        [call(3)], // 404: the session is over
        [call(4), {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: 1, progress: 1 },
        }],
        [{ ...INIT[0] as object, id: 5 }, INIT[1], call(6)],
      ]);
      assert.equal(answers.get(2)?.result !== undefined, true, "the first call ran");
      for (const id of [3, 4]) assert.match(errorOf(answers.get(id)), /it ended the session \(HTTP 404/);
      assert.deepEqual(answers.get(6)?.result, { content: [{ type: "text", text: "ran" }] });
      const inS1 = server.seen.filter((s) => s.session === "s1").map((s) => `${s.method}${s.id ?? ""}`);
      // Nothing after the 404: no call, no notification, no GET stream, no DELETE of the ended session.
      assert.equal(inS1.at(-1), "tools/call3", inS1.join(" "));
      assert.ok(
        server.seen.some((s) => s.session === "s2" && s.method === "DELETE"),
        "the live session is ended",
      );
    } finally {
      server.stop();
    }
  },
);

/**
 * Relay a client that sends each of `phases` once every request of the ones before has an answer (15 s at
 * most, so that a relay that never answers fails the test, not hangs it); returns the answers by id (the last
 * under each), and puts every answer in `every`.
 */
async function relayInPhases(
  url: string,
  phases: unknown[][],
  every: JsonRpcMessage[] = [],
): Promise<Map<unknown, JsonRpcMessage>> {
  const answers = new Map<unknown, JsonRpcMessage>();
  let waiting = new Set<unknown>();
  let next = () => {};
  const enc = new TextEncoder();
  async function* client() {
    for (const phase of phases) {
      waiting = new Set(
        phase.flatMap((m) => (m as JsonRpcMessage).id === undefined ? [] : [(m as JsonRpcMessage).id]),
      );
      const answered = new Promise<void>((resolve) => (next = resolve));
      const timer = setTimeout(next, 15_000);
      for (const m of phase) {
        // (`{ wait }`: the client holds its next lines until that resolves)
        if (isRecord(m) && typeof m.wait === "function") await m.wait();
        else yield enc.encode(JSON.stringify(m) + "\n");
      }
      await answered;
      clearTimeout(timer);
    }
  }
  await relayMcpHttp(url, {
    input: client(),
    output: (bytes) => {
      for (const line of new TextDecoder().decode(bytes).split("\n").filter(Boolean)) {
        const m = JSON.parse(line) as JsonRpcMessage;
        if (m.method !== undefined) continue;
        answers.set(m.id, m);
        every.push(m);
        waiting.delete(m.id);
      }
      if (waiting.size === 0) next();
    },
  });
  return answers;
}

test(
  "relayMcpHttp: a 404 ends the session's open streams too: none is resumed in it, their requests are told to initialize again",
  { timeout: 30_000 },
  async () => {
    // s1 answers its slow call (id 2) on an event stream it keeps open, and has a stream of its own (GET),
    // both with event ids; the call after (id 3) gets 404, and then the server closes both streams, as the
    // SDK's server does as it ends a session. A resume of either in s1 would be a GET with Last-Event-ID.
    // Call 7, taken with 202 Accepted, waits for an answer on the server's own stream.
    const open = new Set<ServerResponse>();
    const sse = (res: ServerResponse) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("id: e1\nretry: 50\ndata: \n\n");
      open.add(res);
      return true;
    };
    const server = await sessionServer((m, req, res) => {
      if (req.headers["mcp-session-id"] !== "s1" || !server.live.has("s1")) return false;
      if (req.method === "GET") return sse(res);
      if (m?.id === 2) return sse(res);
      if (m?.id === 7) return void res.writeHead(202).end(), true;
      if (m?.id !== 3) return false;
      server.live.delete("s1");
      res.writeHead(404).end();
      setTimeout(() => {
        for (const r of open) r.end();
      }, 30);
      return true;
    });
    try {
      const answers = await relayInPhases(server.url, [
        [...INIT],
        [
          call(2),
          { wait: () => until(() => open.size === 2) },
          call(7),
          { wait: () => until(() => server.seen.some((s) => s.id === 7)) },
          call(3),
        ],
        [{ ...INIT[0] as object, id: 5 }, INIT[1], call(6)],
      ]);
      assert.equal(open.size, 2, "both streams were open");
      for (const id of [2, 3, 7]) {
        assert.match(errorOf(answers.get(id)), /it ended the session \(HTTP 404/);
      }
      assert.deepEqual(answers.get(6)?.result, { content: [{ type: "text", text: "ran" }] });
      const inS1 = server.seen.filter((s) => s.session === "s1").map((s) => `${s.method}${s.id ?? ""}`);
      assert.equal(inS1.at(-1), "tools/call3", inS1.join(" "));
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: session after session ended with 404, the relay holds none of their requests: each id is free again",
  { timeout: 60_000 },
  async () => {
    // What the relay remembers of a request (to match its answer, to refuse a second request under its id)
    // must go once the request is answered, in an ended session too: a request under the same id in the
    // next session is sent, not refused as one still waiting. Twenty sessions, each ended by the server with
    // a 404 to call 3 while call 2 waits on an event stream it closes after; call 3 again is not sent.
    // (call 2's stream ends once the 404 went out, not after a fixed time: under load a 50 ms timer ended it
    // first now and then, and call 2 was then told of a closed stream, not of the ended session)
    const waiting = new Map<string, { end: () => void }>();
    const server = await sessionServer((m, req, res) => {
      const session = req.headers["mcp-session-id"] as string;
      if (!server.live.has(session)) return false;
      if (m?.id === 3) {
        server.live.delete(session);
        res.on("finish", () => setTimeout(() => waiting.get(session)?.end(), 50));
        return void res.writeHead(404).end(), true;
      }
      if (m?.id !== 2) return false;
      res.writeHead(200, { "content-type": "text/event-stream" });
      waiting.set(session, res);
      return true;
    });
    try {
      const rounds = 20;
      const phases = Array.from(
        { length: rounds },
        () => [[...INIT, call(1)], [call(2), call(3)], [call(3)]],
      );
      const answered: JsonRpcMessage[] = [];
      await relayInPhases(server.url, phases.flat(), answered);
      const refused = answered.filter((m) => /still waiting/.test(errorOf(m)));
      assert.deepEqual(refused, [], "no id was taken for one still waiting");
      assert.equal(answered.filter((m) => m.id === 1 && m.result !== undefined).length, rounds);
      assert.equal(
        server.seen.filter((s) => s.method === "initialize").length,
        rounds,
        "every session started",
      );
      assert.equal(answered.length, rounds * 5);
      for (const id of [2, 3]) {
        const ended = answered.filter((m) => m.id === id && /it ended the session/.test(errorOf(m)));
        assert.equal(ended.length, id === 2 ? rounds : rounds * 2, `call ${id}: told the session ended`);
      }
      assert.equal(server.seen.filter((s) => s.id === 3).length, rounds, "call 3 again was not sent");
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: a 404 to a notification's POST ends the session as well; a 404 to initialize is an error, not an ended session",
  { timeout: 30_000 },
  async () => {
    let initializes = 0;
    const server = await sessionServer((m, req, res) => {
      // (the first initialize is refused: 404 without a session, as a server behind a wrong path does)
      if (m?.method === "initialize" && ++initializes === 1) {
        return void res.writeHead(404).end("no such endpoint"), true;
      }
      if (m?.method === "notifications/progress") server.live.delete(req.headers["mcp-session-id"] as string);
      return false;
    });
    try {
      const progress = {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: 1, progress: 1 },
      };
      const answers = await relayInPhases(server.url, [
        [INIT[0]],
        [{ ...INIT[0] as object, id: 1 }, INIT[1], call(2)],
        [progress, {
          wait: () => until(() => server.seen.some((s) => s.method === "notifications/progress")),
        }, call(3)],
      ]);
      assert.match(errorOf(answers.get(0)), /HTTP 404: no such endpoint/);
      assert.doesNotMatch(errorOf(answers.get(0)), /ended the session/);
      assert.equal(answers.get(2)?.result !== undefined, true, "the session after it goes on");
      assert.match(errorOf(answers.get(3)), /it ended the session \(HTTP 404/);
      assert.equal(server.seen.filter((s) => s.id === 3).length, 0, "call 3 was not sent");
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: a 404 to a GET resuming an answer's stream ends the session at once: not retried, the request told to initialize again",
  { timeout: 30_000 },
  async () => {
    // s1 answers call 2 on an event stream with an event id, and closes it without the answer; the session
    // is over by then, so the GET with Last-Event-ID gets 404, which MCP says of any request with its id.
    const server = await sessionServer((m, req, res) => {
      if (req.headers["mcp-session-id"] !== "s1" || !server.live.has("s1") || m?.id !== 2) return false;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("id: e1\nretry: 50\ndata: \n\n");
      server.live.delete("s1");
      return true;
    });
    try {
      const answers = await relayInPhases(server.url, [[...INIT], [call(2)], [call(3)]]);
      for (const id of [2, 3]) assert.match(errorOf(answers.get(id)), /it ended the session \(HTTP 404/);
      const inS1 = server.seen.filter((s) => s.session === "s1").map((s) => `${s.method}${s.id ?? ""}`);
      assert.deepEqual(inS1.filter((s) => s === "GET+resume"), ["GET+resume"], inS1.join(" "));
      assert.equal(inS1.at(-1), "GET+resume", "nothing more went in s1 (call 3, DELETE)");
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: a 404 to the server's own stream (GET) ends the session: a request taken with 202 for it is told to initialize again",
  { timeout: 30_000 },
  async () => {
    // s1 holds its GET until call 7 was taken with 202 Accepted (to be answered on that stream), then ends
    // the session and answers the GET 404.
    let get: ServerResponse | undefined;
    const server = await sessionServer((m, req, res) => {
      if (req.headers["mcp-session-id"] !== "s1" || !server.live.has("s1")) return false;
      if (req.method === "GET") return void (get = res), true;
      if (m?.id !== 7) return false;
      res.writeHead(202).end();
      setTimeout(() => {
        server.live.delete("s1");
        get?.writeHead(404).end();
      }, 50);
      return true;
    });
    try {
      const answers = await relayInPhases(server.url, [
        [...INIT, { wait: () => until(() => get !== undefined) }, call(7)],
        [call(3)],
      ]);
      assert.ok(get !== undefined, "the GET was open");
      for (const id of [7, 3]) assert.match(errorOf(answers.get(id)), /it ended the session \(HTTP 404/);
      assert.equal(server.seen.filter((s) => s.id === 3).length, 0, "call 3 was not sent");
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: a 202 that comes after the 404 ending its session tells the request to initialize again",
  { timeout: 30_000 },
  async () => {
    // Call 7 is taken with 202 Accepted only after call 3, sent after it, got the 404 that ended s1.
    let taken: ServerResponse | undefined;
    const server = await sessionServer((m, req, res) => {
      if (req.headers["mcp-session-id"] !== "s1" || !server.live.has("s1")) return false;
      if (m?.id === 7) return void (taken = res), true;
      if (m?.id !== 3) return false;
      server.live.delete("s1");
      res.writeHead(404).end();
      setTimeout(() => taken?.writeHead(202).end(), 50);
      return true;
    });
    try {
      const answers = await relayInPhases(server.url, [
        [...INIT, call(7), { wait: () => until(() => taken !== undefined) }, call(3)],
      ]);
      for (const id of [7, 3]) assert.match(errorOf(answers.get(id)), /it ended the session \(HTTP 404/);
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: a stream the server keeps open in a session it ended gets the grace, then its request is told to initialize again",
  { timeout: 30_000 },
  async () => {
    // s1 answers calls 2 and 4 on event streams it keeps open; call 3 gets the 404 that ends s1. Call 2's
    // answer comes 100 ms after it (within the grace: relayed), call 4's never.
    const open: ServerResponse[] = [];
    const server = await sessionServer((m, req, res) => {
      if (req.headers["mcp-session-id"] !== "s1" || !server.live.has("s1")) return false;
      if (m?.id === 2 || m?.id === 4) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": open\n\n");
        open.push(res);
        return true;
      }
      if (m?.id !== 3) return false;
      server.live.delete("s1");
      res.writeHead(404).end();
      setTimeout(() => {
        const answer = { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "late" }] } };
        open[0].write(`data: ${JSON.stringify(answer)}\n\n`);
      }, 100);
      return true;
    });
    try {
      const answers = await relayInPhases(server.url, [
        [...INIT, call(2), call(4), { wait: () => until(() => open.length === 2) }, call(3)],
      ]);
      assert.deepEqual(answers.get(2)?.result, { content: [{ type: "text", text: "late" }] });
      for (const id of [3, 4]) assert.match(errorOf(answers.get(id)), /it ended the session \(HTTP 404/);
    } finally {
      for (const res of open) res.end();
      server.stop();
    }
  },
);

/** Resolves once `done()` is true (checked every 10 ms, 2 s at most). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}
