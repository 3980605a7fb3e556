/**
 * A property named twice in one object of a message's text: `JSON.parse` keeps the last value, which the guard
 * judges, while the peer's parser may keep the first (cJSON's, some C++, Rust and Java ones). The relays pass
 * unchanged messages on as they came, so such text must never go on as it came, over stdio and HTTP, either way:
 * a client's `tools/call` is refused as malformed, any other message is written anew from what was judged. The
 * SDKs cannot send such text, so the client here writes raw lines.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMcpGuard, type McpEvent, type McpFrame, relayMcp, relayMcpHttp } from "../mcp.ts";
import { duplicateKey } from "../_common/json.ts";
import { caseStray, caseTwin, LONE_CASE_FORMS } from "../_mcp/judge.ts";
import { foldCase } from "../_common/values.ts";
import { answer, POISON, prettyAnswer } from "./_mcp_raw_server.ts";
import { runtimeCommand } from "./_runtime.ts";
import { countingWork } from "./_counting.ts";
import { seededRandom } from "./_random.ts";
import { Client } from "@modelcontextprotocol/sdk/client";
// (the SDK's "./*" export maps types to "*.js.d.ts", which does not exist: Deno is pointed at the real file)
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = runtimeCommand(join(root, "tests/_mcp_raw_server.ts"));

/** What the client writes, by id: each line as it is sent. */
const INITIALIZE = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
  '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const LINES: Record<number, string> = {
  1: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  // the tool named twice: judged as read_file, a first-key parser runs delete_everything
  2: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_everything","name":"read_file",' +
    '"arguments":{"path":"notes.txt"}}}',
  // an argument named twice
  3: '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":' +
    '{"path":"/etc/shadow","path":"notes.txt"}}}',
  // a method named twice, judged as the ping it ends with
  4: '{"jsonrpc":"2.0","id":4,"method":"tools/call","method":"ping","params":{"name":"delete_everything"}}',
  // ... and as the tools/call it ends with
  5: '{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/call","params":{"name":"read_file",' +
    '"arguments":{"path":"notes.txt"}}}',
  // benign, pretty-printed as Python's json.dumps writes, with a number past 2^53: goes as it came
  6: '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "echo", "arguments": ' +
    '{"n": 123456789012345678901234567890, "x": 1.0}}}',
  // the tool named in two spellings, no key repeated: a parser that ignores case (cJSON's, Go's) may run
  // delete_everything
  7: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","Name":"delete_everything",' +
    '"arguments":{"path":"notes.txt"}}}',
  // an argument in two spellings, the one a case-blind parser keeps (the last) unchecked
  8: '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_file","arguments":' +
    '{"path":"notes.txt","PATH":"/etc/shadow"}}}',
  // judged as a ping; Go's encoding/json (an older MCP Go SDK) reads "Method" for "method", and runs the call
  9: '{"jsonrpc":"2.0","id":9,"method":"ping","Method":"tools/call","params":{"name":"delete_everything"}}',
  // lone spellings in another case: the guard judged no arguments (or no path, or no name), a case-blind
  // parser reads them as arguments, path and name
  10: '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_file","Arguments":' +
    '{"path":"/etc/shadow"}}}',
  11: '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read_file","arguments":' +
    '{"PATH":"/etc/shadow"}}}',
  12: '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"Name":"delete_everything"}}',
};

/** The client's view: every line it read, by id. */
function byId(lines: string[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of lines) {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    if (typeof id === "number") out.set(id, line);
  }
  return out;
}

/** What a frame a session hands on reads as: its line as it came, or its message written anew. */
const sentText = (frame: McpFrame): string =>
  frame.bytes === undefined ? JSON.stringify(frame.message) : new TextDecoder().decode(frame.bytes);

const textOf = (line: string | undefined): string =>
  (JSON.parse(line ?? "{}") as { result?: { content?: { text: string }[] } }).result?.content?.[0]?.text ??
    "";

/**
 * What the client read, what the server got, and the events, checked alike for both relays: every case that
 * fails is named (so one run shows each).
 */
function check(got: Map<number, string>, serverLines: string[], events: McpEvent[]): void {
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => void (ok || problems.push(what));
  const list = got.get(1) ?? "{}";
  expect(
    !list.includes(POISON) && duplicateKey(list) === undefined,
    "1: the first description reached the client",
  );
  expect(
    JSON.parse(list).result?.tools?.[0]?.description === "Reads a file.",
    "1: not the description judged",
  );
  for (const [id, named] of [[2, '"/params/name"'], [3, '"path"'], [5, '"/method"']] as const) {
    const text = textOf(got.get(id));
    expect(JSON.parse(got.get(id) ?? "{}").result?.isError === true, `${id}: not refused: ${got.get(id)}`);
    expect(text.includes(`${named} more than once`) && text.includes("send each"), `${id}: said ${text}`);
  }
  for (const [id, named] of [[7, '"/params/Name"'], [8, '"PATH"']] as const) {
    const text = textOf(got.get(id));
    expect(JSON.parse(got.get(id) ?? "{}").result?.isError === true, `${id}: not refused: ${got.get(id)}`);
    expect(
      text.includes(`${named} in two spellings`) &&
        text.includes("send each parameter once, in one spelling"),
      `${id}: said ${text}`,
    );
  }
  for (
    const [id, spelled, declared] of [
      [10, "Arguments", "arguments"],
      [11, "PATH", "path"],
      [12, "Name", "name"],
    ] as const
  ) {
    const text = textOf(got.get(id));
    expect(JSON.parse(got.get(id) ?? "{}").result?.isError === true, `${id}: not refused: ${got.get(id)}`);
    expect(
      text.includes(`"${spelled}", which`) && text.includes(`spells "${declared}"`),
      `${id}: said ${text}`,
    );
  }
  const variant = JSON.parse(got.get(9) ?? "{}").error ?? {};
  expect(
    variant.code === -32600 && /"Method", a JSON-RPC member spelled in another case/.test(variant.message),
    `9: the client read ${got.get(9)}`,
  );
  for (const line of serverLines) {
    expect(!/"Name"|"PATH"|"Method"|"Arguments"/.test(line), `the server got ${line}`);
  }
  // The ping went on written anew: the server read one method, the one judged.
  const ping = JSON.parse(JSON.parse(got.get(4) ?? "{}").result?.got ?? "{}");
  expect(!JSON.stringify(ping).includes("tools/call") && ping.method === "ping", `4: the server got ${ping}`);
  // The benign call and its answer went as they came, digits and spaces and all.
  expect(got.get(6) === prettyAnswer(6, LINES[6]), `6: the client read ${got.get(6)}`);
  expect(serverLines.includes(LINES[6]), "6: the server did not get the call as it came");
  for (const line of serverLines) expect(duplicateKey(line) === undefined, `the server got ${line}`);
  const repeated = events.filter((e) => e.event === "repeated_key");
  expect(
    repeated.some((e) => e.from === "client" && e.pointer === "/method" && e.id === 4),
    "4: not reported",
  );
  expect(
    repeated.some((e) => e.from === "server" && e.pointer === "/result/tools/0/description"),
    "1: not reported",
  );
  expect(
    events.some((e) => e.event === "client_message_refused" && e.kind === "case_variant" && e.id === 9),
    "9: not reported",
  );
  const rejected = events.flatMap((e) => e.event === "call_rejected" ? [e.id] : []);
  expect(JSON.stringify(rejected.sort()) === "[10,11,12,2,3,5,7,8]", `rejected: ${rejected}`);
  assert.deepEqual(problems, []);
}

/** The client: writes every line, and reads until each request is answered. */
function client(lines: string[], done: Promise<void>): AsyncIterable<Uint8Array> {
  const enc = new TextEncoder();
  return (async function* () {
    for (const line of lines) yield enc.encode(line + "\n");
    await done;
  })();
}

/** Collects the client's lines; `done` settles once every id in `LINES` is answered (or after 20 s). */
function reader(): {
  lines: string[];
  output: (bytes: Uint8Array) => void;
  done: Promise<void>;
  stop(): void;
} {
  const lines: string[] = [];
  let finish = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  const timer = setTimeout(finish, 20_000);
  let rest = "";
  return {
    lines,
    done,
    stop: () => clearTimeout(timer),
    output: (bytes) => {
      const text = rest + new TextDecoder().decode(bytes);
      const parts = text.split("\n");
      rest = parts.pop()!;
      lines.push(...parts.filter(Boolean));
      if (Object.keys(LINES).every((id) => byId(lines).has(Number(id)))) finish();
    },
  };
}

test(
  "relayMcp: a property named twice never reaches the peer as it came: a call is refused, the rest is written anew",
  {
    timeout: 60_000,
  },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-repeated-"));
    const log = join(dir, "server.log");
    const events: McpEvent[] = [];
    const out = reader();
    try {
      await relayMcp({
        command: SERVER.command,
        args: [...SERVER.args, log],
        input: client(Object.values(LINES), out.done),
        output: out.output,
        stderr: "ignore",
        shutdownGraceMs: 500,
        onEvent: (e) => void events.push(e),
      });
      const serverLines = readFileSync(log, "utf8").split("\n").filter(Boolean);
      check(byId(out.lines), serverLines, events);
      // (the benign call reached the server as it came)
      assert.ok(serverLines.includes(LINES[6]));
    } finally {
      out.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "relayMcpHttp: a property named twice never reaches the peer as it came: a call is refused, the rest is written anew",
  {
    timeout: 60_000,
  },
  async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        if (req.method !== "POST") return void res.writeHead(req.method === "GET" ? 405 : 200).end();
        bodies.push(body);
        const text = answer(body);
        if (text === undefined) return void res.writeHead(202).end();
        // (the tool list and the pretty answer as events, the rest as JSON)
        if (/"tools\/list"|"echo"/.test(body)) {
          return void res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s" })
            .end(`data: ${text}\n\n`);
        }
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s" }).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
    const events: McpEvent[] = [];
    const out = reader();
    try {
      await relayMcpHttp(url, {
        input: client([INITIALIZE, INITIALIZED, ...Object.values(LINES)], out.done),
        output: out.output,
        shutdownGraceMs: 500,
        onEvent: (e) => void events.push(e),
      });
    } finally {
      out.stop();
      server.closeAllConnections?.();
      server.close();
    }
    check(byId(out.lines), bodies, events);
    assert.ok(bodies.includes(LINES[6]));
  },
);

test("McpSession: an answer passed on unread that names its id twice is written anew under the id judged", () => {
  // The answer to a plain call (5) is passed on unread, its id read from its end; its first id is that of a
  // tools/list (7), whose answer the guard would clean: a client that keeps the first id would read this
  // one, uncleaned, as the tool list.
  const toClient: McpFrame[] = [];
  const events: McpEvent[] = [];
  const guard = createMcpGuard({ onEvent: (e) => void events.push(e) });
  guard.setTools([{ name: "echo", inputSchema: { type: "object" } }]);
  const session = guard.connect({ toServer: () => {}, toClient: (f) => void toClient.push(f) });
  const enc = new TextEncoder();
  const frame = (text: string): McpFrame => ({ bytes: enc.encode(text), message: JSON.parse(text) });
  session.fromClient(frame('{"jsonrpc":"2.0","id":7,"method":"tools/list"}'));
  session.fromClient(frame('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}'));
  const line = `{"result":{"tools":[{"name":"echo","description":${JSON.stringify(POISON)}}]},"id":7,"id":5}`;
  session.fromServer(frame(line));
  assert.equal(toClient.length, 1);
  const sent = sentText(toClient[0]);
  assert.equal(duplicateKey(sent), undefined, sent);
  assert.equal(JSON.parse(sent).id, 5);
  assert.ok(events.some((e) => e.event === "repeated_key" && e.from === "server" && e.pointer === "/id"));
  // An answer whose content names "id" (once at its top) goes as it came.
  session.fromClient(frame('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo"}}'));
  const plain = '{"jsonrpc":"2.0","id":6,"result":{"content":[],"n":123456789012345678901234567891}}';
  session.fromServer(frame(plain));
  assert.equal(new TextDecoder().decode(toClient[1].bytes), plain);
});

test("McpSession: text nested too deeply to be read for repeats goes on written anew, not as it came", () => {
  // 200 000 levels: JSON.parse reads them, the hand-written reader gives up, so nothing is known of the
  // repeated "x" at the bottom.
  const toServer: McpFrame[] = [];
  const guard = createMcpGuard({});
  const session = guard.connect({ toServer: (f) => void toServer.push(f), toClient: () => {} });
  const text = '{"jsonrpc":"2.0","id":9,"method":"ping","params":' + '{"a":'.repeat(200_000) +
    '{"x":"first","x":"last"}' + "}".repeat(200_000) + "}";
  session.fromClient({ bytes: new TextEncoder().encode(text), message: JSON.parse(text) });
  assert.equal(toServer.length, 1);
  assert.ok(toServer[0].bytes === undefined, "passed on as it came");
});

test("McpSession: a tool's description spelled in another case is cleaned as its description is", () => {
  // JSON.parse keeps both; a client that ignores case (Go's encoding/json) shows the model "Description",
  // the last, as the tool's description.
  const toClient: McpFrame[] = [];
  const guard = createMcpGuard({});
  const session = guard.connect({ toServer: () => {}, toClient: (f) => void toClient.push(f) });
  const enc = new TextEncoder();
  const frame = (text: string): McpFrame => ({ bytes: enc.encode(text), message: JSON.parse(text) });
  session.fromClient(frame('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'));
  const line =
    `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","description":"Reads a file.",` +
    `"Description":${JSON.stringify(POISON)},"inputSchema":{"type":"object","TITLE":${
      JSON.stringify(POISON)
    }}}]}}`;
  session.fromServer(frame(line));
  assert.equal(toClient.length, 1);
  const sent = sentText(toClient[0]);
  assert.ok(!sent.includes("IGNORE ALL PREVIOUS"), sent);
  assert.equal(JSON.parse(sent).result.tools[0].description, "Reads a file.");
});

test("McpSession: the server's instructions and title spelled in another case are cleaned as they are", () => {
  // A client that ignores case (Go's encoding/json) hands the model "Instructions", the last, as the
  // server's instructions, and shows "Title" as its name.
  const toClient: McpFrame[] = [];
  const events: McpEvent[] = [];
  const guard = createMcpGuard({ onEvent: (e) => void events.push(e) });
  const session = guard.connect({ toServer: () => {}, toClient: (f) => void toClient.push(f) });
  const enc = new TextEncoder();
  const frame = (text: string): McpFrame => ({ bytes: enc.encode(text), message: JSON.parse(text) });
  session.fromClient(frame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'));
  const poison = JSON.stringify(POISON);
  const line = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},` +
    `"instructions":"Use read_file for files.","Instructions":${poison},"INSTRUCTIONS":${poison},` +
    `"serverInfo":{"name":"raw","version":"1","title":"Raw","Title":${poison}},` +
    `"ServerInfo":{"name":"raw","TITLE":${poison}}}}`;
  session.fromServer(frame(line));
  assert.equal(toClient.length, 1);
  const sent = sentText(toClient[0]);
  assert.ok(!sent.includes("IGNORE ALL PREVIOUS"), sent);
  const result = JSON.parse(sent).result;
  assert.equal(result.instructions, "Use read_file for files.");
  assert.equal(result.serverInfo.title, "Raw");
  const pointers = events.flatMap((e) => e.event === "description_flagged" ? [e.pointer] : []);
  assert.deepEqual(pointers.sort(), [
    "/INSTRUCTIONS",
    "/Instructions",
    "/ServerInfo/TITLE",
    "/serverInfo/Title",
  ]);
});

test("McpSession: a call in a batch the relay splits is refused for a repeated key, or bytes not UTF-8, as a lone one is", () => {
  const toClient: McpFrame[] = [];
  const toServer: McpFrame[] = [];
  const events: McpEvent[] = [];
  const guard = createMcpGuard({ batches: "split", onEvent: (e) => void events.push(e) });
  guard.setTools([{ name: "read_file", inputSchema: { type: "object" } }, {
    name: "delete_everything",
    inputSchema: { type: "object" },
  }]);
  const session = guard.connect({
    toServer: (f) => void toServer.push(f),
    toClient: (f) => void toClient.push(f),
  });
  const enc = new TextEncoder();
  const frame = (bytes: Uint8Array): McpFrame => ({
    bytes,
    message: JSON.parse(new TextDecoder().decode(bytes)),
  });
  // The tool named twice in the second element; a ping with a repeat; a plain call.
  session.fromClient(frame(enc.encode(
    '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file"}}, ' +
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_everything","name":"read_file"}},' +
      '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":"[{\\",","a":2}}]',
  )));
  // A call in a line with a byte that is not UTF-8.
  const bad = enc.encode(
    '[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","x":"%"}}]',
  );
  bad[bad.indexOf(0x25)] = 0xff;
  session.fromClient(frame(bad));
  const sent = toServer.map((f) => (f.message as { id: number }).id);
  assert.deepEqual(sent, [1, 3]);
  const refused = toClient.flatMap((f) => (f.message as { id: number; result?: { isError?: boolean } }[]));
  assert.deepEqual(refused.map((m) => [m.id, m.result?.isError]), [[4, true]]);
  const rejected = events.flatMap((e) => e.event === "call_rejected" ? [[e.id, e.feedback]] : []);
  assert.equal(rejected.length, 2);
  assert.match(String(rejected[0][1]), /"\/params\/name" more than once/);
  assert.match(String(rejected[1][1]), /not valid UTF-8/);
  assert.ok(events.some((e) => e.event === "repeated_key" && e.pointer === "/2/params/a" && e.id === 3));
});

test("checkCall: a key in another case than the property it folds to is refused at any depth the schema declares", () => {
  const guard = createMcpGuard({});
  const mode = { type: "string", enum: ["r"] };
  guard.setTools([{
    name: "copy",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", pattern: "^/tmp/" },
        options: { type: "object", properties: { mode } },
        files: { type: "array", items: { $ref: "#/$defs/file" } },
        // (a fragment is a URI's: the validator percent-decodes it, and so must the walk)
        owner: { $ref: "#/$defs/an%20owner" },
      },
      $defs: {
        file: { type: "object", properties: { name: { type: "string", pattern: "^[a-z]+$" } } },
        "an owner": { type: "object", properties: { id: { type: "string", pattern: "^u[0-9]+$" } } },
      },
    },
  }]);
  const refusal = (args: unknown) => {
    const check = guard.checkCall({ name: "copy", arguments: args });
    return check.allowed ? "" : check.feedback;
  };
  assert.match(refusal({ PATH: "/etc/shadow" }), /"PATH", which the tool spells "path"/);
  // (Go's encoding/json folds the long s and the Kelvin sign too)
  assert.match(refusal({ path: "/tmp/x", options: { MODE: "w" } }), /"MODE", which the tool spells "mode"/);
  assert.match(
    refusal({ path: "/tmp/x", optionſ: { mode: "w" } }),
    /"optionſ", which the tool spells "options"/,
  );
  assert.match(refusal({ files: [{ name: "a" }, { NAME: "../x" }] }), /"NAME", which the tool spells "name"/);
  assert.match(refusal({ owner: { ID: "root" } }), /"ID", which the tool spells "id"/);
  assert.match(
    guard.checkCall({ name: "copy", _META: {}, arguments: {} }).allowed ? "" : "refused",
    /refused/,
  );
  // Keys that fold to nothing declared, and the right spellings, are the schema's to judge.
  for (
    const args of [{ Path2: "/etc" }, { path: "/tmp/x", options: { mode: "r", Extra: 1 } }, { files: [{}] }]
  ) {
    assert.equal(guard.checkCall({ name: "copy", arguments: args }).allowed, true, JSON.stringify(args));
  }
});

test("checkCall: a key in another case is refused under every subschema the validator applies (anchor, allOf, anyOf, additionalProperties, prefixItems)", () => {
  // Each of these applies `id`'s pattern to the value, so each is where a parser that ignores case reads
  // `ID` as `id`: an optional field as pydantic writes it (`anyOf` of a `$ref` and null), a `$ref` by
  // `$anchor`, an `allOf` wrapper, a map of objects, a tuple.
  const id = { type: "string", pattern: "^u[0-9]+$" };
  const owner = { type: "object", properties: { id } };
  const guard = createMcpGuard({});
  guard.setTools([{
    name: "give",
    inputSchema: {
      type: "object",
      properties: {
        optional: { anyOf: [{ $ref: "#/$defs/owner" }, { type: "null" }] },
        anchored: { $ref: "#the-owner" },
        wrapped: { allOf: [{ $ref: "#/$defs/owner" }], description: "who" },
        either: { oneOf: [owner, { type: "string" }] },
        byName: { type: "object", additionalProperties: owner },
        pair: { type: "array", prefixItems: [owner, { type: "string" }] },
      },
      $defs: { owner, named: { $anchor: "the-owner", ...owner } },
    },
  }]);
  for (const key of ["optional", "anchored", "wrapped", "either"]) {
    const check = guard.checkCall({ name: "give", arguments: { [key]: { ID: "root" } } });
    assert.equal(check.allowed, false, key);
    assert.match(check.allowed ? "" : check.feedback, /"ID", which the tool spells "id"/, key);
    // (spelled right, the pattern judges it: the walk and the validator read the same subschema)
    assert.equal(guard.checkCall({ name: "give", arguments: { [key]: { id: "root" } } }).allowed, false, key);
    assert.equal(guard.checkCall({ name: "give", arguments: { [key]: { id: "u1" } } }).allowed, true, key);
  }
  for (const args of [{ byName: { ann: { ID: "root" } } }, { pair: [{ ID: "root" }, "x"] }]) {
    const check = guard.checkCall({ name: "give", arguments: args });
    assert.match(
      check.allowed ? "" : check.feedback,
      /"ID", which the tool spells "id"/,
      JSON.stringify(args),
    );
  }
  // A second item of the tuple is a string's: nothing to fold there.
  assert.equal(guard.checkCall({ name: "give", arguments: { pair: [{ id: "u1" }, "ID"] } }).allowed, true);
});

test("caseStray: a schema with a list of subschemas a hostile server made huge is walked within bounds, without throwing", () => {
  // 300 000 members: spread into a push, they overflowed the stack (RangeError out of checkCall).
  const many = Array.from({ length: 300_000 }, () => ({ type: "object" }));
  const tools = [{ name: "t", inputSchema: { type: "object", properties: { a: { anyOf: many } } } }];
  assert.equal(caseStray({ name: "t", arguments: { a: { ID: "x" } } }, tools), undefined);
});

/**
 * What a guard whose one tool, "act", takes an object with `properties` (and `$defs`, if given) says of a call
 * of it with `args`: its feedback, or "" when allowed.
 */
function feedbackOf(
  properties: Record<string, unknown>,
  { $defs = {} }: { $defs?: Record<string, unknown> } = {},
): (args: Record<string, unknown>) => string {
  const guard = createMcpGuard({});
  guard.setTools([{ name: "act", inputSchema: { type: "object", properties, $defs } }]);
  return (args) => {
    const check = guard.checkCall({ name: "act", arguments: args });
    return check.allowed ? "" : check.feedback;
  };
}

/** An object schema whose `propertyNames` refuse the keys `pattern` matches. */
const not = (pattern: string) => ({ type: "object", propertyNames: { not: { pattern } } });

test("checkCall: a key in another case is refused under not, if, and a patternProperties schema its key matches", () => {
  const id = { type: "string", pattern: "^u[0-9]+$" };
  const owner = { type: "object", properties: { id } };
  const feedback = feedbackOf({
    // `not` reads `mode` to forbid "w": `MODE` passed it, and a case-blind server reads "w"
    write: { type: "object", not: { required: ["mode"], properties: { mode: { const: "w" } } } },
    // `if` reads `kind`: `KIND` made it fail, so the token `then` asks for was not asked
    grant: {
      type: "object",
      if: { required: ["kind"], properties: { kind: { const: "admin" } } },
      then: { required: ["token"] },
    },
    owners: { type: "object", patternProperties: { "^o_": owner }, additionalProperties: false },
    named: {
      type: "object",
      properties: { path: { type: "string" } },
      patternProperties: { "^[A-Z]+$": {} },
    },
    loose: { type: "object", patternProperties: { "^x-": owner } },
    // (a `then` without `if` is inert: the validator applies nothing of it)
    inert: { type: "object", then: { properties: { id } } },
  });
  assert.match(feedback({ write: { MODE: "w" } }), /"MODE", which the tool spells "mode"/);
  assert.match(feedback({ grant: { KIND: "admin" } }), /"KIND", which the tool spells "kind"/);
  assert.match(feedback({ owners: { o_1: { ID: "root" } } }), /"ID", which the tool spells "id"/);
  // A key a pattern matches is still read by a struct's field in another case.
  assert.match(feedback({ named: { PATH: "/etc/shadow" } }), /"PATH", which the tool spells "path"/);
  // A pattern declares no name: a key it matches only in another case is left to the schema, as the
  // validator leaves it (here no schema applies to X-a, so its ID is no one's).
  assert.equal(feedback({ loose: { "X-a": { ID: "root" } } }), "");
  assert.equal(feedback({ inert: { ID: "root" } }), "");
  // Spelled right, each is the schema's to judge.
  assert.match(feedback({ write: { mode: "w" } }), /./);
  assert.match(feedback({ grant: { kind: "admin" } }), /token/);
  assert.match(feedback({ owners: { o_1: { id: "root" } } }), /pattern|match/);
  assert.equal(feedback({ owners: { o_1: { id: "u1" } }, write: { mode: "r" } }), "");
});

test("caseStray: the keywords it does not follow are ones the validator refuses, so their tool is unchecked", () => {
  // When the validator learns one of these, caseStray must follow it too (see its JSDoc).
  for (
    const schema of [
      { dependentSchemas: { a: { properties: { id: {} } } } },
      { dependencies: { a: { properties: { id: {} } } } },
      { contains: { properties: { id: {} } } },
      { unevaluatedProperties: { properties: { id: {} } } },
      { unevaluatedItems: { properties: { id: {} } } },
      { additionalItems: { properties: { id: {} } } },
      { $dynamicRef: "#x" },
    ]
  ) {
    const guard = createMcpGuard({});
    const summary = guard.setTools([{ name: "t", inputSchema: { type: "object", ...schema } }]);
    assert.deepEqual(summary.unchecked.map((u) => u.name), ["t"], JSON.stringify(schema));
  }
});

test("checkCall: a key in another case is refused where the schema names it in required or dependentRequired alone", () => {
  // Each of these reads a key's presence by name, with no `properties` entry: `{"RECURSIVE":true}` made the
  // `if` fail, so the confirm its `then` asks for was not asked, while a case-blind server read recursive.
  const feedback = feedbackOf({
    wipe: { type: "object", if: { required: ["recursive"] }, then: { required: ["confirm"] } },
    push: { type: "object", not: { required: ["force"] } },
    copy: { type: "object", dependentRequired: { overwrite: ["backup"] } },
    pick: { type: "object", oneOf: [{ required: ["a"] }, { required: ["b"] }] },
  });
  assert.match(feedback({ wipe: { RECURSIVE: true } }), /"RECURSIVE", which the tool spells "recursive"/);
  assert.match(feedback({ push: { Force: true } }), /"Force", which the tool spells "force"/);
  assert.match(feedback({ copy: { OVERWRITE: true } }), /"OVERWRITE", which the tool spells "overwrite"/);
  assert.match(feedback({ pick: { A: 1, b: 1 } }), /"A", which the tool spells "a"/);
  // Spelled right, each is the schema's to judge; a key folding to no name is left to it.
  assert.match(feedback({ wipe: { recursive: true } }), /confirm/);
  assert.equal(
    feedback({ wipe: { recursive: true, confirm: true }, push: {}, copy: { MODE: 1 }, pick: { b: 1 } }),
    "",
  );
});

test("checkCall: a key in another case is refused where propertyNames names it, and not for an if with neither then nor else", () => {
  const feedback = feedbackOf({
    // `propertyNames` forbids the key `force` by name: `FORCE` passed it, and a case-blind server reads force
    push: { type: "object", propertyNames: { not: { const: "force" } } },
    pull: { type: "object", propertyNames: { not: { enum: ["rebase", "prune"] } } },
    merge: { type: "object", propertyNames: { anyOf: [{ $ref: "#/$defs/noSquash" }, { maxLength: 2 }] } },
    // (an `if` that nothing follows is inert to the validator: `Mode` is no variant of a name it reads)
    open: { type: "object", if: { required: ["mode"] } },
  }, { $defs: { noSquash: { not: { const: "squash" } } } });
  assert.match(feedback({ push: { FORCE: true } }), /"FORCE", which the tool spells "force"/);
  assert.match(feedback({ pull: { Prune: true } }), /"Prune", which the tool spells "prune"/);
  assert.match(feedback({ merge: { SQUASH: true } }), /"SQUASH", which the tool spells "squash"/);
  assert.equal(feedback({ open: { Mode: "w" } }), "");
  // Spelled right, each is the schema's to judge; a key folding to no name is left to it.
  assert.match(feedback({ push: { force: true } }), /./);
  assert.equal(feedback({ push: { Forced: true }, pull: { rebased: 1 }, open: { mode: "w" } }), "");
});

test("checkCall: a key in another case is refused where a propertyNames pattern names it, and not where the pattern is about case", () => {
  const feedback = feedbackOf({
    // `not: { pattern }` forbids `force` and any `x-` key as written: `FORCE` and `X-Trace` passed it, and a
    // case-blind server reads them as the keys it forbids
    push: { type: "object", propertyNames: { not: { pattern: "^force$" } } },
    tag: { type: "object", propertyNames: { anyOf: [{ $ref: "#/$defs/noX" }, { maxLength: 1 }] } },
    run: { type: "object", propertyNames: { not: { pattern: "^(dryRun|keep_going)$" } } },
    // (a class of letters, a Unicode property or a class spelt by code judges case itself: no word to fold)
    open: { type: "object", propertyNames: { not: { pattern: "^[A-Z]" } } },
    seek: { type: "object", propertyNames: { not: { pattern: "^\\p{Ll}+$" } } },
    close: { type: "object", propertyNames: { not: { pattern: "^[\\x61-\\x7a]+$" } } },
  }, { $defs: { noX: { not: { pattern: "^x-" } } } });
  assert.match(
    feedback({ push: { FORCE: true } }),
    /"FORCE", which the tool's name rule "\^force\$" judges in another case/,
  );
  assert.match(feedback({ tag: { "X-Trace": 1 } }), /"X-Trace", which the tool's name rule "\^x-"/);
  assert.match(feedback({ run: { dryrun: true } }), /"dryrun", which the tool's name rule/);
  assert.match(feedback({ run: { KEEP_GOING: true } }), /"KEEP_GOING", which the tool's name rule/);
  // The long s and the Kelvin sign fold as a case-blind parser folds them.
  assert.match(feedback({ run: { "\u212aeep_going": 1 } }), /which the tool's name rule/);
  assert.match(
    feedback({ push: { force: true } }),
    /./,
    "spelled as the rule spells it, the schema refuses it",
  );
  assert.equal(
    feedback({ push: { forced: true }, run: { dryRun2: 1, dry: 1 }, open: { mode: "w" }, seek: { A: 1 } }),
    "",
  );
  assert.equal(feedback({ close: { A: 1 } }), "");
});

test("checkCall: a key its propertyNames or patternProperties pattern cannot be checked against is refused as unchecked, not thrown", () => {
  // `(?:a?b?){2500}x` keeps 10 000 instructions alive a character: the linear-time matcher stops at its budget
  // of steps on a key of 300 characters (PatternUnchecked). The case walk asked first and let it out of checkCall.
  // (each key has the "x" every match takes: one without it fails unrun)
  const pattern = "(?:a?b?){2500}x";
  const feedback = feedbackOf({
    names: { type: "object", propertyNames: { not: { pattern } } },
    keyed: { type: "object", patternProperties: { [pattern]: { type: "object" } } },
  });
  for (
    const args of [{ names: { ["A".repeat(300) + "x"]: 1 } }, {
      keyed: { ["a".repeat(300) + "x"]: { X: 1 } },
    }]
  ) {
    assert.match(feedback(args), /could not be checked against the pattern/);
  }
  // a short key is judged
  assert.equal(feedback({ names: { ab: 1 }, keyed: { ax: { X: 1 } } }), "");
});

/**
 * Runs `run` with `call`, which sends a `tools/call` of "push" through `toolguard mcp` (driven by the MCP SDK
 * client) to a server whose one tool, "push", has `propertyNames: { not: { pattern } }` and answers a call
 * with "ran " and its line; `call` gives whether the answer is an error, and its text.
 */
async function throughRelay(
  pattern: string,
  run: (
    call: (args: Record<string, unknown>) => Promise<{ isError: boolean; text: string }>,
  ) => Promise<void>,
): Promise<void> {
  const server = [
    `const tool = { name: 'push', inputSchema: { type: 'object', propertyNames: { not: { pattern: ${
      JSON.stringify(pattern)
    } } } } };`,
    "require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {",
    "  const m = JSON.parse(line);",
    "  if (m.id === undefined) return;",
    "  const result = m.method === 'initialize'",
    "    ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } }",
    "    : m.method === 'tools/list' ? { tools: [tool] } : { content: [{ type: 'text', text: 'ran ' + line }] };",
    "  console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));",
    "});",
  ].join("\n");
  const relay = runtimeCommand(join(root, "cli.ts"), ["mcp", "--pins", "none", "--", "node", "-e", server]);
  const client = new Client({ name: "guarded", version: "1.0.0" });
  try {
    await client.connect(
      new StdioClientTransport({ command: relay.command, args: relay.args, cwd: root, stderr: "ignore" }),
    );
    await client.listTools();
    await run(async (args) => {
      const r = await client.callTool({ name: "push", arguments: args });
      return {
        isError: r.isError === true,
        text: (r.content as { text: string }[]).map((c) => c.text).join(""),
      };
    });
  } finally {
    await client.close();
  }
}

test(
  "toolguard mcp: the MCP SDK client's call naming in another case a key a propertyNames pattern forbids never reaches the server",
  {
    timeout: 60_000,
  },
  () =>
    throughRelay("^force$", async (call) => {
      const refused = await call({ FORCE: true });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /"FORCE", which the tool's name rule "\^force\$" judges in another case/);
      assert.doesNotMatch(refused.text, /^ran /, "the server never got it");
      const ran = await call({ forced: true });
      assert.match(ran.text, /^ran .*"forced":true/);
    }),
);

test("checkCall: a propertyNames pattern that spells no letter, or that the schema spells in the key's case too, refuses no case variant", () => {
  const feedback = feedbackOf({
    // a header allowed in either case, spelt as two patterns: `X-Trace` matches the second as written
    head: { type: "object", propertyNames: { anyOf: [{ pattern: "^x-" }, { pattern: "^X-" }] } },
    // no letter: a rule about word characters or length, not about a word (the long s and the sharp s fold
    // to an "s" that is a word character, and to two letters)
    word: { type: "object", propertyNames: { not: { pattern: "^\\w+$" } } },
    short: { type: "object", propertyNames: { not: { pattern: "^.{6,}$" } } },
  });
  assert.equal(feedback({ head: { "X-Trace": 1, "x-id": 2 } }), "");
  assert.equal(feedback({ word: { "\u017fa": 1 } }), "");
  assert.equal(feedback({ short: { "\u00df\u00df\u00df": 1 } }), "");
  // a word still judged: `X-Trace` against only `^x-`
  const lower = feedbackOf({ head: { type: "object", propertyNames: { not: { pattern: "^x-secret$" } } } });
  assert.match(lower({ head: { "X-Secret": 1 } }), /"X-Secret", which the tool's name rule "\^x-secret\$"/);
});

test("checkCall: a propertyNames pattern that gives a letter by its code, a Greek final sigma or an astral letter names words too", () => {
  const feedback = feedbackOf({
    // the capital F by its code: `force` and `FORCE` are not "Force", and passed
    unicode: not("^\\u0046orce$"),
    hex: not("^\\x46orce$"),
    braced: not("^\\u{46}orce$"),
    // Greek: the last sigma of "οδος" folds to the final form "ς", a pattern's letters one by one to "σ"
    final: not("^\u03bf\u03b4\u03bf\u03c2$"),
    plain: not("^\u03bf\u03b4\u03bf\u03c3$"),
    // Deseret, astral (two UTF-16 units): the pattern compiles without the u flag (`\-` is no escape with it)
    astral: not("^\u{10400}\\-$"),
    pair: not("^\\uD801\\uDC00x$"),
  });
  const refused = /which the tool's name rule .* judges in another case/;
  for (const key of ["force", "FORCE"]) {
    assert.match(feedback({ unicode: { [key]: true } }), refused, key);
    assert.match(feedback({ hex: { [key]: true } }), refused, key);
    assert.match(feedback({ braced: { [key]: true } }), refused, key);
  }
  for (const key of ["\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c3"]) {
    assert.match(feedback({ final: { [key]: 1 } }), refused, key);
  }
  for (const key of ["\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c2"]) {
    assert.match(feedback({ plain: { [key]: 1 } }), refused, key);
  }
  assert.match(feedback({ astral: { "\u{10428}-": 1 } }), refused);
  assert.match(feedback({ pair: { "\u{10428}X": 1 } }), refused);
  // Spelled as the pattern spells it, the schema refuses it; other words pass.
  assert.match(feedback({ unicode: { Force: true } }), /./);
  assert.equal(
    feedback({ unicode: { forced: 1 }, final: { "\u03bf\u03b4\u03bf": 1 }, astral: { "\u{10428}": 1 } }),
    "",
  );
  // A letter by its code in a class is about case, as a letter there is.
  const none = feedbackOf({ cls: not("^[\\u0046]orce$") });
  assert.equal(none({ cls: { force: 1 } }), "");
});

test("checkCall: the letters of an escape, a group's name or the flags a group sets spell no word in a propertyNames pattern", () => {
  // `^\x5F\w+$` spells "_" by its code and no letter, as `^_\w+$` does: its hex digit "F" counted as one,
  // the pattern was a word rule, and the long s the key folds to "s" (a word character) was refused where
  // `^_\w+$` lets it by. So with a group's flag (`(?s:`) and name (`(?<n>`).
  const feedback = feedbackOf({
    plain: not("^_\\w+$"),
    hex: not("^\\x5F\\w+$"),
    unicode: not("^\\u005F\\w+$"),
    braced: not("^\\u{5F}\\w+$"),
    control: not("^\\cJ\\w+$"),
    flag: not("^(?s:.{6,})$"),
    named: not("^(?<n>\\w+)\\k<n>$"),
  });
  assert.equal(feedback({ plain: { "_\u017fa": 1 } }), "");
  for (const name of ["hex", "unicode", "braced"]) {
    assert.equal(feedback({ [name]: { "_\u017fa": 1 } }), "", name);
  }
  assert.equal(feedback({ control: { "\n\u017fa": 1 } }), "");
  assert.equal(feedback({ flag: { "\u00df\u00df\u00df": 1 } }), "");
  assert.equal(feedback({ named: { "\u017fs": 1 } }), "");
  // a word spelled after such syntax is still judged
  const word = feedbackOf({ a: not("^\\x5F(?-i:force)$") });
  assert.match(word({ a: { _FORCE: 1 } }), /"_FORCE", which the tool's name rule .* judges in another case/);
});

test("checkCall: a key in capitals against a propertyNames pattern with repeats side by side is judged in linear time", async () => {
  // The key folded to lower case meets `^x-a*a*a*a*a*a*a*$` as a run of "a" the native engine would split
  // n^7 ways: 3 000 of them stalled the judge for minutes. Counted, not timed: the native engine is never
  // handed the folded key (the short key fails at once where it is).
  const pattern = "^x-a*a*a*a*a*a*a*$";
  const feedback = feedbackOf({ head: { type: "object", propertyNames: { not: { pattern } } } });
  assert.match(feedback({ head: { "X-AAA": 1 } }), /"X-AAA", which the tool's name rule/);
  for (const n of [18, 3_000]) {
    const key = "X-" + "A".repeat(n) + "!";
    const folded = key.toLowerCase();
    const native = (self: RegExp, [text]: string[]) => self.source === pattern && text === folded ? 1 : 0;
    assert.deepEqual(
      await countingWork(RegExp.prototype, "exec", () => feedback({ head: { [key]: 1 } }), native),
      [
        "",
        0,
      ],
    );
  }
});

test(
  "toolguard mcp: a key in capitals against a propertyNames pattern with repeats side by side is answered, not stalled",
  {
    // the relay is a child process: before, it spent minutes on this call, past this limit
    timeout: 60_000,
  },
  () =>
    throughRelay("^x-a*a*a*a*a*a*a*$", async (call) => {
      const ran = await call({ ["X-" + "A".repeat(3_000) + "!"]: true });
      assert.match(ran.text, /^ran /);
      const refused = await call({ "X-AAA": true });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /"X-AAA", which the tool's name rule/);
    }),
);

test("checkCall: a propertyNames pattern whose class gives a character by its code, or whose astral letter is half escaped, names words too", () => {
  // `[\u002d]` is `[-]`: the escape in a class made the pattern no rule at all, and `FORCE-x` passed where
  // `^force[-]x$` refuses it. A pair half written and half escaped is one letter where the pattern compiles
  // without the `u` flag (`\-` is no escape with it): read as two halves, no letter, `𐐀-` passed.
  const feedback = feedbackOf({
    unicode: not("^force[\\u002d]x$"),
    hex: not("^force[\\x2d]x$"),
    control: not("^force[\\cJ]$"),
    escapedHigh: not("^\\uD801\uDC28\\-$"),
    escapedLow: not("^\uD801\\uDC28\\-$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  for (const name of ["unicode", "hex"]) assert.match(feedback({ [name]: { "FORCE-x": 1 } }), stray, name);
  assert.match(feedback({ control: { "FORCE\n": 1 } }), stray);
  for (const name of ["escapedHigh", "escapedLow"]) {
    assert.match(feedback({ [name]: { "\u{10400}-": 1 } }), stray, name);
    assert.equal(feedback({ [name]: { "\u{10400}": 1 } }), "", name);
  }
  // A character by its code is no syntax: `\x5B` opens no class, `[\x5D]` ends none.
  assert.match(feedbackOf({ a: not("^x\\x5By$") })({ a: { "X[Y": 1 } }), stray);
  assert.match(feedbackOf({ a: not("^x[\\x5D]y$") })({ a: { "X]Y": 1 } }), stray);
  // With the `u` flag a half-escaped pair is two halves the key never holds: neither case is refused.
  const halves = feedbackOf({ a: not("^\\uD801\uDC28$") });
  for (const key of ["\u{10400}", "\u{10428}"]) assert.equal(halves({ a: { [key]: 1 } }), "", key);
});

test("checkCall: a class whose range holds letters between ends that are none, or that holds a letter by an escape, is about case; an escaped capital outside one names a word", () => {
  // `[\x60-\x7b]` and `` [`-{] `` hold `[a-z]`: judged as words they refused `idA`, which `[a-z]` lets by
  const feedback = feedbackOf({
    lower: not("^id[a-z]+$"),
    coded: not("^id[\\x60-\\x7b]+$"),
    raw: not("^id[`-{]+$"),
    upper: not("^id[\\x40-\\x5b]$"),
    // short of its digits, `\x4` is `x` and `\u12` is `u` (no `u` flag): a class holding a letter
    shortHex: not("^force[\\x4]$"),
    shortUnicode: not("^force[\\u12]$"),
    // `\X` is the capital X: kept as written, `FORCEx4` passed where `^forceX4$` refuses it
    capital: not("^force\\X4$"),
    written: not("^forceX4$"),
  });
  for (const name of ["lower", "coded", "raw"]) assert.equal(feedback({ [name]: { idA: 1 } }), "", name);
  assert.equal(feedback({ upper: { IDa: 1 } }), "");
  assert.equal(feedback({ shortHex: { FORCEX: 1 } }), "");
  assert.equal(feedback({ shortUnicode: { FORCEU: 1 } }), "");
  const stray = /which the tool's name rule .* judges in another case/;
  for (const name of ["capital", "written"]) assert.match(feedback({ [name]: { FORCEx4: 1 } }), stray, name);
  // A range with no letter in it stays a word rule: `FORCE.x` is the word `force.x` forbids.
  assert.match(feedbackOf({ a: not("^force[\\x2d-\\x2f]x$") })({ a: { "FORCE.x": 1 } }), stray);
});

test(
  "toolguard mcp: the MCP SDK client's key that a class's range judges in its own case reaches the server",
  { timeout: 60_000 },
  () =>
    throughRelay("^id[\\x60-\\x7b]+$", async (call) => {
      const ran = await call({ idA: 1 });
      assert.equal(ran.isError, false, ran.text);
      assert.match(ran.text, /^ran .*"idA":1/);
      const refused = await call({ ida: 1 });
      assert.equal(refused.isError, true, "spelled as the pattern spells it, the schema refuses it");
    }),
);

test("checkCall: a propertyNames pattern that spells the key in its own case through a modifier group or escapes lets it by, as one spelling it plainly does", () => {
  // `^(?-i:FORCE)$` is `^FORCE$` (the validator sets no `i` flag to turn off): beside `not ^force$` in an
  // anyOf, it lets `FORCE` by as `^FORCE$` does, but the word of the two was compared as written, and
  // `FORCE` was refused as a case variant of `force`.
  const either = (second: string) => ({
    type: "object",
    propertyNames: { anyOf: [{ not: { pattern: "^force$" } }, { pattern: second }] },
  });
  const spelled = [
    "^FORCE$",
    "^(?-i:FORCE)$",
    "^(?:FORCE)$",
    "^(?-ims:FORCE)$",
    "^\\x46ORCE$",
    "^(?-i:\\u0046O)RCE$",
  ];
  // (after an escaped backslash a group runs into nothing: `^\\(?-i:FORCE)$` is `^\\FORCE$`)
  const slashed = feedbackOf({
    p: {
      type: "object",
      propertyNames: { anyOf: [{ not: { pattern: "^\\\\force$" } }, { pattern: "^\\\\(?-i:FORCE)$" }] },
    },
  });
  assert.equal(slashed({ p: { "\\FORCE": 1 } }), "");
  assert.match(slashed({ p: { "\\Force": 1 } }), /which the tool's name rule/);
  const feedback = feedbackOf(Object.fromEntries(spelled.map((p, i) => [`p${i}`, either(p)])));
  for (const [i, p] of spelled.entries()) assert.equal(feedback({ [`p${i}`]: { FORCE: 1 } }), "", p);
  // still judged: a group that is about case, a group repeated or of alternatives, another word, another case
  const judged = [
    "^(?i:FORCE)$",
    "^(?:FORCE)?$",
    "^(?:FORCE|X)$",
    "^(?-i:FORCED)$",
    "^(?-i:Force)$",
    "^(FORCE)$",
  ];
  const strict = feedbackOf(Object.fromEntries(judged.map((p, i) => [`p${i}`, {
    type: "object",
    propertyNames: { allOf: [{ not: { pattern: "^force$" } }, { not: { pattern: "^x$" } }, { pattern: p }] },
  }])));
  for (const [i, p] of judged.entries()) {
    assert.match(
      strict({ [`p${i}`]: { FORCE: 1 } }),
      /"FORCE", which the tool's name rule "[^"]*" judges/,
      p,
    );
  }
});

test("checkCall: a propertyNames pattern's \\c before no control letter is a backslash and the letter c: a key spelling either in another case is refused", () => {
  // Without the `u` flag `^\c\x4a$` matches `\cJ`: kept as written, the `\c` ran into the coded letter after
  // it, folded to `\cj` (a control character), and `\cj`, which a case-blind server reads as `\cJ`, was let
  // by; `\c` alone spelled no letter, so `\C1` passed `not ^\c1$`.
  const forbidden = ["^\\c\\x4a$", "^\\c\\J$", "^\\c\\u004a$", "^\\c1$"];
  const feedback = feedbackOf(Object.fromEntries(forbidden.map((p, i) => [`p${i}`, not(p)])));
  const keys = [["\\cj", "\\CJ"], ["\\cj", "\\Cj"], ["\\cj"], ["\\C1"]];
  for (const [i, p] of forbidden.entries()) {
    for (const key of keys[i]) {
      assert.match(feedback({ [`p${i}`]: { [key]: 1 } }), /which the tool's name rule/, `${p} ${key}`);
    }
  }
  // as written the schema's own refusal; a control character is no such key; a \c before a letter is one
  assert.match(feedback({ p0: { "\\cJ": 1 } }), /p0/);
  assert.equal(feedbackOf({ p: not("^\\cJ$") })({ p: { "\\cj": 1 } }), "");
  assert.equal(feedbackOf({ p: not("^x\\c\\x4a$") })({ p: { "x\n": 1 } }), "");
});

test("checkCall: a propertyNames pattern spelling a character by its code, by an escape or as itself names one word: beside not ^force-x$, ^FORCE\\x2dX$ lets FORCE-X by as ^FORCE-X$ does", () => {
  // The word of a pattern kept the escape as written: `\x2d` and `-` were two words, and `FORCE-X` was
  // refused as a case variant of `force-x` where the schema spells it in that case too.
  const either = (forbidden: string, spelled: string) => ({
    type: "object",
    propertyNames: { anyOf: [{ not: { pattern: forbidden } }, { pattern: spelled }] },
  });
  const pairs: [string, string, string][] = [
    ["^force-x$", "^FORCE\\x2dX$", "FORCE-X"],
    ["^force\\x2dx$", "^FORCE-X$", "FORCE-X"],
    ["^force\\u002dx$", "^FORCE-X$", "FORCE-X"],
    // (`\-` outside a class: the pattern compiles without the `u` flag)
    ["^force\\-x$", "^FORCE-X$", "FORCE-X"],
    ["^force\\-x$", "^FORCE\\u{2d}X$", "FORCE-X"],
    ["^force[\\x2e]x$", "^FORCE[.]X$", "FORCE.X"],
    ["^force[-.]x$", "^FORCE[\\-\\x2e]X$", "FORCE.X"],
    ["^force\\cj$", "^FORCE\\n$", "FORCE\n"],
    ["^force\\.x$", "^FORCE\\x2eX$", "FORCE.X"],
    ["^force_{2}$", "^FORCE\\x5f{2}$", "FORCE__"],
  ];
  const feedback = feedbackOf(Object.fromEntries(pairs.map(([a, b], i) => [`p${i}`, either(a, b)])));
  for (const [i, [a, b, key]] of pairs.entries()) {
    assert.equal(feedback({ [`p${i}`]: { [key]: 1 } }), "", `${a} ${b}`);
    assert.match(
      feedback({ [`p${i}`]: { [key.toLowerCase().replace("f", "F")]: 1 } }),
      /name rule/,
      `${a} ${b}`,
    );
  }
  // Still other words: a count is not the braces it is written with, nor a literal dot any character.
  const judged: [string, string, string][] = [
    ["^x{2}$", "^X\\{2\\}$", "XX"],
    ["^x{2}$", "^X{\\x32}$", "XX"],
    ["^force.x$", "^FORCE\\.X$", "FORCE.X"],
  ];
  const strict = feedbackOf(Object.fromEntries(judged.map(([a, b], i) => [`p${i}`, either(a, b)])));
  for (const [i, [a, b, key]] of judged.entries()) {
    assert.match(strict({ [`p${i}`]: { [key]: 1 } }), /which the tool's name rule/, `${a} ${b}`);
  }
});

test("checkCall: an astral letter names one word in a propertyNames pattern read with the u flag and in one read without it", () => {
  // `^𐐨x$` compiles with the flag, `^𐐀\X$` without it (`\X` is no escape with it): both name the word
  // 𐐨x, the second in the key's case, so 𐐀X is let by as beside `^𐐀X$`; a word marked by the flag it is read
  // with refused it.
  const feedback = feedbackOf({
    p: {
      type: "object",
      propertyNames: { anyOf: [{ not: { pattern: "^\u{10428}x$" } }, { pattern: "^\u{10400}\\X$" }] },
    },
  });
  assert.equal(feedback({ p: { "\u{10400}X": 1 } }), "");
  assert.match(feedback({ p: { "\u{10400}x": 1 } }), /which the tool's name rule/);
});

test("checkCall: a propertyNames pattern's escaped letter without the u flag is a letter it spells (\\p, \\e), and a class's range from a control letter (\\cA) holds what lies between", () => {
  // Without the `u` flag `\p` is the letter p: the pattern was no rule at all (read as a Unicode property),
  // and `P-` passed `not ^\p\-$`, which a case-blind server reads as the `p-` it forbids. `[\cA-\x5f]` holds
  // `[A-Z]`: read as the three characters `\cA`, `-`, `_`, the pattern was a word rule, and `_d` was refused
  // where `^[\x01-\x5f]D$` lets it by.
  const feedback = feedbackOf({
    p: not("^\\p\\-$"),
    bigP: not("^\\P\\-$"),
    e: not("^forc\\e\\-$"),
    control: not("^[\\cA-\\x5f]D$"),
    coded: not("^[\\x01-\\x5f]D$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ p: { "P-": 1 } }), stray);
  assert.match(feedback({ bigP: { "p-": 1 } }), stray);
  assert.match(feedback({ e: { "FORCE-": 1 } }), stray);
  for (const name of ["control", "coded"]) assert.equal(feedback({ [name]: { _d: 1 } }), "", name);
  // With the `u` flag `\p{Lu}` is a property: about case, no word.
  assert.equal(feedbackOf({ a: not("^\\p{Lu}-$") })({ a: { "a-": 1 } }), "");
});

test(
  "checkCall: a propertyNames pattern judges a key alike however it spells each character, by code, by escape or as itself (random patterns, with and without the u flag)",
  { timeout: 60_000 },
  () => {
    // Two spellings of one pattern, each character written out, by `\xHH`, `\uHHHH`, `\u{H}` (u flag),
    // `\cX` or an escape of itself: alone under `not`, and beside a case variant in an `anyOf`, every key is
    // judged alike. Before, ~2% of such verdicts differed (`\x2d` and `-` two words, `[\cA-~]` no range).
    const random = seededRandom(74);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const LETTERS = [..."abefkpuxcEFKPUXCs\u00e9\u03a3"];
    const OTHERS = [..."-_.:/@14{}]()|^$*+?\\ \n\t\x01~,#"];
    const SYNTAX = "^$\\.*+?()[]{}|/";
    const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
    type Part = { chars: string[]; range?: boolean; quantifier: string };
    const spell = (c: string, u: boolean, inClass: boolean): string => {
      const code = c.charCodeAt(0);
      const ways = [`\\u${hex(code, 4)}`];
      if (inClass ? !"\\]^-[".includes(c) : !SYNTAX.includes(c) && !(u && "]{}".includes(c))) ways.push(c, c);
      const escapable = u
        ? SYNTAX.includes(c) || (inClass && c === "-")
        : !/[bBdDwWsSfnrtvcuxkpP0-9]/.test(c);
      if (escapable) ways.push(`\\${c}`);
      if (code <= 0xff) ways.push(`\\x${hex(code, 2)}`);
      if (u) ways.push(`\\u{${hex(code, 1)}}`);
      if (code >= 1 && code <= 26) {
        ways.push(`\\c${String.fromCharCode(64 + code)}`, `\\c${String.fromCharCode(96 + code)}`);
      }
      return pick(ways);
    };
    const render = (parts: Part[], u: boolean) =>
      (u ? "-?^" : "\\-?^") + parts.map(({ chars, range, quantifier }) =>
        (chars.length === 1 && !range
          ? spell(chars[0], u, false)
          : `[${
            chars.map((c) => spell(c, u, true)).join(range ? "-" : "")
          }]`) + quantifier
      ).join("") + "$";
    const recase = (s: string) =>
      [...s].map((c) => random() < 0.5 ? c.toUpperCase() : c.toLowerCase()).join("");
    const guard = createMcpGuard({});
    const verdict = (propertyNames: unknown, key: string) => {
      guard.setTools([{
        name: "act",
        inputSchema: { type: "object", properties: { p: { type: "object", propertyNames } } },
      }]);
      const check = guard.checkCall({ name: "act", arguments: { p: { [key]: 1 } } });
      return check.allowed
        ? "allowed"
        : /not supported/.test(check.feedback)
        ? undefined
        : /name rule/.test(check.feedback)
        ? "stray"
        : "refused";
    };
    let [compared, differ] = [0, 0];
    for (let n = 0; n < 250; n++) {
      const parts: Part[] = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
        const quantifier = random() < 0.15 ? pick(["?", "*", "{2}"]) : "";
        if (random() < 0.8) return { chars: [random() < 0.6 ? pick(LETTERS) : pick(OTHERS)], quantifier };
        const chars = [pick(OTHERS), pick(OTHERS)].sort();
        return { chars, range: random() < 0.4 && chars[0] !== chars[1], quantifier };
      });
      const variant = parts.map((p) => ({
        ...p,
        chars: p.chars.map((c) => random() < 0.5 ? c.toUpperCase() : c),
      }));
      const u = random() < 0.5;
      const [p1, p2, q1, q2] = [render(parts, u), render(parts, u), render(variant, u), render(variant, u)];
      const compiles = (p: string, flags: string) => {
        try {
          return new RegExp(p, flags) !== undefined;
        } catch {
          return false;
        }
      };
      if (![p1, p2, q1, q2].every((p) => u ? compiles(p, "u") : !compiles(p, "u") && compiles(p, ""))) {
        continue;
      }
      const text = (ps: Part[]) =>
        ps.map((p) =>
          p.quantifier === "?" || p.quantifier === "*"
            ? ""
            : p.chars[0].repeat(p.quantifier === "{2}" ? 2 : 1)
        ).join("");
      for (
        const key of [text(parts), recase(text(parts)), recase(text(variant)), text(parts).toUpperCase()]
      ) {
        const either = (a: string, b: string) => ({ anyOf: [{ not: { pattern: a } }, { pattern: b }] });
        for (
          const [a, b] of [[{ not: { pattern: p1 } }, { not: { pattern: p2 } }], [
            either(p1, q1),
            either(p2, q2),
          ]]
        ) {
          const [va, vb] = [verdict(a, key), verdict(b, key)];
          if (va === undefined || vb === undefined) continue;
          compared++;
          if (va !== vb) differ++;
          assert.equal(va, vb, `${JSON.stringify(a)} and ${JSON.stringify(b)} on ${JSON.stringify(key)}`);
        }
      }
    }
    assert.ok(compared > 1000 && differ === 0, `${compared} compared`);
  },
);

test("checkCall: a propertyNames pattern's \\k without the u flag is the letter k unless a group is named; a lookbehind names none", () => {
  // `(?<=` and `(?<!` open lookbehinds, and `\(?<` is an escaped parenthesis: no group is named. Read as
  // one, `\k` was syntax, `^(?<=)\k-$` spelled no letter and was no rule, and `K-` passed `not ^(?<=)\k-$`,
  // which a case-blind server reads as the `k-` it forbids.
  const feedback = feedbackOf({
    behind: not("^(?<=)\\k\\-$"),
    notBehind: not("^(?<!x)\\k\\-$"),
    named: not("^(?<n>\\-)\\k<n>x$"),
    escaped: not("^\\(?<\\-\\k$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ behind: { "K-": 1 } }), stray);
  assert.match(feedback({ notBehind: { "K-": 1 } }), stray);
  assert.match(feedback({ named: { "--X": 1 } }), stray);
  assert.match(feedback({ escaped: { "<-K": 1 } }), stray);
  assert.equal(feedback({ behind: { "k-x": 1 } }), "");
});

test("checkCall: a propertyNames pattern read without the u flag that gives a low half alone, or repeats an astral letter, judges the letter a key's halves make", () => {
  // Without the `u` flag a pattern matches a key unit by unit: `[\ud801][\udc00]` matches the letter
  // `\u{10400}`, and `\u{10400}+` repeats its low half alone. Folded as written, the halves were no letter and
  // the repeat one of the folded letter's halves, and `\u{10428}x` passed `not ^[\ud801][\udc00]x\-?$` (and
  // `\u{10428}\udc00x` passed `not ^\u{10400}+x\-?$`), which a case-blind server reads as the key it forbids.
  const feedback = feedbackOf({
    classes: not("^[\\ud801][\\udc00]x\\-?$"),
    group: not("^\\ud801(\\udc00)x\\-?$"),
    negated: not("^\\ud801[^\\udc28]x\\-?$"),
    any: not("^.\\udc00x\\-?$"),
    repeated: not("^\u{10400}+x\\-?$"),
    counted: not("^\\ud801\\udc00{2}x\\-?$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  for (const name of ["classes", "group", "negated", "any"]) {
    assert.match(feedback({ [name]: { "\u{10428}x": 1 } }), stray, name);
    assert.match(feedback({ [name]: { "\u{10400}X": 1 } }), stray, name);
  }
  for (const name of ["repeated", "counted"]) {
    assert.match(feedback({ [name]: { "\u{10428}\udc00x": 1 } }), stray, name);
  }
  // The key it forbids as spelled is the schema's to refuse; keys it never names pass.
  assert.doesNotMatch(feedback({ repeated: { "\u{10400}\udc00x": 1 } }), stray);
  assert.equal(feedback({ repeated: { "\u{10400}\u{10400}x": 1 } }), "");
  assert.equal(feedback({ classes: { yx: 1 } }), "");
});

test("checkCall: a propertyNames pattern read without the u flag is folded and read without it too, though its folded form would compile with it", () => {
  // `^\E..$` needs the legacy reading (`\E` is no escape with the flag), and there `.` is one UTF-16 unit:
  // it forbids `E😀`. Folded to `^e..$`, which compiles with the flag, it was read with it, where `.` is a
  // whole astral character, and `e😀`, which a case-blind server reads as the `E😀` forbidden, passed.
  const feedback = feedbackOf({ dots: not("^\\E..$"), sets: not("^\\E\\W\\W$") });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ dots: { "e\u{1f600}": 1 } }), stray);
  assert.match(feedback({ sets: { "e\u{1f600}": 1 } }), stray);
  assert.equal(feedback({ dots: { "e\u{1f600}\u{1f600}": 1 } }), "");
});

test("checkCall: a class in a propertyNames pattern read without the u flag holds each half of an astral letter on its own, no letter", () => {
  // `[\ud801\udc00]` (or the letter written in it) without the flag holds two lone halves. Read as the
  // letter `\u{10400}`, the class was about case, the pattern no rule, and `\ud801X-` passed
  // `not ^[\ud801\udc00]x\-$`, which a case-blind server reads as the `\ud801x-` it forbids.
  const feedback = feedbackOf({
    coded: not("^[\\ud801\\udc00]x\\-$"),
    written: not("^[\u{10400}]x\\-$"),
    half: not("^[\ud801\\udc00]x\\-$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  for (const name of ["coded", "written", "half"]) {
    assert.match(feedback({ [name]: { "\ud801X-": 1 } }), stray, name);
    assert.match(feedback({ [name]: { "\udc00X-": 1 } }), stray, name);
  }
  // With the flag the class holds the letter: about case, no word.
  assert.equal(feedbackOf({ a: not("^[\\ud801\\udc00]x-$") })({ a: { "\u{10428}X-": 1 } }), "");
});

test("caseTwin, caseStray: the capital sharp s folds as the small one does, to ss", () => {
  // Folded once, the capital sharp s became the small one, which folds to "ss": `STRA\u1e9eE` was another
  // name than `stra\u00dfe`, which Go's encoding/json reads it as (Unicode simple folding pairs them).
  assert.equal(foldCase("\u1e9e"), foldCase("\u00df"));
  assert.deepEqual(caseTwin({ arguments: { "stra\u00dfe": 1, "STRA\u1e9eE": 2 } }, "/params")?.spellings, [
    "stra\u00dfe",
    "STRA\u1e9eE",
  ]);
  const tools = [{
    name: "t",
    inputSchema: { type: "object", properties: { "stra\u00dfe": { type: "string" } } },
  }];
  assert.equal(caseStray({ name: "t", arguments: { "STRA\u1e9eE": "x" } }, tools)?.declared, "stra\u00dfe");
});

test("checkCall: a propertyNames pattern's octal escape without the u flag is the letter it codes, where it is no backreference", () => {
  // Without the `u` flag `\106` is `F` (an octal code, Annex B) unless the pattern opens 106 groups: kept as
  // written, it was no letter, `^\106orce$` a rule that `force` passed, and `^\101$` no rule at all, though a
  // case-blind server reads `force` as the `Force` it forbids, and `a` as the `A`.
  const feedback = feedbackOf({
    octal: not("^\\106orce$"),
    alone: not("^\\101$"),
    inClass: not("^x[\\101]$"),
    reference: not("^(x)\\1$"),
    past: not("^(x)\\101$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ octal: { force: 1 } }), stray);
  assert.match(feedback({ alone: { a: 1 } }), stray);
  assert.match(feedback({ past: { Xa: 1 } }), stray);
  // A backreference stays one, and a class holding a letter by its code is about case.
  assert.equal(feedback({ reference: { x1: 1 } }), "");
  assert.equal(feedback({ inClass: { Xa: 1 } }), "");
  assert.equal(feedback({ octal: { forces: 1 } }), "");
});

test(
  "checkCall: a propertyNames pattern's verdict on a key agrees with the pattern itself on the key's case variants, for letters whose folding is special (random patterns with \\w, \\W, \\b, dots and octal escapes)",
  { timeout: 60_000 },
  () => {
    // The oracle is the pattern itself, compiled as the validator compiles it, tried on every case variant a
    // case-blind reader (Unicode simple folding, as `/iu` and Go's encoding/json fold) may take the key for:
    // where one matches and the key as spelled does not, the key is a stray; where none does, it passes (or,
    // for the judge's wider folding, where the dotless i is an i and the sharp s two letters, may be one).
    // Before, the key folded (the long s to `s`, the Kelvin sign to `k`, the sharp s to `ss`) read otherwise
    // under `\W`, `\b` or `.` than the key (`X\u017f` passed `not ^x\W$`), and a pattern spelling a sharp s was
    // no rule. Letters are spelled by code too, octal escapes among them.
    const random = seededRandom(75);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const LETTERS = [..."xXsSkKiI\u00df\u0130\u00e9"];
    const ALPHABET = [..."xXsS\u017fkK\u212aiI\u0131\u0130\u00df\u1e9e\u00e9\u00c9-_ 1"];
    const SETS = [
      ".",
      "\\w",
      "\\W",
      "\\b",
      "\\B",
      "\\s",
      "\\S",
      "\\d",
      "[^-]",
      "[-_]",
      "[^\\w]",
      "[^\\W]",
      "-",
      "_",
      " ",
    ];
    const fold = (c: string) => c.toUpperCase().toLowerCase().toUpperCase().toLowerCase();
    // (a form no other form of the alphabet cases to, the long s or the Kelvin sign, is read for a key's
    // letter only where the key spells it: no one names a member with one)
    const lone = (d: string) =>
      !ALPHABET.some((e) => e !== d && (e.toLowerCase() === d || e.toUpperCase() === d));
    const simple = (c: string) =>
      ALPHABET.filter((d) =>
        d === c || (!lone(d) && new RegExp(`^\\u{${c.codePointAt(0)!.toString(16)}}$`, "iu").test(d))
      );
    const wide = (c: string) => ALPHABET.filter((d) => fold(d) === fold(c));
    const some = (key: string, variants: (c: string) => string[], re: RegExp) => {
      const each = (at: number, w: string): boolean =>
        at === key.length ? re.test(w) : variants(key[at]).some((d) => each(at + 1, w + d));
      return each(0, "");
    };
    const spell = (c: string, u: boolean) => {
      const code = c.charCodeAt(0);
      const ways = [c, `\\u${code.toString(16).padStart(4, "0")}`];
      if (!u && code <= 0o377 && code >= 0o100) ways.push(`\\${code.toString(8)}`);
      if (code <= 0xff) ways.push(`\\x${code.toString(16).padStart(2, "0")}`);
      return pick(ways);
    };
    const guard = createMcpGuard({});
    const verdict = (pattern: string, key: string) => {
      guard.setTools([{
        name: "act",
        inputSchema: {
          type: "object",
          properties: { p: { type: "object", propertyNames: { not: { pattern } } } },
        },
      }]);
      const check = guard.checkCall({ name: "act", arguments: { p: { [key]: 1 } } });
      return check.allowed ? "allowed" : /name rule/.test(check.feedback) ? "stray" : "refused";
    };
    let [strays, passed] = [0, 0];
    const wrong: string[] = [];
    for (let n = 0; n < 400; n++) {
      const u = random() < 0.5;
      const parts = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
        const letter = random() < 0.5;
        const c = letter ? pick(LETTERS) : pick(SETS);
        const quantifier = !/^\\[bB]$/.test(c) && random() < 0.2 ? pick(["?", "+", "{2}"]) : "";
        return { c, letter, quantifier };
      });
      const pattern = (u ? "-?^" : "\\-?^") +
        parts.map((p) => (p.letter ? spell(p.c, u) : p.c) + p.quantifier).join("") +
        (random() < 0.8 ? "$" : "");
      const re = new RegExp(pattern, u ? "u" : "");
      const sample = parts.map((p) =>
        p.letter ? p.c.repeat(p.quantifier === "{2}" ? 2 : 1) : p.c === "\\w" ? "s" : p.c === "\\W" ? "-" : ""
      ).join("");
      const keys = new Set([sample]);
      for (let k = 0; k < 5; k++) {
        keys.add(
          [...sample].map((c) => random() < 0.6 ? pick(wide(c).length > 0 ? wide(c) : [c]) : c).join(""),
        );
        keys.add(Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(ALPHABET)).join(""));
      }
      const rule = parts.some((p) => p.letter);
      const special = /[\u00df\u1e9e\u0130]/.test(pattern + [...keys].join("")) ||
        /\\u00df|\\337|\\xdf/.test(pattern);
      for (const key of keys) {
        if (key === "") continue;
        const got = verdict(pattern, key);
        const expected = re.test(key) ? "refused" : rule && some(key, simple, re) ? "stray" : "allowed";
        if (got === "stray") strays++;
        else passed++;
        // (the judge's wider folding may take a key for one the pattern matches where a simple one does not)
        // (and beside \b a form no word character that folds to one reads either way)
        const wider = got === "stray" && expected === "allowed" &&
          (special || some(key, wide, re) || (/[\u017f\u212a\u0131]/.test(key) && /\\[bB]/.test(pattern)));
        if (got !== expected && !wider) {
          wrong.push(`${JSON.stringify(pattern)} on ${JSON.stringify(key)}: ${got}`);
        }
      }
    }
    assert.deepEqual(wrong.slice(0, 10), []);
    assert.ok(strays > 200 && passed > 1000, `${strays} strays, ${passed} passed`);
  },
);

test("checkCall: a propertyNames pattern judges a key whose letters fold otherwise (the long s, the Kelvin sign, the dotless i, the sharp s) by what the pattern itself matches", () => {
  // The key folded read otherwise than a case variant of it: `X\u017f` folds to `xs`, a word character where
  // `\W` reads the long s; `KAP\u0131` to `kapi`, where `\b` holds after `kap\u0131`; `STRA\u00dfE` to
  // `strasse`, one letter longer than `str..e` reads. A pattern spelling a sharp s was no rule at all.
  const feedback = feedbackOf({
    nonWord: not("^x\\W$"),
    boundary: not("^kap\\b"),
    dots: not("^str..e$"),
    sharp: not("^gr\u00f6\u00dfe$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ nonWord: { "X\u017f": 1 } }), stray);
  assert.match(feedback({ nonWord: { "X\u212a": 1 } }), stray);
  assert.match(feedback({ boundary: { "KAP\u0131": 1 } }), stray);
  assert.match(feedback({ dots: { "STRA\u00dfE": 1 } }), stray);
  for (const key of ["GR\u00d6\u00dfE", "GR\u00d6\u1e9eE", "GR\u00d6SSE"]) {
    assert.match(feedback({ sharp: { [key]: 1 } }), stray, key);
  }
  // Keys no case variant of which the pattern matches pass; a backreference stays one.
  assert.equal(feedback({ nonWord: { Xs: 1 } }), "");
  assert.equal(feedback({ boundary: { kapi: 1 } }), "");
  assert.equal(feedbackOf({ ref: not("^(x)\\1$") })({ ref: { x1: 1 } }), "");
});

test("LONE_CASE_FORMS holds every letter no other form of its case cases to, as the engine's tables have them", () => {
  // The word rules read a letter in any case a case-blind reader takes it for (`s` as `S` and the long s);
  // upper and lower case lead from each form to the others but to these, which are listed.
  const groups = new Map<string, string[]>();
  for (let code = 0; code <= 0x1ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const c = String.fromCodePoint(code);
    if (c.toLowerCase() === c && c.toUpperCase() === c) continue;
    const fold = foldCase(c);
    groups.set(fold, [...(groups.get(fold) ?? []), c]);
  }
  const unlisted: string[] = [];
  for (const forms of groups.values()) {
    for (const form of forms) {
      const reached = new Set([form]);
      for (const x of reached) {
        for (const y of [x.toLowerCase(), x.toUpperCase()]) if (forms.includes(y)) reached.add(y);
      }
      for (const other of forms) {
        if (!reached.has(other) && !LONE_CASE_FORMS.includes(other)) {
          unlisted.push(other.codePointAt(0)!.toString(16));
        }
      }
    }
  }
  assert.deepEqual([...new Set(unlisted)], []);
});

test("checkCall: a propertyNames pattern's negated class of word characters holds the long s, the Kelvin sign and the dotless i as spelled", () => {
  // The variants widened `\\w` in every class to hold them, in `[^\\w]` too, which then held them no more:
  // `X\u017f` passed `not ^x[^\\w]$`, though the pattern matches `x\u017f`, which a case-blind server reads
  // it as.
  const feedback = feedbackOf({ negated: not("^x[^\\w]$"), plain: not("^x[\\w]$") });
  const stray = /which the tool's name rule .* judges in another case/;
  for (const key of ["X\u017f", "X\u212a", "X\u0131"]) {
    assert.match(feedback({ negated: { [key]: 1 } }), stray, key);
    assert.match(feedback({ plain: { [key]: 1 } }), stray, key);
  }
  assert.equal(feedback({ negated: { Xs: 1 } }), "");
});

test("checkCall: a propertyNames pattern repeating \\w beside a lookaround judges the long s as the pattern itself does", () => {
  // The variants wrote `\\w` as a group, `(?:\\w|[\\u017f...])`: repeated beside a lookahead, the validator's
  // guard against backtracking refused it, the variants did not compile, and `X\u017f` passed
  // `not ^x(?!ab$)\\w*\\W$`, though the pattern matches `x\u017f`, which a case-blind server reads it as.
  const feedback = feedbackOf({ a: not("^x(?!ab$)\\w*\\W$"), b: not("^(?!ab$)x\\w+\\W$") });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ a: { "X\u017f": 1 } }), stray);
  assert.match(feedback({ b: { "Xy\u212a": 1 } }), stray);
  assert.equal(feedback({ a: { "Xs": 1 } }), "");
});

test("checkCall: a propertyNames pattern's negative lookaround reads the key as spelled, where the rest reads it in any case", () => {
  // Widened to every case form, a letter or `\w` in `(?!...)` refused more keys, so the pattern matched less
  // than any variant of the key: `X\u017f` passed `not ^x(?!s)\W` (the pattern matches `x\u017f`), and an
  // ASCII key, judged folded alone, read the lookaround folded too: `Id` passed `not ^(?!ID$)\w*id$`, which
  // matches `id`, as a case-blind server reads it.
  const feedback = feedbackOf({
    ahead: not("^x(?!s)\\W"),
    word: not("^x(?!\\w)"),
    behind: not("^.(?<!s)x$"),
    except: not("^(?!ID$)\\w*id$"),
    prefix: not("^(?!x_)\\w+$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ ahead: { "X\u017f": 1 } }), stray);
  assert.match(feedback({ word: { "X\u017f": 1 } }), stray);
  assert.match(feedback({ behind: { "\u017fX": 1 } }), stray);
  assert.match(feedback({ except: { Id: 1 } }), stray);
  // What the lookaround excepts as spelled passes, as it did: the exception `ID`, a key that spells `x_`.
  assert.equal(feedback({ except: { ID: 1 } }), "");
  assert.equal(feedback({ prefix: { x_FOO: 1 } }), "");
  assert.equal(feedback({ ahead: { XS: 1 } }), "");
});

test("checkCall: a long propertyNames pattern judges the long s, the Kelvin sign and the sharp s as a short one does", () => {
  // A pattern past 4096 characters was judged folded alone, so what its variants close stayed open there:
  // `X\u017f` passed `not ^x\W$|...` (a long list of words), which a short one refuses.
  const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join("|");
  const feedback = feedbackOf({
    nonWord: not(`^x\\W$|^(?:${words})$`),
    dots: not(`^str..e$|^(?:${words})$`),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.ok(words.length > 4096);
  assert.match(feedback({ nonWord: { "X\u017f": 1 } }), stray);
  assert.match(feedback({ nonWord: { "X\u212a": 1 } }), stray);
  assert.match(feedback({ dots: { "STRA\u00dfE": 1 } }), stray);
  assert.match(feedback({ nonWord: { WORD7: 1 } }), stray);
  assert.equal(feedback({ nonWord: { Xs: 1 } }), "");
});

test("checkCall: a propertyNames pattern of many escapes and groups is read in time linear in its length", async () => {
  // The groups a pattern opens were counted anew at each escape (`\1`, `\d`, `\k`): a hostile server's
  // pattern of 40 000 `\1` took 11 s to read. The regular expressions run while reading it are counted.
  const work = async (n: number) => {
    const guard = createMcpGuard({});
    guard.setTools([{
      name: "act",
      inputSchema: { type: "object", propertyNames: { not: { pattern: "^x" + "(?:\\d)\\1".repeat(n) } } },
    }]);
    const [check, tests] = await countingWork(
      RegExp.prototype,
      "test",
      () => guard.checkCall({ name: "act", arguments: { Xs: 1 } }),
    );
    assert.equal(check.allowed, true);
    return tests;
  };
  const [small, large] = [await work(200), await work(800)];
  assert.ok(large < small * 6, `${small} -> ${large}`);
});

test("checkCall: a propertyNames pattern's backreference to a letter that folds otherwise reads the key as the pattern itself does", () => {
  // The variants read `\1` as spelled, and the key folded reads the long s as the word character `s`:
  // `X\u017fx\u017f` passed `not ^(x\W)\1$`, which matches `x\u017fx\u017f`, as a case-blind server reads it.
  const feedback = feedbackOf({
    numbered: not("^(x\\W)\\1$"),
    named: not("^(?<a>x\\W)\\k<a>$"),
    dots: not("^(s.)\\1$"),
  });
  const stray = /which the tool's name rule .* judges in another case/;
  assert.match(feedback({ numbered: { "X\u017fx\u017f": 1 } }), stray);
  assert.match(feedback({ numbered: { "X\u212aX\u212a": 1 } }), stray);
  assert.match(feedback({ named: { "X\u017fx\u017f": 1 } }), stray);
  assert.match(feedback({ dots: { "S\u00dfs\u00df": 1 } }), stray);
  // No case variant of these matches: the letter after differs, or `\W` reads a word character.
  assert.equal(feedback({ numbered: { "X\u017fy\u017f": 1 } }), "");
  assert.equal(feedback({ numbered: { "XSxS": 1 } }), "");
});
