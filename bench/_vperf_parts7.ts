import process from "node:process";
let sink: unknown;
const text = '{"query":"rust async runtime comparison","engine":"web","limit":10,"safe":true,"filters":{"site":"github.com","after":"2024-01-01","lang":"en","tags":["rust","tokio"]}}';
const fns: Record<string, () => void> = {
  parse: () => { sink = JSON.parse(text); },
  parsekeys: () => { const o = JSON.parse(text); sink = Object.keys(o).length + Object.keys(o.filters).length; },
  parseforin: () => { const o = JSON.parse(text); let n = 0; for (const k in o) n++; for (const k in o.filters) n++; sink = n; },
  parseread: () => { const o = JSON.parse(text); sink = [o.query, o.engine, o.limit, o.safe, o.filters.site, o.filters.after, o.filters.lang, o.filters.tags]; },
  parsehas: () => { const o = JSON.parse(text); sink = Object.hasOwn(o, "query") && Object.hasOwn(o.filters, "site"); },
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
