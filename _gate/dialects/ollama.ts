/**
 * Ollama `/api/chat`: response bodies, NDJSON stream chunks (`message.tool_calls`, each call whole), and
 * the gate's routing of those chunks.
 *
 * @module
 */
import { isRecord } from "../../_common/values.ts";
import { cutCalls } from "../engines.ts";
import {
  type AnswerReason,
  callCounter,
  type CompletionBody,
  type Dialect,
  type FrameRouter,
  heldText,
  joinText,
  malformedCallsReason,
  namesKey,
  pick,
  type SplitCalls,
  type StreamFlow,
  type TextFrames,
  textOf,
  type TextPart,
  type TurnRecorder,
  withoutKeys,
} from "./shared.ts";

const body: CompletionBody = {
  declared: (tool) => (isRecord(tool.function) ? [tool] : []),
  calls(body) {
    const out: unknown[] = [];
    if (isRecord(body.message) && Array.isArray(body.message.tool_calls)) {
      for (const call of body.message.tool_calls) out.push(call);
    }
    return out;
  },
  texts(body) {
    return isRecord(body.message) && typeof body.message.content === "string" ? [body.message.content] : [];
  },
  rewrite(body, answerReason, { fromText, cut = cutCalls }) {
    const reason = answerReason(0); // (one answer)
    const m = isRecord(body.message) ? body.message : {};
    const message: Record<string, unknown> = { ...m };
    delete message.tool_calls;
    const content = typeof m.content === "string" ? (fromText ? cut(m.content) : m.content) : "";
    message.content = joinText(content, reason);
    const copy: Record<string, unknown> = { ...body, message };
    if (body.done_reason !== undefined) copy.done_reason = "stop";
    return copy;
  },
  dropCalls(body, drop, answerReason) {
    const reason = answerReason(0); // (one answer)
    const m = isRecord(body.message) ? body.message : {};
    const keep = callCounter(drop);
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(() => keep()).map(renumbered) : [];
    const content = joinText(typeof m.content === "string" ? m.content : "", reason);
    return { ...body, message: { ...m, content, tool_calls: calls } };
  },
};

const line = (event: Record<string, unknown>): string => JSON.stringify(event) + "\n";

/**
 * A kept call numbered by its place among the kept ones, where it carries a `function.index` (newer Ollama
 * numbers them): the gaps the dropped calls left closed, in a body as in a stream.
 */
function renumbered(call: unknown, at: number): unknown {
  if (!isRecord(call) || !isRecord(call.function) || typeof call.function.index !== "number") return call;
  return { ...call, function: { ...call.function, index: at } };
}

/**
 * A message's content, what the client's text goes on with: the reason starts on a new paragraph after words,
 * as a body joins them (`joinText`); after only thinking, or blanks, it stands alone.
 */
const said = (message: Record<string, unknown> | undefined): string =>
  typeof message?.content === "string" ? message.content : "";

/**
 * Ollama chunks carry no position, so text keeps flowing while calls are held; a chunk with both is split.
 * Calls written into the message text are watched for.
 */
class OllamaStream implements FrameRouter {
  readonly framing = "ndjson";
  #template?: Record<string, unknown>;
  /** Whether a line naming `tool_calls` was dropped unread (see `#tellDropped`). */
  #unreadCalls = false;
  /** Whether any line was dropped unread: the final chunk then waits for the end (see `route`). */
  #unread = false;
  /** Whether a chunk with calls was routed: a client holds a call. */
  #called = false;
  /** The reason `#tellDropped` wrote, when it did. */
  #ownReason: string | undefined;
  /** The flow of the stream, once a line was routed: a line dropped unread after the final chunk tells there. */
  #flow: StreamFlow | undefined;

  readonly text: TextFrames = {
    read: (event) => ollamaText(event),
    textFrame: (text) =>
      line({ ...(this.#template ?? {}), message: { role: "assistant", content: text }, done: false }),
    scored: (event) => event.logprobs != null,
    frame: line,
  };

  note(event: Record<string, unknown>): void {
    this.#template ??= pick(event, ["model", "created_at"]);
  }

  /**
   * See `FrameRouter.textOf`: text the watch held and a retry sends ahead of its stream counts as the
   * client's, so the retry's text is set apart from it by a blank line ("...</tool_call>plain." ran on).
   */
  textOf(event: Record<string, unknown>): unknown {
    return ollamaText(event).text;
  }

  /**
   * See `FrameRouter.place`: a `done` true to JavaScript but not `true` (`1`, `"yes"`) as the client reads
   * it, `true`: the ollama client stops at any such chunk, where the gate took it for text, and sent a
   * rejected call's reason after it, never read.
   */
  place(raw: string, event: Record<string, unknown>): { raw: string; event: Record<string, unknown> } {
    if (!event.done || event.done === true) return { raw, event };
    const final = { ...event, done: true };
    return { raw: line(final), event: final };
  }

  /** A retry's chunks carry no position: they follow as they come. */
  resume(raw: string, event: Record<string, unknown>): { raw: string; event: Record<string, unknown> } {
    return { raw, event };
  }

  /**
   * See `FrameRouter.unread`. Ollama ends a turn of calls `stop` as any other, so only the line's own text
   * tells whether it carried calls: one that names `tool_calls` is taken for a call's (see `#tellDropped`),
   * its name read with its escapes (`"tool\u005fcalls"` is the same key to JSON); any other is dropped
   * unsaid, as it may be text.
   */
  unread(data: string): void {
    this.#unread = true;
    if (!namesKey(data, "tool_calls")) return;
    this.#unreadCalls = true;
    if (this.#flow) this.#tellAtFinal(this.#flow);
  }

  /**
   * Where a line naming `tool_calls` was dropped unread after the final chunk, held (see `route`), in a
   * stream that routed no call: the reason goes among the held lines ahead of that chunk (after its own
   * words, set apart from it), where the ollama client, which stops reading at the final chunk, reads it.
   * Sent after it, the reason was never read, and the model never knew of the call.
   */
  #tellAtFinal(flow: StreamFlow): void {
    if (this.#called || this.#ownReason !== undefined) return;
    let held = flow.held;
    let at = held.findIndex((h) => h.event?.done === true);
    if (at < 0) return;
    const message = held[at].event!.message;
    if (isRecord(message) && said(message) !== "") {
      const [words, final] = wordsApart(held[at].event!, message);
      const apart = [{ raw: line(words), event: words, tool: false }, {
        raw: line(final),
        event: final,
        tool: false,
      }];
      flow.setHeld(held = [...held.slice(0, at), ...apart, ...held.slice(at + 1)]);
      at++;
    }
    // (an unread line's calls are not known: at least one)
    this.#ownReason = malformedCallsReason(1);
    const ahead = held.slice(0, at).map((h) => (h.event && chunkText(h.event)) ?? "").join("");
    this.#holdReason(flow, at, flow.lead(0, ahead), this.#ownReason);
  }

  /** See `FrameRouter.ownReason`. */
  ownReason(): string | undefined {
    return this.#ownReason;
  }

  /**
   * Where a message whose only calls came in lines dropped unread ends (its final chunk, `done`): sends the
   * reason as its text ahead of it, and holds it. Left alone, the client read a plain stop with the call
   * gone and nothing said, and the model was never told.
   */
  #tellDropped(
    raw: string,
    event: Record<string, unknown>,
    flow: StreamFlow,
  ): { raw: string; event: Record<string, unknown> } {
    if (event.done !== true || !this.#unreadCalls || this.#called || this.#ownReason !== undefined) {
      return { raw, event };
    }
    const message = isRecord(event.message) ? event.message : undefined;
    if (said(message) !== "") {
      // (the final chunk's own words go first: sent after them, the reason stood inside the answer's last
      // sentence, "Let me <reason>check.")
      flow.sawText(said(message));
      flow.send(
        line({
          ...(this.#template ?? {}),
          message: { role: "assistant", content: said(message) },
          done: false,
        }),
      );
      event = { ...event, message: { ...message, content: "" } };
      raw = line(event);
    }
    // (an unread line's calls are not known: at least one)
    this.#ownReason = malformedCallsReason(1);
    const text = flow.lead(0) + this.#ownReason;
    flow.sawText(text);
    flow.send(
      line({ ...(this.#template ?? {}), message: { role: "assistant", content: text }, done: false }),
    );
    return { raw, event };
  }

  /**
   * See `FrameRouter.tellDropped`: where a line naming `tool_calls` was dropped unread beside calls a client
   * holds, the reason goes among the held chunks after the last words held (else ahead of them), so it
   * goes with the calls that pass, ahead of a rejection's reason and of a retry's stream. Left out, the kept calls went out
   * with the dropped one unsaid, and the model never knew that not all of its calls ran.
   */
  tellDropped(flow: StreamFlow): void {
    // (`#called` is not asked: a call whose line the text watch held was never routed, yet is held)
    if (!this.#unreadCalls || this.#ownReason !== undefined) return;
    // (an unread line's calls are not known: at least one)
    this.#ownReason = malformedCallsReason(1);
    // After the last words held (the final chunk's are held apart from it, see `route`), else ahead of the
    // held chunks: a retry then sends it with the words ahead of the first call, and drops the rest.
    // (a final chunk the text watch held whole with a written call brings words of its own: apart from it, as
    // `route` holds them, else the reason went ahead of them, "...needed. Done.")
    const last = flow.held.findLastIndex((h) => isRecord(h.event?.message) && said(h.event.message) !== "");
    const done = flow.held[last];
    if (done?.event?.done === true) {
      const [words, final] = wordsApart(done.event, done.event.message as Record<string, unknown>);
      const written = done.written && { at: done.written.at };
      flow.setHeld([
        ...flow.held.slice(0, last),
        { ...done, raw: line(words), event: words, written },
        { raw: line(final), event: final, tool: false },
        ...flow.held.slice(last + 1),
      ]);
    }
    const held = flow.held;
    const at = held.findLastIndex((h) => h.event !== undefined && !!chunkText(h.event)) + 1;
    this.#holdReason(flow, at, flow.lead(0, heldText(flow, chunkText)), this.#ownReason);
  }

  /**
   * Holds at `at` a chunk of the stream's own shape whose words are `lead` and the gate's `reason`, told as
   * the gate's (one home for the dropped-call notes of `#tellAtFinal` and `tellDropped`).
   */
  #holdReason(flow: StreamFlow, at: number, lead: string, reason: string): void {
    const content = lead + reason;
    const told = { ...(this.#template ?? {}), message: { role: "assistant", content }, done: false };
    flow.holdAt(at, [{ raw: line(told), event: told, tool: false, told: { reason, answer: 0 } }]);
  }

  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void {
    const hasCalls = isRecord(event.message) && Array.isArray(event.message.tool_calls) &&
      event.message.tool_calls.length > 0;
    this.#flow = flow;
    if (hasCalls) this.#called = true;
    if (event.done === true && !hasCalls && !flow.pending && !this.#unread) {
      // The final chunk waits whole (byte for byte) for the end of the stream: the ollama client stops
      // reading at it, so a line dropped unread after it (the gate drops every one) is told ahead of it, or
      // never. (One that brings calls is held as theirs, below: held as no call's, a rejected call in it
      // went out with the kept ones.)
      flow.pending = true;
      return flow.hold({ raw, event, tool: false });
    }
    ({ raw, event } = this.#tellDropped(raw, event, flow));
    // After a line dropped unread (told or not), the final chunk waits for the end, as after calls: the
    // ollama client stops reading at it and cancels, so sent now, the stream was cancelled before the gate's
    // end, and onVerdict never heard of the line dropped (nor of the reason told for it).
    if (event.done === true && this.#unread) flow.pending = true;
    const message = isRecord(event.message) ? event.message : undefined;
    const hasText = !!message && (textOf(message) !== "");
    if (!hasCalls) {
      // Pending: text still flows; the final chunk waits.
      if (!flow.pending || (hasText && event.done !== true)) {
        flow.sawText(said(message));
        flow.send(raw);
      } else if (event.done === true && said(message) !== "") {
        // The final chunk's words are held apart from it, as a chunk of their own (see `wordsApart`).
        const [words, final] = wordsApart(event, message!);
        flow.hold({ raw: line(words), event: words, tool: false });
        flow.hold({ raw: line(final), event: final, tool: false });
      } else flow.hold({ raw, event, tool: false });
      return;
    }
    flow.pending = true;
    if (!hasText) return flow.hold({ raw, event, tool: true });
    // Split: the text part goes now, the calls wait.
    flow.sawText(said(message));
    flow.send(line({ ...event, message: withoutKeys(message!, ["tool_calls"]), done: false }));
    const toolPart = { ...event, message: { ...message!, content: "" } };
    delete (toolPart.message as Record<string, unknown>).thinking;
    flow.hold({ raw: line(toolPart), event: toolPart, tool: true });
  }

  dropCalls(answerReason: AnswerReason, split: SplitCalls, flow: StreamFlow): void {
    const reason = answerReason(0); // (one answer)
    const text = flow.lead(0, heldText(flow, chunkText)) + reason;
    dropOllamaCalls(text, split, flow, this.#template ?? { model: "" });
  }

  /**
   * Ends a stream whose calls were rejected: the text and thinking of the held chunks first, as they came
   * (text held as a call written beside the native ones, which is not judged, the text a chunk brought with
   * its calls), then `text` (the reason), then the final chunk, where the client stops reading. An answer in
   * `told` read the reason already (where its withheld text was): no second reason, nor its held text.
   */
  replace(answerReason: AnswerReason, _calls: unknown, flow: StreamFlow, told?: ReadonlySet<number>): void {
    // (one answer)
    const text = told?.has(0) ? undefined : flow.lead(0, heldText(flow, chunkText)) + answerReason(0);
    const base = this.#template ?? { model: "" };
    for (const h of flow.held) {
      if (!h.event || h.event.done === true) continue;
      const message = isRecord(h.event.message) ? h.event.message : undefined;
      if (!h.tool) flow.send(h.raw);
      // (a chunk that brought text with its calls, held whole by the text watch: its text without them)
      else if (message && textOf(message) !== "") {
        flow.send(line({ ...h.event, message: withoutKeys(message, ["tool_calls"]) }));
      }
    }
    if (text !== undefined) {
      flow.send(line({ ...base, message: { role: "assistant", content: text }, done: false }));
    }
    const done = flow.held.find((h) => h.event?.done === true);
    const final = done?.event
      ? { ...done.event, message: { role: "assistant", content: "" }, done_reason: "stop" }
      : { ...base, message: { role: "assistant", content: "" }, done: true, done_reason: "stop" };
    flow.send(line(final));
  }
}

/**
 * A final chunk's words as a chunk of their own, with its logprobs, and the final chunk without them, with
 * its counts and durations: each once (a client that adds up each chunk's counts, as LangChain does,
 * counted both). A rejection writes its stop in the final chunk, and a dropped call's reason goes before it.
 */
function wordsApart(
  event: Record<string, unknown>,
  message: Record<string, unknown>,
): [Record<string, unknown>, Record<string, unknown>] {
  const words = { ...pick(event, ["model", "created_at", "logprobs"]), message, done: false };
  const final = withoutKeys({ ...event, message: { role: message.role ?? "assistant", content: "" } }, [
    "logprobs",
  ]);
  return [words, final];
}

/** The text a held chunk sends ahead of the reason (the final chunk carries none), for {@linkcode heldText}. */
function chunkText(event: Record<string, unknown>): string | undefined {
  return event.done !== true && isRecord(event.message) ? said(event.message) : undefined;
}

/**
 * Ends a stream of which only some calls were rejected: the held chunks with the dropped calls taken out,
 * the kept calls' `function.index` (newer Ollama numbers them) renumbered to close the gaps, then `text`
 * (the reason), then the final chunk: the reason follows the text held with the calls, as a body puts it
 * after the message's content. A chunk left with nothing is dropped; the final chunk stays.
 */
function dropOllamaCalls(
  text: string,
  split: SplitCalls,
  flow: StreamFlow,
  template: Record<string, unknown>,
): void {
  let told = false;
  const tell = () => {
    if (!told) flow.send(line({ ...template, message: { role: "assistant", content: text }, done: false }));
    told = true;
  };
  const gone = new Set(split.dropped.map((c) => c.slot));
  let position = 0;
  let kept = 0;
  for (const h of flow.held) {
    if (h.event?.done === true) tell();
    const message = isRecord(h.event?.message) ? h.event.message : undefined;
    if (!h.tool || !h.event || !message || !Array.isArray(message.tool_calls)) {
      flow.send(h.raw);
      continue;
    }
    const before: unknown[] = message.tool_calls;
    const calls = before.flatMap((tc) => {
      if (!isRecord(tc) || gone.has(position++)) return []; // (an entry that is no call was never judged)
      return [renumbered(tc, kept++)];
    });
    if (calls.length === before.length && calls.every((c, i) => c === before[i])) {
      flow.send(h.raw);
    } else if (calls.length > 0 || h.event.done === true || textOf(message) !== "") {
      flow.send(line({ ...h.event, message: { ...message, tool_calls: calls } }));
    }
  }
  tell();
}

/** The message text in a chunk. */
function ollamaText(event: Record<string, unknown>): TextPart {
  const message = isRecord(event.message) ? event.message : undefined;
  const toolish = !!message && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
  return {
    text: message && typeof message.content === "string" ? message.content : "",
    toolish,
    // (an empty chunk or a thinking piece: the message's text may go on, as a body reads it whole)
    goesOn: !toolish && event.done !== true,
    rest() {
      const next = { ...event, message: { ...message!, content: "" } };
      const empty = event.done !== true && !toolish &&
        !(typeof message!.thinking === "string" && message!.thinking);
      return empty ? undefined : next;
    },
  };
}

/** Keeps the message text and the `thinking` of a thinking model; the calls come from the assembler. */
class OllamaTurn implements TurnRecorder {
  #content = "";
  #thinking = "";

  read(event: Record<string, unknown>): void {
    const message = isRecord(event.message) ? event.message : undefined;
    if (typeof message?.content === "string") this.#content += message.content;
    if (typeof message?.thinking === "string") this.#thinking += message.thinking;
  }

  body(): Record<string, unknown> {
    const message: Record<string, unknown> = { role: "assistant", content: this.#content };
    if (this.#thinking !== "") message.thinking = this.#thinking;
    return { message };
  }
}

/** Ollama `/api/chat` in its three roles. */
export const ollama: Dialect = {
  body,
  router: () => new OllamaStream(),
  turn: () => new OllamaTurn(),
};
