import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSchema } from "../validate.ts";
import { PatternUnchecked, safeTest } from "../_schema/values.ts";
import { failsQuietly } from "../_schema/linear_regexp.ts";

// Values long enough that V8's backtracking engine throws "Maximum call stack size exceeded" testing them
// (each group a repeat enters saves its capture on the engine's stack: 32 of them around `a|b` throw from about
// 260 000 characters, where `^(?:a|b)*$` took 8.4 M and seconds of the linear matcher to answer; a capture
// inside a repeat that chooses, `^(?:(a)|b)*$`, would go to the linear matcher and never reach the engine);
// JavaScriptCore answers "no" instead, asked again: either way the answer must be the pattern's, never the
// throw read as "no match".
const AB = "^" + "(".repeat(32) + "a|b" + ")".repeat(32) + "*$";

/**
 * `unit` repeated `times` times, or 2, 4 or 8 times as often, the first that V8's engine throws on testing
 * `pattern`: its backtracking stack is 64 MB of 4-byte entries on every platform (x64, arm64, Windows), but a
 * V8 that pushed fewer entries a character would answer the value itself and every test here would pass
 * without reaching the code it is about. JavaScriptCore is not asked (its quiet "no" costs seconds a value; it
 * gave it from about 130 000 characters of AB whatever the thread's stack size, here and under
 * BUN_JSC_maxPerThreadStackUsage from 1 MB to 256 MB).
 */
function pastTheStack(pattern: string, unit: string, times: number): string {
  if (failsQuietly()) return unit.repeat(times);
  for (let n = times; n <= 8 * times; n *= 2) {
    const value = unit.repeat(n);
    try {
      new RegExp(pattern, "u").test(value);
    } catch {
      return value;
    }
  }
  throw new Error(
    `V8 tested ${pattern} on ${8 * times * unit.length} characters without running out of stack`,
  );
}

const MATCHING = pastTheStack(AB, "ab", 300_000);
const FAILING = MATCHING + "c";
/** JavaScriptCore runs a second or more on each value before its "no": past Bun's default of 5 s when busy. */
const SLOW = { timeout: 120_000 };

for (const codegen of [true, false]) {
  test(`a value the engine cannot test is judged by the pattern (codegen ${codegen})`, SLOW, () => {
    const check = compileSchema({ type: "string", pattern: AB }, { codegen });
    assert.deepEqual(check(MATCHING), []);
    const [finding] = check(FAILING);
    assert.equal(finding.code, "argument_constraint");
  });

  test(`under not, a value the engine cannot test is refused (codegen ${codegen})`, SLOW, () => {
    const check = compileSchema({ type: "string", not: { pattern: AB } }, { codegen });
    assert.equal(check(MATCHING).length, 1);
  });
}

test("propertyNames and patternProperties judge a key the engine cannot test", SLOW, () => {
  const names = compileSchema({ type: "object", propertyNames: { not: { pattern: AB } } });
  assert.equal(names({ [MATCHING]: 1 }).length, 1);
  const props = compileSchema({ type: "object", patternProperties: { [AB]: { type: "integer" } } });
  assert.equal(props({ [MATCHING]: "x" }).length, 1);
});

test("a pattern left native is judged by itself past the engine's stack", SLOW, () => {
  // (V8 throws from about 4.8 M characters of this one; a second group around it goes to the linear matcher)
  const check = compileSchema({ type: "string", pattern: "^(-[a-z]+)*$" });
  assert.deepEqual(check(pastTheStack("^(-[a-z]+)*$", "-a", 3_000_000)), []);
});

/** A pattern whose engine fails on every value, as V8's does on a long enough one. */
class Failing extends RegExp {
  override test(): boolean {
    throw new RangeError("Maximum call stack size exceeded");
  }
}

test("where the engine fails, the linear matcher answers, or the value is unchecked, never unmatched", () => {
  assert.equal(safeTest(new Failing("^(?:a|b)*$", "u"), "abba"), true);
  assert.equal(safeTest(new Failing("^(?:a|b)*$", "u"), "abc"), false);
  // (the i flag: the linear matcher does not read it)
  assert.throws(() => safeTest(new Failing("^(?:a|b)*$", "iu"), "abba"), PatternUnchecked);
});

/** A pattern whose engine answers "no" to every value, as JavaScriptCore's does where its stack runs out. */
class Quiet extends RegExp {
  override test(): boolean {
    return false;
  }
}

test("a no from an engine that fails quietly, on a long value, is asked again; V8's no is an answer", () => {
  // JavaScriptCore answered no on 2 M characters of `^(?:a|b)*(?!xy)$`, which match (6 s on this machine), and
  // the matcher, which reads no lookahead of two characters, could not say otherwise: under not, the forbidden
  // value went by. V8 throws where it fails: its no is taken as it is (asked again, a costly pattern was
  // refused as unchecked after seconds where the engine said no at once).
  const long = "ab".repeat(50_000);
  const unreadable = new Quiet("^(?:a|b)*(?!xy)$", "u");
  const readable = new Quiet("^(?:a|b)*$", "u");
  if (failsQuietly()) {
    // a pattern the matcher cannot read is unchecked; one it reads is answered by it
    assert.throws(() => safeTest(unreadable, long), PatternUnchecked);
    assert.equal(safeTest(readable, long), true);
  } else {
    assert.equal(safeTest(unreadable, long), false);
    assert.equal(safeTest(readable, long), false);
  }
  // a short value is the engine's answer on both
  assert.equal(safeTest(unreadable, "abab"), false);
});
