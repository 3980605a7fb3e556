// The code generators give way to the interpreter quietly (a host that blocks `Function` must still
// validate), and the interpreter says the same words: a slip in a generator would pass every other test and
// only cost speed. These tests compile a broad corpus with the generators watched (_schema/fallbacks.ts) and
// fail on any fallback that is not on the deliberate list below.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compile, SchemaError } from "../_schema/compile.ts";
import { rootReporter } from "../_schema/codegen.ts";
import { stringVisitor } from "../_schema/strings.ts";
import { type Fallback, watchFallbacks } from "../_schema/fallbacks.ts";
import { escapePointer } from "../_common/pointer.ts";
import { TOOLS } from "../bench/_tools.ts";
import { sharedData } from "./_shared_data.ts";
import { BOOKING_SCHEMA, PROPERTY_SCHEMA, WEATHER_PARAMS } from "./_schemas.ts";
import { createValidator } from "../validate.ts";

/** How many levels of objects and arrays `value` nests (a schema's depth). */
function depth(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  for (const v of Object.values(value)) deepest = Math.max(deepest, depth(v));
  return deepest + 1;
}

/**
 * The fallbacks meant to happen: which stage, why (its reason), and for which schemas. The generators never
 * throw to give way: a node they do not specialise (a keyword outside codegen_js.ts's list, a boolean
 * exclusive bound, an array `items`) is delegated to the interpreter node by node, inside generated code.
 * What remains is what the generator cannot do: a schema nested so deep (about 1 400 levels and more on
 * Deno) that the generator's recursion, deeper per level than the interpreter's, runs out of call stack where
 * the interpreter's did not (the corpus holds none: where the stack runs out depends on the runtime and on how
 * far its compiler has optimised the recursion, so such a case would pass or fail by the machine). A host that
 * blocks `Function` (the probe) does not arise here.
 */
const DELIBERATE: { stages: Fallback["stage"][]; reason: RegExp; applies: (schema: unknown) => boolean }[] = [
  {
    stages: ["check", "report", "strings"],
    reason: /^RangeError: Maximum call stack size exceeded/,
    applies: (schema) => depth(schema) > 1_000,
  },
];

/** A schema of the corpus, where it comes from, and values to check against it. */
interface Case {
  label: string;
  schema: unknown;
  values: unknown[];
}

const DEEP = (() => {
  // deeper than the static reporters go (12 segments): the rest take the pointer as an argument
  let s: Record<string, unknown> = { type: "string", minLength: 2 };
  for (let i = 0; i < 16; i++) s = { type: "object", properties: { a: s }, required: ["a"] };
  return s;
})();

const WIDE = {
  // more properties than static reporters are made for one schema (400)
  type: "object",
  properties: Object.fromEntries(
    Array.from({ length: 450 }, (_, i) => [`p${i}`, { type: "integer", minimum: i, multipleOf: 1 }]),
  ),
  required: ["p0", "p449"],
};

/** Schemas the tests of the validator and the engine declare, and one or more of every keyword. */
const FIXTURES: Record<string, unknown> = {
  params: WEATHER_PARAMS,
  booking: BOOKING_SCHEMA,
  property: PROPERTY_SCHEMA,
  formats: {
    type: "object",
    properties: Object.fromEntries(
      [
        "date-time",
        "date",
        "time",
        "email",
        "uri",
        "uuid",
        "ipv4",
        "ipv6",
        "hostname",
        "int32",
        "int64",
        "float",
      ]
        .map((f) => [f, { format: f }]),
    ),
  },
  numbers: {
    type: "object",
    properties: {
      a: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
      b: { type: "number", minimum: 0, exclusiveMinimum: true },
      c: { type: "integer", multipleOf: 3 },
      d: { type: ["number", "null"], multipleOf: 0.01 },
      e: { type: "integer", nullable: true, maximum: 5 },
    },
  },
  strings: {
    type: "object",
    properties: {
      code: { type: "string", pattern: "^[A-Z]{3}-[0-9]+$" },
      free: { type: "string", pattern: "a|b(?=c)" },
      word: { type: "string", minLength: 1, maxLength: 3 },
      lit: { const: "sv" },
      any: { enum: ["sv", 1, null, { a: [1] }] },
    },
    propertyNames: { maxLength: 8 },
    patternProperties: { "^x-": { type: "boolean" } },
    dependentRequired: { code: ["word"] },
    minProperties: 1,
    maxProperties: 6,
  },
  arrays: {
    type: "array",
    prefixItems: [{ type: "string" }, { type: "integer" }],
    items: { type: "object", properties: { k: { type: "array", minItems: 1, maxItems: 2 } } },
    uniqueItems: true,
  },
  // an array `items` (the older tuple form): left to the interpreter, node by node (as `numbers`' boolean bound)
  tuple: { type: "array", items: [{ type: "string" }, { type: "number" }] },
  applicators: {
    type: "object",
    properties: {
      one: { oneOf: [{ type: "string" }, { type: "string", maxLength: 2 }, { type: "integer" }] },
      all: { allOf: [{ minimum: 1 }, { maximum: 9 }, { multipleOf: 2 }] },
      not: { not: { type: "null" } },
      cond: { if: { type: "string" }, then: { minLength: 2 }, else: { type: "integer" } },
      open: { additionalProperties: { type: "string" } },
      closed: { properties: { a: true, b: false }, additionalProperties: false },
    },
  },
  recursive: {
    $ref: "#/$defs/tree",
    $defs: {
      tree: {
        type: "object",
        properties: {
          value: { type: "integer" },
          children: { type: "array", items: { $ref: "#/$defs/tree" } },
        },
        required: ["value"],
      },
      alias: { $ref: "#/$defs/tree", description: "a $ref-only node" },
    },
  },
  "x-extensions": { type: "object", "x-order": 1, properties: { a: { type: "string", "x-secret": true } } },
  deep: DEEP,
  wide: WIDE,
  "true": true,
  "false": false,
  empty: {},
};

/** Values of every type, and a few more shapes, checked against every schema of the corpus. */
const VALUES: unknown[] = [
  null,
  true,
  0,
  1,
  2,
  -1,
  1.5,
  1e300,
  "",
  "a",
  "ab",
  "sv",
  "2024-01-31",
  "ABC-12",
  [],
  [1, 1],
  ["a", 1, { k: [1] }],
  ["a", 1, { k: [1] }, { k: [1] }],
  {},
  { a: 1 },
  { value: 1, children: [{ value: 2 }, { value: "x" }] },
];

/** The corpus values, and for an object schema each value under each declared property (and one extra). */
function valuesFor(schema: unknown): unknown[] {
  const out = [...VALUES];
  if (schema !== null && typeof schema === "object" && "properties" in schema) {
    const props = Object.keys(schema.properties as object).slice(0, 20);
    for (const v of VALUES) {
      out.push(Object.fromEntries(props.map((p) => [p, v])));
      for (const p of props) out.push({ [p]: v, extra: v });
    }
  }
  if (schema === DEEP) {
    let v: unknown = "x";
    for (let i = 0; i < 16; i++) v = { a: v };
    out.push(v);
  }
  return out;
}

/** What a check says of `value`: its yes/no, its findings at the root and under a pointer, or what it threw. */
function says(check: ReturnType<typeof compile>, value: unknown): string {
  try {
    const ok = check(value, "", null);
    const atRoot: unknown[] = [];
    check(value, "", atRoot as never);
    const under: unknown[] = [];
    check(value, "/x", under as never);
    const direct: unknown[] = [];
    rootReporter(check)(value, "", direct as never);
    return JSON.stringify([ok, atRoot, under, direct]);
  } catch (e) {
    return `throws ${(e as Error).name}: ${(e as Error).message}`;
  }
}

/**
 * Where in `schema` a fallback of `stage` starts: the deepest subschema that falls back the same way when
 * compiled alone ("" when none does, e.g. one that needs the document's `$defs`). Run only on a failure.
 */
function narrow(schema: unknown, stage: Fallback["stage"], ptr = ""): string {
  if (schema === null || typeof schema !== "object") return ptr;
  for (const [key, sub] of Object.entries(schema)) {
    if (sub === null || typeof sub !== "object") continue;
    const at = `${ptr}/${escapePointer(key)}`;
    const fails = watchFallbacks((fallbacks) => {
      try {
        exercise(sub, VALUES);
      } catch {
        return false; // not a schema alone
      }
      return fallbacks.some((f) => f.stage === stage);
    });
    if (fails) return narrow(sub, stage, at);
  }
  return ptr;
}

/** Compiles `schema` both ways and checks `values` with both; asserts they say the same. False if refused. */
function exercise(schema: unknown, values: unknown[], label = ""): boolean {
  let interpreted;
  try {
    interpreted = compile(schema, { codegen: false });
  } catch (e) {
    if (!(e instanceof SchemaError)) throw e;
    assert.throws(() => compile(schema), SchemaError, `${label}: refused by one engine only`);
    return false;
  }
  const check = compile(schema);
  const visit = stringVisitor(schema);
  for (const value of values) {
    assert.equal(says(check, value), says(interpreted, value), `${label}: ${JSON.stringify(value)}`);
    if (visit !== null && check(value, "", null)) visit(value, () => false);
  }
  return true;
}

/** Compiles every case with the generators watched; the fallbacks off the deliberate list, described. */
function unexpectedFallbacks(
  cases: Iterable<Case>,
): { compiled: number; refused: string[]; unexpected: string[] } {
  let compiled = 0;
  const refused: string[] = [];
  const unexpected: string[] = [];
  for (const c of cases) {
    const fallbacks = watchFallbacks((fallbacks) => {
      if (exercise(c.schema, c.values, c.label)) compiled++;
      else refused.push(c.label);
      return [...fallbacks];
    });
    for (const f of fallbacks) {
      if (
        DELIBERATE.some((d) => d.stages.includes(f.stage) && d.reason.test(f.reason) && d.applies(c.schema))
      ) {
        continue;
      }
      unexpected.push(
        `${c.label} at ${JSON.stringify(narrow(c.schema, f.stage))}: ${f.stage} fell back: ${f.reason}`,
      );
    }
  }
  return { compiled, refused, unexpected };
}

function* fixtureCases(): Generator<Case> {
  for (const [name, tool] of Object.entries(TOOLS)) {
    const values = [...VALUES, JSON.parse(tool.valid), JSON.parse(tool.invalid)];
    yield {
      label: `bench/_tools.ts ${name}`,
      schema: tool.schema,
      values: [...values, ...valuesFor(tool.schema)],
    };
  }
  for (const [name, schema] of Object.entries(FIXTURES)) {
    yield { label: `fixture ${name}`, schema, values: valuesFor(schema) };
  }
}

test("codegen: the tool fixtures and the bench's tools are generated without a fallback, valid and invalid values alike", () => {
  const { compiled, unexpected } = unexpectedFallbacks(fixtureCases());
  assert.equal(compiled, Object.keys(TOOLS).length + Object.keys(FIXTURES).length);
  assert.deepEqual(unexpected, []);
});

test("createValidator: the fixtures as tools, called validly and not, scanned and not, generate without a fallback", () => {
  // the validator asks for the string visitor with its own options (the schema's literals, the scan's clears)
  const seen = watchFallbacks((fallbacks) => {
    for (const c of fixtureCases()) {
      const tools = [{ name: "t", input_schema: c.schema }];
      const calls = c.values.filter((v) => v !== null && typeof v === "object" && !Array.isArray(v))
        .map((v, i) => ({ id: `c${i}`, name: "t", arguments: JSON.stringify(v) }));
      for (const scan of [true, false]) {
        const verdict = createValidator(tools, { scan }).validate(calls);
        assert.equal(verdict.calls.length, calls.length, c.label);
      }
    }
    return fallbacks.map((f) => `${f.stage}: ${f.reason}`);
  });
  assert.deepEqual(seen, []);
});

const suite = sharedData("json-schema-test-suite/draft2020-12", "the JSON Schema Test Suite");

function* suiteCases(): Generator<Case> {
  const dir = suite.path;
  const files = [
    ...readdirSync(dir).filter((f) => f.endsWith(".json")),
    ...readdirSync(join(dir, "optional")).filter((f) => f.endsWith(".json")).map((f) => `optional/${f}`),
    ...readdirSync(join(dir, "optional", "format")).filter((f) => f.endsWith(".json"))
      .map((f) => `optional/format/${f}`),
  ].sort();
  for (const file of files) {
    const groups = JSON.parse(readFileSync(join(dir, file), "utf8")) as {
      description: string;
      schema: unknown;
      tests: { data: unknown }[];
    }[];
    for (const g of groups) {
      yield {
        label: `${file} | ${g.description}`,
        schema: g.schema,
        values: [...g.tests.map((t) => t.data), ...VALUES],
      };
    }
  }
}

test("codegen: every JSON Schema Test Suite schema the engine compiles is generated without a fallback", {
  skip: suite.skip,
}, () => {
  const { compiled, refused, unexpected } = unexpectedFallbacks(suiteCases());
  // the suite's schemas outside the contract (remote refs, unevaluated*, dependentSchemas...) are refused
  assert.ok(compiled > 200 && refused.length < 10, `${compiled} compiled, refused: ${refused.join("; ")}`);
  assert.deepEqual(unexpected, []);
});

test("codegen: a fallback is seen with its stage and reason: an emitter that throws, a link that does not compile", () => {
  const original = globalThis.Function;
  try {
    // a link whose source does not compile, as a slip in an emitted function would make it
    globalThis.Function = function (...args: string[]) {
      const src = args[args.length - 1];
      return new original(...args.slice(0, -1), src.includes("function f0") ? `${src} )` : src);
    } as unknown as FunctionConstructor;
    const { unexpected } = unexpectedFallbacks([{
      label: "dynamic reporters",
      schema: { type: "array", items: { type: "string" } },
      values: [[1]],
    }]);
    assert.equal(unexpected.length, 1);
    assert.match(unexpected[0], /^dynamic reporters at "[^"]*": report fell back: SyntaxError: /);
  } finally {
    globalThis.Function = original;
  }
  // a schema whose keys cannot be read: the generator throws where the interpreter never looked again
  let reads = 0;
  const schema = new Proxy({ type: "string" }, {
    ownKeys: (t) => {
      if (++reads > 1) throw new TypeError("no second look");
      return Reflect.ownKeys(t);
    },
  });
  const fallbacks = watchFallbacks((fallbacks) => (compile(schema), [...fallbacks]));
  assert.deepEqual(fallbacks.map((f) => [f.stage, f.reason]), [["check", "TypeError: no second look"]]);
});
