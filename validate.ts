/**
 * Validate a model's tool calls before anything runs: was the tool declared, do the arguments match its
 * JSON Schema, do they carry an injection payload. Tool declarations and calls are accepted as each
 * provider shapes them (OpenAI Chat and Responses, Anthropic, Ollama, Gemini, MCP, plain
 * `{ name, arguments }`). Findings say, in words a model can act on, what to change.
 *
 * @example Reject a value outside the declared enum, with the path to fix
 * ```ts
 * import assert from "node:assert/strict";
 * import { createValidator } from "@toolguard/toolguard/validate";
 *
 * const validator = createValidator([{
 *   type: "function",
 *   function: {
 *     name: "get_weather",
 *     description: "Current weather for a city",
 *     parameters: {
 *       type: "object",
 *       properties: { city: { type: "string" }, units: { enum: ["c", "f"] } },
 *       required: ["city"],
 *       additionalProperties: false,
 *     },
 *   },
 * }]);
 * const verdict = validator.validate([
 *   { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo","units":"k"}' } },
 * ]);
 * assert.equal(verdict.allowed, false);
 * assert.equal(verdict.calls[0].findings[0].code, "argument_constraint");
 * assert.equal(verdict.calls[0].findings[0].path, "/units");
 * ```
 *
 * @module
 */
export { compileSchema, createValidator, validateToolCalls } from "./_validate/validator.ts";
export type {
  CompileSchemaOptions,
  ValidateOptions,
  ValidateToolCallsOptions,
  Validator,
} from "./_validate/validator.ts";
export { SchemaError } from "./_schema/compile.ts";
export { lintTools } from "./_validate/lint.ts";
export type { LintIssue, LintIssueCode } from "./_validate/lint.ts";
export type { NormalisedTool, ProviderShape } from "./_validate/providers.ts";
export { ToolArgError, validate, vet } from "./_validate/vet.ts";
export type {
  SafeParseLike,
  StandardResult,
  StandardSchemaLike,
  VetOptions,
  VetSchema,
} from "./_validate/vet.ts";
export type { CallVerdict, Classifier, Finding, FindingCode, ModelCheck, Verdict } from "./types.ts";
