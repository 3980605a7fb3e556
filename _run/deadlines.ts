/**
 * One timer for the time limits of every run. Arming and clearing a timer per run costs Deno about as much
 * as the rest of the guard's own work on a fast tool; here back-to-back runs arm nothing: the one timer is
 * set for the earliest deadline and, when it fires, runs what is due and is set again for the next. It does
 * not keep the host alive (a run's child does).
 *
 * @module
 */

import { unrefTimeout } from "./runtime.ts";

interface Deadline {
  at: number;
  fn: () => void;
}

const pending = new Set<Deadline>();
/** When the timer is set to fire (Infinity: not set). */
let armedAt = Infinity;

/**
 * Call `fn` once `ms` milliseconds have passed, unless cancelled first.
 *
 * @param ms Milliseconds from now.
 * @param fn What to run then.
 * @returns The function that cancels it.
 */
export function afterDelay(ms: number, fn: () => void): () => void {
  const deadline: Deadline = { at: performance.now() + ms, fn };
  pending.add(deadline);
  if (deadline.at < armedAt) arm(deadline.at);
  return () => pending.delete(deadline);
}

let generation = 0;

function arm(at: number): void {
  armedAt = at;
  const mine = ++generation; // a timer set earlier for a later deadline finds itself stale and does nothing
  unrefTimeout(() => {
    if (mine === generation) fire();
  }, Math.max(0, at - performance.now()));
}

function fire(): void {
  armedAt = Infinity;
  const now = performance.now();
  const due: Deadline[] = [];
  let next = Infinity;
  for (const deadline of pending) {
    // Timers may fire a little early: within a millisecond counts as due.
    if (deadline.at <= now + 1) due.push(deadline);
    else next = Math.min(next, deadline.at);
  }
  for (const deadline of due) pending.delete(deadline);
  if (next < Infinity) arm(next);
  for (const deadline of due) deadline.fn();
}
