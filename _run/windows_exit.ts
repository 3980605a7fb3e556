/**
 * Full Windows exit codes under Bun. Bun 1.4 keeps only the low 8 bits of a child's exit code on Windows
 * (`cmd /c exit 300` reads as 44, an access violation `0xC0000005` as 5: oven-sh/bun#33720), in
 * `Bun.spawn`, `Bun.spawnSync` and `node:child_process` alike. Windows itself keeps the whole DWORD, so the
 * runtime layer opens a query handle on the child right after spawning it and reads the code with
 * `GetExitCodeProcess` through `bun:ffi` once Bun reports the exit. Anywhere else (Deno, Node, POSIX, or
 * when FFI is unavailable) the code Bun reported is kept as it is.
 *
 * @module
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

/**
 * Start watching the exit code of the Windows process `pid` (call right after spawning it, under Bun).
 * Returns a function to call once, after the runtime reported the exit with its (truncated) `low` code:
 * it gives the full code when Windows has one whose low byte matches, else `low` unchanged.
 *
 * @param pid The child's process id.
 * @returns A one-shot reader that also releases the handle.
 */
export function watchWindowsExitCode(pid: number): (low: number | null) => number | null {
  const k = load();
  if (!k) return (low) => low;
  let handle: unknown = null;
  try {
    handle = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
  } catch {
    handle = null;
  }
  if (!handle) return (low) => low;
  return (low) => {
    if (handle === null) return low;
    const h = handle;
    handle = null;
    try {
      const out = new Uint32Array(1);
      if (k.GetExitCodeProcess(h, out) === 0) return low;
      const full = out[0];
      return low !== null && full !== STILL_ACTIVE && (full & 0xff) === (low & 0xff) ? full : low;
    } catch {
      return low;
    } finally {
      try {
        k.CloseHandle(h);
      } catch {
        // nothing more to release
      }
    }
  };
}
