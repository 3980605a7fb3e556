/**
 * Overhead of the guard: `runTool` on a trivial tool against a raw spawn of the same tool in the same run
 * (`Deno.Command(...).output()` under Deno, `Bun.spawn` under Bun). `deno task bench` or
 * `bun run bench/bun.ts guard`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { register } from "./_harness.ts";
import { runTool } from "../guard.ts";

const COMMAND = "echo";
const ARGS = ['{"ok":true,"items":[1]}'];

const denoApi = (globalThis as {
  Deno?: {
    Command: new (c: string, o: Record<string, unknown>) => {
      output(): Promise<{ stdout: Uint8Array }>;
      spawn(): {
        stdout: ReadableStream<Uint8Array>;
        stderr: ReadableStream<Uint8Array>;
        status: Promise<unknown>;
      };
    };
  };
}).Deno;
const bunApi = (globalThis as {
  Bun?: {
    spawn(cmd: string[], o: Record<string, unknown>): {
      stdout: ReadableStream<Uint8Array>;
      stderr: ReadableStream<Uint8Array>;
      exited: Promise<number>;
    };
  };
}).Bun;

/** The child's stdout as text, with stderr drained and the exit awaited, as `output()` does it. */
async function stdoutText(
  stdout: ReadableStream<Uint8Array>,
  stderr: ReadableStream<Uint8Array>,
  exited: Promise<unknown>,
): Promise<string> {
  const [text] = await Promise.all([new Response(stdout).text(), new Response(stderr).text(), exited]);
  return text;
}

async function rawSpawn(detached = false): Promise<string> {
  if (denoApi) {
    if (!detached) {
      const out = await new denoApi.Command(COMMAND, { args: ARGS, stdout: "piped", stderr: "piped" })
        .output();
      return new TextDecoder().decode(out.stdout);
    }
    // output() ignores `detached` (the child stays in our process group), so spawn() is the honest comparison.
    const child = new denoApi.Command(COMMAND, { args: ARGS, stdout: "piped", stderr: "piped", detached })
      .spawn();
    return await stdoutText(child.stdout, child.stderr, child.status);
  }
  const proc = bunApi!.spawn([COMMAND, ...ARGS], { stdout: "pipe", stderr: "pipe", detached });
  return await stdoutText(proc.stdout, proc.stderr, proc.exited);
}

// Under Deno, where /proc cannot be read (macOS, a restricted --allow-read), the guard gets the process group
// through `setsid` (posix_spawn, then setsid() and exec in place) instead of `detached` (fork): this case is
// that mechanism alone. On Linux with /proc it spawns plainly with a marker in the environment (next case).
const SETSID = ["/usr/bin/setsid", "/bin/setsid"].find((p) => existsSync(p));

async function rawSetsid(): Promise<string> {
  const child = new denoApi!.Command(SETSID!, {
    args: ["--", COMMAND, ...ARGS],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await stdoutText(child.stdout, child.stderr, child.status);
}

let markers = 0;

/** What the guard does under Deno on Linux: a plain spawn (no process group) with one more variable. */
async function rawMarked(): Promise<string> {
  const child = new denoApi!.Command(COMMAND, {
    args: ARGS,
    env: { TOOLGUARD_TREE_bench: String(++markers) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await stdoutText(child.stdout, child.stderr, child.status);
}

async function guarded(): Promise<unknown> {
  const r = await runTool(COMMAND, ARGS);
  if (r.kind !== "results") throw new Error(`unexpected ${r.kind}: ${r.detail}`);
  return r.items;
}

register([
  {
    name: denoApi ? "raw Deno.Command output()" : "raw Bun.spawn",
    group: "guard",
    baseline: true,
    fn: () => rawSpawn(),
  },
  // A process group is one way to end the whole tree; this case shows what it alone costs. Under Deno,
  // `detached` makes the runtime fork() instead of posix_spawn(), which is why the guard avoids it there.
  {
    name: denoApi ? "raw Deno.Command spawn(), detached" : "raw Bun.spawn, detached",
    group: "guard",
    fn: () => rawSpawn(true),
  },
  ...(denoApi && SETSID
    ? [{ name: "raw Deno.Command spawn() via setsid", group: "guard", fn: rawSetsid }]
    : []),
  ...(denoApi ? [{ name: "raw Deno.Command spawn(), marker in env", group: "guard", fn: rawMarked }] : []),
  { name: "runTool (envelope, classified)", group: "guard", fn: guarded },
]);
