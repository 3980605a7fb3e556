/**
 * Windows-specific process logic, written as pure functions so it is testable on any OS with injected
 * environment values. Owned by the Windows work (issue 9); the runtime layer (`runtime.ts`) calls it.
 *
 * Batch files (`.cmd`/`.bat`) cannot be started without `cmd.exe`, and `cmd.exe` parses its command line
 * as a script: `&`, `|`, `<`, `>`, `^`, `%VAR%` and an unbalanced `"` all mean something to it (this is the
 * "BatBadBut" class: CVE-2024-24576 in Rust's std, CVE-2024-27980 in Node). The plan here follows Rust's
 * fix (`make_bat_command_line`: every non-trivial argument inside one pair of quotes, `%` neutralised with
 * the `%%cd:~,%` no-op, command extensions on, delayed expansion off, AutoRun off) and is stricter where
 * Rust trusts the batch file: an argument that contains `"`, a control character (CR, LF, NUL, ...) or
 * that needs quotes and ends in `\` is refused, because no quoting delivers it intact to both `%~1` and
 * the programs a batch file forwards `%*` to. Refusing is always safe; reaching `cmd.exe` as a second
 * command never is.
 *
 * @module
 */
import type { TreeOwner } from "./tree.ts";

/** The environment values Windows command resolution depends on (injected, so tests run anywhere). */
export interface WindowsEnv {
  /** `PATH`, `;`-separated. */
  PATH?: string;
  /** `PATHEXT`, `;`-separated, e.g. `.COM;.EXE;.BAT;.CMD`. */
  PATHEXT?: string;
  /** `ComSpec`, the path of cmd.exe. */
  ComSpec?: string;
}

/**
 * How to start a program on Windows. With `rawArguments: true`, `args` holds exactly one string: the
 * complete, already-quoted command line after the program name (Deno `windowsRawArguments`, Bun and Node
 * `windowsVerbatimArguments`).
 */
export type WindowsLaunch =
  | { ok: true; command: string; args: string[]; rawArguments: boolean }
  | { ok: false; reason: string };

/** PATHEXT when the environment has none: what cmd.exe assumes. */
const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD";

/**
 * cmd.exe reads at most 8191 characters of a command line; a longer one is cut, and a cut can fall inside
 * an argument. Stay below it with room for `cmd.exe` itself.
 */
const MAX_BATCH_COMMAND_LINE = 8000;

/** Characters that never need quotes for cmd.exe or for a batch file's `%1` splitting (Rust's list). */
const UNQUOTED = /^[A-Za-z0-9#$*+\-./:?@\\_]+$/;

/** Control characters: CR and LF end a cmd.exe line early, NUL ends the string, the rest are refused too. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Plan how to launch `command` with `args` on Windows.
 *
 * - A bare name (no `\`, `/` or drive) is looked up in each `PATH` directory in order; in each directory
 *   the name itself is tried first when it already has an extension, then the name plus each `PATHEXT`
 *   extension in order (so `npx` finds `npx.cmd`). The current directory is NOT searched for bare names
 *   (unlike cmd.exe; a tool's working folder must not be able to shadow a program).
 * - A name with a path separator is resolved relative to `cwd` (when given and the name is not absolute),
 *   with the same extension rules.
 * - `.exe`, `.com` and any other extension: the full path, with `args` passed as ordinary arguments.
 * - `.cmd`/`.bat` (any letter case): `cmd.exe /d /e:ON /v:OFF /s /c ""script" args"` with `rawArguments`,
 *   each argument quoted so cmd.exe reads it as text - or `{ ok: false }` when an argument cannot be
 *   passed that way (see the module doc).
 * - Nothing found: `{ ok: false }` naming what was searched.
 * - `env` null (the environment could not be read: Deno without `env` permission): a bare name is refused,
 *   saying so, since the PATH to search is not known (an empty one would read as "not found anywhere");
 *   a path is resolved with the default `PATHEXT` and started through `cmd.exe` when it is a batch file.
 *
 * `env` is the environment the program will run with; its keys are matched case-insensitively, as
 * Windows does (`Path` is `PATH`). `isFile` is injected so tests need no real files; it should answer
 * `true` for anything `CreateProcess` could start (also app execution aliases, which `stat` may not see).
 *
 * @param command The program: a bare name, a relative path or an absolute path.
 * @param args The arguments, exactly as the program should receive them.
 * @param env The environment (at least `PATH`, `PATHEXT`, `ComSpec`; other keys are ignored), or null when
 *   it could not be read.
 * @param isFile Whether a path names an existing file.
 * @param cwd The folder the program will run in; relative paths with a separator resolve against it.
 * @returns The launch plan, or the reason it cannot be launched safely.
 */
export function planWindowsLaunch(
  command: string,
  args: readonly string[],
  env: WindowsEnv | null,
  isFile: (path: string) => boolean,
  cwd?: string,
): WindowsLaunch {
  if (command.length === 0) return { ok: false, reason: "the command is empty" };
  if (CONTROL.test(command) || /["<>|*]/.test(command)) {
    return {
      ok: false,
      reason: `the command ${JSON.stringify(command)} contains a character no Windows path has`,
    };
  }
  // Windows drops trailing dots and spaces (`x.cmd.` opens `x.cmd`) and reads `x.cmd::$DATA` as the file
  // itself, so such a name could start a batch file under a name that does not look like one.
  if (/[. ]$/.test(command) || command.replace(/^\\\\[?.]\\/, "").replace(/^[A-Za-z]:/, "").includes(":")) {
    return {
      ok: false,
      reason: `the command ${JSON.stringify(command)} ends with a dot or space or names a ":" stream; ` +
        "name the file exactly",
    };
  }
  if (env === null && !hasSeparator(command)) {
    return {
      ok: false,
      reason:
        `program ${JSON.stringify(command)} was not looked for: the environment could not be read, so ` +
        "its PATH is not known (under Deno, grant --allow-env, or --allow-env=PATH,PATHEXT,ComSpec at least; " +
        "or pass env with PATH, or a full path)",
    };
  }
  const known = env ?? {};
  const exts = pathExtensions(lookup(known, "PATHEXT"));
  const found = resolve(command, exts, lookup(known, "PATH"), isFile, cwd);
  if (found === null) {
    const where = hasSeparator(command)
      ? `relative to ${cwd ? JSON.stringify(cwd) : "the current folder"}`
      : "in any PATH folder";
    return {
      ok: false,
      reason: `program ${JSON.stringify(command)} not found ${where} (extensions tried: ${exts.join(";")})`,
    };
  }
  const ext = extension(found).toLowerCase();
  if (ext === ".cmd" || ext === ".bat") return planBatch(found, args, lookup(known, "ComSpec"));
  return { ok: true, command: found, args: [...args], rawArguments: false };
}

/**
 * The command that ends the whole process tree rooted at `pid` on Windows: `taskkill /PID pid /T /F`.
 *
 * @param pid The process id of the tree's root (a positive integer).
 * @returns The program and its arguments.
 * @throws {RangeError} When `pid` is not a positive integer.
 */
export function windowsTreeKill(pid: number): { command: string; args: string[] } {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new RangeError(`windowsTreeKill: pid must be a positive integer, got ${pid}`);
  }
  return { command: "taskkill", args: ["/PID", String(pid), "/T", "/F"] };
}

/**
 * What a result says after "the guard ended the process tree, " on Windows: `taskkill /T` follows parent links
 * down from the tool as they stand, so a process whose parent had already exited (started with `start /b` by a
 * batch file that has ended, or left by a tool that exited) is not part of the tree it ends.
 */
export const TASKKILL_TREE_NOTE =
  "as far as taskkill /T finds it: a process whose parent had already exited is not found and may still be running";

/**
 * What a result says after "the guard could not end the process tree, " on Windows, where the tool had exited
 * before the kill (a descendant held its output): `taskkill /T` finds a tree from a running process down, so
 * it is not run on the tool's pid, which finds nothing and may since name another process.
 *
 * @param owner What the note calls the process started (the relay's is the server).
 * @returns The note, ending with what may still be running.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { taskkillGoneNote } from "./windows.ts";
 *
 * assert.match(taskkillGoneNote("server"), /, and the server had already exited: /);
 * ```
 */
export function taskkillGoneNote(owner: TreeOwner = "tool"): string {
  return `as taskkill /T finds a tree only under a process still running, and the ${owner} had already exited: ` +
    "processes it started may still be running";
}

/** {@linkcode taskkillGoneNote} of a tool. */
export const TASKKILL_GONE_NOTE: string = taskkillGoneNote();

/**
 * What a result says on Windows where `taskkill` could not be started and the tool's own handle was used
 * instead: after "the guard ended the tool but not its process tree, " when that kill ended the tool, after
 * "the guard could not end the process tree, " when the tool had already exited (`exited`): why, and what to
 * grant or install. Deno's run permission is named under Deno only: Bun and Node need no permission, only
 * `taskkill` on the PATH.
 *
 * @param runtime The runtime the guard runs under.
 * @param exited Whether the tool had already exited, so the kill reached no process.
 * @param owner What the note calls the process started (the relay's is the server).
 * @returns The note, ending with what may still be running.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { noTaskkillNote } from "./windows.ts";
 *
 * assert.match(noTaskkillNote("deno"), /--allow-run for taskkill/);
 * assert.doesNotMatch(noTaskkillNote("bun"), /Deno|allow-run|exited/);
 * assert.match(noTaskkillNote("node", true), /PATH, and the tool had already exited/);
 * ```
 */
export function noTaskkillNote(
  runtime: "deno" | "bun" | "node",
  exited = false,
  owner: TreeOwner = "tool",
): string {
  const why = runtime === "deno"
    ? "as Deno could not run taskkill here: ending the tree needs --allow-run for taskkill and taskkill on the PATH"
    : "as taskkill could not be started here: ending the tree needs taskkill on the PATH";
  return `${why}${
    exited ? `, and the ${owner} had already exited` : ""
  }, so processes it started may still be running`;
}

/**
 * How far the tool's own kill reached on Windows under Bun and Node (where `taskkill` could not be started),
 * told by the tool's exit: libuv reports the signal of a kill it made (TerminateProcess), so a tool the kill
 * ended exits by that signal, while one that had exited by itself (not reaped yet when the kill came, which
 * then found no process: Bun says nothing of it) exits with its own code. Under Deno on POSIX with a partial
 * `--allow-run` too, where a tool that exits with a code either had exited first or left on a SIGTERM it
 * caught: the kill is then not known to have ended it, and is not said to have. A signal the kill never sends
 * (only SIGTERM, then SIGKILL) is the tool's own end too, on POSIX (a crash, a SIGABRT it raised).
 *
 * @param exit How the tool exited.
 * @returns `"tool"` when the kill ended it, `"none"` when it had exited first.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ownKillReach } from "./windows.ts";
 *
 * assert.equal(ownKillReach({ code: null, signal: "SIGTERM" }), "tool");
 * assert.equal(ownKillReach({ code: 0, signal: null }), "none");
 * assert.equal(ownKillReach({ code: null, signal: "SIGSEGV" }), "none");
 * ```
 */
export function ownKillReach(exit: { code: number | null; signal: string | null }): "tool" | "none" {
  if (exit.signal === null) return exit.code === null ? "tool" : "none";
  return exit.signal === "SIGTERM" || exit.signal === "SIGKILL" ? "tool" : "none";
}

/** The batch-file plan: cmd.exe with one raw command line, or the reason an argument cannot be passed. */
function planBatch(script: string, args: readonly string[], comSpec: string | undefined): WindowsLaunch {
  // A `%` in the script path would be expanded by cmd.exe before the file is looked up.
  if (script.includes("%")) {
    return {
      ok: false,
      reason: `batch file path ${JSON.stringify(script)} contains "%", which cmd.exe expands`,
    };
  }
  const parts = [`"${script}"`];
  for (let i = 0; i < args.length; i++) {
    const quoted = quoteBatchArgument(args[i]);
    if (!quoted.ok) {
      return {
        ok: false,
        reason: `argument ${i + 1} cannot be passed safely to batch file ${
          basename(script)
        }: ${quoted.reason}`,
      };
    }
    parts.push(quoted.text);
  }
  // /d: no AutoRun commands; /e:ON: extensions, which the `%` no-op needs; /v:OFF: `!` stays text;
  // /s /c "...": cmd.exe drops exactly the outer pair of quotes and runs the rest as one line.
  const line = `/d /e:ON /v:OFF /s /c "${parts.join(" ")}"`;
  if (line.length > MAX_BATCH_COMMAND_LINE) {
    return {
      ok: false,
      reason: `the command line for batch file ${basename(script)} would be ${line.length} characters; ` +
        `cmd.exe cuts lines longer than 8191, so pass less data in arguments (use stdin or a file)`,
    };
  }
  return {
    ok: true,
    command: comSpec && comSpec.trim() !== "" ? comSpec : "cmd.exe",
    args: [line],
    rawArguments: true,
  };
}

/** One argument as cmd.exe text: bare when it is plainly safe, else in quotes with `%` neutralised. */
function quoteBatchArgument(arg: string): { ok: true; text: string } | { ok: false; reason: string } {
  if (typeof arg !== "string") return { ok: false, reason: "it is not a string" };
  const control = CONTROL.exec(arg);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).padStart(4, "0");
    const name = control[0] === "\r"
      ? "CR"
      : control[0] === "\n"
      ? "LF"
      : control[0] === "\0"
      ? "NUL"
      : "control";
    return {
      ok: false,
      reason:
        `it contains a ${name} character (U+${code}); cmd.exe would end or split the command line there`,
    };
  }
  // Every `"` toggles cmd.exe's quote state; no escape keeps it text for cmd.exe and intact for `%~1` and
  // for the C runtime of a program the batch file forwards `%*` to, all at once.
  if (arg.includes('"')) {
    return {
      ok: false,
      reason: 'it contains a double quote ("), which cmd.exe cannot be given as plain text',
    };
  }
  if (arg.length > 0 && UNQUOTED.test(arg)) return { ok: true, text: arg };
  // A `\` before the closing quote would make a forwarding program's C runtime read `\"` as a quote.
  if (arg.endsWith("\\")) {
    return {
      ok: false,
      reason:
        "it needs quotes and ends with a backslash, which a forwarding program would read as an escaped quote",
    };
  }
  // `%%cd:~,%` is `%` followed by an empty substring of %cd%: cmd.exe prints `%` and can no longer pair it
  // with a later `%` into a variable reference (the yt-dlp/Rust technique).
  return { ok: true, text: `"${arg.replaceAll("%", "%%cd:~,%")}"` };
}

/** Resolve `command` to an existing file, or `null`. */
function resolve(
  command: string,
  exts: readonly string[],
  path: string | undefined,
  isFile: (path: string) => boolean,
  cwd: string | undefined,
): string | null {
  const candidates = extension(command) !== "" ? [command] : [];
  for (const ext of exts) candidates.push(command + ext);
  const dirs = hasSeparator(command)
    ? [cwd !== undefined && !isAbsolute(command) ? cwd : ""]
    : pathDirectories(path);
  for (const dir of dirs) {
    for (const name of candidates) {
      const full = normalise(dir === "" ? name : join(dir, name));
      if (isFile(full)) return full;
    }
  }
  return null;
}

/** Value of an environment key, matched case-insensitively (an exact match wins). */
function lookup(env: WindowsEnv, key: string): string | undefined {
  const record = env as Record<string, string | undefined>;
  if (typeof record[key] === "string") return record[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(record)) {
    if (k.toLowerCase() === lower && typeof record[k] === "string") return record[k];
  }
  return undefined;
}

/** PATHEXT entries, each starting with `.`, without duplicates (compared case-insensitively). */
function pathExtensions(value: string | undefined): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of (value && value.trim() !== "" ? value : DEFAULT_PATHEXT).split(";")) {
    const ext = raw.trim();
    if (!/^\.[^.\\/:*?"<>|]+$/.test(ext) || seen.has(ext.toLowerCase())) continue;
    seen.add(ext.toLowerCase());
    out.push(ext);
  }
  return out;
}

/** PATH folders in order, with surrounding quotes removed and empty entries dropped. */
function pathDirectories(value: string | undefined): string[] {
  if (!value) return [];
  return value.split(";").map((d) => d.trim().replace(/^"(.*)"$/, "$1").trim()).filter((d) => d !== "");
}

function hasSeparator(name: string): boolean {
  return /[\\/]/.test(name) || /^[A-Za-z]:/.test(name);
}

function isAbsolute(name: string): boolean {
  return /^([A-Za-z]:|[\\/])/.test(name); // a root, or a drive ("C:x" too: it cannot be joined to cwd)
}

function basename(path: string): string {
  const i = Math.max(path.lastIndexOf("\\"), path.lastIndexOf("/"), path.indexOf(":") === 1 ? 1 : -1);
  return path.slice(i + 1);
}

/** The extension of a file name (`.cmd`), or `""`; a leading dot alone (`.profile`) is not one. */
function extension(name: string): string {
  const base = basename(name);
  const dot = base.lastIndexOf(".");
  return dot > 0 && dot < base.length - 1 ? base.slice(dot) : "";
}

function join(dir: string, name: string): string {
  return /[\\/]$/.test(dir) ? dir + name : `${dir}\\${name}`;
}

/** Backslashes only, `.` segments dropped, `..` applied where it has a parent (never above the root). */
function normalise(path: string): string {
  const p = path.replaceAll("/", "\\");
  const root = /^(\\\\[^\\]+\\[^\\]+\\|[A-Za-z]:\\|\\)/.exec(p)?.[0] ?? "";
  const out: string[] = [];
  for (const seg of p.slice(root.length).split("\\")) {
    if (seg === "" || seg === ".") continue;
    if (seg === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else if (seg === ".." && root !== "") continue;
    else out.push(seg);
  }
  return root + out.join("\\");
}

/*
 * Full Windows exit codes under Bun. Bun 1.4 keeps only the low 8 bits of a child's exit code on Windows
 * (`cmd /c exit 300` reads as 44, an access violation `0xC0000005` as 5: oven-sh/bun#33720), in
 * `Bun.spawn`, `Bun.spawnSync` and `node:child_process` alike. Windows itself keeps the whole DWORD, so the
 * runtime layer opens a query handle on the child right after spawning it and reads the code with
 * `GetExitCodeProcess` through `bun:ffi` once Bun reports the exit. Anywhere else (Deno, Node, POSIX, or
 * when FFI is unavailable) the code Bun reported is kept as it is.
 */

interface Kernel32 {
  OpenProcess(access: number, inherit: number, pid: number): unknown;
  GetExitCodeProcess(handle: unknown, out: Uint32Array): number;
  CloseHandle(handle: unknown): number;
}

const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const STILL_ACTIVE = 259;

let kernel32: Kernel32 | null | undefined;

function load(): Kernel32 | null {
  if (kernel32 !== undefined) return kernel32;
  kernel32 = null;
  try {
    // `import.meta.require` is Bun's synchronous loader; the handle must be opened before the child is reaped.
    const req = (import.meta as unknown as { require?: (id: string) => unknown }).require;
    const ffi = req?.("bun:ffi") as {
      dlopen(
        name: string,
        symbols: Record<string, { args: string[]; returns: string }>,
      ): { symbols: Kernel32 };
    } | undefined;
    if (!ffi) return null;
    kernel32 = ffi.dlopen("kernel32.dll", {
      OpenProcess: { args: ["u32", "i32", "u32"], returns: "ptr" },
      GetExitCodeProcess: { args: ["ptr", "ptr"], returns: "i32" },
      CloseHandle: { args: ["ptr"], returns: "i32" },
    }).symbols;
  } catch {
    // No FFI (sandboxed, or not Bun on Windows): keep what the runtime reports.
  }
  return kernel32;
}

/** What {@linkcode watchWindowsExitCode} reads of a Windows child under Bun. */
export interface WindowsExitWatch {
  /**
   * Call once, after the runtime reported the exit with its (truncated) `low` code: the full code when Windows
   * has one whose low byte matches, else `low` unchanged. Releases the handle.
   */
  full(low: number | null): number | null;
  /**
   * Whether the child has exited already (its code is set), though the runtime may not have reaped it yet:
   * a kill then finds no process (Bun says nothing of that). False where it cannot be told.
   */
  exited(): boolean;
}

/**
 * Start watching the exit code of the Windows process `pid` (call right after spawning it, under Bun).
 *
 * @param pid The child's process id.
 * @returns Its full exit code once reported, and whether it has exited meanwhile.
 */
export function watchWindowsExitCode(pid: number): WindowsExitWatch {
  const k = load();
  let handle: unknown = null;
  try {
    handle = k?.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) ?? null;
  } catch {
    handle = null;
  }
  /** The code Windows holds for the child (STILL_ACTIVE while it runs), or null where it cannot be read. */
  const code = (): number | null => {
    if (!handle || !k) return null;
    try {
      const out = new Uint32Array(1);
      return k.GetExitCodeProcess(handle, out) === 0 ? null : out[0];
    } catch {
      return null;
    }
  };
  return {
    exited: () => {
      const now = code();
      return now !== null && now !== STILL_ACTIVE;
    },
    full: (low) => {
      const now = code();
      const h = handle;
      handle = null;
      try {
        if (h && k) k.CloseHandle(h);
      } catch {
        // nothing more to release
      }
      return low !== null && now !== null && now !== STILL_ACTIVE && (now & 0xff) === (low & 0xff)
        ? now
        : low;
    },
  };
}
