/**
 * The relays' public entry points. Each loads its relay (`relay.ts` for a stdio server, `http.ts` for a
 * Streamable HTTP one, and with them the process layer `_run/runtime.ts`) on its first call, so importing
 * `mcp.ts` for the guard alone loads no process or HTTP code.
 *
 * @module
 */
import type { McpHttpRelayOptions } from "./http.ts";
import type { McpRelayOptions } from "./relay.ts";
import type { McpRelayExit } from "./types.ts";

/**
 * Start an MCP server as a child process and relay newline-delimited JSON-RPC between `input`/`output`
 * (the client) and the server's stdin/stdout, judging every message with an MCP guard. Resolves when the
 * relay is over: the client closed its side (requests it sent are waited for until the server has been
 * silent for `shutdownGraceMs`, 15 graces at most, 5 while it has said nothing yet (30 s and 10 s by
 * default); then the server's stdin is closed, it gets `shutdownGraceMs` to exit, then its process tree is
 * ended), or the server exited (every request still waiting is answered with a JSON-RPC error first, and
 * what it left running is ended), or the server could not start (requests are answered with errors until
 * the client closes). The tree is ended by SIGTERM, then, once it is no longer seen running or 1 s later,
 * SIGKILL to what is left. Never rejects for anything the server or the client does; it rejects (never
 * throws) on a guard option `createMcpGuard` refuses, on a `shutdownGraceMs` it cannot wait by, or when the
 * relay's code, loaded on the first call, cannot be loaded (a broken installation). To relay this process's
 * own stdin/stdout, use {@linkcode relayMcpStdio}.
 *
 * @example Relay a tiny inline server; the guard answers a bad call itself
 * ```ts
 * import assert from "node:assert/strict";
 * import process from "node:process";
 * import { relayMcp } from "@toolguard/toolguard/mcp";
 *
 * // A tiny MCP server, run by the current runtime: it lists one tool and answers every call with "ran".
 * const server = `
 *   const echo = { type: "object", properties: { text: { type: "string" } } };
 *   const tools = [{ name: "echo", inputSchema: echo }];
 *   let buffered = "";
 *   process.stdin.on("data", (chunk) => {
 *     buffered += chunk;
 *     for (let nl; (nl = buffered.indexOf("\\n")) >= 0; buffered = buffered.slice(nl + 1)) {
 *       const m = JSON.parse(buffered.slice(0, nl));
 *       const result = m.method === "tools/list" ? { tools } : { content: [{ type: "text", text: "ran" }] };
 *       process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n");
 *     }
 *   });`;
 * const args = "Deno" in globalThis ? ["eval", server] : ["-e", server];
 *
 * // The client sends one call with a wrong argument type, then stays until it has its answer.
 * const answers: { id: number; result: { isError?: boolean } }[] = [];
 * let answered = () => {};
 * const done = new Promise<void>((resolve) => (answered = resolve));
 * async function* client() {
 *   const params = { name: "echo", arguments: { text: 7 } };
 *   const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params };
 *   yield new TextEncoder().encode(JSON.stringify(call) + "\n");
 *   await done;
 * }
 * const exit = await relayMcp({
 *   command: process.execPath,
 *   args,
 *   input: client(),
 *   output: (bytes) => {
 *     answers.push(JSON.parse(new TextDecoder().decode(bytes)));
 *     answered();
 *   },
 * });
 * assert.equal(exit.reason, "client_closed");
 * assert.equal(answers[0].id, 1);
 * assert.equal(answers[0].result.isError, true); // judged and answered by the guard, never run
 * ```
 *
 * @param options The server command, the client streams and guard options.
 * @returns How the relay ended.
 * @throws {TypeError} On a guard option `createMcpGuard` refuses, before anything starts (as a rejection).
 * @throws {RangeError} When `shutdownGraceMs` is not a number of milliseconds from 0 to 2^31 - 1, before
 * anything starts (as a rejection).
 */
export async function relayMcp(options: McpRelayOptions): Promise<McpRelayExit> {
  const relay = await import("./relay.ts");
  return await relay.relayMcp(options);
}

/**
 * {@linkcode relayMcp} with this process's stdin/stdout as the client (what the `toolguard mcp` command
 * runs). SIGINT (and on POSIX SIGTERM and SIGHUP) ends the server's tree and the relay, which then resolves
 * with reason `"aborted"`.
 *
 * @example Stop the relay from code
 * ```ts
 * import assert from "node:assert/strict";
 * import process from "node:process";
 * import { relayMcpStdio } from "@toolguard/toolguard/mcp";
 *
 * // A "server" that never exits, run by the current runtime.
 * const forever = "setInterval(() => {}, 1000)";
 * const args = "Deno" in globalThis ? ["eval", forever] : ["-e", forever];
 * const controller = new AbortController();
 * const exit = await relayMcpStdio(process.execPath, args, {
 *   signal: controller.signal,
 *   onEvent: (event) => event.event === "spawn" && controller.abort(), // as soon as it runs
 *   // The client is this process's stdin/stdout unless given; given here so the example runs on its own.
 *   input: (async function* () {})(),
 *   output: () => {},
 * });
 * assert.equal(exit.reason, "aborted");
 * ```
 *
 * @param command The server program.
 * @param args Its arguments.
 * @param options Guard and relay options (`input`/`output` default to this process's stdin/stdout).
 * @returns How the relay ended.
 * @throws {TypeError} On a guard option `createMcpGuard` refuses, before anything starts (as a rejection,
 * as is a relay that cannot be loaded).
 * @throws {RangeError} When `shutdownGraceMs` is not a number of milliseconds from 0 to 2^31 - 1, likewise.
 */
export async function relayMcpStdio(
  command: string,
  args: readonly string[] = [],
  options:
    & Omit<McpRelayOptions, "command" | "args" | "input" | "output">
    & Partial<Pick<McpRelayOptions, "input" | "output">> = {},
): Promise<McpRelayExit> {
  const relay = await import("./relay.ts");
  return await relay.relayMcpStdio(command, args, options);
}

/**
 * The old name of {@linkcode relayMcpStdio}, kept so code written against it keeps working.
 *
 * @example The same function as relayMcpStdio
 * ```ts
 * import assert from "node:assert/strict";
 * import { relayMcpStdio, runMcpRelay } from "@toolguard/toolguard/mcp";
 *
 * assert.equal(runMcpRelay, relayMcpStdio);
 * ```
 *
 * @deprecated Use {@linkcode relayMcpStdio}: the same function, under a name that pairs with `relayMcp`.
 */
export const runMcpRelay: typeof relayMcpStdio = relayMcpStdio;

/**
 * Relay a stdio client (this process's stdin/stdout unless `input`/`output` are given) to a Streamable HTTP
 * MCP server at `url`, judging every message like {@linkcode relayMcp} does. A request the server answers
 * with an HTTP error, that fails on the network, or whose answer ends without a response is answered with a
 * JSON-RPC error; an event stream the server ends early after giving an event id is resumed with `GET` and
 * `Last-Event-ID` (MCP's SSE polling), as is the server's own stream. An answer body or event past
 * `maxMessageBytes` is given up (its request is answered with an error at once; a request of the server's in
 * it gets an error answer once its end shows the id; it is read on for `maxMessageBytes` more at most, then
 * its stream is closed), and an event stream is read no faster than the client takes it. At most
 * `maxInFlight` (default 64) of the client's requests wait for the server at once; one past them is answered
 * at once with an error saying to wait for answers first. What the client sends after `initialize` waits for
 * its answer (1024 messages at most: past them a request is answered with an error, a notification dropped,
 * both reported as `client_message_refused`, `held_limit`); when that `initialize` does not succeed (an error
 * answer, its `POST` failed, the client cancelled it, the relay closed first), each request sent after it is
 * answered with an error saying so and each notification dropped (`client_message_refused`,
 * `initialize_failed`), but for a request the client cancelled meanwhile (withdrawn: neither it nor its
 * cancel goes, and neither is reported) and a cancel of a request sent before, which goes in that request's
 * session; the client's cancel of it, alone or in a batch (the rest of which fails with that `initialize`),
 * is not sent on (MCP forbids it, and without a session id a server refuses it): it is reported
 * (`client_message_refused`, `cancels_initialize`); an `initialize` so cancelled while it still waited its
 * turn (behind notifications) is not sent at all, nor answered (the client gave up on it). The session id
 * (`Mcp-Session-Id`) and the protocol version (`MCP-Protocol-Version`) are taken from the answer to
 * `initialize` alone, as MCP has the server assign them there (not from a late answer of an old
 * `initialize`): another session id on a later answer (an old session's, answered late) is not taken, but
 * reported once a session (`session_id_ignored`); the server's own event stream (`GET`) is the session's too:
 * a new `initialize` closes the old one's, and its `notifications/initialized` opens the new one's; what
 * belongs to the session before (an answer's resumed stream, the client's cancels of requests sent there and
 * its answers to requests asked there, a batch's too) stays in it. A `POST` answered with HTTP 404 to its
 * session id means, as MCP says, that the server ended the session (so does a `GET`'s: its own stream's, or a
 * resumption's, which is not tried again): its requests, and every one sent in that session after or taken
 * there with 202 Accepted, are answered with an error telling the client to send `initialize` again (nothing
 * more goes in it, nor is it ended with `DELETE`), and those on its streams still open once `shutdownGraceMs`
 * has passed; the session that `initialize` starts goes on. Redirects are followed within the server's
 * origin only: `headers` and the client's messages never go elsewhere; a message is sent on as a `POST` past
 * a 301, 302, 307 or 308, but never again past a `303 See Other` (the server took it: that is an error naming
 * where it leads), nor past another status with a `Location` (an error naming it). Resolves when the client
 * closes its side (answers still on their way, held calls among them, are waited for until the server has
 * been silent for `shutdownGraceMs`, 15 graces at most, 5 while it has said nothing yet (30 s and 10 s by
 * default), an answer's stream the server ends resumed meanwhile; then their requests are answered with
 * errors; a request the client cancelled before the server sent its headers has its `POST` ended and its
 * cancel sent then; and each server session it started and the server did not end is ended with `DELETE`)
 * or on an interrupt or abort.
 *
 * @example Refuse an invalid call without reaching the server (no server needed for that)
 * ```ts
 * import assert from "node:assert/strict";
 * import { relayMcpHttp } from "@toolguard/toolguard/mcp";
 *
 * const out: string[] = [];
 * const exit = await relayMcpHttp("http://127.0.0.1:9/mcp", {
 *   // Nothing listens on port 9: the request is answered with a JSON-RPC error, not left pending.
 *   input: (async function* () {
 *     yield new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
 *   })(),
 *   output: (bytes) => void out.push(new TextDecoder().decode(bytes)),
 * });
 * assert.equal(exit.reason, "client_closed");
 * assert.equal(JSON.parse(out[0]).error.code, -32000);
 * ```
 *
 * @param url The server's MCP endpoint.
 * @param options Guard options, headers, and the client streams.
 * @returns How the relay ended.
 * @throws {TypeError} On a guard option `createMcpGuard` refuses, before anything starts.
 * @throws {RangeError} When `maxInFlight` is not a whole number from 1 up, or `shutdownGraceMs` not a number
 * of milliseconds from 0 to 2^31 - 1. Both as rejections, never
 * synchronously, as is the failure to load the HTTP relay (it loads on the first call).
 */
export async function relayMcpHttp(url: string, options: McpHttpRelayOptions = {}): Promise<McpRelayExit> {
  const relay = await import("./http.ts");
  return await relay.relayMcpHttp(url, options);
}
