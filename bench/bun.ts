/**
 * Runs every `bench/*_bench.ts` case under the current runtime without `Deno.bench` (made for Bun):
 * `bun run bench/bun.ts [filter]`. Prints mean time per call and the ratio to the group's baseline; the
 * validator cases (bench/validate_bench.ts) are timed by bench/_validate_compare.ts instead (interleaved
 * rounds, medians of CPU time, toolguard with and without the scanner against ajv with and without
 * `verbose`), and the guard's overhead also by `scripts/measure_guard.ts overhead` (interleaved rounds of raw
 * spawn and `runTool`, medians), in a process of its own.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BenchCase, collected } from "./_harness.ts";
import { compareFromEnv } from "./_validate_compare.ts";

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? "";
/** The validator cases, compared on their own at the end. */
let validatorCases: readonly BenchCase[] = [];
for (const file of readdirSync(here).filter((f) => f.endsWith("_bench.ts")).sort()) {
  if (filter && !file.includes(filter)) continue;
  const module = await import(join(here, file));
  if (file === "validate_bench.ts") validatorCases = module.cases;
}

async function timeCase(c: BenchCase): Promise<number> {
  const warmup = Math.max(3, Math.floor((c.minIterations ?? 20) / 5));
  for (let i = 0; i < warmup; i++) await c.fn();
  const budgetMs = 1000;
  let iterations = 0;
  const start = performance.now();
  while (iterations < (c.minIterations ?? 20) || performance.now() - start < budgetMs) {
    await c.fn();
    iterations++;
    if (iterations > 1_000_000) break;
  }
  return (performance.now() - start) / iterations;
}

function format(ms: number): string {
  if (ms < 0.001) return `${(ms * 1e6).toFixed(1)} ns`;
  if (ms < 1) return `${(ms * 1e3).toFixed(2)} µs`;
  return `${ms.toFixed(2)} ms`;
}

const groups = new Map<string, BenchCase[]>();
for (const c of collected) {
  if (!validatorCases.includes(c)) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
}
const runtime = typeof (globalThis as { Bun?: { version: string } }).Bun !== "undefined"
  ? `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `node ${process.version}`;
console.log(`runtime: ${runtime}`);
// per library (a case named "<library> <group>"): its speed relative to the group's baseline, in each group
const speedups = new Map<string, number[]>();
for (const [group, cases] of groups) {
  console.log(`\ngroup ${group}`);
  const times = new Map<BenchCase, number>();
  for (const c of cases) times.set(c, await timeCase(c));
  const base = cases.find((c) => c.baseline);
  for (const c of cases) {
    if (!base || !c.name.endsWith(` ${group}`)) continue;
    const lib = c.name.slice(0, -group.length - 1);
    speedups.set(lib, [...(speedups.get(lib) ?? []), times.get(base)! / times.get(c)!]);
  }
  for (const c of cases) {
    const t = times.get(c)!;
    const ratio = base && base !== c ? `  ${(t / times.get(base)!).toFixed(2)}x of ${base.name}` : "";
    console.log(
      `  ${c.name.padEnd(48)} ${format(t).padStart(12)}/iter${c === base ? "  (baseline)" : ratio}`,
    );
  }
}
const spread = [...speedups].filter(([, r]) => r.length > 1);
if (spread.length) {
  console.log("\nthroughput relative to each group's baseline, geometric mean over the groups:");
  for (const [lib, r] of spread) {
    const mean = Math.exp(r.reduce((sum, x) => sum + Math.log(x), 0) / r.length);
    console.log(`  ${lib.padEnd(24)} x${mean.toFixed(2)} (${r.length} groups)`);
  }
}
if (validatorCases.length) {
  console.log("\nvalidator (bench/validate_bench.ts, timed by bench/_validate_compare.ts)");
  compareFromEnv(validatorCases);
}
if (!filter || "guard_bench.ts".includes(filter)) {
  console.log("\nguard overhead (scripts/measure_guard.ts overhead 200 5: interleaved rounds, medians)");
  const script = join(here, "..", "scripts", "measure_guard.ts");
  spawnSync(process.execPath, [script, "overhead", "200", "5"], { stdio: "inherit" });
}
