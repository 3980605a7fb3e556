/**
 * Whether a value built in code (call arguments, a schema, a value to show) can be walked as a tree: how deep
 * it nests, whether it holds itself or shares its objects past {@link MOST_WRITTEN_OUT} written out, and where
 * JSON sends something else than it holds (a `toJSON`, a box). Apart from the JSON reader (json.ts), which a
 * module that only measures (the verdict's sentences, for describe and log) then does not load (start-up,
 * issue 18).
 *
 * @module
 */
import { escapePointer } from "./pointer.ts";
import { clipMiddle, heldIndices } from "./values.ts";

/** Returns -1 when `value` nests no deeper than `max`, else a depth beyond it. Never throws, even on cycles. */
export function depthOver(value: unknown, max: number): number {
  try {
    return nestsDeeper(value, max) ? max + 1 : -1;
  } catch {
    return max + 1; // a getter that throws, or a revoked proxy: no deeper to be read
  }
}

/**
 * Whether `value` nests deeper than `max` (cycles do); throws what reading it throws (a getter, a revoked
 * proxy), for a caller that reports that rather than a depth.
 */
export function nestsDeeper(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  fitsLeft = MOST_WRITTEN_OUT;
  try {
    if (fits(value, max)) return false;
  } catch (e) {
    if (e instanceof RangeError) return true; // a stack overflow only happens far beyond any sensible limit
    throw e;
  }
  // past the count, a value built in code may share its objects 2^40 times over: read each one once
  if (fitsLeft >= 0) return true;
  const stop = graphStop(value, max);
  return stop !== null && stop.kind !== "shared";
}

/**
 * Why `value` (call arguments, perhaps built in code) cannot be walked as a tree: it nests deeper than `max`
 * (`"deep"`; a cycle does, and so does a value whose reading throws), or it shares its objects so that
 * written out it would hold more than {@link MOST_WRITTEN_OUT} of them (`"shared"`, see {@link pastMeasure}).
 * Within both, `"unsent"` when JSON would send something else than it holds somewhere ({@link unsentLeaf}, a
 * `toJSON`, a boxed value: the arguments are then read as `copyAsSent` (json.ts) copies them, as a provider
 * carries them). Null when none: in one walk that counts as it goes down, for a value of fewer objects (all
 * of them read from JSON text in practice).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkProblem } from "./measure.ts";
 *
 * let wide: unknown = "x";
 * for (let i = 0; i < 40; i++) wide = { a: wide, b: wide };
 * assert.equal(walkProblem(wide, 64), "shared");
 * assert.equal(walkProblem([[[1]]], 2), "deep");
 * assert.equal(walkProblem({ a: [1] }, 64), null);
 * assert.equal(walkProblem({ a: [new Date(0)] }, 64), "unsent");
 * assert.equal(walkProblem({ a: [1, NaN] }, 64), "unsent");
 * ```
 */
export function walkProblem(value: unknown, max: number): "deep" | "shared" | "unsent" | null {
  if (typeof value !== "object" || value === null) return null;
  if (value === measuredValue && measuredMax <= max) return null;
  fitsLeft = MOST_WRITTEN_OUT;
  unsentMet = false;
  try {
    if (fits(value, max)) return unsentMet ? "unsent" : null;
    if (fitsLeft >= 0) return "deep";
    // one walk for both, as two did: a loop or a path past `max` is "deep" whatever it shares
    const stop = graphStop(value, max);
    if (stop === null) return unsentMet ? "unsent" : null;
    return stop.kind === "shared" ? "shared" : "deep";
  } catch {
    return "deep"; // a getter that throws, a revoked proxy, the stack: no deeper to be read (as depthOver)
  }
}

/**
 * The value a caller's walk has just found within {@link measuredMax} levels and within measure, while
 * {@link whileMeasured} runs (null otherwise).
 */
let measuredValue: object | null = null;
/** The depth {@link measuredValue} was found within. */
let measuredMax = -1;

/**
 * Runs `run` with `value` known, by a {@link walkProblem} of it (or of what holds it) just made, to nest no
 * deeper than `max` and to be within measure: while it runs, {@link walkProblem} and {@link pastMeasure} answer
 * for that value (by identity) at once. The MCP guard walks a call's params once so, where each of its readers
 * (its key checks, the judge, the validator) walked the arguments again: three walks where one serves.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pastMeasure, walkProblem, whileMeasured } from "./measure.ts";
 *
 * const args = { q: [1, 2] };
 * assert.equal(walkProblem({ arguments: args }, 65), null);
 * assert.equal(whileMeasured(args, 64, () => walkProblem(args, 64) ?? pastMeasure(args)), false);
 * ```
 */
export function whileMeasured<T>(value: object, max: number, run: () => T): T {
  const [value0, max0] = [measuredValue, measuredMax];
  measuredValue = value;
  measuredMax = max;
  try {
    return run();
  } finally {
    measuredValue = value0;
    measuredMax = max0;
  }
}

/** Objects {@link fits} may still read; past them, {@link graphStop} decides. */
let fitsLeft = 0;
/**
 * Whether {@link fits} or {@link graphStop} met, since {@link walkProblem} began, what JSON sends otherwise
 * than it is held: an object with a `toJSON` or a boxed value ({@link sentOtherwise}), a leaf
 * {@link unsentLeaf} names.
 */
let unsentMet = false;

/**
 * Recursive and allocation-free; recursion depth is bounded by `room`, so cycles end too, and the objects
 * read by {@link fitsLeft} (false when it runs out).
 */
function fits(v: object, room: number): boolean {
  if (room <= 0 || --fitsLeft < 0) return false;
  if (Array.isArray(v)) {
    if (hasToJSON(v)) unsentMet = true;
    for (let i = 0; i < v.length; i++) {
      const c = v[i];
      if (c === undefined && !(i in v)) return everyHeldObject(v, i + 1, (o) => fits(o, room - 1)); // a hole
      if (typeof c === "object") {
        if (c !== null && !fits(c, room - 1)) return false;
      } else if (unsentLeaf(c)) unsentMet = true;
    }
    return true;
  }
  if (sentOtherwise(v)) unsentMet = true;
  for (const k in v) {
    const c = (v as Record<string, unknown>)[k];
    if (typeof c === "object") {
      if (c !== null && !fits(c, room - 1)) return false;
    } else if (unsentLeaf(c)) unsentMet = true;
  }
  return true;
}

/**
 * Whether JSON sends a leaf (not an object, not null) otherwise than it is held: NaN as `null`,
 * `undefined`, a function or a symbol as `null` in an array and as no key in an object, a BigInt not at all
 * (`JSON.stringify` throws: refused, and said so where a finding stands on it). Strings first: they are most of
 * what arguments hold.
 */
export function unsentLeaf(c: unknown): boolean {
  if (typeof c === "string" || typeof c === "boolean") return false;
  // +/-Infinity is no such leaf: JSON text writes it (1e400) and a relay sends those bytes on, so it is
  // refused "too large" as it stands; NaN, which no JSON text writes, is sent as null
  return typeof c === "number" ? c !== c : true;
}

/**
 * Whether JSON sends the object `node` (not an array) as something else: a `toJSON`'s result, the primitive a
 * box holds ({@link unwrapped}). Plain data is told by its prototype, one read, after the `toJSON` load.
 */
export function sentOtherwise(node: object): boolean {
  return hasToJSON(node) || boxed(node);
}

/**
 * Whether the object `node` is a box JSON sends as the primitive it holds ({@link unwrapped}): plain data is
 * told by its prototype, one read, before the box is looked into.
 */
function boxed(node: object): boolean {
  return Object.getPrototypeOf(node) !== Object.prototype && unwrapped(node) !== node;
}

/**
 * Whether `ok` holds for each object the rest of a sparse array holds, from `from`: only what it holds is read
 * (maybe 2^32-1 holes), for the walks that meet a hole ({@link fits}, {@link fewWrittenOut}).
 */
function everyHeldObject(list: unknown[], from: number, ok: (item: object) => boolean): boolean {
  for (const i of heldIndices(list, from)) {
    const c = list[i];
    if (typeof c === "object" && c !== null && !ok(c)) return false;
  }
  return true;
}

/**
 * Objects a schema may hold when written out as JSON, one per place it appears, before
 * {@link schemaGraphProblem} calls its shared objects a problem: far beyond a real tool schema (a few
 * hundred), small enough that each walk that reads a schema as a tree (lint, pins, the listing's checks)
 * ends in well under a second.
 */
export const MOST_WRITTEN_OUT = 100_000;

/**
 * Why `schema`, built in code, cannot be read as a JSON document, with the JSON Pointer (`at`) of the place:
 * an object or array that holds itself (a walk over it as a tree would never end), or objects shared so much
 * that written out it would hold more than {@link MOST_WRITTEN_OUT} of them (a walk would take as many steps:
 * 2^40 for forty levels that each name the next twice). Null when it is neither; a value parsed from JSON
 * text is a tree, so always null, however large or deep. One step per object written out up to the bound,
 * then (only past it) one per distinct object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { schemaGraphProblem } from "./measure.ts";
 *
 * const loop: Record<string, unknown> = { type: "object", properties: {} };
 * (loop.properties as Record<string, unknown>).next = loop;
 * assert.equal(schemaGraphProblem(loop)?.at, "/properties/next");
 * let wide: unknown = { type: "string" };
 * for (let i = 0; i < 40; i++) wide = { properties: { a: wide, b: wide } };
 * assert.match(schemaGraphProblem(wide)?.message ?? "", /\$defs/);
 * const shared = { type: "string" };
 * assert.equal(schemaGraphProblem({ properties: { a: shared, b: shared } }), null);
 * ```
 */
export function schemaGraphProblem(schema: unknown): { at: string; message: string } | null {
  if (typeof schema !== "object" || schema === null) return null;
  // Small written out (a real schema): neither a loop nor too much sharing, told without keeping the objects
  // seen (a third of the cost: a map of fresh objects is what a walk that tells them apart spends most on).
  countLeft = MOST_WRITTEN_OUT;
  if (fewWrittenOut(schema, 0)) return null;
  const found = graphStop(schema);
  if (found === null) return null;
  const pointer = (keys: readonly string[]) => keys.map((k) => "/" + escapePointer(k)).join("");
  const place = (p: string) => p === "" ? "the root" : clipMiddle(p);
  const at = pointer(found.keys);
  if (found.kind === "fresh") {
    return {
      at,
      message: `the schema's object at ${place(at)} is a new one each time it is read (a getter or a Proxy ` +
        "that makes it anew), so a walk over the schema would never end; pass the schema as plain data",
    };
  }
  if (found.kind === "cycle") {
    const target = pointer(found.keys.slice(0, found.back));
    return {
      at,
      message: `the schema contains itself: the object at ${place(at)} is the one at ${place(target)}, so ` +
        "it cannot be written out as JSON and a walk over it would never end; to make the schema recursive, " +
        `put {"$ref": ${JSON.stringify(clipMiddle(`#${target}`))}} there instead`,
    };
  }
  return {
    at,
    message: `the schema reuses its objects so often that written out it would hold more than ` +
      `${MOST_WRITTEN_OUT} objects (${place(at)} alone holds ${found.size}), and every walk over it as a ` +
      'tree would take as many steps; define a part once under "$defs" and refer to it with "$ref"',
  };
}

/**
 * Whether `value`, built in code (call arguments, a `const` to show), cannot be written out as JSON in
 * measure: it holds itself, or shares its objects so that written out it would hold more than
 * {@link MOST_WRITTEN_OUT} of them (a walk over it as a tree would take as many steps). A tree (anything
 * parsed from JSON text) never does, however large. True also when reading it throws. The cost of
 * {@link schemaGraphProblem}, without the place.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pastMeasure } from "./measure.ts";
 *
 * let wide: unknown = "x";
 * for (let i = 0; i < 40; i++) wide = { a: wide, b: wide };
 * assert.equal(pastMeasure(wide), true);
 * assert.equal(pastMeasure({ a: [1, 2], b: "c" }), false);
 * ```
 */
export function pastMeasure(value: unknown): boolean {
  if (typeof value !== "object" || value === null || value === measuredValue) return false;
  countLeft = MOST_WRITTEN_OUT;
  try {
    return !fewWrittenOut(value, 0) && graphStop(value) !== null;
  } catch {
    return true; // a getter that throws, a revoked proxy: no walk over it would end well either
  }
}

/**
 * Whether some entry of `list` (tool declarations built in code) has a {@link schemaGraphProblem}, each
 * entry judged on its own: the bound is one schema's, and a list of many tools, each within it, may hold more
 * objects written out in all (a few hundred tools sharing a part), which is no problem. Not a list: as one
 * value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listGraphProblem } from "./measure.ts";
 *
 * const loop: Record<string, unknown> = {};
 * loop.self = loop;
 * assert.equal(listGraphProblem([{ name: "a" }, { name: "b", parameters: loop }]), true);
 * assert.equal(listGraphProblem([{ name: "a" }]), false);
 * ```
 */
export function listGraphProblem(list: unknown): boolean {
  if (!Array.isArray(list)) return schemaGraphProblem(list) !== null;
  for (const entry of list) if (schemaGraphProblem(entry) !== null) return true;
  return false;
}

/**
 * What {@link graphStop} found: a `cycle` (`keys` lead to the object met again, `back` keys to its first
 * place), a part `shared` too often (`keys` lead to it, `size` objects written out), an object `fresh` on
 * each read (`keys` lead to it: a getter or Proxy that makes a new one, without end), or with a depth bound a
 * path `deep`er than it (no place kept).
 */
interface GraphStop {
  kind: "cycle" | "shared" | "deep" | "fresh";
  keys: string[];
  back: number;
  size: number;
}

/** What {@link fewWrittenOut} may still count. */
let countLeft = 0;

/**
 * Whether `node` holds at most {@link countLeft} objects written out (itself included, counting down) within
 * {@link RECURSED_MOST} levels (the call stack's reach): false, and then {@link graphStop} decides, past either.
 */
function fewWrittenOut(node: object, depth: number): boolean {
  if (--countLeft < 0 || depth > RECURSED_MOST) return false;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const c = node[i];
      if (c === undefined && !(i in node)) {
        return everyHeldObject(node, i + 1, (o) => fewWrittenOut(o, depth + 1));
      }
      if (typeof c === "object" && c !== null && !fewWrittenOut(c, depth + 1)) return false;
    }
    return true;
  }
  // (for-in makes no array of keys; an inherited key only counts more, and the exact walk reads own keys)
  for (const k in node) {
    const c = (node as Record<string, unknown>)[k];
    if (typeof c === "object" && c !== null && !fewWrittenOut(c, depth + 1)) return false;
  }
  return true;
}

/** Levels {@link fewWrittenOut} recurses through; deeper, {@link graphStop} decides. */
export const RECURSED_MOST = 500;

/**
 * Whether `root` holds itself, or holds more than {@link MOST_WRITTEN_OUT} objects written out where fewer
 * distinct ones make them up (some shared: in a tree none is), and where; with `max`, also whether it nests
 * more than `max` objects deep (`deep`, which a loop or a deep path is whatever is shared: the walk goes on
 * past sharing to look). Null when none. Walks each distinct object once (what is below a shared one is
 * remembered), on a stack of its own (no recursion: a value built in code may nest past the call stack's
 * reach); an array's members are its indices, as `JSON.stringify` reads them.
 */
function graphStop(root: object, max = Infinity): GraphStop | null {
  // per distinct object, by its place: objects written out from it and levels from it down, itself included
  // in both (size -1 while it is on the path)
  const places = new Map<object, number>();
  const sizes: number[] = [];
  const levels: number[] = [];
  let shared: GraphStop | null = null;
  // (`keys` null: an array, whose members are read by index up to `end`, with no list of them made: a sparse
  // array may be billions long)
  const path: {
    node: object;
    place: number;
    keys: string[] | null;
    end: number;
    next: number;
    size: number;
    levels: number;
    key: string;
    fresh: boolean;
  }[] = [];
  // frames on the path that a getter or Proxy made anew when read (see freshEachRead)
  let freshOnPath = 0;
  const enter = (node: object, key: string, fresh = false): boolean => {
    // (for walkProblem; asked with `in` first: this walk follows fits' over the same objects, and a Proxy's
    // `get` is not asked again)
    if (("toJSON" in node && hasToJSON(node)) || (!Array.isArray(node) && boxed(node))) unsentMet = true;
    const place = sizes.length;
    places.set(node, place);
    sizes.push(-1);
    levels.push(0);
    const own = Array.isArray(node) ? null : Object.keys(node);
    path.push({
      node,
      place,
      keys: own,
      end: own?.length ?? (node as unknown[]).length,
      next: 0,
      size: 1,
      levels: 1,
      key,
      fresh,
    });
    if (fresh) freshOnPath++;
    return path.length > max;
  };
  const keys = () => path.slice(1).map((f) => f.key);
  const DEEP: GraphStop = { kind: "deep", keys: [], back: 0, size: 0 };
  if (enter(root, "")) return DEEP;
  while (path.length > 0) {
    const top = path[path.length - 1];
    if (top.next < top.end) {
      const i = top.next++;
      const c = top.keys === null
        ? (top.node as unknown[])[i]
        : (top.node as Record<string, unknown>)[top.keys[i]];
      if (c === undefined && top.keys === null) {
        heldRest(top, i);
        if (top.keys === null) unsentMet = true; // an undefined set there, sent as null (a hole is no leaf)
        continue;
      }
      if (typeof c !== "object" || c === null) {
        if (c !== null && unsentLeaf(c)) unsentMet = true;
        continue;
      }
      const key = top.keys === null ? String(i) : top.keys[i];
      const place = places.get(c);
      if (place === undefined) {
        // a new object made on each read, inside another: a value without end. One level of them (a getter
        // that returns a new object around what is stored) is read on, however many rows hold one.
        const fresh = places.size > MOST_WRITTEN_OUT && freshEachRead(top, i, c);
        if (fresh && freshOnPath > 0) return { kind: "fresh", keys: [...keys(), key], back: 0, size: 0 };
        if (enter(c, key, fresh)) return DEEP;
        continue;
      }
      if (sizes[place] === -1) {
        return { kind: "cycle", keys: [...keys(), key], back: path.findIndex((f) => f.node === c), size: 0 };
      }
      if (path.length + levels[place] > max) return DEEP;
      top.size += sizes[place];
      top.levels = Math.max(top.levels, levels[place] + 1);
      continue;
    }
    path.pop();
    if (top.fresh) freshOnPath--;
    sizes[top.place] = top.size;
    levels[top.place] = top.levels;
    if (shared === null && top.size > MOST_WRITTEN_OUT && top.size > places.size) {
      shared = {
        kind: "shared",
        keys: [...keys(), top.key].slice(path.length === 0 ? 1 : 0),
        back: 0,
        size: top.size,
      };
      if (max === Infinity) return shared;
    }
    if (path.length > 0) {
      const parent = path[path.length - 1];
      parent.size += top.size;
      parent.levels = Math.max(parent.levels, top.levels + 1);
    }
  }
  return shared;
}

/**
 * Whether the member `i` of a walk's frame, read as `c`, reads as another object when read again: a getter or
 * a Proxy that makes a new object on each read, which a walk that tells objects apart would follow until
 * memory ran out (each one is new). Asked only past {@link MOST_WRITTEN_OUT} distinct objects: a value read
 * from JSON text holds what it holds, however large, and a small getter that makes its value anew is harmless.
 * Only one met inside another is refused: a getter wrapping what is stored anew, on each of 200 000 rows,
 * ends as the rows do.
 */
function freshEachRead(frame: { node: object; keys: string[] | null }, i: number, c: object): boolean {
  const again = frame.keys === null
    ? (frame.node as unknown[])[i]
    : (frame.node as Record<string, unknown>)[frame.keys[i]];
  return again !== c;
}

/**
 * When the array a walk's frame reads by index (`keys` null) has a hole at `i`, has the frame read the rest
 * of it by the indices it holds (as keys), so a sparse array costs what it holds, not its length.
 */
function heldRest(
  frame: { node: object; keys: string[] | null; end: number; next: number },
  i: number,
): void {
  if (i in frame.node) return; // an undefined set there, no hole
  frame.keys = heldIndices(frame.node as unknown[], i + 1).map(String);
  frame.next = 0;
  frame.end = frame.keys.length;
}

/**
 * Whether `node` has a `toJSON` method: one load, which V8 answers for plain data in a third of the time an
 * `in` takes (2 ns an object, where `in` took 7: the walks of call arguments ask it of each object).
 */
export function hasToJSON(node: object): boolean {
  return typeof (node as { toJSON?: unknown }).toJSON === "function";
}

/** `JSON.isRawJSON`, where the engine has it (V8 and JavaScriptCore do). */
const isRawJSON = (JSON as { isRawJSON?: (v: unknown) => boolean }).isRawJSON;

/** Whether `v` is a raw JSON object (`JSON.rawJSON`: an MCP id past 2^53), which JSON writes as its text. */
export function isRawJson(v: unknown): boolean {
  return isRawJSON?.(v) === true;
}

/**
 * The primitive `JSON.stringify` writes for `node`: a `Number` or `String` object's as `Number()` and
 * `String()` read it, a `Boolean` or `BigInt` object's own, a raw JSON object's text parsed; else `node`. A
 * boxed `false` copied as `{}` made `additionalProperties: new Boolean(false)` allow every key while the
 * model was sent `false`, and the tools caches, keyed by the JSON text, gave that validator to tools holding
 * a plain `false`. Plain data is told by its prototype, one read; only other objects are tried.
 */
export function unwrapped(node: object): unknown {
  const proto = Object.getPrototypeOf(node);
  if (proto === Object.prototype) return node;
  if (proto === null) return isRawJSON?.(node) ? JSON.parse((node as { rawJSON: string }).rawJSON) : node;
  for (const [brand, read] of BOXES) {
    try {
      brand.call(node); // throws unless `node` holds that primitive (a subclass or other prototype still does)
    } catch {
      continue;
    }
    return read(node);
  }
  return node;
}

/** Each box `JSON.stringify` opens: the method that throws on any other object, and how JSON reads it. */
const BOXES: readonly [(this: unknown) => unknown, (node: object) => unknown][] = [
  [Number.prototype.valueOf, Number],
  [String.prototype.valueOf, String],
  [Boolean.prototype.valueOf, (node) => Boolean.prototype.valueOf.call(node)],
  [BigInt.prototype.valueOf, (node) => BigInt.prototype.valueOf.call(node)],
];
