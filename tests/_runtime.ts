/**
 * The runtime and the platform running the tests, in one place: which runtime it is, the command that runs a
 * script (or a line of code) under it as a child process, and whether a process is still running.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import process from "node:process";

const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;

/** True when the tests run under Deno. */
export const isDeno: boolean = deno !== undefined;
/** True when the tests run under Bun. */
export const isBun: boolean = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
/** True on Linux (where /proc lets us see zombies and count descriptors). */
export const isLinux: boolean = process.platform === "linux";
/** True on Windows. */
export const isWindows: boolean = process.platform === "win32";

/** A program and its arguments, ready for `spawn`, `runTool` or an MCP client transport. */
export interface Command {
  /** The runtime's executable. */
  command: string;
  /** Everything after it. */
  args: string[];
}

/** Options of {@linkcode runtimeCommand}. */
export interface RuntimeCommandOptions {
  /** A deno.json to run with (Deno only; a child started from another folder would not find it). */
  config?: string;
}

/**
 * The command that runs `script` with `args` under the runtime running the tests: `deno run -A script ...`
 * under Deno, `bun script ...` under Bun.
 */
export function runtimeCommand(
  script: string,
  args: readonly string[] = [],
  options: RuntimeCommandOptions = {},
): Command {
  if (!deno) return { command: process.execPath, args: [script, ...args] };
  const config = options.config === undefined ? [] : ["--config", options.config];
  return { command: deno.execPath(), args: ["run", "-A", ...config, script, ...args] };
}

/** The command that evaluates one line of `code` under the runtime running the tests (`deno eval`, `bun -e`). */
export function evalCommand(code: string): Command {
  return deno
    ? { command: deno.execPath(), args: ["eval", code] }
    : { command: process.execPath, args: ["-e", code] };
}

/**
 * True while `pid` is a running process. A zombie counts as gone: in containers whose PID 1 does not reap
 * orphans, a killed orphan stays a zombie forever, yet it is no longer running.
 */
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

/**
 * Sends `signal` (SIGKILL unless told) to `pid`, for a test's clean-up: a process that has already ended is no
 * error. Only for a pid the test has just seen running: an old one may be another process's by now.
 */
export function signalProcess(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ended meanwhile
  }
}

/**
 * True when the Windows build of the runtime runs under Wine (`deno task check:windows`): its `w10` sets
 * `UNDER_WINE=1`, and Wine gives every Windows process `WINECONFIGDIR`. Only for what real Windows does and Wine
 * does not: a test skipped on it still runs on real Windows runners.
 */
export const underWine: boolean = isWindows &&
  (process.env.UNDER_WINE === "1" || process.env.WINECONFIGDIR !== undefined);

/**
 * `stderr` of a child of the runtime without the "Internal error: directory mismatch ..." lines bun.exe prints
 * under Wine (harmless, Wine's doing), so a test reads what the program wrote. Unchanged anywhere else.
 */
export function withoutWineNoise(stderr: string): string {
  return underWine
    ? stderr.replace(/^Internal error: directory mismatch for directory .*\r?\n?/gm, "")
    : stderr;
}
