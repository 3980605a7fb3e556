/**
 * Cohere v2 chat (`/v2/chat`): response bodies (`message.tool_calls`), stream events (`tool-call-start`,
 * `tool-call-delta`, `tool-call-end`, addressed by call `index`), and the gate's routing of those events.
 *
 * @module
 */
import { isRecord } from "../../_common/values.ts";
import { arrayIndex, deltaMessage } from "./readers.ts";
import { reframe } from "../sse.ts";
import { cutCalls } from "../engines.ts";
import {
  type AnswerReason,
  blockEnds,
  callCounter,
  citedOn,
  citingKept,
  type CompletionBody,
  type Dialect,
  dropEmptyBlocks,
  type FrameRouter,
  hasWords,
  type Held,
  heldText,
  joinsEarlierWords,
  malformedCallsReason,
  mayGoBlank,
  namesKey,
  Openings,
  PARAGRAPH,
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
  toldBlockAt,
  ToolPositions,
  type TurnRecorder,
} from "./shared.ts";

/** True for a text part of a message's `content` with its text. */
function isText(part: unknown): part is Record<string, unknown> & { text: string } {
  return isRecord(part) && part.type === "text" && typeof part.text === "string";
}

/**
 * A citation once the content blocks `gone` are dropped: its `content_index` (the block it is in) moved up
 * past them, as the blocks after them are.
 */
function movedCitation(citation: unknown, gone: ToolPositions): unknown {
  if (gone.size === 0) return citation;
  return citationIn(citation, (index) => gone.renumber(index));
}

/**
 * A citation whose `content_index` (the block it is in) is `to` of it; the citation itself when unchanged,
 * or when it cites the tool plan (`type: "PLAN"`), which is no content block.
 */
function citationIn(citation: unknown, to: (index: number) => number): unknown {
  if (!isRecord(citation) || typeof citation.content_index !== "number" || isPlanCitation(citation)) {
    return citation;
  }
  const at = to(citation.content_index);
  return at === citation.content_index ? citation : { ...citation, content_index: at };
}

/** True for a citation of the tool plan: its `start` and `end` are offsets in the message's `tool_plan`. */
function isPlanCitation(citation: unknown): boolean {
  return isRecord(citation) && citation.type === "PLAN";
}

/**
 * A citation of a retry's tool plan once the client's plan has `before` characters ahead of it (the
 * earlier attempts' plans: the plan flows as it comes): its offsets moved past them. Any other citation,
 * or none to move past, as it came.
 */
function planCited(citation: unknown, before = 0): unknown {
  if (before === 0 || !isRecord(citation) || !isPlanCitation(citation)) return citation;
  return citedOn(citation, before);
}

/**
 * A citation of text in the block `led.index` once `led.by` characters the gate wrote stand ahead of that
 * block's text (a retry's blank line, see `text.lead`): its offsets moved past them. Any other, as it came.
 * A citation that names no block (no `content_index`) is in the block `open`, the last one started before
 * it: Cohere streams a block's citations between its start and its end, and its docs show citations
 * without an index in a message of one text block, their offsets into that block's text.
 */
function ledCited(
  citation: unknown,
  led: { index: number; by: number } | undefined,
  open: number | undefined,
): unknown {
  if (!led || !isRecord(citation) || isPlanCitation(citation)) return citation;
  const block = citation.content_index ?? open;
  return block === led.index ? citedOn(citation, led.by) : citation;
}

/** The length of the tool plan a `tool-plan-delta` adds (0 for any other event). */
function planLength(event: Record<string, unknown>): number {
  if (event.type !== "tool-plan-delta") return 0;
  const plan = deltaMessage(event).tool_plan;
  return typeof plan === "string" ? plan.length : 0;
}

const body: CompletionBody = {
  declared: (tool) => (isRecord(tool.function) ? [tool] : []),
  calls(body) {
    const m = isRecord(body.message) ? body.message : {};
    return Array.isArray(m.tool_calls) ? [...m.tool_calls] : [];
  },
  texts(body) {
    const m = isRecord(body.message) ? body.message : {};
    return Array.isArray(m.content) ? m.content.filter(isText).map((p) => p.text) : [];
  },
  rewrite(body, answerReason, { fromText, cut = cutCalls }) {
    const reason = answerReason(0); // (one answer)
    const m = isRecord(body.message) ? body.message : {};
    const message: Record<string, unknown> = { ...m };
    delete message.tool_calls;
    const content: unknown[] = Array.isArray(m.content) ? m.content : [];
    const texts = fromText ? content.filter(isText) : [];
    const cutTexts = texts.map((p) => cut(p.text));
    // The reason stands where the written call was, as a stream writes it (see `placeReason`): at the
    // end of its block, its citations keep their offsets. Native calls leave no place: it ends the message.
    const goes = mayGoBlank(content, texts, cutTexts);
    const placed = placeReason(texts.map((p) => p.text), cutTexts, reason, {
      goes: (i) => goes(content.indexOf(texts[i])),
    });
    const written = placed ?? cutTexts;
    let next = 0;
    const gone = new ToolPositions();
    /** Each text block's text as it came and as written, by its index. */
    const told = new Map<number, [string, string]>();
    message.content = content.flatMap((p, i) => {
      if (!fromText || !isText(p)) return [p];
      const text = written[next++];
      told.set(i, [p.text, text]);
      if (hasWords(text) || !goes(i)) return [{ ...p, text }];
      // A text part the cut left blank goes, as in a stream (and as Anthropic's body drops such a block).
      gone.add(i);
      return [];
    });
    if (!placed) {
      const said = [m.tool_plan, ...(message.content as unknown[]).filter(isText).map((p) => p.text)];
      (message.content as unknown[]).push({ type: "text", text: reasonBlock(said, reason) });
    }
    if (Array.isArray(m.citations)) {
      // (one of text the cut took goes, see `citingKept`; one that names no block is in the first)
      const first = content.findIndex(isText);
      const kept = (c: unknown) => {
        if (!isRecord(c) || isPlanCitation(c)) return true;
        const block = told.get(typeof c.content_index === "number" ? c.content_index : first);
        return !block || (citingKept([c], ...block) as unknown[]).length > 0;
      };
      message.citations = m.citations.filter(kept).map((c) => movedCitation(c, gone));
    }
    const copy: Record<string, unknown> = { ...body, message };
    if (body.finish_reason === "TOOL_CALL") copy.finish_reason = "COMPLETE";
    return copy;
  },
  dropCalls(body, drop, answerReason) {
    const reason = answerReason(0); // (one answer)
    const m = isRecord(body.message) ? body.message : {};
    const keep = callCounter(drop);
    const tool_calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(() => keep()) : [];
    const kept: unknown[] = Array.isArray(m.content) ? m.content : [];
    const said = [m.tool_plan, ...kept.filter(isText).map((p) => p.text)];
    const content = [...kept, { type: "text", text: reasonBlock(said, reason) }];
    return { ...body, message: { ...m, tool_calls, content } };
  },
};

const CALL_EVENT = /^tool-call-(start|delta|end)$/;

/** The text of a content or plan delta (undefined for any other event): what the client's text goes on with. */
function saidText(event: Record<string, unknown>): unknown {
  if (event.type === "tool-plan-delta") return deltaMessage(event).tool_plan;
  const content = event.type === "content-delta" ? deltaMessage(event).content : undefined;
  return isRecord(content) ? content.text : undefined;
}
/**
 * What goes before the reason once the held frames are sent ahead of it (see `StreamFlow.lead`): the text
 * of their content deltas, which the client's text then ends in, and their tool plan standing ahead of the
 * answer's text, as a body reads it (counted as the held text's end, the plan queued behind a possible
 * written call gave "<tool_call>\n" a blank line too many before the reason, or a plan of a line break
 * one too few).
 */
function reasonLead(flow: StreamFlow): string {
  for (const h of flow.held) {
    const plan = h.event?.type === "tool-plan-delta" ? saidText(h.event) : undefined;
    if (typeof plan === "string") flow.sawAhead(plan);
  }
  return flow.lead(
    0,
    heldText(flow, (event) => event.type === "tool-plan-delta" ? undefined : saidText(event)),
  );
}

/** A `message-end` whose finish says `TOOL_CALL`, made `COMPLETE`; any other event as it is. */
function completed(e: Record<string, unknown>): Record<string, unknown> {
  if (e.type !== "message-end" || !isRecord(e.delta) || e.delta.finish_reason !== "TOOL_CALL") return e;
  return { ...e, delta: { ...e.delta, finish_reason: "COMPLETE" } };
}

/** A held frame whose event `completed` changes, so changed; any other frame as it is. */
function completes(held: Held): Held {
  const e = held.event;
  const event = e && completed(e);
  if (!event || event === e) return held;
  return { ...held, raw: reframe(event, { raw: held.raw, event: e }), event };
}

/** A text content block at `index` holding `text`: its start, one delta and its end. */
function textBlock(index: number, text: string): Record<string, unknown>[] {
  return [
    { type: "content-start", index, delta: { message: { content: { type: "text", text: "" } } } },
    { type: "content-delta", index, delta: { message: { content: { text } } } },
    { type: "content-end", index },
  ];
}

/**
 * Events of no text after which the text goes on (see `TextPart.goesOn`): a block's end and the next one's
 * start too, as a body's text blocks are read joined (a tail that may begin a marker, let out at its block's
 * end, reached the client where a body cuts it with the call).
 */
const GOES_ON = /^(citation-(start|end)|content-(start|delta|end))$/;
/**
 * The events of a text (or thinking) block, its citations, and the tool plan: they flow while calls are held
 * (a citation held behind a call reached the client after the text that followed it).
 */
const TEXT_EVENT = /^(content-(start|delta|end)|citation-(start|end)|tool-plan-delta)$/;
/** The events of a content block, addressed by its `index`. */
const CONTENT_EVENT = /^content-(start|delta|end)$/;

/** True for a `content-start` of a text block (not a `thinking` one). */
function isTextStart(event: Record<string, unknown>): boolean {
  const content = deltaMessage(event).content;
  return isRecord(content) && content.type === "text";
}

/** The text a `content-start` brings for its block (`""` when none; a `thinking` block's is not text). */
function startText(event: Record<string, unknown>): string {
  const content = event.type === "content-start" ? deltaMessage(event).content : undefined;
  if (!isRecord(content) || content.type === "thinking") return "";
  return typeof content.text === "string" ? content.text : "";
}

/**
 * A `content-start` that brings text as an empty start and a `content-delta` of that text (see
 * `CohereStream.text`); undefined for any other event.
 */
function splitStart(event: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const text = startText(event);
  if (text === "") return undefined;
  const delta = event.delta as Record<string, unknown>;
  const message = deltaMessage(event);
  const content = message.content as Record<string, unknown>;
  return [
    { ...event, delta: { ...delta, message: { ...message, content: { ...content, text: "" } } } },
    { type: "content-delta", index: event.index, delta: { message: { content: { text } } } },
  ];
}

/**
 * Cohere numbers calls apart from content, so text events keep flowing while calls are held. A rejected
 * call gives way to a text content block carrying the reason, and `message-end` says `COMPLETE`. Calls
 * written into the text (a local model behind a Cohere-compatible endpoint writes them) are watched for,
 * across the content blocks of the message.
 */
class CohereStream implements FrameRouter {
  readonly framing = "sse";
  /** The next free content index (text blocks are numbered on their own). */
  #nextContent = 0;
  /** Whether the stream names its events (`event: content-delta`). */
  #named = false;
  /** The flow of the stream, once a frame was routed: what is held decides where a retry continues. */
  #flow: StreamFlow | undefined;
  /** The content block of each piece of text read: text the watch writes goes where its offset was read. */
  readonly #places = new TextPlaces<number>();
  /** The text blocks dropped for getting no text once a written call was cut (see `text.tidy`). */
  readonly #gone = new ToolPositions();
  /** An empty text block's start, held until the next frame routed (see `route`). */
  readonly #openings = new Openings(saidText);
  /**
   * The citations the stream brought (`citation-start` events, after those of the attempts before on a
   * retry's stream), which a client numbers by their `index`: those held are not yet the client's (see
   * `#clientCited`).
   */
  #cited = 0;
  /**
   * The length of the tool plan the stream brought (after the attempts' before on a retry's stream): a
   * retry's plan goes on after it, and its plan citations' offsets with it.
   */
  #planned = 0;
  /** On a retry's stream, once its first frame came: its citations are numbered after those before. */
  #resumed = false;
  /** The block whose text the gate led with a blank line (see `text.lead`), and that line's length. */
  #led: { index: number; by: number } | undefined;
  /**
   * The block (as the client numbers it) the last `content-start` opened: a citation that names none is in
   * it (see `ledCited`).
   */
  #open: number | undefined;
  /** The block each citation that names none is in (see `#open`), by its `citation-start` event. */
  readonly #citedIn = new WeakMap<object, number>();
  /** The text of each block as read, by its index as the stream numbers it (see `#retell`). */
  readonly #blockText = new Map<string, string>();
  /** The block each `citation-start` that `text.tidy` moved up with its block was in as it came. */
  readonly #blockOf = new WeakMap<object, number>();
  /**
   * The `index` each citation `#retell` read is told at (undefined: dropped), and how many it dropped:
   * those after one dropped are numbered down (the citations come in the order of their index).
   */
  readonly #citedAt = new Map<number, number | undefined>();
  #cutCited = 0;
  /** For each tool plan delta that brought text, in order: "m" where it ends mid-line, else "s". */
  #planEnds = "";
  /**
   * On a retry's stream, once its plan brought text: what the gate wrote ahead of it ("" for nothing; see
   * `resume`).
   */
  #planLead: string | undefined;
  /** On a retry's stream: whether the plan the client had before it ends mid-line. */
  #planRunsOn = false;
  /** Whether a frame was dropped unread: it may have been a call's (see `#stopOfDropped`). */
  #unread = false;
  /** Whether a frame dropped unread named a call: a call's beside the calls held (see `unread`). */
  #unreadCall = false;
  /** The reason `#stopOfDropped` or `tellDropped` wrote, once one did (see `FrameRouter.ownReason`). */
  #ownReason: string | undefined;
  /** A `message-end` for tool calls that went out with no call and nothing dropped yet (see `tellLate`). */
  #toolEnd: Record<string, unknown> | undefined;
  /** The frames of the text block `tellDropped` put among the held ones: no block the client had. */
  readonly #told = new Set<Record<string, unknown>>();
  /** Where a retry puts that block, ahead of its own (see `resumePoint`). */
  #toldAt: number | undefined;
  /** The one frame of that block beside a written call (or a failed watch), and its index (see `endsWritten`). */
  #toldWritten: { frame: Held; index: number } | undefined;

  /**
   * The clients (the AI SDK, Cohere's examples) take the text of each `content-delta`: the text the watch
   * reads. A `content-start` that brings text (Cohere's never do) is split into an empty start and a delta
   * of that text: the Cohere SDK hands an app that text as the block's, so it is judged, and text the watch
   * writes before its call lands in a block the client has.
   */
  readonly text: TextFrames = {
    placed: true,
    opens: (at) => this.#places.opens(at),
    read: (event) => this.#readText(event),
    textFrame: (text, _answer, at) => {
      const index = this.#places.at(at) ?? 0;
      // (a dropped block gets none: white space alone, as a body cuts it; renumbered, it went to the next)
      if (this.#gone.has(index)) return "";
      return this.#wire({
        type: "content-delta",
        index: this.#gone.renumber(index),
        delta: { message: { content: { text } } },
      });
    },
    said: (flow) => this.sendOpenings(flow),
    retell: (event, changes) => this.#retell(event, changes),
    // A block of only a cut call goes, as a body drops it (see `TextFrames.tidy`).
    tidy: (flow, written) => {
      dropEmptyBlocks(flow, new Set(written.map((at) => this.#places.at(at))), {
        opens: (event) => event.type === "content-start" && isTextStart(event),
        addressed: (event) => CONTENT_EVENT.test(String(event.type)),
        gone: this.#gone,
        wire: (event, from) => this.#wire(event, from.event && { raw: from.raw, event: from.event }),
      });
      // (a citation names the block it is in: moved up with it, as a body's citations are)
      if (this.#gone.size === 0) return;
      flow.setHeld(flow.held.map((h) => {
        const message = h.event?.type === "citation-start" ? deltaMessage(h.event) : undefined;
        const citations = message && movedCitation(message.citations, this.#gone);
        if (!h.event || !message || citations === message.citations) return h;
        const event = {
          ...h.event,
          delta: { ...h.event.delta as object, message: { ...message, citations } },
        };
        const block = (message.citations as Record<string, unknown>).content_index;
        if (typeof block === "number") this.#blockOf.set(event, block);
        return { ...h, raw: this.#wire(event, { raw: h.raw, event: h.event }), event };
      }));
    },
    frame: (event, from) => this.#wire(event, from),
    resume: (change) => this.#resumeAfter(change),
    split: splitStart,
    scored: (event) => event.logprobs != null,
    lead: {
      text: (event) => {
        const content = event.type === "content-delta" ? deltaMessage(event).content : undefined;
        return isRecord(content) && typeof content.text === "string" ? content.text : undefined;
      },
      frames: (event, text) => {
        // (its citations' offsets, into the block's text, move past the line: see `resume`)
        if (typeof event.index === "number") this.#led = { index: event.index, by: text.length };
        return [
          { type: "content-delta", index: event.index, delta: { message: { content: { text } } } },
          event,
        ];
      },
    },
    // (`#blockText` is the message's text again, which the watch counts: bounded with it, not twice over)
    size: () => this.#places.size,
  };

  /**
   * A held citation's events once the text from the first change on is the changes' tails (see
   * `TextFrames.retell`): one of text the cut took goes, its start and end (see `citingKept`), and those
   * after it are numbered down, as a body drops it. Any other event as it is.
   */
  #retell(
    event: Record<string, unknown>,
    changes: readonly TextChange[],
  ): Record<string, unknown> | undefined {
    if (
      (event.type !== "citation-start" && event.type !== "citation-end") || typeof event.index !== "number"
    ) {
      return event;
    }
    const index = event.index;
    if (event.type === "citation-start") {
      const c = deltaMessage(event).citations;
      const block = isRecord(c) && !isPlanCitation(c)
        ? this.#blockOf.get(event) ?? c.content_index ?? this.#citedIn.get(event)
        : undefined;
      const was = typeof block === "number" ? this.#blockText.get(String(block)) : undefined;
      const cut = was !== undefined &&
        (citingKept([c], was, this.#places.retold(String(block), was, changes)) as unknown[]).length === 0;
      if (cut) this.#cutCited++;
      this.#citedAt.set(index, cut ? undefined : index - this.#cutCited);
    }
    const at = this.#citedAt.has(index) ? this.#citedAt.get(index) : index - this.#cutCited;
    if (at === undefined) return undefined;
    return at === index ? event : { ...event, index: at };
  }

  /**
   * A retry after a call written into the text (see `TextFrames.resume`): the citations held with the call
   * (one comes after the text it cites) of text the client keeps go out after that text, in order, as a
   * rejection that ends the turn sends them; the retry's are numbered after them. Undefined when none is:
   * the text alone, and the router's resume point.
   */
  #resumeAfter(change: TextChange): TextEnding | undefined {
    // (a block's start held with the call goes out only with text: a citation alone would leave it empty)
    if (change.tail === "" && this.#openings.waiting) return undefined;
    const kept: string[] = [];
    const open = new Set<unknown>();
    let cited = this.#clientCited(0);
    for (const h of this.#flow?.held ?? []) {
      const event = h.event;
      if (event?.type === "citation-end" && open.delete(event.index)) kept.push(h.raw);
      if (event?.type !== "citation-start" || event.index !== cited) continue;
      const c = deltaMessage(event).citations;
      const block = isRecord(c) ? c.content_index ?? this.#citedIn.get(event) : undefined;
      const within = isRecord(c) && typeof block === "number" && typeof c.end === "number" &&
        c.end <= this.#places.retoldLength(String(block), [change]);
      // (numbered in order: one past the client's text stops them, the retry's follow those sent)
      if (!within) break;
      kept.push(h.raw);
      open.add(event.index);
      cited++;
    }
    if (kept.length === 0) return undefined;
    const text = change.tail === "" ? "" : this.text.textFrame(change.tail, 0, change.at);
    // (the blocks whose start is held go out before these frames: they are the client's)
    const starts = (this.#flow?.held ?? []).filter((h) =>
      h.event?.type === "content-start" && !this.#openings.holds(h)
    );
    return {
      frames: text + kept.join(""),
      point: {
        at: this.#nextContent - starts.length,
        citations: cited,
        plan: this.#clientPlan(0),
        planRunsOn: this.#clientPlanRunsOn(0),
      },
    };
  }

  /** Notes how the stream frames and numbers its events before the text watch (which may hold them) does. */
  note(event: Record<string, unknown>, raw: string): void {
    if (raw.startsWith("event:")) this.#named = true;
    if (event.type === "citation-start") this.#cited++;
    const planned = planLength(event);
    this.#planned += planned;
    if (planned > 0) this.#planEnds += /\s$/u.test(deltaMessage(event).tool_plan as string) ? "s" : "m";
    if (event.type === "content-start" && typeof event.index === "number") {
      this.#nextContent = Math.max(this.#nextContent, event.index + 1);
      this.#open = event.index;
    }
    const cited = event.type === "citation-start" ? deltaMessage(event).citations : undefined;
    if (isRecord(cited) && cited.content_index == null && this.#open !== undefined) {
      this.#citedIn.set(event, this.#open);
    }
  }

  /** The wire text of an event, named as the stream names its events. */
  #wire(event: Record<string, unknown>, from?: { raw: string; event: Record<string, unknown> }): string {
    return reframe(event, from, this.#named ? String(event.type) : undefined);
  }

  /** The text of a `content-delta` (every other event carries none the watch reads). */
  #readText(event: Record<string, unknown>): TextPart {
    const content = event.type === "content-delta" ? deltaMessage(event).content : undefined;
    const text = isRecord(content) && typeof content.text === "string" ? content.text : "";
    if (typeof event.index === "number") {
      this.#places.read(text, String(event.index), event.index);
      if (text !== "") {
        this.#blockText.set(String(event.index), (this.#blockText.get(String(event.index)) ?? "") + text);
      }
    }
    const type = String(event.type ?? "");
    // (a citation, an empty delta, a block's end or start comes inside the text: it goes on after it)
    const delta = type === "content-delta" && typeof (isRecord(content) && content.text) === "string";
    return { text, toolish: CALL_EVENT.test(type), rest: () => undefined, goesOn: GOES_ON.test(type), delta };
  }

  /**
   * The content blocks the client has numbered when the calls are rejected: a retry's follow them. A block
   * whose start the text watch held (text that may begin a written call goes on past a block's end) is not
   * the client's when the retry drops it: every held start after the first call's event, or every one
   * where the calls were written (a retry sends only the frames held before the first call's).
   */
  resumePoint(): ResumePoint {
    const held = this.#flow?.held ?? [];
    const first = held.findIndex((h) => h.tool);
    const dropped = held.slice(Math.max(first, 0)).filter((h) => h.event?.type === "content-start").length;
    const from = Math.max(first, 0);
    // (the block `tellDropped` held goes ahead of the retry's, at `at`: see `endsDropped`)
    const telling = held.some((h) => h.event !== undefined && this.#told.has(h.event));
    this.#toldAt = telling ? this.#nextContent - dropped : undefined;
    return {
      at: this.#nextContent - dropped + (telling ? 1 : 0),
      citations: this.#clientCited(from),
      plan: this.#clientPlan(from),
      planRunsOn: this.#clientPlanRunsOn(from),
    };
  }

  /**
   * The ends of the blocks a client holds open that a retry drops (see `FrameRouter.endsDropped`), then the
   * text block `tellDropped` held, numbered where `resumePoint` put it: dropped with the calls, the model
   * never knew that a call of its turn was dropped unread, its retry going on as if none had been.
   */
  endsDropped(dropped: readonly Held[], flow: StreamFlow): string {
    const ends = blockEnds(dropped, "content-start", "content-end");
    const at = this.#toldAt;
    if (at === undefined) return ends;
    return ends + toldBlockAt(dropped, this.#told, at, { flow, text: saidText, wire: (e) => this.#wire(e) });
  }

  /**
   * The citations the client has once a retry drops the held frames from `from` on: every one the stream
   * brought but those. Not only those this router sent: the text watch sends the frames it held and let go
   * itself, and a retry numbered after the router's alone gave the client an index it had.
   */
  #clientCited(from: number): number {
    const dropped = (this.#flow?.held ?? []).slice(from);
    return this.#cited - dropped.filter((h) => h.event?.type === "citation-start").length;
  }

  /** The length of the tool plan the client has once a retry drops the held frames from `from` on. */
  #clientPlan(from: number): number {
    const dropped = (this.#flow?.held ?? []).slice(from);
    return this.#planned - dropped.reduce((n, h) => n + (h.event ? planLength(h.event) : 0), 0);
  }

  /**
   * Whether the tool plan the client has once a retry drops the held frames from `from` on ends mid-line:
   * its last delta that brought text and went out, else (none did) the earlier attempts' plan.
   */
  #clientPlanRunsOn(from: number): boolean {
    const dropped = (this.#flow?.held ?? []).slice(from).filter((h) => h.event && planLength(h.event) > 0);
    const sent = this.#planEnds.length - dropped.length;
    return sent > 0 ? this.#planEnds[sent - 1] === "m" : this.#planRunsOn;
  }

  /**
   * A retry's events continue the message: its own `message-start` is dropped and its content blocks are
   * numbered after the client's (a client files a block by its index: the retry's block 0 was the first
   * attempt's, its text joined to that block's or put in its place).
   */
  resume(
    raw: string,
    event: Record<string, unknown>,
    point: ResumePoint,
  ): { raw: string; event: Record<string, unknown> } | undefined {
    const at = point.at;
    if (!this.#resumed) {
      this.#resumed = true;
      this.#cited = point.citations ?? 0;
      this.#planned = point.plan ?? 0;
      this.#planRunsOn = point.planRunsOn ?? false;
      // (the client's blocks count before this answer's own: a next retry's follow them even when this
      // answer brings none; counted from 0, its blocks landed in the client's first)
      this.#nextContent = Math.max(this.#nextContent, at);
    }
    if (event.type === "message-start") return undefined;
    if (
      (event.type === "citation-start" || event.type === "citation-end") && typeof event.index === "number"
    ) {
      // A retry's citations follow those the client has (its `index` numbers the message's citations), each
      // in its block as the retry's blocks are moved: numbered from 0 again, they named the client's. A plan's
      // citation cites the retry's plan, which the client has after the earlier attempts' (see `planCited`).
      const shifted: Record<string, unknown> = { ...event, index: event.index + (point.citations ?? 0) };
      const message = event.type === "citation-start" ? deltaMessage(event) : undefined;
      const before = (point.plan ?? 0) + (this.#planLead?.length ?? 0);
      const citations = message &&
        ledCited(
          planCited(citationIn(message.citations, (index) => index + at), before),
          this.#led,
          this.#open,
        );
      if (message && citations !== message.citations) {
        shifted.delta = { ...event.delta as object, message: { ...message, citations } };
      }
      return { raw: reframe(shifted, { raw, event }), event: shifted };
    }
    if (planLength(event) > 0 && this.#planLead === undefined) return this.#planLed(raw, event);
    if (at === 0 || !CONTENT_EVENT.test(String(event.type ?? "")) || typeof event.index !== "number") {
      return { raw, event };
    }
    const shifted = { ...event, index: event.index + at };
    return { raw: reframe(shifted, { raw, event }), event: shifted };
  }

  /**
   * A retry's first tool plan delta that brings text: where it joins the client's plan (see
   * `joinsEarlierWords`: not where its tokens are scored, `logprobs`), led by a blank line, as a retry's text
   * is (clients append the plan's deltas: "I will look up Oslo." and "I will call it again." ran together).
   * Its plan citations move past that line with the client's plan (see `resume`).
   */
  #planLed(raw: string, event: Record<string, unknown>): { raw: string; event: Record<string, unknown> } {
    const plan = deltaMessage(event).tool_plan as string;
    const runs = joinsEarlierWords(this.text, { text: plan, runsOn: this.#planRunsOn, event });
    this.#planLead = runs ? PARAGRAPH : "";
    if (!runs) return { raw, event };
    const message = { ...deltaMessage(event), tool_plan: PARAGRAPH + plan };
    const led = { ...event, delta: { ...event.delta as object, message } };
    return { raw: reframe(led, { raw, event }), event: led };
  }

  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void {
    this.#flow = flow;
    const type = String(event.type ?? "");
    if (CALL_EVENT.test(type)) {
      flow.pending = true;
      return flow.hold({ raw, event, tool: true });
    }
    // Pending: text still flows, with the start and end of its block (a client files a content-delta under
    // the block its content-start opened; the start held behind the call came after its deltas).
    if (!flow.pending || TEXT_EVENT.test(type)) {
      // An empty text block's start (and white space alone and the end after it) waits for what comes
      // next, as Anthropic's (see `Openings`).
      const content = deltaMessage(event).content;
      const text = isRecord(content) ? content.text : undefined;
      const opening = type === "content-start" && isTextStart(event) && startText(event) === "";
      const waits = (type === "content-delta" && this.#openings.blank(event.index, text)) ||
        (type === "content-end" && this.#openings.ends(event.index));
      if (opening || waits) return this.#openings.hold({ raw, event }, flow);
      this.sendOpenings(flow);
      if (type === "message-end" && this.#stopOfDropped(event, flow)) return;
      // (white space alone says nothing: the reason then needs no blank line before it; the plan stands
      // ahead of the text, as a body reads it, a retry's plan too)
      const said = saidText(event);
      if (type === "tool-plan-delta" && typeof said === "string") flow.sawAhead(said);
      else if (typeof said === "string") flow.sawText(said);
      return flow.send(raw);
    }
    flow.hold({ raw, event, tool: false });
  }

  /**
   * Ends a stream whose only call came in a frame dropped unread, whose `message-end` says `TOOL_CALL`, as
   * a rejected turn ends: a text block saying so, then the finish made `COMPLETE`. True when it did. Left
   * as it came, the client read a finish for tool calls with no call to run and nothing said, and the
   * model was never told (as Anthropic's `#stopOfDropped`).
   */
  #stopOfDropped(event: Record<string, unknown>, flow: StreamFlow): boolean {
    const ending = completed(event);
    if (ending === event) return false;
    if (!this.#unread) {
      this.#toolEnd = event;
      return false;
    }
    // (an unread frame's calls are not known: at least one)
    const reason = malformedCallsReason(1);
    this.#ownReason = reason;
    for (const e of [...textBlock(this.#nextContent++, reasonLead(flow) + reason), ending]) {
      flow.send(this.#wire(e));
    }
    return true;
  }

  /**
   * See `FrameRouter.tellLate`: where a `message-end` for tool calls went out with no call, and a frame
   * after it was dropped unread, ends the message again as `#stopOfDropped` ends one whose frame came
   * before it: a text block saying so, then that `message-end` made `COMPLETE`.
   */
  tellLate(flow: StreamFlow): void {
    if (this.#toolEnd && this.#ownReason === undefined && this.#unread) {
      this.#stopOfDropped(this.#toolEnd, flow);
    }
  }

  /** See `FrameRouter.final`: `message-end`. */
  final(event: Record<string, unknown>): boolean {
    return event.type === "message-end";
  }

  /**
   * See `FrameRouter.unread`: told where the stream then finishes for tool calls with none held (see
   * `#stopOfDropped`). Beside calls held, only one that names a call (its `tool_calls` key, or a
   * `tool-call-start` type, see `namesKey`) is taken for a call's, as Ollama reads its lines: any other may
   * be text, or a finish (`"finish_reason":"TOOL_CALL"`).
   */
  unread(data: string): void {
    this.#unread = true;
    if (namesKey(data, "tool_calls") || namesKey(data, "type", "tool-call-start")) this.#unreadCall = true;
  }

  /**
   * See `FrameRouter.tellDropped`: beside calls held, a text block saying that a call came in a frame dropped
   * unread, held ahead of the held end (the finish stays `TOOL_CALL`, for the calls kept), so it goes with
   * the calls that pass, a rejection or drop-call sends it before its own reason, and a retry puts it ahead
   * of its blocks (see `endsDropped`); beside calls written into the text, after their text, the finish
   * made `COMPLETE` (no call is left in the message).
   */
  tellDropped(flow: StreamFlow, _answers?: ReadonlySet<number>, { written = false } = {}): void {
    if (!this.#unreadCall || this.#ownReason !== undefined) return;
    if (!written && !flow.held.some((h) => h.tool)) return;
    // (an unread frame's calls are not known: at least one)
    const reason = malformedCallsReason(1);
    this.#ownReason = reason;
    const index = this.#nextContent++;
    const block = textBlock(index, reasonLead(flow) + reason);
    // (beside a written call, the block is one frame marked told, as Anthropic's: the watch's ending leads a
    // rejection's reason with its words, and a retry sends them after the text it sends ahead; its start is
    // its event, so a retry numbers its blocks as if it never came)
    const told = written
      ? [{
        raw: block.map((e) => this.#wire(e)).join(""),
        event: block[0],
        tool: false,
        told: { reason, answer: 0 },
      }]
      : block.map((e) => {
        this.#told.add(e);
        return { raw: this.#wire(e), event: e, tool: false };
      });
    const end = flow.held.findIndex((h) => h.event?.type === "message-end");
    // (beside a written call alone, no call is left: the finish says so, as `#stopOfDropped`'s)
    if (written) this.endsWritten(flow);
    flow.holdAt(end < 0 ? flow.held.length : end, told);
    if (written) this.#toldWritten = { frame: told[0], index };
  }

  /**
   * See `FrameRouter.endsWritten`: the held `message-end`'s `TOOL_CALL` finish made `COMPLETE`; and where
   * the watch's ending took the words of the block `tellDropped` held beside a written call into its reason,
   * that block's index is given back (a failed watch's `replace` numbered its block after it: 0, 2).
   */
  endsWritten(flow: StreamFlow): void {
    if (!flow.held.some((h) => h.tool)) flow.setHeld(flow.held.map(completes));
    const told = this.#toldWritten;
    if (!told || flow.held.includes(told.frame)) return;
    this.#toldWritten = undefined;
    if (this.#nextContent === told.index + 1) this.#nextContent = told.index;
  }

  /** See `FrameRouter.ownReason`. */
  ownReason(): string | undefined {
    return this.#ownReason;
  }

  /** Sends the held openings the watch has not let out or dropped since (see `FrameRouter.sendOpenings`). */
  /** See `FrameRouter.textOf`. */
  textOf(event: Record<string, unknown>): unknown {
    return saidText(event);
  }

  sendOpenings(flow: StreamFlow): void {
    this.#openings.send(flow);
  }

  /**
   * Ends a stream of which only some calls were rejected: the held events without the dropped calls' (the
   * kept calls renumbered from 0, as a client assembles them by index), then a text content block with
   * `text` (the reason) before `message-end`, which stays `TOOL_CALL`. The reason follows the held text, as
   * a body puts it after the message's content: sent first, it opened its block inside a held block and
   * came before that block's text. A call event goes with the call the reader filed it under (`flow.filed`),
   * whatever its index (`"0"`, none): kept as it came, a rejected call's event reached the client.
   */
  dropCalls(answerReason: AnswerReason, split: SplitCalls, flow: StreamFlow): void {
    const reason = answerReason(0); // (one answer)
    const text = reasonLead(flow) + reason;
    const emit = (event: Record<string, unknown>) => flow.send(this.#wire(event));
    const index = this.#nextContent;
    let told = false;
    const tell = () => {
      told = true;
      textBlock(index, text).forEach(emit);
    };
    // Only Cohere calls are a Cohere client's (another dialect's event in the stream is judged, not numbered).
    const own = (calls: readonly { dialect: string; slot: number }[]) =>
      calls.filter((c) => c.dialect === "cohere").map((c) => c.slot);
    const gone = new Set(own(split.dropped));
    // Each kept slot's new place, looked up per event (a search of the list was quadratic in the calls).
    const keptAt = new Map([...new Set(own(split.kept))].sort((a, b) => a - b).map((s, i) => [s, i]));
    for (const h of flow.held) {
      const e = h.event;
      if (!e) continue;
      if (!told && e.type === "message-end") tell();
      const slot = h.tool ? flow.filed(e) : undefined;
      if (!h.tool || slot === undefined) flow.send(h.raw);
      else if (gone.has(slot)) continue;
      else if (arrayIndex(e.index) === undefined) flow.send(h.raw); // (a kept call without index, as it came)
      else {
        const at = keptAt.get(slot) ?? -1;
        if (at === e.index || at < 0) flow.send(h.raw);
        else emit({ ...e, index: at });
      }
    }
    if (!told) tell();
  }

  replace(answerReason: AnswerReason, _calls: unknown, flow: StreamFlow, told?: ReadonlySet<number>): void {
    const emit = (event: Record<string, unknown>) => flow.send(this.#wire(event));
    const index = this.#nextContent;
    let end: Record<string, unknown> | undefined;
    for (const h of flow.held) {
      if (h.tool || !h.event) continue;
      if (h.event.type === "message-end") end = h.event;
      else flow.send(h.raw);
    }
    if (!told?.has(0)) textBlock(index, reasonLead(flow) + answerReason(0)).forEach(emit); // (one answer)
    const delta = isRecord(end?.delta) ? end.delta : {};
    emit({ ...(end ?? {}), type: "message-end", delta: { ...delta, finish_reason: "COMPLETE" } });
  }
}

/** Keeps the text content and the `tool_plan`; the calls come from the assembler. */
class CohereTurn implements TurnRecorder {
  #text = "";
  #plan = "";

  read(event: Record<string, unknown>): void {
    const message = deltaMessage(event);
    // (the text a start brings is the client's too: the gate sends it on as a delta)
    if (event.type === "content-start") this.#text += startText(event);
    else if (event.type === "content-delta" && isRecord(message.content)) {
      if (typeof message.content.text === "string") this.#text += message.content.text;
    } else if (event.type === "tool-plan-delta" && typeof message.tool_plan === "string") {
      this.#plan += message.tool_plan;
    }
  }

  body(): Record<string, unknown> {
    const message: Record<string, unknown> = { role: "assistant" };
    if (this.#text !== "") message.content = [{ type: "text", text: this.#text }];
    if (this.#plan !== "") message.tool_plan = this.#plan;
    return { message };
  }
}

/** Cohere v2 chat in its three roles. */
export const cohere: Dialect = {
  body,
  router: () => new CohereStream(),
  turn: () => new CohereTurn(),
};
