/**
 * A reader for the literal syntaxes models write arguments in when they do not write JSON: Python literals
 * (`'text'`, `True`, `None`, tuples, dicts), and the custom object notation of Gemma (`{key:<|"|>text<|"|>}`)
 * and FunctionGemma (`{key:<escape>text<escape>}`). Also reads a Python-style call `name(key=value, ...)`.
 * Everything is linear in the text read; nesting is bounded.
 *
 * @module
 */
import { defineOwn, isSpace } from "./text.ts";

/** The string and key conventions of one literal syntax. */
export interface LiteralSyntax {
  /** Quote characters that open ordinary strings with backslash escapes (`"'` for Python, `"` for JSON). */
  quotes: string;
  /** Tokens that open and close a raw string with no escapes (Gemma `<|"|>`, FunctionGemma `<escape>`). */
  tokens?: readonly string[];
  /** Object keys may be bare words (`{city: ...}`). */
  bareKeys?: boolean;
  /** A bare word where a value is expected is read as a string (`{unit: celsius}`). */
  bareWords?: boolean;
  /** The characters that end a bare word (default `,}]` and a line break). */
  wordEnds?: string;
}

/** Python literals (also accepts JSON's `true`, `false`, `null`). */
export const PYTHON: LiteralSyntax = { quotes: `"'` };

/** A value that could not be read. */
export const FAIL: unique symbol = Symbol("fail");

/** Whether the number written as `digits` reads back the same: no leading zero, no integer past 2^53. */
function keepsDigits(digits: string): boolean {
  if (/^[-+]?0\d/.test(digits)) return false;
  return !/^[-+]?\d+$/.test(digits) || Number.isSafeInteger(Number(digits));
}

const MAX_DEPTH = 64;
const NUMBER = /[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/y;
const WORD = /[A-Za-z_][\w]*/y;
const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  "0": "\0",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "/": "/",
  "\n": "",
};

/** Reads literal values from `text[pos, limit)`; `pos` is left after the value read. */
export class LiteralReader {
  /** The read position. */
  pos: number;
  #depth = 0;

  /**
   * @param text The whole text.
   * @param pos Where to start reading.
   * @param limit Where reading must stop.
   * @param syntax The literal syntax to read.
   */
  constructor(readonly text: string, pos: number, readonly limit: number, readonly syntax: LiteralSyntax) {
    this.pos = pos;
  }

  /** Moves past white space. */
  space(): void {
    while (this.pos < this.limit && isSpace(this.text, this.pos)) this.pos++;
  }

  /** Whether `token` is next (after white space); moves past it when it is. */
  eat(token: string): boolean {
    this.space();
    if (this.pos + token.length <= this.limit && this.text.startsWith(token, this.pos)) {
      this.pos += token.length;
      return true;
    }
    return false;
  }

  /** Reads one value, or returns {@link FAIL}. */
  value(): unknown {
    this.space();
    if (this.pos >= this.limit || this.#depth > MAX_DEPTH) return FAIL;
    const t = this.text;
    const c = t[this.pos];
    for (const token of this.syntax.tokens ?? []) {
      if (t.startsWith(token, this.pos)) return this.#raw(token);
    }
    if (this.syntax.quotes.includes(c)) return this.#string(c);
    if (c === "[") return this.#list("]");
    if (c === "(") return this.#list(")");
    if (c === "{") return this.#dict();
    NUMBER.lastIndex = this.pos;
    const n = NUMBER.exec(t);
    if (n && this.pos + n[0].length <= this.limit && !this.#wordAt(this.pos + n[0].length)) {
      // Where bare words are text (Gemma), digits a number would change (`007`, past 2^53) stay as written.
      if (this.syntax.bareWords && !keepsDigits(n[0])) return this.#bareWord();
      const num = Number(n[0].replace(/_/g, ""));
      if (Number.isFinite(num)) {
        this.pos += n[0].length;
        return num;
      }
    }
    WORD.lastIndex = this.pos;
    const w = WORD.exec(t);
    if (!w || this.pos + w[0].length > this.limit) return FAIL;
    const word = w[0];
    const known = KEYWORDS.get(word);
    if (known !== undefined) {
      this.pos += word.length;
      return known.value;
    }
    return this.syntax.bareWords ? this.#bareWord() : FAIL;
  }

  /**
   * Reads a Python call `name(key=value, ...)` with keyword arguments only. `name` is `""` when no call head
   * (`name(`) is there; `error` says why the arguments could not be read.
   */
  call(): { name: string; args: Record<string, unknown> } | { name: string; error: string } {
    this.space();
    const head = /[A-Za-z_][\w.-]*/y;
    head.lastIndex = this.pos;
    const m = head.exec(this.text);
    if (!m || this.pos + m[0].length > this.limit) return { name: "", error: "no call here" };
    this.pos += m[0].length;
    if (!this.eat("(")) return { name: "", error: "no call here" };
    const name = m[0];
    const args: Record<string, unknown> = {};
    for (;;) {
      if (this.eat(")")) return { name, args };
      this.space();
      WORD.lastIndex = this.pos;
      const key = this.pos < this.limit ? WORD.exec(this.text) : null;
      if (!key) return this.#callError(name, "expected key=value");
      this.pos += key[0].length;
      if (!this.eat("=")) return this.#callError(name, "expected key=value");
      const v = this.value();
      if (v === FAIL) return this.#callError(name, `could not read the value of ${key[0]}`);
      defineOwn(args, key[0], v);
      if (!this.eat(",") && !this.#peek(")")) return this.#callError(name, "expected , or )");
    }
  }

  #callError(name: string, why: string): { name: string; error: string } {
    if (this.pos >= this.limit) return { name, error: "the call is missing its closing parenthesis" };
    return { name, error: `${why} at offset ${this.pos}` };
  }

  /** Reads the object notation `{key: value, ...}` (keys bare or quoted), or {@link FAIL}. */
  object(): Record<string, unknown> | typeof FAIL {
    this.space();
    if (this.text[this.pos] !== "{") return FAIL;
    const v = this.#dict();
    return v === FAIL ? FAIL : v as Record<string, unknown>;
  }

  #peek(token: string): boolean {
    this.space();
    return this.text.startsWith(token, this.pos);
  }

  #wordAt(i: number): boolean {
    return i < this.limit && /[\w]/.test(this.text[i]);
  }

  #raw(token: string): unknown {
    const start = this.pos + token.length;
    const close = this.text.indexOf(token, start);
    if (close < 0 || close + token.length > this.limit) {
      this.pos = this.limit; // ran out: the string is still open
      return FAIL;
    }
    this.pos = close + token.length;
    return this.text.slice(start, close);
  }

  #string(quote: string): unknown {
    const t = this.text;
    const triple = this.syntax.quotes.includes("'") && t.startsWith(quote.repeat(3), this.pos);
    const close = triple ? quote.repeat(3) : quote;
    let i = this.pos + close.length;
    let s = "";
    let run = i; // start of the current run of plain characters
    while (i < this.limit) {
      const c = t.charCodeAt(i);
      if (c === 92 && i + 1 < this.limit) {
        s += t.slice(run, i) + this.#escape(i);
        i = this.#escapeEnd(i);
        run = i;
        continue;
      }
      if (t.startsWith(close, i)) {
        this.pos = i + close.length;
        return s + t.slice(run, i);
      }
      i++;
    }
    this.pos = this.limit; // ran out: the string is still open
    return FAIL;
  }

  #escape(i: number): string {
    const n = this.text[i + 1];
    if (n in ESCAPES) return ESCAPES[n];
    const hex = n === "x" ? 2 : n === "u" ? 4 : n === "U" ? 8 : 0;
    if (hex > 0) {
      const digits = this.text.slice(i + 2, i + 2 + hex);
      if (/^[0-9a-fA-F]+$/.test(digits) && digits.length === hex) {
        const code = parseInt(digits, 16);
        if (code <= 0x10ffff) return String.fromCodePoint(code);
      }
    }
    return "\\" + n; // Python keeps unknown escapes as written
  }

  #escapeEnd(i: number): number {
    const n = this.text[i + 1];
    const hex = n === "x" ? 2 : n === "u" ? 4 : n === "U" ? 8 : 0;
    if (hex > 0 && /^[0-9a-fA-F]+$/.test(this.text.slice(i + 2, i + 2 + hex))) return i + 2 + hex;
    return i + 2;
  }

  #bareWord(): unknown {
    const start = this.pos;
    let i = start;
    const ends = this.syntax.wordEnds ?? ",}]\n";
    while (i < this.limit && !ends.includes(this.text[i])) i++;
    const word = this.text.slice(start, i).trim();
    if (word === "") return FAIL;
    this.pos = i;
    return word;
  }

  #list(close: string): unknown {
    const items: unknown[] = [];
    this.pos++;
    this.#depth++;
    for (;;) {
      if (this.eat(close)) {
        this.#depth--;
        return items;
      }
      const v = this.value();
      if (v === FAIL) return FAIL;
      items.push(v);
      if (!this.eat(",") && !this.#peek(close)) return FAIL;
    }
  }

  #dict(): unknown {
    const obj: Record<string, unknown> = {};
    this.pos++;
    this.#depth++;
    for (;;) {
      if (this.eat("}")) {
        this.#depth--;
        return obj;
      }
      const key = this.#key();
      if (key === FAIL || !this.eat(":")) return FAIL;
      const v = this.value();
      if (v === FAIL) return FAIL;
      defineOwn(obj, key, v);
      if (!this.eat(",") && !this.#peek("}")) return FAIL;
    }
  }

  #key(): string | typeof FAIL {
    this.space();
    if (this.syntax.bareKeys) {
      // Any run of text up to the colon, as llama.cpp's Gemma 4 grammar takes it (`full name:`, `user-id:`);
      // bounded, and never across the characters that open or end a value.
      const bare = /[^\s:{}[\],<>"'][^:{}[\],<>"'\n]{0,127}/y;
      bare.lastIndex = this.pos;
      const m = bare.exec(this.text);
      if (m && this.pos + m[0].length <= this.limit) {
        const after = this.pos + m[0].length;
        if (this.text[after] === ":") {
          this.pos = after;
          return m[0].trimEnd();
        }
      }
    }
    const k = this.value();
    if (typeof k === "string") return k;
    if (typeof k === "number") return String(k);
    return FAIL;
  }
}

const KEYWORDS = new Map<string, { value: unknown }>([
  ["True", { value: true }],
  ["False", { value: false }],
  ["None", { value: null }],
  ["true", { value: true }],
  ["false", { value: false }],
  ["null", { value: null }],
]);
