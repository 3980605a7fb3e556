import { test } from "node:test";
import assert from "node:assert/strict";
import { lintTools } from "../validate.ts";
import type { LintIssue } from "../_validate/lint.ts";

const good = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};

function codes(issues: LintIssue[]): string[] {
  return issues.map((i) => `${i.code} ${i.path}`);
}

test("lintTools: a clean declaration has no issues, in every shape", () => {
  assert.deepEqual(lintTools([good]), []);
  assert.deepEqual(
    lintTools([{ name: "a", description: "d", input_schema: { type: "object", properties: {} } }]),
    [],
  );
  assert.deepEqual(
    lintTools([{
      functionDeclarations: [{
        name: "a",
        description: "d",
        parameters: { type: "OBJECT", properties: { q: { type: "STRING" } } },
      }],
    }]),
    [],
  );
});

test("lintTools: names providers reject, and duplicates", () => {
  const bad = ["get weather", "", "x".repeat(65), "naïve", "a.b"];
  for (const name of bad) {
    const issues = lintTools([{ name, description: "d", input_schema: { type: "object" } }]);
    assert.deepEqual(codes(issues), ["invalid_name "], name);
    assert.equal(issues[0].severity, "error");
  }
  assert.deepEqual(
    lintTools([{ name: "A-b_9".padEnd(64, "x"), description: "d", input_schema: { type: "object" } }]),
    [],
  );
  const dup = lintTools([good, { name: "get_weather", description: "d", input_schema: { type: "object" } }]);
  assert.deepEqual(codes(dup), ["duplicate_name "]);
  assert.equal(dup[0].index, 1);
});

test("lintTools: missing descriptions, missing and non-object root schemas", () => {
  assert.deepEqual(codes(lintTools([{ name: "a", input_schema: { type: "object" } }])), [
    "missing_description ",
  ]);
  assert.equal(lintTools([{ name: "a", input_schema: { type: "object" } }])[0].severity, "warning");
  assert.deepEqual(codes(lintTools([{ type: "function", function: { name: "a", description: "d" } }])), [
    "missing_schema ",
  ]);
  assert.deepEqual(codes(lintTools([{ name: "a", description: "d", input_schema: { type: "string" } }])), [
    "root_not_object ",
  ]);
  assert.deepEqual(codes(lintTools([{ name: "a", description: "d", input_schema: true }])), [
    "root_not_object ",
  ]);
});

test("lintTools: required names not in properties, bad patterns, unresolved refs, unsupported keywords", () => {
  const issues = lintTools([{
    name: "a",
    description: "d",
    input_schema: {
      type: "object",
      properties: {
        q: { type: "string", pattern: "([a-z" },
        r: { $ref: "#/$defs/nope" },
        s: { type: "array", contains: { type: "string" } },
        t: { type: "object", patternProperties: { "(": {} } },
        u: { $ref: "#/$defs/ok" },
      },
      $defs: { ok: { type: "string" } },
      required: ["q", "missing"],
    },
  }]);
  assert.deepEqual(codes(issues).sort(), [
    "invalid_pattern /properties/q/pattern",
    "invalid_pattern /properties/t/patternProperties/(",
    "required_not_in_properties /required",
    "unresolved_ref /properties/r/$ref",
    "unsupported_keyword /properties/s/contains",
  ]);
  assert.match(issues.find((i) => i.code === "required_not_in_properties")!.message, /"missing"/);
  // a bad value the walker does not know about still surfaces through the compiler
  assert.deepEqual(
    codes(lintTools([{ name: "a", description: "d", input_schema: { type: "object", minLength: -1 } }])),
    ["invalid_schema /minLength"],
  );
});

test("lintTools: OpenAI strict mode incompatibilities, only when strict: true", () => {
  const loose = {
    type: "object",
    properties: {
      q: { type: "string" },
      opt: { type: "integer" },
      nested: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      pick: { oneOf: [{ type: "string" }, { type: "integer" }] },
    },
    required: ["q", "nested", "pick"],
    additionalProperties: false,
  };
  assert.deepEqual(
    lintTools([{ type: "function", function: { name: "a", description: "d", parameters: loose } }]),
    [],
  );
  const strict = lintTools([{
    type: "function",
    function: { name: "a", description: "d", parameters: loose, strict: true },
  }]);
  assert.deepEqual(codes(strict).sort(), [
    "strict_incompatible /properties/nested",
    "strict_incompatible /properties/opt",
    "strict_incompatible /properties/pick/oneOf",
  ]);
  const responses = lintTools([{
    type: "function",
    name: "a",
    description: "d",
    strict: true,
    parameters: { anyOf: [{ type: "object" }] },
  }]);
  assert.ok(codes(responses).includes("strict_incompatible "));
});

test("lintTools: never throws on junk", () => {
  assert.deepEqual(codes(lintTools([5, null] as unknown[])), [
    "invalid_declaration ",
    "invalid_declaration ",
  ]);
  assert.deepEqual(codes(lintTools("x" as unknown as unknown[])), ["invalid_declaration "]);
});

test("lintTools: a keyword no type of its schema holds is reported as having no effect", () => {
  const properties = {
    a: { type: ["string", "boolean"], minimum: 1 },
    b: { type: "string", minimum: 1, maxItems: 2 },
    c: { type: ["number", "null"], minLength: 1, format: "date" },
    d: { type: "boolean", format: "int32", minProperties: 1 },
    // (each keyword here holds a type its schema allows, or the schema has no type: no report)
    e: { type: ["string", "integer"], minimum: 1, maxLength: 9, format: "date" },
    f: { type: "integer", format: "int32" },
    g: { minimum: 1 },
    h: { type: "array", items: { type: "string" }, minItems: 1 },
  };
  const issues = lintTools([{ name: "t", description: "d", parameters: { type: "object", properties } }])
    .filter((i) => i.code === "keyword_without_effect");
  assert.deepEqual(issues.map((i) => [i.path, i.severity]), [
    ["/properties/a/minimum", "warning"],
    ["/properties/b/minimum", "warning"],
    ["/properties/b/maxItems", "warning"],
    ["/properties/c/minLength", "warning"],
    ["/properties/c/format", "warning"],
    ["/properties/d/minProperties", "warning"],
    ["/properties/d/format", "warning"],
  ]);
  assert.equal(
    issues[0].message,
    'keyword "minimum" has no effect: it applies to numbers only, and type ["string","boolean"] allows none; ' +
      "allow such a type or drop the keyword",
  );
});

test("lintTools: a type list with a hole or past JSON's seven types reports no keyword as without effect", () => {
  const holed: unknown[] = ["string"];
  holed[2] = "boolean"; // (a hole at 1: JSON sends it as null, no type)
  const long = ["string", "boolean", "null", "array", "object", "string", "boolean", "null"];
  const issues = lintTools([{
    name: "t",
    description: "d",
    parameters: {
      type: "object",
      properties: { a: { type: holed, minimum: 1 }, b: { type: long, minimum: 1 } },
    },
  }]);
  assert.deepEqual(issues.filter((i) => i.code === "keyword_without_effect"), []);
});
