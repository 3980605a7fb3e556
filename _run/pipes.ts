/**
 * Byte pipes to and from a child process, over whatever each runtime gives: web streams (Deno, Bun's
 * stdout), Bun's `FileSink` (its stdin) and Node streams. Every source and sink here has the same small
 * shape and never throws: a read that fails ends the source as end-of-file does, but the source keeps why
 * (`failure()`), so that output cut by the failure is never taken for all the tool wrote; writes to a broken
 * pipe are dropped.
 *
 * @module
 */

import { errorText } from "../_common/values.ts";

/**
 * A pull-based byte source over a child's pipe. `read()` resolves null at end-of-file, after `cancel()`, or
 * once a read failed (then `failure()` says why).
 */
export interface ByteSource {
  /** The next chunk, or null at end-of-file (or after a failed read). */
  read(): Promise<Uint8Array | null>;
  /**
   * Stop reading and close our end of the pipe. After a failed read it does nothing: a failed web stream
   * cannot be cancelled, and only the runtime can close its pipe (Deno and Bun do, on the failure).
   */
  cancel(): void;
  /** Why a read failed, as text; null while none has (end-of-file and `cancel()` are no failure). */
  failure(): string | null;
}

/** A byte sink over a child's stdin pipe. Never throws: once the pipe is broken, writes are dropped. */
export interface ByteSink {
  /**
   * Send bytes. Returns a promise when the caller should wait before writing more (the pipe is full; on
   * Deno, also while the previous write is still being taken). The promise never rejects.
   */
  write(bytes: Uint8Array): void | Promise<void>;
  /** Close the pipe: the child reads end-of-file once what was written has been taken. */
  close(): void;
}

/** A source over a web `ReadableStream` (Bun's child stdout and stderr, which are not byte streams). */
export function webSource(stream: ReadableStream<Uint8Array>): ByteSource {
  const reader = stream.getReader();
  let done = false;
  let failed: string | null = null;
  return {
    async read() {
      if (done) return null;
      try {
        const r = await reader.read();
        if (r.done) {
          done = true;
          return null;
        }
        return r.value;
      } catch (error) {
        if (!done) failed = errorText(error); // (a read pending when we cancelled is no failure)
        done = true;
        return null;
      }
    },
    cancel() {
      if (done) return;
      done = true;
      reader.cancel().catch(() => {});
    },
    failure: () => failed,
  };
}

/** Bytes asked for per read from a byte stream: the size of a Linux pipe's buffer. */
const READ_BUFFER_BYTES = 64 * 1024;
/** At most this many read buffers wait for reuse (a burst of concurrent runs allocates more, then drops them). */
const MAX_SPARE_BUFFERS = 4;
const spareBuffers: ArrayBuffer[] = [];

/**
 * A source over a web byte stream (Deno's child stdout and stderr) that reads into recycled buffers. A default
 * reader makes the stream allocate a fresh 64 KiB buffer for every read, end-of-file included; on a quick tool
 * those allocations, not the reads, were most of the guard's cost on Deno, because they make V8 run full
 * garbage collections. Here each read fills a buffer from a small pool and hands out an exact-size copy.
 * Falls back to {@linkcode webSource} for a stream that is not a byte stream.
 */
export function byteStreamSource(stream: ReadableStream<Uint8Array>): ByteSource {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = stream.getReader({ mode: "byob" });
  } catch {
    return webSource(stream);
  }
  return new ByobSource(reader);
}

/** The {@linkcode ByteSource} of {@linkcode byteStreamSource}. */
class ByobSource implements ByteSource {
  readonly #reader: ReadableStreamBYOBReader;
  #done = false;
  #failed: string | null = null;

  constructor(reader: ReadableStreamBYOBReader) {
    this.#reader = reader;
  }

  read(): Promise<Uint8Array | null> {
    if (this.#done) return Promise.resolve(null);
    const buffer = spareBuffers.pop() ?? new ArrayBuffer(READ_BUFFER_BYTES);
    return this.#reader.read(new Uint8Array(buffer)).then(this.#take, this.#fail);
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.#reader.cancel().catch(() => {});
  }

  failure(): string | null {
    return this.#failed;
  }

  /** A read's outcome: an exact-size copy of the bytes, or null at end-of-file; the buffer goes back. */
  readonly #take = (r: ReadableStreamReadResult<Uint8Array>): Uint8Array | null => {
    // The buffer came back (transferred) unless the read was cancelled; it can be read into again.
    const view = r.value;
    const chunk = r.done || view === undefined || view.length === 0 ? null : view.slice();
    if (view !== undefined && spareBuffers.length < MAX_SPARE_BUFFERS) {
      spareBuffers.push(view.buffer as ArrayBuffer);
    }
    if (chunk === null) this.#done = true;
    return chunk;
  };

  readonly #fail = (error: unknown): null => {
    if (!this.#done) this.#failed = errorText(error); // (a read pending when we cancelled is no failure)
    this.#done = true;
    return null;
  };
}

/** The part of a Node `Readable` that {@linkcode nodeSource} uses. */
export interface NodeReadable {
  on(event: string, handler: (...a: unknown[]) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  destroy(): unknown;
}

/** A source over a Node `Readable`, paused after each chunk until the next `read()` (backpressure). */
export function nodeSource(stream: NodeReadable): ByteSource {
  const queue: Uint8Array[] = [];
  let ended = false;
  let failed: string | null = null;
  let waiter: (() => void) | null = null;
  const wake = () => {
    const w = waiter;
    waiter = null;
    w?.();
  };
  stream.on("data", (chunk) => {
    queue.push(chunk as Uint8Array);
    stream.pause(); // backpressure: one chunk at a time, resumed on read()
    wake();
  });
  stream.on("end", () => {
    ended = true;
    wake();
  });
  stream.on("close", () => {
    ended = true;
    wake();
  });
  stream.on("error", (error) => {
    if (!ended) failed = errorText(error);
    ended = true;
    wake();
  });
  return {
    async read() {
      while (queue.length === 0 && !ended) {
        stream.resume();
        await new Promise<void>((resolve) => (waiter = resolve));
      }
      return queue.shift() ?? null;
    },
    cancel() {
      ended = true;
      queue.length = 0;
      stream.destroy();
      wake();
    },
    failure: () => failed,
  };
}

/** A source already at end-of-file: the stderr of a child whose stderr is not piped. */
export const ENDED: ByteSource = { read: () => Promise.resolve(null), cancel() {}, failure: () => null };

/** A sink over a web `WritableStream` (Deno's child stdin). */
export function webSink(stream: WritableStream<Uint8Array>): ByteSink {
  const writer = stream.getWriter();
  let broken = false;
  const lost = () => {
    broken = true;
  };
  return {
    write(bytes) {
      if (broken) return;
      writer.write(bytes).catch(lost);
      // A full pipe shows as no room left in the stream's queue; `ready` settles once there is room again.
      if ((writer.desiredSize ?? 1) <= 0) return writer.ready.then(() => {}, lost);
    },
    close() {
      writer.close().catch(lost);
    },
  };
}

/** Bun's `FileSink` over a child's stdin: `write` returns a promise while the pipe is full. */
export interface BunFileSink {
  write(chunk: Uint8Array): number | Promise<number>;
  end(): unknown;
}

/** A sink over Bun's `FileSink`. */
export function bunSink(sink: BunFileSink): ByteSink {
  let broken = false;
  const lost = () => {
    broken = true;
  };
  return {
    write(bytes) {
      if (broken) return;
      try {
        const written = sink.write(bytes);
        if (written instanceof Promise) return written.then(() => {}, lost);
      } catch {
        lost(); // EPIPE: the child is gone
      }
    },
    close() {
      try {
        Promise.resolve(sink.end()).catch(lost);
      } catch {
        lost();
      }
    },
  };
}

/** The part of a Node `Writable` that {@linkcode nodeSink} uses. */
export interface NodeWritable {
  write(bytes: Uint8Array): boolean;
  end(): unknown;
  on(event: string, handler: (...a: unknown[]) => void): unknown;
  off(event: string, handler: (...a: unknown[]) => void): unknown;
  once(event: string, handler: (...a: unknown[]) => void): unknown;
}

/** A sink over a Node `Writable`: a full buffer is waited for once, however many writes meet it. */
export function nodeSink(stream: NodeWritable): ByteSink {
  let broken = false;
  let drained: Promise<void> | null = null; // one wait per full buffer, however many writes meet it
  stream.on("error", () => (broken = true)); // EPIPE when the child died
  stream.once("close", () => (broken = true));
  const untilDrained = () =>
    new Promise<void>((resolve) => {
      // Wait for the buffer to drain, or for the stream to close (then it never drains).
      const done = () => {
        drained = null;
        stream.off("drain", done);
        stream.off("close", done);
        resolve();
      };
      stream.on("drain", done);
      stream.on("close", done);
    });
  return {
    write(bytes) {
      if (broken) return;
      try {
        if (stream.write(bytes)) return;
      } catch {
        broken = true;
        return;
      }
      return (drained ??= untilDrained());
    },
    close() {
      try {
        stream.end();
      } catch {
        // Already closed.
      }
    },
  };
}
