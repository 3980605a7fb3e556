// Gemini (generateContent, streamGenerateContent with and without alt=sse) and Cohere v2 chat, in
// gateCompletion and guardFetch; and gateCompletion never throws on a body of another dialect.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assembleToolCalls, gateCompletion, type GateEvent, guardFetch } from "../gate.ts";
import {
  type FakeReply,
  type FakeServer,
  ollamaChat,
  sseData,
  startFakeLlmServer,
  TOOLS_OPENAI,
} from "./_fake_llm_server.ts";
import { ARRAY_ITERATOR, countingWork } from "./_counting.ts";

const codes = (v: { calls: { findings: { code: string }[] }[] }) =>
  v.calls.flatMap((c) => c.findings.map((f) => f.code));

const WEATHER = {
  name: "weather",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};
const GEMINI_TOOLS = [{ functionDeclarations: [WEATHER] }, { googleSearch: {} }];
const COHERE_TOOLS = [{ type: "function", function: WEATHER }];

const usageMetadata = { promptTokenCount: 29, candidatesTokenCount: 15, totalTokenCount: 44 };
const geminiBody = (args: unknown, name = "weather") => ({
  candidates: [{
    content: { role: "model", parts: [{ text: "Checking." }, { functionCall: { name, args } }] },
    finishReason: "STOP",
    index: 0,
  }],
  usageMetadata,
  modelVersion: "gemini-test",
  responseId: "r1",
});

const cohereBody = (args: string, name = "weather") => ({
  id: "c1",
  message: {
    role: "assistant",
    tool_plan: "I will use the weather tool.",
    tool_calls: [{ id: "weather_1", type: "function", function: { name, arguments: args } }],
  },
  finish_reason: "TOOL_CALL",
  usage: { billed_units: { input_tokens: 1, output_tokens: 2 } },
});

test("gateCompletion: a Gemini functionCall part is judged against functionDeclarations", async () => {
  const ok = await gateCompletion({ tools: GEMINI_TOOLS }, geminiBody({ location: "Oslo" }));
  assert.equal(ok.dialect, "gemini");
  assert.equal(ok.verdict.allowed, true);
  const bad = await gateCompletion({ tools: GEMINI_TOOLS }, geminiBody({}));
  assert.deepEqual(codes(bad.verdict), ["missing_required_argument"]);
  const body = bad.response as ReturnType<typeof geminiBody>;
  const parts = body.candidates[0].content.parts as { text?: string; functionCall?: unknown }[];
  assert.equal(parts.some((p) => p.functionCall), false);
  assert.equal(parts[0].text, "Checking.");
  assert.match(parts[1].text ?? "", /location/);
  assert.deepEqual(body.usageMetadata, usageMetadata);
});

test("gateCompletion: a Cohere v2 tool call is judged; the rejected body ends COMPLETE with its usage", async () => {
  const ok = await gateCompletion({ tools: COHERE_TOOLS }, cohereBody('{"location":"Oslo"}'));
  assert.equal(ok.dialect, "cohere");
  assert.equal(ok.verdict.allowed, true);
  const bad = await gateCompletion({ tools: COHERE_TOOLS }, cohereBody("{}", "rm_rf"));
  assert.deepEqual(codes(bad.verdict), ["unknown_tool"]);
  const body = bad.response as Record<string, Record<string, unknown>>;
  assert.equal(body.message.tool_calls, undefined);
  assert.equal(body.message.tool_plan, "I will use the weather tool.");
  assert.equal(body.finish_reason, "COMPLETE");
  assert.deepEqual(body.usage, cohereBody("{}").usage);
});

test("gateCompletion: a body read as another dialect is let through, never a throw", async () => {
  const bodies = [
    { choices: 5 },
    { output: "x" },
    { content: 7, type: "message" },
    { candidates: {} },
    { message: 3, finish_reason: "x" },
  ];
  for (
    const dialect of ["openai_chat", "openai_responses", "anthropic", "ollama", "gemini", "cohere"] as const
  ) {
    for (const body of bodies) {
      const r = await gateCompletion({ tools: [] }, body, { dialect });
      assert.equal(r.changed, false);
    }
  }
});

test("assembleToolCalls: reads Gemini functionCall parts and Cohere tool-call events", () => {
  const { calls } = assembleToolCalls([
    {
      candidates: [{
        content: { parts: [{ functionCall: { name: "weather", args: { location: "Oslo" } } }] },
      }],
    },
    {
      type: "tool-call-start",
      index: 0,
      delta: { message: { tool_calls: { id: "w1", function: { name: "w" } } } },
    },
    {
      type: "tool-call-delta",
      index: 0,
      delta: { message: { tool_calls: { function: { arguments: '{"a":' } } } },
    },
    {
      type: "tool-call-delta",
      index: 0,
      delta: { message: { tool_calls: { function: { arguments: "1}" } } } },
    },
    { type: "tool-call-end", index: 0 },
  ]);
  assert.deepEqual(calls.map((c) => [c.dialect, c.name, c.arguments]), [
    ["gemini", "weather", '{"location":"Oslo"}'],
    ["cohere", "w", '{"a":1}'],
  ]);
});

// ---------------------------------------------------------------------------------------------------------
// guardFetch against a local server
// ---------------------------------------------------------------------------------------------------------

let next: FakeReply = { json: {} };
let server: FakeServer;
const seen: GateEvent[] = [];
const gfetch = guardFetch(fetch, { onVerdict: (e) => seen.push(e) });
before(async () => {
  server = await startFakeLlmServer(() => next);
});
after(async () => {
  await server.close();
});

async function post(path: string, tools: unknown[], reply: FakeReply): Promise<Response> {
  next = reply;
  seen.length = 0;
  return await gfetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [], tools }),
  });
}

test("guardFetch: Gemini generateContent, a rejected call is removed from the body", async () => {
  const res = await post("/v1beta/models/g:generateContent", GEMINI_TOOLS, { json: geminiBody({}) });
  const body = await res.json();
  assert.equal(JSON.stringify(body).includes("functionCall"), false);
  assert.equal(res.headers.get("x-toolguard-blocked"), "1");
  assert.equal(seen[0].dialect, "gemini");
});

test("guardFetch: Gemini streamGenerateContent?alt=sse, text flows and a rejected call gives way to the reason", async () => {
  const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    modelVersion: "gemini-test",
  });
  const frames = [
    chunk([{ text: "Let me look." }]),
    { ...chunk([{ functionCall: { name: "weather", args: {} } }], { finishReason: "STOP" }), usageMetadata },
  ];
  const res = await post("/v1beta/models/g:streamGenerateContent?alt=sse", GEMINI_TOOLS, { sse: frames });
  const events = sseData(await res.text());
  const parts = events.flatMap((e) => e.candidates[0].content.parts);
  assert.equal(parts[0].text, "Let me look.");
  assert.equal(parts.some((p: Record<string, unknown>) => p.functionCall), false);
  assert.match(parts[parts.length - 1].text, /location/);
  assert.deepEqual(events[events.length - 1].usageMetadata, usageMetadata);
  assert.equal(events[events.length - 1].candidates[0].finishReason, "STOP");
  assert.deepEqual(codes(seen[0].verdict), ["missing_required_argument"]);
});

test("guardFetch: a Gemini stream that reports its usage in every chunk keeps its text in order while calls are held", async () => {
  // Held whole for its usage, a text chunk after a call was overtaken by the text of a later chunk that
  // brought a call too (that chunk's text goes at once).
  const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    usageMetadata: { promptTokenCount: 29, totalTokenCount: 29 },
    modelVersion: "gemini-test",
  });
  const call = (location: string) => ({ functionCall: { name: "weather", args: { location } } });
  const frames = [
    chunk([{ text: "Oslo, " }, call("Oslo")]),
    chunk([{ text: "Bergen, " }]),
    chunk([{ text: "Tromsø." }, call("Tromsø")]),
    { ...chunk([{ text: "" }], { finishReason: "STOP" }), usageMetadata },
  ];
  const res = await post("/v1beta/models/g:streamGenerateContent?alt=sse", GEMINI_TOOLS, { sse: frames });
  const events = sseData(await res.text());
  const parts = events.flatMap((e) => e.candidates[0].content.parts);
  assert.equal(parts.map((p: { text?: string }) => p.text ?? "").join(""), "Oslo, Bergen, Tromsø.");
  assert.deepEqual(parts.filter((p: Record<string, unknown>) => p.functionCall).length, 2);
  assert.deepEqual(events.at(-1).usageMetadata, usageMetadata);
  assert.equal(seen[0].verdict.allowed, true);
});

test("guardFetch: a Gemini thought's signature in a part without text keeps its place while calls are held", async () => {
  // Held like a call (or for the usage it came with), the signature came after the text that followed it.
  for (const usage of [undefined, { promptTokenCount: 29, totalTokenCount: 29 }]) {
    const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
      candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
      ...(usage ? { usageMetadata: usage } : {}),
      modelVersion: "gemini-test",
    });
    const frames = [
      chunk([{ functionCall: { name: "weather", args: { location: "Oslo" } } }]),
      chunk([{ text: "Bergen next.", thought: true }]),
      chunk([{ text: "", thoughtSignature: "c2ln" }]),
      chunk([{ text: "Checking." }]),
      { ...chunk([{ text: "" }], { finishReason: "STOP" }), usageMetadata },
    ];
    const res = await post("/v1beta/models/g:streamGenerateContent?alt=sse", GEMINI_TOOLS, { sse: frames });
    const events = sseData(await res.text());
    const said = events.flatMap((e) => e.candidates[0].content.parts).map((p: Record<string, unknown>) =>
      p.functionCall ? "call" : p.thoughtSignature ?? p.text
    );
    assert.deepEqual(said.filter((s) => s !== ""), ["Bergen next.", "c2ln", "Checking.", "call"]);
    assert.deepEqual(events.at(-1).usageMetadata, usageMetadata);
    assert.equal(seen[0].verdict.allowed, true);
  }
});

test("guardFetch: Gemini streamGenerateContent without alt=sse (a JSON array) is judged too", async () => {
  const res = await post("/v1beta/models/g:streamGenerateContent", GEMINI_TOOLS, {
    json: [geminiBody({}), { candidates: [{ content: { parts: [{ text: "" }] }, finishReason: "STOP" }] }],
  });
  const body = await res.json();
  assert.ok(Array.isArray(body));
  assert.equal(JSON.stringify(body).includes("functionCall"), false);
  assert.equal(seen[0].verdict.allowed, false);
});

test("guardFetch: a Gemini JSON array of thousands of chunks is merged in linear time", async () => {
  const n = 3_000;
  const chunks = Array.from({ length: n }, (_, i) => ({
    candidates: [{ index: 0, content: { role: "model", parts: [{ text: `word ${i} ` }] } }],
  }));
  // Array iterator steps count the work without depending on the machine's speed: each chunk copied the
  // parts of all before it (4.5 million steps here); now the whole exchange takes a few dozen per chunk.
  const [body, steps] = await countingWork(ARRAY_ITERATOR, "next", async () => {
    const res = await post("/v1beta/models/g:streamGenerateContent", GEMINI_TOOLS, { json: chunks });
    return await res.json();
  });
  assert.equal(body.length, n); // no call: the chunks as they came
  assert.equal(body[n - 1].candidates[0].content.parts[0].text, `word ${n - 1} `);
  assert.ok(steps < 100 * n, `${steps} iterator steps for ${n} chunks`);
});

test("guardFetch: Cohere v2 stream, an allowed call passes byte for byte and a rejected one is withheld", async () => {
  const call = (index: number, name: string, args: string) => [
    {
      type: "tool-call-start",
      index,
      delta: {
        message: {
          tool_calls: { id: `${name}_${index}`, type: "function", function: { name, arguments: "" } },
        },
      },
    },
    { type: "tool-call-delta", index, delta: { message: { tool_calls: { function: { arguments: args } } } } },
    { type: "tool-call-end", index },
  ];
  const frames = (name: string, args: string) => [
    {
      id: "c1",
      type: "message-start",
      delta: { message: { role: "assistant", content: [], tool_calls: [] } },
    },
    { type: "tool-plan-delta", delta: { message: { tool_plan: "I will check." } } },
    ...call(0, name, args),
    { type: "message-end", delta: { finish_reason: "TOOL_CALL", usage: { tokens: { output_tokens: 9 } } } },
  ];
  const allowed: FakeReply = { sse: frames("weather", '{"location":"Oslo"}') };
  const ok = await post("/v2/chat", COHERE_TOOLS, allowed);
  const okText = await ok.text();
  assert.equal(okText, allowed.sse!.map((f) => `data: ${JSON.stringify(f)}\n\n`).join(""));
  assert.equal(seen[0].verdict.allowed, true);

  const res = await post("/v2/chat", COHERE_TOOLS, { sse: frames("rm_rf", "{}") });
  const events = sseData(await res.text());
  assert.equal(events.some((e) => String(e.type).startsWith("tool-call")), false);
  assert.equal(events.find((e) => e.type === "tool-plan-delta").delta.message.tool_plan, "I will check.");
  const text = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text).join(
    "",
  );
  assert.match(text, /rm_rf/);
  const end = events[events.length - 1];
  assert.equal(end.type, "message-end");
  assert.equal(end.delta.finish_reason, "COMPLETE");
  assert.deepEqual(end.delta.usage, { tokens: { output_tokens: 9 } });
});

test("guardFetch: a Cohere v2 stream cuts a rejected call written across a citation whole", async () => {
  // A citation's events come inside the text: taken for its end, they let out the tail that may become a
  // marker, and the client read "Sure. <tool_call" before the reason.
  const delta = (text: string) => ({
    type: "content-delta",
    index: 0,
    delta: { message: { content: { text } } },
  });
  const sse = [
    {
      id: "c1",
      type: "message-start",
      delta: { message: { role: "assistant", content: [], tool_calls: [] } },
    },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    delta("Sure. "),
    delta("<tool_call"),
    {
      type: "citation-start",
      index: 0,
      delta: { message: { citations: { start: 0, end: 5, text: "Sure.", sources: [] } } },
    },
    { type: "citation-end", index: 0 },
    delta('>\n{"name": "rm_rf", "arguments": {}}\n</tool_call>'),
    { type: "content-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "COMPLETE", usage: { tokens: { output_tokens: 9 } } } },
  ];
  const events = sseData(await (await post("/v2/chat", COHERE_TOOLS, { sse })).text());
  assert.equal(seen[0].verdict.allowed, false);
  const text = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text).join(
    "",
  );
  assert.match(text, /^Sure\.\s*toolguard stopped /);
  assert.doesNotMatch(text, /tool_call/);
  assert.equal(events.filter((e) => String(e.type).startsWith("citation")).length, 2);
});

test("guardFetch: a Cohere v2 text block after an allowed call keeps its order: its text never comes before its start", async () => {
  // A start's own text goes on as a delta after the start (the AI SDK drops a text-delta whose text-start it
  // has not had, with an error); the call's events all follow, in their order.
  const call = { id: "weather_0", type: "function", function: { name: "weather", arguments: "" } };
  const frames = [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    { type: "tool-call-start", index: 0, delta: { message: { tool_calls: call } } },
    {
      type: "tool-call-delta",
      index: 0,
      delta: { message: { tool_calls: { function: { arguments: '{"location":"Oslo"}' } } } },
    },
    { type: "tool-call-end", index: 0 },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "Oslo" } } } },
    { type: "content-delta", index: 0, delta: { message: { content: { text: " is next." } } } },
    { type: "content-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
  ];
  const events = sseData(await (await post("/v2/chat", COHERE_TOOLS, { sse: frames })).text());
  assert.equal(seen[0].verdict.allowed, true);
  const types = events.map((e) => e.type);
  const block = types.indexOf("content-start");
  assert.ok(block >= 0 && types.indexOf("content-delta") > block, types.join(" "));
  assert.deepEqual(
    events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text),
    ["Oslo", " is next."],
  );
  assert.deepEqual(types.filter((t) => t.startsWith("tool-call")), [
    "tool-call-start",
    "tool-call-delta",
    "tool-call-end",
  ]);
  assert.equal(types.at(-1), "message-end");
});

test("guardFetch: a Cohere v2 citation after a held call keeps its place in the text", async () => {
  // Text flows while a call is held; a citation's events come inside the text, and held behind the call they
  // reached the client after the text that followed them.
  const call = { id: "weather_0", type: "function", function: { name: "weather", arguments: "" } };
  const frames = [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    { type: "tool-call-start", index: 0, delta: { message: { tool_calls: call } } },
    {
      type: "tool-call-delta",
      index: 0,
      delta: { message: { tool_calls: { function: { arguments: '{"location":"Oslo"}' } } } },
    },
    { type: "tool-call-end", index: 0 },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index: 0, delta: { message: { content: { text: "Oslo is wet." } } } },
    {
      type: "citation-start",
      index: 0,
      delta: { message: { citations: { start: 0, end: 12, text: "Oslo is wet.", sources: [] } } },
    },
    { type: "citation-end", index: 0 },
    { type: "content-delta", index: 0, delta: { message: { content: { text: " Bring a coat." } } } },
    { type: "content-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
  ];
  const events = sseData(await (await post("/v2/chat", COHERE_TOOLS, { sse: frames })).text());
  assert.equal(seen[0].verdict.allowed, true);
  const types = events.map((e) => e.type).filter((t) => !String(t).startsWith("tool-call"));
  assert.deepEqual(types, frames.map((f) => f.type).filter((t) => !t.startsWith("tool-call")));
});

test("guardFetch: Cohere v2 stream, a text block after a held call reaches the client whole, its start first", async () => {
  // A client files a content-delta under the block its content-start opened: the start, held behind the
  // call, came after the block's deltas.
  const frames = [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    {
      type: "tool-call-start",
      index: 0,
      delta: {
        message: { tool_calls: { id: "w0", type: "function", function: { name: "weather", arguments: "" } } },
      },
    },
    {
      type: "tool-call-delta",
      index: 0,
      delta: { message: { tool_calls: { function: { arguments: '{"location":"Oslo"}' } } } },
    },
    { type: "tool-call-end", index: 0 },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index: 0, delta: { message: { content: { text: "Checking." } } } },
    { type: "content-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
  ];
  for (const name of ["weather", "rm_rf"]) {
    frames[1].delta!.message!.tool_calls!.function.name = name;
    const res = await post("/v2/chat", COHERE_TOOLS, { sse: frames });
    const types = sseData(await res.text()).map((e) => e.type);
    assert.equal(seen[0].verdict.allowed, name === "weather");
    const block = types.indexOf("content-start");
    assert.ok(block >= 0 && block < types.indexOf("content-delta"), `${name}: ${types.join(" ")}`);
    assert.ok(types.indexOf("content-end") > types.indexOf("content-delta"), `${name}: ${types.join(" ")}`);
  }
});

test("gateCompletion, a turn withheld: JSON in prose that names no declared tool stays, as in the turn allowed", async () => {
  // It is no call (extractToolCalls, given the declared tools, reads none in it) and an allowed turn keeps
  // it; the body gate cut it as a call, read without the tools.
  const data = '{"name": "Ada", "arguments": {"ok": true}}';
  const content =
    `Your record is ${data}.\n<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>`;
  const request = { model: "m", messages: [{ role: "user", content: "Hi" }], tools: TOOLS_OPENAI };
  const gated = await gateCompletion(request, ollamaChat(content), { dialect: "ollama" });
  assert.equal(gated.verdict.allowed, false);
  const body = String((gated.response as { message: { content: string } }).message.content);
  // (its "\n" as it came, then one more: one blank line before the reason)
  assert.ok(body.startsWith(`Your record is ${data}.\n\ntoolguard stopped`), body);
  assert.doesNotMatch(body, /<tool_call>/);
});

test("guardFetch: a Cohere v2 citation of a written call the gate cut goes; those of the kept text stay, numbered on", async () => {
  // A citation names characters of its block's text: one of the cut call kept its offsets and cited the
  // reason's words, in a body and in a stream (where the citations after it are numbered one down).
  const call = '<tool_call>\n{"name": "rm_rf", "arguments": {}}\n</tool_call>';
  const cite = (start: number, end: number, block: number) => ({
    start,
    end,
    text: "",
    sources: [],
    content_index: block,
  });
  const citations = [cite(0, 3, 0), cite(13, 24, 0), cite(0, 4, 1)];
  const body = {
    id: "c1",
    message: {
      role: "assistant",
      content: [{ type: "text", text: `Let me look. ${call}` }, { type: "text", text: "Oslo is wet." }],
      citations,
    },
    finish_reason: "COMPLETE",
  };
  const res = await post("/v2/chat", COHERE_TOOLS, { json: body });
  const got = await res.json();
  assert.equal(seen[0].verdict.allowed, false);
  assert.match(got.message.content[0].text, /^Let me look\. /);
  assert.deepEqual(got.message.citations, [citations[0], citations[2]]);
  const delta = (index: number, text: string) => ({
    type: "content-delta",
    index,
    delta: { message: { content: { text } } },
  });
  const start = (index: number) => ({
    type: "content-start",
    index,
    delta: { message: { content: { type: "text", text: "" } } },
  });
  const cited = (index: number) => [
    { type: "citation-start", index, delta: { message: { citations: citations[index] } } },
    { type: "citation-end", index },
  ];
  const sse = [
    {
      id: "c1",
      type: "message-start",
      delta: { message: { role: "assistant", content: [], tool_calls: [] } },
    },
    start(0),
    delta(0, "Let me look. "),
    delta(0, call),
    ...cited(0),
    ...cited(1),
    { type: "content-end", index: 0 },
    start(1),
    delta(1, "Oslo is wet."),
    ...cited(2),
    { type: "content-end", index: 1 },
    { type: "message-end", delta: { finish_reason: "COMPLETE" } },
  ];
  const events = sseData(await (await post("/v2/chat", COHERE_TOOLS, { sse })).text());
  assert.equal(seen[0].verdict.allowed, false);
  const texts: string[] = [];
  for (const e of events) {
    if (e.type === "content-delta") texts[e.index] = (texts[e.index] ?? "") + e.delta.message.content.text;
  }
  assert.equal(texts[0], "Let me look. ");
  assert.match(texts[1], /^Oslo is wet\.\n\ntoolguard stopped /);
  assert.deepEqual(
    events.filter((e) => String(e.type).startsWith("citation")),
    [
      { type: "citation-start", index: 0, delta: { message: { citations: citations[0] } } },
      { type: "citation-end", index: 0 },
      { type: "citation-start", index: 1, delta: { message: { citations: citations[2] } } },
      { type: "citation-end", index: 1 },
    ],
  );
});

test("guardFetch: a Gemini grounding support of a written call the gate cut goes; one of the kept text stays", async () => {
  // A grounding support names bytes of its part's text: one of the cut call kept its offsets and cited the
  // reason's words, in a body and a stream; and a part after a rejected native call moves up a place.
  const call = '<tool_call>\n{"name": "rm_rf", "arguments": {}}\n</tool_call>';
  const support = (startIndex: number, endIndex: number, partIndex?: number) => ({
    segment: { ...(partIndex === undefined ? {} : { partIndex }), startIndex, endIndex, text: "" },
    groundingChunkIndices: [0],
  });
  const meta = (supports: unknown[]) => ({
    groundingChunks: [{ web: { uri: "u" } }],
    groundingSupports: supports,
  });
  const kept = support(0, 3);
  const cut = support(13, 24);
  const body = {
    candidates: [{
      content: { role: "model", parts: [{ text: `Let me look. ${call}` }] },
      finishReason: "STOP",
      index: 0,
      groundingMetadata: meta([kept, cut]),
    }],
  };
  const res = await post("/v1beta/models/g:generateContent", GEMINI_TOOLS, { json: body });
  const got = await res.json();
  assert.equal(seen[0].verdict.allowed, false);
  assert.match(got.candidates[0].content.parts[0].text, /^Let me look\. /);
  assert.deepEqual(got.candidates[0].groundingMetadata.groundingSupports, [kept]);
  // A native call rejected: the text after it moves up a part, and so does its support.
  const native = {
    candidates: [{
      content: {
        role: "model",
        parts: [{ text: "Checking." }, { functionCall: { name: "weather", args: {} } }, { text: "Oslo." }],
      },
      finishReason: "STOP",
      index: 0,
      groundingMetadata: meta([support(0, 4, 2)]),
    }],
  };
  const moved = await (await post("/v1beta/models/g:generateContent", GEMINI_TOOLS, { json: native })).json();
  assert.deepEqual(moved.candidates[0].content.parts[1], { text: "Oslo." });
  assert.deepEqual(moved.candidates[0].groundingMetadata.groundingSupports, [support(0, 4, 1)]);
  const chunk = (text: string, extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...extra }],
    modelVersion: "gemini-test",
  });
  const frames = [
    chunk("Let me look. "),
    chunk(call),
    chunk("", { finishReason: "STOP", groundingMetadata: meta([kept, cut]) }),
  ];
  const sse = await post("/v1beta/models/g:streamGenerateContent?alt=sse", GEMINI_TOOLS, { sse: frames });
  const events = sseData(await sse.text());
  assert.equal(seen[0].verdict.allowed, false);
  const text = events.flatMap((e) => e.candidates?.[0]?.content?.parts ?? []).map((p: { text?: string }) =>
    p.text ?? ""
  )
    .join("");
  assert.match(text, /^Let me look\. \n\ntoolguard stopped /);
  const supports = events.flatMap((e) => e.candidates?.[0]?.groundingMetadata?.groundingSupports ?? []);
  assert.deepEqual(supports, [kept]);
});

test("guardFetch: a Gemini grounding support of kept text that is not ASCII stays (its offsets are bytes)", async () => {
  // Gemini counts a segment's offsets in UTF-8 bytes: the kept text was measured in UTF-16 units, so a
  // support of kept words with accents, CJK or emoji ended past it and went, in a body and a stream.
  const call = '<tool_call>\n{"name": "rm_rf", "arguments": {}}\n</tool_call>';
  const said = "Café 東京 😀 ok. ";
  const bytes = new TextEncoder().encode(said.trimEnd()).length; // 21, where the text is 14 UTF-16 units
  const kept = {
    segment: { startIndex: 0, endIndex: bytes, text: said.trimEnd() },
    groundingChunkIndices: [0],
  };
  const cut = {
    segment: { startIndex: bytes + 1, endIndex: bytes + 12, text: "" },
    groundingChunkIndices: [0],
  };
  const meta = { groundingChunks: [{ web: { uri: "u" } }], groundingSupports: [kept, cut] };
  const body = {
    candidates: [{
      content: { role: "model", parts: [{ text: said + call }] },
      finishReason: "STOP",
      index: 0,
      groundingMetadata: meta,
    }],
  };
  const got = await (await post("/v1beta/models/g:generateContent", GEMINI_TOOLS, { json: body })).json();
  assert.equal(seen[0].verdict.allowed, false);
  assert.ok(got.candidates[0].content.parts[0].text.startsWith(said));
  assert.deepEqual(got.candidates[0].groundingMetadata.groundingSupports, [kept]);
  const chunk = (text: string, extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...extra }],
    modelVersion: "gemini-test",
  });
  const frames = [chunk(said), chunk(call), chunk("", { finishReason: "STOP", groundingMetadata: meta })];
  const sse = await post("/v1beta/models/g:streamGenerateContent?alt=sse", GEMINI_TOOLS, { sse: frames });
  const events = sseData(await sse.text());
  assert.equal(seen[0].verdict.allowed, false);
  const text = events.flatMap((e) => e.candidates?.[0]?.content?.parts ?? []).map((p: { text?: string }) =>
    p.text ?? ""
  ).join("");
  assert.ok(text.startsWith(`${said}\n\ntoolguard stopped `), text);
  const supports = events.flatMap((e) => e.candidates?.[0]?.groundingMetadata?.groundingSupports ?? []);
  assert.deepEqual(supports, [kept]);
});
