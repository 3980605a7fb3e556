/**
 * The newline framer of MCP's stdio transport: splits a byte stream into lines, copes with partial reads,
 * many messages per read and very large messages without quadratic copying, and keeps the ends (and a
 * batch's ids) of a line too long to keep. Only the relays use it, and they are loaded on first use
 * (`_mcp/relays.ts`), so importing `mcp.ts` does not load it (start-up, issue 18).
 *
 * @module
 */
import { concatBytes } from "../_common/bytes.ts";
import { lazy } from "../_common/lazy.ts";
import {
  type BatchMember,
  decoder,
  EDGE_BYTES,
  type JsonRpcMessage,
  jsonString,
  type LineEdges,
  MAX_BATCH_MEMBERS,
  NEWLINE,
} from "./jsonrpc.ts";

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

/** How many bytes of each end of a skipped line {@linkcode FramerOptions.onOverflow} is given. */

/** How many bytes of a batch member's id are kept at most: a longer one is not noted. */
const MAX_ID_BYTES = 256;

const [QUOTE, BACKSLASH, COMMA, COLON] = [0x22, 0x5c, 0x2c, 0x3a];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x7b, 0x7d, 0x5b, 0x5d];
/**
 * How many bytes of a batch member's key are kept at most: `"method"` with each letter escaped
 * (`\u006d…`), the longest way to write a key the scanner reads. A longer key is neither.
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
  #id: string | number | undefined;
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
    try {
      const id: unknown = JSON.parse(decoder().decode(new Uint8Array(bytes)));
      if (typeof id === "string" || typeof id === "number") this.#id = id;
    } catch {
      // Not an id a JSON-RPC answer could carry.
    }
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

/**
 * Keeps a leading BOM: the SDKs' stdio readers parse a line as it came, so a BOM before its JSON (or any
 * space that is not JSON's, such as U+00A0, which `trim` would drop) makes it no message to them either.
 */
const lineDecoder = lazy(() => new TextDecoder("utf-8", { ignoreBOM: true }));

/** Parse one line of bytes as JSON; undefined when blank or not JSON. Never throws. */
export function parseLine(bytes: Uint8Array): JsonRpcMessage | JsonRpcMessage[] | undefined {
  const text = lineDecoder().decode(bytes);
  if (text.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(text); // (JSON.parse skips JSON's own white space, CR included)
    if (value !== null && typeof value === "object") return value as JsonRpcMessage | JsonRpcMessage[];
    return undefined;
  } catch {
    return undefined;
  }
}

/**
 * A frame whose message is parsed on first read: a relay that can tell from a line's ends that nobody needs
 * to look inside (an answer to a plain `tools/call`) forwards its bytes as they came, parsed only to learn
 * that the client will read the same answer.
 */
function lazyFrame(bytes: Uint8Array): Frame {
  let parsed = false;
  let message: JsonRpcMessage | JsonRpcMessage[] | undefined;
  return {
    bytes,
    get message() {
      if (!parsed) {
        message = parseLine(bytes);
        parsed = true;
      }
      return message;
    },
  };
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
    return lazyFrame(bytes);
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
