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

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_common/values.ts";
import "./_common/bytes.ts";
import "./_common/pointer.ts";
import "./_common/measure.ts";
import "./_scan/words.ts";
import "./_scan/fold.ts";
import "./_scan/segments.ts";
import "./_scan/gap.ts";
import "./_scan/translated.ts";
import "./_scan/rules.ts";
import "./_scan/leads.ts";
import "./_scan/decode.ts";
import "./_scan/screen.ts";
import "./_scan/terminal.ts";
import "./_scan/scan.ts";
import "./_describe/facts.ts";
import "./_describe/verdict.ts";
import "./_describe/describe.ts";
import "./_log/files.ts";

export { jsonlLog } from "./_log/log.ts";
export type { JsonlLog, JsonlLogOptions, LogLine, McpLine, ResultLine, VerdictLine } from "./_log/log.ts";
