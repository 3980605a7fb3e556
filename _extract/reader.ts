/**
 * What a reader is: one format family's grammar, and the openings it is tried at. The registry lists the
 * readers in the order they are tried; see `registry.ts`.
 *
 * @module
 */
import type { Scan } from "./scan.ts";

/** Reads one family of call markup. */
export interface Reader {
  /** The reader's name (used in the detection-order list and its test). */
  readonly name: string;
  /** The literal texts that open this family's markup; the reader is tried wherever one occurs. */
  readonly markers: readonly string[];
  /**
   * An opening written as a shape rather than a literal (`[name(` of a Python call list), as a sticky
   * regular expression tried where the combined scan finds it.
   */
  readonly shape?: RegExp;
  /**
   * Reads the markup that opens at `at` with `opening` (the marker or shape text matched). Adds calls and
   * findings to `scan` and returns the index one past the markup it consumed, or `-1` to decline, in which
   * case the next reader for the same opening is tried.
   */
  read(scan: Scan, at: number, opening: string): number;
}

/** Reads a call that stands where the answer begins, with no marker (a bare JSON call, Functionary v3.2). */
export interface AnchoredReader {
  /** The reader's name. */
  readonly name: string;
  /** Reads at `at`, the first character of the answer; returns the index past what it consumed, or `-1`. */
  read(scan: Scan, at: number, opening?: string): number;
}
