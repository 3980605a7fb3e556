/**
 * The interpreter's keyword checkers: each turns one keyword family of a schema node, already read and
 * validated, into a {@link Check} closure (the object keywords have a module of their own,
 * object_checker.ts). Every check runs in two modes: a yes/no pass
 * (`out === null`) and a reporting pass that pushes findings with JSON Pointer paths.
 *
 * @module
 */
import { heldIndices, isRecord, plural } from "../_common/values.ts";
import type { Finding } from "../types.ts";
import { type Check, TRUE } from "./keywords.ts";
import { duplicateMessage, push, received, show, typeFail, where } from "./report.ts";
import { codePoints, deepEqual, firstDuplicate, isMultiple, safeTest } from "./values.ts";

/** True when `v` has JSON Schema type `t`. */
export function isType(t: string, v: unknown): boolean {
  switch (t) {
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "integer":
      return typeof v === "number" && Number.isSafeInteger(v);
    case "boolean":
      return typeof v === "boolean";
    case "null":
      return v === null;
    case "array":
      return Array.isArray(v);
    default:
      return isRecord(v);
  }
}

/** `type`: the value has one of `types`. */
export function typeChecker(types: string[]): Check {
  const expected = types.join(" or ");
  const fail = (v: unknown, p: string, out: Finding[] | null) => {
    if (out) typeFail(out, v, p, expected);
    return false;
  };
  if (types.length === 1) {
    const t = types[0];
    switch (t) {
      case "string":
        return (v, p, out) => typeof v === "string" || fail(v, p, out);
      case "integer":
        return (v, p, out) => (typeof v === "number" && Number.isSafeInteger(v)) || fail(v, p, out);
      case "number":
        return (v, p, out) => (typeof v === "number" && Number.isFinite(v)) || fail(v, p, out);
      case "boolean":
        return (v, p, out) => typeof v === "boolean" || fail(v, p, out);
      case "object":
        return (v, p, out) => isRecord(v) || fail(v, p, out);
      default:
        return (v, p, out) => isType(t, v) || fail(v, p, out);
    }
  }
  return (v, p, out) => {
    for (const t of types) if (isType(t, v)) return true;
    return fail(v, p, out);
  };
}

/** The `false` schema: nothing is allowed here. */
export const FALSE: Check = (v, p, out) => {
  if (out) {
    push(
      out,
      "unexpected_argument",
      p,
      `${where(p)} is not allowed here; leave it out.`,
      "nothing",
      received(v),
    );
  }
  return false;
};

/** `enum`: the value equals one of `values` (JSON equality). */
export function enumChecker(values: readonly unknown[]): Check {
  const prim = values.every((x) => typeof x !== "object" || x === null);
  const set = prim ? new Set(values) : null;
  const expected = values.map((x) => show(x, 40)).join(", ");
  return (v, p, out) => {
    if (set ? set.has(v) : values.some((x) => deepEqual(x, v))) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must be one of: ${expected}.`,
        `one of ${expected}`,
        received(v),
      );
    }
    return false;
  };
}

/** `const`: the value equals `c` (JSON equality). */
export function constChecker(c: unknown): Check {
  return (v, p, out) => {
    if (deepEqual(c, v)) return true;
    if (out) {
      push(out, "argument_constraint", p, `${where(p)} must be exactly ${show(c)}.`, show(c), received(v));
    }
    return false;
  };
}

/** The numeric bounds of a schema node, each absent when the node does not set it. */
export interface NumberBounds {
  /** `minimum`. */
  min?: number;
  /** `maximum`. */
  max?: number;
  /** `exclusiveMinimum`. */
  xmin?: number;
  /** `exclusiveMaximum`. */
  xmax?: number;
  /** `multipleOf`. */
  mult?: number;
}

/** `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, for numbers. */
export function numberChecker({ min, max, xmin, xmax, mult }: NumberBounds): Check {
  return (v, p, out) => {
    if (typeof v !== "number") return true;
    let ok = true;
    const bad = (expected: string, words: string) => {
      ok = false;
      if (out) {
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must be ${words}.`,
          expected,
          show(v),
        );
      }
    };
    if (min !== undefined && !(v >= min)) {
      bad(`>= ${min}`, `at least ${min}`);
      if (!out) return false;
    }
    if (max !== undefined && !(v <= max)) {
      bad(`<= ${max}`, `at most ${max}`);
      if (!out) return false;
    }
    if (xmin !== undefined && !(v > xmin)) {
      bad(`> ${xmin}`, `greater than ${xmin}`);
      if (!out) return false;
    }
    if (xmax !== undefined && !(v < xmax)) {
      bad(`< ${xmax}`, `less than ${xmax}`);
      if (!out) return false;
    }
    if (mult !== undefined && !isMultiple(v, mult)) bad(`a multiple of ${mult}`, `a multiple of ${mult}`);
    return ok;
  };
}

/** The length bounds of a string, in code points. */
export interface LengthBounds {
  /** `minLength`. */
  min?: number;
  /** `maxLength`. */
  max?: number;
}

/** `minLength`, `maxLength`, for strings (a too-long string is not also reported too short). */
export function lengthChecker({ min, max }: LengthBounds): Check {
  return (v, p, out) => {
    if (typeof v !== "string") return true;
    // code points never exceed UTF-16 units, so the unit count settles most cases without counting
    if (max !== undefined && v.length > max && codePoints(v) > max) {
      if (out) {
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must be at most ${max} ${plural(max, "character")} long.`,
          `at most ${max} ${plural(max, "character")}`,
          `${codePoints(v)} ${plural(codePoints(v), "character")}`,
        );
      }
      return false;
    }
    if (min !== undefined && v.length < 2 * min && codePoints(v) < min) {
      if (out) {
        push(
          out,
          "argument_constraint",
          p,
          `${where(p)} must be at least ${min} ${plural(min, "character")} long.`,
          `at least ${min} ${plural(min, "character")}`,
          `${codePoints(v)} ${plural(codePoints(v), "character")}`,
        );
      }
      return false;
    }
    return true;
  };
}

/** `pattern`, for strings. */
export function patternChecker(re: RegExp): Check {
  return (v, p, out) => {
    if (typeof v !== "string" || safeTest(re, v)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must match the pattern ${re.source}.`,
        `a string matching /${re.source}/`,
        show(v),
      );
    }
    return false;
  };
}

/** A string `format` named `name`, asserted by `f`. */
export function formatChecker(name: string, f: (s: string) => boolean): Check {
  return (v, p, out) => {
    if (typeof v !== "string" || f(v)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must be a valid ${name}.`,
        `format ${name}`,
        show(v),
      );
    }
    return false;
  };
}

/** A numeric `format` (OpenAPI `int32` and the like) named `name`, asserted by `f`. */
export function numericFormatChecker(name: string, f: (n: number) => boolean): Check {
  return (v, p, out) => {
    if (typeof v !== "number" || f(v)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must be a valid ${name}.`,
        `format ${name}`,
        show(v),
      );
    }
    return false;
  };
}

/** The array keywords of a schema node, compiled. */
export interface ArrayRules {
  /** `prefixItems` (or draft-07 tuple `items`): a check per leading item. */
  prefix: Check[];
  /** `items`: the check for every item after the prefix, or null when they are free. */
  items: Check | null;
  /** `minItems`. */
  minItems?: number;
  /** `maxItems`. */
  maxItems?: number;
  /** `uniqueItems: true`. */
  unique: boolean;
}

/**
 * Empty slots of one array (holes, in an array built in code) whose failure is reported in full; past them
 * one finding counts the rest. A hole is sent as `null`, so each fails as the first does: a sparse array of
 * length 2^32-1 would otherwise be reported slot by slot until memory ran out.
 */
export const HOLES_REPORTED = 10;

/**
 * The items of `v` from `from` (where an item read `undefined`) to its end against the `items` schema:
 * `ok` answers yes or no, `report` (with `out`) pushes the findings at an item's pointer under `p`. Read as
 * JSON sends them: by index to the first hole, then by the indices the array holds (a sparse array built in
 * code, length 2^32-1, costs what it holds), an `undefined` or a hole as `null`, which is asked of `ok` once
 * for all the holes. The first {@link HOLES_REPORTED} failing holes are reported as JSON's nulls would be,
 * the rest in one finding that counts them. True when every item passes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { restOfItems } from "./checkers.ts";
 * import type { Finding } from "../types.ts";
 *
 * const sparse: unknown[] = ["a"];
 * sparse.length = 2 ** 32 - 1;
 * sparse[9] = "b";
 * const isText = (x: unknown) => typeof x === "string";
 * assert.equal(restOfItems(sparse, 1, (x) => x === null || isText(x), null, "/a", null), true);
 * const out: Finding[] = [];
 * const report = (x: unknown, p: string, o: Finding[] | null) =>
 *   isText(x) || (o?.push({ code: "argument_type_mismatch", path: p, message: `${p} is no string` }), false);
 * assert.equal(restOfItems(sparse, 1, isText, report, "/a", out), false);
 * assert.equal(out.length, 11);
 * assert.equal(out[9].path, "/a/11");
 * assert.equal(out[10].message, '"/a/12" and 4294967282 more empty items after it are sent as null and fail as "/a/1" does.');
 * ```
 */
export function restOfItems(
  v: readonly unknown[],
  from: number,
  ok: (item: unknown) => boolean,
  report: Check | null,
  p: string,
  out: Finding[] | null,
): boolean {
  const reporting = out !== null && report !== null;
  let all = true;
  let i = from;
  for (; i < v.length; i++) {
    const x = v[i];
    if (x === undefined && !(i in v)) break; // a hole
    if (ok(x === undefined ? null : x)) continue;
    if (!reporting) return false;
    all = false;
    report(x === undefined ? null : x, `${p}/${i}`, out);
  }
  if (i === v.length) return all;
  const held = heldIndices(v, i + 1);
  const holes = v.length - i - held.length;
  const holesOk = ok(null); // (each hole is sent as null: asked once for all of them)
  if (!holesOk && !reporting) return false;
  // each held item and, while they are reported one by one, each failing hole, in order; past those, one
  // finding in the place of the first hole left counts the rest (only when it stands for more than one)
  let reported = 0;
  let firstFinding = -1; // (the first hole's place in `out`: the count repeats its words)
  let counted = false;
  let next = i; // the first index not yet read
  for (let h = 0; h <= held.length; h++) {
    const end = h < held.length ? held[h] : v.length;
    for (let j = next; !holesOk && !counted && j < end; j++) {
      if (reported === HOLES_REPORTED && holes > HOLES_REPORTED + 1) {
        countHoles(out!, firstFinding, holes - HOLES_REPORTED - 1, `${p}/${j}`, `${p}/${i}`);
        counted = true;
      } else {
        if (reported++ === 0) firstFinding = out!.length;
        report!(null, `${p}/${j}`, out);
      }
    }
    if (h === held.length) break;
    next = end + 1;
    const x = v[end];
    if (ok(x === undefined ? null : x)) continue;
    if (!reporting) return false;
    all = false;
    report(x === undefined ? null : x, `${p}/${end}`, out);
  }
  return holesOk && all;
}

/**
 * Pushes onto `out` the finding that counts the holes past those reported one by one: the one at `at` and
 * `more` after it, which fail as the first hole (`first`) did; its code, expected and received are those of
 * the first hole's finding, `out[firstFinding]`.
 */
function countHoles(out: Finding[], firstFinding: number, more: number, at: string, first: string): void {
  const like = out[firstFinding] as Finding | undefined;
  const f: Finding = {
    code: like?.code ?? "argument_constraint",
    path: at,
    message:
      `${where(at)} and ${more} more empty ${plural(more, "item")} after it are sent as null and fail ` +
      `as ${where(first)} does.`,
  };
  if (like?.expected !== undefined) f.expected = like.expected;
  if (like?.received !== undefined) f.received = like.received;
  out.push(f);
}

/** The array keywords: item counts, each item against its schema, then uniqueness. */
export function arrayChecker({ prefix, items, minItems, maxItems, unique }: ArrayRules): Check {
  const np = prefix.length;
  return (v, p, out) => {
    if (!Array.isArray(v)) return true;
    let ok = true;
    const n = v.length;
    if (minItems !== undefined && n < minItems) {
      if (!out) return false;
      ok = false;
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must have at least ${minItems} ${plural(minItems, "item")}.`,
        `at least ${minItems} ${plural(minItems, "item")}`,
        `${n} ${plural(n, "item")}`,
      );
    }
    if (maxItems !== undefined && n > maxItems) {
      if (!out) return false;
      ok = false;
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} must have at most ${maxItems} ${plural(maxItems, "item")}.`,
        `at most ${maxItems} ${plural(maxItems, "item")}`,
        `${n} ${plural(n, "item")}`,
      );
    }
    for (let i = 0; i < n; i++) {
      const c = i < np ? prefix[i] : items;
      if (c === null) break;
      const x = v[i];
      if (x === undefined && i >= np) { // a hole or undefined (JSON sends null): the rest by what is held
        if (!restOfItems(v, i, (y) => c(y, p, null), c, p, out)) {
          if (!out) return false;
          ok = false;
        }
        break;
      }
      if (!c(x === undefined ? null : x, out ? `${p}/${i}` : p, out)) {
        if (!out) return false;
        ok = false;
      }
    }
    if (unique && n > 1) {
      const d = firstDuplicate(v);
      if (d !== null) {
        if (!out) return false;
        ok = false;
        push(
          out,
          "argument_constraint",
          p,
          duplicateMessage(p, d),
          "unique items",
          `duplicate ${show(v[d[1]] ?? null)}`,
        );
      }
    }
    return ok;
  };
}

/** `anyOf`: at least one alternative matches. */
export function anyOfChecker(alts: Check[]): Check {
  return (v, p, out) => {
    for (const a of alts) if (a(v, p, null)) return true;
    if (out) reportAlternatives(alts, v, p, out, "any");
    return false;
  };
}

/** `oneOf`: exactly one alternative matches. */
export function oneOfChecker(alts: Check[]): Check {
  return (v, p, out) => {
    let first = -1;
    for (let i = 0; i < alts.length; i++) {
      if (alts[i](v, p, null)) {
        if (first >= 0) {
          if (out) {
            push(
              out,
              "argument_constraint",
              p,
              `${where(p)} matches more than one of the allowed forms (${first + 1} and ${
                i + 1
              }); it must match exactly one.`,
              "exactly one matching form",
              "several matching forms",
            );
          }
          return false;
        }
        first = i;
      }
    }
    if (first >= 0) return true;
    if (out) reportAlternatives(alts, v, p, out, "one");
    return false;
  };
}

/**
 * Explains why no alternative matched: a merged type finding, or the findings of the closest one. Also
 * called by the generated code, over its own alternatives.
 */
export function reportAlternatives(
  alts: Check[],
  v: unknown,
  p: string,
  out: Finding[],
  _kind: string,
  typeMisses?: readonly (string | null)[],
): void {
  // plain loops: this runs on every failed anyOf/oneOf, so it allocates only the per-alternative lists.
  // `typeMisses[i]`, when given and not null, says alternative i fails on its type alone (its findings would
  // be exactly one type mismatch expecting that type): it is then not run, and no finding is built for it.
  let expectedTypes: string[] | null = [];
  let best: Finding[] | null = null;
  for (let i = 0; i < alts.length; i++) {
    const miss = typeMisses === undefined ? null : typeMisses[i];
    if (miss !== null) {
      expectedTypes?.push(miss);
      continue;
    }
    const f: Finding[] = [];
    alts[i](v, p, f);
    if (f.length > 0 && f[0].code === "argument_type_mismatch" && f[0].path === p) {
      expectedTypes?.push(f[0].expected ?? "");
      continue;
    }
    expectedTypes = null; // one alternative got past its type: report that one's problems
    if (!best || f.length < best.length) best = f;
  }
  reportNoMatch(expectedTypes, best, v, p, out);
}

/**
 * The end of {@link reportAlternatives}, also run by generated code that walks its alternatives inline:
 * `expectedTypes` lists what each alternative expected when every one failed on its type alone (else
 * null), `best` the findings of the closest alternative that got past its type (null when none did).
 */
export function reportNoMatch(
  expectedTypes: string[] | null,
  best: Finding[] | null,
  v: unknown,
  p: string,
  out: Finding[],
): void {
  if (expectedTypes !== null) {
    // (as one type's: an integer past 2^53 is told to be sent within range, not "must be a string or an
    // integer, not an integer")
    typeFail(out, v, p, [...new Set(expectedTypes)].join(" or "));
    return;
  }
  if (!best || best.length === 0) {
    push(
      out,
      "argument_constraint",
      p,
      `${where(p)} does not match any of the allowed forms.`,
      "one of the allowed forms",
      received(v),
    );
    return;
  }
  for (const f of best) out.push(f);
}

/** `not`: the value must not match `sub`. */
export function notChecker(sub: Check): Check {
  return (v, p, out) => {
    if (!sub(v, p, null)) return true;
    if (out) {
      push(
        out,
        "argument_constraint",
        p,
        `${where(p)} has a value that is explicitly not allowed; choose a different value.`,
        "a value not matching the excluded schema",
        received(v),
      );
    }
    return false;
  };
}

/** `if`/`then`/`else`: `then` applies where `cond` matches, `else` elsewhere. */
export function conditionalChecker(cond: Check, then: Check, otherwise: Check): Check {
  return (v, p, out) => cond(v, p, null) ? then(v, p, out) : otherwise(v, p, out);
}

/** The compiled keywords of one schema node, for {@link combine}. */
export interface NodeChecks {
  /** The `type` check, or null when the node has no `type`. */
  type: Check | null;
  /** OpenAPI `nullable: true`: null is valid whatever the other keywords say. */
  nullable: boolean;
  /** The checks of every other keyword, in order. */
  checks: Check[];
}

/** Joins the checks of one schema node: `nullable` first, then `type`, then every other keyword. */
export function combine({ type: typeCheck, nullable, checks }: NodeChecks): Check {
  const n = checks.length;
  if (!nullable) {
    if (n === 0) return typeCheck ?? TRUE;
    if (n === 1 && !typeCheck) return checks[0];
    if (n === 1 && typeCheck) {
      const t = typeCheck, c = checks[0];
      return (v, p, out) => t(v, p, out) && c(v, p, out);
    }
  }
  return (v, p, out) => {
    if (nullable && v === null) return true;
    if (typeCheck && !typeCheck(v, p, out)) return false;
    if (out === null) {
      for (let i = 0; i < n; i++) if (!checks[i](v, p, null)) return false;
      return true;
    }
    let ok = true;
    for (let i = 0; i < n; i++) if (!checks[i](v, p, out)) ok = false;
    return ok;
  };
}
