/**
 * The engine of `statsFromChunks` and `statsFromFile`: the line splitter and the file reader. Apart from
 * `stats.ts` because only those two asynchronous functions use it, and they load it on their first call:
 * importing `stats.ts` (for `createStats`, say) or `mod.ts` does not load it, nor the file layer it reads
 * with.
 *
 * @module
 */
import { concatBytes, utf8Length } from "../_common/bytes.ts";
import { givenValue, optionsArg } from "../_common/values.ts";
import { openFile } from "./files.ts";
import { createStats, type StatsAggregator, type StatsOptions, type StatsReport } from "./stats.ts";

/** `statsFromChunks`: the same checks and errors (the public function rejects with them). */
export async function readStats(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options?: StatsOptions & { maxLineBytes?: number },
): Promise<StatsReport> {
  options = optionsArg(options, "statsFromChunks");
  const iterable = chunks as Partial<AsyncIterable<Uint8Array> & Iterable<Uint8Array>> | null | undefined;
  if (
    typeof iterable?.[Symbol.asyncIterator] !== "function" &&
    typeof iterable?.[Symbol.iterator] !== "function"
  ) {
    throw new TypeError(
      `statsFromChunks(): chunks must be an iterable of byte chunks, got ${givenValue(chunks)}`,
    );
  }
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  // NaN (an unset environment variable, say) would never be exceeded: one endless line would fill memory.
  // Infinity says so on purpose: no bound, as any number meant before the check.
  if ((!Number.isSafeInteger(maxLineBytes) && maxLineBytes !== Infinity) || maxLineBytes < 1) {
    throw new RangeError(
      `statsFromChunks(): maxLineBytes must be a positive integer (or Infinity for no bound), got ${
        givenValue(maxLineBytes)
      }`,
    );
  }
  const stats = createStats(options);
  const lines = new LineSplitter(stats, maxLineBytes);
  for await (const chunk of chunks) {
    // Text chunks (a stream piped through a TextDecoderStream) would fail deep inside with no hint.
    if (!(chunk instanceof Uint8Array)) {
      throw new TypeError(
        `statsFromChunks(): each chunk must be bytes (a Uint8Array), got ${
          typeof chunk === "string" ? "a string" : givenValue(chunk)
        }; ` +
          "pass the log's bytes without decoding them",
      );
    }
    lines.push(chunk);
  }
  lines.end();
  return stats.finish();
}

/** `statsFromFile`: the file read in 64 KiB chunks. */
export async function readStatsFile(
  path: string,
  options: StatsOptions & { maxLineBytes?: number },
): Promise<StatsReport> {
  return await readStats(readChunks(path), options);
}

/** The file's bytes in 64 KiB chunks; each chunk is valid only until the next one is read. */
function* readChunks(path: string): Generator<Uint8Array> {
  const file = openFile(path, "read");
  try {
    const buf = new Uint8Array(64 * 1024);
    while (true) {
      const n = file.read(buf);
      if (n <= 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    file.close();
  }
}

/** A line that is never valid JSON: what an overlong line is counted as (malformed). */
const OVERLONG_LINE = "\u0000overlong line";

/**
 * Line splitting in bounded memory. Complete lines in a chunk are decoded with one `decode` call and split
 * as text (a newline byte never occurs inside a UTF-8 sequence, so this never splits a character); only
 * the unfinished tail is carried to the next chunk, and never more than `maxLineBytes` of it.
 */
class LineSplitter {
  readonly #stats: StatsAggregator;
  readonly #maxLineBytes: number;
  readonly #decoder = new TextDecoder();
  #carry: Uint8Array[] = [];
  #carryBytes = 0;
  /** Inside a line that is already too long: bytes are dropped until its newline. */
  #overlong = false;

  constructor(stats: StatsAggregator, maxLineBytes: number) {
    this.#stats = stats;
    this.#maxLineBytes = maxLineBytes;
  }

  /** Takes the next chunk of bytes. */
  push(chunk: Uint8Array): void {
    const last = chunk.lastIndexOf(10);
    if (last < 0) return this.#keep(chunk);
    let start = 0;
    if (this.#overlong || this.#carryBytes > 0) {
      const nl = chunk.indexOf(10);
      this.#finishCarried(chunk.subarray(0, nl));
      start = nl + 1;
    }
    if (start <= last) {
      const text = this.#decoder.decode(chunk.subarray(start, last));
      let from = 0;
      while (true) {
        const nl = text.indexOf("\n", from);
        if (nl < 0) {
          this.#emit(text.slice(from));
          break;
        }
        this.#emit(text.slice(from, nl));
        from = nl + 1;
      }
    }
    if (last + 1 < chunk.length) this.#keep(chunk.subarray(last + 1));
  }

  /** Counts the last line when the bytes did not end with a newline. */
  end(): void {
    if (this.#overlong || this.#carryBytes > 0) this.#finishCarried(new Uint8Array(0));
  }

  #emit(line: string): void {
    // Characters are at most 3 bytes per UTF-16 unit: measure bytes only when the line might be too long.
    const max = this.#maxLineBytes;
    this.#stats.addLine(line.length * 3 > max && utf8Length(line) > max ? OVERLONG_LINE : line);
  }

  #keep(bytes: Uint8Array): void {
    if (this.#overlong) return;
    if (this.#carryBytes + bytes.length > this.#maxLineBytes) {
      this.#overlong = true;
      this.#carry = [];
      this.#carryBytes = 0;
      return;
    }
    this.#carry.push(bytes.slice()); // copy: the reader reuses its buffer
    this.#carryBytes += bytes.length;
  }

  #finishCarried(rest: Uint8Array): void {
    const total = this.#carryBytes + rest.length;
    if (this.#overlong || total > this.#maxLineBytes) this.#stats.addLine(OVERLONG_LINE);
    else this.#stats.addLine(this.#decoder.decode(concatBytes([...this.#carry, rest], total)));
    this.#carry = [];
    this.#carryBytes = 0;
    this.#overlong = false;
  }
}
