/**
 * Run a command-line tool and classify its outcome so that "the tool failed" can never be read as "the tool
 * found nothing". Every run ends in exactly one of seven kinds: `spawn`, `timeout`, `exit`, `protocol`,
 * `refused` (failures, `items === null`) or `empty`, `results` (successes, `items` is an array).
 *
 * The guard never uses a shell, ends the whole process tree on timeout, abort or output overflow, keeps memory
 * bounded whatever the tool prints, and refuses model-supplied arguments that a tool would read as options
 * (mark them with {@linkcode fromModel}).
 *
 * @example Run a tool and read its outcome
 * ```ts
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * const runtime = (globalThis as { Deno?: { execPath(): string } }).Deno;
 * const command = runtime ? runtime.execPath() : process.execPath;
 * const script = 'console.log(JSON.stringify({ ok: true, items: [Deno.args[0] ?? process.argv[2]] }))';
 * const args = runtime ? ["eval", script, fromModel("needle")] : ["-e", script, fromModel("needle")];
 * const result = await runTool(command, args, { timeoutMs: 20_000 });
 * if (result.ok) console.log(result.kind, result.items); // "results" [ "needle" ]
 * else console.log(`failed (${result.kind}): ${result.detail}`);
 * ```
 *
 * @example A model-chosen value that looks like an option is refused before anything runs
 * ```ts
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * const result = await runTool("rg", ["--json", fromModel("--pre=./evil.sh"), "."]);
 * console.log(result.kind, result.items); // "spawn" null
 * ```
 *
 * @module
 */
export {
  classify,
  DEFAULT_MAX_DETAIL,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_TIMEOUT_MS,
} from "./_run/classify.ts";
export type { ClassifyOptions, KilledBy, ProcessOutcome } from "./_run/classify.ts";
export { fromModel } from "./_run/args.ts";
export type { ModelValue, ToolArg } from "./_run/args.ts";
export { runTool } from "./_run/run_tool.ts";
export type {
  FailureKind,
  OutcomeKind,
  Protocol,
  RunOptions,
  ToolCallRecord,
  ToolFailure,
  ToolResult,
  ToolResultBase,
  ToolSuccess,
} from "./types.ts";
