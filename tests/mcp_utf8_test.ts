/**
 * A line that is not valid UTF-8: the guard reads each bad byte as U+FFFD, while a peer's decoder may skip it
 * or read it with the bytes after it (a lead byte before a quote ends no string to a lax decoder), and so read
 * other keys or values than the guard judged. Such a line never goes on as it came, over stdio and HTTP,
 * either way: a client's `tools/call` is refused as malformed, any other message goes written anew as the
 * guard read it. The SDKs cannot send such text, so the client here writes raw bytes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMcpGuard, type McpEvent, type McpFrame } from "../mcp.ts";
import { Utf8Faults } from "../_mcp/http.ts";
import {
  type RawClient,
  rawLineClient,
  relayToRawLineProcess,
  relayToRawLineServer,
  relayUntilAnswered,
  scriptedServer,
} from "./_mcp_http.ts";
import { runtimeCommand } from "./_runtime.ts";
import { countingWork } from "./_counting.ts";
import { createFramer } from "../_mcp/framing.ts";
import { notUtf8 } from "../_mcp/session.ts";

const enc = new TextEncoder();
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A line's bytes: its text with `bad` (bytes that are no UTF-8) in place of each `%`. */
function line(text: string, bad: number[]): Uint8Array {
  const parts = text.split("%");
  const bytes = parts.flatMap((part, i) => [...enc.encode(part), ...(i < parts.length - 1 ? bad : [])]);
  return new Uint8Array(bytes);
}

const INITIALIZE = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
  '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
/** A call whose argument ends in a lead byte before the quote, and a ping, spaced, with a byte no UTF-8 has. */
const CALL = line(
  '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"read_file","arguments":' +
    '{"path":"notes.txt","note":"%"}}}',
  [0xc3],
);
const PING = line('{"jsonrpc": "2.0", "id": 22, "method": "ping", "params": {"note": "a%b"}}', [0xff]);
/** A call in valid UTF-8 (a U+FFFD of its own among its characters): it goes on as it came. */
const PLAIN = '{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"read_file","arguments":' +
  '{"path":"notes \u00e9\ufffd.txt"}}}';
const IDS = [21, 22, 23];

/** The answers the client read, by id. */
function byId(lines: readonly string[]): Map<number, Record<string, unknown>> {
  const got = new Map<number, Record<string, unknown>>();
  for (const line of lines) {
    const m = JSON.parse(line);
    if (typeof m.id === "number") got.set(m.id, m);
  }
  return got;
}

/** The client: writes its lines, reads until each of `IDS` is answered. */
function client(lines: Uint8Array[]): RawClient & { lines: string[] } {
  const chunks = lines.map((bytes) => new Uint8Array([...bytes, 0x0a]));
  return rawLineClient(chunks, (read) => IDS.every((id) => byId(read).has(id)));
}

/** What the client read and the events, alike for both relays: every case that fails is named. */
function check(got: Map<number, Record<string, unknown>>, events: McpEvent[]): void {
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => void (ok || problems.push(what));
  const call = got.get(21)?.result as { isError?: boolean; content?: { text: string }[] } | undefined;
  expect(
    call?.isError === true && /not valid UTF-8/.test(call.content?.[0]?.text ?? ""),
    `21: ${JSON.stringify(call)}`,
  );
  // The server read the ping as the guard did (written anew: no spaces, U+FFFD for the bad byte).
  const ping = (got.get(22)?.result as { got?: string } | undefined)?.got;
  expect(ping === '{"jsonrpc":"2.0","id":22,"method":"ping","params":{"note":"a\ufffdb"}}', `22: ${ping}`);
  const plain = (got.get(23)?.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text;
  expect(plain === PLAIN, `23: ${plain}`);
  const utf8 = events.filter((e) => e.event === "invalid_utf8");
  expect(JSON.stringify(utf8) === '[{"event":"invalid_utf8","from":"client","id":22}]', JSON.stringify(utf8));
  const rejected = events.flatMap((e) => e.event === "call_rejected" ? [e.id] : []);
  expect(JSON.stringify(rejected) === "[21]", `rejected: ${rejected}`);
  assert.deepEqual(problems, []);
}

test(
  "relayMcp: a line that is not UTF-8 never reaches the server as it came: a call is refused, the rest is written anew",
  { timeout: 60_000 },
  async () => {
    const c = client([CALL, PING, enc.encode(PLAIN)]);
    const events = await relayToRawLineProcess(c);
    check(byId(c.lines), events);
  },
);

test(
  "relayMcpHttp: a line that is not UTF-8 never reaches the server as it came: a call is refused, the rest is written anew",
  {
    timeout: 60_000,
  },
  async () => {
    const c = client([enc.encode(INITIALIZE), enc.encode(INITIALIZED), CALL, PING, enc.encode(PLAIN)]);
    const events = await relayToRawLineServer(c);
    check(byId(c.lines), events);
  },
);

test("McpSession: a server answer that is not UTF-8 goes to the client written anew, one judged by its id too", () => {
  const toClient: McpFrame[] = [];
  const events: McpEvent[] = [];
  const guard = createMcpGuard({ onEvent: (e) => void events.push(e) });
  guard.setTools([{ name: "echo", inputSchema: { type: "object" } }]);
  const session = guard.connect({ toServer: () => {}, toClient: (f) => void toClient.push(f) });
  const frame = (bytes: Uint8Array): McpFrame => ({
    bytes,
    message: JSON.parse(new TextDecoder().decode(bytes)),
  });
  session.fromClient(
    frame(enc.encode('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}')),
  );
  session.fromClient(frame(enc.encode('{"jsonrpc":"2.0","id":6,"method":"resources/list"}')));
  // (an answer to a plain call, judged by its id alone; the lead byte before the quote hides `"id":7` from
  // the guard's reading, not from a lax decoder's)
  session.fromServer(frame(line('{"jsonrpc":"2.0","id":5,"result":{"content":[],"x":"%"}}', [0xe2])));
  session.fromServer(frame(line('{"jsonrpc":"2.0","id":6,"result":{"resources":[],"x":"%"}}', [0xff])));
  assert.equal(toClient.length, 2);
  for (const f of toClient) assert.equal(f.bytes, undefined, "passed on as it came");
  assert.deepEqual(events.filter((e) => e.event === "invalid_utf8"), [
    { event: "invalid_utf8", from: "server", id: 5 },
    { event: "invalid_utf8", from: "server", id: 6 },
  ]);
  // A valid line goes as it came.
  session.fromClient(
    frame(enc.encode('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}')),
  );
  session.fromServer(frame(enc.encode('{"jsonrpc":"2.0","id":7,"result":{"content":[],"x":"\ufffd"}}')));
  assert.notEqual(toClient[2].bytes, undefined);
});

test("McpSession: a server batch that is not UTF-8, split into lines, is reported once, as a lone line is", () => {
  const toClient: McpFrame[] = [];
  const events: McpEvent[] = [];
  const guard = createMcpGuard({ batches: "split", onEvent: (e) => void events.push(e) });
  guard.setTools([{ name: "echo", inputSchema: { type: "object" } }]);
  const session = guard.connect({ toServer: () => {}, toClient: (f) => void toClient.push(f) });
  const frame = (bytes: Uint8Array): McpFrame => ({
    bytes,
    message: JSON.parse(new TextDecoder().decode(bytes)),
  });
  session.fromClient(frame(enc.encode('{"jsonrpc":"2.0","id":6,"method":"resources/list"}')));
  session.fromServer(frame(line(
    '[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%"}},' +
      '{"jsonrpc":"2.0","id":6,"result":{"resources":[],"x":"%"}}]',
    [0xff],
  )));
  assert.equal(toClient.length, 2);
  for (const f of toClient) assert.equal(f.bytes, undefined, "passed on as it came");
  assert.deepEqual(events.filter((e) => e.event === "invalid_utf8"), [{
    event: "invalid_utf8",
    from: "server",
  }]);
  // A valid batch is not reported.
  session.fromClient(frame(enc.encode('{"jsonrpc":"2.0","id":7,"method":"resources/list"}')));
  session.fromServer(frame(enc.encode('[{"jsonrpc":"2.0","id":7,"result":{"resources":[],"x":"\ufffd"}}]')));
  assert.equal(events.filter((e) => e.event === "invalid_utf8").length, 1);
  // Over HTTP the relay decodes a body and notes it as not UTF-8: a batch in it is reported once too.
  session.fromClient(frame(enc.encode('{"jsonrpc":"2.0","id":8,"method":"resources/list"}')));
  session.fromServer(notUtf8({ message: [{ jsonrpc: "2.0", id: 8, result: { resources: [] } }] }));
  assert.equal(events.filter((e) => e.event === "invalid_utf8").length, 2);
  assert.equal(toClient.length, 4);
});

test("toolguard mcp: a client line that is not UTF-8 is named once on stderr", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-utf8-cli-"));
  try {
    const server = runtimeCommand(join(root, "tests", "_mcp_raw_server.ts"), [join(dir, "server.log")]);
    const cli = runtimeCommand(join(root, "cli.ts"), [
      "mcp",
      "--pins",
      "none",
      "--",
      server.command,
      ...server.args,
    ]);
    const input = new Uint8Array([...PING, 0x0a, ...PING, 0x0a]);
    const r = spawnSync(cli.command, cli.args, { cwd: root, input, encoding: "utf8", timeout: 50_000 });
    assert.equal(r.status, 0, r.stderr);
    const said = r.stderr.match(/the client sent a message that is not valid UTF-8; passed on written anew/g);
    assert.equal(said?.length, 1, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  "relayMcpHttp: a server's answer that is not UTF-8, as a body or an event, is reported once and goes written anew",
  {
    timeout: 60_000,
  },
  async () => {
    const server = await scriptedServer([], (m, res) => {
      if (m.id === 31) {
        const body = line('{"jsonrpc":"2.0","id":31,"result":{"x":"%"}}', [0xff]);
        return void res.writeHead(200, { "content-type": "application/json" }).end(body);
      }
      // A log event with a U+FFFD of its own, then the answer, whose lead byte before a quote ends a read.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"\ufffd"}}\n\n',
      );
      const event = line('data: {"jsonrpc":"2.0","id":32,"result":{"y":"\u20ac","x":"%"}}\n\n', [0xc3]);
      const cut = event.indexOf(0xc3) + 1;
      res.write(event.subarray(0, cut));
      setTimeout(() => res.end(event.subarray(cut)), 50);
    });
    try {
      const seen = await relayUntilAnswered(server.url, [
        { jsonrpc: "2.0", id: 31, method: "ping" },
        { jsonrpc: "2.0", id: 32, method: "ping" },
      ]);
      const reported = seen.events.filter((e) => e.event === "invalid_utf8");
      assert.deepEqual(reported.map((e) => JSON.stringify(e)).sort(), [
        '{"event":"invalid_utf8","from":"server","id":31}',
        '{"event":"invalid_utf8","from":"server","id":32}',
      ]);
      // (the client read what was judged: a U+FFFD for each bad byte)
      assert.deepEqual(seen.answers.get(31)?.result, { x: "\ufffd" });
      assert.deepEqual(seen.answers.get(32)?.result, { y: "\u20ac", x: "\ufffd" });
    } finally {
      server.stop();
    }
  },
);

test("McpSession: a line the relay's framer read is decoded once, its text read for repeats and UTF-8 as the framer decoded it", async () => {
  const guard = createMcpGuard({});
  guard.setTools([{ name: "echo", inputSchema: { type: "object" } }]);
  const session = guard.connect({ toServer: () => {}, toClient: () => {} });
  const [client, server] = [createFramer(), createFramer()];
  // (spaced, and a tool list: each is read for repeated keys; longer than the ends read for an answer's id)
  const note = `"note": "${"n".repeat(100)}"`;
  const lines = [
    `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {${note}}}}`,
    `{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {${note}}}`,
    `{"jsonrpc": "2.0", "id": 1, "result": {"content": [], ${note}}}`,
    `{"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], ${note}}}`,
  ].map((text) => enc.encode(text + "\n"));
  const lengths = new Set(lines.map((line) => line.length - 1));
  // (whole lines decoded: the ends of an answer read for its id are not)
  const [, decoded] = await countingWork(TextDecoder.prototype, "decode", () => {
    for (const f of client.push(lines[0])) session.fromClient(f);
    for (const f of client.push(lines[1])) session.fromClient(f);
    for (const f of server.push(lines[2])) session.fromServer(f);
    for (const f of server.push(lines[3])) session.fromServer(f);
  }, (_self, args: Uint8Array[]) => lengths.has(args[0]?.length) ? 1 : 0);
  assert.equal(session.pending, 0);
  assert.equal(decoded, 4);
});

test("Utf8Faults: a byte order mark that starts the stream, dropped by the decoder, moves no bad byte's offset", () => {
  const decoder = new TextDecoder();
  const faults = new Utf8Faults();
  const push = (bytes: number[]) =>
    faults.push(new Uint8Array(bytes), decoder.decode(new Uint8Array(bytes), { stream: true }));
  // ("a\ufffdb\ufffd": the BOM is no unit of the text, so the bad bytes are its second and fourth)
  assert.deepEqual(push([0xef, 0xbb, 0xbf, 0x61, 0xff, 0x62]), [1]);
  // (a BOM later in the stream is a character of its text)
  assert.deepEqual(push([0xef, 0xbb, 0xbf, 0xfe]), [4]);
});
