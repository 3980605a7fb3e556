// A read of the tool's stdout that fails is not the end of what the tool wrote: the output read until then may
// be a part of it, so the run is a failure the model reads as one, never results or an empty answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { type ByteSource, byteStreamSource, nodeSource, webSource } from "../_run/pipes.ts";
import { runTool as runEngine } from "../_run/run_tool.ts";
import { classify, type ProcessOutcome } from "../guard.ts";
import { describe } from "../describe.ts";
import { evalCommand } from "./_runtime.ts";

const EIO = "EIO: i/o error, read";

/** Every chunk `source` gives until it ends, and why it ended (null: end-of-file). */
async function readAll(source: ByteSource): Promise<{ text: string; failure: string | null }> {
  let text = "";
  for (let chunk = await source.read(); chunk !== null; chunk = await source.read()) {
    text += new TextDecoder().decode(chunk);
  }
  return { text, failure: source.failure() };
}

/** A web stream that gives "a\n", then fails (or ends, with `fail` false); `type: "bytes"` when `bytes`. */
function oneThenFail(fail: boolean, bytes: boolean): ReadableStream<Uint8Array> {
  let pulls = 0;
  const source = {
    pull(c: ReadableByteStreamController) {
      if (pulls++ === 0) c.enqueue(new TextEncoder().encode("a\n"));
      else if (fail) c.error(new Error(EIO));
      else {
        c.close();
        c.byobRequest?.respond(0); // (a byte stream's waiting read is answered, as the streams spec asks)
      }
    },
  };
  return bytes
    ? new ReadableStream({ ...source, type: "bytes" })
    : new ReadableStream(source as UnderlyingDefaultSource<Uint8Array>);
}

/**
 * What a run reads the tool's stdout through: `real`'s first chunk, then a read that fails (EIO), closing
 * `real` then when `close` (a failed stream need not close the pipe under it).
 */
function failingAfterOne(real: ByteSource, close: boolean): ByteSource {
  let pulls = 0;
  return webSource(
    new ReadableStream<Uint8Array>({
      async pull(c) {
        const chunk = pulls++ === 0 ? await real.read() : null;
        if (chunk !== null) return c.enqueue(chunk);
        if (close) real.cancel();
        c.error(new Error(EIO));
      },
    }),
  );
}

test("pipes: a source whose read fails says why, where end-of-file and cancel are no failure", async () => {
  for (const bytes of [false, true]) {
    const make = bytes ? byteStreamSource : webSource;
    assert.deepEqual(await readAll(make(oneThenFail(true, bytes))), { text: "a\n", failure: EIO });
    assert.deepEqual(await readAll(make(oneThenFail(false, bytes))), { text: "a\n", failure: null });
    const cancelled = make(oneThenFail(true, bytes));
    cancelled.cancel();
    assert.deepEqual(await readAll(cancelled), { text: "", failure: null });
  }
  let reads = 0;
  const node = new Readable({
    read() {
      if (reads++ === 0) this.push(new TextEncoder().encode("a\n"));
      else this.destroy(new Error(EIO));
    },
  });
  assert.deepEqual(await readAll(nodeSource(node)), { text: "a\n", failure: EIO });
  assert.deepEqual(await readAll(nodeSource(Readable.from([new TextEncoder().encode("a\n")]))), {
    text: "a\n",
    failure: null,
  });
});

test("runTool: stdout whose read fails after a part is withheld as a protocol failure, never results", async () => {
  // A real tool; its stdout reaches the run through a stream that fails after the first chunk, as a read of
  // the pipe can (EIO), where the runtime gives up the pipe.
  const tool = evalCommand('console.log("a"); console.log("b")');
  for (const protocol of ["lines", "text"] as const) {
    const r = await runEngine(tool.command, tool.args, { protocol, timeoutMs: 20_000 }, {
      readStdout: (real) => failingAfterOne(real, true),
    });
    assert.equal(
      r.ok,
      false,
      `${protocol}: ${r.kind} ${JSON.stringify(r.items)}: a cut output read as whole`,
    );
    assert.equal(r.kind, "protocol");
    assert.match(
      r.detail,
      /^reading stdout failed after \d+ bytes? \(EIO: i\/o error, read\), so the output/,
    );
    // (exit 0, or none: the guard ends a tool still running once the read failed)
    assert.match(describe(r), /^Tool did not run successfully \(protocol, [^)]*\): reading stdout failed/);
  }
});

test("classify: an outcome whose stdout read failed is a failure before any exit status", () => {
  for (const exitCode of [0, 1]) {
    const r = classify(
      { exitCode, signal: null, stdout: "[]", stdoutReadError: EIO },
      { protocol: "json", exitCodes: { 1: "empty" } },
    );
    assert.equal(r.ok, false);
    assert.equal(r.kind, "protocol");
    assert.match(r.detail, /^reading stdout failed after 2 bytes \(EIO: i\/o error, read\)/);
  }
});

test("runTool: a tool still writing when the stdout read failed is ended, not waited on until the time limit", async () => {
  // The read fails after the first chunk and our end of the pipe stays open (a failed stream need not close
  // it): the tool, 4 MiB to write, blocks on the full pipe. Waited on, it timed out, and "timed out" hid why.
  const tool = evalCommand(
    'const b = "x".repeat(65536) + "\\n"; let i = 0; ' +
      'const go = () => { while (i++ < 64) if (!process.stdout.write(b)) return process.stdout.once("drain", go); }; go();',
  );
  let real: ByteSource | undefined;
  try {
    const r = await runEngine(tool.command, tool.args, { protocol: "lines", timeoutMs: 15_000 }, {
      readStdout: (stdout) => failingAfterOne(real = stdout, false),
    });
    assert.equal(r.kind, "protocol", r.detail);
    assert.match(r.detail, /^reading stdout failed after \d+ bytes? \(EIO: i\/o error, read\)/);
  } finally {
    real?.cancel();
  }
});

test("classify: a read failure given as an Error or other value is a failure too, never results", () => {
  // (a caller who caught the read's error passes it as it is; taken for no failure, the cut output was results)
  const given: unknown[] = [new Error(EIO), new String(EIO), { code: "EIO" }, 5, ""];
  for (const stdoutReadError of given) {
    const r = classify(
      { exitCode: 0, signal: null, stdout: "a\n", stdoutReadError: stdoutReadError as string },
      { protocol: "lines" },
    );
    assert.equal(r.items, null, `${String(stdoutReadError)}: ${r.kind} ${JSON.stringify(r.items)}`);
    assert.equal(r.kind, "protocol");
    assert.match(r.detail, /^reading stdout failed after 2 bytes \(.+\), so the output/);
  }
  for (const none of [undefined, null]) {
    const r = classify(
      { exitCode: 0, signal: null, stdout: "a\n", stdoutReadError: none as unknown as string },
      { protocol: "lines" },
    );
    assert.deepEqual(r.items, ["a"]);
  }
});

/**
 * What a run reads the tool's stderr through: `real`'s first chunk (with `firstChunk`), then a read that fails
 * (EIO). As the guard's sources do, it ends at the failure, and its `cancel()` can then do nothing (a web
 * stream's cancel never reaches a stream that failed): whether our end of the pipe is closed is the runtime's.
 * With `closes`, the failure closes `real`, as Deno and Bun close a child's pipe when a read of it fails;
 * without, it is left open, as a runtime that does not would leave it.
 */
function failingStderr(closes: boolean, firstChunk = true): (real: ByteSource) => ByteSource {
  return (real) => {
    let reads = 0;
    let failed: string | null = null;
    return {
      async read() {
        if (failed !== null) return null;
        const chunk = reads++ === 0 && firstChunk ? await real.read() : null;
        if (chunk !== null) return chunk;
        failed = EIO;
        if (closes) real.cancel();
        return null;
      },
      cancel() {
        if (failed === null) real.cancel();
      },
      failure: () => failed,
    };
  };
}
/** A stderr source that fails after one chunk, its pipe closed by the runtime as Deno's and Bun's are. */
const stderrFailingAfterOne = failingStderr(true);

/** A tool that writes 4 MiB to stderr, then "a" on stdout; a broken stderr, which it ignores, ends the writing. */
const STDERR_FLOOD =
  'let said = false; const answer = () => { if (!said) { said = true; process.stdout.write("a\\n"); } }; ' +
  'process.stderr.on("error", answer); const b = "x".repeat(65536) + "\\n"; let i = 0; ' +
  'const go = () => { while (i++ < 64) if (!process.stderr.write(b)) return process.stderr.once("drain", go); answer(); }; go();';

test("runTool: a failed stderr read is a note, and a tool still writing stderr is not left blocked on it", async () => {
  // 4 MiB of stderr, then the answer on stdout. The stream fails after one chunk and, as Deno's and Bun's do,
  // closes our end: the tool meets a broken pipe, which it ignores as many do, and answers; the guard, which
  // must neither end the tool for it nor wait on stderr, gives that answer with the failure said in the detail.
  const tool = evalCommand(STDERR_FLOOD);
  const r = await runEngine(tool.command, tool.args, { protocol: "lines", timeoutMs: 15_000 }, {
    readStderr: stderrFailingAfterOne,
  });
  assert.equal(r.kind, "results", r.detail);
  assert.deepEqual(r.items, ["a"]);
  assert.equal(r.detail, `stderr was read only in part: reading it failed (${EIO})`);
});

test("runTool: a failed stderr read whose pipe the runtime leaves open ends at the time limit, and says both", async () => {
  // The guard cannot close a pipe whose stream failed: the tool blocks on it, and the run is the time limit's
  // failure (never results), its detail saying why stderr stopped. The read fails at once, not after the
  // tool's first chunk: a tool slower to start than the 100 ms limit (deno.exe under Wine) wrote none by then.
  const tool = evalCommand(STDERR_FLOOD);
  const r = await runEngine(tool.command, tool.args, { protocol: "lines", timeoutMs: 100 }, {
    readStderr: failingStderr(false, false),
  });
  assert.equal(r.kind, "timeout", r.detail);
  assert.match(
    r.detail,
    /^timed out after 100 ms; the guard ended the process tree(, as far as taskkill [^;]*)?; stderr was read only in part: reading it failed \(EIO/,
  );
});

test("classify: a failed stderr read is said in the detail whatever the result, and decides none", () => {
  const note = "stderr was read only in part: reading it failed (EIO: i/o error, read)";
  for (const stderrReadError of [EIO, new Error(EIO)]) {
    const given = { signal: null, stdout: "a\n", stderrReadError: stderrReadError as string };
    const ok = classify({ ...given, exitCode: 0 }, { protocol: "lines" });
    assert.deepEqual([ok.kind, ok.items, ok.truncated], ["results", ["a"], false]);
    assert.equal(ok.detail, note);
    // The tool's own failure stays its failure; the note comes before the stderr summary, which is cut first.
    const failed = classify({ ...given, exitCode: 2, stderr: "e".repeat(1000) }, { protocol: "lines" });
    assert.equal(failed.kind, "exit");
    assert.ok(
      failed.detail.startsWith(`the tool ended with exit code 2; ${note}; stderr: eee`),
      failed.detail,
    );
    assert.ok(failed.detail.endsWith("e\u2026") && failed.detail.length === 400, failed.detail);
  }
  assert.equal(classify({ exitCode: 0, signal: null, stdout: "a\n" }, { protocol: "lines" }).detail, "");
});

test("classify: the note on a failed stderr read never cuts the result's own sentence, however small maxDetail", () => {
  const failed = { stderrReadError: EIO, stdout: "" };
  for (
    const [outcome, options, sentence] of [
      [
        { ...failed, exitCode: 2, signal: null, stderr: "boom\n" },
        { maxDetail: 60 },
        "the tool ended with exit code 2",
      ],
      [{ ...failed, exitCode: null, signal: "SIGSEGV" }, { maxDetail: 40 }, "killed by signal SIGSEGV"],
      [
        { ...failed, exitCode: null, signal: "SIGTERM", killedBy: "timeout" },
        { maxDetail: 80, timeoutMs: 500 },
        "timed out after 500 ms; the guard ended the process tree",
      ],
      [
        { ...failed, exitCode: null, signal: "SIGTERM", stdout: "a\nb\n", killedBy: "overflow" },
        { maxDetail: 80, onOverflow: "truncate", maxOutputBytes: 2 },
        "stdout was cut at 2 bytes; there may be more",
      ],
    ] as const
  ) {
    const r = classify(outcome as ProcessOutcome, { protocol: "lines", ...options });
    assert.ok(r.detail.startsWith(sentence), `${JSON.stringify(r.detail)} lost ${JSON.stringify(sentence)}`);
    assert.ok(r.detail.length <= options.maxDetail, String(r.detail.length));
  }
});

/** A tool run whose stderr read fails and whose scanner will not load (`why`), so its output is withheld. */
function withheldUnscanned(why: string) {
  const tool = evalCommand('console.error("warn"); console.log("a")');
  return runEngine(tool.command, tool.args, {
    protocol: "lines",
    scanOutput: true,
    timeoutMs: 15_000,
  }, {
    readStderr: stderrFailingAfterOne,
    loadScanner: () => Promise.reject(new Error(why)),
  });
}

test("runTool: output withheld as unscanned still says the stderr read failed", async () => {
  const r = await withheldUnscanned("no scanner here");
  assert.equal(r.kind, "protocol", r.detail);
  assert.match(r.detail, /^its output could not be scanned for injected instructions, so it is withheld: /);
  assert.match(r.detail, /; stderr was read only in part: reading it failed \(EIO: i\/o error, read\)/);
});

test("runTool: a long reason the scanner gives for withheld output leaves the stderr read note its room", async () => {
  const r = await withheldUnscanned("x".repeat(500));
  assert.equal(r.kind, "protocol", r.detail);
  assert.match(
    r.detail,
    /^its output could not be scanned .*: the guard could not load its scanner: x+\u2026; /,
  );
  assert.match(r.detail, /; stderr was read only in part: reading it failed \(EIO: i\/o error, read\)/);
  assert.ok(r.detail.length <= 400, r.detail);
});
