/**
 * The validator's `defaultsSatisfyRequired` option, which the MCP relay turns on so that a call leaving out
 * a required property that declares a default (Playwright's zod schemas) works through the relay as it does
 * directly, and the `relaxed` report the relay keeps in its `tools` event.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createValidator, validateToolCalls } from "../validate.ts";
import { createMcpGuard } from "../mcp.ts";

/** A Playwright-like tool: `type` is required and has a default, `name` is required without one. */
function screenshotTool() {
  return {
    name: "screenshot",
    inputSchema: {
      type: "object",
      properties: {
        type: { type: "string", enum: ["png", "jpeg"], default: "png" },
        name: { type: "string" },
        clip: {
          type: "object",
          properties: { x: { type: "number", default: 0 }, y: { type: "number" } },
          required: ["x", "y"],
        },
      },
      required: ["type", "name"],
    },
  };
}

test("createValidator: defaultsSatisfyRequired lets a defaulted required property be left out, at any depth", () => {
  const tools = [screenshotTool()];
  const strict = createValidator(tools);
  const lenient = createValidator(tools, { defaultsSatisfyRequired: true });
  const leftOut = { name: "screenshot", arguments: { name: "page", clip: { y: 1 } } };
  const strictFindings = strict.validate([leftOut]).calls[0].findings;
  assert.deepEqual(strictFindings.map((f) => [f.code, f.path]).sort(), [
    ["missing_required_argument", "/clip/x"],
    ["missing_required_argument", "/type"],
  ]);
  assert.deepEqual(lenient.validate([leftOut]).calls[0].findings, []);
});

test("createValidator: defaultsSatisfyRequired still requires what has no default, and still checks types", () => {
  const lenient = createValidator([screenshotTool()], { defaultsSatisfyRequired: true });
  const [noName] = lenient.validate([{ name: "screenshot", arguments: {} }]).calls;
  assert.deepEqual(noName.findings.map((f) => [f.code, f.path]), [["missing_required_argument", "/name"]]);
  const [badType] = lenient.validate([{ name: "screenshot", arguments: { name: "p", type: "gif" } }]).calls;
  assert.deepEqual(badType.findings.map((f) => [f.code, f.path]), [["argument_constraint", "/type"]]);
});

test("createValidator: defaultsSatisfyRequired never changes the declared schema", () => {
  const tool = screenshotTool();
  const before = JSON.stringify(tool);
  createValidator([tool], { defaultsSatisfyRequired: true });
  assert.equal(JSON.stringify(tool), before);
});

test("validateToolCalls: the option is part of the validator cache key", async () => {
  const tools = [screenshotTool()];
  const call = { name: "screenshot", arguments: { name: "page" } };
  assert.equal((await validateToolCalls([call], { tools })).allowed, false);
  assert.equal((await validateToolCalls([call], { tools, defaultsSatisfyRequired: true })).allowed, true);
  assert.equal((await validateToolCalls([call], { tools })).allowed, false);
});

test("McpGuard: calls leave out defaulted required properties; the tools summary reports each leniency", () => {
  const guard = createMcpGuard();
  const summary = guard.setTools([screenshotTool()]);
  assert.deepEqual(summary.relaxed, [
    {
      name: "screenshot",
      pointer: "/properties/clip/required",
      note: 'required property "x" declares a default, so it may be omitted',
    },
    {
      name: "screenshot",
      pointer: "/required",
      note: 'required property "type" declares a default, so it may be omitted',
    },
  ]);
  assert.equal(guard.checkCall({ name: "screenshot", arguments: { name: "page" } }).allowed, true);
  assert.equal(guard.checkCall({ name: "screenshot", arguments: {} }).allowed, false);
});
