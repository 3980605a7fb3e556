// The runtime layer's node:child_process branch (used on runtimes other than Deno and Bun) is exercised by
// running fixtures/node_branch.ts under Bun with TOOLGUARD_SPAWN=node, which forces that branch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runTool } from "../guard.ts";
import { isBun } from "./_runtime.ts";

const script = fileURLToPath(new URL("../fixtures/node_branch.ts", import.meta.url));

test("runTool: the node:child_process branch behaves like the native one", {
  timeout: 60_000,
  skip: isBun ? false : "forcing the node branch is only possible under Bun (Deno always uses Deno.Command)",
}, async () => {
  const r = await runTool(process.execPath, [script], {
    protocol: "json",
    timeoutMs: 50_000,
    env: { TOOLGUARD_SPAWN: "node" },
  });
  assert.equal(r.kind, "results", `${r.detail}\n${r.stderr}`);
  const out = r.items[0] as {
    runtimeName: string;
    kinds: string[];
    stdin: unknown;
    split: unknown;
    hangMs: number;
  };
  assert.equal(out.runtimeName, "node");
  assert.deepEqual(out.kinds, ["results", "exit", "timeout", "spawn", "results", "results"]);
  assert.deepEqual(out.stdin, ["piped in"]);
  assert.deepEqual(out.split, ["price: 5€ net"]);
  // At its timeout (1.5 s), not when the descendant holding stdout ends (30 s): a guard against hanging, so a
  // slow machine cannot fail it.
  assert.ok(out.hangMs < 15_000, `grandchild settled after ${out.hangMs} ms`);
});
