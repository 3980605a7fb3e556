/**
 * Small, linear-time text helpers shared by the readers.
 *
 * @module
 */

/** Whether the code unit at `i` is white space (the JSON set plus the other ASCII and Unicode spaces). */
export function isSpace(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  return c > 127 && /\s/.test(text[i]);
}

/** The first index at or after `i` that is not white space (or `text.length`). */
export function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text, i)) i++;
  return i;
}

/** `end` moved back over white space, never below `start`. */
export function trimEnd(text: string, start: number, end: number): number {
  while (end > start && isSpace(text, end - 1)) end--;
  return end;
}

/**
 * The index one past the JSON object or array starting at `start` (strings and escapes respected), or `-1`
 * when it does not close before `limit`. Linear in the distance scanned.
 */
export function scanValueEnd(text: string, start: number, limit: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/** `text.indexOf(needle, from)`, looking at most `span` code units ahead; `-1` beyond that. */
export function boundedIndexOf(text: string, needle: string, from: number, span: number): number {
  const i = text.slice(from, from + span + needle.length).indexOf(needle);
  return i < 0 ? -1 : from + i;
}

/** Sets an own property even for `__proto__`, never touching a prototype. */
export function defineOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `text` with one leading and one trailing line break removed (how XML formats frame a value). */
export function trimOneNewline(text: string): string {
  let s = text;
  if (s.startsWith("\r\n")) s = s.slice(2);
  else if (s.startsWith("\n")) s = s.slice(1);
  if (s.endsWith("\r\n")) s = s.slice(0, -2);
  else if (s.endsWith("\n")) s = s.slice(0, -1);
  return s;
}

/** Escapes a literal for use inside a regular expression. */
export function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Decodes the five XML entities (and numeric ones) in an attribute or value. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(quot|amp|lt|gt|apos));/g, (m, dec, hex, name) => {
    if (name) return { quot: '"', amp: "&", lt: "<", gt: ">", apos: "'" }[name as "quot"];
    const code = dec ? Number(dec) : parseInt(hex, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : m;
  });
}

/**
 * `text.indexOf(needle, from)` remembered per needle, so a text with many unclosed markers is still read in
 * linear time: a search that found nothing (or found a later match) answers every later search from there.
 */
export type Finder = (needle: string, from: number) => number;

/** Makes a {@link Finder} over `text`. */
export function makeFinder(text: string): Finder {
  const memo = new Map<string, { from: number; at: number }>();
  return (needle, from) => {
    const hit = memo.get(needle);
    if (hit && from >= hit.from && (hit.at < 0 || hit.at >= from)) return hit.at;
    const at = text.indexOf(needle, from);
    memo.set(needle, { from, at });
    return at;
  };
}
