/**
 * Scanning what a server sends besides tool results (with `scanOutput`): resource contents, prompts,
 * sampling and elicitation requests, log notifications. Every string the model may read is scanned; with
 * `redact` the located parts are cut out; a flagged result carries its findings under `_meta`.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { isRecord } from "../_common/values.ts";
import { scan } from "../_scan/scan.ts";
import type { ScanFinding } from "../types.ts";
import type { McpOutputFinding } from "./types.ts";

/** Told about one string leaf of a result: its text, its pointer and how to replace it in the copy. */
export type Visit = (text: string, pointer: string, apply: (text: string) => void) => void;

/** Where a server-to-client payload sits: in a response's `result`, or a request's or notification's `params`. */
export type PayloadPlace = "result" | "params";

/** The methods whose payloads are scanned, and where the payload sits. */
const SCANNED: Record<string, PayloadPlace> = {
  "resources/read": "result",
  "prompts/get": "result",
  "sampling/createMessage": "params",
  "elicitation/create": "params",
  "notifications/message": "params",
  "completion/complete": "result",
};

/** Where `method`'s payload sits when it is scanned; undefined when it is not one of them. */
export function scannedPlace(method: string): PayloadPlace | undefined {
  return Object.hasOwn(SCANNED, method) ? SCANNED[method] : undefined;
}

/** Keys whose strings are not text for a model: addresses, media types, base64 blobs, enum tags. */
const NOT_TEXT: ReadonlySet<string> = new Set(["uri", "mimeType", "blob", "type", "role", "_meta"]);

/** The result of {@linkcode scanPayload}. */
export interface PayloadCheck {
  /** True when something was found. */
  flagged: boolean;
  /** The findings, with pointers into the payload. */
  findings: McpOutputFinding[];
  /** The payload to pass on: the original when not flagged, else a copy (redacted with `redact`). */
  value: unknown;
}

/**
 * Scan every string of a payload a model may read (skipping URIs, media types, base64 data). A flagged
 * payload comes back as a copy carrying `_meta["toolguard/output_findings"]`, with the located parts cut
 * out under `redact`; an unflagged one comes back as given.
 */
export function scanPayload(value: unknown, { redact }: { redact: boolean }): PayloadCheck {
  if (!isRecord(value)) return { flagged: false, findings: [], value };
  const findings: McpOutputFinding[] = [];
  const edits: { apply: (t: string) => void; text: string; found: ScanFinding[] }[] = [];
  const visit: Visit = (text, pointer, apply) => {
    const found = scan(text, { context: "tool_output" }).findings;
    if (found.length === 0) return;
    for (const f of found) findings.push({ ...f, pointer });
    edits.push({ apply, text, found });
  };
  const copy = walkStrings(value, "", visit, 0, NOT_TEXT) as Record<string, unknown>;
  if (findings.length === 0) return { flagged: false, findings, value };
  if (redact) { for (const e of edits) e.apply(redactText(e.text, e.found)); }
  const meta = isRecord(copy._meta) ? { ...copy._meta } : {};
  meta["toolguard/output_findings"] = findings;
  return { flagged: true, findings, value: { ...copy, _meta: meta } };
}

/** Copy `value`, calling `visit` on every string leaf (bounded depth) so it can be replaced. */
export function walkStrings(
  value: unknown,
  pointer: string,
  visit: Visit,
  depth: number,
  skip?: ReadonlySet<string>,
): unknown {
  if (depth > 64) return value;
  if (Array.isArray(value)) {
    const out = value.slice();
    out.forEach((v, i) => {
      if (typeof v === "string") visit(v, `${pointer}/${i}`, (t) => (out[i] = t));
      else out[i] = walkStrings(v, `${pointer}/${i}`, visit, depth + 1, skip);
    });
    return out;
  }
  if (isRecord(value)) {
    const out: Record<string, unknown> = { ...value };
    for (const key of Object.keys(out)) {
      // Images and audio carry base64 `data`: nothing for the scanner.
      if (skip?.has(key) || (key === "data" && (out.type === "image" || out.type === "audio"))) continue;
      const p = `${pointer}/${escapePointer(key)}`;
      const v = out[key];
      if (typeof v === "string") visit(v, p, (t) => (out[key] = t));
      else out[key] = walkStrings(v, p, visit, depth + 1, skip);
    }
    return out;
  }
  return value;
}

/** Replace each located finding with `[redacted: category]`; overlapping spans are merged. */
export function redactText(text: string, findings: readonly ScanFinding[]): string {
  const spans = [...findings].sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (let i = 0; i < spans.length; i++) {
    const start = Math.max(spans[i].start, at);
    let end = spans[i].end;
    const category = spans[i].category;
    while (i + 1 < spans.length && spans[i + 1].start < end) end = Math.max(end, spans[++i].end);
    if (end <= start) continue;
    out += text.slice(at, start) + `[redacted: ${category}]`;
    at = end;
  }
  return out + text.slice(at);
}
