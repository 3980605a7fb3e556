import process from "node:process";
import { received, show, where, codePoints } from "../_schema.ts";
import { escapePointer } from "../_json.ts";
let sink: unknown;
function time(label: string, f: () => void, n = 2000000) {
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
const obj = JSON.parse('{"units":"kelvin","days":30}');
time("show str", () => { sink = show(obj.units); });
time("show num", () => { sink = show(obj.days); });
time("received str", () => { sink = received(obj.units); });
time("where+concat", () => { sink = where("/units") + " must be one of: x."; });
time("esc", () => { sink = escapePointer("country"); });
time("cp", () => { sink = codePoints(obj.units); });
time("push obj", () => { const o: any[] = []; o.push({ code: "a", path: "/x", message: "m", expected: "e", received: "r" }); sink = o; });
time("push 4 obj", () => { const o: any[] = []; for (let i = 0; i < 4; i++) o.push({ code: "a", path: "/x", message: "m" + i, expected: "e", received: "r" }); sink = o; });
time("template num", () => { sink = `${obj.days} items`; });
time("num concat", () => { sink = obj.days + " items"; });
export { sink };
