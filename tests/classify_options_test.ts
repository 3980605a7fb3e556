// classify() checks its options as runTool does (one check for both): an option that would be ignored or read
// another way is a TypeError saying what to give, where runTool refuses it as `spawn` with the same sentence.
import { test } from "node:test";
import assert from "node:assert/strict";
import { classify, type ClassifyOptions, runTool } from "../guard.ts";
import { classifyOptionsProblem, readOptions } from "../_run/classify.ts";
import { fake, launcher } from "./_guard_helpers.ts";

const T = { timeout: 60_000 };
/** Exit 1 and no output: grep's and rg's "no match". */
const noMatch = { exitCode: 1, signal: null, stdout: "" };

/** Options written wrong, each with the option its refusal names. */
const wrong: [string, Record<string, unknown>][] = [
  ["protocol", { protocol: "csv" }],
  ["exitCodes", { exitCodes: { 1: "emtpy" } }],
  ["exitCodes", { exitCodes: { 1: true } }],
  ["exitCodes", { exitCodes: { one: "empty" } }],
  // A key no exit status is written as: never read, so ignored without a word.
  ["exitCodes", { exitCodes: { "01": "empty" } }],
  ["exitCodes", { exitCodes: { "1.0": "empty" } }],
  // Beyond 32 bits: no system reports such a status (Windows keeps 32 bits, POSIX 8).
  ["exitCodes", { exitCodes: { "4294967296": "empty" } }],
  ["exitCodes", { exitCodes: { "99999999999999999999999": "empty" } }],
  // Exit 0 is success already (the CLI refuses --empty-exit 0).
  ["exitCodes", { exitCodes: { 0: "empty" } }],
  // An entry of its own that is not enumerable is read all the same, so it is checked too.
  ["exitCodes", { exitCodes: Object.defineProperty({}, 1, { value: "emtpy" }) }],
  ["exitCodes", { exitCodes: "1" }],
  ["exitCodes", { exitCodes: [1] }],
  // A Map's entries are no properties: never read, so ignored without a word.
  ["exitCodes", { exitCodes: new Map([[1, "empty"]]) }],
  ["exitCodes", { exitCodes: new Set([1]) }],
  ["encoding", { encoding: "nope" }],
  ["onOverflow", { onOverflow: "cut" }],
  ["maxDetail", { maxDetail: 0 }],
  ["maxOutputBytes", { maxOutputBytes: -1 }],
  ["timeoutMs", { timeoutMs: "100" }],
];

test("classify: options written wrong are a TypeError naming the option and what to give", () => {
  for (const [name, options] of wrong) {
    assert.throws(
      () => classify(noMatch, { protocol: "lines", ...options } as ClassifyOptions),
      (error: unknown) =>
        error instanceof TypeError &&
        new RegExp(`^classify\\(\\): invalid option ${name}\\b.*: (give|use|exit code 0)`).test(
          error.message,
        ),
      JSON.stringify(options),
    );
  }
  // The sentence is runTool's own.
  assert.throws(
    () => classify(noMatch, { protocol: "csv" as never }),
    /^TypeError: classify\(\): invalid option protocol "csv": use envelope, json, jsonl, lines, text or a function$/,
  );
  assert.throws(
    () => classify(noMatch, { exitCodes: { 0: "empty" } }),
    /^TypeError: classify\(\): invalid option exitCodes \{ "0": "empty" \}: exit code 0 already means success/,
  );
});

test("classify: options written right still classify, negative exit codes (Windows statuses) included", () => {
  const lines = { protocol: "lines", exitCodes: { 1: "empty", [-1]: "empty" } } as const;
  assert.equal(classify(noMatch, lines).kind, "empty");
  assert.equal(classify({ ...noMatch, exitCode: -1 }, lines).kind, "empty");
  assert.equal(classify({ ...noMatch, exitCode: 2 }, lines).kind, "exit");
  const given: ClassifyOptions = {
    encoding: "latin1",
    onOverflow: "truncate",
    maxDetail: 50,
    maxOutputBytes: 10,
    timeoutMs: 5,
  };
  assert.deepEqual(classify({ ...noMatch, exitCode: 0, stdout: "a\n" }, { ...lines, ...given }).items, ["a"]);
});

test("classify: an exitCodes entry inherited through the prototype is not read", () => {
  const inherited = Object.create({ 1: "empty" }) as Record<number, "empty">;
  const r = classify(noMatch, { protocol: "lines", exitCodes: inherited });
  assert.equal(r.kind, "exit", r.detail);
  assert.equal(r.items, null);
});

test(
  "runTool: exitCodes that classify refuses are refused before anything runs, and inherited ones unread",
  T,
  async () => {
    for (const exitCodes of [{ 0: "empty" }, { "01": "empty" }, new Map([[1, "empty"]])]) {
      const r = await runTool(launcher.command, fake("exit", "1"), { protocol: "lines", exitCodes } as never);
      assert.equal(r.kind, "spawn", `${JSON.stringify(exitCodes)}: ${r.detail}`);
      assert.match(r.detail, /^invalid option exitCodes /);
    }
    const inherited = Object.create({ 1: "empty" }) as Record<number, "empty">;
    const r = await runTool(launcher.command, fake("exit", "1"), { protocol: "lines", exitCodes: inherited });
    assert.equal(r.kind, "exit", r.detail);
    assert.equal(r.exitCode, 1);
  },
);

test(
  "classify and runTool: an option's value that JSON cannot write is named, never an internal error",
  T,
  async () => {
    // JSON.stringify throws on a BigInt and writes a symbol as undefined; a long string is echoed clipped.
    const odd: [Record<string, unknown>, RegExp][] = [
      [{ protocol: 1n }, /^invalid option protocol 1: use /],
      [{ encoding: 1n }, /^invalid option encoding 1: give /],
      [{ onOverflow: 1n }, /^invalid option onOverflow 1: use /],
      [{ protocol: Symbol("lines") }, /^invalid option protocol symbol: use /],
      [{ encoding: Symbol("utf-8") }, /^invalid option encoding symbol: give /],
      [{ protocol: "x".repeat(100_000) }, /^invalid option protocol "x{1,300}\u2026/],
      [{ exitCodes: { ["1".repeat(100_000)]: "emtpy" } }, /^invalid option exitCodes \{ "1{1,300}\u2026/],
    ];
    for (const [options, sentence] of odd) {
      assert.throws(
        () => classify(noMatch, options as ClassifyOptions),
        (error: unknown) =>
          error instanceof TypeError && sentence.test(error.message.replace(/^classify\(\): /, "")),
        String(Object.keys(options)),
      );
      const r = await runTool(launcher.command, fake("exit", "1"), options as never);
      assert.equal(r.kind, "spawn", r.detail);
      assert.match(r.detail, sentence);
    }
  },
);

test("runTool: a maxDetail it refuses does not cut its own refusal, nor make runTool reject", T, async () => {
  for (const maxDetail of [0, -1, 0.5, NaN, "abc", 1n]) {
    const r = await runTool(launcher.command, fake("exit", "1"), { maxDetail } as never);
    assert.equal(r.kind, "spawn", String(maxDetail));
    assert.match(r.detail, /^invalid option maxDetail .+: give a number of characters of at least 1$/);
  }
});

test("classify: the smallest maxDetail still marks a cut detail, and a fraction counts whole characters", () => {
  const failed = { exitCode: 2, signal: null, stdout: "", stderr: "a long reason the tool gave" };
  // One character: the mark alone, never a first letter that would pass for the whole detail.
  assert.equal(classify(failed, { maxDetail: 1 }).detail, "\u2026");
  assert.equal(classify(failed, { maxDetail: 1.9 }).detail, "\u2026");
  assert.equal(classify(failed, { maxDetail: 2 }).detail, "t\u2026");
  assert.equal(classify(failed, { maxDetail: 3.5 }).detail, "th\u2026");
});

/** Options whose `protocol` getter says "lines" the first time and "csv" after, counting its reads. */
function fickle(): { options: ClassifyOptions; reads(): number } {
  let reads = 0;
  const options = {
    get protocol() {
      return reads++ === 0 ? "lines" : "csv";
    },
  } as ClassifyOptions;
  return { options, reads: () => reads };
}

test(
  "classify and runTool: each option is read once, so the run uses the value that was checked",
  T,
  async () => {
    const lines = { exitCode: 0, signal: null, stdout: "a\nb\n" };
    const once = fickle();
    assert.deepEqual(classify(lines, once.options).items, ["a", "b"]);
    assert.equal(once.reads(), 1);
    const run = fickle();
    const r = await runTool(launcher.command, fake("lines"), run.options);
    assert.equal(r.kind, "results", r.detail);
    assert.equal(run.reads(), 1);
  },
);

test(
  "classify and runTool: an option whose read throws is the caller's fault, never the guard's",
  T,
  async () => {
    const throwing: [Record<string, unknown>, RegExp][] = [
      [
        Object.defineProperty({}, "maxDetail", {
          get() {
            throw new Error("no maxDetail today");
          },
        }),
        /^invalid options: reading maxDetail threw: no maxDetail today$/,
      ],
      [
        Object.create({
          get protocol() {
            throw new RangeError("inherited getter");
          },
        }),
        /^invalid options: reading protocol threw: inherited getter$/,
      ],
      [
        {
          exitCodes: new Proxy({}, {
            ownKeys() {
              throw new Error("no keys");
            },
          }),
        },
        /^invalid options: reading exitCodes threw: no keys$/,
      ],
      [
        {
          exitCodes: Object.defineProperty({}, 1, {
            get() {
              throw new Error("no entry");
            },
          }),
        },
        /^invalid options: reading exitCodes entry "1" threw: no entry$/,
      ],
    ];
    for (const [options, sentence] of throwing) {
      assert.throws(
        () => classify(noMatch, options as ClassifyOptions),
        (error: unknown) =>
          error instanceof TypeError && sentence.test(error.message.replace(/^classify\(\): /, "")),
        sentence.source,
      );
      const r = await runTool(launcher.command, fake("exit", "1"), options as never);
      assert.equal(r.kind, "spawn", r.detail);
      assert.match(r.detail, sentence);
      assert.equal(r.exitCode, null);
    }
  },
);

test(
  "classify and runTool: a getter that throws a value whose prototype cannot be read is still the caller's fault",
  T,
  async () => {
    // The thrown value is the caller's too: asking what it is must not throw again (runTool never rejects).
    const untouchable = new Proxy({}, {
      getPrototypeOf() {
        throw new Error("no prototype");
      },
    });
    const options = {
      get protocol() {
        throw untouchable;
      },
    } as ClassifyOptions;
    const sentence = /^invalid options: reading protocol threw: a thrown object with no text$/;
    assert.throws(
      () => classify(noMatch, options),
      (error: unknown) =>
        error instanceof TypeError && sentence.test(error.message.replace(/^classify\(\): /, "")),
    );
    const r = await runTool(launcher.command, fake("exit", "1"), options);
    assert.equal(r.kind, "spawn", r.detail);
    assert.match(r.detail, sentence);
  },
);

test("runTool: each env value is read once, so the tool gets the value that was checked", T, async () => {
  let reads = 0;
  const env = {
    get TG_FICKLE() {
      return reads++ === 0 ? "checked" : "unchecked";
    },
  };
  const r = await runTool(launcher.command, fake("env", "TG_FICKLE"), { env });
  assert.equal(r.kind, "results", r.detail);
  assert.equal((r.items?.[0] as { vars: Record<string, string | null> }).vars.TG_FICKLE, "checked");
  assert.equal(reads, 1);
  // A value read as text and then as no text reaches neither runtime's spawn (Deno refused it, Bun wrote it).
  let later = 0;
  const shifty = {
    get TG_SHIFTY() {
      return later++ === 0 ? "text" : { toString: () => "no text" };
    },
  } as unknown as Record<string, string>;
  const s = await runTool(launcher.command, fake("env", "TG_SHIFTY"), { env: shifty });
  assert.equal(s.kind, "results", s.detail);
  assert.equal((s.items?.[0] as { vars: Record<string, string | null> }).vars.TG_SHIFTY, "text");
});

test("classify: an encoding given as an object is made text once, so the run decodes with the label checked", () => {
  // Cut at 4 bytes of "ab\ncd\n": the truncating decode is the run's second use of the label.
  const cut = { exitCode: null, signal: "SIGTERM", killedBy: "overflow" as const, stdout: "ab\ncd\n" };
  const options = { protocol: "lines", onOverflow: "truncate", maxOutputBytes: 4 } as const;
  let calls = 0;
  const fickle = { toString: () => calls++ === 0 ? "utf-8" : "utf-16le" };
  const r = classify(cut, { ...options, encoding: fickle as never });
  assert.equal(r.kind, "results", r.detail);
  assert.deepEqual(r.items, ["ab"]);
  assert.equal(calls, 1);
  // One that throws when asked again never turns a run into "spawn" (the tool did run).
  let asked = 0;
  const once = {
    toString() {
      if (asked++ > 0) throw new Error("asked twice");
      return "utf-8";
    },
  };
  const s = classify(cut, { ...options, encoding: once as never });
  assert.equal(s.kind, "results", s.detail);
});

test(
  "runTool: a refusal for an option whose read threw still reaches onResult, as every result does",
  T,
  async () => {
    const results: string[] = [];
    const options = {
      onResult(result: { detail: string }) {
        results.push(result.detail);
      },
      get protocol(): never {
        throw new Error("no protocol today");
      },
    } as unknown as ClassifyOptions;
    const r = await runTool(launcher.command, fake("exit", "1"), options);
    assert.equal(r.kind, "spawn", r.detail);
    assert.deepEqual(results, [r.detail]);
  },
);

test("classifyOptionsProblem refuses options not read once through readOptions (the run reads only that snapshot)", () => {
  let reads = 0;
  // a getter that shows the check a good entry and the run a misspelt one
  const codes = {
    get 1() {
      return reads++ === 0 ? "empty" : "emtpy";
    },
  } as unknown as Record<number, "empty">;
  assert.match(
    classifyOptionsProblem({ exitCodes: codes }) ?? "",
    /^invalid option exitCodes: .*readOptions/,
  );
  assert.match(classifyOptionsProblem({ exitCodes: { 1: "empty" } }) ?? "", /readOptions/);
  // the same options read once pass, and what passed is what the run reads
  const read = readOptions({ protocol: "lines", exitCodes: { 1: "empty" } }, false);
  assert.notEqual(typeof read, "string");
  assert.equal(classifyOptionsProblem(read as ClassifyOptions), null);
});
