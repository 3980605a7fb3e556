/**
 * The failure report over JSONL logs: streaming aggregation by tool, kind, day or model.
 *
 * @module
 */
import { cutUnits, givenValue, isRecord, lazy, optionsArg } from "../_common/values.ts";
import type { FindingCode, OutcomeKind } from "../types.ts";

/** Zero runs of every outcome kind, in report order; its type makes sure no kind is left out. */
const NO_RUNS: Readonly<Record<OutcomeKind, number>> = {
  spawn: 0,
  timeout: 0,
  exit: 0,
  protocol: 0,
  refused: 0,
  empty: 0,
  results: 0,
};

/**
 * The seven outcome kinds, in report order (failures first).
 *
 * @example Failures come first
 * ```ts
 * import assert from "node:assert/strict";
 * import { OUTCOME_KINDS } from "@toolguard/toolguard/stats";
 *
 * assert.deepEqual(OUTCOME_KINDS.slice(-2), ["empty", "results"]);
 * ```
 */
export const OUTCOME_KINDS: readonly OutcomeKind[] = Object.keys(NO_RUNS) as OutcomeKind[];

/** Every finding code, in report order; its type makes sure no code is left out. */
const CODE_ORDER: Readonly<Record<FindingCode, true>> = {
  unknown_tool: true,
  malformed_arguments: true,
  missing_required_argument: true,
  unexpected_argument: true,
  argument_type_mismatch: true,
  argument_constraint: true,
  argument_injection: true,
  argument_secret: true,
  tool_changed: true,
};

/**
 * Every finding code, in report order.
 *
 * @example An unknown tool comes first
 * ```ts
 * import assert from "node:assert/strict";
 * import { FINDING_CODES } from "@toolguard/toolguard/stats";
 *
 * assert.equal(FINDING_CODES[0], "unknown_tool");
 * assert.equal(FINDING_CODES.length, 9); // the contract's seven, and the MCP relay's two
 * ```
 */
export const FINDING_CODES: readonly FindingCode[] = Object.keys(CODE_ORDER) as FindingCode[];

/** Every grouping; its type makes sure none is left out. */
const GROUPINGS: Readonly<Record<GroupBy, true>> = { tool: true, kind: true, day: true, model: true };

/** The four groupings, in the order the help text names them (`toolguard stats --by`). */
export const GROUP_BY: readonly GroupBy[] = Object.keys(GROUPINGS) as GroupBy[];

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
  /** The group key (tool name, kind, `YYYY-MM-DD` or model; a name past 256 units is cut, with "..."). */
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
  /** The group key (tool name, `allowed`/`blocked`, `YYYY-MM-DD` or model; names cut as in `RunGroup`). */
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
  /** MCP relay lines that are not calls (`event: "mcp"`: server started or exited, output flagged, ...). */
  relayEvents: number;
  /**
   * Lines that were not a log event (bad JSON, not an object, unknown event, missing fields, too long), and
   * the numbers of the first ten (counting from 1, blank lines included, as an editor numbers them).
   */
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
  /** Count one line of the log (without its newline; a CR before it and a BOM are ignored). Never throws. */
  addLine(line: string): void;
  /** The statistics so far. The aggregator can keep taking lines afterwards. */
  finish(): StatsReport;
}

const OTHER = "(other)";
/** How every line jsonlLog writes starts. */
const LINE_START = '{"ts":"';
/** Longest tool name, model label or finding code kept, in UTF-16 units; longer ones are cut (with "..."). */
const MAX_LABEL = 256;
const MAX_MALFORMED_REPORTED = 10;

/**
 * Parse a `--since` bound: an ISO date (`2026-11-01`, UTC midnight), an ISO date-time, or a relative age
 * (`90m`, `24h`, `7d`, `2w`) counted back from `now`.
 *
 * @example A date, a date-time and an age
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSince } from "@toolguard/toolguard/stats";
 *
 * assert.equal(parseSince("2026-11-01").toISOString(), "2026-11-01T00:00:00.000Z"); // UTC midnight
 * assert.equal(parseSince("2026-11-01T12:30:00").toISOString(), "2026-11-01T12:30:00.000Z");
 * const now = new Date("2026-11-08T00:00:00Z");
 * assert.equal(parseSince("7d", now).toISOString(), "2026-11-01T00:00:00.000Z");
 * assert.throws(() => parseSince("last tuesday"), RangeError);
 * assert.throws(() => parseSince("2026-02-30"), RangeError); // no such day
 * ```
 *
 * @param text The bound as typed.
 * @param now The reference time for relative ages. Default: the current time.
 * @returns The bound as a `Date`.
 * @throws {RangeError} When the text is none of these forms.
 */
export function parseSince(text: string, now: Date = new Date()): Date {
  if (typeof text !== "string") {
    throw new TypeError(
      `parseSince(): the text must be a string such as "7d" or "2026-01-31", got ${givenValue(text)}`,
    );
  }
  const rel = /^(\d+)([mhdw])$/.exec(text.trim());
  if (rel) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as "m" | "h" | "d" | "w"];
    const at = new Date(now.getTime() - Number(rel[1]) * unit);
    if (Number.isFinite(at.getTime())) return at;
    throw new RangeError(
      `since: the age ${givenValue(text)} reaches back before any date; give a shorter one`,
    );
  }
  const ms = isoTimeMs(text.trim());
  if (Number.isFinite(ms)) return new Date(ms);
  throw new RangeError(
    `since: cannot read ${givenValue(text)} as a time; use a date (2026-11-01), ` +
      "a date-time (2026-11-01T12:00:00Z) or an age (24h, 7d, 2w)",
  );
}

/** An ISO 8601 date, or date-time with an optional zone: the form of the log's timestamps and of `since`. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const HAS_ZONE = /(?:Z|[+-]\d{2}:?\d{2})$/;

/**
 * The time of an ISO 8601 date or date-time in milliseconds, or NaN for any other text. A bare date is UTC
 * midnight and a date-time without a zone is UTC too, like the log's own timestamps: `Date.parse` alone
 * would read it in the reader's time zone, and would take forms such as `"1"` or `"(junk) Nov 2 2026"`.
 */
function isoTimeMs(text: string): number {
  if (!ISO_TIME.test(text)) return NaN;
  const iso = text.length === 10 ? `${text}T00:00:00Z` : HAS_ZONE.test(text) ? text : `${text}Z`;
  const ms = Date.parse(text.length === 10 ? iso : iso.replace(" ", "T"));
  // The calendar date must exist: Date.parse rolls 2026-02-30 over to March on some engines.
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  const days = month === 2
    ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28)
    : month === 4 || month === 6 || month === 9 || month === 11
    ? 30
    : 31;
  return month >= 1 && month <= 12 && day >= 1 && day <= days ? ms : NaN;
}

/**
 * Create a streaming aggregator over log lines.
 *
 * @example Rejected calls by finding code, per day
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStats } from "@toolguard/toolguard/stats";
 *
 * const stats = createStats({ by: "day" });
 * for (const [ts, verdict, findings] of [
 *   ["2026-11-01T09:00:00Z", "blocked", ["unknown_tool"]],
 *   ["2026-11-01T09:05:00Z", "allowed", []],
 *   ["2026-11-02T10:00:00Z", "blocked", ["argument_type_mismatch", "argument_type_mismatch"]],
 * ] as const) {
 *   stats.addLine(JSON.stringify({ ts, event: "verdict", tool: "search", verdict, findings }));
 * }
 * const { verdicts } = stats.finish();
 * assert.equal(verdicts.total, 3);
 * assert.equal(verdicts.rejected, 2);
 * assert.deepEqual(verdicts.codes, { unknown_tool: 1, argument_type_mismatch: 1 }); // once per call
 * assert.deepEqual(verdicts.groups.map((g) => [g.key, g.rejectRate]), [
 *   ["2026-11-01", 0.5],
 *   ["2026-11-02", 1],
 * ]);
 * ```
 *
 * @example Only lines since a bound
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStats } from "@toolguard/toolguard/stats";
 *
 * const stats = createStats({ since: "2026-11-02" });
 * stats.addLine('{"ts":"2026-11-01T23:59:59Z","event":"result","tool":"rg","kind":"timeout"}');
 * stats.addLine('{"ts":"2026-11-02T00:00:00Z","event":"result","tool":"rg","kind":"results"}');
 * const report = stats.finish();
 * assert.equal(report.skipped, 1);
 * assert.equal(report.runs.total, 1);
 * assert.equal(report.first, "2026-11-02T00:00:00Z");
 * ```
 *
 * @param options Grouping, `since` bound and group limit.
 * @returns An aggregator: `addLine(line)` for each line, `finish()` for the report.
 * @throws {RangeError} When `by`, `since` or `maxGroups` is out of range.
 */
export function createStats(options?: StatsOptions): StatsAggregator {
  const stats = new Aggregator(settingsOf(optionsArg(options, "createStats")));
  // Plain functions, not methods: `lines.forEach(stats.addLine)` works.
  return { addLine: (line) => stats.addLine(line), finish: () => stats.finish() };
}

/** The checked options of one aggregator. */
interface Settings {
  by: GroupBy;
  since: Date | null;
  maxGroups: number;
}

/** Checks and fills in the options of {@linkcode createStats}. */
function settingsOf(options: StatsOptions): Settings {
  const by = options.by ?? "tool";
  if (!GROUP_BY.includes(by)) {
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
  const maxGroups = options.maxGroups ?? 1000;
  if (!Number.isInteger(maxGroups) || maxGroups < 2) {
    throw new RangeError(`stats: maxGroups must be an integer of at least 2, got ${maxGroups}`);
  }
  return { by, since, maxGroups };
}

/** What became of one non-blank line. */
type LineOutcome = "counted" | "skipped" | "malformed";

/** The aggregator's state, long-lived across lines and chunks. */
class Aggregator {
  readonly #by: GroupBy;
  readonly #since: Date | null;
  readonly #sinceMs: number;
  readonly #maxGroups: number;
  #lines = 0;
  #lineNumber = 0;
  #skipped = 0;
  #relayEvents = 0;
  #malformed = 0;
  readonly #malformedAt: number[] = [];
  #first: string | null = null;
  #firstMs = Infinity;
  #last: string | null = null;
  #lastMs = -Infinity;
  readonly #allRuns = new RunAcc();
  readonly #runGroups = new Map<string, RunAcc>();
  readonly #allVerdicts = new VerdictAcc();
  readonly #verdictGroups = new Map<string, VerdictAcc>();
  readonly #toolKinds = new Map<string, Record<OutcomeKind, number>>();
  readonly #dayKinds = new Map<string, Record<OutcomeKind, number>>();
  #dayStart = -Infinity;
  #dayKey = "";

  constructor(settings: Settings) {
    this.#by = settings.by;
    this.#since = settings.since;
    this.#sinceMs = settings.since?.getTime() ?? -Infinity;
    this.#maxGroups = settings.maxGroups;
  }

  /** Counts one line of the log (without its newline). Never throws. */
  addLine(raw: string): void {
    // A byte order mark starts a file an editor saved, and so lines within two such files put together
    // (`cat a.jsonl b.jsonl`); the decoder drops it only at the start of a chunk, so drop it on every line.
    const unmarked = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    const line = unmarked.endsWith("\r") ? unmarked.slice(0, -1) : unmarked;
    this.#lineNumber++; // blank lines too: the numbers reported are the ones an editor shows
    if (line.trim() === "") return;
    this.#lines++;
    const outcome = this.#count(line);
    if (outcome === "skipped") this.#skipped++;
    else if (outcome === "malformed") {
      this.#malformed++;
      if (this.#malformedAt.length < MAX_MALFORMED_REPORTED) this.#malformedAt.push(this.#lineNumber);
      if (this.#countGlued(line) === "skipped") this.#skipped++;
    }
  }

  /**
   * A line cut off when its writer died (or its disk filled) has the next writer's line glued to it, as
   * appending does not know where the file's last line ended: counts that line (the fragment stays
   * malformed). jsonlLog lines start with `{"ts":"`; the leftmost start whose rest is a log line wins (an
   * item or argument may hold `{"ts":"` too). A few tries at most, so a hostile line costs little.
   */
  #countGlued(line: string): LineOutcome | null {
    let at = line.indexOf(LINE_START, 1);
    for (let tries = 0; at > 0 && tries < 8; tries++) {
      const outcome = this.#count(line.slice(at));
      if (outcome !== "malformed") return outcome;
      at = line.indexOf(LINE_START, at + 1);
    }
    return null;
  }

  /** The statistics so far. */
  finish(): StatsReport {
    const runs = this.#allRuns.row("");
    const verdicts = this.#allVerdicts.row("");
    return {
      by: this.#by,
      since: this.#since?.toISOString() ?? null,
      lines: this.#lines,
      skipped: this.#skipped,
      relayEvents: this.#relayEvents,
      malformed: { count: this.#malformed, lineNumbers: [...this.#malformedAt] },
      first: this.#first,
      last: this.#last,
      runs: {
        total: runs.runs,
        failed: runs.failed,
        failureRate: runs.failureRate,
        kinds: runs.kinds,
        p50Ms: runs.p50Ms,
        p95Ms: runs.p95Ms,
        groups: this.#rows(this.#runGroups, (a, b) => b.runs - a.runs),
      },
      verdicts: {
        total: verdicts.calls,
        rejected: verdicts.rejected,
        codes: verdicts.codes,
        groups: this.#rows(this.#verdictGroups, (a, b) => b.calls - a.calls),
      },
      byTool: series(this.#toolKinds).sort((a, b) =>
        sum(b.kinds) - sum(a.kinds) || a.key.localeCompare(b.key)
      ),
      byDay: series(this.#dayKinds).sort(byKey),
    };
  }

  /** Reads a non-blank line and counts it when it is a log event at or after `since`. */
  #count(line: string): LineOutcome {
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      return "malformed";
    }
    if (!isRecord(r) || typeof r.ts !== "string" || typeof r.tool !== "string") return "malformed";
    const ts = r.ts;
    const ms = isoTimeMs(ts);
    if (!Number.isFinite(ms)) return "malformed";
    const outcome = r.event === "result"
      ? this.#countResult(r, label(r.tool), ms)
      : r.event === "verdict"
      ? this.#countVerdict(r, label(r.tool), ms)
      : r.event === "mcp"
      ? this.#countRelayEvent(ms)
      : "malformed";
    if (outcome === "counted") this.#seen(ts, ms);
    return outcome;
  }

  /** Counts a tool-run line. */
  #countResult(r: Record<string, unknown>, tool: string, ms: number): LineOutcome {
    const kind = r.kind as OutcomeKind;
    if (typeof kind !== "string" || !OUTCOME_KINDS.includes(kind)) return "malformed";
    if (ms < this.#sinceMs) return "skipped";
    const d = typeof r.durationMs === "number" && Number.isFinite(r.durationMs) && r.durationMs >= 0
      ? r.durationMs
      : null;
    const day = this.#dayOf(ms);
    this.#allRuns.add(kind, d);
    this.#slot(this.#runGroups, this.#keyOf(tool, kind, day, r.model), () => new RunAcc()).add(kind, d);
    this.#slot(this.#toolKinds, tool, zeroKinds)[kind]++;
    this.#slot(this.#dayKinds, day, zeroKinds)[kind]++;
    return "counted";
  }

  /** Counts an MCP relay line that is not a call: it is a log event, but neither a run nor a verdict. */
  #countRelayEvent(ms: number): LineOutcome {
    if (ms < this.#sinceMs) return "skipped";
    this.#relayEvents++;
    return "counted";
  }

  /** Counts a validated-call line. */
  #countVerdict(r: Record<string, unknown>, tool: string, ms: number): LineOutcome {
    const verdict = r.verdict;
    if (verdict !== "allowed" && verdict !== "blocked") return "malformed";
    if (ms < this.#sinceMs) return "skipped";
    const codes = Array.isArray(r.findings)
      ? [...new Set(r.findings.filter((c): c is string => typeof c === "string").map(label))]
      : [];
    const key = this.#keyOf(tool, verdict, this.#dayOf(ms), r.model);
    this.#allVerdicts.add(verdict, codes);
    this.#slot(this.#verdictGroups, key, () => new VerdictAcc()).add(verdict, codes);
    return "counted";
  }

  /** Widens the first..last range to a counted line's timestamp. */
  #seen(ts: string, ms: number): void {
    if (ms < this.#firstMs) {
      this.#firstMs = ms;
      this.#first = ts;
    }
    if (ms > this.#lastMs) {
      this.#lastMs = ms;
      this.#last = ts;
    }
  }

  /** The UTC day (`YYYY-MM-DD`) of a time in milliseconds. */
  #dayOf(ms: number): string {
    // Logs are in time order, so the day of the previous line nearly always fits: skip the Date work.
    if (ms < this.#dayStart || ms >= this.#dayStart + 86_400_000) {
      this.#dayStart = ms - (((ms % 86_400_000) + 86_400_000) % 86_400_000);
      this.#dayKey = new Date(this.#dayStart).toISOString().slice(0, 10);
    }
    return this.#dayKey;
  }

  /** The group key of a line: its tool, kind (or verdict), UTC day or model label. */
  #keyOf(tool: string, kind: string, day: string, model: unknown): string {
    switch (this.#by) {
      case "tool":
        return tool;
      case "kind":
        return kind;
      case "day":
        return day;
      default:
        return typeof model === "string" ? label(model) : "(none)";
    }
  }

  /** The accumulator for `key`, made on first use; past `maxGroups` keys, the one for `"(other)"`. */
  #slot<T>(map: Map<string, T>, key: string, make: () => T): T {
    let v = map.get(key);
    if (v === undefined) {
      // One slot stays free for "(other)", so a table never has more than maxGroups rows.
      if (map.size - (map.has(OTHER) ? 1 : 0) >= this.#maxGroups - 1) key = OTHER;
      v = map.get(key);
      if (v === undefined) {
        v = make();
        map.set(key, v);
      }
    }
    return v;
  }

  /** One row per group: by date with `--by day`, else by `most` first, then by key. */
  #rows<R extends { key: string }>(
    groups: Map<string, { row(key: string): R }>,
    most: (a: R, b: R) => number,
  ): R[] {
    const rows = [...groups].map(([key, acc]) => acc.row(key));
    return rows.sort(this.#by === "day" ? byKey : (a, b) => most(a, b) || a.key.localeCompare(b.key));
  }
}

/**
 * Split a byte stream into lines and feed them to an aggregator, in bounded memory: a line longer than
 * `maxLineBytes` is counted as malformed and skipped without being kept.
 *
 * @example Lines split across chunks are read whole
 * ```ts
 * import assert from "node:assert/strict";
 * import { statsFromChunks } from "@toolguard/toolguard/stats";
 *
 * const bytes = new TextEncoder().encode(
 *   '{"ts":"2026-11-02T10:00:00Z","event":"result","tool":"jq","kind":"protocol","durationMs":4}\n' +
 *     '{"ts":"2026-11-02T10:00:01Z","event":"result","tool":"jq","kind":"results","durationMs":6}\n',
 * );
 * const chunks = [bytes.subarray(0, 50), bytes.subarray(50, 120), bytes.subarray(120)];
 * const report = await statsFromChunks(chunks);
 * assert.equal(report.runs.total, 2);
 * assert.equal(report.runs.kinds.protocol, 1);
 * assert.equal(report.runs.p50Ms, 4);
 * assert.equal(report.malformed.count, 0);
 * ```
 *
 * @param chunks The bytes of the log, in any chunking.
 * @param options Grouping, `since`, group limit and the longest line kept (default 1 MiB).
 * @returns The report.
 * @throws {RangeError} When `maxLineBytes` is not a positive integer or Infinity, or another option is out
 * of range (as a rejection, never synchronously: the line reader loads on the first call, and a failure to
 * load it rejects too).
 */
export async function statsFromChunks(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options?: StatsOptions & { maxLineBytes?: number },
): Promise<StatsReport> {
  return await (await loadReader()).readStats(chunks, options);
}

/**
 * Read a log file in 64 KiB chunks and report on it. Memory stays bounded whatever the file's size
 * (small reads keep the decoded text per batch small, which keeps the garbage collector's heap small too).
 *
 * @example Report on what jsonlLog wrote
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { jsonlLog } from "@toolguard/toolguard/log";
 * import { statsFromFile } from "@toolguard/toolguard/stats";
 *
 * const dir = mkdtempSync(join(tmpdir(), "toolguard-stats-"));
 * const path = join(dir, "calls.jsonl");
 * const log = jsonlLog(path, { model: "llama3.2:3b" });
 * log.onResult({
 *   ok: false, kind: "timeout", items: null, exitCode: null, signal: "SIGKILL", detail: "timed out",
 *   durationMs: 10_000, warnings: [], truncated: false, stderr: "",
 * }, { command: "curl", args: [] });
 * await log.close();
 *
 * const report = await statsFromFile(path, { by: "model" });
 * assert.equal(report.runs.groups[0].key, "llama3.2:3b");
 * assert.equal(report.runs.kinds.timeout, 1);
 * assert.equal(report.runs.failureRate, 1);
 * rmSync(dir, { recursive: true });
 * ```
 *
 * @param path The log file.
 * @param options Grouping, `since`, group limit and the longest line kept (default 1 MiB).
 * @returns The report.
 * @throws {Error} When the file cannot be opened or read (as a rejection, never synchronously: the reader
 * loads on the first call, and a failure to load it rejects too).
 */
export async function statsFromFile(
  path: string,
  options: StatsOptions & { maxLineBytes?: number } = {},
): Promise<StatsReport> {
  return await (await loadReader()).readStatsFile(path, options);
}

/**
 * The readers' engine (`stats_read.ts`), imported on the first read and kept (the promise: it loads once);
 * a failed load rejects the read that asked for it.
 */
const loadReader = lazy(() => import("./stats_read.ts"));

/**
 * A name from the log as a group key: cut to {@linkcode MAX_LABEL} units, so that memory stays bounded by the
 * number of groups, not by how long the log's names are (a hostile log could hold megabyte-long ones).
 */
function label(name: string): string {
  return name.length <= MAX_LABEL ? name : cutUnits(name, MAX_LABEL) + "\u2026";
}

// ---------------------------------------------------------------------------------------------------------
// Accumulators
// ---------------------------------------------------------------------------------------------------------

/** Counts and durations of the tool runs in one group. */
class RunAcc {
  #runs = 0;
  #failed = 0;
  readonly #kinds = zeroKinds();
  readonly #durations = new Quantiles();

  /** Counts one run; `durationMs` is null when the line had none. */
  add(kind: OutcomeKind, durationMs: number | null): void {
    this.#runs++;
    if (kind !== "empty" && kind !== "results") this.#failed++;
    this.#kinds[kind]++;
    if (durationMs !== null) this.#durations.add(durationMs);
  }

  /** The group's row of the report. */
  row(key: string): RunGroup {
    return {
      key,
      runs: this.#runs,
      failed: this.#failed,
      failureRate: this.#runs ? this.#failed / this.#runs : 0,
      kinds: { ...this.#kinds },
      p50Ms: this.#durations.quantile(0.5),
      p95Ms: this.#durations.quantile(0.95),
    };
  }
}

/** Counts of the validated calls in one group. */
class VerdictAcc {
  #calls = 0;
  #rejected = 0;
  // A Map, not an object: a code named `constructor` or `__proto__` would read or set Object.prototype's.
  readonly #codes = new Map<string, number>();

  /** Counts one call; a blocked call counts once per distinct finding code. */
  add(verdict: "allowed" | "blocked", codes: readonly string[]): void {
    this.#calls++;
    if (verdict !== "blocked") return;
    this.#rejected++;
    // Codes are model-controlled only through validate.ts, but a hand-edited log could hold anything.
    for (const code of codes) {
      const n = this.#codes.get(code);
      if (n !== undefined || this.#codes.size < 64) this.#codes.set(code, (n ?? 0) + 1);
    }
  }

  /** The group's row of the report. */
  row(key: string): VerdictGroup {
    return {
      key,
      calls: this.#calls,
      rejected: this.#rejected,
      rejectRate: this.#calls ? this.#rejected / this.#calls : 0,
      codes: Object.fromEntries(this.#codes), // own properties, whatever the key
    };
  }
}

/** A fresh count of zero runs for every outcome kind. */
export function zeroKinds(): Record<OutcomeKind, number> {
  return { ...NO_RUNS };
}

/** Outcome kinds per key, copied for the report. */
function series(map: Map<string, Record<OutcomeKind, number>>): KindSeries[] {
  return [...map].map(([key, kinds]) => ({ key, kinds: { ...kinds } }));
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

const EXACT = 512;
const MIN_MS = 0.001; // durations below this share the first bucket
const GROWTH = 1.02; // bucket width ratio: a bucket's midpoint is within 1% of any value in it
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(1e9 / MIN_MS) / LOG_GROWTH) + 2; // up to ~11.5 days in one run

/** A quantile estimator: exact up to `EXACT` values, then a log-scale histogram (relative error < 2%). */
class Quantiles {
  #exact: number[] | null = [];
  #hist: Uint32Array | null = null;
  #count = 0;
  #min = Infinity;
  #max = -Infinity;

  /** Adds one value. */
  add(v: number): void {
    this.#count++;
    if (v < this.#min) this.#min = v;
    if (v > this.#max) this.#max = v;
    if (this.#exact === null) {
      this.#hist![bucket(v)]++;
      return;
    }
    this.#exact.push(v);
    if (this.#exact.length > EXACT) {
      const hist = new Uint32Array(BUCKETS);
      for (const x of this.#exact) hist[bucket(x)]++;
      this.#hist = hist;
      this.#exact = null;
    }
  }

  /** The nearest-rank quantile `q` (0..1) of the values added, or null when there are none. */
  quantile(q: number): number | null {
    if (this.#count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.#count)); // nearest rank
    if (this.#exact !== null) return [...this.#exact].sort((a, b) => a - b)[rank - 1];
    const hist = this.#hist!;
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += hist[i];
      if (seen >= rank) {
        if (i === 0) return this.#min;
        // Geometric midpoint of the bucket, kept inside what was actually seen.
        const mid = MIN_MS * Math.pow(GROWTH, i - 0.5);
        return Math.min(this.#max, Math.max(this.#min, mid));
      }
    }
    return this.#max;
  }
}

/** The histogram bucket of a duration. */
function bucket(v: number): number {
  return v <= MIN_MS ? 0 : Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(v / MIN_MS) / LOG_GROWTH));
}
