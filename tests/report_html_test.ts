// The HTML report rendered in headless Chromium (Debian `chromium`, driven by playwright-core): the charts
// are there and have a size, the page makes no network request, and a screenshot is taken.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { createStats, renderHtmlReport, type StatsReport } from "../stats.ts";
import { syntheticLines } from "../scripts/gen_log.ts";

const CHROMIUM = process.env.TOOLGUARD_CHROMIUM ?? "/usr/bin/chromium";
const skipReason = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium)`;
if (skipReason) console.log(`report_html_test: browser test skipped: ${skipReason}`);

function sampleReport(): StatsReport {
  const stats = createStats({ by: "tool" });
  for (const line of syntheticLines(3000, { seed: 7, days: 20, malformedEvery: 1000 })) stats.addLine(line);
  return stats.finish();
}

test("renderHtmlReport: the report is one self-contained file (no scripts, no external URLs, a strict CSP)", () => {
  const html = renderHtmlReport(sampleReport(), { source: "calls.jsonl" });
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
  assert.doesNotMatch(html, /<script|<link|<img|<iframe|@import|url\(/i);
  assert.doesNotMatch(html, /\b(src|href)=/i);
  assert.doesNotMatch(html, /https?:\/\//);
  assert.match(html, /<svg id="chart-tools"/);
  assert.match(html, /<svg id="chart-days"/);
  assert.match(html, /<svg id="chart-failure-rate"/);
});

test("renderHtmlReport: text from the log is escaped in the report", () => {
  const stats = createStats();
  stats.addLine(JSON.stringify({
    ts: "2026-11-02T00:00:00Z",
    event: "result",
    tool: '<img src=x onerror="alert(1)">',
    kind: "exit",
    ok: false,
    durationMs: 1,
  }));
  const html = renderHtmlReport(stats.finish(), { source: "<script>" });
  assert.doesNotMatch(html, /<img|<script/);
  assert.match(html, /&#60;img src=x/);
});

test("renderHtmlReport: a bidi control or invisible character from the log is shown, not obeyed", () => {
  const stats = createStats();
  // "\u202e" reverses what follows: "exe.gr" would read as "rg.exe" in the table.
  for (const tool of ["\u202eexe.gr", "a\u200bb\u{E0041}"]) {
    stats.addLine(
      JSON.stringify({ ts: "2026-11-02T00:00:00Z", event: "result", tool, kind: "exit", durationMs: 1 }),
    );
  }
  const html = renderHtmlReport(stats.finish(), { source: "log\u2066.jsonl" });
  assert.doesNotMatch(html, /[\u200b\u202e\u2066]|\u{E0041}/u);
  assert.match(html, /\\u\{202E\}exe\.gr/);
  assert.match(html, /a\\u\{200B\}b\\u\{E0041\}/);
});

test("renderHtmlReport: an empty log renders without charts and says so", () => {
  const html = renderHtmlReport(createStats().finish());
  assert.doesNotMatch(html, /<svg/);
  assert.match(html, /No tool runs to chart/);
});

test("renderHtmlReport: headless Chromium renders both charts with a size and makes no network request", {
  skip: skipReason,
  timeout: 120_000,
}, async () => {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  // made once the browser runs: a launch that fails leaves nothing behind
  const dir = mkdtempSync(join(tmpdir(), "toolguard-report-"));
  try {
    const report = sampleReport();
    const file = join(dir, "report.html");
    writeFileSync(file, renderHtmlReport(report, { source: "calls.jsonl" }));
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    // Anything that is not the report itself is recorded and refused.
    await page.route("**/*", (route) => {
      const url = route.request().url();
      return url.startsWith("file://") && url.endsWith("/report.html") ? route.continue() : route.abort();
    });
    await page.goto(`file://${file}`);

    const boxes = [];
    for (const id of ["chart-tools", "chart-days", "chart-failure-rate"]) {
      const chart = page.locator(`svg#${id}`);
      assert.equal(await chart.count(), 1, `chart ${id} missing`);
      const box = await chart.boundingBox();
      assert.ok(box && box.width > 300 && box.height > 100, `chart ${id} too small: ${JSON.stringify(box)}`);
      boxes.push({ ...box, rects: await chart.locator("rect").count() });
    }
    // One bar segment per (tool, kind) and per (day, kind) that has runs.
    const segments = (series: StatsReport["byTool"]) =>
      series.reduce((n, s) => n + Object.values(s.kinds).filter((c) => c > 0).length, 0);
    assert.equal(boxes[0].rects, segments(report.byTool));
    assert.equal(boxes[1].rects, segments(report.byDay));
    const failureSegments = report.byDay.reduce(
      (n, d) =>
        n +
        (["spawn", "timeout", "exit", "protocol", "refused"] as const).filter((k) => d.kinds[k] > 0).length,
      0,
    );
    assert.equal(boxes[2].rects, failureSegments, "the failure-rate chart draws failure kinds only");
    // Bars have a rendered size, not just an element.
    const bar = await page.locator("#chart-tools rect.seg-results").first().boundingBox();
    assert.ok(bar && bar.width > 10 && bar.height > 5, `bar not drawn: ${JSON.stringify(bar)}`);

    const shot = process.env.TOOLGUARD_SCREENSHOT ?? join(dir, "report.png");
    const png = await page.screenshot({ path: shot, fullPage: true });
    assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.ok(readFileSync(shot).length > 10_000, "screenshot is suspiciously small");

    assert.deepEqual(
      requests.filter((u) => !u.endsWith("/report.html")),
      [],
      "the page made network requests",
    );
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
