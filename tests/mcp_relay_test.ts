// The MCP relay starts its server through the runtime layer (Deno.Command, Bun.spawn or node:child_process):
// a burst of large messages must pass through the server's stdin pipe whole and in order on every branch.
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { relayBurst } from "./_relay_branch.ts";
import { spawnChild } from "../_run/runtime.ts";

const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
const COUNT = 64;
const BYTES = 256 * 1024;

function assertBurst(outcome: Record<string, unknown>): void {
  const exit = outcome.exit as { reason: string; exitCode: number | null };
  assert.equal(exit.reason, "client_closed");
  const received = outcome.received as { id: number; size: number }[];
  assert.deepEqual(received.map((r) => r.id), Array.from({ length: COUNT }, (_, i) => i + 1));
  assert.ok(received.every((r) => r.size === BYTES), "every answer arrived whole");
}

test("relayMcp: 16 MiB of requests sent at once reach a slow server whole and in order", {
  timeout: 60_000,
}, async () => {
  assertBurst(await relayBurst(COUNT, BYTES));
});

test("relayMcp: the same burst through the runtime layer's node:child_process branch", {
  timeout: 60_000,
  skip: isBun ? false : "forcing the node branch is only possible under Bun (Deno always uses Deno.Command)",
}, async () => {
  const script = fileURLToPath(new URL("./_relay_branch.ts", import.meta.url));
  const spawned = await spawnChild({
    command: process.execPath,
    args: [script],
    env: { TOOLGUARD_SPAWN: "node" },
    stdin: null,
  });
  assert.ok(spawned.ok);
  const chunks: Uint8Array[] = [];
  for (let c; (c = await spawned.child.stdout.read()) !== null;) chunks.push(c);
  const exit = await spawned.child.exited;
  assert.equal(exit.code, 0);
  const outcome = JSON.parse(new TextDecoder().decode(Buffer.concat(chunks))) as Record<string, unknown>;
  assert.equal(outcome.runtimeName, "node");
  assertBurst(outcome);
});

test("spawnChild: a piped stdin takes writes until closed; stderr can be dropped", async () => {
  const spawned = await spawnChild({
    command: "node",
    args: ["-e", "process.stdin.pipe(process.stdout); console.error('dropped')"],
    stdin: "piped",
    stderr: "ignore",
  });
  assert.ok(spawned.ok);
  const { child } = spawned;
  assert.ok(child.stdin !== null);
  await child.stdin.write(new TextEncoder().encode("one "));
  await child.stdin.write(new TextEncoder().encode("two"));
  child.stdin.close();
  const chunks: Uint8Array[] = [];
  for (let c; (c = await child.stdout.read()) !== null;) chunks.push(c);
  assert.equal(new TextDecoder().decode(Buffer.concat(chunks)), "one two");
  assert.equal(await child.stderr.read(), null);
  assert.deepEqual(await child.exited, { code: 0, signal: null });
});
