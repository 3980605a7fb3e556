/**
 * Schemas no walk can read as a tree, whatever entry point is handed them: each gets an error that names the
 * place and says what to do, never a hang or a stack overflow. Here, a chain too deep for any recursive walk
 * (found by review 56 of stop 53).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSchema, createValidator, lintTools, validateToolCalls } from "../validate.ts";
import { createMcpGuard } from "../mcp.ts";

/** A chain 100 000 levels deep: a tree (JSON could give it), but no recursive walk reaches its end. */
function deepChain(): Record<string, unknown> {
  let s: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 100_000; i++) s = { type: "object", properties: { a: s } };
  return s;
}

/** A tool list of one tool named "t" whose schema is `schema`. */
const toolsOf = (schema: unknown) => [{ name: "t", parameters: schema }];

test("a chain 100 000 levels deep gets an error that says so from every entry point, never a stack overflow", async () => {
  const chain = deepChain();
  const deep = (e: unknown) => {
    assert.ok(e instanceof Error && !(e instanceof RangeError), String(e));
    assert.match(e.message, /nests too deeply/);
    return true;
  };
  assert.throws(() => compileSchema(chain), deep);
  assert.throws(() => createValidator(toolsOf(chain)), deep);
  await assert.rejects(validateToolCalls([{ name: "t", arguments: "{}" }], { tools: toolsOf(chain) }), deep);
  assert.match(lintTools(toolsOf(chain)).map((i) => i.message).join("\n"), /nests too deeply/);
  for (const options of [{}, { strict: true }]) {
    const summary = createMcpGuard(options).setTools([{ name: "t", inputSchema: chain }]);
    assert.match(summary.unchecked[0].error, /nests too deeply/);
  }
  const pinning = createMcpGuard({ pins: { server: "node server.js" } });
  assert.throws(() => pinning.setTools([{ name: "t", inputSchema: chain }]), (e) => {
    deep(e);
    assert.match((e as Error).message, /^tool "t": its definition nests too deeply to pin/);
    return true;
  });
});
