// Stream framing, call assembly and the streaming gate (driven through guardFetch and a real local server).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { formatSse, ndjsonParser, sseParser } from "../_gate/sse.ts";
import { textWatcher } from "../_gate/text_watch.ts";
import { joinsEarlierWords, StreamFlow, ToolPositions } from "../_gate/dialects/shared.ts";
import { DIALECTS } from "../_gate/dialects/mod.ts";
import { assembleToolCalls, gateCompletion, type GateEvent, guardFetch } from "../gate.ts";
import {
  anthropicStream,
  chatChunk,
  chatStream,
  type FakeReply,
  type FakeServer,
  ollamaChat,
  ollamaStream,
  responsesStream,
  startFakeLlmServer,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
} from "./_fake_llm_server.ts";
import { isDeno, underWine } from "./_runtime.ts";
import { ARRAY_ITERATOR, countingWork } from "./_counting.ts";

const chunk = (tc: unknown, choice = 0) => ({
  object: "chat.completion.chunk",
  choices: [{ index: choice, delta: { tool_calls: [tc] }, finish_reason: null }],
});

// ---------------------------------------------------------------------------------------------------------
// SSE and NDJSON framing
// ---------------------------------------------------------------------------------------------------------

test("sseParser: frames split anywhere, with \\n, \\r\\n and \\r line ends, keep their exact text", () => {
  const wire = 'data: {"a":1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\n: keep-alive\n\ndata: [DONE]\r\r';
  for (let size = 1; size <= wire.length; size++) {
    const p = sseParser();
    const frames = [];
    for (let i = 0; i < wire.length; i += size) frames.push(...p.push(wire.slice(i, i + size)));
    frames.push(...p.end());
    assert.equal(frames.map((f) => f.raw).join(""), wire, `chunk size ${size}`);
    const data = frames.filter((f) => f.data !== undefined);
    assert.deepEqual(data.map((f) => f.data), ['{"a":1}', "line1\nline2", "[DONE]"], `chunk size ${size}`);
    assert.equal(data[1].event, "x");
  }
});

test("sseParser: an unterminated last frame is flushed at the end", () => {
  const p = sseParser();
  assert.deepEqual(p.push("data: tail"), []);
  assert.equal(p.end()[0].data, "tail");
});

test("sseParser: id and retry, as the SSE standard reads them", () => {
  const p = sseParser();
  const events = p.push("id: e1\nretry: 50\ndata: \n\nid: a\0b\nretry: 5s\ndata: x\n\nid\nretry:7\n\n");
  assert.deepEqual(events.map((e) => [e.id, e.retry, e.data]), [
    ["e1", 50, ""], // a priming event: an id, a delay, empty data
    [undefined, undefined, "x"], // an id holding NUL and a delay that is not all digits are ignored
    ["", 7, undefined], // a bare "id" resets the last event id to ""
  ]);
});

test("formatSse: splits multi-line data", () => {
  assert.equal(formatSse("a\nb", "t"), "event: t\ndata: a\ndata: b\n\n");
});

test("formatSse: a line break in the event name does not end the frame (the name may come from a provider)", () => {
  const frames = sseParser().push(formatSse('{"a":1}', 'x\ndata: {"evil":1}\r\n\revent: y'));
  assert.equal(frames.length, 1);
  assert.equal(frames[0].data, '{"a":1}');
  assert.doesNotMatch(frames[0].event ?? "", /[\r\n]/);
});

test("ndjsonParser: lines split across chunks, last line without newline", () => {
  const p = ndjsonParser();
  const lines = [...p.push('{"a":'), ...p.push('1}\n{"b"'), ...p.push(":2}"), ...p.end()];
  assert.deepEqual(lines.map((l) => l.text), ['{"a":1}', '{"b":2}']);
});

// ---------------------------------------------------------------------------------------------------------
// assembleToolCalls
// ---------------------------------------------------------------------------------------------------------

test("assembleToolCalls: OpenAI chat, two parallel calls whose deltas interleave are never glued", () => {
  const { calls, findings } = assembleToolCalls([
    chunk({ index: 0, id: "call_a", type: "function", function: { name: "search", arguments: "" } }),
    chunk({ index: 1, id: "call_b", type: "function", function: { name: "get_weather", arguments: "" } }),
    chunk({ index: 0, function: { arguments: '{"query"' } }),
    chunk({ index: 1, function: { arguments: '{"city":' } }),
    chunk({ index: 0, function: { arguments: ':"cats"}' } }),
    chunk({ index: 1, function: { arguments: '"Oslo"}' } }),
  ]);
  assert.deepEqual(calls.map((c) => [c.id, c.name, c.arguments]), [
    ["call_a", "search", '{"query":"cats"}'],
    ["call_b", "get_weather", '{"city":"Oslo"}'],
  ]);
  assert.deepEqual(findings, []);
});

test("assembleToolCalls: OpenAI chat, a server that numbers every parallel call 0 still yields separate calls", () => {
  const { calls, findings } = assembleToolCalls([
    chunk({ index: 0, id: "call_a", function: { name: "search", arguments: '{"query":"a"}' } }),
    chunk({ index: 0, id: "call_b", function: { name: "search", arguments: '{"query":"b"}' } }),
  ]);
  assert.deepEqual(calls.map((c) => c.arguments), ['{"query":"a"}', '{"query":"b"}']);
  assert.equal(findings[0].code, "reused_index");
});

test("assembleToolCalls: OpenAI chat, index 0 reused for every call of a long stream is read in linear time", async () => {
  const n = 3_000;
  const events = Array.from(
    { length: n },
    (_, i) => chunk({ index: 0, id: `call_${i}`, function: { name: "search", arguments: "{}" } }),
  );
  // Array iterator steps count the work without depending on the machine's speed: each reuse once visited
  // every call opened so far (4.5 million steps here), now only the keys opened since the last reuse (7 per
  // call in all).
  const [result, steps] = await countingWork(ARRAY_ITERATOR, "next", () => assembleToolCalls(events));
  assert.equal(result.calls.length, n);
  assert.deepEqual(result.calls.at(-1)?.id, `call_${n - 1}`);
  assert.ok(steps < 50 * n, `${steps} iterator steps for ${n} calls`);
});

test("assembleToolCalls: OpenAI Responses argument events that name only their item are read in linear time", async () => {
  const n = 2_000;
  const events = [
    ...Array.from({ length: n }, (_, i) => ({
      type: "response.output_item.added",
      output_index: i,
      item: { type: "function_call", id: `fc_${i}`, call_id: `call_${i}`, name: "search", arguments: "" },
    })),
    ...Array.from({ length: n }, (_, i) => ({
      type: "response.function_call_arguments.delta",
      item_id: `fc_${i}`,
      delta: `{"q":${i}}`,
    })),
  ];
  // Map look-ups count the work without depending on the machine's speed: each event once searched every
  // call for its item id (2 million look-ups here), now it looks its item up once.
  const [result, steps] = await countingWork(Map.prototype, "get", () => assembleToolCalls(events));
  assert.equal(result.calls.length, n);
  assert.equal(result.calls.at(-1)?.arguments, `{"q":${n - 1}}`);
  assert.ok(steps < 20 * events.length, `${steps} look-ups for ${events.length} events`);
});

test("assembleToolCalls: OpenAI chat, same index 0, no ids, a complete call followed by a new named one", () => {
  const { calls } = assembleToolCalls([
    chunk({ index: 0, function: { name: "a", arguments: "{}" } }),
    chunk({ index: 0, function: { name: "b", arguments: '{"x":1}' } }),
  ]);
  assert.deepEqual(calls.map((c) => c.name), ["a", "b"]);
});

test("assembleToolCalls: OpenAI chat, a name repeated on every delta is not doubled", () => {
  const { calls } = assembleToolCalls([
    chunk({ index: 0, id: "c", function: { name: "search", arguments: '{"q":' } }),
    chunk({ index: 0, function: { name: "search", arguments: '"x"}' } }),
  ]);
  assert.equal(calls[0].name, "search");
  assert.equal(calls[0].arguments, '{"q":"x"}');
});

test("assembleToolCalls: OpenAI chat, deltas without index are matched by id and order, with a finding", () => {
  const { calls, findings } = assembleToolCalls([
    chunk({ id: "c1", function: { name: "a", arguments: '{"x":' } }),
    chunk({ function: { arguments: "1}" } }),
    chunk({ id: "c2", function: { name: "b", arguments: "{}" } }),
  ]);
  assert.deepEqual(calls.map((c) => [c.id, c.arguments]), [["c1", '{"x":1}'], ["c2", "{}"]]);
  assert.ok(findings.some((f) => f.code === "missing_index"));
});

test("assembleToolCalls: OpenAI chat, calls in different choices stay apart", () => {
  const { calls } = assembleToolCalls([
    chunk({ index: 0, id: "x", function: { name: "a", arguments: "{}" } }, 0),
    chunk({ index: 0, id: "y", function: { name: "b", arguments: "{}" } }, 1),
  ]);
  assert.deepEqual(calls.map((c) => [c.choice, c.name]), [[0, "a"], [1, "b"]]);
});

test("assembleToolCalls: calls without an id get stable synthetic ids (same input, same id)", () => {
  const events = () => [chunk({ index: 0, function: { name: "a", arguments: '{"x":1}' } })];
  const one = assembleToolCalls(events()).calls[0];
  const two = assembleToolCalls(events()).calls[0];
  assert.match(one.id, /^call_[0-9a-z]+$/);
  assert.equal(one.syntheticId, true);
  assert.equal(one.id, two.id);
  const other =
    assembleToolCalls([chunk({ index: 0, function: { name: "a", arguments: '{"x":2}' } })]).calls[0];
  assert.notEqual(other.id, one.id);
});

test("assembleToolCalls: Ollama, each streamed call is whole; two identical calls get different synthetic ids", () => {
  const lines = ollamaStream(["hi"], [{ name: "s", args: { q: 1 } }, { name: "s", args: { q: 1 } }]);
  const { calls } = assembleToolCalls(lines);
  assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments)]), [["s", { q: 1 }], ["s", { q: 1 }]]);
  assert.notEqual(calls[0].id, calls[1].id);
  assert.deepEqual(assembleToolCalls(lines).calls.map((c) => c.id), calls.map((c) => c.id));
});

test("assembleToolCalls: a call gets the same synthetic id streamed or not (the validator's rule)", async () => {
  const call = { name: "search", args: { query: "a", n: 2 } };
  const streamed = assembleToolCalls(ollamaStream(["x"], [call, call])).calls.map((c) => c.id);
  const whole = (await gateCompletion({ tools: TOOLS_OPENAI }, ollamaChat("", [call, call]))).verdict.calls
    .map((c) => c.id);
  assert.deepEqual(streamed, whole);
  assert.notEqual(streamed[0], streamed[1]);
});

test("assembleToolCalls: Anthropic, input_json_delta assembled per block; empty input means {}", () => {
  const events = anthropicStream(["hi"], [{ name: "a", args: { x: [1, 2] } }, { name: "b", args: "" }]);
  const { calls } = assembleToolCalls(events);
  assert.deepEqual(calls.map((c) => [c.name, c.arguments]), [["a", '{"x":[1,2]}'], ["b", "{}"]]);
  assert.deepEqual(calls.map((c) => c.slot), [1, 2]);
});

/** An OpenAI Responses function call item named and identified by `id`, with no arguments yet. */
const functionCallItem = (id: string) => ({
  id,
  type: "function_call",
  call_id: `call_${id}`,
  name: id,
  arguments: "",
});

test("assembleToolCalls: an index that is no whole number is read as a client reads it, never passed on", () => {
  const chat = (index: unknown, td: Record<string, unknown>) => ({
    choices: [{ index, delta: { tool_calls: [td] } }],
  });
  const fn = (name: string, args: string) => ({ function: { name, arguments: args } });
  // OpenAI Chat: "1" is choice 1 (the openai SDK's `choices["1"]`); 1.5 and NaN are read as choice 0, as the
  // AI SDK reads the first choice of a chunk. A tool index "1" is call 1 of its choice.
  const c = assembleToolCalls([
    chat("1", { index: "1", id: "call_a", ...fn("a", "{}") }),
    chat(1.5, { index: 0, id: "call_b", ...fn("b", "{}") }),
    chat(Number.NaN, { index: 1, id: "call_c", ...fn("c", "{}") }),
  ]);
  assert.deepEqual(c.calls.map((x) => [x.name, x.choice, x.slot]), [["a", 1, 1], ["b", 0, 0], ["c", 0, 1]]);
  assert.deepEqual(c.findings.map((f) => [f.code, f.event]), [["malformed_event", 1], [
    "malformed_event",
    2,
  ]]);
  // OpenAI Responses: output_index "1" is item 1; 1.5 is none (the SDK throws on it): the call added there
  // takes a place no index reaches, and a delta addressed there is matched by its item id.
  const r = assembleToolCalls([
    { type: "response.output_item.added", output_index: "1", item: functionCallItem("x") },
    { type: "response.output_item.added", output_index: 1.5, item: functionCallItem("y") },
    { type: "response.function_call_arguments.delta", output_index: Number.NaN, item_id: "y", delta: "{}" },
  ]);
  assert.deepEqual(
    r.calls.map((x) => [x.name, x.slot, x.arguments]),
    [["x", 1, ""], ["y", -2, "{}"]],
  );
  assert.ok(r.findings.length >= 2 && r.findings.every((f) => f.code === "malformed_event"));
  // Anthropic: the SDK appends each block, and writes a delta back to `content[index]`: one at 1.5 never
  // reaches its final message, nor its call here; "1" is block 1.
  const block = (index: unknown, name: string) => ({
    type: "content_block_start",
    index,
    content_block: { type: "tool_use", id: `toolu_${name}`, name, input: {} },
  });
  const delta = (index: unknown, json: string) => ({
    type: "content_block_delta",
    index,
    delta: { type: "input_json_delta", partial_json: json },
  });
  const a = assembleToolCalls([
    block(0, "p"),
    block(Number.NaN, "q"),
    delta(0.5, '{"k":1}'),
    delta("0", "{}"),
  ]);
  assert.deepEqual(a.calls.map((x) => [x.name, x.slot, x.arguments]), [["p", 0, "{}"], ["q", -1, "{}"]]);
  assert.deepEqual(a.findings.map((f) => f.code), [
    "malformed_event",
    "missing_index",
    "malformed_event",
    "orphan_delta",
  ]);
  // Cohere: 1.5 is no index: matched by order, as a missing one is.
  const h = assembleToolCalls([{
    type: "tool-call-start",
    index: 1.5,
    delta: { message: { tool_calls: { id: "c1", function: { name: "h", arguments: "{}" } } } },
  }]);
  assert.ok(h.calls.every((x) => Number.isInteger(x.slot)));
  assert.equal(h.findings[0].code, "missing_index");
});

test("assembleToolCalls: OpenAI Responses, a call added at no output_index never shares a key with a real index", () => {
  // Its place was once the number of calls so far (1 here): the call added at output_index 1 was then read
  // into it, and the deltas at 1 and those of its own item were judged as one call, which no client runs.
  const delta = (at: Record<string, unknown>, text: string) => ({
    type: "response.function_call_arguments.delta",
    ...at,
    delta: text,
  });
  const { calls } = assembleToolCalls([
    { type: "response.output_item.added", output_index: 0, item: functionCallItem("a") },
    { type: "response.output_item.added", item: functionCallItem("b") },
    { type: "response.output_item.added", output_index: 1, item: functionCallItem("c") },
    delta({ output_index: 1 }, '{"c":1}'),
    delta({ item_id: "b" }, '{"b":1}'),
  ]);
  assert.deepEqual(calls.map((c) => [c.id, c.slot, c.arguments]), [
    ["call_a", 0, ""],
    ["call_b", -2, '{"b":1}'],
    ["call_c", 1, '{"c":1}'],
  ]);
});

test("assembleToolCalls: OpenAI Responses, deltas, then the .done text wins", () => {
  const { calls } = assembleToolCalls(
    responsesStream(["t"], [{ name: "f", args: { a: 1 }, id: "call_f" }]),
  );
  assert.deepEqual(calls.map((c) => [c.id, c.name, c.arguments]), [["call_f", "f", '{"a":1}']]);
});

test("assembleToolCalls: malformed events never throw; they become findings and the rest still assembles", () => {
  const { calls, findings } = assembleToolCalls([
    "{not json",
    42,
    null,
    { choices: [7] },
    { object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: "x" } }] },
    chunk("not an object"),
    { type: "content_block_delta", index: 9, delta: { type: "input_json_delta", partial_json: "{" } },
    { type: "response.function_call_arguments.delta", output_index: 4, delta: "{" },
    { something: "else" },
    chunk({ index: 0, id: "ok", function: { name: "a", arguments: "{}" } }),
  ]);
  assert.deepEqual(calls.map((c) => c.id), ["ok"]);
  assert.deepEqual(
    findings.map((f) => f.code),
    [
      "malformed_event",
      "malformed_event",
      "malformed_event",
      "malformed_event",
      "malformed_event",
      "malformed_event",
      "orphan_delta",
      "orphan_delta",
      "unknown_event",
    ],
  );
  assert.deepEqual(findings.map((f) => f.event), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
});

test("assembleToolCalls: an iterable that throws midway keeps what was assembled", () => {
  function* events() {
    yield chunk({ index: 0, id: "a", function: { name: "x", arguments: "{}" } });
    throw new Error("connection reset");
  }
  assert.equal(assembleToolCalls(events()).calls.length, 1);
});

// ---------------------------------------------------------------------------------------------------------
// The streaming gate, through guardFetch and a real HTTP server
// ---------------------------------------------------------------------------------------------------------

let server: FakeServer;
let next: FakeReply = { json: {} };
const seen: GateEvent[] = [];
const gfetch = guardFetch(fetch, { onVerdict: (e) => seen.push(e) });

before(async () => {
  server = await startFakeLlmServer(() => next);
});
after(async () => {
  await server.close();
});

async function post(path: string, body: unknown, reply: FakeReply): Promise<Response> {
  next = reply;
  seen.length = 0;
  return await gfetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The raw wire text the fake server sends for a reply. */
function wire(reply: FakeReply): string {
  if (reply.sse) {
    return reply.sse.map((f) =>
      typeof f === "string"
        ? f
        : (reply.named ? `event: ${(f as { type: string }).type}\n` : "") + `data: ${JSON.stringify(f)}\n\n`
    ).join("");
  }
  return (reply.ndjson ?? []).map((f) => (typeof f === "string" ? f : JSON.stringify(f) + "\n")).join("");
}

function sseData(text: string): Record<string, unknown>[] {
  const p = sseParser();
  return [...p.push(text), ...p.end()].filter((f) => f.data && f.data !== "[DONE]").map((f) =>
    JSON.parse(f.data!)
  );
}

test("guardFetch: allowed calls in every dialect's stream arrive byte for byte, split at odd places", {
  // deno.exe's node:http under Wine sends nothing for a response written in more than about 250 pieces at once
  // (the connection just closes; 170 pieces pass); bun.exe passes, and real Windows runners run it.
  skip: underWine && isDeno
    ? "under Wine, deno.exe's node:http drops a response written in ~250+ pieces"
    : false,
}, async () => {
  const cases: [string, unknown, FakeReply][] = [
    ["/v1/chat/completions", { tools: TOOLS_OPENAI, stream: true }, {
      sse: chatStream(["Hel", "lo"], [{ name: "search", args: { query: "a" } }, {
        name: "get_weather",
        args: { city: "Oslo" },
      }]),
      splitEvery: 7,
    }],
    ["/v1/messages", { tools: TOOLS_ANTHROPIC, stream: true }, {
      sse: anthropicStream(["Hi"], [{ name: "search", args: { query: "a" } }]),
      named: true,
      splitEvery: 5,
    }],
    ["/v1/responses", { tools: TOOLS_RESPONSES, stream: true }, {
      sse: responsesStream(["Hi"], [{ name: "search", args: { query: "a" } }]),
      named: true,
      splitEvery: 11,
    }],
    ["/api/chat", { tools: TOOLS_OPENAI }, {
      ndjson: ollamaStream(["Hi"], [{ name: "search", args: { query: "a" } }]),
      splitEvery: 3,
    }],
  ];
  for (const [path, body, reply] of cases) {
    const res = await post(path, body, reply);
    assert.equal(await res.text(), wire(reply), path);
    assert.equal(seen.length, 1, path);
    assert.equal(seen[0].verdict.allowed, true, path);
    assert.equal(seen[0].changed, false, path);
    assert.ok(seen[0].calls!.length >= 1, path);
  }
});

test("guardFetch: streamed text passes through before the tool call part of the stream even exists", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const frames = chatStream(["Looking that up"], [{ name: "search", args: { query: "a" } }]);
  // Hold the server before the first tool-call frame (frame 0 is the role chunk, 1 the text).
  const res = await post("/v1/chat/completions", { tools: TOOLS_OPENAI, stream: true }, {
    sse: frames,
    holdBefore: { frame: 2, until: gate },
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let got = "";
  const deadline = Date.now() + 20_000;
  while (!got.includes("Looking that up") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    got += value;
  }
  assert.match(got, /Looking that up/); // arrived while the server was still holding the call back
  assert.doesNotMatch(got, /tool_calls/);
  release();
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    got += value;
  }
  assert.match(got, /tool_calls/);
  assert.match(got, /\[DONE\]/);
});

test("guardFetch: OpenAI chat stream, a rejected call is replaced by a text delta and finish_reason stop", async () => {
  const res = await post("/v1/chat/completions", { tools: TOOLS_OPENAI, stream: true }, {
    sse: chatStream(["Ok"], [{ name: "search", args: { query: "a" } }, { name: "launch", args: {} }]),
  });
  const text = await res.text();
  const events = sseData(text);
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  assert.equal(events.some((e) => JSON.stringify(e).includes("tool_calls")), false);
  const content = events.map((e) => (e.choices as { delta: { content?: string } }[])[0]?.delta?.content ?? "")
    .join("");
  assert.match(content, /^Ok\n\n[\s\S]*launch/);
  const finish = events.map((e) => (e.choices as { finish_reason: string | null }[])[0]?.finish_reason)
    .filter(Boolean);
  assert.deepEqual(finish, ["stop"]);
  assert.equal(seen[0].verdict.rejectedIndices.length, 1);
  assert.equal(seen[0].changed, true);
});

test("guardFetch: OpenAI chat stream, interleaved parallel calls are validated separately (one bad one blocks the turn)", async () => {
  const frames: unknown[] = [
    chatChunk({ role: "assistant", content: "" }),
    chatChunk({
      tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "search", arguments: "" } }],
    }),
    chatChunk({
      tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "search", arguments: "" } }],
    }),
    chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"query":' } }] }),
    chatChunk({ tool_calls: [{ index: 1, function: { arguments: '{"query":' } }] }),
    chatChunk({ tool_calls: [{ index: 0, function: { arguments: '"cats"}' } }] }),
    chatChunk({ tool_calls: [{ index: 1, function: { arguments: '""}' } }] }),
    chatChunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
  const res = await post("/v1/chat/completions", { tools: TOOLS_OPENAI, stream: true }, { sse: frames });
  await res.text();
  assert.deepEqual(seen[0].calls!.map((c) => c.arguments), ['{"query":"cats"}', '{"query":""}']);
  assert.deepEqual(seen[0].verdict.calls.map((c) => c.allowed), [true, false]);
  assert.equal(seen[0].verdict.calls[1].findings[0].path, "/query");
});

test("guardFetch: Anthropic stream, a rejected call is replaced by a text block; indices stay consecutive", async () => {
  const res = await post("/v1/messages", { tools: TOOLS_ANTHROPIC, stream: true }, {
    sse: anthropicStream(["Hi"], [{ name: "search", args: { query: "" } }]),
    named: true,
  });
  const events = sseData(await res.text());
  assert.equal(events.some((e) => JSON.stringify(e).includes("tool_use")), false);
  const starts = events.filter((e) => e.type === "content_block_start").map((e) => e.index);
  assert.deepEqual(starts, [0, 1]);
  const delta = events.find((e) => e.type === "message_delta") as { delta: { stop_reason: string } };
  assert.equal(delta.delta.stop_reason, "end_turn");
  assert.equal(events[events.length - 1].type, "message_stop");
});

test("guardFetch: OpenAI Responses stream, a rejected call before a message item; indices and sequence numbers stay in order", async () => {
  // The call comes first (output 0), then a text message (output 1).
  const calls = responsesStream([], [{ name: "nope", args: {} }]).slice(1, -1) as Record<string, unknown>[];
  const text = responsesStream(["after"]).slice(1, -1) as Record<string, unknown>[];
  const all = [
    {
      type: "response.created",
      response: { id: "r", object: "response", status: "in_progress", output: [] },
    },
    ...calls,
    ...text.map((e) => ({ ...e, output_index: 1 })),
    {
      type: "response.completed",
      response: { id: "r", object: "response", status: "completed", output: [] },
    },
  ].map((e, i) => ({ ...e, sequence_number: i }));
  const res = await post("/v1/responses", { tools: TOOLS_RESPONSES, stream: true }, {
    sse: all,
    named: true,
  });
  const events = sseData(await res.text());
  assert.equal(events.some((e) => JSON.stringify(e).includes("function_call")), false);
  const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
  assert.deepEqual(added, [0, 1]);
  const seqs = events.map((e) => e.sequence_number as number);
  assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y));
  const done = events[events.length - 1] as { type: string; response: { output: { type: string }[] } };
  assert.equal(done.type, "response.completed");
  assert.deepEqual(done.response.output.map((o) => o.type), ["message", "message"]);
});

test("guardFetch: Ollama stream, a stream cut off before its final chunk is still closed properly", async () => {
  const lines = ollamaStream(["Hi"], [{ name: "nope", args: {} }]);
  lines.pop(); // no done chunk
  const res = await post("/api/chat", { tools: TOOLS_OPENAI }, { ndjson: lines });
  const out = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(out.some((o) => o.message?.tool_calls), false);
  assert.equal(out[out.length - 1].done, true);
  assert.equal(out[out.length - 1].done_reason, "stop");
});

test("guardFetch: streams without tool calls pass untouched; malformed frames are dropped and reported", async () => {
  const frames = chatStream(["a", "b"]);
  frames.splice(2, 0, "data: {broken\n\n");
  const res = await post("/v1/chat/completions", { stream: true }, { sse: frames });
  const text = await res.text();
  assert.equal(text, wire({ sse: frames }).replace("data: {broken\n\n", ""));
  assert.equal(seen[0].findings[0].code, "malformed_event");
});

test("guardFetch: stream false leaves streams alone", async () => {
  const g = guardFetch(fetch, { stream: false });
  next = { sse: chatStream([], [{ name: "nope", args: {} }]) };
  const res = await g(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ tools: TOOLS_OPENAI, stream: true }),
  });
  assert.equal(await res.text(), wire(next));
});

// ---------------------------------------------------------------------------------------------------------
// calls written into streamed text
// ---------------------------------------------------------------------------------------------------------

test("textWatcher: releases prose at once and holds from a marker on, even one split across pieces", () => {
  const w = textWatcher();
  assert.equal(w.push("Let me check <tool_"), "Let me check ");
  assert.equal(w.holding, false);
  assert.equal(w.push('call>{"name":'), "");
  assert.equal(w.holding, true);
  assert.equal(w.held, '<tool_call>{"name":');
  assert.equal(w.visible, "Let me check ");
});

test("textWatcher: lets code fences of other languages and stray brackets through", () => {
  const w = textWatcher();
  assert.equal(
    w.push("Use this:\n```python\nprint([1])\n```\nok"),
    "Use this:\n```python\nprint([1])\n```\nok",
  );
  assert.equal(w.push(" a <"), " a "); // could be the start of <tool_call>: held
  assert.equal(w.push(" b always"), "< b always"); // settled: released with the next piece
  // A trailing "]" may begin MiniMax's "]<]minimax[>[" (every format's marker is watched): held one piece.
  assert.equal(w.push(" [x]"), " [x");
  assert.equal(w.push(" done"), "] done");
  assert.equal(w.holding, false);
});

test("textWatcher: holds a json fence and a message that opens with JSON", () => {
  const a = textWatcher();
  assert.equal(a.push("Here:\n```json\n{"), "Here:\n");
  assert.equal(a.holding, true);
  const b = textWatcher();
  assert.equal(b.push('  {"name": "x"'), "  ");
  assert.equal(b.holding, true);
  const c = textWatcher();
  assert.equal(c.push("["), "");
  assert.equal(c.push(' {"name"'), "");
  assert.equal(c.holding, true);
  const d = textWatcher();
  assert.equal(d.push("["), "");
  assert.equal(d.push("1] a footnote"), "[1] a footnote"); // a list, not a call: flows
  assert.equal(d.holding, false);
});

test("guardFetch: Ollama stream, a rejected Hermes call in streamed text never reaches the client; the prose does", async () => {
  const text = [
    "I'll search. <tool",
    '_call>{"name": "shell", ',
    '"arguments": {"cmd": "rm -rf /"}}</tool_call>',
  ];
  const res = await post("/api/chat", { tools: TOOLS_OPENAI }, { ndjson: ollamaStream(text) });
  const out = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  const content = out.map((o) => o.message?.content ?? "").join("");
  assert.doesNotMatch(content, /tool_call|rm -rf/);
  assert.match(content, /^I'll search\. [\s\S]*shell/);
  assert.equal(out[out.length - 1].done, true);
  assert.equal(seen[0].verdict.allowed, false);
  assert.equal(seen[0].changed, true);
  assert.equal(seen[0].calls![0].name, "shell");
});

test("guardFetch: Ollama stream, text held as a written call beside a rejected native call reaches the client", async () => {
  // Beside native calls a call written into the text is not judged: the text stays, as in a whole answer.
  const text = ['Sure. <tool_call>{"name": "search", ', '"arguments": {"query": "cats"}}</tool_call', ">"];
  const lines = ollamaStream(text.slice(0, 2), [{ name: "shell", args: {} }]) as { message: object }[];
  // The last piece of the text comes with the calls, in their chunk.
  lines[2] = { ...lines[2], message: { ...lines[2].message, content: ">" } };
  const res = await post("/api/chat", { tools: TOOLS_OPENAI }, { ndjson: lines });
  const out = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  const content = out.map((o) => o.message?.content ?? "").join("");
  assert.ok(content.startsWith(text.join("")), content);
  assert.match(content, /shell/);
  assert.equal(out.some((o) => o.message?.tool_calls), false);
  assert.equal(out.at(-1).done, true);
  assert.deepEqual(seen[0].calls!.map((c) => c.name), ["shell"]);
});

test("guardFetch: OpenAI chat stream, an allowed text call arrives whole (same text, re-chunked)", async () => {
  const text = ["Sure.\n<tool_call>", '{"name": "search", "arguments"', ': {"query": "cats"}}</tool_call>'];
  const res = await post("/v1/chat/completions", { tools: TOOLS_OPENAI, stream: true }, {
    sse: chatStream(text),
  });
  const events = sseData(await res.text());
  const content = events.map((e) => (e.choices as { delta: { content?: string } }[])[0]?.delta?.content ?? "")
    .join("");
  assert.equal(content, text.join(""));
  assert.equal(seen[0].verdict.allowed, true);
  assert.equal(seen[0].changed, false);
});

test("guardFetch: streamed text without markers arrives byte for byte", async () => {
  const reply: FakeReply = { sse: chatStream(["Here is code:\n```python\n", "print(1)\n```\n", "Done."]) };
  const res = await post("/v1/chat/completions", { stream: true }, reply);
  assert.equal(await res.text(), wire(reply));
});

test("guardFetch: extract false leaves text calls in streams alone", async () => {
  const g = guardFetch(fetch, { extract: false });
  next = { ndjson: ollamaStream(['<tool_call>{"name": "shell", "arguments": {}}</tool_call>']) };
  const res = await g(`${server.url}/api/chat`, {
    method: "POST",
    body: JSON.stringify({ tools: TOOLS_OPENAI }),
  });
  assert.equal(await res.text(), wire(next));
});

test("textWatcher: every format's marker starts a hold (DeepSeek, Kimi, MiniMax, Granite), not only the first five", () => {
  for (
    const marker of [
      "<｜tool▁calls▁begin｜>",
      "<|tool_calls_section_begin|>",
      "<minimax:tool_call>",
      "<|tool_call|>",
    ]
  ) {
    const w = textWatcher();
    assert.equal(w.push(`Let me check. ${marker}`), "Let me check. ", marker);
    assert.equal(w.holding, true, marker);
  }
});

test("textWatcher: a marker quoted in prose is released once it can no longer be a call", () => {
  const w = textWatcher();
  assert.equal(w.push("Models write <tool_call> tags; "), "Models write ");
  assert.equal(w.holding, true);
  w.push("this sentence only talks about them and goes on long enough to settle the question for good.");
  assert.equal(w.couldBeCall(), false);
});

test("textWatcher: a piece ending inside a word is not held for a word-like marker (to=, functools)", () => {
  const w = textWatcher();
  assert.equal(w.push("The best"), "The best");
  assert.equal(w.push(" of"), " of");
  assert.equal(w.push(" t"), " "); // may begin "to=" (gpt-oss harmony): held one piece
  assert.equal(w.push("hem."), "them.");
});

test("ToolPositions: a call at each of a million positions is renumbered and placed without overflowing the stack", () => {
  // A Responses or Anthropic stream may open a call at every position it holds within maxResponseBytes.
  const positions = new ToolPositions();
  const n = 1_100_000;
  for (let i = n - 1; i >= 0; i--) positions.add(2 * i + 1); // the odd positions, added out of order
  positions.add(7); // again: no change
  assert.equal(positions.replacementAt(0), 1);
  assert.equal(positions.replacementAt(5), 5);
  assert.deepEqual([0, 2, 4, 10, 2 * n].map((i) => positions.renumber(i)), [0, 1, 2, 5, n]);
  assert.equal(new ToolPositions().replacementAt(3), 3);
});

test("joinsEarlierWords: a retry's first text joins the client's words only after words, before words, unscored", () => {
  // The one rule the gate's blank line before a retry's text follows: the chunk of its own (Chat), a place's
  // lead (Cohere's block) and Cohere's tool plan alike.
  const chat = DIALECTS.openai_chat.router().text!;
  const cohere = DIALECTS.cohere.router().text!;
  const runsOn = (said: string) => {
    const flow = new StreamFlow();
    if (said !== "") flow.sawText(said);
    return flow.runsOn().includes(0);
  };
  const delta = (content: string, logprobs?: unknown) => ({
    choices: [{ index: 0, delta: { content }, ...(logprobs === undefined ? {} : { logprobs }) }],
  });
  const plan = (tool_plan: string, logprobs?: unknown) => ({
    type: "tool-plan-delta",
    delta: { message: { tool_plan } },
    ...(logprobs === undefined ? {} : { logprobs }),
  });
  const cases: [string, string, Record<string, unknown>, typeof chat, boolean][] = [
    ["Let me look.", "Again.", delta("Again."), chat, true],
    ["Let me look. ", "Again.", delta("Again."), chat, false],
    ["Let me look.\n", "Again.", delta("Again."), chat, false],
    ["Let me look.", " Again.", delta(" Again."), chat, false],
    ["Let me look.", "\n\nAgain.", delta("\n\nAgain."), chat, false],
    ["", "Again.", delta("Again."), chat, false],
    ["Let me look.", "", delta(""), chat, false],
    ["Let me look.", "Again.", delta("Again.", { content: [] }), chat, false],
    ["I will look up Oslo.", "I will look up Bergen.", plan("I will look up Bergen."), cohere, true],
    [
      "I will look up Oslo.",
      "I will look up Bergen.",
      plan("I will look up Bergen.", { token_ids: [1] }),
      cohere,
      false,
    ],
    ["I will look up Oslo.\n", "I will look up Bergen.", plan("I will look up Bergen."), cohere, false],
  ];
  for (const [before, text, event, frames, joins] of cases) {
    assert.equal(
      joinsEarlierWords(frames, { text, runsOn: runsOn(before), event }),
      joins,
      JSON.stringify([before, text, event]),
    );
  }
  // The answer the text is part of is the one whose scores count.
  const two = {
    choices: [{ index: 0, delta: { content: "A." }, logprobs: { content: [] } }, {
      index: 1,
      delta: { content: "B." },
    }],
  };
  assert.equal(joinsEarlierWords(chat, { text: "B.", runsOn: true, event: two, answer: 1 }), true);
  assert.equal(joinsEarlierWords(chat, { text: "A.", runsOn: true, event: two, answer: 0 }), false);
});
