/**
 * Incremental framing for the two streaming wire formats model servers use: Server-Sent Events (OpenAI,
 * Anthropic, llama.cpp, LM Studio, vLLM) and newline-delimited JSON (Ollama). Each parser keeps the exact
 * text of every frame so a gate can forward untouched frames byte for byte.
 *
 * @module
 */

/** One Server-Sent Event, with the exact text it arrived as. */
export interface SseEvent {
  /** The `event:` field, when present. */
  event?: string;
  /** The `data:` lines joined with `\n`; `undefined` when the frame had no data field (comments, retry). */
  data?: string;
  /** The `id:` field, when present (one holding U+0000 is ignored, as the SSE standard says). */
  id?: string;
  /** The `retry:` field (the reconnection delay in milliseconds), when present and all digits. */
  retry?: number;
  /** The frame exactly as received, including its terminating blank line. */
  raw: string;
}

/** A push parser: feed text as it arrives, then call `end()` once. */
export interface FrameParser<T> {
  /** Feeds more text; returns the frames completed by it. */
  push(text: string): T[];
  /** Flushes a final unterminated frame, if any. */
  end(): T[];
  /** The length of the text kept for the frame not yet ended (what a frame without end grows). */
  readonly pending: number;
}

/** Creates an SSE parser that splits on blank lines (`\n`, `\r\n` or `\r` line ends, as the spec allows). */
export function sseParser(): FrameParser<SseEvent> {
  let buffer = "";
  let frameStart = 0; // where the current frame starts in buffer
  let lineStart = 0; // where the current line starts
  let searchFrom = 0; // where to resume looking for a line end (everything before has none)
  let lines: string[] = [];

  /** The frames complete in the buffer; with `final`, the unterminated last one too. */
  const take = ({ final }: { final: boolean }): SseEvent[] => {
    const out: SseEvent[] = [];
    for (;;) {
      let eol = -1;
      let eolLen = 1;
      let i = searchFrom;
      for (; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10) {
          eol = i;
          break;
        }
        if (c === 13) {
          // A trailing \r may be the first half of \r\n: wait for the next chunk unless this is the end.
          if (i + 1 >= buffer.length && !final) break;
          eol = i;
          eolLen = buffer.charCodeAt(i + 1) === 10 ? 2 : 1;
          break;
        }
      }
      if (eol < 0) {
        searchFrom = i;
        break;
      }
      const line = withoutBom(buffer.slice(lineStart, eol));
      lineStart = searchFrom = eol + eolLen;
      if (line === "") {
        // A blank line ends the frame; a stray one is kept as its own frame for byte fidelity.
        out.push(
          lines.length > 0
            ? toEvent(lines, buffer.slice(frameStart, lineStart))
            : { raw: buffer.slice(frameStart, lineStart) },
        );
        lines = [];
        buffer = buffer.slice(lineStart);
        frameStart = lineStart = searchFrom = 0;
      } else {
        lines.push(line);
      }
    }
    if (final) {
      const rest = withoutBom(buffer.slice(lineStart));
      if (rest !== "") lines.push(rest);
      const raw = buffer.slice(frameStart);
      if (lines.length > 0) out.push(toEvent(lines, raw));
      else if (raw !== "") out.push({ raw });
      lines = [];
      buffer = "";
      frameStart = lineStart = searchFrom = 0;
    }
    return out;
  };

  return {
    push(text: string): SseEvent[] {
      buffer += text;
      return take({ final: false });
    },
    end(): SseEvent[] {
      return take({ final: true });
    },
    get pending(): number {
      return buffer.length;
    },
  };
}

/**
 * A line without the U+FEFF (byte order mark) it may start with. The official clients decode each line on
 * its own (openai) or drop a BOM from every line (@anthropic-ai/sdk), so `\uFEFFdata: ...` is a data line to
 * them and a line of only a BOM ends the frame: the gate reads lines the same way.
 */
export function withoutBom(line: string): string {
  return line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
}

function toEvent(lines: string[], raw: string): SseEvent {
  const event: SseEvent = { raw };
  let data: string[] | undefined;
  for (const line of lines) {
    if (line.startsWith(":")) continue; // comment
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") (data ??= []).push(value);
    else if (field === "event") event.event = value;
    else if (field === "id" && !value.includes("\0")) event.id = value;
    else if (field === "retry" && /^[0-9]+$/.test(value)) event.retry = Number(value);
  }
  if (data) event.data = data.join("\n");
  return event;
}

/**
 * The `event:` name of the SSE frame `raw` (its exact text), read as {@linkcode sseParser} reads it (the
 * last `event:` line counts); undefined when it has none.
 */
export function frameName(raw: string): string | undefined {
  const lines = raw.split(/\r\n|\r|\n/).map(withoutBom).filter((l) => l !== "");
  return toEvent(lines, raw).event;
}

/**
 * The `event:` name `reframe` read of each frame it was given, by the object that gave it: a frame split in
 * many pieces (an item added with thousands of text parts) is read once, not once a piece, which was
 * quadratic in its size.
 */
const NAMES = new WeakMap<object, { name: string | undefined }>();

/**
 * The SSE frame of `event` in place of the frame `from` (its exact text and event), so that a client that
 * routes frames by their `event:` name reads it as it read that frame: under that frame's name, or none
 * where it had none; where the name was that frame's `type`, under the event's own (a frame split in
 * pieces of other types). Without `from` (a frame of the gate's own), under `name`.
 */
export function reframe(
  event: Record<string, unknown>,
  from: { raw: string; event: Record<string, unknown> } | undefined,
  name?: string,
): string {
  const data = JSON.stringify(event);
  if (from === undefined) return formatSse(data, name);
  let read = NAMES.get(from);
  if (read === undefined) NAMES.set(from, read = { name: frameName(from.raw) });
  const was = read.name;
  return formatSse(data, was !== undefined && was === from.event.type ? String(event.type) : was);
}

/**
 * Formats one SSE frame. Multi-line data becomes several `data:` lines. The event name loses any line break
 * (the gate writes names from event types, the provider's text): a frame stays one frame.
 */
export function formatSse(data: string, event?: string): string {
  let out = event === undefined ? "" : `event: ${event.replace(/[\r\n]/g, "")}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return out + "\n";
}

/** One NDJSON line with the exact text it arrived as. */
export interface NdjsonLine {
  /** The line without its line end (nor a BOM it starts with: the SSE parser drops one alike). */
  text: string;
  /** The line as received, including its line end. */
  raw: string;
}

/** Creates a parser for newline-delimited JSON. Blank lines are kept (as frames with empty text). */
export function ndjsonParser(): FrameParser<NdjsonLine> {
  let buffer = "";
  return {
    push(text: string): NdjsonLine[] {
      // The kept buffer holds no line end, so only the new text needs searching: a long line arriving in
      // many reads is not rescanned from its start on every read.
      const from = buffer.length;
      buffer += text;
      const out: NdjsonLine[] = [];
      let start = 0;
      for (let nl = buffer.indexOf("\n", from); nl >= 0; nl = buffer.indexOf("\n", start)) {
        const raw = buffer.slice(start, nl + 1);
        out.push({ text: withoutBom(raw.replace(/\r?\n$/, "")), raw });
        start = nl + 1;
      }
      buffer = buffer.slice(start);
      return out;
    },
    end(): NdjsonLine[] {
      const rest = buffer;
      buffer = "";
      return rest === "" ? [] : [{ text: withoutBom(rest.replace(/\r$/, "")), raw: rest }];
    },
    get pending(): number {
      return buffer.length;
    },
  };
}
