/**
 * The code generator behind the JSON Schema engine: turns a schema the interpreter has already accepted
 * into specialised JavaScript (with `new Function`). Two sets of functions per schema node: a yes/no pass
 * (`vN(v)`: no pointers, no findings, the only code a valid value runs; see codegen_ok.ts) and a reporting
 * pass that builds findings inline with the interpreter's exact words (its own reporters for the rarer
 * keywords), so both paths say exactly the same thing (see codegen_report.ts). Reporting functions for
 * pointers known in advance (property paths from the root) are specialised per pointer (`sN`), so their
 * messages are constants; the others (`fN`) take the pointer as an argument. The reporting functions are
 * generated when a value first fails: compiling a tool costs about half as much, and a valid value runs the
 * same code. Nodes that use keywords this generator does not specialise are delegated to the interpreter.
 * Returns null where code generation is forbidden (e.g. a CSP without `unsafe-eval`); the caller then uses
 * the interpreter.
 *
 * @module
 */
import { budget, overBudget, REF_STEPS } from "./refs.ts";
import { escapePointer } from "../_common/pointer.ts";
import { isRecord } from "../_common/values.ts";
import { type Check, type RefTarget, type Tree, TRUE } from "./keywords.ts";
import { reportNoMatch, restOfItems } from "./checkers.ts";
import { compilePattern } from "./pattern.ts";
import {
  countTable,
  duplicateMessage,
  received,
  receivedString,
  reportExtra,
  show,
  showString,
  typeFail,
  typeFailAfter,
  typeFailAt,
  where,
} from "./report.ts";
import { codePoints, deepEqual, firstDuplicate, isMultiple, safeTest, uniqueOk } from "./values.ts";
import { type Emit, isAnnotation, isPlainSchema } from "./codegen_js.ts";
import { okBody } from "./codegen_ok.ts";
import { reportBody } from "./codegen_report.ts";
import { fellBack } from "./fallbacks.ts";

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
  // for-in with this test, not a key array per object: engines optimise hasOwnProperty.call inside for-in
  own: Object.prototype.hasOwnProperty,
  W: where,
  R: received,
  S: show,
  // the same words for values whose type the generated code has just tested: no type dispatch
  SS: showString,
  RS: receivedString,
  TF: typeFail,
  TFS: typeFailAt,
  TFA: typeFailAfter,
  // the words of small counts ("0 characters", "2 items"), read rather than built per finding
  NC: countTable("character"),
  NI: countTable("item"),
  dup: firstDuplicate,
  rest: restOfItems,
  NM: reportNoMatch,
  DM: duplicateMessage,
  B: budget,
  OVER: overBudget,
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
  } catch (error) {
    fellBack("probe", error);
    return null;
  }
}

/**
 * The state of one generation: the constants the code refers to, the functions emitted and not yet linked,
 * those linked, and the names already given to schema nodes (so each node is emitted once per pass, and
 * recursion ends). It is linked in parts (see {@link generate}): each part sees every constant and every
 * function of the parts before it.
 */
class Emitter implements Emit {
  /** Values the generated code reads as `cN`. */
  readonly consts: unknown[] = [];
  /** The functions emitted since the last link, in the order they were completed, and their names. */
  #bodies: string[] = [];
  #names: string[] = [];
  /** The functions linked so far, by name. */
  #linked: Record<string, unknown> = {};
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
  /** Functions (`bN`) that spend a `$ref` step and call the function named by the key. */
  #counted = new Map<string, string>();

  /** Starts a generation over the interpreter's `tree`. */
  constructor(tree: Tree) {
    this.#tree = tree;
  }

  /** Whether formats are asserted. */
  get assertFormats(): boolean {
    return this.#tree.assertFormats;
  }

  /** Adds the generated function `body`, named `name`, to the next link. */
  emit(name: string, body: string): void {
    this.#bodies.push(body);
    this.#names.push(name);
  }

  /**
   * Compiles the functions emitted since the last link (with `F`, the runtime's `Function`), with the
   * helpers, every constant and every function linked before in scope, and returns what each of `entries`
   * names there (a function, a constant or a helper: the names `okFn` and `reportFn` give).
   */
  link(F: FunctionConstructor, entries: readonly string[]): unknown[] {
    const earlier = Object.keys(this.#linked);
    const src = [
      `const { ${Object.keys(HELPERS!).join(", ")} } = H;`,
      ...this.consts.map((_, i) => `const c${i} = K[${i}];`),
      ...(earlier.length > 0 ? [`const { ${earlier.join(", ")} } = D;`] : []),
      ...this.#bodies,
      `return [{ ${this.#names.join(", ")} }, [${entries.join(", ")}]];`,
    ].join("\n");
    const [made, values] = new F("K", "H", "D", src)(this.consts, HELPERS, this.#linked) as [
      Record<string, unknown>,
      unknown[],
    ];
    Object.assign(this.#linked, made);
    this.#bodies = [];
    this.#names = [];
    return values;
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

  /** The yes/no function for a `$ref` target, behind a step of the check's budget (see refs.ts). */
  okRef(target: RefTarget): string {
    return this.#spending(this.okFn(target.schema, target.ptr), "v");
  }

  /** The reporting function for a `$ref` target, behind a step of the check's budget. */
  reportRef(target: RefTarget, sp: string | null): string {
    return this.#spending(this.reportFn(target.schema, target.ptr, sp), "v, p, out");
  }

  /** A function that spends one `$ref` step, then calls `name` with `params`. */
  #spending(name: string, params: string): string {
    if (name === "T") return name;
    let spends = this.#counted.get(name);
    if (spends === undefined) {
      spends = `b${this.#counted.size}`;
      this.#counted.set(name, spends);
      this.emit(
        spends,
        `function ${spends}(${params}) { if (--B.left < 0) OVER(); return ${name}(${params}); }`,
      );
    }
    return spends;
  }

  /** A simple anchored pattern becomes a character loop of its own; any other stays a regex. */
  matches(re: RegExp): string {
    let name = this.#patterns.get(re.source);
    if (name === undefined) {
      const loop = re.flags === "u" ? compilePattern(re.source) : null;
      if (loop === null) return `test(${this.constant(re)}, v)`;
      name = `p${this.#patterns.size}`;
      this.#patterns.set(re.source, name);
      this.emit(name, `function ${name}(v) {\n${loop}\n}`);
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
    if (target !== null) return this.reportRef(target, sp);
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
    this.emit(name, reportBody(this, name, schema, ptr, null));
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
    this.emit(name, reportBody(this, name, schema, ptr, sp));
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
    if (target !== null) return this.okRef(target);
    const known = this.#okNames.get(schema);
    if (known) return known;
    const name = `v${this.#okCount++}`;
    this.#okNames.set(schema, name);
    if (!isRecord(schema) || !isPlainSchema(schema)) {
      this.emit(name, `function ${name}(v) { return ${this.reporter(schema, ptr)}(v, "", null); }`);
      return name;
    }
    this.emit(name, okBody(this, name, schema, ptr));
    return name;
  }
}

/** How each generated check gets its reporting function for a value at the root ({@link rootReporter}). */
const ROOT_REPORTERS = new WeakMap<Check, (which: "fixed" | "dynamic") => Check>();

/**
 * The reporting function behind `check` for a value at the root (`p` ""), made now if it was not: a caller
 * that reports many values (the validator) calls it directly, not through the check's entry point; `check`
 * itself where it was not generated here (the interpreter's).
 */
export function rootReporter(check: Check): Check {
  return ROOT_REPORTERS.get(check)?.("fixed") ?? check;
}

/**
 * Generates a specialised check for the document `schema`, or null when code generation is unavailable or
 * fails. The yes/no functions are generated at once; the reporting ones, most of the code, only when a value
 * first fails (most values pass: a tool that is never called wrongly never pays for them), in a second link
 * that calls the first's. Should that fail, `fallback` (the interpreter's check, in the same words) reports.
 */
export function generate(schema: unknown, tree: Tree, fallback: Check): Check | null {
  const F = codegenAllowed();
  if (!F) return null;
  const e = new Emitter(tree);
  // The reporting functions of the root, for a value at the root and for one with a pointer of its own, once
  // made (null before). The entry point calls whichever it needs only once it is made (`reporter` returns it),
  // so its call sites never see another function and stay as cheap as when everything was generated at once.
  const reporters: { fixed: Check | null; dynamic: Check | null } = { fixed: null, dynamic: null };
  const reporter = (which: "fixed" | "dynamic"): Check => {
    if (reporters[which] !== null) return reporters[which];
    try {
      const [dynamic, fixed] = e.link(F, [e.reportFn(schema, ""), e.reportFn(schema, "", "")]) as [
        Check,
        Check,
      ];
      reporters.dynamic = dynamic;
      reporters.fixed = fixed;
    } catch (error) {
      fellBack("report", error, schema);
      reporters.dynamic = reporters.fixed = fallback;
    }
    return reporters[which]!;
  };
  try {
    HELPERS ??= helpers();
    // The entry point is generated with the yes/no functions: a value that passes runs only generated code.
    const ok = e.okFn(schema, "");
    const r = e.constant(reporters);
    const m = e.constant(reporter);
    // (`reporter`'s own test written inline, so that a failure after the first costs no call more)
    e.emit(
      "root",
      `function root(v, p, out) { B.left = ${REF_STEPS}; return out === null ? ${ok}(v) : p === "" ? ` +
        `(${r}.fixed ?? ${m}("fixed"))(v, "", out) : (${r}.dynamic ?? ${m}("dynamic"))(v, p, out); }`,
    );
    const root = e.link(F, ["root"])[0] as Check;
    ROOT_REPORTERS.set(root, reporter);
    return root;
  } catch (error) {
    fellBack("check", error, schema);
    return null;
  }
}
