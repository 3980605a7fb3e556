/**
 * `guardFetch`: a `fetch` wrapper that gates model responses, whole or streamed, before the client sees
 * them.
 *
 * @module
 */
import { isRecord, lazy, limitOption } from "../_common/values.ts";
import type { Verdict } from "../types.ts";
import type { AssembledToolCall, StreamFinding } from "./calls.ts";
import type { CompletionDialect, GateOptions } from "./gate.ts";
import { DEFAULT_MAX_RESPONSE_BYTES } from "./bound.ts";

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
  /**
   * The text that replaced the calls, when `changed`, as the model read it: the whole turn's (with several
   * answers, OpenAI Chat `n` or Gemini `candidateCount`, each answer read the reason for its own calls); where
   * calls were dropped as malformed beside judged ones, their reason first, then the judge's, a blank line apart.
   */
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
   * (indices, ids and `sequence_number`s continuing what the client has; where its text would join the
   * earlier attempts' words, a blank line of its own parts them, opening its block or item where it has
   * one, since clients join those too, unless the stream scores its tokens).
   * The follow-up carries what the rejected attempt said: its text and reasoning (Anthropic `thinking`
   * blocks with their `signature`, Gemini parts with their `thoughtSignature`, Responses `reasoning` items,
   * Ollama `thinking`), which providers with extended thinking require; a call written into the text goes
   * back once, as the provider's structured call, with the text around it (a model shown its call twice
   * tends to write it again). The usage the client sees is every attempt's added up (each is billed); each
   * attempt's own is in its `onVerdict` event. Every attempt is reported to `onVerdict`.
   * A turn is not sent back when `onRejected: "drop-call"` kept some of its calls (they reached the client),
   * nor when calls written into the text of a response of several answers (OpenAI Chat `n`, Gemini
   * `candidateCount`) were rejected, or an answer but the first made native calls, or Gemini listed a
   * candidate away from its `index` (which is the first is then in doubt), since a retry sends back one
   * answer's turn, the first's, and continues it (a stream whose written calls all came in its first answer
   * is still retried): such a turn ends in the reason. Default 0 (off); a whole number from 0 up (anything
   * else is a `TypeError` or a `RangeError`).
   */
  retry?: number;
  /**
   * The most bytes of one provider answer the gate holds at a time: a JSON answer (read whole before it is
   * judged), one stream frame or NDJSON line not yet ended, the stream frames withheld while a call is
   * pending, the text of a streamed message watched for calls written into it, the items an OpenAI Responses
   * stream finished (kept for the final snapshot the gate may write). A provider that sends more (a body or
   * a line without end, a call whose arguments never close) is not read further: its body is cancelled and
   * nothing unjudged is passed on. A JSON answer then becomes a 413 response in the
   * provider's error shape (not retried by the official clients, so the request is not billed again); a
   * stream forwards what was already judged and then errors. The message names this option. A retry's
   * answer is bounded alike; a streamed turn whose events came to more than this is not sent back by
   * `retry` (it ends in the usual replacement). Stream parts are measured in characters of decoded text.
   * Default 64 MiB (`64 * 1024 * 1024`); a whole number of at least 1, or `Infinity` for no bound (anything
   * else is a `TypeError` or a `RangeError`).
   */
  maxResponseBytes?: number;
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

/**
 * The request body as text, where it can be read without being used up: a string, bytes in any view, a
 * `Blob`, or the body of a `Request`. (A stream body is read before, see {@linkcode readStreamBody}.)
 */
async function requestBody(input: string | URL | Request, init?: RequestInit): Promise<string | undefined> {
  const body = init?.body;
  if (typeof body === "string") return body;
  if (ArrayBuffer.isView(body)) {
    return new TextDecoder().decode(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  }
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(body));
  if (typeof Blob === "function" && body instanceof Blob) return await body.text();
  if (body === undefined && input instanceof Request && !input.bodyUsed && input.body !== null) {
    return await input.clone().text();
  }
  return undefined;
}

/**
 * `init` with a stream body read (a stream can be read once: the gate must read the tools it declares, or
 * the answer goes unjudged), then sent as the bytes it held; `init` itself otherwise. Bytes, not text: a
 * string body gets a `text/plain` type the client never set, and loses a BOM.
 */
async function readStreamBody(init?: RequestInit): Promise<RequestInit | undefined> {
  if (!(init?.body instanceof ReadableStream)) return init;
  const { duplex: _duplex, ...rest } = init as RequestInit & { duplex?: string };
  return { ...rest, body: new Uint8Array(await new Response(init.body).arrayBuffer()) };
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

/** The gating of a request the gate reads, loaded with its engines when the first such request is sent. */
const loadExchange = lazy(() => import("./exchange.ts"));

/**
 * Wraps `fetch` so model responses are gated before the client sees them. Pass the result as the `fetch`
 * option of the official clients (`new OpenAI({ fetch })`, `new Anthropic({ fetch })`, `new Ollama({ fetch })`)
 * or call it directly.
 *
 * Requests to `.../chat/completions` (OpenAI and every OpenAI-compatible server: Ollama, llama.cpp, LM Studio,
 * vLLM), `.../responses`, `.../messages` (Anthropic), `.../api/chat` (Ollama), `...:generateContent` and
 * `...:streamGenerateContent` (Gemini, with or without `alt=sse`) and `.../v2/chat` (Cohere) are judged against
 * the tools in the request body; everything else passes through untouched. A JSON response whose calls are all allowed is
 * returned as it came (same body, headers and status); one with a rejected call gets the rewritten body of
 * `gateCompletion` (with `content-length` fixed and an `x-toolguard-blocked` header). A streamed response
 * (SSE or NDJSON) passes its text through as it arrives and withholds the tool-call events until the stream
 * ends and the assembled calls validate; rejected calls are replaced by a text event carrying the reason and
 * a normal stop. In streams of every dialect (OpenAI Chat and Gemini: every choice or candidate, each apart;
 * Ollama; Anthropic, OpenAI Responses and Cohere: across the text blocks or items), text from a call marker on
 * (`<tool_call>`, `<|python_tag|>`, `[TOOL_CALLS]`, a JSON fence) is held the same way and judged at the end;
 * prose in the frames before it flows at once (prose in the frame it starts in waits with it, so text with no
 * call passes byte for byte); a message that opens with JSON is held only in a request that declares tools,
 * and only until its first key shows it is not a call. Malformed stream events are dropped (a client would
 * throw on them) and reported (the first 100 of each kind), and so are events a client would read otherwise
 * than the gate (an Anthropic event whose `event:` name is not its type, a block placed other than where the
 * SDK puts it, an OpenAI Chat choice past the request's `n`, named by a string or by no whole number from 0 up, or
 * twice in one chunk, a Gemini chunk of more candidates than `candidateCount`, Vertex AI arguments streamed in
 * pieces). An OpenAI Responses call added away from where the openai SDK appends it
 * (the AI SDK keys calls by `output_index`) is moved there, with every event that addresses an item, so each
 * client reads the call the gate judged. A call whose name or arguments a stream sends in differing versions
 * is judged in each. Error responses are never touched. What the gate holds of an answer at a time is bounded
 * by `maxResponseBytes`: a provider that sends more is cut off, and the client told which option to raise.
 *
 * The request's tools are compiled before it is sent, so a schema that cannot be enforced makes the call
 * fail at once with an error naming the tool and keyword.
 *
 * @param fetchFn The `fetch` to wrap. Default `globalThis.fetch`.
 * @param options Tools, validator options, a verdict hook, and whether to gate streams.
 * @returns A `fetch` with the same signature. It loads the gating on the first request it reads; a failure to
 * load it rejects that request, as a failed `fetch` does.
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
  const limit = limitOption(options.maxResponseBytes, "maxResponseBytes", DEFAULT_MAX_RESPONSE_BYTES);
  if (limit < 1 || (!Number.isInteger(limit) && limit !== Infinity)) {
    // 0 would refuse every answer, where a caller may have meant "no bound": that is Infinity
    throw new RangeError(
      `options.maxResponseBytes must be a whole number of bytes, at least 1 (Infinity for no bound), got ${limit}`,
    );
  }
  // Read as a number by the exchange ("2" became 2, 1.5 became 1): a count given another way is refused here.
  const retry = limitOption(options.retry, "retry", 0);
  if (retry < 0 || !Number.isInteger(retry)) {
    throw new RangeError(`options.retry must be a whole number of retries, 0 (off) or more, got ${retry}`);
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
    init = await readStreamBody(init);
    const request = await requestJson(input, init);
    if (!isRecord(request)) return fetchFn(input, init);
    const { gateRequest } = await loadExchange();
    return await gateRequest(fetchFn, input, init, { url, dialect, request, options, report });
  };
}
