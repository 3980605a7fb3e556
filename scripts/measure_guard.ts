/**
 * Measures what the guard's contract promises about time and memory, for the record (the test suite only
 * asserts generous bounds): settle times of `hang` and `grandchild` with `timeoutMs: 500`, of `orphan-pipe`,
 * and the peak memory of a process that runs a 1 GiB `flood` with the default output cap (measured in a
 * child process, so this script's own memory does not blur it).
 *
 * Usage: `deno run -A scripts/measure_guard.ts` or `bun scripts/measure_guard.ts`; add `overhead [N] [ROUNDS]`
 * for an interleaved per-call comparison of raw spawn, raw spawn in its own process group (`detached`; under
 * Deno also through `setsid`, and plainly with a marker in the environment, the two ways the guard starts a
 * tool there), and `runTool`, repeated ROUNDS times (the median ratio is printed last); or `tree [N]` for the
 * tree-kill fixtures (a grandchild holding stdout, one ignoring SIGTERM, a double fork, a grandchild that calls
 * `setsid`, a `setsid` orphan): how long each run took to settle once aborted and how many processes survived.
 *
 * @module
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "../bench/_harness.ts";
import { runTool } from "../guard.ts";
import { scriptArgs } from "./_args.ts";

const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
const tool = fileURLToPath(new URL("../fixtures/tool.ts", import.meta.url));
const self = fileURLToPath(import.meta.url);
const command = deno ? deno.execPath() : process.execPath;
const prefix = deno ? ["run", "-A", tool] : [tool];
const USAGE = "usage: measure_guard.ts [overhead [N] [ROUNDS] | tree [N]]";
/**
 * How many counts each mode takes after its name ("": the settle times; "flood-child": this script run by
 * itself, to measure the flood in a process of its own).
 */
const MODES: Record<string, number> = { "": 0, overhead: 2, tree: 1, "flood-child": 0 };
const argv = scriptArgs(USAGE, { allowPositionals: true, options: {} }).positionals;
const [mode = "", ...counts] = argv;
if (!Object.hasOwn(MODES, mode) || counts.length > MODES[mode] || counts.some((n) => !/^[1-9]\d*$/.test(n))) {
  console.error(`measure_guard: cannot read ${JSON.stringify(argv.join(" "))}\n${USAGE}`);
  process.exit(2);
}

function rss(): number {
  return process.memoryUsage().rss;
}

if (argv[0] === "flood-child") {
  // Runs in its own process: baseline, then the 1 GiB flood while sampling RSS.
  await runTool(command, [...prefix, "empty"]); // warm the spawn path so the baseline includes it
  const baseline = rss();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 5);
  const r = await runTool(command, [...prefix, "flood", "1024"], { timeoutMs: 120_000 });
  clearInterval(sampler);
  peak = Math.max(peak, rss());
  let hwm = -1;
  try {
    const m = readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+) kB/);
    if (m) hwm = Number(m[1]) * 1024;
  } catch { /* not Linux */ }
  console.log(
    JSON.stringify({ kind: r.kind, detail: r.detail, durationMs: r.durationMs, baseline, peak, hwm }),
  );
} else if (argv[0] === "overhead") {
  // Interleaved per-call timing (robust on a shared, noisy machine): raw spawn, raw spawn in its own process
  // group (what the guard needs to end whole trees), and runTool, round-robin, medians compared.
  const ARGS = ['{"ok":true,"items":[1]}'];
  const D = (globalThis as { Deno?: unknown }).Deno as {
    Command: new (c: string, o: Record<string, unknown>) => {
      output(): Promise<unknown>;
      spawn(): { stdout: ReadableStream; stderr: ReadableStream; status: Promise<unknown> };
    };
  } | undefined;
  const B = (globalThis as { Bun?: unknown }).Bun as {
    spawn(
      c: string[],
      o: Record<string, unknown>,
    ): { stdout: ReadableStream; stderr: ReadableStream; exited: Promise<unknown> };
  } | undefined;
  const raw = async (detached: boolean) => {
    if (D && !detached) {
      return await new D.Command("echo", { args: ARGS, stdout: "piped", stderr: "piped" }).output();
    }
    const p = D
      ? new D.Command("echo", { args: ARGS, stdout: "piped", stderr: "piped", detached }).spawn()
      : B!.spawn(["echo", ...ARGS], { stdout: "pipe", stderr: "pipe", detached });
    const done = "status" in p ? p.status : p.exited;
    return await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), done]);
  };
  // Under Deno the guard gets the process group through `setsid` (no fork) when it can; show that raw too.
  const setsid = ["/usr/bin/setsid", "/bin/setsid"].find((p) => existsSync(p));
  const rawSetsid = async () => {
    const p = new D!.Command(setsid!, {
      args: ["--", "echo", ...ARGS],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.status]);
  };
  // What the guard does under Deno on Linux: a plain spawn with one more environment variable.
  let marks = 0;
  const rawMarked = async () => {
    const p = new D!.Command("echo", {
      args: ARGS,
      env: { TOOLGUARD_TREE_measure: String(++marks) },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.status]);
  };
  const cases: Record<string, () => Promise<unknown>> = {
    raw: () => raw(false),
    "raw, own process group": () => raw(true),
    ...(D && setsid ? { "raw, own group via setsid": rawSetsid } : {}),
    ...(D ? { "raw, marker in env": rawMarked } : {}),
    runTool: () => runTool("echo", ARGS),
  };
  const n = Number(argv[1] ?? 150);
  const rounds = Number(argv[2] ?? 1);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const times: Record<string, number[]> = {};
    for (let i = 0; i < n; i++) {
      for (const [name, fn] of Object.entries(cases)) {
        const t0 = performance.now();
        await fn();
        (times[name] ??= []).push(performance.now() - t0);
      }
    }
    if (rounds > 1) console.log(`round ${round} of ${rounds}, ${n} calls per case`);
    for (const [name, xs] of Object.entries(times)) {
      const vs = name === "raw" ? [] : Object.keys(times).filter((k) => k !== name && k !== "runTool");
      console.log(
        `${name.padEnd(26)} median ${median(xs).toFixed(2)} ms, mean ${mean(xs).toFixed(2)} ms` +
          (name === "runTool"
            ? `  (median ${vs.map((k) => `${(median(xs) / median(times[k])).toFixed(2)}x ${k}`).join(", ")})`
            : ""),
      );
    }
    ratios.push(median(times.runTool) / median(times.raw));
  }
  if (rounds > 1) {
    const list = ratios.map((r) => r.toFixed(2)).join(", ");
    console.log(`runTool / raw, median over ${rounds} rounds: ${median(ratios).toFixed(2)}x (${list})`);
  }
} else if (argv[0] === "tree") {
  await measureTreeKills(Number(argv[1] ?? 5));
} else {
  const runtime = deno
    ? "deno"
    : `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`;
  console.log(`runtime: ${runtime}`);
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `min ${s[0]} / median ${s[s.length >> 1]} / max ${s[s.length - 1]} ms (n=${s.length})`;
  };
  for (const scenario of ["hang", "grandchild"]) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await runTool(command, [...prefix, scenario], { timeoutMs: 500 });
      if (r.kind !== "timeout") throw new Error(`${scenario}: ${r.kind}`);
      times.push(r.durationMs);
    }
    console.log(`${scenario.padEnd(11)} timeoutMs 500 -> timeout, settle ${stats(times)}`);
  }
  {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await runTool(command, [...prefix, "orphan-pipe"]);
      if (r.kind !== "results") throw new Error(`orphan-pipe: ${r.kind} ${r.detail}`);
      times.push(r.durationMs);
    }
    const startup: number[] = [];
    for (let i = 0; i < 5; i++) startup.push((await runTool(command, [...prefix, "results"])).durationMs);
    console.log(`orphan-pipe -> results, settle ${stats(times)}`);
    console.log(`  (for scale: the same tool's plain "results" run takes ${stats(startup)})`);
  }
  const child = await runTool(command, deno ? ["run", "-A", self, "flood-child"] : [self, "flood-child"], {
    protocol: "json",
    timeoutMs: 180_000,
  });
  if (!child.ok) throw new Error(`flood child: ${child.kind} ${child.detail} ${child.stderr}`);
  const m = child.items[0] as {
    kind: string;
    durationMs: number;
    baseline: number;
    peak: number;
    hwm: number;
  };
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  console.log(
    `flood 1 GiB, default cap -> ${m.kind} in ${m.durationMs} ms; RSS baseline ${mib(m.baseline)}, ` +
      `peak ${mib(m.peak)}, delta ${mib(m.peak - m.baseline)}` +
      (m.hwm > 0 ? `; VmHWM ${mib(m.hwm)} (delta vs baseline ${mib(m.hwm - m.baseline)})` : ""),
  );
}

/** True while `pid` runs (a zombie counts as gone: it no longer runs, whoever reaps it). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !"ZX".includes(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return !existsSync("/proc/self/stat"); // no /proc: kill(pid, 0) is all we know
  }
}

/**
 * Running processes of one run: those that recorded their pid, and (Linux) every process whose environment
 * names the run's pid file, which also counts one killed before it could record itself.
 */
function runningOf(pidfile: string): number {
  const pids = new Set(
    existsSync(pidfile) ? readFileSync(pidfile, "utf8").split("\n").filter((l) => l.trim()).map(Number) : [],
  );
  const needle = `TOOLGUARD_FAKE_PIDFILE=${pidfile}\0`;
  try {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (readFileSync(`/proc/${name}/environ`, "latin1").includes(needle)) pids.add(Number(name));
      } catch {
        // gone meanwhile, or not ours
      }
    }
  } catch {
    // no /proc
  }
  return [...pids].filter(isRunning).length;
}

/**
 * The tree-kill fixtures, `n` runs each. Each run is aborted once its whole tree has recorded itself
 * (`processes`); the table gives how long runTool took to return after the abort (for the orphan, which
 * exits by itself, after the start), and how many processes still ran when it returned and 500 ms later
 * (the SIGKILL after the grace period is sent in the background).
 */
async function measureTreeKills(n: number): Promise<void> {
  const treeTool = fileURLToPath(new URL("../fixtures/tree_tool.ts", import.meta.url));
  const treePrefix = deno ? ["run", "-A", treeTool] : [treeTool];
  const scenarios: [string, string[], number | null][] = [
    ["grandchild holding stdout", [...prefix, "grandchild"], 2],
    ["ignoring SIGTERM (tool)", [...prefix, "ignore-term"], 1],
    ["grandchild ignoring SIGTERM", [...treePrefix, "term-grandchild"], 2],
    ["double fork", [...treePrefix, "double-fork"], 2],
    ["grandchild calls setsid", [...treePrefix, "setsid-grandchild"], 3],
    ["setsid orphan (tool exits 0)", [...treePrefix, "setsid-orphan"], null],
  ];
  const runtime = deno
    ? "deno"
    : `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`;
  // Imported here so this script also measures a checkout from before markers (then: the process group).
  const markers = await import("../_run/tree.ts").catch(() => null);
  const how = markers?.treeMarkersWork() ? "marker in the environment, read from /proc" : "process group";
  console.log(`runtime: ${runtime}; the tree is found by: ${how}; ${n} runs each`);
  console.log(
    "| fixture | processes | kind | settle after abort, median (max) | running at return | 500 ms later |",
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  const recorded = (file: string) =>
    existsSync(file) ? new Set(readFileSync(file, "utf8").split("\n").filter((l) => l.trim())).size : 0;
  for (const [name, args, processes] of scenarios) {
    const settle: number[] = [];
    const kinds = new Set<string>();
    let atReturn = 0, later = 0;
    for (let i = 0; i < n; i++) {
      const dir = mkdtempSync(join(tmpdir(), "toolguard-tree-"));
      const pidfile = join(dir, "pids");
      try {
        const controller = new AbortController();
        const started = performance.now();
        const running = runTool(command, args, {
          env: { TOOLGUARD_FAKE_PIDFILE: pidfile },
          signal: controller.signal,
          timeoutMs: 30_000,
        });
        let from = started;
        if (processes !== null) {
          while (recorded(pidfile) < processes && performance.now() - started < 20_000) {
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          from = performance.now();
          controller.abort();
        }
        const r = await running;
        settle.push(Math.round(performance.now() - from));
        atReturn += runningOf(pidfile);
        await new Promise((resolve) => setTimeout(resolve, 500));
        later += runningOf(pidfile);
        kinds.add(r.kind);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    console.log(
      `| ${name} | ${processes ?? 2} | ${[...kinds].join(", ")} | ${median(settle)} ms (${
        Math.max(...settle)
      } ms) | ` +
        `${atReturn} | ${later} |`,
    );
  }
}
