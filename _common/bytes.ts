/**
 * Byte and typed-array helpers: joining stream reads (the MCP frame reader, the log reader, the fake tool), and
 * growing the scanner's kept integer buffers.
 *
 * @module
 */

/**
 * A new array holding `parts` one after another; `total` is the sum of their lengths (the callers keep it as
 * they collect). Always a copy, so a caller may reuse the buffers it read into.
 *
 * @example Two reads joined
 * ```ts
 * import assert from "node:assert/strict";
 * import { concatBytes } from "./bytes.ts";
 *
 * const a = new Uint8Array([1, 2]), b = new Uint8Array([3]);
 * const joined = concatBytes([a, b], 3);
 * assert.deepEqual([...joined], [1, 2, 3]);
 * assert.notEqual(concatBytes([a], 2), a);
 * ```
 */
export function concatBytes(parts: readonly Uint8Array[], total: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * A copy of `a` with room for at least `more` further elements: twice as long, or longer where that is not
 * enough, so that growing one element at a time costs amortised constant time.
 *
 * @example Room for one more, then for many
 * ```ts
 * import assert from "node:assert/strict";
 * import { grownBy } from "./bytes.ts";
 *
 * const a = Int32Array.of(7, 8);
 * const b = grownBy(a, 1);
 * assert.deepEqual([...b], [7, 8, 0, 0]);
 * assert.equal(grownBy(a, 10).length, 12);
 * ```
 */
export function grownBy(a: Int32Array, more: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.max(2 * a.length, a.length + more));
  b.set(a);
  return b;
}
