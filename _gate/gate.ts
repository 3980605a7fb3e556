/**
 * The response gate: judges the tool calls in provider response bodies.
 *
 * @module
 */
import { givenValue, isRecord, orList, plural } from "../_common/values.ts";
import { copyAsSent, type Snapshot, SnapshotCache, takeSnapshot, textAsSent } from "../_common/json.ts";
import { listGraphProblem } from "../_common/measure.ts";

import type { Classifier, Verdict } from "../types.ts";
import type { ValidateOptions, Validator } from "../_validate/validator.ts";
import type { ExtractedToolCall } from "../_extract/extract.ts";
import {
  blocksPart,
  createValidator,
  cutCalls,
  cutJoined,
  describeVerdict,
  dialect as dialectOf,
  dialectNames,
  extractToolCalls,
  loadEngines,
  textCalls,
  validateToolCalls,
} from "./engines.ts";
import { callForValidation } from "./assemble.ts";
import type { StreamDialect } from "./calls.ts";
import type { AnswerReason } from "./dialects/shared.ts";

/** The response shapes the gate reads. */
export type CompletionDialect = StreamDialect;

/** Options for `gateCompletion` (completion.ts); also accepted by `guardFetch`. */
export interface GateOptions extends ValidateOptions {
  /**
   * The declared tools, in any provider shape. Default: the `tools` of the request. Absent from both: the
   * allowlist is off (the schema and injection checks still run on what can be checked).
   */
  tools?: readonly unknown[];
  /** A validator compiled once with `createValidator`; used instead of compiling the request's tools. */
  validator?: Validator;
  /** An optional second opinion on calls the signature pass cleared (e.g. a local model). */
  classifier?: Classifier;
  /** Read the body as this shape instead of detecting it. */
  dialect?: CompletionDialect;
  /**
   * Judge calls written into the message text when there are no native calls (in a body of several answers,
   * OpenAI Chat `n` or Gemini `candidateCount`: in each answer without native calls). Default true.
   */
  extract?: boolean;
  /**
   * The text that replaces rejected calls. Default: `describeVerdict` of the verdict, with the tools (with
   * several answers, OpenAI Chat `n` or Gemini `candidateCount`, each answer's of its own calls). Asked once,
   * of the whole turn's verdict: with several answers, each answer that lost a call reads that text.
   */
  message?: (verdict: Verdict, tools: readonly unknown[] | undefined) => string;
  /**
   * What a rejected call does to the other calls of its turn.
   *
   * - `"withhold-turn"` (the default): every call of the turn is withheld and the turn ends with the
   *   reason. A turn's calls are planned together (write a file, then run it; look up an id, then use
   *   it), so running the valid half of a plan whose other half was refused can leave work half done;
   *   the model sees the reason and plans the whole turn again.
   * - `"drop-call"`: only the rejected calls are removed; the valid ones still reach the client, which
   *   runs them, with the reason for the removed ones in the turn's text. For turns of independent calls
   *   (several look-ups at once). Bodies and streams of every dialect. Calls written into the text are
   *   cut out one by one where each sits in markup of its own (`<tool_call>` tags, a fence: those kept
   *   stay text, so a stop for tool use becomes a normal stop, as a withheld turn's does); calls
   *   written into one block together (a JSON array of calls) cannot be parted without rewriting what the
   *   model wrote, so that turn is withheld whole (and, like any drop-call turn, not retried). So is a
   *   response of several answers (OpenAI Chat `n`, Gemini `candidateCount`) in which one used call fields
   *   and another wrote its calls into text, and a stream that gave a rejected call and an accepted one the
   *   same place (an OpenAI Chat `index` reused under a new id: a client reads one call there).
   */
  onRejected?: "withhold-turn" | "drop-call";
}

/** What `gateCompletion` (completion.ts) returns. */
export interface GateResult {
  /** The judgement of every call in the response (empty and allowed when there were none). */
  verdict: Verdict;
  /** The body to forward: the input itself when nothing was rejected, else a rewritten copy without calls. */
  response: unknown;
  /** True when `response` is a rewritten copy. */
  changed: boolean;
  /** The shape the body was read as; undefined when it matched none (the body is then returned as is). */
  dialect?: CompletionDialect;
  /** Where the calls came from: the provider's call fields, the message text, or nowhere. */
  source: "native" | "text" | "none";
  /**
   * The calls recovered from the text, when `source` is `"text"`; also when `source` is `"native"` and
   * another answer of the same body (OpenAI Chat `n`, Gemini `candidateCount`) wrote its calls into its
   * text (the verdict then lists the native calls first, then these).
   */
  extracted?: ExtractedToolCall[];
  /**
   * The text that replaced the calls, when `changed`: the whole turn's (with several answers, OpenAI Chat `n`
   * or Gemini `candidateCount`, each answer read the reason for its own calls in the response).
   */
  reason?: string;
}

/** The verdict on a response that carried no call. */
export const ALLOWED_NONE: Verdict = Object.freeze({
  allowed: true,
  blocked: false,
  rejectedIndices: [],
  calls: [],
}) as Verdict;

// ---------------------------------------------------------------------------------------------------------
// Reading requests and responses
// ---------------------------------------------------------------------------------------------------------

/** Which shape a response body has, or undefined. */
export function detectDialect(body: unknown): CompletionDialect | undefined {
  if (!isRecord(body)) return undefined;
  if (body.object === "chat.completion" || Array.isArray(body.choices)) return "openai_chat";
  if (body.object === "response" || Array.isArray(body.output)) return "openai_responses";
  if (body.type === "message" && Array.isArray(body.content)) return "anthropic";
  if (Array.isArray(body.candidates)) return "gemini";
  if (isRecord(body.message) && typeof body.finish_reason === "string" && !("done" in body)) return "cohere";
  if (isRecord(body.message) && ("done" in body || "model" in body)) return "ollama";
  if (Array.isArray(body.content) && body.role === "assistant") return "anthropic";
  return undefined;
}

/**
 * The tools a request declares that the caller runs, as the validator reads them. Built-in tools that the
 * provider runs itself (web search, code interpreter, Anthropic server tools) are left out: the model's
 * calls to them never reach the caller.
 */
function declaredTools(request: unknown, dialect: CompletionDialect): unknown[] | undefined {
  if (!isRecord(request)) return undefined;
  const tools = Array.isArray(request.tools) ? request.tools : undefined;
  const functions = Array.isArray(request.functions) ? request.functions : undefined;
  if (!tools && !functions) return undefined;
  const { body } = dialectOf(dialect);
  const out: unknown[] = [];
  for (const t of tools ?? []) {
    if (isRecord(t)) out.push(...body.declared(t));
  }
  // The legacy `functions` list of OpenAI Chat.
  for (const f of functions ?? []) if (isRecord(f)) out.push({ type: "function", function: f });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------------------

/** Every option of the validator: the gate hands each one through, so none is silently ignored. */
const VALIDATE_KEYS = [
  "repair",
  "coerce",
  "scan",
  "maxDepth",
  "maxLength",
  "assertFormats",
  "codegen",
  "defaultsSatisfyRequired",
] as const satisfies readonly (keyof ValidateOptions)[];
/** Compiles only when `T` is `never`. */
type AssertNever<T extends never> = T;
/** Fails to compile, naming the option, when `ValidateOptions` gains one that `VALIDATE_KEYS` lacks. */
type _EveryValidateKey = AssertNever<Exclude<keyof ValidateOptions, (typeof VALIDATE_KEYS)[number]>>;

/** The validator's options out of the gate's (the ones set). */
function validateOptions(options: ValidateOptions): ValidateOptions {
  const out: Record<string, unknown> = {};
  for (const key of VALIDATE_KEYS) if (options[key] !== undefined) out[key] = options[key];
  return out as ValidateOptions;
}

const validatorCache = new Map<string, Validator>();

/**
 * Compiles (once per distinct tool list and options) the validator for a set of declarations, `read` from a
 * request body's text or handed over in code.
 */
function compiled(tools: readonly unknown[], opts: ValidateOptions, read: ToolsRead): Validator {
  // Tools built in code that loop or share their objects past measure: createValidator's error names the
  // tool (written out as the key first, they would never end). Tools parsed from text never do. Each tool
  // on its own: many within measure hold more in all, and are compiled once.
  if (read === "code" && listGraphProblem(tools)) return createValidator(tools, opts);
  // Keyed on exactly the options the validator receives, so a new option cannot be left out of the key.
  // (Tools read from text hold no array with holes; built in code, one 2^32-1 long costs what it holds.)
  let key: string;
  try {
    key = read === "code" ? textAsSent([tools, opts]) : JSON.stringify([tools, opts]);
  } catch {
    // a BigInt, which JSON cannot write: not cached (no text to key it), and refused by createValidator in a
    // schema ("write the number 5 instead"), not thrown as JSON's "Do not know how to serialize a BigInt"
    return createValidator(tools, opts);
  }
  const known = validatorCache.get(key);
  if (known !== undefined) return known;
  // Built in code: compiled from one copy and kept under its text, not the key above (a getter that answered
  // anew in between left a validator under the text of another answer, for other tools to be given).
  const sent = read === "code" ? copyAsSent(tools) : tools;
  let sentKey: string;
  try {
    sentKey = read === "code" ? textAsSent([sent, opts]) : key;
  } catch {
    return createValidator(sent, opts); // (a BigInt the copy holds where the tools did not: a getter)
  }
  const v = validatorCache.get(sentKey) ?? createValidator(sent, opts);
  if (validatorCache.size >= 32) validatorCache.delete(validatorCache.keys().next().value as string);
  validatorCache.set(sentKey, v);
  return v;
}

/** What a judge holds of its tools: the declarations read from the request, and their validator. */
interface JudgeTools {
  tools: readonly unknown[] | undefined;
  sync: Validator | undefined;
}

/**
 * {@link JudgeTools} by the identity of the caller's tools array (the `tools` option, or a request built in
 * code), used while nothing in the arrays changed: a gate called in a loop with one request object reads
 * its tools once per call (no JSON written, no graph check), and an edit in place is read on the next call.
 */
const byIdentity = new SnapshotCache<JudgeTools>();

/** The tools of a request and their validator (none with a classifier or a validator of the caller's). */
function judgeTools(
  request: unknown,
  dialect: CompletionDialect,
  options: GateOptions,
  read: RequestRead,
): JudgeTools {
  const opts = validateOptions(options);
  const own = options.validator !== undefined || options.classifier !== undefined;
  const build = (): JudgeTools => {
    const tools = options.tools ?? declaredTools(request, dialect);
    // (the option's tools are the caller's objects, whatever the request came from)
    const toolsRead = options.tools === undefined ? read : "code";
    return { tools, sync: tools !== undefined && !own ? compiled(tools, opts, toolsRead) : undefined };
  };
  // the caller's arrays: the option's, or those of a request built in code (a parsed body is new each time)
  const roots = options.tools !== undefined
    ? [options.tools]
    : read === "code" && isRecord(request)
    ? [request.tools, request.functions]
    : undefined;
  const anchor = roots?.find(Array.isArray);
  if (own || roots === undefined || anchor === undefined) return build();
  const key = (options.tools === undefined ? dialect : "") + "\n" + JSON.stringify(opts);
  const known = byIdentity.get(anchor, key, roots);
  if (known !== undefined) return known;
  // read before compiling: a getter that answers anew in between reads as changed on the next call (tools
  // that loop or share past measure are not read: their compile says so)
  let snap: Snapshot | undefined;
  try {
    snap = roots.some((r) => listGraphProblem(r)) ? undefined : takeSnapshot(roots);
  } catch {
    snap = undefined; // a getter that throws: the compile says so
  }
  const made = build();
  if (snap !== undefined) byIdentity.set(anchor, key, roots, made, snap);
  return made;
}

/** How a judge's reason is worded (see {@linkcode Judge.reason}). */
export interface ReasonOptions {
  /** The other calls of the turn were kept (drop-call): the reason speaks of the rejected ones alone. */
  partial?: boolean;
  /**
   * Calls of the turn were dropped as malformed, and the model read so just ahead of this reason (a stream's
   * router told it): the lead speaks of the turn's other calls, or the remaining ones, those judged, which
   * the counts that follow count; without it, "this turn's tool call" read as the call dropped too.
   */
  dropped?: boolean;
}

/** How the reason each answer reads is worded (see {@linkcode Judge.answerReason}). */
export interface AnswerReasonOptions {
  /** As {@linkcode ReasonOptions.partial}. */
  partial?: boolean;
  /**
   * The answers that read of calls dropped as malformed just ahead of their reason (see
   * {@linkcode ReasonOptions.dropped}); any other answer's reason reads as with nothing dropped.
   */
  dropped?: ReadonlySet<number>;
}

/** A judge bound to one request: its tools compiled up front, so a bad schema fails before any traffic. */
export interface Judge {
  /** The tools the calls are judged against. */
  tools: readonly unknown[] | undefined;
  /** Judges calls in any provider shape. */
  judge(calls: readonly unknown[]): Promise<Verdict>;
  /** The text that replaces rejected calls; with `partial`, the other calls of the turn were kept. */
  reason(verdict: Verdict, options?: ReasonOptions): string;
  /**
   * The text each answer reads in place of the calls it lost, of the calls whose answers are `answers` (one
   * per call of the verdict, in order): each speaks of its own calls, counted within it. `whole` is the
   * turn's `reason` (with the same `options`), which every answer reads where the turn has one answer, or
   * with the `message` option (asked once a turn: the answers read the text the result reports).
   */
  answerReason(
    verdict: Verdict,
    answers: readonly number[],
    whole: string,
    options?: AnswerReasonOptions,
  ): AnswerReason;
}

/** Where a request came from: parsed from a body's text (a tree), or an object built in code. */
export type RequestRead = "text" | "code";
/** Where the tools a judge compiles came from, as {@link RequestRead}. */
type ToolsRead = RequestRead;

/**
 * Builds the judge for one request (compiling its tools now), `read` from a body's text or handed over in code
 * (default). The engines must be loaded (`loadEngines`).
 */
export function makeJudge(
  request: unknown,
  dialect: CompletionDialect,
  options: GateOptions,
  read: RequestRead = "code",
): Judge {
  const held = judgeTools(request, dialect, options, read);
  const tools = held.tools;
  const sync = options.validator ?? held.sync;
  const reason = (verdict: Verdict, { partial = false, dropped = false }: ReasonOptions = {}): string => {
    if (options.message) {
      try {
        return String(options.message(verdict, tools));
      } catch {
        // fall through to the default sentence
      }
    }
    const kept = verdict.calls.length - verdict.rejectedIndices.length;
    // (what the description that follows does not say: it counts the rejected calls and says they did not
    // run, so the lead counts none of them again; a withheld turn's accepted calls did not run either)
    // (with calls `dropped` as malformed, told just ahead: the turn's other calls, the remaining ones)
    const other = dropped ? "other " : "";
    const lead = partial && kept === 0 // (an answer that lost every call, where another answer's stay)
      ? `toolguard removed the rejected tool ${plural(verdict.rejectedIndices.length, "call")} below.\n`
      : partial
      ? `toolguard removed the rejected tool ${plural(verdict.rejectedIndices.length, "call")} below; the ` +
        `${dropped ? "remaining" : "other"} ${
          kept === 1 ? "call of this turn was" : "calls of this turn were"
        } ` +
        "kept.\n"
      : kept === 0
      ? `toolguard stopped this turn's ${other}tool ${plural(verdict.calls.length, "call")}.\n`
      : `toolguard stopped this turn's ${other}tool calls; the accepted ${
        kept === 1 ? "one" : `${kept}`
      } did not run either.\n`;
    return lead + describeVerdict(verdict, { tools });
  };
  const answerReason = (
    verdict: Verdict,
    answers: readonly number[],
    whole: string,
    turn?: AnswerReasonOptions,
  ): AnswerReason => {
    // (the caller's own `message` is asked of the turn, as it always was: it words what it is given)
    if (options.message || new Set(answers).size < 2) return () => whole;
    // Each answer's calls, found in one pass: a body may hold 10 000s of choices, each asked for its reason.
    const own = new Map<number, Verdict["calls"][number][]>();
    verdict.calls.forEach((call, i) => {
      if (answers[i] === undefined) return;
      const calls = own.get(answers[i]);
      if (calls) calls.push(call);
      else own.set(answers[i], [call]);
    });
    const told = new Map<number, string>();
    return (answer) => {
      let text = told.get(answer);
      if (text === undefined) {
        // (every router and rewrite asks only of an answer that owns a call here: the choice or candidate of
        // a call it replaces or drops, or whose text lost one; one that did not would read the turn's text)
        const calls = own.get(answer);
        const options = { partial: turn?.partial, dropped: turn?.dropped?.has(answer) };
        text = calls === undefined ? whole : ownReason(calls, options, reason);
        told.set(answer, text);
      }
      return text;
    };
  };
  return {
    tools,
    reason,
    answerReason,
    judge(calls: readonly unknown[]): Promise<Verdict> {
      if (calls.length === 0) return Promise.resolve(ALLOWED_NONE);
      if (sync) return Promise.resolve(sync.validate(calls));
      return validateToolCalls(calls, { ...validateOptions(options), tools, classifier: options.classifier });
    },
  };
}

/**
 * The reason one answer of several reads: `reason` of that answer's `calls` (one or more) alone (a verdict
 * of them, counted within it); an answer none of whose calls was rejected, withheld with the turn, is told
 * why its calls did not run.
 */
function ownReason(
  calls: Verdict["calls"],
  options: ReasonOptions | undefined,
  reason: (verdict: Verdict, options?: ReasonOptions) => string,
): string {
  const rejectedIndices = calls.flatMap((c, i) => c.allowed ? [] : [i]);
  if (rejectedIndices.length === 0) {
    const other = "a tool call in another answer of this turn was rejected";
    const one = calls.length === 1;
    return `toolguard stopped this answer's tool ${plural(calls.length, "call")}: ${
      one ? "it was" : "they were"
    } accepted, but ${other}, so ${one ? "it did not run" : "none of them ran"}.`;
  }
  return reason({ allowed: false, blocked: true, rejectedIndices, calls }, options);
}

// ---------------------------------------------------------------------------------------------------------
// gateCompletion
// ---------------------------------------------------------------------------------------------------------

/**
 * The body of `gateCompletion` (`completion.ts`), which loads this module on its first call: see
 * there.
 */
export async function judgeCompletion(
  request: unknown,
  response: unknown,
  options: GateOptions = {},
): Promise<GateResult> {
  if (options.dialect !== undefined) await knownDialect(options.dialect);
  const dialect = options.dialect ?? detectDialect(response);
  if (!dialect || !isRecord(response)) {
    return { verdict: ALLOWED_NONE, response, changed: false, source: "none" };
  }
  await loadEngines();
  const judge = makeJudge(request, dialect, options);
  return await gateWith(judge, response, dialect, options);
}

/**
 * Throws when `name` (`options.dialect`, typed by the caller's program or read from its configuration) is
 * no dialect the gate reads: a body read as an unknown shape would have no calls found in it, and pass.
 */
async function knownDialect(name: unknown): Promise<void> {
  await loadEngines();
  const names = dialectNames();
  if (typeof name === "string" && names.includes(name)) return;
  throw new TypeError(
    `gateCompletion(): options.dialect must be ${orList(names.map((n) => `"${n}"`))}, or left out ` +
      `to read it from the response; got ${givenValue(name)}`,
  );
}

/** True when only the rejected calls are to be removed: `onRejected: "drop-call"` and some call passed. */
export function dropsCalls(verdict: Verdict, options: GateOptions): boolean {
  return options.onRejected === "drop-call" && verdict.rejectedIndices.length < verdict.calls.length;
}

/** Judges the calls of a body of a known dialect: the native ones, else those written into its text. */
export async function gateWith(
  judge: Judge,
  body: Record<string, unknown>,
  dialect: CompletionDialect,
  options: GateOptions,
): Promise<GateResult> {
  const shape = dialectOf(dialect).body;
  let native: unknown[] = [];
  let places: { calls: number[]; texts: number[] } | undefined;
  try {
    native = shape.calls(body);
    places = shape.answers?.(body);
  } catch {
    native = [];
  }
  const extracted: ExtractedToolCall[] = [];
  let answers: string[][] = [];
  if (options.extract !== false) {
    try {
      answers = shape.looseTexts ? shape.looseTexts(body) : native.length > 0 ? [] : [shape.texts(body)];
    } catch {
      // A body that is not of this dialect after all (a wrong `options.dialect`): no text to read.
    }
  }
  // Each answer is read as the stream's watch reads its text: its blocks or parts joined, so a call written
  // across two is judged (and cut from both).
  const perAnswer = answers.map((texts) => extractToolCalls(texts.join(""), { tools: judge.tools }));
  for (const calls of perAnswer) extracted.push(...calls);
  if (native.length > 0 && extracted.length === 0) {
    const verdict = await judge.judge(native);
    if (verdict.allowed) return { verdict, response: body, changed: false, dialect, source: "native" };
    const answers = places?.calls ?? [];
    if (dropsCalls(verdict, options)) {
      const reason = judge.reason(verdict, { partial: true });
      const told = judge.answerReason(verdict, answers, reason, { partial: true });
      const response = shape.dropCalls(body, new Set(verdict.rejectedIndices), told);
      return { verdict, response, changed: true, dialect, source: "native", reason };
    }
    const reason = judge.reason(verdict);
    const response = shape.rewrite(body, judge.answerReason(verdict, answers, reason), { fromText: false });
    return { verdict, response, changed: true, dialect, source: "native", reason };
  }
  if (extracted.length === 0) {
    return { verdict: ALLOWED_NONE, response: body, changed: false, dialect, source: "none" };
  }
  // Judged as a stream judges them (argument text, each answer's ids): one answer, one verdict.
  const written = perAnswer.flatMap((calls, a) => textCalls(calls, dialect, a).map(callForValidation));
  // One answer of several used call fields and another wrote its calls into text: judged together, native
  // first, as one turn (withheld whole when any is rejected: the two kinds cannot be dropped one by one).
  const source = native.length > 0 ? "native" : "text";
  const verdict = await judge.judge([...native, ...written]);
  if (verdict.allowed) return { verdict, response: body, changed: false, dialect, source, extracted };
  const partial = source === "text" && dropsCalls(verdict, options)
    ? partialCut(answers, perAnswer, verdict, judge.tools)
    : undefined;
  const reason = judge.reason(verdict, partial ? { partial: true } : undefined);
  const owners = [
    ...(places?.calls ?? []),
    ...perAnswer.flatMap((calls, a) => calls.map(() => places?.texts[a] ?? 0)),
  ];
  const told = judge.answerReason(verdict, owners, reason, partial ? { partial: true } : undefined);
  const cut = partial ?? withheldCut(answers, perAnswer, judge.tools);
  // (a kept call's text too: a stream holds the text from the first call on, kept or not)
  const all = partial && withheldCut(answers, perAnswer, judge.tools);
  const held = all && ((text: string) => all(text) !== text);
  const response = shape.rewrite(body, told, { fromText: true, cut, ...(held ? { held } : {}) });
  return { verdict, response, changed: true, dialect, source, extracted, reason };
}

/**
 * Whether an answer's texts, as the client gets them after a cut, read (with the declared tools, as the
 * judge reads) as more than the `kept` calls: a cut joins the text on either side of the call it removes,
 * and `{"na` before a rejected call and `me": ...` after it make a call the judge never read. The stream's
 * watch asks the same of its held text.
 */
function joinsCalls(texts: readonly string[], kept: number, tools: readonly unknown[] | undefined): boolean {
  return extractToolCalls(texts.join(""), { tools }).length > kept;
}

/**
 * For a turn withheld whole: a cut that removes the calls the judge read from each answer's texts. Read
 * with the declared tools: read without, JSON in prose naming no declared tool (`{"name": "Ada",
 * "arguments": ...}`) was cut as a call, where the turn, allowed, keeps it. An answer whose text, cut, joins
 * into a call (`joinsCalls`) loses its text. The text beside native calls is not read, and the dialects do
 * not hand it here: it goes as it came, as in a stream and in a body of one answer. A text handed out of the
 * order `looseTexts` lists them (none should be) loses the calls read in it alone, or, where that cut joins
 * one, its text.
 */
function withheldCut(
  answers: readonly string[][],
  perAnswer: readonly ExtractedToolCall[][],
  tools: readonly unknown[] | undefined,
): (text: string) => string {
  const cut = answers.map((texts, a) => {
    const out = cutJoined(texts, perAnswer[a]);
    return joinsCalls(out, 0, tools) ? texts.map(() => "") : out;
  });
  return inOrder(answers.flat(), cut.flat(), (text) => {
    const out = cutCalls(text, extractToolCalls(text, { tools }));
    return joinsCalls([out], 0, tools) ? "" : out;
  });
}

/**
 * For drop-call on calls written into text: a cut that removes only the rejected calls from each answer's
 * texts. Undefined, so the turn is withheld whole, when a rejected call shares its markup with a kept one (a
 * JSON array of calls, one fence holding two: that cannot be parted without rewriting what the model wrote),
 * or when an answer's text, cut, reads as more calls than it keeps (`joinsCalls`).
 */
function partialCut(
  answers: readonly string[][],
  perAnswer: readonly ExtractedToolCall[][],
  verdict: Verdict,
  tools: readonly unknown[] | undefined,
): ((text: string) => string) | undefined {
  const rejected = new Set(verdict.rejectedIndices);
  const cut: string[][] = [];
  let position = 0;
  for (const [a, calls] of perAnswer.entries()) {
    const from = position;
    const gone = (i: number) => rejected.has(from + i);
    if (!blocksPart(calls, gone)) return undefined;
    const dropped = calls.filter((_, i) => gone(i));
    // (tidied from the first call on, a kept one too, as a stream holds the text from there)
    const out = cutJoined(answers[a], dropped, { from: calls[0]?.block.start });
    if (joinsCalls(out, calls.length - dropped.length, tools)) return undefined;
    cut.push(out);
    position += calls.length;
  }
  return inOrder(answers.flat(), cut.flat(), (text) => text);
}

/**
 * A cut for a dialect's `rewrite`, which hands it the texts of its body in the order `texts` lists them,
 * perhaps with others between (a choice's text beside native calls): each becomes its counterpart in `cut`,
 * and a text not listed becomes `otherwise(text)`.
 */
function inOrder(
  texts: readonly string[],
  cut: readonly string[],
  otherwise: (text: string) => string,
): (text: string) => string {
  const places = new Map<string, { at: number[]; next: number }>();
  for (const [i, text] of texts.entries()) {
    const p = places.get(text);
    if (p) p.at.push(i);
    else places.set(text, { at: [i], next: 0 });
  }
  let next = 0;
  return (text) => {
    const p = places.get(text);
    while (p && p.next < p.at.length && p.at[p.next] < next) p.next++;
    if (!p || p.next === p.at.length) return otherwise(text);
    const i = p.at[p.next++];
    next = i + 1;
    return cut[i];
  };
}
