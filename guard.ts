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
 * import assert from "node:assert/strict";
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
 * const script = "console.log(JSON.stringify({ ok: true, items: [process.argv.at(-1)] }))";
 * const [command, prefix] = deno ? [deno.execPath(), ["eval"]] : [process.execPath, ["-e"]];
 * const result = await runTool(command, [...prefix, script, fromModel("needle")], { timeoutMs: 20_000 });
 * assert.equal(result.kind, "results");
 * assert.deepEqual(result.items, ["needle"]);
 * ```
 *
 * @example A model-chosen value that looks like an option is refused before anything runs
 * ```ts
 * import assert from "node:assert/strict";
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * const result = await runTool("rg", ["--json", fromModel("--pre=./evil.sh"), "."]);
 * assert.equal(result.kind, "spawn");
 * assert.equal(result.items, null); // a failure is never an empty answer
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_common/values.ts";
import "./_common/bytes.ts";

export {
  classify,
  DEFAULT_MAX_DETAIL,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_TIMEOUT_MS,
} from "./_run/classify.ts";
export type { ClassifyOptions, KilledBy, ProcessOutcome } from "./_run/classify.ts";
export { fromModel } from "./_run/args.ts";
export type { ModelValue, ToolArg } from "./_run/args.ts";
export { runTool } from "./_run/entry.ts";
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
