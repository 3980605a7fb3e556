/**
 * Reading a tools file for the CLI: a JSON or JSONC list of declarations, or an object holding one under
 * `tools` (an MCP `tools/list` result, an OpenAI or Anthropic request body), or a single declaration.
 *
 * @module
 */
import { readJson } from "./io.ts";

/** Reads the declared tools from a JSON/JSONC file (or `-` for stdin) in any of the accepted layouts. */
export async function readTools(path: string): Promise<unknown[]> {
  const declared = await readJson(path);
  if (Array.isArray(declared)) return declared;
  if (typeof declared === "object" && declared !== null) {
    const tools = (declared as { tools?: unknown }).tools;
    if (Array.isArray(tools)) return tools;
  }
  return [declared];
}
