/**
 * `deno task eval`: scores the scanner on the labelled dev data in `../shared/data/injection/dev/`.
 * Prints, per file and per attack family, recall on `injection` rows and the false-positive rate on `benign`
 * rows: once for the signature pass alone, once with a classifier hook over what the signatures cleared.
 *
 * The classifier run asks a real local model with `--classifier ollama --model NAME [--host URL]`. Without
 * those flags it starts the fake Ollama server the tests use (127.0.0.1, random port) whose "model" is a
 * keyword stand-in, and talks to it through `ollamaClassifier`: the whole path runs (HTTP, JSON answer,
 * combining with the signatures), but its numbers say nothing about a real model. The classifier only sees
 * rows the signatures cleared, so it can only add recall and false positives.
 *
 * Options: `--dir PATH` (data folder), `--json` (machine-readable), `--misses N` (examples of misses per
 * family, default 2), `--no-classifier`.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptArgs } from "./_args.ts";
import { scan } from "../scan.ts";
import { ollamaClassifier } from "../_scan/ollama_classifier.ts";
import { type FakeOllama, startFakeOllama } from "../tests/_fake_ollama.ts";
import type { Classifier, ScanContext } from "../types.ts";

/** One labelled row of the evaluation data. */
export interface Row {
  /** Upstream-derived id; its segments name the attack family. */
  id: string;
  /** The text to scan. */
  text: string;
  /** Ground truth. */
  label: "injection" | "benign";
  /** Provenance. */
  source: string;
  /** Where the text would appear. */
  context: ScanContext;
}

/** Counts for one slice of rows. */
export interface Score {
  /** Injection rows. */
  injections: number;
  /** Injection rows flagged. */
  caught: number;
  /** Benign rows. */
  benign: number;
  /** Benign rows flagged. */
  falsePositives: number;
}

/** The default dev-data folder, relative to this script. */
export const DEV_DIR: string = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "shared",
  "data",
  "injection",
  "dev",
);

/** Reads every `*.jsonl` file of a folder: file name to rows. */
export function loadRows(dir: string = DEV_DIR): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    const rows = readFileSync(join(dir, name), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) =>
      JSON.parse(l) as Row
    );
    out.set(name, rows);
  }
  return out;
}

/**
 * The attack family of a row, from its id (see SOURCE.md): InjecAgent `dh|ds/base|enhanced`, AgentDojo the
 * attack template (`direct`, `ignore_previous`, ..., `dos-*`), BIPIA the attack category. Benign rows: `benign`.
 */
export function family(row: Row): string {
  if (row.label === "benign") return "benign";
  const seg = row.id.split("/");
  if (seg[0] === "injecagent") return `${seg[1].split("-")[0]}/${seg[2]}`;
  if (seg[0] === "agentdojo") return seg[1].startsWith("dos-") ? seg[1] : seg[2];
  if (seg[0].startsWith("bipia")) return seg[1].replace(/^atk-(?:train|test)-/, "").replace(/-\d+$/, "");
  return seg.slice(0, 2).join("/");
}

/** A verdict function: true when the row is flagged. */
export type Judge = (row: Row) => boolean | Promise<boolean>;

/** The signature pass as a judge. */
export const signatures: Judge = (row) => scan(row.text, { context: row.context }).blocked;

/** Signatures first; the classifier judges only what they cleared. */
export function withClassifier(classifier: Classifier): Judge {
  return async (row) => {
    if (scan(row.text, { context: row.context }).blocked) return true;
    const check = await classifier(row.text, row.context);
    return check.error === undefined && check.injection;
  };
}

/** Result of one evaluation run. */
export interface Report {
  /** Per file. */
  files: Record<string, Score>;
  /** Per file and family (`file:family`). */
  families: Record<string, Score>;
  /** All rows. */
  overall: Score;
  /** Missed injections and flagged benign rows, per family, a few each. */
  examples: Record<string, string[]>;
}

function empty(): Score {
  return { injections: 0, caught: 0, benign: 0, falsePositives: 0 };
}

function add(s: Score, row: Row, flagged: boolean): void {
  if (row.label === "injection") {
    s.injections++;
    if (flagged) s.caught++;
  } else {
    s.benign++;
    if (flagged) s.falsePositives++;
  }
}

/** Runs a judge over every row. */
export async function evaluate(data: Map<string, Row[]>, judge: Judge, maxExamples = 2): Promise<Report> {
  const report: Report = { files: {}, families: {}, overall: empty(), examples: {} };
  for (const [file, rows] of data) {
    const fs = report.files[file] = empty();
    for (const row of rows) {
      const flagged = await judge(row);
      const key = `${file}:${family(row)}`;
      const fam = report.families[key] ??= empty();
      add(fs, row, flagged);
      add(fam, row, flagged);
      add(report.overall, row, flagged);
      if (flagged !== (row.label === "injection")) {
        const list = report.examples[key] ??= [];
        if (list.length < maxExamples) {
          // Head and tail: injections sit at the start or end of the record as often as in the middle.
          const t = row.text.length <= 240 ? row.text : `${row.text.slice(0, 110)} … ${row.text.slice(-110)}`;
          list.push(`${row.id}: ${JSON.stringify(t)}`);
        }
      }
    }
  }
  return report;
}

/** Recall as a fraction (NaN without injection rows). */
export function recall(s: Score): number {
  return s.caught / s.injections;
}

/** False-positive rate as a fraction (NaN without benign rows). */
export function fpr(s: Score): number {
  return s.falsePositives / s.benign;
}

function pct(x: number): string {
  return Number.isNaN(x) ? "    -" : `${(100 * x).toFixed(1).padStart(5)}%`;
}

/** Formats a report as a plain-text table. */
export function formatReport(title: string, r: Report): string {
  const lines = [`== ${title}`, `${"slice".padEnd(58)} recall (n)        FPR (n)`];
  const row = (name: string, s: Score) =>
    lines.push(
      `${name.padEnd(58)} ${pct(recall(s))} (${s.caught}/${s.injections})`.padEnd(82) +
        ` ${pct(fpr(s))} (${s.falsePositives}/${s.benign})`,
    );
  for (const [file, s] of Object.entries(r.files)) {
    row(file, s);
    for (const [key, f] of Object.entries(r.families)) {
      if (key.startsWith(`${file}:`)) row(`  ${key.slice(file.length + 1)}`, f);
    }
  }
  row("OVERALL", r.overall);
  return lines.join("\n");
}

if (import.meta.main) {
  const usage =
    "usage: eval.ts [--dir PATH] [--json] [--misses N] [--no-classifier | --classifier ollama --model NAME " +
    "[--host URL]]";
  const { values } = scriptArgs(usage, {
    options: {
      dir: { type: "string" },
      json: { type: "boolean", default: false },
      misses: { type: "string", default: "2" },
      "no-classifier": { type: "boolean", default: false },
      classifier: { type: "string" },
      model: { type: "string" },
      host: { type: "string" },
    },
  });
  const dir = values.dir ?? DEV_DIR;
  if (!existsSync(dir)) {
    console.error(
      `eval: no labelled dev data at ${dir}; it lives in ../shared/data/injection/dev beside the repository ` +
        "(pass --dir DIR to score another folder of *.jsonl rows)",
    );
    process.exit(2);
  }
  const data = loadRows(dir);
  const started = performance.now();
  const sig = await evaluate(data, signatures, Number(values.misses));
  const seconds = (performance.now() - started) / 1000;
  let bytes = 0;
  for (const rows of data.values()) for (const r of rows) bytes += r.text.length;
  let clf: Report | undefined;
  let clfName = "";
  if (!values["no-classifier"]) {
    let fake: FakeOllama | undefined;
    let classifier: Classifier;
    if (values.classifier === "ollama") {
      classifier = ollamaClassifier({
        model: values.model ?? "llama3.2:1b",
        host: values.host,
        timeoutMs: 60_000,
      });
      clfName = `ollama ${values.model ?? "llama3.2:1b"} at ${values.host ?? "http://127.0.0.1:11434"}`;
    } else {
      fake = await startFakeOllama();
      classifier = ollamaClassifier({ model: "stand-in", host: fake.url });
      clfName = `fake Ollama server on ${fake.url} with a keyword stand-in (plumbing only, not a model)`;
    }
    try {
      clf = await evaluate(data, withClassifier(classifier), Number(values.misses));
    } finally {
      await fake?.close();
    }
  }
  if (values.json) {
    console.log(
      JSON.stringify({ signatures: sig, classifier: clf && { name: clfName, report: clf } }, null, 2),
    );
  } else {
    console.log(formatReport("signature pass alone", sig));
    console.log(`(scanned ${(bytes / 1e6).toFixed(2)} M chars in ${seconds.toFixed(2)} s)`);
    console.log("\nexamples (misses on injection rows, hits on benign rows):");
    for (const [k, v] of Object.entries(sig.examples)) for (const e of v) console.log(`  [${k}] ${e}`);
    if (clf) console.log(`\n${formatReport(`with classifier: ${clfName}`, clf)}`);
  }
}
