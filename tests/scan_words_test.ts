import { test } from "node:test";
import assert from "node:assert/strict";
import { asciiBytes, bytesFor, TWO_LANES_FROM, utf8Of, WordSet } from "../_scan/words.ts";
import { escapeRegExp } from "../_common/values.ts";
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

test("WordSet.bitsIn: the bits of exactly the strings each seeded text holds, short and long texts alike", () => {
  // Three groups of strings sharing prefixes and suffixes, so that failure links carry bits across groups.
  const groups = [["ai ", "an ai", "ss"], ["assistant", "<|", "nstruct"], ["instructions", "my", "all my"]];
  const set = new WordSet(groups.flat(), groups.flatMap((g, k) => g.map(() => 1 << k)));
  const random = seeded(24);
  const pieces = [...WORDS.map((w) => w.slice(0, -1)), ...WORDS, " ", "a", "s", "i", "é", "x"];
  const seen = new Set<number>();
  for (let k = 0; k < 3000; k++) {
    let text = "";
    // Some texts reach the byte path (long ones), some stay below it.
    for (let i = Math.floor(random() * (k % 3 === 0 ? 120 : 8)); i > 0; i--) {
      text += pieces[Math.floor(random() * pieces.length)];
    }
    const want = groups.reduce((bits, g, j) => g.some((w) => text.includes(w)) ? bits | (1 << j) : bits, 0);
    assert.equal(set.bitsIn(text, 7), want, JSON.stringify(text));
    seen.add(want);
  }
  // Every combination of the three groups came up.
  assert.equal(seen.size, 8);
});

test("WordSet.bitsIn: a long text, read in two halves, holds a string at every place around its middle", () => {
  const set = new WordSet(["instructions", "my", "<|"], [1, 2, 4]);
  for (const n of [4096, 4097, 9001]) {
    const mid = n >> 1;
    for (let at = mid - 14; at <= mid + 2; at++) {
      const text = "x".repeat(at) + "instructions" + "x".repeat(n - at - 12);
      assert.equal(set.bitsIn(text, 7), 1, `${n} ${at}`);
    }
    // At either end, and none at all.
    assert.equal(set.bitsIn("my" + "x".repeat(n - 4) + "<|", 7), 6);
    assert.equal(set.bitsIn("x".repeat(n), 7), 0);
  }
});

test("WordSet.bitsIn, foundIn: a long text beyond ASCII, read as UTF-8, holds the strings it holds", () => {
  const set = new WordSet(["instructions", "my", "<|"], [1, 2, 4]);
  // Characters of two, three and four bytes, and a lone surrogate, beside and around the strings.
  for (const odd of ["é", "€", "\u{1F600}", "\ud800"]) {
    for (const n of [300, 4096, 9001]) {
      const mid = n >> 1;
      for (let at = mid - 14; at <= mid + 2; at++) {
        const text = (odd + "x").repeat(n).slice(0, at) + "instructions" +
          (odd + "x").repeat(n).slice(0, n - at - 12);
        assert.equal(set.bitsIn(text, 7), 1, `${odd} ${n} ${at}`);
        assert.equal(set.foundIn(text), true, `${odd} ${n} ${at}`);
      }
      // A string split by a character beyond ASCII is not held.
      const split = "m" + odd + "y<" + odd + "|instr" + odd + "uctions";
      assert.equal(set.bitsIn(split + odd.repeat(n) + "my", 7), 2, `${odd} ${n}`);
      assert.equal(set.foundIn(split + odd.repeat(n)), false, `${odd} ${n}`);
    }
  }
});

test("utf8Of: the UTF-8 of the text asked for, whatever the buffer held before", () => {
  const encoder = new TextEncoder();
  const check = (t: string) => {
    const [got, want] = [utf8Of(t), encoder.encode(t)];
    // (compared here: a failed `deepEqual` of megabytes takes minutes to describe)
    assert.ok(
      got.length === want.length && got.every((b, i) => b === want[i]),
      `${t.length} ${t.slice(0, 12)}`,
    );
  };
  const small = "caf\u00e9 \u20ac".repeat(40);
  // After `asciiBytes` found the text not ASCII; again (held); after another text; after `bytesFor`.
  assert.equal(asciiBytes(small), null);
  check(small);
  check(small);
  assert.notEqual(asciiBytes("x".repeat(300)), null);
  check(small);
  bytesFor(10);
  check(small);
  // A text whose UTF-8 overflows the buffer `asciiBytes` encoded it into (three bytes a unit), and one too
  // long for the kept buffer.
  const wide = "\u20ac".repeat(TWO_LANES_FROM * 20);
  assert.equal(asciiBytes(wide), null);
  check(wide);
  check("\u{1F600}\ud800".repeat(1 << 18));
});

test("WordSet: refuses strings it cannot match", () => {
  assert.throws(() => new WordSet([""]), /empty/);
  assert.throws(() => new WordSet(["café"]), /ASCII/);
});
