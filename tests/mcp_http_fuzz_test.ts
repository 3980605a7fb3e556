/**
 * The HTTP relay's seeded fuzz (`scripts/mcp_http_fuzz.ts`) on a few fixed seeds, and what it found, each as
 * an ordinary test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fuzzOne } from "../scripts/mcp_http_fuzz.ts";
import { type JsonRpcMessage, relayMcpHttp } from "../mcp.ts";
import { errorOf, relayUntilAnswered, scriptedServer } from "./_mcp_http.ts";
import { INIT } from "./_mcp_messages.ts";

test(
  "mcp_http_fuzz: a hostile client and server, seeds 1 to 12, 19 and 61: every request answered once, nothing hangs",
  {
    timeout: 120_000,
  },
  async () => {
    // (10 and 19: a session ended with 404, which the relay would end again with DELETE as it closed, were
    // it not marked ended; 61: the client's answer under the id ["1"], which the server never asked, reached
    // it)
    for (const seed of [...Array.from({ length: 12 }, (_, i) => i + 1), 19, 61]) {
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

test(
  "relayMcpHttp: a batch under the id of a request waiting in an earlier batch: both batches are answered",
  {
    timeout: 30_000,
  },
  async () => {
    const server = await scriptedServer([], (m: JsonRpcMessage, res) => {
      const answer = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { got: m.id } });
      // (the first batch's requests are answered late: the second batch comes while they wait)
      const late = m.id === 2 || m.id === 3 || m.id === 5;
      setTimeout(
        () => res.writeHead(200, { "content-type": "application/json" }).end(answer),
        late ? 100 : 0,
      );
    });
    try {
      const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
      const { received } = await relayUntilAnswered(server.url, [
        ...INIT,
        [ping(2), ping(3)],
        [ping(3), ping(4)],
        [ping(5), ping(5)],
      ]);
      const batches = received.filter((m) => Array.isArray(m)) as unknown as JsonRpcMessage[][];
      const shown = (batch: JsonRpcMessage[]) =>
        batch.map((m) => `${m.id}:${m.result === undefined ? "refused" : "ran"}`).sort().join(" ");
      assert.deepEqual(batches.map(shown).sort(), ["2:ran 3:ran", "3:refused 4:ran", "5:ran 5:refused"]);
    } finally {
      server.stop();
    }
  },
);

test(
  "relayMcpHttp: a line that is not JSON but shows an answer's id the server never asked is no answer to it",
  {
    timeout: 30_000,
  },
  async () => {
    const posted: unknown[] = [];
    const server = await scriptedServer([], (m: JsonRpcMessage, res) => {
      posted.push(m);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }),
      );
    });
    const read: JsonRpcMessage[] = [];
    let answered = () => {};
    const seven = new Promise<void>((resolve) => (answered = resolve));
    const timer = setTimeout(answered, 15_000);
    async function* client() {
      // (a request written in two pieces, an answer of the client's written between them)
      const broken = '{"jsonrpc":"2.0","id":7,"met{"jsonrpc":"2.0","id":"srv-1","result":{}}';
      yield new TextEncoder().encode([...INIT.map((m) => JSON.stringify(m)), broken].join("\n") + "\n");
      await seven;
    }
    try {
      await relayMcpHttp(server.url, {
        input: client(),
        output: (bytes) => {
          for (const line of new TextDecoder().decode(bytes).split("\n").filter(Boolean)) {
            const m = JSON.parse(line) as JsonRpcMessage;
            read.push(m);
            if (m.id === 7) answered();
          }
        },
      });
      assert.deepEqual(posted, [], "no answer to a request the server never asked");
      assert.match(errorOf(read.find((m) => m.id === 7)), /Parse error/);
    } finally {
      clearTimeout(timer);
      server.stop();
    }
  },
);
