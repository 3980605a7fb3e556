/**
 * A careful JSON reader for model-written argument text. It never throws, never touches a prototype
 * (`__proto__` becomes an ordinary own property, as with `JSON.parse`), bounds nesting depth and input size,
 * reports where parsing failed, and can record where every string value sits in the raw text so findings
 * can point back into it.
 *
 * @module
 */
import { escapePointer, unescapePointer } from "./pointer.ts";
import { errorText } from "./values.ts";

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

class Fail {
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
  return slowParse(text, maxDepth, options.locate === true);
}

/** Returns -1 when `value` nests no deeper than `max`, else a depth beyond it. Never throws, even on cycles. */
export function depthOver(value: unknown, max: number): number {
  if (typeof value !== "object" || value === null) return -1;
  try {
    return fits(value, max) ? -1 : max + 1;
  } catch {
    return max + 1; // a stack overflow only happens far beyond any sensible limit
  }
}

/** Recursive and allocation-free; recursion depth is bounded by `room`, so cycles end too. */
function fits(v: object, room: number): boolean {
  if (room <= 0) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const c = v[i];
      if (typeof c === "object" && c !== null && !fits(c, room - 1)) return false;
    }
    return true;
  }
  for (const k in v) {
    const c = (v as Record<string, unknown>)[k];
    if (typeof c === "object" && c !== null && !fits(c, room - 1)) return false;
  }
  return true;
}

function slowParse(text: string, maxDepth: number, locate: boolean): JsonParse {
  let i = 0;
  const n = text.length;
  const strings: StringLocation[] | undefined = locate ? [] : undefined;

  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
  };
  const describeAt = (p: number) =>
    p >= n ? "the end of the text" : `${JSON.stringify(text[p])} at offset ${p}`;

  const str = (): string => {
    // at opening quote
    const open = i;
    i++;
    let out = "";
    let runStart = i;
    while (true) {
      if (i >= n) throw new Fail(`a string that starts at offset ${open} is never closed`, n, "syntax");
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(runStart, i);
        i++;
        return out;
      }
      if (c < 32) {
        throw new Fail(`an unescaped control character sits inside a string at offset ${i}`, i, "syntax");
      }
      if (c === 92) {
        out += text.slice(runStart, i);
        const e = text[i + 1];
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            throw new Fail(`a \\u escape at offset ${i} needs four hex digits`, i, "syntax");
          }
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && e in ESC) {
          out += ESC[e];
          i += 2;
        } else {
          throw new Fail(`an invalid escape \\${e ?? ""} at offset ${i}`, i, "syntax");
        }
        runStart = i;
        continue;
      }
      i++;
    }
  };

  const num = (): number => {
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = i;
    const r = m.exec(text);
    if (!r || r[0] === "" || r[0] === "-") throw new Fail(`unexpected ${describeAt(i)}`, i, "syntax");
    i += r[0].length;
    return Number(r[0]);
  };

  const value = (depth: number, path: string): unknown => {
    ws();
    if (i >= n) throw new Fail("the text ended where a value was expected", n, "syntax");
    const c = text[i];
    if (c === "{") {
      if (depth >= maxDepth) throw new Fail(`the arguments nest deeper than ${maxDepth} levels`, i, "depth");
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      while (true) {
        ws();
        if (text[i] !== '"') {
          throw new Fail(`expected a quoted property name, found ${describeAt(i)}`, i, "syntax");
        }
        const key = str();
        ws();
        if (text[i] !== ":") {
          throw new Fail(`expected ":" after a property name, found ${describeAt(i)}`, i, "syntax");
        }
        i++;
        const v = value(depth + 1, strings ? path + "/" + escapePointer(key) : path);
        if (key === "__proto__") {
          Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
        } else obj[key] = v;
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        throw new Fail(`expected "," or "}" in an object, found ${describeAt(i)}`, i, "syntax");
      }
    }
    if (c === "[") {
      if (depth >= maxDepth) throw new Fail(`the arguments nest deeper than ${maxDepth} levels`, i, "depth");
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      while (true) {
        arr.push(value(depth + 1, strings ? path + "/" + arr.length : path));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        throw new Fail(`expected "," or "]" in an array, found ${describeAt(i)}`, i, "syntax");
      }
    }
    if (c === '"') {
      if (strings) strings.push({ path, quote: i });
      return str();
    }
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    return num();
  };

  try {
    const v = value(0, "");
    ws();
    if (i < n) throw new Fail(`unexpected ${describeAt(i)} after the JSON value`, i, "syntax");
    return strings ? { ok: true, value: v, strings } : { ok: true, value: v };
  } catch (e) {
    if (e instanceof Fail) return { ok: false, error: e.error, position: e.position, reason: e.reason };
    // RangeError from a runaway stack can only come from a maxDepth set absurdly high
    return { ok: false, error: "the arguments nest too deeply to read", position: i, reason: "depth" };
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

/** Parses JSON without throwing. */
export function parseJsonSafe(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
}
