/**
 * Added latency of the MCP relay per `tools/call`: the same SDK client calls `echo` on
 * `@modelcontextprotocol/server-everything` N times directly and N times through the relay (interleaved,
 * same run), and prints median and p95 of each and the difference.
 *
 * Usage: `deno run -A scripts/mcp_latency.ts [N] [--size BYTES] [--in-process | --relay CMD ARGS... --]` or
 * the same under `bun` (default N = 200). The relay is `cli.ts mcp --pins none` under the same runtime as
 * the script, or the command after `--relay` (e.g. a compiled binary: `--relay /tmp/tg mcp --pins none --`),
 * which is given `node SERVER stdio` after it. With `--in-process` there is no relay process: the guarded
 * client wraps its own SDK stdio transport in `guardMcpTransport`. `--size` makes the echoed message that
 * many bytes (1 MB results).
 *
 * @module
 */
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { guardMcpTransport, type McpTransport } from "../mcp.ts";

const deno = (globalThis as { Deno?: { args: string[]; execPath(): string } }).Deno;
const argv = deno ? deno.args : process.argv.slice(2);
const relayAt = argv.indexOf("--relay");
const custom = relayAt === -1 ? null : argv.slice(relayAt + 1);
const own = relayAt === -1 ? argv : argv.slice(0, relayAt);
const sizeAt = own.indexOf("--size");
const size = sizeAt === -1 ? 0 : Number(own[sizeAt + 1]);
const n = Number(own.find((a, i) => /^\d+$/.test(a) && own[i - 1] !== "--size") ?? 200);
const inProcess = own.includes("--in-process");
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const server = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const entry = [join(root, "cli.ts"), "mcp", "--pins", "none"];
const relay = custom !== null
  ? { command: custom[0], args: [...custom.slice(1), "node", server, "stdio"] }
  : deno
  ? { command: deno.execPath(), args: ["run", "-A", ...entry, "--", "node", server, "stdio"] }
  : { command: process.execPath, args: [...entry, "--", "node", server, "stdio"] };

async function connect(command: string, args: string[], { guard }: { guard: boolean }): Promise<Client> {
  const client = new Client({ name: "latency", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  // The SDK's transport type is richer than the structural one the library declares.
  await client.connect(guard ? guardMcpTransport(transport as McpTransport) as typeof transport : transport);
  return client;
}

const direct = await connect("node", [server, "stdio"], { guard: false });
const guarded = inProcess
  ? await connect("node", [server, "stdio"], { guard: true })
  : await connect(relay.command, relay.args, { guard: false });
const call = { name: "echo", arguments: { message: size > 0 ? "x".repeat(size) : "latency probe" } };
// The relay must answer what the server answers (a rejected call would be fast and prove nothing).
const [a, b] = [await direct.callTool(call), await guarded.callTool(call)];
if (JSON.stringify(a) !== JSON.stringify(b)) {
  console.error(`the guarded answer differs from the direct one: ${JSON.stringify(b).slice(0, 200)}`);
  process.exit(1);
}
for (let i = 0; i < 20; i++) { // warm up both paths (JIT, tools/list fetch by the relay)
  await direct.callTool(call);
  await guarded.callTool(call);
}
const times = { direct: [] as number[], relay: [] as number[] };
for (let i = 0; i < n; i++) {
  for (
    const [name, client] of (i % 2 === 0 ? [["direct", direct], ["relay", guarded]] : [["relay", guarded], [
      "direct",
      direct,
    ]]) as [keyof typeof times, Client][]
  ) {
    const t0 = performance.now();
    await client.callTool(call);
    times[name].push(performance.now() - t0);
  }
}
await Promise.all([direct.close(), guarded.close()]);

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const runtime = deno ? "deno" : "bun";
const row = (name: string, v: number[]) =>
  `${name.padEnd(8)} median ${pct(v, 50).toFixed(3)} ms   p95 ${pct(v, 95).toFixed(3)} ms`;
const what = inProcess
  ? `guardMcpTransport in-process under ${runtime}`
  : custom !== null
  ? custom.join(" ")
  : `cli.ts mcp under ${runtime}`;
console.log(`MCP tools/call latency, ${n} calls each${size > 0 ? ` of ${size} bytes` : ""}, relay ${what}`);
console.log(row("direct", times.direct));
console.log(row("relay", times.relay));
console.log(
  `added    median ${(pct(times.relay, 50) - pct(times.direct, 50)).toFixed(3)} ms   p95 ${
    (pct(times.relay, 95) - pct(times.direct, 95)).toFixed(3)
  } ms   ratio of medians ${(pct(times.relay, 50) / pct(times.direct, 50)).toFixed(2)}`,
);
process.exit(0);
