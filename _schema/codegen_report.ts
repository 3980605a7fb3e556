/**
 * The reporting pass of the code generator: for one schema node, a function `(v, p, out)` that answers
 * like the interpreter's check and, when `out` is an array, pushes the interpreter's findings with its
 * exact words (tests compare both paths finding by finding). Where the node's pointer is known in advance
 * (`sp`, a property path from the root), messages and child pointers are string constants.
 *
 * @module
 */
import { escapePointer, MAX_QUOTED_POINTER } from "../_common/pointer.ts";
import { plural } from "../_common/values.ts";
import { NUMERIC_FORMATS } from "./keywords.ts";
import { FORMATS } from "./formats.ts";
import { COUNTS_MADE, show, typeMessages, typeTails, where } from "./report.ts";
import { makeRegExp, membersAsSent } from "./values.ts";
import {
  constCondition,
  CONSTRAINT,
  type Emit,
  enumCondition,
  failInline,
  failWith,
  hasArrayKeywords,
  hasObjectKeywords,
  isPlainSchema,
  knownType,
  lit,
  numberBounds,
  type Obj,
  objectKeywords,
  pushFinding,
  SUBFAIL,
  typeBlock,
  typeCondition,
  typesOf,
} from "./codegen_js.ts";

/** One node being generated: where it sits and what its type test has established. */
interface Site {
  /** The generator. */
  e: Emit;
  /** The schema node. */
  s: Obj;
  /** Its pointer inside the schema. */
  ptr: string;
  /** The value's pointer when known in advance (a static reporter), else null. */
  sp: string | null;
  /** The value's JavaScript type after the type test ("" when not one type). */
  known: string;
}

/** A message starting with the value's pointer: a constant where the pointer is static. */
function message(site: Site, tail: string): string {
  if (site.sp !== null) return lit(where(site.sp) + tail);
  // where(p) spelled out for a short pointer, so the closing quote joins the constant tail (one concatenation
  // less); the empty one and a long one, which where() cuts, through it
  return `(p === "" || p.length > ${MAX_QUOTED_POINTER} ? W(p) + ${lit(tail)} : '"' + p + ${
    lit('"' + tail)
  })`;
}

/**
 * A child value checked by its own functions: `report` (a reporting function name), with the yes/no
 * function of `schema` for the yes/no mode. In the reporting mode, a child the schema names (`named`: a
 * declared property, a prefix item) or whose pointer is a constant is reported directly: its pointer costs at
 * most one string per keyword, and a failing child is not judged twice. Any other child (an `items` or
 * `additionalProperties` one, as many as the value holds) is first judged by its yes/no function, and only a
 * failing one is walked again with its pointer built, so the valid items of an invalid array cost no strings.
 */
function childCheck(
  e: Emit,
  child: { schema: unknown; ptr: string; report: string; value: string; path: string; named: boolean },
): string {
  const { schema, ptr, report, value, path, named } = child;
  return named || (report[0] === "s" && path[0] === '"')
    ? `if (out === null ? !${e.okFn(schema, ptr)}(${value}) : !${report}(${value}, ${path}, out)) ${SUBFAIL}`
    : `if (!${
      e.okFn(schema, ptr)
    }(${value}) && (out === null || !${report}(${value}, ${path}, out))) ${SUBFAIL}`;
}

/**
 * `type`: the only test that returns at once (nothing else is worth reporting about a wrong type). Its words
 * are made with the function: whole messages where the pointer is static, their ends where it is not.
 */
function typeLines(e: Emit, s: Obj, sp: string | null): string[] {
  if (s.type === undefined) return [];
  const expected = typesOf(s).join(" or ");
  const report = sp === null
    ? `TFA(out, v, p, ${lit(expected)}, ${e.constant(typeTails(expected))})`
    : `TFS(out, v, p, ${lit(expected)}, ${e.constant(typeMessages(sp, expected))})`;
  return [`if (!(${typeCondition(typesOf(s))})) { if (out !== null) ${report}; return false; }`];
}

/** `enum` and `const`. */
function enumConstLines(site: Site): string[] {
  const { e, s } = site;
  const L: string[] = [];
  if (Array.isArray(s.enum)) {
    const members = membersAsSent(s.enum);
    const cond = enumCondition(e, members);
    const expected = members.map((x) => show(x, 40)).join(", ");
    const fail = failInline({
      code: CONSTRAINT,
      message: message(site, ` must be one of: ${expected}.`),
      expected: lit(`one of ${expected}`),
      received: site.known === "string" ? "RS(v)" : "R(v)",
    });
    L.push(`if (!(${cond})) ${fail}`);
  }
  if (Object.hasOwn(s, "const")) {
    const cond = constCondition(e, s.const);
    const c = show(s.const);
    const fail = failInline({
      code: CONSTRAINT,
      message: message(site, ` must be exactly ${c}.`),
      expected: lit(c),
      received: "R(v)",
    });
    L.push(`if (!(${cond})) ${fail}`);
  }
  return L;
}

/** The numeric bounds: one combined test, then one finding per failed bound in the interpreter's order. */
function numberLines(site: Site): string[] {
  const bounds = numberBounds(site.s);
  if (bounds.length === 0) return [];
  const reports = bounds.map((b) =>
    `if (!(${b.test})) ${
      pushFinding({
        code: CONSTRAINT,
        message: message(site, ` must be ${b.words}.`),
        expected: lit(b.expected),
        received: "sv",
      })
    }`
  );
  const guard = site.known === "number" ? "" : 'typeof v === "number" && ';
  const all = bounds.map((b) => b.test).join(" && ");
  return [
    `if (${guard}!(${all})) { if (out === null) return false; ok = false; const sv = "" + v; ${
      reports.join(" ")
    } }`,
  ];
}

/** The items of an array at a static pointer that get reporters of their own pointers (see `arrayLines`). */
const STATIC_ITEMS = 4;

/**
 * The generated expression for a count held in variable `n`, with its noun: "1 item", "2 items". A small count
 * (most are) is read from the words made once (`table`, a helper made by `countTable`), not built per finding.
 */
function countWords(n: string, word: string, table: string): string {
  return `(${n} < ${COUNTS_MADE} ? ${table}[${n}] : ${n} + ${lit(` ${word}s`)})`;
}

/** `maxLength`, `minLength`, `pattern` and a string `format`, in one block for strings. */
function stringLines(site: Site): string[] {
  const { e, s, ptr } = site;
  const L: string[] = [];
  // the interpreter reports maxLength first and then skips minLength: so does this
  const lengthFail = (words: string, bound: number) =>
    failInline({
      code: CONSTRAINT,
      message: message(site, ` must be ${words} ${bound} ${plural(bound, "character")} long.`),
      expected: lit(`${words} ${bound} ${plural(bound, "character")}`),
      received: countWords("m", "character", "NC"),
    });
  if (s.maxLength !== undefined) {
    const max = s.maxLength as number;
    L.push(`if (v.length > ${max} && (m = cp(v)) > ${max}) ${lengthFail("at most", max)}`);
  }
  if (s.minLength !== undefined) {
    const min = s.minLength as number;
    const otherwise = s.maxLength !== undefined ? "else " : "";
    L.push(`${otherwise}if (v.length < ${2 * min} && (m = cp(v)) < ${min}) ${lengthFail("at least", min)}`);
  }
  if (typeof s.pattern === "string") {
    const re = makeRegExp(s.pattern, `${ptr}/pattern`, "pattern");
    const fail = failInline({
      code: CONSTRAINT,
      message: message(site, ` must match the pattern ${re.source}.`),
      expected: lit(`a string matching /${re.source}/`),
      received: "sv",
      showsValue: true,
    });
    L.push(`if (!${e.matches(re)}) ${fail}`);
  }
  if (typeof s.format === "string" && e.assertFormats && FORMATS[s.format]) {
    const test = e.constant(FORMATS[s.format]);
    const fail = failInline({
      code: CONSTRAINT,
      message: message(site, ` must be a valid ${s.format}.`),
      expected: lit(`format ${s.format}`),
      received: "sv",
      showsValue: true,
    });
    L.push(`if (!${test}(v)) ${fail}`);
  }
  if (L.length === 0) return [];
  return [typeBlock("string", site.known), "let m = 0;", ...L, "}"];
}

/** A numeric `format` (`int32` and the like), reported by the interpreter. */
function numericFormatLines(site: Site): string[] {
  const { e, s, ptr } = site;
  if (typeof s.format !== "string" || !e.assertFormats || !NUMERIC_FORMATS[s.format]) return [];
  const test = e.constant(NUMERIC_FORMATS[s.format]);
  return [`if (typeof v === "number" && !${test}(v)) ${failWith(e.reporter({ format: s.format }, ptr))}`];
}

/** The array keywords, in one block for arrays. */
function arrayLines(site: Site): string[] {
  const { e, s, ptr } = site;
  if (!hasArrayKeywords(s)) return [];
  const L = [typeBlock("array", site.known), "const n = v.length;"];
  const countFail = (words: string, bound: number) =>
    failInline({
      code: CONSTRAINT,
      message: message(site, ` must have ${words} ${bound} ${plural(bound, "item")}.`),
      expected: lit(`${words} ${bound} ${plural(bound, "item")}`),
      received: countWords("n", "item", "NI"),
    });
  if (s.minItems !== undefined) {
    L.push(`if (n < ${s.minItems}) ${countFail("at least", s.minItems as number)}`);
  }
  if (s.maxItems !== undefined) {
    L.push(`if (n > ${s.maxItems}) ${countFail("at most", s.maxItems as number)}`);
  }
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
  prefix.forEach((sub, j) => {
    const at = `${ptr}/prefixItems/${j}`;
    const report = e.reportFn(sub, at);
    if (report !== "T") {
      L.push(
        `if (n > ${j}) ${
          childCheck(e, {
            schema: sub,
            ptr: at,
            report,
            value: `(v[${j}] ?? null)`,
            path: `p + "/${j}"`,
            named: true,
          })
        }`,
      );
    }
  });
  if (s.items !== undefined && s.items !== true) {
    const at = `${ptr}/items`;
    const report = e.reportFn(s.items, at);
    // Under a static pointer, the first items are reported by reporters of their own pointers (static where
    // the limits allow), so that their findings' words are constants; any reporter says the same words given
    // the same pointer.
    const sp = site.sp;
    let call = `${report}(x, p + "/" + i, out)`;
    for (let j = STATIC_ITEMS - 1; sp !== null && j >= prefix.length; j--) {
      const item = `${sp}/${j}`;
      call = `i === ${j} ? ${e.reportFn(s.items, at, item)}(x, ${lit(item)}, out) : ${call}`;
    }
    const ok = e.okFn(s.items, at);
    // a hole or undefined (JSON sends null): the rest of the array by what it holds (see restOfItems)
    L.push(
      `for (let i = ${prefix.length}; i < n; i++) { const x = v[i]; if (x === undefined) { ` +
        `if (!rest(v, i, ${ok}, ${report}, p, out)) ${SUBFAIL} break; } ` +
        `if (!${ok}(x) && (out === null || !(${call}))) ${SUBFAIL} }`,
    );
  }
  if (s.uniqueItems === true) {
    // a static pointer's words are a constant up to the first index
    const message = site.sp === null
      ? "DM(p, d)"
      : `${lit(`${where(site.sp)} must not repeat items; items `)} + d[0] + " and " + d[1] + " are equal."`;
    const finding = pushFinding({
      code: CONSTRAINT,
      message,
      expected: '"unique items"',
      received: '"duplicate " + S(v[d[1]] ?? null)',
    });
    // a report looks for the repeated items once (no `unique` test before it): they are what it says
    L.push(
      `if (n > 1) { if (out === null) { if (!unique(v)) return false; } ` +
        `else { const d = dup(v); if (d !== null) { ok = false; ${finding} } } }`,
    );
  }
  L.push("}");
  return L;
}

/** What a missing property's message says after its pointer. */
const REQUIRED_TAIL = " is required but missing; add it.";

/** `required`: each missing name, at the pointer it would have. */
function requiredLines(site: Site, required: string[]): string[] {
  const sp = site.sp;
  return required.map((r) => {
    const tail = "/" + escapePointer(r);
    const finding = {
      code: '"missing_required_argument"',
      expected: '"present"',
      received: '"missing"',
    };
    if (sp !== null) {
      const message = lit(`${where(sp + tail)}${REQUIRED_TAIL}`);
      return `if (!has(v, ${lit(r)})) ${failInline({ ...finding, path: lit(sp + tail), message })}`;
    }
    // the pointer made once, for the path and the message (never "", so where() would quote it: said here
    // where short, through where() where it cuts a long one)
    const fail = pushFinding({
      ...finding,
      path: "at",
      message: `(at.length > ${MAX_QUOTED_POINTER} ? W(at) + ${lit(REQUIRED_TAIL)} : '"' + at + ${
        lit('"' + REQUIRED_TAIL)
      })`,
    });
    return `if (!has(v, ${lit(r)})) { if (out === null) return false; ok = false; const at = p + ${
      lit(tail)
    }; ${fail} }`;
  });
}

/** Pointers of the object's properties: the one for `key`, as code and (when static) as a constant. */
function propertyPaths(site: Site) {
  const sp = site.sp;
  return {
    /** The property's pointer, as a JavaScript expression. */
    code: (key: string) =>
      sp === null ? `p + ${lit("/" + escapePointer(key))}` : lit(`${sp}/${escapePointer(key)}`),
    /** The property's pointer when known in advance, else null. */
    known: (key: string) => sp === null ? null : `${sp}/${escapePointer(key)}`,
  };
}

/** `properties` without `additionalProperties`: each declared property that is present. */
function declaredLines(site: Site, props: Obj, propKeys: string[]): string[] {
  const { e, ptr } = site;
  const paths = propertyPaths(site);
  const L: string[] = [];
  for (const key of propKeys) {
    const at = `${ptr}/properties/${escapePointer(key)}`;
    const report = e.reportFn(props[key], at, paths.known(key));
    if (report === "T") continue;
    const child = childCheck(e, {
      schema: props[key],
      ptr: at,
      report,
      value: `v[${lit(key)}]`,
      path: paths.code(key),
      named: true,
    });
    L.push(`if (has(v, ${lit(key)})) ${child}`);
  }
  return L;
}

/** The `default:` branch of the key loop: a key `additionalProperties` decides. */
function additionalLines(site: Site, propKeys: string[]): string[] {
  const { e, s, ptr, sp } = site;
  if (s.additionalProperties === false) {
    const allowed = propKeys.length > 0 ? propKeys.map((x) => JSON.stringify(x)).join(", ") : "none";
    const finding = pushFinding({
      code: '"unexpected_argument"',
      // where(at): the pointer in quotes, a long one cut (at is never empty)
      message: `W(at) + ${lit(` is not a parameter this tool accepts; remove it. Accepted: ${allowed}.`)}`,
      expected: lit(`one of ${allowed}`),
      received: "SS(key)",
      path: "at",
    });
    const at = sp === null ? 'p + "/" + ek' : `${lit(sp + "/")} + ek`;
    return [
      `if (out === null) return false; ok = false; { const ek = esc(key); const at = ${at}; ${finding} }`,
    ];
  }
  if (s.additionalProperties === true) return [];
  const at = `${ptr}/additionalProperties`;
  const report = e.reportFn(s.additionalProperties, at);
  return [
    childCheck(e, {
      schema: s.additionalProperties,
      ptr: at,
      report,
      value: "v[key]",
      path: 'p + "/" + esc(key)',
      named: false,
    }),
  ];
}

/**
 * `properties` with `additionalProperties`: every own key, by a switch over the declared names. A for-in over
 * own keys, in `Object.keys` order, allocates no key array per object reported (an invalid call on Deno:
 * 2-7% less time; Bun: the same).
 */
function keyLoopLines(site: Site, props: Obj, propKeys: string[]): string[] {
  const { e, ptr } = site;
  const paths = propertyPaths(site);
  const L = [
    "for (const key in v) {",
    "if (!own.call(v, key)) continue;",
    "switch (key) {",
  ];
  for (const key of propKeys) {
    const at = `${ptr}/properties/${escapePointer(key)}`;
    const report = e.reportFn(props[key], at, paths.known(key));
    L.push(`case ${lit(key)}:`);
    // a constant key: a named property load rather than a keyed one
    if (report !== "T") {
      L.push(
        childCheck(e, {
          schema: props[key],
          ptr: at,
          report,
          value: `v[${lit(key)}]`,
          path: paths.code(key),
          named: true,
        }),
      );
    }
    L.push("break;");
  }
  L.push("default:", ...additionalLines(site, propKeys), "}", "}");
  return L;
}

/** The object keywords, in one block for objects. */
function objectLines(site: Site): string[] {
  const o = objectKeywords(site.s);
  if (!hasObjectKeywords(site.s, o)) return [];
  const properties = site.s.additionalProperties === undefined
    ? declaredLines(site, o.props, o.propKeys)
    : keyLoopLines(site, o.props, o.propKeys);
  return [typeBlock("object", site.known), ...requiredLines(site, o.required), ...properties, "}"];
}

/**
 * The generated test that `anyOf` alternative `sub` fails on its type alone, as an expression giving the
 * expected type name or null: such an alternative reports exactly one type mismatch, so no finding needs
 * to be built for it only to be merged or dropped. "null" where the alternative is not known to start with
 * its type test.
 */
function typeMiss(sub: unknown): string {
  if (typeof sub !== "object" || sub === null || Array.isArray(sub)) return "null";
  const s = sub as Obj;
  if (!isPlainSchema(s) || s.nullable === true || s.type === undefined) return "null";
  const types = typesOf(s);
  return `(${typeCondition(types)}) ? null : ${lit(types.join(" or "))}`;
}

/**
 * The report of an `anyOf` none of whose alternatives (reporting functions `fs`) matched: what the
 * interpreter's reportAlternatives does, unrolled here so that each alternative is a direct call (a shared
 * helper calling back into every schema's functions would see them all at one call site). `misses[j]` is
 * {@link typeMiss} of alternative j. The finding itself is made by reportNoMatch, as the interpreter's is.
 */
function noMatchLines(fs: readonly string[], misses: readonly string[]): string {
  const L = ["{ let et = [], best = null, f, m;"];
  fs.forEach((f, j) => {
    const run = `f = []; ${f}(v, p, f); if (f.length > 0 && f[0].code === "argument_type_mismatch" && ` +
      `f[0].path === p) { if (et !== null) et.push(f[0].expected ?? ""); } else { et = null; ` +
      `if (best === null || f.length < best.length) best = f; }`;
    L.push(
      misses[j] === "null"
        ? run
        : `m = ${misses[j]}; if (m !== null) { if (et !== null) et.push(m); } else { ${run} }`,
    );
  });
  L.push("NM(et, best, v, p, out); }");
  return L.join(" ");
}

/** `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`. */
function combinatorLines(site: Site): string[] {
  const { e, s, ptr, sp } = site;
  const L: string[] = [];
  if (Array.isArray(s.allOf)) {
    s.allOf.forEach((sub, j) =>
      L.push(`if (!${e.reportFn(sub, `${ptr}/allOf/${j}`, sp)}(v, p, out)) ${SUBFAIL}`)
    );
  }
  if (Array.isArray(s.anyOf)) {
    // at the same pointer as this node: static alternatives where it is static, so their words are constants
    const fs = s.anyOf.map((sub, j) => e.reportFn(sub, `${ptr}/anyOf/${j}`, sp));
    L.push(
      `if (!(${
        fs.map((f) => `${f}(v, p, null)`).join(" || ")
      })) { if (out === null) return false; ok = false; ${noMatchLines(fs, s.anyOf.map(typeMiss))} }`,
    );
  }
  if (Array.isArray(s.oneOf)) {
    const fs = s.oneOf.map((sub, j) => e.reportFn(sub, `${ptr}/oneOf/${j}`));
    const count = fs.map((f) => `if (${f}(v, p, null)) m++;`).join(" ");
    L.push(`{ let m = 0; ${count} if (m !== 1) ${failWith(e.reporter({ oneOf: s.oneOf }, ptr))} }`);
  }
  if (s.not !== undefined) {
    const f = e.reportFn(s.not, `${ptr}/not`);
    L.push(`if (${f}(v, p, null)) ${failWith(e.reporter({ not: s.not }, ptr))}`);
  }
  if (s.if !== undefined) {
    const fi = e.reportFn(s.if, `${ptr}/if`);
    const ft = s.then !== undefined ? e.reportFn(s.then, `${ptr}/then`, sp) : "T";
    const fe = s.else !== undefined ? e.reportFn(s.else, `${ptr}/else`, sp) : "T";
    L.push(`if (${fi}(v, p, null) ? !${ft}(v, p, out) : !${fe}(v, p, out)) ${SUBFAIL}`);
  }
  return L;
}

/** `$ref`: the target's reporting function, at the same pointer. */
function refLines(site: Site): string[] {
  const { e, s, ptr, sp } = site;
  if (typeof s.$ref !== "string") return [];
  const target = e.resolve(s.$ref, `${ptr}/$ref`, s);
  return [`if (!${e.reportRef(target, sp)}(v, p, out)) ${SUBFAIL}`];
}

/**
 * The reporting function `name` for node `s` (at `ptr`; `sp` is the value's pointer when known in
 * advance). Keyword families come in the interpreter's order, so findings come in its order too.
 */
export function reportBody(e: Emit, name: string, s: Obj, ptr: string, sp: string | null): string {
  const site: Site = { e, s, ptr, sp, known: knownType(s) };
  const L = [`function ${name}(v, p, out) {`];
  if (s.nullable === true) L.push("if (v === null) return true;");
  L.push(...typeLines(e, s, sp), "let ok = true;");
  L.push(...enumConstLines(site), ...numberLines(site), ...stringLines(site), ...numericFormatLines(site));
  L.push(...arrayLines(site), ...objectLines(site), ...combinatorLines(site), ...refLines(site));
  L.push("return ok;", "}");
  return L.join("\n");
}
