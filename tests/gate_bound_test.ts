/**
 * A provider that never stops: a JSON body without end, an SSE event or an NDJSON line without a newline,
 * a call whose arguments never close, a message whose text never ends, OpenAI Responses items that never
 * stop, malformed events without end, and the same from a retry. The gate
 * holds at most `maxResponseBytes` of an answer at a time: past it the provider's connection is closed,
 * nothing unjudged reaches the client, and the client is told which option to raise; an answer that stays
 * under it passes byte for byte, however long the stream.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import OpenAI from "openai";
import { type GateEvent, guardFetch } from "../gate.ts";
import { chatChunk, chatCompletion, ollamaStream, TOOLS_OPENAI } from "./_fake_llm_server.ts";

const LIMIT = 64 * 1024;
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];
const sse = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`;
/** The start of an OpenAI Chat call to a declared tool, and one piece of its arguments. */
const callStart = sse(chatChunk({
  tool_calls: [{
    index: 0,
    id: "call_1",
    type: "function",
    function: { name: "get_weather", arguments: "" },
  }],
}));
const argPiece = sse(chatChunk({ tool_calls: [{ index: 0, function: { arguments: "x".repeat(1000) } }] }));

/** What the server does with one request: write `head`, then `piece` over and over, or `end` after `head`. */
interface Answer {
  type: string;
  head: string;
  piece?: string;
  /** The rest of the body, for an answer that ends. */
  end?: string;
  /** Send `content-length` (only for an answer that ends). */
  length?: boolean;
}

/**
 * A provider on 127.0.0.1 answering request n with `answers[n]` (the last repeats); an endless answer is
 * written as fast as the client reads it, up to 1024 times the bound (so a gate that never stops fails
 * rather than hangs). Not less: Bun's fetch reads megabytes ahead of its reader, 7 MiB seen on an idle
 * machine and more under load, and an answer that had ended would not count as cut off.
 * Records the connections the client closed before the answer ended.
 */
async function provider(answers: Answer[]) {
  let requests = 0;
  const closed: number[] = [];
  const open: ServerResponse[] = [];
  const http = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const n = requests++;
      const a = answers[Math.min(n, answers.length - 1)];
      open.push(res);
      res.on("close", () => {
        if (!res.writableFinished) closed.push(n);
      });
      const headers: Record<string, string | number> = { "content-type": a.type };
      if (a.length) headers["content-length"] = Buffer.byteLength(a.head + (a.end ?? ""));
      res.writeHead(200, headers);
      res.write(a.head);
      if (a.piece === undefined) return void res.end(a.end ?? "");
      let written = 0;
      const pump = () => {
        while (!res.destroyed && written < 1024 * LIMIT) {
          written += a.piece!.length;
          if (!res.write(a.piece)) return void res.once("drain", pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  return {
    url,
    closed,
    requests: () => requests,
    stop: () => {
      for (const res of open) res.destroy();
      http.close();
    },
  };
}

/** Waits (up to 5 s) for the provider to see as many connections closed as `expected` lists, then checks them. */
async function assertClosed(provider: { closed: number[] }, expected: number[], message?: string) {
  for (let waited = 0; provider.closed.length < expected.length && waited < 5000; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
  if (message === undefined) assert.deepEqual(provider.closed, expected);
  else assert.deepEqual(provider.closed, expected, message);
}

const post = (f: typeof fetch, url: string, body: Record<string, unknown>) =>
  f(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Reads a stream to its end or its error: the text received, and the error. */
async function drain(body: ReadableStream<Uint8Array>): Promise<{ text: string; error?: Error }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += decoder.decode(value, { stream: true });
    }
  } catch (e) {
    return { text, error: e as Error };
  }
}

test("guardFetch: a JSON answer past maxResponseBytes is a 413 naming the option, the provider cut off", async () => {
  const server = await provider([{
    type: "application/json",
    head:
      '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"',
    piece: "a".repeat(4096),
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/chat/completions`, {
      model: "m",
      messages,
      tools: TOOLS_OPENAI,
    });
    assert.equal(res.status, 413);
    assert.equal(res.headers.get("x-should-retry"), "false");
    const body = await res.json();
    assert.match(body.error.message, /maxResponseBytes \(65536 bytes\)/);
    await assertClosed(server, [0], "the provider's connection was closed");
  } finally {
    server.stop();
  }
});

test("guardFetch: a JSON answer whose content-length passes maxResponseBytes is refused unread", async () => {
  const big = chatCompletion("a".repeat(LIMIT), []);
  const server = await provider([{ type: "application/json", head: JSON.stringify(big), length: true }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/api/chat`, { model: "m", messages, stream: false, tools: [] });
    assert.equal(res.status, 413);
    assert.match((await res.json()).error, /maxResponseBytes/, "in Ollama's error shape");
  } finally {
    server.stop();
  }
});

test("guardFetch: a stream typed as JSON, read whole to be judged, is bounded the same way", async () => {
  const server = await provider([{
    type: "application/json",
    head: sse(chatChunk({ role: "assistant", content: "Hello, world. " })),
    piece: argPiece,
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/chat/completions`, {
      model: "m",
      messages,
      stream: true,
      tools: TOOLS_OPENAI,
    });
    assert.equal(res.status, 413);
    assert.match((await res.json()).error.message, /maxResponseBytes/);
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: the openai client raises a 413 past maxResponseBytes and does not send the request again", async () => {
  const server = await provider([{
    type: "application/json",
    head:
      '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"',
    piece: "a".repeat(4096),
  }]);
  try {
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: `${server.url}/v1`,
      fetch: guardFetch(fetch, { maxResponseBytes: LIMIT }),
      maxRetries: 2,
    });
    await assert.rejects(
      client.chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never }),
      (e: Error & { status?: number }) => {
        assert.equal(e.status, 413);
        assert.match(e.message, /maxResponseBytes/);
        return true;
      },
    );
    assert.equal(server.requests(), 1, "the SDK did not retry (and bill) the request");
  } finally {
    server.stop();
  }
});

test("guardFetch: an SSE event without end errors the stream after the text already sent", async () => {
  const server = await provider([{
    type: "text/event-stream",
    // Text a call cannot start with (a bare "Hello" may be the name of a call written `Hello\n{…}`).
    head: sse(chatChunk({ role: "assistant", content: "Hello, world. " })) +
      'data: {"choices":[{"delta":{"content":"',
    piece: "a".repeat(4096),
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/chat/completions`, { model: "m", messages, stream: true });
    const { text, error } = await drain(res.body!);
    assert.match(text, /Hello/);
    assert.match(
      String(error?.message),
      /a stream event without end passed maxResponseBytes \(65536 bytes\)/,
    );
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: an NDJSON line without end errors the stream after the lines already sent", async () => {
  const first = JSON.stringify(ollamaStream(["Hello, world. "])[0]) + "\n";
  const server = await provider([{
    type: "application/x-ndjson",
    head: first + '{"model":"m","message":{"role":"assistant","content":"',
    piece: "a".repeat(4096),
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/api/chat`, { model: "m", messages, tools: TOOLS_OPENAI });
    const { text, error } = await drain(res.body!);
    assert.equal(text, first);
    assert.match(String(error?.message), /a stream line without end passed maxResponseBytes/);
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: a call whose arguments never end is never released; the openai stream errors", async () => {
  const server = await provider([{
    type: "text/event-stream",
    head: sse(chatChunk({ role: "assistant", content: "Hello" })) + callStart,
    piece: argPiece,
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/chat/completions`, {
      model: "m",
      messages,
      stream: true,
      tools: TOOLS_OPENAI,
    });
    const { text, error } = await drain(res.body!);
    assert.match(text, /Hello/);
    assert.doesNotMatch(text, /get_weather|tool_calls/, "the unjudged call never reached the client");
    assert.match(String(error?.message), /the stream events held for judging passed maxResponseBytes/);
    await assertClosed(server, [0]);

    // The same through the official client: its stream throws with the message, after the text.
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 2 });
    const stream = await client.chat.completions.create({
      model: "m",
      messages,
      tools: TOOLS_OPENAI as never,
      stream: true,
    });
    let content = "";
    const calls: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) {
          content += chunk.choices[0]?.delta?.content ?? "";
          calls.push(...chunk.choices[0]?.delta?.tool_calls ?? []);
        }
      })(),
      /maxResponseBytes/,
    );
    assert.equal(content, "Hello");
    assert.deepEqual(calls, []);
    assert.equal(server.requests(), 2, "one request each, none sent again");
    await assertClosed(server, [0, 1]);
  } finally {
    server.stop();
  }
});

test("guardFetch: a streamed message whose text never ends errors once its watched text passes the bound", async () => {
  const server = await provider([{
    type: "text/event-stream",
    head: sse(chatChunk({ role: "assistant", content: "Hello" })),
    piece: sse(chatChunk({ content: "a".repeat(1000) })),
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/chat/completions`, {
      model: "m",
      messages,
      stream: true,
      tools: TOOLS_OPENAI,
    });
    const { text, error } = await drain(res.body!);
    assert.match(text, /Hello/);
    assert.match(String(error?.message), /the streamed message's text passed maxResponseBytes/);
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: an Anthropic stream moving its text between two blocks at every delta is bounded by the places kept", async () => {
  // 2 000 characters of text, but a place noted per delta: what the gate keeps passes the bound.
  const named = (e: Record<string, unknown>) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  const start = (index: number) =>
    named({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
  const delta = (index: number) =>
    named({ type: "content_block_delta", index, delta: { type: "text_delta", text: "ab"[index] } });
  const server = await provider([{
    type: "text/event-stream",
    head: named({ type: "message_start", message: { role: "assistant", content: [] } }) + start(0) + start(1),
    end: Array.from({ length: 2000 }, (_, i) => delta(i % 2)).join("") + named({ type: "message_stop" }),
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/messages`, {
      model: "m",
      messages,
      stream: true,
      max_tokens: 9,
    });
    const { error } = await drain(res.body!);
    assert.match(String(error?.message), /the streamed message's text passed maxResponseBytes/);
  } finally {
    server.stop();
  }
});

test("guardFetch: frames waiting on text that may begin a written call are bounded with those held", async () => {
  // A tail that may begin a marker (`<tool_`) waits, and the frames of no text behind it (a ping, a block's
  // end and the next one's start) with it, until the text shows what it is: without end, they were kept
  // past the bound, every one.
  const named = (e: Record<string, unknown>) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  const server = await provider([{
    type: "text/event-stream",
    head: named({ type: "message_start", message: { role: "assistant", content: [] } }) +
      named({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      named({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me <tool_" } }),
    piece: named({ type: "ping" }).repeat(20),
  }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/messages`, {
      model: "m",
      messages,
      stream: true,
      max_tokens: 9,
    });
    const { error } = await drain(res.body!);
    assert.match(String(error?.message), /the stream events held for judging passed maxResponseBytes/);
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: a retry's answer is bounded alike, streamed or whole", async () => {
  const rejected = sse(chatChunk({ role: "assistant", content: "Hello" })) +
    sse(chatChunk({
      tool_calls: [{
        index: 0,
        id: "call_1",
        type: "function",
        function: { name: "rm_rf", arguments: "{}" },
      }],
    })) + sse(chatChunk({}, "tool_calls")) + "data: [DONE]\n\n";
  const streamed = await provider([
    { type: "text/event-stream", head: rejected, end: "" },
    { type: "text/event-stream", head: callStart, piece: argPiece },
  ]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT, retry: 1 });
    const res = await post(f, `${streamed.url}/v1/chat/completions`, {
      model: "m",
      messages,
      stream: true,
      tools: TOOLS_OPENAI,
    });
    const { text, error } = await drain(res.body!);
    assert.match(text, /Hello/);
    assert.doesNotMatch(text, /get_weather|rm_rf/, "neither the rejected nor the unjudged call was released");
    assert.match(String(error?.message), /maxResponseBytes/);
    assert.equal(streamed.requests(), 2);
    await assertClosed(streamed, [1], "the retry's connection was closed");
  } finally {
    streamed.stop();
  }

  const whole = await provider([
    { type: "application/json", head: JSON.stringify(chatCompletion(null, [{ name: "rm_rf", args: {} }])) },
    {
      type: "application/json",
      head:
        '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"',
      piece: "a".repeat(4096),
    },
  ]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT, retry: 1 });
    const res = await post(f, `${whole.url}/v1/chat/completions`, {
      model: "m",
      messages,
      tools: TOOLS_OPENAI,
    });
    assert.equal(res.status, 413);
    assert.match((await res.json()).error.message, /maxResponseBytes/);
    await assertClosed(whole, [1]);
  } finally {
    whole.stop();
  }
});

/** A stream ten times the bound, of small text events, then an allowed call whose arguments are `size` long. */
function longStream(size: number): string {
  let wire = sse(chatChunk({ role: "assistant", content: "" }));
  for (let i = 0; wire.length < 10 * LIMIT; i++) wire += sse(chatChunk({ content: `word ${i} ` }));
  const args = JSON.stringify({ city: "O".repeat(size) });
  wire += callStart;
  for (let i = 0; i < args.length; i += 1000) {
    wire += sse(chatChunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 1000) } }] }));
  }
  return wire + sse(chatChunk({}, "tool_calls")) + "data: [DONE]\n\n";
}

test("guardFetch: the bound is on what is held: a long stream passes byte for byte, a call held past it does not", async () => {
  const wire = longStream(LIMIT / 2);
  const json = JSON.stringify(
    chatCompletion(null, [{ name: "get_weather", args: { city: "O".repeat(LIMIT / 2) } }]),
  );
  const server = await provider([
    { type: "text/event-stream", head: wire },
    { type: "application/json", head: json },
    { type: "text/event-stream", head: longStream(2 * LIMIT) },
  ]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const url = `${server.url}/v1/chat/completions`;
    const request = { model: "m", messages, stream: true, tools: TOOLS_OPENAI };
    const streamed = await post(f, url, request);
    assert.equal(await streamed.text(), wire, "ten times the bound, the call half of it: byte for byte");
    const whole = await post(f, url, { ...request, stream: false });
    assert.equal(whole.status, 200);
    assert.equal(await whole.text(), json, "a body under the bound: byte for byte");
    // The same stream with a call twice the bound (a valid call, the stream ending): never released.
    const { text, error } = await drain((await post(f, url, request)).body!);
    assert.match(text, /word 1 /);
    assert.doesNotMatch(text, /get_weather/);
    assert.match(String(error?.message), /the stream events held for judging passed maxResponseBytes/);
  } finally {
    server.stop();
  }
});

test("guardFetch: an OpenAI Responses stream finishing items without end errors once those kept pass the bound", async () => {
  const item = (i: number) =>
    `event: response.output_item.done\ndata: ${
      JSON.stringify({
        type: "response.output_item.done",
        output_index: i,
        item: {
          type: "message",
          id: `msg_${i}`,
          role: "assistant",
          content: [{ type: "output_text", text: "a" }],
        },
      })
    }\n\n`;
  let items = "";
  for (let i = 0; items.length < 2 * LIMIT; i++) items += item(i);
  const server = await provider([{ type: "text/event-stream", head: "", piece: items }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/responses`, { model: "m", input: "hi", stream: true });
    const { text, error } = await drain(res.body!);
    assert.match(text, /msg_0/, "the items finished before the bound reached the client");
    assert.match(String(error?.message), /the stream's items kept passed maxResponseBytes/);
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: an OpenAI Responses stream adding tiny items without end errors once their places pass the bound", async () => {
  // Each item added is forwarded at once (no call is pending) and holds no text: only the place the gate
  // notes for it grows, which a fixed cost per place brings under the bound.
  const added = (i: number) =>
    `data: ${
      JSON.stringify({ type: "response.output_item.added", output_index: i, item: { type: "reasoning" } })
    }\n\n`;
  let items = "";
  for (let i = 0; items.length < 2 * LIMIT; i++) items += added(i);
  const server = await provider([{ type: "text/event-stream", head: "", piece: items }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v1/responses`, { model: "m", input: "hi", stream: true });
    const { text, error } = await drain(res.body!);
    assert.match(text, /"output_index":0,/, "the items added before the bound reached the client");
    assert.match(String(error?.message), /the stream's items kept passed maxResponseBytes/);
    await assertClosed(server, [0]);
  } finally {
    server.stop();
  }
});

test("guardFetch: a streamed turn longer than maxResponseBytes is not sent back by retry: the clean stop", async () => {
  const wire = longStream(0).replace(/"get_weather"/, '"rm_rf"');
  const server = await provider([{ type: "text/event-stream", head: wire }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT, retry: 1 });
    const res = await post(f, `${server.url}/v1/chat/completions`, {
      model: "m",
      messages,
      stream: true,
      tools: TOOLS_OPENAI,
    });
    const text = await res.text();
    assert.match(text, /rm_rf/, "the reason names the rejected call");
    assert.match(text, /"finish_reason":"stop"/);
    assert.equal(server.requests(), 1, "no follow-up carrying more than the bound was sent");
  } finally {
    server.stop();
  }
});

test("guardFetch: a stream of malformed events lists a bounded number of findings, every kind still named", async () => {
  const wire = sse(chatChunk({ role: "assistant", content: "Hello, world. " })) +
    "data: not json\n\n".repeat(5000) + "data: {}\n\n".repeat(5000) + "data: [DONE]\n\n";
  const server = await provider([{ type: "text/event-stream", head: wire }]);
  try {
    const seen: GateEvent[] = [];
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT, onVerdict: (e) => seen.push(e) });
    const res = await post(f, `${server.url}/v1/chat/completions`, { model: "m", messages, stream: true });
    assert.match(await res.text(), /Hello, world\. /);
    const findings = seen[0].findings;
    assert.deepEqual([...new Set(findings.map((x) => x.code))].sort(), ["malformed_event", "unknown_event"]);
    assert.ok(findings.length <= 2 * 101, `${findings.length} findings listed`);
    assert.equal(findings.filter((x) => /the rest are not listed/.test(x.message)).length, 2);
  } finally {
    server.stop();
  }
});

test("guardFetch: maxResponseBytes must be a whole number of bytes, at least 1, or Infinity", () => {
  assert.throws(
    () => guardFetch(fetch, { maxResponseBytes: "65536" as unknown as number }),
    /^TypeError: options\.maxResponseBytes must be a number \(default 67108864\), got "65536"$/,
  );
  for (const bad of [0, -1, 1.5, -Infinity]) {
    assert.throws(
      () => guardFetch(fetch, { maxResponseBytes: bad }),
      /^RangeError: options\.maxResponseBytes must be a whole number of bytes, at least 1 \(Infinity for no bound\)/,
      String(bad),
    );
  }
  for (const good of [1, 65_536, Infinity]) {
    assert.equal(typeof guardFetch(fetch, { maxResponseBytes: good }), "function");
  }
});

test("guardFetch: retry must be a whole number of retries from 0 up, where text was read as a number and a fraction cut", () => {
  for (const bad of ["2", "1", true]) {
    assert.throws(
      () => guardFetch(fetch, { retry: bad as unknown as number }),
      /^TypeError: options\.retry must be a number \(default 0\), got /,
      String(bad),
    );
  }
  for (const bad of [1.5, -1, Infinity]) {
    assert.throws(
      () => guardFetch(fetch, { retry: bad }),
      /^RangeError: options\.retry must be a whole number of retries, 0 \(off\) or more/,
      String(bad),
    );
  }
  for (const good of [0, 1, 3]) assert.equal(typeof guardFetch(fetch, { retry: good }), "function");
});

test("guardFetch: a Cohere stream of text under the bound passes byte for byte, as other providers' do", async () => {
  // The stream kept each block's text for its citations and counted it on top of the text the watch keeps:
  // an answer of 60% of the bound (39 000 characters) counted 120% of it, and the client got an error where others pass.
  const delta = (text: string) =>
    sse({ type: "content-delta", index: 0, delta: { message: { content: { text } } } });
  const wire = sse({ id: "c1", type: "message-start", delta: { message: { role: "assistant" } } }) +
    sse({ type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } }) +
    Array.from({ length: 39 }, (_, i) => delta(`${i} `.padEnd(1000, "a"))).join("") +
    sse({ type: "content-end", index: 0 }) +
    sse({ type: "message-end", delta: { finish_reason: "COMPLETE" } });
  const server = await provider([{ type: "text/event-stream", head: wire }]);
  try {
    const f = guardFetch(fetch, { maxResponseBytes: LIMIT });
    const res = await post(f, `${server.url}/v2/chat`, {
      model: "m",
      messages,
      stream: true,
      tools: TOOLS_OPENAI,
    });
    const { text, error } = await drain(res.body!);
    assert.equal(error, undefined);
    assert.equal(text, wire);
  } finally {
    server.stop();
  }
});
