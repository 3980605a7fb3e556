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
}
