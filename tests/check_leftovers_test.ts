// scripts/_check_leftovers.ts, what `deno task check` finds a step left behind: a fake step (a real process)
// leaves a file, a folder and a running process in its own temporary folder; all three are listed, the
// process ended and the folder removed. And the working tree's untracked files, in a repository of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { leftBehind, processesWith, untrackedFiles } from "../scripts/_check_leftovers.ts";
import { evalCommand, isAlive, isLinux, runtimeCommand, signalProcess } from "./_runtime.ts";
import { waitGone } from "./_guard_helpers.ts";

const stepScript = fileURLToPath(new URL("./_leftover_step.ts", import.meta.url));
const hasGit = spawnSync("git", ["--version"]).status === 0;

test(
  "check leftovers: a step's file, folder and running process are listed, the process ended and the folder removed",
  { timeout: 60_000 },
  async () => {
    const temp = mkdtempSync(join(tmpdir(), "toolguard-check-step-"));
    let pid: number | undefined;
    try {
      const { command, args } = runtimeCommand(stepScript, [
        JSON.stringify(evalCommand("setTimeout(() => {}, 120000)")),
      ]);
      const step = spawnSync(command, args, {
        env: { ...process.env, TMPDIR: temp, TMP: temp, TEMP: temp },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(step.status, 0, step.stderr);
      pid = Number(step.stdout.trim());
      assert.ok(Number.isInteger(pid) && pid > 0, step.stdout);
      assert.ok(isAlive(pid), "the step's process runs on after the step");
      // On a loaded machine the step can end before its child's environment reads as its own (it failed
      // so under Bun once this stop): wait until it does, as a real step's server would have long before.
      for (let i = 0; isLinux && i < 100 && processesWith(temp).length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // (a short grace: this process never ends, so the check's 3 s would only be waited out)
      const left = await leftBehind(temp, 200);
      assert.deepEqual(left.filter((line) => !line.startsWith("process ")).sort(), [
        "file left.txt",
        "folder left-folder",
      ]);
      assert.equal(existsSync(temp), false);
      if (isLinux) {
        // Found by the folder in its environment, the step long ended; then killed, as the check does.
        const processes = left.filter((line) => line.startsWith("process "));
        assert.equal(processes.length, 1, left.join("\n"));
        assert.match(processes[0], new RegExp(`^process ${pid} \\S`));
        // (a SIGKILL is delivered, not awaited)
        assert.deepEqual(await waitGone([pid], 10_000), [], "the leftover process was ended");
        pid = undefined; // gone: its number may be another process's by now
      }
    } finally {
      // A failed assertion must not leave the fake step's process behind.
      if (pid !== undefined && isAlive(pid)) signalProcess(pid);
      rmSync(temp, { recursive: true, force: true });
    }
  },
);

test(
  "check leftovers: a process counts when its TMPDIR is the step's folder or one inside it, not a sibling",
  {
    skip: isLinux ? false : "found through /proc: Linux only",
    timeout: 60_000,
  },
  async () => {
    const temp = mkdtempSync(join(tmpdir(), "toolguard-check-procs-"));
    const children: ReturnType<typeof spawn>[] = [];
    try {
      const { command, args } = evalCommand("setTimeout(() => {}, 120000)");
      const start = (dir: string) => {
        const child = spawn(command, args, { env: { ...process.env, TMPDIR: dir }, stdio: "ignore" });
        children.push(child);
        return child.pid!;
      };
      const inside = start(join(temp, "sub"));
      start(`${temp}-sibling`);
      // A child not yet past exec shows the test's environment: wait until both show their own.
      const started = () => processesWith(temp).length > 0 && processesWith(`${temp}-sibling`).length > 0;
      for (let i = 0; i < 100 && !started(); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(processesWith(temp).map((line) => Number(line.split(" ")[0])), [inside]);
    } finally {
      for (const child of children) child.kill("SIGKILL");
      rmSync(temp, { recursive: true, force: true });
    }
  },
);

test(
  "check leftovers: untrackedFiles lists what git neither tracks nor ignores, with its path from the top",
  {
    skip: hasGit ? false : "needs git",
  },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "toolguard-check-git-"));
    try {
      assert.equal(spawnSync("git", ["init", "-q"], { cwd: dir }).status, 0);
      writeFileSync(join(dir, ".gitignore"), "ignored.txt\n");
      writeFileSync(join(dir, "ignored.txt"), "x");
      writeFileSync(join(dir, "new.txt"), "x");
      mkdirSync(join(dir, "sub"));
      writeFileSync(join(dir, "sub", "deep.txt"), "x");
      assert.deepEqual([...untrackedFiles(dir)].sort(), [".gitignore", "new.txt", "sub/deep.txt"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
