/**
 * Why the code generators fell back, told to whoever watches (the tests). The generated checks (codegen.ts)
 * and string visitors (strings.ts) give way quietly to the interpreter, which says the same words, so a host
 * that blocks `Function` still validates; but so would a slip in a generator (an emitted function that does
 * not compile, a name it leaves undefined at link, an emitter that throws): every test would pass and only
 * speed would drop. The generators tell this module from their catch blocks, and only there: a check that
 * was generated pays nothing, and nothing is kept when no one watches.
 *
 * @module
 */
import { errorText } from "../_common/values.ts";

/**
 * Which generated code gave way: `probe`, the test of whether the host lets code be generated at all (no
 * generated check then); `check`, a schema's yes/no functions and entry point (the interpreter checks every
 * value); `report`, its reporting functions, made when a value first fails (the interpreter reports);
 * `strings`, a schema's string visitor (the scan walks every value).
 */
export type Generated = "probe" | "check" | "report" | "strings";

/** One fallback, as a watcher sees it. */
export interface Fallback {
  /** Which generated code gave way. */
  stage: Generated;
  /** Why: the error thrown, its name and message. */
  reason: string;
  /** The schema document being generated (undefined for the probe). */
  schema: unknown;
}

let watcher: ((fallback: Fallback) => void) | null = null;

/** Tells the watcher, if any, that `stage` of `schema` fell back because of `error`. Call it from a catch. */
export function fellBack(stage: Generated, error: unknown, schema?: unknown): void {
  if (watcher === null) return;
  const name = error instanceof Error ? `${error.name}: ` : "";
  watcher({ stage, reason: `${name}${errorText(error)}`, schema });
}

/**
 * Runs `body` with every fallback of the code generators recorded in the list it is given, and returns what
 * `body` returns. Watches are not nested: the one before is restored after.
 *
 * @example A host that blocks `Function`: the schema is checked by the interpreter, and the probe says why
 * ```ts
 * import assert from "node:assert/strict";
 * import { watchFallbacks } from "./fallbacks.ts";
 * import { compile } from "./compile.ts";
 *
 * const original = globalThis.Function;
 * globalThis.Function = function () {
 *   throw new EvalError("code generation from strings disallowed");
 * } as unknown as FunctionConstructor;
 * try {
 *   watchFallbacks((fallbacks) => {
 *     assert.equal(compile({ type: "string" })(5, "", null), false);
 *     assert.deepEqual(fallbacks.map((f) => [f.stage, f.reason]), [
 *       ["probe", "EvalError: code generation from strings disallowed"],
 *     ]);
 *   });
 * } finally {
 *   globalThis.Function = original;
 * }
 * ```
 */
export function watchFallbacks<T>(body: (fallbacks: readonly Fallback[]) => T): T {
  const before = watcher;
  const fallbacks: Fallback[] = [];
  watcher = (fallback) => fallbacks.push(fallback);
  try {
    return body(fallbacks);
  } finally {
    watcher = before;
  }
}
