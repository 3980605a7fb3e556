/**
 * The HTTP relay: a stdio client on one side, a Streamable HTTP MCP server (`POST` per message, answers as
 * JSON or as a server-sent event stream, `Mcp-Session-Id`, an optional `GET` stream for the server's own
 * requests) on the other, judged by the same guard session as the stdio relay. What `toolguard mcp --url`
 * runs.
 *
 * @module
 */
import { hostInput, hostOutput, onInterrupt } from "../_run/runtime.ts";
import { sseParser } from "../_gate/sse.ts";
import { errorText, isRecord } from "../_common/values.ts";
import { createMcpGuard, emitTo } from "./guard.ts";
import { createFramer, encodeMessage, errorResponse, isRequest, type JsonRpcMessage } from "./jsonrpc.ts";
import type { McpFrame, McpGuardOptions, McpRelayExit, McpSession } from "./types.ts";

/** Options for {@linkcode relayMcpHttp}. */
export interface McpHttpRelayOptions extends McpGuardOptions {
  /** What the client writes (default: this process's stdin). */
  input?: AsyncIterable<Uint8Array>;
  /** Where the client reads (default: this process's stdout). */
  output?: (bytes: Uint8Array) => void | Promise<void>;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Stop relaying. */
  signal?: AbortSignal;
  /** Longest client message in bytes; longer ones are answered with an error. Default 64 MiB. */
  maxMessageBytes?: number;
}

/** JSON-RPC error code for a failure of the transport (the SDK's "connection closed"). */
const TRANSPORT_ERROR = -32000;

/** The HTTP relay behind the public `relayMcpHttp` (`_mcp/relays.ts`, which documents it). */
export async function relayMcpHttp(url: string, options: McpHttpRelayOptions = {}): Promise<McpRelayExit> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const stopListening = options.input === undefined ? onInterrupt(stop) : () => {};
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    return await new HttpRelay(url, options, controller.signal).run();
  } finally {
    stopListening();
  }
}

/** One relay between a stdio client and a Streamable HTTP server. */
class HttpRelay {
  readonly #url: string;
  readonly #options: McpHttpRelayOptions;
  readonly #signal: AbortSignal;
  readonly #session: McpSession;
  readonly #output: (bytes: Uint8Array) => void | Promise<void>;
  #outChain: Promise<void> = Promise.resolve();
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  /** Requests in flight, so the relay waits for their answers before it ends. */
  readonly #inFlight = new Set<Promise<void>>();
  #listening = false;
  /** Ends the server's own stream when the relay ends. */
  readonly #listenStop = new AbortController();

  constructor(url: string, options: McpHttpRelayOptions, signal: AbortSignal) {
    this.#url = url;
    this.#options = options;
    this.#signal = signal;
    this.#output = options.output ?? hostOutput();
    const guard = createMcpGuard({ ...options, batches: options.batches ?? "split" });
    this.#session = guard.connect({ toServer: this.#toServer, toClient: this.#toClient });
  }

  /** Relay until the client's input ends or the relay is stopped. */
  async run(): Promise<McpRelayExit> {
    const aborted = new Promise<"aborted">((resolve) => {
      if (this.#signal.aborted) resolve("aborted");
      this.#signal.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    const first = await Promise.race([this.#pumpClient().then(() => "client" as const), aborted]);
    if (first === "client") {
      // Answers still on their way come first.
      await Promise.race([Promise.all([...this.#inFlight]), aborted]);
    }
    this.#listenStop.abort();
    this.#session.serverClosed(
      first === "client" ? "was left because the client closed" : "was left (aborted)",
    );
    await this.#endSession();
    await this.#outChain;
    const reason = first === "client" ? "client_closed" : "aborted";
    emitTo(this.#options.onEvent, { event: "exit", reason, exitCode: null, signal: null });
    return { reason, exitCode: null, signal: null, detail: `relay to ${this.#url} ended` };
  }

  readonly #toClient = (frame: McpFrame): Promise<void> => {
    const bytes = encodeMessage(frame.message);
    this.#outChain = this.#outChain.then(async () => {
      try {
        await this.#output(bytes);
      } catch {
        // The client stopped reading: nothing more to deliver.
      }
    });
    return this.#outChain;
  };

  /** Send one frame as a POST; its answer (JSON or an event stream) goes to the session. Never throws. */
  readonly #toServer = (frame: McpFrame): void => {
    const sent = this.#post(frame.message).catch((error) => this.#failed(frame.message, errorText(error)));
    this.#inFlight.add(sent);
    void sent.finally(() => this.#inFlight.delete(sent));
  };

  #headers(accept: string): Record<string, string> {
    const headers: Record<string, string> = { ...this.#options.headers, accept };
    if (this.#sessionId !== undefined) headers["mcp-session-id"] = this.#sessionId;
    if (this.#protocolVersion !== undefined) headers["mcp-protocol-version"] = this.#protocolVersion;
    return headers;
  }

  async #post(message: unknown): Promise<void> {
    const response = await fetch(this.#url, {
      method: "POST",
      headers: {
        ...this.#headers("application/json, text/event-stream"),
        "content-type": "application/json",
      },
      body: JSON.stringify(message),
      signal: this.#signal,
    });
    const id = response.headers.get("mcp-session-id");
    if (id !== null) this.#sessionId = id;
    if (!response.ok) {
      const body = await response.text().catch(() => "");
      return this.#failed(message, `HTTP ${response.status}${body ? `: ${body.slice(0, 200)}` : ""}`);
    }
    await this.#read(response);
    if (isRecord(message) && message.method === "notifications/initialized") void this.#listen();
  }

  /** Hand every message of an answer (JSON, or an event stream) to the session. */
  async #read(response: Response): Promise<void> {
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream") && response.body) {
      const parser = sseParser();
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
          this.#fromServerText(event.data);
        }
      }
      for (const event of parser.end()) this.#fromServerText(event.data);
      return;
    }
    const text = await response.text();
    if (text.trim() !== "") this.#fromServerText(text);
  }

  #fromServerText(text: string | undefined): void {
    if (text === undefined || text.trim() === "") return;
    let message: JsonRpcMessage | JsonRpcMessage[];
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    this.#noteInitialize(message);
    this.#session.fromServer({ message });
  }

  /** Keep the negotiated protocol version: later requests must carry it. */
  #noteInitialize(message: unknown): void {
    if (isRecord(message) && isRecord(message.result) && typeof message.result.protocolVersion === "string") {
      this.#protocolVersion ??= message.result.protocolVersion;
    }
  }

  /** A POST failed: its requests get a JSON-RPC error (never silence). */
  #failed(message: unknown, why: string): void {
    for (const m of Array.isArray(message) ? message : [message]) {
      if (!isRecord(m) || !isRequest(m as JsonRpcMessage)) continue;
      const text = `toolguard: the MCP server at ${this.#url} did not answer ${String(m.method)}: ${why}`;
      if (!this.#session.answerWithError((m as JsonRpcMessage).id ?? null, TRANSPORT_ERROR, text)) {
        void this.#toClient({
          message: errorResponse((m as JsonRpcMessage).id ?? null, TRANSPORT_ERROR, text),
        });
      }
    }
  }

  /** The server's own stream (`GET`): requests and notifications it sends outside any answer. Optional. */
  async #listen(): Promise<void> {
    if (this.#listening) return;
    this.#listening = true;
    try {
      const signal = AbortSignal.any([this.#signal, this.#listenStop.signal]);
      const response = await fetch(this.#url, { headers: this.#headers("text/event-stream"), signal });
      if (response.ok) await this.#read(response);
      else await response.body?.cancel();
    } catch {
      // The server offers no stream (405), or it ended: answers still arrive on the POSTs.
    }
  }

  /** Tell the server the session is over. */
  async #endSession(): Promise<void> {
    if (this.#sessionId === undefined) return;
    try {
      const response = await fetch(this.#url, {
        method: "DELETE",
        headers: this.#headers("application/json"),
        signal: AbortSignal.timeout(2000),
      });
      await response.body?.cancel();
    } catch {
      // The server is gone already.
    }
  }

  /** Client to server, until the client's input ends. */
  async #pumpClient(): Promise<void> {
    const max = this.#options.maxMessageBytes ?? 64 * 1024 * 1024;
    const framer = createFramer({
      maxLineBytes: max,
      onOverflow: (bytes) => {
        const text = `toolguard: message of ${bytes} bytes exceeds the limit of ${max} bytes; not forwarded`;
        void this.#toClient({ message: errorResponse(null, -32600, text) });
      },
    });
    try {
      for await (const chunk of this.#options.input ?? hostInput()) {
        for (const frame of framer.push(chunk)) await this.#session.fromClient(frame);
      }
    } catch {
      // The client's pipe broke: same as end-of-file.
    }
    for (const frame of framer.end()) await this.#session.fromClient(frame);
  }
}
