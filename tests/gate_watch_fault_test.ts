// The stream gate fails closed when its watch over the text throws (a bug in it: no model output is known to
// make it): the rest of that answer's text is withheld and the stream ends as a rejected turn's does, with
// the reason and a proper finish, in every dialect. Let on unwatched, a call written after that point
// reached the client. Driven through the official clients against a local server.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { watchFault } from "../_gate/text_watch.ts";
import {
  anthropicStream,
  chatChunk,
  chatStream,
  cohereBlockTexts,
  fakeProvider,
  ollamaStream,
  responsesStream,
  sseData,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
  VALID_CALL,
} from "./_fake_llm_server.ts";
import { guardFetch } from "../gate.ts";
import type { Validator } from "../validate.ts";
import { readAnthropic, readChatStream, sdkClients } from "./_sdk_clients.ts";

const provider = fakeProvider();
const { openai, anthropic, ollama } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** A call written after a marker, rejected (`units` is outside its enum), in pieces; the watch throws at the marker. */
const PIECES = ["Sure. ", "[TOOL_CALLS]", 'get_weather{"city": "Oslo", ', '"units": "k"}'];

/** Makes the watch throw once, on the piece that carries the marker. */
function faultAtMarker(): void {
  let thrown = false;
  watchFault.push = (text) => {
    if (!thrown && text.includes("[TOOL_CALLS]")) {
      thrown = true;
      throw new Error("a bug in the watch");
    }
  };
}

after(() => {
  watchFault.push = undefined;
});

/** What the client must read: the prose before the throw, then the reason in place of the rest. */
function assertWithheld(text: string): void {
  assert.match(text, /^Sure\. \n\ntoolguard could not watch the streamed text .*a bug in the watch$/s);
  assert.doesNotMatch(text, /get_weather|units/);
}

test("guardFetch Chat stream: a watch that throws withholds the rest of the text and ends the answer", async () => {
  // (a server's finish for tool calls too: the text withheld, the answer holds no call)
  for (const stop of ["stop", "tool_calls"]) {
    faultAtMarker();
    provider.reply({ sse: [...chatStream(PIECES).slice(0, -2), chatChunk({}, stop), "data: [DONE]\n\n"] });
    const { text, finish } = await readChatStream(openai(), messages);
    assertWithheld(text);
    assert.equal(finish, "stop", stop);
  }
});

test("guardFetch Anthropic stream: a watch that throws withholds the rest of the text and ends the message", async () => {
  // (a server's stop for tool use too: the text withheld, the message holds no call)
  for (const stop of ["end_turn", "tool_use"]) {
    faultAtMarker();
    const frames = (anthropicStream(PIECES) as Record<string, unknown>[]).map((e) =>
      e.type === "message_delta" ? { ...e, delta: { stop_reason: stop, stop_sequence: null } } : e
    );
    provider.reply({ sse: frames, named: true });
    const { streamed, final, text } = await readAnthropic(anthropic(), messages);
    assertWithheld(streamed);
    assert.equal(text, streamed);
    assert.equal(final.stop_reason, "end_turn", stop);
  }
});

test("guardFetch Responses stream: a watch that throws withholds the rest of the text and completes the response", async () => {
  faultAtMarker();
  provider.reply({ sse: responsesStream(PIECES), named: true });
  const stream = openai().responses.stream({
    model: "m",
    input: "Weather in Oslo?",
    tools: TOOLS_RESPONSES as never,
  });
  let streamed = "";
  for await (const e of stream) if (e.type === "response.output_text.delta") streamed += e.delta;
  const final = await stream.finalResponse();
  assertWithheld(streamed);
  assert.equal(final.output_text, streamed);
  assert.equal(final.status, "completed");
});

test("guardFetch Ollama stream: a watch that throws withholds the rest of the text and ends with done", async () => {
  faultAtMarker();
  provider.reply({ ndjson: ollamaStream(PIECES) });
  const stream = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
  let text = "";
  let done = false;
  for await (const part of stream) {
    text += part.message.content;
    done ||= part.done;
  }
  assertWithheld(text);
  assert.equal(done, true);
});

test("guardFetch Gemini stream: a watch that throws withholds the rest of the text and keeps the finish", async () => {
  faultAtMarker();
  const chunk = (text: string, extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...extra }],
  });
  const frames = PIECES.map((p, i) => chunk(p, i === PIECES.length - 1 ? { finishReason: "STOP" } : {}));
  provider.reply({ sse: frames });
  const tools = [{ functionDeclarations: TOOLS_OPENAI.map((t) => t.function) }];
  const res = await provider.gfetch(`${provider.url()}/v1beta/models/g:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [], tools }),
  });
  const events = sseData(await res.text());
  const candidates = events.map((e) => e.candidates[0]);
  assertWithheld(
    candidates.flatMap((c) => c.content?.parts ?? []).map((p: { text?: string }) => p.text ?? "").join(""),
  );
  assert.equal(candidates[candidates.length - 1].finishReason, "STOP");
});

test("guardFetch Anthropic stream: a watch that throws on a block's first text puts the reason in that block", async () => {
  // The block's start waits for what follows it (see `AnthropicStream.route`); the reason written in its
  // place goes after it, into the block the client then has.
  faultAtMarker();
  provider.reply({ sse: anthropicStream(PIECES.slice(1)), named: true });
  const { streamed, final } = await readAnthropic(anthropic(), messages);
  assert.match(streamed, /^toolguard could not watch the streamed text .*a bug in the watch$/s);
  assert.deepEqual(final.content.map((b) => b.type === "text" ? b.text : b.type), [streamed]);
  assert.equal(final.stop_reason, "end_turn");
});

/** A call the judge lets pass, sent in the calls' own fields after the text the watch throws on. */
const NATIVE = { name: "get_weather", args: { city: "Oslo" } };
/** A Chat chunk cut short (not JSON) that names `tool_calls`: it may have carried a call. */
const CHAT_CUT = `data: ${
  JSON.stringify(chatChunk({ tool_calls: [{ index: 1, id: "B", function: { name: "get_weather" } }] })).slice(
    0,
    -1,
  )
}\n\n`;
/** An OpenAI Responses frame cut short (not JSON) that adds a call. */
const RESPONSES_CUT = `data: ${
  JSON.stringify({
    type: "response.output_item.added",
    output_index: 5,
    item: { id: "fc_9", type: "function_call", call_id: "c9", name: "get_weather", arguments: "" },
  }).slice(0, -2)
}\n\n`;
/** `frames` with `cut` put ahead of their last `ending` frames. */
const cutAhead = (frames: unknown[], cut: string | undefined, ending: number) =>
  cut === undefined ? frames : [...frames.slice(0, -ending), cut, ...frames.slice(-ending)];
/** The reason for a call dropped as malformed, ahead of the watch's (see `assertWithheld`). */
const DROPPED =
  /^Sure\. \n\ntoolguard dropped this turn's tool call: its stream events were malformed [^\n]*needed\.\n\n/;

/** The openai SDK's final response to a Responses stream, and the sequence numbers of the events it read. */
async function readResponses() {
  const stream = openai().responses.stream({
    model: "m",
    input: "Weather in Oslo?",
    tools: TOOLS_RESPONSES as never,
  });
  const numbers: number[] = [];
  stream.on("event", (e) => numbers.push(e.sequence_number));
  return { final: await stream.finalResponse(), numbers };
}

test("guardFetch Chat stream: a watch that throws beside a call holds the call back, and tells of a frame not read that names a call", async () => {
  // (the held frames went out again after the reason, the call with them, unjudged; the frame cut short
  // beside the calls went unsaid)
  for (const cut of [undefined, CHAT_CUT]) {
    faultAtMarker();
    provider.reply({ sse: cutAhead(chatStream(PIECES.slice(0, 2), [NATIVE]), cut, 2) });
    const { text, names, finish } = await readChatStream(openai(), messages);
    assert.deepEqual([names, finish], [[], "stop"], String(cut));
    if (cut) {
      assert.match(text, DROPPED);
      assert.ok(provider.events[0]?.reason?.startsWith("toolguard dropped this turn's tool call"));
    } else assert.match(text, /^Sure\. \n\ntoolguard could not watch the streamed text /);
    assert.doesNotMatch(text, /get_weather/);
  }
});

test("guardFetch Responses stream: a watch that throws beside a call holds the call back, and tells of a frame not read that names a call", async () => {
  for (const cut of [undefined, RESPONSES_CUT]) {
    faultAtMarker();
    provider.reply({ sse: cutAhead(responsesStream(PIECES.slice(0, 3), [NATIVE]), cut, 1), named: true });
    const { final, numbers } = await readResponses();
    assert.deepEqual(final.output.filter((o) => o.type === "function_call"), [], String(cut));
    // (numbered on without gaps from the watch's frame, which took in the deltas after it)
    assert.deepEqual(numbers, numbers.map((_, i) => i), String(cut));
    const text = final.output_text;
    if (cut) {
      assert.match(text, DROPPED);
      assert.ok(provider.events[0]?.reason?.startsWith("toolguard dropped this turn's tool call"));
    } else assert.match(text, /^Sure\. \n\ntoolguard could not watch the streamed text /);
  }
});

test("guardFetch Chat and Responses streams: a watch that throws with no call held tells of a frame not read that names a call", async () => {
  // (the text the watch held may have held calls: the frame may have carried one beside them, and went
  // unsaid with only the calls held asked about)
  faultAtMarker();
  provider.reply({ sse: cutAhead(chatStream(PIECES.slice(0, 2)), CHAT_CUT, 2) });
  const chat = await readChatStream(openai(), messages);
  assert.deepEqual([chat.names, chat.finish], [[], "stop"]);
  assert.match(chat.text, DROPPED);
  faultAtMarker();
  provider.reply({ sse: cutAhead(responsesStream(PIECES.slice(0, 3)), RESPONSES_CUT, 1), named: true });
  const { final, numbers } = await readResponses();
  assert.deepEqual(numbers, numbers.map((_, i) => i));
  assert.match(final.output_text, DROPPED);
  for (const told of [chat.text, final.output_text]) {
    assert.match(told, /toolguard could not watch the streamed text /);
  }
});

/** A Cohere v2 tool-call-start event for call `index`. */
const cohereCall = (index: number, args: string) => ({
  type: "tool-call-start",
  index,
  delta: {
    message: {
      tool_calls: { id: `t${index}`, type: "function", function: { name: "get_weather", arguments: args } },
    },
  },
});
/** A Cohere v2 stream of PIECES' marker and a native call, up to its end. */
const COHERE_FRAMES = [
  { type: "message-start", id: "c1", delta: { message: { role: "assistant" } } },
  { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
  ...PIECES.slice(0, 2).map((text) => ({
    type: "content-delta",
    index: 0,
    delta: { message: { content: { text } } },
  })),
  { type: "content-end", index: 0 },
  cohereCall(0, JSON.stringify(NATIVE.args)),
  { type: "tool-call-end", index: 0 },
];

test("guardFetch Cohere stream: a watch that throws beside a call and a frame not read that names a call numbers its blocks without a gap", async () => {
  // (the block telling of the frame took an index, and the watch's reason took its words: the reason's own
  // block after the calls held came at 2, the client's blocks 0 and 2)
  for (const cut of [false, true]) {
    faultAtMarker();
    // (a tool-call-start cut short: not JSON, it names a call)
    const broken = `event: tool-call-start\ndata: ${JSON.stringify(cohereCall(1, "{}")).slice(0, -1)}\n\n`;
    const end = { type: "message-end", delta: { finish_reason: "TOOL_CALL" } };
    provider.reply({ sse: [...COHERE_FRAMES, ...(cut ? [broken] : []), end], named: true });
    const res = await provider.gfetch(`${provider.url()}/v2/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "command-r", stream: true, messages, tools: TOOLS_OPENAI }),
    });
    const events = sseData(await res.text());
    const starts = events.filter((e) => e.type === "content-start").map((e) => e.index);
    assert.deepEqual(starts, starts.map((_, i) => i), String(cut));
    assert.deepEqual(events.filter((e) => e.type === "tool-call-start"), [], String(cut));
    const text = cohereBlockTexts(events).join("");
    if (cut) assert.match(text, DROPPED);
    else assert.match(text, /^Sure\. \n\ntoolguard could not watch the streamed text /);
  }
});

test("guardFetch streams: a watch that throws beside a call says its reason once, in every dialect", async () => {
  // (the answer read it where its text was withheld, then again in place of the call held: in the same text
  // (Chat, Ollama, Gemini), or in a block or item of its own (Anthropic, Cohere, Responses))
  const read: Record<string, () => Promise<string>> = {
    chat: async () => {
      provider.reply({ sse: chatStream(PIECES.slice(0, 2), [NATIVE]) });
      return (await readChatStream(openai(), messages)).text;
    },
    anthropic: async () => {
      provider.reply({ sse: anthropicStream(PIECES.slice(0, 2), [NATIVE]), named: true });
      const { final } = await readAnthropic(anthropic(), messages);
      return final.content.map((b) => b.type === "text" ? b.text : b.type).join("");
    },
    responses: async () => {
      provider.reply({ sse: responsesStream(PIECES.slice(0, 3), [NATIVE]), named: true });
      return (await readResponses()).final.output_text;
    },
    ollama: async () => {
      provider.reply({ ndjson: ollamaStream(PIECES.slice(0, 2), [NATIVE]) });
      const stream = await ollama().chat({
        model: "m",
        messages,
        tools: TOOLS_OPENAI as never,
        stream: true,
      });
      let text = "";
      for await (const part of stream) text += part.message.content;
      return text;
    },
    gemini: async () => {
      const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
        candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
      });
      const call = { functionCall: { name: NATIVE.name, args: NATIVE.args } };
      const texts = PIECES.slice(0, 2).map((text) => chunk([{ text }]));
      provider.reply({ sse: [...texts, chunk([call]), chunk([{ text: "" }], { finishReason: "STOP" })] });
      const tools = [{ functionDeclarations: TOOLS_OPENAI.map((t) => t.function) }];
      const res = await provider.gfetch(`${provider.url()}/v1beta/models/g:streamGenerateContent?alt=sse`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [], tools }),
      });
      const parts = sseData(await res.text()).flatMap((e) => e.candidates[0].content?.parts ?? []);
      return parts.map((p: { text?: string }) => p.text ?? "[call]").join("");
    },
    cohere: async () => {
      const end = { type: "message-end", delta: { finish_reason: "TOOL_CALL" } };
      provider.reply({ sse: [...COHERE_FRAMES, end], named: true });
      const res = await provider.gfetch(`${provider.url()}/v2/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "command-r", stream: true, messages, tools: TOOLS_OPENAI }),
      });
      return cohereBlockTexts(sseData(await res.text())).join("");
    },
  };
  const said: Record<string, number> = {};
  for (const [dialect, reads] of Object.entries(read)) {
    faultAtMarker();
    const text = await reads();
    said[dialect] = text.split("toolguard could not watch").length - 1;
    assertWithheld(text);
  }
  assert.deepEqual(said, { chat: 1, anthropic: 1, responses: 1, ollama: 1, gemini: 1, cohere: 1 });
});

test("guardFetch Anthropic and Responses streams: a watch that throws in text after a call still says its reason where the client reads it", async () => {
  // (the watch's reason went out ahead of the held block it ends, in a block or item not yet opened, which
  // the SDKs drop: with no second reason the answer read none; Responses' final snapshot listed the item held
  // as it came, with the text withheld)
  const W = `toolguard could not watch`;
  const text = (index: number, pieces: string[]) => [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ...pieces.map((t) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } })),
    { type: "content_block_stop", index },
  ];
  const [start, ...rest] = anthropicStream(["Sure. "], [NATIVE]) as Record<string, unknown>[];
  const calls = rest.filter((e) => e.type !== "message_delta" && e.type !== "message_stop").slice(3);
  faultAtMarker();
  provider.reply({
    sse: [
      start,
      ...text(0, ["Sure. "]),
      ...calls,
      ...text(2, ["Then ", PIECES[1], "more"]),
      ...rest.slice(-2),
    ],
    named: true,
  });
  const { final } = await readAnthropic(anthropic(), messages);
  const said = final.content.map((b) => b.type === "text" ? b.text : "").join("");
  assert.ok(said.includes(W), said);
  assert.doesNotMatch(said, /TOOL_CALLS|more/);
  const item = (oi: number, id: string, pieces: string[]) => [
    {
      type: "response.output_item.added",
      output_index: oi,
      item: { id, type: "message", role: "assistant", content: [] },
    },
    {
      type: "response.content_part.added",
      item_id: id,
      output_index: oi,
      content_index: 0,
      part: { type: "output_text", text: "" },
    },
    ...pieces.map((delta) => ({
      type: "response.output_text.delta",
      item_id: id,
      output_index: oi,
      content_index: 0,
      delta,
    })),
    {
      type: "response.output_item.done",
      output_index: oi,
      item: {
        id,
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: pieces.join(""), annotations: [] }],
      },
    },
  ];
  const fc = {
    id: "fc1",
    type: "function_call",
    call_id: "c1",
    name: NATIVE.name,
    arguments: JSON.stringify(NATIVE.args),
  };
  const response = { id: "r", object: "response", model: "m", output: [], status: "in_progress" };
  faultAtMarker();
  provider.reply({
    sse: [
      { type: "response.created", response },
      ...item(0, "m1", ["Sure. "]),
      { type: "response.output_item.added", output_index: 1, item: { ...fc, arguments: "" } },
      { type: "response.output_item.done", output_index: 1, item: fc },
      ...item(2, "m2", ["Then ", PIECES[1], "more"]),
      { type: "response.completed", response: { ...response, status: "completed" } },
    ].map((e, sequence_number) => ({ ...e, sequence_number })),
    named: true,
  });
  const output = (await readResponses()).final.output_text;
  assert.ok(output.includes(W), output);
  assert.doesNotMatch(output, /TOOL_CALLS|more/);
});

test("guardFetch Chat stream: a validator that throws holds the calls back, and says so counting them in words", async () => {
  const validator = {
    validate() {
      throw new Error("validator down");
    },
  } as unknown as Validator;
  const gfetch = guardFetch(fetch, { validator });
  for (const [calls, said] of [[[VALID_CALL], "call"], [[VALID_CALL, VALID_CALL], "calls"]] as const) {
    provider.reply({ sse: chatStream(["Sure."], [...calls]) });
    const res = await gfetch(`${provider.url()}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages, stream: true, tools: TOOLS_OPENAI }),
    });
    const wire = await res.text();
    assert.doesNotMatch(wire, /"tool_calls"/);
    // (not "call(s)")
    assert.match(wire, new RegExp(`toolguard could not judge the tool ${said}, so none ran: validator down`));
  }
});
