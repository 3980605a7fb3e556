/**
 * `extractToolCalls` against the open dev slice of real model outputs (`../shared/data/text-calls/dev.jsonl`:
 * the tool-call parser tests of llama.cpp, vLLM, SGLang and Ollama, 47 formats). Prints rows exact, call
 * precision and recall per format, and asserts floors at the levels reached so a regression fails.
 *
 * Scored twice: as `extractToolCalls(text)` (no tools: what a caller without the request gets), and with the
 * tools each upstream test declared, reconstructed from the row's expected calls (their names, and the JSON
 * type of each expected argument as the parameter's type). Two negative rows are negative only because the
 * name is not among the offered tools (`depends_on_tools`), and one row needs the declared `string` type to
 * keep `"5123123"` a string: those three can only be right with tools.
 *
 * Run: `deno test -A tests/text_calls_test.ts` or `bun test tests/text_calls_test.ts`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { extractToolCalls } from "../extract.ts";

interface Row {
  id: string;
  format: string;
  text: string;
  expected: { name: string; arguments: Record<string, unknown> }[];
  depends_on_tools?: boolean;
}

const DEV = fileURLToPath(new URL("../../shared/data/text-calls/dev.jsonl", import.meta.url));
const missing = existsSync(DEV) ? false : `missing ${DEV} (the text-calls dev slice): nothing to score`;
const rows: Row[] = missing ? [] : readFileSync(DEV, "utf8").trim().split("\n").map((l) => JSON.parse(l));
if (missing) console.warn(`text_calls_test: skipped, ${missing}`);

/** The tools an upstream test offered, as far as a row's expected calls show them. */
function toolsOf(row: Row): unknown[] {
  const byName = new Map<string, Record<string, unknown>>();
  for (const call of row.expected) {
    const props = byName.get(call.name) ?? {};
    for (const [k, v] of Object.entries(call.arguments)) props[k] = { type: jsonType(v) };
    byName.set(call.name, props);
  }
  return [...byName].map(([name, properties]) => ({ name, parameters: { type: "object", properties } }));
}

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

interface Tally {
  rows: number;
  exact: number;
  returned: number;
  correct: number;
  wanted: number;
}

interface Score {
  total: Tally;
  perFormat: Map<string, Tally>;
  /** Negative rows that produced a call. */
  leaks: Row[];
  /** Rows that were not exact. */
  misses: string[];
}

function score(withTools: boolean): Score {
  const total: Tally = { rows: 0, exact: 0, returned: 0, correct: 0, wanted: 0 };
  const perFormat = new Map<string, Tally>();
  const leaks: Row[] = [];
  const misses: string[] = [];
  for (const row of rows) {
    const calls = extractToolCalls(row.text, withTools ? { tools: toolsOf(row) } : {})
      .map((c) => ({ name: c.name, arguments: c.arguments }));
    const exact = isDeepStrictEqual(calls, row.expected);
    const pool = [...row.expected];
    let correct = 0;
    for (const c of calls) {
      const i = pool.findIndex((e) => e.name === c.name && isDeepStrictEqual(e.arguments, c.arguments));
      if (i >= 0) {
        correct++;
        pool.splice(i, 1);
      }
    }
    const f = perFormat.get(row.format) ?? { rows: 0, exact: 0, returned: 0, correct: 0, wanted: 0 };
    perFormat.set(row.format, f);
    for (const t of [total, f]) {
      t.rows++;
      t.exact += exact ? 1 : 0;
      t.returned += calls.length;
      t.correct += correct;
      t.wanted += row.expected.length;
    }
    if (!exact) misses.push(row.id);
    if (row.expected.length === 0 && calls.length > 0) leaks.push(row);
  }
  return { total, perFormat, leaks, misses };
}

const pct = (a: number, b: number) => (b === 0 ? "  -  " : `${(100 * a / b).toFixed(1)}%`.padStart(6));

function print(title: string, s: Score): void {
  const lines = [`\n${title}`, `${"format".padEnd(20)} rows exact  precision  recall`];
  for (
    const [format, t] of [...s.perFormat].sort((a, b) => b[1].rows - a[1].rows || (a[0] < b[0] ? -1 : 1))
  ) {
    lines.push(
      `${format.padEnd(20)} ${String(t.rows).padStart(4)} ${String(t.exact).padStart(5)}  ${
        pct(t.correct, t.returned)
      }     ${pct(t.correct, t.wanted)}`,
    );
  }
  const t = s.total;
  lines.push(
    `${"all".padEnd(20)} ${String(t.rows).padStart(4)} ${String(t.exact).padStart(5)}  ${
      pct(t.correct, t.returned)
    }     ${pct(t.correct, t.wanted)}`,
    `rows exact ${t.exact}/${t.rows} (${
      pct(t.exact, t.rows).trim()
    }), call precision ${t.correct}/${t.returned} (${
      pct(t.correct, t.returned).trim()
    }), recall ${t.correct}/${t.wanted}; not exact: ${s.misses.join(", ") || "none"}`,
  );
  console.log(lines.join("\n"));
}

test(
  "extractToolCalls: dev slice without tools: floors on rows exact and call precision",
  { skip: missing },
  () => {
    const s = score(false);
    print("text-calls dev slice, extractToolCalls(text) without tools", s);
    assert.equal(s.total.rows, 153);
    assert.ok(s.total.exact >= 150, `rows exact ${s.total.exact}/153 fell below 150`);
    assert.ok(
      s.total.correct / s.total.returned >= 0.98,
      `call precision ${s.total.correct}/${s.total.returned}`,
    );
    assert.ok(s.total.correct / s.total.wanted >= 0.99, `recall ${s.total.correct}/${s.total.wanted}`);
    // Without tools, only the rows that are negative because of the offered tools may produce a call.
    assert.deepEqual(s.leaks.filter((r) => !r.depends_on_tools).map((r) => r.id), []);
    for (const [format, t] of s.perFormat) {
      if (format !== "lfm2_pythonic" && format !== "qwen3_xml" && format !== "bare_json") {
        assert.equal(t.exact, t.rows, `format ${format}: ${t.exact}/${t.rows} rows exact`);
      }
    }
  },
);

test("extractToolCalls: dev slice with the tools each test declared: every row exact, no negative leaks", {
  skip: missing,
}, () => {
  const s = score(true);
  print("text-calls dev slice, extractToolCalls(text, { tools }) with each row's tools", s);
  assert.deepEqual(s.misses, []);
  assert.deepEqual(s.leaks.map((r) => r.id), []);
  assert.equal(s.total.correct, s.total.returned);
});
