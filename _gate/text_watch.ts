/**
 * Calls a model writes into streamed text: a watcher that releases prose at once and holds text from a
 * call marker on, the frame-level hold the stream gate runs it in, and the cut that removes written calls
 * from a text.
 *
 * @module
 */
import { normaliseCalls } from "../_validate/providers.ts";
import { type ExtractedToolCall, extractToolCalls } from "../_extract/extract.ts";
import type { AssembledToolCall, StreamDialect } from "./calls.ts";
import type { Held, StreamFlow, TextFrames } from "./dialects/shared.ts";

const MARKERS = ["<tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<function=", "```"];
const CALL_FENCE = /^(json|jsonc|json5|tool_call|tool_calls|tool_code|)$/i;
/** The longest tail that can still grow into a marker, plus one. */
const LONGEST_MARKER = 13;

/**
 * Watches the text of one streamed message for the start of a call written into it. Text before a marker is
 * released at once; from the marker on, text is held until the stream ends and the calls are judged. A tail
 * that could be the start of a marker (`<tool_`) is held until the next piece settles it.
 */
export class TextWatcher {
  #visible = "";
  #held = "";
  #tail = "";
  #holding = false;
  /** Fences opened and closed in the released text; odd means inside a code block. */
  #fences = 0;

  /** Feeds a piece of text; returns the part that may be shown now. */
  push(text: string): string {
    if (this.#holding) {
      this.#held += text;
      return "";
    }
    const s = this.#tail + text;
    this.#tail = "";
    if (this.#visible.trim() === "") {
      const opened = this.#opening(s);
      if (opened !== undefined) return opened;
    }
    const { cut, ambiguous } = this.#findMarker(s);
    if (ambiguous) {
      this.#tail = s.slice(cut);
      return this.#release(s.slice(0, cut));
    }
    if (cut >= 0) return this.#holdFrom(s, cut);
    return this.#keepTail(s);
  }

  /** Releases a held ambiguous tail (the stream moved on, so it cannot become a marker). */
  flushTail(): string {
    const t = this.#tail;
    this.#tail = "";
    return this.#release(t);
  }

  /** True once a marker was seen: everything after it is held. */
  get holding(): boolean {
    return this.#holding;
  }

  /** Text released so far. */
  get visible(): string {
    return this.#visible;
  }

  /** Text held: from the marker on, plus any ambiguous tail. */
  get held(): string {
    return this.#holding ? this.#held : this.#tail;
  }

  #release(text: string): string {
    this.#visible += text;
    return text;
  }

  #holdFrom(s: string, at: number): string {
    this.#holding = true;
    this.#held = s.slice(at);
    return this.#release(s.slice(0, at));
  }

  /** A whole message that opens with JSON may be a bare call: hold it all. Undefined when it does not. */
  #opening(s: string): string | undefined {
    const first = s.search(/\S/);
    const second = first >= 0 ? s.slice(first + 1).search(/\S/) : -1;
    const opensArray = first >= 0 && s[first] === "[";
    if (opensArray && second < 0) {
      this.#tail = s.slice(first); // "[" alone: a call array or a list like "[1] ..."; the next piece tells
      return this.#release(s.slice(0, first));
    }
    if (first >= 0 && (s[first] === "{" || (opensArray && s[first + 1 + second] === "{"))) {
      return this.#holdFrom(s, first);
    }
    return undefined;
  }

  /**
   * Where the first marker in `s` starts (-1: none). `ambiguous` when it is a fence whose language line
   * has not arrived yet. Counts the fences of other code blocks on the way.
   */
  #findMarker(s: string): { cut: number; ambiguous: boolean } {
    for (let i = 0; i < s.length; i++) {
      if (s[i] !== "<" && s[i] !== "[" && s[i] !== "`") continue;
      const m = MARKERS.find((m) => s.startsWith(m, i));
      if (m === undefined) continue;
      if (m !== "```") return { cut: i, ambiguous: false };
      // A fence: a closing one, or one for another language, is just text.
      if (this.#fences % 2 === 0) {
        const nl = s.indexOf("\n", i + 3);
        if (nl < 0) return { cut: i, ambiguous: true };
        if (CALL_FENCE.test(s.slice(i + 3, nl).trim())) return { cut: i, ambiguous: false };
      }
      this.#fences++;
      i += 2;
    }
    return { cut: -1, ambiguous: false };
  }

  /** Releases `s` but a tail that could still grow into a marker. */
  #keepTail(s: string): string {
    for (let k = Math.min(s.length, LONGEST_MARKER); k > 0; k--) {
      const end = s.slice(s.length - k);
      if (MARKERS.some((m) => m.length > k && m.startsWith(end))) {
        this.#tail = end;
        return this.#release(s.slice(0, s.length - k));
      }
    }
    return this.#release(s);
  }
}

/** Creates a {@linkcode TextWatcher}. */
export function textWatcher(): TextWatcher {
  return new TextWatcher();
}

/** Removes the markup of every call written into a text and tidies the seams. */
export function cutCalls(text: string, calls: ExtractedToolCall[] = extractToolCalls(text)): string {
  if (calls.length === 0) return text;
  let out = "";
  let at = 0;
  for (const c of calls) {
    if (c.block.start < at) continue; // several calls in one block
    out += text.slice(at, c.block.start);
    at = c.block.end;
  }
  out += text.slice(at);
  return out.replace(/\n{3,}/g, "\n\n").trim();
}

/**
 * The stream gate's watch over the text of one message (OpenAI Chat choice 0, Ollama): runs each frame's
 * text through a {@linkcode TextWatcher}, holds the frames that arrive once text is held, and at the end
 * hands over the calls written into the held text for judging.
 */
export class TextCalls {
  readonly #watcher = new TextWatcher();
  readonly #dialect: StreamDialect;
  readonly #frames: TextFrames;

  constructor(dialect: StreamDialect, frames: TextFrames) {
    this.#dialect = dialect;
    this.#frames = frames;
  }

  /**
   * Runs a frame's text through the watcher. Returns the frame to route as usual (possibly with its text
   * removed), or undefined when the frame was fully handled here.
   */
  watch(
    raw: string,
    event: Record<string, unknown>,
    flow: StreamFlow,
  ): { raw: string; event: Record<string, unknown> } | undefined {
    const w = this.#watcher;
    const part = this.#frames.read(event);
    if (part.text === "") {
      if (!w.holding && w.held !== "") flow.send(this.#frames.textFrame(w.flushTail())); // the stream moved on
      if (w.holding) return void this.#hold({ raw, event, tool: part.toolish }, flow);
      return { raw, event };
    }
    const now = w.push(part.text);
    if (now === part.text && !w.holding) return { raw, event };
    if (now !== "") {
      flow.textSeen = true;
      flow.send(this.#frames.textFrame(now));
    }
    const rest = part.rest();
    if (!rest) return undefined;
    const restRaw = this.#frames.frame(rest);
    if (w.holding) return void this.#hold({ raw: restRaw, event: rest, tool: part.toolish }, flow);
    return { raw: restRaw, event: rest };
  }

  /**
   * At the end of the stream: the calls written into the held text, to be judged (then call
   * {@linkcode TextCalls.conclude}). Undefined when there are none (the held text, if any, is sent back
   * to the client first) or when the stream carried native calls.
   */
  settle(stream: { nativeCalls: number }, flow: StreamFlow): AssembledToolCall[] | undefined {
    const w = this.#watcher;
    if (!w.holding && w.held === "") return undefined;
    const extracted = w.holding && stream.nativeCalls === 0 ? extractToolCalls(w.visible + w.held) : [];
    if (extracted.length === 0) {
      flow.send(this.#frames.textFrame(w.held)); // nothing to judge: release, then the usual ending
      return undefined;
    }
    return textCalls(extracted, this.#dialect);
  }

  /** Sends the held text as it was when the calls are allowed, else the text without them and `reason`. */
  conclude(judgement: { allowed: boolean; reason: string }, flow: StreamFlow): void {
    const w = this.#watcher;
    if (judgement.allowed) return flow.send(this.#frames.textFrame(w.held));
    const rest = cutCalls(w.held);
    const lead = rest !== "" ? `${rest}\n\n` : w.visible.trim() !== "" ? "\n\n" : "";
    flow.send(this.#frames.textFrame(lead + judgement.reason));
  }

  /** Holds a frame that arrived while text is held, keeping stream order. */
  #hold(frame: Held, flow: StreamFlow): void {
    if (frame.tool) flow.pending = true;
    flow.hold(frame);
  }
}

/** Turns calls recovered from text into assembled calls, with the validator's synthetic ids. */
function textCalls(extracted: ExtractedToolCall[], dialect: StreamDialect): AssembledToolCall[] {
  const ids = normaliseCalls(extracted.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })));
  return extracted.map((c, i) => ({
    id: ids[i]?.id ?? c.id ?? "",
    syntheticId: c.id === undefined,
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    dialect,
    choice: 0,
    slot: i,
  }));
}
