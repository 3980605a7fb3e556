/**
 * The scanner against labelled data nobody here wrote (`../shared/data/injection/dev/`): asserts the targets
 * of the signature pass alone and prints the scores, so a regression fails and the numbers are visible.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DEV_DIR,
  evaluate,
  formatReport,
  fpr,
  loadRows,
  recall,
  type Report,
  signatures,
} from "../scripts/eval.ts";
import { sharedData } from "./_shared_data.ts";

/** These tests skip, saying which data is missing, where ../shared/data is absent. */
const needsData = { skip: sharedData("injection/dev", "the injection-detection yardstick").skip };

// ---------------------------------------------------------------------------------------------------------
// scan on the labelled dev data
// ---------------------------------------------------------------------------------------------------------

test("DEV_DIR: the labelled dev data is where the eval expects it", needsData, () => {
  assert.ok(loadRows(DEV_DIR).size >= 4, `expected the labelled files in ${DEV_DIR}`);
});

let report: Report | undefined;
const load = async (): Promise<Report> => report ??= await evaluate(loadRows(), signatures, 3);

test("scan: on the dev data, false positives are at most 1% over all benign rows", needsData, async () => {
  const r = await load();
  console.log(formatReport("signature pass alone (dev)", r));
  assert.ok(r.overall.benign >= 1000, "expected the full dev slice");
  assert.ok(fpr(r.overall) <= 0.01, `FPR ${(100 * fpr(r.overall)).toFixed(2)}% > 1%`);
});

test(
  "scan: on the dev data, false positives are at most 2% on every file with 50 or more benign rows",
  needsData,
  async () => {
    const r = await load();
    for (const [file, s] of Object.entries(r.files)) {
      if (s.benign < 50) continue;
      assert.ok(fpr(s) <= 0.02, `${file}: FPR ${(100 * fpr(s)).toFixed(2)}% > 2%`);
    }
  },
);

test(
  "scan: on the dev data, recall is at least 50% overall (target), and no regression below 85% (where it stands)",
  needsData,
  async () => {
    const r = await load();
    const overall = recall(r.overall);
    console.log(`overall recall ${(100 * overall).toFixed(1)}%, FPR ${(100 * fpr(r.overall)).toFixed(2)}%`);
    assert.ok(overall >= 0.5, `recall ${(100 * overall).toFixed(1)}% < 50%`);
    assert.ok(overall >= 0.85, `recall regressed to ${(100 * overall).toFixed(1)}%`);
  },
);

test(
  "scan: on the dev data, every file with injections is caught at least half the time",
  needsData,
  async () => {
    const r = await load();
    for (const [file, s] of Object.entries(r.files)) {
      if (s.injections === 0) continue;
      assert.ok(recall(s) >= 0.5, `${file}: recall ${(100 * recall(s)).toFixed(1)}%`);
    }
  },
);
