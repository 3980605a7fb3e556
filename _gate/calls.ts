/**
 * Tool calls rebuilt from stream events: the types the assembler returns, and the slot book the dialect
 * readers write the calls into while the events arrive.
 *
 * @module
 */
import { syntheticId, syntheticIdOfValue } from "../_validate/providers.ts";

/** The stream dialects toolguard understands. */
export type StreamDialect = "openai_chat" | "openai_responses" | "anthropic" | "ollama" | "gemini" | "cohere";

/** One tool call rebuilt from stream events. */
export interface AssembledToolCall {
  /** The provider's call id, or a stable synthetic one (`call_` + hash) when the stream carried none. */
  id: string;
  /** True when `id` was made up because the stream carried none. */
  syntheticId: boolean;
  /** The tool name. */
  name: string;
  /** The argument text exactly as assembled (JSON text; may be incomplete or invalid: the validator judges). */
  arguments: string;
  /** Which stream dialect the call came from. */
  dialect: StreamDialect;
  /**
   * For OpenAI Chat streams, the choice the call belongs to; for Gemini, its candidate's position in the
   * chunk (the clients read the first as the answer); otherwise 0. Always a whole number from 0 up: a
   * choice `index` given as the text of one (`"1"`) is that choice, as the openai SDK files it; one at no
   * whole number (`1.5`, `NaN`, `-1`) is read as choice 0, as the AI SDK reads the first choice of each
   * chunk (the openai SDK leaves it out of its final completion), with a `malformed_event` finding.
   */
  choice: number;
  /**
   * The slot the stream addressed the call by: the delta `index`, `output_index` or content block index,
   * as a client reads it: a whole number (`"1"` is 1, as a JavaScript client looks it up). An index that is
   * no whole number from 0 up (`1.5`, `NaN`, `-1`) addresses nothing in the official clients (the openai
   * SDK throws on such an `output_index`; the Anthropic SDK writes such a block's delta where its final
   * message never reads it): it is read as missing, with a finding (a Chat delta is matched by id and
   * order, a Responses event by its item id, an Anthropic start is judged without its deltas and a delta
   * joins no call). A call given no index has its position among the calls (`-1` for an Anthropic block,
   * `-1 - n` for a Cohere call, whose later deltas join it, and for an OpenAI Responses call, which no
   * index reaches: its later events join it by item id).
   */
  slot: number;
  /** Set when `arguments` is free text (an OpenAI Responses `custom` tool's input), not JSON. */
  freeText?: true;
  /**
   * Set when the stream sent this call's arguments whole more than once, or whole and in deltas, and they
   * differ (clients read different ones: the openai SDK's final response its snapshot, the AI SDK the
   * finished item, a UI the deltas; an Anthropic block's start input or its deltas): the texts other than
   * `arguments`. The gate judges each.
   */
  otherArguments?: string[];
  /**
   * Set when the stream sent the name in pieces that differ (`name` is them joined, as a client that
   * concatenates reads it): the last piece, which is the whole name to a client that keeps the last one
   * sent (the official `openai` SDK). Likewise a name a Cohere `tool-call-delta` gives that differs from its
   * `tool-call-start`'s (`name`, which the AI SDK keeps). The gate judges the call under both names.
   */
  lastName?: string;
  /**
   * Set where the stream sent the arguments as an object, not as text (Ollama, Gemini: each call comes whole
   * in one chunk; an Anthropic `tool_use` whose input came only in its block's start, no deltas): that object, which the gate judges as it judges the same call in a body, and `arguments`
   * is its JSON text. Judged as that text, the stream's verdict carried argument text (`rawArguments`) the
   * provider never sent, where the body's verdict of the same answer carried none.
   */
  value?: unknown;
}

/** What can be wrong with a stream event. Never an exception: a finding. */
export type StreamFindingCode =
  | "malformed_event"
  | "unknown_event"
  | "orphan_delta"
  | "missing_index"
  | "reused_index";

/** One problem found while reading a stream. */
export interface StreamFinding {
  /** What kind of problem. */
  code: StreamFindingCode;
  /** Plain words. */
  message: string;
  /** The position of the event in the stream (0-based). */
  event: number;
}

/** What `assembleToolCalls` returns. */
export interface AssembledCalls {
  /** The rebuilt calls, in the order they started. */
  calls: AssembledToolCall[];
  /**
   * Problems with individual events; the events were skipped. At most 100 of each code are listed, then one
   * saying the rest were not.
   */
  findings: StreamFinding[];
}

/** One call being rebuilt. */
export interface Slot {
  /** How the dialect reader addresses the call (`c0:1:0`, `o2`, `a1`, `l0`, ...). */
  key: string;
  /** The OpenAI Chat choice, the Gemini candidate position; 0 elsewhere. */
  choice: number;
  /** The position the stream gave the call. */
  slot: number;
  /** The provider's call id; `""` until one arrives. */
  id: string;
  /** The tool name as assembled. */
  name: string;
  /** The argument text as assembled from deltas. */
  args: string;
  /** Authoritative full argument text from a `.done` event, replacing the deltas. */
  final?: string;
  /** Anthropic `content_block_start` input, used when no deltas came. */
  initialInput?: string;
  /** Anthropic `content_block_start` input as sent, an object: judged as such when no deltas came. */
  startInput?: Record<string, unknown>;
  /** Ollama's argument object as sent (ids are derived from it exactly as the validator does). */
  value?: unknown;
  /** The dialect of the event that opened the call. */
  dialect: StreamDialect;
  /** Set when the arguments are free text (a Responses `custom` tool's input), not JSON. */
  freeText?: true;
  /** The last piece of a name sent in pieces that differ (see {@linkcode AssembledToolCall.lastName}). */
  lastName?: string;
  /** Earlier finished argument texts that differ from `final` (see `otherArguments`). */
  versions?: Set<string>;
  /**
   * The argument deltas read since `final` was set: the openai SDK appends them to the finished text it
   * holds (a Responses snapshot's, a `.done` event's), so it runs `final + after`.
   */
  after?: string;
}

/** How many findings of one code a stream lists (a hostile stream could send a malformed event forever). */
const MAX_FINDINGS_PER_CODE = 100;

/**
 * The findings about one stream's events, at most {@linkcode MAX_FINDINGS_PER_CODE} of each code and then
 * one saying more were left out: bounded, and every code met is still listed (the gate asks whether one
 * was, e.g. `reused_index`).
 */
export class FindingList {
  /** The findings listed, in stream order. */
  readonly items: StreamFinding[] = [];
  readonly #counts = new Map<StreamFindingCode, number>();

  /** Lists a finding, unless its code has been listed enough already. */
  add(finding: StreamFinding): void {
    const n = this.#counts.get(finding.code) ?? 0;
    if (n > MAX_FINDINGS_PER_CODE) return;
    this.#counts.set(finding.code, n + 1);
    this.items.push(
      n < MAX_FINDINGS_PER_CODE ? finding : {
        ...finding,
        message: `more than ${MAX_FINDINGS_PER_CODE} findings of this kind; the rest are not listed`,
      },
    );
  }
}

/**
 * The calls of one stream as they are rebuilt, and the findings about its events. Dialect readers open
 * slots by key and write into them; {@linkcode SlotBook.result} turns the slots into calls.
 */
export class SlotBook {
  readonly #slots: Slot[] = [];
  readonly #byKey = new Map<string, Slot>();
  readonly #lastByChoice = new Map<number, Slot>();
  /** The keys opened in each choice since it was last forgotten (see {@linkcode SlotBook.forgetChoice}). */
  readonly #keysIn = new Map<number, string[]>();
  readonly #findings = new FindingList();
  /** The call position each event was read into, where its reader noted one (see `file`). */
  readonly #filed = new WeakMap<Record<string, unknown>, number>();
  #events = 0;

  /** Counts one more event: the findings recorded from now on point at it. */
  nextEvent(): void {
    this.#events++;
  }

  /** Records a problem with the current event. */
  finding(code: StreamFindingCode, message: string): void {
    this.#findings.add({ code, message, event: this.#events - 1 });
  }

  /** Opens a new call under `key` (a later call under the same key replaces it in the index). */
  open(key: string, dialect: StreamDialect, choice: number, slot: number): Slot {
    const s: Slot = { key, choice, slot, id: "", name: "", args: "", dialect };
    this.#slots.push(s);
    this.#byKey.set(key, s);
    this.#lastByChoice.set(choice, s);
    const keys = this.#keysIn.get(choice);
    if (keys) keys.push(key);
    else this.#keysIn.set(choice, [key]);
    return s;
  }

  /**
   * Notes that `event` was read as part of the call at position `slot`: a router that drops a rejected
   * call's events asks ({@linkcode SlotBook.filed}) rather than number them again by a rule of its own.
   */
  file(event: Record<string, unknown>, slot: number): void {
    this.#filed.set(event, slot);
  }

  /** The call position `event` was read into, when its reader noted one (see {@linkcode SlotBook.file}). */
  filed(event: Record<string, unknown>): number | undefined {
    return this.#filed.get(event);
  }

  /** The open call under `key`. */
  get(key: string): Slot | undefined {
    return this.#byKey.get(key);
  }

  /** The call opened last in `choice` (of any dialect). */
  lastIn(choice: number): Slot | undefined {
    return this.#lastByChoice.get(choice);
  }

  /**
   * Forgets the keys of every call in `choice`, so the same keys open new calls. Only the keys opened since
   * the last time are visited: a stream that reuses an index for every call once cost the number of calls
   * so far, each time.
   */
  forgetChoice(choice: number): void {
    for (const key of this.#keysIn.get(choice) ?? []) this.#byKey.delete(key);
    this.#keysIn.delete(choice);
  }

  /** How many calls were opened. */
  get size(): number {
    return this.#slots.length;
  }

  /** The calls and findings so far. */
  result(): AssembledCalls {
    const slots = this.#slots;
    const texts = slots.map(argumentText);
    const calls = slots.map((s, position): AssembledToolCall => {
      const args = texts[position];
      const call: AssembledToolCall = {
        id: s.id,
        syntheticId: s.id === "",
        name: s.name,
        arguments: args,
        dialect: s.dialect,
        choice: s.choice,
        slot: s.slot,
      };
      if (s.freeText) call.freeText = true;
      if (s.lastName !== undefined) call.lastName = s.lastName;
      const others = otherArguments(s, args);
      if (others.length > 0) call.otherArguments = others;
      else if (s.value !== undefined) call.value = s.value;
      else if (s.startInput !== undefined && s.args === "") call.value = s.startInput;
      // the validator's own rule (as normaliseCalls applies it), so a call gets the same id streamed or not
      if (call.syntheticId) {
        call.id = s.value !== undefined
          ? syntheticIdOfValue(s.name, s.value, position)
          : syntheticId(s.name, args, position);
      }
      return call;
    });
    return { calls, findings: this.#findings.items.slice() };
  }
}

/**
 * A slot's argument texts other than `args` (its judged one): earlier finished ones, the deltas, the
 * input its block started with.
 */
function otherArguments(s: Slot, args: string): string[] {
  const texts = new Set(s.versions);
  if (s.final !== undefined && s.args !== "") texts.add(s.args);
  if (s.final !== undefined && s.after !== undefined) texts.add(s.final + s.after);
  // An Anthropic block that starts with its input and then streams some: the SDK keeps the deltas' (its
  // content_block_start input is dropped), a client that starts from the block's input may not.
  if (s.initialInput !== undefined) texts.add(s.initialInput);
  texts.delete(args);
  return [...texts];
}

/** The argument text of a slot: the `.done` text, else the deltas, else the start block's input. */
function argumentText(s: Slot): string {
  let args = s.final ?? s.args;
  if (args === "" && s.initialInput !== undefined) args = s.initialInput;
  // Anthropic sends an empty input_json for a call without arguments: that is `{}`.
  if (args === "" && s.dialect === "anthropic") args = "{}";
  return args;
}
