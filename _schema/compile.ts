/**
 * The JSON Schema engine: compiles a schema (2020-12 keywords that tool schemas use, plus OpenAPI
 * `nullable`) into a tree of small closures once, then checks values against it; where the runtime allows
 * it, the code generator turns the accepted schema into specialised JavaScript that says exactly the same
 * things. Every check runs in two modes: a yes/no pass (`out === null`) and a reporting pass that
 * collects findings with JSON Pointer paths. Valid values only ever take the yes/no pass.
 *
 * @module
 */
import { escapePointer, unescapePointer } from "../_common/pointer.ts";
import { firstHole, isRecord } from "../_common/values.ts";
import { bigIntIn } from "../_common/json.ts";
import { schemaGraphProblem } from "../_common/measure.ts";
import {
  ANNOTATION_KEYWORDS,
  ASSERTION_KEYWORDS,
  type Check,
  type NodeCompiler,
  NUMERIC_FORMATS,
  type RefTarget,
  SchemaError,
  type Tree,
  TRUE,
  TYPES,
} from "./keywords.ts";
import {
  anyOfChecker,
  arrayChecker,
  combine,
  conditionalChecker,
  constChecker,
  enumChecker,
  FALSE,
  formatChecker,
  lengthChecker,
  notChecker,
  numberChecker,
  numericFormatChecker,
  oneOfChecker,
  patternChecker,
  typeChecker,
} from "./checkers.ts";
import { generate } from "./codegen.ts";
import { objectChecker } from "./object_checker.ts";
import { FORMATS } from "./formats.ts";
import { budget, overBudget, REF_STEPS, RefResolver } from "./refs.ts";
import { show } from "./report.ts";
import { makeRegExp, membersAsSent } from "./values.ts";

export { SchemaError } from "./keywords.ts";

/** Options for {@link compile}. */
export interface CompileOptions {
  /** Assert `format` (default true). With false, formats are annotations. */
  assertFormats?: boolean;
  /**
   * Generate a specialised function with `new Function` (default true). Where the runtime forbids code
   * generation, or with false, the closure interpreter runs instead; both give the same findings.
   */
  codegen?: boolean;
}

/** Every option of {@link CompileOptions}, for callers that pass a subset of theirs through. */
export const COMPILE_OPTION_KEYS = [
  "assertFormats",
  "codegen",
] as const satisfies readonly (keyof CompileOptions)[];
/** Compile-time proof that {@link COMPILE_OPTION_KEYS} lists every option. */
const _everyCompileOption: Exclude<keyof CompileOptions, typeof COMPILE_OPTION_KEYS[number]> extends never
  ? true
  : never = true;

/** Whether `format` is asserted or an annotation. */
interface FormatMode {
  /** True: `format` is asserted. */
  assertFormats: boolean;
}

/**
 * Throws {@link SchemaError} for a schema built in code that contains itself or shares its objects past
 * measure (see `schemaGraphProblem`), for the entry points that take a schema straight from the caller (a
 * tool's is refused as it is normalised, before any walk). The compiler meets each object once, so neither
 * would hang it; but a loop means nothing as JSON, and whoever reads the schema next reads it as a tree.
 */
export function assertReadable(schema: unknown): void {
  const problem = schemaGraphProblem(schema);
  if (problem !== null) throw new SchemaError("", problem.at, problem.message);
}

/**
 * Compiles a schema into a {@link Check}. Throws {@link SchemaError} for anything it cannot enforce, a
 * schema nested deeper than the runtime's call stack reaches included.
 */
export function compile(root: unknown, options: CompileOptions = {}): Check {
  try {
    const interpreter = new Interpreter(root, { assertFormats: options.assertFormats ?? true });
    const tree = interpreter.node(root, "");
    interpreter.assertEnds();
    // the entry point gives each check its budget of $ref steps (the generated one does the same)
    const rootCheck: Check = (v, p, out) => {
      budget.left = REF_STEPS;
      return tree(v, p, out);
    };
    if (options.codegen === false) return rootCheck;
    return generate(root, interpreter, rootCheck) ?? rootCheck;
  } catch (e) {
    // The compiler recurses with the schema: a real one is a few levels deep, a hostile one thousands.
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      throw new SchemaError(
        "",
        "",
        "the schema nests too deeply to compile (the runtime's call stack ran out, a thousand levels or " +
          "more down); flatten it",
      );
    }
    throw e;
  }
}

/**
 * Throws {@link SchemaError} at the first BigInt in a schema built in code (`const: 5n`, `enum: [5n]`, or one
 * under any key, see `bigIntIn`): JSON has no form for it, so the tools cannot be sent to the model as
 * written, and a finding would tell the model a value it cannot send ("must be exactly 5n"). Each entry point
 * calls it on the copy it compiles (plain data, so the walk reads nothing of the caller's a second time).
 */
export function refuseBigInt(schema: unknown): void {
  const found = bigIntIn(schema);
  if (found !== null) throw bigIntError(found.at, found.value);
}

/** The errors {@link refuseBigInt} threw, and those said again by {@link reworded}, each to the first. */
const bigIntErrors = new WeakMap<object, SchemaError>();

/**
 * The error {@link refuseBigInt} threw (a schema holding a BigInt) that `error` is or says again, else
 * undefined: for a caller that otherwise keeps a schema it cannot compile as unchecked (the MCP guard's
 * `setTools`), and words the refusal its own way.
 */
export function bigIntRefusal(error: unknown): SchemaError | undefined {
  return typeof error === "object" && error !== null ? bigIntErrors.get(error) : undefined;
}

/**
 * `error` said again as `message` (a caller naming the tool it came from), still known to
 * {@link bigIntRefusal} when it was one.
 */
export function reworded(error: SchemaError, message: string): SchemaError {
  const again = new SchemaError(error.keyword, error.pointer, message);
  const first = bigIntErrors.get(error);
  if (first !== undefined) bigIntErrors.set(again, first);
  return again;
}

/** The {@link SchemaError} for a BigInt at `at`, saying what to write instead. */
function bigIntError(at: string, value: bigint): SchemaError {
  const place = at === "" ? "the root" : at;
  const safe = value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER);
  const instead = safe
    ? `write the number ${value} instead`
    : "write it as a number, or the digits as a string (a number rounds them past 2^53)";
  // the keyword holding it, as near as a pointer tells: the last key that is not an array index
  const keyword = at.split("/").reverse().find((k) => !/^\d+$/.test(k)) ?? "";
  const error = new SchemaError(
    unescapePointer(keyword),
    at,
    `the schema holds a BigInt at ${place} (${
      show(value)
    }), which JSON cannot write, so the model cannot be ` +
      `sent this schema; ${instead}`,
  );
  bigIntErrors.set(error, error);
  return error;
}

/** The closure interpreter: one {@link Check} per schema node, compiled once and cached by node. */
class Interpreter implements Tree {
  /** Whether formats are asserted. */
  readonly assertFormats: boolean;
  #cache = new Map<unknown, Check>();
  #refs: RefResolver;
  /** {@link Interpreter.node} as a plain function, for the object and applicator readers. */
  #node: NodeCompiler = (schema, ptr) => this.node(schema, ptr);
  /**
   * The in-place steps of the document (`$ref` and the applicators: the same value checked against another
   * schema), by the schema they leave, each with the pointer of the keyword that takes it.
   */
  #inPlace = new Map<object, { to: unknown; at: string }[]>();

  /** Prepares to compile the document `root`. */
  constructor(root: unknown, { assertFormats }: FormatMode) {
    this.assertFormats = assertFormats;
    this.#refs = new RefResolver(root);
  }

  /** The check for the schema node at `ptr` (cached per node object, so recursion ends). */
  node(schema: unknown, ptr: string): Check {
    if (schema === true) return TRUE;
    if (schema === false) return FALSE;
    if (!isRecord(schema)) {
      throw new SchemaError("", ptr, `the schema at ${ptr || "the root"} must be an object or a boolean`);
    }
    const hit = this.#cache.get(schema);
    if (hit) return hit;
    // a forwarding slot so recursive $ref can point at a schema still being compiled
    let real: Check = TRUE;
    const slot: Check = (v, p, o) => real(v, p, o);
    this.#cache.set(schema, slot);
    real = this.#build(schema, ptr);
    this.#cache.set(schema, real);
    return real;
  }

  /**
   * Throws {@link SchemaError} where a schema reaches itself again by in-place steps alone: checking a value
   * there would never end (2020-12 leaves such a schema's meaning undefined), so it is refused when compiled,
   * not reported as unreadable arguments on every call.
   */
  assertEnds(): void {
    const state = new Map<object, "open" | "done">();
    const path: { from: object; at: string }[] = [];
    const visit = (s: object): void => {
      state.set(s, "open");
      for (const { to, at } of this.#inPlace.get(s) ?? []) {
        if (!isRecord(to) || state.get(to) === "done") continue;
        if (state.get(to) === "open") {
          throw loopError([...path.slice(path.findIndex((e) => e.from === to)), {
            from: s,
            at,
          }].map((e) => e.at));
        }
        path.push({ from: s, at });
        visit(to);
        path.pop();
      }
      state.set(s, "done");
    };
    for (const s of this.#inPlace.keys()) if (!state.has(s)) visit(s);
  }

  /** Notes an in-place step from `from` to `to`, taken by the keyword at `at`. */
  #step(from: object, to: unknown, at: string): void {
    const steps = this.#inPlace.get(from);
    if (steps) steps.push({ to, at });
    else this.#inPlace.set(from, [{ to, at }]);
  }

  /** Resolves a `$ref` found in `holder`. */
  resolve(ref: string, at: string, holder: object): RefTarget {
    return this.#refs.resolve(ref, at, holder);
  }

  /** Compiles one schema object: its keywords family by family, in a fixed order (errors and findings). */
  #build(s: Record<string, unknown>, ptr: string): Check {
    assertKnownKeywords(s, ptr);
    const type = readType(s, ptr);
    const nullable = readNullable(s, ptr);
    const node = this.#node;
    const inPlace: NodeCompiler = (child, at) => {
      this.#step(s, child, at);
      return this.node(child, at);
    };
    const checks: Check[] = [
      ...enumConstChecks(s, ptr),
      ...numberChecks(s, ptr),
      ...stringChecks(s, ptr, this),
      ...arrayChecks(s, ptr, node),
      ...objectChecks(s, ptr, node),
      ...applicatorChecks(s, ptr, node, inPlace),
      ...this.#refChecks(s, ptr),
    ];
    return combine({ type, nullable, checks });
  }

  /** `$ref`: the check of the target, looked up on first use so that a schema can refer to itself. */
  #refChecks(s: Record<string, unknown>, ptr: string): Check[] {
    if (s.$ref === undefined) return [];
    if (typeof s.$ref !== "string") {
      throw new SchemaError("$ref", `${ptr}/$ref`, `"$ref" at ${ptr}/$ref must be a string`);
    }
    const target = this.resolve(s.$ref, `${ptr}/$ref`, s);
    this.#step(s, target.schema, `${ptr}/$ref`);
    let compiled: Check | null = null;
    const check: Check = (v, p, out) => {
      if (--budget.left < 0) overBudget();
      return (compiled ??= this.node(target.schema, target.ptr))(v, p, out);
    };
    // compile now too, so errors inside the target surface at compile time (cache keeps recursion finite)
    if (!this.#cache.has(target.schema)) compiled = this.node(target.schema, target.ptr);
    return [check];
  }
}

/**
 * The error for a loop of in-place steps (`steps`: the pointers of the keywords that take them, in order),
 * named by its first `$ref` (a loop within the tree alone needs an object that holds itself).
 */
function loopError(steps: readonly string[]): SchemaError {
  const at = steps.find((p) => p.endsWith("/$ref")) ?? steps[0];
  return new SchemaError(
    at.endsWith("/$ref") ? "$ref" : at.slice(at.lastIndexOf("/") + 1),
    at,
    `the schema loops back to itself through ${
      steps.join(" \u2192 ")
    } without looking into the value, so checking ` +
      "any value would never end; let one step of the loop check a property or an item, or remove it",
  );
}

/** Throws for a keyword the engine neither enforces nor ignores, and for `$defs` that are not schemas. */
function assertKnownKeywords(s: Record<string, unknown>, ptr: string): void {
  for (const k of Object.keys(s)) {
    if (ASSERTION_KEYWORDS.has(k) || ANNOTATION_KEYWORDS.has(k) || k.startsWith("x-")) continue;
    throw new SchemaError(
      k,
      `${ptr}/${escapePointer(k)}`,
      `keyword "${k}" at ${ptr}/${
        escapePointer(k)
      } is not supported, so the schema cannot be enforced; remove it or express it with supported keywords`,
    );
  }
  // $defs/definitions are compiled on demand through $ref, but must be schemas
  for (const d of ["$defs", "definitions"]) {
    if (s[d] !== undefined && !isRecord(s[d])) {
      throw new SchemaError(d, `${ptr}/${d}`, `"${d}" at ${ptr}/${d} must be an object of schemas`);
    }
  }
}

/** Keyword `k` of `s`, which must be a finite number when present. */
function num(s: Record<string, unknown>, k: string, ptr: string): number | undefined {
  const v = s[k];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be a number`);
  }
  return v;
}

/** Keyword `k` of `s`, which must be a non-negative integer when present. */
function count(s: Record<string, unknown>, k: string, ptr: string): number | undefined {
  const v = num(s, k, ptr);
  if (v !== undefined && (!Number.isInteger(v) || v < 0)) {
    throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be a non-negative integer`);
  }
  return v;
}

/** Keyword `k` of `s`, a non-empty array of schemas, compiled. */
function list(s: Record<string, unknown>, k: string, ptr: string, node: NodeCompiler): Check[] {
  const v = s[k];
  if (!Array.isArray(v) || v.length === 0) {
    throw new SchemaError(k, `${ptr}/${k}`, `"${k}" at ${ptr}/${k} must be a non-empty array of schemas`);
  }
  return schemas(v, `${ptr}/${k}`, node);
}

/**
 * Each schema of the list `v` at `at`, compiled. A hole (a sparse list built in code) is the `null` JSON
 * sends, no schema: refused at the first one, so a list of length 2^32-1 is not read slot by slot (as `map`
 * does, to skip its holes).
 */
function schemas(v: readonly unknown[], at: string, node: NodeCompiler): Check[] {
  const hole = firstHole(v);
  if (hole >= 0) node(null, `${at}/${hole}`); // (throws)
  return v.map((x, i) => node(x, `${at}/${i}`));
}

/** `type`, or null when the node does not constrain it. */
function readType(s: Record<string, unknown>, ptr: string): Check | null {
  if (s.type === undefined) return null;
  const list = Array.isArray(s.type) ? s.type : [s.type];
  // (a hole is a null, no type; two of them repeat: told before a list of length 2^32-1 is read slot by slot)
  const hole = firstHole(list);
  const types = hole < 0 ? list : membersAsSent(list);
  if (types.length === 0 || types.length < list.length || new Set(types).size !== types.length) {
    // an empty list would reject every value, with a message naming no type
    throw new SchemaError(
      "type",
      `${ptr}/type`,
      `"type" at ${ptr}/type must name at least one type, each once; got ${show(s.type)}`,
    );
  }
  for (const t of types) {
    if (typeof t !== "string" || !TYPES.has(t)) {
      throw new SchemaError("type", `${ptr}/type`, `"type" at ${ptr}/type has unknown type ${show(t)}`);
    }
  }
  return typeChecker(types as string[]);
}

/** OpenAPI `nullable`: whether null is accepted before any other keyword is asked. */
function readNullable(s: Record<string, unknown>, ptr: string): boolean {
  if (s.nullable !== undefined && typeof s.nullable !== "boolean") {
    throw new SchemaError(
      "nullable",
      `${ptr}/nullable`,
      `"nullable" at ${ptr}/nullable must be true or false`,
    );
  }
  return s.nullable === true;
}

/** `enum` and `const`. */
function enumConstChecks(s: Record<string, unknown>, ptr: string): Check[] {
  const checks: Check[] = [];
  if (s.enum !== undefined) {
    if (!Array.isArray(s.enum)) {
      throw new SchemaError("enum", `${ptr}/enum`, `"enum" at ${ptr}/enum must be an array`);
    }
    checks.push(enumChecker(membersAsSent(s.enum)));
  }
  if (Object.hasOwn(s, "const")) checks.push(constChecker(s.const));
  return checks;
}

/** The numeric bounds; a boolean `exclusiveMinimum`/`exclusiveMaximum` is the OpenAPI 3.0 / draft-04 form. */
function numberChecks(s: Record<string, unknown>, ptr: string): Check[] {
  let min = num(s, "minimum", ptr), max = num(s, "maximum", ptr);
  let xmin: number | undefined, xmax: number | undefined;
  if (typeof s.exclusiveMinimum === "boolean") { // OpenAPI 3.0 / draft-04 form
    if (s.exclusiveMinimum && min !== undefined) [xmin, min] = [min, undefined];
  } else xmin = num(s, "exclusiveMinimum", ptr);
  if (typeof s.exclusiveMaximum === "boolean") {
    if (s.exclusiveMaximum && max !== undefined) [xmax, max] = [max, undefined];
  } else xmax = num(s, "exclusiveMaximum", ptr);
  const mult = num(s, "multipleOf", ptr);
  if (mult !== undefined && mult <= 0) {
    throw new SchemaError(
      "multipleOf",
      `${ptr}/multipleOf`,
      `"multipleOf" at ${ptr}/multipleOf must be above 0`,
    );
  }
  const bounded = min !== undefined || max !== undefined || xmin !== undefined || xmax !== undefined ||
    mult !== undefined;
  return bounded ? [numberChecker({ min, max, xmin, xmax, mult })] : [];
}

/** `minLength`, `maxLength`, `pattern` and `format`. */
function stringChecks(s: Record<string, unknown>, ptr: string, mode: FormatMode): Check[] {
  const checks: Check[] = [];
  const min = count(s, "minLength", ptr), max = count(s, "maxLength", ptr);
  if (min !== undefined || max !== undefined) checks.push(lengthChecker({ min, max }));
  if (s.pattern !== undefined) {
    if (typeof s.pattern !== "string") {
      throw new SchemaError("pattern", `${ptr}/pattern`, `"pattern" at ${ptr}/pattern must be a string`);
    }
    checks.push(patternChecker(makeRegExp(s.pattern, `${ptr}/pattern`, "pattern")));
  }
  const format = formatCheck(s, ptr, mode);
  if (format !== null) checks.push(format);
  return checks;
}

/** `format`: a string or numeric format, or null where it is an annotation (formats off, or `"enum"`). */
function formatCheck(s: Record<string, unknown>, ptr: string, { assertFormats }: FormatMode): Check | null {
  if (s.format === undefined) return null;
  if (typeof s.format !== "string") {
    throw new SchemaError("format", `${ptr}/format`, `"format" at ${ptr}/format must be a string`);
  }
  const f = FORMATS[s.format];
  const nf = NUMERIC_FORMATS[s.format];
  if (f) return assertFormats ? formatChecker(s.format, f) : null;
  if (nf) return assertFormats ? numericFormatChecker(s.format, nf) : null;
  // Any other format is an annotation, as 2020-12 has it (`lintTools` reports it): enforcing nothing is
  // right for a format this engine does not know, and rejecting the whole tool (OpenAPI's "json", "binary")
  // would make a legitimate tool unusable.
  return null;
}

/** `items` (a draft-07 tuple form is read as `prefixItems`), `prefixItems`, item counts, `uniqueItems`. */
function arrayChecks(s: Record<string, unknown>, ptr: string, node: NodeCompiler): Check[] {
  let prefix: Check[] = [];
  let items: Check | null = null;
  if (Array.isArray(s.items)) { // draft-07 tuple form, read as prefixItems
    prefix = schemas(s.items, `${ptr}/items`, node);
  } else if (s.items !== undefined) items = node(s.items, `${ptr}/items`);
  if (s.prefixItems !== undefined) prefix = list(s, "prefixItems", ptr, node);
  const minItems = count(s, "minItems", ptr), maxItems = count(s, "maxItems", ptr);
  const unique = s.uniqueItems === true;
  if (prefix.length || items || minItems !== undefined || maxItems !== undefined || unique) {
    return [arrayChecker({ prefix, items, minItems, maxItems, unique })];
  }
  return [];
}

/** The keywords {@link objectChecker} enforces. */
const OBJECT_KEYWORDS = [
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "dependentRequired",
] as const;

/** The object keywords, as one check. */
function objectChecks(s: Record<string, unknown>, ptr: string, node: NodeCompiler): Check[] {
  return OBJECT_KEYWORDS.some((k) => s[k] !== undefined) ? [objectChecker(s, ptr, node)] : [];
}

/**
 * `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`; `inPlace` compiles the subschemas that check the same
 * value (all of them, but a `then` or `else` without `if`), `node` the inert ones.
 */
function applicatorChecks(
  s: Record<string, unknown>,
  ptr: string,
  node: NodeCompiler,
  inPlace: NodeCompiler,
): Check[] {
  const checks: Check[] = [];
  if (s.allOf !== undefined) checks.push(...list(s, "allOf", ptr, inPlace));
  if (s.anyOf !== undefined) checks.push(anyOfChecker(list(s, "anyOf", ptr, inPlace)));
  if (s.oneOf !== undefined) checks.push(oneOfChecker(list(s, "oneOf", ptr, inPlace)));
  if (s.not !== undefined) checks.push(notChecker(inPlace(s.not, `${ptr}/not`)));
  if (s.if !== undefined) {
    const cond = inPlace(s.if, `${ptr}/if`);
    const then = s.then !== undefined ? inPlace(s.then, `${ptr}/then`) : TRUE;
    const otherwise = s.else !== undefined ? inPlace(s.else, `${ptr}/else`) : TRUE;
    checks.push(conditionalChecker(cond, then, otherwise));
  } else {
    // then/else without if are inert, but must still be schemas
    if (s.then !== undefined) node(s.then, `${ptr}/then`);
    if (s.else !== undefined) node(s.else, `${ptr}/else`);
  }
  return checks;
}
