/**
 * Relays a burst of large messages through {@linkcode relayMcp} to a tiny echo server and prints what the
 * client received as JSON. Run directly by tests/mcp_relay_test.ts, and under Bun also with
 * `TOOLGUARD_SPAWN=node` so the runtime layer's node:child_process branch starts the server.
 *
 * @module
 */
import { runtimeName } from "../_run/runtime.ts";
import { relayMcp } from "../mcp.ts";

/** A server that answers every request with its params, after a pause that lets its stdin pipe fill up. */
const ECHO_SERVER = `
let buffered = "";
let paused = false;
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  if (!paused) {
    paused = true;
    process.stdin.pause();
    setTimeout(() => process.stdin.resume(), 300);
  }
  for (let nl; (nl = buffered.indexOf("\\n")) >= 0; buffered = buffered.slice(nl + 1)) {
    const m = JSON.parse(buffered.slice(0, nl));
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.params }) + "\\n");
  }
});`;

/** Relay `count` requests of `bytes` each, sent without waiting for answers; returns what came back. */
export async function relayBurst(count: number, bytes: number): Promise<Record<string, unknown>> {
  const received: { id: number; size: number }[] = [];
  let all = () => {};
  const done = new Promise<void>((resolve) => (all = resolve));
  const encoder = new TextEncoder();
  async function* client(): AsyncGenerator<Uint8Array> {
    for (let id = 1; id <= count; id++) {
      const line = { jsonrpc: "2.0", id, method: "echo", params: { text: "x".repeat(bytes) } };
      yield encoder.encode(JSON.stringify(line) + "\n");
    }
    await done;
  }
  let pending = "";
  const exit = await relayMcp({
    command: "node",
    args: ["-e", ECHO_SERVER],
    input: client(),
    output: (chunk) => {
      pending += new TextDecoder().decode(chunk);
      for (let nl; (nl = pending.indexOf("\n")) >= 0; pending = pending.slice(nl + 1)) {
        const m = JSON.parse(pending.slice(0, nl)) as { id: number; result: { text: string } };
        received.push({ id: m.id, size: m.result.text.length });
      }
      if (received.length === count) all();
    },
    shutdownGraceMs: 2000,
  });
  return { runtimeName, exit, received };
}

if (import.meta.main) console.log(JSON.stringify(await relayBurst(64, 256 * 1024)));
