// bench/_harness.ts's measuring helpers, which every benchmark and measuring script reports through.
import { test } from "node:test";
import process from "node:process";
import assert from "node:assert/strict";
import { cpuMs, median } from "../bench/_harness.ts";

test("median: the middle value, the mean of the two middle ones, NaN for none; the input keeps its order", () => {
  const odd = [3, 1, 2];
  assert.equal(median(odd), 2);
  assert.deepEqual(odd, [3, 1, 2]);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([10, 9, 2]), 9); // numeric order: the default string order would give 2
  assert.equal(median([7]), 7);
  assert.ok(Number.isNaN(median([])));
});

test("cpuMs is process.cpuUsage() (user and system) in milliseconds", () => {
  const ms = ({ user, system }: { user: number; system: number }) => (user + system) / 1000;
  const before = ms(process.cpuUsage());
  const read = cpuMs();
  const after = ms(process.cpuUsage());
  assert.ok(before <= read && read <= after, `${before} <= ${read} <= ${after}`);
  assert.ok(read > 0);
});
