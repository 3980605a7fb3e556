/**
 * Generate a synthetic call log in the shape `jsonlLog` writes, for measuring `toolguard stats` and for
 * the report tests: `deno run -A scripts/gen_log.ts OUT.jsonl [--lines N | --bytes SIZE] [--days D]
 * [--malformed-every N] [--seed S]`. SIZE takes K, M or G (`--bytes 1G`). Deterministic for a seed.
 *
 * @module
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { scriptArgs } from "./_args.ts";
import { seeded } from "./_seeded.ts";
import process from "node:process";
import { FINDING_CODES } from "../stats.ts";

/** Options for {@linkcode syntheticLines}. */
export interface SyntheticOptions {
  /** PRNG seed. Default 1. */
  seed?: number;
  /** First timestamp. Default 2026-11-01T00:00:00Z. */
  start?: Date;
  /** The lines are spread evenly over this many days. Default 30. */
  days?: number;
  /** Every Nth line is malformed (0: none). Default 0. */
  malformedEvery?: number;
}

const TOOLS = ["rg", "grep", "jq", "curl", "git", "fd", "sqlite3", "search_web", "read_file", "python3"];
const FAILURES = ["spawn", "timeout", "exit", "protocol", "refused"] as const;

/**
 * Yield `count` log lines (without newlines): about 80% tool runs and 20% validation verdicts, with
 * failure rates that differ by tool and drift over the days, and log-normal durations.
 *
 * @param count How many lines.
 * @param options Seed, start, span in days, malformed-line rate.
 * @returns A generator of lines.
 */
export function* syntheticLines(count: number, options: SyntheticOptions = {}): Generator<string> {
  const random = seeded(options.seed ?? 1);
  const start = (options.start ?? new Date("2026-11-01T00:00:00Z")).getTime();
  const span = (options.days ?? 30) * 86_400_000;
  const malformedEvery = options.malformedEvery ?? 0;
  for (let i = 0; i < count; i++) {
    if (malformedEvery > 0 && i % malformedEvery === malformedEvery - 1) {
      yield i % 2 ? '{"ts":"2026-11-01T00:00:00Z","event":"result","tool":' : "garbage that is not JSON";
      continue;
    }
    const ts = new Date(start + Math.floor((i / Math.max(1, count)) * span)).toISOString();
    const t = Math.floor(random() * random() * TOOLS.length * 1.0) % TOOLS.length; // some tools busier
    const tool = TOOLS[t];
    if (random() < 0.2) {
      const blocked = random() < 0.15 + t * 0.02;
      const findings = blocked ? [FINDING_CODES[Math.floor(random() * random() * FINDING_CODES.length)]] : [];
      yield JSON.stringify({
        ts,
        event: "verdict",
        tool,
        verdict: blocked ? "blocked" : "allowed",
        ok: !blocked,
        callId: `call_${(i * 2654435761 >>> 0).toString(16)}`,
        index: 0,
        findings,
        sentence: blocked
          ? `Call ${tool} was rejected; it did not run. ${
            findings[0]
          } at /pattern: expected string. Fix the ` +
            "arguments and call again."
          : "",
      });
      continue;
    }
    // Failure rate per tool between 3% and 30%, rising over the month for the last tools.
    const drift = i / Math.max(1, count);
    const failRate = 0.03 + (t / TOOLS.length) * 0.2 + (t > 6 ? drift * 0.15 : 0);
    const r = random();
    const duration = Math.round(Math.exp(2.5 + random() * 2 + (random() - 0.5) * 2) * 1000) / 1000;
    if (r < failRate) {
      const kind = FAILURES[Math.floor(random() * random() * FAILURES.length)];
      const exitCode = kind === "exit" ? 2 : kind === "refused" || kind === "protocol" ? 0 : null;
      const detail = kind === "spawn"
        ? `${tool}: not found on PATH`
        : kind === "timeout"
        ? "timed out after 10000 ms; the process tree was ended"
        : kind === "exit"
        ? `${tool}: exited with code 2: error parsing arguments near line ${i % 97}`
        : kind === "protocol"
        ? "stdout is not JSON: Unexpected token < in JSON at position 0"
        : "NOT_FOUND: the index is not built yet";
      yield JSON.stringify({
        ts,
        event: "result",
        tool,
        kind,
        ok: false,
        exitCode,
        signal: null,
        durationMs: kind === "timeout" ? 10000 + duration : duration,
        detail,
        itemCount: null,
        sentence: `Tool did not run successfully (${kind}, exit ${exitCode ?? "n/a"}): ${detail}. ` +
          "Report this as a failure; do not describe any results.",
        findings: [],
      });
    } else {
      const n = random() < 0.3 ? 0 : 1 + Math.floor(random() * 40);
      yield JSON.stringify({
        ts,
        event: "result",
        tool,
        kind: n === 0 ? "empty" : "results",
        ok: true,
        exitCode: 0,
        signal: null,
        durationMs: duration,
        detail: "",
        itemCount: n,
        sentence: n === 0
          ? 'Tool ran and returned zero items. That is a real answer: say "no results", not "the tool is broken".'
          : `Tool returned ${n} item(s): […]`,
        findings: random() < 0.01 ? ["instruction_override"] : [],
      });
    }
  }
}

function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)i?B?$/i.exec(text.trim());
  if (!m) throw new Error(`--bytes: cannot read ${JSON.stringify(text)}; use e.g. 500M or 1G`);
  const unit = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2].toUpperCase() as "" | "K" | "M" | "G"];
  return Math.floor(Number(m[1]) * unit);
}

if (import.meta.main) {
  const usage =
    "usage: gen_log.ts OUT.jsonl [--lines N | --bytes SIZE] [--days D] [--malformed-every N] [--seed S]";
  const { values, positionals } = scriptArgs(usage, {
    options: {
      lines: { type: "string" },
      bytes: { type: "string" },
      days: { type: "string" },
      "malformed-every": { type: "string" },
      seed: { type: "string" },
    },
    allowPositionals: true,
  });
  if (positionals.length !== 1) {
    console.error(usage);
    process.exit(2);
  }
  const maxBytes = values.bytes ? parseSize(values.bytes) : Infinity;
  // With --bytes, aim the timestamps' spread at the expected line count (lines average ~250 bytes).
  const maxLines = values.lines ? Number(values.lines) : values.bytes ? Math.ceil(maxBytes / 230) : 100_000;
  const fd = openSync(positionals[0], "w");
  const encoder = new TextEncoder();
  let bytes = 0;
  let lines = 0;
  let batch: string[] = [];
  let batchLen = 0;
  const flush = () => {
    const data = encoder.encode(batch.join(""));
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off);
    batch = [];
    batchLen = 0;
  };
  const t0 = performance.now();
  for (
    const line of syntheticLines(maxLines, {
      seed: values.seed ? Number(values.seed) : 1,
      days: values.days ? Number(values.days) : 30,
      malformedEvery: values["malformed-every"] ? Number(values["malformed-every"]) : 0,
    })
  ) {
    if (bytes + line.length + 1 > maxBytes) break;
    batch.push(line, "\n");
    batchLen += line.length + 1;
    bytes += line.length + 1; // generated lines are ASCII except "…", close enough for sizing
    lines++;
    if (batchLen > 4 * 1024 * 1024) flush();
  }
  flush();
  closeSync(fd);
  console.error(
    `wrote ${lines} lines, ~${(bytes / 1024 / 1024).toFixed(1)} MiB to ${positionals[0]} in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`,
  );
}
