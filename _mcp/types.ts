/**
 * The types every part of the MCP guard shares: options, events, the judgements of calls and results, and
 * the session a guard runs between a client and a server.
 *
 * @module
 */
import type { CallVerdict, Finding, ScanFinding } from "../types.ts";
import type { JsonRpcId, JsonRpcMessage } from "./jsonrpc.ts";
import type { McpPinOptions } from "./pins.ts";
import type { DescribedKind, DescriptionFinding } from "./poisoning.ts";

/** What the guard does with calls to a tool whose `inputSchema` it cannot enforce (unsupported keyword). */
export type UncheckedToolPolicy = "reject" | "forward";

/**
 * What the guard does with argument-injection findings (scanner hits in a call's string arguments):
 * `"warn"` (default) reports them (`injection_warning`) and forwards the call, `"block"` rejects the call
 * with feedback, `"off"` does not scan arguments. The default is `"warn"` because arguments are written by
 * the client's own model, and legitimate ones quote injection-like text (a file that discusses prompt
 * injection, an issue report): blocking broke such calls, while an injected model is better stopped at
 * the source, by scanning what servers send (`scanOutput`).
 */
export type InjectionPolicy = "block" | "warn" | "off";

/** Options shared by every way of using the MCP guard. All optional. */
export interface McpGuardOptions {
  /** Scan the text of tool results for injected instructions and flag them. Default false. */
  scanOutput?: boolean;
  /**
   * Cut located injected instructions out of tool results (implies `scanOutput`). Default false. The
   * findings under `_meta["toolguard/output_findings"]` then keep rule, category, pointer and offsets, but
   * their `excerpt` reads `[redacted: category]` too: it quoted the match, back into the message the model
   * reads. The `output_flagged` event and `checkResult().findings` keep the quoted excerpt, for the host.
   */
  redact?: boolean;
  /**
   * Calls to a tool whose schema the validator cannot enforce: `"reject"` (default: a schema is never
   * half-enforced in silence) answers them with an error result; `"forward"` lets them through unchecked
   * and reports an `unchecked_call` event.
   */
  uncheckedTools?: UncheckedToolPolicy;
  /**
   * Client batches: `"forward"` (default for a guard made in code) sends a batch on as one array, with
   * rejected calls answered at once on their own; `"split"` (what the relays use) sends the elements one by
   * one and answers the batch with one array once every request has an answer, because MCP servers since
   * protocol 2025-06-18 drop batches without answering; a server's batch then reaches the client element by
   * element too, as the MCP SDKs' readers drop an array whole.
   */
  batches?: "forward" | "split";
  /**
   * Argument-injection findings: `"warn"` (default), `"block"` or `"off"`; see {@linkcode InjectionPolicy}.
   */
  injection?: InjectionPolicy;
  /**
   * Forward calls whose arguments carry a private key or a cloud or API token. Default false: such calls are
   * refused with an `argument_secret` finding.
   */
  allowSecrets?: boolean;
  /**
   * Hide tools (prompts, resources) whose description or title carries instructions aimed at the model, and
   * refuse calls to such tools. Default false: the flagged span is replaced by a marker and the tool stays.
   */
  strict?: boolean;
  /**
   * How long the guard waits for its own `tools/list` request before rejecting held calls (the server is
   * then sent `notifications/cancelled` for it, and the HTTP relay ends its `POST`). Default 30 000.
   * It follows at most 100 pages (10 000 tools, 256 MiB) of a list: past that, held calls are rejected too.
   */
  toolsTimeoutMs?: number;
  /**
   * Pin tool definitions (against rug pulls): each tool's name, description, input schema, title, annotations
   * and output schema are hashed on first sight (a pin made before title, annotations and output schema were
   * hashed is completed, not refused, when the rest still matches); a pinned tool whose definition changes is
   * reported (`tool_changed`, with a diff) and its calls are refused until the change is accepted. Default:
   * off in code; `toolguard mcp` pins by default.
   */
  pins?: McpPinOptions;
  /** Called for every judgement and lifecycle event (for logs). Errors it throws are swallowed. */
  onEvent?: (event: McpEvent) => void;
}

/** A scanner finding in a tool result, with where in the result it sits. */
export interface McpOutputFinding extends ScanFinding {
  /** JSON Pointer to the string in the result, e.g. `/content/0/text`. Offsets are into that string. */
  pointer: string;
  /** True when the string is the property name that ends `pointer`, not the value there. */
  key?: true;
}

/** Everything the guard reports through `onEvent`. Discriminate on `event`. */
export type McpEvent =
  | {
    event: "tools";
    source: "client" | "guard";
    count: number;
    unchecked: { name: string; error: string }[];
    relaxed: { name: string; pointer: string; note: string }[];
  }
  | { event: "tools_pinned"; names: string[] }
  | {
    event: "tool_changed";
    name: string;
    pinned: string;
    seen: string;
    diff: string;
    accepted: boolean;
  }
  | { event: "pins_error"; detail: string }
  | {
    event: "description_flagged";
    kind: DescribedKind;
    name: string;
    pointer: string;
    hidden: boolean;
    findings: DescriptionFinding[];
  }
  | { event: "injection_warning"; id: JsonRpcId; name: string; findings: Finding[] }
  | { event: "call_allowed"; id: JsonRpcId; name: string }
  | { event: "unchecked_call"; id: JsonRpcId; name: string; error: string }
  | { event: "call_rejected"; id: JsonRpcId; name: string; findings: Finding[]; feedback: string }
  | {
    event: "output_flagged";
    id: JsonRpcId;
    /** The tool, for a `tools/call` result; empty for other payloads. */
    name: string;
    /** The method whose payload was flagged, when it is not a `tools/call` result. */
    method?: string;
    redacted: boolean;
    findings: McpOutputFinding[];
  }
  /**
   * The tool list could not be taken (`detail`: why): the guard's own `tools/list` failed (calls held for it
   * are answered with an error), or `setTools` refused the list in the server's answer to the client's own
   * `tools/list` (the guard keeps the list it had).
   */
  | { event: "tools_fetch_failed"; detail: string }
  | { event: "server_closed"; reason: string; answered: number }
  | { event: "spawn"; pid: number; command: string; args: string[] }
  | { event: "spawn_failed"; command: string; detail: string }
  /**
   * (HTTP relay) The server could not be reached or refused a POST: its requests were answered with errors.
   */
  | { event: "post_failed"; detail: string }
  /**
   * (HTTP relay) The server's own event stream (`GET`) was not opened for a reason other than the server
   * offering none: a redirect not followed (to another origin, say). The server's requests and notifications
   * come on the answers to `POST`s alone; a request it took with 202 Accepted is answered with an error.
   */
  | { event: "stream_failed"; detail: string }
  /**
   * (HTTP relay) An answer to a `POST` other than `initialize`'s carried another `Mcp-Session-Id` than the
   * answer to `initialize` did (or one where it carried none): not taken, since MCP has the server assign the
   * session id there, and a late answer of an old session's would replace the new session's. Said once a
   * session; `detail` names the method, never the id.
   */
  | { event: "session_id_ignored"; detail: string }
  | { event: "oversized_message"; from: "client" | "server"; bytes: number; id?: JsonRpcId }
  /**
   * A message whose text names a property twice in one object (`pointer`: the first such, a JSON Pointer into
   * the message; `id`: the message's, when it has one). `JSON.parse` keeps the last value, which is what the
   * guard judged, while the peer's parser may keep the first (cJSON's, some C++, Rust and Java ones): the
   * message is passed on written anew from what the guard judged, not as it came. A client's `tools/call` so
   * written is refused instead, as a malformed call (`call_rejected`).
   */
  | { event: "repeated_key"; from: "client" | "server"; pointer: string; id?: JsonRpcId }
  /**
   * A message whose line (over HTTP, the server's body or event) is not valid UTF-8 (`id`: the message's,
   * when it has one; a batch's line is reported once, without one, whether it is split or not). The guard
   * read each bad byte as U+FFFD, while the peer's decoder may skip it or read it with the bytes after it (a lead byte before
   * a quote ends no string to a lax decoder), and so read other keys or values than the guard judged: the
   * message is passed on written anew from what the guard judged, not as it came. A client's `tools/call` so
   * written is refused instead, as a malformed call (`call_rejected`).
   */
  | { event: "invalid_utf8"; from: "client" | "server"; id?: JsonRpcId }
  /**
   * A server message the client was not given: a line that is not JSON (`text`: its first 200 characters;
   * with split batches, a batch element that is no message too), an answer that no request waits for (a
   * second answer, one to a request never sent, or one without an id a request can have), which a client
   * could take for the real answer while the guard had not looked into it, a message with both a method and
   * an answer's result or error (`request_and_answer`), which a client could take for either, or a message
   * nested too deeply for the runtime's `JSON.stringify` to write it out again (`too_deep`; a relay answers
   * such a request of the server's with an error, and puts an error in place of such an answer, as the
   * session does where the client's sink fails at one), or a message the guard could not judge
   * (`not_judged`, `text`: why: reading it threw, as a getter or proxy of a transport's object may, or, built
   * in code, it holds what JSON cannot write, a BigInt; an answer to a waiting request is replaced by an
   * error, a request of the server's is answered with one; one that may be an answer but whose id could not
   * be read, or nothing of it, has every request of the client's that waited when it came and still waits
   * answered with an error,
   * as which one it answers is not known). `from: "client"`: an answer of the client's that no request of
   * the server's waits for (`no_request`: a second answer, or one to an id the server never used), not passed
   * on to the server.
   */
  | {
    event: "stray_message";
    from: "server" | "client";
    kind: "not_json" | "no_request" | "request_and_answer" | "too_deep" | "not_judged";
    id?: JsonRpcId;
    text?: string;
  }
  /**
   * A client message not passed on to the server: a line that is not JSON (`text`: its first 200 characters),
   * which a laxer server parser could still read, or a message built in code that JSON cannot write, a
   * BigInt, or that is too large for the runtime to write (`text`: why), a `tools/call` without an id, which
   * no rejection could answer, or a request under the id of one still waiting (`id_in_use`), whose answers
   * could not be told apart, a request whose id is an array, an object or a number too large to read back
   * (`invalid_id`: MCP has it be a string or an integer, and no answer could reach it), a message with a
   * member that is a JSON-RPC one but for case (`Method`, `PARAMS`, `ID`: `case_variant`; a parser that
   * ignores case, Go's `encoding/json` or cJSON's, may read it for the member the guard judged), a request
   * past the HTTP relay's `maxInFlight` (`in_flight_limit`), or a message past the 1024 that may wait while
   * the guard reads the server's tool list, or (HTTP relay) for the answer to `initialize` (`held_limit`; a
   * notification among them is dropped there: the client's input is read on, for its cancel of that
   * initialize), or a message nested too deeply for the runtime's `JSON.stringify` to write it out again
   * (`too_deep`; an answer to a request of the server's is replaced by an error to the server), or (HTTP
   * relay) a message sent after an `initialize` that did not succeed (`initialize_failed`: answered with an
   * error, cancelled by the client before its answer, or unanswered as the relay closed), which waited for
   * its answer, or (HTTP relay) the client's `notifications/cancelled` of an `initialize` not answered yet,
   * alone or in a batch (`cancels_initialize`: MCP forbids it, and it would reach the server without a
   * session id; the messages after that `initialize`, and the rest of the batch, are `initialize_failed`). A
   * request among them is answered with a JSON-RPC error.
   */
  | {
    event: "client_message_refused";
    kind:
      | "not_json"
      | "call_without_id"
      | "id_in_use"
      | "invalid_id"
      | "case_variant"
      | "in_flight_limit"
      | "held_limit"
      | "too_deep"
      | "initialize_failed"
      | "cancels_initialize";
    id?: JsonRpcId;
    text?: string;
  }
  | { event: "exit"; reason: McpRelayExit["reason"]; exitCode: number | null; signal: string | null };

/** A text block in an MCP tool result. */
export interface McpTextContent {
  /** Always `"text"`. */
  type: "text";
  /** The text. */
  text: string;
}

/** The tool result the guard answers a rejected call with. */
export interface McpRejection {
  /** One text block: the feedback a model can retry from. */
  content: McpTextContent[];
  /** Always true: the call did not run. */
  isError: true;
  /** Machine-readable details under `toolguard/findings`. */
  _meta: { "toolguard/findings": Finding[] };
}

/** The judgement of one `tools/call`. */
export type McpCallCheck =
  | { allowed: true; name: string; verdict: CallVerdict; unchecked?: string; warnings?: Finding[] }
  | { allowed: false; name: string; verdict: CallVerdict; feedback: string; result: McpRejection };

/** The judgement of one tool result. */
export interface McpResultCheck {
  /** True when the scanner found injected instructions. */
  flagged: boolean;
  /** Every finding, with its place in the result. */
  findings: McpOutputFinding[];
  /**
   * The result to hand on: the original object when not flagged, else a copy with a warning (and redactions).
   */
  result: unknown;
}

/** What {@linkcode McpGuard.setTools} found. */
export interface McpToolsSummary {
  /** Number of tools recorded. */
  count: number;
  /** Tools whose schema cannot be enforced, with the validator's reason. */
  unchecked: { name: string; error: string }[];
  /**
   * What is accepted more leniently than the schema's letter (unknown formats are annotations; a required
   * property that declares a default may be left out, the validator's `defaultsSatisfyRequired`): the
   * schema read to the letter would have rejected legitimate calls.
   */
  relaxed: { name: string; pointer: string; note: string }[];
}

/** One message travelling through a session: the original line bytes when it came from a stream. */
export interface McpFrame {
  /** The line's original bytes (without the newline), when it arrived on a byte stream. */
  bytes?: Uint8Array;
  /** The parsed message; undefined when the line is not JSON. */
  message: JsonRpcMessage | JsonRpcMessage[] | undefined;
  /**
   * Transport extras travelling with the message: from the server, what the transport passed to `onmessage`
   * (e.g. auth info); from the client, the options it passed to `send` (e.g. a resumption token).
   */
  extra?: unknown;
}

/** Where a session sends what it decides to pass on. */
export interface McpSinks {
  /** Deliver a frame to the server. */
  toServer(frame: McpFrame): void | Promise<void>;
  /** Deliver a frame to the client. */
  toClient(frame: McpFrame): void | Promise<void>;
  /**
   * Told when a delivery that nobody awaits fails: any to the client, and those to the server the guard makes
   * itself (held messages, its own requests). Errors it throws are swallowed.
   */
  onError?(error: unknown): void;
}

/** A live connection between one client and one server, judged by a guard. */
export interface McpSession {
  /** A message from the client. Returns the server sink's promise when the message went straight on. */
  fromClient(frame: McpFrame): void | Promise<void>;
  /** A message from the server. */
  fromServer(frame: McpFrame): void;
  /** The server is gone: every request still waiting gets a JSON-RPC error, and later requests too. */
  serverClosed(reason: string): void;
  /**
   * Answer a forwarded request the server will not answer (its answer was too large to relay, or its HTTP
   * answer ended without it) with a JSON-RPC error; for one of the guard's own `tools/list` requests, the
   * fetch fails instead. Returns false when no request with that id is waiting.
   */
  answerWithError(id: JsonRpcId, code: number, message: string): boolean;
  /** True while the request with this id (forwarded by the session) waits for the server's answer. */
  isWaiting(id: JsonRpcId): boolean;
  /**
   * True when the client cancelled the request with this id and the server's answer to it has not come: it
   * waits no more, but nothing says the server has it yet.
   */
  wasCancelled(id: JsonRpcId): boolean;
  /** Number of client requests forwarded and not yet answered. */
  readonly pending: number;
  /**
   * Resolves once no client message is held back waiting for the server's tool list (at once when none is):
   * each has then been forwarded or answered. A relay whose client has gone waits for this before it closes
   * the server's input, so requests already read are not lost.
   */
  released(): Promise<void>;
}

/** The MCP guard: judges calls and results, and runs sessions. */
export interface McpGuard {
  /**
   * Record the server's tools (MCP `{ name, inputSchema }` objects) and compile their schemas. Throws a
   * `TypeError`, keeping the tools it had, for a tool built in code that contains itself or shares its
   * objects so often that written out it would be huge (a listing read from JSON never does).
   */
  setTools(tools: readonly unknown[]): McpToolsSummary;
  /** True once tools have been recorded and no `list_changed` notification has made them stale. */
  readonly toolsKnown: boolean;
  /** Judge `tools/call` params. Throws when no tools were recorded yet (call `setTools` first). */
  checkCall(params: unknown): McpCallCheck;
  /**
   * Scan a `tools/call` result (when `scanOutput` or `redact`); unflagged results come back as given. Throws
   * a `RangeError` for one built in code that JSON text cannot hold and the scan will not walk (an array of
   * more than 100 000 slots with holes, a value that holds itself or shares its objects so that written out
   * it would hold more than 100 000), and what reading it throws (a getter, a revoked proxy).
   */
  checkResult(result: unknown): McpResultCheck;
  /** Start a session that relays between a client and a server through `sinks`. */
  connect(sinks: McpSinks): McpSession;
}

/** How a relay ended. */
export interface McpRelayExit {
  /** Why: the client closed its side, the server exited on its own, the server could not start, or abort. */
  reason: "client_closed" | "server_exited" | "spawn_failed" | "aborted";
  /** The server's exit code, when it exited normally. */
  exitCode: number | null;
  /** The signal that ended the server, when one did. */
  signal: string | null;
  /**
   * A short explanation; for the stdio relay, with how far its ending of the server's process tree reached,
   * in words (see `tree`), where its sweep found a process to end or could not reach the whole tree, and
   * where it found none of a tree its markers reach (`"ended"` on Linux), that none was found running.
   */
  detail: string;
  /**
   * How far the stdio relay's ending of the server's process tree reached (it ends the tree on every exit,
   * so that no descendant of the server outlives the relay): `"ended"`, every process of it that was found;
   * `"group_only"`, as far as a way that misses part of a tree reached: its process group alone (Linux where
   * `/proc` cannot be read: a descendant that left the group may have survived), its parent links and group
   * (Linux, for a process whose environment could not be read, or that could not be signalled) or, on
   * Windows, `taskkill /T`
   * (a process whose parent had already exited is not found); `"server_only"`, the server but not its
   * descendants, and `"none"`, no process (Deno with a partial `--allow-run`, or on Windows without
   * `taskkill`). Absent when there was no server process to end: it could not be started, or the HTTP relay,
   * which starts none.
   */
  tree?: "ended" | "group_only" | "server_only" | "none";
}
