/**
 * Recorded provider traffic for the gate tests: reads `../shared/data/provider-traffic/` (its README and
 * `catalog.json` describe it), rebuilds each recording's wire bytes, and derives the tool declarations a
 * replay needs. Nothing is copied into the repository; where the folder is absent, {@linkcode loadTraffic}
 * says so and the tests skip.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { assembleToolCalls } from "../gate.ts";

/** Where the recordings live, relative to the repository. */
export const TRAFFIC_DIR: URL = new URL("../../shared/data/provider-traffic/", import.meta.url);

/** One catalog entry (a stream or a body). */
export interface TrafficEntry {
  id: string;
  provider: string;
  dialect: "chat" | "responses" | "anthropic" | "gemini" | "cohere";
  file: string;
  format: "lines" | "raw-sse" | "snap" | "json" | "nock";
  shape?: string;
  segment?: number;
  toolsFrom?: "recorded";
  handMade?: string;
  extraProps?: Record<string, Record<string, unknown>>;
}

/** The catalog, or the reason it could not be read. */
export type Traffic =
  | { ok: true; streams: TrafficEntry[]; bodies: TrafficEntry[] }
  | { ok: false; missing: string };

/** Reads the catalog; `ok: false` names what is missing (the tests then skip). */
export function loadTraffic(): Traffic {
  const path = fileURLToPath(new URL("catalog.json", TRAFFIC_DIR));
  try {
    const c = JSON.parse(readFileSync(path, "utf8"));
    return { ok: true, streams: c.streams, bodies: c.bodies };
  } catch {
    return { ok: false, missing: `recorded provider traffic not found at ${path}` };
  }
}

function read(file: string): string {
  return readFileSync(fileURLToPath(new URL(file, TRAFFIC_DIR)), "utf8");
}

/** The test names of the openai-node snapshots, by catalog id. */
const SNAPSHOTS: Record<string, string> = {
  "openai-node-json-text": ".stream() works 1",
  "openai-node-json-text-nl": ".stream() is robust against leading newline chunks 1",
  "openai-node-json-logprobs": ".stream() emits content logprobs events 1",
  "openai-node-refusal-logprobs": ".stream() emits refusal logprobs events 1",
};

/** The raw response text a Jest snapshot holds. */
function snapshot(text: string, name: string): string {
  const head = `exports[\`${name}\`] = \``;
  const start = text.indexOf(head);
  if (start < 0) throw new Error(`snapshot ${name} not found`);
  let i = start + head.length;
  let out = "";
  for (; i < text.length && text[i] !== "`"; i++) {
    if (text[i] === "\\") i++;
    out += text[i];
  }
  // Jest prints a string inside double quotes.
  return out.replace(/^\n?"/, "").replace(/"\n?$/, "");
}

/** The JSON lines of one response in a `lines` file (segment n, 1-based, split at a new response). */
function segmentLines(entry: TrafficEntry): string[] {
  const lines = read(entry.file).split("\n").filter((l) => l.trim() !== "");
  if (entry.segment === undefined) return lines;
  const segments: string[][] = [];
  for (const line of lines) {
    const type = typeOf(line);
    if (type === "message_start" || type === "response.created" || segments.length === 0) segments.push([]);
    segments[segments.length - 1].push(line);
  }
  return segments[entry.segment - 1] ?? [];
}

function typeOf(line: string): string | undefined {
  try {
    const v = JSON.parse(line);
    return typeof v?.type === "string" ? v.type : undefined;
  } catch {
    return undefined;
  }
}

/** A recorded stream as the server sends it: its frames (exact text) and content type. */
export interface Wire {
  frames: string[];
  contentType: string;
}

/** The wire frames of a recorded stream. */
export function streamWire(entry: TrafficEntry): Wire {
  const sse = "text/event-stream";
  if (entry.format === "raw-sse") return { frames: splitFrames(read(entry.file)), contentType: sse };
  if (entry.format === "snap") {
    return { frames: splitFrames(snapshot(read(entry.file), SNAPSHOTS[entry.id])), contentType: sse };
  }
  const named = entry.dialect === "responses" || entry.dialect === "anthropic";
  const frames = segmentLines(entry).map((line) => {
    const type = named ? typeOf(line) : undefined;
    return (type ? `event: ${type}\n` : "") + `data: ${line}\n\n`;
  });
  if (entry.dialect === "chat") frames.push("data: [DONE]\n\n");
  return { frames, contentType: sse };
}

/** Splits SSE text into frames, each with its blank line. */
function splitFrames(text: string): string[] {
  const out: string[] = [];
  const re = /\r?\n\r?\n/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push(text.slice(at, m.index + m[0].length));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** A recorded body and, for nock recordings, the request it answered. */
export function bodyOf(
  entry: TrafficEntry,
): { body: Record<string, unknown>; request?: Record<string, unknown> } {
  if (entry.format === "nock") {
    const n = Number(entry.id.match(/toolrunner-(\d+)/)?.[1]);
    const rec = JSON.parse(read(entry.file))[n];
    return { body: rec.response, request: rec.body };
  }
  return { body: JSON.parse(read(entry.file)) };
}

/** The parsed events of a stream (frames that do not parse are skipped). */
export function wireEvents(wire: Wire): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const f of wire.frames) {
    const data = f.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart())
      .join("\n");
    try {
      const v = JSON.parse(data);
      if (v && typeof v === "object") out.push(v);
    } catch {
      // [DONE], comments, malformed lines
    }
  }
  return out;
}

/** The tools a recording's own request declared (Responses snapshots, nock requests), if it carries them. */
export function recordedTools(
  entry: TrafficEntry,
  events: Record<string, unknown>[],
  body?: Record<string, unknown>,
  request?: Record<string, unknown>,
): unknown[] | undefined {
  if (entry.toolsFrom !== "recorded") return undefined;
  if (request && Array.isArray(request.tools)) return request.tools;
  if (body && Array.isArray(body.tools)) return body.tools;
  for (const e of events) {
    const r = e.response as Record<string, unknown> | undefined;
    if (r && Array.isArray(r.tools)) return r.tools;
  }
  return undefined;
}

/** The client calls (name and argument text) in a recording, by the gate's own assembler. */
export function recordedCalls(events: Record<string, unknown>[]): { name: string; arguments: string }[] {
  return assembleToolCalls(events).calls.map((c) => ({ name: c.name, arguments: c.arguments }));
}

/** The dialect name the catalog uses, as the gate's. */
export const GATE_DIALECT = {
  chat: "openai_chat",
  responses: "openai_responses",
  anthropic: "anthropic",
  gemini: "gemini",
  cohere: "cohere",
} as const;

/**
 * Tool declarations in `dialect`'s shape under which every call in `calls` is valid: each called name with
 * an open object schema (plus the catalog's `extraProps`). With `rename`, the names get a suffix, so every
 * call is to an undeclared tool.
 */
export function synthTools(
  entry: TrafficEntry,
  calls: { name: string }[],
  options: { rename?: boolean } = {},
): unknown[] {
  const names = [...new Set(calls.map((c) => c.name))];
  return names.map((name) => {
    const schema = { type: "object", properties: { ...(entry.extraProps?.[name] ?? {}) } };
    const n = options.rename ? `${name}_declared` : name;
    switch (entry.dialect) {
      case "anthropic":
        return { name: n, input_schema: schema };
      case "responses":
        return { type: "function", name: n, parameters: schema };
      case "gemini":
        return { functionDeclarations: [{ name: n, parameters: schema }] };
      case "cohere":
        return { type: "function", function: { name: n, parameters: schema } };
      default:
        return { type: "function", function: { name: n, parameters: schema } };
    }
  });
}
