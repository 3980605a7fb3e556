import { test } from "node:test";
import assert from "node:assert/strict";
import { extractToolCalls } from "../extract.ts";

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
    ]
  ) {
    assert.deepEqual(names(broken + valid), ["delete_all_files"], broken);
  }
});
