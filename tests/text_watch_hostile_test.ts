// The streaming gate judges every shape of call that extraction reads from whole text (driven through
// guardFetch and a real local server, as the stream tests are).
import { test } from "node:test";
import assert from "node:assert/strict";
import { TextWatcher } from "../_gate/text_watch.ts";
import { callMayStart } from "../_extract/watch.ts";
import { ReleasedText } from "../_extract/released.ts";
import { chatChunk, fakeProvider, ollamaStream, TOOLS_OPENAI } from "./_fake_llm_server.ts";
import { countingWork } from "./_counting.ts";
import { seededRandom } from "./_random.ts";

const provider = fakeProvider();
const seen = provider.events;

/** Streams `pieces` as an Ollama message through the gate; returns the text the client got. */
async function streamed(pieces: string[]): Promise<string> {
  provider.reply({ ndjson: ollamaStream(pieces) });
  const res = await provider.gfetch(`${provider.url()}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, tools: TOOLS_OPENAI }),
  });
  const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[lines.length - 1].done, true);
  return lines.map((o) => o.message?.content ?? "").join("");
}

/** Feeds `text` to `w` seven characters at a time, letting a hold go once it cannot be a call, as the stream gate does. */
function feedInPieces(w: TextWatcher, text: string): void {
  for (let i = 0; i < text.length; i += 7) {
    w.push(text.slice(i, i + 7));
    if (w.holding && !w.couldBeCall()) w.abandon();
  }
}

/**
 * {@linkcode feedInPieces}, counting the characters handed to regular expressions meanwhile, by the length of
 * the text each is run on: the work, not timed.
 */
async function readWhileFed(w: TextWatcher, text: string): Promise<number> {
  const [, read] = await countingWork(
    RegExp.prototype,
    "exec",
    () => feedInPieces(w, text),
    (_: RegExp, [input]: string[]) => input.length,
  );
  return read;
}

test("guardFetch: calls written without a literal marker are held and judged in a stream", async () => {
  // `units: "k"` is outside the enum: each call must be rejected, and its text must not reach the client.
  const cases: string[][] = [
    ['[get_weather(city="Oslo", ', 'units="k")]'],
    ['[get_weather(city="Oslo", units="k")]'],
    ["Sure: [get_wea", 'ther(city="Oslo", units="k")]'],
    ['Sure: {"name": "get_weather", ', '"arguments": {"city": "Oslo", "units": "k"}}'],
    ['Sure: {"na', 'me": "get_weather", "arguments": {"city": "Oslo", "units": "k"}}'],
    ["get_weather\n", '{"city": "Oslo", "units": "k"}'],
    ["get_wea", "ther", '\n{"city": "Oslo", "units": "k"}'],
    ['{"tool_calls": [{"name": "get_weather", ', '"arguments": {"city": "Oslo", "units": "k"}}]}'],
    ['{"function_name": "get_weather", ', '"arguments": {"city": "Oslo", "units": "k"}}'],
    ['{"call_id": "c1", "name": "get_weather", ', '"arguments": {"city": "Oslo", "units": "k"}}'],
    ['[{"tool_call_id": "0", "tool_name": "get_weather", ', '"parameters": {"city": "Oslo", "units": "k"}}]'],
  ];
  for (const pieces of cases) {
    const content = await streamed(pieces);
    const label = JSON.stringify(pieces);
    assert.equal(seen.length, 1, label);
    assert.equal(seen[0].verdict.allowed, false, label);
    assert.ok(!content.includes(pieces.join("").slice(-12)), `${label}: ${content}`);
  }
});

test("guardFetch: prose with brackets and braces still streams through unchanged", async () => {
  const pieces = ["See [1] and [the docs](http://x). ", "A set {a, b} ", 'and {"city": 1} here.', " Done"];
  assert.equal(await streamed(pieces), pieces.join(""));
  assert.equal(seen.length, 0);
});

test("guardFetch Ollama stream: a rejected call written across an empty chunk or a thinking piece is cut whole", async () => {
  // Such a chunk was taken for the end of the text: the tail that may become a marker went out, and the
  // client read "Sure. <tool_call" before the reason (a body reads the message's text whole and cuts it all).
  const chunk = (content: string, more: Record<string, unknown> = {}) => ({
    model: "m",
    message: { role: "assistant", content, ...more },
    done: false,
  });
  for (const thinking of [undefined, "Hmm."]) {
    provider.reply({
      ndjson: [
        chunk("Sure. "),
        chunk("<tool_call"),
        chunk("", thinking === undefined ? {} : { thinking }),
        chunk('>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>'),
        { model: "m", message: { role: "assistant", content: "" }, done: true, done_reason: "stop" },
      ],
    });
    const res = await provider.gfetch(`${provider.url()}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, tools: TOOLS_OPENAI }),
    });
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
    const content = lines.map((o) => o.message?.content ?? "").join("");
    assert.equal(seen[0].verdict.allowed, false);
    assert.match(content, /^Sure\.\s*toolguard stopped /);
    assert.doesNotMatch(content, /tool_call/);
    assert.equal(lines.map((o) => o.message?.thinking ?? "").join(""), thinking ?? "");
  }
});

test("TextWatcher: a bare JSON call streamed in thousands of pieces is watched in linear time", async () => {
  const w = new TextWatcher({ json: true });
  const opening = '{"name": "write_file", "arguments": {"text": "';
  w.push(opening);
  const n = 5_000;
  // Characters handed to regular expressions count the work without depending on the machine's speed: the
  // whole held text was read for its first key at every piece (125 million characters here).
  const [, read] = await countingWork(RegExp.prototype, "exec", () => {
    for (let i = 0; i < n; i++) {
      w.push("word ");
      assert.equal(w.couldBeCall(), true);
    }
  }, (_: RegExp, [text]: string[]) => text.length);
  assert.equal(w.held.length, opening.length + 5 * n);
  assert.ok(read < 100 * n, `${read} characters read for ${n} pieces`);
  // Structured output is still told apart by its first key, and white space before the key waits for it.
  const other = new TextWatcher({ json: true });
  other.push('{"city": "Oslo", ');
  assert.equal(other.couldBeCall(), false);
  const spaced = new TextWatcher({ json: true });
  spaced.push("{   ");
  assert.equal(spaced.couldBeCall(), true);
  spaced.push('"tool_calls": [');
  assert.equal(spaced.couldBeCall(), true);
});

test("TextWatcher: an answer that quotes markers in prose hundreds of times is watched in linear work", async () => {
  // Each quoted marker is held until the prose after it shows it is no call, and each ask read the whole text
  // again for its reasoning (3 billion characters for 1 000 repetitions of the first piece, 372 billion for the
  // second); now about 60 000 and 120 000 a repetition.
  const pieces = [
    "Say <tool_call> is a tag, and the model writes its JSON after it in most of the chat templates. ",
    "<think>hmm</think> Say <tool_call> is a tag, and the model writes its JSON after it in most templates. ",
    "<think>Say <tool_call> is a tag, and the model writes its JSON after it in most templates.",
    "Use ```json\n{ here } and the model writes its JSON after it in most of the chat templates.\n```\n",
  ];
  const n = 400;
  for (const piece of pieces) {
    const text = piece.repeat(n);
    const w = new TextWatcher({ tools: TOOLS_OPENAI });
    const read = await readWhileFed(w, text);
    assert.equal(w.visible, text.slice(0, w.visible.length));
    assert.ok(text.length - w.visible.length < 200, "the prose was released as it came");
    assert.ok(read < 300_000 * n, `${read} characters read for ${n} pieces of ${JSON.stringify(piece)}`);
  }
});

test("TextWatcher: an answer that opens with JSON and then quotes markers in prose is watched in linear work", async () => {
  // A message that opens with JSON is read by its own reader first, so every held marker read the whole text
  // again (406 million characters for 400 repetitions after `[1] `); once that JSON has ended in the
  // released text, the window goes on after it.
  const piece =
    "Say <tool_call> is a tag, and the model writes its JSON after it in most of the chat templates. ";
  const n = 400;
  for (const head of ["[1] ", '{"a": 1} ', '{"a": 1}, {"b": "</think>"} ', "<think>x</think>[2]\n"]) {
    const text = head + piece.repeat(n);
    const w = new TextWatcher({ json: true, tools: TOOLS_OPENAI });
    const read = await readWhileFed(w, text);
    assert.ok(text.length - w.visible.length < 200, "the prose was released as it came");
    assert.ok(read < 300_000 * n, `${read} characters read for ${n} pieces after ${JSON.stringify(head)}`);
  }
});

test("TextWatcher: an answer that opens with JSON that never closes and quotes markers in it is watched in linear work", async () => {
  // JSON that has not closed is read by its reader from the answer on whenever a held marker is asked about
  // (the text may still close it), so each held marker read the whole text again (about 8 s for 1 000
  // repetitions, 120 s for 4 000); the scan of that JSON is now carried on as the text grows.
  const piece =
    "Say <tool_call> is a tag, and the model writes its JSON after it in most of the chat templates. ";
  const n = 400;
  for (
    const head of [
      '{"a": "',
      '{"a": [1, {"b": "x\\" ',
      '[{"a": "\\"',
      '["x", 2, "',
      '<think>x</think>{"k": [',
    ]
  ) {
    const text = head + piece.repeat(n);
    const w = new TextWatcher({ tools: TOOLS_OPENAI });
    const read = await readWhileFed(w, text);
    assert.ok(text.length - w.visible.length < 200, "the prose was released as it came");
    assert.ok(read < 300_000 * n, `${read} characters read for ${n} pieces after ${JSON.stringify(head)}`);
  }
});

test("TextWatcher: an answer that opens with closed JSON, then JSON that may still be read on, is watched in linear work", async () => {
  // JSON whose first value closed but whose reader may still read on (a run's next object that has not
  // closed, an array that has not closed, a value that closed but did not parse, a run of objects) was read
  // from the answer on at every held marker: 1 000 repetitions took 2.5 to 8 s. What the reader has read is
  // now carried on as the text grows.
  const prose =
    "Say <tool_call> is a tag, and the model writes its JSON after it in most of the chat templates.";
  const n = 400;
  for (
    const [head, piece] of [
      ['{"a": 1}, {"b": "', prose],
      ['{"a": 1} {"b": "', prose],
      ['{"a": 1}; {"b": [', prose],
      ['[{"a": 1}, "', prose],
      ['[{"a": 1}, {"b": 2} "', prose],
      ['[{"a": 1} "x"] ', prose],
      ['{"a": 1}, {b} ', prose],
      // Runs of objects that each quote a marker: every object read is read on from.
      ["[", `{"a": "${prose}"}, `],
      ['{"a": 1}, ', `{"b": "${prose}"}\n`],
    ]
  ) {
    const text = head + piece.repeat(n);
    const w = new TextWatcher({ tools: TOOLS_OPENAI });
    const read = await readWhileFed(w, text);
    assert.ok(text.length - w.visible.length < 200, "the prose was released as it came");
    assert.ok(read < 300_000 * n, `${read} characters read for ${n} pieces after ${JSON.stringify(head)}`);
  }
});

test("ReleasedText: the window read for a held marker answers as the whole text does", () => {
  // Reasoning tags, harmony headers, calls, fences and prose, released in random steps: `callMayStart` over
  // the window must give the answer it gives over the whole text, wherever the window can stand for it.
  const words = [
    "<think>",
    "</think>",
    "[THINK]",
    "[/THINK]",
    "<|channel|>analysis<|message|>",
    "<|end|>",
    "<|return|>",
    "<|start|>assistant to=functions.f",
    "<|start|>assistant<|channel|>analysis<|message|>",
    "<tool_call>",
    '<tool_call>{"name":"get_weather","arguments":{"city":"x"}}</tool_call>',
    "</tool_call>",
    " ",
    "\n",
    "hello ",
    '{"name":"get_weather","arguments":{}}',
    '{"a":1}',
    "```json\n",
    "```\n",
    "[TOOL_CALLS]",
    "x".repeat(200),
    '"',
    '"}',
    "]}",
    "\\",
    ' ", "k": [1, 2.5, null], ',
    "}\n",
    " ".repeat(100),
    "<|python_tag|>",
    "[BEGIN FINAL RESPONSE]",
    ' to=functions.get_weather<|channel|>commentary json<|message|>{"city":"x"}<|call|>',
  ];
  // Answers that open with JSON (its reader reads it first, and no call is read inside it), closed or not.
  const heads = [
    "",
    "",
    "[1] ",
    '{"a": 1} ',
    '{"a": 1}, {"b": "</think>"} ',
    '{"a": "x ',
    "<think>x</think>[2]\n",
    // JSON that has not closed yet: strings with escapes, nested arrays, numbers; the words may close it later.
    '{"a": "x \\" ',
    '{"a": [1, -2.5e3, {"b": "\\\\',
    '[{"a": [[1], "x\\"y", ',
    '[{"a": 1}, "',
    '["x", 2, {"c": "',
    "[ , \n",
    '{{"name": "',
    '<think>x</think>{"a": "',
    // JSON whose first value closed, and which its reader may still read on, or not.
    '{"a": 1}, {"b": "',
    '[{"a": 1} "',
    '{"a": 1}, {b} ',
    '{{"b": 1} "',
    '[{"a": 1}, {"b": 2}, 3, "',
  ];
  const draw = seededRandom(7);
  const random = (n: number) => Math.floor(draw() * n);
  let windows = 0;
  for (let round = 0; round < 300; round++) {
    let text = heads[random(heads.length)];
    for (let i = 50 + random(300); i > 0; i--) text += words[random(words.length)];
    const released = new ReleasedText();
    for (let at = 0; at < text.length;) {
      const next = Math.min(text.length, at + 1 + random(300));
      released.push(text.slice(at, next));
      at = next;
      const whole = text.slice(0, at + random(200));
      const from = at - (random(5) === 0 ? random(5) : 0);
      const window = released.window(from, whole.slice(at));
      if (!window) continue;
      windows++;
      const inWindow = callMayStart(window.text + whole.slice(at), window.from, { tools: TOOLS_OPENAI });
      assert.equal(
        inWindow === -1 ? -1 : inWindow - window.from + from,
        callMayStart(whole, from, { tools: TOOLS_OPENAI }),
        `round ${round}, from ${from}`,
      );
    }
  }
  assert.ok(windows > 1000, `${windows} windows`);
  // The window starting inside a harmony `<|start|>`: read back without the token, the analysis header after
  // it took the earlier recipient for its own (a call, not reasoning), and a `<think>` in the analysis hid
  // the `[TOOL_CALLS]` after it.
  const head = "I would write <tool_call> tags for that. " + "x ".repeat(600) +
    "<|start|>assistant to=functions.f";
  const analysis = "<|start|>assistant<|channel|>analysis<|message|><think> hmm<|end|>";
  const from = head.length + 2 + 512; // (the window keeps 512 characters before the release point)
  const text = head + analysis + " ".repeat(from - head.length - analysis.length);
  const held = "[TOOL_CALLS]</think> Done.";
  assert.equal(callMayStart(text + held, from, { tools: TOOLS_OPENAI }), from); // (the analysis is reasoning)
  const released = new ReleasedText();
  released.push(text);
  const window = released.window(from, held)!;
  assert.equal(callMayStart(window.text + held, window.from, { tools: TOOLS_OPENAI }), window.from);
});

test("TextWatcher: a cut-off shape that ends in a marker's start keeps the marker's start too", () => {
  const w = new TextWatcher({ json: true });
  assert.equal(w.push("Calling ]<]minimax[>["), "Calling ");
  w.push("<tool_call>\n");
  assert.equal(w.holding, true);
  assert.equal(w.visible, "Calling ");
});

test("TextWatcher: a fence's language line is released once it cannot name JSON, and its backticks open no fence", () => {
  const w = new TextWatcher({ tools: TOOLS_OPENAI });
  assert.equal(w.push("Try ```js"), "Try "); // may become ```json
  assert.equal(w.push("on is fine, or ```python"), "```json is fine, or ```python"); // cannot: code of its own
  // Extraction reads the whole line as the language of one fence, closed by the backticks after print(1):
  // read as three fences, those backticks opened a bare fence, held to the end of the stream.
  assert.equal(w.push("\nprint(1)\n```\n"), "\nprint(1)\n```\n");
  assert.equal(w.push("Done."), "Done.");
  assert.equal(w.holding, false);
  const bare = new TextWatcher({ tools: TOOLS_OPENAI });
  assert.equal(bare.push("Here ``` "), "Here "); // (white space: the line may still end bare, or name json)
  assert.equal(bare.push(" tool_call "), "");
  assert.equal(bare.push("now"), "```  tool_call now");
});

test("TextWatcher: two opening tags quoted close together in prose are released once neither can begin a call", () => {
  // The first tag's body is cut off by the second, so nothing can come between them: it was taken for a call
  // whose body had not arrived yet, and the text from it was held to the end of the stream.
  const prose = " is a tag, and the model writes its JSON after it in most of the chat templates. ".repeat(4);
  for (
    const tags of [
      "<tool_call><tool_call>",
      "<tool_call> <tool_call>",
      "<tool_call> or <tool_call>", // (GLM: `<tool_call>NAME`, its arguments cut off by the next tag)
      "<tool_calls>\n<tool_calls>",
      "<|tool_call|> <|tool_call|>",
      "<TOOLCALL><TOOLCALL>",
      "<seed:tool_call> <seed:tool_call>",
      "<minimax:tool_call> <minimax:tool_call>",
    ]
  ) {
    const text = "Say " + tags + prose;
    assert.equal(callMayStart(text, 0, { tools: TOOLS_OPENAI }), -1, tags);
    const w = new TextWatcher({ tools: TOOLS_OPENAI });
    feedInPieces(w, text);
    assert.equal(w.holding, false, tags);
    assert.equal(w.visible, text, tags);
  }
  // A call after the second tag is still held from it, and one whose body has not arrived from the first.
  const open = '{"name": "get_weather", "arguments": {"city": "' + "Oslo ".repeat(20);
  assert.equal(callMayStart("Say <tool_call> <tool_call>" + open), 16);
  assert.equal(callMayStart("Say <tool_call> "), 4);
});

test("TextWatcher: prose fed one character at a time is watched in linear work", async () => {
  // Characters handed to regular expressions and copied by slices count the work without depending on the
  // machine's speed (a timed version of this test failed on a busy machine): six times the text must cost
  // about six times the work, where a path that re-reads the text at each character costs 36 times.
  const prose = "The quick brown fox jumps over the lazy dog. ";
  const workOf = async (n: number) => {
    const text = prose.repeat(Math.ceil(n / prose.length)).slice(0, n);
    const w = new TextWatcher({ json: true });
    const [[, sliced], read] = await countingWork(
      RegExp.prototype,
      "exec",
      () =>
        countingWork(String.prototype, "slice", () => {
          for (let i = 0; i < text.length; i++) w.push(text[i]);
        }, (_: string, _args: unknown[], copied: string) => copied.length),
      (_: RegExp, [input]: string[]) => input.length,
    );
    assert.equal(w.visible, text);
    return { read, sliced };
  };
  // (10 000 characters show a re-read plainly: at each character it reads 10 000 times more than it pushes)
  const small = await workOf(10_000);
  const large = await workOf(60_000);
  for (const kind of ["read", "sliced"] as const) {
    assert.ok(small[kind] > 0, `no ${kind} work counted`);
    assert.ok(large[kind] < 10 * small[kind], `${kind}: ${small[kind]} -> ${large[kind]} characters`);
  }
});

test("guardFetch: a streamed text call whose arguments nest 50k deep is judged; the stream ends", async () => {
  const depth = 50_000;
  const call = `<tool_call>{"name": "get_weather", "arguments": {"city": ${"[".repeat(depth)}${
    "]".repeat(depth)
  }}}</tool_call>`;
  const content = await streamed(["Checking. ", call]);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].verdict.allowed, false);
  assert.ok(!content.includes("[[["));
});

test("guardFetch Chat stream: a frame of thousands of content parts that starts a call is held in linear time", async () => {
  const n = 4_000;
  const parts = Array.from({ length: n }, (_, i) => ({ type: "text", text: i === 0 ? "<tool_call>" : "x" }));
  provider.reply({
    sse: [chatChunk({ role: "assistant", content: parts }), chatChunk({}, "stop"), "data: [DONE]\n\n"],
  });
  // Elements searched count the work without depending on the machine's speed: the frame's text parts were
  // searched for each of its parts (16 million here).
  const [text, searched] = await countingWork(Array.prototype, "includes", async () => {
    const res = await provider.gfetch(`${provider.url()}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [], stream: true, tools: TOOLS_OPENAI }),
    });
    return await res.text();
  }, (self: unknown[]) => self.length);
  assert.ok(searched < 100 * n, `${searched} elements searched for ${n} parts`);
  assert.match(text, /"text":"<tool_call>"/); // (no call: the frame goes out as it came)
});
