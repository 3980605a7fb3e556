/**
 * Runs Bun with the given arguments: the `bun` on PATH, else the one `deno install` put in node_modules.
 *
 * The Bun tasks go through this script because `deno task` resolves a bare `bun` to
 * `node_modules/.bin/bun` first and runs it as a JavaScript bin script, which fails on Bun's native
 * executable ("SyntaxError: Invalid or unexpected token"). Works the same on Windows.
 *
 * ```sh
 * deno run -A scripts/bun.ts build --compile cli.ts --outfile dist/toolguard
 * ```
 *
 * @module
 */

/** True when `command --version` runs. */
export function runs(command: string): boolean {
  try {
    return new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** Bun's executable installed by `deno install` under node_modules (native, not a script). */
export function localBun(): string {
  const exe = Deno.build.os === "windows" ? "bun.exe" : "bun";
  const url = new URL(`../node_modules/bun/bin/${exe}`, import.meta.url);
  const path = decodeURIComponent(url.pathname).replace(/^\/([A-Za-z]:)/, "$1");
  // The npm package ships `bin/bun.exe` on every OS (its install script swaps in the native binary).
  for (const candidate of [path, path.replace(/bun$/, "bun.exe")]) {
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch {
      // not this one
    }
  }
  return path;
}

/** The Bun to run: `bun` when PATH has one, else node_modules' own. */
export function findBun(): string {
  return runs("bun") ? "bun" : localBun();
}

if (import.meta.main) {
  const bun = findBun();
  try {
    const { code } = await new Deno.Command(bun, {
      args: Deno.args,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    Deno.exit(code);
  } catch (error) {
    console.error(
      `could not start Bun (${bun}): ${error instanceof Error ? error.message : error}. ` +
        "Install it with `npm install -g bun@1.4.5`, or run `deno task check` once to install the dev dependencies.",
    );
    Deno.exit(127);
  }
}
