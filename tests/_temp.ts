/**
 * A temporary folder for the tests of one file, removed when they end, under Deno and Bun alike.
 *
 * @module
 */
import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

/**
 * Makes a folder in the temporary folder for the tests of one file and removes it when they end, whole run
 * or filtered. Call it at the top of a test file, not in a test. Deno (2.9) runs no `after` hook of a file
 * whose tests `--filter` leaves out in part (each filtered run left a `toolguard-cli-*` folder, a compiled
 * binary among them), so the folder also goes on `unload`, which Deno fires when the file's tests end; Bun
 * runs no `after` hook of a file none of whose tests ran (`-t` matching none there), so also at exit.
 *
 * @example
 * ```ts ignore
 * const dir = fileTempDir("toolguard-cli-");
 * test("writes a file", () => writeFileSync(join(dir, "a.txt"), "x"));
 * ```
 */
export function fileTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  after(remove);
  globalThis.addEventListener?.("unload", remove);
  process.once("exit", remove);
  return dir;
}
