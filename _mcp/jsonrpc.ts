/**
 * JSON-RPC messages as MCP sends them, one per line (UTF-8, no embedded newlines): their shape, and the id
 * that a line's ends show, which the guard's sessions read too. What only the relays use is in `framing.ts`,
 * which they load on first call (start-up, issue 18): the framer that splits a byte stream into lines, the
 * ids of a line too long to keep and the answers for it, and writing messages out as lines.
 *
 * @module
 */
import { clip, errorText, isRecord, lazy } from "../_common/values.ts";

/**
 * A JSON-RPC id: string or number (null only in error answers to unparseable requests); an integer past 2^53
 * read from a line is a {@linkcode BigId}, its digits as they came.
 */
export type JsonRpcId = string | number | BigId | null;

/**
 * An integer id past 2^53 (`Number.MAX_SAFE_INTEGER`), as its sender wrote it: `JSON.rawJSON` of its
 * digits, which `JSON.stringify` writes out as they came (one written with a fraction or an exponent stays
 * the double every parser reads). A double would round it (12345678901234567891 is read as
 * 12345678901234567000), so two such ids would be one, and an answer the guard writes itself would
 * carry an id a client with 64-bit ids (Python's, Go's) does not know.
 */
export interface BigId {
  /** The id's digits, as they came. */
  readonly rawJSON: string;
}

/**
 * `JSON.rawJSON` and `JSON.isRawJSON`, which TypeScript's libraries do not declare. Deno, Bun and Node 21+
 * have them; Node 20 has neither (nor the reviver's `source`), so there an id past 2^53 stays the number
 * `JSON.parse` rounds it to, as before ids were kept by their digits.
 */
const raw = JSON as unknown as { rawJSON?(text: string): BigId; isRawJSON?(value: unknown): boolean };

/**
 * True for a {@linkcode BigId}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isBigId, parseMessage } from "./jsonrpc.ts";
 *
 * assert.equal(isBigId((parseMessage('{"id":12345678901234567891}') as { id: unknown }).id), true);
 * assert.equal(isBigId(7), false);
 * ```
 */
export function isBigId(value: unknown): value is BigId {
  return typeof value === "object" && value !== null && raw.isRawJSON?.(value) === true;
}

/**
 * A message's `id` member, to spread into its event: `{ id }`, or `{}` when it has none a message could
 * carry (an array's, say). (Not {@linkcode parseId}, which reads an id from its JSON text, nor `idText` in
 * `_common/values.ts`, which writes one as text.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { idMember } from "./jsonrpc.ts";
 *
 * assert.deepEqual(idMember({ id: 7 }), { id: 7 });
 * assert.deepEqual(idMember({ id: [7] }), {});
 * ```
 */
export function idMember(message: unknown): { id?: JsonRpcId } {
  const id = isRecord(message) ? message.id : undefined;
  return isId(id) || id === null ? { id } : {};
}

/** True for an id a request can have and an answer name: a string, a number, or a {@linkcode BigId}. */
export function isId(value: unknown): value is string | number | BigId {
  return typeof value === "string" || typeof value === "number" || isBigId(value);
}

/** True for a number that a double cannot hold exactly as sent: an integer past 2^53. */
function roundsOff(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value);
}

/**
 * True for an id past 2^53 (a {@linkcode BigId}, or an integer a double rounds): only such an id can answer,
 * rounded, another than its own (see {@linkcode roundsAlike}), so a stray answer with any other is not
 * searched for one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseId, pastSafeInteger } from "./jsonrpc.ts";
 *
 * assert.equal(pastSafeInteger(parseId("12345678901234567891")), true);
 * assert.equal(pastSafeInteger(1.5e19), true);
 * assert.equal(pastSafeInteger(9007199254740991), false);
 * assert.equal(pastSafeInteger("12345678901234567891"), false);
 * ```
 */
export function pastSafeInteger(id: unknown): boolean {
  return isBigId(id) || roundsOff(id);
}

/**
 * The double an id past 2^53 reads as, the one a server whose reader is `JSON.parse` answers under
 * (12345678901234567891 as 12345678901234567000, or as `1.2345678901234567e19`); undefined for any other id.
 */
function roundedValue(id: unknown): number | undefined {
  if (isBigId(id)) return Number(id.rawJSON);
  return roundsOff(id) ? id as number : undefined;
}

/**
 * True when `answerId` and `requestId` are ids past 2^53 that read as one double: a server whose reader is
 * `JSON.parse` (a JavaScript one) answers the request under the id it rounded it to.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseId, roundsAlike } from "./jsonrpc.ts";
 *
 * const sent = parseId("12345678901234567891");
 * assert.equal(roundsAlike(parseId("12345678901234567000"), sent), true);
 * assert.equal(roundsAlike(parseId("1.2345678901234567e19"), sent), true);
 * assert.equal(roundsAlike(7, 7), false); // (not past 2^53: compared by idKey alone)
 * ```
 */
export function roundsAlike(answerId: unknown, requestId: unknown): boolean {
  const value = roundedValue(answerId);
  return value !== undefined && value === roundedValue(requestId);
}

/** The request an answer under a rounded id answers ({@linkcode roundedMatch}): waiting, or cancelled. */
export interface RoundedAnswer {
  /** Whether the request still waits for its answer, or was cancelled (the answer is its late one). */
  of: "waiting" | "cancelled";
  /** The request's id, as it was written. */
  id: JsonRpcId;
}

/**
 * The request (of `requests.waiting`, or of `requests.cancelled`) that an answer under `answerId` answers by
 * rounding (see {@linkcode roundsAlike}): a peer whose reader is `JSON.parse` answers under the double it read
 * the request's id past 2^53 as. The rule for both directions, the server's answers to the client's requests
 * and the client's to the server's. When several round alike, none is taken, a cancelled one among them too
 * (the answer may be its late one): they cannot be told apart (the peer took them for one), and taking either
 * could hand one's answer to the other's asker; `requests.refuse`, if given, is called on each waiting one (to
 * answer it with an error: it waits no more) and the answer is a stray. Undefined then, and when none rounds
 * alike or `answerId` is no id past 2^53 (no search).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseId, roundedMatch } from "./jsonrpc.ts";
 *
 * const id = (text: string) => parseId(text)!;
 * const waiting = ["12345678901234567891", "12345678901234571891", "7"].map(id);
 * const cancelled = [id("12345678901234575891")];
 * const refused: unknown[] = [];
 * const requests = { waiting, cancelled, refuse: (id: unknown) => void refused.push(id) };
 * assert.deepEqual(roundedMatch(parseId("12345678901234567000"), requests), { of: "waiting", id: waiting[0] });
 * assert.deepEqual(roundedMatch(1.2345678901234575e19, requests), { of: "cancelled", id: cancelled[0] });
 * assert.equal(roundedMatch(7, requests), undefined); // (matched by idKey alone)
 * // A cancelled request alike counts: the answer may be its late one.
 * const late = { waiting: [id("12345678901234567891")], cancelled: [id("12345678901234567890")] };
 * assert.equal(roundedMatch(1.2345678901234567e19, { ...late, refuse: requests.refuse }), undefined);
 * assert.deepEqual(refused, late.waiting);
 * ```
 */
export function roundedMatch(
  answerId: unknown,
  requests: {
    waiting: Iterable<JsonRpcId>;
    cancelled: Iterable<JsonRpcId>;
    refuse?: (id: JsonRpcId) => void;
  },
): RoundedAnswer | undefined {
  // (only an id past 2^53 is read so: any other stray answer costs no search)
  if (!pastSafeInteger(answerId)) return undefined;
  const alike: RoundedAnswer[] = [];
  for (const id of requests.waiting) if (roundsAlike(answerId, id)) alike.push({ of: "waiting", id });
  for (const id of requests.cancelled) if (roundsAlike(answerId, id)) alike.push({ of: "cancelled", id });
  if (alike.length === 1) return alike[0];
  // (refused once the search is done: refusing may take a request out of `waiting`)
  for (const { of, id } of alike) if (of === "waiting") requests.refuse?.(id);
  return undefined;
}

/**
 * True when `text`, a number's JSON, is written as an integer (no fraction, no exponent): only such text is
 * kept as a {@linkcode BigId}. Every parser reads `1.5e19` or `...891.0` as a double, so a peer echoes it in
 * some other form (`15000000000000000000`, `1.5e+19`): keyed by its text, its answer was a stray.
 */
function writtenAsInteger(text: string): boolean {
  return /^-?\d+$/.test(text);
}

/** True when the message `m` carries an id (or a cancel's `requestId`) past 2^53. */
function hasBigId(m: unknown): boolean {
  return isRecord(m) && (roundsOff(m.id) || (isRecord(m.params) && roundsOff(m.params.requestId)));
}

/**
 * A message's (or a batch's) JSON text parsed as `JSON.parse` does, but for an id past 2^53, of the message
 * or of a cancel's `params.requestId`: it is kept as its digits (a {@linkcode BigId}), so that the guard keys
 * it, and writes it out, as it came. Throws as `JSON.parse` does. Costs a second parse only for text that has
 * such an id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMessage } from "./jsonrpc.ts";
 *
 * const m = parseMessage('{"jsonrpc":"2.0","id":12345678901234567891,"method":"ping"}');
 * assert.equal(JSON.stringify(m), '{"jsonrpc":"2.0","id":12345678901234567891,"method":"ping"}');
 * ```
 */
export function parseMessage(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (Array.isArray(value) ? !value.some(hasBigId) : !hasBigId(value)) return value;
  const { rawJSON } = raw;
  if (rawJSON === undefined) return value;
  // The digits of each such id, by the object that holds it (a reviver sees every value, nested ones too:
  // only the message's own are taken).
  const ids = new WeakMap<object, string>();
  const requestIds = new WeakMap<object, string>();
  let read: unknown;
  try {
    read = JSON.parse(text, function (this: object, key: string, v: unknown, context?: { source?: string }) {
      const source = context?.source;
      if (
        source !== undefined && roundsOff(v) && (key === "id" || key === "requestId") &&
        writtenAsInteger(source)
      ) {
        (key === "id" ? ids : requestIds).set(this, source);
      }
      return v;
    });
  } catch {
    return value; // (nested too deeply for a reviver: read as JSON.parse reads it)
  }
  for (const m of Array.isArray(read) ? read : [read]) {
    if (!isRecord(m)) continue;
    const id = ids.get(m);
    if (id !== undefined) m.id = rawJSON(id);
    const requestId = isRecord(m.params) ? requestIds.get(m.params) : undefined;
    if (requestId !== undefined) (m.params as Record<string, unknown>).requestId = rawJSON(requestId);
  }
  return read;
}

/** Any JSON-RPC 2.0 message, loosely typed: requests, notifications, results and errors. */
export interface JsonRpcMessage {
  /** Always `"2.0"` in a well-formed message. */
  jsonrpc?: unknown;
  /** Present on requests and responses, absent on notifications. */
  id?: JsonRpcId;
  /** Present on requests and notifications. */
  method?: unknown;
  /** Request or notification parameters. */
  params?: unknown;
  /** A successful response's result. */
  result?: unknown;
  /** An error response's error. */
  error?: unknown;
}

/** How many bytes of each end of a skipped line `FramerOptions.onOverflow` (framing.ts) is given. */
export const EDGE_BYTES = 4096;

/** The first and last bytes of a line too long to keep. */
export interface LineEdges {
  /** Up to {@linkcode EDGE_BYTES} bytes from the start of the line. */
  head: Uint8Array;
  /** Up to {@linkcode EDGE_BYTES} bytes from the end of the line (without its newline). */
  tail: Uint8Array;
  /**
   * When the line is a batch (a JSON array): its members that showed an id as their bytes went by, in order
   * (at most {@linkcode MAX_BATCH_MEMBERS}), so each request can be answered.
   */
  batch?: BatchMember[];
}

/** The first and last {@linkcode EDGE_BYTES} of a line kept whole (views on it), as a skipped line's are. */
export function lineEdges(bytes: Uint8Array): LineEdges {
  return {
    head: bytes.subarray(0, EDGE_BYTES),
    tail: bytes.subarray(Math.max(0, bytes.length - EDGE_BYTES)),
  };
}

/** A member of a batch too long to keep, as its bytes showed it: its id, and whether it is a request. */
export interface BatchMember {
  /** The member's JSON-RPC id. */
  id: string | number | BigId;
  /** True when it has a method too (a request), false for an answer. */
  request: boolean;
}

/** How many members of a batch too long to keep are noted at most; the rest cannot be answered. */
export const MAX_BATCH_MEMBERS = 10_000;

/**
 * Messages the runtime's `JSON.stringify` already failed to write out (nested too deeply: see `repeatedKey`
 * in session.ts), which `encodeJson` (framing.ts) leaves out without trying again: Bun's gives up tens of
 * thousands of levels down, after 0.3-0.7 s of CPU, as it slows with the depth it reaches.
 */
export const unwritable: WeakSet<object> = new WeakSet();

/** What is said of a message nested too deeply for the runtime's `JSON.stringify` (see `whyUnwritten`). */
export const TOO_DEEP = "nests too deeply to be written out";

/**
 * What is said of a message whose JSON text is longer than the runtime's longest string (V8's JSON.stringify
 * throws a RangeError "Invalid string length" past 2^29 - 24 characters, JavaScriptCore's "Out of memory"):
 * built in code, as a relay never reads one so long (see `whyUnwritten`).
 */
export const TOO_LARGE = "is too large to be written out";

/** The words of a RangeError a runtime throws for a string longer than it can hold (see `TOO_LARGE`). */
const TOO_LONG_STRING = /invalid string length|out of memory/i;

/**
 * Why `message` cannot be written out, for its sender, from what the runtime's `JSON.stringify` threw at it
 * (`error`; undefined: the session already found it nested too deeply, see {@linkcode unwritable}): too
 * large (a RangeError saying the string it made is too long: {@linkcode TOO_LARGE}), nested too deeply (any
 * other RangeError, the call stack), a BigInt (built in code) named by its key, or the error's own words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { whyUnwritten } from "./jsonrpc.ts";
 *
 * const answer = { jsonrpc: "2.0", id: 1, result: { n: 1n } };
 * const thrown = (() => { try { JSON.stringify(answer); } catch (e) { return e; } })();
 * assert.equal(whyUnwritten(answer, thrown), 'holds a BigInt (its member "n"), which JSON cannot write');
 * assert.equal(whyUnwritten(answer, new RangeError("Invalid string length")), "is too large to be written out");
 * ```
 */
export function whyUnwritten(message: unknown, error: unknown): string {
  if (error instanceof RangeError && TOO_LONG_STRING.test(error.message)) return TOO_LARGE;
  if (error === undefined || error instanceof RangeError) return TOO_DEEP;
  let key: string | undefined;
  try {
    // (each BigInt written as null, to find the first; a getter or toJSON may throw again: the error says it)
    JSON.stringify(message, (k, v) => {
      if (typeof v !== "bigint") return v;
      key ??= k;
      return null;
    });
  } catch {
    // the error's words, below
  }
  if (key !== undefined) {
    return `holds a BigInt (its member ${JSON.stringify(clip(key, 80))}), which JSON cannot write`;
  }
  return `cannot be written out as JSON (${clip(errorText(error), 200)})`;
}

/** Made on first use: under Deno the first decoder loads the text-encoding support. */
export const decoder: () => TextDecoder = lazy(() => new TextDecoder());

/** The value of a JSON string's text (quotes included), or undefined when it is not one. */
export function jsonString(text: string): string | undefined {
  if (!text.includes("\\")) return text.length >= 2 ? text.slice(1, -1) : undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps a leading BOM: the SDKs' stdio readers parse a line as it came, so a BOM before its JSON (or any
 * space that is not JSON's, such as U+00A0, which `trim` would drop) makes it no message to them either.
 */
export const lineDecoder: () => TextDecoder = lazy(() => new TextDecoder("utf-8", { ignoreBOM: true }));

/** Parse one line's text as JSON; undefined when blank or not JSON. Never throws. */
export function parseLineText(text: string): JsonRpcMessage | JsonRpcMessage[] | undefined {
  if (text.trim() === "") return undefined;
  try {
    // (JSON.parse skips JSON's own white space, CR included; an id past 2^53 is kept as its digits)
    const value = parseMessage(text);
    if (value !== null && typeof value === "object") return value as JsonRpcMessage | JsonRpcMessage[];
    return undefined;
  } catch {
    return undefined;
  }
}

/**
 * A line a relay read, as a frame whose message is parsed on first read: a relay that can tell from a line's
 * ends that nobody needs to look inside (an answer to a plain `tools/call`) forwards its bytes as they came,
 * parsed only to learn that the client will read the same answer. It keeps the text its bytes were decoded
 * to until the session takes it for its repeated-key and UTF-8 searches (see {@linkcode takeLineText}), so
 * that a line is decoded once. A class of the relays', not a field of the public `McpFrame`, so that a
 * frame's text is always the one its bytes decode to (one whose text said other than its bytes would be
 * judged by the one and passed on as the other); and a class, not a literal with a getter given a property
 * later or a `WeakMap` entry, each of which cost more than the decoding it saved.
 */
export class LineFrame {
  /** The line's bytes as they arrived, without the terminating `\n`. */
  readonly bytes: Uint8Array;
  #text: string | undefined;
  #message: JsonRpcMessage | JsonRpcMessage[] | undefined;
  #parsed: boolean;

  /** The line `bytes`; `read`: its text and message, when the relay has them already (HTTP's). */
  constructor(
    bytes: Uint8Array,
    read?: { text: string; message: JsonRpcMessage | JsonRpcMessage[] | undefined },
  ) {
    this.bytes = bytes;
    this.#text = read?.text;
    this.#message = read?.message;
    this.#parsed = read !== undefined;
  }

  /** The parsed message, or undefined when the line is not JSON (or is blank). */
  get message(): JsonRpcMessage | JsonRpcMessage[] | undefined {
    if (!this.#parsed) {
      this.#text = lineDecoder().decode(this.bytes);
      this.#message = parseLineText(this.#text);
      this.#parsed = true;
    }
    return this.#message;
  }

  /** The text the line was decoded to, once parsed; given once (a held frame does not keep it). */
  takeText(): string | undefined {
    const text = this.#text;
    this.#text = undefined;
    return text;
  }
}

/**
 * The text of a frame's line: the one its relay decoded (a {@linkcode LineFrame}'s), else its bytes decoded
 * now (a frame a transport of the user's built).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LineFrame, takeLineText } from "./jsonrpc.ts";
 *
 * const bytes = new TextEncoder().encode('{"id":1}');
 * assert.equal(takeLineText({ bytes }), '{"id":1}');
 * const frame = new LineFrame(bytes);
 * assert.deepEqual(frame.message, { id: 1 });
 * assert.equal(takeLineText(frame), '{"id":1}');
 * assert.equal(frame.takeText(), undefined); // (given once)
 * ```
 */
export function takeLineText(frame: { bytes: Uint8Array }): string {
  return (frame instanceof LineFrame ? frame.takeText() : undefined) ?? decoder().decode(frame.bytes);
}

/** A JSON string, with its quotes. */
const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/** A JSON value that is neither an object nor an array. */
const SCALAR = String.raw`${STRING}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null`;
/** A member of an object whose value is a scalar, and what follows it (`,` or `}`). */
const SCALAR_MEMBER = new RegExp(String.raw`\s*(${STRING})\s*:\s*(${SCALAR})\s*([,}])`, "y");
/** A member's key, up to its colon. */
const MEMBER_KEY = new RegExp(String.raw`\s*(${STRING})\s*:`, "y");
/** A scalar at the end of a text. */
const SCALAR_AT_END = new RegExp(String.raw`(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$`);

/**
 * What the top-level members of a message whose values are scalars show: its id, and whether it has a method.
 */
interface ShownMembers {
  /** The text of the `id` value read that JSON keeps of them (the last in the text). */
  id?: string;
  method: boolean;
}

/**
 * The members of the object that `text` starts with, read from its start while their values are scalars (a
 * member whose value is an object or an array, or is cut off, ends the reading): keys are read as JSON reads
 * them, so `"\u0069d"` is `id`. Of two ids JSON keeps the last: an `id` whose value ends the reading (one
 * no message could have, or cut off) leaves none.
 */
function leadingMembers(text: string): ShownMembers {
  const shown: ShownMembers = { method: false };
  const open = /^\s*\{/.exec(text);
  if (open === null) return shown;
  SCALAR_MEMBER.lastIndex = open[0].length;
  for (let m; (m = SCALAR_MEMBER.exec(text)) !== null;) {
    const key = jsonString(m[1]);
    if (key === "id") shown.id = m[2];
    else if (key === "method") shown.method = true;
    if (m[3] === "}") return shown;
    MEMBER_KEY.lastIndex = SCALAR_MEMBER.lastIndex;
  }
  const stop = MEMBER_KEY.exec(text);
  if (stop !== null && jsonString(stop[1]) === "id") shown.id = undefined;
  return shown;
}

/**
 * The members of the object that `text` ends with, read back from its end while their values are scalars;
 * as {@linkcode leadingMembers}, but the first id read is the one JSON keeps (the last in the text). In JSON
 * a quote is a string's own when an even number of backslashes comes before it, so a string is read back to
 * its opening quote without knowing where the text began; but where `text` begins inside a string, an
 * escaped quote whose backslashes were cut off looks like an opening one, so a key counts only when a `,` or
 * the `{` comes before it (`...\"id":5}` is not an id).
 */
function trailingMembers(text: string): ShownMembers {
  const shown: ShownMembers = { method: false };
  let at = skipBlanksBack(text, text.length);
  if (text[at - 1] !== "}") return shown;
  at = skipBlanksBack(text, at - 1);
  while (at > 0) {
    const value = valueBefore(text, at);
    if (value === undefined) break;
    at = skipBlanksBack(text, at - value.length);
    if (text[at - 1] !== ":") break;
    at = skipBlanksBack(text, at - 1);
    const keyText = text[at - 1] === '"' ? stringBefore(text, at) : undefined;
    if (keyText === undefined) break;
    at = skipBlanksBack(text, at - keyText.length);
    const before = text[at - 1];
    if (before !== "," && before !== "{") break; // (a key cut off, or not JSON)
    const key = jsonString(keyText);
    if (key === "id") shown.id ??= value;
    else if (key === "method") shown.method = true;
    if (before === "{") break; // (the object's first member)
    at = skipBlanksBack(text, at - 1);
  }
  return shown;
}

/** Where the blanks that end at `end` in `text` begin. */
function skipBlanksBack(text: string, end: number): number {
  let at = end;
  while (at > 0 && " \t\r\n".includes(text[at - 1])) at--;
  return at;
}

/** The text of the scalar that ends at `end` in `text`, or undefined. */
function valueBefore(text: string, end: number): string | undefined {
  if (text[end - 1] === '"') return stringBefore(text, end);
  return SCALAR_AT_END.exec(text.slice(Math.max(0, end - 64), end))?.[0];
}

/**
 * The text of the JSON string (quotes included) whose closing quote ends at `end` in `text`, or undefined.
 */
function stringBefore(text: string, end: number): string | undefined {
  // (`lastIndexOf` from below 0 looks at 0: each search starts at 0 or above)
  for (let from = end - 2; from >= 0;) {
    const at = text.lastIndexOf('"', from);
    if (at === -1) break;
    let slashes = 0;
    while (text[at - 1 - slashes] === "\\") slashes++;
    if (slashes % 2 === 0) return text.slice(at, end);
    from = at - 1;
  }
  return undefined;
}

/**
 * The id of a message too long (or too broken) to parse, read from its first and last bytes: the members
 * whose values are scalars at its end (the MCP SDK writes `{"result":...,"jsonrpc":"2.0","id":7}`) or, failing
 * that, at its start (serialisers put `jsonrpc` and `id` first); of a batch, its first message's or its
 * last's. Keys are read as JSON reads them (`"\u0069d"` is `id`; of two ids, the last). Undefined when
 * neither end shows one (a nested `"id"` is never taken for the message's). It is a request when the end
 * that showed the id (or, of a single message, either end) shows a `method`.
 */
export function idFromEdges(edges: LineEdges): ShownId | undefined {
  // A batch shows the id of its first message at its start, of its last at its end; a single message's end
  // shows the id JSON keeps (the last), its start one that a later id may replace.
  const headText = decoder().decode(edges.head);
  const batch = /^\s*\[/.exec(headText);
  const head = leadingMembers(batch === null ? headText : headText.slice(batch[0].length));
  const tail = trailingMembers(decoder().decode(edges.tail).replace(/\]\s*$/, ""));
  const [shown, other] = (batch === null ? tail.id === undefined : head.id !== undefined)
    ? [head, tail]
    : [tail, head];
  const id = parseId(shown.id);
  if (id === undefined) return undefined;
  const request = shown.method || (batch === null && other.method);
  const earlier = batch === null ? parseId(other.id) : undefined;
  const differs = earlier !== undefined && idKey(earlier) !== idKey(id);
  return { id, request, ...(differs ? { earlierId: earlier } : {}) };
}

/** The id a message shows: see {@linkcode idFromEdges}. */
export interface ShownId {
  /** The id, as JSON reads the message (of two, the last). */
  id: JsonRpcId;
  /** True when the message (the end that showed the id, of a batch) has a `method`: a request. */
  request: boolean;
  /**
   * Of a single message showing another id at its start than at its end (a hostile or broken one): that
   * earlier id. A relay answers the request waiting for `id`, or else for this one, so that neither a
   * request JSON says it answers nor one its sender may have meant is left waiting for it.
   */
  earlierId?: JsonRpcId;
}

/**
 * The id a JSON text (`12345678901234567891`, `"a"`) reads as, when it is one a message could have: a string
 * or a number, past 2^53 a {@linkcode BigId} (by its digits, where the runtime has `JSON.rawJSON`); else
 * undefined.
 */
export function parseId(text: string | undefined): string | number | BigId | undefined {
  if (text === undefined) return undefined;
  try {
    const id: unknown = JSON.parse(text);
    if (roundsOff(id) && raw.rawJSON !== undefined && writtenAsInteger(text.trim())) {
      return raw.rawJSON(text.trim());
    }
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Made once: writing a line out and reading an answer's first bytes share it. */
export const encoder: TextEncoder = new TextEncoder();

/** True when `value` is a JSON-RPC request (has a method and an id). */
export function isRequest(value: JsonRpcMessage): boolean {
  return typeof value.method === "string" && value.id !== undefined && value.id !== null;
}

/** True when `value` is a JSON-RPC response (has an id and a result or an error, and no method). */
export function isResponse(value: JsonRpcMessage): boolean {
  return value.method === undefined && value.id !== undefined &&
    (Object.hasOwn(value, "result") || Object.hasOwn(value, "error"));
}

/**
 * True when `message` is an answer, or a batch of answers only: what a client sends to answer the server's
 * requests, which waits behind none of the client's other messages (the server may need it first).
 */
export function answersOnly(message: unknown): boolean {
  const isAnswer = (m: unknown) => typeof m === "object" && m !== null && isResponse(m as JsonRpcMessage);
  return Array.isArray(message) ? message.length > 0 && message.every(isAnswer) : isAnswer(message);
}

/**
 * A key for a JSON-RPC id that keeps `1` and `"1"` apart, and an id past 2^53 by its digits as they came (a
 * {@linkcode BigId}: two such ids that round to one double are two keys). Never throws: an id that is no string or number (an
 * array or an object, from a peer that breaks JSON-RPC) is named by its JSON, so that `[1]` is not `"1"` nor
 * `{"a":1}` `{"b":2}` (as `String` named them, `"1"` and `[object Object]`: two requests waiting under them
 * were taken for one, and the answer to the second was lost); one nested too deeply for that (the call stack
 * runs out) gets one key for all of them, so that the message is still answered or refused, not left to end a
 * relay's reading.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { idKey, parseId } from "./jsonrpc.ts";
 *
 * assert.notEqual(idKey(1), idKey("1"));
 * assert.notEqual(idKey([1] as never), idKey("1"));
 * assert.notEqual(idKey({ a: 1 } as never), idKey({ b: 2 } as never));
 * // ids past 2^53 by their digits: these two are one double
 * assert.notEqual(idKey(parseId("9007199254740993")), idKey(parseId("9007199254740992")));
 * ```
 */
export function idKey(id: JsonRpcId | undefined): string {
  if (typeof id === "number") return `n:${id}`;
  if (typeof id === "string") return `s:${id}`;
  if (isBigId(id)) return `n:${id.rawJSON}`;
  try {
    return `j:${JSON.stringify(id)}`;
  } catch {
    return "x:too-deep";
  }
}

/** A JSON-RPC error answer. */
export function errorResponse(id: JsonRpcId, code: number, message: string): JsonRpcMessage {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

const RESULT_FIRST = encoder.encode('{"result":');
/** A JSON-RPC id as the last member of a message (`...,"id":7}`), as the MCP SDK writes its answers. */
const ID_AT_END = /[,{]\s*"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")\s*\}\s*$/;
/** `"jsonrpc":"2.0","id":...,"result":` at the start of a line. */
const ID_THEN_RESULT = /^\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"result":/;

/**
 * The id of a successful answer, read from the line's ends without parsing it: for the shapes the MCP SDKs
 * write (`{"result":...,"jsonrpc":"2.0","id":7}`, or `{"jsonrpc":"2.0","id":7,"result":...}`). Undefined for
 * any other line, which must then be parsed.
 */
export function quickAnswerId(bytes: Uint8Array): JsonRpcId | undefined {
  let m: RegExpExecArray | null = null;
  if (bytes.length > RESULT_FIRST.length && RESULT_FIRST.every((b, i) => bytes[i] === b)) {
    const tail = decoder().decode(bytes.subarray(Math.max(0, bytes.length - 96)));
    m = ID_AT_END.exec(tail);
  } else if (bytes[0] === 0x7b) {
    m = ID_THEN_RESULT.exec(decoder().decode(bytes.subarray(0, 96)));
  }
  return m === null ? undefined : parseId(m[1]);
}
