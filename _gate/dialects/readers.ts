/**
 * The stream-event readers of every provider dialect: what the synchronous `assembleToolCalls` needs to
 * rebuild calls from stream events. They load with `gate.ts`; the rest of each dialect (bodies, the gate's
 * routing of stream frames, what a retry sends back) loads when the gate first judges something
 * (`../engines.ts`).
 *
 * @module
 */
import { isRecord } from "../../_common/values.ts";
import { parseJsonSafe, safeStringify } from "../../_common/json.ts";
import type { Slot, SlotBook, StreamDialect } from "../calls.ts";

/** Reads the events of one dialect into a {@linkcode SlotBook}. */
export interface EventReader {
  /** Reads one event (already parsed and known to be of this dialect). */
  read(event: Record<string, unknown>, book: SlotBook): void;
}

/**
 * The position a JavaScript client reads an index of an event as when it looks an array up by it
 * (`choices[index]`, `output[output_index]`): a whole number from 0 up, or the text of one (`"1"`, the same
 * property). Undefined for anything else (`1.5`, `NaN`, `-1`, `"01"`), which addresses no element.
 */
export function arrayIndex(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== "string" || !/^(0|[1-9][0-9]{0,15})$/.test(value)) return undefined;
  return arrayIndex(Number(value));
}

/** `index` as the text a finding quotes (`NaN` and `"1"` shown as they came). */
function shown(index: unknown): string {
  return typeof index === "number" ? String(index) : JSON.stringify(index) ?? String(index);
}

// ---------------------------------------------------------------------------------------------------------
// OpenAI Chat Completions
// ---------------------------------------------------------------------------------------------------------

/** Reads `choices[].delta.tool_calls` (and the legacy `function_call`) into calls, per choice and index. */
class ChatEvents implements EventReader {
  /** Bumped when a server reuses an index for a new call, so the index's keys start over. */
  #generation = 0;
  readonly #missingIndexReported = new Set<Slot>();

  read(event: Record<string, unknown>, book: SlotBook): void {
    for (const choice of event.choices as unknown[]) {
      if (!isRecord(choice)) {
        book.finding("malformed_event", "a choice is not an object");
        continue;
      }
      // The openai SDK files a choice under `choices[index]` ("1" is choice 1); one at no whole number from 0
      // up it keeps apart and leaves out of its final completion, but the AI SDK reads the first choice of
      // each chunk as the answer: its calls are listed under choice 0, with a finding.
      let ci = choice.index == null ? 0 : arrayIndex(choice.index);
      if (ci === undefined) {
        book.finding(
          "malformed_event",
          `a choice at index ${
            shown(choice.index)
          }, no whole number from 0 up; its calls are read as choice 0's`,
        );
        ci = 0;
      }
      const delta = isRecord(choice.delta) ? choice.delta : isRecord(choice.message) ? choice.message : {};
      if (Array.isArray(delta.tool_calls)) { for (const td of delta.tool_calls) this.#delta(ci, td, book); }
      else if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
        book.finding("malformed_event", "tool_calls is not an array");
      }
      if (isRecord(delta.function_call)) {
        // The legacy single function_call: one call per choice.
        const s = book.get(`c${ci}:legacy`) ?? book.open(`c${ci}:legacy`, "openai_chat", ci, 0);
        appendName(s, delta.function_call.name);
        appendArgs(s, delta.function_call.arguments, book);
      }
    }
  }

  /** Reads one entry of a `tool_calls` delta. */
  #delta(choice: number, td: unknown, book: SlotBook): void {
    if (!isRecord(td)) return book.finding("malformed_event", "a tool_calls delta is not an object");
    const fn = isRecord(td.function) ? td.function : {};
    const id = typeof td.id === "string" && td.id !== "" ? td.id : undefined;
    // (the SDK files a call under `tool_calls[index]`, "1" too)
    const index = arrayIndex(td.index);
    const s = index !== undefined
      ? this.#indexed(choice, index, id, fn, book)
      : this.#unindexed(choice, id, book);
    if (id && s.id === "") s.id = id;
    appendName(s, fn.name);
    appendArgs(s, fn.arguments, book);
  }

  /** The call a delta with an `index` belongs to. */
  #indexed(
    choice: number,
    index: number,
    id: string | undefined,
    fn: Record<string, unknown>,
    book: SlotBook,
  ): Slot {
    let s = book.get(`c${choice}:${index}:${this.#generation}`);
    // A server that numbers every parallel call 0 would glue them into one argument string. A delta that
    // names a tool, on a slot whose call already has an id or a complete argument object and a different
    // id, starts a new call instead.
    if (
      s && ((id && s.id && id !== s.id) || (!id && typeof fn.name === "string" && fn.name !== "" &&
        s.name !== "" && completeObject(s.args)))
    ) {
      book.finding("reused_index", `index ${index} was reused for a new call; it was kept separate`);
      this.#generation++;
      book.forgetChoice(choice);
      s = undefined;
    }
    return s ?? book.open(`c${choice}:${index}:${this.#generation}`, "openai_chat", choice, index);
  }

  /** The call a delta without an `index` belongs to: the last one when the id allows, else a new one. */
  #unindexed(choice: number, id: string | undefined, book: SlotBook): Slot {
    const last = book.lastIn(choice);
    const s = last && (!id || last.id === "" || last.id === id)
      ? last
      : book.open(`c${choice}:auto${book.size}`, "openai_chat", choice, book.size);
    if (!this.#missingIndexReported.has(s)) {
      this.#missingIndexReported.add(s);
      book.finding("missing_index", "a tool_calls delta has no index; it was matched by id and order");
    }
    return s;
  }
}

function appendName(s: Slot, name: unknown): void {
  if (typeof name !== "string" || name === "") return;
  // OpenAI sends a name once; some servers repeat it on every delta. Never double it. A name sent in
  // differing pieces is joined by some clients and replaced by others (the openai SDK keeps the last).
  if (s.name === "" || s.name === name) s.name = name;
  else {
    s.name += name;
    s.lastName = name;
  }
}

function appendArgs(s: Slot, args: unknown, book: SlotBook): void {
  if (typeof args === "string") s.args += args;
  else if (isRecord(args)) s.args += JSON.stringify(args);
  else if (args !== undefined && args !== null) {
    book.finding("malformed_event", "tool call arguments are not text");
  }
}

/** True when `text` is already a whole JSON object. */
function completeObject(text: string): boolean {
  const t = text.trim();
  if (!t.startsWith("{") || !t.endsWith("}")) return false;
  const p = parseJsonSafe(t);
  return p.ok && isRecord(p.value);
}

// ---------------------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------------------

/**
 * The output items of calls the caller runs, by type, with the built-in tool each belongs to (`""`: the
 * item names its tool). Other call items (`web_search_call`, `mcp_call`, ...) are run by OpenAI.
 */
const CLIENT_CALLS: Readonly<Record<string, string>> = {
  function_call: "",
  custom_tool_call: "",
  local_shell_call: "local_shell",
  shell_call: "shell",
  apply_patch_call: "apply_patch",
  computer_call: "computer_use_preview",
};

/** True for an output item that is a call the caller runs. */
export function isClientCall(item: unknown): item is Record<string, unknown> {
  return isRecord(item) && typeof item.type === "string" && Object.hasOwn(CLIENT_CALLS, item.type);
}

/** The tool name a call item is judged by. */
export function callName(item: Record<string, unknown>): string {
  const builtin = CLIENT_CALLS[item.type as string];
  return builtin || (typeof item.name === "string" ? item.name : "");
}

/** A built-in call's arguments: what it asks the caller to do (`action`, `operation`). */
export function builtinArguments(item: Record<string, unknown>): string {
  const what = item.action ?? item.operation;
  return JSON.stringify(what === undefined ? {} : what);
}

/**
 * The events that carry a whole response: the official client takes each as its snapshot (the one it ends
 * with when no later one comes), so a call in any of them is the client's to run, `response.created` and
 * `response.failed` included.
 */
export const SNAPSHOTS: ReadonlySet<string> = new Set([
  "response.created",
  "response.queued",
  "response.in_progress",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "response.done",
]);

/**
 * Reads `function_call` output items, their argument deltas and every snapshot, one call per output; files
 * each call item and argument event under the position of the call it was read into
 * ({@linkcode SlotBook.file}): the gate's router drops a rejected call's events by it.
 */
class ResponsesEvents implements EventReader {
  /**
   * The call opened first for each item id its output item carried (argument events may address the item by
   * it): a look-up, where a search through every call made a stream of many calls quadratic.
   */
  readonly #byItemId = new Map<string, Slot>();

  read(event: Record<string, unknown>, book: SlotBook): void {
    const type = event.type as string;
    const item = isRecord(event.item) ? event.item : undefined;
    if ((type === "response.output_item.added" || type === "response.output_item.done") && item) {
      this.#item(event, item, book);
    } else if (
      type === "response.function_call_arguments.delta" || type === "response.custom_tool_call_input.delta"
    ) {
      const s = this.#find(event, book);
      if (!s) return book.finding("orphan_delta", `${type.slice(9)} for an item that never started`);
      book.file(event, s.slot);
      if (typeof event.delta === "string") {
        s.args += event.delta;
        // (the SDK appends it to the finished text it holds, a snapshot's too: that text is judged as well)
        if (s.final !== undefined) s.after = (s.after ?? "") + event.delta;
      }
    } else if (type === "response.custom_tool_call_input.done") {
      const s = this.#find(event, book);
      if (!s) {
        return book.finding("orphan_delta", "custom_tool_call_input.done for an item that never started");
      }
      book.file(event, s.slot);
      if (typeof event.input === "string") finish(s, event.input);
    } else if (type === "response.function_call_arguments.done") {
      const s = this.#find(event, book);
      if (!s) {
        return book.finding("orphan_delta", "function_call_arguments.done for an item that never started");
      }
      book.file(event, s.slot);
      if (typeof event.arguments === "string") finish(s, event.arguments);
      if (typeof event.name === "string" && event.name !== "" && s.name === "") s.name = event.name;
    } else if (SNAPSHOTS.has(type) && isRecord(event.response) && Array.isArray(event.response.output)) {
      this.#snapshot(event.response.output, book);
    }
  }

  /**
   * The call an event addresses, by `output_index` (as the SDK reads it: `output["1"]` is `output[1]`; one
   * at no whole number addresses no item, and the SDK throws) or else by `item_id`.
   */
  #find(event: Record<string, unknown>, book: SlotBook): Slot | undefined {
    const oi = arrayIndex(event.output_index);
    if (oi === undefined && event.output_index != null) {
      book.finding(
        "malformed_event",
        `output_index ${shown(event.output_index)} is no whole number from 0 up`,
      );
    }
    if (oi !== undefined && book.get(`o${oi}`)) return book.get(`o${oi}`);
    return typeof event.item_id === "string" ? this.#byItemId.get(event.item_id) : undefined;
  }

  /** An `output_item.added` or `.done` event: opens the call or completes it. */
  #item(event: Record<string, unknown>, item: Record<string, unknown>, book: SlotBook): void {
    if (!isClientCall(item)) return;
    let s = this.#find(event, book);
    if (!s) {
      // A call at no output index gets a key no index reaches (an index's later events must not join it,
      // nor it a call added at that index: the clients keep them apart), found by its item id only.
      const oi = arrayIndex(event.output_index);
      s = oi === undefined
        ? book.open(`o?${book.size}`, "openai_responses", 0, -1 - book.size)
        : book.open(`o${oi}`, "openai_responses", 0, oi);
      if (typeof item.id === "string" && !this.#byItemId.has(item.id)) this.#byItemId.set(item.id, s);
    }
    book.file(event, s.slot);
    fillSlot(s, item, { done: event.type === "response.output_item.done" });
  }

  /** A snapshot is authoritative for calls the deltas may have missed (the last one read wins). */
  #snapshot(output: unknown[], book: SlotBook): void {
    output.forEach((out: unknown, i: number) => {
      if (!isClientCall(out)) return;
      fillSlot(book.get(`o${i}`) ?? book.open(`o${i}`, "openai_responses", 0, i), out, { done: true });
    });
  }
}

/**
 * Sets a call's finished arguments (`.done` events, finished items, snapshots: the last one counts). One
 * that differs from an earlier is kept as a version: clients read different ones (the openai SDK's final
 * response the snapshot, the AI SDK the finished item), so the gate judges each.
 */
function finish(s: Slot, text: string): void {
  if (s.final !== undefined && s.after !== undefined) (s.versions ??= new Set()).add(s.final + s.after);
  if (s.final !== undefined && s.final !== "" && s.final !== text) (s.versions ??= new Set()).add(s.final);
  s.final = text;
  s.after = undefined;
}

/** Writes what a call item says into its slot; a finished item's arguments are authoritative. */
function fillSlot(s: Slot, item: Record<string, unknown>, { done }: { done: boolean }): void {
  if (typeof item.call_id === "string" && item.call_id !== "") s.id = item.call_id;
  const name = callName(item);
  if (name !== "") s.name = name;
  let args: string | undefined;
  if (item.type === "function_call") args = typeof item.arguments === "string" ? item.arguments : undefined;
  else if (item.type === "custom_tool_call") {
    s.freeText = true;
    args = typeof item.input === "string" ? item.input : undefined;
  } else {args = item.action !== undefined || item.operation !== undefined
      ? builtinArguments(item)
      : undefined;}
  if (args === undefined) return;
  if (done) finish(s, args);
  else if (args !== "" && s.args === "") s.args = args;
}

// ---------------------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------------------

/** Opens the call of a `tool_use` block: its id, name and any input it came with. */
function openToolUse(book: SlotBook, key: string, slot: number, block: Record<string, unknown>): void {
  const s = book.open(key, "anthropic", 0, slot);
  if (typeof block.id === "string") s.id = block.id;
  if (typeof block.name === "string") s.name = block.name;
  if (isRecord(block.input)) s.startInput = block.input;
  if (isRecord(block.input) && Object.keys(block.input).length > 0) {
    s.initialInput = JSON.stringify(block.input);
  }
}

/**
 * A content block's `index` as the Anthropic SDK reads it: it finds a delta's block with `content.at(index)`
 * but writes the block back to `content[index]`, so a delta at an index that is no whole number from 0 up
 * (`1.5`, `NaN`) never reaches its final message: read as missing (a start is judged without its deltas, a
 * delta joins no call), with a finding. The text of a whole number (`"1"`) is that block.
 */
function blockIndex(value: unknown, book: SlotBook): number | undefined {
  if (value == null) return undefined;
  const whole = arrayIndex(value);
  if (whole === undefined) {
    book.finding("malformed_event", `content block index ${shown(value)} is no whole number from 0 up`);
  }
  return whole;
}

/**
 * The block indices of each stream's tools the server runs (`server_tool_use`, `mcp_tool_use`: an `input`
 * that streams as `input_json_delta` as a call's does): their deltas are theirs, not orphans, and no call.
 */
const serverTools = new WeakMap<SlotBook, Set<number>>();

/** Reads `tool_use` content blocks and their `input_json_delta` pieces, one call per block index. */
const anthropicEvents: EventReader = {
  read(event: Record<string, unknown>, book: SlotBook): void {
    const index = blockIndex(event.index, book);
    if (event.type === "message_start" && isRecord(event.message) && Array.isArray(event.message.content)) {
      // Anthropic starts with no content; a client that keeps what comes here would run a call in it.
      event.message.content.forEach((block, i) => {
        if (isRecord(block) && block.type === "tool_use") openToolUse(book, `a${i}`, i, block);
      });
    } else if (event.type === "content_block_start" && isRecord(event.content_block)) {
      const block = event.content_block;
      if (block.type !== "tool_use") {
        if ("input" in block && index !== undefined) {
          const own = serverTools.get(book) ?? serverTools.set(book, new Set()).get(book)!;
          own.add(index);
        }
        return;
      }
      if (index === undefined) {
        // Judged all the same (a client may take the block in order): the gate cannot place its pieces.
        book.finding(
          "missing_index",
          "content_block_start has no index; its call is judged without its input deltas",
        );
        return void openToolUse(book, `a?${book.size}`, -1, block);
      }
      openToolUse(book, `a${index}`, index, block);
    } else if (event.type === "content_block_delta" && isRecord(event.delta)) {
      if (event.delta.type !== "input_json_delta") return;
      const s = index === undefined ? undefined : book.get(`a${index}`);
      if (!s && index !== undefined && serverTools.get(book)?.has(index)) return;
      if (!s) {
        return book.finding(
          "orphan_delta",
          `input_json_delta for content block ${index} that is not a tool_use`,
        );
      }
      if (typeof event.delta.partial_json === "string") s.args += event.delta.partial_json;
      else book.finding("malformed_event", "input_json_delta without partial_json text");
    }
  },
};

// ---------------------------------------------------------------------------------------------------------
// Ollama `/api/chat`
// ---------------------------------------------------------------------------------------------------------

/** Reads `message.tool_calls`: Ollama sends each call whole, so every entry is a new call. */
const ollamaEvents: EventReader = {
  read(event: Record<string, unknown>, book: SlotBook): void {
    const message = isRecord(event.message) ? event.message : undefined;
    if (!message || message.tool_calls === undefined || message.tool_calls === null) return;
    if (!Array.isArray(message.tool_calls)) {
      return book.finding("malformed_event", "message.tool_calls is not an array");
    }
    for (const tc of message.tool_calls) {
      if (!isRecord(tc)) {
        book.finding("malformed_event", "a tool call is not an object");
        continue;
      }
      const fn = isRecord(tc.function) ? tc.function : tc;
      const s = book.open(`l${book.size}`, "ollama", 0, book.size);
      if (typeof tc.id === "string") s.id = tc.id;
      if (typeof fn.name === "string") s.name = fn.name;
      if (typeof fn.arguments === "string") s.args = fn.arguments;
      else if (fn.arguments !== undefined) {
        s.args = safeStringify(fn.arguments);
        s.value = fn.arguments;
      }
    }
  },
};

// ---------------------------------------------------------------------------------------------------------
// Google Gemini
// ---------------------------------------------------------------------------------------------------------

/** The candidates of a body or chunk (records only). */
export function candidates(body: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(body.candidates) ? body.candidates.filter(isRecord) : [];
}

/**
 * Whether a Gemini body or chunk lists a candidate away from its own place: its `index` (absent: 0, as
 * Gemini leaves out a zero) is not its position in `candidates`. The gate reads a chunk's candidates by
 * place (as clients do), Gemini numbers them by `index`: where the two differ, which answer a retry would
 * continue is in doubt, and the turn is not retried.
 *
 * @example
 * ```ts
 * import { candidatesOutOfPlace } from "./readers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(candidatesOutOfPlace({ candidates: [{ index: 1 }, { index: 0 }] }), true);
 * assert.equal(candidatesOutOfPlace({ candidates: [{}, { index: 1 }] }), false);
 * assert.equal(candidatesOutOfPlace({ candidates: [{ index: 0 }, {}, { index: 2 }] }), false);
 * assert.equal(candidatesOutOfPlace({ candidates: [{}, { content: {} }] }), true); // (no index: 0)
 * ```
 */
export function candidatesOutOfPlace(body: Record<string, unknown> | undefined): boolean {
  const all = Array.isArray(body?.candidates) ? body.candidates : [];
  // (an empty candidate holds a place for the one after it, as the gate's own chunks do: it names none)
  return all.some((c, place) => isRecord(c) && Object.keys(c).length > 0 && (c.index ?? 0) !== place);
}

/** The parts of a candidate (records only). */
export function parts(candidate: Record<string, unknown>): Record<string, unknown>[] {
  const content = isRecord(candidate.content) ? candidate.content : undefined;
  return content && Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];
}

/**
 * Reads `functionCall` parts: each arrives whole, so every one is a new call. A call's `choice` is its
 * candidate's position in the chunk, not its `index`: the clients read each chunk's first candidate as the
 * answer, and the gate watches the text of each position for calls written into it.
 */
const geminiEvents: EventReader = {
  read(event: Record<string, unknown>, book: SlotBook): void {
    const all = Array.isArray(event.candidates) ? event.candidates : [];
    for (const [choice, c] of all.entries()) {
      if (!isRecord(c)) continue;
      for (const p of parts(c)) {
        if (!isRecord(p.functionCall)) continue;
        const fc = p.functionCall;
        const s = book.open(`g${book.size}`, "gemini", choice, book.size);
        if (typeof fc.id === "string") s.id = fc.id;
        if (typeof fc.name === "string") s.name = fc.name;
        s.value = fc.args ?? {};
        s.args = JSON.stringify(s.value);
      }
    }
  },
};

// ---------------------------------------------------------------------------------------------------------
// Cohere v2 chat
// ---------------------------------------------------------------------------------------------------------

/** The `delta.message` of a stream event. */
export function deltaMessage(event: Record<string, unknown>): Record<string, unknown> {
  const delta = isRecord(event.delta) ? event.delta : {};
  return isRecord(delta.message) ? delta.message : {};
}

/**
 * Reads `tool-call-start` / `tool-call-delta` events into one call per `index`, and files every call event
 * (`tool-call-end` too) under the position of its call ({@linkcode SlotBook.file}): the gate's router
 * drops a rejected call's events by it, so the events dropped are those of the call judged.
 */
const cohereEvents: EventReader = {
  read(event: Record<string, unknown>, book: SlotBook): void {
    const type = event.type;
    if (type !== "tool-call-start" && type !== "tool-call-delta" && type !== "tool-call-end") return;
    let index = arrayIndex(event.index);
    if (type === "tool-call-end") {
      // It carries nothing to judge: filed under its index as a client reads it, else the call opened last.
      const at = index ?? book.lastIn(0)?.slot;
      if (at !== undefined) book.file(event, at);
      return;
    }
    if (index === undefined) {
      // Judged all the same: a start opens a call of its own, a delta joins the last one.
      book.finding("missing_index", `${type} has no index; it was matched by order`);
      const last = book.lastIn(0);
      index = type === "tool-call-delta" && last ? last.slot : -1 - book.size;
    }
    book.file(event, index);
    const tc = deltaMessage(event).tool_calls;
    const call = isRecord(tc) ? tc : {};
    const fn = isRecord(call.function) ? call.function : {};
    let s = book.get(`h${index}`);
    if (type === "tool-call-start" || !s) {
      if (!s && type === "tool-call-delta") {
        book.finding("orphan_delta", `tool-call-delta for call ${index} that never started`);
      }
      s = book.open(`h${index}`, "cohere", 0, index);
    }
    if (typeof call.id === "string" && call.id !== "") s.id = call.id;
    if (typeof fn.name === "string" && fn.name !== "") {
      // The AI SDK runs the call under its start's name; a client that takes each name sent, under the
      // last: a delta naming another tool is judged under both.
      if (type === "tool-call-start" || s.name === "") s.name = fn.name;
      else if (fn.name !== s.name) s.lastName = fn.name;
    }
    if (typeof fn.arguments === "string") s.args += fn.arguments;
  },
};

/**
 * A new reader for each dialect's events (one per stream: readers keep state between the events of their
 * dialect).
 */
export const READERS: Readonly<Record<StreamDialect, () => EventReader>> = {
  openai_chat: () => new ChatEvents(),
  openai_responses: () => new ResponsesEvents(),
  anthropic: () => anthropicEvents,
  ollama: () => ollamaEvents,
  gemini: () => geminiEvents,
  cohere: () => cohereEvents,
};
