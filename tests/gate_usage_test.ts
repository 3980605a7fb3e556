// Usage across a transparent retry: both attempts are billed, so the answer the client gets reports their
// usage added up (in the field it already reads), and each attempt's own usage is in its onVerdict event.
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { GateEvent } from "../gate.ts";
import {
  anthropicMessage,
  anthropicStream,
  chatChunk,
  chatCompletion,
  chatStream,
  ollamaStream,
  REJECTED_CALL,
  responsesStream,
  type Script,
  sseData,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
  VALID_CALL,
  WEATHER_QUESTION,
  withGuardedServer,
} from "./_fake_llm_server.ts";

const BAD = REJECTED_CALL;
const GOOD = VALID_CALL;
const messages = WEATHER_QUESTION;

/** Runs `use` with a guarded fetch (one retry) against `script`; returns its value and the verdict events. */
async function retried<T>(
  script: Script,
  use: (url: string, f: typeof fetch) => Promise<T>,
): Promise<{ value: T; seen: GateEvent[]; requests: number }> {
  const { value, seen, server } = await withGuardedServer(script, { retry: 1 }, (s, f) => use(s.url, f));
  return { value, seen, requests: server.requests.length };
}

/** Posts a JSON body and returns the response text. */
const post = async (f: typeof fetch, url: string, body: unknown) =>
  await (await f(url, { method: "POST", body: JSON.stringify(body) })).text();

test("guardFetch retry usage: an OpenAI Chat stream reports both attempts' usage added up", async () => {
  const withUsage = (frames: unknown[], usage: Record<string, unknown>) => {
    const out = frames.slice(0, -1);
    out.push({ ...chatChunk({}), choices: [], usage }, frames.at(-1));
    return out;
  };
  const first = {
    prompt_tokens: 10,
    completion_tokens: 5,
    total_tokens: 15,
    completion_tokens_details: { reasoning_tokens: 2 },
  };
  const second = {
    prompt_tokens: 30,
    completion_tokens: 7,
    total_tokens: 37,
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  const { value, seen } = await retried(
    [{ sse: withUsage(chatStream(["Hm. "], [BAD]), first) }, {
      sse: withUsage(chatStream([], [GOOD]), second),
    }],
    (url, f) =>
      new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 }).chat.completions.stream({
        model: "m",
        messages,
        tools: TOOLS_OPENAI as never,
        stream_options: { include_usage: true },
      }).finalChatCompletion(),
  );
  assert.deepEqual(value.usage, {
    prompt_tokens: 40,
    completion_tokens: 12,
    total_tokens: 52,
    completion_tokens_details: { reasoning_tokens: 2 },
  });
  assert.deepEqual(seen.map((e) => e.usage), [first, second]);
});

test("guardFetch retry usage: an Anthropic stream's final message_delta reports both attempts' input and output", async () => {
  const { value, seen } = await retried(
    [{ sse: anthropicStream(["Checking."], [BAD]), named: true }, {
      sse: anthropicStream([], [GOOD]),
      named: true,
    }],
    (url, f) =>
      new Anthropic({ apiKey: "k", baseURL: url, fetch: f, maxRetries: 0 }).messages.stream({
        model: "m",
        max_tokens: 100,
        messages,
        tools: TOOLS_ANTHROPIC as never,
      }).finalMessage(),
  );
  // Each attempt: 10 in (message_start), 20 out (message_delta).
  assert.equal(value.usage.input_tokens, 20);
  assert.equal(value.usage.output_tokens, 40);
  assert.deepEqual(seen.map((e) => e.usage), [{ input_tokens: 10, output_tokens: 20 }, {
    input_tokens: 10,
    output_tokens: 20,
  }]);
});

test("guardFetch retry usage: an OpenAI Responses stream's response.completed reports the sum", async () => {
  const { value } = await retried(
    [{ sse: responsesStream(["Checking."], [BAD]), named: true }, {
      sse: responsesStream([], [GOOD]),
      named: true,
    }],
    (url, f) =>
      new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 }).responses.stream({
        model: "m",
        input: "Weather?",
        tools: TOOLS_RESPONSES as never,
      }).finalResponse(),
  );
  assert.deepEqual(value.usage, { input_tokens: 20, output_tokens: 10, total_tokens: 30 } as never);
});

test("guardFetch usage: a withheld OpenAI Responses stream keeps its usage while the text holds the final snapshot", async () => {
  // The text watch holds the snapshot that lists the rejected call (text is held from a marker): the
  // replacement was built from response.created, which carries no usage yet (`null`, as OpenAI sends it).
  const noUsageYet = (events: unknown[]) =>
    events.map((e) => {
      const event = e as { type: string; response: Record<string, unknown> };
      return event.type === "response.created"
        ? { ...event, response: { ...event.response, usage: null } }
        : e;
    });
  for (const text of [["Use <tool_call>"], ["Checking. <tool_call>", '{"na']]) {
    const { value } = await withGuardedServer(
      [{ sse: noUsageYet(responsesStream(text, [BAD])), named: true }],
      {},
      (s, f) =>
        new OpenAI({ apiKey: "k", baseURL: `${s.url}/v1`, fetch: f, maxRetries: 0 }).responses.stream({
          model: "m",
          input: "Weather?",
          tools: TOOLS_RESPONSES as never,
        }).finalResponse(),
    );
    assert.deepEqual(value.output.filter((o) => o.type === "function_call"), [], text.join(""));
    assert.deepEqual(
      value.usage,
      { input_tokens: 10, output_tokens: 5, total_tokens: 15 } as never,
      text.join(""),
    );
  }
});

test("guardFetch retry usage: Ollama, Gemini and Cohere streams report the sum in their own usage fields", async () => {
  // Ollama: the final chunk's counts.
  const ollama = await retried(
    [{ ndjson: ollamaStream(["Hm."], [BAD]) }, { ndjson: ollamaStream([], [GOOD]) }],
    (url, f) => post(f, `${url}/api/chat`, { model: "m", messages, tools: TOOLS_OPENAI }),
  );
  const last = JSON.parse(ollama.value.trim().split("\n").at(-1)!);
  assert.equal(last.done, true);
  assert.equal(last.eval_count, 10);

  // Gemini: every usageMetadata of the retry counts the first attempt too.
  const chunk = (parts: unknown[], usage: Record<string, unknown>) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, finishReason: "STOP" }],
    usageMetadata: usage,
  });
  const call = (args: unknown) => ({ functionCall: { name: "get_weather", args } });
  const gemini = await retried(
    [
      {
        sse: [chunk([call(BAD.args)], { promptTokenCount: 8, candidatesTokenCount: 3, totalTokenCount: 11 })],
      },
      {
        sse: [
          chunk([call(GOOD.args)], { promptTokenCount: 20, candidatesTokenCount: 4, totalTokenCount: 24 }),
        ],
      },
    ],
    (url, f) =>
      post(f, `${url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
        contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
        tools: [{ functionDeclarations: TOOLS_RESPONSES }],
      }),
  );
  assert.deepEqual(sseData(gemini.value).map((e) => e.usageMetadata), [
    { promptTokenCount: 28, candidatesTokenCount: 7, totalTokenCount: 35 },
  ]);
  assert.deepEqual(gemini.seen.map((e) => e.usage?.totalTokenCount), [11, 24]);

  // Cohere: message-end's delta.usage, billed units and tokens.
  const frames = (args: unknown, id: string, n: number) => [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    {
      type: "tool-call-start",
      index: 0,
      delta: {
        message: {
          tool_calls: {
            id,
            type: "function",
            function: { name: "get_weather", arguments: JSON.stringify(args) },
          },
        },
      },
    },
    { type: "tool-call-end", index: 0 },
    {
      type: "message-end",
      delta: {
        finish_reason: "TOOL_CALL",
        usage: {
          billed_units: { input_tokens: n, output_tokens: 2 },
          tokens: { input_tokens: n + 100, output_tokens: 2 },
        },
      },
    },
  ];
  const cohere = await retried(
    [{ sse: frames(BAD.args, "call_bad", 5) }, { sse: frames(GOOD.args, "call_good", 9) }],
    (url, f) => post(f, `${url}/v2/chat`, { model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  );
  const end = sseData(cohere.value).at(-1);
  assert.equal(end.type, "message-end");
  assert.deepEqual(end.delta.usage, {
    billed_units: { input_tokens: 14, output_tokens: 4 },
    tokens: { input_tokens: 214, output_tokens: 4 },
  });
});

test("guardFetch retry usage: a JSON answer after a retry reports the sum; without a retry it stays as it came", async () => {
  const chat = await retried(
    [{ json: chatCompletion(null, [BAD]) }, { json: chatCompletion(null, [GOOD]) }],
    (url, f) =>
      new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 }).chat.completions.create({
        model: "m",
        messages,
        tools: TOOLS_OPENAI as never,
      }),
  );
  assert.deepEqual(chat.value.usage, { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
  assert.deepEqual(chat.seen.map((e) => e.usage?.total_tokens), [15, 15]);

  const claude = await retried(
    [{ json: anthropicMessage(null, [BAD]) }, { json: anthropicMessage(null, [GOOD]) }],
    (url, f) =>
      new Anthropic({ apiKey: "k", baseURL: url, fetch: f, maxRetries: 0 }).messages.create({
        model: "m",
        max_tokens: 100,
        messages,
        tools: TOOLS_ANTHROPIC as never,
      }),
  );
  assert.deepEqual(claude.value.usage, { input_tokens: 20, output_tokens: 10 } as never);

  // Allowed at once: the body is the server's, byte for byte.
  const body = chatCompletion(null, [GOOD]);
  const once = await retried(
    [{ json: body }],
    (url, f) => post(f, `${url}/v1/chat/completions`, { model: "m", messages, tools: TOOLS_OPENAI }),
  );
  assert.equal(once.value, JSON.stringify(body));
  assert.equal(once.requests, 1);
});
