/**
 * A child process for tests/validate_test.ts: has one validator clear, twice each, 512 short strings cut out
 * of texts of 200 000 characters (given as argument values, as an Ollama-shaped call gives them) and 512
 * short strings parsed from argument text that holds a text as long, drops the texts and prints how many MB
 * the heap grew by. A validator that kept the strings as they were would keep
 * the texts they were cut from (V8 and JavaScriptCore share them). Run with `--v8-flags=--expose-gc` on Deno.
 *
 * @module
 */
import process from "node:process";
import { createValidator } from "../validate.ts";

const g = globalThis as { gc?: () => void; Bun?: { gc: (full: boolean) => void } };
/** A full collection, on either runtime. */
const collect = () => g.Bun ? g.Bun.gc(true) : g.gc!();
/** The heap, with what JavaScriptCore counts apart (string buffers). */
const heap = () => process.memoryUsage().heapUsed + process.memoryUsage().external;

// one validator per kind of call, so that neither kind takes the other's slots
const tools = [{ name: "t", input_schema: { type: "object" } }];
const byValue = createValidator(tools);
const byText = createValidator(tools);
byValue.validate([{ function: { name: "t", arguments: { q: "warm" } } }]);
byText.validate([{ id: "c", type: "function", function: { name: "t", arguments: '{"q":"warm"}' } }]);
collect();
const before = heap();
for (let i = 0; i < 512; i++) {
  // a text of its own, and a cut of 20 to 59 characters from it: strings of many slots
  const text = String.fromCharCode(97 + (i % 26)) + `${i} `.repeat(3) + "x".repeat(200_000);
  const q = text.slice(0, 20 + (i % 40));
  // as a value (an Ollama-shaped call), and as text beside a long value (a call with an id: the fast path)
  const asText = JSON.stringify({
    q: q,
    text,
  });
  for (let j = 0; j < 2; j++) {
    byValue.validate([{ function: { name: "t", arguments: { q } } }]);
    byText.validate([{ id: "c", type: "function", function: { name: "t", arguments: asText } }]);
  }
}
collect();
console.log(((heap() - before) / 1e6).toFixed(1));
