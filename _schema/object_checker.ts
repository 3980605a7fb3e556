/**
 * The interpreter's checker for the object keywords of a schema node: `properties`, `patternProperties`,
 * `additionalProperties`, `required`, `propertyNames`, `minProperties`, `maxProperties`,
 * `dependentRequired`. The keywords are read and validated once; the check then walks the object's own
 * keys, in the yes/no mode (`out === null`) or the reporting mode.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { firstHole, isRecord, plural } from "../_common/values.ts";
import type { Finding } from "../types.ts";
import { type Check, type NodeCompiler, SchemaError } from "./keywords.ts";
import { push, reportExtra, show, where } from "./report.ts";
import { makeRegExp, safeTest } from "./values.ts";

/** The object keywords of a schema node, read, validated and compiled. */
interface ObjectRules {
  /** `properties`, in a null-prototype table (a property named "__proto__" is looked up safely). */
  props: Record<string, Check>;
  /** The names `properties` declares, in order. */
  propNames: string[];
  /** `patternProperties`: each pattern with its check. */
  patterns: [RegExp, Check][];
  /** `additionalProperties`, or null when absent. */
  additional: Check | null;
  /** `additionalProperties: false`, reported with the list of accepted names. */
  additionalFalse: boolean;
  /** `required`. */
  required: string[];
  /** `propertyNames`, or null when absent. */
  names: Check | null;
  /** `minProperties`. */
  minP: number | undefined;
  /** `maxProperties`. */
  maxP: number | undefined;
  /** `dependentRequired`: each trigger name with the names it needs. */
  deps: [string, string[]][];
  /** The declared names as a message lists them ("none" when there are none). */
  allowed: string;
}

/** Throws the {@link SchemaError} for object keyword `k` at `ptr`, which must be `what`. */
function badKeyword(ptr: string, k: string, what: string): never {
  throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be ${what}`);
}

/** True for an array of strings (a hole is the null JSON sends: read up to it, not every slot past it). */
const isNameList = (x: unknown): x is string[] =>
  Array.isArray(x) && firstHole(x) < 0 && x.every((n) => typeof n === "string");

/** `properties`, compiled: the check table and the declared names. */
function declaredProperties(s: Record<string, unknown>, ptr: string, node: NodeCompiler) {
  // null-prototype table, so a property named "constructor" or "__proto__" is looked up safely
  const props: Record<string, Check> = Object.create(null);
  const propNames: string[] = [];
  if (s.properties !== undefined) {
    if (!isRecord(s.properties)) badKeyword(ptr, "properties", "an object of schemas");
    const m = s.properties as Record<string, unknown>;
    for (const k of Object.keys(m)) {
      props[k] = node(m[k], `${ptr}/properties/${escapePointer(k)}`);
      propNames.push(k);
    }
  }
  return { props, propNames };
}

/** `patternProperties`, compiled. */
function patternProperties(s: Record<string, unknown>, ptr: string, node: NodeCompiler): [RegExp, Check][] {
  const patterns: [RegExp, Check][] = [];
  if (s.patternProperties === undefined) return patterns;
  if (!isRecord(s.patternProperties)) badKeyword(ptr, "patternProperties", "an object of schemas");
  const m = s.patternProperties as Record<string, unknown>;
  for (const k of Object.keys(m)) {
    const at = `${ptr}/patternProperties/${escapePointer(k)}`;
    patterns.push([makeRegExp(k, at, "patternProperties"), node(m[k], at)]);
  }
  return patterns;
}

/** `minProperties` or `maxProperties`, checked to be a count. */
function propertyCount(s: Record<string, unknown>, ptr: string, k: string): number | undefined {
  const n = s[k];
  if (n !== undefined && (typeof n !== "number" || !Number.isInteger(n) || n < 0)) {
    badKeyword(ptr, k, "a non-negative integer");
  }
  return n as number | undefined;
}

/** `dependentRequired`, checked. */
function dependentRequired(s: Record<string, unknown>, ptr: string): [string, string[]][] {
  const deps: [string, string[]][] = [];
  if (s.dependentRequired === undefined) return deps;
  const what = "an object of property-name arrays";
  if (!isRecord(s.dependentRequired)) badKeyword(ptr, "dependentRequired", what);
  for (const [k, v] of Object.entries(s.dependentRequired as object)) {
    if (!isNameList(v)) badKeyword(ptr, "dependentRequired", what);
    deps.push([k, v as string[]]);
  }
  return deps;
}

/** Reads the object keywords of `s` (at `ptr`), in the order their errors are reported. */
function objectRules(s: Record<string, unknown>, ptr: string, node: NodeCompiler): ObjectRules {
  const { props, propNames } = declaredProperties(s, ptr, node);
  const patterns = patternProperties(s, ptr, node);
  const additional = s.additionalProperties === undefined
    ? null
    : node(s.additionalProperties, `${ptr}/additionalProperties`);
  let required: string[] = [];
  if (s.required !== undefined) {
    if (!isNameList(s.required)) badKeyword(ptr, "required", "an array of property names");
    required = s.required as string[];
  }
  const names = s.propertyNames === undefined ? null : node(s.propertyNames, `${ptr}/propertyNames`);
  const minP = propertyCount(s, ptr, "minProperties");
  const maxP = propertyCount(s, ptr, "maxProperties");
  const deps = dependentRequired(s, ptr);
  const allowed = propNames.length > 0 ? propNames.map((k) => JSON.stringify(k)).join(", ") : "none";
  return {
    props,
    propNames,
    patterns,
    additional,
    additionalFalse: s.additionalProperties === false,
    required,
    names,
    minP,
    maxP,
    deps,
    allowed,
  };
}

/** Reports a missing property `r` of the object at `p`; `why` ends the message. */
function reportMissing(out: Finding[], p: string, r: string, why: string): void {
  const at = `${p}/${escapePointer(r)}`;
  push(out, "missing_required_argument", at, `${where(at)} is required${why}; add it.`, "present", "missing");
}

/** `required`: every name is an own property. */
function checkRequired(required: string[], v: object, p: string, out: Finding[] | null): boolean {
  let ok = true;
  for (let i = 0; i < required.length; i++) {
    const r = required[i];
    if (!Object.hasOwn(v, r)) {
      if (!out) return false;
      ok = false;
      reportMissing(out, p, r, " but missing");
    }
  }
  return ok;
}

/** `properties` alone: each declared property that is present, against its schema. */
function checkDeclared(
  rules: ObjectRules,
  v: Record<string, unknown>,
  p: string,
  out: Finding[] | null,
): boolean {
  const { propNames, props } = rules;
  let ok = true;
  for (let i = 0; i < propNames.length; i++) {
    const k = propNames[i];
    if (Object.hasOwn(v, k) && !props[k](v[k], out ? `${p}/${escapePointer(k)}` : p, out)) {
      if (!out) return false;
      ok = false;
    }
  }
  return ok;
}

/** `minProperties` and `maxProperties` against `count` keys. */
function checkCount(rules: ObjectRules, count: number, p: string, out: Finding[] | null): boolean {
  const { minP, maxP } = rules;
  let ok = true;
  if (minP !== undefined && count < minP) {
    if (!out) return false;
    ok = false;
    push(
      out,
      "argument_constraint",
      p,
      `${where(p)} must have at least ${minP} ${plural(minP, "property", "properties")}.`,
      `at least ${minP} ${plural(minP, "property", "properties")}`,
      `${count} ${plural(count, "property", "properties")}`,
    );
  }
  if (maxP !== undefined && count > maxP) {
    if (!out) return false;
    ok = false;
    push(
      out,
      "argument_constraint",
      p,
      `${where(p)} must have at most ${maxP} ${plural(maxP, "property", "properties")}.`,
      `at most ${maxP} ${plural(maxP, "property", "properties")}`,
      `${count} ${plural(count, "property", "properties")}`,
    );
  }
  return ok;
}

/**
 * Why the name at `at` is not allowed, from the finding its check gave: the name said once ("it", where that
 * message named it again, which for a long name was its whole text twice) and its full stop and instruction
 * ("; leave it out") left out, as the sentence goes on after the parenthesis with its own.
 */
function nameReason(message: string, at: string): string {
  const named = where(at) + " ";
  const reason = message.startsWith(named) ? "it " + message.slice(named.length) : message;
  // (and its instruction left out too: the sentence gives its own, "rename or remove it")
  return reason.replace(/\.$/, "").replace(NAME_INSTRUCTION, "");
}

/** The instructions a check's message ends with that a name's reason leaves out ("; leave it out"). */
const NAME_INSTRUCTION = /; (?:leave it out|choose a different value)$/;

/** `propertyNames`: key `k` (at pointer `at`) is an allowed name. */
function checkName(names: Check, k: string, at: string, out: Finding[] | null): boolean {
  const f: Finding[] | null = out ? [] : null;
  if (names(k, at, f)) return true;
  if (out) {
    push(
      out,
      "unexpected_argument",
      at,
      `${where(at)} is not an allowed property name${
        f && f[0] ? ` (${nameReason(f[0].message, at)})` : ""
      }; rename or remove it.`,
      "an allowed property name",
      show(k),
    );
  }
  return false;
}

/** One own property `k` (value `x`, at pointer `at`): its name, then every schema that applies to it. */
function checkKey(rules: ObjectRules, k: string, x: unknown, at: string, out: Finding[] | null): boolean {
  let ok = true;
  if (rules.names !== null && !checkName(rules.names, k, at, out)) {
    if (!out) return false;
    ok = false;
  }
  let matched = false;
  const c = rules.props[k];
  if (c !== undefined) {
    matched = true;
    if (!c(x, at, out)) {
      if (!out) return false;
      ok = false;
    }
  }
  const patterns = rules.patterns;
  for (let j = 0; j < patterns.length; j++) {
    if (safeTest(patterns[j][0], k)) {
      matched = true;
      if (!patterns[j][1](x, at, out)) {
        if (!out) return false;
        ok = false;
      }
    }
  }
  if (!matched && rules.additional !== null) {
    if (rules.additionalFalse) {
      if (!out) return false;
      ok = false;
      reportExtra(out, at, k, rules.allowed);
    } else if (!rules.additional(x, at, out)) {
      if (!out) return false;
      ok = false;
    }
  }
  return ok;
}

/** The keywords that need the object's keys: counts, then each own key in order. */
function checkKeys(
  rules: ObjectRules,
  v: Record<string, unknown>,
  p: string,
  out: Finding[] | null,
): boolean {
  const keys = Object.keys(v);
  let ok = checkCount(rules, keys.length, p, out);
  if (!ok && !out) return false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (!checkKey(rules, k, v[k], out ? `${p}/${escapePointer(k)}` : p, out)) {
      if (!out) return false;
      ok = false;
    }
  }
  return ok;
}

/** `dependentRequired`: each present trigger brings the names it needs. */
function checkDependents(deps: [string, string[]][], v: object, p: string, out: Finding[] | null): boolean {
  let ok = true;
  for (let i = 0; i < deps.length; i++) {
    const [k, needs] = deps[i];
    if (!Object.hasOwn(v, k)) continue;
    for (const r of needs) {
      if (!Object.hasOwn(v, r)) {
        if (!out) return false;
        ok = false;
        reportMissing(out, p, r, ` when "${k}" is given`);
      }
    }
  }
  return ok;
}

/**
 * The object keywords of `s`: `properties`, `patternProperties`, `additionalProperties`, `required`,
 * `propertyNames`, `minProperties`, `maxProperties`, `dependentRequired`. Throws {@link SchemaError} for a
 * bad keyword value; `node` compiles the subschemas.
 */
export function objectChecker(s: Record<string, unknown>, ptr: string, node: NodeCompiler): Check {
  const rules = objectRules(s, ptr, node);
  const needKeys = rules.patterns.length > 0 || rules.additional !== null || rules.names !== null ||
    rules.minP !== undefined || rules.maxP !== undefined;
  const { required, deps } = rules;
  return (v, p, out) => {
    if (!isRecord(v)) return true;
    let ok = checkRequired(required, v, p, out);
    if (!ok && !out) return false;
    if (!(needKeys ? checkKeys(rules, v, p, out) : checkDeclared(rules, v, p, out))) {
      if (!out) return false;
      ok = false;
    }
    if (deps.length > 0 && !checkDependents(deps, v, p, out)) ok = false;
    return ok;
  };
}
