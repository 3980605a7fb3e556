/**
 * A schema pattern not anchored at an end is searched for from every start of the string: a repeat there
 * that a run of its characters feeds is read again from each start, n^2 steps on the native engine. Counted,
 * not timed: which patterns the native engine is handed the long text with, and how often.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  answersLinearly,
  boundedRegExp,
  failsQuietly,
  linearRegExp,
  MatchTooCostly,
} from "../_schema/linear_regexp.ts";
import { countingWork } from "./_counting.ts";
import { forgetFailedTest, safeTest } from "../_schema/values.ts";
import { createValidator, validate } from "../validate.ts";
import { caseStray } from "../_mcp/judge.ts";
import { seededRandom } from "./_random.ts";

/** A validator of one tool whose argument `a` must match `pattern` (the scanner off: it reads `a` too). */
const validator = (pattern: string) =>
  createValidator([{
    name: "t",
    input_schema: { type: "object", properties: { a: { type: "string", pattern } } },
  }], { scan: false });

/**
 * Asserts that `validator(pattern)` judges `text` as the native engine does, the pattern compiled as the
 * validator compiles it (with `u`, else without); one this engine cannot compile is skipped (Bun's takes no
 * count past 2^31 - 1).
 */
const judgesAsNative = (pattern: string, text: string) => {
  let native: RegExp;
  try {
    native = new RegExp(pattern, "u");
  } catch {
    try {
      native = new RegExp(pattern);
    } catch {
      return;
    }
  }
  const [call] = validator(pattern).validate([{ name: "t", arguments: { a: text } }]).calls;
  assert.equal(call.allowed, native.test(text), `/${pattern}/${native.flags} on ${JSON.stringify(text)}`);
};

/** `v`'s verdict on `text` and how often the native engine was asked of a long value (100 000 units or more). */
const withNativeAsks = (v: ReturnType<typeof validator>, text: string) =>
  countingWork(
    RegExp.prototype,
    "test",
    () => v.validate([{ name: "t", arguments: { a: text } }]).calls[0],
    (_, [s]) => String(s).length >= 100_000 ? 1 : 0,
  );

/** The sources of the regular expressions handed `text` while `pattern` judges it through validate(). */
async function handed(pattern: string, text: string): Promise<{ sources: string[]; message: string }> {
  const v = validator(pattern);
  const sources: string[] = [];
  const [call] = await countingWork(
    RegExp.prototype,
    "exec",
    () => v.validate([{ name: "t", arguments: { a: text } }]).calls[0],
    (self: RegExp, [t]: string[]) => t === text ? sources.push(self.source) : 0,
  );
  assert.equal(call.allowed, false, pattern);
  return { sources, message: call.findings.map((f) => f.message).join(" ") };
}

test("a repeat of a set at an unanchored end of a pattern is cut to its least count before a search", async () => {
  // `\d+b` on 100 000 digits took 7.2 s in validate() (n^2/2 steps, twice: once to decide, once to report);
  // `\d{1,30001}b` 12.5 s. A match of `\d+b` holds one of `\db` at its last digit, and one of `a\d*` holds
  // `a`: only whether a match starts somewhere is asked, so the engine is handed the cut pattern, once (the
  // reporting function reuses the deciding one's "no").
  const ones = "1".repeat(20_000);
  const cases: [string, string, string][] = [
    // [pattern, a long text it refuses, what the native engine is handed]
    ["\\d+b", ones, "(?:\\d)b"],
    ["[a-z]+@", "a".repeat(20_000), "(?:[a-z])@"],
    ["\\s+$", " ".repeat(19_999) + "x", "(?:\\s)$|(?!)"],
    [".*x", "a".repeat(20_000), "x"],
    ["\\d+b$", ones.slice(1) + "c", "(?:\\d)b$|(?!)"],
    ["\\d{1,30001}b", ones, "(?:\\d)b"],
    ["\\d{2,5}b", ones, "(?:\\d){2}b"],
    ["a\\d*", ones, "a"],
    ["x|\\d+b", ones, "x|(?:\\d)b"], // each alternative's ends
    ["\\d*\\s*b\\w+?", ones, "b(?:\\w)"], // again while what is cut can be empty
    ["\\d\\d+b", ones, "\\d(?:\\d)b"], // after sets that take what it takes
    ["\\d\\d{1,30001}b", ones, "\\d(?:\\d)b"], // (too large for the linear-time matcher)
    ["(?:\\d){1,30001}b", ones, "(?:(?:\\d))b"], // a group of one set is that set
    // syntax the reader lacks after what is cut: a start moved right meets it at the same place
    ["\\d+(?=b)", ones, "(?:\\d)(?=b)"],
    ["\\d+\\bx", ones, "(?:\\d)\\bx"],
    ["\\d\\d+(?<!x)b", ones, "\\d(?:\\d)(?<!x)b"],
  ];
  for (const [pattern, text, cut] of cases) {
    const { sources, message } = await handed(pattern, text);
    assert.deepEqual(sources, [cut], pattern);
    assert.ok(message.includes(`pattern ${pattern}.`), message); // the pattern as written
  }
});

test("a repeat a search reaches from many starts, which no cut removes, runs on the linear-time matcher", async () => {
  // A repeat after an item that takes some of its characters, or a repeated group, is fed by the same run
  // from each start (`\d\w+x` on 20 000 digits: 2 x 2e8 steps native); past a length the matcher reads the
  // text once (one code point at a time), and the reporting function reuses the deciding one's answer.
  const cases: [string, string][] = [
    ["\\d\\w+x", "1".repeat(20_000)],
    ["(?:ab)+c", "ab".repeat(10_000)],
    ["f.*o", "f".repeat(20_000)],
  ];
  for (const [pattern, text] of cases) {
    assert.deepEqual((await handed(pattern, text)).sources, [], pattern);
    const v = validator(pattern);
    const [, read] = await countingWork(
      String.prototype,
      "codePointAt",
      () => v.validate([{ name: "t", arguments: { a: text } }]),
    );
    assert.ok(read >= text.length && read < 1.5 * text.length, `${pattern}: ${read} code points read`);
  }
  // reached from one start of a run: the native engine, linear there
  const native = new RegExp("ab\\d+c", "u");
  assert.equal(boundedRegExp("ab\\d+c", native), native);
});

test("what a cut keeps is not read together with the escape beside it", () => {
  // With `u` each half of a pair written alone is a code point of its own, and `\uD83D+\uDE00` matches
  // nothing: cut to `\uD83D\uDE00` it was the pair and let the emoji by. Without `u`, `\0+1` cut to `\01`
  // was an octal escape: "\x01" let by, "\0" then "1" refused.
  const cases: [string, string][] = [
    ["\\uD83D+\\uDE00", "😀"],
    ["\uD83D+\uDE00", "😀"], // written, not escaped
    ["\\uD83D[\\uD83D]*\\uDE00", "a😀"], // after a set that takes what it takes
    ["\\0+1]", "\u00001]"],
    ["\\0+1]", "\u0001]"],
    ["\\0\\0*1\\-", "\u00001-"],
    // nor a group that captures cut away from its back-reference: `(a)*\1b` cut to `\1b` is an octal escape
    ["(a)*\\1b\\-", "b-"],
    ["(a)*\\1b\\-", "\u0001b-"],
    ["(\\d)+\\1\\-", "12-"],
  ];
  for (const [pattern, text] of cases) judgesAsNative(pattern, text);
});

test("a count of many digits is read as a count, not as text a cut may split", () => {
  // Without `u` (as `\-` makes the validator compile it) the reader took a count of over ~20 digits for
  // text: `x{1,99999999999999999999999}?` ended, it read, with `}?`, and that cut left `x{1,9999...9`, text
  // the native engine then searched for: "x" was refused. A least count past 2^53 is not cut (it would be
  // written back as `1e+23`).
  const cases: [string, string][] = [
    ["\\-x{1,99999999999999999999999}?", "-x"],
    ["\\-x{0000000000000000000000001}b?", "-x"],
    ["\\-\\d{100000000000000000000000,}b", "-1{1e+23}b"],
    ["\\d+b{0000000000000000000000001}?", "1b"],
  ];
  for (const [pattern, text] of cases) judgesAsNative(pattern, text);
});

test("a cut that leaves a fixed run before $ answers as the pattern as written", () => {
  // V8 15 (Deno 2.9), with `u`, refuses what a fixed run of characters before `$` takes where a class in it
  // can take a pair (Node and Bun do not): `[\S]+$`, cut to `(?:[\S])$`, refused "😀".
  const cases: [string, string][] = [
    ["[\\S]+$", "😀"],
    ["[\\s\\S]{2,}$", "a😀"],
    ["[\\W][\\W]+$", "😀😀"], // after sets that take what it takes
    ["x|[\\P{L}]+$", "1😀"],
    ["[\\W\\d]{2,}(?:$)", "ſ\u0001𝟘"],
    ["[\\D]+(?!x)$", "😀"], // (the opening items of a pattern the reader cannot read whole)
  ];
  for (const [pattern, text] of cases) {
    const [call] = validator(pattern).validate([{ name: "t", arguments: { a: text } }]).calls;
    assert.equal(call.allowed, true, `/${pattern}/u on ${JSON.stringify(text)}`);
  }
});

test("a cut pattern answers as the pattern as written, whatever the flags", () => {
  const rnd = seededRandom(68);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const shapes = [
    "\\d+b",
    "[a-z]+@",
    "\\s+$",
    ".*x",
    "\\d+b$",
    "\\d{1,30}b",
    "\\d{2,5}b",
    "a\\d*",
    ".*",
    "a*|b",
    "x|\\d+b|c\\s*",
    "(a)\\w+?b*",
    "[^a]{2,}(?:ab)",
    "\\S+\\s+",
    "\\d+\\d+",
    "^a|b+a",
    "\\p{L}+1",
    ".{0,3}\\n",
    "[ab]+[ab]",
    "😀+a",
    "A+\\.",
    "\\d\\d+b",
    ".\\w*x",
    "[ab]a{2,}c",
    "\\d\\w+x",
    "[^a][A-Z]+b", // with `i`, `[^a]` takes no "A"
    "\\uD83D+\\uDE00",
    "\\0+1",
    "\\d+(?=b)",
    "\\w\\w*\\b",
    "\\s+\\B.",
  ];
  let cut = 0;
  for (const shape of shapes) {
    for (const flags of ["u", "ui", "us", "", "i", "s"]) {
      let native: RegExp;
      try {
        native = new RegExp(shape, flags);
      } catch {
        continue; // (\p{L} without u)
      }
      const bounded = boundedRegExp(shape, native, { shortNative: false });
      if (bounded !== native) cut++;
      for (let j = 0; j < 300; j++) {
        let s = "";
        for (let i = Math.floor(rnd() * 9); i > 0; i--) {
          s += pick(["a", "A", "b", "1", " ", "\n", "x", "@", "😀", ".", "B", "\0", "\x01"]);
        }
        assert.equal(bounded.test(s), native.test(s), `/${shape}/${flags} on ${JSON.stringify(s)}`);
      }
    }
  }
  assert.ok(cut > 90, `only ${cut} cut`);
  // `^.*\s+$` is no `^.*\s$`: `.` does not take the "\n" the repeat gives up
  const pattern = "^.*\\s+$";
  assert.equal(boundedRegExp(pattern, new RegExp(pattern, "u")).test("a\n\n"), true);
});

test("a long string's failed test is reused only for the same pattern and the same string", () => {
  const ones = "1".repeat(1_000);
  const tests: string[] = [];
  const counted = new RegExp("b$", "u");
  counted.test = function (s: string) {
    tests.push(s.slice(-1));
    return RegExp.prototype.test.call(this, s);
  };
  assert.equal(safeTest(counted, ones), false); // run
  assert.equal(safeTest(/1$/u, ones), true, "another pattern");
  assert.equal(safeTest(new RegExp("b$"), ones), false, "other flags"); // remembered in place of the first
  assert.equal(safeTest(counted, ones), false); // run again
  assert.equal(safeTest(counted, ones), false); // reused
  assert.equal(safeTest(counted, ones.slice(1) + "b"), true, "another string"); // run
  assert.deepEqual(tests, ["1", "1", "b"]);
});

test("a long value that failed its pattern with no report is not kept past the call", async () => {
  // Under `not` (or `anyOf`, `if`, an MCP key test) a failed test is asked again by no report, and the
  // string stayed remembered, megabytes in a long-lived relay, until the next long string failed.
  const long = "1".repeat(1_000) + "x";
  /** Whether `safeTest` runs the test of `source`/u on `long` rather than answering from what it kept. */
  const runs = (source: string) => {
    let ran = false;
    const re = new RegExp(source, "u");
    re.test = function (s: string) {
      ran = true;
      return RegExp.prototype.test.call(this, s);
    };
    assert.equal(safeTest(re, long), false);
    forgetFailedTest(); // (its own "no" is not what is asked)
    return ran;
  };
  const schema = { type: "object", properties: { a: { not: { type: "string", pattern: "b$" } } } };
  const [call] = createValidator([{ name: "t", input_schema: schema }], { scan: false })
    .validate([{ name: "t", arguments: { a: long } }]).calls;
  assert.equal(call.allowed, true);
  assert.ok(runs("b$"), "kept past validate()");
  assert.equal((await validate("t", schema, { a: long })).valid, true);
  assert.ok(runs("b$"), "kept past vet's validate");
  const tools = [{
    name: "t",
    inputSchema: { type: "object", patternProperties: { "^1+$": { type: "object" } } },
  }];
  assert.equal(caseStray({ name: "t", arguments: { [long]: {} } }, tools), undefined);
  assert.ok(runs("^1+$"), "kept past an MCP key test");
});

test("a pattern led by an assertion, or with a wide counted repeat, reads a long string once", async () => {
  // Each was searched natively from every start: 100 000 digits took 3-8 s (`\d.\d{1,30001}b` 9 s). On the
  // matcher the native engine is never handed the string, and each character is read a bounded number of times.
  const digits = "1".repeat(100_000);
  const cases = [
    "(?=\\d)\\d+b",
    "(?!x)\\d+b",
    "\\B\\d+b",
    "\\b\\d+b",
    "(?<=\\d)\\d+b",
    "(?<!x)\\d+b",
    "\\d.\\d{1,30001}b",
    "\\d\\w{1,30001}x",
    // a count of one way is read from every start too (1 001 and 5 000 steps a start: 0.3-2 s natively),
    // and `{5000,5001}` is cut to one way
    "\\d{1001}x",
    "\\d{5000,5001}x",
    // and so from a few hundred on (see the next test): at a thousand, `\B.{1000}x` took 1.5 s natively on
    // 50 000 emoji
    "\\B.{1000}x",
    "\\d{1000}x",
    "\\d{301}x",
    // a group of one set is that set: `\B(?:.){1000}x` stayed native (1.3 s on 100 000 characters)
    "\\B(?:.){1000}x",
    "\\d.(?:\\d){1,30001}b",
  ];
  for (const pattern of cases) {
    const v = validator(pattern);
    const handed: string[] = [];
    const [[call], read] = await countingWork(
      String.prototype,
      "codePointAt",
      () =>
        countingWork(
          RegExp.prototype,
          "exec",
          () => v.validate([{ name: "t", arguments: { a: digits } }]).calls[0],
          (self: RegExp, [t]: string[]) => t === digits ? handed.push(self.source) : 0,
        ),
    );
    assert.equal(call.allowed, false, pattern);
    assert.deepEqual(handed, [], `${pattern}: the native engine was handed the long string`);
    assert.ok(read >= digits.length && read <= 3 * digits.length, `${pattern}: ${read} code points read`);
    assert.equal(
      v.validate([{ name: "t", arguments: { a: digits.slice(1) + "b" } }]).calls[0].allowed,
      !pattern.endsWith("x"),
    );
  }
});

test("a search through a count of one set takes the matcher from a count set by the engine", () => {
  // V8 (which searches between the halves of a pair) breaks even near a count of 100, on emoji with `u`;
  // JavaScriptCore, whose native steps cost a fifth, takes the matcher from 200: from 100 its searches through
  // `.{150}.{0,9}\d` on 100 000 characters took the matcher 200-530 ms, the native engine 44-64. Which engine
  // answers, and the same answer.
  const v8 = /\B/u.test("a\u{1F600}b");
  const cases: [string, boolean][] = [
    ["\\d{100}x", false],
    ["\\d{101}x", v8],
    ["\\B.{200}x", v8],
    [".{150}.{0,9}\\d", v8],
    ["\\B.{201}x", true],
    ["\\d{1000}x", true],
  ];
  for (const [pattern, matcher] of cases) {
    const native = new RegExp(pattern, "u");
    const bounded = boundedRegExp(pattern, native);
    assert.equal(bounded !== native, matcher, `${pattern} on the matcher`);
    for (
      const s of ["1".repeat(1_200), "1".repeat(1_200) + "x", "😀".repeat(400) + "x", "a".repeat(150) + "1"]
    ) {
      assert.equal(bounded.test(s), native.test(s), `${pattern} on ${s.length}`);
    }
  }
});

test("a search through a wide count of a group that reads one way runs on the matcher, on a counter", async () => {
  // The native engine searched `(?:ab){1001}x` from every start: 2 002 steps a start, 7 s on 100 000
  // characters. The matcher counts a group of a few sets read one way as it counts one set, each character
  // read once and a few threads alive (copied once a count, it ran out of its steps there).
  const long = "ab".repeat(10_000);
  const cases = [
    "(?:ab){1001}x",
    "(?:(?:ab){10}){201}x",
    "(?:[a-z]{2}){250}[ab]?x",
    "\\B(?:a\\w){1,300}x",
    // (a count of a hundred or fewer that spans thousands of characters: `(?:[a-z]{64}){100}x` took V8 17 s on
    // 300 000 characters, searched natively)
    "(?:[a-z]{16}){100}x",
    "(?:\\w{64}){4}x",
  ];
  for (const pattern of cases) {
    const v = validator(pattern);
    for (const [text, allowed] of [[long, false], [long + "x", true]] as const) {
      const handed: string[] = [];
      const [[call], read] = await countingWork(
        String.prototype,
        "codePointAt",
        () =>
          countingWork(
            RegExp.prototype,
            "exec",
            () => v.validate([{ name: "t", arguments: { a: text } }]).calls[0],
            (self: RegExp, [t]: string[]) => t === text ? handed.push(self.source) : 0,
          ),
      );
      const message = call.findings.map((f) => f.message).join(" ");
      assert.equal(call.allowed, allowed, `${pattern}: ${message}`);
      assert.doesNotMatch(message, /could not be checked/, pattern);
      assert.deepEqual(handed, [], `${pattern}: the native engine was handed the long string`);
      assert.ok(read <= 3 * text.length, `${pattern}: ${read} code points read`);
    }
  }
  // and answer as the native engine, short strings included (a thread's round starts where it entered)
  for (const pattern of [...cases, "(?:ab){101,}b", "^(?:(?:ab){3})*$", "(?:a\\d){65}(?:\\da){66,}"]) {
    for (
      const s of ["ab".repeat(1001) + "x", "b" + long.slice(0, 2_000) + "x", "ab".repeat(3), "a1".repeat(140)]
    ) {
      const native = new RegExp(pattern, "u");
      assert.equal(boundedRegExp(pattern, native, { shortNative: false }).test(s), native.test(s), pattern);
      assert.equal(
        linearRegExp(pattern)?.test(s) ?? native.test(s),
        native.test(s),
        `${pattern} on ${s.length}`,
      );
    }
  }
  // with a choice inside, still exponential: never native
  const choice = "^(?:(?:a|ab){2})*$";
  assert.notEqual(boundedRegExp(choice, new RegExp(choice, "u")), new RegExp(choice, "u"));
});

test("a pattern whose program keeps thousands of threads alive gives up on a long value, refusing it as unchecked", () => {
  // Counts of a group that can match empty or has alternatives are copied once a count: `(?:a?){5000}x` kept
  // 10 000 instructions alive a character (11 s on 20 000 characters; now one count, `a{0,5000}x`), as
  // `(?:a?b?){2500}x` does, `(?:ab|cd){1,500}x` 8 s on 100 000.
  // The matcher stops at its budget of steps; neither yes nor no is known, and the value is refused. (Without
  // the "x" every match takes, it is "no" unrun.)
  for (
    const [pattern, text] of [["(?:a?b?){2500}x", "a".repeat(2_000) + "x"], [
      "(?:ab|cd){1,500}x",
      "ab".repeat(10_000) + "x",
    ]]
  ) {
    const v = validator(pattern);
    const [call] = v.validate([{ name: "t", arguments: { a: text } }]).calls;
    assert.equal(call.allowed, false, pattern);
    assert.match(
      call.findings[0].message,
      /could not be checked against the pattern .*send a shorter value/,
      pattern,
    );
    assert.equal(call.findings[0].code, "malformed_arguments");
    // a short value is still answered (by the same validator: a second compile cost 0.1-0.2 s)
    assert.equal(
      v.validate([{ name: "t", arguments: { a: text.slice(0, 4) + "x" } }]).calls[0].allowed,
      true,
    );
  }
});

test("counts of wide groups kept alive side by side give up at the budget: each phase they read is counted", async () => {
  // A count of a group of 64 sets reads 64 phases a character, and the budget counted it as one step: 30 such
  // counts side by side (searched from every start) ran 14 times past the budget, 2 s on 20 000 characters,
  // and answered; 1 000 of them took 20 s to refuse 100 000 characters. Phases read are counted through the
  // one built-in the matcher calls per count and character (`every`, over its phases).
  const alts = Array.from(
    { length: 30 },
    (_, i) => `(?:[a-z]{63}[a-y]){65}${String.fromCharCode(0x4e00 + i)}`,
  );
  const matcher = linearRegExp(`(?:${alts.join("|")})`)!;
  const text = "a".repeat(20_000);
  const [outcome, phases] = await countingWork(Array.prototype, "every", () => {
    try {
      return matcher.test(text);
    } catch (e) {
      return e instanceof MatchTooCostly ? "too costly" : e;
    }
  }, (self: unknown[]) => self.length);
  assert.equal(outcome, "too costly");
  assert.ok(phases > 0 && phases <= 4 * (2 ** 21 + 32 * text.length), `${phases} phases read`);
});

test("wide counted repeats side by side run on counts, not refused as too large to copy", async () => {
  // `^a{0,9000}a{0,9000}a{0,9000}$` was refused (27 000 copies, billions of splits natively); `^\d{1,30001}\d*$`
  // kept the native engine, n x 30 001 steps on digits ending in a letter.
  const cases: [string, string, boolean][] = [
    ["^a{0,9000}a{0,9000}a{0,9000}$", "a".repeat(27_000), true],
    ["^a{0,9000}a{0,9000}a{0,9000}$", "a".repeat(27_001), false],
    ["^\\d{1,30001}\\d*$", "1".repeat(100_000) + "x", false],
    ["^\\d{1,30001}\\d*$", "1".repeat(100_000), true],
  ];
  for (const [pattern, text, allowed] of cases) {
    const v = validator(pattern);
    const [call, read] = await countingWork(
      String.prototype,
      "codePointAt",
      () => v.validate([{ name: "t", arguments: { a: text } }]).calls[0],
    );
    assert.equal(call.allowed, allowed, pattern);
    assert.ok(read >= text.length && read <= 2 * text.length, `${pattern}: ${read} code points read`);
  }
});

test("a group repeated on a long value runs on the linear-time matcher on JavaScriptCore only", async () => {
  // JavaScriptCore leaves its compiled code for its interpreter past about 150 000 rounds of a repeated group:
  // `^(?:a|b)*$` took 2.3 s on 2 M characters there (then a "no" asked again), V8 0.05 s; V8 keeps its engine.
  // (`^(?:a|b{20})*$` too, whose program may run out of the matcher's steps: left native, JavaScriptCore's
  // wrong "no" on 2 M "a" was asked again of the matcher, 0.64 s where the matcher alone took 0.24 s)
  // (from 120 000 rounds: fewer, JavaScriptCore is asked first, see the next test)
  const cases: [string, string, number][] = [
    ["^(?:a|b)*$", "ab", 61_000],
    ["^(?:[ab][ab])*$", "abab", 61_000],
    ["^(?:a|b{20})*$", "aa", 61_000],
  ];
  for (const [pattern, unit, times] of cases) {
    const v = validator(pattern);
    for (
      const [text, allowed, matched] of [
        [unit.repeat(times), true, failsQuietly()],
        [unit.repeat(times) + "!", false, failsQuietly()],
        [unit.repeat(1_000), true, false],
      ] as const
    ) {
      const [[call, asked], read] = await countingWork(
        String.prototype,
        "codePointAt",
        () => withNativeAsks(v, text),
      );
      assert.equal(call.allowed, allowed, `${pattern} on ${text.length}`);
      // (the matcher reads each code point; the native engine none through this method)
      assert.equal(read >= text.length, matched, `${pattern} on ${text.length}: ${read} code points read`);
      // (nor is the native engine asked first: a value of odd length, a round every two characters but for
      // one, went to JavaScriptCore's interpreter, 1.1 s for its "no" on 2 M "ab" and "!", then to the matcher)
      if (matched) {
        assert.equal(asked, 0, `${pattern} on ${text.length}: the native engine asked ${asked} times`);
      }
    }
  }
});

test("a value that can take few rounds of a repeated group is asked of JavaScriptCore first", async () => {
  // (JavaScriptCore's compiled code takes about 150 000 rounds, and past them a round costs it about what two
  // characters cost the matcher: on 2 M "b" of `^(?:a|b{20})*$`, 100 000 rounds, it took 60 ms and the matcher
  // 0.5 s; base64's `(?:[A-Za-z0-9+/]{4})*` on a million characters took it 0.5 s, the matcher 1.2 s)
  const base64 = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$";
  const cases: [string, string][] = [
    ["^(?:a|b{20})*$", "b".repeat(120_000)],
    ["^(?:[a-z]{8})*$", "abcdefgh".repeat(15_000)],
    [base64, "QUJD".repeat(30_000)],
    ["^(?:abc|d{40})*$", "abc".repeat(40_000)],
    // (rounds of two of a program that may run out of the matcher's steps: 2 M "ab" took JavaScriptCore 0.97 s,
    // the matcher 1.0 s; of one of few steps, `^(?:[ab][ab])*$` of the test before, 0.86 s and 0.61 s)
    ["^(?:ab|c{40})*$", "ab".repeat(125_000)],
  ];
  for (const [pattern, text] of cases) {
    const v = validator(pattern);
    // (a "no" is asked of the matcher on JavaScriptCore: once is enough)
    const values = pattern === cases[0][0]
      ? [[text, true], [text + "!", false]] as const
      : [[text, true]] as const;
    for (const [value, allowed] of values) {
      const [call, read] = await countingWork(
        String.prototype,
        "codePointAt",
        () => v.validate([{ name: "t", arguments: { a: value } }]).calls[0],
      );
      assert.equal(call.allowed, allowed, `${pattern} on ${value.length}: ${JSON.stringify(call.findings)}`);
      // (the native engine reads no code point through this method; its "no" is asked of the matcher on Bun)
      assert.equal(
        read >= text.length,
        !allowed && failsQuietly(),
        `${pattern} on ${value.length}: ${read} read`,
      );
    }
  }
});

test("a value of a round every three characters of a program of few steps is not asked of JavaScriptCore first", async () => {
  // (its "no" is asked of the matcher too: 2 M "abc" and "!" of `^(?:[a-z]{3})*$` took 0.41 s of CPU,
  // JavaScriptCore's "no" and then the matcher's, where the matcher alone took 0.22 s)
  const v = validator("^(?:[a-z]{3})*$");
  const text = "abc".repeat(130_000) + "!";
  const [call, asked] = await withNativeAsks(v, text);
  assert.equal(call.allowed, false);
  // (V8 keeps its engine, asked once)
  assert.equal(asked, failsQuietly() ? 0 : 1, `the native engine asked ${asked} times`);
});

test("a value of pairs takes a round a character, not a code unit, on JavaScriptCore", async () => {
  // (`^(?:[^\\]|\\[a-z]{20})*$` on 1 M pairs and a backslash, 1 M rounds of 1 M characters, was read as 2 M
  // characters of too few rounds and asked of JavaScriptCore first: its interpreter took 1.2 s to say no, then
  // the matcher 0.7 s, where the matcher alone took 0.7 s)
  const v = validator("^(?:[^\\\\]|\\\\[a-z]{20})*$");
  const text = "\u{1F600}".repeat(121_000) + "\\";
  const [call, asked] = await withNativeAsks(v, text);
  assert.equal(call.allowed, false);
  // (V8 keeps its engine, asked once)
  assert.equal(asked, failsQuietly() ? 0 : 1, `the native engine asked ${asked} times`);
});

test("a group routed to the matcher on JavaScriptCore keeps the native yes where the matcher runs out of steps", () => {
  // `(?:\d{40}|z)(?:a|b{20})+` keeps 40 threads alive on a run of digits: the matcher gives up on 100 001
  // characters, where JavaScriptCore's "yes" (it fails only by saying no) answered before the route
  const pattern = "(?:\\d{40}|z)(?:a|b{20})+";
  const text = "1".repeat(100_000) + "a";
  const bounded = boundedRegExp(pattern, new RegExp(pattern, "u"));
  assert.equal(answersLinearly(bounded, text.length), failsQuietly());
  const call = validator(pattern).validate([{ name: "t", arguments: { a: text } }]).calls[0];
  assert.equal(call.allowed, true, JSON.stringify(call.findings));
});

test("a group routed to the matcher on JavaScriptCore asks the native engine once the matcher passes its pace", async () => {
  // The matcher ran to the end of its budget before the native "yes" was asked: 2 M digits and an "a" of
  // `(?:\\d{40}|z)(?:a|b{20})+` took 2.7 s on Bun, where the native engine alone took 0.2 s. A value read past
  // the budget's pace so far is asked of the native engine: its "yes" stands; its "no", no answer on
  // JavaScriptCore, is asked of the matcher whole (100 000 digits and a "c": it runs out, unchecked, not "no").
  const pattern = "(?:\\d{40}|z)(?:a|b{20})+";
  const bounded = boundedRegExp(pattern, new RegExp(pattern, "u"));
  const text = "1".repeat(200_000) + "a";
  const [matched, read] = await countingWork(String.prototype, "codePointAt", () => bounded.test(text));
  assert.equal(matched, true);
  assert.ok(read < text.length / 4, `${read} characters read of ${text.length}`);
  const failing = "1".repeat(100_000) + "c";
  if (failsQuietly()) assert.throws(() => bounded.test(failing), MatchTooCostly);
  else assert.equal(bounded.test(failing), false);
});

test("a group routed to the matcher on JavaScriptCore answers every string on it under shortNative: false", () => {
  // (the tests that compare the two engines ask for the matcher on short strings: the route kept the native
  // engine below 100 000 characters, so on Bun they compared the native engine with itself)
  for (const pattern of ["^(?:a|b)*$", "^(?:\\w|-)+$"]) {
    const native = new RegExp(pattern, "u");
    const bounded = boundedRegExp(pattern, native, { shortNative: false });
    assert.equal(answersLinearly(bounded, 2), failsQuietly(), pattern);
    assert.equal(bounded.test("ab"), true, pattern);
    assert.equal(bounded.test("a!"), false, pattern);
  }
  // (by default a short string stays native on every engine)
  assert.equal(answersLinearly(boundedRegExp("^(?:a|b)*$", new RegExp("^(?:a|b)*$", "u")), 2), false);
});

test("the matcher stops reading a pattern anchored at the start once no thread is alive", async () => {
  // (`^(?:a|b)*$` on a long value that fails at its first character: the native engine answers at once, the
  // matcher, where it answers on JavaScriptCore or asks again a quiet "no", read the whole value)
  for (const flags of ["u", ""]) {
    const re = linearRegExp("^(?:a|b)*$", { flags })!;
    const method = flags === "u" ? "codePointAt" : "charCodeAt";
    for (
      const [text, allowed] of [["!" + "ab".repeat(50_000), false], ["ab".repeat(50_000), true]] as const
    ) {
      const [answer, read] = await countingWork(String.prototype, method, () => re.test(text));
      assert.equal(answer, allowed, `${flags} on ${text.length}`);
      assert.ok(
        allowed ? read >= text.length : read < 10,
        `${flags} on ${text.length}: ${read} characters read`,
      );
    }
    // (with the m flag, `^` holds after each line end: the search goes on)
    const multi = linearRegExp("^(?:a|b)*$", { flags: flags + "m" })!;
    assert.equal(multi.test("!" + "ab".repeat(5_000) + "\nab"), true, flags);
  }
});

test("a count of a count on the matcher is one count where the counts leave no gap", () => {
  // `^(?:(?:ab){1,99}){1,99}$` was refused when compiled (too large to copy, and no longer native as
  // exponential), and `^((?:ab){1,999}){1,999}$`, once compiled, ran out of the matcher's steps on 10 000
  // characters: 999 copies of the inner count, each alive
  for (
    const [pattern, text, allowed] of [
      ["^((?:ab){1,999}){1,999}$", "ab".repeat(5_000), true],
      ["^((?:ab){1,999}){1,999}$", "ab".repeat(5_000) + "a", false],
      ["^(?:(?:ab){1,99}){1,99}$", "ab".repeat(9_801), true],
      ["^(?:(?:ab){1,99}){1,99}$", "ab".repeat(9_802), false],
    ] as const
  ) {
    const call = validator(pattern).validate([{ name: "t", arguments: { a: text } }]).calls[0];
    assert.equal(call.allowed, allowed, `${pattern} on ${text.length}: ${JSON.stringify(call.findings)}`);
  }
  // (counts with gaps are not joined: k rounds of 3 take 3k, of 2 to 3 from 2k to 3k, none 1)
  for (const pattern of ["^(?:(?:ab){3}){1,3}$", "^(?:(?:ab){2,3}){0,3}$", "^(?:(?:ab){2,4}){1,}$"]) {
    const linear = linearRegExp(pattern)!;
    for (let n = 0; n <= 12; n++) {
      const text = "ab".repeat(n);
      assert.equal(linear.test(text), new RegExp(pattern, "u").test(text), `${pattern} on ${n} rounds`);
    }
  }
});

test("a repeat of alternatives that the next character picks between stays native", async () => {
  // `(?:a|bb){99}x` reads a string one way (about 300 native steps a start): the matcher, with a thread alive
  // in most of its 99 rounds, ran out of its steps on 30 001 characters and the value was refused unchecked
  assert.equal(answersLinearly(boundedRegExp("(?:a|bb){99}x", /(?:a|bb){99}x/u), 100_000), false);
  // (one that JavaScriptCore repeats any number of times is asked of it first where a value takes fewer rounds
  // than it takes in its compiled code: 80 000 here)
  const text5 = "-1_ab".repeat(40_000);
  const [call5, read] = await countingWork(
    String.prototype,
    "codePointAt",
    () => validator("^(?:-\\d|_[a-z]{2})+$").validate([{ name: "t", arguments: { a: text5 } }]).calls[0],
  );
  assert.equal(call5.allowed, true, JSON.stringify(call5.findings));
  assert.ok(read < text5.length, `${read} code points read`);
  const v = validator("(?:a|bb){99}x");
  const text = "abb".repeat(10_000) + "x";
  const call = v.validate([{ name: "t", arguments: { a: text } }]).calls[0];
  assert.equal(call.allowed, true, JSON.stringify(call.findings));
  // (alternatives that can begin alike stay on the matcher: `(?:a|ab){99}x` cuts "abab..." more than one way)
  assert.equal(answersLinearly(boundedRegExp("(?:a|ab){99}x", /(?:a|ab){99}x/u), 100_000), true);
});

test("a search through a repeat of alternatives the next character picks between runs on the matcher where a start costs many steps", () => {
  // Each start reads a round's longest alternative and tries the others before the one it takes: natively,
  // `(?:a|b{64}){99}x` took V8 7 s (Bun 0.9 s) on 100 000 "b", 500 alternatives of two characters Bun 13 s,
  // where both were on the matcher (refused as unchecked at once) before they read as picked by their first
  for (
    const pattern of [
      "(?:a|b{64}){99}x",
      `(?:${Array.from({ length: 500 }, (_, i) => String.fromCharCode(0x4e00 + i) + "y").join("|")}){99}x`,
    ]
  ) {
    let re: RegExp | null = null;
    try {
      re = boundedRegExp(pattern, new RegExp(pattern, "u"));
    } catch {
      // (refused as too large for the matcher: bounded too)
    }
    assert.equal(re === null || answersLinearly(re, 100_000), true, pattern.slice(0, 40));
  }
});

test("a repeat of many alternatives the next character picks between is no repeat of one set: it runs on the matcher", () => {
  // A round tries each alternative before the one it takes, a native step each: read as picked by its first
  // character, `^(?:...)*$` of 4 000 alternatives took V8 0.8 s and Bun 1.5 s on 20 000 characters (four
  // times the alternatives, four times the time), where the matcher had refused the value unchecked at once
  const alts = Array.from({ length: 1_000 }, (_, i) => String.fromCharCode(0x4e00 + i) + "y");
  const pattern = `^(?:${alts.join("|")})*$`;
  assert.equal(answersLinearly(boundedRegExp(pattern, new RegExp(pattern, "u")), 100_000), true);
});

test("a value without a character every match takes fails unrun where the matcher would confirm", () => {
  // JavaScriptCore's "no" on 100 000 characters or more is asked again of the matcher: on `(?:a|bb){99}x` it
  // ran out of its steps and the value was refused unchecked; an engine that throws (V8's stack) is asked so too
  const pattern = "(?:a|bb){99}x";
  const text = "abb".repeat(34_000);
  const v = validator(pattern);
  const call = v.validate([{ name: "t", arguments: { a: text } }]).calls[0];
  assert.equal(call.allowed, false);
  assert.equal(JSON.stringify(call.findings).includes("could not be checked"), false);
  assert.equal(v.validate([{ name: "t", arguments: { a: text + "x" } }]).calls[0].allowed, true);
  const failing = new RegExp(pattern, "u");
  failing.test = () => {
    throw new RangeError("Maximum call stack size exceeded");
  };
  assert.equal(safeTest(failing, text.slice(0, 30_000)), false);
  forgetFailedTest();
});

test("a value the native engine failed on is looked through once for the characters every match takes", async () => {
  // (the check ran twice where the matcher may run out of its steps, `^(?:a|bb){99}yx`: once before the
  // matcher was asked, and again by the matcher itself; two passes of the value for each of "y" and "x")
  const failing = /^(?:a|bb){99}yx/u;
  failing.test = () => {
    throw new RangeError("Maximum call stack size exceeded");
  };
  const text = "c".repeat(100_000) + "yx";
  const [answer, read] = await countingWork(String.prototype, "codePointAt", () => safeTest(failing, text));
  forgetFailedTest();
  assert.equal(answer, false);
  assert.ok(read >= 2 * text.length - 2 && read < 3 * text.length, `${read} code points read`);
});

test("a value without a character every match takes fails unrun on a matcher that may run out of its steps", () => {
  // `(?:a?b?){2500}x`, a program of 10 000 steps a character, ran out of them on 2 000 "a": refused unchecked
  // on both engines, where the value lacks the "x" every match takes
  const v = validator("(?:a?b?){2500}x");
  for (const [text, allowed] of [["a".repeat(2_000), false], ["ab".repeat(10) + "x", true]] as const) {
    const call = v.validate([{ name: "t", arguments: { a: text } }]).calls[0];
    assert.equal(call.allowed, allowed, JSON.stringify(call.findings));
    assert.equal(JSON.stringify(call.findings).includes("could not be checked"), false);
  }
});

test("a value that matches is not failed unrun for lacking a character some match does not take", () => {
  // (the sets a value must have a character of are read from the pattern: one in an alternative, an optional
  // item, a lookahead, a negated class or a character past U+FFFF read as two halves would fail these values
  // unrun; a prefix of 40 optional rounds keeps each on the matcher, with that check first, on every engine)
  const P = "(?:a?b?){40}";
  const cases: [string, string][] = [
    [P + "(?:x|y)", "y"],
    ["(?:" + P + "|c)d", "d"],
    [P + "(?:x+|y)z", "yz"],
    [P + "(?:(?:x|y)z)+", "yz"],
    [P + "(?:[]|x)", "x"],
    [P + "z?w", "w"],
    [P + "(?:zz){0,2}w", "w"],
    [P + "(?:q){0}y", "y"],
    [P + "(?!c).", "d"],
    [P + "[^w]", "a"],
    [P + "\\D", "x"],
    [P + "\\S", "a"],
    [P + "\\W", " "],
    [P + "\u{1F600}", "\u{1F600}"],
    [P + "[\u{1F600}-\u{1F64F}]", "\u{1F610}"],
  ];
  for (const [pattern, text] of cases) {
    const native = new RegExp(pattern, "u");
    assert.equal(native.test(text), true, pattern);
    assert.equal(answersLinearly(boundedRegExp(pattern, native), text.length), true, pattern);
    const call = validator(pattern).validate([{ name: "t", arguments: { a: text } }]).calls[0];
    assert.equal(call.allowed, true, `${pattern}: ${JSON.stringify(call.findings)}`);
  }
});
