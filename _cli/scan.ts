/**
 * `toolguard scan FILE|- [--context C] [--json] [--pretty]`: look for injected instructions in a text file
 * and print each finding with its line and column.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import { plural } from "../_common/values.ts";
import "../_common/bytes.ts";
import "./output.ts";
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

import {
  choiceOption,
  EXIT_FAIL,
  EXIT_OK,
  inputName,
  lineLocator,
  onePositional,
  type OptionSpec,
  paint,
  parseCommandLine,
  printedHelp,
  printJson,
  readText,
  runMain,
  safeText,
  wantsJson,
  writeOut,
} from "./io.ts";
import { scan, SCAN_CONTEXTS } from "../_scan/scan.ts";

/** The `toolguard scan --help` text. */
export const SCAN_HELP = `toolguard scan: look for injected instructions in text

Usage: toolguard scan FILE|- [options]

Options:
  --context C   where the text came from: tool_output (default), user_text, tool_args, cli_arg
  --json        print the scan result ({ blocked, categories, findings }) as JSON
  --pretty      print indented JSON (implies --json)
  -h, --help    show this help

Each finding is printed as FILE:LINE:COLUMN CATEGORY RULE: EXCERPT.
Exit status: 0 when nothing blocking was found, 1 when the text should be blocked, 2 for usage errors.
`;

/** The options of `toolguard scan` (`--help` aside), as `parseArgs` takes them; {@linkcode SCAN_HELP} lists each. */
export const SCAN_OPTIONS: Record<string, OptionSpec> = {
  context: { type: "string" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

/**
 * Run `toolguard scan` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["page.html", "--json"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("scan", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "scan",
      fileOperands: true,
      options: SCAN_OPTIONS,
    });
    if (printedHelp(values, SCAN_HELP)) return EXIT_OK;
    const file = onePositional(
      positionals,
      "file to scan",
      "run `toolguard scan FILE`, or `toolguard scan -` to read stdin",
      values,
    );
    const context = choiceOption(values, "context", SCAN_CONTEXTS, {
      hint: "run `toolguard scan --help` for where each text comes from",
    }) ?? "tool_output";
    const text = await readText(file, { invalidUtf8: "replace" }); // scanned only: the rest still counts
    const result = scan(text, { context });
    if (wantsJson(values)) {
      printJson(result, { pretty: values.pretty === true });
    } else {
      const name = safeText(inputName(file));
      let out = "";
      const locate = lineLocator(text); // findings come in order: one pass over the text for all
      for (const f of result.findings) {
        const { line, column } = locate(f.start);
        out += `${name}:${line}:${column} ${paint("yellow", f.category)} ${f.rule}: ${safeText(f.excerpt)}\n`;
      }
      const verdict = result.blocked
        ? paint("red", "BLOCKED")
        : result.findings.length > 0
        ? paint("yellow", "WARN")
        : paint("green", "CLEAN");
      out += `${verdict} ${result.findings.length} ${plural(result.findings.length, "finding")}` +
        (result.categories.length > 0 ? `: ${result.categories.join(", ")}` : "") + "\n";
      writeOut(out);
    }
    return result.blocked ? EXIT_FAIL : EXIT_OK;
  });
}
