/**
 * Scripted Streamable HTTP servers on 127.0.0.1 for the HTTP relay's tests, and a scripted client that
 * stays until each of its requests has an answer; and a client of raw lines relayed to the raw-line server
 * (`_mcp_raw_server.ts`) over either transport.
 */
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { type JsonRpcMessage, type McpEvent, relayMcp, relayMcpHttp } from "../mcp.ts";
import type { McpHttpRelayOptions } from "../_mcp/http.ts";
import { INIT_RESULT } from "./_mcp_messages.ts";
import { answer } from "./_mcp_raw_server.ts";
import { type Command, runtimeCommand } from "./_runtime.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * What every scripted server answers alike: a notification with 202, `initialize` with a session,
 * `tools/list` with `tools`. True when `m` was answered here.
 */
export function answeredPlainly(m: JsonRpcMessage, res: ServerResponse, tools: { name: string }[]): boolean {
  const answer = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", id: m.id, result });
  if (m.id === undefined) {
    res.writeHead(202).end();
  } else if (m.method === "initialize") {
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s" }).end(
      answer(INIT_RESULT),
    );
  } else if (m.method === "tools/list") {
    const listed = tools.map((t) => ({ inputSchema: { type: "object" }, ...t }));
    res.writeHead(200, { "content-type": "application/json" }).end(answer({ tools: listed }));
  } else return false;
  return true;
}

/** A server listening on 127.0.0.1: its MCP address, and how to stop it (open connections too). */
export interface LocalServer {
  url: string;
  stop: () => void;
}

/**
 * A Streamable HTTP server whose tools are `tools`: notifications, `initialize` and `tools/list` are answered
 * plainly, every other POST goes to `post` (with its body as it came); a GET goes to `get` (default: 405, no
 * stream of its own).
 */
export function scriptedServer(
  tools: { name: string }[],
  post: (m: JsonRpcMessage, res: ServerResponse, req: IncomingMessage, body: string) => void,
  get: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => void res.writeHead(405).end(),
): Promise<LocalServer> {
  const server = createServer((req, res) => {
    if (req.method === "GET") return get(req, res);
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(200).end();
      const m = JSON.parse(body) as JsonRpcMessage;
      if (!answeredPlainly(m, res, tools)) post(m, res, req, body);
    });
  });
  // Idle keep-alive sockets stay open until stop() ends them. Closed by the server once idle for
  // keepAliveTimeout (5 s), one raced the relay's next POST on it: after a relay that held the event loop
  // that long (Bun's JSON.stringify giving up on a message nested 200 000 deep, on a loaded machine), the POST
  // went out on a socket the server was closing (ECONNRESET under Bun), as in _fake_llm_server.ts.
  server.keepAliveTimeout = 0;
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        stop: () => {
          server.closeAllConnections?.();
          server.close();
        },
      });
    });
  });
}

/** A client of raw lines: what it writes, where it reads, and how to stop its wait for answers. */
export interface RawClient {
  input: AsyncIterable<Uint8Array>;
  output: (bytes: Uint8Array) => void;
  stop(): void;
}

/**
 * A client that writes `chunks` (lines with their newlines: one chunk is read at once, so the relay judges
 * its lines before any answer comes), collects the lines it reads in `lines`, and stays until `done(lines)`
 * says it has every answer it waits for (or 20 s pass, so that a relay that never answers fails the test,
 * not hangs it).
 */
export function rawLineClient(
  chunks: Uint8Array[],
  done: (lines: readonly string[]) => boolean,
): RawClient & { lines: string[] } {
  const lines: string[] = [];
  let finish = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const timer = setTimeout(finish, 20_000);
  let rest = "";
  return {
    lines,
    stop: () => clearTimeout(timer),
    input: (async function* () {
      yield* chunks;
      await finished;
    })(),
    output: (bytes) => {
      const parts = (rest + new TextDecoder().decode(bytes)).split("\n");
      rest = parts.pop()!;
      for (const part of parts) if (part !== "") lines.push(part);
      if (done(lines)) finish();
    },
  };
}

/**
 * Relay `client` to a Streamable HTTP server that answers each POST as the raw-line server does (its `answer`,
 * as JSON; see `_mcp_raw_server.ts`), `seen` told of each POST first (its body decoded as UTF-8). Returns the
 * relay's events.
 */
export async function relayToRawLineServer(
  client: RawClient,
  seen: (body: string, req: IncomingMessage) => void = () => {},
): Promise<McpEvent[]> {
  const server = createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk: Uint8Array) => void chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(req.method === "GET" ? 405 : 200).end();
      const body = new TextDecoder().decode(Buffer.concat(chunks));
      seen(body, req);
      const text = answer(body);
      if (text === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s" }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await relayRawLinesTo(
      client,
      `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    );
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
}

/** Relay `client` to the Streamable HTTP server at `url`. Returns the relay's events. */
export async function relayRawLinesTo(client: RawClient, url: string): Promise<McpEvent[]> {
  const events: McpEvent[] = [];
  try {
    await relayMcpHttp(url, {
      input: client.input,
      output: client.output,
      shutdownGraceMs: 500,
      onEvent: (e) => void events.push(e),
    });
  } finally {
    client.stop();
  }
  return events;
}

/**
 * Relay `client` to the raw-line server as a stdio child process (noting the lines it gets in a file of its
 * own, removed after), or to `server` (a command and its arguments); `onEvent` is told of each of the
 * relay's events, which are returned.
 */
export async function relayToRawLineProcess(
  client: RawClient,
  onEvent: (event: McpEvent) => void = () => {},
  server?: Command,
): Promise<McpEvent[]> {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-raw-"));
  const raw = runtimeCommand(join(root, "tests", "_mcp_raw_server.ts"), [join(dir, "server.log")]);
  const { command, args } = server ?? raw;
  const events: McpEvent[] = [];
  try {
    await relayMcp({
      command,
      args,
      input: client.input,
      output: client.output,
      stderr: "ignore",
      shutdownGraceMs: 500,
      onEvent: (e) => {
        events.push(e);
        onEvent(e);
      },
    });
  } finally {
    client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return events;
}

/** What {@linkcode relayUntilAnswered} saw. */
export interface Relayed {
  /** The client's answers, by id. */
  answers: Map<unknown, JsonRpcMessage>;
  /** Every message the client read, in order. */
  received: JsonRpcMessage[];
  /** The relay's events. */
  events: McpEvent[];
  /** True when every request was answered while the client still waited (not as the relay ended). */
  answeredWhileConnected: boolean;
}

/**
 * Relay a client that sends `messages` (after `initialize`) to `url`, and stays until every request among
 * them has an answer (or 15 s have passed, so that a relay that never answers fails the test, not hangs it).
 */
export async function relayUntilAnswered(
  url: string,
  messages: readonly unknown[],
  options: McpHttpRelayOptions = {},
): Promise<Relayed> {
  // (by their JSON: an id that is an array or an object comes back as another object)
  const ids = new Set(
    messages.flatMap((m) =>
      (m as JsonRpcMessage).id === undefined ? [] : [JSON.stringify((m as JsonRpcMessage).id)]
    ),
  );
  const answered = new Set<string>();
  const seen: Relayed = { answers: new Map(), received: [], events: [], answeredWhileConnected: false };
  let allAnswered = () => {};
  const everyAnswer = new Promise<void>((resolve) => (allAnswered = resolve));
  const timer = setTimeout(allAnswered, 15_000);
  const enc = new TextEncoder();
  async function* client() {
    for (const m of messages) yield enc.encode(JSON.stringify(m) + "\n");
    await everyAnswer;
    seen.answeredWhileConnected = [...ids].every((id) => answered.has(id));
  }
  try {
    await relayMcpHttp(url, {
      ...options,
      input: client(),
      onEvent: (e) => void seen.events.push(e),
      output: (bytes) => {
        for (const line of new TextDecoder().decode(bytes).split("\n").filter(Boolean)) {
          const m = JSON.parse(line) as JsonRpcMessage;
          seen.received.push(m);
          if (m.method === undefined) seen.answers.set(m.id, m);
          if (m.method === undefined) answered.add(JSON.stringify(m.id));
        }
        if ([...ids].every((id) => answered.has(id))) allAnswered();
      },
    });
  } finally {
    clearTimeout(timer);
  }
  return seen;
}

/** The message of an error answer, or "" for none. */
export function errorOf(m: JsonRpcMessage | undefined): string {
  return String((m?.error as { message?: unknown } | undefined)?.message ?? "");
}

/**
 * A Streamable HTTP server of `tests/` started with `node` (by default `_mcp_polling_server.mjs`, the official
 * SDK's server), with `args`, once it listens (it says "listening on port N" on stderr).
 */
export async function startPollingServer(
  script = "_mcp_polling_server.mjs",
  args: string[] = [],
): Promise<{ url: string; stop: () => void }> {
  const child = spawn("node", [join(root, "tests", script), ...args], {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL"); // a server that did not start must not outlive the test
      reject(new Error(`${script} did not start`));
    }, 15_000);
    child.stderr.on("data", (chunk: Uint8Array) => {
      const m = /listening on port (\d+)/.exec(new TextDecoder().decode(chunk));
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill("SIGKILL") };
}
