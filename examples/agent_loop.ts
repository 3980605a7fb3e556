/**
 * A complete agent loop for a local model through Ollama's `/api/chat`, with toolguard at every seam:
 *
 * 1. the tool declarations are compiled once (`createValidator`), so a bad schema fails before any call;
 * 2. every model response goes through `gateCompletion`, which judges native `tool_calls` and calls the
 *    model wrote into its text (`<tool_call>…`), and rejects unknown tools, bad arguments and injected
 *    instructions before anything runs;
 * 3. a rejected call goes back to the model as a tool message that names every problem (`describeVerdict`
 *    through `toolResultMessage`), so a small model can retry;
 * 4. an accepted call runs through `runTool` (no shell, model values marked with `fromModel`, a timeout, the
 *    whole process tree ended on timeout), and the model reads one honest sentence about the outcome
 *    (`describe` through `toolResultMessage`): a failure is never presented as "no results".
 *
 * Run against a local Ollama (`ollama pull qwen3:4b` first):
 *
 * ```sh
 * deno run -A examples/agent_loop.ts --host http://127.0.0.1:11434 --model qwen3:4b --notes ./notes \
 *   "When is the next deploy?"
 * ```
 *
 * `runAgent` is exported so tests drive the same loop against a fake server.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { gateCompletion } from "../gate.ts";
import { createValidator } from "../validate.ts";
import { fromModel, runTool } from "../guard.ts";
import { toolResultMessage } from "../describe.ts";
import type { ToolResult, Verdict } from "../types.ts";

/** A chat message in Ollama's `/api/chat` shape. */
export interface ChatMessage {
  /** Who speaks. */
  role: "system" | "user" | "assistant" | "tool";
  /** The text. */
  content: string;
  /** Calls the assistant asked for. */
  tool_calls?: { function: { name: string; arguments: Record<string, unknown> } }[];
  /** For tool messages: which tool answered. */
  tool_name?: string;
}

/** Options for {@linkcode runAgent}. */
export interface AgentOptions {
  /** Ollama's base URL, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** The model name, e.g. `qwen3:4b`. */
  model: string;
  /** The user's question. */
  prompt: string;
  /** The directory the `search_notes` tool searches. */
  notesDir: string;
  /** Most model turns before giving up. Default 6. */
  maxTurns?: number;
  /** Milliseconds a tool may run. Default 10 000. */
  toolTimeoutMs?: number;
  /** The `fetch` to use. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
}

/** What {@linkcode runAgent} returns. */
export interface AgentRun {
  /** The model's final text, or `null` when it ran out of turns. */
  answer: string | null;
  /** The whole conversation. */
  messages: ChatMessage[];
  /** One verdict per model turn that asked for tools. */
  verdicts: Verdict[];
  /** Every tool result, in order. */
  results: ToolResult[];
}

/** The tools the model is offered, in Ollama's (OpenAI-style) shape. */
export const TOOLS = [{
  type: "function",
  function: {
    name: "search_notes",
    description: "Search the team's notes for a phrase. Returns matching lines with file and line number.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 200, description: "phrase to look for" },
      },
      required: ["query"],
      additionalProperties: false,
    },
  },
}] as const;

const NOTES_TOOL = fileURLToPath(new URL("./notes_tool.ts", import.meta.url));

/** The command line that runs the notes tool with the current runtime (Deno or Bun). */
function notesCommand(
  dir: string,
  query: string,
): { command: string; args: (string | ReturnType<typeof fromModel>)[] } {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  // The query is the model's: marked with fromModel, and placed after `--` so it can never be an option.
  const tail = [dir, "--", fromModel(query)];
  return deno
    ? { command: deno.execPath(), args: ["run", "--allow-read", NOTES_TOOL, ...tail] }
    : { command: process.execPath, args: [NOTES_TOOL, ...tail] };
}

/** Runs one conversation to its answer. Never throws for anything the model or the tool does. */
export async function runAgent(options: AgentOptions): Promise<AgentRun> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const log = options.log ?? (() => {});
  const validator = createValidator(TOOLS); // compile once; throws now if a schema cannot be enforced
  const messages: ChatMessage[] = [
    {
      role: "system",
      content: "You answer questions about the team's notes. Use search_notes to look things up. " +
        "If a tool reports a failure, say so; never invent results.",
    },
    { role: "user", content: options.prompt },
  ];
  const verdicts: Verdict[] = [];
  const results: ToolResult[] = [];

  for (let turn = 0; turn < (options.maxTurns ?? 6); turn++) {
    const request = { model: options.model, messages, tools: TOOLS, stream: false };
    const res = await doFetch(`${options.host.replace(/\/+$/, "")}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
    });
    if (!res.ok) throw new Error(`Ollama answered HTTP ${res.status}: ${await res.text()}`);
    const body = await res.json();

    // Judge the calls before anything runs: native tool_calls, or calls written into the text.
    const gated = await gateCompletion(request, body, { validator });
    const message = (body.message ?? {}) as ChatMessage;
    if (gated.source === "none") {
      log(`answer: ${message.content}`);
      messages.push({ role: "assistant", content: message.content ?? "" });
      return { answer: message.content ?? "", messages, verdicts, results };
    }
    verdicts.push(gated.verdict);

    // The calls as the model meant them, wherever it wrote them.
    const calls = gated.source === "native"
      ? (message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments }))
      : (gated.extracted ?? []).map((c) => ({ name: c.name, arguments: c.arguments }));
    messages.push({
      role: "assistant",
      content: message.content ?? "",
      ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
    });

    if (!gated.verdict.allowed) {
      // Nothing runs. Each call gets a tool message saying what to fix (accepted ones: that they were held).
      log(`rejected calls: ${gated.verdict.rejectedIndices.length}`);
      for (const verdict of gated.verdict.calls) {
        const content = verdict.allowed
          ? `The call to ${verdict.name} was valid but was not run because another call in the same turn was rejected. Send it again with the fixed calls.`
          : toolResultMessage("ollama", { verdict, tools: TOOLS }).content;
        messages.push({ role: "tool", tool_name: verdict.name || "unknown", content });
      }
      continue;
    }

    for (const [i, call] of calls.entries()) {
      const args = gated.verdict.calls[i].arguments ?? {};
      const { command, args: argv } = notesCommand(options.notesDir, String(args.query));
      const result = await runTool(command, argv, {
        timeoutMs: options.toolTimeoutMs ?? 10_000,
        scanOutput: true,
      });
      results.push(result);
      log(`${call.name}(${JSON.stringify(args)}) -> ${result.kind}`);
      messages.push(toolResultMessage("ollama", { result, toolName: call.name }));
    }
  }
  return { answer: null, messages, verdicts, results };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: (globalThis as { Deno?: { args: string[] } }).Deno?.args ?? process.argv.slice(2),
    options: {
      host: { type: "string", default: "http://127.0.0.1:11434" },
      model: { type: "string", default: "qwen3:4b" },
      notes: { type: "string", default: "." },
    },
    allowPositionals: true,
  });
  const run = await runAgent({
    host: values.host,
    model: values.model,
    notesDir: values.notes,
    prompt: positionals.join(" ") || "What do the notes say about deploys?",
    log: (line) => console.error(line),
  });
  console.log(run.answer ?? "(no answer within the turn limit)");
}
