// The white space of a rejected turn's text, streamed and whole: the client of a stream reads what the
// client of the same answer as one body reads, to the space (a retry sends the text back, and a model
// given another history answers otherwise). The text before a call stays as it came (a stream sent it);
// what a stream held from the call on is tidied the same way in both (no word run into the next block's,
// no white space left at the end where a call was cut); the reason is a paragraph of its own after words.
// Driven through the official Anthropic client and Cohere's wire (its client is not installed), and in every
// dialect through the writers and readers of the gate fuzz (scripts/_gate_fuzz.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import {
  anthropicMessage,
  type CallSpec,
  REJECTED_CALL,
  sseData,
  TOOLS_ANTHROPIC,
  TOOLS_OPENAI,
  VALID_CALL,
  withGuardedServer,
} from "./_fake_llm_server.ts";
import type { GuardFetchOptions } from "../gate.ts";
import { FUZZ_DIALECTS, givenBothWays } from "../scripts/_gate_fuzz.ts";

const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** A call to a tool the request does not declare, written into the text as a local model writes it. */
const WRITTEN_BAD = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>';
const WRITTEN_GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';

/** A piece of a block that streams as a citation of the text before it (no text of its own). */
const CITE = "\u0000cite";

/** An Anthropic answer: text blocks, each in the deltas it streams in (`CITE`: a citation), and native calls after them. */
interface Answer {
  blocks: string[][];
  calls?: CallSpec[];
}

/** The answer as the events of a stream (send with `named: true`). */
function anthropicEvents({ blocks, calls = [] }: Answer): unknown[] {
  const whole = anthropicMessage(null, calls);
  const start = { ...whole, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } };
  const events: unknown[] = [{ type: "message_start", message: start }];
  const content = [
    ...blocks.map((deltas) => ({ type: "text", text: textOf(deltas) })),
    ...whole.content as [],
  ];
  content.forEach((block: Record<string, unknown>, index) => {
    const text = block.type === "text";
    events.push({
      type: "content_block_start",
      index,
      content_block: text ? { type: "text", text: "" } : { ...block, input: {} },
    });
    for (const piece of text ? blocks[index] : [JSON.stringify(block.input)]) {
      const citation = {
        type: "char_location",
        cited_text: "rain",
        document_index: 0,
        document_title: null,
        start_char_index: 0,
        end_char_index: 4,
      };
      const delta = !text
        ? { type: "input_json_delta", partial_json: piece }
        : piece === CITE
        ? { type: "citations_delta", citation }
        : { type: "text_delta", text: piece };
      events.push({ type: "content_block_delta", index, delta });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: whole.stop_reason, stop_sequence: null },
    usage: { output_tokens: 20 },
  });
  events.push({ type: "message_stop" });
  return events;
}

/** The text of a block's deltas. */
function textOf(deltas: string[]): string {
  return deltas.filter((d) => d !== CITE).join("");
}

/** The answer as one body. */
function anthropicBody({ blocks, calls = [] }: Answer): Record<string, unknown> {
  const whole = anthropicMessage(null, calls);
  const texts = blocks.map((deltas) => ({ type: "text", text: textOf(deltas) }));
  return { ...whole, content: [...texts, ...whole.content as []] };
}

/** The text blocks the Anthropic client reads from the gated answer, streamed and whole. */
async function anthropicBothWays(answer: Answer, options: GuardFetchOptions = {}) {
  const ask = async (streamed: boolean) => {
    const { value } = await withGuardedServer(
      () => (streamed ? { sse: anthropicEvents(answer), named: true } : { json: anthropicBody(answer) }),
      options,
      async (server, f) => {
        const client = new Anthropic({ apiKey: "k", baseURL: server.url, fetch: f, maxRetries: 0 });
        const request = { model: "m", max_tokens: 100, messages, tools: TOOLS_ANTHROPIC as never };
        const message = streamed
          ? await client.messages.stream(request).finalMessage()
          : await client.messages.create(request);
        return message.content.flatMap((b) => (b.type === "text" ? [b.text] : []));
      },
    );
    return value;
  };
  return { streamed: await ask(true), whole: await ask(false) };
}

test("guardFetch Anthropic: text kept after a call cut inside a block keeps its end, whole as streamed; the next block's first word stays apart", async () => {
  // The body trimmed the end of every block a call was cut from: "the " + "weather" read "theweather",
  // where the stream, which sent the block's end before the next block began, read "the weather".
  const { streamed, whole } = await anthropicBothWays({
    blocks: [["Let me ", WRITTEN_BAD.slice(0, 30), WRITTEN_BAD.slice(30) + " check the "], [
      "weather in Oslo. ",
    ]],
  });
  assert.deepEqual(whole, streamed);
  assert.match(
    whole.join(""),
    /^Let me {2}check the weather in Oslo\.\n\ntoolguard stopped[^]*delete_everything/,
  );
});

test("guardFetch Anthropic: a citation inside a block after a call's leaves the white space after it, whole as streamed; no words glued", async () => {
  // The stream began a new stretch of held text at the citation, as at the end of a block: the " " after it
  // stood alone, was dropped as a place left blank, and "the" ran into the next block's "weather", where the
  // body kept it (text followed).
  const { streamed, whole } = await anthropicBothWays({
    blocks: [["Let me ", WRITTEN_BAD + " check"], [" the", CITE, " "], ["weather."]],
  });
  assert.deepEqual(streamed, whole);
  assert.match(streamed.join(""), /^Let me {2}check the weather\.\n\ntoolguard stopped/);
});

test("guardFetch Anthropic: white space that came with a call's marker stays, streamed as whole", async () => {
  // " " came in one delta with the call's marker: the stream dropped it with the call, and "the" ran into the
  // word after the call, where the body kept the text before the call as it came.
  const { streamed, whole } = await anthropicBothWays({
    blocks: [["Let me check the", " " + WRITTEN_BAD.slice(0, 30), WRITTEN_BAD.slice(30) + "weather."]],
  });
  assert.deepEqual(streamed, whole);
  assert.match(streamed.join(""), /^Let me check the weather\.\n\ntoolguard stopped/);
});

test("guardFetch Anthropic drop-call: the text held from a kept call on is tidied whole as streamed", async () => {
  // The body kept the text before the first rejected call as it came, "Done. \n" and all, where the stream
  // held it from the kept call on and trimmed its end: a body read " \n\n\n" before the reason.
  const { streamed, whole } = await anthropicBothWays(
    { blocks: [[WRITTEN_GOOD, "\nDone. \n", WRITTEN_BAD]] },
    { onRejected: "drop-call" },
  );
  assert.deepEqual(whole, streamed);
  assert.match(whole.join(""), /<\/tool_call>\nDone\.\n\ntoolguard removed[^]*delete_everything/);
});

test("guardFetch Anthropic drop-call: the reason goes in the block of the call cut, not in one only trimmed before it, whole as streamed", async () => {
  // Trimming the end of the text held from the kept call on changed the block before the rejected call's, and
  // the body counted it as one a call was cut from: it ended that block with the reason, where the stream
  // wrote the reason in the call's own block (the client read one block more).
  const { streamed, whole } = await anthropicBothWays(
    { blocks: [[WRITTEN_GOOD + " Done."], ["Sunny.  "], [WRITTEN_BAD]] },
    { onRejected: "drop-call" },
  );
  assert.deepEqual(whole, streamed);
  assert.equal(whole.length, 3);
  assert.equal(whole[1], "Sunny.");
  assert.match(whole[2], /^\n\ntoolguard removed[^]*delete_everything/);
});

test("guardFetch Anthropic: the reason for rejected native calls is a paragraph of its own after words, whole as streamed", async () => {
  // The stream set its block apart with a blank line after the text the client had; the body wrote the reason
  // alone, and a client that joins the blocks read "check.toolguard stopped…".
  for (const options of [{}, { onRejected: "drop-call" as const }]) {
    const calls = options.onRejected ? [VALID_CALL, REJECTED_CALL] : [REJECTED_CALL];
    const { streamed, whole } = await anthropicBothWays({ blocks: [["Let me ", "check."]], calls }, options);
    assert.deepEqual(whole, streamed);
    assert.match(whole.at(-1)!, /^\n\ntoolguard (stopped|removed)/);
    // (after no words, none)
    const blank = await anthropicBothWays({ blocks: [], calls }, options);
    assert.deepEqual(blank.whole, blank.streamed);
    assert.match(blank.whole[0], /^toolguard/);
  }
});

/**
 * Cohere v2: text blocks and native calls, streamed and whole, each block's text as its client reads it;
 * with `plan`, a tool plan after the blocks (streamed), first in what is read.
 */
async function cohereBothWays(texts: string[], calls: CallSpec[], options: GuardFetchOptions, plan?: string) {
  const toolCalls = calls.map((c) => ({
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.args) },
  }));
  const usage = { tokens: { input_tokens: 5, output_tokens: 9 } };
  const body = {
    id: "c1",
    finish_reason: "TOOL_CALL",
    message: {
      role: "assistant",
      content: texts.map((text) => ({ type: "text", text })),
      ...(plan === undefined ? {} : { tool_plan: plan }),
      tool_calls: toolCalls,
    },
    usage,
  };
  const events = [
    { id: "c1", type: "message-start", delta: { message: { role: "assistant" } } },
    ...texts.flatMap((text, index) => [
      { type: "content-start", index, delta: { message: { content: { type: "text", text: "" } } } },
      { type: "content-delta", index, delta: { message: { content: { text } } } },
      { type: "content-end", index },
    ]),
    ...(plan === undefined ? [] : [{ type: "tool-plan-delta", delta: { message: { tool_plan: plan } } }]),
    ...toolCalls.flatMap((call, index) => [
      {
        type: "tool-call-start",
        index,
        delta: {
          message: { tool_calls: { ...call, function: { name: call.function.name, arguments: "" } } },
        },
      },
      {
        type: "tool-call-delta",
        index,
        delta: { message: { tool_calls: { function: { arguments: call.function.arguments } } } },
      },
      { type: "tool-call-end", index },
    ]),
    { type: "message-end", delta: { finish_reason: "TOOL_CALL", usage } },
  ];
  const ask = async (streamed: boolean) => {
    const { value } = await withGuardedServer(
      () => (streamed ? { sse: events, named: true } : { json: body }),
      options,
      async (server, f) => {
        const res = await f(`${server.url}/v2/chat`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "command-r", messages, tools: TOOLS_OPENAI, stream: streamed }),
        });
        const planned = (text: string | undefined) => plan === undefined ? [] : [text ?? ""];
        if (!streamed) {
          const message = (await res.json()).message as {
            content: { type: string; text: string }[];
            tool_plan?: string;
          };
          return [
            ...planned(message.tool_plan),
            ...message.content.filter((p) => p.type === "text").map((p) => p.text),
          ];
        }
        const blocks: string[] = [];
        let told = "";
        for (const e of sseData(await res.text())) {
          if (e.type === "tool-plan-delta") told += e.delta.message.tool_plan;
          if (e.type === "content-start") blocks[e.index] = e.delta.message.content.text ?? "";
          if (e.type === "content-delta") blocks[e.index] += e.delta.message.content.text ?? "";
        }
        return [...planned(told), ...blocks];
      },
    );
    return value;
  };
  return { streamed: await ask(true), whole: await ask(false) };
}

test("guardFetch Cohere: the reason for rejected native calls is a paragraph of its own after words, whole as streamed", async () => {
  for (const options of [{}, { onRejected: "drop-call" as const }]) {
    const calls = options.onRejected ? [VALID_CALL, REJECTED_CALL] : [REJECTED_CALL];
    const { streamed, whole } = await cohereBothWays(["I will check."], calls, options);
    assert.deepEqual(whole, streamed);
    assert.match(whole.at(-1)!, /^\n\ntoolguard (stopped|removed)/);
  }
});

test("guardFetch Cohere: a tool plan held behind a possible written call stands ahead of the text for the reason's lead, whole as streamed", async () => {
  // The plan came after text the watch held as a possible written call (a marker with no end), so it was
  // held too, and the reason's lead read it as where the text ended: "<tool_call>\n" then a plan got a blank
  // line too many before the reason, or, after a plan of a line break, one too few. A body reads the plan
  // ahead of the text.
  for (const options of [{}, { onRejected: "drop-call" as const }]) {
    const calls = options.onRejected ? [VALID_CALL, REJECTED_CALL] : [REJECTED_CALL];
    for (
      const [texts, plan, lead] of [
        [["Let me look.\n\n", "<tool_call>\n"], "I will check the weather.", "\n"],
        [["Let me look.\n\n", "<tool_call>\n"], "\n", "\n"],
        [["Let me look.", "<tool_call>"], "\n", "\n\n"],
      ] as const
    ) {
      const { streamed, whole } = await cohereBothWays([...texts], calls, options, plan);
      assert.deepEqual(streamed, whole, JSON.stringify([texts, plan, options]));
      assert.deepEqual(whole.slice(0, 3), [plan, ...texts]);
      assert.match(whole.at(-1)!, new RegExp(`^${lead}toolguard (stopped|removed)`));
    }
  }
});

test("guardFetch: the reason after text that ends in line breaks follows it by one blank line, streamed and whole, in every dialect", async () => {
  // Text that ended in a blank line got "\n\n" more before the reason for native calls, in a body and a
  // stream alike ("check.\n\n\n\ntoolguard": two blank lines), and one line break "\n\n" more (also for a
  // call written into the text, whose text before it stays as it came).
  const bad = { call: "delete_everything", args: {} };
  const good = { call: "get_weather", args: { city: "Oslo" } };
  const cases: [string[], string][] = [
    [["Let me check.\n\n"], "Let me check.\n\n"],
    [["Let me check.\n"], "Let me check.\n\n"],
    // (the blank line in a block or part of its own: the client joins them)
    [["Let me check.\n", "\n"], "Let me check.\n\n"],
    [["Let me check. \n", " \n "], "Let me check. \n \n "],
    [["Let me check."], "Let me check.\n\n"],
    // (the model's own blank lines, one of spaces among them, stay as they came and count: the reason
    // follows with none of the gate's, as a stream sent them before any call was seen)
    [["Let me check.\n\n \n"], "Let me check.\n\n \n"],
    [["Let me check.\n \n\n \n"], "Let me check.\n \n\n \n"],
    [["Let me check.\n\n", " \n"], "Let me check.\n\n \n"],
  ];
  for (const dialect of FUZZ_DIALECTS) {
    for (const mode of ["withhold", "drop-call"] as const) {
      const calls = mode === "drop-call" ? [good, bad] : [bad];
      for (const [texts, said] of cases) {
        const what = `${dialect} ${mode} ${JSON.stringify(texts)}`;
        const { stream, body } = await givenBothWays(dialect, mode, [
          ...texts.map((text) => ({ text })),
          ...calls,
        ]);
        const reads = `${said}toolguard ${mode === "drop-call" ? "removed" : "stopped"}`;
        assert.deepEqual(
          [stream.startsWith(reads), body.startsWith(reads)],
          [true, true],
          `${what}: ${stream}`,
        );
        assert.equal(stream, body, what);
      }
      // (a call written into the text, after a line break, and after the model's blank lines)
      for (const [before, said] of [["\n", "\n\n"], ["\n\n \n", "\n\n \n"]]) {
        const { stream, body } = await givenBothWays(dialect, mode, [{
          text: `Let me check.${before}${WRITTEN_BAD}`,
        }]);
        const reads = `Let me check.${said}toolguard stopped`;
        const what = `${dialect} ${mode} written after ${JSON.stringify(before)}`;
        assert.deepEqual(
          [stream.startsWith(reads), body.startsWith(reads)],
          [true, true],
          `${what}: ${stream}`,
        );
        assert.equal(stream, body, what);
      }
    }
  }
});
