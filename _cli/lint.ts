/**
 * `toolguard lint FILE|- [--strict] [--json] [--pretty]`: report what is wrong with tool declarations
 * before a model ever sees them.
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
import "../_common/pointer.ts";
import "../_validate/providers.ts";
import "../_schema/formats.ts";
import "../_schema/keywords.ts";
import "../_schema/report.ts";
import "../_schema/pattern.ts";
import "../_schema/linear_regexp.ts";
import "../_schema/values.ts";
import "../_schema/checkers.ts";
import "../_schema/codegen_js.ts";
import "../_schema/codegen_ok.ts";
import "../_schema/codegen_report.ts";
import "../_schema/fallbacks.ts";
import "../_schema/codegen.ts";
import "../_schema/object_checker.ts";
import "../_schema/refs.ts";
import "../_schema/compile.ts";
import "../_common/measure.ts";
import "../_common/json.ts";

import {
  EXIT_FAIL,
  EXIT_OK,
  inputName,
  onePositional,
  type OptionSpec,
  paint,
  parseCommandLine,
  printedHelp,
  printJson,
  runMain,
  safeText,
  shownText,
  wantsJson,
  writeOut,
} from "./io.ts";
import { readTools } from "./io.ts";
import { lintTools } from "../_validate/lint.ts";

/** The `toolguard lint --help` text. */
export const LINT_HELP = `toolguard lint: report what is wrong with tool declarations

Usage: toolguard lint FILE|- [options]

FILE holds the tools as JSON or JSONC, in any provider's shape: a list of declarations, or an object with
a "tools" list (an MCP tools/list result, a request body). - reads stdin.

Options:
  --strict      fail (exit 1) on warnings too, not only on errors
  --json        print the issues as JSON
  --pretty      print indented JSON (implies --json)
  -h, --help    show this help

Exit status: 0 when there are no errors (warnings allowed unless --strict), 1 when there are, 2 for usage
errors.
`;

/** The options of `toolguard lint` (`--help` aside), as `parseArgs` takes them; {@linkcode LINT_HELP} lists each. */
export const LINT_OPTIONS: Record<string, OptionSpec> = {
  strict: { type: "boolean" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

/**
 * Run `toolguard lint` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["tools.jsonc", "--strict"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("lint", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "lint",
      fileOperands: true,
      options: LINT_OPTIONS,
    });
    if (printedHelp(values, LINT_HELP)) return EXIT_OK;
    const file = onePositional(
      positionals,
      "tools file",
      "run `toolguard lint tools.json`, or `toolguard lint -` to read stdin",
      values,
    );
    const tools = await readTools(file);
    const issues = lintTools(tools);
    const errors = issues.filter((i) => i.severity === "error").length;
    const warnings = issues.length - errors;
    if (wantsJson(values)) {
      printJson(issues, { pretty: values.pretty === true });
    } else {
      // The file's name, a tool's name and a schema's keys are outside text: clipped, on one line.
      const name = shownText(inputName(file));
      let out = "";
      for (const i of issues) {
        const where = `tool #${i.index}${i.tool ? ` ${shownText(i.tool)}` : ""}${
          i.path ? ` at ${shownText(i.path)}` : ""
        }`;
        const sev = i.severity === "error" ? paint("red", "error") : paint("yellow", "warning");
        out += `${name}: ${where}: ${sev} ${i.code}: ${safeText(i.message)}\n`;
      }
      out += issues.length === 0
        ? `${paint("green", "OK")} ${tools.length} ${plural(tools.length, "tool")}, no issues\n`
        : `${tools.length} ${plural(tools.length, "tool")}: ${errors} ${
          plural(errors, "error")
        }, ${warnings} ${plural(warnings, "warning")}\n`;
      writeOut(out);
    }
    return errors > 0 || (values.strict === true && warnings > 0) ? EXIT_FAIL : EXIT_OK;
  });
}
