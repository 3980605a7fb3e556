import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compilePattern } from "../_schema/pattern.ts";
import { compileSchema } from "../validate.ts";

/** Patterns the loop compiler takes, each with a string it matches. */
const COMPILED: [string, string][] = [
  ["^[a-z]{2}$", "en"],
  ["^\\d{4}-\\d{2}-\\d{2}$", "2026-12-01"],
  ["^[A-Za-z0-9_-]+$", "abc_DEF-9"],
  ["^[a-z][a-z0-9-]{0,62}$", "a".repeat(63)],
  ["^\\w+@\\d{1,3}$", "x@12"],
  ["^[A-Z]{3}$", "NOK"],
  ["^v\\d+\\.\\d+$", "v1.20"],
  ["^[.$*]?x{2,}$", ".xx"],
  ["^a{5}b{0,3}$", "aaaaabbb"],
  ["^\\$[0-9]*$", "$123"],
];
/** Patterns it leaves to the regex engine, each for a reason in its comment. */
const LEFT = [
  "[a-z]{2}", // not anchored
  "^(a|b)$", // alternation, groups
  "^a*a$", // a variable repeat the next atom overlaps: greedy would be wrong
  "^a*b?c$", // a variable repeat followed by an optional atom
  "^[^a]$", // negated class (would count code points)
  "^.$", // dot
  "^\\s+$", // \s covers Unicode spaces
  "^\\p{L}+$", // property escapes
  "^é😀$", // an astral character
  "^a+?$", // lazy
  "^$", // nothing to match
];

// strings over the characters these patterns care about, plus astral and lone surrogates
const ALPHABET = [
  "a",
  "b",
  "c",
  "x",
  "z",
  "A",
  "Z",
  "0",
  "5",
  "9",
  "-",
  "_",
  ".",
  "@",
  "$",
  "*",
  "v",
  "é",
  "😀",
];
const strings = fc.oneof(
  fc.array(fc.constantFrom(...ALPHABET, "\ud800", "\udc00", " ", "\n"), { maxLength: 12 }).map((a) =>
    a.join("")
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 8 }),
);
const EXAMPLES = [
  "",
  "en",
  "eng",
  "EN",
  "2026-12-01",
  "2026-1-01",
  "abc_DEF-9",
  "a".repeat(63),
  "a".repeat(64),
  "x@12",
  "v1.20",
  "$",
  "$123",
  "aaaaabbb",
  "aaaaabbbb",
  "NO",
  ".xx",
  "xx\n",
  "en\n",
];

test("compilePattern: a compiled pattern matches exactly the strings its regex matches", () => {
  for (const [source, example] of COMPILED) {
    const body = compilePattern(source);
    assert.notEqual(body, null, `${source} should compile`);
    const loop = new Function("v", body!) as (v: string) => boolean;
    const re = new RegExp(source, "u");
    // a loop that never matched would agree on every other string
    assert.ok(re.test(example) && loop(example), `${source} on ${example}`);
    for (const s of EXAMPLES) assert.equal(loop(s), re.test(s), `${source} on ${JSON.stringify(s)}`);
    fc.assert(fc.property(strings, (s) => loop(s) === re.test(s)), { numRuns: 400 });
  }
});

test("compilePattern: patterns outside the compiled language stay regexes", () => {
  for (const source of LEFT) assert.equal(compilePattern(source), null, source);
});

test("compileSchema: a schema pattern judges alike whether compiled to a loop or run as a regex", () => {
  const schema = { type: "string", pattern: "^[a-z]{2}$" };
  const generated = compileSchema(schema);
  const interpreted = compileSchema(schema, { codegen: false });
  for (const value of ["en", "english", "EN", "", "e😀"]) {
    assert.deepEqual(generated(value), interpreted(value), value);
  }
  assert.equal(generated("english")[0].message, "The arguments must match the pattern ^[a-z]{2}$.");
});
