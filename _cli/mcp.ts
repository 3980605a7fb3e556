/**
 * `toolguard mcp [--scan-output] [--redact] [--forward-unchecked] [--log FILE] -- CMD ARGS...`: start a
 * stdio MCP server and relay between it and the client on this process's stdin/stdout, validating every
 * `tools/call` before the server sees it.
 *
 * @module
 */
import { type JsonlLog, jsonlLog } from "../_log/log.ts";
import {
  EXIT_FAIL,
  EXIT_OK,
  type OptionValues,
  parseCommandLine,
  printedHelp,
  runMain,
  stringOption,
  UsageError,
  writeErr,
} from "./io.ts";
import type { McpEvent } from "../_mcp/types.ts";
import { relayMcpStdio } from "../_mcp/relay.ts";

/** The `toolguard mcp --help` text. */
export const MCP_HELP = `toolguard mcp: guard any stdio MCP server without changing it

Usage: toolguard mcp [options] -- CMD [ARGS...]

Starts CMD as the MCP server and relays JSON-RPC between the client (this program's stdin/stdout) and it.
Every tools/call is validated against the inputSchema the server declared in tools/list before it is
forwarded; a rejected call is answered by toolguard with an isError result that tells the model how to
retry. Everything else passes through unchanged. Point your MCP client at \`toolguard mcp -- CMD ARGS\`
instead of \`CMD ARGS\`.

Options:
  --scan-output        flag tool results whose text carries injected instructions
  --redact             cut located injected instructions out of tool results (implies --scan-output)
  --forward-unchecked  forward calls to tools whose schema toolguard cannot enforce (default: reject them)
  --log FILE           append one JSON line per event (calls allowed/rejected, flagged output, exit)
  -h, --help           show this help

Exit status: 0 when the client closed the connection, 1 when the server could not start or died,
2 for usage errors.

Example (Claude Desktop / any MCP client config):
  "command": "toolguard", "args": ["mcp", "--scan-output", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"]
`;

/**
 * Run `toolguard mcp` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["--scan-output", "--", "node", "server.js"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("mcp", async () => {
    const split = args.indexOf("--");
    const own = split === -1 ? args : args.slice(0, split);
    let parsed: { values: OptionValues; positionals: string[] };
    try {
      parsed = parseCommandLine(own, {
        command: "mcp",
        options: {
          "scan-output": { type: "boolean" },
          redact: { type: "boolean" },
          "forward-unchecked": { type: "boolean" },
          log: { type: "string" },
        },
      });
    } catch (error) {
      // Without `--`, the server's own flags read as ours: say how to separate them.
      if (split === -1 && error instanceof UsageError) {
        throw new UsageError(
          error.message,
          "put the server command after `--`: toolguard mcp [options] -- CMD ARGS...",
        );
      }
      throw error;
    }
    const { values, positionals } = parsed;
    if (printedHelp(values, MCP_HELP)) return EXIT_OK;
    const server = split === -1 ? positionals : [...positionals, ...args.slice(split + 1)];
    if (server.length === 0) {
      throw new UsageError(
        "no server command given",
        "put the MCP server's command after `--`, e.g. `toolguard mcp -- npx -y @modelcontextprotocol/server-everything`",
      );
    }
    const logPath = stringOption(values, "log");
    let callLog: JsonlLog | null = null;
    if (logPath !== undefined) {
      try {
        // The log schema of every other toolguard log, so `toolguard stats` reads it.
        callLog = jsonlLog(logPath);
      } catch (error) {
        throw new UsageError(`cannot open log file ${logPath}: ${(error as Error).message}`);
      }
    }
    const warned = new Set<string>();
    const log = (event: McpEvent) => {
      if (event.event === "tools") {
        // Say once per tool, on stderr (MCP clients keep it as the server's log), what is not enforced.
        for (const u of event.unchecked.filter((u) => !warned.has(u.name))) {
          warned.add(u.name);
          const what = values["forward-unchecked"] === true
            ? "calls to it are forwarded unchecked"
            : "calls to it are rejected (use --forward-unchecked to let them through)";
          writeErr(`toolguard mcp: cannot enforce the inputSchema of tool ${u.name}: ${u.error}; ${what}\n`);
        }
      }
      callLog?.onMcpEvent(event); // never throws: a full disk must not take the relay down
    };
    try {
      const exit = await relayMcpStdio(server[0], server.slice(1), {
        scanOutput: values["scan-output"] === true,
        redact: values.redact === true,
        uncheckedTools: values["forward-unchecked"] === true ? "forward" : "reject",
        onEvent: log,
      });
      if (exit.reason === "spawn_failed" || exit.reason === "server_exited") {
        writeErr(`toolguard mcp: ${exit.detail}\n`);
        return exit.reason === "server_exited" && exit.exitCode === 0 ? EXIT_OK : EXIT_FAIL;
      }
      return EXIT_OK;
    } finally {
      await callLog?.close();
    }
  });
}
