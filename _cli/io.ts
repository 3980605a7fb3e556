/**
 * Shared helpers for the `toolguard` subcommands: argument parsing that refuses unknown flags, reading a
 * file or `-` for stdin, JSON and JSONC parsing with file:line:column errors, reading a tools file; with the
 * output helpers of `output.ts` (JSON output with `--pretty`, colour, the exit-code convention), re-exported
 * here.
 *
 * Each subcommand module exports `main(args: string[]): Promise<number>` and wraps its body in
 * {@linkcode runMain} so a {@linkcode UsageError} becomes exit 2 with a hint.
 *
 * @example Strict flags, and JSON errors that name the line and column
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCommandLine, parseJsonText, UsageError } from "./io.ts";
 *
 * const { values, positionals } = parseCommandLine(["--pretty", "tools.json"], {
 *   command: "lint",
 *   options: { pretty: { type: "boolean" } },
 * });
 * assert.equal(values.pretty, true);
 * assert.deepEqual(positionals, ["tools.json"]);
 *
 * await assert.rejects(
 *   parseJsonText('{\n  "a": 1,\n  "b": ]\n}', "tools.json"),
 *   (error) => error instanceof UsageError && error.message === "tools.json:3:8: expected a value",
 * );
 * ```
 *
 * @module
 */

import type * as NodeFs from "node:fs";
import type * as NodeFsPromises from "node:fs/promises";
import type NodeProcess from "node:process";
import type * as NodeUtil from "node:util";
import type { JSONScanner, Node as JsonNode, ParseError } from "jsonc-parser";
import {
  editDistance,
  errorText,
  givenValue,
  isHighSurrogate,
  isLowSurrogate,
  lazy,
  nodeBuiltin,
  orList,
  plural,
} from "../_common/values.ts";
import { concatBytes } from "../_common/bytes.ts";
export { MAX_TIMER_MS } from "../_common/values.ts";
import {
  denoStd,
  encoder,
  EXIT_FAIL,
  EXIT_USAGE,
  paint,
  safeText,
  shownText,
  VERSION_LINE,
  writeErr,
  writeOut,
} from "./output.ts";

export {
  captureOutput,
  type Colour,
  EXIT_FAIL,
  EXIT_OK,
  EXIT_USAGE,
  isTerminal,
  paint,
  printJson,
  type PrintJsonOptions,
  safeText,
  shownText,
  useColour,
  wantsJson,
  writeErr,
  writeOut,
} from "./output.ts";

/**
 * A mistake in how the program was called (unknown flag, missing file, malformed JSON input). The
 * subcommand ends with exit 2, printing the message and the hint.
 */
export class UsageError extends Error {
  /** What to do about it, e.g. "run `toolguard lint --help`". */
  hint: string | undefined;
  /**
   * @param message What is wrong, naming the file, line and column when there is one.
   * @param hint What to do about it.
   */
  constructor(message: string, hint?: string) {
    super(message);
    this.name = "UsageError";
    this.hint = hint;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------------------

/** Set once stdin has been read: it can be read only once. */
let stdinTaken = false;

/**
 * The largest input a command reads whole (a tools file, calls, a result, text to scan): 64 MiB, far above
 * any such file. Beyond it the command stops reading and refuses, instead of filling memory until the
 * runtime dies (`toolguard scan /dev/zero`) or reading an endless stream for ever. A call log has no such
 * bound: `toolguard stats` reads it line by line.
 */
export const MAX_INPUT_BYTES: number = 64 * 1024 * 1024;

/**
 * Stdin as a stream of byte chunks; taking it twice is a {@linkcode UsageError} (the second would find
 * nothing), and so is a closed stdin (see {@linkcode stdinIsNull}). On a terminal, a line on stderr says
 * that it waits for input.
 */
export async function* stdinChunks(): AsyncGenerator<Uint8Array> {
  if (stdinTaken) {
    throw new UsageError("stdin was already read for another input", "give only one input as -");
  }
  stdinTaken = true;
  if (stdinIsNull()) {
    throw new UsageError(
      "stdin is closed (or is /dev/null), so - has nothing to read",
      "pipe the input in (`CMD | toolguard ... -`), redirect a file to it (`- < FILE`), or give the file's " +
        "path instead of -",
    );
  }
  const deno = denoStd();
  const proc = deno ? undefined : nodeBuiltin<typeof NodeProcess>("node:process");
  if (deno ? deno.stdin.isTerminal() : proc!.stdin.isTTY === true) {
    writeErr("toolguard: reading stdin from the terminal; end it with Ctrl-D (Ctrl-Z, Enter on Windows)\n");
  }
  if (deno) {
    yield* deno.stdin.readable;
    return;
  }
  for await (const chunk of proc!.stdin) {
    yield typeof chunk === "string" ? encoder.encode(chunk) : chunk as Uint8Array;
  }
}

/**
 * True when stdin is the null device. Deno and Bun (as Node) open /dev/null in place of a closed stdin
 * before any code runs, so `toolguard scan - <&-` read an empty text and reported it clean: a command run
 * without its input passed as one that checked nothing. A pipe or file that is empty is open, and read as
 * empty. (Where `/dev/stdin` is not there, as on Windows, false: nothing to tell.)
 */
function stdinIsNull(): boolean {
  return sameFile("/dev/stdin", "/dev/null");
}

/** A file's bytes as a stream of chunks: Deno's own call under Deno (node:fs would load the Node layer). */
async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  const deno = denoStd();
  if (deno) {
    // Opened here, read through its stream, which closes the file when done or cancelled.
    yield* (await deno.open(path)).readable;
    return;
  }
  // Under Bun too: `Bun.file(path).stream()` fails on a character device (EPERM from epoll).
  const handle = await nodeBuiltin<typeof NodeFsPromises>("node:fs/promises").open(path);
  try {
    for (;;) {
      const { bytesRead, buffer } = await handle.read({ buffer: new Uint8Array(65_536) });
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * All the bytes of `chunks`, at most {@linkcode MAX_INPUT_BYTES}: more is a {@linkcode UsageError}, and the
 * rest is not read (an endless stream, such as `/dev/zero`, ends there too).
 */
async function readWhole(chunks: AsyncIterable<Uint8Array>, name: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > MAX_INPUT_BYTES) {
      throw new UsageError(
        `${shownText(name)} is larger than ${
          MAX_INPUT_BYTES / 1024 / 1024
        } MiB, more than toolguard reads at once`,
        "give a smaller input (split a long text, e.g. `split -b 32m`, and check each part)",
      );
    }
    parts.push(chunk);
  }
  return concatBytes(parts, total);
}

/** How an input path is named in messages: `-` is `<stdin>`. */
export function inputName(path: string): string {
  return path === "-" ? "<stdin>" : path;
}

/** What {@linkcode readText} does with bytes that are not UTF-8. */
export interface ReadTextOptions {
  /**
   * `"refuse"` (default): a {@linkcode UsageError} naming the line and column, as the text checked would not
   * be the bytes given; `"replace"`: each becomes U+FFFD, with a warning on stderr (for text that is only
   * scanned, where the rest still counts).
   */
  invalidUtf8?: "refuse" | "replace";
}

/**
 * Reads a whole file as UTF-8 text, or stdin when `path` is `-`, up to {@linkcode MAX_INPUT_BYTES}. A BOM
 * is dropped. An unreadable or larger file is a {@linkcode UsageError} naming the file and the reason; so,
 * by default, are bytes that are not UTF-8.
 */
export async function readText(path: string, options: ReadTextOptions = {}): Promise<string> {
  if (path === "") throw emptyPath("the file name", "give a path, or - to read stdin");
  let bytes: Uint8Array;
  try {
    bytes = await readWhole(path === "-" ? stdinChunks() : fileChunks(path), inputName(path));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw cannotRead(
      inputName(path),
      error,
      path === "-"
        ? "give stdin a file or a pipe (`< FILE`, `CMD |`)"
        : "check the path, or pass - to read stdin",
    );
  }
  const text = new TextDecoder().decode(bytes); // drops a BOM; bad bytes become U+FFFD
  const bad = text.includes("\uFFFD") ? firstReplaced(text, bytes) : -1;
  if (bad < 0) return text;
  const { line, column } = lineColumn(text, bad);
  const where = `${shownText(inputName(path))}:${line}:${column}`;
  if (options.invalidUtf8 === "replace") {
    writeErr(
      `${paint("yellow", "warning", "stderr")}: ${
        safeText(where)
      }: bytes that are not UTF-8 read as U+FFFD\n`,
    );
    return text;
  }
  throw new UsageError(`${where}: bytes that are not UTF-8`, "save the file as UTF-8");
}

/**
 * Where the first U+FFFD of `text` stands for bytes that were not UTF-8 (one written as its own three bytes
 * is the real character), or -1.
 */
function firstReplaced(text: string, bytes: Uint8Array): number {
  let offset = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0; // the BOM the decoder drops
  let from = 0;
  for (let at = text.indexOf("\uFFFD"); at >= 0; at = text.indexOf("\uFFFD", at + 1)) {
    // The byte offset of `at`, from the last one's: each stretch is encoded once, however many there are.
    offset += encoder.encode(text.slice(from, at)).length;
    from = at;
    if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) return at;
  }
  return -1;
}

/** Fixed words for the error codes a file operation meets, so Deno and Bun say the same. */
const IO_REASONS: Record<string, string> = {
  ENOENT: "no such file",
  NotFound: "no such file",
  EISDIR: "it is a directory",
  IsADirectory: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
  NotADirectory: "a part of the path is not a directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  PermissionDenied: "permission denied",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "too many levels of symbolic links",
  ENXIO: "it is a FIFO that no process reads",
  ENOSPC: "no space left on the device",
  EROFS: "the file system is read-only",
};

/**
 * Why a file could not be read or written, in the same words on every runtime for the common causes (by
 * the error's `code`, or Deno's error name), else the runtime's own message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ioReason } from "./io.ts";
 *
 * assert.equal(ioReason(Object.assign(new Error("ENOENT: x"), { code: "ENOENT" })), "no such file");
 * assert.equal(ioReason(new Error("disk on fire")), "disk on fire");
 * ```
 *
 * @param error What the file operation threw.
 * @returns A short reason, without the path.
 */
export function ioReason(error: unknown): string {
  return knownReason(error) ?? knownReason((error as { cause?: unknown })?.cause) ?? errorText(error);
}

/** The fixed words for an error's code or name (Deno's), or undefined. */
function knownReason(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  const name = (error as { name?: unknown })?.name;
  return (typeof code === "string" && Object.hasOwn(IO_REASONS, code) ? IO_REASONS[code] : undefined) ??
    (typeof name === "string" && Object.hasOwn(IO_REASONS, name) ? IO_REASONS[name] : undefined);
}

/**
 * The {@linkcode UsageError} for an input that cannot be read: `cannot read PATH: REASON`, with `hint`. A
 * name holding U+FFFD that is not found most likely had bytes that are not UTF-8, which the runtime turned
 * into U+FFFD before toolguard saw them: the file is there, under a name no argument can carry, and the
 * hint says so.
 *
 * @param path The path as given.
 * @param error What the file operation threw.
 * @param hint What to do, for any other case.
 * @returns The error to throw.
 */
export function cannotRead(path: string, error: unknown, hint: string): UsageError {
  const reason = ioReason(error);
  return new UsageError(
    `cannot read ${shownText(path)}: ${reason}`,
    path.includes("\uFFFD") && reason === IO_REASONS.ENOENT
      ? "the name holds U+FFFD, which is what bytes that are not UTF-8 become in an argument, so a file " +
        "named with such bytes cannot be named here: pass it on stdin (`toolguard COMMAND - < FILE`) or " +
        "rename it"
      : hint,
  );
}

/**
 * The {@linkcode UsageError} for an output file that cannot be opened or written: `cannot open log file PATH:
 * REASON` (`--log`) or `cannot write PATH: REASON`, with a hint that fits the cause: a FIFO that no process
 * reads wants its reader started, a folder wants a file name in it; anything else, a path that can be
 * written.
 *
 * @example A FIFO without a reader
 * ```ts
 * import assert from "node:assert/strict";
 * import { cannotWrite } from "./io.ts";
 *
 * const e = cannotWrite("html", "out.fifo", Object.assign(new Error("ENXIO"), { code: "ENXIO" }));
 * assert.equal(e.message, "cannot write out.fifo: it is a FIFO that no process reads");
 * assert.match(e.hint ?? "", /^start the program that reads out\.fifo first/);
 * ```
 *
 * @param option The option that named the file, without dashes (`log`, `html`).
 * @param path The path as given.
 * @param error What the file operation threw.
 * @returns The error to throw.
 */
export function cannotWrite(option: string, given: string, error: unknown): UsageError {
  const reason = ioReason(error);
  const path = shownText(given);
  const hint = reason === IO_REASONS.ENXIO
    ? `start the program that reads ${path} first (it waits for what is written there), or give --${option} ` +
      "a regular file"
    : reason === IO_REASONS.EISDIR
    ? `give --${option} a file name inside that folder`
    : `give --${option} a path in a folder you can write to`;
  const what = option === "log" ? `cannot open log file ${path}` : `cannot write ${path}`;
  return new UsageError(`${what}: ${reason}`, hint);
}

/**
 * The `onError` of the `jsonlLog` behind `--log`: the first line that cannot be written (a full disk, a
 * revoked permission) is reported on stderr, once, since the rest would fail alike. The run or the relay
 * goes on; the user learns that the log is missing lines instead of finding out when reading it.
 *
 * @param command The subcommand, for the message (`run`, `mcp`).
 * @param path The log file.
 * @returns A function for `JsonlLogOptions.onError`.
 */
export function logWriteWarning(command: string, path: string): (error: Error) => void {
  let told = false;
  return (error) => {
    if (told) return;
    told = true;
    writeErr(
      `${paint("yellow", "warning", "stderr")}: toolguard ${command}: cannot write to the log ${
        shownText(path)
      } (${safeText(ioReason(error))}); lines are missing from it\n`,
    );
  };
}

/**
 * A path option that names a file to write (`--log`, `--html`), or undefined when absent. `-` is refused:
 * it means stdin where a command reads, and would otherwise create a file named `-`.
 */
export function outputPathOption(values: OptionValues, name: string): string | undefined {
  const path = stringOption(values, name);
  if (path === "-") {
    throw new UsageError(`--${name} - would write a file named "-"`, `give --${name} a file path`);
  }
  if (path === "") throw emptyPath(`--${name}`, `give --${name} a file path`);
  return path;
}

/**
 * `--pins FILE`: the pin file, the default one when absent; an empty string is refused (an unset variable
 * would read as a file with no pins, and pins would be written nowhere).
 */
export function pinsPathOption(values: OptionValues, fallback: () => string): string {
  const path = stringOption(values, "pins");
  if (path === "") throw emptyPath("--pins", "leave --pins out for the default file, or give --pins none");
  return path ?? fallback();
}

/**
 * The {@linkcode UsageError} for a path given as an empty string: a variable left unset in a script
 * (`--log "$LOG"`), which would otherwise read as "no such file" or, for `--cwd`, as no option at all.
 */
export function emptyPath(what: string, hint: string): UsageError {
  return new UsageError(`${what} is an empty string, not a path`, hint);
}

/** The device and inode of an existing path (links followed); throws when there is none. */
function statPath(path: string): { dev: number; ino: number | null } {
  const deno = denoStd();
  return deno ? deno.statSync(path) : nodeBuiltin<typeof NodeFs>("node:fs").statSync(path);
}

/** True when both paths name one existing file (the same device and inode: links and `./x` included). */
export function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const x = statPath(a);
    const y = statPath(b);
    return x.ino !== null && x.ino !== 0 && x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false; // one of them does not exist (yet): not the same file
  }
}

/** True when something exists at `path` (false too when that cannot be told). */
function pathExists(path: string): boolean {
  try {
    statPath(path);
    return true;
  } catch {
    return false;
  }
}

const PARSE_ERRORS: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected a colon after the property name",
  CommaExpected: "expected a comma",
  CloseBraceExpected: "expected a closing brace }",
  CloseBracketExpected: "expected a closing bracket ]",
  EndOfFileExpected: "unexpected text after the end of the JSON value",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "number cut short",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in a string",
};

const PARSE_ERROR_NAMES = [
  "",
  "InvalidSymbol",
  "InvalidNumberFormat",
  "PropertyNameExpected",
  "ValueExpected",
  "ColonExpected",
  "CommaExpected",
  "CloseBraceExpected",
  "CloseBracketExpected",
  "EndOfFileExpected",
  "InvalidCommentToken",
  "UnexpectedEndOfComment",
  "UnexpectedEndOfString",
  "UnexpectedEndOfNumber",
  "InvalidUnicode",
  "InvalidEscapeCharacter",
  "InvalidCharacter",
];

/**
 * The 1-based line and column of a string offset, as an editor shows them: a line ends at LF, CR LF or a
 * lone CR, and the column counts characters (code points), so an emoji or any other character beyond the
 * BMP before the place counts once, not as its two UTF-16 units.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineColumn } from "./io.ts";
 *
 * assert.deepEqual(lineColumn("ab\r\ncd", 5), { line: 2, column: 2 });
 * assert.deepEqual(lineColumn("old\rmac", 5), { line: 2, column: 2 });
 * assert.deepEqual(lineColumn('"\u{1f600}", ]', 6), { line: 1, column: 6 }); // the ] after one emoji
 * ```
 *
 * @param text The text.
 * @param offset An index into the string (UTF-16 units), e.g. a parser's error offset.
 * @returns The line and the column.
 */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  return lineLocator(text)(offset);
}

/**
 * {@linkcode lineColumn} for many offsets of one text: each call goes on from where the last one stopped
 * (and starts again from the top only for an offset before it), so offsets in order cost one pass over the
 * text in all. One call per finding from the top cost a finding near the end of a 10 MB text the whole
 * text each: 17 s for 1000 findings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineLocator } from "./io.ts";
 *
 * const at = lineLocator("one\ntwo\nthree");
 * assert.deepEqual(at(5), { line: 2, column: 2 });
 * assert.deepEqual(at(10), { line: 3, column: 3 });
 * assert.deepEqual(at(1), { line: 1, column: 2 }); // back again: from the top
 * ```
 *
 * @param text The text.
 * @returns A function from an index into the string to its line and column.
 */
export function lineLocator(text: string): (offset: number) => { line: number; column: number } {
  let at = 0;
  let line = 1;
  let column = 1;
  return (offset) => {
    const end = Math.max(0, Math.min(offset, text.length));
    if (end < at) [at, line, column] = [0, 1, 1];
    for (; at < end; at++) {
      const c = text.charCodeAt(at);
      if (c === 10 || (c === 13 && text.charCodeAt(at + 1) !== 10)) {
        line++;
        column = 1;
      } else if (!(isLowSurrogate(c) && at > 0 && isHighSurrogate(text.charCodeAt(at - 1)))) {
        column++; // the second half of a surrogate pair is not a character of its own
      }
    }
    return { line, column };
  };
}

/** Builds a value from a parse tree with own properties only: a `__proto__` key stays a plain key. */
function toValue(node: JsonNode): unknown {
  switch (node.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const prop of node.children ?? []) {
        const [key, value] = prop.children ?? [];
        if (key === undefined || value === undefined) continue;
        Object.defineProperty(out, String(key.value), {
          value: toValue(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    case "array":
      return (node.children ?? []).map(toValue);
    default:
      return node.value;
  }
}

/**
 * Parses JSON or JSONC (comments and trailing commas allowed). Any syntax error is a rejection with a
 * {@linkcode UsageError} whose message starts `FILE:LINE:COLUMN:` and says what was expected.
 * Keys such as `__proto__` become ordinary own properties, never a prototype.
 *
 * @param text The text to parse.
 * @param file The name to use in messages (`-` is shown as `<stdin>`).
 * @returns The parsed value.
 */
export async function parseJsonText(text: string, file: string): Promise<unknown> {
  const name = shownText(inputName(file));
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (source.trim() === "") {
    throw new UsageError(
      `${name}: the input is empty; expected JSON`,
      file === "-"
        ? "nothing came through stdin: check the command that pipes the JSON in, or give the file's path " +
          "instead of -"
        : "give a file that holds JSON",
    );
  }
  try {
    return JSON.parse(source); // plain JSON (own keys only, `__proto__` too, as below)
  } catch {
    // Comments, trailing commas or a syntax error: the JSONC parser reads the first two and locates the third.
  }
  const { createScanner, parseTree } = await jsoncParser();
  // The JSONC parser recurses: deeper text would exhaust the stack at a depth that differs by runtime.
  if (nestingDepth(createScanner(source, true)) > MAX_JSONC_DEPTH) {
    throw new UsageError(
      `${name}: nested deeper than ${MAX_JSONC_DEPTH} levels, too deep to read with comments or to locate a ` +
        "syntax error in",
      "remove the comments and trailing commas (plain JSON is read at any depth), or flatten the data",
    );
  }
  const errors: ParseError[] = [];
  const tree = parseTree(source, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || tree === undefined) {
    const first = errors[0];
    const code = PARSE_ERROR_NAMES[first?.error ?? 4] ?? "ValueExpected";
    const offset = first === undefined
      ? 0
      : faultInToken(source, first.offset, first.offset + first.length, code);
    const { line, column } = lineColumn(source, offset);
    const more = errors.length > 1
      ? ` (and ${errors.length - 1} more ${plural(errors.length - 1, "error")})`
      : "";
    throw new UsageError(
      `${name}:${line}:${column}: ${PARSE_ERRORS[code] ?? code}${more}`,
      "fix the JSON at that place (comments and trailing commas are allowed)",
    );
  }
  return toValue(tree);
}

/**
 * Where in a faulty string token the fault is: the JSONC parser reports a whole string's start for a raw
 * control character, a bad escape or a bad `\u` inside it, which in a long string is far from the fault.
 */
function faultInToken(source: string, start: number, end: number, code: string): number {
  if (code !== "InvalidCharacter" && code !== "InvalidEscapeCharacter" && code !== "InvalidUnicode") {
    return start;
  }
  for (let i = start + 1; i < end; i++) {
    const c = source.charCodeAt(i);
    if (c < 0x20 && code === "InvalidCharacter") return i;
    if (c !== 0x5c) continue; // a backslash
    const next = source[i + 1] ?? "";
    if (next === "u") {
      if (code === "InvalidUnicode" && !/^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) return i;
    } else if (code === "InvalidEscapeCharacter" && !'"\\/bfnrt'.includes(next)) return i;
    i++; // the escaped character
  }
  return start;
}

/** The deepest nesting {@linkcode parseJsonText} reads through the JSONC parser. */
const MAX_JSONC_DEPTH = 1000;

/** How deep the brackets and braces of a JSONC text nest, from its tokens (strings and comments skipped). */
function nestingDepth(scanner: JSONScanner): number {
  // SyntaxKind (a const enum in jsonc-parser): 1 `{`, 2 `}`, 3 `[`, 4 `]`, 17 end of text.
  let depth = 0;
  let deepest = 0;
  for (let token = scanner.scan(); token !== 17; token = scanner.scan()) {
    if (token === 1 || token === 3) deepest = Math.max(deepest, ++depth);
    else if (token === 2 || token === 4) depth--;
  }
  return deepest;
}

/** Reads a file (or `-` for stdin) and parses it as JSON or JSONC; see {@linkcode parseJsonText}. */
export async function readJson(path: string): Promise<unknown> {
  return await parseJsonText(await readText(path), path);
}

/**
 * The JSONC parser (an npm package), loaded only for text that `JSON.parse` refuses: under Deno, loading an
 * npm package costs tens of milliseconds, more than the rest of a subcommand's start.
 */
const jsoncParser = lazy(() => import("jsonc-parser"));

// ---------------------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------------------

/** One option in the `node:util` `parseArgs` format. */
export interface OptionSpec {
  /** `"string"` takes a value; `"boolean"` is a switch. */
  type: "string" | "boolean";
  /** A one-letter alias. */
  short?: string;
  /** True when the option may be given more than once (values collected in an array). */
  multiple?: boolean;
}

/** What {@linkcode parseCommandLine} needs to know about a subcommand. */
export interface CommandSpec {
  /** The subcommand name, for messages (`lint`). */
  command: string;
  /** Its options. `--help`/`-h` and `--version`/`-V` are added automatically. */
  options: Record<string, OptionSpec>;
  /**
   * True when its positional arguments are files, so that one whose name starts with `-` is given after
   * `--` (not for `run`, where `--` starts the tool's command).
   */
  fileOperands?: boolean;
}

/** Parsed options: strings, booleans, or arrays of them for `multiple` options. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * What a `node:util` `parseArgs` error says, in the same words on every runtime: without its hint about
 * positionals that begin with "-" (the caller's own hint says more), with the dash Bun leaves off an
 * unknown letter of a group (`-xy`; Node and Deno say '-x'), a flag followed by a value that starts with
 * a dash said in one line instead of three, and a flag without its value named plainly.
 *
 * @example Bun's wording made Node's
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArgsMessage } from "./io.ts";
 *
 * assert.equal(parseArgsMessage(new TypeError("Unknown option 'x'")), "Unknown option '-x'");
 * const hinted = "Unknown option '--bogus'. To specify a positional argument starting with a '-', ...";
 * assert.equal(parseArgsMessage(new TypeError(hinted)), "Unknown option '--bogus'");
 * const missing = "Option '-t, --tools <value>' argument missing";
 * assert.equal(parseArgsMessage(new TypeError(missing)), "--tools needs a value");
 * const ambiguous = "Option '--timeout' argument is ambiguous.\nDid you forget to specify the option " +
 *   "argument for '--timeout'?\nTo specify an option argument starting with a dash use '--timeout=-XYZ'.";
 * assert.equal(
 *   parseArgsMessage(new TypeError(ambiguous)),
 *   "Option '--timeout' is followed by a value that starts with a dash; to give it, write it as '--timeout=-XYZ'",
 * );
 * ```
 *
 * @param error What `parseArgs` threw.
 * @returns Its message, reworded.
 */
export function parseArgsMessage(error: unknown): string {
  return errorText(error).replace(/\. To specify a positional argument.*$/s, "")
    .replace(/^Unknown option '([^-])'/, "Unknown option '-$1'")
    .replace(
      /^Unknown option '(.*)'$/s,
      (_, flag: string) => `Unknown option '${shownText(flag)}'`,
    )
    .replace(/^Option '(?:-\w, )?(--[^ ']+) <value>' argument missing$/, "$1 needs a value")
    // Three lines of which the last says what to do: one line that says it.
    .replace(
      /^Option '([^']+)' argument is ambiguous\.\s.*use ('[^']+'(?: or '[^']+')?)\.?$/s,
      "Option '$1' is followed by a value that starts with a dash; to give it, write it as $2",
    );
}

/**
 * The options every subcommand takes: `--help`, and the program's `--version`, which prints the version
 * after a command too, as `deno fmt --version` and `bun test --version` do (the version is the program's:
 * no command has one of its own).
 */
const AUTOMATIC_OPTIONS: Record<string, OptionSpec> = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
};

/**
 * Parses a subcommand's arguments with `node:util` `parseArgs` in strict mode. An unknown flag, a missing
 * value or a value given to a switch is a {@linkcode UsageError} with a hint; nothing is ignored.
 * Everything after `--` is positional. A command line of the plain forms is read without loading
 * `node:util` (see {@linkcode parsePlainCommandLine}), to the same result.
 */
export function parseCommandLine(
  args: readonly string[],
  spec: CommandSpec,
): { values: OptionValues; positionals: string[] } {
  const options: Record<string, OptionSpec> = { ...AUTOMATIC_OPTIONS, ...spec.options };
  const plain = parsePlainCommandLine(args, options);
  if (plain !== null) {
    refuseConflicts(plain.given, spec.command);
    return { values: plain.values, positionals: plain.positionals };
  }
  refuseUnparsable(args, spec, options);
  let parsed;
  try {
    parsed = nodeBuiltin<typeof NodeUtil>("node:util").parseArgs({
      args: [...args],
      options,
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
  } catch (error) {
    const message = withValueGiven(parseArgsMessage(error), args);
    throw new UsageError(message, argumentsHint(message, args, spec, options));
  }
  const given = parsed.tokens.flatMap((t) =>
    t.kind === "option" && options[t.name]?.multiple !== true
      ? [{ name: t.name, value: t.value ?? true }]
      : []
  );
  refuseConflicts(given, spec.command);
  return { values: parsed.values as OptionValues, positionals: parsed.positionals };
}

/** The most letters of a group of short options (`-hp`) read before one that takes a value. */
const MAX_SHORT_GROUP = 64;
/**
 * The most options and operands before `--` (each letter of a group of short options one) that a command
 * line read by `parseArgs` may hold.
 */
const MAX_OPTION_ARGUMENTS = 4096;

/**
 * A {@linkcode UsageError} for a command line that `parseArgs` would take seconds to read: Deno's takes a
 * time that grows with the square of what it reads before `--`, where each letter of a group of short options
 * counts as one (`-xxxx` is `-x -x -x -x`): 5 to 11 s for one 120 000-letter group, against a tenth of a
 * second under Bun. No command line of the plain forms comes here, nor one that a person writes: a group of
 * more than {@linkcode MAX_SHORT_GROUP} letters, or more than {@linkcode MAX_OPTION_ARGUMENTS} options and
 * operands, is refused at once, the group clipped in the message.
 */
function refuseUnparsable(
  args: readonly string[],
  spec: CommandSpec,
  options: Record<string, OptionSpec>,
): void {
  const end = args.indexOf("--");
  const own = end < 0 ? args : args.slice(0, end);
  const help = `run \`toolguard ${spec.command} --help\``;
  const valued = new Set(
    Object.values(options).flatMap((o) => o.type === "string" && o.short ? [o.short] : []),
  );
  let read = 0;
  for (const arg of own) {
    let letters = 1;
    if (arg.length > 2 && arg[0] === "-" && arg[1] !== "-") {
      // A group: each letter is an option, up to one that takes a value (the rest is that value).
      while (letters < arg.length - 1 && letters <= MAX_SHORT_GROUP && !valued.has(arg[letters])) letters++;
      if (letters > MAX_SHORT_GROUP) {
        throw new UsageError(
          `${shownText(arg)} is no option: too long for a group of short options (${arg.length - 1} letters)`,
          spec.fileOperands === true
            ? `to name a file whose name starts with -, put it after --, as in \`toolguard ${spec.command} [options] -- FILE\`; ${help}`
            : `give each option on its own; ${help}`,
        );
      }
    }
    read += letters;
    if (read > MAX_OPTION_ARGUMENTS) {
      throw new UsageError(
        `too many arguments: more than ${MAX_OPTION_ARGUMENTS} options and operands${
          end < 0 ? "" : " before --"
        } (each letter of a group such as -hp is one)`,
        `give fewer; ${help}`,
      );
    }
  }
}

/**
 * The message of a flag followed by a value that starts with a dash (`--budget -1`), with that value in place
 * of the `-XYZ` that `parseArgs` writes (`write it as '--budget=-1'`); other messages as they are.
 */
function withValueGiven(message: string, args: readonly string[]): string {
  const flag = /^Option '(-[^']+)' is followed by a value that starts with a dash;/.exec(message)?.[1];
  if (flag === undefined) return message;
  const end = args.indexOf("--");
  const at = (end < 0 ? args : args.slice(0, end)).indexOf(flag);
  const value = at < 0 ? undefined : args[at + 1];
  return value === undefined ? message : message.replaceAll("-XYZ", shownText(value));
}

/**
 * What to do about a command line that `parseArgs` refused (`message`, as {@linkcode parseArgsMessage}
 * words it): give the missing value; put a file whose name starts with `-` after `--` (the one `parseArgs`
 * read as options); else, the options the command accepts.
 */
function argumentsHint(
  message: string,
  args: readonly string[],
  spec: CommandSpec,
  options: Record<string, OptionSpec>,
): string {
  const help = `run \`toolguard ${spec.command} --help\``;
  const missing = /^(--[\w-]+) needs a value$/.exec(message);
  if (missing) return `give it as ${missing[1]} VALUE; ${help}`;
  const valued = /^Option '(--[\w-]+)' does not take an argument$/.exec(message);
  if (valued) return `${valued[1]} is a switch: give it alone, without a value; ${help}`;
  // (else the flag was given no value: `--tools --pretty`)
  const dashed = /^Option '(-[^']+)' is followed by a value that starts with a dash/.exec(message);
  if (dashed) return `if that value is an option, give ${dashed[1]} its own value before it; ${help}`;
  // Greedy to the last quote: a file's name may hold one (`--it's.json`).
  const unknown = /^Unknown option '(-.*)'$/s.exec(message)?.[1];
  if (spec.fileOperands === true && unknown !== undefined) {
    const end = args.indexOf("--");
    const named = (end < 0 ? args : args.slice(0, end)).find((a) =>
      a.length > 1 && a[0] === "-" && !Object.hasOwn(options, a.replace(/^--?|=.*$/g, "")) && pathExists(a)
    );
    if (named !== undefined) {
      const file = shownText(named);
      return `${file} is a file: to name it, put it after --, as in \`toolguard ${spec.command} [options] -- ${file}\``;
    }
  }
  const guess = unknown === undefined ? undefined : flagGuess(unknown, args, options);
  // (its own options: --version is the program's, in `toolguard --help`)
  return `${guess === undefined ? "" : `did you mean ${guess}? `}toolguard ${spec.command} accepts ${
    Object.keys(options).filter((o) => o !== "version").map((o) => `--${o}`).join(", ")
  }; ${help}`;
}

/**
 * The flag that the unknown `flag` (as `parseArgs` names it) most likely misspells, or undefined: `--Pretty`
 * and `--prety` are `--pretty`; `-pretty`, which `parseArgs` reads as the letters `-p -r ...` and names
 * `-p`, is `--pretty` too (the word is taken from the argument given); `-H` is `-h`.
 */
function flagGuess(
  flag: string,
  args: readonly string[],
  options: Record<string, OptionSpec>,
): string | undefined {
  const names = Object.keys(options);
  if (flag.startsWith("--")) {
    const name = closestName(flag.slice(2), names);
    return name === undefined ? undefined : `--${name}`;
  }
  const letter = flag.slice(1);
  const end = args.indexOf("--");
  const given = (end < 0 ? args : args.slice(0, end)).find((a) => a[0] === "-" && a[1] === letter);
  if (given !== undefined && given.length > 2) {
    const name = closestName(given.slice(1).replace(/=.*$/s, ""), names);
    if (name !== undefined) return `--${name}`;
  }
  const short = names.map((n) => options[n].short).find((s) => s?.toLowerCase() === letter.toLowerCase());
  return short === undefined ? undefined : `-${short}`;
}

/**
 * The one of `names` that `word` most likely misspells, for a "did you mean" hint on a command or a flag:
 * compared without regard to case (`HELP` is `help`), at an edit distance of at most 2 and at most half the
 * name's length, so that a short word is not taken for an unrelated short name (`x` for `by`). Undefined
 * when none is that close; of two as close, the first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { closestName } from "./io.ts";
 *
 * const commands = ["run", "validate", "lint", "scan", "help"];
 * assert.equal(closestName("HELP", commands), "help");
 * assert.equal(closestName("valdate", commands), "validate");
 * assert.equal(closestName("scna", commands), "scan");
 * assert.equal(closestName("rm", commands), undefined);
 * ```
 *
 * @param word What was given.
 * @param names What could have been meant.
 * @returns The name to suggest, or undefined.
 */
export function closestName(word: string, names: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of names) {
    const d = editDistance(lower, name.toLowerCase());
    if (d < bestDistance && d <= Math.min(2, Math.floor(name.length / 2))) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** An option given twice with different values is a {@linkcode UsageError}: the command would pick one silently. */
function refuseConflicts(given: readonly { name: string; value: string | boolean }[], command: string): void {
  const first = new Map<string, string | boolean>();
  for (const { name, value } of given) {
    const before = first.get(name);
    if (before !== undefined && before !== value) {
      throw new UsageError(
        `--${name} is given twice, as ${givenValue(before)} and ${givenValue(value)}`,
        `give it once; run \`toolguard ${command} --help\``,
      );
    }
    first.set(name, value);
  }
}

/**
 * What `parseArgs` (strict, positionals allowed) makes of `args` when they use only the plain forms: a
 * positional, `--` (the rest are positionals), `--name`, `--name=value`, `--name value`, `-x` and `-x value`,
 * each naming one of `options` with a value of its type. Null for anything else (an unknown flag, a group of
 * letters, a missing value, a value that looks like a flag, a value given to a switch), which `parseArgs`
 * then reads, and words the error for. Under Deno, `node:util` loads the Node compatibility layer, about
 * 18 ms of a one-shot command; under Bun it costs 2 to 4 ms. The tests hold the two to the same answers.
 *
 * @example Plain flags, and a group of letters left to `parseArgs`
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePlainCommandLine } from "./io.ts";
 *
 * const options = { pretty: { type: "boolean" as const, short: "p" }, tools: { type: "string" as const } };
 * const read = parsePlainCommandLine(["-p", "--tools", "t.json", "call.json"], options);
 * assert.deepEqual({ ...read?.values }, { pretty: true, tools: "t.json" });
 * assert.deepEqual(read?.positionals, ["call.json"]);
 * assert.equal(parsePlainCommandLine(["-pv"], options), null);
 * ```
 *
 * @param args The arguments after the subcommand.
 * @param options The subcommand's options, `help` included.
 * @returns Values (an object without a prototype, as `parseArgs` makes it), positionals and the single-valued
 *   options in the order given (for the check of conflicting repeats), or null.
 */
export function parsePlainCommandLine(
  args: readonly string[],
  options: Record<string, OptionSpec>,
):
  | { values: OptionValues; positionals: string[]; given: { name: string; value: string | boolean }[] }
  | null {
  const values: OptionValues = Object.create(null);
  const positionals: string[] = [];
  const given: { name: string; value: string | boolean }[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.length < 2 || arg[0] !== "-") {
      positionals.push(arg);
      continue;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg[1] === "-") {
      const eq = arg.indexOf("=");
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (eq >= 0) inline = arg.slice(eq + 1);
    } else if (arg.length === 2) {
      name = Object.keys(options).find((key) => options[key].short === arg[1]);
    }
    if (name === undefined || !Object.hasOwn(options, name)) return null;
    const option = options[name];
    let value: string | boolean = true;
    if (option.type === "string") {
      if (inline === undefined) {
        const next = args[i + 1];
        // (as `parseArgs` reads it: a lone `-` is a value, stdin; `-x` is ambiguous, an error)
        if (next === undefined || (next.length > 1 && next[0] === "-")) return null;
        inline = next;
        i++;
      }
      value = inline;
    } else if (inline !== undefined) return null;
    if (option.multiple) ((values[name] ??= []) as (string | boolean)[]).push(value);
    else {
      values[name] = value;
      given.push({ name, value });
    }
  }
  return { values, positionals, given };
}

/**
 * Prints a subcommand's help on stdout when `--help`/`-h` was given, else the program's version when
 * `--version`/`-V` was, and says whether it did: `if (printedHelp(values, LINT_HELP)) return EXIT_OK;`.
 */
export function printedHelp(values: OptionValues, help: string): boolean {
  if (values.help === true) writeOut(help);
  else if (values.version === true) writeOut(VERSION_LINE);
  else return false;
  return true;
}

/** The options whose value is a path, as the commands' own operand is: a file there is no mistake. */
const PATH_OPTIONS = new Set(["tools", "shape", "html", "log", "pins", "cwd"]);

/**
 * The one positional argument a subcommand takes (a file, or `-` for stdin). None or several is a
 * {@linkcode UsageError} naming `what` is missing, with `hint` saying how to call it. Given the parsed
 * `values`, a missing one that an option took as its value (`toolguard scan --context page.txt`: an existing
 * file, or `-`, given to an option that takes no path) is named, as the command line reads it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { onePositional } from "./io.ts";
 *
 * assert.equal(onePositional(["a.json"], "calls file", "give one"), "a.json");
 * assert.throws(
 *   () => onePositional([], "file to scan", "give one", { context: "-" }),
 *   /^UsageError: missing the file to scan: --context took "-" as its value$/,
 * );
 * ```
 *
 * @param positionals The positional arguments.
 * @param what What the one argument is, for the message (`calls file`).
 * @param hint How to call the command.
 * @param values The options as parsed, to name one that took the argument.
 * @returns The argument.
 */
export function onePositional(
  positionals: readonly string[],
  what: string,
  hint: string,
  values?: OptionValues,
): string {
  if (positionals.length === 1) return positionals[0];
  if (positionals.length > 1) throw new UsageError(`expected one ${what}, got ${positionals.length}`, hint);
  const took = Object.entries(values ?? {}).find(([name, v]) =>
    !PATH_OPTIONS.has(name) && typeof v === "string" && (v === "-" || pathExists(v))
  );
  throw new UsageError(
    `missing the ${what}${
      took === undefined ? "" : `: --${took[0]} took ${givenValue(took[1])} as its value`
    }`,
    hint,
  );
}

/** A string option's value, or undefined. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

/**
 * An integer option's value, or undefined when absent. A value that is not an integer from `min` to `max`
 * is a {@linkcode UsageError}.
 */
export function integerOption(
  values: OptionValues,
  name: string,
  range: { min: number; max?: number },
): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const { min, max = Number.MAX_SAFE_INTEGER } = range;
  const n = typeof v === "string" && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const bounds = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new UsageError(
      `--${name} must be an integer ${bounds}, got ${givenValue(v)}`,
      `pass a whole number, e.g. --${name} ${Math.min(max, Math.max(min, 1000))}`,
    );
  }
  return n;
}

/**
 * The value of an option that takes one of a fixed set of words (`--injection block`), or undefined when
 * absent. Any other value is a {@linkcode UsageError} that lists the words; its hint is the one the value
 * most likely misspells (`blok`, `Block`: "did you mean --injection block?", as for a command or a flag),
 * else `hint`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { choiceOption } from "./io.ts";
 *
 * const policies = ["block", "warn", "off"] as const;
 * const hint = "run `toolguard mcp --help`";
 * assert.equal(choiceOption({ injection: "warn" }, "injection", policies, { hint }), "warn");
 * assert.equal(choiceOption({}, "injection", policies, { hint }), undefined);
 * assert.throws(
 *   () => choiceOption({ injection: "blok" }, "injection", policies, { hint }),
 *   (error: Error & { hint?: string }) =>
 *     error.message === '--injection must be block, warn or off, got "blok"' &&
 *     error.hint === "did you mean --injection block?",
 * );
 * ```
 *
 * @param values The parsed options.
 * @param name The option's name, without the dashes.
 * @param choices The words it takes, in the order the message lists them.
 * @param options `hint`: what to do when no word is close.
 * @returns The word given, or undefined.
 */
export function choiceOption<T extends string>(
  values: OptionValues,
  name: string,
  choices: readonly T[],
  options: { hint: string },
): T | undefined {
  const given = stringOption(values, name);
  if (given === undefined || (choices as readonly string[]).includes(given)) return given as T | undefined;
  const near = closestName(given, choices);
  throw new UsageError(
    `--${name} must be ${orList(choices)}, got ${givenValue(given)}`,
    near === undefined ? options.hint : `did you mean --${name} ${near}?`,
  );
}

/**
 * {@linkcode safeText} for messages of several lines. Their own line breaks are kept, so what a message quotes
 * from outside (a path, a flag) is made safe where it is quoted, `shownText(path)`: a line break in
 * a file name would otherwise start a line of its own (a forged `hint: ...`).
 */
const LINES = { keepLines: true };

/**
 * Runs a subcommand body and turns what it throws into an exit status: a {@linkcode UsageError} prints
 * `toolguard COMMAND: message` and its hint on stderr and gives 2; anything else is reported as an
 * internal error and gives 1.
 */
export async function runMain(command: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      // Messages quote paths and names from outside: printed safe for a terminal.
      writeErr(
        `${paint("red", "error", "stderr")}: toolguard ${command}: ${safeText(error.message, LINES)}\n`,
      );
      if (error.hint) writeErr(`hint: ${safeText(error.hint, LINES)}\n`);
      return EXIT_USAGE;
    }
    const message = error instanceof Error ? error.stack ?? error.message : String(error);
    writeErr(
      `${paint("red", "error", "stderr")}: toolguard ${command}: internal error: ${
        safeText(message, LINES)
      }\n`,
    );
    return EXIT_FAIL;
  }
}

/*
 * Reading a tools file for the CLI: a JSON or JSONC list of declarations, or an object holding one under
 * `tools` (an MCP `tools/list` result, an OpenAI or Anthropic request body), or a single declaration.
 */

/** Reads the declared tools from a JSON/JSONC file (or `-` for stdin) in any of the accepted layouts. */
export async function readTools(path: string): Promise<unknown[]> {
  const declared = await readJson(path);
  if (Array.isArray(declared)) return declared;
  if (typeof declared === "object" && declared !== null) {
    const tools = (declared as { tools?: unknown }).tools;
    if (Array.isArray(tools)) return tools;
  }
  return [declared];
}
