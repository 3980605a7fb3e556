/**
 * Linux: a tool that had exited by itself but was not reaped yet (a zombie) when the guard ended its tree. A
 * signal reaches a zombie and ends nothing, so the guard must not say it ended the tool: it says the tool had
 * already exited, and what of its tree it ended or found.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTool, type ToolResult } from "../guard.ts";
import { relayMcp } from "../mcp.ts";
import { fileTempDir } from "./_temp.ts";
import { isLinux, signalProcess } from "./_runtime.ts";

const dir = fileTempDir("toolguard-exited-");
const skip = isLinux ? false : "a zombie is read from /proc/PID/stat (Linux)";

let runs = 0;

/**
 * Runs `sh -c 'before; echo $$ > pid; wait for go'` and aborts it once it has exited but before the runtime
 * reaps it: the wait for the zombie blocks the event loop, where the reaping happens.
 */
async function abortedAfterExit(before: string): Promise<ToolResult> {
  const run = join(dir, String(++runs));
  const pidFile = `${run}.pid`;
  const go = `${run}.go`;
  const controller = new AbortController();
  const script = `${before} echo $$ > ${pidFile}; while [ ! -e ${go} ]; do sleep 0.01; done`;
  const running = runTool("/bin/sh", ["-c", script], {
    protocol: "text",
    signal: controller.signal,
    timeoutMs: 60_000,
  });
  while (!existsSync(pidFile) || readFileSync(pidFile, "utf8").trim() === "") {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const pid = readFileSync(pidFile, "utf8").trim();
  writeFileSync(go, "");
  // Synchronously, until the tool is a zombie: nothing runs the runtime's reaping meanwhile.
  while (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8")));
  controller.abort();
  return await running;
}

test(
  "a tool that had exited, unreaped, alone: the guard does not say it ended the tree",
  { skip },
  async () => {
    const result = await abortedAfterExit("");
    assert.equal(result.kind, "timeout");
    assert.doesNotMatch(result.detail, /ended the (process tree|tool)/);
    assert.match(result.detail, /the guard could not end the process tree, as the tool had already exited/);
  },
);

test(
  "a tool that had exited, unreaped, with a child: the guard ended the tree but not the tool",
  { skip },
  async () => {
    const pidFile = join(dir, "child.pid");
    const result = await abortedAfterExit(`sleep 30 & echo $! > ${pidFile};`);
    const child = Number(readFileSync(pidFile, "utf8"));
    try {
      assert.equal(result.kind, "timeout");
      assert.match(result.detail, /the guard ended the process tree, but the tool itself had already exited/);
    } finally {
      signalProcess(child);
    }
  },
);

test(
  "a relayed server that had exited, unreaped, alone: its tree is said ended, with nothing of it left",
  { skip },
  async () => {
    const run = join(dir, "relay");
    const controller = new AbortController();
    const script = `echo $$ > ${run}.pid; while [ ! -e ${run}.go ]; do sleep 0.01; done`;
    const relaying = relayMcp({
      command: "/bin/sh",
      args: ["-c", script],
      input: (async function* () {})(),
      output: () => {},
      stderr: "ignore",
      signal: controller.signal,
    });
    while (!existsSync(`${run}.pid`) || readFileSync(`${run}.pid`, "utf8").trim() === "") {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const pid = readFileSync(`${run}.pid`, "utf8").trim();
    writeFileSync(`${run}.go`, "");
    while (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8")));
    controller.abort();
    const exit = await relaying;
    assert.equal(exit.tree, "ended");
    assert.match(exit.detail, /; no process of the server's tree was found running$/);
  },
);
