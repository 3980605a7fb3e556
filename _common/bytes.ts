/**
 * Byte helpers shared by the jobs that read streams (the MCP frame reader, the log reader, the fake tool).
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
export function concatBytes(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
