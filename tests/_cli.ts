/**
 * Runs a CLI entry point (`main` of `cli.ts` or of one subcommand) in this process with its output
 * captured: fast (no runtime start-up) and the same for every test that drives the command.
 *
 * @module
 */
import { captureOutput } from "../_cli/io.ts";

/** What a run of the command gave. */
export interface CliRun {
  /** The exit status `main` returned. */
  status: number;
  /** Everything written to stdout. */
  stdout: string;
  /** Everything written to stderr. */
  stderr: string;
}

/** Runs `main(args)` with stdout and stderr captured. */
export async function runInProcess(
  main: (args: string[]) => Promise<number>,
  args: string[],
): Promise<CliRun> {
  const captured = captureOutput();
  try {
    const status = await main(args);
    return { status, stdout: captured.stdout, stderr: captured.stderr };
  } finally {
    captured.restore();
  }
}
