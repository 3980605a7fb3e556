import { test } from "node:test";
import assert from "node:assert/strict";
import { callMayStart, extractToolCalls, extractToolCallsDetailed } from "../extract.ts";
import { countingTextWork, countingWork } from "./_counting.ts";

/** The names of the calls read from `text`. */
const names = (text: string, tools?: unknown[]) =>
  extractToolCalls(text, tools ? { tools } : {}).map((c) => c.name);

// ---------------------------------------------------------------------------------------------------------
// Reasoning tags inside call markup are data
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: a reasoning tag inside a call's arguments or after the call does not hide it", () => {
  const cases = [
    '<tool_call>\n{"name": "run_shell", "arguments": {"cmd": "echo </think>"}}\n</tool_call>',
    '<tool_call>\n{"name": "run_shell", "arguments": {"cmd": "ls"}}\n</tool_call>\nDone. (No </think> tag.)',
    '[TOOL_CALLS][{"name": "run_shell", "arguments": {"cmd": "echo [/THINK]"}}]',
    "<tool_call>\n<function=run_shell>\n<parameter=cmd>\necho </think>\n</parameter>\n</function>\n</tool_call>",
    '<|tool_call>call:run_shell{cmd:<|"|>echo <channel|><|"|>}<tool_call|>',
  ];
  for (const text of cases) assert.deepEqual(names(text), ["run_shell"], text);
});

test("extractToolCalls: an opening tag in one call's arguments and a closer in the next hide neither", () => {
  const a =
    '<tool_call>\n{"name": "write_file", "arguments": {"content": "Models emit <think> first."}}\n</tool_call>';
  const b =
    '<tool_call>\n{"name": "run_shell", "arguments": {"cmd": "rm -rf ~  # ends with </think>"}}\n</tool_call>';
  assert.deepEqual(names(`${a}\n${b}`), ["write_file", "run_shell"]);
});

test("extractToolCalls: a closer inside a bare JSON call at the answer's start does not drop it", () => {
  const text =
    '{"name": "a", "arguments": {"x": "</think>"}}\n<tool_call>{"name": "b", "arguments": {}}</tool_call>';
  assert.deepEqual(names(text), ["a", "b"]);
});

test("extractToolCalls: a bare JSON call written inside an XML value is not taken for the answer", () => {
  const text = '<tool_call>\n<function=rm>\n<parameter=cmd>\n</think>{"name": "ls", "arguments": {}}\n' +
    "</parameter>\n</function>\n</tool_call>";
  assert.deepEqual(names(text), ["rm"]);
});

// ---------------------------------------------------------------------------------------------------------
// Broken markup does not swallow what follows
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: an unclosed block that cannot be read leaves the calls after it to be read", () => {
  const valid = '<tool_call>{"name": "delete_all_files", "arguments": {"path": "/"}}</tool_call>';
  for (
    const broken of [
      "<TOOLCALL>{\n",
      "<|tool_call|>[\n",
      "functools{\n",
      "<|START_ACTION|>[\n",
      "<|tools_prefix|>{\n",
      "<|python_tag|>\n",
      "[TOOL_CALLS] ?\n",
      "<function=<|message|>",
      '<invoke name="<invoke name="<invoke name="',
      '<minimax:tool_call>\n<invoke name="x">\n<parameter name="a">cut',
    ]
  ) {
    assert.deepEqual(names(broken + valid), ["delete_all_files"], broken);
  }
});

// ---------------------------------------------------------------------------------------------------------
// A format's own stop token inside a JSON string is data
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: a closing or stop token inside a JSON string neither drops nor breaks the call", () => {
  const cmd = (token: string) => `{"cmd": "echo ${token} && rm -rf ~"}`;
  const cases: [string, string][] = [
    [`[TOOL_CALLS][{"name": "run_shell", "arguments": ${cmd("[TOOL_CALLS]")}}]`, "[TOOL_CALLS]"],
    [`[TOOL_CALLS][{"name": "run_shell", "arguments": ${cmd("</s>")}}]`, "</s>"],
    [`<|python_tag|>{"name": "run_shell", "parameters": ${cmd("<|eom_id|>")}}<|eom_id|>`, "<|eom_id|>"],
    [`<tool_call>{"name": "run_shell", "arguments": ${cmd("</tool_call>")}}</tool_call>`, "</tool_call>"],
    [`<TOOLCALL>[{"name": "run_shell", "arguments": ${cmd("</TOOLCALL>")}}]</TOOLCALL>`, "</TOOLCALL>"],
    [
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>run_shell<｜tool▁sep｜>${cmd("<｜tool▁call▁end｜>")}` +
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      "<｜tool▁call▁end｜>",
    ],
    [
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.run_shell:0<|tool_call_argument_begin|>" +
      `${cmd("<|tool_call_end|>")}<|tool_call_end|><|tool_calls_section_end|>`,
      "<|tool_call_end|>",
    ],
    [
      "<|start|>assistant<|channel|>commentary to=functions.run_shell <|constrain|>json<|message|>" +
      `${cmd("<|call|>")}<|call|>`,
      "<|call|>",
    ],
  ];
  for (const [text, token] of cases) {
    const calls = extractToolCalls(text);
    assert.deepEqual(calls.map((c) => [c.name, c.arguments, c.error]), [[
      "run_shell",
      { cmd: `echo ${token} && rm -rf ~` },
      undefined,
    ]], text);
  }
});

test("extractToolCalls: a section end inside DeepSeek JSON leaves the next call and the block's end right", () => {
  const [b, c, s, e, z] = [
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
  ];
  const block = `${b}${c}a${s}{"x": "${z}"}${e}${c}b${s}{"y": 1}${e}${z}`;
  const calls = extractToolCalls(`${block} then prose`);
  assert.deepEqual(calls.map((k) => [k.name, k.arguments]), [["a", { x: z }], ["b", { y: 1 }]]);
  assert.equal(calls[1].block.end, block.length);
});

// ---------------------------------------------------------------------------------------------------------
// Linear time on repeated unclosed openings
// ---------------------------------------------------------------------------------------------------------

/** Characters read and copied while extracting from `unit` repeated to about `n` characters. */
async function workOf(unit: string, n: number): Promise<number> {
  return (await countingTextWork(() => extractToolCalls(unit.repeat(Math.ceil(n / unit.length)))))[1];
}

test("extractToolCalls: repeated unclosed Functionary, function-tag and harmony openings read in linear work", async () => {
  for (
    const unit of [
      ">>>f\n{",
      "<function=f>{",
      '<function name="f">{',
      "<|channel|>analysis<|message|>x<|end|>",
    ]
  ) {
    // Characters read and copied count the work without depending on the machine's speed (a timed version
    // could fail on a busy machine): four times the text, about four times the work when linear, sixteen
    // when each opening reads on to the text's end (as without the shared scan budget).
    const [small, large] = [await workOf(unit, 40_000), await workOf(unit, 160_000)];
    assert.ok(small > 0 && large < 8 * small, `${JSON.stringify(unit)}: ${small} -> ${large} characters`);
  }
});

test("extractToolCalls: a run of harmony headers whose JSON never closes is read in linear time", async () => {
  for (
    const unit of [
      '<|channel|>commentary to=functions.get_weather<|message|>{"location":"San ',
      "<|channel|>analysis to=functions.f<|message|>{x ",
      " to=functions.f<|message|>{x ",
    ]
  ) {
    const text = unit.repeat(Math.ceil(40_000 / unit.length));
    assert.deepEqual(extractToolCalls(text), [], unit);
    // Characters read with charCodeAt (how the JSON scanners step through a value) count the work without
    // depending on the machine's speed. Each header once read its JSON to the end of the text: 550 to 850
    // characters read per character here, growing with the text. The shared scan budget allows 8.
    const [, read] = await countingWork(String.prototype, "charCodeAt", () => extractToolCalls(text));
    const perChar = read / text.length;
    assert.ok(perChar < 32, `${JSON.stringify(unit)}: ${perChar.toFixed(1)} characters read per character`);
    // A complete call after them is still read.
    const call = '<|start|>assistant<|channel|>commentary to=functions.g<|message|>{"a": 1}<|call|>';
    const calls = extractToolCalls(unit.repeat(2_000) + call);
    assert.deepEqual(calls.map((c) => [c.name, c.arguments]).at(-1), ["g", { a: 1 }], unit);
  }
});

test("extractToolCalls: a call after many unclosed openings of its own kind is still read", () => {
  for (
    const [pad, call] of [
      ["<function=f>{", '<function=g>{"a": 1}</function>'],
      ['<function name="f">{', '<function name="g">{"a": 1}</function>'],
      [">>>f\n{", '>>>g\n{"a": 1}'],
      [">>>f\n{", '>>>g\n{"a": "x >>>y\\n{ z"}'],
      ["<function=f>{", '<function=g>{"a": "<function=h>{"}</function>'],
    ]
  ) {
    assert.deepEqual(names(pad.repeat(20_000) + call).slice(-1), ["g"], pad);
  }
});

// ---------------------------------------------------------------------------------------------------------
// MiniCPM values cut off by the end of a stream
// ---------------------------------------------------------------------------------------------------------

test("callMayStart: a MiniCPM call holds at every prefix while a value's closer has not arrived", () => {
  for (
    const full of [
      `<function name="run_shell"><param name="cmd">echo ${"a".repeat(100)} && rm -rf ~</param></function>`,
      `<function name="run_shell"><param name="cmd"><![CDATA[echo ${"a".repeat(100)}]]></param></function>`,
    ]
  ) {
    const at = "Sure. ".length;
    const text = `Sure. ${full}`;
    for (let n = at + 1; n < text.length; n++) {
      assert.equal(callMayStart(text.slice(0, n)), at, text.slice(0, n));
    }
  }
});

test("extractToolCallsDetailed: a MiniCPM call cut off inside a value is a call with an error", () => {
  const r = extractToolCallsDetailed('<function name="run_shell"><param name="cmd">rm -rf ~');
  assert.deepEqual(r.calls.map((c) => [c.name, c.error]), [[
    "run_shell",
    "the <function> block is not closed",
  ]]);
});

// ---------------------------------------------------------------------------------------------------------
// Arguments nested deeper than a runtime's stack
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: a call whose arguments nest 100k deep is still reported (Bun throws on them)", () => {
  const depth = 100_000;
  for (
    const args of ["[".repeat(depth) + "]".repeat(depth), `{"a": ${"[".repeat(depth)}${"]".repeat(depth)}}`]
  ) {
    const calls = extractToolCalls(`<tool_call>{"name": "f", "arguments": ${args}}</tool_call>`);
    assert.deepEqual(calls.map((c) => c.name), ["f"]);
  }
});

// ---------------------------------------------------------------------------------------------------------
// Prose that names the Hermes tags
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: prose naming the <tool_call> tags is not a GLM call; GLM's own layout still is", () => {
  const tools = [{ name: "get_weather", parameters: { type: "object", properties: {} } }];
  assert.deepEqual(names("Qwen wraps each call in <tool_call> and </tool_call> tags."), []);
  assert.deepEqual(names("Write <tool_call> ... </tool_call> around it."), []);
  assert.deepEqual(names("The parser looks for <tool_call>JSON</tool_call> blocks.", tools), []);
  assert.deepEqual(names("<tool_call>get_weather</tool_call>", tools), ["get_weather"]);
  assert.deepEqual(names("<tool_call>stop</tool_call>"), ["stop"]);
});

// ---------------------------------------------------------------------------------------------------------
// Calls inside code fences of other languages
// ---------------------------------------------------------------------------------------------------------

test("extractToolCallsDetailed: a call inside a ```bash fence is not a call but is reported", () => {
  const call = '<tool_call>{"name": "run_shell", "arguments": {"cmd": "rm -rf ~"}}</tool_call>';
  for (const lang of ["bash", "python"]) {
    const text = `Run this:\n\`\`\`${lang}\n${call}\n\`\`\`\nDone.`;
    const r = extractToolCallsDetailed(text);
    assert.deepEqual(r.calls, []);
    assert.deepEqual(
      r.findings.map((f) => [f.code, f.format, f.offset]),
      [["call_in_code_fence", "hermes", text.indexOf("<tool_call>")]],
    );
  }
  assert.deepEqual(extractToolCallsDetailed("```bash\nls -la\n```").findings, []);
});

// ---------------------------------------------------------------------------------------------------------
// Typing values by the declared schema
// ---------------------------------------------------------------------------------------------------------

/** A Qwen3-Coder XML call to `f` with one parameter. */
const xml = (key: string, value: string) =>
  `<tool_call>\n<function=f>\n<parameter=${key}>\n${value}\n</parameter>\n</function>\n</tool_call>`;
const argsOf = (text: string, tools?: unknown[]) =>
  extractToolCalls(text, tools ? { tools } : {})[0].arguments;

test("extractToolCalls: typing follows a wide acyclic anyOf/$ref chain in linear work and reaches the declared type", async () => {
  const defs: Record<string, unknown> = { D8: { type: "string" } };
  for (let i = 7; i >= 0; i--) defs[`D${i}`] = { anyOf: Array(8).fill({ $ref: `#/$defs/D${i + 1}` }) };
  const tools = [{
    name: "f",
    parameters: { type: "object", properties: { a: { $ref: "#/$defs/D0" } }, $defs: defs },
  }];
  // Schema nodes looked up in typing's memo count the work without depending on the machine's speed: each
  // node is worked out once, where following every path through the chain visits 8^8 of them.
  const [args, looked] = await countingWork(WeakMap.prototype, "get", () => argsOf(xml("a", "5"), tools));
  assert.deepEqual(args, { a: "5" });
  assert.ok(looked < 1_000, `${looked} schema nodes looked up`);
});

test("extractToolCalls: allOf is followed when typing (Pydantic v1 enums), and cycles end", () => {
  const U = { type: "string", enum: ["1", "2"] };
  const tools = [{
    name: "f",
    parameters: {
      type: "object",
      properties: { u: { allOf: [{ $ref: "#/$defs/U" }] }, c: { $ref: "#/$defs/C" } },
      $defs: { U, C: { anyOf: [{ $ref: "#/$defs/C" }, { type: "integer" }] } },
    },
  }];
  assert.deepEqual(argsOf(xml("u", "1"), tools), { u: "1" });
  assert.deepEqual(argsOf(xml("c", "3"), tools), { c: 3 });
});

test("extractToolCalls: numbers a double cannot hold as written stay text", () => {
  const tools = [{
    name: "f",
    parameters: { type: "object", properties: { n: { type: "number" }, i: { type: "integer" } } },
  }];
  assert.deepEqual(argsOf(xml("n", "1e400"), tools), { n: "1e400" });
  assert.deepEqual(argsOf(xml("i", "99999999999999999999"), tools), { i: "99999999999999999999" });
  assert.deepEqual(argsOf(xml("x", "1e400")), { x: "1e400" });
  assert.deepEqual(argsOf(xml("i", "42"), tools), { i: 42 });
});

test("extractToolCalls: Gemma digits a number would change stay as written (007, past 2^53)", () => {
  const tools = [{
    name: "f",
    parameters: { type: "object", properties: { zip: { type: "string" }, n: { type: "integer" } } },
  }];
  const text = "<|tool_call>call:f{zip:007,n:3,big:99999999999999999999,x:1.5}<tool_call|>";
  assert.deepEqual(argsOf(text, tools), { zip: "007", n: 3, big: "99999999999999999999", x: 1.5 });
});

test("extractToolCalls: a call drafted in reasoning the prompt opened is no call, when words come before it", () => {
  const call = '<tool_call>{"name":"get_weather","arguments":{"city":"Oslo"}}</tool_call>';
  const drafted =
    `The user asks about Oslo. I could call ${call} but they only want a definition.</think>\n\n` +
    "Oslo is the capital of Norway.";
  assert.deepEqual(extractToolCalls(drafted), []);
  // An answer that opens with the call keeps it (the closing tag may be part of what it wrote).
  assert.equal(extractToolCalls(`${call}\nDone.</think>`).length, 1);
});
