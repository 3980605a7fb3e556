/**
 * The MCP guard's pins of tools built in code: a definition is pinned as the JSON a server would send for it
 * (a boxed value as the primitive it holds, a Date or other `toJSON` as what it returns, a hole as `null`, a
 * function-valued key not at all), so two tools JSON tells apart never share a pin, a tool pinned from code
 * matches the same tool read from JSON, one that cannot be written as JSON is refused with an error naming it,
 * and the pins older versions wrote for tools read from JSON still match.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMcpGuard } from "../mcp.ts";
import type { McpEvent } from "../mcp.ts";
import { definitionOf, hashDefinition } from "../_mcp/pins.ts";
import { validateToolCalls } from "../validate.ts";

/** A guard pinning in memory that collects its events' names in `events`. */
function pinningGuard(events: string[] = []) {
  return createMcpGuard({
    pins: { server: "s", file: null },
    onEvent: (e: McpEvent) => void events.push(e.event),
  });
}

/** A tool `t` whose input schema is `{ type: "object", ...extra }`. */
const tool = (extra: Record<string, unknown>) => ({ name: "t", inputSchema: { type: "object", ...extra } });

/** Tools built in code, each beside one that JSON sends differently. */
const PAIRS: [string, () => unknown, () => unknown][] = [
  [
    "a boxed false and a boxed true",
    () => tool({ additionalProperties: new Boolean(false) }),
    () => tool({ additionalProperties: new Boolean(true) }),
  ],
  [
    "a boxed 1 and a boxed 2",
    () => tool({ maxProperties: new Number(1) }),
    () => tool({ maxProperties: new Number(2) }),
  ],
  [
    "a boxed 'a' and a boxed 'b'",
    () => tool({ default: new String("a") }),
    () => tool({ default: new String("b") }),
  ],
  ["two Dates", () => tool({ default: new Date(0) }), () => tool({ default: new Date(1) })],
  [
    "two toJSONs",
    () => tool({ default: { toJSON: () => "a" } }),
    () => tool({ default: { toJSON: () => "b" } }),
  ],
  [
    "a tool's own toJSON",
    () => ({ ...tool({}), toJSON: () => ({ ...tool({}), description: "a" }) }),
    () => ({ ...tool({}), toJSON: () => ({ ...tool({}), description: "b" }) }),
  ],
  [
    "a boxed description",
    () => ({ ...tool({}), description: new String("Reads.") }),
    () => ({ ...tool({}), description: new String("Deletes.") }),
  ],
];

test("tools built in code that JSON sends differently are pinned apart: the change is refused", () => {
  // A boxed value and a Date hashed as {}: `additionalProperties: new Boolean(false)` turned true changed no pin,
  // nor did a boxed description (not a string, so not pinned) or a tool's toJSON (its own keys were pinned).
  for (const [what, before, after] of PAIRS) {
    const events: string[] = [];
    const guard = pinningGuard(events);
    guard.setTools([before()]);
    guard.setTools([after()]);
    assert.deepEqual(events.filter((e) => e.startsWith("tool_")), ["tool_changed"], what);
    assert.equal(guard.checkCall({ name: "t", arguments: {} }).allowed, false, what);
  }
});

test("a tool built in code is pinned as the JSON it is sent as: the same tool read from JSON matches its pin", () => {
  // Pinned from code, the tool hashed unlike its wire form (a boxed value or a Date as {}, a hole written as
  // nothing, a function as null), so the relay reading it from JSON refused it as changed.
  const sparse: unknown[] = ["a"];
  sparse[2] = "c";
  const built: [string, () => unknown][] = [
    ...PAIRS.flatMap(([what, a, b]): [string, () => unknown][] => [[`${what} (1)`, a], [`${what} (2)`, b]]),
    ["a hole", () => tool({ default: sparse })],
    ["a function and a symbol", () => tool({ f: () => 1, s: Symbol("s"), u: undefined })],
    ["NaN, Infinity and -0", () => tool({ default: [NaN, -Infinity, -0] })],
    ["a getter", () => ({
      name: "t",
      get inputSchema() {
        return { type: "object", description: "q" };
      },
    })],
  ];
  for (const [what, make] of built) {
    const events: string[] = [];
    const guard = pinningGuard(events);
    guard.setTools([make()]);
    guard.setTools([JSON.parse(JSON.stringify(make()))]);
    assert.deepEqual(events.filter((e) => e.startsWith("tool_")), [], what);
    assert.equal(guard.checkCall({ name: "t", arguments: {} }).allowed, true, what);
  }
});

test("a tool whose definition cannot be written as JSON is refused with an error that names it", () => {
  // A getter that throws threw its own error out of setTools ("gone": which tool, and what to do?); a toJSON
  // that throws was pinned as a key holding null; a BigInt threw JSON.stringify's TypeError.
  const cases: [unknown, RegExp][] = [
    [
      {
        name: "t",
        inputSchema: {
          type: "object",
          get minProperties(): never {
            throw new Error("gone");
          },
        },
      },
      /^TypeError: setTools\(\): tools\[0\] \("t"\) could not be read \(gone\); pass the tools as plain JSON/,
    ],
    [
      tool({
        default: {
          toJSON: (): never => {
            throw new Error("not now");
          },
        },
      }),
      /^Error: tool "t": its definition could not be read as JSON to pin it \(not now\); pass the tools as plain JSON/,
    ],
    [
      { ...tool({}), annotations: { since: 1n } },
      /^Error: tool "t": its definition could not be read as JSON to pin it \(.*BigInt/,
    ],
    // (in the schema, it is refused before any pin: the list is the caller's to fix)
    [
      tool({ maxProperties: 1n }),
      /^SchemaError: setTools\(\): tools\[0\] \("t"\) inputSchema: the schema holds a BigInt at \/maxProperties \(1n\).*write the number 1 instead/,
    ],
  ];
  for (const [bad, message] of cases) {
    const guard = pinningGuard();
    guard.setTools([tool({})]);
    assert.throws(() => guard.setTools([bad]), message);
    // (the guard keeps the list it had)
    assert.equal(guard.checkCall({ name: "t", arguments: {} }).allowed, true);
  }
});

test("the guard enforces each tool as it pins it and as validateToolCalls reads it: as JSON sends it", async () => {
  // The guard compiled a tool's own keys while its pins (and validateToolCalls) read the tool as sent: a tool
  // whose toJSON sends a strict schema was pinned strict and enforced lax (x: 5 allowed), one with a boxed name
  // was pinned and then refused as unknown, and a toJSON reading its key was pinned as read at "" (JSON reads a
  // list's tools at "0", "1", ...), so the same tool from JSON was refused as changed.
  const strict = { type: "object", properties: { x: { type: "string" } }, additionalProperties: false };
  const lax = { type: "object" };
  const cases: [string, unknown, Record<string, unknown>][] = [
    ["a tool's own toJSON", {
      name: "t",
      inputSchema: lax,
      toJSON: () => ({ name: "t", inputSchema: strict }),
    }, {
      x: 5,
    }],
    ["a boxed name", { name: new String("t"), inputSchema: strict }, { x: "a" }],
    ["a toJSON that reads its key", {
      name: "t",
      inputSchema: lax,
      toJSON: (key: string) => ({ name: "t", inputSchema: key === "0" ? strict : lax }),
    }, { x: 5 }],
  ];
  for (const [what, built, args] of cases) {
    const sent = await validateToolCalls([{ name: "t", arguments: args }], { tools: [built] as never });
    assert.equal(
      JSON.stringify(sent.calls[0].findings),
      JSON.stringify(validateAgainstJson(built, args)),
      what,
    );
    const events: string[] = [];
    const guard = pinningGuard(events);
    guard.setTools([built]);
    assert.equal(guard.checkCall({ name: "t", arguments: args }).allowed, sent.allowed, what);
    guard.setTools(JSON.parse(JSON.stringify([built])));
    assert.deepEqual(events.filter((e) => e.startsWith("tool_")), [], what);
    assert.equal(guard.checkCall({ name: "t", arguments: args }).allowed, sent.allowed, what);
  }
  // a tool whose toJSON throws cannot be read as sent: an error naming it, the guard keeping its list
  const guard = pinningGuard();
  guard.setTools([{ name: "t", inputSchema: strict }]);
  const broken = {
    name: "t",
    inputSchema: lax,
    toJSON: (): never => {
      throw new Error("not now");
    },
  };
  assert.throws(
    () => guard.setTools([broken]),
    /^TypeError: setTools\(\): tools\[0\] \("t"\) could not be read \(not now\)/,
  );
  assert.equal(guard.checkCall({ name: "t", arguments: { x: 5 } }).allowed, false);
});

/** The findings the sent form of `tool` (its JSON read back) gives `args`, by the guard of a fresh list. */
function validateAgainstJson(tool: unknown, args: Record<string, unknown>): unknown {
  const guard = createMcpGuard({});
  guard.setTools(JSON.parse(JSON.stringify([tool])));
  const check = guard.checkCall({ name: "t", arguments: args });
  return check.verdict.findings;
}

/** A seeded random number in [0, 1). */
function seeded(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** A random value built in code, of what JSON writes in its own way, `depth` levels down at most. */
function builtInCode(random: () => number, depth: number): unknown {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
  const r = random();
  if (depth === 0 || r < 0.45) {
    return pick<() => unknown>([
      () => pick([0, -0, 1.5, 1e21, NaN, Infinity, -Infinity, null, true, false, "", "a", "\ud800"]),
      () => pick([new Boolean(false), new Boolean(true), new Number(-0), new Number(NaN), new String("s")]),
      () => new Date(Math.floor(random() * 1e12)),
      () => pick([undefined, () => 1, Symbol("s")]),
      () => ({ toJSON: (key: string) => ({ key, boxed: new Number(2) }) }),
    ])();
  }
  if (r < 0.7) {
    const list: unknown[] = [];
    list.length = Math.floor(random() * 4);
    for (let i = 0; i < list.length; i++) if (random() < 0.7) list[i] = builtInCode(random, depth - 1);
    return list;
  }
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--) {
    const key = pick(["a", "b", "toJSON", "__proto__", "10", "\u00e9"]);
    const value = builtInCode(random, depth - 1);
    if (random() < 0.2) {
      Object.defineProperty(object, key, { get: () => value, enumerable: true, configurable: true });
    } else {Object.defineProperty(object, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });}
  }
  return object;
}

test("a definition built in code hashes as the same definition read from JSON: 3000 seeded definitions", () => {
  // Differential: the hash of a tool built in code against that of its JSON text read back (the plain path).
  const random = seeded(59);
  for (let i = 0; i < 3000; i++) {
    const tool: Record<string, unknown> = { name: "t", inputSchema: builtInCode(random, 4) };
    if (random() < 0.5) tool.annotations = builtInCode(random, 2);
    if (random() < 0.3) tool.description = random() < 0.5 ? "d" : new String("d");
    const text = JSON.stringify(tool);
    const sent = hashDefinition(definitionOf(JSON.parse(text))!);
    assert.equal(hashDefinition(definitionOf(tool)!), sent, `#${i}: ${text}`);
  }
});

/**
 * Tools as a server sends them (text), and the hashes toolguard at 9a92fa8 pinned them under (before pins read
 * tools as sent): a pin file it wrote must still match, byte for byte.
 */
const LISTED = String.raw`[
  {"name":"weather","description":"Get the weather. Say \"please\"\n\tthen \u00e9t\u00e9 \ud83d\ude00 </script>","inputSchema":{"type":"object","properties":{"city":{"type":"string","minLength":1,"default":"Z\u00fcrich"},"n":{"type":"number","minimum":-0,"maximum":1e21,"multipleOf":0.1,"enum":[1.5e-7,12345678901234567890,-1,0,null,true,false]}},"required":["city"],"additionalProperties":false}},
  {"name":"proto","inputSchema":{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{},"":{"const":{"b":[],"a":{}}}}},"annotations":{"readOnlyHint":true,"title":"x"},"title":"Proto tool","outputSchema":{"type":"object","properties":{"z":{"type":"array","items":[{"type":"null"}]}}}},
  {"name":"bare"},
  {"name":"keys","description":"","inputSchema":{"z":1,"a":2,"A":3,"10":4,"9":5,"\u0000":6,"\u00ff":7,"\ud800":8}}
]`;
const PINNED_AT_9A92FA8: Record<string, string> = {
  weather: "fa0c425597e180dd783a5c0f96a832bb76719cde77e67f95d285056320047d3c",
  proto: "64b4ce7c4212991b2cf4df93f8a4f3fa74103965e94c8a9df66326c05e6fa161",
  bare: "79ba70ca76018216f216c2eed3e08bfa1ce350343325a262d78e658044a76d5c",
  keys: "a03e1a00d271ae9bc273cc89b5d11fa437c583d2eee3940394c4d04c3d87f8a2",
};

test("pins written before tools were read as sent still match the same tools read from JSON, file untouched", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolguard-pins-sent-"));
  try {
    const file = join(dir, "pins.json");
    const tools: Record<string, unknown> = {};
    for (const t of JSON.parse(LISTED) as { name: string }[]) {
      const { name, ...rest } = t;
      tools[name] = {
        hash: PINNED_AT_9A92FA8[name],
        scheme: 2,
        definition: { name, ...rest },
        at: "2026-12-01",
      };
    }
    const text = JSON.stringify({ version: 1, servers: { s: { tools } } }, null, 2) + "\n";
    writeFileSync(file, text);
    const events: string[] = [];
    const guard = createMcpGuard({ pins: { server: "s", file }, onEvent: (e) => void events.push(e.event) });
    guard.setTools(JSON.parse(LISTED));
    // (no tool pinned anew, none changed, no pin file error)
    assert.deepEqual(events, []);
    assert.equal(readFileSync(file, "utf8"), text);
    assert.equal(guard.checkCall({ name: "weather", arguments: { city: "Bern" } }).allowed, true);
    assert.equal(guard.checkCall({ name: "bare", arguments: {} }).allowed, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
