/**
 * The HTTP relay's bookkeeping of sessions (`_mcp/http.ts`): which session each POST goes in (a new
 * `initialize` starts one, and what belongs to the session before stays in it), which POST carries each of
 * the client's requests, the POSTs the server has not accepted or sent no headers for (a place one of the
 * client's cancelled requests holds is handed over), and the session each request of the server's came in,
 * for the client's answer.
 *
 * @module
 */
import { isRecord } from "../_common/values.ts";
import { idKey, isId, isRequest, type JsonRpcId, type JsonRpcMessage } from "./jsonrpc.ts";

/** The most sessions (each `initialize` sent starts one) the relay ends as it closes: the last ones. */
const MAX_SESSIONS_ENDED = 64;

/** The most requests of the client's taken with 202 Accepted kept for their cancels (see `#took`). */
const MAX_TAKEN = 4096;

/** A session's id and protocol version, as the answer to its `initialize` gave them (if it did yet). */
export interface SessionIds {
  id?: string;
  version?: string;
  /**
   * Set once the server answered HTTP 404 to a request carrying the session's id: MCP says the session is
   * over, and a client must start a new one (`initialize` without an id). Nothing more goes in it, and it is
   * not ended with `DELETE` as the relay closes.
   */
  ended?: boolean;
}

/** A POST of the client's requests whose headers the server has not sent (see `HttpSessions.unheard`). */
export interface UnheardPost {
  /** The message it carries (see {@linkcode HttpSessions.carry}). */
  readonly message: unknown;
  readonly requests: { id: JsonRpcId }[];
  /** Ends the POST. */
  readonly stop: AbortController;
  /** Frees its place (`maxInFlight`), once. */
  readonly release: () => void;
}

/** The requests of a message (one, or a batch) that wait for answers. */
export function requestsOf(message: unknown): { id: JsonRpcId; method: string }[] {
  return (Array.isArray(message) ? message : [message]).flatMap((m) =>
    isRecord(m) && isRequest(m as JsonRpcMessage) ? [{ id: m.id as JsonRpcId, method: String(m.method) }] : []
  );
}

/** The members of a message: a batch's, or the message itself (none for nothing). */
export function membersOf<T>(message: T | T[] | undefined): T[] {
  return Array.isArray(message) ? message : message === undefined ? [] : [message];
}

/** The id a lone `notifications/cancelled` names (`params.requestId`), or undefined for any other message. */
export function cancelledId(message: unknown): JsonRpcId | undefined {
  if (!isRecord(message) || message.method !== "notifications/cancelled" || "id" in message) return undefined;
  const id = isRecord(message.params) ? message.params.requestId : undefined;
  return isId(id) ? id : undefined;
}

/**
 * The sessions of one HTTP relay, and what each message and request belongs to. Messages are known by their
 * objects (a batch by its array), requests by {@linkcode idKey}.
 */
export class HttpSessions {
  /** True while the client's request with this id waits for its answer (the guard session's). */
  readonly #isWaiting: (id: JsonRpcId) => boolean;
  /**
   * The session the client's messages go in now. A new `initialize` starts another (a new object): an answer
   * of the session before, resumed later, still goes with that session's id and version.
   */
  #current: SessionIds = {};
  /**
   * The sessions the client started (each `initialize` sent), the last {@linkcode MAX_SESSIONS_ENDED}: each
   * the server gave an id is ended as the relay closes (see {@linkcode HttpSessions.toEnd}).
   */
  readonly #started: SessionIds[] = [];
  /**
   * The last `initialize` message sent: the answer to its POST assigns the session id, as MCP says, and the
   * protocol version.
   */
  #initialize: unknown;
  /** Another session id than that answer's was reported (once a session: see `otherIdFirst`). */
  #otherIdSaid = false;
  /**
   * The message whose POST carries each request waiting its turn or in flight, by {@linkcode idKey}: an
   * answer under its id on the stream of another POST's (one sent before under the same id, cancelled) is not
   * its answer (see {@linkcode HttpSessions.superseded}), though its own POST may not have gone yet.
   */
  readonly #postOf = new Map<string, unknown>();
  /**
   * The client's cancels of requests the relay was sending as they came (see `#postOf`): each goes in the
   * session its request went in, or not at all when it never went.
   */
  readonly #cancelsKnown = new WeakSet<object>();
  /**
   * The session each message's POST went in (or goes in: a cancel, that of the request it cancels), by the
   * message: a cancel of a request of the session before a new `initialize` goes in that session.
   */
  readonly #sessionOf = new WeakMap<object, SessionIds>();
  /**
   * The session each message of the server's came in, by the message (a batch's member too): the guard
   * session keeps the server's requests by it (see `RequestScopes` in `_mcp/session.ts`), and tells which
   * session each of the client's answers goes in (see {@linkcode HttpSessions.answerGoesIn}).
   */
  readonly #cameIn = new WeakMap<object, SessionIds>();
  /**
   * The session each of the client's answers goes in, by the answer (a batch's member too): that of the
   * request it answers, though a new `initialize` went meanwhile.
   */
  readonly #answerOf = new WeakMap<object, SessionIds>();
  /**
   * The message whose POST carried each of the client's requests the server took with 202 Accepted, by
   * {@linkcode idKey}, until its answer comes (or another request takes its id): a cancel of it goes in its
   * session, though its POST is over and a new `initialize` went meanwhile (the server may work on it, though
   * the relay answered it with an error as it left that session's stream). The oldest is forgotten past
   * {@linkcode MAX_TAKEN}: its cancel then goes in the current session.
   */
  readonly #took = new Map<string, unknown>();
  /**
   * The guard's own requests whose POST is waiting its turn or in flight, by {@linkcode idKey}: each resolves
   * with the session it went in once the server accepted it, undefined when it was not sent (see
   * {@linkcode HttpSessions.ownSession}).
   */
  readonly #ownPosts = new Map<string, Promise<SessionIds | undefined>>();
  /**
   * The POSTs of the client's requests in flight the server has not accepted yet: what ends one (see
   * {@linkcode HttpSessions.freeCancelledPlace}). Not by their requests' ids: a request the client sends
   * again under the id of one it cancelled would hide the POST of that one.
   */
  readonly #unheard = new Set<UnheardPost>();
  /**
   * The requests let go or waiting their turn whose POST the server has not accepted, by {@linkcode idKey}.
   */
  readonly #unaccepted = new Map<string, Promise<void>>();

  /** `isWaiting`: true while the client's request with this id waits for its answer. */
  constructor(isWaiting: (id: JsonRpcId) => boolean) {
    this.#isWaiting = isWaiting;
  }

  /** The session the client's messages go in now. */
  get current(): SessionIds {
    return this.#current;
  }

  /**
   * The client's `initialize` (`message`) goes: it starts a new session, without the id and version of any
   * before it, as MCP says (a server refuses an initialize naming a session).
   */
  start(message: unknown): void {
    this.#current = {};
    if (this.#started.push(this.#current) > MAX_SESSIONS_ENDED) this.#started.shift();
    [this.#initialize, this.#otherIdSaid] = [message, false];
  }

  /** True when `message` is the last `initialize` sent: its POST's answer brings its session's id. */
  starts(message: unknown): boolean {
    return message === this.#initialize;
  }

  /**
   * True the first time in a session that an answer gave another session id than its session's: it is said
   * once a session.
   */
  otherIdFirst(): boolean {
    if (this.#otherIdSaid) return false;
    this.#otherIdSaid = true;
    return true;
  }

  /** The sessions to end as the relay closes: each the server gave an id, once (of the last ones started). */
  toEnd(): SessionIds[] {
    const live = this.#started.filter((ids) => ids.id !== undefined && ids.ended !== true);
    return [...new Map(live.map((ids) => [ids.id, ids])).values()];
  }

  /**
   * The session the POST of `message` goes in: the one given it (a cancel's, an answer's), or the current.
   */
  sessionFor(message: unknown): SessionIds {
    if (typeof message !== "object" || message === null) return this.#current;
    const ids = this.#sessionOf.get(message) ?? this.#current;
    this.#sessionOf.set(message, ids);
    return ids;
  }

  /** `message`'s POST goes in the session `ids`. */
  assign(message: unknown, ids: SessionIds): void {
    if (isRecord(message) || Array.isArray(message)) this.#sessionOf.set(message, ids);
  }

  /** The session the POST of `message` went in (or was given), if one. */
  sessionOf(message: unknown): SessionIds | undefined {
    return typeof message === "object" && message !== null ? this.#sessionOf.get(message) : undefined;
  }

  /**
   * The requests of `message` go in its POST (until it ends, or will not go: see `forget`). Called in the
   * client's order, as each message comes, not as its POST goes: a later message under one of its ids (the
   * client cancelled the request and used its id again) keeps it, though this one's POST goes after.
   */
  carry(message: unknown): void {
    for (const r of requestsOf(message)) {
      this.#postOf.set(idKey(r.id), message);
      this.#took.delete(idKey(r.id));
    }
  }

  /** The POST of `message` ended, or will never go: it carries its requests no more. */
  forget(message: unknown): void {
    for (const r of requestsOf(message)) {
      if (this.#postOf.get(idKey(r.id)) === message) this.#postOf.delete(idKey(r.id));
    }
  }

  /**
   * The server took `message` with 202 Accepted: a cancel of its requests (those no later POST carries) goes
   * in its session until their answers come, though its POST is over (see `#took`).
   */
  took(message: unknown): void {
    for (const r of this.stillOf(message, requestsOf(message))) {
      this.#took.delete(idKey(r.id)); // (to the end: the oldest goes first)
      this.#took.set(idKey(r.id), message);
      if (this.#took.size > MAX_TAKEN) this.#took.delete(this.#took.keys().next().value!);
    }
  }

  /**
   * The message whose POST carries the request that the client's `cancel` (of the request with id `id`)
   * cancels, if the relay is sending one; the cancel is then known as one of such a request (see
   * {@linkcode HttpSessions.cancelsKnown}).
   */
  cancelTarget(cancel: unknown, id: JsonRpcId): unknown {
    const target = this.#postOf.get(idKey(id)) ?? this.#took.get(idKey(id));
    if (target !== undefined && isRecord(cancel)) this.#cancelsKnown.add(cancel);
    return target;
  }

  /** True for a cancel of a request the relay was sending as it came (see `cancelTarget`). */
  cancelsKnown(m: unknown): boolean {
    return isRecord(m) && this.#cancelsKnown.has(m);
  }

  /**
   * True when `m`, on the stream of the POST of `sent`, is the answer to a request of `sent` whose id a later
   * POST carries now: the client cancelled it and sent another under its id (a new `initialize` may take the
   * id of one it gave up on), whose answer this is not. Dropped quietly, as the late answer to a cancelled
   * request is (see the session's `#stray`).
   */
  superseded(m: unknown, sent: unknown): boolean {
    if (!isRecord(m) || "method" in m || !isId(m.id)) return false;
    const key = idKey(m.id);
    const now = this.#postOf.get(key);
    return now !== undefined && now !== sent && requestsOf(sent).some((r) => idKey(r.id) === key);
  }

  /**
   * The `requests` of `message` that no later POST carries under their ids: the relay's error for one that
   * did would answer the later one (see {@linkcode HttpSessions.superseded}).
   */
  stillOf<R extends { id: JsonRpcId }>(message: unknown, requests: R[]): R[] {
    return requests.filter((r) => (this.#postOf.get(idKey(r.id)) ?? message) === message);
  }

  /**
   * Note `requests` as not accepted by the server (a cancel of one waits for its POST: see `unaccepted`)
   * until the returned function is called.
   */
  trackUnaccepted(requests: { id: JsonRpcId }[]): () => void {
    if (requests.length === 0) return () => {};
    let acceptedAll!: () => void;
    const accepted = new Promise<void>((resolve) => (acceptedAll = resolve));
    for (const r of requests) this.#unaccepted.set(idKey(r.id), accepted);
    void accepted.then(() => {
      for (const r of requests) {
        if (this.#unaccepted.get(idKey(r.id)) === accepted) this.#unaccepted.delete(idKey(r.id));
      }
    });
    return acceptedAll;
  }

  /** Resolves once the POST of the request with this id was accepted (or ended, or will not go); if one. */
  unaccepted(id: JsonRpcId): Promise<void> | undefined {
    return this.#unaccepted.get(idKey(id));
  }

  /**
   * Note `post` as without headers from the server until the returned function is called: its place may be
   * handed over (see {@linkcode HttpSessions.freeCancelledPlace}).
   */
  unheard(post: UnheardPost): () => void {
    this.#unheard.add(post);
    return () => void this.#unheard.delete(post);
  }

  /**
   * Every place (`maxInFlight`) is taken: one a POST holds whose requests the client all cancelled, and whose
   * headers the server has not sent (a server may send none until it answers, or never), is freed (see
   * {@linkcode HttpSessions.#abandonIfCancelled}); true when one was. Not at the cancel itself: the POST may
   * have just gone (a request cancelled while it waited its turn is sent all the same, as the client's order
   * says), and ended then, it might never reach the server; while no request needs its place, it may.
   */
  freeCancelledPlace(): boolean {
    for (const post of this.#unheard.values()) if (this.#abandonIfCancelled(post)) return true;
    return false;
  }

  /**
   * Every POST without headers whose requests the client all cancelled is ended (see `freeCancelledPlace`).
   */
  abandonCancelled(): void {
    for (const post of [...this.#unheard.values()]) this.#abandonIfCancelled(post);
  }

  /**
   * End `post` and free its place when no request of it waits any more (the client cancelled them): the
   * cancel, which waits for it, then goes (see `SendOrder.after` in `_mcp/http.ts`). The server may have the
   * request (MCP: a connection closed is no cancel), and the cancel tells it. True when it was ended. A
   * request sent again under the id of one of them, which waits under it, is not theirs (see `stillOf`).
   */
  #abandonIfCancelled(post: UnheardPost): boolean {
    if (post.stop.signal.aborted) return false;
    if (this.stillOf(post.message, post.requests).some((r) => this.#isWaiting(r.id))) return false;
    post.stop.abort();
    post.release();
    return true;
  }

  /**
   * The guard's own request in `message` is being sent: call the first function returned with the session
   * it went in once the server accepted it (undefined when it was not sent), the second once its POST is
   * over.
   */
  ownPost(message: unknown): [sent: (ids: SessionIds | undefined) => void, over: () => void] {
    const keys = requestsOf(message).map((r) => idKey(r.id));
    let sent!: (ids: SessionIds | undefined) => void;
    const posted = new Promise<SessionIds | undefined>((resolve) => (sent = resolve));
    for (const key of keys) this.#ownPosts.set(key, posted);
    const over = () => {
      for (const key of keys) if (this.#ownPosts.get(key) === posted) this.#ownPosts.delete(key);
    };
    return [sent, over];
  }

  /**
   * Resolves with the session the guard's own request with this id went in (see `ownPost`), undefined when it
   * was not sent; with the current session when it is not known.
   */
  ownSession(id: JsonRpcId | undefined): Promise<SessionIds | undefined> {
    const posted = id === undefined ? undefined : this.#ownPosts.get(idKey(id));
    return posted ?? Promise.resolve(this.#current);
  }

  /**
   * Note the session each message of the server's in `message` (one, or a batch) came in, `ids`: a request's,
   * for the client's answer (see {@linkcode HttpSessions.cameIn}); an answer ends the wait of a cancel's for
   * its request (see `#took`).
   */
  asked(message: unknown, ids: SessionIds): void {
    for (const m of membersOf<unknown>(message)) {
      if (!isRecord(m)) continue;
      this.#cameIn.set(m, ids);
      // (an answer to the client's request)
      if (typeof m.method !== "string" && isId(m.id)) {
        this.#took.delete(idKey(m.id));
      }
    }
  }

  /** The session a message of the server's came in (see `asked`), if known. */
  cameIn(m: object): SessionIds | undefined {
    return this.#cameIn.get(m);
  }

  /**
   * The client's answer `m` (or the relay's in its place) goes in the session `ids`: that of the request of
   * the server's it answers, as the guard session found it.
   */
  answerGoesIn(m: object, ids: SessionIds): void {
    this.#answerOf.set(m, ids);
  }

  /**
   * The client's answers (`message`) go in the session of the first of them whose request's is known; a
   * batch's answers of other sessions go in theirs (see {@linkcode HttpSessions.answersHere}).
   */
  answerIn(message: unknown): void {
    if (typeof message !== "object" || message === null || this.#sessionOf.has(message)) return;
    for (const m of membersOf<unknown>(message)) {
      const ids = isRecord(m) ? this.#answerOf.get(m) : undefined;
      if (ids !== undefined) return void this.#sessionOf.set(message, ids);
    }
  }

  /**
   * `message` (one, or a batch) without the client's answers in it to requests of another session than
   * `ids`, the one it goes in: those are given to `send`, a batch a session, each assigned its own (answers
   * keep no order). Undefined when nothing is left.
   */
  answersHere<T>(message: T, ids: SessionIds, send: (answers: unknown[]) => void): T | undefined {
    if (!Array.isArray(message)) return message;
    const elsewhere = new Map<SessionIds, unknown[]>();
    const here = message.filter((m) => {
      const asked = isRecord(m) ? this.#answerOf.get(m) : undefined;
      if (asked === undefined || asked === ids) return true;
      elsewhere.set(asked, [...(elsewhere.get(asked) ?? []), m]);
      return false;
    });
    for (const [asked, answers] of elsewhere) {
      this.#sessionOf.set(answers, asked);
      send(answers);
    }
    return elsewhere.size === 0 ? message : here.length > 0 ? here as T : undefined;
  }
}
