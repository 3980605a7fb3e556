/**
 * The code generator behind the JSON Schema engine: turns a schema the interpreter has already accepted
 * into specialised JavaScript (with `new Function`). Two sets of functions per schema node: a yes/no pass
 * (`vN(v)`: no pointers, no findings, the only code a valid value runs) and a reporting pass that builds
 * findings inline with the interpreter's exact words (its own reporters for the rarer keywords), so both
 * paths say exactly the same thing. Reporting functions for pointers known in advance (property paths
 * from the root) are specialised per pointer (`sN`), so their messages are constants; the others (`fN`)
 * take the pointer as an argument. Nodes that use keywords this generator does not specialise are
 * delegated to the interpreter. Returns null where code generation is forbidden (e.g. a CSP without
 * `unsafe-eval`); the caller then uses the interpreter.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import {
  ANNOTATION_KEYWORDS,
  type Check,
  codePoints,
  deepEqual,
  duplicateMessage,
  firstDuplicate,
  isMultiple,
  isObj,
  makeRegExp,
  NUMERIC_FORMATS,
  received,
  receivedString,
  reportAlternatives,
  reportExtra,
  safeTest,
  show,
  showString,
  type Tree,
  TRUE,
  typeFail,
  typeHead,
  uniqueOk,
  where,
} from "./compile.ts";
import { FORMATS } from "./formats.ts";
import { compilePattern } from "./pattern.ts";

const SPECIALISED = new Set([
  "type",
  "nullable",
  "enum",
  "const",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "items",
  "prefixItems",
  "minItems",
  "maxItems",
  "uniqueItems",
  "properties",
  "required",
  "additionalProperties",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$ref",
  "$defs",
  "definitions",
]);

type Obj = Record<string, unknown>;
/** A schema node every keyword of which this generator specialises. */
const isPlainSchema = (schema: Obj): boolean =>
  Object.keys(schema).every((key) =>
    SPECIALISED.has(key) || ANNOTATION_KEYWORDS.has(key) || key.startsWith("x-")
  ) &&
  typeof schema.exclusiveMinimum !== "boolean" && typeof schema.exclusiveMaximum !== "boolean" &&
  !Array.isArray(schema.items);
const lit = (v: unknown): string => JSON.stringify(v);
const isPrim = (v: unknown) =>
  v === null || typeof v === "string" || typeof v === "boolean" || typeof v === "number";

const TYPE_EXPR: Record<string, string> = {
  string: 'typeof v === "string"',
  integer: 'typeof v === "number" && isSafe(v)',
  number: 'typeof v === "number" && isFin(v)',
  boolean: 'typeof v === "boolean"',
  null: "v === null",
  array: "isArr(v)",
  object: 'typeof v === "object" && v !== null && !isArr(v)',
};

// built on first use: this module and _schema.ts import each other
/** The generated test that `v` has one of `types` (JSON Schema type names). */
const typeCondition = (types: readonly string[]): string =>
  types.map((t) => `(${TYPE_EXPR[t]})`).join(" || ");

const helpers = () => ({
  T: TRUE,
  has: Object.hasOwn,
  cp: codePoints,
  test: safeTest,
  mult: isMultiple,
  eq: deepEqual,
  unique: uniqueOk,
  esc: escapePointer,
  extra: reportExtra,
  isArr: Array.isArray,
  isSafe: Number.isSafeInteger,
  isFin: Number.isFinite,
  keys: Object.keys,
  W: where,
  R: received,
  S: show,
  // the same words for values whose type the generated code has just tested: no type dispatch
  SS: showString,
  RS: receivedString,
  TF: typeFail,
  dup: firstDuplicate,
  RA: reportAlternatives,
  DM: duplicateMessage,
});
let HELPERS: ReturnType<typeof helpers> | null = null;

/** True when this runtime lets us generate code. */
function codegenAllowed(): FunctionConstructor | null {
  try {
    // looked up on globalThis so a host (or a test) that blocks it is honoured
    const F = globalThis.Function;
    return new F("return 1")() === 1 ? F : null;
  } catch {
    return null;
  }
}

/** Generates a specialised check for `root`, or null when code generation is unavailable or fails. */
export function generate(root: unknown, tree: Tree): Check | null {
  const F = codegenAllowed();
  if (!F) return null;
  const consts: unknown[] = [];
  const k = (x: unknown): string => {
    consts.push(x);
    return `c${consts.length - 1}`;
  };
  // The generated tests shared by the yes/no pass and the reporting pass.
  const enumCondition = (vals: unknown[]): string => {
    if (!vals.every(isPrim)) return `${k(vals)}.some((x) => eq(x, v))`;
    if (vals.length > 8) return `${k(new Set(vals))}.has(v)`;
    return vals.length ? vals.map((x) => `v === ${lit(x)}`).join(" || ") : "false";
  };
  const constCondition = (c: unknown): string => isPrim(c) ? `v === ${lit(c)}` : `eq(${k(c)}, v)`;
  const names = new Map<unknown, string>();
  const bodies: string[] = [];
  let count = 0;
  // a simple anchored pattern becomes a character loop of its own; any other stays a regex
  const patterns = new Map<string, string>();
  const matches = (re: RegExp): string => {
    let name = patterns.get(re.source);
    if (name === undefined) {
      const loop = re.flags === "u" ? compilePattern(re.source) : null;
      if (loop === null) return `test(${k(re)}, v)`;
      name = `p${patterns.size}`;
      patterns.set(re.source, name);
      bodies.push(`function ${name}(v) {\n${loop}\n}`);
    }
    return `${name}(v)`;
  };

  // A reporter is the interpreter's check for a one-keyword schema: same messages on both paths.
  const reporter = (schema: Obj, ptr: string): string => k(tree.node(schema, ptr));

  // Reporting functions come in two kinds: dynamic ones take the value's JSON Pointer as `p`; static ones
  // serve one pointer known at generation time (a property path from the root, no array index), so their
  // messages and child pointers are string constants and a finding costs one object. `sp` is that pointer.
  const statics = new Map<unknown, Map<string, string>>();
  let staticCount = 0;
  const fn = (schema: unknown, ptr: string, sp: string | null = null): string => {
    if (schema === true) return "T";
    if (sp !== null && isObj(schema) && staticCount < 400 && sp.split("/").length <= 12) {
      let m = statics.get(schema);
      if (!m) statics.set(schema, m = new Map());
      const hit = m.get(sp);
      if (hit) return hit;
      if (isPlainSchema(schema)) {
        const name = `s${staticCount++}`;
        m.set(sp, name);
        bodies.push(body(name, schema, ptr, sp));
        return name;
      }
    }
    const known = names.get(schema);
    if (known) return known;
    if (!isObj(schema)) return k(tree.node(schema, ptr));
    if (!isPlainSchema(schema)) {
      const name = k(tree.node(schema, ptr));
      names.set(schema, name);
      return name;
    }
    const name = `f${count++}`;
    names.set(schema, name);
    bodies.push(body(name, schema, ptr, null));
    return name;
  };

  const FAIL = (rep: string) => `{ if (out === null) return false; ok = false; ${rep}(v, p, out); }`;
  const SUBFAIL = "{ if (out === null) return false; ok = false; }";
  // Where the child's pointer is built at run time, the child is first judged by its yes/no function and
  // only a failing child is walked again with its pointer built, so valid parts of an invalid value cost no
  // strings. Where the pointer is a constant (static reporters) there is nothing to save: the reporting pass
  // calls the reporter directly, and a failing child is not judged twice.
  const CHILD = (schema: unknown, ptr: string, f: string, value: string, path: string) =>
    f[0] === "s" && path[0] === '"'
      ? `if (out === null ? !${vfn(schema, ptr)}(${value}) : !${f}(${value}, ${path}, out)) ${SUBFAIL}`
      : `if (!${vfn(schema, ptr)}(${value}) && (out === null || !${f}(${value}, ${path}, out))) ${SUBFAIL}`;
  // findings built inline, with the interpreter's exact words (tests compare both paths finding by finding)
  const CONSTRAINT = '"argument_constraint"';
  const PUSH = (code: string, message: string, expected: string, got: string, path = "p") =>
    `out.push({ code: ${code}, path: ${path}, message: ${message}, expected: ${expected}, received: ${got} });`;
  const FAILX = (code: string, a: string, b: string, c: string, d?: string) =>
    d === undefined
      ? `{ if (out === null) return false; ok = false; ${sv(a + c)}${PUSH(code, a, b, c)} }`
      : `{ if (out === null) return false; ok = false; ${PUSH(code, b, c, d, a)} }`;
  // the shown value, computed once when a finding quotes it twice; only string checks (pattern, format) quote it
  const sv = (used: string) => /\bsv\b/.test(used) ? "const sv = SS(v); " : "";

  const body = (name: string, s: Obj, ptr: string, sp: string | null): string => {
    const L: string[] = [`function ${name}(v, p, out) {`];
    // a message starting with the value's pointer: a constant where the pointer is static
    // dynamic: where(p) spelled out, so the closing quote joins the constant tail (one concatenation less)
    const dyn = (tail: string) => `(p === "" ? ${lit(where("") + tail)} : '"' + p + ${lit('"' + tail)})`;
    const MSG = (tail: string) => sp === null ? dyn(tail) : lit(where(sp) + tail);
    if (s.nullable === true) L.push("if (v === null) return true;");
    let known = "";
    if (s.type !== undefined) {
      const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
      L.push(
        `if (!(${typeCondition(types)})) { if (out !== null) TF(out, v, p, ${lit(types.join(" or "))}${
          sp === null ? "" : `, ${lit(typeHead(sp, types.join(" or ")))}`
        }); return false; }`,
      );
      if (types.length === 1) known = types[0] === "integer" ? "number" : types[0];
    }
    L.push("let ok = true;");
    if (Array.isArray(s.enum)) {
      const vals = s.enum;
      const cond = enumCondition(vals);
      const expected = vals.map((x) => show(x, 40)).join(", ");
      L.push(
        `if (!(${cond})) ${
          FAILX(
            CONSTRAINT,
            MSG(` must be one of: ${expected}.`),
            lit(`one of ${expected}`),
            known === "string" ? "RS(v)" : "R(v)",
          )
        }`,
      );
    }
    if (Object.hasOwn(s, "const")) {
      const cond = constCondition(s.const);
      const c = show(s.const);
      L.push(
        `if (!(${cond})) ${FAILX(CONSTRAINT, MSG(` must be exactly ${c}.`), lit(c), "R(v)")}`,
      );
    }
    const numKeys = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"].filter((x) =>
      s[x] !== undefined
    );
    if (numKeys.length) {
      const conds: string[] = [];
      if (s.minimum !== undefined) conds.push(`v >= ${lit(s.minimum)}`);
      if (s.maximum !== undefined) conds.push(`v <= ${lit(s.maximum)}`);
      if (s.exclusiveMinimum !== undefined) conds.push(`v > ${lit(s.exclusiveMinimum)}`);
      if (s.exclusiveMaximum !== undefined) conds.push(`v < ${lit(s.exclusiveMaximum)}`);
      if (s.multipleOf !== undefined) conds.push(`mult(v, ${lit(s.multipleOf)})`);
      // reporting pass: one finding per failed bound, in the interpreter's order, with its words
      const R: string[] = [];
      const bound = (cond: string, expected: string, words: string) =>
        R.push(
          `if (!(${cond})) ${
            PUSH(
              CONSTRAINT,
              MSG(` must be ${words}.`),
              lit(expected),
              "sv",
            )
          }`,
        );
      if (s.minimum !== undefined) {
        bound(`v >= ${lit(s.minimum)}`, `>= ${s.minimum}`, `at least ${s.minimum}`);
      }
      if (s.maximum !== undefined) bound(`v <= ${lit(s.maximum)}`, `<= ${s.maximum}`, `at most ${s.maximum}`);
      if (s.exclusiveMinimum !== undefined) {
        bound(
          `v > ${lit(s.exclusiveMinimum)}`,
          `> ${s.exclusiveMinimum}`,
          `greater than ${s.exclusiveMinimum}`,
        );
      }
      if (s.exclusiveMaximum !== undefined) {
        bound(`v < ${lit(s.exclusiveMaximum)}`, `< ${s.exclusiveMaximum}`, `less than ${s.exclusiveMaximum}`);
      }
      if (s.multipleOf !== undefined) {
        bound(
          `mult(v, ${lit(s.multipleOf)})`,
          `a multiple of ${s.multipleOf}`,
          `a multiple of ${s.multipleOf}`,
        );
      }
      const guard = known === "number" ? "" : 'typeof v === "number" && ';
      L.push(
        `if (${guard}!(${
          conds.join(" && ")
        })) { if (out === null) return false; ok = false; const sv = "" + v; ${R.join(" ")} }`,
      );
    }
    const strL: string[] = [];
    // the interpreter reports maxLength first and then skips minLength: so does this
    const lenFail = (words: string) =>
      FAILX(
        CONSTRAINT,
        MSG(` must be ${words} characters long.`),
        lit(`${words} characters`),
        'm + " characters"',
      );
    if (s.maxLength !== undefined) {
      strL.push(
        `if (v.length > ${s.maxLength} && (m = cp(v)) > ${s.maxLength}) ${lenFail(`at most ${s.maxLength}`)}`,
      );
    }
    if (s.minLength !== undefined) {
      strL.push(
        `${s.maxLength !== undefined ? "else " : ""}if (v.length < ${
          2 * (s.minLength as number)
        } && (m = cp(v)) < ${s.minLength}) ${lenFail(`at least ${s.minLength}`)}`,
      );
    }
    if (typeof s.pattern === "string") {
      const re = makeRegExp(s.pattern, `${ptr}/pattern`, "pattern");
      strL.push(
        `if (!${matches(re)}) ${
          FAILX(
            CONSTRAINT,
            MSG(` must match the pattern ${re.source}.`),
            lit(`a string matching /${re.source}/`),
            "sv",
          )
        }`,
      );
    }
    if (typeof s.format === "string" && tree.assertFormats && FORMATS[s.format]) {
      strL.push(
        `if (!${k(FORMATS[s.format])}(v)) ${
          FAILX(
            CONSTRAINT,
            MSG(` must be a valid ${s.format}.`),
            lit(`format ${s.format}`),
            "sv",
          )
        }`,
      );
    }
    if (strL.length) {
      L.push(known === "string" ? "{" : 'if (typeof v === "string") {', "let m = 0;", ...strL, "}");
    }
    if (typeof s.format === "string" && tree.assertFormats && NUMERIC_FORMATS[s.format]) {
      L.push(
        `if (typeof v === "number" && !${k(NUMERIC_FORMATS[s.format])}(v)) ${
          FAIL(reporter({ format: s.format }, ptr))
        }`,
      );
    }
    // arrays
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    if (
      prefix.length || s.items !== undefined || s.minItems !== undefined || s.maxItems !== undefined ||
      s.uniqueItems === true
    ) {
      L.push(known === "array" ? "{" : "if (isArr(v)) {", "const n = v.length;");
      if (s.minItems !== undefined) {
        L.push(
          `if (n < ${s.minItems}) ${
            FAILX(
              CONSTRAINT,
              MSG(` must have at least ${s.minItems} item(s).`),
              lit(`at least ${s.minItems} items`),
              'n + " items"',
            )
          }`,
        );
      }
      if (s.maxItems !== undefined) {
        L.push(
          `if (n > ${s.maxItems}) ${
            FAILX(
              CONSTRAINT,
              MSG(` must have at most ${s.maxItems} item(s).`),
              lit(`at most ${s.maxItems} items`),
              'n + " items"',
            )
          }`,
        );
      }
      prefix.forEach((sub, j) => {
        const at = `${ptr}/prefixItems/${j}`;
        const f = fn(sub, at);
        if (f !== "T") L.push(`if (n > ${j}) ${CHILD(sub, at, f, `v[${j}]`, `p + "/${j}"`)}`);
      });
      if (s.items !== undefined && s.items !== true) {
        const at = `${ptr}/items`;
        const f = fn(s.items, at);
        L.push(`for (let i = ${prefix.length}; i < n; i++) ${CHILD(s.items, at, f, "v[i]", 'p + "/" + i')}`);
      }
      if (s.uniqueItems === true) {
        L.push(
          `if (n > 1 && !unique(v)) { if (out === null) return false; ok = false; const d = dup(v); ${
            PUSH(CONSTRAINT, "DM(p, d)", '"unique items"', '"duplicate " + S(v[d[1]])')
          } }`,
        );
      }
      L.push("}");
    }
    // objects
    const props = isObj(s.properties) ? s.properties : {};
    const propKeys = Object.keys(props);
    const required = Array.isArray(s.required) ? s.required as string[] : [];
    if (propKeys.length || required.length || s.additionalProperties !== undefined) {
      L.push(known === "object" ? "{" : 'if (typeof v === "object" && v !== null && !isArr(v)) {');
      for (const r of required) {
        const tail = "/" + escapePointer(r);
        L.push(
          `if (!has(v, ${lit(r)})) ${
            FAILX(
              '"missing_required_argument"',
              sp === null ? `p + ${lit(tail)}` : lit(sp + tail),
              sp === null
                ? `W(p + ${lit(tail)}) + " is required but missing; add it."`
                : lit(`${where(sp + tail)} is required but missing; add it.`),
              '"present"',
              '"missing"',
            )
          }`,
        );
      }
      const subPath = (key: string) =>
        sp === null ? `p + ${lit("/" + escapePointer(key))}` : lit(`${sp}/${escapePointer(key)}`);
      const child = (key: string) => sp === null ? null : `${sp}/${escapePointer(key)}`;
      if (s.additionalProperties === undefined) {
        for (const key of propKeys) {
          const at = `${ptr}/properties/${escapePointer(key)}`;
          const f = fn(props[key], at, child(key));
          if (f === "T") continue;
          L.push(`if (has(v, ${lit(key)})) ${CHILD(props[key], at, f, `v[${lit(key)}]`, subPath(key))}`);
        }
      } else {
        const allowed = propKeys.length > 0 ? propKeys.map((x) => JSON.stringify(x)).join(", ") : "none";
        L.push(
          "const ks = keys(v);",
          "for (let i = 0; i < ks.length; i++) {",
          "const key = ks[i];",
          "switch (key) {",
        );
        for (const key of propKeys) {
          const at = `${ptr}/properties/${escapePointer(key)}`;
          const f = fn(props[key], at, child(key));
          L.push(`case ${lit(key)}:`);
          // a constant key: a named property load rather than a keyed one
          if (f !== "T") L.push(CHILD(props[key], at, f, `v[${lit(key)}]`, subPath(key)));
          L.push("break;");
        }
        L.push("default:");
        if (s.additionalProperties === false) {
          L.push(
            `if (out === null) return false; ok = false; { const ek = esc(key); const at = ${
              sp === null ? 'p + "/" + ek' : `${lit(sp + "/")} + ek`
            }; ${
              PUSH(
                '"unexpected_argument"',
                // where(at) is the pointer in quotes (at is never empty)
                `${lit('"' + (sp === null ? "" : sp + "/"))} + ${sp === null ? "at" : "ek"} + ${
                  lit(`" is not a parameter this tool accepts; remove it. Accepted: ${allowed}.`)
                }`,
                lit(`one of ${allowed}`),
                "SS(key)",
                "at",
              )
            } }`,
          );
        } else if (s.additionalProperties !== true) {
          const at = `${ptr}/additionalProperties`;
          const f = fn(s.additionalProperties, at);
          L.push(CHILD(s.additionalProperties, at, f, "v[key]", 'p + "/" + esc(key)'));
        }
        L.push("}", "}");
      }
      L.push("}");
    }
    // applicators
    if (Array.isArray(s.allOf)) {
      s.allOf.forEach((sub, j) => {
        L.push(`if (!${fn(sub, `${ptr}/allOf/${j}`, sp)}(v, p, out)) ${SUBFAIL}`);
      });
    }
    if (Array.isArray(s.anyOf)) {
      const fs = s.anyOf.map((sub, j) => fn(sub, `${ptr}/anyOf/${j}`));
      // an alternative whose generated code starts with its type test reports exactly one type mismatch when
      // that test fails: tested here, so no finding is built for it only to be merged or dropped
      const misses = s.anyOf.map((sub) => {
        if (!isObj(sub) || !isPlainSchema(sub) || sub.nullable === true || sub.type === undefined) {
          return "null";
        }
        const types = (Array.isArray(sub.type) ? sub.type : [sub.type]) as string[];
        return `(${typeCondition(types)}) ? null : ${lit(types.join(" or "))}`;
      });
      L.push(
        // reported as the interpreter does (reportAlternatives), over these generated alternatives
        `if (!(${
          fs.map((f) => `${f}(v, p, null)`).join(" || ")
        })) { if (out === null) return false; ok = false; RA([${fs.join(", ")}], v, p, out, "any", ${
          misses.every((m) => m === "null") ? "undefined" : `[${misses.join(", ")}]`
        }); }`,
      );
    }
    if (Array.isArray(s.oneOf)) {
      const fs = s.oneOf.map((sub, j) => fn(sub, `${ptr}/oneOf/${j}`));
      L.push(
        `{ let m = 0; ${fs.map((f) => `if (${f}(v, p, null)) m++;`).join(" ")} if (m !== 1) ${
          FAIL(reporter({ oneOf: s.oneOf }, ptr))
        } }`,
      );
    }
    if (s.not !== undefined) {
      L.push(`if (${fn(s.not, `${ptr}/not`)}(v, p, null)) ${FAIL(reporter({ not: s.not }, ptr))}`);
    }
    if (s.if !== undefined) {
      const fi = fn(s.if, `${ptr}/if`);
      const ft = s.then !== undefined ? fn(s.then, `${ptr}/then`, sp) : "T";
      const fe = s.else !== undefined ? fn(s.else, `${ptr}/else`, sp) : "T";
      L.push(`if (${fi}(v, p, null) ? !${ft}(v, p, out) : !${fe}(v, p, out)) ${SUBFAIL}`);
    }
    if (typeof s.$ref === "string") {
      const target = tree.resolve(s.$ref, `${ptr}/$ref`, s);
      L.push(`if (!${fn(target.schema, target.ptr, sp)}(v, p, out)) ${SUBFAIL}`);
    }
    L.push("return ok;", "}");
    return L.join("\n");
  };

  // ---- the yes/no pass: one function per node, no path and no findings, shaped like ajv's output so
  // valid values (the common case) cost as little as possible. It must never accept what the reporting
  // pass would reject: property reads may see inherited values (stricter), `required` uses own properties.
  const vnames = new Map<unknown, string>();
  let vcount = 0;
  const vfn = (schema: unknown, ptr: string): string => {
    if (schema === true) return "T";
    const known = vnames.get(schema);
    if (known) return known;
    const name = `v${vcount++}`;
    vnames.set(schema, name);
    if (!isObj(schema) || !isPlainSchema(schema)) {
      bodies.push(`function ${name}(v) { return ${k(tree.node(schema, ptr))}(v, "", null); }`);
      return name;
    }
    bodies.push(vbody(name, schema, ptr));
    return name;
  };
  const SAFE_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  // a direct property read is safe when no prototype property could shadow the name
  const direct = (key: string) => SAFE_NAME.test(key) && !(key in Object.prototype) && key !== "__proto__";
  const vbody = (name: string, s: Obj, ptr: string): string => {
    const L: string[] = [`function ${name}(v) {`];
    if (s.nullable === true) L.push("if (v === null) return true;");
    let known = "";
    if (s.type !== undefined) {
      const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
      L.push(`if (!(${typeCondition(types)})) return false;`);
      if (types.length === 1) known = types[0] === "integer" ? "number" : types[0];
    }
    if (Array.isArray(s.enum)) {
      const vals = s.enum;
      const cond = enumCondition(vals);
      L.push(`if (!(${cond})) return false;`);
    }
    if (Object.hasOwn(s, "const")) {
      L.push(`if (!(${constCondition(s.const)})) return false;`);
    }
    const conds: string[] = [];
    if (s.minimum !== undefined) conds.push(`v >= ${lit(s.minimum)}`);
    if (s.maximum !== undefined) conds.push(`v <= ${lit(s.maximum)}`);
    if (s.exclusiveMinimum !== undefined) conds.push(`v > ${lit(s.exclusiveMinimum)}`);
    if (s.exclusiveMaximum !== undefined) conds.push(`v < ${lit(s.exclusiveMaximum)}`);
    if (s.multipleOf !== undefined) conds.push(`mult(v, ${lit(s.multipleOf)})`);
    if (conds.length) {
      L.push(
        `if (${known === "number" ? "" : 'typeof v === "number" && '}!(${conds.join(" && ")})) return false;`,
      );
    }
    const str: string[] = [];
    if (s.maxLength !== undefined) str.push(`(v.length > ${s.maxLength} && cp(v) > ${s.maxLength})`);
    if (s.minLength !== undefined) {
      str.push(`(v.length < ${2 * (s.minLength as number)} && cp(v) < ${s.minLength})`);
    }
    if (typeof s.pattern === "string") {
      str.push(`!${matches(makeRegExp(s.pattern, `${ptr}/pattern`, "pattern"))}`);
    }
    if (typeof s.format === "string" && tree.assertFormats && FORMATS[s.format]) {
      str.push(`!${k(FORMATS[s.format])}(v)`);
    }
    if (str.length) {
      L.push(
        `if (${known === "string" ? "" : 'typeof v === "string" && '}(${str.join(" || ")})) return false;`,
      );
    }
    if (typeof s.format === "string" && tree.assertFormats && NUMERIC_FORMATS[s.format]) {
      L.push(`if (typeof v === "number" && !${k(NUMERIC_FORMATS[s.format])}(v)) return false;`);
    }
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    if (
      prefix.length || s.items !== undefined || s.minItems !== undefined || s.maxItems !== undefined ||
      s.uniqueItems === true
    ) {
      L.push(known === "array" ? "{" : "if (isArr(v)) {", "const n = v.length;");
      if (s.minItems !== undefined) L.push(`if (n < ${s.minItems}) return false;`);
      if (s.maxItems !== undefined) L.push(`if (n > ${s.maxItems}) return false;`);
      prefix.forEach((sub, j) => {
        const f = vfn(sub, `${ptr}/prefixItems/${j}`);
        if (f !== "T") L.push(`if (n > ${j} && !${f}(v[${j}])) return false;`);
      });
      if (s.items !== undefined && s.items !== true) {
        const f = vfn(s.items, `${ptr}/items`);
        L.push(`for (let i = ${prefix.length}; i < n; i++) if (!${f}(v[i])) return false;`);
      }
      if (s.uniqueItems === true) L.push("if (n > 1 && !unique(v)) return false;");
      L.push("}");
    }
    const props = isObj(s.properties) ? s.properties : {};
    const propKeys = Object.keys(props);
    const required = Array.isArray(s.required) ? s.required as string[] : [];
    if (propKeys.length || required.length || s.additionalProperties !== undefined) {
      L.push(known === "object" ? "{" : 'if (typeof v === "object" && v !== null && !isArr(v)) {');
      for (const r of required) L.push(`if (!has(v, ${lit(r)})) return false;`);
      L.push("let x;");
      for (const key of propKeys) {
        const f = vfn(props[key], `${ptr}/properties/${escapePointer(key)}`);
        if (f === "T") continue;
        L.push(
          direct(key)
            // an own property holding undefined (possible in object arguments, never in JSON) is checked too
            ? `if ((x = v.${key}) !== undefined ? !${f}(x) : has(v, ${lit(key)}) && !${f}(x)) return false;`
            : `if (has(v, ${lit(key)}) && !${f}(v[${lit(key)}])) return false;`,
        );
      }
      if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
        const f = s.additionalProperties === false
          ? null
          : vfn(s.additionalProperties, `${ptr}/additionalProperties`);
        const cond = propKeys.length ? propKeys.map((key) => `key !== ${lit(key)}`).join(" && ") : "true";
        // for-in allocates no key array; it also sees inherited enumerable keys, which only makes this pass
        // stricter (the reporting pass, over own keys, then decides)
        L.push(
          `for (const key in v) { if (${cond}) ${
            f === null ? "return false;" : `{ if (!${f}(v[key])) return false; }`
          } }`,
        );
      }
      L.push("}");
    }
    if (Array.isArray(s.allOf)) {
      s.allOf.forEach((sub, j) => L.push(`if (!${vfn(sub, `${ptr}/allOf/${j}`)}(v)) return false;`));
    }
    if (Array.isArray(s.anyOf)) {
      const fs = s.anyOf.map((sub, j) => vfn(sub, `${ptr}/anyOf/${j}`));
      L.push(`if (!(${fs.map((f) => `${f}(v)`).join(" || ")})) return false;`);
    }
    if (Array.isArray(s.oneOf)) {
      const fs = s.oneOf.map((sub, j) => vfn(sub, `${ptr}/oneOf/${j}`));
      L.push(`{ let m = 0; ${fs.map((f) => `if (${f}(v)) m++;`).join(" ")} if (m !== 1) return false; }`);
    }
    if (s.not !== undefined) L.push(`if (${vfn(s.not, `${ptr}/not`)}(v)) return false;`);
    if (s.if !== undefined) {
      const fi = vfn(s.if, `${ptr}/if`);
      const ft = s.then !== undefined ? vfn(s.then, `${ptr}/then`) : "T";
      const fe = s.else !== undefined ? vfn(s.else, `${ptr}/else`) : "T";
      L.push(`if (${fi}(v) ? !${ft}(v) : !${fe}(v)) return false;`);
    }
    if (typeof s.$ref === "string") {
      const target = tree.resolve(s.$ref, `${ptr}/$ref`, s);
      L.push(`if (!${vfn(target.schema, target.ptr)}(v)) return false;`);
    }
    L.push("return true;", "}");
    return L.join("\n");
  };

  try {
    HELPERS ??= helpers();
    const reportName = fn(root, "");
    const staticName = fn(root, "", "");
    const okName = vfn(root, "");
    bodies.push(
      `function root(v, p, out) { return out === null ? ${okName}(v) : p === "" ? ${staticName}(v, "", out) : ${reportName}(v, p, out); }`,
    );
    const rootName = "root";
    const src = [
      `const { ${Object.keys(HELPERS).join(", ")} } = H;`,
      ...consts.map((_, i) => `const c${i} = K[${i}];`),
      ...bodies,
      `return ${rootName};`,
    ].join("\n");
    return new F("K", "H", src)(consts, HELPERS) as Check;
  } catch {
    return null;
  }
}
