/**
 * Shared helpers for the `toolguard` subcommands: argument parsing that refuses unknown flags, reading a
 * file or `-` for stdin, JSON and JSONC parsing with file:line:column errors, JSON output with `--pretty`,
 * colour only on a terminal (never with `NO_COLOR`), and the exit-code convention (0 fine, 1 failed or
 * rejected, 2 usage error).
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
 * assert.throws(
 *   () => parseJsonText('{\n  "a": 1,\n  "b": ]\n}', "tools.json"),
 *   (error) => error instanceof UsageError && error.message === "tools.json:3:8: expected a value",
 * );
 * ```
 *
 * @example Output captured in-process, as the tests run a subcommand
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureOutput, printJson } from "./io.ts";
 *
 * const output = captureOutput();
 * try {
 *   printJson({ ok: true });
 *   printJson({ ok: true }, { pretty: true });
 * } finally {
 *   output.restore();
 * }
 * assert.equal(output.stdout, '{"ok":true}\n{\n  "ok": true\n}\n');
 * ```
 *
 * @module
 */

import { readFile } from "node:fs/promises";
import { writeSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { type Node as JsonNode, type ParseError, parseTree } from "jsonc-parser";

/** Exit status when the thing checked is fine. */
export const EXIT_OK = 0;
/** Exit status when the thing checked failed or was rejected. */
export const EXIT_FAIL = 1;
/** Exit status for usage errors: bad flags, unreadable or unparsable input. */
export const EXIT_USAGE = 2;

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
// Output
// ---------------------------------------------------------------------------------------------------------

interface DenoStd {
  stdout: { writeSync(p: Uint8Array): number; isTerminal(): boolean };
  stderr: { writeSync(p: Uint8Array): number; isTerminal(): boolean };
  stdin: { readable: ReadableStream<Uint8Array>; isTerminal(): boolean };
}

function denoStd(): DenoStd | undefined {
  return (globalThis as { Deno?: DenoStd }).Deno;
}

const encoder = new TextEncoder();

/**
 * Writes all of `text` to a file descriptor synchronously, so nothing is lost when the process exits
 * right after. A closed pipe (`toolguard scan x | head`) is not an error: the rest is dropped.
 */
function writeAll(fd: 1 | 2, text: string): void {
  const bytes = encoder.encode(text);
  const deno = denoStd();
  let offset = 0;
  let spins = 0;
  while (offset < bytes.length) {
    try {
      const chunk = bytes.subarray(offset);
      offset += deno ? (fd === 1 ? deno.stdout : deno.stderr).writeSync(chunk) : writeSync(fd, chunk);
      spins = 0;
    } catch (error) {
      const code = (error as { code?: string }).code;
      // A non-blocking pipe that is full: wait a moment and retry, but never forever.
      if ((code === "EAGAIN" || (error as Error).name === "WouldBlock") && spins++ < 10_000) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
        continue;
      }
      return;
    }
  }
}

/** Where output goes while {@linkcode captureOutput} is active. */
let capture: { stdout: string; stderr: string } | null = null;

/**
 * Sends everything written with {@linkcode writeOut} and {@linkcode writeErr} to strings instead of the
 * process's streams, until `restore()` is called: lets tests run a subcommand's `main` in-process. Output
 * is never coloured while captured.
 */
export function captureOutput(): { readonly stdout: string; readonly stderr: string; restore(): void } {
  const own = { stdout: "", stderr: "" };
  const previous = capture;
  capture = own;
  return {
    get stdout() {
      return own.stdout;
    },
    get stderr() {
      return own.stderr;
    },
    restore() {
      capture = previous;
    },
  };
}

/** Writes text to stdout (synchronously, completely). */
export function writeOut(text: string): void {
  if (capture) capture.stdout += text;
  else writeAll(1, text);
}

/** Writes text to stderr (synchronously, completely). */
export function writeErr(text: string): void {
  if (capture) capture.stderr += text;
  else writeAll(2, text);
}

/** Options for {@linkcode printJson}. */
export interface PrintJsonOptions {
  /** Indent by two spaces (`--pretty`). Default false: one line. */
  pretty?: boolean;
}

/** Prints a value as JSON on stdout, indented by two spaces with `pretty`, followed by a newline. */
export function printJson(value: unknown, options: PrintJsonOptions = {}): void {
  writeOut(JSON.stringify(value, null, options.pretty ? 2 : undefined) + "\n");
}

/**
 * True when the command should print JSON: `--json`, or `--pretty` (which only means anything for JSON, so it
 * asks for JSON by itself).
 *
 * @example `--pretty` alone asks for JSON
 * ```ts
 * import assert from "node:assert/strict";
 * import { wantsJson } from "./io.ts";
 *
 * assert.equal(wantsJson({ pretty: true }), true);
 * assert.equal(wantsJson({ json: true }), true);
 * assert.equal(wantsJson({}), false);
 * ```
 */
export function wantsJson(values: { json?: unknown; pretty?: unknown }): boolean {
  return values.json === true || values.pretty === true;
}

/** True when output to this stream may be coloured: it is a terminal and `NO_COLOR` is unset or empty. */
export function useColour(stream: "stdout" | "stderr" = "stdout"): boolean {
  if (capture) return false;
  const noColor = process.env.NO_COLOR;
  if (noColor !== undefined && noColor !== "") return false;
  const deno = denoStd();
  try {
    if (deno) return deno[stream].isTerminal();
    return process[stream].isTTY === true;
  } catch {
    return false;
  }
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

/** The colours {@linkcode paint} knows. */
export type Colour = keyof typeof CODES;

/**
 * Wraps text in an ANSI colour when {@linkcode useColour} says so for that stream; otherwise returns it
 * unchanged.
 */
export function paint(colour: Colour, text: string, stream: "stdout" | "stderr" = "stdout"): string {
  return useColour(stream) ? `\x1b[${CODES[colour]}m${text}\x1b[0m` : text;
}

// ---------------------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------------------

/** Reads all of stdin as UTF-8 text. */
async function readStdin(): Promise<string> {
  const deno = denoStd();
  let bytes: Uint8Array;
  if (deno) {
    bytes = new Uint8Array(await new Response(deno.stdin.readable).arrayBuffer());
  } else {
    const chunks: Uint8Array[] = [];
    for await (const chunk of process.stdin) {
      chunks.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk as Uint8Array);
    }
    bytes = new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
  }
  return new TextDecoder().decode(bytes); // drops a BOM; bad bytes become U+FFFD
}

/** How an input path is named in messages: `-` is `<stdin>`. */
export function inputName(path: string): string {
  return path === "-" ? "<stdin>" : path;
}

/**
 * Reads a whole file as UTF-8 text, or stdin when `path` is `-`. A BOM is dropped. An unreadable file is
 * a {@linkcode UsageError} naming the file and the reason.
 */
export async function readText(path: string): Promise<string> {
  if (path === "-") return await readStdin();
  try {
    return new TextDecoder().decode(await readFile(path));
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT"
      ? "no such file"
      : code === "EISDIR"
      ? "it is a directory"
      : code === "EACCES" || code === "EPERM"
      ? "permission denied"
      : (error as Error).message;
    throw new UsageError(`cannot read ${path}: ${reason}`, "check the path, or pass - to read stdin");
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

/** 1-based line and column (in UTF-16 code units) of an offset in text. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
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
 * Parses JSON or JSONC (comments and trailing commas allowed). Any syntax error is a
 * {@linkcode UsageError} whose message starts `FILE:LINE:COLUMN:` and says what was expected.
 * Keys such as `__proto__` become ordinary own properties, never a prototype.
 *
 * @param text The text to parse.
 * @param file The name to use in messages (`-` is shown as `<stdin>`).
 * @returns The parsed value.
 */
export function parseJsonText(text: string, file: string): unknown {
  const name = inputName(file);
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (source.trim() === "") throw new UsageError(`${name}: the input is empty; expected JSON`);
  const errors: ParseError[] = [];
  const tree = parseTree(source, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || tree === undefined) {
    const first = errors[0];
    const offset = first?.offset ?? 0;
    const { line, column } = lineColumn(source, offset);
    const code = PARSE_ERROR_NAMES[first?.error ?? 4] ?? "ValueExpected";
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more error(s))` : "";
    throw new UsageError(`${name}:${line}:${column}: ${PARSE_ERRORS[code] ?? code}${more}`);
  }
  return toValue(tree);
}

/** Reads a file (or `-` for stdin) and parses it as JSON or JSONC; see {@linkcode parseJsonText}. */
export async function readJson(path: string): Promise<unknown> {
  return parseJsonText(await readText(path), path);
}

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
  /** Its options. `--help`/`-h` is added automatically. */
  options: Record<string, OptionSpec>;
}

/** Parsed options: strings, booleans, or arrays of them for `multiple` options. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * Parses a subcommand's arguments with `node:util` `parseArgs` in strict mode. An unknown flag, a missing
 * value or a value given to a switch is a {@linkcode UsageError} with a hint; nothing is ignored.
 * Everything after `--` is positional.
 */
export function parseCommandLine(
  args: readonly string[],
  spec: CommandSpec,
): { values: OptionValues; positionals: string[] } {
  const options = { help: { type: "boolean" as const, short: "h" }, ...spec.options };
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options,
      strict: true,
      allowPositionals: true,
    });
    return { values: values as OptionValues, positionals };
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, "");
    const known = Object.keys(options).map((o) => `--${o}`).join(", ");
    throw new UsageError(
      message,
      `toolguard ${spec.command} accepts ${known}; run \`toolguard ${spec.command} --help\``,
    );
  }
}

/**
 * Prints a subcommand's help on stdout when `--help`/`-h` was given, and says whether it did:
 * `if (printedHelp(values, LINT_HELP)) return EXIT_OK;`.
 */
export function printedHelp(values: OptionValues, help: string): boolean {
  if (values.help !== true) return false;
  writeOut(help);
  return true;
}

/**
 * The one positional argument a subcommand takes (a file, or `-` for stdin). None or several is a
 * {@linkcode UsageError} naming `what` is missing, with `hint` saying how to call it.
 */
export function onePositional(positionals: readonly string[], what: string, hint: string): string {
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0 ? `missing the ${what}` : `expected one ${what}, got ${positionals.length}`,
      hint,
    );
  }
  return positionals[0];
}

/** A string option's value, or undefined. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

/**
 * An integer option's value, or undefined when absent. A value that is not an integer at least `min`
 * is a {@linkcode UsageError}.
 */
export function integerOption(values: OptionValues, name: string, min = 0): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = typeof v === "string" && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new UsageError(
      `--${name} must be an integer of at least ${min}, got ${JSON.stringify(v)}`,
      `pass a whole number, e.g. --${name} ${Math.max(min, 1000)}`,
    );
  }
  return n;
}

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
      writeErr(`${paint("red", "error", "stderr")}: toolguard ${command}: ${error.message}\n`);
      if (error.hint) writeErr(`hint: ${error.hint}\n`);
      return EXIT_USAGE;
    }
    const message = error instanceof Error ? error.stack ?? error.message : String(error);
    writeErr(`${paint("red", "error", "stderr")}: toolguard ${command}: internal error: ${message}\n`);
    return EXIT_FAIL;
  }
}
