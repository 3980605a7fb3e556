/**
 * A fake model server for tests: listens on 127.0.0.1 (port 0), records every request, and replays
 * provider-shaped responses (JSON, SSE or NDJSON, optionally paced or held until a test says go), plus
 * builders for the bodies and stream events of OpenAI Chat, OpenAI Responses, Anthropic and Ollama.
 *
 * Built on `node:http` so the same helper runs under Deno and Bun.
 *
 * @module
 */

import { after, before } from "node:test";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type GateEvent, guardFetch, type GuardFetchOptions } from "../gate.ts";

/** One scripted answer. Exactly one of `json`, `sse`, `ndjson` or `body` is used. */
export interface FakeReply {
  /** HTTP status. Default 200. */
  status?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** A JSON body (`application/json`). */
  json?: unknown;
  /** SSE frames: an object becomes `data: JSON` (with `event: type` when `named`), a string is sent as is. */
  sse?: unknown[];
  /** Write `event: <type>` lines for object frames (Anthropic and OpenAI Responses do). */
  named?: boolean;
  /** NDJSON lines: an object becomes one JSON line, a string is sent as is (add your own newline). */
  ndjson?: unknown[];
  /** A raw body with `contentType`. */
  body?: string;
  /** Content type for `body`. */
  contentType?: string;
  /** Pause between frames, in milliseconds. */
  delayMs?: number;
  /** Before sending frame N, wait for this promise (lets a test prove text arrives before the rest). */
  holdBefore?: { frame: number; until: Promise<unknown> };
  /** Split every frame into pieces of this many characters, sent separately. */
  splitEvery?: number;
  /** Close the connection without an answer (the client's fetch fails, as on a reset socket). */
  reset?: true;
}

/** A request as the server saw it. */
export interface RecordedRequest {
  /** HTTP method. */
  method: string;
  /** Path and query. */
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw body text. */
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
}

/** A running fake server. */
export interface FakeServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/** What the server answers: a list used in order (the last repeats), or a function of the request. */
export type Script = FakeReply[] | ((request: RecordedRequest, n: number) => FakeReply);

/** Starts a fake server on 127.0.0.1 with a random port. */
export async function startFakeLlmServer(script: Script): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", () => {
      const body = new TextDecoder().decode(concat(chunks));
      const rec: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
      };
      try {
        rec.json = JSON.parse(body);
      } catch {
        // not JSON
      }
      requests.push(rec);
      const n = requests.length - 1;
      const reply = typeof script === "function" ? script(rec, n) : script[Math.min(n, script.length - 1)];
      if (reply.reset) res.destroy();
      else send(res, reply).catch(() => res.destroy());
    });
  });
  // Idle keep-alive sockets stay open until close() ends them. Closed by the server once idle for
  // keepAliveTimeout (5 s), one raced the client's next request on it: after a test that held the event
  // loop that long, the request went out on a socket the server was closing (ECONNRESET under Bun).
  server.keepAliveTimeout = 0;
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A fake provider for the tests of one file, with a guarded `fetch` that reports into `events`. */
export interface FakeProvider {
  /** Sets the answer to the next requests and forgets the events so far. */
  reply(r: FakeReply): void;
  /** What the gate reported since the last `reply`. */
  readonly events: GateEvent[];
  /** `guardFetch(fetch)`, reporting into `events`. */
  readonly gfetch: typeof fetch;
  /** The server's `http://127.0.0.1:PORT` (once the file's tests have started). */
  url(): string;
}

/** Starts a fake provider before the file's tests and closes it after them. */
export function fakeProvider(): FakeProvider {
  let next: FakeReply = { json: {} };
  let server: FakeServer | undefined;
  const events: GateEvent[] = [];
  before(async () => {
    server = await startFakeLlmServer(() => next);
  });
  after(async () => {
    await server?.close();
  });
  return {
    reply(r) {
      next = r;
      events.length = 0;
    },
    events,
    gfetch: guardFetch(fetch, { onVerdict: (e) => events.push(e) }),
    url: () => server!.url,
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(res: ServerResponse, reply: FakeReply): Promise<void> {
  const status = reply.status ?? 200;
  if (reply.json !== undefined || reply.body !== undefined) {
    const text = reply.body ?? JSON.stringify(reply.json);
    res.writeHead(status, {
      "content-type": reply.body !== undefined ? reply.contentType ?? "text/plain" : "application/json",
      "content-length": String(new TextEncoder().encode(text).byteLength),
      ...reply.headers,
    });
    res.end(text);
    return;
  }
  const frames: string[] = [];
  if (reply.sse) {
    for (const f of reply.sse) {
      if (typeof f === "string") frames.push(f);
      else {
        const type = (f as { type?: unknown }).type;
        frames.push(
          (reply.named && typeof type === "string" ? `event: ${type}\n` : "") +
            `data: ${JSON.stringify(f)}\n\n`,
        );
      }
    }
  } else {
    for (const f of reply.ndjson ?? []) frames.push(typeof f === "string" ? f : JSON.stringify(f) + "\n");
  }
  res.writeHead(status, {
    "content-type": reply.sse ? "text/event-stream" : "application/x-ndjson",
    "cache-control": "no-cache",
    ...reply.headers,
  });
  // A reply of thousands of frames, with no pacing asked for, goes out in writes of 64 frames: deno.exe's
  // node:http under Wine closes the connection on a response written in more than about 250 pieces at once.
  if (!reply.delayMs && !reply.holdBefore && !reply.splitEvery && frames.length > WRITES_AT_ONCE) {
    for (let i = 0; i < frames.length; i += 64) res.write(frames.slice(i, i + 64).join(""));
    res.end();
    return;
  }
  for (let i = 0; i < frames.length; i++) {
    if (reply.holdBefore && reply.holdBefore.frame === i) await reply.holdBefore.until;
    const pieces = reply.splitEvery ? split(frames[i], reply.splitEvery) : [frames[i]];
    for (const p of pieces) res.write(p);
    if (reply.delayMs) await sleep(reply.delayMs);
  }
  res.end();
}

/** The most frames written one by one; see the note on Wine in `send`. */
const WRITES_AT_ONCE = 200;

function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Provider-shaped bodies
// ---------------------------------------------------------------------------------------------------------

/** A tool call as tests write it: name and arguments (object, or raw text for malformed ones). */
export interface CallSpec {
  /** Tool name. */
  name: string;
  /** Arguments: an object, or raw (possibly broken) JSON text. */
  args: Record<string, unknown> | string;
  /** Call id; omitted for Ollama unless given. */
  id?: string;
}

/** A weather call the test tools reject: `units` is not one of the declared values. */
export const REJECTED_CALL: CallSpec = {
  name: "get_weather",
  args: { city: "Oslo", units: "kelvin" },
  id: "call_bad",
};
/** The same call, valid. */
export const VALID_CALL: CallSpec = { name: "get_weather", args: { city: "Oslo" }, id: "call_good" };
/** The user turn the retry tests send. */
export const WEATHER_QUESTION: { role: "user"; content: string }[] = [{
  role: "user",
  content: "Weather in Oslo?",
}];

/** What {@linkcode withGuardedServer} hands back: `use`'s value, the server (its requests) and the verdicts. */
export interface GuardedRun<T> {
  value: T;
  server: FakeServer;
  seen: GateEvent[];
}

/**
 * Runs `use` against a fake server answering `script`, with `guardFetch(fetch, options)` whose verdict
 * events are collected in `seen`; closes the server afterwards.
 */
export async function withGuardedServer<T>(
  script: Script,
  options: GuardFetchOptions,
  use: (server: FakeServer, f: typeof fetch, seen: GateEvent[]) => Promise<T>,
): Promise<GuardedRun<T>> {
  const server = await startFakeLlmServer(script);
  const seen: GateEvent[] = [];
  try {
    const f = guardFetch(fetch, {
      ...options,
      onVerdict: (e) => {
        seen.push(e);
        options.onVerdict?.(e);
      },
    }) as typeof fetch;
    return { value: await use(server, f, seen), server, seen };
  } finally {
    await server.close();
  }
}

const argText = (c: CallSpec) => (typeof c.args === "string" ? c.args : JSON.stringify(c.args));

/** An OpenAI Chat Completions response. */
export function chatCompletion(content: string | null, calls: CallSpec[] = []): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content, refusal: null };
  if (calls.length) {
    message.tool_calls = calls.map((c, i) => ({
      id: c.id ?? `call_${i}`,
      type: "function",
      function: { name: c.name, arguments: argText(c) },
    }));
  }
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** One OpenAI Chat Completions stream chunk. */
export function chatChunk(
  delta: Record<string, unknown>,
  finish: string | null = null,
): Record<string, unknown> {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

/** A Chat stream chunk holding `choices` as given: several answers in one chunk, or a choice out of place. */
export function choicesChunk(choices: unknown[]): Record<string, unknown> {
  return { ...chatChunk({}), choices };
}

/** A Chat stream chunk of choice `index`, for a stream of several answers (`n`). */
export function choiceChunk(
  index: number,
  delta: Record<string, unknown>,
  finish: string | null = null,
): Record<string, unknown> {
  const chunk = chatChunk(delta, finish);
  (chunk.choices as Record<string, unknown>[])[0].index = index;
  return chunk;
}

/** The SSE frames of an OpenAI Chat stream: text pieces, then each call split into argument pieces. */
export function chatStream(text: string[], calls: CallSpec[] = [], pieces = 3): unknown[] {
  const frames: unknown[] = [chatChunk({ role: "assistant", content: "" })];
  for (const t of text) frames.push(chatChunk({ content: t }));
  calls.forEach((c, index) => {
    const parts = splitN(argText(c), pieces);
    frames.push(chatChunk({
      tool_calls: [{
        index,
        id: c.id ?? `call_${index}`,
        type: "function",
        function: { name: c.name, arguments: "" },
      }],
    }));
    for (const p of parts) frames.push(chatChunk({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  frames.push(chatChunk({}, calls.length ? "tool_calls" : "stop"));
  frames.push("data: [DONE]\n\n");
  return frames;
}

/**
 * The `data:` payloads of an SSE text (as a client gets it through the gate), parsed; the Chat stream's
 * closing `[DONE]` is no JSON and is left out.
 */
// deno-lint-ignore no-explicit-any
export function sseData(text: string): any[] {
  return text.split("\n").filter((l) => l.startsWith("data:") && l.slice(5).trim() !== "[DONE]").map((l) =>
    JSON.parse(l.slice(5))
  );
}

/** A Cohere v2 stream event, as far as {@linkcode cohereBlockTexts} reads it. */
export interface CohereEvent {
  /** `content-start`, `content-delta`, … */
  type: string;
  /** The content block's index. */
  index?: number;
  /** The text the event carries. */
  delta?: { message?: { content?: { text?: string } } };
}

/** Each Cohere content block's text as a client assembles it, by index. */
export function cohereBlockTexts(events: readonly CohereEvent[]): string[] {
  const blocks: string[] = [];
  for (const e of events) {
    const text = e.delta?.message?.content?.text ?? "";
    if (e.type === "content-start") blocks[e.index!] = text;
    if (e.type === "content-delta") blocks[e.index!] += text;
  }
  return blocks;
}

/** Splits text into `n` nearly equal pieces. */
export function splitN(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

/** An Anthropic Messages response. */
export function anthropicMessage(text: string | null, calls: CallSpec[] = []): Record<string, unknown> {
  const content: unknown[] = [];
  if (text !== null) content.push({ type: "text", text });
  calls.forEach((c, i) => {
    content.push({
      type: "tool_use",
      id: c.id ?? `toolu_${i}`,
      name: c.name,
      input: typeof c.args === "string" ? {} : c.args,
    });
  });
  return {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: "claude-fake",
    content,
    stop_reason: calls.length ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

/** The events of an Anthropic Messages stream (send with `named: true`). */
export function anthropicStream(text: string[], calls: CallSpec[] = [], pieces = 3): unknown[] {
  const events: unknown[] = [{
    type: "message_start",
    message: {
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model: "claude-fake",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  }];
  let index = 0;
  if (text.length) {
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const t of text) {
      events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });
    }
    events.push({ type: "content_block_stop", index });
    index++;
  }
  events.push({ type: "ping" });
  for (const c of calls) {
    events.push({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: c.id ?? `toolu_${index}`, name: c.name, input: {} },
    });
    for (const p of splitN(argText(c), pieces)) {
      events.push({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: p },
      });
    }
    events.push({ type: "content_block_stop", index });
    index++;
  }
  events.push({
    type: "message_delta",
    delta: { stop_reason: calls.length ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: 20 },
  });
  events.push({ type: "message_stop" });
  return events;
}

/** An Ollama `/api/chat` response. */
export function ollamaChat(content: string, calls: CallSpec[] = []): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content };
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({
      ...(c.id ? { id: c.id } : {}),
      function: { name: c.name, arguments: typeof c.args === "string" ? c.args : c.args },
    }));
  }
  return {
    model: "fake-model",
    created_at: "2025-01-01T00:00:00Z",
    message,
    done: true,
    done_reason: "stop",
    total_duration: 1000,
    eval_count: 5,
  };
}

/** The NDJSON chunks of an Ollama `/api/chat` stream: text pieces, one chunk with the calls, the final chunk. */
export function ollamaStream(text: string[], calls: CallSpec[] = []): unknown[] {
  const base = { model: "fake-model", created_at: "2025-01-01T00:00:00Z" };
  const lines: unknown[] = text.map((t) => ({
    ...base,
    message: { role: "assistant", content: t },
    done: false,
  }));
  if (calls.length) {
    lines.push({
      ...base,
      message: {
        role: "assistant",
        content: "",
        tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.args } })),
      },
      done: false,
    });
  }
  lines.push({
    ...base,
    message: { role: "assistant", content: "" },
    done: true,
    done_reason: "stop",
    eval_count: 5,
  });
  return lines;
}

/** An OpenAI Responses API response. */
export function responsesBody(text: string | null, calls: CallSpec[] = []): Record<string, unknown> {
  const output: unknown[] = [];
  if (text !== null) {
    output.push({
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }],
    });
  }
  calls.forEach((c, i) => {
    output.push({
      id: `fc_${i}`,
      type: "function_call",
      status: "completed",
      call_id: c.id ?? `call_${i}`,
      name: c.name,
      arguments: argText(c),
    });
  });
  return {
    id: "resp_fake",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    model: "fake-model",
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  };
}

/** The events of an OpenAI Responses stream (send with `named: true`). */
export function responsesStream(text: string[], calls: CallSpec[] = [], pieces = 3): unknown[] {
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ ...e, sequence_number: seq++ });
  const created = { ...responsesBody(null), status: "in_progress", output: [] };
  const events: unknown[] = [ev({ type: "response.created", response: created })];
  let oi = 0;
  const output: unknown[] = [];
  if (text.length) {
    const full = text.join("");
    events.push(ev({
      type: "response.output_item.added",
      output_index: oi,
      item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] },
    }));
    events.push(ev({
      type: "response.content_part.added",
      item_id: "msg_1",
      output_index: oi,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    }));
    for (const t of text) {
      events.push(ev({
        type: "response.output_text.delta",
        item_id: "msg_1",
        output_index: oi,
        content_index: 0,
        delta: t,
        logprobs: [],
      }));
    }
    events.push(ev({
      type: "response.output_text.done",
      item_id: "msg_1",
      output_index: oi,
      content_index: 0,
      text: full,
      logprobs: [],
    }));
    const part = { type: "output_text", text: full, annotations: [] };
    events.push(
      ev({ type: "response.content_part.done", item_id: "msg_1", output_index: oi, content_index: 0, part }),
    );
    const item = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [part] };
    events.push(ev({ type: "response.output_item.done", output_index: oi, item }));
    output.push(item);
    oi++;
  }
  calls.forEach((c, i) => {
    const id = `fc_${i}`;
    const base = { id, type: "function_call", call_id: c.id ?? `call_${i}`, name: c.name };
    events.push(ev({
      type: "response.output_item.added",
      output_index: oi,
      item: { ...base, status: "in_progress", arguments: "" },
    }));
    for (const p of splitN(argText(c), pieces)) {
      events.push(
        ev({ type: "response.function_call_arguments.delta", item_id: id, output_index: oi, delta: p }),
      );
    }
    events.push(ev({
      type: "response.function_call_arguments.done",
      item_id: id,
      output_index: oi,
      arguments: argText(c),
    }));
    const item = { ...base, status: "completed", arguments: argText(c) };
    events.push(ev({ type: "response.output_item.done", output_index: oi, item }));
    output.push(item);
    oi++;
  });
  events.push(ev({ type: "response.completed", response: { ...responsesBody(null), output } }));
  return events;
}

/** OpenAI-shaped tool declarations for tests: `get_weather(city: string, units?: "c"|"f")` and `search(query)`. */
export const TOOLS_OPENAI: Record<string, unknown>[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: {
        type: "object",
        properties: { city: { type: "string" }, units: { type: "string", enum: ["c", "f"] } },
        required: ["city"],
        additionalProperties: false,
      },
    },
  },
  {
    type: "function",
    function: {
      name: "search",
      description: "Search notes",
      parameters: {
        type: "object",
        properties: { query: { type: "string", minLength: 1 } },
        required: ["query"],
        additionalProperties: false,
      },
    },
  },
];

/** The same tools in Anthropic's shape. */
export const TOOLS_ANTHROPIC: Record<string, unknown>[] = TOOLS_OPENAI.map((t) => {
  const f = t.function as Record<string, unknown>;
  return { name: f.name, description: f.description, input_schema: f.parameters };
});

/** The same tools in the OpenAI Responses shape. */
export const TOOLS_RESPONSES: Record<string, unknown>[] = TOOLS_OPENAI.map((t) => ({
  type: "function",
  ...(t.function as Record<string, unknown>),
}));
