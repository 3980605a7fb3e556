// A stream retry sends back what the first attempt streamed: the text the client already has and the
// reasoning (Anthropic thinking blocks with their signature, Gemini parts with their thoughtSignature,
// Ollama thinking, Responses reasoning items), in each provider's own shape. Providers with extended
// thinking refuse a follow-up without them. A call written into the text goes back once, as the call, with
// the text without it (streamed or whole). A scripted server records the follow-up it received.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  anthropicMessage,
  anthropicStream,
  chatChunk,
  chatCompletion,
  chatStream,
  type FakeReply,
  ollamaStream,
  REJECTED_CALL,
  responsesBody,
  responsesStream,
  type Script,
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

/** Posts `body` to `path` through a guarded fetch (one retry); returns the client's text and the requests. */
async function resent(
  path: string,
  body: Record<string, unknown>,
  script: Script,
): Promise<{ text: string; sent: Record<string, unknown>[] }> {
  const { value, server } = await withGuardedServer(script, { retry: 1 }, async (s, f) => {
    const res = await f(`${s.url}${path}`, { method: "POST", body: JSON.stringify(body) });
    return await res.text();
  });
  return { text: value, sent: server.requests.map((r) => r.json as Record<string, unknown>) };
}

/** The follow-up's messages (Chat, Anthropic, Ollama, Cohere). */
const messagesOf = (sent: Record<string, unknown>[]) => sent[1].messages as Record<string, unknown>[];

test("guardFetch retry: an OpenAI Chat stream's follow-up carries the streamed text and reasoning_content", async () => {
  const first = chatStream(["Let me ", "check."], [BAD]);
  first.splice(
    1,
    0,
    chatChunk({ reasoning_content: "The user wants " }),
    chatChunk({ reasoning_content: "Oslo." }),
  );
  const { sent } = await resent("/v1/chat/completions", {
    model: "m",
    stream: true,
    messages,
    tools: TOOLS_OPENAI,
  }, [
    { sse: first },
    { sse: chatStream([], [GOOD]) },
  ]);
  assert.equal(sent.length, 2);
  const [, assistant, tool] = messagesOf(sent);
  assert.equal(assistant.content, "Let me check.");
  assert.equal(assistant.reasoning_content, "The user wants Oslo.");
  assert.deepEqual((assistant.tool_calls as { id: string }[]).map((c) => c.id), ["call_bad"]);
  assert.equal(tool.tool_call_id, "call_bad");
});

test("guardFetch retry: a Chat follow-up carries the reasoning under the field the server sent it in, thinking too, streamed or whole", async () => {
  // A server that streams its reasoning as `thinking` (Ollama's own name, which the gate reads as reasoning
  // in a Chat delta too) lost it from the follow-up, where `reasoning_content` and `reasoning` went back:
  // servers that reason over calls (DeepSeek's thinking mode) refuse a follow-up without it.
  for (const field of ["reasoning_content", "reasoning", "thinking"]) {
    for (const stream of [true, false]) {
      const whole = chatCompletion("Let me check.", [BAD]);
      ((whole.choices as Record<string, unknown>[])[0].message as Record<string, unknown>)[field] =
        "The user wants Oslo.";
      const first = chatStream(["Let me ", "check."], [BAD]);
      first.splice(1, 0, chatChunk({ [field]: "The user wants " }), chatChunk({ [field]: "Oslo." }));
      const { sent } = await resent(
        "/v1/chat/completions",
        { model: "m", stream, messages, tools: TOOLS_OPENAI },
        stream ? [{ sse: first }, { sse: chatStream([], [GOOD]) }] : [{ json: whole }, {
          json: chatCompletion(null, [GOOD]),
        }],
      );
      assert.equal(sent.length, 2, `${field}, stream: ${stream}`);
      const [, assistant] = messagesOf(sent);
      const reasoning = ["reasoning_content", "reasoning", "thinking"].filter((k) => k in assistant);
      assert.deepEqual(reasoning, [field], `${field}, stream: ${stream}`);
      assert.equal(assistant[field], "The user wants Oslo.");
      assert.equal(assistant.content, "Let me check.");
    }
  }
});

test("guardFetch retry: a call written into Chat text goes back as a call, the prose as content without it", async () => {
  const bad =
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "units": "kelvin"}}</tool_call>';
  const { sent } = await resent("/v1/chat/completions", {
    model: "m",
    stream: true,
    messages,
    tools: TOOLS_OPENAI,
  }, [
    { sse: chatStream(["Sure. ", bad]) },
    { sse: chatStream([], [GOOD]) },
  ]);
  assert.equal(sent.length, 2);
  const [, assistant, tool] = messagesOf(sent);
  assert.equal(assistant.content, "Sure.");
  const calls = assistant.tool_calls as { id: string; function: { name: string; arguments: string } }[];
  assert.deepEqual(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), [
    ["get_weather", { city: "Oslo", units: "kelvin" }],
  ]);
  assert.equal(tool.tool_call_id, calls[0].id);
});

/** A rejected call written into the text, with prose on both sides; the prose the follow-up keeps. */
const WRITTEN = {
  text: [
    "Sure.\n",
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "units": "kelvin"}}</tool_call>',
    "\nOne moment.",
  ],
  prose: "Sure.\n\nOne moment.",
};

test("guardFetch retry: a call written into Anthropic text goes back once, as tool_use, the prose kept", async () => {
  for (const stream of [true, false]) {
    const { sent } = await resent(
      "/v1/messages",
      { model: "m", max_tokens: 100, stream, messages, tools: TOOLS_ANTHROPIC },
      stream
        ? [{ sse: anthropicStream(WRITTEN.text), named: true }, {
          sse: anthropicStream([], [GOOD]),
          named: true,
        }]
        : [{ json: anthropicMessage(WRITTEN.text.join("")) }, { json: anthropicMessage(null, [GOOD]) }],
    );
    assert.equal(sent.length, 2, `stream: ${stream}`);
    const [, assistant, results] = messagesOf(sent);
    const content = assistant.content as Record<string, unknown>[];
    assert.deepEqual(content.map((b) => b.type), ["text", "tool_use"], `stream: ${stream}`);
    assert.equal(content[0].text, WRITTEN.prose);
    assert.deepEqual([content[1].name, content[1].input], ["get_weather", BAD.args]);
    assert.equal((results.content as Record<string, unknown>[])[0].tool_use_id, content[1].id);
  }
});

test("guardFetch retry: a call written into Gemini text goes back once, as a functionCall, the prose kept", async () => {
  const chunk = (parts: unknown[], finish?: string) => ({
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(finish ? { finishReason: finish } : {}),
    }],
  });
  const good = [{ functionCall: { name: "get_weather", args: GOOD.args } }];
  for (const stream of [true, false]) {
    const { sent } = await resent(
      stream ? "/v1beta/models/g:streamGenerateContent?alt=sse" : "/v1beta/models/g:generateContent",
      {
        contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
        tools: [{ functionDeclarations: TOOLS_RESPONSES }],
      },
      stream
        ? [
          {
            sse: [chunk([{ text: "Hmm.", thought: true }]), ...WRITTEN.text.map((t) => chunk([{ text: t }]))],
          },
          { sse: [chunk(good, "STOP")] },
        ]
        : [
          { json: chunk([{ text: "Hmm.", thought: true }, { text: WRITTEN.text.join("") }], "STOP") },
          { json: chunk(good, "STOP") },
        ],
    );
    assert.equal(sent.length, 2, `stream: ${stream}`);
    const contents = sent[1].contents as { role: string; parts: unknown[] }[];
    assert.deepEqual(contents[1].parts, [
      { text: "Hmm.", thought: true },
      { text: WRITTEN.prose },
      { functionCall: { name: "get_weather", args: BAD.args } },
    ], `stream: ${stream}`);
  }
});

test("guardFetch retry: a call written into Cohere text goes back once, in tool_calls, the prose kept", async () => {
  const streamed = (text: string[]) => [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    ...text.map((t) => ({ type: "content-delta", index: 0, delta: { message: { content: { text: t } } } })),
    { type: "content-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "COMPLETE" } },
  ];
  const whole = (text: string) => ({
    id: "c1",
    finish_reason: "COMPLETE",
    message: { role: "assistant", content: [{ type: "text", text }] },
  });
  for (const stream of [true, false]) {
    const { sent } = await resent(
      "/v2/chat",
      { model: "command", stream, messages, tools: TOOLS_OPENAI },
      stream
        ? [{ sse: streamed(WRITTEN.text) }, { sse: streamed(["Fine."]) }]
        : [{ json: whole(WRITTEN.text.join("")) }, { json: whole("Fine.") }],
    );
    assert.equal(sent.length, 2, `stream: ${stream}`);
    const [, assistant, tool] = messagesOf(sent);
    assert.deepEqual(assistant.content, [{ type: "text", text: WRITTEN.prose }], `stream: ${stream}`);
    const calls = assistant.tool_calls as { id: string; function: { name: string; arguments: string } }[];
    assert.deepEqual(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), [
      ["get_weather", BAD.args],
    ]);
    assert.equal(tool.tool_call_id, calls[0].id);
  }
});

test("guardFetch retry: a call written into a Responses message goes back once, as a function_call, the prose kept", async () => {
  for (const stream of [true, false]) {
    const { sent } = await resent(
      "/v1/responses",
      { model: "m", stream, input: "Weather in Oslo?", tools: TOOLS_RESPONSES },
      stream
        ? [{ sse: responsesStream(WRITTEN.text), named: true }, {
          sse: responsesStream([], [GOOD]),
          named: true,
        }]
        : [{ json: responsesBody(WRITTEN.text.join("")) }, { json: responsesBody(null, [GOOD]) }],
    );
    assert.equal(sent.length, 2, `stream: ${stream}`);
    const input = sent[1].input as Record<string, unknown>[];
    const message = input.find((i) => i.type === "message" && i.role === "assistant") ??
      input.find((i) => i.type === "message")!;
    const texts = (message.content as Record<string, unknown>[]).map((p) => p.text);
    assert.deepEqual(texts, [WRITTEN.prose], `stream: ${stream}`);
    const calls = input.filter((i) => i.type === "function_call");
    assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments as string)]), [[
      "get_weather",
      BAD.args,
    ]]);
    const output = input.find((i) => i.type === "function_call_output")!;
    assert.equal(output.call_id, calls[0].call_id);
  }
});

test("guardFetch retry: a text that was only the written call goes back as no text (a Gemini signature kept)", async () => {
  const call = WRITTEN.text[1];
  const anthropic = await resent(
    "/v1/messages",
    { model: "m", max_tokens: 100, messages, tools: TOOLS_ANTHROPIC },
    [{ json: anthropicMessage(call) }, { json: anthropicMessage(null, [GOOD]) }],
  );
  // Anthropic refuses an empty text block.
  assert.deepEqual((messagesOf(anthropic.sent)[1].content as Record<string, unknown>[]).map((b) => b.type), [
    "tool_use",
  ]);
  const cohere = await resent("/v2/chat", { model: "command", messages, tools: TOOLS_OPENAI }, [
    {
      json: {
        id: "c1",
        finish_reason: "COMPLETE",
        message: { role: "assistant", content: [{ type: "text", text: call }] },
      },
    },
    { json: { id: "c2", finish_reason: "COMPLETE", message: { role: "assistant", content: [] } } },
  ]);
  assert.equal("content" in messagesOf(cohere.sent)[1], false);
  const candidate = (parts: unknown[]) => ({ candidates: [{ content: { role: "model", parts }, index: 0 }] });
  const gemini = await resent(
    "/v1beta/models/g:generateContent",
    {
      contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
      tools: [{ functionDeclarations: TOOLS_RESPONSES }],
    },
    [{ json: candidate([{ text: call, thoughtSignature: "c2lnLTE=" }]) }, {
      json: candidate([{ text: "Fine." }]),
    }],
  );
  // A Responses message that was only the call goes back as no message item.
  const responses = await resent("/v1/responses", { model: "m", input: "Weather?", tools: TOOLS_RESPONSES }, [
    { json: responsesBody(call) },
    { json: responsesBody("Fine.") },
  ]);
  assert.deepEqual((responses.sent[1].input as Record<string, unknown>[]).map((i) => i.type ?? i.role), [
    "user",
    "function_call",
    "function_call_output",
  ]);
  const contents = gemini.sent[1].contents as { parts: unknown[] }[];
  assert.deepEqual(contents[1].parts, [
    { text: "", thoughtSignature: "c2lnLTE=" },
    { functionCall: { name: "get_weather", args: BAD.args } },
  ]);
});

test("guardFetch retry: an Anthropic stream's follow-up carries thinking (with signature), text, tool_use, in order", async () => {
  const first = anthropicStream(["Checking", " now."], [BAD]);
  // A thinking block first: its text in two deltas, then its signature; the other blocks move up one.
  const shifted = first.map((e) => {
    const ev = e as Record<string, unknown>;
    return typeof ev.index === "number" ? { ...ev, index: ev.index + 1 } : ev;
  });
  shifted.splice(
    1,
    0,
    {
      type: "content_block_start",
      index: 0,
      content_block: { type: "thinking", thinking: "", signature: "" },
    },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Units must be " } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "c or f." } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig-XYZ" } },
    { type: "content_block_stop", index: 0 },
  );
  const { text, sent } = await resent(
    "/v1/messages",
    { model: "m", max_tokens: 100, stream: true, messages, tools: TOOLS_ANTHROPIC },
    [{ sse: shifted, named: true }, { sse: anthropicStream([], [GOOD]), named: true }],
  );
  assert.equal(sent.length, 2);
  assert.match(text, /call_good/);
  const [, assistant, results] = messagesOf(sent);
  assert.deepEqual(assistant.content, [
    { type: "thinking", thinking: "Units must be c or f.", signature: "sig-XYZ" },
    { type: "text", text: "Checking now." },
    { type: "tool_use", id: "call_bad", name: "get_weather", input: { city: "Oslo", units: "kelvin" } },
  ]);
  assert.deepEqual((results.content as Record<string, unknown>[]).map((b) => [b.type, b.tool_use_id]), [
    ["tool_result", "call_bad"],
  ]);
});

test("guardFetch retry: an Ollama stream's follow-up carries the streamed content and thinking", async () => {
  const first = ollamaStream(["Let me ", "check."], [BAD]) as Record<string, unknown>[];
  first.unshift({
    model: "fake-model",
    created_at: "2025-01-01T00:00:00Z",
    message: { role: "assistant", content: "", thinking: "Oslo, no units." },
    done: false,
  });
  const { sent } = await resent("/api/chat", { model: "m", messages, tools: TOOLS_OPENAI }, [
    { ndjson: first },
    { ndjson: ollamaStream([], [GOOD]) },
  ]);
  assert.equal(sent.length, 2);
  const [, assistant, tool] = messagesOf(sent);
  assert.equal(assistant.content, "Let me check.");
  assert.equal(assistant.thinking, "Oslo, no units.");
  assert.equal(tool.role, "tool");
});

test("guardFetch retry: a Gemini stream's follow-up carries every part, thoughtSignature kept", async () => {
  const chunk = (parts: unknown[], finish?: string) => ({
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(finish ? { finishReason: finish } : {}),
    }],
  });
  const call = { functionCall: { name: "get_weather", args: BAD.args }, thoughtSignature: "c2lnLTE=" };
  const { sent } = await resent(
    "/v1beta/models/g:streamGenerateContent?alt=sse",
    {
      contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
      tools: [{ functionDeclarations: TOOLS_RESPONSES }],
    },
    [
      {
        sse: [
          chunk([{ text: "Thinking about ", thought: true }]),
          chunk([{ text: "units.", thought: true }]),
          chunk([{ text: "Let me " }]),
          chunk([{ text: "look." }]),
          chunk([call], "STOP"),
        ],
      },
      { sse: [chunk([{ functionCall: { name: "get_weather", args: GOOD.args } }], "STOP")] },
    ],
  );
  assert.equal(sent.length, 2);
  const contents = sent[1].contents as { role: string; parts: unknown[] }[];
  assert.deepEqual(contents.map((c) => c.role), ["user", "model", "user"]);
  assert.deepEqual(contents[1].parts, [
    { text: "Thinking about units.", thought: true },
    { text: "Let me look." },
    call,
  ]);
});

test("guardFetch retry: a Cohere stream's follow-up carries the tool plan and the streamed text", async () => {
  const frames = (args: string, id: string) => [
    {
      id: "c1",
      type: "message-start",
      delta: { message: { role: "assistant", content: [], tool_calls: [] } },
    },
    { type: "tool-plan-delta", delta: { message: { tool_plan: "I will " } } },
    { type: "tool-plan-delta", delta: { message: { tool_plan: "check." } } },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index: 0, delta: { message: { content: { text: "One moment." } } } },
    { type: "content-end", index: 0 },
    {
      type: "tool-call-start",
      index: 0,
      delta: {
        message: { tool_calls: { id, type: "function", function: { name: "get_weather", arguments: "" } } },
      },
    },
    {
      type: "tool-call-delta",
      index: 0,
      delta: { message: { tool_calls: { function: { arguments: args } } } },
    },
    { type: "tool-call-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
  ];
  const { sent } = await resent(
    "/v2/chat",
    { model: "command", stream: true, messages, tools: TOOLS_OPENAI },
    [
      { sse: frames(JSON.stringify(BAD.args), "call_bad") } as FakeReply,
      { sse: frames(JSON.stringify(GOOD.args), "call_good") },
    ],
  );
  assert.equal(sent.length, 2);
  const [, assistant, tool] = messagesOf(sent);
  assert.equal(assistant.tool_plan, "I will check.");
  assert.deepEqual(assistant.content, [{ type: "text", text: "One moment." }]);
  assert.deepEqual((assistant.tool_calls as { id: string }[]).map((c) => c.id), ["call_bad"]);
  assert.equal(tool.tool_call_id, "call_bad");
});

test("guardFetch retry: a Cohere stream's follow-up carries the text a content-start brought", async () => {
  // The Cohere SDK hands an app that text as its block's, and the gate sends it on: the turn holds it too.
  const frames = (args: string, id: string) => [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    {
      type: "content-start",
      index: 0,
      delta: { message: { content: { type: "text", text: "One moment." } } },
    },
    { type: "content-end", index: 0 },
    {
      type: "tool-call-start",
      index: 0,
      delta: {
        message: { tool_calls: { id, type: "function", function: { name: "get_weather", arguments: args } } },
      },
    },
    { type: "tool-call-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
  ];
  const { sent } = await resent(
    "/v2/chat",
    { model: "command", stream: true, messages, tools: TOOLS_OPENAI },
    [
      { sse: frames(JSON.stringify(BAD.args), "call_bad") } as FakeReply,
      { sse: frames(JSON.stringify(GOOD.args), "call_good") },
    ],
  );
  assert.equal(sent.length, 2);
  const [, assistant] = messagesOf(sent);
  assert.deepEqual(assistant.content, [{ type: "text", text: "One moment." }]);
  assert.deepEqual((assistant.tool_calls as { id: string }[]).map((c) => c.id), ["call_bad"]);
});

/** A Responses stream: a reasoning item with encrypted content, text, a call; `final` keeps response.completed. */
function responsesWithReasoning(final: boolean): unknown[] {
  const events = responsesStream(["Checking."], [BAD]) as Record<string, unknown>[];
  const reasoning = { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAAA-enc" };
  const shift = (e: Record<string, unknown>) => {
    const out: Record<string, unknown> = { ...e };
    if (typeof e.output_index === "number") out.output_index = e.output_index + 1;
    if (e.type === "response.completed") {
      const r = e.response as { output: unknown[] };
      out.response = { ...r, output: [reasoning, ...r.output] };
    }
    return out;
  };
  const out = [
    events[0],
    { type: "response.output_item.added", output_index: 0, item: { ...reasoning, encrypted_content: null } },
    { type: "response.output_item.done", output_index: 0, item: reasoning },
    ...events.slice(1).map(shift),
  ].map((e, i): Record<string, unknown> => ({ ...e as Record<string, unknown>, sequence_number: i }));
  return final ? out : out.filter((e) => e.type !== "response.completed");
}

test("guardFetch retry: a Responses stream's follow-up carries the reasoning item with its encrypted content", async () => {
  for (const final of [true, false]) {
    const { sent } = await resent(
      "/v1/responses",
      {
        model: "m",
        stream: true,
        input: "Weather?",
        tools: TOOLS_RESPONSES,
        include: ["reasoning.encrypted_content"],
      },
      [{ sse: responsesWithReasoning(final), named: true }, {
        sse: responsesStream([], [GOOD]),
        named: true,
      }],
    );
    assert.equal(sent.length, 2, `final: ${final}`);
    const input = sent[1].input as Record<string, unknown>[];
    assert.deepEqual(input.map((i) => i.type ?? i.role), [
      "user",
      "reasoning",
      "message",
      "function_call",
      "function_call_output",
    ]);
    assert.equal(input[1].encrypted_content, "gAAAA-enc");
    assert.equal(input[1].id, "rs_1");
    assert.equal(input[3].call_id, "call_bad");
  }
});

test("guardFetch retry: a Responses item finished at no output_index follows the indexed ones in the follow-up", async () => {
  // Given the next position (0 here), the call finished at no index tied with the message at index 0 and
  // went before it; it now follows every item the stream placed, which keep their order.
  const call = (id: string) => ({
    type: "function_call",
    id: `fc_${id}`,
    call_id: `call_${id}`,
    name: BAD.name,
    arguments: JSON.stringify(BAD.args),
    status: "completed",
  });
  const message = {
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "Checking.", annotations: [] }],
  };
  const created = responsesStream([])[0] as Record<string, unknown>;
  const first = [
    created,
    { type: "response.output_item.done", item: call("a") },
    { type: "response.output_item.done", output_index: 1, item: call("b") },
    { type: "response.output_item.done", output_index: 0, item: message },
  ].map((e, i) => ({ ...e, sequence_number: i }));
  const { sent } = await resent(
    "/v1/responses",
    { model: "m", stream: true, input: "Weather?", tools: TOOLS_RESPONSES },
    [{ sse: first, named: true }, { sse: responsesStream([], [GOOD]), named: true }],
  );
  assert.equal(sent.length, 2);
  const input = sent[1].input as Record<string, unknown>[];
  assert.deepEqual(input.slice(0, 4).map((i) => i.call_id ?? i.type ?? i.role), [
    "user",
    "message",
    "call_b",
    "call_a",
  ]);
});

test("guardFetch retry: a call written across two Anthropic text blocks goes back as tool_use, cut from both blocks", async () => {
  // The stream's watch reads the blocks' text as one, and judged the call; the follow-up cut calls from each
  // block alone, found none whole in either, and sent the rejected call back in the text too.
  const [head, tail] = [WRITTEN.text[1].slice(0, 30), WRITTEN.text[1].slice(30)];
  const first = anthropicStream([]);
  const block = (index: number, text: string) => [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index, delta: { type: "text_delta", text } },
    { type: "content_block_stop", index },
  ];
  first.splice(1, 0, ...block(0, WRITTEN.text[0] + head), ...block(1, tail + WRITTEN.text[2]));
  const { sent } = await resent(
    "/v1/messages",
    { model: "m", max_tokens: 100, stream: true, messages, tools: TOOLS_ANTHROPIC },
    [{ sse: first, named: true }, { sse: anthropicStream([], [GOOD]), named: true }],
  );
  assert.equal(sent.length, 2);
  const [, assistant] = messagesOf(sent);
  const content = assistant.content as Record<string, unknown>[];
  assert.deepEqual(content.map((b) => b.type), ["text", "text", "tool_use"]);
  assert.deepEqual(content.slice(0, 2).map((b) => b.text), ["Sure.", "One moment."]);
  assert.deepEqual([content[2].name, content[2].input], ["get_weather", BAD.args]);
});
