// The README's Node example, run by Node 20 or later against the package compiled to JavaScript (as JSR
// serves it to npm clients; here Bun's bundler stands in for JSR's compiler).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { readmeBlock } from "./_readme.ts";
import { isBun, underWine } from "./_runtime.ts";
import { findBun } from "../scripts/bun.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The major version of `node` on PATH, or null when there is none. */
function nodeMajor(): number | null {
  const r = spawnSync("node", ["--version"], { encoding: "utf8" });
  const m = r.status === 0 ? /^v(\d+)\./.exec(r.stdout) : null;
  return m ? Number(m[1]) : null;
}

// (under Wine bun.exe's build fails by itself, "directory mismatch" writing its output, as compile_test skips
// it: nothing is started there, not even to ask versions)
const major = underWine ? null : nodeMajor();
/** The Bun that compiles: this one under Bun, else `bun` on PATH or node_modules' own, as compile_test finds it. */
const bun = underWine ? "" : isBun ? process.execPath : findBun();
const hasBun = !underWine && spawnSync(bun, ["--version"]).status === 0;
const skip = underWine
  ? "bun build does not run under Wine"
  : major === null
  ? "no node on PATH: the README's Node example did not run"
  : major < 20
  ? `node ${major} is older than the 20 the README names`
  : !hasBun
  ? "no bun on PATH nor in node_modules to compile the package to JavaScript"
  : false;

/** Compiles the module `entry` of the project to one JavaScript file for Node, as JSR would serve it. */
function buildForNode(entry: string, outfile: string): void {
  const build = spawnSync(bun, [
    "build",
    join(root, entry),
    "--target=node",
    "--format=esm",
    "--outfile",
    outfile,
  ], { encoding: "utf8", timeout: 120_000 });
  assert.equal(build.status, 0, build.stderr);
}

test("README From Node: the example runs under Node against the package compiled to JavaScript", {
  skip,
  timeout: 120_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-node-"));
  try {
    const pkg = join(dir, "node_modules", "@toolguard", "toolguard");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@toolguard/toolguard", type: "module", exports: "./mod.js" }),
    );
    buildForNode("mod.ts", join(pkg, "mod.js"));
    writeFileSync(join(dir, "agent.mjs"), readmeBlock("From Node", "js"));
    const run = spawnSync("node", ["agent.mjs"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^Tool ran and returned zero items/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Runs `files["main.mjs"]` under Node, beside the other `files` and the MCP module compiled to JavaScript
 * (`./mcp.js`); returns what it printed, failing on a status other than 0.
 */
function runBesideMcp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-node-"));
  try {
    buildForNode("mcp.ts", join(dir, "mcp.js"));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const run = spawnSync("node", ["main.mjs"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("Node 20: the MCP guard answers hostile and 64-bit ids without JSON.rawJSON, which Node 20 lacks", {
  skip,
  timeout: 120_000,
}, () => {
  const stdout = runBesideMcp({
    "main.mjs": `import { createMcpGuard } from "./mcp.js";
const toClient = [];
const toServer = [];
const session = createMcpGuard().connect({
  toServer: (f) => void toServer.push(f.message),
  toClient: (f) => void toClient.push(f.message),
});
const enc = new TextEncoder();
for (const line of [
  '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
  '{"jsonrpc":"2.0","id":12345678901234567891,"method":"ping"}',
]) session.fromClient({ bytes: enc.encode(line), message: JSON.parse(line) });
console.log(JSON.stringify({ toClient, toServer: toServer.length }));
`,
  });
  const seen = JSON.parse(stdout) as { toClient: { error?: { code: number } }[]; toServer: number };
  // The object id is refused as no id a request can have; the 64-bit one goes on (rounded by Node 20's
  // JSON.parse, the best that runtime can do).
  assert.equal(seen.toClient[0]?.error?.code, -32600, stdout);
  assert.equal(seen.toServer, 1, stdout);
});

test("Node 20: the MCP relay reads and answers lines with ids past 2^53 without JSON.rawJSON", {
  skip,
  timeout: 120_000,
}, () => {
  // Through the relay's own reader (parseMessage, by the framer), which keeps such an id's digits where
  // JSON.rawJSON exists: a message with one, a batch with one, a cancel naming one, and a hostile id.
  const stdout = runBesideMcp({
    // (the server answers every request under the id it read)
    "server.cjs": `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  for (const m of [JSON.parse(line)].flat()) {
    if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }) + "\\n");
  }
});`,
    "main.mjs": `import { relayMcp } from "./mcp.js";
const lines = [
  '{"jsonrpc":"2.0","id":12345678901234567891,"method":"ping"}',
  '[{"jsonrpc":"2.0","id":22345678901234567891,"method":"ping"}]',
  '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":32345678901234567891}}',
  '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
];
const read = [];
let done = () => {};
const allRead = new Promise((resolve) => (done = resolve));
async function* client() {
  for (const line of lines) yield new TextEncoder().encode(line + "\\n");
  await allRead;
}
const exit = await relayMcp({
  command: process.execPath,
  args: ["server.cjs"],
  input: client(),
  stderr: "ignore",
  output: (bytes) => {
    read.push(...new TextDecoder().decode(bytes).split("\\n").filter(Boolean));
    if (read.length === 3) done();
  },
});
console.log(JSON.stringify({ exit: exit.reason, read }));
`,
  });
  const seen = JSON.parse(stdout) as { exit: string; read: string[] };
  assert.equal(seen.exit, "client_closed", stdout);
  // Both pings are answered (under the double Node 20's JSON.parse reads the id as, the best that runtime
  // can do); the object id is refused as no id a request can have.
  const ids = seen.read.map((line) => /"id":(\{[^}]*\}|\d+)/.exec(line)?.[1]).sort();
  assert.deepEqual(ids, ["12345678901234567000", "22345678901234570000", '{"a":1}'], stdout);
  assert.ok(seen.read.some((line) => line.includes("-32600")), stdout);
});
