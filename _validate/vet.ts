/**
 * `vet` wraps a tool function so it never runs on bad arguments; `ToolArgError` carries the findings and
 * turns them into feedback a model can retry with.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import {
  cutPlace,
  findingFacts,
  listedFindings,
  MAX_PATH,
  oneLine,
  placeLine,
  shownPointer,
  stop,
  timesFound,
} from "../_describe/facts.ts";
import { errorText, isRecord, objectArg, plural } from "../_common/values.ts";
import type { Finding, FindingCode } from "../types.ts";
import { assertReadable, compile, refuseBigInt } from "../_schema/compile.ts";
import { copyAsSent, holdsUnsent, mayOverflow, parseJson } from "../_common/json.ts";
import { nestsDeeper, pastMeasure } from "../_common/measure.ts";
import { SchemaError } from "../_schema/keywords.ts";
import { forgetFailedTest } from "../_schema/values.ts";
import { isShape, shapeToSchema } from "./shape.ts";
import {
  nestedTooDeep,
  notAnObject,
  noteUnsent,
  numbersUnchecked,
  pushInjectionFindings,
  pushUnsendableNumbers,
  sharedPastMeasure,
  unreadable,
} from "./validator.ts";

/** The Standard Schema interface (zod, valibot, arktype, ...), just the part `vet` uses. */
export interface StandardSchemaLike {
  /** The Standard Schema v1 property. */
  readonly "~standard": {
    readonly version: number;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult | Promise<StandardResult>;
  };
}

/** What a Standard Schema `validate` answers: the value, or issues with paths. */
export type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | {
    readonly issues: ReadonlyArray<
      { readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> }
    >;
  };

/** An object with zod's `safeParse` (zod before 3.24 has no `~standard`; other libraries copy the shape). */
export interface SafeParseLike {
  /** Parses without throwing: `{ success: true, data }` or `{ success: false, error }`. */
  safeParse(value: unknown): { success: boolean; data?: unknown; error?: unknown };
}

/**
 * What `vet` and `validate` accept as the schema: a JSON Schema, a Standard Schema validator (zod, valibot,
 * arktype: the `~standard` interface), any object with `safeParse`, a shape spec
 * (`{ query: "string", limit: "number?" }`), or a predicate returning true, false or a reason.
 */
export type VetSchema =
  | StandardSchemaLike
  | SafeParseLike
  | Record<string, unknown>
  | boolean
  | ((args: unknown) => unknown);

/** Options for {@link vet}. */
export interface VetOptions<A, R> {
  /** The tool name, used in errors and feedback. */
  name: string;
  /** The schema the arguments must meet: any of the {@linkcode VetSchema} kinds. */
  schema: VetSchema | unknown;
  /** The tool function; runs only on arguments that passed, and receives the validator's parsed output. */
  fn: (args: A) => R | Promise<R>;
  /**
   * Called instead of throwing when the arguments are bad, with the error and the arguments as received;
   * what it returns is returned. Returning `undefined` rethrows the error.
   */
  onError?: (error: ToolArgError, args: unknown) => R | undefined | Promise<R | undefined>;
  /** Scan the string values for injected instructions (`argument_injection`), as `createValidator` does. Default true. */
  scan?: boolean;
}

/**
 * Thrown by a vetted function when its arguments are bad. The function did not run.
 *
 * @example Turn the error into feedback the model can retry with
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolArgError, vet } from "@toolguard/toolguard/validate";
 *
 * const add = vet({
 *   name: "add",
 *   schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
 *   fn: (args: { a: number; b: number }) => args.a + args.b,
 * });
 * const error = await add({ a: 1 }).catch((e: unknown) => e);
 * assert.ok(error instanceof ToolArgError);
 * assert.equal(error.tool, "add");
 * assert.deepEqual(error.args, { a: 1 });
 * assert.equal(error.findings[0].path, "/b");
 * assert.equal(
 *   error.toLLMFeedback(),
 *   'Tool "add" was not run because its arguments are invalid:\n' +
 *     '- "/b" is required but missing; add it.\n' +
 *     'Fix these arguments and call "add" again.',
 * );
 * ```
 */
export class ToolArgError extends Error {
  /** The tool name. */
  readonly tool: string;
  /** What is wrong with the arguments. */
  readonly findings: Finding[];
  /** The arguments as received. */
  readonly args: unknown;
  /**
   * The findings as one line of text (agentvet's `validationError`): `path: message; path: message`, bounded
   * as {@linkcode ToolArgError.toLLMFeedback} is (identical findings once, at most 20, the rest counted); the
   * full list is {@linkcode ToolArgError.findings}.
   */
  readonly validationError: string;
  /** Creates the error. */
  constructor(tool: string, findings: Finding[], args: unknown) {
    const line = findingsLine(findings);
    super(
      `tool "${tool}" was not run: ${findings.length} ${
        plural(findings.length, "problem")
      } with its arguments: ${line}`,
    );
    this.name = "ToolArgError";
    this.tool = tool;
    this.findings = findings;
    this.args = args;
    this.validationError = line;
  }
  /**
   * Feedback for the model: one line per finding, each beside its path, saying each fact once as
   * `describeVerdict` does: a message that names its path (the validator's) is the line, with what was expected
   * or received after it only where it does not say them; another follows its path (`- /city: ...`). Bounded
   * as `describeVerdict` is: identical findings once ("(found 100 times)"), at most 20 lines, the rest counted.
   */
  toLLMFeedback(): string {
    // (bounded as describeVerdict is: identical findings once, with how many, and at most 20 lines; a key of
    // 100 hidden pairs gave 100 identical lines, 26 095 characters)
    const { listed, left } = listedFindings(this.findings);
    const lines = listed.map(({ finding, times }) => findingItem(finding as Finding) + timesFound(times));
    if (left > 0) lines.push(`\u2026 and ${left} more; fix the ones above first.`);
    return `Tool "${this.tool}" was not run because its arguments are invalid:\n${lines.join("\n")}\n` +
      `Fix these arguments and call "${this.tool}" again.`;
  }
}

/** Longest finding message {@linkcode ToolArgError.validationError} repeats, in characters. */
const MAX_LINE_MESSAGE = 300;

/**
 * The findings in agentvet's one-line form, `path: message; path: message`, bounded as `toLLMFeedback` is:
 * identical findings once (" (found 100 times)"), at most 20, "... and K more", each path cut and shown as
 * feedback shows it and each message on one line of at most 300 characters.
 */
function findingsLine(findings: readonly Finding[]): string {
  // (a key of 100 hidden pairs gave 100 identical entries, 34 498 characters, and an Error's message that
  // size floods logs and, where a framework hands it on, the model; one 100 000-character key was all of it)
  const { listed, left } = listedFindings(findings);
  const entries = listed.map(({ finding, times }) => {
    const f = finding as Finding;
    const path = typeof f.path === "string" ? pointerPlace(f.path) : placeLine(f.path, MAX_PATH);
    return `${path || "(root)"}: ${placeLine(f.message, MAX_LINE_MESSAGE)}${timesFound(times)}`;
  });
  if (left > 0) entries.push(`\u2026 and ${left} more`);
  return entries.join("; ");
}

/** One finding as {@linkcode ToolArgError.toLLMFeedback} lists it: `- /city: ...`, each fact once. */
function findingItem(f: Finding): string {
  // (a path cut as describeVerdict cuts it: a model's 100 000-character key is not said whole)
  const path = typeof f.path === "string" ? pointerPlace(f.path) : placeLine(f.path, MAX_PATH);
  const record = f as unknown as Record<string, unknown>;
  const { told, message, bits, suggestion } = findingFacts(record, `"${path}"`);
  const more = bits.length === 0 ? "" : ` ${bits.join(", ")}.`.replace(/^ ./, (c) => c.toUpperCase());
  const head = told ? "" : `${path === "" ? "(arguments)" : path}: `;
  // (a finding that says nothing, a hand-made one's empty message, is named by its code, as describeVerdict
  // names it, not left as "- (arguments): ")
  const said = message === ""
    ? more.trimStart() || `${oneLine(f.code, 40) || "a problem"}.`
    : `${stop(message)}${more}`;
  return `- ${head}${said}${suggestion === "" ? "" : ` Did you mean "${suggestion}"?`}`;
}

/** A finding's JSON Pointer as its feedback names it: keys shown, cut to its last step where long. */
function pointerPlace(pointer: string): string {
  const shown = shownPointer(pointer);
  const at = shown.lastIndexOf("/");
  return cutPlace(shown.slice(0, Math.max(at, 0)), shown.slice(Math.max(at, 0)), MAX_PATH);
}

function isStandard(s: unknown): s is StandardSchemaLike {
  return (typeof s === "object" || typeof s === "function") && s !== null && "~standard" in s &&
    typeof (s as StandardSchemaLike)["~standard"]?.validate === "function";
}

function isSafeParse(s: unknown): s is SafeParseLike {
  return (typeof s === "object" || typeof s === "function") && s !== null &&
    typeof (s as SafeParseLike).safeParse === "function";
}

type IssuePath = ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;

function pointer(path: IssuePath): string {
  if (!path) return "";
  return path.map((p) => {
    const k = typeof p === "object" && p !== null ? (p as { key: PropertyKey }).key : p;
    return "/" + escapePointer(String(k));
  }).join("");
}

/** An issue as validators report it: Standard Schema's `message` and `path`, plus what zod and valibot add. */
interface Issue {
  message: string;
  path?: IssuePath;
  /** zod: `invalid_type`, `unrecognized_keys`, `too_small`, ... */
  code?: unknown;
  /** zod's `unrecognized_keys`: the keys. */
  keys?: unknown;
  /** valibot: `schema` (type and keys) or `validation` (constraints). */
  kind?: unknown;
  /** valibot: the schema or action type (`strict_object`, `min_length`, ...). */
  type?: unknown;
  /** zod 3 and valibot: what was received, as text. */
  received?: unknown;
  /** valibot: what was expected (`never` for a key that is not allowed). */
  expected?: unknown;
}

/**
 * True when the issue is about a value that is not there at all: its path leads to nothing in the arguments
 * (whatever the validator's wording, custom messages included), or the validator says it received undefined.
 */
function isMissing(issue: Issue, args: unknown): boolean {
  if (issue.received === "undefined" || /received undefined\b/i.test(issue.message)) return true;
  const keys = (issue.path ?? []).map((p) =>
    typeof p === "object" && p !== null ? (p as { key: PropertyKey }).key : p
  );
  if (keys.length === 0) return false;
  let node: unknown = args;
  for (const key of keys.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return typeof node === "object" && node !== null && !Object.hasOwn(node, keys[keys.length - 1]);
}

/**
 * The finding code for a validator's issue: from zod's `code` or valibot's `kind`/`type` where the issue
 * carries them; from the wording only for validators that say nothing else.
 */
function codeFor(issue: Issue, args: unknown): FindingCode {
  if (typeof issue.code === "string") {
    if (issue.code === "unrecognized_keys") return "unexpected_argument";
    if (issue.code === "invalid_type") {
      return isMissing(issue, args) ? "missing_required_argument" : "argument_type_mismatch";
    }
    return "argument_constraint";
  }
  if (issue.kind === "schema") {
    if (issue.expected === "never") return "unexpected_argument";
    return isMissing(issue, args) ? "missing_required_argument" : "argument_type_mismatch";
  }
  if (issue.kind === "validation") return "argument_constraint";
  const m = issue.message.toLowerCase();
  if (/unrecognized key|unknown key|unexpected key|not allowed/.test(m)) return "unexpected_argument";
  if (/required|missing/.test(m) || isMissing(issue, args)) return "missing_required_argument";
  if (/expected (a |an )?(string|number|integer|boolean|object|array|null|bigint)|invalid type/.test(m)) {
    return "argument_type_mismatch";
  }
  return "argument_constraint";
}

/** Findings for a validator's issues; zod's one `unrecognized_keys` issue becomes one finding per key. */
function issueFindings(issues: readonly Issue[], args: unknown): Finding[] {
  return issues.flatMap((issue): Finding[] => {
    const path = pointer(issue.path);
    if (issue.code === "unrecognized_keys" && Array.isArray(issue.keys)) {
      return issue.keys.map((key) => ({
        code: "unexpected_argument",
        path: `${path}/${escapePointer(String(key))}`,
        message: issue.message,
      }));
    }
    return [{ code: codeFor(issue, args), path, message: issue.message }];
  });
}

/** The issues inside whatever a `safeParse` failure carries (zod's `ZodError.issues`), or one from its text. */
function safeParseIssues(error: unknown): Issue[] {
  const issues = (error as { issues?: unknown })?.issues;
  if (Array.isArray(issues)) {
    return issues.map((i) => ({
      ...(i as object),
      message: String((i as { message?: unknown })?.message ?? i),
    }));
  }
  return [{ message: errorText(error) || "The arguments were rejected by the tool's schema." }];
}

/** What a check answers: the findings, and the value the tool receives when there are none. */
type Checked = { findings: Finding[]; value: unknown };

async function check(schema: unknown, args: unknown): Promise<Checked> {
  if (isStandard(schema)) {
    const r = await schema["~standard"].validate(args);
    if (!r.issues) return { findings: [], value: r.value };
    return { findings: issueFindings(r.issues as readonly Issue[], args), value: args };
  }
  if (isSafeParse(schema)) {
    const r = schema.safeParse(args);
    if (r.success) return { findings: [], value: r.data };
    return { findings: issueFindings(safeParseIssues(r.error), args), value: args };
  }
  if (typeof schema === "function") {
    let r: unknown;
    try {
      r = await (schema as (a: unknown) => unknown)(args);
    } catch (e) {
      r = errorText(e);
    }
    if (r === true) return { findings: [], value: args };
    return {
      findings: [{
        code: "argument_constraint",
        path: "",
        message: typeof r === "string" && r !== ""
          ? r
          : "The arguments were rejected by the tool's own check.",
      }],
      value: args,
    };
  }
  const c = compiledFor(schema);
  try {
    if (c(args, "", null)) return { findings: [], value: args };
    const out: Finding[] = [];
    c(args, "", out);
    return { findings: out, value: args };
  } finally {
    forgetFailedTest(); // (a long value failed with no report is not kept past the check)
  }
}

const cache = new WeakMap<object, CompiledSchema>();

/**
 * A schema object compiled once: its check, the copy as sent that was compiled, and whether that copy leaves
 * some number unchecked (see {@link numbersUnchecked}), found when a call first needs it.
 */
interface CompiledSchema {
  check: ReturnType<typeof compile>;
  sent: unknown;
  unchecked?: boolean;
}

/** The compiled JSON Schema (a shape spec is turned into one first), compiled once per schema object. */
function compiledFor(schema: unknown): ReturnType<typeof compile> {
  if (typeof schema === "object" && schema !== null) return compiledEntry(schema).check;
  refuseBigInt(schema);
  return compile(schema);
}

/** {@link compiledFor}'s entry for a schema object, made on first use. */
function compiledEntry(schema: object): CompiledSchema {
  let c = cache.get(schema);
  if (!c) {
    assertReadable(schema);
    // (what JSON carries of it, as a tool's schema is read: see copyAsSent)
    const sent = copyAsSent(isShape(schema) ? shapeToSchema(schema) : schema);
    refuseBigInt(sent);
    cache.set(schema, c = { check: compile(sent), sent });
  }
  return c;
}

/**
 * Whether a compiled `schema` leaves some number unchecked (see {@link numbersUnchecked}), read from the copy
 * {@link compiledFor} compiled: where it does not, a number JSON cannot send has its finding already.
 */
function uncheckedFor(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return numbersUnchecked(schema);
  const c = compiledEntry(schema);
  return c.unchecked ??= numbersUnchecked(c.sent);
}

/** Is the schema a JSON Schema or shape (compiled here), rather than a validator or predicate? */
const isCompiled = (schema: unknown): boolean =>
  !isStandard(schema) && !isSafeParse(schema) && typeof schema !== "function";

/** The one check behind `vet` and `validate`: JSON text parsed, then the schema, then the scanner. */
async function judgeArgs(
  name: string,
  schema: unknown,
  input: unknown,
  options: { scan: boolean },
): Promise<{ valid: true; value: unknown } | { valid: false; error: ToolArgError }> {
  let args = input;
  const raw = typeof input === "string" ? input : undefined;
  if (raw !== undefined) {
    const p = parseJson(raw);
    if (!p.ok) {
      const findings: Finding[] = [{
        code: "malformed_arguments",
        path: "",
        message: `The arguments are not valid JSON: ${p.error}.`,
        expected: "a JSON object",
      }];
      return { valid: false, error: new ToolArgError(name, findings, input) };
    }
    args = p.value;
  }
  let checked: Checked;
  try {
    if (raw === undefined && nestsDeeper(args, MAX_DEPTH)) {
      // Refused unread, as the validator refuses them: nothing in them is scanned either (a cycle nests
      // without end, and the scan's walk followed it until memory ran out).
      return { valid: false, error: new ToolArgError(name, [nestedTooDeep(MAX_DEPTH)], args) };
    }
    if (raw === undefined && pastMeasure(args)) {
      return { valid: false, error: new ToolArgError(name, [sharedPastMeasure()], args) };
    }
    // a Date, a boxed string, NaN, a function, against a JSON Schema: checked and scanned as the JSON it stands
    // for, as the validator does (a Standard Schema's own types may want the Date itself)
    if (raw === undefined && isCompiled(schema) && holdsUnsent(args)) {
      const sent = copyAsSent(args, { infinite: true });
      const problem = nestsDeeper(sent, MAX_DEPTH)
        ? nestedTooDeep(MAX_DEPTH)
        : pastMeasure(sent)
        ? sharedPastMeasure()
        : null;
      if (problem !== null) return { valid: false, error: new ToolArgError(name, [problem], args) };
      args = sent;
    }
    checked = await checkArgs(schema, args);
    // a number too large (1e400 in text, Infinity given), or a BigInt, where the schema leaves it unchecked:
    // as the validator does (where it checks every number, the finding on it says so: a second was one more
    // problem to fix than there was)
    if (isCompiled(schema) && (raw === undefined || mayOverflow(raw)) && uncheckedFor(schema)) {
      pushUnsendableNumbers(args, checked.findings);
    }
    // (a copy as sent: what was given where a finding points is said, NaN sent as null)
    if (raw === undefined && args !== input && checked.findings.length > 0) {
      noteUnsent(input, checked.findings);
    }
    // (a Standard Schema's arguments are left as given: scanned as JSON sends them, a boxed string as its text)
    const sent = raw === undefined && !isCompiled(schema) && options.scan && holdsUnsent(args);
    if (options.scan) {
      pushInjectionFindings(sent ? copyAsSent(args, { infinite: true }) : args, raw, checked.findings);
    }
  } catch (e) {
    if (e instanceof SchemaError) throw e; // the developer's schema, not the model's arguments
    checked = { findings: [unreadable(e)], value: args };
  }
  const { findings, value } = checked;
  if (findings.length > 0) return { valid: false, error: new ToolArgError(name, findings, args) };
  return { valid: true, value };
}

/** Deepest nesting accepted in arguments given as a value, as text gets from `parseJson` and the validator. */
const MAX_DEPTH = 64;

/**
 * {@link check}, after what `createValidator` also refuses: for a JSON Schema or shape, anything but a JSON
 * object (absent arguments are left to the schema). Arguments nested past {@link MAX_DEPTH} are refused before.
 */
function checkArgs(schema: unknown, args: unknown): Promise<Checked> | Checked {
  if (args !== undefined && !isRecord(args) && isCompiled(schema)) {
    return { findings: [notAnObject(args)], value: args };
  }
  return check(schema, args);
}

/**
 * Checks one set of arguments against a schema, once, without a tool function: `{ valid: true, value }`
 * with the validator's parsed output, or `{ valid: false, error }` with a {@linkcode ToolArgError}. The
 * arguments may be an object or JSON text; string values are scanned for injected instructions.
 *
 * @example Parsed output on success, an error with feedback on failure
 * ```ts
 * import assert from "node:assert/strict";
 * import { validate } from "@toolguard/toolguard/validate";
 *
 * const ok = await validate("search", { query: "string", limit: "number?" }, '{"query":"llamas"}');
 * assert.deepEqual(ok, { valid: true, value: { query: "llamas" } });
 *
 * const bad = await validate("search", { query: "string" }, { query: 7 });
 * assert.equal(bad.valid, false);
 * if (!bad.valid) assert.match(bad.error.toLLMFeedback(), /query/);
 * ```
 *
 * @param name The tool name, for the error and its feedback.
 * @param schema The schema (see {@linkcode VetSchema}).
 * @param args The arguments, as an object or as JSON text.
 * @returns The outcome; never rejects for bad arguments.
 */
export function validate(
  name: string,
  schema: VetSchema | unknown,
  args: unknown,
): Promise<{ valid: true; value: unknown } | { valid: false; error: ToolArgError }> {
  if (isCompiled(schema)) compiledFor(schema); // a bad schema is the developer's error: thrown at once
  return judgeArgs(name, schema, args, { scan: true });
}

/**
 * Wraps a tool function so it never runs on bad arguments. The wrapper takes the arguments as an object or
 * as JSON text, checks them, and either calls `fn` or throws a {@link ToolArgError} (or returns what
 * `onError` returns). A JSON Schema is compiled once, at wrap time, so a bad schema fails early.
 *
 * @example Run a tool only on valid arguments
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolArgError, vet } from "@toolguard/toolguard/validate";
 *
 * const add = vet({
 *   name: "add",
 *   schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
 *   fn: (args: { a: number; b: number }) => args.a + args.b,
 * });
 * assert.equal(await add({ a: 1, b: 2 }), 3);
 * assert.equal(await add('{"a":1,"b":2}'), 3); // JSON text, as a model sends it
 * await assert.rejects(
 *   add({ a: 1 }),
 *   (e) => e instanceof ToolArgError && e.findings[0].code === "missing_required_argument",
 * );
 * ```
 *
 * @example Answer with feedback instead of throwing
 * ```ts
 * import assert from "node:assert/strict";
 * import { vet } from "@toolguard/toolguard/validate";
 *
 * const lookup = vet({
 *   name: "lookup",
 *   schema: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
 *   fn: ({ id }: { id: number }) => `record ${id}`,
 *   onError: (e) => e.toLLMFeedback(),
 * });
 * assert.equal(await lookup('{"id":7}'), "record 7");
 * assert.match(await lookup('{"id":"7"}'), /call "lookup" again/);
 * ```
 *
 * @example Vet with a predicate instead of a schema
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToolArgError, vet } from "@toolguard/toolguard/validate";
 *
 * const divide = vet({
 *   name: "divide",
 *   schema: (args: unknown) => (args as { by?: number }).by !== 0 || "dividing by zero is not allowed",
 *   fn: (args: { n: number; by: number }) => args.n / args.by,
 * });
 * assert.equal(await divide({ n: 6, by: 3 }), 2);
 * const error = await divide({ n: 1, by: 0 }).catch((e: unknown) => e);
 * assert.ok(error instanceof ToolArgError);
 * assert.equal(error.findings[0].message, "dividing by zero is not allowed");
 * ```
 */
export function vet<A = Record<string, unknown>, R = unknown>(
  options: VetOptions<A, R>,
): (args: unknown) => Promise<R> {
  const { name, schema, fn, onError } = objectArg(options, "vet", "options");
  if (typeof name !== "string" || name === "") throw new TypeError("vet() needs a tool name");
  if (typeof fn !== "function") throw new TypeError(`vet("${name}") needs fn, the tool function`);
  if (isCompiled(schema)) compiledFor(schema); // fail early on a bad schema
  const scan = options.scan ?? true;
  return async (input: unknown): Promise<R> => {
    const outcome = await judgeArgs(name, schema, input, { scan });
    if (outcome.valid) return await fn(outcome.value as A);
    if (onError) {
      const fallback = await onError(outcome.error, input);
      if (fallback !== undefined) return fallback;
    }
    throw outcome.error;
  };
}
