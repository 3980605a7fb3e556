/**
 * `toolguard stats LOG.jsonl [--by tool|kind|day|model] [--since DATE] [--html report.html] [--json]
 * [--pretty]`: tables of tool runs, failure rate by kind, rejected calls by finding code and p50/p95
 * durations from a `jsonlLog` call log, with a bar per row on a terminal. Streams the log, so a 1 GB
 * file is read in bounded memory. `-` reads the log from stdin.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import "../_common/bytes.ts";

import { plural } from "../_common/values.ts";
import {
  cannotRead,
  cannotWrite,
  choiceOption,
  emptyPath,
  EXIT_FAIL,
  EXIT_OK,
  inputName,
  isTerminal,
  onePositional,
  type OptionSpec,
  outputPathOption,
  paint,
  parseCommandLine,
  printedHelp,
  printJson,
  runMain,
  safeText,
  sameFile,
  shownText,
  stdinChunks,
  stringOption,
  UsageError,
  wantsJson,
  writeErr,
  writeOut,
} from "./io.ts";
import { encoder } from "./output.ts";
import { replaceFile } from "../_log/files.ts";
import {
  GROUP_BY,
  OUTCOME_KINDS,
  parseSince,
  statsFromChunks,
  statsFromFile,
  type StatsReport,
} from "../_log/stats.ts";
import { renderHtmlReport } from "../_log/report_html.ts";

/** What writes the logs that `toolguard stats` reads, as its messages name them. */
const LOG_WRITERS = "`toolguard run --log`, `toolguard mcp --log` or jsonlLog";

/** The `toolguard stats --help` text. */
export const STATS_HELP =
  `toolguard stats: report on a call log written by toolguard run, toolguard mcp or jsonlLog

Usage: toolguard stats LOG.jsonl|- [options]

LOG.jsonl is a call log, one JSON line per call; - reads it from stdin.

Options:
  --by tool|kind|day|model  group the tables (default: tool)
  --since DATE              only lines at or after DATE: 2026-11-01, 2026-11-01T12:00:00Z, or an age
                            such as 24h, 7d, 2w
  --html FILE               also write a self-contained HTML report with charts to FILE
  --json                    print the statistics as JSON instead of tables
  --pretty                  print indented JSON (implies --json)
  -h, --help                show this help

Malformed lines are counted and reported, never fatal. Exit 0 when the report was made, 1 when the log is
empty or no line of it is a toolguard log line (the report is still printed), 2 for usage errors (bad flags,
unreadable log).
`;

/**
 * The options of `toolguard stats` (`--help` aside), as `parseArgs` takes them; {@linkcode STATS_HELP} lists
 * each.
 */
export const STATS_OPTIONS: Record<string, OptionSpec> = {
  by: { type: "string" },
  since: { type: "string" },
  html: { type: "string" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

/**
 * Run `toolguard stats` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["calls.jsonl", "--by", "day"]`.
 * @returns The exit status: 0 report made, 1 nothing to report on (an empty log, or one without a toolguard
 *   line), 2 usage error.
 */
export function main(args: string[]): Promise<number> {
  return runMain("stats", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "stats",
      fileOperands: true,
      options: STATS_OPTIONS,
    });
    if (printedHelp(values, STATS_HELP)) return EXIT_OK;
    const path = onePositional(
      positionals,
      "log file",
      "run `toolguard stats calls.jsonl`, or `toolguard stats -` to read stdin",
      values,
    );
    // An unset variable (`stats "$LOG"`), as every other command refuses it: not "cannot read : no such file".
    if (path === "") {
      throw emptyPath("the log file name", `give the path of a log written by ${LOG_WRITERS}, or -`);
    }
    const by = choiceOption(values, "by", GROUP_BY, { hint: "e.g. --by day for a table per day" }) ?? "tool";
    const sinceText = stringOption(values, "since");
    let since: Date | undefined;
    if (sinceText !== undefined) {
      try {
        since = parseSince(sinceText);
      } catch (e) {
        throw new UsageError(`--${(e as Error).message}`, "e.g. --since 7d for the last week");
      }
    }
    const html = outputPathOption(values, "html");
    if (html !== undefined && path !== "-" && sameFile(path, html)) {
      throw new UsageError(
        `--html ${shownText(html)} is the log being read; writing the report there would destroy it`,
        "give --html another file name",
      );
    }
    let report: StatsReport;
    try {
      report = path === "-"
        ? await statsFromChunks(stdinChunks(), { by, since })
        : await statsFromFile(path, { by, since });
    } catch (e) {
      if (e instanceof UsageError) throw e; // a closed stdin, say: its message says what to do
      throw cannotRead(inputName(path), e, `give the path of a log written by ${LOG_WRITERS}`);
    }
    if (html !== undefined) {
      try {
        // Through the log's file helper: a FIFO that no process reads is refused at once, not waited on.
        replaceFile(html, encoder.encode(renderHtmlReport(report, { source: inputName(path) })));
      } catch (e) {
        throw cannotWrite("html", html, e);
      }
    }
    if (wantsJson(values)) printJson(report, { pretty: values.pretty === true });
    else {
      writeOut(formatReport(report, { source: inputName(path), bars: isTerminal() }));
      if (html !== undefined) writeOut(`\nHTML report written to ${safeText(html)}\n`);
    }
    // An empty log is most often a wrong path (a log of another day, a typo that created it) or an agent that
    // ran nothing or logged nothing: a script checking on it must not read "0 lines" as a clean report.
    if (report.lines === 0) {
      writeErr(
        `toolguard stats: ${
          path === "-"
            ? "no line came through stdin"
            : `${shownText(path)} has no line (it is empty or blank)`
        }, so there is nothing to report on; check that it is the log the agent writes (\`toolguard run ` +
          "--log`, `toolguard mcp --log`, jsonlLog) and that the agent ran\n",
      );
      return EXIT_FAIL;
    }
    const events = report.runs.total + report.verdicts.total + report.relayEvents + report.skipped;
    if (events === 0) {
      writeErr(
        `toolguard stats: none of the ${report.lines} ${plural(report.lines, "line")} of ${
          shownText(inputName(path))
        } ` +
          `is a toolguard log line; give a log written by ${LOG_WRITERS}\n`,
      );
      return EXIT_FAIL;
    }
    if (report.malformed.count > 0) {
      writeErr(
        `${paint("yellow", "warning", "stderr")}: ${report.malformed.count} malformed ` +
          `${plural(report.malformed.count, "line")} skipped ` +
          `(at line ${report.malformed.lineNumbers.join(", ")}${
            report.malformed.count > report.malformed.lineNumbers.length ? ", ..." : ""
          })\n`,
      );
    }
    return EXIT_OK;
  });
}

/** Options for {@linkcode formatReport}. */
export interface FormatReportOptions {
  /** The log's name for the heading. */
  source: string;
  /** Draw a bar per row, and colours (on a terminal). Default false. */
  bars?: boolean;
}

/**
 * The plain-text report. `bars` adds a bar per row (on a terminal).
 *
 * @example One heading line, then the tables
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStats } from "@toolguard/toolguard/stats";
 * import { formatReport } from "./stats.ts";
 *
 * const stats = createStats();
 * stats.addLine('{"ts":"2026-11-02T10:00:00Z","event":"result","tool":"rg","kind":"exit","durationMs":12}');
 * const text = formatReport(stats.finish(), { source: "calls.jsonl" });
 * assert.equal(text.split("\n")[0], "toolguard stats: calls.jsonl");
 * assert.ok(text.includes("Tool runs: 1, failed 1 (100.0%)"));
 * assert.ok(!text.includes("\u2588")); // bars only with `bars: true`
 * ```
 *
 * @param report The statistics.
 * @param options The log's name for the heading, and whether to draw bars and colours.
 * @returns The text, ending with a newline.
 */
export function formatReport(report: StatsReport, options: FormatReportOptions): string {
  const { source, bars = false } = options;
  const out: string[] = [];
  const r = report.runs;
  const v = report.verdicts;
  const colour = (c: "red" | "green" | "yellow" | "dim" | "bold", s: string) => bars ? paint(c, s) : s;
  out.push(colour("bold", `toolguard stats: ${safeText(source)}`));
  const meta = [`${int(report.lines)} ${plural(report.lines, "line")}`];
  if (report.malformed.count) {
    const at = report.malformed.lineNumbers.join(", ");
    const more = report.malformed.count > report.malformed.lineNumbers.length;
    meta.push(`${int(report.malformed.count)} malformed (${more ? "first at line" : "line"} ${at})`);
  }
  if (report.since) {
    meta.push(
      `since ${report.since} (${int(report.skipped)} older ${plural(report.skipped, "line")} skipped)`,
    );
  }
  if (report.first && report.last) meta.push(`${report.first.slice(0, 10)} to ${report.last.slice(0, 10)}`);
  out.push(meta.join(" \u00b7 "), "");

  out.push(
    colour(
      "bold",
      `Tool runs: ${int(r.total)}, failed ${int(r.failed)} (${pct(r.failureRate)}), p50 ${ms(r.p50Ms)}, p95 ${
        ms(r.p95Ms)
      }`,
    ),
  );
  if (r.groups.length) {
    // Grouped by kind, each row is one kind: a failures column would repeat the key.
    const withKinds = report.by !== "kind";
    out.push(...table(
      [report.by, "runs", "failed", "fail%", "p50", "p95", ...(withKinds ? ["failures"] : [])],
      r.groups.map((g) => [
        g.key,
        int(g.runs),
        int(g.failed),
        pct(g.failureRate),
        ms(g.p50Ms),
        ms(g.p95Ms),
        ...(withKinds
          ? [
            OUTCOME_KINDS.filter((k) => k !== "empty" && k !== "results" && g.kinds[k] > 0)
              .map((k) => `${k} ${int(g.kinds[k])}`).join(", "),
          ]
          : []),
      ]),
      bars ? r.groups.map((g) => g.runs) : null,
    ));
  }

  out.push("", colour("bold", "Outcome kinds (share of all runs)"));
  out.push(...table(
    ["kind", "runs", "share"],
    OUTCOME_KINDS.map((k) => [k, int(r.kinds[k]), pct(r.total ? r.kinds[k] / r.total : 0)]),
    bars ? OUTCOME_KINDS.map((k) => r.kinds[k]) : null,
  ));
  out.push(
    "",
    colour(
      "bold",
      `Validated calls: ${int(v.total)}, rejected ${int(v.rejected)} (${
        pct(v.total ? v.rejected / v.total : 0)
      })`,
    ),
  );
  if (v.groups.length) {
    out.push(...table(
      [report.by, "calls", "rejected", "rejected%"],
      v.groups.map((g) => [g.key, int(g.calls), int(g.rejected), pct(g.rejectRate)]),
      bars ? v.groups.map((g) => g.rejected) : null,
    ));
  }
  const codes = Object.entries(v.codes).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (codes.length) {
    out.push("", colour("bold", "Rejected calls by finding code"));
    out.push(...table(
      ["code", "calls", "share"],
      codes.map(([c, n]) => [c, int(n), pct(v.rejected ? n / v.rejected : 0)]),
      bars ? codes.map(([, n]) => n) : null,
    ));
  }
  return out.join("\n") + "\n";
}

const BAR_WIDTH = 24;

/**
 * Left-aligned first column, right-aligned numbers, an optional bar scaled to the largest value. A
 * `failures` column is free text: it goes last, after the bar, so the bars line up.
 */
function table(head: string[], cells: string[][], barValues: number[] | null): string[] {
  const rows = cells.map((row) => row.map((cell) => safeText(cell))); // keys come from the log
  const free = head[head.length - 1] === "failures" ? head.length - 1 : -1;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const max = barValues ? Math.max(1, ...barValues) : 1;
  const line = (cells: string[], bar: string | null) => {
    const parts = cells.map((c, i) => i === free ? c : i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]));
    if (bar !== null) parts.splice(free < 0 ? parts.length : free, 0, bar.padEnd(BAR_WIDTH));
    return ("  " + parts.join("  ")).trimEnd();
  };
  return [
    line(head, barValues ? "" : null),
    ...rows.map((row, i) => line(row, barValues ? bar(barValues[i] / max) : null)),
  ];
}

/** A bar of up to BAR_WIDTH cells, in eighths of a cell. */
function bar(fraction: number): string {
  const eighths = Math.round(Math.max(0, Math.min(1, fraction)) * BAR_WIDTH * 8);
  return "\u2588".repeat(Math.floor(eighths / 8)) +
    (eighths % 8 ? "\u258f\u258e\u258d\u258c\u258b\u258a\u2589"[(eighths % 8) - 1] : "");
}

function int(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function ms(x: number | null): string {
  if (x === null) return "-";
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x < 10 ? x.toFixed(2) : x.toFixed(0)} ms`;
}
