/**
 * OpenAI Chat Completions (and every OpenAI-compatible server): response bodies, stream chunks
 * (`choices[].delta.tool_calls`, assembled by `index`), and the gate's routing of those chunks.
 *
 * @module
 */
import { isRecord, plural } from "../../_common/values.ts";
import type { AssembledToolCall } from "../calls.ts";
import { formatSse, reframe } from "../sse.ts";
import { cutCalls } from "../engines.ts";
import { arrayIndex } from "./readers.ts";
import {
  allCitedOn,
  type AnswerReason,
  callCounter,
  citingKept,
  citingWithin,
  type CompletionBody,
  contentText,
  type Dialect,
  type FrameRouter,
  type Held,
  heldText,
  joinText,
  malformedCallsReason,
  namesKey,
  pick,
  REASONING_FIELDS,
  type SplitCalls,
  type StreamFlow,
  TEXT_FIELDS,
  type TextFrames,
  textOf,
  type TextPart,
  textParts,
  type TurnRecorder,
  withoutKeys,
} from "./shared.ts";

// ---------------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------------

const body: CompletionBody = {
  declared: (tool) => (isRecord(tool.function) ? [tool] : []),
  calls(body) {
    const out: unknown[] = [];
    for (const c of body.choices as unknown[]) {
      if (!isRecord(c) || !isRecord(c.message)) continue;
      if (Array.isArray(c.message.tool_calls)) { for (const call of c.message.tool_calls) out.push(call); }
      if (isRecord(c.message.function_call)) out.push({ function: c.message.function_call });
    }
    return out;
  },
  texts: (body) => choiceTexts(body, false),
  looseTexts: (body) => choiceTexts(body, true).map((text) => [text]),
  answers(body) {
    const out = { calls: [] as number[], texts: [] as number[] };
    for (const [at, c] of (body.choices as unknown[]).entries()) {
      if (!isRecord(c) || !isRecord(c.message)) continue;
      const m = c.message;
      for (const _ of Array.isArray(m.tool_calls) ? m.tool_calls : []) out.calls.push(at);
      if (isRecord(m.function_call)) out.calls.push(at);
      if (contentText(m) !== undefined && !nativeCalls(m)) out.texts.push(at);
    }
    return out;
  },
  rewrite(body, answerReason, { fromText, cut = cutCalls }) {
    return {
      ...body,
      choices: (body.choices as unknown[]).map((c, at) => {
        if (!isRecord(c) || !isRecord(c.message)) return c;
        const m = c.message;
        const text = contentText(m) ?? "";
        // Only the text read for calls is cut (see `looseTexts`): the text beside a choice's native calls goes
        // as it came, as in a stream, and as in a body of one choice.
        const content = fromText && !nativeCalls(m) ? cut(text) : text;
        // A choice whose text lost nothing to the cut had no call to lose (JSON prose naming no declared tool,
        // a valid call kept under drop-call): it goes as it came, without the reason, as in a stream. So
        // does one whose `tool_calls` is empty (vLLM sends one with every plain answer).
        const hadCalls = nativeCalls(m) || content !== text;
        if (!hadCalls) return c;
        const message: Record<string, unknown> = { ...m };
        delete message.tool_calls;
        delete message.function_call;
        const told = joinText(content, answerReason(at));
        message.content = withText(m.content, told);
        // (an annotation of the cut call would cite the reason: see `citingKept`)
        if (Array.isArray(m.annotations)) message.annotations = citingKept(m.annotations, text, told);
        return { ...c, message, finish_reason: "stop" };
      }),
    };
  },
  dropCalls(body, drop, answerReason) {
    const keep = callCounter(drop);
    return {
      ...body,
      choices: (body.choices as unknown[]).map((c, at) => {
        if (!isRecord(c) || !isRecord(c.message)) return c;
        const m = c.message;
        const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(() => keep()) : undefined;
        const legacy = isRecord(m.function_call) ? keep() : undefined;
        const dropped = (calls?.length ?? 0) < (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0) ||
          legacy === false;
        if (!dropped) return c;
        const message: Record<string, unknown> = { ...m };
        if (calls) message.tool_calls = calls;
        if (legacy === false) delete message.function_call;
        message.content = withText(m.content, joinText(contentText(m) ?? "", answerReason(at)));
        // A choice that lost every call ends as a stream ends it: no calls left to run, a normal stop (an
        // empty `tool_calls` sent back is refused by the API).
        if (!nativeCalls(message)) {
          delete message.tool_calls;
          return { ...c, message, finish_reason: "stop" };
        }
        return { ...c, message };
      }),
    };
  },
};

/**
 * A chunk whose choices' annotations (`delta.annotations`, which the openai SDK sets on the message) are
 * `told` of them and the choice's index; the chunk itself when none changes.
 */
function eachCited(
  event: Record<string, unknown>,
  told: (annotations: unknown[], answer: number) => unknown,
): Record<string, unknown> {
  if (!Array.isArray(event.choices)) return event;
  let changed = false;
  const choices = event.choices.map((c) => {
    if (!isRecord(c) || !isRecord(c.delta) || !Array.isArray(c.delta.annotations)) return c;
    const annotations = told(c.delta.annotations, choiceIndex(c));
    if (annotations === c.delta.annotations) return c;
    changed = true;
    return { ...c, delta: { ...c.delta, annotations } };
  });
  return changed ? { ...event, choices } : event;
}

/**
 * Whether a message carries native calls, as `calls` reads them: an empty `tool_calls`, which vLLM sends with
 * every plain answer, carries none.
 */
function nativeCalls(message: Record<string, unknown>): boolean {
  return (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) ||
    isRecord(message.function_call);
}

/** The text of each choice's message; with `loose`, only of those that carry no native call (`nativeCalls`). */
function choiceTexts(body: Record<string, unknown>, loose: boolean): string[] {
  const out: string[] = [];
  for (const c of body.choices as unknown[]) {
    if (!isRecord(c) || !isRecord(c.message)) continue;
    const text = contentText(c.message);
    if (text === undefined) continue;
    if (loose && nativeCalls(c.message)) continue;
    out.push(text);
  }
  return out;
}

/**
 * `content` with `text` as its text: a string, or, for content given as parts, its other parts (reasoning)
 * kept in place and one text part where the first stood.
 */
function withText(content: unknown, text: string): unknown {
  if (!Array.isArray(content)) return text;
  const out: unknown[] = [];
  let placed = false;
  for (const p of content) {
    if (!(isRecord(p) && p.type === "text" && typeof p.text === "string")) out.push(p);
    else if (!placed) {
      out.push({ ...p, text });
      placed = true;
    }
  }
  if (!placed) out.push({ type: "text", text });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The gate's routing
// ---------------------------------------------------------------------------------------------------------

/** The chunk fields copied into chunks the gate writes itself. */
const TEMPLATE_KEYS = ["id", "object", "created", "model", "system_fingerprint", "service_tier"] as const;

/** True when any choice carries a tool call or finishes because of one. */
function toolish(choices: unknown[]): boolean {
  const calls = (m: unknown) => isRecord(m) && (m.tool_calls != null || m.function_call != null);
  // (a chunk's `message`, as some servers send, is read by the gate's reader and by some clients)
  return choices.some((c) =>
    isRecord(c) && (calls(c.delta) || calls(c.message) ||
      c.finish_reason === "tool_calls" || c.finish_reason === "function_call")
  );
}

/**
 * OpenAI Chat text deltas carry no position, so text keeps flowing while calls are held; a chunk with both
 * is split. Calls written into the text of every choice are watched for, each choice apart.
 */
class ChatStream implements FrameRouter {
  readonly framing = "sse";
  #template?: Record<string, unknown>;
  /** How many answers the request asked for. */
  readonly #answers: number;
  /** The role of each choice whose role the client has not had, as a held chunk carries it. */
  readonly #roleHeld = new Map<number, unknown>();
  /** The choices whose role the client has had. */
  readonly #rolePassed = new Set<number>();
  /**
   * The calls of each choice whose starts came in chunks `refuse` dropped, by the `index` of their deltas
   * (`function_call` for the legacy one): a client joins the deltas of one index into one call (see
   * `#finishOfDropped`).
   */
  readonly #refusedCalls = new Map<number, Set<string>>();
  /** The choices a call delta was routed for: those hold a call, whatever `refuse` dropped of theirs. */
  readonly #called = new Set<number>();
  /**
   * Whether a chunk was dropped unread: it belongs to no known choice and may have carried calls, so every
   * choice that finishes for tool calls with none is told (see `#finishOfDropped`).
   */
  #unread = false;
  /**
   * Whether a chunk dropped unread named a call's key (`tool_calls`, `function_call`): taken for a call's
   * beside the calls kept (see `tellDropped`); any other may be text.
   */
  #unreadCall = false;
  /**
   * The call starts of refused chunks at a choice no answer has (past `n`, negative, with a fraction), by
   * choice and delta `index`: like an unread chunk's, they belong to no known answer, so every choice that
   * finishes for tool calls with none is told of them (see `#finishOfDropped`).
   */
  readonly #strayCalls = new Set<string>();
  /** The choices that finished (see `tellLate`). */
  readonly #finished = new Set<number>();
  /** Whether a chunk dropped unread named a call's key once every answer had finished (see `tellLate`). */
  #lateCall = false;
  /** How many dropped calls the reasons written told of, over every answer (see `#told`). */
  #toldCalls = 0;
  /**
   * How many calls of no known answer the reasons written told of, at most (counted once in `#toldCalls`):
   * a call past `n` may come after an answer was told, and the next answer reads of more.
   */
  #strayTold = 0;
  /** The answers told of calls dropped (see `toldAnswers`). */
  readonly #toldAnswers = new Set<number>();

  constructor(answers = 1) {
    this.#answers = answers;
  }

  /**
   * The openai SDK files each choice under its `index` (`"1"` as 1); the AI SDK and code that reads
   * `choices[0]` take the chunk's first choice. They agree with each other and with the gate only while
   * each choice a chunk carries is one the request asked for, named by a whole number, once: a chunk with a
   * choice past the request's `n`, an index written as a string, negative or with a fraction (the openai SDK
   * files `-1` where no choice of its answer is, the AI SDK reads it as the answer), or one choice twice is
   * refused (a call split between two such choices would be whole to one client and to no watch of the gate).
   * So is a chunk carrying the rest of a call whose start was refused (see `#continuesDropped`; its `rest`
   * goes on without it).
   */
  refuse(event: Record<string, unknown>): string | undefined {
    const refused = this.#refusal(event);
    if (refused !== undefined) this.#countRefused(event);
    else if (this.#continuesDropped(event)) {
      return "a chunk carries the rest of a tool call whose start was dropped; that rest was dropped too";
    }
    return refused;
  }

  /**
   * See `FrameRouter.rest`: a chunk refused for the rest of a call whose start was dropped, without that
   * rest (its text, finish, other calls and usage go on). A chunk refused for its choices has none.
   */
  rest(event: Record<string, unknown>): Record<string, unknown> | undefined {
    if (this.#refusal(event) !== undefined) return undefined;
    const choices = (event.choices as unknown[]).map((c) => {
      if (!isRecord(c) || !isRecord(c.delta)) return c;
      const delta = { ...c.delta };
      if (this.#continued(c, "function_call", delta.function_call)) delete delta.function_call;
      if (Array.isArray(delta.tool_calls)) {
        delta.tool_calls = delta.tool_calls.filter((t) =>
          !this.#continued(c, `${isRecord(t) ? t.index : ""}`, t)
        );
        if ((delta.tool_calls as unknown[]).length === 0) delete delta.tool_calls;
      }
      return { ...c, delta };
    });
    // (a chunk that carried only that rest says nothing now)
    const says = event.usage != null ||
      choices.some((c) =>
        !isRecord(c) || c.finish_reason != null || c.logprobs != null ||
        (isRecord(c.delta) && Object.keys(c.delta).length > 0)
      );
    return says ? { ...event, choices } : undefined;
  }

  /**
   * Whether a chunk continues a call whose start `refuse` dropped (an entry with no id and no name at an
   * index one of its answer's refused starts had): let through, the rest reached the judge as a call of no
   * name, which rejected the turn, and the model read of that call twice.
   */
  #continuesDropped(event: Record<string, unknown>): boolean {
    if (this.#refusedCalls.size === 0 || !Array.isArray(event.choices)) return false;
    return event.choices.some((c) =>
      isRecord(c) && isRecord(c.delta) &&
      (this.#continued(c, "function_call", c.delta.function_call) ||
        (Array.isArray(c.delta.tool_calls) &&
          c.delta.tool_calls.some((t) => this.#continued(c, `${isRecord(t) ? t.index : ""}`, t))))
    );
  }

  /** Whether `entry` of `choice`, at `key`, is the rest of a call whose start `refuse` dropped. */
  #continued(choice: Record<string, unknown>, key: string, entry: unknown): boolean {
    if (!isRecord(entry) || entry.id != null || (isRecord(entry.function) && entry.function.name != null)) {
      return false;
    }
    if (key === "function_call" && entry.name != null) return false;
    const answer = this.#answers === 1 ? 0 : choiceIndex(choice);
    return this.#refusedCalls.get(answer)?.has(key) === true;
  }

  /**
   * Notes the call starts (a delta with an id or a name) of each choice of a refused chunk, filed under
   * the answer a whole-number index names (a string `"1"` too, as the openai SDK reads it), or under the
   * only answer where the request asked for one (what index a chunk names, its calls were that turn's): no
   * client holds those calls (see `#finishOfDropped`). Those of a choice no answer has go in
   * `#strayCalls`.
   */
  #countRefused(event: Record<string, unknown>): void {
    for (const c of event.choices as unknown[]) {
      if (!isRecord(c) || !isRecord(c.delta)) continue;
      const index = this.#answers === 1 ? 0 : typeof c.index === "string" ? Number(c.index) : choiceIndex(c);
      const { tool_calls: calls, function_call: legacy } = c.delta;
      const starts = (Array.isArray(calls) ? calls : [])
        .filter((t) => isRecord(t) && (t.id != null || (isRecord(t.function) && t.function.name != null)))
        .map((t) => `${(t as Record<string, unknown>).index}`);
      if (isRecord(legacy) && legacy.name != null) starts.push("function_call");
      if (starts.length === 0) continue;
      if (!Number.isInteger(index) || index < 0 || index >= this.#answers) {
        for (const key of starts) this.#strayCalls.add(`${c.index}/${key}`);
        continue;
      }
      const known = this.#refusedCalls.get(index) ?? new Set<string>();
      for (const key of starts) known.add(key);
      this.#refusedCalls.set(index, known);
    }
  }

  /** Why `refuse` drops `event`, or undefined. */
  #refusal(event: Record<string, unknown>): string | undefined {
    if (!Array.isArray(event.choices)) return undefined;
    const seen = new Set<number>();
    for (const c of event.choices) {
      if (!isRecord(c)) continue;
      if (typeof c.index === "string") {
        return `a choice at index ${
          JSON.stringify(c.index)
        } (a string, which clients read two ways); the chunk was dropped`;
      }
      const index = choiceIndex(c);
      if (!Number.isInteger(index) || index < 0) {
        return `a choice at index ${index} (no whole number from 0 up, which clients read two ways); ` +
          "the chunk was dropped";
      }
      if (index >= this.#answers) {
        const asked = `the request asked for ${this.#answers} ${plural(this.#answers, "answer")}`;
        return `a choice at index ${index}, where ${asked}; the chunk was dropped`;
      }
      if (seen.has(index)) return `choice ${index} twice in one chunk; the chunk was dropped`;
      seen.add(index);
    }
    return undefined;
  }

  readonly text: TextFrames = {
    read: (event, answer) => chatText(event, answer),
    // With the role where the client may not have it: the chunk that carried it can be one held with a
    // written call and dropped with it (the openai SDK throws on a choice without a role, and hands out no
    // text before it). The watch sends frames the router does not see, so a role may come twice: harmless.
    textFrame: (text, answer) =>
      formatSse(JSON.stringify({
        ...(this.#template ?? { object: "chat.completion.chunk" }),
        choices: [{
          index: answer,
          delta: this.#rolePassed.has(answer) ? { content: text } : { role: "assistant", content: text },
          finish_reason: null,
        }],
      })),
    scored: (event, answer) =>
      Array.isArray(event.choices) &&
      event.choices.some((c) => isRecord(c) && choiceIndex(c) === answer && c.logprobs != null),
    frame: (event, from) => reframe(event, from),
    // (an annotation of text the gate cut would cite its reason, see `citingWithin`)
    retell: (event, _changes, { answer, kept, ahead }) =>
      eachCited(
        event,
        (annotations, at) =>
          at === answer ? citingWithin(annotations, ahead.chars + kept.chars) : annotations,
      ),
    // (a retry's annotations name its own text: the client's has the earlier attempts' ahead of it)
    cite: (event, ahead) => eachCited(event, (annotations, at) => allCitedOn(annotations, ahead(at).chars)),
    answers: (event) =>
      Array.isArray(event.choices) ? [...new Set(event.choices.filter(isRecord).map(choiceIndex))] : [],
    // One chunk per choice, the fields beside `choices` (usage) on the last.
    answerFrame(event, answer, piece) {
      const { choices, ...rest } = event;
      const own = Array.isArray(choices)
        ? choices.filter((c) => isRecord(c) && choiceIndex(c) === answer)
        : [];
      return { ...(piece.last ? rest : pick(event, TEMPLATE_KEYS)), choices: own };
    },
  };

  note(event: Record<string, unknown>): void {
    this.#template ??= pick(event, TEMPLATE_KEYS);
    for (const c of Array.isArray(event.choices) ? event.choices : []) {
      if (isRecord(c) && c.finish_reason != null) this.#finished.add(choiceIndex(c));
    }
  }

  /**
   * The text and finish of the answers but the first among the chunks a retry drops (it continues the
   * first answer alone): held behind the call, another answer's finish was dropped with it, and the openai
   * SDK throws on a choice that never finished. An answer that lost its calls ends in a normal stop.
   */
  endsDropped(dropped: readonly Held[]): string {
    let out = "";
    for (const h of dropped) {
      const choices = h.event && Array.isArray(h.event.choices) ? h.event.choices : [];
      const others = choices.flatMap((c) => {
        if (!isRecord(c) || choiceIndex(c) === 0) return [];
        const delta = isRecord(c.delta) ? withoutKeys(c.delta, ["tool_calls", "function_call"]) : {};
        const finish = c.finish_reason === "tool_calls" ? "stop" : c.finish_reason ?? null;
        return carriesText(delta) || finish !== null ? [{ ...c, delta, finish_reason: finish }] : [];
      });
      if (others.length > 0) {
        out += formatSse(
          JSON.stringify({ ...(this.#template ?? { object: "chat.completion.chunk" }), choices: others }),
        );
      }
    }
    return out;
  }

  /** A retry's chunks carry no position: they follow as they come. */
  resume(raw: string, event: Record<string, unknown>): { raw: string; event: Record<string, unknown> } {
    return { raw, event };
  }

  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void {
    // (first: a choice whose call comes in the chunk that finishes it holds a call; noted after, it read that
    // its calls were dropped and finished stop, its call going out all the same)
    for (const c of Array.isArray(event.choices) ? event.choices : []) {
      if (isRecord(c) && isRecord(c.delta) && (c.delta.tool_calls != null || c.delta.function_call != null)) {
        this.#called.add(choiceIndex(c));
      }
    }
    const ended = this.#finishOfDropped(event, flow);
    if (ended) ({ raw, event } = { raw: formatSse(JSON.stringify(ended)), event: ended });
    const choices = Array.isArray(event.choices) ? event.choices : [];
    const hasText = choices.some((c) => isRecord(c) && isRecord(c.delta) && speaks(c.delta));
    if (!toolish(choices)) {
      // Pending: text still flows (OpenAI text deltas carry no position), and a chunk that says nothing but,
      // at most, the choices' role (held, it came after their text, and the openai SDK read its `content: ""`
      // as one more content delta, out of its place); anything else waits.
      const finishing = choices.some((c) => isRecord(c) && c.finish_reason != null);
      if (!flow.pending || (hasText && !finishing) || saysNothing(event, choices)) {
        this.#send(raw, choices, flow);
      } else this.#hold({ raw, event, tool: false }, choices, flow);
      return;
    }
    flow.pending = true;
    if (!hasText) return this.#hold({ raw, event, tool: true }, choices, flow);
    // Split: the text part goes now, the tool part waits.
    const { text, other } = splitChunk(event, choices);
    this.#send(formatSse(JSON.stringify(text)), text.choices as unknown[], flow);
    this.#hold(
      { raw: formatSse(JSON.stringify(other)), event: other, tool: true },
      other.choices as unknown[],
      flow,
    );
  }

  /**
   * Where a choice whose only calls came in chunks `refuse` dropped finishes for tool calls: sends the
   * reason as its text (text flows, as the reason for rejected calls reads) and returns the chunk with that
   * choice finished `stop`; undefined when no choice is such. Left as it came, the client read a finish for
   * tool calls with no call to run and nothing said, and the model was never told. Each answer reads of
   * its own calls and of calls that came at no answer's choice (or in a chunk not read, one naming a call's
   * key, or any where it has none of its own), counted as `#told` counts them; the others are left as they
   * were.
   */
  #finishOfDropped(event: Record<string, unknown>, flow: StreamFlow): Record<string, unknown> | undefined {
    const unplaced = this.#unread || this.#strayCalls.size > 0;
    if ((this.#refusedCalls.size === 0 && !unplaced) || !Array.isArray(event.choices)) return undefined;
    const ending = (c: unknown): c is Record<string, unknown> =>
      isRecord(c) && (c.finish_reason === "tool_calls" || c.finish_reason === "function_call") &&
      (unplaced || this.#refusedCalls.has(choiceIndex(c))) && !this.#called.has(choiceIndex(c));
    const ends = event.choices.filter(ending);
    if (ends.length === 0) return undefined;
    const base = this.#template ?? { object: "chat.completion.chunk" };
    // (the words a finishing choice brings go first: sent after the reason, they ran on from it, "Let me
    // <reason>check.")
    const words = ends.flatMap((c) =>
      isRecord(c.delta) && speaks(c.delta)
        ? [{ ...c, delta: withoutKeys(c.delta, ["tool_calls", "function_call"]), finish_reason: null }]
        : []
    );
    if (words.length > 0) this.#send(formatSse(JSON.stringify({ ...base, choices: words })), words, flow);
    const choices = event.choices.map((c) => {
      if (!ending(c)) return c;
      if (!isRecord(c.delta) || !speaks(c.delta)) return { ...c, finish_reason: "stop" };
      return {
        ...c,
        delta: withoutKeys(c.delta, [...TEXT_FIELDS, "role"]),
        logprobs: null,
        finish_reason: "stop",
      };
    });
    const told = ends.map((c) => {
      const index = choiceIndex(c);
      // (a choice with none of its own finished for calls of no known answer: any unread chunk may hold them)
      const count = this.#told(
        index,
        this.#unreadCall || this.#strayCalls.size > 0 || !this.#refusedCalls.has(index),
      );
      const delta = this.#rolePassed.has(index) ? {} : { role: "assistant" };
      return {
        index,
        delta: { ...delta, content: flow.lead(index) + malformedCallsReason(count) },
        logprobs: null,
        finish_reason: null,
      };
    });
    this.#send(formatSse(JSON.stringify({ ...base, choices: told })), told, flow);
    return { ...event, choices };
  }

  /**
   * See `FrameRouter.tellDropped`: each answer that holds a call beside calls `refuse` dropped of its own
   * gets its held text now, then the reason as its text (text carries no position: it goes ahead of the held
   * calls, which keep their finish), so a rejection's reason follows it, and a retry finds it sent. Left
   * out, the kept calls went out with the dropped ones unsaid, and the model never knew that only some of
   * its calls ran. Calls of no known answer (a chunk not read that names a call's key, a choice past `n`)
   * are told by every answer that holds a call, as by every answer that lost every call
   * (`#finishOfDropped`): any of them may have made them; counted once.
   */
  tellDropped(flow: StreamFlow, answers: ReadonlySet<number>, { written = false } = {}): void {
    const unplaced = this.#unreadCall || this.#strayCalls.size > 0;
    // (`#called` and `answers`: a call the text watch held was never routed, yet is held)
    // (an answer told already, of native calls held beside written ones, is not told twice)
    const telling = [...new Set([...this.#called, ...answers])]
      .filter((index) => (unplaced || this.#refusedCalls.has(index)) && !this.#toldAnswers.has(index))
      .sort((a, b) => a - b);
    if (telling.length === 0) return;
    // (a written call's text, held, is not sent before it is judged: the words wait after it)
    if (!written) this.sendHeldText(new Set(telling), flow);
    const choices = telling.map((index) => {
      const reason = malformedCallsReason(this.#told(index, unplaced));
      const ahead = written ? heldText(flow, (e) => chatText(e, index).text) : "";
      return { index, reason, delta: { content: flow.lead(index, ahead) + reason } };
    });
    const base = this.#template ?? { object: "chat.completion.chunk" };
    if (!written) {
      const told = choices.map(({ index, delta }) => ({ index, delta, logprobs: null, finish_reason: null }));
      return this.#send(formatSse(JSON.stringify({ ...base, choices: told })), told, flow);
    }
    for (const { index, reason, delta } of choices) {
      const event = { ...base, choices: [{ index, delta, logprobs: null, finish_reason: null }] };
      const at = flow.held.findLastIndex((h) =>
        h.event !== undefined && chatText(h.event, index).text !== ""
      );
      // (the last words held may come with the answer's finish: apart from it, so the reason goes before it)
      const apart = at < 0 ? undefined : finishApart(flow.held[at], index);
      if (apart) flow.setHeld([...flow.held.slice(0, at), ...apart, ...flow.held.slice(at + 1)]);
      // (an answer of a written call alone holds no call: its finish for tool calls says `stop`, as
      // `#finishOfDropped`'s)
      this.endsWritten(flow, new Set([index]));
      flow.holdAt(at + 1, [{
        raw: formatSse(JSON.stringify(event)),
        event,
        tool: false,
        told: { reason, answer: index },
      }]);
    }
  }

  /** See `FrameRouter.endsWritten`: each answer's held finish for tool calls made `stop`. */
  endsWritten(flow: StreamFlow, answers: ReadonlySet<number>): void {
    for (const index of answers) {
      if (!this.#called.has(index)) flow.setHeld(flow.held.map((h) => stopsFor(h, index)));
    }
  }

  /**
   * How many dropped calls answer `index` is told of, now that it is: its own, and with `stray` the calls of
   * no known answer (at a choice past `n`, or in a chunk not read, whose calls are not known: at least one),
   * which every answer told may have made, counted once in `#toldCalls` however many read of them (one call
   * read as two where two answers finished for tool calls), as many as the most any answer read of (a call
   * past `n` may come after an answer was told: the next reads of more), and told beside an answer's own
   * (where each answer told had lost calls of its own, they went unsaid).
   */
  #told(index: number, stray: boolean): number {
    const own = this.#refusedCalls.get(index)?.size ?? 0;
    this.#refusedCalls.delete(index);
    const strays = stray ? Math.max(this.#strayCalls.size, 1) : 0;
    this.#toldCalls += own + Math.max(strays - this.#strayTold, 0);
    this.#strayTold = Math.max(this.#strayTold, strays);
    this.#toldAnswers.add(index);
    return own + strays;
  }

  /** See `FrameRouter.unread`. */
  unread(data: string, afterEnd = false): void {
    this.#unread = true;
    if (!namesKey(data, "tool_calls") && !namesKey(data, "function_call")) return;
    this.#unreadCall = true;
    // (after `data: [DONE]` too where a choice never finished: no finish follows to tell it at, and the
    // client read that choice's words as they were, with no call, where the model never heard of it)
    if (afterEnd || this.#finished.size >= this.#answers) this.#lateCall = true;
  }

  /**
   * See `FrameRouter.tellLate`: where a chunk dropped unread named a call's key once every answer had
   * finished (after `data: [DONE]`, where the openai SDK stops reading, see `GateStream`), each answer that
   * holds no call and was not told reads the reason before the end, as beside its calls (see `tellDropped`).
   * Left, the call went unsaid, where one before a finish for tool calls is told. (One before a plain
   * finish is not: it is taken for the calls of the answers that finish for tool calls.)
   */
  tellLate(flow: StreamFlow): void {
    if (!this.#lateCall) return;
    const untold = Array.from({ length: this.#answers }, (_, i) => i).filter((i) => !this.#called.has(i));
    this.tellDropped(flow, new Set(untold));
  }

  /** See `FrameRouter.toldAnswers`. */
  toldAnswers(): ReadonlySet<number> {
    return this.#toldAnswers;
  }

  /** See `FrameRouter.ownReason`: the reasons written, counted over every answer (see `#told`). */
  ownReason(): string | undefined {
    return this.#toldCalls > 0 ? malformedCallsReason(this.#toldCalls) : undefined;
  }

  /**
   * Sends a chunk, after the role of each of its choices whose role came in a chunk still held (a call's
   * first chunk): the openai SDK hands out a choice's text (`content.delta`, `refusal.delta`) only once its
   * snapshot has the role, and the held chunk comes after the text. Only the role goes ahead, in a chunk of
   * its own: the chunks of a stream that sends no text after a held role go out as they came. A choice whose
   * content says something is noted in `flow` (its reason then starts on a new paragraph, as a body joins
   * them; a choice that said nothing, or only reasoned, gets the reason alone).
   */
  #send(raw: string, choices: readonly unknown[], flow: StreamFlow): void {
    const ahead: Record<string, unknown>[] = [];
    for (const c of choices) {
      if (!isRecord(c)) continue;
      const index = choiceIndex(c);
      if (isRecord(c.delta)) flow.sawText(contentText(c.delta) ?? "", index);
      if (isRecord(c.delta) && c.delta.role != null) this.#rolePassed.add(index);
      else if (this.#roleHeld.has(index) && !this.#rolePassed.has(index)) {
        ahead.push({
          index,
          delta: { role: this.#roleHeld.get(index) },
          logprobs: null,
          finish_reason: null,
        });
        this.#rolePassed.add(index);
      }
      this.#roleHeld.delete(index);
    }
    if (ahead.length > 0) {
      const base = this.#template ?? { object: "chat.completion.chunk" };
      flow.send(formatSse(JSON.stringify({ ...base, choices: ahead })));
    }
    flow.send(raw);
  }

  /** Holds a chunk, noting the role of each choice whose role has not reached the client yet. */
  #hold(frame: Held, choices: readonly unknown[], flow: StreamFlow): void {
    for (const c of choices) {
      if (!isRecord(c) || !isRecord(c.delta) || c.delta.role == null) continue;
      const index = choiceIndex(c);
      if (!this.#rolePassed.has(index) && !this.#roleHeld.has(index)) this.#roleHeld.set(index, c.delta.role);
    }
    flow.hold(frame);
  }

  /**
   * The text (content, reasoning, a refusal) of the held chunks of the `answers` goes now, in order, each
   * piece after its choice's role where a held call chunk carried it (see `#send`); what else such a chunk
   * carries (a call part, the finish) stays held. Text the watch held as a possible written call beside the
   * calls is the answer's text: a body puts it before the reason (it came after the reason), and a retry's
   * turn sends it back (it was dropped). A chunk whose text cannot go alone (one with usage, or a choice of
   * another answer) stops its answers' text there, as a finish does: text after it going first would come
   * out of order.
   */
  sendHeldText(answers: ReadonlySet<number>, flow: StreamFlow): void {
    const rest: Held[] = [];
    const stopped = new Set<number>(); // (per answer: another's finish does not end this one's text)
    for (const h of flow.held) {
      const choices = h.event && Array.isArray(h.event.choices) ? h.event.choices : [];
      const ours = choices.filter((c): c is Record<string, unknown> =>
        isRecord(c) && answers.has(choiceIndex(c))
      );
      const speaking = ours.some((c) => isRecord(c.delta) && speaks(c.delta));
      const alone = h.event?.usage == null && ours.length === choices.length &&
        ours.every((c) => isRecord(c.delta) && !stopped.has(choiceIndex(c)));
      if (!h.event || !speaking || !alone) {
        for (const c of ours) if (speaking || c.finish_reason != null) stopped.add(choiceIndex(c));
        rest.push(h);
        continue;
      }
      for (const c of ours) if (c.finish_reason != null) stopped.add(choiceIndex(c));
      if (!toolish(choices) && ours.every((c) => c.finish_reason == null)) {
        this.#send(h.raw, choices, flow);
        continue;
      }
      const { text, other } = splitChunk(h.event, choices);
      this.#send(formatSse(JSON.stringify(text)), text.choices as unknown[], flow);
      const left = (other.choices as Record<string, unknown>[]).some((c) =>
        c.finish_reason != null || carriesText(c.delta as Record<string, unknown>)
      );
      if (left) rest.push({ ...h, raw: formatSse(JSON.stringify(other)), event: other });
    }
    flow.setHeld(rest);
  }

  /**
   * The held text of the choices whose calls were rejected (`sendHeldText`), then the reason as text for
   * them, as a body joins them (not for a choice in `told`, which read it where its withheld text was), then
   * every other held chunk without its call parts: a chunk that carried a call and anything else (usage,
   * `x_groq`, the finish) keeps the rest, with `finish_reason: "stop"`; a chunk that carried nothing but the
   * call is dropped; the others go out as they came.
   */
  replace(
    reason: AnswerReason,
    calls: readonly AssembledToolCall[],
    flow: StreamFlow,
    told?: ReadonlySet<number>,
  ): void {
    const base = {
      ...(this.#template ?? { id: "chatcmpl-toolguard", object: "chat.completion.chunk", model: "" }),
    };
    base.created ??= Math.floor(Date.now() / 1000);
    const replaced = [...new Set(calls.map((c) => c.choice))];
    this.sendHeldText(new Set(replaced), flow);
    const telling = replaced.filter((index) => !told?.has(index));
    if (telling.length > 0) flow.send(reasonChunk(base, telling, reason, flow));
    const finished = new Set<number>();
    const out: string[] = [];
    for (const h of flow.held) {
      if (!h.event) continue;
      const chunk = withoutCalls(h.event, { replaced, finished, tool: h.tool });
      if (chunk === h.event) out.push(h.raw);
      else if (chunk) out.push(formatSse(JSON.stringify(chunk)));
    }
    const unfinished = replaced.filter((index) => !finished.has(index));
    if (unfinished.length > 0) {
      flow.send(formatSse(JSON.stringify({
        ...base,
        choices: unfinished.map((index) => ({ index, delta: {}, finish_reason: "stop" })),
      })));
    }
    for (const raw of out) flow.send(raw);
  }

  /**
   * The held text of the choices that lose a call (`sendHeldText`), the reason as text, then the other held
   * chunks without the dropped calls' deltas (the kept ones renumbered).
   */
  dropCalls(reason: AnswerReason, split: SplitCalls, flow: StreamFlow): void {
    const base = { ...(this.#template ?? { id: "chatcmpl-toolguard", object: "chat.completion.chunk" }) };
    const hit = [...new Set(split.dropped.map((c) => c.choice))];
    this.sendHeldText(new Set(hit), flow);
    flow.send(reasonChunk(base, hit, reason, flow));
    const kept = new KeptDeltas(split);
    for (const h of flow.held) {
      if (!h.event) continue;
      const chunk = keptChunk(h.event, kept);
      if (chunk === h.event) flow.send(h.raw);
      else if (chunk) flow.send(formatSse(JSON.stringify(chunk)));
    }
  }
}

/**
 * The chunk, on `base`'s fields, that gives each of `answers` its reason as text in place of its calls (or
 * of those dropped), after its lead (see `StreamFlow.lead`).
 */
function reasonChunk(
  base: Record<string, unknown>,
  answers: readonly number[],
  reason: AnswerReason,
  flow: StreamFlow,
): string {
  return formatSse(JSON.stringify({
    ...base,
    choices: answers.map((index) => ({
      index,
      delta: { role: "assistant", content: flow.lead(index) + reason(index) },
      finish_reason: null,
    })),
  }));
}

/**
 * Which `tool_calls` deltas of a stream stay when some of its calls are dropped, and the contiguous
 * indices the kept ones get (a client assembles calls by index, so a gap would leave a hole).
 */
class KeptDeltas {
  /** The dropped calls by `choice:slot` and by id, and the choices that keep a call: sets, looked up per delta. */
  readonly #droppedSlots: ReadonlySet<string>;
  readonly #droppedIds: ReadonlySet<string>;
  readonly #keeping: ReadonlySet<number>;
  readonly #newIndex = new Map<string, number>();
  readonly #count = new Map<number, number>();
  /** Per choice, whether the last delta was kept (a delta without index or id continues the last call). */
  readonly #last = new Map<number, boolean>();

  constructor(split: SplitCalls) {
    // (searching the dropped calls for each delta was quadratic in the calls of a long stream)
    this.#droppedSlots = new Set(split.dropped.map((c) => `${c.choice}:${c.slot}`));
    this.#droppedIds = new Set(split.dropped.map((c) => c.id));
    this.#keeping = new Set(split.kept.map((c) => c.choice));
  }

  /** The delta to send (renumbered), or undefined when it belongs to a dropped call. */
  take(choice: number, td: unknown): unknown {
    if (!isRecord(td)) return td;
    // (by the index as the reader and the SDK read it: "0" is call 0, renumbered as a number)
    const slot = arrayIndex(td.index);
    let drop: boolean;
    if (slot !== undefined) drop = this.#droppedSlots.has(`${choice}:${slot}`);
    else if (typeof td.id === "string" && td.id !== "") drop = this.#droppedIds.has(td.id);
    else drop = !(this.#last.get(choice) ?? true);
    this.#last.set(choice, !drop);
    if (drop) return undefined;
    if (slot === undefined) return td;
    const key = `${choice}:${slot}`;
    if (!this.#newIndex.has(key)) {
      const n = this.#count.get(choice) ?? 0;
      this.#newIndex.set(key, n);
      this.#count.set(choice, n + 1);
    }
    const index = this.#newIndex.get(key)!;
    return index === td.index ? td : { ...td, index };
  }

  /** True when a choice keeps at least one call. */
  keepsCalls(choice: number): boolean {
    return this.#keeping.has(choice);
  }
}

/** A held call chunk with the dropped calls' deltas removed; undefined when nothing is left of it. */
function keptChunk(event: Record<string, unknown>, kept: KeptDeltas): Record<string, unknown> | undefined {
  if (!Array.isArray(event.choices)) return event;
  let changed = false;
  const choices: unknown[] = [];
  for (const c of event.choices) {
    if (!isRecord(c) || !isRecord(c.delta) || !Array.isArray(c.delta.tool_calls)) {
      if (
        isRecord(c) && c.finish_reason != null && !kept.keepsCalls(typeof c.index === "number" ? c.index : 0)
      ) {
        changed = true;
        choices.push({ ...c, finish_reason: "stop" });
      } else choices.push(c);
      continue;
    }
    const index = typeof c.index === "number" ? c.index : 0;
    const before = c.delta.tool_calls;
    const after = before.map((td) => kept.take(index, td)).filter((td) => td !== undefined);
    const same = after.length === before.length && after.every((td, i) => td === before[i]);
    if (same && (c.finish_reason == null || kept.keepsCalls(index))) {
      choices.push(c);
      continue;
    }
    changed = true;
    const delta = after.length > 0 ? { ...c.delta, tool_calls: after } : withoutKeys(c.delta, ["tool_calls"]);
    const choice: Record<string, unknown> = { ...c, delta };
    if (c.finish_reason != null && !kept.keepsCalls(index)) choice.finish_reason = "stop";
    if (after.length > 0 || choice.finish_reason != null || carriesText(delta)) choices.push(choice);
  }
  if (!changed) return event;
  return choices.length > 0 || event.usage != null ? { ...event, choices } : undefined;
}

/**
 * A held chunk without its call parts: the chunk itself when nothing had to change, undefined when nothing
 * is left. The replaced choices' finishes become `"stop"` (noted in `finished`); per-token `logprobs` of a
 * call chunk go with the call.
 */
function withoutCalls(
  event: Record<string, unknown>,
  at: { replaced: readonly number[]; finished: Set<number>; tool: boolean },
): Record<string, unknown> | undefined {
  if (!Array.isArray(event.choices)) return event;
  let changed = false;
  const choices: unknown[] = [];
  for (const c of event.choices) {
    if (!isRecord(c)) {
      choices.push(c);
      continue;
    }
    const index = typeof c.index === "number" ? c.index : 0;
    const ours = at.replaced.includes(index);
    if (!ours && !at.tool) {
      choices.push(c);
      continue;
    }
    const choice: Record<string, unknown> = { ...c };
    if (isRecord(c.delta)) choice.delta = withoutKeys(c.delta, ["tool_calls", "function_call"]);
    if (isRecord(c.message)) choice.message = withoutKeys(c.message, ["tool_calls", "function_call"]);
    if (at.tool && c.logprobs != null) choice.logprobs = null;
    if (ours && c.finish_reason != null) {
      choice.finish_reason = "stop";
      at.finished.add(index);
    }
    changed = true;
    if (choice.finish_reason != null || (isRecord(choice.delta) && carriesText(choice.delta))) {
      choices.push(choice);
    }
  }
  if (!changed) return event;
  const copy = { ...event, choices };
  const extra = Object.keys(event).some((k) =>
    k !== "choices" && !(TEMPLATE_KEYS as readonly string[]).includes(k) && event[k] != null
  );
  return choices.length > 0 || extra ? copy : undefined;
}

/**
 * A chunk in two: its `text` (the deltas without call parts, no finish), to go while the calls are held, and
 * the `other` part (the deltas without text, the finish), to wait with them.
 */
function splitChunk(
  event: Record<string, unknown>,
  choices: readonly unknown[],
): { text: Record<string, unknown>; other: Record<string, unknown> } {
  const part = (drop: readonly string[], set: Record<string, unknown>) => ({
    ...event,
    choices: choices.map((c) =>
      isRecord(c) && isRecord(c.delta) ? { ...c, delta: withoutKeys(c.delta, drop), ...set } : c
    ),
  });
  return {
    text: part(["tool_calls", "function_call"], { finish_reason: null }),
    // (every text field: one left in the held part, reasoning reached the client twice)
    other: part(TEXT_FIELDS, {}),
  };
}

/** True for a chunk whose choices say nothing but, at most, their role (`{"role": "assistant", "content": ""}`). */
function saysNothing(event: Record<string, unknown>, choices: readonly unknown[]): boolean {
  return event.usage == null && choices.length > 0 &&
    choices.every((c) =>
      isRecord(c) && c.finish_reason == null && c.logprobs == null && isRecord(c.delta) &&
      !carriesText(c.delta)
    );
}

/**
 * True when a delta carries text: a text field, or content given as parts (Mistral streams its text and
 * thinking so), which flows as text does (held behind a call, it came after a chunk of `content: ""`).
 */
function speaks(delta: Record<string, unknown>): boolean {
  return textOf(delta) !== "" || (Array.isArray(delta.content) && delta.content.length > 0);
}

/** True when a delta carries something other than its role (text, reasoning, a refusal). */
function carriesText(delta: Record<string, unknown>): boolean {
  return Object.entries(delta).some(([k, v]) => k !== "role" && v != null && v !== "");
}

/** The index of a choice (a choice without one is read as choice 0, as the clients do). */
function choiceIndex(choice: Record<string, unknown>): number {
  return typeof choice.index === "number" ? choice.index : 0;
}

/** The text of one choice in a chunk. */
function chatText(event: Record<string, unknown>, answer: number): TextPart {
  const choices = Array.isArray(event.choices) ? event.choices : [];
  const c0 = choices.find((c) => isRecord(c) && choiceIndex(c) === answer);
  const delta = isRecord(c0) && isRecord(c0.delta) ? c0.delta : undefined;
  // Content given as parts (Mistral's reasoning models stream it so): its text parts are the text.
  const parts = textParts(delta?.content);
  const text = delta && typeof delta.content === "string" ? delta.content : parts.map((p) => p.text).join("");
  // A choice's `message` in a chunk: the openai SDK takes it as the choice's message so far, its content
  // then grown by the deltas, so its text is the answer's too (unread, a call written there passed unjudged).
  const message = isRecord(c0) && isRecord(c0.message) ? c0.message : undefined;
  const said = message ? contentText(message) ?? "" : "";
  const callish = toolish(choices);
  return {
    text: said + text,
    toolish: callish,
    goesOn: !callish && (!isRecord(c0) || c0.finish_reason == null),
    rest() {
      // (a set: searching the text parts for each part was quadratic in a frame of many parts)
      const text = new Set(parts);
      const others = Array.isArray(delta?.content) ? delta.content.filter((p) => !text.has(p)) : [];
      const without = !delta
        ? undefined
        : others.length > 0
        ? { ...delta, content: others }
        : withoutKeys(delta, ["content"]);
      const told = said !== "" ? { message: withoutKeys(message!, ["content"]) } : {};
      const next = choices.map((
        c,
      ) => (c === c0 ? { ...c0, ...(without ? { delta: without } : {}), ...told } : c));
      const rest = { ...event, choices: next };
      return emptyChunk(rest) ? undefined : rest;
    },
  };
}

/** A chunk's choices, none where it has no list. */
const choicesOf = (event: Record<string, unknown> | undefined): unknown[] =>
  Array.isArray(event?.choices) ? event.choices : [];

/** Whether a chunk says nothing: no usage, and no choice with a finish or a delta beyond its role. */
function emptyChunk(event: Record<string, unknown>): boolean {
  return event.usage == null && choicesOf(event).every((c) =>
    isRecord(c) && c.finish_reason == null &&
    (!isRecord(c.delta) || Object.entries(c.delta).every(([k, v]) => k === "role" || v == null))
  );
}

/**
 * A held chunk that finishes answer `index` as two: the chunk without that finish and without its usage
 * (its words, role and logprobs, and its other choices, stay), then the finish alone, with the usage, so a
 * reason held between them goes before the finish: nothing follows an answer's finish. Its `written.rest`
 * (what a rejection leaves of it) loses the finish too, as the finish stays apart. Undefined where the chunk
 * does not finish `index`.
 */
function finishApart(held: Held, index: number): [Held, Held] | undefined {
  const event = held.event;
  const ends = choicesOf(event).find((c) =>
    isRecord(c) && choiceIndex(c) === index && c.finish_reason != null
  );
  if (!event || !isRecord(ends)) return undefined;
  const open = (e: Record<string, unknown>) => ({
    ...withoutKeys(e, ["usage"]),
    choices: choicesOf(e).map((c) =>
      isRecord(c) && choiceIndex(c) === index ? { ...c, finish_reason: null } : c
    ),
  });
  const frame = (e: Record<string, unknown>) => ({ raw: formatSse(JSON.stringify(e)), event: e });
  const rest = held.written?.rest;
  const left = rest?.event && open(rest.event);
  const written = held.written && {
    at: held.written.at,
    // (its words' logprobs, which a rejection keeps, keep it)
    rest: left && emptyChunk(left) && !choicesOf(left).some((c) => isRecord(c) && c.logprobs != null)
      ? undefined
      : left
      ? { ...rest, ...frame(left) }
      : rest,
  };
  const finish = {
    ...pick(event, [...TEMPLATE_KEYS, "usage"]),
    choices: [{ index, delta: {}, logprobs: null, finish_reason: ends.finish_reason }],
  };
  return [{ ...held, ...frame(open(event)), written }, { ...held, ...frame(finish), written: undefined }];
}

/**
 * A held chunk whose choice `index` finishes for tool calls, with that finish made `stop`; any other as it
 * is (a frame of written text too: its `rest` would keep the old finish). A choice with no call that
 * finishes for tool calls sends the SDK user's loop looking for one.
 */
function stopsFor(held: Held, index: number): Held {
  const event = held.event;
  const ends = (c: unknown) =>
    isRecord(c) && choiceIndex(c) === index &&
    (c.finish_reason === "tool_calls" || c.finish_reason === "function_call");
  if (!event || held.written || !choicesOf(event).some(ends)) return held;
  const stopped = {
    ...event,
    choices: choicesOf(event).map((c) =>
      ends(c) ? { ...c as Record<string, unknown>, finish_reason: "stop" } : c
    ),
  };
  return { ...held, raw: formatSse(JSON.stringify(stopped)), event: stopped };
}

/** The text fields of a Chat delta a retry sends back: the answer and, where a server streams it, reasoning. */
const TURN_TEXT = ["content", ...REASONING_FIELDS] as const;

/**
 * Keeps the text of choice 0, its content given as a string or as parts, and the reasoning a server streams
 * beside it, under the name it came in (DeepSeek's thinking mode refuses a follow-up to calls without its
 * `reasoning_content`); the calls come from the assembler.
 */
class ChatTurn implements TurnRecorder {
  readonly #text: Record<string, string> = {};

  read(event: Record<string, unknown>): void {
    const choices = Array.isArray(event.choices) ? event.choices : [];
    const c0 = choices.find((c) => isRecord(c) && (c.index ?? 0) === 0);
    const delta = isRecord(c0) && isRecord(c0.delta) ? c0.delta : undefined;
    if (!delta) return;
    for (const k of TURN_TEXT) {
      // (content may come as parts, as Mistral streams it: their text is the turn's)
      const text = k === "content" ? contentText(delta) : delta[k];
      if (typeof text === "string") this.#text[k] = (this.#text[k] ?? "") + text;
    }
  }

  body(): Record<string, unknown> {
    return { choices: [{ index: 0, message: { role: "assistant", content: null, ...this.#text } }] };
  }
}

/** OpenAI Chat Completions in its three roles. */
export const openaiChat: Dialect = {
  body,
  router: (request) => new ChatStream(request?.answers),
  turn: () => new ChatTurn(),
};
