/**
 * What a step of `deno task check` (scripts/check.ts) leaves behind: processes still running with the step's
 * own temporary folder in their environment, files and folders in that folder, files in the working tree
 * that git does not ignore. A module of its own, with Node's API, so that tests under Deno and Bun can import
 * it: check.ts runs its steps when imported.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import process from "node:process";

/** How long a step's last processes get to end after it: a child killed just before the step ended may still be exiting. */
export const GRACE_MS = 3000;

/**
 * Whether a leftover fails its step. On Windows they are only listed: the check has not run on a Windows
 * runner yet (`check:windows` runs the suites itself), and there a file a just-ended process held may not be
 * removable at once, and Windows' own programs may write to TEMP, so a leftover is not proof that the step
 * left it.
 */
export const LEFTOVERS_FAIL: boolean = process.platform !== "win32";

/**
 * The processes still running with `temp` as TMPDIR in their environment, or a folder inside it (a test's own
 * TMPDIR), as "pid command" lines: what a step started and left running. Linux only (/proc); elsewhere none,
 * and only the folder is checked.
 *
 * @example None for a folder no process was given
 * ```ts
 * import assert from "node:assert/strict";
 * import { processesWith } from "./_check_leftovers.ts";
 *
 * assert.deepEqual(processesWith("/no/such/toolguard-check-folder"), []);
 * ```
 *
 * @param temp The step's temporary folder, as it was given in TMPDIR.
 * @returns One "pid command" line per process, the command cut to 200 characters.
 */
export function processesWith(temp: string): string[] {
  if (process.platform !== "linux") return [];
  const markers = [`\0TMPDIR=${temp}\0`, `\0TMPDIR=${temp}/`];
  const found: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = `\0${readFileSync(`/proc/${name}/environ`, "utf8")}`;
      if (!markers.some((marker) => environ.includes(marker))) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      found.push(`${name} ${command.slice(0, 200)}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/**
 * What a step left behind in its temporary folder `temp`: the processes still running after `graceMs`
 * (default {@linkcode GRACE_MS}; ended now, with SIGKILL, so they do not outlive the check), then the files
 * and folders in it. Removes the folder.
 *
 * @example A file left in the folder
 * ```ts
 * import assert from "node:assert/strict";
 * import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { leftBehind } from "./_check_leftovers.ts";
 *
 * const temp = mkdtempSync(join(tmpdir(), "toolguard-check-example-"));
 * writeFileSync(join(temp, "out.txt"), "x");
 * assert.deepEqual(await leftBehind(temp), ["file out.txt"]);
 * assert.equal(existsSync(temp), false);
 * ```
 *
 * @param temp The step's temporary folder.
 * @param graceMs How long its processes get to end (a test's process that never ends need not wait 3 s).
 * @returns "process PID COMMAND", "file NAME" and "folder NAME" lines, and a line for a folder that could not
 *   be removed; empty when the step left nothing.
 */
export async function leftBehind(temp: string, graceMs: number = GRACE_MS): Promise<string[]> {
  let running = processesWith(temp);
  for (const until = performance.now() + graceMs; running.length > 0 && performance.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = processesWith(temp);
  }
  for (const line of running) {
    try {
      process.kill(Number(line.split(" ")[0]), "SIGKILL");
    } catch {
      // ended meanwhile
    }
  }
  const left = [
    ...running.map((line) => `process ${line}`),
    ...readdirSync(temp, { withFileTypes: true }).map((entry) =>
      `${entry.isDirectory() ? "folder" : "file"} ${entry.name}`
    ),
  ];
  // Windows refuses to remove a file a process held until that process is fully gone: a few more tries.
  for (let tries = 1;; tries++) {
    try {
      rmSync(temp, { recursive: true });
      break;
    } catch (error) {
      if (tries < 10) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        continue;
      }
      left.push(`(could not remove ${temp}: ${error instanceof Error ? error.message : error})`);
      break;
    }
  }
  return left;
}

/**
 * The files git sees as untracked and not ignored in the working tree at `root` (none outside a git checkout,
 * or without git).
 *
 * @example None outside a checkout
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { untrackedFiles } from "./_check_leftovers.ts";
 *
 * const dir = mkdtempSync(join(tmpdir(), "toolguard-check-example-"));
 * try {
 *   assert.equal(untrackedFiles(dir).size, 0);
 * } finally {
 *   rmSync(dir, { recursive: true });
 * }
 * ```
 *
 * @param root A folder of the working tree (its top, for paths relative to it).
 * @returns The paths as `git status --porcelain` prints them: relative to the top, `/` between folders.
 */
export function untrackedFiles(root: string): Set<string> {
  const { status, stdout } = spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: root,
    stdio: ["ignore", "pipe", "ignore"],
    encoding: "utf8",
  });
  if (status !== 0) return new Set(); // not a checkout, or no git
  const lines = stdout.split("\n");
  return new Set(lines.filter((line) => line.startsWith("?? ")).map((line) => line.slice(3)));
}
