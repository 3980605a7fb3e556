import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compileSchema, createValidator, validateToolCalls } from "../validate.ts";
import { parseJson } from "../_common/json.ts";
import type { Verdict } from "../types.ts";
import { countingTextWork } from "./_counting.ts";
import { PROPERTY_SCHEMA as SCHEMA } from "./_schemas.ts";

const tools = [{ name: "t", input_schema: SCHEMA }];
const strict = createValidator(tools);
const lenient = createValidator(tools, { repair: true, coerce: true });
const interpreted = createValidator(tools, { codegen: false });

const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
function prototypeUntouched(): void {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoNames);
  const probe = {} as Record<string, unknown>;
  assert.equal(probe.polluted, undefined);
  assert.equal(probe.p, undefined);
}

function wellFormed(v: Verdict, n = 1): void {
  assert.equal(typeof v.allowed, "boolean");
  assert.equal(v.calls.length, n);
  assert.deepEqual(v.rejectedIndices, v.calls.filter((c) => !c.allowed).map((c) => c.index));
  assert.equal(v.blocked, !v.allowed);
  for (const c of v.calls) {
    assert.equal(c.allowed, c.findings.length === 0);
    for (const f of c.findings) {
      assert.equal(typeof f.message, "string");
      assert.equal(typeof f.path, "string");
      assert.ok(f.path === "" || f.path.startsWith("/"));
    }
  }
}

/** Strings with lone surrogates and every plane. */
const wild = fc.string({
  unit: fc.oneof(
    fc.constantFrom("\ud800", "\udfff", "\u0000", "\u2028", '"', "\\", "{", "["),
    fc.string({ unit: "binary", maxLength: 1 }),
  ),
  maxLength: 60,
});

test("createValidator: arbitrary JSON values as argument text always give a verdict", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = JSON.stringify(value);
      const v = strict.validate([{ name: "t", arguments: text }]);
      wellFormed(v);
      // the generated code and the interpreter judge alike
      assert.deepEqual(interpreted.validate([{ name: "t", arguments: text }]), v);
      wellFormed(lenient.validate([{ name: "t", arguments: text }]));
      wellFormed(strict.validate([{ type: "tool_use", id: "1", name: "t", input: value }]));
    }),
    { numRuns: 300 },
  );
  prototypeUntouched();
});

test("createValidator: arbitrary text, unicode and lone surrogates as arguments never throw", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        wild,
        fc.string({ unit: "binary" }),
        fc.json().map((j) => j.slice(0, Math.max(0, j.length - 2))),
      ),
      (text) => {
        wellFormed(strict.validate([{ name: "t", arguments: text }]));
        wellFormed(lenient.validate([{ name: "t", arguments: text }]));
        wellFormed(strict.validate([{ name: "t", arguments: JSON.stringify({ q: text, tags: [text] }) }]));
        const p = parseJson(text);
        if (!p.ok) assert.ok(p.position >= 0 && p.position <= text.length);
      },
    ),
    { numRuns: 300 },
  );
  prototypeUntouched();
});

test("createValidator: hostile objects with __proto__ and constructor keys never touch a prototype", () => {
  const key = fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "q",
    "n",
  );
  const hostile = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: "small" }, fc.jsonValue(), fc.dictionary(key, tie("node"), { maxKeys: 4 })),
  })).node;
  fc.assert(
    fc.property(hostile, (value) => {
      const text = JSON.stringify(value).replace(/"(?:hasOwnProperty|toString)"/g, '"__proto__"');
      wellFormed(strict.validate([{ name: "t", arguments: text }]));
      wellFormed(lenient.validate([{ name: "t", arguments: text }]));
      const p = parseJson(text, { locate: true });
      assert.ok(p.ok);
    }),
    { numRuns: 300 },
  );
  wellFormed(strict.validate([{ name: "t", arguments: '{"__proto__":{"polluted":true},"q":"a"}' }]));
  wellFormed(lenient.validate([{ name: "t", arguments: "{'__proto__': {'p': True}, 'q': 'a',}" }]));
  prototypeUntouched();
});

test("createValidator: 100 000-deep nesting is a finding, not a stack overflow", () => {
  const depth = 100_000;
  for (
    const text of [
      "[".repeat(depth) + "]".repeat(depth),
      '{"a":'.repeat(depth) + "1" + "}".repeat(depth),
      "[".repeat(depth),
    ]
  ) {
    const v = strict.validate([{ name: "t", arguments: text }]);
    wellFormed(v);
    assert.equal(v.calls[0].findings[0].code, "malformed_arguments");
    const p = parseJson(text, { maxDepth: Infinity, maxLength: Infinity });
    assert.equal(typeof p.ok, "boolean"); // may fail on stack, but as a value
  }
  let deep: unknown = 1;
  for (let i = 0; i < depth; i++) deep = { nested: deep };
  const v = strict.validate([{ type: "tool_use", id: "1", name: "t", input: deep }]);
  assert.equal(v.calls[0].findings[0].code, "malformed_arguments");
  // a recursive schema over a deep but allowed value still works
  let chain: unknown = { v: 1 };
  for (let i = 0; i < 60; i++) chain = { next: chain };
  assert.equal(
    strict.validate([{ name: "t", arguments: JSON.stringify({ q: "a", nested: chain }) }]).allowed,
    true,
  );
});

// The scanner's own cost on 10 MB is scan.ts's business (and its tests'); here the schema pass and the parser
// run over the full 10 MB with the limit raised, and the default limit turns it away before anything else.
test("createValidator: 10 MB strings are over the size limit by default, checked in full when the limit is raised", async () => {
  const big = "x".repeat(10 * 1024 * 1024);
  const text = JSON.stringify({ q: big });
  const v = strict.validate([{ name: "t", arguments: text }]);
  assert.equal(v.calls[0].findings[0].code, "malformed_arguments");
  const wide = createValidator(tools, { maxLength: Infinity, scan: false });
  const w = wide.validate([{ name: "t", arguments: JSON.stringify({ q: "a" + big.slice(1) + "\ud800" }) }]);
  wellFormed(w);
  assert.deepEqual(w.calls[0].findings.map((f) => f.code), ["argument_constraint"]);
  const open = await validateToolCalls([{ name: "t", arguments: text }], {
    maxLength: 20_000_000,
    scan: false,
  });
  wellFormed(open);
  assert.equal(open.allowed, true);
  assert.equal(compileSchema({ maxLength: 3 })(big).length, 1);
});

test("createValidator: huge numbers and odd values end as findings", () => {
  for (
    const text of [
      '{"q":"a","n":1e400}',
      '{"q":"a","n":-1e400}',
      '{"q":"a","n":123456789012345678901234567890}',
    ]
  ) {
    const v = strict.validate([{ name: "t", arguments: text }]);
    wellFormed(v);
    assert.equal(v.allowed, false);
  }
  const getter = {
    get q() {
      throw new Error("boom");
    },
  };
  const v = strict.validate([{ type: "tool_use", id: "1", name: "t", input: getter }]);
  wellFormed(v);
  assert.equal(v.calls[0].findings[0].code, "malformed_arguments");
  wellFormed(strict.validate([null, 5, "x", [], { name: 5 }] as unknown[]), 5);
});

test("createValidator: repair stays linear on hostile near-JSON (no regex backtracking)", async () => {
  const v = createValidator(tools, { repair: true });
  for (
    const make of [
      (n: number) => "```\n" + " ".repeat(2 * n) + "x",
      (n: number) => "```" + "`".repeat(n),
      (n: number) => "'" + "\\".repeat(n),
      (n: number) => "[" + ",".repeat(n),
    ]
  ) {
    // Characters read and copied count the work without depending on the machine's speed (a timed version
    // could fail on a busy machine): four times the text, about four times the work when linear.
    const workOf = async (n: number) =>
      (await countingTextWork(() => wellFormed(v.validate([{ name: "t", arguments: make(n) }]))))[1];
    const [small, large] = [await workOf(25_000), await workOf(100_000)];
    assert.ok(small > 0 && large < 8 * small, `${JSON.stringify(make(3))}: ${small} -> ${large} characters`);
  }
});
