/**
 * Reads a code block out of README.md, so the tests run exactly what the README shows.
 *
 * @module
 */
import { readFileSync } from "node:fs";

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
