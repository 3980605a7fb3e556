/**
 * The response gate: judges the tool calls in provider response bodies and streams.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";

import type { Classifier, Verdict } from "../types.ts";
import {
  createValidator,
  type ValidateOptions,
  validateToolCalls,
  type Validator,
} from "../_validate/validator.ts";
import { describeVerdict } from "../_describe/describe.ts";
import { type ExtractedToolCall, extractToolCalls } from "../_extract/extract.ts";
import {
  type AssembledCalls,
  type AssembledToolCall,
  assembleToolCalls as assemble,
  callForValidation,
  cutCalls,
  gateStream,
  type StreamDialect,
  type StreamFinding,
} from "./stream.ts";

/** The response shapes the gate reads. */
export type CompletionDialect = StreamDialect;

/** Options for {@linkcode gateCompletion}; also accepted by {@linkcode guardFetch}. */
export interface GateOptions extends ValidateOptions {
  /**
   * The declared tools, in any provider shape. Default: the `tools` of the request. Absent from both: the
   * allowlist is off (the schema and injection checks still run on what can be checked).
   */
  tools?: readonly unknown[];
  /** A validator compiled once with `createValidator`; used instead of compiling the request's tools. */
  validator?: Validator;
  /** An optional second opinion on calls the signature pass cleared (e.g. a local model). */
  classifier?: Classifier;
  /** Read the body as this shape instead of detecting it. */
  dialect?: CompletionDialect;
  /** Judge calls written into the message text when there are no native calls. Default true. */
  extract?: boolean;
  /** The text that replaces rejected calls. Default: `describeVerdict` of the verdict, with the tools. */
  message?: (verdict: Verdict, tools: readonly unknown[] | undefined) => string;
}

/** What {@linkcode gateCompletion} returns. */
export interface GateResult {
  /** The judgement of every call in the response (empty and allowed when there were none). */
  verdict: Verdict;
  /** The body to forward: the input itself when nothing was rejected, else a rewritten copy without calls. */
  response: unknown;
  /** True when `response` is a rewritten copy. */
  changed: boolean;
  /** The shape the body was read as; undefined when it matched none (the body is then returned as is). */
  dialect?: CompletionDialect;
  /** Where the calls came from: the provider's call fields, the message text, or nowhere. */
  source: "native" | "text" | "none";
  /** The calls recovered from the text, when `source` is `"text"`. */
  extracted?: ExtractedToolCall[];
  /** The text that replaced the calls, when `changed`. */
  reason?: string;
}

const ALLOWED_NONE: Verdict = Object.freeze({ allowed: true, blocked: [], calls: [] }) as Verdict;

// ---------------------------------------------------------------------------------------------------------
// Reading requests and responses
// ---------------------------------------------------------------------------------------------------------

/** Which shape a response body has, or undefined. */
function detectDialect(body: unknown): CompletionDialect | undefined {
  if (!isRecord(body)) return undefined;
  if (body.object === "chat.completion" || Array.isArray(body.choices)) return "openai_chat";
  if (body.object === "response" || Array.isArray(body.output)) return "openai_responses";
  if (body.type === "message" && Array.isArray(body.content)) return "anthropic";
  if (isRecord(body.message) && ("done" in body || "model" in body)) return "ollama";
  if (Array.isArray(body.content) && body.role === "assistant") return "anthropic";
  return undefined;
}

/**
 * The function tools a request declares, in the request's own shape. Built-in tools that the provider runs
 * itself (web search, code interpreter, Anthropic server tools) are left out: the model's calls to them
 * never reach the caller.
 */
function declaredTools(request: unknown, dialect: CompletionDialect): unknown[] | undefined {
  if (!isRecord(request)) return undefined;
  const tools = Array.isArray(request.tools) ? request.tools : undefined;
  const functions = Array.isArray(request.functions) ? request.functions : undefined;
  if (!tools && !functions) return undefined;
  const out: unknown[] = [];
  for (const t of tools ?? []) {
    if (!isRecord(t)) continue;
    if (dialect === "openai_responses") {
      if (t.type === "function") out.push(t);
    } else if (dialect === "anthropic") {
      if (t.input_schema !== undefined || t.type === undefined || t.type === "custom") out.push(t);
    } else if (isRecord(t.function)) out.push(t);
  }
  // The legacy `functions` list of OpenAI Chat.
  for (const f of functions ?? []) if (isRecord(f)) out.push({ type: "function", function: f });
  return out;
}

/** The provider-native tool calls in a response body, in order. */
function nativeCalls(body: Record<string, unknown>, dialect: CompletionDialect): unknown[] {
  const out: unknown[] = [];
  if (dialect === "openai_chat") {
    for (const c of body.choices as unknown[]) {
      if (!isRecord(c) || !isRecord(c.message)) continue;
      if (Array.isArray(c.message.tool_calls)) { for (const call of c.message.tool_calls) out.push(call); }
      if (isRecord(c.message.function_call)) out.push({ function: c.message.function_call });
    }
  } else if (dialect === "openai_responses") {
    for (const item of body.output as unknown[]) {
      if (isRecord(item) && item.type === "function_call") out.push(item);
    }
  } else if (dialect === "anthropic") {
    for (const block of body.content as unknown[]) {
      if (isRecord(block) && block.type === "tool_use") out.push(block);
    }
  } else if (isRecord(body.message) && Array.isArray(body.message.tool_calls)) {
    for (const call of body.message.tool_calls) out.push(call);
  }
  return out;
}

/** The pieces of assistant text in a response body, in order. */
function textSlots(body: Record<string, unknown>, dialect: CompletionDialect): string[] {
  const out: string[] = [];
  if (dialect === "openai_chat") {
    for (const c of body.choices as unknown[]) {
      if (isRecord(c) && isRecord(c.message) && typeof c.message.content === "string") {
        out.push(c.message.content);
      }
    }
  } else if (dialect === "openai_responses") {
    for (const item of body.output as unknown[]) {
      if (!isRecord(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
      for (const part of item.content) {
        if (isRecord(part) && part.type === "output_text" && typeof part.text === "string") {
          out.push(part.text);
        }
      }
    }
  } else if (dialect === "anthropic") {
    for (const block of body.content as unknown[]) {
      if (isRecord(block) && block.type === "text" && typeof block.text === "string") {
        out.push(block.text);
      }
    }
  } else if (isRecord(body.message) && typeof body.message.content === "string") {
    out.push(body.message.content);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------------------

const validatorCache = new Map<string, Validator>();

/** Compiles (once per distinct tool list and options) the validator for a set of declarations. */
function compiled(tools: readonly unknown[], options: ValidateOptions): Validator {
  // Keyed on exactly the options the validator receives, so a new option cannot be left out of the key.
  const opts = validateOptions(options);
  const key = JSON.stringify([tools, opts]);
  let v = validatorCache.get(key);
  if (!v) {
    v = createValidator(tools, opts);
    if (validatorCache.size >= 32) validatorCache.delete(validatorCache.keys().next().value as string);
    validatorCache.set(key, v);
  }
  return v;
}

function validateOptions(options: GateOptions): ValidateOptions {
  const { repair, coerce, scan, maxDepth, maxLength, assertFormats } = options;
  const out: ValidateOptions = {};
  if (repair !== undefined) out.repair = repair;
  if (coerce !== undefined) out.coerce = coerce;
  if (scan !== undefined) out.scan = scan;
  if (maxDepth !== undefined) out.maxDepth = maxDepth;
  if (maxLength !== undefined) out.maxLength = maxLength;
  if (assertFormats !== undefined) out.assertFormats = assertFormats;
  return out;
}

/** A judge bound to one request: its tools compiled up front, so a bad schema fails before any traffic. */
interface Judge {
  tools: readonly unknown[] | undefined;
  judge(calls: readonly unknown[]): Promise<Verdict>;
  reason(verdict: Verdict): string;
}

function makeJudge(request: unknown, dialect: CompletionDialect, options: GateOptions): Judge {
  const tools = options.tools ?? declaredTools(request, dialect);
  const sync = options.validator ??
    (tools !== undefined && !options.classifier ? compiled(tools, options) : undefined);
  const reason = (verdict: Verdict): string => {
    if (options.message) {
      try {
        return String(options.message(verdict, tools));
      } catch {
        // fall through to the default sentence
      }
    }
    return "toolguard stopped this turn's tool calls; none of them ran.\n" +
      describeVerdict(verdict, { tools });
  };
  return {
    tools,
    reason,
    judge(calls: readonly unknown[]): Promise<Verdict> {
      if (calls.length === 0) return Promise.resolve(ALLOWED_NONE);
      if (sync) return Promise.resolve(sync.validate(calls));
      return validateToolCalls(calls, { ...validateOptions(options), tools, classifier: options.classifier });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// gateCompletion
// ---------------------------------------------------------------------------------------------------------

/**
 * Judges the tool calls in one model response against the tools declared in its request.
 *
 * Reads OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Ollama `/api/chat` bodies. When the
 * response has no native calls, calls written into the text (`extractToolCalls`) are judged instead. When any
 * call is rejected, `response` is a copy of the same shape with every call removed (so a caller that forwards
 * it cannot forward the rejected call), the reason in its text, and `finish_reason` / `stop_reason` /
 * `done_reason` set to a normal stop so clients do not wait for tool results. Otherwise `response` is the
 * input, untouched. Never throws on model output; throws only when the declared tools cannot be compiled
 * (an unsupported schema keyword), since a schema is never half-enforced.
 *
 * @param request The request body sent to the model (for its `tools`), or `undefined` with `options.tools`.
 * @param response The parsed response body.
 * @param options Tools, a prebuilt validator, validator options, a classifier, the rejection text.
 * @returns The verdict and the body to forward.
 *
 * @example
 * ```ts
 * import { gateCompletion } from "@toolguard/toolguard/gate";
 * // Ollama /api/chat, a Hermes-style call written into the text by a small model:
 * const request = {
 *   model: "qwen2.5:3b", messages: [],
 *   tools: [{ type: "function", function: { name: "search", parameters: {
 *     type: "object", properties: { query: { type: "string" } }, required: ["query"],
 *   } } }],
 * };
 * const response = {
 *   model: "qwen2.5:3b", created_at: "2025-01-01T00:00:00Z", done: true, done_reason: "stop",
 *   message: { role: "assistant", content: '<tool_call>{"name": "search", "arguments": {}}</tool_call>' },
 * };
 * const { verdict, source } = await gateCompletion(request, response);
 * if (source !== "text" || verdict.calls[0].findings[0].code !== "missing_required_argument") {
 *   throw new Error("the call in the text should be judged");
 * }
 * ```
 */
export async function gateCompletion(
  request: unknown,
  response: unknown,
  options: GateOptions = {},
): Promise<GateResult> {
  const dialect = options.dialect ?? detectDialect(response);
  if (!dialect || !isRecord(response)) {
    return { verdict: ALLOWED_NONE, response, changed: false, source: "none" };
  }
  const judge = makeJudge(request, dialect, options);
  return await gateWith(judge, response, dialect, options);
}

async function gateWith(
  judge: Judge,
  body: Record<string, unknown>,
  dialect: CompletionDialect,
  options: GateOptions,
): Promise<GateResult> {
  let native: unknown[] = [];
  try {
    native = nativeCalls(body, dialect);
  } catch {
    native = [];
  }
  if (native.length > 0) {
    const verdict = await judge.judge(native);
    if (verdict.allowed) return { verdict, response: body, changed: false, dialect, source: "native" };
    const reason = judge.reason(verdict);
    return {
      verdict,
      response: rewrite(body, dialect, reason, []),
      changed: true,
      dialect,
      source: "native",
      reason,
    };
  }
  if (options.extract === false) {
    return { verdict: ALLOWED_NONE, response: body, changed: false, dialect, source: "none" };
  }
  const extracted: ExtractedToolCall[] = [];
  for (const text of textSlots(body, dialect)) extracted.push(...extractToolCalls(text));
  if (extracted.length === 0) {
    return { verdict: ALLOWED_NONE, response: body, changed: false, dialect, source: "none" };
  }
  const verdict = await judge.judge(extracted.map((c) => {
    const call: Record<string, unknown> = { name: c.name, arguments: c.arguments };
    if (c.id !== undefined) call.id = c.id;
    return call;
  }));
  if (verdict.allowed) return { verdict, response: body, changed: false, dialect, source: "text", extracted };
  const reason = judge.reason(verdict);
  return {
    verdict,
    response: rewrite(body, dialect, reason, extracted),
    changed: true,
    dialect,
    source: "text",
    extracted,
    reason,
  };
}

function joinText(before: string, reason: string): string {
  return before.trim() === "" ? reason : `${before.trimEnd()}\n\n${reason}`;
}

/** A copy of `body` with every call removed, the reason in the text, and a normal stop. */
function rewrite(
  body: Record<string, unknown>,
  dialect: CompletionDialect,
  reason: string,
  extracted: ExtractedToolCall[],
): Record<string, unknown> {
  const fromText = extracted.length > 0;
  const clean = (text: string) => (fromText ? cutCalls(text) : text);
  if (dialect === "openai_chat") {
    return {
      ...body,
      choices: (body.choices as unknown[]).map((c) => {
        if (!isRecord(c) || !isRecord(c.message)) return c;
        const m = c.message;
        const hadCalls = Array.isArray(m.tool_calls) || isRecord(m.function_call) ||
          (fromText && typeof m.content === "string" && extractToolCalls(m.content).length > 0);
        if (!hadCalls) return c;
        const message: Record<string, unknown> = { ...m };
        delete message.tool_calls;
        delete message.function_call;
        message.content = joinText(typeof m.content === "string" ? clean(m.content) : "", reason);
        return { ...c, message, finish_reason: "stop" };
      }),
    };
  }
  if (dialect === "openai_responses") {
    const output: unknown[] = [];
    for (const item of body.output as unknown[]) {
      if (isRecord(item) && item.type === "function_call") continue;
      if (fromText && isRecord(item) && item.type === "message" && Array.isArray(item.content)) {
        output.push({
          ...item,
          content: item.content.map((p) =>
            isRecord(p) && p.type === "output_text" && typeof p.text === "string"
              ? { ...p, text: clean(p.text) }
              : p
          ),
        });
      } else output.push(item);
    }
    output.push({
      id: `msg_toolguard_${output.length}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reason, annotations: [] }],
    });
    const copy: Record<string, unknown> = { ...body, output };
    if (typeof body.output_text === "string") {
      copy.output_text = output.flatMap((o) =>
        isRecord(o) && o.type === "message" && Array.isArray(o.content)
          ? o.content.filter((p) => isRecord(p) && p.type === "output_text").map((p) =>
            (p as { text: string }).text
          )
          : []
      ).join("");
    }
    return copy;
  }
  if (dialect === "anthropic") {
    const content: unknown[] = [];
    for (const block of body.content as unknown[]) {
      if (isRecord(block) && block.type === "tool_use") continue;
      if (fromText && isRecord(block) && block.type === "text" && typeof block.text === "string") {
        const text = clean(block.text);
        if (text !== "") content.push({ ...block, text });
      } else content.push(block);
    }
    content.push({ type: "text", text: reason });
    const copy: Record<string, unknown> = { ...body, content };
    if (body.stop_reason === "tool_use" || fromText) copy.stop_reason = "end_turn";
    return copy;
  }
  // Ollama
  const m = isRecord(body.message) ? body.message : {};
  const message: Record<string, unknown> = { ...m };
  delete message.tool_calls;
  message.content = joinText(typeof m.content === "string" ? clean(m.content) : "", reason);
  const copy: Record<string, unknown> = { ...body, message };
  if (body.done_reason !== undefined) copy.done_reason = "stop";
  return copy;
}

// ---------------------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------------------

/**
 * Rebuilds complete tool calls from the events of a streamed response, so they can be validated before
 * anything runs. Reads OpenAI Chat Completions chunks (`choices[].delta.tool_calls`, assembled by `index`
 * so parallel calls stay apart even when their deltas interleave), OpenAI Responses events
 * (`response.output_item.added`, `response.function_call_arguments.delta`/`.done`), Anthropic Messages events
 * (`content_block_start` with `tool_use`, `input_json_delta`) and Ollama `/api/chat` chunks (`message.tool_calls`,
 * each call whole). Events may be parsed objects or their JSON text. Calls without an id get a stable
 * synthetic one (same input, same id). Malformed events never throw: they become findings.
 *
 * @param events The parsed `data` of each SSE event, or each NDJSON line, in order.
 * @returns The calls, with argument text as assembled, and findings about events that could not be used.
 *
 * @example
 * ```ts
 * import { assembleToolCalls } from "@toolguard/toolguard/gate";
 * const chunk = (tc: unknown) => ({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [tc] } }] });
 * const { calls } = assembleToolCalls([
 *   chunk({ index: 0, id: "call_a", function: { name: "search", arguments: '{"q":' } }),
 *   chunk({ index: 1, id: "call_b", function: { name: "fetch", arguments: '{"url":' } }),
 *   chunk({ index: 0, function: { arguments: '"cats"}' } }),
 *   chunk({ index: 1, function: { arguments: '"https://x.test"}' } }),
 * ]);
 * if (calls[0].arguments !== '{"q":"cats"}' || calls[1].arguments !== '{"url":"https://x.test"}') {
 *   throw new Error("parallel calls were glued");
 * }
 * ```
 */
export function assembleToolCalls(events: Iterable<unknown>): AssembledCalls {
  return assemble(events);
}

// ---------------------------------------------------------------------------------------------------------
// guardFetch
// ---------------------------------------------------------------------------------------------------------

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
}

/** Options for {@linkcode guardFetch}. */
export interface GuardFetchOptions extends GateOptions {
  /** Gate streamed responses too (withholding tool-call events until they validate). Default true. */
  stream?: boolean;
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

/**
 * Wraps `fetch` so model responses are gated before the client sees them. Pass the result as the `fetch`
 * option of the official clients (`new OpenAI({ fetch })`, `new Anthropic({ fetch })`, `new Ollama({ fetch })`)
 * or call it directly.
 *
 * Requests to `…/chat/completions` (OpenAI and every OpenAI-compatible server: Ollama, llama.cpp, LM Studio,
 * vLLM), `…/responses`, `…/messages` (Anthropic) and `…/api/chat` (Ollama) are judged against the tools in
 * the request body; everything else passes through untouched. A JSON response whose calls are all allowed is
 * returned as it came (same body, headers and status); one with a rejected call gets the rewritten body of
 * {@linkcode gateCompletion} (with `content-length` fixed and an `x-toolguard-blocked` header). A streamed
 * response (SSE or NDJSON) passes its text through as it arrives and withholds the tool-call events until
 * the stream ends and the assembled calls validate; rejected calls are replaced by a text event carrying the
 * reason and a normal stop. In OpenAI Chat and Ollama streams, text from a call marker on (`<tool_call>`,
 * `<|python_tag|>`, `[TOOL_CALLS]`, a JSON fence) is held the same way and judged at the end; prose before
 * it flows at once. Malformed stream events are dropped (a client would throw on them) and reported. Error
 * responses are never touched.
 *
 * The request's tools are compiled before it is sent, so a schema that cannot be enforced makes the call
 * fail at once with an error naming the tool and keyword.
 *
 * @param fetchFn The `fetch` to wrap. Default `globalThis.fetch`.
 * @param options Tools, validator options, a verdict hook, and whether to gate streams.
 * @returns A `fetch` with the same signature.
 *
 * @example
 * ```ts
 * import { guardFetch } from "@toolguard/toolguard/gate";
 * // A stand-in server that always answers with a call to a tool the request never declared.
 * const server = (async () =>
 *   Response.json({
 *     model: "m", created_at: "", done: true, done_reason: "stop",
 *     message: { role: "assistant", content: "", tool_calls: [{ function: { name: "rm_rf", arguments: {} } }] },
 *   })) as typeof fetch;
 * const guarded = guardFetch(server);
 * const res = await guarded("http://127.0.0.1:11434/api/chat", {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", messages: [], stream: false, tools: [] }),
 * });
 * const body = await res.json();
 * if (body.message.tool_calls !== undefined || res.headers.get("x-toolguard-blocked") !== "1") {
 *   throw new Error("the undeclared call should have been removed");
 * }
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
    const text = await requestBody(input, init);
    let request: unknown;
    try {
      request = text === undefined ? undefined : JSON.parse(text);
    } catch {
      request = undefined;
    }
    if (!isRecord(request)) return fetchFn(input, init);
    // Compile before sending: a schema that cannot be enforced fails loudly, not halfway through a stream.
    const judge = makeJudge(request, dialect, options);
    const response = await fetchFn(input, init);
    if (!response.ok || response.body === null) return response;
    const type = (response.headers.get("content-type") ?? "").toLowerCase();
    const streamed = type.includes("text/event-stream") || type.includes("ndjson");
    if (streamed) {
      if (options.stream === false) return response;
      const streamDialect: StreamDialect = type.includes("ndjson") ? "ollama" : dialect;
      const gate = gateStream(streamDialect, {
        extract: options.extract,
        judge: async (calls) => {
          const verdict = await judge.judge(calls.map(callForValidation));
          return { verdict, reason: judge.reason(verdict) };
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
          }),
      });
      const headers = new Headers(response.headers);
      headers.delete("content-length");
      return withUrl(
        new Response(response.body.pipeThrough(gate), {
          status: response.status,
          statusText: response.statusText,
          headers,
        }),
        response.url,
      );
    }
    if (!type.includes("json")) return response;
    let body: unknown;
    try {
      body = await response.clone().json();
    } catch {
      return response; // not JSON after all: the client deals with it as it would have
    }
    const shape = detectDialect(body) ? detectDialect(body)! : dialect;
    const result = isRecord(body) ? await gateWith(judge, body, shape, options) : undefined;
    if (!result) return response;
    if (result.verdict.calls.length > 0 || result.changed) {
      report({
        url,
        dialect: shape,
        streamed: false,
        verdict: result.verdict,
        changed: result.changed,
        reason: result.reason,
        findings: [],
      });
    }
    if (!result.changed) return response;
    const out = new TextEncoder().encode(JSON.stringify(result.response));
    const headers = new Headers(response.headers);
    headers.set("content-length", String(out.byteLength));
    headers.delete("content-encoding"); // fetch already decoded the body; this copy is plain
    headers.set("x-toolguard-blocked", String(result.verdict.blocked.length));
    // The original body was read through a clone; release it.
    response.body.cancel().catch(() => {});
    return withUrl(
      new Response(out, { status: response.status, statusText: response.statusText, headers }),
      response.url,
    );
  };
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
