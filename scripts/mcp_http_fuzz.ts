/**
 * A seeded fuzz of the HTTP relay (`relayMcpHttp`): a hostile client (odd and deep ids, batches, cancels, a
 * second `initialize`, lines that are not JSON or are cut off, invalid calls) against a hostile Streamable
 * HTTP server on 127.0.0.1 (answers as JSON or event streams, with the wrong id, twice, or not at all, 202
 * Accepted, HTTP errors, wrong content types, bodies cut off, huge headers, event streams that end early and
 * resume or not, its session ended mid-call). Each seed is one run, the same on every runtime as far as the
 * relay's own timing lets it. What must hold, whatever both sides do:
 * - every request of the client's with an id it may have gets exactly one answer (one it cancelled: one at
 *   most), under the id it sent, and no answer comes under an id it never sent;
 * - nothing hangs: the relay ends within {@linkcode BOUND_MS} of the client closing its side;
 * - no request the relay refused (an invalid call, or one it answered saying it was not sent) reached the
 *   server;
 * - every line the client reads is JSON;
 * - nothing goes in a session (no POST, GET or DELETE) well after the server answered a POST in it with 404,
 *   which ends it (MCP: session management; a GET's 404 ends it too, and what follows it there gets 404).
 *
 * Usage: `deno run -A scripts/mcp_http_fuzz.ts [--from N] [--to M] [--jobs J]` runs seeds N to M (default 1
 * to 200), J at once (default 4), and stops at the first that fails, printing its first problem and what
 * both sides did; `--seed N` replays one seed and prints its trace. Under Bun: `bun scripts/mcp_http_fuzz.ts`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import process from "node:process";
import { type JsonRpcMessage, relayMcpHttp } from "../mcp.ts";
import { scriptArgs } from "./_args.ts";
import { seeded } from "./_seeded.ts";

/** How long a run may take past the client closing its side before it counts as a hang. */
export const BOUND_MS = 15_000;

/** What one seed's run found. */
export interface FuzzResult {
  seed: number;
  /** What broke the oracle, first first; empty when the run was sound. */
  problems: string[];
  /** What both sides did, in order: for a replay. */
  trace: string[];
}

const TOOLS = [{
  name: "echo",
  description: "Echoes.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
}];

/** Ids a client may send: odd ones too (JSON-RPC allows any string or number). */
const ODD_IDS: unknown[] = [
  "",
  " ",
  "0",
  "1",
  "\u0000",
  "é\u2028\ud83d\ude00",
  "x".repeat(3000),
  -1,
  0,
  1.5,
  2 ** 53 + 2,
  -(2 ** 31),
  1e300,
  "__proto__",
  "constructor",
  "toolguard-1",
  // (invalid in JSON-RPC, sent by hostile clients: told apart by their JSON, keys in their order)
  { a: 1, b: 2 },
  { b: 2, a: 1 },
  [1],
  ["1"],
];

/** A value nested `depth` levels deep (arrays and objects in turn). */
function deep(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

/** A stable hash of `text` with `seed` (FNV-1a): the server's choices do not depend on arrival order. */
function hash(seed: number, text: string): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** One thing the client writes: bytes (as UTF-8 text, or bytes that may cut a character), then a pause in ms. */
interface Step {
  bytes: string | Uint8Array;
  pauseMs: number;
}

/** The client's script for `seed`, and what it expects of the answers. */
interface ClientPlan {
  steps: Step[];
  /** Ids of requests sent (keys by JSON), how many times each. */
  sent: Map<string, number>;
  /** Ids (by JSON) the client cancelled. */
  cancelled: Set<string>;
  /** Ids (by JSON) of calls the guard must refuse: they must not reach the server. */
  invalid: Set<string>;
  /** Ids (by JSON) of requests sent in a line cut off at the end of the input, or in a line not JSON. */
  broken: Set<string>;
}

/** Build the client's script from `random`. */
function clientPlan(random: () => number): ClientPlan {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const plan: ClientPlan = {
    steps: [],
    sent: new Map(),
    cancelled: new Set(),
    invalid: new Set(),
    broken: new Set(),
  };
  const used = new Set<string>();
  let next = 1;
  const freshId = (): unknown => {
    // (now and then an id used before: while its request waits, or after it was answered or cancelled)
    if (used.size > 0 && random() < 0.06) return JSON.parse(pick([...used]));
    for (;;) {
      const r = random();
      const id = r < 0.6 ? next++ : r < 0.85 ? pick(ODD_IDS) : `s${next++}`;
      if (!used.has(JSON.stringify(id))) {
        used.add(JSON.stringify(id));
        return id;
      }
    }
  };
  const request = (method: string, params: unknown, id = freshId()) => ({
    jsonrpc: "2.0",
    id,
    method,
    params,
  });
  const ids: unknown[] = [];
  const one = (): Record<string, unknown> => {
    const r = random();
    if (r < 0.35) {
      const valid = random() < 0.75;
      const m = request("tools/call", { name: "echo", arguments: valid ? { text: "hi" } : { text: 5 } });
      if (!valid) plan.invalid.add(JSON.stringify(m.id));
      return m;
    }
    if (r < 0.45) return request("tools/list", {});
    if (r < 0.52) return request("ping", {});
    if (r < 0.57) return request("no/such", {});
    if (r < 0.67) {
      return { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } };
    }
    if (r < 0.8 && ids.length > 0) {
      const target = pick(ids);
      plan.cancelled.add(JSON.stringify(target));
      return { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: target } };
    }
    if (r < 0.84) return request("initialize", initParams(), freshId());
    if (r < 0.88) return { jsonrpc: "2.0", id: freshId(), result: {} }; // (an answer to nothing asked)
    return request("tools/call", {
      name: "echo",
      arguments: { text: "x".repeat(Math.floor(random() * 5000)) },
    });
  };
  const note = (m: Record<string, unknown>) => {
    if (typeof m.method === "string" && "id" in m) {
      const key = JSON.stringify(m.id);
      plan.sent.set(key, (plan.sent.get(key) ?? 0) + 1);
      ids.push(m.id);
    }
  };
  const line = (value: unknown) => JSON.stringify(value) + "\n";
  const write = (bytes: string | Uint8Array) =>
    plan.steps.push({ bytes, pauseMs: random() < 0.7 ? 0 : Math.floor(random() * 30) });
  if (random() < 0.93) {
    const init = request("initialize", initParams(), freshId());
    note(init);
    write(line(init) + line({ jsonrpc: "2.0", method: "notifications/initialized" }));
  }
  const count = 1 + Math.floor(random() * 14);
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.12) {
      const batch = Array.from({ length: 1 + Math.floor(random() * 4) }, one);
      // (now and then a request twice in one batch: one of them is refused in the batch's answer)
      if (random() < 0.2) batch.push(batch[0]);
      batch.forEach(note);
      write(line(batch));
    } else if (r < 0.16) {
      write(pick(["{not json\n", "\n", "[]\n", "null\n", '{"jsonrpc":"2.0"}\n', "[1,2]\n"]));
    } else if (r < 0.19) {
      // A deep id: the relay must answer it, or refuse it, under the id it came with.
      const m = request("ping", {}, deep(1 + Math.floor(random() * 3000)));
      note(m);
      write(line(m));
    } else if (r < 0.22) {
      // One message written in pieces.
      const m = one();
      note(m);
      // (cut between bytes, as a pipe may: through a character too)
      const bytes = new TextEncoder().encode(line(m));
      const cut = Math.floor(random() * bytes.length);
      write(bytes.subarray(0, cut));
      write(bytes.subarray(cut));
    } else {
      const m = one();
      note(m);
      write(line(m));
    }
  }
  if (random() < 0.1) {
    // The client's input ends in the middle of a message: that request never was one.
    const m = request("tools/call", { name: "echo", arguments: { text: "cut" } });
    plan.broken.add(JSON.stringify(m.id));
    write(line(m).slice(0, 20));
  }
  return plan;
}

function initParams() {
  return { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } };
}

/** The server's record: every JSON-RPC message it was sent (parsed), by the id of each request. */
interface ServerSeen {
  requests: Map<string, number>;
  /** The answers to the server's own requests, by their ids (by JSON), and the ids it asked under. */
  answers: Map<string, number>;
  asked: Set<string>;
  /** Requests that came in a session well after the server answered a POST in it with 404. */
  lateInEnded: string[];
}

/**
 * How long after a 404 that ended a session a request in it still counts as sent before the relay read the
 * 404 (not a fault): a POST or GET may be on its way as it comes; a DELETE goes as the relay closes, once it
 * read every answer in flight (the 404 among them).
 */
const ENDED_SLACK_MS = { DELETE: 50, other: 500 } as const;

/** What the hostile server does for `seed`; returns its address and how to stop it. */
async function hostileServer(
  seed: number,
  seen: ServerSeen,
  trace: string[],
): Promise<{ url: string; stop: () => void }> {
  const sessions = new Set<string>();
  let nextSession = 0;
  let counter = 0;
  /** Requests taken with 202, to answer on the GET stream. */
  const taken: unknown[] = [];
  const streams = new Set<ServerResponse>();
  /** When each session was ended by a 404 to a POST in it. */
  const ended = new Map<string, number>();
  const end404 = (session: string | undefined) => {
    if (session !== undefined && !ended.has(session)) ended.set(session, Date.now());
  };
  const choose = (key: string) => (hash(seed, `${key}#${counter++}`) % 10000) / 10000;
  const answerOf = (m: Record<string, unknown>) => {
    const result = m.method === "initialize"
      ? {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "1" },
      }
      : m.method === "tools/list"
      ? { tools: TOOLS }
      : m.method === "tools/call"
      ? { content: [{ type: "text", text: "ran" }] }
      : {};
    return { jsonrpc: "2.0", id: m.id, result };
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.on("error", () => {});
    req.on("error", () => {});
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const session = req.headers["mcp-session-id"] as string | undefined;
      const body = Buffer.concat(chunks).toString("utf8");
      const endedAt = session === undefined ? undefined : ended.get(session);
      const slack = req.method === "DELETE" ? ENDED_SLACK_MS.DELETE : ENDED_SLACK_MS.other;
      if (endedAt !== undefined && Date.now() - endedAt > slack) {
        seen.lateInEnded.push(`${req.method} ${body.slice(0, 120)} in ${session}`);
      }
      if (req.method === "DELETE") {
        trace.push(`server: DELETE ${session}`);
        if (session !== undefined) sessions.delete(session);
        return void res.writeHead(choose("delete") < 0.8 ? 200 : 404).end();
      }
      if (req.method === "GET") {
        const p = choose(`get`);
        trace.push(
          `server: GET ${session} last-event-id=${req.headers["last-event-id"] ?? ""} p=${p.toFixed(2)}`,
        );
        if (p < 0.3) return void res.writeHead(405).end();
        if (p < 0.35) {
          // (a 404 to a session's id ends it, as MCP says of any request: what comes after it in that session
          // gets 404 too; not timed as a POST's 404 is, as the relay may have dropped this GET, its stream left
          // or its client gone, before reading it)
          if (session !== undefined) sessions.delete(session);
          return void res.writeHead(404).end();
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        streams.add(res);
        res.on("close", () => streams.delete(res));
        res.write("retry: 5\n\n");
        for (const m of taken.splice(0)) {
          res.write(`id: g${counter}\ndata: ${JSON.stringify(answerOf(m as Record<string, unknown>))}\n\n`);
        }
        if (p < 0.6) setTimeout(() => res.end(), 10);
        return;
      }
      let message: unknown;
      try {
        message = JSON.parse(body);
      } catch {
        return void res.writeHead(400).end("not JSON");
      }
      const members = (Array.isArray(message) ? message : [message]) as Record<string, unknown>[];
      for (const m of members) {
        if (m === null || typeof m !== "object" || "method" in m || !("id" in m)) continue;
        const key = JSON.stringify(m.id);
        seen.answers.set(key, (seen.answers.get(key) ?? 0) + 1);
      }
      const requests = members.filter((m) =>
        m !== null && typeof m === "object" && typeof m.method === "string" && "id" in m
      );
      for (const m of requests) {
        const key = JSON.stringify(m.id);
        seen.requests.set(key, (seen.requests.get(key) ?? 0) + 1);
      }
      const shown = body.length > 300 ? `${body.slice(0, 300)}…` : body;
      const init = requests.find((m) => m.method === "initialize");
      if (init !== undefined) {
        const id = `sess-${seed}-${++nextSession}`;
        sessions.add(id);
        trace.push(`server: POST ${shown} -> initialize ${id}`);
        const answers = requests.map(answerOf);
        return void res.writeHead(200, { "content-type": "application/json", "mcp-session-id": id })
          .end(JSON.stringify(Array.isArray(message) ? answers : answers[0]));
      }
      if (session !== undefined && !sessions.has(session)) {
        trace.push(`server: POST ${shown} -> 404 (no session ${session})`);
        end404(session);
        return void res.writeHead(404, { "content-type": "application/json" }).end(
          JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
        );
      }
      if (requests.length === 0) {
        trace.push(`server: POST ${shown} -> 202`);
        return void res.writeHead(202).end();
      }
      const p = choose(JSON.stringify(requests.map((m) => [m.id, m.method])));
      const answers = requests.map(answerOf);
      const json = JSON.stringify(Array.isArray(message) ? answers : answers[0]);
      const behaviours: [number, string, () => void][] = [
        [0.3, "json", () => res.writeHead(200, { "content-type": "application/json" }).end(json)],
        [0.45, "sse", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(
            `data: ${
              JSON.stringify({
                jsonrpc: "2.0",
                method: "notifications/message",
                params: { level: "info", data: "hi" },
              })
            }\n\n`,
          );
          // (now and then a request of the server's first: the client answers it in another POST)
          if (choose("ask") < 0.5) {
            const id = `srv-${seed}-${counter}`;
            seen.asked.add(JSON.stringify(id));
            res.write(
              `data: ${JSON.stringify({ jsonrpc: "2.0", id, method: "roots/list", params: {} })}\n\n`,
            );
          }
          for (const a of answers) res.write(`id: e${counter}\ndata: ${JSON.stringify(a)}\n\n`);
          res.end();
        }],
        [0.5, "json wrong id", () =>
          res.writeHead(200, { "content-type": "application/json" }).end(
            JSON.stringify({ jsonrpc: "2.0", id: "nobody", result: {} }),
          )],
        [
          0.55,
          "json twice",
          () =>
            res.writeHead(200, { "content-type": "application/json" }).end(
              JSON.stringify([...answers, ...answers]),
            ),
        ],
        [0.6, "202", () => {
          taken.push(...requests);
          res.writeHead(202).end();
          for (const s of streams) {
            for (const m of taken.splice(0)) {
              s.write(`data: ${JSON.stringify(answerOf(m as Record<string, unknown>))}\n\n`);
            }
          }
        }],
        [0.65, "500", () => res.writeHead(500, { "content-type": "text/plain" }).end("boom")],
        [0.68, "400 json-rpc", () =>
          res.writeHead(400, { "content-type": "application/json" }).end(
            JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message: "bad" }, id: null }),
          )],
        [0.72, "text/plain body", () => res.writeHead(200, { "content-type": "text/plain" }).end(json)],
        [0.74, "text/html", () => res.writeHead(200, { "content-type": "text/html" }).end("<html>hi</html>")],
        [0.78, "cut body", () => {
          res.writeHead(200, {
            "content-type": "application/json",
            "content-length": String(json.length + 50),
          });
          res.write(json.slice(0, Math.floor(json.length / 2)));
          setTimeout(() => res.destroy(), 5);
        }],
        [
          0.8,
          "huge header",
          () =>
            res.writeHead(200, { "content-type": "application/json", "x-big": "a".repeat(70_000) }).end(json),
        ],
        [0.84, "sse ends early, resumable", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(`id: r${counter}\nretry: 5\ndata: \n\n`);
        }],
        [0.86, "sse cut mid-event", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`id: c1\ndata: ${json.slice(0, 10)}`);
          setTimeout(() => res.destroy(), 5);
        }],
        [0.9, "session deleted mid-call", () => {
          if (session !== undefined) sessions.delete(session);
          setTimeout(() => {
            end404(session);
            res.writeHead(404).end();
          }, 20);
        }],
        [0.93, "destroyed", () => res.destroy()],
        [0.96, "never", () => {}],
        [
          1.01,
          "slow json",
          () => setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(json), 40),
        ],
      ];
      const [, name, act] = behaviours.find(([upTo]) => p < upTo)!;
      trace.push(`server: POST ${shown} -> ${name}`);
      act();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    stop: () => {
      server.closeAllConnections?.();
      server.close();
    },
  };
}

/** Run seed `seed` once and check the oracle. */
export async function fuzzOne(seed: number): Promise<FuzzResult> {
  const trace: string[] = [];
  const problems: string[] = [];
  const plan = clientPlan(seeded(seed));
  const seen: ServerSeen = { requests: new Map(), answers: new Map(), asked: new Set(), lateInEnded: [] };
  /** The client's answers to the server's requests, written between its steps. */
  const replies: string[] = [];
  const server = await hostileServer(seed, seen, trace);
  const answers = new Map<string, JsonRpcMessage[]>();
  const refused = new Set<string>();
  let closedAt = 0;
  async function* client() {
    const enc = new TextEncoder();
    for (const step of plan.steps) {
      const bytes = typeof step.bytes === "string" ? enc.encode(step.bytes) : step.bytes;
      const text = new TextDecoder().decode(bytes);
      trace.push(`client: ${text.length > 300 ? `${text.slice(0, 300)}…` : text.trimEnd()}`);
      yield bytes;
      if (step.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, step.pauseMs));
      // (between whole lines only, as a client writes)
      if (replies.length > 0 && bytes.at(-1) === 10) yield enc.encode(replies.splice(0).join(""));
    }
    // (a last look: answers to requests that came meanwhile)
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (replies.length > 0) yield enc.encode("\n" + replies.splice(0).join(""));
    closedAt = Date.now();
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = new AbortController();
  try {
    const relayed = relayMcpHttp(server.url, {
      input: client(),
      shutdownGraceMs: 300,
      signal: stop.signal,
      onEvent: (event) => {
        if (event.event !== "tools") trace.push(`relay event: ${JSON.stringify(event).slice(0, 300)}`);
      },
      output: (bytes) => {
        for (const line of new TextDecoder().decode(bytes).split("\n").filter(Boolean)) {
          let read: JsonRpcMessage | JsonRpcMessage[];
          try {
            read = JSON.parse(line);
          } catch {
            problems.push(`the client read a line that is not JSON: ${line.slice(0, 200)}`);
            continue;
          }
          trace.push(`client read: ${line.length > 160 ? `${line.slice(0, 160)}…` : line}`);
          for (const m of Array.isArray(read) ? read : [read]) {
            if (m !== null && typeof m === "object" && typeof m.method === "string" && "id" in m) {
              const reply = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { roots: [] } });
              // (now and then cut short: not JSON, the relay answers the server's request with an error)
              const cut = hash(seed, `cut${JSON.stringify(m.id)}`) % 10 === 0;
              replies.push((cut ? reply.replace('"roots":[]', "roots:[]") : reply) + "\n");
            }
            if (m === null || typeof m !== "object" || typeof m.method === "string") continue;
            const key = JSON.stringify(m.id);
            answers.set(key, [...(answers.get(key) ?? []), m]);
            const text = String((m.error as { message?: unknown } | undefined)?.message ?? "");
            if (/was not sent/.test(text)) refused.add(key);
          }
        }
      },
    });
    const hung = new Promise<"hung">((resolve) => {
      const check = () => {
        if (closedAt > 0 && Date.now() - closedAt > BOUND_MS) return resolve("hung");
        timer = setTimeout(check, 200);
      };
      check();
    });
    if (await Promise.race([relayed, hung]) === "hung") {
      problems.push(`the relay did not end within ${BOUND_MS} ms of the client closing its side`);
      stop.abort();
      await Promise.race([relayed, new Promise((resolve) => setTimeout(resolve, 5000))]);
    }
  } finally {
    clearTimeout(timer);
    server.stop();
  }
  for (const [key, count] of plan.sent) {
    if (plan.broken.has(key)) continue;
    const got = answers.get(key)?.length ?? 0;
    const least = plan.cancelled.has(key) ? 0 : count;
    if (got < least || got > count) {
      problems.push(`request id ${key.slice(0, 80)} sent ${count}× got ${got} answers`);
    }
  }
  for (const [key, got] of seen.answers) {
    if (!seen.asked.has(key)) problems.push(`the server got an answer under id ${key}, which it never asked`);
    else if (got > 1) problems.push(`the server got ${got} answers to its request ${key}`);
  }
  for (const [key, got] of answers) {
    // (JSON-RPC's answer to a line that is no request: an error under id null)
    if (key === "null" && got.every((m) => m.error !== undefined)) continue;
    if (!plan.sent.has(key)) {
      problems.push(`an answer under id ${key.slice(0, 80)}, which the client never sent`);
    }
  }
  for (const late of seen.lateInEnded) problems.push(`sent in a session the server had ended: ${late}`);
  for (const key of [...plan.invalid, ...refused]) {
    // (an id the client used once: sent again it may have been refused once, and sent once)
    if ((plan.sent.get(key) ?? 0) === 1 && seen.requests.has(key)) {
      problems.push(`request id ${key.slice(0, 80)} was refused by the relay but reached the server`);
    }
  }
  return { seed, problems, trace };
}

if (import.meta.main) {
  const usage = "usage: mcp_http_fuzz.ts [--from N] [--to M] [--jobs J] | --seed N";
  const { values } = scriptArgs(usage, {
    options: {
      from: { type: "string", default: "1" },
      to: { type: "string", default: "200" },
      jobs: { type: "string", default: "4" },
      seed: { type: "string" },
    },
  });
  if (values.seed !== undefined) {
    const result = await fuzzOne(Number(values.seed));
    console.log(result.trace.join("\n"));
    console.log(result.problems.length === 0 ? "sound" : result.problems.join("\n"));
    process.exit(result.problems.length === 0 ? 0 : 1);
  }
  const [from, to, jobs] = [Number(values.from), Number(values.to), Number(values.jobs)];
  let next = from;
  const failures: FuzzResult[] = [];
  let done = 0;
  const worker = async () => {
    while (failures.length === 0 && next <= to) {
      const result = await fuzzOne(next++);
      done++;
      if (result.problems.length > 0) failures.push(result);
      if (done % 100 === 0) console.error(`${done} seeds`);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  const failed = failures.sort((a, b) => a.seed - b.seed)[0];
  if (failed === undefined) {
    console.log(`seeds ${from} to ${to}: sound (${done} runs)`);
    process.exit(0);
  }
  console.log(`seed ${failed.seed} fails: ${failed.problems[0]}`);
  console.log(`replay: deno run -A scripts/mcp_http_fuzz.ts --seed ${failed.seed}`);
  process.exit(1);
}
