/**
 * The official npm clients (openai, @anthropic-ai/sdk, ollama) pointed at a fake provider through its gated
 * fetch: one set-up for every test that drives the gate with a real client.
 *
 * @module
 */
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import { type FakeProvider, TOOLS_ANTHROPIC, TOOLS_OPENAI } from "./_fake_llm_server.ts";

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
 * What the openai client hands its reader from a Chat stream asked for with the declared tools: the text of
 * choice 0, its finish, and the names of its calls (what the agent would run).
 */
export async function readChatStream(
  client: OpenAI,
  messages: { role: "user"; content: string }[],
): Promise<{ text: string; finish: string | null; names: string[] }> {
  const stream = await client.chat.completions.create({
    model: "m",
    messages,
    tools: TOOLS_OPENAI as never,
    stream: true,
  });
  let text = "";
  let finish: string | null = null;
  const names: string[] = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    text += choice?.delta?.content ?? "";
    finish = choice?.finish_reason ?? finish;
    for (const c of choice?.delta?.tool_calls ?? []) {
      if (c.function?.name) names.push(c.function.name);
    }
  }
  return { text, finish, names };
}

/** The names of the calls the openai client hands its reader from a Chat stream (see `readChatStream`). */
export async function streamedCallNames(
  client: OpenAI,
  messages: { role: "user"; content: string }[],
): Promise<string[]> {
  return (await readChatStream(client, messages)).names;
}

/**
 * What the @anthropic-ai/sdk hands its reader from a stream asked for with the declared tools: the text as
 * it came, the final message, and its final text.
 */
export async function readAnthropic(
  client: Anthropic,
  messages: { role: "user"; content: string }[],
): Promise<{ streamed: string; final: Anthropic.Message; text: string }> {
  const stream = client.messages.stream({
    model: "m",
    max_tokens: 100,
    messages,
    tools: TOOLS_ANTHROPIC as never,
  });
  let streamed = "";
  stream.on("text", (t) => (streamed += t));
  const final = await stream.finalMessage();
  return { streamed, final, text: await stream.finalText() };
}
