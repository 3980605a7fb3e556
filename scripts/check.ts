/**
 * `deno task check`: every check the project has, in one command. Runs each step, keeps going after a
 * failure so one run shows everything that is wrong, then prints a summary and exits 1 if any step failed.
 *
 * Set-up first, so a fresh clone with only Deno on the machine passes: when a dev dependency (the official
 * provider clients, MCP servers, zod/valibot, fast-check, benchmark baselines, and Bun itself) is missing from
 * node_modules, `deno install` fetches them from the npm registry (running only Bun's own install script); when
 * no `bun` is on PATH, the one from node_modules is used.
 *
 * Steps: fmt, lint, type-check, doc lint, publish dry-run, the zero-dependency proof for mod.ts, the import
 * graph (no value-import cycle, the layering rules) and the break-the-guard proof, all at once; then the suite
 * under Deno (with doc examples) and the suite under Bun, at once. Steps run beside others are each printed
 * whole when they end.
 *
 * Each step runs with a temporary folder of its own (TMPDIR, and TMP and TEMP, which Windows reads) and fails
 * when it leaves anything in it, or (on Linux) a process still running with that folder in its environment,
 * or a file in the working tree that git does not ignore: the suites, the doc examples and the scripts clean up
 * after themselves, and other programs on the machine share the system's temporary folder, so only a folder of
 * the step's own tells its leftovers apart. On Windows the leftovers are listed without failing the step (why:
 * at `LEFTOVERS_FAIL` in scripts/_check_leftovers.ts, which finds them).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { runs } from "./bun.ts";
import { GRACE_MS, leftBehind, LEFTOVERS_FAIL, untrackedFiles } from "./_check_leftovers.ts";

interface Step {
  name: string;
  cmd: string[];
  /**
   * Runs at the same time as the steps right after it that name the same group; its output is kept and
   * printed whole when it ends, so a failure reads as it would alone. The static checks only read the tree
   * (the type-check, 15 s, is the longest of 25 s run one after another); the two suites each keep about one
   * core busy and wait on their child processes the rest of the time, so two at once take the time of the
   * longer one.
   */
  together?: "static" | "suites";
}

const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))) as {
  exports: Record<string, string>;
};
/** Every entry point in deno.json's `exports`: the command (`cli.ts`) may import a parser, the library may not. */
const entryPoints = Object.values(config.exports).map((path) => path.replace(/^\.\//, ""));
const libraryEntryPoints = entryPoints.filter((path) => path !== "cli.ts");

const root = new URL("../", import.meta.url);
const rootPath = fileURLToPath(root);
const deno = Deno.execPath();

/** True when every dev dependency in package.json has a folder in node_modules. */
function devDependenciesInstalled(): boolean {
  const pkg = JSON.parse(Deno.readTextFileSync(new URL("package.json", root))) as {
    devDependencies?: Record<string, string>;
  };
  return Object.keys(pkg.devDependencies ?? {}).every((name) => {
    try {
      return Deno.statSync(new URL(`node_modules/${name}/package.json`, root)).isFile;
    } catch {
      return false;
    }
  });
}

/** Installs what a fresh clone lacks; returns the PATH the steps run with. */
async function setUp(): Promise<string> {
  if (!devDependenciesInstalled()) {
    console.log("=== set-up: deno install (dev dependencies from the npm registry, Bun among them)");
    const { success } = await new Deno.Command(deno, {
      args: ["install", "--allow-scripts=npm:bun"],
      cwd: root,
      stdin: "null",
    }).output();
    if (!success) {
      console.error(
        "set-up failed: `deno install --allow-scripts=npm:bun` could not install the dev dependencies",
      );
      Deno.exit(1);
    }
  }
  const path = Deno.env.get("PATH") ?? "";
  if (runs("bun")) return path;
  const localBin = new URL("node_modules/.bin", root).pathname.replace(/^\/([A-Za-z]:)/, "$1");
  console.log(`=== set-up: no bun on PATH; using the one in ${localBin}`);
  return `${localBin}${Deno.build.os === "windows" ? ";" : ":"}${path}`;
}

const steps: Step[] = [
  { name: "fmt", cmd: ["deno", "fmt", "--check"], together: "static" },
  { name: "lint", cmd: ["deno", "lint"], together: "static" },
  // The doc examples (JSDoc and README) too: the suite under Deno then runs with --no-check, not checking them
  // and the test files a second time.
  { name: "type-check", cmd: ["deno", "check", "--doc", ".", "README.md"], together: "static" },
  { name: "doc lint", cmd: ["deno", "doc", "--lint", ...entryPoints], together: "static" },
  { name: "publish dry-run", cmd: ["deno", "publish", "--dry-run", "--allow-dirty"], together: "static" },
  {
    name: "mod.ts imports only the runtime",
    cmd: ["deno", "run", "-A", "scripts/check_deps.ts", ...libraryEntryPoints],
    together: "static",
  },
  { name: "import graph", cmd: ["deno", "run", "-A", "scripts/check_imports.ts"], together: "static" },
  // (it works on a copy in its own temporary folder)
  { name: "break-the-guard", cmd: ["deno", "run", "-A", "scripts/break_guard.ts"], together: "static" },
  { name: "tests (deno)", cmd: ["deno", "test", "-A", "--doc", "--no-check"], together: "suites" },
  // Bun fails an async test after 5 s unless told otherwise: on a busy machine, tests that count work or
  // start servers ran past it. Tests say their own bounds; this one only catches a hang.
  { name: "tests (bun)", cmd: ["bun", "test", "--timeout", "120000", "tests/"], together: "suites" },
];

const PATH = await setUp();
const only = Deno.args;
const results: { name: string; ok: boolean; seconds: number }[] = [];

/** The steps running now, with what the ones running beside another said so far. */
const running = new Set<
  { step: Step; child: Deno.ChildProcess; chunks: Uint8Array[]; started: number; capture: boolean }
>();

/**
 * On an interrupt (a CI job's time limit, Ctrl-C): stops the steps still running and prints what the ones
 * running beside another said so far, which would otherwise be lost with a hanging suite; then exits.
 */
function interrupted(signal: Deno.Signal): void {
  for (const run of running) {
    try {
      run.child.kill("SIGTERM");
    } catch {
      // already gone
    }
    if (!run.capture) continue;
    const seconds = (performance.now() - run.started) / 1000;
    console.log(
      `\n=== ${run.step.name}: interrupted (${signal}) after ${seconds.toFixed(1)} s; its output so far:`,
    );
    for (const chunk of run.chunks) Deno.stdout.writeSync(chunk);
  }
  console.error(`check: interrupted (${signal})`);
  Deno.exit(signal === "SIGTERM" ? 143 : 130);
}
// Windows knows only SIGINT and SIGBREAK.
for (
  const signal of Deno.build.os === "windows"
    ? ["SIGINT", "SIGBREAK"] as const
    : ["SIGINT", "SIGTERM"] as const
) {
  Deno.addSignalListener(signal, () => interrupted(signal));
}

/**
 * Runs one step in a temporary folder of its own and checks what it left there. With `capture`, its stdout and
 * stderr are kept, in the order they came, and printed whole when it ends (a step running beside another).
 */
async function runStep(
  step: Step,
  capture: boolean,
): Promise<{ ok: boolean; left: string[]; seconds: number }> {
  const heading = `\n=== ${step.name}: ${step.cmd.join(" ")}`;
  if (capture) console.log(`${heading} (started beside another step; its output follows when it ends)`);
  else console.log(heading);
  const started = performance.now();
  let ok = false;
  const chunks: Uint8Array[] = [];
  const temp = await Deno.makeTempDir({ prefix: "toolguard-check-" });
  try {
    const command = step.cmd[0] === "deno" ? deno : step.cmd[0];
    const child = new Deno.Command(command, {
      args: step.cmd.slice(1),
      env: { PATH, TMPDIR: temp, TMP: temp, TEMP: temp },
      stdin: "null",
      stdout: capture ? "piped" : "inherit",
      stderr: capture ? "piped" : "inherit",
    }).spawn();
    const run = { step, child, chunks, started, capture };
    running.add(run);
    const reading = capture ? [child.stdout, child.stderr].map((stream) => keep(stream, chunks)) : [];
    ok = (await child.status).code === 0;
    running.delete(run);
    // A process the step left running may still hold the pipes: read what came, no longer than the grace.
    await Promise.race([Promise.all(reading), new Promise((resolve) => setTimeout(resolve, GRACE_MS))]);
  } catch (error) {
    chunks.push(
      new TextEncoder().encode(
        `could not start ${step.cmd[0]}: ${error instanceof Error ? error.message : error}\n`,
      ),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  if (capture) {
    console.log(`\n=== ${step.name}: ended after ${seconds.toFixed(1)} s; its output:`);
    for (const chunk of chunks) Deno.stdout.writeSync(chunk);
  } else if (chunks.length > 0) {
    for (const chunk of chunks) Deno.stderr.writeSync(chunk);
  }
  return { ok, left: await leftBehind(temp), seconds };
}

/** Appends what `stream` gives to `chunks` until it ends or is cancelled. */
async function keep(stream: ReadableStream<Uint8Array>, chunks: Uint8Array[]): Promise<void> {
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch {
    // cancelled, or the process went away
  }
}

/** Reports what a step (or steps at once: `name` joins them) left behind; false when that fails the step. */
function reportLeft(name: string, left: string[]): boolean {
  if (left.length === 0) return true;
  console.error(
    `${name} left behind${LEFTOVERS_FAIL ? "" : " (listed only, on Windows)"}` +
      " (each test, example or script removes what it makes, in a finally):\n  " +
      left.slice(0, 20).join("\n  ") + (left.length > 20 ? `\n  ... ${left.length - 20} more` : ""),
  );
  return !LEFTOVERS_FAIL;
}

const chosen = steps.filter((step) => only.length === 0 || only.some((o) => step.name.includes(o)));
for (let i = 0; i < chosen.length;) {
  // the steps that run together: one with a group and those of its group right after it
  let end = i + 1;
  const together = chosen[i].together;
  if (together) { while (end < chosen.length && chosen[end].together === together) end++; }
  const group = chosen.slice(i, end);
  i = end;
  const untrackedBefore = untrackedFiles(rootPath);
  const ran = await Promise.all(group.map((step) => runStep(step, group.length > 1)));
  // A file in the working tree cannot be told apart between steps that ran at once: it fails them all.
  const newFiles = [...untrackedFiles(rootPath)].filter((file) => !untrackedBefore.has(file));
  const inTree = reportLeft(
    group.map((step) => step.name).join(" or "),
    newFiles.map((f) => `worktree file ${f}`),
  );
  group.forEach((step, k) => {
    const clean = reportLeft(step.name, ran[k].left);
    results.push({ name: step.name, ok: ran[k].ok && clean && inTree, seconds: ran[k].seconds });
  });
}

console.log("\n=== summary");
for (const r of results) {
  console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(36)} ${r.seconds.toFixed(1)} s`);
}
const failed = results.filter((r) => !r.ok).length;
console.log(`check: ${results.length - failed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
