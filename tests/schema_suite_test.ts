// Runs the JSON Schema Test Suite (draft 2020-12 subset in ../shared/data) through compileSchema.
// Every case must pass except the ones listed in EXCEPTIONS, each with its reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compileSchema } from "../validate.ts";
import { sharedData } from "./_shared_data.ts";

const suite = sharedData("json-schema-test-suite/draft2020-12", "the JSON Schema Test Suite");
const dir = suite.path;
/** The suite's tests skip, saying which data is missing, where ../shared/data is absent. */
const needsSuite = { skip: suite.skip };

interface Group {
  description: string;
  schema: unknown;
  tests: { description: string; data: unknown; valid: boolean }[];
}

/** Groups allowed to fail, keyed "file | group description", each with the reason. */
const EXCEPTIONS: Record<string, string> = {
  "ref.json | remote ref, containing refs itself": "refers to the 2020-12 meta-schema by URL (remote $ref)",
  "defs.json | validate definition against metaschema":
    "refers to the 2020-12 meta-schema by URL (remote $ref)",
  "additionalProperties.json | dependentSchemas with additionalProperties":
    "uses dependentSchemas, a keyword outside the contract's list; by contract compiling it must throw",
  "not.json | collect annotations inside a 'not', even if collection is disabled":
    "uses unevaluatedProperties, a keyword outside the contract's list; by contract compiling it must throw",
  "ref.json | ref creates new scope when adjacent to keywords":
    "uses unevaluatedProperties, a keyword outside the contract's list; by contract compiling it must throw",
};

/**
 * format.json: in 2020-12, format is an annotation by default, so these cases expect malformed values to
 * pass and unknown formats to be ignored. This contract asserts the formats on its list (and, like 2020-12,
 * ignores the others), so a case here may fail only when it expects an invalid value of a listed format to
 * be accepted.
 */
const CONTRACT_FORMATS = new Set([
  "date-time",
  "date",
  "time",
  "email",
  "uri",
  "uuid",
  "ipv4",
  "ipv6",
  "hostname",
]);

function files(): string[] {
  const top = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  const opt = readdirSync(join(dir, "optional", "format")).filter((f) => f.endsWith(".json")).sort()
    .map((f) => `optional/format/${f}`);
  return [...top, ...opt];
}

test("compileSchema: every contract case of the JSON Schema Test Suite passes", needsSuite, () => {
  let passed = 0, total = 0;
  const failures: string[] = [];
  const lines: string[] = [];
  for (const file of files()) {
    const groups = JSON.parse(readFileSync(join(dir, file), "utf8")) as Group[];
    let p = 0, t = 0;
    for (const g of groups) {
      let check: ((v: unknown) => unknown[]) | null = null;
      let error = "";
      try {
        check = compileSchema(g.schema);
      } catch (e) {
        error = (e as Error).message;
      }
      for (const c of g.tests) {
        t++;
        const ok = check !== null && (check(c.data).length === 0) === c.valid;
        if (ok) {
          p++;
          continue;
        }
        const key = `${file} | ${g.description}`;
        const format = (g.schema as { format?: string }).format;
        const allowed = EXCEPTIONS[key] !== undefined ||
          (file === "format.json" && (c.valid || !CONTRACT_FORMATS.has(format ?? "")) &&
            (check === null ? !CONTRACT_FORMATS.has(format ?? "") : CONTRACT_FORMATS.has(format ?? "")));
        if (!allowed) failures.push(`${key} | ${c.description}${error ? ` (compile: ${error})` : ""}`);
      }
    }
    passed += p;
    total += t;
    lines.push(`${file}: ${p}/${t}`);
  }
  console.log(lines.join("\n") + `\nTOTAL ${passed}/${total}`);
  assert.deepEqual(failures, [], "cases outside the listed exceptions failed");
  // the exceptions above account for exactly this many cases; a regression anywhere shows up here too
  assert.ok(passed >= 1104, `expected at least 1104 passing cases, got ${passed}`);
});

test("compileSchema: in format.json, every contract format is asserted, others are annotations", () => {
  for (const f of CONTRACT_FORMATS) {
    assert.equal(compileSchema({ format: f })(12).length, 0, `${f} ignores non-strings`);
  }
  // A format outside the contract's list is an annotation, as 2020-12 has it (lintTools reports it).
  assert.deepEqual(compileSchema({ format: "duration" })("not a duration"), []);
  assert.equal(compileSchema({ format: "date" })("2026-02-30").length, 1);
  assert.equal(compileSchema({ format: "date" }, { assertFormats: false })("2026-02-30").length, 0);
});

function sorted(f: unknown[]): string[] {
  return f.map((x) => JSON.stringify(x)).sort();
}

test(
  "compileSchema: generated code and the interpreter agree on every suite case, findings included",
  needsSuite,
  () => {
    let compared = 0;
    for (const file of files()) {
      for (const g of JSON.parse(readFileSync(join(dir, file), "utf8")) as Group[]) {
        let gen, interp;
        try {
          gen = compileSchema(g.schema);
          interp = compileSchema(g.schema, { codegen: false });
        } catch {
          continue;
        }
        for (const c of g.tests) {
          assert.deepEqual(
            sorted(gen(c.data)),
            sorted(interp(c.data)),
            `${file} | ${g.description} | ${c.description}`,
          );
          compared++;
        }
      }
    }
    assert.ok(compared > 1000);
  },
);

test("compileSchema: where new Function is blocked, the interpreter runs and gives the same answers", () => {
  const schema = {
    type: "object",
    properties: { n: { type: "integer", maximum: 3 }, s: { enum: ["a"] } },
    required: ["n"],
    additionalProperties: false,
  };
  const generated = compileSchema(schema);
  const original = globalThis.Function;
  let attempts = 0;
  const blocked = function () {
    attempts++;
    throw new EvalError("Code generation from strings disallowed for this context");
  } as unknown as FunctionConstructor;
  try {
    globalThis.Function = blocked;
    const fallback = compileSchema(schema);
    assert.ok(attempts > 0, "the generator tried and was refused");
    for (const v of [{ n: 1 }, { n: 5, s: "b", x: 1 }, {}, [], "x"]) {
      assert.deepEqual(fallback(v), generated(v));
    }
    assert.equal(fallback({ n: 5 })[0].code, "argument_constraint");
  } finally {
    globalThis.Function = original;
  }
});
