/**
 * The scanner's in-process A/B: two checkouts' `scan()` imported into one process and timed on the cases of
 * `bench/scan_bench.ts` (the dev rows, their benign rows, whole and in 4 KiB chunks; 2 MB of prose; short
 * arguments; every text of `scanTexts` and `webTexts`, whole and in chunks), interleaved case by case with the
 * order of the two alternating, in process CPU time; per case the median speed of each in M chars/s and B's
 * speed over A's.
 * On a busy machine this tells a few per cent apart where two bench runs cannot: both trees meet the same load.
 *
 * Both runtimes favour the tree imported second by a few per cent (Bun up to 10%): run each comparison twice,
 * with the trees swapped, and take the geometric mean of the two ratios. On Bun also run it with
 * `BUN_JSC_useConcurrentJIT=false`, where background compiling made two-tree processes randomly slower on
 * some cases. Findings are not compared here: `scripts/scan_identity.ts` does that.
 *
 * Usage: `deno run -A scripts/scan_ab.ts A B [--rounds 21] [--only REGEX]` or `bun scripts/scan_ab.ts …`, where
 * A and B are checkouts (e.g. `git archive BASE | tar -x -C /tmp/base`, with `node_modules` linked).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { scriptArgs } from "./_args.ts";
import { cpuMs, median } from "../bench/_harness.ts";
import { chunks, prose10mb, scanTexts, shortArgs, webTexts } from "../bench/scan_bench.ts";
import { DEV_DIR, loadRows, type Row } from "./eval.ts";
import type { ScanContext, ScanResult } from "../types.ts";

/** A checkout's `scan`. */
type Scan = (text: string, options: { context: ScanContext }) => ScanResult;

/** One timed case: its name, the characters it scans, and a run that returns the findings count. */
interface Case {
  name: string;
  chars: number;
  run: (scan: Scan) => number;
}

/** Every row scanned on its own, in its own context. */
function rowsCase(name: string, rows: readonly Row[]): Case {
  return {
    name,
    chars: rows.reduce((n, r) => n + r.text.length, 0),
    run: (scan) => rows.reduce((n, r) => n + scan(r.text, { context: r.context }).findings.length, 0),
  };
}

/** `text` scanned whole as tool output. */
function wholeCase(name: string, text: string): Case {
  return { name, chars: text.length, run: (scan) => scan(text, { context: "tool_output" }).findings.length };
}

/** `text` scanned as tool output in 4 KiB chunks, one `scan()` each. */
function chunkCase(name: string, text: string): Case {
  const pieces = chunks(text);
  return {
    name: `${name} 4K`,
    chars: text.length,
    run: (scan) => pieces.reduce((n, c) => n + scan(c, { context: "tool_output" }).findings.length, 0),
  };
}

/** The cases of `bench/scan_bench.ts`. */
function cases(): Case[] {
  const rows = existsSync(DEV_DIR) ? [...loadRows().values()].flat() : [];
  const benign = rows.filter((r) => r.label === "benign");
  const prose = prose10mb.slice(0, 2_000_000);
  const args = shortArgs.reduce((n, s) => n + s.length, 0);
  const out = [
    rowsCase("benign rows", benign),
    chunkCase("benign", benign.map((r) => r.text).join("\n")),
    rowsCase("all dev rows", rows),
    wholeCase("prose 2M", prose),
    chunkCase("prose 2M", prose),
    {
      name: "8 short args x200",
      chars: args * 200,
      run: (scan: Scan) => {
        let n = 0;
        for (let i = 0; i < 200; i++) {
          for (const s of shortArgs) n += scan(s, { context: "tool_args" }).findings.length;
        }
        return n;
      },
    },
  ];
  // without ../shared the dev-row cases have nothing to scan (bench/scan_bench.ts says so when imported)
  if (rows.length === 0) out.splice(0, 3);
  for (const [name, text] of Object.entries({ ...scanTexts, ...webTexts })) {
    out.push(wholeCase(name, text), chunkCase(name, text));
  }
  return out;
}

const USAGE = "usage: scan_ab.ts A B [--rounds 21] [--only REGEX] (A and B: checkouts of the project)";
const { values, positionals } = scriptArgs(USAGE, {
  allowPositionals: true,
  options: { rounds: { type: "string", default: "21" }, only: { type: "string", default: "" } },
});
if (positionals.length !== 2) {
  console.error(USAGE);
  process.exit(2);
}
const rounds = Number(values.rounds);
const scans: Scan[] = [];
for (const root of positionals) scans.push((await import(pathToFileURL(resolve(root, "scan.ts")).href)).scan);
const only = new RegExp(values.only!);
const chosen = cases().filter((c) => only.test(c.name));
const times = chosen.map(() => [[], []] as number[][]);
for (const c of chosen) for (const scan of scans) c.run(scan); // warm both before timing either
for (let r = 0; r < rounds; r++) {
  chosen.forEach((c, i) => {
    const first = (r + i) % 2;
    for (const k of [first, 1 - first]) {
      const start = cpuMs();
      c.run(scans[k]);
      times[i][k].push(cpuMs() - start);
    }
  });
}
console.log(`A=${positionals[0]} B=${positionals[1]} rounds=${rounds} (M chars/s, medians of CPU time)`);
chosen.forEach((c, i) => {
  const [a, b] = times[i].map(median);
  const speed = (ms: number) => (c.chars / 1e3 / ms).toFixed(1).padStart(7);
  console.log(`${c.name.padEnd(28)} A ${speed(a)}  B ${speed(b)}  B/A x${(a / b).toFixed(3)}`);
});
