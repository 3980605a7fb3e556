/**
 * `toolguard selftest [--hang-timeout MS] [--json] [--pretty]`: run the six-case harness on this machine,
 * with this program itself as the fake tool, so it works from the single executable with nothing else
 * installed.
 *
 * @module
 */
import {
  EXIT_FAIL,
  EXIT_OK,
  integerOption,
  paint,
  parseCommandLine,
  printedHelp,
  printJson,
  runMain,
  UsageError,
  wantsJson,
  writeOut,
} from "./io.ts";
import { selfLauncher } from "./self.ts";
import { runSelftest } from "./selftest_cases.ts";
import { describe } from "../_describe/describe.ts";

/** The `toolguard selftest --help` text. */
export const SELFTEST_HELP =
  `toolguard selftest: check that tool runs are classified correctly on this machine

Usage: toolguard selftest [options]

Runs this program as a fake tool in six ways (results, empty, refused, crash, silent, hang) and checks
that each lands in the kind the contract promises (results, empty, refused, exit, protocol, timeout).
Prints one PASS or FAIL line per case with the sentence the model would read.

Options:
  --hang-timeout MS   how long the hang case may run before the guard ends it (default 1000)
  --json              print the cases as JSON
  --pretty            print indented JSON (implies --json)
  -h, --help          show this help

Exit status: 0 when all six cases behave as designed, 1 when any does not, 2 for usage errors.
`;

/**
 * Run `toolguard selftest` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["--json"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("selftest", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "selftest",
      options: { "hang-timeout": { type: "string" }, json: { type: "boolean" }, pretty: { type: "boolean" } },
    });
    if (printedHelp(values, SELFTEST_HELP)) return EXIT_OK;
    if (positionals.length > 0) {
      throw new UsageError(
        `unexpected argument ${JSON.stringify(positionals[0])}`,
        "selftest takes no arguments",
      );
    }
    const launcher = selfLauncher();
    const cases = await runSelftest(launcher, { hangTimeoutMs: integerOption(values, "hang-timeout", 100) });
    const passed = cases.filter((c) => c.pass).length;
    if (wantsJson(values)) {
      printJson({ launcher, passed, total: cases.length, cases }, { pretty: values.pretty === true });
    } else {
      const width = Math.max(...cases.map((c) => c.name.length));
      let out = "";
      for (const c of cases) {
        const mark = c.pass ? paint("green", "PASS") : paint("red", "FAIL");
        out += `${mark} ${c.name.padEnd(width)}  expected ${c.expectedKind}, got ${c.result.kind} ` +
          `(${Math.round(c.result.durationMs)} ms): ${describe(c.result, { budget: 200 })}\n`;
      }
      out += passed === cases.length
        ? `${passed}/${cases.length} cases behaved as designed.\n`
        : `${
          paint("red", `${cases.length - passed} of ${cases.length} cases misbehaved`)
        }; please report this ` +
          "with the output of `toolguard selftest --json`.\n";
      writeOut(out);
    }
    return passed === cases.length ? EXIT_OK : EXIT_FAIL;
  });
}
