/**
 * Wire details where a provider's stream can be read two ways: the gate must read each frame as the
 * official clients do (or keep it from them), so that what it judged is what they run. A BOM at the start
 * of a line, an Anthropic frame whose `event:` name the SDK routes by, Anthropic block positions that
 * disagree with their `index`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chatChunk, fakeProvider, TOOLS_OPENAI } from "./_fake_llm_server.ts";
import { sdkClients } from "./_sdk_clients.ts";

const provider = fakeProvider();
const { reply, events } = provider;
const { openai } = sdkClients(provider);
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

test("guardFetch: an SSE line that starts with a BOM is read as the SDKs read it (they drop the BOM)", async () => {
  // The whole call in one chunk whose data line is led by U+FEFF: both SDKs decode each line on its own,
  // which drops it, and read the line as data.
  const call = chatChunk({
    tool_calls: [{
      index: 0,
      id: "call_1",
      type: "function",
      function: { name: "delete_everything", arguments: "{}" },
    }],
  });
  // (in the same write as the chunk before it: Deno's TextDecoder drops a BOM that starts any read)
  const text = `data: ${JSON.stringify(chatChunk({ role: "assistant", content: "Sure" }))}\n\n`;
  const frames: unknown[] = [text + `\uFEFFdata: ${JSON.stringify(call)}\n\n`];
  frames.push(chatChunk({}, "tool_calls"), "data: [DONE]\n\n");
  reply({ sse: frames });
  const stream = await openai().chat.completions.create({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  const names: string[] = [];
  for await (const chunk of stream) {
    for (const c of chunk.choices[0]?.delta?.tool_calls ?? []) {
      if (c.function?.name) names.push(c.function.name);
    }
  }
  assert.deepEqual(names, []);
  assert.equal(events[0]?.verdict.allowed, false);
});
