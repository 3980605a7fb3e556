/**
 * The HTTP relay's seeded fuzz (`scripts/mcp_http_fuzz.ts`) on a few fixed seeds, and what it found, each as
 * an ordinary test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fuzzOne } from "../scripts/mcp_http_fuzz.ts";
import type { JsonRpcMessage } from "../mcp.ts";
import { relayUntilAnswered, scriptedServer } from "./_mcp_http.ts";
import { INIT } from "./_mcp_messages.ts";

test(
  "mcp_http_fuzz: a hostile client and server, seeds 1 to 12: every request answered once, nothing hangs",
  {
    timeout: 120_000,
  },
  async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { problems, trace } = await fuzzOne(seed);
      assert.deepEqual(problems, [], `seed ${seed}:\n${trace.slice(-40).join("\n")}`);
    }
  },
);

test('relayMcpHttp: ids that are no string or number ([1] and "1", two objects) are told apart', {
  timeout: 30_000,
}, async () => {
  const server = await scriptedServer([], (m: JsonRpcMessage, res) => {
    const answer = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { got: m.id } });
    // (the first of each pair is answered late: the second comes while it waits)
    const late = JSON.stringify(m.id) === "[1]" || JSON.stringify(m.id) === '{"a":1}';
    setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(answer), late ? 100 : 0);
  });
  try {
    const ping = (id: unknown) => ({ jsonrpc: "2.0", id, method: "ping" });
    const { received } = await relayUntilAnswered(server.url, [
      ...INIT,
      ping([1]),
      ping("1"),
      ping({ a: 1 }),
      ping({ b: 2 }),
    ]);
    const answers = received.filter((m) => m.method === undefined && m.id !== 0);
    const byId = (id: unknown) => answers.filter((m) => JSON.stringify(m.id) === JSON.stringify(id));
    assert.deepEqual(byId("1").map((m) => m.result), [{ got: "1" }], "its own answer, once");
    // (the server's answers under them are no answers MCP knows: the relay answers each with an error)
    for (const id of [[1], { a: 1 }, { b: 2 }]) {
      assert.equal(byId(id).length, 1, `${JSON.stringify(id)} once`);
    }
  } finally {
    server.stop();
  }
});
