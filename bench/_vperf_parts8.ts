import process from "node:process";
import { compile } from "../_schema.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { TOOLS } from "./validate_bench.ts";
const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
let sink: unknown;
const name = process.env.T ?? "weather";
const t = (TOOLS as any)[name];
const check = compile(t.schema);
const a = ajv.compile(t.schema);
const obj = JSON.parse(t.invalid);
const fns: Record<string, () => void> = {
  nullpass: () => { sink = check(obj, "", null); },
  report: () => { const o: any[] = []; check(obj, "", o); sink = o; },
  ajv: () => { sink = a(obj) ? [] : a.errors; },
  objs4: () => { const o: any[] = []; for (let i = 0; i < 4; i++) o.push({ code: "x", path: "/a", message: "m", expected: "e", received: "r" }); sink = o; },
};
const times: Record<string, number[]> = {};
for (const k in fns) { times[k] = []; for (let i = 0; i < 30000; i++) fns[k](); }
for (let r = 0; r < 40; r++) for (const k in fns) {
  const t0 = process.cpuUsage(); const f = fns[k];
  for (let i = 0; i < 10000; i++) f();
  const d = process.cpuUsage(t0); times[k].push((d.user + d.system) * 1000 / 10000);
}
for (const k in fns) { const x = times[k].sort((a, b) => a - b); console.log(k.padEnd(12), x[5].toFixed(0), x[20].toFixed(0)); }
export { sink };
