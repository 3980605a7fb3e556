import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { type ExtractedToolCall, extractToolCalls, extractToolCallsDetailed } from "../extract.ts";
import { countingTextWork } from "./_counting.ts";

const brief = (calls: ExtractedToolCall[]) =>
  calls.map((c) => ({ name: c.name, arguments: c.arguments, format: c.format }));

function assertSpans(text: string, calls: ExtractedToolCall[]): void {
  for (const c of calls) {
    assert.ok(0 <= c.block.start && c.block.start <= c.start && c.start <= c.end && c.end <= c.block.end);
    assert.ok(c.block.end <= text.length);
    assert.equal(text.slice(c.start, c.end), c.raw);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Hermes / Qwen <tool_call>
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: Hermes <tool_call>, one call with its span and the span of its tags", () => {
  const text =
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\nDone.';
  const calls = extractToolCalls(text);
  assert.deepEqual(brief(calls), [{ name: "get_weather", arguments: { city: "Oslo" }, format: "hermes" }]);
  assert.equal(
    text.slice(calls[0].start, calls[0].end),
    '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
  );
  assert.equal(text.slice(calls[0].block.start, calls[0].block.end).split("\n")[0], "<tool_call>");
  assert.ok(text.slice(calls[0].block.start, calls[0].block.end).endsWith("</tool_call>"));
  assertSpans(text, calls);
});

test("extractToolCalls: Hermes <tool_call>, two blocks give two calls in order; bad JSON in one is a call with an error, not a loss", () => {
  const text =
    '<tool_call>{"name":"a","arguments":{"x":1}}</tool_call><tool_call>{"name":"b","arguments":{oops}</tool_call>';
  const calls = extractToolCalls(text);
  assert.equal(calls.length, 2);
  assert.deepEqual(calls[0].arguments, { x: 1 });
  assert.equal(calls[0].error, undefined);
  assert.equal(calls[1].name, "b"); // salvaged from the broken text
  assert.equal(typeof calls[1].arguments, "string");
  assert.match(calls[1].error ?? "", /not valid JSON/);
  assertSpans(text, calls);
});

test("extractToolCallsDetailed: a JSON error is said once, with the parser's reason", () => {
  const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city":  "state": "WA"}}\n</tool_call>';
  const error = extractToolCalls(call)[0].error ?? "";
  // It read "the call is not valid JSON: the call is not valid JSON: Expected ..." to the model.
  assert.match(error, /^the call is not valid JSON: \S/);
  assert.equal(error.split("not valid JSON").length, 2, error);
  const nameless = extractToolCallsDetailed('<tool_call>\n{"nme" "x"}\n</tool_call>').findings[0].message;
  assert.match(nameless, /the JSON after <tool_call> is not valid \(\S/);
  assert.equal(nameless.split("not valid").length, 2, nameless);
});

test("extractToolCalls: Hermes <tool_call>, arguments given as JSON text (OpenAI style) are parsed", () => {
  const [c] = extractToolCalls('<tool_call>{"name":"a","arguments":"{\\"x\\": 2}"}</tool_call>');
  assert.deepEqual(c.arguments, { x: 2 });
});

test("extractToolCalls: Hermes <tool_call>, an unclosed block at the end of the text (a cut-off model) is still a call, flagged", () => {
  const calls = extractToolCalls('ok <tool_call>{"name":"a","arguments":{"x":1}}');
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].arguments, { x: 1 });
  assert.match(calls[0].error ?? "", /not closed/);
});

test("extractToolCalls: Hermes <tool_call>, prose that merely mentions the tag is not a call", () => {
  assert.deepEqual(extractToolCalls("I would use <tool_call> tags for that."), []);
});

test("extractToolCalls: Qwen3-Coder XML form", () => {
  const text =
    "<tool_call>\n<function=run_query>\n<parameter=sql>\nSELECT 1\n</parameter>\n<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>";
  const [c] = extractToolCalls(text);
  assert.equal(c.format, "qwen_xml");
  assert.equal(c.name, "run_query");
  assert.deepEqual(c.arguments, { sql: "SELECT 1", limit: 5 });
});

test("extractToolCalls: __proto__ in arguments stays an own property and touches no prototype", () => {
  const [c] = extractToolCalls(
    '<tool_call>{"name":"a","arguments":{"__proto__":{"polluted":true}}}</tool_call>',
  );
  assert.ok(Object.hasOwn(c.arguments as object, "__proto__"));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

// ---------------------------------------------------------------------------------------------------------
// Llama <|python_tag|>
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: Llama <|python_tag|> JSON form with parameters, two calls separated by ';', up to <|eom_id|>", () => {
  const text =
    '<|python_tag|>{"name": "search", "parameters": {"q": "x"}}; {"name": "open", "parameters": {"id": 3}}<|eom_id|>after';
  const calls = extractToolCalls(text);
  assert.deepEqual(brief(calls), [
    { name: "search", arguments: { q: "x" }, format: "llama_json" },
    { name: "open", arguments: { id: 3 }, format: "llama_json" },
  ]);
  assert.equal(text.slice(calls[0].block.start, calls[0].block.end), text.slice(0, text.indexOf("after")));
  assertSpans(text, calls);
});

test("extractToolCalls: Llama built-in name.call(...) form with Python literals", () => {
  const text =
    '<|python_tag|>brave_search.call(query="weather in \\"SF\\"", count=3, safe=True, tags=["a", \'b\'], extra=None)';
  const [c] = extractToolCalls(text);
  assert.equal(c.format, "llama_python");
  assert.equal(c.name, "brave_search");
  assert.deepEqual(c.arguments, {
    query: 'weather in "SF"',
    count: 3,
    safe: true,
    tags: ["a", "b"],
    extra: null,
  });
  assert.equal(c.end, text.length);
});

test("extractToolCalls: an unterminated Llama Python call is a call with an error", () => {
  const [c] = extractToolCalls('<|python_tag|>wolfram_alpha.call(query="2+2"');
  assert.equal(c.name, "wolfram_alpha");
  assert.match(c.error ?? "", /parenthesis/);
});

// ---------------------------------------------------------------------------------------------------------
// Mistral [TOOL_CALLS]
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: Mistral [TOOL_CALLS] array form, each call its own span, ids kept", () => {
  const text =
    '[TOOL_CALLS][{"name":"a","arguments":{},"id":"abc123def"}, {"name":"b","arguments":{"x":1},"id":"xyz987uvw"}]</s>';
  const calls = extractToolCalls(text);
  assert.deepEqual(calls.map((c) => [c.name, c.id, c.raw]), [
    ["a", "abc123def", '{"name":"a","arguments":{},"id":"abc123def"}'],
    ["b", "xyz987uvw", '{"name":"b","arguments":{"x":1},"id":"xyz987uvw"}'],
  ]);
  assert.equal(calls[0].block.start, 0);
  assert.equal(calls[0].block.end, text.indexOf("</s>"));
  assertSpans(text, calls);
});

test("extractToolCalls: Mistral v11 form [TOOL_CALLS]name[ARGS]{...}, twice", () => {
  const text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"query": "x"}';
  const calls = extractToolCalls(text);
  assert.deepEqual(brief(calls), [
    { name: "get_weather", arguments: { city: "Paris" }, format: "mistral" },
    { name: "search", arguments: { query: "x" }, format: "mistral" },
  ]);
  assertSpans(text, calls);
});

// ---------------------------------------------------------------------------------------------------------
// fenced and bare JSON
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: a ```json fence holding {name, arguments}", () => {
  const text = 'Sure:\n```json\n{"name": "f", "arguments": {"a": [1, 2]}}\n```\nthen more';
  const [c] = extractToolCalls(text);
  assert.equal(c.format, "fenced_json");
  assert.deepEqual(c.arguments, { a: [1, 2] });
  assert.equal(
    text.slice(c.block.start, c.block.end),
    '```json\n{"name": "f", "arguments": {"a": [1, 2]}}\n```',
  );
});

test("extractToolCalls: an array of calls in a fence", () => {
  const calls = extractToolCalls(
    '```json\n[{"name":"a","arguments":{}},{"name":"b","parameters":{"k":"v"}}]\n```',
  );
  assert.deepEqual(calls.map((c) => c.name), ["a", "b"]);
});

test("extractToolCalls: JSON in a fence that is not call-shaped is just JSON", () => {
  assert.deepEqual(extractToolCalls('```json\n{"city": "Oslo", "temp": 3}\n```'), []);
  assert.deepEqual(extractToolCalls('```ts\nconst call = {"name": "f", "arguments": {}};\n```'), []);
});

test("extractToolCalls: a whole message that is one call object (Llama JSON prompt format)", () => {
  const [c] = extractToolCalls(' {"type": "function", "name": "f", "parameters": {"a": 1}} ');
  assert.equal(c.format, "bare_json");
  assert.deepEqual(c.arguments, { a: 1 });
});

test("extractToolCalls: plain prose and ordinary JSON answers give no calls", () => {
  assert.deepEqual(extractToolCalls("The weather in Oslo is 3°C."), []);
  assert.deepEqual(extractToolCalls('{"answer": 42}'), []);
  assert.deepEqual(extractToolCalls(""), []);
});

// ---------------------------------------------------------------------------------------------------------
// robustness
// ---------------------------------------------------------------------------------------------------------

test("extractToolCalls: never throws, and every span points into the text (property)", () => {
  const pieces = fc.constantFrom(
    "<tool_call>",
    "</tool_call>",
    "<|python_tag|>",
    "<|eom_id|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "```json\n",
    "```",
    '{"name":"a","arguments":{',
    "}",
    "]",
    "[",
    '"',
    "\\",
    "x.call(",
    "q='",
    ")",
    ";",
    "\n",
    " ",
    "<function=f>",
    "<parameter=p>",
  );
  fc.assert(
    fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 30 }), (parts) => {
      const text = parts.join("");
      const calls = extractToolCalls(text);
      assertSpans(text, calls);
    }),
    { numRuns: 400 },
  );
});

test("extractToolCalls: a marker followed only by space and another marker gives no call (found by the property above)", () => {
  const text = "[TOOL_CALLS] [TOOL_CALLS]";
  const calls = extractToolCalls(text);
  assertSpans(text, calls);
  assert.deepEqual(calls, []);
});

test("extractToolCalls: non-string input gives no calls", () => {
  assert.deepEqual(extractToolCalls(undefined as unknown as string), []);
  assert.deepEqual(extractToolCalls(42 as unknown as string), []);
});

test("extractToolCalls: many unclosed markers are read in linear work", async () => {
  const hostile = (n: number) =>
    "<tool_call> x ".repeat(5 * n) + "[TOOL_CALLS]a".repeat(5 * n / 2) + "```".repeat(5 * n / 2) +
    "<|python_tag|>{".repeat(n);
  // Characters read and copied count the work without depending on the machine's speed (a timed version
  // could fail on a busy machine): four times the text, about four times the work when linear, sixteen when
  // each marker reads on to the text's end (~2.5 MB then took minutes).
  const workOf = async (n: number) => (await countingTextWork(() => extractToolCalls(hostile(n))))[1];
  const [small, large] = [await workOf(5_000), await workOf(20_000)];
  assert.ok(small > 0 && large < 8 * small, `${small} -> ${large} characters`);
});
