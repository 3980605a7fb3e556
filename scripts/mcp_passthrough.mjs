// The floor for scripts/mcp_latency.ts: a "relay" that copies bytes both ways and does nothing else.
// `deno run -A scripts/mcp_latency.ts 400 --relay node scripts/mcp_passthrough.mjs` (or `bun ...mjs`).
import { spawn } from "node:child_process";
import process from "node:process";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
