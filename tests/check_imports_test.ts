// scripts/check_imports.ts's layering rules on graphs of the test's own: what a module loads with import()
// (on first use) is held to them too, not only its static imports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { layeringProblems } from "../scripts/check_imports.ts";

/** A graph from `from: [to, ...]` lists. */
function edges(lists: Record<string, string[]>): Map<string, Set<string>> {
  return new Map(Object.entries(lists).map(([from, to]) => [from, new Set(to)]));
}

test("check imports: a runner runTool loads on first use may not load the schema engine", () => {
  const graph = edges({
    "guard.ts": ["_run/entry.ts"],
    "_run/entry.ts": [],
    "_run/run_tool.ts": ["_validate/validator.ts"],
    "_validate/validator.ts": [],
  });
  const lazy = edges({ "_run/entry.ts": ["_run/run_tool.ts"] });
  assert.deepEqual(layeringProblems(graph, lazy), [
    "guard.ts loads _validate/validator.ts (at import or on first use): running a tool must not load the " +
    "schema or validation engine",
  ]);
  // Static edges alone do not reach it: the rule holds only because the import() edge is followed.
  assert.deepEqual(layeringProblems(graph), []);
});

test("check imports: a _-folder module may not import() a root module, nor the scanner load another engine", () => {
  const graph = edges({
    "_mcp/relays.ts": [],
    "_scan/scan.ts": [],
    "mcp.ts": [],
    "_validate/sanitise.ts": [],
  });
  const lazy = edges({
    "_mcp/relays.ts": ["mcp.ts", "types.ts"],
    "_scan/scan.ts": ["_validate/sanitise.ts"],
  });
  assert.deepEqual(layeringProblems(graph, lazy), [
    "_mcp/relays.ts loads with import() the root module mcp.ts: import its engine under a _-folder instead",
    "_scan/scan.ts loads with import() _validate/sanitise.ts: the scanner is a leaf and may import only " +
    "_scan/, _common/, types.ts",
  ]);
});

test("check imports: describe and log may not load the JSON reader, only the measure of a value", () => {
  const graph = edges({
    "describe.ts": ["_describe/describe.ts"],
    "log.ts": ["_describe/describe.ts"],
    "_describe/describe.ts": ["_describe/verdict.ts"],
    "_describe/verdict.ts": ["_common/measure.ts", "_common/json.ts"],
    "_common/measure.ts": [],
    "_common/json.ts": ["_common/measure.ts"],
  });
  assert.deepEqual(layeringProblems(graph), [
    "describe.ts loads _common/json.ts statically: none of its synchronous functions needs it",
    "log.ts loads _common/json.ts statically: none of its synchronous functions needs it",
  ]);
  graph.get("_describe/verdict.ts")!.delete("_common/json.ts");
  assert.deepEqual(layeringProblems(graph), []);
});
