// onRejected "drop-call" on the streams of Ollama, Gemini and Cohere, and on calls written into text: only
// the rejected calls are removed (the kept ones renumbered as each dialect needs), the reason is in the text.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { gateCompletion, type GateEvent, guardFetch } from "../gate.ts";
import {
  chatChunk,
  chatStream,
  choiceChunk,
  type FakeReply,
  type FakeServer,
  ollamaStream,
  responsesStream,
  sseData,
  startFakeLlmServer,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
} from "./_fake_llm_server.ts";
import { countingWork } from "./_counting.ts";

const BAD = { name: "delete_everything", args: {} };
const GOOD = { name: "get_weather", args: { city: "Oslo" } };
const GOOD2 = { name: "search", args: { query: "umbrella" } };
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

let next: FakeReply = { json: {} };
let server: FakeServer;
const seen: GateEvent[] = [];
const gfetch = guardFetch(fetch, { onRejected: "drop-call", onVerdict: (e) => seen.push(e) }) as typeof fetch;
before(async () => {
  server = await startFakeLlmServer(() => next);
});
after(async () => {
  await server.close();
});
const reply = (r: FakeReply) => {
  next = r;
  seen.length = 0;
};

/** A Gemini `functionCall` part calling `c`. */
const geminiCall = (c: { name: string; args: unknown }) => ({ functionCall: { name: c.name, args: c.args } });
/** A Gemini stream chunk of one candidate with `parts`, and its finish reason where given. */
const geminiChunk = (parts: unknown[], finish?: string) => ({
  candidates: [{
    content: { role: "model", parts },
    index: 0,
    ...(finish ? { finishReason: finish } : {}),
  }],
});
/** The Gemini request of these tests: a question, and the tools declared. */
const GEMINI_REQUEST = {
  contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
  tools: [{ functionDeclarations: TOOLS_RESPONSES }],
};
/** Streams the Gemini `request` through the guarded fetch (drop-call). */
const geminiPost = (request: Record<string, unknown>) =>
  gfetch(`${server.url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
    method: "POST",
    body: JSON.stringify(request),
  });

test("guardFetch drop-call: an Ollama stream keeps the valid calls, renumbered, and says what it removed", async () => {
  const lines = ollamaStream(["Checking."], [GOOD, BAD, GOOD2]) as Record<string, unknown>[];
  // Newer Ollama numbers the calls in `function.index`.
  const calls = lines.find((l) => (l.message as { tool_calls?: unknown }).tool_calls) as {
    message: { tool_calls: { function: Record<string, unknown> }[] };
  };
  calls.message.tool_calls.forEach((c, index) => c.function.index = index);
  reply({ ndjson: lines });
  const client = new Ollama({ host: server.url, fetch: gfetch });
  let text = "";
  const got: unknown[] = [];
  let done = false;
  for await (
    const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
  ) {
    text += part.message.content;
    got.push(...part.message.tool_calls ?? []);
    done ||= part.done;
  }
  assert.deepEqual(got.map((c) => (c as { function: unknown }).function), [
    { name: "get_weather", arguments: { city: "Oslo" }, index: 0 },
    { name: "search", arguments: { query: "umbrella" }, index: 1 },
  ]);
  assert.match(text, /^Checking\.[\s\S]*delete_everything/);
  assert.equal(done, true);
  assert.equal(seen[0].changed, true);
  assert.deepEqual(seen[0].verdict.rejectedIndices, [1]);
});

test("guardFetch drop-call: a Gemini stream keeps the valid functionCall parts; a dropped call's signature moves on", async () => {
  const chunk = (parts: unknown[], finish?: string) => ({
    ...geminiChunk(parts, finish),
    modelVersion: "gemini-x",
  });
  reply({
    sse: [
      chunk([{ text: "Looking." }]),
      chunk([{ ...geminiCall(BAD), thoughtSignature: "c2ln" }, geminiCall(GOOD)]),
      chunk([geminiCall(GOOD2)], "STOP"),
    ],
  });
  const res = await geminiPost(GEMINI_REQUEST);
  const events = sseData(await res.text());
  const parts = events.flatMap((e) => e.candidates[0].content.parts as Record<string, unknown>[]);
  assert.deepEqual(parts.filter((p) => p.functionCall), [
    { ...geminiCall(GOOD), thoughtSignature: "c2ln" },
    geminiCall(GOOD2),
  ]);
  assert.equal(parts[0].text, "Looking.");
  assert.match(String(parts[1].text), /delete_everything/);
  assert.equal(events.at(-1).candidates[0].finishReason, "STOP");
  assert.equal(events[1].modelVersion, "gemini-x");
});

test("guardFetch drop-call: a Gemini stream of two candidates drops the rejected call, whatever order their chunks are held in", async () => {
  // Candidate 1's call waits behind its text, which may open a written call, and reaches the held chunks
  // after candidate 0's later one: a call counted by its place among all held calls was another call.
  const candidate = (index: number, parts: unknown[], finish = false) => ({
    index,
    content: { role: "model", parts },
    ...(finish ? { finishReason: "STOP" } : {}),
  });
  reply({
    sse: [
      {
        candidates: [
          candidate(0, [{ text: "Looking." }]),
          candidate(1, [{ text: "One {" }, geminiCall(GOOD)]),
        ],
      },
      { candidates: [candidate(0, [geminiCall(BAD)]), candidate(1, [{ text: " moment." }])] },
      { candidates: [candidate(0, [geminiCall(GOOD2)])] },
      { candidates: [candidate(0, [], true), candidate(1, [], true)] },
    ],
  });
  const res = await geminiPost({ ...GEMINI_REQUEST, generationConfig: { candidateCount: 2 } });
  const calls: string[][] = [[], []];
  for (const e of sseData(await res.text())) {
    for (const [i, c] of (e.candidates as Record<string, unknown>[]).entries()) {
      const parts = ((c.content as { parts?: Record<string, { name: string }>[] } | undefined)?.parts) ?? [];
      for (const p of parts) if (p.functionCall) calls[i].push(p.functionCall.name);
    }
  }
  assert.deepEqual(calls, [[GOOD2.name], [GOOD.name]]);
  // (judged candidate by candidate, as a body lists them, whatever order they came in)
  assert.deepEqual(seen[0].verdict.calls.map((c) => [c.name, c.allowed]), [
    [BAD.name, false],
    [GOOD2.name, true],
    [GOOD.name, true],
  ]);
});

test("guardFetch drop-call: a Gemini chunk holding a candidate's place with null keeps candidate 1 at its place, and its rejected call is dropped", async () => {
  // The chunk that brought candidate 1's words and call, after a `null` at place 0, was split into its text
  // and its call without the `null`: candidate 1's words and rejected call moved to place 0, where a client
  // reads candidate 0, and drop-call, dropping by place, let the rejected call through there.
  const candidate = (index: number, parts: unknown[]) => ({
    index,
    content: { role: "model", parts },
    finishReason: "STOP",
  });
  reply({
    sse: [
      { candidates: [candidate(0, [{ text: "A." }, geminiCall(GOOD)])] },
      { candidates: [null, candidate(1, [{ text: "B." }, geminiCall(BAD)])] },
    ],
  });
  const res = await geminiPost({ ...GEMINI_REQUEST, generationConfig: { candidateCount: 2 } });
  const seenAt: string[][] = [[], []];
  for (const e of sseData(await res.text())) {
    for (const [i, c] of (e.candidates as (Record<string, unknown> | null)[]).entries()) {
      const parts = ((c?.content as { parts?: Record<string, unknown>[] } | undefined)?.parts) ?? [];
      for (const p of parts) {
        const name = (p.functionCall as { name?: string } | undefined)?.name;
        if (name || p.text) {
          seenAt[i].push(name ? `call ${name}` : String(p.text).trim().split(" ").slice(0, 2).join(" "));
        }
      }
    }
  }
  assert.deepEqual(seenAt, [["A.", `call ${GOOD.name}`], ["B.", "toolguard removed"]]);
});

test("guardFetch drop-call: a Gemini stream puts the reason after the text the watch held, where the body puts it", async () => {
  // The answer opens with JSON (`{ }`), so the watch holds it to its end, and the extractor reads no call in
  // it; the reason sent ahead of that text made it open with words, and the object there read as a call no
  // judge saw (fuzz seed 16063). The body sets the reason after the text.
  const written = '{"name": "search", "arguments": {"query": "notes"}}';
  const chunks = [[geminiCall(GOOD)], [{ text: " { } done" }], [geminiCall(GOOD2)], [{ text: written }], [
    geminiCall(BAD),
  ], [{
    text: " the end",
  }]];
  reply({ sse: [...chunks.map((ps) => geminiChunk(ps)), geminiChunk([{ text: "" }], "STOP")] });
  const res = await geminiPost(GEMINI_REQUEST);
  const text = (ps: Record<string, unknown>[]) =>
    ps.filter((p) => typeof p.text === "string").map((p) => p.text).join("");
  const streamed = text(sseData(await res.text()).flatMap((e) => e.candidates[0].content.parts));
  const body = await gateCompletion(GEMINI_REQUEST, geminiChunk(chunks.flat(), "STOP"), {
    onRejected: "drop-call",
  });
  const whole = text(
    (body.response as { candidates: { content: { parts: Record<string, unknown>[] } }[] })
      .candidates[0].content.parts,
  );
  assert.match(whole, /^ \{ \} done\{"name"[^]* the end\n\n[^]*delete_everything/);
  assert.equal(streamed, whole);
});

/** The events of one Cohere v2 streamed call at `index`: its start, its arguments in one delta, its end. */
const cohereCall = (index: number, c: { name: string; args: unknown }) => [
  {
    type: "tool-call-start",
    index,
    delta: {
      message: {
        tool_calls: {
          id: `${c.name}_${index}`,
          type: "function",
          function: { name: c.name, arguments: "" },
        },
      },
    },
  },
  {
    type: "tool-call-delta",
    index,
    delta: { message: { tool_calls: { function: { arguments: JSON.stringify(c.args) } } } },
  },
  { type: "tool-call-end", index },
];

test("guardFetch drop-call: a Cohere stream keeps the valid calls renumbered from 0 and ends TOOL_CALL", async () => {
  reply({
    sse: [
      { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
      { type: "tool-plan-delta", delta: { message: { tool_plan: "I will check." } } },
      ...cohereCall(0, BAD),
      ...cohereCall(1, GOOD),
      { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
    ],
  });
  const res = await gfetch(`${server.url}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const events = sseData(await res.text());
  const starts = events.filter((e) => e.type === "tool-call-start");
  assert.deepEqual(starts.map((e) => [e.index, e.delta.message.tool_calls.function.name]), [[
    0,
    "get_weather",
  ]]);
  assert.deepEqual(events.filter((e) => String(e.type).startsWith("tool-call")).map((e) => e.index), [
    0,
    0,
    0,
  ]);
  const text = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text).join(
    "",
  );
  assert.match(text, /delete_everything/);
  assert.equal(events.at(-1).type, "message-end");
  assert.equal(events.at(-1).delta.finish_reason, "TOOL_CALL");
});

test("guardFetch drop-call: a Cohere stream puts the reason after the text held beside the calls, as a body does", async () => {
  // Text that opens as a written call is held until judged; beside native calls it is prose, sent when the
  // calls are. The reason went first: its block opened inside the held one and came before that text.
  const start = (index: number) => ({
    type: "content-start",
    index,
    delta: { message: { content: { type: "text", text: "" } } },
  });
  const delta = (index: number, text: string) => ({
    type: "content-delta",
    index,
    delta: { message: { content: { text } } },
  });
  reply({
    sse: [
      { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
      start(0),
      delta(0, '{"name": "search", '),
      delta(0, '"arguments": {"query": "notes"}}'),
      { type: "content-end", index: 0 },
      ...cohereCall(0, BAD),
      ...cohereCall(1, GOOD),
      { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
    ],
  });
  const res = await gfetch(`${server.url}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const events = sseData(await res.text());
  const blocks = events.filter((e) => /^content-/.test(e.type)).map((e) => `${e.type} ${e.index}`);
  assert.deepEqual(blocks, [
    "content-start 0",
    "content-delta 0",
    "content-delta 0",
    "content-end 0",
    "content-start 1",
    "content-delta 1",
    "content-end 1",
  ]);
  assert.match(
    events.find((e) => e.type === "content-delta" && e.index === 1).delta.message.content.text,
    /delete/,
  );
  assert.deepEqual(events.filter((e) => e.type === "tool-call-start").map((e) => e.index), [0]);
  assert.equal(events.at(-1).type, "message-end");
});

test('guardFetch drop-call: a rejected Cohere call at index "0" or at none is dropped too', async () => {
  // The reader files these under a call of their own (index "0" is call 0); the router sent each event
  // without a numeric index as it came, so the rejected call reached the client whole.
  const call = (index: unknown, name: string, args: string) =>
    [
      {
        type: "tool-call-start",
        index,
        delta: { message: { tool_calls: { id: `${name}_1`, function: { name } } } },
      },
      {
        type: "tool-call-delta",
        index,
        delta: { message: { tool_calls: { function: { arguments: args } } } },
      },
      { type: "tool-call-end", index },
    ].map((e) => index === undefined ? withoutIndex(e) : e);
  for (const index of ["0", undefined]) {
    reply({
      sse: [
        { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
        ...call(1, "get_weather", '{"city":"Oslo"}'),
        ...call(index, "delete_everything", "{}"),
        { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
      ],
    });
    const res = await gfetch(`${server.url}/v2/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
    });
    const events = sseData(await res.text()).filter((e) => String(e.type).startsWith("tool-call"));
    assert.deepEqual(seen[0].verdict.rejectedIndices, [1], String(index));
    assert.deepEqual(events.map((e) => [e.type, e.index]), [
      ["tool-call-start", 0],
      ["tool-call-delta", 0],
      ["tool-call-end", 0],
    ], String(index));
  }
});

test("guardFetch drop-call: a rejected Cohere call without index is dropped after another dialect's call event", async () => {
  // A Chat-shaped chunk among the Cohere events is read as a Chat call (judged; no Cohere client reads it), so
  // the reader numbers the next call opened without index -2. The router numbered it by a rule of its own
  // (-1, counting Cohere calls only), found no rejected call there and sent its events as they came; and it
  // counted the Chat call among the kept ones, so the kept Cohere call went out at index 1 (no call 0).
  const chat = chatChunk({
    tool_calls: [{
      index: 0,
      id: "call_c",
      function: { name: GOOD.name, arguments: JSON.stringify(GOOD.args) },
    }],
  });
  reply({
    sse: [
      { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
      chat,
      ...cohereCall(0, BAD).map(withoutIndex),
      ...cohereCall(1, GOOD),
      { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
    ],
  });
  const res = await gfetch(`${server.url}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const events = sseData(await res.text()).filter((e) => String(e.type).startsWith("tool-call"));
  assert.deepEqual(seen[0].verdict.rejectedIndices, [1]);
  assert.deepEqual(events.map((e) => [e.type, e.index]), [
    ["tool-call-start", 0],
    ["tool-call-delta", 0],
    ["tool-call-end", 0],
  ]);
  assert.equal(events[0].delta.message.tool_calls.function.name, GOOD.name);
});

/** `event` without its `index`. */
function withoutIndex(event: Record<string, unknown>): Record<string, unknown> {
  const { index: _, ...rest } = event;
  return rest;
}

test('guardFetch drop-call: a Chat delta at tool_calls index "0" (call 0 to the SDK) goes with call 0, dropped or not', async () => {
  // The rejected call is at index 0, the valid one at 1 (renumbered to 0 once the other is dropped). The
  // SDK files the delta at index "0" under call 0: kept as it came, it joined the valid call's arguments
  // ('{"city":"Oslo","units":"k"}', units outside the enum) where the gate judged them in the rejected one.
  const td = (t: Record<string, unknown>) => chatChunk({ tool_calls: [t] });
  const fn = (name: string | undefined, args: string) => ({ ...(name ? { name } : {}), arguments: args });
  reply({
    sse: [
      chatChunk({ role: "assistant", content: null }),
      td({ index: 0, id: "call_0", type: "function", function: fn("delete_everything", "{}") }),
      td({ index: 1, id: "call_1", type: "function", function: fn("get_weather", '{"city":"Oslo"') }),
      td({ index: "0", function: fn(undefined, ',"units":"k"') }),
      td({ index: 1, function: fn(undefined, "}") }),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const client = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, fetch: gfetch, maxRetries: 0 });
  const final = await client.chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
    .finalChatCompletion();
  const calls = final.choices[0].message.tool_calls ?? [];
  assert.deepEqual(calls.map((c) => c.type === "function" ? [c.function.name, c.function.arguments] : []), [
    ["get_weather", '{"city":"Oslo"}'],
  ]);
  assert.deepEqual(seen[0].verdict.rejectedIndices, [0]);
});

test("guardFetch drop-call: calls written into Chat text, each in its own block: only the rejected one is cut", async () => {
  reply({ sse: chatStream(["Sure. ", written(BAD), "\n", written(GOOD)]) });
  const res = await gfetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const text = sseData(await res.text()).map((e) => e.choices[0]?.delta?.content ?? "").join("");
  assert.ok(text.includes(written(GOOD)), text);
  assert.equal(text.includes(written(BAD)), false);
  assert.match(text, /^Sure\. [\s\S]*delete_everything/);
  assert.deepEqual(seen[0].verdict.rejectedIndices, [0]);
});

test("guardFetch drop-call: calls written into a Cohere content-start's text, each in its own block: only the rejected one is cut", async () => {
  // The Cohere SDK hands an app the text a content-start brings as its block's; the gate read none of it.
  const text = `Sure.\n${written(BAD)}\n${written(GOOD)}`;
  reply({
    sse: [
      { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
      { type: "content-start", index: 0, delta: { message: { content: { type: "text", text } } } },
      { type: "content-end", index: 0 },
      { type: "message-end", delta: { finish_reason: "COMPLETE" } },
    ],
  });
  const res = await gfetch(`${server.url}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const events = sseData(await res.text());
  const got = events.filter((e) => e.type === "content-start" || e.type === "content-delta")
    .map((e) => e.delta.message.content.text ?? "").join("");
  assert.ok(got.includes(written(GOOD)), got);
  assert.equal(got.includes(written(BAD)), false);
  assert.match(got, /^Sure\.\n[\s\S]*delete_everything/);
  assert.deepEqual(seen[0].verdict.rejectedIndices, [0]);
  assert.deepEqual(events.map((e) => e.type).slice(-2), ["content-end", "message-end"]);
});

test("guardFetch drop-call: calls written into one block together withhold the turn (the block cannot be split)", async () => {
  const both = `<tool_call>[{"name": "${BAD.name}", "arguments": {}}, {"name": "${GOOD.name}", "arguments": ${
    JSON.stringify(GOOD.args)
  }}]</tool_call>`;
  reply({ sse: chatStream(["Sure. ", both]) });
  const res = await gfetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
  });
  const text = sseData(await res.text()).map((e) => e.choices[0]?.delta?.content ?? "").join("");
  assert.equal(text.includes("<tool_call>"), false);
  assert.equal(text.includes('"get_weather"'), false);
  assert.match(text, /^Sure\. [\s\S]*delete_everything/);
});

test("gateCompletion drop-call: calls written into a body's text, each in its own block: only the rejected one is cut", async () => {
  const body = (content: string) => ({
    model: "m",
    created_at: "2025-01-01T00:00:00Z",
    message: { role: "assistant", content },
    done: true,
    done_reason: "stop",
  });
  const request = { tools: TOOLS_OPENAI };
  const options = { onRejected: "drop-call" as const };
  const apart = await gateCompletion(request, body(`Sure.\n${written(BAD)}\n${written(GOOD)}`), options);
  const content = (apart.response as { message: { content: string } }).message.content;
  assert.ok(content.includes(written(GOOD)), content);
  assert.equal(content.includes(written(BAD)), false);
  assert.match(content, /^Sure\.[\s\S]*delete_everything/);

  const together =
    `<tool_call>[{"name": "${BAD.name}", "arguments": {}}, {"name": "${GOOD.name}", "arguments": {}}]</tool_call>`;
  const whole = await gateCompletion(request, body(`Sure.\n${together}`), options);
  const rest = (whole.response as { message: { content: string } }).message.content;
  assert.equal(rest.includes("<tool_call>"), false);
  assert.match(rest, /^Sure\.[\s\S]*delete_everything/);
});

/**
 * `run()`, with how many times the tests given to `Array.prototype[method]` were called meanwhile: a count of
 * work that does not depend on the machine's speed.
 */
async function countingTests<T>(method: "some" | "every", run: () => Promise<T>): Promise<[T, number]> {
  type Test = (value: unknown, index: number, array: unknown[]) => unknown;
  const proto = Array.prototype as unknown as Record<string, (this: unknown[], test: Test) => boolean>;
  const original = proto[method];
  let steps = 0;
  proto[method] = function (test) {
    return original.call(this, (value, index, array) => {
      steps++;
      return test(value, index, array);
    });
  };
  try {
    return [await run(), steps];
  } finally {
    proto[method] = original;
  }
}

/** `n` calls written into text, each in its own `<tool_call>` block, every second one to an undeclared tool. */
const manyWritten = (n: number) => Array.from({ length: n }, (_, i) => written(i % 2 ? BAD : GOOD) + "\n");

/** A call written into text in a `<tool_call>` block of its own. */
const written = (c: { name: string; args: unknown }) =>
  `<tool_call>{"name": "${c.name}", "arguments": ${JSON.stringify(c.args)}}</tool_call>`;

// Whether a block of markup holds both a kept and a rejected call was asked of every pair of calls: 9 million
// tests for the 3 000 calls here, a few seconds; 16 000 took minutes.

test("gateCompletion drop-call: thousands of calls written into a body's text are parted in linear time", async () => {
  const n = 3_000;
  const body = { model: "m", message: { role: "assistant", content: manyWritten(n).join("") }, done: true };
  const [gated, steps] = await countingTests(
    "some",
    () => gateCompletion({ tools: TOOLS_OPENAI }, body, { onRejected: "drop-call" }),
  );
  const kept = (gated.response as { message: { content: string } }).message.content;
  assert.equal(kept.split(written(GOOD)).length - 1, n / 2);
  assert.equal(kept.includes(written(BAD)), false);
  assert.ok(steps < 50 * n, `${steps} tests for ${n} calls`);
});

test("guardFetch drop-call: thousands of calls written into a Chat stream's text are parted in linear time", async () => {
  const n = 3_000;
  reply({ sse: chatStream(manyWritten(n)) });
  const [text, steps] = await countingTests("every", async () => {
    const res = await gfetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
    });
    return sseData(await res.text()).map((e) => e.choices[0]?.delta?.content ?? "").join("");
  });
  assert.equal(text.split(written(GOOD)).length - 1, n / 2);
  assert.equal(text.includes(written(BAD)), false);
  assert.equal(seen[0].verdict.rejectedIndices.length, n / 2);
  assert.ok(steps < 50 * n, `${steps} tests for ${n} calls`);
});

test("guardFetch drop-call: a Chat stream of thousands of calls, half rejected, is parted in linear time", async () => {
  const n = 3_000;
  reply({ sse: chatStream([], Array.from({ length: n }, (_, i) => i % 2 ? BAD : GOOD), 1) });
  // Each delta searched the dropped calls for its own: 6.8 million tests here.
  const [events, steps] = await countingTests("some", async () => {
    const res = await gfetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", stream: true, messages, tools: TOOLS_OPENAI }),
    });
    return sseData(await res.text());
  });
  const names = events.flatMap((e) => e.choices?.[0]?.delta?.tool_calls ?? []).flatMap((
    t: { function?: { name?: string } },
  ) => t.function?.name ? [t.function.name] : []);
  assert.deepEqual(new Set(names), new Set([GOOD.name]));
  assert.equal(names.length, n / 2);
  assert.ok(steps < 50 * n, `${steps} tests for ${n} calls`);
});

test("guardFetch drop-call: a Cohere stream of thousands of calls, half rejected, is renumbered in linear time", async () => {
  const n = 3_000;
  reply({
    sse: [
      { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
      ...Array.from({ length: n }, (_, i) => cohereCall(i, i % 2 ? BAD : GOOD)).flat(),
      { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
    ],
  });
  // Each kept event's new index was searched for in the list of kept calls: 3.4 million elements read here.
  const read = (self: unknown[], _: unknown[], at: number) => at < 0 ? self.length : at + 1;
  const [events, steps] = await countingWork(Array.prototype, "indexOf", async () => {
    const res = await gfetch(`${server.url}/v2/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "command", stream: true, messages, tools: TOOLS_OPENAI }),
    });
    return sseData(await res.text());
  }, read);
  const starts = events.filter((e) => e.type === "tool-call-start");
  assert.deepEqual(starts.map((e) => e.index), Array.from({ length: n / 2 }, (_, i) => i));
  assert.ok(starts.every((e) => e.delta.message.tool_calls.function.name === GOOD.name));
  assert.ok(steps < 50 * n, `${steps} elements read for ${n} calls`);
});

test("guardFetch drop-call: a Responses argument event that names its item only by item_id goes with its call", async () => {
  // The gate's reader joins such an event to the call whose item has that id; it went out as it came,
  // a dropped call's arguments with it (withholding the turn, a `.done` one went out too).
  const frames = (responsesStream([], [BAD, GOOD]) as Record<string, unknown>[]).map((f) => {
    if (!String(f.type).startsWith("response.function_call_arguments.")) return f;
    const { output_index: _, ...rest } = f;
    return rest;
  });
  const argumentsOf = (text: string) =>
    sseData(text).filter((e) => String(e.type).startsWith("response.function_call_arguments.")).map((e) =>
      e.item_id
    );
  const post = (f: typeof fetch) =>
    f(`${server.url}/v1/responses`, {
      method: "POST",
      body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
    });
  reply({ sse: frames, named: true });
  const dropped = await (await post(gfetch)).text();
  assert.deepEqual(seen[0].verdict.rejectedIndices, [0]);
  assert.deepEqual([...new Set(argumentsOf(dropped))], ["fc_1"]);
  reply({ sse: frames, named: true });
  const withheld = await (await post(guardFetch(fetch) as typeof fetch)).text();
  assert.deepEqual(argumentsOf(withheld), []);
});

test("guardFetch drop-call: a Responses argument event goes with the call the gate's reader joined it to, when an item id names two calls", async () => {
  // The kept call's item finishes under the id the rejected call's item is then added with: the reader joins
  // the argument events at no index that name that id to the rejected call (the one it opened with it), the
  // router tied them to the kept call (the first item seen with it) and sent the rejected call's arguments.
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ ...e, sequence_number: seq++ });
  const good = { type: "function_call", call_id: "call_a", name: GOOD.name };
  const bad = { type: "function_call", call_id: "call_b", name: BAD.name };
  const args = JSON.stringify(GOOD.args);
  const response = { id: "resp_1", object: "response", status: "in_progress", output: [] };
  reply({
    named: true,
    sse: [
      ev({ type: "response.created", response }),
      ev({
        type: "response.output_item.added",
        output_index: 0,
        item: { ...good, id: "fc_a", arguments: "" },
      }),
      ev({ type: "response.function_call_arguments.delta", item_id: "fc_a", output_index: 0, delta: args }),
      ev({
        type: "response.output_item.done",
        output_index: 0,
        item: { ...good, id: "fc_b", arguments: args },
      }),
      ev({
        type: "response.output_item.added",
        output_index: 1,
        item: { ...bad, id: "fc_b", arguments: "" },
      }),
      ev({ type: "response.function_call_arguments.delta", item_id: "fc_b", delta: '{"path":"/"}' }),
      ev({ type: "response.function_call_arguments.done", item_id: "fc_b", arguments: '{"path":"/"}' }),
      ev({
        type: "response.output_item.done",
        output_index: 1,
        item: { ...bad, id: "fc_b", arguments: '{"path":"/"}' },
      }),
      ev({ type: "response.completed", response: { ...response, status: "completed" } }),
    ],
  });
  const res = await gfetch(`${server.url}/v1/responses`, {
    method: "POST",
    body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
  });
  const text = await res.text();
  assert.deepEqual(seen[0].verdict.rejectedIndices, [1]);
  assert.equal(text.includes('\\"path\\"'), false, "the rejected call's arguments went out");
  const kept = sseData(text).filter((e) => String(e.type).startsWith("response.function_call_arguments."));
  assert.deepEqual(kept.map((e) => [e.item_id, e.output_index]), [["fc_a", 0]]);
});

test("guardFetch drop-call: a rejected Responses call that shares its call_id with a valid one is dropped alone, as in a body", async () => {
  // Two items under one call_id is a malformed answer, but each item is a call the gate judged: the body's
  // drop goes by place and keeps the valid one (then the only item of that id). The stream dropped by
  // call_id from the final snapshot, which the openai SDK's finalResponse reads: the valid call went too.
  const calls = [{ ...GOOD, id: "call_same" }, { ...BAD, id: "call_same" }, { ...GOOD2, id: "call_other" }];
  const frames = responsesStream(["Checking."], calls) as Record<string, unknown>[];
  const request = { model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES };
  reply({ sse: frames, named: true });
  const res = await gfetch(`${server.url}/v1/responses`, { method: "POST", body: JSON.stringify(request) });
  const events = sseData(await res.text());
  assert.deepEqual(seen[0].verdict.rejectedIndices, [1]);
  const names = (output: Record<string, unknown>[]) =>
    output.filter((o) => o.type === "function_call").map((o) => o.name);
  const final = events.findLast((e) => e.type === "response.completed").response;
  const body = frames.findLast((f) => f.type === "response.completed")!.response;
  const gated = await gateCompletion(request, body, { onRejected: "drop-call" });
  const fromBody = names((gated.response as { output: Record<string, unknown>[] }).output);
  assert.deepEqual(fromBody, ["get_weather", "search"]);
  assert.deepEqual(names(final.output), fromBody);
  const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.item.name);
  assert.deepEqual(added.filter((n) => n !== undefined), ["get_weather", "search"]);
});

test("drop-call: a Chat choice that lost every call ends in a normal stop, in a body as in a stream", async () => {
  // n=2: choice 0 made only the rejected call, choice 1 a valid one. The body left choice 0 an empty
  // tool_calls and finish_reason "tool_calls" (the API refuses the empty list sent back), where its stream
  // ends it "stop" (fuzz seed chat2 18072).
  const fn = (c: { name: string; args: unknown }) => ({ name: c.name, arguments: JSON.stringify(c.args) });
  const request = { model: "m", n: 2, messages, tools: TOOLS_OPENAI };
  const whole = {
    id: "chatcmpl-2",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [BAD, GOOD].map((c, index) => ({
      index,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_${index}`, type: "function", function: fn(c) }],
      },
    })),
  };
  const body = await gateCompletion(request, whole, { onRejected: "drop-call" });
  type Choice = { finish_reason: string; message: { content: unknown; tool_calls?: unknown[] } };
  const choices = (body.response as { choices: Choice[] }).choices;
  assert.equal(choices[0].finish_reason, "stop");
  assert.equal(choices[0].message.tool_calls, undefined);
  assert.match(String(choices[0].message.content), /delete_everything/);
  assert.equal(choices[1].finish_reason, "tool_calls");
  assert.equal(choices[1].message.tool_calls?.length, 1);

  reply({
    sse: [
      ...[BAD, GOOD].map((c, i) =>
        choiceChunk(i, {
          role: "assistant",
          tool_calls: [{ index: 0, id: `call_${i}`, type: "function", function: fn(c) }],
        })
      ),
      choiceChunk(0, {}, "tool_calls"),
      choiceChunk(1, {}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const res = await gfetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ ...request, stream: true }),
  });
  const finishes = sseData(await res.text()).flatMap((e) =>
    (e.choices as Record<string, unknown>[]).flatMap((c) =>
      c.finish_reason ? [[c.index, c.finish_reason]] : []
    )
  );
  assert.deepEqual(finishes.sort(), [[0, "stop"], [1, "tool_calls"]]);
});

test("drop-call: an Ollama answer keeps its valid calls renumbered and the reason after its text, in a body as in a stream", async () => {
  // A call written in the text after the native ones is no call (only text beside them) but the watch
  // holds it with them: the stream sent the reason ahead of it, where the body puts the reason after the
  // message's text; and the body left the kept calls' `function.index` as they came (fuzz seeds ollama
  // drop-call 18004, 18008).
  const written = '<tool_call>{"name": "get_weather", "arguments": {"city": "Bergen"}}</tool_call>';
  type Call = { function: { index?: number } };
  type Line = Record<string, unknown> & { message: { tool_calls?: Call[] } };
  const lines = ollamaStream(["Checking.", written], [GOOD, BAD, GOOD2]) as Line[];
  const callLine = lines.splice(lines.findIndex((l) => l.message.tool_calls), 1)[0];
  callLine.message.tool_calls!.forEach((c, index) => c.function.index = index);
  lines.splice(1, 0, callLine); // text, calls, the written call, the final chunk
  reply({ ndjson: lines });
  const client = new Ollama({ host: server.url, fetch: gfetch });
  let content = "";
  const calls: unknown[] = [];
  for await (
    const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
  ) {
    content += part.message.content;
    calls.push(...part.message.tool_calls ?? []);
  }
  const whole = {
    ...lines.at(-1),
    message: { role: "assistant", content: `Checking.${written}`, tool_calls: callLine.message.tool_calls },
  };
  const request = { model: "m", messages, tools: TOOLS_OPENAI };
  const body = (await gateCompletion(request, whole, { onRejected: "drop-call" })).response as typeof whole;
  assert.match(content, /^Checking\.<tool_call>[\s\S]*<\/tool_call>\n\n[\s\S]*delete_everything/);
  assert.equal(content, body.message.content);
  const indexes = [0, 1];
  assert.deepEqual(calls.map((c) => (c as Call).function.index), indexes);
  assert.deepEqual(
    body.message.tool_calls?.map((c) => c.function.index),
    indexes,
  );
});

test("gateCompletion drop-call: a Gemini body moves a dropped call's thoughtSignature to the next kept call, as a stream does", async () => {
  // Gemini refuses a follow-up whose first function call lost its signature; the stream moved it on, the
  // body dropped it with the call (fuzz seeds gemini drop-call 18055, 18069).
  const whole = {
    candidates: [{
      index: 0,
      content: {
        role: "model",
        parts: [{ text: "Looking." }, { ...geminiCall(BAD), thoughtSignature: "c2ln" }, geminiCall(GOOD)],
      },
      finishReason: "STOP",
    }],
  };
  const gated = await gateCompletion(GEMINI_REQUEST, whole, { onRejected: "drop-call" });
  const parts = (gated.response as typeof whole).candidates[0].content.parts as Record<string, unknown>[];
  assert.deepEqual(parts.filter((p) => p.functionCall), [{ ...geminiCall(GOOD), thoughtSignature: "c2ln" }]);
  assert.match(String(parts[1].text), /delete_everything/); // (after the text, before the kept calls)
});

test("drop-call: a Gemini stream puts the reason after text that came in one chunk with a call, as the body does", async () => {
  // The text the watch held beside the native calls ends in the chunk of the valid call: the reason went
  // after the last chunk of text alone, in the midst of that text (fuzz seeds gemini drop-call 18081,
  // gemini2 18051).
  const texts = [
    "Looking. <tool_call>",
    '{"name": "get_weather", "arguments": {"city": "Bergen"}}</tool_call>',
  ];
  reply({
    sse: [
      geminiChunk([{ text: texts[0] }]),
      geminiChunk([{ text: texts[1] }, geminiCall(GOOD)]),
      geminiChunk([geminiCall(BAD)], "STOP"),
    ],
  });
  const res = await geminiPost(GEMINI_REQUEST);
  type Part = { text?: string; functionCall?: unknown };
  const textOf = (ps: Part[]) => ps.map((p) => p.text ?? "").join("");
  const streamed = textOf(sseData(await res.text()).flatMap((e) => e.candidates[0].content.parts as Part[]));
  const whole = geminiChunk([{ text: texts.join("") }, geminiCall(GOOD), geminiCall(BAD)], "STOP");
  const body = (await gateCompletion(GEMINI_REQUEST, whole, { onRejected: "drop-call" }))
    .response as typeof whole;
  assert.ok(streamed.startsWith(texts.join("")), streamed);
  assert.equal(streamed, textOf(body.candidates[0].content.parts as Part[]));
});

test("drop-call: a Gemini body's grounding supports move with their parts past a dropped call and stay past a kept one", async () => {
  // A segment names its part (partIndex): the body dropped a call but left the supports as they came, so
  // one of the text after the dropped call named the gate's reason, and one after a kept call a part gone.
  const support = (partIndex: number) => ({ segment: { partIndex, startIndex: 0, endIndex: 5 } });
  const whole = {
    candidates: [{
      index: 0,
      content: {
        role: "model",
        parts: [
          { text: "Looking." },
          geminiCall(BAD),
          { text: "Oslo." },
          geminiCall(GOOD),
          { text: "Rainy." },
        ],
      },
      finishReason: "STOP",
      groundingMetadata: { groundingSupports: [support(0), support(2), support(4)] },
    }],
  };
  const gated = await gateCompletion(GEMINI_REQUEST, whole, { onRejected: "drop-call" });
  const [candidate] = (gated.response as typeof whole).candidates;
  const parts = candidate.content.parts as Record<string, unknown>[];
  const named = candidate.groundingMetadata.groundingSupports.map((s) => parts[s.segment.partIndex]);
  assert.deepEqual(named, [{ text: "Looking." }, { text: "Oslo." }, { text: "Rainy." }]);
});

test("drop-call: a Gemini stream's grounding supports of text around a dropped call still cite their words, as the body's do", async () => {
  // A stream's supports name bytes of the answer's text as the client joins it (no part of their own): the
  // reason comes after all of it, so each support, of text before and after the dropped call, names its
  // words, in the stream as in the body. The words are not ASCII: offsets are UTF-8 bytes.
  const words = ["Caf\u00e9 \u2614 ferm\u00e9. ", "\u{1F326} Bergen: pluie."];
  const support = (text: string) => {
    const startIndex = new TextEncoder().encode(words.join("").slice(0, words.join("").indexOf(text))).length;
    return { segment: { startIndex, endIndex: startIndex + new TextEncoder().encode(text).length, text } };
  };
  const grounding = { groundingSupports: [support("Caf\u00e9 \u2614"), support("Bergen: pluie.")] };
  const chunks = [
    geminiChunk([{ text: words[0] }]),
    geminiChunk([geminiCall(BAD)]),
    geminiChunk([{ text: words[1] }, geminiCall(GOOD)]),
    { candidates: [{ ...geminiChunk([{ text: "" }], "STOP").candidates[0], groundingMetadata: grounding }] },
  ];
  reply({ sse: chunks });
  type Chunk = {
    candidates: { content: { parts: { text?: string }[] }; groundingMetadata?: typeof grounding }[];
  };
  const events: Chunk[] = sseData(await (await geminiPost(GEMINI_REQUEST)).text());
  const text = events.flatMap((e) => e.candidates[0].content.parts).map((p) => p.text ?? "").join("");
  const bytes = new TextEncoder().encode(text);
  const cited = (g: Chunk["candidates"][0]["groundingMetadata"]) =>
    (g?.groundingSupports ?? []).map(({ segment: s }) =>
      new TextDecoder().decode(bytes.slice(s.startIndex, s.endIndex))
    );
  const [streamed] = events.flatMap((e) => e.candidates[0].groundingMetadata ?? []);
  assert.ok(text.startsWith(words.join("")), text);
  assert.deepEqual(cited(streamed), ["Caf\u00e9 \u2614", "Bergen: pluie."]);
  // The body, of one part of text: its supports cite the same words of the same text.
  const whole = {
    candidates: [{
      index: 0,
      content: { role: "model", parts: [{ text: words.join("") }, geminiCall(BAD), geminiCall(GOOD)] },
      finishReason: "STOP",
      groundingMetadata: grounding,
    }],
  };
  const body = (await gateCompletion(GEMINI_REQUEST, whole, { onRejected: "drop-call" }))
    .response as typeof whole;
  const bodyText = (body.candidates[0].content.parts as { text?: string }[]).map((p) => p.text ?? "").join(
    "",
  );
  assert.equal(bodyText, text);
  assert.deepEqual(cited(body.candidates[0].groundingMetadata), ["Caf\u00e9 \u2614", "Bergen: pluie."]);
});
