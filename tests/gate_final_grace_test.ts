/**
 * The gate never makes a client wait on a provider that finished its answer and keeps the connection open:
 * what it holds to the end of the stream (the final frame, the calls to judge) goes out within a short grace
 * of the final frame (`FINAL_GRACE_MS`), read through the official clients. No test asserts a duration: a
 * hang is caught by the bound each read is given (`settled`), far above the grace.
 *
 * @module
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import { type GateEvent, guardFetch } from "../gate.ts";
import {
  anthropicStream,
  chatStream,
  choiceChunk,
  ollamaStream,
  REJECTED_CALL,
  responsesStream,
  sseData,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
  VALID_CALL,
} from "./_fake_llm_server.ts";

const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];
/** Far above the grace: only a read that waits for the connection to close takes this long. */
const HANG_MS = 10_000;

/** A provider whose body sends `frames` and then stays open until cancelled; `cancelled` says whether it was. */
/** A fetch that answers with `body` as an event stream (one request: a body is read once). */
function answering(body: ReadableStream<Uint8Array>, type = "text/event-stream"): typeof globalThis.fetch {
  return (() =>
    Promise.resolve(new Response(body, { headers: { "content-type": type } }))) as typeof globalThis.fetch;
}

function openProvider(frames: unknown[], { named = false, ndjson = false } = {}) {
  const state = { cancelled: false };
  const text = frames.map((f) => {
    if (typeof f === "string") return f;
    if (ndjson) return JSON.stringify(f) + "\n";
    const type = (f as { type?: unknown }).type;
    return (named && typeof type === "string" ? `event: ${type}\n` : "") + `data: ${JSON.stringify(f)}\n\n`;
  });
  const fetch = (() => {
    const bytes = new TextEncoder().encode(text.join(""));
    let sent = false;
    let release = () => {};
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          return controller.enqueue(bytes);
        }
        return new Promise<void>((resolve) => release = resolve); // (open: nothing more, no close)
      },
      cancel() {
        state.cancelled = true;
        release();
      },
    });
    const type = ndjson ? "application/x-ndjson" : "text/event-stream";
    return Promise.resolve(new Response(body, { headers: { "content-type": type } }));
  }) as typeof globalThis.fetch;
  const seen: GateEvent[] = [];
  return { gated: guardFetch(fetch, { onVerdict: (e) => seen.push(e) }), seen, state };
}

/** `work`, or a failure naming `label` when it has not settled within `HANG_MS` (the client hangs). */
async function settled<T>(label: string, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: the client still waits`)), HANG_MS);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** The text ollama-js hands out of `lines`, how many final chunks, the calls' names, and the gate's events. */
async function ollamaRead(lines: unknown[]) {
  const { gated, seen, state } = openProvider(lines, { ndjson: true });
  const client = new Ollama({ host: "http://127.0.0.1:9", fetch: gated });
  const read = async () => {
    const parts = await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    let done = 0;
    const names: string[] = [];
    for await (const p of parts) {
      text += p.message.content;
      names.push(...(p.message.tool_calls ?? []).map((c) => c.function.name));
      if (p.done) done++;
    }
    return { text, done, names };
  };
  return { ...await settled("ollama", read()), seen, state };
}

test("guardFetch: an Ollama stream left open after its final chunk reaches ollama-js whole, the final chunk held only a grace", async () => {
  // (gate92 held the final chunk to the end of the stream, so a line after it could be told ahead of it: a
  // provider that sent done and kept the connection open left the client waiting on it; before, done
  // went out at once)
  const { text, done, names, seen, state } = await ollamaRead(ollamaStream(["It is ", "sunny."]));
  assert.deepEqual([text, done, names], ["It is sunny.", 1, []]);
  assert.equal(seen.length, 1);
  assert.match(seen[0].findings.map((f) => f.message).join(" "), /still open 500 ms after its message ended/);
  assert.ok(state.cancelled, "the provider's connection is let go");
});

test("guardFetch: an Ollama stream of a call left open after its final chunk: the call is judged and handed out", async () => {
  // (calls wait for the end of the stream to be judged: before, that end never came)
  const { text, done, names, seen } = await ollamaRead(ollamaStream(["Let me check."], [VALID_CALL]));
  assert.deepEqual([text, done, names], ["Let me check.", 1, ["get_weather"]]);
  assert.equal(seen[0]?.verdict?.allowed, true);
});

test("guardFetch: an Ollama line naming a call after the final chunk, the stream then left open, is told ahead of it", async () => {
  const call = {
    message: { role: "assistant", tool_calls: [{ function: { name: "get_weather", arguments: {} } }] },
  };
  const { text, done, names, seen } = await ollamaRead([...ollamaStream(["It is ", "sunny."]), call]);
  assert.deepEqual([done, names], [1, []]);
  assert.match(seen[0]?.reason ?? "", /^toolguard dropped this turn's tool call/);
  assert.equal(text, `It is sunny.\n\n${seen[0]?.reason}`);
});

/** An openai client over an open provider of `frames`. */
function openaiOver(frames: unknown[], named = false) {
  const provider = openProvider(frames, { named });
  const client = new OpenAI({ apiKey: "sk-test", baseURL: "http://127.0.0.1:9/v1", fetch: provider.gated });
  return { client, ...provider };
}

test("guardFetch: an OpenAI Chat stream left open after data: [DONE] ends, its call judged and handed to the openai SDK", async () => {
  // (the openai SDK reads to the end of the body; the gate holds [DONE] and the calls to the end too)
  for (const calls of [[], [VALID_CALL]]) {
    const { client, seen, state } = openaiOver(chatStream(["Let me check."], calls));
    const stream = client.chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
    const final = await settled("openai chat", stream.finalChatCompletion());
    const message = final.choices[0].message;
    assert.equal(message.content, "Let me check.");
    assert.deepEqual((message.tool_calls ?? []).map((c) => c.function.name), calls.map((c) => c.name));
    assert.equal(seen.length, 1);
    assert.ok(state.cancelled);
  }
});

test("guardFetch: an OpenAI Responses stream left open after its final event ends with the response whole", async () => {
  const { client, seen } = openaiOver(responsesStream(["Let me check."], [VALID_CALL]), true);
  const tools = TOOLS_OPENAI.map((t) => ({ type: "function", ...(t.function as object) }));
  const stream = client.responses.stream({ model: "m", input: "Weather?", tools: tools as never });
  const final = await settled("openai responses", stream.finalResponse());
  assert.equal(final.output_text, "Let me check.");
  assert.deepEqual(final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []), ["get_weather"]);
  assert.equal(seen[0]?.verdict?.allowed, true);
});

test("guardFetch: an Anthropic stream left open after message_stop ends with the message whole", async () => {
  const provider = openProvider(anthropicStream(["Let me check."], [VALID_CALL]), { named: true });
  const client = new Anthropic({
    apiKey: "sk-ant-test",
    baseURL: "http://127.0.0.1:9",
    fetch: provider.gated,
  });
  const stream = client.messages.stream({
    model: "m",
    max_tokens: 100,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  });
  const final = await settled("anthropic", stream.finalMessage());
  assert.deepEqual(
    final.content.map((b) => b.type === "text" ? b.text : b.type === "tool_use" ? b.name : b.type),
    ["Let me check.", "get_weather"],
  );
  assert.equal(provider.seen[0]?.verdict?.allowed, true);
});

test("guardFetch: OpenAI Chat n=2, a call after data: [DONE] for a choice that never finished is told, not left unsaid", async () => {
  // (told only once every choice finished: a choice that never did left the call dropped and unsaid. The
  // openai SDK's finalChatCompletion throws for the unfinished choice, with the gate or without it; read
  // chunk by chunk, as an agent loop does, that choice's words end in the reason)
  const frames = [
    choiceChunk(0, { role: "assistant", content: "Sunny." }),
    choiceChunk(1, { role: "assistant", content: "Let me check." }),
    choiceChunk(0, {}, "stop"),
    "data: [DONE]\n\n",
    choiceChunk(1, {
      tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "get_weather" } }],
    }),
    "data: [DONE]\n\n",
  ];
  const { client, seen } = openaiOver(frames);
  const read = async () => {
    const stream = await client.chat.completions.create({
      model: "m",
      messages,
      tools: TOOLS_OPENAI as never,
      stream: true,
      n: 2,
    });
    const texts = ["", ""];
    let calls = 0;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        texts[c.index] += c.delta.content ?? "";
        calls += c.delta.tool_calls?.length ?? 0;
      }
    }
    return { texts, calls };
  };
  const { texts, calls } = await settled("openai chat n=2", read());
  assert.equal(calls, 0);
  assert.match(seen[0]?.reason ?? "", /^toolguard dropped this turn's tool call/);
  assert.ok(seen[0]?.findings.some((f) => /after data: \[DONE\]/.test(f.message)));
  assert.equal(texts[1], `Let me check.\n\n${seen[0]?.reason}`);
  // (a chunk after [DONE] is not read: it may be either choice's, so each choice without a call reads it,
  // as when every choice finished)
  assert.equal(texts[0], `Sunny.\n\n${seen[0]?.reason}`);
});

test("guardFetch: a provider that closes after its final frame ends the stream there, with no grace finding", async () => {
  const fetch = (() =>
    Promise.resolve(
      new Response(
        chatStream(["Hi."]).map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`).join(""),
        {
          headers: { "content-type": "text/event-stream" },
        },
      ),
    )) as typeof globalThis.fetch;
  const seen: GateEvent[] = [];
  const client = new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: guardFetch(fetch, { onVerdict: (e) => seen.push(e) }),
  });
  const final = await client.chat.completions.stream({ model: "m", messages }).finalChatCompletion();
  assert.equal(final.choices[0].message.content, "Hi.");
  assert.deepEqual(seen[0]?.findings ?? [], []);
});

test("guardFetch: a Cohere stream left open after message-end ends, its call judged and sent", async () => {
  // (no official Cohere client here: the body is read to its end, as the cohere SDK reads it)
  const call = {
    type: "tool-call-start",
    index: 1,
    delta: {
      message: {
        tool_calls: {
          id: "t1",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
        },
      },
    },
  };
  const frames = [
    { type: "message-start", id: "c1", delta: { message: { role: "assistant" } } },
    { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index: 0, delta: { message: { content: { text: "Let me check." } } } },
    { type: "content-end", index: 0 },
    call,
    { type: "tool-call-end", index: 1 },
    { type: "message-end", delta: { finish_reason: "TOOL_CALL" } },
  ];
  const { gated, seen, state } = openProvider(frames, { named: true });
  const request = { model: "command-r", stream: true, messages, tools: TOOLS_OPENAI };
  const read = async () => {
    const response = await gated("http://llm.test/v2/chat", {
      method: "POST",
      body: JSON.stringify(request),
    });
    return await response.text();
  };
  const text = await settled("cohere", read());
  assert.match(text, /Let me check\./);
  assert.match(text, /"name":"get_weather"/);
  assert.match(text, /event: message-end\n/);
  assert.equal(seen[0]?.verdict?.allowed, true);
  assert.ok(state.cancelled);
});

test("guardFetch: a provider that sends keep-alives without end after data: [DONE] is let go all the same", async () => {
  // (a grace restarted by each byte, or a read raced once it was over, held such a stream for ever)
  const state = { cancelled: false };
  const encoder = new TextEncoder();
  const frames = chatStream(["Hi."]).map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`);
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(encoder.encode(at < frames.length ? frames[at++] : ": keep-alive\n\n"));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const fetch = answering(body);
  const seen: GateEvent[] = [];
  const client = new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: guardFetch(fetch, { onVerdict: (e) => seen.push(e) }),
  });
  const final = await settled(
    "keep-alives",
    client.chat.completions.stream({ model: "m", messages }).finalChatCompletion(),
  );
  assert.equal(final.choices[0].message.content, "Hi.");
  assert.ok(state.cancelled);
  assert.equal(seen.length, 1);
});

test("guardFetch: a keep-alive flood after data: [DONE] does not hold the event loop through the grace", async () => {
  // (a body that has each chunk ready at once resolves every read as a microtask: the gate's grace loop
  // then read and dropped keep-alives for the whole 500 ms with no timer, no other request, run meanwhile)
  const encoder = new TextEncoder();
  const frames = chatStream(["Hi."]).map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`);
  let at = 0;
  let keepAlives = 0;
  let ticked = false;
  let tickedAtCancel: boolean | undefined;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < frames.length) return controller.enqueue(encoder.encode(frames[at++]));
      if (keepAlives++ === 0) setTimeout(() => ticked = true, 0);
      controller.enqueue(encoder.encode(": keep-alive\n\n"));
    },
    cancel() {
      tickedAtCancel = ticked;
    },
  });
  const fetch = answering(body);
  const client = new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: guardFetch(fetch),
  });
  const final = await settled(
    "keep-alives",
    client.chat.completions.stream({ model: "m", messages }).finalChatCompletion(),
  );
  assert.equal(final.choices[0].message.content, "Hi.");
  assert.equal(tickedAtCancel, true, "a timer set as the flood began ran before the gate let the stream go");
});

test("guardFetch: Anthropic words after an early message_stop reach the client, pings after the end do not hold it", async () => {
  // (the Anthropic SDK reads on past message_stop: the grace ran from the first one and cut the words that
  // still came, the client's text ending early and its final message without its stop; pings alone, as
  // keep-alives, still do not hold the stream)
  const event = (e: Record<string, unknown>) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  const delta = (text: string) =>
    event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
  const words = ["b", "c", "d", "e", "f", "g", "h", "i"];
  const writes = [
    [
      event({
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "m",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      }),
      event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      delta("a"),
      event({ type: "message_stop" }),
    ].join(""),
    ...words.map(delta),
    [
      event({ type: "content_block_stop", index: 0 }),
      event({
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 9 },
      }),
      event({ type: "message_stop" }),
    ].join(""),
  ];
  const state = { cancelled: false };
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // (each write 100 ms after the last, far under the grace; past the end, a ping every 50 ms)
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, at < writes.length ? 100 : 50));
      if (state.cancelled) return;
      controller.enqueue(
        new TextEncoder().encode(at < writes.length ? writes[at++] : event({ type: "ping" })),
      );
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const fetch = answering(body);
  const seen: GateEvent[] = [];
  const client = new Anthropic({
    apiKey: "sk-ant-test",
    baseURL: "http://127.0.0.1:9",
    fetch: guardFetch(fetch, { onVerdict: (e) => seen.push(e) }),
  });
  const stream = client.messages.stream({ model: "m", max_tokens: 100, messages });
  let text = "";
  stream.on("text", (t) => text += t);
  const final = await settled("anthropic early stop", stream.finalMessage());
  assert.equal(text, "abcdefghi");
  assert.equal(final.stop_reason, "end_turn");
  assert.ok(state.cancelled, "the pings are let go");
  assert.match(
    seen[0]?.findings.map((f) => f.message).join(" ") ?? "",
    /still open 500 ms after its message ended/,
  );
});

test("guardFetch: the grace after data: [DONE] is kept when the wall clock steps back meanwhile", async () => {
  // (counted on Date.now, an hour's step back, as a clock set right by NTP may take, held a stream that sent
  // keep-alives for that hour more)
  const encoder = new TextEncoder();
  const frames = chatStream(["Hi."]).map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`);
  const wallClock = Date.now;
  const state = { cancelled: false };
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pulls++ === 0) return controller.enqueue(encoder.encode(frames.join("")));
      if (pulls === 3) Date.now = () => wallClock() - 3_600_000;
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (!state.cancelled) controller.enqueue(encoder.encode(": keep-alive\n\n"));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const fetch = answering(body);
  const client = new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: guardFetch(fetch),
  });
  try {
    const final = await settled(
      "clock step",
      client.chat.completions.stream({ model: "m", messages }).finalChatCompletion(),
    );
    assert.equal(final.choices[0].message.content, "Hi.");
    assert.ok(state.cancelled);
  } finally {
    Date.now = wallClock;
  }
});

test("guardFetch: the openai SDK's abort during the grace ends the stream there, nothing reported, no late timer", async () => {
  // (a fetch that honours the signal, as the runtimes' do: the provider's body errors with the abort; its
  // cancel, which may reject, is never left unhandled)
  const encoder = new TextEncoder();
  const frames = chatStream(["Hi."]).map((f) => typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`);
  let source: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      source = controller;
      controller.enqueue(encoder.encode(frames.join("")));
    },
    cancel() {
      throw new Error("the provider's cancel failed");
    },
  });
  const fetch = ((_: unknown, init?: RequestInit) => {
    init?.signal?.addEventListener("abort", () => source!.error(new DOMException("aborted", "AbortError")));
    return Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
  }) as typeof globalThis.fetch;
  const seen: GateEvent[] = [];
  const client = new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: guardFetch(fetch, { onVerdict: (e) => seen.push(e) }),
  });
  const abort = new AbortController();
  const read = async () => {
    const stream = await client.chat.completions.create({ model: "m", messages, stream: true }, {
      signal: abort.signal,
    });
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.finish_reason) abort.abort();
    }
    return text;
  };
  assert.equal(await settled("abort", read()), "Hi.");
  assert.deepEqual(seen, [], "the client's abort is no provider's fault, and no grace ran out");
});

/**
 * A provider that sends `frames` (NDJSON when `ndjson`) and stays open, whose body errors with an AbortError
 * when the request's signal aborts, as the runtimes' fetch does.
 */
function abortableProvider(frames: unknown[], ndjson: boolean) {
  const text = frames.map((f) =>
    typeof f === "string" ? f : ndjson ? JSON.stringify(f) + "\n" : `data: ${JSON.stringify(f)}\n\n`
  );
  const fetch = ((_: unknown, init?: RequestInit) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text.join("")));
        init?.signal?.addEventListener(
          "abort",
          () => controller.error(new DOMException("aborted", "AbortError")),
        );
      },
    });
    const type = ndjson ? "application/x-ndjson" : "text/event-stream";
    return Promise.resolve(new Response(body, { headers: { "content-type": type } }));
  }) as typeof globalThis.fetch;
  const seen: GateEvent[] = [];
  return { gated: guardFetch(fetch, { onVerdict: (e) => seen.push(e) }), seen };
}

test("guardFetch: ollama-js aborting during the grace ends its stream there with the abort: no provider finding, the held final chunk not sent", async () => {
  // (gate92's read error after the final chunk was the provider's: the abort was reported as a malformed
  // event "could not be read after its final chunk: aborted" and the held done line still sent)
  for (const calls of [[], [VALID_CALL]]) {
    const { gated, seen } = abortableProvider(ollamaStream(["It is ", "sunny."], calls), true);
    const client = new Ollama({ host: "http://127.0.0.1:9", fetch: gated });
    const parts = await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    let done = 0;
    const read = async () => {
      try {
        for await (const p of parts) {
          text += p.message.content;
          if (p.done) done++;
          if (text === "It is sunny.") parts.abort();
        }
        return "ended";
      } catch (e) {
        return (e as Error).name;
      }
    };
    assert.equal(await settled("ollama abort", read()), "AbortError");
    assert.deepEqual([text, done], ["It is sunny.", 0], "nothing is sent after the abort");
    assert.deepEqual(seen, [], "the client's abort is no provider's fault");
  }
});

test("guardFetch: ollama-js aborting mid-way through a retry's stream ends with the abort, nothing told of the provider", async () => {
  // (a retry's read error was caught where the gate forwards it, as a provider's: the client's stream
  // then closed as if whole, ollama-js throwing "Did not receive done" in place of the abort; the retry's
  // text is on several lines, as the text watch holds a last word that could begin a written call)
  const text = ["Checking ", "now.\n", "Oslo"];
  for (const retryLines of [ollamaStream(text).slice(0, 3), ollamaStream(text, [VALID_CALL])]) {
    let asked = 0;
    const fetch = ((_: unknown, init?: RequestInit) => {
      const lines = asked++ === 0 ? ollamaStream([], [REJECTED_CALL]) : retryLines;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(lines.map((l) => JSON.stringify(l) + "\n").join("")));
          if (asked === 1) return controller.close();
          init?.signal?.addEventListener(
            "abort",
            () => controller.error(new DOMException("aborted", "AbortError")),
          );
        },
      });
      return Promise.resolve(new Response(body, { headers: { "content-type": "application/x-ndjson" } }));
    }) as typeof globalThis.fetch;
    const seen: GateEvent[] = [];
    const client = new Ollama({
      host: "http://127.0.0.1:9",
      fetch: guardFetch(fetch, { retry: 1, onVerdict: (e) => seen.push(e) }),
    });
    const parts = await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    const read = async () => {
      try {
        for await (const p of parts) {
          if (p.message.content === "Checking ") parts.abort();
        }
        return "ended";
      } catch (e) {
        return (e as Error).name;
      }
    };
    assert.equal(await settled("ollama retry abort", read()), "AbortError");
    assert.equal(asked, 2);
    assert.deepEqual(seen.map((e) => [e.attempt, e.retried ?? false, e.findings.length]), [[0, true, 0]]);
  }
});

test("guardFetch: the openai SDK aborting mid-stream, a call held, ends the stream there with nothing reported", async () => {
  // (a guard, as the grace's: before any final frame a read error was always rethrown)
  const frames = chatStream(["Let me ", "check."], [VALID_CALL]).filter((f) =>
    typeof f !== "string" && !(f as { choices: { finish_reason?: unknown }[] }).choices[0]?.finish_reason
  );
  const { gated, seen } = abortableProvider(frames, false);
  const client = new OpenAI({ apiKey: "sk-test", baseURL: "http://127.0.0.1:9/v1", fetch: gated });
  const abort = new AbortController();
  const read = async () => {
    const stream = await client.chat.completions.create(
      { model: "m", messages, tools: TOOLS_OPENAI as never, stream: true },
      { signal: abort.signal },
    );
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (text === "Let me check.") abort.abort();
    }
    return text;
  };
  assert.equal(await settled("openai abort", read()), "Let me check.");
  assert.deepEqual(seen, [], "the client's abort is no provider's fault, the call not judged");
});

/** A Gemini chunk of `candidates` (each its position's parts and other fields), the chunk's own fields `top`. */
const geminiChunk = (candidates: { parts: unknown[]; [key: string]: unknown }[], top = {}) => ({
  candidates: candidates.map(({ parts, ...extra }, index) => ({
    index,
    content: { role: "model", parts },
    ...extra,
  })),
  ...top,
});

const GEMINI_USAGE = { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 } };

/** Longer than the grace: a chunk the provider sends this late is lost when the gate took the message for ended. */
const LATER_MS = 700;

/**
 * The chunks a client of Gemini reads (to the end of the body, as @google/genai does; its SDK is not
 * installed) of `frames` through guardFetch, then of `later` sent `LATER_MS` after them, the provider then
 * left open unless `closes`, the request asking for `candidates`; the gate's events and whether the
 * provider was let go.
 */
async function geminiRead(
  frames: unknown[],
  { closes = false, candidates = 1, later = [] as unknown[] } = {},
) {
  const sse = (fs: unknown[]) =>
    new TextEncoder().encode(fs.map((f) => `data: ${JSON.stringify(f)}\n\n`).join(""));
  const state = { cancelled: false };
  const writes: (() => Promise<Uint8Array | undefined>)[] = [() => Promise.resolve(sse(frames))];
  if (later.length > 0) {
    writes.push(() => new Promise((resolve) => setTimeout(() => resolve(sse(later)), LATER_MS)));
  }
  let release = () => {};
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const write = writes.shift();
      if (write) return controller.enqueue((await write())!);
      if (closes) return controller.close();
      return new Promise<void>((resolve) => release = resolve); // (open: nothing more, no close)
    },
    cancel() {
      state.cancelled = true;
      release();
    },
  });
  const fetch = answering(body);
  const seen: GateEvent[] = [];
  const gated = guardFetch(fetch, { onVerdict: (e) => seen.push(e) });
  const request = {
    contents: [{ role: "user", parts: [{ text: "Weather in Oslo?" }] }],
    tools: [{ functionDeclarations: TOOLS_RESPONSES }],
    generationConfig: { candidateCount: candidates },
  };
  const read = async () => {
    const url = "http://127.0.0.1:9/v1beta/models/g:streamGenerateContent?alt=sse";
    const res = await gated(url, { method: "POST", body: JSON.stringify(request) });
    return sseData(await res.text());
  };
  return { chunks: await settled("gemini", read()), seen, cancelled: state.cancelled };
}

/** What a client joins of candidate `at` over `chunks`: its text, its calls' names, its finish. */
function geminiAnswer(chunks: { candidates?: Record<string, unknown>[] }[], at = 0) {
  const own = chunks.map((c) => c.candidates?.[at]).filter((c) => c !== undefined);
  const parts = own.flatMap((c) => ((c.content as { parts?: Record<string, unknown>[] })?.parts) ?? []);
  return {
    text: parts.map((p) => p.text ?? "").join(""),
    names: parts.flatMap((p) => p.functionCall ? [(p.functionCall as { name: string }).name] : []),
    finish: own.map((c) => c.finishReason).filter((f) => f !== undefined),
  };
}

test("guardFetch: a Gemini stream left open after its last candidate finished ends, its call judged and handed out", async () => {
  // (Gemini has no end-of-message frame: the gate held the calls to the close, which never came, and the
  // client waited on it)
  for (const [call, allowed] of [[VALID_CALL, true], [REJECTED_CALL, false]] as const) {
    const { chunks, seen, cancelled } = await geminiRead([
      geminiChunk([{ parts: [{ text: "Let me check." }] }]),
      geminiChunk(
        [{ parts: [{ functionCall: { name: call.name, args: call.args } }], finishReason: "STOP" }],
        GEMINI_USAGE,
      ),
    ]);
    const answer = geminiAnswer(chunks);
    assert.deepEqual([answer.names, answer.finish], [allowed ? [call.name] : [], ["STOP"]], call.name);
    assert.ok(answer.text.startsWith("Let me check."), answer.text);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].verdict?.allowed, allowed);
    assert.match(
      seen[0].findings.map((f) => f.message).join(" "),
      /still open 500 ms after its message ended/,
    );
    assert.ok(cancelled, "the provider's connection is let go");
  }
});

test("guardFetch: a Gemini usage chunk after the finish reaches the client, the stream left open", async () => {
  const { chunks, seen } = await geminiRead([
    geminiChunk([{ parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }] }]),
    geminiChunk([{ parts: [{ text: "" }], finishReason: "STOP" }]),
    GEMINI_USAGE,
  ]);
  assert.deepEqual(geminiAnswer(chunks).names, ["get_weather"]);
  assert.deepEqual(chunks.at(-1)?.usageMetadata, GEMINI_USAGE.usageMetadata);
  assert.equal(seen[0]?.verdict?.allowed, true);
});

test("guardFetch: Gemini candidateCount 2 left open ends once both candidates finished, each whole", async () => {
  // (the first candidate's finish ends no message: the second's words, sent later than the grace, still come)
  const { chunks, seen } = await geminiRead([
    geminiChunk([{ parts: [{ text: "Sunny." }], finishReason: "STOP" }, { parts: [{ text: "Let me " }] }]),
  ], {
    candidates: 2,
    later: [geminiChunk([{ parts: [] }, {
      parts: [{ text: "check." }, { functionCall: { name: "get_weather", args: { city: "Oslo" } } }],
      finishReason: "STOP",
    }], GEMINI_USAGE)],
  });
  assert.deepEqual(geminiAnswer(chunks, 0), { text: "Sunny.", names: [], finish: ["STOP"] });
  assert.deepEqual(geminiAnswer(chunks, 1), {
    text: "Let me check.",
    names: ["get_weather"],
    finish: ["STOP"],
  });
  assert.match(seen.at(-1)?.findings.map((f) => f.message).join(" ") ?? "", /still open 500 ms/);
});

test("guardFetch: a Gemini chunk of more candidates than asked, refused, ends no message though they finished", async () => {
  const { chunks, seen } = await geminiRead([
    geminiChunk([{ parts: [{ text: "Hi." }], finishReason: "STOP" }, { parts: [], finishReason: "STOP" }]),
  ], { later: [geminiChunk([{ parts: [{ text: "Sunny." }], finishReason: "STOP" }], GEMINI_USAGE)] });
  assert.deepEqual(geminiAnswer(chunks), { text: "Sunny.", names: [], finish: ["STOP"] });
  assert.match(
    seen.at(-1)?.findings.map((f) => f.message).join(" ") ?? "",
    /2 candidates.*still open 500 ms/,
  );
});

test("guardFetch: a Gemini provider that closes after its last chunk ends the stream there, with no grace finding", async () => {
  const { chunks, seen } = await geminiRead([
    geminiChunk([{
      parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }],
      finishReason: "STOP",
    }]),
    GEMINI_USAGE,
  ], { closes: true });
  assert.deepEqual(geminiAnswer(chunks).names, ["get_weather"]);
  assert.deepEqual(chunks.at(-1)?.usageMetadata, GEMINI_USAGE.usageMetadata);
  assert.equal(seen[0]?.verdict?.allowed, true);
  assert.deepEqual(seen[0]?.findings ?? [], []);
});

test("guardFetch: a Gemini prompt blocked, the stream left open, ends with the block the client reads", async () => {
  const blocked = { promptFeedback: { blockReason: "SAFETY" }, ...GEMINI_USAGE };
  const { chunks, seen } = await geminiRead([blocked]);
  assert.deepEqual(chunks, [blocked]);
  assert.deepEqual(seen.at(-1)?.findings.map((f) => f.code), ["malformed_event"]);
});
