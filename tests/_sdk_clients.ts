/**
 * The official npm clients (openai, @anthropic-ai/sdk, ollama) pointed at a fake provider through its gated
 * fetch: one set-up for every test that drives the gate with a real client.
 *
 * @module
 */
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import type { FakeProvider } from "./_fake_llm_server.ts";

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
