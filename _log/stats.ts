/**
 * The failure report over JSONL logs: streaming aggregation by tool, kind, day or model.
 *
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { FindingCode, OutcomeKind } from "../types.ts";

export type { FindingCode, OutcomeKind };
import { renderHtmlReport } from "./report_html.ts";

export { renderHtmlReport };

/** The seven outcome kinds, in report order (failures first). */
export const OUTCOME_KINDS: readonly OutcomeKind[] = [
  "spawn",
  "timeout",
  "exit",
  "protocol",
  "refused",
  "empty",
  "results",
];

/** The seven finding codes, in report order. */
export const FINDING_CODES: readonly FindingCode[] = [
  "unknown_tool",
  "malformed_arguments",
  "missing_required_argument",
  "unexpected_argument",
  "argument_type_mismatch",
  "argument_constraint",
  "argument_injection",
];

/** How rows are grouped: by tool name, outcome kind (verdict for validated calls), UTC day or model label. */
export type GroupBy = "tool" | "kind" | "day" | "model";

/** Options for {@linkcode createStats} and {@linkcode statsFromFile}. */
export interface StatsOptions {
  /** How rows are grouped. Default `"tool"`. */
  by?: GroupBy;
  /** Only count lines at or after this time. A `Date`, or text accepted by {@linkcode parseSince}. */
  since?: Date | string;
  /** Most groups kept per table; later keys are counted under `"(other)"`. Default 1000. */
  maxGroups?: number;
}

/** One row of the tool-run table. */
export interface RunGroup {
  /** The group key (tool name, kind, `YYYY-MM-DD` or model). */
  key: string;
  /** Tool runs in this group. */
  runs: number;
  /** Runs that failed (`ok` false). */
  failed: number;
  /** `failed / runs`. */
  failureRate: number;
  /** Runs per outcome kind (all seven keys present). */
  kinds: Record<OutcomeKind, number>;
  /** Median duration in milliseconds (null with no durations). */
  p50Ms: number | null;
  /** 95th percentile duration in milliseconds (null with no durations). */
  p95Ms: number | null;
}

/** One row of the validated-call table. */
export interface VerdictGroup {
  /** The group key (tool name, `allowed`/`blocked`, `YYYY-MM-DD` or model). */
  key: string;
  /** Validated calls in this group. */
  calls: number;
  /** Calls that were blocked. */
  rejected: number;
  /** `rejected / calls`. */
  rejectRate: number;
  /** Blocked calls per finding code (a call counts once per distinct code). */
  codes: Record<string, number>;
}

/** Outcome kinds for one tool or one day: what the HTML charts draw. */
export interface KindSeries {
  /** Tool name or `YYYY-MM-DD`. */
  key: string;
  /** Runs per outcome kind (all seven keys present). */
  kinds: Record<OutcomeKind, number>;
}

/** The finished statistics: plain data, ready for `JSON.stringify`. */
export interface StatsReport {
  /** The grouping used for `runs.groups` and `verdicts.groups`. */
  by: GroupBy;
  /** The `since` bound as ISO text, or null. */
  since: string | null;
  /** Non-empty lines read. */
  lines: number;
  /** Lines skipped because they were older than `since`. */
  skipped: number;
  /** Lines that were not a log event (bad JSON, not an object, unknown event, missing fields, too long). */
  malformed: { count: number; lineNumbers: number[] };
  /** Earliest and latest timestamp counted, or null. */
  first: string | null;
  /** Latest timestamp counted, or null. */
  last: string | null;
  /** Tool runs (`event: "result"` lines). */
  runs: {
    /** All tool runs counted. */
    total: number;
    /** Runs that failed. */
    failed: number;
    /** `failed / total` (0 when there are none). */
    failureRate: number;
    /** Runs per outcome kind over everything. */
    kinds: Record<OutcomeKind, number>;
    /** Median duration over everything, in milliseconds. */
    p50Ms: number | null;
    /** 95th percentile duration over everything, in milliseconds. */
    p95Ms: number | null;
    /** One row per group, most runs first. */
    groups: RunGroup[];
  };
  /** Validated calls (`event: "verdict"` lines). */
  verdicts: {
    /** All validated calls counted. */
    total: number;
    /** Calls that were blocked. */
    rejected: number;
    /** Blocked calls per finding code, over everything. */
    codes: Record<string, number>;
    /** One row per group, most calls first. */
    groups: VerdictGroup[];
  };
  /** Outcome kinds per tool (for the charts), most runs first. */
  byTool: KindSeries[];
  /** Outcome kinds per UTC day (for the charts), in date order. */
  byDay: KindSeries[];
}

/** A streaming aggregator: feed it lines, then call `finish()`. */
export interface StatsAggregator {
  /** Count one line of the log (without its newline). Never throws. */
  addLine(line: string): void;
  /** The statistics so far. The aggregator can keep taking lines afterwards. */
  finish(): StatsReport;
}

const OTHER = "(other)";
const MAX_MALFORMED_REPORTED = 10;

/**
 * Parse a `--since` bound: an ISO date (`2026-11-01`, UTC midnight), an ISO date-time, or a relative age
 * (`90m`, `24h`, `7d`, `2w`) counted back from `now`.
 *
 * @param text The bound as typed.
 * @param now The reference time for relative ages. Default: the current time.
 * @returns The bound as a `Date`.
 * @throws {RangeError} When the text is none of these forms.
 */
export function parseSince(text: string, now: Date = new Date()): Date {
  const rel = /^(\d+)([mhdw])$/.exec(text.trim());
  if (rel) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as "m" | "h" | "d" | "w"];
    return new Date(now.getTime() - Number(rel[1]) * unit);
  }
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())) {
    const t = text.trim();
    // A bare date or a date-time without a zone is read as UTC, like the log's own timestamps.
    const iso = /^\d{4}-\d{2}-\d{2}$/.test(t)
      ? `${t}T00:00:00Z`
      : /(Z|[+-]\d{2}:?\d{2})$/.test(t)
      ? t
      : `${t}Z`;
    const ms = Date.parse(iso.replace(" ", "T"));
    if (Number.isFinite(ms)) return new Date(ms);
  }
  throw new RangeError(
    `since: cannot read ${JSON.stringify(text)} as a time; use a date (2026-11-01), ` +
      "a date-time (2026-11-01T12:00:00Z) or an age (24h, 7d, 2w)",
  );
}

/**
 * Create a streaming aggregator over log lines.
 *
 * @param options Grouping, `since` bound and group limit.
 * @returns An aggregator: `addLine(line)` for each line, `finish()` for the report.
 */
export function createStats(options: StatsOptions = {}): StatsAggregator {
  const by = options.by ?? "tool";
  if (!["tool", "kind", "day", "model"].includes(by)) {
    throw new RangeError(`stats: cannot group by ${JSON.stringify(by)}; use tool, kind, day or model`);
  }
  const since = options.since === undefined
    ? null
    : options.since instanceof Date
    ? options.since
    : parseSince(options.since);
  if (since !== null && !Number.isFinite(since.getTime())) {
    throw new RangeError("stats: since is an invalid Date");
  }
  const sinceMs = since?.getTime() ?? -Infinity;
  const maxGroups = options.maxGroups ?? 1000;
  if (!Number.isInteger(maxGroups) || maxGroups < 2) {
    throw new RangeError(`stats: maxGroups must be an integer of at least 2, got ${maxGroups}`);
  }

  let lines = 0;
  let skipped = 0;
  let malformed = 0;
  const malformedAt: number[] = [];
  let first: string | null = null;
  let firstMs = Infinity;
  let last: string | null = null;
  let lastMs = -Infinity;

  const allRuns = newRunAcc();
  const runGroups = new Map<string, RunAcc>();
  const verdictTotals = newVerdictAcc();
  const verdictGroups = new Map<string, VerdictAcc>();
  const toolKinds = new Map<string, Record<OutcomeKind, number>>();
  const dayKinds = new Map<string, Record<OutcomeKind, number>>();

  const slot = <T>(map: Map<string, T>, key: string, make: () => T): T => {
    let v = map.get(key);
    if (v === undefined) {
      // One slot stays free for "(other)", so a table never has more than maxGroups rows.
      if (map.size - (map.has(OTHER) ? 1 : 0) >= maxGroups - 1) key = OTHER;
      v = map.get(key);
      if (v === undefined) {
        v = make();
        map.set(key, v);
      }
    }
    return v;
  };

  const bad = () => {
    malformed++;
    if (malformedAt.length < MAX_MALFORMED_REPORTED) malformedAt.push(lines);
  };

  let dayStart = -Infinity;
  let dayKey = "";

  const addLine = (raw: string): void => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    lines++;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      return bad();
    }
    if (typeof rec !== "object" || rec === null || Array.isArray(rec)) return bad();
    const r = rec as Record<string, unknown>;
    const ts = r.ts;
    if (typeof ts !== "string") return bad();
    const ms = Date.parse(ts);
    if (!Number.isFinite(ms)) return bad();
    const tool = typeof r.tool === "string" ? r.tool : null;
    if (tool === null) return bad();
    const model = typeof r.model === "string" ? r.model : "(none)";
    // Logs are in time order, so the day of the previous line nearly always fits: skip the Date work.
    if (ms < dayStart || ms >= dayStart + 86_400_000) {
      dayStart = ms - (((ms % 86_400_000) + 86_400_000) % 86_400_000);
      dayKey = new Date(dayStart).toISOString().slice(0, 10);
    }
    const day = dayKey;
    if (r.event === "result") {
      const kind = r.kind as OutcomeKind;
      if (typeof kind !== "string" || !OUTCOME_KINDS.includes(kind)) return bad();
      if (ms < sinceMs) return void skipped++;
      const failed = kind !== "empty" && kind !== "results";
      const d = typeof r.durationMs === "number" && Number.isFinite(r.durationMs) && r.durationMs >= 0
        ? r.durationMs
        : null;
      const key = by === "tool" ? tool : by === "kind" ? kind : by === "day" ? day : model;
      addRun(allRuns, kind, failed, d);
      addRun(slot(runGroups, key, newRunAcc), kind, failed, d);
      slot(toolKinds, tool, zeroKinds)[kind]++;
      slot(dayKinds, day, zeroKinds)[kind]++;
    } else if (r.event === "verdict") {
      const verdict = r.verdict;
      if (verdict !== "allowed" && verdict !== "blocked") return bad();
      if (ms < sinceMs) return void skipped++;
      const codes = Array.isArray(r.findings)
        ? [...new Set(r.findings.filter((c) => typeof c === "string"))]
        : [];
      const key = by === "tool" ? tool : by === "kind" ? verdict : by === "day" ? day : model;
      addVerdict(verdictTotals, verdict === "blocked", codes);
      addVerdict(slot(verdictGroups, key, newVerdictAcc), verdict === "blocked", codes);
    } else {
      return bad();
    }
    if (ms < firstMs) {
      firstMs = ms;
      first = ts;
    }
    if (ms > lastMs) {
      lastMs = ms;
      last = ts;
    }
  };

  const finish = (): StatsReport => {
    const runRows = [...runGroups].map(([key, acc]) => runRow(key, acc));
    runRows.sort(by === "day" ? byKey : (a, b) => b.runs - a.runs || a.key.localeCompare(b.key));
    const verdictRows = [...verdictGroups].map(([key, acc]): VerdictGroup => ({
      key,
      calls: acc.calls,
      rejected: acc.rejected,
      rejectRate: acc.calls ? acc.rejected / acc.calls : 0,
      codes: { ...acc.codes },
    }));
    verdictRows.sort(by === "day" ? byKey : (a, b) => b.calls - a.calls || a.key.localeCompare(b.key));
    const total = runRow("", allRuns);
    return {
      by,
      since: since?.toISOString() ?? null,
      lines,
      skipped,
      malformed: { count: malformed, lineNumbers: [...malformedAt] },
      first,
      last,
      runs: {
        total: total.runs,
        failed: total.failed,
        failureRate: total.failureRate,
        kinds: total.kinds,
        p50Ms: total.p50Ms,
        p95Ms: total.p95Ms,
        groups: runRows,
      },
      verdicts: {
        total: verdictTotals.calls,
        rejected: verdictTotals.rejected,
        codes: { ...verdictTotals.codes },
        groups: verdictRows,
      },
      byTool: [...toolKinds].map(([key, kinds]) => ({ key, kinds: { ...kinds } }))
        .sort((a, b) => sum(b.kinds) - sum(a.kinds) || a.key.localeCompare(b.key)),
      byDay: [...dayKinds].map(([key, kinds]) => ({ key, kinds: { ...kinds } })).sort(byKey),
    };
  };

  return { addLine, finish };
}

/**
 * Split a byte stream into lines and feed them to an aggregator, in bounded memory: a line longer than
 * `maxLineBytes` is counted as malformed and skipped without being kept.
 *
 * @param chunks The bytes of the log, in any chunking.
 * @param options Grouping, `since`, group limit and the longest line kept (default 1 MiB).
 * @returns The report.
 */
export async function statsFromChunks(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: StatsOptions & { maxLineBytes?: number } = {},
): Promise<StatsReport> {
  const stats = createStats(options);
  const feed = lineSplitter(stats, options.maxLineBytes ?? 1024 * 1024);
  for await (const chunk of chunks) feed.push(chunk);
  feed.end();
  return stats.finish();
}

/**
 * Read a log file in 64 KiB chunks and report on it. Memory stays bounded whatever the file's size
 * (small reads keep the decoded text per batch small, which keeps the garbage collector's heap small too).
 *
 * @param path The log file.
 * @param options Grouping, `since`, group limit and the longest line kept (default 1 MiB).
 * @returns The report.
 * @throws {Error} When the file cannot be opened or read.
 */
export async function statsFromFile(
  path: string,
  options: StatsOptions & { maxLineBytes?: number } = {},
): Promise<StatsReport> {
  return await statsFromChunks(readChunks(path), options);
}

function* readChunks(path: string): Generator<Uint8Array> {
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(64 * 1024);
    while (true) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Line splitting in bounded memory. Complete lines in a chunk are decoded with one `decode` call and split
 * as text (a newline byte never occurs inside a UTF-8 sequence, so this never splits a character); only
 * the unfinished tail is carried to the next chunk, and never more than `maxLineBytes` of it.
 */
function lineSplitter(
  stats: StatsAggregator,
  maxLineBytes: number,
): { push(c: Uint8Array): void; end(): void } {
  const decoder = new TextDecoder();
  let carry: Uint8Array[] = [];
  let carryBytes = 0;
  let overlong = false; // inside a line that is already too long: drop bytes until its newline
  const overlongLine = "\u0000overlong line"; // never valid JSON: counted as malformed
  const emitText = (line: string) => {
    // Characters are at most 3 bytes per UTF-16 unit: measure bytes only when the line might be too long.
    if (line.length * 3 > maxLineBytes && utf8Length(line) > maxLineBytes) stats.addLine(overlongLine);
    else stats.addLine(line);
  };
  const keep = (bytes: Uint8Array) => {
    if (overlong) return;
    if (carryBytes + bytes.length > maxLineBytes) {
      overlong = true;
      carry = [];
      carryBytes = 0;
      return;
    }
    carry.push(bytes.slice()); // copy: the reader reuses its buffer
    carryBytes += bytes.length;
  };
  const finishCarried = (rest: Uint8Array) => {
    if (overlong || carryBytes + rest.length > maxLineBytes) stats.addLine(overlongLine);
    else stats.addLine(decoder.decode(concat([...carry, rest], carryBytes + rest.length)));
    carry = [];
    carryBytes = 0;
    overlong = false;
  };
  return {
    push(chunk) {
      const last = chunk.lastIndexOf(10);
      if (last < 0) return keep(chunk);
      let start = 0;
      if (overlong || carryBytes > 0) {
        const nl = chunk.indexOf(10);
        finishCarried(chunk.subarray(0, nl));
        start = nl + 1;
      }
      if (start <= last) {
        const text = decoder.decode(chunk.subarray(start, last));
        let from = 0;
        while (true) {
          const nl = text.indexOf("\n", from);
          if (nl < 0) {
            emitText(text.slice(from));
            break;
          }
          emitText(text.slice(from, nl));
          from = nl + 1;
        }
      }
      if (last + 1 < chunk.length) keep(chunk.subarray(last + 1));
    },
    end() {
      if (overlong || carryBytes > 0) finishCarried(new Uint8Array(0));
    },
  };
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Accumulators
// ---------------------------------------------------------------------------------------------------------

interface RunAcc {
  runs: number;
  failed: number;
  kinds: Record<OutcomeKind, number>;
  durations: Quantiles;
}

interface VerdictAcc {
  calls: number;
  rejected: number;
  codes: Record<string, number>;
}

function zeroKinds(): Record<OutcomeKind, number> {
  return { spawn: 0, timeout: 0, exit: 0, protocol: 0, refused: 0, empty: 0, results: 0 };
}

function newRunAcc(): RunAcc {
  return { runs: 0, failed: 0, kinds: zeroKinds(), durations: quantiles() };
}

function newVerdictAcc(): VerdictAcc {
  return { calls: 0, rejected: 0, codes: {} };
}

function addRun(acc: RunAcc, kind: OutcomeKind, failed: boolean, durationMs: number | null): void {
  acc.runs++;
  if (failed) acc.failed++;
  acc.kinds[kind]++;
  if (durationMs !== null) acc.durations.add(durationMs);
}

function addVerdict(acc: VerdictAcc, blocked: boolean, codes: string[]): void {
  acc.calls++;
  if (!blocked) return;
  acc.rejected++;
  // Codes are model-controlled only through validate.ts, but a hand-edited log could hold anything.
  for (const code of codes) {
    if (code in acc.codes || Object.keys(acc.codes).length < 64) acc.codes[code] = (acc.codes[code] ?? 0) + 1;
  }
}

function runRow(key: string, acc: RunAcc): RunGroup {
  return {
    key,
    runs: acc.runs,
    failed: acc.failed,
    failureRate: acc.runs ? acc.failed / acc.runs : 0,
    kinds: { ...acc.kinds },
    p50Ms: acc.durations.quantile(0.5),
    p95Ms: acc.durations.quantile(0.95),
  };
}

function byKey(a: { key: string }, b: { key: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function sum(kinds: Record<OutcomeKind, number>): number {
  let n = 0;
  for (const k of OUTCOME_KINDS) n += kinds[k];
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// Quantiles in bounded memory
// ---------------------------------------------------------------------------------------------------------

/** A quantile estimator: exact up to `EXACT` values, then a log-scale histogram (relative error < 2%). */
interface Quantiles {
  add(value: number): void;
  quantile(q: number): number | null;
}

const EXACT = 512;
const MIN_MS = 0.001; // durations below this share the first bucket
const GROWTH = 1.02; // bucket width ratio: a bucket's midpoint is within 1% of any value in it
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(1e9 / MIN_MS) / LOG_GROWTH) + 2; // up to ~11.5 days in one run

function quantiles(): Quantiles {
  let exact: number[] | null = [];
  let hist: Uint32Array | null = null;
  let count = 0;
  let min = Infinity;
  let max = -Infinity;
  const bucket = (v: number) =>
    v <= MIN_MS ? 0 : Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(v / MIN_MS) / LOG_GROWTH));
  const toHist = (v: number) => hist![bucket(v)]++;
  return {
    add(v) {
      count++;
      if (v < min) min = v;
      if (v > max) max = v;
      if (exact !== null) {
        exact.push(v);
        if (exact.length > EXACT) {
          hist = new Uint32Array(BUCKETS);
          for (const x of exact) toHist(x);
          exact = null;
        }
      } else toHist(v);
    },
    quantile(q) {
      if (count === 0) return null;
      const rank = Math.max(1, Math.ceil(q * count)); // nearest rank
      if (exact !== null) return [...exact].sort((a, b) => a - b)[rank - 1];
      let seen = 0;
      for (let i = 0; i < BUCKETS; i++) {
        seen += hist![i];
        if (seen >= rank) {
          if (i === 0) return min;
          // Geometric midpoint of the bucket, kept inside what was actually seen.
          const mid = MIN_MS * Math.pow(GROWTH, i - 0.5);
          return Math.min(max, Math.max(min, mid));
        }
      }
      return max;
    },
  };
}
