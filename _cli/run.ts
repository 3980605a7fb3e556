/**
 * `toolguard run [options] -- CMD ARGS...`: run a tool under the guard and print the one sentence the
 * model should read (or the classified result with `--json`).
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import { givenValue } from "../_common/values.ts";
import "../_common/bytes.ts";
import "./output.ts";
import "../_common/pointer.ts";
import "../_common/measure.ts";
import "../_scan/words.ts";
import "../_scan/fold.ts";
import "../_scan/segments.ts";
import "../_scan/gap.ts";
import "../_scan/translated.ts";
import "../_scan/rules.ts";
import "../_scan/leads.ts";
import "../_scan/decode.ts";
import "../_scan/screen.ts";
import "../_scan/terminal.ts";
import "../_scan/scan.ts";
import "../_run/pipes.ts";
import "../_run/windows.ts";
import "../_run/tree.ts";
import "../_run/classify.ts";
import "../_run/args.ts";
import "../_log/files.ts";
import "../_describe/facts.ts";
import "../_describe/verdict.ts";

import {
  cannotWrite,
  choiceOption,
  emptyPath,
  EXIT_FAIL,
  EXIT_OK,
  integerOption,
  logWriteWarning,
  MAX_TIMER_MS,
  type OptionSpec,
  type OptionValues,
  outputPathOption,
  paint,
  parseCommandLine,
  printedHelp,
  printJson,
  runMain,
  safeText,
  stringOption,
  UsageError,
  wantsJson,
  writeErr,
  writeOut,
} from "./io.ts";
import { describe, isFailure } from "../_describe/describe.ts";
import { runTool } from "../_run/run_tool.ts";
import { interruptStatus, isWindows, onInterrupt } from "../_run/runtime.ts";
import { type JsonlLog, jsonlLog } from "../_log/log.ts";
import type { Protocol, RunOptions, ToolResult } from "../types.ts";

/** The `toolguard run --help` text. */
export const RUN_HELP = `toolguard run: run a tool and say honestly what happened

Usage: toolguard run [options] -- CMD [ARGS...]

Runs CMD without a shell, classifies the outcome (spawn, timeout, exit, protocol, refused, empty,
results) and prints the sentence the model should read. What the guard says of a success (the output
was cut, part of the process tree it ended may have survived, reading stderr failed) goes to stderr
as a note, so stdout holds the sentence alone.

Options:
  --timeout MS        end the whole process tree after MS milliseconds (default 10000)
  --protocol P        how stdout is read: envelope (default), json, jsonl, lines, text
  --empty-exit N      exit code N also means "ran, found nothing" (repeatable; grep and rg: 1)
  --max-output BYTES  largest stdout accepted (default 8 MiB)
  --truncate          with lines/text, keep what fits instead of failing when output is too large
  --scan              scan the output for injected instructions (adds a warning sentence)
  --cwd DIR           working directory for the tool
  --budget N          characters of item JSON in the sentence (default 4000)
  --log FILE          append one JSON line per run to FILE (read it with \`toolguard stats\`)
  --json              print the classified result as JSON, with the sentence as \`sentence\`
  --pretty            print indented JSON (implies --json)
  -h, --help          show this help

Exit status: 0 when the tool ran successfully (results or empty), 1 when it did not, 2 for usage errors.

Example: toolguard run --protocol lines --empty-exit 1 -- rg -l TODO .
`;

/** The options of `toolguard run` (`--help` aside), as `parseArgs` takes them; {@linkcode RUN_HELP} lists each. */
export const RUN_OPTIONS: Record<string, OptionSpec> = {
  timeout: { type: "string" },
  protocol: { type: "string" },
  "empty-exit": { type: "string", multiple: true },
  "max-output": { type: "string" },
  truncate: { type: "boolean" },
  scan: { type: "boolean" },
  cwd: { type: "string" },
  budget: { type: "string" },
  log: { type: "string" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

/** A protocol given by name (the other protocol is a parser function). */
type ProtocolName = Extract<Protocol, string>;

/** Every named protocol; its type makes sure none is left out. */
const PROTOCOL_ORDER: Readonly<Record<ProtocolName, true>> = {
  envelope: true,
  json: true,
  jsonl: true,
  lines: true,
  text: true,
};

/** The five named protocols, in the order the help text names them (`--protocol`). */
export const PROTOCOLS: readonly ProtocolName[] = Object.keys(PROTOCOL_ORDER) as ProtocolName[];

/** `--cwd`: absent is the current directory; an empty string is refused, not read as absent. */
function cwdOption(values: OptionValues): string | undefined {
  const cwd = stringOption(values, "cwd");
  if (cwd === "") throw emptyPath("--cwd", "leave --cwd out to run in the current directory, or give one");
  return cwd;
}

/**
 * A success's detail on stderr, as a note: the sentence of a success never quotes it, and it holds only what the
 * guard says of the run (the output was cut, a leftover process held it, the tree was ended and part of it may
 * have survived, reading stderr failed). A failure's sentence quotes its detail already; stdout stays the
 * sentence alone either way.
 */
function printNote(result: ToolResult): void {
  if (isFailure(result) || typeof result.detail !== "string" || result.detail === "") return;
  writeErr(`${paint("bold", "note", "stderr")}: toolguard run: ${safeText(result.detail)}\n`);
}

/**
 * A hint on stderr when `--protocol` was left out and stdout held something other than the envelope read by
 * default: a new user's first `toolguard run -- rg TODO .` fails as `protocol` (a JSON object of the tool's
 * own as `refused`), and the sentence (for the model) does not say that the tool's lines would be read with
 * `--protocol lines`. Not for empty stdout: a silent tool fails under every protocol that reads JSON, and
 * `--protocol text` would read it as no results.
 */
function printProtocolHint(values: OptionValues, result: ToolResult): void {
  // Not JSON, JSON but no object, or an object of the tool's own (no `ok`, no `error`: read as a refusal).
  const notEnvelope = result.kind === "protocol"
    ? /^stdout is (not valid JSON|.*, not a JSON envelope object)/
    : /^REFUSED: the envelope has no ok field/;
  if (values.protocol !== undefined || result.ok || !notEnvelope.test(result.detail)) return;
  const hint = paint("bold", "hint", "stderr");
  writeErr(
    `${hint}: toolguard run: without --protocol, stdout is read as a JSON envelope ({"ok":true,"items":[...]}); ` +
      "for a tool that prints lines, JSON lines (rg --json), one JSON document of its own or plain text, " +
      "pass --protocol lines, jsonl, json or text\n",
  );
}

/**
 * Run `toolguard run` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["--protocol", "lines", "--", "ls"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("run", async () => {
    const split = args.indexOf("--");
    const { values, positionals } = parseCommandLine(split === -1 ? args : args.slice(0, split), {
      command: "run",
      options: RUN_OPTIONS,
    });
    if (printedHelp(values, RUN_HELP)) return EXIT_OK;
    // The command must come after `--`, so its own flags can never be mistaken for ours.
    if (positionals.length > 0 || split === -1) {
      throw new UsageError(
        positionals.length > 0
          ? `unexpected ${givenValue(positionals[0])} before \`--\``
          : "missing `--` before the command",
        "put the command after --, e.g. `toolguard run --protocol lines -- ls -1`",
      );
    }
    const [command, ...toolArgs] = args.slice(split + 1);
    if (command === undefined || command === "") {
      throw new UsageError(
        "no command after `--`",
        "e.g. `toolguard run --protocol jsonl -- rg --json TODO`",
      );
    }
    const mangled = [command, ...toolArgs].findIndex((a) => a.includes("\uFFFD"));
    if (mangled >= 0) {
      // No runtime hands a program bytes of its arguments that are not UTF-8: they arrive as U+FFFD.
      writeErr(
        `${paint("yellow", "warning", "stderr")}: toolguard run: ${
          mangled === 0 ? "the command" : `argument ${mangled}`
        } holds U+FFFD: if it stood for bytes that are not UTF-8, the tool gets U+FFFD in their place\n`,
      );
    }
    const protocol = choiceOption(values, "protocol", PROTOCOLS, {
      hint: "run `toolguard run --help` for how each reads stdout",
    }) ?? "envelope";
    const exitCodes: Record<number, "empty"> = {};
    const emptyExit = values["empty-exit"];
    // POSIX exit statuses have 8 bits; Windows keeps all 32 (e.g. 9009 for "command not found").
    const maxExit = isWindows ? 0xffffffff : 255;
    for (const raw of Array.isArray(emptyExit) ? emptyExit : []) {
      const n = typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n) || n < 1 || n > maxExit) {
        throw new UsageError(
          `--empty-exit must be an exit code from 1 to ${maxExit}, got ${givenValue(raw)}`,
          "e.g. --empty-exit 1 for grep and rg, where exit 1 means no match",
        );
      }
      exitCodes[n] = "empty";
    }
    if (values.truncate === true && protocol !== "lines" && protocol !== "text") {
      throw new UsageError(
        "--truncate only works with --protocol lines or text",
        "a cut JSON document is never valid",
      );
    }
    const budget = integerOption(values, "budget", { min: 1 });
    const options: RunOptions = {
      protocol,
      exitCodes,
      timeoutMs: integerOption(values, "timeout", { min: 1, max: MAX_TIMER_MS }),
      maxOutputBytes: integerOption(values, "max-output", { min: 1 }),
      onOverflow: values.truncate === true ? "truncate" : undefined,
      scanOutput: values.scan === true,
      cwd: cwdOption(values),
    };
    const logPath = outputPathOption(values, "log");
    let log: JsonlLog | undefined;
    if (logPath !== undefined) {
      try {
        log = jsonlLog(logPath, { onError: logWriteWarning("run", logPath) });
      } catch (error) {
        throw cannotWrite("log", logPath, error);
      }
      options.onResult = log.onResult;
    }
    // An interrupt (Ctrl-C, a harness's SIGTERM) ends the tool's tree as an abort: the run is still
    // described and logged, then the command exits as the signal would have.
    const interrupted = new AbortController();
    let signal: string | undefined;
    const stopListening = onInterrupt((name) => {
      signal ??= name;
      interrupted.abort(`interrupted by ${name}`);
    });
    let result;
    try {
      result = await runTool(command, toolArgs, { ...options, signal: interrupted.signal });
    } finally {
      stopListening();
    }
    await log?.close();
    // The JSON carries the sentence too, so a caller in another language needs one run, not two.
    if (wantsJson(values)) {
      printJson({ ...result, sentence: describe(result, { budget }) }, { pretty: values.pretty === true });
    } else {
      writeOut(safeText(describe(result, { budget })) + "\n"); // it quotes the tool
      printNote(result);
      printProtocolHint(values, result);
    }
    if (signal !== undefined) return interruptStatus(signal);
    return isFailure(result) ? EXIT_FAIL : EXIT_OK;
  });
}
