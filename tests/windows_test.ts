/**
 * Windows process logic. The first half tests the pure functions of `_windows.ts` on any OS with injected
 * environment values; the second half runs only on Windows (`process.platform === "win32"`: a real
 * Windows runner in CI, or deno.exe / bun.exe under Wine via `deno task check:windows`) and drives real
 * `.cmd` files, `cmd.exe`, `ping` and `taskkill` through `runTool`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  noTaskkillNote,
  ownKillReach,
  planWindowsLaunch,
  type WindowsEnv,
  windowsTreeKill,
} from "../_run/windows.ts";
import { isWindows, underWine } from "./_runtime.ts";

// ---------------------------------------------------------------------------------------------------------
// Pure functions, any OS
// ---------------------------------------------------------------------------------------------------------

/** A fake file system: Windows paths compared case-insensitively, as NTFS does. */
function files(...paths: string[]): (path: string) => boolean {
  const set = new Set(paths.map((p) => p.toLowerCase()));
  return (path) => set.has(path.toLowerCase());
}

const env: WindowsEnv = {
  PATH: "C:\\Windows\\system32;C:\\Program Files\\nodejs;C:\\tools",
  // lower case so found paths read as the fake files are named; upper case is tested on its own
  PATHEXT: ".com;.exe;.bat;.cmd",
  ComSpec: "C:\\Windows\\system32\\cmd.exe",
};

/** The line cmd.exe runs after `/s /c "..."` drops the outer quotes. */
function innerLine(raw: string): string {
  const prefix = '/d /e:ON /v:OFF /s /c "';
  assert.ok(raw.startsWith(prefix), `unexpected cmd.exe switches: ${raw}`);
  assert.ok(raw.endsWith('"'), `no closing outer quote: ${raw}`);
  return raw.slice(prefix.length, -1);
}

/**
 * A model of what cmd.exe does to that line, then how a batch file splits it into `%0`, `%1`, ...:
 * 1. command-line percent expansion: `%%cd:~,%` is a literal `%` followed by an empty substring of %cd%;
 *    any other `%name%` pair would be expanded, which the plan must never allow;
 * 2. special characters (`& | < > ( ) ^`) outside quotes would start a second command or a redirection;
 * 3. batch parameters split at space, tab, comma, semicolon and `=` outside quotes; `%~n` drops the
 *    surrounding quotes.
 * Returns `%~0`, `%~1`, ... or throws when a step would interpret the text.
 */
function cmdModel(line: string): string[] {
  let expanded = "";
  for (let i = 0; i < line.length;) {
    if (line[i] !== "%") {
      expanded += line[i++];
      continue;
    }
    const j = line.indexOf("%", i + 1);
    if (j === -1) {
      expanded += line.slice(i);
      break;
    }
    const name = line.slice(i + 1, j);
    if (name === "") {
      expanded += "%";
      i = j;
    } else if (name === "cd:~,") {
      i = j + 1;
    } else {
      throw new Error(`cmd.exe would expand %${name}% in ${line}`);
    }
  }
  let quoted = false;
  for (const ch of expanded) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && "&|<>()^".includes(ch)) throw new Error(`unquoted ${ch} in ${expanded}`);
  }
  assert.equal(quoted, false, `unbalanced quotes in ${expanded}`);
  const params: string[] = [];
  let current: string | null = null;
  quoted = false;
  for (const ch of expanded) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && " \t,;=".includes(ch)) {
      if (current !== null) params.push(current);
      current = null;
      continue;
    }
    current = (current ?? "") + ch;
  }
  if (current !== null) params.push(current);
  return params.map((p) => (p.length >= 2 && p.startsWith('"') && p.endsWith('"') ? p.slice(1, -1) : p));
}

/**
 * How the C runtime (msvcrt since 2008, Rust's std, Deno) splits the same parameters when a batch file
 * forwards `%*` to a program, as `npx.cmd` does.
 */
function crtModel(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (text[i] === " " || text[i] === "\t") i++;
    if (i >= text.length) break;
    let arg = "";
    let quoted = false;
    for (; i < text.length; i++) {
      const ch = text[i];
      if (!quoted && (ch === " " || ch === "\t")) break;
      if (ch === "\\") {
        let n = 0;
        while (text[i + n] === "\\") n++;
        if (text[i + n] === '"') {
          arg += "\\".repeat(Math.floor(n / 2));
          i += n - 1;
          if (n % 2 === 1) {
            arg += '"';
            i++;
          }
        } else {
          arg += "\\".repeat(n);
          i += n - 1;
        }
      } else if (ch === '"') {
        if (quoted && text[i + 1] === '"') {
          arg += '"';
          i++;
        } else quoted = !quoted;
      } else arg += ch;
    }
    out.push(arg);
  }
  return out;
}

function expectLaunch(plan: ReturnType<typeof planWindowsLaunch>) {
  if (!plan.ok) throw new assert.AssertionError({ message: `expected a launch plan, got: ${plan.reason}` });
  return plan;
}

function expectRefusal(plan: ReturnType<typeof planWindowsLaunch>, pattern: RegExp): void {
  assert.equal(plan.ok, false, `expected a refusal, got ${JSON.stringify(plan)}`);
  if (!plan.ok) assert.match(plan.reason, pattern);
}

test("planWindowsLaunch: a bare name resolves to a .cmd through PATHEXT and runs through cmd.exe", () => {
  const plan = expectLaunch(
    planWindowsLaunch("npx", ["--version"], env, files("C:\\Program Files\\nodejs\\npx.cmd")),
  );
  assert.equal(plan.command, "C:\\Windows\\system32\\cmd.exe");
  assert.equal(plan.rawArguments, true);
  assert.deepEqual(plan.args, ['/d /e:ON /v:OFF /s /c ""C:\\Program Files\\nodejs\\npx.cmd" --version"']);
});

test("planWindowsLaunch: .exe resolves to its full path with ordinary arguments", () => {
  const args = ["-e", "a b", 'x"y', "100%"];
  const plan = expectLaunch(
    planWindowsLaunch("node", args, env, files("C:\\Program Files\\nodejs\\node.exe")),
  );
  assert.deepEqual(plan, {
    ok: true,
    command: "C:\\Program Files\\nodejs\\node.exe",
    args,
    rawArguments: false,
  });
  assert.notEqual(plan.args, args, "the plan owns a copy of the arguments");
  const com = expectLaunch(planWindowsLaunch("more", [], env, files("C:\\Windows\\system32\\more.com")));
  assert.equal(com.command, "C:\\Windows\\system32\\more.com");
  assert.equal(com.rawArguments, false);
});

test("planWindowsLaunch: PATH order wins over extension order; PATHEXT order decides within a folder", () => {
  // an earlier folder's .cmd beats a later folder's .exe
  const first = expectLaunch(
    planWindowsLaunch("tool", [], env, files("C:\\Program Files\\nodejs\\tool.cmd", "C:\\tools\\tool.exe")),
  );
  assert.equal(first.command, "C:\\Windows\\system32\\cmd.exe");
  assert.match(first.args[0], /nodejs\\tool\.cmd/);
  // in one folder, .EXE comes before .CMD in PATHEXT
  const same = expectLaunch(
    planWindowsLaunch("tool", [], env, files("C:\\tools\\tool.cmd", "C:\\tools\\tool.exe")),
  );
  assert.equal(same.command, "C:\\tools\\tool.exe");
  // a PATHEXT that lists .CMD first flips it
  const flipped = expectLaunch(
    planWindowsLaunch(
      "tool",
      [],
      { ...env, PATHEXT: ".CMD;.EXE" },
      files("C:\\tools\\tool.cmd", "C:\\tools\\tool.exe"),
    ),
  );
  assert.equal(flipped.rawArguments, true);
});

test("planWindowsLaunch: extensions match case-insensitively and route .CMD / .Bat through cmd.exe", () => {
  const upper = expectLaunch(
    planWindowsLaunch("build", ["x"], { ...env, PATHEXT: ".exe;.cmd" }, files("C:\\tools\\BUILD.CMD")),
  );
  assert.equal(upper.rawArguments, true);
  assert.match(upper.args[0], /"C:\\tools\\build\.cmd" x"$/);
  const bat = expectLaunch(
    planWindowsLaunch("C:\\tools\\Setup.Bat", ["y"], env, files("C:\\tools\\setup.bat")),
  );
  assert.equal(bat.command, "C:\\Windows\\system32\\cmd.exe");
  assert.equal(bat.args[0], '/d /e:ON /v:OFF /s /c ""C:\\tools\\Setup.Bat" y"');
});

test("planWindowsLaunch: a name with an extension is tried as is first, even when PATHEXT lacks it", () => {
  const plan = expectLaunch(
    planWindowsLaunch(
      "node.exe",
      [],
      { ...env, PATHEXT: ".CMD" },
      files("C:\\tools\\node.exe", "C:\\tools\\node.exe.cmd"),
    ),
  );
  assert.equal(plan.command, "C:\\tools\\node.exe");
  assert.equal(plan.rawArguments, false);
  const cmd = expectLaunch(planWindowsLaunch("npm.cmd", [], env, files("C:\\tools\\npm.cmd")));
  assert.equal(cmd.rawArguments, true);
});

test("planWindowsLaunch: names with a separator resolve relative to cwd, absolute paths stay", () => {
  const cwd = "C:\\proj";
  const rel = expectLaunch(
    planWindowsLaunch(".\\scripts\\run", [], env, files("C:\\proj\\scripts\\run.cmd"), cwd),
  );
  assert.match(rel.args[0], /""C:\\proj\\scripts\\run\.cmd""$/);
  const slash = expectLaunch(planWindowsLaunch("bin/tool", [], env, files("C:\\proj\\bin\\tool.exe"), cwd));
  assert.equal(slash.command, "C:\\proj\\bin\\tool.exe");
  const up = expectLaunch(planWindowsLaunch("..\\other\\t.exe", [], env, files("C:\\other\\t.exe"), cwd));
  assert.equal(up.command, "C:\\other\\t.exe");
  const abs = expectLaunch(planWindowsLaunch("D:\\x\\y.exe", [], env, files("D:\\x\\y.exe"), cwd));
  assert.equal(abs.command, "D:\\x\\y.exe");
  // a separator means "this path", never a PATH search
  expectRefusal(planWindowsLaunch("sub\\tool", [], env, files("C:\\tools\\sub\\tool.exe"), cwd), /not found/);
});

test("planWindowsLaunch: a bare name is never taken from the working folder", () => {
  expectRefusal(
    planWindowsLaunch("git", [], env, files("C:\\proj\\git.cmd"), "C:\\proj"),
    /program "git" not found in any PATH folder/,
  );
});

test("planWindowsLaunch: a missing program is refused with what was searched", () => {
  expectRefusal(
    planWindowsLaunch("nope", [], { PATH: "C:\\bin" }, files()),
    /program "nope" not found in any PATH folder \(extensions tried: \.COM;\.EXE;\.BAT;\.CMD\)/,
  );
  expectRefusal(planWindowsLaunch("nope", [], {}, files("C:\\tools\\nope.exe")), /not found/);
  expectRefusal(planWindowsLaunch("", [], env, files()), /empty/);
  expectRefusal(planWindowsLaunch('a"b', [], env, files()), /no Windows path/);
});

test("planWindowsLaunch: without the environment a bare name is refused as not looked for, a path still runs", () => {
  // (Deno without env permission: the PATH to search is not known, so "not found in any PATH folder" is wrong)
  const plan = planWindowsLaunch("git", [], null, files("C:\\tools\\git.exe"));
  expectRefusal(plan, /^program "git" was not looked for: the environment could not be read/);
  const exe = expectLaunch(planWindowsLaunch("C:\\tools\\git", [], null, files("C:\\tools\\git.exe")));
  assert.equal(exe.command, "C:\\tools\\git.EXE"); // (the default PATHEXT's spelling)
  const cmd = expectLaunch(
    planWindowsLaunch("C:\\tools\\npx.cmd", ["a&b"], null, files("C:\\tools\\npx.cmd")),
  );
  assert.equal(cmd.command, "cmd.exe");
  assert.equal(cmd.rawArguments, true);
});

test("planWindowsLaunch: names Windows would silently turn into a batch file are refused", () => {
  // `x.cmd.` and `x.cmd ` open x.cmd; `x.cmd::$DATA` is x.cmd itself; none looks like .cmd to an
  // extension check, so without this they would reach CreateProcess and its implicit, unescaped cmd.exe
  const isBatch = files(
    "C:\\tools\\x.cmd",
    "C:\\tools\\x.cmd.",
    "C:\\tools\\x.cmd ",
    "C:\\tools\\x.cmd::$DATA",
  );
  for (
    const name of [
      "C:\\tools\\x.cmd.",
      "C:\\tools\\x.cmd ",
      "C:\\tools\\x.cmd::$DATA",
      "x.cmd:stream",
      "x.bat. . ",
    ]
  ) {
    expectRefusal(
      planWindowsLaunch(name, ["a&b"], env, isBatch),
      /ends with a dot or space or names a ":" stream/,
    );
  }
  for (const name of ["x|y", "x<y", "x>y", "x*"]) {
    expectRefusal(planWindowsLaunch(name, [], env, isBatch), /no Windows path has/);
  }
  // drive letters and the \\?\ prefix keep their colon
  assert.equal(planWindowsLaunch("C:\\tools\\x.cmd", [], env, isBatch).ok, true);
  const long = expectLaunch(
    planWindowsLaunch("\\\\?\\C:\\tools\\x.exe", [], env, files("\\\\?\\C:\\tools\\x.exe")),
  );
  assert.equal(long.rawArguments, false);
});

test("planWindowsLaunch: environment keys match case-insensitively; defaults apply when absent", () => {
  const mixed = { Path: "C:\\bin", PathExt: ".CMD", COMSPEC: "C:\\w\\cmd.exe" } as unknown as WindowsEnv;
  const plan = expectLaunch(planWindowsLaunch("t", [], mixed, files("C:\\bin\\t.cmd")));
  assert.equal(plan.command, "C:\\w\\cmd.exe");
  // no PATHEXT: cmd.exe's default list; no ComSpec: plain cmd.exe
  const bare = expectLaunch(planWindowsLaunch("t", [], { PATH: "C:\\bin" }, files("C:\\bin\\t.bat")));
  assert.equal(bare.command, "cmd.exe");
  // quoted and empty PATH entries
  const quoted = expectLaunch(
    planWindowsLaunch("t", [], { PATH: ';"C:\\Program Files\\x";;' }, files("C:\\Program Files\\x\\t.exe")),
  );
  assert.equal(quoted.command, "C:\\Program Files\\x\\t.EXE");
});

test("planWindowsLaunch: batch arguments are quoted so cmd.exe reads them as text", () => {
  const args = [
    "a b",
    "100%",
    "%PATH%",
    "x&y",
    "a^b",
    "!x!",
    "p|q",
    "<in>",
    "(",
    "",
    "plain",
    "C:\\dir\\",
    "k=v",
    "a,b;c",
  ];
  const plan = expectLaunch(planWindowsLaunch("t", args, env, files("C:\\tools\\t.cmd")));
  assert.equal(
    innerLine(plan.args[0]),
    '"C:\\tools\\t.cmd" "a b" "100%%cd:~,%" "%%cd:~,%PATH%%cd:~,%" "x&y" "a^b" "!x!" "p|q" "<in>" "(" "" plain ' +
      'C:\\dir\\ "k=v" "a,b;c"',
  );
  assert.deepEqual(cmdModel(innerLine(plan.args[0])), ["C:\\tools\\t.cmd", ...args]);
});

test("planWindowsLaunch: CR, LF, NUL and other control characters in a batch argument are refused", () => {
  for (const bad of ["a\rb", "a\nb", "x\r\n&calc", "nul\0", "bell\u0007", "esc\u001b[0m"]) {
    expectRefusal(
      planWindowsLaunch("t", ["ok", bad], env, files("C:\\tools\\t.cmd")),
      /argument 2 cannot be passed safely to batch file t\.cmd: it contains a (CR|LF|NUL|control) character/,
    );
  }
  // a tab is text once quoted
  assert.equal(planWindowsLaunch("t", ["a\tb"], env, files("C:\\tools\\t.cmd")).ok, true);
  // the same arguments are fine for an .exe: no cmd.exe is involved
  assert.equal(planWindowsLaunch("t", ["a\r\nb"], env, files("C:\\tools\\t.exe")).ok, true);
});

test("planWindowsLaunch: double quotes and a quoted trailing backslash are refused for batch files", () => {
  expectRefusal(planWindowsLaunch("t", ['say "hi"'], env, files("C:\\tools\\t.cmd")), /double quote/);
  expectRefusal(planWindowsLaunch("t", ['" & calc & "'], env, files("C:\\tools\\t.cmd")), /double quote/);
  expectRefusal(
    planWindowsLaunch("t", ["C:\\my dir\\"], env, files("C:\\tools\\t.cmd")),
    /ends with a backslash/,
  );
  // a backslash that needs no quotes is passed bare, which every reader keeps as it is
  assert.equal(planWindowsLaunch("t", ["C:\\dir\\"], env, files("C:\\tools\\t.cmd")).ok, true);
});

test("planWindowsLaunch: a batch path with % and an over-long batch command line are refused", () => {
  expectRefusal(planWindowsLaunch("C:\\100%\\t.cmd", [], env, files("C:\\100%\\t.cmd")), /contains "%"/);
  expectRefusal(planWindowsLaunch("t", ["x".repeat(9000)], env, files("C:\\tools\\t.cmd")), /8191/);
  assert.equal(planWindowsLaunch("t", ["x".repeat(9000)], env, files("C:\\tools\\t.exe")).ok, true);
});

test("planWindowsLaunch: every batch argument is refused or reaches %~n and a forwarded argv intact (property)", () => {
  const unit = fc.constantFrom(
    ..."aZ09 \t\"'%!^&|<>()=,;:.-_\\/@#$*+?~`[]{}é€\r\n\0".split(""),
    "%PATH%",
    "%cd%",
    "!USERNAME!",
    "^&",
  );
  fc.assert(
    fc.property(fc.array(fc.string({ unit, maxLength: 12 }), { maxLength: 6 }), (args) => {
      const plan = planWindowsLaunch("t", args, env, files("C:\\tools\\t.cmd"));
      if (!plan.ok) {
        // refused only for the reasons documented
        assert.ok(
          args.some((a) =>
            /["\r\n\0]/.test(a) || (a.endsWith("\\") && !/^[A-Za-z0-9#$*+\-./:?@\\_]+$/.test(a))
          ),
          `refused without cause: ${JSON.stringify(args)} (${plan.reason})`,
        );
        return;
      }
      const params = cmdModel(innerLine(plan.args[0]));
      assert.deepEqual(params, ["C:\\tools\\t.cmd", ...args]);
      // `%*` is the parameter text after the script name, quotes kept: what npx.cmd hands to node.exe
      const line = innerLine(plan.args[0]).replaceAll("%%cd:~,%", "%");
      const star = line.slice(line.indexOf('" ') + 2);
      if (args.length > 0) assert.deepEqual(crtModel(star), args);
    }),
    { numRuns: 2000 },
  );
});

test("windowsTreeKill: ends the whole tree by pid and rejects a bad pid", () => {
  assert.deepEqual(windowsTreeKill(4242), { command: "taskkill", args: ["/PID", "4242", "/T", "/F"] });
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => windowsTreeKill(bad), RangeError);
});

test("tests learn whether they run under Wine from _runtime.ts (underWine), not by reading the variable", async () => {
  const { readdirSync, readFileSync } = await import("node:fs");
  const here = new URL(".", import.meta.url);
  const variable = ["UNDER", "WINE"].join("_"); // (spelt so that this file does not read as reading it)
  const reading = new RegExp(`\\.${variable}\\b|\\[["']${variable}["']\\]`);
  const readers = readdirSync(here).filter((name) =>
    /\.(?:ts|mjs)$/.test(name) && name !== "_runtime.ts" &&
    reading.test(readFileSync(new URL(name, here), "utf8"))
  );
  assert.deepEqual(readers, []);
});

// ---------------------------------------------------------------------------------------------------------
// Real Windows (a Windows runner, or deno.exe / bun.exe under Wine)
// ---------------------------------------------------------------------------------------------------------

const winOnly = isWindows ? false : 'runs only on Windows (process.platform === "win32")';

async function realWindowsKit() {
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const { runTool } = await import("../guard.ts");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tg-win-"));
  // the host's own spelling of PATH, so the override replaces it instead of adding a second key
  const pathKey =
    Object.keys((globalThis as unknown as { process: { env: object } }).process.env).find((k) =>
      k.toUpperCase() === "PATH"
    ) ?? "PATH";
  const hostPath =
    (globalThis as unknown as { process: { env: Record<string, string> } }).process.env[pathKey] ?? "";
  const withDir = { [pathKey]: `${dir};${hostPath}` };
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  return { fs, path, runTool, dir, withDir, cleanup };
}

/** Image names of running processes, lower case, from `tasklist` (CSV, no header). */
async function processNames(): Promise<string[]> {
  const { runTool } = await import("../guard.ts");
  const r = await runTool("tasklist", ["/FO", "CSV", "/NH"], { protocol: "lines", timeoutMs: 20_000 });
  assert.equal(r.ok, true, `tasklist failed: ${r.detail}`);
  return (r.items as string[]).map((line) => line.split(",")[0].replaceAll('"', "").trim().toLowerCase());
}

test(
  "runTool: on real Windows, a bare name resolves to a .cmd through PATHEXT",
  { skip: winOnly },
  async () => {
    const kit = await realWindowsKit();
    try {
      kit.fs.writeFileSync(kit.path.join(kit.dir, "tg_hello.cmd"), '@echo {"ok":true,"items":["hello"]}\r\n');
      const r = await kit.runTool("tg_hello", [], { env: kit.withDir, timeoutMs: 20_000 });
      assert.equal(r.kind, "results", r.detail);
      assert.deepEqual(r.items, ["hello"]);
    } finally {
      kit.cleanup();
    }
  },
);

test(
  "runTool: on real Windows, env PATH in another letter case replaces the host's for resolution",
  { skip: winOnly },
  async () => {
    const kit = await realWindowsKit();
    try {
      kit.fs.writeFileSync(kit.path.join(kit.dir, "tg_case.cmd"), '@echo {"ok":true,"items":["case"]}\r\n');
      // the host spells it one way (`Path` on Windows, `PATH` under Wine); give it the other way
      const [key, value] = Object.entries(kit.withDir)[0];
      const other = key === "PATH" ? "Path" : "PATH";
      const r = await kit.runTool("tg_case", [], { env: { [other]: value }, timeoutMs: 20_000 });
      assert.equal(r.kind, "results", r.detail);
      assert.deepEqual(r.items, ["case"]);
    } finally {
      kit.cleanup();
    }
  },
);

const hostile = [
  "a b",
  "100%",
  "%PATH%",
  "%cd%",
  "x&y",
  "a^b",
  "!x!",
  "p|q",
  "<in>",
  ">out",
  "(",
  ")",
  "k=v",
  "a,b;c",
  "",
  "é€",
  "C:\\dir\\",
  "-x",
];

test(
  "runTool: on real Windows, a .cmd forwarding %* hands every argument to a program exactly",
  { skip: winOnly },
  async () => {
    const kit = await realWindowsKit();
    try {
      const { runtimeCommand } = await import("./_runtime.ts");
      const runtime = runtimeCommand("%~dp0printargs.mjs");
      const commandLine = [runtime.command, ...runtime.args].map((a) => `"${a}"`).join(" ");
      kit.fs.writeFileSync(
        kit.path.join(kit.dir, "printargs.mjs"),
        "const a = globalThis.Deno ? globalThis.Deno.args : globalThis.process.argv.slice(2);\n" +
          "console.log(JSON.stringify(a));\n",
      );
      // the npx.cmd pattern: %* goes back through cmd.exe's parser to a program's C runtime
      kit.fs.writeFileSync(kit.path.join(kit.dir, "tg_fwd.cmd"), `@${commandLine} %*\r\n`);
      const r = await kit.runTool("tg_fwd", hostile, {
        env: kit.withDir,
        protocol: "json",
        timeoutMs: 60_000,
      });
      assert.equal(r.kind, "results", r.detail);
      assert.deepEqual(r.items, hostile);
    } finally {
      kit.cleanup();
    }
  },
);

test("runTool: on real Windows, a .cmd reads %~1..%~9 exactly as given", { skip: winOnly }, async () => {
  const kit = await realWindowsKit();
  try {
    // the safe way for a batch file to print a parameter: copy it with delayed expansion off, print it
    // with delayed expansion on (a !var! value is not parsed again)
    const lines = ["@echo off", "setlocal DisableDelayedExpansion"];
    for (let i = 1; i <= 9; i++) lines.push(`set "A${i}=%~${i}"`);
    lines.push("setlocal EnableDelayedExpansion");
    for (let i = 1; i <= 9; i++) lines.push(`echo([!A${i}!]`);
    kit.fs.writeFileSync(kit.path.join(kit.dir, "tg_echo.cmd"), lines.join("\r\n") + "\r\n");
    // ASCII only: cmd.exe's echo writes in the console code page, not UTF-8. Under Wine, `%` values are
    // left out: Wine's cmd expands `%` again inside `set "A=%~1"` (real cmd.exe does not), so the echo
    // script itself would change them; the forwarding test above still checks them under Wine.
    const ascii = hostile.filter((a) => /^[\x20-\x7e]*$/.test(a) && !(underWine && a.includes("%")));
    for (let start = 0; start < ascii.length; start += 9) {
      const chunk = ascii.slice(start, start + 9);
      const r = await kit.runTool("tg_echo", chunk, {
        env: kit.withDir,
        timeoutMs: 20_000,
        // `echo([x]` prints `[x]`; Wine's echo keeps the `(`, so read between the brackets
        protocol: (out) =>
          out.split(/\r?\n/).filter((l) => l.includes("[")).map((l) =>
            l.slice(l.indexOf("[") + 1, l.lastIndexOf("]"))
          ),
      });
      assert.equal(r.kind, "results", r.detail);
      assert.deepEqual((r.items as string[]).slice(0, chunk.length), chunk);
    }
  } finally {
    kit.cleanup();
  }
});

test(
  "runTool: on real Windows, quotes, CR and LF for a .cmd are refused as spawn and nothing runs",
  { skip: winOnly },
  async () => {
    const kit = await realWindowsKit();
    try {
      const marker = kit.path.join(kit.dir, "ran.txt");
      kit.fs.writeFileSync(
        kit.path.join(kit.dir, "tg_mark.cmd"),
        `@echo ran> "${marker}"\r\n@echo {"ok":true,"items":[]}\r\n`,
      );
      for (const bad of ['" & echo pwned & "', "x\r\necho pwned", "x\necho pwned", "x\rcalc"]) {
        const r = await kit.runTool("tg_mark", [bad], { env: kit.withDir, timeoutMs: 20_000 });
        assert.equal(r.kind, "spawn", `${JSON.stringify(bad)}: ${r.kind} ${r.detail}`);
        assert.equal(r.items, null);
        assert.match(r.detail, /cannot be passed safely/);
      }
      assert.equal(kit.fs.existsSync(marker), false, "the batch file must not have run");
      // the control: a safe argument does run it
      const ok = await kit.runTool("tg_mark", ["fine"], { env: kit.withDir, timeoutMs: 20_000 });
      assert.equal(ok.kind, "empty", ok.detail);
      assert.equal(kit.fs.existsSync(marker), true);
    } finally {
      kit.cleanup();
    }
  },
);

test(
  "runTool: on real Windows, a timeout ends cmd, ping and the pipe they hold, leaving no process",
  { skip: winOnly },
  async () => {
    const { runTool } = await import("../guard.ts");
    const before = (await processNames()).filter((n) => n === "ping.exe").length;
    const started = performance.now();
    const r = await runTool("cmd", ["/c", "ping", "-n", "30", "127.0.0.1"], {
      timeoutMs: 500,
      protocol: "text",
    });
    const elapsed = performance.now() - started;
    assert.equal(r.kind, "timeout", r.detail);
    assert.equal(r.items, null);
    // taskkill /F makes every process exit with 1: that is the guard's doing, so no exit code is reported
    assert.equal(r.exitCode, null);
    // contract: timeoutMs + grace + 100 ms; generous here because CI machines (and Wine) are slow to spawn
    assert.ok(elapsed < 5_000, `settled after ${Math.round(elapsed)} ms`);
    let left = -1;
    for (let i = 0; i < 20; i++) {
      left = (await processNames()).filter((n) => n === "ping.exe").length;
      if (left <= before) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    assert.ok(left <= before, `${left - before} ping.exe process(es) left running`);
  },
);

test("runTool: on real Windows, a missing program is spawn", { skip: winOnly }, async () => {
  const { runTool } = await import("../guard.ts");
  const r = await runTool("tg-no-such-program-7f3a", ["x"], { timeoutMs: 20_000 });
  assert.equal(r.kind, "spawn", r.detail);
  assert.equal(r.items, null);
  assert.equal(r.exitCode, null);
});

test("runTool: on real Windows, exit codes above 255 are kept", { skip: winOnly }, async () => {
  const { runTool } = await import("../guard.ts");
  const r = await runTool("cmd", ["/c", "exit", "300"], { timeoutMs: 20_000 });
  assert.equal(r.kind, "exit", r.detail);
  assert.equal(r.exitCode, 300);
});

test(
  "runTool: on real Windows, code page 1252 output decodes with encoding windows-1252",
  { skip: winOnly },
  async () => {
    const kit = await realWindowsKit();
    try {
      const file = kit.path.join(kit.dir, "cp1252.txt");
      // "café € naïve" in code page 1252: é = E9, € = 80, ï = EF
      kit.fs.writeFileSync(
        file,
        new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x20, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0d, 0x0a]),
      );
      // `type` copies the file's bytes to the pipe unchanged
      const r = await kit.runTool("cmd", ["/c", "type", file], {
        encoding: "windows-1252",
        protocol: "text",
        timeoutMs: 20_000,
      });
      assert.equal(r.kind, "results", r.detail);
      assert.deepEqual(r.items, ["café € naïve"]);
    } finally {
      kit.cleanup();
    }
  },
);

test("noTaskkillNote: names Deno's run permission under Deno only; Bun and Node need taskkill on the PATH", () => {
  assert.match(noTaskkillNote("deno"), /^as Deno could not run taskkill here: .*--allow-run for taskkill/);
  for (const runtime of ["bun", "node"] as const) {
    const note = noTaskkillNote(runtime);
    assert.doesNotMatch(note, /Deno|--allow-run/);
    assert.match(
      note,
      /^as taskkill could not be started here: .*taskkill on the PATH, so processes it started/,
    );
  }
});

test("noTaskkillNote: a tool that had already exited is said so, whatever the runtime", () => {
  for (const runtime of ["deno", "bun", "node"] as const) {
    assert.doesNotMatch(noTaskkillNote(runtime), /exited/);
    assert.match(
      noTaskkillNote(runtime, true),
      /PATH, and the tool had already exited, so processes it started may still be running$/,
    );
  }
});

test("ownKillReach: the tool's exit tells whether its own kill ended it or found it already exited", () => {
  // libuv reports the signal of a kill it made; a tool that exited by itself reports its code, even 1 (the
  // code TerminateProcess gives), and a kill that came after that found no process.
  assert.equal(ownKillReach({ code: null, signal: "SIGTERM" }), "tool");
  assert.equal(ownKillReach({ code: null, signal: "SIGKILL" }), "tool");
  assert.equal(ownKillReach({ code: 0, signal: null }), "none");
  assert.equal(ownKillReach({ code: 1, signal: null }), "none");
  // Deno on POSIX: a tool that died of a signal the kill never sends (a crash, a SIGABRT it raised) before the
  // kill came was not ended by it.
  assert.equal(ownKillReach({ code: null, signal: "SIGSEGV" }), "none");
  assert.equal(ownKillReach({ code: null, signal: "SIGABRT" }), "none");
  // An exit that says nothing (a failed wait) leaves the kill's own word standing.
  assert.equal(ownKillReach({ code: null, signal: null }), "tool");
});
