/**
 * One set of benchmark cases for both runtimes. A `bench/*_bench.ts` file calls `register(cases)`: under
 * Deno that becomes `Deno.bench` (run by `deno task bench`); under Bun the cases are collected and timed by
 * `bench/bun.ts` (run by `deno task bench:bun`), which prints each case as a ratio to its group's baseline.
 * Also the measuring helpers the benchmarks and measuring scripts share (`median`, `cpuMs`).
 *
 * @module
 */
import process from "node:process";

/** One benchmark case. Cases sharing a `group` are compared against the one marked `baseline`. */
export interface BenchCase {
  /** Case name, unique within the group. */
  name: string;
  /** Group name: cases in one group are compared with each other. */
  group: string;
  /** The case every other case in the group is measured against. */
  baseline?: boolean;
  /** The work to time. */
  fn: () => unknown | Promise<unknown>;
  /** Minimum number of iterations under Bun (default 20). */
  minIterations?: number;
}

/** Cases collected when not running under Deno (read by bench/bun.ts). */
export const collected: BenchCase[] = [];

/** Register cases: `Deno.bench` under Deno, collected for bench/bun.ts elsewhere. */
export function register(cases: readonly BenchCase[]): void {
  const deno = (globalThis as { Deno?: { bench?: (o: unknown) => void } }).Deno;
  for (const c of cases) {
    if (deno?.bench) {
      deno.bench({ name: c.name, group: c.group, baseline: c.baseline ?? false, fn: c.fn });
    } else {
      collected.push(c);
    }
  }
}

/**
 * The median of `xs`: the middle value, or the mean of the two middle values when there is an even number
 * of them; NaN when `xs` is empty. `xs` is not reordered.
 */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Times each of `runs` in `rounds` interleaved rounds, `reps[i]` calls of `runs[i]` a batch, in process CPU time;
 * returns each run's median milliseconds per call, in order. The order is rotated each round, so that no run
 * always follows the same neighbour; on a shared machine the runs of one round meet the same load.
 */
export function interleavedMedians(
  runs: readonly (() => unknown)[],
  reps: readonly number[],
  rounds: number,
): number[] {
  const times: number[][] = runs.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < runs.length; k++) {
      const i = (k + r) % runs.length;
      const t = cpuMs();
      for (let n = 0; n < reps[i]; n++) runs[i]();
      times[i].push((cpuMs() - t) / reps[i]);
    }
  }
  return times.map(median);
}

/**
 * This process's CPU time so far, user and system, in milliseconds. Benchmarks on a shared machine time in
 * CPU time: what other processes take does not count.
 */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
