/**
 * A steadier comparison than `deno bench` on a busy machine: runs the cases of bench/validate_bench.ts in
 * interleaved batches (every case of every group in each round, the order rotated from round to round),
 * measures each batch in process CPU time and takes the median per case. Prints the medians, then the
 * throughput of each toolguard variant (scanner on, the default; scanner off; the default on a call without
 * an id) relative to each yardstick (ajv allErrors; ajv allErrors + verbose) per case, with geometric means
 * over the six cases and over the valid and the invalid ones. `deno run -A bench/_validate_compare.ts`,
 * `bun run bench/_validate_compare.ts` or `bun run bench/bun.ts validate`. Environment: `ROUNDS` (default
 * 31), `BATCH` (calls per batch, default 2000), `GROUP` (a substring: only the matching cases).
 *
 * @module
 */
import process from "node:process";
import { type BenchCase, interleavedMedians } from "./_harness.ts";

/**
 * The library variants compared, each named as its cases are ("<library> <group>"); the Ollama variant, which
 * parses no text, is only timed.
 */
export const SUBJECTS = ["toolguard+scan", "toolguard", "toolguard+scan, no id"] as const;
/** The yardsticks they are compared with. */
export const YARDSTICKS = ["ajv", "ajv+verbose"] as const;

/** How long to measure. */
export interface CompareOptions {
  /** Rounds; each round times one batch of every case. */
  rounds: number;
  /** Calls per batch. */
  batch: number;
}

/** Median CPU time per call (ms) of each case, by case name, from interleaved rounds. */
export function medians(cases: readonly BenchCase[], { rounds, batch }: CompareOptions): Map<string, number> {
  for (const c of cases) for (let i = 0; i < batch; i++) c.fn();
  const times = interleavedMedians(cases.map((c) => c.fn), cases.map(() => batch), rounds);
  return new Map(cases.map((c, i) => [c.name, times[i]]));
}

/** The geometric mean of `xs` (NaN when empty). */
function geomean(xs: readonly number[]): number {
  return Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
}

/** A Markdown table. */
function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The report: medians per case and library, then each subject's throughput relative to each yardstick. */
export function report(cases: readonly BenchCase[], med: ReadonlyMap<string, number>): string {
  const groups = [...new Set(cases.map((c) => c.group))];
  const libs = [...new Set(cases.map((c) => c.name.slice(0, c.name.length - c.group.length - 1)))];
  const time = (lib: string, group: string) => med.get(`${lib} ${group}`);
  const medianRows = groups.map((g) => [g, ...libs.map((l) => ((time(l, g) ?? NaN) * 1000).toFixed(2))]);
  const pairs = SUBJECTS.flatMap((s) => YARDSTICKS.map((y) => [s, y] as const));
  /** Throughput of `s` relative to `y` in `group`: above 1, toolguard is faster. */
  const ratio = (s: string, y: string, group: string) => time(y, group)! / time(s, group)!;
  const ratioRows = groups.map((g) => [g, ...pairs.map(([s, y]) => `x${ratio(s, y, g).toFixed(2)}`)]);
  const mean = (label: string, which: (g: string) => boolean) => {
    const gs = groups.filter(which);
    return [label, ...pairs.map(([s, y]) => `x${geomean(gs.map((g) => ratio(s, y, g))).toFixed(2)}`)];
  };
  ratioRows.push(
    mean(`geometric mean, ${groups.length} cases`, () => true),
    mean("geometric mean, valid", (g) => g.endsWith(" valid")),
    mean("geometric mean, invalid", (g) => g.endsWith(" invalid")),
  );
  return [
    "median CPU time per call, µs",
    table(["case", ...libs], medianRows),
    "",
    "throughput relative to the yardstick (above x1, toolguard is faster)",
    table(["case", ...pairs.map(([s, y]) => `${s} / ${y}`)], ratioRows),
  ].join("\n");
}

/** The runtime's name and version. */
export function runtimeName(): string {
  const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
  if (g.Bun) return `bun ${g.Bun.version}`;
  if (g.Deno) return `deno ${g.Deno.version.deno}`;
  return `node ${process.version}`;
}

/** Times `cases` (those matching the `GROUP` substring) as the environment asks and prints the report. */
export function compareFromEnv(cases: readonly BenchCase[]): void {
  const only = process.env.GROUP ?? "";
  const picked = cases.filter((c) => c.group.includes(only));
  const options = { rounds: Number(process.env.ROUNDS ?? 31), batch: Number(process.env.BATCH ?? 2000) };
  const start = performance.now();
  const med = medians(picked, options);
  console.log(
    `${runtimeName()}: ${options.rounds} interleaved rounds of ${options.batch} calls per case, ` +
      `${((performance.now() - start) / 1000).toFixed(0)} s`,
  );
  console.log(report(picked, med));
}

if (import.meta.main) {
  // under `deno run`, keep register() from calling Deno.bench
  const deno = (globalThis as { Deno?: Record<string, unknown> }).Deno;
  if (deno) {
    try {
      Object.defineProperty(deno, "bench", { value: undefined, configurable: true });
    } catch {
      // not configurable: Deno.bench outside `deno bench` does nothing anyway
    }
  }
  const { cases } = await import("./validate_bench.ts");
  compareFromEnv(cases);
}
