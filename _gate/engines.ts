/**
 * The engines the gate judges with, loaded on first use rather than when `gate.ts` is imported: the
 * validator (and with it the JSON Schema engine), the reader of calls written into text with its 38
 * formats, the verdict's description (with the scanner), and the dialects' reading and rewriting of bodies
 * and routing of stream frames (only their stream-event readers, `dialects/readers.ts`, load with the gate,
 * for the synchronous `assembleToolCalls`). Together they are most of the gate's load cost, and a program
 * that imports the gate but has not yet sent a request should not pay it.
 *
 * Every judgement happens on an async path (`gateCompletion`, a guarded `fetch` once it has the request,
 * a gated stream when it is first read), which awaits {@linkcode loadEngines} before it builds a judge.
 * The synchronous helpers below then call straight through; they throw only when used before that, which
 * is a bug in the gate, not something model output can cause.
 *
 * The imports are `import()` of string literals, so `deno compile` and `bun build --compile` still include
 * the engines. The price is paid under `deno run`: it reads every module a literal `import()` reaches when
 * the program starts (it evaluates none of them until the import runs), unless started with
 * `--unstable-lazy-dynamic-imports`; so under Deno deferring saves the engines' evaluation, not their
 * loading.
 *
 * @module
 */
import { lazy } from "../_common/values.ts";
import type * as Validator from "../_validate/validator.ts";
import type * as Describe from "../_describe/verdict.ts";
import type * as Extract from "../_extract/extract.ts";
import type * as TextWatch from "./text_watch.ts";
import type { StreamDialect } from "./calls.ts";
import type { Dialect } from "./dialects/shared.ts";
import type * as Dialects from "./dialects/mod.ts";

/** The loaded engines. */
interface Engines {
  validator: typeof Validator;
  describe: typeof Describe;
  extract: typeof Extract;
  textWatch: typeof TextWatch;
  dialects: typeof Dialects;
}

let loaded: Engines | undefined;

const load = lazy(async (): Promise<Engines> => {
  const [validator, describe, extract, textWatch, dialects] = await Promise.all([
    import("../_validate/validator.ts"),
    import("../_describe/verdict.ts"),
    import("../_extract/extract.ts"),
    import("./text_watch.ts"),
    import("./dialects/mod.ts"),
  ]);
  loaded = { validator, describe, extract, textWatch, dialects };
  return loaded;
});

/**
 * Loads the engines (once; later calls return the same promise). Await it on the async path before
 * anything below is called.
 */
export function loadEngines(): Promise<unknown> {
  return load();
}

/** The engines, which must have been loaded. */
export function engines(): Engines {
  if (loaded === undefined) {
    throw new Error("toolguard: the gate's engines were used before loadEngines() (a bug in toolguard)");
  }
  return loaded;
}

/** `createValidator`, once loaded. */
export const createValidator: typeof Validator.createValidator = (tools, options) =>
  engines().validator.createValidator(tools, options);

/** `validateToolCalls`, once loaded. */
export const validateToolCalls: typeof Validator.validateToolCalls = (calls, options) =>
  engines().validator.validateToolCalls(calls, options);

/** `describeVerdict`, once loaded. */
export const describeVerdict: typeof Describe.describeVerdict = (verdict, options) =>
  engines().describe.describeVerdict(verdict, options);

/** `extractToolCalls`, once loaded. */
export const extractToolCalls: typeof Extract.extractToolCalls = (text, options) =>
  engines().extract.extractToolCalls(text, options);

/** `cutCalls` (every call written into a text removed), once loaded. */
export const cutCalls: typeof TextWatch.cutCalls = (text, calls, options) =>
  engines().textWatch.cutCalls(text, calls, options);
/** `cutJoined` (the calls read from texts joined, cut from each text), once loaded. */
export const cutJoined: typeof TextWatch.cutJoined = (texts, calls, options) =>
  engines().textWatch.cutJoined(texts, calls, options);
/** `textCalls` (calls written into one answer's text, as a stream judges them), once loaded. */
export const textCalls: typeof TextWatch.textCalls = (extracted, dialect, answer) =>
  engines().textWatch.textCalls(extracted, dialect, answer);
/** `blocksPart` (whether some calls written into a text can be cut and the others kept), once loaded. */
export const blocksPart: typeof TextWatch.blocksPart = (calls, gone) =>
  engines().textWatch.blocksPart(calls, gone);

/** A dialect in its three roles (`DIALECTS` of `dialects/mod.ts`), once loaded. */
export const dialect = (name: StreamDialect): Dialect => engines().dialects.DIALECTS[name];

/** The names of the dialects (`DIALECTS` of `dialects/mod.ts`), once loaded. */
export const dialectNames = (): string[] => Object.keys(engines().dialects.DIALECTS);
