/**
 * The six-case harness: runs the fake tool's `results`, `empty`, `refused`, `crash`, `silent` and `hang`
 * scenarios through the guard and checks each lands in the kind the contract promises. Used by
 * `scripts/demo.ts` (`deno task demo`) and by `toolguard selftest`, which passes the compiled program itself
 * as the launcher (`[execPath, "__fake-tool"]`).
 *
 * @module
 */

import { runTool } from "../_run/run_tool.ts";
import type { OutcomeKind, ToolResult } from "../types.ts";

/** How to start the fake tool: `command` then `argsPrefix`, then the scenario name. */
export interface SelftestLauncher {
  /** The program: a runtime (deno, bun) or the compiled `toolguard` executable. */
  command: string;
  /** Arguments before the scenario, e.g. `["run", "-A", "fixtures/tool.ts"]` or `["__fake-tool"]`. */
  argsPrefix: readonly string[];
}

/** Options for {@linkcode runSelftest}. */
export interface SelftestOptions {
  /** Timeout for the `hang` case, in milliseconds. Default 1 000. */
  hangTimeoutMs?: number;
  /** Timeout for every other case, in milliseconds. Default 20 000 (a cold runtime can be slow to start). */
  timeoutMs?: number;
}

/** One case of the harness and how it went. */
export interface SelftestCase {
  /** The fake-tool scenario. */
  name: string;
  /** The kind the contract promises for it. */
  expectedKind: OutcomeKind;
  /** What the guard returned. */
  result: ToolResult;
  /** True when the kind matches and `items` agrees with `ok` (`null` exactly for failures). */
  pass: boolean;
}

/** The six cases and the kind each must produce. */
export const SELFTEST_CASES: ReadonlyArray<{ name: string; expectedKind: OutcomeKind }> = [
  { name: "results", expectedKind: "results" },
  { name: "empty", expectedKind: "empty" },
  { name: "refused", expectedKind: "refused" },
  { name: "crash", expectedKind: "exit" },
  { name: "silent", expectedKind: "protocol" },
  { name: "hang", expectedKind: "timeout" },
];

function agrees(result: ToolResult, expectedKind: OutcomeKind): boolean {
  if (result.kind !== expectedKind) return false;
  if (!result.ok) return result.items === null;
  return Array.isArray(result.items) && (result.kind === "empty") === (result.items.length === 0);
}

/**
 * Run the six cases (concurrently) with the fake tool started by `launcher`. Never throws; a case that goes
 * wrong has `pass: false`.
 *
 * @example Every case lands in the kind the contract promises
 * ```ts
 * import assert from "node:assert/strict";
 * import process from "node:process";
 * import { runSelftest } from "./selftest_cases.ts";
 *
 * const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
 * const tool = new URL("../fixtures/tool.ts", import.meta.url).pathname;
 * const launcher = deno
 *   ? { command: deno.execPath(), argsPrefix: ["run", "-A", tool] }
 *   : { command: process.execPath, argsPrefix: [tool] };
 * const cases = await runSelftest(launcher, { hangTimeoutMs: 500 });
 * assert.deepEqual(
 *   cases.map((c) => [c.name, c.result.kind, c.pass]),
 *   [
 *     ["results", "results", true],
 *     ["empty", "empty", true],
 *     ["refused", "refused", true],
 *     ["crash", "exit", true],
 *     ["silent", "protocol", true],
 *     ["hang", "timeout", true],
 *   ],
 * );
 * ```
 */
export async function runSelftest(
  launcher: SelftestLauncher,
  options: SelftestOptions = {},
): Promise<SelftestCase[]> {
  return await Promise.all(SELFTEST_CASES.map(async ({ name, expectedKind }) => {
    const result = await runTool(launcher.command, [...launcher.argsPrefix, name], {
      timeoutMs: name === "hang" ? options.hangTimeoutMs ?? 1000 : options.timeoutMs ?? 20_000,
    });
    return { name, expectedKind, result, pass: agrees(result, expectedKind) };
  }));
}
