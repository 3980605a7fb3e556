// The environment marker that finds a child's tree: one name per host, one value per child, and a process
// matches only when it holds that very entry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { holdsEntry, newTreeMarker } from "../_run/tree.ts";

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
