/**
 * JSON Pointer (RFC 6901) reference tokens, escaped and unescaped in one place.
 *
 * @module
 */
import { cutUnits, heldIndices } from "./values.ts";

/** Longest JSON Pointer that {@linkcode quotedPointer} quotes whole, in characters. */
export const MAX_QUOTED_POINTER = 120;

/** Longest last step (`/3`, `/name`) that a cut place keeps after its mark, in characters. */
export const MAX_LAST_STEP = 40;

/**
 * A JSON Pointer in quotes as a message names a place, cut to {@linkcode MAX_QUOTED_POINTER} characters with the
 * validator's mark ("...") inside the quotes, as a long value is cut: a model's 5 000-character key is not
 * repeated whole in what the model reads. Its last step is kept after the mark where it is short (at most
 * {@linkcode MAX_LAST_STEP} characters), so that the items or properties under one long key read apart; the cut
 * splits no surrogate pair and no `~` escape. One home for the validator's messages and the feedback that
 * finds the place in them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quotedPointer } from "./pointer.ts";
 *
 * assert.equal(quotedPointer("/limt"), '"/limt"');
 * assert.equal(quotedPointer("/" + "k".repeat(5000)), '"/' + "k".repeat(116) + '..."');
 * assert.equal(quotedPointer("/" + "k".repeat(5000) + "/3"), '"/' + "k".repeat(114) + '.../3"');
 * ```
 *
 * @param pointer The pointer.
 * @returns It in quotes, cut where long.
 */
export function quotedPointer(pointer: string): string {
  if (pointer.length <= MAX_QUOTED_POINTER) return `"${pointer}"`;
  const slash = pointer.lastIndexOf("/");
  const last = slash > 0 && pointer.length - slash <= MAX_LAST_STEP ? pointer.slice(slash) : "";
  const head = cutUnits(
    last === "" ? pointer : pointer.slice(0, slash),
    MAX_QUOTED_POINTER - 3 - last.length,
  );
  // (a "~" the cut parted from its "0" or "1" left out: alone it is no escape, and no key's character)
  return `"${head.endsWith("~") ? head.slice(0, -1) : head}...${last}"`;
}

/**
 * Escapes one JSON Pointer reference token (RFC 6901): `~` becomes `~0`, `/` becomes `~1`.
 *
 * @example A key with a slash
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapePointer } from "./pointer.ts";
 *
 * assert.equal(escapePointer("a/b~c"), "a~1b~0c");
 * assert.equal(escapePointer("plain"), "plain");
 * ```
 */
export function escapePointer(token: string): string {
  // a loop over short keys costs less than two indexOf calls on some engines
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c === 126 || c === 47) return token.replace(/~/g, "~0").replace(/\//g, "~1");
  }
  return token;
}

/**
 * Unescapes one JSON Pointer reference token: `~1` becomes `/`, then `~0` becomes `~` (in that order, so
 * `~01` stays `~1`).
 *
 * @example Back to the key
 * ```ts
 * import assert from "node:assert/strict";
 * import { unescapePointer } from "./pointer.ts";
 *
 * assert.equal(unescapePointer("a~1b~0c"), "a/b~c");
 * assert.equal(unescapePointer("~01"), "~1");
 * ```
 */
export function unescapePointer(token: string): string {
  return token.indexOf("~") === -1 ? token : token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/**
 * Calls `visit` on every leaf of a JSON value (anything that is not an array or an object) with its JSON
 * Pointer, in document order. With `keys`, every property name too, just before its member, with the
 * member's pointer and `isKey` true. Iterative, so depth never matters. A hole in an array is no leaf (it
 * holds nothing), and a sparse one costs what it holds (see `heldIndices`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { eachLeaf } from "./pointer.ts";
 *
 * const seen: string[] = [];
 * eachLeaf({ a: [1, { b: null }] }, (leaf, path) => seen.push(`${path}=${leaf}`));
 * assert.deepEqual(seen, ["/a/0=1", "/a/1/b=null"]);
 * const named: string[] = [];
 * eachLeaf({ a: { b: 2 } }, (leaf, path, isKey) => named.push(`${isKey ? "key " : ""}${path}=${leaf}`), {
 *   keys: true,
 * });
 * assert.deepEqual(named, ["key /a=a", "key /a/b=b", "/a/b=2"]);
 * ```
 */
export function eachLeaf(
  value: unknown,
  visit: (leaf: unknown, path: string, isKey: boolean) => void,
  options: { keys?: boolean } = {},
): void {
  const withKeys = options.keys === true;
  const stack: [unknown, string, boolean][] = [[value, "", false]];
  while (stack.length > 0) {
    const [v, p, isKey] = stack.pop()!;
    if (isKey) visit(v, p, true);
    else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const c = v[i];
        if (c === undefined && !(i in v)) { // a hole: the rest by what the array holds (it may be 2^32-1 long)
          const held = heldIndices(v, 0, i);
          for (let j = held.length - 1; j >= 0; j--) stack.push([v[held[j]], `${p}/${held[j]}`, false]);
          break;
        }
        stack.push([c, `${p}/${i}`, false]);
      }
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const at = `${p}/${escapePointer(keys[i])}`;
        stack.push([(v as Record<string, unknown>)[keys[i]], at, false]);
        if (withKeys) stack.push([keys[i], at, true]);
      }
    } else visit(v, p, false);
  }
}
