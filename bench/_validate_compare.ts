/**
 * A steadier comparison than `deno bench` on a busy machine: runs the cases of bench/validate_bench.ts in
 * interleaved batches, measures each batch in process CPU time and takes the median per case, then prints each library's throughput
 * relative to ajv as a geometric mean over the six cases. `deno run -A bench/_validate_compare.ts` or
 * `bun run bench/_validate_compare.ts`.
 *
 * @module
 */
import process from "node:process";
import { collected } from "./_harness.ts";

// under `deno run`, keep register() collecting instead of calling Deno.bench
const deno = (globalThis as { Deno?: Record<string, unknown> }).Deno;
if (deno) {
  try {
    Object.defineProperty(deno, "bench", { value: undefined, configurable: true });
  } catch {
    // not configurable: nothing would be collected, reported below
  }
}
await import("./validate_bench.ts");
if (collected.length === 0) {
  throw new Error("no cases collected; run under bun or a Deno that allows redefining Deno.bench");
}

const rounds = Number(process.env.ROUNDS ?? 31);
const batch = Number(process.env.BATCH ?? 2000);
const groups = new Map<string, typeof collected>();
// GROUP=weather (a substring) times only the matching groups
const only = process.env.GROUP ?? "";
for (const c of collected) {
  if (c.group.includes(only)) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
}
const perLib = new Map<string, number[]>();
for (const [group, cases] of groups) {
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (const c of cases) for (let i = 0; i < batch; i++) c.fn();
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      // CPU time of this process, not wall time: other processes on a busy machine do not count
      const t = process.cpuUsage();
      for (let i = 0; i < batch; i++) c.fn();
      const d = process.cpuUsage(t);
      times.get(c.name)!.push((d.user + d.system) / 1000 / batch);
    }
  }
  const med = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1];
  const base = med(times.get(cases.find((c) => c.baseline)!.name)!);
  console.log(`\n${group}`);
  for (const c of cases) {
    const m = med(times.get(c.name)!);
    const lib = c.name.slice(0, c.name.length - group.length - 1);
    perLib.set(lib, [...(perLib.get(lib) ?? []), base / m]);
    console.log(
      `  ${c.name.padEnd(36)} ${(m * 1000).toFixed(2).padStart(9)} µs  x${
        (base / m).toFixed(2)
      } of ajv throughput`,
    );
  }
}
console.log("\ngeometric mean throughput vs ajv over the six cases:");
for (const [lib, rs] of perLib) {
  console.log(
    `  ${lib.padEnd(16)} x${Math.exp(rs.reduce((s, r) => s + Math.log(r), 0) / rs.length).toFixed(2)}`,
  );
}
