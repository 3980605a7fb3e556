/**
 * The stdio relay: starts an MCP server through the runtime layer (`_run/runtime.ts`, the one way the
 * library starts a process and ends its tree) and relays newline-delimited JSON-RPC between a client and
 * it, judging every message with a guard session. Two entry points, one relay:
 *
 * - {@linkcode relayMcp}: the client is any pair of byte streams you pass in;
 * - {@linkcode relayMcpStdio}: the client is this process's own stdin/stdout, and an interrupt ends the relay
 *   (what `toolguard mcp -- CMD ARGS...` runs).
 *
 * @module
 */
import {
  type ChildExit,
  EXITED_ALONE_NOTE,
  EXITED_ITSELF_NOTE,
  EXITED_NOTE,
  hostInput,
  hostOutput,
  type LiveChild,
  onInterrupt,
  spawnChild,
} from "../_run/runtime.ts";
import { treeMarkersWork } from "../_run/tree.ts";
import { clip, MAX_TREE_NOTE } from "../_common/values.ts";
import { checkGuardOptions, createMcpGuard, emitTo } from "./guard.ts";
import type { JsonRpcMessage } from "./jsonrpc.ts";
import {
  answersWaitLeft,
  checkShutdownGrace,
  ClientFeed,
  createFramer,
  encodeMessage,
  oversizedFromClient,
  oversizedFromServer,
  unwrittenFromClient,
  unwrittenFromServer,
  withNewline,
} from "./framing.ts";
import type { GuardedSession } from "./session.ts";
import type { McpEvent, McpFrame, McpGuardOptions, McpRelayExit } from "./types.ts";

/** Options for {@linkcode relayMcp}. */
export interface McpRelayOptions extends McpGuardOptions {
  /** The server program. */
  command: string;
  /** Its arguments. */
  args?: readonly string[];
  /** What the client writes (the relay's stdin). */
  input: AsyncIterable<Uint8Array>;
  /** Where the client reads (the relay's stdout). Return a promise to apply backpressure. */
  output: (bytes: Uint8Array) => void | Promise<void>;
  /** Working directory for the server. */
  cwd?: string;
  /** The server's whole environment (default: the relay's own). */
  env?: Record<string, string>;
  /** The server's stderr: passed to the relay's stderr (default) or dropped. */
  stderr?: "inherit" | "ignore";
  /**
   * After the client goes away, the grace: default 2000 ms. While requests the client sent wait for their
   * answers, the server keeps its stdin until it has been silent for the grace (counted from the later of the
   * client's leaving and the server's last message to the relay), at most 15 graces in all (30 s by
   * default); a server that has said nothing yet (it may still be starting) gets 5 graces (10 s). Then its
   * stdin is closed, and it gets the grace to exit before its process tree is ended. 0: ended at once. A
   * number of milliseconds from 0 to 2^31 - 1 (a timer's longest): any other value is refused, as a
   * `RangeError`, before the server starts.
   */
  shutdownGraceMs?: number;
  /** Stop relaying: the server's process tree is ended. */
  signal?: AbortSignal;
  /**
   * Longest message in bytes; longer ones are not relayed: a request is answered with a JSON-RPC error, a
   * server's answer is replaced by one (so no request is left waiting), and each is reported. Of a batch,
   * each member whose id its bytes showed (up to 10 000) is answered so, either way. Default 64 MiB.
   */
  maxMessageBytes?: number;
}

/**
 * How long the server's last messages may take to arrive once it has exited (a grandchild may hold the pipe).
 */
const LAST_WORDS_MS = 500;
/**
 * After SIGTERM, how long the server gets before SIGKILL; after SIGKILL, how long before the relay moves on.
 */
const KILL_WAIT_MS = 1000;
/**
 * How many bytes of its own messages to the server (answers to the server's requests) the relay writes while
 * the server's stdin is full, before it reads no more of the server until the server has taken them: a
 * server that floods the relay with requests it answers (an over-long batch of 10 000 is answered with
 * 10 000 errors) and reads none of the answers would otherwise grow the relay's memory without bound.
 */
const OWN_BACKLOG_BYTES = 4 * 1024 * 1024;
/** At most how long between the relay's looks whether the server's tree still runs, in the grace after SIGTERM. */
const TREE_POLL_MS = 25;
/** After the tree is ended, how long the relay waits for the server's pipe to close. */
const PIPE_CLOSE_MS = 200;

/** The stdio relay behind the public `relayMcp` (`_mcp/relays.ts`, which documents it). */
export async function relayMcp(options: McpRelayOptions): Promise<McpRelayExit> {
  checkGuardOptions(options); // before the server starts: a bad option must not leave it running
  checkShutdownGrace(options.shutdownGraceMs);
  const attempt = await spawnChild({
    command: options.command,
    args: options.args ?? [],
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.env !== undefined, // `env` is the server's whole environment
    stdin: "piped",
    stderr: options.stderr === "ignore" ? "ignore" : "inherit",
  });
  const server = attempt.ok ? { child: attempt.child } : { error: attempt.reason };
  return await new McpRelay(options, server).run();
}

/** The stdio relay on this process's stdin/stdout, behind the public `relayMcpStdio` (`_mcp/relays.ts`). */
export async function relayMcpStdio(
  command: string,
  args: readonly string[] = [],
  options:
    & Omit<McpRelayOptions, "command" | "args" | "input" | "output">
    & Partial<Pick<McpRelayOptions, "input" | "output">> = {},
): Promise<McpRelayExit> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const stopListening = onInterrupt(stop);
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    return await relayMcp({
      ...options,
      command,
      args,
      input: options.input ?? hostInput(),
      output: options.output ?? hostOutput(),
      signal: controller.signal,
    });
  } finally {
    stopListening();
    // (a caller's signal that outlives the relay, one for many relays, must not keep each one's listener)
    options.signal?.removeEventListener("abort", stop);
  }
}

/** The server as started: the live child, or why it could not start. */
type Server = { child: LiveChild } | { error: string };

/** What ended the relay's first phase. */
type First = "exited" | "client" | "aborted";

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    // Do not keep the process alive just for a grace timer.
    (t as unknown as { unref?: () => void }).unref?.();
  });
}

/** One relay between a client and a started (or failed) server. */
class McpRelay {
  readonly #options: McpRelayOptions;
  readonly #child: LiveChild | null;
  /** Why the server could not start, or null when it runs. */
  readonly #spawnError: string | null;
  readonly #session: GuardedSession;
  readonly #maxLineBytes: number;
  /** How the server ended, once it has. */
  #exit: ChildExit | null = null;
  /** Resolves when the server has exited (at once when it never started). */
  readonly #exited: Promise<void>;
  readonly #aborted: Promise<"aborted">;
  /** Removes the relay's listener from the caller's `signal`, once the relay is over. */
  #unwatchSignal = (): void => {};
  /** Writes to the client, in order. */
  #outChain: Promise<void> = Promise.resolve();
  #clientGone = false;
  /** Set while the server's stdin is full: the client is read again once it drains. */
  #drainWait: Promise<void> | null = null;
  /** Bytes of the relay's own answers to the server written since its stdin was last seen drained. */
  #ownBacklog = 0;
  /** When (`performance.now()`) the server last wrote to the relay; null while it has said nothing. */
  #heardAt: number | null = null;

  constructor(options: McpRelayOptions, server: Server) {
    this.#options = options;
    this.#child = "child" in server ? server.child : null;
    this.#spawnError = "error" in server ? server.error : null;
    this.#maxLineBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
    this.#exited = this.#child
      ? this.#child.exited.then((exit) => void (this.#exit = exit))
      : Promise.resolve();
    const signal = options.signal;
    this.#aborted = new Promise<"aborted">((resolve) => {
      if (signal?.aborted) return resolve("aborted");
      const aborted = () => resolve("aborted");
      signal?.addEventListener("abort", aborted, { once: true });
      this.#unwatchSignal = () => signal?.removeEventListener("abort", aborted);
    });
    // Batches are split: MCP servers since protocol 2025-06-18 leave a batch unanswered.
    const guard = createMcpGuard({ ...options, batches: options.batches ?? "split" });
    // (a GuardedSession, told of the server's requests the relay answers: see #unwrittenToClient)
    this.#session = guard.connect({ toServer: this.#toServer, toClient: this.#toClient }) as GuardedSession;
    if (this.#child) {
      this.#emit({
        event: "spawn",
        pid: this.#child.pid,
        command: options.command,
        args: [...(options.args ?? [])],
      });
    }
  }

  /** Relay until the server exits, the client leaves or the relay is aborted; then wind down. */
  async run(): Promise<McpRelayExit> {
    const serverDone = this.#pumpServer();
    const clientDone = this.#pumpClient();
    const first: First = await Promise.race([
      this.#exited.then(() => "exited" as const),
      clientDone.then(() => "client" as const),
      this.#aborted,
    ]);
    try {
      if (first === "exited") return await this.#afterServerExit(serverDone, clientDone);
      return await this.#shutDown(first, serverDone);
    } finally {
      this.#unwatchSignal(); // (a caller's signal may outlive the relay: one for many relays)
    }
  }

  #emit(event: McpEvent): void {
    emitTo(this.#options.onEvent, event);
  }

  readonly #toClient = (frame: McpFrame): Promise<void> => {
    const bytes = frame.bytes
      ? withNewline(frame.bytes)
      : encodeMessage(frame.message, this.#unwrittenToClient);
    this.#outChain = this.#outChain.then(async () => {
      if (this.#clientGone) return;
      try {
        await this.#options.output(bytes);
      } catch {
        this.#clientGone = true; // the client stopped reading (EPIPE): treat as gone
      }
    });
    return this.#outChain;
  };

  /**
   * A server message that cannot be written out to the client (`why`): reported, and a request answered with
   * an error.
   */
  readonly #unwrittenToClient = (message: unknown, why: string): void =>
    unwrittenFromServer(message, {
      emit: (event) => this.#emit(event),
      toServer: (answer) => {
        this.#session.answeredForClient(answer); // (the client's answer under its id is a second one)
        this.#answerServer(answer);
      },
    }, why);

  /**
   * A client message that cannot be written out to the server (`why`): reported, and a request answered with
   * an error.
   */
  readonly #unwrittenToServer = (message: unknown, why: string): void =>
    unwrittenFromClient(message, {
      emit: (event) => this.#emit(event),
      answer: (id, code, text) => void this.#session.answerWithError(id, code, text),
    }, why);

  /** Write to the server; returns a promise while its stdin is full, settled once it has taken the bytes. */
  readonly #toServer = (frame: McpFrame): void | Promise<void> => {
    if (!this.#child?.stdin) return;
    const bytes = frame.bytes
      ? withNewline(frame.bytes)
      : encodeMessage(frame.message, this.#unwrittenToServer);
    return this.#write(bytes);
  };

  /**
   * An answer of the relay's own to a request of the server's, written as any message to the server is (one
   * writer, in order), and counted while the server's stdin is full: see {@linkcode OWN_BACKLOG_BYTES}.
   */
  #answerServer(message: JsonRpcMessage): void {
    if (!this.#child?.stdin) return;
    const bytes = encodeMessage(message);
    if (this.#write(bytes) !== undefined) this.#ownBacklog += bytes.length;
  }

  /**
   * Every write to the server's stdin, in order; a promise while it is full (see
   * {@linkcode McpRelay.#toServer}).
   */
  #write(bytes: Uint8Array): void | Promise<void> {
    const full = this.#child?.stdin?.write(bytes);
    if (full && this.#drainWait === null) {
      // Wait for the pipe to drain, or for the server to be gone (then it never drains).
      this.#drainWait = Promise.race([full, this.#exited]).finally(() => {
        this.#drainWait = null;
        this.#ownBacklog = 0;
      });
    }
    return this.#drainWait ?? undefined;
  }

  /** Server to client, until the server's stdout closes. */
  async #pumpServer(): Promise<void> {
    const child = this.#child;
    if (child === null) return;
    const framer = createFramer({
      maxLineBytes: this.#maxLineBytes,
      onOverflow: (bytes, edges) =>
        oversizedFromServer(bytes, edges, this.#maxLineBytes, {
          emit: (event) => this.#emit(event),
          toServer: (message) => this.#answerServer(message),
          answerWithError: (id, code, text) => this.#session.answerWithError(id, code, text),
        }),
    });
    try {
      for (let chunk; (chunk = await child.stdout.read()) !== null;) {
        this.#heardAt = performance.now();
        for (const frame of framer.push(chunk)) this.#session.fromServer(frame);
        await this.#outChain;
        // (a server that reads none of the relay's answers to its requests is held back, as a client is)
        while (this.#ownBacklog > OWN_BACKLOG_BYTES && this.#drainWait !== null) await this.#drainWait;
      }
    } catch {
      // The pipe broke; the exit handler reports it.
    }
    for (const frame of framer.end()) this.#session.fromServer(frame);
  }

  /** Client to server, until the client's input ends; an oversized message is answered with an error. */
  async #pumpClient(): Promise<void> {
    const max = this.#maxLineBytes;
    const framer = createFramer({
      maxLineBytes: max,
      onOverflow: (bytes, edges) =>
        oversizedFromClient(bytes, edges, max, {
          emit: (event) => this.#emit(event),
          // (the writes' own back-pressure holds the client back: see #pumpClient's drain wait)
          fromClient: (frame) => void this.#session.fromClient(frame),
          toClient: (message) => void this.#toClient({ message }),
        }),
    });
    const feed = new ClientFeed(this.#session);
    try {
      for await (const chunk of this.#options.input) {
        for (const frame of framer.push(chunk)) await feed.feed(frame);
        if (this.#drainWait !== null) await this.#drainWait;
      }
    } catch {
      // The client's pipe broke: same as end-of-file.
    }
    for (const frame of framer.end()) await feed.feed(frame);
    await feed.settled();
  }

  /** The server exited (or never started): answer what waits, end what it left behind. */
  async #afterServerExit(serverDone: Promise<void>, clientDone: Promise<void>): Promise<McpRelayExit> {
    // Give the server's last messages a moment to arrive (a grandchild may hold the pipe open).
    await Promise.race([serverDone, delay(LAST_WORDS_MS)]);
    const exit = this.#exit;
    const how = this.#spawnError !== null
      ? `could not be started (${this.#spawnError})`
      : exit?.signal
      ? `was ended by ${exit.signal}`
      : `exited with code ${exit?.code ?? null}`;
    this.#session.serverClosed(how);
    if (this.#spawnError !== null) {
      this.#emit({ event: "spawn_failed", command: this.#options.command, detail: this.#spawnError });
      // Answer the client's requests with errors until it goes away (or the relay is aborted).
      await Promise.race([clientDone, this.#aborted]);
      return this.#finish("spawn_failed", `the MCP server ${how}`);
    }
    // Descendants that outlived the server get the grace an abort gives them to clean up, then SIGKILL.
    if (this.#child !== null) await this.#endTree(this.#child);
    return this.#finish("server_exited", `the MCP server ${how}`);
  }

  /**
   * The client went away, or the relay was aborted: close the server's stdin, then end the tree. A client
   * that went away first has what it sent already passed on (calls held back for the tool list included), as
   * the server itself would have read it all before the end of its input.
   */
  async #shutDown(first: "client" | "aborted", serverDone: Promise<void>): Promise<McpRelayExit> {
    const graceMs = first === "aborted" ? 0 : this.#options.shutdownGraceMs ?? 2000;
    if (graceMs > 0) {
      // Held calls are sent on once the tool list comes; then every request sent waits for its answer.
      const answered = this.#session.released().then(() => this.#session.idle());
      const stop = new AbortController();
      await Promise.race([answered, this.#exited, this.#aborted, this.#silentFor(graceMs, stop.signal)]);
      stop.abort();
    }
    await this.#endServer(graceMs);
    await Promise.race([serverDone, delay(PIPE_CLOSE_MS)]);
    this.#session.serverClosed("was shut down because the client closed the connection");
    return this.#finish(
      first === "aborted" ? "aborted" : "client_closed",
      // (by what ended the relaying: an interrupt may end the client's input too, as the relay stops)
      first === "aborted" ? "the relay was stopped" : "the client closed the connection",
    );
  }

  /**
   * Resolves once the server has been silent for `graceMs` since the later of now (the client's leaving) and
   * its last message, as {@linkcode answersWaitLeft} says; or soon after `stop` (its timers are unref'd).
   */
  async #silentFor(graceMs: number, stop: AbortSignal): Promise<void> {
    const leftAt = performance.now();
    while (!stop.aborted) {
      const left = answersWaitLeft(leftAt, this.#heardAt, graceMs);
      if (left === 0) return;
      await delay(left);
    }
  }

  /**
   * Close the server's stdin; once it exits, after `graceMs`, or at an abort, end its tree
   * ({@linkcode McpRelay.#endTree}).
   */
  async #endServer(graceMs: number): Promise<void> {
    const child = this.#child;
    if (child === null) return;
    child.stdin?.close();
    // (a signal during the grace period ends the tree at once; a server that exited in time may have left
    // processes behind: they are ended alike, SIGTERM first)
    await Promise.race([this.#exited, delay(graceMs), this.#aborted]);
    await this.#endTree(child);
  }

  /**
   * End the server's tree: SIGTERM, then, once the tree is no longer seen running (or KILL_WAIT_MS after the
   * SIGTERM), SIGKILL to what is left of it. Also once the server exited by itself: what it left behind (a
   * shell's child, a wrapper's server) may clean up on SIGTERM, as it may at an abort.
   */
  async #endTree(child: LiveChild): Promise<void> {
    child.killTree("SIGTERM");
    const graceEnd = performance.now() + KILL_WAIT_MS;
    await Promise.race([this.#exited, delay(KILL_WAIT_MS)]);
    // A server that left on the SIGTERM does not shorten its tree's grace: what it started may be cleaning up
    // too (a shell's child, a wrapper's server), and is waited for while it runs, up to the same bound.
    // (looked at again soon at first: what the SIGTERM ended is usually gone within milliseconds)
    for (
      let wait = 2;
      performance.now() < graceEnd && child.treeRunning();
      wait = Math.min(wait * 2, TREE_POLL_MS)
    ) {
      await delay(wait);
    }
    // Sent even when the tree seems gone: a descendant that ignores SIGTERM would outlive the relay.
    child.killTree("SIGKILL");
    await Promise.race([this.#exited, delay(KILL_WAIT_MS)]);
  }

  async #finish(reason: McpRelayExit["reason"], detail: string): Promise<McpRelayExit> {
    const exitCode = this.#exit?.code ?? null;
    const signal = this.#exit?.signal ?? null;
    await this.#outChain;
    this.#emit({ event: "exit", reason, exitCode, signal });
    const tree = this.#treeReached();
    if (tree === undefined) return { reason, exitCode, signal, detail };
    return { reason, exitCode, signal, detail: detail + this.#treeSaid(tree), tree };
  }

  /** How far the relay's ending of the server's tree reached (see `McpRelayExit.tree`); undefined: no server. */
  #treeReached(): McpRelayExit["tree"] {
    const child = this.#child;
    if (child === null) return undefined;
    const reach = child.killReached();
    if (reach === "tool") return "server_only";
    const note = child.treeNote(); // (in the tool's words, which the notes compared here are)
    // A server that had exited (unreaped) and left no process: its whole tree was already gone (Linux markers).
    if (reach === "none") return note === EXITED_ALONE_NOTE ? "ended" : "none";
    return note === undefined || note === EXITED_NOTE || note === EXITED_ITSELF_NOTE ? "ended" : "group_only";
  }

  /**
   * `tree` in words, as runTool's detail says it: under Deno with a partial `--allow-run` only the server's
   * own handle may be used, and its descendants stay; where markers do not work the tree is found by its
   * process group only, which a descendant that left it escapes. A tree the relay's sweep found no process of
   * (a server that exited leaving none it could find) is not said to have been ended, nor its reach: where
   * markers reach the tree (Linux) the detail says none was found running, not that none was left (a set-uid or
   * non-dumpable descendant hides its marker, and once its parent has exited and it has left the group nothing
   * leads to it); otherwise nothing is said (what escaped the group, or what a partial permission could not
   * reach, cannot be seen).
   */
  #treeSaid(tree: NonNullable<McpRelayExit["tree"]>): string {
    const found = this.#child!.killFound();
    if (tree === "ended") {
      if (found) return "; the relay ended the server's process tree";
      // only markers see the whole tree (macOS has its group alone, which says nothing of what left it)
      return treeMarkersWork() ? "; no process of the server's tree was found running" : "";
    }
    if (!found) return "";
    // Named for the server, and cut as runTool's detail cuts a tree note.
    const note = this.#child!.treeNote("server");
    const why = note === undefined ? "" : `, ${clip(note, MAX_TREE_NOTE)}`;
    if (tree === "group_only") return `; the relay ended the server's process tree${why}`;
    const said = tree === "server_only"
      ? "the relay ended the server but not its process tree"
      : "the relay could not end the server's process tree";
    return `; ${said}${why}`;
  }
}
