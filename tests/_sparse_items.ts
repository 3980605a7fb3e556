/**
 * A child for the test of `items` over a sparse array built in code (value_graph_test.ts): checks arguments
 * holding an array of length 2^32-1 with three values against `items` in every entry point that validates
 * arguments, and prints their findings as JSON. Run under a memory cap: the checks read every slot and
 * reported each hole (a finding each) until memory ran out.
 *
 * @module
 */
import { createValidator, validate } from "../validate.ts";
import { createMcpGuard } from "../mcp.ts";
import type { Finding } from "../types.ts";

const list = { type: "array", items: { type: "string" } };
const schema = { type: "object", properties: { list } };
const sparse = (): unknown[] => {
  const values: unknown[] = ["a"];
  values.length = 2 ** 32 - 1;
  values[5] = 7;
  values[2 ** 32 - 2] = "z";
  return values;
};
const guard = createMcpGuard({ injection: "warn" });
guard.setTools([{ name: "t", inputSchema: schema }]);
const findings: Record<string, Finding[]> = {};
for (const codegen of [true, false]) {
  const validator = createValidator([{ name: "t", parameters: schema }], { codegen });
  findings[`codegen ${codegen}`] = validator.validate([{ name: "t", arguments: { list: sparse() } }])
    .calls[0].findings;
}
const checked = await validate("t", schema, { list: sparse() });
findings.validate = checked.valid ? [] : checked.error.findings;
findings.mcp = guard.checkCall({ name: "t", arguments: { list: sparse() } }).verdict.findings;
console.log(JSON.stringify(findings));
