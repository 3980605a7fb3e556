import { test } from "node:test";
import assert from "node:assert/strict";
import { WordSet } from "../_scan/words.ts";
import { escapeRegExp } from "../_scan/match.ts";
import { seeded } from "../scripts/_seeded.ts";

const WORDS = [
  "ai ",
  "an ai",
  "assistant",
  "my",
  "all my",
  "0",
  "@",
  "<|",
  "[inst]",
  "nstruct",
  "instructions",
  "ss",
];

test("WordSet.foundIn: says what the alternation of the strings says, on seeded texts", () => {
  const re = new RegExp(WORDS.map(escapeRegExp).join("|"));
  const set = new WordSet(WORDS);
  const random = seeded(18);
  const pieces = [...WORDS.map((w) => w.slice(0, -1)), ...WORDS, " ", "a", "s", "i", "é", "\u200b", "x"];
  let found = 0;
  for (let k = 0; k < 5000; k++) {
    let text = "";
    for (let i = Math.floor(random() * 8); i > 0; i--) text += pieces[Math.floor(random() * pieces.length)];
    assert.equal(set.foundIn(text), re.test(text), JSON.stringify(text));
    if (re.test(text)) found++;
  }
  // Both outcomes were exercised.
  assert.ok(found > 500 && found < 4500, `${found}`);
});

test("WordSet.foundIn: a string found through a failure link, and none in a near miss", () => {
  const set = new WordSet(["abcd", "bce"]);
  assert.equal(set.foundIn("xxabce"), true);
  assert.equal(set.foundIn("abcabd bc e"), false);
});

test("WordSet: refuses strings it cannot match", () => {
  assert.throws(() => new WordSet([""]), /empty/);
  assert.throws(() => new WordSet(["café"]), /ASCII/);
});
