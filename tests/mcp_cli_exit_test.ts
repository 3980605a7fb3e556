/**
 * `toolguard mcp` says on stderr how the relay ended, on every exit: the client closing the connection and an
 * interrupt printed nothing, so whether the server's process tree was ended was never told there.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { relayMcp } from "../mcp.ts";
import { evalCommand, isWindows, runtimeCommand, signalProcess } from "./_runtime.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * How the relay's line may honestly end: the tree ended, or what it could not end. Where /proc markers do not
 * reach the tree (not Linux) a server that exited leaving nothing in its group is said nothing of, since what
 * left the group cannot be seen.
 */
const TREE = new RegExp(
  "; (the relay (ended the server's process tree|ended the server but not its process tree|could not end the " +
    "server's process tree)|no process of the server's tree was found running)" +
    (process.platform === "linux" ? "" : "|^[^;]*$"),
);

/** A server that says it is up (a notification the relay passes on) and reads its input until it ends. */
const SERVER = "process.stdout.write(" +
  JSON.stringify(
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "up" },
    }) + "\n",
  ) +
  "); process.stdin.resume()";

/**
 * Runs `toolguard mcp` in front of {@linkcode SERVER}; `stop` ends the run once the server's first line reached
 * the client: the relay's stdin closed, or the relay signalled. Resolves with the relay's stderr.
 */
function runRelay(stop: "close" | "SIGTERM"): Promise<{ status: number | null; stderr: string }> {
  const server = evalCommand(SERVER);
  const r = runtimeCommand(join(root, "cli.ts"), [
    "mcp",
    "--pins",
    "none",
    "--",
    server.command,
    ...server.args,
  ]);
  const child = spawn(r.command, r.args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    stderr += text;
  });
  let stopped = false;
  child.stdout.on("data", () => {
    if (stopped) return;
    stopped = true;
    // (by its pid, not child.kill: a runtime's kill may close the relay's stdin first, as a client closing)
    if (stop === "close") child.stdin.end();
    else signalProcess(child.pid!, "SIGTERM");
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stderr }));
  });
}

test(
  "toolguard mcp: when the client closes the connection, stderr says so and whether the server's tree was ended",
  {
    timeout: 30_000,
  },
  async () => {
    const { status, stderr } = await runRelay("close");
    assert.equal(status, 0, stderr);
    const line = stderr.split("\n").find((l) =>
      l.startsWith("toolguard mcp: the client closed the connection")
    );
    assert.ok(line !== undefined, stderr);
    assert.match(line, TREE);
  },
);

test("toolguard mcp: an interrupt says the relay was stopped and whether the server's tree was ended", {
  timeout: 30_000,
  skip: isWindows ? "no SIGTERM to send on Windows" : false,
}, async () => {
  const { stderr } = await runRelay("SIGTERM");
  const line = stderr.split("\n").find((l) => l.startsWith("toolguard mcp: the relay was stopped"));
  assert.ok(line !== undefined, stderr);
  assert.match(line, TREE);
});

test("relayMcp: the exit says how far ending the server's tree reached, in `tree` and in its detail", {
  timeout: 30_000,
}, async () => {
  const server = evalCommand(SERVER);
  const said: Record<string, RegExp> = {
    ended: process.platform === "linux"
      ? /; (the relay ended the server's process tree|no process of the server's tree was found running)$/
      : /; the relay ended the server's process tree$|^[^;]*$/,
    group_only: /; the relay ended the server's process tree, found by its process group only|^[^;]*$/,
    // (a sweep that found no process says nothing of how far it would have reached: Windows, once the
    // server has exited, has "none", as taskkill finds no tree under an exited pid)
    server_only: /; the relay ended the server but not its process tree, |^[^;]*$/,
    none: /; the relay could not end the server's process tree, |^[^;]*$/,
  };
  const exit = await relayMcp({
    command: server.command,
    args: server.args,
    input: (async function* () {})(),
    output: () => {},
  });
  assert.equal(exit.reason, "client_closed", exit.detail);
  assert.ok(exit.tree !== undefined && exit.tree in said, exit.detail);
  assert.match(exit.detail, said[exit.tree]);
  // (no server process: no tree to end, and none said)
  const failed = await relayMcp({
    command: "/nonexistent/toolguard-mcp-server",
    input: (async function* () {})(),
    output: () => {},
  });
  assert.equal(failed.reason, "spawn_failed");
  assert.equal(failed.tree, undefined);
  assert.doesNotMatch(failed.detail, /process tree/);
});
