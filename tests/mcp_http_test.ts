/**
 * Issue 16: `toolguard mcp --url URL` guards a Streamable HTTP server (server-everything in its
 * `streamableHttp` mode, on 127.0.0.1) for a stdio client, with the same checks as the stdio relay.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client";
// The SDK's "./*" export maps types to "*.js.d.ts", which does not exist; point Deno at the real file.
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runtimeCommand } from "./_runtime.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const EVERYTHING = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** server-everything over Streamable HTTP; resolves once it listens. */
async function startHttpServer(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const child = spawn("node", [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server-everything did not start")), 15_000);
    child.stderr.on("data", (chunk: Uint8Array) => {
      if (/listening on port/.test(new TextDecoder().decode(chunk))) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill("SIGKILL") };
}

const text = (result: unknown): string =>
  ((result as { content: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("\n");

test(
  "toolguard mcp --url: same tools and results as a direct HTTP connection; invalid calls rejected; progress passes",
  {
    timeout: 60_000,
  },
  async () => {
    const server = await startHttpServer();
    const direct = new Client({ name: "direct", version: "1.0.0" });
    const guarded = new Client({ name: "guarded", version: "1.0.0" });
    try {
      await direct.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const r = runtimeCommand(join(root, "cli.ts"), ["mcp", "--pins", "none", "--url", server.url]);
      await guarded.connect(
        new StdioClientTransport({ command: r.command, args: r.args, cwd: root, stderr: "ignore" }),
      );
      const [a, b] = await Promise.all([direct.listTools(), guarded.listTools()]);
      assert.deepEqual(b, a, "tools/list passes through unchanged");
      const [x, y] = await Promise.all([
        direct.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }),
        guarded.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }),
      ]);
      assert.deepEqual(y, x);
      const rejected = await guarded.callTool({ name: "get-sum", arguments: { a: "2", b: 40 } });
      assert.equal(rejected.isError, true);
      assert.match(text(rejected), /argument_type_mismatch/);
      const progress: number[] = [];
      const long = await guarded.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 0.6, steps: 3 } },
        undefined,
        { onprogress: (p: { progress: number }) => void progress.push(p.progress), timeout: 20_000 },
      );
      assert.equal(long.isError ?? false, false);
      assert.deepEqual(progress.slice(0, 2), [1, 2]);
    } finally {
      await Promise.allSettled([direct.close(), guarded.close()]);
      server.stop();
    }
  },
);

test("toolguard mcp --url: a server that is not there answers every request with an error", {
  timeout: 30_000,
}, async () => {
  const port = await freePort(); // nothing listens on it
  const r = runtimeCommand(join(root, "cli.ts"), [
    "mcp",
    "--pins",
    "none",
    "--url",
    `http://127.0.0.1:${port}/mcp`,
  ]);
  const client = new Client({ name: "guarded", version: "1.0.0" });
  await assert.rejects(
    client.connect(
      new StdioClientTransport({ command: r.command, args: r.args, cwd: root, stderr: "ignore" }),
    ),
    /did not answer initialize/,
  );
  await client.close();
});
