/**
 * Statistics over a call log written by `jsonlLog`: how many tool runs, how often each outcome kind,
 * which tools fail, which finding codes get calls rejected, and how long runs take (p50/p95).
 *
 * It streams: memory does not grow with the number of lines (durations go into a fixed-size histogram
 * once a group has more than a few hundred of them; at most `maxGroups` groups are kept). Malformed lines
 * are counted and their first line numbers reported; they never stop the report.
 *
 * @example
 * ```ts
 * import { createStats } from "@toolguard/toolguard/stats";
 *
 * const stats = createStats({ by: "tool" });
 * stats.addLine('{"ts":"2026-11-02T10:00:00.000Z","event":"result","tool":"rg","kind":"exit","ok":false,"durationMs":12}');
 * stats.addLine('{"ts":"2026-11-02T10:00:01.000Z","event":"result","tool":"rg","kind":"empty","ok":true,"durationMs":8}');
 * stats.addLine("not json");
 * const report = stats.finish();
 * console.log(report.runs.total, report.runs.failed, report.malformed.count); // 2 1 1
 * console.log(report.runs.groups[0].key, report.runs.groups[0].failureRate); // rg 0.5
 * ```
 *
 * @module
 */
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
