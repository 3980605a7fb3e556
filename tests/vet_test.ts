import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import * as v from "valibot";
import { ToolArgError, vet } from "../validate.ts";

interface Args {
  city: string;
  days?: number;
}

const jsonSchema = {
  type: "object",
  properties: { city: { type: "string", minLength: 1 }, days: { type: "integer", minimum: 1 } },
  required: ["city"],
  additionalProperties: false,
};
const zodSchema = z.object({ city: z.string().min(1), days: z.number().int().min(1).optional() }).strict();
const valibotSchema = v.strictObject({
  city: v.pipe(v.string(), v.minLength(1)),
  days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});
const predicate = (a: unknown) =>
  typeof a === "object" && a !== null && typeof (a as Args).city === "string" && (a as Args).city !== "" ||
  "city must be a non-empty string";

const schemas: [string, unknown][] = [
  ["JSON Schema", jsonSchema],
  ["zod", zodSchema],
  ["valibot", valibotSchema],
  ["predicate", predicate],
];

for (const [label, schema] of schemas) {
  test(`vet: with ${label}, runs on good arguments, never on bad ones`, async () => {
    let ran = 0;
    const tool = vet<Args, string>({
      name: "weather",
      schema,
      fn: (a) => {
        ran++;
        return `weather in ${a.city}`;
      },
    });
    assert.equal(await tool({ city: "Oslo", days: 2 }), "weather in Oslo");
    assert.equal(await tool('{"city":"Rome"}'), "weather in Rome", "JSON text is accepted too");
    assert.equal(ran, 2);
    await assert.rejects(tool({ city: "" }), (e: unknown) => {
      assert.ok(e instanceof ToolArgError);
      assert.equal(e.tool, "weather");
      assert.deepEqual(e.args, { city: "" });
      assert.ok(e.findings.length >= 1);
      if (label !== "predicate") assert.equal(e.findings[0].path, "/city");
      const fb = e.toLLMFeedback();
      assert.match(fb, /Tool "weather" was not run/);
      assert.match(fb, /call "weather" again/);
      if (label !== "predicate") assert.match(fb, /\/city/);
      return true;
    });
    await assert.rejects(
      tool("{not json"),
      (e: unknown) => e instanceof ToolArgError && e.findings[0].code === "malformed_arguments",
    );
    assert.equal(ran, 2, "fn never ran on bad arguments");
  });
}

test("vet: maps schema problems to finding codes", async () => {
  for (const schema of [jsonSchema, zodSchema, valibotSchema]) {
    const tool = vet({ name: "w", schema, fn: () => "ran" });
    const missing = await tool({}).catch((e: ToolArgError) => e);
    assert.ok(missing instanceof ToolArgError);
    assert.equal(missing.findings[0].path, "/city");
    // (not "1 problem(s)")
    assert.match(missing.message, /^tool "w" was not run: 1 problem with its arguments: \/city: /);
    if (schema === jsonSchema) assert.equal(missing.findings[0].code, "missing_required_argument");
    const wrong = await tool({ city: 5 }).catch((e: ToolArgError) => e);
    assert.ok(wrong instanceof ToolArgError);
    assert.equal(wrong.findings[0].code, "argument_type_mismatch", JSON.stringify(wrong.findings));
    const extra = await tool({ city: "x", zzz: 1 }).catch((e: ToolArgError) => e);
    assert.ok(extra instanceof ToolArgError);
    assert.equal(extra.findings[0].code, "unexpected_argument", JSON.stringify(extra.findings));
  }
});

test("vet: onError returns instead of throwing; bad setup fails early", async () => {
  const tool = vet({ name: "w", schema: jsonSchema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const out = await tool({ days: 0 });
  assert.match(out, /"w" was not run/);
  assert.match(out, /\/city/);
  assert.match(out, /\/days/);
  assert.throws(() => vet({ name: "w", schema: { type: "object", contains: {} }, fn: () => 1 }), /contains/);
  assert.throws(() => vet({ name: "", schema: jsonSchema, fn: () => 1 }), /needs a tool name/);
  const thrower = vet({
    name: "p",
    schema: () => {
      throw new Error("nope");
    },
    fn: () => 1,
  });
  await assert.rejects(
    thrower({}),
    (e: unknown) => e instanceof ToolArgError && e.findings[0].message === "nope",
  );
});

test("ToolArgError.toLLMFeedback: each fact once beside its path, as describeVerdict says it", async () => {
  const schema = {
    type: "object",
    properties: {
      a: { type: "number" },
      b: { type: "number" },
      e: { enum: [] },
      c: { type: "integer", minimum: 10 },
    },
    required: ["b"],
  };
  const tool = vet({ name: "add", schema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const text = await tool({ a: null, e: 1, c: 1 });
  const lines = text.split("\n").filter((l) => l.startsWith("- "));
  assert.deepEqual(lines.toSorted(), [
    '- "/b" is required but missing; add it.',
    '- "/c" must be at least 10. Received 1.',
    '- "/e" must not be given: no value is allowed (its list of allowed values is empty). Received integer 1.',
    "- /a: Expected number, received null.",
  ]);
  // a message that does not name its path (zod's) still follows it
  const z2 = vet({
    name: "z",
    schema: z.object({ a: z.number() }),
    fn: () => "ran",
    onError: (e) => e.toLLMFeedback(),
  });
  assert.match(await z2({ a: "1" }), /^- \/a: \S/m);
});

test("ToolArgError.toLLMFeedback: a long key is cut as describeVerdict cuts it, and a path's own dot is kept", async () => {
  const schema = { type: "object", properties: { "v1.": { type: "number" } }, additionalProperties: false };
  const tool = vet({ name: "t", schema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const long = "k".repeat(5000);
  const lines = (await tool({ [long]: 1, "v1.": "x" })).split("\n").filter((l) => l.startsWith("- "));
  assert.equal(lines.length, 2);
  const unexpected = lines.find((l) => l.includes("is not a parameter")) ?? "";
  // the whole message is said, the place cut: not the message cut inside the key
  assert.match(
    unexpected,
    /^- "\/k{100,}\u2026" is not a parameter this tool accepts; remove it\. Accepted: "v1\."\.$/,
  );
  assert.ok(unexpected.length < 400, unexpected);
  assert.ok(lines.includes('- /v1.: Expected number, received string "x".'), lines.join("\n"));
});

test("ToolArgError.toLLMFeedback: an enum member the validator cut at the message's end keeps its mark", async () => {
  const schema = { type: "object", properties: { e: { enum: ["a", "b".repeat(60)] } } };
  const tool = vet({ name: "t", schema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const lines = (await tool({ e: "zz" })).split("\n").filter((l) => l.startsWith("- "));
  assert.deepEqual(lines, [`- "/e" must be one of: "a", "${"b".repeat(36)}\u2026. Received string "zz".`]);
});

test("ToolArgError.toLLMFeedback: the keys '' and ' ' read apart, as describeVerdict writes them", async () => {
  const schema = { type: "object", properties: {}, additionalProperties: false };
  const tool = vet({ name: "t", schema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const line = async (key: string) => (await tool({ [key]: 1 })).split("\n").find((l) => l.startsWith("- "));
  assert.match(await line("") ?? "", /^- "\/" is not a parameter/);
  assert.match(await line(" ") ?? "", /^- "\/\\u0020" is not a parameter/);
  // (a backslash doubled, as JSON doubles it: the key `\u0020` is no " ", `a\u200bb` no zero-width space)
  assert.match(await line("\\u0020") ?? "", /^- "\/\\\\u0020" is not a parameter/);
  assert.match(await line("a\\u200bb") ?? "", /^- "\/a\\\\u200bb" is not a parameter/);
});

test("ToolArgError.toLLMFeedback: a finding with nothing to say is named by its code, not left blank", () => {
  const e = new ToolArgError("t", [{ code: "argument_constraint", path: "", message: "" }], {});
  const lines = e.toLLMFeedback().split("\n").filter((l) => l.startsWith("- "));
  assert.deepEqual(lines, ["- (arguments): argument_constraint."]);
});

test("ToolArgError.toLLMFeedback: a property name not allowed is said once, cut, with one instruction", async () => {
  const long = "k".repeat(5000);
  const schema = { type: "object", propertyNames: false };
  const tool = vet({ name: "t", schema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const [line, ...rest] = (await tool({ [long]: 1 })).split("\n").filter((l) => l.startsWith("- "));
  assert.equal(rest.length, 0);
  // the place once (the validator's cut pointer read as the place), its reason without its own instruction
  assert.match(
    line,
    /^- "\/k{100,}\u2026" is not an allowed property name \(it is not allowed here\); rename or remove it\.$/,
  );
  assert.ok(line.length < 300, line);
  const error = await vet({ name: "t", schema, fn: () => "ran" })({ [long]: 1 }).catch((e: unknown) => e);
  assert.ok(error instanceof ToolArgError);
  assert.equal(error.findings[0].path, `/${long}`); // (the finding's path stays a true JSON Pointer)
});

test("ToolArgError.toLLMFeedback: the items under one long key keep their index after the cut, so they read apart", async () => {
  const long = "k".repeat(5000);
  const schema = { type: "object", additionalProperties: { type: "array", items: { type: "string" } } };
  const tool = vet({ name: "t", schema, fn: () => "ran", onError: (e) => e.toLLMFeedback() });
  const lines = (await tool({ [long]: [1, 2] })).split("\n").filter((l) => l.startsWith("- "));
  assert.equal(lines.length, 2);
  assert.match(lines[0], /^- \/k{100,}\u2026\/0: Expected string, received integer 1\.$/);
  assert.match(lines[1], /^- \/k{100,}\u2026\/1: Expected string, received integer 2\.$/);
  assert.ok(lines.every((l) => l.length < 300), lines.join("\n"));
});

test("vet: toLLMFeedback says identical findings once and lists at most 20, counting the rest", async () => {
  const feedback = async (args: unknown) => {
    const error = await vet({ name: "t", schema: { type: "object" }, fn: () => 1 })(args as never).catch((
      e,
    ) => e);
    assert.ok(error instanceof ToolArgError);
    return error.toLLMFeedback();
  };
  // a key of 100 hidden pairs: the scanner reports the run once per pair, 100 identical findings
  const hidden = await feedback({ ["\u202e\u200b".repeat(100) + "k"]: 1 });
  const lines = hidden.split("\n");
  assert.equal(lines.length, 3, hidden);
  assert.match(lines[1], /hidden text.* \(found 100 times\)$/);
  assert.ok(hidden.length < 500, `${hidden.length} characters`);
  // 30 different findings: 20 listed, the other 10 counted
  const schema = { type: "object", additionalProperties: false };
  const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, 1]));
  const error = await vet({ name: "t", schema, fn: () => 1 })(many as never).catch((e: unknown) => e);
  assert.ok(error instanceof ToolArgError);
  assert.equal(error.findings.length, 30);
  const text = error.toLLMFeedback().split("\n");
  assert.equal(text.filter((l) => l.startsWith("- ")).length, 20);
  assert.equal(text.at(-2), "\u2026 and 10 more; fix the ones above first.");
});
