// The seams a new user falls into on day one (issue 17), each pinned by a test that failed before the fix.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../cli.ts";
import { runInProcess } from "./_cli.ts";
import { jsonlLog } from "../log.ts";
import { renderHtmlReport, statsFromChunks, statsFromFile } from "../stats.ts";
import { describe } from "../describe.ts";
import { createValidator, lintTools, validateToolCalls } from "../validate.ts";
import { classify, runTool } from "../guard.ts";
import { evalCommand, isWindows } from "./_runtime.ts";
import { fileTempDir } from "./_temp.ts";

const dir = fileTempDir("toolguard-day-one-");

/** Runs the CLI's `main` in this process, output captured. */
const cli = (args: string[]) => runInProcess(main, args);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const SHAPE = '{"query": "string", "limit": "number?"}';

test("toolguard validate: --name reads one bare arguments object for that tool (agentvet's command line)", async () => {
  const ok = await cli([
    "validate",
    file("ok.json", '{"query": "llamas"}'),
    "--shape",
    SHAPE,
    "--name",
    "search",
  ]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /search/);
  const bad = await cli([
    "validate",
    file("bad.json", '{"limit": "ten"}'),
    "--shape",
    SHAPE,
    "--name",
    "search",
  ]);
  assert.equal(bad.status, 1, bad.stderr);
  assert.match(bad.stdout, /missing_required_argument/);
});

test("toolguard validate: --pretty implies --json, and the JSON carries retry_hint", async () => {
  const bad = await cli([
    "validate",
    file("bad2.json", '{"query": 7}'),
    "--shape",
    SHAPE,
    "--name",
    "search",
    "--pretty",
  ]);
  assert.equal(bad.status, 1, bad.stderr);
  const verdict = JSON.parse(bad.stdout);
  assert.equal(verdict.allowed, false);
  assert.equal(typeof verdict.retry_hint, "string");
  assert.match(verdict.retry_hint, /search/);
  assert.ok(bad.stdout.includes('\n  "allowed"'), "indented");
  const ok = await cli([
    "validate",
    file("ok2.json", '{"query": "x"}'),
    "--shape",
    SHAPE,
    "--name",
    "search",
    "--json",
  ]);
  assert.equal(JSON.parse(ok.stdout).retry_hint, null);
});

test("toolguard validate: --name and --text together are a usage error", async () => {
  const r = await cli(["validate", file("t.txt", "hi"), "--name", "search", "--text"]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--name and --text/);
});

test("toolguard run: --json carries the sentence the model reads", async () => {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const [command, prefix] = deno ? [deno.execPath(), ["eval"]] : [process.execPath, ["-e"]];
  const r = await cli([
    "run",
    "--pretty",
    "--protocol",
    "text",
    "--",
    command,
    ...prefix,
    "console.log('hi')",
  ]);
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.kind, "results");
  assert.equal(result.sentence, 'Tool returned 1 item(s): ["hi"]');
});

test("toolguard run: a tool that prints lines or JSON of its own, run without --protocol, gets a hint on stderr to pass one", async () => {
  const tool = (code: string) => {
    const { command, args } = evalCommand(code);
    return [command, ...args];
  };
  const lines = tool("console.log('./src/a.ts:3: TODO')");
  const bare = await cli(["run", "--", ...lines]);
  assert.equal(bare.status, 1);
  assert.match(bare.stdout, /^Tool did not run successfully \(protocol, exit 0\): stdout is not valid JSON/);
  assert.match(bare.stderr, /^hint: toolguard run: .*JSON envelope.*--protocol lines/);
  // A JSON object of the tool's own is read as an envelope without `ok`: a refusal, with the same hint.
  const object = await cli(["run", "--", ...tool("console.log(JSON.stringify({ files: 2 }))")]);
  assert.match(
    object.stdout,
    /^Tool did not run successfully \(refused, exit 0\): REFUSED: the envelope has no ok/,
  );
  assert.match(object.stderr, /^hint: toolguard run: .*--protocol lines, jsonl, json or text/);
  // JSON lines (`rg --json`) fail as one document too, json's way included: the hint names jsonl, which reads them.
  const jsonLines = tool(
    "console.log(JSON.stringify({ type: 'begin' }) + '\\n' + JSON.stringify({ type: 'end' }))",
  );
  const whole = await cli(["run", "--", ...jsonLines]);
  assert.match(whole.stdout, /^Tool did not run successfully \(protocol, exit 0\): stdout is not valid JSON/);
  assert.match(whole.stderr, /^hint: toolguard run: .*JSON lines.*--protocol lines, jsonl/);
  const read = await cli(["run", "--protocol", "jsonl", "--", ...jsonLines]);
  assert.equal(read.status, 0, read.stdout);
  // The usage error's example of a command is one that runs as given: rg --json prints JSON lines.
  const none = await cli(["run", "--"]);
  assert.match(none.stderr, /e\.g\. `toolguard run --protocol jsonl -- rg --json TODO`/);
  // Asked for the envelope, the user meant it: no hint.
  const told = await cli(["run", "--protocol", "envelope", "--", ...lines]);
  assert.equal(told.status, 1);
  assert.equal(told.stderr, "");
});

test("jsonlLog.onMcpEvent: a relay's calls are verdict lines and its other events mcp lines, which stats reads", async () => {
  const chunks: Uint8Array[] = [];
  const log = jsonlLog(new WritableStream<Uint8Array>({ write: (c) => void chunks.push(c) }), { model: "m" });
  log.onMcpEvent({ event: "spawn", pid: 42, command: "node", args: ["server.js"] });
  log.onMcpEvent({ event: "call_allowed", id: 1, name: "echo" });
  log.onMcpEvent({
    event: "call_rejected",
    id: 2,
    name: "get-sum",
    findings: [{ code: "argument_type_mismatch", path: "/a", message: "must be a number" }],
    feedback: "Your call to get-sum was rejected and did not run.",
  });
  log.onMcpEvent({ event: "exit", reason: "client_closed", exitCode: 0, signal: null });
  await log.close();
  const lines = chunks.map((c) => JSON.parse(new TextDecoder().decode(c)));
  assert.deepEqual(lines.map((l) => [l.event, l.type ?? l.verdict]), [
    ["mcp", "spawn"],
    ["verdict", "allowed"],
    ["verdict", "blocked"],
    ["mcp", "exit"],
  ]);
  assert.equal(lines[0].pid, 42);
  assert.deepEqual(lines[2].findings, ["argument_type_mismatch"]);
  const report = await statsFromChunks(chunks);
  assert.equal(report.malformed.count, 0);
  assert.equal(report.verdicts.total, 2);
  assert.equal(report.verdicts.rejected, 1);
  assert.equal(report.relayEvents, 2);
});

test("toolguard stats: a file with no toolguard log line exits 1 and says so", async () => {
  const path = file("other.jsonl", '{"time":"2026-11-01T00:00:00Z","level":"info"}\n{"msg":"hello"}\n');
  const r = await cli(["stats", path]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /none of the 2 lines of .*other\.jsonl is a toolguard log line/);
});

test("toolguard stats: counts read as words (1 line, not 1 lines)", async () => {
  const path = file(
    "one.jsonl",
    '{"ts":"2026-11-02T10:00:00Z","event":"result","tool":"rg","kind":"empty"}\n',
  );
  const r = await cli(["stats", path]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /\b1 line\b/);
  assert.doesNotMatch(r.stdout, /\b1 lines\b/);
  const html = renderHtmlReport(await statsFromFile(path));
  assert.match(html, /\b1 line\b/);
  assert.match(html, /\b0 malformed lines\b/);
});

test("describe: when not one item fits the budget, it says none are shown (not 'only the first 0')", () => {
  const sentence = describe({
    ok: true,
    kind: "results",
    items: ["x".repeat(50), "y".repeat(50)],
    exitCode: 0,
    signal: null,
    detail: "",
    durationMs: 1,
    warnings: [],
    truncated: false,
    stderr: "",
  }, { budget: 20 });
  assert.doesNotMatch(sentence, /first 0/);
  assert.match(sentence, /None of the 2 items fit within 20 characters/);
});

test("Verdict.blocked: a boolean, !allowed, so `if (verdict.blocked)` means what it says; indices in rejectedIndices", () => {
  const validator = createValidator([{ name: "search", input_schema: { type: "object" } }]);
  const allowed = validator.validate([{ name: "search", arguments: {} }]);
  assert.equal(allowed.blocked, false);
  assert.deepEqual(allowed.rejectedIndices, []);
  const mixed = validator.validate([{ name: "search", arguments: {} }, { name: "nope", arguments: {} }]);
  assert.equal(mixed.blocked, true);
  assert.deepEqual(mixed.rejectedIndices, [1]);
});

test("runTool: a failure's detail falls back to stdout when stderr is empty (echo why; exit 3)", async () => {
  // cmd on Windows (no sh there); not the runtime, whose child may write to stderr (bun.exe under Wine does).
  const r = isWindows
    ? await runTool("cmd", ["/d", "/c", "echo why& exit 3"], { timeoutMs: 20_000 })
    : await runTool("sh", ["-c", "echo why; exit 3"], { timeoutMs: 20_000 });
  assert.equal(r.kind, "exit");
  assert.equal(r.items, null);
  assert.equal(r.detail, "the tool ended with exit code 3; stdout: why");
});

test("classify: stderr still wins over stdout, and only the last lines of a long stdout are read", () => {
  const both = classify({ exitCode: 1, signal: null, stdout: "out\n", stderr: "err\n" });
  assert.equal(both.detail, "the tool ended with exit code 1; stderr: err");
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const long = classify({ exitCode: 2, signal: null, stdout: lines });
  assert.equal(long.detail, "the tool ended with exit code 2; stdout: line 4997 | line 4998 | line 4999");
});

test("validateToolCalls: the classifier sees only calls every other check cleared, and modelCheck is set only there", async () => {
  const asked: string[] = [];
  const classifier = (text: string) => {
    asked.push(text);
    return Promise.resolve({ injection: false });
  };
  const tools = [{ name: "search", input_schema: { type: "object", properties: { q: { type: "string" } } } }];
  const verdict = await validateToolCalls([
    { name: "search", arguments: { q: "fine" } },
    { name: "search", arguments: { q: 7 } },
    { name: "nope", arguments: { q: "x" } },
  ], { tools, classifier });
  assert.deepEqual(asked, ["fine"]);
  assert.deepEqual(verdict.calls.map((c) => c.modelCheck !== undefined), [true, false, false]);
});

test("createValidator: an unknown tool suggests a declared name only when it is close", () => {
  const validator = createValidator([
    { name: "get_weather", input_schema: { type: "object" } },
    { name: "push_files", input_schema: { type: "object" } },
  ]);
  const near = validator.validate([{ name: "get_wether", arguments: {} }]).calls[0].findings[0];
  assert.equal(near.suggestion, "get_weather");
  assert.match(near.message, /did you mean "get_weather"/);
  const far = validator.validate([{ name: "no_such_tool_zz", arguments: {} }]).calls[0].findings[0];
  assert.equal(far.suggestion, undefined);
  assert.doesNotMatch(far.message, /did you mean/);
  const closeTool = validator.validate([{ name: "browser_close", arguments: {} }]).calls[0].findings[0];
  assert.equal(closeTool.suggestion, undefined);
});

test("lintTools: lists every schema problem of a tool, not just the first", () => {
  const issues = lintTools([{
    name: "book",
    description: "Book a room",
    input_schema: {
      type: "object",
      properties: {
        nights: { type: "integer", minimum: "one" },
        guests: { type: "integer", maxItems: -1 },
        when: { type: "string", format: "json" },
      },
    },
  }]);
  const schemaErrors = issues.filter((i) => i.code === "invalid_schema").map((i) => i.path).sort();
  assert.deepEqual(schemaErrors, ["/properties/guests/maxItems", "/properties/nights/minimum"]);
  const format = issues.find((i) => i.code === "unknown_format");
  assert.equal(format?.severity, "warning");
  assert.equal(format?.path, "/properties/when/format");
});

test("createValidator: an unknown format is an annotation (OpenAPI's format: json no longer makes a tool unusable)", () => {
  const validator = createValidator([{
    name: "notion_search",
    input_schema: { type: "object", properties: { filter: { type: "string", format: "json" } } },
  }]);
  assert.equal(validator.validate([{ name: "notion_search", arguments: { filter: "{}" } }]).allowed, true);
});

test("validateToolCalls: compiled validators are cached by the tools' identity and structure", async () => {
  let compiles = 0;
  const original = globalThis.Function;
  // The code generator looks up Function on globalThis: counting calls counts schema compilations.
  (globalThis as { Function: unknown }).Function = new Proxy(original, {
    construct(target, args) {
      compiles++;
      return Reflect.construct(target, args);
    },
  });
  try {
    const tools = [{
      name: "cache_probe_tool",
      input_schema: { type: "object", properties: { q: { type: "string" } } },
    }];
    const call = [{ name: "cache_probe_tool", arguments: { q: "x" } }];
    await validateToolCalls(call, { tools });
    const first = compiles;
    assert.ok(first > 0, "the first call compiles");
    await validateToolCalls(call, { tools });
    await validateToolCalls(call, { tools: structuredClone(tools) }); // same tools, rebuilt
    assert.equal(compiles, first, "same tools, by identity or by structure: no new compile");
    await validateToolCalls(call, { tools, codegen: false });
    await validateToolCalls(call, { tools, coerce: true });
    assert.ok(compiles > first, "other options compile anew");
  } finally {
    (globalThis as { Function: unknown }).Function = original;
  }
});
