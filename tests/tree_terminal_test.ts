// Under Deno on Linux the guard finds a tool's tree by marker and spawns it plainly, except where the host
// has a terminal: there the tool gets a session of its own, so it cannot open the user's terminal (an ssh
// or git password prompt fails at once instead of waiting on the keyboard until the timeout).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { waitGone } from "./_guard_helpers.ts";
import { isDeno, isLinux } from "./_runtime.ts";

const guard = fileURLToPath(new URL("../guard.ts", import.meta.url));
const hasScript = isLinux && spawnSync("script", ["--version"]).status === 0;

const HOST = `import { runTool } from GUARD;
const own = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ")[3];
const script = 'read pid comm state ppid pgrp session rest < /proc/self/stat; echo "$session"';
const r = await runTool("sh", ["-c", script], { protocol: "text" });
console.log(JSON.stringify({ host: own, tool: r.ok ? r.items[0] : r.detail }));
`;

/** The session ids of a Deno host and of the tool it ran, with or without a terminal (`script`). */
function sessions(withTerminal: boolean): { host: string; tool: string } {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-tty-"));
  try {
    const hostFile = join(dir, "host.ts");
    writeFileSync(hostFile, HOST.replace("GUARD", JSON.stringify(guard)));
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    const host = `'${deno}' run -A '${hostFile}'`;
    const r = withTerminal
      ? spawnSync("script", ["-qec", host, "/dev/null"], { encoding: "utf8", timeout: 60_000 })
      : spawnSync("setsid", ["sh", "-c", `${host} </dev/null`], { encoding: "utf8", timeout: 60_000 });
    const line = r.stdout.split("\n").find((l) => l.trim().startsWith("{"));
    assert.ok(line, `${r.stdout}\n${r.stderr}`);
    return JSON.parse(line);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("runTool: under Deno, a host with a terminal gives the tool its own session; one without shares it", {
  skip: isDeno && hasScript ? false : "needs Deno on Linux with script(1) to give the host a terminal",
  timeout: 120_000,
}, () => {
  const tty = sessions(true);
  assert.notEqual(tty.tool, tty.host, "with a terminal, the tool must not be in the host's session");
  const plain = sessions(false);
  assert.equal(plain.tool, plain.host, "without a terminal, the fast path spawns in the host's session");
});

// A PATH with a relative entry keeps the tool from the setsid launcher (whose search would depend on its cwd):
// the tool is spawned `detached`, with the marker where markers work (-A), so nothing was missed to be said.
const DETACHED_HOST = `import { runTool } from GUARD;
const env = { PATH: ".:" + Deno.env.get("PATH") };
const r = await runTool("sh", ["-c", "sleep 6.17"], { env, timeoutMs: 300 });
console.log(JSON.stringify({ detail: r.detail }));
`;

test("runTool: a Deno host with a terminal and /proc never says /proc is not readable when it is", {
  skip: isDeno && hasScript ? false : "needs Deno on Linux with script(1) to give the host a terminal",
  timeout: 120_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-tty-"));
  try {
    const hostFile = join(dir, "host.ts");
    writeFileSync(hostFile, DETACHED_HOST.replace("GUARD", JSON.stringify(guard)));
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    const r = spawnSync("script", ["-qec", `'${deno}' run -A '${hostFile}'`, "/dev/null"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    const line = r.stdout.split("\n").find((l) => l.trim().startsWith("{"));
    assert.ok(line, `${r.stdout}\n${r.stderr}`);
    const { detail } = JSON.parse(line) as { detail: string };
    assert.match(detail, /^timed out after 300 ms; the guard ended the process tree$/);
    assert.ok(!detail.includes("/proc"), detail);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The same `detached` spawn carries the marker where markers work: a descendant that starts a session of its
// own (setsid) leaves the tool's process group, and only the marker finds it when the guard ends the tree.
const ESCAPE_HOST = `import { runTool } from GUARD;
const [file] = Deno.args;
const env = { PATH: ".:" + Deno.env.get("PATH") };
const script = 'setsid sleep 6.19 </dev/null >/dev/null 2>&1 & echo $! > "$0"; wait';
const controller = new AbortController();
const running = runTool("sh", ["-c", script, file], { env, signal: controller.signal, timeoutMs: 30_000 });
let settled = false;
running.finally(() => (settled = true));
while (!settled && !(await Deno.readTextFile(file).catch(() => "")).endsWith("\\n")) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
controller.abort();
console.log(JSON.stringify({ detail: (await running).detail }));
`;

test("runTool: a Deno host with a terminal ends a descendant that left the tool's group (the marker)", {
  skip: isDeno && hasScript ? false : "needs Deno on Linux with script(1) to give the host a terminal",
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-tty-"));
  const pidPath = join(dir, "pid");
  let pid = 0;
  try {
    const hostFile = join(dir, "host.ts");
    writeFileSync(hostFile, ESCAPE_HOST.replace("GUARD", JSON.stringify(guard)));
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    const r = spawnSync("script", ["-qec", `'${deno}' run -A '${hostFile}' '${pidPath}'`, "/dev/null"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    const line = r.stdout.split("\n").find((l) => l.trim().startsWith("{"));
    assert.ok(line, `${r.stdout}\n${r.stderr}`);
    const { detail } = JSON.parse(line) as { detail: string };
    pid = Number(readFileSync(pidPath, "utf8").trim());
    assert.ok(pid > 0, "the descendant recorded its pid");
    assert.deepEqual(await waitGone([pid]), [], "the descendant in its own session was ended");
    assert.match(detail, /^aborted by the caller's AbortSignal.*; the guard ended the process tree$/);
  } finally {
    if (pid > 0) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
