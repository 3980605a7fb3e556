// Checks shared by the tests of the scanner's second readings (scan_ansi_test.ts: text as a terminal shows it;
// scan_decode_test.ts: text decoded), which must find what the plain reading would and agree across entry points.
import assert from "node:assert/strict";
import { scan } from "../scan.ts";
import { candidateRules, findsIn, SCAN_CONTEXTS, scanInSegments, scannerIn } from "../_scan/scan.ts";
import type { ScanResult } from "../types.ts";

/** The `instruction_override` finding of `result`, which must be there (`name` says which case it was). */
export function overrideFinding(
  result: ScanResult,
  name: string,
): { start: number; end: number; excerpt: string } {
  const f = result.findings.find((f) => f.category === "instruction_override");
  assert.ok(f !== undefined, `${name}: no instruction_override in ${JSON.stringify(result)}`);
  return f;
}

/** Each case's text, scanned in every context, has an `instruction_override` spanning exactly `span` of it. */
export function assertOverrideSpans(cases: readonly [name: string, text: string, span: string][]): void {
  for (const [name, text, span] of cases) {
    for (const context of SCAN_CONTEXTS) {
      const f = overrideFinding(scan(text, { context }), `${name} (${context})`);
      assert.equal(text.slice(f.start, f.end), span, `${name} (${context})`);
    }
  }
}

/**
 * Every entry point reads each text as `scan` does, in every context: `findsIn`, `scannerIn` (or its
 * "nothing" when clean), the rule screen (which must not clear a text `scan` blocks) and a read in windows of a
 * few dozen characters, with the findings of a whole read.
 */
export function assertEntryPointsAgree(texts: readonly string[]): void {
  for (const context of SCAN_CONTEXTS) {
    const finds = findsIn(context);
    const scanner = scannerIn(context);
    for (const text of texts) {
      const expected = scan(text, { context });
      const at = `${JSON.stringify(text)} (${context})`;
      assert.equal(finds(text), expected.blocked, at);
      const scanned = scanner(text);
      if (scanned === null) assert.equal(expected.blocked, false, at);
      else assert.deepEqual(scanned, expected, at);
      if (expected.blocked) assert.notEqual(candidateRules(text, { context }), 0, at);
      assert.deepEqual(scanInSegments(text, { context }, 48), expected, at);
    }
  }
}
