/**
 * Google Gemini `generateContent` / `streamGenerateContent?alt=sse`: response bodies (`candidates[].content
 * .parts[]` with `functionCall` parts), stream chunks (each call arrives whole in a part), and the gate's
 * routing of those chunks.
 *
 * @module
 */
import { isRecord } from "../../_common/values.ts";
import { utf8Length } from "../../_common/bytes.ts";
import { candidates, candidatesOutOfPlace, parts } from "./readers.ts";
import { formatSse, reframe } from "../sse.ts";
import { cutCalls } from "../engines.ts";
import {
  allCitedOn,
  type AnswerReason,
  citingWithin,
  type CompletionBody,
  type Dialect,
  type FrameRouter,
  type Held,
  malformedCallsReason,
  namesKey,
  pick,
  reasonBlock,
  sharedStart,
  type SplitCalls,
  type StreamFlow,
  type TextFrames,
  type TextPart,
  type TurnRecorder,
  withoutKeys,
} from "./shared.ts";

const isCall = (part: Record<string, unknown>) => isRecord(part.functionCall);

/** Whether a function call part carries arguments in pieces (`partialArgs`, streamFunctionCallArguments). */
const piecesArgs = (call: Record<string, unknown>) =>
  Array.isArray(call.partialArgs) && call.partialArgs.length > 0;

/**
 * Whether a function call part is a call whole in its part: named, with no `partialArgs`, saying no more
 * pieces follow. One after a piece left unfinished is a call of its own, as a client (ADK) reads it.
 */
const wholeCall = (call: Record<string, unknown>) =>
  call.name != null && !piecesArgs(call) && call.willContinue !== true;
/** A text part the model wrote as its answer (thought summaries are reasoning, not answer text). */
const isAnswerText = (part: Record<string, unknown>) =>
  typeof part.text === "string" && part.thought !== true;

/** A candidate whose parts are `keep(parts)`. */
function withParts(
  candidate: Record<string, unknown>,
  keep: (parts: Record<string, unknown>[]) => unknown[],
): Record<string, unknown> {
  const content = isRecord(candidate.content) ? candidate.content : { role: "model" };
  return { ...candidate, content: { ...content, parts: keep(parts(candidate)) } };
}

/**
 * The candidates of a body, each object one through `change`, the others as they came: a client reads a
 * candidate by its position (as the stream gate keeps it), so one that is no object keeps its place.
 */
function eachCandidate(
  body: Record<string, unknown>,
  change: (candidate: Record<string, unknown>, place: number) => unknown,
): unknown[] {
  return Array.isArray(body.candidates) ? body.candidates.map((c, i) => isRecord(c) ? change(c, i) : c) : [];
}

/**
 * `candidate` (whose parts were `was`, now `now` and what follows them) with the grounding supports that
 * still cite its text: a segment names its part (`partIndex`, 0 when absent), moved with it where calls
 * before it went (a kept call stays); one of a part that went, or past the text its part keeps (a written
 * call the gate cut, see `citingKept`; in bytes), goes. The candidate itself when none changes.
 */
function grounded(
  candidate: Record<string, unknown>,
  was: readonly Record<string, unknown>[],
  now: readonly Record<string, unknown>[],
): Record<string, unknown> {
  const meta = candidate.groundingMetadata;
  if (!isRecord(meta) || !Array.isArray(meta.groundingSupports)) return candidate;
  // The index of each part kept, by its index as it came: the parts other than calls keep their order (the
  // reason comes after them), a call goes or stays in its place among them.
  const moved = new Map<number, number>();
  for (let i = 0, j = 0; i < was.length; i++) {
    if (isCall(was[i])) continue;
    while (j < now.length && isCall(now[j])) j++;
    if (j < now.length) moved.set(i, j++);
  }
  let changed = false;
  const supports = meta.groundingSupports.flatMap((s) => {
    if (!isRecord(s) || !isRecord(s.segment)) return [s];
    const at = typeof s.segment.partIndex === "number" ? s.segment.partIndex : 0;
    const to = moved.get(at);
    const texts = [was[at]?.text, to === undefined ? undefined : now[to]?.text];
    // (a segment's offsets are UTF-8 bytes: the text both share is measured in them)
    const kept = to !== undefined &&
      (typeof texts[0] !== "string" || typeof texts[1] !== "string" ||
        (citingWithin([s], utf8Length(texts[0].slice(0, sharedStart(texts[0], texts[1])))) as unknown[])
            .length > 0);
    if (kept && to === at) return [s];
    changed = true;
    if (!kept) return [];
    return [{ ...s, segment: { ...s.segment, partIndex: to } }];
  });
  return changed ? { ...candidate, groundingMetadata: { ...meta, groundingSupports: supports } } : candidate;
}

/**
 * A chunk whose candidates' grounding supports (`groundingMetadata.groundingSupports`) are `told` of them and
 * the candidate's position (its answer); the chunk itself when none changes.
 */
function eachGrounded(
  event: Record<string, unknown>,
  told: (supports: unknown[], answer: number) => unknown,
): Record<string, unknown> {
  if (!Array.isArray(event.candidates)) return event;
  let changed = false;
  const all = event.candidates.map((c, answer) => {
    const meta = isRecord(c) ? c.groundingMetadata : undefined;
    if (!isRecord(meta) || !Array.isArray(meta.groundingSupports)) return c;
    const groundingSupports = told(meta.groundingSupports, answer);
    if (groundingSupports === meta.groundingSupports) return c;
    changed = true;
    return { ...c as object, groundingMetadata: { ...meta, groundingSupports } };
  });
  return changed ? { ...event, candidates: all } : event;
}

const body: CompletionBody = {
  // A Gemini `Tool` lists its functions in `functionDeclarations`; `googleSearch`, `codeExecution` and the
  // like are run by Google.
  declared: (tool) =>
    Array.isArray(tool.functionDeclarations) || Array.isArray(tool.function_declarations) ? [tool] : [],
  calls(body) {
    return candidates(body).flatMap((c) => parts(c).filter(isCall));
  },
  texts(body) {
    return candidates(body).flatMap((c) => parts(c).filter(isAnswerText).map((p) => p.text as string));
  },
  // A candidate's text parts are read joined, as the stream's watch reads them: a call written across two
  // parts is judged (and cut from both).
  looseTexts(body) {
    return candidates(body).flatMap((c) => {
      const ps = parts(c);
      return ps.some(isCall) ? [] : [ps.filter(isAnswerText).map((p) => p.text as string)];
    });
  },
  answers(body) {
    const out = { calls: [] as number[], texts: [] as number[] };
    const all = Array.isArray(body.candidates) ? body.candidates : [];
    for (const [at, c] of all.entries()) {
      if (!isRecord(c)) continue;
      const calls = parts(c).filter(isCall).length;
      for (let i = 0; i < calls; i++) out.calls.push(at);
      if (calls === 0) out.texts.push(at);
    }
    return out;
  },
  rewrite(body, answerReason, { fromText, cut = cutCalls }) {
    return {
      ...body,
      candidates: eachCandidate(body, (c, at) => {
        const ps = parts(c);
        // Only the text read for calls is cut (see `looseTexts`): the text beside a candidate's native calls
        // goes as it came, as in a stream, and as in a body of one candidate. (Every candidate's text is cut,
        // in order: the cut knows each text by its place.)
        const read = fromText && !ps.some(isCall);
        const kept = ps.filter((p) => !isCall(p)).map((p) =>
          read && isAnswerText(p) ? { ...p, text: cut(p.text as string) } : p
        );
        // Only a candidate that lost calls (native ones, or text the cut took calls from) says why, as in a
        // stream and as Chat's choices: one that only spoke got the reason too, where its stream went on
        // without it.
        if (read ? kept.every((p, i) => p.text === ps[i].text) : kept.length === ps.length) return c;
        // A client joins the parts as they come: the reason follows the answer's text after a blank line,
        // as in a stream, not glued to it.
        // (the text stays as it came, its white space too: a stream sent it, see `joinText`)
        const told = withParts(
          c,
          () => [...kept, { text: reasonBlock([answerText(kept)], answerReason(at)) }],
        );
        return grounded(told, ps, kept);
      }),
    };
  },
  // The reason stands in each candidate that lost a call (as OpenAI Chat's choices): in the first that had
  // calls, it told a candidate that lost none, and left the one that did without a word.
  dropCalls(body, drop, answerReason) {
    let position = 0; // (the calls of every candidate, in order, as `drop` counts them)
    return {
      ...body,
      candidates: eachCandidate(body, (c, place) => {
        const ps = parts(c);
        // A dropped call's signature moves to the candidate's next kept call, as in a stream.
        const keep: { position: number; signature: unknown } = { position, signature: undefined };
        const kept = keptParts(ps, drop, keep);
        position = keep.position;
        if (kept.length === ps.length) return withParts(c, () => kept);
        // After the candidate's text, set apart from it by a blank line, as a stream has it (its text flows
        // while the calls wait, the reason comes before the kept calls) and as a withheld body puts it: a
        // part ahead of the text read "reason, then text" where the stream read "text, then reason".
        const at = kept.findLastIndex((p) => !isCall(p)) + 1;
        kept.splice(at, 0, { text: reasonBlock([answerText(kept.slice(0, at))], answerReason(place)) });
        // (a grounding support names its part by index: one after a dropped call moves up with it)
        return grounded(withParts(c, () => kept), ps, kept);
      }),
    };
  },
};

/** True when a chunk carries a call part. */
const hasCall = (event: Record<string, unknown>) => candidates(event).some((c) => parts(c).some(isCall));
/** A part that is not only empty text (a finish comes with one). */
const saysSomething = (part: Record<string, unknown>) =>
  part.text !== "" || Object.keys(part).some((k) => k !== "text");
/** True when a chunk carries answer or thought text. */
const hasText = (event: Record<string, unknown>) =>
  candidates(event).some((c) => parts(c).some((p) => typeof p.text === "string" && p.text !== ""));

/**
 * Notes in `flow` the answer text of each candidate of a chunk the client gets, by position (as its calls
 * and text are read): its reason then starts on a new paragraph after words, as a body sets it apart
 * (`reasonBlock`); a candidate that said nothing, only thought, or only blanks, gets the reason alone.
 */
function spoke(event: Record<string, unknown>, flow: StreamFlow): void {
  const all = Array.isArray(event.candidates) ? event.candidates : [];
  all.forEach((c, i) => {
    if (isRecord(c)) flow.sawText(answerText(parts(c)), i);
  });
}

/**
 * A chunk parted in two: its text (its parts but calls, without finish and usage) and the rest (its calls,
 * finish and usage). Each piece keeps every candidate at its place, one that is no object too: the calls
 * were read by place, and a client reads by place; left out, a `null` ahead moved candidate 1's words to
 * place 0, and drop-call, dropping by place, let candidate 1's rejected call through there.
 */
function parted(
  event: Record<string, unknown>,
): { text: Record<string, unknown>; held: Record<string, unknown> } {
  const { usageMetadata: _usage, ...rest } = event;
  const text = {
    ...rest,
    candidates: eachCandidate(event, (c) => {
      const { finishReason: _finish, ...open } = c;
      return withParts(open, (ps) => ps.filter((p) => !isCall(p)));
    }),
  };
  const held = { ...event, candidates: eachCandidate(event, (c) => withParts(c, (ps) => ps.filter(isCall))) };
  return { text, held };
}

/** The answer text of parts, joined (thoughts and calls left out). */
const answerText = (ps: readonly Record<string, unknown>[]): string =>
  ps.filter(isAnswerText).map((p) => p.text as string).join("");

/**
 * The parts of a held chunk's candidate without the dropped calls (`gone`, by their place among the calls
 * of that candidate, counted in `keep.position`). A dropped call's `thoughtSignature` waits in
 * `keep.signature` for the candidate's next kept call.
 */
function keptParts(
  ps: Record<string, unknown>[],
  gone: ReadonlySet<number>,
  keep: { position: number; signature: unknown },
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const p of ps) {
    if (!isCall(p)) {
      out.push(p);
    } else if (gone.has(keep.position++)) {
      keep.signature ??= p.thoughtSignature;
    } else if (keep.signature !== undefined && p.thoughtSignature === undefined) {
      out.push({ ...p, thoughtSignature: keep.signature });
      keep.signature = undefined;
    } else {
      out.push(p);
      if (p.thoughtSignature !== undefined) keep.signature = undefined;
    }
  }
  return out;
}

/**
 * The answer text of the candidate at `position` in a chunk (what a model writes calls into). By position,
 * not by `index`: the clients read each chunk's first candidate as the answer (the genai SDK's `text`, the
 * AI SDK), whatever index it names.
 */
function geminiText(event: Record<string, unknown>, position: number): TextPart {
  const all = Array.isArray(event.candidates) ? event.candidates : [];
  const c = isRecord(all[position]) ? all[position] as Record<string, unknown> : undefined;
  const ps = c ? parts(c) : [];
  return {
    text: ps.filter(isAnswerText).map((p) => p.text as string).join(""),
    toolish: hasCall(event),
    // (a chunk of no text, a thought, or none of this candidate: its text may go on, as a body joins it; a
    // tail that may become a marker let out there went to the client, and the rest of the call was cut)
    goesOn: !ps.some(isCall) && c?.finishReason == null,
    rest() {
      const next = {
        ...event,
        candidates: all.map((x, i) => i === position && c ? withParts(c, () => ps.flatMap(restOf)) : x),
      };
      const empty = event.usageMetadata == null &&
        candidates(next).every((x) => parts(x).length === 0 && x.finishReason == null);
      return empty ? undefined : next;
    },
  };
}

/**
 * What is left of a held part once its answer text is cut: nothing of a part that is only text, a part
 * that carries more (a `thoughtSignature`) without its text, as a body keeps it (Gemini refuses a follow-up
 * that lost a signature).
 */
const restOf = (part: Record<string, unknown>): Record<string, unknown>[] =>
  !isAnswerText(part) ? [part] : Object.keys(part).some((k) => k !== "text") ? [{ ...part, text: "" }] : [];

/**
 * A held chunk that finishes the candidate at `position` as two: the chunk without that finish
 * (`finishReason`, `finishMessage`) and without its usage (its words, ratings and citations, and its other
 * candidates, stay), then the finish alone, with the usage, so a reason held between them goes before the
 * finish: nothing follows a candidate's finish. Its `written.rest` (what a rejection leaves of it) loses the
 * finish too, as the finish stays apart. Undefined where the chunk does not finish that candidate.
 */
function finishApart(held: Held, position: number): [Held, Held] | undefined {
  const event = held.event;
  const c = Array.isArray(event?.candidates) ? event.candidates[position] : undefined;
  if (!event || !isRecord(c) || c.finishReason == null) return undefined;
  const open = (e: Record<string, unknown>) => ({
    ...withoutKeys(e, ["usageMetadata"]),
    candidates: (Array.isArray(e.candidates) ? e.candidates : []).map((x, i) =>
      i === position && isRecord(x) ? withoutKeys(x, ["finishReason", "finishMessage"]) : x
    ),
  });
  const frame = (e: Record<string, unknown>) => ({ raw: formatSse(JSON.stringify(e)), event: e });
  const rest = held.written?.rest;
  const left = rest?.event && open(rest.event);
  // (its words' ratings, citations or logprobs, which a rejection keeps, keep it)
  const empty = left &&
    candidates(left).every((x) =>
      parts(x).length === 0 && Object.keys(x).every((k) => k === "content" || k === "index")
    );
  const written = held.written && {
    at: held.written.at,
    rest: left ? (empty ? undefined : { ...rest, ...frame(left) }) : rest,
  };
  const ends = {
    ...pick(c, ["index", "finishReason", "finishMessage"]),
    content: { role: "model", parts: [] },
  };
  const finish = {
    candidates: atPosition(ends, position),
    ...pick(event, ["usageMetadata", "modelVersion", "responseId"]),
  };
  return [{ ...held, ...frame(open(event)), written }, { ...held, ...frame(finish), written: undefined }];
}

/** `candidate` at `position` of a chunk's candidates: empty ones before it, so a client reads it there. */
const atPosition = (candidate: unknown, position: number): unknown[] => [
  ...Array.from({ length: position }, () => ({})),
  candidate,
];

/**
 * Gemini chunks carry no position, so text keeps flowing while calls are held; a chunk with both is split
 * (its usage and finish stay with the held part). A rejected call gives way to the reason, in the chunk
 * that carried it, so the chunk's usage and finish reach the client. Calls written into the text of every
 * candidate are watched for, each position apart (a model without native calls, Gemma, writes them).
 */
class GeminiStream implements FrameRouter {
  readonly framing = "sse";
  #template?: Record<string, unknown>;
  /** How many candidates the request asked for. */
  readonly #answers: number;
  /** The call parts of each candidate (by position) that came in chunks `refuse` dropped. */
  readonly #refusedCalls = new Map<number, number>();
  /** The candidates (by position) whose last call part dropped said `willContinue`: more pieces follow. */
  readonly #continues = new Set<number>();
  /** The candidates (by position) of which a call part was routed: a client holds a call of theirs. */
  readonly #called = new Set<number>();
  /** How many dropped calls the reasons `#tellDropped` wrote told of, over every candidate. */
  #toldCalls = 0;
  /**
   * Whether a chunk dropped unread named `functionCall` (see `unread`): it belongs to no known candidate,
   * so every candidate that finishes with no call, or holds one, is told of it, counted once.
   */
  #unreadCall = false;
  /** Whether a reason `#tellDropped` wrote told of that chunk (counted once in `#toldCalls`). */
  #unreadTold = false;
  /**
   * The candidates told of calls dropped: each is told of that chunk once, where a candidate's finish that
   * came again (in a later chunk, with the usage) told it again.
   */
  readonly #heard = new Set<number>();
  /** The candidates (by position) whose finish was routed: one told of nothing there is told at the end. */
  readonly #ended = new Set<number>();

  /** The candidates (by position) whose `finishReason` was read, for `final`. */
  readonly #finished = new Set<number>();

  constructor(answers = 1) {
    this.#answers = answers;
  }

  /**
   * See `FrameRouter.final`. Gemini sends no end-of-message event: its message ends at the chunk where every
   * candidate asked for has its `finishReason`, or at a prompt blocked (`promptFeedback.blockReason`, no
   * candidate). A chunk of usage alone may follow it, which the client reads (it reads to the close): each
   * later chunk starts the grace again, as Anthropic's frames after `message_stop` do.
   */
  final(event: Record<string, unknown>): boolean {
    const all = Array.isArray(event.candidates) ? event.candidates : [];
    // (a chunk of more candidates than asked is refused whole: the client never reads its finishes)
    if (all.length > this.#answers) return false;
    all.forEach((c, i) => {
      if (isRecord(c) && c.finishReason != null) this.#finished.add(i);
    });
    if (all.length === 0 && isRecord(event.promptFeedback) && event.promptFeedback.blockReason != null) {
      return true;
    }
    return Array.from({ length: this.#answers }, (_, i) => i).every((i) => this.#finished.has(i));
  }

  readonly text: TextFrames = {
    read: geminiText,
    textFrame: (text, position) =>
      formatSse(JSON.stringify({
        candidates: atPosition({ content: { role: "model", parts: [{ text }] }, index: position }, position),
        ...this.#template,
      })),
    scored: (event, position) => {
      const c = Array.isArray(event.candidates) ? event.candidates[position] : undefined;
      return isRecord(c) && c.logprobsResult != null;
    },
    frame: (event, from) => reframe(event, from),
    // (a grounding support of text the gate cut would cite its reason, see `citingWithin`; its offsets are
    // read against the answer's text, which clients join from the chunks, each of one part)
    retell: (event, _changes, { answer, kept, ahead }) =>
      eachGrounded(
        event,
        (supports, at) => at === answer ? citingWithin(supports, ahead.bytes + kept.bytes) : supports,
      ),
    // (a retry's supports name its own text: the client's has the earlier attempts' ahead of it, in bytes)
    cite: (event, ahead) => eachGrounded(event, (supports, at) => allCitedOn(supports, ahead(at).bytes)),
    // (the empty candidates that put one at its position carry no part of an answer) A chunk of none (only
    // `usageMetadata`, or `candidates: []`) takes the first answer's way, as the usage of a chunk of several
    // does (see `answerFrame`): held as a chunk of no answer behind another candidate's held text, it went out
    // after the last chunk, and the client kept its older count as the answer's.
    // The usage of a chunk of other candidates but the first takes the first's way too, in a piece of its own:
    // with theirs, it passed the first's held call, and the chunk that ended the first went out after it
    // with an older count, which the client kept.
    answers(event) {
      const own = Array.isArray(event.candidates)
        ? event.candidates.flatMap((c, i) => (isRecord(c) && Object.keys(c).length > 0 ? [i] : []))
        : [];
      if (own.length === 0) return [0];
      return own[0] !== 0 && event.usageMetadata != null ? [0, ...own] : own;
    },
    // One chunk per candidate, at its position; the usage (and the other fields) on the first, so every
    // usage takes the first answer's way and they stay in order (Gemini reports it in every chunk: on another
    // answer's piece, one passed or trailed the chunks a watch held, and a client kept an older usage as the
    // answer's).
    answerFrame(event, position, piece) {
      const { candidates: all, ...rest } = event;
      const own = Array.isArray(all) ? all[position] : undefined;
      // (the usage alone, in a chunk of no candidate: see `answers`)
      if (!isRecord(own) || Object.keys(own).length === 0) return rest;
      return {
        ...(piece.first ? rest : pick(event, ["modelVersion", "responseId"])),
        candidates: atPosition(own, position),
      };
    },
  };

  /** A retry's chunks carry no position: they follow as they come. */
  resume(raw: string, event: Record<string, unknown>): { raw: string; event: Record<string, unknown> } {
    return { raw, event };
  }

  /**
   * See `FrameRouter.textOf` (the first answer's: a retry asks for one): text the watch held and a retry
   * sends ahead of its stream counts as the client's, so the retry's grounding supports move past it (in
   * bytes) and its text is set apart from it by a blank line. Left out, a support of the retry's text cited
   * the earlier text, and "...</tool_call>plain." ran on.
   */
  textOf(event: Record<string, unknown>): unknown {
    return geminiText(event, 0).text;
  }

  route(raw: string, event: Record<string, unknown>, flow: StreamFlow): void {
    const call = hasCall(event);
    const telling = this.#tellsAt(event);
    if (telling.length > 0 && candidates(event).some((c) => parts(c).some(saysSomething))) {
      // (the chunk's own words go first, its calls and finish then routed as a chunk of their own: the reason
      // went ahead of the chunk, and its words came after it, "Let me <reason>check.")
      const { text, held } = parted(event);
      spoke(event, flow);
      flow.send(formatSse(JSON.stringify(text)));
      event = held;
      raw = formatSse(JSON.stringify(held));
    }
    this.#tellDropped(telling, flow);
    if (!call) {
      const ends = candidates(event).some((c) => c.finishReason != null) || event.usageMetadata != null;
      // (a part without text, a thought's signature, flows as well: held, text that came after it went first)
      if (!flow.pending || !ends) {
        spoke(event, flow);
        flow.send(raw);
      } else if (!candidates(event).some((c) => parts(c).some(saysSomething))) {
        flow.hold({ raw, event, tool: false });
      } else {
        // Its text goes now, after the text that went before it (Gemini reports the usage in every chunk:
        // held whole, the text was overtaken by the text of a later chunk that brought a call); its finish
        // and usage wait.
        this.#split(event, flow, false);
      }
      return;
    }
    flow.pending = true;
    if (!hasText(event)) return flow.hold({ raw, event, tool: true });
    this.#split(event, flow, true);
  }

  /**
   * Where a candidate whose only calls came in chunks `refuse` dropped finishes: sends the reason as its
   * text, at its position, ahead of the finish (text flows, as the reason for rejected calls reads). Gemini
   * finishes a turn of calls `STOP` as any other, so the finish stays; left alone, the client read a plain
   * stop with the call gone and nothing said, and the model was never told.
   */
  #tellDropped(ends: readonly number[], flow: StreamFlow): void {
    for (const i of ends) {
      const count = this.#told(i);
      const text = flow.lead(i) + malformedCallsReason(count);
      const told = { candidates: atPosition({ content: { role: "model", parts: [{ text }] }, index: i }, i) };
      spoke(told, flow);
      flow.send(formatSse(JSON.stringify({ ...told, ...this.#template })));
    }
  }

  /**
   * See `FrameRouter.tellLate`: each candidate that finished holding no call, and lost one in a chunk that
   * came after its finish, is told now, as its finish tells of one that came before it (see `#tellsAt`).
   */
  tellLate(flow: StreamFlow): void {
    if (this.#refusedCalls.size === 0 && !this.#unreadCall) return;
    const telling = [...this.#ended].filter((i) => this.#lost(i) && !this.#called.has(i));
    this.#tellDropped(telling.sort((a, b) => a - b), flow);
  }

  /**
   * See `FrameRouter.tellDropped`: each candidate that holds a call beside call parts `refuse` dropped of
   * its own gets the reason as its text, in a chunk put among the held ones after the last of its text held
   * (else ahead of them), so it goes with the calls that pass and their finish, ahead of a rejection's
   * reason. Left out, the kept calls went out with the dropped ones unsaid, and the model never knew that
   * only some of its calls ran.
   */
  tellDropped(flow: StreamFlow, answers: ReadonlySet<number>): void {
    // (`#called` and `answers`: a call part the text watch held was never routed, yet is held)
    const holding = new Set([...this.#called, ...answers]);
    const telling = [...holding].filter((i) => this.#lost(i)).sort((a, b) => a - b);
    for (const i of telling) {
      const count = this.#told(i);
      let held = flow.held;
      const at = held.findLastIndex((h) => h.event !== undefined && geminiText(h.event, i).text !== "") + 1;
      // (the last words held may come with the candidate's finish: apart from it, so the reason goes before it)
      const apart = at === 0 ? undefined : finishApart(held[at - 1], i);
      if (apart) flow.setHeld(held = [...held.slice(0, at - 1), ...apart, ...held.slice(at)]);
      const ahead = held.slice(0, at).map((h) => h.event ? geminiText(h.event, i).text : "").join("");
      const reason = malformedCallsReason(count);
      const text = flow.lead(i, ahead) + reason;
      const told = {
        candidates: atPosition({ content: { role: "model", parts: [{ text }] }, index: i }, i),
        ...this.#template,
      };
      const frame = {
        raw: formatSse(JSON.stringify(told)),
        event: told,
        tool: false,
        told: { reason, answer: i },
      };
      flow.holdAt(at, [frame]);
    }
  }

  /**
   * The candidates (by position) that `event` finishes whose only calls came in chunks `refuse` dropped:
   * those `#tellDropped` tells. Notes the candidates of which it carries a call first.
   */
  #tellsAt(event: Record<string, unknown>): number[] {
    const all = Array.isArray(event.candidates) ? event.candidates : [];
    all.forEach((c, i) => {
      if (isRecord(c) && parts(c).some(isCall)) this.#called.add(i);
      if (isRecord(c) && c.finishReason != null) this.#ended.add(i);
    });
    if (this.#refusedCalls.size === 0 && !this.#unreadCall) return [];
    return all.flatMap((c, i) =>
      isRecord(c) && c.finishReason != null && this.#lost(i) && !this.#called.has(i) ? [i] : []
    );
  }

  /** Whether candidate `i` is to be told of calls dropped: its own, or those of a chunk not read. */
  #lost(i: number): boolean {
    return this.#refusedCalls.has(i) || (this.#unreadCall && !this.#heard.has(i));
  }

  /**
   * How many dropped calls candidate `i` is told of, now that it is: its own, else (an unread chunk's calls
   * are not known) at least one; noted in `#toldCalls`, an unread chunk's once however many candidates read
   * of it.
   */
  #told(i: number): number {
    const own = this.#refusedCalls.get(i);
    this.#refusedCalls.delete(i);
    if (own !== undefined || !this.#unreadTold) this.#toldCalls += own ?? 1;
    if (own === undefined) this.#unreadTold = true;
    this.#heard.add(i);
    return own ?? 1;
  }

  /**
   * See `FrameRouter.unread`. Gemini finishes a turn of calls `STOP` as any other, so only the chunk's own
   * text tells whether it carried calls: one that names `functionCall` is taken for a call's (see
   * `namesKey`), as Ollama reads its lines; any other is dropped unsaid, as it may be text.
   */
  unread(data: string): void {
    if (namesKey(data, "functionCall")) this.#unreadCall = true;
  }

  /** See `FrameRouter.toldAnswers`. */
  toldAnswers(): ReadonlySet<number> {
    return this.#heard;
  }

  /** See `FrameRouter.ownReason`: the reason `#tellDropped` wrote, counted over every candidate. */
  ownReason(): string | undefined {
    return this.#toldCalls > 0 ? malformedCallsReason(this.#toldCalls) : undefined;
  }

  /** Sends the text of a chunk (its parts but calls) now, and holds its calls, finish and usage. */
  #split(event: Record<string, unknown>, flow: StreamFlow, tool: boolean): void {
    spoke(event, flow);
    const { text, held } = parted(event);
    flow.send(formatSse(JSON.stringify(text)));
    flow.hold({ raw: formatSse(JSON.stringify(held)), event: held, tool });
  }

  /**
   * Vertex AI streams a call's arguments in pieces when the request asks for it
   * (`streamFunctionCallArguments`): `partialArgs` by JSON path, `willContinue` until the last. What a
   * client assembles from them is not the `args` the gate judges, so a chunk carrying such a piece is
   * refused: no client gets a call whose arguments were not judged whole. So is a chunk of more candidates
   * than the request asked for (`candidateCount`): the text of each candidate is watched apart, and split
   * into a chunk of its own at its position, which for thousands of them cost time and memory by their
   * square.
   */
  refuse(event: Record<string, unknown>): string | undefined {
    const count = Array.isArray(event.candidates) ? event.candidates.length : 0;
    if (count > this.#answers) {
      return `a Gemini chunk of ${count} candidates, where the request asked for ${this.#answers} ` +
        "(candidateCount); the chunk was dropped";
    }
    // (the last piece says `willContinue: false`, perhaps with no `partialArgs`, and follows one that said
    // `true`: let through, it reached the judge as a call of no name, and the call was told of twice; one of
    // no name is a piece wherever it comes, one named and saying `false` alone is a call whole in its part,
    // after a piece left unfinished too: a client (ADK's aggregator) reads it as a call of its own)
    const pieced = (Array.isArray(event.candidates) ? event.candidates : []).some((c, i) =>
      isRecord(c) && parts(c).some((p) =>
        isRecord(p.functionCall) && !wholeCall(p.functionCall) &&
        (p.functionCall.willContinue != null || this.#continues.has(i) || piecesArgs(p.functionCall))
      )
    );
    if (pieced) this.#countRefused(event);
    return pieced
      ? "a Gemini chunk carries a function call whose arguments come in pieces (partialArgs, willContinue), which " +
        "toolguard cannot judge whole; it was dropped (leave streamFunctionCallArguments off)"
      : undefined;
  }

  /**
   * See `FrameRouter.rest`: a chunk refused for a call in pieces without its pieces (each call counted by
   * `#countRefused`), where it carries more (a finish, words, usage, a call whole in its part): dropped
   * whole, the client never read its candidate finish, the model was not told of the call, and a whole call
   * beside the pieces, which a client reads as a call of its own, was lost unjudged and told of as dropped.
   * A chunk of too many candidates has none.
   */
  rest(event: Record<string, unknown>): Record<string, unknown> | undefined {
    const all = Array.isArray(event.candidates) ? event.candidates : [];
    if (all.length > this.#answers) return undefined;
    const kept = (p: Record<string, unknown>) =>
      !isCall(p) || wholeCall(p.functionCall as Record<string, unknown>);
    const rest = {
      ...event,
      candidates: all.map((c) => isRecord(c) ? withParts(c, (ps) => ps.filter(kept)) : c),
    };
    const says = candidates(rest).some((c) => parts(c).length > 0 || c.finishReason != null);
    return says || event.usageMetadata != null ? rest : undefined;
  }

  /**
   * Notes the calls of each candidate of a refused chunk, by position (see `#tellDropped`): a call part
   * that follows one saying `willContinue` is a piece of that call, not a call of its own (a call of five
   * pieces was told as five calls); a call whole in its part is not dropped (see `rest`), nor counted.
   */
  #countRefused(event: Record<string, unknown>): void {
    const all = Array.isArray(event.candidates) ? event.candidates : [];
    all.forEach((c, i) => {
      let count = 0;
      for (const p of isRecord(c) ? parts(c).filter(isCall) : []) {
        const whole = isRecord(p.functionCall) && wholeCall(p.functionCall);
        if (!whole && !this.#continues.has(i)) count++;
        if (isRecord(p.functionCall) && p.functionCall.willContinue === true) this.#continues.add(i);
        else if (!whole) this.#continues.delete(i);
      }
      if (count > 0) this.#refusedCalls.set(i, (this.#refusedCalls.get(i) ?? 0) + count);
    });
  }

  /**
   * The grounding of the text the client has that a retry drops with the first attempt's held chunks (a
   * search's sources came in the chunk that finished the answer, with no text, after its call), in a chunk
   * of its own ahead of the retry's stream: dropped, the client kept the first attempt's words with no
   * sources (and no `searchEntryPoint` to show). Each candidate's goes at its position (Gemini grounds each
   * candidate apart, `candidateCount`): read from the first alone, another's sources were lost with the
   * chunk that finished both. Supports past the text the client has (of a written call cut) go, see
   * `citingWithin`. A candidate the retry does not continue (it asks for one: see `oneAnswer`) gets its
   * finish too (`finishReason`, its ratings), its calls left out, as OpenAI Chat's other choices do: dropped,
   * the client never saw it end, where a body's retry ends every candidate.
   */
  endsDropped(dropped: readonly Held[], flow: StreamFlow): string {
    const told = flow.told();
    return dropped.flatMap((h) => {
      const all = h.event && Array.isArray(h.event.candidates) ? h.event.candidates : [];
      return all.flatMap((c, position) => {
        if (!isRecord(c)) return [];
        const { content: _content, groundingMetadata: meta, ...ends } = c;
        // By place, as the calls and words were read: a turn retried lists every candidate at the place of its
        // `index` (see `firstInDoubt`). The retry continues the first; every other candidate ends here, with the
        // finish it was dropped with, its supports cut by its own words.
        const own = position === 0 || ends.finishReason == null ? {} : ends;
        if (!isRecord(meta) && Object.keys(own).length === 0) return [];
        const grounding = !isRecord(meta) ? {} : {
          groundingMetadata: Array.isArray(meta.groundingSupports)
            ? { ...meta, groundingSupports: citingWithin(meta.groundingSupports, told[position]?.bytes ?? 0) }
            : meta,
        };
        const candidate = { ...own, content: { role: "model", parts: [{ text: "" }] }, index: position };
        return [formatSse(JSON.stringify({
          candidates: atPosition({ ...candidate, ...grounding }, position),
          ...this.#template,
        }))];
      });
    }).join("");
  }

  /** Notes the fields a chunk the gate writes copies (`modelVersion`, `responseId`). */
  note(event: Record<string, unknown>): void {
    this.#template ??= pick(event, ["modelVersion", "responseId"]);
  }

  /**
   * Ends a stream of which only some calls were rejected: a chunk with `text` (the reason) in each candidate
   * that lost a call, at its position, after the last of its text held (else ahead of the held chunks), and
   * the held chunks without the dropped calls' parts (a
   * `thoughtSignature` on a dropped call moves to the next kept one, where Gemini looks for it). A chunk
   * left with nothing is dropped.
   */
  dropCalls(reason: AnswerReason, split: SplitCalls, flow: StreamFlow): void {
    const hit = new Set(split.dropped.map((c) => c.choice));
    // A candidate's reason follows the last of its parts held (text the watch held: an answer that opens
    // with JSON is held to its end), as a body sets it after the candidate's text: sent ahead of that text,
    // it made an answer that opened with JSON open with words, and an object in it read as a call no judge saw.
    const after = new Map<number, number[]>(); // held frame -> the candidates whose reason follows it
    const first: number[] = [];
    for (const i of hit) {
      const k = flow.held.findLastIndex((h) => {
        // (a chunk with a call part counts too: text that came with the call in one chunk is held with it)
        const c = h.event && Array.isArray(h.event.candidates) ? h.event.candidates[i] : undefined;
        return isRecord(c) && parts(c).some((p) => !isCall(p) && saysText(p));
      });
      if (k < 0) first.push(i);
      else after.set(k, [...after.get(k) ?? [], i]);
    }
    const sendReason = (at: number[]) => {
      if (at.length === 0) return;
      const to = new Set(at);
      flow.send(formatSse(JSON.stringify({
        candidates: Array.from(
          { length: Math.max(...at) + 1 },
          (_, i) =>
            to.has(i)
              ? { content: { role: "model", parts: [{ text: flow.lead(i) + reason(i) }] }, index: i }
              : {},
        ),
        ...this.#template,
      })));
    };
    sendReason(first);
    // A call is known by its candidate and its place among that candidate's calls: the chunks of each
    // candidate are held in the order they came, but not those of two (a chunk of both is split, and each
    // piece waits behind its own answer's watch), so a place among all calls named another call.
    const dropped = new Set(split.dropped);
    const gone = new Map<number, Set<number>>();
    const count = new Map<number, number>();
    for (const c of [...split.kept, ...split.dropped].sort((a, b) => a.slot - b.slot)) {
      const at = count.get(c.choice) ?? 0;
      count.set(c.choice, at + 1);
      if (!dropped.has(c)) continue;
      if (!gone.has(c.choice)) gone.set(c.choice, new Set());
      gone.get(c.choice)!.add(at);
    }
    const keeps = new Map<number, { position: number; signature: unknown }>();
    const none = new Set<number>();
    for (const [k, h] of flow.held.entries()) {
      if (!h.event || !h.tool) {
        if (h.event) {
          spoke(h.event, flow);
          flow.send(h.raw);
        }
        sendReason(after.get(k) ?? []);
        continue;
      }
      const all = Array.isArray(h.event.candidates) ? h.event.candidates : [];
      const chunk = {
        ...h.event,
        candidates: all.map((c, i) => {
          if (!isRecord(c)) return c;
          if (!keeps.has(i)) keeps.set(i, { position: 0, signature: undefined });
          return withParts(c, (ps) => keptParts(ps, gone.get(i) ?? none, keeps.get(i)!));
        }),
      };
      const empty = candidates(chunk).every((c) => parts(c).length === 0 && c.finishReason == null) &&
        h.event.usageMetadata == null;
      spoke(chunk, flow);
      if (!empty) flow.send(formatSse(JSON.stringify(chunk)));
      sendReason(after.get(k) ?? []);
    }
  }

  /**
   * Ends a stream whose calls were rejected: each candidate's calls are dropped, and `text` (the reason)
   * follows the last text held from its first held call on, else stands in place of that call: a body puts
   * the reason after a candidate's text, and text held past the call is the text the watch held as a
   * possible written call (the reason came in the midst of it). Every candidate that lost a call says why,
   * as in a whole body: a candidate whose call was held after another's (candidate 1 first) lost its calls
   * without a word.
   */
  replace(reason: AnswerReason, _calls: unknown, flow: StreamFlow, told?: ReadonlySet<number>): void {
    const held = flow.held;
    const place = new Map<number, number>(); // candidate -> the held chunk its reason goes in
    held.forEach((h, k) => {
      const all = h.event && Array.isArray(h.event.candidates) ? h.event.candidates : [];
      all.forEach((c, i) => {
        if (!isRecord(c)) return;
        const ps = parts(c);
        if (!place.has(i) ? h.tool && ps.some(isCall) : ps.some((p) => !isCall(p) && saysText(p))) {
          place.set(i, k);
        }
      });
    });
    held.forEach((h, k) => {
      if (!h.event) return;
      if (!h.tool && ![...place.values()].includes(k)) {
        spoke(h.event, flow);
        return flow.send(h.raw);
      }
      // By position, as the calls were read (see `geminiEvents`): a candidate that is no record keeps its place.
      const all = Array.isArray(h.event.candidates) ? h.event.candidates : [];
      const chunk = {
        ...h.event,
        candidates: all.map((c, i) =>
          !isRecord(c) ? c : withParts(c, (ps) => {
            const kept = ps.filter((p) => !isCall(p));
            if (place.get(i) === k && !told?.has(i)) {
              kept.push({ text: flow.lead(i, answerText(kept)) + reason(i) });
            }
            return kept;
          })
        ),
      };
      const empty = candidates(chunk).every((c) => parts(c).length === 0 && c.finishReason == null) &&
        h.event.usageMetadata == null;
      spoke(chunk, flow);
      if (!empty) flow.send(formatSse(JSON.stringify(chunk)));
    });
    if (place.size === 0 && !told?.has(0)) {
      flow.send(formatSse(JSON.stringify({
        candidates: [{
          content: { role: "model", parts: [{ text: flow.lead(0) + reason(0) }] },
          finishReason: "STOP",
          index: 0,
        }],
      })));
    }
  }
}

/** A part that carries text (answer or thought). */
const saysText = (part: Record<string, unknown>) => typeof part.text === "string" && part.text !== "";

/** A part that is only text (answer or thought summary), with no signature: pieces of one may be joined. */
const plainText = (part: Record<string, unknown>) =>
  typeof part.text === "string" && Object.keys(part).every((k) => k === "text" || k === "thought");

/**
 * Keeps the parts of the first candidate in order: text pieces joined, every other part (a `functionCall`,
 * a part with a `thoughtSignature`) as it came. Gemini refuses a follow-up whose function call lost its
 * `thoughtSignature`. The first by its place in each chunk, as the gate reads the calls (see `geminiText`):
 * read by `index`, a retry sent back candidate 0's words with the call of a candidate 1 that stood first.
 */
class GeminiTurn implements TurnRecorder {
  readonly #parts: Record<string, unknown>[] = [];
  #inDoubt = false;

  read(event: Record<string, unknown>): void {
    // (the clients read a chunk's candidates by place, Gemini numbers them by `index`: where the two differ,
    // which answer a retry continues is in doubt)
    this.#inDoubt ||= candidatesOutOfPlace(event);
    const first = Array.isArray(event.candidates) ? event.candidates[0] : undefined;
    for (const p of isRecord(first) ? parts(first) : []) {
      const last = this.#parts.at(-1);
      if (last && plainText(last) && plainText(p) && last.thought === p.thought) {
        last.text = (last.text as string) + (p.text as string);
      } else this.#parts.push({ ...p });
    }
  }

  body(): Record<string, unknown> {
    return {
      candidates: [{ index: 0, content: { role: "model", parts: this.#parts.map((p) => ({ ...p })) } }],
    };
  }

  firstInDoubt(): boolean {
    return this.#inDoubt;
  }
}

/** Google Gemini in its three roles. */
export const gemini: Dialect = {
  body,
  router: (request) => new GeminiStream(request?.answers),
  turn: () => new GeminiTurn(),
};
