/**
 * Where the tests find the public yardsticks in `../shared/data/` (beside the repository), and how they
 * skip when it is absent: a clone outside this workplace, or a GitHub Actions runner, has no such folder.
 * The data is never copied into the repository.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** A folder or file of the shared data, and the `skip` option for the tests that read it. */
export interface SharedData {
  /** Absolute path. */
  path: string;
  /** False when the data is there; otherwise the reason the tests skip, naming what is missing. */
  skip: false | string;
}

const DATA_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "shared", "data");

/**
 * Locates `relative` under `../shared/data/`; `what` names the yardstick in the skip message.
 *
 * @example A missing folder gives a skip reason
 * ```ts
 * import assert from "node:assert/strict";
 * import { sharedData } from "./_shared_data.ts";
 *
 * const data = sharedData("no-such-folder", "an example yardstick");
 * assert.match(String(data.skip), /no-such-folder is absent/);
 * ```
 */
export function sharedData(relative: string, what: string): SharedData {
  const path = join(DATA_ROOT, relative);
  const skip = existsSync(path) ? false : `${what} did not run: ../shared/data/${relative} is absent`;
  if (skip) console.log(`skip: ${skip}`);
  return { path, skip };
}
