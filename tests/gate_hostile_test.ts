/**
 * A provider that sends a call the gate's usual signs would miss: a stream typed as JSON or text, an
 * OpenAI Responses call only in its `.done` item or final snapshot, an Anthropic `tool_use` without an
 * index or inside `message_start`, a Cohere call without an index. The official clients read each of these
 * as a call, so the gate must judge it; and a client that cancels leaves no retry behind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import { type GateEvent, guardFetch } from "../gate.ts";
import { describeVerdict } from "../describe.ts";
import {
  anthropicStream,
  chatChunk,
  chatCompletion,
  chatStream,
  choicesChunk,
  fakeProvider,
  ollamaStream,
  responsesStream,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
} from "./_fake_llm_server.ts";
import { sdkClients, streamedCallNames } from "./_sdk_clients.ts";
import { ARRAY_ITERATOR, countingWork } from "./_counting.ts";

const provider = fakeProvider();
const { reply, events, gfetch, url } = provider;
const { openai, anthropic, ollama } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];
const UNDECLARED = [{ name: "delete_everything", args: {} }];
/** The names a call kept beside a dropped one takes: one that passes, one the judge rejects. */
const CALLED = ["get_weather", "delete_everything"];
/** The reason for a dropped call, alone at the end of what the model read. */
const DROPPED_ALONE =
  /\n\ntoolguard dropped this turn's tool call: its stream events were malformed [^]*needed\.$/;
/** The reason for a dropped call, then a blank line and the judge's for a rejected one, as the model read. */
const DROPPED_THEN_STOPPED =
  /\n\ntoolguard dropped this turn's tool call: its stream events were malformed [^]*needed\.\n\ntoolguard stopped /;

test("guardFetch: a stream typed as JSON, as text or as bytes is judged as the stream the client reads", async () => {
  for (const type of ["application/json", "text/plain", "application/octet-stream"]) {
    reply({ sse: chatStream(["Sure"], UNDECLARED), headers: { "content-type": type } });
    const names = await streamedCallNames(openai(), messages);
    assert.deepEqual(names, [], `${type}: the undeclared call never reaches the client`);
    assert.equal(events.length, 1, type);
    assert.equal(events[0].verdict.allowed, false, type);
  }
  // The same call asked for without a stream, in a JSON body typed as text: judged as the JSON it is.
  reply({
    body: JSON.stringify(chatCompletion(null, UNDECLARED)),
    contentType: "text/plain",
  });
  const res = await gfetch(`${url()}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages, tools: TOOLS_OPENAI }),
  });
  const body = await res.json();
  assert.equal(body.choices[0].message.tool_calls, undefined);
  assert.equal(events[0].verdict.allowed, false);
});

test("guardFetch: an OpenAI Responses call seen only in its .done item or in the final snapshot is judged", async () => {
  const full = responsesStream([], UNDECLARED) as Record<string, unknown>[];
  const doneOnly = full.filter((e) =>
    e.type !== "response.output_item.added" && e.type !== "response.function_call_arguments.delta" &&
    e.type !== "response.function_call_arguments.done"
  );
  const snapshotOnly = doneOnly.filter((e) => e.type !== "response.output_item.done");
  for (const [label, sse] of [["done item", doneOnly], ["final snapshot", snapshotOnly]] as const) {
    reply({ sse, named: true });
    const stream = openai().responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
    const final = await stream.finalResponse();
    assert.deepEqual(final.output.filter((o) => o.type === "function_call"), [], label);
    assert.equal(events[0]?.verdict.allowed, false, label);
    assert.equal(events[0]?.changed, true, label);
  }
});

test("guardFetch: an Anthropic tool_use inside message_start is judged; one without an index is dropped", async () => {
  const base = anthropicStream([], UNDECLARED) as Record<string, unknown>[];
  const noIndex = base.map((e) => {
    if (
      e.type === "content_block_start" || e.type === "content_block_delta" || e.type === "content_block_stop"
    ) {
      const { index: _index, ...rest } = e;
      return rest;
    }
    return e;
  });
  const start = base[0] as { message: Record<string, unknown> };
  const inStart = [
    {
      ...start,
      message: {
        ...start.message,
        content: [{ type: "tool_use", id: "toolu_1", name: "delete_everything", input: {} }],
      },
    },
    ...base.slice(1).filter((e) => !String(e.type).startsWith("content_block")),
  ];
  for (const [label, sse] of [["no index", noIndex], ["in message_start", inStart]] as const) {
    reply({ sse, named: true });
    const message = await anthropic().messages.stream({
      model: "claude",
      max_tokens: 10,
      messages,
      tools: TOOLS_ANTHROPIC as never,
    }).finalMessage();
    assert.deepEqual(message.content.filter((b) => b.type === "tool_use"), [], label);
    if (label === "in message_start") assert.equal(events[0]?.verdict.allowed, false, label);
    // A block without an index has no position both the SDK (which appends it) and the gate agree on: its
    // frames are dropped, so no client holds the call.
    else {
      assert.ok(events[0]?.findings.some((f) => /no block/.test(f.message)), label);
      // (the stop stayed `tool_use` with no call and nothing said: a client's loop ran no tool and the model
      // was never told its call went)
      assert.equal(message.stop_reason, "end_turn", label);
      const said = message.content.flatMap((b) => b.type === "text" ? [b.text] : []).join("");
      assert.match(said, /^toolguard dropped this turn's tool call: /, label);
      // (and `onVerdict` says so, as of any answer the gate rewrote)
      assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, said], label);
    }
  }
});

test("guardFetch: a Cohere tool call without an index is judged", async () => {
  const call = (type: string, extra: Record<string, unknown>) => ({ type, ...extra });
  const sse = [
    call("message-start", { id: "m", delta: { message: { role: "assistant" } } }),
    call("tool-call-start", {
      delta: {
        message: {
          tool_calls: { id: "c1", type: "function", function: { name: "delete_everything", arguments: "" } },
        },
      },
    }),
    call("tool-call-delta", { delta: { message: { tool_calls: { function: { arguments: "{}" } } } } }),
    call("tool-call-end", {}),
    call("message-end", { delta: { finish_reason: "TOOL_CALL" } }),
  ];
  reply({ sse });
  const res = await gfetch(`${url()}/v2/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const text = await res.text();
  assert.doesNotMatch(text, /"name":"delete_everything"/, "the call's events are not forwarded");
  assert.equal(events[0]?.verdict.allowed, false);
  assert.ok(events[0]?.findings.some((f) => f.code === "missing_index"));
});

/**
 * A provider for the cancel test: the first request streams text and a rejected call and then stalls (or
 * ends, with `ends`); a retry streams text and stalls. Records the requests and which connections closed.
 */
async function stallingProvider(ends: boolean) {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${
      JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        created: 0,
        model: "m",
        choices: [{ index: 0, delta, finish_reason: finish }],
      })
    }\n\n`;
  const call = {
    index: 0,
    id: "call_1",
    type: "function",
    function: { name: "delete_everything", arguments: "{}" },
  };
  const requests: number[] = [];
  const closed: number[] = [];
  const open: ServerResponse[] = [];
  const http = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const n = requests.push(requests.length) - 1;
      res.on("close", () => closed.push(n));
      open.push(res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (n > 0) return void res.write(chunk({ content: "retry text" }));
      res.write(chunk({ role: "assistant", content: "Hello" }) + chunk({ tool_calls: [call] }));
      if (ends) res.end(chunk({}, "tool_calls") + "data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as { port: number }).port}/v1/chat/completions`;
  const stop = () => {
    for (const res of open) res.destroy();
    http.close();
  };
  return { url, requests, closed, stop };
}

const until = async (test: () => boolean) => {
  for (let waited = 0; !test() && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
};

test("guardFetch: a client that cancels while the gate holds a call gets no retry sent or left open", async () => {
  const reported: GateEvent[] = [];
  const fetchWithRetry = guardFetch(fetch, { retry: 1, onVerdict: (e) => reported.push(e) });
  const post = (url: string) =>
    fetchWithRetry(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
    });

  // Cancelled while the provider stalls mid-turn: the end of the read is no end of the turn.
  const stalled = await stallingProvider(false);
  try {
    const reader = (await post(stalled.url)).body!.getReader();
    await reader.read(); // the text before the call
    const pending = reader.read();
    await new Promise((r) => setTimeout(r, 100));
    await reader.cancel("user stop");
    assert.deepEqual(await pending, { done: true, value: undefined });
    await until(() => stalled.closed.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(stalled.requests.length, 1, "no retry was sent for a stream nobody reads");
    assert.deepEqual(reported, [], "nor was a verdict reported");
  } finally {
    stalled.stop();
  }

  // Cancelled while the retry's stream is forwarded: the retry's connection is closed too.
  const retried = await stallingProvider(true);
  try {
    const reader = (await post(retried.url)).body!.getReader();
    let got = "";
    while (!got.includes("retry text")) got += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel("user stop");
    await until(() => retried.closed.length >= 2);
    assert.deepEqual([...retried.closed].sort(), [0, 1], "both upstream connections are closed");
  } finally {
    retried.stop();
  }
});

test("guardFetch: an OpenAI Chat index reused for a second call is judged as the SDK merges it too", async () => {
  const tools = [
    {
      type: "function",
      function: {
        name: "get_weather",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    },
    {
      type: "function",
      function: { name: "run", parameters: { type: "object", properties: { cmd: { enum: ["ls"] } } } },
    },
  ];
  const delta = (call: Record<string, unknown>) =>
    chatChunk({ tool_calls: [{ index: 0, type: "function", ...call }] });
  reply({
    sse: [
      chatChunk({ role: "assistant", content: null }),
      delta({
        id: "call_1",
        function: { name: "get_weather", arguments: '{"city":"Oslo","cmd":"rm -rf /"}' },
      }),
      delta({ id: "call_2", function: { name: "run", arguments: "" } }),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const stream = openai().chat.completions.stream({ model: "m", messages, tools: tools as never });
  const final = await stream.finalChatCompletion();
  // Each call alone passes; merged (run, with the other's arguments) it does not: the turn is refused.
  assert.equal(final.choices[0].message.tool_calls?.length ?? 0, 0);
  assert.equal(events[0].verdict.allowed, false);
  assert.equal(events[0].calls?.[0].name, "run");
  assert.ok(events[0].findings.some((f) => f.code === "reused_index"));
});

test("guardFetch: a stream that reuses index 0 for thousands of calls is judged in linear time", async () => {
  const n = 3_000;
  const call = (i: number) => ({
    index: 0,
    id: `call_${i}`,
    type: "function",
    function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
  });
  const calls = Array.from({ length: n }, (_, i) => chatChunk({ tool_calls: [call(i)] }));
  const sse = [chatChunk({ role: "assistant", content: null }), ...calls, chatChunk({}, "tool_calls")];
  reply({ sse: [...sse, "data: [DONE]\n\n"] });
  // Array iterator steps count the work without depending on the machine's speed: grouping the calls by
  // index once copied the group for every call (4.5 million steps here); now the whole exchange, server and
  // client included, takes about 26 per call.
  const [text, steps] = await countingWork(ARRAY_ITERATOR, "next", async () => {
    const res = await gfetch(`${url()}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages, tools: TOOLS_OPENAI, stream: true }),
    });
    return await res.text();
  });
  assert.ok(text.includes(`"call_${n - 1}"`)); // each call alone is allowed, and merged they are no call
  assert.equal(events[0].verdict.allowed, true);
  assert.ok(events[0].findings.some((f) => f.code === "reused_index"));
  assert.ok(steps < 200 * n, `${steps} iterator steps for ${n} calls`);
});

test("guardFetch: an OpenAI Chat chunk that carries its call in message, not delta, is judged and cut", async () => {
  const call = {
    index: 0,
    id: "call_1",
    type: "function",
    function: { name: "delete_everything", arguments: "{}" },
  };
  const chunk = chatChunk({});
  reply({
    sse: [
      {
        ...chunk,
        choices: [{
          index: 0,
          message: { role: "assistant", tool_calls: [call] },
          finish_reason: "tool_calls",
        }],
      },
      "data: [DONE]\n\n",
    ],
  });
  const res = await gfetch(`${url()}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const text = await res.text();
  assert.doesNotMatch(text, /"tool_calls"/, "no call reaches the client, in delta or in message");
  assert.equal(events[0].verdict.allowed, false);
});

test("guardFetch: an OpenAI Responses item added with thousands of text parts is reframed in linear work", async () => {
  // The gate sends such an item as the item without its text and a delta per part, each under the frame's
  // `event:` name: the name was read again from the whole frame for each piece (quadratic in its size).
  const n = 4_000;
  const content = Array.from({ length: n }, () => ({ type: "output_text", text: "ab", annotations: [] }));
  const response = { id: "resp_1", object: "response", status: "in_progress", output: [] };
  const item = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content };
  reply({
    named: true,
    sse: [
      { type: "response.created", sequence_number: 0, response },
      { type: "response.output_item.added", sequence_number: 1, output_index: 0, item },
      { type: "response.completed", sequence_number: 2, response: { ...response, status: "completed" } },
    ],
  });
  // Characters split, counted, not timed: 834 million for these 4 000 parts, now about 240 a part.
  const [text, chars] = await countingWork(String.prototype, "split", async () => {
    const res = await gfetch(`${url()}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
    });
    return await res.text();
  }, (self: string) => self.length);
  assert.equal(text.split("event: response.output_text.delta\n").length - 1, n);
  assert.ok(chars < 2_000 * n, `${chars} characters split for ${n} parts`);
});

test("guardFetch: a rejected OpenAI Responses call finished at no output_index is withheld", async () => {
  // The gate's reader judges the call in such an item (a client that appends items runs it); the held item
  // was not counted as the call's, and the withheld turn sent it whole.
  const call = { type: "function_call", id: "fc_1", call_id: "call_1", name: "delete_everything" };
  const response = { id: "resp_1", object: "response", status: "in_progress", output: [] };
  reply({
    named: true,
    sse: [
      { type: "response.created", sequence_number: 0, response },
      { type: "response.output_item.done", sequence_number: 1, item: { ...call, arguments: "{}" } },
      { type: "response.completed", sequence_number: 2, response: { ...response, status: "completed" } },
    ],
  });
  const res = await gfetch(`${url()}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
  });
  const text = await res.text();
  assert.equal(events[0].verdict.allowed, false);
  assert.equal(text.includes('"call_1"'), false, text);
});

test("guardFetch Responses: a rejected call's arguments .done named only by item_id, after text with a written call, is not sent", async () => {
  // The text watch's reader took only the `.delta` argument events for part of a call: the `.done` without an
  // output_index went out with the rejected call's arguments (found by the fuzz; the openai SDK throws on such
  // a stream, but a client that files events by item_id reads the arguments).
  const written = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
  const args = JSON.stringify({ secret: "REJX1" });
  const call = { id: "fc_1", type: "function_call", call_id: "call_1", name: "delete_everything" };
  const message = { id: "msg_0", type: "message", role: "assistant" };
  const sse = [
    {
      type: "response.created",
      response: { id: "r", object: "response", status: "in_progress", output: [] },
    },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...message, status: "in_progress", content: [] },
    },
    {
      type: "response.content_part.added",
      item_id: "msg_0",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    },
    {
      type: "response.output_text.delta",
      item_id: "msg_0",
      output_index: 0,
      content_index: 0,
      delta: written,
    },
    { type: "response.output_text.done", item_id: "msg_0", output_index: 0, content_index: 0, text: written },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: {
        ...message,
        status: "completed",
        content: [{ type: "output_text", text: written, annotations: [] }],
      },
    },
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { ...call, status: "in_progress", arguments: "" },
    },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", delta: args },
    { type: "response.function_call_arguments.done", item_id: "fc_1", arguments: args },
    {
      type: "response.output_item.done",
      output_index: 1,
      item: { ...call, status: "completed", arguments: args },
    },
    {
      type: "response.completed",
      response: { id: "r", object: "response", status: "completed", output: [] },
    },
  ].map((e, i) => ({ ...e, sequence_number: i }));
  reply({ sse, named: true });
  const res = await gfetch(`${url()}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
  });
  const text = await res.text();
  assert.equal(events.at(-1)?.verdict.allowed, false);
  assert.doesNotMatch(text, /REJX1/);
});

test("guardFetch: an Anthropic tool_use block without an index after text that may start a written call ends as a rejected turn", async () => {
  // The text watch held the frames after "<tool_call>" (a written call may follow) and, finding none, let
  // them out as they came: the stop for the dropped call stayed `tool_use`, with nothing said of it.
  const sse = (anthropicStream(["Sure: <tool_call>"], UNDECLARED) as Record<string, unknown>[]).map((e) => {
    if (e.index === 0 || !String(e.type).startsWith("content_block")) return e;
    const { index: _index, ...rest } = e;
    return rest;
  });
  reply({ sse, named: true });
  const message = await anthropic().messages.stream({
    model: "claude",
    max_tokens: 10,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  }).finalMessage();
  assert.deepEqual(message.content.filter((b) => b.type === "tool_use"), []);
  assert.equal(message.stop_reason, "end_turn");
  const said = message.content.flatMap((b) => b.type === "text" ? [b.text] : []);
  assert.equal(said[0], "Sure: <tool_call>");
  assert.match(said[1], /^\n\ntoolguard dropped this turn's tool call: /);
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, said[1].trimStart()]);
});

test("guardFetch: an Anthropic message whose only tool_use block came under another event name ends as a rejected turn", async () => {
  // The SDK routes a frame by its `event:` name: the block reached no client, and the stop still said
  // `tool_use`, with nothing said.
  const frames = (anthropicStream([], UNDECLARED) as Record<string, unknown>[]).map((e) =>
    `event: ${e.type === "content_block_start" ? "ping" : e.type}\ndata: ${JSON.stringify(e)}\n\n`
  );
  const seen: GateEvent[] = [];
  const f = guardFetch(
    () =>
      Promise.resolve(new Response(frames.join(""), { headers: { "content-type": "text/event-stream" } })),
    { onVerdict: (e) => seen.push(e) },
  );
  const res = await f("http://llm.test/v1/messages", {
    method: "POST",
    body: JSON.stringify({ model: "claude", max_tokens: 10, stream: true, messages, tools: TOOLS_ANTHROPIC }),
  });
  const events = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
    JSON.parse(l.slice(6))
  );
  const stop = events.find((e) => e.type === "message_delta")?.delta.stop_reason;
  const said = events.flatMap((e) => e.delta?.type === "text_delta" ? [e.delta.text] : []).join("");
  assert.equal(stop, "end_turn");
  assert.match(said, /^toolguard dropped this turn's tool call: /);
  assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said]);
});

test("guardFetch n=3: a Chat answer whose only calls came in a chunk dropped as malformed ends as a rejected answer, each reading of its own", async () => {
  // Choice 0's call came in a chunk naming choice 0 twice, choice 2's two calls under the index "2": both
  // chunks were dropped, and each answer still finished for tool calls with no call and nothing said (choice
  // 0's finish held by the text watch after words that may start a written call, then let out raw).
  const call = (index: number, id: string) => ({
    index,
    id,
    type: "function",
    function: { name: "delete_everything", arguments: "{}" },
  });
  const role = { role: "assistant", content: "" };
  reply({
    sse: [
      choicesChunk([
        { index: 0, delta: { ...role, content: "Sure: <tool_call>" } },
        { index: 1, delta: { ...role, content: "Hi" } },
        { index: 2, delta: role },
      ]),
      choicesChunk([{ index: 0, delta: { tool_calls: [call(0, "A")] } }, { index: 0, delta: {} }]),
      choicesChunk([{ index: "2", delta: { tool_calls: [call(0, "B"), call(1, "C")] } }]),
      choicesChunk([
        { index: 0, delta: {}, finish_reason: "tool_calls" },
        { index: 1, delta: {}, finish_reason: "stop" },
        { index: 2, delta: {}, finish_reason: "tool_calls" },
      ]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    n: 3,
    tools: TOOLS_OPENAI as never,
  }).finalChatCompletion();
  const byIndex = [...final.choices].sort((a, b) => a.index - b.index);
  assert.deepEqual(byIndex.map((c) => c.finish_reason), ["stop", "stop", "stop"]);
  assert.deepEqual(byIndex.map((c) => c.message.tool_calls ?? []), [[], [], []]);
  const [zero, one, two] = byIndex.map((c) => c.message.content ?? "");
  assert.match(
    zero,
    /^Sure: <tool_call>\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.equal(one, "Hi");
  assert.match(two, /^toolguard dropped this turn's tool calls: their stream events were malformed/);
  assert.equal(events[0]?.changed, true);
  assert.match(events[0]?.reason ?? "", /^toolguard dropped this turn's tool calls: /);
});

test("guardFetch: a Chat answer whose only call came at a choice past the one asked for ends as a rejected answer", async () => {
  // (one answer asked: the call was that turn's, whatever index its chunk named; the chunk was dropped)
  const chunk = (index: number, delta: Record<string, unknown>, finish: string | null = null) => ({
    ...chatChunk(delta, finish),
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
  });
  const call = { index: 0, id: "A", type: "function", function: { name: "get_weather", arguments: "{}" } };
  reply({
    sse: [
      chunk(0, { role: "assistant", content: "" }),
      chunk(1, { tool_calls: [call] }),
      chunk(0, {}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
    .finalChatCompletion();
  assert.equal(final.choices[0]?.finish_reason, "stop");
  assert.deepEqual(final.choices[0]?.message.tool_calls ?? [], []);
  assert.match(final.choices[0]?.message.content ?? "", /^toolguard dropped this turn's tool call: /);
  assert.equal(events[0]?.reason, final.choices[0]?.message.content);
});

test("guardFetch n=2: the reason reported for a Chat turn tells of an answer's dropped calls beside another's rejected ones", async () => {
  // Choice 0's only call came in a chunk naming choice 0 twice (dropped), choice 1 called a tool not
  // declared (rejected): each answer read its own reason, and onVerdict reported the judge's alone.
  const call = (id: string) => ({
    index: 0,
    id,
    type: "function",
    function: { name: "delete_everything", arguments: "{}" },
  });
  const role = { role: "assistant", content: "" };
  reply({
    sse: [
      choicesChunk([{ index: 0, delta: role }, { index: 1, delta: role }]),
      choicesChunk([{ index: 0, delta: { tool_calls: [call("A")] } }, { index: 0, delta: {} }]),
      choicesChunk([{ index: 1, delta: { tool_calls: [call("B")] } }]),
      choicesChunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }, {
        index: 1,
        delta: {},
        finish_reason: "tool_calls",
      }]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
  })
    .finalChatCompletion();
  const [zero, one] = [...final.choices].sort((a, b) => a.index - b.index).map((c) =>
    c.message.content ?? ""
  );
  assert.match(zero, /^toolguard dropped this turn's tool call: /);
  assert.match(one, /delete_everything was rejected/);
  assert.equal(events[0]?.changed, true);
  assert.ok(events[0]?.reason?.includes(zero), `the reported reason omits answer 0's: ${events[0]?.reason}`);
  assert.ok(
    events[0]?.reason?.includes(one.trim()),
    `the reported reason omits answer 1's: ${events[0]?.reason}`,
  );
});

test("guardFetch n=2: a Chat turn with an answer's dropped call and another's allowed written call reports the dropped one", async () => {
  // The turn ended through the written-call path with its call allowed: onVerdict said nothing changed,
  // though answer 0 read a reason in place of its call.
  const call = { index: 0, id: "A", type: "function", function: { name: "get_weather", arguments: "{}" } };
  const role = { role: "assistant", content: "" };
  reply({
    sse: [
      choicesChunk([{ index: 0, delta: role }, { index: 1, delta: role }]),
      choicesChunk([{ index: 0, delta: { tool_calls: [call] } }, { index: 0, delta: {} }]),
      choicesChunk([{
        index: 1,
        delta: { content: '<tool_call>{"name":"get_weather","arguments":{"city":"Oslo"}}</tool_call>' },
      }]),
      choicesChunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }, {
        index: 1,
        delta: {},
        finish_reason: "stop",
      }]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
  })
    .finalChatCompletion();
  const zero = final.choices.find((c) => c.index === 0)?.message.content ?? "";
  assert.match(zero, /^toolguard dropped this turn's tool call: /);
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, zero]);
});

test("guardFetch: a Chat call whose start came in two dropped chunks is told of as one call", async () => {
  // (its id in one chunk, its name again in the next, both chunks naming choice 0 twice: counted twice, the
  // answer read "tool calls ... none of them ran" of the one call a client would have joined)
  const part = (fn: Record<string, unknown>, id?: string) => ({
    tool_calls: [{ index: 0, ...(id ? { id } : {}), function: fn }],
  });
  reply({
    sse: [
      choicesChunk([{ index: 0, delta: { role: "assistant", content: "" } }]),
      choicesChunk([{ index: 0, delta: part({ name: "get_weather", arguments: "" }, "A") }, {
        index: 0,
        delta: {},
      }]),
      choicesChunk([{ index: 0, delta: part({ name: "get_weather", arguments: "{}" }) }, {
        index: 0,
        delta: {},
      }]),
      choicesChunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
    .finalChatCompletion();
  assert.match(final.choices[0]?.message.content ?? "", /^toolguard dropped this turn's tool call: /);
  assert.equal(events[0]?.reason, final.choices[0]?.message.content);
});

test("guardFetch: an Anthropic message whose only tool_use block came in a frame that is not JSON ends as a rejected turn", async () => {
  // (the block's start cut short: dropped unread, and the stop still said `tool_use`, with nothing said)
  const sse: unknown[] = (anthropicStream(["Sure."], UNDECLARED) as Record<string, unknown>[]).map((e) =>
    e.type === "content_block_start" && e.index === 1
      ? `event: content_block_start\ndata: ${JSON.stringify(e).slice(0, -1)}\n\n`
      : e
  );
  reply({ sse, named: true });
  const message = await anthropic().messages.stream({
    model: "claude",
    max_tokens: 10,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  }).finalMessage();
  assert.deepEqual(message.content.filter((b) => b.type === "tool_use"), []);
  assert.equal(message.stop_reason, "end_turn");
  const said = message.content.flatMap((b) => b.type === "text" ? [b.text] : []);
  assert.equal(said[0], "Sure.");
  assert.match(said[1], /^\n\ntoolguard dropped this turn's tool call: /);
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, said[1].trimStart()]);
});

test("guardFetch n=3: a Chat chunk that is not JSON is told of by every answer that finishes for tool calls with none", async () => {
  // (the chunk cut short belongs to no known answer: answers 0 and 2, finished for tool calls with none, each
  // read it; answer 1 stops plainly; onVerdict counts it once, as each answer read it and as a call past n is)
  const role = { role: "assistant", content: "" };
  const call = choicesChunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "A", type: "function" }] } }]);
  reply({
    sse: [
      choicesChunk([{ index: 0, delta: role }, { index: 1, delta: { ...role, content: "Hi" } }, {
        index: 2,
        delta: role,
      }]),
      `data: ${JSON.stringify(call).slice(0, -1)}\n\n`,
      choicesChunk([
        { index: 0, delta: {}, finish_reason: "tool_calls" },
        { index: 1, delta: {}, finish_reason: "stop" },
        { index: 2, delta: {}, finish_reason: "tool_calls" },
      ]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    n: 3,
    tools: TOOLS_OPENAI as never,
  }).finalChatCompletion();
  const byIndex = [...final.choices].sort((a, b) => a.index - b.index);
  assert.deepEqual(byIndex.map((c) => c.finish_reason), ["stop", "stop", "stop"]);
  assert.deepEqual(byIndex.map((c) => c.message.tool_calls ?? []), [[], [], []]);
  assert.match(byIndex[0]?.message.content ?? "", /^toolguard dropped this turn's tool call: /);
  assert.equal(byIndex[1]?.message.content, "Hi");
  assert.equal(byIndex[2]?.message.content, byIndex[0]?.message.content);
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, byIndex[0]?.message.content]);
});

test("guardFetch: an Ollama message whose only call came in a line that is not JSON tells the model", async () => {
  // (the call's line cut short: dropped unread, and the message stopped plainly with nothing said of it;
  // after plain words its end flowed, the client stopped reading there, and onVerdict never heard of it)
  for (const words of ["Sure: <tool_call>", "Let me check."]) {
    const lines = ollamaStream([words], [{ name: "get_weather", args: { city: "Oslo" } }]).map((l) =>
      JSON.stringify(l).includes('"tool_calls"') ? JSON.stringify(l).slice(0, -1) + "\n" : l
    );
    reply({ ndjson: lines });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    const calls: unknown[] = [];
    let stop: string | undefined;
    for await (const p of parts) {
      text += p.message.content;
      calls.push(...p.message.tool_calls ?? []);
      if (p.done) stop = p.done_reason;
    }
    assert.deepEqual([calls, stop], [[], "stop"]);
    assert.ok(text.startsWith(`${words}\n\n`), text);
    const told = text.slice(`${words}\n\n`.length);
    assert.match(told, /^toolguard dropped this turn's tool call: its stream events were malformed/);
    assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, told], words);
    // (the verdict judged no call: its sentence must not say one was accepted)
    assert.equal(describeVerdict(events[0]!.verdict), "No call was judged, so none ran.");
  }
});

test("guardFetch: an Ollama line that is not JSON and names no call is dropped unsaid", async () => {
  // (it may have been text: the model is told of no call)
  const lines = ollamaStream(["It is ", "sunny."]).map((l, i) =>
    JSON.stringify(l).slice(0, i === 1 ? -1 : undefined)
  );
  const seen: GateEvent[] = [];
  const f = guardFetch(
    () =>
      Promise.resolve(
        new Response(lines.join("\n") + "\n", { headers: { "content-type": "application/x-ndjson" } }),
      ),
    { onVerdict: (e) => seen.push(e) },
  );
  const res = await f("http://llm.test/api/chat", {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const text = (await res.text()).split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l).message.content
  )
    .join("");
  assert.equal(text, "It is ");
  assert.deepEqual([seen[0]?.changed, seen[0]?.findings.length], [false, 1]);
});

test("guardFetch candidateCount=2: a Gemini candidate whose only call came in pieces (partialArgs) is told so", async () => {
  // (the chunk of pieced arguments was dropped; Gemini finishes a turn of calls STOP as any other, and the
  // candidate stopped with its call gone and nothing said; candidate 1 only spoke, and reads no reason)
  const chunk = (candidates: unknown[]) => `data: ${JSON.stringify({ candidates })}\n\n`;
  const text = (t: string, index: number, finish?: string) => ({
    index,
    content: { role: "model", parts: [{ text: t }] },
    ...(finish ? { finishReason: finish } : {}),
  });
  const pieced = {
    index: 0,
    content: {
      role: "model",
      parts: [{
        functionCall: { name: "get_weather", partialArgs: [{ jsonPath: "$.city", stringValue: "Oslo" }] },
      }],
    },
  };
  const wire = chunk([text("Let me check.", 0), text("Hi", 1)]) + chunk([pieced]) +
    chunk([text("", 0, "STOP"), text("", 1, "STOP")]);
  const seen: GateEvent[] = [];
  const f = guardFetch(
    () => Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } })),
    { onVerdict: (e) => seen.push(e) },
  );
  const res = await f("http://llm.test/v1beta/models/g:streamGenerateContent?alt=sse", {
    method: "POST",
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "Weather in Oslo?" }] }],
      generationConfig: { candidateCount: 2 },
    }),
  });
  const said = ["", ""];
  const finish: unknown[] = [];
  for (const l of (await res.text()).split("\n").filter((l) => l.startsWith("data: "))) {
    const candidates = JSON.parse(l.slice(6)).candidates as {
      content?: { parts?: { text?: string }[] };
      finishReason?: string;
    }[];
    candidates.forEach((c, i) => {
      for (const p of c.content?.parts ?? []) said[i] += p.text ?? "";
      if (c.finishReason) finish[i] = c.finishReason;
    });
  }
  assert.deepEqual(finish, ["STOP", "STOP"]);
  assert.match(
    said[0],
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.equal(said[1], "Hi");
  assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said[0].slice("Let me check.\n\n".length)]);
});

test("guardFetch n=2: Chat calls at a choice past n or negative are told of by the answer that finishes for tool calls with none", async () => {
  // (their chunks were dropped: they belong to no answer asked for, and answer 1 finished for tool calls
  // with no call and nothing said; answer 0 stops plainly and reads nothing)
  const call = (id: string) => ({
    tool_calls: [{ index: 0, id, type: "function", function: { name: "get_weather", arguments: "{}" } }],
  });
  const role = { role: "assistant", content: "" };
  reply({
    sse: [
      choicesChunk([{ index: 0, delta: { ...role, content: "Hi" } }, { index: 1, delta: role }]),
      choicesChunk([{ index: 2, delta: call("A") }]),
      choicesChunk([{ index: -1, delta: call("B") }]),
      choicesChunk([
        { index: 0, delta: {}, finish_reason: "stop" },
        { index: 1, delta: {}, finish_reason: "tool_calls" },
      ]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
  })
    .finalChatCompletion();
  const [zero, one] = [0, 1].map((i) => final.choices.find((c) => c.index === i));
  assert.deepEqual([zero?.finish_reason, one?.finish_reason], ["stop", "stop"]);
  assert.deepEqual(one?.message.tool_calls ?? [], []);
  assert.equal(zero?.message.content, "Hi");
  assert.match(
    one?.message.content ?? "",
    /^toolguard dropped this turn's tool calls: their stream events were malformed/,
  );
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, one?.message.content]);
});

test("guardFetch: an Anthropic call beside a tool_use block dropped as malformed goes or is rejected with the model told, as onVerdict says", async () => {
  // (the second call's block named index 7 where a client puts block 2: dropped; the first call went out
  // and nothing said the other had not; after words that may start a written call, the watch held the end)
  // (with the first call rejected too, onVerdict said the judge's reason first, the model the dropped one)
  for (
    const [words, name] of CALLED.flatMap((n) => ["Let me check.", "Sure: <tool_call>"].map((w) => [w, n]))
  ) {
    const sse = (anthropicStream([words], [
      { name, args: { city: "Oslo" } },
      { name: "delete_everything", args: {} },
    ]) as Record<string, unknown>[]).map((e) => e.index === 2 ? { ...e, index: 7 } : e);
    reply({ sse, named: true });
    const message = await anthropic().messages.stream({
      model: "claude",
      max_tokens: 10,
      messages,
      tools: TOOLS_ANTHROPIC as never,
    }).finalMessage();
    const passed = name === "get_weather";
    assert.deepEqual(
      [message.content.flatMap((b) => b.type === "tool_use" ? [b.name] : []), message.stop_reason],
      passed ? [["get_weather"], "tool_use"] : [[], "end_turn"],
    );
    const said = message.content.flatMap((b) => b.type === "text" ? [b.text] : []);
    assert.equal(said[0], words);
    const told = said.slice(1).join("");
    assert.match(told, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, told.trimStart()], words);
  }
});

test("guardFetch: an Ollama final chunk that brings words ends them before the reason for a call line not JSON", async () => {
  // (the reason went ahead of the final chunk, and its words came after it: "Let me <reason>check.")
  const lines = ollamaStream(["Let me "], [{ name: "get_weather", args: { city: "Oslo" } }]).map((l) => {
    const event = l as { message: { content: string }; done: boolean };
    if (event.done) return { ...event, message: { ...event.message, content: "check." } };
    return JSON.stringify(l).includes('"tool_calls"') ? JSON.stringify(l).slice(0, -1) + "\n" : l;
  });
  reply({ ndjson: lines });
  const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
  let text = "";
  for await (const p of parts) text += p.message.content;
  assert.match(
    text,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, text.slice("Let me check.\n\n".length)]);
});

test("guardFetch: a Gemini chunk that finishes with words ends them before the reason for a call in pieces", async () => {
  // (the reason went ahead of the finishing chunk, and its words came after it: "Let me <reason>check.")
  const chunk = (candidate: unknown) => `data: ${JSON.stringify({ candidates: [candidate] })}\n\n`;
  const pieced = {
    index: 0,
    content: {
      role: "model",
      parts: [{
        functionCall: { name: "get_weather", partialArgs: [{ jsonPath: "$.city", stringValue: "O" }] },
      }],
    },
  };
  const wire = chunk({ index: 0, content: { role: "model", parts: [{ text: "Let me " }] } }) + chunk(pieced) +
    chunk({ index: 0, content: { role: "model", parts: [{ text: "check." }] }, finishReason: "STOP" });
  const { said, finish, seen } = await throughGemini(wire);
  assert.equal(finish, "STOP");
  assert.match(
    said,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said.slice("Let me check.\n\n".length)]);
});

/**
 * A Gemini stream (`wire`) through guardFetch, its request declaring the tools: the text candidate 0 said,
 * the calls it sent, its last finish and usage, what onVerdict had.
 */
async function throughGemini(wire: string) {
  const seen: GateEvent[] = [];
  const f = guardFetch(
    () => Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } })),
    { onVerdict: (e) => seen.push(e) },
  );
  const res = await f("http://llm.test/v1beta/models/g:streamGenerateContent?alt=sse", {
    method: "POST",
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "Weather in Oslo?" }] }],
      tools: [{ functionDeclarations: TOOLS_OPENAI.map((t) => t.function) }],
    }),
  });
  let said = "";
  let finish: unknown;
  let usage: unknown;
  const calls: Record<string, unknown>[] = [];
  for (const l of (await res.text()).split("\n").filter((l) => l.startsWith("data: "))) {
    const event = JSON.parse(l.slice(6));
    usage = event.usageMetadata ?? usage;
    const [c] = event.candidates as {
      content?: { parts?: { text?: unknown; functionCall?: Record<string, unknown> }[] };
      finishReason?: string;
    }[];
    for (const p of c?.content?.parts ?? []) {
      said += typeof p.text === "string" ? p.text : "";
      if (p.functionCall) calls.push(p.functionCall);
    }
    finish = c?.finishReason ?? finish;
  }
  return { said, calls, finish, usage, seen };
}

test("guardFetch: a named whole Gemini call after a piece left unfinished (willContinue) is a call of its own, judged", async () => {
  // (it was taken for a piece of the unfinished call and dropped unjudged: a client (ADK) reads it as a call
  // of its own, so a declared one never reached it, and an undeclared one was told of as dropped, not rejected)
  for (const name of CALLED) {
    const chunk = (candidate: unknown) => `data: ${JSON.stringify({ candidates: [candidate] })}\n\n`;
    const call = (functionCall: unknown) => ({
      index: 0,
      content: { role: "model", parts: [{ functionCall }] },
    });
    const wire = chunk({ index: 0, content: { role: "model", parts: [{ text: "Let me check." }] } }) +
      chunk(
        call({
          name: "get_weather",
          partialArgs: [{ jsonPath: "$.city", stringValue: "O" }],
          willContinue: true,
        }),
      ) +
      chunk(call({ name, args: { city: "Oslo" } })) +
      chunk({ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" });
    const { said, calls, seen } = await throughGemini(wire);
    const passed = name === "get_weather";
    assert.deepEqual(calls, passed ? [{ name, args: { city: "Oslo" } }] : [], name);
    assert.deepEqual(seen[0]?.calls?.map((c) => c.name), [name]);
    assert.equal(seen[0]?.verdict.allowed, passed, name);
    assert.match(said, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said.slice("Let me check.\n\n".length)]);
  }
});

test("guardFetch: a Gemini chunk of a whole call and a call in pieces keeps the whole call, judged, and tells of the pieces", async () => {
  // (the chunk was refused whole: the whole call, which a client reads as a call of its own, was lost
  // unjudged and told of as dropped with the pieces, two calls where one was)
  const piece = { name: "search", partialArgs: [{ jsonPath: "$.q", stringValue: "O" }], willContinue: true };
  for (const name of CALLED) {
    for (const order of ["whole first", "piece first"]) {
      const whole = { name, args: { city: "Oslo" } };
      const calls = order === "whole first" ? [whole, piece] : [piece, whole];
      const chunk = (candidate: unknown) => `data: ${JSON.stringify({ candidates: [candidate] })}\n\n`;
      const wire = chunk({ index: 0, content: { role: "model", parts: [{ text: "Let me check." }] } }) +
        chunk({
          index: 0,
          content: { role: "model", parts: calls.map((functionCall) => ({ functionCall })) },
        }) +
        chunk({ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" });
      const { said, calls: sent, seen } = await throughGemini(wire);
      const passed = name === "get_weather";
      const label = `${name}, ${order}`;
      assert.deepEqual(sent, passed ? [whole] : [], label);
      assert.deepEqual(seen[0]?.calls?.map((c) => c.name), [name], label);
      assert.equal(seen[0]?.verdict.allowed, passed, label);
      assert.match(said, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, label);
      assert.equal(seen[0]?.reason, said.slice("Let me check.\n\n".length), label);
    }
  }
});

test("guardFetch: a Gemini call dropped in three pieces (willContinue) is told of as one call", async () => {
  // (each chunk's call part was counted a call of its own: "its calls ... none of them ran" of one call)
  const piece = (args: Record<string, unknown>) =>
    `data: ${
      JSON.stringify({
        candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: args }] } }],
      })
    }\n\n`;
  const partial = (value: string) => [{ jsonPath: "$.city", stringValue: value }];
  const wire = piece({ name: "get_weather", partialArgs: partial("O"), willContinue: true }) +
    piece({ partialArgs: partial("sl"), willContinue: true }) + piece({ partialArgs: partial("o") }) +
    `data: ${
      JSON.stringify({
        candidates: [{ index: 0, content: { role: "model", parts: [] }, finishReason: "STOP" }],
      })
    }\n\n`;
  const { seen } = await throughGemini(wire);
  assert.match(
    seen[0]?.reason ?? "",
    /^toolguard dropped this turn's tool call: its stream events were malformed/,
  );
});

test("guardFetch: a Chat chunk that finishes for tool calls with words ends them before the reason for a chunk not JSON", async () => {
  // (the reason went ahead of the finishing chunk, and its words came after it: "Let me <reason>check.")
  const call = {
    tool_calls: [{ index: 0, id: "A", type: "function", function: { name: "get_weather", arguments: "{}" } }],
  };
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...chatChunk({}),
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  reply({
    sse: [
      chunk({ role: "assistant", content: "Let me " }),
      `data: ${JSON.stringify(chunk(call)).slice(0, -1)}\n\n`,
      chunk({ content: "check." }, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
    .finalChatCompletion();
  const said = final.choices[0]?.message.content ?? "";
  assert.equal(final.choices[0]?.finish_reason, "stop");
  assert.match(
    said,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, said.slice("Let me check.\n\n".length)]);
});

test("guardFetch: a Chat call that comes in the chunk that finishes its choice, after a chunk not JSON, keeps its finish", async () => {
  // (the choice was taken for one with no call: it read that its call was dropped and finished stop, and the
  // call went out all the same)
  const call = {
    tool_calls: [{
      index: 0,
      id: "A",
      type: "function",
      function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
    }],
  };
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...chatChunk({}),
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  reply({
    sse: [
      chunk({ role: "assistant", content: "Hi." }),
      `data: ${JSON.stringify(chunk({ content: " more" })).slice(0, -1)}\n\n`,
      chunk(call, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
    .finalChatCompletion();
  const choice = final.choices[0];
  assert.deepEqual(
    [choice?.finish_reason, choice?.message.tool_calls?.length, choice?.message.content],
    ["tool_calls", 1, "Hi."],
  );
});

test("guardFetch: an Ollama call line not JSON that names tool_calls with an escape tells the model", async () => {
  // ("tool\u005fcalls" is the key tool_calls to JSON: the line was taken for text and dropped unsaid)
  const lines = ollamaStream(["Let me check."], [{ name: "get_weather", args: { city: "Oslo" } }]).map(
    (l) => {
      const raw = JSON.stringify(l);
      return raw.includes('"tool_calls"')
        ? raw.replace("tool_calls", "tool\\u005fcalls").slice(0, -1) + "\n"
        : l;
    },
  );
  reply({ ndjson: lines });
  const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
  let text = "";
  for await (const p of parts) text += p.message.content;
  assert.match(
    text,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.equal(events[0]?.changed, true);
});

test("guardFetch n=2: a Chat call at a choice past n told of by both answers is reported as one call", async () => {
  // (each answer that finished for tool calls with none reads of it, and onVerdict counted it once per answer)
  const call = {
    tool_calls: [{ index: 0, id: "A", type: "function", function: { name: "get_weather", arguments: "{}" } }],
  };
  const role = { role: "assistant", content: "" };
  reply({
    sse: [
      choicesChunk([{ index: 0, delta: role }, { index: 1, delta: role }]),
      choicesChunk([{ index: 5, delta: call }]),
      choicesChunk([
        { index: 0, delta: {}, finish_reason: "tool_calls" },
        { index: 1, delta: {}, finish_reason: "tool_calls" },
      ]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
  })
    .finalChatCompletion();
  const said = [0, 1].map((i) => final.choices.find((c) => c.index === i)?.message.content ?? "");
  for (const s of said) assert.match(s, /^toolguard dropped this turn's tool call: its stream events/);
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, said[0]]);
});

test("guardFetch: an Ollama call beside a call line not JSON goes or is rejected with the model told, as onVerdict says", async () => {
  // (the line cut short was dropped unread; the other call went out and nothing said the first had not;
  // words in the final chunk stay ahead of the reason; with the call rejected, onVerdict said the judge's reason
  // first, the model the dropped one)
  for (const name of CALLED) {
    const lines = ollamaStream(["Let me "], [{ name, args: { city: "Oslo" } }]).flatMap((l) => {
      const event = l as { message: { content: string }; done: boolean };
      if (event.done) return [{ ...event, message: { ...event.message, content: "check." } }];
      const raw = JSON.stringify(l);
      return raw.includes('"tool_calls"') ? [raw.slice(0, -1) + "\n", l] : [l];
    });
    reply({ ndjson: lines });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    const calls: string[] = [];
    for await (const p of parts) {
      text += p.message.content;
      calls.push(...(p.message.tool_calls ?? []).map((c) => c.function.name));
    }
    const passed = name === "get_weather";
    assert.deepEqual(calls, passed ? ["get_weather"] : []);
    assert.match(text, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, text.slice("Let me check.\n\n".length)]);
  }
});

test("guardFetch: a Chat call beside a call dropped as malformed goes or is rejected with the model told, as onVerdict says", async () => {
  // (the second call came at a choice the request did not ask for: dropped; the first went out with its
  // finish and nothing said the other had not; with the first rejected, onVerdict said the judge's reason
  // first, the model the dropped one)
  for (const name of CALLED) {
    const call = (index: number, id: string, name: string) => ({
      tool_calls: [{ index, id, type: "function", function: { name, arguments: '{"city":"Oslo"}' } }],
    });
    const chunk = (choice: number, delta: unknown, finish: string | null = null) => ({
      ...chatChunk({}),
      choices: [{ index: choice, delta, finish_reason: finish }],
    });
    reply({
      sse: [
        chunk(0, { role: "assistant", content: "Let me check." }),
        chunk(0, call(0, "A", name)),
        chunk(3, call(1, "B", "get_weather")),
        chunk(0, {}, "tool_calls"),
        "data: [DONE]\n\n",
      ],
    });
    const final = await openai().chat.completions.stream({
      model: "m",
      messages,
      tools: TOOLS_OPENAI as never,
    })
      .finalChatCompletion();
    const choice = final.choices[0];
    const passed = name === "get_weather";
    assert.deepEqual(
      [choice?.finish_reason, choice?.message.tool_calls?.map((c) => c.id) ?? []],
      passed ? ["tool_calls", ["A"]] : ["stop", []],
    );
    const text = choice?.message.content ?? "";
    assert.match(text, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.match(text, /^Let me check\.\n\n/);
    assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, text.slice("Let me check.\n\n".length)]);
  }
});

test("guardFetch: a Gemini call beside a call in pieces goes or is rejected with the model told, as onVerdict says", async () => {
  // (the pieced call's chunk was dropped; the whole call went out with its finish and nothing said the other
  // had not; with the whole call rejected, onVerdict said the judge's reason first, the model the dropped one)
  for (const name of CALLED) {
    const chunk = (candidate: unknown) => `data: ${JSON.stringify({ candidates: [candidate] })}\n\n`;
    const call = (functionCall: unknown) => ({
      index: 0,
      content: { role: "model", parts: [{ functionCall }] },
    });
    const wire = chunk({ index: 0, content: { role: "model", parts: [{ text: "Let me check." }] } }) +
      chunk(call({ name: "get_weather", partialArgs: [{ jsonPath: "$.city", stringValue: "O" }] })) +
      chunk(call({ name, args: { city: "Oslo" } })) +
      chunk({ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" });
    const { said, calls, finish, seen } = await throughGemini(wire);
    const passed = name === "get_weather";
    assert.deepEqual([calls.map((c) => c.args), finish], [passed ? [{ city: "Oslo" }] : [], "STOP"]);
    assert.match(said, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.match(said, /^Let me check\.\n\n/);
    assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said.slice("Let me check.\n\n".length)]);
  }
});

test("guardFetch: a Gemini chunk that carries a call in pieces and the finish sends its finish and tells the model", async () => {
  // (the chunk was dropped whole: the client never read the candidate finish, its words or usage, and the
  // model was not told of the call)
  const wire =
    `data: ${
      JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Let me " }] } }] })
    }\n\n` + `data: ${
      JSON.stringify({
        candidates: [{
          index: 0,
          content: {
            role: "model",
            parts: [{ text: "check." }, {
              functionCall: { name: "get_weather", partialArgs: [{ jsonPath: "$.city", stringValue: "O" }] },
            }],
          },
          finishReason: "STOP",
        }],
        usageMetadata: { totalTokenCount: 3 },
      })
    }\n\n`;
  const { said, calls, finish, usage, seen } = await throughGemini(wire);
  assert.deepEqual([calls.length, finish, usage], [0, "STOP", { totalTokenCount: 3 }]);
  assert.match(
    said,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said.slice("Let me check.\n\n".length)]);
});

test("guardFetch: a Gemini call's last piece (willContinue: false, no partialArgs) is dropped with the call", async () => {
  // (let through, it reached the judge as a call of no name: "Your call to (no name) was rejected")
  const piece = (functionCall: unknown) =>
    `data: ${
      JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall }] } }] })
    }\n\n`;
  const wire =
    `data: ${
      JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Hi." }] } }] })
    }\n\n` +
    piece({
      name: "get_weather",
      partialArgs: [{ jsonPath: "$.city", stringValue: "Oslo" }],
      willContinue: true,
    }) +
    piece({ willContinue: false }) +
    `data: ${
      JSON.stringify({
        candidates: [{ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" }],
      })
    }\n\n`;
  const { said, seen } = await throughGemini(wire);
  assert.match(said, /^Hi\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/);
  assert.deepEqual([seen[0]?.changed, seen[0]?.reason], [true, said.slice("Hi.\n\n".length)]);
});

test("guardFetch: an Ollama final chunk's words stay when the call before it is rejected or dropped", async () => {
  // (the rejection wrote its stop into the final chunk and emptied its content: "check." was lost; a dropped
  // call's reason went ahead of the final chunk, and its words ran on after the reason)
  for (const calls of [UNDECLARED, [{ name: "get_weather", args: { city: "Oslo" } }, ...UNDECLARED]]) {
    const lines = ollamaStream(["Let me "], calls).map((l) => {
      const event = l as { message: { content: string }; done: boolean };
      return event.done ? { ...event, message: { ...event.message, content: "check." } } : l;
    });
    reply({ ndjson: lines });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    for await (const p of parts) text += p.message.content;
    assert.match(text, /^Let me check\.\n\ntoolguard stopped this turn's tool call/, JSON.stringify(calls));
    assert.deepEqual([events[0]?.changed, events[0]?.reason], [true, text.slice("Let me check.\n\n".length)]);
  }
});

test("guardFetch retry: an Ollama call line not JSON beside a rejected call is told ahead of the retry's words", async () => {
  // (the reason was held behind the calls, and the retry dropped it with them: onVerdict told of the dropped
  // call, the model never read of it)
  const base = { model: "m", created_at: "2025-01-01T00:00:00Z" };
  const text = (content: string, done = false) =>
    JSON.stringify({
      ...base,
      message: { role: "assistant", content },
      done,
      ...(done ? { done_reason: "stop" } : {}),
    });
  const call = (name: string) =>
    JSON.stringify({
      ...base,
      message: { role: "assistant", content: "", tool_calls: [{ function: { name, arguments: {} } }] },
      done: false,
    });
  const answers = [
    [text("Let me check."), call("get_weather").slice(0, -1), call("delete_everything"), text("", true)],
    [text("Done."), text("", true)],
  ];
  const f = guardFetch(
    () =>
      Promise.resolve(
        new Response(answers.shift()!.join("\n") + "\n", {
          headers: { "content-type": "application/x-ndjson" },
        }),
      ),
    { retry: 1 },
  );
  const res = await f("http://llm.test/api/chat", {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const said = (await res.text()).split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l).message?.content ?? ""
  )
    .join("");
  assert.equal(answers.length, 0);
  assert.match(
    said,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.ok(said.endsWith("Make the call again if still needed.\n\nDone."), said);
});

test("guardFetch: an Ollama final chunk's words held apart from it do not bring its counts or logprobs twice", async () => {
  // (the words went as a chunk of their own with the final chunk's eval_count, durations and logprobs, and
  // the final chunk kept them too: a client that adds up each chunk's counts, as LangChain does, counted them twice)
  const calls = [
    [{ name: "get_weather", args: { city: "Oslo" } }],
    UNDECLARED,
    [{ name: "get_weather", args: { city: "Oslo" } }, ...UNDECLARED],
  ];
  for (const made of calls) {
    const lines = ollamaStream(["Let me "], made).map((l) => {
      const event = l as { message: { content: string }; done: boolean };
      if (!event.done) return l;
      const ends = { eval_count: 7, prompt_eval_count: 5, total_duration: 9 };
      return {
        ...event,
        ...ends,
        logprobs: [{ token: "check.", logprob: -1 }],
        message: { ...event.message, content: "check." },
      };
    });
    reply({ ndjson: lines });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    let evals = 0;
    let logprobs = 0;
    for await (const p of parts) {
      text += p.message.content;
      evals += (p as { eval_count?: number }).eval_count ?? 0;
      logprobs += (p as { logprobs?: unknown[] }).logprobs?.length ?? 0;
    }
    assert.match(text, /^Let me check\./, JSON.stringify(made));
    assert.deepEqual([evals, logprobs], [7, 1], JSON.stringify(made));
  }
});

test("guardFetch: a whole Gemini call that says willContinue: false is judged and goes, not refused as a piece", async () => {
  // (refused for saying willContinue at all, a call whole in one part, named and with its args, was dropped
  // as a piece and the model told its events were malformed)
  const chunk = (candidate: unknown) => `data: ${JSON.stringify({ candidates: [candidate] })}\n\n`;
  const wire = chunk({ index: 0, content: { role: "model", parts: [{ text: "Let me check." }] } }) +
    chunk({
      index: 0,
      content: {
        role: "model",
        parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" }, willContinue: false } }],
      },
    }) +
    chunk({ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" });
  const { said, calls, seen } = await throughGemini(wire);
  assert.deepEqual([said, calls.map((c) => c.args)], ["Let me check.", [{ city: "Oslo" }]]);
  assert.deepEqual([seen[0]?.changed, seen[0]?.verdict.allowed], [false, true]);
});

test("guardFetch n=2: a Chat call kept beside one dropped as malformed is told when another answer wrote a call", async () => {
  // (the stream's written calls took the other way to the judge, which never asked the router to tell, so
  // call A went out and nothing said call B had not)
  const chunk = (choice: number, delta: unknown, finish: string | null = null) => ({
    ...chatChunk({}),
    choices: [{ index: choice, delta, finish_reason: finish }],
  });
  const call = (index: number, id: string) => ({
    tool_calls: [{
      index,
      id,
      type: "function",
      function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
    }],
  });
  const written = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
  reply({
    sse: [
      chunk(0, { role: "assistant", content: "Let me check." }),
      chunk(1, { role: "assistant", content: `Sure.\n${written}` }),
      chunk(0, call(0, "A")),
      // (choice 0 twice in one chunk: refused, call B with it)
      {
        ...chatChunk({}),
        choices: [{ index: 0, delta: call(1, "B"), finish_reason: null }, { index: 0, delta: {} }],
      },
      chunk(0, {}, "tool_calls"),
      chunk(1, {}, "stop"),
      "data: [DONE]\n\n",
    ],
  });
  const stream = await openai().chat.completions.create({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  const text = ["", ""];
  const ids: string[] = [];
  for await (const c of stream) {
    for (const choice of c.choices) {
      text[choice.index] += choice.delta?.content ?? "";
      for (const t of choice.delta?.tool_calls ?? []) if (t.id) ids.push(t.id);
    }
  }
  assert.deepEqual(ids, ["A"]);
  assert.match(
    text[0],
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.deepEqual([events[0]?.changed, events[0]?.reason], [
    true,
    text[0].slice("Let me check.\n\n".length),
  ]);
});

test("guardFetch: the rest of a Chat call whose start was dropped is dropped with it, not judged as a call of no name", async () => {
  // (its arguments, come after, reached the judge as a call of no name: the turn was rejected, call A with
  // it, and the model read of one call twice, "dropped" and "Your call to (no name) was rejected")
  const call = (index: number, fields: Record<string, unknown>) => ({ tool_calls: [{ index, ...fields }] });
  const start = (index: number, id: string) =>
    call(index, { id, type: "function", function: { name: "get_weather", arguments: "" } });
  reply({
    sse: [
      choicesChunk([{
        index: 0,
        delta: { role: "assistant", content: "Let me check." },
        finish_reason: null,
      }]),
      choicesChunk([{ index: 0, delta: start(0, "A"), finish_reason: null }]),
      choicesChunk([{
        index: 0,
        delta: call(0, { function: { arguments: '{"city":"Oslo"}' } }),
        finish_reason: null,
      }]),
      // (choice 0 twice in one chunk: refused, call B's start with it)
      choicesChunk([{ index: 0, delta: start(1, "B"), finish_reason: null }, { index: 0, delta: {} }]),
      choicesChunk([{
        index: 0,
        delta: call(1, { function: { arguments: '{"city":"Bergen"}' } }),
        finish_reason: null,
      }]),
      choicesChunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
    .finalChatCompletion();
  const choice = final.choices[0];
  assert.deepEqual(
    [choice?.finish_reason, choice?.message.tool_calls?.map((c) => [c.id, c.function.arguments])],
    ["tool_calls", [["A", '{"city":"Oslo"}']]],
  );
  const text = choice?.message.content ?? "";
  assert.match(
    text,
    /^Let me check\.\n\ntoolguard dropped this turn's tool call: its stream events were malformed/,
  );
  assert.deepEqual(
    [events[0]?.changed, events[0]?.verdict.allowed, events[0]?.reason],
    [true, true, text.slice("Let me check.\n\n".length)],
  );
});
