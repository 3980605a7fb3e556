// A Chat stream whose choice sends its role with a tool call in its first chunk, then text: the gate holds
// that chunk and lets the text flow, and the openai SDK's `ChatCompletionStream` hands out a choice's text
// (`content.delta`, `refusal.delta`) only once the choice's role has come; a rejected call written into
// that chunk takes the chunk with it, and the SDK throws on a choice without a role. Driven through the
// official openai client, with and without the gate, under each way of rejecting.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { gateCompletion, guardFetch } from "../gate.ts";
import {
  chatChunk,
  choiceChunk,
  type FakeReply,
  type FakeServer,
  startFakeLlmServer,
  TOOLS_OPENAI,
} from "./_fake_llm_server.ts";

const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];
let next: FakeReply = { json: {} };
let server: FakeServer;
before(async () => {
  server = await startFakeLlmServer(() => next);
});
after(async () => {
  await server.close();
});

/** The frames of a stream whose one choice calls `name` in its first chunk (with the role), then talks. */
function callThenText(name: string, text: string[], field: "content" | "refusal" = "content"): unknown[] {
  const call = { index: 0, id: "call_1", type: "function", function: { name, arguments: "" } };
  return [
    chatChunk({ role: "assistant", content: null, tool_calls: [call] }),
    chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    ...text.slice(0, 1).map((t) => chatChunk({ [field]: t })),
    chatChunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
    ...text.slice(1).map((t) => chatChunk({ [field]: t })),
    chatChunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
}

/** The openai SDK's stream helper over the fake server through `fetch_`, asking for `n` answers. */
function sdkStream(fetch_: typeof fetch, n?: number) {
  const client = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, fetch: fetch_, maxRetries: 0 });
  return client.chat.completions.stream({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    ...(n ? { n } : {}),
  });
}

/** What the openai SDK's stream helper hands out: its text events and the final completion. */
async function sdkRead(fetch_: typeof fetch) {
  const stream = sdkStream(fetch_);
  const deltas: string[] = [];
  const refusals: string[] = [];
  const done: string[] = [];
  stream.on("content.delta", (e) => deltas.push(e.delta));
  stream.on("refusal.delta", (e) => refusals.push(e.delta));
  stream.on("content.done", (e) => done.push(e.content));
  const final = await stream.finalChatCompletion();
  const message = final.choices[0].message;
  const calls = (message.tool_calls ?? []).map((c) => c.type === "function" ? c.function.name : c.type);
  return { deltas, refusals, done, content: message.content, refusal: message.refusal, calls, final };
}

test("guardFetch Chat stream: text after a held call of its choice reaches the openai SDK's content events", async () => {
  next = { sse: callThenText("get_weather", ["It is ", "sunny."]) };
  const plain = await sdkRead(fetch);
  assert.deepEqual(plain.deltas, ["It is ", "sunny."]);
  const gated = await sdkRead(guardFetch(fetch) as typeof fetch);
  assert.deepEqual(gated, plain);
  // With no text after it, the chunk that carries the role goes out with the call, as it came (the
  // recorded traffic of Alibaba sends its role so).
  const frames = callThenText("get_weather", []);
  next = { sse: frames };
  const res = await guardFetch(fetch)(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const sent = frames.map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`).join("");
  assert.equal(await res.text(), sent);
});

test("guardFetch n=2 Chat stream: text after a held call of choice 1 reaches the openai SDK's content events", async () => {
  const call = { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } };
  next = {
    sse: [
      choiceChunk(0, { role: "assistant", content: "" }),
      choiceChunk(1, { role: "assistant", content: null, tool_calls: [call] }),
      choiceChunk(0, { content: "Sunny " }),
      choiceChunk(1, { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
      choiceChunk(1, { content: "Let me check." }),
      choiceChunk(0, { content: "today." }),
      choiceChunk(0, {}, "stop"),
      choiceChunk(1, {}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  };
  const read = async (fetch_: typeof fetch) => {
    const stream = sdkStream(fetch_, 2);
    // Per choice: the text watch may hold one choice's text while another's flows.
    const deltas: string[][] = [[], []];
    stream.on("chunk", (chunk, snapshot) => {
      for (const c of chunk.choices) {
        const message = snapshot.choices[c.index].message;
        if (c.delta.content && message.role === "assistant") deltas[c.index].push(c.delta.content);
      }
    });
    const final = await stream.finalChatCompletion();
    return { deltas, final };
  };
  const plain = await read(fetch);
  const gated = await read(guardFetch(fetch) as typeof fetch);
  assert.deepEqual(plain.deltas, [["Sunny ", "today."], ["Let me check."]]);
  assert.deepEqual(gated, plain);
});

test("guardFetch Chat stream: a refusal after a held call of its choice reaches the openai SDK's refusal events", async () => {
  next = { sse: callThenText("get_weather", ["I would ", "rather not."], "refusal") };
  const plain = await sdkRead(fetch);
  assert.deepEqual(plain.refusals, ["I would ", "rather not."]);
  const gated = await sdkRead(guardFetch(fetch) as typeof fetch);
  assert.deepEqual(gated, plain);
});

for (const onRejected of ["withhold-turn", "drop-call"] as const) {
  test(`guardFetch Chat stream (${onRejected}): text after a rejected call of its choice reaches the openai SDK's content events`, async () => {
    next = { sse: callThenText("delete_everything", ["It is ", "sunny."]) };
    const got = await sdkRead(guardFetch(fetch, { onRejected }) as typeof fetch);
    assert.deepEqual(got.calls, []);
    assert.deepEqual(got.deltas.slice(0, 2), ["It is ", "sunny."]);
    assert.equal(got.deltas.length, 3, "the reason follows as one more delta");
    assert.match(got.deltas[2], /^\n\n[\s\S]*delete_everything/);
    assert.equal(got.content, got.deltas.join(""));
    assert.deepEqual(got.done, [got.content]);
  });
}

for (const onRejected of ["withhold-turn", "drop-call"] as const) {
  test(`guardFetch Chat stream (${onRejected}): text the watch held beside a rejected call comes before the reason, as in a body`, async () => {
    // A message that opens with call-shaped JSON is held as a possible written call; beside native calls it
    // is the answer's text, and a body puts it before the reason. The stream sent the reason first.
    const json = '{"name": "search", "arguments": {"query": "notes"}}';
    next = { sse: callThenText("delete_everything", [json]) };
    const plain = await sdkRead(fetch);
    const body = await gateCompletion({ tools: TOOLS_OPENAI }, plain.final, { onRejected });
    const content = (body.response as typeof plain.final).choices[0].message.content ?? "";
    assert.match(content, /^\{"name": "search"[\s\S]*delete_everything/);
    const got = await sdkRead(guardFetch(fetch, { onRejected }) as typeof fetch);
    assert.deepEqual(got.calls, []);
    assert.equal(got.deltas[0], json);
    assert.equal(got.content, content);
    assert.equal(got.deltas.join(""), content);
    assert.equal(got.final.choices[0].message.role, "assistant");
  });
}

test("guardFetch Chat stream: held text in a chunk that also carries a call part keeps its place before the reason", async () => {
  // The watch holds such a chunk whole; its text stayed behind while the held text after it went first.
  const call = {
    index: 0,
    id: "call_1",
    type: "function",
    function: { name: "delete_everything", arguments: "" },
  };
  next = {
    sse: [
      chatChunk({ role: "assistant", content: null, tool_calls: [call] }),
      chatChunk({ content: '{"name": "search", ' }),
      chatChunk({ content: '"arguments": ', tool_calls: [{ index: 0, function: { arguments: "{}" } }] }),
      chatChunk({ content: '{"query": "notes"}}' }),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  };
  const plain = await sdkRead(fetch);
  const body = await gateCompletion({ tools: TOOLS_OPENAI }, plain.final);
  const content = (body.response as typeof plain.final).choices[0].message.content ?? "";
  assert.match(content, /^\{"name": "search", "arguments": \{"query": "notes"\}\}\n\n/);
  const got = await sdkRead(guardFetch(fetch) as typeof fetch);
  assert.equal(got.content, content);
  assert.deepEqual(got.calls, []);
});

for (const onRejected of ["withhold-turn", "drop-call"] as const) {
  test(`guardFetch n=2 Chat stream (${onRejected}): another choice's finish does not split the held text of a choice from its reason`, async () => {
    // Choice 1's held text came in two chunks with choice 0's finish between them: its first piece went
    // before the reason, the second after it.
    const call = (id: string) => ({
      index: 0,
      id,
      type: "function",
      function: { name: "delete_everything", arguments: "{}" },
    });
    next = {
      sse: [
        choiceChunk(0, { role: "assistant", content: null, tool_calls: [call("call_0")] }),
        choiceChunk(1, { role: "assistant", content: null, tool_calls: [call("call_1")] }),
        choiceChunk(1, { content: '{"name": "search", ' }),
        choiceChunk(0, {}, "tool_calls"),
        choiceChunk(1, { content: '"arguments": {"query": "notes"}}' }),
        choiceChunk(1, {}, "tool_calls"),
        "data: [DONE]\n\n",
      ],
    };
    const plain = await sdkStream(fetch, 2).finalChatCompletion();
    const body = await gateCompletion({ tools: TOOLS_OPENAI }, plain, { onRejected });
    const want = (body.response as typeof plain).choices.map((c) => c.message.content);
    assert.match(want[1] ?? "", /^\{"name": "search", "arguments": \{"query": "notes"\}\}\n\n/);
    const gated = await sdkStream(guardFetch(fetch, { onRejected }) as typeof fetch, 2).finalChatCompletion();
    // (choice 0 said nothing: its reason stands alone, as in the body, not set apart as after text)
    assert.deepEqual(gated.choices.map((c) => c.message.content), want);
  });
}

for (const onRejected of ["withhold-turn", "drop-call"] as const) {
  test(`guardFetch Chat stream (${onRejected}): a rejected call written into the chunk that carries the role leaves the openai SDK a role`, async () => {
    // The chunk is held with the call and dropped with it; the SDK threw "missing role for choice 0".
    const written = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>';
    next = {
      sse: [
        chatChunk({ role: "assistant", content: `Sure. ${written}` }),
        chatChunk({}, "stop"),
        "data: [DONE]\n\n",
      ],
    };
    const got = await sdkRead(guardFetch(fetch, { onRejected }) as typeof fetch);
    assert.equal(got.final.choices[0].message.role, "assistant");
    assert.match(got.content ?? "", /^Sure\. \n\n[\s\S]*delete_everything/);
    assert.equal(got.deltas.join(""), got.content);
  });
}

test("guardFetch n=2 Chat stream: a choice's role chunk that comes while another's call is held goes ahead of its text", async () => {
  // Held behind choice 0's call, choice 1's `{"role": "assistant", "content": ""}` went out after its text,
  // and the openai SDK read that empty content as one more content delta.
  const call = { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } };
  next = {
    sse: [
      choiceChunk(0, { role: "assistant", content: null, tool_calls: [call] }),
      choiceChunk(1, { role: "assistant", content: "" }),
      choiceChunk(0, { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
      choiceChunk(1, { content: "Sunny " }),
      choiceChunk(1, { content: "today." }),
      choiceChunk(0, {}, "tool_calls"),
      choiceChunk(1, {}, "stop"),
      "data: [DONE]\n\n",
    ],
  };
  const read = async (fetch_: typeof fetch) => {
    const stream = sdkStream(fetch_, 2);
    const deltas: string[] = [];
    stream.on("content.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalChatCompletion();
    return { deltas, final };
  };
  const plain = await read(fetch);
  assert.deepEqual(plain.deltas, ["Sunny ", "today."]);
  assert.deepEqual(await read(guardFetch(fetch) as typeof fetch), plain);
});

test("guardFetch Chat stream: an empty delta after a held call keeps its place among the openai SDK's content events", async () => {
  const call = { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } };
  next = {
    sse: [
      chatChunk({ role: "assistant", content: "It is " }),
      chatChunk({ tool_calls: [call] }),
      chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
      chatChunk({ content: "" }),
      chatChunk({ content: "sunny." }),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  };
  const plain = await sdkRead(fetch);
  assert.deepEqual(plain.deltas, ["It is ", "", "sunny."]);
  const gated = await sdkRead(guardFetch(fetch) as typeof fetch);
  assert.deepEqual(gated.deltas, plain.deltas); // (content.done comes later: the held call comes after the text)
  assert.deepEqual(gated.final, plain.final);
});

test("guardFetch Chat stream: text given as content parts after a held call keeps its place beside an empty delta", async () => {
  // Content parts (Mistral streams them so) were not read as text by the router: held behind the call while
  // a chunk of `content: ""` flowed, they reached the client after it.
  const call = { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } };
  const parts = (text: string) => chatChunk({ content: [{ type: "text", text }] });
  next = {
    sse: [
      chatChunk({ role: "assistant", content: null, tool_calls: [call] }),
      chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
      parts("It is "),
      chatChunk({ content: "" }),
      parts("sunny."),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  };
  const res = await guardFetch(fetch)(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const contents = (await res.text()).split("\n").filter((l) => l.startsWith("data: {")).map((l) =>
    JSON.parse(l.slice(6)).choices[0].delta.content
  ).filter((c) => c != null);
  assert.deepEqual(contents, [[{ type: "text", text: "It is " }], "", [{ type: "text", text: "sunny." }]]);
});

test("guardFetch Chat stream: a choice that only reasoned before its rejected call gets the reason alone, as in its body", async () => {
  // Reasoning is no content: the body joins the reason to an empty content, so it stands alone; the stream
  // set it apart with a blank line, as after text.
  const call = {
    index: 0,
    id: "call_1",
    type: "function",
    function: { name: "delete_everything", arguments: "{}" },
  };
  next = {
    sse: [
      chatChunk({ role: "assistant", content: null, reasoning_content: "The user wants it all gone." }),
      chatChunk({ tool_calls: [call] }),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  };
  const plain = await sdkStream(fetch).finalChatCompletion();
  const body = await gateCompletion({ tools: TOOLS_OPENAI }, plain);
  const want = (body.response as typeof plain).choices[0].message.content;
  assert.match(want ?? "", /^toolguard/);
  const gated = await sdkStream(guardFetch(fetch) as typeof fetch).finalChatCompletion();
  assert.equal(gated.choices[0].message.content, want);
});

for (const field of ["reasoning_content", "reasoning", "thinking"]) {
  for (const name of ["get_weather", "delete_everything"]) {
    test(`guardFetch Chat stream: ${field} in a chunk with a call (${name}) reaches the client once, before the call`, async () => {
      // The chunk is split: its text goes now, its call part waits. A `thinking` string stayed in the held
      // call part too, so the client got it twice, the second time after text that came after it.
      const call = { index: 0, id: "call_1", type: "function", function: { name, arguments: "" } };
      next = {
        sse: [
          chatChunk({ role: "assistant", content: null, [field]: "Mulling it over.", tool_calls: [call] }),
          chatChunk({ content: "Checking." }),
          chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Oslo"}' } }] }),
          chatChunk({}, "tool_calls"),
          "data: [DONE]\n\n",
        ],
      };
      const guarded = guardFetch(fetch) as typeof fetch;
      const text = await (await guarded(`${server.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m", messages, tools: TOOLS_OPENAI, stream: true }),
      })).text();
      assert.equal(text.split("Mulling it over.").length, 2);
      assert.ok(text.indexOf("Mulling it over.") < text.indexOf("Checking."));
      assert.equal(text.includes(`"name":"${name}"`), name === "get_weather");
    });
  }
}
