// The transparent retry: guardFetch(fetch, { retry: N }) sends a rejected turn back with the feedback as
// tool results in the provider's own shape, and the client ends with the corrected answer. A scripted
// server answers first with an invalid call, then with a valid one.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import { type GateEvent, guardFetch } from "../gate.ts";
import { StreamGate } from "../_gate/stream.ts";
import {
  anthropicMessage,
  anthropicStream,
  type CallSpec,
  chatChunk,
  chatCompletion,
  chatStream,
  choiceChunk,
  cohereBlockTexts,
  type FakeReply,
  type FakeServer,
  ollamaChat,
  ollamaStream,
  REJECTED_CALL,
  responsesBody,
  responsesStream,
  type Script,
  sseData,
  startFakeLlmServer,
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

/** Runs `use` against a server answering `script`, with a guarded fetch (`retry` times). */
const scripted = <T>(
  script: Script,
  retry: number,
  use: (server: FakeServer, f: typeof fetch, seen: GateEvent[]) => Promise<T>,
) => withGuardedServer(script, { retry }, use);

/** The verdict hook saw a rejected first attempt that was retried, then an allowed second one. */
function assertAttempts(seen: GateEvent[]): void {
  assert.deepEqual(seen.map((e) => [e.attempt, e.verdict.allowed, e.retried ?? false]), [
    [0, false, true],
    [1, true, false],
  ]);
  assert.equal(seen[0].verdict.calls[0].findings[0].code, "argument_constraint");
}

const openai = (s: FakeServer, f: typeof fetch) =>
  new OpenAI({ apiKey: "k", baseURL: `${s.url}/v1`, fetch: f, maxRetries: 0 });
const anthropic = (s: FakeServer, f: typeof fetch) =>
  new Anthropic({ apiKey: "k", baseURL: s.url, fetch: f, maxRetries: 0 });

/** The Anthropic SDK's message stream of the weather question with the tools, through the guarded fetch. */
const anthropicAsk = (s: FakeServer, f: typeof fetch) =>
  anthropic(s, f).messages.stream({ model: "m", max_tokens: 100, messages, tools: TOOLS_ANTHROPIC as never });
/** The same question answered whole (`messages.create`), through the guarded fetch. */
const anthropicCreate = (s: FakeServer, f: typeof fetch) =>
  anthropic(s, f).messages.create({ model: "m", max_tokens: 100, messages, tools: TOOLS_ANTHROPIC as never });

/**
 * The openai SDK's Responses stream of the weather question with the tools, through the guarded fetch:
 * each event to `onEvent` as it comes, then the final response.
 */
async function responsesAsk(
  s: FakeServer,
  f: typeof fetch,
  onEvent: (e: OpenAI.Responses.ResponseStreamEvent) => void = () => {},
): Promise<OpenAI.Responses.Response> {
  const stream = openai(s, f).responses.stream({
    model: "m",
    input: "Weather?",
    tools: TOOLS_RESPONSES as never,
  });
  for await (const e of stream) onEvent(e);
  return await stream.finalResponse();
}

/** The rejected call written into the text, as a model without native calls writes it (Hermes tags). */
const WRITTEN = `<tool_call>\n${JSON.stringify({ name: BAD.name, arguments: BAD.args })}\n</tool_call>`;

/** Cohere v2 stream events: a text content block at `index`, and the message's start and end. */
const cohereBlock = (index: number, text: string) => [
  { type: "content-start", index, delta: { message: { content: { type: "text", text: "" } } } },
  { type: "content-delta", index, delta: { message: { content: { text } } } },
  { type: "content-end", index },
];
const COHERE_START = { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } };
const COHERE_END = { type: "message-end", delta: { finish_reason: "COMPLETE" } };
/** Cohere v2 stream events that end a message with `call`, the message's tool call 0. */
const cohereCallEnd = (call: CallSpec) => [
  {
    type: "tool-call-start",
    index: 0,
    delta: {
      message: {
        tool_calls: {
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.args) },
        },
      },
    },
  },
  { type: "tool-call-end", index: 0 },
  { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
];

/** Posts a streamed Cohere v2 chat through the guarded fetch `f`; the stream as the client got it. */
async function cohereStreamed(s: FakeServer, f: typeof fetch): Promise<string> {
  const res = await f(`${s.url}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  return await res.text();
}

test("guardFetch retry: OpenAI chat, the client gets the corrected call; the follow-up carries a tool message", async () => {
  const { value, server, seen } = await scripted(
    [{ json: chatCompletion(null, [BAD]) }, { json: chatCompletion(null, [GOOD]) }],
    1,
    (s, f) => openai(s, f).chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never }),
  );
  const call = value.choices[0].message.tool_calls?.[0];
  assert.deepEqual(call?.type === "function" ? JSON.parse(call.function.arguments) : null, { city: "Oslo" });
  assert.equal(value.choices[0].finish_reason, "tool_calls");
  assert.equal(server.requests.length, 2);
  const sent = server.requests[1].json as { messages: Record<string, unknown>[] };
  assert.deepEqual(sent.messages.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal((sent.messages[1].tool_calls as { id: string }[])[0].id, "call_bad");
  assert.equal(sent.messages[2].tool_call_id, "call_bad");
  assert.match(String(sent.messages[2].content), /units/);
  assertAttempts(seen);
});

test("guardFetch retry: OpenAI chat stream, text already forwarded stays and the retry's call follows", async () => {
  const { value, server, seen } = await scripted(
    [{ sse: chatStream(["Let me check. "], [BAD]) }, { sse: chatStream([], [GOOD]) }],
    1,
    (s, f) =>
      openai(s, f).chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
        .finalChatCompletion(),
  );
  const calls = value.choices[0].message.tool_calls ?? [];
  assert.deepEqual(
    calls.map((c) => c.type === "function" ? [c.id, JSON.parse(c.function.arguments)] : null),
    [["call_good", { city: "Oslo" }]],
  );
  assert.equal(value.choices[0].message.content, "Let me check. ");
  assert.equal(value.choices[0].finish_reason, "tool_calls");
  assert.equal(server.requests.length, 2);
  assertAttempts(seen);
});

test("guardFetch retry: OpenAI chat stream of two answers, the other answer ends before the retry", async () => {
  // Choice 0's call is rejected and retried; choice 1's finish came after the call and was held, and the
  // retry dropped it: the openai SDK's finalChatCompletion() threw "missing finish_reason for choice 1"
  // (fuzz chat retry seeds 29, 32, 56, 105, 204).
  const first = chatStream(["Let me check. "], [BAD]) as Record<string, unknown>[];
  const done = first.pop()!; // [DONE]
  first.push(choiceChunk(1, { role: "assistant", content: "It is " }), choiceChunk(1, { content: "cold." }));
  first.push(choiceChunk(1, {}, "stop"), done);
  const { value } = await scripted(
    [{ sse: first }, { sse: chatStream([], [GOOD]) }],
    1,
    (s, f) =>
      openai(s, f).chat.completions.stream({ model: "m", n: 2, messages, tools: TOOLS_OPENAI as never })
        .finalChatCompletion(),
  );
  assert.equal(value.choices[0].message.tool_calls?.[0].id, "call_good");
  assert.equal(value.choices[1].message.content, "It is cold.");
  assert.equal(value.choices[1].finish_reason, "stop");
});

test("guardFetch retry: OpenAI chat stream, text the watch held after the rejected call's first chunk reaches the client before the retry", async () => {
  // Call-shaped JSON after the call began is held as a possible written call; beside the native call it is
  // the answer's text, sent back in the retry's turn: it was dropped with the call, so the client lacked
  // what the model was told it said.
  const json = '{"name": "search", "arguments": {"query": "notes"}}';
  const first = chatStream([], [BAD]);
  first.splice(first.length - 2, 0, chatChunk({ content: json }));
  const { value, server, seen } = await scripted(
    [{ sse: first }, { sse: chatStream([], [GOOD]) }],
    1,
    async (s, f) => {
      const stream = openai(s, f).chat.completions.stream({
        model: "m",
        messages,
        tools: TOOLS_OPENAI as never,
      });
      const deltas: string[] = [];
      stream.on("content.delta", (e) => deltas.push(e.delta));
      return { deltas, final: await stream.finalChatCompletion() };
    },
  );
  const message = value.final.choices[0].message;
  assert.equal(message.content, json);
  assert.deepEqual(value.deltas.filter((d) => d !== ""), [json]);
  assert.deepEqual((message.tool_calls ?? []).map((c) => c.id), ["call_good"]);
  const sent = server.requests[1].json as { messages: Record<string, unknown>[] };
  assert.equal(sent.messages[1].content, json);
  assertAttempts(seen);
});

test("guardFetch retry: every attempt rejected ends in today's clean stop", async () => {
  const { value, server, seen } = await scripted(
    [{ sse: chatStream(["Hm. "], [BAD]) }],
    2,
    (s, f) =>
      openai(s, f).chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
        .finalChatCompletion(),
  );
  assert.equal(server.requests.length, 3);
  assert.equal(value.choices[0].message.tool_calls?.length ?? 0, 0);
  assert.equal(value.choices[0].finish_reason, "stop");
  assert.match(value.choices[0].message.content ?? "", /^Hm\. [\s\S]*units/);
  assert.deepEqual(seen.map((e) => [e.attempt, e.retried ?? false]), [[0, true], [1, true], [2, false]]);
  // Each follow-up appends to the last one: the second carries both rejected turns.
  const last = server.requests[2].json as { messages: unknown[] };
  assert.equal(last.messages.length, 5);
});

test("guardFetch retry: a follow-up whose connection is reset, or that gets an HTTP error, leaves today's clean stop, JSON and stream", async () => {
  for (const failed of [{ reset: true as const }, { status: 503, json: { error: "overloaded" } }]) {
    const json = await scripted(
      [{ json: chatCompletion("Hm.", [BAD]) }, failed],
      1,
      (s, f) => openai(s, f).chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never }),
    );
    const stream = await scripted(
      [{ sse: chatStream(["Hm."], [BAD]) }, failed],
      1,
      (s, f) =>
        openai(s, f).chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
          .finalChatCompletion(),
    );
    for (const { value, server, seen } of [json, stream]) {
      // (the runtime's HTTP client may send a request again once on a reused connection that was reset)
      assert.ok(server.requests.length >= 2, "the follow-up was sent");
      assert.equal(value.choices[0].message.tool_calls?.length ?? 0, 0);
      assert.equal(value.choices[0].finish_reason, "stop");
      assert.match(value.choices[0].message.content ?? "", /^Hm\.[\s\S]*units/);
      // (no retry took its place: a body's event said `retried`, where a stream's, rightly, did not)
      assert.deepEqual(seen.map((e) => [e.attempt, e.verdict.allowed, e.retried ?? false]), [[
        0,
        false,
        false,
      ]]);
    }
  }
});

test("guardFetch retry: a JSON answer's follow-up aborted by the caller rejects with the abort, as fetch does", async () => {
  // A follow-up that fails leaves the clean stop, but not one the caller aborted: the guarded fetch
  // resolved with the first answer, and the openai SDK returned it as if nothing had been asked to stop.
  const controller = new AbortController();
  const script: Script = (_, n) => {
    if (n === 0) return { json: chatCompletion("Hm.", [BAD]) };
    controller.abort();
    return { reset: true };
  };
  await assert.rejects(
    scripted(script, 1, (s, f) =>
      openai(s, f).chat.completions.create(
        { model: "m", messages, tools: TOOLS_OPENAI as never },
        { signal: controller.signal },
      )),
    (e: Error) => e instanceof OpenAI.APIUserAbortError,
  );
});

test("guardFetch retry: a stream's follow-up aborted by the caller ends the stream with the abort, no clean stop after it", async () => {
  // (the follow-up's abort was read as a failed retry: the openai SDK, its own abort already asked, was
  // handed the rejected call's reason and a stop after it)
  const controller = new AbortController();
  const script: Script = (_, n) => {
    if (n === 0) return { sse: chatStream(["It is sunny in Oslo today.\n"], [BAD]) };
    controller.abort();
    return { reset: true };
  };
  const { value, seen } = await scripted(script, 1, async (s, f) => {
    const stream = await openai(s, f).chat.completions.create(
      { model: "m", messages, tools: TOOLS_OPENAI as never, stream: true },
      { signal: controller.signal },
    );
    const got = { text: "", finish: [] as string[] };
    for await (const chunk of stream) {
      got.text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.finish_reason) got.finish.push(chunk.choices[0].finish_reason);
    }
    return got;
  });
  assert.deepEqual(value, { text: "It is sunny in Oslo today.\n", finish: [] });
  // (judged all the same, as a JSON answer's is; no retry took its place)
  assert.deepEqual(seen.map((e) => [e.attempt, e.verdict.allowed, e.retried ?? false]), [[0, false, false]]);
});

test("guardFetch retry: OpenAI Responses, the follow-up carries function_call_output", async () => {
  const { value, server, seen } = await scripted(
    [{ json: responsesBody(null, [BAD]) }, { json: responsesBody(null, [GOOD]) }],
    1,
    (s, f) =>
      openai(s, f).responses.create({ model: "m", input: "Weather?", tools: TOOLS_RESPONSES as never }),
  );
  assert.deepEqual(value.output.map((o) => o.type === "function_call" ? o.call_id : o.type), ["call_good"]);
  const sent = server.requests[1].json as { input: Record<string, unknown>[] };
  assert.deepEqual(sent.input.map((i) => i.type ?? i.role), [
    "user",
    "function_call",
    "function_call_output",
  ]);
  assert.equal(sent.input[2].call_id, "call_bad");
  assertAttempts(seen);
});

test("guardFetch retry: Anthropic, the follow-up carries tool_result with is_error", async () => {
  const { value, server, seen } = await scripted(
    [{ json: anthropicMessage("Checking.", [BAD]) }, { json: anthropicMessage(null, [GOOD]) }],
    1,
    anthropicCreate,
  );
  assert.deepEqual(value.content.map((b) => b.type === "tool_use" ? b.id : b.type), ["call_good"]);
  const sent = server.requests[1].json as {
    messages: { role: string; content: Record<string, unknown>[] }[];
  };
  assert.deepEqual(sent.messages.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(sent.messages[2].content.map((b) => [b.type, b.tool_use_id, b.is_error]), [
    ["tool_result", "call_bad", true],
  ]);
  assertAttempts(seen);
});

test("guardFetch retry: Anthropic stream, the SDK assembles one message: forwarded text, then the retry's call", async () => {
  const { value, server, seen } = await scripted(
    [{ sse: anthropicStream(["Checking."], [BAD]), named: true }, {
      sse: anthropicStream(["Again."], [GOOD]),
      named: true,
    }],
    1,
    (s, f) => anthropicAsk(s, f).finalMessage(),
  );
  assert.deepEqual(
    value.content.map((b) =>
      b.type === "tool_use" ? [b.id, b.input] : [b.type, b.type === "text" ? b.text : ""]
    ),
    // (the retry's block opens with a blank line: its text would run on from "Checking.")
    [["text", "Checking."], ["text", "\n\nAgain."], ["call_good", { city: "Oslo" }]],
  );
  assert.equal(value.stop_reason, "tool_use");
  assert.equal(server.requests.length, 2);
  assertAttempts(seen);
});

test("guardFetch retry: an Anthropic stream whose text the watch held before the call resumes after the blocks the client has", async () => {
  // The watch holds from a marker in block 0 on, block 1 (text) with it; the rejected call is block 2. The
  // held blocks go out before the retry, which is numbered after them: filed where the SDK has no block, its
  // call lost its input.
  const first = anthropicStream(["Checking. <tool_call>"], [BAD]) as Record<string, unknown>[];
  const at = first.findIndex((e) => e.type === "ping");
  const renumber = (e: Record<string, unknown>) =>
    typeof e.index === "number" && e.index >= 1 ? { ...e, index: e.index + 1 } : e;
  const more = [
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: " More." } },
    { type: "content_block_stop", index: 1 },
  ];
  const sse = [...first.slice(0, at), ...more, ...first.slice(at).map(renumber)];
  const { value, server } = await scripted(
    [{ sse, named: true }, { sse: anthropicStream(["Again."], [GOOD]), named: true }],
    1,
    (s, f) => anthropicAsk(s, f).finalMessage(),
  );
  assert.equal(server.requests.length, 2);
  assert.deepEqual(
    value.content.filter((b) => b.type === "tool_use").map((b) => [b.id, b.input]),
    [["call_good", { city: "Oslo" }]],
  );
  assert.ok(value.content.some((b) => b.type === "text" && b.text === "\n\nAgain."));
  // The held prose goes out ahead of the retry, not dropped with the rejected call.
  assert.ok(value.content.some((b) => b.type === "text" && b.text.includes("Checking.")));
  assert.ok(value.content.some((b) => b.type === "text" && b.text === " More."));
});

test("guardFetch retry: Ollama, JSON and stream, the follow-up carries role tool", async () => {
  for (
    const reply of [(calls: CallSpec[]) => ({ json: ollamaChat("", calls) }), (calls: CallSpec[]) => ({
      ndjson: ollamaStream([], calls),
    })] as ((calls: CallSpec[]) => FakeReply)[]
  ) {
    const stream = "ndjson" in reply([BAD]);
    const { value, server, seen } = await scripted([reply([BAD]), reply([GOOD])], 1, async (s, f) => {
      const client = new Ollama({ host: s.url, fetch: f });
      if (!stream) return (await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never })).message;
      let message = { tool_calls: [] as unknown[] };
      for await (
        const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
      ) {
        if (part.message.tool_calls?.length) message = { tool_calls: part.message.tool_calls };
      }
      return message;
    });
    assert.deepEqual(
      (value.tool_calls as { function: unknown }[]).map((c) => c.function),
      [{ name: "get_weather", arguments: { city: "Oslo" } }],
    );
    const sent = server.requests[1].json as { messages: Record<string, unknown>[] };
    assert.deepEqual(sent.messages.map((m) => m.role), ["user", "assistant", "tool"]);
    assert.equal(sent.messages[2].tool_name, "get_weather");
    assertAttempts(seen);
  }
});

test("guardFetch retry: Gemini, the follow-up carries functionResponse", async () => {
  const body = (args: unknown) => ({
    candidates: [{
      content: { role: "model", parts: [{ functionCall: { name: "get_weather", args } }] },
      finishReason: "STOP",
    }],
  });
  const tools = [{ functionDeclarations: TOOLS_RESPONSES }];
  const { value, server, seen } = await scripted(
    [{ json: body(BAD.args) }, { json: body(GOOD.args) }],
    1,
    async (s, f) => {
      const res = await f(`${s.url}/v1beta/models/g:generateContent`, {
        method: "POST",
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools }),
      });
      return await res.json();
    },
  );
  assert.deepEqual(value, body(GOOD.args));
  const sent = server.requests[1].json as { contents: { role: string; parts: Record<string, unknown>[] }[] };
  assert.deepEqual(sent.contents.map((c) => c.role), ["user", "model", "user"]);
  const response = sent.contents[2].parts[0].functionResponse as {
    name: string;
    response: { error: string };
  };
  assert.equal(response.name, "get_weather");
  assert.match(response.response.error, /units/);
  assertAttempts(seen);
});

test("guardFetch retry: Cohere v2, the follow-up carries a tool message", async () => {
  const body = (args: unknown, id: string) => ({
    id: "c",
    finish_reason: "TOOL_CALL",
    message: {
      role: "assistant",
      tool_plan: "I will check.",
      tool_calls: [{
        id,
        type: "function",
        function: { name: "get_weather", arguments: JSON.stringify(args) },
      }],
    },
  });
  const { value, server, seen } = await scripted(
    [{ json: body(BAD.args, "call_bad") }, { json: body(GOOD.args, "call_good") }],
    1,
    async (s, f) => {
      const res = await f(`${s.url}/v2/chat`, {
        method: "POST",
        body: JSON.stringify({ model: "command", messages, tools: TOOLS_OPENAI }),
      });
      return await res.json();
    },
  );
  assert.equal(value.message.tool_calls[0].id, "call_good");
  const sent = server.requests[1].json as { messages: Record<string, unknown>[] };
  assert.deepEqual(sent.messages.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(sent.messages[2].tool_call_id, "call_bad");
  assertAttempts(seen);
});

test("guardFetch retry: a Cohere stream's retry numbers its content blocks after the client's", async () => {
  // A client files a content block by its index: the retry's block 0 must not land in the first attempt's.
  const frames = (text: string, call: CallSpec) => [
    COHERE_START,
    ...cohereBlock(0, text),
    ...cohereCallEnd(call),
  ];
  const { value, seen } = await scripted(
    [{ sse: frames("Let me look.", BAD), named: true }, {
      sse: frames("Checking again.", GOOD),
      named: true,
    }],
    1,
    cohereStreamed,
  );
  const events = sseData(value);
  assert.deepEqual(cohereBlockTexts(events), ["Let me look.", "\n\nChecking again."]);
  assert.equal(events.filter((e) => e.type === "message-start").length, 1);
  assert.deepEqual(events.filter((e) => e.type === "tool-call-start").map((e) => e.index), [0]);
  assert.match(value, /event: content-start\ndata: \{"type":"content-start","index":1/);
  assertAttempts(seen);
});

test("guardFetch retry: a Cohere stream's second retry numbers its blocks after the client's too", async () => {
  // The first retry's answer brought no block (a call alone): the second retry's blocks were numbered from 0
  // again, and its first block landed in the client's block 0 (fuzz cohere retry seeds 17, 39, 70, 80, 98).
  const { value, seen } = await scripted(
    [
      { sse: [COHERE_START, ...cohereBlock(0, "Let me look."), ...cohereCallEnd(BAD)], named: true },
      { sse: [COHERE_START, ...cohereCallEnd(BAD)], named: true },
      { sse: [COHERE_START, ...cohereBlock(0, "Checking again."), ...cohereCallEnd(GOOD)], named: true },
    ],
    2,
    cohereStreamed,
  );
  const events = sseData(value);
  assert.deepEqual(cohereBlockTexts(events), ["Let me look.", "\n\nChecking again."]);
  assert.deepEqual(events.filter((e) => e.type === "content-start").map((e) => e.index), [0, 1]);
  assert.deepEqual(seen.map((e) => [e.attempt, e.verdict.allowed]), [[0, false], [1, false], [2, true]]);
});

test("guardFetch retry: a Cohere stream whose written call begins at a block's end resumes after the blocks the client has", async () => {
  // The call's start is held across the end of block 0, and block 1's start with it: the retry's blocks
  // were numbered after block 1, which the client never got (a gap where a client files blocks by index).
  const { value, seen } = await scripted(
    [
      {
        sse: [
          COHERE_START,
          ...cohereBlock(0, "Let me look.\n" + WRITTEN.slice(0, 10)),
          ...cohereBlock(1, WRITTEN.slice(10)),
          COHERE_END,
        ],
        named: true,
      },
      { sse: [COHERE_START, ...cohereBlock(0, "Checking again."), COHERE_END], named: true },
    ],
    1,
    cohereStreamed,
  );
  assert.deepEqual(cohereBlockTexts(sseData(value)), ["Let me look.\n", "Checking again."]);
  assert.deepEqual(seen.map((e) => [e.attempt, e.verdict.allowed, e.retried ?? false]), [[0, false, true]]);
});

test("guardFetch retry: the blocks a client holds open when a written call is retried end before the retry's, Anthropic and Cohere", async () => {
  // The end of the block the call was written into is held with the call and dropped with it: the block
  // stayed open, and a client that ends a text part at its block's end (the Anthropic SDK's `contentBlock`,
  // the AI SDK's text-end) never ended it.
  const { value, server } = await scripted(
    [{ sse: anthropicStream(["Let me look.\n", WRITTEN]), named: true }, {
      sse: anthropicStream(["Again."], [GOOD]),
      named: true,
    }],
    1,
    async (s, f) => {
      const stream = anthropicAsk(s, f);
      const ended: string[] = [];
      stream.on("contentBlock", (b) => ended.push(b.type === "text" ? b.text : b.type));
      const final = await stream.finalMessage();
      return { ended, final };
    },
  );
  assert.equal(server.requests.length, 2);
  const content = value.final.content.map((b) => b.type === "text" ? b.text : b.type);
  assert.deepEqual(content, ["Let me look.\n", "Again.", "tool_use"]);
  assert.deepEqual(value.ended, content);
  const { value: text } = await scripted(
    [
      { sse: [COHERE_START, ...cohereBlock(0, "Let me look.\n" + WRITTEN), COHERE_END], named: true },
      { sse: [COHERE_START, ...cohereBlock(0, "Checking again."), COHERE_END], named: true },
    ],
    1,
    cohereStreamed,
  );
  const blocks = sseData(text).filter((e) => /^content-(start|end)$/.test(e.type)).map((e) =>
    `${e.type} ${e.index}`
  );
  assert.deepEqual(blocks, ["content-start 0", "content-end 0", "content-start 1", "content-end 1"]);
});

test("guardFetch retry: a call written at the start of an Anthropic text block takes the block with it when retried", async () => {
  // The block's start went out before its text turned out to be the call: the client kept an empty text
  // block, which the API refuses in the message sent back. Anthropic sends a ping after a block's start.
  const written = `<tool_call>\n${JSON.stringify({ name: BAD.name, arguments: BAD.args })}\n</tool_call>`;
  const first = (anthropicStream([written]) as Record<string, unknown>[]).filter((e) => e.type !== "ping");
  first.splice(2, 0, { type: "ping" });
  const shown = (b: Anthropic.ContentBlock) =>
    b.type === "text" ? b.text : b.type === "tool_use" ? b.id : b.type;
  for (
    const [retry, want] of [
      [anthropicStream(["Again."], [GOOD]), ["Again.", "call_good"]],
      [anthropicStream([], [GOOD]), ["call_good"]],
    ] as const
  ) {
    const { value, server } = await scripted(
      [{ sse: first, named: true }, { sse: [...retry], named: true }],
      1,
      (s, f) => anthropicAsk(s, f).finalMessage(),
    );
    assert.equal(server.requests.length, 2);
    assert.deepEqual(value.content.map(shown), [...want]);
  }
  // Text the block gets all the same (prose held before the call; the reason, without a retry) goes into it.
  const prose = (anthropicStream([`{"x": 1}` + written]) as Record<string, unknown>[]).filter((e) =>
    e.type !== "ping"
  );
  prose.splice(2, 0, { type: "ping" });
  for (
    const [sse, retries, want] of [
      [prose, 1, [`{"x": 1}`, "\n\nAgain.", "call_good"]],
      [first, 0, [/did not run/]],
    ] as const
  ) {
    const { value } = await scripted(
      [{ sse: [...sse], named: true }, { sse: anthropicStream(["Again."], [GOOD]), named: true }],
      retries,
      (s, f) => anthropicAsk(s, f).finalMessage(),
    );
    const got = value.content.map(shown);
    assert.equal(got.length, want.length, JSON.stringify(got));
    want.forEach((w, i) => typeof w === "string" ? assert.equal(got[i], w) : assert.match(got[i], w));
  }
});

test("guardFetch retry: an Anthropic stream retried twice after written calls numbers each retry after the client's blocks", async () => {
  // The second retry was placed by the first retry's own blocks, not the client's: its text went into the
  // client's block 1, and its call's input into a text block.
  const { value, server } = await scripted(
    [
      { sse: anthropicStream(["Hi.\n", WRITTEN]), named: true },
      { sse: anthropicStream(["Again.\n", WRITTEN]), named: true },
      { sse: anthropicStream(["Third."], [GOOD]), named: true },
    ],
    2,
    (s, f) => anthropicAsk(s, f).finalMessage(),
  );
  assert.equal(server.requests.length, 3);
  assert.deepEqual(
    value.content.map((b) => b.type === "text" ? b.text : b.type === "tool_use" ? [b.id, b.input] : b.type),
    ["Hi.\n", "Again.\n", "Third.", ["call_good", { city: "Oslo" }]],
  );
});

test("guardFetch retry: off by default", async () => {
  const { server } = await scripted(
    [{ json: chatCompletion(null, [BAD]) }, { json: chatCompletion(null, [GOOD]) }],
    0,
    (s, f) => openai(s, f).chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never }),
  );
  assert.equal(server.requests.length, 1);
});

test("guardFetch retry: an OpenAI Responses stream is resumed: one response, indices and sequence numbers continuing", async () => {
  const types: { type: string; sequence_number: number; output_index?: number }[] = [];
  const { value, server, seen } = await scripted(
    [{ sse: responsesStream(["Checking."], [BAD]), named: true }, {
      sse: responsesStream([], [GOOD]),
      named: true,
    }],
    1,
    (s, f) => responsesAsk(s, f, (e) => types.push(e as never)),
  );
  assert.equal(server.requests.length, 2);
  assert.deepEqual(value.output.map((o) => o.type === "function_call" ? o.call_id : o.type), [
    "message",
    "call_good",
  ]);
  const seqs = types.map((e) => e.sequence_number);
  assert.deepEqual(seqs, seqs.map((_, i) => i)); // one numbering, no gap, no repeat
  assert.deepEqual(
    types.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index),
    [0, 1],
  );
  assert.equal(types.filter((e) => e.type === "response.created").length, 1);
  assert.equal(types.some((e) => JSON.stringify(e).includes("call_bad")), false);
  const sent = server.requests[1].json as { input: Record<string, unknown>[] };
  assert.deepEqual(sent.input.map((i) => i.type ?? i.role), [
    "user",
    "message",
    "function_call",
    "function_call_output",
  ]);
  assertAttempts(seen);
});

test("guardFetch retry: text held as a possible written call before a rejected native call reaches the client ahead of the retry", async () => {
  // A message that opens with call-shaped JSON is held until judged; beside native calls it is prose. The
  // retry dropped it with the rejected call, yet continued the client's output after it: the openai SDK
  // threw on the gap ("missing output at index 1"), and the Anthropic text was lost.
  const json = '{"name": "search", "arguments": {"query": "notes"}}';
  const { value, seen } = await scripted(
    [{ sse: responsesStream([json], [BAD]), named: true }, { sse: responsesStream([], [GOOD]), named: true }],
    1,
    async (s, f) => {
      let streamed = "";
      const final = await responsesAsk(s, f, (e) => {
        if (e.type === "response.output_text.delta") streamed += e.delta;
      });
      return { streamed, final };
    },
  );
  assert.equal(value.streamed, json);
  assert.equal(value.final.output_text, json);
  assert.deepEqual(
    value.final.output.map((o) => o.type === "function_call" ? o.call_id : o.type),
    ["message", "call_good"],
  );
  assertAttempts(seen);
  const { value: message } = await scripted(
    [{ sse: anthropicStream([json], [BAD]), named: true }, { sse: anthropicStream([], [GOOD]), named: true }],
    1,
    (s, f) => anthropicAsk(s, f).finalMessage(),
  );
  assert.deepEqual(message.content.map((b) => b.type === "text" ? b.text : b.type), [json, "tool_use"]);
});

test("guardFetch retry: a Responses stream whose held text went out before the retry numbers the retry after it", async () => {
  // Text held as a possible written call beside a rejected native call goes out ahead of the retry, sent
  // by the gate, not the router: the retry was numbered after the router's last event, before that text,
  // and the client got sequence numbers going back (3, 4, … after 13).
  const json = '{"name": "search", "arguments": {"query": "notes"}}';
  const events: { type: string; sequence_number: number }[] = [];
  const { value, server } = await scripted(
    [{ sse: responsesStream([json], [BAD]), named: true }, { sse: responsesStream([], [GOOD]), named: true }],
    1,
    (s, f) => responsesAsk(s, f, (e) => events.push(e as never)),
  );
  assert.equal(server.requests.length, 2);
  assert.deepEqual(
    value.output.map((o) => o.type === "function_call" ? o.call_id : o.type),
    ["message", "call_good"],
  );
  const seqs = events.map((e) => e.sequence_number);
  assert.deepEqual(seqs, seqs.map((_, i) => i)); // one numbering, no gap, no repeat
});

test("guardFetch retry: Gemini streamGenerateContent?alt=sse, the retry's chunks follow the forwarded text", async () => {
  const chunk = (parts: unknown[]) => ({ candidates: [{ content: { role: "model", parts }, index: 0 }] });
  const tools = [{ functionDeclarations: TOOLS_RESPONSES }];
  const { value, server, seen } = await scripted(
    [
      {
        sse: [
          chunk([{ text: "Let me look." }]),
          chunk([{ functionCall: { name: "get_weather", args: BAD.args } }]),
        ],
      },
      { sse: [chunk([{ functionCall: { name: "get_weather", args: GOOD.args } }])] },
    ],
    1,
    async (s, f) => {
      const res = await f(`${s.url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
        method: "POST",
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools }),
      });
      return sseData(await res.text());
    },
  );
  const parts = value.flatMap((e: { candidates: { content: { parts: unknown[] } }[] }) =>
    e.candidates[0].content.parts
  );
  assert.deepEqual(parts, [{ text: "Let me look." }, {
    functionCall: { name: "get_weather", args: GOOD.args },
  }]);
  assert.equal(server.requests.length, 2);
  assertAttempts(seen);
});

test("guardFetch retry: a Responses stream rejected on every attempt ends in one clean response", async () => {
  const events: { type: string; sequence_number: number }[] = [];
  const { value, server } = await scripted(
    [{ sse: responsesStream(["Checking."], [BAD]), named: true }],
    1,
    (s, f) => responsesAsk(s, f, (e) => events.push(e as never)),
  );
  assert.equal(server.requests.length, 2);
  // The first attempt's text, the retry's text (the scripted model says it again), then the reason.
  assert.deepEqual(value.output.map((o) => o.type), ["message", "message", "message"]);
  assert.match(JSON.stringify(value.output[2]), /units/);
  assert.equal(value.output.some((o) => o.type === "function_call"), false);
  const seqs = events.map((e) => e.sequence_number);
  assert.deepEqual(seqs, seqs.map((_, i) => i));
  assert.equal(events.filter((e) => e.type === "response.completed").length, 1);
});

test("guardFetch retry: a Responses conversation kept by the server continues from the rejected response", async () => {
  const { server } = await scripted(
    [{ json: { ...responsesBody(null, [BAD]), id: "resp_bad" } }, { json: responsesBody(null, [GOOD]) }],
    1,
    (s, f) =>
      openai(s, f).responses.create({
        model: "m",
        input: "And tomorrow?",
        previous_response_id: "resp_0",
        tools: TOOLS_RESPONSES as never,
      }),
  );
  const sent = server.requests[1].json as { previous_response_id: string; input: Record<string, unknown>[] };
  assert.equal(sent.previous_response_id, "resp_bad");
  assert.deepEqual(sent.input.map((i) => [i.type, i.call_id]), [["function_call_output", "call_bad"]]);
});

test("guardFetch retry: Anthropic, a text block of white space alone the model wrote is not sent back", async () => {
  // Only a block a call was cut from was trimmed (and dropped, left empty); the model's own blank block went
  // back as it came, beside a native call or a written one, and the API refuses a text block of white space
  // alone.
  const native = anthropicMessage(null, [BAD]);
  native.content = [{ type: "text", text: "\n" }, ...(native.content as unknown[])];
  const written = anthropicMessage(null);
  written.content = [{ type: "text", text: " " }, { type: "text", text: `Checking. ${WRITTEN}` }];
  for (const first of [native, written]) {
    const { server } = await scripted(
      [{ json: first }, { json: anthropicMessage(null, [GOOD]) }],
      1,
      anthropicCreate,
    );
    assert.equal(server.requests.length, 2);
    const sent = server.requests[1].json as { messages: { content: Record<string, unknown>[] }[] };
    const blocks = sent.messages[1].content;
    assert.ok(blocks.some((b) => b.type === "tool_use"), JSON.stringify(blocks));
    assert.deepEqual(blocks.filter((b) => b.type === "text" && String(b.text).trim() === ""), []);
  }
});

test("guardFetch retry: a Cohere stream's retried citations follow those the client has, in the blocks they are in", async () => {
  // A citation's `index` numbers the message's citations and its `content_index` names its block: the
  // retry's began at 0 again, naming the client's first citation and block 0, where its text is block 1.
  const cited = (text: string, call: CallSpec) => [
    COHERE_START,
    ...cohereBlock(0, text).slice(0, 2),
    {
      type: "citation-start",
      index: 0,
      delta: {
        message: { citations: { start: 0, end: 4, text: text.slice(0, 4), sources: [], content_index: 0 } },
      },
    },
    { type: "citation-end", index: 0 },
    ...cohereBlock(0, text).slice(2),
    ...cohereCallEnd(call),
  ];
  const { value } = await scripted(
    [{ sse: cited("Oslo is wet.", BAD), named: true }, { sse: cited("Bergen is dry.", GOOD), named: true }],
    1,
    cohereStreamed,
  );
  const events = sseData(value);
  // (the retry's block opens with a blank line, "wet." and "Bergen" would run together: its citation's
  // offsets, into the block's text, move past it)
  const blocks = cohereBlockTexts(events);
  assert.deepEqual(blocks, ["Oslo is wet.", "\n\nBergen is dry."]);
  const starts = events.filter((e) => e.type === "citation-start");
  assert.deepEqual(starts.map((e) => [e.index, e.delta.message.citations.content_index]), [[0, 0], [1, 1]]);
  const where = starts.map((e) => e.delta.message.citations);
  assert.deepEqual(where.map((c) => blocks[c.content_index].slice(c.start, c.end)), ["Oslo", "Berg"]);
  assert.deepEqual(events.filter((e) => e.type === "citation-end").map((e) => e.index), [0, 1]);
});

test("guardFetch retry: a Cohere citation that names no block is read as in the block it came in, and moves past that block's blank line", async () => {
  // Cohere's docs show citations without content_index (one text block, the offsets into its text) and
  // stream a block's citations between its start and its end: such a citation cites the last block
  // started. The retry's block led by a blank line had its indexed citations moved past it, but one without
  // index kept its offsets, two short: "Berg" was cited as "\n\nBe". One in a block after it stays.
  const citation = (index: number, start: number, text: string) => [{
    type: "citation-start",
    index,
    delta: { message: { citations: { start, end: start + text.length, text, sources: [] } } },
  }, { type: "citation-end", index }];
  const cited = (blocks: string[], call: CallSpec) => [
    COHERE_START,
    ...blocks.flatMap((text, i) => {
      const block = cohereBlock(i, text);
      return [
        ...block.slice(0, 2),
        ...citation(i, text.indexOf(text.trim()), text.trim().slice(0, 4)),
        block[2],
      ];
    }),
    ...cohereCallEnd(call),
  ];
  const { value } = await scripted(
    [
      { sse: cited(["Oslo is wet."], BAD), named: true },
      { sse: cited(["Bergen is dry.", " Also cold."], GOOD), named: true },
    ],
    1,
    cohereStreamed,
  );
  const events = sseData(value);
  const blocks = cohereBlockTexts(events);
  assert.deepEqual(blocks, ["Oslo is wet.", "\n\nBergen is dry.", " Also cold."]);
  const starts = events.filter((e) => e.type === "citation-start");
  assert.deepEqual(starts.map((e) => e.index), [0, 1, 2]);
  const where = starts.map((e) => e.delta.message.citations);
  assert.ok(where.every((c) => !("content_index" in c)));
  assert.deepEqual(where.map((c, i) => blocks[i].slice(c.start, c.end)), ["Oslo", "Berg", "Also"]);
});

/**
 * An OpenAI Responses stream of one message item per text (each one `output_text` part, streamed in one
 * delta), then `calls`: the events of `responsesStream` for each, numbered as one stream.
 */
function responsesMessages(texts: string[], calls: CallSpec[] = []): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  const output: unknown[] = [];
  const at = (e: Record<string, unknown>, oi: number, id: string): Record<string, unknown> => ({
    ...e,
    ...(typeof e.output_index === "number" ? { output_index: oi } : {}),
    ...(e.item_id !== undefined ? { item_id: id } : {}),
    ...(isItem(e.item) ? { item: { ...e.item, id } } : {}),
  });
  const isItem = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
  texts.forEach((text, oi) => {
    const one = responsesStream([text]) as Record<string, unknown>[];
    for (const e of one.slice(1, -1)) {
      const moved = at(e, oi, `msg_${oi}`);
      if (moved.type === "response.output_item.done") output.push(moved.item);
      events.push(moved);
    }
  });
  const tail = responsesStream([], calls) as Record<string, unknown>[];
  for (const e of tail.slice(1, -1)) {
    const moved = typeof e.output_index === "number"
      ? { ...e, output_index: e.output_index + texts.length }
      : e;
    if (moved.type === "response.output_item.done") output.push(moved.item);
    events.push(moved);
  }
  const last = tail[tail.length - 1] as { response: Record<string, unknown> };
  return [tail[0], ...events, { ...last, response: { ...last.response, output } }].map((e, i) => ({
    ...e,
    sequence_number: i,
  }));
}

test("guardFetch retry: a Responses message of white space alone before a message of only the written call goes with it, not left a gap the openai SDK throws on", async () => {
  // The blank message waits with the call's (a body drops a blank part); the retry dropped both but was
  // numbered after the blank one, and listed it in the final snapshot: "missing output at index 1".
  for (const blank of ["  ", " \n"]) {
    const events: { sequence_number: number }[] = [];
    const { value, server } = await scripted(
      [{ sse: responsesMessages([blank, WRITTEN]), named: true }, {
        sse: responsesStream(["Again."], [GOOD]),
        named: true,
      }],
      1,
      (s, f) => responsesAsk(s, f, (e) => events.push(e)),
    );
    assert.equal(server.requests.length, 2);
    assert.deepEqual(
      value.output.map((o) =>
        o.type === "function_call" ? o.call_id : o.type === "message" ? value.output_text : o
      ),
      ["Again.", "call_good"],
    );
    const seqs = events.map((e) => e.sequence_number);
    assert.deepEqual(seqs, seqs.map((_, i) => i));
  }
});

test("guardFetch retry: a Cohere citation of text the client keeps, held with a written call, reaches it before the retry's", async () => {
  // The citation came after the text it cites, in the frames held with the call: a rejection that ends the
  // turn sends it, a retry dropped it with the call, and the client held "Oslo is wet." uncited.
  const citation = (index: number, content_index: number, text: string, start: number) => [{
    type: "citation-start",
    index,
    delta: {
      message: { citations: { start, end: start + text.length, text, sources: [], content_index } },
    },
  }, { type: "citation-end", index }];
  const retried: unknown[] = [
    COHERE_START,
    ...cohereBlock(0, "Bergen is dry.").slice(0, 2),
    ...citation(0, 0, "Bergen", 0),
  ];
  retried.push(...cohereBlock(0, "").slice(2), ...cohereCallEnd(GOOD));
  for (const deltas of [["Oslo is wet. " + WRITTEN], ["Oslo is wet. ", WRITTEN]]) {
    const first: unknown[] = [COHERE_START, ...cohereBlock(0, "").slice(0, 1)];
    for (const text of deltas) first.push(...cohereBlock(0, text).slice(1, 2));
    first.push(...citation(0, 0, "Oslo", 0), ...cohereBlock(0, "").slice(2), COHERE_END);
    const { value, seen } = await scripted(
      [{ sse: first, named: true }, { sse: retried, named: true }],
      1,
      cohereStreamed,
    );
    assert.deepEqual(seen.map((e) => [e.attempt, e.verdict.allowed]), [[0, false], [1, true]]);
    const events = sseData(value);
    const blocks = cohereBlockTexts(events);
    assert.deepEqual(blocks, ["Oslo is wet. ", "Bergen is dry."]);
    const cited = events.filter((e) => e.type === "citation-start").map((e) => {
      const c = e.delta.message.citations;
      return [e.index, c.content_index, blocks[c.content_index].slice(c.start, c.end), c.text];
    });
    assert.deepEqual(cited, [[0, 0, "Oslo", "Oslo"], [1, 1, "Bergen", "Bergen"]], JSON.stringify(deltas));
    assert.deepEqual(events.filter((e) => e.type === "citation-end").map((e) => e.index), [0, 1]);
  }
});

test("guardFetch retry: a Cohere citation that names no block, of text the client keeps, held with a written call, reaches it too", async () => {
  // As with content_index (above), read as in the last block started (see the test of such a citation's
  // lead): without an index it was never counted as within the client's text, and a retry dropped it.
  const citation = (index: number, text: string) => [{
    type: "citation-start",
    index,
    delta: { message: { citations: { start: 0, end: text.length, text, sources: [] } } },
  }, { type: "citation-end", index }];
  const retried: unknown[] = [
    COHERE_START,
    ...cohereBlock(0, "Bergen is dry.").slice(0, 2),
    ...citation(0, "Bergen"),
    ...cohereBlock(0, "").slice(2),
    ...cohereCallEnd(GOOD),
  ];
  for (const deltas of [["Oslo is wet. " + WRITTEN], ["Oslo is wet. ", WRITTEN]]) {
    const first: unknown[] = [COHERE_START, ...cohereBlock(0, "").slice(0, 1)];
    for (const text of deltas) first.push(...cohereBlock(0, text).slice(1, 2));
    first.push(...citation(0, "Oslo"), ...cohereBlock(0, "").slice(2), COHERE_END);
    const { value } = await scripted(
      [{ sse: first, named: true }, { sse: retried, named: true }],
      1,
      cohereStreamed,
    );
    const events = sseData(value);
    const blocks = cohereBlockTexts(events);
    assert.deepEqual(blocks, ["Oslo is wet. ", "Bergen is dry."]);
    const cited = events.filter((e) => e.type === "citation-start").map((e, i) => {
      const c = e.delta.message.citations;
      return [e.index, blocks[i].slice(c.start, c.end), c.text];
    });
    assert.deepEqual(cited, [[0, "Oslo", "Oslo"], [1, "Bergen", "Bergen"]], JSON.stringify(deltas));
    assert.deepEqual(events.filter((e) => e.type === "citation-end").map((e) => e.index), [0, 1]);
  }
});

test("guardFetch retry: a Responses message added with its empty part already in it, its text only the written call, goes with the call", async () => {
  // A server may add a message with its `output_text` part in it (no `content_part.added`). Its start waits
  // with the call's text, as one of no part does, but the retry sent it out and closed it: the client held
  // a message of one empty part (of white space alone, where the text before the call was that).
  for (const before of ["", " "]) {
    const first =
      (responsesStream(before === "" ? [WRITTEN] : [before, WRITTEN]) as Record<string, unknown>[])
        .filter((e) => e.type !== "response.content_part.added")
        .map((e, i) => {
          const item = e.item as Record<string, unknown> | undefined;
          const brought = e.type === "response.output_item.added" && item?.type === "message";
          const part = { type: "output_text", text: "", annotations: [] };
          return { ...e, ...(brought ? { item: { ...item, content: [part] } } : {}), sequence_number: i };
        });
    const { value, server } = await scripted(
      [{ sse: first, named: true }, { sse: responsesStream(["Again."], [GOOD]), named: true }],
      1,
      (s, f) => responsesAsk(s, f),
    );
    assert.equal(server.requests.length, 2);
    assert.deepEqual(
      value.output.map((o) =>
        o.type === "message" ? o.content.map((p) => p.type === "output_text" ? p.text : p.type) : o.type
      ),
      [["Again."], "function_call"],
      JSON.stringify(before),
    );
  }
});

test("guardFetch retry: a Cohere stream's retried plan citations point into the retry's part of the client's plan", async () => {
  // The tool plan flows as it comes, so the client's plan is the first attempt's and then the retry's: a
  // retry's PLAN citation kept its offsets into its own plan, and named the first attempt's words. Its
  // `content_index` names no content block (the plan is none): it stays as the provider sent it.
  const planned = (plan: string, cite: string, call: CallSpec) => [
    COHERE_START,
    { type: "tool-plan-delta", delta: { message: { tool_plan: plan } } },
    ...cohereBlock(0, "Let me look."),
    {
      type: "citation-start",
      index: 0,
      delta: {
        message: {
          citations: {
            start: plan.indexOf(cite),
            end: plan.indexOf(cite) + cite.length,
            text: cite,
            type: "PLAN",
            content_index: 0,
          },
        },
      },
    },
    { type: "citation-end", index: 0 },
    ...cohereCallEnd(call),
  ];
  // (a plan ending mid-line has the retry's start a new paragraph, as a retry's text does: clients append
  // the plan's deltas, "I will look up Oslo.I will look up Bergen."; its citations move past the line too)
  for (
    const [first, expected] of [
      ["I will look up Oslo. ", "I will look up Oslo. I will look up Bergen."],
      ["I will look up Oslo.", "I will look up Oslo.\n\nI will look up Bergen."],
    ]
  ) {
    const { value, server } = await scripted(
      [
        { sse: planned(first, "Oslo", BAD), named: true },
        { sse: planned("I will look up Bergen.", "Bergen", GOOD), named: true },
      ],
      1,
      cohereStreamed,
    );
    const events = sseData(value);
    const plan = events.filter((e) => e.type === "tool-plan-delta").map((e) => e.delta.message.tool_plan)
      .join("");
    assert.equal(plan, expected);
    const cited = events.filter((e) => e.type === "citation-start").map((e) => e.delta.message.citations);
    assert.deepEqual(cited.map((c) => [c.text, plan.slice(c.start, c.end), c.content_index]), [
      ["Oslo", "Oslo", 0],
      ["Bergen", "Bergen", 0],
    ]);
    // (the follow-up sends back the plan the model wrote)
    assert.equal(
      (server.requests[1].json as { messages: { tool_plan?: string }[] }).messages.at(-2)?.tool_plan,
      first,
    );
  }
});

test("guardFetch retry: a Cohere retry's plan leaves the reason one blank line after the client's text, as before", async () => {
  // The plan stands ahead of the text (a body's reason reads it so): a retry's plan, come after the first
  // attempt's text, counted as the text's end, and a reason after "Let me look.\n" got two more line breaks.
  const planned = [
    COHERE_START,
    { type: "tool-plan-delta", delta: { message: { tool_plan: "I will call the tool now." } } },
    ...cohereCallEnd(BAD),
  ];
  const { value } = await scripted(
    [
      { sse: [COHERE_START, ...cohereBlock(0, "Let me look.\n"), ...cohereCallEnd(BAD)], named: true },
      { sse: planned, named: true },
    ],
    1,
    cohereStreamed,
  );
  const text = cohereBlockTexts(sseData(value)).join("");
  assert.match(text, /^Let me look\.\n\n\S/);
  // (a plan alone still leads the reason by one blank line, its own line break counted across its deltas)
  const split = [
    COHERE_START,
    { type: "tool-plan-delta", delta: { message: { tool_plan: "I will call" } } },
    { type: "tool-plan-delta", delta: { message: { tool_plan: " the tool.\n" } } },
    ...cohereCallEnd(BAD),
  ];
  const alone = await scripted([{ sse: split, named: true }, { sse: split, named: true }], 1, cohereStreamed);
  assert.match(cohereBlockTexts(sseData(alone.value)).join(""), /^\n\S/);
});

/** An SSE stream the provider sent at once, whole (its frames are `chatStream`'s). */
const answeredAtOnce = (frames: unknown[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      const text = frames.map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`).join("");
      c.enqueue(new TextEncoder().encode(text));
      c.close();
    },
  });

/** A judge that rejects every call, with the reason "REJECTED". */
const rejectAll = (calls: readonly { id: string; name: string }[]) => ({
  verdict: {
    allowed: false,
    blocked: true,
    rejectedIndices: calls.map((_, i) => i),
    calls: calls.map((c, index) => ({ index, id: c.id, name: c.name, allowed: false, findings: [] })),
  },
  reason: "REJECTED",
});

test("StreamGate retry: a retry's answer read whole as soon as it is made, from a provider that answered at once, writes its reason one blank line after the client's text", async () => {
  // The retry's reason reads what the client has (the record the retry step fills in once it has sent its
  // held text); a retry's stream read ahead before that record was whole wrote "Let me look.REJECTED". The
  // answer is gated only once the record is whole, so no reading ahead can pass it.
  const gate = new StreamGate("openai_chat", {
    judge: rejectAll,
    retry: () =>
      Promise.resolve({
        stream: (resume) => {
          const gated = new StreamGate("openai_chat", { judge: rejectAll, resume })
            .gate(answeredAtOnce(chatStream([], [BAD])));
          // (read whole at once, as a proxy that buffers would: its reason is written before it is forwarded)
          return new ReadableStream<Uint8Array>({
            async start(c) {
              c.enqueue(new Uint8Array(await new Response(gated).arrayBuffer()));
              c.close();
            },
          });
        },
        cancel: () => Promise.resolve(),
      }),
  });
  const text = await new Response(gate.gate(answeredAtOnce(chatStream(["Let me look."], [BAD])))).text();
  const content = sseData(text).map((e) => e.choices?.[0]?.delta?.content ?? "").join("");
  assert.equal(content, "Let me look.\n\nREJECTED");
});

/** `frames` of a Chat stream with each content chunk's tokens scored (`logprobs`), as `logprobs: true` asks. */
const scoredChat = (frames: unknown[]) =>
  frames.map((f) => {
    const choice = isChunk(f) ? f.choices[0] : undefined;
    const content = choice?.delta.content;
    if (typeof content !== "string" || content === "") return f;
    const token = {
      token: content,
      logprob: -0.1,
      bytes: [...new TextEncoder().encode(content)],
      top_logprobs: [],
    };
    return { ...(f as object), choices: [{ ...choice, logprobs: { content: [token], refusal: null } }] };
  });
const isChunk = (f: unknown): f is { choices: { delta: { content?: unknown } }[] } =>
  typeof f === "object" && f !== null && Array.isArray((f as { choices?: unknown }).choices);

test("guardFetch retry: a retry's text that would run on from the first attempt's words starts a new paragraph, OpenAI chat stream", async () => {
  // The openai SDK joins the content deltas: the retry's "Again." read "Let me look.Again.". A blank line
  // goes between them in a chunk of its own; text that already parts them, or a client text ending in white
  // space, gets none; nor does a stream that scores its tokens (a chunk of the gate's would be text no token
  // of `logprobs` stands for).
  const cases: [string[][], string, ((f: unknown[]) => unknown[])?][] = [
    [[["Let me look."], ["Again."]], "Let me look.\n\nAgain."],
    [[["Let me ", "look."], ["Again", "."], ["Done."]], "Let me look.\n\nAgain.\n\nDone."],
    [[["Let me look."], [" Again."]], "Let me look. Again."],
    [[["Let me look. "], ["Again."]], "Let me look. Again."],
    [[["Let me look.\n"], ["Again."]], "Let me look.\nAgain."],
    [[["Let me look."], ["Again."]], "Let me look.Again.", scoredChat],
  ];
  for (const [attempts, expected, shape = (f: unknown[]) => f] of cases) {
    const script = attempts.map((text, i) => ({
      sse: shape(chatStream(text, [i === attempts.length - 1 ? GOOD : BAD])),
    }));
    const { value, server } = await scripted(
      script,
      attempts.length - 1,
      (s, f) =>
        openai(s, f).chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
          .finalChatCompletion(),
    );
    assert.equal(value.choices[0].message.content, expected, JSON.stringify(attempts));
    assert.equal(value.choices[0].message.tool_calls?.[0].id, "call_good");
    assert.equal(server.requests.length, attempts.length);
  }
});

test("guardFetch retry: a retry's text that would run on from the first attempt's words starts a new paragraph, Ollama stream", async () => {
  // The ollama client hands out each chunk's content; an app joins them ("Let me look.Again.").
  for (
    const [attempts, expected, logprobs] of [
      [[["Let me look."], ["Again."]], "Let me look.\n\nAgain.", false],
      [[["Let me look."], ["\nAgain."]], "Let me look.\nAgain.", false],
      [[["Let me look."], ["Again."]], "Let me look.Again.", true],
    ] as [string[][], string, boolean][]
  ) {
    const script = attempts.map((text, i) => {
      const lines = ollamaStream(text, [i === attempts.length - 1 ? GOOD : BAD]) as Record<string, unknown>[];
      return {
        ndjson: logprobs ? lines.map((l) => ({ ...l, logprobs: [{ token: "x", logprob: -0.1 }] })) : lines,
      };
    });
    const { value } = await scripted(script, 1, async (s, f) => {
      const client = new Ollama({ host: s.url, fetch: f });
      let content = "";
      let calls = 0;
      for await (
        const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
      ) {
        content += part.message.content;
        calls += part.message.tool_calls?.length ?? 0;
      }
      return { content, calls };
    });
    assert.deepEqual(value, { content: expected, calls: 1 }, JSON.stringify(attempts));
  }
});

test("guardFetch retry: a retry's text that would run on from the first attempt's words starts a new paragraph, Gemini stream", async () => {
  // Chunks in the recorded shape (`candidates[0].content.parts`, `index`, `modelVersion`, `responseId`); a
  // client joins the parts' text (the genai SDK's `text`, the AI SDK's deltas): "Let me look.Again.".
  const chunk = (parts: unknown[], scored = false) => ({
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(scored ? { logprobsResult: { chosenCandidates: [], topCandidates: [] } } : {}),
    }],
    modelVersion: "gemini-2.5-flash",
    responseId: "r1",
  });
  const call = (args: unknown) => ({ functionCall: { name: "get_weather", args } });
  const tools = [{ functionDeclarations: TOOLS_RESPONSES }];
  for (
    const [scored, expected] of [[false, "Let me look.\n\nAgain."], [true, "Let me look.Again."]] as const
  ) {
    const { value } = await scripted(
      [
        { sse: [chunk([{ text: "Let me look." }], scored), chunk([call(BAD.args)])] },
        { sse: [chunk([{ text: "Again." }], scored), chunk([call(GOOD.args)])] },
      ],
      1,
      async (s, f) => {
        const res = await f(`${s.url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
          method: "POST",
          body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools }),
        });
        return sseData(await res.text());
      },
    );
    const parts = value.flatMap((e: { candidates: { content: { parts: Record<string, unknown>[] } }[] }) =>
      e.candidates[0].content.parts
    );
    assert.equal(parts.map((p: Record<string, unknown>) => p.text ?? "").join(""), expected);
    assert.deepEqual(parts.at(-1), call(GOOD.args));
    assert.ok(value.every((e: Record<string, unknown>) => e.responseId === "r1"));
  }
});

test("guardFetch retry: a retry's text that would run on from the first attempt's words starts a new paragraph, Anthropic stream", async () => {
  // The retry's text goes in a block of its own, but an app joins the blocks' text with nothing between
  // (the SDK's `text` events, printed as they come; `content.filter(text).map(b => b.text).join("")`):
  // "Let me look.Again.". The blank line opens the retry's block, in a delta of its own.
  const cases: [string[][], string][] = [
    [[["Let me look."], ["Again."]], "Let me look.\n\nAgain."],
    [[["Let me ", "look."], ["Again", "."], ["Done."]], "Let me look.\n\nAgain.\n\nDone."],
    [[["Let me look."], [" Again."]], "Let me look. Again."],
    [[["Let me look.\n"], ["Again."]], "Let me look.\nAgain."],
  ];
  for (const [attempts, expected] of cases) {
    const script = attempts.map((text, i) => ({
      sse: anthropicStream(text, [i === attempts.length - 1 ? GOOD : BAD]),
      named: true,
    }));
    const { value, server } = await scripted(script, attempts.length - 1, async (s, f) => {
      const stream = anthropicAsk(s, f);
      let streamed = "";
      stream.on("text", (delta) => streamed += delta);
      const message = await stream.finalMessage();
      return { streamed, message };
    });
    const blocks = value.message.content.flatMap((b) => b.type === "text" ? [b.text] : []);
    assert.equal(blocks.join(""), expected, JSON.stringify(attempts));
    assert.equal(value.streamed, expected);
    assert.equal(blocks.length, attempts.length);
    assert.deepEqual(
      value.message.content.filter((b) => b.type === "tool_use").map((b) => b.id),
      ["call_good"],
    );
    assert.equal(server.requests.length, attempts.length);
    // The follow-up sends back what the model wrote, not the gate's blank line.
    const sent = server.requests.at(-1)!.json as { messages: { content: unknown }[] };
    assert.doesNotMatch(JSON.stringify(sent.messages), /\\n\\nAgain/);
  }
});

/**
 * `events` of a Responses stream (`responsesStream`) with the message's part cited over `cite` (a URL
 * annotation: its offsets into the part's text), and its deltas scored when `scored`, numbered again.
 */
function responsesAnnotated(events: unknown[], cite: string, scored = false): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const annotate = (part: Record<string, unknown>) => {
    const at = String(part.text).indexOf(cite);
    const annotation = {
      type: "url_citation",
      start_index: at,
      end_index: at + cite.length,
      url: "u",
      title: "t",
    };
    return { ...part, annotations: [annotation] };
  };
  const item = (it: Record<string, unknown>) =>
    it.type === "message" ? { ...it, content: (it.content as Record<string, unknown>[]).map(annotate) } : it;
  for (const e of events as Record<string, unknown>[]) {
    if (e.type === "response.output_text.delta" && scored) {
      out.push({ ...e, logprobs: [{ token: e.delta, logprob: -0.1, top_logprobs: [] }] });
    } else if (e.type === "response.content_part.done") {
      const part = annotate(e.part as Record<string, unknown>);
      out.push({
        type: "response.output_text.annotation.added",
        item_id: e.item_id,
        output_index: e.output_index,
        content_index: e.content_index,
        annotation_index: 0,
        annotation: (part.annotations as unknown[])[0],
      });
      out.push({ ...e, part });
    } else if (e.type === "response.output_item.done") {
      out.push({ ...e, item: item(e.item as Record<string, unknown>) });
    } else if (e.type === "response.completed") {
      const response = e.response as { output: Record<string, unknown>[] };
      out.push({ ...e, response: { ...response, output: response.output.map(item) } });
    } else out.push(e);
  }
  return out.map((e, i) => ({ ...e, sequence_number: i }));
}

test("guardFetch retry: a retry's text that would run on from the first attempt's words starts a new paragraph, OpenAI Responses stream", async () => {
  // The retry's text goes in an item of its own, but the openai SDK's `output_text` joins every message's
  // text with nothing between, as an app printing the deltas does: "Let me look.Again.". The blank line
  // opens the retry's part in a delta of its own; the events that repeat the part's text (the `.done`s, the
  // final snapshot) tell it too, with the annotations' offsets into it moved past it; with the text watch
  // off as well. Scored deltas (`logprobs`) keep their text as it came.
  const cases: [string[][], string, { scored?: boolean; extract?: false }][] = [
    [[["Let me look."], ["Again."]], "Let me look.\n\nAgain.", {}],
    [[["Let me look."], ["Again."]], "Let me look.\n\nAgain.", { extract: false }],
    [[["Let me ", "look."], ["Again", "."], ["Done."]], "Let me look.\n\nAgain.\n\nDone.", {}],
    [[["Let me look."], [" Again."]], "Let me look. Again.", {}],
    [[["Let me look.\n"], ["Again."]], "Let me look.\nAgain.", {}],
    [[["Let me look."], ["Again."]], "Let me look.Again.", { scored: true }],
  ];
  for (const [attempts, expected, { scored, extract }] of cases) {
    const script = attempts.map((text, i) => ({
      sse: responsesAnnotated(
        responsesStream(text, [i === attempts.length - 1 ? GOOD : BAD]),
        text.join("").trim().slice(0, 4),
        scored,
      ),
      named: true,
    }));
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    const { value, server } = await withGuardedServer(
      script,
      { retry: attempts.length - 1, ...(extract === false ? { extract } : {}) },
      (s, f) => responsesAsk(s, f, (e) => events.push(e)),
    );
    const label = JSON.stringify([attempts, scored, extract]);
    assert.equal(value.output_text, expected, label);
    const deltas = events.flatMap((e) => e.type === "response.output_text.delta" ? [e.delta] : []);
    assert.equal(deltas.join(""), expected, label);
    const seqs = events.map((e) => e.sequence_number);
    assert.deepEqual(seqs, seqs.map((_, i) => i), label);
    assert.equal(server.requests.length, attempts.length);
    // Each part's annotation still names its own words.
    const parts = value.output.flatMap((o) => o.type === "message" ? o.content : []);
    assert.equal(parts.length, attempts.length, label);
    for (const [i, p] of parts.entries()) {
      assert.ok(p.type === "output_text");
      const a = p.annotations[0] as { start_index: number; end_index: number };
      assert.equal(p.text.slice(a.start_index, a.end_index), attempts[i].join("").trim().slice(0, 4), label);
    }
    // The events that repeat a part's text and its annotations tell them as the final snapshot does.
    const done = events.flatMap((e) => e.type === "response.output_text.done" ? [e.text] : []);
    assert.deepEqual(done, parts.map((p) => p.type === "output_text" ? p.text : undefined), label);
    const added = events.flatMap((e) =>
      e.type === "response.output_text.annotation.added" ? [e.annotation] : []
    );
    assert.deepEqual(added, parts.map((p) => p.type === "output_text" ? p.annotations[0] : undefined), label);
  }
});

test("guardFetch retry: a Responses retry whose text comes only in its .done events starts a new paragraph there too", async () => {
  // A server may send a part's text only whole: no output_text.delta, the text in output_text.done, the
  // part's and item's .done and the final snapshot (the openai SDK takes it from each). The retry's text
  // had no lead there: a client reading the .done events, or the final output_text, read "Let me
  // look.Again.". The events that repeat the part tell it with the line ahead, and the annotation's offsets
  // move past it, as when deltas bring the text; the gate writes no delta into a part the client was given
  // no delta of. Text that starts with white space, or after a line break, or scored, stays as it came.
  type Shape = "done" | "item" | "snapshot";
  const only = (events: Record<string, unknown>[], shape: Shape, scored: boolean) =>
    events.flatMap((e) => {
      const t = e.type as string;
      if (t === "response.output_text.delta") return [];
      if (
        shape !== "done" && (t === "response.output_text.done" || t === "response.content_part.done")
      ) return [];
      if (shape === "snapshot" && (t === "response.output_item.done" && isMessage(e.item))) return [];
      if (shape !== "done" && t === "response.output_text.annotation.added") return [];
      if (t === "response.output_text.done" && scored) {
        return [{ ...e, logprobs: [{ token: "A", logprob: -0.1 }] }];
      }
      return [e];
    }).map((e, i) => ({ ...e, sequence_number: i }));
  const isMessage = (item: unknown) => (item as { type?: string } | undefined)?.type === "message";
  const cases: [string, string, string, Shape, boolean][] = [
    ["Let me look.", "Again.", "Let me look.\n\nAgain.", "done", false],
    ["Let me look.", "Again.", "Let me look.\n\nAgain.", "item", false],
    ["Let me look.", "Again.", "Let me look.\n\nAgain.", "snapshot", false],
    ["Let me look.", " Again.", "Let me look. Again.", "done", false],
    ["Let me look.\n", "Again.", "Let me look.\nAgain.", "done", false],
    ["Let me look.", "Again.", "Let me look.Again.", "done", true],
  ];
  for (const [first, retry, expected, shape, scored] of cases) {
    const label = JSON.stringify([first, retry, shape, scored]);
    const script = [
      { sse: responsesAnnotated(responsesStream([first], [BAD]), "Let"), named: true },
      {
        sse: only(responsesAnnotated(responsesStream([retry], [GOOD]), "Again"), shape, scored),
        named: true,
      },
    ];
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    const { value } = await withGuardedServer(
      script,
      { retry: 1 },
      (s, f) => responsesAsk(s, f, (e) => events.push(e)),
    );
    assert.equal(value.output_text, expected, label);
    const seqs = events.map((e) => e.sequence_number);
    assert.deepEqual(seqs, seqs.map((_, i) => i), label);
    const parts = value.output.flatMap((o) => o.type === "message" ? o.content : []);
    assert.equal(parts.length, 2, label);
    for (const [i, p] of parts.entries()) {
      assert.ok(p.type === "output_text");
      const a = p.annotations[0] as { start_index: number; end_index: number };
      assert.equal(p.text.slice(a.start_index, a.end_index), ["Let", "Again"][i], label);
    }
    // Every event that tells the retry's part tells it as the final response does.
    const told = events.flatMap((e) =>
      e.type === "response.output_text.done" && e.output_index === 1
        ? [e.text]
        : e.type === "response.content_part.done" && e.output_index === 1 && e.part.type === "output_text"
        ? [e.part.text]
        : e.type === "response.output_item.done" && e.item.type === "message" && e.output_index === 1
        ? [(e.item.content[0] as { text: string }).text]
        : []
    );
    for (const t of told) assert.equal(t, (parts[1] as { text: string }).text, label);
    const added = events.flatMap((e) =>
      e.type === "response.output_text.annotation.added" && e.output_index === 1 ? [e.annotation] : []
    );
    for (const a of added) {
      assert.deepEqual(a, (parts[1] as { annotations: unknown[] }).annotations[0], label);
    }
    assert.equal(
      events.some((e) => e.type === "response.output_text.delta" && e.output_index === 1),
      false,
      label,
    );
  }
});

test("guardFetch retry: a Responses retry's text that comes only whole, its part's tokens scored, stays as it came", async () => {
  // The part a message's .done (or the final snapshot) brings may carry its logprobs; a blank line written
  // ahead of its text would be text no token stands for, as with scored deltas.
  const logprobs = [{ token: "Again.", logprob: -0.1, top_logprobs: [] }];
  const scored = (it: unknown) => {
    const item = it as { type?: string; content?: Record<string, unknown>[] };
    return item.type === "message"
      ? { ...item, content: item.content!.map((p) => ({ ...p, logprobs })) }
      : it;
  };
  const retried = (responsesStream(["Again."], [GOOD]) as Record<string, unknown>[])
    .filter((e) =>
      !["response.output_text.delta", "response.output_text.done", "response.content_part.done"].includes(
        e.type as string,
      )
    )
    .map((e, i) => {
      const response = e.response as { output: unknown[] } | undefined;
      if (e.type === "response.output_item.done") return { ...e, item: scored(e.item), sequence_number: i };
      if (e.type === "response.completed") {
        return { ...e, response: { ...response, output: response!.output.map(scored) }, sequence_number: i };
      }
      return { ...e, sequence_number: i };
    });
  const { value } = await withGuardedServer(
    [{ sse: responsesStream(["Let me look."], [BAD]), named: true }, { sse: retried, named: true }],
    { retry: 1 },
    (s, f) => responsesAsk(s, f),
  );
  assert.equal(value.output_text, "Let me look.Again.");
});

test("guardFetch: Responses text the client got only whole, in .done events, is its text: a reason or a retry's text after it starts a new paragraph", async () => {
  // The router noted only the deltas' text as the client's: after a part whose text came only in its .done
  // events (and the final snapshot), the client's text seemed to say nothing, and the reason ran on from it
  // ("Also.toolguard stopped ..."), as did a retry's text ("Let me look.Again."); the text watch on or off.
  const isMessage = (e: Record<string, unknown>) =>
    e.item_id === "msg_1" || (e.item as { type?: string } | undefined)?.type === "message";
  const whole = (text: string, callFirst: boolean) => {
    const all = (responsesStream([text], [BAD]) as Record<string, unknown>[])
      .filter((e) => e.type !== "response.output_text.delta");
    if (!callFirst) return all.map((e, i) => ({ ...e, sequence_number: i }));
    // (the message after the call: held with it, sent ahead of the reason)
    const [created, completed, middle] = [all[0], all.at(-1)!, all.slice(1, -1)];
    const output = (completed.response as { output: unknown[] }).output;
    return [
      created,
      ...middle.filter((e) => !isMessage(e)).map((e) => ({ ...e, output_index: 0 })),
      ...middle.filter(isMessage).map((e) => ({ ...e, output_index: 1 })),
      { ...completed, response: { ...completed.response as object, output: [output[1], output[0]] } },
    ].map((e, i) => ({ ...e, sequence_number: i }));
  };
  const cases: [string, boolean, number, RegExp][] = [
    ["Let me look.", false, 0, /^Let me look\.\n\ntoolguard stopped/],
    ["Also.", true, 0, /^Also\.\n\ntoolguard stopped/],
    ["Let me look.", false, 1, /^Let me look\.\n\nAgain\.$/],
  ];
  for (const extract of [true, false]) {
    for (const [text, callFirst, retry, expected] of cases) {
      const script = [
        { sse: whole(text, callFirst), named: true },
        { sse: responsesStream(["Again."], [GOOD]), named: true },
      ];
      const { value } = await withGuardedServer(
        script,
        { retry, ...(extract ? {} : { extract: false }) },
        (s, f) => responsesAsk(s, f),
      );
      assert.match(value.output_text, expected, JSON.stringify([text, callFirst, retry, extract]));
    }
  }
});

test("guardFetch retry: a retry's text that would run on from the first attempt's words starts a new paragraph, Cohere stream", async () => {
  // Cohere's own example prints each content-delta's text as it comes, blocks joined with nothing between:
  // "Let me look.Again.". The blank line opens the retry's block in a delta of its own; scored deltas
  // (`logprobs`) keep their text as it came.
  const frames = (text: string, call: CallSpec, scored: boolean) => [
    COHERE_START,
    ...cohereBlock(0, text).map((e) =>
      scored && e.type === "content-delta" ? { ...e, logprobs: { token_ids: [1], logprobs: [-0.1] } } : e
    ),
    ...cohereCallEnd(call),
  ];
  const cases: [string, string, string, boolean][] = [
    ["Let me look.", "Again.", "Let me look.\n\nAgain.", false],
    ["Let me look.", " Again.", "Let me look. Again.", false],
    ["Let me look.\n", "Again.", "Let me look.\nAgain.", false],
    ["Let me look.", "Again.", "Let me look.Again.", true],
  ];
  for (const [first, retry, expected, scored] of cases) {
    const { value } = await scripted(
      [{ sse: frames(first, BAD, scored), named: true }, { sse: frames(retry, GOOD, scored), named: true }],
      1,
      cohereStreamed,
    );
    const events = sseData(value);
    const printed = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text);
    assert.equal(printed.join(""), expected, JSON.stringify([first, retry, scored]));
    assert.equal(cohereBlockTexts(events).length, 2);
    assert.deepEqual(events.filter((e) => e.type === "tool-call-start").map((e) => e.index), [0]);
  }
});

/** Reads `body` as a client does, and cancels it once `asked` (the retry was asked for) settles. */
async function cancelWhileAsked(body: ReadableStream<Uint8Array>, asked: Promise<void>): Promise<void> {
  const reader = body.getReader();
  const reading = (async () => {
    while (!(await reader.read()).done);
  })();
  await asked;
  await reader.cancel();
  await reading;
}

test("guardFetch retry: a client that cancels its stream while the retry is being fetched has the retry's response cancelled too", async () => {
  // The retry's response came after the client had gone: never read and never cancelled, it held the
  // connection to the provider open.
  const server = await startFakeLlmServer([
    { sse: chatStream(["Let me check. "], [BAD]) },
    { sse: chatStream(["Again."], [GOOD]) },
  ]);
  try {
    const { promise: asked, resolve: ask } = Promise.withResolvers<void>();
    const { promise: gone, resolve: go } = Promise.withResolvers<void>();
    const { promise: cancelled, resolve: cancel } = Promise.withResolvers<string>();
    let n = 0;
    const provider = async (input: RequestInfo | URL, init?: RequestInit) => {
      if (n++ === 0) return await fetch(input, init);
      ask();
      await gone; // (the client cancels while this attempt is on its way)
      const response = await fetch(input, init);
      const reader = response.body!.getReader();
      const body = new ReadableStream<Uint8Array>({
        pull: async (c) => {
          const { done, value } = await reader.read();
          if (done) c.close();
          else c.enqueue(value);
        },
        cancel: async (reason) => {
          cancel("cancelled");
          await reader.cancel(reason);
        },
      }, { highWaterMark: 0 });
      return new Response(body, response);
    };
    const f = guardFetch(provider as typeof fetch, { retry: 1 }) as typeof fetch;
    const response = await f(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
    });
    await cancelWhileAsked(response.body!, asked);
    go();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const left = new Promise<string>((r) => timer = setTimeout(() => r("left open"), 5000));
    assert.equal(await Promise.race([cancelled, left]), "cancelled");
    clearTimeout(timer);
  } finally {
    await server.close();
  }
});

test("StreamGate retry: a retry's answer that comes after the client cancelled is cancelled unread, not gated", async () => {
  const { promise: asked, resolve: ask } = Promise.withResolvers<void>();
  const { promise: gone, resolve: go } = Promise.withResolvers<void>();
  const did: string[] = [];
  const gate = new StreamGate("openai_chat", {
    judge: rejectAll,
    retry: async () => {
      ask();
      await gone;
      return {
        stream: () => {
          did.push("gated");
          return answeredAtOnce(chatStream(["Again."], [GOOD]));
        },
        cancel: () => {
          did.push("cancelled");
          return Promise.resolve();
        },
      };
    },
  });
  await cancelWhileAsked(gate.gate(answeredAtOnce(chatStream(["Let me look."], [BAD]))), asked);
  go();
  for (let i = 0; i < 50 && did.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(did, ["cancelled"]);
});

test("StreamGate retry: a retry's answer whose step throws once it came is cancelled, not left open", async () => {
  // (a step of the gate's between the answer and its stream may throw too: each is caught alike)
  const did: string[] = [];
  const gate = new StreamGate("openai_chat", {
    judge: rejectAll,
    retry: () =>
      Promise.resolve({
        stream: () => {
          did.push("stream");
          throw new Error("the retry's stream could not be made");
        },
        cancel: () => {
          did.push("cancelled");
          return Promise.resolve();
        },
      }),
  });
  await new Response(gate.gate(answeredAtOnce(chatStream(["Let me look."], [BAD])))).text();
  assert.deepEqual(did, ["stream", "cancelled"]);
});

test("guardFetch retry: a retry's Chat annotations and Gemini grounding supports move past the earlier attempts' text and the blank line", async () => {
  // A retry's annotation names characters of its own text ("Again" at 0-5; Gemini counts bytes): the
  // client's text has the first attempt's words and the blank line ahead of it, and the annotation named
  // "Let m" instead. The first attempt's words end in "é" (two UTF-8 bytes) and a surrogate pair, so
  // characters and bytes differ there.
  const first = "Let me look, café 🙂.";
  const cite = (start: number, end: number) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url: "u", title: "t" },
  });
  const retried = chatStream(["Again."], [GOOD]);
  retried.splice(retried.length - 2, 0, chatChunk({ annotations: [cite(0, 5)] }));
  const { value } = await scripted(
    [{ sse: chatStream([first], [BAD]) }, { sse: retried }],
    1,
    (s, f) =>
      openai(s, f).chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
        .finalChatCompletion(),
  );
  const content = value.choices[0].message.content ?? "";
  assert.equal(content, `${first}\n\nAgain.`);
  const [a] = value.choices[0].message.annotations ?? [];
  assert.equal(content.slice(a.url_citation.start_index, a.url_citation.end_index), "Again");
  // Gemini: the support's offsets are UTF-8 bytes into the answer's text.
  assert.deepEqual(await geminiRetryCites([first]), { text: `${first}\n\nAgain.`, cited: "Again" });
});

/**
 * A Gemini stream through a guarded fetch (retry 1) whose first attempt writes `first` (a chunk each) and a
 * rejected call, and whose retry writes "Again." and a valid call with a grounding support of "Again" (bytes
 * 0 to 5 of its own text): the answer's text the client joins, and what the support names in it.
 */
async function geminiRetryCites(first: string[]): Promise<{ text: string; cited: string }> {
  const support = { segment: { startIndex: 0, endIndex: 5, text: "Again" }, groundingChunkIndices: [0] };
  const grounding = { groundingChunks: [{ web: { uri: "u" } }], groundingSupports: [support] };
  const { value } = await geminiRetried([
    [...first.map((text) => geminiChunk([{ text }])), geminiChunk([geminiCall(BAD.args)])],
    [
      geminiChunk([{ text: "Again." }]),
      geminiChunk([geminiCall(GOOD.args)], { groundingMetadata: grounding }),
    ],
  ]);
  type Chunk = {
    candidates: { content: { parts: { text?: string }[] }; groundingMetadata?: typeof grounding }[];
  };
  const text = value.flatMap((e: Chunk) => e.candidates[0].content.parts).map((p: { text?: string }) =>
    p.text ?? ""
  ).join("");
  const [s] = value.flatMap((e: Chunk) => e.candidates[0].groundingMetadata?.groundingSupports ?? []);
  const bytes = new TextEncoder().encode(text);
  return { text, cited: new TextDecoder().decode(bytes.slice(s.segment.startIndex, s.segment.endIndex)) };
}

/** A Gemini chunk of one candidate with `parts`, and `extra` fields on the candidate. */
const geminiChunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
  modelVersion: "gemini-2.5-flash",
});
/** A Gemini function call part of get_weather. */
const geminiCall = (args: unknown) => ({ functionCall: { name: "get_weather", args } });

/**
 * The chunks a client reads of the weather question streamed from Gemini through a guarded fetch (retry 1),
 * the server answering the attempts with the chunks of `attempts` in turn; with the verdicts seen. The
 * request asks for `candidateCount` candidates (default: it names none).
 */
function geminiRetried(attempts: unknown[][], { candidateCount }: { candidateCount?: number } = {}) {
  return scripted(attempts.map((sse) => ({ sse })), 1, async (s, f) => {
    const res = await f(`${s.url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
        tools: [{ functionDeclarations: TOOLS_RESPONSES }],
        ...(candidateCount ? { generationConfig: { candidateCount } } : {}),
      }),
    });
    return sseData(await res.text());
  });
}

test("guardFetch retry: a Gemini first attempt's grounding that came in a chunk of no text after its call reaches the client, citing the words it kept", async () => {
  // The chunk that finished the first attempt (no text, its sources) was held behind the rejected call and
  // dropped with it: the client kept "Café ☔ in Oslo." with no sources. Now it goes in a chunk of its own
  // ahead of the retry's stream; a support of the written call the gate cut (past the text kept) goes.
  const said = "Caf\u00e9 \u2614 in Oslo. ";
  const bytes = new TextEncoder().encode(said).length;
  const support = (startIndex: number, endIndex: number, text: string) => ({
    segment: { startIndex, endIndex, text },
    groundingChunkIndices: [0],
  });
  const cafe = support(0, new TextEncoder().encode("Caf\u00e9 \u2614").length, "Caf\u00e9 \u2614");
  const written =
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "units": "kelvin"}}</tool_call>';
  for (
    const [calls, supports] of [
      [[geminiChunk([geminiCall(BAD.args)])], [cafe]],
      [[geminiChunk([{ text: written }])], [cafe, support(bytes, bytes + 20, written.slice(0, 20))]],
    ] as const
  ) {
    const grounding = { groundingChunks: [{ web: { uri: "u" } }], groundingSupports: supports };
    const gemini = await geminiRetried([
      [
        geminiChunk([{ text: said }]),
        ...calls,
        geminiChunk([{ text: "" }], { finishReason: "STOP", groundingMetadata: grounding }),
      ],
      [geminiChunk([{ text: "Again." }]), geminiChunk([geminiCall(GOOD.args)], { finishReason: "STOP" })],
    ]);
    assertAttempts(gemini.seen);
    type Chunk = { candidates: { groundingMetadata?: typeof grounding }[] };
    const told = gemini.value.flatMap((e: Chunk) => e.candidates[0].groundingMetadata ?? []);
    assert.deepEqual(told, [{ ...grounding, groundingSupports: [cafe] }]);
  }
});

/** A Gemini candidate's last chunk: no text, finished, with `groundingMetadata`. */
const finished = (index: number, groundingMetadata: unknown) => ({
  index,
  content: { role: "model", parts: [{ text: "" }] },
  finishReason: "STOP",
  groundingMetadata,
});

/**
 * Two Gemini candidates ("Checking. ", "Hello."), a rejected call in the first, then the chunk of
 * `candidates` that finishes them, with a retry into a good call to be had: the chunks the client reads and
 * the attempts.
 */
function twoCandidates(candidates: unknown[]) {
  return geminiRetried([
    [
      geminiChunk([{ text: "Checking. " }]),
      { candidates: [{}, { index: 1, content: { role: "model", parts: [{ text: "Hello." }] } }] },
      geminiChunk([geminiCall(BAD.args)]),
      { candidates },
    ],
    [geminiChunk([{ text: "Again." }]), geminiChunk([geminiCall(GOOD.args)], { finishReason: "STOP" })],
  ], { candidateCount: 2 });
}

test("guardFetch retry: each Gemini candidate's grounding in the chunk that finished them both reaches the client at its own position", async () => {
  // Asked for two candidates, the chunk that finished both (no text, each its sources) was held behind
  // candidate 0's rejected call and dropped with it; the gate sent candidate 0's grounding alone ahead of the
  // retry's stream, and candidate 1's words ("Hello.") lost their sources. Gemini grounds each candidate
  // apart: each goes at its position, citing its own text.
  const grounding = (uri: string, text: string) => ({
    groundingChunks: [{ web: { uri } }],
    groundingSupports: [{ segment: { startIndex: 0, endIndex: 5, text }, groundingChunkIndices: [0] }],
  });
  const [first, second] = [grounding("u0", "Check"), grounding("u1", "Hello")];
  const gemini = await twoCandidates([finished(0, first), finished(1, second)]);
  assertAttempts(gemini.seen);
  type Chunk = { candidates: { groundingMetadata?: unknown }[] };
  const told = (position: number) =>
    gemini.value.flatMap((e: Chunk) => e.candidates[position]?.groundingMetadata ?? []);
  assert.deepEqual(told(0), [first]);
  assert.deepEqual(told(1), [second]);
});

test("guardFetch retry: a Gemini candidate the retry does not continue gets the finish of the chunk dropped with the rejected call", async () => {
  // Asked for two candidates, the chunk that finished both was held behind candidate 0's rejected call and
  // dropped with it: the retry (asking for one) continues candidate 0 and ends it, but candidate 1 never got
  // its finishReason, where a body's retry ends every candidate. It goes with candidate 1's grounding, at its
  // position, its own reason kept (MAX_TOKENS), after its words.
  const finish = (index: number, finishReason: string) => ({
    index,
    content: { role: "model", parts: [{ text: "" }] },
    finishReason,
  });
  const gemini = await geminiRetried([
    [
      geminiChunk([{ text: "Checking. " }]),
      { candidates: [{}, { index: 1, content: { role: "model", parts: [{ text: "Hello." }] } }] },
      geminiChunk([geminiCall(BAD.args)]),
      { candidates: [finish(0, "STOP"), finish(1, "MAX_TOKENS")] },
    ],
    [geminiChunk([{ text: "Again." }]), geminiChunk([geminiCall(GOOD.args)], { finishReason: "STOP" })],
  ], { candidateCount: 2 });
  assertAttempts(gemini.seen);
  type Chunk = { candidates: { finishReason?: string; content?: { parts?: { text?: string }[] } }[] };
  const seen = (position: number) =>
    gemini.value.flatMap((e: Chunk) => {
      const c = e.candidates[position];
      return [
        ...(c?.content?.parts ?? []).flatMap((p) => p.text ? [p.text] : []),
        ...c?.finishReason ? [`<${c.finishReason}>`] : [],
      ];
    });
  assert.deepEqual(seen(1), ["Hello.", "<MAX_TOKENS>"]);
  assert.deepEqual(seen(0).filter((t: string) => t.startsWith("<")), ["<STOP>"]);
});

test("guardFetch retry: text the watch held until a native call came counts as the client's: the retry's grounding supports move past it, and a blank line follows it (Gemini, Ollama)", async () => {
  // A written call beside a native one is text (a body reads no calls from it): the watch held it, and the
  // retry sent it ahead of its stream without counting it, so the retry's support (UTF-8 bytes of its own
  // text) named the held text's first bytes, and the retry's words ran on from "</tool_call>".
  const first = [
    "Caf\u00e9 \u{1F642} ",
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
  ];
  assert.deepEqual(await geminiRetryCites(first), { text: `${first.join("")}\n\nAgain.`, cited: "Again" });
  // Ollama: the same text, through its client, which hands out each chunk's content.
  const script = [{ ndjson: ollamaStream(first, [BAD]) }, { ndjson: ollamaStream(["Again."], [GOOD]) }];
  const { value } = await scripted(script, 1, async (s, f) => {
    const client = new Ollama({ host: s.url, fetch: f });
    let content = "";
    for await (
      const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
    ) content += part.message.content;
    return content;
  });
  assert.equal(value, `${first.join("")}\n\nAgain.`);
});

test("guardFetch retry: a Gemini turn whose finishing chunk names candidate 1 first is not retried: each candidate's finish and grounding reach the client as that chunk had them", async () => {
  // Candidate 0 said "Checking. " (10 bytes), candidate 1 "Hello." (6), each at the position of its index.
  // The chunk that finished both named candidate 1 first. The gate reads candidates by their place, a
  // retry's dropped finishes went by their index: place 0 got a STOP just before the retry's words continued
  // it. Which candidate is the first is in doubt: the turn ends in the reason, as one whose call came in
  // another answer does.
  const grounding = (uri: string, endIndex: number) => ({
    groundingChunks: [{ web: { uri } }],
    groundingSupports: [{ segment: { startIndex: 0, endIndex }, groundingChunkIndices: [0] }],
  });
  const gemini = await twoCandidates([
    { ...finished(1, grounding("u1", 6)), finishReason: "MAX_TOKENS" },
    finished(0, grounding("u0", 10)),
  ]);
  assert.deepEqual(gemini.seen.map((e) => [e.attempt, e.verdict.allowed, e.retried ?? false]), [[
    0,
    false,
    false,
  ]]);
  type Chunk = {
    candidates: {
      index?: number;
      finishReason?: string;
      content?: { parts?: { text?: string }[] };
      groundingMetadata?: { groundingChunks: unknown[]; groundingSupports: unknown[] };
    }[];
  };
  const ends = gemini.value.flatMap((e: Chunk) =>
    e.candidates.flatMap((c, position) =>
      c.groundingMetadata || c.finishReason
        ? [{ position, index: c.index, finish: c.finishReason, grounding: c.groundingMetadata }]
        : []
    )
  );
  assert.deepEqual(ends, [
    { position: 0, index: 1, finish: "MAX_TOKENS", grounding: grounding("u1", 6) },
    { position: 1, index: 0, finish: "STOP", grounding: grounding("u0", 10) },
  ]);
  const said = gemini.value.flatMap((e: Chunk) => e.candidates[0]?.content?.parts ?? []).map((p) => p.text)
    .join("");
  assert.match(said, /^Checking\. \n\ntoolguard stopped/);
  assert.doesNotMatch(said, /Again/);
});

test("guardFetch retry: an Anthropic stream whose first block is the rejected call, beside a block dropped as malformed, tells of it at block 0 and resumes after it", async () => {
  // (the text block telling of the dropped block, held among the frames the retry drops, was counted as a
  // block the client had: the retry's blocks were numbered from -1, and the SDK put the call's input in the
  // text block, the retry's words and the call's input lost; then it was dropped with the calls, and the
  // model never knew that one of its calls had not run)
  const first = (anthropicStream([], [BAD, { name: "get_weather", args: { city: "X" } }]) as {
    index?: number;
  }[]).map((e) => e.index === 1 ? { ...e, index: 7 } : e);
  const { value, seen } = await scripted(
    [{ sse: first, named: true }, { sse: anthropicStream(["Again."], [GOOD]), named: true }],
    1,
    (s, f) => anthropicAsk(s, f).finalMessage(),
  );
  const told = value.content[0]?.type === "text" ? value.content[0].text : "";
  assert.match(told, /^toolguard dropped this turn's tool call: its stream events were malformed/);
  assert.deepEqual(
    value.content.map((b) =>
      b.type === "tool_use" ? [b.id, b.input] : [b.type, b.type === "text" ? b.text : ""]
    ),
    [["text", told], ["text", "\n\nAgain."], ["call_good", { city: "Oslo" }]],
  );
  assert.deepEqual(seen.map((e) => [e.attempt, e.retried ?? false]), [[0, true], [1, false]]);
  // (the model read of the dropped block first, then of the rejection, as onVerdict says)
  assert.match(seen[0]?.reason ?? "", /^toolguard dropped [^]*\n\ntoolguard stopped /);
  assert.ok(seen[0]?.reason?.startsWith(`${told}\n\n`), seen[0]?.reason ?? "no reason");
});
