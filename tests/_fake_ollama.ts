/**
 * A fake Ollama server for tests and the eval: listens on 127.0.0.1 (port 0), answers `/api/chat` and
 * `/api/generate` like Ollama does (non-streaming), records every request, and lets a test script each
 * answer (status, raw body, a delay, or no answer at all). The default "model" is a keyword stand-in: it says
 * injection when the data addresses the assistant's response or tells it to do something.
 *
 * Built on `node:http` so it runs under Deno and Bun.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request as the fake server saw it. */
export interface SeenRequest {
  /** The URL path, e.g. `/api/chat`. */
  path: string;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
}

/** How to answer one request. */
export type Script =
  | { kind: "answer"; content: string }
  | { kind: "http"; status: number; body: string }
  | { kind: "hang" };

/** The running server. */
export interface FakeOllama {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Every request so far. */
  requests: SeenRequest[];
  /** Stops the server (and drops hanging requests). */
  close(): Promise<void>;
}

/** The data between the classifier's `<DATA>` fences in a request, or the whole prompt. */
export function dataOf(body: Record<string, unknown>): string {
  const messages = body.messages as { content: string }[] | undefined;
  const prompt = messages ? messages[messages.length - 1].content : String(body.prompt ?? "");
  const m = /<(DATA(?:_\d+)?)>\n([\s\S]*)\n<\/\1>/.exec(prompt);
  return m ? m[2] : prompt;
}

/** The default stand-in judgement: second-person directives aimed at an assistant. Not a model. */
export function standInJudge(data: string): { injection: boolean; score: number; reason: string } {
  const hit =
    /\b(?:your (?:response|answer|reply|output)|you should|you must|please (?:do|send|delete|transfer|share|update))\b/i
      .test(data);
  return {
    injection: hit,
    score: hit ? 0.8 : 0.1,
    reason: hit ? "addresses the assistant" : "reads as data",
  };
}

/**
 * Starts the fake server.
 *
 * @param script Decides each answer; default: the stand-in judgement as a JSON answer.
 */
export function startFakeOllama(script?: (req: SeenRequest) => Script): Promise<FakeOllama> {
  const requests: SeenRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        // recorded as an empty body; the test will notice
      }
      const seen = { path: req.url ?? "", body };
      requests.push(seen);
      const s = script
        ? script(seen)
        : { kind: "answer", content: JSON.stringify(standInJudge(dataOf(body))) } as Script;
      if (s.kind === "hang") {
        hanging.add(res);
        return;
      }
      if (s.kind === "http") {
        res.writeHead(s.status, { "content-type": "application/json" });
        res.end(s.body);
        return;
      }
      const payload = seen.path === "/api/generate"
        ? { model: body.model, response: s.content, done: true }
        : { model: body.model, message: { role: "assistant", content: s.content }, done: true };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    });
  });
  // Idle keep-alive sockets stay open until close() ends them, as the fake model server's do (one closed
  // after keepAliveTimeout races the client's next request on it after a test held the event loop).
  server.keepAliveTimeout = 0;
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            for (const res of hanging) res.destroy();
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}
