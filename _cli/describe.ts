/**
 * `toolguard describe FILE|- [--budget N] [--message openai|anthropic|ollama --call-id ID --tool-name NAME]
 * [--json] [--pretty]`: read a ToolResult (or a validation verdict) as JSON and print the sentence the
 * model would read.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import "../_common/values.ts";
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
import "../_describe/facts.ts";
import "../_describe/verdict.ts";

import {
  choiceOption,
  EXIT_FAIL,
  EXIT_OK,
  inputName,
  integerOption,
  onePositional,
  type OptionSpec,
  type OptionValues,
  parseCommandLine,
  printedHelp,
  printJson,
  readJson,
  runMain,
  safeText,
  shownText,
  stringOption,
  UsageError,
  wantsJson,
  writeOut,
} from "./io.ts";
import {
  describe,
  describeVerdict,
  isFailure,
  isRejected,
  type Provider,
  PROVIDERS,
  toolResultMessage,
} from "../_describe/describe.ts";
import type { CallVerdict, ToolResult, Verdict } from "../types.ts";

/** The `toolguard describe --help` text. */
export const DESCRIBE_HELP = `toolguard describe: print what the model reads about a tool result

Usage: toolguard describe FILE|- [options]

FILE holds a ToolResult as JSON (what \`toolguard run --json\` prints), or a validation verdict (what
\`toolguard validate --json\` prints). - reads stdin.

Options:
  --budget N            characters of a ToolResult's item JSON to quote (default 4000); whole items only
                        (a verdict's feedback has bounds of its own)
  --message PROVIDER    print a tool-result message for openai, anthropic or ollama instead of the sentence
  --call-id ID          the call id the message answers (openai, anthropic)
  --tool-name NAME      the tool name (ollama)
  --json                print {"sentence", "failure"} as JSON
  --pretty              print indented JSON (implies --json)
  -h, --help            show this help

Exit status: 0 when the result is a success (or every call was accepted), 1 when it is a failure or a
rejection (an inconsistent result counts as a failure), 2 for usage errors.
`;

/**
 * The options of `toolguard describe` (`--help` aside), as `parseArgs` takes them; {@linkcode DESCRIBE_HELP}
 * lists each.
 */
export const DESCRIBE_OPTIONS: Record<string, OptionSpec> = {
  budget: { type: "string" },
  message: { type: "string" },
  "call-id": { type: "string" },
  "tool-name": { type: "string" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

function isVerdictLike(value: unknown): value is Verdict | CallVerdict {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return Array.isArray(v.calls) || (Array.isArray(v.findings) && typeof v.allowed === "boolean");
}

/**
 * The provider `--message` names, or undefined without it. Checked before the file is looked for: with
 * `toolguard describe --message result.json`, the file was taken for the provider, and "missing the result
 * file" alone did not say why.
 */
function messageProvider(values: OptionValues, positionals: readonly string[]): Provider | undefined {
  const example = "`toolguard describe FILE --message openai --call-id ID`";
  return choiceOption(values, "message", PROVIDERS, {
    hint: positionals.length === 0
      ? `--message takes the provider, and the result file comes apart from it, as in ${example}`
      : `use --message openai|anthropic|ollama, as in ${example}`,
  });
}

/**
 * `--call-id` and `--tool-name` name the call a `--message` answers: given without `--message` they would do
 * nothing, and as an empty string (an unset variable) they would write an empty id or name; both are refused
 * rather than ignored. Both may be given with any provider (a script that serves every provider passes
 * both): the message takes the one its provider uses.
 */
function refuseStrayMessageOption(provider: Provider | undefined, values: OptionValues): void {
  for (const name of ["call-id", "tool-name"]) {
    const value = values[name];
    if (value === undefined) continue;
    if (value === "") {
      throw new UsageError(
        `--${name} is an empty string`,
        `give the ${name === "call-id" ? "call's id" : "tool's name"}`,
      );
    }
    if (provider === undefined) {
      const goesWith = name === "call-id" ? "--message openai|anthropic" : "--message ollama";
      throw new UsageError(
        `--${name} does nothing without ${goesWith}`,
        `add ${goesWith}, or leave --${name} out; run \`toolguard describe --help\``,
      );
    }
  }
}

/**
 * Run `toolguard describe` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["result.json", "--budget", "2000"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("describe", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "describe",
      fileOperands: true,
      options: DESCRIBE_OPTIONS,
    });
    if (printedHelp(values, DESCRIBE_HELP)) return EXIT_OK;
    const provider = messageProvider(values, positionals);
    refuseStrayMessageOption(provider, values);
    const file = onePositional(
      positionals,
      "result file",
      "run `toolguard describe result.json`, or `toolguard run --json -- CMD | toolguard describe -`",
      values,
    );
    const budget = integerOption(values, "budget", { min: 1 });
    const value = await readJson(file);
    const verdict = isVerdictLike(value);
    let sentence: string;
    let failure: boolean;
    if (verdict) {
      sentence = describeVerdict(value);
      failure = isRejected(value);
    } else {
      if (typeof value !== "object" || value === null || !("ok" in value)) {
        throw new UsageError(
          `${shownText(inputName(file))} is not a ToolResult (no "ok" field) or a verdict`,
          "pass what `toolguard run --json` or `toolguard validate --json` prints",
        );
      }
      sentence = describe(value as ToolResult, { budget });
      failure = isFailure(value as ToolResult);
    }
    if (provider !== undefined) {
      const callId = stringOption(values, "call-id");
      const toolName = stringOption(values, "tool-name");
      let message;
      try {
        message = verdict
          ? toolResultMessage(provider, { verdict: value, callId, toolName })
          : toolResultMessage(provider, {
            result: value as ToolResult,
            callId,
            toolName,
            budget,
          });
      } catch (error) {
        // The library names its own parameter (`callId`); the command line has a flag for it.
        const flag = provider === "ollama" ? "--tool-name NAME" : "--call-id ID";
        const what = /\(([^)]+)\)$/.exec((error as Error).message)?.[1];
        throw new UsageError(
          `--message ${provider} needs ${flag}${what === undefined ? "" : ` (${what})`}`,
          `pass it, as in \`toolguard describe ${
            file === "-" ? "-" : "FILE"
          } --message ${provider} ${flag}\``,
        );
      }
      printJson(message, { pretty: values.pretty === true });
    } else if (wantsJson(values)) {
      printJson({ sentence, failure }, { pretty: values.pretty === true });
    } else {
      // It quotes the tool's output or the model's call; a verdict's feedback has several lines.
      writeOut(safeText(sentence, { keepLines: verdict }) + "\n");
    }
    return failure ? EXIT_FAIL : EXIT_OK;
  });
}
