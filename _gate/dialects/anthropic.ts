/**
 * Anthropic Messages: response bodies, stream events (`content_block_start` with `tool_use`,
 * `input_json_delta`), and the gate's routing of those events.
 *
 * @module
 */
import { isRecord } from "../../_common/values.ts";
import { parseJsonSafe } from "../../_common/json.ts";
import { formatSse, reframe } from "../sse.ts";
import { cutCalls } from "../engines.ts";
import {
  type AnswerReason,
  blockEnds,
  callCounter,
  type CompletionBody,
  type Dialect,
  dropEmptyBlocks,
  type FrameRouter,
  hasWords,
  type Held,
  heldText,
  malformedCallsReason,
  mayGoBlank,
  namesKey,
  Openings,
  placeReason,
  reasonBlock,
  type ResumePoint,
  type SplitCalls,
  type StreamFlow,
  type TextFrames,
  type TextPart,
  TextPlaces,
  toldBlockAt,
  ToolPositions,
  type TurnRecorder,
} from "./shared.ts";

/** The built-in tools Anthropic defines but the caller runs (server tools are run by Anthropic). */
const CLIENT_BUILTIN = /^(memory|bash|text_editor|computer)_\d+$/;

/** True for a `tool_use` content block. */
function isToolUse(block: unknown): boolean {
  return isRecord(block) && block.type === "tool_use";
}

/** A `text` content block. */
type TextBlock = Record<string, unknown> & { text: string };

/** True for a `text` content block with its text. */
function isText(block: unknown): block is TextBlock {
  return isRecord(block) && block.type === "text" && typeof block.text === "string";
}

/**
 * Whether a `message_start` already carries `tool_use` blocks. Anthropic starts every message empty, but a
 * client keeps what comes (the SDK's snapshot does), so a call there is held and judged like any other.
 */
function startsWithCalls(event: Record<string, unknown>): boolean {
  const message = event.message;
  return isRecord(message) && Array.isArray(message.content) && message.content.some(isToolUse);
}

const body: CompletionBody = {
  declared(tool) {
    if (tool.input_schema !== undefined || tool.type === undefined || tool.type === "custom") return [tool];
    // Client-run built-ins (`memory_20250818`, `bash_20250124`, ...) are declared by type and name with no
    // schema: the caller runs them, so their calls are judged by name (and scanned).
    if (typeof tool.type === "string" && CLIENT_BUILTIN.test(tool.type) && typeof tool.name === "string") {
      return [{ name: tool.name, input_schema: { type: "object" } }];
    }
    return [];
  },
  calls(body) {
    const out: unknown[] = [];
    for (const block of body.content as unknown[]) {
      if (isRecord(block) && block.type === "tool_use") out.push(block);
    }
    return out;
  },
  texts(body) {
    const out: string[] = [];
    for (const block of body.content as unknown[]) if (isText(block)) out.push(block.text);
    return out;
  },
  rewrite(body, answerReason, { fromText, cut = cutCalls }) {
    const reason = answerReason(0); // (one answer)
    const blocks = (body.content as unknown[]).filter((block) => !isToolUse(block));
    const texts = fromText ? blocks.filter(isText) : [];
    const cutTexts = texts.map((block) => cut(block.text));
    // The reason stands where the written call was, as a stream writes it (see `placeReason`); calls
    // only of the native kind leave no place in the text: it ends the message.
    // (a block left blank goes: the API refuses a text block of white space alone sent back; not one a
    // stream sent before the call began, see `mayGoBlank`)
    const goes = mayGoBlank(blocks, texts, cutTexts);
    const placed = placeReason(texts.map((block) => block.text), cutTexts, reason, {
      goes: (i) => goes(blocks.indexOf(texts[i])),
    });
    const written = placed ?? cutTexts;
    let next = 0;
    const content = blocks.flatMap((block, i) => {
      if (!fromText || !isText(block)) return [block];
      const text = written[next++];
      return hasWords(text) || !goes(i) ? [{ ...block, text }] : [];
    });
    if (!placed) {
      content.push({
        type: "text",
        text: reasonBlock(content.filter(isText).map((b) => b.text), reason),
      });
    }
    const copy: Record<string, unknown> = { ...body, content };
    if (body.stop_reason === "tool_use" || fromText) copy.stop_reason = "end_turn";
    return copy;
  },
  dropCalls(body, drop, answerReason) {
    const reason = answerReason(0); // (one answer)
    const keep = callCounter(drop);
    const content = (body.content as unknown[]).filter((b) =>
      !(isRecord(b) && b.type === "tool_use") || keep()
    );
    content.push({ type: "text", text: reasonBlock(content.filter(isText).map((b) => b.text), reason) });
    return { ...body, content };
  },
};

/** The text of a text block's delta (undefined for any other event): the text a client reads. */
function blockText(event: Record<string, unknown>): unknown {
  return event.type === "content_block_delta" && isRecord(event.delta) && event.delta.type === "text_delta"
    ? event.delta.text
    : undefined;
}

/** The events of a content block. */
const BLOCK_EVENT = /^content_block_(start|delta|stop)$/;

/** The wire text of an event, under its type as the `event:` name (the SDK routes by it). */
const named = (event: Record<string, unknown>): string =>
  formatSse(JSON.stringify(event), event.type as string);

/** The events of a text block at `index` holding `text` (a reason the gate writes). */
function textBlock(index: number, text: string): Record<string, unknown>[] {
  return [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index, delta: { type: "text_delta", text } },
    { type: "content_block_stop", index },
  ];
}

/** True for a `content_block_start` of a text block. */
function startsText(event: Record<string, unknown>): boolean {
  return event.type === "content_block_start" && isRecord(event.content_block) &&
    event.content_block.type === "text";
}

/** A text block that brings text. */
const bringsText = (block: unknown): block is { text: string } =>
  isRecord(block) && block.type === "text" && typeof block.text === "string" && block.text !== "";

/**
 * A `message_start` whose content has text blocks that bring text, as the start with those blocks empty
 * and a `text_delta` for each (the SDK's message is the same); undefined for any other.
 */
function splitStart(event: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const message = event.message;
  if (!isRecord(message) || !Array.isArray(message.content) || !message.content.some(bringsText)) {
    return undefined;
  }
  const content = message.content.map((b) => bringsText(b) ? { ...b, text: "" } : b);
  const deltas = message.content.flatMap((b, index) =>
    bringsText(b) ? [{ type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } }] : []
  );
  return [{ ...event, message: { ...message, content } }, ...deltas];
}

/**
 * Anthropic addresses content by block index, so once a call starts everything after it waits, to be
 * released as is or renumbered around the dropped call. Calls written into the text blocks (a local model
 * behind an Anthropic-compatible endpoint writes them) are watched for, across the blocks of the message.
 */
class AnthropicStream implements FrameRouter {
  readonly framing = "sse";
  readonly #tools = new ToolPositions();
  /** The blocks the client holds: its `message_start`'s content, then one per `content_block_start`. */
  #blocks = 0;
  /** The block of each piece of text read: text the watch writes itself goes where its offset was read. */
  readonly #places = new TextPlaces<number>();
  /** The flow of the stream, once a frame was routed: what is held decides where a retry continues. */
  #flow: StreamFlow | undefined;
  /** On a retry's stream: the blocks the client had before it (see `resume`). */
  #before = 0;
  /** The text blocks dropped for getting no text once a written call was cut (see `#tidy`). */
  readonly #gone = new ToolPositions();
  /** An empty text block's start and the pings after it, held until the next frame routed (see `route`). */
  readonly #openings = new Openings(blockText);
  /** How many `tool_use` blocks `refuse` dropped: calls no client holds (see `#stopOfDropped`). */
  #refusedCalls = 0;
  /** Whether a frame was dropped unread: it may have been a call's (see `#stopOfDropped`). */
  #unread = false;
  /** Whether a frame dropped unread named a `tool_use` block: a call's beside the calls kept (see `unread`). */
  #unreadCall = false;
  /** The reason `#stopOfDropped` wrote, once it did (see `FrameRouter.ownReason`). */
  #ownReason: string | undefined;
  /** A stop for tool use that went out with no call and nothing dropped yet (see `tellLate`). */
  #toolStop: Record<string, unknown> | undefined;
  /** The frames of the text block `tellDropped` put among the held ones: no block the client had. */
  readonly #told = new Set<Record<string, unknown>>();
  /** Where a retry puts that block, ahead of its own (see `resumePoint`). */
  #toldAt: number | undefined;

  /**
   * The SDK appends each `text_delta` to the text of its block and keeps the text a `content_block_start`
   * brings, and the blocks a `message_start` brings: the text the watch reads. A start that brings text
   * (Anthropic's never do) is split into an empty start and a delta (a `message_start`: a delta per text
   * block), so text the watch writes before its call lands in a block the client has.
   */
  readonly text: TextFrames = {
    placed: true,
    opens: (at) => this.#places.opens(at),
    read: (event) => this.#readText(event),
    textFrame: (text, _answer, at) => {
      const index = this.#places.at(at) ?? 0;
      // (a dropped block gets none: white space alone, as a body cuts it; renumbered, it went to the next)
      if (this.#gone.has(index)) return "";
      return named({
        type: "content_block_delta",
        index: this.#gone.renumber(index),
        delta: { type: "text_delta", text },
      });
    },
    said: (flow) => this.sendOpenings(flow),
    tidy: (flow, written) => this.#tidy(flow, written),
    frame: (event, from) => reframe(event, from, event.type as string),
    // (no offsets into the block's text: a citation names the document's characters)
    lead: {
      text: (event) => {
        const text = blockText(event);
        return typeof text === "string" ? text : undefined;
      },
      frames: (event, text) => [
        { type: "content_block_delta", index: event.index, delta: { type: "text_delta", text } },
        event,
      ],
    },
    split(event) {
      if (event.type === "message_start") return splitStart(event);
      if (!startsText(event)) return undefined;
      const block = event.content_block as Record<string, unknown>;
      if (typeof block.text !== "string" || block.text === "") return undefined;
      return [
        { ...event, content_block: { ...block, text: "" } },
        { type: "content_block_delta", index: event.index, delta: { type: "text_delta", text: block.text } },
      ];
    },
    size: () => this.#places.size,
  };

  /**
   * Drops the text blocks whose start is held that get no text once the written calls are cut (none of the
   * `written` offsets is in them: a block of only a call), and renumbers the held frames after them, as a
   * body drops a block left empty: the API refuses an empty text block in a message sent back.
   */
  #tidy(flow: StreamFlow, written: readonly number[]): void {
    dropEmptyBlocks(flow, new Set(written.map((at) => this.#places.at(at))), {
      opens: startsText,
      addressed: (event) => BLOCK_EVENT.test(String(event.type)),
      gone: this.#gone,
      wire: named,
    });
  }

  /** Notes the blocks of calls before the text watch sees their frames (it may hold them). */
  note(event: Record<string, unknown>): void {
    const start = event.type === "content_block_start" && isToolUse(event.content_block);
    if (start && typeof event.index === "number") this.#tools.add(event.index);
    if (event.type === "message_start" && startsWithCalls(event)) {
      const content = (event.message as Record<string, unknown>).content as unknown[];
      content.forEach((block, i) => isToolUse(block) && this.#tools.add(i));
    }
  }

  /** The text of a `text_delta` (every other frame carries none the watch reads). */
  #readText(event: Record<string, unknown>): TextPart {
    const delta = isRecord(event.delta) ? event.delta : undefined;
    const isText = event.type === "content_block_delta" && delta?.type === "text_delta" &&
      typeof delta.text === "string";
    if (isText && typeof event.index === "number") {
      this.#places.read(delta!.text as string, String(event.index), event.index);
    }
    const index = typeof event.index === "number" ? event.index : -1;
    const toolish = this.#tools.has(index) || (event.type === "message_start" && startsWithCalls(event)) ||
      (index === -1 && (isToolUse(event.content_block) || delta?.type === "input_json_delta"));
    const text = isText ? delta!.text as string : "";
    // (a ping, a delta of no text inside a block, a citation: the text goes on after it; so it does after
    // the end or start of a block other than a call's, as a body's text blocks are read joined: a tail that
    // may begin a marker, let out at its block's end, reached the client where a body cuts it with the call)
    const goesOn = event.type === "ping" || (BLOCK_EVENT.test(String(event.type)) && !toolish);
    return { text, toolish, rest: () => undefined, goesOn, delta: isText };
  }

  /**
   * The SDK routes a frame by its `event:` name (none or `ping`: skipped; `error`: thrown) and reads it by
   * its `type`; it puts each `content_block_start` after the blocks it has, whatever its `index`, and
   * applies a delta to the block at `content.at(index)` (a string `"0"` is block 0 to it). A frame read
   * one way by the gate and another by a client is refused.
   */
  refuse(event: Record<string, unknown>, name: string | undefined): string | undefined {
    const refused = this.#refusal(event, name);
    // (a call no client holds: see `#stopOfDropped`)
    if (refused !== undefined && event.type === "content_block_start" && isToolUse(event.content_block)) {
      this.#refusedCalls++;
    }
    return refused;
  }

  /** Why `refuse` drops `event`, or undefined. */
  #refusal(event: Record<string, unknown>, name: string | undefined): string | undefined {
    const type = event.type;
    if (name === undefined || name !== type) {
      return `an Anthropic stream event of type ${JSON.stringify(type ?? null)} came under the event name ${
        JSON.stringify(name ?? null)
      } (the SDK routes by the name); it was dropped`;
    }
    if (type === "message_start") {
      const message = isRecord(event.message) ? event.message : {};
      this.#blocks = Array.isArray(message.content) ? message.content.length : 0;
    } else if (type === "content_block_start") {
      if (event.index !== this.#blocks) {
        return `content_block_start at index ${
          JSON.stringify(event.index ?? null)
        }, where a client puts block ${this.#blocks}; it was dropped`;
      }
      this.#blocks++;
    } else if (type === "content_block_delta" || type === "content_block_stop") {
      const index = event.index;
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= this.#blocks) {
        return `${type} at index ${
          JSON.stringify(index ?? null)
        }, where a client holds no block; it was dropped`;
      }
    }
    return undefined;
  }

  /**
   * The blocks the client has when the calls are rejected: those before the first call; for calls written
   * into the text, those whose start was not held, after the blocks it had before this answer (a retry's:
   * `#blocks` counts this answer's own, and the next retry's blocks went where this one's first were).
   */
  resumePoint(): ResumePoint {
    // (the block `tellDropped` held is none of the blocks counted: counted, a message whose first block was
    // a call numbered the retry's blocks from -1, and the SDK put the retry's call input into its text)
    const held =
      this.#flow?.held.filter((h) => h.event?.type === "content_block_start" && !this.#told.has(h.event))
        .length ?? 0;
    const at = this.#tools.replacementAt(0) || this.#before + this.#blocks - held;
    // (that block goes ahead of the retry's, at `at`: see `endsDropped`)
    const telling = this.#flow?.held.some((h) => h.event !== undefined && this.#told.has(h.event)) ?? false;
    this.#toldAt = telling ? at : undefined;
    return { at: telling ? at + 1 : at };
  }

  /**
   * The ends of the blocks a client holds open that a retry drops (see `FrameRouter.endsDropped`), then the
   * text block `tellDropped` held, numbered where `resumePoint` put it: dropped with the calls, the model
   * never knew that a call of its turn was dropped as malformed, its retry continuing as if none had been.
   */
  endsDropped(dropped: readonly Held[], flow: StreamFlow): string {
    const ends = blockEnds(dropped, "content_block_start", "content_block_stop");
    const at = this.#toldAt;
    if (at === undefined) return ends;
    return ends + toldBlockAt(dropped, this.#told, at, { flow, text: blockText, wire: named });
  }

  /**
   * A retry's events continue the message the client is assembling: its `message_start` is dropped and
   * its block indices follow the blocks already forwarded.
   */
  resume(
    raw: string,
    event: Record<string, unknown>,
    { at }: ResumePoint,
  ): { raw: string; event: Record<string, unknown> } | undefined {
    this.#before = at;
    if (event.type === "message_start") return undefined;
    if (typeof event.index !== "number" || at === 0) return { raw, event };
    const shifted: Record<string, unknown> = { ...event, index: event.index + at };
    return { raw: formatSse(JSON.stringify(shifted), shifted.type as string), event: shifted };
  }

  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void {
    this.#flow = flow;
    const type = event.type;
    const toolStart = type === "content_block_start" && isToolUse(event.content_block);
    if (toolStart) flow.pending = true;
    if (type === "message_start" && startsWithCalls(event)) flow.pending = true; // (see startsWithCalls)
    if (type === "error") return flow.send(raw); // errors reach the client at once; they carry no call
    if (!flow.pending) {
      // An empty text block's start (and the pings, white space alone and end after it) waits for what
      // comes next, held for the watch's answer, so that its releases keep it first: a call written at the
      // block's start (or in a block after it), cut with a retry or a rejection, takes the block with it,
      // where the client kept an empty (or blank) text block (which the API refuses in a message sent back).
      const delta = isRecord(event.delta) ? event.delta : undefined;
      const opening = startsText(event) && !bringsText(event.content_block);
      const waits = (type === "ping" && this.#openings.waiting) ||
        (type === "content_block_delta" && delta?.type === "text_delta" &&
          this.#openings.blank(event.index, delta.text)) ||
        (type === "content_block_stop" && this.#openings.ends(event.index));
      if (opening || waits) return this.#openings.hold({ raw, event }, flow);
      this.sendOpenings(flow);
      if (type === "message_delta" && this.#stopOfDropped(event, flow)) return;
      // (white space alone says nothing, nor does thinking: the reason then needs no blank line before it)
      const text = blockText(event);
      if (typeof text === "string") flow.sawText(text);
      return flow.send(raw);
    }
    const index = typeof event.index === "number" ? event.index : -1;
    // A call's block without an index is a call's all the same: it goes with the call if that is refused.
    const unplaced = index === -1 &&
      (toolStart ||
        (type === "content_block_delta" && isRecord(event.delta) && event.delta.type === "input_json_delta"));
    flow.hold({ raw, event, tool: this.#tools.has(index) || unplaced });
  }

  /**
   * Ends a message whose only calls `refuse` dropped, whose stop says `tool_use`, as a rejected turn ends:
   * a text block saying so, then the stop made `end_turn`. True when it did. Left as it came, the client
   * read a stop for tool use with no call to run and nothing said, and the model was never told.
   */
  #stopOfDropped(event: Record<string, unknown>, flow: StreamFlow): boolean {
    const delta = isRecord(event.delta) ? event.delta : undefined;
    const lost = this.#refusedCalls > 0 || this.#unread;
    if (delta?.stop_reason !== "tool_use" || this.#tools.size > 0) return false;
    if (!lost) {
      this.#toolStop = event;
      return false;
    }
    // (an unread frame's calls are not known: at least one)
    const reason = malformedCallsReason(Math.max(this.#refusedCalls, 1));
    this.#ownReason = reason;
    const ending = { ...event, delta: { ...delta, stop_reason: "end_turn", stop_sequence: null } };
    for (const e of [...textBlock(this.#before + this.#blocks, flow.lead(0) + reason), ending]) {
      flow.send(named(e));
    }
    return true;
  }

  /**
   * See `FrameRouter.tellLate`: where a stop for tool use went out with no call, and a frame after it was
   * dropped unread or a `tool_use` block refused, ends the message again as `#stopOfDropped` ends one whose
   * frame came before the stop: a text block saying so, the stop made `end_turn`, and `message_stop` (the
   * SDK appends the block and keeps the last stop).
   */
  tellLate(flow: StreamFlow): void {
    const stop = this.#toolStop;
    if (!stop || this.#ownReason !== undefined || !(this.#refusedCalls > 0 || this.#unread)) return;
    if (this.#stopOfDropped(stop, flow)) flow.send(named({ type: "message_stop" }));
  }

  /**
   * See `FrameRouter.tellDropped`: a text block saying how many `tool_use` blocks `refuse` dropped (at least
   * one where a frame dropped unread named a `tool_use` block), held
   * ahead of the held end (the stop stays `tool_use`, for the calls kept), so it goes with the calls that
   * pass and a rejection or drop-call replays it before its own reason. Left out, the message went out with
   * the dropped calls unsaid, and the model never knew that only some of its calls ran.
   */
  tellDropped(flow: StreamFlow, _answers?: ReadonlySet<number>, { written = false } = {}): void {
    const lost = this.#refusedCalls > 0 || this.#unreadCall;
    if (!lost || (this.#tools.size === 0 && !written) || this.#ownReason !== undefined) return;
    // (an unread frame's calls are not known: at least one)
    const reason = malformedCallsReason(Math.max(this.#refusedCalls, 1));
    this.#ownReason = reason;
    const text = flow.lead(0, heldText(flow, blockText)) + reason;
    const block = textBlock(this.#before + this.#blocks, text);
    // (beside a written call, the block is one frame marked told: the watch's ending leads a rejection's
    // reason with its words, and a retry sends them after the text it sends ahead, see `Held.told`)
    const told = written
      ? [{ raw: block.map(named).join(""), event: block[1], tool: false, told: { reason, answer: 0 } }]
      : block.map((e) => {
        this.#told.add(e);
        return { raw: named(e), event: e, tool: false };
      });
    const held = flow.held;
    const end = held.findIndex((h) => h.event?.type === "message_delta" || h.event?.type === "message_stop");
    // (beside a written call alone, no `tool_use` block is left: the stop says so, as `#stopOfDropped`'s)
    if (written) this.endsWritten(flow);
    flow.holdAt(end < 0 ? held.length : end, told);
  }

  /** See `FrameRouter.endsWritten`: the held `message_delta`'s `tool_use` stop made `end_turn`. */
  endsWritten(flow: StreamFlow): void {
    if (this.#tools.size === 0) flow.setHeld(flow.held.map(endsTurn));
  }

  /** See `FrameRouter.final`: `message_stop`. */
  final(event: Record<string, unknown>): boolean {
    return event.type === "message_stop";
  }

  /**
   * See `FrameRouter.unread`. A message that stops for tool use with no call left was told of any frame
   * dropped unread (`#stopOfDropped`: it stopped for a call). Beside calls kept, which stop it so anyway,
   * only one that names a `tool_use` block (`"type":"tool_use"`, see `namesKey`) is taken for a call's, as
   * Ollama reads its lines: any other may be text, or a stop (`"stop_reason":"tool_use"`).
   */
  unread(data: string): void {
    this.#unread = true;
    if (namesKey(data, "type", "tool_use")) this.#unreadCall = true;
  }

  /** See `FrameRouter.ownReason`. */
  ownReason(): string | undefined {
    return this.#ownReason;
  }

  /** Sends the held openings the watch has not let out or dropped since (see `FrameRouter.sendOpenings`). */
  /** See `FrameRouter.textOf`. */
  textOf(event: Record<string, unknown>): unknown {
    return blockText(event);
  }

  sendOpenings(flow: StreamFlow): void {
    this.#openings.send(flow);
  }

  replace(answerReason: AnswerReason, _calls: unknown, flow: StreamFlow, told?: ReadonlySet<number>): void {
    const emit = (event: Record<string, unknown>) =>
      flow.send(formatSse(JSON.stringify(event), event.type as string));
    let next = 0;
    let messageDelta: Record<string, unknown> | undefined;
    for (const h of flow.held) {
      const e = h.event;
      if (!e || h.tool || e.type === "ping" || e.type === "message_stop") continue;
      if (e.type === "message_delta") messageDelta = e;
      else if (typeof e.index === "number") {
        const index = this.#tools.renumber(e.index);
        next = Math.max(next, index + 1);
        emit({ ...e, index });
      } else if (e.type === "message_start" && startsWithCalls(e)) {
        const message = e.message as Record<string, unknown>;
        const content = (message.content as unknown[]).filter((b) => !isToolUse(b));
        next = Math.max(next, content.length);
        emit({ ...e, message: { ...message, content } });
      } else flow.send(h.raw);
    }
    if (!told?.has(0)) {
      const text = flow.lead(0, heldText(flow, blockText)) + answerReason(0); // (one answer)
      for (const e of textBlock(this.#tools.replacementAt(next), text)) emit(e);
    }
    const delta = isRecord(messageDelta?.delta) ? messageDelta.delta : {};
    emit({
      ...(messageDelta ?? { usage: { output_tokens: 0 } }),
      type: "message_delta",
      delta: { ...delta, stop_reason: "end_turn", stop_sequence: null },
    });
    emit({ type: "message_stop" });
  }

  /**
   * The held blocks without the dropped calls' (the rest renumbered to close the gaps), then a text block
   * with the reason; the stop stays `tool_use`, since calls remain.
   */
  dropCalls(answerReason: AnswerReason, split: SplitCalls, flow: StreamFlow): void {
    const reason = answerReason(0); // (one answer)
    const text = flow.lead(0, heldText(flow, blockText)) + reason;
    const emit = (event: Record<string, unknown>) =>
      flow.send(formatSse(JSON.stringify(event), event.type as string));
    const gone = new ToolPositions();
    for (const c of split.dropped) gone.add(c.slot);
    let next = 0;
    const tail: Held[] = [];
    for (const h of flow.held) {
      const e = h.event;
      if (!e) continue;
      if (e.type === "message_delta" || e.type === "message_stop") {
        tail.push(h);
        continue;
      }
      if (typeof e.index !== "number") {
        flow.send(h.raw);
        continue;
      }
      if (gone.has(e.index)) continue;
      const index = gone.renumber(e.index);
      next = Math.max(next, index + 1);
      if (index === e.index) flow.send(h.raw);
      else emit({ ...e, index });
    }
    for (const e of textBlock(next, text)) emit(e);
    for (const h of tail) flow.send(h.raw);
  }
}

/**
 * A held `message_delta` whose stop says `tool_use`, made `end_turn`; any other frame as it is. A message
 * left with no `tool_use` block that stops for tool use sends the SDK user's loop looking for a call.
 */
function endsTurn(held: Held): Held {
  const e = held.event;
  if (e?.type !== "message_delta" || !isRecord(e.delta) || e.delta.stop_reason !== "tool_use") return held;
  const event = { ...e, delta: { ...e.delta, stop_reason: "end_turn", stop_sequence: null } };
  return { ...held, raw: named(event), event };
}

/**
 * Keeps every content block as the stream built it, by index: `thinking` with its `signature`,
 * `redacted_thinking`, `text` (with citations), `tool_use` with its input. A follow-up to a turn that
 * thought must start with those thinking blocks, unchanged, or the API refuses it.
 */
class AnthropicTurn implements TurnRecorder {
  readonly #blocks = new Map<number, Record<string, unknown>>();
  /** The input JSON of each `tool_use` block, as its deltas arrive. */
  readonly #json = new Map<number, string>();

  read(event: Record<string, unknown>): void {
    const index = typeof event.index === "number" ? event.index : undefined;
    if (index === undefined) return;
    if (event.type === "content_block_start" && isRecord(event.content_block)) {
      this.#blocks.set(index, { ...event.content_block });
    } else if (event.type === "content_block_delta" && isRecord(event.delta)) {
      const block = this.#blocks.get(index);
      if (block) this.#apply(index, block, event.delta);
    }
  }

  /** Applies one delta to its block. */
  #apply(index: number, block: Record<string, unknown>, delta: Record<string, unknown>): void {
    const append = (key: string, piece: unknown) => {
      if (typeof piece === "string") block[key] = (typeof block[key] === "string" ? block[key] : "") + piece;
    };
    if (delta.type === "text_delta") append("text", delta.text);
    else if (delta.type === "thinking_delta") append("thinking", delta.thinking);
    else if (delta.type === "signature_delta") block.signature = delta.signature;
    else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
      this.#json.set(index, (this.#json.get(index) ?? "") + delta.partial_json);
    } else if (delta.type === "citations_delta" && delta.citation !== undefined) {
      block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
    }
  }

  body(): Record<string, unknown> {
    const content = [...this.#blocks.entries()].sort(([a], [b]) => a - b).map(([index, block]) => {
      const json = this.#json.get(index);
      if (json === undefined) return block;
      const input = parseJsonSafe(json);
      return { ...block, input: input.ok && isRecord(input.value) ? input.value : {} };
    });
    return { type: "message", role: "assistant", content };
  }
}

/** Anthropic Messages in its three roles. */
export const anthropic: Dialect = {
  body,
  router: () => new AnthropicStream(),
  turn: () => new AnthropicTurn(),
};
