/**
 * `vet` wraps a tool function so it never runs on bad arguments; `ToolArgError` carries the findings and
 * turns them into feedback a model can retry with.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { errorText } from "../_common/values.ts";
import type { Finding, FindingCode } from "../types.ts";
import { compile } from "../_schema/compile.ts";
import { parseJson } from "../_common/json.ts";

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

/** Options for {@link vet}. */
export interface VetOptions<A, R> {
  /** The tool name, used in errors and feedback. */
  name: string;
  /** A JSON Schema, a Standard Schema validator (`~standard`), or a predicate returning true, false or a reason. */
  schema: unknown;
  /** The tool function; runs only on arguments that passed. */
  fn: (args: A) => R | Promise<R>;
  /** Called instead of throwing when the arguments are bad; its return value is returned. */
  onError?: (error: ToolArgError) => R | Promise<R>;
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
 *     '- /b: "/b" is required but missing; add it. (expected present, received missing)\n' +
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
  /** Creates the error. */
  constructor(tool: string, findings: Finding[], args: unknown) {
    super(
      `tool "${tool}" was not run: ${findings.length} problem(s) with its arguments: ${
        findings.map((f) => `${f.path || "(root)"}: ${f.message}`).join("; ")
      }`,
    );
    this.name = "ToolArgError";
    this.tool = tool;
    this.findings = findings;
    this.args = args;
  }
  /** Feedback for the model: every finding with its path, what was expected and what was received. */
  toLLMFeedback(): string {
    const lines = this.findings.map((f) => {
      const extra = [f.expected ? `expected ${f.expected}` : "", f.received ? `received ${f.received}` : ""]
        .filter(Boolean).join(", ");
      return `- ${f.path === "" ? "(arguments)" : f.path}: ${f.message}${extra ? ` (${extra})` : ""}`;
    });
    return `Tool "${this.tool}" was not run because its arguments are invalid:\n${lines.join("\n")}\n` +
      `Fix these arguments and call "${this.tool}" again.`;
  }
}

function isStandard(s: unknown): s is StandardSchemaLike {
  return (typeof s === "object" || typeof s === "function") && s !== null && "~standard" in s &&
    typeof (s as StandardSchemaLike)["~standard"]?.validate === "function";
}

function pointer(path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string {
  if (!path) return "";
  return path.map((p) => {
    const k = typeof p === "object" && p !== null ? (p as { key: PropertyKey }).key : p;
    return "/" + escapePointer(String(k));
  }).join("");
}

/** Picks a finding code for a Standard Schema issue from its wording (the interface carries no codes). */
function codeFor(message: string): FindingCode {
  const m = message.toLowerCase();
  if (/unrecognized key|unknown key|unexpected key|invalid key|not allowed|never/.test(m)) {
    return "unexpected_argument";
  }
  if (/required|received undefined|missing/.test(m)) return "missing_required_argument";
  if (
    /expected (a |an )?(string|number|integer|boolean|object|array|null|bigint)|invalid type|type/.test(m)
  ) {
    return "argument_type_mismatch";
  }
  return "argument_constraint";
}

async function check(schema: unknown, args: unknown): Promise<Finding[]> {
  if (isStandard(schema)) {
    const r = await schema["~standard"].validate(args);
    if (!r.issues) return [];
    return r.issues.map((i) => ({ code: codeFor(i.message), path: pointer(i.path), message: i.message }));
  }
  if (typeof schema === "function") {
    let r: unknown;
    try {
      r = await (schema as (a: unknown) => unknown)(args);
    } catch (e) {
      r = errorText(e);
    }
    if (r === true) return [];
    return [{
      code: "argument_constraint",
      path: "",
      message: typeof r === "string" && r !== "" ? r : "The arguments were rejected by the tool's own check.",
    }];
  }
  const c = compiledFor(schema);
  if (c(args, "", null)) return [];
  const out: Finding[] = [];
  c(args, "", out);
  return out;
}

const cache = new WeakMap<object, ReturnType<typeof compile>>();
function compiledFor(schema: unknown): ReturnType<typeof compile> {
  if (typeof schema === "object" && schema !== null) {
    let c = cache.get(schema);
    if (!c) cache.set(schema, c = compile(schema));
    return c;
  }
  return compile(schema);
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
  const { name, schema, fn, onError } = options;
  if (typeof name !== "string" || name === "") throw new TypeError("vet() needs a tool name");
  if (typeof fn !== "function") throw new TypeError(`vet("${name}") needs fn, the tool function`);
  if (!isStandard(schema) && typeof schema !== "function") compiledFor(schema); // fail early on a bad schema
  return async (input: unknown): Promise<R> => {
    let args = input;
    let findings: Finding[];
    if (typeof input === "string") {
      const p = parseJson(input);
      if (!p.ok) {
        findings = [{
          code: "malformed_arguments",
          path: "",
          message: `The arguments are not valid JSON: ${p.error}.`,
          expected: "a JSON object",
        }];
        return fail(new ToolArgError(name, findings, input));
      }
      args = p.value;
    }
    findings = await check(schema, args);
    if (findings.length) return fail(new ToolArgError(name, findings, args));
    return await fn(args as A);
  };

  async function fail(e: ToolArgError): Promise<R> {
    if (onError) return await onError(e);
    throw e;
  }
}
