/**
 * The `$ref` resolver of the JSON Schema engine: base URIs (`$id`) and anchors (`$anchor`) are collected
 * once per document, so a reference resolves the way 2020-12 says, within this one document.
 *
 * @module
 */
import { unescapePointer } from "../_common/pointer.ts";
import { isRecord } from "../_common/values.ts";
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
      if (Array.isArray(a)) { for (const sub of a) this.#scan(sub, base, depth + 1); }
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
