/**
 * The state of one extraction: the text, what has been recovered, and the limits that keep reading linear.
 *
 * @module
 */
import { type Finder, makeFinder } from "./text.ts";
import type { Typer } from "./typing.ts";
import type { ExtractedToolCall, ExtractFinding, ExtractFindingCode, ExtractFormat } from "./types.ts";

/** A call as a reader builds it; `format`, spans and `raw` are filled in from the arguments of `Scan.add`. */
export interface CallDraft {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
  error?: string;
}

/** One extraction in progress. Readers append calls and findings to it. */
export class Scan {
  /** The calls recovered so far, in text order. */
  readonly calls: ExtractedToolCall[] = [];
  /** The findings so far. */
  readonly findings: ExtractFinding[] = [];
  /** `text.indexOf` remembered per needle (see {@link makeFinder}). */
  readonly find: Finder;
  /**
   * The earliest index where markup ran out of text before it could be decided: more text could still make
   * a call of it. `Infinity` when nothing did. Read by `callMayStart`.
   */
  ranOutAt = Infinity;
  /** Markup that runs out before this index is not recorded in {@link Scan.ranOutAt}. */
  ranOutFrom = 0;
  /** Set when the message opens with a JSON value that is not a call: it is a JSON answer, not prose. */
  jsonAnswer = false;
  /** The bodies of fenced code blocks of other languages that were skipped whole, with their language. */
  readonly codeFences: { start: number; end: number; lang: string }[] = [];
  #budget: number;

  /**
   * @param text The message text.
   * @param typer Types text values and knows the declared tool names.
   */
  constructor(readonly text: string, readonly typer: Typer) {
    this.find = makeFinder(text);
    // Readers that may be tried at many positions (call-shaped text without a marker) share this many code
    // units of scanning; past it they give up, which keeps hostile input linear.
    this.#budget = 8 * text.length + 4096;
  }

  /** How many code units of scanning are left in the shared budget. */
  allowance(): number {
    return Math.max(0, this.#budget);
  }

  /** Takes `n` code units of scanning from the shared budget; false once it is spent. */
  spend(n: number): boolean {
    this.#budget -= n;
    return this.#budget >= 0;
  }

  /** Notes that markup starting at `at` needs more text before it can be decided. */
  ranOut(at: number): void {
    if (at >= this.ranOutFrom && at < this.ranOutAt) this.ranOutAt = at;
  }

  /**
   * Adds a call read from `text[start, end)` inside the markup `block`. A call without a name becomes an
   * `unreadable_call` finding instead. With `weak` (call-shaped text without a marker), a name that was not
   * declared becomes an `undeclared_bare_call` finding. Returns whether the call was added.
   */
  add(
    draft: CallDraft,
    format: ExtractFormat,
    start: number,
    end: number,
    block: { start: number; end: number },
    options: { weak?: boolean } = {},
  ): boolean {
    if (draft.name === "") {
      this.note("unreadable_call", format, start, `a ${format} call at offset ${start} has no tool name`);
      return false;
    }
    if (options.weak && !this.typer.isDeclared(draft.name)) {
      this.note(
        "undeclared_bare_call",
        format,
        start,
        `text at offset ${start} is shaped like a call to "${draft.name}", which is not among the declared tools`,
      );
      return false;
    }
    const call: ExtractedToolCall = {
      name: draft.name,
      arguments: draft.arguments,
      format,
      start,
      end,
      block, // shared by the calls of one block; a reader may still move its end
      raw: this.text.slice(start, end),
    };
    if (draft.id !== undefined) call.id = draft.id;
    if (draft.error !== undefined) call.error = draft.error;
    this.calls.push(call);
    return true;
  }

  /** Records a finding. */
  note(code: ExtractFindingCode, format: ExtractFormat, offset: number, message: string): void {
    this.findings.push({ code, format, offset, message });
  }

  /** Records that markup of `format` at `offset` could not be read. */
  unreadable(format: ExtractFormat, offset: number, why: string): void {
    this.note(
      "unreadable_call",
      format,
      offset,
      `${format} markup at offset ${offset} could not be read: ${why}`,
    );
  }
}
