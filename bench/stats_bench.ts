/**
 * Lines per second of `toolguard stats`: 20 000 synthetic log lines per iteration, as text lines
 * (`createStats().addLine`, JSON parsing and counting only) and as bytes (`statsFromChunks`, adding line
 * splitting and UTF-8 decoding, as when reading a file). Lines/s = 20 000 / time per iteration.
 *
 * @module
 */
import { register } from "./_harness.ts";
import { createStats, statsFromChunks } from "../stats.ts";
import { syntheticLines } from "../scripts/gen_log.ts";

const LINES = 20_000;
const lines = [...syntheticLines(LINES, { seed: 11, days: 30, malformedEvery: 1000 })];
const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
const chunks: Uint8Array[] = [];
for (let i = 0; i < bytes.length; i += 64 * 1024) chunks.push(bytes.subarray(i, i + 64 * 1024));

register([
  {
    name: `stats: ${LINES} lines as text (addLine)`,
    group: "stats",
    baseline: true,
    minIterations: 5,
    fn: () => {
      const s = createStats({ by: "tool" });
      for (const line of lines) s.addLine(line);
      return s.finish();
    },
  },
  {
    name: `stats: ${LINES} lines as bytes (statsFromChunks, 64 KiB chunks)`,
    group: "stats",
    minIterations: 5,
    // An async function, so Deno.bench awaits each run instead of timing only its synchronous start.
    fn: async () => await statsFromChunks(chunks, { by: "day" }),
  },
]);
