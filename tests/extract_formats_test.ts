import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CALL_START_MARKERS,
  callMayStart,
  type ExtractedToolCall,
  extractToolCalls,
  extractToolCallsDetailed,
} from "../extract.ts";
import { MARKERS, READERS, readersFor } from "../_extract/registry.ts";
import { countingTextWork } from "./_counting.ts";

/** Name and arguments of each call: what a caller acts on. */
const got = (text: string, tools?: unknown[]) =>
  extractToolCalls(text, tools ? { tools } : {}).map((c) => ({ name: c.name, arguments: c.arguments }));
const formats = (text: string) => extractToolCalls(text).map((c) => c.format);

function assertSpans(text: string, calls: ExtractedToolCall[]): void {
  for (const c of calls) {
    assert.ok(c.name !== "", "a call always has a name");
    assert.ok(0 <= c.block.start && c.block.start <= c.start && c.start <= c.end && c.end <= c.block.end);
    assert.ok(c.block.end <= text.length);
    assert.equal(text.slice(c.start, c.end), c.raw);
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON behind a marker
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: Granite <|tool_call|> array with prose after it", () => {
  const text = 'Checking.<|tool_call|>[{"name": "lookup", "arguments": {"isbn": "978-3"}}] One moment.';
  assert.deepEqual(got(text), [{ name: "lookup", arguments: { isbn: "978-3" } }]);
  assert.deepEqual(formats(text), ["granite"]);
  const [c] = extractToolCalls(text);
  assert.equal(text.slice(c.block.end), " One moment.");
});

test("extractToolCalls: Granite 3.1 <tool_call> array without a closing tag is not flagged", () => {
  const [c] = extractToolCalls('<tool_call>[{"name": "ping", "arguments": {}}]');
  assert.equal(c.name, "ping");
  assert.equal(c.error, undefined);
});

test("extractToolCalls: Phi-4 functools[…] with two calls, and prose mentioning functools is not a call", () => {
  const text = 'functools[{"name": "a", "arguments": {"n": 1}}, {"name": "b", "arguments": {}}]';
  assert.deepEqual(got(text).map((c) => c.name), ["a", "b"]);
  assert.deepEqual(got("Use functools.partial for that, or functools[0] if you must."), []);
});

test("extractToolCalls: Nemotron, Jamba, InternLM, GigaChat and Command R7B tags", () => {
  assert.deepEqual(got('<TOOLCALL>[{"name": "n1", "arguments": {"q": 1}}]</TOOLCALL>'), [
    { name: "n1", arguments: { q: 1 } },
  ]);
  assert.deepEqual(got('ok <tool_calls>[{"name": "j1", "arguments": {"q": 2}}]</tool_calls>'), [
    { name: "j1", arguments: { q: 2 } },
  ]);
  assert.deepEqual(got('<|action_start|><|plugin|>{"name": "i1", "parameters": {"q": 3}}<|action_end|>'), [
    { name: "i1", arguments: { q: 3 } },
  ]);
  assert.deepEqual(got('Sure<|function_call|>{"name": "g1", "arguments": {"q": 4}}'), [
    { name: "g1", arguments: { q: 4 } },
  ]);
  assert.deepEqual(got('function call<|role_sep|>\n{"name": "g2", "arguments": {"q": 5}}'), [
    { name: "g2", arguments: { q: 5 } },
  ]);
  const r7b = '<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "7", ' +
    '"tool_name": "c1", "parameters": {"q": 6}}]<|END_ACTION|>';
  const [c] = extractToolCalls(r7b);
  assert.deepEqual([c.name, c.arguments, c.id], ["c1", { q: 6 }, "7"]);
});

test("extractToolCalls: MiniMax-M1 objects one per line inside <tool_calls>", () => {
  const text =
    '<tool_calls>\n{"name": "x", "arguments": {"a": 1}}\n{"name": "y", "arguments": {"b": 2}}\n</tool_calls>';
  assert.deepEqual(got(text), [{ name: "x", arguments: { a: 1 } }, { name: "y", arguments: { b: 2 } }]);
});

test("extractToolCalls: Apertus {NAME: args} elements", () => {
  const text = '<|tools_prefix|>[{"alpha": {"k": "v"}}, {"beta": {}}]<|tools_suffix|>';
  assert.deepEqual(got(text), [{ name: "alpha", arguments: { k: "v" } }, { name: "beta", arguments: {} }]);
});

test("extractToolCalls: old Hermes tags hold calls only when the JSON is call-shaped", () => {
  assert.deepEqual(got('<tools>{"name": "t", "arguments": {"z": 0}}</tools>'), [{
    name: "t",
    arguments: { z: 0 },
  }]);
  assert.deepEqual(got("<response>All done, nothing to call.</response>"), []);
  assert.deepEqual(got('<json>{"city": "Rome"}</json>'), []);
  assert.deepEqual(got('<function name="fx">\n{"k": 2}\n</function>'), [{ name: "fx", arguments: { k: 2 } }]);
});

test("extractToolCalls: a doubled brace around a Hermes call is read as the call inside", () => {
  assert.deepEqual(got('<tool_call>{{"name": "dbl", "arguments": {"v": 1}}}</tool_call>'), [
    { name: "dbl", arguments: { v: 1 } },
  ]);
});

test("extractToolCalls: raw line breaks inside JSON strings are read, as json.loads(strict=False) does", () => {
  const text = '<tool_call>{"name": "write", "arguments": {"body": "line 1\nline 2"}}</tool_call>';
  assert.deepEqual(got(text), [{ name: "write", arguments: { body: "line 1\nline 2" } }]);
});

test("extractToolCalls: JSON written Python-style (single quotes, True/None, trailing commas) is read", () => {
  assert.deepEqual(got("<tool_call>{'name': 'py', 'arguments': {'a': True, 'b': None,},}</tool_call>"), [
    { name: "py", arguments: { a: true, b: null } },
  ]);
  assert.deepEqual(got('<tool_call>{"name": "tc", "arguments": {"a": 1,}}</tool_call>'), [
    { name: "tc", arguments: { a: 1 } },
  ]);
});

test("extractToolCalls: broken JSON after a closed strong tag is a named call with an error, never nameless", () => {
  const named = extractToolCallsDetailed('<TOOLCALL>{"name": "fix", "arguments": {oops}</TOOLCALL>');
  assert.equal(named.calls[0].name, "fix");
  assert.match(named.calls[0].error ?? "", /not valid JSON/);
  const nameless = extractToolCallsDetailed("<TOOLCALL>{oops: 1}</TOOLCALL>");
  assert.deepEqual(nameless.calls, []);
  assert.equal(nameless.findings[0].code, "unreadable_call");
  assert.equal(nameless.findings[0].format, "nemotron");
});

test("extractToolCalls: a cut-off Hermes object (unclosed tag, unclosed JSON) is a finding, not a call", () => {
  const r = extractToolCallsDetailed('<tool_call>\n{"name": "half", "arguments": {"a": 1}');
  assert.deepEqual(r.calls, []);
  assert.deepEqual(r.findings.map((f) => [f.code, f.format, f.offset]), [["unreadable_call", "hermes", 0]]);
});

test("extractToolCalls: a JSON object without a name is never a call", () => {
  const r = extractToolCallsDetailed('<tool_call>{"arguments": {"a": 1}}</tool_call>');
  assert.deepEqual(r.calls, []);
  assert.equal(r.findings[0].code, "unreadable_call");
});

// ---------------------------------------------------------------------------------------------------------
// Bare and inline JSON
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: Llama 3 JSON calls separated by ';' with prose after them", () => {
  const text = '{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {"y": 2}} and that is all';
  assert.deepEqual(got(text), [{ name: "a", arguments: { x: 1 } }, { name: "b", arguments: { y: 2 } }]);
});

test("extractToolCalls: a call quoted in prose counts only with call keys alone", () => {
  assert.deepEqual(got('Calling now: {"name": "find", "arguments": {"q": "owls"}} — done.'), [
    { name: "find", arguments: { q: "owls" } },
  ]);
  assert.deepEqual(got('The record is {"name": "Ada", "arguments": {}, "born": 1815}.'), []);
});

test("extractToolCalls: a message that opens with a JSON answer holds no calls later on", () => {
  assert.deepEqual(got('{"result": 3} and then {"name": "f", "arguments": {}}'), []);
  assert.deepEqual(got('[1, 2, 3] {"name": "f", "arguments": {}}'), []);
});

test("extractToolCalls: the generic tool_calls wrapper, and a JSON answer after reasoning", () => {
  assert.deepEqual(got('{"tool_calls": [{"name": "w", "arguments": {"u": 1}}]}'), [
    { name: "w", arguments: { u: 1 } },
  ]);
  assert.deepEqual(got('{"tool_call": {"name": "w2", "arguments": {}}}'), [{ name: "w2", arguments: {} }]);
  assert.deepEqual(got('Thinking it over</think>\n{"total": 9}'), []);
});

test("extractToolCalls: with tools, a bare JSON call must name a declared tool; a tagged one need not", () => {
  const tools = [{ type: "function", function: { name: "known", parameters: { type: "object" } } }];
  assert.deepEqual(got('{"name": "other", "arguments": {}}', tools), []);
  assert.deepEqual(got('{"name": "known", "arguments": {}}', tools), [{ name: "known", arguments: {} }]);
  assert.deepEqual(got('<tool_call>{"name": "other", "arguments": {}}</tool_call>', tools), [
    { name: "other", arguments: {} },
  ]);
  const r = extractToolCallsDetailed('{"name": "other", "arguments": {}}', { tools });
  assert.equal(r.findings[0].code, "undeclared_bare_call");
});

test("extractToolCalls: fences: ```json calls are read, other languages are code", () => {
  assert.deepEqual(got('Action:\n```json\n[{"tool_name": "r", "parameters": {"k": 1}}]\n```'), [
    { name: "r", arguments: { k: 1 } },
  ]);
  assert.deepEqual(got('```python\n[get_weather(city="x")]\n```'), []);
  assert.deepEqual(got('```python\nprint({"name": "f", "arguments": {}})\n```'), []);
  assert.deepEqual(got('```xml\n<tool_call>{"name": "inxml", "arguments": {}}</tool_call>\n```'), [
    { name: "inxml", arguments: {} },
  ]);
});

// ---------------------------------------------------------------------------------------------------------
// A name, then JSON
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: DeepSeek V3.1 name<sep>JSON and R1 type<sep>name + fenced JSON, several per section", () => {
  const v31 = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>first<｜tool▁sep｜>{"n": 1}<｜tool▁call▁end｜>' +
    "<｜tool▁call▁begin｜>second<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  assert.deepEqual(got(v31), [{ name: "first", arguments: { n: 1 } }, { name: "second", arguments: {} }]);
  const r1 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>lookup\n```json\n" +
    '{"term": "x"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
  assert.deepEqual(got(r1), [{ name: "lookup", arguments: { term: "x" } }]);
});

test("extractToolCalls: DeepSeek section tokens spelled with underscores or spaces, and a call with no section", () => {
  const underscores =
    '<｜tool_calls_begin｜><｜tool_call_begin｜>u<｜tool_sep｜>{"a": 1}<｜tool_call_end｜><｜tool_calls_end｜>';
  assert.deepEqual(got(underscores), [{ name: "u", arguments: { a: 1 } }]);
  const lone = 'Sure.<｜tool▁call▁begin｜>solo<｜tool▁sep｜>{"b": 2}<｜tool▁call▁end｜> done';
  assert.deepEqual(got(lone), [{ name: "solo", arguments: { b: 2 } }]);
});

test("extractToolCalls: Kimi K2 ids and names, with spaces around the tokens", () => {
  const text =
    "<|tool_calls_section_begin|> <|tool_call_begin|> functions.search:3 <|tool_call_argument_begin|> " +
    '{"q": "k2"} <|tool_call_end|> <|tool_calls_section_end|>';
  const [c] = extractToolCalls(text);
  assert.deepEqual([c.name, c.id, c.arguments, c.format], [
    "search",
    "functions.search:3",
    { q: "k2" },
    "kimi_k2",
  ]);
});

test("extractToolCalls: Functionary v3.1 <function=NAME>{…} is told apart from Qwen3-Coder XML", () => {
  assert.deepEqual(formats('<function=calc>{"expr": "1+1"}</function>'), ["functionary"]);
  assert.deepEqual(formats("<function=calc>\n<parameter=expr>\n1+1\n</parameter>\n</function>"), [
    "qwen_xml",
  ]);
  assert.deepEqual(got('<function=calc>{"expr": "1+1"}</function>'), [{
    name: "calc",
    arguments: { expr: "1+1" },
  }]);
});

test("extractToolCalls: Functionary v3.2 recipients: the first from the prompt, then >>>; 'all' is prose", () => {
  const text = 'lookup\n{"id": 4}>>>store\n{"id": 5}';
  assert.deepEqual(got(text), [{ name: "lookup", arguments: { id: 4 } }, {
    name: "store",
    arguments: { id: 5 },
  }]);
  assert.deepEqual(got("all\nHere is what I found."), []);
  assert.deepEqual(got('all\nLet me look that up.>>>lookup\n{"id": 6}'), [{
    name: "lookup",
    arguments: { id: 6 },
  }]);
  assert.deepEqual(got(">>> python manage.py migrate"), []);
});

test("extractToolCalls: Mistral v11 with [CALL_ID], several calls, and NAME{…} without [ARGS]", () => {
  const text = '[TOOL_CALLS]alpha[CALL_ID]a1b2c3d4e[ARGS]{"x": 1}[TOOL_CALLS]beta[ARGS]{"y": [1, 2]}';
  const calls = extractToolCalls(text);
  assert.deepEqual(calls.map((c) => [c.name, c.id, c.arguments]), [
    ["alpha", "a1b2c3d4e", { x: 1 }],
    ["beta", undefined, { y: [1, 2] }],
  ]);
  assert.deepEqual(got('[TOOL_CALLS]gamma{"z": true}'), [{ name: "gamma", arguments: { z: true } }]);
});

test("extractToolCalls: Mistral junk before the JSON array is skipped; a closing [/TOOL_CALLS] is consumed", () => {
  const text = '[TOOL_CALLS] here you go: [{"name": "m", "arguments": {}}][/TOOL_CALLS] bye';
  const [c] = extractToolCalls(text);
  assert.equal(c.name, "m");
  assert.equal(text.slice(c.block.end), " bye");
});

test("extractToolCalls: harmony headers: recipient before or after the channel, constrain, built-in names", () => {
  const a =
    '<|start|>assistant<|channel|>commentary to=functions.weather <|constrain|>json<|message|>{"c": "Oslo"}<|call|>';
  assert.deepEqual(got(a), [{ name: "weather", arguments: { c: "Oslo" } }]);
  const b = '<|start|>assistant to=browser.search<|channel|>commentary json<|message|>{"query": "x"}<|call|>';
  assert.deepEqual(got(b), [{ name: "browser.search", arguments: { query: "x" } }]);
  assert.deepEqual(got("Set the timeout to=30 seconds."), []);
});

test("extractToolCalls: a harmony message addressed to the assistant (a tool's reply) is not a call", () => {
  assert.deepEqual(
    got('<|start|>functions.f to=assistant<|channel|>commentary<|message|>{"t": 1}<|end|>'),
    [],
  );
});

test("extractToolCalls: harmony analysis without a recipient is reasoning; a call quoted there is not a call", () => {
  const text = '<|channel|>analysis<|message|>maybe to=functions.nope<|message|>{"a": 1}<|end|>' +
    "<|start|>assistant<|channel|>final<|message|>No call needed.<|return|>";
  assert.deepEqual(got(text), []);
});

// ---------------------------------------------------------------------------------------------------------
// XML
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: Qwen3-Coder XML keeps indentation, drops one framing line break, reads a dropped </parameter>", () => {
  const text = "<tool_call>\n<function=write>\n<parameter=path>\nsrc/a.py\n<parameter=body>\n\n  x = 1\n\n" +
    "</parameter>\n</function>\n</tool_call>";
  assert.deepEqual(got(text), [{ name: "write", arguments: { path: "src/a.py", body: "\n  x = 1\n" } }]);
});

test("extractToolCalls: Qwen3-Coder values without tools: JSON literals read as written, other text stays text", () => {
  const text =
    "<tool_call>\n<function=f>\n<parameter=n>\n-2.5\n</parameter>\n<parameter=b>\nfalse\n</parameter>\n" +
    "<parameter=big>\n123456789012345678901\n</parameter>\n<parameter=d>\n2026-01-02\n</parameter>\n" +
    "<parameter=py>\nTrue\n</parameter>\n</function>\n</tool_call>";
  assert.deepEqual(got(text)[0].arguments, {
    n: -2.5,
    b: false,
    big: "123456789012345678901",
    d: "2026-01-02",
    py: "True",
  });
});

test("extractToolCalls: XML values are typed by the declared schema in any provider shape", () => {
  const text =
    "<tool_call>\n<function=f>\n<parameter=id>\n007\n</parameter>\n<parameter=n>\n42\n</parameter>\n" +
    "<parameter=flag>\nTrue\n</parameter>\n<parameter=tags>\n['a', 'b']\n</parameter>\n</function>\n</tool_call>";
  const props = {
    id: { type: "string" },
    n: { type: "integer" },
    flag: { type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
  };
  const want = { id: "007", n: 42, flag: true, tags: ["a", "b"] };
  const shapes = [
    [{ type: "function", function: { name: "f", parameters: { type: "object", properties: props } } }],
    [{ name: "f", input_schema: { type: "object", properties: props } }],
    [{ name: "f", inputSchema: { type: "object", properties: props } }],
    [{
      functionDeclarations: [{
        name: "f",
        parameters: {
          type: "OBJECT",
          properties: {
            id: { type: "STRING" },
            n: { type: "INTEGER" },
            flag: { type: "BOOLEAN" },
            tags: { type: "ARRAY" },
          },
        },
      }],
    }],
  ];
  for (const tools of shapes) assert.deepEqual(got(text, tools)[0].arguments, want);
});

test("extractToolCalls: typing by schema follows anyOf, nullable and local $ref, and ignores unreadable declarations", () => {
  const text =
    "<tool_call>\n<function=g>\n<parameter=a>\nnull\n</parameter>\n<parameter=b>\n12\n</parameter>\n" +
    "</function>\n</tool_call>";
  const tools = [
    "not a tool",
    {
      name: "g",
      parameters: {
        type: "object",
        $defs: { code: { type: "string" } },
        properties: { a: { anyOf: [{ type: "string" }, { type: "null" }] }, b: { $ref: "#/$defs/code" } },
      },
    },
  ];
  assert.deepEqual(got(text, tools)[0].arguments, { a: null, b: "12" });
});

test("extractToolCalls: Qwen3-Coder and Seed-OSS: several functions, seed tags, a missing </function> is flagged", () => {
  const seed = "<seed:tool_call>\n<function=s>\n<parameter=k>v</parameter>\n</function>\n</seed:tool_call>";
  assert.deepEqual(got(seed), [{ name: "s", arguments: { k: "v" } }]);
  assert.deepEqual(formats(seed), ["seed_oss"]);
  const cut = extractToolCalls("<tool_call>\n<function=t>\n<parameter=k>\nv\n</parameter>\n</tool_call>");
  assert.equal(cut[0].name, "t");
  assert.deepEqual(cut[0].arguments, { k: "v" });
  assert.match(cut[0].error ?? "", /not closed/);
});

test("extractToolCalls: GLM pairs with JSON values, a call with no arguments, and prose inside the tag", () => {
  const text = '<tool_call>plan\n<arg_key>steps</arg_key>\n<arg_value>["a", "b"]</arg_value>\n' +
    "<arg_key>note</arg_key>\n<arg_value>keep it short</arg_value>\n</tool_call><tool_call>stop</tool_call>";
  assert.deepEqual(got(text), [
    { name: "plan", arguments: { steps: ["a", "b"], note: "keep it short" } },
    { name: "stop", arguments: {} },
  ]);
  assert.deepEqual(formats(text), ["glm", "glm"]);
  assert.deepEqual(got("<tool_call>I cannot call a tool here.</tool_call>"), []);
});

test("extractToolCallsDetailed: a GLM call with no arguments, in the layout of each GLM version", () => {
  const tools = [{ name: "get_time", parameters: { type: "object", properties: {} } }];
  for (
    const text of [
      "<tool_call>get_time</tool_call>", // 4.7
      "<tool_call>get_time\n</tool_call>", // 4.5 and 4.6: the name's line ends
      "<tool_call>get_time\\n</tool_call>", // that line break written as \n
      "Checking the clock.\n<tool_call>get_time\n</tool_call>",
    ]
  ) {
    for (const options of [{}, { tools }]) {
      const r = extractToolCallsDetailed(text, options);
      assert.deepEqual(r.calls.map((c) => [c.name, c.arguments, c.format]), [["get_time", {}, "glm"]], text);
      assert.deepEqual(r.findings, [], text);
      assert.equal(text.slice(r.calls[0].block.start, r.calls[0].block.end), text.slice(text.indexOf("<")));
    }
  }
  // Declared tools decide, as for call-shaped text without a marker: an undeclared name is a finding.
  const r = extractToolCallsDetailed("<tool_call>get_date\n</tool_call>", { tools });
  assert.deepEqual(r.calls, []);
  assert.deepEqual(r.findings.map((f) => [f.code, f.format]), [["undeclared_bare_call", "glm"]]);
  // Several calls, the first without arguments (4.5 layout).
  assert.deepEqual(
    got(
      "<tool_call>get_time\n</tool_call><tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
    ),
    [{ name: "get_time", arguments: {} }, { name: "f", arguments: { a: 1 } }],
  );
});

test("extractToolCalls: MiniMax M2 invokes, several in one block, entity-encoded names", () => {
  const text =
    '<minimax:tool_call>\n<invoke name="a&amp;b">\n<parameter name="q">fish &amp; chips</parameter>\n' +
    '</invoke>\n<invoke name="c">\n<parameter name="n">3</parameter>\n</invoke>\n</minimax:tool_call>';
  assert.deepEqual(got(text), [
    { name: "a&b", arguments: { q: "fish &amp; chips" } },
    { name: "c", arguments: { n: 3 } },
  ]);
});

test("extractToolCalls: MiniMax M3 names arguments by element and writes a separator before every tag", () => {
  const s = "]<]minimax[>[";
  const text =
    `Done.${s}<tool_call>\n${s}<invoke name="find">${s}<q>owl${s}</q>${s}<limit>5${s}</limit>${s}</invoke>\n` +
    `${s}</tool_call>`;
  const [c] = extractToolCalls(text);
  assert.deepEqual([c.name, c.arguments], ["find", { q: "owl", limit: 5 }]);
  assert.equal(text.slice(0, c.block.start), "Done."); // the separator before the tag goes with the call
});

test('extractToolCalls: DSML string="true" keeps text, string="false" reads JSON; GCML defaults to text', () => {
  const d =
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="s" string="true">' +
    '42</｜DSML｜parameter>\n<｜DSML｜parameter name="o" string="false">{"k": [1]}</｜DSML｜parameter>\n' +
    "</｜DSML｜invoke>\n</｜DSML｜function_calls>";
  assert.deepEqual(got(d), [{ name: "f", arguments: { s: "42", o: { k: [1] } } }]);
  const g = '<｜GCML｜tool_calls><｜GCML｜invoke name="h"><｜GCML｜parameter name="n">7</｜GCML｜parameter>' +
    "</｜GCML｜invoke></｜GCML｜tool_calls>";
  assert.deepEqual(got(g), [{ name: "h", arguments: { n: "7" } }]);
});

test("extractToolCalls: Step3 invokes inside DeepSeek-style tokens; Glimmer ATEM after a harmony-like header", () => {
  const step = '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="s3">' +
    '<steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>';
  assert.deepEqual(got(step), [{ name: "s3", arguments: { k: "v" } }]);
  const atem = '<|start|>assistant to=g1<|message|><atem:function_calls><atem:invoke name="g1">' +
    '<atem:parameter name="n">2</atem:parameter></atem:invoke></atem:function_calls><|eom|>';
  assert.deepEqual(got(atem), [{ name: "g1", arguments: { n: 2 } }]);
  assert.deepEqual(formats(atem), ["glimmer"]);
});

test("extractToolCalls: Claude-style <function_calls><invoke> XML", () => {
  const text =
    '<function_calls>\n<invoke name="grep">\n<parameter name="pattern">TODO</parameter>\n</invoke>\n' +
    "</function_calls>";
  assert.deepEqual(got(text), [{ name: "grep", arguments: { pattern: "TODO" } }]);
});

test("extractToolCalls: MiniCPM params, with and without CDATA, inside <arguments>", () => {
  const text =
    '<function name="put"><arguments><param name="n">3</param><param name="s"><![CDATA[ a<b ]]></param>' +
    "</arguments></function>";
  assert.deepEqual(got(text), [{ name: "put", arguments: { n: 3, s: " a<b " } }]);
});

test("extractToolCalls: Kimi K3 typed arguments, the json form, and attribute entities", () => {
  const arg = (k: string, t: string, v: string) =>
    `<|open|>argument key="${k}" type="${t}"<|sep|>${v}<|close|>argument<|sep|>`;
  const text = "<|open|>tools<|sep|>" +
    `<|open|>call tool="k&quot;3" index="1"<|sep|>${arg("s", "string", "12")}${arg("n", "number", "12")}` +
    `${arg("o", "object", '{"a": null}')}<|close|>call<|sep|>` +
    '<|open|>call tool="j" index="2"<|sep|><|open|>json type="object"<|sep|>{"x": 1}<|close|>json<|sep|>' +
    "<|close|>call<|sep|><|close|>tools<|sep|>";
  assert.deepEqual(got(text), [
    { name: 'k"3', arguments: { s: "12", n: 12, o: { a: null } } },
    { name: "j", arguments: { x: 1 } },
  ]);
});

test("extractToolCalls: a value cut off by the end of the text never becomes a call argument", () => {
  // `rm -rf /tmp/build` cut to `rm -rf /` must not run: these are findings, not calls.
  const cut = [
    "<tool_call>\n<function=shell>\n<parameter=cmd>\nrm -rf /",
    "<tool_call>shell\n<arg_key>cmd</arg_key>\n<arg_value>rm -rf /",
    '<minimax:tool_call>\n<invoke name="shell">\n<parameter name="cmd">rm -rf /',
    '<|open|>tools<|sep|><|open|>call tool="shell" index="1"<|sep|><|open|>argument key="cmd" type="string"<|sep|>rm -rf /',
    '<|tool_calls_section_begin|><|tool_call_begin|>functions.shell:0<|tool_call_argument_begin|>{"cmd": "rm -rf /',
    '<|tool_call>call:shell{cmd:<|"|>rm -rf /',
    "[shell(cmd='rm -rf /",
  ];
  for (const text of cut) {
    const r = extractToolCallsDetailed(text);
    assert.deepEqual(r.calls, [], text);
  }
  // Only the outer closing tag missing, every value complete: a call, flagged.
  const outer = extractToolCalls("<tool_call>shell\n<arg_key>cmd</arg_key>\n<arg_value>ls</arg_value>\n");
  assert.deepEqual([outer[0].name, outer[0].arguments], ["shell", { cmd: "ls" }]);
  assert.match(outer[0].error ?? "", /not closed/);
  const qwen = extractToolCalls("<tool_call>\n<function=shell>\n<parameter=cmd>\nls\n</parameter>\n");
  assert.deepEqual([qwen[0].name, qwen[0].arguments], ["shell", { cmd: "ls" }]);
});

// ---------------------------------------------------------------------------------------------------------
// Python and custom literals
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: a bare Python list, told apart from markdown links and bracketed prose", () => {
  assert.deepEqual(got("[fetch(url='https://x.org/a?b=1', retries=-2, opts={'gz': True}), noop()]"), [
    { name: "fetch", arguments: { url: "https://x.org/a?b=1", retries: -2, opts: { gz: true } } },
    { name: "noop", arguments: {} },
  ]);
  assert.deepEqual(got("See [the docs](https://x.org) and [RFC 9110](https://rfc.org)."), []);
  assert.deepEqual(got("[citation needed] [1] [a, b]"), []);
  assert.deepEqual(got("[f(1, 2)]"), []); // positional arguments are not a call
});

test("extractToolCalls: Python strings: escapes, both quotes, triple quotes, brackets inside", () => {
  const text = `[run(code="print(\\"]\\")", alt='it\\'s', doc='''a\nb''', esc="tab\\there")]`;
  assert.deepEqual(got(text), [{
    name: "run",
    arguments: { code: 'print("]")', alt: "it's", doc: "a\nb", esc: "tab\there" },
  }]);
});

test("extractToolCalls: pythonic literals are fitted to the declared schema", () => {
  const tools = [{
    name: "f",
    parameters: { type: "object", properties: { id: { type: "string" }, n: { type: "number" } } },
  }];
  assert.deepEqual(got("[f(id=123, n='4.5')]", tools), [{ name: "f", arguments: { id: "123", n: 4.5 } }]);
  assert.deepEqual(got("[f(id=123, n='4.5')]"), [{ name: "f", arguments: { id: 123, n: "4.5" } }]);
});

test("extractToolCalls: a bare Python list naming an undeclared tool is prose when tools are given", () => {
  const tools = [{ name: "known", parameters: { type: "object" } }];
  assert.deepEqual(got("[unknown(a=1)]", tools), []);
  assert.deepEqual(got("[known(a=1), unknown(b=2)]", tools), []);
  assert.deepEqual(got("[known(a=1)]", tools), [{ name: "known", arguments: { a: 1 } }]);
});

test("extractToolCalls: LFM2 (Python or JSON inside), Llama 4 <|python_start|>, OLMo 3 one call per line", () => {
  assert.deepEqual(got("<|tool_call_start|>[a(x=1), b(y='z')]<|tool_call_end|>"), [
    { name: "a", arguments: { x: 1 } },
    { name: "b", arguments: { y: "z" } },
  ]);
  assert.deepEqual(got('<|tool_call_start|>[{"name": "j", "arguments": {"k": 1}}]<|tool_call_end|>'), [
    { name: "j", arguments: { k: 1 } },
  ]);
  assert.deepEqual(got("<|python_start|>[p(q=None)]<|python_end|>"), [{ name: "p", arguments: { q: null } }]);
  assert.deepEqual(got('<function_calls>first(a="1")\nsecond(b=[1, 2])</function_calls>'), [
    { name: "first", arguments: { a: "1" } },
    { name: "second", arguments: { b: [1, 2] } },
  ]);
});

test("extractToolCalls: Gemma 4 nested objects, negative numbers, bare words, delimiters with commas inside", () => {
  const text = '<|tool_call>call:book{when:{day:<|"|>Mon, 3pm<|"|>,n:-1},unit:celsius,ok:true}<tool_call|>';
  assert.deepEqual(got(text), [{
    name: "book",
    arguments: { when: { day: "Mon, 3pm", n: -1 }, unit: "celsius", ok: true },
  }]);
});

test("extractToolCalls: FunctionGemma <escape> strings, several calls in one block", () => {
  const text = "<start_function_call>call:a{s:<escape>x, y<escape>}call:b{}<end_function_call>";
  assert.deepEqual(got(text), [{ name: "a", arguments: { s: "x, y" } }, { name: "b", arguments: {} }]);
});

test("extractToolCalls: Llama built-ins keep their names; unreadable <|python_tag|> text is a finding", () => {
  assert.deepEqual(got('<|python_tag|>wolfram_alpha.call(query="2+2")<|eom_id|>'), [
    { name: "wolfram_alpha", arguments: { query: "2+2" } },
  ]);
  const r = extractToolCallsDetailed("<|python_tag|>import os; print(os.getcwd())");
  assert.deepEqual(r.calls, []);
  assert.equal(r.findings[0].format, "llama_json");
});

// ---------------------------------------------------------------------------------------------------------
// Reasoning
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: a call quoted in closed reasoning is not a call; the one after it is", () => {
  const quoted = '<tool_call>{"name": "no", "arguments": {}}</tool_call>';
  const real = '<tool_call>{"name": "yes", "arguments": {}}</tool_call>';
  for (
    const [open, close] of [["<think>", "</think>"], ["[THINK]", "[/THINK]"], [
      "<seed:think>",
      "</seed:think>",
    ], [
      "<|START_THINKING|>",
      "<|END_THINKING|>",
    ], ["<|channel>thought\n", "<channel|>"]]
  ) {
    assert.deepEqual(got(`${open}I could write ${quoted}${close}${real}`).map((c) => c.name), ["yes"], open);
  }
});

test("extractToolCalls: a closing tag alone ends reasoning that the prompt opened", () => {
  const text =
    'Try <tool_call>{"name": "no", "arguments": {}}</tool_call>? No.</think><tool_call>{"name": "yes", "arguments": {}}</tool_call>';
  assert.deepEqual(got(text).map((c) => c.name), ["yes"]);
});

test("extractToolCallsDetailed: a call inside reasoning that never closes is returned, with a finding", () => {
  const r = extractToolCallsDetailed(
    '<think>I will call <tool_call>{"name": "maybe", "arguments": {}}</tool_call>',
  );
  assert.deepEqual(r.calls.map((c) => c.name), ["maybe"]);
  assert.equal(r.findings[0].code, "call_in_unclosed_reasoning");
});

// ---------------------------------------------------------------------------------------------------------
// Registry, streaming, robustness
// ---------------------------------------------------------------------------------------------------------

test("readersFor: the order of detection where openings are shared is explicit", () => {
  const names = (opening: string) => readersFor(opening).map((r) => r.name);
  assert.deepEqual(names("<tool_call>"), ["qwen_xml", "glm", "invoke", "hermes"]);
  assert.deepEqual(names("<function="), ["qwen_xml", "functionary"]);
  assert.deepEqual(names("<function_calls>"), ["invoke", "olmo3"]);
  assert.deepEqual(names("[get_weather("), ["pythonic"]);
  assert.deepEqual(names('{"name":'), ["inline_json"]);
});

test("CALL_START_MARKERS: lists the openings of every family, longest first", () => {
  for (
    const m of [
      "<tool_call>",
      "[TOOL_CALLS]",
      "<|python_tag|>",
      "<｜tool▁calls▁begin｜>",
      "<|tool_call>",
      "to=",
    ]
  ) {
    assert.ok(CALL_START_MARKERS.includes(m), m);
  }
  for (let i = 1; i < CALL_START_MARKERS.length; i++) {
    assert.ok(CALL_START_MARKERS[i - 1].length >= CALL_START_MARKERS[i].length);
  }
});

test("CALL_START_MARKERS: the written-out list is every reader's markers, each once, longest first", () => {
  // The list is a literal so that nothing is sorted at load; this keeps it from drifting from the readers.
  const collected = [...new Set(READERS.flatMap((r) => r.markers))].sort(
    (a, b) => b.length - a.length || (a < b ? -1 : 1),
  );
  assert.deepEqual(MARKERS, collected);
  assert.equal(CALL_START_MARKERS, MARKERS);
});

test("callMayStart: holds from a call, from cut-off markup, from a partial marker; releases prose and code", () => {
  assert.equal(callMayStart("Hello there."), -1);
  assert.equal(callMayStart("Hi <tool_call>"), 3);
  assert.equal(callMayStart('Hi <tool_call>{"name": "a", "argu'), 3);
  assert.equal(callMayStart('Hi <tool_call>{"name": "a", "arguments": {}}</tool_call> bye'), 3);
  assert.equal(callMayStart("Hi [TOOL_CA"), 3);
  assert.equal(callMayStart("Look at [get_wea"), 8);
  // A marker in prose is released once enough text follows it to be sure (a few dozen characters).
  assert.equal(
    callMayStart("Use <tool_call> tags for that, and put the JSON object on one line so it parses."),
    -1,
  );
  assert.equal(callMayStart("```python\nx = [f(a=1)]\n```\nDone."), -1);
  assert.equal(callMayStart('{"answer": 4'), 0); // a bare JSON answer could still be a call
  assert.equal(callMayStart('{"answer": 4} fine'), -1);
  assert.equal(callMayStart("abc", 5), -1);
  const two = 'A <tool_call>{"name": "a", "arguments": {}}</tool_call> B <tool_c';
  const afterFirst = two.indexOf(" B");
  assert.equal(callMayStart(two, afterFirst), two.lastIndexOf("<tool_c")); // from: what was released already
});

test("callMayStart: a prefix that grows into a call is held from the marker at every step", () => {
  const full = 'Let me check. <tool_call>{"name": "w", "arguments": {"c": 1}}</tool_call>';
  const at = full.indexOf("<tool_call>");
  for (let n = at + 1; n <= full.length; n++) {
    const hold = callMayStart(full.slice(0, n));
    assert.ok(hold !== -1 && hold <= at, `prefix of ${n}: ${hold}`);
  }
});

test("callMayStart: every prefix of a call in any family is held from the call's markup", () => {
  const s = "]<]minimax[>[";
  const samples = [
    'Ok. <tool_call>{"name": "w", "arguments": {"c": 1}}</tool_call>',
    "Ok. <tool_call>\n<function=w>\n<parameter=c>\n1\n</parameter>\n</function>\n</tool_call>",
    "Ok. <tool_call>w<arg_key>c</arg_key><arg_value>1</arg_value></tool_call>",
    'Ok. [TOOL_CALLS]w[ARGS]{"c": 1}',
    'Ok. [TOOL_CALLS][{"name": "w", "arguments": {"c": 1}}]',
    'Ok. <|channel|>commentary to=functions.w <|constrain|>json<|message|>{"c": 1}<|call|>',
    'Ok. <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>w<｜tool▁sep｜>{"c": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    'Ok. <|tool_calls_section_begin|><|tool_call_begin|>functions.w:0<|tool_call_argument_begin|>{"c": 1}<|tool_call_end|>',
    'Ok. <|tool_call>call:w{c:<|"|>1<|"|>}<tool_call|>',
    "Ok. [w(c=1), v(d='x')] done",
    '{"name": "w", "parameters": {"c": 1}}',
    'Ok. <minimax:tool_call><invoke name="w"><parameter name="c">1</parameter></invoke></minimax:tool_call>',
    `Ok. ${s}<tool_call>${s}<invoke name="w">${s}<c>1${s}</c>${s}</invoke>${s}</tool_call>`,
    "Ok. <|tool_call_start|>[w(c=1)]<|tool_call_end|>",
    'Ok. ```json\n{"name": "w", "arguments": {"c": 1}}\n```',
    'Ok. <|python_tag|>{"name": "w", "parameters": {"c": 1}}',
  ];
  for (const full of samples) {
    const [call] = extractToolCalls(full);
    assert.ok(call, full);
    for (let n = call.block.start + 1; n <= full.length; n++) {
      const hold = callMayStart(full.slice(0, n));
      assert.ok(hold !== -1 && hold <= call.block.start, `${JSON.stringify(full.slice(0, n))}: ${hold}`);
    }
  }
});

test("extractToolCalls: never throws, spans point into the text, no call is nameless (property)", () => {
  const pieces = fc.constantFrom(
    ...CALL_START_MARKERS,
    "</tool_call>",
    "</think>",
    "<think>",
    "[/THINK]",
    "<|message|>",
    "<|call|>",
    "]<]minimax[>[",
    '{"name":"a","arguments":{',
    '"',
    "'",
    "}",
    "]",
    "[",
    "(",
    ")",
    "=",
    ":",
    ",",
    "\n",
    "x",
    "f(",
    "<parameter=p>",
    '<parameter name="p">',
    "<arg_key>k</arg_key>",
    "<arg_value>",
    "call:f{",
    '<|"|>',
  );
  fc.assert(
    fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 24 }), (parts) => {
      const text = parts.join("");
      const r = extractToolCallsDetailed(text);
      assertSpans(text, r.calls);
      for (const f of r.findings) assert.ok(f.offset >= 0 && f.offset <= text.length);
      const hold = callMayStart(text);
      assert.ok(hold === -1 || (hold >= 0 && hold <= text.length));
    }),
    { numRuns: 600 },
  );
});

test(
  "extractToolCalls: every marker repeated 10 000 times is read in linear work",
  { timeout: 120_000 },
  async () => {
    const extra = [
      '{"name":',
      "[a(",
      "[a(x='",
      "<tool_call>{",
      "<tool_call>a<arg_key>",
      "<function=a>",
      "call:",
    ];
    // Characters read and copied count the work without depending on the machine's speed (a timed version
    // could fail on a busy machine): four times the text costs about four times the work, where a reader that
    // reads on to the text's end at each marker costs sixteen times (as without the shared scan budget).
    const workOf = async (m: string, n: number) =>
      (await countingTextWork(() => extractToolCalls(m.repeat(n))))[1];
    for (const m of [...CALL_START_MARKERS, ...extra]) {
      const [small, large] = [await workOf(m, 2_500), await workOf(m, 10_000)];
      assert.ok(small > 0 && large < 8 * small, `${JSON.stringify(m)}: ${small} -> ${large} characters`);
    }
  },
);
