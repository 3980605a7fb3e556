import process from "node:process";
import { compile } from "../_schema.ts";
import { TOOLS } from "./validate_bench.ts";
let sink: unknown;
function time(label: string, f: () => void, n = 1000000) {
  for (let i = 0; i < 50000; i++) f();
  const ts: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n / 7; i++) f();
    const d = process.cpuUsage(t0);
    ts.push((d.user + d.system) * 1000 / (n / 7));
  }
  ts.sort((a, b) => a - b);
  console.log(label.padEnd(40), ts[3].toFixed(0), "ns");
}
const base = (TOOLS as any).search;
const text = base.valid;
const variants: Record<string, (s: any) => void> = {
  full: () => {},
  noformat: (s) => delete s.properties.filters.properties.after.format,
  nopattern: (s) => delete s.properties.filters.properties.lang.pattern,
  nounique: (s) => delete s.properties.filters.properties.tags.uniqueItems,
  nofilters: (s) => delete s.properties.filters,
};
for (const [n, f] of Object.entries(variants)) {
  const s = structuredClone(base.schema); f(s);
  const check = compile(s);
  time(n, () => { sink = check(JSON.parse(text), "", null); });
}
time("parse", () => { sink = JSON.parse(text); });
export { sink };
