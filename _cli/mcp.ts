/**
 * `toolguard mcp [options] -- CMD ARGS...` (or `--url URL`): relay between the client on this process's
 * stdin/stdout and an MCP server, validating every `tools/call` before the server sees it, pinning tool
 * definitions, cleaning poisoned descriptions, refusing secrets in arguments. `toolguard mcp pins ...`
 * manages the pin file (`_cli/mcp_pins.ts`).
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import { clipMiddle, givenValue, shownAddress } from "../_common/values.ts";
import "../_common/bytes.ts";
import "../_common/pointer.ts";
import "../_common/measure.ts";
import "../_common/json.ts";
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
import "../_scan/scan.ts";
import "../_describe/facts.ts";
import "../_describe/verdict.ts";
import "../_describe/describe.ts";
import "../_log/files.ts";
import "../_run/pipes.ts";
import "../_run/windows.ts";
import "../_run/tree.ts";
import "../_run/runtime.ts";
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
import "../_validate/providers.ts";
import "../_validate/repair.ts";
import "../_validate/defaults.ts";
import "../_schema/strings.ts";
import "../_validate/validator.ts";
import "../_mcp/judge.ts";
import "../_mcp/poisoning.ts";
import "../_mcp/jsonrpc.ts";
import "../_mcp/framing.ts";
import "../_mcp/session.ts";
import "../_mcp/http_sessions.ts";
import "../_gate/sse.ts";

import { type JsonlLog, jsonlLog } from "../_log/log.ts";
import {
  cannotWrite,
  choiceOption,
  EXIT_FAIL,
  EXIT_OK,
  integerOption,
  logWriteWarning,
  type OptionValues,
  outputPathOption,
  parseCommandLine,
  pinsPathOption,
  printedHelp,
  runMain,
  safeText,
  shownText,
  stringOption,
  UsageError,
  writeErr,
} from "./io.ts";
import { envVar } from "./output.ts";
import type { McpEvent, McpGuardOptions } from "../_mcp/types.ts";
import { relayMcpStdio } from "../_mcp/relay.ts";
import { INJECTION_POLICIES } from "../_mcp/guard.ts";
import { relayMcpHttp } from "../_mcp/http.ts";
import { defaultPinsPath, type McpPinOptions } from "../_mcp/pins.ts";
import { main as pinsMain, shownDiff } from "./mcp_pins.ts";

/** The `toolguard mcp --help` text. */
export const MCP_HELP = `toolguard mcp: guard any MCP server without changing it

Usage: toolguard mcp [options] -- CMD [ARGS...]     a stdio server, started as CMD
       toolguard mcp [options] --url URL            a Streamable HTTP server
       toolguard mcp pins list|accept ...           review or accept changed tool definitions

Relays JSON-RPC between the client (this program's stdin/stdout) and the server. Every tools/call is
validated against the inputSchema the server declared in tools/list before it is forwarded; a rejected call
is answered by toolguard with an isError result that tells the model how to retry. Every request gets an
answer, also when the server's answer is too big or the server dies. Point your MCP client at
\`toolguard mcp -- CMD ARGS\` instead of \`CMD ARGS\`.

Options:
  --scan-output        flag injected instructions in everything the server sends: tool results
                       (text, structuredContent, embedded resources, resource links), resources/read,
                       prompts/get, sampling and elicitation requests, log and progress
                       notifications, error answers, every other message
  --redact             cut located injected instructions out of it (implies --scan-output)
  --pins FILE|none     where tool definitions are pinned (default: ${pinsHelpPath()});
                       a pinned tool whose description, input schema, title, annotations or output
                       schema changes is reported on stderr with a diff and its calls are refused until
                       accepted; none turns pinning off
  --accept-changed L   accept (re-pin) changed definitions of these tools this run: a comma list, or all
  --strict             hide tools whose description or title carries injected instructions (default: the
                       flagged part is cut out and marked, a title replaced whole) and refuse calls to them
  --injection MODE     argument-injection findings: warn (default: logged, call forwarded; legitimate
                       arguments such as a file that discusses prompt injection would be blocked otherwise,
                       and a model that was already injected is better caught by --scan-output), block
                       (rejected with feedback) or off
  --allow-secrets      forward calls whose arguments carry a private key or an API token (default: refused
                       with argument_secret)
  --url URL            guard the Streamable HTTP server at URL instead of starting CMD (same checks)
  --header "N: V"      with --url, send this header with every request (repeatable), e.g.
                       --header "Authorization: Bearer \${TOKEN}"; \${NAME} is read from the environment,
                       so a client's config can keep the secret in its env block; headers go to
                       the URL's origin only (a redirect elsewhere is an error, not followed)
  --max-in-flight N    with --url, how many of the client's requests may wait for the server at once
                       (default 64); a request past them is answered at once with an error telling the
                       client to wait for answers first (notifications past as many wait their turn)
  --forward-unchecked  forward calls to tools whose schema toolguard cannot enforce (default: reject them)
  --log FILE           append one JSON line per event (calls, flagged output, pins, changes, exit)
  -h, --help           show this help

Descriptions and titles (tools, prompts, resources, server instructions and title) are always checked for
instructions aimed at the model (read files, pass secrets, hide things from the user, call other tools) and
for naming tools the server does not declare (shadowing), titles also for a single hidden character (but
joiners, direction marks, emoji selectors and a zero-width space at a Thai, Lao, Khmer, Myanmar or Japanese
word break); a flagged description reaches the client with the span replaced by a [toolguard: removed ...]
marker (a title is replaced whole), and is logged.

Exit status: 0 when the client closed the connection or the server exited with 0, 1 when the server could
not start or ended otherwise (with --url: when the server did not take a message, unreachable or answering
with an HTTP error, or sent after an initialize that did not succeed; a request the relay answered itself,
e.g. past --max-in-flight, does not count), 2 for usage errors.

Example (Claude Desktop / any MCP client config):
  "command": "toolguard", "args": ["mcp", "--scan-output", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"]
`;

/** The default pin path as shown in the help (without this user's home spelled out). */
function pinsHelpPath(): string {
  return "$XDG_STATE_HOME/toolguard/pins.json,\n                       ~/.local/state/toolguard/pins.json, %LOCALAPPDATA%\\toolguard\\pins.json on Windows";
}

/** The relay's own options, as `parseArgs` takes them (each one is documented in {@linkcode MCP_HELP}). */
export const MCP_OPTIONS = {
  "scan-output": { type: "boolean" },
  redact: { type: "boolean" },
  "forward-unchecked": { type: "boolean" },
  log: { type: "string" },
  pins: { type: "string" },
  "accept-changed": { type: "string" },
  strict: { type: "boolean" },
  injection: { type: "string" },
  "allow-secrets": { type: "boolean" },
  url: { type: "string" },
  header: { type: "string", multiple: true },
  "max-in-flight": { type: "string" },
} as const;

/** Headers the relay sets itself: a `--header` for one of them is refused rather than ignored. */
const RELAY_HEADERS = ["accept", "content-type", "last-event-id", "mcp-protocol-version", "mcp-session-id"];

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `--header "Name: Value"` options as request headers, `${NAME}` in a value replaced by that environment
 * variable (read through `env`); a malformed header or an unset variable is a {@linkcode UsageError}.
 */
export function headerOptions(
  list: readonly string[],
  env: (name: string) => string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const option of list) {
    const colon = option.indexOf(":");
    const name = option.slice(0, colon).trim();
    if (colon < 0 || !HEADER_NAME.test(name)) {
      throw new UsageError(
        `--header takes "Name: Value", got ${givenValue(option)}`,
        'e.g. --header "Authorization: Bearer ${TOKEN}"',
      );
    }
    if (RELAY_HEADERS.includes(name.toLowerCase())) {
      throw new UsageError(
        `--header ${name}: toolguard sets this header itself`,
        "leave it out; give only headers the server asks for, such as Authorization",
      );
    }
    const value = option.slice(colon + 1).trim().replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g,
      (_, v: string) => {
        const found = env(v);
        if (found === undefined) {
          throw new UsageError(
            `--header ${clipMiddle(name)}: the environment variable ${clipMiddle(v)} is not set`,
            "set it in the environment the client starts toolguard with (its env block)",
          );
        }
        return found;
      },
    );
    // HTTP field values: visible Latin-1 characters, spaces and tabs (fetch refuses the rest at each request).
    if (/[^\t\x20-\x7e\x80-\xff]/.test(value)) {
      throw new UsageError(
        `--header ${
          clipMiddle(name)
        }: the value holds a control character (such as a line break) or a character ` +
          "beyond Latin-1, which an HTTP header cannot carry",
        "give the value on one line, in ASCII (encode anything else as the server expects)",
      );
    }
    if (Object.keys(headers).some((seen) => seen.toLowerCase() === name.toLowerCase())) {
      throw new UsageError(
        `--header ${clipMiddle(name)} is given twice`,
        "give each header once, with its whole value",
      );
    }
    headers[name] = value;
  }
  return headers;
}

/** Split our options from the server command (after `--`, or the positionals). */
function parseRelayArgs(args: string[]): { values: OptionValues; server: string[] } {
  const split = args.indexOf("--");
  const own = split === -1 ? args : args.slice(0, split);
  try {
    const { values, positionals } = parseCommandLine(own, { command: "mcp", options: MCP_OPTIONS });
    return { values, server: split === -1 ? positionals : [...positionals, ...args.slice(split + 1)] };
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
}

/** `--pins` and `--accept-changed` as pin options; undefined with `--pins none`. */
function pinOptions(values: OptionValues, serverKey: string): McpPinOptions | undefined {
  const file = pinsPathOption(values, defaultPinsPath);
  if (file === "none") return undefined;
  const list = stringOption(values, "accept-changed");
  const accept = list === undefined
    ? undefined
    : list.trim() === "all"
    ? "all" as const
    : list.split(",").map((s) => s.trim()).filter((s) => s !== "");
  return { server: serverKey, file, accept };
}

/** The guard options the flags ask for. */
function guardOptions(values: OptionValues, serverKey: string): McpGuardOptions {
  const injection = choiceOption(values, "injection", INJECTION_POLICIES, {
    hint: "run `toolguard mcp --help` for what each does",
  }) ?? "warn";
  return {
    scanOutput: values["scan-output"] === true,
    redact: values.redact === true,
    uncheckedTools: values["forward-unchecked"] === true ? "forward" : "reject",
    pins: pinOptions(values, serverKey),
    strict: values.strict === true,
    injection,
    allowSecrets: values["allow-secrets"] === true,
  };
}

/**
 * A notice on stderr, printed safe for a terminal; its own line breaks are kept (a diff), so a name or text
 * from the server it quotes is made safe on one line where it is quoted (a tool named `x\nhint: ...` would
 * forge a line of the log an MCP client keeps).
 */
function notice(text: string): void {
  writeErr(safeText(text, { keepLines: true }));
}

/**
 * The stderr notice for a message of the client's or the server's that was not passed on (the first of its
 * kind: later ones go to --log only). Text the event quotes from the server is written as JSON, one line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { strayNotice } from "./mcp.ts";
 *
 * const notice = strayNotice({ event: "stray_message", from: "server", kind: "not_judged", text: "a\nb" });
 * assert.match(notice, /could not judge: "a\\nb"; not passed on/);
 * ```
 */
export function strayNotice(event: Extract<McpEvent, { event: "stray_message" }>): string {
  // (a notification has no id: none is named then)
  const id = event.id === undefined ? "" : ` (id ${JSON.stringify(event.id)})`;
  if (event.from === "client") {
    return `toolguard mcp: the client sent an answer${id} that no request of the server's waits for; ` +
      "not passed on (nor are later ones; --log records each)\n";
  }
  // (without an id: a notification, dropped with nothing in its place, as the CLI meets no other; a message
  // whose id could not be read, for which every request still waiting is answered with an error, is a
  // transport's value built in code, which the CLI's relays, reading JSON text, never hand the guard; with
  // an id, the event does not say whether it was an answer or a request, so the notice says what becomes of
  // each)
  const notJudged = event.id === undefined
    ? ""
    : " (an answer to a waiting request gets an error in its place, a request is answered with one)";
  const what: Record<typeof event.kind, string> = {
    not_json: `wrote a line that is not JSON to its output: ${JSON.stringify(event.text)}`,
    no_request: `sent an answer${id} that no request waits for`,
    request_and_answer: `sent a message${id} that is both a request and an answer`,
    too_deep: `sent a message${id} nested too deeply to be written out again (a request among ` +
      "such messages is answered with an error)",
    not_judged: `sent a message${id} the guard could not judge: ${JSON.stringify(event.text)}${notJudged}`,
  };
  return `toolguard mcp: the server ${
    what[event.kind]
  }; not passed on (nor are later ones; --log records each)\n`;
}

/** What the user must see on stderr (MCP clients keep it as the server's log), once per tool. */
function stderrNotice(event: McpEvent, values: OptionValues, warned: Set<string>): void {
  if (event.event === "tools") {
    for (const u of event.unchecked.filter((u) => !warned.has(u.name))) {
      warned.add(u.name);
      const what = values["forward-unchecked"] === true
        ? "calls to it are forwarded unchecked"
        : "calls to it are rejected (use --forward-unchecked to let them through)";
      // (the validator's error names the tool too)
      notice(
        `toolguard mcp: cannot enforce the inputSchema of tool ${shownText(u.name)}: ${
          shownText(u.error)
        }; ${what}\n`,
      );
    }
  } else if (event.event === "tool_changed" && !warned.has(`changed:${event.name}:${event.seen}`)) {
    warned.add(`changed:${event.name}:${event.seen}`);
    const name = shownText(event.name);
    const pins = stringOption(values, "pins");
    const accept = `toolguard mcp pins accept${pins === undefined ? "" : ` --pins ${shownText(pins)}`}`;
    const what = event.accepted
      ? "accepted (--accept-changed) and re-pinned"
      : name === event.name
      ? `its calls are refused until you accept it: ${accept} ${name}`
      // A name clipped or escaped cannot be typed as shown.
      : `its calls are refused until you accept it: ${accept} --all (after \`toolguard mcp pins list\`: ` +
        "it accepts every changed definition that waits)";
    notice(
      `toolguard mcp: the definition of tool ${name} changed since it was pinned; ${what}\n` +
        shownDiff(event.diff, "  ", pins),
    );
  } else if (event.event === "description_flagged") {
    const text = textKind(event.pointer);
    const key = `desc:${event.kind}:${event.name}:${text}`;
    if (warned.has(key)) return;
    warned.add(key);
    const what = event.hidden ? "hidden from the client (--strict)" : "the flagged part was removed";
    const why = [...new Set(event.findings.map((f) => f.category))].join(", ");
    notice(
      `toolguard mcp: the ${text} of ${event.kind} ${
        shownText(event.name)
      } looks poisoned (${why}); ${what}\n`,
    );
  } else if (event.event === "stray_message" && !warned.has(`stray:${event.from}:${event.kind}`)) {
    warned.add(`stray:${event.from}:${event.kind}`);
    notice(strayNotice(event));
  } else if (event.event === "client_message_refused" && !warned.has(`client:${event.kind}`)) {
    warned.add(`client:${event.kind}`);
    const what: Record<typeof event.kind, string> = {
      not_json: "a line that is not JSON; not passed on to the server, since the guard cannot judge it",
      call_without_id:
        "a tools/call without an id; not passed on to the server, since the guard cannot judge it",
      id_in_use:
        "a request under the id of one still waiting; not passed on, since their answers could not be told apart",
      invalid_id:
        "a request whose id is no string or integer MCP allows (an array, an object, a number too " +
        "large to read back); not passed on, since no answer could reach it (it is answered with an error)",
      case_variant: "a message with a JSON-RPC member spelled in another case (Method, ID); not passed on, " +
        "since a server that ignores case could read it for the member the guard judged (a request is answered " +
        "with an error)",
      in_flight_limit:
        "more requests at once than --max-in-flight; those past it were answered with an error, not sent",
      held_limit: "more than 1024 messages while toolguard read the server's tool list, or waited for the " +
        "answer to initialize; the requests past them were answered with an error, not sent",
      too_deep:
        "a message nested too deeply to be written out again; not passed on to the server (a request " +
        "is answered with an error)",
      initialize_failed: "messages after an initialize that did not succeed; not passed on to the server " +
        "(a request is answered with an error saying why)",
      cancels_initialize: "a cancel of its initialize, which MCP forbids a client; not passed on to the " +
        "server (the messages sent after that initialize were answered with errors, or dropped)",
    };
    notice(`toolguard mcp: the client sent ${what[event.kind]} (nor are later ones; --log records each)\n`);
  } else if (event.event === "post_failed" && !warned.has(`post:${event.detail}`)) {
    warned.add(`post:${event.detail}`);
    notice(`toolguard mcp: ${safeText(event.detail)}; the client's requests were answered with errors\n`);
  } else if (event.event === "stream_failed" && !warned.has(`stream:${event.detail}`)) {
    warned.add(`stream:${event.detail}`);
    notice(
      `toolguard mcp: ${safeText(event.detail)}; the server's messages come on the answers to POSTs alone\n`,
    );
  } else if (event.event === "repeated_key" && !warned.has(`repeated:${event.from}`)) {
    warned.add(`repeated:${event.from}`);
    // (the pointer quotes the sender's keys: made safe for a terminal)
    notice(
      `toolguard mcp: the ${event.from === "client" ? "client" : "server"} sent a message that names ${
        shownText(event.pointer)
      } twice; passed on written anew with the value the guard judged, the last (said once; --log ` +
        "records each)\n",
    );
  } else if (event.event === "invalid_utf8" && !warned.has(`utf8:${event.from}`)) {
    warned.add(`utf8:${event.from}`);
    notice(
      `toolguard mcp: the ${
        event.from === "client" ? "client" : "server"
      } sent a message that is not valid UTF-8; passed on written anew as the guard read it, each bad byte ` +
        "as U+FFFD (said once; --log records each)\n",
    );
  } else if (event.event === "session_id_ignored" && !warned.has("session_id")) {
    warned.add("session_id");
    notice(`toolguard mcp: ${safeText(event.detail)}\n`);
  } else if (event.event === "pins_error" && !warned.has(`pins:${event.detail}`)) {
    warned.add(`pins:${event.detail}`);
    notice(`toolguard mcp: ${safeText(event.detail)}; pins are kept in memory for this run\n`);
  }
}

/** Whether a flagged text (by its pointer) is a title or a description, for the notice. */
function textKind(pointer: string): "title" | "description" {
  return pointer.endsWith("/title") ? "title" : "description";
}

/**
 * An event hook that writes stderr notices and, with `--log`, one JSON line per event; it counts the
 * messages that never reached a `--url` server, which decide the exit status.
 */
function eventLog(
  values: OptionValues,
  callLog: JsonlLog | null,
): { onEvent: (event: McpEvent) => void; failedPosts: () => number } {
  const warned = new Set<string>();
  let failedPosts = 0;
  return {
    onEvent: (event) => {
      // (a message held for an initialize that failed never reached the server either)
      if (event.event === "post_failed") failedPosts++;
      else if (event.event === "client_message_refused" && event.kind === "initialize_failed") failedPosts++;
      stderrNotice(event, values, warned);
      callLog?.onMcpEvent(event); // never throws: a full disk must not take the relay down
    },
    failedPosts: () => failedPosts,
  };
}

/** A `--url` must be an absolute http or https URL: anything else could never reach a server. */
function checkServerUrl(url: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    // not a URL: refused below
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new UsageError(
      `--url ${givenValue(url)} is not an http or https URL`,
      "give the server's full address, e.g. --url http://127.0.0.1:3000/mcp",
    );
  }
}

/**
 * Run `toolguard mcp` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["--scan-output", "--", "node", "server.js"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  if (args[0] === "pins") return pinsMain(args.slice(1));
  return runMain("mcp", async () => {
    const { values, server } = parseRelayArgs(args);
    if (printedHelp(values, MCP_HELP)) return EXIT_OK;
    const url = stringOption(values, "url");
    if (url !== undefined) checkServerUrl(url);
    if (url !== undefined && server.length > 0) {
      throw new UsageError(
        "give either --url URL or a server command after `--`, not both",
        "--url for a Streamable HTTP server, `-- CMD ARGS...` for a stdio server",
      );
    }
    if (url === undefined && server.length === 0) {
      throw new UsageError(
        "no server command given",
        "put the MCP server's command after `--`, e.g. `toolguard mcp -- npx -y @modelcontextprotocol/server-everything`",
      );
    }
    const headerList = (values.header ?? []) as string[];
    if (headerList.length > 0 && url === undefined) {
      throw new UsageError(
        "--header goes with --url",
        "a stdio server takes its settings from its own arguments",
      );
    }
    const headers = headerOptions(headerList, envVar);
    const maxInFlight = integerOption(values, "max-in-flight", { min: 1 });
    if (maxInFlight !== undefined && url === undefined) {
      throw new UsageError(
        "--max-in-flight goes with --url",
        "a stdio server reads the client's requests from one pipe, in order: there is nothing to bound",
      );
    }
    const options = guardOptions(values, url ?? server.join(" "));
    const logPath = outputPathOption(values, "log");
    let callLog: JsonlLog | null = null;
    if (logPath !== undefined) {
      try {
        // The log schema of every other toolguard log, so `toolguard stats` reads it.
        callLog = jsonlLog(logPath, { onError: logWriteWarning("mcp", logPath) });
      } catch (error) {
        throw cannotWrite("log", logPath, error);
      }
    }
    try {
      const { onEvent, failedPosts } = eventLog(values, callLog);
      const exit = url !== undefined
        ? await relayMcpHttp(url, { ...options, headers, onEvent, ...(maxInFlight ? { maxInFlight } : {}) })
        : await relayMcpStdio(server[0], server.slice(1), { ...options, onEvent });
      // (how the relay ended, on every exit: the stdio relay's detail says how far ending the server's tree
      // reached; the HTTP relay's printed nothing)
      notice(`toolguard mcp: ${exit.detail}\n`);
      if (exit.reason === "spawn_failed" || exit.reason === "server_exited") {
        return exit.reason === "server_exited" && exit.exitCode === 0 ? EXIT_OK : EXIT_FAIL;
      }
      // Like a server that exited non-zero: whoever started the relay learns that messages were lost.
      const failed = failedPosts();
      if (failed > 0) {
        const what = failed === 1 ? "1 message" : `${failed} messages`;
        notice(
          `toolguard mcp: the MCP server at ${
            shownText(shownAddress(url!))
          } did not take ${what} (not reached, refused, or ` +
            "sent after an initialize that did not succeed); " +
            "the client's requests among them were answered with an error\n",
        );
        return EXIT_FAIL;
      }
      return EXIT_OK;
    } finally {
      await callLog?.close();
    }
  });
}
