/**
 * The import-graph step of `deno task check`: reads the module graph from `deno info --json` and fails on
 *
 * - a cycle of static value imports (type-only and dynamic imports are ignored: neither runs a module body
 *   before its partner has finished, so neither can meet a binding before its initialisation);
 * - a file under a `_`-folder that imports a root module other than `types.ts`, statically or with
 *   `import()` (the rule that makes cycles through the public faces impossible);
 * - a scanner file (`_scan/`) that imports anything but `_scan/`, `_common/` and `types.ts`, statically or
 *   with `import()` (the scanner is a leaf: everything may use it, it uses nothing);
 * - a schema or validation module that `guard.ts` loads, at import or on first use (its static closure with
 *   every `import()` followed: running a tool never loads the JSON Schema engine);
 * - a schema or validation module, the text-call extractor or the scanner in the static closure of `gate.ts`:
 *   the gate loads its engines when it first judges a response (`_gate/engines.ts`), so importing it stays
 *   cheap. `_validate/providers.ts` is allowed: it reads calls in every provider's shape (no schema), and
 *   the synchronous `assembleToolCalls` gives stream calls its synthetic ids. Nor may it hold the dialects'
 *   bodies and routing (`_gate/dialects/`, but for the stream-event readers `_gate/dialects/readers.ts`,
 *   which `assembleToolCalls` needs), the body of `gateCompletion` that it loads on its first call
 *   (`_gate/gate.ts`, through `_gate/completion.ts`) or the exchange that `guardFetch` loads on its first
 *   request (`_gate/exchange.ts` and what only it uses);
 * - a schema or validation module in the static closure of `scan.ts` (`sanitise` loads the validator on its
 *   first call; nor the question `ollamaClassifier` asks, `_scan/ollama_ask.ts`), or a schema module in that of `describe.ts`, `log.ts`, `stats.ts` or `extract.ts` (none of
 *   their synchronous functions compiles a schema), or the process layer in that of `guard.ts` (`runTool`
 *   loads it on first call) or of `mcp.ts` (nor the relays there, nor `_mcp/framing.ts`, their framer and the
 *   rest of the line protocol only they use);
 * - a module in the static closure of `cli.ts` beyond `_cli/output.ts`, `_cli/self.ts` and `_common/`: the
 *   command imports each subcommand when it runs (`import()` of a string literal, which `deno compile` and
 *   `bun build --compile` still include), so `toolguard --version` loads no subcommand;
 * - an entry point, or a module that only `import()` loads (a subcommand, the gate's exchange, the engine
 *   of `sanitise`), that loads a module only through another module: Deno loads an import graph one level
 *   at a time and each level costs start-up time (1-4 ms per face over graphs 3-6 levels deep), so each of
 *   them imports every module of its static closure itself, those it needs no binding from in its start-up
 *   list (`import "./_scan/fold.ts";`, for no binding). Nor may that list name a module that its other
 *   imports do not load: it would load eagerly what is meant to load on first use;
 * - in a module that an entry point loads statically, top-level work that costs V8 far more than it looks:
 *   a loop (V8 compiles the module's top-level code to baseline code and re-parses the whole module for its
 *   source positions: 0.3-1.2 ms for the 60 KB `_scan/fold.ts`), an error made (its stack's source
 *   positions re-parse the module too), a `\p{...}` expression made (0.1-0.2 ms each on Deno), or a call of
 *   `flatMap` (its first calls, and those of what its callback runs, took Bun 0.2-0.5 ms of the import).
 *   Move such work into a function or behind first use (`lazy`, or `x ??= ...` where the module imports
 *   nothing). The check reads top-level statements as deno fmt writes them (starting in column 0) and skips
 *   those holding a function (`=>`, `function`), whose body runs later, if at all (but not a `flatMap` call
 *   whose callback is an arrow).
 *
 * Usage: `deno run -A scripts/check_imports.ts [ENTRY.ts ...]` (default: every entry point in deno.json).
 * `tests/check_imports_test.ts` imports {@linkcode layeringProblems} to check the rules on graphs of its own.
 *
 * @module
 */

interface Resolved {
  specifier: string;
}
interface Dependency {
  specifier: string;
  code?: Resolved;
  type?: Resolved;
  isDynamic?: boolean;
}
interface InfoModule {
  specifier: string;
  dependencies?: Dependency[];
}

const root = new URL("../", import.meta.url).href;
const local = (specifier: string): string | null =>
  specifier.startsWith(root) ? decodeURIComponent(specifier.slice(root.length)) : null;

/**
 * Reads the module graph of `entries`: each local file with the local files it imports statically as values
 * (`graph`), and with those it loads with `import()` of a string literal (`lazy`; `deno info` follows them,
 * so the graph holds the lazily loaded modules and their own imports too).
 */
async function valueGraph(
  entries: readonly string[],
): Promise<{ graph: Map<string, Set<string>>; lazy: Map<string, Set<string>> }> {
  const graph = new Map<string, Set<string>>();
  const lazy = new Map<string, Set<string>>();
  for (const entry of entries) {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (code !== 0) throw new Error(`deno info ${entry} failed: ${new TextDecoder().decode(stderr)}`);
    const info = JSON.parse(new TextDecoder().decode(stdout)) as { modules: InfoModule[] };
    for (const module of info.modules) {
      const from = local(module.specifier);
      if (from === null) continue;
      const targets = graph.get(from) ?? new Set<string>();
      graph.set(from, targets);
      const loaded = lazy.get(from) ?? new Set<string>();
      lazy.set(from, loaded);
      for (const dependency of module.dependencies ?? []) {
        const to = dependency.code ? local(dependency.code.specifier) : null;
        if (to === null || to.endsWith(".json")) continue;
        (dependency.isDynamic ? loaded : targets).add(to);
      }
    }
  }
  return { graph, lazy };
}

/** The static and the lazy edges as one graph: what a module may load, at import or on first use. */
function withLazy(
  graph: Map<string, Set<string>>,
  lazy: Map<string, Set<string>>,
): Map<string, Set<string>> {
  const both = new Map<string, Set<string>>();
  for (const [from, targets] of graph) both.set(from, new Set(targets));
  for (const [from, targets] of lazy) {
    both.set(from, new Set([...(both.get(from) ?? []), ...targets]));
  }
  return both;
}

/** Every file reachable from `start` over static value imports, `start` included. */
function closure(graph: Map<string, Set<string>>, start: string): Set<string> {
  const seen = new Set<string>([start]);
  const stack = [start];
  while (stack.length > 0) {
    for (const next of graph.get(stack.pop()!) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return seen;
}

/** One cycle per strongly connected component of more than one file (or a file that imports itself). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

const isRootModule = (file: string): boolean => !file.includes("/");
const folderOf = (file: string): string => file.split("/")[0];

/** What `cli.ts` may load before it knows the subcommand: its output helpers and the hidden command's name. */
const CLI_STATIC = new Set(["cli.ts", "_cli/output.ts", "_cli/self.ts"]);

/**
 * What `gate.ts` loads on first use, never at import: the engines and the dialects' bodies and routing
 * (`_gate/engines.ts`), the body of `gateCompletion` (`_gate/completion.ts`), the exchange of a guarded
 * `fetch` (`_gate/fetch.ts`)...
 */
const GATE_LAZY = [
  "_gate/gate.ts",
  "_gate/engines.ts",
  "_schema/",
  "_validate/",
  "_extract/",
  "_scan/",
  "_describe/",
  "_gate/dialects/",
  "_gate/exchange.ts",
  "_gate/stream.ts",
  "_gate/retry.ts",
  "_gate/usage.ts",
  "_gate/sse.ts",
  "_gate/text_watch.ts",
];
/**
 * ...but for what the synchronous `assembleToolCalls` needs: the provider-shape reader (for its ids) and
 * the dialects' stream-event readers.
 */
const GATE_STATIC = new Set(["_validate/providers.ts", "_gate/dialects/readers.ts"]);

/** Folders a face must not load at import: what only its asynchronous functions load, on first use. */
const LIGHT_FACES: Readonly<Record<string, readonly string[]>> = {
  // (and `ollamaClassifier` asks its model through `_scan/ollama_ask.ts`, loaded on the first question)
  "scan.ts": ["_schema/", "_validate/", "_scan/ollama_ask.ts"],
  // The verdict's sentences measure a value to show (`_common/measure.ts`) but read no JSON text: the JSON
  // reader and the snapshots (`_common/json.ts`, 21 KB of JavaScript, ~0.5 ms on Bun) are not theirs.
  "describe.ts": ["_schema/", "_validate/", "_common/json.ts"],
  "log.ts": ["_schema/", "_validate/", "_common/json.ts"],
  // `toolguard describe` reads its input through the CLI's reader (`_cli/io.ts`), then works as `describe()`.
  "_cli/describe.ts": ["_schema/", "_validate/", "_common/json.ts"],
  // `statsFromChunks` and `statsFromFile` load their line reader, and with it the file layer, on first call.
  "stats.ts": ["_schema/", "_validate/", "_scan/", "_log/stats_read.ts", "_log/files.ts"],
  // The released-text window is the gate's text watcher's, loaded with the gate's engines.
  "extract.ts": ["_schema/", "_extract/released.ts"],
  // What the faces above keep out, mod.ts keeps out too (but for what another face it re-exports loads).
  "mod.ts": [
    "_run/run_tool.ts",
    "_run/runtime.ts",
    "_mcp/relay.ts",
    "_mcp/http.ts",
    "_mcp/framing.ts",
    "_log/stats_read.ts",
    "_extract/released.ts",
    "_validate/sanitise.ts",
    "_scan/ollama_ask.ts",
    "_gate/gate.ts",
    "_gate/engines.ts",
    "_gate/exchange.ts",
  ],
  // `runTool` loads its runner and the process layer on first call (`_run/entry.ts`).
  "guard.ts": ["_run/run_tool.ts", "_run/runtime.ts"],
  // The relays start processes and speak HTTP: they load on first call (`_mcp/relays.ts`) with their framer
  // (and their newline framer, `_mcp/framing.ts`, which holds all of the line protocol only they use: the
  // answers for a line too long or too deep to pass on, writing messages out, the client feed), the guard
  // does not.
  // Its judge gives feedback only (`_describe/verdict.ts`): the sentences for tool results are not its.
  "mcp.ts": ["_run/", "_mcp/relay.ts", "_mcp/http.ts", "_mcp/framing.ts", "_describe/describe.ts"],
};

/**
 * The layering rules, as messages for every import that breaks one. `lazy` holds the `import()` edges: the
 * folder rules and the rule that running a tool never loads the schema engine hold for what a module loads
 * on first use too (the other face rules are about what importing a face costs, static imports alone).
 */
export function layeringProblems(
  graph: Map<string, Set<string>>,
  lazy: Map<string, Set<string>> = new Map(),
): string[] {
  const problems: string[] = [];
  const both = withLazy(graph, lazy);
  for (const [from, targets] of both) {
    if (isRootModule(from) || !from.startsWith("_")) continue;
    for (const to of targets) {
      const how = graph.get(from)?.has(to) ? "imports" : "loads with import()";
      if (isRootModule(to) && to !== "types.ts") {
        problems.push(`${from} ${how} the root module ${to}: import its engine under a _-folder instead`);
      }
      if (folderOf(from) === "_scan" && !["_scan", "_common", "types.ts"].includes(folderOf(to))) {
        problems.push(
          `${from} ${how} ${to}: the scanner is a leaf and may import only _scan/, _common/, types.ts`,
        );
      }
    }
  }
  // Static and lazy edges alike: `runTool` loads its runner on first call, and that must not load it either.
  for (const file of closure(both, "guard.ts")) {
    if (file.startsWith("_schema/") || file.startsWith("_validate/")) {
      problems.push(
        `guard.ts loads ${file} (at import or on first use): running a tool must not load the schema or validation engine`,
      );
    }
  }
  for (const file of closure(graph, "gate.ts")) {
    if (GATE_LAZY.some((folder) => file.startsWith(folder)) && !GATE_STATIC.has(file)) {
      problems.push(
        `gate.ts loads ${file} statically: load it on first use (_gate/engines.ts, _gate/completion.ts, or with _gate/exchange.ts)`,
      );
    }
  }
  for (const [face, folders] of Object.entries(LIGHT_FACES)) {
    for (const file of closure(graph, face)) {
      if (folders.some((folder) => file.startsWith(folder))) {
        problems.push(`${face} loads ${file} statically: none of its synchronous functions needs it`);
      }
    }
  }
  for (const file of closure(graph, "cli.ts")) {
    if (!CLI_STATIC.has(file) && !file.startsWith("_common/")) {
      problems.push(`cli.ts loads ${file} statically: import it in the subcommand that needs it (COMMANDS)`);
    }
  }
  return problems;
}

/** `file` as `from` imports it: `./x.ts` beside it, `../_scan/x.ts` from another folder. */
function specifierFor(from: string, file: string): string {
  const folder = from.split("/").slice(0, -1);
  const target = file.split("/");
  let shared = 0;
  while (shared < folder.length && shared < target.length - 1 && folder[shared] === target[shared]) shared++;
  const up = folder.length - shared;
  return (up === 0 ? "./" : "../".repeat(up)) + target.slice(shared).join("/");
}

/** The modules `file` imports for no binding (`import "./x.ts";`): its start-up list. */
function startUpList(file: string): Set<string> {
  const at = new URL(file, root);
  const source = Deno.readTextFileSync(at);
  return new Set(
    [...source.matchAll(/^import "(\.\.?\/[^"]+)";$/gm)].map((match) => local(new URL(match[1], at).href)!),
  );
}

/**
 * The roots of the graphs Deno loads in one go: the entry points, and the modules only `import()` loads
 * (a module also imported statically is loaded with its importer, its graph mostly already there).
 */
function loadRoots(
  graph: Map<string, Set<string>>,
  lazy: Map<string, Set<string>>,
  entries: readonly string[],
): string[] {
  const imported = new Set([...graph.values()].flatMap((targets) => [...targets]));
  const dynamic = new Set([...lazy.values()].flatMap((targets) => [...targets]));
  const onlyLazy = [...dynamic].filter((file) => !imported.has(file)).sort();
  return [...entries.map((entry) => entry.replace(/^\.\//, "")), ...onlyLazy];
}

/** Start-up lists that miss a module of their root's static closure, or name one it does not load. */
function flatnessProblems(graph: Map<string, Set<string>>, roots: readonly string[]): string[] {
  const problems: string[] = [];
  for (const from of roots) {
    const direct = graph.get(from) ?? new Set<string>();
    const listed = startUpList(from);
    for (const file of closure(graph, from)) {
      if (file !== from && !direct.has(file)) {
        const line = `import "${specifierFor(from, file)}";`;
        problems.push(
          `${from} loads ${file} only through another module: add \`${line}\` to its start-up list, after ` +
            "the modules it imports (Deno loads one level of imports at a time)",
        );
      }
    }
    // What the module loads without its start-up list.
    const named = new Map(graph);
    named.set(from, new Set([...direct].filter((file) => !listed.has(file))));
    const needed = closure(named, from);
    for (const file of listed) {
      if (!needed.has(file)) {
        problems.push(
          `${from}'s start-up list names ${file}, which its other imports do not load: remove it ` +
            "(the list only flattens the graph; it must not load anything eagerly)",
        );
      }
    }
  }
  return problems;
}

/** The top-level statements of a module as deno fmt writes them: from a line starting in column 0 to the next. */
function topLevelStatements(source: string): string[] {
  const statements: string[] = [];
  for (const line of source.split("\n")) {
    if (/^[^\s})\]]/.test(line) || statements.length === 0) statements.push(line);
    else statements[statements.length - 1] += "\n" + line;
  }
  return statements;
}

/** A top-level `const` whose value is a function, or made on first use: its body does not run at load. */
const FUNCTION_VALUE =
  /^(?:(?! = )[^\n])* = (?:lazy\(|function\b|(?:async )?(?:\w+|\([^()]*\))(?:: [^=]+)? =>)/;

/** Top-level work in the modules the entry points load statically that V8 charges heavily (see above). */
function loadWorkProblems(graph: Map<string, Set<string>>, entries: readonly string[]): string[] {
  const loaded = new Set(entries.flatMap((entry) => [...closure(graph, entry.replace(/^\.\//, ""))]));
  const problems: string[] = [];
  for (const file of [...loaded].sort()) {
    // Without comments, without the backticks of quoted strings (one would pair with another string's below),
    // and each template literal on one line (a line of one in column 0 starts nothing).
    const source = Deno.readTextFileSync(new URL(file, root))
      .replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, "")
      .replace(/"(?:[^"\\\n]|\\.)*"/g, (literal) => literal.replaceAll("`", ""))
      .replace(/`[^`]*`/g, (literal) => literal.replaceAll("\n", " "));
    const errorClasses = [...source.matchAll(/class (\w+) extends \w*Error\b/g)].map((match) => match[1]);
    const makesError = new RegExp(`\\bnew (?:\\w*Error|${[...errorClasses, "$^"].join("|")})\\(`);
    for (const statement of topLevelStatements(source)) {
      const first = statement.split("\n")[0];
      if (/^(?:for|while|do)\b/.test(first)) {
        problems.push(`${file} runs a loop at load (${first.trim()}): move it into a function`);
      }
      if (!/^(?:export )?(?:const|let) /.test(first)) continue;
      // A callback handed to a call at load runs at load: the only such call Bun charges heavily.
      if (/\.flatMap\(/.test(statement) && !FUNCTION_VALUE.test(statement)) {
        problems.push(`${file} calls flatMap at load (${first.trim()}): make the list on first use`);
      }
      if (/=>|\bfunction\b/.test(statement)) continue;
      if (makesError.test(statement)) {
        problems.push(`${file} makes an error at load (${first.trim()}): make it when first thrown`);
      }
      if (/\\p\{/.test(statement)) {
        problems.push(`${file} makes a \\p{...} expression at load (${first.trim()}): make it on first use`);
      }
    }
  }
  return problems;
}

if (import.meta.main) {
  const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))) as {
    exports: Record<string, string>;
  };
  const entries = Deno.args.length > 0 ? Deno.args : Object.values(config.exports);
  const { graph, lazy } = await valueGraph(entries);
  const problems = [
    ...cycles(graph).map((cycle) => `value-import cycle: ${cycle.join(" -> ")}`),
    ...layeringProblems(graph, lazy),
    ...flatnessProblems(graph, loadRoots(graph, lazy, entries)),
    ...loadWorkProblems(graph, entries),
  ];
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) Deno.exit(1);
  console.log(
    `import graph: ${graph.size} modules, no value-import cycle, layering rules hold, ` +
      "each entry point and lazily loaded module imports its whole graph itself, no costly work at load",
  );
}
