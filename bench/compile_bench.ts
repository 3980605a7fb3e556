/**
 * What compiling tools costs: `createValidator` over 30 tools (the three schemas of bench/validate_bench.ts,
 * each tool with its own copy) against ajv's `compile` of the same 30 schemas (allErrors + ajv-formats). Each
 * iteration reads the tools from JSON text, so neither side finds a schema it compiled before. toolguard
 * generates a tool's code as far as its calls need it (the yes/no code at once, the string visitor on the first
 * valid call, the wording of findings on the first invalid one); ajv generates all of it at once, so a third
 * case does the whole job: the validator, then one valid and one invalid call of every tool.
 * Run: `deno bench -A bench/compile_bench.ts` or `bun run bench/bun.ts compile`.
 *
 * @module
 */
import { register } from "./_harness.ts";
import { createValidator } from "../validate.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { TOOLS } from "./_tools.ts";

/** The tools, as JSON text: 30 of them, the three schemas in turn, each named apart. */
const TOOLS_TEXT = JSON.stringify(
  Array.from({ length: 30 }, (_, i) => {
    const [name, t] = Object.entries(TOOLS)[i % 3];
    return { type: "function", function: { name: `${name}_${i}`, parameters: t.schema } };
  }),
);

/** One valid and one invalid call of every tool. */
const CALLS = Array.from({ length: 30 }, (_, i) => {
  const [name, t] = Object.entries(TOOLS)[i % 3];
  const call = (which: "valid" | "invalid") => ({
    id: `call_${i}_${which}`,
    type: "function",
    function: { name: `${name}_${i}`, arguments: t[which] },
  });
  return [call("valid"), call("invalid")];
});

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

let sink: unknown;
const group = "compile 30 tools";
register([
  {
    name: "ajv compile",
    group,
    baseline: true,
    fn: () => {
      const tools = JSON.parse(TOOLS_TEXT) as { function: { parameters: object } }[];
      for (const t of tools) {
        sink = ajv.compile(t.function.parameters);
        ajv.removeSchema(t.function.parameters); // its cache would keep every copy
      }
    },
  },
  {
    name: "toolguard createValidator",
    group,
    fn: () => {
      sink = createValidator(JSON.parse(TOOLS_TEXT));
    },
  },
  {
    name: "toolguard createValidator, every tool called valid and invalid",
    group,
    fn: () => {
      const v = createValidator(JSON.parse(TOOLS_TEXT));
      for (const pair of CALLS) sink = v.validate(pair);
    },
  },
]);

export { sink };
