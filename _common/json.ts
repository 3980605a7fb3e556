/**
 * A careful JSON reader for model-written argument text. It never throws, never touches a prototype
 * (`__proto__` becomes an ordinary own property, as with `JSON.parse`), bounds nesting depth and input size,
 * reports where parsing failed, and can record where every string value sits in the raw text so findings
 * can point back into it.
 *
 * @module
 */
import { eachLeaf, escapePointer, unescapePointer } from "./pointer.ts";
import {
  depthOver,
  hasToJSON,
  isRawJson,
  MOST_WRITTEN_OUT,
  RECURSED_MOST,
  sentOtherwise,
  unsentLeaf,
  unwrapped,
} from "./measure.ts";
import { eachHeld, errorText, firstHole, heldIndices, isRecord } from "./values.ts";

/** Where a string value sits in the raw text. */
export interface StringLocation {
  /** JSON Pointer of the value. */
  path: string;
  /** Index of the opening quote in the raw text. */
  quote: number;
}

/** What {@link parseJson} returns. */
export type JsonParse =
  | { ok: true; value: unknown; strings?: StringLocation[] }
  | { ok: false; error: string; position: number; reason: "syntax" | "depth" | "size" };

/** Options for {@link parseJson}. */
export interface JsonParseOptions {
  /** Deepest nesting of arrays and objects accepted. Default 64. */
  maxDepth?: number;
  /** Longest text accepted, in UTF-16 code units. Default 1 000 000. */
  maxLength?: number;
  /** Record the location of every string value. */
  locate?: boolean;
}

/**
 * The node a local `$ref` (`#` or `#/a/json/pointer`) points at within `root`, or undefined when it points at
 * nothing here (an anchor, another document, a missing key). The fragment is percent-decoded as a whole
 * before it is split, as the schema compiler does, so every caller lands on the same node.
 */
export function resolveLocalRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let frag: string;
  try {
    frag = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (frag === "") return root;
  if (!frag.startsWith("/")) return undefined;
  let node: unknown = root;
  for (const raw of frag.slice(1).split("/")) {
    const tok = unescapePointer(raw);
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, tok)) return undefined;
    node = (node as Record<string, unknown>)[tok];
  }
  return node;
}

/** Why the hand-written parser stopped: thrown inside it, returned as a failed {@link JsonParse}. */
class Fail {
  /** Records the failure. */
  constructor(readonly error: string, readonly position: number, readonly reason: "syntax" | "depth") {}
}

const ESC: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/**
 * Parses JSON text. Uses the native parser for speed and falls back to a hand-written one for error
 * positions and string locations. Never throws.
 */
export function parseJson(text: string, options: JsonParseOptions = {}): JsonParse {
  const maxDepth = options.maxDepth ?? 64;
  const maxLength = options.maxLength ?? 1_000_000;
  if (text.length > maxLength) {
    return {
      ok: false,
      error: `the argument text is ${text.length} characters long; the limit is ${maxLength}`,
      position: maxLength,
      reason: "size",
    };
  }
  if (!options.locate) {
    try {
      const value = JSON.parse(text);
      // nesting N levels takes at least 2N characters, so short text needs no walk
      if (text.length <= 2 * maxDepth || depthOver(value, maxDepth) < 0) return { ok: true, value };
    } catch {
      // fall through to the hand-written parser for a precise message and position
    }
  }
  return slowParse(text, { maxDepth, locate: options.locate === true });
}

/**
 * Throws a `RangeError` for an array longer than {@link MOST_WRITTEN_OUT} with a hole, naming it `what`: only
 * one built in code has holes (JSON text has none, so no peer sends one), and it may be 2^32-1 slots long
 * and hold one element, where a walk by index (`map`, `forEach`, a spread, a copy) asks for every slot and
 * blocks the event loop for minutes. A message whose judging throws so is not passed on; the check costs
 * what the array holds before its first hole.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseSparse } from "./json.ts";
 *
 * const sparse: unknown[] = ["a"];
 * sparse.length = 2 ** 32 - 1;
 * assert.throws(() => refuseSparse(sparse, "the content"), /the content has 4294967295 slots/);
 * refuseSparse(new Array(200_000).fill(0), "the content");
 * ```
 */
export function refuseSparse(list: readonly unknown[], what: string): void {
  if (list.length <= MOST_WRITTEN_OUT || firstHole(list) < 0) return;
  throw new RangeError(
    `${what} has ${list.length} slots with holes, which only a value built in code has (JSON text ` +
      "has none), and toolguard does not walk them",
  );
}

/**
 * The first BigInt in `value` (a schema built in code: JSON has no form for one, so it cannot be sent) and its
 * JSON Pointer, or null. Reads own enumerable keys, as `JSON.stringify` does, from a list, not the call
 * stack (a value built in code may nest past its reach). Meant for a value within measure (see
 * `schemaGraphProblem` in measure.ts, which a chain 100 000 levels deep is: a tree): past ten times
 * {@link MOST_WRITTEN_OUT} objects it skips those it has seen, so that one that holds itself still ends (a
 * set of every object from the start cost that chain ten times the walk).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bigIntIn } from "./json.ts";
 *
 * assert.deepEqual(bigIntIn({ properties: { q: { enum: [1, 5n] } } }), { at: "/properties/q/enum/1", value: 5n });
 * assert.equal(bigIntIn({ const: 5 }), null);
 * ```
 */
export function bigIntIn(value: unknown): { at: string; value: bigint } | null {
  if (typeof value === "bigint") return { at: "", value };
  if (typeof value !== "object" || value === null) return null;
  // each object with the place it was met, as its parent's index and its key: a pointer is made only for
  // the BigInt found (one per object, made as it is met, cost the square of the depth of a long chain)
  const parents: number[] = [-1];
  const keys: string[] = [""];
  const todo: object[] = [value]; // (and the place of each, apart: a pair per object cost the chain twice)
  const places: number[] = [0];
  let left = 10 * MOST_WRITTEN_OUT;
  let seen: Set<object> | undefined;
  const pointer = (at: number, last: string) => {
    const path = [last];
    for (; at > 0; at = parents[at]) path.push(keys[at]);
    return path.reverse().map((k) => "/" + escapePointer(k)).join("");
  };
  for (let node = todo.pop(); node !== undefined; node = todo.pop()) {
    const place = places.pop()!;
    for (const k in node) {
      if (!Object.hasOwn(node, k)) continue;
      const v = (node as Record<string, unknown>)[k];
      if (typeof v === "bigint") return { at: pointer(place, k), value: v };
      if (typeof v !== "object" || v === null) continue;
      if (--left < 0) {
        if ((seen ??= new Set()).has(v)) continue;
        seen.add(v);
      }
      todo.push(v);
      places.push(parents.push(place) - 1);
      keys.push(k);
    }
  }
  return null;
}

/**
 * The text `JSON.stringify` writes for `value` (tools built in code, as a cache key), except that an array
 * longer than {@link MOST_WRITTEN_OUT} with a hole (built in code: 2^32-1 long, holding three values) is
 * written as what it holds, under its length: JavaScriptCore wrote out each of 2^32-1 `null`s (30 s), V8
 * threw. Equal for values JSON writes alike (and for two such arrays holding the same at the same indices),
 * so a key made of it finds equal tools. A value without such an array, the common case, costs one walk
 * over its objects and the native `JSON.stringify`. Throws what `JSON.stringify` throws (a BigInt, a loop).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textAsSent } from "./json.ts";
 *
 * assert.equal(textAsSent({ a: [1, , 2], b: undefined }), '{"a":[1,null,2]}');
 * const long = (): unknown[] => {
 *   const list: unknown[] = ["x"];
 *   list.length = 2 ** 32 - 1;
 *   list[2 ** 31] = "y";
 *   return list;
 * };
 * assert.equal(textAsSent({ enum: long() }), textAsSent({ enum: long() }));
 * assert.notEqual(textAsSent({ enum: long() }), textAsSent({ enum: ["x", "y"] }));
 * ```
 */
export function textAsSent(value: unknown): string {
  return holdsLongList(value, 0, { left: MOST_WRITTEN_OUT })
    ? JSON.stringify(value, heldOnly)
    : JSON.stringify(value);
}

/**
 * Whether `value` may hold an array longer than {@link MOST_WRITTEN_OUT}: also (so {@link textAsSent} takes
 * the exact way) past `count.left` objects or {@link RECURSED_MOST} levels, and at a `toJSON`, whose result
 * is not read here.
 */
function holdsLongList(value: unknown, depth: number, count: { left: number }): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (--count.left < 0 || depth > RECURSED_MOST) return true;
  if (hasToJSON(value)) return true;
  if (Array.isArray(value)) {
    if (value.length > MOST_WRITTEN_OUT) return true;
    for (let i = 0; i < value.length; i++) if (holdsLongList(value[i], depth + 1, count)) return true;
    return false;
  }
  for (const k in value) {
    if (HAS_OWN.call(value, k) && holdsLongList((value as Record<string, unknown>)[k], depth + 1, count)) {
      return true;
    }
  }
  return false;
}

/**
 * The key under which {@link heldOnly} writes an array's length: one no tool holds (made anew in each
 * process, so text that names it cannot be written in advance).
 */
const LENGTH_KEY = `\u0000length of an array with holes ${Math.random().toString(36).slice(2)}`;

/**
 * A replacer for `JSON.stringify` that writes an array longer than {@link MOST_WRITTEN_OUT} with a hole as an
 * object of what it holds, by index, and its length under {@link LENGTH_KEY}: no `null` per hole.
 */
function heldOnly(_: string, value: unknown): unknown {
  if (!Array.isArray(value) || value.length <= MOST_WRITTEN_OUT || firstHole(value) < 0) return value;
  const held: Record<string, unknown> = {};
  for (const i of heldIndices(value, 0)) held[i] = value[i];
  held[LENGTH_KEY] = value.length;
  return held;
}

/** {@link JsonParseOptions} as the hand-written parser needs them: resolved, no size limit (checked before). */
type ReaderOptions = Required<Pick<JsonParseOptions, "maxDepth" | "locate">>;

/** Parses with {@link JsonReader}, turning its failures into a {@link JsonParse}. */
function slowParse(text: string, options: ReaderOptions): JsonParse {
  const reader = new JsonReader(text, options);
  try {
    const value = reader.document();
    const strings = reader.strings;
    return strings ? { ok: true, value, strings } : { ok: true, value };
  } catch (e) {
    if (e instanceof Fail) return { ok: false, error: e.error, position: e.position, reason: e.reason };
    // RangeError from a runaway stack can only come from a maxDepth set absurdly high
    return {
      ok: false,
      error: "the arguments nest too deeply to read",
      position: reader.position,
      reason: "depth",
    };
  }
}

/**
 * The hand-written parser: slower than `JSON.parse`, but it says where and why the text is not JSON, and
 * can record where each string value sits. Throws {@link Fail}.
 */
class JsonReader {
  /** The text being read. */
  readonly #text: string;
  /** Its length. */
  readonly #n: number;
  /** The deepest nesting accepted. */
  readonly #maxDepth: number;
  /** The offset of the next character to read. */
  #i = 0;
  /** Where every string value sits, when asked for. */
  readonly strings: StringLocation[] | undefined;
  /** With `locate`: the JSON Pointer of the first property named twice in one object (the last value is kept). */
  duplicate: string | undefined;

  /** Prepares to read `text`; with `locate`, string locations are recorded. */
  constructor(text: string, { maxDepth, locate }: ReaderOptions) {
    this.#text = text;
    this.#n = text.length;
    this.#maxDepth = maxDepth;
    this.strings = locate ? [] : undefined;
  }

  /** The offset reached so far. */
  get position(): number {
    return this.#i;
  }

  /** The whole text: one value, with nothing but whitespace after it. */
  document(): unknown {
    const v = this.#value(0, "");
    this.#ws();
    if (this.#i < this.#n) {
      throw new Fail(`unexpected ${this.#describeAt(this.#i)} after the JSON value`, this.#i, "syntax");
    }
    return v;
  }

  /** Skips JSON whitespace. */
  #ws(): void {
    const text = this.#text;
    while (this.#i < this.#n) {
      const c = text.charCodeAt(this.#i);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.#i++;
      else break;
    }
  }

  /** The character at `p`, as a message names it. */
  #describeAt(p: number): string {
    return p >= this.#n ? "the end of the text" : `${JSON.stringify(this.#text[p])} at offset ${p}`;
  }

  /** A string, from its opening quote. */
  #string(): string {
    const text = this.#text, n = this.#n;
    const open = this.#i;
    let i = open + 1;
    let out = "";
    let runStart = i;
    while (true) {
      if (i >= n) throw new Fail(`a string that starts at offset ${open} is never closed`, n, "syntax");
      const c = text.charCodeAt(i);
      if (c === 34) {
        this.#i = i + 1;
        return out + text.slice(runStart, i);
      }
      if (c < 32) {
        throw new Fail(`an unescaped control character sits inside a string at offset ${i}`, i, "syntax");
      }
      if (c === 92) {
        out += text.slice(runStart, i);
        this.#i = i;
        out += this.#escape();
        i = runStart = this.#i;
        continue;
      }
      i++;
    }
  }

  /** One escape sequence inside a string, from its backslash. */
  #escape(): string {
    const text = this.#text, i = this.#i;
    const e = text[i + 1];
    if (e === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        throw new Fail(`a \\u escape at offset ${i} needs four hex digits`, i, "syntax");
      }
      this.#i = i + 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    if (e !== undefined && e in ESC) {
      this.#i = i + 2;
      return ESC[e];
    }
    throw new Fail(`an invalid escape \\${e ?? ""} at offset ${i}`, i, "syntax");
  }

  /** A number (anything else that is not a value is reported here). */
  #number(): number {
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = this.#i;
    const r = m.exec(this.#text);
    if (!r || r[0] === "" || r[0] === "-") {
      throw new Fail(`unexpected ${this.#describeAt(this.#i)}`, this.#i, "syntax");
    }
    this.#i += r[0].length;
    return Number(r[0]);
  }

  /** Throws when a container at `depth` would nest deeper than allowed. */
  #enter(depth: number): void {
    if (depth >= this.#maxDepth) {
      throw new Fail(`the arguments nest deeper than ${this.#maxDepth} levels`, this.#i, "depth");
    }
    this.#i++;
  }

  /** Any value at nesting `depth`; `path` is its pointer (kept only when locating strings). */
  #value(depth: number, path: string): unknown {
    this.#ws();
    if (this.#i >= this.#n) throw new Fail("the text ended where a value was expected", this.#n, "syntax");
    const text = this.#text, i = this.#i;
    const c = text[i];
    if (c === "{") return this.#object(depth, path);
    if (c === "[") return this.#array(depth, path);
    if (c === '"') {
      this.strings?.push({ path, quote: i });
      return this.#string();
    }
    if (text.startsWith("true", i)) {
      this.#i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      this.#i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      this.#i += 4;
      return null;
    }
    return this.#number();
  }

  /** An object, from its "{". */
  #object(depth: number, path: string): Record<string, unknown> {
    this.#enter(depth);
    const text = this.#text;
    const obj: Record<string, unknown> = {};
    this.#ws();
    if (text[this.#i] === "}") {
      this.#i++;
      return obj;
    }
    while (true) {
      this.#ws();
      if (text[this.#i] !== '"') {
        throw new Fail(
          `expected a quoted property name, found ${this.#describeAt(this.#i)}`,
          this.#i,
          "syntax",
        );
      }
      const key = this.#string();
      this.#ws();
      if (text[this.#i] !== ":") {
        throw new Fail(
          `expected ":" after a property name, found ${this.#describeAt(this.#i)}`,
          this.#i,
          "syntax",
        );
      }
      this.#i++;
      const v = this.#value(depth + 1, this.strings ? path + "/" + escapePointer(key) : path);
      if (this.strings && this.duplicate === undefined && Object.hasOwn(obj, key)) {
        this.duplicate = path + "/" + escapePointer(key); // (`path` is whole only where strings are located)
      }
      if (key === "__proto__") {
        Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
      } else obj[key] = v;
      this.#ws();
      if (text[this.#i] === ",") {
        this.#i++;
        continue;
      }
      if (text[this.#i] === "}") {
        this.#i++;
        return obj;
      }
      throw new Fail(
        `expected "," or "}" in an object, found ${this.#describeAt(this.#i)}`,
        this.#i,
        "syntax",
      );
    }
  }

  /** An array, from its "[". */
  #array(depth: number, path: string): unknown[] {
    this.#enter(depth);
    const text = this.#text;
    const arr: unknown[] = [];
    this.#ws();
    if (text[this.#i] === "]") {
      this.#i++;
      return arr;
    }
    while (true) {
      arr.push(this.#value(depth + 1, this.strings ? path + "/" + arr.length : path));
      this.#ws();
      if (text[this.#i] === ",") {
        this.#i++;
        continue;
      }
      if (text[this.#i] === "]") {
        this.#i++;
        return arr;
      }
      throw new Fail(
        `expected "," or "]" in an array, found ${this.#describeAt(this.#i)}`,
        this.#i,
        "syntax",
      );
    }
  }
}

/**
 * Maps a span of a decoded string value (code-unit indices `[from, to)`) back to offsets in the raw JSON
 * text, given the index of the string's opening quote. The raw span never splits an escape sequence or a
 * surrogate pair written literally, so replacing it with plain text keeps the JSON valid.
 */
export function rawSpan(
  raw: string,
  quote: number,
  from: number,
  to: number,
): { start: number; end: number } {
  let r = quote + 1;
  let d = 0;
  let start = -1;
  let end = -1;
  while (r < raw.length) {
    const c = raw.charCodeAt(r);
    if (c === 34) break;
    let width: number; // raw code units of this token
    let units: number; // decoded code units it produces
    if (c === 92) {
      width = raw[r + 1] === "u" ? 6 : 2;
      units = 1;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = raw.charCodeAt(r + 1);
      const pair = next >= 0xdc00 && next <= 0xdfff;
      width = pair ? 2 : 1;
      units = width;
    } else {
      width = 1;
      units = 1;
    }
    if (start < 0 && d + units > from) start = r;
    if (d + units >= to && end < 0 && d < to) end = r + width;
    d += units;
    r += width;
    if (end >= 0) break;
  }
  if (start < 0) start = r;
  if (end < 0) end = r;
  return { start, end };
}

/**
 * `JSON.stringify`, never throwing: a value nested too deeply for the runtime's stack (Bun throws a
 * `RangeError` where V8 copes) becomes a text that is not JSON, so a validator reports the arguments as
 * malformed instead of the reader losing the call.
 */
export function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "null";
  } catch {
    return TOO_DEEP;
  }
}

/** What {@link safeStringify} gives for a value it cannot write out. */
const TOO_DEEP = "(arguments nested too deeply to write out; send them nested less deeply)";

/** Parses JSON without throwing. */
export function parseJsonSafe(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
}

/**
 * True when JSON text may hold a number too large for a double, which parses to +/-Infinity: only a number
 * with an exponent of three digits or more, or with 210 digits or more before an exponent of at most 99, can.
 * About 0.05 us on 170 characters, so the walk for them ({@link unsendableNumbers}) runs only where it may find
 * one.
 */
export function mayOverflow(text: string): boolean {
  return OVERFLOW.test(text);
}

/**
 * A number with a three-digit exponent, or a run of 210 digits (the digit before `e` makes it cheap to scan).
 * The run is tried at its first digit only: tried at every digit, 1 MB of 209-digit runs took a quarter second.
 */
const OVERFLOW = /\d[eE]\+?\d{3}|(?<!\d)\d{210}/;

/**
 * The JSON Pointers of the numbers JSON cannot send as they are held in `value`, in document order, each with
 * the number: the non-finite ones (infinities, NaN) and BigInts (`JSON.stringify` throws on them). Iterative.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unsendableNumbers } from "./json.ts";
 *
 * assert.deepEqual(unsendableNumbers({ a: 1, b: [Infinity], c: 2n }), [["/b/0", Infinity], ["/c", 2n]]);
 * ```
 */
export function unsendableNumbers(value: unknown): [path: string, held: number | bigint][] {
  if (!holdsUnsendableNumber(value)) return []; // the common case, without a path made per node
  const out: [string, number | bigint][] = [];
  eachLeaf(value, (leaf, path) => {
    if (typeof leaf === "bigint" || typeof leaf === "number" && !Number.isFinite(leaf)) {
      out.push([path, leaf]);
    }
  });
  return out;
}

/** Whether a number that is not finite, or a BigInt, stands anywhere in `value`. Iterative, allocates its stack. */
function holdsUnsendableNumber(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return true;
    } else if (typeof v === "bigint") return true;
    else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (v[i] === undefined && !(i in v)) { // a hole: the rest by what the array holds
          for (const j of heldIndices(v, i + 1)) stack.push(v[j]);
          break;
        }
        stack.push(v[i]);
      }
    } else if (typeof v === "object" && v !== null) {
      for (const k of Object.keys(v)) stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return false;
}

/**
 * The JSON Pointer of the first property that JSON text names twice in one object, or undefined for none (or
 * text that is not JSON). `JSON.parse` keeps the last value without a word, so the first is never checked;
 * this reads the text with the hand-written parser, a few us per kilobyte.
 */
export function duplicateKey(text: string): string | undefined {
  const found = repeatedKeys(text);
  return found.read ? found.duplicate : undefined;
}

/**
 * What {@linkcode duplicateKey} reads, telling text without a repeat from text it could not read: not JSON, or
 * valid JSON nested past the hand-written parser's stack (thousands of levels, which `JSON.parse` reads), of
 * whose keys nothing is known.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { repeatedKeys } from "./json.ts";
 *
 * assert.deepEqual(repeatedKeys('{"a":1,"a":2}'), { read: true, duplicate: "/a" });
 * assert.deepEqual(repeatedKeys('{"a":1}'), { read: true, duplicate: undefined });
 * assert.deepEqual(repeatedKeys("[".repeat(100_000) + "]".repeat(100_000)), { read: false });
 * ```
 */
export function repeatedKeys(text: string): { read: true; duplicate: string | undefined } | { read: false } {
  const reader = new JsonReader(text, { maxDepth: Infinity, locate: true });
  try {
    reader.document();
    return { read: true, duplicate: reader.duplicate };
  } catch {
    return { read: false };
  }
}

/**
 * What a value built in code held when {@link takeSnapshot} read it: each distinct object reachable from its
 * roots once (a shared part or a loop is read once), with its keys and values in order.
 */
export interface Snapshot {
  readonly roots: readonly unknown[];
  readonly objects: readonly object[];
  /**
   * Per object: its keys and values interleaved (`[key, value, key, value, ...]`); an array's elements, or
   * for an array longer than {@link MOST_WRITTEN_OUT} its keys and values as an object's.
   */
  readonly fields: readonly (readonly unknown[])[];
  /** Per object: an array's length, else -1. */
  readonly lengths: readonly number[];
  /**
   * The objects with a `toJSON` (a Date), whose result is what JSON writes in their place: each one's index in
   * `objects`, the key it was first read under (which `toJSON` is given) and what it returned then.
   */
  readonly sent: readonly {
    readonly at: number;
    readonly key: string;
    readonly result: unknown;
    /** A Date whose `toJSON` reads its time as the built-ins do: that time (see `dateTime`). */
    readonly time: number | undefined;
  }[];
}

/**
 * Reads `roots` once, each distinct object one time (so a part shared 2^40 times over, or an object that
 * holds itself, takes one step per object), for {@link sameAsSnapshot} to tell later whether anything in
 * them changed. Reads what {@link copyAsSent} copies (what a tool's reader reads): an object's own enumerable
 * keys (`for...in`, own only), and the elements of an array; an
 * array longer than {@link MOST_WRITTEN_OUT} by its keys, as an object, so a sparse one built in code costs
 * what it holds, not its length (2^32-1 elements read one by one took 2.9 GB, then threw). Of an object with
 * a `toJSON` (a Date) also what it returns, which is what JSON writes in its place: a Date holds no key, so
 * one changed in place (`setTime`) showed no change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sameAsSnapshot, takeSnapshot } from "./json.ts";
 *
 * const tools = [{ name: "a", parameters: { type: "object", properties: {} } }];
 * const snap = takeSnapshot([tools]);
 * assert.equal(sameAsSnapshot([tools], snap), true);
 * tools[0].parameters.properties = { q: { type: "string" } };
 * assert.equal(sameAsSnapshot([tools], snap), false);
 * ```
 */
export function takeSnapshot(roots: readonly unknown[]): Snapshot {
  const objects: object[] = [];
  const fields: unknown[][] = [];
  const lengths: number[] = [];
  const keys: string[] = []; // (per object: the key it was first read under)
  const sent: { at: number; key: string; result: unknown; time: number | undefined }[] = [];
  const seen = new Set<object>();
  const visit = (v: unknown, key: string) => {
    if (typeof v === "object" && v !== null && !seen.has(v)) {
      seen.add(v);
      objects.push(v);
      keys.push(key);
    }
  };
  for (const root of roots) visit(root, "");
  // a list that grows as it is read, not recursion: a 100 000-level chain is as safe as a wide tree
  for (let i = 0; i < objects.length; i++) {
    const node = objects[i];
    if (hasToJSON(node)) {
      // what JSON writes in its place: a Date changed in place keeps its identity and holds no own key
      const result = (node as { toJSON: (key: string) => unknown }).toJSON(keys[i]);
      sent.push({ at: i, key: keys[i], result, time: dateTime(node) });
      visit(result, keys[i]);
    }
    const own: unknown[] = [];
    const length = Array.isArray(node) ? node.length : -1;
    const indexed = length >= 0 && length <= MOST_WRITTEN_OUT;
    if (indexed) {
      for (let j = 0; j < length; j++) own.push((node as unknown[])[j]);
    } else {
      for (const k in node) if (HAS_OWN.call(node, k)) own.push(k, (node as Record<string, unknown>)[k]);
    }
    fields.push(own);
    lengths.push(length);
    for (let j = indexed ? 0 : 1; j < own.length; j += indexed ? 1 : 2) {
      visit(own[j], indexed ? String(j) : own[j - 1] as string);
    }
  }
  return { roots: [...roots], objects, fields, lengths, sent };
}

/**
 * Whether `roots` are the ones `snap` was taken of and every object in them still holds the same keys and
 * the same values (objects by identity, so each is read once; numbers as SameValueZero: NaN is NaN, -0 is 0),
 * and each `toJSON` the snapshot met returns the same (a value, or the same object): a `toJSON` that makes a
 * new object on each call reads as changed on each. Reads no more objects than the snapshot holds, whatever
 * was put in since: a part shared past measure shows as a changed value before it is read. False when a
 * getter throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sameAsSnapshot, takeSnapshot } from "./json.ts";
 *
 * const tools: unknown[] = [{ name: "a" }];
 * const snap = takeSnapshot([tools]);
 * tools.push({ name: "b" });
 * assert.equal(sameAsSnapshot([tools], snap), false);
 * ```
 */
export function sameAsSnapshot(roots: readonly unknown[], snap: Snapshot): boolean {
  if (roots.length !== snap.roots.length) return false;
  for (let i = 0; i < roots.length; i++) if (roots[i] !== snap.roots[i]) return false;
  const { objects, fields, lengths } = snap;
  const budget = { left: objects.length }; // (objects a new one made by a getter may be compared through)
  try {
    for (let i = 0; i < objects.length; i++) {
      const node = objects[i];
      const own = fields[i];
      if (Array.isArray(node)) {
        const length = node.length;
        if (length !== lengths[i]) return false;
        if (length <= MOST_WRITTEN_OUT) {
          for (let j = 0; j < own.length; j++) {
            const v = node[j];
            if (v !== own[j] && !bothNaN(v, own[j]) && !sameAnew(v, own[j], snap, budget)) return false;
          }
          continue;
        }
      }
      let j = 0;
      for (const k in node) {
        if (!HAS_OWN.call(node, k)) continue;
        const v = (node as Record<string, unknown>)[k];
        if (own[j] !== k) return false;
        if (v !== own[j + 1] && !bothNaN(v, own[j + 1]) && !sameAnew(v, own[j + 1], snap, budget)) {
          return false;
        }
        j += 2;
      }
      if (j !== own.length) return false;
    }
    // each toJSON's result anew: the same value, or the same object (whose contents were compared above)
    for (const { at, key, result, time } of snap.sent) {
      if (time !== undefined) { // a plain Date: its time is what its text is made of
        const now = dateTime(objects[at]);
        if (now === time || (now !== undefined && bothNaN(now, time))) continue;
      }
      const now = (objects[at] as { toJSON: (key: string) => unknown }).toJSON(key);
      if (now !== result && !bothNaN(now, result)) return false;
    }
  } catch {
    return false; // a throwing getter: read anew, and the reader says what it says
  }
  return true;
}

/**
 * Whether `value` (call arguments built in code, already found by `walkProblem` (measure.ts) to be within
 * depth and measure) holds what JSON sends otherwise: an object with a `toJSON` (a Date), a boxed value, a
 * number that is not finite, `undefined`, a function ({@link unsentLeaf}, {@link sentOtherwise}); such
 * arguments are checked and scanned as {@link copyAsSent} copies them. One read of each object, and of an
 * array what it holds; throws what reading throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { holdsUnsent } from "./json.ts";
 *
 * assert.equal(holdsUnsent({ when: [new Date(0)] }), true);
 * assert.equal(holdsUnsent({ q: new String("text") }), true);
 * assert.equal(holdsUnsent({ n: NaN }), true);
 * assert.equal(holdsUnsent({ when: ["1970-01-01"], n: [1, null] }), false);
 * ```
 */
export function holdsUnsent(value: unknown): boolean {
  if (value === null) return false;
  if (typeof value !== "object") return unsentLeaf(value);
  let found = false;
  if (Array.isArray(value)) {
    if (hasToJSON(value)) return true;
    eachHeld(value, (item) => found ||= holdsUnsent(item));
  } else if (sentOtherwise(value)) return true;
  else for (const k in value) if (holdsUnsent((value as Record<string, unknown>)[k])) return true;
  return found;
}

/**
 * A copy of `value` (a tool or schema built in code) holding what JSON carries of it, which is what a model is
 * sent and what {@link takeSnapshot} reads: each object's own enumerable keys, each array's elements; what
 * `JSON.stringify` writes in their place: `toJSON`'s result, `null` for a number that is not finite and for
 * an array's hole, `undefined`, function or symbol, and no key for an object's. An array longer than
 * {@link MOST_WRITTEN_OUT} keeps its holes (a sparse one costs what it holds). No inherited or
 * non-enumerable key. Each distinct object is copied once (a shared part stays shared, a loop a loop), from
 * a list, not the call stack; a BigInt is kept as it is. Throws what reading throws, and a `TypeError` past
 * {@link MOST_WRITTEN_OUT} objects for one that is new on each read (it would never end). The tools' readers
 * read this copy, so a keyword the model is not sent is not enforced, however the tools reach them, and tools
 * that write the same JSON text are read alike. With `apart`, each place an object appears gets a copy of its
 * own, as `JSON.parse(JSON.stringify(value))` gives (for a copy to be changed in place: coerce, converting one
 * place, changed every place that shared it): for a value already found within measure, and a `TypeError`
 * past {@link MOST_WRITTEN_OUT} objects copied, a loop among them. With `holes`, every array keeps its holes
 * whatever its length, for a reader that takes only the text out (the scan: JSON's `null` holds none), so a
 * sparse array costs what it holds. With `infinite`, +/-Infinity is kept (call arguments: JSON text writes it
 * as 1e400, and it is refused too large as it stands) where JSON writes `null`. With `raw`, a raw JSON object
 * (`JSON.rawJSON`: an MCP id past 2^53) is kept as it is, which JSON writes as its text, where it is opened
 * else (its number rounded). With `refuseBigInt`, a BigInt JSON cannot write (`BigInt.prototype` has no
 * `toJSON`) throws the `TypeError` `JSON.stringify` would, for a message to the other side, whose writer throws
 * at it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copyAsSent } from "./json.ts";
 *
 * const schema: Record<string, unknown> = { type: "string" };
 * Object.defineProperty(schema, "minLength", { value: 3, enumerable: false });
 * assert.deepEqual(copyAsSent({ a: schema, b: schema }), { a: { type: "string" }, b: { type: "string" } });
 * const copy = copyAsSent({ a: schema, b: schema });
 * assert.equal(copy.a, copy.b);
 * assert.deepEqual(copyAsSent({ enum: [NaN, undefined, new Date(0)], q: undefined }), {
 *   enum: [null, null, "1970-01-01T00:00:00.000Z"],
 * });
 * ```
 */
export function copyAsSent<T>(
  value: T,
  options: { apart?: boolean; holes?: boolean; infinite?: boolean; raw?: boolean; refuseBigInt?: boolean } =
    {},
): T {
  const infinite = options.infinite === true;
  const raw = options.raw === true;
  // (what JSON writes for `v` read at `key`; a raw JSON object kept, with `raw`)
  const asWritten = (v: unknown, key: string) => raw && isRawJson(v) ? v : asSent(v, key, infinite);
  const sent = options.refuseBigInt !== true ? asWritten : (v: unknown, key: string) => {
    const out = asWritten(v, key);
    if (typeof out === "bigint") {
      throw new TypeError(`${key === "" ? "it" : `"${key}"`} is a BigInt, ${UNWRITTEN}`);
    }
    return out;
  };
  const copies = new Map<object, unknown[] | Record<string, unknown>>();
  const pending: object[] = [];
  const targets: (unknown[] | Record<string, unknown>)[] = [];
  let again = 0; // (objects met anew in a copy `apart`)
  const copyOf = (v: unknown, readAgain?: () => unknown): unknown => {
    if (typeof v !== "object" || v === null || (raw && isRawJson(v))) return v;
    let copy = copies.get(v);
    if (copy !== undefined && !options.apart) return copy;
    if (copy !== undefined) {
      if (++again > MOST_WRITTEN_OUT) { // (a loop, or sharing that grew since it was measured)
        throw new TypeError(`written out, they hold more than ${MOST_WRITTEN_OUT} objects`);
      }
    } else if (copies.size > MOST_WRITTEN_OUT && readAgain !== undefined && readAgain() !== v) {
      // past measure, an object new on each read (a getter or Proxy making it anew) would be copied without end
      throw new TypeError(
        "an object in it is a new one each time it is read (a getter or a Proxy that makes it anew), so " +
          "reading it would never end; pass plain data",
      );
    }
    // (with holes, the copy gets its length once filled: a length set first makes V8 fill that many slots,
    // 1-2 ms for a parser's 65 536-long array that holds one element, and a far index written first does not)
    copies.set(v, copy = Array.isArray(v) ? (options.holes ? [] : new Array(v.length)) : {});
    pending.push(v);
    targets.push(copy);
    return copy;
  };
  const root = copyOf(sent(value, "")) as T;
  for (let i = 0; i < pending.length; i++) { // (the list grows as it is read)
    const from = pending[i];
    const to = targets[i];
    if (Array.isArray(to)) {
      const list = from as unknown[];
      const read = (j: number) => sent(list[j], String(j));
      if (list.length <= MOST_WRITTEN_OUT && !options.holes) { // as JSON writes it, every index
        for (let j = 0; j < list.length; j++) to[j] = copyOf(read(j), () => read(j)) ?? null;
      } else eachHeld(list, (_, j) => to[j] = copyOf(read(j), () => read(j)) ?? null);
      if (options.holes) to.length = list.length;
      continue;
    }
    for (const k in from) {
      if (!HAS_OWN.call(from, k)) continue;
      const read = () => sent((from as Record<string, unknown>)[k], k);
      const item = copyOf(read(), read);
      if (item === undefined) continue; // (JSON writes no key for it)
      if (k === "__proto__") {
        Object.defineProperty(to, k, { value: item, writable: true, enumerable: true, configurable: true });
      } else to[k] = item;
    }
  }
  return root;
}

/**
 * What `JSON.stringify` writes for `v` read at `key`, for {@link copyAsSent} and the MCP pins' hash: `toJSON`'s
 * result, the value a `Number`, `String`, `Boolean` or `BigInt` object wraps and a raw JSON object's
 * ({@link unwrapped}), `null` for a number that is not finite (with `infinite`, NaN only: +/-Infinity is kept
 * for the validator to refuse as too large), `undefined` for what it leaves out (a function, a symbol), else `v`
 * (an object's members unread; a BigInt, which JSON cannot write, as it is unless `BigInt.prototype` has a
 * `toJSON`). Throws what a `toJSON` throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { asSent } from "./json.ts";
 *
 * assert.equal(asSent(new Boolean(false), "a"), false);
 * assert.equal(asSent(new Date(0), "a"), "1970-01-01T00:00:00.000Z");
 * assert.equal(asSent(-Infinity, "a"), null);
 * assert.equal(asSent(-Infinity, "a", true), -Infinity);
 * assert.equal(asSent(() => 1, "a"), undefined);
 * ```
 */
export function asSent(v: unknown, key: string, infinite = false): unknown {
  // (JSON.stringify asks a BigInt for a toJSON too: an application that gives BigInt.prototype one sends that;
  // one toJSON a value, as JSON calls: a second, of what the first returned, judged what was not sent)
  if (typeof v === "bigint") {
    if (typeof BIGINT_PROTO.toJSON === "function") v = BIGINT_PROTO.toJSON.call(v, key);
  } else if (typeof v === "object" && v !== null && hasToJSON(v)) {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (typeof v === "object" && v !== null && !Array.isArray(v)) v = unwrapped(v);
  if (typeof v === "number") return Number.isFinite(v) || (infinite && v === v) ? v : null;
  return typeof v === "function" || typeof v === "symbol" ? undefined : v;
}

/**
 * The object `v` (at `key`) as JSON sends it, its own members read once into a plain copy: a `toJSON`'s
 * result, a box opened, and so each member that is an object (deeper objects stay as they are); a member JSON
 * writes no key for (a function: a `toJSON` too, which JSON calls once; a symbol) is left out, one that is no
 * object (a number JSON cannot write too, for its reader to refuse) stays as it is. A member kept as
 * it stood was judged as it is while JSON sent another: `method: new String("tools/call")` was no call to the
 * MCP judge and a call to the server. What is sent is no object (a `toJSON` gave a string): that value.
 */
export function sentMembers(v: object, key: string): unknown {
  const sent = asSent(v, key);
  if (!isRecord(sent)) return sent;
  const copy = { ...sent };
  for (const k in copy) {
    const member = copy[k];
    // (a string, boolean or null goes as it is, as does a number, so that the judge refuses one JSON cannot
    // write: an id of 1e400 would go under id null; a raw JSON's text goes as written: opened, an id past
    // 2^53 would be rounded)
    const type = typeof member;
    if (type !== "object" && type !== "function" && type !== "symbol" && type !== "bigint") continue;
    if (member === null) continue;
    const out = asSent(member, k, true);
    // (for...in, which costs less than a list of keys, meets an inherited key too: no member of the copy)
    if (out === member || isRawJson(member) || !HAS_OWN.call(copy, k)) continue;
    if (out === undefined) delete copy[k];
    // (a toJSON's result is written as it is: its own toJSON, which a later write would call, left out)
    else copy[k] = isRecord(out) && hasToJSON(out) ? withoutToJSON(out) : out;
  }
  return copy;
}

/** A plain copy of the object `v`'s own members, without `toJSON`, which JSON does not call twice. */
function withoutToJSON(v: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...v };
  delete copy.toJSON;
  return copy;
}

/** Why a BigInt cannot be sent: JSON has no numbers of its kind. */
export const UNWRITTEN = "which JSON cannot write: send a number or a string";

/** Where an application may have given every BigInt a `toJSON` (JSON has none for them). */
const BIGINT_PROTO = BigInt.prototype as { toJSON?: (this: bigint, key: string) => unknown };

/** Each snapshot's objects by their place in it, made when a new object is first met in its place. */
const places = new WeakMap<Snapshot, Map<object, number>>();

/**
 * Whether `now`, read where `snap` read the object `then`, is a new object holding the same keys and values
 * (a getter that makes it anew on each read: it missed the tools caches on every call, which compiled the
 * tools anew, 30-70 us a call). Compared as {@link sameAsSnapshot} compares, key by key and down through
 * objects new again, at most `budget.left` of them in all; one with a `toJSON` is no match.
 */
function sameAnew(now: unknown, then: unknown, snap: Snapshot, budget: { left: number }): boolean {
  if (now === then || bothNaN(now, then)) return true;
  if (typeof now !== "object" || now === null || typeof then !== "object" || then === null) return false;
  if (--budget.left < 0 || hasToJSON(now)) return false;
  let at = places.get(snap);
  if (at === undefined) places.set(snap, at = new Map(snap.objects.map((o, i) => [o, i])));
  const i = at.get(then);
  if (i === undefined || Array.isArray(now) !== Array.isArray(then)) return false;
  const own = snap.fields[i];
  if (Array.isArray(now)) {
    if (now.length !== snap.lengths[i]) return false;
    if (now.length <= MOST_WRITTEN_OUT) {
      for (let j = 0; j < own.length; j++) if (!sameAnew(now[j], own[j], snap, budget)) return false;
      return true;
    }
  }
  let j = 0;
  for (const k in now) {
    if (!HAS_OWN.call(now, k)) continue;
    if (own[j] !== k || !sameAnew((now as Record<string, unknown>)[k], own[j + 1], snap, budget)) {
      return false;
    }
    j += 2;
  }
  return j === own.length;
}

/** The built-ins a Date's `toJSON` goes through, as the module found them. */
const DATE_HOOKS = [
  Date.prototype.toJSON,
  Date.prototype.toISOString,
  Date.prototype.valueOf,
  Date.prototype[Symbol.toPrimitive],
] as const;
const dateValue = Date.prototype.getTime;

/**
 * The time of `node` when it is a Date whose `toJSON` reads it through the built-ins alone (its `toJSON`,
 * `toISOString`, `valueOf` and `Symbol.toPrimitive` are the ones this module found), so its text follows from
 * its time: a Date compared by it costs a few reads a call, where `toJSON` writes its text anew (0.8 us).
 * Undefined for anything else.
 */
function dateTime(node: object): number | undefined {
  const d = node as Date;
  if (
    d.toJSON !== DATE_HOOKS[0] || d.toISOString !== DATE_HOOKS[1] || d.valueOf !== DATE_HOOKS[2] ||
    d[Symbol.toPrimitive] !== DATE_HOOKS[3]
  ) return undefined;
  try {
    return dateValue.call(d);
  } catch {
    return undefined; // not a Date, whatever its prototype says
  }
}

/** For `for...in` loops that read own keys only (engines optimise this form, not `Object.hasOwn`). */
const HAS_OWN = Object.prototype.hasOwnProperty;

/**
 * Whether `a` and `b` are both NaN, which `!==` calls different: with it, {@link sameAsSnapshot} compares as
 * SameValueZero does (NaN is NaN; -0 is 0, as JSON writes both `0`).
 */
function bothNaN(a: unknown, b: unknown): boolean {
  return a !== a && b !== b;
}

/** The most values {@link SnapshotCache} keeps per anchor (one per distinct options key). */
const KEYS_PER_ANCHOR = 8;

/**
 * Values computed from tools built in code, found by the identity of an anchor (the caller's tools array)
 * and a key (the options), and used only while {@link sameAsSnapshot} says the roots they were computed from
 * are unchanged: an array or schema edited in place is read anew on the next call. Held weakly: a dropped
 * array frees its entries.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SnapshotCache } from "./json.ts";
 *
 * const cache = new SnapshotCache<number>();
 * const tools = [{ name: "a" }];
 * cache.set(tools, "", [tools], 1);
 * assert.equal(cache.get(tools, "", [tools]), 1);
 * tools[0].name = "b";
 * assert.equal(cache.get(tools, "", [tools]), undefined);
 * ```
 */
export class SnapshotCache<V> {
  readonly #byAnchor = new WeakMap<object, Map<string, { value: V; snap: Snapshot }>>();

  /** The value stored for `anchor` and `key`, if `roots` are unchanged since. */
  get(anchor: object, key: string, roots: readonly unknown[]): V | undefined {
    const entry = this.#byAnchor.get(anchor)?.get(key);
    return entry !== undefined && sameAsSnapshot(roots, entry.snap) ? entry.value : undefined;
  }

  /**
   * Stores `value` for `anchor` and `key`, with `snap`, a snapshot of `roots` (by default read now): one taken
   * before `value` was computed from them makes a getter that answered anew in between read as changed on the
   * next call, where one taken after trusted what it answered then.
   */
  set(anchor: object, key: string, roots: readonly unknown[], value: V, snap = takeSnapshot(roots)): void {
    let perKey = this.#byAnchor.get(anchor);
    if (perKey === undefined) this.#byAnchor.set(anchor, perKey = new Map());
    if (!perKey.has(key) && perKey.size >= KEYS_PER_ANCHOR) perKey.delete(perKey.keys().next().value!);
    perKey.set(key, { value, snap });
  }
}
