/**
 * Every provider dialect toolguard reads, by name.
 *
 * @module
 */
import type { StreamDialect } from "../calls.ts";
import { anthropic } from "./anthropic.ts";
import { cohere } from "./cohere.ts";
import { gemini } from "./gemini.ts";
import { ollama } from "./ollama.ts";
import { openaiChat } from "./openai_chat.ts";
import { openaiResponses } from "./openai_responses.ts";
import type { Dialect } from "./shared.ts";

/** The dialects, by the name bodies and streams are read as. */
export const DIALECTS: Readonly<Record<StreamDialect, Dialect>> = {
  openai_chat: openaiChat,
  openai_responses: openaiResponses,
  anthropic,
  ollama,
  gemini,
  cohere,
};
