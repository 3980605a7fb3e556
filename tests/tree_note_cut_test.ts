// Every tree note the guard gives, alone or with the tool's exit said beside it, fits the cut classify makes of
// a tree note (200 characters): the part that says a process may still be running is never the part cut. A
// smaller maxDetail may cut it, and then the detail ends with the mark of a cut.
import { test } from "node:test";
import assert from "node:assert/strict";
import { classify } from "../guard.ts";
import { MAX_TREE_NOTE } from "../_common/values.ts";
import {
  EXITED_ALONE_NOTE,
  exitedAloneNote,
  exitedTreeNote,
  groupOnlyNote,
  PARTIAL_RUN_NOTE,
  UNREAD_NOTE,
  UNSIGNALLED_NOTE,
} from "../_run/runtime.ts";
import { NOT_ALL_GRANTED, whyNoMarkers } from "../_run/tree.ts";
import { noTaskkillNote, TASKKILL_GONE_NOTE, TASKKILL_TREE_NOTE, taskkillGoneNote } from "../_run/windows.ts";

/** What a note says of a process it may have missed. */
const WARNING = /may (still be running|have survived)/;

/** What a POSIX tree that was signalled may say, beside whether the tool had exited. */
const signalled = [
  UNSIGNALLED_NOTE,
  UNREAD_NOTE,
  groupOnlyNote(whyNoMarkers()),
  groupOnlyNote(NOT_ALL_GRANTED),
];
const notes = [
  ...signalled,
  ...signalled.map((note) => exitedTreeNote(note)),
  ...signalled.map((note) => exitedTreeNote(note, "tool", false)),
  EXITED_ALONE_NOTE,
  PARTIAL_RUN_NOTE,
  TASKKILL_TREE_NOTE,
  TASKKILL_GONE_NOTE,
  ...(["deno", "bun", "node"] as const).flatMap((rt) => [noTaskkillNote(rt), noTaskkillNote(rt, true)]),
];

/** A timeout whose kill gave `treeNote`. */
function timedOut(treeNote: string, maxDetail?: number) {
  return classify({
    exitCode: null,
    signal: "SIGKILL",
    stdout: "",
    stderr: "",
    killedBy: "timeout",
    treeNote,
  }, {
    protocol: "text",
    timeoutMs: 5,
    maxDetail,
  });
}

test("treeNote: every note of the guard, with the tool's exit said, comes whole through classify", () => {
  for (const note of notes) {
    const r = timedOut(note);
    assert.ok(r.detail.endsWith(`, ${note}`), `${note.length}: ${r.detail}`);
    if (note !== EXITED_ALONE_NOTE) assert.match(note, WARNING);
  }
});

test("treeNote: a maxDetail that cuts the warning leaves the mark of a cut", () => {
  for (const note of signalled.map((note) => exitedTreeNote(note))) {
    for (let maxDetail = 1; maxDetail <= 400; maxDetail++) {
      const { detail } = timedOut(note, maxDetail);
      assert.ok(WARNING.test(detail) || detail.endsWith("\u2026"), `${maxDetail}: ${detail}`);
    }
  }
});

test("treeNote: every note worded for the MCP relay's server names the server and fits the cut", () => {
  // The notes that name the process the guard started, as the relay asks for them (treeNote("server")).
  const forServer = [
    ...signalled.map((note) => exitedTreeNote(note, "server")),
    ...signalled.map((note) => exitedTreeNote(note, "server", false)),
    exitedTreeNote(undefined, "server"),
    exitedTreeNote(undefined, "server", false),
    exitedAloneNote("server"),
    taskkillGoneNote("server"),
    ...(["deno", "bun", "node"] as const).map((rt) => noTaskkillNote(rt, true, "server")),
  ];
  for (const note of forServer) {
    assert.match(note, /the server( (itself )?had already exited|'s exit was its own)/);
    assert.doesNotMatch(note, /\btool\b/);
    assert.ok(note.length <= MAX_TREE_NOTE, `${note.length}: ${note}`);
  }
});
