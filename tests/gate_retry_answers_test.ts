// A streamed retry of a response of several answers (OpenAI Chat `n`, Gemini `candidateCount`) whose first
// answer's calls were rejected: the retry continues the first answer alone, so it asks for one; the client's
// other answers keep their text and finish, with nothing of the retry's glued on.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { guardFetch } from "../gate.ts";

/** An upstream that answers the first request with `first` and every later one with `again` of its body. */
function upstream(first: string, again: (body: Record<string, unknown>) => string) {
  const bodies: Record<string, unknown>[] = [];
  const fetch = (_url: unknown, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)));
    const wire = bodies.length === 1 ? first : again(bodies.at(-1)!);
    return Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } }));
  };
  return { fetch, bodies };
}

const chunk = (choices: unknown[]) =>
  `data: ${
    JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices })
  }\n\n`;
const choice = (index: number, delta: unknown, finish: string | null = null) => ({
  index,
  delta,
  logprobs: null,
  finish_reason: finish,
});

/** An openai client through `guardFetch` with `retry: 2` over `fetch`. */
const guardedClient = (fetch: Parameters<typeof guardFetch>[0]) =>
  new OpenAI({
    apiKey: "k",
    baseURL: "http://llm.test/v1",
    fetch: guardFetch(fetch, { retry: 2 }),
    maxRetries: 0,
  });

/** A Chat request for two answers, with one declared tool. */
const TWO_ANSWERS = {
  model: "m",
  n: 2,
  messages: [{ role: "user" as const, content: "hi" }],
  tools: [{ type: "function" as const, function: { name: "weather", parameters: { type: "object" } } }],
};

test("guardFetch: a Chat stream of n answers retried asks for one, and the others keep their text and finish", async () => {
  const drop = { index: 0, id: "call_1", type: "function", function: { name: "drop_db", arguments: "{}" } };
  const first = chunk([choice(0, { role: "assistant", content: "Let me look." })]) +
    chunk([choice(1, { role: "assistant", content: "Answer one" })]) +
    chunk([choice(0, { tool_calls: [drop] })]) +
    chunk([choice(1, { content: " goes on." })]) +
    chunk([choice(1, {}, "length")]) +
    chunk([choice(0, {}, "tool_calls")]) + "data: [DONE]\n\n";
  // (a provider that gives n answers again, as asked)
  const again = chunk([choice(0, { role: "assistant", content: " Found it." })]) +
    chunk([choice(1, { role: "assistant", content: "Another." })]) +
    chunk([choice(0, {}, "stop")]) + chunk([choice(1, {}, "stop")]) + "data: [DONE]\n\n";
  const { fetch, bodies } = upstream(first, () => again);
  const stream = guardedClient(fetch).chat.completions.stream(TWO_ANSWERS);
  const final = await stream.finalChatCompletion();
  assert.deepEqual(final.choices.map((c) => [c.index, c.message.content, c.finish_reason]), [
    [0, "Let me look. Found it.", "stop"],
    [1, "Answer one goes on.", "length"],
  ]);
  assert.equal(bodies.length, 2);
  assert.equal(bodies[1].n, undefined);
});

test("guardFetch: a Gemini stream of two candidates retried asks for one, and the second keeps its text", async () => {
  const sse = (candidates: unknown[]) => `data: ${JSON.stringify({ candidates, modelVersion: "g" })}\n\n`;
  const text = (t: string, index: number, finish?: string) => ({
    content: { role: "model", parts: [{ text: t }] },
    index,
    ...(finish ? { finishReason: finish } : {}),
  });
  const call = {
    content: { role: "model", parts: [{ functionCall: { name: "drop_db", args: {} } }] },
    index: 0,
  };
  const first = sse([text("Let me look.", 0)]) + sse([{}, text("Sunny.", 1, "STOP")]) +
    sse([{ ...call, finishReason: "STOP" }]);
  // (as many candidates as asked)
  const again = (body: Record<string, unknown>) =>
    (body.generationConfig as { candidateCount?: number }).candidateCount === 2
      ? sse([text(" Found it.", 0, "STOP"), text(" Glued.", 1, "STOP")])
      : sse([text(" Found it.", 0, "STOP")]);
  const { fetch, bodies } = upstream(first, again);
  const gfetch = guardFetch(fetch, { retry: 1 });
  const response = await gfetch("http://llm.test/v1beta/models/g:streamGenerateContent?alt=sse", {
    method: "POST",
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      generationConfig: { candidateCount: 2, temperature: 0.5 },
      tools: [{ functionDeclarations: [{ name: "weather", parameters: { type: "object" } }] }],
    }),
  });
  const chunks = (await response.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) =>
    JSON.parse(f.slice(6))
  );
  assert.equal(bodies.length, 2);
  assert.deepEqual(bodies[1].generationConfig, { temperature: 0.5 });
  const said = (at: number) =>
    chunks.flatMap((c) => c.candidates?.[at]?.content?.parts ?? []).map((p: { text?: string }) =>
      p.text ?? ""
    )
      .join("");
  assert.equal(said(1), "Sunny.");
  assert.match(said(0), /^Let me look\. Found it\.$/);
});

// (a retry sends back the first answer and continues it: a call of another answer went back beside the
// first answer's words, the retry ran on in the first answer after its finish, and the answer that lost its
// call ended with no word of why; such a turn ends in the reason, as one whose calls were written is)
const geminiCandidateOneCalls = {
  sse: (candidates: unknown[]) => `data: ${JSON.stringify({ candidates, modelVersion: "g" })}\n\n`,
  text: (t: string, index: number, finish?: string) => ({
    content: { role: "model", parts: [{ text: t }] },
    index,
    ...(finish ? { finishReason: finish } : {}),
  }),
  call: { functionCall: { name: "drop_db", args: {} } },
  request: {
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    generationConfig: { candidateCount: 2 },
    tools: [{ functionDeclarations: [{ name: "weather", parameters: { type: "object" } }] }],
  },
};

/** The Gemini stream `wire` gated with `retry: 1`: the chunks the client got and the bodies sent upstream. */
async function geminiRetried(wire: string) {
  const { sse, text, request } = geminiCandidateOneCalls;
  const { fetch, bodies } = upstream(wire, () => sse([text(" Found it.", 0, "STOP")]));
  const response = await guardFetch(fetch, { retry: 1 })(
    "http://llm.test/v1beta/models/g:streamGenerateContent?alt=sse",
    { method: "POST", body: JSON.stringify(request) },
  );
  const chunks = (await response.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) =>
    JSON.parse(f.slice(6))
  );
  const said = (at: number) =>
    chunks.flatMap((c) => c.candidates?.[at]?.content?.parts ?? []).map((p: { text?: string }) =>
      p.text ?? ""
    ).join("");
  const finishes = (at: number) => chunks.flatMap((c) => c.candidates?.[at]?.finishReason ?? []);
  return { bodies, said, finishes };
}

test("guardFetch: a Gemini stream whose second candidate's call is rejected is not retried, and that candidate ends in the reason", async () => {
  const { sse, text, call } = geminiCandidateOneCalls;
  const first = sse([text("Sunny.", 0)]) + sse([{}, text("Let me look.", 1)]) +
    sse([text("", 0, "STOP"), { content: { role: "model", parts: [call] }, index: 1, finishReason: "STOP" }]);
  const { bodies, said } = await geminiRetried(first);
  assert.equal(bodies.length, 1);
  assert.equal(said(0), "Sunny.");
  assert.match(said(1), /^Let me look\.\n\ntoolguard stopped/);
});

/**
 * The Gemini body `whole` gated with `retry: 1` (a retry would get " Found it."): the body the client got and
 * the bodies sent upstream.
 */
async function geminiBodyRetried(whole: Record<string, unknown>) {
  const { text, request } = geminiCandidateOneCalls;
  const bodies: Record<string, unknown>[] = [];
  const fetch = (_url: unknown, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)));
    return Promise.resolve(
      Response.json(bodies.length === 1 ? whole : { candidates: [text(" Found it.", 0, "STOP")] }),
    );
  };
  const response = await guardFetch(fetch, { retry: 1 })("http://llm.test/v1beta/models/g:generateContent", {
    method: "POST",
    body: JSON.stringify(request),
  });
  return { out: await response.json(), bodies };
}

test("guardFetch: a Gemini body whose second candidate's call is rejected is not retried with the first candidate's words", async () => {
  const { text, call } = geminiCandidateOneCalls;
  const { out, bodies } = await geminiBodyRetried({
    candidates: [text("Sunny.", 0, "STOP"), {
      content: { role: "model", parts: [{ text: "Let me look." }, call] },
      index: 1,
      finishReason: "STOP",
    }],
  });
  assert.equal(bodies.length, 1);
  assert.deepEqual(out.candidates[0].content.parts, [{ text: "Sunny." }]);
  assert.match(JSON.stringify(out.candidates[1].content.parts), /toolguard stopped/);
});

test("guardFetch: a Chat stream of n answers whose second answer's call is rejected is not retried, and that answer ends in the reason", async () => {
  const drop = { index: 0, id: "call_1", type: "function", function: { name: "drop_db", arguments: "{}" } };
  const first = chunk([choice(0, { role: "assistant", content: "Sunny." })]) +
    chunk([choice(1, { role: "assistant", content: "Let me look." })]) +
    chunk([choice(0, {}, "stop")]) +
    chunk([choice(1, { tool_calls: [drop] })]) +
    chunk([choice(1, {}, "tool_calls")]) + "data: [DONE]\n\n";
  const again = chunk([choice(0, { role: "assistant", content: " Found it." })]) +
    chunk([choice(0, {}, "stop")]) + "data: [DONE]\n\n";
  const { fetch, bodies } = upstream(first, () => again);
  const stream = guardedClient(fetch).chat.completions.stream(TWO_ANSWERS);
  const final = await stream.finalChatCompletion();
  assert.equal(bodies.length, 1);
  assert.deepEqual(final.choices[0].message.content, "Sunny.");
  assert.match(final.choices[1].message.content ?? "", /^Let me look\.\n\ntoolguard stopped/);
  assert.deepEqual(final.choices.map((c) => c.finish_reason), ["stop", "stop"]);
});

test("guardFetch: a Chat body of n answers whose second answer's call is rejected is not retried with the first answer's words", async () => {
  const drop = { id: "call_1", type: "function", function: { name: "drop_db", arguments: "{}" } };
  const whole = {
    id: "c1",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      { index: 0, message: { role: "assistant", content: "Sunny." }, finish_reason: "stop" },
      {
        index: 1,
        message: { role: "assistant", content: "Let me look.", tool_calls: [drop] },
        finish_reason: "tool_calls",
      },
    ],
  };
  const bodies: Record<string, unknown>[] = [];
  const fetch = (_url: unknown, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)));
    return Promise.resolve(Response.json(whole));
  };
  const out = await guardedClient(fetch).chat.completions.create(TWO_ANSWERS);
  assert.equal(bodies.length, 1);
  assert.equal(out.choices[0].message.content, "Sunny.");
  assert.match(out.choices[1].message.content ?? "", /^Let me look\.\n\ntoolguard stopped/);
});

// (the gate and the clients read a Gemini chunk's candidates by their place in it; a retry's dropped finish
// went by `index`: where candidate 1 stood first, place 0 got a STOP just before the retry's text continued
// it, and candidate 0 never got its own finish. Where any candidate stands away from its `index`, which is
// the first is in doubt: the turn ends in the reason, as one whose call came in another answer does)
test("guardFetch: a Gemini stream listing candidate 1 first in a chunk is not retried, and the call's candidate ends in the reason", async () => {
  const { sse, text, call } = geminiCandidateOneCalls;
  const wire = sse([text("Let me look.", 1), text("Sunny.", 0)]) +
    sse([{ content: { role: "model", parts: [call] }, index: 1, finishReason: "STOP" }, text("", 0, "STOP")]);
  const { bodies, said } = await geminiRetried(wire);
  assert.equal(bodies.length, 1);
  assert.match(said(0), /^Let me look\.\n\ntoolguard stopped/);
  assert.equal(said(1), "Sunny.");
});

test("guardFetch: a Gemini stream with candidate 1 out of place only in a chunk of text is not retried", async () => {
  const { sse, text, call } = geminiCandidateOneCalls;
  const wire = sse([text("Let me look.", 0)]) + sse([text("Sunny.", 1, "STOP")]) +
    sse([{ content: { role: "model", parts: [call] }, index: 0, finishReason: "STOP" }]);
  const { bodies, said } = await geminiRetried(wire);
  assert.equal(bodies.length, 1);
  assert.match(said(0), /toolguard stopped/);
  assert.doesNotMatch(said(0), /Found it/);
});

test("guardFetch: a Gemini stream whose only candidate stands at its place is retried, with its index or without", async () => {
  const { sse, call } = geminiCandidateOneCalls;
  for (const index of [{ index: 0 }, {}]) {
    const says = (parts: unknown[], finish?: string) => ({
      content: { role: "model", parts },
      ...index,
      ...(finish ? { finishReason: finish } : {}),
    });
    const wire = sse([says([{ text: "Let me look." }])]) + sse([says([call], "STOP")]);
    const { bodies, said } = await geminiRetried(wire);
    assert.equal(bodies.length, 2, JSON.stringify(index));
    const sent = (bodies[1].contents as { role: string; parts: unknown[] }[])[1];
    assert.deepEqual(sent, { role: "model", parts: [{ text: "Let me look." }, call] });
    assert.equal(said(0), "Let me look. Found it.");
  }
});

test("guardFetch: a Gemini body listing candidate 1 first is not retried, as its stream is not", async () => {
  const { text, call } = geminiCandidateOneCalls;
  const { out, bodies } = await geminiBodyRetried({
    candidates: [
      { content: { role: "model", parts: [{ text: "Let me look." }, call] }, index: 1, finishReason: "STOP" },
      text("Sunny.", 0, "STOP"),
    ],
  });
  assert.equal(bodies.length, 1);
  assert.match(JSON.stringify(out.candidates[0].content.parts), /toolguard stopped/);
  assert.deepEqual(out.candidates[1].content.parts, [{ text: "Sunny." }]);
});

test("guardFetch: a Gemini stream holding candidate 0's place with null is retried, and candidate 1's words and finish stay at its place", async () => {
  // The chunk of candidate 1's last words and finish came after candidate 0's call, behind a `null` at place
  // 0: split into its words and its finish without the `null`, it sent " Bye." and MAX_TOKENS to place 0,
  // where the retry then continued candidate 0.
  const { sse, text, call } = geminiCandidateOneCalls;
  const wire = sse([text("Checking.", 0)]) + sse([null, text("Hello.", 1)]) +
    sse([{ content: { role: "model", parts: [call] }, index: 0 }]) +
    sse([null, text(" Bye.", 1, "MAX_TOKENS")]) +
    sse([text("", 0, "STOP")]);
  const { bodies, said, finishes } = await geminiRetried(wire);
  assert.equal(bodies.length, 2);
  assert.deepEqual([said(0), finishes(0)], ["Checking. Found it.", ["STOP"]]);
  assert.deepEqual([said(1), finishes(1)], ["Hello. Bye.", ["MAX_TOKENS"]]);
});
