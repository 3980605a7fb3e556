/**
 * Shared helpers for the guard tests: how to launch the fake tool with the current runtime, pid files, and a
 * liveness check that treats zombies as dead (in containers whose PID 1 does not reap orphans, a killed
 * orphan stays a zombie forever, yet it is no longer running).
 *
 * @module
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FakeToolLauncher } from "../_cli/fake_tool.ts";

const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;

/** Path of fixtures/tool.ts. */
export const toolScript: string = fileURLToPath(new URL("../fixtures/tool.ts", import.meta.url));

/** The fake tool, launched with the runtime running the tests. */
export const launcher: FakeToolLauncher = deno
  ? { command: deno.execPath(), argsPrefix: ["run", "-A", toolScript] }
  : { command: process.execPath, argsPrefix: [toolScript] };

/** Arguments for one fake-tool scenario. */
export function fake(scenario: string, ...args: string[]): string[] {
  return [...launcher.argsPrefix, scenario, ...args];
}

/** True on Linux (where /proc lets us see zombies and count descriptors). */
export const isLinux: boolean = process.platform === "linux";
/** True on Windows. */
export const isWindows: boolean = process.platform === "win32";

/** True while `pid` is a running (non-zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (isLinux) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      return state !== "Z" && state !== "X";
    } catch {
      return false;
    }
  }
  return true;
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
    return (globalThis as { Deno?: { readDirSync(p: string): Iterable<unknown> } }).Deno
      ? [
        ...(globalThis as unknown as { Deno: { readDirSync(p: string): Iterable<unknown> } }).Deno
          .readDirSync(
            "/proc/self/fd",
          ),
      ].length
      : Number(require_fd());
  } catch {
    return -1;
  }
}

function require_fd(): number {
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  return fs.readdirSync("/proc/self/fd").length;
}
