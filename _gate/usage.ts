/**
 * Token usage across the attempts of a transparent retry: where each dialect reports it (in a body and in
 * its stream events), and the sum the client is shown.
 *
 * A retry is two (or more) requests the client never made, and both are billed. So the client sees the sum
 * of every attempt's usage in the answer it gets: the field it already reads (`usage`, `usageMetadata`,
 * Ollama's counts) holds the total, as it would had the client retried itself and added the bills up. A
 * user paying for tokens, or a budget that stops an agent, wants what was spent; keeping only the last
 * attempt's usage would hide the cost of the retry. The price is that `input_tokens` then counts the
 * prompt once per attempt, so it overstates how full the context is: a client that sizes its context from
 * it should read each attempt's own figures, which `guardFetch` reports in `onVerdict` (`GateEvent.usage`).
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import type { StreamDialect } from "./calls.ts";

/** Usage as a provider nests it: counts, nested counts, the odd label (`service_tier`). */
export type Usage = Record<string, unknown>;

/** Ollama reports its counts and timings at the top level of the final chunk (or body). */
const OLLAMA_KEYS = [
  "prompt_eval_count",
  "eval_count",
  "total_duration",
  "load_duration",
  "prompt_eval_duration",
  "eval_duration",
] as const;

/** Where a body or stream event of `dialect` keeps its usage object (a path of keys), if it has one. */
function usagePath(dialect: StreamDialect, record: Record<string, unknown>): string[] | undefined {
  const at = (...path: string[]) => {
    let v: unknown = record;
    for (const k of path) v = isRecord(v) ? v[k] : undefined;
    return isRecord(v) ? path : undefined;
  };
  switch (dialect) {
    case "openai_chat":
      return at("usage");
    case "openai_responses":
      return at("response", "usage") ?? at("usage");
    case "anthropic":
      return record.type === "message_start" ? at("message", "usage") : at("usage");
    case "gemini":
      return at("usageMetadata");
    case "cohere":
      return record.type === "message-end" ? at("delta", "usage") : at("usage");
    default:
      return undefined;
  }
}

/** The usage a body or stream event reports, or undefined when it reports none. */
export function usageIn(dialect: StreamDialect, record: Record<string, unknown>): Usage | undefined {
  if (dialect === "ollama") {
    if (record.done !== true) return undefined;
    const out: Usage = {};
    for (const k of OLLAMA_KEYS) if (typeof record[k] === "number") out[k] = record[k];
    return Object.keys(out).length > 0 ? out : undefined;
  }
  const path = usagePath(dialect, record);
  if (!path) return undefined;
  let v: unknown = record;
  for (const k of path) v = (v as Record<string, unknown>)[k];
  return v as Usage;
}

/** A copy of `record` reporting `usage` where it reported its own. */
export function withUsage(
  dialect: StreamDialect,
  record: Record<string, unknown>,
  usage: Usage,
): Record<string, unknown> {
  if (dialect === "ollama") return { ...record, ...usage };
  const path = usagePath(dialect, record);
  if (!path) return record;
  const put = (obj: Record<string, unknown>, i: number): Record<string, unknown> =>
    i === path.length - 1
      ? { ...obj, [path[i]]: usage }
      : { ...obj, [path[i]]: put(obj[path[i]] as Record<string, unknown>, i + 1) };
  return put(record, 0);
}

/** `a` with `b`'s fields on top, nested objects merged (a stream's later usage updates its earlier). */
export function mergeUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return b;
  const out: Usage = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = isRecord(v) && isRecord(a[k]) ? mergeUsage(a[k] as Usage, v) : v;
  }
  return out;
}

/**
 * The usage of two attempts together: counts added, nested counts too (Gemini's per-modality lists by
 * `modality`); anything else (`service_tier`) is `b`'s.
 */
export function sumUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return b;
  const out: Usage = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const old = a[k];
    if (typeof v === "number" && typeof old === "number") out[k] = old + v;
    else if (isRecord(v) && isRecord(old)) out[k] = sumUsage(old, v);
    else if (Array.isArray(v) && Array.isArray(old)) out[k] = sumByModality(old, v);
    else if (v !== undefined && v !== null) out[k] = v;
  }
  return out;
}

/** Gemini's `[{ modality, tokenCount }]` lists added up by modality; other lists are `b`. */
function sumByModality(a: unknown[], b: unknown[]): unknown[] {
  const keyed = (xs: unknown[]) => xs.every((x) => isRecord(x) && typeof x.modality === "string");
  if (!keyed(a) || !keyed(b)) return b;
  const out = new Map<string, Usage>();
  for (const x of [...a, ...b] as Usage[]) {
    out.set(x.modality as string, sumUsage(out.get(x.modality as string), x));
  }
  return [...out.values()];
}

/**
 * The usage of one streamed attempt as its events pass, and the events rewritten to report the total of
 * every attempt so far (on a retry's stream; the first attempt's events stay as they came).
 */
export class UsageTally {
  readonly #dialect: StreamDialect;
  /** What the attempts before this one used; undefined on the first. */
  readonly #before: Usage | undefined;
  #own: Usage | undefined;

  /** A tally for a stream of `dialect`, after attempts that used `before`. */
  constructor(dialect: StreamDialect, before?: Usage) {
    this.#dialect = dialect;
    this.#before = before;
  }

  /** Reads an event as the provider sent it. */
  read(event: Record<string, unknown>): void {
    const usage = usageIn(this.#dialect, event);
    // Each event's usage is the attempt's running total so far (Anthropic's message_delta updates the
    // counts of its message_start), so the latest fields win.
    if (usage) this.#own = mergeUsage(this.#own, usage);
  }

  /**
   * The event the client is to see: on a retry's stream, one that reports usage reports every attempt's
   * together (this attempt's running total plus the attempts before); undefined when it stays as it is.
   */
  adjust(event: Record<string, unknown>): Record<string, unknown> | undefined {
    if (!this.#before || !this.#own || !usageIn(this.#dialect, event)) return undefined;
    return withUsage(this.#dialect, event, sumUsage(this.#before, this.#own));
  }

  /** This attempt's usage, as the provider reported it. */
  get own(): Usage | undefined {
    return this.#own;
  }

  /** Every attempt's usage so far, together. */
  get total(): Usage | undefined {
    return this.#own ? sumUsage(this.#before, this.#own) : this.#before;
  }
}
