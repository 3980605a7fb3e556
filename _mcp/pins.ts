/**
 * Pinning tool definitions (against "rug pulls"): the first time the guard sees a server's tool it records
 * a hash of the tool's name, description, input schema, title, annotations and output schema (what a client
 * or its model reads of it: an annotation turned `readOnlyHint` can spare a call the user's confirmation); a
 * later `tools/list` that changes a pinned tool is reported with a diff, and the tool's calls are refused
 * until the user accepts the new definition.
 *
 * The pins live in a JSON file (one per user by default, see {@linkcode defaultPinsPath}) keyed by server
 * (its command line or URL), or only in memory.
 *
 * @module
 */
import type * as NodeCrypto from "node:crypto";
import type * as NodeFs from "node:fs";
import type * as NodeOs from "node:os";
import type * as NodePath from "node:path";
import type NodeProcess from "node:process";
import {
  errorText,
  firstHole,
  givenValue,
  isRecord,
  nodeBuiltin,
  urlWithoutSecrets,
} from "../_common/values.ts";
import { asSent } from "../_common/json.ts";
import { MOST_WRITTEN_OUT } from "../_common/measure.ts";

// The Node built-ins, loaded on use: importing them would load them with every import of the library.
const crypto = () => nodeBuiltin<typeof NodeCrypto>("node:crypto");
const fs = () => nodeBuiltin<typeof NodeFs>("node:fs");
const os = () => nodeBuiltin<typeof NodeOs>("node:os");
const paths = () => nodeBuiltin<typeof NodePath>("node:path");
const process = () => nodeBuiltin<typeof NodeProcess>("node:process");

/** What is pinned of a tool: the parts a model reads and the schema its calls are judged by. */
export interface ToolDefinition {
  /** The tool's name. */
  name: string;
  /** Its description, when it has one. */
  description?: string;
  /** Its input schema, as declared. */
  inputSchema?: unknown;
  /** Its title, when it has one. */
  title?: string;
  /** Its annotations (`readOnlyHint`, `destructiveHint`, ...), when it has them. */
  annotations?: unknown;
  /** Its output schema, when it has one. */
  outputSchema?: unknown;
}

/** One pinned (or pending) definition. */
export interface PinnedTool {
  /** SHA-256 (hex) of the canonical JSON of the definition. */
  hash: string;
  /**
   * 2 when the hash covers title, annotations and output schema too; absent in pins made before, whose hash
   * covers name, description and input schema only (see {@linkcode PIN_SCHEME}).
   */
  scheme?: 2;
  /** The definition itself, so a change can be shown as a diff. */
  definition: ToolDefinition;
  /** When it was recorded (ISO 8601). */
  at: string;
}

/** One server's pins: what was accepted, and changed definitions waiting for the user's decision. */
export interface ServerPins {
  /** Accepted definitions, by tool name. */
  tools: Record<string, PinnedTool>;
  /** Changed definitions seen and refused, by tool name: `toolguard mcp pins accept` adopts them. */
  pending?: Record<string, PinnedTool>;
}

/** The pin file. */
export interface PinFile {
  /** Format version, 1. */
  version: 1;
  /** Pins by server key (command line or URL). */
  servers: Record<string, ServerPins>;
}

/** Options for pinning (`McpGuardOptions.pins`). */
export interface McpPinOptions {
  /** The server's key in the pin file: its command line or URL. */
  server: string;
  /** The pin file; absent or null keeps pins in memory for this guard only. */
  file?: string | null;
  /** Changed tools to accept (re-pin) when seen: `"all"` or a list of names. Default none. */
  accept?: "all" | readonly string[];
}

/** A pinned tool whose definition changed. */
export interface PinChange {
  /** The tool. */
  name: string;
  /** Hash of the pinned definition. */
  pinned: string;
  /** Hash of the definition the server declares now. */
  seen: string;
  /** A line diff of the two definitions (pretty JSON), `-` pinned, `+` now. */
  diff: string;
  /** True when the change was accepted (by `accept`) and re-pinned. */
  accepted: boolean;
}

/** What one review of a tool list found. */
export interface PinReview {
  /** Tools pinned for the first time. */
  added: string[];
  /** Pinned tools whose definition changed. */
  changed: PinChange[];
  /** Set when the pin file could not be read or written (pins then stay in memory). */
  error?: string;
}

/**
 * The default pin file: `$XDG_STATE_HOME/toolguard/pins.json`, else `~/.local/state/toolguard/pins.json`; on
 * Windows `%LOCALAPPDATA%\toolguard\pins.json`.
 */
export function defaultPinsPath(env: Record<string, string | undefined> = process().env): string {
  if (process().platform === "win32") {
    const base = env.LOCALAPPDATA ?? paths().join(os().homedir(), "AppData", "Local");
    return paths().join(base, "toolguard", "pins.json");
  }
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME !== ""
    ? env.XDG_STATE_HOME
    : paths().join(env.HOME ?? os().homedir(), ".local", "state");
  return paths().join(base, "toolguard", "pins.json");
}

/**
 * JSON with object keys sorted, so equal definitions hash equally whatever their key order; each value read
 * as JSON sends it ({@linkcode asSent}: a boxed value as what it holds, a Date as its text, a hole as `null`),
 * so a definition built in code hashes as its wire form, and one read from JSON as pins always hashed it.
 * Throws what reading throws (a getter, a `toJSON`; `JSON.stringify` at a BigInt), and {@link Unpinnable} at
 * an array longer than {@link MOST_WRITTEN_OUT} with a hole (built in code: 2^32-1 slots, a few held), which
 * no server sends and no pin file holds: written out, V8 read each slot (minutes), then threw.
 */
export function canonicalJson(value: unknown): string {
  return written(asSent(value, ""));
}

/** {@linkcode canonicalJson} of `value` as read ({@linkcode asSent}): its members are read here, once each. */
function written(value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length > MOST_WRITTEN_OUT && firstHole(value) >= 0) {
      throw new Unpinnable(
        `its definition holds an array of ${value.length} slots with holes, which cannot be written out as ` +
          "JSON to pin it (no server could send it either); pass the tools as a server sends them",
      );
    }
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) items.push(written(asSent(value[i], String(i))));
    return `[${items.join(",")}]`;
  }
  if (isRecord(value)) {
    const members: string[] = [];
    for (const k of Object.keys(value).sort()) {
      const v = asSent(value[k], k); // (read once: a getter may answer anew)
      if (v !== undefined) members.push(`${JSON.stringify(k)}:${written(v)}`);
    }
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What {@link canonicalJson} throws at an array JSON cannot write; the pin review names the tool. */
class Unpinnable extends Error {}

/**
 * The pinned parts of a `tools/list` entry, the tool and its name, description and title read as JSON sends
 * them ({@linkcode asSent}: a tool's `toJSON`, a boxed string); null when it has no string name. The schemas
 * and annotations are kept as given, for {@linkcode canonicalJson} and the pin file to read as sent. `key` is
 * the one a `toJSON` of the tool is called with: its index in the list, as JSON reads a list. Throws what
 * reading throws (a getter or `toJSON`).
 */
export function definitionOf(tool: unknown, key = ""): ToolDefinition | null {
  tool = asSent(tool, key);
  if (!isRecord(tool)) return null;
  const name = asSent(tool.name, "name");
  if (typeof name !== "string") return null;
  const out: ToolDefinition = { name };
  const description = asSent(tool.description, "description");
  if (typeof description === "string") out.description = description;
  const title = asSent(tool.title, "title");
  if (typeof title === "string") out.title = title;
  // (the rest as given: the hash and the pin file read them as sent, each object once)
  if (tool.inputSchema !== undefined) out.inputSchema = tool.inputSchema;
  if (tool.annotations !== undefined) out.annotations = tool.annotations;
  if (tool.outputSchema !== undefined) out.outputSchema = tool.outputSchema;
  return out;
}

/** What pins now record: {@linkcode PinnedTool.scheme}. */
export const PIN_SCHEME = 2;

/**
 * The hash a pin made before {@linkcode PIN_SCHEME} would have for `definition`: of its name, description and
 * input schema only. A tool whose older pin matches it has not changed in what that pin saw, and is re-pinned
 * whole (so an upgrade refuses no tool); what changes after that is caught.
 */
function olderHash(definition: ToolDefinition): string {
  const { name, description, inputSchema } = definition;
  const older: ToolDefinition = { name };
  if (description !== undefined) older.description = description;
  if (inputSchema !== undefined) older.inputSchema = inputSchema;
  return hashDefinition(older);
}

/** SHA-256 of a definition's canonical JSON, as hex. */
export function hashDefinition(definition: ToolDefinition): string {
  return crypto().createHash("sha256").update(canonicalJson(definition)).digest("hex");
}

/** Pretty JSON, with long descriptions broken at sentence ends so a diff shows what changed. */
function linesOf(definition: ToolDefinition): string[] {
  const { description, ...rest } = definition;
  const lines: string[] = [];
  if (description !== undefined) {
    lines.push("description:");
    for (const part of description.split(/(?<=[.!?:;\n])\s+/)) lines.push(`  ${part}`);
  }
  lines.push(...JSON.stringify(rest, null, 2).split("\n"));
  return lines;
}

/**
 * A line diff: the lines both definitions start and end with, unchanged, and between them the longest common
 * subsequence (above a size bound, all old lines out and all new lines in). Without the common start and end
 * taken first, one sentence changed in a description of a thousand was above the bound: every line out and in.
 */
export function diffDefinitions(before: ToolDefinition, after: ToolDefinition): string {
  const all = linesOf(before);
  const allAfter = linesOf(after);
  let head = 0;
  while (head < all.length && head < allAfter.length && all[head] === allAfter[head]) head++;
  let tail = 0;
  while (
    tail < all.length - head && tail < allAfter.length - head &&
    all[all.length - 1 - tail] === allAfter[allAfter.length - 1 - tail]
  ) tail++;
  const same = (lines: string[]) => lines.map((l) => `  ${l}`);
  const a = all.slice(head, all.length - tail);
  const b = allAfter.slice(head, allAfter.length - tail);
  return [...same(all.slice(0, head)), ...middleDiff(a, b), ...same(all.slice(all.length - tail))].join("\n");
}

/** {@linkcode diffDefinitions} of the lines between the common start and end. */
function middleDiff(a: string[], b: string[]): string[] {
  if (a.length * b.length > 250_000) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i][j + 1] > lcs[i + 1][j])) out.push(`+ ${b[j++]}`);
    else out.push(`- ${a[i++]}`);
  }
  return out;
}

/**
 * Read a pin file; a missing file is an empty one. Throws, naming the file and what is wrong, on one that is
 * not a pin file: not JSON, or a server entry or pin of the wrong shape (which would otherwise be written
 * back, or break the pin commands).
 */
export function readPinFile(path: string): PinFile {
  if (!fs().existsSync(path)) return { version: 1, servers: {} };
  let data: unknown;
  try {
    data = JSON.parse(fs().readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`${path} is not valid JSON (${errorText(error)}); fix it, or delete it to pin afresh`);
  }
  if (!isRecord(data) || data.version !== 1 || !isRecord(data.servers)) {
    throw new Error(`${path} is not a toolguard pin file (expected {"version":1,"servers":{...}})`);
  }
  for (const [server, entry] of Object.entries(data.servers)) {
    const bad = pinEntryProblem(entry);
    if (bad !== null) {
      throw new Error(
        `${path}: the entry of server ${givenValue(server)} ${bad}; fix it, or delete the file`,
      );
    }
  }
  return data as unknown as PinFile;
}

/** What is wrong with one server's entry in a pin file, or null when it has the shape the guard writes. */
function pinEntryProblem(entry: unknown): string | null {
  if (!isRecord(entry) || !isRecord(entry.tools)) return 'has no "tools" object';
  if (entry.pending !== undefined && !isRecord(entry.pending)) return 'has a "pending" that is not an object';
  for (const [name, pin] of [...Object.entries(entry.tools), ...Object.entries(entry.pending ?? {})]) {
    if (
      !isRecord(pin) || typeof pin.hash !== "string" || typeof pin.at !== "string" || !("definition" in pin)
    ) {
      return `pins tool ${givenValue(name)} without a hash, a time and a definition`;
    }
  }
  return null;
}

/** Write a pin file atomically (a temporary file renamed over it), creating its folder. */
export function writePinFile(path: string, pins: PinFile): void {
  fs().mkdirSync(paths().dirname(path), { recursive: true });
  const tmp = `${path}.${process().pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  fs().writeFileSync(tmp, JSON.stringify(pins, null, 2) + "\n");
  fs().renameSync(tmp, path);
}

/**
 * The pin of tool `name` in a map of pins, own members only: a server's tool named `constructor` or
 * `toString` is not the map's inherited method (which made the review throw, and the listing pass uncleaned).
 */
export function pinOf(map: Record<string, PinnedTool> | undefined, name: string): PinnedTool | undefined {
  return map !== undefined && Object.hasOwn(map, name) ? map[name] : undefined;
}

/** Pin `name` in a map of pins as an own member (an assignment to `__proto__` would set the prototype). */
function setPin(map: Record<string, PinnedTool>, name: string, pin: PinnedTool): void {
  Object.defineProperty(map, name, { value: pin, enumerable: true, writable: true, configurable: true });
}

/**
 * Accept pending definitions: for each server (or only `server`), the named tools' (or, with `"all"`, every)
 * pending definition becomes the pinned one. Returns what was accepted, as `server: tool` pairs.
 */
export function acceptPending(
  pins: PinFile,
  which: { tools: "all" | readonly string[]; server?: string },
): { server: string; tool: string }[] {
  const accepted: { server: string; tool: string }[] = [];
  const wanted = which.server === undefined ? undefined : [which.server, pinKey(which.server)];
  for (const [key, entry] of Object.entries(pins.servers)) {
    if (wanted !== undefined && !wanted.includes(key)) continue;
    for (const [name, pin] of Object.entries(entry.pending ?? {})) {
      if (which.tools !== "all" && !which.tools.includes(name)) continue;
      setPin(entry.tools, name, pin);
      delete entry.pending![name];
      accepted.push({ server: key, tool: name });
    }
    if (entry.pending && Object.keys(entry.pending).length === 0) delete entry.pending;
  }
  return accepted;
}

/**
 * The key a server's pins are filed under: its command line or URL as given, except a URL that carries a user
 * name, a password, a query or a fragment (any of which may hold a token): that is written without them, told
 * apart from others by the start of a SHA-256 of the whole, so the pin file and `toolguard mcp pins list`
 * never show it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinKey } from "./pins.ts";
 *
 * const command = "npx -y @modelcontextprotocol/server-everything";
 * assert.equal(pinKey(command), command);
 * assert.equal(pinKey("https://mcp.example/mcp"), "https://mcp.example/mcp");
 * const key = pinKey("https://mcp.example/mcp?key=s3cret");
 * assert.match(key, /^https:\/\/mcp\.example\/mcp \(sha256:[0-9a-f]{12}\)$/);
 * assert.notEqual(key, pinKey("https://mcp.example/mcp?key=other"));
 * ```
 */
export function pinKey(server: string): string {
  const hidden = urlWithoutSecrets(server);
  if (hidden === undefined) return server;
  const digest = crypto().createHash("sha256").update(server).digest("hex").slice(0, 12);
  return `${hidden.bare} (sha256:${digest})`;
}

/** One server's pins, as a guard uses them: reviews each tool list and knows which tools are refused. */
export class PinStore {
  readonly #options: McpPinOptions;
  /** The server's key in the file ({@linkcode pinKey}). */
  readonly #key: string;
  /** The pins in memory (the file's state as last read, plus this guard's changes). */
  #pins: ServerPins = { tools: {} };
  /** Tools refused because their definition changed, with the change. */
  readonly #refused = new Map<string, PinChange>();

  constructor(options: McpPinOptions) {
    this.#options = options;
    this.#key = pinKey(options.server);
  }

  /** The change that makes `name` refused, if it is. */
  refused(name: string): PinChange | undefined {
    return this.#refused.get(name);
  }

  /**
   * Compare a complete tool list with the pins: new tools are pinned, changed ones are refused (and kept as
   * pending in the file) unless accepted. The file is re-read first, so an acceptance made meanwhile counts.
   */
  review(tools: readonly unknown[]): PinReview {
    const review: PinReview = { added: [], changed: [] };
    let file: PinFile | null = null;
    let moved = false;
    const path = this.#options.file ?? null;
    if (path !== null) {
      try {
        file = readPinFile(path);
        // The file wins (an acceptance made meanwhile), but what this guard pinned stays pinned even when
        // the file lost it (a failed write, a file replaced under us).
        // (pins filed under a URL with its token, before pinKey, are moved to the key without it)
        const stored = file.servers[this.#key] ?? file.servers[this.#options.server] ?? { tools: {} };
        if (this.#key !== this.#options.server && Object.hasOwn(file.servers, this.#options.server)) {
          delete file.servers[this.#options.server];
          moved = true;
        }
        this.#pins = { ...stored, tools: { ...this.#pins.tools, ...stored.tools } };
      } catch (error) {
        review.error = `cannot read the pin file: ${errorText(error)}`;
      }
    }
    let dirty = moved;
    this.#refused.clear();
    for (const [i, tool] of tools.entries()) {
      let read: { definition: ToolDefinition; hash: string } | null;
      try {
        const definition = definitionOf(tool, String(i));
        read = definition === null ? null : { definition, hash: hashDefinition(definition) };
      } catch (error) {
        const name = toolName(tool);
        throw new Error(
          `${name === undefined ? `tools[${i}]` : `tool ${givenValue(name)}`}: ${unpinnableText(error)}`,
        );
      }
      if (read !== null) dirty = this.#reviewOne(read.definition, read.hash, review) || dirty;
    }
    if (file !== null && path !== null && dirty) {
      file.servers[this.#key] = this.#pins;
      try {
        writePinFile(path, file);
      } catch (error) {
        review.error = `cannot write the pin file: ${errorText(error)}`;
      }
    }
    return review;
  }

  /** Review one definition (as sent) of hash `hash`; returns true when the pins changed. */
  #reviewOne(definition: ToolDefinition, hash: string, review: PinReview): boolean {
    const name = definition.name;
    const pin: PinnedTool = { hash, scheme: PIN_SCHEME, definition, at: new Date().toISOString() };
    const old = pinOf(this.#pins.tools, name);
    if (old === undefined) {
      setPin(this.#pins.tools, name, pin);
      review.added.push(name);
      return true;
    }
    if (old.hash === hash) {
      if (old.scheme !== undefined) return false;
      // A pin made before, of a tool with no title, annotations or output schema, hashes alike: marked now,
      // or the first annotations added later (readOnlyHint, say) would pass as the completion below.
      setPin(this.#pins.tools, name, { ...old, scheme: PIN_SCHEME });
      return true;
    }
    if (old.scheme === undefined && old.hash === olderHash(definition)) {
      // (pinned before: the same tool, now pinned whole)
      setPin(this.#pins.tools, name, { ...pin, at: old.at });
      return true;
    }
    const accept = this.#options.accept;
    const accepted = accept === "all" || (accept !== undefined && accept.includes(name));
    const change: PinChange = {
      name,
      pinned: old.hash,
      seen: hash,
      diff: diffDefinitions(old.definition, definition),
      accepted,
    };
    review.changed.push(change);
    if (accepted) {
      setPin(this.#pins.tools, name, pin);
      if (this.#pins.pending) delete this.#pins.pending[name];
      return true;
    }
    this.#refused.set(name, change);
    if (pinOf(this.#pins.pending, name)?.hash === hash) return false;
    this.#pins.pending = { ...this.#pins.pending, [name]: pin };
    return true;
  }
}

/** A tool's name, when it has a string one that reads without throwing (a getter may throw). */
export function toolName(tool: unknown): string | undefined {
  try {
    return isRecord(tool) && typeof tool.name === "string" ? tool.name : undefined;
  } catch {
    return undefined;
  }
}

/** Why a definition could not be pinned, for the error `review` throws (which names the tool). */
function unpinnableText(error: unknown): string {
  if (error instanceof Unpinnable) return error.message;
  // (the hash and the diff read the definition recursively, as JSON.stringify does)
  if (error instanceof RangeError) {
    return "its definition nests too deeply to pin (the runtime's call stack ran out, a thousand levels or " +
      "more down); flatten its schema";
  }
  // a getter or toJSON that throws, a BigInt: no server could send it either
  return `its definition could not be read as JSON to pin it (${
    errorText(error)
  }); pass the tools as plain ` +
    "JSON, as a server sends them";
}
