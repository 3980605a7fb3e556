/**
 * Hostile input to the validator: tools changed after a first call, arguments no model can send, hostile
 * schemas and names. Each test pins a defect found in review 40.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createValidator, validateToolCalls } from "../validate.ts";

test("validateToolCalls sees a tools array changed in place after its first call", async () => {
  const tools: { name: string; input_schema: Record<string, unknown> }[] = [
    { name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } },
    { name: "delete_all", input_schema: { type: "object" } },
  ];
  const del = { name: "delete_all", arguments: "{}" };
  assert.equal((await validateToolCalls([del], { tools })).allowed, true);
  tools.pop();
  assert.equal((await validateToolCalls([del], { tools })).allowed, false, "a removed tool is not allowed");
  tools.push({ name: "delete_all", input_schema: { type: "object" } });
  assert.equal((await validateToolCalls([del], { tools })).allowed, true, "an added tool is allowed");
  tools[1] = { name: "delete_some", input_schema: { type: "object" } };
  assert.equal((await validateToolCalls([del], { tools })).allowed, false, "a replaced tool is not allowed");
  const read = { name: "read_file", arguments: '{"path":"/etc/shadow","x":1}' };
  assert.equal((await validateToolCalls([read], { tools })).allowed, true);
  const props = tools[0].input_schema.properties as Record<string, Record<string, unknown>>;
  props.path.pattern = "^/tmp/";
  tools[0].input_schema.additionalProperties = false;
  const verdict = await validateToolCalls([read], { tools });
  assert.equal(verdict.allowed, false, "a schema tightened in place is in force");
  assert.deepEqual(verdict, createValidator(tools).validate([read]));
});
