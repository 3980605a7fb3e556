/**
 * The gating of one request a guarded `fetch` reads: the judge built before sending, the answer gated
 * whole or streamed, and the retries. Loaded by `guardFetch` when the first such request is sent, so that
 * importing the gate loads none of it.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import "../_common/pointer.ts";
import "../_common/measure.ts";
import "../_validate/providers.ts";
import "./calls.ts";
import "./dialects/shared.ts";
import "./sse.ts";
import "./dialects/anthropic.ts";
import "./dialects/cohere.ts";
import "./dialects/gemini.ts";
import "./dialects/ollama.ts";
import "./dialects/openai_chat.ts";
import "./dialects/openai_responses.ts";
import "./dialects/mod.ts";
import "../_common/bytes.ts";

import { isRecord } from "../_common/values.ts";
import { parseJsonSafe } from "../_common/json.ts";
import type { Verdict } from "../types.ts";
import { callForValidation } from "./assemble.ts";
import { candidatesOutOfPlace } from "./dialects/readers.ts";
import type { AssembledToolCall, StreamDialect } from "./calls.ts";
import {
  ALLOWED_NONE,
  type CompletionDialect,
  detectDialect,
  dropsCalls,
  type GateResult,
  gateWith,
  type Judge,
  makeJudge,
} from "./gate.ts";
import { followUp, type RejectedTurn, type TurnCall } from "./retry.ts";
import { sumUsage, type Usage, usageIn, withUsage } from "./usage.ts";
import { type RetryAnswer, StreamGate, type StreamRetry } from "./stream.ts";
import { loadEngines } from "./engines.ts";
import type { ResumePoint } from "./dialects/shared.ts";
import type { FetchLike, GateEvent, GuardFetchOptions } from "./fetch.ts";
import { DEFAULT_MAX_RESPONSE_BYTES, readBounded, tooLargeResponse } from "./bound.ts";

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
  /** The caller's abort signal, when the request has one: a follow-up it aborted is not a failed retry. */
  signal?: AbortSignal | null;
  /** The most bytes of one answer held at a time (`maxResponseBytes`). */
  limit: number;
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

/** What {@linkcode gateRequest} is told about the request besides how to send it. */
export interface GatedRequest {
  url: string;
  dialect: CompletionDialect;
  /** The request body, parsed. */
  request: Record<string, unknown>;
  options: GuardFetchOptions;
  report: (event: GateEvent) => void;
}

/** Sends a request the gate reads and gates its answer (the part of a guarded `fetch` after the routing). */
export async function gateRequest(
  fetchFn: FetchLike,
  input: string | URL | Request,
  init: RequestInit | undefined,
  { url, dialect, request, options, report }: GatedRequest,
): Promise<Response> {
  // Compile before sending: a schema that cannot be enforced fails loudly, not halfway through a stream.
  await loadEngines();
  const judge = makeJudge(request, dialect, options, "text");
  const response = await fetchFn(input, init);
  if (!response.ok || response.body === null) return response;
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  const send = resend(fetchFn, input, init);
  const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  const exchange: Exchange = {
    url,
    dialect,
    judge,
    options,
    report,
    request,
    attempt: 0,
    send,
    limit,
    signal,
  };
  const labelled = type.includes("text/event-stream") || type.includes("ndjson");
  const framing: StreamDialect = type.includes("ndjson") ? "ollama" : dialect;
  // Whatever the content-type says, a client parses the answer as what it asked for (the SDKs for a
  // stream do not look; Ollama's, Google's, Cohere's and the AI SDK's read a whole answer as JSON under
  // any label): a stream as its stream, anything else as JSON. So that is how it is judged.
  const streamed = asksForStream(dialect, request, url);
  if (labelled === streamed) {
    if (!streamed) return await gateJson(response, exchange);
    if (options.stream === false) return response;
    return gateStreamed(response, framing, exchange);
  }
  if (streamed && options.stream === false) return response;
  // An answer whose label and request disagree is read whole (it is already odd) and judged as the client
  // will read it: one JSON document, or the stream it is.
  const bytes = await readWhole(response, limit);
  if (!bytes) return withUrl(tooLargeResponse(dialect, limit), response.url);
  const copy = withBody(response, bytes);
  if (parseJsonSafe(DECODER.decode(bytes)).ok) return await gateJson(copy, exchange);
  return gateStreamed(copy, framing, exchange);
}

/**
 * True when the request asks for a streamed answer: `stream: true` (OpenAI, Anthropic, Cohere), Ollama's
 * default (`stream` not false), Gemini's `:streamGenerateContent?alt=sse`.
 */
function asksForStream(dialect: CompletionDialect, request: Record<string, unknown>, url: string): boolean {
  if (dialect === "ollama") return request.stream !== false;
  if (dialect === "gemini") return url.includes(":streamGenerateContent") && /[?&]alt=sse\b/.test(url);
  return request.stream === true;
}

/**
 * The whole body of `response`, or undefined (the body cancelled) when it passes `limit` bytes: said by its
 * `content-length` (when not encoded: a decoded body may be larger) without reading it, else found reading.
 */
function readWhole(response: Response, limit: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const length = Number(response.headers.get("content-length") ?? NaN);
  if (length > limit && !response.headers.has("content-encoding")) {
    response.body?.cancel().catch(() => {});
    return Promise.resolve(undefined);
  }
  return readBounded(response.body!, limit);
}

/**
 * Sends the follow-up of a rejected streamed turn: its answer, gated once called, or undefined (the clean
 * stop).
 */
async function retryStream(
  exchange: Exchange,
  dialect: StreamDialect,
  turn: StreamRetry,
): Promise<RetryAnswer | undefined> {
  // (a call judged in two versions goes back once, with the tool result of its rejected version: each version
  // went back as a call of its own, one told "another call in the same turn was rejected", under one id)
  const made = madeCalls(turn.verdict, turn.calls);
  if (keepsCalls(made, exchange.options)) return undefined; // the valid calls went through
  const calls = made.calls.map((c) => ({
    id: c.id,
    name: c.name,
    arguments: c.arguments,
    freeText: c.freeText,
  }));
  const rejected: RejectedTurn = { calls, verdict: made.verdict, body: turn.body };
  if (turn.fromText) rejected.fromText = true;
  const request = oneAnswer(followUpOf(exchange, rejected));
  const response = await exchange.send(request);
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  if (!response.ok || response.body === null || !(type.includes("event-stream") || type.includes("ndjson"))) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  const next: Exchange = { ...exchange, request, attempt: exchange.attempt + 1 };
  return {
    stream: (resume) => gateStreamed(response, dialect, next, resume).body!,
    cancel: () => response.body!.cancel().catch(() => {}),
  };
}

/**
 * `request` asking for one answer (OpenAI Chat's `n`, Gemini's `candidateCount` dropped): a stream's retry
 * continues the first answer alone, the client holding the others ended, and a second answer of the retry's
 * ran on in the client's second after its end, another answer glued to it.
 */
function oneAnswer(request: Record<string, unknown>): Record<string, unknown> {
  if (answersAsked(request) === 1) return request;
  const { n: _n, ...out } = request;
  for (const key of ["generationConfig", "generation_config"]) {
    const config = out[key];
    if (!isRecord(config)) continue;
    const { candidateCount: _c, candidate_count: _cc, ...rest } = config;
    out[key] = rest;
  }
  return out;
}

/**
 * How many answers a request asks for: OpenAI Chat's `n`, Gemini's `candidateCount` (`candidate_count`, as
 * the API reads it too), when it is a whole number of at least 1, else 1.
 */
function answersAsked(request: Record<string, unknown>): number {
  const config = [request.generationConfig, request.generation_config].find(isRecord);
  const n = request.n ?? config?.candidateCount ?? config?.candidate_count;
  return typeof n === "number" && Number.isInteger(n) && n >= 1 ? n : 1;
}

/**
 * Whether drop-call keeps the accepted calls of a streamed turn (`made`, see {@linkcode madeCalls}): each
 * has a place (its answer and slot) of its own, no rejected call and no other call there. A client reads
 * one call at a place (the openai SDK merges the calls at an index: the last name and id, the arguments run
 * together), so calls that share one (an OpenAI Chat `index` reused under a new id) cannot be parted: the
 * turn is withheld whole. Kept in part, an accepted call at a rejected one's place went with it, and two
 * accepted calls at one place reached the client as one call whose arguments were no JSON, while the model
 * read "1 of 3 calls was rejected; the other calls were kept"; an answer that lost its only calls that way
 * still ended `tool_calls` with none.
 */
function keepsCalls(
  made: { verdict: Verdict; calls: readonly AssembledToolCall[] },
  options: GuardFetchOptions,
): boolean {
  if (!dropsCalls(made.verdict, options)) return false;
  const placeOf = (c: AssembledToolCall) => `${c.choice} ${c.slot}`;
  const dropped = new Set(made.verdict.rejectedIndices.map((i) => placeOf(made.calls[i])));
  const kept = new Map<string, string>(); // place -> the id of the call kept there (its versions share it)
  return made.verdict.calls.every((c, i) => {
    if (!c.allowed) return true;
    const { id } = made.calls[i], place = placeOf(made.calls[i]);
    if (dropped.has(place) || (kept.get(place) ?? id) !== id) return false;
    kept.set(place, id);
    return true;
  });
}

/**
 * `verdict` on `calls` as the turn made them, with the calls it keeps (a retry sends each back with its
 * tool result): a call whose arguments clients read two ways is judged once per version (see
 * `StreamGate`), each a copy of the call (its answer, slot and id), and goes back once: as its first
 * rejected version where one was rejected (that rejects the call), else as its first. Counted once per
 * version, an accepted version beside a rejected one was a call drop-call would keep (of none) and the
 * reason said did not run, and a call accepted in two versions beside another rejected went back twice, two
 * tool results for one id, the model told "1 of 4 calls" of three. The verdict itself when no call goes.
 */
function madeCalls(
  verdict: Verdict,
  calls: readonly AssembledToolCall[],
): { verdict: Verdict; calls: readonly AssembledToolCall[] } {
  if (verdict.rejectedIndices.length === 0) return { verdict, calls }; // (every judgement asks)
  const callOf = (i: number) => `${calls[i].choice} ${calls[i].slot} ${calls[i].id}`;
  const rejected = new Set(verdict.rejectedIndices.map(callOf));
  const taken = new Set<string>();
  const keep = verdict.calls.flatMap((c, i) => {
    const call = callOf(i);
    if (taken.has(call) || (c.allowed && rejected.has(call))) return [];
    taken.add(call);
    return [i];
  });
  if (keep.length === verdict.calls.length) return { verdict, calls };
  const kept = keep.map((i) => verdict.calls[i]);
  return {
    verdict: { ...verdict, calls: kept, rejectedIndices: kept.flatMap((c, i) => (c.allowed ? [] : [i])) },
    calls: keep.map((i) => calls[i]),
  };
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
    maxBytes: exchange.limit,
    signal: exchange.signal,
    toolsDeclared: judge.tools === undefined || judge.tools.length > 0,
    tools: judge.tools,
    answers: answersAsked(exchange.request),
    judge: async (calls, { dropped }) => {
      const verdict = await judge.judge(calls.map(callForValidation));
      const made = madeCalls(verdict, calls);
      const partial = keepsCalls(made, exchange.options);
      const answers = made.calls.map((c) => c.choice);
      // (the turn's reason after any answer's words of calls dropped; each answer's after its own)
      const reason = judge.reason(made.verdict, { dropped: dropped.size > 0 });
      const partialReason = partial
        ? judge.reason(made.verdict, { partial, dropped: dropped.size > 0 })
        : undefined;
      return {
        verdict,
        reason,
        partialReason,
        told: judge.answerReason(made.verdict, answers, reason, { dropped }),
        partialTold: partialReason === undefined
          ? undefined
          : judge.answerReason(made.verdict, answers, partialReason, { partial, dropped }),
      };
    },
    onReport: (r) => {
      if (r.calls.length === 0 && r.findings.length === 0) return;
      // (a call judged in two versions is reported once, as the model reads of it and a retry sends it back:
      // listed once per version, one call read as two, one accepted and one rejected)
      const made = r.verdict ? madeCalls(r.verdict, r.calls) : { verdict: ALLOWED_NONE, calls: r.calls };
      report({
        url,
        dialect: r.dialect,
        streamed: true,
        verdict: made.verdict,
        changed: r.replaced,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
        findings: r.findings,
        calls: [...made.calls],
        attempt: exchange.attempt,
        ...(r.retried ? { retried: true } : {}),
        ...(r.usage ? { usage: r.usage } : {}),
      });
    },
    resume,
    retry: mayRetry(exchange) ? (turn) => retryStream(exchange, dialect, turn) : undefined,
  });
  // The gate's stream is decoded text (fetch decoded the provider's bytes): the provider's length and
  // encoding are not its own, and a proxy passing them on would have its client decode it again or cut it.
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
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
    const { out, sent, rejected, usage, unreported } = await gateJsonOnce(response, current);
    /** This attempt's answer, reporting the earlier attempts' usage too. */
    const answer = () => before ? withUsageAdded(out, sent, exchange.dialect, before) : out;
    if (!rejected || !mayRetry(current)) return answer();
    const request = followUpOf(current, rejected);
    // A follow-up that fails (a refused or reset connection) leaves the clean stop, as in a stream; one the
    // caller aborted rejects, as fetch does (resolved with the first answer, the SDKs returned it as if
    // nothing had been asked to stop).
    const next = await current.send(request).catch((e) => {
      if (!current.signal?.aborted) return undefined;
      if (unreported) current.report(unreported); // (judged all the same)
      throw e;
    });
    const type = (next?.headers.get("content-type") ?? "").toLowerCase();
    if (next === undefined || !next.ok || next.body === null || !type.includes("json")) {
      await next?.body?.cancel().catch(() => {});
      // (no retry takes its place: not `retried`, as a stream's event is not)
      if (unreported) current.report(unreported);
      return answer(); // the retry failed: the clean stop
    }
    if (unreported) current.report({ ...unreported, retried: true });
    if (usage) before = sumUsage(before, usage);
    current = { ...current, request, attempt: current.attempt + 1 };
    response = next;
  }
}

/**
 * A JSON answer whose usage reports `before` (the earlier attempts') added to its own; the answer itself
 * when it reports none. `body` is what the answer carries, as read when it was gated (it is not read again).
 */
function withUsageAdded(response: Response, body: unknown, dialect: StreamDialect, before: Usage): Response {
  if (body === undefined) return response;
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

/**
 * Gates one JSON answer; says what was rejected (for a retry) along with the response to forward and the
 * JSON it carries (undefined when it is not JSON the gate read).
 */
async function gateJsonOnce(
  response: Response,
  exchange: Exchange,
): Promise<{
  out: Response;
  sent?: unknown;
  rejected?: RejectedTurn;
  usage?: Usage;
  /** The event of a turn that may be retried, left for the caller to report once it knows whether it was. */
  unreported?: GateEvent;
}> {
  const out = await gateJsonBody(response, exchange);
  const usage = out.event?.usage;
  const sent = out.result?.changed ? out.result.response : out.parsed;
  // With drop-call, the valid calls of the turn went through: the turn is not asked again. Nor is one whose
  // calls were written into the text of one of several answers (`n`), or made by an answer but the first: a
  // retry sends back the first answer (another's calls went back beside its words); nor, as in a stream, one
  // whose Gemini candidates stand away from their `index` (which is the first is in doubt).
  if (
    !out.result || out.result.verdict.allowed || dropsCalls(out.result.verdict, exchange.options) ||
    (out.result.extracted !== undefined && severalAnswers(out.body)) || callsPastFirst(out.body) ||
    candidatesOutOfPlace(out.body)
  ) {
    if (out.event && out.result && !out.result.verdict.allowed) exchange.report(out.event);
    return { out: out.response, sent, usage };
  }
  const turn: RejectedTurn = {
    calls: verdictCalls(out.result.verdict),
    verdict: out.result.verdict,
    body: out.body,
  };
  if (out.result.source === "text") turn.fromText = true;
  if (mayRetry(exchange)) return { out: out.response, sent, rejected: turn, usage, unreported: out.event };
  if (out.event) exchange.report(out.event);
  return { out: out.response, sent, rejected: turn, usage };
}

/** True when a body holds more than one answer (OpenAI Chat `choices`, Gemini `candidates`). */
function severalAnswers(body: Record<string, unknown> | undefined): boolean {
  return [body?.choices, body?.candidates].some((list) => Array.isArray(list) && list.length > 1);
}

/**
 * Whether an answer of `body` but the first holds native calls: an OpenAI Chat choice's `tool_calls` (or
 * `function_call`), a Gemini candidate's `functionCall` parts.
 */
function callsPastFirst(body: Record<string, unknown> | undefined): boolean {
  const later = (list: unknown) => Array.isArray(list) ? list.slice(1).filter(isRecord) : [];
  return later(body?.choices).some((c) =>
    isRecord(c.message) &&
    ((Array.isArray(c.message.tool_calls) && c.message.tool_calls.length > 0) ||
      isRecord(c.message.function_call))
  ) || later(body?.candidates).some((c) =>
    isRecord(c.content) && Array.isArray(c.content.parts) &&
    c.content.parts.some((p) => isRecord(p) && isRecord(p.functionCall))
  );
}

/** Gates one JSON answer: the response to forward, the gate's result and the event to report. */
async function gateJsonBody(response: Response, exchange: Exchange): Promise<{
  response: Response;
  result?: GateResult;
  body?: Record<string, unknown>;
  /** The answer's JSON as it came (a Gemini array of chunks before they are merged). */
  parsed?: unknown;
  event?: GateEvent;
}> {
  // Read through a clone, so an answer passed unchanged is the response itself, its body as it came.
  const bytes = await readWhole(response.clone(), exchange.limit);
  if (!bytes) {
    response.body!.cancel().catch(() => {});
    return { response: withUrl(tooLargeResponse(exchange.dialect, exchange.limit), response.url) };
  }
  const json = parseJsonSafe(DECODER.decode(bytes));
  if (!json.ok) return { response }; // not JSON after all: the client deals with it as it would have
  let body: unknown = json.value;
  const parsed = body;
  // Gemini's streamGenerateContent without alt=sse answers a JSON array of chunks: judged as one body.
  const chunks = Array.isArray(body) && exchange.dialect === "gemini" ? body.filter(isRecord) : undefined;
  if (chunks) body = mergeGeminiChunks(chunks);
  const shape = detectDialect(body) ? detectDialect(body)! : exchange.dialect;
  const result = isRecord(body) ? await gateWith(exchange.judge, body, shape, exchange.options) : undefined;
  if (!result || !isRecord(body)) return { response, parsed };
  if (chunks && result.changed) result.response = [result.response];
  const event: GateEvent | undefined = result.verdict.calls.length > 0 || result.changed
    ? {
      url: exchange.url,
      dialect: shape,
      streamed: false,
      verdict: result.verdict,
      changed: result.changed,
      // (no key when nothing replaced the calls, as in a stream's event: the same plain data either way)
      ...(result.reason !== undefined ? { reason: result.reason } : {}),
      findings: [],
      attempt: exchange.attempt,
    }
    : undefined;
  const usage = usageIn(shape, body);
  if (event && usage) event.usage = usage;
  if (!result.changed) {
    if (event) exchange.report(event);
    return { response, result, body, parsed };
  }
  // The original body was read through a clone; release it.
  response.body!.cancel().catch(() => {});
  const out = rebuilt(response, result.response);
  out.headers.set("x-toolguard-blocked", String(result.verdict.rejectedIndices.length));
  return { response: out, result, body, parsed, event };
}

/** One decoder for every answer read whole: a whole decode keeps no state. */
const DECODER = new TextDecoder();

/** A response like `response` (status, headers, url) with the JSON `body`. */
function rebuilt(response: Response, body: unknown): Response {
  return withBody(response, new TextEncoder().encode(JSON.stringify(body)));
}

/** A response like `response` (status, headers, url) with the body `out`, read already. */
function withBody(response: Response, out: Uint8Array<ArrayBuffer>): Response {
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
  // Each candidate's parts are gathered in one list: copying them at every chunk made a long answer (a
  // chunk per few words) quadratic.
  const byIndex = new Map<number, { candidate: Record<string, unknown>; parts: unknown[] }>();
  for (const chunk of chunks) {
    for (const c of Array.isArray(chunk.candidates) ? chunk.candidates : []) {
      if (!isRecord(c)) continue;
      const index = typeof c.index === "number" ? c.index : 0;
      const content = isRecord(c.content) ? c.content : {};
      const seen = byIndex.get(index);
      const all = seen?.parts ?? [];
      for (const part of Array.isArray(content.parts) ? content.parts : []) all.push(part);
      byIndex.set(index, {
        candidate: { ...seen?.candidate, ...c, content: { ...content, parts: all } },
        parts: all,
      });
    }
  }
  return { ...chunks[chunks.length - 1], candidates: [...byIndex.values()].map((v) => v.candidate) };
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
