/**
 * The newline framer of MCP's stdio transport: splits a byte stream into lines, copes with partial reads,
 * many messages per read and very large messages without quadratic copying, and keeps the ends (and a
 * batch's ids) of a line too long to keep. With it, the rest of the line protocol that only the relays use:
 * the ids of a line too long to keep and the answers for it (`oversizedFromClient`, `oversizedFromServer`),
 * writing messages out as lines and the answers for one that cannot be (`encodeMessage`, `unwrittenFromServer`,
 * `unwrittenFromClient`), and the feed that paces a relay's reading of the client (`ClientFeed`). The relays
 * are loaded on first use (`_mcp/relays.ts`), so importing `mcp.ts` loads none of this (start-up, issue 18).
 *
 * @module
 */
import { byteCount, concatBytes } from "../_common/bytes.ts";
import { givenValue, isRecord, MAX_TIMER_MS } from "../_common/values.ts";
import {
  answersOnly,
  type BatchMember,
  type BigId,
  decoder,
  EDGE_BYTES,
  encoder,
  errorResponse,
  idFromEdges,
  idMember,
  isId,
  isRequest,
  type JsonRpcId,
  type JsonRpcMessage,
  jsonString,
  lineDecoder,
  type LineEdges,
  LineFrame,
  MAX_BATCH_MEMBERS,
  parseId,
  parseLineText,
  type ShownId,
  TOO_DEEP,
  TOO_LARGE,
  unwritable,
  whyUnwritten,
} from "./jsonrpc.ts";
import type { McpEvent, McpFrame, McpSession } from "./types.ts";

/** The byte that ends a line. */
export const NEWLINE = 0x0a;

/** One complete line from a byte stream, without its `\n`. */
export interface Frame {
  /** The line's bytes as they arrived, without the terminating `\n` (a trailing `\r` is kept). */
  bytes: Uint8Array;
  /** The parsed message, or undefined when the line is not JSON (or is blank). */
  message: JsonRpcMessage | JsonRpcMessage[] | undefined;
}

/** Options for {@linkcode createFramer}. */
export interface FramerOptions {
  /** Longest line in bytes; a longer line is skipped up to its newline and reported. Default 64 MiB. */
  maxLineBytes?: number;
  /**
   * Called when a line exceeded `maxLineBytes` and was skipped, with its first and last bytes (up to
   * {@linkcode EDGE_BYTES} each) so the caller can still find the message's id and answer it.
   */
  onOverflow?: (bytes: number, edges: LineEdges) => void;
}

/** How many bytes of a batch member's id are kept at most: a longer one is not noted. */
const MAX_ID_BYTES = 256;

const [QUOTE, BACKSLASH, COMMA, COLON] = [0x22, 0x5c, 0x2c, 0x3a];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x7b, 0x7d, 0x5b, 0x5d];
/**
 * How many bytes of a batch member's key are kept at most: `"method"` with each letter escaped
 * (`\u006d...`), the longest way to write a key the scanner reads. A longer key is neither.
 */
const MAX_KEY_BYTES = 36;

/**
 * Notes the ids of a batch's members while the bytes of a line too long to keep go by: one pass over each
 * byte, memory bounded by {@linkcode MAX_BATCH_MEMBERS}. It follows strings and nesting only: the `"id"` and
 * `"method"` members of each object directly in the top-level array are read; anything nested deeper is
 * skipped, and a line that does not start with `[` is not looked into at all.
 */
class BatchScanner {
  /**
   * Before the first byte that is not blank, inside the top-level array, or done (not a batch, or closed).
   */
  #state: "start" | "array" | "done" = "start";
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Inside a member (depth 2): the next string is a key. */
  #expectKey = false;
  /** The bytes of the key being read (up to {@linkcode MAX_KEY_BYTES}, then its closing quote), or null. */
  #key: number[] | null = null;
  /** The last key read in the member, when it is one the scanner reads. */
  #lastKey: "id" | "method" | undefined;
  /** The bytes of the member's id value being read, or null; `#idTooLong` past {@linkcode MAX_ID_BYTES}. */
  #idBytes: number[] | null = null;
  #idTooLong = false;
  #id: string | number | BigId | undefined;
  #method = false;
  members: BatchMember[] = [];

  /** A line's bytes, in order. */
  push(bytes: Uint8Array): void {
    // Inside a string nobody reads, only a quote or a backslash matters: skipped to with indexOf (whose
    // finds are kept while they lie ahead, so each byte is looked at a bounded number of times).
    let [quoteAt, slashAt] = [-1, -1];
    for (let i = 0; i < bytes.length && this.#state !== "done";) {
      if (this.#inString && !this.#escaped && this.#key === null && this.#idBytes === null) {
        if (quoteAt < i) quoteAt = foundAt(bytes, QUOTE, i);
        if (slashAt < i) slashAt = foundAt(bytes, BACKSLASH, i);
        i = Math.min(quoteAt, slashAt);
        if (i === bytes.length) break;
      }
      this.#byte(bytes[i++]);
    }
  }

  /** The members noted, when the line is a batch. */
  found(): BatchMember[] | undefined {
    return this.#state === "start" || (this.#state === "done" && this.#depth < 0) ? undefined : this.members;
  }

  #byte(b: number): void {
    if (this.#state === "start") {
      if (b === OPEN_BRACKET) [this.#state, this.#depth] = ["array", 1];
      // (JSON's blanks: an HTTP body may start with a newline, where a line cannot)
      else if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) {
        [this.#state, this.#depth] = ["done", -1];
      }
      return;
    }
    if (this.#inString) {
      if (this.#key !== null && this.#key.length <= MAX_KEY_BYTES + 1) this.#key.push(b);
      this.#keepId(b);
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        if (this.#key !== null) {
          this.#lastKey = readKey(this.#key);
          this.#key = null;
        }
      }
      return;
    }
    if (this.#idBytes !== null && this.#depth === 2 && (b === COMMA || b === CLOSE_BRACE)) this.#endId();
    else this.#keepId(b);
    switch (b) {
      case QUOTE:
        this.#inString = true;
        if (this.#depth === 2 && this.#expectKey) [this.#key, this.#expectKey] = [[], false];
        break;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        this.#depth++;
        if (this.#depth === 2 && b === OPEN_BRACE) this.#startMember();
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        if (this.#depth === 2 && b === CLOSE_BRACE) this.#endMember();
        if (--this.#depth === 0) this.#state = "done";
        break;
      case COMMA:
        if (this.#depth === 2) this.#expectKey = true;
        break;
      case COLON:
        if (this.#depth !== 2) break;
        // (of two ids, JSON keeps the last, even one that is not an id a message could have)
        if (this.#lastKey === "id") [this.#idBytes, this.#idTooLong, this.#id] = [[], false, undefined];
        else if (this.#lastKey === "method") this.#method = true;
        break;
    }
  }

  #keepId(b: number): void {
    if (this.#idBytes === null) return;
    if (this.#idBytes.length < MAX_ID_BYTES) this.#idBytes.push(b);
    else this.#idTooLong = true;
  }

  #endId(): void {
    const bytes = this.#idBytes as number[];
    this.#idBytes = null;
    if (this.#idTooLong) return;
    // (undefined for one a JSON-RPC answer could not carry)
    this.#id = parseId(decoder().decode(new Uint8Array(bytes)));
  }

  #startMember(): void {
    [this.#expectKey, this.#lastKey, this.#id, this.#method, this.#idBytes] = [
      true,
      undefined,
      undefined,
      false,
      null,
    ];
  }

  #endMember(): void {
    if (this.#id === undefined) return;
    this.members.push({ id: this.#id, request: this.#method });
    if (this.members.length === MAX_BATCH_MEMBERS) this.#state = "done"; // (no more is read)
  }
}

/** Where `byte` is in `bytes` from `from` on; `bytes.length` when it is not. */
function foundAt(bytes: Uint8Array, byte: number, from: number): number {
  const at = bytes.indexOf(byte, from);
  return at === -1 ? bytes.length : at;
}

/**
 * A batch member's key from its bytes (ending with the closing quote): `"id"` or `"method"` when it is one,
 * escapes read as JSON reads them (`"\u0069d"` is `"id"`), else undefined.
 */
function readKey(bytes: number[]): "id" | "method" | undefined {
  if (bytes.length > MAX_KEY_BYTES + 1) return undefined;
  const key = jsonString('"' + String.fromCharCode(...bytes)); // (a key read is ASCII, or neither)
  return key === "id" || key === "method" ? key : undefined;
}

/** Splits a byte stream into lines. Feed it every read; it returns the lines completed by that read. */
export interface Framer {
  /** Add one read's bytes; returns the complete lines it finished, in order. */
  push(chunk: Uint8Array): Frame[];
  /** End of stream: returns the last line when it had no terminating newline. */
  end(): Frame[];
}

/** Parse one line of bytes as JSON; undefined when blank or not JSON. Never throws. */
export function parseLine(bytes: Uint8Array): JsonRpcMessage | JsonRpcMessage[] | undefined {
  return parseLineText(lineDecoder().decode(bytes));
}

/**
 * Keeps the first and last {@linkcode EDGE_BYTES} of a message being skipped, and, when it is a batch, the
 * ids of its members (see {@linkcode BatchScanner}): what {@linkcode overflowIds} reads. Memory is bounded
 * whatever the message's length.
 */
export class EdgeKeeper {
  head: Uint8Array = new Uint8Array(0);
  tail: Uint8Array = new Uint8Array(0);
  #batch = new BatchScanner();
  /** Start over with `start`, the part of the message seen so far. */
  reset(start: Uint8Array): void {
    this.head = start.slice(0, EDGE_BYTES);
    this.tail = start.slice(Math.max(0, start.length - EDGE_BYTES));
    this.#batch = new BatchScanner();
    this.#batch.push(start);
  }
  /** More of the message. */
  add(piece: Uint8Array): void {
    this.#batch.push(piece);
    if (this.head.length < EDGE_BYTES) {
      const more = piece.subarray(0, EDGE_BYTES - this.head.length);
      this.head = concatBytes([this.head, more], this.head.length + more.length);
    }
    if (piece.length >= EDGE_BYTES) {
      this.tail = piece.slice(piece.length - EDGE_BYTES);
      return;
    }
    const joined = concatBytes([this.tail, piece], this.tail.length + piece.length);
    this.tail = joined.slice(Math.max(0, joined.length - EDGE_BYTES));
  }
  /** The ends kept, and a batch's members. */
  edges(): LineEdges {
    const batch = this.#batch.found();
    return { head: this.head, tail: this.tail, ...(batch === undefined ? {} : { batch }) };
  }
}

/** Create a newline framer. Memory held is bounded by the longest line (capped by `maxLineBytes`). */
export function createFramer(options: FramerOptions = {}): Framer {
  const max = options.maxLineBytes ?? 64 * 1024 * 1024;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let skipping = false; // inside an over-long line: drop bytes until the next newline
  let skipped = 0;
  const edges = new EdgeKeeper();

  /**
   * The line ending at `tail`, as a view without its newline on a buffer that holds it: the relay then
   * forwards the line with its newline without copying it again ({@linkcode withNewline}).
   */
  function take(tail: Uint8Array, { newline }: { newline: boolean }): Uint8Array {
    const length = pendingBytes + tail.length;
    const out = new Uint8Array(length + (newline ? 1 : 0));
    let at = 0;
    for (const part of pending) {
      out.set(part, at);
      at += part.length;
    }
    out.set(tail, at); // a copy: the caller may reuse its read buffer
    if (newline) out[length] = NEWLINE;
    pending = [];
    pendingBytes = 0;
    return out.subarray(0, length);
  }

  function frame(bytes: Uint8Array): Frame {
    return new LineFrame(bytes);
  }

  /** The line so far is too long: keep only its edges from now on. */
  function startSkipping(piece: Uint8Array): void {
    edges.reset(take(piece, { newline: false }));
  }

  return {
    push(chunk) {
      const frames: Frame[] = [];
      let start = 0;
      while (start <= chunk.length) {
        const nl = chunk.indexOf(NEWLINE, start);
        if (nl === -1) {
          const rest = chunk.subarray(start);
          if (rest.length === 0) break;
          if (skipping) {
            skipped += rest.length;
            edges.add(rest);
          } else if (pendingBytes + rest.length > max) {
            skipping = true;
            skipped = pendingBytes + rest.length;
            startSkipping(rest);
          } else {
            // Copy: the caller may reuse its read buffer.
            pending.push(rest.slice());
            pendingBytes += rest.length;
          }
          break;
        }
        const piece = chunk.subarray(start, nl);
        if (skipping) {
          edges.add(piece);
          options.onOverflow?.(skipped + piece.length, edges.edges());
          skipping = false;
          skipped = 0;
        } else if (pendingBytes + piece.length > max) {
          const bytes = pendingBytes + piece.length;
          startSkipping(piece);
          options.onOverflow?.(bytes, edges.edges());
        } else {
          const line = take(piece, { newline: true });
          if (line.length > 0) frames.push(frame(line));
        }
        start = nl + 1;
      }
      return frames;
    },
    end() {
      if (skipping) {
        options.onOverflow?.(skipped, edges.edges());
        skipping = false;
        return [];
      }
      if (pendingBytes === 0) return [];
      const line = take(new Uint8Array(0), { newline: false });
      return [frame(line)];
    },
  };
}

/** The ids a line too long to keep showed: see {@linkcode overflowIds}. */
export interface OverflowIds {
  /** Of a batch, its members that showed an id (at least one), in order; undefined for a single message. */
  members?: BatchMember[];
  /** The first id shown (a batch's first member's), or undefined when none was. */
  found?: ShownId;
}

/**
 * The ids a line too long to keep showed (see {@linkcode LineEdges}): a batch's members, noted as its bytes
 * went by, or else the id at either end of the line ({@linkcode idFromEdges}). What a relay answers with
 * errors, either way, so that no request waits for a message it dropped.
 */
export function overflowIds(edges: LineEdges): OverflowIds {
  const members = edges.batch !== undefined && edges.batch.length > 0 ? edges.batch : undefined;
  const found = members?.[0] ?? idFromEdges(edges);
  return { ...(members === undefined ? {} : { members }), ...(found === undefined ? {} : { found }) };
}

/**
 * A client message past a relay's size limit (`max`), of which the relay kept only the ends: reported, and
 * answered under the id its ends show (or null), so no request waits for it; an answer to a request of the
 * server's (sampling, elicitation) is replaced by an error to the server, which would wait for it too. That
 * error goes through the session as the client's answer in its place (`fromClient`: the session's), so the
 * server's request is known as answered (a later answer to it is a second one, dropped) and an error for a
 * request the server never made, or made and had answered, is not sent. Of a batch, every member whose id its
 * bytes showed is answered so (the requests with one array, as JSON-RPC answers a batch), up to 10 000
 * (`MAX_BATCH_MEMBERS` in `jsonrpc.ts`). Returns a promise while a message to the server waits (`fromClient`
 * returned one), settled once each is on its way: the relay reads no more of the client meanwhile, as a batch
 * of answers becomes as many messages to the server.
 */
export function oversizedFromClient(
  bytes: number,
  edges: LineEdges,
  max: number,
  to: {
    emit(event: McpEvent): void;
    fromClient(frame: McpFrame): void | Promise<void>;
    toClient(message: JsonRpcMessage | JsonRpcMessage[]): void;
  },
): void | Promise<void> {
  const { members, found } = overflowIds(edges);
  to.emit({ event: "oversized_message", from: "client", bytes, ...(found ? { id: found.id } : {}) });
  const [size, limit] = [byteCount(bytes), byteCount(max)];
  const refused = `toolguard: message of ${size} exceeds the limit of ${limit}; not forwarded`;
  const answerText = `toolguard: the client's answer of ${size} exceeds the limit of ${limit}`;
  if (found !== undefined && !found.request && members === undefined) {
    return to.fromClient({ message: errorResponse(found.id, -32603, answerText) });
  }
  if (members === undefined) return to.toClient(errorResponse(found?.id ?? null, -32600, refused));
  const batch = `a batch of ${size} exceeds the limit of ${limit}`;
  const requests: JsonRpcMessage[] = [];
  const waits: Promise<void>[] = [];
  for (const m of members) {
    if (m.request) {
      requests.push(errorResponse(m.id, -32600, `toolguard: ${batch}; this request in it was not forwarded`));
      continue;
    }
    const text = `toolguard: the client's answer was in ${batch}; not passed on`;
    const sent = to.fromClient({ message: errorResponse(m.id, -32603, text) });
    if (sent instanceof Promise) waits.push(sent);
  }
  if (requests.length > 0) to.toClient(requests);
  if (waits.length > 0) return Promise.all(waits).then(() => {});
}

/**
 * A server message past a relay's size limit (`max`), of which the relay kept only the ends: the request it
 * answers gets a JSON-RPC error in its place, and a request of the server's own (sampling, elicitation) is
 * answered to the server with one. Of a batch, every member whose id its bytes showed is answered so (up to
 * 10 000, `MAX_BATCH_MEMBERS` in `jsonrpc.ts`), so neither end waits for an answer that was in it. Reported
 * through `emit` when given (a relay that reported it as it gave it up gives none).
 */
export function oversizedFromServer(
  bytes: number,
  edges: LineEdges,
  max: number,
  to: {
    emit?(event: McpEvent): void;
    toServer(message: JsonRpcMessage): void;
    /** Answer a request waiting for `id`; false when none does. */
    answerWithError(id: JsonRpcId, code: number, text: string): boolean;
  },
): void {
  const { members, found } = overflowIds(edges);
  to.emit?.({ event: "oversized_message", from: "server", bytes, id: found?.id });
  if (found === undefined) return;
  const limit = `exceeds the relay's limit of ${byteCount(max)} (maxMessageBytes)`;
  const [size, inBatch] = [byteCount(bytes), members !== undefined];
  const refused = inBatch
    ? `toolguard: your batch of ${size} ${limit}; the client never saw this request in it`
    : `toolguard: your request of ${size} ${limit}; the client never saw it`;
  const lost = inBatch
    ? `toolguard: the MCP server's batch of ${size}, which held its answer, ${limit}; it was not relayed`
    : `toolguard: the MCP server's answer of ${size} ${limit}; it was not relayed`;
  for (const m of members ?? [found]) {
    if (m.request) to.toServer(errorResponse(m.id, -32600, refused));
    else if (
      !to.answerWithError(m.id, -32603, lost) && found.earlierId !== undefined && members === undefined
    ) {
      to.answerWithError(found.earlierId, -32603, lost); // (see ShownId.earlierId)
    }
  }
}

/**
 * After the client leaves, the longest wait for the answers to its requests, in graces (30 s by default): a
 * server that keeps talking but never answers is not waited for without end.
 */
const MAX_WAIT_GRACES = 15;
/**
 * After the client leaves, how long a server that has said nothing yet gets to answer, in graces (10 s by
 * default): a client that pipes its requests and closes its input at once (`printf ... | toolguard mcp -- npx
 * -y SERVER`, or a server behind a proxy still starting it) must not lose its answers to a server starting.
 */
const SILENT_WAIT_GRACES = 5;

/**
 * When (`performance.now()`) a relay stops waiting for the answers to the requests a client sent before it
 * left at `leftAt`: once the server has been silent for `graceMs` since the later of `leftAt` and `heardAt`
 * (when the server last sent the relay anything), {@linkcode SILENT_WAIT_GRACES} graces after `leftAt`
 * while it has said nothing (`heardAt` null: it may still be starting), and {@linkcode MAX_WAIT_GRACES}
 * graces after `leftAt` at the latest. Both relays wait so (stdio and HTTP): one client, one rule.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answersWaitEnd } from "./framing.ts";
 *
 * assert.equal(answersWaitEnd(1000, 1500, 100), 1600); // (it spoke after the client left)
 * assert.equal(answersWaitEnd(1000, null, 100), 1500); // (silent: it may still be starting)
 * assert.equal(answersWaitEnd(1000, 9000, 100), 2500); // (talking on, never answering)
 * ```
 */
export function answersWaitEnd(leftAt: number, heardAt: number | null, graceMs: number): number {
  const until = heardAt === null
    ? leftAt + graceMs * SILENT_WAIT_GRACES
    : Math.max(leftAt, heardAt) + graceMs;
  return Math.min(until, leftAt + graceMs * MAX_WAIT_GRACES);
}

/**
 * How long (ms) a relay waits next for the answers to the requests a client sent before it left at `leftAt`
 * (see {@linkcode answersWaitEnd}), as one timer can: 0 once the wait is over, or for a grace that is not a
 * number (no wait, where its timer spun at 1 ms for ever), and `MAX_TIMER_MS` at most (past it `setTimeout`
 * fires at once: a grace of 1e9 ms, 5 graces of which overflowed the timer, made a loop of 1 ms timers).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answersWaitLeft } from "./framing.ts";
 *
 * assert.equal(answersWaitLeft(performance.now() - 600, null, 100), 0); // (silent for 5 graces: over)
 * assert.equal(answersWaitLeft(performance.now(), null, NaN), 0);
 * assert.equal(answersWaitLeft(performance.now(), null, 1e9), 2 ** 31 - 1);
 * ```
 */
export function answersWaitLeft(leftAt: number, heardAt: number | null, graceMs: number): number {
  const left = answersWaitEnd(leftAt, heardAt, graceMs) - performance.now();
  return left > 0 ? Math.min(left, MAX_TIMER_MS) : 0;
}

/**
 * Throws a `RangeError` when `shutdownGraceMs` is given but is not a number of milliseconds from 0 to
 * `MAX_TIMER_MS` (about 24.8 days, as `runTool` bounds `timeoutMs`): a timer fires at once for NaN, a
 * negative value or one past it (Infinity too), so each of the relay's waits by the grace (the stdio server's
 * exit, the streams of a session the server ended, the `DELETE`) would end at once. Refused, not clamped, as
 * `maxInFlight` is: a value the relay would read as another is the caller's mistake to be told of. Both
 * relays call it before they start anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkShutdownGrace } from "./framing.ts";
 *
 * checkShutdownGrace(undefined); // (the default)
 * checkShutdownGrace(0);
 * assert.throws(() => checkShutdownGrace(Infinity), /shutdownGraceMs must be a number of milliseconds/);
 * ```
 */
export function checkShutdownGrace(graceMs: unknown): void {
  if (graceMs === undefined || (typeof graceMs === "number" && graceMs >= 0 && graceMs <= MAX_TIMER_MS)) {
    return;
  }
  throw new RangeError(
    `shutdownGraceMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${givenValue(graceMs)}`,
  );
}

/**
 * A server message a relay could not write out to the client (`why`, as {@linkcode encodeJson} tells it:
 * nested too deeply for the runtime's `JSON.stringify`, reported `too_deep`, or, built in code, holding what
 * JSON cannot write, a BigInt say, reported `not_judged` with `why`): reported, and, when it is a request
 * (sampling, elicitation), answered to the server with an error, as the server would wait for its answer for
 * ever. (An answer left out was replaced by an error answer to its request already.)
 */
export function unwrittenFromServer(
  message: unknown,
  to: { emit(event: McpEvent): void; toServer(message: JsonRpcMessage): void },
  why: string = TOO_DEEP,
): void {
  const kind = why === TOO_DEEP ? { kind: "too_deep" as const } : { kind: "not_judged" as const, text: why };
  to.emit({ event: "stray_message", from: "server", ...kind, ...idMember(message) });
  if (isRecord(message) && isRequest(message as JsonRpcMessage)) {
    const text = `toolguard: your request ${why} to the client; it was not passed on`;
    to.toServer(errorResponse(message.id as JsonRpcId, -32600, text));
  }
}

/**
 * A client message a relay could not write out to the server (see {@linkcode unwrittenFromServer}; one built
 * in code that JSON cannot write, or too large for the runtime to write, is reported `not_json` with `why`):
 * reported, and, when it is a request, answered with an error through the session (`answer`: its
 * `answerWithError`), which stops waiting for it and answers it in its batch, if it came in one, saying what
 * to change where there is one thing to (nested too deeply: flatten it; too large: send less).
 */
export function unwrittenFromClient(
  message: unknown,
  to: { emit(event: McpEvent): void; answer(id: JsonRpcId, code: number, text: string): void },
  why: string = TOO_DEEP,
): void {
  const kind = why === TOO_DEEP ? { kind: "too_deep" as const } : { kind: "not_json" as const, text: why };
  to.emit({ event: "client_message_refused", ...kind, ...idMember(message) });
  if (isRecord(message) && isRequest(message as JsonRpcMessage)) {
    // (what to change: a request too large for the runtime's strings is only too long, and holds nothing
    // JSON cannot write)
    const fix = why === TOO_DEEP
      ? " (flatten its arguments)"
      : why === TOO_LARGE
      ? " (send less in one request)"
      : "";
    const text = `toolguard: your request ${why} to the MCP server; it was not passed on${fix}`;
    to.answer(message.id as JsonRpcId, -32600, text);
  }
}

/**
 * Serialise one message (or a batch) as a line: JSON plus `\n`, as UTF-8 bytes. Never throws; see
 * {@linkcode encodeJson} for a message that cannot be written out, and `unwritten`.
 */
export function encodeMessage(
  message: unknown,
  unwritten?: (message: unknown, why: string) => void,
): Uint8Array {
  const json = encodeJson(message, unwritten);
  return json === undefined ? new Uint8Array(0) : encoder.encode(json + "\n");
}

/**
 * A message (or a batch) as JSON. Never throws: a message nested too deeply for the runtime's
 * `JSON.stringify` (Bun's gives up tens of thousands of levels before its `JSON.parse` does, Deno's on
 * objects `JSON.parse` did not make, such as a redacted copy) is left out, and `unwritten` is told of it, to
 * answer it if it is a request (no request is left pending), with `why` (see {@linkcode whyUnwritten}); an
 * answer left out is replaced by an error answer to its request, which then waits no more, saying why. A
 * message built in code that JSON cannot write (a BigInt, a loop, a getter that throws) is left out so too.
 * Of a batch, only the messages that cannot be written out are left out. Undefined when nothing is left.
 */
export function encodeJson(
  message: unknown,
  unwritten?: (message: unknown, why: string) => void,
): string | undefined {
  // (one the session already failed to write is not tried again: see `unwritable`)
  let error: unknown;
  try {
    if (!unwritable.has(message as object)) return JSON.stringify(message);
  } catch (thrown) {
    error = thrown; // (below, message by message)
  }
  if (!Array.isArray(message)) return writtenInstead(message, error, unwritten);
  // (a batch's elements one level down only: an element that is itself an array is one message too)
  const parts: string[] = [];
  for (const m of message) {
    let json: string | undefined;
    try {
      json = unwritable.has(m as object) ? writtenInstead(m, undefined, unwritten) : JSON.stringify(m);
    } catch (thrown) {
      json = writtenInstead(m, thrown, unwritten);
    }
    if (json !== undefined) parts.push(json);
  }
  return parts.length === 0 ? undefined : `[${parts.join(",")}]`;
}

/**
 * What goes in place of a message that cannot be written out (`error`: what writing it threw; see
 * {@linkcode whyUnwritten}): an error answer to an answer's request, saying why.
 */
function writtenInstead(
  message: unknown,
  error: unknown,
  unwritten?: (message: unknown, why: string) => void,
): string | undefined {
  const why = whyUnwritten(message, error);
  try {
    unwritten?.(message, why);
  } catch {
    // A hook that throws must not make the encoding throw.
  }
  const m = message as { id?: unknown; method?: unknown } | null;
  const id = typeof m === "object" && m !== null ? m.id : undefined;
  if (!isId(id) || m!.method !== undefined) return undefined;
  return JSON.stringify(errorResponse(id, -32603, `toolguard: the answer ${why}; it was not passed on`));
}

/** A line's bytes with the `\n` that ends it on the wire (as a framer hands them on, without it). */
export function withNewline(bytes: Uint8Array): Uint8Array {
  // A framer's line sits on a buffer that still holds its newline: reuse it.
  const end = bytes.byteOffset + bytes.length;
  if (end < bytes.buffer.byteLength && new Uint8Array(bytes.buffer, end, 1)[0] === NEWLINE) {
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length + 1);
  }
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = 0x0a;
  return out;
}

/**
 * What a relay's reader hands the client's frames to, in the order read: it says when to read on. A frame the
 * session cannot pass on at once (a notification waiting for a place, past the HTTP relay's places or past
 * `MAX_HELD` (`session.ts`)) holds the reading back, but only from the client's next message that is not an
 * answer: the client's answers to the server's requests pass it, as they pass what waits for the tool list,
 * since the server may need them before it frees a place. An answer that must wait itself holds the reading
 * back at once, so no more than one message waits at a time besides the answers' own.
 */
export class ClientFeed {
  readonly #session: McpSession;
  /** The delivery of a message that is not an answer, still waiting for its place. */
  #waiting: Promise<void> | undefined;

  constructor(session: McpSession) {
    this.#session = session;
  }

  /**
   * Hand one frame to the session; resolves once the next may be read. Never rejects: a delivery that throws
   * or rejects (a bug) fails that frame alone, and the frames after it still go (a relay that took it for the
   * end of the client's input read none of them, and answered none).
   */
  async feed(frame: McpFrame): Promise<void> {
    const answers = answersOnly(frame.message);
    if (this.#waiting !== undefined && !answers) await this.settled();
    let sent: void | Promise<void>;
    try {
      sent = this.#session.fromClient(frame);
    } catch {
      return;
    }
    if (!(sent instanceof Promise)) return;
    const taken = sent.catch(() => {});
    if (answers) return await taken;
    this.#waiting = taken;
  }

  /** Resolves once nothing handed on waits for its place any more. Never rejects. */
  async settled(): Promise<void> {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    await waiting;
  }
}
