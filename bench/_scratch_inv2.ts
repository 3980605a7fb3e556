import process from "node:process";
import { medians } from "./_validate_compare.ts";
import { createValidator } from "../validate.ts";
import { compile } from "../_schema/compile.ts";
import { TOOLS } from "./validate_bench.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
const ajv = new Ajv2020({ allErrors: true, strict: false }); (addFormats as any)(ajv);
let sink: unknown;
const cases: any[] = [];
for (const [name, t] of Object.entries(TOOLS)) {
  if (process.env.T && name !== process.env.T) continue;
  const tools = [{ type: "function", function: { name, parameters: t.schema } }];
  const off = createValidator(tools, { scan: false });
  const check = compile(t.schema); const a = ajv.compile(t.schema);
  const text = t.invalid; const group = `${name} invalid`; const obj = JSON.parse(text);
  const call = { id: "call_1", type: "function", function: { name, arguments: text } };
  const add = (k: string, fn: () => void) => cases.push({ name: `${k} ${group}`, group, fn });
  add("off", () => { sink = off.validate([call]); });
  add("ajv", () => { const v = JSON.parse(text); sink = a(v) ? [] : a.errors; });
  add("parse", () => { sink = JSON.parse(text); });
  add("ajvOnObj", () => { sink = a(obj) ? [] : a.errors; });
  add("okOnObj", () => { sink = check(obj, "", null); });
  add("reportOnObj", () => { const f: any[] = []; check(obj, "", f); sink = f; });
  add("parse+ok+report", () => { const o = JSON.parse(text); const f: any[] = []; if (!check(o, "", null)) check(o, "", f); sink = f; });
}
const med = medians(cases, { rounds: Number(process.env.ROUNDS ?? 21), batch: 2000 });
for (const g of new Set(cases.map((c) => c.group))) {
  console.log(g, cases.filter((c) => c.group === g).map((c) => `${c.name.slice(0, -g.length - 1)} ${(med.get(c.name)! * 1e6).toFixed(0)}`).join("  "));
}
