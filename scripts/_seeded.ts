/**
 * A small seeded random generator (mulberry32) for the tests, benchmarks and scripts: the same seed gives the
 * same sequence on every runtime, so a generated case or a bootstrap interval can be replayed.
 *
 * @module
 */

/**
 * A generator of numbers in [0, 1) from `seed`.
 *
 * @example The same seed, the same sequence
 * ```ts
 * import assert from "node:assert/strict";
 * import { seeded } from "./_seeded.ts";
 *
 * const a = seeded(7), b = seeded(7);
 * assert.equal(a(), b());
 * assert.ok(a() < 1);
 * ```
 */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
