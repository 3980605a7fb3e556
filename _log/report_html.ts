/**
 * The `toolguard stats --html` report: one self-contained HTML file with inline SVG charts (outcome kinds
 * per tool, outcome kinds per day) and the tables. No scripts, no fonts, no images, no network requests:
 * a Content-Security-Policy of `default-src 'none'` makes sure of it.
 *
 * @module
 */
import { isRecord, objectArg, optionsArg, plural, showHidden } from "../_common/values.ts";
import type { OutcomeKind } from "../types.ts";
import { type KindSeries, OUTCOME_KINDS, type StatsReport, zeroKinds } from "./stats.ts";

/** Options for {@linkcode renderHtmlReport}. */
export interface HtmlReportOptions {
  /** The page title. Default `"toolguard call log report"`. */
  title?: string;
  /** Where the data came from (e.g. the log's path), shown under the title. */
  source?: string;
}

/** The kinds in which the tool did not run successfully: all but `empty` and `results`. */
const FAILURE_KINDS: readonly OutcomeKind[] = OUTCOME_KINDS.filter((k) => k !== "empty" && k !== "results");

/** One colour per outcome kind: failures warm or grey, successes blue and green. */
export const KIND_COLOURS: Readonly<Record<OutcomeKind, string>> = {
  spawn: "#6b7280",
  timeout: "#f59e0b",
  exit: "#dc2626",
  protocol: "#7c3aed",
  refused: "#db2777",
  empty: "#60a5fa",
  results: "#16a34a",
};

const MAX_TOOL_ROWS = 30;
const MAX_DAY_COLUMNS = 120;

/**
 * Render a stats report as one self-contained HTML page.
 *
 * @example A page with its charts and no way to load anything
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStats, renderHtmlReport } from "@toolguard/toolguard/stats";
 *
 * const stats = createStats();
 * stats.addLine('{"ts":"2026-11-02T10:00:00Z","event":"result","tool":"rg","kind":"exit","durationMs":12}');
 * const html = renderHtmlReport(stats.finish(), { title: "Agent tools, week 45", source: "calls.jsonl" });
 * assert.ok(html.startsWith("<!doctype html>"));
 * assert.ok(html.includes("<title>Agent tools, week 45</title>"));
 * assert.ok(html.includes(`content="default-src 'none'; style-src 'unsafe-inline'"`));
 * assert.ok(html.includes('<svg id="chart-tools"'));
 * assert.ok(!html.includes("<script"));
 * ```
 *
 * @param report What `createStats().finish()` or `statsFromFile()` returned.
 * @param options Title and source line.
 * @returns The HTML text.
 */
export function renderHtmlReport(report: StatsReport, options?: HtmlReportOptions): string {
  objectArg(report, "renderHtmlReport", "report");
  if (!isRecord(report.runs) || !isRecord(report.verdicts) || !isRecord(report.malformed)) {
    throw new TypeError(
      "renderHtmlReport(): report must be what statsFromFile or createStats().finish() returns",
    );
  }
  options = optionsArg(options, "renderHtmlReport");
  const title = options.title ?? "toolguard call log report";
  const r = report.runs;
  const v = report.verdicts;
  const summary = [
    `${fmtInt(report.lines)} ${plural(report.lines, "line")}`,
    `${fmtInt(r.total)} tool runs`,
    `${pct(r.failureRate)} failed`,
    `${fmtInt(v.total)} validated calls, ${fmtInt(v.rejected)} rejected`,
    `${fmtInt(report.malformed.count)} malformed ${plural(report.malformed.count, "line")}` +
    (report.malformed.count ? ` (first at line ${report.malformed.lineNumbers.join(", ")})` : ""),
  ];
  if (report.first && report.last) {
    summary.push(`${report.first.slice(0, 10)} to ${report.last.slice(0, 10)}`);
  }
  if (report.since) summary.push(`since ${report.since}`);

  const kindRows = OUTCOME_KINDS.map((k) =>
    `<tr><td>${swatch(k)}${k}</td><td class="n">${fmtInt(r.kinds[k])}</td><td class="n">${
      pct(r.total ? r.kinds[k] / r.total : 0)
    }</td></tr>`
  ).join("");
  const groupRows = r.groups.map((g) =>
    `<tr><td>${esc(g.key)}</td><td class="n">${fmtInt(g.runs)}</td><td class="n">${pct(g.failureRate)}</td>${
      OUTCOME_KINDS.map((k) => `<td class="n">${g.kinds[k] ? fmtInt(g.kinds[k]) : ""}</td>`).join("")
    }<td class="n">${ms(g.p50Ms)}</td><td class="n">${ms(g.p95Ms)}</td></tr>`
  ).join("");
  const codeRows = Object.entries(v.codes).sort((a, b) => b[1] - a[1]).map(([code, n]) =>
    `<tr><td>${esc(code)}</td><td class="n">${fmtInt(n)}</td><td class="n">${
      pct(v.rejected ? n / v.rejected : 0)
    }</td></tr>`
  ).join("");
  const verdictRows = v.groups.map((g) =>
    `<tr><td>${esc(g.key)}</td><td class="n">${fmtInt(g.calls)}</td><td class="n">${
      fmtInt(g.rejected)
    }</td>` +
    `<td class="n">${pct(g.rejectRate)}</td></tr>`
  ).join("");

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#111827;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.meta{color:#4b5563;margin:0 0 4px}
table{border-collapse:collapse;margin:4px 0}td,th{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:left}
th{font-weight:600;background:#f9fafb}.n{text-align:right;font-variant-numeric:tabular-nums}
.sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}
.legend span{margin-right:14px;white-space:nowrap}
svg{display:block;max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif;fill:#374151}
.empty{color:#6b7280;font-style:italic}
</style>
</head>
<body>
<h1>${esc(title)}</h1>
${options.source ? `<p class="meta">${esc(options.source)}</p>` : ""}
<p class="meta">${summary.map(esc).join(" \u00b7 ")}</p>
<p class="legend">${OUTCOME_KINDS.map((k) => `<span>${swatch(k)}${k}</span>`).join("")}</p>
<h2>Outcome kinds per tool</h2>
${toolChart(report.byTool)}
<h2>Outcome kinds over time (per UTC day)</h2>
${dayChart(report.byDay, "counts")}
<h2>Failure rate over time (failed runs by kind, share of each day's runs)</h2>
${dayChart(report.byDay, "failure-rate")}
<h2>Tool runs by outcome kind</h2>
<table><tr><th>kind</th><th class="n">runs</th><th class="n">share</th></tr>${kindRows}</table>
<h2>Tool runs by ${esc(report.by)}</h2>
${
    r.groups.length
      ? `<table><tr><th>${esc(report.by)}</th><th class="n">runs</th><th class="n">failed</th>${
        OUTCOME_KINDS.map((k) => `<th class="n">${k}</th>`).join("")
      }<th class="n">p50</th><th class="n">p95</th></tr>${groupRows}</table>`
      : `<p class="empty">No tool runs in this log.</p>`
  }
<h2>Rejected calls by finding code</h2>
${
    codeRows
      ? `<table><tr><th>code</th><th class="n">calls</th><th class="n">share of rejected</th></tr>${codeRows}</table>`
      : `<p class="empty">No rejected calls in this log.</p>`
  }
<h2>Validated calls by ${esc(report.by)}</h2>
${
    verdictRows
      ? `<table><tr><th>${esc(report.by)}</th><th class="n">calls</th><th class="n">rejected</th>` +
        `<th class="n">rejected %</th></tr>${verdictRows}</table>`
      : `<p class="empty">No validated calls in this log.</p>`
  }
</body>
</html>
`;
}

/** Horizontal stacked bars: one row per tool, segments per kind. */
function toolChart(series: readonly KindSeries[]): string {
  if (series.length === 0) return `<p class="empty">No tool runs to chart.</p>`;
  let rows = series.slice(0, MAX_TOOL_ROWS);
  if (series.length > MAX_TOOL_ROWS) rows = [...rows, merge("(other tools)", series.slice(MAX_TOOL_ROWS))];
  const width = 860, label = 170, right = 70, rowH = 22, top = 6;
  const plot = width - label - right;
  const maxTotal = Math.max(1, ...rows.map((s) => total(s)));
  const height = top + rows.length * rowH + 6;
  const bars = rows.map((s, i) => {
    const y = top + i * rowH;
    let x = label;
    const segs = OUTCOME_KINDS.filter((k) => s.kinds[k] > 0).map((k) => {
      const w = (s.kinds[k] / maxTotal) * plot;
      const rect = `<rect class="seg seg-${k}" x="${f(x)}" y="${y + 3}" width="${
        f(Math.max(w, 0.5))
      }" height="${rowH - 6}" fill="${KIND_COLOURS[k]}"><title>${esc(s.key)}: ${
        s.kinds[k]
      } ${k}</title></rect>`;
      x += w;
      return rect;
    }).join("");
    return `<text x="${label - 8}" y="${y + rowH / 2 + 4}" text-anchor="end">${
      esc(clip(s.key, 26))
    }</text>${segs}` +
      `<text x="${f(x + 6)}" y="${y + rowH / 2 + 4}">${fmtInt(total(s))}</text>`;
  }).join("");
  return `<svg id="chart-tools" role="img" aria-label="Outcome kinds per tool" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}">${bars}</svg>`;
}

/**
 * Stacked columns: one column per day (or per group of days when there are many), segments per kind.
 * `"counts"` stacks all seven kinds as run counts; `"failure-rate"` stacks only the five failure kinds,
 * each as a share of that day's runs, so a rise in failures is visible even when runs are many.
 */
function dayChart(series: readonly KindSeries[], mode: "counts" | "failure-rate"): string {
  if (series.length === 0) return `<p class="empty">No tool runs to chart.</p>`;
  // Fill the gaps so the x axis is real time, then merge neighbours when there are too many days.
  const days = fillDays(series);
  const per = Math.ceil(days.length / MAX_DAY_COLUMNS);
  const cols: KindSeries[] = [];
  for (let i = 0; i < days.length; i += per) {
    const group = days.slice(i, i + per);
    cols.push(merge(per === 1 ? group[0].key : `${group[0].key}..${group[group.length - 1].key}`, group));
  }
  const rate = mode === "failure-rate";
  const kinds = rate ? FAILURE_KINDS : OUTCOME_KINDS;
  const value = (s: KindSeries, k: OutcomeKind) => rate ? (total(s) ? s.kinds[k] / total(s) : 0) : s.kinds[k];
  const stack = (s: KindSeries) => kinds.reduce((n, k) => n + value(s, k), 0);
  const width = 860, left = 56, right = 12, top = 10, plotH = rate ? 140 : 200, bottom = 40;
  const height = top + plotH + bottom;
  const plot = width - left - right;
  // The rate axis tops out at the next 5% step above the worst day.
  const maxY = rate
    ? Math.min(1, Math.max(0.05, Math.ceil(Math.max(...cols.map(stack)) * 20) / 20))
    : Math.max(1, ...cols.map(stack));
  const label = (t: number) => rate ? `${Math.round(t * maxY * 100)}%` : fmtInt(Math.round(t * maxY));
  const colW = plot / cols.length;
  const barW = Math.max(1, colW * 0.8);
  const y0 = top + plotH;
  const grid = [0, 0.5, 1].map((t) => {
    const y = y0 - t * plotH;
    return `<line x1="${left}" x2="${width - right}" y1="${f(y)}" y2="${f(y)}" stroke="#e5e7eb"/>` +
      `<text x="${left - 6}" y="${f(y + 4)}" text-anchor="end">${label(t)}</text>`;
  }).join("");
  const bars = cols.map((s, i) => {
    const x = left + i * colW + (colW - barW) / 2;
    let y = y0;
    return kinds.filter((k) => s.kinds[k] > 0).map((k) => {
      const h = (value(s, k) / maxY) * plotH;
      y -= h;
      const what = rate ? `${pct(value(s, k))} ${k} (${s.kinds[k]} of ${total(s)})` : `${s.kinds[k]} ${k}`;
      return `<rect class="seg seg-${k}" x="${f(x)}" y="${f(y)}" width="${f(barW)}" height="${
        f(Math.max(h, 0.5))
      }" fill="${KIND_COLOURS[k]}"><title>${esc(s.key)}: ${what}</title></rect>`;
    }).join("");
  }).join("");
  const tickEvery = Math.max(1, Math.ceil(cols.length / 8));
  const ticks = cols.map((s, i) =>
    (i % tickEvery === 0 && cols.length - 1 - i >= tickEvery / 2) || i === cols.length - 1
      ? `<text x="${f(left + i * colW + colW / 2)}" y="${y0 + 16}" text-anchor="middle">${
        esc(s.key.slice(0, 10))
      }</text>`
      : ""
  ).join("");
  const id = rate ? "chart-failure-rate" : "chart-days";
  const aria = rate ? "Failure rate per day by kind" : "Outcome kinds per day";
  return `<svg id="${id}" role="img" aria-label="${aria}" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}">${grid}${bars}${ticks}</svg>`;
}

function fillDays(series: readonly KindSeries[]): KindSeries[] {
  const byKey = new Map(series.map((s) => [s.key, s]));
  const start = Date.parse(series[0].key + "T00:00:00Z");
  const end = Date.parse(series[series.length - 1].key + "T00:00:00Z");
  // A log spanning decades (or a bogus timestamp) must not make the page huge: then keep only real days.
  if (!Number.isFinite(start) || !Number.isFinite(end) || (end - start) / 86_400_000 > 3660) {
    return [...series];
  }
  const out: KindSeries[] = [];
  for (let t = start; t <= end; t += 86_400_000) {
    const key = new Date(t).toISOString().slice(0, 10);
    out.push(byKey.get(key) ?? { key, kinds: zeroKinds() });
  }
  return out;
}

function merge(key: string, group: readonly KindSeries[]): KindSeries {
  const kinds = zeroKinds();
  for (const s of group) for (const k of OUTCOME_KINDS) kinds[k] += s.kinds[k];
  return { key, kinds };
}

function total(s: KindSeries): number {
  let n = 0;
  for (const k of OUTCOME_KINDS) n += s.kinds[k];
  return n;
}

function swatch(k: OutcomeKind): string {
  return `<span class="sw" style="background:${KIND_COLOURS[k]}"></span>`;
}

function clip(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + "\u2026" : s;
}

function f(n: number): string {
  return (Math.round(n * 100) / 100).toString();
}

function fmtInt(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function ms(x: number | null): string {
  if (x === null) return "";
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x < 10 ? x.toFixed(2) : x.toFixed(0)} ms`;
}

/**
 * Text from the log made safe in the page: markup characters as character references, and the characters
 * that would hide text or reorder it (a tool named with a bidi override reads as another tool: Trojan
 * Source) written out visibly as `\u{202E}`, as the command's text output writes them.
 */
function esc(s: string): string {
  return showHidden(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
