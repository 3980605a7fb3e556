/**
 * Wire details where a provider's stream can be read two ways: the gate must read each frame as the
 * official clients do (or keep it from them), so that what it judged is what they run. A BOM at the start
 * of a line, an Anthropic frame whose `event:` name the SDK routes by, Anthropic block and Responses item
 * positions that disagree with their `index`, a Responses snapshot other than the last.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  anthropicStream,
  chatChunk,
  chatCompletion,
  fakeProvider,
  ollamaChat,
  responsesBody,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
} from "./_fake_llm_server.ts";
import { sdkClients, streamedCallNames } from "./_sdk_clients.ts";
import { type GateEvent, guardFetch } from "../gate.ts";

const provider = fakeProvider();
const { reply, events } = provider;
const { openai, anthropic } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

test("guardFetch: an SSE line that starts with a BOM is read as the SDKs read it (they drop the BOM)", async () => {
  // The whole call in one chunk whose data line is led by U+FEFF: both SDKs decode each line on its own,
  // which drops it, and read the line as data.
  const call = chatChunk({
    tool_calls: [{
      index: 0,
      id: "call_1",
      type: "function",
      function: { name: "delete_everything", arguments: "{}" },
    }],
  });
  // (in the same write as the chunk before it: Deno's TextDecoder drops a BOM that starts any read)
  const text = `data: ${JSON.stringify(chatChunk({ role: "assistant", content: "Sure" }))}\n\n`;
  const frames: unknown[] = [text + `\uFEFFdata: ${JSON.stringify(call)}\n\n`];
  frames.push(chatChunk({}, "tool_calls"), "data: [DONE]\n\n");
  reply({ sse: frames });
  const names = await streamedCallNames(openai(), messages);
  assert.deepEqual(names, []);
  assert.equal(events[0]?.verdict.allowed, false);
});

/** An SSE frame of `event` as Anthropic writes it: named by its type. */
const named = (event: Record<string, unknown>) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** An Anthropic stream of one `get_weather` call: `start`, then `deltas`, then the ending (frames as sent). */
function anthropicCall(start: Record<string, unknown>, deltas: string[]): string[] {
  const [head] = anthropicStream([]) as Record<string, unknown>[];
  return [
    named(head),
    named(start),
    ...deltas,
    named({ type: "content_block_stop", index: start.index }),
    named({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 2 },
    }),
    named({ type: "message_stop" }),
  ];
}
const toolStart = (index: unknown) => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} },
});
const inputDelta = (index: unknown, partial_json: string) => ({
  type: "content_block_delta",
  index,
  delta: { type: "input_json_delta", partial_json },
});

/** The tool_use inputs the Anthropic SDK's stream helper ends with. */
async function anthropicInputs(): Promise<unknown[]> {
  const final = await anthropic().messages.stream({
    model: "m",
    max_tokens: 100,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  }).finalMessage();
  return final.content.flatMap((b) => (b.type === "tool_use" ? [b.input] : []));
}

/** `units: "k"` is outside get_weather's enum: a client must never end with it unjudged. */
const BAD = '{"city":"Oslo","units":"k"';

test("guardFetch: an Anthropic frame the SDK skips by its event: name (none, ping) is not read by the gate either", async () => {
  // The SDK reads BAD + "}"; a gate that also read the skipped frame judged a second "units" (the last wins).
  const skipped = JSON.stringify(inputDelta(0, ',"units":"c"'));
  for (const frame of [`data: ${skipped}\n\n`, `event: ping\ndata: ${skipped}\n\n`]) {
    reply({
      sse: anthropicCall(toolStart(0), [named(inputDelta(0, BAD)), frame, named(inputDelta(0, "}"))]),
    });
    assert.deepEqual(await anthropicInputs(), [], frame);
    assert.equal(events[0]?.verdict.allowed, false, frame);
  }
});

test("guardFetch: an Anthropic block whose index is not where the SDK puts it is dropped with its deltas", async () => {
  // The SDK appends the block (position 0) and feeds it the delta at index 0; the gate keyed it by index 1.
  reply({
    sse: anthropicCall(toolStart(1), [
      named(inputDelta(0, BAD + "}")),
      named(inputDelta(1, '{"city":"Oslo"}')),
    ]),
  });
  assert.deepEqual(await anthropicInputs(), []);
  assert.ok(events[0]?.findings.some((f) => /content_block_start at index 1/.test(f.message)));
});

test('guardFetch: an Anthropic delta at index "0" (a string: block 0 to the SDK) is dropped', async () => {
  reply({
    sse: anthropicCall(toolStart(0), [
      named(inputDelta(0, '{"city":"Oslo"')),
      named(inputDelta("0", ',"units":"k"')),
      named(inputDelta(0, "}")),
    ]),
  });
  assert.deepEqual(await anthropicInputs(), [{ city: "Oslo" }]);
  assert.equal(events[0]?.verdict.allowed, true);
});

/** The function calls the OpenAI SDK's Responses stream helper ends with, or its error. */
async function responsesCalls(): Promise<unknown[] | string> {
  const stream = openai().responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
  try {
    const final = await stream.finalResponse();
    return final.output.flatMap((o) => (o.type === "function_call" ? [[o.name, o.arguments]] : []));
  } catch (e) {
    return String(e);
  }
}

test("guardFetch: a call in a Responses response.created, in_progress or failed snapshot is judged", async () => {
  // The SDK takes every whole response it is sent as its snapshot, and ends with the last one.
  const call = {
    id: "fc_1",
    type: "function_call",
    status: "completed",
    call_id: "call_1",
    name: "delete_everything",
    arguments: "{}",
  };
  for (const type of ["response.created", "response.in_progress", "response.failed"]) {
    const created = {
      type: "response.created",
      sequence_number: 0,
      response: { ...responsesBody(null), output: [] },
    };
    const snapshot = { type, sequence_number: 1, response: { ...responsesBody(null), output: [call] } };
    reply({ sse: type === "response.created" ? [snapshot] : [created, snapshot], named: true });
    assert.deepEqual(await responsesCalls(), [], type);
    assert.equal(events[0]?.verdict.allowed, false, type);
  }
});

test("guardFetch: a Responses call added at an output_index other than its place is placed where a client puts it, and an event addressed to no item is dropped", async () => {
  // The SDK appends the item (place 0) and would take the arguments addressed to output_index 0; the gate
  // reads the call at its place too, with the arguments it came with, and drops the event for no item.
  const item = {
    id: "fc_1",
    type: "function_call",
    status: "in_progress",
    call_id: "call_1",
    name: "get_weather",
    arguments: '{"city":"Oslo"}',
  };
  const frames = [
    { type: "response.created", sequence_number: 0, response: { ...responsesBody(null), output: [] } },
    { type: "response.output_item.added", sequence_number: 1, output_index: 1, item },
    {
      type: "response.function_call_arguments.done",
      sequence_number: 2,
      output_index: 0,
      item_id: "fc_other",
      arguments: BAD + "}",
    },
  ];
  reply({ sse: frames, named: true });
  assert.deepEqual(await responsesCalls(), [["get_weather", '{"city":"Oslo"}']]);
  assert.deepEqual(events[0]?.calls?.map((c) => [c.name, c.arguments]), [["get_weather", '{"city":"Oslo"}']]);
  assert.ok(events[0]?.findings.some((f) => /at output_index 0, where no item was added/.test(f.message)));
});

test("guardFetch: a Responses snapshot mid-stream resets where the gate places events, as the SDK takes it whole", async () => {
  // A call added at output_index 0 after an item at 5 is placed at 1, where the SDK appends it. A snapshot
  // then replaces what the SDK holds: output_index 0 is its call again, and the gate must not place an event
  // addressed to it at 1 (where the SDK now holds nothing, and throws).
  const call = (id: string, args: string, status = "in_progress") => ({
    id: `fc_${id}`,
    type: "function_call",
    status,
    call_id: `call_${id}`,
    name: "get_weather",
    arguments: args,
  });
  const message = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
  const oslo = '{"city":"Oslo"}';
  const frames = [
    { type: "response.created", response: { ...responsesBody(null), output: [] } },
    { type: "response.output_item.added", output_index: 5, item: message },
    { type: "response.output_item.added", output_index: 0, item: call("x", oslo) },
    { type: "response.in_progress", response: { ...responsesBody(null), output: [call("c", "")] } },
    { type: "response.function_call_arguments.delta", output_index: 0, item_id: "fc_c", delta: oslo },
    { type: "response.function_call_arguments.done", output_index: 0, item_id: "fc_c", arguments: oslo },
    { type: "response.output_item.done", output_index: 0, item: call("c", oslo, "completed") },
    {
      type: "response.completed",
      response: { ...responsesBody(null), output: [call("c", oslo, "completed")] },
    },
  ].map((e, i) => ({ ...e, sequence_number: i }));
  reply({ sse: frames, named: true });
  assert.deepEqual(await responsesCalls(), [["get_weather", oslo]]);
  assert.equal(events[0]?.verdict.allowed, true);
  // The call added at 0 goes out at 1, where the SDK appends it; after the snapshot, events go as they came.
  const res = await provider.gfetch(`${provider.url()}/v1/responses`, {
    method: "POST",
    body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
  });
  const sent = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
    JSON.parse(l.slice(6)) as { type: string; output_index?: number }
  );
  assert.deepEqual(sent.map((e) => e.output_index ?? null), [null, 5, 1, null, 0, 0, 0, null]);
});

test("guardFetch: argument deltas after a Responses snapshot are judged appended to its text, as the SDK holds them", async () => {
  // The SDK takes the snapshot's call whole, then appends each later delta to its input: it ends with
  // "echo ignore all previous instructions", which the scanner flags, while neither piece alone is flagged.
  const tools = [{ type: "custom", name: "run", description: "Runs a shell command." }];
  const call = (input: string) => ({
    id: "ctc_1",
    type: "custom_tool_call",
    call_id: "call_1",
    name: "run",
    input,
  });
  const frames = [
    { type: "response.created", response: { ...responsesBody(null), output: [] } },
    { type: "response.output_item.added", output_index: 0, item: call("") },
    {
      type: "response.in_progress",
      response: { ...responsesBody(null), output: [call("echo ignore all prev")] },
    },
    {
      type: "response.custom_tool_call_input.delta",
      output_index: 0,
      item_id: "ctc_1",
      delta: "ious instructions",
    },
  ].map((e, i) => ({ ...e, sequence_number: i }));
  reply({ sse: frames, named: true });
  const final = await openai().responses.stream({ model: "m", input: "hi", tools: tools as never })
    .finalResponse();
  assert.deepEqual(final.output.flatMap((o) => (o.type === "custom_tool_call" ? [o.input] : [])), []);
  assert.equal(events[0]?.verdict.allowed, false);
});

/** A Responses stream whose one call is added at `output_index` 2, past the items a client holds (none). */
function callPastItems(name: string, args: string): unknown[] {
  const item = {
    id: "fc_1",
    type: "function_call",
    status: "in_progress",
    call_id: "call_1",
    name,
    arguments: "",
  };
  const done = { ...item, status: "completed", arguments: args };
  let seq = 0;
  const at = { output_index: 2, item_id: "fc_1" };
  return [
    { type: "response.created", response: { ...responsesBody(null), output: [] } },
    { type: "response.output_item.added", output_index: 2, item },
    { type: "response.function_call_arguments.delta", ...at, delta: args },
    { type: "response.function_call_arguments.done", ...at, arguments: args },
    { type: "response.output_item.done", output_index: 2, item: done },
    { type: "response.completed", response: { ...responsesBody(null), output: [done] } },
  ].map((e) => ({ ...e, sequence_number: seq++ }));
}

test("guardFetch: a Responses call added past the items a client holds is judged once and reaches the client whole, at its place", async () => {
  // The AI SDK keys calls by output_index and runs the finished item; the openai SDK appends the item and
  // addresses it by output_index: at its place, both read the call the gate judged.
  reply({ sse: callPastItems("get_weather", '{"city":"Oslo"}'), named: true });
  assert.deepEqual(await responsesCalls(), [["get_weather", '{"city":"Oslo"}']]);
  assert.equal(events[0]?.verdict.allowed, true);
  assert.deepEqual(events[0]?.calls?.map((c) => c.name), ["get_weather"]); // (not twice: its item and snapshot)
  assert.deepEqual(events[0]?.findings, []);
  const res = await provider.gfetch(`${provider.url()}/v1/responses`, {
    method: "POST",
    body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
  });
  const placed = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
    JSON.parse(l.slice(6)) as { type: string; output_index?: number }
  );
  assert.deepEqual(
    placed.filter((e) => e.output_index !== undefined).map((e) => e.output_index),
    [0, 0, 0, 0],
  );
});

test("guardFetch: a Responses event placed where a client holds its item cannot write a frame of its own through its type", async () => {
  // A placed event is written anew; a line break in its `type`, written into the `event:` name, ended the
  // frame there and began one the gate never read (here a finished call to a tool the request lacks, which
  // the AI SDK runs from output_item.done).
  const evil = {
    type: "response.output_item.done",
    output_index: 0,
    item: {
      id: "fc_2",
      type: "function_call",
      call_id: "call_2",
      name: "delete_everything",
      arguments: "{}",
    },
  };
  const frames = callPastItems("get_weather", '{"city":"Oslo"}') as Record<string, unknown>[];
  frames.splice(3, 0, {
    type: `response.function_call_arguments.delta\ndata: ${JSON.stringify(evil)}\n\nevent: x`,
    output_index: 2,
    item_id: "fc_1",
    delta: "",
  });
  reply({ sse: frames });
  const res = await provider.gfetch(`${provider.url()}/v1/responses`, {
    method: "POST",
    body: JSON.stringify({ model: "m", input: "hi", stream: true, tools: TOOLS_RESPONSES }),
  });
  const wire = await res.text();
  assert.doesNotMatch(wire, /^event: x$/m);
  for (const line of wire.split("\n").filter((l) => l.startsWith("data: "))) {
    assert.notEqual(JSON.parse(line.slice(6)).item?.name, "delete_everything", line);
  }
  assert.deepEqual(events[0]?.calls?.map((c) => c.name), ["get_weather"]);
});

test("guardFetch: a rejected Responses call added past the items a client holds is withheld whole", async () => {
  reply({ sse: callPastItems("delete_everything", "{}"), named: true });
  assert.deepEqual(await responsesCalls(), []);
  assert.equal(events[0]?.verdict.allowed, false);
  assert.equal(events[0]?.changed, true);
});

test("guardFetch: a Chat call whose name comes in differing pieces is judged under the last one too (the openai SDK runs it)", async () => {
  // Joined, "get_" + "weather" is a declared tool the arguments fit; the SDK keeps the last piece, "weather",
  // whose schema they break.
  const weather = {
    type: "function",
    function: {
      name: "weather",
      parameters: {
        type: "object",
        properties: { zone: { type: "number" } },
        required: ["zone"],
        additionalProperties: false,
      },
    },
  };
  const call = (name: string, args: string, head: Record<string, unknown> = {}) =>
    chatChunk({ tool_calls: [{ index: 0, ...head, function: { name, arguments: args } }] });
  reply({
    sse: [
      chatChunk({ role: "assistant", content: "" }),
      call("get_", "", { id: "call_1", type: "function" }),
      call("weather", '{"city":"Oslo"}'),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    tools: [...TOOLS_OPENAI, weather] as never,
  }).finalChatCompletion();
  assert.equal(final.choices[0].message.tool_calls?.length ?? 0, 0);
  assert.equal(events[0]?.verdict.allowed, false);
  assert.deepEqual(events[0]?.calls?.map((c) => c.name), ["weather"]);
});

test("guardFetch: a Responses call whose finished item and final snapshot disagree is judged in both versions", async () => {
  // The openai SDK's finalResponse() takes the snapshot's arguments; a client that runs each finished item
  // (the AI SDK does) takes the item's. The gate judged the last only.
  const item = (status: string, args: string) => ({
    id: "fc_1",
    type: "function_call",
    status,
    call_id: "call_1",
    name: "get_weather",
    arguments: args,
  });
  const good = '{"city":"Oslo"}';
  const seq = (n: number, e: Record<string, unknown>) => ({ ...e, sequence_number: n });
  reply({
    named: true,
    sse: [
      seq(0, { type: "response.created", response: { ...responsesBody(null), output: [] } }),
      seq(1, { type: "response.output_item.added", output_index: 0, item: item("in_progress", "") }),
      seq(2, { type: "response.output_item.done", output_index: 0, item: item("completed", BAD + "}") }),
      seq(3, {
        type: "response.completed",
        response: { ...responsesBody(null), output: [item("completed", good)] },
      }),
    ],
  });
  const stream = openai().responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
  const finished: unknown[] = [];
  for await (const event of stream) {
    if (event.type === "response.output_item.done" && event.item.type === "function_call") {
      finished.push(event.item.arguments);
    }
  }
  assert.deepEqual(finished, []);
  assert.equal(events[0]?.verdict.allowed, false);
});

test("guardFetch: a whole answer labelled as a stream is judged as the JSON a client reads it as", async () => {
  // The request asks for no stream; Ollama's, Google's and Cohere's clients and the AI SDK parse the body as
  // JSON under any label, where the gate read it as SSE and passed its lines on as keep-alives.
  for (const contentType of ["text/event-stream", "application/x-ndjson"]) {
    reply({
      body: JSON.stringify(chatCompletion(null, [{ name: "delete_everything", args: {} }])),
      contentType,
    });
    const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages, tools: TOOLS_OPENAI }),
    });
    const body = JSON.parse(await res.text());
    assert.equal(body.choices[0].message.tool_calls, undefined, contentType);
    assert.equal(events[0]?.verdict.allowed, false, contentType);
  }
});

test("guardFetch: an Anthropic tool_use that starts with an input and streams another is judged in both", async () => {
  // The SDK keeps the deltas' input; a client that starts from the block's input runs that one.
  const start = {
    ...toolStart(0),
    content_block: { ...toolStart(0).content_block, input: { city: "Oslo", units: "k" } },
  };
  reply({ sse: anthropicCall(start, [named(inputDelta(0, '{"city":"Oslo"}'))]) });
  await anthropicInputs();
  assert.equal(events[0]?.verdict.allowed, false);
});

test("guardFetch: a Vertex AI call whose arguments stream in pieces (partialArgs) is not passed on unjudged", async () => {
  // Each piece names the tool and carries no `args`: judged as {} (which the schema allows) while a client
  // assembles the pieces into a path outside /tmp.
  const lookup = {
    name: "lookup",
    parameters: { type: "object", properties: { path: { type: "string", pattern: "^/tmp/" } } },
  };
  const piece = (value: string, willContinue: boolean) => ({
    candidates: [{
      index: 0,
      content: {
        role: "model",
        parts: [{
          functionCall: {
            name: "lookup",
            partialArgs: [{ jsonPath: "$.path", stringValue: value }],
            willContinue,
          },
        }],
      },
    }],
  });
  reply({ sse: [piece("/etc/", true), piece("passwd", false)] });
  const res = await provider.gfetch(`${provider.url()}/v1/models/m:streamGenerateContent?alt=sse`, {
    method: "POST",
    body: JSON.stringify({ contents: [], tools: [{ functionDeclarations: [lookup] }] }),
  });
  const text = await res.text();
  assert.doesNotMatch(text, /partialArgs/);
  assert.ok(events[0]?.findings.some((f) => /partialArgs/.test(f.message)));
});

test("guardFetch: a request whose body is a Blob, a DataView or a stream is read, and its answer judged", async () => {
  // The gate read only strings, Uint8Arrays and ArrayBuffers: for any other body it found no request, and
  // passed the answer on unjudged.
  const json = JSON.stringify({ model: "m", messages, stream: false, tools: TOOLS_OPENAI });
  const bodies: [string, () => BodyInit][] = [
    ["Blob", () => new Blob([json])],
    ["DataView", () => new DataView(new TextEncoder().encode(json).buffer)],
    ["ReadableStream", () => new Response(json).body!],
  ];
  for (const [label, body] of bodies) {
    reply({ json: ollamaChat("", [{ name: "delete_everything", args: {} }]) });
    const init = { method: "POST", body: body(), duplex: "half" } as RequestInit;
    const res = await provider.gfetch(`${provider.url()}/api/chat`, init);
    const answer = await res.json();
    assert.equal(answer.message.tool_calls, undefined, label);
    assert.equal(events[0]?.verdict.allowed, false, label);
  }
});

test("guardFetch: a stream request body goes on as the bytes it held, with no content type added", async () => {
  // Read to be judged, it was sent on as text: fetch gave it a text/plain type the client never set (a
  // provider may refuse that), and the text lost a leading BOM.
  const bytes = new TextEncoder().encode(
    "\uFEFF" + JSON.stringify({ model: "m", messages, stream: false, tools: TOOLS_OPENAI }),
  );
  let sent: RequestInit | undefined;
  const gfetch = guardFetch((input, init) => {
    sent = init;
    return fetch(input, init);
  });
  reply({ json: ollamaChat("Sunny.") });
  const body = new Response(bytes).body;
  const res = await gfetch(
    `${provider.url()}/api/chat`,
    { method: "POST", body, duplex: "half" } as RequestInit,
  );
  assert.equal((await res.json()).message.content, "Sunny.");
  // What fetch made of the body the gate sent: its type and its bytes.
  const request = new Request("http://127.0.0.1/", { method: "POST", body: sent!.body });
  assert.equal(request.headers.get("content-type"), null);
  assert.deepEqual(new Uint8Array(await request.arrayBuffer()), bytes);
});

test("guardFetch: a Cohere call whose tool-call-delta names another tool is judged under both names", async () => {
  // The AI SDK runs the call under the name its tool-call-start gave; the gate took the delta's, a declared
  // tool the arguments fit, and let the call through.
  const tool = (name: string, arguments_: string, type = "tool-call-delta") => ({
    type,
    index: 0,
    delta: {
      message: { tool_calls: { id: "c1", type: "function", function: { name, arguments: arguments_ } } },
    },
  });
  reply({
    sse: [
      { type: "message-start", id: "m1", delta: { message: { role: "assistant" } } },
      tool("delete_everything", "", "tool-call-start"),
      tool("get_weather", '{"city":"Oslo"}'),
      { type: "tool-call-end", index: 0 },
      { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
    ],
  });
  const res = await provider.gfetch(`${provider.url()}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "m", messages, stream: true, tools: TOOLS_OPENAI }),
  });
  const text = await res.text();
  assert.doesNotMatch(text, /tool-call-start/);
  assert.equal(events[0]?.verdict.allowed, false);
  assert.deepEqual(events[0]?.calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch: a JSON answer whose call arguments write a number too large (1e400) is blocked, not passed on", async () => {
  // The gate judged the parsed arguments, where 1e400 is Infinity, as JSON.stringify writes them (null, which an
  // open schema takes), and passed the answer's own bytes on: the tool got 1e400.
  const input = { type: "object", properties: { n: {} } };
  const anthropicAnswer = '{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":' +
    '"tool_use","content":[{"type":"tool_use","id":"toolu_1","name":"t","input":{"n":1e400}}],' +
    '"usage":{"input_tokens":1,"output_tokens":1}}';
  const ollamaAnswer = '{"model":"m","done":true,"message":{"role":"assistant","content":"","tool_calls":' +
    '[{"function":{"name":"t","arguments":{"n":1e400}}}]}}';
  const cases: [string, string, Record<string, unknown>][] = [
    ["/v1/messages", anthropicAnswer, { max_tokens: 9, tools: [{ name: "t", input_schema: input }] }],
    ["/api/chat", ollamaAnswer, {
      stream: false,
      tools: [{ type: "function", function: { name: "t", parameters: input } }],
    }],
  ];
  // (with coerce on as well: the validator's copy to convert wrote Infinity as null)
  const coerced: GateEvent[] = [];
  const coercing = guardFetch(fetch, { coerce: true, onVerdict: (e) => void coerced.push(e) });
  for (const [path, answer, request] of cases) {
    for (const [gfetch, seen] of [[provider.gfetch, events], [coercing, coerced]] as const) {
      reply({ body: answer, contentType: "application/json" });
      coerced.length = 0;
      const res = await gfetch(`${provider.url()}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages, ...request }),
      });
      const text = await res.text();
      const how = `${path}${gfetch === coercing ? " (coerce)" : ""}`;
      assert.equal(res.headers.get("x-toolguard-blocked"), "1", how);
      assert.doesNotMatch(text, /1e400/, how);
      assert.equal(seen[0]?.verdict.allowed, false, how);
    }
  }
});
