/**
 * The HTTP relay: a stdio client on one side, a Streamable HTTP MCP server (`POST` per message, answers as
 * JSON or as a server-sent event stream, `Mcp-Session-Id`, an optional `GET` stream for the server's own
 * requests) on the other, judged by the same guard session as the stdio relay. What `toolguard mcp --url`
 * runs.
 *
 * @module
 */
import { hostInput, hostOutput, onInterrupt } from "../_run/runtime.ts";
import { sseParser, withoutBom } from "../_gate/sse.ts";
import { byteCount, concatBytes, isUtf8, utf8Length } from "../_common/bytes.ts";
import { errorText, isRecord, MAX_TIMER_MS, shownAddress } from "../_common/values.ts";
import { createMcpGuard, emitTo } from "./guard.ts";
import {
  type GuardedSession,
  guardRequestSignal,
  isGuardCancel,
  MAX_HELD,
  notUtf8,
  parsedText,
} from "./session.ts";
import {
  answersWaitLeft,
  checkShutdownGrace,
  ClientFeed,
  createFramer,
  EdgeKeeper,
  encodeJson,
  encodeMessage,
  oversizedFromClient,
  oversizedFromServer,
  unwrittenFromClient,
  unwrittenFromServer,
  withNewline,
} from "./framing.ts";
import {
  answersOnly,
  decoder,
  encoder,
  idKey,
  isRequest,
  type JsonRpcId,
  type JsonRpcMessage,
  type LineEdges,
  LineFrame,
  parseMessage,
  roundsAlike,
} from "./jsonrpc.ts";
import {
  cancelledId,
  HttpSessions,
  membersOf,
  requestsOf,
  type SessionIds,
  type UnheardPost,
} from "./http_sessions.ts";
import type { McpFrame, McpGuardOptions, McpRelayExit } from "./types.ts";

/** Options for {@linkcode relayMcpHttp}. */
export interface McpHttpRelayOptions extends McpGuardOptions {
  /** What the client writes (default: this process's stdin). */
  input?: AsyncIterable<Uint8Array>;
  /** Where the client reads (default: this process's stdout). */
  output?: (bytes: Uint8Array) => void | Promise<void>;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Stop relaying. */
  signal?: AbortSignal;
  /**
   * After the client's input ends, the grace (default 2000 ms, as the stdio relay's): answers still on their
   * way are waited for until the server has been silent for the grace (counted from the later of the
   * client's leaving and the last the server sent: a POST's headers, or bytes of a body or stream), at most
   * 15 graces in all (30 s by default), and 5 graces (10 s) for a server that has sent nothing yet (it may
   * still be starting); an answer's stream the server ends early is resumed meanwhile; then they are given
   * up, and their requests answered with errors. A number of milliseconds from 0 to 2^31 - 1 (a timer's
   * longest): any other value is refused, as a `RangeError`, before anything starts. The
   * `DELETE` that then ends the server's session is waited for as long at most (and 2000 ms at most). A
   * session the server ended (HTTP 404 to its id) gives the answers still on their way in it as long, on the
   * streams it keeps open; then those are closed, and their requests answered with errors.
   */
  shutdownGraceMs?: number;
  /**
   * Longest message in bytes, either way: a longer client message is answered with an error; a longer
   * answer body or event of the server's is not relayed (its requests are answered with errors at once; it is
   * read on to its end, keeping only its ends, so that a request of the server's in it gets an error answer,
   * but for as many bytes again at most: past them its stream is closed, and only a request whose id its
   * start shows gets that answer), and its stream is not read past it. Default 64 MiB.
   */
  maxMessageBytes?: number;
  /**
   * How many of the client's requests may wait for the server at once (each is a `POST` held open until its
   * answer, or its stream, ends, and an answer past `maxMessageBytes` until it is read on to its end,
   * though its requests are answered at once; one the server takes with 202 Accepted, to answer on its own
   * stream, ends its `POST` and frees its place at once; one the client cancelled before the server sent
   * its headers gives its place, its `POST` ended, to the next request that needs it, or to none as the
   * client leaves, so that its cancel goes). A request past them is not sent: it is answered at once with a
   * JSON-RPC error telling the client to wait for answers before sending more, so a client that floods the
   * relay opens no more connections and still gets an answer to
   * every request. Notifications and the client's answers to the server's requests are never refused (no
   * answer could say so, and the server may wait for an answer), and have places of their own, as many again
   * each: past them, the relay reads no more of the client's input until one is free (such a POST is short:
   * 202 Accepted), but for the client's answers, which pass a notification waiting for its place. The
   * guard's own `tools/list`, which it sends to judge a call, is not the client's: it is sent whatever the
   * client has in flight. Default 64.
   */
  maxInFlight?: number;
}

/** JSON-RPC error code for a failure of the transport (the SDK's "connection closed"). */
const TRANSPORT_ERROR = -32000;

/**
 * Resuming an event stream: the wait before a `GET` with `Last-Event-ID` when the server gave no `retry:`
 * (the MCP SDK's first reconnection delay), the least wait (so that `retry: 0` cannot make a busy loop) and
 * the most (a timer's limit; MCP says to wait the server's `retry:`), and how many resumptions in a row may
 * fail before the request is answered with an error.
 */
const RESUME = { defaultMs: 1000, minMs: 50, maxMs: MAX_TIMER_MS, failures: 3 } as const;

/** How many of the client's requests wait for the server at once, when `maxInFlight` does not say. */
const MAX_IN_FLIGHT = 64;

/** How long the `DELETE` that ends the server's session may take at most (see `HttpRelay.#endSession`). */
const END_SESSION_MS = 2000;

/** How many redirects within the server's origin a request follows (see `HttpRelay.#fetch`). */
const MAX_REDIRECTS = 5;

/**
 * The redirects a request follows, with its method and body (see `HttpRelay.#fetch`): 303 (See Other) too,
 * but only to a `GET`.
 */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** How much of an HTTP error's body is read: its start is quoted in the error the client gets. */
const ERROR_BODY_BYTES = 4096;

/**
 * An answer body or event longer than `maxMessageBytes`: not relayed (read on to its end in the background
 * only for the server's requests in it, keeping its ends), and not resumed (the server would replay it).
 */
class TooLong extends Error {
  /** The message read on to its end in the background (see `HttpRelay.#readOn`): its POST waits for it. */
  readingOn: Promise<void> = Promise.resolve();
  constructor(max: number, what: string) {
    super(`${what} runs past the relay's limit of ${byteCount(max)} (maxMessageBytes); it was not relayed`);
    this.name = "TooLong";
  }
}

/**
 * A redirect `HttpRelay.#fetch` does not follow: elsewhere, past its limit, or of a status it never follows.
 */
class RedirectRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedirectRefused";
  }
}

/**
 * Why a request taken with 202 Accepted in a session the client left (a new `initialize` went) is answered
 * with an error: its answer could only come on that session's own stream, which the relay left.
 */
const LEFT_FOR_NEW_SESSION = "the client started a new session (initialize) before it was answered there";

/**
 * Why a request in a session the server ended is answered with an error: MCP has a server answer HTTP 404 to
 * the id of a session it ended, and the client start a new one.
 */
const SESSION_ENDED =
  "it ended the session (HTTP 404 Not Found to its Mcp-Session-Id, as MCP lets a server " +
  "do at any time); send initialize again to start a new session, then send the request again";

/** Where an answer's event stream stopped: its last event id and the server's `retry:` delay, if given. */
interface StreamEnd {
  lastEventId?: string;
  retryMs?: number;
}

/** Wait `ms`, or less when `signal` aborts (no wait when it has). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * An event id as a `Last-Event-ID` value: its UTF-8 bytes, one character each, as the SSE standard sends it
 * and as `fetch` takes a header (a ByteString).
 */
function lastEventIdHeader(id: string): string {
  return String.fromCharCode(...new TextEncoder().encode(id));
}

/**
 * The start of an HTTP error's body (up to {@linkcode ERROR_BODY_BYTES}), the rest cancelled: a server may
 * send an error body without end.
 */
async function errorBodyStart(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // What came before the break is still worth quoting.
  } finally {
    reader.cancel().catch(() => {});
  }
  return decoder().decode(concatBytes(chunks, size).subarray(0, ERROR_BODY_BYTES));
}

/** The HTTP relay behind the public `relayMcpHttp` (`_mcp/relays.ts`, which documents it). */
export async function relayMcpHttp(url: string, options: McpHttpRelayOptions = {}): Promise<McpRelayExit> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const stopListening = options.input === undefined ? onInterrupt(stop) : () => {};
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    return await new HttpRelay(url, options, controller.signal).run();
  } finally {
    stopListening();
    // (a caller's signal that outlives the relay, one for many relays, must not keep each one's listener)
    options.signal?.removeEventListener("abort", stop);
  }
}

/** One relay between a stdio client and a Streamable HTTP server. */
class HttpRelay {
  readonly #url: string;
  /** The server's address as messages show it (see {@linkcode shownAddress}). */
  readonly #shown: string;
  readonly #options: McpHttpRelayOptions;
  /** The longest message either way (`maxMessageBytes`). */
  readonly #max: number;
  /** What of `headers` an error's text must not show (see {@linkcode headerValues}). */
  readonly #headerValues: string[];
  readonly #signal: AbortSignal;
  readonly #session: GuardedSession;
  readonly #output: (bytes: Uint8Array) => void | Promise<void>;
  #outChain: Promise<void> = Promise.resolve();
  /**
   * The client's line of each message the session passed on unchanged: its `POST` sends it as it came (see
   * {@linkcode HttpRelay.#post}), so that numbers past 2^53 and the client's own text reach the server.
   */
  readonly #linesOf = new WeakMap<object, Uint8Array>();
  /** The sessions, and what each message and request belongs to (see {@linkcode HttpSessions}). */
  readonly #sessions: HttpSessions;
  /** How many POSTs carrying requests are in flight, and how many may be (`maxInFlight`). */
  #requestPosts = 0;
  readonly #maxInFlight: number;
  /**
   * The places of POSTs without requests, as many again for notifications and for the client's answers: an
   * answer never waits behind a notification (the server may need it before it frees a place).
   */
  readonly #notificationPlaces: Places;
  readonly #answerPlaces: Places;
  /** The client's order for what the server receives (see {@linkcode HttpRelay.#toServer}). */
  readonly #order = new SendOrder();
  /**
   * The `initialize` not answered yet, which what the client sends after it waits for: the last one sent. One
   * sent while another was unanswered waits behind it (see {@linkcode HttpRelay.#sendInitialize}).
   */
  #initialize: InitializeWait | undefined;
  /** Every `initialize` not answered yet, oldest first (the client may cancel any of them). */
  readonly #initializes: InitializeWait[] = [];
  /** The server's own stream: not asked for yet, being opened or read (or resumed), or over. */
  #stream: "idle" | "open" | "over" = "idle";
  /** How the server's own stream ended, for the requests it can no longer answer. */
  #streamOver = "";
  /**
   * Requests the server took with 202 Accepted: answered on its own stream, or with an error once it is over.
   */
  #onStream: { id: JsonRpcId; method: string }[] = [];
  /** Ends the server's own stream when the relay ends. */
  readonly #listenStop = new AbortController();
  /** Ends the server's own stream of this session (see {@linkcode HttpRelay.#leaveStream}). */
  #streamStop: AbortController | undefined;
  /** Aborted once the client has closed its side: answers in flight are still read, and resumed. */
  readonly #clientGone = new AbortController();
  /** Aborted when the grace after the client left is over: answers still in flight are given up. */
  readonly #giveUp = new AbortController();
  /**
   * When (`performance.now()`) the server last sent the relay anything (a POST's headers, or bytes of a body
   * or a stream); null while it has said nothing: after the client left, answers are waited for by it.
   */
  #heardAt: number | null = null;
  /**
   * Ends a POST and the resumption of its stream: the relay stopped, or the wait after the client left is
   * over (a server that ends an answer's stream to be asked again, as MCP's polling has it, still answers).
   */
  readonly #postSignal: AbortSignal;
  /**
   * Of each session, what its POSTs and their resumptions go by (see {@linkcode HttpRelay.#ends}):
   * `#postSignal`, and once the server ended it, the end of the grace its streams get after the 404.
   */
  readonly #endsOf = new WeakMap<SessionIds, { over: AbortController; post: AbortSignal }>();

  constructor(url: string, options: McpHttpRelayOptions, signal: AbortSignal) {
    this.#url = url;
    this.#shown = shownAddress(url);
    this.#options = options;
    this.#max = options.maxMessageBytes ?? 64 * 1024 * 1024;
    this.#maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    if (!Number.isInteger(this.#maxInFlight) || this.#maxInFlight < 1) {
      throw new RangeError(`maxInFlight must be a whole number from 1 up, got ${options.maxInFlight}`);
    }
    checkShutdownGrace(options.shutdownGraceMs);
    this.#notificationPlaces = new Places(this.#maxInFlight);
    this.#answerPlaces = new Places(this.#maxInFlight);
    this.#headerValues = headerValues(options.headers);
    this.#signal = signal;
    this.#postSignal = AbortSignal.any([signal, this.#giveUp.signal]);
    this.#output = options.output ?? hostOutput();
    const guard = createMcpGuard({ ...options, batches: options.batches ?? "split" });
    // (a GuardedSession, whose `answered` the relay waits on: see #acceptedOnceAnswered)
    this.#session = guard.connect({ toServer: this.#toServer, toClient: this.#toClient }) as GuardedSession;
    this.#sessions = new HttpSessions(this.#session.isWaiting);
    // (a new session's server restarts its ids: the guard keeps the server's requests by session, and says
    // which session each of the client's answers goes in)
    this.#session.scopeRequests({
      asked: (m) => this.#sessions.cameIn(m),
      answers: (m, ids) => this.#sessions.answerGoesIn(m, ids),
    });
  }

  /** Relay until the client's input ends or the relay is stopped. */
  async run(): Promise<McpRelayExit> {
    const aborted = new Promise<"aborted">((resolve) => {
      if (this.#signal.aborted) resolve("aborted");
      this.#signal.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    const first = await Promise.race([this.#pumpClient().then(() => "client" as const), aborted]);
    this.#clientGone.abort();
    if (first === "client") {
      // No request of the client's will need a place now: the cancels waiting for POSTs without headers go.
      this.#abandonCancelled();
      // Answers still on their way come first, while the server talks (as the stdio relay waits): a server
      // that never answers must not keep the relay (and the client waiting for it to end) alive.
      // (the give-up below also ends the grace's timer, whichever came first)
      const grace = this.#silentFor(this.#options.shutdownGraceMs ?? 2000);
      await Promise.race([this.#settled(), aborted, grace]);
      this.#giveUp.abort();
    }
    this.#listenStop.abort();
    for (const wait of [...this.#initializes]) {
      this.#initializeFailed("was still unanswered when the relay closed", wait);
    }
    this.#session.serverClosed(
      first === "client" ? "was left because the client closed" : "was left (aborted)",
    );
    await this.#endSession();
    await this.#outChain;
    const reason = first === "client" ? "client_closed" : "aborted";
    emitTo(this.#options.onEvent, { event: "exit", reason, exitCode: null, signal: null });
    // (why it ended, in the stdio relay's words: `toolguard mcp` prints it)
    const why = first === "client" ? "the client closed the connection" : "the relay was stopped";
    return { reason, exitCode: null, signal: null, detail: `${why}; the relay to ${this.#shown} ended` };
  }

  /**
   * Resolves once the server has been silent for `graceMs` since the later of now (the client's leaving) and
   * the last it sent, as {@linkcode answersWaitLeft} says, or once the relay gives up waiting.
   */
  async #silentFor(graceMs: number): Promise<void> {
    const leftAt = performance.now();
    while (!this.#giveUp.signal.aborted) {
      const left = answersWaitLeft(leftAt, this.#heardAt, graceMs);
      if (left === 0) return;
      await pause(left, this.#giveUp.signal);
    }
  }

  /**
   * Resolves once every message of the client's has been sent and no request waits for its answer: also a
   * call held for the guard's own tool list and sent
   * after the client left, and a request taken with 202 Accepted, answered on the server's own stream. A
   * stream that goes on after its answers (a server may keep it open) is not waited for. Each answer is
   * waited for as it comes (`GuardedSession.idle`), not looked for now and then; past the grace, the
   * session's closing ends the wait.
   */
  async #settled(): Promise<void> {
    while (!this.#giveUp.signal.aborted) {
      await this.#session.released(); // (ends once the session closes, if not before)
      await this.#order.sent(); // (notifications still waiting their turn go too)
      if (this.#session.pending === 0) return;
      await this.#session.idle(); // (or once the session closes, as the grace ends)
    }
  }

  readonly #toClient = (frame: McpFrame): Promise<void> => {
    // (the server's text as it came, when the session passed it on unchanged: see #fromServerText)
    const bytes = frame.bytes !== undefined
      ? withNewline(frame.bytes)
      : encodeMessage(frame.message, (message, why) =>
        unwrittenFromServer(message, {
          emit: (event) => emitTo(this.#options.onEvent, event),
          toServer: (answer) => {
            this.#session.answeredForClient(answer); // (in its request's session)
            void this.#toServer({ message: answer });
          },
        }, why));
    this.#outChain = this.#outChain.then(async () => {
      try {
        await this.#output(bytes);
      } catch {
        // The client stopped reading: nothing more to deliver.
      }
    });
    return this.#outChain;
  };

  /**
   * Send one frame as a POST; its answer (JSON or an event stream) goes to the session. Never throws. The
   * server receives the client's requests and notifications in the order the client wrote them, as over
   * stdio (each POST is its own connection's, so POSTs sent at once may arrive in any order, and a
   * `notifications/cancelled` before the request it cancels): see {@linkcode SendOrder}. Past `maxInFlight`,
   * its requests are answered with an error instead (see {@linkcode HttpRelay.#refuseBusy}), and a message
   * without requests (notifications, the client's answers) waits for a place: the promise returned then,
   * which the session passes back to the client's reader, holds the client's input back.
   */
  readonly #toServer = (frame: McpFrame): void | Promise<void> => {
    const message = frame.message;
    if (frame.bytes !== undefined && typeof message === "object" && message !== null) {
      this.#linesOf.set(message, frame.bytes);
    }
    // The guard's own tools/list (one at a time) has a place of its own: refused for the client's load, it
    // would fail the calls held for it. Its POST ends once the guard gives up on it, so none outlives that.
    // (The session holds the client's messages while it waits, so nothing of the client's comes after it.)
    const own = guardRequestSignal(frame);
    if (own !== undefined) return this.#sendOwn(message, own);
    if (isGuardCancel(frame)) return this.#sendOwnCancel(message);
    // The client's answers keep no order: the server may wait for one to answer the request before it.
    if (answersOnly(message)) {
      this.#sessions.answerIn(message);
      return this.#answerPlaces.take((release) => this.#send(message, release));
    }
    // A batch's answers to requests of another session than this one go there at once, on their own (past
    // their places, they hold the client's input back, as lone answers do).
    const waits: Promise<void>[] = [];
    const rest = this.#answersHere(message, this.#sessions.current, waits);
    const sent = rest === undefined ? undefined : this.#toServerInTurn(rest);
    return waits.length === 0 ? sent : Promise.all([...waits, sent]).then(() => {});
  };

  /** {@linkcode HttpRelay.#toServer} of a message of the client's that is not only answers. */
  #toServerInTurn(message: McpFrame["message"]): void | Promise<void> {
    if (this.#initialize !== undefined && this.#holdsInitializeCancel(message)) {
      return this.#sendWithoutInitializeCancel(message);
    }
    // What follows an `initialize` not answered yet waits for its answer (see #initializeFailed), but for
    // MAX_HELD messages at most (see #pastHeld).
    const after = this.#initialize;
    if (after !== undefined && after.held.length >= MAX_HELD) return this.#pastHeld(message);
    after?.held.push(message);
    const sent = this.#sendInTurn(message, after);
    // Held for the answer to `initialize`, it does not hold the client's input back (as past MAX_HELD waiting
    // it would, until that answer): the client's cancel of that initialize, or the end of its input, must
    // still be read. MAX_HELD bounds what is held then.
    return after === undefined ? sent : undefined;
  }

  /**
   * True when `message` (one, or a batch: batches "forward") is or holds the client's cancel of an
   * `initialize` not answered yet, which is not sent (see {@linkcode HttpRelay.#initializeCancelled}).
   */
  #holdsInitializeCancel(message: McpFrame["message"]): boolean {
    return membersOf(message).some((m) => this.#initializeOf(cancelledId(m)) !== undefined);
  }

  /**
   * The client cancelled an `initialize` not answered yet: the rest of its batch goes as a batch sent then
   * does (held behind the last initialize sent, which then fails, with the rest), and the cancel is not sent.
   */
  #sendWithoutInitializeCancel(message: McpFrame["message"]): void | Promise<void> {
    const members = membersOf(message);
    const cancelled = members.flatMap((m) => this.#initializeOf(cancelledId(m)) ?? []);
    const rest = members.filter((m) => this.#initializeOf(cancelledId(m)) === undefined);
    const sent = rest.length > 0 ? this.#toServerInTurn(rest) : undefined;
    for (const wait of cancelled) this.#initializeCancelled(wait);
    return sent;
  }

  /**
   * Send a message of the client's (not only answers) in the client's order (see {@linkcode SendOrder});
   * `after`: the `initialize` not answered yet that it waits for, if one.
   */
  #sendInTurn(message: unknown, after: InitializeWait | undefined): void | Promise<void> {
    const requests = requestsOf(message);
    const cancelled = cancelledId(message);
    // A cancel waits for the POST of the request it cancels, and nothing waits for it. It goes in that POST's
    // session: a new initialize may have gone meanwhile.
    if (cancelled !== undefined) {
      const target = this.#sessions.cancelTarget(message, cancelled);
      const sent = this.#order.after(this.#sessions.unaccepted(cancelled), (accepted) => {
        const ids = this.#sessions.sessionOf(target);
        // (its request never went: nothing to cancel, see #withdrawn)
        if (ids === undefined && target !== undefined) return accepted();
        if (ids === undefined) return this.#forward(message, requests, accepted, after);
        // Its request went, in that session: whatever became of an initialize sent since, it goes there.
        this.#sessions.assign(message, ids);
        return this.#forward(message, requests, accepted);
      });
      // (what the session held for its tool list, the cancel too, may go after the client left)
      this.#abandonCancelled();
      return sent;
    }
    const initialize = requests.find((r) => r.method === "initialize");
    const kind = orderKind(message, requests.length > 0, initialize !== undefined);
    const acceptedAll = this.#sessions.trackUnaccepted(requests);
    this.#sessions.carry(message); // (until it is sent, or not: see `HttpSessions.forget`)
    if (initialize !== undefined) {
      return this.#sendInitialize(message, requests, initialize.id, kind, acceptedAll, after);
    }
    return this.#order.take(kind, (accepted) =>
      this.#forward(message, requests, () => {
        accepted();
        acceptedAll();
      }, after));
  }

  /**
   * Send the client's `initialize` (`id`, in `message`) in turn: what follows waits for its answer (see
   * {@linkcode HttpRelay.#awaitInitialize}), and it starts a new session. One sent while another (`after`)
   * is unanswered becomes the one what follows waits for at once, and starts its session once its turn
   * comes (after that answer): its own answer brings the session id and the version, and it goes without
   * the other's. When the other fails, it fails with what it held (see
   * {@linkcode HttpRelay.#initializeFailed}).
   */
  #sendInitialize(
    message: unknown,
    requests: { id: JsonRpcId; method: string }[],
    id: JsonRpcId,
    kind: OrderKind,
    acceptedAll: () => void,
    after: InitializeWait | undefined,
  ): void | Promise<void> {
    const wait = this.#awaitInitialize(id);
    return this.#order.take(kind, (accepted) => {
      void wait.over.then(() => {
        accepted();
        acceptedAll();
      });
      // The client cancelled it (or the relay closed) while it waited its turn: it is not sent, nor answered
      // (the client gave up on it; as the relay closes, the session answers it). The session before it stays.
      // (After one that failed, it was answered so: its own wait fails as that answer comes.)
      if (wait.failure !== undefined || after?.failure !== undefined) return this.#sessions.forget(message);
      // A new session (the client's first, or again after one that failed or expired).
      this.#sessions.start(message);
      this.#leaveStream();
      return this.#forward(message, requests, () => {});
    });
  }

  /** The `initialize` not answered yet that `id` (one the client cancels) names, if one. */
  #initializeOf(id: JsonRpcId | undefined): InitializeWait | undefined {
    return id === undefined ? undefined : this.#initializes.find((wait) => idKey(wait.id) === idKey(id));
  }

  /**
   * The client cancelled an `initialize` not answered yet (`wait`): what it held fails (see
   * {@linkcode HttpRelay.#initializeFailed}), and the cancel is not sent on, but reported
   * (`client_message_refused`, `cancels_initialize`): MCP forbids a client to cancel initialize, and it would
   * go without a session id (a server refuses it with 400, which read as a failed POST).
   */
  #initializeCancelled(wait: InitializeWait): void {
    this.#initializeFailed("was cancelled by the client before the server answered it", wait);
    emitTo(this.#options.onEvent, { event: "client_message_refused", kind: "cancels_initialize" });
  }

  /**
   * A message of the client's past the {@linkcode MAX_HELD} that wait for the answer to `initialize`: neither
   * sent nor held, so that the client's input is read on (for its cancel of that initialize, say). Each
   * request is answered with an error saying to wait for that answer, each notification dropped, both
   * reported (`client_message_refused`, `held_limit`); a batch's answers to the server still go.
   */
  #pastHeld(message: unknown): void {
    this.#refuseAll(
      message,
      "held_limit",
      (method) =>
        `toolguard: ${method} was not sent to the MCP server at ${this.#shown}: ${MAX_HELD} messages already ` +
        "wait for the answer to initialize; wait for that answer, then send it again",
    );
    const answers = Array.isArray(message) ? message.filter((m) => !isRecord(m) || !("method" in m)) : [];
    if (answers.length > 0) this.#answerPlaces.take((release) => this.#send(answers, release));
  }

  /**
   * Each request of a client message (one, or a batch) not sent is answered with an error (`text`, given its
   * method) and each notification dropped, both reported (`client_message_refused` of `kind`).
   */
  #refuseAll(
    message: unknown,
    kind: "held_limit" | "initialize_failed",
    text: (method: string) => string,
  ): void {
    for (const m of Array.isArray(message) ? message : [message]) {
      if (!isRecord(m) || typeof m.method !== "string") continue;
      const id = isRequest(m as JsonRpcMessage) ? m.id as JsonRpcId : undefined;
      emitTo(this.#options.onEvent, {
        event: "client_message_refused",
        kind,
        ...(id === undefined ? {} : { id }),
      });
      if (id !== undefined) this.#session.answerWithError(id, TRANSPORT_ERROR, text(m.method));
    }
  }

  /**
   * Send the guard's own `tools/list` (`stop` ends its POST) in the client's order, as a request of the
   * client's in the place of the call held for it: after the answer to `initialize` and the notifications
   * before it (sent at once, a pipelining client's call made it reach the server before the session id came,
   * refused, and the call with it). After an `initialize` that failed it is not sent: it fails, as the
   * client's requests do.
   */
  #sendOwn(message: unknown, stop: AbortSignal): void | Promise<void> {
    const after = this.#initialize;
    const [sent, over] = this.#sessions.ownPost(message);
    return this.#order.take("request", (accepted) => {
      // (given up while it waited its turn: not sent, so nothing to cancel either)
      if (after?.failure === undefined && !stop.aborted) {
        this.#sessions.carry(message); // (the client's are carried as they come: see #sendInTurn)
        return this.#send(message, over, stop, () => {
          sent(this.#sessions.sessionFor(message));
          accepted();
        });
      }
      sent(undefined);
      over();
      accepted();
      if (after?.failure === undefined) return;
      for (const r of requestsOf(message)) {
        this.#session.answerWithError(
          r.id,
          TRANSPORT_ERROR,
          `the initialize sent before it ${after.failure}`,
        );
      }
    });
  }

  /**
   * Send the guard's own cancel of its own `tools/list` once the POST of that request was accepted (so that
   * it does not overtake it), in that request's session (an `initialize` the session held for the tool list
   * goes as it gives up), or not at all when that request was not sent: never held behind
   * an `initialize`, refused or reported as the client's messages are (see {@linkcode isGuardCancel}). It
   * takes a place of the notifications', but does not hold the client's input back.
   */
  #sendOwnCancel(message: unknown): void {
    void this.#sessions.ownSession(cancelledId(message)).then((ids) => {
      if (ids === undefined) return;
      this.#sessions.assign(message, ids);
      void this.#notificationPlaces.take((release) => this.#send(message, release));
    });
  }

  /**
   * Wait for the answer to the client's `initialize` (`id`): what the client sends after it waits too. An
   * error answer (the server's, or the relay's in its place: its POST failed, HTTP 500) means no session, so
   * that what waits is answered with errors, not sent (see {@linkcode HttpRelay.#initializeFailed}).
   * Its `over` resolves once what waits may go on, or was answered.
   */
  #awaitInitialize(id: JsonRpcId): InitializeWait {
    let end!: () => void;
    const wait: InitializeWait = { id, held: [], over: new Promise((resolve) => (end = resolve)), end };
    this.#initializes.push(wait);
    this.#initialize = wait;
    void this.#session.answered(id).then((answer) => {
      const error = answer?.error;
      if (isRecord(error)) {
        const said = String(error.message).slice(0, 300);
        return this.#initializeFailed(`failed (${said})`, wait);
      }
      this.#initializeAnswered(wait);
      end();
    });
    return wait;
  }

  /**
   * `wait` is answered, or will not be: what the client sends next waits for the `initialize` before it not
   * answered yet, if one (the last one sent may fail while one before it still waits).
   */
  #initializeAnswered(wait: InitializeWait): void {
    const at = this.#initializes.indexOf(wait);
    if (at >= 0) this.#initializes.splice(at, 1);
    this.#initialize = this.#initializes.at(-1);
  }

  /**
   * The `initialize` the client's later messages wait for (`wait`) will not succeed, for the reason `why`
   * gives: an error answer, the client cancelled it (when a server never answers, the client's own timeout
   * decides, as it cancels), or the relay closed first. Each request sent
   * after it is answered with an error saying so (a request through the relay is always answered), each
   * notification is dropped (there is no session to send it in), and both are reported
   * (`client_message_refused`, `initialize_failed`); a batch's answers to the server still go. What the
   * client withdrew is not refused (see {@linkcode HttpRelay.#withdrawn}).
   */
  #initializeFailed(why: string, wait: InitializeWait): void {
    if (wait === undefined || wait.failure !== undefined) return;
    wait.failure = why;
    this.#initializeAnswered(wait);
    for (const message of wait.held.splice(0)) {
      this.#refuseAll(
        Array.isArray(message)
          ? message.filter((m) => !this.#withdrawn(m, message))
          : this.#withdrawn(message, message)
          ? []
          : message,
        "initialize_failed",
        (method) =>
          `toolguard: ${method} was not sent to the MCP server at ${this.#shown}: the initialize sent before ` +
          `it ${why}; send initialize again, and this once it succeeds`,
      );
    }
    wait.end();
  }

  /**
   * True for what of the client's held behind an `initialize` that failed (`m`, in `message`) it withdrew,
   * or that is not the session's: a request it cancelled (it gets no answer: the client gave up on it), and
   * a cancel of a request the relay was sending, which goes in that request's session if it went, and else
   * has nothing to cancel (see {@linkcode HttpRelay.#sendInTurn}). Neither is refused, nor reported. A
   * request is known by its message, not by its id alone: one the client sent again under the id of one it
   * cancelled waits for its answer.
   */
  #withdrawn(m: unknown, message: unknown): boolean {
    if (!isRecord(m)) return false;
    if (isRequest(m as JsonRpcMessage)) {
      const id = m.id as JsonRpcId;
      return !this.#session.isWaiting(id) || this.#sessions.stillOf(message, [{ id }]).length === 0;
    }
    return this.#sessions.cancelsKnown(m);
  }

  /**
   * Send a message of the client's that is not only answers, once {@linkcode SendOrder} lets it go
   * (`requests`: its requests). One sent after an `initialize` that failed (`after`) was answered then:
   * only a batch's answers to the server go.
   */
  #forward(
    message: unknown,
    requests: { id: JsonRpcId; method: string }[],
    accepted: () => void,
    after?: InitializeWait,
  ): void | Promise<void> {
    if (after?.failure !== undefined) {
      this.#sessions.forget(message);
      const answers = Array.isArray(message) ? message.filter((m) => !isRecord(m) || !("method" in m)) : [];
      if (answers.length === 0) return accepted();
      [message, requests] = [answers, []];
    }
    if (requests.length > 0) {
      if (this.#requestPosts < this.#maxInFlight || this.#sessions.freeCancelledPlace()) {
        this.#requestPosts++;
        return this.#sendRequests(message, requests, accepted);
      }
      this.#refuseBusy(message);
      this.#sessions.forget(message);
      // A batch's notifications and answers still go.
      const rest = Array.isArray(message) ? message.filter((m) => !(isRecord(m) && isRequest(m))) : [];
      if (rest.length === 0) return accepted();
      message = rest;
    }
    // Not refused, as no answer could say so (and an answer the server waits for must reach it), but not
    // without bound either: such a POST is short (202 Accepted), so waiting for a place is short too.
    return this.#notificationPlaces.take((release) => this.#send(message, release, undefined, accepted));
  }

  /**
   * POST the client's `requests` (in `message`) in a place of `maxInFlight`'s, which is freed when the POST
   * ends, or, once the client cancelled every one of them and the server has sent no headers yet, when
   * another request needs it (see `HttpSessions.freeCancelledPlace`).
   */
  #sendRequests(message: unknown, requests: { id: JsonRpcId }[], accepted: () => void): void {
    let placed = true;
    const release = () => {
      if (placed) this.#requestPosts--;
      placed = false;
    };
    const post: UnheardPost = { message, requests, stop: new AbortController(), release };
    const heard = this.#sessions.unheard(post);
    const done = () => {
      heard();
      release();
    };
    this.#send(message, done, post.stop.signal, () => {
      heard();
      accepted();
    });
    // (cancelled while it waited its turn, and the client left: no request will need its place)
    this.#abandonCancelled();
  }

  /**
   * Once the client left: every POST without headers whose requests it all cancelled is ended (see
   * `HttpSessions.abandonCancelled`), as it leaves and as one goes after, so that the cancels waiting for
   * them reach the server within the grace (the server may work on: MCP has a closed connection cancel
   * nothing), before the session's `DELETE` (which a server need not take). Past the grace the relay gave
   * them up, and the cancels with them.
   */
  #abandonCancelled(): void {
    if (this.#clientGone.signal.aborted) this.#sessions.abandonCancelled();
  }

  /**
   * POST `message`, tracked in flight; `done` runs when the POST has ended, however it ended, and `accepted`
   * once the server answered its headers (or it ended without). A POST that `stop` ends (whoever sent it no
   * longer waits) is no failure.
   */
  #send(message: unknown, done: () => void, stop?: AbortSignal, accepted?: () => void): void {
    const sent = this.#post(message, stop, accepted).catch((error) => {
      // (ended with its session's grace: see #sessionEnded)
      const ended = this.#sessions.sessionOf(message)?.ended === true;
      if (!stop?.aborted) this.#failed(message, ended ? SESSION_ENDED : errorText(error));
    });
    void sent.finally(() => {
      this.#sessions.forget(message);
      accepted?.();
      done();
    });
  }

  /**
   * The requests of a message past `maxInFlight`: not sent, answered with an error saying to wait for answers
   * (a request through the relay is always answered), and reported.
   */
  #refuseBusy(message: unknown): void {
    for (const r of requestsOf(message)) {
      emitTo(this.#options.onEvent, { event: "client_message_refused", kind: "in_flight_limit", id: r.id });
      const text = `toolguard: ${r.method} was not sent to the MCP server at ${this.#shown}: ` +
        `${this.#maxInFlight} requests already wait for its answers, the most the relay sends at once ` +
        "(maxInFlight); wait for an answer before sending more, then send it again";
      this.#session.answerWithError(r.id, TRANSPORT_ERROR, text);
    }
  }

  /** The headers of a request in the session `ids` (by default the current one) that accepts `accept`. */
  #headers(accept: string, ids = this.#sessions.current): Record<string, string> {
    const headers: Record<string, string> = { ...this.#options.headers, accept };
    if (ids.id !== undefined) headers["mcp-session-id"] = ids.id;
    if (ids.version !== undefined) headers["mcp-protocol-version"] = ids.version;
    return headers;
  }

  /**
   * `fetch` the server's address, following redirects within its origin only: headers given for the server
   * (its credentials: `Authorization` and any other, such as an API key) and the client's messages go to that
   * origin alone, never to one a redirect names (`fetch` itself would send all but `Authorization` along, and
   * the body of a 307). A redirect elsewhere is an error that names where it leads. A redirect is followed
   * with the same method and body, a `POST` too (`fetch` would make a `POST` met by 301, 302 or 303 a `GET`,
   * and the message would be lost); but a 303 (See Other) to a `POST` is an error that names where it leads:
   * it says the server took the message and puts its outcome there, so sending it again could run a call
   * twice. Only 301, 302, 307 and 308 are redirects to follow (and 303 to a `GET`): another status with a
   * `Location` (300 Multiple Choices, 304 Not Modified, 305 Use Proxy) is an error naming it. Each such error
   * is a {@linkcode RedirectRefused}.
   */
  async #fetch(init: RequestInit): Promise<Response> {
    let url = this.#url;
    for (let hops = 0;; hops++) {
      const response = await fetch(url, { ...init, redirect: "manual" });
      const location = response.headers.get("location");
      if (response.status < 300 || response.status > 399 || location === null) return response;
      await response.body?.cancel();
      const next = new URL(location, url);
      if (response.status === 303 && (init.method ?? "GET") !== "GET") {
        throw new RedirectRefused(
          `it answered HTTP 303 (See Other) to ${
            shownAddress(next.href)
          }: it may have acted on the message, ` +
            "so toolguard did not send it again; an MCP server answers the POST itself (if that address is " +
            "its endpoint, give it as the URL)",
        );
      }
      if (!REDIRECTS.has(response.status)) {
        throw new RedirectRefused(
          `it answered HTTP ${response.status} with a Location (${shownAddress(next.href)}), which is no ` +
            "redirect toolguard follows (only 301, 302, 307 and 308 are); give the address of the server's " +
            "MCP endpoint as the URL",
        );
      }
      if (next.origin !== new URL(this.#url).origin) {
        throw new RedirectRefused(
          `it redirected to ${
            shownAddress(next.href)
          }, another origin, where toolguard does not send your headers and messages; ` +
            "give that address as the URL if you trust it",
        );
      }
      if (hops === MAX_REDIRECTS) {
        throw new RedirectRefused(
          `it redirected more than ${MAX_REDIRECTS} times; give the address the redirects lead to as the URL`,
        );
      }
      url = next.href;
    }
  }

  /**
   * Call `accepted` once the server has every request of `message`, as their answers show (see
   * `GuardedSession.answered`), though its POST may still wait for the server's headers: a server may answer
   * a request on another stream and leave its POST open (for ever), and the messages after it, which
   * {@linkcode SendOrder} holds until then, would wait as long. (A request the client cancelled counts once
   * its late answer comes: its cancel must not overtake it.) A later call of `accepted` does nothing.
   */
  #acceptedOnceAnswered(message: unknown, accepted: () => void): void {
    const requests = requestsOf(message);
    if (requests.length === 0) return;
    void Promise.all(requests.map((r) => this.#session.answered(r.id))).then(accepted);
  }

  async #post(message: unknown, stop?: AbortSignal, accepted?: () => void): Promise<void> {
    // (its answer's stream is resumed in it, whatever comes meanwhile)
    const ids = this.#sessions.sessionFor(message);
    // (a batch held behind an initialize goes in its session: its answers of the session before do not)
    const here = this.#answersHere(message, ids);
    if (here === undefined) return;
    // (as the client wrote it, when nothing of it was changed: a batch split here is written anew)
    const line = here === message && (isRecord(message) || Array.isArray(message))
      ? this.#linesOf.get(message) as Uint8Array<ArrayBuffer> | undefined // (a framer's, on an ArrayBuffer)
      : undefined;
    const body = line ?? encodeJson(here, (unwritten, why) =>
      unwrittenFromClient(unwritten, {
        emit: (event) => emitTo(this.#options.onEvent, event),
        answer: (id, code, text) => void this.#session.answerWithError(id, code, text),
      }, why));
    if (body === undefined) return; // (nothing of it could be written out: each request is answered)
    // (the server ended that session: its requests are answered so, and never sent, as MCP says)
    if (ids.ended === true) return this.#failed(message, SESSION_ENDED);
    const post = this.#ends(ids).post;
    const signal = stop === undefined ? post : AbortSignal.any([post, stop]);
    if (accepted !== undefined) this.#acceptedOnceAnswered(message, accepted);
    const starts = this.#sessions.starts(message); // (its session: `ids`, a new one)
    const response = await this.#fetch({
      method: "POST",
      headers: {
        ...this.#headers("application/json, text/event-stream", ids),
        "content-type": "application/json",
      },
      body,
      signal,
    });
    // (the server answering a message: not the headers of a GET the relay asks for itself, a resumption that
    // brings nothing new, again and again, said nothing; their bytes count as they come)
    this.#heardAt = performance.now();
    // The session id comes with the answer to initialize: another POST's (an old session's, answered late)
    // must not replace it. Each is held against its own session's (one before a new initialize has its own).
    const id = response.headers.get("mcp-session-id");
    if (starts) ids.id = id ?? undefined;
    else if (id !== null && id !== ids.id) this.#otherSessionId(message, ids);
    // (before the messages let go now see it: they carry the session id, or are not sent)
    const ended = this.#sessionEnded(response, ids);
    accepted?.(); // (after the session id, which the messages let go now must carry)
    if (ended) {
      await response.body?.cancel();
      return this.#failed(message, SESSION_ENDED);
    }
    if (!response.ok) {
      const body = this.#hidden(await errorBodyStart(response)); // (before it is cut: no half token shows)
      const credentials = response.status === 401 || response.status === 403
        ? ' (it wants credentials: send them with the headers option, or toolguard mcp --header "Authorization: Bearer ${TOKEN}")'
        : "";
      return this.#failed(
        message,
        `HTTP ${response.status}${body ? `: ${body.slice(0, 200)}` : ""}${credentials}`,
      );
    }
    const readingOn = await this.#answersTo(message, response, signal, ids);
    // (only in its own session: a new initialize that went since, once this was accepted, has left that
    // session's stream, and its own notifications/initialized opens the new one's, with the id its
    // answer gave)
    if (
      isRecord(message) && message.method === "notifications/initialized" && ids === this.#sessions.current
    ) {
      void this.#listen();
    }
    // A message past the limit still being read on keeps its POST's place (maxInFlight): a server that
    // answered each POST with one without end would have the relay read ever more of them at once.
    await readingOn;
  }

  /**
   * The signal a POST and the resumption of its stream (`post`) in the session `ids` go by: the relay's, and
   * for a session the server ended, the end of the grace after its 404 (`over`, aborted then). Made for a
   * session once, when it ends or its first POST goes.
   */
  #ends(ids: SessionIds): { over: AbortController; post: AbortSignal } {
    let ends = this.#endsOf.get(ids);
    if (ends === undefined) {
      const over = new AbortController();
      ends = { over, post: AbortSignal.any([this.#postSignal, over.signal]) };
      this.#endsOf.set(ids, ends);
    }
    return ends;
  }

  /**
   * True when `response` is HTTP 404 to a request that carried the id of the session `ids`: MCP says the
   * server ended that session (or never had it), and that the client must start a new one. The session is
   * marked so (see `SessionIds.ended`): nothing more of it is sent, or ended with `DELETE`. A `GET`'s 404
   * too (the server's own stream, or a resumption with `Last-Event-ID`): MCP says it of any request carrying
   * the id, and a resumption is not retried in a session that is over.
   */
  #sessionEnded(response: Response, ids: SessionIds): boolean {
    if (response.status !== 404 || ids.id === undefined) return false;
    if (ids.ended === true) return true;
    ids.ended = true;
    // Its other streams still open get the grace the client's leaving gives: an answer on its way may come
    // (a server that ended the session should send none), then they are closed, and their requests told to
    // initialize again, so that none waits for ever on a stream a server keeps open in an ended session.
    const over = this.#ends(ids).over;
    void pause(this.#options.shutdownGraceMs ?? 2000, this.#postSignal).then(() => over.abort());
    // (its own stream is over with it: resumed, it would go in the ended session; those it was to answer
    // are told to initialize again)
    if (ids === this.#sessions.current) this.#leaveStream(SESSION_ENDED);
    return true;
  }

  /**
   * The answer to the POST of `message` gave another session id than the answer to the `initialize` of its
   * session (`ids`) did (none, maybe): it is not taken (a late answer of an old session's would replace the
   * new one's), but reported (`session_id_ignored`), once a session. The value is not shown: a session id is
   * a credential.
   */
  #otherSessionId(message: unknown, ids: SessionIds): void {
    if (!this.#sessions.otherIdFirst()) return;
    const first = (Array.isArray(message) ? message : [message]).find((m) => isRecord(m) && "method" in m);
    const what = isRecord(first) ? String(first.method) : "an answer of the client's";
    const detail = `the MCP server at ${this.#shown} answered ${what} with ` +
      (ids.id === undefined
        ? "a session id (Mcp-Session-Id) where its answer to initialize gave none; toolguard sends none"
        : "another session id (Mcp-Session-Id) than its answer to initialize gave; toolguard keeps that one");
    emitTo(this.#options.onEvent, { event: "session_id_ignored", detail });
  }

  /**
   * Read a POST's answer. When its event stream ends (or breaks) before every request of the message has an
   * answer and the server gave an event id, resume it with `GET` and `Last-Event-ID`, after the server's
   * `retry:` delay, as MCP lets a server close the stream while it works (SEP-1699); a request still without
   * an answer after that is answered with a JSON-RPC error, never left waiting.
   */
  async #answersTo(
    message: unknown,
    response: Response,
    signal: AbortSignal,
    ids: SessionIds,
  ): Promise<Promise<void>> {
    const requests = requestsOf(message);
    if (response.status === 202) {
      this.#sessions.took(message); // (its cancel goes in `ids`, whatever session starts)
      await response.body?.cancel();
      // (taken after the 404 that ended its session, sent before it: no stream of that session will answer)
      if (ids.ended === true) return void this.#answerTaken(requests, SESSION_ENDED);
      // Of a session a new initialize left (it went meanwhile), its stream, where alone they could be
      // answered, is left too: they are answered so at once, as those waiting there were (see #leaveStream).
      if (ids !== this.#sessions.current) return void this.#answerTaken(requests, LEFT_FOR_NEW_SESSION);
      // MCP allows "202 Accepted" (no answer) for notifications only. As with the MCP SDK's client, answers
      // may still come on the server's own stream (opened now if it was not yet); without one they never can.
      this.#onStream = [...this.#onStream.filter((r) => this.#session.isWaiting(r.id)), ...requests];
      if (this.#stream === "over") this.#answerOnStreamOver();
      // (not while a new initialize waits for its answer, which brings the id the stream must go with: the
      // new session's notifications/initialized opens it; a late 202 of the old session's would fail it)
      else if (this.#initialize === undefined) void this.#listen();
      return Promise.resolve();
    }
    const waiting = () => requests.some((r) => this.#session.isWaiting(r.id));
    const readingOn: Promise<void>[] = [];
    let why = "";
    let end: StreamEnd = {};
    try {
      end = await this.#read(response, end, signal, ids, message);
    } catch (error) {
      why = errorText(error);
      if (error instanceof TooLong) readingOn.push(error.readingOn);
    }
    // (after the client left too, while the relay waits for answers: a server that ends the stream to be
    // asked again answers on the next, as it would over stdio; the wait's end stops it)
    const resume = this.#ends(ids).post;
    why = this.#hidden(await this.#resume(end, ids, resume, waiting, readingOn, message) || why);
    // (the server ended the session while its stream was open: not resumed, as nothing more goes in it)
    if (ids.ended === true && waiting()) this.#failed(message, SESSION_ENDED);
    for (const r of this.#sessions.stillOf(message, requests)) {
      const text =
        `toolguard: the MCP server at ${this.#shown} ended its answer without answering ${r.method}` +
        (why ? ` (${why})` : "");
      this.#session.answerWithError(r.id, TRANSPORT_ERROR, text);
    }
    return Promise.all(readingOn).then(() => {});
  }

  /**
   * Follow an event stream the server ended: while `more()` says so and the stream gave an event id, ask for
   * the rest with `GET` and `Last-Event-ID` after the server's `retry:` delay. Returns why it gave up after
   * failed attempts, or "" when none failed. A message past the limit is read on in the background: that
   * reading goes in `readingOn` when given. `sent`: the client message whose POST's stream it is, if one;
   * `ids`: the session the stream is of (a stream of the session before a new `initialize` is resumed in it:
   * with the new one's id, a server would refuse it, or replay another session's stream).
   */
  async #resume(
    from: StreamEnd,
    ids: SessionIds,
    signal: AbortSignal,
    more: () => boolean,
    readingOn?: Promise<void>[],
    sent?: unknown,
  ): Promise<string> {
    let end = from;
    let why = "";
    // (not in a session the server ended: see #sessionEnded)
    const going = () => ids.ended !== true && more();
    for (let failures = 0; end.lastEventId !== undefined && failures < RESUME.failures && going();) {
      await pause(Math.min(Math.max(end.retryMs ?? RESUME.defaultMs, RESUME.minMs), RESUME.maxMs), signal);
      if (signal.aborted || ids.ended === true) break;
      try {
        const resumed = await this.#fetch({
          headers: {
            ...this.#headers("text/event-stream", ids),
            "last-event-id": lastEventIdHeader(end.lastEventId),
          },
          signal,
        });
        if (!resumed.ok) {
          await resumed.body?.cancel();
          // (a 404 to the session's id: the session is over, nothing to retry; see #sessionEnded)
          if (this.#sessionEnded(resumed, ids)) break;
          why = `resuming its event stream got HTTP ${resumed.status}`;
          failures++;
          continue;
        }
        end = await this.#read(resumed, end, signal, ids, sent);
        failures = 0;
      } catch (error) {
        why = `resuming its event stream failed: ${errorText(error)}`;
        if (error instanceof TooLong) {
          readingOn?.push(error.readingOn);
          break; // resumed, it would come again
        }
        failures++;
      }
    }
    return why;
  }

  /**
   * Hand every message of an answer (JSON, or an event stream) to the session; returns where an event stream
   * stopped (`from`: where the stream it resumes had stopped). A message past `maxMessageBytes` ends the
   * reading with {@linkcode TooLong}, at once (its requests are answered so); the message is then read on to
   * its end, keeping only its ends, so that a request of the server's in it gets an error answer (see
   * {@linkcode HttpRelay.#readOn}). `signal` is the one its `fetch` was given: its aborting ends the reading.
   * `sent`: the client message whose POST it answers, if one (see {@linkcode HttpRelay.#noteInitialize}).
   */
  async #read(
    response: Response,
    from: StreamEnd,
    signal: AbortSignal,
    ids: SessionIds,
    sent?: unknown,
  ): Promise<StreamEnd> {
    // (a media type is case-insensitive: an event stream read as one body would be held whole, and never end)
    const type = response.headers.get("content-type")?.toLowerCase() ?? "";
    if (!response.body) return {};
    const reader = response.body.getReader();
    // Deno ends a body's reading as its fetch's signal aborts only while the Response is in reach: once
    // it has been collected, a body without end was read on for ever after the relay ended, and kept the
    // process up.
    const cancel = () => void reader.cancel().catch(() => {});
    signal.addEventListener("abort", cancel, { once: true });
    let readOn = false; // (once the reader is handed to #readOn, which cancels it)
    const tooLong = (rest: Overflowing, what: string, bytes: number) => {
      readOn = true;
      const error = this.#tooLong(what, bytes);
      error.readingOn = this.#readOn(reader, rest, signal, ids).finally(() => {
        signal.removeEventListener("abort", cancel);
      });
      return error;
    };
    try {
      if (!type.includes("text/event-stream")) {
        const chunks: Uint8Array[] = [];
        let size = 0;
        for (let read; !(read = await reader.read()).done;) {
          this.#heardAt = performance.now();
          chunks.push(read.value);
          size += read.value.length;
          if (size > this.#max) {
            throw tooLong(new OversizedBody(concatBytes(chunks, size)), "its answer", size);
          }
        }
        signal.throwIfAborted(); // (cancelled: not the whole body)
        const body = concatBytes(chunks, size);
        const text = decoder().decode(body);
        this.#fromServerText(text, ids, sent, !isUtf8(body, text));
        return {};
      }
      return await this.#readEvents(reader, from, tooLong, ids, sent);
    } finally {
      if (!readOn) {
        signal.removeEventListener("abort", cancel);
        cancel();
      }
    }
  }

  /**
   * {@linkcode HttpRelay.#read} of an event stream; `tooLong` hands on the rest of an event past the limit.
   */
  async #readEvents(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    from: StreamEnd,
    tooLong: (rest: Overflowing, what: string, bytes: number) => TooLong,
    ids: SessionIds,
    sent?: unknown,
  ): Promise<StreamEnd> {
    const end = { ...from };
    const parser = sseParser();
    const streamDecoder = new TextDecoder(); // (one per stream: it keeps a character cut between reads)
    // Where the stream's text has a U+FFFD for bytes that are not UTF-8 (offsets not passed yet), and where
    // the next event starts in it: such an event is reported (see `notUtf8`).
    const utf8 = new Utf8Faults();
    let [faults, next, at]: [number[], number, number] = [[], 0, 0];
    const what = "an event of its stream";
    /**
     * The bytes of the event not ended yet (`maxMessageBytes` counts bytes; a character may be 3 of them).
     */
    let pendingBytes = 0;
    try {
      for (let read; !(read = await reader.read()).done;) {
        this.#heardAt = performance.now(); // (a comment too: the server is up, and may answer yet)
        const text = streamDecoder.decode(read.value, { stream: true });
        const found = utf8.push(read.value, text);
        if (found.length > 0) [faults, next] = [[...faults.slice(next), ...found], 0];
        const events = parser.push(text);
        for (const event of events) {
          at += event.raw.length;
          let bad = false;
          for (; next < faults.length && faults[next] < at; next++) bad = true;
          // (a character is 1 to 3 bytes: counted only when there may be too many)
          const chars = event.raw.length;
          const bytes = chars * 3 > this.#max ? utf8Length(event.raw) : chars;
          if (bytes > this.#max) throw tooLong(new OversizedEvent(event.raw, streamDecoder), what, bytes);
          // (an empty id resets it: nothing to resume from)
          if (event.id !== undefined) end.lastEventId = event.id === "" ? undefined : event.id;
          if (event.retry !== undefined) end.retryMs = event.retry;
          this.#fromServerText(event.data, ids, sent, bad);
        }
        // (the text kept of an event not ended yet: after an event ended in this read, the end of `text`)
        pendingBytes = events.length === 0
          ? pendingBytes + read.value.length
          : utf8Length(text.slice(text.length - parser.pending));
        if (pendingBytes > this.#max) {
          const start = parser.end().map((e) => e.raw).join("");
          throw tooLong(new OversizedEvent(start, streamDecoder), what, pendingBytes);
        }
        // A client that reads slower than the server writes holds the server back, not the relay's memory.
        await this.#outChain;
      }
    } catch (error) {
      // A broken stream can be resumed from the last event id, like one the server closed.
      if (end.lastEventId === undefined || error instanceof TooLong) throw error;
    }
    // An event cut off before its blank line is dropped, its id too, as the SSE standard says (and the SDK
    // does): resuming from the last whole event replays it.
    return end;
  }

  /**
   * Read on a server message past `maxMessageBytes` (`rest`) to its end, keeping only its ends, then answer
   * each request of the server's it showed with an error, as the stdio relay does: the server would wait for
   * its answer. It is read on for `maxMessageBytes` more at most: past them (a message without end, say)
   * its stream is closed, and what its start shows is answered (a POST waits for the reading, in its place).
   * (The client's requests it may have answered were answered as the reading gave it up.) A message whose
   * stream breaks or ends with the relay first (`signal`, its fetch's) is not answered: nobody waits for it.
   * `ids`: the session it came in, where its errors go.
   */
  async #readOn(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    rest: Overflowing,
    signal: AbortSignal,
    ids: SessionIds,
  ): Promise<void> {
    let [more, cut] = [0, false];
    try {
      for (let read; !rest.ended && !(read = await reader.read()).done;) {
        this.#heardAt = performance.now();
        rest.push(read.value);
        // (an event may run on in lines that are not data, which its size does not count: bytes read do)
        if (!rest.ended && (more += read.value.length) > this.#max) {
          cut = true;
          break;
        }
      }
    } catch {
      return;
    } finally {
      reader.cancel().catch(() => {});
    }
    if (signal.aborted) return; // (cancelled as the relay ended: not the whole message)
    // Cut off, its end is not the message's: only its start may show the id of a request of the server's.
    const edges = cut ? { ...rest.edges(), tail: new Uint8Array(0) } : rest.edges();
    oversizedFromServer(rest.bytes, edges, this.#max, {
      toServer: (message) => {
        this.#sessions.assign(message, ids); // (its request's session, though a new initialize went)
        void this.#toServer({ message });
      },
      answerWithError: () => false,
    });
  }

  /**
   * The error for a server message past `maxMessageBytes`, reported as `oversized_message` with the bytes
   * read of it when it was given up (a body is not read to its end).
   */
  #tooLong(what: string, bytes: number): TooLong {
    emitTo(this.#options.onEvent, { event: "oversized_message", from: "server", bytes });
    return new TooLong(this.#max, what);
  }

  /**
   * One message from the server, to the session (text that is not JSON as bytes, reported there), in the
   * session `ids`; `sent`: the client message whose POST's answer it came in, if one.
   */
  #fromServerText(text: string | undefined, ids: SessionIds, sent?: unknown, badUtf8 = false): void {
    if (text === undefined || text.trim() === "") return;
    let message: JsonRpcMessage | JsonRpcMessage[];
    try {
      message = parseMessage(text) as JsonRpcMessage | JsonRpcMessage[]; // (an id past 2^53 as its digits)
    } catch {
      // (reported, and an answer whose ends show its id answers its request with an error: see the session)
      return this.#session.fromServer({ message: undefined, bytes: new TextEncoder().encode(text) });
    }
    const parsed = message; // (a batch some of whose answers are dropped is written anew)
    if (sent !== undefined) {
      if (Array.isArray(message)) {
        const kept = message.filter((m) => !this.#sessions.superseded(m, sent));
        if (kept.length === 0 && message.length > 0) return;
        if (kept.length < message.length) message = kept;
      } else if (this.#sessions.superseded(message, sent)) return;
      if (this.#sessions.starts(sent)) this.#noteInitialize(message, sent);
    }
    this.#sessions.asked(message, ids); // (the client's answer goes in that session)
    // (its text goes to the client as it came, if the session passes it on unchanged and it is one line)
    const whole = message === parsed && typeof message === "object" && message !== null;
    // (with its newline after it, which the client's line then takes without a copy: see withNewline)
    const line = whole && !/[\r\n]/.test(text) ? encoder.encode(text + "\n") : undefined;
    const bytes = line?.subarray(0, line.length - 1);
    // (the session reads the text too: decoded once)
    const frame = bytes === undefined ? parsedText({ message }) : new LineFrame(bytes, { text, message });
    this.#session.fromServer(badUtf8 ? notUtf8(frame) : frame);
  }

  /**
   * `message` (one, or a batch) without the client's answers in it to requests of another session than
   * `ids`, the one it goes in: those go in their own sessions at once, a batch each (answers keep no order),
   * as a lone answer does (`waits` gets the wait of each past its places). Undefined when nothing is left.
   */
  #answersHere<T>(message: T, ids: SessionIds, waits: Promise<void>[] = []): T | undefined {
    return this.#sessions.answersHere(message, ids, (answers) => {
      const wait = this.#answerPlaces.take((release) => this.#send(answers, release));
      if (wait !== undefined) waits.push(wait);
    });
  }

  /**
   * Keep the protocol version the answer to the last `initialize` sent (`sent`) negotiated: later requests
   * must carry it. It is taken from that answer alone, on that initialize's POST, as the session id is (see
   * `#post`): a late answer of an old initialize's, which has one too, would set it for the new session.
   */
  #noteInitialize(message: unknown, sent: unknown): void {
    const id = requestsOf(sent).find((r) => r.method === "initialize")?.id;
    for (const m of Array.isArray(message) ? message : [message]) {
      // (by key: an id past 2^53 is an object of its own in each message; or rounded, by a server whose
      // reader is JSON.parse, as the session matches it)
      if (id === undefined || !isRecord(m) || !isRecord(m.result)) continue;
      if (idKey(m.id as JsonRpcId) !== idKey(id) && !roundsAlike(m.id, id)) continue;
      if (typeof m.result.protocolVersion !== "string") continue;
      this.#sessions.current.version = m.result.protocolVersion;
    }
  }

  /**
   * `text` (an error's) with the address as shown (a runtime may write the whole address into it) and the
   * values of `headers` left out (a server may echo the request's headers in its error body), since the
   * text reaches the model and the log.
   */
  #hidden(text: string): string {
    let out = this.#shown === this.#url
      ? text
      : text.replaceAll(this.#url, this.#shown).replaceAll(new URL(this.#url).href, this.#shown);
    for (const value of this.#headerValues) out = out.replaceAll(value, "[header value]");
    return out;
  }

  /**
   * A POST failed: its requests still waiting get a JSON-RPC error (never silence). One the server answered
   * before the failure keeps that answer, alone.
   */
  #failed(message: unknown, reason: string): void {
    // Given up by the relay itself (the client left, or it was stopped): answered as the session closes.
    if (this.#giveUp.signal.aborted || this.#signal.aborted) return;
    const why = this.#hidden(reason);
    emitTo(this.#options.onEvent, {
      event: "post_failed",
      detail: `the MCP server at ${this.#shown}: ${why}`,
    });
    for (const r of this.#sessions.stillOf(message, requestsOf(message))) {
      const text = `toolguard: the MCP server at ${this.#shown} did not answer ${r.method}: ${why}`;
      this.#session.answerWithError(r.id, TRANSPORT_ERROR, text);
    }
  }

  /** The server's own stream (`GET`): requests and notifications it sends outside any answer. Optional. */
  async #listen(): Promise<void> {
    if (this.#stream !== "idle") return;
    this.#stream = "open";
    const stop = new AbortController();
    this.#streamStop = stop;
    let opened = false;
    const ids = this.#sessions.current;
    try {
      const signal = AbortSignal.any([this.#signal, this.#listenStop.signal, stop.signal]);
      if (ids.ended === true) return;
      const response = await this.#fetch({ headers: this.#headers("text/event-stream", ids), signal });
      if (!response.ok) {
        this.#sessionEnded(response, ids); // (a 404 to its id: the session is over)
        return void await response.body?.cancel();
      }
      opened = true;
      // A server may end this stream at will once it gave an event id: follow it until the relay ends.
      await this.#resume(await this.#read(response, {}, signal, ids), ids, signal, () => true);
    } catch (error) {
      // The server offers no stream (405), or it ended: answers still arrive on the POSTs. A redirect not
      // followed is said, as a POST's is: the stream (the server's own requests) is lost for it.
      if (error instanceof RedirectRefused) {
        const detail = `the MCP server at ${this.#shown}: its own event stream (GET) was not opened: ` +
          this.#hidden(error.message);
        emitTo(this.#options.onEvent, { event: "stream_failed", detail });
      }
    } finally {
      // (a stream left for a new session's is over for the session before alone: see #leaveStream)
      if (this.#streamStop === stop) {
        [this.#stream, this.#streamStop] = ["over", undefined];
        this.#streamOver = ids.ended === true
          ? SESSION_ENDED
          : opened
          ? "ended its own stream without answering it"
          : "has no stream of its own to answer on";
        this.#answerOnStreamOver();
      }
    }
  }

  /**
   * A new session starts (a new `initialize`), or the server ended this one (`why` says which): the server's
   * own stream of this one, and its resumption (which would go with the new session's id, or in the ended
   * one), is ended, and the requests waiting for an answer on it are answered with errors; the new session's
   * `notifications/initialized` opens its own (see `#post`).
   */
  #leaveStream(why = LEFT_FOR_NEW_SESSION): void {
    this.#streamStop?.abort();
    [this.#stream, this.#streamStop] = ["idle", undefined];
    this.#answerOnStreamOver(why);
  }

  /**
   * Requests taken with 202 Accepted get an error: the server's own stream, which could answer them, is over
   * (`why`, after "and").
   */
  #answerOnStreamOver(why = this.#streamOver): void {
    this.#answerTaken(this.#onStream.splice(0), why);
  }

  /**
   * Each of `requests`, taken with 202 Accepted, gets an error: it cannot be answered (`why`, after "and").
   */
  #answerTaken(requests: { id: JsonRpcId; method: string }[], why: string): void {
    for (const r of requests) {
      const text =
        `toolguard: the MCP server at ${this.#shown} took ${r.method} with 202 Accepted and ${why}`;
      this.#session.answerWithError(r.id, TRANSPORT_ERROR, text);
    }
  }

  /**
   * Tell the server each session is over (a `DELETE` each, at once), waiting for its answers no longer than
   * the relay's grace (and never more than {@linkcode END_SESSION_MS}); past that they go on alone, for as
   * long at most.
   */
  async #endSession(): Promise<void> {
    // (each the client started: a new initialize leaves the one before open, and answers may still come)
    const sessions = this.#sessions.toEnd();
    if (sessions.length === 0) return;
    const ended = Promise.all(sessions.map((ids) =>
      this.#fetch({
        method: "DELETE",
        headers: this.#headers("application/json", ids),
        signal: AbortSignal.timeout(END_SESSION_MS),
      }).then((response) => response.body?.cancel()).catch(() => {
        // The server is gone already.
      })
    ));
    const waitMs = Math.min(END_SESSION_MS, this.#options.shutdownGraceMs ?? END_SESSION_MS);
    // (no grace: no timer either, so the relay ends before the next turn of the event loop)
    if (!(waitMs > 0)) return;
    const done = new AbortController();
    await Promise.race([ended, pause(waitMs, done.signal)]);
    done.abort(); // (ends the pause's timer, whichever came first)
  }

  /** Client to server, until the client's input ends. */
  async #pumpClient(): Promise<void> {
    const max = this.#max;
    // The errors to the server for the answers in an over-long batch, while they wait for their places.
    const overflowing: Promise<void>[] = [];
    const framer = createFramer({
      maxLineBytes: max,
      onOverflow: (bytes, edges) => {
        const sent = oversizedFromClient(bytes, edges, max, {
          emit: (event) => emitTo(this.#options.onEvent, event),
          fromClient: this.#session.fromClient,
          toClient: (message) => void this.#toClient({ message }),
        });
        // (a delivery that fails is no end of the client's input: see ClientFeed.feed)
        if (sent instanceof Promise) overflowing.push(sent.catch(() => {}));
      },
    });
    const feed = new ClientFeed(this.#session);
    try {
      for await (const chunk of this.#options.input ?? hostInput()) {
        for (const frame of framer.push(chunk)) await feed.feed(frame);
        // (as a notification past its places does, they hold the client's input back)
        if (overflowing.length > 0) await Promise.all(overflowing.splice(0));
      }
    } catch {
      // The client's pipe broke: same as end-of-file.
    }
    for (const frame of framer.end()) await feed.feed(frame);
    await feed.settled();
  }
}

/** The rest of a server message past `maxMessageBytes`, read on to its end with only its ends kept. */
interface Overflowing {
  /** True once the message has ended (before its stream did). */
  readonly ended: boolean;
  /** Its length in bytes so far. */
  readonly bytes: number;
  /** More of the stream. */
  push(chunk: Uint8Array): void;
  /** Its ends, as `overflowIds` (`framing.ts`) reads them. */
  edges(): LineEdges;
}

/** An answer body past `maxMessageBytes`: it ends with its stream. */
class OversizedBody implements Overflowing {
  readonly ended = false;
  bytes: number;
  readonly #keeper = new EdgeKeeper();

  constructor(start: Uint8Array) {
    this.#keeper.reset(start);
    this.bytes = start.length;
  }

  push(chunk: Uint8Array): void {
    this.#keeper.add(chunk);
    this.bytes += chunk.length;
  }

  edges(): LineEdges {
    return this.#keeper.edges();
  }
}

/**
 * An event of a server's stream past `maxMessageBytes`, from its start (`start`, its text so far): read to
 * its end (a blank line) as the SSE standard reads its data, the values of its `data` lines (without the
 * space after the colon) joined with `\n`, of which only the ends are kept; other lines are skipped.
 */
class OversizedEvent implements Overflowing {
  ended = false;
  bytes = 0;
  readonly #keeper = new EdgeKeeper();
  readonly #decoder: TextDecoder;
  /** The line read so far, until its field is known (`data:`, or not); then null. */
  #name: string | null = "";
  /** The line is a `data` line, and its value has not started yet (a space there is not the value's). */
  #data = false;
  #valueStarts = false;
  /** A `data` line came before: the next one's value is joined with `\n`. */
  #hadData = false;
  /** The last line ended with `\r`: a `\n` right after it is the same line end. */
  #afterCr = false;

  constructor(start: string, streamDecoder: TextDecoder) {
    this.#decoder = streamDecoder;
    this.#take(start);
  }

  push(chunk: Uint8Array): void {
    this.#take(this.#decoder.decode(chunk, { stream: true }));
  }

  edges(): LineEdges {
    return this.#keeper.edges();
  }

  #take(text: string): void {
    const data: string[] = []; // (kept a read at a time: one add to the keeper a read)
    const lineEnd = /[\r\n]/g;
    for (let i = 0; i < text.length && !this.ended;) {
      const c = text[i];
      if (this.#afterCr) {
        this.#afterCr = false;
        if (c === "\n") {
          i++;
          continue;
        }
      }
      if (this.#name !== null) {
        // The field's name, a character at a time (at most a byte order mark and `data:`).
        i++;
        if (c === "\r" || c === "\n") {
          const name = withoutBom(this.#name);
          this.#afterCr = c === "\r";
          if (name === "") this.ended = true; // a blank line ends the event
          else if (name === "data") this.#dataLine(data); // (`data` alone: an empty value)
          this.#name = "";
          continue;
        }
        this.#name += c;
        const name = withoutBom(this.#name);
        if (name === "data:") {
          [this.#name, this.#data, this.#valueStarts] = [null, true, true];
          this.#dataLine(data);
        } else if (!"data:".startsWith(name)) this.#name = null; // (another field, or a comment)
        continue;
      }
      lineEnd.lastIndex = i;
      const found = lineEnd.exec(text);
      const end = found === null ? text.length : found.index;
      if (this.#data && end > i) {
        data.push(text.slice(this.#valueStarts && text[i] === " " ? i + 1 : i, end));
        this.#valueStarts = false;
      }
      i = end;
      if (found !== null) {
        i++;
        this.#afterCr = found[0] === "\r";
        [this.#name, this.#data] = ["", false];
      }
    }
    if (data.length === 0) return;
    const bytes = new TextEncoder().encode(data.join(""));
    this.#keeper.add(bytes);
    this.bytes += bytes.length;
  }

  /** A `data` line starts: joined to the one before with `\n`. */
  #dataLine(data: string[]): void {
    if (this.#hadData) data.push("\n");
    this.#hadData = true;
  }
}

/** How a client message takes its turn in {@linkcode SendOrder} (see `SendOrder.take`). */
type OrderKind = "request" | "notification" | "after_all";

/**
 * The turn a message (not a cancel) takes: a batch with a notification follows everything before it; a
 * message with requests runs beside other requests, but `initialize` goes as a notification does: what
 * follows waits for its answer, whose headers bring the session id (sent at once, a pipelining client's next
 * request went without it, refused), and which says whether there is a session at all.
 */
function orderKind(message: unknown, hasRequests: boolean, initialize: boolean): OrderKind {
  if (Array.isArray(message) && hasNotification(message)) return "after_all";
  return hasRequests && !initialize ? "request" : "notification";
}

/** True when `message` (one, or a batch) holds a notification: a message with a method and no id. */
function hasNotification(message: unknown): boolean {
  const one = (m: unknown) => isRecord(m) && typeof m.method === "string" && !("id" in m);
  return Array.isArray(message) ? message.some(one) : one(message);
}

/** An `initialize` not answered yet, and what the client sent after it, which waits for its answer. */
interface InitializeWait {
  readonly id: JsonRpcId;
  /** The client's messages sent after it, until it has an answer. */
  readonly held: unknown[];
  /** Resolves (`end`) once it has an answer or will have none. */
  readonly over: Promise<void>;
  readonly end: () => void;
  /** Why it will not succeed, once known: what was held was then answered with errors, or dropped. */
  failure?: string;
}

/**
 * The client's order for what the server receives, where it matters. A message goes once the server has
 * accepted (answered the headers of) every POST before it that it must follow: a notification or a request
 * follows every earlier notification (`notifications/initialized`, progress) and the answer to `initialize`
 * (which brings the session id, or says there is no session: see `HttpRelay.#initializeFailed`), while
 * requests sent one after another still run at once, and a notification does not wait for a request: a
 * server that answers a request as JSON (not as an event stream) sends its headers with the answer, and a
 * slow call would hold every message after it. A `notifications/cancelled` waits for
 * the POST of the request it cancels (see {@linkcode SendOrder.after}), and nothing waits for it. A batch
 * with a notification follows every earlier message. The client's answers keep no order (the server may wait
 * for one before it answers the POST before it). Messages waiting their turn do not hold the client's input
 * back (an answer behind them could be what the server waits for), but past {@linkcode MAX_HELD} of them.
 */
class SendOrder {
  /** The messages let go and not accepted yet (or cancels not let go yet); and the notifications of them. */
  readonly #all = new Unsettled();
  readonly #notifications = new Unsettled();
  /** Resolves once every message that waited its turn has been let go. */
  #started: Promise<void> = Promise.resolve();
  /** How many messages let go are not accepted yet, of them notifications; and how many wait their turn. */
  #open = 0;
  #openNotifications = 0;
  #waiting = 0;
  /** How many cancels wait for their request's POST. */
  #cancels = 0;
  /** The cancels not accepted yet (nor their POSTs ended) that will go. */
  readonly #cancelsSent = new Unsettled();

  /**
   * Resolves once every message taken so far has been let go and accepted (or its POST ended): cancels too.
   */
  sent(): Promise<void> {
    return Promise.all([this.#started, this.#all.settled(), this.#cancelsSent.settled()]).then(() => {});
  }

  /**
   * Run `send` in turn (now, when nothing it follows is open); `send` is given what to call once its POST was
   * accepted. Returns a promise when the client's input must wait: `send` returned one, or too many wait.
   */
  take(
    kind: OrderKind,
    send: (accepted: () => void) => void | Promise<void>,
  ): void | Promise<void> {
    const all = kind === "after_all";
    const notification = kind !== "request";
    // (after those waiting before it, too: one let go at once could pass them before they run)
    const turn = Promise.all([this.#started, (all ? this.#all : this.#notifications).settled()]);
    const now = this.#waiting === 0 && (all ? this.#open : this.#openNotifications) === 0;
    let accepted!: () => void;
    const done = new Promise<void>((resolve) => (accepted = resolve));
    this.#open++;
    if (notification) this.#openNotifications++;
    let once = false;
    const accept = () => {
      if (once) return;
      once = true;
      this.#open--;
      if (notification) this.#openNotifications--;
      accepted();
    };
    this.#all.add(done);
    if (notification) this.#notifications.add(done);
    if (now) return send(accept);
    this.#waiting++;
    let sent: void | Promise<void>;
    const started = turn.then(() => {
      this.#waiting--;
      sent = send(accept);
    });
    this.#started = started;
    return this.#waiting > MAX_HELD ? started.then(() => sent) : undefined;
  }

  /**
   * Run `send` (a cancel) once `request` resolves (the POST of the request it cancels was accepted; at once
   * without it), and after the notifications before it, but out of turn: nothing waits for it but
   * {@linkcode SendOrder.sent}. Holds the client's input back past {@linkcode MAX_HELD} cancels waiting.
   */
  after(
    request: Promise<void> | undefined,
    send: (accepted: () => void) => void | Promise<void>,
  ): void | Promise<void> {
    let accepted!: () => void;
    const done = new Promise<void>((resolve) => (accepted = resolve));
    this.#cancelsSent.add(done);
    if (request === undefined && this.#waiting === 0 && this.#openNotifications === 0) return send(accepted);
    this.#cancels++;
    let sent: void | Promise<void>;
    const started = Promise.all([this.#started, this.#notifications.settled(), request]).then(() => {
      this.#cancels--;
      sent = send(accepted);
    });
    this.#all.add(started);
    return this.#cancels > MAX_HELD ? started.then(() => sent) : undefined;
  }
}

/**
 * Promises not settled yet, each known by a number until it settles: {@linkcode Unsettled.settled} waits for
 * those added so far, as a chain of them would (`all = Promise.all([all, next])`). A chain, or a
 * `Promise.all` of those open at each call, holds something on one that never settles (a cancel whose
 * request's POST the server never takes) for each call after it, until the relay ends; here only who waits
 * is held.
 */
class Unsettled {
  /** The numbers of the promises not settled yet, oldest first. */
  readonly #open = new Set<number>();
  #added = 0;
  /** Who waits, each for the promises added up to its number, in that order. */
  readonly #waiting: { upTo: number; go: () => void }[] = [];

  /** Keep `promise` until it settles. */
  add(promise: Promise<unknown>): void {
    const n = ++this.#added;
    this.#open.add(n);
    const settled = () => {
      this.#open.delete(n);
      const oldest = this.#open.values().next().value ?? Infinity;
      while (this.#waiting.length > 0 && this.#waiting[0].upTo < oldest) this.#waiting.shift()!.go();
    };
    promise.then(settled, settled);
  }

  /** Resolves once every promise added so far has settled. */
  settled(): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    return new Promise((go) => this.#waiting.push({ upTo: this.#added, go }));
  }
}

/**
 * Places for POSTs that are never refused: at most `max` in flight; past them each waits its turn, in order.
 */
class Places {
  readonly #max: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Run `send` in a place, now or once one is free; `send` is given what frees it. Returns a promise when it
   * waits, settled once it has run.
   */
  take(send: (release: () => void) => void): void | Promise<void> {
    if (this.#used < this.#max) {
      this.#used++;
      return send(this.#release);
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve)).then(() => send(this.#release));
  }

  readonly #release = (): void => {
    const next = this.#waiting.shift();
    if (next === undefined) this.#used--;
    else next(); // (the place goes to the next in line)
  };
}

/**
 * The values of `headers` (credentials, most often) as a server may echo them: each whole, and its last word
 * (the token of `Bearer TOKEN`), longest first; none shorter than 8 characters, which would cut words out of
 * the text rather than hide a secret.
 */
function headerValues(headers: Record<string, string> = {}): string[] {
  const out = new Set<string>();
  for (const value of Object.values(headers)) {
    const whole = String(value).trim();
    for (const v of [whole, whole.split(/\s+/).at(-1) ?? ""]) if (v.length >= 8) out.add(v);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * Where a byte stream, decoded read by read by one streaming `TextDecoder` (the default one: a bad byte read
 * as U+FFFD, a byte order mark at the start dropped), is not UTF-8: {@linkcode Utf8Faults.push} gives, for
 * each read, the offsets in the stream's text of the U+FFFD that stand for bad bytes (not of those the stream
 * holds as UTF-8). A read whose text holds no U+FFFD costs one search; only one that holds some is walked
 * byte by byte, as the WHATWG decoder walks it (the bytes of a character cut at the read before with it).
 * Here with its one user, not with the byte helpers: every module that imports those (the scanner, `validate`)
 * would parse it.
 *
 * @example A bad byte told from a U+FFFD of the stream's own, across reads
 * ```ts
 * import assert from "node:assert/strict";
 * import { Utf8Faults } from "./http.ts";
 *
 * const decoder = new TextDecoder();
 * const faults = new Utf8Faults();
 * const push = (bytes: number[]) => faults.push(new Uint8Array(bytes), decoder.decode(new Uint8Array(bytes), { stream: true }));
 * assert.deepEqual(push([0x61, 0xe2, 0x82]), []); // "a", and a euro sign cut off
 * assert.deepEqual(push([0xac, 0xef, 0xbf, 0xbd, 0xff, 0x62]), [3]); // "\u20ac\ufffd\ufffdb": the second is bad
 * ```
 */
export class Utf8Faults {
  /** The bytes of a character the last read cut off (a valid start of one). */
  #carry: Uint8Array = new Uint8Array(0);
  /** UTF-16 units of text the reads so far decoded to, and bytes read. */
  #units = 0;
  #bytes = 0;

  /** The offsets (in the whole stream's text) of the bad bytes' U+FFFD in `text`, what `bytes` decoded to. */
  push(bytes: Uint8Array, text: string): number[] {
    const start = this.#units;
    this.#units += text.length;
    const first = this.#bytes - this.#carry.length; // (the stream offset of the first byte walked)
    this.#bytes += bytes.length;
    if (!text.includes("\uFFFD")) {
      this.#carry = cutOff(
        this.#carry.length === 0
          ? bytes
          : concatBytes([this.#carry, bytes], this.#carry.length + bytes.length),
      );
      return [];
    }
    const all = concatBytes([this.#carry, bytes], this.#carry.length + bytes.length);
    const faults: number[] = [];
    let [units, need, seen, lower, upper, lead] = [start, 0, 0, 0x80, 0xbf, 0];
    for (let i = 0; i < all.length; i++) {
      const b = all[i];
      if (need === 0) {
        lead = i;
        if (b <= 0x7f) units++;
        else if (b >= 0xc2 && b <= 0xdf) need = 1;
        else if (b >= 0xe0 && b <= 0xef) {
          [need, lower, upper] = [2, b === 0xe0 ? 0xa0 : 0x80, b === 0xed ? 0x9f : 0xbf];
        } else if (b >= 0xf0 && b <= 0xf4) {
          [need, lower, upper] = [3, b === 0xf0 ? 0x90 : 0x80, b === 0xf4 ? 0x8f : 0xbf];
        } else faults.push(units++);
        continue;
      }
      if (b < lower || b > upper) {
        // (the sequence so far is one U+FFFD; the byte is read again, as the start of what follows)
        [need, seen, lower, upper] = [0, 0, 0x80, 0xbf];
        faults.push(units++);
        i--;
        continue;
      }
      [lower, upper] = [0x80, 0xbf];
      if (++seen < need) continue;
      // (a byte order mark that starts the stream is dropped)
      const bom = first + lead === 0 && all[lead] === 0xef && all[lead + 1] === 0xbb &&
        all[lead + 2] === 0xbf;
      units += bom ? 0 : need === 3 ? 2 : 1;
      [need, seen] = [0, 0];
    }
    this.#carry = all.slice(all.length - (need === 0 ? 0 : seen + 1));
    return faults;
  }
}

/** The bytes that end `bytes` and start a character not ended (`bytes` being valid UTF-8 so far). */
function cutOff(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back];
    if (b >= 0x80 && b <= 0xbf) continue;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return length > back ? bytes.slice(bytes.length - back) : new Uint8Array(0);
  }
  return new Uint8Array(0);
}
