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
