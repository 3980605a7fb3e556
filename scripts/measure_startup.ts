/**
 * Start-up cost, measured hyperfine-style: many interleaved runs, warm cache, medians. Two parts:
 *
 * - **Import cost per module**: for each root module (every face in deno.json's `exports`), a one-line
 *   script that only imports it, run by `deno run -A --cached-only` and by `bun run`, against a bare script
 *   with no import on the same runtime with the same flags. Reported as the median in ms and the median
 *   over bare. Deno runs without type-checking (the `deno run` default), as a user's program would.
 * - **Compiled `--version`** (`--compiled`): `toolguard --version` built with `bun build --compile` (plain,
 *   `--minify`, `--bytecode`, `--minify --bytecode`) against a compiled one-line `console.log` built the
 *   same way, reported as a ratio.
 *
 * Each round runs every case once in a fresh random order, so a burst of load from elsewhere on the
 * machine falls on all cases alike. The load average is printed before and after.
 *
 * Usage: `deno run -A scripts/measure_startup.ts [--runs 30] [--runtime deno|bun|both] [--only mod,cli]
 * [--compiled] [--no-imports] [--json]`
 *
 * @module
 */
import { parseArgs } from "node:util";

const root = new URL("../", import.meta.url);
const rootPath = decodeURIComponent(root.pathname).replace(/^\/([A-Za-z]:)/, "$1");
const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))) as {
  exports: Record<string, string>;
};

/** One command to time, and its name in the report. */
interface Case {
  name: string;
  group: string;
  cmd: string[];
  times: number[];
}

/** A 0–1 quantile of a sorted list, interpolated. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** The median of a list of times. */
function median(times: readonly number[]): number {
  return quantile([...times].sort((a, b) => a - b), 0.5);
}

/** The system's 1, 5 and 15 minute load averages, or "n/a" where the system does not say. */
function loadAverage(): string {
  try {
    return Deno.loadavg().map((n) => n.toFixed(2)).join(" ");
  } catch {
    return "n/a";
  }
}

/** Wall time of one run of the command, in ms; throws when it fails, so a broken case is not timed. */
async function timeOnce(cmd: readonly string[]): Promise<number> {
  const start = performance.now();
  const { code, stderr } = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const elapsed = performance.now() - start;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${new TextDecoder().decode(stderr)}`);
  return elapsed;
}

/** Fisher–Yates, in place. */
function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** Runs every case `warmup` times, then `runs` interleaved rounds in random order. */
async function measure(cases: Case[], runs: number, warmup: number): Promise<void> {
  for (let i = 0; i < warmup; i++) for (const c of cases) await timeOnce(c.cmd);
  for (let round = 0; round < runs; round++) {
    for (const c of shuffle([...cases])) c.times.push(await timeOnce(c.cmd));
  }
}

/** Writes the import-only scripts and returns the cases for the runtimes asked for. */
async function importCases(
  dir: string,
  runtimes: readonly string[],
  only: readonly string[],
): Promise<Case[]> {
  const modules = Object.values(config.exports)
    .map((p) => p.replace(/^\.\//, "").replace(/\.ts$/, ""))
    .filter((m) => only.length === 0 || only.includes(m));
  await Deno.writeTextFile(`${dir}/bare.ts`, "// no import: the runtime alone\n");
  for (const m of modules) {
    await Deno.writeTextFile(`${dir}/import_${m}.ts`, `import ${JSON.stringify(`${rootPath}${m}.ts`)};\n`);
  }
  const configPath = `${rootPath}deno.json`;
  const cases: Case[] = [];
  for (const runtime of runtimes) {
    for (const m of ["bare", ...modules]) {
      const file = `${dir}/${m === "bare" ? "bare" : `import_${m}`}.ts`;
      const cmd = runtime === "deno"
        ? ["deno", "run", "-A", "--cached-only", "--config", configPath, file]
        : ["bun", "run", file];
      cases.push({ name: m, group: runtime, cmd, times: [] });
    }
  }
  // Warm Deno's module cache (and its npm resolution for cli.ts), so no run downloads or transpiles.
  if (runtimes.includes("deno")) {
    const files = cases.filter((c) => c.group === "deno").map((c) => c.cmd.at(-1)!);
    await new Deno.Command("deno", { args: ["cache", "--config", configPath, ...files] }).output();
  }
  return cases;
}

/** Compiles hello and `cli.ts` with each set of `bun build --compile` flags; returns the cases. */
async function compiledCases(dir: string): Promise<Case[]> {
  await Deno.writeTextFile(`${dir}/hello.ts`, 'console.log("hello");\n');
  const variants: Record<string, string[]> = {
    "plain": [],
    "minify": ["--minify"],
    // Bytecode needs ESM output here: cli.ts awaits at top level, which the default CommonJS form refuses.
    "bytecode": ["--bytecode", "--format=esm"],
    "minify+bytecode": ["--minify", "--bytecode", "--format=esm"],
  };
  const cases: Case[] = [];
  for (const [variant, flags] of Object.entries(variants)) {
    for (const [name, entry] of [["hello", `${dir}/hello.ts`], ["toolguard", `${rootPath}cli.ts`]]) {
      const out = `${dir}/${name}-${variant}`;
      const built = await new Deno.Command("bun", {
        args: ["build", "--compile", ...flags, entry, "--outfile", out],
        cwd: rootPath,
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!built.success) {
        console.error(`bun build --compile ${flags.join(" ")} ${name} failed:`);
        console.error(new TextDecoder().decode(built.stderr));
        continue;
      }
      cases.push({
        name,
        group: `compiled ${variant}`,
        cmd: name === "hello" ? [out] : [out, "--version"],
        times: [],
      });
    }
  }
  return cases;
}

/** One line per case: median, interquartile range, and the median over the group's first case. */
function report(cases: readonly Case[], baselineName: string, ratio: boolean): void {
  const groups = [...new Set(cases.map((c) => c.group))];
  for (const group of groups) {
    const inGroup = cases.filter((c) => c.group === group);
    const base = inGroup.find((c) => c.name === baselineName);
    const baseMedian = base ? median(base.times) : NaN;
    console.log(`\n${group} (${inGroup[0].times.length} runs each)`);
    console.log(
      `  ${"case".padEnd(12)} ${"median".padStart(9)} ${"IQR".padStart(15)} ${
        ratio ? "× hello" : "over bare"
      }`,
    );
    for (const c of inGroup) {
      const sorted = [...c.times].sort((a, b) => a - b);
      const m = quantile(sorted, 0.5);
      const iqr = `${quantile(sorted, 0.25).toFixed(1)}–${quantile(sorted, 0.75).toFixed(1)}`;
      const versus = ratio ? `×${(m / baseMedian).toFixed(2)}` : `${(m - baseMedian).toFixed(1)} ms`;
      console.log(
        `  ${c.name.padEnd(12)} ${`${m.toFixed(1)} ms`.padStart(9)} ${iqr.padStart(15)} ${
          c === base ? "" : versus
        }`,
      );
    }
  }
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "30" },
    warmup: { type: "string", default: "3" },
    runtime: { type: "string", default: "both" },
    only: { type: "string", default: "" },
    compiled: { type: "boolean", default: false },
    "no-imports": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const runtimes = values.runtime === "both" ? ["deno", "bun"] : [values.runtime];
const only = values.only === "" ? [] : values.only.split(",");

const dir = await Deno.makeTempDir({ prefix: "toolguard-startup-" });
try {
  console.log(`load average before: ${loadAverage()}`);
  const imports = values["no-imports"] ? [] : await importCases(dir, runtimes, only);
  const compiled = values.compiled ? await compiledCases(dir) : [];
  await measure([...imports, ...compiled], runs, warmup);
  console.log(`load average after: ${loadAverage()}`);
  if (imports.length > 0) {
    console.log(`\nImport cost per module (deno ${Deno.version.deno}; bun: \`bun run\`)`);
    report(imports, "bare", false);
  }
  if (compiled.length > 0) {
    console.log("\nCompiled `toolguard --version` against a compiled `console.log` (bun build --compile)");
    report(compiled, "hello", true);
  }
  if (values.json) {
    const all = [...imports, ...compiled].map((c) => ({
      group: c.group,
      name: c.name,
      median: median(c.times),
    }));
    console.log(JSON.stringify(all));
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
