// The checks the tests of the scanner's rules share: which texts a rule flags, or any rule, read as a tool's
// output, and that a rule's work on a repeated text grows linearly.
import assert from "node:assert/strict";
import { scan } from "../scan.ts";
import { countingTextWork } from "./_counting.ts";

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

/**
 * Each of `units`, repeated to `small` characters and to four times as many and scanned as a tool's output,
 * reads less than eight times the text the first time read: the work grows linearly with the length, never with
 * its square (a quadratic rule reads sixteen times as much).
 */
export async function assertLinearScan(units: readonly string[], small = 2_500): Promise<void> {
  for (const unit of units) {
    const workOf = async (n: number) =>
      (await countingTextWork(() => scan(unit.repeat(n / unit.length), { context: "tool_output" })))[1];
    const [a, b] = [await workOf(small), await workOf(4 * small)];
    assert.ok(a > 0 && b < 8 * a, `${unit}: ${a} -> ${b} characters`);
  }
}
