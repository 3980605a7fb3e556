// A gated answer whose body is not the provider's raw bytes (a stream, or a rewritten whole answer) carries
// no `content-encoding` or `content-length` of the provider's: fetch has decoded the body already, so a
// proxy that passes the headers on would have its client decode plain text again, or cut it short. Driven
// through the openai client, against a proxy on 127.0.0.1 that forwards what a guarded fetch returns.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import OpenAI from "openai";
import { guardFetch } from "../gate.ts";
import { chatCompletion, chatStream, REJECTED_CALL, TOOLS_OPENAI, VALID_CALL } from "./_fake_llm_server.ts";

/** What the provider answers next: gzipped, with its `content-encoding` and `content-length`. */
let answer = { type: "application/json", text: "" };
const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const provider = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const body = gzipSync(answer.text);
    res.writeHead(200, {
      "content-type": answer.type,
      "content-encoding": "gzip",
      "content-length": String(body.byteLength),
    });
    res.end(body);
  });
});

/** A proxy that forwards the request through a guarded fetch and passes on the status, headers and body. */
const proxy = createServer((req, res) => {
  const chunks: Uint8Array[] = [];
  req.on("data", (c: Uint8Array) => chunks.push(c));
  req.on("end", async () => {
    const gated = await guardFetch(fetch)(providerUrl + req.url, {
      method: req.method,
      headers: { "content-type": "application/json" },
      body: new TextDecoder().decode(Buffer.concat(chunks)),
    });
    res.writeHead(gated.status, Object.fromEntries(gated.headers));
    for await (const piece of gated.body!) res.write(piece);
    res.end();
  });
});

let providerUrl = "";
let proxyUrl = "";
before(async () => {
  providerUrl = await listen(provider);
  proxyUrl = await listen(proxy);
});
after(async () => {
  await new Promise((r) => provider.close(r));
  await new Promise((r) => proxy.close(r));
});

const client = () => new OpenAI({ apiKey: "sk-test", baseURL: `${proxyUrl}/v1`, maxRetries: 0 });
const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];
const sse = (frames: unknown[]) =>
  frames.map((f) => (typeof f === "string" ? f : `data: ${JSON.stringify(f)}\n\n`)).join("");

test("guardFetch: a gated stream of a gzipped answer drops content-encoding, so a proxy's client reads it", async () => {
  answer = { type: "text/event-stream", text: sse(chatStream(["Checking."], [VALID_CALL])) };
  const res = await guardFetch(fetch)(`${providerUrl}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", messages, stream: true, tools: TOOLS_OPENAI }),
  });
  assert.equal(res.headers.get("content-encoding"), null);
  assert.equal(res.headers.get("content-length"), null);
  await res.body?.cancel();
  const stream = await client().chat.completions.create({
    model: "m",
    messages,
    stream: true,
    tools: TOOLS_OPENAI as never,
  });
  let text = "";
  const names: string[] = [];
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    for (const c of chunk.choices[0]?.delta?.tool_calls ?? []) {
      if (c.function?.name) names.push(c.function.name);
    }
  }
  assert.equal(text, "Checking.");
  assert.deepEqual(names, ["get_weather"]);
});

test("guardFetch: a rewritten whole answer of a gzipped provider drops content-encoding and fits its length", async () => {
  answer = { type: "application/json", text: JSON.stringify(chatCompletion(null, [REJECTED_CALL])) };
  const done = await client().chat.completions.create({ model: "m", messages, tools: TOOLS_OPENAI as never });
  assert.equal(done.choices[0].message.tool_calls, undefined);
  assert.match(done.choices[0].message.content ?? "", /kelvin/);
});
