/**
 * `deno task demo`: the six basic cases against the fixture tool, with PASS/FAIL and the sentence the model
 * would read for each. Also runs under Bun: `bun scripts/demo.ts`.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { runSelftest } from "../_cli/selftest.ts";
import { describe } from "../describe.ts";

const deno = (globalThis as { Deno?: { execPath(): string; exit(code: number): never } }).Deno;
const tool = fileURLToPath(new URL("../fixtures/tool.ts", import.meta.url));
const launcher = deno
  ? { command: deno.execPath(), argsPrefix: ["run", "-A", tool] }
  : { command: process.execPath, argsPrefix: [tool] };

console.log("toolguard demo: six ways a tool run can end, and what the model is told about each.\n");
const cases = await runSelftest(launcher);
for (const c of cases) {
  const verdict = c.pass ? "PASS" : "FAIL";
  console.log(`${verdict}  ${c.name.padEnd(8)} expected ${c.expectedKind.padEnd(8)} got ${c.result.kind}`);
  console.log(`      model reads: ${describe(c.result)}\n`);
}
const passed = cases.filter((c) => c.pass).length;
console.log(`${passed}/${cases.length} cases behaved as designed.`);
if (passed !== cases.length) {
  if (deno) deno.exit(1);
  else process.exit(1);
}
