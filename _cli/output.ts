/**
 * Output for the `toolguard` command: writes that are synchronous and complete, capture for in-process
 * tests, JSON printing, colour only on a terminal (never with `NO_COLOR`), and the exit-code convention
 * (0 fine, 1 failed or rejected, 2 usage error). Nothing here loads at import more than this file: the
 * command imports it to print `--version` and `--help` before it loads any subcommand.
 *
 * @example Output captured in-process, as the tests run a subcommand
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureOutput, printJson } from "./output.ts";
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
import type * as NodeFs from "node:fs";
import type NodeProcess from "node:process";
import { clipMiddle, nodeBuiltin, showHidden } from "../_common/values.ts";
import denoJson from "../deno.json" with { type: "json" };

/**
 * What `toolguard --version` prints, and `toolguard COMMAND --version` too: the version in deno.json, read when
 * the program is built.
 */
export const VERSION_LINE: string = `toolguard ${denoJson.version}\n`;

/** Exit status when the thing checked is fine. */
export const EXIT_OK = 0;
/** Exit status when the thing checked failed or was rejected. */
export const EXIT_FAIL = 1;
/** Exit status for usage errors: bad flags, unreadable or unparsable input. */
export const EXIT_USAGE = 2;

interface DenoStd {
  stdout: { writeSync(p: Uint8Array): number; isTerminal(): boolean };
  stderr: { writeSync(p: Uint8Array): number; isTerminal(): boolean };
  stdin: { readable: ReadableStream<Uint8Array>; isTerminal(): boolean };
  env: { get(name: string): string | undefined };
  open(path: string): Promise<{ readable: ReadableStream<Uint8Array> }>;
  writeTextFileSync(path: string, text: string): void;
  statSync(path: string): { dev: number; ino: number | null };
}

/** Deno's API, or undefined under another runtime. */
export function denoStd(): DenoStd | undefined {
  return (globalThis as { Deno?: DenoStd }).Deno;
}

/** `node:process`, for the runtimes that are not Deno (read on use: under Deno it would load the Node layer). */
const nodeProcess = () => nodeBuiltin<typeof NodeProcess>("node:process");

/** True under Bun. */
function isBun(): boolean {
  return typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
}

/**
 * Text from outside toolguard (a tool or file name, a model's call, a server's definition, a log line) made
 * safe to print: every character a terminal would act on, or that would hide text or reorder the line (see
 * `showHidden`), is written as `\u{1B}`, so a hostile name can neither set the window title, clear the
 * screen, conceal text, reverse a line (Trojan Source) nor forge a line of the report.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safeText } from "./output.ts";
 *
 * assert.equal(safeText("evil\x1b]0;owned\x07\nOK"), "evil\\u{1B}]0;owned\\u{7}\\u{A}OK");
 * assert.equal(safeText("line 1\nline 2", { keepLines: true }), "line 1\nline 2");
 * assert.equal(safeText("invoice_\u202Efdp.exe"), "invoice_\\u{202E}fdp.exe");
 * ```
 *
 * @param text The outside text.
 * @param options `keepLines`: leave line breaks and tabs (for multi-line messages).
 * @returns The text with those characters escaped.
 */
export function safeText(text: string, options: { keepLines?: boolean } = {}): string {
  return showHidden(text, { keepLines: options.keepLines });
}

/**
 * Outside text (a path, a flag, a name an MCP server chose) as a message or listing quotes it: clipped in the
 * middle when long ({@linkcode clipMiddle}: a hostile 100 000-character name), then on one line and safe for
 * a terminal ({@linkcode safeText}).
 *
 * @example
 * ```ts
 * import { shownText } from "./output.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(shownText("tool\nhint: all good"), "tool\\u{A}hint: all good");
 * assert.match(shownText("x".repeat(1000)), /^x+\u2026\(\d+ characters left out\)\u2026x+$/);
 * ```
 *
 * @param text The outside text.
 * @returns The text clipped, on one line, with hidden and control characters escaped.
 */
export function shownText(text: string): string {
  return safeText(clipMiddle(text));
}

/** UTF-8, for everything written (and read) here. */
export const encoder: TextEncoder = new TextEncoder();

/** What a write to stdout threw, other than a closed pipe; the rest of the output was dropped. */
let stdoutError: unknown = undefined;
/** The same for stderr. */
let stderrError: unknown = undefined;

/**
 * Why stdout could not be written (a full disk, an I/O error), or undefined when every write went through
 * or only met a closed pipe: the command then says so and ends with 2 instead of 0, as output that was
 * lost must not pass for a report made.
 */
export function stdoutFailure(): unknown {
  return stdoutError;
}

/**
 * Why stderr could not be written (`2>/dev/full`), or undefined when every write went through or only met a
 * closed pipe. A warning or a notice was lost then, and no other channel is left to say so: the command
 * ends with 2 where it would have ended with 0 (a status of 1 or 2 already says the run was not clean).
 */
export function stderrFailure(): unknown {
  return stderrError;
}

/**
 * Writes all of `text` to a file descriptor synchronously, so nothing is lost when the process exits
 * right after. A closed pipe (`toolguard scan x | head`) is not an error: the rest is dropped. Any other
 * failure drops the rest too, and is kept for {@linkcode stdoutFailure} or {@linkcode stderrFailure}.
 */
function writeAll(fd: 1 | 2, text: string): void {
  const deno = denoStd();
  if ((fd === 1 ? stdoutError : stderrError) !== undefined) return;
  if (!deno && isBun() && fd === 1 && text.endsWith("\n") && isTerminal("stdout")) {
    // Bun's console writes synchronously and completely, treats a lone string literally, and ends quietly on
    // a closed pipe, without loading node:fs (see writeBrief). But it drops a failed write without a word, so
    // stdout goes through it only on a terminal, where a write does not fail. Never stderr: a failed write
    // there must be known (see stderrFailure), and on a terminal console.error paints every line red.
    console.log(text.slice(0, -1));
    return;
  }
  const error = writeWhole(
    (chunk) =>
      deno
        ? (fd === 1 ? deno.stdout : deno.stderr).writeSync(chunk)
        : nodeBuiltin<typeof NodeFs>("node:fs").writeSync(fd, chunk),
    encoder.encode(text),
  );
  if (error !== undefined && !closedPipe(error)) {
    if (fd === 1) stdoutError = error;
    else stderrError = error;
  }
}

/**
 * How long a write waits on a full non-blocking pipe (one whose reader has stopped reading) while no byte
 * goes through, before it gives up: 10 s. A reader that takes bytes, however slowly, starts the wait again.
 */
export const WRITE_WAIT_MS = 10_000;

/** The clock that {@linkcode writeWhole} waits by: the time in milliseconds, and a sleep of about `ms`. */
export interface WaitClock {
  /** Milliseconds from any fixed start. */
  now(): number;
  /** Sleeps about `ms` milliseconds (more, as the system's timer allows). */
  sleep(ms: number): void;
}

/** The real clock: a monotonic time, and a sleep that blocks the thread (the writes are synchronous). */
const SYSTEM_CLOCK: WaitClock = {
  now: () => performance.now(),
  sleep: (ms) => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms),
};

/**
 * Writes all of `bytes` through `write` (a synchronous write of a file descriptor, which returns how many
 * bytes it took), and returns what stopped it, or undefined when every byte went through. A write that would
 * block (EAGAIN, a full non-blocking pipe) or that takes nothing is tried again after a millisecond, for at
 * most {@linkcode WRITE_WAIT_MS} by the clock since the last byte went through. The wait is measured, not
 * counted in tries: 10 000 tries of a 1 ms sleep were 10 s only where a sleep lasts 1 ms, and 156 s where
 * the timer ticks every 15.6 ms (Windows), or on a machine too busy to wake the thread on time.
 *
 * @example A pipe that stays full: given up after the wait, by the clock
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeWhole } from "./output.ts";
 *
 * let time = 0;
 * let tries = 0;
 * const full = Object.assign(new Error("EAGAIN: resource temporarily unavailable"), { code: "EAGAIN" });
 * const clock = { now: () => time, sleep: () => void (time += 16) }; // a 16 ms timer tick
 * const error = writeWhole(() => { tries++; throw full; }, new Uint8Array(10), clock);
 * assert.equal(error, full);
 * assert.equal(tries, 626); // one try, then one after each 16 ms sleep up to 10 s: not 10 001 tries
 * assert.equal(writeWhole((chunk) => chunk.length, new Uint8Array(10)), undefined);
 * ```
 *
 * @param write Writes some of a chunk, returning how many bytes it took.
 * @param bytes Everything to write.
 * @param clock The clock to wait by (the system's by default).
 * @returns What the write threw (the last EAGAIN when the wait ran out), or undefined when all went through.
 */
export function writeWhole(
  write: (chunk: Uint8Array) => number,
  bytes: Uint8Array,
  clock: WaitClock = SYSTEM_CLOCK,
): unknown {
  let offset = 0;
  let waitingSince: number | undefined;
  let blocked: unknown = undefined;
  while (offset < bytes.length) {
    let taken = 0;
    try {
      taken = write(bytes.subarray(offset));
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== "EAGAIN" && (error as Error).name !== "WouldBlock") return error;
      blocked = error;
    }
    if (taken > 0) {
      offset += taken;
      waitingSince = undefined;
      continue;
    }
    const now = clock.now();
    waitingSince ??= now;
    if (now - waitingSince >= WRITE_WAIT_MS) {
      return blocked ?? new Error(`the write took no byte for ${WRITE_WAIT_MS / 1000} s`);
    }
    clock.sleep(1);
  }
  return undefined;
}

/** True when a write failed only because the reader is gone (`toolguard scan x | head`): no failure. */
function closedPipe(error: unknown): boolean {
  return (error as { code?: string }).code === "EPIPE" || (error as Error).name === "BrokenPipe";
}

/** The part of Bun's API that {@linkcode writeBrief} uses. */
interface BunWrite {
  stdout: unknown;
  write(destination: unknown, text: string): Promise<number>;
}

/**
 * Writes the whole output of a command that reads nothing (`--version`, `--help`) to stdout, as
 * {@linkcode writeOut} does: completely, a closed pipe no failure, any other failure kept for
 * {@linkcode stdoutFailure}. Under Bun it goes through `Bun.write(Bun.stdout, text)`, which needs no
 * `node:fs` (loading it costs a compiled `toolguard --version` about 1 ms, a fifth of its start-up) and,
 * unlike the console, reports a failed write (stdout on a full disk ends with 2 here as everywhere).
 */
export async function writeBrief(text: string): Promise<void> {
  const bun = (globalThis as { Bun?: BunWrite }).Bun;
  if (capture || denoStd() || bun === undefined) return writeOut(text);
  if (stdoutError !== undefined) return;
  try {
    await bun.write(bun.stdout, text);
  } catch (error) {
    if (!closedPipe(error)) stdoutError = error;
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

/**
 * Prints a value as JSON on stdout, indented by two spaces with `pretty`, followed by a newline. Characters
 * that a terminal acts on or that hide or reorder text are written as JSON escapes (`\u202e`), not raw: the
 * value read back is the same, and `toolguard ... --json` on a terminal shows no raw bidi control or escape
 * sequence from a tool's output or a model's call.
 */
export function printJson(value: unknown, options: PrintJsonOptions = {}): void {
  const json = JSON.stringify(value, null, options.pretty ? 2 : undefined) ?? "null";
  writeOut(showHidden(json, { keepLines: true, form: "json" }) + "\n");
}

/**
 * True when the command should print JSON: `--json`, or `--pretty` (which only means anything for JSON, so it
 * asks for JSON by itself).
 *
 * @example `--pretty` alone asks for JSON
 * ```ts
 * import assert from "node:assert/strict";
 * import { wantsJson } from "./output.ts";
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
  try {
    const noColor = envVar("NO_COLOR");
    return (noColor === undefined || noColor === "") && isTerminal(stream);
  } catch {
    return false;
  }
}

/**
 * An environment variable of this process, or undefined when unset. Throws under Deno without
 * `--allow-env` for it.
 */
export function envVar(name: string): string | undefined {
  const deno = denoStd();
  return deno ? deno.env.get(name) : nodeProcess().env[name];
}

/** Bun's binding of the Node name `tty_wrap`, which asks the file descriptor itself. */
interface TtyBinding {
  isTTY(fd: number): boolean;
}

/**
 * True when `stream` is a terminal (false when that cannot be told). Under Bun the runtime's `tty_wrap`
 * binding answers: the first touch of `process.stdout` builds a whole stream (node:fs, node:stream), about
 * 10 ms of a one-shot command such as `toolguard scan`; `process.stdout.isTTY` is the fallback.
 */
export function isTerminal(stream: "stdout" | "stderr" = "stdout"): boolean {
  try {
    const deno = denoStd();
    if (deno) return deno[stream].isTerminal();
    if (isBun()) {
      try {
        const binding = (nodeProcess() as unknown as { binding(name: string): TtyBinding }).binding(
          "tty_wrap",
        );
        return binding.isTTY(stream === "stdout" ? 1 : 2) === true;
      } catch {
        // a Bun without the binding: the stream's own answer below
      }
    }
    return nodeProcess()[stream].isTTY === true;
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
