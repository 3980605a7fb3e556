// The gate reads calls written into text against the request's own tools (issue 19): values written as
// text are typed by the declared schema, so a string parameter stays a string.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gateCompletion } from "../gate.ts";

const request = {
  model: "qwen3-coder",
  messages: [{ role: "user", content: "Look up order 5123123" }],
  tools: [{
    type: "function",
    function: {
      name: "lookup_order",
      parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
  }],
};

const written =
  "<tool_call>\n<function=lookup_order>\n<parameter=id>\n5123123\n</parameter>\n</function>\n</tool_call>";

test("gateCompletion: a call written in text is typed by the request's tools (a string parameter stays a string)", async () => {
  const response = {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 0,
    model: "qwen3-coder",
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: written } }],
  };
  const gated = await gateCompletion(request, response);
  assert.equal(gated.verdict.calls.length, 1);
  assert.equal(gated.verdict.calls[0].name, "lookup_order");
  assert.equal(gated.verdict.allowed, true, JSON.stringify(gated.verdict.calls[0].findings));
  assert.deepEqual(gated.verdict.calls[0].arguments, { id: "5123123" });
});
