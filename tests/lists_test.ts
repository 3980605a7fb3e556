// Value and field lists derived from their types (outcome kinds, finding codes, groupings, scan contexts,
// providers, protocols, log-line fields): every member is listed once and passes through to where it is used.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createStats, FINDING_CODES, OUTCOME_KINDS } from "../stats.ts";
import { GROUP_BY } from "../_log/stats.ts";
import { jsonlLog } from "../log.ts";
import { scan } from "../scan.ts";
import { SCAN_CONTEXTS } from "../_scan/scan.ts";
import { toolResultMessage } from "../describe.ts";
import { PROVIDERS } from "../_describe/describe.ts";
import { captureOutput, printJson } from "../_cli/io.ts";
import { runInProcess } from "./_cli.ts";
import { fileTempDir } from "./_temp.ts";
import { main as statsMain } from "../_cli/stats.ts";
import { main as scanMain } from "../_cli/scan.ts";
import { main as describeMain } from "../_cli/describe.ts";
import { main as runMain, PROTOCOLS } from "../_cli/run.ts";
import type { ToolResult } from "../types.ts";

const dir = fileTempDir("toolguard-lists-");

const inProcess = runInProcess;

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const TS = "2026-11-02T10:00:00.000Z";

test("OUTCOME_KINDS: the seven kinds, failures first, each counted by createStats", () => {
  assert.deepEqual(OUTCOME_KINDS, ["spawn", "timeout", "exit", "protocol", "refused", "empty", "results"]);
  const stats = createStats();
  for (const kind of OUTCOME_KINDS) {
    stats.addLine(JSON.stringify({ ts: TS, event: "result", tool: "t", kind }));
  }
  const report = stats.finish();
  assert.equal(report.malformed.count, 0);
  for (const kind of OUTCOME_KINDS) assert.equal(report.runs.kinds[kind], 1, kind);
  assert.deepEqual(Object.keys(report.runs.kinds), OUTCOME_KINDS);
  assert.equal(report.runs.failed, 5);
});

test("FINDING_CODES: nine distinct codes (the contract's seven and the MCP relay's two), each counted from a blocked call", () => {
  assert.equal(new Set(FINDING_CODES).size, 9);
  assert.equal(FINDING_CODES[0], "unknown_tool");
  const stats = createStats();
  stats.addLine(
    JSON.stringify({ ts: TS, event: "verdict", tool: "t", verdict: "blocked", findings: FINDING_CODES }),
  );
  assert.deepEqual(Object.keys(stats.finish().verdicts.codes), FINDING_CODES);
});

test("GROUP_BY: every grouping passes through createStats and `toolguard stats --by`", async () => {
  assert.deepEqual(GROUP_BY, ["tool", "kind", "day", "model"]);
  const log = file(
    "calls.jsonl",
    JSON.stringify({ ts: TS, event: "result", tool: "rg", kind: "exit" }) + "\n",
  );
  for (const by of GROUP_BY) {
    assert.equal(createStats({ by }).finish().by, by);
    const out = await inProcess(statsMain, [log, "--by", by, "--json"]);
    assert.equal(out.status, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout).by, by);
  }
  assert.equal((await inProcess(statsMain, [log, "--by", "week"])).status, 2);
});

test("SCAN_CONTEXTS: every context passes through scan and `toolguard scan --context`", async () => {
  assert.deepEqual(SCAN_CONTEXTS, ["tool_output", "user_text", "tool_args", "cli_arg"]);
  const text = file("arg.txt", "--upload-pack=touch /tmp/pwned");
  for (const context of SCAN_CONTEXTS) {
    // Only a command-line argument is read as an option: the context reached the scanner.
    const expected = context === "cli_arg";
    assert.equal(scan("--upload-pack=touch /tmp/pwned", { context }).blocked, expected, context);
    const out = await inProcess(scanMain, [text, "--context", context, "--json"]);
    assert.equal(out.status, expected ? 1 : 0, `${context}: ${out.stderr}`);
    assert.equal(JSON.parse(out.stdout).blocked, expected, context);
  }
  assert.equal((await inProcess(scanMain, [text, "--context", "email"])).status, 2);
});

test("PROVIDERS: every provider passes through toolResultMessage and `toolguard describe --message`", async () => {
  assert.deepEqual(PROVIDERS, ["openai", "anthropic", "ollama"]);
  const result: ToolResult = {
    ok: true,
    kind: "empty",
    items: [],
    exitCode: 0,
    signal: null,
    detail: "",
    durationMs: 1,
    warnings: [],
    truncated: false,
    stderr: "",
  };
  const path = file("result.json", JSON.stringify(result));
  for (const provider of PROVIDERS) {
    const message: { content: string } = toolResultMessage(provider, {
      result,
      callId: "c1",
      toolName: "rg",
    });
    assert.match(message.content, /^Tool ran and returned zero items/, provider);
    const out = await inProcess(describeMain, [
      path,
      "--message",
      provider,
      "--call-id",
      "c1",
      "--tool-name",
      "rg",
    ]);
    assert.equal(out.status, 0, `${provider}: ${out.stderr}`);
    assert.deepEqual(JSON.parse(out.stdout), message, provider);
  }
  assert.equal((await inProcess(describeMain, [path, "--message", "gemini"])).status, 2);
});

test("PROTOCOLS: every named protocol passes `toolguard run --protocol`", async () => {
  assert.deepEqual(PROTOCOLS, ["envelope", "json", "jsonl", "lines", "text"]);
  for (const protocol of PROTOCOLS) {
    // A command that cannot start: exit 1 (the tool failed), not 2 (the protocol was refused).
    const out = await inProcess(runMain, ["--protocol", protocol, "--json", "--", join(dir, "no-such-tool")]);
    assert.equal(out.status, 1, `${protocol}: ${out.stderr}`);
    assert.equal(JSON.parse(out.stdout).kind, "spawn", protocol);
  }
  const refused = await inProcess(runMain, ["--protocol", "xml", "--", "ls"]);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /--protocol must be envelope, json, jsonl, lines or text, got "xml"/);
});

test("jsonlLog: a line too long is cut payloads first, then text, and `cut` names fields of the line", async () => {
  const lines: string[] = [];
  const log = jsonlLog(
    new WritableStream<Uint8Array>({
      write(chunk) {
        lines.push(new TextDecoder().decode(chunk));
      },
    }),
    { includeItems: true, includeArguments: true, maxLineBytes: 512 },
  );
  log.onResult({
    ok: true,
    kind: "results",
    items: ["x".repeat(2000)],
    exitCode: 0,
    signal: null,
    detail: "d".repeat(2000),
    durationMs: 1,
    warnings: [],
    truncated: false,
    stderr: "",
  }, { command: "rg", args: ["a".repeat(2000)] });
  await log.close();
  const line = JSON.parse(lines[0]);
  assert.ok(new TextEncoder().encode(lines[0]).length <= 512);
  assert.deepEqual(line.cut, ["items", "args", "detail", "sentence"]);
  assert.equal(line.command, "rg");
  for (const field of line.cut) assert.ok(!(field in line) || typeof line[field] === "string", field);
});

test("printJson: `pretty` is a named option", () => {
  const captured = captureOutput();
  try {
    printJson([1]);
    printJson([1], { pretty: false });
    printJson([1], { pretty: true });
  } finally {
    captured.restore();
  }
  assert.equal(captured.stdout, "[1]\n[1]\n[\n  1\n]\n");
});
