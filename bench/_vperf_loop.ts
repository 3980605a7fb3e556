import { compile } from "../_schema.ts";
import { TOOLS } from "./validate_bench.ts";
const t = (TOOLS as any)[Deno.args[0]];
const check = compile(t.schema);
const text = t[Deno.args[1]];
let sink: unknown;
const N = 3000000;
const t0 = performance.now();
for (let i = 0; i < N; i++) { const a = JSON.parse(text); sink = a; }
console.log(((performance.now() - t0) * 1e6 / N).toFixed(0), "ns");
export { sink };
