/**
 * toolguard guards the seam between a language model and the tools it drives.
 *
 * - {@link runTool} runs a command-line tool and classifies the outcome into one of seven kinds, so that
 *   "the tool failed" can never be read as "the tool found nothing" (`items` is `null` exactly when the run
 *   failed; `[]` means the tool ran and found nothing).
 * - {@link createValidator} and {@link validateToolCalls} judge a model's tool calls against the declared
 *   tools (any provider's shape) before anything runs.
 * - {@link scan} spots injected instructions in arguments, tool output and any text.
 * - {@link describe} turns a result into the one sentence the model should read.
 *
 * Nothing here imports anything beyond the runtime (Deno, Bun or Node).
 *
 * @example Run a tool and tell the model what happened
 * ```ts
 * import { describe, runTool } from "./mod.ts";
 *
 * const runtime = (globalThis as { Deno?: { execPath(): string } }).Deno?.execPath() ?? process.execPath;
 * const result = await runTool(runtime, ["eval", "console.log(JSON.stringify({ ok: true, items: [] }))"]);
 * console.log(result.kind, result.items); // "empty" []
 * console.log(describe(result));
 * ```
 *
 * @example Validate a model's tool call before running it
 * ```ts
 * import { createValidator } from "./mod.ts";
 *
 * const validator = createValidator([{
 *   type: "function",
 *   function: {
 *     name: "get_weather",
 *     parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *   },
 * }]);
 * const verdict = validator.validate([{ function: { name: "get_weather", arguments: "{}" } }]);
 * console.log(verdict.allowed, verdict.calls[0].findings[0].code); // false "missing_required_argument"
 * ```
 *
 * @module
 */

export * from "./guard.ts";
export * from "./validate.ts";
export * from "./scan.ts";
export * from "./describe.ts";
export * from "./gate.ts";
export * from "./extract.ts";
export * from "./log.ts";
export * from "./stats.ts";
export * from "./mcp.ts";
