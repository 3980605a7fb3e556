/**
 * How the `toolguard` program starts itself again: as the fake tool for `toolguard selftest`, whether it
 * runs as a compiled executable or as a script under Deno or Bun.
 *
 * @module
 */
import type * as NodeFs from "node:fs";
import type NodeProcess from "node:process";
import type * as NodeUrl from "node:url";
import { nodeBuiltin } from "../_common/values.ts";
import type { FakeToolLauncher } from "./fake_tool.ts";

/** The hidden subcommand under which the program acts as the fake tool. */
export const FAKE_TOOL_COMMAND = "__fake-tool";

interface DenoSelf {
  execPath(): string;
}

/** The base name of a path without a Windows `.exe`, lower-cased. */
function baseName(path: string): string {
  return (path.split(/[\\/]/).pop() ?? "").replace(/\.exe$/i, "").toLowerCase();
}

/** The running executable: the compiled program, or the runtime running the script. */
function execPath(): string {
  const deno = (globalThis as { Deno?: DenoSelf }).Deno;
  return deno ? deno.execPath() : nodeBuiltin<typeof NodeProcess>("node:process").execPath;
}

/**
 * True when this program is a single executable (`deno compile`, `bun build --compile`) rather than a
 * script run by `deno` or `bun`.
 */
export function isCompiled(): boolean {
  // Bun's compiled programs load their modules from an embedded file system.
  if (/\/\$bunfs\/|~BUN/.test(import.meta.url)) return true;
  return !["deno", "bun", "node"].includes(baseName(execPath()));
}

/**
 * How to start this program as the fake tool: the executable itself with `__fake-tool` when compiled;
 * otherwise the runtime, the script `cli.ts` next to this module, then `__fake-tool`.
 */
export function selfLauncher(): FakeToolLauncher {
  const exec = execPath();
  if (isCompiled()) return { command: exec, argsPrefix: [FAKE_TOOL_COMMAND] };
  // Loaded here, not at import: the command imports this module before it knows which subcommand runs.
  const { fileURLToPath } = nodeBuiltin<typeof NodeUrl>("node:url");
  const { existsSync } = nodeBuiltin<typeof NodeFs>("node:fs");
  const cliUrl = new URL("../cli.ts", import.meta.url);
  const script = cliUrl.protocol === "file:" ? fileURLToPath(cliUrl) : cliUrl.href;
  if ((globalThis as { Deno?: unknown }).Deno) {
    const config = new URL("../deno.json", import.meta.url);
    const withConfig = config.protocol === "file:" && existsSync(fileURLToPath(config))
      ? ["--config", fileURLToPath(config)]
      : [];
    return { command: exec, argsPrefix: ["run", "-A", ...withConfig, script, FAKE_TOOL_COMMAND] };
  }
  return { command: exec, argsPrefix: [script, FAKE_TOOL_COMMAND] };
}
