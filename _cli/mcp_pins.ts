/**
 * `toolguard mcp pins list|accept`: show the pinned tool definitions and the changed ones waiting for a
 * decision, and accept changes (the new definition becomes the pinned one, and its calls run again).
 *
 * @module
 */
import { clipMiddle, errorText, givenValue, plural } from "../_common/values.ts";
import {
  closestName,
  EXIT_FAIL,
  EXIT_OK,
  type OptionSpec,
  type OptionValues,
  parseCommandLine,
  pinsPathOption,
  printedHelp,
  printJson,
  runMain,
  safeText,
  shownText,
  stringOption,
  UsageError,
  writeErr,
  writeOut,
} from "./io.ts";
import {
  acceptPending,
  defaultPinsPath,
  diffDefinitions,
  pinKey,
  pinOf,
  readPinFile,
  writePinFile,
} from "../_mcp/pins.ts";

/** The `toolguard mcp pins --help` text. */
export const MCP_PINS_HELP = `toolguard mcp pins: review and accept changed MCP tool definitions

Usage: toolguard mcp pins list [--pins FILE] [--json]
       toolguard mcp pins accept [--pins FILE] [--server KEY] (--all | TOOL...)

list    every server's pinned tools, and the changed definitions waiting (with a diff)
accept  make the changed definition of each TOOL (or of every tool, with --all) the pinned one, so its
        calls run again; --server limits this to one server: its key as list shows it, or its command line
        or URL as given to toolguard mcp (a URL with a user name, password, query or fragment is listed
        without them)

Options:
  --pins FILE    the pin file (default: the one \`toolguard mcp\` uses)
  --server KEY   only this server
  --all          accept every waiting change
  --json         print the pin file as JSON (list)
  -h, --help     show this help

Exit status: 0 when done, also for --all with no change waiting (nothing to do is not a failure); 1 when
a TOOL named has no changed definition waiting (a misspelt name, or one accepted already), and then none
of the TOOLs is accepted; 2 for usage errors.
`;

/**
 * The options of `toolguard mcp pins` (`--help` aside), as `parseArgs` takes them; {@linkcode MCP_PINS_HELP}
 * lists each, and with which action it goes.
 */
export const MCP_PINS_OPTIONS: Record<string, OptionSpec> = {
  pins: { type: "string" },
  server: { type: "string" },
  all: { type: "boolean" },
  json: { type: "boolean" },
};

/**
 * An option or argument given to the action it does not go with (`list --server`, `accept --json`): refused,
 * as the usage lines say, rather than ignored.
 */
function refuseOtherAction(action: "list" | "accept", values: OptionValues, tools: readonly string[]): void {
  const stray = action === "list"
    ? (values.server !== undefined ? "--server" : values.all === true ? "--all" : undefined)
    : values.json === true
    ? "--json"
    : undefined;
  if (stray !== undefined) {
    throw new UsageError(
      `${stray} goes with ${action === "list" ? "accept" : "list"}, not ${action}`,
      "run `toolguard mcp pins --help` for what each action takes",
    );
  }
  if (action === "list" && tools.length > 0) {
    throw new UsageError(
      `list takes no tool names, got ${givenValue(tools[0])}`,
      "run `toolguard mcp pins list`",
    );
  }
  if (action === "accept" && values.all === true && tools.length > 0) {
    throw new UsageError(
      "give --all or the names of the tools to accept, not both",
      "`toolguard mcp pins list` shows the changed definitions that wait",
    );
  }
}

/**
 * Run `toolguard mcp pins` with the arguments after `pins`.
 *
 * @param args Command-line arguments, e.g. `["accept", "get-weather"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("mcp pins", () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "mcp pins",
      options: MCP_PINS_OPTIONS,
    });
    if (printedHelp(values, MCP_PINS_HELP)) return Promise.resolve(EXIT_OK);
    const [action, ...tools] = positionals;
    // Before the pin file is read: a missing or misspelt action is said as such, not as the file's fault.
    if (action !== "list" && action !== "accept") {
      const near = action === undefined ? undefined : closestName(action, ["list", "accept"]);
      throw new UsageError(
        action === undefined ? "missing the action, list or accept" : `unknown action ${givenValue(action)}`,
        `${
          near === undefined ? "" : `did you mean \`toolguard mcp pins ${near}\`? `
        }use \`list\` or \`accept\`; run \`toolguard mcp pins --help\``,
      );
    }
    refuseOtherAction(action, values, tools);
    const path = pinsPathOption(values, defaultPinsPath);
    let pins;
    try {
      pins = readPinFile(path);
    } catch (error) {
      // The message quotes the file's path: on one line, as runMain keeps a message's own line breaks.
      throw new UsageError(
        safeText(errorText(error)),
        "the relay keeps pins in memory until the file is fixed",
      );
    }
    if (action === "list") {
      if (values.json === true) printJson(pins, { pretty: true }); // exact: what the file holds
      else writeOut(listing(pins, stringOption(values, "pins")));
      return Promise.resolve(EXIT_OK);
    }
    if (values.all !== true && tools.length === 0) {
      throw new UsageError(
        "name the tools to accept, or pass --all",
        "`toolguard mcp pins list` shows the changed definitions that wait",
      );
    }
    const server = stringOption(values, "server");
    const waiting = pendingNames(pins, server);
    const accepted = acceptPending(pins, { tools: values.all === true ? "all" : tools, server });
    if (accepted.length === 0 && values.all === true) {
      // As git says "Already up to date": the state asked for holds, nothing to write.
      const where = server === undefined ? "" : ` for ${shownText(server)}`;
      writeOut(`nothing to accept: no changed definition waits${where}\n`);
      return Promise.resolve(EXIT_OK);
    }
    // A TOOL named that waits for nothing (a misspelt name): nothing is accepted, as `git add` adds nothing
    // when one path matches no file; the user runs it again with the names put right.
    const missing = tools.filter((tool) => !accepted.some((a) => a.tool === tool));
    if (missing.length > 0) {
      const others = accepted.length === 0 ? "" : "; nothing was accepted";
      const where = server === undefined ? "" : ` (server ${shownText(server)})`;
      writeErr(
        `toolguard mcp pins: no changed definition waits for ${
          shownText(missing.join(", "))
        }${where}${others}\n`,
      );
      const near = closestName(missing[0], waiting);
      const pinsFlag = stringOption(values, "pins") === undefined ? "" : ` --pins ${shownText(path)}`;
      writeErr(
        `hint: ${
          near === undefined ? "" : `did you mean ${shownText(near)}? `
        }\`toolguard mcp pins list${pinsFlag}\` ` +
          "shows the changed definitions that wait\n",
      );
      return Promise.resolve(EXIT_FAIL);
    }
    writePinFile(path, pins);
    for (const a of accepted) writeOut(`accepted ${shownText(a.tool)} (${shownText(a.server)})\n`);
    return Promise.resolve(EXIT_OK);
  });
}

/** The names of the tools whose changed definition waits, of every server or only `server` (as accept reads it). */
function pendingNames(pins: ReturnType<typeof readPinFile>, server: string | undefined): string[] {
  const wanted = server === undefined ? undefined : [server, pinKey(server)];
  return Object.entries(pins.servers).flatMap(([key, entry]) =>
    wanted !== undefined && !wanted.includes(key) ? [] : Object.keys(entry.pending ?? {})
  );
}

/**
 * The longest line of a definition diff shown whole, in UTF-16 units: room for a long sentence of a
 * description or a line of a schema, while a hostile server's 100 000-character description shows only its
 * start and end (the pin file, `toolguard mcp pins list --json`, holds it whole).
 */
const MAX_DIFF_LINE = 1000;

/**
 * The most lines of a definition diff shown: a hostile server's description of 100 000 sentences (one line
 * each in the diff) would otherwise print 100 000 lines on every change, in the client's log of the server.
 */
const MAX_DIFF_LINES = 200;

/** Unchanged lines kept on each side of a change; a longer unchanged run is counted on one line instead. */
const DIFF_CONTEXT = 3;

/**
 * A diff of two tool definitions (`diffDefinitions`) as the terminal shows it: each line after `indent`, safe
 * for a terminal and on one line (a line break in a description would start a line of its own, a forged
 * entry), clipped in the middle past {@linkcode MAX_DIFF_LINE}. Unchanged lines further than
 * {@linkcode DIFF_CONTEXT} from a change are counted, not shown, and at most {@linkcode MAX_DIFF_LINES} lines are
 * shown; where anything was clipped or left out, a last line says where the whole text is (`pinsOption`: the
 * `--pins` given, to repeat in that command).
 *
 * @example A long unchanged run is counted
 * ```ts
 * import assert from "node:assert/strict";
 * import { shownDiff } from "./mcp_pins.ts";
 *
 * const diff = ["  a", "  b", "  c", "  d", "  e", "- f", "+ F"].join("\n");
 * assert.equal(shownDiff(diff, ""), "  \u2026 (2 unchanged lines)\n  c\n  d\n  e\n- f\n+ F\n");
 * ```
 */
export function shownDiff(diff: string, indent: string, pinsOption?: string): string {
  const lines = diff.split("\n");
  // Whether each line is within DIFF_CONTEXT lines of a change ("+ " or "- "), looking both ways.
  const near = new Array<boolean>(lines.length).fill(false);
  for (let i = 0, last = -Infinity; i < lines.length; i++) {
    if (!lines[i].startsWith("  ")) last = i;
    near[i] = i - last <= DIFF_CONTEXT;
  }
  for (let i = lines.length - 1, next = Infinity; i >= 0; i--) {
    if (!lines[i].startsWith("  ")) next = i;
    near[i] ||= next - i <= DIFF_CONTEXT;
  }
  // What is shown, in order: a line of the diff (its index), or a count of unchanged lines left out.
  const entries: { at: number; run: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    let run = 0;
    while (i + run < lines.length && !near[i + run]) run++;
    entries.push({ at: i, run });
    if (run > 0) i += run - 1;
  }
  // Past the bound, the first and the last half: what the old definition lost and what the new one holds at
  // its end (a diff above diffDefinitions' size bound is every old line out, then every new line in).
  let left = 0;
  let kept = entries;
  if (entries.length > MAX_DIFF_LINES) {
    const half = MAX_DIFF_LINES / 2;
    const middle = entries.slice(half, entries.length - half);
    left = middle.reduce((n, e) => n + Math.max(1, e.run), 0);
    kept = [...entries.slice(0, half), { at: -1, run: 0 }, ...entries.slice(entries.length - half)];
  }
  let clipped = false;
  const out = kept.map(({ at, run }) => {
    if (at < 0) return `${indent}\u2026 (${left} more ${plural(left, "line")} of the diff left out) \u2026\n`;
    if (run > 0) return `${indent}  \u2026 (${run} unchanged ${plural(run, "line")})\n`;
    const shown = clipMiddle(lines[at], MAX_DIFF_LINE);
    clipped ||= shown !== lines[at];
    return `${indent}${safeText(shown)}\n`;
  });
  if (clipped || left > 0) {
    const pins = pinsOption === undefined ? "" : ` --pins ${shownText(pinsOption)}`;
    const what = [left > 0 ? "lines left out" : "", clipped ? "long lines clipped" : ""].filter((w) => w);
    out.push(`${indent}(${what.join(", ")}: \`toolguard mcp pins list --json${pins}\` shows them whole)\n`);
  }
  return out.join("");
}

/**
 * The pin file as text: per server, the pinned tools and the waiting changes with their diffs. Names chosen by
 * servers (and dates read from the file) are shown by {@linkcode shownText}: a tool named `x\n  CHANGED y`
 * would forge an entry.
 */
function listing(pins: ReturnType<typeof readPinFile>, pinsOption: string | undefined): string {
  let out = "";
  for (const [server, entry] of Object.entries(pins.servers)) {
    out += `${shownText(server)}\n`;
    for (const [name, pin] of Object.entries(entry.tools)) {
      out += `  ${shownText(name)}  sha256:${shownText(pin.hash.slice(0, 16))}  pinned ${
        shownText(pin.at)
      }\n`;
    }
    for (const [name, pin] of Object.entries(entry.pending ?? {})) {
      out += `  CHANGED ${shownText(name)}  sha256:${shownText(pin.hash.slice(0, 16))}  seen ${
        shownText(pin.at)
      }\n`;
      const old = pinOf(entry.tools, name);
      if (old) out += shownDiff(diffDefinitions(old.definition, pin.definition), "      ", pinsOption);
    }
  }
  return out === "" ? "no pins\n" : out;
}
