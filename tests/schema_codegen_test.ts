// The generated code and the interpreter must say the same thing; these cases once made them differ.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSchema } from "../validate.ts";

test("generate: a message quoting the word sv does not make the reporter show a non-string value as one", () => {
  // the generated reporter used to look for `sv` in the message text to decide whether to compute the
  // shown string, and then called the string-only helper on an array: a TypeError instead of a finding
  for (const schema of [{ enum: ["sv", "en"] }, { const: "sv" }, { properties: { a: { enum: ["sv"] } } }]) {
    for (const value of [[1], null, { a: [1] }, { a: null }, { a: {} }, 5]) {
      const generated = compileSchema(schema)(value);
      const interpreted = compileSchema(schema, { codegen: false })(value);
      assert.deepEqual(generated, interpreted, JSON.stringify({ schema, value }));
    }
  }
  assert.equal(compileSchema({ enum: ["sv", "en"] })([1])[0].received, "array");
});

test("createValidator: null for an enum of language codes including sv gets the enum finding", async () => {
  const { createValidator } = await import("../validate.ts");
  const validator = createValidator([{
    name: "translate",
    parameters: { type: "object", properties: { lang: { enum: ["sv", "en"] } } },
  }]);
  const [finding] =
    validator.validate([{ id: "c1", function: { name: "translate", arguments: '{"lang":null}' } }])
      .calls[0].findings;
  assert.equal(finding.code, "argument_constraint");
  assert.equal(finding.path, "/lang");
  assert.equal(finding.received, "null null");
});

test("compileSchema: counts of one are singular (1 character, 1 item, 1 property), in both engines", () => {
  const cases: [unknown, unknown, string, string, string][] = [
    [{ minLength: 1 }, "", '"/x" must be at least 1 character long.', "at least 1 character", "0 characters"],
    [{ maxLength: 0 }, "a", '"/x" must be at most 0 characters long.', "at most 0 characters", "1 character"],
    [
      { minLength: 3 },
      "ab",
      '"/x" must be at least 3 characters long.',
      "at least 3 characters",
      "2 characters",
    ],
    [{ minItems: 1 }, [], '"/x" must have at least 1 item.', "at least 1 item", "0 items"],
    [{ maxItems: 1 }, [1, 2], '"/x" must have at most 1 item.', "at most 1 item", "2 items"],
    [{ maxItems: 0 }, [1], '"/x" must have at most 0 items.', "at most 0 items", "1 item"],
    [{ minProperties: 1 }, {}, '"/x" must have at least 1 property.', "at least 1 property", "0 properties"],
    [
      { maxProperties: 0 },
      { a: 1 },
      '"/x" must have at most 0 properties.',
      "at most 0 properties",
      "1 property",
    ],
  ];
  for (const [sub, value, message, expected, received] of cases) {
    const schema = { properties: { x: sub } };
    for (const codegen of [true, false]) {
      // static pointer (from the root) and dynamic pointer (inside an array) reporters alike
      for (
        const [s, v, path] of [[schema, { x: value }, "/x"], [{ items: schema }, [{ x: value }], "/0/x"]]
      ) {
        const findings = compileSchema(s, { codegen })(v);
        const label = JSON.stringify({ sub, codegen, path });
        assert.deepEqual(
          findings.map((f) => [f.path, f.message, f.expected, f.received]),
          [[path, message.replace('"/x"', `"${path}"`), expected, received]],
          label,
        );
      }
    }
  }
});

test("compileSchema: the generated key loop reports own keys only, in the interpreter's order", () => {
  // the generated reporter walks keys with for-in (no key array per object): inherited enumerable keys
  // must stay out, and own keys keep Object.keys order (integer-like first, then as written)
  const schema = {
    properties: { a: { type: "string" }, b: { type: "integer" } },
    additionalProperties: false,
  };
  const withInherited = Object.assign(Object.create({ inherited: 1, a: 2 }), { b: "x", c: 3 });
  const parsed = JSON.parse('{"z":1,"2":1,"b":"x","1":2,"__proto__":3,"a":5}');
  const nullProto = Object.assign(Object.create(null), { d: 1, a: 1 });
  for (const value of [withInherited, parsed, nullProto, { a: [withInherited] }]) {
    for (const root of [value, { x: [value] }]) {
      const wrapped = root === value ? schema : { properties: { x: { items: schema } } };
      const generated = compileSchema(wrapped)(root);
      const interpreted = compileSchema(wrapped, { codegen: false })(root);
      assert.deepEqual(generated, interpreted);
    }
  }
  assert.deepEqual(compileSchema(schema)(withInherited).map((f) => f.path), ["/b", "/c"]);
  assert.deepEqual(
    compileSchema(schema)(parsed).map((f) => f.path),
    ["/1", "/2", "/z", "/b", "/__proto__", "/a"],
  );
});
