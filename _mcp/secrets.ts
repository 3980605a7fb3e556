/**
 * Secrets in tool arguments: a call that carries a private key or a cloud or API token is refused
 * (`argument_secret`), because a poisoned description or an injected instruction is how a model is made
 * to pass one on. Only patterns with a fixed, documented prefix or frame are used, so ordinary text, hashes
 * and identifiers do not match.
 *
 * @module
 */
import { escapePointer } from "../_common/pointer.ts";
import { isRecord } from "../_common/values.ts";
import type { Finding } from "../types.ts";

/** One credential pattern. */
interface SecretPattern {
  /** What it is, as the finding says. */
  kind: string;
  /** The pattern (no `g` flag: one match per string is enough to refuse). */
  re: RegExp;
}

/** Credential formats with a fixed prefix or frame (their issuers document them, scanners use them). */
const PATTERNS: readonly SecretPattern[] = [
  {
    kind: "private key",
    re: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/,
  },
  { kind: "AWS access key id", re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/ },
  { kind: "GitHub token", re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b/ },
  { kind: "GitLab token", re: /\bglpat-[0-9A-Za-z_-]{20,}\b/ },
  { kind: "Slack token", re: /\bxox[abposr]-[0-9A-Za-z]{6,}-[0-9A-Za-z-]{6,}\b/ },
  {
    kind: "OpenAI API key",
    re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}\b/,
  },
  { kind: "Anthropic API key", re: /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,}\b/ },
  { kind: "Google API key", re: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { kind: "Stripe secret key", re: /\b(?:sk|rk)_live_[0-9A-Za-z]{24,}\b/ },
  { kind: "npm token", re: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { kind: "Hugging Face token", re: /\bhf_[A-Za-z]{34,}\b/ },
];

/** Every non-empty string in `value` with its JSON Pointer (bounded depth). */
export function* stringsOf(value: unknown, pointer: string, depth: number): Generator<[string, string]> {
  if (depth > 64) return;
  if (typeof value === "string") {
    if (value !== "") yield [pointer, value];
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* stringsOf(value[i], `${pointer}/${i}`, depth + 1);
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      yield* stringsOf(v, `${pointer}/${escapePointer(k)}`, depth + 1);
    }
  }
}

/** The `argument_secret` findings for a call's arguments: one per string that carries a credential. */
export function secretFindings(args: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
  for (const [path, text] of stringsOf(args, "", 0)) {
    if (text.length < 20) continue;
    const hit = PATTERNS.find((p) => p.re.test(text));
    if (hit === undefined) continue;
    out.push({
      code: "argument_secret",
      path,
      message:
        `${path === "" ? "The arguments carry" : `"${path}" carries`} what looks like a ${hit.kind}. ` +
        "Never pass credentials to a tool; if the task really needs this, ask the user.",
      received: `[${hit.kind}]`,
    });
  }
  return out;
}
