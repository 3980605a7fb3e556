/**
 * Scanner throughput: the labelled dev data (every row scanned with its own context) and adversarial text
 * built to make backtracking regular expressions blow up. Case names carry the input size in MB so the
 * reported time per iteration converts to MB/s; run this file directly
 * (`deno run -A bench/scan_bench.ts` or `bun bench/scan_bench.ts`) to print MB/s for each case.
 *
 * @module
 */
import { register } from "./_harness.ts";
import { scan } from "../scan.ts";
import { loadRows, type Row } from "../scripts/eval.ts";

const rows: Row[] = [];
for (const list of loadRows().values()) rows.push(...list);
const devChars = rows.reduce((n, r) => n + r.text.length, 0);

const SIZE = 256 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
/** Inputs that defeat naive rules: near-matches, repeated prefixes, unclosed brackets, hidden characters. */
export const adversarial: Record<string, string> = {
  "near-miss override": fill("ignore all previous "),
  "imperative, no object": fill("please send my "),
  "unclosed markdown": fill("![a](http://x.co/?a="),
  "letter-spaced": fill("i g n o r e "),
  "homoglyph words": fill("іgnоrе аll рrеvіоus "),
  "zero-width": fill("\u200B"),
  "chat-token prefixes": fill("<|im_"),
  "prose": fill("The quarterly report shows steady growth in all regions, with minor delays. "),
};

const mb = (chars: number) => (chars / 1e6).toFixed(2);

/** Short benign argument values as a model writes them, scanned the way `validate()` scans arguments. */
export const shortArgs: readonly string[] = [
  "Berlin",
  "2026-12-01",
  "find all TODO comments in src",
  "alice@example.com",
  "src/main.ts",
  "What is the weather like in Paris tomorrow?",
  "42",
  "Meeting notes: discuss Q3 budget - follow up with Bob",
];
const shortChars = shortArgs.reduce((n, s) => n + s.length, 0);

/**
 * Ten megabytes of ordinary prose: varied sentences with the everyday words several rules key on ("you",
 * "your", "my", "before", "task", "data", "file", numbers, an e-mail address), none of them an injection.
 */
const PROSE_UNIT =
  "The quarterly report shows steady growth in all regions, with minor delays in shipping. " +
  "Our team reviewed the budget on Monday, 12 May 2025, and agreed to hire two engineers before the end of the year. " +
  "If you have questions about your invoice, my colleague in accounting can help; the data file is attached. " +
  "Customers asked for better documentation, so the writers will publish a new guide in March. " +
  "Each task on the board has an owner, and the rules for code review have not changed.\n" +
  "Contact: support@example.com. The model we ship is tested by an agent team every week.\n";
/** `PROSE_UNIT` repeated to exactly ten million characters. */
export const prose10mb: string = PROSE_UNIT.repeat(Math.ceil(10_000_000 / PROSE_UNIT.length)).slice(
  0,
  10_000_000,
);

function scanShort(): number {
  let n = 0;
  for (const s of shortArgs) n += scan(s, { context: "tool_args" }).findings.length;
  return n;
}

function scanDev(): number {
  let n = 0;
  for (const r of rows) n += scan(r.text, { context: r.context }).findings.length;
  return n;
}

register([
  {
    name: `dev data, ${rows.length} rows (${mb(devChars)} MB)`,
    group: "scan",
    baseline: true,
    fn: scanDev,
    minIterations: 3,
  },
  ...Object.entries(adversarial).map(([name, text]) => ({
    name: `${name} (${mb(text.length)} MB)`,
    group: "scan",
    fn: () => scan(text),
    minIterations: 5,
  })),
  {
    name: `${shortArgs.length} short benign args, tool_args (${shortChars} chars)`,
    group: "scan short args",
    baseline: true,
    fn: scanShort,
    minIterations: 1000,
  },
  {
    name: `"Berlin", tool_args`,
    group: "scan short args",
    fn: () => scan("Berlin", { context: "tool_args" }),
    minIterations: 1000,
  },
  {
    name: `prose, tool_output (${mb(prose10mb.length)} MB)`,
    group: "scan 10 MB prose",
    baseline: true,
    fn: () => scan(prose10mb),
    minIterations: 2,
  },
  {
    name: `prose, tool_args (${mb(prose10mb.length)} MB)`,
    group: "scan 10 MB prose",
    fn: () => scan(prose10mb, { context: "tool_args" }),
    minIterations: 2,
  },
]);

if (import.meta.main) {
  const time = (fn: () => unknown, reps: number) => {
    fn();
    const started = performance.now();
    for (let i = 0; i < reps; i++) fn();
    return (performance.now() - started) / reps;
  };
  const ms = time(scanDev, 3);
  console.log(
    `dev data: ${mb(devChars)} M chars in ${ms.toFixed(0)} ms = ${
      (devChars / 1e3 / ms).toFixed(2)
    } M chars/s`,
  );
  for (const [name, text] of Object.entries(adversarial)) {
    const t = time(() => scan(text), 3);
    console.log(`${name}: ${(text.length / 1e3 / t).toFixed(2)} M chars/s`);
  }
  const shortMs = time(scanShort, 20000);
  console.log(`short args: ${(shortMs * 1e3 / shortArgs.length).toFixed(3)} µs per argument`);
  const proseMs = time(() => scan(prose10mb), 2);
  console.log(`10 MB prose: ${(prose10mb.length / 1e3 / proseMs).toFixed(2)} M chars/s`);
}
