// What the model reads of a turn whose calls were rejected: the reason the client gets in place of the calls,
// and the tool result each call gets when the gate retries. Each counts the calls as they were, and says once
// that a call did not run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gateCompletion, guardFetch } from "../gate.ts";

const TOOLS = [{
  type: "function",
  function: {
    name: "weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
  },
}];
const REQUEST = { model: "m", messages: [{ role: "user", content: "Weather?" }], tools: TOOLS };
const UNKNOWN = { id: "a", type: "function", function: { name: "drop_db", arguments: "{}" } };
const WRONG = { id: "b", type: "function", function: { name: "weather", arguments: '{"town": "Oslo"}' } };
const GOOD = { id: "c", type: "function", function: { name: "weather", arguments: '{"city": "Oslo"}' } };

/** A Chat completion whose one choice makes `calls`. */
const completion = (calls: unknown[], content: string | null = null) => ({
  id: "c1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{
    index: 0,
    message: { role: "assistant", content, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
    finish_reason: calls.length > 0 ? "tool_calls" : "stop",
  }],
});

/** The first two lines of the text the client gets in place of `calls`, gated with `onRejected`. */
async function opening(calls: unknown[], onRejected: "withhold-turn" | "drop-call" = "withhold-turn") {
  const gated = await gateCompletion(REQUEST, completion(calls), { onRejected });
  const content =
    (gated.response as { choices: { message: { content: string } }[] }).choices[0].message.content;
  return content.split("\n").slice(0, 2);
}

test("gateCompletion: the reason for one rejected call speaks of one call, and says once that it did not run", async () => {
  assert.deepEqual(await opening([UNKNOWN]), [
    "toolguard stopped this turn's tool call.",
    "Your call to drop_db was rejected and did not run.",
  ]);
});

test("gateCompletion: the reason for several rejected calls counts them once, and says an accepted call withheld with them did not run", async () => {
  assert.deepEqual(await opening([UNKNOWN, WRONG]), [
    "toolguard stopped this turn's tool calls.",
    "2 of 2 calls were rejected; none of the rejected calls ran.",
  ]);
  assert.deepEqual(await opening([UNKNOWN, WRONG, GOOD]), [
    "toolguard stopped this turn's tool calls; the accepted one did not run either.",
    "2 of 3 calls were rejected; none of the rejected calls ran.",
  ]);
  assert.deepEqual(await opening([UNKNOWN, WRONG, GOOD], "drop-call"), [
    "toolguard removed the rejected tool calls below; the other call of this turn was kept.",
    "2 of 3 calls were rejected; none of the rejected calls ran.",
  ]);
});

test("guardFetch retry: each call's tool result says once that it did not run, and an accepted call's counts the calls rejected beside it", async () => {
  const bodies: { messages: { role: string; tool_call_id?: string; content?: string }[] }[] = [];
  const fetch = (_url: unknown, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)));
    return Promise.resolve(Response.json(completion(bodies.length === 1 ? [UNKNOWN, WRONG, GOOD] : [GOOD])));
  };
  const response = await guardFetch(fetch, { retry: 1 })("http://llm.test/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify(REQUEST),
  });
  await response.json();
  assert.equal(bodies.length, 2);
  const results = bodies[1].messages.filter((m) => m.role === "tool");
  assert.deepEqual(results.map((m) => m.tool_call_id), ["a", "b", "c"]);
  for (const m of results.slice(0, 2)) {
    assert.equal(String(m.content).match(/did not run|\bran\b/g)?.length, 1, String(m.content));
  }
  assert.match(String(results[0].content), /^Your call to drop_db was rejected and did not run\.\n/);
  assert.equal(
    results[2].content,
    "toolguard did not run weather: 2 other calls in the same turn were rejected. Call it again if it is still needed.",
  );
});

/** One OpenAI Chat stream chunk of choice `index` (0), as SSE. */
const chunk = (delta: unknown, finish: string | null = null, index = 0) =>
  `data: ${
    JSON.stringify({
      id: "c1",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index, delta, finish_reason: finish }],
    })
  }\n\n`;
const sse = (e: Record<string, unknown>) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
/**
 * An Anthropic stream of `weather` calls, each `[id, input, json]`: a block that starts with `input` and then
 * streams `json` (clients read the one or the other: the gate judges both).
 */
const twoWayWire = (blocks: [string, Record<string, unknown>, string][]) =>
  [
    {
      type: "message_start",
      message: { id: "m1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null },
    },
    ...blocks.flatMap(([id, input, json], index) => [
      { type: "content_block_start", index, content_block: { type: "tool_use", id, name: "weather", input } },
      { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } },
      { type: "content_block_stop", index },
    ]),
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } },
    { type: "message_stop" },
  ].map(sse).join("");
/**
 * An Anthropic stream of one tool call whose block starts with one input and streams another: the gate
 * judges both versions (onVerdict's verdict lists the call once, as its rejected version) and rejects
 * `{"town"}`.
 */
const VERSIONS_WIRE = twoWayWire([["tu_1", { town: "Oslo" }, '{"city": "Oslo"}']]);

/**
 * `wire` ({@linkcode VERSIONS_WIRE}) gated with `onRejected` (and `retry` times, each answered with it): what
 * the client read (its text, stop reason and blocks), how many calls each verdict listed, and the requests
 * sent.
 */
async function twoVersions(onRejected: "withhold-turn" | "drop-call", retry = 0, wire = VERSIONS_WIRE) {
  const versions: number[] = [];
  const sent: { messages: { content: unknown }[] }[] = [];
  const fetch = (_url: unknown, init?: RequestInit) => {
    sent.push(JSON.parse(String(init?.body)));
    return Promise.resolve(
      new Response(wire, { headers: { "content-type": "text/event-stream" } }),
    );
  };
  const response = await guardFetch(fetch, {
    onRejected,
    retry,
    onVerdict: (e) => versions.push(e.verdict.calls.length),
  })("http://llm.test/v1/messages", {
    method: "POST",
    body: JSON.stringify({
      model: "m",
      max_tokens: 10,
      stream: true,
      messages: [{ role: "user", content: "Weather?" }],
      tools: [{ name: "weather", input_schema: TOOLS[0].function.parameters }],
    }),
  });
  const events = (await response.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
    JSON.parse(l.slice(6))
  );
  return {
    versions,
    sent,
    said: events.map((e) => e.delta?.text ?? "").join("").split("\n").slice(0, 2),
    stop: events.flatMap((e) => e.delta?.stop_reason ?? []),
    blocks: events.flatMap((e) => e.content_block?.type ?? []),
  };
}

test("guardFetch: the reason for one streamed call whose arguments clients read two ways speaks of one call, none accepted", async () => {
  // Read as two calls, the lead said "the accepted one did not run either" of a turn of one call, which was
  // rejected.
  const { versions, said } = await twoVersions("withhold-turn");
  // (onVerdict's verdict lists the call once too: it listed each version, one call read as two)
  assert.deepEqual(versions, [1]);
  assert.deepEqual(said, [
    "toolguard stopped this turn's tool call.",
    "Your call to weather was rejected and did not run.",
  ]);
});

test("guardFetch drop-call: one streamed call whose arguments clients read two ways, one version rejected, is withheld as the turn's one call", async () => {
  // Counted as two calls, one accepted, drop-call took the turn for one to keep: it dropped the block (the
  // rejected version's), told the model "the other call of this turn was kept" of none, and the stream
  // ended in `tool_use` with no tool block left.
  const withheld = await twoVersions("withhold-turn");
  const dropped = await twoVersions("drop-call");
  assert.deepEqual(dropped.said, withheld.said);
  assert.deepEqual([dropped.stop, dropped.blocks], [withheld.stop, withheld.blocks]);
  assert.notDeepEqual(dropped.stop, ["tool_use"]);
});

test("guardFetch drop-call: two streamed calls that share an id are two calls, and the accepted one is kept", async () => {
  // (versions of one call are told apart from calls by their place in the stream, not by the id alone, which
  // some servers give every call alike)
  const call = (index: number, args: string) =>
    chunk({
      tool_calls: [{ index, id: "call_0", type: "function", function: { name: "weather", arguments: args } }],
    });
  const wire = chunk({ role: "assistant", content: "" }) + call(0, '{"city": "Oslo"}') +
    call(1, '{"town": "Oslo"}') +
    chunk({}, "tool_calls") + "data: [DONE]\n\n";
  const fetch = () =>
    Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } }));
  const response = await guardFetch(fetch, { onRejected: "drop-call" })(
    "http://llm.test/v1/chat/completions",
    {
      method: "POST",
      body: JSON.stringify({ ...REQUEST, stream: true }),
    },
  );
  const text = await response.text();
  assert.match(
    text,
    /toolguard removed the rejected tool call below; the other call of this turn was kept\./,
  );
  assert.match(text, /"arguments":"\{\\"city\\": \\"Oslo\\"\}"/);
  assert.doesNotMatch(text, /"arguments":"\{\\"town/);
});

test("guardFetch retry: one streamed call whose arguments clients read two ways goes back once, with its rejected version's result, in either mode", async () => {
  // Each version went back as a call of its own under the one id: two tool results for `tu_1`, the first
  // "toolguard did not run weather: another call in the same turn was rejected" of none; and drop-call, which
  // withholds the turn whole, did not retry it, where it retries a turn whose calls were all rejected.
  for (const onRejected of ["withhold-turn", "drop-call"] as const) {
    const { sent } = await twoVersions(onRejected, 1);
    assert.equal(sent.length, 2, onRejected);
    const results = sent[1].messages.at(-1)!.content as { tool_use_id: string; content: string }[];
    assert.deepEqual(results.map((r) => r.tool_use_id), ["tu_1"], onRejected);
    assert.match(results[0].content, /^Your call to weather was rejected and did not run\.\n/, onRejected);
  }
});

test("guardFetch retry: one streamed call whose arguments clients read two ways goes back as the version its tool result describes", async () => {
  // The assistant turn held the input of the deltas (`city`, accepted) while the tool result told of the
  // start's (`town`, rejected): the model read a call it had not made rejected for problems it did not have.
  const { sent } = await twoVersions("withhold-turn", 1);
  const [assistant, user] = sent[1].messages.slice(-2) as {
    content: { type: string; input?: unknown; content?: string }[];
  }[];
  assert.deepEqual(assistant.content.filter((b) => b.type === "tool_use").map((b) => b.input), [{
    town: "Oslo",
  }]);
  assert.match(user.content[0].content!, /unexpected_argument: "town" is not a parameter/);
});

test("guardFetch drop-call: an accepted call at the index a rejected one reused goes with it, and the turn is withheld and retried as one with no call kept", async () => {
  // A client reads one call at an index (the openai SDK merges the two): the gate dropped the index whole,
  // the accepted call with the rejected one, but counted the turn as one with a call to keep: "the other
  // call of this turn was kept" of none, the stream ended in `tool_calls` with no call, and no retry.
  const call = (id: string, name: string, args: string) =>
    chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: args } }] });
  const wire = chunk({ role: "assistant", content: "" }) + call("a", "weather", '{"city": "Oslo"}') +
    call("b", "drop_db", "{}") + chunk({}, "tool_calls") + "data: [DONE]\n\n";
  for (const retry of [0, 1]) {
    let sent = 0;
    const fetch = () => {
      const body = sent++ === 0
        ? wire
        : chunk({ role: "assistant", content: "Done." }, "stop") + "data: [DONE]\n\n";
      return Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
    };
    const response = await guardFetch(fetch, { onRejected: "drop-call", retry })(
      "http://llm.test/v1/chat/completions",
      { method: "POST", body: JSON.stringify({ ...REQUEST, stream: true }) },
    );
    const choices = (await response.text()).split("\n").filter((l) => l.startsWith("data: {")).map((l) =>
      JSON.parse(l.slice(6)).choices[0]
    );
    const said = choices.map((c) => c.delta.content ?? "").join("");
    assert.equal(sent, 1 + retry, `retry ${retry}`);
    if (retry === 0) {
      assert.match(
        said,
        /^toolguard stopped this turn's tool calls; the accepted one did not run either\.\n/,
      );
    }
    assert.equal(choices.at(-1).finish_reason, "stop", `retry ${retry}`);
  }
});

/**
 * A Chat stream under drop-call whose choice 0 makes `a` (accepted) and then `b` (rejected) at index 0, and
 * `c` (accepted) at index 1 (`n: 1`) or in choice 1 (`n: 2`), answered `retry` times with words (`calls`:
 * other calls instead, as `[choice, index, id, name, arguments]`): each choice's text, call ids and finish
 * reason as the client reads them, and the requests sent.
 */
type ChatCall = [choice: number, index: number, id: string, name: string, args: string];
async function reusedBesideKept(n: 1 | 2, retry: 0 | 1, calls?: ChatCall[]) {
  const raw = (choice: number, delta: unknown, finish: string | null = null) => chunk(delta, finish, choice);
  const call = (choice: number, index: number, id: string, name: string, args: string) =>
    raw(choice, { tool_calls: [{ index, id, type: "function", function: { name, arguments: args } }] });
  const made: ChatCall[] = calls ?? [
    [0, 0, "a", "weather", '{"city": "Oslo"}'],
    [0, 0, "b", "drop_db", "{}"],
    n === 1 ? [0, 1, "c", "weather", '{"city": "Rome"}'] : [1, 0, "c", "weather", '{"city": "Rome"}'],
  ];
  const wire = raw(0, { role: "assistant", content: "" }) + made.map((c) => call(...c)).join("") +
    raw(0, {}, "tool_calls") + (n === 2 ? raw(1, {}, "tool_calls") : "") + "data: [DONE]\n\n";
  const sent: { messages: { role: string; tool_call_id?: string; content: unknown }[] }[] = [];
  const fetch = (_url: unknown, init?: RequestInit) => {
    const body = sent.length === 0 ? wire : raw(0, { role: "assistant", content: "Done." }, "stop") +
      "data: [DONE]\n\n";
    sent.push(JSON.parse(String(init?.body)));
    return Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
  };
  const response = await guardFetch(fetch, { onRejected: "drop-call", retry })(
    "http://llm.test/v1/chat/completions",
    { method: "POST", body: JSON.stringify({ ...REQUEST, n, stream: true }) },
  );
  const said = ["", ""], ids: string[][] = [[], []], finish: unknown[] = [null, null];
  for (const line of (await response.text()).split("\n")) {
    if (!line.startsWith("data: {")) continue;
    for (const c of JSON.parse(line.slice(6)).choices) {
      said[c.index] += c.delta?.content ?? "";
      for (const t of c.delta?.tool_calls ?? []) ids[c.index].push(t.id);
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  return { said: said.map((s) => s.split("\n").slice(0, 2)), ids, finish, sent };
}

test("guardFetch drop-call: an accepted call at the index a rejected one reused, beside another kept call, withholds the turn as one", async () => {
  // The index went whole (the accepted call with the rejected one) while the other call was kept: the model
  // read "the other calls of this turn were kept" and "1 of 3" while the client got one call; with `n: 2`
  // choice 0 lost both its calls and still ended `tool_calls`, with no call.
  const one = await reusedBesideKept(1, 0);
  assert.deepEqual(one.said[0], [
    "toolguard stopped this turn's tool calls; the accepted 2 did not run either.",
    "1 of 3 calls was rejected; none of the rejected calls ran.",
  ]);
  assert.deepEqual([one.ids[0], one.finish[0]], [[], "stop"]);
  const two = await reusedBesideKept(2, 0);
  assert.deepEqual(two.said, [
    [
      "toolguard stopped this turn's tool calls; the accepted one did not run either.",
      "1 of 2 calls was rejected; none of the rejected calls ran.",
    ],
    [
      "toolguard stopped this answer's tool call: it was accepted, but a tool call in another answer of this " +
      "turn was rejected, so it did not run.",
    ],
  ]);
  assert.deepEqual([two.ids, two.finish], [[[], []], ["stop", "stop"]]);
  // Retried as a turn withheld whole: each call goes back, the accepted ones told they did not run.
  const retried = await reusedBesideKept(1, 1);
  assert.equal(retried.sent.length, 2);
  const results = retried.sent[1].messages.filter((m) => m.role === "tool");
  assert.deepEqual(results.map((r) => r.tool_call_id), ["a", "b", "c"]);
  assert.match(String(results[0].content), /did not run/);
  assert.match(String(results[1].content), /^Your call to drop_db was rejected and did not run\./);
  assert.deepEqual([retried.ids[0], retried.finish[0], retried.said[0]], [[], "stop", ["Done."]]);
});

test("guardFetch drop-call: two accepted calls at one index, beside a rejected call, withhold the turn as one", async () => {
  // Kept, they reached the client as one call (the openai SDK merges an index: the arguments run together,
  // no JSON) while the model read "1 of 3 calls was rejected; the other calls of this turn were kept".
  const { said, ids, finish } = await reusedBesideKept(1, 0, [
    [0, 0, "a", "weather", '{"city": "Oslo"}'],
    [0, 0, "b", "weather", '{"city": "Rome"}'],
    [0, 1, "c", "drop_db", "{}"],
  ]);
  assert.deepEqual(said[0], [
    "toolguard stopped this turn's tool calls; the accepted 2 did not run either.",
    "1 of 3 calls was rejected; none of the rejected calls ran.",
  ]);
  assert.deepEqual([ids[0], finish[0]], [[], "stop"]);
});

test("guardFetch: a streamed call accepted in two versions beside one rejected in a version counts once and goes back once", async () => {
  // (`tu_2` is rejected for its start's input) Each version of `tu_1` counted as a call: "the accepted 2 did
  // not run either", "1 of 3 calls" of two, and a retry sent two tool results for `tu_1`.
  const wire = twoWayWire([
    ["tu_1", { city: "Rome" }, '{"city": "Oslo"}'],
    ["tu_2", { town: "Paris" }, '{"city": "Paris"}'],
  ]);
  const withheld = await twoVersions("withhold-turn", 0, wire);
  assert.deepEqual(withheld.said, [
    "toolguard stopped this turn's tool calls; the accepted one did not run either.",
    "1 of 2 calls was rejected; none of the rejected calls ran.",
  ]);
  assert.deepEqual(withheld.versions, [2]);
  const { sent } = await twoVersions("withhold-turn", 1, wire);
  const results = sent[1].messages.at(-1)!.content as { tool_use_id: string }[];
  assert.deepEqual(results.map((r) => r.tool_use_id), ["tu_1", "tu_2"]);
});
