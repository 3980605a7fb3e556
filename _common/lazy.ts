/**
 * Work moved from module load to first use. Importing any part of the library should cost next to nothing:
 * tables, compiled schemas and the runtime's Node built-ins are made when first needed, through these two
 * helpers.
 *
 * @module
 */

/**
 * A function that makes its value on the first call and returns the same value on every later call.
 *
 * @example Made once, on first use
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazy } from "./lazy.ts";
 *
 * let made = 0;
 * const table = lazy(() => {
 *   made++;
 *   return new Map([["a", 1]]);
 * });
 * assert.equal(made, 0);
 * assert.equal(table().get("a"), 1);
 * assert.equal(table(), table());
 * assert.equal(made, 1);
 * ```
 *
 * @param make Makes the value; called at most once (again only if it threw).
 * @returns The memoised getter.
 */
export function lazy<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * A Node built-in module (`node:fs`, `node:crypto`...), loaded when called rather than imported at load:
 * under Deno the first use of any of them loads the whole Node compatibility layer, tens of milliseconds
 * that only the code which needs them should pay. Uses `process.getBuiltinModule` (Deno, Bun, Node 20.16+).
 *
 * @example Only when called
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodeBuiltin } from "./lazy.ts";
 *
 * const path = nodeBuiltin<typeof import("node:path")>("node:path");
 * assert.equal(path.posix.join("a", "b"), "a/b");
 * ```
 *
 * @param id The module's name, with the `node:` prefix.
 * @returns The module.
 * @throws {Error} When this runtime has no `process.getBuiltinModule`, or no such module.
 */
export function nodeBuiltin<T>(id: string): T {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const module = host?.getBuiltinModule?.(id);
  if (module === undefined) {
    throw new Error(
      `this runtime cannot load ${id}: it needs Deno, Bun or Node 20.16+ (process.getBuiltinModule)`,
    );
  }
  return module as T;
}
