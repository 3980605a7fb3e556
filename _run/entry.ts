/**
 * The public {@linkcode runTool}. The runner (`run_tool.ts`, and under it the process layer `runtime.ts`, the
 * tree kill and the pipes) loads on the first call, so importing the guard for `classify` or `fromModel`, or
 * `mod.ts` for validation alone, loads no process code.
 *
 * @module
 */
import { guardFailure, optionGiven } from "./classify.ts";
import { logResult, type ToolArg } from "./args.ts";
import type { RunOptions, ToolResult } from "../types.ts";

/**
 * Run `command` with `args` (no shell, ever) and classify the outcome into one of seven kinds. Never rejects
 * and never throws for anything a tool or the OS does: a program that cannot start is kind `spawn`, a hung
 * one `timeout`, and so on. Invalid options are reported as kind `spawn` with a detail saying what to fix,
 * and nothing runs.
 *
 * @param command Program name (looked up on `PATH`) or path.
 * @param args Arguments; mark model-chosen values with {@linkcode fromModel}.
 * @param options See {@linkcode RunOptions}.
 * @returns The classified result; `items === null` exactly when `ok === false`.
 *
 * @example A tool that cannot start is a failure, never "found nothing"
 * ```ts
 * import assert from "node:assert/strict";
 * import { runTool } from "@toolguard/toolguard/guard";
 *
 * const result = await runTool("./no-such-tool");
 * assert.equal(result.ok, false);
 * assert.equal(result.kind, "spawn");
 * assert.equal(result.items, null);
 * ```
 *
 * @example Read the items a tool printed
 * ```ts
 * import assert from "node:assert/strict";
 * import process from "node:process";
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * // The current runtime as the tool: it prints a JSON envelope holding the value it was given.
 * const script = "console.log(JSON.stringify({ ok: true, items: [process.argv.at(-1)] }))";
 * const evalFlag = "Deno" in globalThis ? "eval" : "-e";
 * const result = await runTool(process.execPath, [evalFlag, script, fromModel("needle")], { timeoutMs: 20_000 });
 * assert.equal(result.kind, "results");
 * assert.deepEqual(result.items, ["needle"]);
 * ```
 *
 * @example End a hung tool at its time limit
 * ```ts
 * import assert from "node:assert/strict";
 * import process from "node:process";
 * import { runTool } from "@toolguard/toolguard/guard";
 *
 * const hang = "setTimeout(() => {}, 60_000)";
 * const result = await runTool(process.execPath, ["Deno" in globalThis ? "eval" : "-e", hang], { timeoutMs: 300 });
 * assert.equal(result.kind, "timeout"); // its whole process tree was ended
 * assert.equal(result.items, null);
 * ```
 */
export function runTool(
  command: string,
  args: readonly ToolArg[] = [],
  options: RunOptions = {},
): Promise<ToolResult> {
  // Once loaded, the runner is called directly: an `import()` per call cost more than the rest of the
  // guard's own work on a quick tool under Deno.
  if (runner !== undefined) return runner.runTool(command, args, options);
  return loadRunner().then(
    (loaded) => loaded.runTool(command, args, options),
    (error) => unloaded(error, command, args, options),
  );
}

/**
 * The result of a call whose runner would not load, logged as the runner logs every result: a broken
 * installation must still not look like an answer, nor go unlogged. Each option is read once, and a read
 * that throws counts as not given (the runner would refuse such options, and still log the refusal).
 */
async function unloaded(
  error: unknown,
  command: string,
  args: readonly ToolArg[],
  options: RunOptions,
): Promise<ToolResult> {
  const result = guardFailure(
    "the guard could not load its runner",
    error,
    optionGiven(options, "maxDetail"),
  );
  const cwd = optionGiven(options, "cwd");
  await logResult(
    optionGiven(options, "onResult"),
    result,
    command,
    args,
    typeof cwd === "string" ? cwd : undefined,
  );
  return result;
}

let runner: typeof import("./run_tool.ts") | undefined;

async function loadRunner(): Promise<typeof import("./run_tool.ts")> {
  return runner ??= await import("./run_tool.ts");
}
