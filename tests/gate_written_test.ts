// Calls a model writes into its text are judged wherever the text comes: in OpenAI Chat answers whose
// content comes as parts, in the text blocks of Anthropic Messages streams (a local model behind an
// Anthropic-compatible endpoint writes them), in OpenAI Responses streams and in Cohere v2 streams, as in
// OpenAI Chat, Gemini and Ollama streams. Driven through the official clients against a local server
// (Cohere's is not installed: its stream is read as the AI SDK reads it, the text of each content-delta).
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  anthropicMessage,
  anthropicStream,
  chatChunk,
  chatCompletion,
  chatStream,
  choicesChunk,
  cohereBlockTexts,
  fakeProvider,
  ollamaChat,
  ollamaStream,
  responsesBody,
  responsesStream,
  splitN,
  sseData,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
  VALID_CALL,
  withGuardedServer,
} from "./_fake_llm_server.ts";
import { readAnthropic, sdkClients } from "./_sdk_clients.ts";
import { countingWork } from "./_counting.ts";
import { gateCompletion } from "../gate.ts";

const provider = fakeProvider();
const { openai, anthropic } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** A call to a tool the request does not declare, written into the text as a local model writes it. */
const WRITTEN_BAD = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>';
const WRITTEN_GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';

test("guardFetch Chat: a call written into content given as parts is judged and cut", async () => {
  const answer = chatCompletion(null);
  const message = (answer.choices as Record<string, Record<string, unknown>>[])[0].message;
  const thinking = { type: "thinking", thinking: [{ type: "text", text: "The user wants a tool." }] };
  message.content = [thinking, { type: "text", text: "Sure.\n" }, { type: "text", text: WRITTEN_BAD }];
  provider.reply({ json: answer });
  const got = await openai().chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never });
  const content = got.choices[0].message.content as unknown as Record<string, unknown>[];
  assert.deepEqual(content[0], thinking); // the reasoning stays, in its place
  assert.equal(content.length, 2);
  const text = String(content[1].text);
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /^Sure\.\n\n/);
  assert.match(text, /delete_everything/); // named in the reason
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, false);
  assert.deepEqual(event.verdict.calls.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Chat: an allowed call written into content parts passes the answer as it came", async () => {
  const answer = chatCompletion(null);
  const message = (answer.choices as Record<string, Record<string, unknown>>[])[0].message;
  message.content = [{ type: "text", text: WRITTEN_GOOD }];
  provider.reply({ json: answer });
  const got = await openai().chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never });
  assert.deepEqual(got.choices[0].message.content, [{ type: "text", text: WRITTEN_GOOD }]);
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, true);
  assert.deepEqual(event.verdict.calls.map((c) => c.name), ["get_weather"]);
});

/** The frames of an Anthropic stream whose text is `prose` and then `written`, in pieces of 7. */
const anthropicWritten = (prose: string, written: string) =>
  anthropicStream([prose, ...splitN(written, Math.ceil(written.length / 7))]);

/** What the @anthropic-ai/sdk hands its reader from a stream (see `readAnthropic`), through `client`. */
const anthropicRead = (client: Anthropic = anthropic()) => readAnthropic(client, messages);

test("guardFetch Anthropic stream: a call written into a text block is held and judged, the prose flows", async () => {
  provider.reply({ sse: anthropicWritten("Sure.\n", WRITTEN_BAD), named: true });
  const { streamed, final, text } = await anthropicRead();
  assert.equal(streamed, text);
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /^Sure\.\n\n/);
  assert.match(text, /delete_everything/); // named in the reason
  assert.deepEqual(final.content.map((b) => b.type), ["text"]);
  assert.equal(final.stop_reason, "end_turn");
  const [event] = provider.events;
  assert.equal(event.changed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Anthropic stream: a rejected call written across a citation is cut whole", async () => {
  // A citation is a delta of its text block: taken for the text's end, it let out the tail that may become
  // a marker, and the client read "Sure. <tool_call" before the reason.
  const events = anthropicStream(["Sure. ", "<tool_call", WRITTEN_BAD.slice("<tool_call".length)]) as {
    type: string;
    delta?: { text?: string };
  }[];
  const at = events.findIndex((e) => e.delta?.text === "<tool_call");
  const citation = {
    type: "char_location",
    cited_text: "x",
    document_index: 0,
    document_title: "x",
    start_char_index: 0,
    end_char_index: 1,
  };
  events.splice(at + 1, 0, {
    type: "content_block_delta",
    index: 0,
    delta: { type: "citations_delta", citation },
  } as never);
  provider.reply({ sse: events, named: true });
  const { streamed, text } = await anthropicRead();
  assert.equal(streamed, text);
  assert.match(text, /^Sure\.\s*toolguard stopped /);
  assert.doesNotMatch(text, /tool_call/);
  assert.equal(provider.events[0].verdict.allowed, false);
});

test("guardFetch Anthropic stream: an allowed written call reaches the client byte for byte", async () => {
  const frames = anthropicWritten("", WRITTEN_GOOD);
  provider.reply({ sse: frames, named: true });
  const res = await provider.gfetch(`${provider.url()}/v1/messages`, {
    method: "POST",
    body: JSON.stringify({ model: "m", max_tokens: 100, messages, stream: true, tools: TOOLS_ANTHROPIC }),
  });
  const sent = (frames as Record<string, unknown>[]).map((f) =>
    `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`
  );
  assert.equal(await res.text(), sent.join(""));
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["get_weather"]);
});

test("guardFetch Anthropic stream: a block start that brings the written call is judged, the block kept", async () => {
  const frames = anthropicStream([]) as Record<string, unknown>[];
  frames.splice(1, 0, {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: WRITTEN_BAD },
  }, {
    type: "content_block_stop",
    index: 0,
  });
  provider.reply({ sse: frames, named: true });
  const { final, text } = await anthropicRead();
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /delete_everything/);
  assert.deepEqual(final.content.map((b) => b.type), ["text"]);
});

test("guardFetch Anthropic stream drop-call and retry: a rejected written call is cut, or asked again", async () => {
  const two = `${WRITTEN_GOOD}\n${WRITTEN_BAD}`;
  const dropped = await withGuardedServer(
    () => ({ sse: anthropicWritten("", two), named: true }),
    {
      onRejected: "drop-call",
    },
    async (server, f) =>
      (await anthropicRead(new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f }))).text,
  );
  assert.match(dropped.value, /<tool_call>\n\{"name": "get_weather"/);
  assert.doesNotMatch(dropped.value, /"name": "delete_everything"/);
  // The prose shares its frame with the marker: it is held with the call, and goes out before the retry.
  const replies = [anthropicWritten("", `Sure. ${WRITTEN_BAD}`), anthropicWritten("", WRITTEN_GOOD)];
  const retried = await withGuardedServer((_, n) => ({ sse: replies[n], named: true }), { retry: 1 }, async (
    server,
    f,
  ) => await anthropicRead(new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f, maxRetries: 0 })));
  assert.equal(retried.server.requests.length, 2);
  // The retry's blocks follow the block the client has.
  const blocks = retried.value.final.content.map((b) => b.type === "text" ? b.text : b.type);
  assert.deepEqual(blocks, ["Sure. ", WRITTEN_GOOD]);
});

test("guardFetch Chat stream: prose and a fence that is no call, in one frame, pass byte for byte", async () => {
  // A bare fence may hold a JSON call: its frame, prose and all, waits until the code shows it is none.
  const frames = chatStream(["Quick sort:\n```", "\nfunction quickSort(arr):\n", "  return arr\n```\nDone."]);
  provider.reply({ sse: frames });
  const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", messages, stream: true, tools: TOOLS_OPENAI }),
  });
  const sent = frames.map((f) => (typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`));
  assert.equal(await res.text(), sent.join(""));
});

/** A Cohere v2 stream whose text is `text`, in pieces of 7, in one content block. */
function cohereWritten(text: string): Record<string, unknown>[] {
  const delta = (t: string) => ({
    type: "content-delta",
    index: 0,
    delta: { message: { content: { text: t } } },
  });
  return [
    {
      id: "c1",
      type: "message-start",
      delta: { message: { role: "assistant", content: [], tool_calls: [] } },
    },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    ...splitN(text, Math.ceil(text.length / 7)).map(delta),
    { type: "content-end", index: 0 },
    { type: "message-end", delta: { finish_reason: "COMPLETE", usage: { tokens: { output_tokens: 9 } } } },
  ];
}

/**
 * A Cohere v2 stream of `blocks`, between `cohereWritten`'s message start and end: a text block sent in the
 * given pieces, or (null) a thinking block of "Hmm."; `within` gives events of a block's (its citations) that
 * come after its text, before its end.
 */
function cohereBlocks(
  blocks: readonly (readonly string[] | null)[],
  within: (index: number) => readonly Record<string, unknown>[] = () => [],
): Record<string, unknown>[] {
  const [start, , , , end] = cohereWritten("x");
  return [
    start,
    ...blocks.flatMap((pieces, index) => [
      {
        type: "content-start",
        index,
        delta: {
          message: {
            content: pieces === null ? { type: "thinking", thinking: "" } : { type: "text", text: "" },
          },
        },
      },
      ...(pieces ?? [null]).map((text) => ({
        type: "content-delta",
        index,
        delta: { message: { content: text === null ? { thinking: "Hmm." } : { text } } },
      })),
      ...within(index),
      { type: "content-end", index },
    ]),
    end,
  ];
}

/**
 * Posts a streamed Cohere v2 chat through the gate (the shared provider's, or `through` a guarded fetch to a
 * server of the test's own): the wire text the client gets.
 */
async function cohereWire(through?: { f: typeof fetch; url: string }): Promise<string> {
  const { f, url } = through ?? { f: provider.gfetch, url: provider.url() };
  const res = await f(`${url}/v2/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "command-r", messages, stream: true, tools: TOOLS_OPENAI }),
  });
  return await res.text();
}

test("guardFetch Cohere stream: a call written into the text is held and judged, the prose flows", async () => {
  provider.reply({ sse: cohereWritten(`Sure.\n${WRITTEN_BAD}`), named: true });
  const events = sseData(await cohereWire());
  const text = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text).join(
    "",
  );
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /^Sure\.\n\n/);
  assert.match(text, /delete_everything/); // named in the reason
  assert.deepEqual(events.slice(-2).map((e) => e.type), ["content-end", "message-end"]);
  const [event] = provider.events;
  assert.equal(event.changed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch stream: a rejected written call whose stream stops for tool use ends with a normal stop, as its body does (Anthropic, Chat, Cohere)", async () => {
  // (the stop the server gave for the written call, vLLM's with tool_choice "required" and no tool parser,
  // went out with the call cut or replaced by the reason and no call in the message: an SDK user's loop
  // looked for the call it was promised, where the body of the same answer ends end_turn, stop, COMPLETE)
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const written = onRejected === "drop-call"
      ? `Sure. ${WRITTEN_GOOD}\n${WRITTEN_BAD}`
      : `Sure. ${WRITTEN_BAD}`;
    const frames = anthropicWritten("", written) as Record<string, unknown>[];
    const at = frames.findIndex((e) => e.type === "message_delta");
    frames[at] = { ...frames[at], delta: { stop_reason: "tool_use", stop_sequence: null } };
    const anthropicRun = await withGuardedServer(
      () => ({ sse: frames, named: true }),
      { onRejected },
      async (server, f) =>
        (await anthropicRead(new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f }))).final,
    );
    const chat = [
      ...chatStream(splitN(written, 5)).slice(0, -2),
      chatChunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ];
    const chatRun = await withGuardedServer(
      () => ({ sse: chat }),
      { onRejected },
      async (server, f) =>
        await new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f }).chat.completions.stream({
          model: "m",
          messages,
          tools: TOOLS_OPENAI as never,
        }).finalChatCompletion(),
    );
    const cohere = cohereWritten(written);
    cohere[cohere.length - 1] = { type: "message-end", delta: { finish_reason: "TOOL_CALL" } };
    const cohereRun = await withGuardedServer(
      () => ({ sse: cohere, named: true }),
      { onRejected },
      async (server, f) => sseData(await cohereWire({ f, url: server.url })),
    );
    const stops = [
      anthropicRun.value.stop_reason,
      chatRun.value.choices[0].finish_reason,
      cohereRun.value.filter((e) => e.type === "message-end").map((e) => e.delta.finish_reason).join(),
    ];
    assert.deepEqual(stops, ["end_turn", "stop", "COMPLETE"], onRejected);
    const cut = [anthropicRun, chatRun, cohereRun].map((r) => r.seen[0]?.changed);
    assert.deepEqual(cut, [true, true, true], onRejected);
  }
  // (n=2: beside an answer of native calls, judged as one turn with them, the written answer's finish too)
  const native = { index: 0, id: "a", type: "function", function: { name: "get_weather", arguments: "{}" } };
  provider.reply({
    sse: [
      choicesChunk([
        { index: 0, delta: { role: "assistant", content: `Sure. ${WRITTEN_BAD}` } },
        { index: 1, delta: { role: "assistant", content: null, tool_calls: [native] } },
      ]),
      choicesChunk([0, 1].map((index) => ({ index, delta: {}, finish_reason: "tool_calls" }))),
      "data: [DONE]\n\n",
    ],
  });
  const final = await openai().chat.completions.stream({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    n: 2,
  })
    .finalChatCompletion();
  assert.deepEqual(final.choices.map((c) => [c.index, c.finish_reason]), [[0, "stop"], [1, "stop"]]);
});

test("guardFetch Cohere stream: an allowed written call reaches the client byte for byte", async () => {
  const frames = cohereWritten(WRITTEN_GOOD);
  provider.reply({ sse: frames, named: true });
  const sent = frames.map((f) => `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`);
  assert.equal(await cohereWire(), sent.join(""));
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["get_weather"]);
});

/** A Cohere v2 stream whose one content block brings `text` in its `content-start` and has no delta. */
function cohereStartWritten(text: string): Record<string, unknown>[] {
  const start = { type: "content-start", index: 0, delta: { message: { content: { type: "text", text } } } };
  return cohereWritten("").filter((f) => f.type !== "content-delta").map((f) =>
    f.type === "content-start" ? start : f
  );
}

/**
 * The text a Cohere SDK app that keeps the text a `content-start` brings (the SDK hands it on, typed as the
 * block's text) reads from a stream, after checking that every delta's block was started first.
 */
function cohereAppText(wire: string): string {
  const events = sseData(wire);
  const started = new Set<unknown>();
  let text = "";
  for (const e of events) {
    if (e.type === "content-start") started.add(e.index);
    if (e.type === "content-delta") {
      assert.ok(started.has(e.index), `a delta of block ${e.index} before its start`);
    }
    if (e.type === "content-start" || e.type === "content-delta") text += e.delta.message.content.text ?? "";
  }
  return text;
}

test("guardFetch Cohere stream: a call written into a content-start's text is judged as text and cut", async () => {
  // The gate read only content-delta text, as the AI SDK does: the call reached the app unjudged.
  provider.reply({ sse: cohereStartWritten(`Sure.\n${WRITTEN_BAD}`), named: true });
  const text = cohereAppText(await cohereWire());
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /^Sure\.\n\n/);
  assert.match(text, /delete_everything/); // named in the reason
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, false);
  assert.deepEqual(event.calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Cohere stream: an allowed call written into a content-start's text reaches the client as a delta", async () => {
  provider.reply({ sse: cohereStartWritten(WRITTEN_GOOD), named: true });
  const wire = await cohereWire();
  assert.equal(cohereAppText(wire), WRITTEN_GOOD);
  // the start goes out empty and its text as a delta, the one text every client reads
  const deltas = sseData(wire)
    .filter((e) => e.type === "content-delta");
  assert.deepEqual(deltas.map((e) => e.delta.message.content.text), [WRITTEN_GOOD]);
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["get_weather"]);
});

/** What the openai client hands its reader from a Responses stream: the text deltas, and the final text. */
async function responsesRead(): Promise<{ streamed: string; final: string; calls: number }> {
  const stream = openai().responses.stream({
    model: "m",
    input: "Weather in Oslo?",
    tools: TOOLS_RESPONSES as never,
  });
  let streamed = "";
  for await (const e of stream) if (e.type === "response.output_text.delta") streamed += e.delta;
  const final = await stream.finalResponse();
  return {
    streamed,
    final: final.output_text,
    calls: final.output.filter((o) => o.type === "function_call").length,
  };
}

test("guardFetch Responses stream: a call written into the text is held and judged; the final response tells the same", async () => {
  provider.reply({ sse: responsesStream(["Sure.\n", ...splitN(WRITTEN_BAD, 9)]), named: true });
  const { streamed, final, calls } = await responsesRead();
  assert.equal(final, streamed);
  assert.doesNotMatch(streamed, /<tool_call>/);
  assert.match(streamed, /^Sure\.\n\n/);
  assert.match(streamed, /delete_everything/); // named in the reason
  assert.equal(calls, 0);
  const [event] = provider.events;
  assert.equal(event.changed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Responses stream: a rejected call written across an annotation is cut whole", async () => {
  // An annotation comes inside the text: taken for its end, it let out the tail that may become a marker,
  // and the client read "Sure. <tool_call" before the reason.
  const events = responsesStream(["Sure. ", "<tool_call", WRITTEN_BAD.slice("<tool_call".length)]) as {
    type: string;
    delta?: string;
  }[];
  const at = events.findIndex((e) => e.type === "response.output_text.delta" && e.delta === "<tool_call");
  const annotation = {
    type: "url_citation",
    url: "https://example.com",
    title: "x",
    start_index: 0,
    end_index: 5,
  };
  events.splice(at + 1, 0, {
    type: "response.output_text.annotation.added",
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    annotation_index: 0,
    annotation,
    sequence_number: 0,
  } as never);
  provider.reply({ sse: events, named: true });
  const { streamed, final } = await responsesRead();
  assert.equal(final, streamed);
  assert.match(streamed, /^Sure\.\s*toolguard stopped /);
  assert.doesNotMatch(streamed, /tool_call/);
  assert.equal(provider.events[0].verdict.allowed, false);
});

test("guardFetch Responses stream: a withheld turn whose message text was held as JSON keeps the final response's usage", async () => {
  // The message opens with call-shaped JSON (held until judged) beside a native call that is rejected: the
  // final snapshot, held with that text, is the base of the one the gate writes, usage and all.
  const json = '{"name": "search", "arguments": {"query": "notes"}}';
  const frames = responsesStream(splitN(json, 3), [{ name: "delete_everything", args: {} }]) as {
    response?: Record<string, unknown>;
  }[];
  frames[0] = { ...frames[0], response: { ...frames[0].response, usage: null } }; // as OpenAI starts a stream
  provider.reply({ sse: frames, named: true });
  const stream = openai().responses.stream({
    model: "m",
    input: "Weather?",
    tools: TOOLS_RESPONSES as never,
  });
  for await (const _ of stream) { /* read it all */ }
  const final = await stream.finalResponse();
  assert.deepEqual(final.usage, { input_tokens: 10, output_tokens: 5, total_tokens: 15 });
  assert.equal(final.output.filter((o) => o.type === "function_call").length, 0);
  assert.match(final.output_text, /delete_everything/);
  assert.equal(provider.events[0].verdict.allowed, false);
});

test("guardFetch Responses stream: an allowed written call reaches the client byte for byte", async () => {
  const frames = responsesStream(splitN(WRITTEN_GOOD, 9)) as Record<string, unknown>[];
  provider.reply({ sse: frames, named: true });
  const res = await provider.gfetch(`${provider.url()}/v1/responses`, {
    method: "POST",
    body: JSON.stringify({ model: "m", input: "Weather?", stream: true, tools: TOOLS_RESPONSES }),
  });
  const sent = frames.map((f) => `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`);
  assert.equal(await res.text(), sent.join(""));
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, true);
  assert.deepEqual(event.calls?.map((c) => c.name), ["get_weather"]);
});

test("guardFetch Anthropic stream: a call written across two text blocks is judged, the reason in a block the client has", async () => {
  const frames = anthropicStream(["Sure.\n", WRITTEN_BAD.slice(0, 30)]) as Record<string, unknown>[];
  const stop = frames.findIndex((f) => f.type === "content_block_stop");
  frames.splice(
    stop + 1,
    0,
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: WRITTEN_BAD.slice(30) } },
    { type: "content_block_stop", index: 1 },
  );
  provider.reply({ sse: frames, named: true });
  const { streamed, final } = await anthropicRead();
  const texts = final.content.map((b) => (b.type === "text" ? b.text : b.type));
  assert.equal(texts.join(""), streamed);
  assert.doesNotMatch(streamed, /<tool_call>|"arguments"/);
  assert.match(texts[0], /^Sure\.\n\n[\s\S]*delete_everything/);
  // Block 1 held only the call's end: it goes, as a body drops it (the API refuses an empty text block).
  assert.deepEqual(texts.slice(1), []);
});

test("guardFetch Anthropic: a call written across two text blocks of a whole body is judged and cut, as in a stream", async () => {
  const answer = anthropicMessage("Sure.\n");
  const split = WRITTEN_BAD.indexOf('"delete');
  answer.content = [
    { type: "text", text: "Sure.\n" + WRITTEN_BAD.slice(0, split) },
    { type: "text", text: WRITTEN_BAD.slice(split) + "\nDone." },
  ];
  provider.reply({ json: answer });
  const got = await anthropic().messages.create({
    model: "m",
    max_tokens: 100,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  });
  const texts = got.content.map((b) => (b.type === "text" ? b.text : b.type));
  assert.doesNotMatch(texts.join(""), /<tool_call>|"arguments"|<\/tool_call>/);
  // Each block keeps what is not the call, the text around it as a stream sends it; the reason ends the
  // text kept from the call's blocks, as a stream writes it.
  assert.equal(texts.length, 2);
  assert.equal(texts[0], "Sure.\n");
  assert.match(texts[1], /^\nDone\.\n\ntoolguard stopped[^]*delete_everything/); // named in the reason
  assert.equal(got.stop_reason, "end_turn");
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, false);
  assert.deepEqual(event.verdict.calls.map((c) => c.name), ["delete_everything"]);
  // With drop-call, only the rejected call is cut from the blocks it spans; the allowed one stays.
  answer.content = [
    { type: "text", text: `${WRITTEN_GOOD}\n${WRITTEN_BAD.slice(0, split)}` },
    { type: "text", text: WRITTEN_BAD.slice(split) },
  ];
  const { value } = await withGuardedServer(
    () => ({ json: answer }),
    { onRejected: "drop-call" },
    (server, f) =>
      new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f, maxRetries: 0 }).messages.create({
        model: "m",
        max_tokens: 100,
        messages,
        tools: TOOLS_ANTHROPIC as never,
      }),
  );
  const kept = value.content.map((b) => (b.type === "text" ? b.text : b.type));
  // (the text from the kept call on tidied, as a stream holds it from there: no blank line doubled before
  // the reason in the cut call's place)
  assert.match(
    kept[0],
    /^<tool_call>[^]*"Oslo"[^]*<\/tool_call>\n\ntoolguard removed[^]*delete_everything/,
  );
  assert.equal(kept.length, 1); // the second block was only the rejected call's end
  assert.doesNotMatch(kept.join(""), /"name": "delete_everything"/);
});

test("guardFetch Responses stream drop-call: only the rejected written call is cut, in the deltas and the final response", async () => {
  const two = `${WRITTEN_GOOD}\n${WRITTEN_BAD}`;
  const { value } = await withGuardedServer(
    () => ({ sse: responsesStream(splitN(two, 12)), named: true }),
    { onRejected: "drop-call" },
    async (server, f) => {
      const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
      const stream = client.responses.stream({
        model: "m",
        input: "Weather?",
        tools: TOOLS_RESPONSES as never,
      });
      let streamed = "";
      for await (const e of stream) if (e.type === "response.output_text.delta") streamed += e.delta;
      return { streamed, final: (await stream.finalResponse()).output_text };
    },
  );
  assert.equal(value.final, value.streamed);
  assert.match(value.streamed, /^<tool_call>\n\{"name": "get_weather"/);
  assert.doesNotMatch(value.streamed, /"name": "delete_everything"/);
});

test("guardFetch Chat stream: a call written into content streamed as parts (Mistral's reasoning models) is judged", async () => {
  const parts = (content: unknown[]) => chatChunk({ content });
  const thinking = { type: "thinking", thinking: [{ type: "text", text: "A tool, then." }] };
  const frames = [
    chatChunk({ role: "assistant", content: [thinking] }),
    parts([{ type: "text", text: "Sure.\n" }]),
    ...splitN(WRITTEN_BAD, 5).map((t) => parts([{ type: "text", text: t }])),
    chatChunk({ content: "" }, "stop"),
    "data: [DONE]\n\n",
  ];
  provider.reply({ sse: frames });
  const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "magistral", messages, stream: true, tools: TOOLS_OPENAI }),
  });
  // Read as the AI SDK's Mistral provider reads it: the text of each text part, or the string.
  let text = "";
  for (const chunk of sseData(await res.text())) {
    const content = chunk.choices[0]?.delta?.content;
    if (typeof content === "string") text += content;
    else for (const p of content ?? []) if (p.type === "text") text += p.text;
  }
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /^Sure\.\n\n[\s\S]*delete_everything/);
  assert.deepEqual(provider.events[0].calls?.map((c) => c.name), ["delete_everything"]);
});

/** A `url_citation` annotation of the characters `start` to `end` of its part's text. */
const citation = (start: number, end: number) => ({
  type: "url_citation",
  start_index: start,
  end_index: end,
  url: "u",
  title: "t",
});

/**
 * `frames` (a Responses stream) with `annotations` on the first part wherever it is repeated whole (its
 * `.done` events, the final snapshot), each also in an `output_text.annotation.added` after its
 * `output_text.done`, as a server that sends its text only whole sends them; numbered again.
 */
function annotatedFrames(
  frames: Record<string, unknown>[],
  annotations: unknown[],
): Record<string, unknown>[] {
  const annotated = (p: unknown) => ({ ...p as object, annotations });
  const message = (it: Record<string, unknown>) =>
    it.type === "message" ? { ...it, content: (it.content as unknown[]).map(annotated) } : it;
  return frames.flatMap((f) => {
    if (f.type === "response.content_part.done") return [{ ...f, part: annotated(f.part) }];
    if (f.type === "response.output_item.done") return [{ ...f, item: message(f.item as never) }];
    if (f.type === "response.completed") {
      const response = f.response as { output: Record<string, unknown>[] };
      return [{ ...f, response: { ...response, output: response.output.map(message) } }];
    }
    if (f.type !== "response.output_text.done") return [f];
    const at = { item_id: f.item_id, output_index: f.output_index, content_index: f.content_index };
    return [
      f,
      ...annotations.map((a, i) => ({
        type: "response.output_text.annotation.added",
        ...at,
        annotation_index: i,
        annotation: a,
      })),
    ];
  }).map((f, i) => ({ ...f, sequence_number: i }));
}

/** Every annotation of `text` parts in `output` that cites characters past its part's text. */
function citedPast(output: unknown[]): unknown[] {
  return output.flatMap((o) => {
    const item = o as { type: string; content?: { text?: string; annotations?: { end_index?: number }[] }[] };
    if (item.type !== "message") return [];
    return (item.content ?? []).flatMap((p) =>
      (p.annotations ?? []).filter((a) => (a.end_index ?? 0) > cutAt(p.text ?? ""))
    );
  });
}

/** Where the reason the gate wrote begins in `text` (its length when there is none). */
const cutAt = (text: string) => {
  const at = text.indexOf("toolguard stopped");
  return at === -1 ? text.length : text.slice(0, at).trimEnd().length;
};

/** A Responses stream of `deltas` whose repeating events (`.done`, the final snapshot) carry `repeat`. */
function responsesRepeating(deltas: string[], repeat: string): Record<string, unknown>[] {
  const frames = responsesStream(deltas.length > 0 ? deltas : [repeat]) as Record<string, unknown>[];
  const retold = (text: unknown) => typeof text === "string" ? repeat : text;
  const item = (it: Record<string, unknown>) =>
    it.type === "message"
      ? {
        ...it,
        content: (it.content as Record<string, unknown>[]).map((p) => ({ ...p, text: retold(p.text) })),
      }
      : it;
  return frames.filter((f) => deltas.length > 0 || f.type !== "response.output_text.delta").map((f) => {
    if (f.type === "response.output_text.done") return { ...f, text: repeat };
    if (f.type === "response.content_part.done") return { ...f, part: { ...f.part as object, text: repeat } };
    if (f.type === "response.output_item.done") {
      return { ...f, item: item(f.item as Record<string, unknown>) };
    }
    if (f.type === "response.completed") {
      const response = f.response as Record<string, unknown>;
      return {
        ...f,
        response: { ...response, output: (response.output as Record<string, unknown>[]).map(item) },
      };
    }
    return f;
  });
}

test("guardFetch Responses stream: a call written only into the text the final response repeats is judged", async () => {
  // A server that sends its text in the events that repeat it and no deltas: the client's final response
  // holds that text, so the gate reads it there.
  provider.reply({ sse: responsesRepeating([], `Sure.\n${WRITTEN_BAD}`), named: true });
  const { streamed, final, calls } = await responsesRead();
  assert.doesNotMatch(final, /<tool_call>/);
  assert.match(final, /^Sure\.\n\n[\s\S]*delete_everything/);
  // (the deltas tell nothing, as the server's did: the events that repeat the text tell the reason too)
  assert.equal(streamed, "");
  assert.equal(calls, 0);
  assert.deepEqual(provider.events[0].calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Responses stream: a call written into text that came whole is cut there, and every event keeps a number above the last", async () => {
  // Where the text came in an .done event (no delta, or after deltas that told less), the gate wrote the
  // text in its place in a delta of its own, ahead of that event: with no number (the part's text only
  // whole) or with the number of the part's last delta, which the client had (fuzz responses withhold and
  // drop-call, 204 and 212 of seeds 26001-29000 once the generator sends some parts' text only whole).
  // No number is free there: the events that brought the text tell it as cut, the reason with it, as the
  // final response does, and the deltas stay as they came.
  const cases = [
    [[], "withhold-turn"],
    [["Let me look."], "drop-call"],
    [["Let me look."], "withhold-turn"],
  ] as const;
  for (const [deltas, onRejected] of cases) {
    const label = JSON.stringify([deltas, onRejected]);
    const frames = responsesRepeating([...deltas], `Let me look.${WRITTEN_BAD}`)
      .map((f, i) => ({ ...f, sequence_number: i }));
    const { events, response } = await responsesGated(frames, onRejected);
    const seqs = events.map((e) => e.sequence_number);
    assert.ok(seqs.every((n, i) => typeof n === "number" && (i === 0 || n > (seqs[i - 1] as number))), label);
    const streamed = events.flatMap((e) => e.type === "response.output_text.delta" ? [e.delta] : []).join("");
    assert.equal(streamed, deltas.join(""), label);
    assert.match(response.output_text, /^Let me look\.\n\ntoolguard stopped[\s\S]*delete_everything/, label);
    const told = events.flatMap((e) =>
      e.type === "response.output_text.done"
        ? [e.text]
        : e.type === "response.content_part.done"
        ? [(e.part as { text: string }).text]
        : []
    );
    assert.deepEqual(told, [response.output_text, response.output_text], label);
  }
});

test("guardFetch Responses stream: text the final response repeats otherwise than its deltas is told as they were", async () => {
  provider.reply({ sse: responsesRepeating(["Sunny ", "in Oslo."], WRITTEN_BAD), named: true });
  const { streamed, final } = await responsesRead();
  assert.equal(streamed, "Sunny in Oslo.");
  assert.equal(final, streamed);
});

test("guardFetch Responses stream: a call a content part brings as it is added is judged", async () => {
  // The client starts the part with the text its `content_part.added` brings, then appends the deltas.
  const frames = responsesStream(["\nDone."]) as Record<string, unknown>[];
  const text = `${WRITTEN_BAD}\nDone.`;
  const sse = frames.map((f) => {
    if (f.type === "response.content_part.added") {
      return { ...f, part: { ...f.part as object, text: WRITTEN_BAD } };
    }
    return f.type === "response.output_text.done" ? { ...f, text } : f;
  }).filter((f) => !String(f.type).endsWith(".done") || f.type === "response.output_text.done");
  provider.reply({ sse, named: true });
  const { streamed, final } = await responsesRead();
  assert.doesNotMatch(final, /<tool_call>/);
  assert.match(streamed, /delete_everything/);
  assert.deepEqual(provider.events[0].calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Anthropic stream: a call written into a text block the message starts with is judged", async () => {
  // The SDK's message is the `message_start`'s, content and all: a text block there is in `finalMessage()`.
  const frames = anthropicStream([]) as Record<string, unknown>[];
  const start = frames[0] as { message: Record<string, unknown> };
  frames[0] = { ...start, message: { ...start.message, content: [{ type: "text", text: WRITTEN_BAD }] } };
  provider.reply({ sse: frames, named: true });
  const { final, text } = await anthropicRead();
  assert.doesNotMatch(text, /<tool_call>/);
  assert.match(text, /delete_everything/);
  assert.deepEqual(final.content.map((b) => b.type), ["text"]);
  assert.deepEqual(provider.events[0].calls?.map((c) => c.name), ["delete_everything"]);
});

/**
 * A Responses stream that calls `call` first and then answers with a message of `text` (in pieces, or in
 * the text its content part brings when `added`), as a local model does that both calls and writes.
 */
function callThenText(call: string, text: string[], added = false): Record<string, unknown>[] {
  const calls = responsesStream([], [{ name: call, args: { city: "Oslo" } }]) as Record<string, unknown>[];
  const message = responsesStream(text) as Record<string, unknown>[];
  const at1 = (e: Record<string, unknown>) => e.output_index === 0 ? { ...e, output_index: 1 } : e;
  const body = message.filter((e) => e.output_index === 0).map(at1).flatMap((e) => {
    if (!added) return [e];
    if (e.type === "response.output_text.delta") return [];
    if (e.type !== "response.content_part.added") return [e];
    return [{ ...e, part: { ...e.part as object, text: text.join("") } }];
  });
  const done = calls.at(-1) as { response: Record<string, unknown> };
  const output = [
    ...(done.response.output as unknown[]),
    ...((message.at(-1) as { response: { output: unknown[] } }).response.output),
  ];
  const frames = [...calls.slice(0, -1), ...body, { ...done, response: { ...done.response, output } }];
  return frames.map((f, i) => ({ ...f, sequence_number: i }));
}

test("guardFetch Responses stream: text held after a call that is judged goes out in its place, not ahead of it", async () => {
  // The text is not judged (the answer calls natively); sent ahead of the held call, its events named an
  // output the client did not have yet, and the openai SDK threw.
  for (const call of ["get_weather", "delete_everything"]) {
    provider.reply({ sse: callThenText(call, ["Done: ", ...splitN(WRITTEN_BAD, 4)]), named: true });
    const { streamed, final, calls } = await responsesRead();
    assert.equal(final, streamed);
    assert.equal(calls, call === "get_weather" ? 1 : 0);
    assert.deepEqual(provider.events[0].calls?.map((c) => c.name), [call]);
  }
});

test("guardFetch Responses stream: a content part that brings its text after a held call is started before it", async () => {
  provider.reply({ sse: callThenText("get_weather", ["Done: ", WRITTEN_BAD], true), named: true });
  const { final, calls } = await responsesRead();
  assert.equal(final, `Done: ${WRITTEN_BAD}`); // (the answer calls natively: its text is not read for calls)
  assert.equal(calls, 1);
});

test("guardFetch Anthropic stream: a text block held after a tool_use block goes out after it", async () => {
  // Sent ahead of the held tool_use block, the text's deltas named a block the SDK did not have: it threw.
  const frames = anthropicStream([], [{ name: "get_weather", args: { city: "Oslo" } }]) as Record<
    string,
    unknown
  >[];
  const text = ["Done: ", ...splitN(WRITTEN_BAD, 4)];
  const block = [
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    ...text.map((t) => ({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: t } })),
    { type: "content_block_stop", index: 1 },
  ];
  frames.splice(frames.findIndex((f) => f.type === "message_delta"), 0, ...block);
  provider.reply({ sse: frames, named: true });
  const { final, text: finalText } = await anthropicRead();
  assert.deepEqual(final.content.map((b) => b.type), ["tool_use", "text"]);
  assert.equal(finalText, text.join("")); // (the answer calls natively: its text is not read for calls)
});

test("guardFetch Responses stream: the held events that repeat a rejected call's text are retold in linear time", async () => {
  // Text moved between two parts at every delta keeps a run per delta; each held `.done` event walked them.
  const n = 1_000;
  const frames = responsesStream([WRITTEN_BAD]) as Record<string, unknown>[];
  const at = frames.findIndex((f) => f.type === "response.output_text.done");
  const other = { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 1 };
  const moves: Record<string, unknown>[] = [{
    ...other,
    part: { type: "output_text", text: "", annotations: [] },
  }];
  for (let i = 0; i < n; i++) {
    for (const ci of [1, 0]) {
      moves.push({
        type: "response.output_text.delta",
        item_id: "msg_1",
        output_index: 0,
        content_index: ci,
        delta: "x",
      });
    }
  }
  const done = frames[at];
  const dones = Array.from({ length: n }, () => ({ ...done, text: `${WRITTEN_BAD}${"x".repeat(n)}` }));
  provider.reply({ sse: [...frames.slice(0, at), ...moves, ...dones, ...frames.slice(at + 1)], named: true });
  const [read, sliced] = await countingWork(String.prototype, "slice", responsesRead);
  assert.ok(sliced < 200 * n, `${sliced} slices for ${n} events`);
  assert.doesNotMatch(read.final, /<tool_call>/);
  assert.deepEqual(provider.events[0].calls?.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Chat stream retry: a call written into content parts goes back with the turn's text", async () => {
  const parts = (text: string) => chatChunk({ content: [{ type: "text", text }] });
  const first = [
    chatChunk({ role: "assistant", content: "" }),
    parts("Sure.\n"),
    ...splitN(WRITTEN_BAD, 5).map(parts),
    chatChunk({ content: "" }, "stop"),
    "data: [DONE]\n\n",
  ];
  const second = [chatChunk({ role: "assistant", content: "" }), parts(WRITTEN_GOOD), chatChunk({}, "stop")];
  const replies = [first, [...second, "data: [DONE]\n\n"]];
  const { server } = await withGuardedServer((_, n) => ({ sse: replies[n] }), { retry: 1 }, async (s, f) => {
    // Read to its end as the AI SDK's Mistral provider reads it (the text of each part).
    const res = await f(`${s.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "magistral", messages, stream: true, tools: TOOLS_OPENAI }),
    });
    await res.text();
  });
  assert.equal(server.requests.length, 2);
  const sent = (server.requests[1].json as { messages: Record<string, unknown>[] }).messages;
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool"]);
  // The turn's text, without the call written into it (the call goes back as a tool call).
  assert.equal(sent[1].content, "Sure.");
  assert.deepEqual((sent[1].tool_calls as { function: { name: string } }[]).map((c) => c.function.name), [
    "delete_everything",
  ]);
});

test("guardFetch Chat retry: a call written into content given as parts goes back with the turn's text", async () => {
  const answer = chatCompletion(null);
  const message = (answer.choices as Record<string, Record<string, unknown>>[])[0].message;
  message.content = [{ type: "text", text: "Sure.\n" }, { type: "text", text: WRITTEN_BAD }];
  const replies = [{ json: answer }, { json: chatCompletion(WRITTEN_GOOD) }];
  const { server } = await withGuardedServer(
    (_, n) => replies[n],
    { retry: 1 },
    (s, f) =>
      new OpenAI({ apiKey: "k", baseURL: `${s.url}/v1`, fetch: f, maxRetries: 0 }).chat.completions.create({
        model: "m",
        messages,
        tools: TOOLS_OPENAI as never,
      }),
  );
  assert.equal(server.requests.length, 2);
  const sent = (server.requests[1].json as { messages: Record<string, unknown>[] }).messages;
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(sent[1].content, "Sure.");
});

test("guardFetch Responses stream: a long item id costs once, not at each delta that names its item by output_index", async () => {
  // The gate keyed a part by its item's id written out: each delta naming no item_id wrote out the id
  // its item was added with (n deltas, each the id's length), and so did each content part of an item.
  const n = 2_000;
  const id = `msg_${"x".repeat(100_000)}`;
  const frames = (responsesStream(Array.from({ length: n }, () => "ab ")) as Record<string, unknown>[]).map(
    (f) => {
      const e: Record<string, unknown> = JSON.parse(
        JSON.stringify(f).replaceAll('"msg_1"', JSON.stringify(id)),
      );
      if (e.type === "response.output_text.delta") delete e.item_id;
      return e;
    },
  );
  provider.reply({ sse: frames, named: true });
  const length = (_: unknown, __: unknown[], out: string | undefined) => out?.length ?? 0;
  const [read, written] = await countingWork(JSON, "stringify", responsesRead, length);
  assert.equal(read.final, "ab ".repeat(n));
  assert.ok(written < 20 * id.length + 1_000 * n, `${written} characters written for ${n} deltas`);
});

/** Reads a guarded Responses stream through the openai SDK: its events, text deltas and final response. */
async function responsesRetried(replies: unknown[][]) {
  return await withGuardedServer((_, n) => ({ sse: replies[n], named: true }), { retry: 1 }, async (s, f) => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${s.url}/v1`, fetch: f, maxRetries: 0 });
    const stream = client.responses.stream({
      model: "m",
      input: "Weather?",
      tools: TOOLS_RESPONSES as never,
    });
    const events: Record<string, unknown>[] = [];
    let streamed = "";
    for await (const e of stream) {
      events.push(e as never);
      if (e.type === "response.output_text.delta") streamed += e.delta;
    }
    return { events, streamed, final: await stream.finalResponse() };
  });
}

test("guardFetch Responses stream retry: the prose held with a rejected written call is in finalResponse() as streamed", async () => {
  // The prose shares its delta with the call, or waits in one of its own: it goes out before the retry,
  // whose final snapshot listed only the items finished before (finalResponse() lacked the prose).
  const replies = [
    [responsesStream([`Sure. ${WRITTEN_BAD}`]), responsesStream([], [VALID_CALL])],
    [responsesStream(["Sure. ", ...splitN(WRITTEN_BAD, 5)]), responsesStream(["It is sunny."])],
  ];
  for (const [first, second] of replies) {
    const { value, server } = await responsesRetried([first, second]);
    assert.equal(server.requests.length, 2);
    assert.equal(value.final.output_text, value.streamed);
    assert.match(value.streamed, /^Sure\. (It is sunny\.)?$/);
    const seqs = value.events.map((e) => e.sequence_number);
    assert.deepEqual(seqs, seqs.map((_, i) => i)); // one numbering, no gap, no repeat
    // The retry's items follow the message the client holds.
    const added = value.events.filter((e) => e.type === "response.output_item.added");
    assert.deepEqual(added.map((e) => e.output_index), [0, 1]);
    assert.equal(value.final.output.length, 2);
  }
});

test("guardFetch Responses stream retry: prose in a part that streamed no deltas reaches the client's item", async () => {
  // A server that gives its message's text only whole (in the item done, the final snapshot): the client
  // has no part for a delta, so the prose goes in the item, whose text finalResponse() holds.
  const first = responsesRepeating([], `Sure.\n${WRITTEN_BAD}`).filter((f) =>
    !String(f.type).startsWith("response.content_part.") && f.type !== "response.output_text.done"
  );
  const { value } = await responsesRetried([first, responsesStream(["It is sunny."])]);
  const done = value.events.find((e) => e.type === "response.output_item.done") as {
    item: { content: { text: string }[] };
  };
  assert.deepEqual(done.item.content.map((p) => p.text), ["Sure.\n"]);
  assert.equal(value.final.output_text, "Sure.\nIt is sunny.");
});

test("guardFetch Responses stream retry: an annotation of the prose, held with a rejected written call, reaches the client before the retry", async () => {
  // The part a retry closes for the client is written anew (its last text, its .done events), and the
  // annotations held with the call were dropped: one of text the client keeps came only in the part's
  // .done, never in an output_text.annotation.added, where a server that sends a part's text only whole
  // sends it after that text, held with the call whatever comes. It goes out after the text it cites, as
  // a Cohere citation of kept text does; one past the kept text goes with the call.
  const kept = citation(0, 3);
  const cut = citation(13, 24);
  for (const deltas of [[], ["Let me look. ", WRITTEN_BAD]]) {
    const frames = annotatedFrames(responsesRepeating(deltas, `Let me look. ${WRITTEN_BAD}`), [kept, cut]);
    const { value } = await responsesRetried([frames, responsesStream(["Again."], [VALID_CALL])]);
    const label = JSON.stringify(deltas);
    const seqs = value.events.map((e) => e.sequence_number);
    assert.deepEqual(seqs, seqs.map((_, i) => i), label);
    const own = value.events.filter((e) => e.output_index === 0).map((e) => e.type);
    assert.equal(own.filter((t) => t === "response.output_text.annotation.added").length, 1, label);
    assert.ok(
      own.indexOf("response.output_text.annotation.added") < own.indexOf("response.content_part.done"),
      label,
    );
    const added = value.events.find((e) => e.type === "response.output_text.annotation.added");
    assert.deepEqual((added as { annotation: unknown }).annotation, kept, label);
    assert.equal(value.final.output_text, "Let me look. Again.", label);
    // The closed part, in its .done events and the final response, keeps only the annotation of its words.
    for (const e of value.events) {
      if (e.type === "response.content_part.done" && e.output_index === 0) {
        assert.deepEqual((e.part as { annotations: unknown }).annotations, [kept], label);
      }
    }
    assert.deepEqual(citedPast(value.final.output), [], label);
    assert.deepEqual(
      (value.final.output[0] as { content: { annotations: unknown }[] }).content[0].annotations,
      [kept],
      label,
    );
  }
});

test("guardFetch Responses stream: a frame the gate writes anew keeps its event: name, or its lack of one", async () => {
  // Events that repeat the text otherwise than its deltas are told as the deltas were, and a part added
  // with its text is split in two. Written anew, each frame took its type for its `event:` name: an unnamed
  // frame came named, and a `thread.*` one (which the openai SDK reads apart) as one the SDK applies.
  const post = async (sse: string[]) => {
    provider.reply({ sse });
    const res = await provider.gfetch(`${provider.url()}/v1/responses`, {
      method: "POST",
      body: JSON.stringify({ model: "m", input: "Weather?", stream: true, tools: TOOLS_RESPONSES }),
    });
    return await res.text();
  };
  const frame = (f: Record<string, unknown>, name?: string) =>
    `${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(f)}\n\n`;
  const names = (text: string) => text.split("\n").filter((l) => l.startsWith("event:"));
  const repeating = responsesRepeating(["Sunny ", "in Oslo."], WRITTEN_BAD);
  const told = await post(
    repeating.map((f) =>
      frame(f, f.type === "response.output_text.done" ? "thread.message.delta" : undefined)
    ),
  );
  assert.deepEqual(names(told), ["event: thread.message.delta"]);
  assert.match(told, /event: thread\.message\.delta\ndata: \{[^\n]*"text":"Sunny in Oslo\."/);
  assert.doesNotMatch(told, /<tool_call>/);
  // A part that brings its text: unnamed, both pieces unnamed; named by its type, each by its own.
  const bringing = (responsesStream(["in Oslo."]) as Record<string, unknown>[]).map((f) =>
    f.type === "response.content_part.added" ? { ...f, part: { ...f.part as object, text: "Sunny " } } : f
  );
  assert.deepEqual(names(await post(bringing.map((f) => frame(f)))), []);
  const named = names(await post(bringing.map((f) => frame(f, f.type as string))));
  assert.deepEqual(named.slice(2, 5), [
    "event: response.content_part.added",
    "event: response.output_text.delta",
    "event: response.output_text.delta",
  ]);
});

test("guardFetch Chat and Responses streams: a call written after an opening brace that is no JSON call is judged", async () => {
  // The message opens with "{", so it is held as a possible bare call; once its first key showed it is none
  // (or none came), the hold was given up whole: the <tool_call> inside went to the client unjudged.
  const pieces = (opening: string) =>
    opening.startsWith('{"') ? [opening + WRITTEN_BAD.slice(0, 6), WRITTEN_BAD.slice(6)] : [
      opening,
      ...splitN(WRITTEN_BAD, 5),
    ];
  for (const opening of ["{", " { ", '{"reply": 1} ']) {
    provider.reply({ sse: chatStream(pieces(opening)) });
    const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
    let streamed = "";
    stream.on("content.delta", (e) => (streamed += e.delta));
    const chat = await stream.finalChatCompletion();
    assert.equal(chat.choices[0].message.content, streamed);
    assert.doesNotMatch(streamed, /<tool_call>/);
    assert.match(streamed, /^\s*\{/); // the brace is prose, and stays
    assert.match(streamed, /delete_everything/); // named in the reason
    assert.equal(provider.events[0].verdict.allowed, false);

    provider.reply({ sse: responsesStream(pieces(opening)), named: true });
    const { streamed: text, final } = await responsesRead();
    assert.equal(final, text);
    assert.doesNotMatch(text, /<tool_call>/);
    assert.match(text, /delete_everything/);
    assert.equal(provider.events[0].verdict.allowed, false);
  }
});

test("guardFetch Chat and Anthropic streams: a marker split by a frame without text (an empty delta, a ping) is judged", async () => {
  // "<tool_" waited for the next piece; a frame without text in between let it out as prose, and the rest of
  // the marker then passed unwatched.
  const [head, rest] = [WRITTEN_BAD.slice(0, 6), WRITTEN_BAD.slice(6)];
  for (const between of [{ content: "" }, { reasoning_content: "hmm" }]) {
    const frames = chatStream(["Sure. " + head, rest]);
    frames.splice(3, 0, chatChunk(between));
    provider.reply({ sse: frames });
    const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
    const chat = await stream.finalChatCompletion();
    const content = String(chat.choices[0].message.content);
    assert.doesNotMatch(content, /tool_call|call>/);
    assert.match(content, /^Sure\./);
    assert.equal(provider.events[0].verdict.allowed, false);
  }
  const frames = anthropicStream(["Sure. " + head, rest]) as Record<string, unknown>[];
  frames.splice(3, 0, { type: "ping" });
  provider.reply({ sse: frames, named: true });
  const { text } = await anthropicRead();
  assert.doesNotMatch(text, /tool_call|call>/);
  assert.match(text, /delete_everything/); // named in the reason
  assert.equal(provider.events[0].verdict.allowed, false);
});

test("guardFetch Chat stream: a word-like marker begun inside a word (checkfunctool|s[…) is judged, as the body reads it", async () => {
  // The extractor reads `functools[` and `function call<|role_sep|>` wherever they start; the watch let a
  // piece ending inside a word go out whole, so the marker's rest came as text with no marker in it, and
  // a rejected call's arguments reached the client unjudged.
  const call = '{"name": "delete_everything", "arguments": {"path": "/etc"}}';
  for (
    const pieces of [["Done, checkfunctool", `s[${call}`, "]"], ["Nofunction call<|role_", `sep|>\n${call}`]]
  ) {
    provider.reply({ sse: chatStream(pieces) });
    const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
    const content = String((await stream.finalChatCompletion()).choices[0].message.content);
    assert.doesNotMatch(content, /\/etc/);
    assert.match(content, /delete_everything was rejected/);
    assert.equal(provider.events[0].verdict.allowed, false);
    const body = { choices: [{ index: 0, message: { role: "assistant", content: pieces.join("") } }] };
    assert.equal((await gateCompletion({ tools: TOOLS_OPENAI }, body)).verdict.allowed, false);
  }
});

test("guardFetch Ollama stream: a marker split by a chunk without text (empty, or thinking) is cut whole, as in the body", async () => {
  // A chunk that is not the last says the text goes on: "<tool_" before it waited for the next piece
  // instead of going out as prose, where a rejected call left it in the client's text.
  const [head, rest] = [WRITTEN_BAD.slice(0, 6), WRITTEN_BAD.slice(6)];
  for (const between of [{ content: "" }, { content: "", thinking: "hmm" }]) {
    const lines = ollamaStream(["Sure. " + head, rest]) as Record<string, unknown>[];
    lines.splice(1, 0, { ...lines[0], message: { role: "assistant", ...between } });
    provider.reply({ ndjson: lines });
    const res = await provider.gfetch(`${provider.url()}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages, stream: true, tools: TOOLS_OPENAI }),
    });
    const text = (await res.text()).trim().split("\n").map((l) => JSON.parse(l).message.content).join("");
    assert.doesNotMatch(text, /<tool|call>/);
    assert.match(text, /^Sure\. \n\ntoolguard[\s\S]*delete_everything/); // named in the reason
    assert.equal(provider.events[0].verdict.allowed, false);
  }
});

test("guardFetch Ollama stream: the reason is set apart by a blank line only after content that said something, as in its body", async () => {
  // The stream counted thinking as text the client has: an answer that only thought before its rejected call
  // got the reason after a blank line, where its body has it alone.
  const bad = { name: "delete_everything", args: {} };
  const shapes: [string, Record<string, unknown>[]][] = [
    ["only thought", [{ content: "", thinking: "The user wants it gone." }]],
    ["spoke", [{ content: "Sure." }]],
  ];
  for (const [onRejected, calls] of [["withhold-turn", [bad]], ["drop-call", [bad, VALID_CALL]]] as const) {
    for (const [shape, pieces] of shapes) {
      const lines = ollamaStream([], [...calls]) as Record<string, unknown>[];
      lines.unshift(...pieces.map((m) => ({ ...lines[0], message: { role: "assistant", ...m } })));
      const { value } = await withGuardedServer(() => ({ ndjson: lines }), { onRejected }, async (s, f) => {
        const res = await f(`${s.url}/api/chat`, {
          method: "POST",
          body: JSON.stringify({ model: "m", messages, stream: true, tools: TOOLS_OPENAI }),
        });
        return await res.text();
      });
      const text = value.trim().split("\n").map((l) => JSON.parse(l).message.content).join("");
      const whole = ollamaChat(pieces.map((m) => m.content).join(""), [...calls]);
      const gated = await gateCompletion({ tools: TOOLS_OPENAI }, whole, { dialect: "ollama", onRejected });
      assert.equal(gated.verdict.allowed, false);
      const want = (gated.response as { message: { content: string } }).message.content;
      assert.equal(text, want, `${onRejected}, ${shape}`);
    }
  }
});

test("guardFetch Chat and Anthropic streams: a marker split by a frame that ends the text, text going on after it, is judged", async () => {
  // "[" went out as prose at a frame that should end the text (a finish, the end of a text block); a stream
  // that goes on with "TOOL_CALLS]…" after it then passed a rejected call whole, unwatched.
  const [head, rest] = ["[", "TOOL_CALLS]delete_everything[ARGS]{}"];
  const frames = chatStream(["Sure. " + head, rest]);
  frames.splice(3, 0, chatChunk({}, "stop"));
  provider.reply({ sse: frames });
  const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
  let streamed = "";
  stream.on("content", (delta) => (streamed += delta));
  await stream.finalChatCompletion();
  assert.doesNotMatch(streamed, /ARGS/);
  assert.match(streamed, /^Sure\./);
  assert.equal(provider.events[0].verdict.allowed, false);
  const blocks = anthropicStream(["Sure. " + head]) as Record<string, unknown>[];
  const second = [
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: rest } },
    { type: "content_block_stop", index: 1 },
  ];
  blocks.splice(blocks.findIndex((f) => f.type === "content_block_stop") + 1, 0, ...second);
  provider.reply({ sse: blocks, named: true });
  const { streamed: text } = await anthropicRead();
  assert.doesNotMatch(text, /ARGS/);
  assert.match(text, /delete_everything/); // named in the reason
  assert.equal(provider.events[0].verdict.allowed, false);
});

test("guardFetch Chat stream: tails that may become a marker, each split from the text by an empty delta, cost linear work", async () => {
  // Each tail ("<") waited as a marker does, and its release asked the whole text again: quadratic.
  const n = 600;
  const frames = chatStream([]);
  const body: unknown[] = [];
  for (let i = 0; i < n; i++) {
    body.push(chatChunk({ content: "ab <" }), chatChunk({ content: "" }), chatChunk({ content: "x " }));
  }
  frames.splice(1, 0, ...body);
  provider.reply({ sse: frames });
  const read = async () => {
    const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
    return (await stream.finalChatCompletion()).choices[0].message.content;
  };
  // What the regular expressions read, by the length of the text each is run on.
  const weigh = (_: RegExp, args: string[]) => String(args[0]).length;
  const [content, read_] = await countingWork(RegExp.prototype, "exec", read, weigh);
  assert.equal(content, "ab <x ".repeat(n));
  assert.ok(read_ < 50 * n, `${read_} characters read by regular expressions for ${n} tails`);
});

test("guardFetch Chat stream: a call written into a chunk's message (not its delta) is judged", async () => {
  // The openai SDK takes a chunk's `choices[].message` as the choice's message so far; the watch read only
  // deltas, so a call written there reached the final completion unjudged.
  const frames = chatStream(["Sure. "]);
  const chunk = chatChunk({});
  (chunk.choices as Record<string, unknown>[])[0].message = { role: "assistant", content: WRITTEN_BAD };
  frames.splice(2, 0, chunk);
  provider.reply({ sse: frames });
  const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
  const content = String((await stream.finalChatCompletion()).choices[0].message.content);
  assert.doesNotMatch(content, /tool_call/);
  assert.match(content, /delete_everything/); // named in the reason
  assert.equal(provider.events[0].verdict.allowed, false);
});

test("guardFetch Chat stream: a fence whose language line can no longer name JSON goes out before the line ends", async () => {
  // "```json {" waited for its line break, to the end of the stream when none came: the client had nothing of
  // it while the model wrote on. The server sends the rest only once the client has the text (or, should the
  // gate withhold it, after 20 s, and the test then fails rather than hangs).
  let seen!: (early: boolean) => void;
  const early = new Promise<boolean>((resolve) => (seen = resolve));
  const fallback = setTimeout(() => seen(false), 20_000);
  const frames = chatStream(["Try ```js", "on { here", ", in prose.", " More prose."]);
  provider.reply({ sse: frames, holdBefore: { frame: 4, until: early } });
  const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages, tools: TOOLS_OPENAI, stream: true }),
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let got = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    got += value;
    if (got.includes("in prose.")) seen(true);
  }
  clearTimeout(fallback);
  assert.equal(await early, true, "the fence's text reached the client while the server held the rest");
  const text = sseData(got)
    .map((e) => e.choices[0]?.delta?.content ?? "").join("");
  assert.equal(text, "Try ```json { here, in prose. More prose.");
});

test("guardFetch Chat stream, a turn withheld: JSON in prose that names no declared tool stays, as in the body", async () => {
  // It is no call (extractToolCalls, given the declared tools, reads none in it) and an allowed turn keeps
  // it, as the body gate does; the stream cut the held text's calls again, read without the tools.
  const data = '{"name": "Ada", "arguments": {"ok": true}}';
  provider.reply({ sse: chatStream(["Sure.\n", WRITTEN_BAD, `\nYour record is ${data}.`]) });
  const stream = await openai().chat.completions.create({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  assert.equal(provider.events[0].verdict.allowed, false);
  assert.doesNotMatch(text, /<tool_call>/);
  assert.ok(text.startsWith(`Sure.\n\nYour record is ${data}.\n\ntoolguard stopped`), text);
});

test("guardFetch Chat stream: a call after harmony reasoning far into a long answer is held, wherever the look-back is cut", async () => {
  // The watcher reads a window of the released text; it began inside the second `<|start|>`, and read back
  // without that token the analysis header took the first header's recipient for its own: no reasoning, so
  // the `<think>` in it opened a block that hid the call, and the call went out before it was judged.
  const head = "I would write <tool_call> tags for that. " + "x ".repeat(600) +
    "<|start|>assistant to=functions.f";
  const analysis = "<|start|>assistant<|channel|>analysis<|message|><think> hmm<|end|>";
  const from = head.length + 2 + 512; // (the window keeps 512 characters before the release point)
  const text = head + analysis + " ".repeat(from - head.length - analysis.length);
  const call = '[TOOL_CALLS][{"name": "delete_everything", "arguments": {}}]';
  provider.reply({ sse: chatStream([...splitN(text, Math.ceil(text.length / 50)), call, "</think> Done."]) });
  const stream = await openai().chat.completions.create({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  let got = "";
  for await (const chunk of stream) got += chunk.choices[0]?.delta?.content ?? "";
  assert.doesNotMatch(got, /\[TOOL_CALLS\]/);
  assert.ok(got.startsWith(text), "the text before the call went out");
  assert.equal(provider.events[0]?.verdict.allowed, false);
});

/** The text of a Chat stream's choice 0 as a client joins it, from the wire. */
function chatWireText(wire: string): string {
  return sseData(wire)
    .map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
}

test("guardFetch Chat stream: a cut call leaves no call made of the text around it, withheld or dropped", async () => {
  // `{"na` went out as prose; the text after the rejected call (`me": …`) completes it: sent on, it joined
  // into a call (city: 7, rejected if judged) that the judge never read, in the text of a withheld turn.
  const spliced = `Note {"na${WRITTEN_BAD}me": "get_weather", "arguments": {"city": 7}}`;
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const text = onRejected === "drop-call" ? `${spliced}\n${WRITTEN_GOOD}` : spliced;
    const run = await withGuardedServer(
      () => ({ sse: chatStream([text]) }),
      { onRejected },
      async (server, f) => {
        const res = await f(`${server.url}/v1/chat/completions`, {
          method: "POST",
          body: JSON.stringify({ model: "m", messages, tools: TOOLS_OPENAI, stream: true }),
        });
        return chatWireText(await res.text());
      },
    );
    assert.doesNotMatch(run.value, /"name": "get_weather", "arguments": \{"city": 7\}/, onRejected);
    assert.match(run.value, /toolguard stopped/, onRejected);
  }
});

test("guardFetch Cohere stream withheld: text after a call begun at a block's end does not complete its start into a call", async () => {
  // `{"nam` ends a text block; the next block goes on with the call's rest (rejected: city is a number),
  // then ` e": …`. The start went out at the block's end, and after the cut joined ` e": …` into a call the
  // judge never read; it is held across the block's end now (a body reads its blocks joined), so it is cut
  // with the call and what follows is prose.
  const block = (index: number, text: string) => [
    { type: "content-start", index, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index, delta: { message: { content: { text } } } },
    { type: "content-end", index },
  ];
  const frames = [
    {
      id: "c1",
      type: "message-start",
      delta: { message: { role: "assistant", content: [], tool_calls: [] } },
    },
    ...block(0, 'Let me {"nam'),
    ...block(1, 'e": "get_weather", "arguments": {"city": 5}} e": "get_weather", "arguments": {"city": 9}}'),
    { type: "message-end", delta: { finish_reason: "COMPLETE", usage: { tokens: { output_tokens: 9 } } } },
  ];
  provider.reply({ sse: frames, named: true });
  const events = sseData(await cohereWire());
  const text = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text).join(
    "",
  );
  assert.equal(provider.events[0].verdict.allowed, false);
  assert.doesNotMatch(text, /\{"name": "get_weather"/);
  assert.match(text, /^Let me {2}e": "get_weather", "arguments": \{"city": 9\}\}\n\ntoolguard stopped/);
});

/** The texts of an Anthropic message, a Cohere v2 message or a Responses message item (its `content`). */
const blockTexts = (content: unknown[]) =>
  content.flatMap((b) => {
    const block = b as Record<string, unknown>;
    return block.type === "text" || block.type === "output_text" ? [String(block.text)] : [];
  });

test("guardFetch Responses stream: a marker begun at a message's end is held across it, as a body reads the messages joined", async () => {
  // The message's end ended the text: `<tool_call` went out there, while the body cuts it with the call.
  const first = "Sure.\n" + WRITTEN_BAD.slice(0, 10);
  const second = WRITTEN_BAD.slice(10) + "\nDone.";
  const one = responsesStream([first]) as Record<string, unknown>[];
  const two = (responsesStream([second]) as Record<string, unknown>[]).slice(1, -1).map((e) =>
    JSON.parse(
      JSON.stringify(e).replaceAll('"msg_1"', '"msg_2"').replaceAll('"output_index":0', '"output_index":1'),
    )
  );
  const items = [...one.slice(1, -1), ...two].filter((e) => e.type === "response.output_item.done")
    .map((e) => e.item);
  const final = { ...(one.at(-1)!.response as Record<string, unknown>), output: items };
  const frames = [one[0], ...one.slice(1, -1), ...two, { type: "response.completed", response: final }]
    .map((e, i) => ({ ...e, sequence_number: i }));
  const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final);
  const bodyText = ((body.response as Record<string, unknown>).output as Record<string, unknown>[])
    .flatMap((o) => o.type === "message" ? blockTexts(o.content as unknown[]) : []).join("");
  assert.match(bodyText, /^Sure\.\n\nDone\.\n\ntoolguard stopped/);
  provider.reply({ sse: frames, named: true });
  const stream = openai().responses.stream({
    model: "m",
    input: "Weather?",
    tools: TOOLS_RESPONSES as never,
  });
  let streamed = "";
  for await (const e of stream) if (e.type === "response.output_text.delta") streamed += e.delta;
  const response = await stream.finalResponse();
  assert.doesNotMatch(streamed, /<tool/);
  assert.equal(streamed.replace(/\s+/g, ""), bodyText.replace(/\s+/g, ""));
  assert.equal(response.output_text, streamed);
});

test("guardFetch Anthropic and Cohere streams: a marker begun at a text block's end is held across it, as a body reads the blocks joined", async () => {
  // The block's end ended the text: `<tool_call` went out there, while the body cuts it with the call.
  const first = "Sure.\n" + WRITTEN_BAD.slice(0, 10);
  const second = WRITTEN_BAD.slice(10) + "\nDone.";
  const anthropicFrames = anthropicStream([first]) as Record<string, unknown>[];
  const stop = anthropicFrames.findIndex((f) => f.type === "content_block_stop");
  anthropicFrames.splice(
    stop + 1,
    0,
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: second } },
    { type: "content_block_stop", index: 1 },
  );
  const message = anthropicMessage(null);
  message.content = [{ type: "text", text: first }, { type: "text", text: second }];
  const body = await gateCompletion({ tools: TOOLS_ANTHROPIC }, message);
  const bodyText = blockTexts((body.response as Record<string, unknown>).content as unknown[]).join("");
  assert.match(bodyText, /^Sure\.\n\nDone\.\n\ntoolguard stopped/);
  const flat = (s: string) => s.replace(/\s+/g, "");
  provider.reply({ sse: anthropicFrames, named: true });
  const { streamed, final } = await anthropicRead();
  assert.doesNotMatch(streamed, /<tool/);
  assert.equal(flat(streamed), flat(bodyText));
  assert.equal(blockTexts(final.content).join(""), streamed);

  const block = (index: number, text: string) => [
    { type: "content-start", index, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index, delta: { message: { content: { text } } } },
    { type: "content-end", index },
  ];
  provider.reply({
    sse: [
      {
        id: "c1",
        type: "message-start",
        delta: { message: { role: "assistant", content: [], tool_calls: [] } },
      },
      ...block(0, first),
      ...block(1, second),
      { type: "message-end", delta: { finish_reason: "COMPLETE", usage: { tokens: { output_tokens: 9 } } } },
    ],
    named: true,
  });
  const events = sseData(await cohereWire());
  const text = events.filter((e) => e.type === "content-delta").map((e) => e.delta.message.content.text).join(
    "",
  );
  const cohere = await gateCompletion({ tools: TOOLS_OPENAI }, {
    id: "c1",
    finish_reason: "COMPLETE",
    message: { role: "assistant", content: message.content },
  }, { dialect: "cohere" });
  const cohereText = blockTexts(
    ((cohere.response as Record<string, unknown>).message as Record<string, unknown>)
      .content as unknown[],
  ).join("");
  assert.doesNotMatch(text, /<tool/);
  assert.equal(flat(text), flat(cohereText));
});

/** `{"na`, a rejected call, then `me": …`: cut out, the call leaves a call (city: 7) the judge never read. */
const SPLICED = `Note {"na${WRITTEN_BAD}me": "get_weather", "arguments": {"city": 7}}`;
/** The call `SPLICED` makes once its rejected call is cut, as a client's text reader finds it. */
const UNREAD = /"name": "get_weather", "arguments": \{"city": 7\}/;

test("gateCompletion: a cut call leaves no call made of the text around it, in Ollama, Chat and Anthropic bodies, withheld or dropped", async () => {
  const bodies = {
    ollama: {
      body: (text: string) => ollamaChat(text),
      text: (r: Record<string, unknown>) => String((r.message as Record<string, unknown>).content),
      tools: TOOLS_OPENAI,
    },
    openai_chat: {
      body: (text: string) => chatCompletion(text),
      text: (r: Record<string, unknown>) =>
        String((r.choices as Record<string, Record<string, unknown>>[])[0].message.content),
      tools: TOOLS_OPENAI,
    },
    anthropic: {
      body: (text: string) => anthropicMessage(text),
      text: (r: Record<string, unknown>) =>
        (r.content as Record<string, unknown>[]).map((b) => b.text ?? "").join("\n"),
      tools: TOOLS_ANTHROPIC,
    },
  };
  for (const [dialect, shape] of Object.entries(bodies)) {
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const text = onRejected === "drop-call" ? `${SPLICED}\n${WRITTEN_GOOD}` : SPLICED;
      const request = { model: "m", messages, tools: shape.tools };
      const gated = await gateCompletion(request, shape.body(text), { onRejected });
      const label = `${dialect} ${onRejected}`;
      assert.equal(gated.dialect, dialect, label);
      assert.equal(gated.verdict.allowed, false, label);
      const got = shape.text(gated.response as Record<string, unknown>);
      assert.doesNotMatch(got, UNREAD, label);
      assert.doesNotMatch(got, /<tool_call>/, label); // drop-call: the turn is withheld whole
      // (drop-call: the good call, withheld with the bad one, did not run either)
      const lead = onRejected === "drop-call"
        ? /toolguard stopped this turn's tool calls; the accepted one did not run either\.\n/
        : /toolguard stopped this turn's tool call\.\n/;
      assert.match(got, lead, label);
    }
  }
  // A cut that leaves only the calls kept still keeps them.
  const text = `Note {"na" ${WRITTEN_BAD} me": 1}\n${WRITTEN_GOOD}`;
  const request = { model: "m", messages, tools: TOOLS_OPENAI };
  const gated = await gateCompletion(request, ollamaChat(text), { onRejected: "drop-call" });
  const got = String(
    ((gated.response as Record<string, unknown>).message as Record<string, unknown>).content,
  );
  assert.match(got, /toolguard removed the rejected tool call/);
  assert.ok(got.includes(WRITTEN_GOOD) && !got.includes(WRITTEN_BAD), got);
});

test("guardFetch Chat: a whole answer's cut call leaves no call made of the text around it", async () => {
  provider.reply({ json: chatCompletion(SPLICED) });
  const got = await openai().chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never });
  const text = String(got.choices[0].message.content);
  assert.equal(provider.events[0].verdict.allowed, false);
  assert.doesNotMatch(text, UNREAD);
  assert.match(text, /^toolguard stopped this turn's tool call\.\n/);
});

test("guardFetch Responses stream withheld: text kept after a refusal item stays after it, as in the body", async () => {
  // The held text began in the first message: the text kept from the third went there, ahead of the
  // refusal that came before it (widened fuzz, responses seeds 11004 and 10775).
  const rename = (events: unknown[], id: string, oi: number) =>
    (events as Record<string, unknown>[]).slice(1, -1).map((e) =>
      JSON.parse(
        JSON.stringify(e).replaceAll('"msg_1"', `"${id}"`).replaceAll(
          '"output_index":0',
          `"output_index":${oi}`,
        ),
      )
    );
  const one = responsesStream(["Sure.\n", WRITTEN_BAD.slice(0, 20), WRITTEN_BAD.slice(20)]) as Record<
    string,
    unknown
  >[];
  const item = { id: "msg_2", type: "message", status: "completed", role: "assistant" };
  const part = { type: "refusal", refusal: "I can't." };
  const at = { item_id: "msg_2", output_index: 1, content_index: 0 };
  const refusal = [
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { ...item, status: "in_progress", content: [] },
    },
    { type: "response.content_part.added", ...at, part: { type: "refusal", refusal: "" } },
    { type: "response.refusal.delta", ...at, delta: "I can't." },
    { type: "response.refusal.done", ...at, refusal: "I can't." },
    { type: "response.content_part.done", ...at, part },
    { type: "response.output_item.done", output_index: 1, item: { ...item, content: [part] } },
  ];
  const three = rename(responsesStream([" Done."]), "msg_3", 2);
  const body1 = one.slice(1, -1);
  const items = [...body1, ...refusal, ...three].filter((e) => e.type === "response.output_item.done")
    .map((e) => e.item);
  const final = { ...(one.at(-1)!.response as Record<string, unknown>), output: items };
  const frames = [one[0], ...body1, ...refusal, ...three, { type: "response.completed", response: final }]
    .map((e, i) => ({ ...e, sequence_number: i }));
  const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final);
  /** Each message part of an output, in order: its text or refusal, without the reason. */
  const parts = (output: unknown[], reason: RegExp) =>
    (output as Record<string, unknown>[]).flatMap((o) =>
      o.type === "message"
        ? (o.content as Record<string, unknown>[]).map((p) =>
          String(p.text ?? `refusal: ${p.refusal}`).replace(reason, "").trim()
        )
        : []
    ).filter((p) => p !== "");
  const reason = /\s*toolguard stopped[\s\S]*$/;
  const want = parts((body.response as Record<string, unknown>).output as unknown[], reason);
  assert.deepEqual(want, ["Sure.", "refusal: I can't.", "Done."]);
  provider.reply({ sse: frames, named: true });
  const stream = openai().responses.stream({
    model: "m",
    input: "Weather?",
    tools: TOOLS_RESPONSES as never,
  });
  const order: string[] = [];
  for await (const e of stream) {
    if (e.type === "response.output_text.delta") order.push(e.delta);
    if (e.type === "response.refusal.delta") order.push(`refusal: ${e.delta}`);
  }
  const response = await stream.finalResponse();
  assert.deepEqual(parts(response.output, reason), want);
  const streamed = order.join("");
  assert.ok(streamed.indexOf("refusal: I can't.") < streamed.indexOf("Done."), streamed);
  assert.doesNotMatch(streamed, /<tool|"arguments"/);
});

/** An Anthropic stream of `blocks` (a string: a text block of that text in pieces of 5; null: a thinking block). */
function anthropicBlocks(blocks: (string | null)[]): unknown[] {
  const [start, ...rest] = anthropicStream([]) as Record<string, unknown>[];
  const frames: unknown[] = [start];
  blocks.forEach((text, index) => {
    if (text === null) {
      frames.push(
        {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
        { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: "Hmm." } },
        { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "sig" } },
        { type: "content_block_stop", index },
      );
      return;
    }
    frames.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const piece of splitN(text, Math.ceil(text.length / 5))) {
      frames.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    }
    frames.push({ type: "content_block_stop", index });
  });
  return [...frames, ...rest.filter((f) => f.type !== "ping")];
}

/**
 * The Anthropic answer of `blocks` (as `anthropicBlocks` streams it) gated whole and streamed, the stream
 * read by the SDK: the body's result and its content blocks, and the final message the client read.
 */
async function anthropicBothWays(blocks: (string | null)[], onRejected: "withhold-turn" | "drop-call") {
  const message = anthropicMessage(null);
  message.content = blocks.map((text) =>
    text === null ? { type: "thinking", thinking: "Hmm.", signature: "sig" } : { type: "text", text }
  );
  const body = await gateCompletion({ tools: TOOLS_ANTHROPIC }, message, { onRejected });
  const whole = (body.response as Record<string, unknown>).content as Record<string, unknown>[];
  const { value } = await withGuardedServer(
    () => ({ sse: anthropicBlocks(blocks), named: true }),
    { onRejected },
    (server, f) => anthropicRead(new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f })),
  );
  return { body, whole, final: value.final };
}

test("guardFetch Anthropic stream: a rejected written call leaves no empty text block, and the prose held with it stays in its block", async () => {
  // "<" may begin a marker, so block 0's end waits with it, and " Hi" (block 1) is held with the call: it
  // was all written into block 0, block 1 left empty; block 3 (a call alone) was left empty too. The API
  // refuses an empty text block in a message sent back, and the body drops both.
  // (with drop-call, the allowed call in block 1 stays)
  const blocks = ["Sure <", ` Hi${WRITTEN_GOOD}`, null, WRITTEN_BAD, " Done."];
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const { body, whole: bodyContent, final } = await anthropicBothWays(blocks, onRejected);
    assert.deepEqual(final.content.map((b) => b.type), ["text", "text", "thinking", "text"], onRejected);
    const texts = blockTexts(final.content);
    assert.ok(texts.every((t) => t !== ""), JSON.stringify(texts));
    // Each block's text where the body keeps it, the reason too: ending the text after the call's block.
    assert.deepEqual(bodyContent.map((b) => b.type), ["text", "text", "thinking", "text"], onRejected);
    const flat = (s: string) => s.replace(/\s+/g, "");
    assert.deepEqual(texts.map(flat), blockTexts(bodyContent).map(flat), onRejected);
    assert.ok(texts.at(-1)!.endsWith(body.reason!), onRejected);
  }
});

test("guardFetch Cohere stream: a rejected written call leaves no empty text block, and the prose held with it stays in its block", async () => {
  // As the Anthropic stream's: block 2 held only a call, block 1's start went out before its text was held.
  const texts = ["Sure <", ` Hi${WRITTEN_GOOD}`, WRITTEN_BAD, " Done."];
  const frames = cohereBlocks(texts.map((text) => splitN(text, Math.ceil(text.length / 5))));
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const body = await gateCompletion({ tools: TOOLS_OPENAI }, {
      id: "c1",
      finish_reason: "COMPLETE",
      message: { role: "assistant", content: texts.map((text) => ({ type: "text", text })) },
    }, { dialect: "cohere", onRejected });
    const bodyContent = ((body.response as Record<string, unknown>).message as Record<string, unknown>)
      .content as Record<string, unknown>[];
    const { value: wire } = await withGuardedServer(
      () => ({ sse: frames, named: true }),
      { onRejected },
      (server, f) => cohereWire({ f, url: server.url }),
    );
    const blocks = cohereBlockTexts(sseData(wire));
    assert.ok(blocks.every((t) => t !== ""), `${onRejected}: ${JSON.stringify(blocks)}`);
    const flat = (s: string) => s.replace(/\s+/g, "");
    assert.deepEqual(blocks.map(flat), blockTexts(bodyContent).map(flat), onRejected);
    assert.ok(blocks.at(-1)!.endsWith(body.reason!), onRejected);
  }
});

test("guardFetch Anthropic and Cohere: a blank text block the model sent before prose and a rejected written call stays, streamed and whole", async () => {
  // A stream sent block 1 (white space alone) when block 2's words came, before the call began; the body
  // dropped it, and read otherwise (one block fewer). Blank blocks right before the call's block still go
  // in both, as Responses parts do (fuzz anthropic/cohere withhold seeds 27, 112, 520, 1253, 2280).
  const texts = ["Sure.", "\n\n", "The weather.", `Let me look. ${WRITTEN_BAD}`];
  const { whole, final } = await anthropicBothWays(texts, "withhold-turn");
  assert.deepEqual(blockTexts(final.content).slice(0, 3), ["Sure.", "\n\n", "The weather."]);
  assert.deepEqual(blockTexts(whole).slice(0, 3), ["Sure.", "\n\n", "The weather."]);
  assert.equal(whole.length, final.content.length);
  const body = await gateCompletion({ tools: TOOLS_OPENAI }, {
    id: "c1",
    finish_reason: "COMPLETE",
    message: { role: "assistant", content: texts.map((text) => ({ type: "text", text })) },
  }, { dialect: "cohere" });
  const content = ((body.response as Record<string, unknown>).message as Record<string, unknown>)
    .content as Record<string, unknown>[];
  provider.reply({ sse: cohereBlocks(texts.map((text) => splitN(text, 3))), named: true });
  const blocks = cohereBlockTexts(sseData(await cohereWire()));
  assert.deepEqual(blocks.slice(0, 3), ["Sure.", "\n\n", "The weather."]);
  assert.deepEqual(blockTexts(content), blocks);
  // (right before the call's block, a blank block goes with the call, streamed and whole)
  const next = ["Sure.", "\n\n", WRITTEN_BAD];
  const { whole: gone, final: goneFinal } = await anthropicBothWays(next, "withhold-turn");
  assert.equal(gone.length, 2);
  assert.equal(goneFinal.content.length, 2);
});

test("guardFetch Chat and Anthropic: white space before a rejected call reads the same streamed and whole", async () => {
  // It reached the client before the call began, where the body trimmed it away: " toolguard …" streamed
  // read "toolguard …" whole; blank text alone counted as said, and a blank line went before the reason.
  const bad = { name: "delete_everything", args: {} };
  const chat = async (body: Record<string, unknown>, sse: unknown[]) => {
    const whole = await gateCompletion({ tools: TOOLS_OPENAI }, body);
    const choices = (whole.response as { choices: { message: { content: string } }[] }).choices;
    provider.reply({ sse });
    const stream = await openai().chat.completions.create({
      model: "m",
      messages,
      tools: TOOLS_OPENAI as never,
      stream: true,
    });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
    return { streamed, whole: choices[0].message.content };
  };
  for (const prose of [" ", "\n", "Sure. ", "Sure.\n"]) {
    const written = await chat(chatCompletion(prose + WRITTEN_BAD), chatStream([prose, WRITTEN_BAD]));
    assert.equal(written.streamed, written.whole, JSON.stringify(prose));
    const native = await chat(chatCompletion(prose, [bad]), chatStream([prose], [bad]));
    assert.equal(native.streamed, native.whole, JSON.stringify(prose));
  }
  // Anthropic: the reason's block opens on no blank line after a block of white space alone.
  provider.reply({ sse: anthropicStream([" "], [bad]), named: true });
  const { final } = await anthropicRead();
  assert.match(blockTexts(final.content).at(-1)!, /^toolguard stopped/);
});

test("guardFetch Responses stream: JSON the answer opens with after its reasoning is held, as a body reads it with the call glued to it", async () => {
  // An object naming no declared tool, glued to a rejected call in the next message: the extractor reads
  // the JSON run as the answer's calls and a body cuts it all; the stream let the object out (it came after
  // `<think>…</think>`, so the message did not seem to open with JSON).
  const other = '{"name": "delete_everything", "arguments": {"path": "/"}}';
  const bad = '{"name": "get_weather", "arguments": {"city": "Oslo", "units": "kelvin"}}';
  const item = (text: string, n: number) =>
    (responsesStream([text]) as Record<string, unknown>[]).slice(1, -1).map((e) =>
      JSON.parse(
        JSON.stringify(e).replaceAll('"msg_1"', `"msg_${n}"`).replaceAll(
          '"output_index":0',
          `"output_index":${n}`,
        ),
      )
    );
  const one = responsesStream([""]) as Record<string, unknown>[];
  const events = [...item(`<think>a</think>\n\n${other}`, 0), ...item(bad, 1)];
  const output = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
  const final = { ...(one.at(-1)!.response as Record<string, unknown>), output };
  const frames = [one[0], ...events, { type: "response.completed", response: final }]
    .map((e, i) => ({ ...e, sequence_number: i }));
  const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final);
  assert.equal(body.verdict.allowed, false);
  assert.doesNotMatch(JSON.stringify(body.response), /delete_everything/);
  provider.reply({ sse: frames, named: true });
  const { streamed, final: got } = await responsesRead();
  assert.doesNotMatch(streamed, /delete_everything/);
  assert.doesNotMatch(got, /delete_everything/);
});

/**
 * The text blocks a client reads of the text `blocks` (each in its pieces) streamed through the gate, and
 * those of the same answer gated whole, as Anthropic (read by its SDK) and as Cohere (as the AI SDK reads
 * it: the text of each content-delta, by index), under each way of handling a rejected call.
 */
async function blocksBothWays(
  blocks: string[][],
): Promise<{ label: string; streamed: string[]; whole: string[] }[]> {
  const out: { label: string; streamed: string[]; whole: string[] }[] = [];
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const message = anthropicMessage(null);
    message.content = blocks.map((pieces) => ({ type: "text", text: pieces.join("") }));
    const body = await gateCompletion({ tools: TOOLS_ANTHROPIC }, message, { onRejected });
    const whole = (body.response as Record<string, unknown>).content as unknown[];
    const [start, ...rest] = anthropicStream([]) as Record<string, unknown>[];
    const frames = [
      start,
      ...blocks.flatMap((pieces, index) => [
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
        ...pieces.map((text) => ({
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text },
        })),
        { type: "content_block_stop", index },
      ]),
      ...rest.filter((f) => f.type !== "ping"),
    ];
    const { value } = await withGuardedServer(
      () => ({ sse: frames, named: true }),
      { onRejected },
      (server, f) => anthropicRead(new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f })),
    );
    out.push({
      label: `anthropic ${onRejected}`,
      streamed: blockTexts(value.final.content),
      whole: blockTexts(whole),
    });
  }
  const cohereFrames = cohereBlocks(blocks);
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const body = await gateCompletion({ tools: TOOLS_OPENAI }, {
      id: "c1",
      finish_reason: "COMPLETE",
      message: {
        role: "assistant",
        content: blocks.map((pieces) => ({ type: "text", text: pieces.join("") })),
      },
    }, { dialect: "cohere", onRejected });
    const whole = ((body.response as Record<string, unknown>).message as Record<string, unknown>)
      .content as unknown[];
    const { value: wire } = await withGuardedServer(
      () => ({ sse: cohereFrames, named: true }),
      { onRejected },
      (server, f) => cohereWire({ f, url: server.url }),
    );
    out.push({
      label: `cohere ${onRejected}`,
      streamed: cohereBlockTexts(sseData(wire)),
      whole: blockTexts(whole),
    });
  }
  return out;
}

/**
 * Streams the text `blocks` (each in its pieces) through the gate as Anthropic and as Cohere, and checks
 * that the client keeps no block of white space alone, and each block's text where the body keeps it.
 */
async function blankBlocksGo(blocks: string[][]): Promise<void> {
  /** A text without its white space (the reason, in the call's place in both, stays). */
  const flat = (s: string) => s.replace(/\s+/g, "");
  for (const { label, streamed, whole } of await blocksBothWays(blocks)) {
    assert.ok(streamed.every((t) => t.trim() !== ""), `${label}: ${JSON.stringify(streamed)}`);
    assert.deepEqual(streamed.map(flat), whole.map(flat), label);
  }
}

test("guardFetch Anthropic and Cohere streams: a block of white space alone before a rejected call goes, as the body drops it", async () => {
  const bad = splitN('[get_weather(city="Oslo", units="kelvin")]', 6);
  // Each "\n" of block 1 came in a frame of its own and went out before the call began (no tail that may
  // begin a bracketed call): the client kept a block of white space alone (the API refuses it sent back),
  // where the body cut the call and dropped it.
  await blankBlocksGo([["Let me check"], ["\n", "\n", ...bad], [" Done."]]);
  // A block of white space alone, ended before the call began in the next: the same.
  await blankBlocksGo([["Let me check"], [" ", "\n"], bad, [" Done."]]);
});

test("guardFetch Anthropic and Cohere: a blank block before a call's block that opens with words stays, however the frames fall", async () => {
  // Whether the stream sent block 1 (white space alone) depended on whether "Let me look. " came in a frame
  // of its own, before the call's marker (sent, kept) or with it (held with the call, dropped); the body
  // always dropped it, gluing "Sure." to "Let me look." (fuzz anthropic 87, 91, cohere 35). It goes only
  // where the call's block opens with the call, as the body reads it from the whole answer.
  const bad = splitN(WRITTEN_BAD, 4);
  for (const words of [["Let me look. ", ...bad], ["Let me look. " + bad[0], ...bad.slice(1)]]) {
    // ("Sure." waits at the message's start, held with the call; "Sure, I can." went out before it)
    for (const first of ["Sure.", "Sure, I can."]) {
      for (const { label, streamed, whole } of await blocksBothWays([[first], [" "], words])) {
        assert.deepEqual(streamed.slice(0, 2), [first, " "], `${label}: ${JSON.stringify(streamed)}`);
        assert.deepEqual(streamed, whole, label);
      }
    }
  }
  // (a call's block that opens with the call takes the blank block before it, streamed and whole)
  for (const { label, streamed, whole } of await blocksBothWays([["Sure."], [" "], [" ", ...bad]])) {
    assert.equal(streamed.length, 2, `${label}: ${JSON.stringify(streamed)}`);
    assert.deepEqual(streamed, whole, label);
  }
});

test("guardFetch Cohere stream: a block of only a rejected call goes, and the citations after it keep their numbers", async () => {
  // A citation's `index` numbers the citations, not the content blocks: read as a block's, the citation
  // numbered as the dropped block went with it, and the one after it was renumbered.
  const texts = ["Sure.", WRITTEN_BAD, "Oslo is wet. Bergen too."];
  const citation = (index: number, start: number, end: number) => [
    {
      type: "citation-start",
      index,
      delta: { message: { citations: { start, end, text: texts[2].slice(start, end), sources: [] } } },
    },
    { type: "citation-end", index },
  ];
  const frames = cohereBlocks(
    texts.map((text) => splitN(text, Math.ceil(text.length / 5))),
    (index) => index === 2 ? [...citation(0, 0, 12), ...citation(1, 13, 24), ...citation(2, 13, 19)] : [],
  );
  provider.reply({ sse: frames, named: true });
  const events = sseData(await cohereWire());
  assert.equal(provider.events[0].verdict.allowed, false);
  assert.deepEqual(events.filter((e) => e.type === "content-start").map((e) => e.index), [0, 1]);
  const cited = events.filter((e) => String(e.type).startsWith("citation"));
  const sent = frames.filter((e) => String(e.type).startsWith("citation"));
  assert.deepEqual(cited, sent);
});

test("guardFetch Anthropic and Cohere streams: white space after a rejected call in a block that goes goes with it", async () => {
  // Block 1 held the call and a line break: it goes (the body cuts the break with the call), and the break,
  // written where block 1 was, went to the block that took its number (the thinking block, closed).
  const blocks: (string[] | null)[] = [["Let me check"], [...splitN(WRITTEN_BAD, 6), "\n"], null, [" Done."]];
  /** The deltas of text sent to a block that is not an open text block, in a stream's wire text. */
  const strays = (wire: string, kind: (e: Record<string, unknown>) => string | undefined) => {
    const open = new Map<unknown, string>();
    const out: unknown[] = [];
    for (const e of sseData(wire)) {
      if (/^content[_-](block_)?start$/.test(e.type)) open.set(e.index, kind(e) ?? "");
      else if (/^content[_-](block_)?stop$|^content-end$/.test(e.type)) open.delete(e.index);
      else if (/^content[_-](block_)?delta$/.test(e.type) && open.get(e.index) !== "text") {
        if (JSON.stringify(e.delta).includes('"text"')) out.push(e);
      }
    }
    return out;
  };
  const [start, ...rest] = anthropicStream([]) as Record<string, unknown>[];
  const frames = [
    start,
    ...blocks.flatMap((pieces, index) => [
      pieces === null
        ? {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }
        : { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ...(pieces ?? []).map((text) => ({
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text },
      })),
      ...(pieces === null
        ? [{ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: "Hmm." } }]
        : []),
      { type: "content_block_stop", index },
    ]),
    ...rest.filter((f) => f.type !== "ping"),
  ];
  const cohereFrames = cohereBlocks(blocks);
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const anthropicWire = await withGuardedServer(
      () => ({ sse: frames, named: true }),
      { onRejected },
      async (server, f) =>
        await (await f(`${server.url}/v1/messages`, {
          method: "POST",
          body: JSON.stringify({ model: "m", max_tokens: 9, messages, stream: true, tools: TOOLS_ANTHROPIC }),
        })).text(),
    );
    assert.equal(anthropicWire.seen[0].verdict.allowed, false);
    const block = (e: Record<string, unknown>) => (e.content_block as Record<string, unknown>).type as string;
    assert.deepEqual(strays(anthropicWire.value, block), [], onRejected);
    const cohereRun = await withGuardedServer(
      () => ({ sse: cohereFrames, named: true }),
      { onRejected },
      (server, f) => cohereWire({ f, url: server.url }),
    );
    assert.equal(cohereRun.seen[0].verdict.allowed, false);
    const part = (e: Record<string, unknown>) =>
      (e.delta as Record<string, Record<string, Record<string, string>>>).message.content.type;
    assert.deepEqual(strays(cohereRun.value, part), [], onRejected);
  }
});

test("guardFetch Cohere: a citation names its block where the block of only a rejected call went, streamed and whole", async () => {
  // A citation's `content_index` is the block it is in: once block 1 goes, block 2 is block 1.
  const texts = ["Sure.", WRITTEN_BAD, "Oslo is wet."];
  const citation = { start: 0, end: 12, text: "Oslo is wet.", sources: [], content_index: 2 };
  const frames = cohereBlocks(
    texts.map((text) => splitN(text, Math.ceil(text.length / 5))),
    (index) =>
      index === 2
        ? [
          { type: "citation-start", index: 0, delta: { message: { citations: citation } } },
          { type: "citation-end", index: 0 },
        ]
        : [],
  );
  provider.reply({ sse: frames, named: true });
  const events = sseData(await cohereWire());
  assert.equal(provider.events[0].verdict.allowed, false);
  const cited = events.find((e) => e.type === "citation-start");
  assert.equal(cited.delta.message.citations.content_index, 1);
  const body = await gateCompletion({ tools: TOOLS_OPENAI }, {
    id: "c1",
    finish_reason: "COMPLETE",
    message: {
      role: "assistant",
      content: texts.map((text) => ({ type: "text", text })),
      citations: [citation],
    },
  }, { dialect: "cohere" });
  const message = (body.response as Record<string, unknown>).message as Record<string, unknown>;
  assert.equal((message.citations as Record<string, unknown>[])[0].content_index, 1);
  // (the reason ends the text after the call's block, the cited text kept where its offsets name it)
  assert.deepEqual(blockTexts(message.content as unknown[]), ["Sure.", `Oslo is wet.\n\n${body.reason}`]);
});

/**
 * A Responses stream (numbered, with its final snapshot) of `items`: a message of parts (each text in pieces
 * of 5) or, for null, a reasoning item. `brought`: each message is added with its parts in it (no part's
 * start); `between`: an event sent between each message's start and its first part.
 */
function responsesItems(
  items: (string[] | null)[],
  { brought = false, between }: { brought?: boolean; between?: Record<string, unknown> } = {},
): { frames: unknown[]; final: Record<string, unknown> } {
  const [created] = responsesStream([]) as Record<string, unknown>[];
  const events: Record<string, unknown>[] = [created];
  const output: unknown[] = [];
  items.forEach((parts, oi) => {
    if (parts === null) {
      const item = { id: `rs_${oi}`, type: "reasoning", summary: [], encrypted_content: "enc" };
      events.push(
        { type: "response.output_item.added", output_index: oi, item },
        { type: "response.output_item.done", output_index: oi, item },
      );
      output.push(item);
      return;
    }
    const id = `msg_${oi}`;
    const item = { id, type: "message", status: "completed", role: "assistant" };
    const empty = { type: "output_text", text: "", annotations: [] };
    events.push({
      type: "response.output_item.added",
      output_index: oi,
      item: { ...item, status: "in_progress", content: brought ? parts.map(() => empty) : [] },
    });
    if (between) events.push(between);
    const content = parts.map((text, ci) => {
      const at = { item_id: id, output_index: oi, content_index: ci };
      const part = { type: "output_text", text, annotations: [] };
      if (!brought) events.push({ type: "response.content_part.added", ...at, part: empty });
      for (const delta of splitN(text, Math.ceil(text.length / 5))) {
        events.push({ type: "response.output_text.delta", ...at, delta, logprobs: [] });
      }
      events.push(
        { type: "response.output_text.done", ...at, text, logprobs: [] },
        { type: "response.content_part.done", ...at, part },
      );
      return part;
    });
    events.push({ type: "response.output_item.done", output_index: oi, item: { ...item, content } });
    output.push({ ...item, content });
  });
  const final = { ...(created.response as Record<string, unknown>), status: "completed", output };
  events.push({ type: "response.completed", response: final });
  return { frames: events.map((e, i) => ({ ...e, sequence_number: i })), final };
}

test("guardFetch Responses stream: a rejected written call leaves no empty part or message, and the final response is the one streamed", async () => {
  // Message 3 and message 4's second part held only a call: cut, each was left empty (an output_text part
  // of "" in finalResponse(), and in the final snapshot), where the body drops them; message 1's start
  // waited with "<" and " Hi" was held with the call. (with drop-call, the allowed call in message 1 stays)
  const items = [["Sure <"], [` Hi${WRITTEN_GOOD}`], null, [WRITTEN_BAD], ["Note.", WRITTEN_BAD], [" Done."]];
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const { frames, final } = responsesItems(items);
    const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
    const bodyOutput = (body.response as Record<string, unknown>).output as Record<string, unknown>[];
    const { value } = await withGuardedServer(
      () => ({ sse: frames, named: true }),
      { onRejected },
      async (server, f) => {
        const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
        const stream = client.responses.stream({ model: "m", input: "Hi", tools: TOOLS_RESPONSES as never });
        const events: Record<string, unknown>[] = [];
        for await (const e of stream) events.push(e as never);
        return { events, response: await stream.finalResponse() };
      },
    );
    const { events, response } = value;
    const shape = (output: unknown[]) =>
      (output as Record<string, unknown>[]).map((o) =>
        o.type === "message" ? (o.content as unknown[]).length : String(o.type)
      );
    assert.deepEqual(shape(response.output), [1, 1, "reasoning", 1, 1], onRejected);
    const texts = response.output.flatMap((o) => o.type === "message" ? blockTexts(o.content) : []);
    assert.ok(texts.every((t) => t !== ""), JSON.stringify(texts));
    // The final snapshot lists the items streamed, and each event names an item and part the client has.
    const completed = events.find((e) => e.type === "response.completed")!.response as Record<
      string,
      unknown
    >;
    assert.deepEqual(shape(completed.output as unknown[]), shape(response.output));
    const seqs = events.map((e) => e.sequence_number as number);
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), JSON.stringify(seqs));
    const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
    assert.deepEqual(added, [0, 1, 2, 3, 4]);
    // Each message's text where the body keeps it, the reason too (ending the last text from the call on).
    const flat = (s: string) => s.replace(/\s+/g, "");
    const bodyTexts = bodyOutput.flatMap((o) =>
      o.type === "message" ? blockTexts(o.content as unknown[]) : []
    );
    assert.deepEqual(texts.map(flat), bodyTexts.map(flat), onRejected);
    assert.deepEqual(shape(bodyOutput), shape(response.output), onRejected);
  }
});

test("guardFetch Responses stream retry: a part or message of only the rejected written call is not left empty", async () => {
  // The call began its part (or its message): the retry's ending closed the part with no text, and
  // finalResponse() kept an output_text part of "" (a message of only it, with the call in its own message).
  const cases: [string[][], string[]][] = [
    // (the retry's part opens with a blank line: its text would run on from the client's)
    [[["Note.", WRITTEN_BAD]], ["Note.", "\n\nIt is sunny."]],
    [[["Sure."], [WRITTEN_BAD]], ["Sure.", "\n\nIt is sunny."]],
  ];
  for (const [items, want] of cases) {
    const { frames } = responsesItems(items);
    const { value, server } = await responsesRetried([frames, responsesStream(["It is sunny."])]);
    assert.equal(server.requests.length, 2);
    const { final, events } = value;
    assert.deepEqual(final.output.map((o) => o.type === "message" ? o.content.length : o.type), [1, 1]);
    assert.deepEqual(final.output.flatMap((o) => o.type === "message" ? blockTexts(o.content) : []), want);
    const seqs = events.map((e) => e.sequence_number as number);
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), JSON.stringify(seqs));
    const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
    assert.deepEqual(added, [0, 1]);
  }
});

test("guardFetch: a withheld Gemini stream keeps a thoughtSignature part held with a written call, as a body keeps it", async () => {
  // The signature came in the chunk of a rejected written call: the stream cut the chunk's text and lost
  // the part with it, where the body keeps it; Gemini refuses a follow-up that lost a signature (fuzz
  // seeds gemini2 withhold 18048, 18082).
  const chunk = (parts: unknown[], finish?: string) => ({
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(finish ? { finishReason: finish } : {}),
    }],
  });
  const [head, tail] = [WRITTEN_BAD.slice(0, 15), WRITTEN_BAD.slice(15)];
  const signed = { text: "", thoughtSignature: "c2ln" };
  const sse = [
    chunk([{ text: `Sure. ${head}` }]),
    chunk([signed, { text: tail }]),
    chunk([{ text: "" }], "STOP"),
  ];
  const request = {
    contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
    tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "object" } }] }],
  };
  const { value } = await withGuardedServer(() => ({ sse }), {}, async (server, f) => {
    const res = await f(`${server.url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify(request),
    });
    return sseData(await res.text());
  });
  const streamed = value.flatMap((e) => e.candidates[0].content.parts as Record<string, unknown>[]);
  const whole = chunk([{ text: `Sure. ${head}` }, signed, { text: tail }], "STOP");
  const body = (await gateCompletion(request, whole)).response as typeof whole;
  assert.deepEqual(body.candidates[0].content.parts.filter((p) => (p as typeof signed).thoughtSignature), [
    signed,
  ]);
  assert.deepEqual(streamed.filter((p) => p.thoughtSignature), [signed]);
  assert.match(streamed.map((p) => p.text ?? "").join(""), /^Sure\. [\s\S]*delete_everything/);
});

/** The Responses stream `frames` read by the openai SDK through a guarded fetch: its events and finalResponse(). */
async function responsesGated(
  frames: unknown[],
  onRejected: "withhold-turn" | "drop-call" = "withhold-turn",
) {
  const { value } = await withGuardedServer(
    () => ({ sse: frames, named: true }),
    { onRejected },
    async (server, f) => {
      const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
      const stream = client.responses.stream({ model: "m", input: "Hi", tools: TOOLS_RESPONSES as never });
      const events: Record<string, unknown>[] = [];
      for await (const e of stream) events.push(e as never);
      return { events, response: await stream.finalResponse() };
    },
  );
  return value;
}

/** Each output item as its texts (a message: its parts' text; another item: its type). */
const itemTexts = (output: unknown[]) =>
  (output as Record<string, unknown>[]).map((o) =>
    o.type === "message" ? blockTexts(o.content as unknown[]) : String(o.type)
  );

test("guardFetch Responses stream: white space held with a rejected call that spans two parts is told alike in the deltas and the part's .done", async () => {
  // " \n" came in one delta with the call's marker: held with the call and dropped with it (blank prose), it
  // was still told in the part's output_text.done, content_part.done and the final snapshot, which then
  // disagreed with the deltas (fuzz responses withhold seeds 3, 37, 663, 786, 1598, 1983, 2278). It now
  // stays, as in the body (dropped, "cold" ran into the next part's first word).
  const written = '[TOOL_CALLS][{"name": "delete_everything", "arguments": {}}]';
  const parts = ["It is cold \n" + written.slice(0, 20), written.slice(20) + " Done."];
  const { frames } = responsesItems([parts]);
  const sent = (frames as Record<string, unknown>[]).filter((e) =>
    e.type !== "response.output_text.delta" || e.content_index !== 0
  );
  const at = sent.findIndex((e) => e.type === "response.output_text.done");
  const delta = { type: "response.output_text.delta", item_id: "msg_0", output_index: 0, content_index: 0 };
  sent.splice(
    at,
    0,
    { ...delta, delta: "It is", logprobs: [] },
    { ...delta, delta: " cold", logprobs: [] },
    { ...delta, delta: " \n" + written.slice(0, 20), logprobs: [] },
  );
  const { events, response } = await responsesGated(sent.map((e, i) => ({ ...e, sequence_number: i })));
  const told = new Map<number, string>();
  for (const e of events) {
    if (e.type === "response.output_text.delta") {
      told.set(e.content_index as number, (told.get(e.content_index as number) ?? "") + e.delta);
    }
  }
  // (the white space stays before the call, as the body keeps the text before a call as it came)
  assert.equal(told.get(0), "It is cold \n");
  for (const e of events.filter((e) => e.type === "response.output_text.done")) {
    assert.equal(e.text, told.get(e.content_index as number));
  }
  assert.deepEqual(itemTexts(response.output), [[...told.values()]]);
});

test("guardFetch Responses: the reason stands in place of a written call, streamed and whole alike", async () => {
  // The body gave the reason a message of its own at the end, where the stream wrote it into the text the
  // call was cut from; and where a tail that may begin a marker ("." of "Sure.") held the end of an earlier
  // message, the stream wrote the reason there, past the message of the call.
  const cases: (string[] | null)[][] = [
    [["Sure.\n" + WRITTEN_BAD + " Done."]],
    [["Sure."], [WRITTEN_BAD], null, ["Done."]],
    [["Sure."], [WRITTEN_BAD]],
  ];
  for (const items of cases) {
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const { frames, final } = responsesItems(items);
      const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
      const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
      const { response } = await responsesGated(frames, onRejected);
      const texts = itemTexts(response.output);
      assert.deepEqual(texts, itemTexts(bodyOutput), `${onRejected} ${JSON.stringify(items)}`);
      assert.match(JSON.stringify(texts.at(-1)), /toolguard stopped|was rejected/);
    }
  }
});

/**
 * Streams a Responses message whose second part is " \n" and a rejected written call, sent in `deltas`, and
 * checks that the client reads that part as the reason alone (no blank before it), as the body gives it.
 */
async function blankThenCall(deltas: string[], onRejected: "withhold-turn" | "drop-call"): Promise<void> {
  const { frames, final } = responsesItems([["Sure, let me look.", " \n" + WRITTEN_BAD]]);
  const events = (frames as Record<string, unknown>[]).filter((e) =>
    e.type !== "response.output_text.delta" || e.content_index !== 1
  );
  const at = events.findIndex((e) => e.type === "response.output_text.done" && e.content_index === 1);
  const delta = { type: "response.output_text.delta", item_id: "msg_0", output_index: 0, content_index: 1 };
  events.splice(at, 0, ...deltas.map((d) => ({ ...delta, delta: d, logprobs: [] })));
  const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
  const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
  const { events: read, response } = await responsesGated(
    events.map((e, i) => ({ ...e, sequence_number: i })),
    onRejected,
  );
  const told = read.filter((e) => e.type === "response.output_text.delta" && e.content_index === 1)
    .map((e) => e.delta).join("");
  assert.match(told, /^\n\ntoolguard stopped/, onRejected);
  assert.deepEqual(itemTexts(response.output), itemTexts(bodyOutput), onRejected);
}

test("guardFetch Responses stream: a part whose first delta is a lone space before a rejected written call drops it, as the body does", async () => {
  // The " " went out in a delta of its own before the call's marker came, and the openai SDK appends every
  // delta to its part: the client kept " " before the reason, where the body, which cannot tell how the
  // deltas fell, gives the part the call left blank to the reason alone (fuzz responses seed 36441). The
  // part's blank start now waits for the next text, as it does when it comes in one delta with the call.
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    await blankThenCall([" ", "\n" + WRITTEN_BAD.slice(0, 20), WRITTEN_BAD.slice(20)], onRejected);
  }
});

test("guardFetch Responses, Anthropic and Cohere streams: an empty text delta after a part's lone space does not let the space out ahead of a rejected written call", async () => {
  // The blank start waited for the part's next text; an empty delta (" ", "", then the call) was read as a
  // frame of no text and let the " " out, and the client kept " \n\ntoolguard stopped..." where the body
  // gives the part the call left blank to the reason alone. An empty delta is neither text nor an end.
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    await blankThenCall([" ", "", "\n" + WRITTEN_BAD.slice(0, 20), "", WRITTEN_BAD.slice(20)], onRejected);
  }
  const bad = splitN('[get_weather(city="Oslo", units="kelvin")]', 6);
  for (const blank of [[" ", ""], [" ", "", ""], ["\n", ""]]) {
    for (const { label, streamed, whole } of await blocksBothWays([["Let me check."], [...blank, ...bad]])) {
      assert.deepEqual(streamed, whole, `${label} ${JSON.stringify(blank)}`);
    }
  }
  // Words after the empty delta let the blank start out with them, in its place.
  for (
    const { label, streamed, whole } of await blocksBothWays([["Let me check."], [" ", "", "Fine."], bad])
  ) {
    assert.deepEqual(streamed.slice(0, 2), ["Let me check.", " Fine."], label);
    assert.deepEqual(streamed, whole, label);
  }
});

test("guardFetch Responses, Anthropic and Cohere streams: a part's blank start before a marker that runs on into the next part lets no part of the marker out", async () => {
  // " <too" then, in the next part, "l_call>...": the blank start waited, and the part's end, a frame of no
  // text, ended the wait and let the tail that may begin a marker out with it (the stream moved on). But
  // the text of the parts is read joined: the marker ran on, the client kept " <too" where the body drops
  // the part the rejected call left blank (fuzz with blank parts, responses seed 47038).
  for (const first of [[" <too"], [" ", "<too"], ["\n", "", "<to"]]) {
    const tail = first.join("").trimStart();
    const second = WRITTEN_BAD.slice(tail.length);
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const { frames, final } = responsesItems([[first.join(""), second, "Fine."]]);
      const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
      const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
      const { events, response } = await responsesGated(frames, onRejected);
      const label = `${onRejected} ${JSON.stringify(first)}`;
      assert.deepEqual(itemTexts(response.output), itemTexts(bodyOutput), label);
      const told = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
      assert.doesNotMatch(told, /<to/, label);
    }
    for (const { label, streamed, whole } of await blocksBothWays([first, [second], ["Fine."]])) {
      assert.deepEqual(streamed, whole, `${label} ${JSON.stringify(first)}`);
      assert.ok(streamed.every((t) => !t.includes("<to")), `${label} ${JSON.stringify(first)}`);
    }
  }
});

test("guardFetch Responses stream: the text the gate writes into a part whose start it held reaches the client once", async () => {
  // The held start was told as changed: it brought the reason, and the delta after it brought it again;
  // the openai SDK's running snapshot (what a UI shows while streaming) read the reason twice.
  const { frames } = responsesItems([["Sure. Hi there"], [WRITTEN_BAD]]);
  const { events, response } = await responsesGated(frames);
  // Each part as a client assembles it: the text its start brings, then its deltas.
  const parts = new Map<string, string>();
  for (const e of events) {
    const key = `${e.output_index}:${e.content_index}`;
    const part = e.part as { text?: string } | undefined;
    if (e.type === "response.content_part.added") parts.set(key, part?.text ?? "");
    if (e.type === "response.output_text.delta") parts.set(key, (parts.get(key) ?? "") + String(e.delta));
  }
  assert.deepEqual([...parts.values()], itemTexts(response.output).flat());
});

test("guardFetch Responses: a part of white space alone before a rejected written call goes, streamed and whole alike", async () => {
  // The body kept it (only a part the cut left blank went), where Anthropic's and Cohere's drop any blank
  // block; the stream sent it as it came, and the client kept it. (in its own message, and beside another
  // part of one message)
  const cases: (string[] | null)[][] = [
    [["Sure. Hi there"], ["  "], [WRITTEN_BAD]],
    [["Sure. Hi there", "\n", WRITTEN_BAD]],
  ];
  for (const items of cases) {
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const { frames, final } = responsesItems(items);
      const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
      const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
      const { events, response } = await responsesGated(frames, onRejected);
      assert.deepEqual(
        itemTexts(response.output),
        itemTexts(bodyOutput),
        `${onRejected} ${JSON.stringify(items)}`,
      );
      assert.ok(itemTexts(response.output).flat().every((t) => t.trim() !== ""));
      const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
      assert.deepEqual(added, response.output.map((_, i) => i));
    }
    // Without a call, the blank part reaches the client where it came.
    const { frames } = responsesItems(items.map((parts) => parts!.filter((p) => p !== WRITTEN_BAD)));
    const { value } = await withGuardedServer(() => ({ sse: frames, named: true }), {}, async (server, f) => {
      const res = await f(`${server.url}/v1/responses`, {
        method: "POST",
        body: JSON.stringify({ model: "m", input: "Hi", stream: true, tools: TOOLS_RESPONSES }),
      });
      return await res.text();
    });
    assert.deepEqual(sseData(value), frames);
  }
});

test("guardFetch Responses stream: a message of only a rejected written call goes when added with its parts, or with an event before its first part", async () => {
  // Added with its (empty) part in it, the message went out at once, and the part, cut, was left empty; an
  // event of no item (a keep-alive) between its start and its part let the start out, and the client kept
  // a message of no part. The body drops both.
  const cases = [
    { brought: true, items: [["Sure."], [` ${WRITTEN_BAD}`], ["Done."]] },
    { between: { type: "keepalive" }, items: [["Sure."], [WRITTEN_BAD], ["Done."]] },
  ];
  for (const { items, ...options } of cases) {
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const { frames, final } = responsesItems(items, options);
      const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
      const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
      const { events, response } = await responsesGated(frames, onRejected);
      assert.deepEqual(
        itemTexts(response.output),
        itemTexts(bodyOutput),
        `${onRejected} ${JSON.stringify(options)}`,
      );
      assert.equal(response.output.length, 2);
      const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
      assert.deepEqual(added, [0, 1]);
    }
  }
  // The honest minimum where the client has the part (its message came with it, and words in the part
  // before let it out): it stays, empty, as the client holds it, and the final response lists it so (left
  // out, the parts after it would be misnumbered); what the client has otherwise reads as the body does.
  const { frames, final } = responsesItems([["Sure."], ["Hello there friend", WRITTEN_BAD], ["Done."]], {
    brought: true,
  });
  const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final);
  const { events, response } = await responsesGated(frames);
  const texts = itemTexts(response.output);
  assert.deepEqual(texts[1], ["Hello there friend", ""]);
  const completed = events.find((e) => e.type === "response.completed")!.response as { output: unknown[] };
  assert.deepEqual(itemTexts(completed.output), texts);
  const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
  assert.deepEqual(texts.map((t) => (t as string[]).filter((p) => p !== "")), itemTexts(bodyOutput));
});

test("guardFetch Responses stream retry: white space that waited with its part's start keeps its number", async () => {
  // A part's first delta, white space alone, waits with the part's start; the prose held with the call after
  // it is written at the retry's ending, numbered after the start alone: it took the number of the white
  // space, which goes out with the start (responses fuzz seed 17070).
  // (the call's marker begun at the part's end, its deltas " ", "check<", "t", as the fuzz's)
  const { frames } = responsesItems([["Sure. Hi there"], [" check<t", WRITTEN_BAD.slice(2)]]);
  let first = true;
  const events = (frames as Record<string, unknown>[]).flatMap((e) => {
    if (e.type !== "response.output_text.delta" || e.output_index !== 1 || e.content_index !== 0) return [e];
    if (!first) return [];
    first = false;
    return [" ", "check<", "t"].map((delta) => ({ ...e, delta }));
  }).map((e, i) => ({ ...e, sequence_number: i }));
  const { value, server } = await responsesRetried([events, responsesStream(["It is sunny."])]);
  assert.equal(server.requests.length, 2);
  const seqs = value.events.map((e) => e.sequence_number as number);
  assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), JSON.stringify(seqs));
  assert.equal(value.final.output_text, value.streamed);
  assert.match(value.streamed, /^Sure\. Hi there check(\n\nIt is sunny\.)?$/);
});

test("guardFetch Anthropic and Cohere: the reason stands in place of a written call before a thinking block, streamed and whole alike", async () => {
  // The body appended the reason as a block of its own after the thinking that followed the call, where the
  // stream wrote it into the block the call was cut from, before that thinking. (null: a thinking block)
  const cases: (string | null)[][] = [
    ["Sure. " + WRITTEN_BAD, null],
    [WRITTEN_BAD, null],
    ["Hi.", null, WRITTEN_BAD, null],
    [`${WRITTEN_GOOD}\n${WRITTEN_BAD}`, null],
  ];
  const kinds = (texts: (string | null)[]) => texts.map((t) => t === null ? "thinking" : "text");
  for (const blocks of cases) {
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const what = `${onRejected} ${JSON.stringify(blocks)}`;
      const { body, whole, final } = await anthropicBothWays(blocks, onRejected);
      const streamed = final.content as unknown as Record<string, unknown>[];
      assert.deepEqual(whole.map((b) => b.type), kinds(blocks), what);
      assert.deepEqual(streamed.map((b) => b.type), kinds(blocks), what);
      assert.deepEqual(blockTexts(streamed), blockTexts(whole), what);
      assert.ok(blockTexts(whole).at(-1)!.endsWith(body.reason!), what);

      // Cohere: the same blocks, whole and as the AI SDK reads the stream (the text of each block).
      const frames = cohereBlocks(blocks.map((text) => text === null ? null : [text]));
      const cohere = await gateCompletion({ tools: TOOLS_OPENAI }, {
        id: "c1",
        finish_reason: "COMPLETE",
        message: {
          role: "assistant",
          content: blocks.map((text) =>
            text === null ? { type: "thinking", thinking: "Hmm." } : { type: "text", text }
          ),
        },
      }, { dialect: "cohere", onRejected });
      const cohereWhole = ((cohere.response as Record<string, unknown>).message as Record<string, unknown>)
        .content as Record<string, unknown>[];
      assert.deepEqual(cohereWhole.map((b) => b.type), kinds(blocks), what);
      const { value: wire } = await withGuardedServer(
        () => ({ sse: frames, named: true }),
        { onRejected },
        (server, f) => cohereWire({ f, url: server.url }),
      );
      const cohereStreamed = cohereBlockTexts(sseData(wire));
      assert.deepEqual(cohereStreamed, cohereWhole.map((b) => b.type === "text" ? b.text : ""), what);
    }
  }
});

test("guardFetch Responses: a part of white space alone said before words stays, streamed and whole alike", async () => {
  // The body dropped every blank part once a written call was cut; a stream sends a blank part with the
  // words that follow it, before any call came, and the client kept it. Only the blank parts from the first
  // cut call on and those right before a call's part that opens with it (cut or kept) go, in both.
  const cases: [(string[] | null)[], "withhold-turn" | "drop-call", boolean][] = [
    [[[" ", "Sure. Hi"], [WRITTEN_BAD]], "withhold-turn", true],
    [[["\n"], ["Sure. Hi"], [WRITTEN_BAD]], "drop-call", true],
    [[["Sure. Hi"], ["\n"], null, [WRITTEN_BAD]], "withhold-turn", true],
    [[["Hi", "\n", "Yo"], [WRITTEN_BAD]], "drop-call", true],
    // (a kept call's part: the stream holds the text from it on, and drops the blank part before it)
    [[["Sure. Hi"], ["\n"], [WRITTEN_GOOD], [WRITTEN_BAD]], "drop-call", false],
    // (after a kept call's part, before words: the stream sent it with them once the call was read)
    [[[WRITTEN_GOOD, " ", `Hi ${WRITTEN_BAD}`]], "drop-call", true],
  ];
  for (const [items, onRejected, stays] of cases) {
    const { frames, final } = responsesItems(items);
    const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
    const bodyResponse = body.response as Record<string, unknown>;
    const { response } = await responsesGated(frames, onRejected);
    const tag = `${onRejected} ${JSON.stringify(items)}`;
    assert.deepEqual(itemTexts(response.output), itemTexts(bodyResponse.output as unknown[]), tag);
    assert.equal(itemTexts(response.output).flat().some((t) => t.trim() === ""), stays, tag);
  }
});

test("guardFetch Chat stream: the words after a cut call keep their space where only held text came before", async () => {
  // JSON shaped like a call opened the answer, so the watch held the text from its start; the text after the
  // cut call was then trimmed as if nothing had been said before it ("the weatherin Oslo"), where a body
  // keeps the space (it reads the text before the call).
  const lead = '{"name": "Ada", "arguments": {}} the weather';
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const frames = chatStream([lead, WRITTEN_BAD, " in Oslo"]);
    const { value: content } = await withGuardedServer(
      () => ({ sse: frames }),
      { onRejected },
      async (server, f) => {
        const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
        const stream = client.chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
        return String((await stream.finalChatCompletion()).choices[0].message.content);
      },
    );
    const body = await gateCompletion({ tools: TOOLS_OPENAI }, {
      choices: [{ index: 0, message: { role: "assistant", content: lead + WRITTEN_BAD + " in Oslo" } }],
    }, { onRejected });
    const bodyContent = String(
      ((body.response as Record<string, unknown[]>).choices[0] as {
        message: { content: string };
      }).message.content,
    );
    assert.match(content, /the weather in Oslo\n\n/, onRejected);
    assert.equal(content, bodyContent, onRejected);
  }
});

test("guardFetch Responses: the reason's own message follows the text on a new paragraph, streamed and whole alike", async () => {
  // A rejected native call's reason has a message of its own: the body's came with nothing before it, and
  // so did the stream's where the text came after the call (held with it, it was never told seen); the
  // `output_text` a client reads ran the last word into the reason ("Let me checktoolguard stopped").
  const bad = { name: "delete_everything", args: {} };
  const textFirst = responsesStream(["Sure. ", "Let me check"], [bad]) as Record<string, unknown>[];
  // The same turn with the call first: its item's events, then the message's, the indices swapped.
  const at = (e: Record<string, unknown>) => e.output_index;
  const callFirst: Record<string, unknown>[] = [
    textFirst[0],
    ...textFirst.filter((e) => at(e) === 1).map((e) => ({ ...e, output_index: 0 })),
    ...textFirst.filter((e) => at(e) === 0).map((e) => ({ ...e, output_index: 1 })),
    textFirst.at(-1)!,
  ].map((e, i) => ({ ...e, sequence_number: i }));
  const completed = callFirst.at(-1)!.response as Record<string, unknown>;
  callFirst[callFirst.length - 1] = {
    ...callFirst.at(-1)!,
    response: { ...completed, output: [...(completed.output as unknown[])].reverse() },
  };
  for (const frames of [textFirst, callFirst]) {
    for (const onRejected of ["withhold-turn", "drop-call"] as const) {
      const final = (frames.at(-1) as { response: Record<string, unknown> }).response;
      const body = await gateCompletion({ tools: TOOLS_RESPONSES }, final, { onRejected });
      const bodyOutput = (body.response as Record<string, unknown>).output as unknown[];
      const { response } = await responsesGated(frames, onRejected);
      const tag = `${onRejected} ${frames === textFirst ? "text first" : "call first"}`;
      assert.match(response.output_text, /Let me check\n\ntoolguard/, tag);
      assert.deepEqual(itemTexts(response.output), itemTexts(bodyOutput), tag);
    }
  }
});

test("guardFetch Responses: an annotation of a written call the gate cut is dropped, one of the kept text stays", async () => {
  // The part keeps "Let me look." and the reason; an annotation of the cut call kept its offsets and cited
  // the reason's words (a client rendering citations linked text the model never wrote).
  const kept = citation(0, 3);
  const cut = citation(13, 24);
  const text = `Let me look. ${WRITTEN_BAD}`;
  for (const deltas of [[], ["Let me look. ", WRITTEN_BAD]]) {
    const label = JSON.stringify(deltas);
    provider.reply({ sse: annotatedFrames(responsesRepeating(deltas, text), [kept, cut]), named: true });
    const stream = openai().responses.stream({
      model: "m",
      input: "Weather?",
      tools: TOOLS_RESPONSES as never,
    });
    const added: unknown[] = [];
    const seqs: number[] = [];
    for await (const e of stream) {
      seqs.push(e.sequence_number);
      if (e.type === "response.output_text.annotation.added") added.push(e.annotation);
    }
    assert.ok(seqs.every((n, i) => i === 0 || n > seqs[i - 1]), label);
    const final = await stream.finalResponse();
    assert.match(final.output_text, /^Let me look\. \n\ntoolguard stopped /, label);
    assert.deepEqual(citedPast(final.output), [], label);
    assert.deepEqual((final.output[0] as { content: { annotations: unknown[] }[] }).content[0].annotations, [
      kept,
    ], label);
    assert.deepEqual(added, [kept], label);
  }
  const body = responsesBody(text);
  (body.output as { content: { annotations: unknown[] }[] }[])[0].content[0].annotations = [kept, cut];
  provider.reply({ json: body });
  const got = await openai().responses.create({
    model: "m",
    input: "Weather?",
    tools: TOOLS_RESPONSES as never,
  });
  assert.match(got.output_text, /^Let me look\. \n\ntoolguard stopped /);
  assert.deepEqual((got.output[0] as { content: { annotations: unknown[] }[] }).content[0].annotations, [
    kept,
  ]);
});

test("guardFetch Chat: an annotation of a written call the gate cut is dropped, one of the kept text stays", async () => {
  // Chat Completions' `annotations` (web search's url_citation) name characters of the message's content:
  // one of the cut call kept its offsets and cited the reason's words.
  const cite = (start: number, end: number) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url: "u", title: "t" },
  });
  const answer = chatCompletion(`Let me look. ${WRITTEN_BAD}`);
  const message = (answer.choices as Record<string, Record<string, unknown>>[])[0].message;
  message.annotations = [cite(0, 3), cite(13, 24)];
  provider.reply({ json: answer });
  const got = await openai().chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never });
  assert.match(got.choices[0].message.content ?? "", /^Let me look\. \n\ntoolguard stopped /);
  assert.deepEqual(got.choices[0].message.annotations, [cite(0, 3)]);
});

test("guardFetch Chat stream: an annotation of a written call the gate cut is dropped, one of the kept text stays", async () => {
  // Chat Completions streams its annotations in a delta of their own (the openai SDK sets them on the
  // message): one of the cut call kept its offsets and cited the reason's words.
  const cite = (start: number, end: number) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url: "u", title: "t" },
  });
  for (const whole of [false, true]) {
    const frames = chatStream(
      whole ? [`Let me look. ${WRITTEN_BAD}`] : ["Let me look. ", ...splitN(WRITTEN_BAD, 4)],
    );
    frames.splice(frames.length - 2, 0, chatChunk({ annotations: [cite(0, 3), cite(13, 24)] }));
    provider.reply({ sse: frames });
    const stream = openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
    for await (const _ of stream) { /* read it all */ }
    const got = await stream.finalChatCompletion();
    const label = String(whole);
    assert.match(got.choices[0].message.content ?? "", /^Let me look\. \n\ntoolguard stopped /, label);
    assert.deepEqual(got.choices[0].message.annotations, [cite(0, 3)], label);
  }
});

test("guardFetch Responses stream retry: the prose held with a rejected call in text that came only whole gets no delta of the gate's", async () => {
  // A server that sends a part's text only whole (its .done events, the final snapshot): the retry closed
  // that part for the client with a delta of the prose, where the client was given none of the part's text
  // as deltas (and the withheld turn writes none there): the prose is told in the part's .done events.
  const frames = responsesRepeating([], `Let me look. ${WRITTEN_BAD}`).map((f, i) => ({
    ...f,
    sequence_number: i,
  }));
  const { value } = await responsesRetried([frames, responsesStream(["Again."], [VALID_CALL])]);
  const own = value.events.filter((e) => e.output_index === 0);
  assert.deepEqual(own.filter((e) => e.type === "response.output_text.delta"), []);
  const done = own.find((e) => e.type === "response.output_text.done") as { text: string } | undefined;
  assert.equal(done?.text, "Let me look. ");
  assert.equal(value.final.output_text, "Let me look. Again.");
  const seqs = value.events.map((e) => e.sequence_number);
  assert.deepEqual(seqs, seqs.map((_, i) => i));
});
