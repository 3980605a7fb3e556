import process from "node:process";
import { safeTest, uniqueOk, makeRegExp } from "../_schema.ts";
import { FORMATS } from "../_schema_formats.ts";
let sink: unknown;
const arr = JSON.parse('["rust","tokio"]');
const o = JSON.parse('{"d":"2024-01-01","l":"en"}');
const re = makeRegExp("^[a-z]{2}$", "", "pattern");
const re2 = new RegExp("^[a-z]{2}$");
const fns: Record<string, () => void> = {
  unique: () => { sink = uniqueOk(arr); },
  safeTest: () => { sink = safeTest(re, o.l); },
  retest_u: () => { sink = re.test(o.l); },
  retest: () => { sink = re2.test(o.l); },
  date: () => { sink = FORMATS.date(o.d); },
  keys: () => { sink = Object.keys(o); },
};
const times: Record<string, number[]> = {};
for (const k in fns) { times[k] = []; for (let i = 0; i < 30000; i++) fns[k](); }
for (let r = 0; r < 40; r++) for (const k in fns) {
  const t0 = process.cpuUsage(); const f = fns[k];
  for (let i = 0; i < 20000; i++) f();
  const d = process.cpuUsage(t0); times[k].push((d.user + d.system) * 1000 / 20000);
}
for (const k in fns) { const x = times[k].sort((a, b) => a - b); console.log(k.padEnd(12), x[5].toFixed(0), x[20].toFixed(0)); }
export { sink };
