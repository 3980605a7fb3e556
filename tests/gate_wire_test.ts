/**
 * Wire details where a provider's stream can be read two ways: the gate must read each frame as the
 * official clients do (or keep it from them), so that what it judged is what they run. A BOM at the start
 * of a line, an Anthropic frame whose `event:` name the SDK routes by, Anthropic block positions that
 * disagree with their `index`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  anthropicStream,
  chatChunk,
  fakeProvider,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
} from "./_fake_llm_server.ts";
import { sdkClients } from "./_sdk_clients.ts";

const provider = fakeProvider();
const { reply, events } = provider;
const { openai, anthropic } = sdkClients(provider);
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

/** An SSE frame of `event` as Anthropic writes it: named by its type. */
const named = (event: Record<string, unknown>) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** An Anthropic stream of one `get_weather` call: `start`, then `deltas`, then the ending (frames as sent). */
function anthropicCall(start: Record<string, unknown>, deltas: string[]): string[] {
  const [head] = anthropicStream([]) as Record<string, unknown>[];
  return [
    named(head),
    named(start),
    ...deltas,
    named({ type: "content_block_stop", index: start.index }),
    named({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 2 },
    }),
    named({ type: "message_stop" }),
  ];
}
const toolStart = (index: unknown) => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} },
});
const inputDelta = (index: unknown, partial_json: string) => ({
  type: "content_block_delta",
  index,
  delta: { type: "input_json_delta", partial_json },
});

/** The tool_use inputs the Anthropic SDK's stream helper ends with. */
async function anthropicInputs(): Promise<unknown[]> {
  const final = await anthropic().messages.stream({
    model: "m",
    max_tokens: 100,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  }).finalMessage();
  return final.content.flatMap((b) => (b.type === "tool_use" ? [b.input] : []));
}

/** `units: "k"` is outside get_weather's enum: a client must never end with it unjudged. */
const BAD = '{"city":"Oslo","units":"k"';

test("guardFetch: an Anthropic frame the SDK skips by its event: name (none, ping) is not read by the gate either", async () => {
  // The SDK reads BAD + "}"; a gate that also read the skipped frame judged a second "units" (the last wins).
  const skipped = JSON.stringify(inputDelta(0, ',"units":"c"'));
  for (const frame of [`data: ${skipped}\n\n`, `event: ping\ndata: ${skipped}\n\n`]) {
    reply({
      sse: anthropicCall(toolStart(0), [named(inputDelta(0, BAD)), frame, named(inputDelta(0, "}"))]),
    });
    assert.deepEqual(await anthropicInputs(), [], frame);
    assert.equal(events[0]?.verdict.allowed, false, frame);
  }
});

test("guardFetch: an Anthropic block whose index is not where the SDK puts it is dropped with its deltas", async () => {
  // The SDK appends the block (position 0) and feeds it the delta at index 0; the gate keyed it by index 1.
  reply({
    sse: anthropicCall(toolStart(1), [
      named(inputDelta(0, BAD + "}")),
      named(inputDelta(1, '{"city":"Oslo"}')),
    ]),
  });
  assert.deepEqual(await anthropicInputs(), []);
  assert.ok(events[0]?.findings.some((f) => /content_block_start at index 1/.test(f.message)));
});

test('guardFetch: an Anthropic delta at index "0" (a string: block 0 to the SDK) is dropped', async () => {
  reply({
    sse: anthropicCall(toolStart(0), [
      named(inputDelta(0, '{"city":"Oslo"')),
      named(inputDelta("0", ',"units":"k"')),
      named(inputDelta(0, "}")),
    ]),
  });
  assert.deepEqual(await anthropicInputs(), [{ city: "Oslo" }]);
  assert.equal(events[0]?.verdict.allowed, true);
});
