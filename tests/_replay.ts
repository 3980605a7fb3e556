/**
 * Replays recorded provider traffic (see `_traffic.ts`) from a server on 127.0.0.1 through the official
 * clients (`openai`, `@anthropic-ai/sdk`; plain `fetch` for Gemini and Cohere, which have no client
 * installed here), with and without `guardFetch`, and records what each client ended up with: the bytes it
 * read, the SDK events, the final object. Shared by `gate_replay_test.ts` and `bench/gate_replay.ts`.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { type GateEvent, guardFetch, type GuardFetchOptions } from "../gate.ts";
import { type FakeReply, type FakeServer, startFakeLlmServer } from "./_fake_llm_server.ts";
import {
  bodyOf,
  recordedCalls,
  recordedTools,
  streamWire,
  synthTools,
  type TrafficEntry,
  wireEvents,
} from "./_traffic.ts";

/** What a client ended up with after one replay. */
export interface Outcome {
  /** The exact bytes the client read. */
  bytes: string;
  /** The SDK's events (parsed chunks), as JSON values. */
  events: unknown[];
  /** The SDK's final object (assembled message, response), or the error it threw. */
  final: unknown;
  /** What the gate reported. */
  verdicts: GateEvent[];
  /** Milliseconds from the request to the first text (or reasoning) delta the SDK emitted; -1: none. */
  firstText: number;
  /** Milliseconds from the request to the end of the stream. */
  total: number;
}

/** One replay: the recording, the tools the request declares, and whether the gate runs. */
export interface ReplayCase {
  entry: TrafficEntry;
  tools: unknown[] | undefined;
  guard: boolean | GuardFetchOptions;
  /** Pause between frames, in milliseconds. */
  delayMs?: number;
  /** Replace the recorded frames (e.g. a synthetic 300-delta stream). */
  frames?: string[];
}

const PATHS = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  anthropic: "/v1/messages",
  gemini: "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
  cohere: "/v2/chat",
} as const;

/** The request body a replay sends (what the client would send, with the declared tools). */
function requestBody(entry: TrafficEntry, tools: unknown[] | undefined): Record<string, unknown> {
  const t = tools === undefined ? {} : { tools };
  switch (entry.dialect) {
    case "responses":
      return { model: "m", input: "hi", ...t };
    case "anthropic":
      return { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }], ...t };
    case "gemini":
      return { contents: [{ role: "user", parts: [{ text: "hi" }] }], ...t };
    default:
      return { model: "m", messages: [{ role: "user", content: "hi" }], ...t };
  }
}

/** A server on 127.0.0.1 that answers every request with `reply`. */
async function serve<T>(reply: FakeReply, use: (server: FakeServer) => Promise<T>): Promise<T> {
  const server = await startFakeLlmServer([reply]);
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}

/** A fetch that keeps the bytes the client reads. */
function tapping(inner: typeof fetch, sink: { bytes: string }): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const res = await inner(input, init);
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    (async () => {
      const dec = new TextDecoder();
      const reader = mine.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        sink.bytes += dec.decode(value, { stream: true });
      }
    })().catch(() => {});
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  }) as typeof fetch;
}

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null));

/** True when an SDK event carries text or reasoning. */
function isTextEvent(e: Record<string, unknown>): boolean {
  const type = String(e.type ?? "");
  if (/output_text\.delta|reasoning.*\.delta|text_delta|thinking_delta/.test(type)) return true;
  const d = (e.delta ?? {}) as Record<string, unknown>;
  if (d.type === "text_delta" || d.type === "thinking_delta") return true;
  const c = (e.choices as Record<string, unknown>[] | undefined)?.[0]?.delta as Record<string, unknown>;
  return !!c && ["content", "reasoning_content", "reasoning", "refusal"].some((k) => !!c[k]);
}

/** Replays one recorded stream and returns what the client ended up with. */
export async function replayStream(c: ReplayCase): Promise<Outcome> {
  const wire = streamWire(c.entry);
  const frames = c.frames ?? wire.frames;
  const reply: FakeReply = { sse: frames, delayMs: c.delayMs };
  return await serve(reply, async (server) => {
    const verdicts: GateEvent[] = [];
    const sink = { bytes: "" };
    const options = typeof c.guard === "object" ? c.guard : {};
    const inner = c.guard ? guardFetch(fetch, { ...options, onVerdict: (v) => verdicts.push(v) }) : fetch;
    const f = tapping(inner, sink);
    const events: unknown[] = [];
    let firstText = -1;
    const started = performance.now();
    const seen = (e: unknown) => {
      events.push(plain(e));
      if (firstText < 0 && isTextEvent(e as Record<string, unknown>)) firstText = performance.now() - started;
    };
    const body = requestBody(c.entry, c.tools);
    let final: unknown;
    try {
      final = await clientStream(c.entry, server.url, f, body, seen);
    } catch (e) {
      final = { error: e instanceof Error ? e.message : String(e) };
    }
    const total = performance.now() - started;
    await new Promise((r) => setTimeout(r, 5)); // let the tap finish
    return { bytes: sink.bytes, events, final: plain(final), verdicts, firstText, total };
  });
}

/** Runs the official client's streaming call; returns its final object. */
async function clientStream(
  entry: TrafficEntry,
  url: string,
  f: typeof fetch,
  body: Record<string, unknown>,
  seen: (e: unknown) => void,
): Promise<unknown> {
  if (entry.dialect === "chat" || entry.dialect === "responses") {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    if (entry.dialect === "chat") {
      const stream = client.chat.completions.stream({ ...body, stream: true } as never);
      for await (const e of stream) seen(e);
      return await stream.finalChatCompletion();
    }
    const stream = client.responses.stream({ ...body, stream: true } as never);
    for await (const e of stream) seen(e);
    return await stream.finalResponse();
  }
  if (entry.dialect === "anthropic") {
    const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: url, fetch: f, maxRetries: 0 });
    const stream = client.messages.stream(body as never);
    for await (const e of stream) seen(e);
    return await stream.finalMessage();
  }
  const res = await f(url + PATHS[entry.dialect], {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await res.text();
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    try {
      seen(JSON.parse(line.slice(5)));
    } catch {
      // [DONE]
    }
  }
  return null;
}

/** Replays one recorded body; returns the object the client parsed. */
export async function replayBody(c: ReplayCase): Promise<Outcome> {
  const { body: json } = bodyOf(c.entry);
  return await serve({ json }, async (server) => {
    const verdicts: GateEvent[] = [];
    const sink = { bytes: "" };
    const options = typeof c.guard === "object" ? c.guard : {};
    const inner = c.guard ? guardFetch(fetch, { ...options, onVerdict: (v) => verdicts.push(v) }) : fetch;
    const f = tapping(inner, sink);
    const body = requestBody(c.entry, c.tools);
    const started = performance.now();
    let final: unknown;
    try {
      final = await clientBody(c.entry, server.url, f, body);
    } catch (e) {
      final = { error: e instanceof Error ? e.message : String(e) };
    }
    const total = performance.now() - started;
    await new Promise((r) => setTimeout(r, 5));
    return { bytes: sink.bytes, events: [], final: plain(final), verdicts, firstText: -1, total };
  });
}

async function clientBody(
  entry: TrafficEntry,
  url: string,
  f: typeof fetch,
  body: Record<string, unknown>,
): Promise<unknown> {
  if (entry.dialect === "chat") {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    return await client.chat.completions.create(body as never);
  }
  if (entry.dialect === "responses") {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    return await client.responses.create(body as never);
  }
  if (entry.dialect === "anthropic") {
    const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: url, fetch: f, maxRetries: 0 });
    return await client.messages.create(body as never);
  }
  const path = entry.dialect === "gemini" ? "/v1beta/models/gemini-test:generateContent" : PATHS.cohere;
  const res = await f(url + path, { method: "POST", body: JSON.stringify(body) });
  return await res.json();
}

/** The tools a replay declares so every recorded call is allowed, and the recorded calls. */
export function allowedTools(entry: TrafficEntry, stream: boolean): {
  tools: unknown[];
  calls: { name: string; arguments: string }[];
} {
  if (stream) {
    const events = wireEvents(streamWire(entry));
    const calls = recordedCalls(events);
    return { tools: recordedTools(entry, events) ?? synthTools(entry, calls), calls };
  }
  const { body, request } = bodyOf(entry);
  const calls = bodyCalls(entry, body);
  const tools = recordedTools(entry, [], body, request) ?? synthTools(entry, calls);
  // A Responses recording does not echo the built-in tools the request declared (`local_shell`).
  for (const c of calls) {
    if (BUILTINS.has(c.name) && !tools.some((t) => (t as { type?: string }).type === c.name)) {
      tools.push({ type: c.name });
    }
  }
  return { tools, calls };
}

/** OpenAI's client-run built-in tools, declared by `type` alone. */
const BUILTINS = new Set(["local_shell", "shell", "apply_patch"]);

/** The client calls in a recorded body, by name. */
export function bodyCalls(
  entry: TrafficEntry,
  body: Record<string, unknown>,
): { name: string; arguments: string }[] {
  const out: { name: string; arguments: string }[] = [];
  const push = (name: unknown, args: unknown) =>
    out.push({ name: String(name ?? ""), arguments: typeof args === "string" ? args : JSON.stringify(args) });
  if (entry.dialect === "chat") {
    for (const c of (body.choices as Record<string, Record<string, unknown>>[]) ?? []) {
      for (const t of (c.message?.tool_calls as Record<string, Record<string, unknown>>[]) ?? []) {
        push(t.function?.name, t.function?.arguments);
      }
    }
  } else if (entry.dialect === "responses") {
    for (const o of (body.output as Record<string, unknown>[]) ?? []) {
      const type = String(o.type);
      if (type === "function_call" || type === "custom_tool_call") push(o.name, o.arguments ?? o.input);
      else if (BUILTINS.has(type.replace(/_call$/, ""))) {
        push(type.replace(/_call$/, ""), o.action ?? o.operation);
      }
    }
  } else if (entry.dialect === "anthropic") {
    for (const b of (body.content as Record<string, unknown>[]) ?? []) {
      if (b.type === "tool_use") push(b.name, b.input);
    }
  } else if (entry.dialect === "gemini") {
    for (const cand of (body.candidates as Record<string, Record<string, unknown>>[]) ?? []) {
      for (const p of (cand.content?.parts as Record<string, Record<string, unknown>>[]) ?? []) {
        if (p.functionCall) push(p.functionCall.name, p.functionCall.args);
      }
    }
  } else {
    const m = (body.message ?? {}) as Record<string, unknown>;
    for (const t of (m.tool_calls as Record<string, Record<string, unknown>>[]) ?? []) {
      push(t.function?.name, t.function?.arguments);
    }
  }
  return out;
}

/**
 * The same declarations under other names (`_declared` appended), so every call is to an undeclared tool;
 * built-ins declared by `type` alone are left out.
 */
export function renamed(tools: unknown[]): unknown[] {
  const rename = (t: unknown): unknown => {
    if (!t || typeof t !== "object") return t;
    const r = { ...(t as Record<string, unknown>) };
    if (typeof r.name === "string") r.name = `${r.name}_declared`;
    if (r.function && typeof r.function === "object") r.function = rename(r.function);
    if (Array.isArray(r.tools)) r.tools = r.tools.map(rename);
    if (Array.isArray(r.functionDeclarations)) r.functionDeclarations = r.functionDeclarations.map(rename);
    return r;
  };
  return tools.filter((t) => !BUILTINS.has(String((t as { type?: unknown })?.type))).map(rename);
}

/** What a final object shows: its text, its reasoning, its usage, and its client calls. */
export interface Summary {
  text: string[];
  reasoning: string[];
  usage: unknown;
  calls: string[];
}

/** Reads a final object of `entry`'s dialect (from the SDK) into a {@linkcode Summary}. */
export function summarise(entry: TrafficEntry, final: unknown, events: unknown[]): Summary {
  const f = (final ?? {}) as Record<string, unknown>;
  const s: Summary = { text: [], reasoning: [], usage: f.usage ?? null, calls: [] };
  if (entry.dialect === "chat") {
    const m = ((f.choices as Record<string, unknown>[] | undefined)?.[0]?.message ?? {}) as Record<
      string,
      unknown
    >;
    if (typeof m.content === "string") s.text.push(m.content);
    for (const k of ["reasoning_content", "reasoning"]) if (typeof m[k] === "string") s.reasoning.push(m[k]);
    for (const t of (m.tool_calls as Record<string, Record<string, unknown>>[]) ?? []) {
      s.calls.push(String(t.function?.name));
    }
    // Streams: the usage chunk is an event of its own.
    for (const e of events) {
      const u = (e as Record<string, unknown>).usage;
      if (u) s.usage = u;
    }
    const x = events.map((e) => (e as Record<string, Record<string, unknown>>).x_groq?.usage).filter(Boolean);
    if (x.length) s.usage = { ...(s.usage as object ?? {}), x_groq: x[x.length - 1] };
  } else if (entry.dialect === "responses") {
    for (const o of (f.output as Record<string, unknown>[]) ?? []) {
      if (o.type === "message") {
        for (const p of (o.content as Record<string, unknown>[]) ?? []) {
          if (p.type === "output_text") s.text.push(String(p.text));
        }
      } else if (o.type === "reasoning") s.reasoning.push(JSON.stringify(o.summary ?? o.content ?? ""));
      else if (/(^|_)call$/.test(String(o.type)) && o.name !== undefined) s.calls.push(String(o.name));
      else if (/^(local_shell|shell|apply_patch)_call$/.test(String(o.type))) s.calls.push(String(o.type));
    }
  } else if (entry.dialect === "anthropic") {
    for (const b of (f.content as Record<string, unknown>[]) ?? []) {
      if (b.type === "text") s.text.push(String(b.text));
      else if (b.type === "thinking") s.reasoning.push(String(b.thinking));
      else if (b.type === "tool_use") s.calls.push(String(b.name));
    }
  } else if (entry.dialect === "gemini") summariseGemini(final ? [final] : events, s);
  else summariseCohere(final, events, s);
  return s;
}

/** The verdict on one recording. */
export interface Row {
  id: string;
  provider: string;
  kind: "stream" | "body";
  /** Allowed replay: bytes, SDK events and final object identical to the unguarded client's. */
  allowed: { bytes: boolean; events: boolean; final: boolean };
  /** Rejected replay (only recordings with client calls): what the client kept. */
  rejected?: { withheld: boolean; text: boolean; reasoning: boolean; usage: boolean; codes: string[] };
  /** What the gate said on the allowed replay. */
  gate: string;
}

/** True when the rejected summary keeps the unguarded one's text (the reason may follow), reasoning, usage. */
export function keeps(plain: Summary, gated: Summary): { text: boolean; reasoning: boolean; usage: boolean } {
  const joined = gated.text.join("\n\n");
  const text = plain.text.every((t) => t.trim() === "" || joined.includes(t.trim()));
  return {
    text,
    reasoning: isDeepStrictEqual(plain.reasoning, gated.reasoning),
    usage: isDeepStrictEqual(plain.usage, gated.usage),
  };
}

function gateSummary(o: Outcome): string {
  if (o.verdicts.length === 0) return "-";
  return o.verdicts.map((v) =>
    v.verdict.allowed ? "allowed" : v.verdict.calls.flatMap((c) => c.findings.map((f) => f.code)).join(",")
  ).join(";");
}

/** Replays one recording both ways (and the rejected variant when it carries calls). */
export async function judgeEntry(entry: TrafficEntry, kind: "stream" | "body"): Promise<Row> {
  const run = kind === "stream" ? replayStream : replayBody;
  const { tools, calls } = allowedTools(entry, kind === "stream");
  const plain = await run({ entry, tools, guard: false });
  const guarded = await run({ entry, tools, guard: true });
  const row: Row = {
    id: entry.id,
    provider: entry.provider,
    kind,
    allowed: {
      bytes: plain.bytes === guarded.bytes,
      events: isDeepStrictEqual(plain.events, guarded.events),
      final: isDeepStrictEqual(plain.final, guarded.final),
    },
    gate: gateSummary(guarded),
  };
  const before = summarise(entry, plain.final, plain.events);
  if (calls.length > 0 || before.calls.length > 0) {
    const rejected = await run({ entry, tools: renamed(tools), guard: true });
    const after = summarise(entry, rejected.final, rejected.events);
    row.rejected = {
      withheld: after.calls.length === 0,
      ...keeps(before, after),
      codes: rejected.verdicts.flatMap((v) => v.verdict.calls.flatMap((c) => c.findings.map((f) => f.code))),
    };
  }
  return row;
}

type Rec = Record<string, unknown>;

/** Gemini: the text, thought and call parts of every chunk (or the body), the last usage. */
function summariseGemini(chunks: unknown[], s: Summary): void {
  let text = "";
  for (const chunk of chunks as Rec[]) {
    for (const c of (chunk.candidates as Rec[]) ?? []) {
      for (const p of ((c.content as Rec)?.parts as Rec[]) ?? []) {
        if (p.functionCall) s.calls.push(String((p.functionCall as Rec).name));
        else if (p.thought === true) s.reasoning.push(String(p.text));
        else if (typeof p.text === "string") text += p.text;
      }
    }
    if (chunk.usageMetadata) s.usage = chunk.usageMetadata;
  }
  s.text.push(text);
}

/** Cohere: the body's message, or the stream's content and tool-plan deltas, calls and usage. */
function summariseCohere(final: unknown, events: unknown[], s: Summary): void {
  if (final && typeof final === "object") {
    const m = ((final as Rec).message ?? {}) as Rec;
    for (const p of (m.content as Rec[]) ?? []) if (p.type === "text") s.text.push(String(p.text));
    if (typeof m.tool_plan === "string") s.reasoning.push(m.tool_plan);
    for (const t of (m.tool_calls as Rec[]) ?? []) s.calls.push(String((t.function as Rec)?.name));
    return;
  }
  let text = "";
  let plan = "";
  for (const e of events as Rec[]) {
    const m = ((e.delta as Rec)?.message ?? {}) as Rec;
    if (e.type === "content-delta") text += String((m.content as Rec)?.text ?? "");
    else if (e.type === "tool-plan-delta") plan += String(m.tool_plan ?? "");
    else if (e.type === "tool-call-start") {
      s.calls.push(String(((m.tool_calls as Rec)?.function as Rec)?.name));
    } else if (e.type === "message-end") s.usage = (e.delta as Rec)?.usage ?? null;
  }
  s.text.push(text);
  s.reasoning.push(plan);
}
