/**
 * Statistics over a call log written by `jsonlLog`: how many tool runs, how often each outcome kind,
 * which tools fail, which finding codes get calls rejected, and how long runs take (p50/p95).
 *
 * It streams: memory does not grow with the number of lines (durations go into a fixed-size histogram
 * once a group has more than a few hundred of them; at most `maxGroups` groups are kept, and names past 256
 * characters are cut). Malformed lines are counted and their first line numbers reported; they never stop
 * the report.
 *
 * @example Count runs, failures and malformed lines
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStats } from "@toolguard/toolguard/stats";
 *
 * const stats = createStats({ by: "tool" });
 * const ts = "2026-11-02T10:00:00.000Z";
 * stats.addLine(JSON.stringify({ ts, event: "result", tool: "rg", kind: "exit", ok: false, durationMs: 12 }));
 * stats.addLine(JSON.stringify({ ts, event: "result", tool: "rg", kind: "empty", ok: true, durationMs: 8 }));
 * stats.addLine("not json");
 * const report = stats.finish();
 * assert.equal(report.runs.total, 2);
 * assert.equal(report.runs.failed, 1);
 * assert.deepEqual(report.malformed, { count: 1, lineNumbers: [3] });
 * assert.equal(report.runs.groups[0].key, "rg");
 * assert.equal(report.runs.groups[0].failureRate, 0.5);
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.
import "./_common/values.ts";

export {
  createStats,
  FINDING_CODES,
  OUTCOME_KINDS,
  parseSince,
  statsFromChunks,
  statsFromFile,
} from "./_log/stats.ts";
export type {
  GroupBy,
  KindSeries,
  RunGroup,
  StatsAggregator,
  StatsOptions,
  StatsReport,
  VerdictGroup,
} from "./_log/stats.ts";
export { renderHtmlReport } from "./_log/report_html.ts";
export type { HtmlReportOptions } from "./_log/report_html.ts";
