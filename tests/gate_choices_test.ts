// Every answer of a request for several (OpenAI Chat `n`) is judged: a call a model wrote into the text of
// choice 1 is held and judged like one written into choice 0, in whole answers and in streams, also when
// another choice used call fields. Driven through the official openai client.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import {
  chatChunk,
  chatCompletion,
  choiceChunk,
  fakeProvider,
  type FakeReply,
  type GuardedRun,
  sseData,
  TOOLS_OPENAI,
  VALID_CALL,
  withGuardedServer,
} from "./_fake_llm_server.ts";
import { sdkClients } from "./_sdk_clients.ts";
import { gateCompletion, type GuardFetchOptions } from "../gate.ts";

const provider = fakeProvider();
const { openai } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** A call to a tool the request does not declare, written into the text as a local model writes it. */
const WRITTEN_BAD = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>';
const WRITTEN_GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';

/** A Gemini request's tools: `get_weather(city)`. */
const GEMINI_TOOLS = [{
  functionDeclarations: [{
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  }],
}];

type GeminiChunk = {
  candidates?: ({ content?: { parts?: { text?: string; functionCall?: { name: string } }[] } } | null)[];
  usageMetadata?: unknown;
};

/** The chunks of a Gemini SSE stream as a client parses them. */
function geminiChunks(sse: string): GeminiChunk[] {
  return sseData(sse);
}

/** Each candidate's parts as a client joins them, by position, a call as `[name]`. */
function geminiTexts(chunks: GeminiChunk[]): string[] {
  const texts = ["", ""];
  for (const chunk of chunks) {
    for (const [i, c] of (chunk.candidates ?? []).entries()) {
      for (const p of c?.content?.parts ?? []) {
        texts[i] += p.functionCall ? `[${p.functionCall.name}]` : p.text ?? "";
      }
    }
  }
  return texts;
}

/** `candidate` at `position` of a chunk's candidates, empty ones before it. */
const atPosition = (candidate: unknown, position: number): unknown[] => [
  ...Array.from({ length: position }, () => ({})),
  candidate,
];

/** What a client of a Gemini model asked for two candidates gets when the model streams `sse`. */
async function twoCandidates(sse: unknown[], options: GuardFetchOptions = {}): Promise<GuardedRun<string>> {
  return await withGuardedServer(() => ({ sse }), options, async (server, f) => {
    const res = await f(`${server.url}/v1beta/models/gemma-3-27b-it:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
        tools: GEMINI_TOOLS,
        generationConfig: { candidateCount: 2 },
      }),
    });
    return await res.text();
  });
}

/** The frames of an `n: 2` stream: prose in choice 0, `written` in pieces in choice 1, interleaved. */
function twoChoiceStream(written: string, choice0: Record<string, unknown>[] = []): unknown[] {
  const pieces = written.match(/[\s\S]{1,7}/g)!;
  const frames: unknown[] = [
    choiceChunk(0, { role: "assistant", content: "" }),
    choiceChunk(1, { role: "assistant" }),
  ];
  for (const [i, p] of pieces.entries()) {
    if (i < 3) frames.push(choiceChunk(0, { content: `word${i} ` }));
    frames.push(choiceChunk(1, { content: p }));
  }
  frames.push(...choice0);
  frames.push(choiceChunk(0, {}, choice0.length > 0 ? "tool_calls" : "stop"), choiceChunk(1, {}, "stop"));
  frames.push("data: [DONE]\n\n");
  return frames;
}

/** What the openai client hands its reader from a stream, per choice: the text and the call names. */
async function streamedChoices(
  client: OpenAI = openai(),
): Promise<{ text: string[]; calls: string[][]; finish: unknown[] }> {
  const stream = await client.chat.completions.create({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  const text = ["", ""];
  const calls: string[][] = [[], []];
  const finish: unknown[] = [null, null];
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text[c.index] += c.delta?.content ?? "";
      for (const t of c.delta?.tool_calls ?? []) if (t.function?.name) calls[c.index].push(t.function.name);
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  return { text, calls, finish };
}

test("guardFetch n=2: a call written into the text of choice 1 of a stream is held and judged, choice 0 flows", async () => {
  provider.reply({ sse: twoChoiceStream(`Sure.\n${WRITTEN_BAD}`) });
  const { text, finish } = await streamedChoices();
  assert.equal(text[0], "word0 word1 word2 ");
  assert.doesNotMatch(text[1], /<tool_call>/);
  assert.match(text[1], /^Sure\.\n\n/);
  assert.match(text[1], /delete_everything/); // named in the reason
  assert.equal(finish[1], "stop");
  const [event] = provider.events;
  assert.equal(event.changed, true);
  assert.deepEqual(event.calls?.map((c) => [c.choice, c.name]), [[1, "delete_everything"]]);
});

test("guardFetch n=2: an allowed call written into choice 1 of a stream reaches the client frame for frame", async () => {
  const frames = twoChoiceStream(WRITTEN_GOOD);
  provider.reply({ sse: frames });
  const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", messages, n: 2, stream: true, tools: TOOLS_OPENAI }),
  });
  const sent = frames.map((f) => (typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`));
  const got = (await res.text()).split(/(?<=\n\n)/);
  // Each choice's frames as they came, in their order (choice 0's flowed while choice 1's were held).
  const ofChoice = (list: string[], index: number) => list.filter((f) => f.includes(`"index":${index},`));
  assert.deepEqual(ofChoice(got, 0), ofChoice(sent, 0));
  assert.deepEqual(ofChoice(got, 1), ofChoice(sent, 1));
  assert.deepEqual([...got].sort(), [...sent].sort());
  assert.equal(got.at(-1), "data: [DONE]\n\n");
  const [event] = provider.events;
  assert.equal(event.verdict.allowed, true);
  assert.deepEqual(event.calls?.map((c) => [c.choice, c.name]), [[1, "get_weather"]]);
});

test("guardFetch n=2: a stream whose choice 0 calls by its call fields and choice 1 writes a rejected call withholds both", async () => {
  const call = choiceChunk(0, {
    tool_calls: [{
      index: 0,
      id: "call_good",
      type: "function",
      function: { name: VALID_CALL.name, arguments: JSON.stringify(VALID_CALL.args) },
    }],
  });
  provider.reply({ sse: twoChoiceStream(WRITTEN_BAD, [call]) });
  const { text, calls, finish } = await streamedChoices();
  assert.deepEqual(calls, [[], []]);
  assert.doesNotMatch(text[1], /<tool_call>/);
  // (choice 0's call was accepted: its reason says so, and names no call of choice 1)
  assert.match(text[0], /accepted, but a tool call in another answer of this turn was rejected/);
  assert.doesNotMatch(text[0], /delete_everything/);
  assert.match(text[1], /delete_everything/);
  assert.deepEqual(finish, ["stop", "stop"]);
  const [event] = provider.events;
  assert.deepEqual(event.calls?.map((c) => [c.choice, c.name]), [[0, "get_weather"], [
    1,
    "delete_everything",
  ]]);
  assert.equal(event.verdict.allowed, false);
});

test("guardFetch n=2: a chunk that carries the text of both choices is watched for each", async () => {
  const both = {
    ...chatChunk({}),
    choices: [
      { index: 0, delta: { content: "Plain prose." }, finish_reason: null },
      { index: 1, delta: { content: WRITTEN_BAD }, finish_reason: null },
    ],
  };
  provider.reply({ sse: [both, choiceChunk(0, {}, "stop"), choiceChunk(1, {}, "stop"), "data: [DONE]\n\n"] });
  const { text } = await streamedChoices();
  assert.equal(text[0], "Plain prose.");
  assert.doesNotMatch(text[1], /<tool_call>/);
  assert.match(text[1], /delete_everything/);
});

test("guardFetch n=2: a whole answer whose choice 0 calls by its call fields and choice 1 writes a rejected call withholds both", async () => {
  const body = chatCompletion(null, [VALID_CALL]);
  const choices = body.choices as Record<string, unknown>[];
  choices.push({ index: 1, message: { role: "assistant", content: WRITTEN_BAD }, finish_reason: "stop" });
  provider.reply({ json: body });
  const answer = await openai().chat.completions.create({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
  });
  assert.equal(answer.choices[0].message.tool_calls, undefined);
  assert.doesNotMatch(answer.choices[1].message.content ?? "", /<tool_call>/);
  assert.match(answer.choices[1].message.content ?? "", /delete_everything/);
  const [event] = provider.events;
  assert.equal(event.changed, true);
  assert.deepEqual(event.verdict.calls.map((c) => c.name), ["get_weather", "delete_everything"]);
});

test("gateCompletion: a Gemini answer whose candidate 0 calls by a functionCall and candidate 1 writes a rejected call is withheld", async () => {
  const request = { tools: GEMINI_TOOLS };
  const response = {
    candidates: [
      {
        index: 0,
        content: {
          role: "model",
          parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }],
        },
      },
      { index: 1, content: { role: "model", parts: [{ text: WRITTEN_BAD }] }, finishReason: "STOP" },
    ],
  };
  const gated = await gateCompletion(request, response);
  assert.equal(gated.verdict.allowed, false);
  assert.equal(gated.source, "native");
  assert.deepEqual(gated.extracted?.map((c) => c.name), ["delete_everything"]);
  const out = JSON.stringify(gated.response);
  assert.doesNotMatch(out, /functionCall|<tool_call>/);
});

test("gateCompletion: a call written across two text parts of a Gemini candidate is judged and cut from both, withheld or dropped", async () => {
  // The stream joins a candidate's parts; the body read each part alone and judged no call in either half.
  const split = (call: string) => [{ text: `Note ${call.slice(0, 30)}` }, { text: call.slice(30) }];
  const answer = (first: { text: string }[]) => ({
    candidates: [
      { index: 0, content: { role: "model", parts: first }, finishReason: "STOP" },
      { index: 1, content: { role: "model", parts: split(WRITTEN_BAD) }, finishReason: "STOP" },
    ],
  });
  const request = { tools: GEMINI_TOOLS };
  const texts = (body: unknown) =>
    (body as { candidates: { content: { parts: { text: string }[] } }[] }).candidates.map((c) =>
      c.content.parts.map((p) => p.text).join("")
    );

  const withheld = await gateCompletion(request, answer([{ text: "Sure." }]));
  assert.equal(withheld.verdict.allowed, false);
  assert.deepEqual(withheld.extracted?.map((c) => c.name), ["delete_everything"]);
  const [first, second] = texts(withheld.response);
  assert.equal(first, "Sure."); // (no call to lose: no reason, as in a stream)
  assert.match(second, /^Note \n\ntoolguard stopped/); // (the text before the call as it came)
  assert.doesNotMatch(second, /<tool_call>|"arguments"/);

  const dropped = await gateCompletion(request, answer(split(WRITTEN_GOOD)), { onRejected: "drop-call" });
  assert.deepEqual(dropped.verdict.calls.map((c) => c.name), ["get_weather", "delete_everything"]);
  assert.deepEqual(dropped.verdict.rejectedIndices, [1]);
  const [kept, cut] = texts(dropped.response);
  assert.ok(kept.startsWith(`Note ${WRITTEN_GOOD}`), kept);
  assert.doesNotMatch(cut, /<tool_call>|"arguments"/);
  // (the kept call is another candidate's: this one's reason speaks of its own call alone)
  assert.match(cut, /toolguard removed the rejected tool call below\.\n/);
});

test("n=2, a call written into choice 1 rejected: choice 0 gets the reason only if it lost a call, in a body as in a stream", async () => {
  // The body read choice 0's text for calls without the declared tools and took what it found for calls: JSON
  // prose naming no declared tool, or a valid call drop-call keeps, got the reason its stream has not.
  const shapes = [["a valid written call", `Sure.${WRITTEN_GOOD}`], [
    "JSON prose",
    '{"name": "Ada", "arguments": {}}',
  ]];
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    for (const [shape, text0] of shapes) {
      const text1 = `Checking.${WRITTEN_BAD}`;
      const whole = chatCompletion(text0);
      (whole.choices as unknown[]).push({
        index: 1,
        message: { role: "assistant", content: text1 },
        finish_reason: "stop",
      });
      const gated = await gateCompletion({ tools: TOOLS_OPENAI }, whole, { onRejected });
      assert.equal(gated.verdict.allowed, false);
      const body = (gated.response as { choices: { message: { content: string } }[] }).choices.map((c) =>
        c.message.content
      );
      const sse = [
        choiceChunk(0, { role: "assistant", content: text0 }),
        choiceChunk(1, { role: "assistant", content: text1 }),
        choiceChunk(0, {}, "stop"),
        choiceChunk(1, {}, "stop"),
        "data: [DONE]\n\n",
      ];
      const { value } = await withGuardedServer(
        () => ({ sse }),
        { onRejected },
        (server, f) =>
          streamedChoices(new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 })),
      );
      assert.deepEqual(value.text, body, `${onRejected}, ${shape}`);
    }
  }
});

test("guardFetch n=2 drop-call: only the rejected call written into choice 1 is cut, the valid ones stay", async () => {
  const sse = [
    choiceChunk(0, { content: `A ${WRITTEN_GOOD}` }),
    choiceChunk(1, { content: `B ${WRITTEN_BAD}` }),
    choiceChunk(1, { content: ` and ${WRITTEN_GOOD}` }),
    choiceChunk(0, {}, "stop"),
    choiceChunk(1, {}, "stop"),
    "data: [DONE]\n\n",
  ];
  const { value, seen } = await withGuardedServer(
    () => ({ sse }),
    { onRejected: "drop-call" },
    (server, f) =>
      streamedChoices(
        new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 }),
      ),
  );
  assert.equal(value.text[0], `A ${WRITTEN_GOOD}`);
  assert.match(value.text[1], /^B {2}and <tool_call>\n\{"name": "get_weather"/); // ("B " as it came)
  assert.doesNotMatch(value.text[1], /\{"name": "delete_everything"/);
  assert.deepEqual(seen[0].verdict.rejectedIndices, [1]);
  assert.deepEqual(seen[0].calls?.map((c) => c.choice), [0, 1, 1]);
});

test("guardFetch n=2 retry: a call written into choice 1 is not sent back (a retry repeats the first answer), whole or streamed", async () => {
  const body = chatCompletion("Fine.");
  (body.choices as Record<string, unknown>[]).push({
    index: 1,
    message: { role: "assistant", content: WRITTEN_BAD },
    finish_reason: "stop",
  });
  const replies: FakeReply[] = [
    { json: body },
    { sse: twoChoiceStream(WRITTEN_BAD) },
  ];
  for (const [i, reply] of replies.entries()) {
    const { value, server } = await withGuardedServer(() => reply, { retry: 1 }, async (server, f) => {
      const client = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
      if (reply.json) {
        const answer = await client.chat.completions.create({
          model: "m",
          messages,
          n: 2,
          tools: TOOLS_OPENAI as never,
        });
        return answer.choices[1].message.content ?? "";
      }
      return (await streamedChoices(client)).text[1];
    });
    assert.equal(server.requests.length, 1, `reply ${i}`);
    assert.doesNotMatch(value, /<tool_call>/, `reply ${i}`);
    assert.match(value, /delete_everything/, `reply ${i}`);
  }
});

test("guardFetch n=2: choice 1's text in a chunk beside choice 0's finish is watched while choice 0's text is held", async () => {
  // Choice 0's watch holds its written call, and held the whole chunk: choice 1's text in it went out unread.
  const both = {
    ...chatChunk({}),
    choices: [
      { index: 0, delta: {}, finish_reason: "stop" },
      { index: 1, delta: { role: "assistant", content: `Sure.\n${WRITTEN_BAD}` }, finish_reason: null },
    ],
  };
  provider.reply({
    sse: [
      choiceChunk(0, { role: "assistant", content: WRITTEN_BAD }),
      both,
      choiceChunk(1, {}, "stop"),
      "data: [DONE]\n\n",
    ],
  });
  const { text, finish } = await streamedChoices();
  assert.doesNotMatch(text.join(""), /<tool_call>/);
  assert.match(text[1], /^Sure\.\n\n.*delete_everything/s);
  assert.deepEqual(finish, ["stop", "stop"]);
  assert.deepEqual(provider.events[0].calls?.map((c) => [c.choice, c.name]), [[0, "delete_everything"], [
    1,
    "delete_everything",
  ]]);
});

test("guardFetch n=2: choice 1's text given as parts, beside choice 0's finish, is watched while choice 0's text is held", async () => {
  // Content parts are no string: a rule that split a chunk only when a choice's delta had string text let
  // the watch holding choice 0 hold this chunk whole, and choice 1's written call went out unread.
  const both = {
    ...chatChunk({}),
    choices: [
      { index: 0, delta: {}, finish_reason: "stop" },
      {
        index: 1,
        delta: { role: "assistant", content: [{ type: "text", text: `Sure.\n${WRITTEN_BAD}` }] },
        finish_reason: null,
      },
    ],
  };
  provider.reply({
    sse: [
      choiceChunk(0, { role: "assistant", content: WRITTEN_BAD }),
      both,
      choiceChunk(1, {}, "stop"),
      "data: [DONE]\n\n",
    ],
  });
  const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages, n: 2, tools: TOOLS_OPENAI, stream: true }),
  });
  const body = await res.text();
  assert.doesNotMatch(body, /<tool_call>/);
  assert.deepEqual(provider.events[0].calls?.map((c) => [c.choice, c.name]), [[0, "delete_everything"], [
    1,
    "delete_everything",
  ]]);
});
test("guardFetch Gemini stream: candidate 1's text beside candidate 0's part is watched while candidate 0's text is held", async () => {
  // Candidate 0's watch holds its written call, and held the whole chunk (or the piece that puts candidate 1
  // at its position behind an empty candidate 0): candidate 1's text in it went out unread.
  const candidate = (index: number, text: string, finishReason?: string) => ({
    index,
    content: { role: "model", parts: [{ text }] },
    ...(finishReason ? { finishReason } : {}),
  });
  const read = async (beside: Record<string, unknown>) => {
    const run = await twoCandidates([
      { candidates: [candidate(0, WRITTEN_BAD)] },
      { candidates: [beside, candidate(1, `Sure.\n${WRITTEN_BAD}`)] },
      { candidates: [candidate(0, "", "STOP"), candidate(1, "", "STOP")] },
    ]);
    return { ...run, value: geminiTexts(geminiChunks(run.value)) };
  };
  for (
    const beside of [candidate(0, " More."), candidate(0, "", "STOP"), { index: 0, content: { parts: [] } }]
  ) {
    const { value, seen } = await read(beside);
    assert.doesNotMatch(value.join(""), /<tool_call>/, JSON.stringify(beside));
    assert.match(value[1], /^Sure\.\n\n.*delete_everything/s);
    assert.deepEqual(seen[0].calls?.map((c) => [c.choice, c.name]), [[0, "delete_everything"], [
      1,
      "delete_everything",
    ]]);
  }
});

test("guardFetch Gemini stream of two candidates: each keeps its text, and the last usage a client reads is the answer's", async () => {
  // Gemini reports the usage in every chunk. A chunk of both candidates was held whole by one watch, or
  // split with its usage on the piece another watch holds: chunks went out of order, an older usage last.
  const part = (text: string, thought = false) => ({ text, ...(thought ? { thought } : {}) });
  const chunk = (c0: unknown[] | undefined, c1: unknown[] | undefined, usage: number, finish = false) => ({
    candidates: [c0, c1].flatMap((parts, index) =>
      parts ? [{ index, content: { role: "model", parts }, ...(finish ? { finishReason: "STOP" } : {}) }] : []
    ),
    usageMetadata: { promptTokenCount: 9, totalTokenCount: usage },
  });
  const call = { functionCall: { name: "get_weather", args: { city: "Oslo" } } };
  const sse = [
    chunk([part("Hm", true)], [part('<tool_call>\n{"name": "get_weather", ')], 9),
    chunk([part("m.", true)], [part('"arguments": {"city": "Bergen"}}\n</tool_call>')], 10),
    chunk([part(" Then", true)], undefined, 11),
    chunk([call], undefined, 12),
    chunk([part("Done.")], undefined, 13),
    chunk([part("")], [part("")], 16, true),
  ];
  const { value, seen } = await twoCandidates(sse);
  // As a client reads it: each candidate's parts at its position, the usage of the last chunk that has one.
  const chunks = geminiChunks(value);
  const texts = geminiTexts(chunks);
  const usage = chunks.findLast((c) => c.usageMetadata != null)?.usageMetadata;
  assert.deepEqual(texts, [
    "Hmm. ThenDone.[get_weather]", // (text flows while a call is held)
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bergen"}}\n</tool_call>',
  ]);
  assert.deepEqual(usage, { promptTokenCount: 9, totalTokenCount: 16 });
  assert.equal(seen[0].verdict.allowed, true);
});

test("guardFetch Gemini stream of two candidates: a chunk of only usage mid-stream does not end up after the final usage", async () => {
  // A chunk with usageMetadata and no candidates (or `candidates: []`) is of no answer: it waited behind
  // the chunks candidate 1's watch held (as OpenAI Chat's usage chunk must) and went out after the last
  // chunk, which candidate 0 carried: the client kept the older count as the answer's.
  const text = (index: number, t: string) => ({ index, content: { role: "model", parts: [{ text: t }] } });
  const usage = (totalTokenCount: number) => ({ promptTokenCount: 9, totalTokenCount });
  for (const bad of [false, true]) {
    for (const none of [{}, { candidates: [] }]) {
      const name = bad ? "delete_everything" : "get_weather";
      const sse = [
        { candidates: [text(0, "Sure."), text(1, `<tool_call>\n{"name": "${name}", `)] },
        { ...none, usageMetadata: usage(5) },
        { candidates: [text(0, ""), text(1, '"arguments": {"city": "Oslo"}}\n</tool_call>')] },
        {
          candidates: [0, 1].map((index) => ({ ...text(index, ""), finishReason: "STOP" })),
          usageMetadata: usage(16),
        },
      ];
      const { value, seen } = await twoCandidates(sse);
      const usages = geminiChunks(value).flatMap((c) => c.usageMetadata == null ? [] : [c.usageMetadata]);
      const what = JSON.stringify({ bad, none });
      assert.deepEqual(usages, [usage(5), usage(16)], what);
      assert.equal(seen[0].verdict.allowed, !bad, what);
    }
  }
});

test("guardFetch Gemini stream: a call written into the text a client reads is judged, whatever index its chunks name", async () => {
  // The genai SDK's `text` and the AI SDK read each chunk's first candidate: a call whose pieces come under
  // index 0 and index 1 by turns is one call to them, so it is one call to the gate too.
  const tools = GEMINI_TOOLS;
  const chunk = (index: number, text: string, finishReason?: string) => ({
    candidates: [{
      index,
      content: { role: "model", parts: [{ text }] },
      ...(finishReason ? { finishReason } : {}),
    }],
    modelVersion: "gemma-3-27b-it",
  });
  const pieces = `Sure.\n${WRITTEN_BAD}`.match(/[\s\S]{1,9}/g)!;
  const sse = [...pieces.map((p, i) => chunk(i % 2, p)), chunk(0, "", "STOP")];
  const { value, seen } = await withGuardedServer(() => ({ sse }), {}, async (server, f) => {
    const res = await f(`${server.url}/v1beta/models/gemma-3-27b-it:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools }),
    });
    return await res.text();
  });
  let text = ""; // as a client reads it: the first candidate of each chunk
  for (const line of value.split("\n").filter((l) => l.startsWith("data: "))) {
    for (const p of JSON.parse(line.slice(6)).candidates[0]?.content?.parts ?? []) text += p.text ?? "";
  }
  assert.doesNotMatch(text, /<tool_call>|\{"name": "delete_everything"/);
  assert.match(text, /^Sure\.\n\n.*delete_everything/s);
  assert.deepEqual(seen[0].calls?.map((c) => c.name), ["delete_everything"]);
});

test("gateCompletion drop-call: an answer of two choices, one with call fields and one with a rejected written call, is withheld whole", async () => {
  const body = chatCompletion(null, [VALID_CALL]);
  (body.choices as Record<string, unknown>[]).push({
    index: 1,
    message: { role: "assistant", content: WRITTEN_BAD },
    finish_reason: "stop",
  });
  const gated = await gateCompletion({ tools: TOOLS_OPENAI }, body, { onRejected: "drop-call" });
  const choices = (gated.response as { choices: { message: Record<string, unknown> }[] }).choices;
  assert.equal(choices[0].message.tool_calls, undefined);
  assert.doesNotMatch(String(choices[1].message.content), /<tool_call>/);
  assert.match(
    String(gated.reason),
    /^toolguard stopped this turn's tool calls; the accepted one did not run either\./,
  );
});

test("guardFetch Chat stream: a chunk whose choice clients read two ways (a string index, one past the request's n or no whole number, one twice) is dropped", async () => {
  const pieces = WRITTEN_BAD.match(/[\s\S]{1,6}/g)!;
  /** A stream whose call pieces alternate between choice 0 and `other`. */
  const split = (other: unknown) => [
    ...pieces.map((p, i) => ({
      ...chatChunk({ content: p }),
      choices: [{ index: i % 2 ? other : 0, delta: { content: p } }],
    })),
    choiceChunk(0, {}, "stop"),
    "data: [DONE]\n\n",
  ];
  const twice = {
    ...chatChunk({}),
    choices: [{ index: 0, delta: { content: "Fine." } }, { index: 0, delta: { content: WRITTEN_BAD } }],
  };
  const cases: [string, unknown[], number][] = [
    ["string index, n=2", split("1"), 2],
    ["index past n=1", split(1), 1],
    ["negative index, n=1", split(-1), 1],
    ["fractional index, n=2", split(0.5), 2],
    ["one choice twice", [twice, choiceChunk(0, {}, "stop"), "data: [DONE]\n\n"], 1],
  ];
  for (const [name, sse, n] of cases) {
    provider.reply({ sse });
    const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages, n, stream: true, tools: TOOLS_OPENAI }),
    });
    const wire = await res.text();
    // Read as `choices[0]` readers do (the AI SDK), and as the openai SDK files choices (by index).
    let first = "";
    const byIndex: Record<string, string> = {};
    for (const line of wire.split("\n").filter((l) => l.startsWith("data: {"))) {
      const chunk = JSON.parse(line.slice(6));
      first += chunk.choices[0]?.delta?.content ?? "";
      for (const c of chunk.choices) byIndex[c.index] = (byIndex[c.index] ?? "") + (c.delta?.content ?? "");
    }
    for (const text of [first, ...Object.values(byIndex)]) assert.doesNotMatch(text, /<tool_call>/, name);
    assert.ok(provider.events[0]?.findings.some((f) => /the chunk was dropped/.test(f.message)), name);
    if (n === 1 && name.startsWith("index past")) {
      const asked = /where the request asked for 1 answer; the chunk was dropped$/; // (not "1 answer(s)")
      assert.ok(provider.events[0]?.findings.some((f) => asked.test(f.message)), name);
    }
  }
});

test("guardFetch Gemini stream: a native call at another position does not let a call written at the first pass unjudged", async () => {
  // The clients read the first candidate (a written call) and pass over the second (a valid native call).
  const tools = GEMINI_TOOLS;
  const sse = [
    { candidates: [{ index: 5, content: { role: "model", parts: [{ text: WRITTEN_BAD }] } }] },
    {
      candidates: [{}, {
        content: {
          role: "model",
          parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }],
        },
        finishReason: "STOP",
      }],
    },
  ];
  const { value, seen } = await withGuardedServer(() => ({ sse }), {}, async (server, f) => {
    const res = await f(`${server.url}/v1beta/models/gemma-3-27b-it:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools }),
    });
    return await res.text();
  });
  let text = "";
  for (const line of value.split("\n").filter((l) => l.startsWith("data: "))) {
    for (const p of JSON.parse(line.slice(6)).candidates[0]?.content?.parts ?? []) text += p.text ?? "";
  }
  assert.doesNotMatch(text, /<tool_call>/);
  assert.equal(seen[0].verdict.allowed, false);
});

test("guardFetch: a call written into an answer that came with an empty tool_calls (as vLLM sends) is judged", async () => {
  // vLLM answers `tool_calls: []` beside any plain text: no call fields used, so the text is what a call was
  // written into, as for an answer without the field.
  const body = chatCompletion(WRITTEN_BAD);
  (body.choices as { message: Record<string, unknown> }[])[0].message.tool_calls = [];
  provider.reply({ json: body });
  const answer = await openai().chat.completions.create({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
  });
  assert.doesNotMatch(answer.choices[0].message.content ?? "", /<tool_call>/);
  assert.equal(provider.events[0]?.verdict.allowed, false);
  assert.deepEqual(provider.events[0]?.verdict.calls.map((c) => c.name), ["delete_everything"]);
});

test("guardFetch Gemini stream: a chunk of more candidates than the request asked for is dropped, one of as many passes", async () => {
  // Each candidate's text is watched apart and split into a chunk of its own: thousands of candidates in a
  // chunk cost time and memory by their square, and no request asked for them.
  const tools = GEMINI_TOOLS;
  const candidate = (text: string) => ({ content: { role: "model", parts: [{ text }] } });
  const sse = [
    { candidates: [candidate("Oslo is "), candidate("Bergen is ")] },
    { candidates: [candidate("cold."), candidate(WRITTEN_BAD)] },
  ];
  const read = async (generationConfig: Record<string, unknown>) =>
    await withGuardedServer(() => ({ sse }), {}, async (server, f) => {
      const res = await f(`${server.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
        method: "POST",
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
          tools,
          generationConfig,
        }),
      });
      const texts: string[] = [];
      for (const line of (await res.text()).split("\n").filter((l) => l.startsWith("data: "))) {
        for (const [i, c] of (JSON.parse(line.slice(6)).candidates ?? []).entries()) {
          for (const p of c?.content?.parts ?? []) texts[i] = (texts[i] ?? "") + (p.text ?? "");
        }
      }
      return texts;
    });
  const asked1 = await read({});
  assert.deepEqual(asked1.value, []);
  assert.ok(
    asked1.seen[0].findings.some((f) => /2 candidates, where the request asked for 1/.test(f.message)),
  );
  const asked2 = await read({ candidateCount: 2 });
  assert.equal(asked2.value[0], "Oslo is cold.");
  assert.match(asked2.value[1], /^Bergen is .*delete_everything/s);
  assert.doesNotMatch(asked2.value[1], /<tool_call>/);
  assert.equal(asked2.seen[0].verdict.allowed, false);
});

/** The openai SDK's final completion of a two-answer stream with usage, read through `fetch_`. */
async function finalWithUsage(fetch_: typeof fetch) {
  const client = new OpenAI({ apiKey: "k", baseURL: `${provider.url()}/v1`, fetch: fetch_, maxRetries: 0 });
  const stream = client.chat.completions.stream({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
    stream_options: { include_usage: true },
  });
  return await stream.finalChatCompletion();
}

test("guardFetch n=2: the usage chunk waits behind the text choice 1 holds, and the openai SDK keeps the usage", async () => {
  // With `include_usage` every chunk carries `"usage": null`: the usage chunk (a chunk of no choice) went out
  // ahead of choice 1's held frames, and the SDK's snapshot took the null of the frames that followed.
  const usage = { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 };
  const frames: unknown[] = twoChoiceStream(WRITTEN_GOOD).map((f) =>
    typeof f === "string" ? f : { ...(f as Record<string, unknown>), usage: null }
  );
  frames.splice(-1, 0, { ...choiceChunk(0, {}), choices: [], usage });
  provider.reply({ sse: frames });
  const plain = await finalWithUsage(fetch);
  assert.deepEqual(plain.usage, usage);
  assert.deepEqual(await finalWithUsage(provider.gfetch), plain);
  assert.equal(provider.events[0].verdict.allowed, true);
});

test("guardFetch n=2: the usage chunk waits behind a choice's text that waits to the end on what may become a call", async () => {
  // Choice 1 calls, then ends its text with "{" (a written call's start, cut off) in its finishing chunk:
  // that chunk waits to the end of the stream, and the usage chunk went out ahead of it.
  const usage = { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 };
  const call = { name: "get_weather", arguments: '{"city":"Oslo"}' };
  const frames: unknown[] = [
    choiceChunk(0, { role: "assistant", content: "" }),
    choiceChunk(1, { role: "assistant", content: "" }),
    choiceChunk(0, { content: "Sunny." }, "stop"),
    choiceChunk(1, { tool_calls: [{ index: 0, id: "c1", type: "function", function: call }] }),
    choiceChunk(1, { content: "{\n\n" }, "tool_calls"),
    { ...choiceChunk(0, {}), choices: [], usage },
    "data: [DONE]\n\n",
  ].map((f) => typeof f === "string" || (f as { usage?: unknown }).usage ? f : { ...f, usage: null });
  provider.reply({ sse: frames });
  const plain = await finalWithUsage(fetch);
  assert.deepEqual(plain.usage, usage);
  assert.deepEqual(await finalWithUsage(provider.gfetch), plain);
});

test("guardFetch Gemini stream of two candidates: each candidate whose calls were withheld says why", async () => {
  // The reason stood only in the candidate whose call was held first: candidate 0, the answer the clients
  // read, lost its call (held after candidate 1's) without a word.
  const call = (name: string) => ({ functionCall: { name, args: {} } });
  const sse = [
    { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Checking." }] } }] },
    {
      candidates: [{ index: 0, content: { role: "model", parts: [] } }, {
        index: 1,
        content: { parts: [call("x")] },
      }],
    },
    { candidates: [{ index: 0, content: { role: "model", parts: [call("delete_everything")] } }] },
    {
      candidates: [0, 1].map((index) => ({
        index,
        content: { parts: [{ text: "" }] },
        finishReason: "STOP",
      })),
      usageMetadata: { totalTokenCount: 9 },
    },
  ];
  const { value, seen } = await twoCandidates(sse);
  const texts = geminiTexts(geminiChunks(value));
  assert.equal(seen[0].verdict.allowed, false);
  assert.match(texts[0], /^Checking\.\n\ntoolguard stopped .*delete_everything/s);
  // (candidate 1 said nothing: its reason stands alone, as in its body)
  assert.match(texts[1], /^toolguard stopped /);
});

test("Gemini, two candidates rejected: the reason is set apart by a blank line only in a candidate that said something, in a stream as in its body", async () => {
  // The stream set the reason apart in every candidate once any had spoken: a silent candidate (only a call,
  // or only a thought) got a leading blank line that its body has not. A body that kept a valid call put the
  // reason before the candidate's text, where the stream (its text flowing while the calls wait) has it after;
  // a withheld body gave the reason to a candidate that had no call to lose, where its stream went on without.
  const bad = { functionCall: { name: "delete_everything", args: {} } };
  const good = { functionCall: { name: "get_weather", args: { city: "Oslo" } } };
  const request = {
    contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
    tools: GEMINI_TOOLS,
    generationConfig: { candidateCount: 2 },
  };
  const shapes: [string, Record<string, unknown>[][]][] = [
    ["silent first", [[bad], [{ text: "Checking." }, bad]]],
    ["speaking first", [[{ text: "Checking." }, bad], [bad]]],
    ["one only thought", [[{ text: "Weighing it.", thought: true }, bad], [{ text: "Checking." }, bad]]],
    ["one only blank", [[{ text: "Checking." }, bad], [{ text: " " }, bad]]],
    ["silent first, a valid call kept", [[bad, good], [{ text: "Checking." }, bad, good]]],
    ["speaking first, a valid call kept", [[{ text: "Checking." }, good, bad], [good, bad]]],
    ["one without calls", [[{ text: "Hello." }], [{ text: "Checking." }, bad]]],
    ["one without calls, one writes", [[{ text: "Hello." }], [{ text: `Checking.${WRITTEN_BAD}` }]]],
    ["one writes a valid call, one native", [[{ text: `Sure.${WRITTEN_GOOD}` }], [
      { text: "Checking." },
      bad,
    ]]],
    ["one writes a valid call, one writes", [[{ text: `Sure.${WRITTEN_GOOD}` }], [{
      text: `Checking.${WRITTEN_BAD}`,
    }]]],
    ["JSON prose, one writes", [[{ text: '{"name": "Ada", "arguments": {}}' }], [{
      text: `Checking.${WRITTEN_BAD}`,
    }]]],
  ];
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    for (const [shape, parts] of shapes) {
      const whole = parts.map((ps, index) => ({
        index,
        content: { role: "model", parts: ps },
        finishReason: "STOP",
      }));
      const gated = await gateCompletion(request, { candidates: whole }, { dialect: "gemini", onRejected });
      assert.equal(gated.verdict.allowed, false);
      const body = geminiTexts([gated.response as GeminiChunk]);
      // One chunk per part, each candidate in turn, then the finish of both.
      const sse: unknown[] = [];
      for (const [index, ps] of parts.entries()) {
        for (const p of ps) {
          sse.push({ candidates: atPosition({ index, content: { role: "model", parts: [p] } }, index) });
        }
      }
      sse.push({
        candidates: [0, 1].map((index) => ({
          index,
          content: { parts: [{ text: "" }] },
          finishReason: "STOP",
        })),
      });
      const { value } = await twoCandidates(sse, { onRejected });
      assert.deepEqual(geminiTexts(geminiChunks(value)), body, `${onRejected}, ${shape}`);
    }
  }
});

test("guardFetch Gemini stream of two candidates: a rejected written call whose marker another candidate's chunk splits is cut whole", async () => {
  // A chunk of candidate 1 that names candidate 0 with no parts came between `<tool_call` and `>`: candidate
  // 0's piece of it was taken for the end of its text, the tail let out, and only the rest of the call was
  // cut: the client read "Sure. <tool_call". The body gate, which joins a candidate's parts, cut it all.
  const text = (t: string) => ({ index: 0, content: { role: "model", parts: [{ text: t }] } });
  const sse = [
    { candidates: [text("Sure. "), { index: 1, content: { role: "model", parts: [{ text: "Hi." }] } }] },
    { candidates: [text("<tool_call")] },
    {
      candidates: [{ index: 0, content: { role: "model", parts: [] } }, {
        index: 1,
        content: { role: "model", parts: [{ text: " There." }] },
      }],
    },
    { candidates: [text('>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>')] },
    {
      candidates: [0, 1].map((index) => ({
        index,
        content: { parts: [{ text: "" }] },
        finishReason: "STOP",
      })),
      usageMetadata: { totalTokenCount: 9 },
    },
  ];
  const { value, seen } = await twoCandidates(sse);
  const texts = geminiTexts(geminiChunks(value));
  assert.equal(seen[0].verdict.allowed, false);
  assert.match(texts[0], /^Sure\.\s*toolguard stopped .*delete_everything/s);
  assert.doesNotMatch(texts[0], /tool_call/);
  assert.equal(texts[1], "Hi. There.");
});

test("Gemini drop-call of two candidates: the reason stands in the candidate that lost a call, in a body and a stream", async () => {
  // It stood in the first candidate (a body: the first with calls), which kept its valid call and lost
  // nothing, and the candidate whose call was dropped had no word of it.
  const tools = GEMINI_TOOLS;
  const good = { functionCall: { name: "get_weather", args: { city: "Oslo" } } };
  const bad = { functionCall: { name: "delete_everything", args: {} } };
  const both = (finish: boolean, parts0: unknown[], parts1: unknown[]) =>
    [parts0, parts1].map((parts, index) => ({
      index,
      content: { role: "model", parts },
      ...(finish ? { finishReason: "STOP" } : {}),
    }));
  const request = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools };
  const gated = await gateCompletion(request, { candidates: both(true, [good], [bad]) }, {
    dialect: "gemini",
    onRejected: "drop-call",
  });
  const body = geminiTexts([gated.response as GeminiChunk]);
  assert.deepEqual(body[0], "[get_weather]");
  assert.match(body[1], /^toolguard .*delete_everything/s);

  const sse = [{ candidates: both(false, [good], [bad]) }, { candidates: both(true, [], []) }];
  const { value } = await twoCandidates(sse, { onRejected: "drop-call" });
  const stream = geminiTexts(geminiChunks(value));
  assert.deepEqual(stream[0], "[get_weather]");
  assert.match(stream[1], /^toolguard .*delete_everything/s);
});

test("gateCompletion, a Gemini body withheld: the reason follows the answer's text after a blank line, as in a stream", async () => {
  // A client joins a candidate's parts as they come: the reason, a part of its own, was glued to the text
  // before it ("Checking.toolguard stopped …").
  const request = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools: GEMINI_TOOLS };
  const native = [{ text: "Checking." }, { functionCall: { name: "delete_everything", args: {} } }];
  const written = [{
    text: 'Checking. <tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
  }];
  const silent = [{ functionCall: { name: "delete_everything", args: {} } }];
  for (const parts of [native, written]) {
    const gated = await gateCompletion(request, { candidates: [{ content: { role: "model", parts } }] }, {
      dialect: "gemini",
    });
    assert.equal(gated.verdict.allowed, false);
    // (the written call's "Checking. " as it came: a stream sent it before the call began)
    assert.match(geminiTexts([gated.response as GeminiChunk])[0], /^Checking\. ?\n\ntoolguard stopped /);
  }
  const gated = await gateCompletion(
    request,
    { candidates: [{ content: { role: "model", parts: silent } }] },
    {
      dialect: "gemini",
    },
  );
  assert.match(
    geminiTexts([gated.response as GeminiChunk])[0],
    /^toolguard stopped /,
    "no blank line before it",
  );
});

test("gateCompletion, Gemini drop-call: the reason follows the answer's text after a blank line, as in a stream", async () => {
  // The reason, a part of its own ahead of the kept parts, was glued to the text after it ("… match it.Checking.");
  // then it stood before that text, where a stream (its text flowing while the calls wait) has it after.
  const request = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools: GEMINI_TOOLS };
  const parts = [
    { text: "Checking." },
    { functionCall: { name: "delete_everything", args: {} } },
    { functionCall: { name: "get_weather", args: { city: "Oslo" } } },
  ];
  const gated = await gateCompletion(request, { candidates: [{ content: { role: "model", parts } }] }, {
    dialect: "gemini",
    onRejected: "drop-call",
  });
  assert.match(
    geminiTexts([gated.response as GeminiChunk])[0],
    /^Checking\.\n\ntoolguard removed .*\[get_weather\]$/s,
  );
});

test("Gemini, two candidates withheld: a call written beside a candidate's functionCall stays in its text, in a body as in a stream", async () => {
  // Text beside native calls is not read for calls (one answer's body and every stream keep it as it came):
  // the body gate cut the valid call written there once another candidate's written call was rejected,
  // where the stream kept it.
  const parts = [
    [
      { text: `Checking. ${WRITTEN_GOOD}` },
      { functionCall: { name: "get_weather", args: { city: "Oslo" } } },
    ],
    [{ text: `Hi.${WRITTEN_BAD}` }],
  ];
  const candidates = (finish: boolean) =>
    parts.map((ps, index) => ({
      index,
      content: { role: "model", parts: finish ? ps : [] },
      ...(finish ? { finishReason: "STOP" } : {}),
    }));
  const request = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools: GEMINI_TOOLS };
  const gated = await gateCompletion(request, { candidates: candidates(true) }, { dialect: "gemini" });
  assert.equal(gated.verdict.allowed, false);
  const body = geminiTexts([gated.response as GeminiChunk]);
  assert.ok(body[0].startsWith(`Checking. ${WRITTEN_GOOD}\n\ntoolguard stopped`), body[0]);
  assert.match(body[1], /^Hi\.\n\ntoolguard stopped/);

  const sse = [
    { candidates: [{ index: 0, content: { role: "model", parts: parts[0].slice(0, 1) } }] },
    { candidates: [{}, { index: 1, content: { role: "model", parts: parts[1] } }] },
    { candidates: [{ index: 0, content: { role: "model", parts: parts[0].slice(1) } }] },
    { candidates: candidates(false).map((c) => ({ ...c, finishReason: "STOP" })) },
  ];
  const { value, seen } = await twoCandidates(sse);
  assert.equal(seen[0].verdict.allowed, false);
  assert.deepEqual(geminiTexts(geminiChunks(value)), body);
});

test("guardFetch n=2, a whole answer withheld: a call written beside choice 0's tool_calls stays in its text", async () => {
  // As in a body of one choice, and in a stream: the text beside native calls is not read for calls.
  const body = chatCompletion(`Checking. ${WRITTEN_GOOD}`, [VALID_CALL]);
  (body.choices as Record<string, unknown>[]).push({
    index: 1,
    message: { role: "assistant", content: `Hi.${WRITTEN_BAD}` },
    finish_reason: "stop",
  });
  provider.reply({ json: body });
  const answer = await openai().chat.completions.create({
    model: "m",
    messages,
    n: 2,
    tools: TOOLS_OPENAI as never,
  });
  const whole = answer.choices.map((c) => c.message.content ?? "");
  assert.ok(whole[0].startsWith(`Checking. ${WRITTEN_GOOD}\n\ntoolguard stopped`), whole[0]);
  assert.match(whole[1], /^Hi\.\n\ntoolguard stopped/);
  assert.deepEqual(answer.choices.map((c) => c.message.tool_calls), [undefined, undefined]);
});

test("Gemini withheld: the reason follows text the watch held beside a rejected functionCall after a blank line, in a stream as in a body", async () => {
  // The text, held as a possible written call and let go as it came, was not counted as text the client had:
  // the stream glued the reason to it ("…</tool_call>toolguard stopped …").
  const request = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools: GEMINI_TOOLS };
  for (const text of [`Checking. ${WRITTEN_GOOD}`, WRITTEN_GOOD]) {
    const parts = [{ text }, { functionCall: { name: "delete_everything", args: {} } }];
    const gated = await gateCompletion(request, { candidates: [{ content: { role: "model", parts } }] }, {
      dialect: "gemini",
    });
    const body = geminiTexts([gated.response as GeminiChunk])[0];
    assert.ok(body.startsWith(`${text}\n\ntoolguard stopped`), body);
    const sse = [
      { candidates: [{ index: 0, content: { role: "model", parts: parts.slice(0, 1) } }] },
      { candidates: [{ index: 0, content: { role: "model", parts: parts.slice(1) }, finishReason: "STOP" }] },
    ];
    const { value } = await twoCandidates(sse);
    assert.equal(geminiTexts(geminiChunks(value))[0], body);
  }
});

test("Gemini withheld: the reason follows text the watch held after a rejected functionCall, in a stream as in a body", async () => {
  // The text came in the chunk of the call and the next: the reason stood in the call's place, in the midst
  // of the text (a body puts it after the text).
  const request = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], tools: GEMINI_TOOLS };
  const call = { functionCall: { name: "delete_everything", args: {} } };
  const parts = [call, { text: WRITTEN_GOOD.slice(0, 20) }, { text: WRITTEN_GOOD.slice(20) }];
  const gated = await gateCompletion(request, { candidates: [{ content: { role: "model", parts } }] }, {
    dialect: "gemini",
  });
  const body = geminiTexts([gated.response as GeminiChunk])[0];
  assert.ok(body.startsWith(`${WRITTEN_GOOD}\n\ntoolguard stopped`), body);
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const sse = [
      { candidates: [{ index: 0, content: { role: "model", parts: parts.slice(0, 2) } }] },
      { candidates: [{ index: 0, content: { role: "model", parts: parts.slice(2) }, finishReason: "STOP" }] },
    ];
    const { value } = await twoCandidates(sse, { onRejected });
    assert.equal(geminiTexts(geminiChunks(value))[0], body, onRejected);
  }
});

test("gateCompletion Chat: a choice of plain text with an empty tool_calls (vLLM) goes as it came when another choice's call is rejected", async () => {
  const body = chatCompletion(null, [{ name: "delete_everything", args: {} }]);
  const plain = { role: "assistant", content: "It is sunny.", refusal: null, tool_calls: [] };
  const choices = body.choices as Record<string, unknown>[];
  choices.push({ index: 1, message: plain, logprobs: null, finish_reason: "stop" });
  const gated = await gateCompletion({ tools: TOOLS_OPENAI }, body);
  assert.equal(gated.verdict.allowed, false);
  const [rewritten, kept] = (gated.response as Record<string, unknown>).choices as Record<string, unknown>[];
  assert.match(String((rewritten.message as Record<string, unknown>).content), /delete_everything/);
  // It had no call to lose: no reason, and its message as it came (as the stream gives it).
  assert.deepEqual(kept, choices[1]);
});

test("gateCompletion Gemini: a candidate that is no object keeps its place, as the stream keeps it", async () => {
  const bad = { functionCall: { name: "delete_everything", args: {} } };
  const answer = (calls: boolean) => ({ content: { role: "model", parts: [calls ? bad : { text: "Hi." }] } });
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const body = { candidates: [null, answer(true), answer(false)] };
    const gated = await gateCompletion({ tools: GEMINI_TOOLS }, body, { dialect: "gemini", onRejected });
    const [none, rewritten, kept] = (gated.response as Record<string, unknown>).candidates as unknown[];
    assert.equal(none, null, onRejected);
    assert.match(JSON.stringify(rewritten), /delete_everything/, onRejected);
    assert.deepEqual(kept, body.candidates[2], onRejected);
  }
});

test("guardFetch n=2: a stream whose choice 1 calls first tells the reason in choice order, as its body does", async () => {
  // Choice 1's call came first: the stream judged the calls as they came and its reason named choice 1's
  // call first, where the body of the same answer names choice 0's first (fuzz seeds chat2 18085, gemini2
  // 18011).
  const call = (name: string, id: string) => ({
    tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: "{}" } }],
  });
  const sse = [
    choiceChunk(1, { role: "assistant", ...call("drop_table", "call_b") }),
    choiceChunk(0, { role: "assistant", ...call("delete_everything", "call_a") }),
    choiceChunk(0, {}, "tool_calls"),
    choiceChunk(1, {}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
  const { value: text, seen } = await withGuardedServer(() => ({ sse }), {}, async (server, f) => {
    const res = await f(`${server.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages, n: 2, tools: TOOLS_OPENAI, stream: true }),
    });
    return await res.text();
  });
  const fn = (name: string) => ({ name, arguments: "{}" });
  const whole = chatCompletion(null, [{ name: "delete_everything", args: {} }]);
  const choice0 = (whole.choices as Record<string, unknown>[])[0];
  const message1 = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_b", type: "function", function: fn("drop_table") }],
  };
  whole.choices = [choice0, { ...choice0, index: 1, message: message1 }];
  const body = await gateCompletion({ model: "m", n: 2, messages, tools: TOOLS_OPENAI }, whole);
  assert.ok(body.reason!.indexOf("delete_everything") < body.reason!.indexOf("drop_table"));
  assert.equal(seen[0].reason, body.reason);
  // (each choice reads the reason for its own call, in the stream as in the body)
  const streamed = ["", ""];
  for (const chunk of sseData(text)) {
    for (const c of chunk.choices) streamed[c.index] += c.delta?.content ?? "";
  }
  const told = (body.response as { choices: { message: { content: string } }[] }).choices;
  assert.deepEqual(streamed, told.map((c) => c.message.content));
  assert.match(streamed[0], /delete_everything/);
  assert.doesNotMatch(streamed[0], /drop_table/);
});
