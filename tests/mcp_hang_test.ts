/**
 * Issue 16, "never leave a request hanging": an answer over the size limit, a batch, a batch element that is
 * not an object: every request gets an answer.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createMcpGuard,
  type JsonRpcMessage,
  type McpEvent,
  type McpFrame,
  type McpRelayOptions,
  relayMcp,
} from "../mcp.ts";
import { idFromEdges, type LineEdges, unwritable } from "../_mcp/jsonrpc.ts";
import { createFramer, EdgeKeeper } from "../_mcp/framing.ts";
import {
  ClientFeed,
  encodeJson,
  oversizedFromServer,
  unwrittenFromClient,
  unwrittenFromServer,
} from "../_mcp/framing.ts";
import { INIT } from "./_mcp_messages.ts";
import { errorOf } from "./_mcp_http.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const EVERYTHING = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A server that answers each request the way the MCP SDK writes answers (`id` last), `size` chars long. */
const BIG_ANSWERS = `
let buffered = "";
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  for (let nl; (nl = buffered.indexOf("\\n")) >= 0; buffered = buffered.slice(nl + 1)) {
    const m = JSON.parse(buffered.slice(0, nl));
    const text = "x".repeat(m.params.size);
    process.stdout.write(JSON.stringify({ result: { content: [{ type: "text", text }] }, jsonrpc: "2.0", id: m.id }) + "\\n");
  }
});`;

/** A line a test's client writes as it is (JSON that `JSON.stringify` would not write, or not JSON). */
class RawLine {
  constructor(readonly text: string) {}
}

/** In a test's client lines: wait until what came back so far passes `ready` before writing the next. */
class WaitFor {
  constructor(readonly ready: (received: unknown[]) => boolean) {}
}

/**
 * Relay `lines` from a client that stays until it has `expect` answers (a count, or a test of what came so
 * far) or `waitMs` (15 s) have passed; returns what came back. `limits` go to the relay as they are. A line is
 * written as JSON, or as it is when it is a {@linkcode RawLine}; a {@linkcode WaitFor} holds the next ones back.
 */
async function exchange(
  command: string,
  args: string[],
  lines: unknown[],
  expect: number | ((received: unknown[]) => boolean),
  limits: Pick<McpRelayOptions, "maxMessageBytes" | "toolsTimeoutMs"> = {},
  waitMs = 15_000,
): Promise<unknown[]> {
  const received: unknown[] = [];
  let done = () => {};
  const enough = new Promise<void>((resolve) => (done = resolve));
  const timer = setTimeout(done, waitMs);
  let waitFor: { ready: (received: unknown[]) => boolean; go: () => void } | undefined;
  async function* client() {
    for (const line of lines) {
      if (line instanceof WaitFor) {
        await Promise.race([enough, new Promise<void>((go) => (waitFor = { ready: line.ready, go }))]);
        continue;
      }
      yield enc.encode((line instanceof RawLine ? line.text : JSON.stringify(line)) + "\n");
    }
    await enough;
  }
  let buffered = "";
  await relayMcp({
    command,
    args,
    input: client(),
    stderr: "ignore",
    ...limits,
    output: (bytes) => {
      buffered += dec.decode(bytes);
      for (let nl; (nl = buffered.indexOf("\n")) >= 0; buffered = buffered.slice(nl + 1)) {
        received.push(JSON.parse(buffered.slice(0, nl)));
        if (waitFor?.ready(received)) waitFor.go();
        if (typeof expect === "number" ? received.length >= expect : expect(received)) done();
      }
    },
  });
  clearTimeout(timer);
  return received;
}

/** The id {@linkcode idFromEdges} reads in the line `s`, too long for a framer that keeps 50 bytes. */
function overlongId(s: string): ReturnType<typeof idFromEdges> {
  let found: ReturnType<typeof idFromEdges>;
  const framer = createFramer({ maxLineBytes: 50, onOverflow: (_n, e) => (found = idFromEdges(e)) });
  framer.push(enc.encode(s + "\n"));
  return found;
}

test("idFromEdges: reads the id at either end of an over-long line, never a nested one", () => {
  const pad = "y".repeat(10_000);
  assert.deepEqual(overlongId(`{"result":{"id":5,"t":"${pad}"},"jsonrpc":"2.0","id":7}`), {
    id: 7,
    request: false,
  });
  assert.deepEqual(overlongId(`{"jsonrpc":"2.0","id":"a\\"b","result":"${pad}"}`), {
    id: 'a"b',
    request: false,
  });
  assert.deepEqual(
    overlongId(`{"method":"sampling/createMessage","params":"${pad}","jsonrpc":"2.0","id":3}`),
    {
      id: 3,
      request: true,
    },
  );
  assert.equal(overlongId(`{"result":{"id":5,"t":"${pad}"}}`), undefined);
  // Keys are read as JSON reads them; a quote a string escapes ends nothing.
  assert.deepEqual(overlongId(`{"params":"${pad}","m\\u0065thod":"x","\\u0069d":"\\u0061\\\\"}`), {
    id: "a\\",
    request: true,
  });
  assert.equal(overlongId(`{"result":"${pad}\\",\\"id\\":3}"}`), undefined);
});

test("idFromEdges: of two ids the last counts, as JSON reads it; a quote escaped at the cut is no key's", () => {
  const pad = "y".repeat(10_000);
  const twice = `{"id":1,"method":"x","params":"${pad}","id":2}`;
  assert.equal((JSON.parse(twice) as JsonRpcMessage).id, 2);
  assert.deepEqual(overlongId(twice), { id: 2, request: true, earlierId: 1 });
  // An id whose value is no id a message could have replaces the one before it: none is read.
  assert.equal(overlongId(`{"id":1,"id":{"n":1},"params":"${pad}"}`), undefined);
  // The last 4096 bytes start right after a backslash: their `"id":5` is the end of the key `k…k\"id`.
  const cut = `{"params":{},"id":1,"${"k".repeat(8000)}\\"id":5,"z":"${"z".repeat(4082)}"}`;
  assert.equal(cut.length - cut.lastIndexOf("\\") - 1, 4096);
  assert.equal((JSON.parse(cut) as JsonRpcMessage).id, 1);
  assert.equal(overlongId(cut), undefined, "the id in the middle is not seen; 5 is no id of it");
});

test("oversizedFromServer: an answer showing two ids answers the request waiting for either", () => {
  const pad = "y".repeat(10_000);
  for (
    const [waiting, line] of [[7, `{"jsonrpc":"2.0","id":7,"result":"${pad}","id":8}`], [
      8,
      `{"id":7,"result":"${pad}","id":8}`,
    ]] as const
  ) {
    let edges: LineEdges | undefined;
    createFramer({ maxLineBytes: 50, onOverflow: (_n, e) => (edges = e) }).push(enc.encode(line + "\n"));
    const answered: unknown[] = [];
    oversizedFromServer(line.length, edges!, 50, {
      toServer: () => {},
      answerWithError: (id) => id === waiting && answered.push(id) > 0,
    });
    assert.deepEqual(answered, [waiting], line.slice(0, 30));
  }
});

test("EdgeKeeper: a batch is read past blanks before it (an HTTP body may start with a newline); of two ids the last counts", () => {
  const keeper = new EdgeKeeper();
  keeper.reset(enc.encode('\n [{"id":1,"method":"a"},{"id":2,"id":null,"method":"b"},{"id":"x","id":3}]'));
  assert.deepEqual(keeper.edges().batch, [{ id: 1, request: true }, { id: 3, request: false }]);
});

test("relayMcp: an answer over maxMessageBytes answers the pending request with a JSON-RPC error", {
  timeout: 30_000,
}, async () => {
  const call = (id: number, size: number) => ({ jsonrpc: "2.0", id, method: "tools/x", params: { size } });
  const answers = await exchange(
    "node",
    ["-e", BIG_ANSWERS],
    [call(1, 10), call(2, 200_000), call(3, 10)],
    3,
    { maxMessageBytes: 100_000 },
  ) as JsonRpcMessage[];
  // JSON-RPC answers are matched by id: the relay's own error for 2 may overtake the server's answer to 1.
  const byId = new Map(answers.map((a) => [a.id, a]));
  assert.deepEqual([...byId.keys()].sort(), [1, 2, 3]);
  const error = byId.get(2)!.error as { code: number; message: string };
  assert.equal(error.code, -32603);
  assert.match(error.message, /exceeds the relay's limit of 100000 bytes/);
  assert.ok(byId.get(1)!.result !== undefined, "the answer before the oversized one arrives");
  assert.ok(byId.get(3)!.result !== undefined, "the stream goes on after the dropped line");
});

test("relayMcp: a batch to server-everything (which ignores batches) is answered with one array", {
  timeout: 120_000,
}, async () => {
  const batch = [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
    { jsonrpc: "2.0", id: "two", method: "tools/list" },
    7,
  ];
  // server-everything also sends notifications of its own: wait for the array itself.
  const answers = await exchange(
    "node",
    [EVERYTHING, "stdio"],
    [...INIT, batch],
    (r) => r.some(Array.isArray),
    {},
    // A real Node server, started under Wine on a busy machine, took over 15 s to list its tools: the wait
    // only bounds a failure, so it allows for that.
    90_000,
  );
  const array = answers.find(Array.isArray) as JsonRpcMessage[] | undefined;
  assert.ok(array, `one answer is an array: ${JSON.stringify(answers).slice(0, 300)}`);
  assert.deepEqual(array.map((a) => a.id).sort(), [1, null, "two"].sort());
  assert.ok(Array.isArray((array.find((a) => a.id === "two")!.result as { tools: unknown[] }).tools));
  assert.equal((array.find((a) => a.id === null)!.error as { code: number }).code, -32600);
});

test("McpSession: with batches split, a rejected call and the server's answers come back as one array", () => {
  const toServer: McpFrame[] = [];
  const toClient: McpFrame[] = [];
  const guard = createMcpGuard({ batches: "split" });
  const session = guard.connect({
    toServer: (f) => void toServer.push(f),
    toClient: (f) => void toClient.push(f),
  });
  guard.setTools([{
    name: "echo",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
  }]);
  const call = (id: number, text: unknown) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text } },
  });
  session.fromClient({ message: [call(1, "a"), call(2, 5)] });
  assert.deepEqual(toServer.map((f) => (f.message as JsonRpcMessage).id), [1]);
  assert.equal(toClient.length, 0, "the batch's answer waits for the server");
  session.fromServer({ message: { jsonrpc: "2.0", id: 1, result: { content: [] } } });
  assert.equal(toClient.length, 1);
  const batch = toClient[0].message as JsonRpcMessage[];
  assert.deepEqual(batch.map((a) => a.id), [2, 1]);
  // The server goes away with a batch half answered: the rest is answered too, still as one array.
  session.fromClient({ message: [call(3, "b"), call(4, "c")] });
  session.fromServer({ message: { jsonrpc: "2.0", id: 4, result: { content: [] } } });
  session.serverClosed("exited with code 1");
  assert.deepEqual((toClient[1].message as JsonRpcMessage[]).map((a) => a.id), [4, 3]);
  // An empty batch is an Invalid Request.
  session.fromClient({ message: [] });
  assert.equal(((toClient[2].message as JsonRpcMessage).error as { code: number }).code, -32600);
});

test(
  "relayMcp: a server whose tool list has no last page fails the guard's fetch at a bound, not at its timeout",
  {
    timeout: 60_000,
  },
  async () => {
    // Every page has a next cursor: the guard kept every page (hundreds of MiB a second) until it timed out.
    const server = `let n = 0;
  const tools = Array.from({ length: 10 }, (_, i) => ({ name: "t" + i, inputSchema: { type: "object" } }));
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    const result = { tools, nextCursor: "page" + ++n };
    if (m.method === "tools/list") process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n");
  });`;
    let out = "";
    const events: McpEvent[] = [];
    const input = async function* (): AsyncGenerator<Uint8Array> {
      const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t1", arguments: {} } };
      yield new TextEncoder().encode(JSON.stringify(call) + "\n");
      for (let i = 0; i < 2500 && !out.includes('"id":1'); i++) await new Promise((r) => setTimeout(r, 20));
    };
    await relayMcp({
      command: "node",
      args: ["-e", server],
      input: input(),
      output: (bytes) => void (out += new TextDecoder().decode(bytes)),
      onEvent: (e) => void events.push(e),
      stderr: "ignore",
      toolsTimeoutMs: 45_000,
    });
    const answer = JSON.parse(out.split("\n").find((l) => l.includes('"id":1'))!);
    assert.equal(answer.result.isError, true);
    assert.match(answer.result.content[0].text, /tool list runs past 100 pages/);
    assert.deepEqual(events.filter((e) => e.event === "tools_fetch_failed").length, 1);
  },
);

test("relayMcp: the client's answer to a server's request is not held behind the guard's tools/list", {
  timeout: 60_000,
}, async () => {
  // A server that handles one request at a time: during "ask" it says its tools changed and asks the client's
  // model, queueing everything else until the answer comes. A call made meanwhile makes the guard re-read the
  // tools; had the answer waited behind that, neither would come until the guard's fetch timed out.
  const server = `const queue = [];
  let busy = null;
  const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
  const tools = ["ask", "echo"].map((name) => ({ name, inputSchema: { type: "object" } }));
  function handle(m) {
    if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools } });
    if (m.params.name === "echo") return send({ jsonrpc: "2.0", id: m.id, result: { content: [] } });
    busy = m.id;
    send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    send({ jsonrpc: "2.0", id: 1000, method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } });
  }
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.id === 1000 && m.method === undefined) {
      send({ jsonrpc: "2.0", id: busy, result: { content: [] } });
      busy = null;
      while (queue.length > 0) handle(queue.shift());
    } else if (m.method !== undefined && m.id !== undefined) busy === null ? handle(m) : queue.push(m);
  });`;
  const seen: Record<string, unknown>[] = [];
  let buffered = "";
  const until = async (what: (m: Record<string, unknown>) => boolean) => {
    for (let i = 0; i < 2500 && !seen.some(what); i++) await new Promise((r) => setTimeout(r, 20));
  };
  const line = (m: unknown) => new TextEncoder().encode(JSON.stringify(m) + "\n");
  const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name } });
  const input = async function* (): AsyncGenerator<Uint8Array> {
    yield line({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    yield line(call(2, "ask"));
    await until((m) => m.method === "sampling/createMessage");
    yield line(call(3, "echo")); // the tools changed: held while the guard re-reads them
    yield line({
      jsonrpc: "2.0",
      id: 1000,
      result: { role: "assistant", content: { type: "text", text: "ok" } },
    });
    await until((m) => m.id === 3);
  };
  await relayMcp({
    command: "node",
    args: ["-e", server],
    input: input(),
    stderr: "ignore",
    toolsTimeoutMs: 45_000,
    output: (bytes) => {
      buffered += new TextDecoder().decode(bytes);
      for (let nl; (nl = buffered.indexOf("\n")) >= 0; buffered = buffered.slice(nl + 1)) {
        seen.push(JSON.parse(buffered.slice(0, nl)));
      }
    },
  });
  const answer = (id: number) => seen.find((m) => m.id === id) as { result?: { isError?: boolean } };
  assert.deepEqual(answer(2)?.result, { content: [] });
  assert.deepEqual(answer(3)?.result, { content: [] }, JSON.stringify(answer(3)));
});

test("McpSession: a tool list whose pages come without their bytes (a batch, HTTP) still counts toward 256 MiB", () => {
  const toServer: JsonRpcMessage[] = [];
  const toClient: JsonRpcMessage[] = [];
  const session = createMcpGuard().connect({
    toServer: (f) => void toServer.push(f.message as JsonRpcMessage),
    toClient: (f) => void toClient.push(f.message as JsonRpcMessage),
  });
  session.fromClient({
    message: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", arguments: {} } },
  });
  // Three pages of 90 MiB each (one string, shared: the pages cost the relay their JSON, not the test).
  const blob = "x".repeat(90 * 2 ** 20);
  for (let page = 1; page <= 3 && toClient.length === 0; page++) {
    const ask = toServer.at(-1)!;
    const tools = [{ name: page === 1 ? "t" : `t${page}`, inputSchema: { type: "object" }, _meta: { blob } }];
    const result = page < 3 ? { tools, nextCursor: `p${page}` } : { tools };
    session.fromServer({ message: [{ jsonrpc: "2.0", id: ask.id, result }] }); // a batch of one
  }
  assert.equal(toClient.length, 1);
  const answer = toClient[0].result as { isError: boolean; content: { text: string }[] };
  assert.equal(answer.isError, true);
  assert.match(answer.content[0].text, /tool list runs past 100 pages, 10000 tools or 256 MiB/);
});

test("McpSession: a batch of the client's answers to server requests is not held behind the guard's tools/list", () => {
  const toServer: unknown[] = [];
  const session = createMcpGuard().connect({
    toServer: (f) => void toServer.push(f.message),
    toClient: () => {},
  });
  // A call makes the guard fetch the tools; the call waits for them.
  session.fromClient({
    message: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", arguments: {} } },
  });
  assert.equal(toServer.length, 1, "the guard's own tools/list");
  // (the server asked them: the client's answers to requests never asked are not passed on)
  session.fromServer({ message: { jsonrpc: "2.0", id: "s1", method: "elicitation/create", params: {} } });
  session.fromServer({ message: { jsonrpc: "2.0", id: "s2", method: "roots/list" } });
  const answers = [
    { jsonrpc: "2.0", id: "s1", result: { action: "accept" } },
    { jsonrpc: "2.0", id: "s2", result: { roots: [] } },
  ];
  session.fromClient({ message: answers });
  assert.deepEqual(toServer[1], answers, "passed on at once, as a single answer is");
});

test("encodeJson: a message that cannot be written out is left out and told of; an answer gets an error", () => {
  // (a BigInt cannot be written out on any runtime, as a message nested too deeply cannot on some)
  const told: unknown[] = [];
  const tell = (m: unknown) => void told.push(m);
  const answer = { jsonrpc: "2.0", id: 1, result: { n: 1n } };
  const request = { jsonrpc: "2.0", id: 2, method: "ping", params: { n: 1n } };
  const notification = { jsonrpc: "2.0", method: "notifications/message", params: { n: 1n } };
  const fine = { jsonrpc: "2.0", id: 3, result: {} };
  const out = JSON.parse(encodeJson([answer, fine, request, notification], tell)!) as JsonRpcMessage[];
  assert.deepEqual(told, [answer, request, notification]);
  assert.deepEqual(out.map((m) => m.id), [1, 3], "an error in the answer's place; the rest left out");
  // (it said "nests too deeply" of a BigInt, which sent the sender looking for depth)
  assert.equal(
    (out[0].error as { message: string }).message,
    'toolguard: the answer holds a BigInt (its member "n"), which JSON cannot write; it was not passed on',
  );
  assert.equal(encodeJson(request, tell), undefined);
  assert.equal(encodeJson([request, notification], tell), undefined);
  assert.equal(encodeJson(fine), JSON.stringify(fine));
  // Nested too deeply (as the session found it: the runtime's own limit differs), or a loop: each said as is.
  const deep = { jsonrpc: "2.0", id: 4, result: {} };
  unwritable.add(deep);
  const loop: Record<string, unknown> = { jsonrpc: "2.0", id: 4 };
  loop.result = loop;
  const whys = [[deep, /nests too deeply to be written out/], [
    loop,
    /cannot be written out as JSON \(/,
  ]] as const;
  for (const [m, why] of whys) {
    const text = JSON.parse(encodeJson(m)!).error.message;
    assert.match(text, why);
    assert.doesNotMatch(text, /BigInt/);
  }
  // A hook that throws does not make the encoding throw.
  assert.equal(
    encodeJson(request, () => {
      throw new Error("hook");
    }),
    undefined,
  );
});

test("unwrittenFromServer/unwrittenFromClient: a request JSON cannot write is answered saying why", () => {
  const events: McpEvent[] = [];
  const answers: unknown[] = [];
  const request = { jsonrpc: "2.0", id: 5, method: "sampling/createMessage", params: { n: 1n } };
  encodeJson(
    request,
    (m, why) =>
      unwrittenFromServer(
        m,
        { emit: (e) => void events.push(e), toServer: (a) => void answers.push(a) },
        why,
      ),
  );
  encodeJson(request, (m, why) =>
    unwrittenFromClient(m, {
      emit: (e) => void events.push(e),
      answer: (id, code, text) => void answers.push({ id, code, text }),
    }, why));
  const why = 'holds a BigInt (its member "n"), which JSON cannot write';
  assert.deepEqual(events, [
    { event: "stray_message", from: "server", kind: "not_judged", text: why, id: 5 },
    { event: "client_message_refused", kind: "not_json", text: why, id: 5 },
  ]);
  assert.match(
    JSON.stringify(answers[0]),
    /your request holds a BigInt \(its member \\"n\\"\), which JSON cannot/,
  );
  assert.deepEqual(answers[1], {
    id: 5,
    code: -32600,
    text: `toolguard: your request ${why} to the MCP server; it was not passed on`,
  });
});

test("relayMcp: a client request nested too deeply to be written out again is answered, in its batch", {
  timeout: 60_000,
}, async () => {
  // 200 000 levels: JSON.parse reads them; Bun's JSON.stringify cannot write them out again (Deno's can).
  const depth = 200_000;
  const deep = `{"jsonrpc":"2.0","id":5,"method":"ping","params":${'{"a":'.repeat(depth)}1${
    "}".repeat(depth)
  }}`;
  const server = `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }) + "\\n");
  });`;
  let answer: JsonRpcMessage[] | undefined;
  let done = () => {};
  const answered = new Promise<void>((resolve) => (done = resolve));
  const timer = setTimeout(done, 15_000);
  async function* client() {
    yield enc.encode(`[${deep},{"jsonrpc":"2.0","id":6,"method":"ping"}]\n`);
    await answered;
  }
  const events: McpEvent[] = [];
  await relayMcp({
    command: "node",
    args: ["-e", server],
    input: client(),
    stderr: "ignore",
    onEvent: (e) => void events.push(e),
    output: (bytes) => {
      const m = JSON.parse(dec.decode(bytes));
      if (Array.isArray(m)) {
        answer = m;
        done();
      }
    },
  });
  clearTimeout(timer);
  assert.ok(answer !== undefined, "the batch was answered");
  const byId = new Map(answer.map((a) => [a.id, a]));
  assert.deepEqual(byId.get(6)?.result, {});
  const tooDeep = events.filter((e) => e.event === "client_message_refused" && e.kind === "too_deep");
  if (byId.get(5)?.error === undefined) {
    // This runtime writes it out: the server answered it.
    assert.deepEqual(byId.get(5)?.result, {});
    assert.deepEqual(tooDeep, []);
  } else {
    assert.match(
      (byId.get(5)!.error as { message: string }).message,
      /your request nests too deeply to be written out to the MCP server/,
    );
    assert.deepEqual(tooDeep, [{ event: "client_message_refused", kind: "too_deep", id: 5 }]);
  }
});

test("createFramer: the members of an over-long batch show their ids, read as the bytes go by", () => {
  const members = [
    // A string that holds brackets, quotes and "id", and an id nested deeper: neither is the member's.
    `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"id":99,"s":"a \\" ] } , \\"id\\": 5 [{"}}`,
    "7",
    `{"id" : "s9" , "result":{"id":3}}`,
    `{"method":"notifications/x","params":{}}`,
    `{"jsonrpc":"2.0","method":"tools/call","id":2,"params":{"x":[1,{"id":4}]}}`,
    `{"id":{"a":1},"method":"m"}`,
    `{"id":"${"x".repeat(300)}","method":"m"}`,
    `{"idx":8,"method":"m"}`,
    `{"id":-1.5e2,"method":"m","pad":"${"p".repeat(5000)}"}`,
  ];
  const line = `  [${members.join(",")}]`;
  JSON.parse(line); // (valid JSON)
  for (const step of [line.length, 7, 1]) {
    const seen: LineEdges[] = [];
    const framer = createFramer({ maxLineBytes: 100, onOverflow: (_bytes, edges) => void seen.push(edges) });
    const bytes = enc.encode(line + "\n");
    for (let at = 0; at < bytes.length; at += step) framer.push(bytes.subarray(at, at + step));
    assert.deepEqual(seen.map((e) => e.batch), [[
      { id: 1, request: true },
      { id: "s9", request: false },
      { id: 2, request: true },
      { id: -150, request: true },
    ]], `read ${step} bytes at a time`);
  }
  // A line that is no batch shows none.
  const single: LineEdges[] = [];
  const framer = createFramer({ maxLineBytes: 10, onOverflow: (_bytes, edges) => void single.push(edges) });
  framer.push(enc.encode(`{"jsonrpc":"2.0","id":1,"method":"ping","params":[{"id":2}]}\n`));
  assert.equal(single[0].batch, undefined);
});

test("relayMcp: a client request whose id key is escaped (\\u0069d) is answered, too long or not JSON", {
  timeout: 60_000,
}, async () => {
  // (valid JSON, whose keys are "id" and "method": only a reader of the bytes can miss them)
  const pad = "x".repeat(5000);
  const lines = [
    new RawLine(`{"jsonrpc":"2.0","\\u0069d":7,"method":"ping","params":{"pad":"${pad}"}}`),
    new RawLine(
      `{"params":{"pad":"${pad}"},"m\\u0065thod":"ping","jsonrpc":"2.0","\\u0069\\u0064":"\\u0061\\\\"}`,
    ),
    new RawLine(`{"jsonrpc":"2.0","\\u0069d":"n","method":"ping","params":NaN}`),
    new RawLine(`[{"jsonrpc":"2.0","\\u0069d":8,"m\\u0065thod":"ping","params":{"pad":"${pad}"}}]`),
  ];
  const received = await exchange("node", ["-e", "process.stdin.resume()"], lines, 4, {
    maxMessageBytes: 2000,
  }) as (JsonRpcMessage | JsonRpcMessage[])[];
  const ids = received.map((m) => Array.isArray(m) ? m.map((a) => a.id) : m.id);
  assert.deepEqual(ids, [7, "a\\", "n", [8]], "each request is answered under its id");
  const [tooLong, escaped, notJson, batch] = received as JsonRpcMessage[];
  assert.match(errorOf(tooLong), /exceeds the limit of 2000 bytes; not forwarded/);
  assert.match(errorOf(escaped), /exceeds the limit of 2000 bytes; not forwarded/);
  assert.match(errorOf(notJson), /could not read this message as JSON/);
  assert.match(errorOf((batch as unknown as JsonRpcMessage[])[0]), /a batch of .* exceeds the limit/);
});

test("relayMcp: a server message whose id key is escaped (\\u0069d) is answered, too long or not JSON", {
  timeout: 60_000,
}, async () => {
  // To ping 1 the server answers over the limit, to ping 2 with text that is not JSON, each under "\u0069d";
  // then it asks over the limit itself, and tells the client what it gets back.
  const server = `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    const pad = "x".repeat(5000);
    const say = (x) => process.stdout.write(x + "\\n");
    if (m.method === undefined) return say(JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { got: m } }));
    if (m.id === 1) say('{"result":{"pad":"' + pad + '"},"jsonrpc":"2.0","\\\\u0069d":1}');
    if (m.id === 2) {
      say('{"jsonrpc":"2.0","\\\\u0069\\\\u0064":2,"result":NaN}');
      say('{"m\\\\u0065thod":"sampling/createMessage","params":{"pad":"' + pad + '"},"jsonrpc":"2.0","\\\\u0069d":"s1"}');
    }
  });`;
  const pings = [1, 2].map((id) => ({ jsonrpc: "2.0", id, method: "ping" }));
  const told = (r: unknown[]) => (r as JsonRpcMessage[]).filter((m) => m.method !== undefined);
  const received = await exchange(
    "node",
    ["-e", server],
    pings,
    (r) => r.length - told(r).length === 2 && told(r).length === 1,
    { maxMessageBytes: 2000 },
  ) as JsonRpcMessage[];
  const answers = new Map(received.filter((m) => m.method === undefined).map((a) => [a.id, a]));
  assert.match(errorOf(answers.get(1)), /the MCP server's answer of .* exceeds the relay's limit/);
  assert.match(errorOf(answers.get(2)), /the MCP server's answer to ping was not a JSON-RPC answer/);
  const got = told(received).map((m) => (m.params as { got: JsonRpcMessage }).got);
  assert.deepEqual(got.map((m) => m.id), ["s1"], "the server's request is answered");
  assert.match(errorOf(got[0]), /your request of .* exceeds .*; the client never saw it/);
});

test("relayMcp: every request of a batch over maxMessageBytes is answered, with one array", {
  timeout: 60_000,
}, async () => {
  // The server asks the client for its roots, and tells it what it was sent that is no request (an answer,
  // or the relay's error for one).
  const server =
    `process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: "s9", method: "roots/list" }) + "\\n");
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.method === undefined) {
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { got: m } }) + "\\n");
    }
  });`;
  const pings = Array.from({ length: 40 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }));
  const answer = { jsonrpc: "2.0", id: "s9", result: { pad: "x".repeat(4000) } };
  const batch = [...pings.slice(0, 20), answer, ...pings.slice(20)];
  const isTold = (m: unknown) => (m as JsonRpcMessage).method === "notifications/message";
  const received = await exchange(
    "node",
    ["-e", server],
    [new WaitFor((r) => r.some((m) => (m as JsonRpcMessage).id === "s9")), batch],
    (r) => r.some(Array.isArray) && r.some(isTold),
    { maxMessageBytes: 2000 },
  ) as (JsonRpcMessage | JsonRpcMessage[])[];
  const array = received.find(Array.isArray) as JsonRpcMessage[] | undefined;
  assert.deepEqual(array?.map((a) => a.id), pings.map((p) => p.id), "each request of the batch is answered");
  assert.ok(
    array.every((a) => /a batch of .* exceeds the limit of 2000 bytes; this request/.test(errorOf(a))),
  );
  const told = received.find(isTold) as JsonRpcMessage;
  const got = (told.params as { got: JsonRpcMessage }).got;
  assert.equal(got.id, "s9", "the server's request, answered in the batch, gets an error instead");
  assert.match(errorOf(got), /the client's answer was in a batch of .* exceeds the limit/);
});

test("relayMcp: a server batch over maxMessageBytes has each of its members answered, both ways", {
  timeout: 60_000,
}, async () => {
  // Once it has the three pings, the server answers them in one batch with two requests of its own in it,
  // over the limit; what it gets back that is no request it tells the client of.
  const server = `let pings = [];
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    const say = (x) => process.stdout.write(JSON.stringify(x) + "\\n");
    if (m.method === undefined) return say({ jsonrpc: "2.0", method: "notifications/message", params: { got: m } });
    if (m.method !== "ping" || (pings.push(m.id), pings.length) < 3) return;
    say([
      { jsonrpc: "2.0", id: pings[0], result: { pad: "x".repeat(4000) } },
      { jsonrpc: "2.0", id: "s1", method: "sampling/createMessage", params: {} },
      { jsonrpc: "2.0", id: pings[1], result: {} },
      { jsonrpc: "2.0", id: "s2", method: "roots/list" },
      { jsonrpc: "2.0", id: pings[2], result: {} },
    ]);
  });`;
  const pings = [1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, method: "ping" }));
  const told = (r: unknown[]) => (r as JsonRpcMessage[]).filter((m) => m.method !== undefined);
  const received = await exchange(
    "node",
    ["-e", server],
    pings,
    (r) => r.length - told(r).length === 3 && told(r).length === 2,
    { maxMessageBytes: 2000 },
  ) as JsonRpcMessage[];
  const answers = received.filter((m) => m.method === undefined);
  assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2, 3], "each client request in it is answered");
  for (const a of answers) {
    assert.match(
      errorOf(a),
      /the MCP server's batch of .*, which held its answer, exceeds the relay's limit/,
    );
  }
  const got = told(received).map((m) => (m.params as { got: JsonRpcMessage }).got);
  assert.deepEqual(got.map((m) => m.id), ["s1", "s2"], "each server request in it is answered");
  for (const m of got) {
    assert.match(errorOf(m), /your batch of .* exceeds .*; the client never saw this request/);
  }
});

/**
 * Whether a real Node runs a `node` child: the flood test's server is a Node script whose writes must not
 * block, which Deno standing in for node (Deno puts a `node` of its own on its children's PATH) does not give,
 * so on a machine with only Deno (the quick start's) that test skips.
 */
const hasNode = String(
  spawnSync("node", ["-p", "Boolean(process.versions.deno || process.versions.bun)"]).stdout ?? "",
).trim() === "false";

test("relayMcp: a flood of server requests over maxMessageBytes is answered, every one, in order", {
  timeout: 120_000,
  skip: hasNode ? false : "no node on PATH: the flood server is a Node script",
}, async () => {
  // Six batches of 10 000 requests over the limit: 60 000 errors, more than the relay writes ahead of a server
  // that does not read them. The server writes without blocking and reads its answers from the third batch
  // on; then it tells the client how many it got, and whether in order.
  const server = `const fs = require("node:fs");
  let next = 0, got = 0, inOrder = true, buffered = "";
  const batch = () => JSON.stringify(Array.from({ length: 10000 }, () => ({ jsonrpc: "2.0", id: next++, method: "x" }))) + "\\n";
  const tell = () => fs.write(1, JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { got, inOrder } }) + "\\n", () => {});
  const read = () => process.stdin.on("data", (chunk) => {
    buffered += chunk;
    for (let nl; (nl = buffered.indexOf("\\n")) >= 0; buffered = buffered.slice(nl + 1)) {
      const m = JSON.parse(buffered.slice(0, nl));
      if (m.id !== got++ || !/your batch of/.test(m.error.message)) inOrder = false;
      if (got === 60000) tell();
    }
  });
  const write = (i) => i < 6 && fs.write(1, batch(), () => (i === 2 && read(), write(i + 1)));
  write(0);`;
  // (60 000 answers take seconds on a loaded machine: the client waits for the server's count up to 110 s)
  const received = await exchange("node", ["-e", server], [], 1, { maxMessageBytes: 100_000 }, 110_000);
  assert.deepEqual(received, [
    { jsonrpc: "2.0", method: "notifications/message", params: { got: 60000, inOrder: true } },
  ]);
});

test(
  "relayMcp: the guard's own tools/list it gave up on is cancelled at the server (notifications/cancelled)",
  {
    timeout: 60_000,
  },
  async () => {
    // The server never answers tools/list; what it is told of cancellations it tells the client.
    const server = `let listed;
  require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.method === "tools/list") listed = m.id;
    if (m.method === "notifications/cancelled") {
      const params = { listed, cancelled: m.params };
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params }) + "\\n");
    }
  });`;
    const toolCall = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", arguments: {} } };
    const received = await exchange(
      "node",
      ["-e", server],
      [toolCall],
      (r) =>
        r.some((m) => (m as JsonRpcMessage).id === 1) &&
        r.some((m) => (m as JsonRpcMessage).method !== undefined),
      { toolsTimeoutMs: 200 },
    ) as JsonRpcMessage[];
    const call = received.find((m) => m.id === 1)?.result as { content: { text: string }[] } | undefined;
    assert.match(
      call?.content[0].text ?? "",
      /could not read this server's tool list \(no answer within 200 ms\)/,
    );
    const told = received.find((m) => m.method === "notifications/message")?.params as {
      listed: string;
      cancelled: { requestId: string; reason: string };
    } | undefined;
    assert.ok(told !== undefined, "the server was told");
    assert.equal(told.cancelled.requestId, told.listed, "under the id of the tools/list it was sent");
    assert.match(told.cancelled.reason, /toolguard gave up on its tools\/list: no answer within 200 ms/);
  },
);

test("McpSession: a held request waits behind a held notification whose delivery waits for its place", async () => {
  // As the HTTP relay's notifications past their places do: the delivery's promise settles once it is sent.
  const toServer: JsonRpcMessage[] = [];
  let place = () => {};
  const placed = new Promise<void>((resolve) => (place = resolve));
  const session = createMcpGuard().connect({
    toServer: (f) => {
      const m = f.message as JsonRpcMessage;
      toServer.push(m);
      if (m.method === "notifications/roots/list_changed") return placed;
    },
    toClient: () => {},
  });
  session.fromClient({
    message: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", arguments: {} } },
  });
  session.fromClient({ message: { jsonrpc: "2.0", method: "notifications/roots/list_changed" } });
  session.fromClient({ message: { jsonrpc: "2.0", id: 2, method: "ping" } });
  const list = toServer[0];
  assert.equal(list.method, "tools/list");
  const tools = [{ name: "t", inputSchema: { type: "object" } }];
  session.fromServer({ message: { jsonrpc: "2.0", id: list.id, result: { tools } } });
  // A message the client sends now waits behind them too; its answers (to what the server asked) do not.
  session.fromServer({ message: { jsonrpc: "2.0", id: "s1", method: "roots/list" } });
  session.fromClient({ message: { jsonrpc: "2.0", id: 3, method: "ping" } });
  session.fromClient({ message: { jsonrpc: "2.0", id: "s1", result: {} } });
  assert.deepEqual(
    toServer.map((m) => m.method ?? m.id),
    ["tools/list", "tools/call", "notifications/roots/list_changed", "s1"],
    "the pings wait for the notification's place",
  );
  let released = false;
  const whenReleased = session.released().then(() => (released = true));
  assert.equal(released, false);
  place();
  await whenReleased;
  assert.deepEqual(toServer.slice(4).map((m) => m.id), [2, 3], "then go, in order");
});

test("McpSession: a held call met by a stale tool list while the held messages go on keeps its place", async () => {
  const toServer: JsonRpcMessage[] = [];
  let place = () => {};
  const placed = new Promise<void>((resolve) => (place = resolve));
  const session = createMcpGuard().connect({
    toServer: (f) => {
      const m = f.message as JsonRpcMessage;
      toServer.push(m);
      if (m.method === "notifications/roots/list_changed") return placed;
    },
    toClient: () => {},
  });
  const call = (id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "t", arguments: {} },
  });
  const tools = { tools: [{ name: "t", inputSchema: { type: "object" } }] };
  session.fromClient({ message: call(1) });
  session.fromClient({ message: { jsonrpc: "2.0", method: "notifications/roots/list_changed" } });
  session.fromClient({ message: call(2) });
  session.fromClient({ message: { jsonrpc: "2.0", id: 3, method: "ping" } });
  session.fromServer({ message: { jsonrpc: "2.0", id: toServer[0].id, result: tools } });
  // While the notification waits for its place, the server says its tools changed: call 2 needs them again.
  session.fromServer({ message: { jsonrpc: "2.0", method: "notifications/tools/list_changed" } });
  place();
  // (the held messages go on once the notification's delivery has settled: a macrotask later, surely)
  await new Promise((resolve) => setTimeout(resolve, 0));
  const second = toServer.at(-1)!;
  assert.equal(second.method, "tools/list", "the guard reads the tools again");
  session.fromServer({ message: { jsonrpc: "2.0", id: second.id, result: tools } });
  assert.deepEqual(
    toServer.map((m) => m.method === "tools/call" ? m.id : m.method),
    ["tools/list", 1, "notifications/roots/list_changed", "tools/list", 2, "ping"],
    "call 2 goes before the ping held after it",
  );
});

test(
  "relayMcp: an answer that is not JSON (NaN, as Python's json writes) answers its request with an error",
  {
    timeout: 60_000,
  },
  async () => {
    // Every answer carries a NaN; a cancellation the server is told of it tells the client. The tool list's
    // answer came, unreadable: its fetch fails at once (not after toolsTimeoutMs) and nothing is cancelled.
    const server = `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.method === "notifications/cancelled") {
      const told = { jsonrpc: "2.0", method: "notifications/message", params: m.params };
      process.stdout.write(JSON.stringify(told) + "\\n");
      return;
    }
    const result = m.method === "tools/list"
      ? '{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"x":{"default":NaN}}}}]}'
      : '{"v":NaN}';
    process.stdout.write('{"jsonrpc":"2.0","result":' + result + ',"id":' + JSON.stringify(m.id) + "}\\n");
  });`;
    const toolCall = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "t", arguments: {} } };
    const received = await exchange(
      "node",
      ["-e", server],
      [{ jsonrpc: "2.0", id: 1, method: "ping" }, toolCall],
      (r) => r.some((m) => (m as JsonRpcMessage).id === 1) && r.some((m) => (m as JsonRpcMessage).id === 2),
      { toolsTimeoutMs: 600_000 },
    ) as JsonRpcMessage[];
    const ping = received.find((m) => m.id === 1) as
      | { error?: { code: number; message: string } }
      | undefined;
    assert.equal(ping?.error?.code, -32603, "the ping is answered with an error");
    assert.match(ping.error.message, /answer to ping was not a JSON-RPC answer/);
    const call = received.find((m) => m.id === 2)?.result as { content: { text: string }[] } | undefined;
    assert.match(
      call?.content[0].text ?? "",
      /could not read this server's tool list \(tools\/list failed: its answer was not JSON\)/,
    );
    assert.equal(
      received.filter((m) => m.method === "notifications/message").length,
      0,
      "nothing was cancelled",
    );
  },
);

test("relayMcp: a client request whose id is an array too deep to name does not end the client's input", {
  timeout: 30_000,
}, async () => {
  // The guard keys a request by its id as text: an array id thousands deep made that throw (the call stack
  // ran out), the throw rejected the delivery, and the relay took it for the end of the client's input: the
  // ping after it was never read, nor answered.
  const server = `
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (typeof m.id === "number") process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }) + "\\n");
});`;
  const depth = 20_000;
  let pinged = () => {};
  const pong = new Promise<void>((resolve) => (pinged = resolve));
  async function* client() {
    yield enc.encode(`{"jsonrpc":"2.0","id":${"[".repeat(depth)}${"]".repeat(depth)},"method":"ping"}\n`);
    yield enc.encode(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }) + "\n");
    await pong;
  }
  let buffered = "";
  const answered: unknown[] = [];
  const exit = await relayMcp({
    command: "node",
    args: ["-e", server],
    input: client(),
    stderr: "ignore",
    output: (bytes) => {
      buffered += dec.decode(bytes);
      for (let nl; (nl = buffered.indexOf("\n")) >= 0; buffered = buffered.slice(nl + 1)) {
        const m = JSON.parse(buffered.slice(0, nl)) as JsonRpcMessage;
        if (typeof m.id === "number") answered.push(m.id);
        if (m.id === 2) pinged();
      }
    },
  });
  assert.deepEqual(answered, [2], "the ping after the deep id was read and answered");
  assert.equal(exit.reason, "client_closed");
});

test("ClientFeed: a delivery that throws or rejects does not stop the client's frames after it", async () => {
  // A relay reads the client through a ClientFeed, and took its rejection for the end of the client's input:
  // one message whose delivery failed cut off every message after it (see the deep id above).
  const delivered: unknown[] = [];
  const session = {
    fromClient(frame: McpFrame): void | Promise<void> {
      const id = (frame.message as JsonRpcMessage).id;
      delivered.push(id);
      if (id === 1) throw new RangeError("Maximum call stack size exceeded");
      if (id === 2) return Promise.reject(new Error("the sink failed"));
    },
  } as unknown as ConstructorParameters<typeof ClientFeed>[0];
  const feed = new ClientFeed(session);
  for (const id of [1, 2, 3]) await feed.feed({ message: { jsonrpc: "2.0", id, method: "ping" } });
  await feed.settled();
  assert.deepEqual(delivered, [1, 2, 3]);
});
