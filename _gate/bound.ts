/**
 * The bound on what the gate holds of one provider answer (`maxResponseBytes`): a JSON body is read whole
 * before it is judged, a stream's unfinished frame and its withheld frames wait in memory, so a provider
 * that never stops (a body without end, a frame without a newline, a call whose arguments never close)
 * would grow them without limit. Past the bound the gate stops reading (the provider's body is cancelled)
 * and tells the client, releasing nothing it has not judged.
 *
 * @module
 */
import { byteCount, concatBytes } from "../_common/bytes.ts";
import type { StreamDialect } from "./calls.ts";

/** The default of `maxResponseBytes`: 64 MiB, far above any answer a model writes. */
export const DEFAULT_MAX_RESPONSE_BYTES: number = 64 * 1024 * 1024;

/** The header the OpenAI and Anthropic SDKs obey over the status when deciding whether to retry. */
const NO_RETRY = { "x-should-retry": "false" };

/** The message a client reads when an answer passed the bound; `what` says which part of it did. */
export function tooLargeMessage(limit: number, what: string): string {
  const bound = byteCount(limit);
  return `toolguard: ${what} passed maxResponseBytes (${bound}), so the gate stopped reading it and ` +
    "passed on nothing it had not judged. Raise guardFetch's maxResponseBytes option if answers this large " +
    "are expected.";
}

/** Thrown (and errored into a gated stream) when a stream passes the bound. */
export class ResponseTooLargeError extends Error {
  /** Creates the error; `what` says which part of the stream passed `limit`. */
  constructor(limit: number, what: string) {
    super(tooLargeMessage(limit, what));
    this.name = "ResponseTooLargeError";
  }
}

/**
 * The whole of `body`, or undefined (and `body` cancelled) once it passes `limit` bytes. Reads chunk by
 * chunk, as `Response.arrayBuffer()` does, so an answer under the bound costs what it did.
 */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // Not awaited: a branch of a tee (a clone's body) settles its cancel only once the other is cancelled.
      reader.cancel(new ResponseTooLargeError(limit, "the answer")).catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}

/**
 * The answer a client gets in place of a whole (not streamed) answer past the bound: status 413 with the
 * provider's own error shape, so the official clients raise it as an API error carrying the message.
 *
 * Why 413 and not 502: the SDKs (openai, @anthropic-ai/sdk) and most retrying middleware retry 408, 409,
 * 429 and every 5xx, which would send (and bill) the request again only to meet the same answer; no client
 * retries another 4xx (`x-should-retry: false` says so again to the two SDKs that read it).
 */
export function tooLargeResponse(dialect: StreamDialect, limit: number): Response {
  const body = errorBody(dialect, tooLargeMessage(limit, "the provider's answer"));
  return Response.json(body, { status: 413, statusText: "Content Too Large", headers: NO_RETRY });
}

/** An error body in the shape each provider sends its errors in (where its client reads the message). */
function errorBody(dialect: StreamDialect, message: string): unknown {
  switch (dialect) {
    case "anthropic":
      return { type: "error", error: { type: "response_too_large", message } };
    case "ollama":
      return { error: message };
    case "gemini":
      return { error: { code: 413, message, status: "FAILED_PRECONDITION" } };
    case "cohere":
      return { message };
    default:
      return { error: { message, type: "response_too_large", param: null, code: "max_response_bytes" } };
  }
}
