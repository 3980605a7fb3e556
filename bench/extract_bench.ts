/**
 * `extractToolCalls` throughput: a 100 KB message with no call (it runs on every response; target at least
 * 50 MB/s), a 100 KB message with calls in it, and adversarial input (each marker repeated 100 000 times:
 * the time must grow linearly with the input). Case names carry the input size in MB so the reported time
 * per iteration converts to MB/s; run this file directly (`deno run -A bench/extract_bench.ts` or
 * `bun bench/extract_bench.ts`) to print MB/s for each case, and the time at half the size to show that the
 * adversarial cases are linear.
 *
 * @module
 */
import { register } from "./_harness.ts";
import { CALL_START_MARKERS, callMayStart, extractToolCalls } from "../extract.ts";

const SIZE = 100 * 1024;
const fill = (unit: string, size = SIZE) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

/** Ordinary assistant prose with the characters markers start with (`<`, `[`, `{`, a backtick, `>`). */
export const prose100kb: string = fill(
  "The quarterly report [see note 3] shows steady growth in all regions, with minor delays <b>in</b> shipping. " +
    "Costs {roughly} held flat; the team will `ship` on Monday -> review >> merge. Ask me to check the weather!\n",
);

/** The same size with a Hermes call, a Mistral call and a Python list among the prose. */
export const withCalls100kb: string = prose100kb.slice(0, SIZE / 2) +
  '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' +
  '[TOOL_CALLS]lookup[ARGS]{"id": 4}' + prose100kb.slice(0, SIZE / 2 - 200) +
  "[search(query='owls', limit=3)]";

/** Markers (and shapes) repeated 100 000 times: input built to make a naive reader quadratic. */
export const adversarial: Record<string, string> = Object.fromEntries(
  [
    "<tool_call>",
    "<tool_call>{",
    "[TOOL_CALLS]",
    "<|python_tag|>{",
    "```",
    "<function=",
    "to=",
    "[a(",
    '{"name":',
    "<think>",
    "</think>",
    "<｜tool▁call▁begin｜>",
    "<|tool_call>call:",
    '<invoke name="',
  ].map((m) => [m, m.repeat(100_000)]),
);

const mb = (chars: number) => (chars / 1e6).toFixed(2);

register([
  {
    name: `100 KB prose, no call (${mb(prose100kb.length)} MB)`,
    group: "extract",
    baseline: true,
    fn: () => extractToolCalls(prose100kb),
    minIterations: 200,
  },
  {
    name: `100 KB prose with three calls (${mb(withCalls100kb.length)} MB)`,
    group: "extract",
    fn: () => extractToolCalls(withCalls100kb),
    minIterations: 200,
  },
  {
    name: `callMayStart on 100 KB prose (${mb(prose100kb.length)} MB)`,
    group: "extract",
    fn: () => callMayStart(prose100kb),
    minIterations: 200,
  },
  ...Object.entries(adversarial).map(([marker, text]) => ({
    name: `${JSON.stringify(marker)} x 100 000 (${mb(text.length)} MB)`,
    group: "extract adversarial",
    baseline: marker === "<tool_call>",
    fn: () => extractToolCalls(text),
    minIterations: 3,
  })),
]);

if (import.meta.main) {
  const time = (fn: () => unknown, reps: number) => {
    fn();
    let best = Infinity;
    for (let i = 0; i < reps; i++) {
      const started = performance.now();
      fn();
      best = Math.min(best, performance.now() - started);
    }
    return best;
  };
  const rate = (chars: number, ms: number) => `${(chars / 1e3 / ms).toFixed(1)} MB/s`;
  const runtime = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" ? "bun" : "deno";
  console.log(`runtime: ${runtime}`);
  let ms = time(() => extractToolCalls(prose100kb), 200);
  console.log(`100 KB prose, no call: ${ms.toFixed(3)} ms = ${rate(prose100kb.length, ms)}`);
  ms = time(() => extractToolCalls(withCalls100kb), 200);
  console.log(`100 KB prose with three calls: ${ms.toFixed(3)} ms = ${rate(withCalls100kb.length, ms)}`);
  ms = time(() => callMayStart(prose100kb), 200);
  console.log(`callMayStart, 100 KB prose: ${ms.toFixed(3)} ms = ${rate(prose100kb.length, ms)}`);
  console.log("adversarial (marker x 100 000, and x 50 000 to show linear growth):");
  for (const [marker, text] of Object.entries(adversarial)) {
    const full = time(() => extractToolCalls(text), 3);
    const half = time(() => extractToolCalls(text.slice(0, text.length / 2)), 3);
    console.log(
      `  ${JSON.stringify(marker).padEnd(26)} ${full.toFixed(0).padStart(5)} ms (${
        rate(text.length, full)
      }), half: ${half.toFixed(0)} ms, ratio ${(full / half).toFixed(2)}`,
    );
  }
  let worst = 0;
  for (const m of CALL_START_MARKERS) {
    const text = m.repeat(100_000);
    worst = Math.max(worst, time(() => extractToolCalls(text), 1) / text.length * 1e3);
  }
  console.log(`every marker x 100 000: slowest ${worst.toFixed(3)} µs per character`);
}
