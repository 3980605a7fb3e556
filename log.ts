/**
 * Call logs: one JSON line per guarded tool run and per validated tool call, so a user can count
 * `"kind":"exit"` across a week, or compare two models, with `toolguard stats`.
 *
 * `jsonlLog(target)` returns hooks: pass `log.onResult` as `runTool`'s `onResult`, and hand every
 * validation verdict to `log.onVerdict`. A line holds the timestamp, the tool, the outcome kind (or the
 * verdict), `ok`, the exit code, the duration, the detail, the item count, the sentence the model received
 * and the finding codes. Items and argument values are left out unless you opt in (`includeItems`,
 * `includeArguments`): they may hold private data.
 *
 * Writing never throws into the agent. A full disk, a closed stream or a closed log are counted
 * (`log.failed`) and reported to `onError`; only opening the file can throw (a folder, a FIFO that no process
 * reads), at once, before anything runs. Control, bidi and invisible characters are written as JSON escapes,
 * so `tail -f` on a log shows them as text.
 *
 * @example Log a failed run, without its arguments
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonlLog } from "@toolguard/toolguard/log";
 *
 * const lines: string[] = [];
 * const log = jsonlLog(new WritableStream<Uint8Array>({
 *   write(chunk) { lines.push(new TextDecoder().decode(chunk)); },
 * }));
 * log.onResult({
 *   ok: false, kind: "exit", items: null, exitCode: 2, signal: null, detail: "rg: regex parse error",
 *   durationMs: 12, warnings: [], truncated: false, stderr: "",
 * }, { command: "rg", args: ["(", "."] });
 * await log.close();
 *
 * const line = JSON.parse(lines[0]);
 * assert.equal(line.event, "result");
 * assert.equal(line.tool, "rg");
 * assert.equal(line.kind, "exit");
 * assert.equal(line.exitCode, 2);
 * assert.equal("args" in line, false); // argument values are only logged with includeArguments
 * assert.equal(log.written, 1);
 * ```
 *
 * @module
 */
export { jsonlLog } from "./_log/log.ts";
export type { JsonlLog, JsonlLogOptions, LogLine, McpLine, ResultLine, VerdictLine } from "./_log/log.ts";
