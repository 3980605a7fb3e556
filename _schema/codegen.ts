/**
 * The code generator behind the JSON Schema engine: turns a schema the interpreter has already accepted
 * into specialised JavaScript (with `new Function`). Two sets of functions per schema node: a yes/no pass
 * (`vN(v)`: no pointers, no findings, the only code a valid value runs; see codegen_ok.ts) and a reporting
 * pass that builds findings inline with the interpreter's exact words (its own reporters for the rarer
 * keywords), so both paths say exactly the same thing (see codegen_report.ts). Reporting functions for
 * pointers known in advance (property paths from the root) are specialised per pointer (`sN`), so their
 * messages are constants; the others (`fN`) take the pointer as an argument. Nodes that use keywords this
 * generator does not specialise are delegated to the interpreter. Returns null where code generation is
 * forbidden (e.g. a CSP without `unsafe-eval`); the caller then uses the interpreter.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { isRecord } from "../_common/values.ts";
import { type Check, type RefTarget, type Tree, TRUE } from "./keywords.ts";
import { reportNoMatch } from "./checkers.ts";
import { compilePattern } from "./pattern.ts";
import {
  duplicateMessage,
  received,
  receivedString,
  reportExtra,
  show,
  showString,
  typeFail,
  where,
} from "./report.ts";
import { codePoints, deepEqual, firstDuplicate, isMultiple, safeTest, uniqueOk } from "./values.ts";
import { type Emit, isAnnotation, isPlainSchema } from "./codegen_js.ts";
import { okBody } from "./codegen_ok.ts";
import { reportBody } from "./codegen_report.ts";

/** The helpers generated code calls, by the names it calls them. */
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
  NM: reportNoMatch,
  DM: duplicateMessage,
});
let HELPERS: ReturnType<typeof helpers> | null = null;

/** At most this many static reporters (`sN`) per schema; beyond, reporters take the pointer. */
const MAX_STATIC = 400;
/** Static reporters serve pointers of at most this many segments. */
const MAX_STATIC_DEPTH = 12;

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

/**
 * The state of one generation: the constants the code refers to, the functions emitted so far, and the
 * names already given to schema nodes (so each node is emitted once per pass, and recursion ends).
 */
class Emitter implements Emit {
  /** Values the generated code reads as `cN`. */
  readonly consts: unknown[] = [];
  /** The generated functions, in the order they were completed. */
  readonly bodies: string[] = [];
  #tree: Tree;
  /** Dynamic reporting functions (`fN`, or an interpreter check) by node. */
  #reportNames = new Map<unknown, string>();
  #reportCount = 0;
  /** Static reporting functions (`sN`) by node, then by pointer. */
  #statics = new Map<unknown, Map<string, string>>();
  #staticCount = 0;
  /** Yes/no functions (`vN`) by node. */
  #okNames = new Map<unknown, string>();
  #okCount = 0;
  /** Pattern loops (`pN`) by regex source. */
  #patterns = new Map<string, string>();

  /** Starts a generation over the interpreter's `tree`. */
  constructor(tree: Tree) {
    this.#tree = tree;
  }

  /** Whether formats are asserted. */
  get assertFormats(): boolean {
    return this.#tree.assertFormats;
  }

  /** The name of a generated constant holding `value`. */
  constant(value: unknown): string {
    this.consts.push(value);
    return `c${this.consts.length - 1}`;
  }

  /** A reporter is the interpreter's check for a one-keyword schema: same messages on both paths. */
  reporter(schema: unknown, ptr: string): string {
    return this.constant(this.#tree.node(schema, ptr));
  }

  /** Resolves a `$ref` found in `holder`. */
  resolve(ref: string, at: string, holder: object): RefTarget {
    return this.#tree.resolve(ref, at, holder);
  }

  /** A simple anchored pattern becomes a character loop of its own; any other stays a regex. */
  matches(re: RegExp): string {
    let name = this.#patterns.get(re.source);
    if (name === undefined) {
      const loop = re.flags === "u" ? compilePattern(re.source) : null;
      if (loop === null) return `test(${this.constant(re)}, v)`;
      name = `p${this.#patterns.size}`;
      this.#patterns.set(re.source, name);
      this.bodies.push(`function ${name}(v) {\n${loop}\n}`);
    }
    return `${name}(v)`;
  }

  /**
   * The reporting function for `schema`. Dynamic ones take the value's JSON Pointer as `p`; static ones
   * serve one pointer `sp` known at generation time (a property path from the root, no array index), so
   * their messages and child pointers are string constants and a finding costs one object.
   */
  reportFn(schema: unknown, ptr: string, sp: string | null = null): string {
    if (schema === true) return "T";
    const target = this.#forwarded(schema, ptr);
    if (target !== null) return this.reportFn(target.schema, target.ptr, sp);
    if (sp !== null && isRecord(schema)) {
      const name = this.#staticReportFn(schema, ptr, sp);
      if (name !== null) return name;
    }
    const known = this.#reportNames.get(schema);
    if (known) return known;
    if (!isRecord(schema)) return this.reporter(schema, ptr);
    if (!isPlainSchema(schema)) {
      const name = this.reporter(schema, ptr);
      this.#reportNames.set(schema, name);
      return name;
    }
    const name = `f${this.#reportCount++}`;
    this.#reportNames.set(schema, name);
    this.bodies.push(reportBody(this, name, schema, ptr, null));
    return name;
  }

  /** The static reporter of `schema` at `sp`, or null where none is made (too many, too deep, not plain). */
  #staticReportFn(schema: Record<string, unknown>, ptr: string, sp: string): string | null {
    if (this.#staticCount >= MAX_STATIC || sp.split("/").length > MAX_STATIC_DEPTH) return null;
    let bySp = this.#statics.get(schema);
    if (!bySp) this.#statics.set(schema, bySp = new Map());
    const hit = bySp.get(sp);
    if (hit) return hit;
    if (!isPlainSchema(schema)) return null;
    const name = `s${this.#staticCount++}`;
    bySp.set(sp, name);
    this.bodies.push(reportBody(this, name, schema, ptr, sp));
    return name;
  }

  /**
   * Where `schema` (at `ptr`) asserts nothing but its `$ref` (annotations and definitions aside), the
   * target, whose functions then serve it too: no function that only calls another. Null for any other node.
   * Following such nodes ends: they are in-place steps, and `compile` refuses a schema whose in-place steps
   * loop before it generates any code.
   */
  #forwarded(schema: unknown, ptr: string): RefTarget | null {
    if (!isRecord(schema) || typeof schema.$ref !== "string") return null;
    const forwards = Object.keys(schema).every((key) =>
      key === "$ref" || key === "$defs" || key === "definitions" || isAnnotation(key)
    );
    return forwards ? this.resolve(schema.$ref, `${ptr}/$ref`, schema) : null;
  }

  /** The yes/no function for `schema`: the interpreter's check where the node is not plain. */
  okFn(schema: unknown, ptr: string): string {
    if (schema === true) return "T";
    const target = this.#forwarded(schema, ptr);
    if (target !== null) return this.okFn(target.schema, target.ptr);
    const known = this.#okNames.get(schema);
    if (known) return known;
    const name = `v${this.#okCount++}`;
    this.#okNames.set(schema, name);
    if (!isRecord(schema) || !isPlainSchema(schema)) {
      this.bodies.push(`function ${name}(v) { return ${this.reporter(schema, ptr)}(v, "", null); }`);
      return name;
    }
    this.bodies.push(okBody(this, name, schema, ptr));
    return name;
  }
}

/** Generates a specialised check for `root`, or null when code generation is unavailable or fails. */
export function generate(root: unknown, tree: Tree): Check | null {
  const F = codegenAllowed();
  if (!F) return null;
  const e = new Emitter(tree);
  try {
    HELPERS ??= helpers();
    const reportName = e.reportFn(root, "");
    const staticName = e.reportFn(root, "", "");
    const okName = e.okFn(root, "");
    e.bodies.push(
      `function root(v, p, out) { return out === null ? ${okName}(v) : p === "" ? ${staticName}(v, "", out) : ${reportName}(v, p, out); }`,
    );
    const src = [
      `const { ${Object.keys(HELPERS).join(", ")} } = H;`,
      ...e.consts.map((_, i) => `const c${i} = K[${i}];`),
      ...e.bodies,
      "return root;",
    ].join("\n");
    return new F("K", "H", src)(e.consts, HELPERS) as Check;
  } catch {
    return null;
  }
}
