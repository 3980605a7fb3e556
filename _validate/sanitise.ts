/**
 * `sanitise()`: the scanner applied to a whole chat request and the model's tool calls. What can be located
 * is redacted (spans of message text, spans of argument text); what cannot, and every schema violation, stays
 * rejected.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import "../_common/values.ts";
import "../_common/bytes.ts";
import "../_common/measure.ts";
import "../_scan/words.ts";
import "../_scan/fold.ts";
import "../_scan/segments.ts";
import "../_scan/gap.ts";
import "../_scan/translated.ts";
import "../_scan/rules.ts";
import "../_scan/leads.ts";
import "../_scan/decode.ts";
import "../_scan/screen.ts";
import "../_scan/terminal.ts";
import "../_schema/formats.ts";
import "../_schema/keywords.ts";
import "../_schema/report.ts";
import "../_schema/pattern.ts";
import "../_schema/linear_regexp.ts";
import "../_schema/values.ts";
import "../_schema/checkers.ts";
import "../_schema/codegen_js.ts";
import "../_schema/codegen_ok.ts";
import "../_schema/codegen_report.ts";
import "../_schema/fallbacks.ts";
import "../_schema/codegen.ts";
import "../_schema/object_checker.ts";
import "../_schema/refs.ts";
import "../_schema/compile.ts";
import "./providers.ts";
import "./repair.ts";
import "./defaults.ts";
import "../_schema/strings.ts";

import { unescapePointer } from "../_common/pointer.ts";
import { checkCategories, scan } from "../_scan/scan.ts";
import { duplicateKeyFinding, nestedTooDeep, validateToolCalls } from "./validator.ts";
import { repeatedKeys } from "../_common/json.ts";
import type {
  CallVerdict,
  Classifier,
  Finding,
  ModelCheck,
  ScanContext,
  ScanFinding,
  ScanOptions,
} from "../types.ts";

/** Options for {@link sanitise}. */
export interface SanitiseOptions {
  /** `"sanitise"`: redact located injections and let the rest through; `"block"`: any injection blocks. */
  onMatch: "sanitise" | "block";
  /** Declared tools in any provider shape; absent means the allowlist is off (the other checks still run). */
  tools?: readonly unknown[];
  /** The model's tool calls to judge, in any provider shape. */
  toolCalls?: readonly unknown[];
  /** Replaces each redacted span; `{category}` is filled in. Must not contain `"` or `\`. */
  placeholder?: string;
  /** Only look for these categories (see `ScanOptions.categories`). */
  categories?: ScanOptions["categories"];
  /** Optional second pass over tool calls the signatures cleared (see `validateToolCalls`). */
  classifier?: Classifier;
}

/** A scanner finding in the request, with the JSON Pointer of the string it was found in. */
export interface MessageFinding extends ScanFinding {
  /** JSON Pointer into the request, e.g. `/messages/2/content` or `/messages/1/content/0/text`. */
  path: string;
}

/** What happens to one tool call. */
export type CallDecision =
  | {
    /** No findings: run it as is. */
    decision: "allow";
    /** Position in `toolCalls`. */
    index: number;
    /** Call id (provider's or synthetic). */
    id?: string;
    /** Tool name. */
    name: string;
    /** Empty for allowed calls. */
    findings: Finding[];
  }
  | {
    /** Injection spans were replaced; run it with `redactedArguments`. */
    decision: "sanitised";
    /** Position in `toolCalls`. */
    index: number;
    /** Call id (provider's or synthetic). */
    id?: string;
    /** Tool name. */
    name: string;
    /** The injection findings that were redacted. */
    findings: Finding[];
    /** The arguments as JSON text with every located span replaced; it parses and passes the schema. */
    redactedArguments: string;
  }
  | {
    /** Do not run it: a schema violation, an unknown tool, an injection that cannot be located, or `block`. */
    decision: "reject";
    /** Position in `toolCalls`. */
    index: number;
    /** Call id (provider's or synthetic). */
    id?: string;
    /** Tool name. */
    name: string;
    /** Every finding: what the model must fix. */
    findings: Finding[];
    /** The classifier's answer, when one ran. */
    modelCheck?: ModelCheck;
  };

/** What {@link sanitise} returns: plain data. */
export interface SanitiseResult {
  /** True when `onMatch` is `"block"` and anything was found, or when any call is rejected. */
  blocked: boolean;
  /** A copy of the request with located injections redacted (`"sanitise"`), or an unchanged copy (`"block"`). */
  request: unknown;
  /** Every injection found in message text. */
  findings: MessageFinding[];
  /** One decision per tool call, in order. */
  calls: CallDecision[];
}

const DEFAULT_PLACEHOLDER = "[removed by toolguard: {category}]";

/** Roles whose text is not scanned: the developer's own instructions and the model's own words. */
const TRUSTED_ROLES = new Set(["system", "developer", "assistant", "model"]);

function contextFor(role: unknown, partType?: unknown): ScanContext | null {
  if (partType === "tool_result" || partType === "function_call_output" || partType === "functionResponse") {
    return "tool_output";
  }
  if (role === "tool" || role === "function" || role === "ipython") return "tool_output";
  if (role === "user" || role === "human") return "user_text";
  if (typeof role === "string" && TRUSTED_ROLES.has(role)) return null;
  return "user_text";
}

/** Replaces spans (sorted, possibly overlapping) of `text` with the placeholder. */
function redact(
  text: string,
  spans: { start: number; end: number; category: string }[],
  placeholder: string,
): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const s of sorted) {
    if (s.end <= at) continue;
    const start = Math.max(at, s.start);
    out += text.slice(at, start) + placeholder.replace("{category}", s.category);
    at = s.end;
  }
  return out + text.slice(at);
}

interface Walk {
  placeholder: string;
  redactText: boolean;
  scanOptions: ScanOptions;
  findings: MessageFinding[];
}

/** Scans one string at `path`; returns the (possibly redacted) string. */
function scanString(text: string, path: string, context: ScanContext, w: Walk): string {
  const result = scan(text, { ...w.scanOptions, context });
  if (result.findings.length === 0) return text;
  for (const f of result.findings) w.findings.push({ ...f, path });
  return w.redactText ? redact(text, result.findings, w.placeholder) : text;
}

/** Walks message content in the OpenAI, Anthropic, Ollama and Responses shapes. */
function content(value: unknown, path: string, context: ScanContext, w: Walk): unknown {
  if (typeof value === "string") return scanString(value, path, context, w);
  if (!Array.isArray(value)) return value;
  return value.map((part, i) => {
    const p = `${path}/${i}`;
    if (typeof part === "string") return scanString(part, p, context, w);
    if (typeof part !== "object" || part === null) return part;
    const o = { ...(part as Record<string, unknown>) };
    const partContext = contextFor(undefined, o.type) ?? context;
    if (typeof o.text === "string") o.text = scanString(o.text, `${p}/text`, partContext, w);
    if (o.type === "tool_result" && o.content !== undefined) {
      o.content = content(o.content, `${p}/content`, "tool_output", w);
    }
    if (o.type === "function_call_output" && typeof o.output === "string") {
      o.output = scanString(o.output, `${p}/output`, "tool_output", w);
    }
    return o;
  });
}

function message(m: unknown, path: string, w: Walk): unknown {
  if (typeof m !== "object" || m === null) return m;
  const o = { ...(m as Record<string, unknown>) };
  if (o.type === "function_call_output" && typeof o.output === "string") {
    o.output = scanString(o.output, `${path}/output`, "tool_output", w);
    return o;
  }
  const context = contextFor(o.role);
  if (context === null) return o;
  if (o.content !== undefined) o.content = content(o.content, `${path}/content`, context, w);
  return o;
}

/** Deep-enough copy of the request: messages and their parts are copied, nothing else is touched. */
function walkRequest(request: unknown, w: Walk): unknown {
  if (typeof request !== "object" || request === null || Array.isArray(request)) return request;
  const r = { ...(request as Record<string, unknown>) };
  if (Array.isArray(r.messages)) r.messages = r.messages.map((m, i) => message(m, `/messages/${i}`, w));
  if (typeof r.input === "string") r.input = scanString(r.input, "/input", "user_text", w);
  else if (Array.isArray(r.input)) r.input = r.input.map((m, i) => message(m, `/input/${i}`, w));
  return r;
}

/** Walks to a JSON Pointer inside plain data; undefined when it is not there. */
function at(
  value: unknown,
  pointer: string,
): { parent: Record<string, unknown> | unknown[]; key: string } | undefined {
  if (pointer === "") return undefined;
  const keys = pointer.slice(1).split("/").map(unescapePointer);
  let cur: unknown = value;
  for (let i = 0; i < keys.length - 1; i++) {
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, keys[i])) return undefined;
    cur = (cur as Record<string, unknown>)[keys[i]];
  }
  if (typeof cur !== "object" || cur === null) return undefined;
  return { parent: cur as Record<string, unknown>, key: keys[keys.length - 1] };
}

/**
 * Redacts one call's located injection findings. Raw argument text: the spans the validator reported (they
 * are offsets into the raw JSON that keep it valid). Object arguments: the string at each finding's path is
 * scanned again and its spans replaced. Returns undefined when some finding cannot be located.
 */
function redactCall(
  raw: string | undefined,
  args: Record<string, unknown> | undefined,
  findings: Finding[],
  placeholder: string,
  scanOptions: ScanOptions,
): string | undefined {
  if (raw !== undefined && findings.every((f) => f.start !== undefined && f.end !== undefined)) {
    return redact(
      raw,
      findings.map((f) => ({ start: f.start!, end: f.end!, category: f.category ?? "injection" })),
      placeholder,
    );
  }
  if (args === undefined) return undefined;
  const copy = JSON.parse(JSON.stringify(args)) as Record<string, unknown>;
  for (const f of findings) {
    const slot = at(copy, f.path);
    if (!slot) return undefined;
    const value = (slot.parent as Record<string, unknown>)[slot.key];
    if (typeof value !== "string") return undefined;
    const spans = scan(value, { ...scanOptions, context: "tool_args" }).findings;
    if (spans.length === 0) return undefined;
    (slot.parent as Record<string, unknown>)[slot.key] = redact(value, spans, placeholder);
  }
  return JSON.stringify(copy);
}

/**
 * The call as judged with only `categories` of injection looked for (all when undefined), as messages are:
 * the validator's scanner looks for every category, so the others' findings are dropped here. A finding
 * with no category (the classifier's) stays.
 */
function withinCategories(call: CallVerdict, categories: readonly string[] | undefined): CallVerdict {
  if (categories === undefined) return call;
  const findings = call.findings.filter((f) =>
    f.code !== "argument_injection" || f.category === undefined || categories.includes(f.category)
  );
  if (findings.length === call.findings.length) return call;
  return { ...call, findings, allowed: findings.length === 0 };
}

/** The engine behind `sanitise` in `scan.ts` (loaded on first use); see its documentation there. */
export async function sanitise(request: unknown, options: SanitiseOptions): Promise<SanitiseResult> {
  if (options?.onMatch !== "sanitise" && options?.onMatch !== "block") {
    throw new TypeError(
      `sanitise(): options.onMatch must be "sanitise" or "block", got ${String(options?.onMatch)}`,
    );
  }
  const placeholder = options.placeholder ?? DEFAULT_PLACEHOLDER;
  if (/["\\]/.test(placeholder) || [...placeholder].some((c) => c.charCodeAt(0) < 0x20)) {
    throw new TypeError(
      "sanitise(): the placeholder must not contain quotes, backslashes or control characters",
    );
  }
  if (options.categories !== undefined) checkCategories(options.categories, "sanitise");
  const scanOptions: ScanOptions = options.categories ? { categories: options.categories } : {};
  const sanitising = options.onMatch === "sanitise";
  const walk: Walk = { placeholder, redactText: sanitising, scanOptions, findings: [] };
  const out = walkRequest(request, walk);

  const calls: CallDecision[] = [];
  if (options.toolCalls && options.toolCalls.length > 0) {
    const verdict = await validateToolCalls(options.toolCalls, {
      tools: options.tools,
      classifier: options.classifier,
    });
    for (const call of verdict.calls) {
      const c = withinCategories(call, options.categories);
      const base = { index: c.index, id: c.id, name: c.name };
      const repeats = c.rawArguments === undefined ? undefined : repeatedKeys(c.rawArguments);
      if (repeats?.read === true && repeats.duplicate !== undefined) {
        // the first value was never checked, yet the text the app forwards still holds it
        const findings = [...c.findings, duplicateKeyFinding(repeats.duplicate)];
        calls.push({ ...base, decision: "reject", findings });
        continue;
      }
      if (repeats?.read === false && c.allowed) {
        // JSON text the reader cannot read for repeats nests thousands of levels deep, past the validator's
        // depth limit (64 by default, sanitise's), though the value JSON.parse kept (the last of a repeated
        // property's) may not: nothing is known of the value the app would forward
        calls.push({ ...base, decision: "reject", findings: [nestedTooDeep(64)] });
        continue;
      }
      if (c.allowed) {
        calls.push({ ...base, decision: "allow", findings: [] });
        continue;
      }
      const other = c.findings.filter((f) => f.code !== "argument_injection");
      const injections = c.findings.filter((f) => f.code === "argument_injection");
      let redacted: string | undefined;
      if (sanitising && other.length === 0 && !c.modelCheck?.injection) {
        redacted = redactCall(c.rawArguments, c.arguments, injections, placeholder, scanOptions);
        if (redacted !== undefined) {
          // The redacted call must still be a valid call: same validator, scan and all.
          const again = [{ name: c.name, arguments: redacted }];
          // (the tools' validator, compiled once per tools array)
          const [judged] = (await validateToolCalls(again, { tools: options.tools })).calls;
          if (!withinCategories(judged, options.categories).allowed) redacted = undefined;
        }
      }
      if (redacted !== undefined) {
        calls.push({ ...base, decision: "sanitised", findings: injections, redactedArguments: redacted });
      } else {
        const reject: CallDecision = { ...base, decision: "reject", findings: c.findings };
        if (c.modelCheck) reject.modelCheck = c.modelCheck;
        calls.push(reject);
      }
    }
  }
  const blocked = calls.some((c) => c.decision === "reject") || (!sanitising && walk.findings.length > 0);
  return { blocked, request: out, findings: walk.findings, calls };
}
