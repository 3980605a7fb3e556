// The stream-against-body fuzz of the gate (scripts/_gate_fuzz.ts) over a fixed set of seeds: for every
// dialect and mode, an answer streamed through the gate reads as the same answer gated whole (text,
// reasoning, refusals, the reason's place, stop reasons, calls, ids, usage), and the stream's wire holds
// together (the openai and Anthropic SDKs read it, a Responses stream's numbers rise and its `.done` events
// agree with its deltas), and the gate's events are the same data. White space is not compared: no promise covers it (see `fuzzSeed`). Hunt with
// more seeds: `deno run -A scripts/gate_fuzz.ts --from 1 --count 3000`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FUZZ_DIALECTS, FUZZ_MODES, fuzzCase, fuzzSeed } from "../scripts/_gate_fuzz.ts";

const SEEDS = Array.from({ length: 24 }, (_, i) => 1 + i);

for (const dialect of FUZZ_DIALECTS) {
  test(`gate fuzz ${dialect}: a stream reads as its body, withheld, with calls dropped and retried`, async () => {
    let rejected = 0;
    for (const mode of FUZZ_MODES) {
      for (const seed of SEEDS) {
        const result = await fuzzSeed(dialect, mode, seed);
        const first = result.differences[0];
        assert.equal(
          first,
          undefined,
          `${dialect} ${mode} seed ${seed}: ${first?.where}\n  stream ${JSON.stringify(first?.stream)}\n` +
            `  body   ${JSON.stringify(first?.body)}\n` +
            `replay: deno run -A scripts/gate_fuzz.ts --dialects ${dialect} --modes ${mode} --seed ${seed} --all`,
        );
        if (result.rejected) rejected++;
      }
    }
    // (the seeds test the rewriting: a fuzz whose answers all passed would compare two copies)
    assert.ok(rejected >= SEEDS.length, `${dialect}: only ${rejected} seeds had a call rejected`);
  });
}

test("gate fuzz: a seed gives the same answers on every run and runtime", () => {
  for (const dialect of FUZZ_DIALECTS) {
    assert.deepEqual(fuzzCase(dialect, 7), fuzzCase(dialect, 7));
    assert.notDeepEqual(fuzzCase(dialect, 7).turns, fuzzCase(dialect, 8).turns);
  }
});
