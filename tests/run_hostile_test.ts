// Hostile runs of real child processes (review 40 of the guard): a failed run hidden by truncation, an abort
// or a leftover writer after the tool exited, options of the wrong type, and injected text the scanner must
// see as the tool wrote it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runTool } from "../guard.ts";
import { isWindows } from "./_runtime.ts";

const posixOnly = { timeout: 60_000, skip: isWindows ? "POSIX shell and signals" : false };

/** About 36 KB of whole lines, written at once by a builtin: more than the cap, yet it fits in the pipe. */
const ROWS = `rows=$(yes 'partial row' | head -n 3000); printf '%s\\n' "$rows"`;
/** A line every 20 ms for about 200 ms: keeps the drain after the exit going (its idle limit is 150 ms). */
const TICKS = "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick; sleep 0.02; done";
const truncating = {
  protocol: "lines",
  onOverflow: "truncate",
  maxOutputBytes: 1000,
  timeoutMs: 20_000,
} as const;

test(
  "runTool truncate: a tool that failed on its own stays a failure, whatever it wrote",
  posixOnly,
  async () => {
    // The tool ignores SIGTERM and SIGPIPE, so it always ends by itself, however the guard's overflow kill
    // (SIGTERM, and closing the pipe) and the exit race.
    for (
      const [name, script, status] of [
        ["exit 3", `trap '' TERM PIPE; ${ROWS}; exit 3`, /exit code 3/],
        ["SIGSEGV", `trap '' TERM PIPE; ${ROWS}; kill -SEGV $$`, /signal SIGSEGV/],
        // Killed by SIGKILL (not the guard's) before a leftover writer floods stdout: the status came first.
        ["SIGKILL first", `(${TICKS}; yes row) & kill -KILL $$`, /signal SIGKILL/],
      ] as const
    ) {
      for (let i = 0; i < 5; i++) {
        const r = await runTool("/bin/sh", ["-c", script], truncating);
        assert.equal(r.kind, "exit", `${name}: ${r.kind} ${r.detail}`);
        assert.equal(r.items, null);
        assert.match(r.detail, status);
      }
    }
  },
);

test("runTool truncate: a tool the guard ended at the cap is cut, not failed", posixOnly, async () => {
  const r = await runTool("/bin/sh", ["-c", "while :; do echo row; done"], truncating);
  assert.equal(r.kind, "results", r.detail);
  assert.equal(r.truncated, true);
  assert.equal(r.signal === "SIGTERM" || r.signal === "SIGKILL", true, String(r.signal));
});
