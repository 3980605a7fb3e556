/**
 * The linear-time matcher decides the assertions it can read from the characters beside a position (`\b`,
 * `\B`, a lookaround of one character or class), counts a repeat of one set instead of copying it, and reads
 * the `s` and `m` flags: differential tests against the native engine (short strings, where its answer comes
 * quickly). That a long string is then read once: pattern_search_test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { boundedRegExp, linearRegExp } from "../_schema/linear_regexp.ts";
import { seededRandom } from "./_random.ts";
import { evalCommand } from "./_runtime.ts";

const rnd = seededRandom(69);
const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];

const SETS = [
  "a",
  "b",
  "1",
  "x",
  " ",
  "\\n",
  ".",
  "\\d",
  "\\w",
  "\\W",
  "\\s",
  "\\D",
  "[ab]",
  "[^a]",
  "[a-z1]",
  "😀",
];
const LOOKS = ["(?=", "(?!", "(?<=", "(?<!"];
const QUANTS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "{0,2}", "*?", "+?"];

/** An assertion the matcher decides from the characters beside a position, or one it lacks (two characters). */
function assertion(): string {
  const r = rnd();
  if (r < 0.4) return pick(["\\b", "\\B", "^", "$"]);
  if (r < 0.9) return pick(LOOKS) + pick(SETS) + ")";
  return pick(LOOKS) + pick(SETS) + pick(SETS) + ")"; // (native: the matcher lacks it)
}

/** A random pattern of sets, assertions, groups and repeats, `depth` groups deep. */
function pattern(depth = 0): string {
  const sequence = () => {
    let out = "";
    for (let i = 1 + Math.floor(rnd() * 4); i > 0; i--) {
      const r = rnd();
      if (r < 0.25) out += assertion();
      else if (r < 0.35 && depth < 2) out += `(?:${pattern(depth + 1)})` + pick(QUANTS);
      else out += pick(SETS) + pick(QUANTS);
    }
    return out;
  };
  return rnd() < 0.2 ? `${sequence()}|${sequence()}` : sequence();
}

/** A random string of up to `most` characters from those the patterns name, and a few more. */
function text(most: number): string {
  let s = "";
  for (let i = Math.floor(rnd() * (most + 1)); i > 0; i--) {
    s += pick(["a", "b", "1", "x", " ", "\n", "😀", "A", "_", "\r", "\u2028", "-"]);
  }
  return s;
}

test("the linear-time matcher answers as the native engine, assertions and flags included", () => {
  let matched = 0;
  let asserted = 0;
  let refused = 0;
  for (let p = 0; p < 3_000; p++) {
    const source = pattern();
    for (const flags of ["u", "", "us", "um", "usm", "s", "m"]) {
      let native: RegExp;
      try {
        native = new RegExp(source, flags);
      } catch {
        continue; // (a quantified lookbehind, or with `u` a quantified lookahead)
      }
      const linear = linearRegExp(source, { flags });
      let bounded: RegExp;
      try {
        bounded = boundedRegExp(source, native, { shortNative: false });
      } catch {
        refused++; // (a repeated group with syntax the matcher lacks: refused as before)
        bounded = native;
      }
      if (linear !== null) {
        matched++;
        if (/\\[bB]|\(\?<?[=!]/.test(source)) asserted++;
      }
      for (let j = 0; j < 12; j++) {
        const s = text(10);
        const want = native.test(s);
        const where = `/${source}/${flags} on ${JSON.stringify(s)}`;
        if (linear !== null) assert.equal(linear.test(s), want, where);
        assert.equal(bounded.test(s), want, `bounded ${where}`);
      }
    }
  }
  assert.ok(
    matched > 12_000 && asserted > 5_000 && refused < matched / 20,
    `${matched} matched, ${asserted} with assertions, ${refused} refused`,
  );
});

test("a counted repeat of one set runs on a count per thread, as the native engine answers", () => {
  // past 64 the repeat is one instruction that keeps where its threads entered, not a copy per count
  let runs = 0;
  for (let p = 0; p < 500; p++) {
    const min = pick([0, 1, 2, 63, 65, 66, 70]);
    const max = pick([min, min + 1, min + 5, 66, 68, 80, Infinity]);
    if (max < min) continue;
    const count = max === Infinity ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
    const lead = pick(["", "", "\\b", "\\B", "(?=1)", "(?!a)", "(?<=a)", "(?<!1)", "a", "^", "(?:a|1)"]);
    const tail = pick(["", "b", "$", "\\b", "(?!1)", "1{66}b", "(?:1{70})?b"]);
    const source = `${lead}${pick(["1", "\\d", "[^b]", ".", "\\w"])}${count}${tail}`;
    for (const flags of ["u", ""]) {
      const native = new RegExp(source, flags);
      const linear = linearRegExp(source, { flags });
      assert.notEqual(linear, null, source);
      for (let j = 0; j < 20; j++) {
        let s = "";
        for (let k = Math.floor(rnd() * 4); k >= 0; k--) {
          s += pick(["1", "a", "b", " ", "😀"]).repeat(rnd() * 150);
        }
        assert.equal(linear!.test(s), native.test(s), `/${source}/${flags} on ${s.length} characters: ${s}`);
        runs++;
      }
    }
  }
  assert.ok(runs > 15_000, `${runs} runs`);
});

test("alternatives of one set each that share no character are read as one set, as the native engine answers", () => {
  // `(?:a|b){2,5000}c` was refused as too large for the matcher (a copy of the choice per count); it is
  // `[ab]{2,5000}c`, which a backtracking engine reads as it reads the class. Alternatives that share a
  // character (`\\w|a`, or with `i` `a|A`) stay alternatives.
  const long = "ab".repeat(3_000);
  for (
    const [source, flags] of [["(?:a|b){2,5000}c", "u"], ["^(?:a|b|\\d){2,5000}$", "u"], [
      "(?:a|b){2,5000}c",
      "",
    ]]
  ) {
    const native = new RegExp(source, flags);
    const bounded = boundedRegExp(source, native);
    for (const s of [long, long + "c", "ac", "a1", long.slice(1) + "1", "abab"]) {
      assert.equal(bounded.test(s), native.test(s), `/${source}/${flags} on ${s.length} characters`);
    }
  }
  let folded = 0;
  const apart = ["a", "b", "1", " ", "\\n", "[xy]", "😀", "\\s"];
  for (let p = 0; p < 300; p++) {
    const alts = [...apart].sort(() => rnd() - 0.5).slice(0, 2 + Math.floor(rnd() * 2));
    // one that shares characters (its native engine then explodes on a long run: short strings only)
    const sharing = rnd() < 0.25;
    if (sharing) alts.push(pick(["\\w", ".", "[^a]", "\\S", "a"]));
    const source = pick(["", "^", "\\b", "x"]) + `(?:${alts.join("|")})` +
      pick(["*", "+", "{2}", "{1,3}", "{70}", "{2,90}", "{0,5000}"]) + pick(["", "$", "b", "\\B", "(?!a)"]);
    for (const flags of ["u", "", "us", "ui", "i"]) {
      const native = new RegExp(source, flags);
      const linear = linearRegExp(source, { flags });
      let bounded: RegExp;
      try {
        bounded = boundedRegExp(source, native, { shortNative: false });
        if (flags === "u" && !sharing && source.includes("{0,5000}")) folded++;
      } catch {
        continue; // (a choice that shares characters, copied too often, or with `i`: refused as before)
      }
      for (let j = 0; j < 12; j++) {
        const s = text(12) + (sharing ? "" : pick(["", "ab".repeat(40), "1".repeat(80), "\n 1".repeat(30)]));
        const where = `/${source}/${flags} on ${JSON.stringify(s)}`;
        if (linear !== null) assert.equal(linear.test(s), native.test(s), where);
        assert.equal(bounded.test(s), native.test(s), `bounded ${where}`);
      }
    }
  }
  assert.ok(folded > 15, `${folded} of {0,5000} compiled`);
});

test("with the s or m flag the matcher answers as the native engine; with i a risky pattern is refused", () => {
  // The matcher read `.` as no line end and `^`/`$` at the ends only, whatever the flags: a pattern it took
  // with `s` or `m` (calling boundedRegExp directly: schemas get `u` or none) answered otherwise.
  const cases: [string, string, string][] = [
    ["^(?:a|a)*.$", "s", "\n"],
    ["^(?:a|a)*$", "m", "b\naa"],
    ["^(?:a|a)*$", "um", "aa\u2028b"],
    ["x.*y.*z", "s", "x\ny\nz"],
  ];
  for (const [source, flags, s] of cases) {
    const native = new RegExp(source, flags);
    assert.equal(
      boundedRegExp(source, native, { shortNative: false }).test(s),
      native.test(s),
      `/${source}/${flags}`,
    );
  }
  // the matcher does not fold case: the pattern is refused, saying what to write instead
  assert.throws(
    () => boundedRegExp("^(?:a|a)*$", /^(?:a|a)*$/i),
    /i flag; write both cases into the pattern/,
  );
  // a polynomial one keeps the native engine (cut at its ends), bounded
  const polynomial = /a*a*b/i;
  assert.equal(boundedRegExp("a*a*b", polynomial).test("aAB"), true);
});

test("importing validate.ts runs no regular expression: the matcher asks the engine about pairs on first use", () => {
  // the matcher's question (does this engine search between the halves of a pair?) ran at import, against
  // the rule that a module does no work at load
  const url = new URL("../validate.ts", import.meta.url).href;
  const { command, args } = evalCommand(
    "let runs = 0; const exec = RegExp.prototype.exec; RegExp.prototype.exec = function (...a) { runs++; " +
      `return exec.apply(this, a); }; await import(${JSON.stringify(url)}); console.log(runs);`,
  );
  const r = spawnSync(command, args, { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "0");
});
