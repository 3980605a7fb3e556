/**
 * OpenAI Responses: response bodies, stream events (`response.output_item.added`,
 * `response.function_call_arguments.*`, the final snapshot), and the gate's routing of those events.
 *
 * @module
 */
import { isRecord } from "../../_common/values.ts";
import { builtinArguments, callName, isClientCall, SNAPSHOTS } from "./readers.ts";
import { formatSse, reframe, sseParser } from "../sse.ts";
import { parseJsonSafe } from "../../_common/json.ts";
import { cutCalls } from "../engines.ts";
import {
  allCitedOn,
  type AnswerReason,
  blockOpensWithCall,
  callCounter,
  citedOn,
  citingKept,
  type CompletionBody,
  type Dialect,
  type FrameRouter,
  hasWords,
  type Held,
  heldText,
  malformedCallsReason,
  namesKey,
  Openings,
  placeReason,
  reasonBlock,
  type ResumePoint,
  type SplitCalls,
  type StreamFlow,
  type TextChange,
  type TextEnding,
  type TextFrames,
  type TextPart,
  TextPlaces,
  ToolPositions,
  type TurnRecorder,
} from "./shared.ts";

// ---------------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------------

/** The built-in tools the caller runs, by the `type` they are declared with, and the name they are judged by. */
const CLIENT_BUILTINS: Readonly<Record<string, string>> = {
  local_shell: "local_shell",
  shell: "shell",
  apply_patch: "apply_patch",
  computer_use_preview: "computer_use_preview",
  computer: "computer_use_preview",
};

/**
 * A call item as the validator reads calls: a `function_call` with JSON arguments. A custom tool's free
 * text becomes the argument `input` (scanned like any text); a built-in's action becomes its arguments.
 */
function forValidation(item: Record<string, unknown>): Record<string, unknown> {
  if (item.type === "function_call") return item;
  const args = item.type === "custom_tool_call"
    ? JSON.stringify({ input: typeof item.input === "string" ? item.input : "" })
    : builtinArguments(item);
  return { type: "function_call", id: item.id, call_id: item.call_id, name: callName(item), arguments: args };
}

/** The declaration a custom tool (free text or a grammar) is judged against: by name, its input a string. */
function customDeclaration(tool: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: "function",
    name: tool.name,
    parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
  };
  if (typeof tool.description === "string") out.description = tool.description;
  return out;
}

/** What one declared tool stands for (a namespace: its members). */
function declared(tool: Record<string, unknown>): Record<string, unknown>[] {
  if (tool.type === "function") return [tool];
  if (tool.type === "custom" && typeof tool.name === "string") return [customDeclaration(tool)];
  if (tool.type === "namespace" && Array.isArray(tool.tools)) {
    return tool.tools.flatMap((t) => (isRecord(t) && t.type !== "namespace" ? declared(t) : []));
  }
  const builtin = typeof tool.type === "string" ? CLIENT_BUILTINS[tool.type] : undefined;
  if (builtin) return [{ type: "function", name: builtin, parameters: { type: "object" } }];
  return [];
}

const body: CompletionBody = {
  declared,
  calls(body) {
    const out: unknown[] = [];
    for (const item of body.output as unknown[]) if (isClientCall(item)) out.push(forValidation(item));
    return out;
  },
  texts(body) {
    const out: string[] = [];
    for (const item of body.output as unknown[]) {
      if (!isRecord(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
      for (const part of item.content) {
        if (isRecord(part) && part.type === "output_text" && typeof part.text === "string") {
          out.push(part.text);
        }
      }
    }
    return out;
  },
  rewrite(body, answerReason, { fromText, cut = cutCalls, held }) {
    const reason = answerReason(0); // (one answer)
    let output: unknown[] = [];
    /** The `output_text` parts a call was cut from. */
    const changed = new Set<unknown>();
    /** The `output_text` parts that hold a written call, cut or kept. */
    const calls = new Set<unknown>();
    /** The `output_text` parts in order, and `BETWEEN` for what a stream sends between them. */
    const order: unknown[] = [];
    /** The text each part came with, before the cut. */
    const source = new Map<unknown, string>();
    for (const item of body.output as unknown[]) {
      if (isClientCall(item)) {
        order.push(BETWEEN);
        continue;
      }
      if (fromText && isRecord(item) && item.type === "message" && Array.isArray(item.content)) {
        const content = item.content.map((p) => {
          if (!isRecord(p) || p.type !== "output_text" || typeof p.text !== "string") {
            order.push(BETWEEN);
            return p;
          }
          const part = { ...p, text: cut(p.text) };
          if (part.text !== p.text) changed.add(part);
          source.set(part, p.text);
          if (held ? held(p.text) : part.text !== p.text) calls.add(part);
          order.push(part);
          return part;
        });
        output.push({ ...item, content });
      } else {
        order.push(BETWEEN);
        output.push(item);
      }
    }
    if (changed.size > 0) output = reasonInPlace(output, { changed, calls, order, source }, reason);
    else output.push(reasonAfter(output, reason));
    const copy: Record<string, unknown> = { ...body, output };
    if (typeof body.output_text === "string") copy.output_text = outputText(output);
    return copy;
  },
  dropCalls(body, drop, answerReason) {
    const reason = answerReason(0); // (one answer)
    const keep = callCounter(drop);
    const output = (body.output as unknown[]).filter((item) => !isClientCall(item) || keep());
    output.push(reasonAfter(output, reason));
    const copy: Record<string, unknown> = { ...body, output };
    if (typeof body.output_text === "string") copy.output_text = outputText(output);
    return copy;
  },
};

/** In the order of a body's `output_text` parts (see `rewrite`): anything else, that a stream sends between them. */
const BETWEEN = Symbol("between");

/**
 * The output of a body whose written calls were cut from its `output_text` parts (`changed`: those a call
 * was cut from; `calls`: those that held a call, cut or kept; `order`: the parts in order, see `rewrite`),
 * with `reason` where a stream writes it (see `placeReason`), as in the dialects whose text has no places
 * (Chat, Ollama, Gemini). An `output_text` part left blank from the first part a call was cut from on goes,
 * and so do the blank parts right before a part up to it that held a call, cut or kept (nothing else
 * between), where that part opens with the call (see `mayGoBlank`), as a stream drops them (its watch holds
 * the text from the call on, and a part's start waits for words, see `ResponsesStream.route`) and as an
 * Anthropic or Cohere body drops a blank text block (the APIs refuse one sent back); a message left with no
 * part goes too (an empty message says nothing). A blank part before words or another item stays, after a
 * kept call too: a stream sent it with what followed it, or with the words before the call, before any call
 * came.
 */
function reasonInPlace(
  output: unknown[],
  { changed, calls, order, source }: {
    changed: ReadonlySet<unknown>;
    calls: ReadonlySet<unknown>;
    order: readonly unknown[];
    source: ReadonlyMap<unknown, string>;
  },
  reason: string,
): unknown[] {
  // (the parts are the copies `rewrite` made, so they are written in place)
  const parts = order.filter((p): p is { type: string; text: string } => p !== BETWEEN);
  const first = Math.max(0, parts.findIndex((p) => changed.has(p)));
  // The parts that may go: from the first a call was cut from on, and the blank ones right before a part
  // up to it that held a call, cut or kept, where that part opens with the call (see `mayGoBlank`). A blank
  // part after a kept call's part, before words, stays: the stream sent it with them.
  const tidied = new Set<unknown>(parts.slice(first));
  const texts = parts.map((p) => source.get(p) ?? p.text);
  for (let call = 0; call <= first; call++) {
    if (!calls.has(parts[call]) || !blockOpensWithCall(texts, call, parts[call].text)) continue;
    for (let i = order.indexOf(parts[call]) - 1; i >= 0; i--) {
      const p = order[i];
      if (p === BETWEEN || hasWords((p as { text: string }).text)) break;
      tidied.add(p);
    }
  }
  // (in the first part a call was cut from: one only tidied before it is not, see `placeReason`)
  const placed =
    placeReason(texts, parts.map((p) => p.text), reason, { goes: (i) => tidied.has(parts[i]) }) ?? [];
  placed.forEach((text, i) => parts[i].text = text);
  for (const p of parts as { text: string; annotations?: unknown }[]) {
    if (Array.isArray(p.annotations)) {
      p.annotations = citingKept(p.annotations, source.get(p) ?? p.text, p.text);
    }
  }
  return output.flatMap((o) => {
    if (!isRecord(o) || o.type !== "message" || !Array.isArray(o.content)) return [o];
    const content = o.content.filter((p) => !tidied.has(p) || hasWords((p as { text: string }).text));
    return content.length > 0 || o.content.length === 0 ? [{ ...o, content }] : [];
  });
}

/**
 * A message item with `reason`, to follow `output`: after a blank line where its text says something, as a
 * stream writes it after the text its client has (see `StreamFlow.lead`); joined to it with nothing between,
 * the `output_text` a client reads (the field, the openai SDK's) ran the last word into the reason.
 */
const reasonAfter = (output: unknown[], reason: string): Record<string, unknown> =>
  reasonItem(reasonBlock([outputText(output)], reason), output.length);

/** A message item carrying `text`. */
function reasonItem(text: string, position: number): Record<string, unknown> {
  return {
    id: `msg_toolguard_${position}`,
    type: "message",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  };
}

/** True for a delta, an `output_text.done` or a part that scores its tokens (`logprobs`, not empty). */
function isScored(carrier: Record<string, unknown>): boolean {
  return Array.isArray(carrier.logprobs) && carrier.logprobs.length > 0;
}

/** The text of an `output_text` delta (undefined for any other event): what the client's text goes on with. */
function deltaText(event: Record<string, unknown>): unknown {
  return event.type === "response.output_text.delta" ? event.delta : undefined;
}

/**
 * An `output_text` part whose `text` the gate told otherwise, its annotations those that still cite the text
 * (see `citingKept`).
 */
function partTold(part: Record<string, unknown>, text: unknown): Record<string, unknown> {
  const told: Record<string, unknown> = { ...part, text };
  if (typeof part.text === "string" && typeof text === "string" && Array.isArray(part.annotations)) {
    told.annotations = citingKept(part.annotations, part.text, text);
  }
  return told;
}

/** The `output_text` convenience field: the text of every message item, joined. */
function outputText(output: unknown[]): string {
  return output.flatMap((o) =>
    isRecord(o) && o.type === "message" && Array.isArray(o.content)
      ? o.content.filter((p) => isRecord(p) && p.type === "output_text").map((p) =>
        (p as { text: string }).text
      )
      : []
  ).join("");
}

// ---------------------------------------------------------------------------------------------------------
// The gate's routing
// ---------------------------------------------------------------------------------------------------------

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.done"]);
/**
 * The id of the message item that tells of a call dropped unread beside calls held (see `tellDropped`),
 * followed by its place: of one id, a retry's item and the first attempt's made the openai SDK throw.
 */
const TOLD_ID = "msg_toolguard_dropped_";
/** How many events carry a message item the gate writes (see `#message`). */
const MESSAGE_EVENTS = 6;
/** The events that repeat a part's text whole when it is done (besides the snapshots). */
const WHOLE_TEXT = new Set([
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done",
]);
/**
 * Events of no text after which the text goes on (see `TextPart.goesOn`): a part's or a message's end and
 * the next one's start too (not a call's: those are toolish), as a body's messages are read joined (a tail
 * that may begin a marker, let out at its part's end, reached the client where a body cuts it with the call).
 */
const TEXT_GOES_ON = new Set([
  "response.output_text.delta",
  "response.output_text.annotation.added",
  "response.in_progress",
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done",
  "response.output_item.added",
  "response.content_part.added",
]);
/** The events that carry a call's arguments (a custom tool's input), addressed to its item. */
const ARGUMENT_EVENTS = new Set([
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.custom_tool_call_input.delta",
  "response.custom_tool_call_input.done",
]);
/** What one noted item place weighs against `maxResponseBytes`: about what a map entry costs. */
const PLACE_COST = 64;

/** True when `event` carries a whole response (see `SNAPSHOTS`) that lists a call the client runs. */
function snapshotWithCalls(event: Record<string, unknown>): boolean {
  return SNAPSHOTS.has(event.type as string) && isRecord(event.response) &&
    Array.isArray(event.response.output) && event.response.output.some(isClientCall);
}

/** A held snapshot event replayed: without the calls `gone` says (default all), the event itself if none. */
function withoutCalls(
  event: Record<string, unknown>,
  gone: (item: Record<string, unknown>) => boolean = () => true,
): Record<string, unknown> {
  if (!snapshotWithCalls(event)) return event;
  const response = event.response as Record<string, unknown>;
  const output = (response.output as unknown[]).filter((o) => !(isClientCall(o) && gone(o)));
  return { ...event, response: { ...response, output } };
}

/**
 * True for the start of a message item or an `output_text` part that brings no text: it waits for what
 * follows it (see `ResponsesStream.route`). A message added with its parts already in it is one when they
 * are all `output_text` parts that bring none (one that brought text is split so, see `#split`): sent at
 * once, a part of only a written call, cut, was left empty where the client had it.
 */
function opensText(event: Record<string, unknown>): boolean {
  if (event.type === "response.output_item.added") {
    const item = event.item;
    return isRecord(item) && item.type === "message" &&
      (item.content === undefined || (Array.isArray(item.content) && item.content.every(bringsNoText)));
  }
  return event.type === "response.content_part.added" && bringsNoText(event.part);
}

/** An `output_text` part of no text. */
const bringsNoText = (part: unknown): boolean =>
  isRecord(part) && part.type === "output_text" && (part.text ?? "") === "";

/**
 * Which call items of a snapshot's `output` are the dropped calls, read in order (a new reader per
 * snapshot): by `call_id`, and where one names several calls, by their place among the calls of that id. Two
 * items under one call_id is a malformed answer, but each is a call the gate judged: a body's drop goes by
 * place and keeps the valid one (then the only item of that id); by id alone, the valid call went with the
 * rejected one from the snapshot a client reads its calls from.
 */
function droppedItems(split: SplitCalls): () => (item: Record<string, unknown>) => boolean {
  const dropped = new Set(split.dropped);
  const byId = new Map<unknown, boolean[]>();
  for (const c of [...split.kept, ...split.dropped].sort((a, b) => a.slot - b.slot)) {
    if (!byId.has(c.id)) byId.set(c.id, []);
    byId.get(c.id)!.push(dropped.has(c));
  }
  return () => {
    const seen = new Map<unknown, number>();
    return (item) => {
      const marks = byId.get(item.call_id);
      if (!marks) return false;
      const at = seen.get(item.call_id) ?? 0;
      seen.set(item.call_id, at + 1);
      // (more items of the id than calls read: one of them may be a dropped call's)
      return at < marks.length ? marks[at] : marks.includes(true);
    };
  };
}

/** Sends an event; one the gate held, in place of its frame `from` (see `reframe`). */
type Emit = (event: Record<string, unknown>, from?: { raw: string; event: Record<string, unknown> }) => void;

/** Where a piece of a message's text was read: its item, output index and content part. */
interface TextPlace {
  itemId: unknown;
  oi: unknown;
  ci: unknown;
}

/**
 * OpenAI Responses addresses content by output index, so once a call starts everything after it waits, to
 * be released as is or renumbered around the dropped call (sequence numbers kept increasing). Calls written
 * into a message's text (a local model behind a Responses-compatible endpoint writes them) are watched for;
 * the events that repeat the text (`output_text.done`, `content_part.done`, `output_item.done`, the final
 * snapshot) tell it, when such a call is rejected, as the client streamed it.
 */
class ResponsesStream implements FrameRouter {
  readonly framing = "sse";
  readonly #tools = new ToolPositions();
  /** The content part of each piece of text read: text the watch writes goes where its offset was read. */
  readonly #places = new TextPlaces<TextPlace>();
  /** The `sequence_number` of the last text delta of each content part. */
  readonly #lastSeqOf = new Map<string, number>();
  /** Where each numbered text delta's text stands in the answer's text, with its `sequence_number`, in order. */
  readonly #deltaAt: { from: number; to: number; seq: number }[] = [];
  /** Where the answer's text came whole (in a `.done` event or a snapshot, see `#readText`), in order. */
  readonly #wholeAt: { from: number; to: number }[] = [];
  /** The text read of each content part (what the client holds of it). */
  readonly #seen = new Map<string, string>();
  /** Their length, bounded with the text by `maxResponseBytes`. */
  #seenLength = 0;
  /**
   * Without the text watch (`extract: false`), the deltas' text of each content part, as the client streamed
   * it (see `#endAgain`; the watch's `#seen` holds it otherwise), bounded as `kept`.
   */
  readonly #streamed = new Map<string, string>();
  /**
   * What each event that tells a part's text whole (a `.done` event, a snapshot) added to the text read (see
   * `#readText`): the client's text, once the event goes out (see `#said`).
   */
  readonly #addedWhole = new WeakMap<object, string>();
  /** Whether the text watch reads the stream (see `#readText`); without it, `#toldLength` keeps what went. */
  #watched = false;
  /** Without the text watch: the length of the text of each content part that went out, by its key. */
  readonly #toldLength = new Map<string, number>();
  /** The id of each item added, by its `output_index` (for deltas that name no item). */
  readonly #itemAt = new Map<unknown, unknown>();
  /** The content parts the client holds (added, or streamed into): a delta the gate writes may go there. */
  readonly #opened = new Set<string>();
  /** The parts a message brought as it was added (the client has them with their item). */
  readonly #brought = new Set<string>();
  /** A message's or part's start that brings no text, held until the next frame routed (see `route`). */
  readonly #openings = new Openings(deltaText);
  /** The part whose start waits last among the openings (see `#waitsWithOpenings`), by its indices. */
  #waitingPart: { oi: unknown; ci: unknown } | undefined;
  /** The messages (by output index) dropped for getting no text once a written call was cut (see `#tidy`). */
  readonly #goneItems = new ToolPositions();
  /** The parts dropped so, by their item's short name (see `#idName`), and their keys (see `#key`). */
  readonly #goneParts = new Map<string, ToolPositions>();
  readonly #goneKeys = new Set<string>();
  readonly #goneItemNames = new Set<string>();
  /**
   * A part's start held that the retry's ending leaves out, and what waited with it, kept held when the
   * openings go (see `#resumeAfter`).
   */
  #stays: ReadonlySet<Held> = new Set();
  /** A short name for each item id met that is a string, by the id; for any other, by its JSON. */
  readonly #stringIds = new Map<string, string>();
  readonly #otherIds = new Map<string, string>();
  /** The name of each id that is an object, by the object (one kept in `#itemAt` is named again and again). */
  readonly #objectIds = new WeakMap<object, string>();

  /**
   * The key of a message's content part, as the events and snapshots that repeat its text name it. The item
   * id is the provider's text and may be long: the key holds a short name for it, found by the id itself,
   * so a long id costs once per event that brings it (built from it, a key cost its length at each event
   * that names the item by `output_index` and at each content part of its item: quadratic).
   */
  #key(itemId: unknown, ci: unknown): string {
    return `${this.#idName(itemId)}:${JSON.stringify(ci ?? null)}`;
  }

  #idName(id: unknown): string {
    if (typeof id === "string") return this.#named(this.#stringIds, id, "s");
    if (typeof id !== "object" || id === null) {
      return this.#named(this.#otherIds, JSON.stringify(id ?? null), "o");
    }
    let name = this.#objectIds.get(id);
    if (name === undefined) {
      name = this.#named(this.#otherIds, JSON.stringify(id), "o");
      this.#objectIds.set(id, name);
    }
    return name;
  }

  #named(names: Map<string, string>, id: string, kind: string): string {
    let name = names.get(id);
    if (name === undefined) {
      name = `${kind}${names.size}`;
      names.set(id, name);
    }
    return name;
  }

  readonly text: TextFrames = {
    placed: true,
    opens: (at) => this.#places.opens(at),
    read: (event) => this.#readText(event),
    textFrame: (text, _answer, at) => {
      const place = this.#places.at(at);
      // A part whose text came only whole (no delta, never added): the client has no part for a delta
      // there, and the events that repeat the text tell what the gate wrote.
      // (nor for a part dropped for getting no text: white space alone, see `#tidy`)
      const key = place ? this.#key(place.itemId, place.ci) : "";
      if (place && (!this.#opened.has(key) || this.#goneKeys.has(key))) return "";
      // Nor where the text came whole (a `.done` event or a snapshot brought it, not a delta): the event
      // that brought it goes on after the gate's text, and no number is free between it and the one
      // before (a delta there went out unnumbered, or with a number the client had); it and the events
      // after it that repeat the text tell what the gate wrote, as they told the client the text.
      if (this.#cameWhole(at)) return "";
      // (that of the delta where the gate's text begins: an annotation or a note held after it goes out after
      // this text, numbered above it; the part's last delta's number went back at it)
      const seq = place ? this.#seqAt(at) ?? this.#lastSeqOf.get(key) : undefined;
      const event: Record<string, unknown> = { type: "response.output_text.delta" };
      if (seq !== undefined) event.sequence_number = seq; // (that of a delta held in its place)
      if (seq !== undefined) this.#wroteSeq = Math.max(this.#wroteSeq, seq);
      Object.assign(
        event,
        this.#renumbered({
          item_id: place?.itemId,
          output_index: place?.oi,
          content_index: place?.ci,
          delta: text,
          logprobs: [],
        }),
      );
      return formatSse(JSON.stringify(event), event.type as string);
    },
    frame: (event, from) => reframe(event, from, event.type as string),
    retell: (event, changes) => {
      const told = this.#retell(event, changes);
      return told && this.#renumbered(told, event);
    },
    said: (flow) => this.sendOpenings(flow),
    tidy: (flow, written) => this.#tidy(flow, written),
    agree: (event) => this.#agree(event),
    split: (event) => this.#split(event),
    resume: (change) => this.#resumeAfter(change),
    // (a part told whole may carry its tokens' scores: see `#wholeText`)
    scored: (event) => isScored(event) || (this.#wholeText(event)?.scored ?? false),
    lead: {
      text: (event) =>
        typeof deltaText(event) === "string" ? event.delta as string : this.#wholeText(event)?.more,
      frames: (event, text) => this.#leadFrames(event, text),
    },
    size: () =>
      this.#places.size + this.#seenLength + (this.#itemAt.size + this.#opened.size) * 64 +
      (this.#deltaAt.length + this.#wholeAt.length) * 24,
  };

  /**
   * The text of an `output_text.delta`; of an event that carries a part's text whole (a `.done` event, a
   * snapshot), what it adds to the text read of that part so far. The client's final response holds the
   * text these events carry, so text a server sends only there (no deltas) is watched as well (`agree`
   * tells text that differs from the deltas' as they did; `split` makes deltas of an `.added` one's).
   */
  #readText(event: Record<string, unknown>): TextPart {
    this.#watched = true;
    const type = event.type;
    let text = "";
    if (type === "response.output_text.delta" && typeof event.delta === "string") {
      text = event.delta;
      const from = this.#seenLength;
      const key = this.#note(event.item_id, event.output_index, event.content_index, text);
      this.#opened.add(key);
      if (typeof event.sequence_number === "number") {
        this.#lastSeqOf.set(key, event.sequence_number);
        if (text !== "") this.#deltaAt.push({ from, to: from + text.length, seq: event.sequence_number });
      }
    } else {
      const from = this.#seenLength;
      if (type === "response.content_part.added") {
        this.#opened.add(
          this.#key(event.item_id ?? this.#itemAt.get(event.output_index), event.content_index),
        );
      }
      this.#eachPart(event, (place, own) => {
        const seen = this.#seen.get(this.#key(place.itemId, place.ci)) ?? "";
        if (own.length > seen.length && own.startsWith(seen)) {
          const more = own.slice(seen.length);
          this.#note(place.itemId, place.oi, place.ci, more);
          text += more;
        }
        return own;
      });
      if (text !== "") {
        this.#addedWhole.set(event, text);
        this.#wholeAt.push({ from, to: from + text.length });
      }
    }
    const oi = typeof event.output_index === "number" ? event.output_index : -1;
    const toolish = this.#tools.has(oi) || snapshotWithCalls(event) ||
      ((type === "response.output_item.added" || type === "response.output_item.done") &&
        isClientCall(event.item)) ||
      // (every argument event, `.done` too: one named only by item_id is part of its call, as `route` reads it)
      ARGUMENT_EVENTS.has(type as string);
    // An event that repeats the text keeps its place when the text is cut: it is told as cut (`retell`).
    const delta = type === "response.output_text.delta";
    // (an annotation, an empty delta or a progress note comes inside the text: it goes on after it)
    const goesOn = !toolish && TEXT_GOES_ON.has(type as string);
    return { text, toolish, rest: () => delta ? undefined : event, goesOn, delta };
  }

  /**
   * An `.added` event that brings text (the client starts its part with it, then appends the deltas) as
   * the event without its text and a delta carrying it, so that the text is held and cut as deltas are
   * and the part stays where the client has it. Undefined for every other event.
   */
  #split(event: Record<string, unknown>): Record<string, unknown>[] | undefined {
    const type = event.type;
    const delta = (itemId: unknown, ci: number, text: string) => ({
      type: "response.output_text.delta",
      ...(event.sequence_number !== undefined ? { sequence_number: event.sequence_number } : {}),
      item_id: itemId,
      output_index: event.output_index,
      content_index: ci,
      delta: text,
      logprobs: [],
    });
    const bringsText = (p: unknown): p is { text: string } =>
      isRecord(p) && p.type === "output_text" && typeof p.text === "string" && p.text !== "";
    if (type === "response.content_part.added" && bringsText(event.part)) {
      const ci = typeof event.content_index === "number" ? event.content_index : 0;
      return [{ ...event, part: { ...event.part, text: "" } }, delta(event.item_id, ci, event.part.text)];
    }
    const item = event.item;
    if (
      type !== "response.output_item.added" || !isRecord(item) || item.type !== "message" ||
      !Array.isArray(item.content) || !item.content.some(bringsText)
    ) return undefined;
    const content = item.content.map((p) => bringsText(p) ? { ...p, text: "" } : p);
    const deltas = item.content.flatMap((p, ci) => bringsText(p) ? [delta(item.id, ci, p.text)] : []);
    return [{ ...event, item: { ...item, content } }, ...deltas];
  }

  /** The `sequence_number` of the text delta that holds the answer's text at `at`, if a numbered one does. */
  #seqAt(at: number): number | undefined {
    for (let i = this.#deltaAt.length - 1; i >= 0; i--) {
      const d = this.#deltaAt[i];
      if (d.from <= at && at < d.to) return d.seq;
      if (d.to <= at) return undefined;
    }
    return undefined;
  }

  /** Whether the answer's text at `at` (or, at its end, the text before it) came whole (see `#wholeAt`). */
  #cameWhole(at: number): boolean {
    for (let i = this.#wholeAt.length - 1; i >= 0; i--) {
      const w = this.#wholeAt[i];
      if (w.from <= at && (at < w.to || w.to === this.#seenLength)) return true;
      if (w.to <= at) return false;
    }
    return false;
  }

  /** Notes `text` read of a content part; returns the part's key. */
  #note(itemId: unknown, oi: unknown, ci: unknown, text: string): string {
    const id = itemId ?? this.#itemAt.get(oi);
    const key = this.#key(id, ci);
    this.#places.read(text, key, { itemId: id, oi, ci });
    this.#seen.set(key, (this.#seen.get(key) ?? "") + text);
    this.#seenLength += text.length;
    return key;
  }

  /**
   * Calls `told` with every `output_text` part an event carries whole (with where it is, its text, and what
   * carries it: the part, or the `output_text.done` event) and returns the event with each part's text
   * replaced by what `told` returns (the event itself when none changes).
   */
  #eachPart(
    event: Record<string, unknown>,
    told: (place: TextPlace, own: string, carrier: Record<string, unknown>) => string,
  ): Record<string, unknown> {
    const one = (itemId: unknown, oi: unknown, ci: unknown, own: unknown, carrier: Record<string, unknown>) =>
      typeof own === "string" ? told({ itemId: itemId ?? this.#itemAt.get(oi), oi, ci }, own, carrier) : own;
    const item = (it: unknown, oi: unknown) => {
      if (!isRecord(it) || it.type !== "message" || !Array.isArray(it.content)) return it;
      let changed = false;
      const content = it.content.map((p, ci) => {
        if (!isRecord(p) || p.type !== "output_text") return p;
        const text = one(it.id, oi, ci, p.text, p);
        if (text === p.text) return p;
        changed = true;
        return partTold(p, text);
      });
      return changed ? { ...it, content } : it;
    };
    const type = event.type as string;
    if (type === "response.output_text.done") {
      const text = one(event.item_id, event.output_index, event.content_index, event.text, event);
      return text === event.text ? event : { ...event, text };
    }
    const isPart = type === "response.content_part.done" || type === "response.content_part.added";
    if (isPart && isRecord(event.part) && event.part.type === "output_text") {
      const text = one(event.item_id, event.output_index, event.content_index, event.part.text, event.part);
      return text === event.part.text ? event : { ...event, part: partTold(event.part, text) };
    }
    if (type === "response.output_item.added" || type === "response.output_item.done") {
      if (type === "response.output_item.added" && isRecord(event.item) && event.item.id !== undefined) {
        this.#itemAt.set(event.output_index, event.item.id);
      }
      if (
        type === "response.output_item.added" && isRecord(event.item) && Array.isArray(event.item.content)
      ) {
        const id = isRecord(event.item) ? event.item.id ?? this.#itemAt.get(event.output_index) : undefined;
        event.item.content.forEach((_, ci) => {
          this.#opened.add(this.#key(id, ci));
          this.#brought.add(this.#key(id, ci));
        });
      }
      const it = item(event.item, event.output_index);
      return it === event.item ? event : { ...event, item: it };
    }
    if (SNAPSHOTS.has(type) && isRecord(event.response) && Array.isArray(event.response.output)) {
      // On a retry's stream the first items are those the client held before it, not this stream's text.
      const before = event.response.output;
      const theirs = this.#base?.items?.length ?? 0;
      const output = before.map((it, i) => i < theirs ? it : item(it, i));
      if (output.every((it, i) => it === before[i])) return event;
      const response: Record<string, unknown> = { ...event.response, output };
      if (typeof response.output_text === "string") response.output_text = outputText(output);
      return { ...event, response };
    }
    return event;
  }

  /**
   * An event that repeats a part's text otherwise than its deltas told it (not the text read so far, nor
   * that text continued), told as they did: the client streamed that text and the gate judged it, while
   * its final response would hold the other. Undefined when the event agrees.
   */
  #agree(event: Record<string, unknown>): Record<string, unknown> | undefined {
    if (event.type === "response.output_text.delta") return undefined;
    const told = this.#eachPart(event, (place, own) => {
      const seen = this.#seen.get(this.#key(place.itemId, place.ci)) ?? "";
      return own.startsWith(seen) ? own : seen;
    });
    return told === event ? undefined : told;
  }

  /**
   * A retry after a call written into the text (see `TextFrames.resume`): the part that holds `at` gets
   * `tail` (as a delta where the client has the part, else only in the item), its `.done` events, and its
   * item an `output_item.done` as the client then holds it; the retry's items follow that item, and its
   * final snapshot lists it so. The client's `finalResponse()` is that snapshot: listing only the items
   * finished before, it lacked the text the stream had given. Undefined when the client holds no item there
   * (the text came only in a snapshot it has not been sent).
   */
  #resumeAfter(change: { at: number; tail: string }): TextEnding | undefined {
    const place = this.#places.at(change.at);
    if (!place || typeof place.oi !== "number" || !this.#itemAt.has(place.oi)) return undefined;
    const oi = place.oi;
    const key = this.#key(place.itemId, place.ci);
    // The starts held until text followed them (see `route`) lead the held frames: they go out before the
    // frames below, unless the part gets no text (white space alone): it goes then, its message too when
    // that start is held as well, as when the turn is withheld (see `#tidy`).
    const held = this.#flow?.held ?? [];
    let lead = 0;
    // (white space alone and the ends held with a start lead too: they go out with it, see `#waitsWithOpenings`)
    while (lead < held.length && held[lead].event && this.#openings.holds(held[lead])) lead++;
    const opening = held.slice(0, lead);
    const partStart = opening.find((h) =>
      h.event!.type === "response.content_part.added" &&
      this.#key(this.#idOf(h.event!), h.event!.content_index) === key
    );
    const base = this.#base?.items ?? [];
    // The messages whose start is held with the openings: a message of white space alone (and its own)
    const waiting = new Set(
      opening.filter((h) => h.event!.type === "response.output_item.added").map((h) => h.event!.output_index),
    );
    // (a part its message brought is the client's once that message's start went out, not while it waits)
    const partGone = change.tail.trim() === "" &&
      (this.#brought.has(key) ? waiting.has(oi) : partStart !== undefined);
    if (partGone && waiting.has(oi)) {
      // Nothing held goes out: the messages that waited go too, and the retry's follow those the client
      // has (numbered after the blank ones and listing them, its items left a gap the openai SDK throws on).
      const own = this.#finishedItems.filter((_, i) =>
        this.#finishedAt[i] < oi && !waiting.has(this.#finishedAt[i])
      );
      const at = oi - [...waiting].filter((o) => typeof o === "number" && o < oi).length;
      return {
        frames: "",
        point: this.#afterTold({ at, items: [...base, ...own], seq: this.#clientSeq(0) }),
      };
    }
    const closed = this.#closedItem(place, change);
    if (!closed) return undefined;
    const content = closed.content as unknown[];
    const part = typeof place.ci === "number" ? content[place.ci] : undefined;
    // The client has the parts before the place's, the place's unless it goes, and those its item brought:
    // the others' starts were held, and a retry drops them.
    const ci = place.ci;
    const item = typeof ci !== "number" ? closed : {
      ...closed,
      content: content.filter((_, j) =>
        j < ci || (j === ci && !partGone) || this.#brought.has(this.#key(place.itemId, j))
      ),
    };
    // (a part that goes stays held: a retry drops it, and a rejection that ends the turn writes its reason there)
    // (with it, what waited with it in its part: its white space, its end)
    const from = partStart ? opening.indexOf(partStart) : lead;
    this.#stays = new Set(
      partGone
        ? opening.slice(from).filter((h) =>
          h === partStart || (h.event!.output_index === oi && h.event!.content_index === place.ci)
        )
        : [],
    );
    const events: Record<string, unknown>[] = [];
    if (!partGone && this.#opened.has(key) && isRecord(part) && typeof part.text === "string") {
      const at = { item_id: place.itemId, output_index: oi, content_index: place.ci };
      // (not where the part's text came only whole: the client was given none of it as deltas, and the
      // events below tell the prose, as a withheld turn tells its text there, see `textFrame`)
      if (change.tail !== "" && !this.#cameWhole(change.at)) {
        events.push({ type: "response.output_text.delta", ...at, delta: change.tail, logprobs: [] });
      }
      events.push({ type: "response.output_text.done", ...at, text: part.text, logprobs: [] });
      events.push(...this.#keptAnnotations(held, { oi, ci: place.ci }, part.text.length));
      events.push({ type: "response.content_part.done", ...at, part });
    }
    events.push({ type: "response.output_item.done", output_index: oi, item });
    // (after the numbers of the openings that go out before these)
    let seq = this.#clientSeq(lead);
    for (const h of opening) {
      const n = h.event!.sequence_number;
      if (!this.#stays.has(h) && typeof n === "number") seq = Math.max(seq, n);
    }
    const frames = events.map((e) => {
      const numbered = this.#lastSeq >= 0 ? { ...e, sequence_number: ++seq } : e;
      return formatSse(JSON.stringify(numbered), e.type as string);
    });
    const own = this.#finishedItems.filter((_, i) => this.#finishedAt[i] < oi);
    return {
      frames: frames.join(""),
      point: this.#afterTold({ at: oi + 1, items: [...base, ...own, item], seq }),
      // (a part that goes takes its white space with it: the client's text ends where it did, and a retry's
      // text that would run on from it is set apart, see `StreamFlow.runsOn`)
      ...(partGone ? { texts: [] } : {}),
    };
  }

  /**
   * The `output_text.annotation.added` events held (see `#resumeAfter`) of the part at `place` that cite its
   * text the client keeps (the first `length` characters), without their numbers: a retry drops what is
   * held, and the annotation of a part whose text came whole comes after that text, held with the call.
   */
  #keptAnnotations(
    held: readonly Held[],
    place: { oi: unknown; ci: unknown },
    length: number,
  ): Record<string, unknown>[] {
    return held.flatMap((h) => {
      const e = h.event;
      if (
        h.tool || e?.type !== "response.output_text.annotation.added" || e.output_index !== place.oi ||
        e.content_index !== place.ci || !isRecord(e.annotation) ||
        typeof e.annotation.end_index !== "number" ||
        e.annotation.end_index > length
      ) return [];
      const { sequence_number: _, ...rest } = e;
      return [rest];
    });
  }

  /**
   * The message item of `place` as the client holds it once the text from `at` on is `tail`: the item the
   * stream finished there, its parts told so, else one made of the text read of its parts up to the
   * place's; undefined when the place's part is none a client could hold.
   */
  #closedItem(place: TextPlace, change: { at: number; tail: string }): Record<string, unknown> | undefined {
    const told = (itemId: unknown, ci: unknown, own: string) => {
      const key = this.#key(itemId, ci);
      return this.#places.retold(key, this.#seen.get(key) ?? own, [change]);
    };
    for (let i = this.#finishedItems.length - 1; i >= 0; i--) {
      const done = this.#finishedItems[i];
      if (this.#finishedAt[i] !== place.oi || done.type !== "message" || !Array.isArray(done.content)) {
        continue;
      }
      const event = { type: "response.output_item.done", output_index: place.oi, item: done };
      return this.#eachPart(event, (p, own) => told(p.itemId, p.ci, own)).item as Record<string, unknown>;
    }
    // (a part past those the client added cannot be held: the openai SDK throws on a delta there)
    const ci = place.ci;
    if (typeof ci !== "number" || !Number.isInteger(ci) || ci < 0 || ci > this.#opened.size) return undefined;
    const content = Array.from({ length: ci + 1 }, (_, i) => ({
      type: "output_text",
      text: told(place.itemId, i, ""),
      annotations: [],
    }));
    return { id: place.itemId, type: "message", status: "completed", role: "assistant", content };
  }

  /**
   * Drops the messages and `output_text` parts whose start is held that get no text once the written calls
   * are cut (none of the `written` offsets is in them: a part, or a message, of only a call), with every
   * event addressed to them, as a body drops them; the events after them are told renumbered (see
   * `#renumbered`). A message of no part says nothing, and a client that sends its output back as the next
   * turn's input would send an empty message. A part a message brought as it was added stays (the client
   * has it with the message), and so does a message with a part of another kind (a refusal).
   */
  #tidy(flow: StreamFlow, written: readonly number[]): void {
    const keptParts = new Set<string>();
    const keptItems = new Set<unknown>();
    for (const at of written) {
      const place = this.#places.at(at);
      if (!place) continue;
      keptParts.add(this.#key(place.itemId, place.ci));
      keptItems.add(place.oi);
    }
    // The parts first: a message goes when every part it was given goes.
    const allGone = new Map<unknown, boolean>();
    const part = (oi: unknown, id: unknown, ci: number, gone: boolean) => {
      if (gone) {
        this.#goneKeys.add(this.#key(id, ci));
        const name = this.#idName(id);
        if (!this.#goneParts.has(name)) this.#goneParts.set(name, new ToolPositions());
        this.#goneParts.get(name)!.add(ci);
      }
      allGone.set(oi, (allGone.get(oi) ?? true) && gone);
    };
    for (const h of flow.held) {
      const e = h.event;
      if (e?.type === "response.output_item.added" && opensText(e) && isRecord(e.item)) {
        // (the parts a message brought, its start held: the client has none of them yet)
        const id = this.#idOf({ item_id: e.item.id, output_index: e.output_index });
        const content = Array.isArray(e.item.content) ? e.item.content : [];
        content.forEach((_, ci) => part(e.output_index, id, ci, !keptParts.has(this.#key(id, ci))));
      }
      if (e?.type !== "response.content_part.added" || typeof e.content_index !== "number") continue;
      const id = this.#idOf(e);
      const key = this.#key(id, e.content_index);
      part(
        e.output_index,
        id,
        e.content_index,
        opensText(e) && !keptParts.has(key) && !this.#brought.has(key),
      );
    }
    for (const h of flow.held) {
      const e = h.event;
      if (e?.type !== "response.output_item.added" || !opensText(e)) continue;
      const oi = e.output_index;
      if (typeof oi !== "number" || keptItems.has(oi) || allGone.get(oi) === false) continue;
      this.#goneItems.add(oi);
      this.#goneItemNames.add(this.#idName((e.item as Record<string, unknown>).id ?? this.#itemAt.get(oi)));
    }
    if (this.#goneItems.size === 0 && this.#goneKeys.size === 0) return;
    flow.setHeld(flow.held.filter((h) => !h.event || !this.#isGone(h.event)));
  }

  /** The item an event names: by its `item_id`, else by its `output_index`. */
  #idOf(event: Record<string, unknown>): unknown {
    return event.item_id ?? this.#itemAt.get(event.output_index);
  }

  /** Whether an event is addressed to a message or part `#tidy` dropped. */
  #isGone(event: Record<string, unknown>): boolean {
    const oi = event.output_index;
    const named = event.item_id !== undefined && this.#goneItemNames.has(this.#idName(event.item_id));
    if (typeof oi === "number" ? this.#goneItems.has(oi) : named) return true;
    const ci = event.content_index;
    return typeof ci === "number" && this.#goneKeys.has(this.#key(this.#idOf(event), ci));
  }

  /**
   * An event as the client gets it once `#tidy` dropped messages or parts: the output and content indices
   * after them moved up, a message's and a snapshot's content without them. `original` is the event as it
   * came, whose indices name its place.
   */
  #renumbered(event: Record<string, unknown>, original = event): Record<string, unknown> {
    if (this.#goneItems.size === 0 && this.#goneKeys.size === 0) return event;
    let e = event;
    const oi = original.output_index;
    if (typeof oi === "number") {
      const at = this.#goneItems.renumber(oi);
      if (at !== oi) e = { ...e, output_index: at };
    }
    const ci = original.content_index;
    if (typeof ci === "number") {
      const at = this.#goneParts.get(this.#idName(this.#idOf(original)))?.renumber(ci) ?? ci;
      if (at !== ci) e = { ...e, content_index: at };
    }
    if (isRecord(e.item)) {
      const item = this.#withoutGone(e.item, oi);
      if (item !== e.item) e = { ...e, item };
    }
    if (SNAPSHOTS.has(e.type as string) && isRecord(e.response) && Array.isArray(e.response.output)) {
      // (on a retry's stream the first items are those the client held before it)
      const theirs = this.#base?.items?.length ?? 0;
      const output = e.response.output.flatMap((it, i) =>
        i < theirs ? [it] : this.#goneItems.has(i) ? [] : [this.#withoutGone(it, i)]
      );
      const response: Record<string, unknown> = { ...e.response, output };
      if (typeof response.output_text === "string") response.output_text = outputText(output);
      e = { ...e, response };
    }
    return e;
  }

  /** A message item without the parts `#tidy` dropped (the item itself when none). */
  #withoutGone(item: unknown, oi: unknown): unknown {
    if (!isRecord(item) || item.type !== "message" || !Array.isArray(item.content)) return item;
    const gone = this.#goneParts.get(this.#idName(item.id ?? this.#itemAt.get(oi)));
    if (!gone) return item;
    return { ...item, content: item.content.filter((_, ci) => !gone.has(ci)) };
  }

  /**
   * An event that repeats a message's text, telling it as changed (see `TextFrames.retell`). A part's or a
   * message's start repeats none: its text is where the part starts (none, once split, see `#split`), and
   * the deltas after it carry the rest; told as changed, it brought the text the gate writes as a delta
   * too, and a client that appends deltas to it (the openai SDK's snapshot) read it twice.
   */
  #retell(
    event: Record<string, unknown>,
    changes: readonly TextChange[],
  ): Record<string, unknown> | undefined {
    if (event.type === "response.content_part.added" || event.type === "response.output_item.added") {
      return event;
    }
    if (event.type === "response.output_text.annotation.added") {
      // (one of text the gate cut goes: see `citingKept`)
      const key = this.#key(this.#idOf(event), event.content_index);
      const seen = this.#seen.get(key) ?? "";
      const told = this.#places.retold(key, seen, changes);
      return (citingKept([event.annotation], seen, told) as unknown[]).length > 0 ? event : undefined;
    }
    return this.#eachPart(
      event,
      (place, own) => this.#places.retold(this.#key(place.itemId, place.ci), own, changes),
    );
  }
  /** The highest `sequence_number` seen; -1 when the stream numbers nothing. */
  #lastSeq = -1;
  /** The `response.created` snapshot, the base of a synthesised `response.completed`. */
  #template?: Record<string, unknown>;
  /** Output items other than calls that the stream finished, in order. */
  readonly #finishedItems: Record<string, unknown>[] = [];
  /** Their output indices. */
  readonly #finishedAt: number[] = [];
  /** The length of the frames they came in. */
  #kept = 0;
  /** The highest `sequence_number` a frame the text watch wrote took (-1: none; see `#numberedOn`). */
  #wroteSeq = -1;
  /** The last `sequence_number` the router forwarded (-1: none). */
  #lastSent = -1;
  /** The flow of the stream, once a frame was routed: what is held decides where a retry continues. */
  #flow: StreamFlow | undefined;
  /** On a retry's stream: the next `sequence_number` to give (continuing the first stream's). */
  #nextSeq = -1;
  /** On a retry's stream: where it continues. */
  #base?: ResumePoint;
  /**
   * On a retry's stream, the part whose text the gate led with a blank line (see `text.lead`), as the client
   * places it, and that line: the events that repeat the part's text tell it with the line ahead.
   */
  #led: { itemId: unknown; oi: unknown; ci: unknown; text: string } | undefined;

  /** How many output items the client holds: the last snapshot's, then one per `output_item.added`. */
  #items = 0;
  /**
   * How many output items this stream gave before its last snapshot came (see `#toldIndex`, where the gate
   * adds its item ahead of the final snapshot, which may list items never streamed, or none).
   */
  #itemsBefore = 0;
  /** Whether a frame dropped unread named a call (see `unread`). */
  #unreadCall = false;
  /** The reason `#endOfDropped` or `tellDropped` wrote, once one did (see `FrameRouter.ownReason`). */
  #ownReason: string | undefined;
  /** The message item `tellDropped` held, its text, its held frames, and the final snapshot as it came. */
  #toldItem:
    | {
      item: Record<string, unknown>;
      text: string;
      frames: ReadonlySet<Held>;
      terminal: { raw: string; event: Record<string, unknown> };
    }
    | undefined;
  /**
   * Whether a final event came after a frame dropped unread that named a call: the gate tells of that call
   * in it (or ahead of it), and a later final event is refused (see `refuse`).
   */
  #endsTold = false;
  /** The last final event sent on as it came (not held): what a frame after it follows (see `#endAgain`). */
  #final: { raw: string; event: Record<string, unknown> } | undefined;
  /** Whether `#tellLate` waits for the events seen to go out. */
  #late = false;
  /** Where a retry puts that item, ahead of its own (see `#afterTold`). */
  #toldAt: { at: number; seq?: number } | undefined;
  /** Where a client holds each item added, by the `output_index` the provider gave it. */
  readonly #placeOf = new Map<number, number>();
  /** True once a call was added away from its place: from then on every event is sent at its item's place. */
  #placing = false;

  /**
   * The length of the frames of the items kept, and a fixed cost for each item's place and each call's
   * position noted: a stream of tiny `output_item.added` events grows those without growing held text.
   */
  get kept(): number {
    return this.#kept + (this.#placeOf.size + this.#tools.size) * PLACE_COST;
  }

  /**
   * The official client appends each `output_item.added` item whatever its `output_index` (OpenAI itself
   * leaves gaps), and applies every other event to `output[output_index]` of what it holds (`"0"` too);
   * a snapshot replaces what it holds (here too: the places of the items added before it are forgotten, and
   * its items are at their own). The AI SDK keys calls by `output_index` instead. So that both read
   * every call as the gate does, a call added away from the place a client appends it to (past the items
   * it holds, or at an index already used) is not dropped but placed: from then on every event goes out at
   * its item's place (see {@linkcode ResponsesStream.place}), and an event addressed to an index where no
   * item was added is refused, as is an event whose `output_index` is no whole number, or a call added at
   * none (no client can tell which call its later events are for).
   */
  refuse(event: Record<string, unknown>): string | undefined {
    const type = event.type as string;
    // Any event after a final event the gate tells in (or ahead of) of a call dropped unread. A final one:
    // the openai SDK keeps the last final snapshot as the response, so the provider's again took the place
    // of the gate's and the client lost the told item; renumbered it would still say less than the first.
    // Any other: the SDK applies it to that response at the place the provider gave, which the told item
    // may hold (a later message's words ran into the told text, a later call's item took its place), and,
    // numbered as it came, below the told item's numbers. Refused, the first stays the end. Where the gate
    // tells nothing, each goes as it came.
    if (this.#endsTold) {
      const what = TERMINAL.has(type) ? `a second ${type}` : type;
      return `${what} after the response ended, where toolguard told of a call it dropped; it was dropped`;
    }
    if (TERMINAL.has(type)) this.#endsTold = this.#unreadCall;
    if (SNAPSHOTS.has(type)) {
      // The client now holds the snapshot's items, each at its index, and nothing else: the places of the
      // items added before are void (an event placed by them would go to another item, or to none, where
      // the SDK throws), so placing starts over, as at the stream's start.
      const response = isRecord(event.response) ? event.response : {};
      this.#itemsBefore = this.#items;
      this.#items = Array.isArray(response.output) ? response.output.length : 0;
      this.#placeOf.clear();
      for (let i = 0; i < this.#items; i++) this.#placeOf.set(i, i);
      this.#placing = false;
      return undefined;
    }
    const oi = event.output_index;
    const whole = typeof oi === "number" && Number.isInteger(oi) && oi >= 0;
    if (type === "response.output_item.added") {
      if (isClientCall(event.item) && !whole) {
        // (told as a frame not JSON that names a call is: left, the call went unsaid, the model never knew)
        this.#lostCall();
        return `a call added at output_index ${
          JSON.stringify(oi ?? null)
        }, which is no item's place; it was dropped`;
      }
      const place = this.#items++;
      if (isClientCall(event.item) && oi !== place) this.#placing = true;
      if (whole) this.#placeOf.set(oi, place);
    } else if (oi !== undefined && !whole) {
      return `${type} at output_index ${JSON.stringify(oi)}, which is no item's place; it was dropped`;
    } else if (this.#placing && whole && !this.#placeOf.has(oi)) {
      return `${type} at output_index ${oi}, where no item was added; it was dropped`;
    }
    return undefined;
  }

  /**
   * Once a call was added away from its place (see {@linkcode ResponsesStream.refuse}): the event at the
   * place a client holds its item, which is where the gate reads it too. Before, events go out as they came.
   * The frame keeps its own `event:` name: the event's `type` is the provider's text, which may hold a line
   * break, and written into the name it would end the frame and begin one the gate never read.
   */
  place(
    raw: string,
    event: Record<string, unknown>,
    name: string | undefined,
  ): { raw: string; event: Record<string, unknown> } {
    const oi = event.output_index;
    if (!this.#placing || typeof oi !== "number") return { raw, event };
    const place = this.#placeOf.get(oi);
    if (place === undefined || place === oi) return { raw, event };
    const placed = { ...event, output_index: place };
    return { raw: formatSse(JSON.stringify(placed), name), event: placed };
  }

  note(event: Record<string, unknown>, raw: string): void {
    // The calls' items are noted before the text watch sees their events (it may hold them).
    const type = event.type;
    const callItem = (type === "response.output_item.added" || type === "response.output_item.done") &&
      isClientCall(event.item);
    if (callItem && typeof event.output_index === "number") this.#tools.add(event.output_index);
    if (typeof event.sequence_number === "number") {
      this.#lastSeq = Math.max(this.#lastSeq, event.sequence_number);
    }
    if (event.type === "response.created" && isRecord(event.response)) this.#template ??= event.response;
    const delta = deltaText(event);
    if (!this.#watched && typeof delta === "string") {
      const key = this.#key(event.item_id ?? this.#itemAt.get(event.output_index), event.content_index);
      this.#streamed.set(key, (this.#streamed.get(key) ?? "") + delta);
      this.#kept += delta.length;
    }
    const item = isRecord(event.item) ? event.item : undefined;
    if (event.type === "response.output_item.done" && item && !isClientCall(item)) {
      this.#finishedItems.push(item);
      this.#kept += raw.length;
      this.#finishedAt.push(typeof event.output_index === "number" ? event.output_index : -1);
    }
  }

  /** The items the client has when the calls are rejected: those before the first call. */
  resumePoint(): ResumePoint {
    const at = this.#tools.replacementAt(0);
    const own = this.#finishedItems.filter((_, i) => this.#finishedAt[i] < at);
    const first = this.#flow?.held.findIndex((h) => h.tool) ?? -1;
    return this.#afterTold({
      at,
      items: [...(this.#base?.items ?? []), ...own],
      seq: this.#clientSeq(Math.max(first, 0)), // (no call frame held: all go)
    });
  }

  /**
   * The last `sequence_number` the client has once a retry drops the held frames from `from` on (those
   * before go out first): a retry's numbers follow it. Not only the router's last: the text watch sends the
   * frames it held (text released, or held beside a call) itself, and a retry numbered after the router's
   * last gave the client numbers it had, going back. The frames dropped are the last the stream brought:
   * the client has every number seen before the first of them (as the provider numbered them, below it).
   */
  #clientSeq(from: number): number {
    const dropped = this.#flow?.held.slice(from) ?? [];
    const first = dropped.find((h) => typeof h.event?.sequence_number === "number");
    if (first === undefined) return this.#lastSeq;
    return Math.max(this.#lastSent, (first.event!.sequence_number as number) - 1);
  }

  /**
   * A retry's events continue the response the client is assembling: its `response.created` and
   * `in_progress` are dropped, output indices follow the items forwarded, sequence numbers continue, and
   * the final snapshot lists the forwarded items first.
   */
  resume(
    raw: string,
    event: Record<string, unknown>,
    point: ResumePoint,
  ): { raw: string; event: Record<string, unknown> } | undefined {
    const type = event.type as string;
    if (type === "response.created" || type === "response.in_progress" || type === "response.queued") {
      return undefined;
    }
    this.#base = point;
    if (this.#nextSeq < 0) this.#nextSeq = (point.seq ?? -1) + 1;
    const e: Record<string, unknown> = { ...event };
    if (typeof event.sequence_number === "number") e.sequence_number = this.#nextSeq++;
    if (typeof event.output_index === "number") e.output_index = event.output_index + point.at;
    if (TERMINAL.has(type) && isRecord(event.response)) {
      const output = Array.isArray(event.response.output) ? event.response.output : [];
      e.response = { ...event.response, output: [...(point.items ?? []), ...output] };
    }
    const told = this.#ledRetold(e);
    return { raw: reframe(told, { raw, event }), event: told };
  }

  /**
   * Of an event that carries a part's text whole (a `.done` event, a snapshot; see `#readText`), the first
   * part whose text goes on past what was read of it, and what it adds; undefined for every other event.
   * Read only: the event is read as text when it passes.
   */
  #wholeText(
    event: Record<string, unknown>,
  ): { place: TextPlace; more: string; scored: boolean } | undefined {
    const type = event.type as string;
    if (!WHOLE_TEXT.has(type) && !SNAPSHOTS.has(type)) return undefined;
    let found: { place: TextPlace; more: string; scored: boolean } | undefined;
    this.#eachPart(event, (place, own, carrier) => {
      const seen = this.#seen.get(this.#key(place.itemId, place.ci)) ?? "";
      if (!found && own.length > seen.length && own.startsWith(seen)) {
        found = { place, more: own.slice(seen.length), scored: isScored(carrier) };
      }
      return own;
    });
    return found;
  }

  /**
   * A retry's first text delta led by `text` in a delta of its own, numbered where the delta was (the delta
   * and the events after it one on); the part noted, so that what repeats its text tells the line too. A
   * part whose text comes first whole, in a `.done` event or a snapshot (a server that sends no deltas),
   * gets no delta (the client may hold no part for one, see `text.textFrame`): the event tells the line,
   * as every one after it that repeats the part's text does.
   */
  #leadFrames(event: Record<string, unknown>, text: string): Record<string, unknown>[] {
    if (event.type !== "response.output_text.delta") {
      const place = this.#wholeText(event)?.place;
      if (!place) return [event];
      this.#led = { itemId: place.itemId, oi: place.oi, ci: place.ci, text };
      return [this.#ledRetold(event)];
    }
    this.#led = { itemId: event.item_id, oi: event.output_index, ci: event.content_index, text };
    const lead: Record<string, unknown> = {
      type: "response.output_text.delta",
      ...(typeof event.sequence_number === "number" ? { sequence_number: event.sequence_number } : {}),
      item_id: event.item_id,
      output_index: event.output_index,
      content_index: event.content_index,
      delta: text,
      logprobs: [],
    };
    if (typeof event.sequence_number !== "number") return [lead, event];
    return [lead, { ...event, sequence_number: this.#nextSeq++ }];
  }

  /**
   * A retry's event as it repeats the text of the part led by a blank line (see `#leadFrames`): its
   * `.done` events, its item's, the final snapshot's, with the line ahead, and the annotations' offsets
   * into that text moved past it; any other event (a delta: the line went in one of its own) as it is.
   */
  #ledRetold(event: Record<string, unknown>): Record<string, unknown> {
    const led = this.#led;
    if (!led || event.type === "response.output_text.delta") return event;
    const by = led.text.length;
    const part = (p: unknown) =>
      isRecord(p) && p.type === "output_text" && typeof p.text === "string"
        ? {
          ...p,
          text: led.text + p.text,
          ...(Array.isArray(p.annotations) ? { annotations: allCitedOn(p.annotations, by) } : {}),
        }
        : p;
    const item = (it: unknown, at: unknown) => {
      const same = isRecord(it) && (led.itemId !== undefined ? it.id === led.itemId : at === led.oi);
      if (!same || it.type !== "message" || !Array.isArray(it.content)) return it;
      return { ...it, content: it.content.map((p, ci) => ci === led.ci ? part(p) : p) };
    };
    const type = event.type;
    const inPart = event.output_index === led.oi && event.content_index === led.ci;
    if (type === "response.output_text.done" && inPart && typeof event.text === "string") {
      return { ...event, text: led.text + event.text };
    }
    if (type === "response.content_part.done" && inPart) return { ...event, part: part(event.part) };
    if (type === "response.output_text.annotation.added" && inPart && isRecord(event.annotation)) {
      return { ...event, annotation: citedOn(event.annotation, by) };
    }
    if (type === "response.output_item.done" && event.output_index === led.oi) {
      return { ...event, item: item(event.item, event.output_index) };
    }
    if (TERMINAL.has(type as string) && isRecord(event.response) && Array.isArray(event.response.output)) {
      // (the first items are those the client held before the retry: an id the provider gave again is not it)
      const theirs = this.#base?.items?.length ?? 0;
      const output = event.response.output.map((it, i) => i < theirs ? it : item(it, i));
      const response: Record<string, unknown> = { ...event.response, output };
      if (typeof response.output_text === "string") response.output_text = outputText(output);
      return { ...event, response };
    }
    return event;
  }

  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void {
    this.#flow = flow;
    const type = event.type;
    // A call is held from its first sign: its item added, else its item done, else the final snapshot
    // (a server may skip the earlier events; a client reads the call from whichever it gets).
    const callItem = (type === "response.output_item.added" || type === "response.output_item.done") &&
      isClientCall(event.item);
    if (callItem) flow.pending = true;
    const listsCalls = snapshotWithCalls(event);
    if (listsCalls) flow.pending = true;
    if (type === "error" || (type === "response.failed" && !listsCalls)) return flow.send(raw);
    if (!flow.pending) {
      // A message's or part's start that brings no text waits for what comes next, held for the watch's
      // answer, so that its releases keep it first: a part (or message) of only a written call, cut, then
      // goes with it (see `#tidy`), where the client kept an empty part (or message).
      if (opensText(event) || this.#waitsWithOpenings(event)) {
        if (event.type === "response.content_part.added") {
          this.#waitingPart = { oi: event.output_index, ci: event.content_index };
        }
        // (a message that brought its parts waits with its last: white space alone in it waits too)
        const brought = isRecord(event.item) && Array.isArray(event.item.content) ? event.item.content : [];
        if (brought.length > 0) this.#waitingPart = { oi: event.output_index, ci: brought.length - 1 };
        return this.#openings.hold({ raw, event }, flow);
      }
      this.sendOpenings(flow);
      // (white space alone says nothing: the reason then follows it without a blank line, as in a body)
      const said = this.#said(event);
      if (said !== undefined) flow.sawText(said);
      if (TERMINAL.has(type as string)) {
        if (this.#endOfDropped(raw, event, flow)) return;
        this.#final = { raw, event };
      }
      if (typeof event.sequence_number === "number") this.#lastSent = event.sequence_number;
      flow.send(raw);
      if (this.#late) this.#tellLate(flow);
      return;
    }
    const oi = typeof event.output_index === "number" ? event.output_index : -1;
    // (an argument event or a call's item at no index is still a call's: a withheld turn drops it with the
    // calls; the item finished there was sent whole, the rejected call in it)
    flow.hold({ raw, event, tool: this.#tools.has(oi) || callItem || ARGUMENT_EVENTS.has(type as string) });
  }

  /**
   * Ends a response that holds no call, where a frame dropped unread named one, as a rejected turn ends: a
   * message item saying so, then the final snapshot listing it. True when it did. Left as it came, the
   * model was never told that a call of its turn was dropped and did not run (Responses has no stop that
   * says a call was made: the frame's own words are all there is).
   */
  #endOfDropped(raw: string, event: Record<string, unknown>, flow: StreamFlow): boolean {
    if (!this.#unreadCall || this.#ownReason !== undefined) return false;
    // (an unread frame's calls are not known: at least one)
    const reason = malformedCallsReason(1);
    this.#ownReason = reason;
    // (numbered from the final snapshot's own number, which it gives up for them: none is left free)
    const emit = this.#emitter(flow, event.sequence_number);
    // (the client reads the item's events against the items it holds, the final snapshot coming after them)
    const item = this.#message(this.#lead(flow) + reason, this.#toldIndex(), emit);
    const response = isRecord(event.response) ? event.response : {};
    const output = Array.isArray(response.output) ? response.output : [];
    emit({ ...event, response: { ...response, output: [...output, item] } }, { raw, event });
    return true;
  }

  /**
   * See `FrameRouter.tellDropped`: beside calls held (native or written), a frame dropped unread that named
   * a call is told as `#endOfDropped` tells it, a message item put among the held events ahead of the final
   * snapshot, which lists it and takes the numbers after it. The held events before it keep theirs, so a
   * kept turn goes out byte for byte up to there; a rejected one replays the item with the rest (the
   * judge's reason, drop-call's too, then follows it), a retry sends it ahead of its stream (see
   * `endsDropped`). Beside a written call the item is one frame marked told, as Anthropic's block: the
   * watch's ending leads a rejection's reason with its words. Left out, the calls that passed went out with
   * the dropped one unsaid, and the client had no word of it. Where events came after the final event (held
   * after it, or after one that went out), the item follows them, and the final event again (see
   * `#endAgain`).
   */
  tellDropped(flow: StreamFlow, _answers?: ReadonlySet<number>, { written = false } = {}): void {
    const held = flow.held;
    const at = held.findLastIndex((h) => h.event !== undefined && TERMINAL.has(h.event.type as string));
    if (!this.#unreadCall || this.#ownReason !== undefined) return;
    // (after events that came after the final event, held, or after one that went out: see `#endAgain`;
    // beside a written call only after one that went out: one held, the watch retells the text in the frames
    // it held, the final one too)
    const after = at < 0 || (!written && held.slice(at + 1).some((h) => h.event !== undefined));
    const from = at >= 0 ? { raw: held[at].raw, event: held[at].event! } : after ? this.#final : undefined;
    if (!from) return;
    const terminal = from.event;
    // (an unread frame's calls are not known: at least one)
    const reason = malformedCallsReason(1);
    this.#ownReason = reason;
    let seq = after ? (this.#lastSeq >= 0 ? this.#lastSeq + 1 : undefined) : terminal.sequence_number;
    const frames: Held[] = [];
    const emit: Emit = (event, from) => {
      const e = typeof seq === "number" ? { ...event, sequence_number: seq++ } : event;
      frames.push({ raw: reframe(e, from, e.type as string), event: e, tool: false });
    };
    const text = this.#lead(flow) + reason;
    let item: Record<string, unknown>;
    if (after) item = this.#endAgain(text, emit, from, held.slice(at + 1));
    else {
      const index = this.#toldIndex();
      item = this.#message(text, index, emit, `${TOLD_ID}${index}`);
      const response = isRecord(terminal.response) ? terminal.response : {};
      const output = Array.isArray(response.output) ? response.output : [];
      emit({ ...terminal, response: { ...response, output: [...output, item] } }, from);
    }
    // (the final snapshot stays the frame it was to the text watch: it retells the text a written call cut;
    // made again after one that went out, it lists the text as streamed, the watch's to retell too: left, it
    // listed a rejected written call whole, where the client had read its cut and the reason)
    const end = after
      ? { ...frames.pop()!, ...(written ? { answer: 0 } : {}) }
      : { ...held[at], ...frames.pop()! };
    const told = written
      ? [{
        raw: frames.map((h) => h.raw).join(""),
        event: frames[2].event,
        tool: false,
        told: { reason, answer: 0, placed: true },
      }]
      : frames;
    this.#toldItem = { item, text, frames: new Set(told), terminal: from };
    flow.setHeld(
      after ? [...held, ...told, end] : [...held.slice(0, at), ...told, end, ...held.slice(at + 1)],
    );
  }

  /**
   * Tells of a call dropped unread after the final event (a frame not JSON that names one came after it,
   * or events came between it and the frames held): a message item saying so at the place after the items
   * the client holds then, then `final` again, listing its items, the calls finished among the frames
   * held after it (`after`: the judge's to keep or drop) and the told item, through `emit` (numbered on).
   * The openai SDK applies the events after a final event to the response it returns, and keeps the last
   * final snapshot: put ahead of the final event, the item took the place of one added after it. Other
   * items finished after the final event are not listed again: their text was read as the frames came,
   * ahead of the text watch. Returns the item.
   */
  #endAgain(
    text: string,
    emit: Emit,
    final: { raw: string; event: Record<string, unknown> },
    after: readonly Held[] = [],
  ): Record<string, unknown> {
    const index = (this.#base?.at ?? 0) + this.#items;
    const item = this.#message(text, index, emit, `${TOLD_ID}${index}`);
    const response = isRecord(final.event.response) ? final.event.response : {};
    const output = Array.isArray(response.output) ? response.output : [];
    const calls = after.flatMap((h) =>
      h.event?.type === "response.output_item.done" && isClientCall(h.event.item) ? [h.event.item] : []
    );
    // (a part's text as the client streamed it: words that came after the final event went into the part it
    // listed, and the SDK's final response, this snapshot, lost them; a written call's cut and reason, the
    // text watch retells, see `tellDropped`)
    const listed = this.#eachPart({
      ...final.event,
      response: { ...response, output: [...output, ...calls] },
    }, (place, own) => {
      const seen = (this.#watched ? this.#seen : this.#streamed).get(this.#key(place.itemId, place.ci)) ?? "";
      return seen.startsWith(own) ? seen : own;
    });
    const again = isRecord(listed.response) ? listed.response : response;
    const items = Array.isArray(again.output) ? again.output : [];
    emit({ ...listed, response: { ...again, output: [...items, item] } }, final);
    return item;
  }

  /**
   * Where a retry continues (`point`, the router's or the text watch's), past the item `tellDropped` held
   * when it is held still: the retry sends it first, at the point's place and numbers (see `endsDropped`;
   * the frame marked told beside a written call is `placed`: sent as a text frame, its words went as a
   * delta into a part the client holds, numbered as that part's first).
   */
  #afterTold(point: ResumePoint): ResumePoint {
    const told = this.#toldItem;
    const flow = this.#flow;
    if (!told || !flow || !flow.held.some((h) => told.frames.has(h))) return point;
    this.#toldAt = { at: point.at, seq: point.seq };
    return {
      ...point,
      at: point.at + 1,
      items: [...point.items ?? [], told.item],
      ...(typeof point.seq === "number" && this.#lastSeq >= 0 ? { seq: point.seq + MESSAGE_EVENTS } : {}),
    };
  }

  /**
   * See `FrameRouter.endsDropped`: the item `tellDropped` held, at the place and numbers `#afterTold` gave
   * it, ahead of a retry's stream. Dropped with the calls, the model never knew that a call of its turn
   * was dropped as malformed, where onVerdict said so.
   */
  endsDropped(_dropped: readonly Held[], flow: StreamFlow): string {
    const at = this.#toldAt;
    if (!at || !this.#toldItem) return "";
    let seq = typeof at.seq === "number" ? at.seq + 1 : undefined;
    let out = "";
    this.#message(this.#toldItem.text, at.at, (event) => {
      const e = seq !== undefined && this.#lastSeq >= 0 ? { ...event, sequence_number: seq++ } : event;
      out += formatSse(JSON.stringify(e), e.type as string);
    }, this.#toldItem.item.id as string);
    flow.sawText(this.#toldItem.text);
    return out;
  }

  /**
   * See `FrameRouter.endsWritten`: a rejected written call's reason was led by the words of the item
   * `tellDropped` held (the watch's ending took them): the final snapshot no longer lists that item, and
   * takes back the number it gave up for it. The held events are then numbered on without gaps (see
   * `#numberedOn`).
   */
  endsWritten(flow: StreamFlow): void {
    this.#untold(flow);
    this.#numberedOn(flow);
  }

  /**
   * Numbers the held events on from the first held number, one each, where the text watch's ending wrote
   * the text of several deltas in one (a rejected written call's, a failed watch's): the events after it
   * kept their numbers, and the numbers of the deltas it took in were left out (0, 1, 2, 3, 6, 7), where
   * clients read them as a sequence. Only a stream the gate changed comes here: one let on keeps its bytes.
   * They number on from the first held, or from the watch's last frame where that went out ahead of them.
   */
  #numberedOn(flow: StreamFlow): void {
    let seq: number | undefined;
    const renumber = (e: Record<string, unknown>) => {
      if (typeof e.sequence_number !== "number") return e;
      // (on from the watch's last frame where it went out ahead of what is held: a failed watch sends it)
      const first = e.sequence_number;
      seq ??= this.#wroteSeq >= 0 && first > this.#wroteSeq + 1 ? this.#wroteSeq + 1 : first;
      return e.sequence_number === seq ? (seq++, e) : { ...e, sequence_number: seq++ };
    };
    flow.setHeld(flow.held.map((h) => {
      if (h.event !== undefined) {
        const event = renumber(h.event);
        return event === h.event ? h : { ...h, raw: reframe(event, { raw: h.raw, event: h.event }), event };
      }
      // (a frame the watch wrote holds no parsed event: its events read again, one or more)
      let raw = "";
      for (const f of sseParser().push(h.raw)) {
        const read = f.data === undefined ? undefined : parseJsonSafe(f.data);
        const parsed = read?.ok && isRecord(read.value) ? read.value : undefined;
        const event = parsed && renumber(parsed);
        raw += event === parsed ? f.raw : formatSse(JSON.stringify(event), f.event);
      }
      return raw === h.raw ? h : { ...h, raw };
    }));
  }

  /** See `endsWritten`: the final snapshot without the item `tellDropped` held, once the watch took it. */
  #untold(flow: StreamFlow): void {
    const told = this.#toldItem;
    if (!told || flow.held.some((h) => told.frames.has(h))) return;
    flow.setHeld(flow.held.map((h) => {
      const e = h.event;
      if (!e || !TERMINAL.has(e.type as string) || !isRecord(e.response)) return h;
      const output = Array.isArray(e.response.output) ? e.response.output : [];
      const event: Record<string, unknown> = {
        ...e,
        response: { ...e.response, output: output.filter((o) => !isRecord(o) || o.id !== told.item.id) },
      };
      if (typeof e.sequence_number === "number") event.sequence_number = told.terminal.event.sequence_number;
      return { ...h, raw: reframe(event, { raw: h.raw, event: e }, event.type as string), event };
    }));
  }

  /** See `FrameRouter.final`: the response's final event (`response.completed`, `.incomplete`, `.failed`). */
  final(event: Record<string, unknown>): boolean {
    return TERMINAL.has(event.type as string) || event.type === "response.failed";
  }

  /**
   * See `FrameRouter.unread`: only a frame that names a call (a `function_call` item's type, a `call_id`,
   * see `namesKey`) is taken for a call's, as Ollama reads its lines: any other may be text. Told where the
   * response then ends with no call held (see `#endOfDropped`), beside calls held (see `tellDropped`), and
   * after a final event that went out untold, once every event seen went out (see `#tellLate`).
   */
  unread(data: string): void {
    if (namesKey(data, "type", "function_call") || namesKey(data, "call_id")) this.#lostCall();
  }

  /**
   * Notes a call the gate dropped with no call kept for it (a frame not JSON that names one, a call added at
   * no item's place): told where the response ends, beside the calls held, or after a final event that went
   * out (see `unread`).
   */
  #lostCall(): void {
    this.#unreadCall = true;
    if (this.#flow) this.#tellLate(this.#flow);
  }

  /**
   * After a final event that went out untold, where a frame dropped unread named a call, with no call held
   * (one held after it is told with it, see `tellDropped`): tells of it as `#endAgain` says once every event
   * seen went out (the text watch may hold some, routed later: told ahead of them, they went out after the
   * told item with numbers below its own), and that final event again is the end (see `refuse`). Left, the
   * response had ended, and no one told the model of the call, nor onVerdict.
   */
  #tellLate(flow: StreamFlow): void {
    this.#late = false;
    if (!this.#final || flow.pending || this.#ownReason !== undefined) return;
    this.sendOpenings(flow);
    if (flow.held.length > 0 || this.#lastSeq > this.#lastSent) {
      this.#late = true;
      return;
    }
    this.#ownReason = malformedCallsReason(1);
    this.#endsTold = true;
    this.#endAgain(this.#lead(flow) + this.#ownReason, this.#emitter(flow), this.#final);
  }

  /** See `FrameRouter.ownReason`. */
  ownReason(): string | undefined {
    return this.#ownReason;
  }

  /**
   * Whether an event waits with the openings held (see `route`): an event of no item, white space alone in
   * the part whose start waits last, that part's end, and its message's end (the message's start waits, or
   * that part ends it). A part of white space alone before a rejected written call then goes, as a body
   * drops a blank part (and an Anthropic or Cohere stream a blank block); sent, the client kept it where the
   * body had none.
   */
  #waitsWithOpenings(event: Record<string, unknown>): boolean {
    if (!this.#openings.waiting) return false;
    // An event of no item (a keep-alive) between a message's start and its first part: sent, it let the
    // start out, and a part of only a written call, cut, left the client a message of no part.
    if (
      event.output_index === undefined && event.item_id === undefined &&
      !SNAPSHOTS.has(event.type as string) &&
      !TERMINAL.has(event.type as string)
    ) return true;
    const part = this.#waitingPart;
    const ofPart = part !== undefined && event.output_index === part.oi && event.content_index === part.ci;
    switch (event.type) {
      case "response.output_text.delta":
        return ofPart && !hasWords(event.delta);
      case "response.output_text.done":
      case "response.content_part.done": {
        // (a part whose text came only here, words and all, goes out: it says something)
        const told = event.type === "response.output_text.done"
          ? event.text
          : isRecord(event.part) && event.part.text;
        return ofPart && !hasWords(told);
      }
      case "response.output_item.done":
        return event.output_index === part?.oi ||
          this.#flow?.held.some((h) =>
              h.event?.type === "response.output_item.added" && h.event.output_index === event.output_index &&
              opensText(h.event)
            ) === true;
    }
    return false;
  }

  /** Sends the held openings the watch has not let out or dropped since (see `FrameRouter.sendOpenings`). */
  /** See `FrameRouter.textOf`. */
  textOf(event: Record<string, unknown>): unknown {
    return this.#said(event);
  }

  /**
   * The text an event going out adds to what the client has: a delta's, or what an event that tells a
   * part's text whole adds to it (a server may send a part's text only so: the client's `.done` events and
   * final response hold it, and a reason or a retry's text after it ran on from its words). Undefined for
   * an event of no text.
   */
  #said(event: Record<string, unknown>): string | undefined {
    const delta = deltaText(event);
    if (!this.#watched && typeof delta === "string") {
      const key = this.#key(event.item_id ?? this.#itemAt.get(event.output_index), event.content_index);
      this.#toldLength.set(key, (this.#toldLength.get(key) ?? 0) + delta.length);
    }
    if (typeof delta === "string") return delta;
    if (this.#watched) return this.#addedWhole.get(event);
    const type = event.type as string;
    if (!WHOLE_TEXT.has(type) && !SNAPSHOTS.has(type)) return undefined;
    let said = "";
    this.#eachPart(event, (place, own) => {
      const key = this.#key(place.itemId, place.ci);
      const told = this.#toldLength.get(key) ?? 0;
      if (own.length > told) {
        said += own.slice(told);
        this.#toldLength.set(key, own.length);
      }
      return own;
    });
    return said === "" ? undefined : said;
  }

  sendOpenings(flow: StreamFlow): void {
    this.#waitingPart = undefined;
    const stays = this.#stays;
    this.#stays = new Set();
    this.#openings.send(flow, (h) => stays.has(h));
  }

  /**
   * What goes before the reason's message: one blank line after text the client has, or gets with the held
   * events (text after a call is held with it, and was never told seen), as a body puts it (see
   * `reasonAfter`); else the `output_text` a client reads ran the last word into the reason.
   */
  #lead(flow: StreamFlow): string {
    return flow.lead(0, heldText(flow, (event) => this.#said(event)));
  }

  replace(answerReason: AnswerReason, _calls: unknown, flow: StreamFlow, told?: ReadonlySet<number>): void {
    const emit = this.#emitter(flow);
    const { next, terminal, sent } = this.#replay(flow, emit);
    // (an answer told already, where a failed watch withheld its text, gets no second message)
    const item = told?.has(0) // (one answer)
      ? []
      : [this.#message(this.#lead(flow) + answerReason(0), this.#tools.replacementAt(next), emit)];
    const base = isRecord(terminal?.response) ? terminal.response : this.#template ?? {};
    // The final snapshot's items when it lists them, else the items this stream finished.
    const listed = Array.isArray(base.output) ? base.output.filter((o) => !isClientCall(o)) : [];
    // (a finished item held is listed as it went out: noted as it came, it held the text a failed watch withheld)
    const finished = this.#finishedItems.map((i) => (typeof i.id === "string" && sent.get(i.id)) || i);
    const priorOutput = listed.length >= finished.length ? listed : finished;
    emit({
      type: "response.completed",
      response: { ...base, status: "completed", output: [...priorOutput, ...item] },
    });
  }

  /**
   * The held events without the dropped calls' (the rest renumbered), a message item with the reason,
   * and a final snapshot listing the kept calls: the client still runs them.
   */
  dropCalls(answerReason: AnswerReason, split: SplitCalls, flow: StreamFlow): void {
    const reason = answerReason(0); // (one answer)
    const text = this.#lead(flow) + reason;
    const emit = this.#emitter(flow);
    const gone = new ToolPositions();
    for (const c of split.dropped) if (c.slot >= 0) gone.add(c.slot); // (one at no index holds no place)
    const goneIds = new Set(split.dropped.map((c) => c.id));
    const goneItems = droppedItems(split);
    const goneSlots = new Set(
      split.dropped.filter((c) => c.dialect === "openai_responses").map((c) => c.slot),
    );
    let next = 0;
    let terminal: Record<string, unknown> | undefined;
    for (const h of flow.held) {
      const e = h.event;
      if (!e) continue;
      if (TERMINAL.has(e.type as string)) terminal = e;
      else if (this.#ofDropped(e, goneSlots, goneIds, flow)) continue;
      else if (typeof e.output_index !== "number") {
        emit(withoutCalls(e, goneItems()), { raw: h.raw, event: e });
      } else if (!gone.has(e.output_index)) {
        const output_index = gone.renumber(e.output_index);
        next = Math.max(next, output_index + 1);
        emit({ ...e, output_index }, { raw: h.raw, event: e });
      }
    }
    const item = this.#message(text, next, emit);
    const base = isRecord(terminal?.response) ? terminal.response : this.#template ?? {};
    const goneItem = goneItems();
    const output = (Array.isArray(base.output) ? base.output : []).filter((o) =>
      !(isClientCall(o) && goneItem(o))
    );
    emit({ type: terminal?.type ?? "response.completed", response: { ...base, output: [...output, item] } });
  }

  /**
   * Whether an event belongs to a dropped call: the gate's reader filed it under that call (an argument
   * event it joined to the call by `item_id`, wherever its `output_index` points; a call item), or it
   * finishes a dropped call's item at no `output_index`. The openai SDK throws on such an event at no
   * `output_index` and the AI SDK passes it by (its schema wants the index), but a client that follows
   * `item_id` would run the arguments of a call the gate removed. The reader's filing is the one rule: a
   * map of the router's own (item id to the call first seen with it) could name another call than the
   * reader joined, and let a dropped call's arguments go out.
   */
  #ofDropped(
    event: Record<string, unknown>,
    goneSlots: ReadonlySet<number>,
    goneIds: ReadonlySet<unknown>,
    flow: StreamFlow,
  ): boolean {
    const slot = flow.filed(event);
    if (slot !== undefined && goneSlots.has(slot)) return true;
    return typeof event.output_index !== "number" && event.type === "response.output_item.done" &&
      isClientCall(event.item) && goneIds.has(event.item.call_id);
  }

  /**
   * Emits events after the last one forwarded, renumbering sequence numbers so they keep increasing; a held
   * event under the `event:` name its frame (`from`) had (see `reframe`). `first`: the number of an event
   * not sent that they replace, where no event is held (one past the last sent at least).
   */
  #emitter(flow: StreamFlow, first?: unknown): Emit {
    let seq = this.#lastSeq + 1;
    const firstHeldSeq = flow.held.find((h) => typeof h.event?.sequence_number === "number")?.event
      ?.sequence_number;
    if (typeof firstHeldSeq === "number") seq = firstHeldSeq;
    else if (Number.isInteger(first) && (first as number) > this.#lastSent) seq = first as number;
    return (event, from) => {
      const e = this.#lastSeq >= 0 ? { ...event, sequence_number: seq++ } : event;
      flow.send(reframe(e, from, e.type as string));
    };
  }

  /**
   * Replays the held events that are not part of a call, renumbered. Returns the output index after the
   * last one replayed and the held terminal event (not replayed: a new one ends the stream), whatever held
   * it: the text watch holds one that lists calls as part of a call, and its usage must still be told; and
   * the finished items replayed, by id, as they went out.
   */
  #replay(
    flow: StreamFlow,
    emit: Emit,
  ): { next: number; terminal?: Record<string, unknown>; sent: Map<string, Record<string, unknown>> } {
    let next = 0;
    let terminal: Record<string, unknown> | undefined;
    const sent = new Map<string, Record<string, unknown>>();
    for (const h of flow.held) {
      const e = h.event;
      if (e && TERMINAL.has(e.type as string)) terminal = e;
      else if (!e || h.tool) continue;
      else if (typeof e.output_index === "number") {
        if (e.type === "response.output_item.done" && isRecord(e.item) && typeof e.item.id === "string") {
          sent.set(e.item.id, e.item);
        }
        const output_index = this.#tools.renumber(e.output_index);
        next = Math.max(next, output_index + 1);
        emit({ ...e, output_index }, { raw: h.raw, event: e });
      } else emit(withoutCalls(e), { raw: h.raw, event: e });
    }
    return { next, terminal, sent };
  }

  /**
   * Where the item telling of a call dropped unread goes, ahead of the final snapshot: after the items the
   * client holds, which on a retry's stream are those it held before it (`#base`) and this stream's (counted
   * alone, the item took the place of one the retry sent, and the openai SDK threw on it).
   */
  #toldIndex(): number {
    return (this.#base?.at ?? 0) + this.#itemsBefore;
  }

  /**
   * Emits a whole message item carrying `text` at `index`; returns the item. Its id is `itemId` (the
   * openai SDK throws on two items of one id: a rejection's reason after `tellDropped`'s is at the index
   * that item had before the calls went).
   */
  #message(
    text: string,
    index: number,
    emit: (event: Record<string, unknown>) => void,
    itemId = `msg_toolguard_${index}`,
  ): Record<string, unknown> {
    const part = { type: "output_text", text, annotations: [] as unknown[] };
    const item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [part] };
    const at = { item_id: itemId, output_index: index, content_index: 0 };
    emit({
      type: "response.output_item.added",
      output_index: index,
      item: { ...item, status: "in_progress", content: [] },
    });
    emit({ type: "response.content_part.added", ...at, part: { ...part, text: "" } });
    emit({ type: "response.output_text.delta", ...at, delta: text, logprobs: [] });
    emit({ type: "response.output_text.done", ...at, text, logprobs: [] });
    emit({ type: "response.content_part.done", ...at, part });
    emit({ type: "response.output_item.done", output_index: index, item });
    return item;
  }
}

/**
 * Keeps the final snapshot, or, when the stream ended without one, the output items it finished in order:
 * `reasoning` items with their ids and `encrypted_content`, messages, calls. An item finished at no
 * `output_index` (the openai SDK throws on it; the AI SDK passes it by: its schema wants the index) has no
 * place among the others: it follows them all, in the order such items came, as the gate's reader of calls
 * keeps such a call apart from every index (given the next position, it tied with an item at that index
 * and could go before it).
 */
class ResponsesTurn implements TurnRecorder {
  #final?: Record<string, unknown>;
  readonly #items: [number, Record<string, unknown>][] = [];
  /** The items finished at no `output_index`, in the order they came. */
  readonly #unplaced: Record<string, unknown>[] = [];

  read(event: Record<string, unknown>): void {
    if (TERMINAL.has(event.type as string) && isRecord(event.response)) this.#final = event.response;
    else if (event.type === "response.output_item.done" && isRecord(event.item)) {
      // (the router refused any other `output_index` than a whole number or none)
      if (typeof event.output_index === "number") this.#items.push([event.output_index, event.item]);
      else this.#unplaced.push(event.item);
    }
  }

  body(): Record<string, unknown> {
    if (this.#final && Array.isArray(this.#final.output)) return this.#final;
    const placed = [...this.#items].sort(([a], [b]) => a - b).map(([, item]) => item);
    return { output: [...placed, ...this.#unplaced] };
  }
}

/** OpenAI Responses in its three roles. */
export const openaiResponses: Dialect = {
  body,
  router: () => new ResponsesStream(),
  turn: () => new ResponsesTurn(),
};
