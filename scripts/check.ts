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
 * graph (no value-import cycle, the layering rules), the suite
 * under Deno (with doc examples), the suite under Bun, and the break-the-guard proof.
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
import { leftBehind, LEFTOVERS_FAIL, untrackedFiles } from "./_check_leftovers.ts";

interface Step {
  name: string;
  cmd: string[];
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
  { name: "fmt", cmd: ["deno", "fmt", "--check"] },
  { name: "lint", cmd: ["deno", "lint"] },
  { name: "type-check", cmd: ["deno", "check", "."] },
  { name: "doc lint", cmd: ["deno", "doc", "--lint", ...entryPoints] },
  { name: "publish dry-run", cmd: ["deno", "publish", "--dry-run", "--allow-dirty"] },
  {
    name: "mod.ts imports only the runtime",
    cmd: ["deno", "run", "-A", "scripts/check_deps.ts", ...libraryEntryPoints],
  },
  { name: "import graph", cmd: ["deno", "run", "-A", "scripts/check_imports.ts"] },
  { name: "tests (deno)", cmd: ["deno", "test", "-A", "--doc"] },
  // Bun fails an async test after 5 s unless told otherwise: on a busy machine, tests that count work or
  // start servers ran past it. Tests say their own bounds; this one only catches a hang.
  { name: "tests (bun)", cmd: ["bun", "test", "--timeout", "120000", "tests/"] },
  { name: "break-the-guard", cmd: ["deno", "run", "-A", "scripts/break_guard.ts"] },
];

const PATH = await setUp();
const only = Deno.args;
const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const step of steps) {
  if (only.length > 0 && !only.some((o) => step.name.includes(o))) continue;
  console.log(`\n=== ${step.name}: ${step.cmd.join(" ")}`);
  const started = performance.now();
  let ok = false;
  const temp = await Deno.makeTempDir({ prefix: "toolguard-check-" });
  const untrackedBefore = untrackedFiles(rootPath);
  try {
    const command = step.cmd[0] === "deno" ? deno : step.cmd[0];
    const { code } = await new Deno.Command(command, {
      args: step.cmd.slice(1),
      env: { PATH, TMPDIR: temp, TMP: temp, TEMP: temp },
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    ok = code === 0;
  } catch (error) {
    console.error(`could not start ${step.cmd[0]}: ${error instanceof Error ? error.message : error}`);
  }
  const left = await leftBehind(temp);
  for (const file of untrackedFiles(rootPath)) {
    if (!untrackedBefore.has(file)) left.push(`worktree file ${file}`);
  }
  if (left.length > 0) {
    if (LEFTOVERS_FAIL) ok = false;
    console.error(
      `${step.name} left behind${LEFTOVERS_FAIL ? "" : " (listed only, on Windows)"}` +
        " (each test, example or script removes what it makes, in a finally):\n  " +
        left.slice(0, 20).join("\n  ") + (left.length > 20 ? `\n  ... ${left.length - 20} more` : ""),
    );
  }
  results.push({ name: step.name, ok, seconds: (performance.now() - started) / 1000 });
}

console.log("\n=== summary");
for (const r of results) {
  console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(36)} ${r.seconds.toFixed(1)} s`);
}
const failed = results.filter((r) => !r.ok).length;
console.log(`check: ${results.length - failed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
