/**
 * Report what is wrong with tool declarations before a model ever sees them: names providers reject,
 * duplicates, missing descriptions, missing or non-object root schemas, `required` names that are not
 * properties, invalid `pattern` regexes, unresolved `$ref`, keywords the validator cannot enforce, and
 * OpenAI strict-mode incompatibilities for tools declared with `strict: true`.
 *
 * @module
 */
import { escapePointer, unescapePointer } from "../_common/pointer.ts";
import { normaliseTool } from "./providers.ts";
import { eachHeld, errorText, firstHole, givenValue, isRecord } from "../_common/values.ts";
import { compile, refuseBigInt } from "../_schema/compile.ts";
import { membersAsSent } from "../_schema/values.ts";
import {
  ANNOTATION_KEYWORDS,
  ASSERTION_KEYWORDS,
  KNOWN_FORMATS,
  NUMERIC_FORMATS,
  SchemaError,
  TYPES,
} from "../_schema/keywords.ts";
import { FORMATS } from "../_schema/formats.ts";
import { resolveLocalRef } from "../_common/json.ts";

/** The kinds of lint issue. */
export type LintIssueCode =
  | "invalid_name"
  | "duplicate_name"
  | "missing_description"
  | "missing_schema"
  | "root_not_object"
  | "required_not_in_properties"
  | "invalid_pattern"
  | "unresolved_ref"
  | "unsupported_keyword"
  | "unknown_format"
  | "keyword_without_effect"
  | "invalid_schema"
  | "strict_incompatible"
  | "invalid_declaration";

/** One problem with one tool declaration. */
export interface LintIssue {
  /** Position of the declaration (after expanding Gemini `functionDeclarations`). */
  index: number;
  /** The tool name ("" when it has none). */
  tool: string;
  /** What kind of problem. */
  code: LintIssueCode;
  /** `"error"`: a provider or the validator will reject it; `"warning"`: it works, but models do worse. */
  severity: "error" | "warning";
  /** JSON Pointer into the tool's parameter schema (`""` for the declaration itself). */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Keywords OpenAI strict mode (structured outputs) does not accept. */
const STRICT_UNSUPPORTED = new Set([
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "oneOf",
  "dependentRequired",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "uniqueItems",
  "prefixItems",
  "nullable",
]);
const STRICT_MAX_DEPTH = 10;

type Obj = Record<string, unknown>;

/**
 * Lints tool declarations in any provider shape. Never throws: a declaration with no recognisable shape is
 * reported as `invalid_declaration`.
 *
 * @example Catch declaration mistakes before a model sees them
 * ```ts
 * import assert from "node:assert/strict";
 * import { lintTools } from "@toolguard/toolguard/validate";
 *
 * const issues = lintTools([{ name: "get weather", input_schema: { type: "object", required: ["city"] } }]);
 * assert.deepEqual(issues.map((i) => i.code), ["invalid_name", "missing_description", "required_not_in_properties"]);
 * assert.equal(issues[2].path, "/required");
 * ```
 *
 * @example Name a keyword the validator cannot enforce
 * ```ts
 * import assert from "node:assert/strict";
 * import { lintTools } from "@toolguard/toolguard/validate";
 *
 * const [issue] = lintTools([{
 *   type: "function",
 *   function: {
 *     name: "pick",
 *     description: "Pick an item",
 *     parameters: { type: "object", properties: { item: { type: "string" } }, unevaluatedProperties: false },
 *   },
 * }]);
 * assert.equal(issue.code, "unsupported_keyword");
 * assert.equal(issue.severity, "error");
 * assert.equal(issue.path, "/unevaluatedProperties");
 * ```
 */
export function lintTools(tools: readonly unknown[]): LintIssue[] {
  const issues: LintIssue[] = [];
  if (!Array.isArray(tools)) {
    return [{
      index: 0,
      tool: "",
      code: "invalid_declaration",
      severity: "error",
      path: "",
      message: "tools must be an array of tool declarations",
    }];
  }
  const seen = new Map<string, number>();
  let index = 0;
  tools.forEach((entry, i) => {
    let list;
    const place = `tools[${i}]`;
    try {
      list = normaliseTool(entry, place);
    } catch (e) {
      const message = errorText(e);
      issues.push({
        index,
        tool: "",
        code: "invalid_declaration",
        severity: "error",
        path: "",
        // An entry's own fault names its place; one of a declaration inside it (a tool's name) is placed here.
        message: message.startsWith(`${place} `) || message.startsWith(`${place}.`)
          ? message
          : `${place}: ${message}`,
      });
      index++;
      return;
    }
    for (const t of list) {
      const add = (code: LintIssueCode, severity: "error" | "warning", path: string, message: string) =>
        issues.push({ index, tool: t.name, code, severity, path, message });
      if (!NAME.test(t.name)) {
        add(
          "invalid_name",
          "error",
          "",
          `tool name ${givenValue(t.name)} is rejected by providers; use 1-64 letters, digits, "_" or "-"`,
        );
      }
      const prev = seen.get(t.name);
      if (prev !== undefined) {
        add(
          "duplicate_name",
          "error",
          "",
          `tool name ${givenValue(t.name)} is also declared at position ${prev}; names must be unique`,
        );
      } else seen.set(t.name, index);
      if (!t.description || t.description.trim() === "") {
        add(
          "missing_description",
          "warning",
          "",
          `tool ${givenValue(t.name)} has no description; models choose tools by their descriptions`,
        );
      }
      if (t.schema === undefined) {
        add(
          "missing_schema",
          "warning",
          "",
          `tool ${
            givenValue(t.name)
          } declares no parameter schema; declare {"type":"object","properties":{}} for a tool without arguments`,
        );
      } else if (!isRecord(t.schema) || t.schema.type !== "object") {
        add(
          "root_not_object",
          "error",
          "",
          `tool ${
            givenValue(t.name)
          }: the root parameter schema must be {"type":"object", ...}; providers pass arguments as one object`,
        );
      }
      if (t.schema !== undefined) {
        lintSchema(t.schema, add);
        if (t.strict === true) lintStrict(t.schema, add);
      }
      index++;
    }
  });
  return issues;
}

type Add = (code: LintIssueCode, severity: "error" | "warning", path: string, message: string) => void;

/** Calls `visit` on every subschema with its pointer. */
function walk(schema: unknown, visit: (s: Obj, ptr: string, depth: number) => void): void {
  const go = (s: unknown, ptr: string, depth: number) => {
    if (!isRecord(s) || depth > 100) return;
    visit(s, ptr, depth);
    for (const k of ["properties", "patternProperties", "$defs", "definitions"]) {
      const m = s[k];
      if (isRecord(m)) {
        for (const [n, sub] of Object.entries(m)) {
          go(sub, `${ptr}/${k}/${escapePointer(n)}`, depth + (k === "properties" ? 1 : 0));
        }
      }
    }
    for (const k of ["additionalProperties", "not", "if", "then", "else", "propertyNames"]) {
      go(s[k], `${ptr}/${k}`, depth);
    }
    // (lists by what they hold, not `forEach`, which asks for every index of a sparse list: 2^32-1 of them)
    if (Array.isArray(s.items)) eachHeld(s.items, (x, i) => go(x, `${ptr}/items/${i}`, depth + 1));
    else go(s.items, `${ptr}/items`, depth + 1);
    for (const k of ["prefixItems", "anyOf", "oneOf", "allOf"]) {
      const a = s[k];
      if (Array.isArray(a)) {
        eachHeld(a, (x, i) => go(x, `${ptr}/${k}/${i}`, depth + (k === "prefixItems" ? 1 : 0)));
      }
    }
  };
  go(schema, "", 0);
}

function lintSchema(root: unknown, add: Add): void {
  // Where the walk already said what is wrong, the compiler's error at the same place says it again.
  const reportedAt = new Set<string>();
  const count: Add = (code, severity, path, message) => {
    reportedAt.add(path);
    add(code, severity, path, message);
  };
  // Keywords that hold no type the schema allows, told after the compiler's errors (see below).
  const idle: Parameters<Add>[] = [];
  walk(root, (s, ptr) => {
    for (const k of Object.keys(s)) {
      if (!ASSERTION_KEYWORDS.has(k) && !ANNOTATION_KEYWORDS.has(k) && !k.startsWith("x-")) {
        count(
          "unsupported_keyword",
          "error",
          `${ptr}/${escapePointer(k)}`,
          `keyword ${
            givenValue(k)
          } cannot be enforced by the validator; remove it or express it with supported keywords`,
        );
      }
    }
    if (Array.isArray(s.required) && isRecord(s.properties)) {
      for (const r of membersAsSent(s.required)) {
        if (typeof r === "string" && !Object.hasOwn(s.properties, r)) {
          count(
            "required_not_in_properties",
            "error",
            `${ptr}/required`,
            `${
              givenValue(r)
            } is required but not declared in properties; declare it or drop it from required`,
          );
        }
      }
    } else if (Array.isArray(s.required) && s.required.length > 0 && s.properties === undefined) {
      count(
        "required_not_in_properties",
        "error",
        `${ptr}/required`,
        `required names ${
          membersAsSent(s.required).map((r) => givenValue(r)).join(", ")
        } but no properties are declared`,
      );
    }
    const patterns: [string, unknown][] = [];
    if (s.pattern !== undefined) patterns.push([`${ptr}/pattern`, s.pattern]);
    if (isRecord(s.patternProperties)) {
      for (const k of Object.keys(s.patternProperties)) {
        patterns.push([`${ptr}/patternProperties/${escapePointer(k)}`, k]);
      }
    }
    for (const [at, p] of patterns) {
      let ok = typeof p === "string";
      if (ok) {
        try {
          new RegExp(p as string, "u");
        } catch {
          try {
            new RegExp(p as string);
          } catch {
            ok = false;
          }
        }
      }
      if (!ok) {
        count(
          "invalid_pattern",
          "error",
          at,
          `pattern ${givenValue(p)} is not a valid regular expression`,
        );
      }
    }
    if (typeof s.format === "string" && !KNOWN_FORMATS.has(s.format)) {
      add(
        "unknown_format",
        "warning",
        `${ptr}/format`,
        `format ${givenValue(s.format)} is not one the validator checks (${
          [...KNOWN_FORMATS].join(", ")
        }); ` +
          "it is an annotation and is not enforced",
      );
    }
    for (const [keyword, held] of keywordsWithoutEffect(s)) {
      idle.push([
        "keyword_without_effect",
        "warning",
        `${ptr}/${escapePointer(keyword)}`,
        `keyword ${givenValue(keyword)} has no effect: it applies to ${held} only, and type ${
          JSON.stringify(s.type)
        } allows none; allow such a type or drop the keyword`,
      ]);
    }
    if (s.$ref !== undefined && (typeof s.$ref !== "string" || resolveLocalRef(root, s.$ref) === undefined)) {
      count(
        "unresolved_ref",
        "error",
        `${ptr}/$ref`,
        `$ref ${
          typeof s.$ref === "string" ? givenValue(s.$ref) : JSON.stringify(s.$ref)
        } does not point at a schema inside this declaration; only local "#/$defs/..." references resolve`,
      );
    }
  });
  const refused = new Set<string>();
  for (const e of compileErrors(root)) {
    refused.add(e.pointer);
    if (!reportedAt.has(e.pointer)) add("invalid_schema", "error", e.pointer, e.message);
  }
  // (a keyword the compiler refuses, `minLength: -1` under a number, is told as that, not as idle too)
  for (const issue of idle) if (!refused.has(issue[2])) add(...issue);
}

/** The keywords the validator applies to one kind of value only (JSON Schema's), by the kind's types. */
const KEYWORDS_BY_KIND: readonly [kind: string, types: readonly string[], keywords: readonly string[]][] = [
  ["numbers", ["number", "integer"], [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
  ]],
  ["strings", ["string"], ["minLength", "maxLength", "pattern"]],
  ["arrays", ["array"], ["items", "prefixItems", "minItems", "maxItems", "uniqueItems"]],
  ["objects", ["object"], [
    "properties",
    "patternProperties",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
  ]],
];

/**
 * The keywords of a schema that hold no value its `type` allows, each with the kind it holds: `minimum` under
 * `type: ["string", "boolean"]` ("numbers"), a string `format` under `type: "integer"` ("strings"). A schema
 * with no type, or a type that is not a list of JSON's (the compiler's error), has none.
 */
function keywordsWithoutEffect(s: Obj): [keyword: string, held: string][] {
  // (a list longer than JSON's types repeats one, which the compiler refuses: not read, as one of length 2^32-1
  // built in code would be slot by slot; Array.from reads a hole as undefined, no type)
  const types: unknown[] = typeof s.type === "string"
    ? [s.type]
    : Array.isArray(s.type) && s.type.length <= TYPES.size
    ? Array.from(s.type)
    : [];
  if (types.length === 0 || !types.every((t) => typeof t === "string" && TYPES.has(t))) return [];
  const allows = (kindTypes: readonly string[]) => kindTypes.some((t) => types.includes(t));
  const out: [string, string][] = [];
  for (const [kind, kindTypes, keywords] of KEYWORDS_BY_KIND) {
    if (allows(kindTypes)) continue;
    for (const k of keywords) if (Object.hasOwn(s, k)) out.push([k, kind]);
  }
  if (typeof s.format === "string") {
    if (Object.hasOwn(FORMATS, s.format) && !allows(["string"])) out.push(["format", "strings"]);
    if (Object.hasOwn(NUMERIC_FORMATS, s.format) && !allows(["number", "integer"])) {
      out.push(["format", "numbers"]);
    }
  }
  return out;
}

/** The most compile errors one schema reports: enough to list every problem of a real declaration. */
const MAX_COMPILE_ERRORS = 50;

/**
 * Every problem the compiler finds, not just the first: after each error the offending keyword is removed
 * from a copy of the schema and the copy is compiled again.
 */
function compileErrors(root: unknown): SchemaError[] {
  const errors: SchemaError[] = [];
  let schema = root;
  while (errors.length < MAX_COMPILE_ERRORS) {
    try {
      refuseBigInt(schema);
      compile(schema);
      return errors;
    } catch (e) {
      if (!(e instanceof SchemaError)) return [...errors, new SchemaError("", "", errorText(e))];
      errors.push(e);
      const next = withoutPointer(schema, e.pointer);
      if (next === undefined) return errors; // the whole schema is the problem: nothing left to try
      schema = next;
    }
  }
  return errors;
}

/**
 * `value` without the member at the JSON Pointer `pointer`, or undefined for the root: the objects on the
 * way to it are copied, the rest is shared (a whole copy wrote out each slot of a sparse list built in code,
 * 2^32-1 of them under Bun). An error at a hole of such a list (the `null` JSON sends, no schema) takes the
 * whole list: one slot cut out of it would shift the rest, as many as its length.
 */
function withoutPointer(value: unknown, pointer: string): unknown {
  if (pointer === "") return undefined;
  let keys = pointer.slice(1).split("/").map(unescapePointer);
  const path: unknown[] = [value]; // the nodes from the root to the member's holder
  for (const key of keys.slice(0, -1)) {
    const node = path[path.length - 1];
    if (typeof node !== "object" || node === null) return undefined;
    path.push((node as Record<string, unknown>)[key]);
  }
  const holder = path[path.length - 1];
  if (Array.isArray(holder) && firstHole(holder) >= 0) {
    if (keys.length === 1) return undefined;
    keys = keys.slice(0, -1);
    path.pop();
  }
  let copy: unknown = undefined; // the copy of the node below, made from the member up
  for (let i = path.length - 1; i >= 0; i--) {
    const node = path[i];
    if (typeof node !== "object" || node === null) return undefined;
    const key = keys[i];
    const next: unknown[] | Record<string, unknown> = Array.isArray(node) ? [...node] : { ...node };
    if (i < path.length - 1) {
      if (key === "__proto__") {
        Object.defineProperty(next, key, {
          value: copy,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else (next as Record<string, unknown>)[key] = copy;
    } else if (Array.isArray(next)) next.splice(Number(key), 1);
    else delete next[key];
    copy = next;
  }
  return copy;
}

function lintStrict(root: unknown, add: Add): void {
  if (isRecord(root) && (root.anyOf !== undefined || root.type !== "object")) {
    add(
      "strict_incompatible",
      "error",
      "",
      "strict mode needs the root schema to be a plain object schema, not anyOf",
    );
  }
  walk(root, (s, ptr, depth) => {
    if (depth > STRICT_MAX_DEPTH) {
      add(
        "strict_incompatible",
        "error",
        ptr,
        `strict mode allows at most ${STRICT_MAX_DEPTH} levels of nesting`,
      );
    }
    for (const k of Object.keys(s)) {
      if (STRICT_UNSUPPORTED.has(k)) {
        add("strict_incompatible", "error", `${ptr}/${k}`, `strict mode does not support "${k}"`);
      }
    }
    const isObject = s.type === "object" ||
      (Array.isArray(s.type) && membersAsSent(s.type).includes("object")) ||
      isRecord(s.properties);
    if (isObject) {
      if (s.additionalProperties !== false) {
        add(
          "strict_incompatible",
          "error",
          ptr,
          `strict mode needs "additionalProperties": false on every object`,
        );
      }
      if (isRecord(s.properties)) {
        const req = new Set(Array.isArray(s.required) ? membersAsSent(s.required) : []);
        for (const k of Object.keys(s.properties)) {
          if (!req.has(k)) {
            add(
              "strict_incompatible",
              "error",
              `${ptr}/properties/${escapePointer(k)}`,
              `strict mode needs every property in required; make ${
                givenValue(k)
              } required and allow null (type ["...", "null"]) for optional`,
            );
          }
        }
      }
    }
  });
}
