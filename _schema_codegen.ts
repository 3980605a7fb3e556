/**
 * The code generator behind the JSON Schema engine: turns a schema the interpreter has already accepted
 * into one specialised JavaScript function per schema node (with `new Function`), so valid values are
 * checked with plain inline comparisons. Findings are produced by the interpreter's own reporters, so both
 * paths say exactly the same thing. Nodes that use keywords this generator does not specialise are
 * delegated to the interpreter. Returns null where code generation is forbidden (e.g. a CSP without
 * `unsafe-eval`); the caller then uses the interpreter.
 *
 * @module
 */
import {
  ANNOTATION_KEYWORDS,
  type Check,
  codePoints,
  deepEqual,
  isMultiple,
  makeRegExp,
  NUMERIC_FORMATS,
  reportExtra,
  safeTest,
  type Tree,
  TRUE,
  uniqueOk,
} from "./_schema.ts";
import { FORMATS } from "./_schema_formats.ts";
import { escapePointer } from "./_json.ts";

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
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
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
  const names = new Map<unknown, string>();
  const bodies: string[] = [];
  let count = 0;

  // A reporter is the interpreter's check for a one-keyword schema: same messages on both paths.
  const reporter = (schema: Obj, ptr: string): string => k(tree.node(schema, ptr));

  const fn = (schema: unknown, ptr: string): string => {
    if (schema === true) return "T";
    const known = names.get(schema);
    if (known) return known;
    if (!isObj(schema)) return k(tree.node(schema, ptr));
    const plain =
      Object.keys(schema).every((key) =>
        SPECIALISED.has(key) || ANNOTATION_KEYWORDS.has(key) || key.startsWith("x-")
      ) &&
      typeof schema.exclusiveMinimum !== "boolean" && typeof schema.exclusiveMaximum !== "boolean" &&
      !Array.isArray(schema.items);
    if (!plain) {
      const name = k(tree.node(schema, ptr));
      names.set(schema, name);
      return name;
    }
    const name = `f${count++}`;
    names.set(schema, name);
    bodies.push(body(name, schema, ptr));
    return name;
  };

  const FAIL = (rep: string) => `{ if (out === null) return false; ok = false; ${rep}(v, p, out); }`;
  const SUBFAIL = "{ if (out === null) return false; ok = false; }";

  const body = (name: string, s: Obj, ptr: string): string => {
    const L: string[] = [`function ${name}(v, p, out) {`];
    if (s.nullable === true) L.push("if (v === null) return true;");
    let known = "";
    if (s.type !== undefined) {
      const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
      L.push(
        `if (!(${types.map((t) => `(${TYPE_EXPR[t]})`).join(" || ")})) { if (out !== null) ${
          reporter({ type: s.type }, ptr)
        }(v, p, out); return false; }`,
      );
      if (types.length === 1) known = types[0] === "integer" ? "number" : types[0];
    }
    L.push("let ok = true;");
    if (Array.isArray(s.enum)) {
      const vals = s.enum;
      let cond: string;
      if (vals.every(isPrim)) {
        cond = vals.length <= 8
          ? (vals.length ? vals.map((x) => `v === ${lit(x)}`).join(" || ") : "false")
          : `${k(new Set(vals))}.has(v)`;
      } else cond = `${k(vals)}.some((x) => eq(x, v))`;
      L.push(`if (!(${cond})) ${FAIL(reporter({ enum: vals }, ptr))}`);
    }
    if (Object.hasOwn(s, "const")) {
      const cond = isPrim(s.const) ? `v === ${lit(s.const)}` : `eq(${k(s.const)}, v)`;
      L.push(`if (!(${cond})) ${FAIL(reporter({ const: s.const }, ptr))}`);
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
      const sub: Obj = {};
      for (const x of numKeys) sub[x] = s[x];
      const guard = known === "number" ? "" : 'typeof v === "number" && ';
      L.push(`if (${guard}!(${conds.join(" && ")})) ${FAIL(reporter(sub, ptr))}`);
    }
    const strConds: [string, Obj][] = [];
    if (s.minLength !== undefined || s.maxLength !== undefined) {
      const c: string[] = [];
      if (s.maxLength !== undefined) c.push(`(v.length > ${s.maxLength} && cp(v) > ${s.maxLength})`);
      if (s.minLength !== undefined) {
        c.push(`(v.length < ${2 * (s.minLength as number)} && cp(v) < ${s.minLength})`);
      }
      const sub: Obj = {};
      if (s.minLength !== undefined) sub.minLength = s.minLength;
      if (s.maxLength !== undefined) sub.maxLength = s.maxLength;
      strConds.push([c.join(" || "), sub]);
    }
    if (typeof s.pattern === "string") {
      strConds.push([`!test(${k(makeRegExp(s.pattern, `${ptr}/pattern`, "pattern"))}, v)`, {
        pattern: s.pattern,
      }]);
    }
    if (typeof s.format === "string" && tree.assertFormats && FORMATS[s.format]) {
      strConds.push([`!${k(FORMATS[s.format])}(v)`, { format: s.format }]);
    }
    if (strConds.length) {
      L.push(known === "string" ? "{" : 'if (typeof v === "string") {');
      for (const [cond, sub] of strConds) L.push(`if (${cond}) ${FAIL(reporter(sub, ptr))}`);
      L.push("}");
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
        L.push(`if (n < ${s.minItems}) ${FAIL(reporter({ minItems: s.minItems }, ptr))}`);
      }
      if (s.maxItems !== undefined) {
        L.push(`if (n > ${s.maxItems}) ${FAIL(reporter({ maxItems: s.maxItems }, ptr))}`);
      }
      prefix.forEach((sub, j) => {
        const f = fn(sub, `${ptr}/prefixItems/${j}`);
        L.push(`if (n > ${j} && !${f}(v[${j}], out === null ? p : p + "/${j}", out)) ${SUBFAIL}`);
      });
      if (s.items !== undefined && s.items !== true) {
        const f = fn(s.items, `${ptr}/items`);
        L.push(
          `for (let i = ${prefix.length}; i < n; i++) if (!${f}(v[i], out === null ? p : p + "/" + i, out)) ${SUBFAIL}`,
        );
      }
      if (s.uniqueItems === true) {
        L.push(`if (n > 1 && !unique(v)) ${FAIL(reporter({ uniqueItems: true }, ptr))}`);
      }
      L.push("}");
    }
    // objects
    const props = isObj(s.properties) ? s.properties : {};
    const propKeys = Object.keys(props);
    const required = Array.isArray(s.required) ? s.required as string[] : [];
    if (propKeys.length || required.length || s.additionalProperties !== undefined) {
      L.push(known === "object" ? "{" : 'if (typeof v === "object" && v !== null && !isArr(v)) {');
      for (const r of required) L.push(`if (!has(v, ${lit(r)})) ${FAIL(reporter({ required: [r] }, ptr))}`);
      const subPath = (key: string) => `out === null ? p : p + ${lit("/" + escapePointer(key))}`;
      if (s.additionalProperties === undefined) {
        for (const key of propKeys) {
          const f = fn(props[key], `${ptr}/properties/${escapePointer(key)}`);
          if (f === "T") continue;
          L.push(`if (has(v, ${lit(key)}) && !${f}(v[${lit(key)}], ${subPath(key)}, out)) ${SUBFAIL}`);
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
          const f = fn(props[key], `${ptr}/properties/${escapePointer(key)}`);
          L.push(`case ${lit(key)}:`);
          if (f !== "T") L.push(`if (!${f}(v[key], ${subPath(key)}, out)) ${SUBFAIL}`);
          L.push("break;");
        }
        L.push("default:");
        if (s.additionalProperties === false) {
          L.push(
            `if (out === null) return false; ok = false; extra(out, p + "/" + esc(key), key, ${
              lit(allowed)
            });`,
          );
        } else if (s.additionalProperties !== true) {
          const f = fn(s.additionalProperties, `${ptr}/additionalProperties`);
          L.push(`if (!${f}(v[key], out === null ? p : p + "/" + esc(key), out)) ${SUBFAIL}`);
        }
        L.push("}", "}");
      }
      L.push("}");
    }
    // applicators
    if (Array.isArray(s.allOf)) {
      s.allOf.forEach((sub, j) => {
        L.push(`if (!${fn(sub, `${ptr}/allOf/${j}`)}(v, p, out)) ${SUBFAIL}`);
      });
    }
    if (Array.isArray(s.anyOf)) {
      const fs = s.anyOf.map((sub, j) => fn(sub, `${ptr}/anyOf/${j}`));
      L.push(
        `if (!(${fs.map((f) => `${f}(v, p, null)`).join(" || ")})) ${
          FAIL(reporter({ anyOf: s.anyOf }, ptr))
        }`,
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
      const ft = s.then !== undefined ? fn(s.then, `${ptr}/then`) : "T";
      const fe = s.else !== undefined ? fn(s.else, `${ptr}/else`) : "T";
      L.push(`if (${fi}(v, p, null) ? !${ft}(v, p, out) : !${fe}(v, p, out)) ${SUBFAIL}`);
    }
    if (typeof s.$ref === "string") {
      const target = tree.resolve(s.$ref, `${ptr}/$ref`, s);
      L.push(`if (!${fn(target.schema, target.ptr)}(v, p, out)) ${SUBFAIL}`);
    }
    L.push("return ok;", "}");
    return L.join("\n");
  };

  try {
    HELPERS ??= helpers();
    const rootName = fn(root, "");
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
