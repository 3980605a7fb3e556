/**
 * Hunts for differences between what a client reads from a gated stream and from the same answer gated as
 * one body (see `_gate_fuzz.ts`): runs a range of seeds over dialects and modes, prints the first difference
 * of each failing seed and a count per dialect and mode.
 *
 * ```sh
 * deno run -A scripts/gate_fuzz.ts --dialects chat,gemini --modes withhold --from 1 --count 500
 * deno run -A scripts/gate_fuzz.ts --dialects cohere --modes retry --seed 1234 --all   # replay one seed
 * deno run -A scripts/gate_fuzz.ts --from 46001 --count 2000 --exact --empty-deltas
 * deno run -A scripts/gate_fuzz.ts --dialects gemini --from 70001 --count 500 --odd-candidates
 * deno run -A scripts/gate_fuzz.ts --dialects chat,anthropic --from 1 --count 500 --shared-places
 * ```
 *
 * @module
 */
import process from "node:process";
import { scriptArgs } from "./_args.ts";
import {
  debugSeed,
  FUZZ_DIALECTS,
  FUZZ_MODES,
  fuzzCase,
  type FuzzDialect,
  type FuzzMode,
  fuzzSeed,
} from "./_gate_fuzz.ts";

const USAGE =
  `usage: gate_fuzz.ts [--dialects a,b] [--modes m,n] [--from N] [--count N] [--seed N] [--all] [--exact] [--empty-deltas] [--odd-candidates] [--shared-places] [--show] [--dump]
  --dialects  ${FUZZ_DIALECTS.join(",")} (default all)
  --modes     ${FUZZ_MODES.join(",")} (default all)
  --from, --count  the seed range (default 1, 200); --seed N runs that one seed
  --all       print every difference of a failing seed, not only the first
  --exact     count differences in white space alone as failures too
  --empty-deltas  put empty text deltas among a stream's text, and part some written calls from the words
              before them (drawn apart: a seed's other frames stay)
  --odd-candidates  Gemini candidates name an index other than their place at times, chunks hold the
              places before a candidate with null, and a call comes in the chunk of the words before it
              (drawn apart likewise)
  --shared-places  Chat calls reuse the index of the call before them under their own id, Anthropic blocks
              start with another input than their deltas stream (drawn apart likewise); no body holds such
              calls, so the stream is checked against itself: stops, the calls a reason leaves, and the
              follow-ups' calls against their tool results
  --show      print the seed's generated turns
  --dump      print what the client read streamed and whole, and the gate's events`;

if (import.meta.main) {
  const { values } = scriptArgs(USAGE, {
    options: {
      dialects: { type: "string", default: FUZZ_DIALECTS.join(",") },
      modes: { type: "string", default: FUZZ_MODES.join(",") },
      from: { type: "string", default: "1" },
      count: { type: "string", default: "200" },
      seed: { type: "string" },
      all: { type: "boolean", default: false },
      exact: { type: "boolean", default: false },
      "empty-deltas": { type: "boolean", default: false },
      "odd-candidates": { type: "boolean", default: false },
      "shared-places": { type: "boolean", default: false },
      show: { type: "boolean", default: false },
      dump: { type: "boolean", default: false },
    },
  });
  const dialects = values.dialects.split(",") as FuzzDialect[];
  const modes = values.modes.split(",") as FuzzMode[];
  const from = Number(values.seed ?? values.from), count = values.seed ? 1 : Number(values.count);
  const wrong = [
    ...dialects.filter((d) => !FUZZ_DIALECTS.includes(d)).map((d) => `no dialect ${JSON.stringify(d)}`),
    ...modes.filter((m) => !FUZZ_MODES.includes(m)).map((m) => `no mode ${JSON.stringify(m)}`),
    ...(Number.isInteger(from) && Number.isInteger(count) && count > 0 ? [] : ["seeds are whole numbers"]),
  ];
  if (wrong.length > 0) {
    console.error(`gate_fuzz: ${wrong.join("; ")}\n${USAGE}`);
    process.exit(2);
  }
  let failed = 0;
  for (const dialect of dialects) {
    for (const mode of modes) {
      const bad: number[] = [], ws: number[] = [];
      let skipped = 0, rejected = 0;
      for (let seed = from; seed < from + count; seed++) {
        const options = {
          emptyDeltas: values["empty-deltas"],
          oddCandidates: values["odd-candidates"],
          sharedPlaces: values["shared-places"],
        };
        if (values.show) console.log(JSON.stringify(fuzzCase(dialect, seed, options), null, 1));
        if (values.dump) console.log(JSON.stringify(await debugSeed(dialect, mode, seed, options), null, 1));
        const result = await fuzzSeed(dialect, mode, seed, options);
        const { differences, whitespace } = result;
        if (result.skipped) skipped++;
        if (result.rejected) rejected++;
        const shown = values.exact ? [...differences, ...whitespace] : differences;
        if (whitespace.length) ws.push(seed);
        if (!shown.length) continue;
        bad.push(seed);
        for (const d of values.all ? shown : shown.slice(0, 1)) {
          console.log(
            `${dialect} ${mode} ${seed}: ${d.where}\n  stream ${JSON.stringify(d.stream)}\n  body   ${
              JSON.stringify(d.body)
            }`,
          );
        }
      }
      failed += bad.length;
      console.log(
        `== ${dialect} ${mode}: ${bad.length} of ${count} differ [${
          bad.join(" ")
        }] (${rejected} with a call ` +
          `rejected, ${skipped} differing by design); white space alone: ${ws.length} [${
            ws.slice(0, 20).join(" ")
          }]`,
      );
    }
  }
  process.exit(failed ? 1 : 0);
}
