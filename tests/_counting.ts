/**
 * Counting work instead of timing it: a test that a path stays linear counts the calls of a built-in method
 * (or what each call reads) while the path runs, so a slow or busy machine cannot fail it and a quadratic
 * path cannot pass it.
 *
 * @module
 */

/** How much one call of the counted method weighs, from its receiver, its arguments and its result. */
export type Weigh = (self: never, args: never[], result: never) => number;

/**
 * Runs `run` while the method `name` of `owner` (a built-in such as `Map.prototype.get`, or the array
 * iterator's `next`) adds `weigh(...)` (default 1) to a count at each call, then puts the method back, also
 * when `run` throws. Returns what `run` returned and the count.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countingWork } from "./_counting.ts";
 *
 * const [value, calls] = await countingWork(Map.prototype, "get", () => new Map([[1, "a"]]).get(1));
 * assert.deepEqual([value, calls], ["a", 1]);
 * ```
 */
export async function countingWork<T>(
  owner: object,
  name: string,
  run: () => T | Promise<T>,
  weigh: Weigh = () => 1,
): Promise<[T, number]> {
  const methods = owner as Record<string, (...args: unknown[]) => unknown>;
  const original = methods[name];
  const weight = weigh as (self: unknown, args: unknown[], result: unknown) => number;
  let count = 0;
  methods[name] = function (this: unknown, ...args: unknown[]) {
    const result = original.apply(this, args);
    count += weight(this, args, result);
    return result;
  };
  try {
    return [await run(), count];
  } finally {
    methods[name] = original;
  }
}

/** The prototype of array iterators, whose `next` a `for…of` over an array or a spread calls per element. */
export const ARRAY_ITERATOR: object = Object.getPrototypeOf([][Symbol.iterator]());
