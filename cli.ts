#!/usr/bin/env -S deno run -A
/**
 * The `toolguard` command-line program: run a tool and classify the outcome, validate a model's tool calls,
 * lint tool declarations, scan text for injected instructions, print what the model reads, report on call
 * logs, check this machine with a self-test, and guard an MCP server.
 *
 * ```sh
 * toolguard run --protocol lines --empty-exit 1 -- rg -l TODO .
 * toolguard validate calls.json --tools tools.jsonc
 * toolguard selftest
 * ```
 *
 * Exit status: 0 when the thing checked is fine, 1 when it failed or was rejected, 2 for usage errors (and
 * for output that could not be written: a full disk behind stdout or stderr).
 * It compiles to one executable: `deno task compile`, `deno task compile:bun`.
 *
 * @example Print the version
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@toolguard/toolguard/cli";
 *
 * const status = await main(["--version"]); // prints "toolguard 0.1.0" (the version in deno.json)
 * assert.equal(status, 0);
 * ```
 *
 * @module
 */

// Start-up (issue 18): every module this face loads but does not import below, imported here for no
// binding, so that Deno finds the face's whole graph in one round of loading instead of one round per
// level of the import chain (up to 4 ms less on Deno for the deepest faces; no change on Bun). In the
// order they run; scripts/check_imports.ts (`deno task check`) fails when one is missing or not needed.

import denoJson from "./deno.json" with { type: "json" };
import { givenValue } from "./_common/values.ts";
import {
  EXIT_OK,
  EXIT_USAGE,
  paint,
  safeText,
  stderrFailure,
  stdoutFailure,
  VERSION_LINE,
  writeBrief,
  writeErr,
} from "./_cli/output.ts";
import { FAKE_TOOL_COMMAND } from "./_cli/self.ts";

/** The program version, read from deno.json when the program is built. */
export const VERSION: string = denoJson.version;

type Main = (args: string[]) => Promise<number>;

/** One subcommand: how to load its module (only when it runs), and its line in `--help`. */
interface Command {
  load: () => Promise<{ main: Main }>;
  summary: string;
}

/**
 * Subcommands, in the order `toolguard --help` lists them. Each module is imported when its command runs,
 * so `--version` or one command loads nothing else. The specifiers are string literals, so `deno compile`
 * and `bun build --compile` include every module (`scripts/check_imports.ts` checks none is imported
 * statically).
 */
const COMMANDS: Record<string, Command> = {
  run: {
    load: () => import("./_cli/run.ts"),
    summary: "run a tool and print the one sentence the model should read",
  },
  validate: {
    load: () => import("./_cli/validate.ts"),
    summary: "validate a model's tool calls against the declared tools",
  },
  lint: { load: () => import("./_cli/lint.ts"), summary: "report what is wrong with tool declarations" },
  scan: { load: () => import("./_cli/scan.ts"), summary: "look for injected instructions in text" },
  describe: {
    load: () => import("./_cli/describe.ts"),
    summary: "print what the model reads about a tool result",
  },
  stats: {
    load: () => import("./_cli/stats.ts"),
    summary: "report on a call log written with --log or jsonlLog",
  },
  selftest: {
    load: () => import("./_cli/selftest.ts"),
    summary: "check process handling on this machine (six cases)",
  },
  mcp: {
    load: () => import("./_cli/mcp.ts"),
    summary: "guard an MCP server (stdio or Streamable HTTP): validate every tools/call",
  },
};

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `toolguard ${VERSION}: guard the seam between a language model and its tools

Usage: toolguard COMMAND [options] [args]

Commands:
${lines.join("\n")}

Options:
  -h, --help     show this help (or \`toolguard COMMAND --help\`, \`toolguard help COMMAND\`, for a command)
  -V, --version  print the version (after a command too: \`toolguard scan --version\`)
  --             ends the options: the next word is the command (\`toolguard -- scan -- -notes.txt\`)

Exit status: 0 when the thing checked is fine, 1 when it failed or was rejected, 2 for usage errors (and
for output that could not be written). Output is plain text; most commands print JSON with --json
(indented with --pretty). Colour is used only on a terminal and never when NO_COLOR is set.
`;
}

/** True for the program's version flags, `--version` and `-V`. */
function isVersionFlag(word: string | undefined): boolean {
  return word === "--version" || word === "-V";
}

/** True for the words that ask for the program's help: `help`, `--help`, `-h`. */
function isHelpWord(word: string | undefined): boolean {
  return word === "--help" || word === "-h" || word === "help";
}

/** The subcommand of that name; own keys only, so `help constructor` is not a command. */
function commandEntry(name: string | undefined): Command | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

/**
 * Runs the program with its arguments (without the executable and script) and returns the exit status.
 *
 * @example Exit statuses: 0 fine, 2 for a usage error
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@toolguard/toolguard/cli";
 *
 * assert.equal(await main(["lint", "--help"]), 0);
 * assert.equal(await main(["no-such-command"]), 2);
 * ```
 *
 * Output that could not be written (a full disk; a closed pipe is no failure) ends with 2 too: stdout's is
 * said on stderr, and a status of 0 becomes 2 when a write to stderr failed (a warning was lost, and nothing
 * is left to say so).
 *
 * @param args The command-line arguments, e.g. `["validate", "calls.json", "--tools", "tools.json"]`.
 * @returns 0 when the thing checked is fine, 1 when it is not, 2 for usage errors and lost output.
 */
export async function main(args: readonly string[]): Promise<number> {
  const status = await dispatch(args);
  const failure = stdoutFailure();
  // A lost warning must not pass for a clean run; 1 (rejected) or 2 already says it was not.
  if (failure === undefined) return status === EXIT_OK && stderrFailure() !== undefined ? EXIT_USAGE : status;
  // The report, the verdict or the sentence did not all reach stdout: a status of 0 would pass it for made.
  const { ioReason } = await import("./_cli/io.ts");
  writeErr(
    `${paint("red", "error", "stderr")}: toolguard: cannot write to stdout: ${
      safeText(ioReason(failure))
    }; the output is incomplete\nhint: send stdout to a file or pipe that can take it\n`,
  );
  return EXIT_USAGE;
}

/** {@linkcode main} without the check that stdout took everything. */
async function dispatch(args: readonly string[]): Promise<number> {
  // `--` ends the program's options, as a POSIX utility reads it: the word after it is the command, also
  // one that starts with a dash (`toolguard -- --version` names no command). Deno and the compiled
  // executables pass the `--` on; Bun takes the first one after a script for itself (`bun cli.ts -- scan`
  // hands over `scan`): either way `scan` runs. Bun hides that it took one (`Bun.argv` lacks it too), so
  // `bun cli.ts -- --version` prints the version: the README says so.
  const optionsEnded = args[0] === "--";
  const [command, ...rest] = optionsEnded ? args.slice(1) : args;
  if (command === "help" || (!optionsEnded && (isVersionFlag(command) || isHelpWord(command)))) {
    // The program's own flags, in any order and repeated: help wins over the version, as after a command
    // (`toolguard scan -V -h`), so `toolguard -V -h` and `toolguard help --version` print the help.
    const words = rest.filter((w) => !isVersionFlag(w) && w !== "--help" && w !== "-h");
    const helpAsked = command === "help" || words[0] === "help" ||
      args.some((w) => w === "--help" || w === "-h");
    if (!helpAsked) {
      if (words.length > 0) {
        return usageError(`--version takes no arguments, got ${givenValue(words[0])}`, {
          hint: "run `toolguard --version` alone",
        });
      }
      await writeBrief(VERSION_LINE);
      return EXIT_OK;
    }
    const topics = command === "help" ? words : words.filter((w, i) => i > 0 || w !== "help");
    // `toolguard help help`: the help on help is this one.
    if (topics.length === 0 || (topics.length === 1 && topics[0] === "help")) {
      await writeBrief(help());
      return EXIT_OK;
    }
    const [name, ...extra] = topics;
    const topic = commandEntry(name);
    if (topic === undefined) {
      return usageError(`no help on ${givenValue(name)}`, {
        guess: await commandGuess(name, { topic: true }),
      });
    }
    // `mcp pins` is the one command of two words, with its own help.
    if (name === "mcp" && extra.length === 1 && extra[0] === "pins") {
      return await (await topic.load()).main(["pins", "--help"]);
    }
    if (extra.length === 0) return await (await topic.load()).main(["--help"]);
    return usageError(`help takes one command, but ${givenValue(extra[0])} follows ${givenValue(name)}`, {
      hint: `run \`toolguard help ${name}\`${name === "mcp" ? " or `toolguard help mcp pins`" : ""}`,
    });
  }
  if (command === FAKE_TOOL_COMMAND) {
    // Hidden: the program acts as its own fake tool, so `selftest` needs nothing else installed.
    const [{ exitFakeTool, runFakeTool }, { selfLauncher }] = await Promise.all([
      import("./_cli/fake_tool.ts"),
      import("./_cli/self.ts"),
    ]);
    exitFakeTool(await runFakeTool(rest[0] ?? "results", rest.slice(1), selfLauncher()));
  }
  if (command === undefined) {
    writeErr(help());
    writeErr(`${paint("red", "error", "stderr")}: toolguard: missing a command\n`);
    return EXIT_USAGE;
  }
  const entry = commandEntry(command);
  if (entry === undefined) {
    return usageError(`unknown command ${givenValue(command)}`, { guess: await commandGuess(command) });
  }
  return await (await entry.load()).main(rest);
}

/**
 * "did you mean `toolguard validate`? " for a mistyped command (`valdate`, `VALIDATE`), also for the help and
 * version flags (`HELP`, `--Version`, `-v`); with `topic`, for a help topic (`toolguard help Lint`): commands only.
 * Empty when nothing is close. Loaded on this error path only: `--version` loads no more than it did.
 */
async function commandGuess(word: string, options: { topic?: boolean } = {}): Promise<string> {
  const { closestName } = await import("./_cli/io.ts");
  const flag = word.startsWith("-");
  // Each word as it is compared, and as it is suggested.
  const spelled: Record<string, string> = Object.fromEntries(
    Object.keys(COMMANDS).map((name) => [name, name]),
  );
  if (options.topic !== true) {
    Object.assign(spelled, { help: flag ? "--help" : "help", version: "--version" });
  }
  if (options.topic !== true && flag) Object.assign(spelled, { h: "--help", V: "--version" }); // `-v`, `-H`
  const near = closestName(flag ? word.replace(/^-+/, "") : word, Object.keys(spelled));
  return near === undefined ? "" : `did you mean \`toolguard ${spelled[near]}\`? `;
}

/**
 * Prints a usage error and the list of commands (after `guess`, a likely one), or `hint` instead, on stderr;
 * returns 2. The message quotes the arguments: printed safe for a terminal.
 */
function usageError(message: string, options: { guess?: string; hint?: string } = {}): number {
  writeErr(`${paint("red", "error", "stderr")}: toolguard: ${safeText(message)}\n`);
  writeErr(
    `hint: ${
      options.hint ??
        `${options.guess ?? ""}commands are ${Object.keys(COMMANDS).join(", ")}; run \`toolguard --help\``
    }\n`,
  );
  return EXIT_USAGE;
}

interface Host {
  args?: string[];
  argv?: string[];
  exit(status: number): never;
}

/** Deno's API, else Node's `process` (Bun, Node): read here, as under Deno `process` loads the Node layer. */
function host(): { deno: boolean; api: Host } {
  const deno = (globalThis as { Deno?: Host }).Deno;
  return deno ? { deno: true, api: deno } : { deno: false, api: (globalThis as { process: Host }).process };
}

/** The arguments after the executable (and the script, when run by a runtime). */
function programArgs(): string[] {
  const { deno, api } = host();
  return deno ? [...api.args!] : api.argv!.slice(2);
}

if (import.meta.main) {
  const status = await main(programArgs());
  host().api.exit(status);
}
