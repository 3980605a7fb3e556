/**
 * `toolguard selftest [--hang-timeout MS] [--json] [--pretty]`: run the six-case harness on this machine,
 * with this program itself as the fake tool, so it works from the single executable with nothing else
 * installed.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import { givenValue } from "../_common/values.ts";
import "../_common/bytes.ts";
import "./output.ts";
import "../_common/pointer.ts";
import "../_common/measure.ts";
import "../_scan/words.ts";
import "../_scan/fold.ts";
import "../_scan/segments.ts";
import "../_scan/gap.ts";
import "../_scan/translated.ts";
import "../_scan/rules.ts";
import "../_scan/leads.ts";
import "../_scan/decode.ts";
import "../_scan/screen.ts";
import "../_scan/terminal.ts";
import "../_scan/scan.ts";
import "../_run/pipes.ts";
import "../_run/windows.ts";
import "../_run/tree.ts";
import "../_run/runtime.ts";
import "../_run/classify.ts";
import "../_run/args.ts";
import "../_describe/facts.ts";
import "../_describe/verdict.ts";

import {
  EXIT_FAIL,
  EXIT_OK,
  integerOption,
  MAX_TIMER_MS,
  type OptionSpec,
  paint,
  parseCommandLine,
  printedHelp,
  printJson,
  runMain,
  UsageError,
  wantsJson,
  writeOut,
} from "./io.ts";
import { selfLauncher } from "./self.ts";
import { describe } from "../_describe/describe.ts";
import { runTool } from "../_run/run_tool.ts";
import type { OutcomeKind, ToolResult } from "../types.ts";

/** The `toolguard selftest --help` text. */
export const SELFTEST_HELP =
  `toolguard selftest: check that tool runs are classified correctly on this machine

Usage: toolguard selftest [options]

Runs this program as a fake tool in six ways (results, empty, refused, crash, silent, hang) and checks
that each lands in the kind the contract promises (results, empty, refused, exit, protocol, timeout).
Prints one PASS or FAIL line per case with the sentence the model would read.

Options:
  --hang-timeout MS   how long the hang case may run before the guard ends it (default 1000)
  --json              print the cases as JSON
  --pretty            print indented JSON (implies --json)
  -h, --help          show this help

Exit status: 0 when all six cases behave as designed, 1 when any does not, 2 for usage errors.
`;

/**
 * The options of `toolguard selftest` (`--help` aside), as `parseArgs` takes them; {@linkcode SELFTEST_HELP}
 * lists each.
 */
export const SELFTEST_OPTIONS: Record<string, OptionSpec> = {
  "hang-timeout": { type: "string" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

/**
 * Run `toolguard selftest` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["--json"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("selftest", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "selftest",
      options: SELFTEST_OPTIONS,
    });
    if (printedHelp(values, SELFTEST_HELP)) return EXIT_OK;
    if (positionals.length > 0) {
      throw new UsageError(
        `unexpected argument ${givenValue(positionals[0])}`,
        "selftest takes no arguments",
      );
    }
    const launcher = selfLauncher();
    const cases = await runSelftest(launcher, {
      hangTimeoutMs: integerOption(values, "hang-timeout", { min: 100, max: MAX_TIMER_MS }),
    });
    const passed = cases.filter((c) => c.pass).length;
    if (wantsJson(values)) {
      printJson({ launcher, passed, total: cases.length, cases }, { pretty: values.pretty === true });
    } else {
      const width = Math.max(...cases.map((c) => c.name.length));
      let out = "";
      for (const c of cases) {
        const mark = c.pass ? paint("green", "PASS") : paint("red", "FAIL");
        out += `${mark} ${c.name.padEnd(width)}  expected ${c.expectedKind}, got ${c.result.kind} ` +
          `(${Math.round(c.result.durationMs)} ms): ${describe(c.result, { budget: 200 })}\n`;
      }
      out += passed === cases.length
        ? `${passed}/${cases.length} cases behaved as designed.\n`
        : `${
          paint("red", `${cases.length - passed} of ${cases.length} cases misbehaved`)
        }; please report this ` +
          "with the output of `toolguard selftest --json`.\n";
      writeOut(out);
    }
    return passed === cases.length ? EXIT_OK : EXIT_FAIL;
  });
}

/*
 * The six-case harness: runs the fake tool's `results`, `empty`, `refused`, `crash`, `silent` and `hang`
 * scenarios through the guard and checks each lands in the kind the contract promises. Used by
 * `scripts/demo.ts` (`deno task demo`) and by `toolguard selftest`, which passes the compiled program itself
 * as the launcher (`[execPath, "__fake-tool"]`).
 */

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
 * import { runSelftest } from "./selftest.ts";
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
