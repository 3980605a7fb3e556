// Faults the stream-against-body fuzz (scripts/_gate_fuzz.ts) found with the parts and frames it came to
// write: Anthropic's server tools (`server_tool_use`, whose input streams as `input_json_delta` as a client
// call's does, and its result) and `redacted_thinking`, passed as they come beside the calls the gate judges;
// Gemini's usage told in every chunk of several candidates; Responses annotations; Cohere citations.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assembleToolCalls, type GateEvent, guardFetch } from "../gate.ts";
import { fuzzSeed } from "../scripts/_gate_fuzz.ts";

const sse = (e: Record<string, unknown>) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
const TOOLS = [{
  name: "get_weather",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];

/** An Anthropic stream: a web search the server ran, its result, text, and client calls as given. */
function searchStream(calls: { id: string; input: Record<string, unknown> }[]): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [
    {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "enc" } },
    { type: "content_block_stop", index: 0 },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
    },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"query":' } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"rain"}' } },
    { type: "content_block_stop", index: 1 },
    {
      type: "content_block_start",
      index: 2,
      content_block: {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_1",
        content: [{ type: "web_search_result", url: "https://example.com", title: "Rain" }],
      },
    },
    { type: "content_block_stop", index: 2 },
    { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "It rains." } },
    { type: "content_block_stop", index: 3 },
  ];
  calls.forEach((c, i) => {
    const index = 4 + i;
    events.push(
      {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: c.id, name: "get_weather", input: {} },
      },
      {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(c.input) },
      },
      { type: "content_block_stop", index },
    );
  });
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: calls.length ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 9 },
    },
    { type: "message_stop" },
  );
  return events;
}

/** `wire` through `guardFetch` at `path` with `request`: what the client read, and the gate's events. */
async function through(
  path: string,
  request: Record<string, unknown>,
  wire: string,
): Promise<{ text: string; seen: GateEvent[] }> {
  const seen: GateEvent[] = [];
  const upstream = () =>
    Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } }));
  const gfetch = guardFetch(upstream, { onVerdict: (e) => seen.push(e) });
  const response = await gfetch(`http://llm.test${path}`, { method: "POST", body: JSON.stringify(request) });
  return { text: await response.text(), seen };
}

const gated = (events: Record<string, unknown>[]) =>
  through(
    "/v1/messages",
    { model: "m", max_tokens: 9, stream: true, messages: [], tools: TOOLS },
    events.map(sse).join(""),
  );

test("assembleToolCalls: a server tool's input deltas are no orphans, and it is no call of the client's", () => {
  const { calls, findings } = assembleToolCalls(searchStream([{ id: "toolu_1", input: { city: "Oslo" } }]));
  assert.deepEqual(findings, []);
  assert.deepEqual(calls.map((c) => [c.id, c.name, c.arguments]), [[
    "toolu_1",
    "get_weather",
    '{"city":"Oslo"}',
  ]]);
});

test("guardFetch: an Anthropic stream with a web search and no call of the client's passes unreported, byte for byte", async () => {
  const events = searchStream([]);
  const { text, seen } = await gated(events);
  assert.equal(text, events.map(sse).join(""));
  // (as its body: a turn with no call the client runs makes no event)
  assert.deepEqual(seen, []);
});

test("guardFetch: an Anthropic stream with a web search judges the client's calls alone, with no finding", async () => {
  const { text, seen } = await gated(searchStream([{ id: "toolu_1", input: { city: "Oslo" } }, {
    id: "toolu_2",
    input: {},
  }]));
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].findings, []);
  assert.deepEqual(seen[0].verdict.calls.map((c) => [c.id, c.allowed]), [["toolu_1", true], [
    "toolu_2",
    false,
  ]]);
  // (the server's blocks stay with the client: they are not the rejected call's)
  assert.match(text, /srvtoolu_1/);
  assert.match(text, /web_search_tool_result/);
  assert.match(text, /redacted_thinking/);
});

test("guardFetch: a Gemini stream of two candidates with the usage in every chunk ends with the whole usage after a rejected written call", async () => {
  const usage = (out: number) => ({
    promptTokenCount: 7,
    candidatesTokenCount: out,
    totalTokenCount: 7 + out,
  });
  const chunk = (candidates: unknown[], out: number) =>
    `data: ${
      JSON.stringify({ candidates, usageMetadata: usage(out), modelVersion: "g", responseId: "r" })
    }\n\n`;
  const part = (text: string, index: number, finish?: string) => ({
    content: { role: "model", parts: [{ text }] },
    index,
    ...(finish ? { finishReason: finish } : {}),
  });
  const wire = chunk([part("Let me look. ", 0)], 1) +
    chunk([{}, part("Sunny.", 1)], 2) +
    // (candidate 0's call is held; candidate 1 ends after it, with the whole usage)
    chunk([part('<tool_call>{"name": "drop_db", "arguments": {}}</tool_call>', 0, "STOP")], 3) +
    chunk([{}, part(" Warm.", 1, "STOP")], 4);
  const request = {
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    generationConfig: { candidateCount: 2 },
    tools: [{ functionDeclarations: [{ name: "weather", parameters: { type: "object" } }] }],
  };
  const { text, seen } = await through("/v1beta/models/g:streamGenerateContent?alt=sse", request, wire);
  assert.equal(seen.at(-1)?.verdict.allowed, false);
  const chunks = text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)));
  // (clients keep the last usage they read: the whole one, not the one of the chunk that held the call)
  assert.deepEqual(chunks.filter((c) => c.usageMetadata).at(-1).usageMetadata, usage(4));
  const said = (at: number) =>
    chunks.flatMap((c) => c.candidates?.[at]?.content?.parts ?? []).map((p: { text?: string }) =>
      p.text ?? ""
    )
      .join("");
  assert.equal(said(1), "Sunny. Warm.");
  assert.match(said(0), /^Let me look\. [\s\S]*drop_db/);
});

test("guardFetch: a withheld Responses stream numbers its events rising when an annotation came between the call's deltas", async () => {
  let seq = 0;
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  const text = 'Rain in Oslo. <tool_call>{"name": "drop_db", "arguments": {}}</tool_call>';
  const annotation = {
    type: "url_citation",
    start_index: 8,
    end_index: 12,
    url: "https://example.com",
    title: "Oslo",
  };
  const part = { type: "output_text", text, annotations: [annotation], logprobs: [] };
  const item = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [part] };
  const response = (status: string, output: unknown[]) => ({
    id: "resp_1",
    object: "response",
    status,
    output,
  });
  const events = [
    { type: "response.created", response: response("in_progress", []) },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    },
    { type: "response.content_part.added", ...at, part: { ...part, text: "", annotations: [] } },
    { type: "response.output_text.delta", ...at, delta: text.slice(0, 20), logprobs: [] },
    { type: "response.output_text.annotation.added", ...at, annotation_index: 0, annotation },
    { type: "response.output_text.delta", ...at, delta: text.slice(20), logprobs: [] },
    { type: "response.output_text.done", ...at, text, logprobs: [] },
    { type: "response.content_part.done", ...at, part },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: response("completed", [item]) },
  ].map((e) => ({ ...e, sequence_number: seq++ }));
  const request = { model: "m", input: "hi", stream: true, tools: [{ type: "function", name: "weather" }] };
  const { text: wire, seen } = await through("/v1/responses", request, events.map(sse).join(""));
  assert.equal(seen.at(-1)?.verdict.allowed, false);
  const read = wire.split("\n\n").filter((f) => f.includes("data: ")).map((f) =>
    JSON.parse(f.slice(f.indexOf("data: ") + 6))
  );
  const numbers = read.map((e) => e.sequence_number);
  // (the openai SDK resumes a stream after a number: one that went back would be skipped)
  assert.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]), `numbers rise: ${numbers}`);
  assert.ok(read.some((e) => e.type === "response.output_text.annotation.added"));
  assert.doesNotMatch(wire, /"drop_db", "arguments"/);
});

test("guardFetch: a Cohere stream retried twice numbers a retry's citations after one the text watch held and let go", async () => {
  // (the fuzz's seed that found it: a citation held behind JSON that named no declared tool, let go by the
  // watch, not counted as the client's; the second retry's citation took its index 0 again)
  const { differences } = await fuzzSeed("cohere", "retry", 6268);
  assert.deepEqual(differences, []);
});

// (the fuzz's seeds that found it, one or two a dialect: the last attempt said nothing, and its reason ran
// on from the earlier attempts' text with no blank line, or one too many after text ending in a line break;
// a call written into the text, cut for the retry, leaves its prose before it the client's too, and white
// space held beside native calls with a block's start goes out ahead of the retry's stream)
for (
  const [dialect, seeds] of [
    ["chat", [161, 170]],
    ["responses", [9, 81, 1700]],
    ["anthropic", [4, 87, 6163]],
    ["ollama", [20, 25]],
    ["gemini", [144]],
    ["cohere", [4, 121, 1352]],
  ] as const
) {
  test(`guardFetch: after a retry, the reason of a ${dialect} stream follows the earlier attempts' text by one blank line`, async () => {
    for (const seed of seeds) {
      const { differences } = await fuzzSeed(dialect, "retry", seed);
      assert.deepEqual(differences, [], `seed ${seed}`);
    }
  });
}

test("guardFetch: a Responses body keeps a blank part between a kept written call's part and words, as a stream does", async () => {
  // (the fuzz's seed that found it: the body dropped every blank part from the first written call on, kept
  // or cut; the stream sent the blank part with the words that followed it, before the rejected call)
  const { differences, whitespace } = await fuzzSeed("responses", "drop-call", 9072);
  assert.deepEqual([...differences, ...whitespace], []);
});

test("guardFetch: a Responses retry's text is set apart from the client's words after white space that went with a rejected written call's part", async () => {
  // (the fuzz's seed that found it: the white space before the first retry's written call, in a part of its
  // own, went with that part, but the gate counted it as the client's, and the second retry's "in cold"
  // read "weatherin cold")
  const { differences } = await fuzzSeed("responses", "retry", 19614);
  assert.deepEqual(differences, []);
});

test("guardFetch drop-call: Gemini chunks that hold a candidate's place with null keep every candidate's calls at its place", async () => {
  // (the fuzz's seeds with `oddCandidates`: a chunk of candidate 1's words and calls behind a `null`, split
  // into its words and its calls without the `null`, moved them to place 0, and drop-call, dropping by place,
  // let candidate 1's rejected `delete_everything` through there (1060); its words and finish went to
  // candidate 0 (1, 46))
  for (const [seed, mode] of [[1060, "drop-call"], [1, "retry"], [46, "withhold"]] as const) {
    const { differences } = await fuzzSeed("gemini", mode, seed, { oddCandidates: true });
    assert.deepEqual(differences, [], `seed ${seed}`);
  }
});
