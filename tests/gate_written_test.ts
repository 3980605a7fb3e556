// Calls a model writes into its text are judged wherever the text comes: in OpenAI Chat answers whose
// content comes as parts. A stream whose text holds no call passes byte for byte. Driven through the official
// clients against a local server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chatCompletion, chatStream, fakeProvider, TOOLS_OPENAI } from "./_fake_llm_server.ts";
import { sdkClients } from "./_sdk_clients.ts";

const provider = fakeProvider();
const { openai } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** A call to a tool the request does not declare, written into the text as a local model writes it. */
const WRITTEN_BAD = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>';
const WRITTEN_GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';

test("guardFetch Chat: a call written into content given as parts is judged and cut", async () => {
  const answer = chatCompletion(null);
  const message = (answer.choices as Record<string, Record<string, unknown>>[])[0].message;
  message.content = [{ type: "text", text: "Sure.\n" }, { type: "text", text: WRITTEN_BAD }];
  provider.reply({ json: answer });
  const got = await openai().chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never });
  const content = JSON.stringify(got.choices[0].message.content);
  assert.doesNotMatch(content, /<tool_call>/);
  assert.match(content, /^"Sure\.\\n\\n/);
  assert.match(content, /delete_everything/); // named in the reason
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
