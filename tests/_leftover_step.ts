// A fake step of `deno task check` for check_leftovers_test.ts: it leaves a file, a folder and a running
// process in its temporary folder (TMPDIR), then ends. The process is the command given as JSON in the first
// argument, started detached (it outlives the step, as a server a test forgot does); its pid is printed.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const { command, args } = JSON.parse(process.argv[2]) as { command: string; args: string[] };
writeFileSync(join(tmpdir(), "left.txt"), "x");
mkdirSync(join(tmpdir(), "left-folder"));
writeFileSync(join(tmpdir(), "left-folder", "inner.txt"), "x");
const child = spawn(command, args, { detached: true, stdio: "ignore" });
child.unref();
console.log(child.pid);
