/**
 * The command's output is written synchronously and completely: a large write followed at once by exit
 * reaches a reader that is slow to drain the pipe, on every runtime (Bun writes through its console, the
 * others through the file descriptor). And it is coloured only on a terminal, which each runtime is asked
 * in its own way (Bun through its tty binding).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { isLinux, runtimeCommand } from "./_runtime.ts";

// A URL, not a path: on Windows a path (C:\...) in an import is read as a URL of scheme "c:".
const output = new URL("../_cli/output.ts", import.meta.url).href;

/** Runs a script under this runtime, starts reading its stdout only after `delayMs`, and returns it all. */
function readSlowly(code: string, delayMs: number): Promise<{ out: string; status: number | null }> {
  const script = join(
    tmpdir(),
    `toolguard_output_probe_${process.pid}_${Math.random().toString(36).slice(2)}.ts`,
  );
  return import("node:fs").then(({ writeFileSync, rmSync }) => {
    writeFileSync(script, code);
    const { command, args } = runtimeCommand(script);
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.pause();
    const chunks: Buffer[] = [];
    setTimeout(() => {
      child.stdout.on("data", (c: Buffer) => chunks.push(c));
      child.stdout.resume();
    }, delayMs);
    return new Promise((resolve) => {
      child.on("close", (status) => {
        rmSync(script, { force: true });
        resolve({ out: Buffer.concat(chunks).toString("utf8"), status });
      });
    });
  });
}

test("writeOut: 4 MB written right before exit all reach a slow reader", { timeout: 60_000 }, async () => {
  const code = `import { writeOut } from ${JSON.stringify(output)};\n` +
    `writeOut("x".repeat(4_000_000) + "\\nlast line %s %d\\n");\n` +
    `writeOut("no newline at the end");\n` +
    `(globalThis.Deno ? Deno.exit : process.exit)(0);\n`;
  const { out, status } = await readSlowly(code, 300);
  assert.equal(status, 0);
  assert.equal(out.length, 4_000_000 + "\nlast line %s %d\n".length + "no newline at the end".length);
  assert.ok(out.endsWith("\nlast line %s %d\nno newline at the end"), out.slice(-60));
});

const hasScript = isLinux && spawnSync("script", ["--version"]).status === 0;

/**
 * What `isTerminal` says of stdout and stderr in a child of this runtime whose stdout (and, with `script`,
 * stderr) is a terminal, or a pipe and a file; printed to a file, so the answer never depends on the streams
 * asked about.
 */
function terminalAnswers(withTerminal: boolean): { stdout: boolean; stderr: boolean } {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-isatty-"));
  try {
    const script = join(dir, "probe.ts");
    const answer = join(dir, "answer.json");
    writeFileSync(
      script,
      `import { isTerminal } from ${JSON.stringify(output)};
import { writeFileSync } from "node:fs";
writeFileSync(${
        JSON.stringify(answer)
      }, JSON.stringify({ stdout: isTerminal("stdout"), stderr: isTerminal("stderr") }));
`,
    );
    const { command, args } = runtimeCommand(script);
    const line = [command, ...args].map((a) => `'${a}'`).join(" ");
    const r = withTerminal
      ? spawnSync("script", ["-qec", line, "/dev/null"], { encoding: "utf8", timeout: 60_000 })
      : spawnSync("sh", ["-c", `${line} 2>${join(dir, "err.txt")} | cat`], {
        encoding: "utf8",
        timeout: 60_000,
      });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    return JSON.parse(readFileSync(answer, "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("isTerminal: true for a terminal, false for a pipe or a file, on this runtime", {
  skip: hasScript ? false : "needs Linux with script(1) to give the child a terminal",
  timeout: 120_000,
}, () => {
  assert.deepEqual(terminalAnswers(true), { stdout: true, stderr: true });
  assert.deepEqual(terminalAnswers(false), { stdout: false, stderr: false });
});

test(
  "on a terminal, only the word error is coloured: the hint keeps the terminal's colour (Bun's console.error paints it red)",
  {
    skip: hasScript ? false : "needs Linux with script(1) to give the child a terminal",
    timeout: 120_000,
  },
  () => {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const { command, args } = runtimeCommand(join(root, "cli.ts"), [], { config: join(root, "deno.json") });
    const line = [command, ...args, "lint", "/no/such/tools.json"].map((a) => `'${a}'`).join(" ");
    const env = { ...process.env };
    delete env.NO_COLOR;
    const r = spawnSync("script", ["-qec", line, "/dev/null"], { encoding: "utf8", timeout: 60_000, env });
    // A terminal: coloured.
    assert.ok(
      r.stdout.includes("\x1b[31merror\x1b[0m: toolguard lint: cannot read"),
      JSON.stringify(r.stdout),
    );
    assert.match(r.stdout, /^hint: check the path, or pass - to read stdin\r?$/m);
  },
);

test("writeWhole: a full pipe is waited on for 10 s by the clock, not for 10 000 tries; a reader that takes bytes keeps it going", async () => {
  const { WRITE_WAIT_MS, writeWhole } = await import(output);
  const full = Object.assign(new Error("EAGAIN: resource temporarily unavailable"), { code: "EAGAIN" });
  // A clock whose sleep lasts `tick` ms however short it is asked to be: Windows' 15.6 ms timer, a busy machine.
  const clockOf = (tick: number) => {
    const clock = {
      time: 0,
      sleeps: 0,
      now: () => clock.time,
      sleep: () => void (clock.time += tick, clock.sleeps++),
    };
    return clock;
  };
  for (const tick of [1, 16, 250]) {
    const clock = clockOf(tick);
    assert.equal(
      writeWhole(
        () => {
          throw full;
        },
        new Uint8Array(8),
        clock,
      ),
      full,
    );
    // Given up as soon as the wait reached 10 s: 10 000 tries were 160 s of 16 ms sleeps, 2500 s of 250 ms.
    assert.equal(clock.time, WRITE_WAIT_MS, `tick ${tick}`);
    assert.equal(clock.sleeps, WRITE_WAIT_MS / tick, `tick ${tick}`);
  }
  // A write that takes nothing without an error is waited on the same way (the loop spun on it for ever).
  const idle = clockOf(16);
  const stuck = writeWhole(() => 0, new Uint8Array(8), idle) as Error;
  assert.match(stuck.message, /took no byte for 10 s/);
  assert.equal(idle.time, WRITE_WAIT_MS);
  // A slow reader, a byte every 9 s: each byte starts the wait again, and everything goes through.
  const slow = clockOf(1000);
  let written = 0;
  const bytes = new Uint8Array(5);
  const error = writeWhole(
    () => {
      if (slow.time % 9000 !== 0 || slow.time / 9000 <= written) throw full;
      return (written++, 1);
    },
    bytes,
    slow,
  );
  assert.equal(error, undefined);
  assert.equal(written, 5);
  // Any other error ends the write at once, and is what it returns.
  const broken = Object.assign(new Error("EPIPE: broken pipe"), { code: "EPIPE" });
  assert.equal(
    writeWhole(
      () => {
        throw broken;
      },
      bytes,
      clockOf(1),
    ),
    broken,
  );
});
