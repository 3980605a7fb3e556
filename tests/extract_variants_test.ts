/**
 * Variants that the upstream parsers of each format accept (read from their source, examples written here):
 * attribute spellings, type names and literal styles that a format's dev rows do not show.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { extractToolCalls } from "../extract.ts";

/** Name and arguments of each call: what a caller acts on. */
const got = (text: string, tools?: unknown[]) =>
  extractToolCalls(text, tools ? { tools } : {}).map((c) => ({ name: c.name, arguments: c.arguments }));

/** One OpenAI-shaped tool declaration with the given properties. */
const tool = (name: string, properties: Record<string, unknown>) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties } },
});

test("extractToolCalls: MiniMax invoke and parameter names written without quotes", () => {
  const text = "<minimax:tool_call>\n<invoke name=set_timer>\n<parameter name=minutes>15</parameter>\n" +
    "<parameter name=label>tea</parameter>\n</invoke>\n</minimax:tool_call>";
  assert.deepEqual(got(text), [{ name: "set_timer", arguments: { minutes: 15, label: "tea" } }]);
  assert.deepEqual(got("<minimax:tool_call><invoke name=ping/></minimax:tool_call>"), [
    { name: "ping", arguments: {} },
  ]);
});

test("extractToolCalls: schema types named the Python way (int, float, bool, dict, list, str) type XML values", () => {
  const tools = [
    tool("plan", {
      days: { type: "int" },
      budget: { type: "float" },
      pets: { type: "bool" },
      prefs: { type: "dict" },
      stops: { type: "list" },
      code: { type: "str" },
    }),
  ];
  const text = "<tool_call>\n<function=plan>\n<parameter=days>\n3\n</parameter>\n<parameter=budget>\n99.5\n" +
    "</parameter>\n<parameter=pets>\nFalse\n</parameter>\n<parameter=prefs>\n{'view': 'sea'}\n</parameter>\n" +
    "<parameter=stops>\n['Rome', 'Pisa']\n</parameter>\n<parameter=code>\n007\n</parameter>\n</function>\n</tool_call>";
  assert.deepEqual(got(text, tools), [{
    name: "plan",
    arguments: {
      days: 3,
      budget: 99.5,
      pets: false,
      prefs: { view: "sea" },
      stops: ["Rome", "Pisa"],
      code: "007",
    },
  }]);
});

test("extractToolCalls: GLM values that are Python literals are read as the values they write", () => {
  const text = "<tool_call>book\n<arg_key>refundable</arg_key>\n<arg_value>True</arg_value>\n" +
    "<arg_key>seats</arg_key>\n<arg_value>['12A', '12B']</arg_value>\n<arg_key>meal</arg_key>\n" +
    "<arg_value>None</arg_value>\n<arg_key>note</arg_key>\n<arg_value>Window, please</arg_value>\n</tool_call>";
  assert.deepEqual(got(text), [{
    name: "book",
    arguments: { refundable: true, seats: ["12A", "12B"], meal: null, note: "Window, please" },
  }]);
  // Declared a string, the text is kept as written.
  const [declared] = got(text, [tool("book", { refundable: { type: "string" } })]);
  assert.equal((declared.arguments as Record<string, unknown>).refundable, "True");
});

test("extractToolCalls: <|python_tag|> with raw code is a call to the declared python tool", () => {
  const py = tool("python", { source: { type: "string" } });
  assert.deepEqual(got("<|python_tag|>import math\nprint(math.pi)<|eom_id|>", [py]), [
    { name: "python", arguments: { source: "import math\nprint(math.pi)" } },
  ]);
  assert.deepEqual(got("<|python_tag|>print(2 ** 10)", [py]), [
    { name: "python", arguments: { source: "print(2 ** 10)" } },
  ]);
  // The built-in call syntax and JSON calls still read as before.
  assert.deepEqual(got('<|python_tag|>python.call(source="1")', [py]), [
    { name: "python", arguments: { source: "1" } },
  ]);
  // Without a declared python tool, raw code is not a call.
  assert.deepEqual(got("<|python_tag|>import math\nprint(math.pi)"), []);
});

test("extractToolCalls: Functionary v3.2 >>>python followed by code is a call to python with that code", () => {
  assert.deepEqual(got(">>>python\nfor i in range(3):\n    print(i)>>>all\nDone."), [
    { name: "python", arguments: { code: "for i in range(3):\n    print(i)" } },
  ]);
  // JSON after >>>python is still its arguments.
  assert.deepEqual(got('>>>python\n{"code": "1 + 1"}'), [{ name: "python", arguments: { code: "1 + 1" } }]);
});

test("extractToolCalls: Step3 values that are Python literals are read as the values they write", () => {
  const text =
    '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="tag">' +
    "<steptml:parameter name=\"labels\">['urgent', 'home']</steptml:parameter>" +
    '<steptml:parameter name="pinned"> True </steptml:parameter>' +
    '<steptml:parameter name="title">Fix the sink</steptml:parameter>' +
    "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
  assert.deepEqual(got(text), [
    { name: "tag", arguments: { labels: ["urgent", "home"], pinned: true, title: "Fix the sink" } },
  ]);
});

test("extractToolCalls: Gemma 4 keys are any text up to the colon (spaces, dashes), as llama.cpp reads them", () => {
  const text =
    '<|tool_call>call:crm{customer id:<|"|>C-7<|"|>, opt-in:true, notes : {last call:null}}<tool_call|>';
  assert.deepEqual(got(text), [
    { name: "crm", arguments: { "customer id": "C-7", "opt-in": true, notes: { "last call": null } } },
  ]);
});

test("extractToolCalls: a harmony content type written with a dash (<|constrain|>json-schema) still opens the body", () => {
  assert.deepEqual(got(' to=functions.lookup <|constrain|>json-schema<|message|>{"id": 4}<|call|>'), [
    { name: "lookup", arguments: { id: 4 } },
  ]);
});

test("extractToolCalls: MiniMax M3 objects written as nested elements and arrays as <item> elements", () => {
  const s = "]<]minimax[>[";
  const text =
    `${s}<tool_call>${s}<invoke name="ship">${s}<to>${s}<city>Lyon</city>${s}<floor>3</floor>${s}</to>` +
    `${s}<boxes>${s}<item>${s}<kg>2.5</kg>${s}</item>${s}<item>${s}<kg>1</kg>${s}</item>${s}</boxes>` +
    `${s}<note><b>fragile</b></note>${s}</invoke>${s}</tool_call>`;
  assert.deepEqual(got(text), [{
    name: "ship",
    arguments: { to: { city: "Lyon", floor: 3 }, boxes: [{ kg: 2.5 }, { kg: 1 }], note: { b: "fragile" } },
  }]);
  // A parameter declared a string keeps its text, tags and all.
  const [declared] = got(text, [tool("ship", { note: { type: "string" } })]);
  assert.equal((declared.arguments as Record<string, unknown>).note, "<b>fragile</b>");
});

test("extractToolCalls: a Kimi K3 think section is reasoning: a call quoted there is not a call", () => {
  const call = (name: string) =>
    `<|open|>tools<|sep|><|open|>call tool="${name}" index="0"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`;
  const text = `<|open|>think<|sep|>Maybe ${call("wipe")}? No.<|close|>think<|sep|>` +
    `<|open|>response<|sep|>Listing.<|close|>response<|sep|>${call("list")}<|close|>message<|sep|>`;
  assert.deepEqual(got(text), [{ name: "list", arguments: {} }]);
  // The generation prompt opened the section: its closer alone ends it.
  assert.deepEqual(got(`Maybe ${call("wipe")}?<|close|>think<|sep|>${call("list")}`), [{
    name: "list",
    arguments: {},
  }]);
});

test("extractToolCalls: Qwen3-Coder and Seed-OSS: null is null whatever the type; an untyped parameter stays text", () => {
  const tools = [tool("move", { to: { type: "string" }, steps: { type: "integer" }, speed: {} })];
  const body =
    "<function=move>\n<parameter=to>\nnull\n</parameter>\n<parameter=steps>\nNULL\n</parameter>\n" +
    "<parameter=speed>\n5\n</parameter>\n<parameter=extra>\ntrue\n</parameter>\n</function>";
  const want = [{ name: "move", arguments: { to: null, steps: null, speed: "5", extra: "true" } }];
  assert.deepEqual(got(`<tool_call>\n${body}\n</tool_call>`, tools), want);
  assert.deepEqual(got(`<seed:tool_call>\n${body}\n</seed:tool_call>`, tools), want);
  // Without tools, values that are JSON literals are still read as written.
  assert.deepEqual(got(`<tool_call>\n${body}\n</tool_call>`), [
    { name: "move", arguments: { to: null, steps: null, speed: 5, extra: true } },
  ]);
});

test("extractToolCalls: GLM with its line breaks written as \\n between the tags", () => {
  const text = "<tool_call>get_weather\\n<arg_key>city</arg_key>\\n<arg_value>Oslo</arg_value>\\n" +
    "<arg_key>days</arg_key>\\n<arg_value>3</arg_value>\\n</tool_call>";
  assert.deepEqual(got(text), [{ name: "get_weather", arguments: { city: "Oslo", days: 3 } }]);
  // Inside a value, a written \n is data.
  assert.deepEqual(
    got("<tool_call>note\n<arg_key>text</arg_key>\n<arg_value>a\\nb</arg_value>\n</tool_call>"),
    [
      { name: "note", arguments: { text: "a\\nb" } },
    ],
  );
});

test("extractToolCalls: MiniMax M2 values are stripped, and null is null whatever the declared type", () => {
  const text =
    '<minimax:tool_call>\n<invoke name="send">\n<parameter name="to">  ana@example.org  </parameter>\n' +
    '<parameter name="cc">null</parameter>\n<parameter name="retries">\n  2\n</parameter>\n</invoke>\n</minimax:tool_call>';
  const tools = [
    tool("send", { to: { type: "string" }, cc: { type: "string" }, retries: { type: "integer" } }),
  ];
  assert.deepEqual(got(text, tools), [
    { name: "send", arguments: { to: "ana@example.org", cc: null, retries: 2 } },
  ]);
});

test("extractToolCalls: a Gemma 4 value in single quotes is a string, as Ollama's parser repairs it", () => {
  assert.deepEqual(got("<|tool_call>call:greet{name:'Ana Lima',times:2}<tool_call|>"), [
    { name: "greet", arguments: { name: "Ana Lima", times: 2 } },
  ]);
});

test("extractToolCalls: an unquoted LFM2 value that is no literal is text, as Ollama's parser reads it", () => {
  assert.deepEqual(
    got("<|tool_call_start|>[search(q=cheap flights, limit=5, city=Paris)]<|tool_call_end|>"),
    [
      { name: "search", arguments: { q: "cheap flights", limit: 5, city: "Paris" } },
    ],
  );
});
