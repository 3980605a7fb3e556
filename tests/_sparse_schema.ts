/**
 * A child for the test of sparse lists in a tool's schema built in code (schema_graph_test.ts): compiles and
 * lints tools whose `enum`, `type`, `required`, `prefixItems`, tuple `items`, `anyOf`, `allOf`, `oneOf` and
 * `dependentRequired` lists have length 2^32-1, and prints what each gave as JSON. The compiler read every
 * slot of them (minutes each): run apart, so that the test can end it.
 *
 * @module
 */
import { createValidator, lintTools } from "../validate.ts";

/** A list of length 2^32-1 holding `held` (index: value). */
const sparse = (held: Record<number, unknown>): unknown[] => {
  const list: unknown[] = [];
  list.length = 2 ** 32 - 1;
  for (const [i, v] of Object.entries(held)) list[Number(i)] = v;
  return list;
};
const nodes: Record<string, () => Record<string, unknown>> = {
  enum: () => ({ enum: sparse({ 0: "a", 7: "b" }) }),
  type: () => ({ type: sparse({ 0: "string" }) }),
  prefixItems: () => ({ prefixItems: sparse({ 0: {} }) }),
  items: () => ({ items: sparse({ 0: {} }) }),
  anyOf: () => ({ anyOf: sparse({ 0: {} }) }),
  allOf: () => ({ allOf: sparse({ 0: {} }) }),
  oneOf: () => ({ oneOf: sparse({ 0: {} }) }),
  required: () => ({ type: "object", required: sparse({ 0: "a" }) }),
  dependentRequired: () => ({ type: "object", dependentRequired: { a: sparse({ 0: "b" }) } }),
};
const out: Record<string, { compiled: string; lint: string[] }> = {};
for (const [name, node] of Object.entries(nodes)) {
  const tools =
    () => [{ name: "t", description: "t", parameters: { type: "object", properties: { q: node() } } }];
  let compiled: string;
  try {
    const validator = createValidator(tools());
    const messages = ["a", null, "c"].map((q) =>
      validator.validate([{ name: "t", arguments: { q } }]).calls[0].findings.map((f) => f.message).join(" ")
    );
    compiled = messages.join(" | ");
  } catch (e) {
    compiled = e instanceof Error ? e.message : String(e);
  }
  out[name] = { compiled, lint: lintTools(tools()).map((i) => `${i.code} ${i.path}`) };
}
console.log(JSON.stringify(out));
