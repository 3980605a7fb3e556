// stats.ts and `toolguard stats`: counting, grouping, since, malformed lines, streaming line splitting,
// bounded quantiles, and the command's output and exit codes (run as a real child process).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createStats, parseSince, statsFromChunks, statsFromFile, type StatsReport } from "../stats.ts";
import { formatReport } from "../_cli/stats.ts";
import { jsonlLog } from "../log.ts";
import { syntheticLines } from "../scripts/gen_log.ts";
import type { ToolResult } from "../types.ts";
import { runtimeCommand } from "./_runtime.ts";

function result(tool: string, kind: string, durationMs: number, ts = "2026-11-02T10:00:00.000Z"): string {
  return JSON.stringify({
    ts,
    event: "result",
    tool,
    kind,
    ok: kind === "empty" || kind === "results",
    durationMs,
  });
}

function verdict(
  tool: string,
  blocked: boolean,
  findings: string[],
  ts = "2026-11-02T10:00:00.000Z",
): string {
  return JSON.stringify({
    ts,
    event: "verdict",
    tool,
    verdict: blocked ? "blocked" : "allowed",
    ok: !blocked,
    findings,
  });
}

function report(lines: string[], options: Parameters<typeof createStats>[0] = {}): StatsReport {
  const s = createStats(options);
  for (const l of lines) s.addLine(l);
  return s.finish();
}

const SAMPLE = [
  result("rg", "exit", 10),
  result("rg", "results", 20),
  result("rg", "empty", 30),
  result("rg", "timeout", 40),
  result("jq", "protocol", 5, "2026-11-03T09:00:00.000Z"),
  result("jq", "results", 7, "2026-11-03T09:00:00.000Z"),
  verdict("rg", true, ["unknown_tool"]),
  verdict("rg", true, ["argument_type_mismatch", "argument_type_mismatch", "missing_required_argument"]),
  verdict("jq", false, [], "2026-11-03T09:00:00.000Z"),
];

test("createStats: counts runs, failures by kind, rejected calls by code, and exact p50/p95 on small groups", () => {
  const r = report(SAMPLE);
  assert.equal(r.lines, 9);
  assert.equal(r.runs.total, 6);
  assert.equal(r.runs.failed, 3);
  assert.equal(r.runs.failureRate, 0.5);
  assert.deepEqual(r.runs.kinds, {
    spawn: 0,
    timeout: 1,
    exit: 1,
    protocol: 1,
    refused: 0,
    empty: 1,
    results: 2,
  });
  const rg = r.runs.groups.find((g) => g.key === "rg")!;
  assert.deepEqual([rg.runs, rg.failed, rg.failureRate, rg.p50Ms, rg.p95Ms], [4, 2, 0.5, 20, 40]);
  assert.deepEqual(r.runs.groups.map((g) => g.key), ["rg", "jq"], "most runs first");
  assert.equal(r.runs.p50Ms, 10, "nearest rank over 5,7,10,20,30,40");
  assert.equal(r.verdicts.total, 3);
  assert.equal(r.verdicts.rejected, 2);
  // A call counts once per distinct code.
  assert.deepEqual(r.verdicts.codes, {
    unknown_tool: 1,
    argument_type_mismatch: 1,
    missing_required_argument: 1,
  });
  assert.deepEqual(r.verdicts.groups.map((g) => [g.key, g.calls, g.rejected]), [["rg", 2, 2], ["jq", 1, 0]]);
  assert.equal(r.first, "2026-11-02T10:00:00.000Z");
  assert.equal(r.last, "2026-11-03T09:00:00.000Z");
  assert.deepEqual(r.byDay.map((d) => d.key), ["2026-11-02", "2026-11-03"]);
  assert.deepEqual(r.byTool.map((d) => [d.key, d.kinds.exit]), [["rg", 1], ["jq", 0]]);
});

test("createStats: by kind, day and model group both tables", () => {
  const byKind = report(SAMPLE, { by: "kind" });
  assert.deepEqual(byKind.runs.groups.find((g) => g.key === "results")?.runs, 2);
  assert.deepEqual(byKind.verdicts.groups.map((g) => [g.key, g.calls]), [["blocked", 2], ["allowed", 1]]);
  const byDay = report(SAMPLE, { by: "day" });
  assert.deepEqual(byDay.runs.groups.map((g) => [g.key, g.runs, g.failed]), [
    ["2026-11-02", 4, 2],
    ["2026-11-03", 2, 1],
  ]);
  const byModel = report([
    JSON.stringify({ ...JSON.parse(result("rg", "exit", 1)), model: "llama" }),
    JSON.stringify({ ...JSON.parse(result("rg", "results", 1)), model: "qwen" }),
    result("rg", "results", 1),
  ], { by: "model" });
  assert.deepEqual(byModel.runs.groups.map((g) => g.key).sort(), ["(none)", "llama", "qwen"]);
  assert.throws(() => createStats({ by: "week" as "day" }), /tool, kind, day or model/);
});

test("createStats: since drops older lines and counts them as skipped (parseSince reads the forms)", () => {
  const r = report(SAMPLE, { since: "2026-11-03" });
  assert.equal(r.runs.total, 2);
  assert.equal(r.verdicts.total, 1);
  assert.equal(r.skipped, 6);
  assert.equal(r.since, "2026-11-03T00:00:00.000Z");
  assert.equal(parseSince("2026-11-03T12:30:00").toISOString(), "2026-11-03T12:30:00.000Z");
  assert.equal(parseSince("2026-11-03T12:30:00+02:00").toISOString(), "2026-11-03T10:30:00.000Z");
  const now = new Date("2026-11-10T00:00:00Z");
  assert.equal(parseSince("7d", now).toISOString(), "2026-11-03T00:00:00.000Z");
  assert.equal(parseSince("36h", now).toISOString(), "2026-11-08T12:00:00.000Z");
  assert.throws(() => parseSince("last tuesday"), /24h, 7d/);
  assert.throws(() => parseSince("2026-13-45"), RangeError);
});

test("createStats: malformed lines are counted with their line numbers, never fatal; blank lines and CRLF are fine", () => {
  const r = report([
    result("rg", "results", 1),
    "not json",
    "",
    "[1,2]",
    JSON.stringify({ event: "result", tool: "rg", kind: "exit" }), // no ts
    JSON.stringify({ ts: "yesterday", event: "result", tool: "rg", kind: "exit" }),
    JSON.stringify({ ts: "2026-11-02T00:00:00Z", event: "hello", tool: "rg" }),
    JSON.stringify({ ts: "2026-11-02T00:00:00Z", event: "result", tool: "rg", kind: "broken" }),
    JSON.stringify({ ts: "2026-11-02T00:00:00Z", event: "result", kind: "exit" }), // no tool
    JSON.stringify({ ts: "2026-11-02T00:00:00Z", event: "verdict", tool: "rg", verdict: "maybe" }),
    result("rg", "exit", 1) + "\r",
    "   ",
  ]);
  assert.equal(r.malformed.count, 8);
  assert.deepEqual(
    r.malformed.lineNumbers,
    [2, 4, 5, 6, 7, 8, 9, 10],
    "numbered as in the file, blank lines too",
  );
  assert.equal(r.runs.total, 2);
  assert.equal(r.lines, 10);
});

test("createStats: finding codes and tools named like Object.prototype members are counted like any other", () => {
  const names = ["constructor", "__proto__", "toString", "hasOwnProperty"];
  const r = report([
    ...names.map((n) => verdict("rg", true, [n])),
    ...names.map((n) => result(n, "exit", 1)),
  ]);
  assert.equal(r.verdicts.rejected, 4);
  assert.deepEqual(Object.keys(r.verdicts.codes), names);
  assert.deepEqual(Object.values(r.verdicts.codes), [1, 1, 1, 1], "counts, not Object.prototype's members");
  assert.deepEqual(Object.values(r.verdicts.groups[0].codes), [1, 1, 1, 1]);
  assert.deepEqual(r.runs.groups.map((g) => [g.key, g.runs]).sort(), names.map((n) => [n, 1]).sort());
  assert.deepEqual(JSON.parse(JSON.stringify(r)).verdicts.codes.__proto__, 1, "in the JSON output too");
});

test("createStats: tool names, models and codes are cut to 256 units, so a log of huge names cannot fill memory", () => {
  const huge = (c: string) => c.repeat(100_000);
  const lines = ["a", "b", "c"].flatMap((c) => [
    JSON.stringify({
      ts: "2026-11-02T10:00:00Z",
      event: "result",
      tool: huge(c),
      kind: "exit",
      model: huge(c),
    }),
    verdict(huge(c), true, [huge(c)]),
  ]);
  for (const by of ["tool", "model"] as const) {
    const r = report(lines, { by });
    const keys = [
      ...r.runs.groups.map((g) => g.key),
      ...r.verdicts.groups.map((g) => g.key),
      ...r.byTool.map((g) => g.key),
      ...Object.keys(r.verdicts.codes),
    ];
    assert.ok(keys.every((k) => k.length <= 257), `by ${by}: ${keys.map((k) => k.length)}`);
    assert.deepEqual(r.runs.groups.map((g) => g.key), ["a", "b", "c"].map((c) => c.repeat(256) + "…"));
    assert.equal(r.runs.total, 3);
    assert.equal(r.verdicts.rejected, 3);
  }
});

test("statsFromChunks: a byte order mark starting a line is ignored wherever the chunks split (cat of two saved logs)", async () => {
  const line = result("rg", "exit", 1);
  const bytes = new TextEncoder().encode(`\uFEFF${line}\n\uFEFF${line}\r\n`);
  for (let at = 0; at <= bytes.length; at++) {
    const r = await statsFromChunks([bytes.subarray(0, at), bytes.subarray(at)]);
    assert.equal(r.runs.total, 2, `split at byte ${at}`);
    assert.equal(r.malformed.count, 0, `split at byte ${at}`);
  }
  assert.equal(report([`\uFEFF${line}`]).runs.total, 1, "addLine too");
});

test("statsFromChunks: any chunking gives the same report, split characters stay whole, overlong lines are skipped", async () => {
  const lines = [
    result("grép🙂", "results", 3),
    result("rg", "exit", 4),
    "x".repeat(5000), // overlong for a 1000-byte limit
    result("rg", "empty", 5), // last line without a newline
  ];
  const bytes = new TextEncoder().encode(lines.join("\n"));
  const whole = await statsFromChunks([bytes], { maxLineBytes: 1000 });
  const oneByOne = await statsFromChunks(
    (function* () {
      for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
    })(),
    { maxLineBytes: 1000 },
  );
  assert.deepEqual(oneByOne, whole);
  assert.equal(whole.runs.total, 3);
  assert.deepEqual(whole.byTool.map((t) => t.key).sort(), ["grép🙂", "rg"]);
  assert.equal(whole.malformed.count, 1);
  assert.deepEqual(whole.malformed.lineNumbers, [3]);
  // A line over the limit inside one chunk is also skipped.
  const big = await statsFromChunks([new TextEncoder().encode(`${"y".repeat(3000)}\n${lines[1]}\n`)], {
    maxLineBytes: 1000,
  });
  assert.deepEqual([big.malformed.count, big.runs.total], [1, 1]);
});

test("createStats: durations beyond the exact window go into a bounded histogram within 2%", () => {
  const s = createStats();
  // 20 000 durations 1..20000 ms in a scrambled order.
  for (let i = 0; i < 20_000; i++) s.addLine(result("rg", "results", ((i * 7919) % 20_000) + 1));
  const r = s.finish();
  const g = r.runs.groups[0];
  assert.ok(Math.abs(g.p50Ms! - 10_000) / 10_000 < 0.02, `p50 ${g.p50Ms}`);
  assert.ok(Math.abs(g.p95Ms! - 19_000) / 19_000 < 0.02, `p95 ${g.p95Ms}`);
  // Tiny and zero durations are fine too.
  const z = report(Array.from({ length: 600 }, (_, i) => result("rg", "results", i % 2 ? 0 : 0.5)));
  assert.equal(z.runs.p50Ms, 0);
  assert.ok(Math.abs(z.runs.p95Ms! - 0.5) < 0.01);
});

test("createStats: group count is capped; later keys go to (other), totals stay exact", () => {
  const lines = Array.from({ length: 500 }, (_, i) => result(`tool${i}`, "results", 1));
  const r = report(lines, { maxGroups: 50 });
  assert.equal(r.runs.groups.length, 50);
  assert.ok(r.runs.groups.some((g) => g.key === "(other)"));
  assert.equal(r.runs.groups.reduce((n, g) => n + g.runs, 0), 500);
  assert.equal(r.byTool.length, 50);
});

test("statsFromFile: what jsonlLog writes, stats reads back exactly (file round trip)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-stats-"));
  try {
    const file = join(dir, "calls.jsonl");
    const log = jsonlLog(file);
    try {
      const base = { exitCode: 0, signal: null, detail: "", warnings: [], truncated: false, stderr: "" };
      const runs: ToolResult[] = [
        { ...base, ok: true, kind: "empty", items: [], durationMs: 3 },
        { ...base, ok: true, kind: "results", items: [1, 2], durationMs: 5 },
        { ...base, ok: false, kind: "exit", items: null, exitCode: 2, durationMs: 7 },
        { ...base, ok: false, kind: "spawn", items: null, exitCode: null, durationMs: 1 },
      ];
      for (const r of runs) log.onResult(r, { command: "rg", args: [] });
      log.onVerdict({
        allowed: false,
        blocked: true,
        rejectedIndices: [0],
        calls: [{
          index: 0,
          name: "rg",
          allowed: false,
          findings: [{ code: "unknown_tool", path: "", message: "m" }],
        }],
      });
      await log.close();
      const r = await statsFromFile(file);
      assert.equal(r.malformed.count, 0);
      assert.equal(r.runs.total, 4);
      assert.deepEqual(r.runs.kinds, {
        spawn: 1,
        timeout: 0,
        exit: 1,
        protocol: 0,
        refused: 0,
        empty: 1,
        results: 1,
      });
      assert.equal(r.runs.p50Ms, 3);
      assert.deepEqual(r.verdicts.codes, { unknown_tool: 1 });
    } finally {
      await log.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("statsFromFile: a line whose writer died mid-way does not take the next writer's line with it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-stats-torn-"));
  try {
    const file = join(dir, "calls.jsonl");
    // The fragment holds an item with a `ts` of its own: the line glued to it is found all the same.
    writeFileSync(
      file,
      result("rg", "exit", 1) + "\n" +
        '{"ts":"2026-11-02T10:00:00Z","event":"result","tool":"rg","kind":"results","items":[{"ts":"n","v":1},{"t',
    );
    const log = jsonlLog(file);
    try {
      const failed: ToolResult = {
        ok: false,
        kind: "timeout",
        items: null,
        exitCode: null,
        signal: "SIGKILL",
        detail: "timed out",
        durationMs: 5,
        warnings: [],
        truncated: false,
        stderr: "",
      };
      log.onResult(failed, { command: "jq", args: [] });
      log.onResult(failed, { command: "jq", args: [] });
      await log.close();
      assert.equal(log.written, 2);
      const r = await statsFromFile(file);
      assert.equal(r.runs.total, 3, "the whole line before, and both lines written after the fragment");
      assert.deepEqual(r.runs.groups.map((g) => [g.key, g.runs]), [["jq", 2], ["rg", 1]]);
      assert.deepEqual(r.malformed, { count: 1, lineNumbers: [2] }, "the fragment");
      assert.equal(r.lines, 3);
    } finally {
      await log.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("statsFromChunks: text chunks are refused with what to pass instead", async () => {
  const text = result("rg", "exit", 1) + "\n";
  await assert.rejects(
    statsFromChunks([text] as unknown as Uint8Array[]),
    /each chunk must be bytes.*got a string/,
  );
  const decoded = new Blob([text]).stream().pipeThrough(new TextDecoderStream());
  await assert.rejects(
    statsFromChunks(decoded as unknown as AsyncIterable<Uint8Array>),
    /pass the log's bytes without decoding them/,
  );
});

test("statsFromChunks: maxLineBytes must be a positive integer or Infinity (NaN would let one endless line fill memory)", async () => {
  for (const maxLineBytes of [NaN, -Infinity, 0, -1, 1.5]) {
    await assert.rejects(statsFromChunks([], { maxLineBytes }), /maxLineBytes must be a positive integer/);
  }
  const line = new TextEncoder().encode(result("rg", "exit", 1));
  const r = await statsFromChunks([line], { maxLineBytes: 10 });
  assert.equal(r.malformed.count, 1, "a line past the limit is skipped");
  const unbounded = await statsFromChunks([line], { maxLineBytes: Infinity });
  assert.equal(unbounded.malformed.count, 0, "Infinity: no bound, as before the check");
});

test("formatReport: the text report has a bar per row only when asked (terminal)", () => {
  const r = report(SAMPLE);
  const plain = formatReport(r, { source: "calls.jsonl", bars: false });
  const tty = formatReport(r, { source: "calls.jsonl", bars: true });
  assert.ok(!plain.includes("█") && !plain.includes("\u001b["), "no bars or colour codes");
  assert.match(tty, /█/);
  // The busiest row gets the full bar.
  const rgLine = tty.split("\n").find((l) => l.trimStart().startsWith("rg ") && l.includes("%"))!;
  assert.ok(rgLine.includes("█".repeat(24)), rgLine);
  for (const needle of ["Tool runs: 6, failed 3 (50.0%)", "unknown_tool", "Rejected calls by finding code"]) {
    assert.ok(plain.includes(needle), `missing ${needle}`);
  }
});

// ---------------------------------------------------------------------------------------------------------
// The command, as a child process
// ---------------------------------------------------------------------------------------------------------

const CLI = fileURLToPath(new URL("../fixtures/stats_cli.ts", import.meta.url));

function cli(
  args: string[],
  stdin?: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { command, args: argv } = runtimeCommand(CLI, args);
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => stdout += d);
    child.stderr.on("data", (d) => stderr += d);
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}

test(
  "toolguard stats: table, JSON, HTML, stdin, and exit 2 for usage errors",
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-stats-cli-"));
    try {
      const file = join(dir, "calls.jsonl");
      const lines = [...syntheticLines(2000, { seed: 3, days: 10, malformedEvery: 500 })];
      writeFileSync(file, lines.join("\n") + "\n");
      const expected = report(lines);

      const table = await cli([file]);
      assert.equal(table.code, 0, table.stderr);
      assert.match(
        table.stdout,
        new RegExp(`Tool runs: ${expected.runs.total.toLocaleString("en-US")}, failed`),
      );
      assert.match(table.stdout, /Rejected calls by finding code/);
      assert.doesNotMatch(table.stdout, /█/, "no bars when stdout is not a terminal");
      assert.match(table.stderr, /4 malformed lines skipped \(at line 500, 1000, 1500, 2000\)/);

      const json = await cli([file, "--json", "--by", "day", "--since", "2026-11-05"]);
      assert.equal(json.code, 0, json.stderr);
      const parsed = JSON.parse(json.stdout) as StatsReport;
      assert.deepEqual(parsed, report(lines, { by: "day", since: "2026-11-05" }));
      assert.ok(parsed.runs.groups.every((g) => g.key >= "2026-11-05"));

      const pretty = await cli([file, "--json", "--pretty"]);
      assert.match(pretty.stdout, /^\{\n {2}"by": "tool"/);

      const html = join(dir, "report.html");
      const withHtml = await cli([file, "--html", html]);
      assert.equal(withHtml.code, 0, withHtml.stderr);
      assert.match(readFileSync(html, "utf8"), /<svg id="chart-tools"/);

      const fromStdin = await cli(["-", "--json"], lines.slice(0, 100).join("\n"));
      assert.equal(fromStdin.code, 0, fromStdin.stderr);
      assert.equal((JSON.parse(fromStdin.stdout) as StatsReport).lines, 100);

      for (
        const [args, pattern] of [
          [[file, "--by", "week"], /--by must be tool, kind, day or model/],
          [[file, "--since", "soon"], /cannot read "soon"/],
          [[join(dir, "missing.jsonl")], /cannot read .*missing\.jsonl: no such file/],
          [[], /missing the log file/],
          [[file, "--frobnicate"], /frobnicate/],
        ] as const
      ) {
        const r = await cli([...args]);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, pattern);
      }
      const help = await cli(["--help"]);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /--by tool\|kind\|day\|model/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test("toolguard stats: timestamps are ISO 8601 only, one without a zone is UTC in any time zone", {
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-stats-ts-"));
  try {
    const file = join(dir, "calls.jsonl");
    const line = (ts: string) => JSON.stringify({ ts, event: "result", tool: "rg", kind: "exit" });
    writeFileSync(
      file,
      [
        line("2026-11-02T23:30:00"), // no zone: UTC, as jsonlLog writes and as --since reads
        line("2026-11-02T12:00:00Z"),
        line("(\x1b]0;owned\x07) Nov 2 2026"), // Date.parse takes it; a terminal would run the escape
        line("1"), // Date.parse: 2001-01-01 in the reader's zone
        line("2026-02-30T10:00:00Z"), // no such day (Date.parse rolls it over to March on Bun)
      ].join("\n") + "\n",
    );
    for (const TZ of ["UTC", "America/New_York", "Asia/Tokyo"]) {
      const json = await cli([file, "--json", "--by", "day"], undefined, { TZ });
      assert.equal(json.code, 0, json.stderr);
      const r = JSON.parse(json.stdout) as StatsReport;
      assert.deepEqual(r.runs.groups.map((g) => [g.key, g.runs]), [["2026-11-02", 2]], `TZ=${TZ}`);
      assert.deepEqual(r.malformed, { count: 3, lineNumbers: [3, 4, 5] }, `TZ=${TZ}`);
      assert.equal(r.first, "2026-11-02T12:00:00Z");
      assert.equal(r.last, "2026-11-02T23:30:00");
      const since = await cli([file, "--json", "--since", "2026-11-02T20:00"], undefined, { TZ });
      assert.equal((JSON.parse(since.stdout) as StatsReport).runs.total, 1, `TZ=${TZ}: --since is UTC too`);
    }
    const table = await cli([file]);
    assert.equal(table.code, 0, table.stderr);
    assert.ok(!table.stdout.includes("\x1b"), "no escape from the log reaches the terminal");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
