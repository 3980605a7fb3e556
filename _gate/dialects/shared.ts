/**
 * What every provider dialect implements (reading and rewriting a response body, routing stream frames
 * through the gate, recording a streamed turn for a retry), and the small pieces the dialects share. Each
 * dialect's reader of stream events into calls is in `readers.ts`, which loads with `gate.ts`.
 *
 * @module
 */
import { isRecord, plural } from "../../_common/values.ts";
import { utf8Length } from "../../_common/bytes.ts";
import type { AssembledToolCall } from "../calls.ts";
import { extractToolCalls } from "../engines.ts";

/** One provider dialect, in its three roles (its stream-event reader is in `readers.ts`). */
export interface Dialect {
  /** How a whole response body of this dialect is read and rewritten. */
  readonly body: CompletionBody;
  /** A router for this dialect's stream frames (one per stream). */
  router(request?: RouterRequest): FrameRouter;
  /** A recorder of what one streamed message said (one per stream), for a retry to send back. */
  turn(): TurnRecorder;
}

/** What a router is told about the request whose answer it routes. */
export interface RouterRequest {
  /** How many answers the request asked for (OpenAI Chat `n`, Gemini `candidateCount`). Default 1. */
  answers?: number;
}

/**
 * Keeps what one streamed message said, as the provider sent it: the text, the reasoning (Anthropic
 * `thinking` blocks with their `signature`, Gemini parts with their `thoughtSignature`, Responses
 * `reasoning` items), the calls. A retry sends it back as the assistant's turn: providers with extended
 * thinking refuse a follow-up whose assistant turn lost its reasoning.
 */
export interface TurnRecorder {
  /** Reads one event of the stream, as the provider sent it (before the gate changed anything). */
  read(event: Record<string, unknown>): void;
  /** The message so far, as a whole (not streamed) response body of the dialect. */
  body(): Record<string, unknown>;
  /**
   * True when which answer is the first is in doubt (a Gemini chunk listing a candidate away from its
   * `index`): the turn is not sent back, since a retry continues the first answer. Absent: never.
   */
  firstInDoubt?(): boolean;
}

/** How a whole (not streamed) response body of one dialect is read and rewritten. */
export interface CompletionBody {
  /**
   * What a tool declared in the request stands for, as the validator reads declarations: the tool itself,
   * a stand-in for a client-run built-in (`local_shell`, Anthropic's `bash_*`: allowed by name, no schema),
   * the members of a Responses `namespace`, or nothing for a tool the provider runs itself (its calls never
   * reach the caller).
   */
  declared(tool: Record<string, unknown>): Record<string, unknown>[];
  /** The provider-native tool calls in a response body, in order. */
  calls(body: Record<string, unknown>): unknown[];
  /** The pieces of assistant text in a response body, in order. */
  texts(body: Record<string, unknown>): string[];
  /**
   * The pieces of text in which calls written into it are looked for, by answer: those of the messages that
   * carry no native call. Where one body holds several answers (OpenAI Chat `n`, Gemini `candidateCount`),
   * each is read apart, its pieces joined: a call written into the text of one answer is judged even when
   * another used call fields. Absent: {@linkcode CompletionBody.texts}, as one answer, when the body has no
   * native call, else none.
   */
  looseTexts?(body: Record<string, unknown>): string[][];
  /**
   * A copy of `body` with every call removed, `reason` in the text and a normal stop. With `fromText`,
   * the calls were written into the text, so they are cut out of it (by `cut`, default every call): out of
   * the texts `looseTexts` lists, where the dialect has it (the text beside native calls is not read for
   * calls, and goes as it came); where the text has places (blocks, parts), `reason` stands where the
   * first call cut was, as a stream writes it (see {@linkcode placeReason}). `held`, asked of the same texts
   * in the same order, is true for one that holds a written call, cut or kept (a stream's watch holds the
   * text from there on, default: one `cut` changes).
   */
  rewrite(
    body: Record<string, unknown>,
    reason: AnswerReason,
    options: { fromText: boolean; cut?: (text: string) => string; held?: (text: string) => boolean },
  ): Record<string, unknown>;
  /**
   * A copy of `body` without the calls at positions `drop` (in the order of `calls`), `reason` in the
   * text; the other calls and the finish stay, so the client still runs them.
   */
  dropCalls(
    body: Record<string, unknown>,
    drop: ReadonlySet<number>,
    reason: AnswerReason,
  ): Record<string, unknown>;
  /**
   * Where one body holds several answers: the answer (its place) of each native call, in the order of
   * `calls`, and of each answer `looseTexts` lists. Absent: every call is answer 0's.
   */
  answers?(body: Record<string, unknown>): { calls: number[]; texts: number[] };
}

/**
 * The reason each answer of a turn reads in place of the calls it lost, by the answer's place (OpenAI Chat
 * choice, Gemini candidate; 0 where a response has one answer): it speaks of that answer's calls alone.
 */
export type AnswerReason = (answer: number) => string;

/**
 * The reason an answer reads where the only calls it made came in stream events the gate dropped as
 * malformed (a client reads them otherwise than the gate does), `count` of them: it stopped for tool use
 * with no call to run, and the model is told, as when calls are rejected.
 */
export function malformedCallsReason(count: number): string {
  const one = count === 1;
  return `toolguard dropped this turn's tool ${plural(count, "call")}: ${
    one ? "its" : "their"
  } stream events were malformed (clients read them otherwise than toolguard does), so ${
    one ? "it did not run" : "none of them ran"
  }. Make the ${one ? "call" : "calls"} again if still needed.`;
}

/**
 * Whether the text of a frame dropped unread (not JSON) names `key` as a JSON key (`,"tool_calls":`, or at
 * the text's cut end), with `value` that key with that string value (`"type":"tool_use"`), each of their
 * characters written plain or as a `\\uXXXX` escape (`"tool\\u005fcalls"` is the same key to JSON): a frame
 * that names a call's key is taken for a call's, one that does not may be text, and is dropped unsaid where
 * calls are kept beside it. The same name as a value is no call's (a finish's `"finish_reason":"tool_calls"`,
 * `"stop_reason":"tool_use"`): taken for one, the model read of a call dropped beside the call that went, and
 * was asked to make it again. Only the characters inside the key's quotes may be escaped: an escaped quote
 * (`\\u0022`) is a character of a string, never the start of a key, so a text value that writes
 * `,\\u0022call_id\\u0022:` names no key (read with every escape decoded first, it did).
 *
 * @example A call's key, written plain or escaped; a finish and text that name none
 * ```ts
 * import assert from "node:assert/strict";
 * import { namesKey } from "./shared.ts";
 *
 * assert.equal(namesKey('{"message":{"tool_calls":[{"fun', "tool_calls"), true);
 * assert.equal(namesKey('{"message":{"tool\\u005fcalls":[', "tool_calls"), true);
 * assert.equal(namesKey('{"choices":[{"delta":{"tool_calls"', "tool_calls"), true);
 * assert.equal(namesKey('{"choices":[{"finish_reason":"tool_calls"', "tool_calls"), false);
 * assert.equal(namesKey('{"content_block":{"type":"tool_use","id', "type", "tool_use"), true);
 * assert.equal(namesKey('{"delta":{"stop_reason":"tool_use"', "type", "tool_use"), false);
 * assert.equal(namesKey('{"message":{"content":"sun', "tool_calls"), false);
 * assert.equal(namesKey('{"delta":"a,\\u0022call_id\\u0022:1', "call_id"), false);
 * ```
 */
export function namesKey(data: string, key: string, value?: string): boolean {
  // (a key follows `{` or `,`, a value `:`; JSON's white space may stand between; a key the cut left last
  // may be a call's)
  const space = "[ \\t\\n\\r]*";
  const named = new RegExp(
    `[{,]${space}"${jsonChars(key)}"${space}` +
      (value === undefined ? "(?::|$)" : `:${space}"${jsonChars(value)}"`),
  );
  return named.test(data);
}

/**
 * A pattern of the characters of `name` (letters, digits, `_`) as a JSON string may write them: each plain
 * or as its `\\uXXXX` escape, its hex digits in either case.
 */
function jsonChars(name: string): string {
  return [...name].map((c) => {
    const hex = c.charCodeAt(0).toString(16).padStart(4, "0").replace(
      /[a-f]/g,
      (h) => `[${h}${h.toUpperCase()}]`,
    );
    return `(?:${c}|\\\\u${hex})`;
  }).join("");
}

/** A filter that keeps the calls not in `drop`, counting every call it is asked about, in order. */
export function callCounter(drop: ReadonlySet<number>): () => boolean {
  let position = 0;
  return () => !drop.has(position++);
}

/** What parts a retry's text from the earlier attempts' words it would run on from: a blank line. */
export const PARAGRAPH = "\n\n";

/** A retry's first text as the gate reads it, to tell whether it joins the earlier attempts' words. */
export interface RetryText {
  /** The text (a content delta's, a plan delta's, the part a `.done` event brings). */
  text: string;
  /** Whether the text the client has before it ends mid-line (see {@linkcode StreamFlow.runsOn}). */
  runsOn: boolean;
  /** The frame that brings it, which may score its tokens (see {@linkcode TextFrames.scored}). */
  event: Record<string, unknown>;
  /** The answer it is part of (default 0). */
  answer?: number;
}

/**
 * Whether a retry's first text joins the earlier attempts' words as a client reads them, so that it gets a
 * blank line ({@linkcode PARAGRAPH}) ahead: the client's text runs on (ends mid-line), the retry's starts
 * with other than white space, and `frames` does not score its frame's tokens (among scored frames the gate's
 * line would be text no token stands for). Text of nothing joins nothing: the next text decides. One rule
 * for a text frame of its own (OpenAI Chat, Ollama, Gemini), a place's lead (Anthropic, Cohere, Responses)
 * and Cohere's tool plan.
 *
 * @example Words after words, and not after a line break or when scored
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinsEarlierWords } from "./shared.ts";
 *
 * const frames = { scored: (event: Record<string, unknown>) => event.logprobs != null };
 * const event = { type: "content-delta" };
 * assert.equal(joinsEarlierWords(frames, { text: "Again.", runsOn: true, event }), true);
 * assert.equal(joinsEarlierWords(frames, { text: "\nAgain.", runsOn: true, event }), false);
 * assert.equal(joinsEarlierWords(frames, { text: "Again.", runsOn: false, event }), false);
 * assert.equal(joinsEarlierWords(frames, { text: "Again.", runsOn: true, event: { logprobs: [] } }), false);
 * ```
 */
export function joinsEarlierWords(frames: Pick<TextFrames, "scored">, retry: RetryText): boolean {
  if (!retry.runsOn || retry.text === "" || /^\s/u.test(retry.text)) return false;
  return !(frames.scored?.(retry.event, retry.answer ?? 0) ?? false);
}

/** Where a retry's stream continues the message the client is assembling. */
export interface ResumePoint {
  /** The positions forwarded (Anthropic blocks, Responses output items before the first call). */
  at: number;
  /** OpenAI Responses: the output items forwarded, for the final snapshot. */
  items?: readonly Record<string, unknown>[];
  /** OpenAI Responses: the last `sequence_number` forwarded (-1: none). */
  seq?: number;
  /** Cohere: the citations forwarded (a retry's are numbered after them). */
  citations?: number;
  /** Cohere: the length of the tool plan forwarded (a retry's plan citations point past it). */
  plan?: number;
  /**
   * Cohere: the tool plan forwarded ends in other than white space: a retry's plan, which clients append to
   * it, would run on from it.
   */
  planRunsOn?: boolean;
  /**
   * The length of each answer's text the client has, the earlier attempts' too: a retry's annotations (Chat)
   * and grounding supports (Gemini), offsets into its own text, move past it (see `TextFrames.cite`).
   */
  told?: Readonly<Record<number, TextLength>>;
  /** The usage of every attempt before the retry, together: the retry's usage events report it added. */
  usage?: Record<string, unknown>;
  /**
   * The answers whose text the client has says something, each with the line breaks that text ends in (up
   * to 2), once the retry step has sent what it sends ahead of the retry's stream (see
   * {@linkcode StreamFlow.said}): the retry's reason follows that text by one blank line.
   */
  said?: Readonly<Record<number, number>>;
  /**
   * The answers whose text the client has ends in other than white space, mid-line (see
   * {@linkcode StreamFlow.runsOn}): a retry's text that starts with words would run on from it.
   */
  runsOn?: readonly number[];
}

/** The length of a text in UTF-16 code units (as JavaScript counts it) and in UTF-8 bytes (as Gemini does). */
export interface TextLength {
  chars: number;
  bytes: number;
}

/** The calls of a turn, split by the verdict. */
export interface SplitCalls {
  /** The calls that go to the client. */
  kept: readonly AssembledToolCall[];
  /** The rejected calls, removed. */
  dropped: readonly AssembledToolCall[];
}

/** A stream frame withheld by the gate. */
export interface Held {
  /** Text to emit when the calls are allowed. */
  raw: string;
  /** The parsed event, when it parsed. */
  event?: Record<string, unknown>;
  /** True when the frame is part of a tool call (dropped on rejection). */
  tool: boolean;
  /**
   * Set when the frame carries text held because a call may be written into it: when that call is
   * rejected, the frame gives way to `rest` (the frame without the text), or to nothing. `at`: where its
   * text starts in its answer's text.
   */
  written?: { rest?: Held; at?: number };
  /** The answer (OpenAI Chat choice) whose watched text held the frame, when a text watch held it. */
  answer?: number;
  /**
   * Set on the frame a router put among the held ones to tell `answer` of calls it dropped (`reason`, after
   * its lead: see `FrameRouter.tellDropped`), where text carries no position (Ollama, Gemini), or after a
   * call written into the text (every dialect that tells, see its `written` option): a retry that drops the
   * frames held from the first call's on sends the reason all the same, after the text it sends ahead of its
   * stream, and the text watch's ending leads a rejection's reason with it.
   */
  told?: {
    reason: string;
    answer: number;
    /**
     * Set where the router sends the reason itself ahead of a retry's stream (OpenAI Responses: a message
     * item of its own, numbered where the retry begins, see `FrameRouter.endsDropped`), not as a text frame.
     */
    placed?: boolean;
  };
}

/** Routes the frames of one dialect's stream through the gate. */
export interface FrameRouter {
  /** How the stream is framed: Server-Sent Events, or newline-delimited JSON (Ollama). */
  readonly framing: "sse" | "ndjson";
  /** Notes what synthesised frames copy later (ids, model, positions). Sees every parsed frame first. */
  note?(event: Record<string, unknown>, raw: string): void;
  /**
   * The length of the frames kept whole for the ending (OpenAI Responses keeps the items it finished, for
   * the final snapshot it writes), with what the router keeps per item (a fixed cost for each place noted):
   * bounded by the gate like the frames held.
   */
  readonly kept?: number;
  /**
   * Why the client would read this parsed frame otherwise than the gate (an `event:` name it routes by
   * that disagrees with the frame's type, a position it counts otherwise), or undefined to read it. A
   * refused frame is neither read nor forwarded: no client sees it, so none runs what the judge did not
   * see. `name` is the SSE `event:` field (absent in NDJSON).
   */
  refuse?(event: Record<string, unknown>, name: string | undefined): string | undefined;
  /**
   * What of a frame `refuse` dropped a client reads as the gate does (the finish, words, usage beside the
   * part refused), to be read and routed in its place, or undefined to drop it whole. Absent where a
   * refused frame has no such rest.
   */
  rest?(event: Record<string, unknown>): Record<string, unknown> | undefined;
  /**
   * Notes a frame the gate dropped unread (not JSON, or not an object), `data` its text: it may have
   * carried a call of any answer, so an answer that then stops for tool use with no call left is told, as
   * one whose calls `refuse` dropped; so is one that holds calls, where `data` names a call's key (see
   * {@linkcode namesKey}: any other frame may be text). `afterEnd`: the frame came after the end a client
   * stops reading at (`data: [DONE]`, Ollama's `done`), so no answer's finish follows to tell it at.
   */
  unread?(data: string, afterEnd?: boolean): void;
  /**
   * Whether `event` ends the message (Anthropic `message_stop`, Cohere `message-end`, OpenAI Responses'
   * final event, the Gemini chunk that finishes its last candidate), after which a provider closes the
   * stream: the gate waits for that close only a short grace (see `StreamGate`). Absent where the gate reads
   * the end itself (`data: [DONE]`, Ollama's `done`).
   */
  final?(event: Record<string, unknown>): boolean;
  /**
   * A frame not refused as the client will read it, where the client would hold what it addresses
   * elsewhere than the frame says (OpenAI Responses items added away from their place), or reads a field
   * otherwise than it says (an Ollama `done: 1`, the end to the client): the gate then
   * reads and forwards it as placed, under the frame's own `event:` name (`name`, absent in NDJSON): a name
   * made from the event's fields could carry a line break, and with it a frame of its own.
   */
  place?(
    raw: string,
    event: Record<string, unknown>,
    name: string | undefined,
  ): { raw: string; event: Record<string, unknown> };
  /** Sends, holds or splits one parsed frame. */
  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void;
  /**
   * The reason the router wrote of its own accord, when it did (an Anthropic message whose only calls
   * `refuse` dropped, ended as a rejected turn ends): reported as any reason the gate writes.
   */
  ownReason?(): string | undefined;
  /**
   * The answers that read `ownReason`'s words (OpenAI Chat `n`, Gemini `candidateCount`), whose judge's
   * reason then speaks of their other calls; absent: the one answer, where `ownReason` is set.
   */
  toldAnswers?(): ReadonlySet<number>;
  /**
   * Before the calls held are judged: where calls `refuse` dropped (or a frame dropped unread that names a
   * call's key, see {@linkcode namesKey}) stood beside calls a client holds, puts
   * among the held frames, ahead of the end, the words that tell the model so (they go out with the calls
   * that pass, and ahead of a rejection's reason), or sends them now after the answer's held text where
   * text carries no position (OpenAI Chat), and reports them as `ownReason`. `answers`: those whose calls
   * are held (a text watch may hold a call's frames, which the router then never saw). `written`: the calls
   * are written into text the watch holds, which nothing may send before they are judged (or a failed watch
   * holds the text, to be withheld, beside any calls held): the words go among the held frames after the
   * answer's text, marked `Held.told` (the watch's ending leads a rejection's reason with them), and the
   * answer's stop for tool use made a normal one (see `endsWritten`). Absent where no such call is known
   * apart from the calls held.
   */
  tellDropped?(flow: StreamFlow, answers: ReadonlySet<number>, options?: { written?: boolean }): void;
  /**
   * At the end of a stream that held no call to judge, after the frames held went out: tells, as
   * `tellDropped` does, of calls dropped (unread or refused) after the answer that made them had ended,
   * whose finish went out untold. Left out, the client read a plain stop, the call gone and nothing said,
   * where the same frame ahead of the finish was told (a Gemini finish; an Anthropic or Cohere stop for
   * tool use with no call; an OpenAI Chat chunk once every answer finished, after `data: [DONE]`). OpenAI
   * Responses tells of them as they come after its final event (see its `unread`), Ollama ahead of its final
   * chunk, which waits for the end (the ollama client stops reading at it).
   */
  tellLate?(flow: StreamFlow): void;
  /**
   * Makes a normal stop the held finish for tool use (Anthropic `tool_use`, OpenAI Chat `tool_calls`, Cohere
   * `TOOL_CALL`) of each of `answers` that holds no native call, whose calls were written into the text
   * (or whose text a failed watch withheld): once the gate cut those calls, withheld that text, or told of a
   * call it dropped beside them, the message holds no call, and a stop for tool use sent an SDK user's loop
   * looking for one (a body's `replace` ends it so too). A written call that passes alone keeps the stop the
   * server gave, as its body does. OpenAI Responses has no such stop: there the final snapshot no longer
   * lists the item `tellDropped` held, once the watch's ending took its words into the reason.
   */
  endsWritten?(flow: StreamFlow, answers: ReadonlySet<number>): void;
  /**
   * Sends now the held frames that carry text of the `answers` whose calls were rejected, ahead of what ends
   * the turn (the reason, a retry's stream), where text carries no position (OpenAI Chat): a body puts an
   * answer's text before the reason. Absent where text addresses a place (a block, an item) after the calls.
   */
  sendHeldText?(answers: ReadonlySet<number>, flow: StreamFlow): void;
  /**
   * The wire text that ends the blocks a client holds open whose end is among the frames a retry drops
   * (`dropped`, in stream order), to go before the retry's stream, where blocks have an end (Anthropic,
   * Cohere): a block the client got the start of, whose end was held with a call written into its text (or
   * a call after it), stayed open, and clients that end a text part at its block's end never ended it.
   * `flow` tells what text the client has (Gemini: the grounding of that text, held with the calls). With
   * them, what `tellDropped` held among the dropped frames (Anthropic, Cohere: its text block; OpenAI
   * Responses: its message item), at the place and numbers the retry's point left it.
   */
  endsDropped?(dropped: readonly Held[], flow: StreamFlow): string;
  /**
   * Sends the frames held only until text follows them (an Anthropic text block's start), before the text
   * watch sends text in their place (the reason of a failed watch, the prose held before a call a retry
   * drops): a retry that drops the text drops them too, and the client keeps no empty block (see
   * `AnthropicStream.route`). A rejected written call's text goes among the held frames instead.
   */
  sendOpenings?(flow: StreamFlow): void;
  /**
   * The answer text a frame's event gives the client (undefined: none), where frames held beside the calls
   * carry text (white space of a block that waited for words): noted as a retry sends them ahead of its
   * stream, which the retry's reason follows.
   */
  textOf?(event: Record<string, unknown>): unknown;
  /**
   * Ends a stream whose calls were rejected: `reason` in place of the calls, after the answer's lead
   * (`flow.lead`, once the router sent what goes before it), then a normal stop. The answers
   * in `told` read it already (a failed text watch's ending, where their text was withheld): their calls go
   * and they stop normally, with no second reason.
   */
  replace(
    reason: AnswerReason,
    calls: readonly AssembledToolCall[],
    flow: StreamFlow,
    told?: ReadonlySet<number>,
  ): void;
  /**
   * Ends a stream of which only the `dropped` calls were rejected: those are removed, `reason` (after the
   * answer's `flow.lead`) says why, and the other calls go out as they came. Absent where a dialect
   * withholds the whole turn.
   */
  dropCalls?(reason: AnswerReason, calls: SplitCalls, flow: StreamFlow): void;
  /**
   * Fits a frame of a retry's stream after what the client already has (`point`): the frame
   * to route, or undefined to drop it. Absent where a stream cannot be continued (OpenAI Responses): a
   * retry then ends in the usual replacement.
   */
  resume?(
    raw: string,
    event: Record<string, unknown>,
    point: ResumePoint,
  ): { raw: string; event: Record<string, unknown> } | undefined;
  /** What the client already has when the calls are rejected: where a retry's stream continues. */
  resumePoint?(): ResumePoint;
  /** Present where a model may write calls into the streamed text (every dialect). */
  readonly text?: TextFrames;
}

/** The text one frame carries for the watched message. */
export interface TextPart {
  /** The text (`""` when the frame carries none). */
  text: string;
  /** True when the frame also carries a tool call or its finish: holding it makes the stream pending. */
  toolish: boolean;
  /** The frame without that text, or undefined when nothing else is left in it. */
  rest(): Record<string, unknown> | undefined;
  /**
   * True for a frame without text after which the text may go on (an empty delta, a reasoning piece, a
   * chunk of no answer, a `ping`, a citation): a tail that may become a marker then waits on. Else such a
   * frame ends the text there (a call, a finish, the end of a block) and the tail goes out.
   */
  goesOn?: boolean;
  /**
   * True for a text delta, even one of no text (`""`): an empty one neither brings a place's next text nor
   * ends it, so a place's blank start waits on past it (see `TextCalls`), as it does past no frame.
   */
  delta?: boolean;
}

/**
 * How a dialect's frames carry the text the gate watches for written calls. A stream may carry several
 * answers (OpenAI Chat `n`), each watched apart, by its index (`answer`); a dialect without `answers`
 * carries one, answer 0.
 */
export interface TextFrames {
  /** The watched text of one answer in a frame. */
  read(event: Record<string, unknown>, answer: number): TextPart;
  /**
   * A frame that carries only `text`, for one answer. `at` is where the text goes in the answer's text as
   * read so far (an offset into it): a dialect that addresses text by block or item puts it in the one that
   * holds that offset, which the client has; none (`""`) where that place was dropped (see `tidy`: only
   * white space goes there, as a body cuts it).
   */
  textFrame(text: string, answer: number, at: number): string;
  /**
   * True where text addresses a place (a block, an item) and other frames stand between places: text kept
   * from held frames after a frame of another kind (the end of a block, a refusal) goes in its own place,
   * after that frame, not where the held text began.
   */
  placed?: boolean;
  /**
   * A held frame that repeats the text (OpenAI Responses' `.done` events and final snapshot), as it reads
   * once the answer's text from the first change's `at` on is the changes' tails, each in the place that
   * holds its `at` (the text the gate wrote in place of what it held); the frame itself when it repeats none;
   * undefined when the frame goes with the text it was of (an annotation of text the gate cut). Asked too of
   * a held frame that cites the text (Chat Completions' annotations), with `told.kept`: how much of the text
   * of `told.answer` the client keeps where it was (see `citingKept`; in UTF-16 units and UTF-8 bytes), after
   * `told.ahead` (see `cite`).
   */
  retell?(
    event: Record<string, unknown>,
    changes: readonly TextChange[],
    told: { answer: number; kept: TextLength; ahead: TextLength },
  ): Record<string, unknown> | undefined;
  /**
   * On a retry's stream: `event` with the offsets of the annotations it carries (Chat Completions'
   * annotations, Gemini's grounding supports: into the answer's text as this stream tells it) moved past the
   * text the client has of that answer ahead of this stream's (`ahead`: the earlier attempts' and the blank
   * line the gate wrote before the retry's); the event itself when it carries none. A kept annotation
   * otherwise cited the earlier attempts' words. `told.ahead` of `retell` is the same length.
   */
  cite?(event: Record<string, unknown>, ahead: (answer: number) => TextLength): Record<string, unknown>;
  /**
   * A frame that repeats the text otherwise than the frames that streamed it, told as they did (the text
   * judged); undefined when it agrees. Asked of every frame before it is read.
   */
  agree?(event: Record<string, unknown>): Record<string, unknown> | undefined;
  /**
   * For a retry whose stream takes the place of the held frames, once the answer's text reads as the client
   * then has it (the text read before `at`, then `tail`: the prose held with the rejected call): the frames
   * that end that text and where the retry continues after them. Absent, or undefined: a frame carrying
   * `tail`, and the router's {@linkcode FrameRouter.resumePoint}.
   */
  resume?(change: { at: number; tail: string }): TextEnding | undefined;
  /**
   * Before the gate writes text in place of the held text of a rejected call: drops the held places (their
   * start held) that get none, none of the `written` offsets falling in them, and renumbers the frames
   * after them (and the text frames written next) to close the gap, where a client refuses an empty place
   * (an Anthropic text block: the API refuses it in a message sent back, and a body drops it).
   */
  tidy?(flow: StreamFlow, written: readonly number[]): void;
  /** Whether the text at offset `at` is the first of its place (a text block, a part): none came in it before. */
  opens?(at: number): boolean;
  /**
   * The watch began to hold a call's text with words before its marker: the places of white space alone
   * held before them (see {@linkcode Openings}) reach the client, as they would had the words come in a frame
   * of their own; a body keeps them too (see {@linkcode mayGoBlank}), however the frames fell.
   */
  said?(flow: StreamFlow): void;
  /**
   * Whether the frame gives `answer`'s text with per-token log probabilities. A retry's first text that
   * would join the earlier attempts' words gets a blank line before it (in a text frame of its own where
   * the text runs on in the client's, OpenAI Chat, Ollama, Gemini; see {@linkcode TextFrames.lead} where it
   * goes in a place of its own) only where it does not: among scored frames that line would be text no
   * token stands for. Absent: no frame is (Anthropic).
   */
  scored?(event: Record<string, unknown>, answer: number): boolean;
  /**
   * Present where a retry's text goes in a place of its own (Anthropic blocks, Cohere content blocks, OpenAI
   * Responses items), which clients join with nothing between: how its first text gets its blank line.
   */
  lead?: PlaceLead;
  /** What the dialect keeps to place the text (see {@linkcode TextPlaces.size}), bounded with the text. */
  size?(): number;
  /**
   * The wire text of an event; in place of the frame `from`, under that frame's SSE `event:` name, or none
   * as it had (see `reframe`): a name made of the event's type had the openai SDK apply a frame it did not
   * (a `thread.*` one), and named one that came unnamed.
   */
  frame(event: Record<string, unknown>, from?: { raw: string; event: Record<string, unknown> }): string;
  /**
   * The answers a frame carries a part of, by index, each once; none for a frame of no answer (usage), which
   * then waits behind the frames any answer's watch holds (Gemini names answer 0 for it instead: its usage
   * takes the first answer's way, see `answerFrame`).
   */
  answers?(event: Record<string, unknown>): number[];
  /**
   * The frame as it carries only `answer`'s part, for a frame that carries parts of several: the watch
   * splits every such frame into one per answer, in the order of `answers`, so each answer's watch holds
   * only its own part (held whole, the parts of the others in it went out unread). `piece` says where this
   * one stands among them: the dialect puts the fields of no answer (the usage) on one of them.
   */
  answerFrame?(
    event: Record<string, unknown>,
    answer: number,
    piece: { first: boolean; last: boolean },
  ): Record<string, unknown>;
  /**
   * The frame (of one answer) as an empty start and a delta, when it starts a block with text (Anthropic,
   * Cohere: text the watch writes in its place then lands in a block the client has); undefined otherwise.
   */
  split?(event: Record<string, unknown>): Record<string, unknown>[] | undefined;
}

/**
 * How a retry's first text, in a place of its own, is led by a blank line where it would join the earlier
 * attempts' words: a delta of its own at the start of that place (see {@linkcode TextFrames.lead}).
 */
export interface PlaceLead {
  /** The answer text a frame brings to its place (a text delta's); undefined for any other frame. */
  text(event: Record<string, unknown>): string | undefined;
  /**
   * A text delta as the frames to pass in its place: one of `text` alone in the same place, then the delta;
   * what repeats the place's text later (and the offsets into it) tells it with `text` ahead.
   */
  frames(event: Record<string, unknown>, text: string): Record<string, unknown>[];
}

/**
 * The text of the frames `flow` holds, as `text` reads each event's (undefined: none), in order: what a
 * replacement sends ahead of the reason (see {@linkcode StreamFlow.lead}).
 */
export function heldText(flow: StreamFlow, text: (event: Record<string, unknown>) => unknown): string {
  let out = "";
  for (const h of flow.held) {
    const t = h.event && text(h.event);
    if (typeof t === "string") out += t;
  }
  return out;
}

/** Text the gate writes at an offset of an answer's text (`at`), in the place that holds it. */
export interface TextChange {
  at: number;
  tail: string;
}

/** How a message's text ends for a retry's stream to continue it (see {@linkcode TextFrames.resume}). */
export interface TextEnding {
  /** The frames that give the client the rest of the text it is to hold, and end it. */
  frames: string;
  /** Where the retry's stream continues; absent: where the router says ({@linkcode FrameRouter.resumePoint}). */
  point?: ResumePoint;
  /**
   * The text the frames give each answer's client (a retry's reason follows it, and its text is set apart
   * from it); absent from a dialect's `resume`: the `tail` it was given.
   */
  texts?: readonly { answer: number; text: string }[];
}

/** What the gate and a router share while a stream passes: frames to send now, frames held, a flag, the answers that spoke. */
export class StreamFlow {
  #out: string[] = [];
  #held: Held[] = [];
  /** The length of the text of the frames held (what a call whose arguments never end grows). */
  #heldSize = 0;
  /** True once a tool call has started: from then on what carries a position waits. */
  pending = false;
  /** The answers whose text reached the client (a replacement then starts on a new paragraph for them). */
  readonly #spoke = new Set<number>();
  /**
   * The line breaks the text each answer's client has ends in, after its last word (up to 2); for an
   * answer that has not spoken in this stream, those of the white space it sent (after the earlier
   * attempts' text, on a retry's stream).
   */
  readonly #breaks = new Map<number, number>();
  /**
   * The line breaks the text each answer has ahead of its text ends in (Cohere's tool plan, see
   * {@linkcode StreamFlow.sawAhead}), for the answers where that text says something.
   */
  readonly #ahead = new Map<number, number>();
  /**
   * Whether the text each answer's client has ends in other than white space (for an answer that sent none
   * in this stream, the earlier attempts' `runsOn` says).
   */
  readonly #midLine = new Map<number, boolean>();
  /** On a retry's stream: where it continues (its `said` is what the earlier attempts left the client). */
  readonly #resume: ResumePoint | undefined;
  /** The length of the text of each answer that reached the client on this stream (see `told`). */
  readonly #told = new Map<number, TextLength>();
  /** The blank line written ahead of each answer's text on a retry's stream (see `sawLead`). */
  readonly #led = new Map<number, TextLength>();
  /**
   * The call position the gate's reader filed an event under (the `slot` of the call it judged), or
   * undefined for an event it filed under none: a router that drops a rejected call's events asks here
   * rather than number them by a rule of its own, which could come to differ from the reader's.
   */
  readonly filed: (event: Record<string, unknown>) => number | undefined;

  /**
   * A flow whose events were read by a reader that `filed` asks (default: one that filed none); on a retry's
   * stream, after the text the client has by `resume` (complete: see `RetryAnswer`).
   */
  constructor(
    filed: (event: Record<string, unknown>) => number | undefined = () => undefined,
    resume?: ResumePoint,
  ) {
    this.filed = filed;
    this.#resume = resume;
  }

  /**
   * Notes that `text` of `answer` (default 0) reached the client, after what it had: white space alone too,
   * as the line breaks the text ends in count for the reason's lead.
   */
  sawText(text: string, answer = 0): void {
    const words = hasWords(text);
    if (words) this.#spoke.add(answer);
    const breaks = trailingBreaks(text);
    this.#breaks.set(answer, words ? breaks : Math.min(2, (this.#breaks.get(answer) ?? 0) + breaks));
    if (text !== "") {
      this.#midLine.set(answer, !/\s$/u.test(text));
      lengthen(this.#told, answer, text);
    }
  }

  /**
   * {@linkcode StreamFlow.sawText} of the blank line the gate writes ahead of a retry's text in `answer`:
   * the retry's annotations move past it too (see {@linkcode StreamFlow.ahead}).
   */
  sawLead(text: string, answer = 0): void {
    this.sawText(text, answer);
    lengthen(this.#led, answer, text);
  }

  /**
   * The length of each answer's text the client has, the earlier attempts' too: what a retry's stream
   * continues (see {@linkcode ResumePoint.told}).
   */
  told(): Record<number, TextLength> {
    const out: Record<number, TextLength> = {};
    for (const [key, length] of Object.entries(this.#resume?.told ?? {})) out[Number(key)] = { ...length };
    for (const [answer, { chars, bytes }] of this.#told) {
      const before = out[answer] ?? { chars: 0, bytes: 0 };
      out[answer] = { chars: before.chars + chars, bytes: before.bytes + bytes };
    }
    return out;
  }

  /**
   * On a retry's stream, the text the client has of `answer` ahead of this stream's own: the earlier
   * attempts' and the blank line written before the retry's (see {@linkcode TextFrames.cite}).
   */
  ahead(answer = 0): TextLength {
    const before = this.#resume?.told?.[answer] ?? { chars: 0, bytes: 0 };
    const led = this.#led.get(answer) ?? { chars: 0, bytes: 0 };
    return { chars: before.chars + led.chars, bytes: before.bytes + led.bytes };
  }

  /**
   * Notes that `text` of `answer` (default 0) that stands ahead of the answer's text reached the client
   * (Cohere's tool plan: a body puts it before the content, and its reason reads it so). It says something
   * where the answer's text says nothing, and leaves the ending of text that does (a retry's plan, come
   * after the earlier attempts' text, ended the client's text with no line break).
   */
  sawAhead(text: string, answer = 0): void {
    const words = hasWords(text);
    const before = this.#ahead.get(answer);
    if (!words && before === undefined) return;
    const breaks = trailingBreaks(text);
    this.#ahead.set(answer, words ? breaks : Math.min(2, (before ?? 0) + breaks));
  }

  /**
   * What goes before a replacement text in `answer` (default 0), once the client has what it has of it and
   * then `held` (text of held frames sent ahead of the replacement): the line breaks that make one blank
   * line after text that says something (see {@linkcode paragraphLead}), nothing in an answer that said
   * nothing, as a body joins an answer's text and the reason.
   */
  lead(answer = 0, held = ""): string {
    if (hasWords(held)) return paragraphLead(held);
    const breaks = this.#ends(answer);
    return breaks === undefined ? "" : paragraphBreaks(breaks + trailingBreaks(held));
  }

  /**
   * The answers whose text the client has says something, the earlier attempts' too, each with the line
   * breaks that text ends in (up to 2): what a retry's stream continues (see {@linkcode ResumePoint.said}).
   */
  said(): Record<number, number> {
    const out: Record<number, number> = {};
    const answers = new Set([
      ...Object.keys(this.#resume?.said ?? {}).map(Number),
      ...this.#spoke,
      ...this.#ahead.keys(),
    ]);
    for (const answer of answers) out[answer] = this.#ends(answer)!;
    return out;
  }

  /**
   * The answers whose text the client has, the earlier attempts' too, ends in other than white space: what a
   * retry's text would run on from (see {@linkcode ResumePoint.runsOn}).
   */
  runsOn(): number[] {
    const earlier = (this.#resume?.runsOn ?? []).filter((answer) => !this.#midLine.has(answer));
    return [...earlier, ...[...this.#midLine].filter(([, mid]) => mid).map(([answer]) => answer)];
  }

  /** The line breaks the text of `answer` the client has ends in, or undefined where it said nothing. */
  #ends(answer: number): number | undefined {
    const own = this.#breaks.get(answer) ?? 0;
    if (this.#spoke.has(answer)) return own;
    // (text ahead of the answer's comes before the earlier attempts' text too: a plan streamed after it)
    const before = this.#resume?.said?.[answer] ?? this.#ahead.get(answer);
    return before === undefined ? undefined : Math.min(2, before + own);
  }

  /** Sends a frame now. */
  send(raw: string): void {
    this.#out.push(raw);
  }

  /** Frames withheld until the calls are judged, in stream order. */
  get held(): readonly Held[] {
    return this.#held;
  }

  /** The length of the text of the frames held. */
  get heldSize(): number {
    return this.#heldSize;
  }

  /** Withholds a frame until the calls are judged. */
  hold(frame: Held): void {
    this.#held.push(frame);
    this.#heldSize += frame.raw.length;
  }

  /** Replaces the held frames (default: with none). */
  setHeld(frames: Held[] = []): void {
    this.#held = frames;
    this.#heldSize = 0;
    for (const h of frames) this.#heldSize += h.raw.length;
  }

  /**
   * Puts `frames` among the held frames at `at`, ahead of the one held there (past the last at the length):
   * where a router tells what it dropped, among the frames that go with the calls that pass.
   */
  holdAt(at: number, frames: readonly Held[]): void {
    this.setHeld([...this.#held.slice(0, at), ...frames, ...this.#held.slice(at)]);
  }

  /** Sends every held frame as it came. */
  release(): void {
    for (const h of this.held) this.#out.push(h.raw);
  }

  /** Takes the text to send, or undefined when nothing is queued. */
  take(): string | undefined {
    if (this.#out.length === 0) return undefined;
    const text = this.#out.join("");
    this.#out = [];
    return text;
  }
}

/**
 * The content positions (Anthropic block index, Responses output index) that carried tool calls. Those two
 * dialects address content by position, so a replacement renumbers what it replays to close the gaps.
 * A hostile stream may start a call at every position it holds (hundreds of thousands within
 * `maxResponseBytes`), so a renumbering is a binary search of the positions in order, not a walk over them
 * per replayed event, and the first is read off that order, not spread into `Math.min` (which overflows
 * the stack past some 200 000 arguments on V8).
 */
export class ToolPositions {
  readonly #taken = new Set<number>();
  /** The positions in ascending order, sorted when first asked for after a change. */
  #ascending: number[] | undefined;

  /** Marks a position as a tool call's. */
  add(index: number): void {
    if (this.#taken.has(index)) return;
    this.#taken.add(index);
    this.#ascending = undefined;
  }

  /** True when the position is a tool call's. */
  has(index: number): boolean {
    return this.#taken.has(index);
  }

  /** How many positions are marked. */
  get size(): number {
    return this.#taken.size;
  }

  /** Where `index` moves once the tool positions are dropped. */
  renumber(index: number): number {
    const sorted = this.#sorted();
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (sorted[mid] < index) low = mid + 1;
      else high = mid;
    }
    return index - low; // `low` positions lie before `index`
  }

  /** The position of the replacement text: after every replayed one (`next`), at least the first call's. */
  replacementAt(next: number): number {
    const firstTool = this.#sorted()[0];
    return Math.max(next, Number.isFinite(firstTool) ? this.renumber(firstTool) : 0);
  }

  #sorted(): number[] {
    return this.#ascending ??= [...this.#taken].sort((a, b) => a - b);
  }
}

/**
 * The starts of empty text blocks (Anthropic, Cohere; OpenAI Responses: of a message or a text part), each
 * held until the next frame routed: a call written at a block's start, cut with a retry or a rejection, then
 * takes the block with it, where the client kept an empty text block (which the APIs refuse in a message
 * sent back). The frames held after a start until it goes (Anthropic's pings, the block's text while it is
 * white space alone, its end, the next empty block) are held with it: a block of white space alone is
 * refused as an empty one is, and a body drops it once a call is cut.
 */
export class Openings {
  #held: Held[] = [];
  /** The answer text of an event (undefined: none), noted in the flow as a held frame goes out. */
  readonly #text: (event: Record<string, unknown>) => unknown;

  /** Openings of blocks whose events carry the text `text` reads (see {@linkcode heldText}). */
  constructor(text: (event: Record<string, unknown>) => unknown) {
    this.#text = text;
  }

  /** The block the frames held last address (by its index). */
  #index: unknown;

  /** True while a start waits. */
  get waiting(): boolean {
    return this.#held.length > 0;
  }

  /** True for a frame held here that the watch has not let out or dropped since (see `hold`). */
  holds(frame: Held): boolean {
    return this.#held.includes(frame);
  }

  /** True for text of white space alone (`text`) in the block (`index`) whose start waits last. */
  blank(index: unknown, text: unknown): boolean {
    return this.waiting && index === this.#index && typeof text === "string" && !hasWords(text);
  }

  /** True for the end of the block (`index`) whose start waits last (it got no text but white space). */
  ends(index: unknown): boolean {
    return this.waiting && index === this.#index;
  }

  /** Holds a frame until the next one routed, or until the watch lets out or drops what it holds. */
  hold(frame: { raw: string; event: Record<string, unknown> }, flow: StreamFlow): void {
    const held: Held = { ...frame, tool: false, answer: 0 };
    if (typeof frame.event.index === "number") this.#index = frame.event.index;
    this.#held.push(held);
    flow.hold(held);
  }

  /**
   * Sends the held openings the watch has not let out or dropped since (see `FrameRouter.sendOpenings`);
   * those `stays` is true of stay held (a retry drops them, an ending that writes in their place sends them).
   */
  send(flow: StreamFlow, stays?: (frame: Held) => boolean): void {
    if (this.#held.length === 0) return;
    const openings = new Set(stays ? this.#held.filter((h) => !stays(h)) : this.#held);
    this.#held = [];
    const out = flow.held.filter((h) => openings.has(h));
    if (out.length === 0) return;
    flow.setHeld(flow.held.filter((h) => !openings.has(h)));
    for (const h of out) {
      const text = h.event && this.#text(h.event);
      if (typeof text === "string") flow.sawText(text);
      flow.send(h.raw);
    }
  }
}

/**
 * Drops the held text blocks that get no text once the calls written into the text are cut (see
 * `TextFrames.tidy`): each whose start (`opens`) is held and whose index is not in `kept`, noted in `gone`,
 * with every frame addressed to it by its index (`addressed`: an event of a block; a Cohere citation's
 * `index` numbers the citations); the frames after it are renumbered (`wire` gives an event's wire text
 * in place of a held frame), as a body drops a text block left empty.
 */
export function dropEmptyBlocks(
  flow: StreamFlow,
  kept: ReadonlySet<number | undefined>,
  { opens, addressed, gone, wire }: {
    opens: (event: Record<string, unknown>) => boolean;
    addressed: (event: Record<string, unknown>) => boolean;
    gone: ToolPositions;
    wire: (event: Record<string, unknown>, from: Held) => string;
  },
): void {
  for (const h of flow.held) {
    const e = h.event;
    if (e && opens(e) && typeof e.index === "number" && !kept.has(e.index)) gone.add(e.index);
  }
  if (gone.size === 0) return;
  const out: Held[] = [];
  for (const h of flow.held) {
    const e = h.event;
    if (!e || typeof e.index !== "number" || !addressed(e)) out.push(h);
    else if (!gone.has(e.index)) {
      // (a text frame's `rest`: none, a block's text frames carry only the text)
      const index = gone.renumber(e.index);
      const event = { ...e, index };
      out.push(index === e.index ? h : { ...h, raw: wire(event, h), event });
    }
  }
  flow.setHeld(out);
}

/**
 * The ends (events of type `end`) among `dropped` of blocks whose start (type `start`, by `index`) is not
 * among them, as they came, in order: see {@linkcode FrameRouter.endsDropped}.
 */
export function blockEnds(dropped: readonly Held[], start: string, end: string): string {
  const started = new Set(dropped.filter((h) => h.event?.type === start).map((h) => h.event!.index));
  return dropped.filter((h) => h.event?.type === end && !started.has(h.event.index)).map((h) => h.raw).join(
    "",
  );
}

/**
 * The frames among `dropped` of the text block a router held to tell of calls it dropped (those in `told`,
 * see {@linkcode FrameRouter.tellDropped}), numbered `at` (where its `resumePoint` put the block, ahead of a
 * retry's) and written by `wire`, their text noted in `flow` as the client's (Anthropic, Cohere).
 */
export function toldBlockAt(
  dropped: readonly Held[],
  told: ReadonlySet<Record<string, unknown>>,
  at: number,
  { flow, text, wire }: {
    flow: StreamFlow;
    text: (event: Record<string, unknown>) => unknown;
    wire: (event: Record<string, unknown>) => string;
  },
): string {
  let out = "";
  for (const h of dropped) {
    if (h.event === undefined || !told.has(h.event)) continue;
    const said = text(h.event);
    if (typeof said === "string") flow.sawText(said);
    out += wire({ ...h.event, index: at });
  }
  return out;
}

/**
 * The reasoning fields of a delta or message, as servers name them (DeepSeek `reasoning_content`, vLLM
 * `reasoning`, Ollama's own API `thinking`): a retry sends each back under the name it came in.
 */
export const REASONING_FIELDS = ["reasoning_content", "reasoning", "thinking"] as const;

/** The text fields of a delta or message: the answer, a refusal, and the {@linkcode REASONING_FIELDS}. */
export const TEXT_FIELDS = ["content", "refusal", ...REASONING_FIELDS] as const;

/** The text of the {@linkcode TEXT_FIELDS} of a delta or message (what makes a frame count as text). */
export function textOf(delta: Record<string, unknown>): string {
  let s = "";
  for (const k of TEXT_FIELDS) {
    if (typeof delta[k] === "string") s += delta[k];
  }
  return s;
}

/**
 * A message's `content` as text: the string, or the text of its parts run together where a server sends
 * the parts (`[{type: "text", text}]`; Mistral's reasoning models put `thinking` parts beside them; a
 * model writes calls into those too). Undefined when it has neither.
 */
export function contentText(message: Record<string, unknown>): string | undefined {
  const content = message.content;
  if (typeof content === "string") return content;
  const parts = textParts(content);
  return parts.length > 0 ? parts.map((p) => p.text as string).join("") : undefined;
}

/** The `text` parts of a content given as parts (none for other content). */
export function textParts(content: unknown): Record<string, unknown>[] {
  if (!Array.isArray(content)) return [];
  return content.filter((p): p is Record<string, unknown> =>
    isRecord(p) && p.type === "text" && typeof p.text === "string"
  );
}

/** A copy of `obj` without `keys`. */
export function withoutKeys(obj: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const copy = { ...obj };
  for (const k of keys) delete copy[k];
  return copy;
}

/** The defined fields `keys` of `obj`. */
export function pick(obj: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/**
 * Whether a call was cut from `text` to leave `cut`: the cut took out more than white space. Tidying the text
 * after a call (its end, a run of blank lines) takes out only white space, and a text it alone changed,
 * before the call's, is not where the stream writes the reason (see {@linkcode placeReason}).
 *
 * @example A call cut, and the end trimmed
 * ```ts
 * import assert from "node:assert/strict";
 * import { callCut } from "./shared.ts";
 *
 * assert.equal(callCut("Sure. <tool_call>{}</tool_call>", "Sure."), true);
 * assert.equal(callCut("Sure.  ", "Sure."), false);
 * ```
 */
export function callCut(text: string, cut: string): boolean {
  return text.replace(/\s+/g, "") !== cut.replace(/\s+/g, "");
}

/** True for text that holds more than white space (what counts as said before a reason). */
export function hasWords(text: unknown): boolean {
  return typeof text === "string" && text.trim() !== "";
}

/** How many line breaks the white space at the end of `text` holds (`"Sure.\n \n"`: 2). */
export function trailingBreaks(text: string): number {
  let breaks = 0;
  for (let i = text.length - 1; i >= 0 && /\s/.test(text[i]); i--) if (text[i] === "\n") breaks++;
  return breaks;
}

/** The line breaks that make one blank line after text that ends in `breaks` of them. */
function paragraphBreaks(breaks: number): string {
  return "\n".repeat(Math.max(0, 2 - breaks));
}

/** Adds the length of `text` to that of `answer` in `lengths`. */
function lengthen(lengths: Map<number, TextLength>, answer: number, text: string): void {
  const before = lengths.get(answer) ?? { chars: 0, bytes: 0 };
  lengths.set(answer, { chars: before.chars + text.length, bytes: before.bytes + utf8Length(text) });
}

/**
 * Where an annotation holds its offsets (see `citingWithin`): the field they are under (Chat's
 * `url_citation`, Gemini's `segment`) or the annotation itself; undefined for no object.
 */
function offsetsOf(annotation: unknown): { at: Record<string, unknown>; under?: string } | undefined {
  if (!isRecord(annotation)) return undefined;
  for (const under of ["url_citation", "segment"]) {
    const at = annotation[under];
    if (isRecord(at)) return { at, under };
  }
  return { at: annotation };
}

/** The offset fields of the annotations `citingWithin` reads. */
const OFFSETS = ["start_index", "end_index", "index", "start", "end", "startIndex", "endIndex"];

/**
 * An annotation with every offset it holds (see {@linkcode citingWithin}) `by` on: one of a text the client
 * has after `by` characters (or bytes, as it counts them) the gate wrote or the client had ahead of it. The
 * annotation itself when it holds none, or `by` is 0.
 *
 * @example A Chat url_citation, a Gemini grounding support and a Cohere citation, 14 on
 * ```ts
 * import assert from "node:assert/strict";
 * import { citedOn } from "./shared.ts";
 *
 * const chat = { type: "url_citation", url_citation: { start_index: 0, end_index: 6, url: "u" } };
 * assert.deepEqual(citedOn(chat, 14), {
 *   type: "url_citation",
 *   url_citation: { start_index: 14, end_index: 20, url: "u" },
 * });
 * assert.deepEqual(citedOn({ segment: { startIndex: 0, endIndex: 6 } }, 14), {
 *   segment: { startIndex: 14, endIndex: 20 },
 * });
 * assert.deepEqual(citedOn({ start: 0, end: 6, text: "Bergen" }, 14), { start: 14, end: 20, text: "Bergen" });
 * ```
 */
export function citedOn(annotation: unknown, by: number): unknown {
  const found = by === 0 ? undefined : offsetsOf(annotation);
  if (!found || !OFFSETS.some((k) => typeof found.at[k] === "number")) return annotation;
  const moved: Record<string, unknown> = { ...found.at };
  for (const k of OFFSETS) if (typeof found.at[k] === "number") moved[k] = (found.at[k] as number) + by;
  return found.under === undefined ? moved : { ...annotation as object, [found.under]: moved };
}

/** The annotations each {@linkcode citedOn} `by`; anything else than an array as it is. */
export function allCitedOn(annotations: unknown, by: number): unknown {
  return Array.isArray(annotations) && by !== 0 ? annotations.map((a) => citedOn(a, by)) : annotations;
}

/**
 * The annotations of a text once the gate changed it from `was` to `now` (a written call cut, the reason
 * written after the text kept): those that cite only the characters both share at their start (see
 * {@linkcode citingWithin}). One of text after the cut, moved by it, goes too: the text after a call is
 * tidied (see `cutJoined`), so where its words went cannot be told for sure.
 *
 * @example An annotation of the kept words stays; one of the cut call goes
 * ```ts
 * import assert from "node:assert/strict";
 * import { citingKept } from "./shared.ts";
 *
 * const kept = { type: "url_citation", start_index: 0, end_index: 3 };
 * const cut = { type: "url_citation", url_citation: { start_index: 6, end_index: 17 } };
 * assert.deepEqual(citingKept([kept, cut], "Sure. <tool_call>", "Sure. \n\nStopped."), [kept]);
 * ```
 */
export function citingKept(annotations: unknown, was: string, now: string): unknown {
  return was === now ? annotations : citingWithin(annotations, sharedStart(was, now));
}

/**
 * The annotations that cite only the first `kept` characters of their text, which the client still gets
 * where they were; the array itself when none goes (anything else than an array as it is). Any other goes:
 * kept, it cited the gate's reason, or past the text (a client that renders citations linked words the
 * model never wrote to the model's sources). Offsets are read from OpenAI Responses' annotations
 * (`start_index`, `end_index`, a file's `index`), Chat Completions' (the same under `url_citation`),
 * Cohere's citations (`start`, `end`) and Gemini's grounding supports (`segment.startIndex`, `endIndex`);
 * an annotation with none stays.
 *
 * @example Gemini's grounding supports of the first 12 characters
 * ```ts
 * import assert from "node:assert/strict";
 * import { citingWithin } from "./shared.ts";
 *
 * const first = { segment: { startIndex: 0, endIndex: 12 } };
 * const later = { segment: { startIndex: 13, endIndex: 20 } };
 * assert.deepEqual(citingWithin([first, later], 12), [first]);
 * ```
 */
export function citingWithin(annotations: unknown, kept: number): unknown {
  if (!Array.isArray(annotations)) return annotations;
  const within = (a: unknown) => {
    const at = offsetsOf(a)?.at;
    return !at || OFFSETS.every((k) => typeof at[k] !== "number" || at[k] as number <= kept);
  };
  return annotations.every(within) ? annotations : annotations.filter(within);
}

/**
 * How many characters `a` and `b` share at their start.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sharedStart } from "./shared.ts";
 *
 * assert.equal(sharedStart("Sure. <tool_call>", "Sure. \n\nStopped."), 6);
 * ```
 */
export function sharedStart(a: string, b: string): number {
  let shared = 0;
  while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared++;
  return shared;
}

/**
 * What sets a reason after `before` apart as a paragraph of its own: one blank line after text that says
 * something, counting the line breaks it ends in (after "Sure.\n\n" none more: four read as two blank
 * lines), nothing after white space alone.
 *
 * @example After words, after a blank line, and after nothing
 * ```ts
 * import assert from "node:assert/strict";
 * import { paragraphLead } from "./shared.ts";
 *
 * assert.equal(paragraphLead("Let me check."), "\n\n");
 * assert.equal(paragraphLead("Let me check.\n"), "\n");
 * assert.equal(paragraphLead("Let me check.\n\n"), "");
 * assert.equal(paragraphLead(" \n"), "");
 * ```
 */
export function paragraphLead(before: string): string {
  return hasWords(before) ? paragraphBreaks(trailingBreaks(before)) : "";
}

/**
 * `reason` after the text that stays, as a paragraph of its own after text that says something (see
 * {@linkcode paragraphLead}). The text stays as it came, its white space too: a stream sent it before the
 * calls were judged, and cannot take it back.
 */
export function joinText(before: string, reason: string): string {
  return before + paragraphLead(before) + reason;
}

/**
 * `reason` as a text block of its own after an answer's `texts`: a paragraph of its own where they say
 * something (see {@linkcode paragraphLead}: read joined), as a stream leads the block it writes
 * ({@linkcode StreamFlow.lead}); a client that joins the blocks reads the reason apart from the words
 * before it, by one blank line, streamed or whole.
 *
 * @example After words, after a blank line, and after white space alone
 * ```ts
 * import assert from "node:assert/strict";
 * import { reasonBlock } from "./shared.ts";
 *
 * assert.equal(reasonBlock(["Let me check."], "No."), "\n\nNo.");
 * assert.equal(reasonBlock(["Let me check.\n", "\n"], "No."), "No.");
 * assert.equal(reasonBlock([" "], "No."), "No.");
 * ```
 */
export function reasonBlock(texts: readonly unknown[], reason: string): string {
  return paragraphLead(texts.filter((t) => typeof t === "string").join("")) + reason;
}

/**
 * The texts of an answer's text blocks (or parts) once the calls written into them were cut (`cut`, of
 * `texts` as they came), with `reason` in place of the calls, as a stream writes it: ending the last text
 * that keeps words from the first text a call was cut from on (see {@linkcode callCut}: not one only tidied
 * before it), else standing in that text, on a new paragraph after words said before it. A stream cannot
 * take back the block the client holds open, and a block of its own at the end came after the blocks
 * (thinking) the client already has; read back, the model finds what became of its call where it wrote
 * it. One blank line sets it apart from the text the client keeps before it (see
 * {@linkcode paragraphLead}): the texts that say something, and the blank ones that do not go (`goes`, by
 * their index in `texts`; see {@linkcode mayGoBlank}). Undefined when no call was cut from any of them.
 *
 * @example The reason where the call was, and in a block the cut left blank
 * ```ts
 * import assert from "node:assert/strict";
 * import { placeReason } from "./shared.ts";
 *
 * const call = "<tool_call>{}</tool_call>";
 * assert.deepEqual(placeReason(["Sure.", `Let me look. ${call}`], ["Sure.", "Let me look."], "No."), [
 *   "Sure.",
 *   "Let me look.\n\nNo.",
 * ]);
 * assert.deepEqual(placeReason(["Sure.\n", call], ["Sure.\n", ""], "No."), ["Sure.\n", "\nNo."]);
 * assert.equal(placeReason(["Sure.  "], ["Sure."], "No."), undefined);
 * ```
 */
export function placeReason(
  texts: readonly string[],
  cut: readonly string[],
  reason: string,
  { goes = () => false }: { goes?: (index: number) => boolean } = {},
): string[] | undefined {
  const first = cut.findIndex((text, i) => callCut(texts[i], text));
  if (first === -1) return undefined;
  const at = Math.max(first, cut.findLastIndex((text, i) => i >= first && hasWords(text)));
  const out = [...cut];
  // (standing in a blank text: after the texts before it that stay, see `mayGoBlank`)
  const before = hasWords(cut[at])
    ? cut[at]
    : cut.slice(0, first).filter((text, i) => hasWords(text) || !goes(i)).join("");
  out[at] = (hasWords(cut[at]) ? cut[at] : "") + paragraphLead(before) + reason;
  return out;
}

/**
 * Which of an answer's blocks a cut may leave blank and drop: those from the first text block a written
 * call was cut from on (every one when none was), and the blank ones right before it where that block opens
 * with the call (see {@linkcode blockOpensWithCall}). A stream holds a blank text block's start until it knows:
 * the words before a call came before the call's marker, in its frame or in one of their own, and the client
 * keeps the blank block with them; a call with nothing before it takes the blank block with it. The model's
 * own blank block before prose stays so in a body too, as the Responses body keeps a blank part before a
 * part with words.
 *
 * @example Block 1 came before words, block 3 right before the call's block
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadEngines } from "../engines.ts";
 * import { mayGoBlank } from "./shared.ts";
 *
 * await loadEngines(); // (it reads the calls written into the text)
 * const blocks = ["Sure.", "\n", "More.", " ", "<tool_call>\u2026</tool_call>"].map((text) => ({ text }));
 * const goes = mayGoBlank(blocks, blocks, ["Sure.", "\n", "More.", " ", ""]);
 * assert.deepEqual([0, 1, 2, 3, 4].map(goes), [false, false, false, true, true]);
 * ```
 *
 * @param blocks The answer's blocks (or parts), in order.
 * @param texts Its text blocks, among `blocks`.
 * @param cut The text of each of `texts` once the calls were cut.
 */
export function mayGoBlank(
  blocks: readonly unknown[],
  texts: readonly { text: string }[],
  cut: readonly string[],
): (index: number) => boolean {
  const at = cut.findIndex((text, i) => text !== texts[i].text);
  let from = at < 0 ? 0 : blocks.indexOf(texts[at]);
  const blank = (block: unknown) =>
    texts.includes(block as { text: string }) && !hasWords((block as { text: string }).text);
  const steps = at < 0 || blockOpensWithCall(texts.map((t) => t.text), at, cut[at]);
  while (steps && from > 0 && blank(blocks[from - 1])) from--;
  return (index) => index >= from;
}

/**
 * Whether `text` says nothing from offset `from` (where a block, a part or a stretch of held text starts) up
 * to the first of the `calls` read in it (offsets in `text`) that ends past `from`, or to `end` where that
 * comes first (or no call does): its place opens with the call (see {@linkcode mayGoBlank}). The one rule
 * for a body's blocks ({@linkcode blockOpensWithCall}) and a stream's held stretches (`TextCalls`).
 *
 * @example Words before the call, and none
 * ```ts
 * import assert from "node:assert/strict";
 * import { opensWithCall } from "./shared.ts";
 *
 * const text = "Sure. Let me look. <tool_call>{}</tool_call>";
 * const calls = [{ block: { start: 19, end: text.length } }];
 * assert.equal(opensWithCall(text, 5, calls), false);
 * assert.equal(opensWithCall(text, 18, calls), true);
 * ```
 */
export function opensWithCall(
  text: string,
  from: number,
  calls: readonly { block: { start: number; end: number } }[],
  end: number = text.length,
): boolean {
  const first = calls.find((c) => c.block.end > from);
  const until = first ? Math.min(end, first.block.start) : end;
  return !hasWords(text.slice(from, Math.max(from, until)));
}

/**
 * Whether the text `texts[at]`, `cut` once the calls written into the texts were cut, opens with the first
 * call written into it (or into one before it running on into it), as {@linkcode opensWithCall} reads the
 * texts joined: the text before a cut call stays as it came (see `cutCalls`), so it is the start the cut text
 * shares with the text, up to the first call read.
 *
 * @example Words before the call, and none
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadEngines } from "../engines.ts";
 * import { blockOpensWithCall } from "./shared.ts";
 *
 * await loadEngines();
 * const call = `<tool_call>{"name": "f", "arguments": {}}</tool_call>`;
 * assert.equal(blockOpensWithCall(["Sure.", `Let me look. ${call}`], 1, "Let me look. "), false);
 * assert.equal(blockOpensWithCall(["Sure.", ` ${call} Done.`], 1, "Done."), true);
 * ```
 */
export function blockOpensWithCall(texts: readonly string[], at: number, cut: string): boolean {
  const text = texts[at];
  let shared = 0;
  while (shared < text.length && shared < cut.length && text[shared] === cut[shared]) shared++;
  const start = texts.slice(0, at).reduce((n, t) => n + t.length, 0);
  const joined = texts.join("");
  return opensWithCall(joined, start, extractToolCalls(joined), start + shared);
}

/**
 * Where the pieces of an answer's streamed text were read (the block or item of each), by their offsets in
 * the whole text: text the gate writes at an offset goes in the place that holds it.
 */
export class TextPlaces<T> {
  /** The runs of text read in one place, in order, each with where it began and ended in the whole text. */
  readonly #runs: { key: string; place: T; start: number; end: number }[] = [];
  /** The runs of each place (a hostile stream may have many places: no walk over them all per place). */
  readonly #byKey = new Map<string, { start: number; end: number }[]>();
  /** The last answer of `#keptLength` per place. */
  readonly #kept = new Map<string, { at: number; read: number; length: number }>();
  #length = 0;

  /**
   * What the runs kept weigh, counted as text: a hostile stream that moves its text between two blocks at
   * every delta keeps a run per delta, so they are bounded with the text by `maxResponseBytes`.
   */
  get size(): number {
    return this.#runs.length * 64;
  }

  /** Notes `text`, read at `place` (`key` tells places apart). */
  read(text: string, key: string, place: T): void {
    if (text === "") return;
    const last = this.#runs.at(-1);
    if (last?.key === key) last.end += text.length;
    else {
      const run = { key, place, start: this.#length, end: this.#length + text.length };
      this.#runs.push(run);
      const own = this.#byKey.get(key);
      if (own) own.push(run);
      else this.#byKey.set(key, [run]);
    }
    this.#length += text.length;
  }

  /** The place whose text holds `offset` (the last place read, past the end); undefined before any. */
  at(offset: number): T | undefined {
    return this.#holder(offset)?.place;
  }

  /** Whether the text at `offset` is the first read in its place. */
  opens(offset: number): boolean {
    return offset === 0 || this.#holder(offset - 1)?.key !== this.#holder(offset)?.key;
  }

  /**
   * The text of the place `key` once the text from the first change's `at` on is the changes' tails (each
   * written in the place that holds its `at`), given that place's text as read (`own`): its part before
   * that `at`, then the tails of the changes it holds.
   */
  retold(key: string, own: string, changes: readonly TextChange[]): string {
    const runs = this.#byKey.get(key);
    if (!runs || changes.length === 0) return own;
    let text = own.slice(0, this.#keptLength(key, runs, changes[0].at));
    for (const c of changes) if (this.#holder(c.at)?.key === key) text += c.tail;
    return text;
  }

  /** The length of {@linkcode TextPlaces.retold} of the place `key`, for a place whose `own` text is as read. */
  retoldLength(key: string, changes: readonly TextChange[]): number {
    const runs = this.#byKey.get(key) ?? [];
    if (changes.length === 0) return runs.reduce((n, r) => n + r.end - r.start, 0);
    let length = this.#keptLength(key, runs, changes[0].at);
    for (const c of changes) if (this.#holder(c.at)?.key === key) length += c.tail.length;
    return length;
  }

  /**
   * How much of the place `key`'s text comes before `at`: its runs wholly before it and the start of the
   * one that holds it (a prefix: the runs after `at` follow). Kept per place, as every held frame that
   * repeats the text asks it for one `at` (walking the runs at each was quadratic in a hostile stream).
   */
  #keptLength(key: string, runs: readonly { start: number; end: number }[], at: number): number {
    const read = this.#length; // (text read since asks again)
    const known = this.#kept.get(key);
    if (known?.at === at && known.read === read) return known.length;
    let length = 0;
    for (const r of runs) length += Math.max(0, Math.min(r.end - r.start, at - r.start));
    this.#kept.set(key, { at, read, length });
    return length;
  }

  /** The run that holds `offset` (the last, past the end), by a binary search of the runs in order. */
  #holder(offset: number): { key: string; place: T } | undefined {
    const runs = this.#runs;
    let low = 0;
    let high = runs.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (runs[mid].end <= offset) low = mid + 1;
      else high = mid;
    }
    return runs[Math.min(low, runs.length - 1)];
  }
}
