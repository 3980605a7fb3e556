/**
 * `guardFetch`: a `fetch` wrapper that gates model responses, whole or streamed, before the client sees
 * them.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import type { Verdict } from "../types.ts";
import { callForValidation } from "./assemble.ts";
import type { AssembledToolCall, StreamDialect, StreamFinding } from "./calls.ts";
import {
  ALLOWED_NONE,
  type CompletionDialect,
  detectDialect,
  dropsCalls,
  type GateOptions,
  type GateResult,
  gateWith,
  type Judge,
  makeJudge,
} from "./gate.ts";
import { followUp, type RejectedTurn, type TurnCall } from "./retry.ts";
import { sumUsage, type Usage, usageIn, withUsage } from "./usage.ts";
import { StreamGate, type StreamRetry } from "./stream.ts";
import { loadEngines } from "./engines.ts";
import type { ResumePoint } from "./dialects/shared.ts";

/** A `fetch`-compatible function. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What {@linkcode guardFetch} reports for every response it judged. */
export interface GateEvent {
  /** The request URL. */
  url: string;
  /** The API the request was for. */
  dialect: CompletionDialect;
  /** True when the response was streamed. */
  streamed: boolean;
  /** The judgement (empty and allowed when the response carried no call). */
  verdict: Verdict;
  /** True when the body the client saw was rewritten (calls replaced by the reason). */
  changed: boolean;
  /** The text that replaced the calls, when `changed`. */
  reason?: string;
  /** For streams, problems with individual events (malformed ones were dropped). */
  findings: StreamFinding[];
  /** For streams, the calls as assembled. */
  calls?: AssembledToolCall[];
  /** Which answer to the request this is: 0 for the first, n for the n-th retry (see `retry`). */
  attempt: number;
  /** True when the calls were rejected and toolguard asked the model again (the next event is the retry). */
  retried?: boolean;
  /**
   * This attempt's token usage, as the provider reported it (its `usage`, `usageMetadata` or Ollama's
   * counts), when it reported any. After a retry the client's answer reports every attempt's usage added
   * up (each attempt is billed); this is the one attempt's.
   */
  usage?: Record<string, unknown>;
}

/** Options for {@linkcode guardFetch}. */
export interface GuardFetchOptions extends GateOptions {
  /** Gate streamed responses too (withholding tool-call events until they validate). Default true. */
  stream?: boolean;
  /**
   * Transparent retry: when a turn's calls are rejected, send the same request again, with the rejected
   * turn and one tool result per call carrying the feedback (`describeVerdict`) appended in the provider's
   * own shape, up to this many times, and hand the client the first answer that passes (else today's clean
   * stop). In a stream, text already forwarded stays and the retry's events follow in the same message
   * (indices, ids and `sequence_number`s continuing what the client has). The follow-up carries what the
   * rejected attempt said: its text and reasoning (Anthropic `thinking` blocks with their `signature`,
   * Gemini parts with their `thoughtSignature`, Responses `reasoning` items, Ollama `thinking`), which
   * providers with extended thinking require. The usage the client sees is every attempt's added up (each
   * is billed); each attempt's own is in its `onVerdict` event. Every attempt is reported to `onVerdict`.
   * Default 0 (off).
   */
  retry?: number;
  /**
   * Called for each response that carried calls (for streams, also one with malformed events). Errors it
   * throws are swallowed.
   */
  onVerdict?: (event: GateEvent) => void;
}

/** Which API a request path belongs to. */
function routeDialect(url: string): CompletionDialect | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split("?")[0];
  }
  path = path.replace(/\/+$/, "");
  if (/:(stream)?generatecontent$/i.test(path)) return "gemini";
  if (path.endsWith("/v2/chat")) return "cohere";
  if (path.endsWith("/chat/completions")) return "openai_chat";
  if (path.endsWith("/responses")) return "openai_responses";
  if (path.endsWith("/messages")) return "anthropic";
  if (path.endsWith("/api/chat")) return "ollama";
  return undefined;
}

async function requestBody(input: string | URL | Request, init?: RequestInit): Promise<string | undefined> {
  const body = init?.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(body));
  if (body === undefined && input instanceof Request && !input.bodyUsed && input.body !== null) {
    return await input.clone().text();
  }
  return undefined;
}

/** The request body as a JSON object, or undefined when it is none. */
async function requestJson(input: string | URL | Request, init?: RequestInit): Promise<unknown> {
  const text = await requestBody(input, init);
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What gating one response needs to know about its request. */
interface Exchange {
  url: string;
  dialect: CompletionDialect;
  judge: Judge;
  options: GuardFetchOptions;
  report: (event: GateEvent) => void;
  /** The request body sent (the follow-up of a retry appends to it). */
  request: Record<string, unknown>;
  /** Which answer this is: 0 for the first. */
  attempt: number;
  /** Sends a follow-up request body to the same endpoint. */
  send: (body: Record<string, unknown>) => Promise<Response>;
}

/** The same request with another JSON body. */
function resend(
  fetchFn: FetchLike,
  input: string | URL | Request,
  init: RequestInit | undefined,
): (body: Record<string, unknown>) => Promise<Response> {
  return (body) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.delete("content-length");
    const text = JSON.stringify(body);
    if (input instanceof Request) {
      const method = init?.method ?? input.method;
      return fetchFn(input.url, {
        ...init,
        method,
        headers,
        body: text,
        signal: init?.signal ?? input.signal,
      });
    }
    return fetchFn(input, { ...init, headers, body: text });
  };
}

/** True when another attempt may be made after `exchange`'s answer. */
const mayRetry = (exchange: Exchange) =>
  exchange.attempt < Math.max(0, Math.floor(exchange.options.retry ?? 0));

/** The follow-up request after a rejected turn. */
function followUpOf(exchange: Exchange, turn: RejectedTurn): Record<string, unknown> {
  return followUp(exchange.dialect, exchange.request, turn, exchange.judge.tools);
}

/** The calls of a verdict as a follow-up repeats them. */
function verdictCalls(verdict: Verdict): TurnCall[] {
  return verdict.calls.map((c) => ({
    id: c.id ?? `call_${c.index}`,
    name: c.name,
    arguments: c.rawArguments ?? JSON.stringify(c.arguments ?? {}),
  }));
}

/**
 * Wraps `fetch` so model responses are gated before the client sees them. Pass the result as the `fetch`
 * option of the official clients (`new OpenAI({ fetch })`, `new Anthropic({ fetch })`, `new Ollama({ fetch })`)
 * or call it directly.
 *
 * Requests to `…/chat/completions` (OpenAI and every OpenAI-compatible server: Ollama, llama.cpp, LM Studio,
 * vLLM), `…/responses`, `…/messages` (Anthropic), `…/api/chat` (Ollama), `…:generateContent` and
 * `…:streamGenerateContent` (Gemini, with or without `alt=sse`) and `…/v2/chat` (Cohere) are judged against
 * the tools in the request body; everything else passes through untouched. A JSON response whose calls are all allowed is
 * returned as it came (same body, headers and status); one with a rejected call gets the rewritten body of
 * `gateCompletion` (with `content-length` fixed and an `x-toolguard-blocked` header). A streamed
 * response (SSE or NDJSON) passes its text through as it arrives and withholds the tool-call events until
 * the stream ends and the assembled calls validate; rejected calls are replaced by a text event carrying the
 * reason and a normal stop. In OpenAI Chat and Ollama streams, text from a call marker on (`<tool_call>`,
 * `<|python_tag|>`, `[TOOL_CALLS]`, a JSON fence) is held the same way and judged at the end; prose before
 * it flows at once; a message that opens with JSON is held only in a request that declares tools, and only
 * until its first key shows it is not a call. Malformed stream events are dropped (a client would throw on
 * them) and reported. Error responses are never touched.
 *
 * The request's tools are compiled before it is sent, so a schema that cannot be enforced makes the call
 * fail at once with an error naming the tool and keyword.
 *
 * @param fetchFn The `fetch` to wrap. Default `globalThis.fetch`.
 * @param options Tools, validator options, a verdict hook, and whether to gate streams.
 * @returns A `fetch` with the same signature.
 *
 * @example Remove a call to a tool the request never declared
 * ```ts
 * import { guardFetch } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * // A stand-in for the network: an Ollama /api/chat answer calling an undeclared tool.
 * const server = (() =>
 *   Promise.resolve(Response.json({
 *     model: "qwen3:4b",
 *     created_at: "2025-01-01T00:00:00Z",
 *     done: true,
 *     done_reason: "stop",
 *     message: { role: "assistant", content: "", tool_calls: [{ function: { name: "rm_rf", arguments: {} } }] },
 *   }))) as typeof fetch;
 * const guarded = guardFetch(server);
 * const res = await guarded("http://127.0.0.1:11434/api/chat", {
 *   method: "POST",
 *   body: JSON.stringify({ model: "qwen3:4b", messages: [], stream: false, tools: [] }),
 * });
 * const body = await res.json();
 * assert.equal(body.message.tool_calls, undefined);
 * assert.match(body.message.content, /rm_rf/);
 * assert.equal(res.headers.get("x-toolguard-blocked"), "1");
 * ```
 *
 * @example Withhold a rejected call from a stream while its text flows
 * ```ts
 * import { type GateEvent, guardFetch } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * // A recorded OpenAI Chat stream: some text, then a call to a tool the request does not declare.
 * const chunk = (delta: unknown, finish_reason: string | null = null) =>
 *   `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
 * const wire = chunk({ role: "assistant", content: "Cleaning up." }) +
 *   chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "rm_rf", arguments: "{}" } }] }) +
 *   chunk({}, "tool_calls") + "data: [DONE]\n\n";
 * const server = (() =>
 *   Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } }))) as typeof fetch;
 * const seen: GateEvent[] = [];
 * const guarded = guardFetch(server, { onVerdict: (event) => seen.push(event) });
 * const res = await guarded("https://api.openai.com/v1/chat/completions", {
 *   method: "POST",
 *   body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [], tools: [] }),
 * });
 * const text = await res.text();
 * assert.match(text, /Cleaning up\./);
 * assert.doesNotMatch(text, /tool_calls/);
 * assert.match(text, /"finish_reason":"stop"/);
 * assert.ok(text.endsWith("data: [DONE]\n\n"));
 * assert.equal(seen[0].changed, true);
 * assert.deepEqual(seen[0].calls?.map((c) => c.name), ["rm_rf"]);
 * ```
 *
 * @example Ask the model again with the feedback, so the client only sees the corrected call
 * ```ts
 * import { guardFetch } from "@toolguard/toolguard/gate";
 * import assert from "node:assert/strict";
 *
 * // A stand-in for a local model: first a call with a bad argument, then (given the feedback) a good one.
 * const answers = [{ city: 7 }, { city: "Oslo" }];
 * const sent: { messages: { role: string }[] }[] = [];
 * const server = ((_url: string, init?: RequestInit) => {
 *   sent.push(JSON.parse(String(init?.body)));
 *   const args = answers[sent.length - 1];
 *   return Promise.resolve(Response.json({
 *     model: "qwen3:4b", created_at: "2025-01-01T00:00:00Z", done: true, done_reason: "stop",
 *     message: { role: "assistant", content: "", tool_calls: [{ function: { name: "weather", arguments: args } }] },
 *   }));
 * }) as typeof fetch;
 * const tools = [{
 *   type: "function",
 *   function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
 * }];
 * const guarded = guardFetch(server, { retry: 1 });
 * const res = await guarded("http://127.0.0.1:11434/api/chat", {
 *   method: "POST",
 *   body: JSON.stringify({ model: "qwen3:4b", stream: false, tools, messages: [{ role: "user", content: "Oslo?" }] }),
 * });
 * const body = await res.json();
 * assert.deepEqual(body.message.tool_calls[0].function.arguments, { city: "Oslo" });
 * assert.deepEqual(sent[1].messages.map((m) => m.role), ["user", "assistant", "tool"]);
 * ```
 */
export function guardFetch(
  fetchFn: FetchLike = globalThis.fetch,
  options: GuardFetchOptions = {},
): FetchLike {
  if (typeof fetchFn !== "function") {
    throw new TypeError("guardFetch: pass the fetch function to wrap, e.g. guardFetch(fetch)");
  }
  const report = (event: GateEvent) => {
    try {
      options.onVerdict?.(event);
    } catch {
      // a hook must not break the client
    }
  };
  return async function guardedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const dialect = method === "POST" ? routeDialect(url) : undefined;
    if (!dialect) return fetchFn(input, init);
    const request = await requestJson(input, init);
    if (!isRecord(request)) return fetchFn(input, init);
    // Compile before sending: a schema that cannot be enforced fails loudly, not halfway through a stream.
    await loadEngines();
    const judge = makeJudge(request, dialect, options);
    const response = await fetchFn(input, init);
    if (!response.ok || response.body === null) return response;
    const type = (response.headers.get("content-type") ?? "").toLowerCase();
    const send = resend(fetchFn, input, init);
    const exchange: Exchange = { url, dialect, judge, options, report, request, attempt: 0, send };
    if (type.includes("text/event-stream") || type.includes("ndjson")) {
      if (options.stream === false) return response;
      return gateStreamed(response, type.includes("ndjson") ? "ollama" : dialect, exchange);
    }
    if (!type.includes("json")) return response;
    return await gateJson(response, exchange);
  };
}

/** Sends the follow-up of a rejected streamed turn; its gated stream, or undefined (the clean stop). */
async function retryStream(
  exchange: Exchange,
  dialect: StreamDialect,
  turn: StreamRetry,
): Promise<ReadableStream<Uint8Array> | undefined> {
  if (dropsCalls(turn.verdict, exchange.options)) return undefined; // the valid calls went through
  const calls = turn.calls.map((c) => ({
    id: c.id,
    name: c.name,
    arguments: c.arguments,
    freeText: c.freeText,
  }));
  const rejected: RejectedTurn = { calls, verdict: turn.verdict, body: turn.body };
  if (turn.fromText) rejected.fromText = true;
  const request = followUpOf(exchange, rejected);
  const response = await exchange.send(request);
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  if (!response.ok || response.body === null || !(type.includes("event-stream") || type.includes("ndjson"))) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  const next: Exchange = { ...exchange, request, attempt: exchange.attempt + 1 };
  return gateStreamed(response, dialect, next, turn.resume).body ?? undefined;
}

/** A streamed response passed through a {@linkcode StreamGate}. */
function gateStreamed(
  response: Response,
  dialect: StreamDialect,
  exchange: Exchange,
  resume?: ResumePoint,
): Response {
  const { judge, report, url } = exchange;
  const gate = new StreamGate(dialect, {
    extract: exchange.options.extract,
    toolsDeclared: judge.tools === undefined || judge.tools.length > 0,
    tools: judge.tools,
    judge: async (calls) => {
      const verdict = await judge.judge(calls.map(callForValidation));
      const partial = dropsCalls(verdict, exchange.options);
      return {
        verdict,
        reason: judge.reason(verdict),
        partialReason: partial ? judge.reason(verdict, { partial }) : undefined,
      };
    },
    onReport: (r) =>
      (r.calls.length > 0 || r.findings.length > 0) && report({
        url,
        dialect: r.dialect,
        streamed: true,
        verdict: r.verdict ?? ALLOWED_NONE,
        changed: r.replaced,
        findings: r.findings,
        calls: r.calls,
        attempt: exchange.attempt,
        ...(r.retried ? { retried: true } : {}),
        ...(r.usage ? { usage: r.usage } : {}),
      }),
    resume,
    retry: mayRetry(exchange) ? (turn) => retryStream(exchange, dialect, turn) : undefined,
  });
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return withUrl(
    new Response(gate.gate(response.body!), {
      status: response.status,
      statusText: response.statusText,
      headers,
    }),
    response.url,
  );
}

/**
 * A JSON response: the response itself when nothing was rejected, else (with `retry`) the first retry's
 * answer that passes, else one with the rewritten body. After a retry, the answer reports every attempt's
 * usage added up.
 */
async function gateJson(response: Response, exchange: Exchange): Promise<Response> {
  let before: Usage | undefined;
  for (let current = exchange;;) {
    const { out, rejected, usage } = await gateJsonOnce(response, current);
    if (!rejected || !mayRetry(current)) {
      return before ? await withUsageAdded(out, exchange.dialect, before) : out;
    }
    const request = followUpOf(current, rejected);
    const next = await current.send(request);
    const type = (next.headers.get("content-type") ?? "").toLowerCase();
    if (!next.ok || next.body === null || !type.includes("json")) {
      await next.body?.cancel().catch(() => {});
      return before ? await withUsageAdded(out, exchange.dialect, before) : out; // the retry failed: the clean stop
    }
    if (usage) before = sumUsage(before, usage);
    current = { ...current, request, attempt: current.attempt + 1 };
    response = next;
  }
}

/**
 * A JSON answer whose usage reports `before` (the earlier attempts') added to its own; the answer itself
 * when it reports none.
 */
async function withUsageAdded(response: Response, dialect: StreamDialect, before: Usage): Promise<Response> {
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    return response;
  }
  const add = (record: unknown) => {
    if (!isRecord(record)) return record;
    const shape = detectDialect(record) ?? dialect;
    const own = usageIn(shape, record);
    return own ? withUsage(shape, record, sumUsage(before, own)) : record;
  };
  const added = Array.isArray(body) ? body.map(add) : add(body);
  if (added === body || (Array.isArray(body) && body.every((x, i) => x === (added as unknown[])[i]))) {
    return response;
  }
  response.body?.cancel().catch(() => {});
  return rebuilt(response, added);
}

/** Gates one JSON answer; says what was rejected (for a retry) along with the response to forward. */
async function gateJsonOnce(
  response: Response,
  exchange: Exchange,
): Promise<{ out: Response; rejected?: RejectedTurn; usage?: Usage }> {
  const out = await gateJsonBody(response, exchange);
  const usage = out.event?.usage;
  // With drop-call, the valid calls of the turn went through: the turn is not asked again.
  if (!out.result || out.result.verdict.allowed || dropsCalls(out.result.verdict, exchange.options)) {
    if (out.event && out.result && !out.result.verdict.allowed) exchange.report(out.event);
    return { out: out.response, usage };
  }
  const turn: RejectedTurn = {
    calls: verdictCalls(out.result.verdict),
    verdict: out.result.verdict,
    body: out.body,
  };
  if (out.result.source === "text") turn.fromText = true;
  if (mayRetry(exchange)) {
    exchange.report({ ...out.event!, retried: true });
  } else if (out.event) exchange.report(out.event);
  return { out: out.response, rejected: turn, usage };
}

/** Gates one JSON answer: the response to forward, the gate's result and the event to report. */
async function gateJsonBody(response: Response, exchange: Exchange): Promise<{
  response: Response;
  result?: GateResult;
  body?: Record<string, unknown>;
  event?: GateEvent;
}> {
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    return { response }; // not JSON after all: the client deals with it as it would have
  }
  // Gemini's streamGenerateContent without alt=sse answers a JSON array of chunks: judged as one body.
  const chunks = Array.isArray(body) && exchange.dialect === "gemini" ? body.filter(isRecord) : undefined;
  if (chunks) body = mergeGeminiChunks(chunks);
  const shape = detectDialect(body) ? detectDialect(body)! : exchange.dialect;
  const result = isRecord(body) ? await gateWith(exchange.judge, body, shape, exchange.options) : undefined;
  if (!result || !isRecord(body)) return { response };
  if (chunks && result.changed) result.response = [result.response];
  const event: GateEvent | undefined = result.verdict.calls.length > 0 || result.changed
    ? {
      url: exchange.url,
      dialect: shape,
      streamed: false,
      verdict: result.verdict,
      changed: result.changed,
      reason: result.reason,
      findings: [],
      attempt: exchange.attempt,
    }
    : undefined;
  const usage = usageIn(shape, body);
  if (event && usage) event.usage = usage;
  if (!result.changed) {
    if (event) exchange.report(event);
    return { response, result, body };
  }
  // The original body was read through a clone; release it.
  response.body!.cancel().catch(() => {});
  const out = rebuilt(response, result.response);
  out.headers.set("x-toolguard-blocked", String(result.verdict.rejectedIndices.length));
  return { response: out, result, body, event };
}

/** A response like `response` (status, headers, url) with the JSON `body`. */
function rebuilt(response: Response, body: unknown): Response {
  const out = new TextEncoder().encode(JSON.stringify(body));
  const headers = new Headers(response.headers);
  headers.set("content-length", String(out.byteLength));
  headers.delete("content-encoding"); // fetch already decoded the body; this copy is plain
  return withUrl(
    new Response(out, { status: response.status, statusText: response.statusText, headers }),
    response.url,
  );
}

/**
 * Gemini stream chunks as one body: every candidate's parts in order, the last chunk's other fields (usage,
 * finish, model version).
 */
function mergeGeminiChunks(chunks: Record<string, unknown>[]): Record<string, unknown> {
  const byIndex = new Map<number, Record<string, unknown>>();
  for (const chunk of chunks) {
    for (const c of Array.isArray(chunk.candidates) ? chunk.candidates : []) {
      if (!isRecord(c)) continue;
      const index = typeof c.index === "number" ? c.index : 0;
      const content = isRecord(c.content) ? c.content : {};
      const parts = Array.isArray(content.parts) ? content.parts : [];
      const seen = byIndex.get(index);
      const before = seen && isRecord(seen.content) && Array.isArray(seen.content.parts)
        ? seen.content.parts
        : [];
      byIndex.set(index, { ...seen, ...c, content: { ...content, parts: [...before, ...parts] } });
    }
  }
  return { ...chunks[chunks.length - 1], candidates: [...byIndex.values()] };
}

/** Keeps `response.url` on a rebuilt response (clients use it in error messages). */
function withUrl(response: Response, url: string): Response {
  if (url) {
    try {
      Object.defineProperty(response, "url", { value: url });
    } catch {
      // read-only on some runtimes; the body is what matters
    }
  }
  return response;
}
