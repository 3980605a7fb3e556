/**
 * Replays every recording in `../shared/data/provider-traffic/catalog.json` through the official clients,
 * with and without `guardFetch`, and prints a table per provider:
 *
 * - allowed: the request declares the recorded tools (or tools under which the recorded calls are valid);
 *   the guarded client must read the same bytes, emit the same SDK events and end with the same object;
 * - rejected: the same tools under other names, so every call is to an undeclared tool; the client must end
 *   with no call, and with the recorded text (the reason appended), reasoning and usage.
 *
 * Then latency, guarded and unguarded interleaved in one run, the server pausing between frames: time to
 * the first text delta on every recorded stream, and the total time of a 300-delta stream.
 *
 * `deno run -A bench/gate_replay.ts` or `bun bench/gate_replay.ts` (`--latency-only`, `--replay-only`).
 *
 * @module
 */
import { loadTraffic, streamWire, type TrafficEntry } from "../tests/_traffic.ts";
import OpenAI from "openai";
import { guardFetch } from "../gate.ts";
import { allowedTools, judgeEntry, replayStream, type Row } from "../tests/_replay.ts";
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

/** Median of a list. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** Time to first text delta on every recorded stream with text, and a 300-delta stream's total. */
async function latency(streams: TrafficEntry[], rounds: number, delayMs: number): Promise<void> {
  const runtime = "Bun" in globalThis ? "Bun" : "Deno";
  console.log(`\n## Latency (${runtime}; ${delayMs} ms between frames, ${rounds} rounds, interleaved)\n`);
  console.log("| recording | first text unguarded ms | guarded ms | ratio | difference ms |");
  console.log("|---|---|---|---|---|");
  let worst = 0;
  const ratios: number[] = [];
  for (const entry of streams) {
    const { tools } = allowedTools(entry, true);
    // The first text comes early; the first 40 frames show it without replaying the whole recording.
    const frames = streamWire(entry).frames.slice(0, 40);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // Interleaved, the order alternating, so drift on a shared machine falls on both sides alike.
      for (const guard of i % 2 === 0 ? [false, true] : [true, false]) {
        const o = await replayStream({ entry, tools, guard, delayMs, frames });
        if (o.firstText >= 0) (guard ? b : a).push(o.firstText);
      }
    }
    if (a.length === 0) continue;
    const ratio = median(b) / median(a);
    worst = Math.max(worst, ratio);
    ratios.push(ratio);
    console.log(
      `| ${entry.id} | ${median(a).toFixed(1)} | ${median(b).toFixed(1)} | ${ratio.toFixed(3)} | ${
        (median(b) - median(a)).toFixed(1)
      } |`,
    );
  }
  console.log(`\nfirst-text ratio: median ${median(ratios).toFixed(3)}, worst ${worst.toFixed(3)}`);
  const openai = streams.find((s) => s.id === "openai-text");
  if (!openai) return;
  const frames = streamWire(openai).frames;
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const guard of i % 2 === 0 ? [false, true] : [true, false]) {
      const o = await replayStream({ entry: openai, tools: [], guard, delayMs: 1 });
      (guard ? b : a).push(o.total);
    }
  }
  console.log(
    `\n300-delta stream (${openai.id}, ${frames.length} frames, 1 ms apart): total unguarded ${
      median(a).toFixed(1)
    } ms, guarded ${median(b).toFixed(1)} ms, ratio ${(median(b) / median(a)).toFixed(3)}`,
  );
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
    if (!args.includes("--latency-only")) {
      const rows: Row[] = [];
      for (const e of traffic.streams) rows.push(await judgeEntry(e, "stream"));
      for (const e of traffic.bodies) rows.push(await judgeEntry(e, "body"));
      printTable(rows);
    }
    if (!args.includes("--replay-only")) {
      await latency(traffic.streams, 7, 5);
      await retryCost(5);
    }
  }
}
