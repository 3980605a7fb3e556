/**
 * `validate` on realistic tool schemas against ajv (allErrors + ajv-formats; `ajv+verbose` also puts the
 * schema and the data on each error, as toolguard's findings carry what was received), @cfworker/json-schema,
 * @exodus/schemasafe and `JSON.parse` alone. Arguments arrive as JSON text, as models send them; every
 * competitor parses then validates. `toolguard+scan` is the default,
 * `createValidator(tools).validate([call])` on a provider-shaped call, which also runs scan.ts over every
 * string argument; `toolguard` is the same with the scanner off (`scan: false`), i.e. the same job as the
 * JSON Schema validators plus normalisation and verdicts. Two more default variants take the calls local
 * models send: `toolguard+scan, no id` the same call without an id (the verdict gives it a synthetic one,
 * hashed from its name and arguments), and `toolguard+scan, Ollama` the call as Ollama's API gives it,
 * arguments an object and no id (so no text to parse: not compared with the parsing validators, only timed).
 * Run: `deno bench -A bench/validate_bench.ts`, or, for the ratio table (the toolguard variants against both
 * ajv variants, interleaved, medians of CPU time), `deno run -A bench/_validate_compare.ts`,
 * `bun run bench/_validate_compare.ts` or `bun run bench/bun.ts validate`.
 *
 * @module
 */
import { type BenchCase, register } from "./_harness.ts";
import { TOOLS } from "./_tools.ts";
import { createValidator } from "../validate.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Validator as CfValidator } from "@cfworker/json-schema";
import { validator as schemasafe } from "@exodus/schemasafe";

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const ajvVerbose = new Ajv2020({ allErrors: true, strict: false, verbose: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajvVerbose);

let sink: unknown;
/** Every case of this file, also for bench/bun.ts, which times them with bench/_validate_compare.ts. */
export const cases: BenchCase[] = [];
for (const [name, t] of Object.entries(TOOLS)) {
  const tools = [{ type: "function", function: { name, parameters: t.schema } }];
  // the schema pass alone, comparable with the JSON Schema validators; and the full default (with scan.ts)
  const validator = createValidator(tools, { scan: false });
  const withScan = createValidator(tools);
  const ajvCheck = ajv.compile(t.schema);
  const ajvVerboseCheck = ajvVerbose.compile(t.schema);
  const cf = new CfValidator(t.schema as never, "2020-12", false);
  const safe = schemasafe(
    t.schema as never,
    { includeErrors: true, allErrors: true, formats: {} as never, mode: "default" } as never,
  );
  for (const which of ["valid", "invalid"] as const) {
    const text = t[which];
    const group = `${name} ${which}`;
    const call = { id: "call_1", type: "function", function: { name, arguments: text } };
    const withoutId = { type: "function", function: { name, arguments: text } };
    const ollama = { function: { name, arguments: JSON.parse(text) } };
    const expectValid = which === "valid";
    // sanity: every competitor agrees on the verdict before it is timed
    const ours = validator.validate([call]);
    if (ours.allowed !== expectValid) throw new Error(`toolguard judged ${group} wrongly`);
    for (const c of [call, withoutId, ollama]) {
      if (withScan.validate([c]).allowed !== expectValid) {
        throw new Error(`toolguard+scan judged ${group} wrongly (${JSON.stringify(c).slice(0, 60)})`);
      }
    }
    if (ajvCheck(JSON.parse(text)) !== expectValid) throw new Error(`ajv judged ${group} wrongly`);
    if (ajvVerboseCheck(JSON.parse(text)) !== expectValid) {
      throw new Error(`ajv+verbose judged ${group} wrongly`);
    }
    cases.push(
      {
        name: `toolguard ${group}`,
        group,
        fn: () => {
          sink = validator.validate([call]);
        },
      },
      {
        name: `toolguard+scan ${group}`,
        group,
        fn: () => {
          sink = withScan.validate([call]);
        },
      },
      {
        name: `toolguard+scan, no id ${group}`,
        group,
        fn: () => {
          sink = withScan.validate([withoutId]);
        },
      },
      {
        name: `toolguard+scan, Ollama ${group}`,
        group,
        fn: () => {
          sink = withScan.validate([ollama]);
        },
      },
      {
        name: `ajv ${group}`,
        group,
        baseline: true,
        fn: () => {
          const v = JSON.parse(text);
          sink = ajvCheck(v) ? [] : ajvCheck.errors;
        },
      },
      {
        name: `ajv+verbose ${group}`,
        group,
        fn: () => {
          const v = JSON.parse(text);
          sink = ajvVerboseCheck(v) ? [] : ajvVerboseCheck.errors;
        },
      },
      {
        name: `cfworker ${group}`,
        group,
        fn: () => {
          sink = cf.validate(JSON.parse(text));
        },
      },
      {
        name: `schemasafe ${group}`,
        group,
        fn: () => {
          const v = JSON.parse(text);
          sink = safe(v) ? [] : safe.errors;
        },
      },
      {
        name: `JSON.parse ${group}`,
        group,
        fn: () => {
          sink = JSON.parse(text);
        },
      },
    );
  }
}
register(cases);
export { sink };
