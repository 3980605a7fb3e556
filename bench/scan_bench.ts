/**
 * Scanner throughput: the labelled dev data (every row scanned with its own context; and its benign rows alone)
 * and adversarial text built to make backtracking regular expressions blow up, each scanned whole and in 4 KiB
 * chunks (one `scan()` call per chunk, so fixed per-call cost shows). Case names carry the input size in MB so
 * the reported time per iteration converts to MB/s; run this file directly (`deno run -A bench/scan_bench.ts` or
 * `bun bench/scan_bench.ts`, optionally `--rounds N`, default 7) to print M chars/s for each case (medians of
 * interleaved rounds in CPU time), short-argument cost, and the memory a 50 MB scan takes (each measured in a
 * fresh process: RSS growth, peak-RSS growth and heap growth; on prose, on every adversarial input in turn, and
 * on each of the three with no neutral cut alone: letter spacing, bidirectional controls in words, spaced
 * emoji).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { cpuMs, interleavedMedians, register } from "./_harness.ts";
import { scan } from "../scan.ts";
import { lazy } from "../_common/values.ts";
import { DEV_DIR, loadRows, type Row } from "../scripts/eval.ts";

/** Whether the labelled dev data is beside the repository (`../shared`); its cases are left out otherwise. */
const devPresent = existsSync(DEV_DIR);
// (on stderr: the scripts that import this module for its texts keep their output, and `--help`, clean)
if (!devPresent) console.error(`skip: the dev-data cases did not run: ${DEV_DIR} is absent`);
const rows: Row[] = [];
if (devPresent) { for (const list of loadRows().values()) rows.push(...list); }
const devChars = rows.reduce((n, r) => n + r.text.length, 0);

const SIZE = 256 * 1024;

/**
 * `text` as a string of its own, every code unit kept (a JSON round trip, lone surrogates included), as a file
 * read or a stream's decoder hands text over, never a slice or a repeat of a longer string: V8 reads those more
 * slowly (a slice of text with one character beyond Latin-1 anywhere is two bytes a character throughout), which
 * the scanner's users do not see.
 */
function fresh(text: string): string {
  return JSON.parse(JSON.stringify(text));
}

/**
 * `unit` repeated to `SIZE` characters (one fewer where the last would be half a surrogate pair, which no
 * decoder hands over), as a string of its own (see `fresh`).
 */
const fill = (unit: string) => {
  const text = unit.repeat(Math.ceil(SIZE / unit.length));
  return fresh(text.slice(0, (text.charCodeAt(SIZE - 1) & 0xFC00) === 0xD800 ? SIZE - 1 : SIZE));
};
/** Inputs that defeat naive rules: near-matches, repeated prefixes, unclosed brackets, hidden characters. */
export const adversarial: Record<string, string> = {
  "near-miss override": fill("ignore all previous "),
  "imperative, no object": fill("please send my "),
  "unclosed markdown": fill("![a](http://x.co/?a="),
  "letter-spaced": fill("i g n o r e "),
  "homoglyph words": fill("іgnоrе аll рrеvіоus "),
  "zero-width": fill("\u200B"),
  "chat-token prefixes": fill("<|im_"),
  // Two with no neutral cut anywhere (see _scan/segments.ts), read in forced pieces at 50 MB: a raw rule's match
  // every eight characters, and surrogate pairs every three.
  "bidi controls in words": fill("abc\u202Edef "),
  "spaced emoji": fill("\u{1F389} "),
  "prose": fill("The quarterly report shows steady growth in all regions, with minor delays. "),
};

/**
 * Everyday prose with the typographic characters web pages, e-mails and model output carry (curly quotes and
 * apostrophes, dashes, an ellipsis, accented letters, a currency sign), about one in 40 characters: benign text
 * that is not ASCII, which takes the scanner's full fold where plain prose takes the ASCII one.
 */
export const typographic: string = fill(
  "The team’s quarterly report — shared on Monday — shows steady growth in all regions, with minor " +
    "delays in shipping. Customers called the new guide “much clearer”, and the café in Zürich " +
    "asked for 40 copies at €12 each. If you have questions about your invoice, my colleague in accounting " +
    "can help; the data file is attached. Each task on the board has an owner… and the rules for code " +
    "review haven’t changed.\n",
);

/**
 * Paragraphs in Russian and Chinese and a chat line with emoji, each paragraph closed by a blank line: benign text
 * mostly or wholly beyond ASCII (Cyrillic letters that look Latin fold to Latin ones, the rest to themselves; emoji
 * are surrogate pairs), as users writing in other languages hand it over.
 */
export const nonLatin: string = fill(
  "Квартальный отчёт показывает устойчивый рост во всех регионах, с небольшими задержками в доставке. " +
    "Клиенты назвали новое руководство «гораздо понятнее».\n\n" +
    "季度报告显示所有地区都在稳定增长，但发货略有延迟。客户称新指南“清楚得多”。\n\n" +
    "Great news 🎉 the release shipped today 🚀 thanks everyone 🙏 see the notes ✅ and ping me if anything " +
    "breaks 🐛\n\n",
);

/**
 * Tool output laid out with whitespace: tab-indented source code, a directory listing padded with spaces and
 * tab-separated values. Benign text whose whitespace runs (every line starts with one) the fold collapses.
 */
export const layout: string = fill(
  "\tfunction total(items) {\n\t\tlet sum = 0;\n\t\tfor (const item of items) {\n\t\t\tsum += item.price * item.count;\n" +
    "\t\t}\n\t\treturn sum;\n\t}\n\n" +
    "drwxr-xr-x  2 root root   4096 Dec  2 19:01 bin\n-rw-r--r--  1 root root  18234 Dec  2 18:40 README.md\n" +
    "id\tname\tcity\tamount\n17\tAda\tOslo\t12.50\n18\tCharles\tLondon\t7.25\n",
);

/**
 * A web page as a fetch tool hands it over (markup, character references, links with query strings, a comment)
 * and a raw JSON body with escaped strings (`\n`, `\"`, `\u00e9`, `\/`): benign text the scanner also reads
 * decoded (see _scan/decode.ts), each a tag, reference or escape every few dozen characters. Not among
 * `scanTexts`, which the scan identity reads: `scripts/scan_ab.ts` times them.
 */
export const webTexts: Record<string, string> = {
  "HTML page": fill(
    '<div class="post"><h2>Quarterly report</h2><p>The team&rsquo;s report &mdash; shared on ' +
      '<time datetime="2026-12-01">Monday</time> &mdash; shows <strong>steady growth</strong> in all ' +
      'regions, with minor delays. See the <a href="https://example.com/report?id=42&amp;lang=en">full ' +
      'report</a> or the <a href="/faq#shipping">FAQ</a>.</p>\n<!-- sidebar --><ul><li>Revenue: ' +
      "&euro;12&nbsp;400</li><li>Orders: 1&nbsp;204 &amp; rising</li></ul></div>\n",
  ),
  "raw JSON": fill(
    '{"id": 17, "title": "Caf\\u00e9 menu", "body": "Line one of the note.\\nThe team said \\"much ' +
      'clearer\\" and asked for 40 copies.\\n", "url": "https:\\/\\/example.com\\/a%20b", ' +
      '"tags": ["food", "z\\u00fcrich"]},\n',
  ),
};

/**
 * The texts each scanned whole and in 4 KiB chunks: the adversarial inputs, then the typographic prose, the
 * prose beyond Latin script and the laid-out tool output.
 */
export const scanTexts: Record<string, string> = {
  ...adversarial,
  "typographic prose": typographic,
  "non-Latin prose": nonLatin,
  "code and listings": layout,
};

const mb = (chars: number) => (chars / 1e6).toFixed(2);

/** Short benign argument values as a model writes them, scanned the way `validate()` scans arguments. */
export const shortArgs: readonly string[] = [
  "Berlin",
  "2026-12-01",
  "find all TODO comments in src",
  "alice@example.com",
  "src/main.ts",
  "What is the weather like in Paris tomorrow?",
  "42",
  "Meeting notes: discuss Q3 budget - follow up with Bob",
];
const shortChars = shortArgs.reduce((n, s) => n + s.length, 0);

/**
 * Ten megabytes of ordinary prose: varied sentences with the everyday words several rules key on ("you",
 * "your", "my", "before", "task", "data", "file", numbers, an e-mail address), none of them an injection.
 */
const PROSE_UNIT =
  "The quarterly report shows steady growth in all regions, with minor delays in shipping. " +
  "Our team reviewed the budget on Monday, 12 May 2025, and agreed to hire two engineers before the end of the year. " +
  "If you have questions about your invoice, my colleague in accounting can help; the data file is attached. " +
  "Customers asked for better documentation, so the writers will publish a new guide in March. " +
  "Each task on the board has an owner, and the rules for code review have not changed.\n" +
  "Contact: support@example.com. The model we ship is tested by an agent team every week.\n";
/** `PROSE_UNIT` repeated to exactly ten million characters. */
export const prose10mb: string = PROSE_UNIT.repeat(Math.ceil(10_000_000 / PROSE_UNIT.length)).slice(
  0,
  10_000_000,
);

/**
 * `text` cut into 4 KiB pieces, as a stream of tool output arrives: each piece a string of its own, as a
 * decoder hands it over, not a slice of `text`. A slice of a text with one character beyond Latin-1 anywhere
 * is stored two bytes a character even where it is plain ASCII, and V8 reads such strings more slowly
 * (its `encodeInto` about 40 times): slices made Deno's benign rows in chunks 12% slower than decoded text.
 * The JSON round trip keeps every code unit, lone surrogates included.
 */
export function chunks(text: string, size = 4096): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(fresh(text.slice(i, i + size)));
  return out;
}

/** Every dev row, one after another, as one text. */
const devJoined = rows.map((r) => r.text).join("\n");
// The chunk lists are made on first use: the memory measurement imports this file and must not start with
// their garbage (it moved Bun's RSS growth by 60 MiB).
const devChunks = lazy(() => chunks(devJoined));
const proseChunks = lazy(() => chunks(prose10mb));

function scanChunks(list: readonly string[]): number {
  let n = 0;
  for (const c of list) n += scan(c).findings.length;
  return n;
}

function scanShort(): number {
  let n = 0;
  for (const s of shortArgs) n += scan(s, { context: "tool_args" }).findings.length;
  return n;
}

function scanDev(): number {
  return scanRows(rows);
}

/** Scans each row with its own context; returns the number of findings. */
function scanRows(list: readonly Row[]): number {
  let n = 0;
  for (const r of list) n += scan(r.text, { context: r.context }).findings.length;
  return n;
}

/** The benign dev rows alone (e-mails, web pages, documents): the text most tool output is like. */
const benignRows = rows.filter((r) => r.label === "benign");
const benignChars = benignRows.reduce((n, r) => n + r.text.length, 0);
const benignChunks = lazy(() => chunks(benignRows.map((r) => r.text).join("\n")));

/** The cases that read the dev data. */
const devCases = [
  {
    name: `dev data, ${rows.length} rows (${mb(devChars)} MB)`,
    group: "scan",
    baseline: true,
    fn: scanDev,
    minIterations: 3,
  },
  {
    name: `benign dev rows, ${benignRows.length} rows (${mb(benignChars)} MB)`,
    group: "scan",
    fn: () => scanRows(benignRows),
    minIterations: 5,
  },
  {
    name: `dev data in 4 KiB chunks (${mb(devJoined.length)} MB)`,
    group: "scan",
    fn: () => scanChunks(devChunks()),
    minIterations: 3,
  },
];

register([
  ...(devPresent ? devCases : []),
  ...Object.entries(scanTexts).map(([name, text]) => ({
    name: `${name} (${mb(text.length)} MB)`,
    group: "scan",
    fn: () => scan(text),
    minIterations: 5,
  })),
  {
    name: `${shortArgs.length} short benign args, tool_args (${shortChars} chars)`,
    group: "scan short args",
    baseline: true,
    fn: scanShort,
    minIterations: 1000,
  },
  {
    name: `"Berlin", tool_args`,
    group: "scan short args",
    fn: () => scan("Berlin", { context: "tool_args" }),
    minIterations: 1000,
  },
  {
    name: `prose, tool_output (${mb(prose10mb.length)} MB)`,
    group: "scan 10 MB prose",
    baseline: true,
    fn: () => scan(prose10mb),
    minIterations: 2,
  },
  {
    name: `prose in 4 KiB chunks, tool_output (${mb(prose10mb.length)} MB)`,
    group: "scan 10 MB prose",
    fn: () => scanChunks(proseChunks()),
    minIterations: 2,
  },
  {
    name: `prose, tool_args (${mb(prose10mb.length)} MB)`,
    group: "scan 10 MB prose",
    fn: () => scan(prose10mb, { context: "tool_args" }),
    minIterations: 2,
  },
]);

/** What the memory is measured on, 50 M characters each. */
type MemoryKind = "prose" | "adversarial mix" | "letter spacing" | "bidi controls in words" | "spaced emoji";

/**
 * Fifty million characters: the prose; every adversarial input in turn; or one of the adversarial texts with no
 * neutral cut anywhere (see _scan/segments.ts) alone, read in forced pieces rather than windows.
 */
function memoryInput(kind: MemoryKind): string {
  const unit = kind === "prose"
    ? prose10mb
    : kind === "adversarial mix"
    ? Object.values(adversarial).join("")
    : adversarial[kind === "letter spacing" ? "letter-spaced" : kind];
  return unit.repeat(Math.ceil(50_000_000 / unit.length)).slice(0, 50_000_000);
}

/** MiB, one decimal. */
const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

/**
 * Scans 50 M characters once in this process and prints how much RSS, peak RSS and heap grew. Run in a fresh
 * process (see `measureMemory`) so earlier cases leave nothing behind.
 */
function memoryChild(kind: MemoryKind): void {
  const gc = globalThis as { gc?: () => void; Bun?: { gc: (full: boolean) => void } };
  const collect = () => gc.Bun ? gc.Bun.gc(true) : gc.gc?.();
  const text = memoryInput(kind);
  // Flatten the repeated string before measuring: its first read would otherwise count as the scan's.
  text.charCodeAt(text.length - 1);
  /^/.test(text);
  collect();
  const before = process.memoryUsage();
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const started = performance.now();
  const r = scan(text);
  const ms = performance.now() - started;
  const after = process.memoryUsage();
  const peakAfter = process.resourceUsage().maxRSS * 1024;
  collect();
  const kept = process.memoryUsage().heapUsed - before.heapUsed;
  console.log(
    `memory, 50 MB ${kind}: RSS +${mib(after.rss - before.rss)} MiB, peak RSS +${
      mib(peakAfter - peakBefore)
    } MiB, heap +${mib(after.heapUsed - before.heapUsed)} MiB, of which the result holds ${
      mib(kept)
    } MiB (${r.findings.length} findings, ${(text.length / 1e3 / ms).toFixed(1)} M chars/s)`,
  );
}

/** Runs `memoryChild` in a fresh process of the current runtime. */
function measureMemory(kind: MemoryKind): void {
  const file = fileURLToPath(import.meta.url);
  const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
  const args = isBun
    ? [file, "--memory", kind]
    : ["run", "-A", "--v8-flags=--expose-gc", file, "--memory", kind];
  const child = spawnSync(process.execPath, args, { encoding: "utf8" });
  process.stdout.write(child.stdout);
  if (child.status !== 0) process.stderr.write(child.stderr);
}

/** How long each timed case runs before it is timed. */
const WARM_MS = 300;
/** The least CPU time one timed batch of a case takes: enough calls that the clock's grain does not count. */
const BATCH_MS = 20;

/** One line of the report: a label, and its runs (whole, then in 4 KiB chunks), each with what it scans. */
interface Line {
  label: string;
  runs: { chars: number; fn: () => unknown }[];
}

/**
 * Calls `fn` until the JIT compilers have had their go (a fixed time, at least once), then returns how many
 * calls make a batch of at least {@link BATCH_MS} of CPU time. A case timed from its first calls measures
 * how soon the optimised code arrives, which differs from process to process more than the scanner's speed.
 */
function calibrate(fn: () => unknown): number {
  const warm = performance.now() + WARM_MS;
  do fn(); while (performance.now() < warm);
  const t = cpuMs();
  fn();
  return Math.max(1, Math.ceil(BATCH_MS / Math.max(cpuMs() - t, 0.01)));
}

if (import.meta.main) {
  const memoryArg = process.argv.indexOf("--memory");
  const roundsArg = process.argv.indexOf("--rounds");
  if (memoryArg >= 0) {
    memoryChild(process.argv[memoryArg + 1] as MemoryKind);
  } else {
    const rounds = roundsArg >= 0 ? Number(process.argv[roundsArg + 1]) : 7;
    if (!Number.isInteger(rounds) || rounds < 1) {
      console.error(`--rounds takes a whole number of at least 1, not ${process.argv[roundsArg + 1]}`);
      process.exit(2);
    }
    const lines: Line[] = [];
    if (devPresent) {
      lines.push({
        label: `dev data (${mb(devChars)} M chars, per row; chunks of the joined rows)`,
        runs: [{ chars: devChars, fn: scanDev }, {
          chars: devJoined.length,
          fn: () => scanChunks(devChunks()),
        }],
      }, {
        label: `benign dev rows (${benignRows.length} rows, ${mb(benignChars)} M chars)`,
        runs: [
          { chars: benignChars, fn: () => scanRows(benignRows) },
          { chars: benignChars + benignRows.length - 1, fn: () => scanChunks(benignChunks()) },
        ],
      });
    }
    for (const [name, text] of Object.entries(scanTexts)) {
      const list = chunks(text);
      lines.push({
        label: name,
        runs: [{ chars: text.length, fn: () => scan(text) }, {
          chars: text.length,
          fn: () => scanChunks(list),
        }],
      });
    }
    lines.push({
      label: "10 MB prose",
      runs: [
        { chars: prose10mb.length, fn: () => scan(prose10mb) },
        { chars: prose10mb.length, fn: () => scanChunks(proseChunks()) },
      ],
    });
    const started = performance.now();
    // On this shared machine one timing of each case swung by 40% from run to run; medians of interleaved
    // rounds meet the same load and swing less.
    const runs = lines.flatMap((l) => l.runs.map((r) => r.fn));
    const med = interleavedMedians(runs, runs.map(calibrate), rounds);
    console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    console.log(
      `medians of ${rounds} interleaved rounds in CPU time (${
        ((performance.now() - started) / 1000).toFixed(0)
      } s)`,
    );
    console.log(`case: whole, 4 KiB chunks`);
    let k = 0;
    for (const line of lines) {
      const cells = line.runs.map((r) => `${(r.chars / 1e3 / med[k++]).toFixed(1)} M chars/s`);
      console.log(`${line.label}: ${cells.join(", ")}`);
    }
    // The first rounds include the JIT's tier-up (JavaScriptCore takes the longer); the next ones are warm.
    const perArg = (ms: number) => (ms * 1e3 / shortArgs.length).toFixed(3);
    const cpuPerCall = (reps: number) => {
      const t = cpuMs();
      for (let i = 0; i < reps; i++) scanShort();
      return (cpuMs() - t) / reps;
    };
    const firstMs = cpuPerCall(20000);
    const warmMs = cpuPerCall(100000);
    console.log(
      `short args: ${perArg(firstMs)} µs per argument (first 20000 rounds), ${perArg(warmMs)} µs warm`,
    );
    measureMemory("prose");
    measureMemory("adversarial mix");
    measureMemory("letter spacing");
    measureMemory("bidi controls in words");
    measureMemory("spaced emoji");
    console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  }
}
