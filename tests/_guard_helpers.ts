/**
 * Shared helpers for the guard tests: how to launch the fake tool with the current runtime, pid files, and
 * waiting for processes to end (by `isAlive` of ./_runtime.ts, which treats zombies as gone).
 *
 * @module
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FakeToolLauncher } from "../_cli/fake_tool.ts";
import { isAlive, isDeno, isLinux, runtimeCommand } from "./_runtime.ts";

/** Path of fixtures/tool.ts. */
export const toolScript: string = fileURLToPath(new URL("../fixtures/tool.ts", import.meta.url));

const toolCommand = runtimeCommand(toolScript);
/** The fake tool, launched with the runtime running the tests. */
export const launcher: FakeToolLauncher = { command: toolCommand.command, argsPrefix: toolCommand.args };

/** Arguments for one fake-tool scenario. */
export function fake(scenario: string, ...args: string[]): string[] {
  return [...launcher.argsPrefix, scenario, ...args];
}

/** Wait until none of `pids` is alive, up to `ms`; returns the ones still alive. */
export async function waitGone(pids: readonly number[], ms = 3000): Promise<number[]> {
  const end = Date.now() + ms;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0 || Date.now() > end) return alive;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A temp dir and a pid file inside it, with cleanup. */
export function pidFile(): { path: string; dir: string; pids(): number[]; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-guard-"));
  const path = join(dir, "pids");
  return {
    path,
    dir,
    pids: () =>
      existsSync(path)
        ? readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map(Number)
        : [],
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Wait until the pid file holds at least `n` pids (or `ms` passes). */
export async function waitPids(file: { pids(): number[] }, n: number, ms = 10_000): Promise<number[]> {
  const end = Date.now() + ms;
  while (file.pids().length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return file.pids();
}

/** Number of open file descriptors of this process (Linux), or -1. */
export function fdCount(): number {
  if (!isLinux) return -1;
  try {
    if (isDeno) {
      const deno = (globalThis as unknown as { Deno: { readDirSync(p: string): Iterable<unknown> } }).Deno;
      return [...deno.readDirSync("/proc/self/fd")].length;
    }
    return readdirSync("/proc/self/fd").length;
  } catch {
    return -1;
  }
}
