// The environment marker that finds a child's tree: one name per host, one value per child, and a process
// matches only when it holds that very entry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { holdsEntry, newTreeMarker, treeState } from "../_run/tree.ts";
import { isLinux } from "./_runtime.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

test("tree marker: every child gets the host's name and a value of its own", () => {
  const a = newTreeMarker();
  const b = newTreeMarker();
  assert.match(a.name, /^TOOLGUARD_TREE_[0-9a-z]+$/);
  assert.equal(b.name, a.name);
  assert.notEqual(b.value, a.value);
});

test("tree marker: an environment matches only the whole entry", () => {
  const needle = bytes("TOOLGUARD_TREE_ab=1");
  assert.equal(holdsEntry(bytes("A=b\0TOOLGUARD_TREE_ab=1\0Z=9\0"), needle), true);
  assert.equal(holdsEntry(bytes("A=b\0TOOLGUARD_TREE_ab=1"), needle), true, "last entry without its NUL");
  assert.equal(holdsEntry(bytes("TOOLGUARD_TREE_ab=1\0"), needle), true, "first entry");
  assert.equal(holdsEntry(bytes("A=b\0TOOLGUARD_TREE_ab=12\0"), needle), false, "another child's value");
  assert.equal(holdsEntry(bytes("TOOLGUARD_TREE_ab=12"), needle), false, "another child's value, last");
  assert.equal(holdsEntry(bytes("X=TOOLGUARD_TREE_ab=1\0"), needle), false, "inside another entry's value");
  assert.equal(holdsEntry(bytes("XTOOLGUARD_TREE_ab=1\0"), needle), false, "inside another name");
  assert.equal(holdsEntry(bytes(""), needle), false, "a zombie's empty environment");
});

test(
  "tree state: a recheck of known pids takes only a busy verdict from them; a child forked since is still seen",
  { timeout: 60_000, skip: isLinux ? false : "the states of processes are read from /proc, on Linux only" },
  async () => {
    const marker = newTreeMarker();
    // The parent waits (asleep) for a child it started that spins (runnable): a recheck given only the
    // parent's pid must not call the tree asleep.
    const parent = spawn("/bin/sh", ["-c", "sh -c 'while :; do :; done' & wait"], {
      env: { ...process.env, [marker.name]: marker.value },
      detached: true,
      stdio: "ignore",
    });
    try {
      const end = Date.now() + 20_000;
      let look = treeState(marker);
      while ((look.pids.length < 2 || look.state !== "busy") && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20));
        look = treeState(marker);
      }
      assert.equal(look.pids.length, 2, "the parent and its spinning child carry the marker");
      // A known pid still busy is the verdict: /proc is not read through again (which lists the parent too).
      const child = look.pids.find((pid) => pid !== parent.pid)!;
      assert.deepEqual(treeState(marker, [child]), { state: "busy", pids: [child] });
      const again = treeState(marker, [parent.pid!]);
      assert.equal(again.state, "busy", "the spinning child, not among the known pids, is found");
      assert.deepEqual([...again.pids].sort(), [...look.pids].sort());
      // A known pid that does not carry the marker (ended, or reused by another process) is not read: here
      // our own, which does not carry it, and which is running as it reads.
      const other = newTreeMarker();
      assert.deepEqual(treeState(other, [process.pid]), { state: null, pids: [] });
    } finally {
      process.kill(-parent.pid!, "SIGKILL");
    }
  },
);
