/**
 * The relay in front of the real MCP servers installed in node_modules, driven by the official SDK client:
 * per server, tools accepted (schemas the guard enforces), valid calls with identical results direct and
 * through the relay, invalid calls stopped before the server (one per tool: a wrong type for its first
 * property, or a missing required one), and what the relay flagged. Servers from issue 16's table that are
 * not installed are listed as such.
 *
 * Usage: `deno run -A scripts/mcp_servers.ts` or `bun scripts/mcp_servers.ts`.
 *
 * @module
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
const work = mkdtempSync(join(tmpdir(), "toolguard-servers-"));
writeFileSync(join(work, "a.txt"), "hello\n");

interface ServerCase {
  name: string;
  entry: string;
  args: string[];
  valid: { name: string; arguments: Record<string, unknown> }[];
}

const CASES: ServerCase[] = [
  {
    name: "server-everything",
    entry: "@modelcontextprotocol/server-everything/dist/index.js",
    args: ["stdio"],
    valid: [
      { name: "echo", arguments: { message: "héllo" } },
      { name: "get-sum", arguments: { a: 2, b: 40 } },
    ],
  },
  {
    name: "server-filesystem",
    entry: "@modelcontextprotocol/server-filesystem/dist/index.js",
    args: [work],
    valid: [
      { name: "list_allowed_directories", arguments: {} },
      { name: "read_text_file", arguments: { path: join(work, "a.txt") } },
      { name: "list_directory", arguments: { path: work } },
    ],
  },
];

const NOT_INSTALLED = [
  "server-memory",
  "server-sequential-thinking",
  "@playwright/mcp",
  "@bytebase/dbhub (sqlite)",
  "@eslint/mcp",
  "@wonderwhy-er/desktop-commander",
  "@notionhq/notion-mcp-server",
  "@upstash/context7-mcp",
  "@modelcontextprotocol/server-github",
];

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "servers", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore", cwd: root }));
  return client;
}

/**
 * An invalid call for a tool: a wrong type for its first typed property, else `{}` when something is
 * required; null when its schema accepts everything we could send (not counted).
 */
function invalidCall(
  tool: { name: string; inputSchema: { properties?: Record<string, unknown>; required?: string[] } },
): { name: string; arguments: Record<string, unknown> } | null {
  for (const [key, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
    const type = (schema as { type?: unknown }).type;
    if (typeof type !== "string") continue;
    return { name: tool.name, arguments: { [key]: type === "string" ? 12345 : "not-a-" + type } };
  }
  return (tool.inputSchema.required ?? []).length > 0 ? { name: tool.name, arguments: {} } : null;
}

console.log("| server | tools | enforced | valid calls identical | invalid calls stopped | reached server |");
console.log("|---|---|---|---|---|---|");
for (const c of CASES) {
  const entry = join(root, "node_modules", c.entry);
  if (!existsSync(entry)) continue;
  const log = join(work, `${c.name}.jsonl`);
  const relay = deno
    ? [deno.execPath(), "run", "-A", join(root, "cli.ts")]
    : [process.execPath, join(root, "cli.ts")];
  const direct = await connect("node", [entry, ...c.args]);
  const guarded = await connect(relay[0], [
    ...relay.slice(1),
    "mcp",
    "--pins",
    "none",
    "--log",
    log,
    "--",
    "node",
    entry,
    ...c.args,
  ]);
  const { tools } = await guarded.listTools();
  let identical = 0;
  for (const call of c.valid) {
    const [x, y] = await Promise.all([direct.callTool(call), guarded.callTool(call)]);
    if (JSON.stringify(x) === JSON.stringify(y)) identical++;
  }
  let stopped = 0;
  let tried = 0;
  for (const tool of tools) {
    const call = invalidCall(tool as never);
    if (call === null) continue;
    try {
      const r = await guarded.callTool(call);
      tried++;
      if (r.isError) stopped++;
    } catch {
      // The SDK client itself refuses some calls (tools that need task-based execution): not counted.
    }
  }
  await Promise.all([direct.close(), guarded.close()]);
  const events = readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const summary = events.find((e) => e.event === "tools");
  const rejected = events.filter((e) => e.event === "call_rejected").length;
  const reached = events.filter((e) => e.event === "call_allowed").length - c.valid.length; // invalid calls that ran
  const enforced = tools.length - (summary?.unchecked?.length ?? 0);
  console.log(
    `| ${c.name} | ${tools.length} | ${enforced} | ${identical}/${c.valid.length} | ${stopped}/${tried} (relay rejected ${rejected}) | ${reached} |`,
  );
}
for (const name of NOT_INSTALLED) console.log(`| ${name} | not installed | | | | |`);
rmSync(work, { recursive: true, force: true });
process.exit(0);
