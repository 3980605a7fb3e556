// Parallel calls: by default one rejected call withholds the whole turn; with onRejected "drop-call" only
// the rejected calls are removed and the valid ones still reach the client.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { gateCompletion, type GateEvent, guardFetch } from "../gate.ts";
import {
  anthropicMessage,
  anthropicStream,
  chatCompletion,
  chatStream,
  type FakeReply,
  type FakeServer,
  ollamaChat,
  responsesBody,
  responsesStream,
  startFakeLlmServer,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  TOOLS_RESPONSES,
} from "./_fake_llm_server.ts";

const BAD = { name: "delete_everything", args: {} };
const GOOD = { name: "get_weather", args: { city: "Oslo" } };

test("gateCompletion: by default one rejected call withholds every call of the turn", async () => {
  const gated = await gateCompletion({ tools: TOOLS_OPENAI }, chatCompletion(null, [BAD, GOOD]));
  const choice = (gated.response as ReturnType<typeof chatCompletion>).choices as Record<string, unknown>[];
  assert.equal((choice[0].message as Record<string, unknown>).tool_calls, undefined);
  assert.equal(choice[0].finish_reason, "stop");
});

test("gateCompletion: drop-call keeps the valid calls of every dialect's body and says what was removed", async () => {
  const options = { onRejected: "drop-call" as const };
  const names = (calls: unknown[] | undefined) =>
    (calls ?? []).map((c) => {
      const r = c as Record<string, Record<string, unknown>>;
      return r.function?.name ?? r.name ?? r.functionCall?.name;
    });

  const chat = (await gateCompletion({ tools: TOOLS_OPENAI }, chatCompletion(null, [BAD, GOOD]), options))
    .response as {
      choices: { message: { tool_calls: unknown[]; content: string }; finish_reason: string }[];
    };
  assert.deepEqual(names(chat.choices[0].message.tool_calls), ["get_weather"]);
  assert.equal(chat.choices[0].finish_reason, "tool_calls");
  assert.match(chat.choices[0].message.content, /removed[\s\S]*delete_everything/);

  const resp = (await gateCompletion({ tools: TOOLS_RESPONSES }, responsesBody(null, [BAD, GOOD]), options))
    .response as { output: Record<string, unknown>[] };
  assert.deepEqual(resp.output.map((o) => o.type === "function_call" ? o.name : o.type), [
    "get_weather",
    "message",
  ]);

  const anth =
    (await gateCompletion({ tools: TOOLS_ANTHROPIC }, anthropicMessage("On it.", [BAD, GOOD]), options))
      .response as { content: Record<string, unknown>[]; stop_reason: string };
  assert.deepEqual(anth.content.map((b) => b.type === "tool_use" ? b.name : b.type), [
    "text",
    "get_weather",
    "text",
  ]);
  assert.equal(anth.stop_reason, "tool_use");

  const oll = (await gateCompletion({ tools: TOOLS_OPENAI }, ollamaChat("", [BAD, GOOD]), options))
    .response as { message: { tool_calls: unknown[] } };
  assert.deepEqual(names(oll.message.tool_calls), ["get_weather"]);

  const gem = (await gateCompletion({ tools: [{ functionDeclarations: TOOLS_RESPONSES }] }, {
    candidates: [{
      content: {
        role: "model",
        parts: [{ functionCall: { name: BAD.name, args: {} } }, {
          functionCall: { name: GOOD.name, args: GOOD.args },
        }],
      },
      finishReason: "STOP",
    }],
  }, options)).response as {
    candidates: { content: { parts: Record<string, Record<string, unknown>>[] } }[];
  };
  assert.deepEqual(
    gem.candidates[0].content.parts.map((p) => p.functionCall?.name ?? "text"),
    ["text", "get_weather"],
  );

  const co = (await gateCompletion({ tools: TOOLS_OPENAI }, {
    id: "c",
    finish_reason: "TOOL_CALL",
    message: {
      role: "assistant",
      tool_calls: [BAD, GOOD].map((c, i) => ({
        id: `t${i}`,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    },
  }, options)).response as { finish_reason: string; message: { tool_calls: unknown[] } };
  assert.deepEqual(names(co.message.tool_calls), ["get_weather"]);
  assert.equal(co.finish_reason, "TOOL_CALL");
});

test("gateCompletion: drop-call withholds the turn when every call is rejected", async () => {
  const gated = await gateCompletion({ tools: TOOLS_OPENAI }, chatCompletion(null, [BAD, BAD]), {
    onRejected: "drop-call",
  });
  const choice = (gated.response as { choices: Record<string, unknown>[] }).choices[0];
  assert.equal(choice.finish_reason, "stop");
  assert.match(
    String((choice.message as Record<string, unknown>).content),
    /^toolguard stopped this turn's tool calls\.\n2 of 2 calls were rejected; none of the rejected calls ran\./,
  );
});

// ---------------------------------------------------------------------------------------------------------
// Streams, through the official clients
// ---------------------------------------------------------------------------------------------------------

let next: FakeReply = { json: {} };
let server: FakeServer;
const seen: GateEvent[] = [];
const gfetch = guardFetch(fetch, { onRejected: "drop-call", onVerdict: (e) => seen.push(e) });
before(async () => {
  server = await startFakeLlmServer(() => next);
});
after(async () => {
  await server.close();
});
const reply = (r: FakeReply) => {
  next = r;
  seen.length = 0;
};
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

test("guardFetch drop-call: an OpenAI chat stream keeps the valid call, renumbered, and finishes tool_calls", async () => {
  reply({ sse: chatStream(["Checking. "], [BAD, GOOD]) });
  const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: gfetch, maxRetries: 0 });
  const stream = client.chat.completions.stream({ model: "m", messages, tools: TOOLS_OPENAI as never });
  const final = await stream.finalChatCompletion();
  const calls = final.choices[0].message.tool_calls ?? [];
  assert.deepEqual(
    calls.map((c) => c.type === "function" ? [c.function.name, JSON.parse(c.function.arguments)] : null),
    [["get_weather", { city: "Oslo" }]],
  );
  assert.equal(final.choices[0].finish_reason, "tool_calls");
  assert.match(final.choices[0].message.content ?? "", /^Checking\. [\s\S]*delete_everything/);
  assert.equal(seen[0].changed, true);
});

test("guardFetch drop-call: an Anthropic stream keeps the valid tool_use block and stops for tool_use", async () => {
  reply({ sse: anthropicStream(["Checking."], [BAD, GOOD]), named: true });
  const client = new Anthropic({ apiKey: "k", baseURL: server.url, fetch: gfetch, maxRetries: 0 });
  const final = await client.messages.stream({
    model: "m",
    max_tokens: 100,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  }).finalMessage();
  assert.deepEqual(
    final.content.map((b) => b.type === "tool_use" ? [b.name, b.input] : [b.type]),
    [["text"], ["get_weather", { city: "Oslo" }], ["text"]],
  );
  assert.equal(final.stop_reason, "tool_use");
});

test("guardFetch drop-call: a Responses stream keeps the valid function_call; indices and sequence numbers stay whole", async () => {
  reply({ sse: responsesStream(["Checking."], [BAD, GOOD]), named: true });
  const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: gfetch, maxRetries: 0 });
  const stream = client.responses.stream({ model: "m", input: "hi", tools: TOOLS_RESPONSES as never });
  const events: { type: string; sequence_number: number; output_index?: number }[] = [];
  for await (const e of stream) events.push(e as never);
  const final = await stream.finalResponse();
  assert.deepEqual(final.output.map((o) => o.type === "function_call" ? o.name : o.type), [
    "message",
    "get_weather",
    "message",
  ]);
  const seqs = events.map((e) => e.sequence_number);
  assert.deepEqual(seqs, seqs.map((_, i) => i));
  assert.deepEqual(events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index), [
    0,
    1,
    2,
  ]);
});
