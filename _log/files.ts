/**
 * File access for the call log and the report, chosen at run time: Deno's own file API on Deno, `node:fs`
 * (loaded on first use through `process.getBuiltinModule`) on Bun and Node. Nothing is imported statically,
 * so the log and stats modules bundle for a browser, where only streams and chunks are used.
 *
 * @module
 */
import { nodeBuiltin } from "../_common/values.ts";

/**
 * How a file is opened: for appending (created when missing), for reading, or to be replaced (created when
 * missing, else emptied).
 */
export type OpenMode = "append" | "read" | "replace";

/** An open file: synchronous, one system call per `read` or `write`. */
export interface OpenFile {
  /** Reads at the current position into `into`; returns how many bytes were read, 0 at end of file. */
  read(into: Uint8Array): number;
  /** Writes `bytes` with one `write` call; returns how many bytes were written. */
  write(bytes: Uint8Array): number;
  /** Closes the file. */
  close(): void;
  /**
   * The file's device and inode (`"dev:ino"`), or null where the runtime does not tell them (or, under Deno,
   * the program may not read the file).
   */
  readonly id: string | null;
}

/** The part of Deno's file API used here. */
interface DenoFiles {
  openSync(
    path: string,
    options: { read?: boolean; write?: boolean; append?: boolean; create?: boolean; truncate?: boolean },
  ): {
    readSync(into: Uint8Array): number | null;
    writeSync(bytes: Uint8Array): number;
    statSync(): FileInfo;
    close(): void;
  };
  statSync(path: string): FileInfo;
  permissions: { querySync(descriptor: { name: "read"; path: string }): { state: string } };
}

/** What both runtimes tell of a file, as used here. */
interface FileInfo {
  dev: number | bigint | null;
  ino: number | bigint | null;
  /** Deno: a named pipe. */
  isFifo?: boolean | null;
  /** node:fs: a named pipe. */
  isFIFO?: () => boolean;
}

/** The part of `node:fs` used here. */
interface NodeFiles {
  openSync(path: string, flags: string | number): number;
  readSync(fd: number, into: Uint8Array, offset: number, length: number, position: null): number;
  writeSync(fd: number, bytes: Uint8Array): number;
  closeSync(fd: number): void;
  fstatSync(fd: number): FileInfo;
  statSync(path: string): FileInfo;
  constants: { O_WRONLY: number; O_APPEND: number; O_NONBLOCK: number };
}

/** `node:fs`, loaded on first use: a static import would keep the library from bundling for a browser. */
const loadNodeFiles = (): NodeFiles => nodeBuiltin<NodeFiles>("node:fs");

/**
 * Opens a file synchronously. `"append"` is `O_APPEND|O_CREAT` (mode 0o666 before the umask): every write
 * lands at the current end of the file, atomically per write call, so several processes can share it.
 * `"replace"` is `O_TRUNC|O_CREAT`. Opening a named pipe (FIFO) to write waits until a process opens it
 * for reading: with no reader, the program would hang before it did anything. So a FIFO is first opened
 * without waiting, which fails at once when nothing reads it (`ENXIO`), then opened as any file while that
 * first descriptor stays open (closing it first would leave the reader without a writer: it would read the
 * end and go). Under Deno, that needs read access to the path (to tell a FIFO): without it, a FIFO without
 * a reader still blocks here.
 *
 * @param path The file.
 * @param mode `"append"`, `"read"` or `"replace"`.
 * @returns The open file.
 * @throws {Error} The runtime's own error (with its `code`, e.g. `ENOENT`) when the file cannot be opened;
 *   `ENXIO` for a FIFO that no process reads.
 */
export function openFile(path: string, mode: OpenMode): OpenFile {
  const deno = (globalThis as { Deno?: DenoFiles }).Deno;
  const probe = mode !== "read" && isFifo(path, deno) ? openWithoutWaiting(path) : null;
  try {
    return openNow(path, mode, deno);
  } finally {
    if (probe !== null) loadNodeFiles().closeSync(probe);
  }
}

const DENO_MODES = {
  append: { append: true, create: true },
  read: { read: true },
  replace: { write: true, create: true, truncate: true },
} as const;
const NODE_MODES = { append: "a", read: "r", replace: "w" } as const;

/**
 * Writes `bytes` to `path` as the whole file (created, or emptied first), through {@linkcode openFile}: a
 * FIFO that no process reads is `ENXIO` at once, not a wait for ever.
 *
 * @param path The file.
 * @param bytes What it will hold.
 * @throws {Error} The runtime's own error (with its `code`) when the file cannot be opened or written.
 */
export function replaceFile(path: string, bytes: Uint8Array): void {
  const file = openFile(path, "replace");
  try {
    for (let at = 0; at < bytes.length;) {
      const n = file.write(bytes.subarray(at));
      if (n <= 0) throw Object.assign(new Error(`wrote nothing to ${path}`), { code: "EIO" });
      at += n;
    }
  } finally {
    file.close();
  }
}

/** {@linkcode openFile} itself, on this runtime. */
function openNow(path: string, mode: OpenMode, deno: DenoFiles | undefined): OpenFile {
  if (deno) {
    const file = deno.openSync(path, DENO_MODES[mode]);
    return {
      read: (into) => file.readSync(into) ?? 0,
      write: (bytes) => file.writeSync(bytes),
      close: () => file.close(),
      // Stat needs read access, which a program that only writes its log may lack: asking for it would stop
      // the program at a prompt mid-run, so without it the log goes without rotation checks.
      id: readGranted(deno, path) ? idOf(() => file.statSync()) : null,
    };
  }
  const fs = loadNodeFiles();
  const fd = fs.openSync(path, NODE_MODES[mode]);
  return {
    read: (into) => fs.readSync(fd, into, 0, into.length, null),
    write: (bytes) => fs.writeSync(fd, bytes),
    close: () => fs.closeSync(fd),
    id: idOf(() => fs.fstatSync(fd)),
  };
}

/**
 * The device and inode (`"dev:ino"`) of the file a path names now, or null when nothing is there (or the
 * runtime does not tell). Compared with {@linkcode OpenFile.id}, it says whether the path still names an open
 * file: after a log rotation (rename, or delete) it does not.
 *
 * @param path The file.
 * @returns Its id, or null.
 */
export function fileId(path: string): string | null {
  const deno = (globalThis as { Deno?: DenoFiles }).Deno;
  return idOf(() => deno ? deno.statSync(path) : loadNodeFiles().statSync(path));
}

/** True when `path` names a FIFO (false when it does not exist, or, under Deno, may not be read). */
function isFifo(path: string, deno: DenoFiles | undefined): boolean {
  try {
    if (deno) return readGranted(deno, path) && deno.statSync(path).isFifo === true;
    return loadNodeFiles().statSync(path).isFIFO?.() === true;
  } catch {
    return false;
  }
}

/**
 * Opens a FIFO for writing without waiting: throws `ENXIO` at once when no process reads it. (Through
 * `node:fs` under Deno too: only it takes `O_NONBLOCK`, and only a FIFO gets here.)
 */
function openWithoutWaiting(path: string): number {
  const fs = loadNodeFiles();
  const { O_WRONLY, O_APPEND, O_NONBLOCK } = fs.constants;
  return fs.openSync(path, O_WRONLY | O_APPEND | O_NONBLOCK);
}

/** True when Deno lets this program read `path` without a prompt. */
function readGranted(deno: DenoFiles, path: string): boolean {
  try {
    return deno.permissions.querySync({ name: "read", path }).state === "granted";
  } catch {
    return false;
  }
}

/** `"dev:ino"` from a stat call, or null when it throws or gives no inode (Windows on some runtimes). */
function idOf(stat: () => FileInfo): string | null {
  try {
    const { dev, ino } = stat();
    return ino === null || ino === undefined || Number(ino) === 0 ? null : `${dev}:${ino}`;
  } catch {
    return null;
  }
}
