/**
 * A small command-line tool for the agent example: searches the `.md` and `.txt` files of a directory for a
 * phrase and prints toolguard's envelope protocol on stdout:
 * `{"ok":true,"items":[{"file":"deploy.md","line":3,"text":"..."}]}`, or `{"ok":false,"error":{...}}`.
 *
 * Run it with the current runtime: `deno run --allow-read examples/notes_tool.ts DIR -- QUERY` or
 * `bun examples/notes_tool.ts DIR -- QUERY`.
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const deno = (globalThis as { Deno?: { args: string[] } }).Deno;
const argv = deno ? deno.args : process.argv.slice(2);
const sep = argv.indexOf("--");
const dir = argv[0];
const query = sep >= 0 ? argv.slice(sep + 1).join(" ") : argv[1];

function print(value: unknown): void {
  console.log(JSON.stringify(value));
}

if (!dir || query === undefined || query.trim() === "") {
  print({
    ok: false,
    error: { code: "usage", message: "usage: notes_tool.ts DIR -- QUERY (a non-empty phrase)" },
  });
} else {
  let names: string[] | undefined;
  try {
    names = (await readdir(dir)).filter((n) => /\.(md|txt)$/.test(n)).sort();
  } catch (e) {
    print({ ok: false, error: { code: "no_dir", message: `cannot read ${dir}: ${(e as Error).message}` } });
  }
  const items: { file: string; line: number; text: string }[] = [];
  const needle = query.toLowerCase();
  for (const name of names ?? []) {
    const lines = (await readFile(join(dir, name), "utf8")).split(/\r?\n/);
    lines.forEach((text, i) => {
      if (text.toLowerCase().includes(needle)) items.push({ file: name, line: i + 1, text: text.trim() });
    });
  }
  if (names !== undefined) print({ ok: true, items });
}
