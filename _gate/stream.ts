/**
 * The stream gate: a byte-stream transform that passes text through as it comes and withholds the
 * tool-call part of a stream until a judge has seen the assembled calls.
 *
 * @module
 */
import { errorText, isRecord, plural } from "../_common/values.ts";
import { parseJsonSafe } from "../_common/json.ts";
import type { Verdict } from "../types.ts";
import { CallAssembler } from "./assemble.ts";
import { type AssembledToolCall, FindingList, type StreamDialect, type StreamFinding } from "./calls.ts";
import { DIALECTS } from "./dialects/mod.ts";
import {
  type AnswerReason,
  type FrameRouter,
  type Held,
  joinsEarlierWords,
  PARAGRAPH,
  type PlaceLead,
  type ResumePoint,
  StreamFlow,
  type TextEnding,
  type TurnRecorder,
} from "./dialects/shared.ts";
import { type FrameParser, ndjsonParser, reframe, sseParser } from "./sse.ts";
import { type Usage, UsageTally } from "./usage.ts";
import type { RoutedFrame, TextWatches } from "./text_watch.ts";
import { engines, loadEngines } from "./engines.ts";
import { DEFAULT_MAX_RESPONSE_BYTES, ResponseTooLargeError } from "./bound.ts";

/** What a judge says about the calls of one stream. */
export interface StreamJudgement {
  /** The verdict from the validator. */
  verdict: Verdict;
  /** The text the client sees in place of the calls when the verdict rejects them. */
  reason: string;
  /** Set when only the rejected calls are to be removed (the others kept): the text saying so. */
  partialReason?: string;
  /** What each answer reads in place of the calls it lost (see `Judge.answerReason`); absent: `reason`. */
  told?: AnswerReason;
  /** As `told`, for `partialReason`. */
  partialTold?: AnswerReason;
}

/** What each answer reads of a `judgement` (partial or not): its own reason, else the turn's. */
function toldOf(judgement: StreamJudgement, partial: boolean): AnswerReason {
  const told = partial ? judgement.partialTold : judgement.told;
  const reason = partial ? judgement.partialReason! : judgement.reason;
  return told ?? (() => reason);
}

/** What the stream gate reports when the stream ends. */
export interface StreamReport {
  /** The dialect the stream was read as. */
  dialect: StreamDialect;
  /** The calls the stream carried. */
  calls: AssembledToolCall[];
  /** The verdict, or undefined when the stream carried no calls. */
  verdict?: Verdict;
  /** Problems with individual events (malformed ones were dropped from the forwarded stream). */
  findings: StreamFinding[];
  /** True when the calls were replaced by a text event. */
  replaced: boolean;
  /** The text that replaced the calls (or that a retry answered), when `replaced`. */
  reason?: string;
  /** True when the calls were rejected and a retry's stream follows in their place. */
  retried?: boolean;
  /** This attempt's usage as the provider reported it (the client sees every attempt's together). */
  usage?: Usage;
}

/** A rejected turn handed to {@linkcode StreamGateOptions.retry}. */
export interface StreamRetry {
  /** The calls, as assembled. */
  calls: AssembledToolCall[];
  /** The verdict that rejected them. */
  verdict: Verdict;
  /** What the stream said (text, reasoning, calls) as a whole response body of its dialect. */
  body: Record<string, unknown>;
  /** Set when the calls were written into the text. */
  fromText?: true;
}

/**
 * A retry's answer. `stream` gates it, with where its stream continues (`resume`), complete once the retry
 * step has sent what goes ahead of it (the text held, the blocks' ends): its stream exists only from then on,
 * so nothing of it is read, and no reason of it written, before the record of what the client has is whole.
 * `cancel` lets it go unread (the client went meanwhile, or the retry step failed), closing the provider's
 * connection; it never rejects.
 */
export interface RetryAnswer {
  /** The answer's gated stream, continuing the client's message at `resume`. Called at most once. */
  stream(resume: ResumePoint): ReadableStream<Uint8Array>;
  /** Cancels the answer's body unread: instead of `stream`, or after `stream` threw (the client has nothing). */
  cancel(): Promise<void>;
}

/** Options for {@linkcode StreamGate}. */
export interface StreamGateOptions {
  /**
   * Judges the assembled calls once the stream has ended. `dropped`: the answers the router told of calls it
   * dropped as malformed, just ahead of where the judgement's reason goes (see `FrameRouter.ownReason`).
   */
  judge: (
    calls: AssembledToolCall[],
    turn: { dropped: ReadonlySet<number> },
  ) => StreamJudgement | Promise<StreamJudgement>;
  /** Called once when the stream ends, with what happened. Errors it throws are swallowed. */
  onReport?: (report: StreamReport) => void;
  /**
   * Watch the text of streams (of every dialect) for calls written into it (`<tool_call>`, fenced JSON, ...)
   * and hold them back until judged, as the native calls are. Default true.
   */
  extract?: boolean;
  /**
   * Whether the request declares tools. Without any, a message that opens with JSON is structured output,
   * not a bare call, and flows at once. Default true (held until its first key shows it is not a call).
   */
  toolsDeclared?: boolean;
  /** The request's declared tools: calls written into text are read (and their values typed) against them. */
  tools?: readonly unknown[];
  /**
   * How many answers the request asked for (OpenAI Chat `n`, Gemini `candidateCount`): a choice past them, or
   * a Gemini chunk of more candidates, is refused. Default 1.
   */
  answers?: number;
  /**
   * Asked when the calls were rejected: the answer to forward in their place, continuing this message (see
   * {@linkcode RetryAnswer}), or undefined for the usual replacement. Only for dialects whose frames can be
   * resumed.
   */
  retry?: (turn: StreamRetry) => Promise<RetryAnswer | undefined>;
  /**
   * Set on a retry's stream: the positions the client already has, so this stream continues that message
   * (Anthropic drops its `message_start` and shifts its block indices; Cohere drops `message-start`).
   */
  resume?: ResumePoint;
  /**
   * The most the gate holds of the stream at a time (`maxResponseBytes`): the frame not yet ended, the
   * frames withheld, the message text watched for written calls, what the router keeps for its ending,
   * each measured as the length of its text. Past it the source is cancelled and the stream errors with
   * a {@linkcode ResponseTooLargeError} after what was already judged. Default 64 MiB.
   */
  maxBytes?: number;
  /**
   * The caller's abort signal, when the request has one: a read that fails once it aborted is the client's
   * own cancel, not the provider's fault (nothing is reported, nothing more sent; the stream errors with it).
   */
  signal?: AbortSignal | null;
}

/** One frame off the wire: its exact text, and its data (an SSE `data:` field, an NDJSON line). */
interface WireFrame {
  raw: string;
  data?: string;
  /** An SSE frame's `event:` name. */
  event?: string;
}

/** Where the gate's output goes: a stream controller. */
interface Sink {
  enqueue(chunk: Uint8Array): void;
}

/** Forwards every chunk of `stream` to `controller`. */
async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  controller: Sink,
): Promise<void> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    controller.enqueue(value);
  }
}

/**
 * The calls of a stream of several answers (OpenAI Chat `n`, Gemini `candidateCount`) answer by answer, each
 * answer's in the order they came, as a body lists them: interleaved chunks otherwise set the calls, and so
 * the reason's paragraphs, in the order the answers happened to send them.
 */
function inAnswerOrder(calls: AssembledToolCall[]): AssembledToolCall[] {
  return calls.some((c, i) => i > 0 && c.choice < calls[i - 1].choice)
    ? calls.map((c, i) => ({ c, i })).sort((a, b) => a.c.choice - b.c.choice || a.i - b.i).map(({ c }) => c)
    : calls;
}

/**
 * The calls as a client that keeps one call per index reads them, when the stream reused an index for a
 * second call (the gate keeps such calls apart; the OpenAI SDK merges them: the later name and id, the
 * arguments run together); undefined when no index was reused. A merged call whose arguments are not JSON
 * is left out: no client can run it.
 */
function mergedByIndex(
  calls: readonly AssembledToolCall[],
  findings: readonly StreamFinding[],
): AssembledToolCall[] | undefined {
  if (!findings.some((f) => f.code === "reused_index")) return undefined;
  const groups = new Map<string, AssembledToolCall[]>();
  for (const c of calls) {
    const key = `${c.choice}:${c.slot}`;
    const group = groups.get(key);
    if (group) group.push(c); // not a copy per call: a stream that reuses one index for all is long
    else groups.set(key, [c]);
  }
  const merged: AssembledToolCall[] = [];
  for (const group of groups.values()) {
    if (group.length === 1) {
      merged.push(group[0]);
      continue;
    }
    const call = group.reduce((a, c) => ({
      ...a,
      id: c.id || a.id,
      syntheticId: c.id ? c.syntheticId : a.syntheticId,
      name: c.name || a.name,
      arguments: a.arguments + c.arguments,
    }));
    if (parseJsonSafe(call.arguments).ok) merged.push(call);
  }
  return merged.length < calls.length ? merged : undefined;
}

/**
 * The calls with each name sent in differing pieces read as the official openai SDK reads it (the last
 * piece); undefined when no name came so.
 */
function lastNamed(calls: readonly AssembledToolCall[]): AssembledToolCall[] | undefined {
  if (!calls.some((c) => c.lastName !== undefined)) return undefined;
  return calls.map((c) => (c.lastName === undefined ? c : { ...c, name: c.lastName }));
}

/**
 * The calls with each call whose arguments came in differing versions repeated once per version (so a
 * rejected version rejects its call); undefined when none did.
 */
function everyVersion(calls: readonly AssembledToolCall[]): AssembledToolCall[] | undefined {
  if (!calls.some((c) => c.otherArguments !== undefined)) return undefined;
  return calls.flatMap((
    c,
  ) => [c, ...(c.otherArguments ?? []).map((arguments_) => ({ ...c, arguments: arguments_ }))]);
}

/** A judgement that rejects every call unjudged, for `reason` (the gate could not do its part). */
function failedJudgement(calls: readonly AssembledToolCall[], reason: string): StreamJudgement {
  return {
    verdict: {
      allowed: false,
      blocked: true,
      rejectedIndices: calls.map((_, i) => i),
      calls: calls.map((c, index) => ({ index, id: c.id, name: c.name, allowed: false, findings: [] })),
    },
    reason,
  };
}

/** An NDJSON parser whose lines read as frames. */
function ndjsonFrames(): FrameParser<WireFrame> {
  const lines = ndjsonParser();
  return {
    push: (text) => lines.push(text).map((l) => ({ raw: l.raw, data: l.text })),
    end: () => lines.end().map((l) => ({ raw: l.raw, data: l.text })),
    get pending() {
      return lines.pending;
    },
  };
}

/** One encoder for every gate: encoding keeps no state. */
const ENCODER = new TextEncoder();
/**
 * How long, in milliseconds, the gate waits for the provider to close a stream once its message ended (its
 * final frame: `data: [DONE]`, Ollama's `done`, see `FrameRouter.final`), counted from that frame and not
 * restarted by keep-alives (every 100 ms they would hold it for ever); where the client reads on past that
 * frame (the Anthropic, Cohere, Responses and Gemini readers), counted again from each later frame it reads that is
 * not a keep-alive (`KEEP_ALIVE_EVENTS`): the provider was still talking, and the client read it all without
 * the gate (cut, a message_stop sent early lost the words after it). A provider closes at
 * once, in the same write or the next few milliseconds, so the grace costs it nothing; one that keeps the
 * connection open holds the answer (the held final frame, the calls to judge) at most this long, where
 * before the client waited until the connection dropped. Half a second is far above the gap between two
 * writes of one flush even over a slow link (a line the provider flushes late is still judged or told) and
 * under what a user notices at the end of an answer that took seconds.
 */
const FINAL_GRACE_MS = 500;

/**
 * Events that only keep a connection open: Anthropic's `ping`, OpenAI Responses' `keepalive` (which the
 * openai SDK's accumulator knows). They do not restart the grace after a final frame (see `FINAL_GRACE_MS`).
 */
const KEEP_ALIVE_EVENTS: ReadonlySet<unknown> = new Set(["ping", "keepalive"]);

/** The dialects the openai SDK reads, which stops reading at `data: [DONE]` (see `StreamGate.#afterEnd`). */
const OPENAI_DIALECTS: ReadonlySet<StreamDialect> = new Set(["openai_chat", "openai_responses"]);

/**
 * The gate over the bytes of one streamed response: {@linkcode StreamGate.gate} passes text through as it
 * comes and withholds the tool-call part until the stream ends and `judge` has seen the assembled calls.
 * Allowed calls are then released byte for byte; rejected ones are replaced by a text event carrying the
 * reason and a proper stop. Frames nothing was done to leave as they came, in the read they arrived in.
 *
 * Not a `TransformStream`: one costs each response tens of microseconds to build and pipe before its
 * first byte, and a hop per chunk; the gate reads its source on demand instead.
 */
export class StreamGate {
  readonly #dialect: StreamDialect;
  readonly #options: StreamGateOptions;
  readonly #router: FrameRouter;
  readonly #parser: FrameParser<WireFrame>;
  /**
   * Watches the streamed text for calls written into it; undefined where that is off or impossible. Made
   * when the stream is first read, once the extractor it runs is loaded ({@linkcode StreamGate.gate}).
   */
  #text: TextWatches | undefined;
  #started = false;
  /** Set when the client cancels: nothing more is judged, retried or reported. */
  #cancelled = false;
  /** Set when the stream passed the bound: the error the client reads after what was sent. */
  #failure: ResponseTooLargeError | undefined;
  /** The reader of a retry's stream being forwarded, so a cancel reaches it too. */
  #retryReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  readonly #assembler = new CallAssembler();
  /**
   * What this stream's message said, as the provider sent it (a retry sends it back); kept only while a
   * retry may be sent and the frames it read stay under the bound (past it, a rejection ends in the usual
   * replacement rather than a retry).
   */
  #turn: TurnRecorder | undefined;
  /** The length of the frames `#turn` has read. */
  #turnSize = 0;
  readonly #maxBytes: number;
  /** This attempt's usage; on a retry's stream, the usage events report the attempts' total. */
  readonly #usage: UsageTally;
  /** The frames sent and held; a router asks it which call the assembler filed an event under. */
  readonly #flow: StreamFlow;
  /** Frames dropped because a client could not read them. */
  readonly #dropped = new FindingList();
  /**
   * Keeps every BOM (the SSE parser drops one at the start of a line, as the clients do): Deno's default
   * decoder drops a BOM at the start of any read, so what the gate read would hang on where reads split.
   */
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  #frames = 0;
  /** OpenAI's `data: [DONE]`, sent last. */
  #doneFrame: string | undefined;
  /**
   * Whether the client stops reading here: after OpenAI's `data: [DONE]`, or an Ollama line that ended the
   * message (`done`). What follows is dropped (see `#afterEnd`).
   */
  #ended = false;
  /**
   * When the message's final frame was read (`performance.now()`: a wall clock set back meanwhile held the
   * grace as long again): the provider has `FINAL_GRACE_MS` to close.
   */
  #finalAt: number | undefined;
  /** The reads of the source since the final frame (see `#readInGrace`). */
  #graceReads = 0;
  /**
   * On a retry's stream, where the dialect parts its text from the client's (see `TextFrames.scored` and
   * `TextFrames.lead`): the answers whose client text ends mid-line and that have sent no text yet.
   */
  readonly #runsOn: Set<number>;

  /** Creates a gate for a stream of `dialect`. */
  constructor(dialect: StreamDialect, options: StreamGateOptions) {
    this.#dialect = dialect;
    this.#options = options;
    this.#router = DIALECTS[dialect].router({ answers: options.answers });
    this.#turn = options.retry ? DIALECTS[dialect].turn() : undefined;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#usage = new UsageTally(dialect, options.resume?.usage);
    this.#flow = new StreamFlow((event) => this.#assembler.filed(event), options.resume);
    this.#parser = this.#router.framing === "ndjson" ? ndjsonFrames() : sseParser();
    this.#runsOn = new Set(
      this.#router.text?.scored || this.#router.text?.lead ? options.resume?.runsOn : [],
    );
  }

  /** Before the first frame: loads the engines and, where the text is watched, makes its watch. */
  async #start(): Promise<void> {
    this.#started = true;
    await loadEngines();
    const text = this.#router.text;
    const options = this.#options;
    if (options.extract === false || !text) return;
    const { TextWatches } = engines().textWatch;
    this.#text = new TextWatches(this.#dialect, text, {
      json: options.toolsDeclared ?? true,
      tools: options.tools,
    });
  }

  /**
   * Gates `source`: the stream returned reads `source` as it is itself read (reading on past a frame
   * that is held). Call once per gate.
   */
  gate(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = source.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (this.#failure) return controller.error(this.#failure);
        if (!this.#started) await this.#start();
        let sent = false;
        const sink: Sink = {
          enqueue: (chunk) => {
            sent = true;
            controller.enqueue(chunk);
          },
        };
        try {
          while (!sent) {
            const { done, value } = await this.#read(reader);
            // A cancel ends a pending read as if the stream were over: that is no turn to judge or retry.
            if (this.#cancelled) return;
            if (done) {
              await this.#flush(sink);
              return controller.close();
            }
            this.#transform(value, sink);
          }
        } catch (e) {
          if (this.#options.signal?.aborted) {
            // The client's abort: its body errors as fetch's does, and no retry being forwarded stays open.
            this.#cancelled = true;
            await this.#retryReader?.cancel(e).catch(() => {});
            throw e;
          }
          if (!(e instanceof ResponseTooLargeError)) throw e;
          // Held frames are dropped unjudged. Stop the provider now; what was judged and sent in this pull
          // reaches the client first (an error discards the chunks not yet read), the error on the next.
          this.#cancelled = true;
          this.#failure = e;
          await Promise.all([reader.cancel(e), this.#retryReader?.cancel(e)]).catch(() => {});
          if (!sent) controller.error(e);
        }
      },
      cancel: async (reason) => {
        this.#cancelled = true;
        await Promise.all([reader.cancel(reason), this.#retryReader?.cancel(reason)]);
      },
    }, { highWaterMark: 0 });
  }

  /**
   * The next chunk of the source; where it fails after an Ollama message ended, the end of the stream (with
   * a finding): the ollama client stops reading at the final chunk, which the gate holds to the end, so it
   * read the error where, without the gate, it had its answer whole. (The openai SDK reads to the end after
   * `[DONE]`, and throws a failure there as it comes.) A failure once the client aborted is its own: thrown.
   */
  async #read(
    reader: ReadableStreamDefaultReader<Uint8Array>,
  ): Promise<ReadableStreamReadResult<Uint8Array>> {
    try {
      return this.#finalAt === undefined ? await reader.read() : await this.#readInGrace(reader);
    } catch (e) {
      if (!this.#ended || this.#router.framing !== "ndjson" || this.#options.signal?.aborted) throw e;
      this.#drop(`stream could not be read after its final chunk: ${errorText(e)}`);
      return { done: true, value: undefined };
    }
  }

  /**
   * The next chunk of a source whose message ended, or, when the provider neither sends one nor closes
   * within `FINAL_GRACE_MS` of the final frame, the end of the stream (with a finding), the source cancelled:
   * the client has its answer then, where it waited for a connection the provider kept open.
   */
  async #readInGrace(
    reader: ReadableStreamDefaultReader<Uint8Array>,
  ): Promise<ReadableStreamReadResult<Uint8Array>> {
    // (a body with each chunk ready at once resolves every read as a microtask: a flood of keep-alives,
    // each dropped or sent nowhere, held the event loop for the whole grace, no timer or other request
    // running; a provider that closes is read at once, the first read after the final frame not delayed)
    if (this.#graceReads++ > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    const left = this.#finalAt! + FINAL_GRACE_MS - performance.now();
    // (past the grace no read is raced: a provider that keeps sending, keep-alives queued faster than a timer
    // fires, would win every race)
    if (left > 0) {
      const read = reader.read();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), left));
      try {
        const result = await Promise.race([read, late]);
        if (result) return result;
      } finally {
        clearTimeout(timer);
      }
      read.catch(() => {}); // (the cancel below settles the read left pending)
    }
    this.#drop(
      `stream was still open ${FINAL_GRACE_MS} ms after its message ended; the gate ended it there`,
    );
    reader.cancel().catch(() => {});
    return { done: true, value: undefined };
  }

  #transform(chunk: Uint8Array, controller: Sink): void {
    try {
      const text = this.#decoder.decode(chunk, { stream: true });
      for (const frame of this.#parser.push(text)) this.#onFrame(frame);
    } catch (e) {
      this.#drop(`stream could not be read: ${errorText(e)}`);
    }
    this.#send(controller);
    this.#bound();
  }

  /** Throws a {@linkcode ResponseTooLargeError} when what the gate holds has passed the bound. */
  #bound(): void {
    const max = this.#maxBytes;
    if (this.#parser.pending > max) {
      const what = this.#router.framing === "ndjson"
        ? "a stream line without end"
        : "a stream event without end";
      throw new ResponseTooLargeError(max, what);
    }
    if (this.#flow.heldSize + (this.#text?.queued ?? 0) > max) {
      throw new ResponseTooLargeError(max, "the stream events held for judging");
    }
    if ((this.#text?.size ?? 0) > max) throw new ResponseTooLargeError(max, "the streamed message's text");
    if ((this.#router.kept ?? 0) > max) throw new ResponseTooLargeError(max, "the stream's items kept");
  }

  async #flush(controller: Sink): Promise<void> {
    try {
      const text = this.#decoder.decode();
      for (const frame of [...this.#parser.push(text), ...this.#parser.end()]) this.#onFrame(frame);
      const next = await this.#finish();
      if (this.#options.signal?.aborted) {
        // (the client aborted while the calls were judged or a retry asked: it reads neither the ending nor
        // the retry, the follow-up's failure no reason to send the clean stop)
        await next?.cancel().catch(() => {});
        this.#options.signal.throwIfAborted();
      }
      if (next && this.#cancelled) await next.cancel();
      else if (next) {
        this.#send(controller);
        this.#retryReader = next.getReader();
        await pump(this.#retryReader, controller);
      }
    } catch (e) {
      // A retry's stream that passed the bound ends this one too, as does the client's abort of it.
      if (e instanceof ResponseTooLargeError || this.#options.signal?.aborted) throw e;
      this.#drop(`stream could not be read: ${errorText(e)}`);
    }
    this.#send(controller);
  }

  #send(controller: Sink): void {
    const text = this.#flow.take();
    if (text !== undefined) controller.enqueue(ENCODER.encode(text));
  }

  #drop(message: string): void {
    this.#dropped.add({ code: "malformed_event", message, event: this.#frames - 1 });
  }

  #onFrame(frame: WireFrame): void {
    let raw = frame.raw;
    const data = frame.data;
    this.#frames++;
    const flow = this.#flow;
    if (this.#ended) return this.#afterEnd(data);
    if (data === undefined || data.trim() === "") {
      // Comments, keep-alives, blank lines: forward unless a call is pending (then keep the order).
      if (flow.pending) flow.hold({ raw, tool: false });
      else flow.send(raw);
      return;
    }
    const openai = OPENAI_DIALECTS.has(this.#dialect);
    // (the openai SDK ends at any data that starts with [DONE], "[DONE]!" too: taken for JSON not read and
    // dropped, it let the client read on, and run a call it would never have seen)
    if (
      this.#router.framing === "sse" && (data.trim() === "[DONE]" || (openai && data.startsWith("[DONE]")))
    ) {
      this.#doneFrame = raw;
      // (the openai SDK reads no further; the Anthropic SDK skips a frame with no event name and reads on)
      this.#ended = openai;
      this.#finalAt ??= performance.now();
      return;
    }
    const parsed = parseJsonSafe(data);
    if (!parsed.ok || !isRecord(parsed.value)) {
      // A client would throw on this frame; it carries nothing a judge can use (but perhaps a call).
      this.#router.unread?.(data);
      return this.#drop(
        parsed.ok
          ? "stream event is not a JSON object; it was dropped"
          : "stream event is not JSON; it was dropped",
      );
    }
    let event = parsed.value;
    // (as the ollama client reads it: any `done` that is true to JavaScript ends its reading)
    if (this.#router.framing === "ndjson" && event.done) this.#ended = true;
    if (this.#ended || this.#router.final?.(event)) this.#finalAt ??= performance.now();
    const refused = this.#router.refuse?.(event, frame.event);
    if (refused !== undefined) {
      this.#drop(refused);
      // (the finish or words a refused frame carried beside what was refused: dropped with it, the client
      // never saw its answer end, and the model was not told)
      const rest = this.#router.rest?.(event);
      if (!rest) return;
      ({ raw, event } = { raw: this.#reframe(raw, rest), event: rest });
    }
    // (a frame the client reads on past the final one: the grace runs from here, see `FINAL_GRACE_MS`)
    if (this.#finalAt !== undefined && !this.#ended && !KEEP_ALIVE_EVENTS.has(event.type)) {
      this.#finalAt = performance.now();
    }
    if (this.#router.place) ({ raw, event } = this.#router.place(raw, event, frame.event));
    if (this.#turn) {
      this.#turnSize += raw.length;
      if (this.#turnSize > this.#maxBytes) this.#turn = undefined;
      else this.#turn.read(event);
    }
    this.#usage.read(event);
    if (this.#options.resume !== undefined && this.#router.resume) {
      const resumed = this.#router.resume(raw, event, this.#options.resume);
      if (!resumed) return;
      ({ raw, event } = resumed);
      const counted = this.#usage.adjust(event);
      if (counted) ({ raw, event } = { raw: this.#reframe(raw, counted), event: counted });
    }
    const lead = this.#runsOn.size > 0 ? this.#router.text?.lead : undefined;
    for (const f of (lead && this.#lead(raw, event, lead)) || [{ raw, event }]) this.#pass(f.raw, f.event);
  }

  /**
   * A frame after `data: [DONE]`, or a line after an Ollama final chunk, where the openai SDK and the ollama
   * client stop reading: dropped, as it would never reach the client's reader (passed on, it went ahead of
   * the gate's own `[DONE]`, which ends what the gate sends, and a call after the provider's reached the
   * client; behind Ollama's final chunk, held to the end, lines were held without bound). One that names a
   * call is taken for a dropped call's, as a frame not read is (see `FrameRouter.unread`), and told;
   * comments, blank lines and a second `[DONE]` go unsaid. (Only where those clients read: the Anthropic SDK
   * skips a `[DONE]` and reads on, so there what follows is judged and passed, the `[DONE]` sent last.)
   */
  #afterEnd(data: string | undefined): void {
    if (data === undefined || data.trim() === "" || data.trim() === "[DONE]") return;
    this.#router.unread?.(data, true);
    this.#drop(
      this.#doneFrame !== undefined
        ? "stream event after data: [DONE], where clients stop reading; it was dropped"
        : "stream line after the final chunk (done), where clients stop reading; it was dropped",
    );
  }

  /** Reads a frame as the client will have it, and routes it (through the watch of its text, where on). */
  #pass(raw: string, event: Record<string, unknown>): void {
    const flow = this.#flow;
    this.#assembler.push(event);
    this.#router.note?.(event, raw);
    if (this.#runsOn.size > 0 && !this.#router.text?.lead) this.#separate(event);
    // (after the blank line `#separate` writes: the retry's annotations move past it too)
    const cite = this.#options.resume ? this.#router.text?.cite : undefined;
    const cited = cite?.(event, (answer) => flow.ahead(answer));
    if (cited && cited !== event) ({ raw, event } = { raw: this.#reframe(raw, cited), event: cited });
    if (!this.#text) return this.#router.route(raw, event, flow);
    this.#text.watch(raw, event, flow, (frame) => this.#router.route(frame.raw, frame.event, flow));
  }

  /**
   * On a retry's stream, before the first text of each answer whose client text ends mid-line: a blank line
   * in a text frame of its own, where that text joins the client's words (see `joinsEarlierWords`: "Let me
   * look." and "Again." read "Let me look.Again."; not where the frame scores its tokens). A
   * blank line, not a space: the retry is a new turn of the model's, and may open with a heading, a list or
   * a fence, which a space would run into the line before; and it reads as the reason does when the retry
   * is rejected too.
   */
  #separate(event: Record<string, unknown>): void {
    const text = this.#router.text!;
    for (const answer of text.answers?.(event) ?? [0]) {
      if (!this.#runsOn.has(answer)) continue;
      const said = text.read(event, answer).text;
      if (said === "") continue;
      this.#runsOn.delete(answer);
      if (!joinsEarlierWords(text, { text: said, runsOn: true, event, answer })) continue;
      this.#flow.send(text.textFrame(PARAGRAPH, answer, 0));
      this.#flow.sawLead(PARAGRAPH, answer);
    }
  }

  /**
   * `#separate` where the retry's text goes in a place of its own (a block, an item: see `TextFrames.lead`),
   * which clients join with nothing between all the same: the frames to pass in place of `event`, as the
   * dialect splits a start that brings text (see `TextFrames.split`), the delta of the first text led by the
   * blank line in a delta of its own; undefined for `event` alone.
   */
  #lead(
    raw: string,
    event: Record<string, unknown>,
    lead: PlaceLead,
  ): { raw: string; event: Record<string, unknown> }[] | undefined {
    const text = this.#router.text!;
    const pieces = text.split?.(event) ?? [event];
    const first = pieces.findIndex((p) => (lead.text(p) ?? "") !== "");
    if (first < 0) return undefined;
    this.#runsOn.clear();
    if (!joinsEarlierWords(text, { text: lead.text(pieces[first])!, runsOn: true, event: pieces[first] })) {
      return undefined;
    }
    const from = { raw, event };
    const led = [
      ...pieces.slice(0, first),
      ...lead.frames(pieces[first], PARAGRAPH),
      ...pieces.slice(first + 1),
    ];
    return led.map((e) => ({ raw: text.frame(e, from), event: e }));
  }

  /** The wire text of `event` in place of the frame `raw` (keeping an SSE frame's `event:` name). */
  #reframe(raw: string, event: Record<string, unknown>): string {
    if (this.#router.framing === "ndjson") return JSON.stringify(event) + "\n";
    return reframe(event, { raw, event });
  }

  /**
   * At the end: judges what was held and sends the ending. Returns a retry's stream to forward next, when
   * the calls were rejected and a retry was sent in their place.
   */
  async #finish(): Promise<ReadableStream<Uint8Array> | undefined> {
    const assembled = this.#assembler.result();
    const findings = assembled.findings;
    let calls = inAnswerOrder(assembled.calls);
    const flow = this.#flow;
    const route = (frame: RoutedFrame) => this.#router.route(frame.raw, frame.event, flow);
    this.#text?.drain(flow, route);
    const all = [...this.#dropped.items, ...findings];
    const text = this.#text;
    const native = flow.pending ? calls : [];
    const written = text?.settle({ nativeAnswers: new Set(native.map((c) => c.choice)) }, flow, route);
    const failure = text?.failure;
    if (text && failure !== undefined) return this.#finishUnwatched(text, failure, { native, written }, all);
    if (text && written) return await this.#finishWritten(text, written, all, { native, findings });
    let verdict: Verdict | undefined;
    let reason: string | undefined;
    if (flow.pending && calls.length > 0) {
      this.#router.tellDropped?.(flow, new Set(calls.map((c) => c.choice)));
      let judgement: StreamJudgement;
      ({ judgement, calls } = await this.#judgeNative(calls, findings));
      verdict = judgement.verdict;
      if (verdict.allowed) flow.release();
      else {
        // (a retry sends back the first answer and continues it: calls of another (`n`, `candidateCount`)
        // went back beside the first answer's words, and their own answer ended with no reason)
        const next = calls.every((c) => c.choice === 0) ? await this.#retry(calls, verdict) : undefined;
        if (next) {
          this.#report({
            dialect: this.#dialect,
            calls,
            verdict,
            findings: all,
            replaced: true,
            reason: judgement.reason,
            retried: true,
          });
          return next;
        }
        const rejected = new Set(verdict.rejectedIndices); // (a stream may carry 100 000s of calls)
        const dropped = calls.filter((_, i) => rejected.has(i));
        const kept = calls.filter((_, i) => !rejected.has(i));
        if (judgement.partialReason !== undefined && this.#router.dropCalls) {
          reason = judgement.partialReason;
          this.#router.dropCalls(toldOf(judgement, true), { kept, dropped }, flow);
        } else {
          reason = judgement.reason;
          this.#router.replace(toldOf(judgement, false), calls, flow);
        }
      }
    } else {
      flow.release();
      this.#router.tellLate?.(flow);
    }
    if (this.#doneFrame !== undefined) flow.send(this.#doneFrame);
    const replaced = reason !== undefined;
    this.#report({
      dialect: this.#dialect,
      calls,
      verdict,
      findings: all,
      replaced,
      ...(replaced ? { reason } : {}),
    });
    return undefined;
  }

  /**
   * The ending when the text watch failed (a bug in it, see `TextCalls.failure`): what it had not let out
   * is withheld, as a rejected turn's is, and the calls held (native or written) go with it unjudged, as
   * when the judge fails; a stream let on unwatched would carry a call written after that point.
   */
  #finishUnwatched(
    text: TextWatches,
    failure: string,
    { native, written = [] }: { native: AssembledToolCall[]; written?: AssembledToolCall[] },
    findings: StreamFinding[],
  ): undefined {
    const flow = this.#flow;
    const calls = [...native, ...written];
    const { verdict, reason } = failedJudgement(
      calls,
      `toolguard could not watch the streamed text for tool calls, so the rest of it was withheld: ${failure}`,
    );
    this.#router.sendOpenings?.(flow);
    // (a call dropped as malformed beside the calls held is told with them, as beside written calls: held,
    // and led by the watch's ending into its reason; the text held may hold calls)
    const holding = new Set([...native.map((c) => c.choice), ...text.holding()]);
    if (holding.size > 0) this.#router.tellDropped?.(flow, holding, { written: true });
    // (the reason a watch tells goes out now: where frames other than calls were held ahead of its answer's
    // text, after a call, it reached the client before them, in a block or item not yet opened; `replace`
    // tells those answers after them, only those that hold a call: it tells no other)
    const choices = new Set(native.map((c) => c.choice));
    const quiet = new Set([...answersHeldAhead(flow.held)].filter((answer) => choices.has(answer)));
    const withheld = text.withhold(reason, flow, quiet);
    // (the rest of their text withheld, those answers hold no call: a finish for tool use stops normally)
    this.#router.endsWritten?.(flow, withheld);
    // (`replace` sends the held frames without their calls: released as well, the calls went out unjudged;
    // an answer whose text was withheld read the reason there, first, so it reads no second one)
    if (native.length > 0) this.#router.replace(() => reason, native, flow, withheld);
    else flow.release();
    if (this.#doneFrame !== undefined) flow.send(this.#doneFrame);
    this.#report({ dialect: this.#dialect, calls, verdict, findings, replaced: true, reason });
    return undefined;
  }

  /**
   * Judges the native calls of a stream as assembled, and then, while they pass, as a client may run them:
   * calls the gate kept apart but a client merges (a reused index), a name sent in differing pieces under
   * its last piece (the name the openai SDK runs), arguments sent more than once and differing, in each
   * version. The judgement, and the calls as judged by it.
   */
  async #judgeNative(
    calls: AssembledToolCall[],
    findings: readonly StreamFinding[],
  ): Promise<{ judgement: StreamJudgement; calls: AssembledToolCall[] }> {
    let judgement = await this.#judge(calls);
    const merged = judgement.verdict.allowed ? mergedByIndex(calls, findings) : undefined;
    if (merged && merged.length > 0) {
      const asMerged = await this.#judge(merged);
      if (!asMerged.verdict.allowed) ({ judgement, calls } = { judgement: asMerged, calls: merged });
    }
    const named = judgement.verdict.allowed ? lastNamed(calls) : undefined;
    const renamed = judgement.verdict.allowed ? everyVersion(named ?? calls) ?? named : undefined;
    if (renamed) {
      const asRenamed = await this.#judge(renamed);
      if (!asRenamed.verdict.allowed) ({ judgement, calls } = { judgement: asRenamed, calls: renamed });
    }
    return { judgement, calls };
  }

  /**
   * The ending when calls were written into the text. `native` are the calls of the other answers of the
   * stream (OpenAI Chat `n`: a choice that used call fields beside one that wrote its calls), with the
   * assembler's findings: judged with the written ones as one turn, withheld whole when any is rejected,
   * and not retried.
   */
  async #finishWritten(
    text: TextWatches,
    written: AssembledToolCall[],
    findings: StreamFinding[],
    other: { native: AssembledToolCall[]; findings: readonly StreamFinding[] },
  ): Promise<ReadableStream<Uint8Array> | undefined> {
    const native = other.native;
    const flow = this.#flow;
    let calls = written;
    let judgement: StreamJudgement;
    let told: string | undefined; // (the partial reason, when drop-call cut only the rejected calls)
    if (native.length > 0) {
      // (as `#finish` does: a call dropped as malformed beside the native calls held is told with them)
      this.#router.tellDropped?.(flow, new Set(native.map((c) => c.choice)));
      // (and beside the written ones: a chunk of no known answer may have been any answer's)
      this.#router.tellDropped?.(flow, new Set(written.map((c) => c.choice)), { written: true });
      const first = await this.#judgeNative(native, other.findings);
      calls = [...first.calls, ...written];
      judgement = await this.#judge(calls);
      if (!judgement.verdict.allowed) {
        // (no `sendOpenings`: the dialects that hold openings carry one answer, and it carries no written
        // call beside native ones: `settle` reads none in an answer that used call fields)
        text.conclude({ allowed: false, reason: toldOf(judgement, false) }, flow);
        // (the answers that wrote their calls hold none now: a finish for tool use there stops normally)
        this.#router.endsWritten?.(flow, new Set(written.map((c) => c.choice)));
        this.#router.replace(toldOf(judgement, false), first.calls, flow);
      } else flow.release();
    } else {
      // (a call dropped as malformed beside the written calls is told with them: its words held after their
      // text, never sent ahead of the judgement, and led by `conclude` into a rejection's reason)
      this.#router.tellDropped?.(flow, new Set(written.map((c) => c.choice)), { written: true });
      judgement = await this.#judge(calls);
      // A retry sends back what the first answer said: calls another answer wrote (`n`) end in the reason.
      if (!judgement.verdict.allowed && calls.every((c) => c.choice === 0)) {
        const ending = text.retryEnding();
        const next = await this.#retry(calls, judgement.verdict, { fromText: true, ending });
        if (next) {
          const report = {
            calls,
            verdict: judgement.verdict,
            findings,
            replaced: true,
            reason: judgement.reason,
            retried: true,
          };
          this.#report({ dialect: this.#dialect, ...report });
          return next;
        }
      }
      // With drop-call, the rejected calls are cut from the text where each sits in markup of its own.
      const drop = new Set(judgement.verdict.rejectedIndices);
      const partial = judgement.partialReason !== undefined && text.separable(drop);
      if (partial) told = judgement.partialReason;
      text.conclude(
        partial
          ? { allowed: false, reason: toldOf(judgement, true), drop }
          : { allowed: judgement.verdict.allowed, reason: toldOf(judgement, false) },
        flow,
      );
      // (cut, the calls leave no call in the message: a finish for tool use stops normally, as in a body)
      if (!judgement.verdict.allowed) this.#router.endsWritten?.(flow, new Set(written.map((c) => c.choice)));
      flow.release();
    }
    if (this.#doneFrame !== undefined) flow.send(this.#doneFrame);
    const replaced = !judgement.verdict.allowed;
    const reason = replaced ? { reason: told ?? judgement.reason } : {};
    this.#report({
      dialect: this.#dialect,
      calls,
      verdict: judgement.verdict,
      findings,
      replaced,
      ...reason,
    });
    return undefined;
  }

  /**
   * Asks for a retry of a rejected turn. When one comes, what was held (the calls, the finish, the
   * usage of this attempt) is dropped: the retry's stream continues the message in its place, after
   * `point` where the ending of a written call's text gives one (else where the router says). For native
   * calls, the frames held before the first call's (text the watch held as a possible written call, prose
   * beside native calls) go out first: the router's point counts them as the client's; for written calls,
   * the `ending` of their text. Then the ends of the blocks the client holds open among the frames dropped.
   */
  async #retry(
    calls: AssembledToolCall[],
    verdict: Verdict,
    { fromText = false, ending }: { fromText?: boolean; ending?: TextEnding } = {},
  ): Promise<ReadableStream<Uint8Array> | undefined> {
    const point = ending?.point;
    const retry = this.#options.retry;
    const router = this.#router;
    if (!retry || !router.resume || !this.#turn || this.#turn.firstInDoubt?.() || this.#cancelled) {
      return undefined;
    }
    const flow = this.#flow;
    // (prose the client has not seen goes into its block: the block's start goes first, and counts)
    if (ending?.frames) router.sendOpenings?.(flow);
    let answer: RetryAnswer | undefined;
    let resume: ResumePoint | undefined;
    try {
      resume = { ...point ?? router.resumePoint?.() ?? { at: 0 }, usage: this.#usage.total };
      const turn: StreamRetry = { calls, verdict, body: this.#turn.body() };
      if (fromText) turn.fromText = true;
      answer = await retry(turn);
    } catch {
      answer = undefined; // a retry that fails leaves today's clean stop
    }
    if (!answer || !resume) return undefined;
    try {
      // (a client that cancelled while the retry was asked leaves nothing to forward it to)
      if (this.#cancelled) {
        await answer.cancel();
        return undefined;
      }
      let dropped = flow.held;
      if (fromText) {
        if (ending?.frames) flow.send(ending.frames);
        for (const { answer, text } of ending?.frames ? ending.texts ?? [] : []) flow.sawText(text, answer);
        this.#sendTold(dropped);
        dropped = dropped.filter((h) => !h.told);
      } else {
        router.sendHeldText?.(new Set(calls.map((c) => c.choice)), flow);
        const first = flow.held.findIndex((h) => h.tool);
        for (const h of first < 0 ? [] : flow.held.slice(0, first)) {
          flow.send(h.raw);
          const text = h.event && router.textOf?.(h.event);
          if (typeof text === "string") flow.sawText(text);
        }
        dropped = flow.held.slice(Math.max(first, 0));
        this.#sendTold(dropped);
        dropped = dropped.filter((h) => !h.told);
      }
      const ends = router.endsDropped?.(dropped, flow);
      if (ends) flow.send(ends);
      flow.setHeld();
      return answer.stream({ ...resume, said: flow.said(), runsOn: flow.runsOn(), told: flow.told() });
    } catch (e) {
      await answer.cancel(); // (its body must not be left open, holding the provider's connection)
      throw e;
    }
  }

  /**
   * Sends the reasons a router held to tell of calls it dropped (`Held.told`) among the frames a retry
   * drops, after the text it sent ahead of its stream: dropped with the calls (after words the text watch
   * held, or held after a written call's text), the model never read them, where onVerdict reported them.
   */
  #sendTold(dropped: readonly Held[]): void {
    const flow = this.#flow;
    for (const { told } of dropped) {
      if (!told || told.placed) continue;
      const text = flow.lead(told.answer) + told.reason;
      flow.send(this.#router.text!.textFrame(text, told.answer, 0));
      flow.sawText(text, told.answer);
    }
  }

  async #judge(calls: AssembledToolCall[]): Promise<StreamJudgement> {
    try {
      const router = this.#router;
      const dropped = router.ownReason?.() === undefined
        ? new Set<number>()
        : router.toldAnswers?.() ?? new Set([0]);
      return await this.#options.judge(calls, { dropped });
    } catch (e) {
      // A judge that fails must not let the calls through: fail closed with the reason.
      return failedJudgement(
        calls,
        `toolguard could not judge the tool ${plural(calls.length, "call")}, so none ran: ${errorText(e)}`,
      );
    }
  }

  #report(report: StreamReport): void {
    // The reason the router wrote of its own (calls dropped as malformed) is the turn's too, beside any the
    // judge wrote, whatever path ended the stream: ahead of it and a blank line apart, as the model read them.
    const own = this.#router.ownReason?.();
    if (own !== undefined) {
      report = {
        ...report,
        replaced: true,
        reason: report.reason === undefined ? own : `${own}${PARAGRAPH}${report.reason}`,
      };
    }
    const usage = this.#usage.own;
    try {
      this.#options.onReport?.(usage ? { ...report, usage } : report);
    } catch {
      // A report hook must not break the stream.
    }
  }
}

/**
 * The answers whose held frames put a frame other than a call's ahead of the first frame of their text held
 * by a text watch (text and block openings held after a call).
 */
function answersHeldAhead(held: readonly Held[]): Set<number> {
  const ahead = new Set<number>();
  const reached = new Set<number>();
  let unowned = false; // (a frame no watch owns may be any answer's: Anthropic, Responses, Cohere have one)
  for (const h of held) {
    if (h.written && h.answer !== undefined && !reached.has(h.answer)) {
      reached.add(h.answer);
      if (unowned) ahead.add(h.answer);
    } else if (!h.tool && !h.written) {
      if (h.answer === undefined) unowned = true;
      else if (!reached.has(h.answer)) ahead.add(h.answer);
    }
  }
  return ahead;
}
