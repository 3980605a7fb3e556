/**
 * Schemas built in code that no JSON text can give: shared sub-objects (a DAG whose written-out form is
 * astronomically large), an object that contains itself, a loop through `$defs`, and a chain too deep for any
 * recursive walk. Every entry point that takes a schema answers each with an error that names the place, never
 * a hang or a stack overflow. The work is bounded by counting reads: each schema is handed over behind proxies
 * that allow a fixed number of property reads, so a walk that reads it as a tree fails at once instead of
 * running for ever (found by review 56 of stop 53).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { isDeno } from "./_runtime.ts";
import {
  compileSchema,
  createValidator,
  lintTools,
  SchemaError,
  validate,
  validateToolCalls,
  vet,
} from "../validate.ts";
import { createMcpGuard } from "../mcp.ts";
import { gateCompletion, guardFetch } from "../gate.ts";
import { readCounted } from "./_counting.ts";

/**
 * Property reads one entry point may make of a schema: a few walks that count up to the bound of 100 000
 * objects written out (three reads each, at most) before they tell objects apart; read as a tree, the DAG
 * below would take 2^40.
 */
const READS = 2_000_000;

/** `schema` behind proxies that throw after `reads` property reads in all (see `readCounted`). */
function budgeted<T>(schema: T, reads = READS): T {
  return readCounted(schema, reads).value;
}

/** Forty levels, each naming the next twice: 2^40 paths written out, 41 distinct objects. */
function dag(): Record<string, unknown> {
  let s: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 40; i++) s = { type: "object", properties: { a: s, b: s } };
  return s;
}

/** An object schema one of whose properties is the schema itself. */
function selfContaining(): Record<string, unknown> {
  const s: Record<string, unknown> = { type: "object", properties: {} };
  (s.properties as Record<string, unknown>).self = s;
  return s;
}

/** Two definitions that hold each other, reached through a `$ref`. */
function defsLoop(): Record<string, unknown> {
  const a: Record<string, unknown> = { type: "object", properties: {} };
  const b = { type: "object", properties: { a } };
  (a.properties as Record<string, unknown>).b = b;
  return { type: "object", $defs: { a, b }, properties: { x: { $ref: "#/$defs/a" } } };
}

/** A chain 100 000 levels deep: a tree (JSON could give it), but no recursive walk reaches its end. */
function deepChain(): Record<string, unknown> {
  let s: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 100_000; i++) s = { type: "object", properties: { a: s } };
  return s;
}

/** Each schema JSON cannot give, with the pointer its error names and words the message has. */
const CASES = [
  {
    name: "a DAG of 40 levels x 2 references",
    make: dag,
    at: /^\/properties\/a\/properties\/a/,
    says: /\$defs/,
  },
  {
    name: "an object that contains itself",
    make: selfContaining,
    at: /^\/properties\/self$/,
    says: /"\$ref": "#"/,
  },
  {
    name: "a loop through $defs objects",
    make: defsLoop,
    at: /^\/\$defs\/a\/properties\/b\/properties\/a$/,
    says: /the one at \/\$defs\/a\b.*"\$ref": "#\/\$defs\/a"/,
  },
];

/** A tool list of one tool named "t" whose schema is `schema`. */
const toolsOf = (schema: unknown) => [{ name: "t", parameters: schema }];

for (const c of CASES) {
  test(`compileSchema and vet refuse ${c.name} with a SchemaError naming the place`, () => {
    for (
      const compile of [
        (s: unknown) => compileSchema(s),
        (s: unknown) => vet({ name: "t", schema: s as object, fn: () => 1 }),
      ]
    ) {
      assert.throws(() => compile(budgeted(c.make())), (e) => {
        assert.ok(e instanceof SchemaError, String(e));
        assert.match(e.pointer, c.at);
        assert.match(e.message, c.says);
        return true;
      });
    }
  });

  test(`createValidator, validateToolCalls, lintTools and the gate answer ${c.name} with the tool and the place`, async () => {
    const named = (e: unknown) => {
      assert.ok(e instanceof TypeError, String(e));
      assert.match(e.message, /^tool "t": the schema /);
      assert.match(e.message, c.says);
      return true;
    };
    assert.throws(() => createValidator(toolsOf(budgeted(c.make()))), named);
    await assert.rejects(
      validateToolCalls([{ name: "t", arguments: "{}" }], { tools: toolsOf(budgeted(c.make())) }),
      named,
    );
    const issues = lintTools(toolsOf(budgeted(c.make())));
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0].code, "invalid_declaration");
    assert.match(issues[0].message, /^tools\[0\]: tool "t": the schema /);
    // (an Anthropic exchange: the gate reads the request's tools as the validator does)
    const response = {
      type: "message",
      role: "assistant",
      stop_reason: "tool_use",
      content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }],
    };
    const request = { tools: [{ name: "t", input_schema: budgeted(c.make()) }] };
    await assert.rejects(gateCompletion(request, response), named);
    // a guarded fetch reads the request's tools from its text, but takes the option's as they are
    const sent: unknown[] = [];
    const fetchFn = (input: string | URL | Request) => {
      sent.push(input);
      return Promise.resolve(new Response("{}", { headers: { "content-type": "application/json" } }));
    };
    const guarded = guardFetch(fetchFn, { tools: [{ name: "t", input_schema: budgeted(c.make()) }] });
    const body = JSON.stringify({ model: "m", messages: [], max_tokens: 1 });
    await assert.rejects(guarded("https://api.anthropic.com/v1/messages", { method: "POST", body }), named);
    assert.deepEqual(sent, [], "nothing is sent");
  });

  test(`the MCP guard refuses ${c.name} in setTools and keeps no tools`, () => {
    for (const options of [{}, { strict: true }, { pins: { server: "node server.js" } }]) {
      const guard = createMcpGuard(options);
      assert.throws(() => guard.setTools([{ name: "t", inputSchema: budgeted(c.make()) }]), (e) => {
        assert.ok(e instanceof TypeError, String(e));
        assert.match(e.message, /^setTools\(\): tools\[0\] \("t"\) inputSchema: the schema /);
        assert.match(e.message, c.says);
        return true;
      });
      assert.equal(guard.toolsKnown, false);
    }
  });
}

test("a schema that shares sub-objects within measure works everywhere, like its written-out copy", async () => {
  const address = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
  const shared = { type: "object", properties: { home: address, work: address } };
  const copy = JSON.parse(JSON.stringify(shared));
  const call = { name: "t", arguments: '{"home":{},"work":{"city":1}}' };
  const verdict = createValidator(toolsOf(shared)).validate([call]);
  assert.deepEqual(verdict, createValidator(toolsOf(copy)).validate([call]));
  assert.deepEqual(verdict.calls[0].findings.map((f) => f.path), ["/home/city", "/work/city"]);
  assert.deepEqual((await validateToolCalls([call], { tools: toolsOf(shared) })).allowed, false);
  assert.deepEqual(lintTools(toolsOf(shared)), lintTools(toolsOf(copy)));
  const guard = createMcpGuard({ strict: true, pins: { server: "node server.js" } });
  assert.deepEqual(guard.setTools([{ name: "t", inputSchema: shared }]).unchecked, []);
});

test("a DAG of 15 levels x 2 references (98 302 objects written out, just under the bound) is within measure", () => {
  let s: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 15; i++) s = { type: "object", properties: { a: s, b: s } };
  const check = compileSchema(budgeted(s, 10_000_000));
  assert.deepEqual(check({ a: { b: {} } }), []);
  assert.equal(check({ a: { b: { a: 1 } } })[0].path, "/a/b/a");
  const over = { type: "object", properties: { a: s, b: s } }; // 196 606 written out
  assert.throws(
    () => compileSchema(over),
    (e) => e instanceof SchemaError && /\/properties alone holds 196605\b/.test(e.message),
  );
});

test("a chain 100 000 levels deep gets an error that says so from every entry point, never a stack overflow", async () => {
  const chain = deepChain();
  const deep = (e: unknown) => {
    assert.ok(e instanceof Error && !(e instanceof RangeError), String(e));
    assert.match(e.message, /nests too deeply/);
    return true;
  };
  assert.throws(() => compileSchema(chain), deep);
  assert.throws(() => createValidator(toolsOf(chain)), deep);
  await assert.rejects(validateToolCalls([{ name: "t", arguments: "{}" }], { tools: toolsOf(chain) }), deep);
  assert.match(lintTools(toolsOf(chain)).map((i) => i.message).join("\n"), /nests too deeply/);
  for (const options of [{}, { strict: true }]) {
    const summary = createMcpGuard(options).setTools([{ name: "t", inputSchema: chain }]);
    assert.match(summary.unchecked[0].error, /nests too deeply/);
  }
  const pinning = createMcpGuard({ pins: { server: "node server.js" } });
  assert.throws(() => pinning.setTools([{ name: "t", inputSchema: chain }]), (e) => {
    deep(e);
    assert.match((e as Error).message, /^tool "t": its definition nests too deeply to pin/);
    return true;
  });
});

test("a BigInt in a schema built in code is a SchemaError that says what to write, from every entry point", async () => {
  // (compiled, `const: 5n` told the model "must be exactly 5n", while the tools could not be sent as JSON)
  for (
    const [sub, at, instead] of [
      [{ const: 5n }, "/properties/q/const", /write the number 5 instead/],
      [{ enum: [1, 5n] }, "/properties/q/enum/1", /write the number 5 instead/],
      [{ type: "integer", maximum: 2n ** 60n }, "/properties/q/maximum", /the digits as a string/],
      [
        { type: "string", "x-note": { since: 3n } },
        "/properties/q/x-note/since",
        /write the number 3 instead/,
      ],
    ] as const
  ) {
    const schema = { type: "object", properties: { q: sub } };
    const said = (e: unknown) => {
      assert.ok(e instanceof SchemaError, String(e));
      assert.equal(e.pointer, at);
      assert.match(e.message, new RegExp(`holds a BigInt at ${at}.*JSON cannot write`));
      assert.match(e.message, instead);
      return true;
    };
    assert.throws(() => compileSchema(schema), said);
    assert.throws(() => createValidator(toolsOf(schema)), said);
    await assert.rejects(
      validateToolCalls([{ name: "t", arguments: "{}" }], { tools: toolsOf(schema) }),
      said,
    );
    assert.throws(() => validate("t", schema, { q: 5 }), said); // (a bad schema is thrown at once)
    assert.throws(() => vet({ name: "t", schema, fn: () => 1 }), said);
    const tool = { type: "function", function: { name: "t", parameters: schema } };
    const response = {
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: '{"q":5}' } }],
        },
      }],
    };
    await assert.rejects(gateCompletion({ model: "m", messages: [], tools: [tool] }, response), said);
    await assert.rejects(gateCompletion({ model: "m", messages: [] }, response, { tools: [tool] }), said);
    assert.throws(() => createMcpGuard({}).setTools([{ name: "t", inputSchema: schema }]), said);
    assert.match(lintTools(toolsOf(schema)).map((i) => i.message).join("\n"), /holds a BigInt/);
  }
});

/**
 * 120 tools, each of whose 20 parameters is one shared address object (TypeBox-style reuse): each tool's
 * schema holds about 1 000 objects written out, the list about 122 000, past the bound of one schema. Each
 * tool's root is behind a proxy that counts its reads.
 */
function sharingTools(): { tools: unknown[]; reads: () => number } {
  let count = 0;
  let address: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 48; i++) address = { type: "object", properties: { line: address } };
  const tools = Array.from({ length: 120 }, (_, i) => {
    const properties: Record<string, unknown> = {};
    for (let p = 0; p < 20; p++) properties[`p${p}`] = address;
    const parameters = new Proxy({ type: "object", properties }, {
      get(target, key, receiver) {
        count++;
        return Reflect.get(target, key, receiver);
      },
    });
    return { type: "function", function: { name: `t${i}`, parameters } };
  });
  return { tools, reads: () => count };
}

test("a tool list whose schemas are each within measure is compiled once, however many objects all of them share", async () => {
  const call = { id: "c", type: "function", function: { name: "t7", arguments: '{"p1":{"line":{}}}' } };
  // validateToolCalls: the second call with the same list reads each schema root's few keys to write it out
  // (the check that the list is unchanged), not the hundred a compile reads
  const listed = sharingTools();
  assert.equal((await validateToolCalls([call], { tools: listed.tools })).allowed, true);
  let before = listed.reads();
  assert.equal((await validateToolCalls([call], { tools: listed.tools })).allowed, true);
  assert.ok(listed.reads() - before <= 8 * listed.tools.length, `${listed.reads() - before} reads`);
  // the gate, with the request built in code: the second request is judged by the validator compiled first
  const gated = sharingTools();
  const response = {
    id: "x",
    object: "chat.completion",
    choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", tool_calls: [call] } }],
  };
  const request = { model: "m", messages: [], tools: gated.tools };
  assert.equal((await gateCompletion(request, response)).verdict.allowed, true);
  before = gated.reads();
  assert.equal((await gateCompletion(request, response)).verdict.allowed, true);
  assert.ok(gated.reads() - before <= 8 * gated.tools.length, `${gated.reads() - before} reads`);
});

test("a sparse array in a schema built in code is read index by index, with no list of its indices made", () => {
  // 3 million slots, one filled: JSON.stringify writes 2 999 999 nulls and one string. The walk that tells
  // objects apart made a list of every index as a string first (about 100 MB here; a length of 2^32 - 1 ran
  // the heap out). The last slot's getter sees the heap while the walk is on the array.
  const slots = 3_000_000;
  const examples: unknown[] = [];
  const heap = () => process.memoryUsage().heapUsed;
  let base = 0;
  let grew = 0;
  Object.defineProperty(examples, slots - 1, {
    enumerable: true,
    get() {
      grew = Math.max(grew, heap() - base);
      return "last";
    },
  });
  // 600 levels: past the counting pass's reach, so the walk that tells objects apart reads the array
  let schema: Record<string, unknown> = { type: "string", examples };
  for (let i = 0; i < 600; i++) schema = { type: "object", properties: { a: schema } };
  base = heap();
  const check = compileSchema(schema);
  assert.ok(grew < 30e6, `the heap grew by ${(grew / 1e6).toFixed(0)} MB during the walk`);
  assert.deepEqual(check({ a: {} }), []);
});

test("a sparse array inside a tool's schema costs what it holds when the tool is compiled, not its length", () => {
  // The Gemini type lowering (`map`) and the walk for declared strings (`for...of`) asked for every index.
  let reads = 0;
  const sparse: unknown[] = [];
  sparse.length = 2_000_000;
  sparse[3] = { type: "STRING", enum: ["x"] };
  const counting = new Proxy(sparse, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  const validator = createValidator([{ name: "t", parameters: { type: "object", "x-list": counting } }]);
  assert.equal(validator.validate([{ name: "t", arguments: {} }]).allowed, true);
  assert.ok(reads < 100, `${reads} elements read`);
  const huge: unknown[] = [];
  huge.length = 2 ** 32 - 1;
  huge[7] = "x";
  assert.equal(
    createValidator([{ name: "t", parameters: { type: "object", "x-list": huge } }]).tools.length,
    1,
  );
});

test("lists of length 2^32-1 in a tool's schema built in code cost what they hold when compiled and linted", () => {
  // The compiler read every slot of enum, type, required, prefixItems, tuple items, anyOf, allOf, oneOf and
  // dependentRequired lists (minutes each; the lint's copies of the schema as long again under Bun). A hole
  // is the null JSON sends: a member of an enum, no type, name or schema. In a child, which a hang would not
  // outlast.
  const script = fileURLToPath(new URL("./_sparse_schema.ts", import.meta.url));
  const args = isDeno ? ["run", "-A", script] : [script];
  const child = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 120_000 });
  assert.equal(child.status, 0, child.stderr.slice(-2000));
  const got: Record<string, { compiled: string; lint: string[] }> = JSON.parse(child.stdout);
  const notSchema = (k: string) => ({
    compiled:
      `tool "t": the schema at /properties/q/${k}/1 must be an object or a boolean (keyword "", schema ` +
      `pointer "/properties/q/${k}/1")`,
    lint: [`invalid_schema /properties/q/${k}/1`],
  });
  assert.deepEqual(got, {
    enum: { compiled: ' |  | "/q" must be one of: "a", null, "b".', lint: [] },
    type: {
      compiled: 'tool "t": "type" at /properties/q/type must name at least one type, each once; got ' +
        '["string",null,null,null,null,null,null,null,null,null,nu... (keyword "type", schema pointer ' +
        '"/properties/q/type")',
      lint: ["invalid_schema /properties/q/type"],
    },
    prefixItems: notSchema("prefixItems"),
    items: notSchema("items"),
    anyOf: notSchema("anyOf"),
    allOf: notSchema("allOf"),
    oneOf: notSchema("oneOf"),
    required: {
      compiled:
        'tool "t": "required" at /properties/q/required must be an array of property names (keyword ' +
        '"required", schema pointer "/properties/q/required")',
      lint: ["required_not_in_properties /properties/q/required"],
    },
    dependentRequired: {
      compiled: 'tool "t": "dependentRequired" at /properties/q/dependentRequired must be an object of ' +
        'property-name arrays (keyword "dependentRequired", schema pointer "/properties/q/dependentRequired")',
      lint: ["invalid_schema /properties/q/dependentRequired"],
    },
  });
});
