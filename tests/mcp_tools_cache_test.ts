/**
 * The MCP guard compiles a tools listing's schemas once: the same schemas listed again (a server answers each
 * tools/list alike, each session lists anew) reuse the validator, and a listing that changed is enforced as
 * listed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createMcpGuard } from "../mcp.ts";
import { validateToolCalls } from "../validate.ts";

/** A listing of `count` tools whose `q` holds at most `most` characters (`tag` sets it apart from others). */
function listing(tag: string, most: number, count = 3) {
  return Array.from({ length: count }, (_, i) => ({
    name: `t${i}`,
    description: `Looks up ${tag}.`,
    inputSchema: {
      type: "object",
      properties: { q: { type: "string", maxLength: most, description: tag }, n: { type: "integer" } },
      required: ["q"],
      additionalProperties: false,
    },
  }));
}

/** How many functions the runtime's `Function` makes (the schema compiler's generated code) while `run` runs. */
function functionsMade(run: () => void): number {
  const F = globalThis.Function;
  let made = 0;
  try {
    globalThis.Function = function (...args: string[]) {
      made++;
      return F(...args);
    } as unknown as FunctionConstructor;
    run();
  } finally {
    globalThis.Function = F;
  }
  return made;
}

test("McpGuard: the same tools listed again, by another guard too, are not compiled again", () => {
  const tag = `cache-${Math.random()}`;
  const first = createMcpGuard();
  assert.ok(functionsMade(() => first.setTools(listing(tag, 3))) > 0); // (the count sees the compile)
  const again = createMcpGuard();
  assert.equal(functionsMade(() => again.setTools(listing(tag, 3))), 0);
  assert.equal(again.checkCall({ name: "t1", arguments: { q: "abcd" } }).allowed, false);
  assert.equal(again.checkCall({ name: "t1", arguments: { q: "abc" } }).allowed, true);
});

test("McpGuard: a listing whose schemas changed is enforced as listed, and the earlier one again after it", () => {
  const tag = `changed-${Math.random()}`;
  const guard = createMcpGuard();
  const call = { name: "t2", arguments: { q: "abcd" } };
  guard.setTools(listing(tag, 3));
  assert.equal(guard.checkCall(call).allowed, false);
  guard.setTools(listing(tag, 10));
  assert.equal(guard.checkCall(call).allowed, true);
  guard.setTools(listing(tag, 3));
  assert.equal(guard.checkCall(call).allowed, false);
  // (a tool more is a listing of its own: its schema is enforced too)
  guard.setTools(listing(tag, 3, 4));
  assert.equal(guard.checkCall({ name: "t3", arguments: { q: "abcd" } }).allowed, false);
  assert.equal(guard.checkCall({ name: "t3", arguments: { q: "ab", n: 1.5 } }).allowed, false);
});

test("McpGuard: the listings kept hold at most 4 Mi characters together, the least recently used dropped first", () => {
  // (a server's listing may be 64 MiB: 64 listings of 0.8 MB of schemas kept 320 MB after their guards were gone)
  const tag = `large-${Math.random()}`;
  const large = (i: number) => [{
    name: "t",
    inputSchema: { type: "object", $comment: `${tag}-${i}-`.padEnd(2 ** 18, "x"), properties: { q: {} } },
  }];
  createMcpGuard().setTools(large(0));
  assert.equal(functionsMade(() => createMcpGuard().setTools(large(0))), 0); // (kept)
  for (let i = 1; i <= 16; i++) createMcpGuard().setTools(large(i)); // (4 Mi characters more)
  assert.ok(functionsMade(() => createMcpGuard().setTools(large(0))) > 0);
  assert.equal(functionsMade(() => createMcpGuard().setTools(large(16))), 0); // (the newest stays)
});

test("McpGuard: the listings a server sends do not push out the tools validateToolCalls keeps", async () => {
  // (a gate reads its tools anew from each request: they are found by their text, which a server answering
  // tools/list with 64 new listings pushed out, so each request compiled them again)
  const tag = `app-${Math.random()}`;
  const tools = () => [{ name: "search", parameters: { type: "object", properties: { q: { const: tag } } } }];
  const call = [{ name: "search", arguments: { q: "x" } }];
  assert.equal((await validateToolCalls(call, { tools: tools() })).allowed, false);
  for (let i = 0; i < 64; i++) createMcpGuard().setTools(listing(`${tag}-${i}`, 3, 1));
  let verdict: Promise<unknown> | undefined;
  assert.equal(functionsMade(() => verdict = validateToolCalls(call, { tools: tools() })), 0);
  assert.equal(((await verdict) as { allowed: boolean }).allowed, false);
});

test("McpGuard: a listing in use stays kept while other listings come and go", () => {
  // (the cache is every guard's: a busy server's listing, listed again by each of its sessions, must not be
  // compiled again because 64 other listings came once each since it was first compiled)
  const tag = `busy-${Math.random()}`;
  createMcpGuard().setTools(listing(tag, 3));
  for (let i = 0; i < 200; i++) {
    createMcpGuard().setTools(listing(`${tag}-churn-${i}`, 3, 1));
    if (i % 16 === 0) {
      assert.equal(functionsMade(() => createMcpGuard().setTools(listing(tag, 3))), 0, `${i}`);
    }
  }
  assert.equal(functionsMade(() => createMcpGuard().setTools(listing(tag, 3))), 0);
  // (and one no longer listed is dropped: the cache stays bounded)
  assert.ok(functionsMade(() => createMcpGuard().setTools(listing(`${tag}-churn-0`, 3, 1))) > 0);
});
