// The gate on recorded provider traffic (../shared/data/provider-traffic/): every recording replayed through
// the official clients with and without guardFetch. Skips, saying which data is missing, where it is absent.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadTraffic, type TrafficEntry } from "./_traffic.ts";
import { allowedTools, judgeEntry, renamed, replayStream, summarise } from "./_replay.ts";
import { StreamGate } from "../_gate/stream.ts";
import { ALLOWED_NONE } from "../_gate/gate.ts";
import { loadEngines } from "../_gate/engines.ts";

const traffic = loadTraffic();
const skip = traffic.ok ? false : traffic.missing;
const streams: TrafficEntry[] = traffic.ok ? traffic.streams : [];
const bodies: TrafficEntry[] = traffic.ok ? traffic.bodies : [];
const byId = (id: string) => [...streams, ...bodies].find((e) => e.id === id)!;

/** Recordings the upstream authors wrote by hand with frames no client can read (lines that are not JSON). */
const BROKEN_BY_HAND = new Set(["openai-parallel-wrapper", "anthropic-spliced"]);

if (!traffic.ok) test("guardFetch replay: the recorded provider traffic", { skip }, () => {});

// One test per recording: the allowed replay, and (for recordings with client calls) the rejected one.
for (
  const [entry, kind] of [
    ...streams.map((e) => [e, "stream"] as const),
    ...bodies.map((e) => [e, "body"] as const),
  ]
) {
  test(`guardFetch replay: ${entry.id} (${entry.provider}, ${kind})`, async () => {
    const row = await judgeEntry(entry, kind);
    if (!BROKEN_BY_HAND.has(entry.id)) {
      // The same bytes, SDK events and final object as without the gate.
      assert.deepEqual(row.allowed, { bytes: true, events: true, final: true });
    }
    if (row.rejected) {
      // Every call withheld; text (the reason appended), reasoning and usage as without the gate.
      const { codes: _codes, ...kept } = row.rejected;
      assert.deepEqual(kept, { withheld: true, text: true, reasoning: true, usage: true });
    }
  });
}

test(
  "guardFetch replay: usage sent with finish_reason tool_calls survives a rejection (Groq, Mistral, DeepSeek)",
  {
    skip,
  },
  async () => {
    for (const id of ["mistral-tool-call", "groq-tool-call", "deepseek-tool-call"]) {
      const entry = byId(id);
      const { tools } = allowedTools(entry, true);
      const plain = await replayStream({ entry, tools, guard: false });
      const gated = await replayStream({ entry, tools: renamed(tools), guard: true });
      const before = summarise(entry, plain.final, plain.events);
      const after = summarise(entry, gated.final, gated.events);
      assert.equal(gated.verdicts[0].verdict.allowed, false, id);
      assert.deepEqual(after.calls, [], id);
      assert.notEqual(before.usage, null, id);
      assert.deepEqual(after.usage, before.usage, id);
      assert.deepEqual(after.reasoning, before.reasoning, id);
      assert.equal(
        (gated.final as { choices: { finish_reason: string }[] }).choices[0].finish_reason,
        "stop",
        id,
      );
    }
  },
);

test(
  "guardFetch replay: per-token logprobs and system_fingerprint survive a pass-through",
  { skip },
  async () => {
    for (
      const tools of [[], [{
        type: "function",
        function: { name: "lookup", parameters: { type: "object" } },
      }]]
    ) {
      const entry = byId("openai-node-json-logprobs");
      const plain = await replayStream({ entry, tools, guard: false });
      const gated = await replayStream({ entry, tools, guard: true });
      assert.equal(gated.bytes, plain.bytes);
      assert.deepEqual(gated.final, plain.final);
      const lp = (gated.final as { choices: { logprobs: { content: unknown[] } }[] }).choices[0].logprobs;
      assert.ok(lp.content.length > 5);
    }
  },
);

/** Pushes SSE frames through a StreamGate one at a time; returns what came out after each, then at the end. */
async function through(frames: string[], toolsDeclared: boolean): Promise<string[]> {
  // The gate loads its engines on first use; on a cold start (a fresh clone, nothing cached) that takes longer
  // than the pause between frames below, which is about holding text, not loading code.
  await loadEngines();
  const gate = new StreamGate("openai_chat", {
    toolsDeclared,
    judge: () => ({ verdict: ALLOWED_NONE, reason: "" }),
  });
  let source!: ReadableStreamDefaultController<Uint8Array>;
  const gated = gate.gate(new ReadableStream<Uint8Array>({ start: (c) => void (source = c) }));
  const dec = new TextDecoder();
  const got: string[] = [];
  const reading = (async () => {
    for await (const c of gated) got.push(dec.decode(c));
  })();
  const out: string[] = [];
  for (const f of frames) {
    source.enqueue(new TextEncoder().encode(f));
    await new Promise((r) => setTimeout(r, 1));
    out.push(got.splice(0).join(""));
  }
  source.close();
  await reading;
  out.push(got.splice(0).join(""));
  return out;
}

const chunk = (content: string) =>
  `data: ${
    JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })
  }\n\n`;

test("StreamGate: a message opening with JSON flows at once when the request declares no tools", async () => {
  const frames = [chunk('{"'), chunk("city"), chunk('": "Oslo"}')];
  const out = await through(frames, false);
  assert.deepEqual(out.slice(0, 3), frames);
});

test("StreamGate: with tools, JSON text is held only until its first key shows it is not a call", async () => {
  const frames = [chunk('{"'), chunk("ci"), chunk('ty": "Oslo"}')];
  const out = await through(frames, true);
  assert.equal(out[0], ""); // `{"` may still become {"name": ...}
  assert.equal(out[1], frames[0] + frames[1]); // "ci" is no call key's start: released as it came
  assert.equal(out[2], frames[2]);
});

test("StreamGate: a frame whose text ends in a marker's start waits for the next and goes out as it came", async () => {
  const frames = [chunk("see a <"), chunk("b> tag")];
  const out = await through(frames, true);
  assert.equal(out[0], "");
  assert.equal(out[1], frames[0] + frames[1]);
});
