// The seams a new user falls into on day one (issue 17), each pinned by a test that failed before the fix.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../cli.ts";
import { captureOutput } from "../_cli/io.ts";

let dir = "";
before(() => {
  dir = mkdtempSync(join(tmpdir(), "toolguard-day-one-"));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI's `main` in this process, output captured. */
async function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const captured = captureOutput();
  try {
    const status = await main(args);
    return { status, stdout: captured.stdout, stderr: captured.stderr };
  } finally {
    captured.restore();
  }
}

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
