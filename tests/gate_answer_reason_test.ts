// Several answers in one response (OpenAI Chat `n`, Gemini `candidateCount`): each answer that lost a call
// reads the reason for its own calls, counted within that answer, not the whole turn's, whole and streamed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { choiceChunk, sseData, withGuardedServer } from "./_fake_llm_server.ts";
import { gateCompletion, type GuardFetchOptions } from "../gate.ts";
import { createValidator, type Validator } from "../validate.ts";

const TOOLS = [{
  type: "function",
  function: {
    name: "weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
}];
const GEMINI_TOOLS = [{
  functionDeclarations: [{
    name: "weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  }],
}];

/** The calls of each answer: names, `weather` the only one declared (and so the only good one). */
const TURNS: { label: string; answers: string[][] }[] = [
  { label: "all bad", answers: [["drop_db"], ["rm_rf", "wipe_disk"]] },
  { label: "mixed", answers: [["drop_db", "weather"], ["rm_rf", "wipe_disk", "weather"]] },
  { label: "one answer clean", answers: [["weather"], ["rm_rf", "wipe_disk"]] },
];
const MODES = ["withhold-turn", "drop-call"] as const;

/** A whole Chat completion of one choice per answer, each making its calls. */
function chatBody(answers: string[][]): Record<string, unknown> {
  return {
    id: "c1",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: answers.map((names, index) => ({
      index,
      message: {
        role: "assistant",
        content: null,
        tool_calls: names.map((name, i) => ({
          id: `call_${index}_${i}`,
          type: "function",
          function: { name, arguments: '{"city": "Oslo"}' },
        })),
      },
      finish_reason: "tool_calls",
    })),
  };
}

/** The frames of a Chat stream of the same answers, each call in one delta, the choices interleaved. */
function chatFrames(answers: string[][]): unknown[] {
  const frames: unknown[] = answers.map((_, index) =>
    choiceChunk(index, { role: "assistant", content: null })
  );
  const most = Math.max(...answers.map((a) => a.length));
  for (let i = 0; i < most; i++) {
    for (const [index, names] of answers.entries()) {
      if (i >= names.length) continue;
      frames.push(choiceChunk(index, {
        tool_calls: [{
          index: i,
          id: `call_${index}_${i}`,
          type: "function",
          function: { name: names[i], arguments: '{"city": "Oslo"}' },
        }],
      }));
    }
  }
  for (const index of answers.keys()) frames.push(choiceChunk(index, {}, "tool_calls"));
  frames.push("data: [DONE]\n\n");
  return frames;
}

/** A Gemini candidate making `names`' calls. */
const candidate = (names: string[], index: number) => ({
  index,
  content: {
    role: "model",
    parts: names.map((name) => ({ functionCall: { name, args: { city: "Oslo" } } })),
  },
  finishReason: "STOP",
});

/** Each answer's text as a client joins it from a Chat stream. */
function chatStreamTexts(sse: string): string[] {
  const texts = ["", ""];
  for (const chunk of sseData(sse)) {
    for (const c of chunk.choices ?? []) texts[c.index] += c.delta?.content ?? "";
  }
  return texts;
}

/** Each candidate's text as a client joins it from a Gemini stream, by place. */
function geminiStreamTexts(sse: string): string[] {
  const texts = ["", ""];
  for (const chunk of sseData(sse)) {
    for (const [i, c] of (chunk.candidates ?? []).entries()) {
      for (const p of c?.content?.parts ?? []) texts[i] += p.text ?? "";
    }
  }
  return texts;
}

/** What a guarded stream of `sse` at `path` hands its client, with `request`. */
async function streamed(path: string, request: unknown, sse: unknown[], options: GuardFetchOptions) {
  const { value } = await withGuardedServer(() => ({ sse }), options, async (server, f) => {
    const res = await f(`${server.url}${path}`, { method: "POST", body: JSON.stringify(request) });
    return await res.text();
  });
  return value;
}

/**
 * Asserts each answer's text names only its own rejected calls and counts only its own calls; one whose
 * calls were all accepted reads, when the turn is withheld, that they were (under drop-call, nothing).
 */
function ownReasons(texts: string[], answers: string[][], what: string): void {
  const withheld = what.includes("withhold-turn");
  for (const [a, names] of answers.entries()) {
    const text = texts[a];
    const bad = names.filter((n) => n !== "weather");
    const others = answers.flat().filter((n) => n !== "weather" && !bad.includes(n));
    for (const name of bad) assert.match(text, new RegExp(name), `${what}: answer ${a} names ${name}`);
    for (const name of others) {
      assert.doesNotMatch(text, new RegExp(name), `${what}: answer ${a} names another answer's ${name}`);
    }
    if (bad.length === 0 && withheld) {
      assert.match(text, /accepted, but a tool call in another answer/, `${what}: answer ${a}`);
    } else if (bad.length === 0) assert.doesNotMatch(text, /toolguard/, `${what}: answer ${a}`);
    if (names.length > 1) {
      assert.match(text, new RegExp(`${bad.length} of ${names.length} calls`), `${what}: answer ${a}`);
    } else assert.doesNotMatch(text, /\d+ of \d+ calls/, `${what}: answer ${a}`);
  }
}

test("gateCompletion and guardFetch, Chat n=2: each choice reads the reason for its own calls, whole and streamed", async () => {
  for (const { label, answers } of TURNS) {
    for (const onRejected of MODES) {
      const what = `chat ${label} ${onRejected}`;
      const request = { model: "m", messages: [{ role: "user", content: "Hi" }], n: 2, tools: TOOLS };
      const gated = await gateCompletion(request, chatBody(answers), { onRejected });
      const whole = (gated.response as { choices: { message: { content: string | null } }[] }).choices
        .map((c) => c.message.content ?? "");
      ownReasons(whole, answers, `${what} whole`);
      const sse = await streamed("/v1/chat/completions", { ...request, stream: true }, chatFrames(answers), {
        onRejected,
      });
      ownReasons(chatStreamTexts(sse), answers, `${what} streamed`);
    }
  }
});

test("gateCompletion and guardFetch, Gemini candidateCount=2: each candidate reads the reason for its own calls, whole and streamed", async () => {
  for (const { label, answers } of TURNS) {
    for (const onRejected of MODES) {
      const what = `gemini ${label} ${onRejected}`;
      const request = {
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        tools: GEMINI_TOOLS,
        generationConfig: { candidateCount: 2 },
      };
      const gated = await gateCompletion(request, { candidates: answers.map(candidate) }, { onRejected });
      const whole = (gated.response as { candidates: { content: { parts: { text?: string }[] } }[] })
        .candidates
        .map((c) => c.content.parts.map((p) => p.text ?? "").join(""));
      ownReasons(whole, answers, `${what} whole`);
      const chunks = [{ candidates: answers.map((names, i) => candidate(names, i)) }];
      const sse = await streamed(
        "/v1beta/models/gemma-3-27b-it:streamGenerateContent?alt=sse",
        request,
        chunks,
        { onRejected },
      );
      ownReasons(geminiStreamTexts(sse), answers, `${what} streamed`);
    }
  }
});

test("gateCompletion and guardFetch, Chat n=2: calls written into each choice's text read their own reasons, whole and streamed", async () => {
  const written = (names: string[]) =>
    "Sure. " +
    names.map((name) => `<tool_call>\n{"name": "${name}", "arguments": {"city": "Oslo"}}\n</tool_call>`)
      .join("\n");
  for (const { label, answers } of TURNS) {
    for (const onRejected of MODES) {
      const what = `chat written ${label} ${onRejected}`;
      const request = { model: "m", messages: [{ role: "user", content: "Hi" }], n: 2, tools: TOOLS };
      const body = chatBody([[], []]);
      for (const [i, c] of (body.choices as { message: Record<string, unknown> }[]).entries()) {
        c.message = { role: "assistant", content: written(answers[i]) };
      }
      const gated = await gateCompletion(request, body, { onRejected });
      const whole = (gated.response as { choices: { message: { content: string } }[] }).choices
        .map((c) => c.message.content);
      // (a kept call stays in the text: only the reasons are read)
      const reasons = (texts: string[]) => texts.map((t) => t.split("toolguard")[1] ?? "");
      ownReasons(reasons(whole), answers, `${what} whole`);
      const frames = [
        ...answers.map((names, index) => choiceChunk(index, { role: "assistant", content: written(names) })),
        ...answers.map((_, index) => choiceChunk(index, {}, "stop")),
        "data: [DONE]\n\n",
      ];
      const sse = await streamed("/v1/chat/completions", { ...request, stream: true }, frames, {
        onRejected,
      });
      assert.deepEqual(chatStreamTexts(sse), whole, what);
    }
  }
});

test("gateCompletion, Chat with many choices: each choice's reason reads the verdict's calls once in all, not once per choice", async () => {
  const answers = Array.from({ length: 2000 }, (_, i) => [i % 2 === 0 ? "drop_db" : "weather"]);
  const validator = createValidator(TOOLS);
  let reads = 0;
  const counted: Validator = {
    ...validator,
    validate(calls) {
      const verdict = validator.validate(calls);
      // (each read of a call of the verdict counted: a choice's reason asks only of its own)
      const seen = new Proxy(verdict.calls, {
        get(target, key, receiver) {
          if (typeof key === "string" && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver);
        },
      });
      return { ...verdict, calls: seen };
    },
  };
  const request = { model: "m", messages: [{ role: "user", content: "Hi" }], tools: TOOLS };
  const gated = await gateCompletion(request, chatBody(answers), { validator: counted });
  const texts = (gated.response as { choices: { message: { content: string } }[] }).choices
    .map((c) => c.message.content);
  assert.match(texts[0], /drop_db/);
  assert.match(texts[1], /accepted, but a tool call in another answer/);
  // (a few reads per call, whatever the number of choices: once per choice read 2000 x 2000)
  assert.ok(reads < 20 * answers.length, `${reads} reads of ${answers.length} calls`);
});

test("gateCompletion and guardFetch: a caller's message is asked once a turn, so the answer reads what the result and onVerdict report", async () => {
  for (const onRejected of MODES) {
    for (const answers of [[["drop_db", "weather"]], [["drop_db"], ["weather"]]]) {
      const what = `${onRejected} ${answers.length} answers`;
      let asked = 0;
      const message = () => `blocked (${++asked})`;
      const n = answers.length;
      const request = { model: "m", messages: [{ role: "user", content: "Hi" }], n, tools: TOOLS };
      const gated = await gateCompletion(request, chatBody(answers), { onRejected, message });
      const whole = (gated.response as { choices: { message: { content: string | null } }[] }).choices
        .map((c) => c.message.content ?? "");
      assert.equal(whole[0], gated.reason, `${what} whole`);
      const reasons: (string | undefined)[] = [];
      const sse = await streamed("/v1/chat/completions", { ...request, stream: true }, chatFrames(answers), {
        onRejected,
        message,
        onVerdict: (event) => reasons.push(event.reason),
      });
      assert.equal(chatStreamTexts(sse)[0], reasons[0], `${what} streamed`);
    }
  }
});
