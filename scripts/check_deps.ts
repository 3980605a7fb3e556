/**
 * Proves that the library entry points import nothing beyond the runtime: `deno info --json FILE` must list
 * only local files (and `node:` built-ins), no `npm:`, `jsr:` or remote module. A guard that can fail to
 * import is worse than none.
 *
 * Usage: `deno run -A scripts/check_deps.ts mod.ts [more.ts ...]`
 *
 * @module
 */

interface InfoModule {
  specifier: string;
  kind?: string;
  error?: string;
}

let failures = 0;
for (const file of Deno.args.length > 0 ? Deno.args : ["mod.ts"]) {
  const { code, stdout, stderr } = await new Deno.Command("deno", { args: ["info", "--json", file] })
    .output();
  if (code !== 0) {
    console.error(`${file}: deno info failed: ${new TextDecoder().decode(stderr)}`);
    failures++;
    continue;
  }
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: InfoModule[];
    npmPackages?: Record<string, unknown>;
  };
  const foreign = info.modules
    .map((m) => m.specifier)
    .filter((s) => !s.startsWith("file:") && !s.startsWith("node:"));
  const npm = Object.keys(info.npmPackages ?? {});
  const broken = info.modules.filter((m) => m.error).map((m) => `${m.specifier}: ${m.error}`);
  if (foreign.length > 0 || npm.length > 0 || broken.length > 0) {
    failures++;
    console.error(`${file} imports beyond the runtime:`);
    for (const s of [...foreign, ...npm, ...broken]) console.error(`  ${s}`);
  } else {
    console.log(`${file}: ${info.modules.length} local modules, no npm:, jsr: or remote imports`);
  }
}
Deno.exit(failures === 0 ? 0 : 1);
