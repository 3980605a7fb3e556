/**
 * The command line of the scripts in this folder, read as the `toolguard` command reads its own: strict
 * `node:util` `parseArgs`, `--help` (or `-h`) printing the script's usage, and an unknown or malformed option
 * answered by one line and the usage on stderr with exit code 2, not a stack trace.
 *
 * @module
 */
import process from "node:process";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { parseArgsMessage } from "../_cli/io.ts";

/**
 * The arguments after `--`, or all of them: `--help` is only read before that mark, where it cannot be a
 * value (`--only --help` is an option's value; `parseArgs` then says so).
 */
function optionPart(args: readonly string[]): readonly string[] {
  const end = args.indexOf("--");
  return end < 0 ? args : args.slice(0, end);
}

/** The running script's file name without `.ts`, for messages (`scan_ab`). */
function scriptName(): string {
  return (process.argv[1] ?? "script").replace(/^.*[\\/]/, "").replace(/\.[cm]?[jt]s$/, "");
}

/**
 * The script's arguments (`process.argv` after the script's path, under Deno and Bun alike), parsed by
 * `config` in strict mode. With `--help` or `-h` it prints `usage` and exits 0; on an unknown option, a
 * missing value or a value given to a switch, it prints what was wrong and `usage` on stderr and exits 2.
 *
 * @example A script's options
 * ```ts
 * import assert from "node:assert/strict";
 * import { scriptArgs } from "./_args.ts";
 *
 * const { values } = scriptArgs("usage: demo.ts [--runs N]", {
 *   args: ["--runs", "5"],
 *   options: { runs: { type: "string", default: "20" } },
 * });
 * assert.equal(values.runs, "5");
 * ```
 *
 * @param usage One or a few lines: how to call the script.
 * @param config `parseArgs`'s options; `args` defaults to the script's arguments, `strict` is always on.
 * @returns What `parseArgs` returns.
 */
export function scriptArgs<T extends ParseArgsConfig>(
  usage: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? process.argv.slice(2);
  const asked = optionPart(args);
  if (asked.includes("--help") || asked.includes("-h")) {
    console.log(usage);
    process.exit(0);
  }
  try {
    // (strict whatever `config` says: the result then has the type `config` alone gives it)
    return parseArgs({ ...config, args, strict: true }) as ReturnType<typeof parseArgs<T>>;
  } catch (error) {
    console.error(`${scriptName()}: ${parseArgsMessage(error)}\n${usage}`);
    process.exit(2);
  }
}
