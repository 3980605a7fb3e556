/**
 * The relay in front of the 11 real MCP servers of issue 16, driven by the official SDK client. Per server:
 * the tools listed directly and through the relay (names and schemas identical; descriptions the relay
 * cleaned are named), valid calls whose results are identical direct and through the relay (also when the
 * result is an error, e.g. a network call refused), invalid calls stopped before the server, and calls with
 * side effects (dbhub `DROP TABLE`, filesystem writes, desktop-commander commands, memory deletes) checked
 * through the relay first, then directly (to show what the call would have done). "Reached the server" is
 * counted by a tap in front of the server's stdin, not by the relay's own log. Prints a markdown table and,
 * under it, what the relay cleaned from descriptions and any call that came out unexpectedly; a server
 * that cannot be installed or started gets a row saying why.
 *
 * The invalid calls, generated from each tool's schema: an invented property (only where the schema closes
 * its object with `additionalProperties: false`; elsewhere an extra property is valid JSON Schema and is
 * forwarded), a wrong type for the first typed property, every required property missing (for tools with a
 * required property that has no default), and one unknown tool per server. Tools that require task-based
 * execution are left out: the SDK client refuses a plain call to them before sending it.
 *
 * server-everything and server-filesystem are dev dependencies. The others are installed on demand (not in
 * package.json: too heavy for CI) with `npm install --ignore-scripts` into `~/.cache/toolguard-mcp-servers`
 * (or `$TOOLGUARD_MCP_SERVERS`); better-sqlite3, which dbhub needs for SQLite, is then built with node-gyp
 * against the local Node headers. Every server runs with the network off (`unshare -n`, where permitted)
 * and fake tokens, so the ones that call out fail fast and alike on both paths. Playwright uses the system
 * Chromium (`/usr/bin/chromium`, or `$CHROMIUM`) on `data:` pages.
 *
 * Usage: `deno run -A scripts/mcp_servers.ts [NAME...]` or `bun scripts/mcp_servers.ts [NAME...]` (names
 * pick rows, e.g. `dbhub`).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = (globalThis as { Deno?: { args: string[]; execPath(): string } }).Deno;
const picked = deno ? deno.args : process.argv.slice(2);
const cache = process.env.TOOLGUARD_MCP_SERVERS ?? join(homedir(), ".cache", "toolguard-mcp-servers");
const work = mkdtempSync(join(tmpdir(), "toolguard-servers-"));
const outside = mkdtempSync(join(tmpdir(), "toolguard-outside-"));
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** Which side of the comparison a connection is. */
type Role = "direct" | "relay";
/** One `tools/call`. */
interface Call {
  name: string;
  arguments: Record<string, unknown>;
}
/** An invalid call with a side effect: `happened` tells whether its effect is there for that role. */
interface SideEffect {
  label: string;
  call: Call;
  happened(role: Role): boolean;
}
/** One row of the table. */
interface ServerCase {
  name: string;
  /** The npm package, when installed on demand (none: a dev dependency). */
  pkg?: string;
  /** The entry script, relative to its node_modules. */
  entry: string;
  args?: string[];
  /** Extra environment, per role (state files of their own). */
  env?(role: Role): Record<string, string>;
  /** The server's working directory (default: the scratch directory). */
  cwd?: string;
  /** Runs once before the server starts. */
  setup?(): void;
  valid: Call[];
  sideEffects?: SideEffect[];
  /** How long one connect or call may take. */
  timeoutMs?: number;
}

const dir = (name: string) => {
  const d = join(work, name);
  mkdirSync(d, { recursive: true });
  return d;
};
const fsDir = dir("fs");
const dcDir = dir("dc");
const eslintDir = dir("eslint");
const db = join(work, "db.sqlite");
const sqlite = (sql: string) =>
  spawnSync("node", [
    "-e",
    `const D=require(${JSON.stringify(join(cache, "node_modules/better-sqlite3"))});` +
    `const d=new D(${JSON.stringify(db)});const r=d.prepare(${JSON.stringify(sql)});` +
    "console.log(JSON.stringify(r.reader?r.all():r.run()))",
  ], { encoding: "utf8" });
const tableExists = () =>
  sqlite("SELECT name FROM sqlite_master WHERE name='users'").stdout.includes("users");
const memoryFile = (role: Role) => join(work, `memory-${role}.jsonl`);

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
    args: [fsDir],
    setup: () => writeFileSync(join(fsDir, "a.txt"), "hello\n"),
    valid: [
      { name: "list_allowed_directories", arguments: {} },
      { name: "read_text_file", arguments: { path: join(fsDir, "a.txt") } },
      { name: "list_directory", arguments: { path: fsDir } },
      // Valid by its schema; the server itself refuses the path (same error both ways).
      { name: "write_file", arguments: { path: join(outside, "valid.txt"), content: "x" } },
    ],
    sideEffects: [
      {
        label: "write_file over a.txt with `content` of the wrong type",
        call: { name: "write_file", arguments: { path: join(fsDir, "a.txt"), content: { text: "gone" } } },
        happened: () => readFileSync(join(fsDir, "a.txt"), "utf8") !== "hello\n",
      },
      {
        label: "write_file outside its directory with `content` of the wrong type",
        call: { name: "write_file", arguments: { path: join(outside, "x.txt"), content: 7 } },
        happened: () => existsSync(join(outside, "x.txt")),
      },
      {
        // Its schema leaves the object open (no additionalProperties: false): the property is valid.
        label: "write_file over a.txt with invented `overwrite: false`",
        call: {
          name: "write_file",
          arguments: { path: join(fsDir, "a.txt"), content: "gone", overwrite: false },
        },
        happened: () => readFileSync(join(fsDir, "a.txt"), "utf8") !== "hello\n",
      },
    ],
  },
  {
    name: "server-memory",
    pkg: "@modelcontextprotocol/server-memory",
    entry: "@modelcontextprotocol/server-memory/dist/index.js",
    env: (role) => ({ MEMORY_FILE_PATH: memoryFile(role) }),
    valid: [
      {
        name: "create_entities",
        arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["wrote notes"] }] },
      },
      { name: "search_nodes", arguments: { query: "Ada" } },
      { name: "read_graph", arguments: {} },
    ],
    sideEffects: [{
      label: "delete_entities Ada with invented `dryRun: true`",
      call: { name: "delete_entities", arguments: { entityNames: ["Ada"], dryRun: true } },
      happened: (role) => !readFileSync(memoryFile(role), "utf8").includes("Ada"),
    }],
  },
  {
    name: "server-sequential-thinking",
    pkg: "@modelcontextprotocol/server-sequential-thinking",
    entry: "@modelcontextprotocol/server-sequential-thinking/dist/index.js",
    valid: [
      {
        name: "sequentialthinking",
        arguments: { thought: "first", nextThoughtNeeded: true, thoughtNumber: 1, totalThoughts: 2 },
      },
      {
        name: "sequentialthinking",
        arguments: { thought: "second", nextThoughtNeeded: false, thoughtNumber: 2, totalThoughts: 2 },
      },
    ],
  },
  {
    name: "playwright",
    pkg: "@playwright/mcp",
    entry: "@playwright/mcp/cli.js",
    args: ["--headless", "--isolated", "--no-sandbox", "--executable-path", chromium],
    timeoutMs: 60_000,
    valid: [
      {
        name: "browser_navigate",
        arguments: { url: "data:text/html,<title>t</title><h1>Hi</h1><button>Go</button>" },
      },
      { name: "browser_snapshot", arguments: {} },
      { name: "browser_tabs", arguments: { action: "list" } },
      { name: "browser_evaluate", arguments: { function: "() => document.title" } },
    ],
  },
  {
    name: "dbhub (sqlite)",
    pkg: "@bytebase/dbhub",
    entry: "@bytebase/dbhub/dist/index.js",
    args: ["--transport", "stdio", "--dsn", `sqlite://${db}`],
    setup() {
      const made = sqlite("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)");
      if (made.status !== 0) throw new Error(`could not make the SQLite file: ${made.stderr.trim()}`);
      sqlite("INSERT INTO users (name) VALUES ('ada'), ('grace')");
    },
    valid: [
      { name: "execute_sql", arguments: { sql: "SELECT id, name FROM users ORDER BY id" } },
      { name: "search_objects", arguments: { object_type: "table" } },
    ],
    sideEffects: [{
      label: "execute_sql `DROP TABLE users` with invented `readonly: true`",
      call: { name: "execute_sql", arguments: { sql: "DROP TABLE users", readonly: true } },
      happened: () => !tableExists(),
    }],
  },
  {
    name: "eslint",
    pkg: "@eslint/mcp",
    entry: "@eslint/mcp/src/mcp-cli.js",
    cwd: eslintDir,
    setup() {
      writeFileSync(
        join(eslintDir, "eslint.config.mjs"),
        'export default [{ rules: { "no-unused-vars": "error" } }];\n',
      );
      writeFileSync(join(eslintDir, "a.js"), "const unused = 1;\n");
    },
    valid: [{ name: "lint-files", arguments: { filePaths: [join(eslintDir, "a.js")] } }],
  },
  {
    name: "desktop-commander",
    pkg: "@wonderwhy-er/desktop-commander",
    entry: "@wonderwhy-er/desktop-commander/dist/index.js",
    setup: () => writeFileSync(join(dcDir, "a.txt"), "hello\n"),
    timeoutMs: 60_000,
    valid: [
      { name: "read_file", arguments: { path: join(dcDir, "a.txt") } },
      { name: "list_directory", arguments: { path: dcDir } },
    ],
    sideEffects: [
      {
        label: "start_process `touch` with invented `sandbox: true`",
        call: {
          name: "start_process",
          arguments: { command: `touch ${join(dcDir, "marker")}`, timeout_ms: 3000, sandbox: true },
        },
        happened: () => existsSync(join(dcDir, "marker")),
      },
      {
        label: "write_file with `content` of the wrong type",
        call: { name: "write_file", arguments: { path: join(dcDir, "b.txt"), content: ["x"] } },
        happened: () => existsSync(join(dcDir, "b.txt")),
      },
    ],
  },
  {
    name: "notion",
    pkg: "@notionhq/notion-mcp-server",
    entry: "@notionhq/notion-mcp-server/bin/cli.mjs",
    valid: [
      { name: "API-get-self", arguments: {} },
      { name: "API-post-search", arguments: { query: "roadmap" } },
    ],
  },
  {
    name: "context7",
    pkg: "@upstash/context7-mcp",
    entry: "@upstash/context7-mcp/dist/index.js",
    valid: [{ name: "resolve-library-id", arguments: { libraryName: "react", query: "hooks" } }],
  },
  {
    name: "server-github",
    pkg: "@modelcontextprotocol/server-github",
    entry: "@modelcontextprotocol/server-github/dist/index.js",
    valid: [
      { name: "search_repositories", arguments: { query: "toolguard" } },
      { name: "get_file_contents", arguments: { owner: "octocat", repo: "hello-world", path: "README" } },
    ],
  },
];

/**
 * The tap in front of each server: passes bytes both ways unchanged and appends the tool name of every
 * `tools/call` the server receives to the file in `$TAP_LOG`: the witness for "reached the server".
 */
const TAP = `
const { spawn } = require("node:child_process");
const { appendFileSync } = require("node:fs");
const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
let line = "";
process.stdin.on("data", (chunk) => {
  child.stdin.write(chunk);
  line += chunk;
  for (let nl; (nl = line.indexOf("\\n")) >= 0; line = line.slice(nl + 1)) {
    try {
      const m = JSON.parse(line.slice(0, nl));
      if (m.method === "tools/call") appendFileSync(process.env.TAP_LOG, (m.params?.name ?? "") + "\\n");
    } catch {}
  }
});
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const s of ["SIGTERM", "SIGINT"]) process.on(s, () => child.kill(s));
`;
const tapFile = join(work, "tap.cjs");
writeFileSync(tapFile, TAP);

/** Whether this machine lets us start a process without network (`unshare -n`). */
const networkOff = spawnSync("unshare", ["-n", "true"]).status === 0;

/** Install the packages that are missing from the cache; returns an error text per package that failed. */
function install(cases: ServerCase[]): Map<string, string> {
  const failed = new Map<string, string>();
  const missing = cases.filter((c) => c.pkg && !existsSync(join(cache, "node_modules", c.entry)));
  if (missing.length > 0) {
    const pkgs = missing.map((c) => c.pkg!);
    console.error(`installing ${pkgs.join(" ")} into ${cache} ...`);
    const r = spawnSync("npm", [
      "install",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--prefix",
      cache,
      ...pkgs,
    ], {
      encoding: "utf8",
      stdio: ["ignore", "ignore", "pipe"],
    });
    if (r.status !== 0) {
      for (const p of pkgs) failed.set(p, `npm install failed: ${r.stderr.trim().slice(-200)}`);
    }
  }
  const sqliteAddon = join(cache, "node_modules/better-sqlite3/build/Release/better_sqlite3.node");
  if (cases.some((c) => c.pkg === "@bytebase/dbhub") && !existsSync(sqliteAddon)) {
    const why = buildSqlite();
    if (why !== null) failed.set("@bytebase/dbhub", why);
  }
  return failed;
}

/** Build better-sqlite3 against the local Node headers (its install script would download a prebuilt one). */
function buildSqlite(): string | null {
  const nodePrefix = dirname(
    dirname(spawnSync("node", ["-p", "process.execPath"], { encoding: "utf8" }).stdout.trim()),
  );
  if (!existsSync(join(nodePrefix, "include/node/node.h"))) {
    return `no Node headers under ${nodePrefix}/include/node`;
  }
  console.error("building better-sqlite3 for dbhub (about 2 minutes) ...");
  const r = spawnSync("npx", ["--yes", "node-gyp", "rebuild", "--release", `--nodedir=${nodePrefix}`], {
    cwd: join(cache, "node_modules/better-sqlite3"),
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
  });
  return r.status === 0 ? null : `better-sqlite3 did not build: ${r.stderr.trim().slice(-200)}`;
}

/** The server command, behind the tap and (where permitted) without network. */
function serverCommand(c: ServerCase): string[] {
  const base = c.pkg ? join(cache, "node_modules") : join(root, "node_modules");
  const server = ["node", tapFile, "node", join(base, c.entry), ...(c.args ?? [])];
  return networkOff ? ["unshare", "-n", ...server] : server;
}

/** Start a client for one role: the server directly, or through `toolguard mcp`. */
async function connect(c: ServerCase, role: Role, log: string): Promise<Client> {
  const server = serverCommand(c);
  const relay = deno
    ? [deno.execPath(), "run", "-A", join(root, "cli.ts")]
    : [process.execPath, join(root, "cli.ts")];
  const [command, ...args] = role === "direct"
    ? server
    : [...relay, "mcp", "--pins", "none", "--log", log, "--", ...server];
  const env: Record<string, string> = {
    ...process.env as Record<string, string>,
    HOME: dir(`home-${role}`),
    TAP_LOG: join(work, `${c.name}-${role}.tap`),
    NOTION_TOKEN: "ntn_fake_token_for_tests",
    GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_fake_token_for_tests",
    CONTEXT7_API_KEY: "ctx7sk-fake",
    ...c.env?.(role),
  };
  const client = new Client({ name: "servers", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore", cwd: c.cwd ?? work });
  await client.connect(transport, { timeout: c.timeoutMs ?? 30_000 });
  return client;
}

/** A JSON Schema, loosely. */
type Schema = {
  type?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  enum?: unknown[];
  items?: Schema;
  minItems?: number;
  default?: unknown;
};
/** A listed tool, loosely. */
type Tool = { name: string; description?: string; inputSchema: Schema; execution?: { taskSupport?: string } };

/** A value that matches `schema` as far as a quick guess goes (enough for the other properties of a call). */
function sample(schema: Schema | undefined): unknown {
  if (schema?.enum !== undefined) return schema.enum[0];
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  // Never a small number: should a call slip through, `kill_process { pid: 1 }` must not be what it does.
  if (type === "number" || type === "integer") return 2147483647;
  if (type === "boolean") return true;
  if (type === "array") return Array.from({ length: schema?.minItems ?? 0 }, () => sample(schema?.items));
  if (type === "object") return sampleArgs(schema ?? {});
  return "x";
}

/** The required properties of `schema`, each with a sample value. */
function sampleArgs(schema: Schema): Record<string, unknown> {
  return Object.fromEntries((schema.required ?? []).map((k) => [k, sample(schema.properties?.[k])]));
}

/** A value of another JSON type than `schema` declares, or undefined when it accepts any. */
function wrongValue(schema: Schema): unknown {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes(undefined)) return undefined;
  if (!types.includes("number") && !types.includes("integer")) return 12345;
  if (!types.includes("object")) return { not: "this" };
  return undefined;
}

/**
 * The invalid calls for one tool, by kind: an invented property (only where the schema closes its object,
 * else it is valid), a wrong type for the first typed property, every required property missing.
 */
function invalidCalls(tool: Tool): { kind: string; call: Call }[] {
  const s = tool.inputSchema;
  const base = sampleArgs(s);
  const out: { kind: string; call: Call }[] = [];
  if (s.additionalProperties === false) {
    out.push({
      kind: "invented",
      call: { name: tool.name, arguments: { ...base, toolguard_invented: true } },
    });
  }
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    const wrong = wrongValue(prop);
    if (wrong === undefined) continue;
    out.push({ kind: "type", call: { name: tool.name, arguments: { ...base, [key]: wrong } } });
    break;
  }
  // A required property that declares a default may be left out (the server fills it in; so does the relay).
  const needed = (s.required ?? []).filter((k) => s.properties?.[k]?.default === undefined);
  if (needed.length > 0) out.push({ kind: "missing", call: { name: tool.name, arguments: {} } });
  return out;
}

/** JSON Pointers (under `base`) where `a` and `b` differ. */
function differences(a: unknown, b: unknown, base: string, out: string[]): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
  if (!isObject(a) || !isObject(b) || Array.isArray(a) !== Array.isArray(b)) {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(base);
    return out;
  }
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    differences(a[key], b[key], `${base}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`, out);
  }
  return out;
}

/**
 * How the relay's listing differs from the server's. Rewrites are descriptions (of a tool, or inside its
 * schema) the relay cleaned; anything else that differs (a name, a type, a constraint) is a failure.
 */
function compareListings(direct: Tool[], relayed: Tool[]): { same: boolean; rewritten: string[] } {
  const diffs = differences(direct, relayed, "", []).map((p) => {
    const [, index, ...rest] = p.split("/");
    return `${direct[Number(index)]?.name ?? index} /${rest.join("/")}`;
  });
  const rewritten = diffs.filter((d) => d.endsWith("/description"));
  return { same: rewritten.length === diffs.length, rewritten };
}

/** The events the relay logged. */
function relayEvents(log: string): Record<string, unknown>[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** The tool names the tap saw reach the server for one role. */
function reached(c: ServerCase, role: Role): string[] {
  const file = join(work, `${c.name}-${role}.tap`);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** Call with a bound on time; a call the SDK client refuses or that times out comes back as `{ thrown }`. */
async function callTool(client: Client, call: Call, timeoutMs: number): Promise<unknown> {
  try {
    return await client.callTool(call, undefined, { timeout: timeoutMs });
  } catch (error) {
    return { thrown: String(error) };
  }
}

/** True when the answer is the guard's own rejection (a tool result carrying toolguard's findings). */
function isGuardRejection(result: unknown): boolean {
  const r = result as { isError?: boolean; _meta?: Record<string, unknown> };
  return r?.isError === true && Array.isArray(r._meta?.["toolguard/findings"]);
}

/** A time stamp in a result (Playwright names its snapshot files by the time): all that may differ. */
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d[-:]\d\d[-:]\d\d[-.:]\d{3}Z/g;

/** What the table cannot show: invalid calls that were not stopped, and why. */
const notes: string[] = [];

/** One server through both paths: the table row. */
async function runCase(c: ServerCase): Promise<string> {
  c.setup?.();
  const timeout = c.timeoutMs ?? 30_000;
  const log = join(work, `${c.name}.jsonl`);
  const direct = await connect(c, "direct", log);
  const relayed = await connect(c, "relay", log).catch(async (error) => {
    await direct.close();
    throw error;
  });
  try {
    const [d, r] = await Promise.all([direct.listTools(), relayed.listTools()]);
    const listing = compareListings(d.tools as Tool[], r.tools as Tool[]);
    const mismatched: string[] = [];
    let stamped = 0;
    let errors = 0;
    for (const call of c.valid) {
      const answer = await callTool(direct, call, timeout);
      if ((answer as { isError?: boolean }).isError === true || "thrown" in (answer as object)) errors++;
      const x = JSON.stringify(answer);
      if (process.env.SHOW_RESULTS) notes.push(`${c.name}: ${call.name} answered ${x.slice(0, 200)}`);
      const y = JSON.stringify(await callTool(relayed, call, timeout));
      if (x === y) continue;
      if (x.replace(TIMESTAMP, "") === y.replace(TIMESTAMP, "")) {
        stamped++;
        continue;
      }
      mismatched.push(call.name);
      notes.push(
        `${c.name}: ${call.name} direct ${JSON.stringify(x).slice(0, 300)} / relay ${
          JSON.stringify(y).slice(0, 300)
        }`,
      );
    }
    // The SDK client refuses a plain call to a tool that requires task-based execution, before sending it.
    const plain = (d.tools as Tool[]).filter((t) => t.execution?.taskSupport !== "required");
    const invalid = plain.flatMap(invalidCalls);
    invalid.push({ kind: "unknown", call: { name: `${d.tools[0]?.name ?? "tool"}_v2`, arguments: {} } });
    let stopped = 0;
    for (const { kind, call } of invalid) {
      const answer = await callTool(relayed, call, timeout);
      if (isGuardRejection(answer)) stopped++;
      else {notes.push(
          `${c.name}: ${kind} call ${JSON.stringify(call)} not stopped: ${
            JSON.stringify(answer).slice(0, 160)
          }`,
        );}
    }
    const reachedInvalid = reached(c, "relay").length - c.valid.length;
    const effects: string[] = [];
    for (const e of c.sideEffects ?? []) {
      const viaRelay = await callTool(relayed, e.call, timeout);
      const verdict = !isGuardRejection(viaRelay)
        ? "forwarded (valid by the server's own schema)"
        : e.happened("relay")
        ? "**stopped, yet the effect is there**"
        : "prevented";
      await callTool(direct, e.call, timeout);
      const directly = e.happened("direct") ? "direct: it ran" : "direct: the server refused it too";
      effects.push(`${e.label}: ${verdict} (${directly})`);
    }
    for (const e of relayEvents(log).filter((e) => e.type === "description_flagged")) {
      const found = (e.findings as { category: string; excerpt: string }[])
        .map((f) => `${f.category} ${JSON.stringify(f.excerpt)}`);
      notes.push(`${c.name}: relay cleaned ${e.name} ${e.pointer}: ${found.join("; ")}`);
    }
    return row(c, {
      d: d.tools as Tool[],
      listing,
      mismatched,
      stamped,
      errors,
      invalid,
      stopped,
      reachedInvalid,
      effects,
    });
  } finally {
    await Promise.all([direct.close(), relayed.close()]);
  }
}

/** The markdown row for one server. */
function row(c: ServerCase, o: {
  d: Tool[];
  listing: { same: boolean; rewritten: string[] };
  mismatched: string[];
  stamped: number;
  errors: number;
  invalid: { kind: string }[];
  stopped: number;
  reachedInvalid: number;
  effects: string[];
}): string {
  const kinds = Object.entries(Object.groupBy(o.invalid, (x) => x.kind)).map(([k, v]) => `${v!.length} ${k}`);
  const version = c.pkg
    ? JSON.parse(readFileSync(join(cache, "node_modules", c.pkg, "package.json"), "utf8")).version
    : "dev dep";
  const tools = `${o.d.length}, ${o.listing.same ? "identical" : "**differ**"}` +
    (o.listing.rewritten.length > 0 ? ` (descriptions cleaned: ${o.listing.rewritten.join(", ")})` : "");
  const valid = `${c.valid.length - o.mismatched.length}/${c.valid.length}` +
    (o.errors > 0 ? ` (${o.errors} of them the server's error, the same both ways)` : "") +
    (o.stamped > 0 ? ` (${o.stamped} up to a time stamp)` : "") +
    (o.mismatched.length > 0 ? ` (differ: ${o.mismatched.join(", ")})` : "");
  return `| ${c.name} ${version} | ${tools} | ${valid} | ${o.stopped}/${o.invalid.length} (${
    kinds.join(", ")
  }) | ` +
    `${o.reachedInvalid} | ${o.effects.join("; ") || "n/a"} |`;
}

const cases = CASES.filter((c) => picked.length === 0 || picked.some((p) => c.name.includes(p)));
const failed = install(cases);
console.log(
  `Network for the servers: ${networkOff ? "off (unshare -n)" : "on (unshare -n not permitted here)"}.`,
);
console.log("");
console.log(
  "| server | tools listed, direct vs relay | valid calls identical | invalid calls stopped | invalid calls that reached the server | side effects |",
);
console.log("|---|---|---|---|---|---|");
for (const c of cases) {
  const why = c.pkg ? failed.get(c.pkg) : undefined;
  if (why !== undefined) {
    console.log(`| ${c.name} | not run: ${why} | | | | |`);
    continue;
  }
  try {
    console.log(await runCase(c));
  } catch (error) {
    console.log(`| ${c.name} | did not start: ${String(error).replace(/\s+/g, " ").slice(0, 200)} | | | | |`);
  }
}
if (notes.length > 0) console.log("\n" + notes.map((n) => `- ${n}`).join("\n"));
rmSync(work, { recursive: true, force: true });
rmSync(outside, { recursive: true, force: true });
process.exit(0);
