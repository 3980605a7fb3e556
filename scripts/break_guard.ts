/**
 * Break-the-guard check: proves the guard's tests would catch the one bug that matters most. It copies the
 * library, the fixtures and tests/guard_test.ts to a temporary directory, changes every `items: null` in
 * the copy of the guard engine (`_run/classify.ts`) to `items: []` (so failures would look like "found nothing"), and runs the invariant
 * tests there. It exits 0 only if the unmodified copy passes and the broken copy FAILS.
 *
 * Usage: `deno run -A scripts/break_guard.ts`
 *
 * @module
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const deno = (globalThis as {
  Deno?: {
    execPath(): string;
    exit(code: number): never;
    Command: new (c: string, o: Record<string, unknown>) => {
      output(): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array }>;
    };
  };
}).Deno;
if (!deno) throw new Error("run this script with deno: deno run -A scripts/break_guard.ts");
const FILTER = "items === null";
/** The file that builds every failure result: the one the bug would be planted in. */
const GUARD_ENGINE = "_run/classify.ts";

function copyTree(dir: string): void {
  for (const file of readdirSync(root)) {
    if (file.endsWith(".ts") && file !== "cli.ts") cpSync(join(root, file), join(dir, file));
    if (file.startsWith("_")) {
      cpSync(join(root, file), join(dir, file), { recursive: true });
    }
  }
  cpSync(join(root, "fixtures"), join(dir, "fixtures"), { recursive: true });
  mkdirSync(join(dir, "tests"));
  for (const file of ["guard_test.ts", "_guard_helpers.ts", "_runtime.ts"]) {
    cpSync(join(root, "tests", file), join(dir, "tests", file));
  }
}

async function runSuite(dir: string): Promise<{ code: number; output: string }> {
  // --no-check: this run is about behaviour; type errors are the type-check step's business.
  const out = await new deno!.Command(deno!.execPath(), {
    args: ["test", "-A", "--no-check", "--filter", FILTER, "tests/guard_test.ts"],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, output: text };
}

const dir = mkdtempSync(join(tmpdir(), "toolguard-break-"));
let exitCode = 1;
try {
  copyTree(dir);
  const intact = await runSuite(dir);
  if (intact.code !== 0) {
    console.error(intact.output);
    console.error("break_guard: the UNMODIFIED copy already fails its invariant tests; fix that first.");
  } else {
    const guardPath = join(dir, GUARD_ENGINE);
    const source = readFileSync(guardPath, "utf8");
    const count = source.split("items: null").length - 1;
    if (count === 0) {
      console.error(
        `break_guard: ${GUARD_ENGINE} no longer builds failures with a literal \`items: null\`; nothing to break.`,
      );
    } else {
      writeFileSync(guardPath, source.replaceAll("items: null", "items: []"));
      const broken = await runSuite(dir);
      if (broken.code === 0) {
        console.error(broken.output);
        console.error(
          `break_guard: FAILED TO CATCH the bug. With ${count} \`items: null\` turned into \`items: []\`, ` +
            "the guard's invariant tests still pass: failures could be read as 'found nothing'.",
        );
      } else {
        const failed = (broken.output.match(/FAILED/g) ?? []).length;
        console.log(
          `break_guard: proved. Turning ${count} \`items: null\` into \`items: []\` in ${GUARD_ENGINE} makes the ` +
            `invariant tests ("${FILTER}") fail (${failed} failure markers), while the intact copy passes. ` +
            "A failure can never silently become an empty answer.",
        );
        exitCode = 0;
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
deno.exit(exitCode);
