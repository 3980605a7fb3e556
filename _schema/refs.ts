/**
 * The `$ref` side of the JSON Schema engine. The resolver: base URIs (`$id`) and anchors (`$anchor`) are
 * collected once per document, so a reference resolves the way 2020-12 says, within this one document. And
 * the work a check may do on one value: a schema can share subschemas through `$ref`, so a small hostile one
 * (each definition an `anyOf` of two references to the next) makes a check take 2^depth steps. Every `$ref`
 * step taken spends one unit; a check that runs out throws {@link CheckTooCostly}, which callers turn into a
 * finding. A schema without `$ref` does work bounded by its size times the value's, and spends nothing. (The
 * budget was a module of its own: one file fewer to load.)
 *
 * @module
 */
import { unescapePointer } from "../_common/pointer.ts";
import { eachHeld, isRecord } from "../_common/values.ts";
import { type RefTarget, SchemaError } from "./keywords.ts";

/** The base URI of a document that declares no `$id` of its own. */
const DEFAULT_BASE = "https://toolguard.invalid/schema.json";

/** Keywords holding an object of subschemas. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions"] as const;
/** Keywords holding one subschema. */
const SCHEMA_SLOTS = ["additionalProperties", "items", "not", "if", "then", "else", "propertyNames"] as const;
/** Keywords holding an array of subschemas. */
const SCHEMA_LISTS = ["prefixItems", "allOf", "anyOf", "oneOf", "items"] as const;

/** `u` without its fragment. */
function noFragment(u: string): string {
  const h = u.indexOf("#");
  return h < 0 ? u : u.slice(0, h);
}

/** Resolves `$ref` values within one schema document. */
export class RefResolver {
  /** The base URI in force at each schema object. */
  #bases = new Map<object, string>();
  /** Each schema resource by its base URI (the document itself, and every `$id`). */
  #resources = new Map<string, unknown>();
  /** Each `$anchor` by `base#name`. */
  #anchors = new Map<string, unknown>();

  /** Collects the base URIs and anchors of `root`. */
  constructor(root: unknown) {
    this.#resources.set(DEFAULT_BASE, root);
    this.#scan(root, DEFAULT_BASE, 0);
  }

  /** Records `s` and its subschemas under `base`, which an `$id` of their own replaces. */
  #scan(s: unknown, base: string, depth: number): void {
    if (!isRecord(s) || depth > 1000 || this.#bases.has(s)) return;
    if (typeof s.$id === "string") {
      try {
        base = noFragment(new URL(s.$id, base).href);
      } catch {
        // an unparsable $id leaves the base as it was
      }
      this.#resources.set(base, s);
    }
    this.#bases.set(s, base);
    if (typeof s.$anchor === "string") this.#anchors.set(`${base}#${s.$anchor}`, s);
    for (const k of SCHEMA_MAPS) {
      const m = s[k];
      if (isRecord(m)) { for (const sub of Object.values(m)) this.#scan(sub, base, depth + 1); }
    }
    for (const k of SCHEMA_SLOTS) this.#scan(s[k], base, depth + 1);
    for (const k of SCHEMA_LISTS) {
      const a = s[k];
      // (by what it holds: a sparse list built in code may be 2^32-1 long; a hole holds no schema)
      if (Array.isArray(a)) eachHeld(a, (sub) => this.#scan(sub, base, depth + 1));
    }
  }

  /**
   * The schema `ref` (found in `holder`, at schema pointer `at`) points at. Throws {@link SchemaError} for a
   * reference that is malformed or leads outside this document or to nothing.
   */
  resolve(ref: string, at: string, holder: object): RefTarget {
    let full: string;
    try {
      full = new URL(ref, this.#bases.get(holder) ?? DEFAULT_BASE).href;
    } catch {
      throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} is not a valid URI reference`);
    }
    const h = full.indexOf("#");
    const doc = h < 0 ? full : full.slice(0, h);
    const target = this.#resources.get(doc);
    if (target === undefined) {
      throw new SchemaError(
        "$ref",
        at,
        `$ref "${ref}" at ${at} points outside this schema; only references within it are supported`,
      );
    }
    let frag: string;
    try {
      frag = decodeURIComponent(h < 0 ? "" : full.slice(h + 1));
    } catch {
      throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} is not a valid URI fragment`);
    }
    if (frag !== "" && !frag.startsWith("/")) return this.#anchor(doc, frag, ref, at);
    return { schema: walk(target, frag, ref, at), ptr: frag };
  }

  /** The schema named by anchor `name` in document `doc`. */
  #anchor(doc: string, name: string, ref: string, at: string): RefTarget {
    const a = this.#anchors.get(`${doc}#${name}`);
    if (a === undefined) {
      throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} names an anchor that is not defined`);
    }
    return { schema: a, ptr: `#${name}` };
  }
}

/** The node JSON Pointer `pointer` (decoded, "" for the whole) names inside `target`. */
function walk(target: unknown, pointer: string, ref: string, at: string): unknown {
  let node = target;
  if (pointer === "") return node;
  for (const raw of pointer.slice(1).split("/")) {
    const tok = unescapePointer(raw);
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, tok)) {
      throw new SchemaError("$ref", at, `$ref "${ref}" at ${at} points at nothing in this schema`);
    }
    node = (node as Record<string, unknown>)[tok];
  }
  return node;
}

// The `$ref` steps a check may take (see above).

/** The `$ref` steps one check may take: far beyond what a real schema needs on 1 MB of arguments. */
export const REF_STEPS = 1_000_000;

/** The steps the running check has left; each check's entry point sets it to {@link REF_STEPS}. */
export const budget: { left: number } = { left: REF_STEPS };

/** Thrown by a check that has spent its {@link budget}. */
export class CheckTooCostly extends Error {
  /** Creates the error. */
  constructor() {
    super(
      `the tool's schema is too costly to check these arguments (more than ${REF_STEPS} $ref steps); ` +
        "send simpler arguments, or ask the tool's author to simplify its schema",
    );
    this.name = "CheckTooCostly";
  }
}

/**
 * The one instance thrown (no stack trace to build each time), made at the first throw: an error made while
 * the module loads has Deno re-parse the module for the stack's source positions.
 */
let tooCostly: CheckTooCostly | undefined;

/** Spends one `$ref` step; throws the one {@link CheckTooCostly} when none is left. */
export function overBudget(): never {
  throw tooCostly ??= new CheckTooCostly();
}
