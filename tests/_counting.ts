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

/** How many characters one call touched, from its receiver, its arguments, its result and where it began. */
type Touched = (self: never, args: never, result: never, from: number) => number;

/** Where a search with `regex` begins: its `lastIndex` when global or sticky, else the text's start. */
const searchStart = (regex: RegExp) => regex.global || regex.sticky ? regex.lastIndex : 0;

/**
 * The built-ins a text path reads or copies characters with, each weighed by the characters it must at least
 * have touched: a regular expression from where its search began to the end of its match (to the end of the
 * text when a search finds none; one character when a sticky one fails where it stands), a string search to
 * where it found its needle (or the end), a slice by what it copied, one character for `charCodeAt`.
 */
const TEXT_READERS: [object, string, Touched][] = [
  [
    RegExp.prototype,
    "exec",
    (self: RegExp, [text]: [string], found: RegExpExecArray | null, from: number) => {
      if (found) return found.index + found[0].length - from;
      return self.sticky ? 1 : String(text).length - from;
    },
  ],
  [String.prototype, "indexOf", (self: string, [needle, from = 0]: [string, number?], at: number) => {
    const start = Math.min(Math.max(from, 0), self.length);
    return (at < 0 ? self.length : at + String(needle).length) - start;
  }],
  [String.prototype, "lastIndexOf", (self: string, _: unknown, at: number) => self.length - Math.max(at, 0)],
  [
    String.prototype,
    "includes",
    (self: string, [needle]: [string], found: boolean) => found ? String(needle).length : self.length,
  ],
  [String.prototype, "startsWith", (_: string, [prefix]: [string]) => String(prefix).length],
  [String.prototype, "slice", (_: string, _args: unknown, copied: string) => copied.length],
  [String.prototype, "substring", (_: string, _args: unknown, copied: string) => copied.length],
  [String.prototype, "charCodeAt", () => 1],
  [String.prototype, "codePointAt", () => 1],
];

/**
 * Runs `run` while the characters its regular expressions, string searches, slices and `charCodeAt` calls
 * touch are counted, as {@linkcode countingWork} counts one method (a regular expression's backtracking
 * inside one search is not seen). Returns what `run` returned and the count: a path that reads its text again
 * for each piece of it counts about the square of its length.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countingTextWork } from "./_counting.ts";
 *
 * const [at, read] = await countingTextWork(() => "abcdef".indexOf("cd"));
 * assert.deepEqual([at, read], [2, 4]);
 * ```
 */
export async function countingTextWork<T>(run: () => T | Promise<T>): Promise<[T, number]> {
  let count = 0;
  const originals = TEXT_READERS.map(([owner, name, touched]) => {
    const methods = owner as Record<string, (...args: unknown[]) => unknown>;
    const original = methods[name];
    const weigh = touched as (self: unknown, args: unknown[], result: unknown, from: number) => number;
    methods[name] = function (this: unknown, ...args: unknown[]) {
      const from = this instanceof RegExp ? searchStart(this) : 0;
      const result = original.apply(this, args);
      count += weigh(this, args, result, from);
      return result;
    };
    return () => methods[name] = original;
  });
  try {
    return [await run(), count];
  } finally {
    for (const restore of originals) restore();
  }
}

/**
 * How long a test lets a run take before it calls it hung: far past what the slowest machine takes, and far
 * short of what the fault it guards against takes (a regular expression's backtracking inside one search,
 * which no count of work sees, takes minutes at the sizes the linear-work tests read; a timeout that never
 * fires, forever). A guard against hanging, not a bound on speed.
 */
export const HANG_MS = 60_000;

/**
 * `value` behind proxies, one per object (so what is shared stays shared and a loop stays a loop), that count
 * every property read and throw after `most` of them: a walk that reads a value built in code as a tree
 * (2^40 steps for forty levels that each name the next twice) fails at once instead of running for ever.
 * `reads()` tells the count so far.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readCounted } from "./_counting.ts";
 *
 * const { value, reads } = readCounted({ a: { b: 1 } }, 2);
 * assert.equal(value.a.b, 1);
 * assert.equal(reads(), 2);
 * assert.throws(() => value.a, /more than 2 reads/);
 * ```
 */
export function readCounted<T>(value: T, most = Infinity): { value: T; reads: () => number } {
  let count = 0;
  const proxies = new Map<object, object>();
  const wrap = (v: unknown): unknown => {
    if (typeof v !== "object" || v === null) return v;
    let p = proxies.get(v);
    if (p === undefined) {
      p = new Proxy(v, {
        get(target, key, receiver) {
          if (++count > most) throw new Error(`more than ${most} reads`);
          return wrap(Reflect.get(target, key, receiver));
        },
      });
      proxies.set(v, p);
    }
    return p;
  };
  return { value: wrap(value) as T, reads: () => count };
}
