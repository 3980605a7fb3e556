/**
 * The official npm clients (openai, @anthropic-ai/sdk, ollama) pointed at a fake provider through its gated
 * fetch: one set-up for every test that drives the gate with a real client.
 *
 * @module
 */
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import { type FakeProvider, TOOLS_OPENAI } from "./_fake_llm_server.ts";

/** A new client of each kind per call, for the provider's URL (known once its tests have started). */
export function sdkClients(provider: Pick<FakeProvider, "gfetch" | "url">): {
  openai: () => OpenAI;
  anthropic: () => Anthropic;
  ollama: () => Ollama;
} {
  const { gfetch, url } = provider;
  return {
    openai: () => new OpenAI({ apiKey: "sk-test", baseURL: `${url()}/v1`, fetch: gfetch, maxRetries: 0 }),
    anthropic: () => new Anthropic({ apiKey: "sk-ant-test", baseURL: url(), fetch: gfetch, maxRetries: 0 }),
    ollama: () => new Ollama({ host: url(), fetch: gfetch }),
  };
}

/**
 * The names of the calls the openai client hands its reader from a Chat stream asked for with the declared
 * tools: what the agent would run.
 */
export async function streamedCallNames(
  client: OpenAI,
  messages: { role: "user"; content: string }[],
): Promise<string[]> {
  const stream = await client.chat.completions.create({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  const names: string[] = [];
  for await (const chunk of stream) {
    for (const c of chunk.choices[0]?.delta?.tool_calls ?? []) {
      if (c.function?.name) names.push(c.function.name);
    }
  }
  return names;
}
