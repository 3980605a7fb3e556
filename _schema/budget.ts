/**
 * The work a check may do on one value. A schema can share subschemas through `$ref`, so a small hostile one
 * (each definition an `anyOf` of two references to the next) makes a check take 2^depth steps. Every `$ref`
 * step taken spends one unit; a check that runs out throws {@link CheckTooCostly}, which callers turn into
 * a finding. A schema without `$ref` does work bounded by its size times the value's, and spends nothing.
 *
 * @module
 */

/** The `$ref` steps one check may take: far beyond what a real schema needs on 1 MB of arguments. */
export const REF_STEPS = 1_000_000;

/** The steps the running check has left; each check's entry point sets it to {@link REF_STEPS}. */
export const budget: { left: number } = { left: REF_STEPS };

/** Thrown by a check that has spent its {@link budget}. */
export class CheckTooCostly extends Error {
  /** Creates the error. */
  constructor() {
    super(
      `the tool's schema is too costly to check these arguments (more than ${REF_STEPS} $ref steps); ` +
        "send simpler arguments, or ask the tool's author to simplify its schema",
    );
    this.name = "CheckTooCostly";
  }
}

/**
 * The one instance thrown (no stack trace to build each time), made at the first throw: an error made while
 * the module loads has Deno re-parse the module for the stack's source positions.
 */
let tooCostly: CheckTooCostly | undefined;

/** Spends one `$ref` step; throws the one {@link CheckTooCostly} when none is left. */
export function overBudget(): never {
  throw tooCostly ??= new CheckTooCostly();
}
