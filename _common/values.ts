/**
 * Small value helpers every job uses: one home for each. Among them the two that move work from module load
 * to first use (`lazy`, `nodeBuiltin`): importing any part of the library should cost next to nothing, so
 * tables, compiled schemas and the runtime's Node built-ins are made when first needed. (They were a module
 * of their own, which every face loaded beside this one: one file fewer to load.)
 *
 * @module
 */

/**
 * How many objects {@link heldIndices} reads along an array's prototype chain (the array itself included)
 * before it gives up: an array, `Array.prototype` and `Object.prototype` are three, a class's array a few more.
 */
const MOST_PROTOTYPES = 64;

/**
 * The indices in `[from, to)` (`to` defaults to the length) at which `list` holds a value, in order: each
 * index key it or its prototypes have, enumerable or not, as `JSON.stringify` reads them (it asks for every
 * index). A walk that meets a hole reads the rest of the array through this, so a sparse array built in code
 * (length 2^32-1) costs what it holds, not its length; a hole holds nothing to walk (JSON writes it `null`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { heldIndices } from "./values.ts";
 *
 * const sparse: unknown[] = [1, 2];
 * sparse.length = 2 ** 32 - 1;
 * sparse[70_000_000] = 3;
 * Object.defineProperty(sparse, 9, { value: "sent too", enumerable: false });
 * assert.deepEqual(heldIndices(sparse, 1), [1, 9, 70_000_000]);
 * assert.deepEqual(heldIndices(sparse, 0, 2), [0, 1]);
 * ```
 *
 * @throws {TypeError} When the chain comes back to an object already read (only a Proxy can make it) or is
 * longer than {@link MOST_PROTOTYPES} (a Proxy's getPrototypeOf that never ends, or a chain of real objects
 * built that long, which no bound can tell apart): the array cannot be read, for the caller to report as it
 * reports a getter that throws.
 */
export function heldIndices(list: readonly unknown[], from: number, to: number = list.length): number[] {
  const out: number[] = [];
  let ordered = true;
  let found: Set<number> | null = null; // (once a prototype is read: an index both own and inherited is one)
  const walked: object[] = [];
  // own keys and each prototype's, not `for...in`, which skips a non-enumerable index that JSON still writes
  for (let at: object | null = list; at !== null; at = Object.getPrototypeOf(at)) {
    // (a Proxy whose prototype comes back to one already read would have its keys listed once a round, up to
    // the bound: 64 reads of a list of 10^5 keys took 5 s; it is refused at its first return)
    if (walked.includes(at)) {
      throw new TypeError(
        "an array whose prototype chain comes back to itself cannot be read (a Proxy whose getPrototypeOf " +
          "lies): pass a plain array",
      );
    }
    // A real chain is short and ends; only a Proxy's getPrototypeOf can lie (return itself: a walk without
    // end). Past the bound (a real chain that long too: the two look alike) the array cannot be read: a
    // throw, as a trap that throws here already is, which each caller reports as unreadable (never its
    // indices taken for holes: what it holds would pass unread).
    if (walked.push(at) > MOST_PROTOTYPES) {
      throw new TypeError(
        `an array whose prototype chain is longer than ${MOST_PROTOTYPES} cannot be read (a Proxy whose ` +
          "getPrototypeOf never ends, or a chain built that long): pass a plain array",
      );
    }
    if (at !== list) found ??= new Set(out);
    for (const key of Object.getOwnPropertyNames(at)) {
      const i = Number(key);
      // (a canonical index only: not "01", "-0", "1.5" or a named key, which JSON does not write for an array)
      if (!(i >= from && i < to && Number.isInteger(i) && String(i) === key)) continue;
      if (found !== null) {
        if (found.has(i)) continue;
        found.add(i);
      }
      if (out.length > 0 && i < out[out.length - 1]) ordered = false; // an inherited one comes after own ones
      out.push(i);
    }
  }
  return ordered ? out : out.sort((a, b) => a - b);
}

/**
 * The index of the first hole in `list` (an index neither it nor its prototypes hold, which JSON writes
 * `null`), or -1 when it has none: read by index up to it, so a sparse array built in code (length 2^32-1)
 * costs what it holds before its first hole, where `every` or `map` ask for every index.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstHole } from "./values.ts";
 *
 * const sparse: unknown[] = ["a", "b"];
 * sparse.length = 2 ** 32 - 1;
 * assert.equal(firstHole(sparse), 2);
 * assert.equal(firstHole(["a", undefined]), -1);
 * ```
 */
export function firstHole(list: readonly unknown[]): number {
  for (let i = 0; i < list.length; i++) if (list[i] === undefined && !(i in list)) return i;
  return -1;
}

/**
 * Calls `visit` on each element `list` holds, in order, as `forEach` does, but by index until the first
 * hole and through {@link heldIndices} past it: a dense array costs an index loop, a sparse one (length
 * 2^32-1, built in code) what it holds, where `forEach` asks for every index.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { eachHeld } from "./values.ts";
 *
 * const seen: number[] = [];
 * eachHeld([5, , 7], (_, i) => seen.push(i));
 * assert.deepEqual(seen, [0, 2]);
 * ```
 */
export function eachHeld(list: readonly unknown[], visit: (item: unknown, index: number) => void): void {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (item === undefined && !(i in list)) {
      for (const j of heldIndices(list, i + 1)) visit(list[j], j);
      return;
    }
    visit(item, i);
  }
}

/**
 * A function that makes its value on the first call and returns the same value on every later call.
 *
 * @example Made once, on first use
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazy } from "./values.ts";
 *
 * let made = 0;
 * const table = lazy(() => {
 *   made++;
 *   return new Map([["a", 1]]);
 * });
 * assert.equal(made, 0);
 * assert.equal(table().get("a"), 1);
 * assert.equal(table(), table());
 * assert.equal(made, 1);
 * ```
 *
 * @param make Makes the value; called at most once (again only if it threw).
 * @returns The memoised getter.
 */
export function lazy<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * A Node built-in module (`node:fs`, `node:crypto`...), loaded when called rather than imported at load:
 * under Deno the first use of any of them loads the whole Node compatibility layer, tens of milliseconds
 * that only the code which needs them should pay. Uses `process.getBuiltinModule` (Deno, Bun, Node 20.16+).
 *
 * @example Only when called
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodeBuiltin } from "./values.ts";
 *
 * const path = nodeBuiltin<typeof import("node:path")>("node:path");
 * assert.equal(path.posix.join("a", "b"), "a/b");
 * ```
 *
 * @param id The module's name, with the `node:` prefix.
 * @returns The module.
 * @throws {Error} When this runtime has no `process.getBuiltinModule`, or no such module.
 */
export function nodeBuiltin<T>(id: string): T {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const module = host?.getBuiltinModule?.(id);
  if (module === undefined) {
    throw new Error(
      `this runtime cannot load ${id}: it needs Deno, Bun or Node 20.16+ (process.getBuiltinModule)`,
    );
  }
  return module as T;
}

/**
 * True for a plain JSON-like object: not null, not an array.
 *
 * @example Objects, not arrays or null
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRecord } from "./values.ts";
 *
 * assert.equal(isRecord({ a: 1 }), true);
 * assert.equal(isRecord([1]), false);
 * assert.equal(isRecord(null), false);
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The noun for a count: `word` for exactly one, else `word` + "s" (or the given plural).
 *
 * @example One line, two lines
 * ```ts
 * import assert from "node:assert/strict";
 * import { plural } from "./values.ts";
 *
 * assert.equal(`1 ${plural(1, "line")}`, "1 line");
 * assert.equal(`2 ${plural(2, "line")}`, "2 lines");
 * assert.equal(`0 ${plural(0, "entry", "entries")}`, "0 entries");
 * ```
 */
export function plural(count: number, word: string, many = `${word}s`): string {
  return count === 1 ? word : many;
}

/**
 * Words listed as a choice in a message, "a, b or c": the list an option that takes a fixed set of words
 * names when it is given another (the command line's `--injection`, the MCP guard's `options.injection`).
 *
 * @example Two or more words, and one
 * ```ts
 * import assert from "node:assert/strict";
 * import { orList } from "./values.ts";
 *
 * assert.equal(orList(["block", "warn", "off"]), "block, warn or off");
 * assert.equal(orList(["reject", "forward"]), "reject or forward");
 * assert.equal(orList(["lines"]), "lines");
 * ```
 *
 * @param words The words, in the order the message lists them.
 * @returns The words joined by commas, the last by "or".
 */
export function orList(words: readonly string[]): string {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

/**
 * The message of a thrown value, whatever was thrown, always as text (an Error's message may have been set to
 * any value); never throws itself (a tool's parser or a hook may throw an object with no text, and the
 * failure must still be told).
 *
 * @example An Error's message, or the value as text
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorText } from "./values.ts";
 *
 * assert.equal(errorText(new TypeError("bad input")), "bad input");
 * assert.equal(errorText("plain"), "plain");
 * assert.equal(errorText(Object.create(null)), "a thrown object with no text");
 * assert.equal(errorText(Object.assign(new Error(), { message: Object.create(null) })), "a thrown object with no text");
 * assert.equal(errorText(Object.assign(new Error(), { message: 42 })), "42");
 * ```
 */
export function errorText(error: unknown): string {
  try {
    // An Error's message may have been set to anything, and the caller builds text with what comes back.
    const text = error instanceof Error ? error.message : error;
    return typeof text === "string" ? text : String(text);
  } catch {
    return `a thrown ${givenValue(error)} with no text`;
  }
}

/**
 * A value as an error message about an option shows what it got: a string quoted (a long one shortened by
 * {@linkcode clipMiddle}), a number, boolean, null or undefined as written, anything else by its type (an
 * object's text could be long, or throw).
 *
 * @example What a bad option was
 * ```ts
 * import assert from "node:assert/strict";
 * import { givenValue } from "./values.ts";
 *
 * assert.equal(givenValue("0.5"), '"0.5"');
 * assert.equal(givenValue(NaN), "NaN");
 * assert.equal(givenValue(null), "null");
 * assert.equal(givenValue(new URL("http://127.0.0.1")), "object");
 * ```
 */
export function givenValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(clipMiddle(value));
  if (typeof value === "object" && value !== null) return "object";
  return typeof value === "function" || typeof value === "symbol" ? typeof value : String(value);
}

/**
 * An http(s) `url` without its user name, password, query and fragment, any of which may hold a token
 * (`?key=...`, `#access_token=...`), and whether it had a query or fragment; undefined when it has none of
 * them (or is not an http(s) URL): for where an address is shown or stored (a message the model reads, a log,
 * a pin file).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { urlWithoutSecrets } from "./values.ts";
 *
 * assert.deepEqual(urlWithoutSecrets("https://me:pw@mcp.example/mcp?key=s3cret"), {
 *   bare: "https://mcp.example/mcp",
 *   queryOrFragment: true,
 * });
 * assert.deepEqual(urlWithoutSecrets("https://mcp.example/mcp#access_token=s3cret"), {
 *   bare: "https://mcp.example/mcp",
 *   queryOrFragment: true,
 * });
 * assert.equal(urlWithoutSecrets("https://mcp.example/mcp"), undefined);
 * assert.equal(urlWithoutSecrets("npx -y server"), undefined);
 * ```
 */
export function urlWithoutSecrets(url: string): { bare: string; queryOrFragment: boolean } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  if (u.username === "" && u.password === "" && u.search === "" && u.hash === "") return undefined;
  const queryOrFragment = u.search !== "" || u.hash !== "";
  u.username = "";
  u.password = "";
  u.search = "";
  u.hash = "";
  return { bare: u.href, queryOrFragment };
}

/**
 * A server's address as a message shows it: without a user name, a password, a query or a fragment, any of
 * which may carry a token (`?key=...`), since messages reach the model, the log and the terminal. Anything
 * that is no http(s) URL is shown as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shownAddress } from "./values.ts";
 *
 * assert.equal(shownAddress("https://me:pw@mcp.example/mcp?key=s3cret"), "https://mcp.example/mcp?\u2026");
 * assert.equal(shownAddress("https://mcp.example/mcp"), "https://mcp.example/mcp");
 * ```
 *
 * @param url The address as given.
 * @returns The address without its secrets.
 */
export function shownAddress(url: string): string {
  const hidden = urlWithoutSecrets(url);
  return hidden === undefined ? url : hidden.bare + (hidden.queryOrFragment ? "?\u2026" : "");
}

/**
 * A limit option's value, or `fallback` when it is absent (undefined or null, as `??` has always read it).
 * Anything but a number (`"8"`, NaN) throws: every comparison with NaN is false, so the limit would be off
 * without a word.
 *
 * @example A limit given as text
 * ```ts
 * import assert from "node:assert/strict";
 * import { limitOption } from "./values.ts";
 *
 * assert.equal(limitOption(undefined, "maxDepth", 64), 64);
 * assert.equal(limitOption(8, "maxDepth", 64), 8);
 * assert.throws(
 *   () => limitOption("8", "maxDepth", 64),
 *   /^TypeError: options\.maxDepth must be a number \(default 64\), got "8"$/,
 * );
 * ```
 */
export function limitOption(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number" && !Number.isNaN(value)) return value;
  throw new TypeError(`options.${name} must be a number (default ${fallback}), got ${givenValue(value)}`);
}

/**
 * Throws a `TypeError` unless each of `names` in `options` is left out or true or false: a switch given as a
 * string (`"false"` from an environment variable, say) reads as on, and would do the opposite of what it says.
 * The message starts with `where` (e.g. `"jsonlLog: "`) and names the option.
 *
 * @example A switch given as text
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSwitches } from "./values.ts";
 *
 * checkSwitches({ redact: true }, ["redact", "strict"], "guard: options.");
 * assert.throws(
 *   () => checkSwitches({ redact: "false" }, ["redact"], "guard: options."),
 *   /^TypeError: guard: options\.redact must be true or false, got "false"$/,
 * );
 * ```
 */
export function checkSwitches(options: object, names: readonly string[], where: string): void {
  for (const name of names) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined && typeof value !== "boolean") {
      throw new TypeError(`${where}${name} must be true or false, got ${givenValue(value)}`);
    }
  }
}

/**
 * A public function's options argument: `{}` when left out, else the object given. Anything else (`null`, a
 * string, a list) is a `TypeError` naming the function, rather than an engine message from reading a field.
 *
 * @example Left out, given, or a mistake
 * ```ts
 * import assert from "node:assert/strict";
 * import { optionsArg } from "./values.ts";
 *
 * assert.deepEqual(optionsArg(undefined, "scan"), {});
 * assert.deepEqual(optionsArg({ redact: true }, "scan"), { redact: true });
 * assert.throws(() => optionsArg(null as never, "scan"), /^TypeError: scan\(\): options must be an object, got null$/);
 * ```
 */
export function optionsArg<T extends object>(value: T | undefined, caller: string): T {
  return value === undefined ? {} as T : objectArg(value, caller, "options");
}

/**
 * A public function's argument that must be an object (not `null`, not a list): returned as it is, else a
 * `TypeError` naming the function and the argument.
 *
 * @example A verdict that is not there
 * ```ts
 * import assert from "node:assert/strict";
 * import { objectArg } from "./values.ts";
 *
 * assert.throws(
 *   () => objectArg(undefined, "describeVerdict", "verdict"),
 *   /^TypeError: describeVerdict\(\): verdict must be an object, got undefined$/,
 * );
 * ```
 */
export function objectArg<T>(value: T, caller: string, name: string): T {
  if (isRecord(value)) return value;
  const got = Array.isArray(value) ? "a list" : givenValue(value);
  throw new TypeError(`${caller}(): ${name} must be an object, got ${got}`);
}

/**
 * `text` cut to at most `max` characters, ending in an ellipsis (U+2026) when cut (never inside a surrogate
 * pair): a `max` of 1 leaves the ellipsis alone, since a first character without it would pass for the whole
 * text; a fraction counts as the whole characters below it; below 1 nothing is left.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clip } from "./values.ts";
 *
 * assert.equal(clip("abcdef", 4), "abc\u2026");
 * assert.equal(clip("ab\u{1F600}cd", 4), "ab\u2026"); // the emoji is not cut in half
 * assert.equal(clip("short", 10), "short");
 * assert.equal(clip("abcdef", 1), "\u2026");
 * assert.equal(clip("abcdef", 2.5), "a\u2026");
 * ```
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return max < 1 ? "" : cutUnits(text, Math.floor(max) - 1) + "\u2026";
}

/**
 * The most characters of a note on how a process tree was ended that a result's detail (or the MCP relay's
 * exit) gives: cut there, a note never pushes out what follows it.
 */
export const MAX_TREE_NOTE = 200;

/** The longest outside input (in UTF-16 units) that {@linkcode clipMiddle} echoes whole. */
export const MAX_ECHOED = 240;

/**
 * Outside input (a path, an argument, an option's value) as a message echoes it: whole when it is at most
 * {@linkcode MAX_ECHOED} UTF-16 units long, else its start and its end (which tell a path or a value apart)
 * with how many characters were left out between them. The one helper for this, so that a 100 000-character
 * argument (a variable holding a file's contents, a generated path) cannot fill a terminal or a log with one
 * message. It cuts between characters as they show (a letter keeps its accent, an emoji its skin tone, a
 * flag its pair; no mark hangs on the ellipsis); the count is of code points.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clipMiddle } from "./values.ts";
 *
 * assert.equal(clipMiddle("tools.json"), "tools.json");
 * const long = "/data/" + "x".repeat(100_000) + "/tools.json";
 * const shown = clipMiddle(long);
 * assert.ok(shown.length <= 240);
 * assert.ok(shown.startsWith("/data/xxx") && shown.endsWith("xxx/tools.json"));
 * assert.match(shown, /\u2026\(99\d{3} characters left out\)\u2026/);
 * ```
 *
 * @param text The input as given.
 * @param max The longest text shown whole, and the most shown of a longer one (at least 80). Default
 *   {@linkcode MAX_ECHOED}.
 * @returns The text, or its start and end around a count of what was left out.
 */
export function clipMiddle(text: string, max: number = MAX_ECHOED): string {
  if (text.length <= max) return text;
  const room = Math.max(80, max) - 40; // 40 for the count
  const head = wholeCut(text, Math.ceil(room * 0.6), -1);
  const tail = wholeCut(text, text.length - Math.floor(room * 0.4), 1);
  let left = 0;
  for (const _ of text.slice(head, tail)) left++;
  return `${text.slice(0, head)}\u2026(${left} characters left out)\u2026${text.slice(tail)}`;
}

/**
 * What joins the character before it into one that shows as one: a combining mark (an accent, a vowel sign,
 * a variation selector), a skin tone, a zero-width joiner. Made on first use: a `\p{...}` expression costs
 * Deno about 0.2 ms to make, and every face loads this module.
 */
const extendsBefore: () => RegExp = lazy(() => /^[\p{M}\p{Emoji_Modifier}\u200D]/u);

/** A regional indicator (U+1F1E6 to U+1F1FF, `\p{Regional_Indicator}`): two of them show as one flag. */
function isRegional(code: number): boolean {
  return code >= 0x1f1e6 && code <= 0x1f1ff;
}

/**
 * True when a cut before `text[i]` splits no character as it shows (a grapheme, near enough: no
 * `Intl.Segmenter`, which costs Deno 10 to 20 ms to make): not inside a surrogate pair, not before a mark or
 * after a joiner (`e` + U+0301 stays one), not inside a flag's pair of regional indicators.
 */
function wholeBefore(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return true;
  if (isLowSurrogate(text.charCodeAt(i)) && isHighSurrogate(text.charCodeAt(i - 1))) return false;
  const code = text.codePointAt(i)!;
  if (text.charCodeAt(i - 1) === 0x200d) return false;
  if (extendsBefore().test(String.fromCodePoint(code))) return false;
  if (!isRegional(code)) return true;
  // Flags pair from the start of a run of regional indicators (two units each): a cut after an odd count splits one.
  let before = 0;
  while (i - 2 * before >= 2 && isRegional(text.codePointAt(i - 2 * before - 2)!)) before++;
  return before % 2 === 0;
}

/**
 * The place nearest `i`, going by `step` (-1 back, 1 on) at most 32 units, where a cut splits no character
 * (see `wholeBefore`); `i` itself, between code points, where there is none so near (a run of marks).
 */
function wholeCut(text: string, i: number, step: -1 | 1): number {
  for (let j = i, n = 0; n <= 32; j += step, n++) if (wholeBefore(text, j)) return j;
  return isLowSurrogate(text.charCodeAt(i)) && isHighSurrogate(text.charCodeAt(i - 1)) ? i + step : i;
}

/**
 * Whether the UTF-16 unit `code` is the high (first) half of a surrogate pair.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isHighSurrogate } from "./values.ts";
 *
 * assert.equal(isHighSurrogate("\u{1F600}".charCodeAt(0)), true);
 * assert.equal(isHighSurrogate("\u{1F600}".charCodeAt(1)), false);
 * ```
 */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Whether the UTF-16 unit `code` is the low (second) half of a surrogate pair.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isLowSurrogate } from "./values.ts";
 *
 * assert.equal(isLowSurrogate("\u{1F600}".charCodeAt(1)), true);
 * assert.equal(isLowSurrogate("a".charCodeAt(0)), false);
 * ```
 */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The first `n` UTF-16 units of `text`, one fewer where the last would be the first half of a surrogate pair
 * (so an emoji is kept whole or dropped, never cut in half). No mark is added: see {@link clip} for that.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cutUnits } from "./values.ts";
 *
 * assert.equal(cutUnits("abcdef", 3), "abc");
 * assert.equal(cutUnits("ab\u{1F600}cd", 3), "ab"); // not half an emoji
 * assert.equal(cutUnits("ab", 5), "ab");
 * ```
 */
export function cutUnits(text: string, n: number): string {
  if (text.length <= n) return text;
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/**
 * The edit distance (Levenshtein) of two strings: how many characters must be inserted, removed or replaced
 * to turn one into the other. For "did you mean" suggestions (a tool name, a command, a flag); names
 * longer than 200 characters are not compared (the distance is then more than 200), so a hostile name
 * costs no quadratic time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { editDistance } from "./values.ts";
 *
 * assert.equal(editDistance("valdate", "validate"), 1);
 * assert.equal(editDistance("scna", "scan"), 2);
 * assert.equal(editDistance("lint", "lint"), 0);
 * ```
 */
export function editDistance(a: string, b: string): number {
  if (a.length > 200 || b.length > 200) return Math.abs(a.length - b.length) + 200;
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** The longest delay a timer takes (2^31 - 1 ms, about 24.8 days): a timeout or wait may not exceed it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `key` as a parser that matches names ignoring case reads it: upper case, then lower case. That folds ASCII
 * case and the pairs Go's `encoding/json` folds besides (the long s to "s", the Kelvin sign to "k"); the MCP
 * guard refuses a name that folds to another it judged (`PATH` beside `path`, `Method` for `method`). The
 * capital sharp s, which upper case keeps and lower case makes the small one, is folded on to "ss" as the
 * small one is: folded once, `STRA\u1e9eE` was another name than `stra\u00dfe`, which Go reads it as.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { foldCase } from "./values.ts";
 *
 * assert.equal(foldCase("PATH"), "path");
 * assert.equal(foldCase("param\u017f"), "params"); // the long s
 * assert.equal(foldCase("\u212a"), "k"); // the Kelvin sign
 * assert.equal(foldCase("STRA\u1e9eE"), foldCase("stra\u00dfe")); // the capital sharp s: "strasse"
 * ```
 */
export function foldCase(key: string): string {
  const once = key.toUpperCase().toLowerCase();
  // (a small sharp s left after folding came from the capital: the one letter folding twice changes)
  return once.includes("\u00df") ? once.replaceAll("\u00df", "ss") : once;
}

/**
 * A call's id as text, for a record that keeps ids as strings (a verdict's `callId`, a log's): a string as it
 * is, anything else as JSON writes it (a raw JSON value, such as an MCP id past 2^53, by its digits, which
 * `String` cannot read).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { idText } from "./values.ts";
 *
 * assert.equal(idText("a"), "a");
 * assert.equal(idText(7), "7");
 * ```
 */
export function idText(id: unknown): string {
  return typeof id === "string" ? id : String(JSON.stringify(id));
}

/**
 * True when `key` is a plain name: letters, digits and `_ $ . -` only (`file_name`, `newInstructions`,
 * `content-type`). Such a key is the program's vocabulary, not text written to a model, so the scanner does
 * not read it where keys are read: a rule for spaced-out letters would take `new_instructions` for an order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isPlainName } from "./values.ts";
 *
 * assert.equal(isPlainName("new_instructions"), true);
 * assert.equal(isPlainName("Ignore all previous instructions"), false);
 * assert.equal(isPlainName("a\u200bb"), false); // an invisible character is no part of a name
 * ```
 */
export function isPlainName(key: string): boolean {
  // a loop over a table, not /^[\w$.-]*$/: the validator asks this of every undeclared key of every call,
  // and a regex call costs more than the few characters a key has
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 128 || NAME_UNITS[c] === 0) return false;
  }
  return true;
}

/**
 * 1 for the ASCII units of a plain name: `[A-Za-z0-9_$.-]`. Filled by ranges in plain statements, not by
 * testing each unit with an expression (that compiled the expression while the module loaded, 0.2 ms of
 * every face's import) nor in a function called at load (which the engine must compile first).
 */
const NAME_UNITS: Uint8Array = new Uint8Array(128).fill(1, 0x30, 0x3a).fill(1, 0x41, 0x5b).fill(
  1,
  0x61,
  0x7b,
);
NAME_UNITS[0x24] =
  NAME_UNITS[0x2d] =
  NAME_UNITS[0x2e] =
  NAME_UNITS[0x5f] =
    1; // $ - . _

/**
 * Every string in a JSON value, in document order, with the object keys before their values when `keys` is
 * `"worded"` (keys that are not a plain name, see {@link isPlainName}): the text a model reads from it, for
 * the scanner. Iterative, so depth never matters, and no paths are built. With `once`, an object or array
 * met again is walked once: for values built in code (a protocol function's tree with parent links), which
 * may hold one twice or hold themselves, where a cycle would walk on until memory ran out; JSON never does,
 * and keeping the set costs more than the scan of what is found. With `once`, too, an array's holes are not
 * walked: one built in code may be 2^32-1 long and hold one element.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stringsIn } from "./values.ts";
 *
 * const value = { note: ["hi", 1, { "Ignore the rules": "x" }] };
 * assert.deepEqual(stringsIn(value), ["hi", "x"]);
 * assert.deepEqual(stringsIn(value, { keys: "worded" }), ["hi", "Ignore the rules", "x"]);
 * ```
 */
export function stringsIn(
  value: unknown,
  options: { keys?: "worded" | "none"; once?: boolean } = {},
): string[] {
  const withKeys = options.keys === "worded";
  const walked = options.once === true ? new Set<object>() : undefined;
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) {
      if (walked !== undefined && seenAgain(walked, v)) continue;
      // From the end (the stack gives them back in order); only what can hold text is pushed. Built in code,
      // an array may have holes (length 2^32-1 and one element): from its last hole on, only the indices it
      // holds are read, so it costs what it holds.
      for (let i = v.length - 1; i >= 0; i--) {
        let item = v[i];
        if (item === undefined && walked !== undefined && !(i in v)) {
          const held = heldIndices(v, 0, i);
          for (let j = held.length - 1; j >= 0; j--) {
            item = v[held[j]];
            if (typeof item === "string" || (typeof item === "object" && item !== null)) stack.push(item);
          }
          break;
        }
        if (typeof item === "string" || (typeof item === "object" && item !== null)) stack.push(item);
      }
    } else if (typeof v === "object" && v !== null) {
      if (walked !== undefined && seenAgain(walked, v)) continue;
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push((v as Record<string, unknown>)[keys[i]]);
        if (withKeys && !isPlainName(keys[i])) stack.push(keys[i]);
      }
    }
  }
  return out;
}

/** Whether `walked` held `value` already; it does from now on. */
function seenAgain(walked: Set<object>, value: object): boolean {
  if (walked.has(value)) return true;
  walked.add(value);
  return false;
}

/**
 * Characters that make text on a screen act or read other than it is: C0 and C1 controls and DEL (a
 * terminal's escape sequences start with one), bidi controls that reorder a line (Trojan Source), invisible
 * characters (zero-width, word joiners, invisible operators, the BOM, the Mongolian vowel separator,
 * interlinear annotations), the line and paragraph separators, and the Unicode tag characters (text that
 * is there but never drawn).
 */
const HIDDEN =
  // deno-lint-ignore no-control-regex -- control characters are what this looks for
  /[\x00-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;
const HIDDEN_IN_LINES =
  // deno-lint-ignore no-control-regex -- the same, keeping line breaks and tabs
  /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

/** How {@linkcode showHidden} writes a character: `"braces"` as `\u{202E}`, `"json"` as `\u202e`. */
export type HiddenForm = "braces" | "json";

/**
 * Text from outside made safe to show a person: every character that a terminal would act on, or that
 * would hide text or reorder a line (see `HIDDEN` above), is written out as an escape. The one place that
 * decides which characters those are, for the command's text output, its JSON output and the HTML report.
 *
 * - `"braces"` (default) writes `\u{1B}`: for text a person reads (the terminal, the HTML report).
 * - `"json"` writes each UTF-16 unit as a JSON escape, `\u001b`: for JSON text, whose strings then hold the
 *   same value once parsed (outside strings, JSON text has none of these characters but line breaks,
 *   which `keepLines` keeps).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { showHidden } from "./values.ts";
 *
 * assert.equal(showHidden("evil\x1b]0;owned\x07 \u202eabc"), "evil\\u{1B}]0;owned\\u{7} \\u{202E}abc");
 * assert.equal(showHidden("a\nb", { keepLines: true }), "a\nb");
 * const json = showHidden(JSON.stringify({ name: "rg\u202e\u{E0041}" }), { form: "json", keepLines: true });
 * assert.equal(json, '{"name":"rg\\u202e\\udb40\\udc41"}');
 * assert.deepEqual(JSON.parse(json), { name: "rg\u202e\u{E0041}" });
 * ```
 *
 * @param text The outside text.
 * @param options `keepLines`: leave line breaks and tabs; `form`: how each character is written.
 * @returns The text with those characters escaped.
 */
export function showHidden(text: string, options: { keepLines?: boolean; form?: HiddenForm } = {}): string {
  const pattern = options.keepLines ? HIDDEN_IN_LINES : HIDDEN;
  return options.form === "json"
    ? text.replace(pattern, jsonUnits)
    : text.replace(pattern, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/** Each UTF-16 unit of `c` as a JSON escape (a tag character is a surrogate pair: two). */
function jsonUnits(c: string): string {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/**
 * `literal` escaped for use inside a regular expression: it matches itself and nothing else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapeRegExp } from "./values.ts";
 *
 * assert.equal(escapeRegExp("a.b*(c)"), "a\\.b\\*\\(c\\)");
 * assert.ok(new RegExp(escapeRegExp("1+1=2?")).test("is 1+1=2?"));
 * ```
 */
export function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
