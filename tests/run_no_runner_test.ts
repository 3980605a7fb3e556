// runTool loads its runner on the first call; where that load fails (a broken installation: here a copy of
// the entry point without the runner beside it), the call still settles with a failure, whatever options it
// was given: a maxDetail getter that throws, a Proxy, a value of the wrong type. runTool never rejects. The
// failure is handed to onResult, once, as every result is.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fromModel, type runTool as RunTool, type ToolCallRecord, type ToolResult } from "../guard.ts";
import { fileTempDir } from "./_temp.ts";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dir = fileTempDir("toolguard-no-runner-");
/** The entry point and what it imports, without the runner (`_run/run_tool.ts`) it loads on the first call. */
const copied = [
  "types.ts",
  "_run/entry.ts",
  "_run/args.ts",
  "_run/classify.ts",
  "_common/values.ts",
  "_common/bytes.ts",
];

/** `runTool` from a copy of the library that holds the entry point and what it imports, not the runner. */
async function brokenRunTool(): Promise<typeof RunTool> {
  for (const file of copied) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(root, file), join(dir, file));
  }
  const entry = await import(pathToFileURL(join(dir, "_run/entry.ts")).href);
  return entry.runTool;
}

test("runTool: a runner that cannot load is a failure, whatever the options, never a rejection", async () => {
  const runTool = await brokenRunTool();
  const throwing = Object.defineProperty({}, "maxDetail", {
    get() {
      throw new Error("no maxDetail today");
    },
  });
  const trap = new Proxy({}, {
    get() {
      throw new Error("no reads today");
    },
  });
  for (const options of [{}, throwing, trap, { maxDetail: "40" }, { maxDetail: 1n }, null, "options"]) {
    const r = await runTool("./no-such-tool", [], options as never);
    assert.equal(r.kind, "spawn");
    assert.equal(r.items, null);
    assert.match(r.detail, /^the guard could not load its runner: /);
  }
  // A usable maxDetail still cuts the detail, as runTool's own failures are cut.
  const cut = await runTool("./no-such-tool", [], { maxDetail: 20 });
  assert.equal(cut.detail.length, 20);
  assert.ok(cut.detail.endsWith("\u2026"));
});

test("runTool: a runner that cannot load still hands its failure to onResult, once, and a hook's fault changes nothing", async () => {
  const runTool = await brokenRunTool();
  const logged: [ToolResult, ToolCallRecord][] = [];
  const onResult = (result: ToolResult, call: ToolCallRecord) => void logged.push([result, call]);
  const r = await runTool("rg", ["--json", fromModel("needle"), "."], {
    onResult,
    cwd: "/tmp",
    maxDetail: 30,
  });
  assert.equal(r.kind, "spawn");
  assert.deepEqual(logged, [[r, { command: "rg", args: ["--json", "needle", "."], cwd: "/tmp" }]]);
  // A hook that throws, or whose promise rejects, is ignored: the call still settles with the failure.
  const hooks = [
    () => {
      throw new Error("log full");
    },
    () => Promise.reject(new Error("log gone")),
  ];
  for (const hook of hooks) {
    const failed = await runTool("./no-such-tool", [], { onResult: hook });
    assert.match(failed.detail, /^the guard could not load its runner: /);
  }
  // An onResult whose read throws counts as none; a cwd that is not text is left out of the record.
  const unreadable = Object.defineProperty({}, "onResult", {
    get() {
      throw new Error("no hook today");
    },
  });
  assert.equal((await runTool("./no-such-tool", [], unreadable)).kind, "spawn");
  logged.length = 0;
  await runTool("./no-such-tool", [], { onResult, cwd: 7 } as never);
  assert.deepEqual(logged.map(([, call]) => call), [{ command: "./no-such-tool", args: [] }]);
});
