/**
 * A string visitor generated per schema: for a value already valid against the schema, calls a test on
 * every string the value can hold, property names it does not declare included, and answers whether the test
 * said yes to any. Where the schema bounds
 * a position (a declared type, `enum`, `const`, `properties`, `additionalProperties`, `items`), the
 * visitor follows it (reading `v.city` directly where no undeclared key can be present) and skips what
 * cannot be a string (a valid `integer` is no string); anywhere else (`patternProperties`, a node bounded
 * only by `anyOf`, ...) it walks the value as the generic walk does. It may visit more strings than the
 * value holds (an inherited property, say), never fewer, so "no" from the visitor is "no" from the walk.
 *
 * Sound only for valid values: every assertion keyword of JSON Schema only narrows what is valid, except
 * OpenAPI `nullable`, which admits null (never a string), so the keywords read here bound every valid
 * value whatever else the node says (`anyOf`, `allOf`, ... only narrow further).
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { heldIndices, isRecord } from "../_common/values.ts";
import { fellBack } from "./fallbacks.ts";
import { membersAsSent } from "./values.ts";
import { RefResolver } from "./refs.ts";

/** Answers whether `test` is true of some string in `value` (which must be valid against the schema). */
export type StringVisitor = (value: unknown, test: (s: string) => boolean) => boolean;

/** Options for {@link stringVisitor}. */
export interface StringVisitorOptions {
  /**
   * Strings the caller's test is false of without asking (the schema's own literals, for the scan): a node
   * whose every valid string is one of them (an `enum` or `const` of such strings, an `anyOf`/`oneOf` of such
   * nodes) is not visited.
   */
  skips?: (s: string) => boolean;
  /**
   * Whether the test is false of every string of at most `maxLength` characters of `alphabet` (ASCII): a node
   * whose valid strings the schema confines so (an asserted `format: "date"`, a `pattern` of one character
   * class, see {@link confinement}) does not have its strings visited.
   */
  clears?: (alphabet: string, maxLength: number) => boolean;
  /** Whether `format` is asserted, as the schema was compiled (default true). */
  assertFormats?: boolean;
}

/** A pattern of one character class of plain ASCII (letters, digits, a few marks, ranges), repeated. */
const ONE_CLASS = /^\^\[([A-Za-z0-9 _.:,+@\/=-]+)\](?:\{(\d+)(?:,(\d*))?\}|([+*]))\$$/;

/**
 * The alphabet (ASCII) and the greatest length to which a schema node confines its valid strings, or null
 * when it does not (or this cannot tell): `format: "date"` where formats are asserted (digits and "-", 10
 * long; `"ipv4"`: digits and ".", 15), or a `pattern` `^[...]{n,m}$` (or `{n}`, `+`, `*`; with `maxLength` for an open bound). A node with
 * a `$ref` is not read (older drafts ignore the keywords beside it).
 */
function confinement(
  s: Record<string, unknown>,
  assertFormats: boolean,
): { alphabet: string; maxLength: number } | null {
  if (s.$ref !== undefined || s.$dynamicRef !== undefined) return null;
  if (assertFormats && s.format === "date") return { alphabet: "0123456789-", maxLength: 10 };
  if (assertFormats && s.format === "ipv4") return { alphabet: "0123456789.", maxLength: 15 };
  const m = typeof s.pattern === "string" ? ONE_CLASS.exec(s.pattern) : null;
  if (m === null) return null;
  // "{n}" bounds the length by n, "{n,m}" by m; "{n,}", "+" and "*" leave it to maxLength
  const fromPattern = m[2] === undefined
    ? Infinity
    : m[3] === undefined
    ? Number(m[2])
    : m[3] === ""
    ? Infinity
    : Number(m[3]);
  const fromKeyword = typeof s.maxLength === "number" && Number.isInteger(s.maxLength) && s.maxLength >= 0
    ? s.maxLength
    : Infinity;
  const maxLength = Math.min(fromPattern, fromKeyword);
  if (maxLength === Infinity) return null;
  // the engine itself says which ASCII characters the class holds (plain ASCII matches nothing else)
  const one = new RegExp(`^[${m[1]}]$`, "u");
  let alphabet = "";
  for (let c = 0; c < 0x80; c++) if (one.test(String.fromCharCode(c))) alphabet += String.fromCharCode(c);
  return { alphabet, maxLength };
}

/**
 * The generic walk: every string in `v`, own enumerable keys and array items, depth first; the keys
 * themselves too (a name the schema does not declare is the model's text).
 */
function anyString(v: unknown, test: (s: string) => boolean): boolean {
  if (typeof v === "string") return test(v);
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x === undefined && !(i in v)) return heldIndices(v, i + 1).some((j) => anyString(v[j], test)); // a hole
      if ((typeof x === "string" || typeof x === "object") && anyString(x, test)) return true;
    }
    return false;
  }
  for (const key in v) {
    if (!HAS_OWN.call(v, key)) continue;
    if (test(key)) return true;
    const x = (v as Record<string, unknown>)[key];
    if ((typeof x === "string" || typeof x === "object") && anyString(x, test)) return true;
  }
  return false;
}

const HAS_OWN = Object.prototype.hasOwnProperty;
/** The body of a visitor that asks the test of a string it is given (see `Visitors.#visit`). */
const PLAIN_STRING = 'if (typeof v === "string") return t(v);';
/** The body of a visitor for an `enum` or `const` of scalars: the same test in one statement. */
const PLAIN_SCALAR = 'return typeof v === "string" && t(v);';
const SAFE_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** At most this many generated node functions; past it, nodes take the generic walk. */
const MAX_NODES = 500;
/** The JSON types that hold no string. */
const STRINGLESS = new Set(["integer", "number", "boolean", "null"]);

/** A direct property read (`v.name`) is safe when no prototype property could shadow the name. */
const direct = (key: string) => SAFE_NAME.test(key) && !(key in Object.prototype);
const lit = (v: unknown): string => JSON.stringify(v);

/** True for an `enum` or `const` whose every valid value is a scalar. */
function scalarOnly(s: Record<string, unknown>): boolean {
  const prim = (x: unknown) => typeof x !== "object" || x === null;
  return (Array.isArray(s.enum) && membersAsSent(s.enum).every(prim)) ||
    (Object.hasOwn(s, "const") && prim(s.const));
}

/** The generation: one function per schema node (`wN(v, t)`), named once so `$ref` cycles end. */
class Visitors {
  readonly bodies: string[] = [];
  #names = new Map<unknown, string>();
  #refs: RefResolver;
  #skips: ((s: string) => boolean) | undefined;
  #clears: ((alphabet: string, maxLength: number) => boolean) | undefined;
  #assertFormats: boolean;
  /** The nodes whose alternatives are being examined (see `#onlySkipped`). */
  #examining = new Set<unknown>();
  /** `#cleared` by node: `#onlySkipped` and `#body` both ask it of a string node (a pattern costs a RegExp). */
  #clearedNodes = new Map<Record<string, unknown>, boolean>();
  /**
   * The visitors that only ask the test of a string (`typeof v === "string" && t(v)`): their callers test
   * inline instead of calling them, one call less per string (which Bun's JIT charges for).
   */
  #plain = new Set<string>();

  /** Starts a generation for the schema document `root`, with the options of {@link stringVisitor}. */
  constructor(root: unknown, options: StringVisitorOptions) {
    this.#refs = new RefResolver(root);
    this.#skips = options.skips;
    this.#clears = options.clears;
    this.#assertFormats = options.assertFormats !== false;
  }

  /** True when the test is false of every valid string of `s` (see {@link confinement}). */
  #cleared(s: Record<string, unknown>): boolean {
    if (this.#clears === undefined) return false;
    let cleared = this.#clearedNodes.get(s);
    if (cleared === undefined) {
      const c = confinement(s, this.#assertFormats);
      cleared = c !== null && this.#clears(c.alphabet, c.maxLength);
      this.#clearedNodes.set(s, cleared);
    }
    return cleared;
  }

  /**
   * The name of the visitor for `schema` (at schema pointer `ptr`): "A" for the generic walk, "N" where no
   * valid value is a string or holds one.
   */
  name(schema: unknown, ptr: string): string {
    if (!isRecord(schema)) return "A";
    const types = Array.isArray(schema.type) ? membersAsSent(schema.type) : [schema.type];
    if (schema.type !== undefined && types.every((t) => STRINGLESS.has(t as string))) return "N";
    const known = this.#names.get(schema);
    if (known !== undefined) return known;
    if (this.#names.size >= MAX_NODES) return "A";
    if (this.#onlySkipped(schema, ptr)) return "N";
    const name = `w${this.#names.size}`;
    this.#names.set(schema, name);
    const body = this.#body(schema, ptr);
    if (
      body.length === 1 ? body[0] === PLAIN_SCALAR : body[0] === PLAIN_STRING && body[1] === "return false;"
    ) this.#plain.add(name);
    this.bodies.push(`function ${name}(v, t) {\n${body.join("\n")}\n}`);
    return name;
  }

  /**
   * The expression that is true when the test is true of a string the visitor named `f` finds in `x` (an
   * expression read once): the test inline for a plain visitor (`y`, declared by the caller, holds the
   * value), else the call.
   */
  #visit(f: string, x: string, y: string): string {
    return this.#plain.has(f) ? `(typeof (${y} = ${x}) === "string" && t(${y}))` : `${f}(${x}, t)`;
  }

  /**
   * True when the test need not be asked of any string a value valid against `s` can be or hold: `s` admits
   * only strings (and stringless scalars) that the schema confines to an alphabet the test clears, or is an
   * `enum` or `const` of scalars whose strings the test skips, or every alternative of its `anyOf` (or
   * `oneOf`) is such a node or holds no string (a valid value is valid against one of them; the node's other
   * keywords only narrow).
   */
  #onlySkipped(s: Record<string, unknown>, ptr: string): boolean {
    if (s.type !== undefined && this.#cleared(s)) {
      const types = Array.isArray(s.type) ? membersAsSent(s.type) : [s.type];
      if (types.every((t) => t === "string" || STRINGLESS.has(t as string))) return true;
    }
    const skips = this.#skips;
    if (skips === undefined) return false;
    if (scalarOnly(s)) {
      const values = Array.isArray(s.enum) ? [...membersAsSent(s.enum)] : [];
      if (Object.hasOwn(s, "const")) values.push(s.const);
      const skipped = (x: unknown) => typeof x === "string" ? skips(x) : typeof x !== "object" || x === null;
      return values.every(skipped);
    }
    // a node met again inside its own alternatives (an object cycle) is not claimed
    if (this.#examining.has(s)) return false;
    this.#examining.add(s);
    try {
      for (const k of ["anyOf", "oneOf"]) {
        const alts = s[k];
        if (Array.isArray(alts) && alts.length > 0) {
          if (alts.every((alt, i) => this.name(alt, `${ptr}/${k}/${i}`) === "N")) return true;
        }
      }
      return false;
    } finally {
      this.#examining.delete(s);
    }
  }

  /** The statements of one node's visitor. */
  #body(s: Record<string, unknown>, ptr: string): string[] {
    if (scalarOnly(s)) return [PLAIN_SCALAR];
    if (s.type === undefined) {
      if (typeof s.$ref !== "string") return ["return A(v, t);"];
      let target;
      try {
        target = this.#refs.resolve(s.$ref, `${ptr}/$ref`, s);
      } catch {
        return ["return A(v, t);"];
      }
      const f = this.name(target.schema, target.ptr);
      return [f === "N" ? "return false;" : `return ${f}(v, t);`];
    }
    const types = Array.isArray(s.type) ? membersAsSent(s.type) : [s.type];
    const L: string[] = [];
    if (types.includes("string")) {
      L.push(this.#cleared(s) ? 'if (typeof v === "string") return false;' : PLAIN_STRING);
    }
    if (types.includes("array")) L.push(`if (Array.isArray(v)) { ${this.#array(s, ptr)} }`);
    if (types.includes("object")) {
      L.push(`if (typeof v === "object" && v !== null && !Array.isArray(v)) { ${this.#object(s, ptr)} }`);
    }
    // a type name this module does not know may admit anything: walk it
    const unknown = types.some((t) =>
      t !== "string" && t !== "array" && t !== "object" && !STRINGLESS.has(t as string)
    );
    L.push(unknown ? "return A(v, t);" : "return false;");
    return L;
  }

  /** The statements for an array: its items, by the `items` schema where nothing else applies. */
  #array(s: Record<string, unknown>, ptr: string): string {
    if (!isRecord(s.items) || s.prefixItems !== undefined) return "return A(v, t);";
    const f = this.name(s.items, `${ptr}/items`);
    if (f === "N") return "return false;";
    return `let y; for (let i = 0; i < v.length; i++) if (${
      this.#visit(f, "v[i]", "y")
    }) return true; return false;`;
  }

  /**
   * The statements for an object: where no undeclared key can be present, its declared properties read
   * directly; else each own key, a declared one by its schema, any other by `additionalProperties`.
   */
  #object(s: Record<string, unknown>, ptr: string): string {
    if (s.patternProperties !== undefined) return "return A(v, t);";
    const props = isRecord(s.properties) ? s.properties : {};
    if (s.additionalProperties !== false) return this.#keyLoop(s, props, ptr);
    const L = ["let x;"];
    for (const key of Object.keys(props)) {
      const f = this.name(props[key], `${ptr}/properties/${escapePointer(key)}`);
      if (f === "N") continue;
      // an inherited value read directly is visited too: more strings, never fewer
      // (a plain visitor's inline test is false of undefined, as the call is)
      L.push(
        this.#plain.has(f)
          ? direct(key)
            ? `if (typeof (x = v.${key}) === "string" && t(x)) return true;`
            : `if (HAS.call(v, ${lit(key)}) && ${this.#visit(f, `v[${lit(key)}]`, "x")}) return true;`
          : direct(key)
          ? `if ((x = v.${key}) !== undefined && ${f}(x, t)) return true;`
          : `if (HAS.call(v, ${lit(key)}) && ${f}(v[${lit(key)}], t)) return true;`,
      );
    }
    L.push("return false;");
    return L.join(" ");
  }

  /** The statements for an object that may hold undeclared keys: every own key, in a switch. */
  #keyLoop(s: Record<string, unknown>, props: Record<string, unknown>, ptr: string): string {
    const other = s.additionalProperties === undefined
      ? "A"
      : this.name(s.additionalProperties, `${ptr}/additionalProperties`);
    const L = ["let x; for (const key in v) { if (!HAS.call(v, key)) continue; switch (key) {"];
    for (const key of Object.keys(props)) {
      const f = this.name(props[key], `${ptr}/properties/${escapePointer(key)}`);
      L.push(
        f === "N"
          ? `case ${lit(key)}: break;`
          : `case ${lit(key)}: if (${this.#visit(f, "v[key]", "x")}) return true; break;`,
      );
    }
    // an undeclared key is the model's text: the test is asked of it too
    L.push(
      other === "N"
        ? "default: if (t(key)) return true; } }"
        : `default: if (t(key) || ${other}(v[key], t)) return true; } }`,
      "return false;",
    );
    return L.join(" ");
  }
}

/**
 * The string visitor of `schema`, or null where code generation is unavailable or fails (the caller then
 * walks every value).
 *
 * @example Strings a valid value can hold, without walking what cannot be one
 * ```ts
 * import assert from "node:assert/strict";
 * import { stringVisitor } from "./strings.ts";
 *
 * const visit = stringVisitor({
 *   type: "object",
 *   properties: { city: { type: "string" }, days: { type: "integer" } },
 *   additionalProperties: false,
 * })!;
 * const seen: string[] = [];
 * assert.equal(visit({ city: "Oslo", days: 3 }, (s) => (seen.push(s), false)), false);
 * assert.deepEqual(seen, ["Oslo"]);
 * assert.equal(visit({ city: "Oslo" }, (s) => s === "Oslo"), true);
 * ```
 */
export function stringVisitor(schema: unknown, options: StringVisitorOptions = {}): StringVisitor | null {
  try {
    const F = globalThis.Function;
    const g = new Visitors(schema, options);
    const root = g.name(schema, "");
    const src = [...g.bodies, `return ${root === "N" ? "() => false" : root};`].join("\n");
    // N is never called where it is spelled out; defined anyway, so a slip cannot throw at run time
    return new F("A", "HAS", "N", src)(anyString, HAS_OWN, () => false) as StringVisitor;
  } catch (error) {
    fellBack("strings", error, schema);
    return null;
  }
}
