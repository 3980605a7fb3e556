// The check the tests of the scanner's rules in other languages share (scan_translated_test.ts,
// scan_review58_test.ts, scan_misses65_test.ts, scan_rev74_test.ts): which texts a rule flags, or any rule, read
// as a tool's output.
import assert from "node:assert/strict";
import { scan } from "../scan.ts";

/** The findings of `rule` in `text`, scanned as a tool's output. */
function hitsOf(rule: string, text: string): number {
  return scan(text, { context: "tool_output" }).findings.filter((f) => f.rule === rule).length;
}

/** Each of `texts` gets at least one finding of `rule` (`true`) or none (`false`); all that do not are listed. */
export function assertFlags(rule: string, flagged: boolean, texts: string[]): void {
  assert.deepEqual(texts.filter((text) => hitsOf(rule, text) > 0 !== flagged), [], rule);
}

/** Each of `texts`, read as a tool's output, has no finding of any rule; all that do are listed. */
export function assertClean(texts: string[]): void {
  const flagged = texts.map((text) => ({ text, rules: scan(text, { context: "tool_output" }).findings }))
    .filter((r) => r.rules.length > 0).map((r) => `${r.text} -> ${r.rules.map((f) => f.rule).join(", ")}`);
  assert.deepEqual(flagged, []);
}
