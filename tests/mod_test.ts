import { test } from "node:test";
import assert from "node:assert/strict";
import * as mod from "../mod.ts";
import * as guard from "../guard.ts";
import * as validate from "../validate.ts";
import * as scan from "../scan.ts";
import * as describe from "../describe.ts";
import * as gate from "../gate.ts";
import * as extract from "../extract.ts";
import * as log from "../log.ts";
import * as stats from "../stats.ts";
import * as mcp from "../mcp.ts";

const faces: Record<string, Record<string, unknown>> = {
  guard,
  validate,
  scan,
  describe,
  gate,
  extract,
  log,
  stats,
  mcp,
};

test("mod: every value it exports is the same binding a face exports", () => {
  const names = Object.keys(mod);
  assert.ok(names.length > 30, `mod exports ${names.length} values`);
  for (const name of names) {
    const homes = Object.entries(faces).filter(([, face]) => name in face);
    assert.ok(homes.length > 0, `${name}: no face exports it`);
    for (const [face, exports] of homes) {
      assert.equal(
        (mod as Record<string, unknown>)[name],
        exports[name],
        `${name}: not the value ${face}.ts exports`,
      );
    }
  }
});

test("mod: every value a face exports, mod.ts exports too (mod.ts re-exports the whole public API)", () => {
  for (const [face, exports] of Object.entries(faces)) {
    for (const name of Object.keys(exports)) {
      assert.ok(name in mod, `${name}: ${face}.ts exports it, mod.ts does not`);
    }
  }
});

// The types a face exports are mod.ts's too: this file type-checks only while mod.ts names them.
export type McpTypesFromMod = [
  import("../mod.ts").DescribedKind,
  import("../mod.ts").DescriptionCategory,
  import("../mod.ts").DescriptionFinding,
  import("../mod.ts").InjectionPolicy,
  import("../mod.ts").McpHttpRelayOptions,
  import("../mod.ts").McpPinOptions,
  import("../mod.ts").PinChange,
];
