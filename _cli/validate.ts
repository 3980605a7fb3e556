/**
 * `toolguard validate CALLS [--tools FILE | --shape SPEC] [--name TOOL] [--repair] [--coerce] [--text]
 * [--json] [--pretty]`: judge a model's tool calls against the declared tools before anything runs.
 *
 * @module
 */

// Start-up (issue 18): every module this one loads but does not import below, imported here for no
// binding, so that Deno loads the whole graph in one round when `import()` first asks for this module
// instead of one round per level of the import chain. In the order they run; scripts/check_imports.ts
// (`deno task check`) fails when one is missing or not needed.
import { plural } from "../_common/values.ts";
import "../_common/bytes.ts";
import "./output.ts";
import "../_common/pointer.ts";
import "../_common/measure.ts";
import "../_describe/facts.ts";
import "../_common/json.ts";
import "../_scan/words.ts";
import "../_scan/fold.ts";
import "../_scan/segments.ts";
import "../_scan/gap.ts";
import "../_scan/translated.ts";
import "../_scan/rules.ts";
import "../_scan/leads.ts";
import "../_scan/decode.ts";
import "../_scan/screen.ts";
import "../_scan/terminal.ts";
import "../_scan/scan.ts";
import "../_extract/text.ts";
import "../_extract/reasoning.ts";
import "../_extract/scan.ts";
import "../_extract/literal.ts";
import "../_extract/json_calls.ts";
import "../_extract/readers/json.ts";
import "../_validate/providers.ts";
import "../_extract/typing.ts";
import "../_extract/readers/xml.ts";
import "../_extract/readers/tokens.ts";
import "../_extract/readers/python.ts";
import "../_extract/registry.ts";
import "../_schema/formats.ts";
import "../_schema/keywords.ts";
import "../_schema/report.ts";
import "../_schema/pattern.ts";
import "../_schema/linear_regexp.ts";
import "../_schema/values.ts";
import "../_schema/checkers.ts";
import "../_schema/codegen_js.ts";
import "../_schema/codegen_ok.ts";
import "../_schema/codegen_report.ts";
import "../_schema/fallbacks.ts";
import "../_schema/codegen.ts";
import "../_schema/object_checker.ts";
import "../_schema/refs.ts";
import "../_schema/compile.ts";
import "../_validate/repair.ts";
import "../_validate/defaults.ts";
import "../_schema/strings.ts";

import { shapeToSchema } from "../_validate/shape.ts";
import {
  emptyPath,
  EXIT_FAIL,
  EXIT_OK,
  onePositional,
  type OptionSpec,
  paint,
  parseCommandLine,
  parseJsonText,
  printedHelp,
  printJson,
  readJson,
  readText,
  runMain,
  safeText,
  shownText,
  stringOption,
  UsageError,
  wantsJson,
  writeOut,
} from "./io.ts";
import { readTools } from "./io.ts";
import { describeVerdict } from "../_describe/verdict.ts";
import { extractToolCalls } from "../_extract/extract.ts";
import { validateToolCalls } from "../_validate/validator.ts";
import type { Verdict } from "../types.ts";

/** The `toolguard validate --help` text. */
export const VALIDATE_HELP = `toolguard validate: check a model's tool calls before they run

Usage: toolguard validate CALLS --tools FILE [options]
       toolguard validate CALLS --shape SPEC [options]
       toolguard validate ARGS --name TOOL [--tools FILE | --shape SPEC] [options]
       toolguard validate CALLS [options]          no allowlist: schema-free checks only

CALLS is a JSON (or JSONC) file, or - for stdin, holding one call, a list of calls, an assistant message or
a whole provider response, in any provider's shape (OpenAI Chat or Responses, Anthropic, Ollama, Gemini,
MCP, plain {name, arguments}). With --text, CALLS is assistant text with calls written into it (Hermes or
Qwen <tool_call> tags, Llama <|python_tag|>, Mistral [TOOL_CALLS], fenced JSON, and every other format
that extractToolCalls reads).

Options:
  --tools FILE   the declared tools (JSON or JSONC, any provider's shape)
  --shape SPEC   a quick shape instead of --tools, as in agentvet: a JSON object (or a file holding one)
                 mapping each argument to string, number, integer, boolean, array, object, null or any,
                 with ? for optional: '{"city": "string", "units": "string?"}'. Every call is checked
                 against it; arguments not in the shape are rejected.
  --name TOOL    CALLS is one bare arguments object for the tool TOOL (as agentvet's command line reads it)
  --repair       repair near-JSON argument text (code fences, trailing commas, single quotes, Python
                 True/False/None); each repair is listed
  --coerce       turn numeric and boolean strings into the declared type; each coercion is listed
  --text         read CALLS as assistant text and extract the calls written into it
  --json         print the verdict as JSON, with the feedback for the model as "retry_hint" (null when
                 every call is allowed)
  --pretty       print indented JSON (implies --json)
  -h, --help     show this help

Exit status: 0 when every call is allowed, 1 when any call is blocked, 2 for usage errors (including a
tool declaration toolguard cannot enforce).
`;

/**
 * The options of `toolguard validate` (`--help` aside), as `parseArgs` takes them; {@linkcode VALIDATE_HELP}
 * lists each.
 */
export const VALIDATE_OPTIONS: Record<string, OptionSpec> = {
  tools: { type: "string" },
  shape: { type: "string" },
  name: { type: "string" },
  repair: { type: "boolean" },
  coerce: { type: "boolean" },
  text: { type: "boolean" },
  json: { type: "boolean" },
  pretty: { type: "boolean" },
};

/** Unwraps whole provider responses into the messages or calls they hold. */
function callsIn(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value !== "object" || value === null) return [value];
  const v = value as Record<string, unknown>;
  // OpenAI Chat completion: { choices: [{ message }] }
  if (Array.isArray(v.choices)) {
    return v.choices.map((
      c,
    ) => (typeof c === "object" && c !== null ? (c as { message?: unknown }).message : c))
      .filter((m) => m !== undefined);
  }
  // OpenAI Responses: { output: [...items] }; keep only the function calls.
  if (Array.isArray(v.output) && v.object === "response") {
    return v.output.filter((o) =>
      typeof o === "object" && o !== null && (o as { type?: unknown }).type === "function_call"
    );
  }
  // Gemini: { candidates: [{ content: { parts } }] }
  if (Array.isArray(v.candidates)) {
    return v.candidates.flatMap((c) => {
      const parts = (c as { content?: { parts?: unknown } })?.content?.parts;
      return Array.isArray(parts)
        ? parts.filter((p) => typeof p === "object" && p !== null && "functionCall" in p)
        : [];
    });
  }
  // Ollama /api/chat response: { message: { role, tool_calls } }
  if (typeof v.message === "object" && v.message !== null && v.name === undefined) return [v.message];
  // Anthropic Messages response: { type: "message", role, content: [...] } is a message already.
  return [value];
}

/**
 * Names of the calls, for building `--shape` declarations; reads only the common name fields. Iterative: a
 * call nested a hundred thousand `params` deep is a finding for the validator, not a stack overflow here.
 */
function callNames(calls: readonly unknown[]): string[] {
  const names = new Set<string>();
  const stack: unknown[] = [...calls].reverse();
  while (stack.length > 0) {
    const c = stack.pop();
    if (typeof c !== "object" || c === null) continue;
    const o = c as Record<string, unknown>;
    if (typeof o.name === "string") names.add(o.name);
    for (const inner of [o.params, o.functionCall, o.function]) stack.push(inner);
    for (const list of [o.parts, o.content, o.tool_calls]) {
      if (Array.isArray(list)) { for (let i = list.length - 1; i >= 0; i--) stack.push(list[i]); }
    }
  }
  return [...names];
}

/**
 * The verdict as text, one line per call and one per finding. A finding's place is its `path`, quoted as the
 * JSON Pointer it is (`at "/opts/days/1"`): what `--json` holds and what the finding's own message names, so
 * the text report can be matched with both and with the schema. The feedback for the model printed after it
 * (`describeVerdict`) names the same place as a dotted path (`at "opts.days[1]"`, or in the message's stead
 * of the pointer) on purpose: SPEC.md section 4 asks for text a small model can use to retry, and a small model
 * reads and writes back `opts.days[1]` more surely than a pointer's slashes and `~1` escapes; section 2 fixes
 * `path` itself as a JSON Pointer. Both leave the place out for `unknown_tool` (the tool's name is not inside
 * the arguments), and both say when a finding is about the arguments as a whole (path `""`).
 */
function formatVerdict(verdict: Verdict): string {
  let out = "";
  for (const c of verdict.calls) {
    // A name and an id from outside (--name, a model's call) are echoed as other input is: clipped, safe.
    const id = c.id ? ` (${shownText(c.id)})` : "";
    out += `#${c.index} ${c.name ? shownText(c.name) : "(no name)"}${id}: ${
      c.allowed ? paint("green", "allowed") : paint("red", "BLOCKED")
    }\n`;
    for (const f of c.findings) {
      const parts = [
        f.expected !== undefined ? `expected ${safeText(String(f.expected))}` : "",
        f.received !== undefined ? `received ${safeText(String(f.received))}` : "",
      ]
        .filter((p) => p !== "");
      const place = f.code === "unknown_tool"
        ? ""
        : f.path === ""
        ? ' at "" (the arguments as a whole)'
        : ` at ${safeText(JSON.stringify(f.path))}`;
      out += `  ${paint("yellow", f.code)}${place}: ${safeText(f.message)}` +
        (parts.length > 0 ? ` (${parts.join(", ")})` : "") + "\n";
    }
    for (const r of c.repairs ?? []) out += `  repaired: ${safeText(r)}\n`;
    for (const r of c.coercions ?? []) out += `  coerced: ${safeText(r)}\n`;
    if (c.modelCheck?.error) out += `  classifier error: ${safeText(c.modelCheck.error)}\n`;
  }
  const n = verdict.calls.length;
  out += verdict.allowed
    ? `${paint("green", "OK")} ${n} ${plural(n, "call")} allowed\n`
    : `${paint("red", "BLOCKED")} ${verdict.rejectedIndices.length} of ${n} ${plural(n, "call")} blocked\n`;
  return out;
}

/**
 * Run `toolguard validate` with the arguments after the subcommand name.
 *
 * @param args Command-line arguments, e.g. `["calls.json", "--tools", "tools.jsonc"]`.
 * @returns The exit status.
 */
export function main(args: string[]): Promise<number> {
  return runMain("validate", async () => {
    const { values, positionals } = parseCommandLine(args, {
      command: "validate",
      fileOperands: true,
      options: VALIDATE_OPTIONS,
    });
    if (printedHelp(values, VALIDATE_HELP)) return EXIT_OK;
    const file = onePositional(
      positionals,
      "calls file",
      "run `toolguard validate calls.json --tools tools.json`, or `toolguard validate - --tools tools.json` to read stdin",
      values,
    );
    const toolsPath = stringOption(values, "tools");
    const shapeSpec = stringOption(values, "shape");
    // An unset variable (`--tools "$TOOLS"`): named as the option, not as "the file name" of CALLS.
    if (toolsPath === "") throw emptyPath("--tools", "give --tools the tools file, or - to read stdin");
    if (shapeSpec?.trim() === "") {
      throw new UsageError(
        "--shape is an empty string, not a path or a shape",
        'give --shape a file or a shape such as \'{"city": "string"}\'',
      );
    }
    if (toolsPath !== undefined && shapeSpec !== undefined) {
      throw new UsageError(
        "--tools and --shape cannot be used together",
        "declare the tools with one of them",
      );
    }
    if (file === "-" && (toolsPath === "-" || shapeSpec?.trim() === "-")) {
      throw new UsageError(
        `only one of CALLS and ${toolsPath === "-" ? "--tools" : "--shape"} can read stdin`,
        "give the other as a file",
      );
    }

    const name = stringOption(values, "name");
    if (name !== undefined && values.text === true) {
      throw new UsageError("--name and --text cannot be used together", "--name reads one arguments object");
    }
    let calls: unknown[];
    if (name !== undefined) {
      calls = [{ name, arguments: await readJson(file) }];
    } else if (values.text === true) {
      calls = extractToolCalls(await readText(file)).map((c) => ({
        ...(c.id !== undefined ? { id: c.id } : {}),
        name: c.name,
        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
      }));
    } else {
      calls = callsIn(await readJson(file));
    }

    let tools: unknown[] | undefined;
    if (toolsPath !== undefined) {
      tools = await readTools(toolsPath);
    } else if (shapeSpec !== undefined) {
      const trimmed = shapeSpec.trim();
      const inline = trimmed.startsWith("{");
      const shape = inline ? await parseJsonText(trimmed, "--shape") : await readJson(shapeSpec);
      let schema: Record<string, unknown>;
      try {
        schema = shapeToSchema(shape, inline ? "--shape" : shownText(shapeSpec));
      } catch (error) {
        throw new UsageError(
          (error as Error).message,
          'map each argument to string, number, integer, boolean, array, object, null or any, with ? for optional: --shape \'{"city": "string", "units": "string?"}\'',
        );
      }
      tools = callNames(calls).map((name) => ({ name, input_schema: schema }));
    }

    let verdict: Verdict;
    try {
      verdict = await validateToolCalls(calls, {
        tools,
        repair: values.repair === true,
        coerce: values.coerce === true,
      });
    } catch (error) {
      // Only a declaration can make validation throw: the tools file asks for something unenforceable.
      throw new UsageError(
        `${shownText(toolsPath ?? "--shape")}: ${(error as Error).message}`,
        "fix the declaration; `toolguard lint` lists every problem",
      );
    }
    if (wantsJson(values)) {
      const retryHint = verdict.allowed ? null : describeVerdict(verdict, { tools });
      printJson({ ...verdict, retry_hint: retryHint }, { pretty: values.pretty === true });
    } else {
      let out = formatVerdict(verdict);
      if (!verdict.allowed) {
        out += `\nFeedback for the model:\n${
          safeText(describeVerdict(verdict, { tools }), { keepLines: true })
        }\n`;
      }
      writeOut(out);
    }
    return verdict.allowed ? EXIT_OK : EXIT_FAIL;
  });
}
