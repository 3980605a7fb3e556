// The guard's own notes (that it found the tree by its process group only, that a read of stderr failed) come
// right after the result's sentence and before the tool's quoted output, on every shape of result, so a long
// stderr is what `maxDetail` cuts, never what the guard knows; the CLI's text and its log say the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import type { ToolResult } from "../guard.ts";
import { fileTempDir } from "./_temp.ts";
import { isDeno, isLinux } from "./_runtime.ts";

// Only a host that cannot read /proc finds a tree by its process group, and only Deno's permissions make one.
const options = {
  skip: !isLinux ? "the tree note is Linux's (/proc)" : isDeno ? false : "needs Deno's permissions",
};
const TREE_NOTE = "the process tree the guard ended was found by its process group only";

interface HostOutput {
  results: Record<string, ToolResult>;
  cli: string;
  log: string;
}

let host: Promise<HostOutput> | undefined;

/** One run of the restricted host (every shape at once), shared by the tests of this file. */
function hostRun(): Promise<HostOutput> {
  return host ??= (async () => {
    const dir = fileTempDir("toolguard-notes-");
    const fixture = fileURLToPath(new URL("../fixtures/restricted_notes.ts", import.meta.url));
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
    const { stdout } = await promisify(execFile)(
      deno.execPath(),
      ["run", "--allow-run", `--allow-write=${dir}`, fixture, dir],
      { encoding: "utf8" },
    );
    return JSON.parse(stdout) as HostOutput;
  })();
}

/** The detail's sentence ends before the tree note, and every note before the quoted output. */
function assertNotesFirst(r: ToolResult, sentence: RegExp, quoted = "; stderr: ") {
  assert.match(r.detail, sentence);
  const note = r.detail.indexOf(TREE_NOTE);
  assert.ok(note > 0, `the tree note is kept: ${r.detail}`);
  const quote = r.detail.indexOf(quoted);
  if (quote !== -1) assert.ok(note < quote, `the tree note comes before the tool's output: ${r.detail}`);
  assert.ok(r.detail.length <= 400, "the detail stays within maxDetail");
}

test(
  "runTool notes: an exit code after the cut keeps the tree note ahead of a long stderr",
  options,
  async () => {
    const r = (await hostRun()).results.exit;
    assert.equal(r.kind, "exit", r.detail);
    assertNotesFirst(r, /^the tool ended with exit code 3; the process tree the guard ended was found/);
    assert.match(r.detail, /; stderr: 0{20}/, "the stderr still follows, cut");
  },
);

test(
  "runTool notes: a signal after the cut keeps the tree note ahead of a long stderr",
  options,
  async () => {
    const r = (await hostRun()).results.signal;
    assert.equal(r.signal, "SIGUSR1", r.detail);
    assertNotesFirst(r, /^killed by signal SIGUSR1; the process tree the guard ended was found/);
    assert.match(r.detail, /; stderr: 0{20}/);
  },
);

test("runTool notes: a cut success says the tree was found by its group only", options, async () => {
  const r = (await hostRun()).results.success;
  assert.equal(r.kind, "results", r.detail);
  assertNotesFirst(
    r,
    /^stdout was cut at 64 bytes; there may be more; the process tree the guard ended was found/,
  );
});

test("runTool notes: output withheld unscanned keeps the tree note", options, async () => {
  const r = (await hostRun()).results.unscanned;
  assert.equal(r.kind, "protocol", r.detail);
  assertNotesFirst(
    r,
    /^its output could not be scanned.*; stdout was cut at 64 bytes; there may be more; the process tree/,
  );
});

test("runTool notes: a timeout says the tree note before a long failed-read note", options, async () => {
  const r = (await hostRun()).results.timeout;
  assert.equal(r.kind, "timeout", r.detail);
  assertNotesFirst(
    r,
    /^timed out after 100 ms; the guard ended the process tree; the process tree the guard ended was found/,
    "reading stderr",
  );
  assert.match(r.detail, /; reading stderr failed \(EIO x+/, "the read note follows, cut");
});

test(
  "runTool notes: a failed stdout read, which ends the tree, says the tree note before stderr",
  options,
  async () => {
    const r = (await hostRun()).results.protocol;
    assert.equal(r.kind, "protocol", r.detail);
    assertNotesFirst(
      r,
      /^reading stdout failed after 8 bytes \(EIO: i\/o error, read\)[^;]*; the process tree the guard ended was found/,
    );
    assert.match(r.detail, /; stderr: 0{20}/);
  },
);

test(
  "toolguard run: the text and the log line say the tree note before the tool's stderr",
  options,
  async () => {
    const { cli, log } = await hostRun();
    const line = JSON.parse(readFileSync(log, "utf8").trim()) as { detail: string; sentence: string };
    assertNotesFirst(
      { detail: line.detail } as ToolResult,
      /^the tool ended with exit code 3; the process tree the guard ended was found/,
    );
    assert.ok(cli.includes(line.detail), `the text quotes the logged detail whole: ${cli}`);
    assert.equal(cli.trim(), line.sentence);
  },
);

test("classify: the tree note comes after the sentence, then the read note, then the tool's output", async () => {
  const { classify } = await import("../guard.ts");
  const stderr = `${"e".repeat(150)}\n`.repeat(3);
  const treeNote = "the process tree the guard ended was found by its process group only";
  const base = { stdout: "", stderr, treeNote, stderrReadError: "EIO: i/o error, read" };
  const cut = { protocol: "lines", maxOutputBytes: 4, onOverflow: "truncate" } as const;
  const cases: [string, Parameters<typeof classify>[0], Parameters<typeof classify>[1]?][] = [
    ["the tool ended with exit code 3", { ...base, exitCode: 3, signal: null }],
    ["killed by signal SIGUSR1", { ...base, exitCode: null, signal: "SIGUSR1" }],
    ["timed out after 10000 ms; the guard ended the process tree", {
      ...base,
      exitCode: null,
      signal: "SIGTERM",
      killedBy: "timeout",
    }],
    ["reading stdout failed after 0 bytes (EIO), so the output may be incomplete and is withheld", {
      ...base,
      exitCode: null,
      signal: null,
      stdoutReadError: "EIO",
    }],
    ["stdout was cut at 4 bytes; there may be more", {
      ...base,
      stdout: "a\nbcdef",
      exitCode: null,
      signal: "SIGTERM",
      killedBy: "overflow",
    }, cut],
  ];
  for (const [sentence, outcome, options] of cases) {
    const { detail } = classify(outcome, options);
    const notes = `${sentence}; ${treeNote}; reading stderr failed (EIO: i/o error, read)`;
    assert.ok(detail.startsWith(notes), `every note before the tool's output: ${detail}`);
    assert.ok(detail.length <= 400, detail);
  }
});

test("classify: a long sentence from the tool (a refusal, a protocol error) leaves the notes their room", async () => {
  const { classify } = await import("../guard.ts");
  const treeNote = "the process tree the guard ended was found by its process group only";
  const notes = { treeNote, stderrReadError: "EIO: i/o error, read" };
  const refusal = JSON.stringify({ ok: false, error: { code: "E_BIG", message: "m".repeat(500) } });
  const cases: [ReturnType<typeof classify>, RegExp][] = [
    [
      classify({ exitCode: 0, signal: null, stdout: refusal, stderr: "why\n", ...notes }),
      /^E_BIG: m+\u2026; /,
    ],
    [
      classify({ exitCode: 0, signal: null, stdout: "x", ...notes }, {
        protocol: () => {
          throw new Error("p".repeat(600));
        },
      }),
      /^the protocol function rejected stdout: p+\u2026; /,
    ],
  ];
  for (const [r, sentence] of cases) {
    assert.match(r.detail, sentence, "the sentence keeps its shape, cut");
    assert.ok(
      r.detail.includes(`; ${treeNote}; reading stderr failed (EIO`),
      `the notes are kept: ${r.detail}`,
    );
    assert.ok(!r.detail.includes("; stderr: "), "the tool's output is what the cut takes first");
    assert.ok(r.detail.length <= 400, r.detail);
  }
  // A short sentence is never cut for a note, and with no note a long one keeps the whole detail.
  const alone = classify({ exitCode: 0, signal: null, stdout: refusal });
  assert.equal(alone.detail.length, 400);
});

test("classify: a runner's tree note is taken as text and bounded, so it cannot push out the read note", async () => {
  const { classify } = await import("../guard.ts");
  const outcome = { exitCode: 0, signal: null, stdout: "a\n", stderrReadError: "EIO" };
  // A boxed string is the note it holds, as any value is for stderrReadError.
  const boxed = classify({ ...outcome, treeNote: new String("found by group") as unknown as string }, {
    protocol: "lines",
  });
  assert.match(boxed.detail, /^found by group; reading stderr failed \(EIO\)/);
  // A note of 10 000 characters is cut like a read error's reason, and the read note after it is kept.
  const long = classify({ ...outcome, treeNote: "t".repeat(10_000) }, { protocol: "lines" });
  assert.match(long.detail, /^t+\u2026; reading stderr failed \(EIO\), so the stderr shown ends/);
  assert.ok(long.detail.length <= 400);
});

test("classify: a long abort reason keeps the rest of the sentence and the notes after it", async () => {
  const { classify } = await import("../guard.ts");
  const treeNote = "the process tree the guard ended was found by its process group only";
  const r = classify({
    exitCode: null,
    signal: "SIGTERM",
    stdout: "",
    stderr: "why\n",
    killedBy: "abort",
    abortReason: "r".repeat(600),
    treeNote,
    stderrReadError: "EIO",
  });
  assert.match(
    r.detail,
    /^aborted by the caller's AbortSignal \(r+\u2026\); the guard ended the process tree; /,
  );
  assert.ok(r.detail.includes(`; ${treeNote}; reading stderr failed (EIO)`), r.detail);
  assert.ok(r.detail.length <= 400, r.detail);
});
