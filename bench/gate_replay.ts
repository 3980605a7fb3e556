/**
 * Replays every recording in `../shared/data/provider-traffic/catalog.json` through the official clients,
 * with and without `guardFetch`, and prints a table per provider:
 *
 * - allowed: the request declares the recorded tools (or tools under which the recorded calls are valid);
 *   the guarded client must read the same bytes, emit the same SDK events and end with the same object;
 * - rejected: the same tools under other names, so every call is to an undeclared tool; the client must end
 *   with no call, and with the recorded text (the reason appended), reasoning and usage.
 *
 * Then latency:
 *
 * - the guard's own cost, in process: each recording's frames up to its first text from a fake `fetch`
 *   (no network, no pauses), the time from the call to that frame guarded minus unguarded (200 runs);
 * - end to end, against a frame server in a process of its own pausing 5 ms between frames: time to the
 *   first text delta, taken in the client with `performance.now()` from the request, guarded and unguarded
 *   in pairs (the order alternating) for `--rounds` rounds (21 by default). Per stream: the median of the
 *   per-round ratios and its 95% bootstrap interval, beside `1 + own cost / unguarded time` (the ratio the
 *   guard's own work gives, free of the round trips' noise); then every round pooled, and the total time of
 *   a 300-delta stream 1 ms apart, the same way. Each table says the load average.
 *
 * `deno run -A bench/gate_replay.ts` or `bun bench/gate_replay.ts` (`--latency-only`, `--replay-only`,
 * `--rounds=N`, `--only=id,id`).
 *
 * @module
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import process from "node:process";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadTraffic, streamWire, type TrafficEntry } from "../tests/_traffic.ts";
import Anthropic from "@anthropic-ai/sdk";
import { seeded } from "../scripts/_seeded.ts";
import { median } from "./_harness.ts";
import OpenAI from "openai";
import { guardFetch } from "../gate.ts";
import { allowedTools, judgeEntry, type Row } from "../tests/_replay.ts";
import { chatStream, startFakeLlmServer, TOOLS_OPENAI } from "../tests/_fake_llm_server.ts";

const yes = (b: boolean | undefined) => (b === undefined ? "" : b ? "yes" : "**no**");

/** Prints the rows as one markdown table per provider family. */
function printTable(rows: Row[]): void {
  const runtime = "Bun" in globalThis ? "Bun" : "Deno";
  console.log(`\n## Replay (${runtime})\n`);
  const family = (r: Row) => r.provider.split(/[ (]/)[0];
  for (const f of [...new Set(rows.map(family))]) {
    console.log(`\n### ${f}\n`);
    console.log(
      "| recording | kind | same bytes | same events | same final | gate | rejected: withheld | text | reasoning | usage |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const r of rows.filter((r) => family(r) === f)) {
      const x = r.rejected;
      console.log(
        `| ${r.id} | ${r.kind} | ${yes(r.allowed.bytes)} | ${yes(r.allowed.events)} | ${
          yes(r.allowed.final)
        } | ${r.gate} | ${yes(x?.withheld)} | ${yes(x?.text)} | ${yes(x?.reasoning)} | ${yes(x?.usage)} |`,
      );
    }
  }
  const n = rows.length;
  const same = rows.filter((r) => r.allowed.bytes && r.allowed.events && r.allowed.final).length;
  const rej = rows.filter((r) => r.rejected);
  const good = rej.filter((r) =>
    r.rejected!.withheld && r.rejected!.text && r.rejected!.reasoning && r.rejected!.usage
  );
  console.log(
    `\nallowed identical: ${same}/${n}; rejected withheld with text, reasoning, usage: ${good.length}/${rej.length}`,
  );
}

/** The `q` quantile (0..1) of a list, by the nearest rank. */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))] ?? NaN;
}

/** A 95% bootstrap interval of the median of `xs` (2000 resamples). */
function bootstrapMedian(xs: number[]): [number, number] {
  const random = seeded(0x5eed);
  const medians: number[] = [];
  for (let b = 0; b < 2000; b++) medians.push(median(xs.map(() => xs[Math.floor(random() * xs.length)])));
  return [quantile(medians, 0.025), quantile(medians, 0.975)];
}

/** The runtime's name and the machine's load average, for the report. */
function where(): string {
  const [one, five] = loadavg();
  return `${"Bun" in globalThis ? "Bun" : "Deno"}; load average ${one.toFixed(2)} ${five.toFixed(2)}`;
}

/**
 * The frame server of the latency runs, in a process of its own (`--serve`), so its pauses between frames
 * are not held up by the client's work (the guarded client does more of it) and the client's timings are
 * not taken while the server writes. It answers every request with the recording named by the
 * `x-replay` header (`x-frames` of its frames, `x-delay` ms apart) and stops writing when the client
 * hangs up.
 */
function serveFrames(streams: TrafficEntry[]): void {
  const byId = new Map(streams.map((e) => [e.id, streamWire(e).frames]));
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      const frames = (byId.get(String(req.headers["x-replay"])) ?? []).slice(
        0,
        Number(req.headers["x-frames"]),
      );
      const delay = Number(req.headers["x-delay"] ?? 0);
      let open = true;
      res.on("close", () => open = false);
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const frame of frames) {
        if (!open) return;
        res.write(frame);
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      }
      res.end();
    });
  });
  server.listen(0, "127.0.0.1", () => console.log(`port ${(server.address() as AddressInfo).port}`));
}

/** Starts {@linkcode serveFrames} in a child process; its URL and a way to stop it. */
async function frameServer(): Promise<{ url: string; stop: () => void }> {
  const self = fileURLToPath(import.meta.url);
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const child = deno
    ? spawn(deno.execPath(), ["run", "-A", self, "--serve"], { stdio: ["ignore", "pipe", "inherit"] })
    : spawn(process.execPath, [self, "--serve"], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Uint8Array) => {
      out += new TextDecoder().decode(d);
      const m = /port (\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", () => reject(new Error("the frame server exited")));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

/** A `fetch` that asks the frame server for `id` (`frames` of its frames, `delay` ms apart). */
function replaying(f: typeof fetch, id: string, frames: number, delay: number): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set("x-replay", id);
    headers.set("x-frames", String(frames));
    headers.set("x-delay", String(delay));
    return f(input, { ...init, headers });
  }) as typeof fetch;
}

/** The request a latency run sends for a recording. */
function latencyRequest(entry: TrafficEntry, tools: unknown[]): Record<string, unknown> {
  switch (entry.dialect) {
    case "responses":
      return { model: "m", input: "hi", tools, stream: true };
    case "anthropic":
      return {
        model: "m",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
        tools,
        stream: true,
      };
    case "gemini":
      return { contents: [{ role: "user", parts: [{ text: "hi" }] }], tools };
    default:
      return { model: "m", messages: [{ role: "user", content: "hi" }], tools, stream: true };
  }
}

/** True when a client event (an SDK event, or a parsed Gemini / Cohere frame) carries text or reasoning. */
function carriesText(e: Record<string, unknown>): boolean {
  const type = String(e.type ?? "");
  if (/output_text\.delta|reasoning.*\.delta|^content-delta$|^tool-plan-delta$/.test(type)) return true;
  const delta = (e.delta ?? {}) as Record<string, unknown>;
  if (delta.type === "text_delta" || delta.type === "thinking_delta") return true;
  const choice = (e.choices as Record<string, unknown>[] | undefined)?.[0]?.delta as Record<string, unknown>;
  if (choice && ["content", "reasoning_content", "reasoning", "refusal"].some((k) => !!choice[k])) {
    return true;
  }
  const candidate = (e.candidates as { content?: { parts?: { text?: string }[] } }[] | undefined)?.[0];
  return !!candidate?.content?.parts?.some((p) => !!p.text);
}

/** Reads a Gemini or Cohere SSE body frame by frame until one carries text; then stops reading. */
async function untilTextFrame(body: ReadableStream<Uint8Array>): Promise<boolean> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split("\n").find((l) => l.startsWith("data:"))?.slice(5).trim();
        if (!data || data === "[DONE]") continue;
        if (carriesText(JSON.parse(data))) return true;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * Milliseconds from the request to the first text (or reasoning) delta the client sees, measured in the
 * client with `performance.now()`; the request is abandoned there. -1 when the stream carries no text.
 */
async function firstTextMs(
  entry: TrafficEntry,
  url: string,
  f: typeof fetch,
  body: Record<string, unknown>,
): Promise<number> {
  const started = performance.now();
  const seen = async (events: AsyncIterable<unknown>) => {
    try {
      for await (const e of events) {
        if (carriesText(e as Record<string, unknown>)) return performance.now() - started;
      }
    } catch {
      // The first 40 frames of some recordings end a message the SDK cannot finish (no role): no text.
    }
    return -1;
  };
  if (entry.dialect === "chat" || entry.dialect === "responses") {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    const stream = entry.dialect === "chat"
      ? client.chat.completions.stream(body as never)
      : client.responses.stream(body as never);
    // Abandoned at the first text: the SDK's own ending then fails, which is expected here.
    (stream as unknown as { on(e: string, f: () => void): void }).on("error", () => {});
    (stream.done() as Promise<unknown>).catch(() => {});
    const ms = await seen(stream as AsyncIterable<unknown>);
    stream.abort();
    return ms;
  }
  if (entry.dialect === "anthropic") {
    const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: url, fetch: f, maxRetries: 0 });
    const stream = client.messages.stream(body as never);
    stream.on("error", () => {});
    stream.done().catch(() => {});
    const ms = await seen(stream);
    stream.abort();
    return ms;
  }
  const path = entry.dialect === "gemini" ? "/v1beta/models/g:streamGenerateContent?alt=sse" : "/v2/chat";
  const res = await f(url + path, { method: "POST", body: JSON.stringify(body) });
  return (await untilTextFrame(res.body!)) ? performance.now() - started : -1;
}

/** One latency row: per-round ratios guarded/unguarded, their median and its 95% bootstrap interval. */
interface LatencyRow {
  id: string;
  plain: number;
  guarded: number;
  ratio: number;
  low: number;
  high: number;
  /** Every round's ratio (pooled over the streams at the end). */
  ratios: number[];
}

/**
 * Prints latency rows as a table, with the guard's own cost from {@linkcode inProcessCost} beside each:
 * `1 + cost / unguarded` is the ratio that cost alone would give, free of the noise of the round trips.
 */
function printLatency(rows: LatencyRow[], cost: ReadonlyMap<string, number>): void {
  console.log(
    "| recording | first text unguarded ms | guarded ms | ratio (median of rounds) | 95% interval | guard's own µs | 1 + own / unguarded |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const us = cost.get(r.id);
    console.log(
      `| ${r.id} | ${r.plain.toFixed(2)} | ${r.guarded.toFixed(2)} | ${r.ratio.toFixed(3)} | ${
        r.low.toFixed(3)
      }–${r.high.toFixed(3)} | ${us === undefined ? "" : us.toFixed(0)} | ${
        us === undefined ? "" : (1 + us / 1000 / r.plain).toFixed(3)
      } |`,
    );
  }
}

/** Runs `once` guarded and unguarded `rounds` times, interleaved, the order alternating; the row. */
async function paired(
  id: string,
  rounds: number,
  once: (guard: boolean) => Promise<number>,
): Promise<LatencyRow | undefined> {
  const a: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  await once(false); // warm both paths: the first request of a client pays for connecting
  await once(true);
  for (let i = 0; i < rounds; i++) {
    const got: Record<string, number> = {};
    for (const guard of i % 2 === 0 ? [false, true] : [true, false]) got[String(guard)] = await once(guard);
    if (got.false < 0 || got.true < 0) continue;
    a.push(got.false);
    b.push(got.true);
    ratios.push(got.true / got.false);
  }
  if (ratios.length === 0) return undefined;
  const [low, high] = bootstrapMedian(ratios);
  return { id, plain: median(a), guarded: median(b), ratio: median(ratios), low, high, ratios };
}

/**
 * Time to the first text delta on every recorded stream with text (the first 40 frames, `delayMs` apart),
 * guarded against unguarded, interleaved in one run; then a 300-delta stream's total time.
 */
async function latency(
  streams: TrafficEntry[],
  rounds: number,
  delayMs: number,
  cost: ReadonlyMap<string, number>,
): Promise<void> {
  console.log(`\n## Latency (${where()}; ${delayMs} ms between frames, ${rounds} rounds, interleaved)\n`);
  const server = await frameServer();
  const rows: LatencyRow[] = [];
  try {
    for (const entry of streams) {
      const { tools } = allowedTools(entry, true);
      const plain = replaying(fetch, entry.id, 40, delayMs);
      // The guard wraps the client's fetch, as a user would: what it adds is all it costs.
      const guarded = guardFetch(plain) as typeof fetch;
      const body = latencyRequest(entry, tools);
      const row = await paired(
        entry.id,
        rounds,
        (guard) => firstTextMs(entry, server.url, guard ? guarded : plain, body),
      );
      if (row) rows.push(row);
    }
    printLatency(rows, cost);
    const ratios = rows.map((r) => r.ratio);
    const pooled = rows.flatMap((r) => r.ratios);
    const [low, high] = bootstrapMedian(pooled);
    const own = rows.map((r) => 1 + (cost.get(r.id) ?? 0) / 1000 / r.plain);
    console.log(
      `\nall ${pooled.length} rounds pooled: median ratio ${median(pooled).toFixed(3)} (95% interval ${
        low.toFixed(3)
      }–${high.toFixed(3)}); the guard's own cost alone: ratio median ${median(own).toFixed(3)}, worst ${
        Math.max(...own).toFixed(3)
      }`,
    );
    const over = rows.filter((r) => r.ratio > 1.05);
    console.log(
      `\nfirst-text ratio: median ${median(ratios).toFixed(3)}, worst ${
        Math.max(...ratios).toFixed(3)
      }; ${over.length} of ${rows.length} over 1.05 (${
        over.map((r) => `${r.id} ${r.ratio.toFixed(3)}`).join(", ") || "none"
      }); ${rows.filter((r) => r.low > 1.05).length} with the whole interval over 1.05 (${
        rows.filter((r) => r.low > 1.05).map((r) => r.id).join(", ") || "none"
      })`,
    );
    await longStream(streams, rounds, server.url);
  } finally {
    server.stop();
  }
}

/** The total time of a 300-delta stream (the recorded `openai-text`, 1 ms between frames), paired rounds. */
async function longStream(streams: TrafficEntry[], rounds: number, url: string): Promise<void> {
  const entry = streams.find((s) => s.id === "openai-text");
  if (!entry) return;
  const frames = streamWire(entry).frames;
  const plain = replaying(fetch, entry.id, frames.length, 1);
  const guarded = guardFetch(plain) as typeof fetch;
  const row = await paired(entry.id, rounds, async (guard) => {
    const client = new OpenAI({
      apiKey: "k",
      baseURL: `${url}/v1`,
      fetch: guard ? guarded : plain,
      maxRetries: 0,
    });
    const started = performance.now();
    await client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .finalChatCompletion();
    return performance.now() - started;
  });
  if (!row) return;
  console.log(
    `\n300-delta stream (${entry.id}, ${frames.length} frames, 1 ms apart): total unguarded ${
      row.plain.toFixed(1)
    } ms, guarded ${row.guarded.toFixed(1)} ms, ratio ${row.ratio.toFixed(3)} (95% interval ${
      row.low.toFixed(3)
    }–${row.high.toFixed(3)})`,
  );
}

/**
 * The guard's own cost to the first text, in process: the recording's frames up to its first text frame
 * come from a fake `fetch` at once (no network, no pauses), and the time from the call to reading that
 * frame is taken guarded and unguarded, `n` times each, interleaved. What remains is the gate's work: the
 * request body read, the tools compiled, the frames parsed and judged.
 */
async function inProcessCost(streams: TrafficEntry[], n: number): Promise<Map<string, number>> {
  console.log(`\n## The guard's own cost to the first text, in process (${where()}; ${n} runs each)\n`);
  const costs: { id: string; us: number; request: number }[] = [];
  for (const entry of streams) {
    const { tools } = allowedTools(entry, true);
    const frames = streamWire(entry).frames;
    const first = frames.findIndex((raw) => {
      const data = raw.split("\n").find((l) => l.startsWith("data:"))?.slice(5).trim();
      try {
        return !!data && carriesText(JSON.parse(data));
      } catch {
        return false;
      }
    });
    if (first < 0) continue;
    const wire = frames.slice(0, first + 1).map((f) => new TextEncoder().encode(f));
    const fake = (() =>
      Promise.resolve(
        new Response(
          new ReadableStream<Uint8Array>({
            // Closed after the first text: where a call comes before it (anthropic-compat-tool-call), the gate
            // holds the text until the turn ends, and an open stream would wait for that forever.
            start(c) {
              for (const chunk of wire) c.enqueue(chunk);
              c.close();
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        ),
      )) as typeof fetch;
    const guarded = guardFetch(fake) as typeof fetch;
    const url = entry.dialect === "gemini"
      ? "http://x/v1beta/models/g:streamGenerateContent?alt=sse"
      : `http://x${
        {
          chat: "/v1/chat/completions",
          responses: "/v1/responses",
          anthropic: "/v1/messages",
          cohere: "/v2/chat",
        }[entry.dialect]
      }`;
    const body = JSON.stringify(latencyRequest(entry, tools));
    const expected = wire.reduce((sum, c) => sum + c.byteLength, 0);
    /** Milliseconds to the response (the request side: body read, tools compiled) and to the first text. */
    const once = async (f: typeof fetch) => {
      const started = performance.now();
      const res = await f(url, { method: "POST", body });
      const headers = performance.now() - started;
      const reader = res.body!.getReader();
      for (let got = 0; got < expected;) {
        const { done, value } = await reader.read();
        if (done) break;
        got += value.byteLength;
      }
      const text = performance.now() - started;
      await reader.cancel().catch(() => {});
      return { headers, text };
    };
    const a: { headers: number; text: number }[] = [];
    const b: { headers: number; text: number }[] = [];
    for (let i = 0; i < n; i++) {
      if (i % 2 === 0) {
        a.push(await once(fake));
        b.push(await once(guarded));
      } else {
        b.push(await once(guarded));
        a.push(await once(fake));
      }
    }
    const cost = (key: "headers" | "text") =>
      (median(b.map((x) => x[key])) - median(a.map((x) => x[key]))) * 1000;
    costs.push({ id: entry.id, us: cost("text"), request: cost("headers") });
  }
  const us = costs.map((c) => c.us);
  const top = [...costs].sort((x, y) => y.us - x.us).slice(0, 5);
  console.log(
    `${costs.length} streams: the gate's added time to the first text, median ${
      median(us).toFixed(0)
    } µs, 90th percentile ${quantile(us, 0.9).toFixed(0)} µs, most ${
      top.map((c) => `${c.id} ${c.us.toFixed(0)} µs`).join(", ")
    }; of it on the request side (body read, ` +
      `tools compiled) median ${median(costs.map((c) => c.request)).toFixed(0)} µs`,
  );
  return new Map(costs.map((c) => [c.id, c.us]));
}

/**
 * What a retry costs: a Chat stream of 50 frames 5 ms apart, answered first with a rejected call and then
 * with a valid one, against one round trip of the valid answer unguarded.
 */
async function retryCost(rounds: number): Promise<void> {
  const text = Array.from({ length: 46 }, (_, i) => `w${i} `);
  const bad = chatStream(text, [{ name: "get_weather", args: { city: "Oslo", units: "kelvin" } }]);
  const good = chatStream(text, [{ name: "get_weather", args: { city: "Oslo" } }]);
  const once: number[] = [];
  const retried: number[] = [];
  let requests = 0;
  for (let i = 0; i < rounds; i++) {
    for (const guarded of [false, true]) {
      const server = await startFakeLlmServer(
        guarded ? [{ sse: bad, delayMs: 5 }, { sse: good, delayMs: 5 }] : [{ sse: good, delayMs: 5 }],
      );
      const f = guarded ? guardFetch(fetch, { retry: 1 }) as typeof fetch : fetch;
      const client = new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1`, fetch: f, maxRetries: 0 });
      const started = performance.now();
      const final = await client.chat.completions.stream({
        model: "m",
        messages: [{ role: "user", content: "Weather?" }],
        tools: TOOLS_OPENAI as never,
      }).finalChatCompletion();
      (guarded ? retried : once).push(performance.now() - started);
      if (guarded) requests = server.requests.length;
      await server.close();
      if (final.choices[0].message.tool_calls?.length !== 1) {
        throw new Error("the retry did not deliver the call");
      }
    }
  }
  console.log(`\n## Retry (${"Bun" in globalThis ? "Bun" : "Deno"}; Chat stream, 50 frames 5 ms apart)\n`);
  console.log(
    `requests with retry: ${requests} (1 extra); one round trip ${
      median(once).toFixed(1)
    } ms, with the retry ${median(retried).toFixed(1)} ms (+${
      (median(retried) - median(once)).toFixed(1)
    } ms, x${(median(retried) / median(once)).toFixed(2)})`,
  );
}

if (import.meta.main) {
  const traffic = loadTraffic();
  if (!traffic.ok) {
    console.log(`skipped: ${traffic.missing}`);
  } else {
    const args = "Deno" in globalThis
      ? (globalThis as unknown as { Deno: { args: string[] } }).Deno.args
      : (globalThis as unknown as { process: { argv: string[] } }).process.argv.slice(2);
    if (!args.includes("--latency-only") && !args.includes("--serve")) {
      const rows: Row[] = [];
      for (const e of traffic.streams) rows.push(await judgeEntry(e, "stream"));
      for (const e of traffic.bodies) rows.push(await judgeEntry(e, "body"));
      printTable(rows);
    }
    const only = args.find((a) => a.startsWith("--only="))?.slice(7).split(",");
    const streams = only ? traffic.streams.filter((e) => only.includes(e.id)) : traffic.streams;
    if (args.includes("--serve")) serveFrames(traffic.streams);
    else if (!args.includes("--replay-only")) {
      const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 21);
      const cost = await inProcessCost(streams, 200);
      await latency(streams, rounds, 5, cost);
      if (!only) await retryCost(5);
    }
  }
}
