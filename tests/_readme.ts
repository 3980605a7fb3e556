/**
 * Reads a code block out of README.md, so the tests run exactly what the README shows, and puts a
 * `toolguard` command on PATH for the README's examples that call it by that name.
 *
 * @module
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { runtimeCommand } from "./_runtime.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The first code block of language `lang` after the heading `heading` in README.md (its text, without the
 * fences). Throws when there is none, so a README edit that drops the block fails the test that runs it.
 */
export function readmeBlock(heading: string, lang: string): string {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const at = readme.indexOf(`\n## ${heading}\n`);
  if (at === -1) throw new Error(`README.md has no "## ${heading}" section`);
  const match = readme.slice(at).match(new RegExp("\\n```" + lang + "(?: [^\\n]*)?\\n([\\s\\S]*?)\\n```"));
  if (!match) throw new Error(`README.md's "${heading}" section has no \`\`\`${lang} block`);
  return match[1] + "\n";
}

/**
 * Writes a `toolguard` shim into `dir` (POSIX sh: the CLI under the runtime running the tests) and returns
 * an environment whose PATH finds it first, so a README line that runs `toolguard ...` runs this checkout.
 */
export function toolguardOnPath(dir: string): Record<string, string | undefined> {
  const cli = runtimeCommand(join(root, "cli.ts"), [], { config: join(root, "deno.json") });
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const shim = join(dir, "toolguard");
  writeFileSync(shim, `#!/bin/sh\nexec ${[cli.command, ...cli.args].map(quote).join(" ")} "$@"\n`);
  chmodSync(shim, 0o755);
  return { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH ?? ""}` };
}
