/**
 * Every call the gate drops, or a frame it cannot read that may have carried one, is told to the model on
 * every path of a stream (beside calls kept, on a retry, with the client gone at the end), in the text the
 * model reads, and `onVerdict` reports that text: driven through the official clients (Gemini through
 * `guardFetch` alone: its SDK is not installed).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { type GateEvent, guardFetch, type GuardFetchOptions } from "../gate.ts";
import {
  anthropicStream,
  type CallSpec,
  chatChunk,
  chatStream,
  choicesChunk,
  cohereBlockTexts,
  fakeProvider,
  ollamaStream,
  REJECTED_CALL,
  responsesStream,
  sseData,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
  withGuardedServer,
} from "./_fake_llm_server.ts";
import { sdkClients } from "./_sdk_clients.ts";

const provider = fakeProvider();
const { reply, events } = provider;
const { anthropic, ollama, openai } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];
/** The names a call kept beside a dropped one takes: one that passes, one the judge rejects. */
const CALLED = ["get_weather", "delete_everything"];
/** The reason for a dropped call, alone at the end of what the model read. */
const DROPPED_ALONE =
  /^toolguard dropped this turn's tool call: its stream events were malformed [^\n]*needed\.$/;
/** The reason for a dropped call, then a blank line and the judge's for a rejected one. */
const DROPPED_THEN_STOPPED =
  /^toolguard dropped this turn's tool call: its stream events were malformed [^\n]*needed\.\n\ntoolguard stopped /;

/** What the openai client assembles of a Chat stream through the gate, asked with the tools (and `n`). */
const chatFinal = (ask: { n?: number } = {}) =>
  openai().chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never, ...ask })
    .finalChatCompletion();

/** What the Anthropic SDK assembles of a stream through the gate, asked with the tools. */
const anthropicFinal = () =>
  anthropic().messages.stream({ model: "claude", max_tokens: 10, messages, tools: TOOLS_ANTHROPIC as never })
    .finalMessage();

/** A Gemini stream chunk of candidate 0 with `parts`, the candidate's other fields `extra`, the chunk's `top`. */
const geminiChunk = (parts: unknown[], extra = {}, top = {}) =>
  `data: ${
    JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts }, ...extra }], ...top })
  }\n\n`;

/**
 * Streams `bodies` (one per attempt) through guardFetch as the answer to `request` posted to `url` (for the
 * dialects whose SDK is not installed): the events the client got, what onVerdict had, the bodies unasked.
 */
async function throughGate(url: string, request: unknown, bodies: string[], options: GuardFetchOptions) {
  const left = [...bodies];
  const seen: GateEvent[] = [];
  const f = guardFetch(
    () => Promise.resolve(new Response(left.shift()!, { headers: { "content-type": "text/event-stream" } })),
    { ...options, onVerdict: (e) => seen.push(e) },
  );
  const res = await f(url, { method: "POST", body: JSON.stringify(request) });
  return { events: sseData(await res.text()), seen, left: left.length };
}

/** {@linkcode throughGate} for Gemini, its request declaring the tools: the chunks the client got. */
async function throughGemini(bodies: string[], options: GuardFetchOptions = {}) {
  const { events, seen, left } = await throughGate(
    "http://llm.test/v1beta/models/g:streamGenerateContent?alt=sse",
    {
      contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
      tools: [{ functionDeclarations: TOOLS_RESPONSES }],
    },
    bodies,
    options,
  );
  return { chunks: events, seen, left };
}

/** The text of candidate 0's parts over `chunks`, as a client joins it. */
const geminiText = (chunks: { candidates?: { content?: { parts?: { text?: string }[] } }[] }[]) =>
  chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? "").join("");

/** The delta of a `get_weather` call `id` at position `index` among the answer's calls. */
const weatherCall = (id: string, index = 0) => ({
  tool_calls: [{
    index,
    id,
    type: "function",
    function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
  }],
});

test("guardFetch: an Anthropic frame not JSON that names tool_use beside a call kept is told, as onVerdict says", async () => {
  // (the second call's block start cut short was dropped unread; the first call went out with its stop, and
  // nothing said the other had not; a frame not JSON naming no call beside it may be text: dropped unsaid)
  for (const [name, cut] of CALLED.flatMap((n) => [[n, "tool_use"], [n, "text"]])) {
    const frames = anthropicStream(["Let me check."], [
      { name, args: { city: "Oslo" } },
      { name: "get_weather", args: { city: "Bergen" } },
    ]) as Record<string, unknown>[];
    const cutShort = (e: Record<string, unknown>) =>
      `event: ${e.type}\ndata: ${JSON.stringify(e).slice(0, -1)}\n\n`;
    const sse: unknown[] = frames.flatMap((e) => {
      if (cut === "tool_use") return e.type === "content_block_start" && e.index === 2 ? [cutShort(e)] : [e];
      // (a text delta cut short beside the calls, which both go)
      const words = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " Hm." } };
      return e.type === "content_block_stop" && e.index === 0 ? [cutShort(words), e] : [e];
    });
    reply({ sse, named: true });
    const message = await anthropicFinal();
    const passed = name === "get_weather";
    const kept = cut === "tool_use" ? ["get_weather"] : ["get_weather", "get_weather"];
    assert.deepEqual(
      [message.content.flatMap((b) => b.type === "tool_use" ? [b.name] : []), message.stop_reason],
      passed ? [kept, "tool_use"] : [[], "end_turn"],
    );
    const said = message.content.flatMap((b) => b.type === "text" ? [b.text] : []);
    assert.equal(said[0], "Let me check.");
    const told = said.slice(1).join("").trimStart();
    if (cut === "text" && passed) assert.equal(told, "", `${name} ${cut}`);
    else if (cut === "text") assert.match(told, /^toolguard stopped /, `${name} ${cut}`);
    else assert.match(told, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, `${name} ${cut}`);
    assert.equal(events[0]?.reason ?? "", told, `${name} ${cut}`);
  }
});

test("guardFetch n=2: a Chat call of no known answer beside calls kept is told by every answer that holds one", async () => {
  // (a call at a choice past n, a chunk not JSON that names tool_calls: either may be any answer's; both
  // answers kept their calls, and only an answer that lost every call was told; a chunk not JSON that names
  // no call may be text: dropped unsaid beside kept calls)
  const stray: Record<string, unknown> = {
    "past n": choicesChunk([{ index: 5, delta: weatherCall("C") }]),
    "not JSON": `data: ${
      JSON.stringify(choicesChunk([{ index: 0, delta: weatherCall("C", 1) }])).slice(0, -1)
    }\n\n`,
    "text not JSON": `data: ${
      JSON.stringify(choicesChunk([{ index: 0, delta: { content: "Hm" } }])).slice(0, -1)
    }\n\n`,
  };
  for (const [label, frame] of Object.entries(stray)) {
    const role = { role: "assistant" };
    reply({
      sse: [
        choicesChunk([0, 1].map((index) => ({ index, delta: { ...role, content: "Let me check." } }))),
        choicesChunk([{ index: 0, delta: weatherCall("A") }, { index: 1, delta: weatherCall("B") }]),
        frame,
        choicesChunk([0, 1].map((index) => ({ index, delta: {}, finish_reason: "tool_calls" }))),
        "data: [DONE]\n\n",
      ],
    });
    const final = await chatFinal({ n: 2 });
    const answers = [0, 1].map((i) => final.choices.find((c) => c.index === i));
    assert.deepEqual(
      answers.map((c) => [c?.finish_reason, c?.message.tool_calls?.map((t) => t.id)]),
      [["tool_calls", ["A"]], ["tool_calls", ["B"]]],
      label,
    );
    const told = answers.map((c) => (c?.message.content ?? "").slice("Let me check.".length).trimStart());
    if (label === "text not JSON") assert.deepEqual([told, events[0]?.reason], [["", ""], undefined], label);
    else {
      for (const t of told) assert.match(t, DROPPED_ALONE, label);
      assert.deepEqual(events[0]?.reason, told[0], label);
    }
  }
});

test("guardFetch: an Ollama stream with no call and a line not JSON reaches onVerdict, though the client stops at done", async () => {
  // (the ollama client cancels the stream at the final chunk: sent as it came, the gate never reached the
  // end, and onVerdict never heard of the line dropped, whether it named a call, told, or not)
  for (const cut of ["sunny.", "tool_calls"]) {
    const lines = ollamaStream(["It is ", cut === "sunny." ? "sunny." : ""]).map((l, i) => {
      if (i !== 1) return l;
      const line = cut === "sunny."
        ? l
        : { ...(l as object), message: { role: "assistant", tool_calls: [{}] } };
      return JSON.stringify(line).slice(0, -1) + "\n";
    });
    reply({ ndjson: lines });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    for await (const p of parts) text += p.message.content;
    assert.deepEqual(events.map((e) => e.findings.map((f) => f.code)), [["malformed_event"]], cut);
    assert.equal(text, cut === "sunny." ? "It is " : `It is \n\n${events[0]?.reason}`, cut);
  }
});

test("guardFetch: an Ollama line not JSON that names tool_calls after the final chunk is told ahead of it, which the client reads", async () => {
  // (the final chunk went out as it came and the ollama client stopped reading at it: whatever the gate
  // added after it was never read, the call went unsaid; a line naming no call may be text: dropped unsaid;
  // a final chunk with words keeps them ahead of the reason)
  const cut = (line: unknown) => JSON.stringify(line).slice(0, -1) + "\n";
  const call = { message: { role: "assistant", tool_calls: [{ function: { name: "get_weather" } }] } };
  const cases: [string, string[], unknown[], boolean][] = [
    ["call", ["It is ", "sunny."], [cut(call)], true],
    [
      "call, then words",
      ["It is ", "sunny."],
      [cut(call), { message: { content: " Later." }, done: false }],
      true,
    ],
    ["final words", ["It is ", "sunny."], [cut(call)], true],
    ["text", ["It is ", "sunny."], [cut({ message: { content: "Hm" } })], false],
  ];
  for (const [label, words, after, told] of cases) {
    const lines = ollamaStream(words) as Record<string, unknown>[];
    if (label === "final words") {
      lines.splice(-2, 2, { ...lines.at(-1)!, message: { role: "assistant", content: "sunny." } });
    }
    reply({ ndjson: [...lines, ...after] });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    let done = 0;
    for await (const p of parts) {
      text += p.message.content;
      if (p.done) done++;
    }
    assert.equal(done, 1, label);
    // (each line after the final chunk dropped, as the client never reads it: words too)
    assert.deepEqual(
      events.map((e) => e.findings.map((f) => f.code)),
      [after.map(() => "malformed_event")],
      label,
    );
    if (!told) {
      assert.deepEqual([text, events[0]?.reason], ["It is sunny.", undefined], label);
      continue;
    }
    assert.match(events[0]?.reason ?? "", DROPPED_ALONE, label);
    assert.equal(text, `It is sunny.\n\n${events[0]?.reason}`, label);
  }
});

/** A fetch that answers with `lines` as an Ollama stream, its body then failing with `fail` where given. */
const ndjsonFetch = (lines: unknown[], fail?: Error): typeof fetch => () => {
  const bytes = lines.map((l) =>
    new TextEncoder().encode(typeof l === "string" ? l : JSON.stringify(l) + "\n")
  );
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < bytes.length) controller.enqueue(bytes[at++]);
      else if (fail) controller.error(fail);
      else controller.close();
    },
  });
  return Promise.resolve(new Response(body, { headers: { "content-type": "application/x-ndjson" } }));
};

/** What ollama-js reads of `lines` through the gate: its text, how many final chunks, and the gate's event. */
async function ollamaRead(lines: unknown[], options: { fail?: Error; maxResponseBytes?: number } = {}) {
  const seen: GateEvent[] = [];
  const gated = guardFetch(ndjsonFetch(lines, options.fail), {
    onVerdict: (e) => seen.push(e),
    maxResponseBytes: options.maxResponseBytes,
  });
  const client = new Ollama({ host: "http://127.0.0.1:9", fetch: gated });
  const parts = await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
  let text = "";
  let done = 0;
  for await (const p of parts) {
    text += p.message.content;
    if (p.done) done++;
  }
  return { text, done, seen };
}

test("guardFetch: Ollama lines after the final chunk are dropped, as the client stops reading there: a call among them is told, and no number of them is held", async () => {
  // (held behind the final chunk, which waits for the end, they were judged and sent after it, where the
  // client never read them: a call among them reached onVerdict as allowed, never run nor told, and enough
  // of them passed maxResponseBytes, so the client read an error in place of its answer)
  const cut = (line: unknown) => JSON.stringify(line).slice(0, -1) + "\n";
  const call = {
    message: { role: "assistant", tool_calls: [{ function: { name: "get_weather", arguments: {} } }] },
  };
  const words = { message: { role: "assistant", content: "x".repeat(60) }, done: false };
  const cases: [string, unknown[], unknown[], boolean][] = [
    ["many words", [], Array(100).fill(words), false],
    ["a call", [], [call], true],
    ["a call, then words", [], [call, words], true],
    ["a call not JSON, after a line not JSON", [cut({ message: { content: "Hm" } })], [cut(call)], true],
  ];
  for (const [label, before, after, told] of cases) {
    const lines = ollamaStream(["It is ", "sunny."]);
    lines.splice(-1, 0, ...before);
    const { text, done, seen } = await ollamaRead([...lines, ...after], { maxResponseBytes: 2048 });
    assert.equal(done, 1, label);
    assert.equal(seen.length, 1, label);
    assert.deepEqual(seen[0].calls, [], label);
    assert.ok(
      seen[0].findings.length > 0 && seen[0].findings.every((f) => f.code === "malformed_event"),
      label,
    );
    if (!told) {
      assert.deepEqual([text, seen[0].reason], ["It is sunny.", undefined], label);
      continue;
    }
    assert.match(seen[0].reason ?? "", DROPPED_ALONE, label);
    assert.equal(text, `It is sunny.\n\n${seen[0].reason}`, label);
  }
});

test("guardFetch: an Ollama stream that fails after its final chunk reads as it would without the gate, whole", async () => {
  // (the final chunk waits for the end, to be told of what follows; the ollama client stops at it and never
  // reads past it, so a failure after it is no failure to the client: it read an error, its answer lost)
  const { text, done, seen } = await ollamaRead(ollamaStream(["It is ", "sunny."]), {
    fail: new Error("connection reset"),
  });
  assert.deepEqual([text, done], ["It is sunny.", 1]);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].reason, undefined);
});

/** The model's text where a retry follows a call dropped as malformed beside "Let me " and a rejected call. */
const RETRIED =
  /^Let me (?:<tool_call>)?\n\ntoolguard dropped this turn's tool call: its stream events were malformed [^\n]*needed\.\n\nAgain\.$/;

test("guardFetch retry: an Ollama call line not JSON is told ahead of the retry's words though the watch held words after the calls, or the calls", async () => {
  // (the reason went after the last words held, behind the rejected call, and the retry dropped it with them:
  // onVerdict told of the dropped call, the model never read of it; where the watch held the call's line
  // too, the router never saw a call held, and nothing told of the line dropped)
  for (const words of [["Let me "], ["Let me <tool_call>"]]) {
    const lines = ollamaStream(words, [REJECTED_CALL]) as Record<string, unknown>[];
    const cut = JSON.stringify(lines[1]).slice(0, -1) + "\n";
    const more = {
      ...lines[0],
      message: { role: "assistant", content: words[0].endsWith(">") ? " x" : "<tool_call> x" },
    };
    const script = [{ ndjson: [lines[0], cut, lines[1], more, lines[2]] }, {
      ndjson: ollamaStream(["Again."]),
    }];
    const { value, seen } = await withGuardedServer(script, { retry: 1 }, async (server, f) => {
      const client = new Ollama({ host: server.url, fetch: f });
      let text = "";
      for await (
        const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
      ) text += part.message.content;
      return text;
    });
    assert.match(value, RETRIED, words[0]);
    assert.deepEqual(seen.map((e) => [e.attempt, e.retried]), [[0, true]], words[0]);
    assert.ok(
      seen[0].reason?.startsWith(value.slice(value.indexOf("toolguard"), -"\n\nAgain.".length)),
      words[0],
    );
  }
});

test("guardFetch retry: a Gemini call in pieces is told ahead of the retry's words though the watch held words after the calls, or the calls", async () => {
  // (as for Ollama: the reason held behind the rejected call was dropped by the retry, or never written)
  const chunk = geminiChunk;
  const piece = {
    name: "get_weather",
    partialArgs: [{ jsonPath: "$.city", stringValue: "O" }],
    willContinue: true,
  };
  for (const words of ["Let me ", "Let me <tool_call>"]) {
    const answers = [
      chunk([{ text: words }]) +
      chunk([{ functionCall: { name: "get_weather", args: REJECTED_CALL.args } }]) +
      chunk([{ functionCall: piece }]) + chunk([{ text: words.endsWith(">") ? " x" : "<tool_call> x" }]) +
      chunk([], { finishReason: "STOP" }),
      chunk([{ text: "Again." }]) + chunk([], { finishReason: "STOP" }),
    ];
    const { chunks, seen, left } = await throughGemini(answers, { retry: 1 });
    const text = geminiText(chunks);
    assert.equal(left, 0, words);
    assert.match(text, RETRIED, words);
    assert.deepEqual(seen.map((e) => [e.attempt, e.retried]), [[0, true]], words);
    assert.ok(seen[0].reason?.startsWith(text.slice(text.indexOf("toolguard"), -"\n\nAgain.".length)), words);
  }
});

test("guardFetch: a Chat call the text watch held beside a chunk not JSON that names tool_calls is told, as onVerdict says", async () => {
  // (the watch held the call's chunk after "<tool_call>", so the router never saw a call held: the call went
  // out, the chunk dropped beside it unsaid)
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...chatChunk({}),
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const call = (id: string) => ({
    tool_calls: [{
      index: 0,
      id,
      type: "function",
      function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
    }],
  });
  reply({
    sse: [
      chunk({ role: "assistant", content: "Let me <tool_call>" }),
      chunk(call("A")),
      `data: ${JSON.stringify(chunk(call("B"))).slice(0, -1)}\n\n`,
      chunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ],
  });
  const final = await chatFinal();
  const choice = final.choices[0];
  assert.deepEqual([choice?.finish_reason, choice?.message.tool_calls?.map((t) => t.id)], ["tool_calls", [
    "A",
  ]]);
  const told = (choice?.message.content ?? "").slice("Let me <tool_call>".length).trimStart();
  assert.match(told, DROPPED_ALONE);
  assert.equal(events[0]?.reason, told);
});

test("guardFetch: the judge's reason beside a call dropped as malformed speaks of the turn's other calls, which its counts count", async () => {
  // (the judge's lead said "the other call of this turn was kept" and "stopped this turn's tool calls" just
  // after the model read of a call of this turn dropped, which it neither kept nor counted: "1 of 2 calls")
  const call = (index: number, id: string, name: string) => ({
    tool_calls: [{ index, id, type: "function", function: { name, arguments: '{"city":"Oslo"}' } }],
  });
  const chunk = (choice: number, delta: unknown, finish: string | null = null) => ({
    ...chatChunk({}),
    choices: [{ index: choice, delta, finish_reason: finish }],
  });
  const sse = [
    chunk(0, { role: "assistant", content: "Let me check." }),
    chunk(0, call(0, "A", "get_weather")),
    chunk(0, call(1, "B", "delete_everything")),
    chunk(3, call(2, "C", "get_weather")),
    chunk(0, {}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
  for (const onRejected of ["drop-call", "withhold-turn"] as const) {
    const { value, seen } = await withGuardedServer([{ sse }], { onRejected }, async (server, f) => {
      const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
      return await client.chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never })
        .finalChatCompletion();
    });
    const choice = value.choices[0];
    const kept = onRejected === "drop-call";
    assert.deepEqual(choice?.message.tool_calls?.map((t) => t.id) ?? [], kept ? ["A"] : [], onRejected);
    const told = (choice?.message.content ?? "").slice("Let me check.\n\n".length);
    const [dropped, judged] = told.split("\n\n");
    assert.match(dropped, DROPPED_ALONE, onRejected);
    assert.match(
      judged,
      kept
        ? /^toolguard removed the rejected tool call below; the remaining call of this turn was kept\.\n1 of 2 calls was rejected/
        : /^toolguard stopped this turn's other tool calls; the accepted one did not run either\.\n1 of 2 calls was rejected/,
      onRejected,
    );
    assert.equal(seen[0]?.reason, told, onRejected);
  }
});

test("guardFetch: a Gemini chunk not JSON that names functionCall is told, alone or beside a call kept, as onVerdict says", async () => {
  // (Gemini finishes a turn of calls STOP as any other: the chunk was dropped unread and nothing said; a
  // chunk not JSON that names no call may be text: dropped unsaid)
  const chunk = geminiChunk;
  const cutShort = (frame: string) => frame.replace(/\}\n\n$/, "\n\n");
  const call = chunk([{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }]);
  const variants = {
    alone: cutShort(call),
    beside: call + cutShort(call),
    text: cutShort(chunk([{ text: "x" }])),
    // (a finish that comes again, with the usage: told once, where each finish told it)
    "finished twice": cutShort(call) + chunk([], { finishReason: "STOP", usageMetadata: {} }),
  };
  for (const [label, middle] of Object.entries(variants)) {
    const body = chunk([{ text: "Let me " }]) + middle + chunk([], { finishReason: "STOP" });
    const { chunks, seen } = await throughGemini([body]);
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    const calls = parts.flatMap((p: { functionCall?: { name: string } }) =>
      p.functionCall ? [p.functionCall.name] : []
    );
    assert.deepEqual(calls, label === "beside" ? ["get_weather"] : [], label);
    const text = parts.map((p: { text?: string }) => p.text ?? "").join("");
    const told = text.slice("Let me ".length).trimStart();
    if (label === "text") assert.deepEqual([told, seen[0]?.reason], ["", undefined], label);
    else {
      assert.match(told, DROPPED_ALONE, label);
      assert.equal(seen[0]?.reason, told, label);
    }
  }
});

test("guardFetch: a Gemini call dropped after the candidate's finish went out is told at the end, as one before it is", async () => {
  // (after the finish, nothing told of it: the client read a plain stop, the call gone, and onVerdict
  // reported no reason; before the finish, the finish tells of it)
  const chunk = geminiChunk;
  const cutShort = (frame: string) => frame.replace(/\}\n\n$/, "\n\n");
  const call = chunk([{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }]);
  const pieced = chunk([{ functionCall: { name: "get_weather", partialArgs: [], willContinue: true } }]);
  const variants = {
    unread: cutShort(call),
    "unread, then the usage": cutShort(call) + chunk([], {}, { usageMetadata: { totalTokenCount: 3 } }),
    "in pieces": pieced,
    text: cutShort(chunk([{ text: "x" }])),
  };
  for (const [label, after] of Object.entries(variants)) {
    const body = chunk([{ text: "Let me check." }]) + chunk([], { finishReason: "STOP" }) + after;
    const { chunks, seen } = await throughGemini([body]);
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    assert.deepEqual(parts.filter((p: { functionCall?: unknown }) => p.functionCall), [], label);
    const text = geminiText(chunks);
    const told = text.slice("Let me check.".length).trimStart();
    if (label === "text") assert.deepEqual([told, seen[0]?.reason], ["", undefined], label);
    else {
      assert.match(told, DROPPED_ALONE, label);
      assert.equal(seen[0]?.reason, told, label);
    }
  }
});

test("guardFetch n=2: only the answer told of a call dropped as malformed reads the judge's reason of its other calls", async () => {
  // (every answer's reason spoke of "this turn's other tool call" where any answer was told: an answer told of
  // nothing read of "other" calls it never heard of)
  const call = (index: number, id: string) => ({
    tool_calls: [{ index, id, type: "function", function: { name: "delete_everything", arguments: "{}" } }],
  });
  const sse = [
    choicesChunk([0, 1].map((index) => ({ index, delta: { role: "assistant", content: "Let me check." } }))),
    choicesChunk([{ index: 0, delta: call(0, "A") }, { index: 1, delta: call(0, "B") }]),
    // (a choice at index "1", a string, which clients read two ways: dropped, a call of answer 1)
    choicesChunk([{ index: "1", delta: call(1, "C") }]),
    choicesChunk([0, 1].map((index) => ({ index, delta: {}, finish_reason: "tool_calls" }))),
    "data: [DONE]\n\n",
  ];
  const { value } = await withGuardedServer([{ sse }], { onRejected: "withhold-turn" }, async (server, f) => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
    return await client.chat.completions.stream({ model: "m", messages, n: 2, tools: TOOLS_OPENAI as never })
      .finalChatCompletion();
  });
  const told = [0, 1].map((i) =>
    (value.choices.find((c) => c.index === i)?.message.content ?? "").slice("Let me check.\n\n".length)
  );
  assert.match(told[0], /^toolguard stopped this turn's tool call\.\nYour call to delete_everything/);
  const [dropped, judged] = told[1].split("\n\n");
  assert.match(dropped, DROPPED_ALONE);
  assert.match(judged, /^toolguard stopped this turn's other tool call\.\nYour call to delete_everything/);
});

test("guardFetch: a finish frame not JSON beside a call kept is not told as a call dropped (its stop names tool_calls or tool_use as a value)", async () => {
  // (the unread frame was taken for a call's where it named the call's key anywhere, a finish's value too:
  // the model read that a call did not run, to make again, beside the call that went)
  const cutShort = (e: unknown, name?: string) =>
    `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(e).slice(0, -1)}\n\n`;
  const frames = anthropicStream(["Let me check."], [{
    name: "get_weather",
    args: { city: "Oslo" },
  }]) as Record<
    string,
    unknown
  >[];
  reply({
    sse: frames.map((e) => e.type === "message_delta" ? cutShort(e, "message_delta") : e),
    named: true,
  });
  const message = await anthropicFinal();
  assert.deepEqual(message.content.map((b) => b.type === "text" ? b.text : b.type), [
    "Let me check.",
    "tool_use",
  ]);
  assert.equal(events[0]?.reason, undefined);
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...chatChunk({}),
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const call = {
    index: 0,
    id: "A",
    type: "function",
    function: { name: "get_weather", arguments: `{"city":"Oslo"}` },
  };
  for (const finish of ["tool_calls", "function_call"]) {
    reply({
      sse: [
        chunk({ role: "assistant", content: "Let me check." }),
        chunk({ tool_calls: [call] }),
        cutShort(chunk({}, finish)),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
      ],
    });
    const final = await chatFinal();
    const choice = final.choices[0];
    assert.deepEqual([choice?.message.content, choice?.message.tool_calls?.map((t) => t.id)], [
      "Let me check.",
      ["A"],
    ], finish);
    assert.equal(events[0]?.reason, undefined, finish);
  }
});

/** A call written into the text as `<tool_call>` markup, to `name`. */
const writtenCall = (name: string) => `<tool_call>{"name":"${name}","arguments":{"city":"Oslo"}}</tool_call>`;

test("guardFetch: a written call beside a frame not JSON that names a call's key is told, after the call's text or ahead of the judge's reason, as onVerdict says", async () => {
  // (the text watch's ending never asked the router to tell of it: the line was dropped unsaid, onVerdict
  // too; the words go after the written call's text, never ahead of its judgement, and ahead of a reason)
  const lead = "Let me check. ";
  const toldOf = (text: string, name: string, label: string) => {
    const passed = name === "get_weather";
    assert.ok(text.startsWith(lead + (passed ? writtenCall(name) : "")), `${label} ${name}: ${text}`);
    if (!passed) assert.ok(!text.includes("<tool_call>"), `${label} ${name}: the rejected call's text went`);
    const told = text.slice(lead.length + (passed ? writtenCall(name).length : 0)).trimStart();
    assert.match(told, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, `${label} ${name}`);
    return told;
  };
  for (const name of CALLED) {
    const lines = ollamaStream([lead + writtenCall(name)]) as Record<string, unknown>[];
    const call = { ...lines[0], message: { role: "assistant", tool_calls: [{ function: { name } }] } };
    reply({ ndjson: [lines[0], JSON.stringify(call).slice(0, -1) + "\n", lines[1]] });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    for await (const p of parts) text += p.message.content;
    assert.equal(events[0]?.reason, toldOf(text, name, "ollama"));

    const chunk = (delta: unknown, finish: string | null = null) => ({
      ...chatChunk({}),
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const cut = chunk({
      tool_calls: [{ index: 0, id: "B", type: "function", function: { name, arguments: "{}" } }],
    });
    reply({
      sse: [
        chunk({ role: "assistant", content: lead + writtenCall(name) }),
        `data: ${JSON.stringify(cut).slice(0, -1)}\n\n`,
        chunk({}, "stop"),
        "data: [DONE]\n\n",
      ],
    });
    const final = await chatFinal();
    assert.equal(events[0]?.reason, toldOf(final.choices[0]?.message.content ?? "", name, "chat"));

    const body = geminiChunk([{ text: lead + writtenCall(name) }]) +
      geminiChunk([{ functionCall: { name, args: {} } }]).replace(/\}\n\n$/, "\n\n") +
      geminiChunk([], { finishReason: "STOP" });
    const { chunks, seen } = await throughGemini([body]);
    const said = geminiText(chunks);
    assert.equal(seen[0]?.reason, toldOf(said, name, "gemini"));

    const frames = anthropicStream([lead + writtenCall(name)]) as Record<string, unknown>[];
    const start = { type: "content_block_start", index: 1, content_block: { type: "tool_use", name } };
    const end = frames.findIndex((e) => e.type === "message_delta");
    reply({
      sse: [
        ...frames.slice(0, end),
        `event: content_block_start\ndata: ${JSON.stringify(start).slice(0, -1)}\n\n`,
        ...frames.slice(end),
      ],
      named: true,
    });
    const message = await anthropicFinal();
    const blocks = message.content.map((b) => b.type === "text" ? b.text : `[${b.type}]`).join("");
    assert.equal(events[0]?.reason, toldOf(blocks, name, "anthropic"));
  }
});

test("guardFetch retry: an Ollama line not JSON that names tool_calls beside a rejected written call is told ahead of the retry's words", async () => {
  // (held after the written call's text, the words went with it when the retry dropped the held frames)
  const lines = ollamaStream([`Let me ${writtenCall("delete_everything")}`]) as Record<string, unknown>[];
  const call = { ...lines[0], message: { role: "assistant", tool_calls: [{ function: { name: "x" } }] } };
  const script = [
    { ndjson: [lines[0], JSON.stringify(call).slice(0, -1) + "\n", lines[1]] },
    { ndjson: ollamaStream(["Again."]) },
  ];
  const { value, seen } = await withGuardedServer(script, { retry: 1 }, async (server, f) => {
    const client = new Ollama({ host: server.url, fetch: f });
    let text = "";
    for await (
      const part of await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true })
    ) text += part.message.content;
    return text;
  });
  assert.match(value, RETRIED);
  assert.deepEqual(seen.map((e) => [e.attempt, e.retried]), [[0, true]]);
  assert.ok(seen[0].reason?.startsWith(value.slice(value.indexOf("toolguard"), -"\n\nAgain.".length)));
});

test("guardFetch n=2: Chat calls of a chunk not read are counted once however many answers read of them, and calls past n told beside an answer's own", async () => {
  // (two answers that finished for tool calls with none each read of one call after a chunk not JSON, and
  // onVerdict counted it once per answer, where beside calls kept it was counted once, and a call past n
  // once whatever the path; a call past n went unsaid where each answer holding a call had lost one of its
  // own too)
  const role = { role: "assistant", content: "Let me check." };
  const cases = {
    // (both answers finish for tool calls with no call: the chunk not read, told by each, counted once)
    "not JSON, no call kept": {
      middle: [
        `data: ${JSON.stringify(choicesChunk([{ index: 1, delta: weatherCall("C") }])).slice(0, -1)}\n\n`,
      ],
      kept: [[], []],
      count: ["tool call", "tool call"],
      reason: "tool call",
    },
    // (each answer keeps a call and loses one of its own, at its index as a string; a call at choice 5 too)
    "past n beside own": {
      middle: [
        choicesChunk([{ index: 0, delta: weatherCall("A") }, { index: 1, delta: weatherCall("B") }]),
        choicesChunk([
          { index: "0", delta: weatherCall("C", 1) },
          { index: "1", delta: weatherCall("D", 1) },
        ]),
        choicesChunk([{ index: 5, delta: weatherCall("E") }]),
      ],
      kept: [["A"], ["B"]],
      count: ["tool calls", "tool calls"],
      reason: "tool calls",
    },
  };
  for (const [label, { middle, kept, count, reason }] of Object.entries(cases)) {
    reply({
      sse: [
        choicesChunk([0, 1].map((index) => ({ index, delta: role }))),
        ...middle,
        choicesChunk([0, 1].map((index) => ({ index, delta: {}, finish_reason: "tool_calls" }))),
        "data: [DONE]\n\n",
      ],
    });
    const final = await chatFinal({ n: 2 });
    const answers = [0, 1].map((i) => final.choices.find((c) => c.index === i));
    assert.deepEqual(answers.map((c) => c?.message.tool_calls?.map((t) => t.id) ?? []), kept, label);
    const told = answers.map((c) => (c?.message.content ?? "").slice(role.content.length).trimStart());
    const counted = (text: string) => text.match(/^toolguard dropped this turn's (tool calls?):/)?.[1];
    assert.deepEqual(told.map(counted), count, label);
    assert.equal(counted(events[0]?.reason ?? ""), reason, label);
  }
});

test("guardFetch: an Ollama written call whose final chunk brings words, beside a line not JSON naming tool_calls, is told after those words", async () => {
  // (the final chunk, held whole with the written call, took the words past the reason: "...needed. Done.",
  // and onVerdict's reason was not the end of what the model read)
  for (const name of CALLED) {
    const lines = ollamaStream([`Let me ${writtenCall(name)}`]) as Record<string, unknown>[];
    const call = { ...lines[0], message: { role: "assistant", tool_calls: [{ function: { name } }] } };
    const final = { ...lines[1], message: { role: "assistant", content: " Done." } };
    reply({ ndjson: [lines[0], JSON.stringify(call).slice(0, -1) + "\n", final] });
    const parts = await ollama().chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
    let text = "";
    let done = false;
    for await (const p of parts) [text, done] = [text + p.message.content, p.done];
    const passed = name === "get_weather";
    const words = `Let me ${passed ? writtenCall(name) : ""} Done.`;
    assert.ok(text.startsWith(words), `${name}: ${text}`);
    assert.match(text.slice(words.length).trimStart(), passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.deepEqual([events[0]?.reason, done], [text.slice(words.length).trimStart(), true], name);
  }
});

test("guardFetch: a Chat or Gemini written call whose finishing chunk brings words, beside a chunk not JSON naming a call's key, is told before the finish", async () => {
  // (the reason was held after the finishing chunk, so it went out after finish_reason "stop" / finishReason
  // "STOP": nothing follows an answer's finish; the words keep their logprobs and role, the usage goes once)
  const logprobs = {
    content: [{ token: " Done.", logprob: -0.5, bytes: null, top_logprobs: [] }],
    refusal: null,
  };
  const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
  for (const name of CALLED) {
    const passed = name === "get_weather";
    const words = `Let me ${passed ? writtenCall(name) : ""} Done.`;
    const cut = chatChunk({ tool_calls: [{ index: 0, id: "B", type: "function", function: { name } }] });
    const last = {
      ...chatChunk({}),
      choices: [{ index: 0, delta: { content: " Done." }, logprobs, finish_reason: "stop" }],
      usage,
    };
    reply({
      sse: [
        chatChunk({ role: "assistant", content: `Let me ${writtenCall(name)}` }),
        `data: ${JSON.stringify(cut).slice(0, -1)}\n\n`,
        last,
        "data: [DONE]\n\n",
      ],
    });
    const stream = await openai().chat.completions.create({
      model: "m",
      messages,
      tools: TOOLS_OPENAI as never,
      stream: true,
    });
    let [text, finish, after, tokens] = ["", null as string | null, "", [] as string[]];
    let counted: unknown[] = [];
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (finish !== null && c) after += JSON.stringify(c);
      text += c?.delta.content ?? "";
      finish ??= c?.finish_reason ?? null;
      tokens = [...tokens, ...(c?.logprobs?.content ?? []).map((t) => t.token)];
      if (chunk.usage) counted = [...counted, chunk.usage];
    }
    assert.deepEqual([finish, after, tokens, counted], ["stop", "", [" Done."], [usage]], `chat ${name}`);
    assert.ok(text.startsWith(words), `chat ${name}: ${text}`);
    const told = text.slice(words.length).trimStart();
    assert.match(told, passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, `chat ${name}`);
    assert.equal(events[0]?.reason, told, `chat ${name}`);

    const usageMetadata = { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 };
    const body = geminiChunk([{ text: `Let me ${writtenCall(name)}` }]) +
      geminiChunk([{ functionCall: { name, args: {} } }]).replace(/\}\n\n$/, "\n\n") +
      geminiChunk([{ text: " Done." }], { finishReason: "STOP", avgLogprobs: -0.5 }, { usageMetadata });
    const { chunks, seen } = await throughGemini([body]);
    const ends = chunks.findIndex((c) => c.candidates?.[0]?.finishReason != null);
    assert.equal(chunks[ends]?.candidates[0].finishReason, "STOP", `gemini ${name}`);
    assert.deepEqual(chunks.slice(ends + 1), [], `gemini ${name}: after the finish`);
    assert.deepEqual(chunks.flatMap((c) => c.usageMetadata ?? []), [usageMetadata], `gemini ${name}`);
    assert.deepEqual(chunks.flatMap((c) => c.candidates?.[0]?.avgLogprobs ?? []), [-0.5], `gemini ${name}`);
    const said = geminiText(chunks);
    assert.ok(said.startsWith(words), `gemini ${name}: ${said}`);
    assert.match(
      said.slice(words.length).trimStart(),
      passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED,
      `gemini ${name}`,
    );
    assert.equal(seen[0]?.reason, said.slice(words.length).trimStart(), `gemini ${name}`);
  }
});

test("guardFetch: a written call that passes beside a frame not JSON naming a call, whose stop says tool use, stops for no call (Anthropic, Chat)", async () => {
  // (the stop came for the native call dropped unread; the written call goes as text, so the message ended
  // for tool use with no call in it, and an SDK user's loop looked for the call it was promised)
  const lead = "Let me check. ";
  const frames = anthropicStream([lead + writtenCall("get_weather")]) as Record<string, unknown>[];
  const start = { type: "content_block_start", index: 1, content_block: { type: "tool_use", name: "x" } };
  const end = frames.findIndex((e) => e.type === "message_delta");
  const stop = { ...frames[end], delta: { stop_reason: "tool_use", stop_sequence: null } };
  reply({
    sse: [
      ...frames.slice(0, end),
      `event: content_block_start\ndata: ${JSON.stringify(start).slice(0, -1)}\n\n`,
      stop,
      ...frames.slice(end + 1),
    ],
    named: true,
  });
  const message = await anthropicFinal();
  assert.deepEqual([message.stop_reason, message.content.map((b) => b.type)], ["end_turn", ["text", "text"]]);
  assert.match(events[0]?.reason ?? "", DROPPED_ALONE);

  const cut = chatChunk({ tool_calls: [{ index: 0, id: "B", type: "function", function: { name: "x" } }] });
  for (const finish of ["tool_calls", "function_call"]) {
    reply({
      sse: [
        chatChunk({ role: "assistant", content: lead + writtenCall("get_weather") }),
        `data: ${JSON.stringify(cut).slice(0, -1)}\n\n`,
        chatChunk({}, finish),
        "data: [DONE]\n\n",
      ],
    });
    const final = await chatFinal();
    const choice = final.choices[0];
    assert.deepEqual([choice?.finish_reason, choice?.message.tool_calls ?? []], ["stop", []], finish);
    assert.ok(choice?.message.content?.startsWith(lead + writtenCall("get_weather")), finish);
    assert.match(events[0]?.reason ?? "", DROPPED_ALONE, finish);
  }
});

test("guardFetch n=2: a Chat chunk not JSON naming tool_calls beside one answer's native call and another's written call is told by both (Chat, Gemini)", async () => {
  // (either answer may have made the call dropped unread: only the answer holding a native call was told,
  // and the one whose written call passed kept finish_reason tool_calls with no call to run, nothing said)
  const cut = `data: ${
    JSON.stringify(choicesChunk([{ index: 0, delta: weatherCall("B", 1) }])).slice(0, -1)
  }\n\n`;
  for (const name of CALLED) {
    const passed = name === "get_weather";
    const written = "Sure. " + writtenCall("get_weather");
    const call = weatherCall("A").tool_calls[0];
    const native = { tool_calls: [{ ...call, function: { ...call.function, name } }] };
    reply({
      sse: [
        choicesChunk([
          { index: 0, delta: { role: "assistant", content: null, ...native } },
          { index: 1, delta: { role: "assistant", content: written } },
        ]),
        cut,
        choicesChunk([0, 1].map((index) => ({ index, delta: {}, finish_reason: "tool_calls" }))),
        "data: [DONE]\n\n",
      ],
    });
    const final = await chatFinal({ n: 2 });
    const [first, second] = [0, 1].map((i) => final.choices.find((c) => c.index === i));
    assert.deepEqual(
      [first?.finish_reason, first?.message.tool_calls?.map((t) => t.id), second?.finish_reason],
      [passed ? "tool_calls" : "stop", passed ? ["A"] : undefined, "stop"],
      name,
    );
    assert.match(first?.message.content ?? "", passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    const said = second?.message.content ?? "";
    // (a rejected turn withholds the written call: its words stay, then what the model is told)
    const kept = passed ? written : "Sure.";
    assert.ok(said.startsWith(kept), said);
    assert.match(said.slice(kept.length).trimStart(), passed ? DROPPED_ALONE : DROPPED_THEN_STOPPED, name);
    assert.deepEqual(second?.message.tool_calls ?? [], [], name);
    // (one call dropped, whichever answer's: counted once)
    assert.match(events[0]?.reason ?? "", /^toolguard dropped this turn's tool call: /, name);
  }
  // (Gemini, candidateCount 2: the same, the call part cut short naming functionCall)
  const chunk = (candidates: unknown[]) => `data: ${JSON.stringify({ candidates })}\n\n`;
  const part = (parts: unknown[], index: number) => ({ index, content: { role: "model", parts } });
  const written = "Sure. " + writtenCall("get_weather");
  const body = chunk([
    part([{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }], 0),
    part([{ text: written }], 1),
  ]) + chunk([part([{ functionCall: { name: "x", args: {} } }], 0)]).replace(/\}\n\n$/, "\n\n") +
    chunk([0, 1].map((index) => ({ index, finishReason: "STOP" })));
  const { events: chunks } = await throughGate(
    "http://llm.test/v1beta/models/g:streamGenerateContent?alt=sse",
    {
      contents: [],
      generationConfig: { candidateCount: 2 },
      tools: [{ functionDeclarations: TOOLS_RESPONSES }],
    },
    [body],
    {},
  );
  const said = chunks.flatMap((c) => c.candidates?.[1]?.content?.parts ?? []).map((p) => p.text ?? "").join(
    "",
  );
  assert.ok(said.startsWith(written), said);
  assert.match(said.slice(written.length).trimStart(), DROPPED_ALONE);
});

test("guardFetch n=2: Chat calls past n that come after an answer was told are counted in onVerdict as the later answer reads them", async () => {
  // (answer 0 read of one call past n, answer 1, told after a second came, of two, and onVerdict of one)
  const past = (index: number, id: string) =>
    choicesChunk([{
      index,
      delta: { tool_calls: [{ index: 0, id, type: "function", function: { name: "get_weather" } }] },
    }]);
  const role = { role: "assistant", content: "Let me check." };
  reply({
    sse: [
      choicesChunk([0, 1].map((index) => ({ index, delta: role }))),
      past(5, "E"),
      choicesChunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]),
      past(6, "F"),
      choicesChunk([{ index: 1, delta: {}, finish_reason: "tool_calls" }]),
      "data: [DONE]\n\n",
    ],
  });
  const final = await chatFinal({ n: 2 });
  const counted = (text: string) => text.match(/toolguard dropped this turn's (tool calls?):/)?.[1];
  const read = [0, 1].map((i) => counted(final.choices.find((c) => c.index === i)?.message.content ?? ""));
  assert.deepEqual([read, counted(events[0]?.reason ?? "")], [["tool call", "tool calls"], "tool calls"]);
});

test("guardFetch retry: a retry's written call whose finishing chunk brings words, beside a chunk not JSON naming a call's key, is told before the finish (Chat, Gemini)", async () => {
  // (the retry's stream splits its finishing chunk as a first attempt's does: else its reason went out after
  // finish_reason "stop" / finishReason "STOP")
  const cut = chatChunk({ tool_calls: [{ index: 0, id: "B", type: "function", function: { name: "x" } }] });
  const chat = (name: string) => [
    chatChunk({ role: "assistant", content: `Let me ${writtenCall(name)}` }),
    `data: ${JSON.stringify(cut).slice(0, -1)}\n\n`,
    chatChunk({ content: " Done." }, "stop"),
    "data: [DONE]\n\n",
  ];
  const script = [{ sse: chat("delete_everything") }, { sse: chat("get_weather") }];
  const { value, seen } = await withGuardedServer(script, { retry: 1 }, async (server, f) => {
    const client = new OpenAI({ baseURL: server.url + "/v1", apiKey: "k", fetch: f });
    const stream = await client.chat.completions.create({
      model: "m",
      messages,
      tools: TOOLS_OPENAI as never,
      stream: true,
    });
    let [text, finish, after] = ["", null as string | null, ""];
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (finish !== null && c) after += JSON.stringify(c);
      text += c?.delta.content ?? "";
      finish ??= c?.finish_reason ?? null;
    }
    return { text, finish, after };
  });
  const words = `Let me ${writtenCall("get_weather")} Done.`;
  assert.deepEqual([value.finish, value.after], ["stop", ""], "chat");
  assert.deepEqual(seen.map((e) => [e.attempt, e.retried]), [[0, true], [1, undefined]], "chat");
  assert.ok(value.text.includes(words), `chat: ${value.text}`);
  assert.equal(
    value.text.slice(value.text.indexOf(words) + words.length).trimStart(),
    seen[1].reason,
    "chat",
  );
  assert.match(seen[1].reason ?? "", DROPPED_ALONE, "chat");

  const answer = (name: string) =>
    geminiChunk([{ text: `Let me ${writtenCall(name)}` }]) +
    geminiChunk([{ functionCall: { name, args: {} } }]).replace(/\}\n\n$/, "\n\n") +
    geminiChunk([{ text: " Done." }], { finishReason: "STOP" });
  const gemini = await throughGemini([answer("delete_everything"), answer("get_weather")], { retry: 1 });
  const { chunks, seen: told } = gemini;
  const ends = chunks.findIndex((c) => c.candidates?.[0]?.finishReason != null);
  assert.deepEqual([gemini.left, chunks[ends]?.candidates[0].finishReason], [0, "STOP"], "gemini");
  assert.deepEqual(chunks.slice(ends + 1), [], "gemini: after the finish");
  assert.deepEqual(told.map((e) => [e.attempt, e.retried]), [[0, true], [1, undefined]], "gemini");
  const said = geminiText(chunks);
  assert.ok(said.includes(words), `gemini: ${said}`);
  assert.equal(said.slice(said.indexOf(words) + words.length).trimStart(), told[1].reason, "gemini");
});

/** Cohere v2 stream events, named as Cohere names them: a text block at `index`, and a call's start and end. */
const cohere = {
  wire: (e: Record<string, unknown>) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`,
  start: { type: "message-start", id: "c1", delta: { message: { role: "assistant" } } },
  text: (index: number, text: string) => [
    { type: "content-start", index, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index, delta: { message: { content: { text } } } },
    { type: "content-end", index },
  ],
  call: (index: number, args: unknown) => [
    {
      type: "tool-call-start",
      index,
      delta: {
        message: {
          tool_calls: {
            id: `t${index}`,
            type: "function",
            function: { name: "get_weather", arguments: args },
          },
        },
      },
    },
    { type: "tool-call-end", index },
  ],
  end: (finish: string) => ({ type: "message-end", delta: { finish_reason: finish } }),
};

/** {@linkcode throughGate} for Cohere v2 chat, its request declaring the tools. */
const throughCohere = (bodies: string[], options: GuardFetchOptions = {}) =>
  throughGate(
    "http://llm.test/v2/chat",
    { model: "command-r", stream: true, messages, tools: TOOLS_OPENAI },
    bodies,
    options,
  );

test("guardFetch: a Cohere frame not JSON that names a call, in a stream that finishes TOOL_CALL with no call, is told, as onVerdict says", async () => {
  // (the client read a finish for tool calls with no call to run and nothing said, and onVerdict nothing)
  const cut = cohere.wire(cohere.call(0, "{}")[0]).replace(/\}\n\n$/, "\n\n");
  for (const finish of ["TOOL_CALL", "COMPLETE"]) {
    const body = [cohere.start, ...cohere.text(0, "Let me check.")].map(cohere.wire).join("") + cut +
      cohere.wire(cohere.end(finish));
    const { events, seen } = await throughCohere([body]);
    const [said, told] = cohereBlockTexts(events);
    const ends = events.filter((e) => e.type === "message-end").map((e) => e.delta.finish_reason);
    assert.equal(said, "Let me check.", finish);
    if (finish === "COMPLETE") {
      // (a finish of no call: the frame may have been text, and nothing says it was a call's)
      assert.deepEqual([told, ends, seen[0]?.reason], [undefined, ["COMPLETE"], undefined], finish);
      continue;
    }
    assert.deepEqual(ends, ["COMPLETE"], finish);
    assert.match(told?.trimStart() ?? "", DROPPED_ALONE, finish);
    assert.equal(seen[0]?.reason, told?.trimStart(), finish);
  }
});

test("guardFetch: a Cohere frame not JSON that names a call beside a call held is told, with the call kept, ahead of a rejection's reason or of a retry's blocks", async () => {
  // (it went unsaid: only the calls read were judged and sent, and the model never knew one was dropped)
  const cut = cohere.wire(cohere.call(1, "{}")[0]).replace(/\}\n\n$/, "\n\n");
  const stream = (text: string, args: string, cutToo = true) =>
    [cohere.start, ...cohere.text(0, text), ...cohere.call(0, args)].map(cohere.wire).join("") +
    (cutToo ? cut : "") + cohere.wire(cohere.end("TOOL_CALL"));
  const good = JSON.stringify({ city: "Oslo" });
  const bad = JSON.stringify(REJECTED_CALL.args);
  const cases = {
    kept: { bodies: [stream("Let me check.", good)], retry: 0, calls: ["t0"], finish: "TOOL_CALL" },
    rejected: { bodies: [stream("Let me check.", bad)], retry: 0, calls: [], finish: "COMPLETE" },
    retried: {
      bodies: [stream("Let me check.", bad), stream("Again.", good, false)],
      retry: 1,
      calls: ["t0"],
      finish: "TOOL_CALL",
    },
  };
  for (const [label, { bodies, retry, calls, finish }] of Object.entries(cases)) {
    const { events, seen } = await throughCohere(bodies, { retry });
    const blocks = cohereBlockTexts(events);
    const starts = events.filter((e) => e.type === "content-start").map((e) => e.index);
    const ids = events.filter((e) => e.type === "tool-call-start").map((e) => e.delta.message.tool_calls.id);
    const ends = events.filter((e) => e.type === "message-end").map((e) => e.delta.finish_reason);
    assert.deepEqual([starts, ids, ends], [blocks.map((_, i) => i), calls, [finish]], label);
    assert.equal(blocks[0], "Let me check.", label);
    assert.match(blocks[1].trimStart(), DROPPED_ALONE, label);
    const read = blocks.slice(1, label === "rejected" ? 3 : 2).map((b) => b.trimStart()).join("\n\n");
    if (label === "rejected") assert.match(read, DROPPED_THEN_STOPPED, label);
    // (a retried turn's event has the judge's reason too, which the model never read: the retry went on)
    if (label === "retried") assert.ok(seen[0]?.reason?.startsWith(read + "\n\ntoolguard stopped "), label);
    else assert.equal(seen[0]?.reason, read, label);
    if (label === "retried") assert.deepEqual(blocks.slice(2), ["\n\nAgain."], label);
  }
});

test("guardFetch: a Cohere written call beside a frame not JSON that names a call is told, after the call's text or ahead of the judge's reason and a retry's words, and a passing one finishes COMPLETE", async () => {
  // (the frame went unsaid, and a written call that passed kept the TOOL_CALL finish the dropped call
  // brought, with no call in the message)
  const cut = cohere.wire(cohere.call(0, "{}")[0]).replace(/\}\n\n$/, "\n\n");
  const stream = (text: string, cutToo = true) =>
    [cohere.start, ...cohere.text(0, text)].map(cohere.wire).join("") + (cutToo ? cut : "") +
    cohere.wire(cohere.end(cutToo ? "TOOL_CALL" : "COMPLETE"));
  const cases = {
    passed: { bodies: [stream(`Let me ${writtenCall("get_weather")}`)], retry: 0 },
    rejected: { bodies: [stream(`Let me ${writtenCall("delete_everything")}`)], retry: 0 },
    retried: {
      bodies: [stream(`Let me ${writtenCall("delete_everything")}`), stream("Again.", false)],
      retry: 1,
    },
  };
  for (const [label, { bodies, retry }] of Object.entries(cases)) {
    const { events, seen } = await throughCohere(bodies, { retry });
    const text = cohereBlockTexts(events).join("");
    const ends = events.filter((e) => e.type === "message-end").map((e) => e.delta.finish_reason);
    assert.deepEqual(ends, ["COMPLETE"], label);
    const words = label === "passed" ? `Let me ${writtenCall("get_weather")}` : "Let me ";
    assert.ok(text.startsWith(words), `${label}: ${text}`);
    const told = text.slice(words.length).trimStart();
    if (label === "retried") {
      assert.ok(told.endsWith("\n\nAgain."), label);
      const read = told.slice(0, -"\n\nAgain.".length);
      assert.match(read, DROPPED_ALONE, label);
      assert.ok(seen[0]?.reason?.startsWith(read + "\n\ntoolguard stopped "), label);
      continue;
    }
    assert.match(told, label === "passed" ? DROPPED_ALONE : DROPPED_THEN_STOPPED, label);
    assert.equal(seen[0]?.reason, told, label);
  }
});

test("guardFetch: a Cohere frame not JSON is taken for a call's by either sign alone, beside a written call that passes", async () => {
  // (a tool-call-start cut before its tool_calls, a tool_calls key in a frame of another type: with either
  // sign no longer read, every other case of this file still passed)
  const cuts = {
    start: 'event: tool-call-start\ndata: {"type":"tool-call-start","index":0\n\n',
    key:
      'event: tool-call-delta\ndata: {"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{\n\n',
  };
  const words = `Let me ${writtenCall("get_weather")}`;
  for (const [label, cut] of Object.entries(cuts)) {
    const body = [cohere.start, ...cohere.text(0, words)].map(cohere.wire).join("") + cut +
      cohere.wire(cohere.end("TOOL_CALL"));
    const { events, seen } = await throughCohere([body]);
    const text = cohereBlockTexts(events).join("");
    const ends = events.filter((e) => e.type === "message-end").map((e) => e.delta.finish_reason);
    assert.deepEqual([text.startsWith(words), ends], [true, ["COMPLETE"]], label);
    assert.match(text.slice(words.length).trimStart(), DROPPED_ALONE, label);
    assert.equal(seen[0]?.reason, text.slice(words.length).trimStart(), label);
  }
});

test("guardFetch: an OpenAI Responses frame not JSON that names a call, in a response that holds no call, is told, as onVerdict says", async () => {
  // (Responses has no stop for calls: the response ended as an answer of text, the call unsaid, onVerdict
  // nothing; a frame not JSON that names no call may be text: dropped unsaid)
  const frames = responsesStream(["Let me check."]) as Record<string, unknown>[];
  const end = frames.findIndex((e) => e.type === "response.completed");
  const added = (item: Record<string, unknown>) =>
    `data: ${JSON.stringify({ type: "response.output_item.added", output_index: 1, item }).slice(0, -2)}\n\n`;
  const cuts = {
    call: added({ id: "fc_1", type: "function_call", call_id: "c1", name: "get_weather", arguments: "" }),
    // (each sign of a call alone: a function_call cut before its call_id, a custom tool's call by its call_id)
    type: added({ id: "fc_1", type: "function_call" }),
    custom: added({ id: "ctc_1", type: "custom_tool_call", call_id: "c1", name: "grep", input: "" }),
    text: added({ id: "msg_2", type: "message", role: "assistant", content: [] }),
    // (a text delta whose words write a call's key escaped: `\u0022` is a quote inside the string, no key's;
    // read with its escapes decoded first, the frame was taken for a call's)
    escaped:
      `data: {"type":"response.output_text.delta","output_index":0,"delta":"a,\\u0022call_id\\u0022:1\n\n`,
  };
  for (const [label, cut] of Object.entries(cuts)) {
    reply({ sse: [...frames.slice(0, end), cut, ...frames.slice(end)] });
    const final = await openai().responses.stream({
      model: "m",
      input: "hi",
      tools: TOOLS_RESPONSES as never,
    })
      .finalResponse();
    const texts = final.output.flatMap((o) => o.type === "message" ? o.content : [])
      .map((c) => c.type === "output_text" ? c.text : "");
    assert.equal(texts[0], "Let me check.", label);
    if (label === "text" || label === "escaped") {
      assert.deepEqual([texts.length, events[0]?.reason], [1, undefined], label);
      continue;
    }
    assert.equal(texts.length, 2, label);
    assert.match(texts[1].trimStart(), DROPPED_ALONE, label);
    assert.equal(events[0]?.reason, texts[1].trimStart(), label);
  }
});

/** An OpenAI Responses frame cut short (not JSON) that adds a `get_weather` call at `outputIndex`. */
const callCut = (outputIndex: number) =>
  `data: ${
    JSON.stringify({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { id: "fc_9", type: "function_call", call_id: "c9", name: "get_weather", arguments: "" },
    }).slice(0, -2)
  }\n\n`;

test("guardFetch: an OpenAI Responses frame not JSON that names a call is told at the place after the items the client holds, whatever the final snapshot lists", async () => {
  // (the told item took its place from the final snapshot's count: one listing a reasoning item never
  // streamed made the openai SDK throw "missing output at index 2", and one listing none put the told
  // text into the message the client held, at index 0)
  const frames = responsesStream(["Let me check."]) as Record<string, unknown>[];
  const end = frames.findIndex((e) => e.type === "response.completed");
  const completed = frames[end] as { response: { output: unknown[] } };
  const cut = callCut(1);
  const lists = {
    more: [{ id: "rs_1", type: "reasoning", summary: [] }, ...completed.response.output],
    none: [],
  };
  for (const [label, output] of Object.entries(lists)) {
    const last = { ...completed, response: { ...completed.response, output } };
    reply({ sse: [...frames.slice(0, end), cut, last] });
    const stream = openai().responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
    const places: number[] = [];
    stream.on("response.output_item.added", (e) => places.push(e.output_index));
    const numbers: number[] = [];
    stream.on("event", (e) => numbers.push(e.sequence_number));
    let told = "";
    stream.on("response.output_text.delta", (e) => (told = e.snapshot));
    const final = await stream.finalResponse();
    assert.deepEqual(places, [0, 1], label);
    // (numbered on from the last event sent, the told item's in the place of the final snapshot's, which
    // took its number: none is left free)
    const from = numbers.length - 7; // (the told item's six events and the final snapshot)
    assert.deepEqual(
      numbers.slice(from),
      numbers.slice(from).map((_, i) => numbers[from - 1] + 1 + i),
      label,
    );
    assert.match(told.trimStart(), DROPPED_ALONE, label);
    const texts = final.output.flatMap((o) => o.type === "message" ? o.content : [])
      .map((c) => c.type === "output_text" ? c.text : "");
    assert.equal(texts.at(-1), told, label);
    assert.equal(events[0]?.reason, told.trimStart(), label);
  }
});

/** OpenAI Responses `frames` with a frame cut short (not JSON) that adds a call, ahead of the final event. */
function withCut(frames: unknown[]): unknown[] {
  const cut = callCut(5);
  const end = (frames as Record<string, unknown>[]).findIndex((e) => e.type === "response.completed");
  return [...frames.slice(0, end), cut, ...frames.slice(end)];
}
/**
 * What the openai SDK makes of OpenAI Responses streams through the gate (`bodies`: one per attempt): its
 * final response, the events it read, what onVerdict had.
 */
async function responsesFinal(bodies: unknown[][], options: GuardFetchOptions) {
  const { value, seen } = await withGuardedServer(
    bodies.map((sse) => ({ sse })),
    options,
    async (server, f) => {
      const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
      const stream = client.responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
      const read: { type: string; sequence_number: number; output_index?: number }[] = [];
      stream.on("event", (e) => read.push(e));
      return { final: await stream.finalResponse(), read };
    },
  );
  return { ...value, seen };
}
/** A call the judge lets pass, and one it rejects (no such tool). */
const weather = { name: "get_weather", args: { city: "Oslo" } };
const wrong = { name: "delete_everything", args: { city: "Oslo" } };

test("guardFetch: an OpenAI Responses frame not JSON that names a call beside a call held, native or written, is told whether the turn is kept, rejected, cut or retried, numbered on", async () => {
  // (beside calls held it went unsaid: the client had no word of the dropped call, and a written call that
  // passed went out alone; the told item takes the numbers after the held events, the final snapshot lists it)
  // (the retry's message an item of its own: the openai SDK throws on two items of one id)
  const again = JSON.parse(JSON.stringify(responsesStream(["Again."])).replaceAll("msg_1", "msg_2"));
  const said = (name: string) => `Let me check. ${writtenCall(name)}`;
  const cases: [string, unknown[][], GuardFetchOptions, string[], string[]][] = [
    ["kept", [withCut(responsesStream(["Let me check."], [weather]))], {}, ["get_weather"], [
      "Let me check.",
    ]],
    ["rejected", [withCut(responsesStream(["Let me check."], [wrong]))], {}, [], ["Let me check."]],
    [
      "cut",
      [withCut(responsesStream(["Let me check."], [weather, wrong]))],
      { onRejected: "drop-call" },
      ["get_weather"],
      ["Let me check."],
    ],
    ["retried", [withCut(responsesStream(["Let me check."], [wrong])), again], { retry: 1 }, [], [
      "Let me check.",
    ]],
    ["written kept", [withCut(responsesStream([said("get_weather")]))], {}, [], [said("get_weather")]],
    ["written rejected", [withCut(responsesStream([said("delete_everything")]))], {}, [], []],
    ["written retried", [withCut(responsesStream([said("delete_everything")])), again], { retry: 1 }, [], [
      "Let me check. ",
    ]],
  ];
  for (const [label, bodies, options, calls, before] of cases) {
    const { final, read, seen } = await responsesFinal(bodies, options);
    const numbers = read.map((e) => e.sequence_number);
    assert.deepEqual(numbers, numbers.map((_, i) => i), label);
    assert.deepEqual(final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []), calls, label);
    const texts = final.output.flatMap((o) => o.type === "message" ? o.content : [])
      .map((c) => c.type === "output_text" ? c.text : "");
    assert.deepEqual(texts.slice(0, before.length), before, label);
    const told = texts.slice(before.length).map((t) => t.trimStart());
    const reason = seen[0]?.reason ?? "";
    if (label === "written rejected") {
      // (one message: the words before the call, then the reason the model reads, as onVerdict says it)
      assert.equal(told.length, 1, label);
      assert.ok(told[0].startsWith("Let me check. \n\n"), label);
      assert.match(told[0].slice("Let me check. ".length).trimStart(), DROPPED_THEN_STOPPED, label);
      assert.equal(reason, told[0].slice("Let me check. ".length).trimStart(), label);
      continue;
    }
    assert.match(told[0], DROPPED_ALONE, label);
    assert.ok(reason.startsWith(told[0]), label);
    if (label.endsWith("retried")) assert.deepEqual(told.slice(1), ["Again."], label);
  }
});

test("guardFetch: an OpenAI Responses final event sent twice after a frame not JSON that names a call is refused, and the client keeps the told item; with nothing told both go", async () => {
  // (the second passed with its old number, going back, and the openai SDK kept its snapshot, which lacked
  // the told item, as the response: the client's final response had no word of the dropped call)
  const frames = responsesStream(["Let me check."]) as Record<string, unknown>[];
  const end = frames.length - 1;
  const cut = callCut(1);
  const read = async (sse: unknown[]) => {
    reply({ sse });
    const stream = openai().responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
    const numbers: number[] = [];
    stream.on("event", (e) => numbers.push(e.sequence_number));
    const final = await stream.finalResponse();
    const texts = final.output.flatMap((o) => o.type === "message" ? o.content : [])
      .map((c) => c.type === "output_text" ? c.text.trimStart() : "");
    return { numbers, texts };
  };
  for (const label of ["twice", "around"]) {
    const sse = label === "twice"
      ? [...frames.slice(0, end), cut, frames[end], frames[end]]
      : [...frames.slice(0, end), frames[end], cut, frames[end]];
    const { numbers, texts } = await read(sse);
    assert.deepEqual(numbers, numbers.map((_, i) => i), label);
    assert.equal(texts[0], "Let me check.", label);
    assert.match(texts[1] ?? "", DROPPED_ALONE, label);
    assert.equal(events[0]?.reason, texts[1], label);
  }
  // (an allowed stream goes as it came, the provider's second final event too)
  const { numbers } = await read([...frames, frames[end]]);
  assert.deepEqual(numbers.slice(-2), [end, end]);
});

test("guardFetch: an OpenAI Responses retry whose own stream has a frame not JSON that names a call tells it after the items the client holds, beside a call or alone", async () => {
  // (the told item took the retry's own count of items for its place, not the client's: the openai SDK
  // threw "Duplicate response output index", the whole response lost)
  const again = (calls: CallSpec[]) =>
    JSON.parse(JSON.stringify(responsesStream(["Again."], calls)).replaceAll("msg_1", "msg_2"));
  for (const [label, calls] of [["alone", []], ["beside a call", [weather]]] as const) {
    const { final, read, seen } = await responsesFinal(
      [responsesStream(["Let me check."], [wrong]), withCut(again([...calls]))],
      { retry: 1 },
    );
    const places = read.flatMap((e) => e.type === "response.output_item.added" ? [e.output_index] : []);
    assert.deepEqual(places, places.map((_, i) => i), label);
    assert.deepEqual(
      final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []),
      calls.map((c) => c.name),
      label,
    );
    const texts = final.output.flatMap((o) => o.type === "message" ? o.content : [])
      .map((c) => c.type === "output_text" ? c.text.trimStart() : "");
    assert.deepEqual(texts.slice(0, 2), ["Let me check.", "Again."], label);
    assert.match(texts[2] ?? "", DROPPED_ALONE, label);
    assert.equal(seen[1]?.reason, texts[2], label);
  }
});

test("guardFetch: an OpenAI Responses turn and its retry each with a frame not JSON that names a call beside a call held tell of each in an item of its own id", async () => {
  // (both items took one id, msg_toolguard_dropped: the openai SDK threw "duplicate output item identity")
  const again = JSON.parse(
    JSON.stringify(responsesStream(["Again."], [weather])).replaceAll("msg_1", "msg_2").replaceAll(
      "fc_0",
      "fc_1",
    ),
  );
  const { final, read, seen } = await responsesFinal(
    [withCut(responsesStream(["Let me check."], [wrong])), withCut(again)],
    { retry: 1 },
  );
  const numbers = read.map((e) => e.sequence_number);
  assert.deepEqual(numbers, numbers.map((_, i) => i));
  const ids = final.output.map((o) => o.id);
  assert.equal(new Set(ids).size, ids.length, ids.join());
  assert.deepEqual(final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []), ["get_weather"]);
  const texts = final.output.flatMap((o) => o.type === "message" ? o.content : [])
    .map((c) => c.type === "output_text" ? c.text.trimStart() : "");
  assert.equal(texts.length, 4, texts.join("|"));
  assert.deepEqual([texts[0], texts[2]], ["Let me check.", "Again."]);
  for (const told of [texts[1], texts[3]]) assert.match(told, DROPPED_ALONE);
  assert.equal(seen[1]?.reason, texts[3]);
});

test("guardFetch: an OpenAI Responses written call in several deltas, rejected or cut, leaves no gap in the numbers the client reads", async () => {
  // (the text watch wrote the deltas it took in as one, and the events after it kept their numbers: 0, 1, 2,
  // 3, 6, 7, where the openai SDK and other clients read them as a sequence)
  const cases: [string, string[], GuardFetchOptions][] = [
    ["rejected", ["Sure ", "thing. <tool_", `call>${writtenCall("delete_everything").slice(11)}`], {}],
    ["cut", [
      "Sure ",
      `${writtenCall("get_weather")} and <tool_`,
      `call>${writtenCall("delete_everything").slice(11)}`,
    ], {
      onRejected: "drop-call",
    }],
    [
      "withheld",
      ["Sure ", "thing. <tool_", `call>${writtenCall("delete_everything").slice(11)}`, " Done."],
      {},
    ],
  ];
  for (const [label, pieces, options] of cases) {
    const { final, read, seen } = await responsesFinal([responsesStream(pieces)], options);
    const numbers = read.map((e) => e.sequence_number);
    assert.deepEqual(numbers, numbers.map((_, i) => i), label);
    assert.ok(seen[0]?.reason, label);
    assert.doesNotMatch(final.output_text, /"name":"delete_everything"/, label);
  }
});

/**
 * OpenAI Responses events of one `get_weather` call (or `name`) at `outputIndex`, numbered from `seq`, as a
 * provider may send them after its final event.
 */
function callAfter(outputIndex: number, seq: number, name = "get_weather"): unknown[] {
  const item = { id: "fc_7", type: "function_call", call_id: "c7", name, arguments: "" };
  const args = '{"city":"Oslo"}';
  return [
    { type: "response.output_item.added", output_index: outputIndex, item, sequence_number: seq },
    {
      type: "response.function_call_arguments.delta",
      item_id: "fc_7",
      output_index: outputIndex,
      delta: args,
      sequence_number: seq + 1,
    },
    {
      type: "response.output_item.done",
      output_index: outputIndex,
      item: { ...item, arguments: args, status: "completed" },
      sequence_number: seq + 2,
    },
  ];
}

/**
 * A plain OpenAI Responses stream ("Let me check."), the index of its final event, the next sequence number,
 * and a delta of more words to the first message that would come after the final event.
 */
function endedStream() {
  const frames = responsesStream(["Let me check."]) as Record<string, unknown>[];
  const end = frames.length - 1;
  const next = (frames[end].sequence_number as number) + 1;
  const more = {
    type: "response.output_text.delta",
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    delta: " More.",
    logprobs: [],
    sequence_number: next,
  };
  return { frames, end, next, more };
}

/** The text of each message item of an OpenAI Responses `final` response, without leading white space. */
const messageTexts = (final: OpenAI.Responses.Response) =>
  final.output.flatMap((o) => o.type === "message" ? o.content : [])
    .map((c) => c.type === "output_text" ? c.text.trimStart() : "");

test("guardFetch: OpenAI Responses frames after a final event the gate told in are refused: no number goes back, and the told item keeps its words", async () => {
  // (they passed with their old numbers, below the told item's, and the openai SDK applies them to the
  // response it returns at the places the provider gave, which the told item now holds: a later message's
  // words ran into the told text, a later call's item took its place and left an empty call behind)
  const { frames, end, next, more } = endedStream();
  const later = [
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { id: "msg_5", type: "message", status: "in_progress", role: "assistant", content: [] },
      sequence_number: next,
    },
    {
      type: "response.content_part.added",
      item_id: "msg_5",
      output_index: 1,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
      sequence_number: next + 1,
    },
    { ...more, item_id: "msg_5", output_index: 1, delta: "Later.", sequence_number: next + 2 },
  ];
  const cases: [string, unknown[], string[]][] = [
    ["words", [more], []],
    ["message", later, []],
    ["call", callAfter(1, next), []],
    // (beside a call held the final event is held too, and the told item goes ahead of it)
    ["call held", callAfter(2, next + 6), ["get_weather"]],
  ];
  for (const [label, after, calls] of cases) {
    const sse = label === "call held"
      ? [...withCut(responsesStream(["Let me check."], [weather])), ...after]
      : [...frames.slice(0, end), callCut(1), frames[end], ...after];
    const { final, read, seen } = await responsesFinal([sse], {});
    const numbers = read.map((e) => e.sequence_number);
    assert.deepEqual(numbers, numbers.map((_, i) => i), label);
    assert.deepEqual(final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []), calls, label);
    const texts = messageTexts(final);
    assert.deepEqual(texts.slice(0, 1), ["Let me check."], label);
    assert.equal(texts.length, 2, `${label}: ${texts.join("|")}`);
    assert.match(texts[1], DROPPED_ALONE, label);
    assert.equal(seen[0]?.reason, texts[1], label);
    assert.ok(seen[0]?.findings.some((f) => f.message.includes("after the response ended")), label);
  }
  // (where the gate tells nothing, they go as they came: the SDK reads them into its response)
  const { final, read } = await responsesFinal([[...frames, more]], {});
  assert.deepEqual(read.map((e) => e.sequence_number).slice(-2), [end, next]);
  assert.deepEqual(messageTexts(final), ["Let me check. More."]);
});

test("guardFetch: an OpenAI Responses frame not JSON that names a call after the final event is told, as one before it is, numbered on", async () => {
  // (it was dropped unsaid: the response had ended, and nothing told the model of the call, nor onVerdict)
  const { frames, end, next, more } = endedStream();
  const held = responsesStream(["Let me check."], [weather]) as Record<string, unknown>[];
  const heldEnd = held.length - 1;
  const cases: [string, unknown[], string[], string][] = [
    ["alone", [...frames, callCut(1)], [], "Let me check."],
    // (the final event again lists the items as the provider's did, and those added since: words sent after
    // it, into an item it listed, the client streamed, and its final response goes by that listing)
    ["after words", [...frames, more, callCut(1)], [], "Let me check. More."],
    // (words the text watch held, that may open a written call: they go out first, then the told item)
    ["after words held", [...frames, { ...more, delta: " <tool_" }, callCut(1)], [], "Let me check. <tool_"],
    ["then a final again", [...frames, callCut(1), frames[end]], [], "Let me check."],
    // (a call held: the final event with it, and what came after it)
    ["beside a call held", [...held, callCut(2)], ["get_weather"], "Let me check."],
    [
      "after words beside a call held",
      [...held, { ...more, sequence_number: (held[heldEnd].sequence_number as number) + 1 }, callCut(2)],
      ["get_weather"],
      "Let me check. More.",
    ],
    [
      "beside a call after the final",
      [...frames, ...callAfter(1, next), callCut(2)],
      ["get_weather"],
      "Let me check.",
    ],
  ];
  // (the text watch off too: the final event again listed the provider's text there, not the client's)
  for (const [[name, sse, calls, said], extract] of cases.flatMap((c) => [[c, true], [c, false]] as const)) {
    const label = extract ? name : `${name}, extract: false`;
    const { final, read, seen } = await responsesFinal([sse], { extract });
    const numbers = read.map((e) => e.sequence_number);
    assert.deepEqual(numbers, numbers.map((_, i) => i), label);
    const places = read.flatMap((e) => e.type === "response.output_item.added" ? [e.output_index] : []);
    assert.deepEqual(places, places.map((_, i) => i), label);
    assert.deepEqual(final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []), calls, label);
    const texts = messageTexts(final);
    assert.equal(texts.length, 2, `${label}: ${texts.join("|")}`);
    assert.equal(texts[0], said, label);
    assert.match(texts[1], DROPPED_ALONE, label);
    assert.equal(seen[0]?.reason, texts[1], label);
  }
});

test("guardFetch: an OpenAI Responses frame not JSON that names a call after the final event, beside a call written after it, is told", async () => {
  // (the final event had gone out and the told item went ahead of nothing: a written call that passed went
  // with the dropped one unsaid, one rejected read only the judge's reason, and onVerdict said as little)
  const frames = responsesStream(["Let me check."]) as Record<string, unknown>[];
  const end = frames.length - 1;
  const written = (name: string, args: string) =>
    ` <tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;
  const words = (delta: string) => ({
    type: "response.output_text.delta",
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    delta,
    logprobs: [],
    sequence_number: (frames[end].sequence_number as number) + 1,
  });
  const cases: [string, string, RegExp][] = [
    ["passed", written("get_weather", '{"city": "Oslo"}'), DROPPED_ALONE],
    ["rejected", written("delete_everything", "{}"), DROPPED_THEN_STOPPED],
  ];
  for (const [label, call, told] of cases) {
    const { final, read, seen } = await responsesFinal([[...frames, words(call), callCut(1)]], {});
    const numbers = read.map((e) => e.sequence_number);
    assert.deepEqual(numbers, numbers.map((_, i) => i), label);
    const reason = seen[0]?.reason ?? "";
    assert.match(reason, told, label);
    const streamed = (read as { type: string; delta?: string }[]).map((e) =>
      e.type === "response.output_text.delta" ? e.delta : ""
    );
    assert.ok(streamed.join("").includes(reason), label);
    // (the final event again lists the message's text as the client streamed it: the written call that
    // passed, or the rejected one's cut and its reason, which it listed without, and the SDK's final
    // response lost; a rejected call's reason leads with the told words: no told item then)
    const own = (read as { type: string; delta?: string; output_index?: number }[])
      .map((e) => e.type === "response.output_text.delta" && e.output_index === 0 ? e.delta : "").join("");
    assert.equal(messageTexts(final)[0], own, label);
    assert.ok(own.includes(label === "passed" ? call : reason), label);
    if (label === "passed") assert.equal(messageTexts(final)[1], reason, label);
  }
});

test("guardFetch: an Anthropic frame not JSON that names tool_use after a stop for tool use with no call is told, as one before the stop is", async () => {
  // (the stop went out as it came: the client read a stop for tool use with no call to run and nothing
  // said, and onVerdict reported no reason; before the stop, the stop is made end_turn after a block saying so)
  const frames = (anthropicStream(["Let me check."]) as Record<string, unknown>[]).map((e) =>
    e.type === "message_delta" ? { ...e, delta: { stop_reason: "tool_use", stop_sequence: null } } : e
  );
  const start = {
    type: "content_block_start",
    index: 1,
    content_block: { type: "tool_use", id: "t", name: "x" },
  };
  const cut = `event: content_block_start\ndata: ${JSON.stringify(start).slice(0, -1)}\n\n`;
  for (const after of [true, false]) {
    const sse = after ? [...frames, cut] : [...frames.slice(0, -2), cut, ...frames.slice(-2)];
    reply({ sse, named: true });
    const message = await anthropicFinal();
    const said = message.content.flatMap((b) => b.type === "text" ? [b.text.trimStart()] : []);
    assert.deepEqual(
      [said.length, said[0], message.stop_reason],
      [2, "Let me check.", "end_turn"],
      `${after}`,
    );
    assert.match(said[1], DROPPED_ALONE, `${after}`);
    assert.equal(events[0]?.reason, said[1], `${after}`);
  }
});

test("guardFetch: a Cohere frame not JSON that names a call after a finish for tool calls with no call is told, as one before the finish is", async () => {
  // (the finish went out as it came: the client read TOOL_CALL with no call to run and nothing said, and
  // onVerdict reported no reason; before the finish, the finish is made COMPLETE after a block saying so)
  const cut = cohere.wire(cohere.call(1, "{}")[0]).replace(/\}\n\n$/, "\n\n");
  const head = [cohere.start, ...cohere.text(0, "Let me check.")].map(cohere.wire).join("");
  const end = cohere.wire(cohere.end("TOOL_CALL"));
  for (const body of [head + end + cut, head + cut + end]) {
    const { events, seen } = await throughCohere([body]);
    const [said, told] = cohereBlockTexts(events);
    const ends = events.filter((e) => e.type === "message-end").map((e) => e.delta.finish_reason);
    assert.deepEqual([said, ends.at(-1)], ["Let me check.", "COMPLETE"]);
    assert.match(told?.trimStart() ?? "", DROPPED_ALONE);
    assert.equal(seen[0]?.reason, told.trimStart());
  }
});

test("guardFetch: an OpenAI Responses call added at an output_index that is no number is told, as a frame not JSON that names a call is", async () => {
  // (refused, since no client can tell which call its later events are for, it went unsaid: the response
  // ended as an answer of text, and neither the model nor onVerdict heard of the call)
  const frames = responsesStream(["Let me check."], [weather]) as Record<string, unknown>[];
  const atX = frames.map((e) =>
    typeof e.output_index === "number" && e.output_index > 0 ? { ...e, output_index: "x" } : e
  );
  const end = atX.length - 1;
  const completed = atX[end] as { response: { output: { type: string }[] } };
  const last = {
    ...completed,
    response: {
      ...completed.response,
      output: completed.response.output.filter((o) => o.type === "message"),
    },
  };
  /** Two calls, the second at "x", the final snapshot listing the message and the first. */
  const besideHeld = () => {
    const two = responsesStream(["Let me check."], [weather, weather]) as Record<string, unknown>[];
    const second = two.map((e) => e.output_index === 2 ? { ...e, output_index: "x" } : e);
    const done = second.at(-1) as { response: { output: unknown[] } };
    return [...second.slice(0, -1), {
      ...done,
      response: { ...done.response, output: done.response.output.slice(0, 2) },
    }];
  };
  // (before the final event, beside a call held at its place, and after the final event)
  const cases: [string, unknown[], string[]][] = [
    ["alone", [...atX.slice(0, end), last], []],
    ["beside a call held", besideHeld(), ["get_weather"]],
    ["after the final event", [
      ...frames.slice(0, 7),
      last,
      ...atX.slice(7, end).map((e) => ({ ...e, sequence_number: (e.sequence_number as number) + 1 })),
    ], []],
  ];
  for (const [label, sse, calls] of cases) {
    const { final, read, seen } = await responsesFinal([sse], {});
    // (rising: the refused events' numbers are left out, as any refused frame's are)
    const numbers = read.map((e) => e.sequence_number);
    assert.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]), `${label}: ${numbers}`);
    assert.deepEqual(final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []), calls, label);
    const texts = messageTexts(final);
    assert.equal(texts.length, 2, `${label}: ${texts.join("|")}`);
    assert.equal(texts[0], "Let me check.", label);
    assert.match(texts[1], DROPPED_ALONE, label);
    assert.equal(seen[0]?.reason, texts[1], label);
  }
});

test("guardFetch: OpenAI Chat chunks after data: [DONE] are dropped, as the openai SDK ignores them, and one that names a call is told before the end", async () => {
  // (they were judged and sent ahead of the gate's own [DONE]: a call after it reached the client, which
  // without the gate would have stopped reading at [DONE]; words after it ran on in the client's text)
  const ended = [...(chatStream(["It is ", "sunny."]) as unknown[]).slice(0, -1), "data: [DONE]\n\n"];
  const call = chatChunk(weatherCall("C"));
  const cases: [string, unknown[], boolean][] = [
    ["call", [call, chatChunk({}, "tool_calls")], true],
    ["call not JSON", [`data: ${JSON.stringify(call).slice(0, -1)}\n\n`], true],
    ["words", [chatChunk({ content: " More." })], false],
  ];
  for (const [label, after, told] of cases) {
    reply({ sse: [...ended, ...after, "data: [DONE]\n\n"] });
    const final = await chatFinal();
    const choice = final.choices[0];
    assert.deepEqual([choice.finish_reason, choice.message.tool_calls ?? []], ["stop", []], label);
    assert.ok(events[0]?.findings.every((f) => f.code === "malformed_event"), label);
    if (!told) {
      assert.deepEqual([choice.message.content, events[0]?.reason], ["It is sunny.", undefined], label);
      continue;
    }
    assert.match(events[0]?.reason ?? "", DROPPED_ALONE, label);
    assert.equal(choice.message.content, `It is sunny.\n\n${events[0]?.reason}`, label);
  }
});

test("guardFetch: an Anthropic stream reads on past a data: [DONE], as the Anthropic SDK does, its frames judged", async () => {
  // (the SDK skips a frame with no event name and reads on; the gate dropped everything after it as the
  // openai SDK's end: the message lost its words, its call and its stop)
  const frames = anthropicStream(["Let me ", "check."], [{ name: "get_weather", args: { city: "Oslo" } }]);
  const at = frames.findIndex((e) => (e as { type: string }).type === "content_block_delta");
  for (const name of ["get_weather", "delete_everything"]) {
    const sse = frames.map((e) => e as { type: string; content_block?: { name?: string } })
      .map((e) => e.content_block?.name ? { ...e, content_block: { ...e.content_block, name } } : e);
    reply({ sse: [...sse.slice(0, at + 1), "data: [DONE]\n\n", ...sse.slice(at + 1)], named: true });
    const message = await anthropicFinal();
    const text = message.content.flatMap((b) => b.type === "text" ? [b.text] : []).join("");
    const calls = message.content.flatMap((b) => b.type === "tool_use" ? [b.name] : []);
    assert.deepEqual(events.map((e) => e.findings.map((f) => f.code)), [[]], name);
    if (name === "get_weather") {
      assert.deepEqual(
        [text, calls, message.stop_reason],
        ["Let me check.", ["get_weather"], "tool_use"],
        name,
      );
    } else {
      assert.deepEqual([calls, message.stop_reason], [[], "end_turn"], name);
      assert.equal(text, `Let me check.\n\n${events[0]?.reason}`, name);
    }
  }
});

test("guardFetch: an OpenAI Chat data: [DONE] followed by more on its line ends the stream, as the openai SDK reads it", async () => {
  // (the SDK stops at data that starts with [DONE]; the gate dropped the frame as not JSON and passed what
  // followed, so the client read and ran a call it would never have seen)
  const call = chatChunk(weatherCall("C"));
  const ended = [...(chatStream(["It is ", "sunny."]) as unknown[]).slice(0, -1), "data: [DONE]!\n\n"];
  reply({ sse: [...ended, call, chatChunk({}, "tool_calls"), "data: [DONE]\n\n"] });
  const final = await chatFinal();
  const choice = final.choices[0];
  assert.deepEqual([choice.finish_reason, choice.message.tool_calls ?? []], ["stop", []]);
  assert.match(events[0]?.reason ?? "", DROPPED_ALONE);
  assert.equal(choice.message.content, `It is sunny.\n\n${events[0]?.reason}`);
});

test("guardFetch: an Ollama final chunk whose done is true to JavaScript but not true (done: 1) ends the message as the ollama client reads it", async () => {
  // (the client stops at any done that is truthy; the gate took such a chunk for text: a rejected call's
  // reason went after it, never read, and a line naming a call after it went untold)
  const one = (lines: unknown[]) =>
    lines.map((l) => (l as { done?: boolean }).done ? { ...(l as object), done: 1 } : l);
  const cut = JSON.stringify({ message: { role: "assistant", tool_calls: [{}] } }).slice(0, -1) + "\n";
  const cases: [string, unknown[], RegExp][] = [
    [
      "rejected",
      one(ollamaStream(["It is "], [{ name: "delete_everything", args: {} }])),
      /^toolguard stopped /,
    ],
    ["a call after it", [...one(ollamaStream(["It is "])), cut], DROPPED_ALONE],
  ];
  for (const [label, lines, told] of cases) {
    const { text, done, seen } = await ollamaRead(lines);
    assert.equal(done, 1, label);
    assert.match(seen[0]?.reason ?? "", told, label);
    assert.equal(text, `It is \n\n${seen[0]?.reason}`, label);
  }
});

test("guardFetch: an Ollama final chunk that brings the calls has a rejected one taken out, the one that passes kept", async () => {
  // (held whole as the final chunk, waiting for the end, it was marked as carrying no call: where only some
  // calls were rejected, it went out as it came, the rejected call in it, and the client ran it)
  const lines = ollamaStream(["It is "], [
    { name: "get_weather", args: { city: "Oslo" } },
    { name: "delete_everything", args: {} },
  ]);
  const [calls, final] = lines.slice(-2) as { message: Record<string, unknown> }[];
  const merged = [...lines.slice(0, -2), {
    ...final,
    message: { ...final.message, tool_calls: calls.message.tool_calls },
  }];
  const seen: GateEvent[] = [];
  const client = new Ollama({
    host: "http://127.0.0.1:9",
    fetch: guardFetch(ndjsonFetch(merged), { onVerdict: (e) => seen.push(e), onRejected: "drop-call" }),
  });
  const parts = await client.chat({ model: "m", messages, tools: TOOLS_OPENAI as never, stream: true });
  const names: string[] = [];
  let text = "";
  for await (const p of parts) {
    text += p.message.content;
    for (const c of p.message.tool_calls ?? []) names.push(c.function.name);
  }
  assert.deepEqual(names, ["get_weather"]);
  assert.match(seen[0]?.reason ?? "", /delete_everything/);
  assert.equal(text, `It is \n\n${seen[0]?.reason}`);
});
