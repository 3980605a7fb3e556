import process from "node:process";
import { createValidator } from "../validate.ts";
import { compile } from "../_schema.ts";
import { depthOver } from "../_json.ts";
import { TOOLS } from "./validate_bench.ts";
let sink: unknown;
const name = process.env.T ?? "search", which = process.env.W ?? "valid";
const t = (TOOLS as any)[name];
const text = t[which];
const check = compile(t.schema);
const v = createValidator([{ type: "function", function: { name, parameters: t.schema } }], { scan: false });
const call = { id: "call_1", type: "function", function: { name, arguments: text } };
const fns: Record<string, () => void> = {
  parse: () => { sink = JSON.parse(text); },
  parsecheck: () => { sink = check(JSON.parse(text), "", null); },
  parsedepth: () => { sink = depthOver(JSON.parse(text), 64); },
  replica: () => {
    const raw = call.function.arguments;
    if (raw.length > 1000000 || raw.charCodeAt(0) !== 123) return;
    let args: any;
    try { args = JSON.parse(raw); } catch { return; }
    if (typeof args !== "object" || args === null || Array.isArray(args)) return;
    if (raw.length > 128 && depthOver(args, 64) >= 0) return;
    const findings: any[] = [];
    if (!check(args, "", null)) check(args, "", findings);
    sink = { allowed: true, blocked: [], calls: [{ index: 0, id: call.id, name, allowed: findings.length === 0, findings, rawArguments: raw, arguments: args }] };
  },
  validate: () => { sink = v.validate([call]); },
};
const times: Record<string, number[]> = {};
for (const k in fns) { times[k] = []; for (let i = 0; i < 30000; i++) fns[k](); }
for (let r = 0; r < 40; r++) for (const k in fns) {
  const t0 = process.cpuUsage(); const f = fns[k];
  for (let i = 0; i < 5000; i++) f();
  const d = process.cpuUsage(t0); times[k].push((d.user + d.system) * 1000 / 5000);
}
for (const k in fns) { const x = times[k].sort((a, b) => a - b); console.log(k.padEnd(12), x[5].toFixed(0), x[20].toFixed(0)); }
export { sink };
