/**
 * The tests' one seeded generator: draws that are the same on every run and runtime, for the tests that
 * try many shapes at random.
 *
 * @module
 */

/**
 * Numbers in [0, 1) drawn from `seed` by a linear congruential step taken in 32 bits: the same step in
 * doubles (`seed * 1103515245`) passes 2^53 and loses its low bits, and its draws repeated every ~10 000.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const [a, b] = [seededRandom(7), seededRandom(7)];
 * assert.equal(a(), b());
 * assert.ok(a() < 1);
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}
