/**
 * Byte and typed-array helpers: joining stream reads (the MCP frame reader, the log reader, the fake tool),
 * growing the scanner's kept integer buffers, a string's length in UTF-8 (the log's line bound), whether bytes
 * are UTF-8 (the MCP relays' lines), and a byte count as messages write it.
 *
 * @module
 */
import { lazy, plural } from "./values.ts";

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

/**
 * The run position `i` falls in, where runs are listed by where each starts: the index of the last of the
 * first `count` entries of `starts` (ascending, the first at most `i`) that is at most `i`. One binary search.
 * `stride`: the entries are every `stride`th unit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runAt } from "./bytes.ts";
 *
 * const starts = Int32Array.of(0, 4, 9);
 * assert.equal(runAt(starts, 3, 0), 0);
 * assert.equal(runAt(starts, 3, 8), 1);
 * assert.equal(runAt(starts, 3, 9), 2);
 * assert.equal(runAt(starts, 2, 9), 1); // only the first two count
 * ```
 */
export function runAt(starts: Int32Array, count: number, i: number, stride = 1): number {
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid * stride] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * How many bytes `text` takes as UTF-8, counted without encoding it (a lone surrogate counts as the three
 * bytes of the U+FFFD it is written as).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8Length } from "./bytes.ts";
 *
 * for (const text of ["ascii", "\u00e9", "\u20ac", "\u{1F600}", "a\ud800"]) {
 *   assert.equal(utf8Length(text), new TextEncoder().encode(text).length);
 * }
 * ```
 */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Made on first use: under Deno the first decoder loads the text-encoding support. */
const strictDecoder = lazy(() => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }));

/**
 * True when `bytes` are UTF-8, given `decoded`, the text a decoder that reads a bad byte as U+FFFD (the
 * default `TextDecoder`'s way) made of them: only text that holds U+FFFD is decoded again, strictly, so that
 * valid text costs one search.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isUtf8 } from "./bytes.ts";
 *
 * const check = (bytes: Uint8Array) => isUtf8(bytes, new TextDecoder().decode(bytes));
 * assert.equal(check(new TextEncoder().encode('{"a":"\u00e9 \ufffd"}')), true);
 * assert.equal(check(new Uint8Array([0x22, 0xc3, 0x22])), false);
 * ```
 */
export function isUtf8(bytes: Uint8Array, decoded: string): boolean {
  if (!decoded.includes("\uFFFD")) return true;
  try {
    strictDecoder().decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * A byte count as messages write it: "1 byte", "0 bytes", "65536 bytes" (every message that names a size
 * or a limit in bytes writes it so, so that a limit of 1 does not read "1 bytes").
 *
 * @example One byte, many bytes
 * ```ts
 * import assert from "node:assert/strict";
 * import { byteCount } from "./bytes.ts";
 *
 * assert.equal(`stdout exceeded ${byteCount(1)}`, "stdout exceeded 1 byte");
 * assert.equal(byteCount(65536), "65536 bytes");
 * assert.equal(byteCount(0), "0 bytes");
 * ```
 */
export function byteCount(n: number): string {
  return `${n} ${plural(n, "byte")}`;
}
