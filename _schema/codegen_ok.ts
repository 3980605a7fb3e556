/**
 * The yes/no pass of the code generator: for one schema node, a function `(v)` with no pointers and no
 * findings, shaped like ajv's output so valid values (the common case) cost as little as possible. It must
 * never accept what the reporting pass would reject: property reads may see inherited values (stricter),
 * `required` uses own properties.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { NUMERIC_FORMATS } from "./keywords.ts";
import { FORMATS } from "./formats.ts";
import { makeRegExp, membersAsSent } from "./values.ts";
import {
  constCondition,
  type Emit,
  enumCondition,
  hasArrayKeywords,
  hasObjectKeywords,
  knownType,
  lit,
  numberBounds,
  type Obj,
  objectKeywords,
  typeBlock,
  typeCondition,
  typesOf,
} from "./codegen_js.ts";

const SAFE_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A direct property read (`v.name`) is safe when no prototype property could shadow the name. */
const direct = (key: string) => SAFE_NAME.test(key) && !(key in Object.prototype) && key !== "__proto__";

/** `type`, `enum`, `const`. */
function valueLines(e: Emit, s: Obj): string[] {
  const L: string[] = [];
  if (s.type !== undefined) L.push(`if (!(${typeCondition(typesOf(s))})) return false;`);
  if (Array.isArray(s.enum)) L.push(`if (!(${enumCondition(e, membersAsSent(s.enum))})) return false;`);
  if (Object.hasOwn(s, "const")) L.push(`if (!(${constCondition(e, s.const)})) return false;`);
  return L;
}

/** The numeric bounds, as one test. */
function numberLines(s: Obj, known: string): string[] {
  const conds = numberBounds(s).map((b) => b.test);
  if (conds.length === 0) return [];
  return [
    `if (${known === "number" ? "" : 'typeof v === "number" && '}!(${conds.join(" && ")})) return false;`,
  ];
}

/** `maxLength`, `minLength`, `pattern` and a string `format`, as one test; then a numeric `format`. */
function stringLines(e: Emit, s: Obj, ptr: string, known: string): string[] {
  const str: string[] = [];
  if (s.maxLength !== undefined) str.push(`(v.length > ${s.maxLength} && cp(v) > ${s.maxLength})`);
  if (s.minLength !== undefined) {
    str.push(`(v.length < ${2 * (s.minLength as number)} && cp(v) < ${s.minLength})`);
  }
  if (typeof s.pattern === "string") {
    str.push(`!${e.matches(makeRegExp(s.pattern, `${ptr}/pattern`, "pattern"))}`);
  }
  if (typeof s.format === "string" && e.assertFormats && FORMATS[s.format]) {
    str.push(`!${e.constant(FORMATS[s.format])}(v)`);
  }
  const L: string[] = [];
  if (str.length) {
    L.push(
      `if (${known === "string" ? "" : 'typeof v === "string" && '}(${str.join(" || ")})) return false;`,
    );
  }
  if (typeof s.format === "string" && e.assertFormats && NUMERIC_FORMATS[s.format]) {
    L.push(`if (typeof v === "number" && !${e.constant(NUMERIC_FORMATS[s.format])}(v)) return false;`);
  }
  return L;
}

/** The array keywords, in one block for arrays. */
function arrayLines(e: Emit, s: Obj, ptr: string, known: string): string[] {
  if (!hasArrayKeywords(s)) return [];
  const L = [typeBlock("array", known), "const n = v.length;"];
  if (s.minItems !== undefined) L.push(`if (n < ${s.minItems}) return false;`);
  if (s.maxItems !== undefined) L.push(`if (n > ${s.maxItems}) return false;`);
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
  prefix.forEach((sub, j) => {
    const f = e.okFn(sub, `${ptr}/prefixItems/${j}`);
    if (f !== "T") L.push(`if (n > ${j} && !${f}(v[${j}] ?? null)) return false;`); // (JSON sends a hole as null)
  });
  if (s.items !== undefined && s.items !== true) {
    const f = e.okFn(s.items, `${ptr}/items`);
    // a hole or undefined (JSON sends null): the rest of the array by what it holds (see restOfItems)
    L.push(
      `for (let i = ${prefix.length}; i < n; i++) { const x = v[i]; if (x === undefined) { ` +
        `if (!rest(v, i, ${f}, null, "", null)) return false; break; } if (!${f}(x)) return false; }`,
    );
  }
  if (s.uniqueItems === true) L.push("if (n > 1 && !unique(v)) return false;");
  L.push("}");
  return L;
}

/** The object keywords, in one block for objects. */
function objectLines(e: Emit, s: Obj, ptr: string, known: string): string[] {
  const o = objectKeywords(s);
  if (!hasObjectKeywords(s, o)) return [];
  const L = [typeBlock("object", known)];
  for (const r of o.required) L.push(`if (!has(v, ${lit(r)})) return false;`);
  L.push("let x;");
  for (const key of o.propKeys) {
    const f = e.okFn(o.props[key], `${ptr}/properties/${escapePointer(key)}`);
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
      : e.okFn(s.additionalProperties, `${ptr}/additionalProperties`);
    const cond = o.propKeys.length ? o.propKeys.map((key) => `key !== ${lit(key)}`).join(" && ") : "true";
    // for-in allocates no key array; it also sees inherited enumerable keys, which only makes this pass
    // stricter (the reporting pass, over own keys, then decides)
    L.push(
      `for (const key in v) { if (${cond}) ${
        f === null ? "return false;" : `{ if (!${f}(v[key])) return false; }`
      } }`,
    );
  }
  L.push("}");
  return L;
}

/** `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `$ref`. */
function combinatorLines(e: Emit, s: Obj, ptr: string): string[] {
  const L: string[] = [];
  if (Array.isArray(s.allOf)) {
    s.allOf.forEach((sub, j) => L.push(`if (!${e.okFn(sub, `${ptr}/allOf/${j}`)}(v)) return false;`));
  }
  if (Array.isArray(s.anyOf)) {
    const fs = s.anyOf.map((sub, j) => e.okFn(sub, `${ptr}/anyOf/${j}`));
    L.push(`if (!(${fs.map((f) => `${f}(v)`).join(" || ")})) return false;`);
  }
  if (Array.isArray(s.oneOf)) {
    const fs = s.oneOf.map((sub, j) => e.okFn(sub, `${ptr}/oneOf/${j}`));
    L.push(`{ let m = 0; ${fs.map((f) => `if (${f}(v)) m++;`).join(" ")} if (m !== 1) return false; }`);
  }
  if (s.not !== undefined) L.push(`if (${e.okFn(s.not, `${ptr}/not`)}(v)) return false;`);
  if (s.if !== undefined) {
    const fi = e.okFn(s.if, `${ptr}/if`);
    const ft = s.then !== undefined ? e.okFn(s.then, `${ptr}/then`) : "T";
    const fe = s.else !== undefined ? e.okFn(s.else, `${ptr}/else`) : "T";
    L.push(`if (${fi}(v) ? !${ft}(v) : !${fe}(v)) return false;`);
  }
  if (typeof s.$ref === "string") {
    const target = e.resolve(s.$ref, `${ptr}/$ref`, s);
    L.push(`if (!${e.okRef(target)}(v)) return false;`);
  }
  return L;
}

/** The yes/no function `name` for node `s` (at `ptr`). */
export function okBody(e: Emit, name: string, s: Obj, ptr: string): string {
  const known = knownType(s);
  const L = [`function ${name}(v) {`];
  if (s.nullable === true) L.push("if (v === null) return true;");
  L.push(...valueLines(e, s), ...numberLines(s, known), ...stringLines(e, s, ptr, known));
  L.push(...arrayLines(e, s, ptr, known), ...objectLines(e, s, ptr, known), ...combinatorLines(e, s, ptr));
  L.push("return true;", "}");
  return L.join("\n");
}
