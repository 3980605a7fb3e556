// Contract tests for guard.ts (SPEC section 1): the seven kinds, protocols, options and the option-injection
// defence. Process-tree behaviour (timeouts, drains, host exit, concurrency) is in guard_process_test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { classify, type ClassifyOptions, fromModel, type ProcessOutcome, runTool } from "../guard.ts";
import type { ToolResult } from "../types.ts";
import { fake, launcher } from "./_guard_helpers.ts";
import { evalCommand, isBun, isWindows, withoutWineNoise } from "./_runtime.ts";
import { oversizedFromClient } from "../_mcp/framing.ts";
import { tooLargeMessage } from "../_gate/bound.ts";
import type { JsonRpcMessage } from "../_mcp/jsonrpc.ts";
import type { McpFrame } from "../_mcp/types.ts";

const T = { timeout: 60_000 };
// The crash fixture exits 9009. POSIX keeps 8 bits (49); Windows keeps the full code, except that bun.exe's
// own process.exit truncates to 8 bits there too (oven-sh/bun#33720).
const crashExitCode = isWindows && !isBun ? 9009 : 9009 & 0xff;
const run = (scenario: string, options: Parameters<typeof runTool>[2] = {}, ...args: string[]) =>
  runTool(launcher.command, fake(scenario, ...args), { timeoutMs: 20_000, ...options });

function assertInvariant(r: ToolResult): void {
  if (r.ok) {
    assert.ok(Array.isArray(r.items), "a success carries an array");
    assert.equal(r.kind, r.items.length === 0 ? "empty" : "results");
  } else {
    assert.equal(
      r.items === null,
      true,
      `failure ${r.kind} must have items === null, got ${JSON.stringify(r.items)}`,
    );
  }
  assert.ok(["spawn", "timeout", "exit", "protocol", "refused", "empty", "results"].includes(r.kind));
  assert.equal(typeof r.durationMs, "number");
  assert.ok(Array.isArray(r.warnings));
}

test(
  "runTool: items === null exactly when ok is false, for every fixture scenario (invariant)",
  T,
  async () => {
    const expected: Record<string, string> = {
      results: "results",
      empty: "empty",
      refused: "refused",
      crash: "exit",
      silent: "protocol",
      partial: "protocol",
      "no-items": "protocol",
      "stderr-heavy": "exit",
      signal: "exit",
      binary: "results",
      hang: "timeout",
    };
    const names = Object.keys(expected);
    const results = await Promise.all(names.map((s) => run(s, s === "hang" ? { timeoutMs: 700 } : {})));
    for (const [i, r] of results.entries()) {
      assert.equal(r.kind, expected[names[i]], `${names[i]}: ${r.detail}`);
      assertInvariant(r);
      if (r.ok) assert.equal(r.items === null, false);
      else assert.equal(r.items, null);
    }
    const empty = results[names.indexOf("empty")];
    assert.ok(empty.ok && empty.items.length === 0 && empty.items !== null);
    const spawn = await runTool("./definitely-not-a-tool-xyz");
    assert.equal(spawn.kind, "spawn");
    assert.equal(spawn.items === null, true);
  },
);

test("classify: items === null for every failure it can build (invariant)", () => {
  const outcomes: ProcessOutcome[] = [
    { spawnError: "nope", exitCode: null, signal: null, stdout: "" },
    { exitCode: null, signal: "SIGTERM", stdout: "", killedBy: "timeout" },
    { exitCode: null, signal: "SIGTERM", stdout: "", killedBy: "abort" },
    { exitCode: null, signal: "SIGTERM", stdout: "x", killedBy: "overflow" },
    { exitCode: 3, signal: null, stdout: '{"ok":true,"items":[1]}' },
    { exitCode: null, signal: "SIGSEGV", stdout: "" },
    { exitCode: 0, signal: null, stdout: "" },
    { exitCode: 0, signal: null, stdout: '{"ok":false}' },
    { exitCode: 0, signal: null, stdout: "[1]" },
  ];
  const kinds = outcomes.map((o) => {
    const r = classify(o);
    assert.equal(r.ok, false);
    assert.equal(r.items === null, true, `${r.kind} must carry items === null`);
    return r.kind;
  });
  assert.deepEqual(kinds, [
    "spawn",
    "timeout",
    "timeout",
    "protocol",
    "exit",
    "exit",
    "protocol",
    "refused",
    "protocol",
  ]);
});

test("runTool: the six basic cases and the extra scenarios classify as the contract says", T, async () => {
  const [results, refused, crash, signal, noItems, stderrHeavy] = await Promise.all([
    run("results"),
    run("refused"),
    run("crash"),
    run("signal"),
    run("no-items"),
    run("stderr-heavy"),
  ]);
  assert.equal(results.kind, "results");
  assert.deepEqual(results.items, [{ file: "src/a.ts", line: 3 }, { file: "src/b.ts", line: 9 }]);
  assert.equal(results.exitCode, 0);
  assert.equal(results.detail, "");
  assert.equal(refused.kind, "refused");
  assert.equal(refused.detail, "PERMISSION_DENIED: not allowed to read /etc/shadow");
  assert.equal(crash.kind, "exit");
  assert.notEqual(crash.exitCode, 0);
  assert.equal(crash.exitCode, crashExitCode);
  assert.match(crash.detail, /the index is corrupt/);
  if (!isWindows) {
    assert.equal(signal.kind, "exit");
    assert.equal(signal.signal, "SIGKILL");
    assert.equal(signal.exitCode, null);
    assert.match(signal.detail, /SIGKILL/);
  }
  assert.equal(noItems.kind, "protocol", "ok:true without items must not read as empty");
  assert.match(noItems.detail, /items/);
  assert.equal(stderrHeavy.kind, "exit");
  assert.equal(stderrHeavy.exitCode, 2);
  assert.ok(stderrHeavy.stderr.length <= 8192, "stderr keeps a bounded tail");
  assert.ok(stderrHeavy.stderr.length > 1000);
  // Under Wine, bun.exe itself appends a harmless "Internal error: directory mismatch" line to a child's
  // stderr (see ../shared/windows/README.md); it is Wine's noise, not the tool's.
  assert.match(withoutWineNoise(stderrHeavy.stderr), /LAST: disk quota exceeded\n$/);
  assert.match(stderrHeavy.detail, /LAST: disk quota exceeded/);
  assert.ok(stderrHeavy.detail.length <= 400);
});

test("runTool: protocols jsonl, lines, text and json read what the tool printed", T, async () => {
  const [jsonl, lines, text, json, linesAsEnvelope] = await Promise.all([
    run("jsonl", { protocol: "jsonl" }),
    run("lines", { protocol: "lines" }),
    run("lines", { protocol: "text" }),
    run("results", { protocol: "json" }),
    run("lines"),
  ]);
  assert.deepEqual(jsonl.items, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  assert.deepEqual(lines.items, ["alpha", "beta", "gamma"]);
  assert.deepEqual(text.items, ["alpha\nbeta\n\ngamma"]);
  assert.equal(json.kind, "results");
  assert.equal(json.items?.length, 1, "a JSON object is one item");
  assert.equal(linesAsEnvelope.kind, "protocol");
});

test("classify: protocols in detail, silence is never an answer", () => {
  const ok = (stdout: string, protocol: ClassifyOptions) =>
    classify({ exitCode: 0, signal: null, stdout }, protocol);
  for (const protocol of ["envelope", "json", "jsonl"] as const) {
    const r = ok("  \n", { protocol });
    assert.equal(r.kind, "protocol", `${protocol}: silence`);
    assert.match(r.detail, /stdout is empty/);
  }
  assert.equal(ok("", { protocol: "lines" }).kind, "empty");
  assert.equal(ok("", { protocol: "text" }).kind, "empty");
  assert.equal(ok("\n\n", { protocol: "text" }).kind, "empty");
  assert.equal(ok("[1,2]", { protocol: "envelope" }).kind, "protocol");
  assert.match(ok("[1,2]", { protocol: "envelope" }).detail, /array/);
  assert.equal(ok("42", { protocol: "envelope" }).kind, "protocol");
  assert.equal(ok("null", { protocol: "envelope" }).kind, "protocol");
  assert.equal(ok("not json", { protocol: "envelope" }).kind, "protocol");
  assert.equal(ok('{"ok":true,"items":"a"}', {}).kind, "protocol");
  assert.equal(ok('{"ok":"true","items":[]}', {}).kind, "refused", "ok must be exactly true");
  assert.equal(ok('{"ok":false,"error":"disk full"}', {}).detail, "disk full");
  assert.equal(ok('{"ok":false,"error":{"code":"E1","message":"m"}}', {}).detail, "E1: m");
  assert.match(ok('{"ok":false}', {}).detail, /without an error/);
  assert.deepEqual(ok("[1,2]", { protocol: "json" }).items, [1, 2]);
  assert.deepEqual(ok("[]", { protocol: "json" }).items, []);
  assert.deepEqual(ok('"x"', { protocol: "json" }).items, ["x"]);
  assert.deepEqual(ok("null", { protocol: "json" }).items, [null]);
  const bad = ok('{"a":1}\n\n{"b":\n', { protocol: "jsonl" });
  assert.equal(bad.kind, "protocol");
  assert.match(bad.detail, /line 3/);
  assert.deepEqual(ok("a\r\nb\r\n", { protocol: "lines" }).items, ["a", "b"]);
  const fn = ok("a,b", { protocol: (s) => s.split(",") });
  assert.deepEqual(fn.items, ["a", "b"]);
  const throws = ok("x", {
    protocol: () => {
      throw new Error("no commas");
    },
  });
  assert.equal(throws.kind, "protocol");
  assert.match(throws.detail, /no commas/);
  assert.equal(ok("x", { protocol: () => "nope" as unknown as unknown[] }).kind, "protocol");
  assert.equal(
    classify({ exitCode: 0, signal: null, stdout: "x".repeat(2000) }, { maxDetail: 50 }).detail.length,
    50,
  );
});

test("classify: exit codes, signals and the guard's own kills", () => {
  const out = '{"ok":true,"items":[]}';
  assert.equal(classify({ exitCode: 1, signal: null, stdout: "" }).kind, "exit");
  const mapped = classify({ exitCode: 1, signal: null, stdout: "" }, { exitCodes: { 1: "empty" } });
  assert.equal(mapped.kind, "empty");
  assert.deepEqual(mapped.items, []);
  assert.equal(
    classify({ exitCode: 2, signal: null, stdout: "" }, { exitCodes: { 1: "empty" } }).kind,
    "exit",
  );
  const sig = classify({ exitCode: null, signal: "SIGSEGV", stdout: out });
  assert.equal(sig.kind, "exit", "death by a signal the guard did not send");
  assert.match(sig.detail, /SIGSEGV/);
  const guardSent = classify({ exitCode: null, signal: "SIGTERM", stdout: out, killedBy: "timeout" }, {
    timeoutMs: 1234,
  });
  assert.equal(guardSent.kind, "timeout");
  assert.match(guardSent.detail, /1234 ms/);
  const aborted = classify({
    exitCode: null,
    signal: "SIGTERM",
    stdout: "",
    killedBy: "abort",
    abortReason: "user",
  });
  assert.equal(aborted.kind, "timeout");
  assert.match(aborted.detail, /aborted/);
  assert.match(aborted.detail, /user/);
  const over = classify({ exitCode: null, signal: "SIGTERM", stdout: "", killedBy: "overflow" }, {
    maxOutputBytes: 100,
  });
  assert.equal(over.kind, "protocol");
  assert.match(over.detail, /exceeded 100 bytes/);
});

test("classify: a timeout, an abort or an overflow keeps the tool's stderr in the result", () => {
  const stderr = "warning: slow disk\n";
  const notes = [{}, { treeNote: "found by group" }, { stderrReadError: "EIO" }];
  for (const killedBy of ["timeout", "abort", "overflow"] as const) {
    for (const note of notes) {
      const r = classify({ exitCode: null, signal: "SIGTERM", stdout: "", stderr, killedBy, ...note });
      assert.equal(r.ok, false);
      assert.equal(r.stderr, stderr, `${killedBy} ${JSON.stringify(note)}: ${r.detail}`);
    }
  }
});

test("runTool: a tool ended at the output cap keeps what it wrote on stderr", T, async () => {
  const tool = evalCommand(
    'console.error("warning: slow disk"); setTimeout(() => { for (;;) console.log("x".repeat(1000)); }, 50)',
  );
  const r = await runTool(tool.command, tool.args, { protocol: "lines", maxOutputBytes: 100 });
  assert.equal(r.kind, "protocol", r.detail);
  assert.match(r.detail, /^stdout exceeded 100 bytes/);
  assert.match(withoutWineNoise(r.stderr), /^warning: slow disk\r?\n/);
});

test("classify: truncate cuts at a line or character boundary and says so", () => {
  const lines = classify(
    { exitCode: null, signal: "SIGTERM", stdout: "one\ntwo\nthr", killedBy: "overflow" },
    { protocol: "lines", onOverflow: "truncate", maxOutputBytes: 11 },
  );
  assert.equal(lines.kind, "results");
  assert.deepEqual(lines.items, ["one", "two"]);
  assert.equal(lines.truncated, true);
  assert.match(lines.detail, /cut at 11 bytes/);
  const euro = new TextEncoder().encode("ab€"); // 5 bytes; a cap of 4 splits the €
  const text = classify({ exitCode: null, signal: "SIGTERM", stdout: euro, killedBy: "overflow" }, {
    protocol: "text",
    onOverflow: "truncate",
    maxOutputBytes: 4,
  });
  assert.deepEqual(text.items, ["ab"], "no U+FFFD from a cut character");
  assert.equal(text.truncated, true);
  const nothingWhole = classify(
    { exitCode: null, signal: "SIGTERM", stdout: "abcdef", killedBy: "overflow" },
    {
      protocol: "lines",
      onOverflow: "truncate",
      maxOutputBytes: 4,
    },
  );
  assert.equal(nothingWhole.kind, "protocol", "a cut output must never read as found-nothing");
  const envelopeIgnoresTruncate = classify(
    { exitCode: null, signal: "SIGTERM", stdout: "{", killedBy: "overflow" },
    { protocol: "envelope", onOverflow: "truncate" },
  );
  assert.equal(envelopeIgnoresTruncate.kind, "protocol");
  assert.equal(
    classify({ exitCode: 0, signal: null, stdout: "a\n" }, { protocol: "lines", onOverflow: "truncate" })
      .truncated,
    false,
  );
});

test("classify: decoding uses the encoding label, drops a BOM, never throws on bad bytes", () => {
  const latin = new Uint8Array([0x63, 0x61, 0x66, 0xe9]);
  assert.deepEqual(classify({ exitCode: 0, signal: null, stdout: latin }, { protocol: "text" }).items, [
    "caf\ufffd",
  ]);
  assert.deepEqual(
    classify({ exitCode: 0, signal: null, stdout: latin }, { protocol: "text", encoding: "latin1" }).items,
    ["café"],
  );
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"ok":true,"items":[]}')]);
  assert.equal(classify({ exitCode: 0, signal: null, stdout: bom }).kind, "empty");
  const utf16 = new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]);
  assert.deepEqual(
    classify({ exitCode: 0, signal: null, stdout: utf16 }, { protocol: "text", encoding: "utf-16le" }).items,
    ["hi"],
  );
});

test("runTool: no shell, metacharacters in arguments stay text", T, async () => {
  const args = [
    "a & b",
    "x; rm -rf /",
    "$(whoami)",
    "`id`",
    "'quoted'",
    '"double"',
    "a|b",
    "*",
    "~",
    "%PATH%",
  ];
  const r = await run("echo-args", {}, ...args);
  assert.equal(r.kind, "results");
  assert.deepEqual(r.items, args);
});

test("runTool: stdin given as text or bytes is delivered and closed; default is end-of-file", T, async () => {
  const [text, bytes, none] = await Promise.all([
    run("echo-stdin", { stdin: "hello\nworld" }),
    run("echo-stdin", { stdin: new TextEncoder().encode("bytes ü") }),
    run("echo-stdin", { timeoutMs: 15_000 }),
  ]);
  assert.deepEqual(text.items, ["hello\nworld"]);
  assert.deepEqual(bytes.items, ["bytes ü"]);
  assert.equal(none.kind, "results", "a tool reading stdin sees end-of-file and does not hang");
  assert.deepEqual(none.items, [""]);
});

test("runTool: cwd, env and clearEnv reach the tool", T, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-cwd-"));
  process.env.TG_HOST_ONLY = "host";
  try {
    const [withEnv, cleared] = await Promise.all([
      run("env", { cwd: dir, env: { TG_ONE: "1" } }, "TG_ONE", "TG_HOST_ONLY"),
      run("env", { clearEnv: true, env: { TG_TWO: "2" } }, "TG_TWO", "TG_HOST_ONLY"),
    ]);
    const a = withEnv.items?.[0] as { cwd: string; vars: Record<string, string | null> };
    assert.equal(a.cwd.replace(/^\/private/, ""), dir.replace(/^\/private/, ""));
    assert.equal(a.vars.TG_ONE, "1");
    assert.equal(a.vars.TG_HOST_ONLY, "host", "the host environment is kept by default");
    const b = cleared.items?.[0] as { vars: Record<string, string | null> };
    assert.equal(b.vars.TG_TWO, "2");
    assert.equal(b.vars.TG_HOST_ONLY, null, "clearEnv starts from an empty environment");
  } finally {
    delete process.env.TG_HOST_ONLY;
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  "runTool: spawn for a missing program, bad cwd, not executable and bad options; nothing runs",
  T,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-spawn-"));
    try {
      const plain = join(dir, "not-executable");
      writeFileSync(plain, "#!/bin/sh\necho hi\n");
      const cases = await Promise.all([
        runTool("definitely-not-a-tool-xyz", []),
        runTool(launcher.command, fake("results"), { cwd: join(dir, "missing") }),
        isWindows ? Promise.resolve(null) : runTool(plain, []),
        runTool(launcher.command, fake("results"), { encoding: "no-such-encoding" }),
        runTool(launcher.command, fake("results"), { timeoutMs: -1 }),
        runTool(launcher.command, fake("results"), { maxOutputBytes: 0 }),
        runTool("", []),
        runTool(launcher.command, [42 as unknown as string]),
        runTool(launcher.command, ["a\0b"]),
      ]);
      for (const r of cases) {
        if (r === null) continue;
        assert.equal(r.kind, "spawn", r.detail);
        assert.equal(r.items, null);
        assert.ok(r.detail.length > 0);
      }
      assert.match(cases[0].detail, /definitely-not-a-tool-xyz/);
      assert.match(cases[3]!.detail, /encoding/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "runTool: bytes are decoded once after joining; a character split across two writes stays whole",
  T,
  async () => {
    const [split, binary, bom, latin, latinDefault] = await Promise.all([
      run("split-char"),
      run("binary"),
      run("bom"),
      run("latin1", { protocol: "text", encoding: "windows-1252" }),
      run("latin1", { protocol: "text" }),
    ]);
    assert.deepEqual(split.items, ["price: 5€ net"]);
    assert.deepEqual(binary.items, ["caf\ufffd"], "bad bytes become U+FFFD, never an exception");
    assert.deepEqual(bom.items, ["bom"]);
    assert.deepEqual(latin.items, ["café"]);
    assert.deepEqual(latinDefault.items, ["caf\ufffd"]);
  },
);

test("runTool: exitCodes maps chosen exit codes to empty and nothing else", T, async () => {
  const [three, four] = await Promise.all([
    run("exit", { exitCodes: { 3: "empty" } }, "3"),
    run("exit", { exitCodes: { 3: "empty" } }, "4"),
  ]);
  assert.equal(three.kind, "empty");
  assert.deepEqual(three.items, []);
  assert.equal(four.kind, "exit");
  assert.equal(four.exitCode, 4);
});

test(
  "runTool: output cap overflow fails as protocol; truncate keeps whole lines and says so",
  T,
  async () => {
    const [fail, lines, text] = await Promise.all([
      run("flood", { maxOutputBytes: 1 << 20 }, "64"),
      run("flood", { maxOutputBytes: 100_000, protocol: "lines", onOverflow: "truncate" }, "4"),
      run("flood", { maxOutputBytes: 100_000, protocol: "text", onOverflow: "truncate" }, "4"),
    ]);
    assert.equal(fail.kind, "protocol");
    assert.match(fail.detail, /exceeded 1048576 bytes/);
    assert.equal(lines.kind, "results");
    assert.equal(lines.truncated, true);
    assert.equal(lines.items.length, Math.floor(100_000 / 64));
    assert.ok((lines.items as string[]).every((l) => l === "x".repeat(63)));
    assert.equal(text.kind, "results");
    assert.equal(text.truncated, true);
    assert.ok((text.items[0] as string).length <= 100_000);
    const small = await run("lines", { maxOutputBytes: 100_000, protocol: "lines", onOverflow: "truncate" });
    assert.equal(small.truncated, false);
  },
);

test("runTool: scanOutput puts scanner findings in warnings; without it warnings stay empty", T, async () => {
  const [scanned, plain] = await Promise.all([run("inject", { scanOutput: true }), run("inject")]);
  assert.equal(scanned.kind, "results");
  assert.ok(scanned.warnings.length > 0, "injected instructions in the output are reported");
  assert.ok(scanned.warnings.every((w) => typeof w.category === "string" && w.end > w.start));
  assert.deepEqual(plain.warnings, []);
});

test(
  "runTool: onResult is called once with the result and the call; its errors are swallowed",
  T,
  async () => {
    const seen: unknown[] = [];
    const r = await run("results", {
      onResult: (result, call) => {
        seen.push(result, call);
        throw new Error("logger broke");
      },
    });
    assert.equal(r.kind, "results");
    assert.equal(seen.length, 2);
    assert.equal(seen[0], r);
    const call = seen[1] as { command: string; args: string[] };
    assert.equal(call.command, launcher.command);
    assert.deepEqual(call.args, fake("results"));
    const marked = await runTool(launcher.command, [...fake("echo-args"), fromModel("m")], {
      onResult: () => Promise.reject(new Error("async logger broke")),
    });
    assert.deepEqual(marked.items, ["m"]);
  },
);

test(
  "fromModel: a marked value read as an option is refused before spawning, unless after --",
  T,
  async () => {
    for (const value of ["--pre=./evil.sh", "-o", "-e", "-", "--"]) {
      const r = await runTool(launcher.command, [...fake("echo-args"), fromModel(value)]);
      assert.equal(r.kind, "spawn", value);
      assert.equal(r.items, null);
      assert.match(r.detail, /came from the model/);
    }
    const fine = await runTool(launcher.command, [
      ...fake("echo-args"),
      fromModel("a-b"),
      "--",
      fromModel("-o"),
    ]);
    assert.deepEqual(fine.items, ["a-b", "--", "-o"]);
    const modelDashes = await runTool(launcher.command, [
      ...fake("echo-args"),
      fromModel("--"),
      fromModel("-o"),
    ]);
    assert.equal(modelDashes.kind, "spawn", "a model-supplied -- does not open the door");
    assert.equal(fromModel(7).value, "7");
    assert.equal(fromModel({ a: 1 }).value, '{"a":1}');
  },
);

/** Why the ripgrep test cannot run here, or false: a bare machine has Deno and no rg (CI installs ripgrep). */
const ripgrepSkip = isWindows
  ? "needs a POSIX shell script for --pre"
  : spawnSync("rg", ["--version"]).status === 0
  ? false
  : "rg is not on PATH (apt-get install ripgrep)";

test("runTool: ripgrep --pre never runs a model-chosen script; exit 1 is empty, exit 2 is exit", {
  ...T,
  skip: ripgrepSkip,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-rg-"));
  try {
    const marker = join(dir, "pwned");
    const evil = join(dir, "evil.sh");
    writeFileSync(evil, `#!/bin/sh\ntouch '${marker}'\ncat "$1"\n`);
    chmodSync(evil, 0o755);
    writeFileSync(join(dir, "notes.txt"), "alpha\nneedle here\n");
    const opts = { cwd: dir, protocol: "lines" as const, exitCodes: { 1: "empty" as const } };

    const refused = await runTool("rg", ["--no-heading", fromModel(`--pre=${evil}`), "."], opts);
    assert.equal(refused.kind, "spawn");
    assert.equal(existsSync(marker), false, "the model's script did not run");

    const asPattern = await runTool("rg", ["--no-heading", "--", fromModel(`--pre=${evil}`), "."], opts);
    assert.equal(asPattern.kind, "empty", asPattern.detail);
    assert.deepEqual(asPattern.items, []);
    assert.equal(existsSync(marker), false, "after -- it is only a search pattern");

    const found = await runTool("rg", ["--no-heading", "--", fromModel("needle"), "."], opts);
    assert.equal(found.kind, "results");
    assert.deepEqual(found.items, ["./notes.txt:needle here"]);

    const error = await runTool("rg", ["--", fromModel("needle"), join(dir, "missing-dir")], opts);
    assert.equal(error.kind, "exit", "ripgrep's exit 2 is an error, not an empty answer");
    assert.equal(error.exitCode, 2);

    // Control: the same flag unmarked really does run the script, so the refusal above is what stopped it.
    await runTool("rg", ["--no-heading", `--pre=${evil}`, "needle", "."], opts);
    assert.equal(existsSync(marker), true, "control: rg --pre runs scripts");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("runTool: never rejects on hostile input", T, async () => {
  const results = await Promise.all([
    runTool(undefined as unknown as string),
    runTool(launcher.command, "not-an-array" as unknown as string[]),
    runTool(launcher.command, fake("results"), null as unknown as undefined),
    runTool(launcher.command, fake("results"), { protocol: "yaml" as "json" }),
  ]);
  for (const r of results) assertInvariant(r);
  assert.deepEqual(results.map((r) => r.kind), ["spawn", "spawn", "results", "spawn"]);
});

test("classify and the relays: a byte count of one is written '1 byte', never '1 bytes'", () => {
  const overflow = { exitCode: null, signal: "SIGTERM", stdout: "ab", killedBy: "overflow" } as const;
  const over = classify(overflow, { maxOutputBytes: 1 });
  assert.match(over.detail, /^stdout exceeded 1 byte; /);
  const nothingWhole = classify(overflow, { protocol: "lines", onOverflow: "truncate", maxOutputBytes: 1 });
  assert.match(nothingWhole.detail, /^stdout exceeded 1 byte before/);
  const cut = classify(overflow, { protocol: "text", onOverflow: "truncate", maxOutputBytes: 1 });
  assert.match(cut.detail, /cut at 1 byte;/);
  assert.match(tooLargeMessage(1, "the answer"), /maxResponseBytes \(1 byte\)/);
  const said: string[] = [];
  const sinks = {
    emit: () => {},
    fromClient: (f: McpFrame) =>
      void said.push(String(((f.message as JsonRpcMessage).error as { message: string }).message)),
    toClient: (m: JsonRpcMessage) => void said.push(String((m.error as { message: string }).message)),
  };
  const edges = (text: string) => ({
    head: new TextEncoder().encode(text),
    tail: new TextEncoder().encode(text),
  });
  oversizedFromClient(2, edges('{"jsonrpc":"2.0","id":1,"method":"ping"}'), 1, sinks);
  oversizedFromClient(1, edges('{"jsonrpc":"2.0","id":2,"result":{}}'), 1, sinks);
  assert.deepEqual(said, [
    "toolguard: message of 2 bytes exceeds the limit of 1 byte; not forwarded",
    "toolguard: the client's answer of 1 byte exceeds the limit of 1 byte",
  ]);
});
