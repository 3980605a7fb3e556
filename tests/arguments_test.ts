/**
 * A wrong argument from the developer (null options, a missing verdict, a number for a date) is a TypeError
 * that names the function and the argument, never an engine message such as "Cannot read properties of
 * null". (Model output is another matter: it never throws, it becomes findings; the other tests hold that.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as mod from "../mod.ts";
import { createMcpGuard, guardMcpTransport } from "../mcp.ts";

const ok = { exitCode: 0, signal: null, stdout: '{"ok":true,"items":[1]}' };
const tools = [{ name: "t", parameters: { type: "object" } }];

/** [call, the message it must throw]: each was an engine message before. */
const CASES: [string, () => unknown, RegExp][] = [
  [
    "classify(null)",
    () => mod.classify(null as never),
    /^classify\(\): outcome must be an object, got null$/,
  ],
  ["classify({})", () => mod.classify({} as never), /^classify\(\): outcome\.stdout must be bytes or text/],
  [
    "classify(_, null)",
    () => mod.classify(ok as never, null as never),
    /^classify\(\): options must be an object/,
  ],
  [
    "describe(_, null)",
    () => mod.describe(mod.classify(ok as never), null as never),
    /^describe\(\): options/,
  ],
  [
    "describeVerdict()",
    () => mod.describeVerdict(undefined as never),
    /^describeVerdict\(\): verdict must be/,
  ],
  [
    "toolResultMessage(openai)",
    () => mod.toolResultMessage("openai", undefined as never),
    /^toolResultMessage\(\): input must be an object, got undefined$/,
  ],
  [
    "extractToolCalls(_, null)",
    () => mod.extractToolCalls("x", null as never),
    /^extractToolCalls\(\): options/,
  ],
  ["scan(_, [])", () => mod.scan("x", [] as never), /^scan\(\): options must be an object, got a list$/],
  ["compileSchema(_, null)", () => mod.compileSchema({}, null as never), /^compileSchema\(\): options/],
  [
    "createValidator(_, 5)",
    () => mod.createValidator(tools, 5 as never),
    /^createValidator\(\): options.*got 5$/,
  ],
  ["vet(null)", () => mod.vet(null as never), /^vet\(\): options must be an object, got null$/],
  ["parseSince(5)", () => mod.parseSince(5 as never), /^parseSince\(\): the text must be a string .* got 5$/],
  ["createStats(null)", () => mod.createStats(null as never), /^createStats\(\): options must be an object/],
  [
    "renderHtmlReport({})",
    () => mod.renderHtmlReport({} as never),
    /^renderHtmlReport\(\): report must be what/,
  ],
  [
    "renderHtmlReport(_, null)",
    () => mod.renderHtmlReport(mod.createStats().finish(), null as never),
    /^renderHtmlReport\(\): options must be an object/,
  ],
  [
    "createMcpGuard(null)",
    () => createMcpGuard(null as never),
    /^createMcpGuard\(\): options must be an object/,
  ],
  [
    "guardMcpTransport(_, 7)",
    () => guardMcpTransport({} as never, 7 as never),
    /^createMcpGuard\(\): options/,
  ],
];

test("public functions: a wrong argument is a TypeError naming the function and the argument", () => {
  for (const [name, call, message] of CASES) {
    assert.throws(call, (e: unknown) => {
      assert.ok(e instanceof TypeError, `${name}: a TypeError`);
      assert.match(e.message, message, name);
      return true;
    });
  }
});

test("public async functions: a wrong argument rejects with a TypeError naming it", async () => {
  await assert.rejects(
    mod.statsFromChunks(null as never),
    /^TypeError: statsFromChunks\(\): chunks must be an/,
  );
  await assert.rejects(
    mod.statsFromChunks([], null as never),
    /^TypeError: statsFromChunks\(\): options must/,
  );
  await assert.rejects(
    mod.validateToolCalls([], null as never),
    /^TypeError: validateToolCalls\(\): options must/,
  );
});

test("options left out still mean the defaults", () => {
  assert.equal(mod.classify(ok as never).ok, true);
  assert.deepEqual(mod.scan("hello").findings, []);
  assert.deepEqual(mod.extractToolCalls("no calls here"), []);
  assert.equal(mod.createValidator(tools).validate([{ name: "t", arguments: {} }]).calls[0].allowed, true);
});
