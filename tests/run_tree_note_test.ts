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
import { evalCommand, isDeno, isLinux } from "./_runtime.ts";
import { runInProcess } from "./_cli.ts";

// Only a host that cannot read /proc finds a tree by its process group, and only Deno's permissions make one.
const options = {
  skip: !isLinux ? "the tree note is Linux's (/proc)" : isDeno ? false : "needs Deno's permissions",
};
const TREE_NOTE = "the guard ended the process tree, found by its process group only";
/** The tree note as the runner gives it (the runtime's own wording). */
const RUNNER_NOTE =
  "found by its process group only (/proc is not readable here): a descendant that left the group " +
  "may have survived";

interface HostOutput {
  results: Record<string, ToolResult>;
  cli: string;
  log: string;
  /** The CLI's text run of a success whose tool left a daemon holding its pipes, and its log. */
  success: { stdout: string; stderr: string; log: string };
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

/**
 * The detail's sentence ends before the tree note, and every note before the quoted output; the detail says
 * once that the guard ended the tree.
 */
function assertNotesFirst(r: ToolResult, sentence: RegExp, quoted = "; stderr: ") {
  assert.match(r.detail, sentence);
  const note = r.detail.indexOf(TREE_NOTE);
  assert.ok(note > 0, `the tree note is kept: ${r.detail}`);
  assert.equal(r.detail.split("process tree").length, 2, `the tree is named once: ${r.detail}`);
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
    assertNotesFirst(r, /^the tool ended with exit code 3; the guard ended the process tree, found by/);
    assert.match(r.detail, /; stderr: 0{20}/, "the stderr still follows, cut");
  },
);

test(
  "runTool notes: a signal after the cut keeps the tree note ahead of a long stderr",
  options,
  async () => {
    const r = (await hostRun()).results.signal;
    assert.equal(r.signal, "SIGUSR1", r.detail);
    assertNotesFirst(r, /^killed by signal SIGUSR1; the guard ended the process tree, found by/);
    assert.match(r.detail, /; stderr: 0{20}/);
  },
);

test("runTool notes: a cut success says the tree was found by its group only", options, async () => {
  const r = (await hostRun()).results.success;
  assert.equal(r.kind, "results", r.detail);
  assertNotesFirst(
    r,
    /^stdout was cut at 64 bytes; there may be more; the guard ended the process tree, found by/,
  );
});

test("runTool notes: output withheld unscanned keeps the tree note", options, async () => {
  const r = (await hostRun()).results.unscanned;
  assert.equal(r.kind, "protocol", r.detail);
  assertNotesFirst(
    r,
    /^its output could not be scanned.*; stdout was cut at 64 bytes; there may be more; the guard ended the/,
  );
});

test("runTool notes: a timeout says the tree note before a long failed-read note", options, async () => {
  const r = (await hostRun()).results.timeout;
  assert.equal(r.kind, "timeout", r.detail);
  assertNotesFirst(
    r,
    /^timed out after 100 ms; the guard ended the process tree, found by its process group only/,
    "reading stderr",
  );
  assert.match(
    r.detail,
    /; stderr was read only in part: reading it failed \(EIO x+/,
    "the read note follows, cut",
  );
});

test(
  "runTool notes: a failed stdout read, which ends the tree, says the tree note before stderr",
  options,
  async () => {
    const r = (await hostRun()).results.protocol;
    assert.equal(r.kind, "protocol", r.detail);
    assertNotesFirst(
      r,
      /^reading stdout failed after 8 bytes \(EIO: i\/o error, read\)[^;]*; the guard ended the process tree, found/,
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
      /^the tool ended with exit code 3; the guard ended the process tree, found by/,
    );
    assert.ok(cli.includes(line.detail), `the text quotes the logged detail whole: ${cli}`);
    assert.equal(cli.trim(), line.sentence);
  },
);

test(
  "runTool notes: a success whose tool left a daemon holding its pipes says why the guard ended the tree, once",
  options,
  async () => {
    const r = (await hostRun()).results.daemon;
    assert.equal(r.kind, "results", r.detail);
    assert.deepEqual(r.items, ["found"]);
    assert.ok(
      r.detail.startsWith(`a process the tool left running held its output open, so ${TREE_NOTE}`),
      r.detail,
    );
    assert.equal(r.detail.split("process tree").length, 2, `the tree is named once: ${r.detail}`);
  },
);

test(
  "toolguard run: a success's note goes to stderr in text mode, and stdout is the sentence alone",
  options,
  async () => {
    const { success } = await hostRun();
    const line = JSON.parse(readFileSync(success.log, "utf8").trim()) as { detail: string };
    assert.match(line.detail, /^a process the tool left running held its output open, so the guard ended/);
    assert.equal(success.stdout, 'Tool returned 1 item(s): ["found"]\n');
    assert.equal(success.stderr, `note: toolguard run: ${line.detail}\n`);
  },
);

test("toolguard run: a cut success notes the cut on stderr; a failure's text says its detail on stdout only", async () => {
  const { main } = await import("../_cli/run.ts");
  const tool = evalCommand('console.log("first\\nsecond\\nthird")');
  const cut = await runInProcess(main, [
    "--protocol=lines",
    "--max-output=8",
    "--truncate",
    "--",
    tool.command,
    ...tool.args,
  ]);
  assert.equal(cut.status, 0, cut.stderr);
  assert.equal(
    cut.stdout,
    'Tool returned 1 item(s): ["first"]. The output was cut short, so there may be more than this.\n',
  );
  // (on Windows the kill at the cut says how far taskkill /T finds the tree, or, the tool having exited by
  // then, that it finds none; on Linux a tool that exited before the kill, not yet reaped, is said to have
  // left nothing running, as a loaded machine often has it)
  const cutSaid =
    /^stdout was cut at 8 bytes; there may be more(; the guard (ended the process tree, as far as taskkill \/T finds it|could not end the process tree, as taskkill \/T finds a tree only under a process still running|could not end the process tree, as the tool had already exited and no process it started was found running$)[^;]*)?$/;
  assert.match(cut.stderr, /^note: toolguard run: .*\n$/);
  assert.match(cut.stderr.slice("note: toolguard run: ".length, -1), cutSaid);
  // With --json the detail is in the JSON, and stderr stays empty.
  const json = await runInProcess(main, [
    "--json",
    "--protocol=lines",
    "--max-output=8",
    "--truncate",
    "--",
    tool.command,
    ...tool.args,
  ]);
  assert.match(JSON.parse(json.stdout).detail, cutSaid);
  assert.equal(json.stderr, "");
  // A whole success has nothing to note.
  const whole = await runInProcess(main, ["--protocol=lines", "--", tool.command, ...tool.args]);
  assert.equal(whole.stdout, 'Tool returned 3 item(s): ["first","second","third"]\n');
  assert.equal(whole.stderr, "");
  // A failure's sentence quotes its detail already.
  const failed = await runInProcess(main, ["--protocol=json", "--", tool.command, ...tool.args]);
  assert.equal(failed.status, 1);
  assert.match(
    failed.stdout,
    /^Tool did not run successfully \(protocol, exit 0\): stdout is not valid JSON/,
  );
  assert.equal(failed.stderr, "");
});

test("classify: the tree note comes after the sentence, then the read note, then the tool's output", async () => {
  const { classify } = await import("../guard.ts");
  const stderr = `${"e".repeat(150)}\n`.repeat(3);
  const base = { stdout: "", stderr, treeNote: RUNNER_NOTE, stderrReadError: "EIO: i/o error, read" };
  const cut = { protocol: "lines", maxOutputBytes: 4, onOverflow: "truncate" } as const;
  const ended = `the guard ended the process tree, ${RUNNER_NOTE}`;
  const leftover = `a process the tool left running held its output open, so ${ended}`;
  const overflow = { ...base, stdout: "a\nbcdef", killedBy: "overflow" } as const;
  const cases: [string, Parameters<typeof classify>[0], Parameters<typeof classify>[1]?][] = [
    [`the tool ended with exit code 3; ${ended}`, { ...overflow, exitCode: 3, signal: null }, cut],
    [`killed by signal SIGUSR1; ${ended}`, { ...overflow, exitCode: null, signal: "SIGUSR1" }, cut],
    [`timed out after 10000 ms; ${ended}`, {
      ...base,
      exitCode: null,
      signal: "SIGTERM",
      killedBy: "timeout",
    }],
    [`reading stdout failed after 0 bytes (EIO), so the output may be incomplete and is withheld; ${ended}`, {
      ...base,
      exitCode: null,
      signal: null,
      stdoutReadError: "EIO",
    }],
    [`stdout was cut at 4 bytes; there may be more; ${ended}`, {
      ...overflow,
      exitCode: null,
      signal: "SIGTERM",
    }, cut],
    // No kill of the guard's: it ended what the tool left holding its pipes, and says so once.
    [`the tool ended with exit code 3; ${leftover}`, { ...base, exitCode: 3, signal: null }],
    [leftover, { ...base, stdout: "a\n", exitCode: 0, signal: null }, { protocol: "lines" }],
    [
      "a process the tool left running still held stdout open when the guard stopped reading, so the output may " +
      `be incomplete; ${ended}`,
      { ...base, stdout: "a\nb", stdoutHeld: true, exitCode: 0, signal: null },
      { protocol: "lines" },
    ],
  ];
  for (const [sentence, outcome, options] of cases) {
    const { detail } = classify(outcome, options);
    const notes = `${sentence}; stderr was read only in part: reading it failed (EIO: i/o error, read)`;
    assert.ok(detail.startsWith(notes), `every note before the tool's output, once: ${detail}`);
    assert.equal(detail.split("process tree").length, 2, `the tree is named once: ${detail}`);
    assert.ok(detail.length <= 400, detail);
  }
});

test("classify: a long sentence from the tool (a refusal, a protocol error) leaves the notes their room", async () => {
  const { classify } = await import("../guard.ts");
  // (short, so that the notes fit in half of maxDetail: the room a long sentence leaves them is the point)
  const treeNote = "found by group";
  const notes = { treeNote, stderrReadError: "EIO" };
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
      r.detail.includes(
        `the guard ended the process tree, ${treeNote}; stderr was read only in part: reading it failed (EIO`,
      ),
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
  const leftover =
    "a process the tool left running held its output open, so the guard ended the process tree, ";
  assert.ok(
    boxed.detail.startsWith(
      `${leftover}found by group; stderr was read only in part: reading it failed (EIO)`,
    ),
    boxed.detail,
  );
  // A note of 10 000 characters is cut like a read error's reason, and the read note after it is kept.
  const long = classify({ ...outcome, treeNote: "t".repeat(10_000) }, { protocol: "lines" });
  assert.ok(long.detail.startsWith(`${leftover}ttt`), long.detail);
  assert.match(long.detail, /t\u2026; stderr was read only in part: reading it failed \(EIO\)/);
  assert.ok(long.detail.length <= 400);
});

test("classify: a long abort reason keeps the rest of the sentence and the notes after it", async () => {
  const { classify } = await import("../guard.ts");
  const treeNote = "found by its process group only"; // (short: the room a long sentence leaves is the point)
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
    /^aborted by the caller's AbortSignal \(r+\u2026\); the guard ended the process tree, found by /,
  );
  assert.ok(
    r.detail.includes(`process tree, ${treeNote}; stderr was read only in part: reading it failed (EIO)`),
    r.detail,
  );
  assert.ok(r.detail.length <= 400, r.detail);
});

test("classify: a blank tree note from a runner is no note, never a dangling comma", async () => {
  const { classify } = await import("../guard.ts");
  const timeout = classify({
    exitCode: null,
    signal: "SIGTERM",
    stdout: "",
    killedBy: "timeout",
    treeNote: "  \t ",
  }, {
    timeoutMs: 100,
  });
  assert.equal(timeout.detail, "timed out after 100 ms; the guard ended the process tree");
  const kept = classify({ exitCode: 0, signal: null, stdout: "a\n", treeNote: "   " }, { protocol: "lines" });
  assert.deepEqual([kept.kind, kept.detail], ["results", ""]);
});

test("classify: a kill that reached the tool alone, or nothing, is said so, never that the tree ended", async () => {
  const { classify } = await import("../guard.ts");
  const treeNote = "as its run permission is partial";
  const aborted = classify({
    exitCode: null,
    signal: "SIGTERM",
    stdout: "",
    killedBy: "abort",
    treeNote,
    killReached: "tool",
  });
  assert.equal(
    aborted.detail,
    `aborted by the caller's AbortSignal; the guard ended the tool but not its process tree, ${treeNote}`,
  );
  const held = classify(
    { exitCode: 0, signal: null, stdout: "a\n", treeNote, killReached: "none", stderrReadError: "EIO" },
    { protocol: "lines" },
  );
  assert.equal(held.kind, "results", held.detail);
  assert.ok(
    held.detail.startsWith(
      "a process the tool left running held its output open, and the guard could not end the process tree, " +
        `${treeNote}; stderr was read only in part: reading it failed (EIO)`,
    ),
    held.detail,
  );
  // Said without a note too; any other value is none.
  const bare = classify({
    exitCode: null,
    signal: "SIGTERM",
    stdout: "",
    killedBy: "overflow",
    killReached: "none",
  });
  assert.match(bare.detail, /; the guard could not end the process tree$/);
  const other = classify({
    exitCode: null,
    signal: "SIGTERM",
    stdout: "",
    killedBy: "timeout",
    killReached: "all" as "none",
  }, { timeoutMs: 5 });
  assert.equal(other.detail, "timed out after 5 ms; the guard ended the process tree");
});

test("classify: a long stderr read error with a long tree note before it loses its reason, never its point", async () => {
  const { classify } = await import("../guard.ts");
  const r = classify({
    exitCode: 0,
    signal: null,
    stdout: "a\n",
    treeNote: "t".repeat(10_000),
    stderrReadError: "e".repeat(10_000),
  }, { protocol: "lines" });
  assert.ok(r.detail.length <= 400, r.detail);
  assert.match(r.detail, /t\u2026; stderr was read only in part: reading it failed \(e+/);
});
