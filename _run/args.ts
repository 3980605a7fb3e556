/**
 * Arguments for a tool run: developer text, or values marked as the model's, checked before anything runs.
 *
 * @module
 */
import { describeJsonType, excerpt } from "./classify.ts";
import { givenValue } from "../_common/values.ts";
import type { RunOptions, ToolCallRecord, ToolResult } from "../types.ts";

/** A model-supplied argument, made by {@linkcode fromModel}. The guard checks it before anything runs. */
export interface ModelValue {
  /** Marks the value as chosen by a model. */
  readonly fromModel: true;
  /** The argument text. */
  readonly value: string;
}

/** One argument for {@linkcode runTool}: a plain string from the developer, or a value marked as the model's. */
export type ToolArg = string | ModelValue;

/**
 * Mark an argument value as chosen by a model. When the argument list is run, a marked value that starts with
 * `-` (so a tool would read it as an option, e.g. `--pre=./evil.sh`, `-o`, `-e`) is refused as kind `spawn`
 * before anything starts, unless it comes after a developer-written `--`.
 *
 * Numbers and booleans become their string form; other values their JSON text.
 *
 * @example Refuse a model-chosen value that a tool would read as an option
 * ```ts
 * import assert from "node:assert/strict";
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * const pattern = "--pre=./evil.sh"; // what the model asked to search for
 * const refused = await runTool("rg", ["--json", fromModel(pattern), "src"]);
 * assert.equal(refused.kind, "spawn"); // refused before anything ran
 * assert.match(refused.detail, /came from the model and starts with "-"/);
 * ```
 *
 * @example After a developer-written `--`, the same value is only data
 * ```ts
 * import assert from "node:assert/strict";
 * import process from "node:process";
 * import { fromModel, runTool } from "@toolguard/toolguard/guard";
 *
 * // The current runtime as the tool: it prints the last argument it was given.
 * const script = "console.log(JSON.stringify({ ok: true, items: [process.argv.at(-1)] }))";
 * const evalFlag = "Deno" in globalThis ? "eval" : "-e";
 * const result = await runTool(process.execPath, [evalFlag, script, "--", fromModel("-e")], { timeoutMs: 20_000 });
 * assert.equal(result.kind, "results");
 * assert.deepEqual(result.items, ["-e"]);
 * ```
 */
export function fromModel(value: unknown): ModelValue {
  const text = typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean" || typeof value === "bigint"
    ? String(value)
    : JSON.stringify(value) ?? String(value);
  return Object.freeze({ fromModel: true as const, value: text });
}

export function isModelValue(arg: unknown): arg is ModelValue {
  return typeof arg === "object" && arg !== null && (arg as ModelValue).fromModel === true &&
    typeof (arg as ModelValue).value === "string";
}

export type PreparedArgs = { ok: true; argv: string[] } | { ok: false; reason: string };

export function prepareArgs(args: readonly ToolArg[]): PreparedArgs {
  if (!Array.isArray(args)) return { ok: false, reason: "args must be an array of strings" };
  const argv: string[] = [];
  let afterDoubleDash = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let value: string;
    if (typeof arg === "string") {
      value = arg;
      if (arg === "--") afterDoubleDash = true;
    } else if (isModelValue(arg)) {
      value = arg.value;
      if (!afterDoubleDash && value.startsWith("-")) {
        return {
          ok: false,
          reason: `refused before running: argument ${i + 1} came from the model and starts with "-" ` +
            `(${excerpt(value, 60)}), so the tool would read it as an option; put it after a "--" argument ` +
            `or reject the call`,
        };
      }
    } else {
      return {
        ok: false,
        reason: `argument ${i + 1} is ${
          describeJsonType(arg)
        }: give strings, or values marked with fromModel()`,
      };
    }
    if (value.includes("\0")) {
      return {
        ok: false,
        reason: `argument ${i + 1} contains a NUL character, which no program can receive`,
      };
    }
    argv.push(value);
  }
  return { ok: true, argv };
}

/**
 * Hand `result` and the call that produced it to the caller's `onResult`, once, when it is a function (a
 * refusal or a guard's failure is a result too, and every result is logged). Logging never changes the
 * outcome: a hook that throws or rejects is ignored. `cwd`: the working directory the call was given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fromModel, logResult } from "./args.ts";
 *
 * const result = { ok: true as const, kind: "empty" as const, items: [], warnings: [], detail: "", exitCode: 0, signal: null, durationMs: 1, stderr: "", truncated: false };
 * const calls: unknown[] = [];
 * await logResult((r: unknown, call: unknown) => void calls.push(r, call), result, "rg", ["-e", fromModel("x")], undefined);
 * assert.deepEqual(calls, [result, { command: "rg", args: ["-e", "x"] }]);
 * await logResult(() => { throw new Error("log full"); }, result, "rg", [], "/tmp"); // ignored
 * ```
 */
export async function logResult(
  onResult: unknown,
  result: ToolResult,
  command: string,
  args: readonly ToolArg[],
  cwd: string | undefined,
): Promise<void> {
  if (typeof onResult !== "function") return;
  try {
    const record: ToolCallRecord = {
      command,
      // An argument that was refused (not text) is named by its type: its own text could throw.
      args: Array.isArray(args)
        ? args.map((a) => (typeof a === "string" ? a : isModelValue(a) ? a.value : givenValue(a)))
        : [],
      ...(cwd !== undefined ? { cwd } : {}),
    };
    await (onResult as NonNullable<RunOptions["onResult"]>)(result, record);
  } catch {
    // Logging must never change the outcome.
  }
}
