/**
 * `{ every, anchor }` schedules: ticks at `anchor + k * everyMs` for every integer k,
 * negative k included, so the ticks before the anchor exist too. Elapsed time only:
 * no time zone, no calendar.
 */
import type { Schedule } from './types.js';

// Beyond what a Date can hold there is nothing to schedule.
const MAX_INSTANT = 8.64e15;

export class IntervalSchedule implements Schedule {
  readonly #everyMs: number;
  readonly #anchor: number;

  /** `everyMs` must be a positive finite number and `anchor` finite; `compileSchedule` checks both. */
  constructor(everyMs: number, anchor: number) {
    this.#everyMs = everyMs;
    this.#anchor = anchor;
  }

  next(after: number): number | undefined {
    if (!(after < MAX_INSTANT)) return undefined;
    const from = Math.max(after, -MAX_INSTANT - this.#everyMs);
    let tick = this.#tick(Math.floor((from - this.#anchor) / this.#everyMs) + 1);
    // The division is rounded; step back onto the exact answer.
    while (tick <= from) tick += this.#everyMs;
    while (tick - this.#everyMs > from) tick -= this.#everyMs;
    return tick <= MAX_INSTANT ? tick : undefined;
  }

  latest(at: number): number | undefined {
    if (!(at >= -MAX_INSTANT)) return undefined;
    const to = Math.min(at, MAX_INSTANT + this.#everyMs);
    let tick = this.#tick(Math.floor((to - this.#anchor) / this.#everyMs));
    while (tick > to) tick -= this.#everyMs;
    while (tick + this.#everyMs <= to) tick += this.#everyMs;
    return tick >= -MAX_INSTANT ? tick : undefined;
  }

  #tick(k: number): number {
    return this.#anchor + k * this.#everyMs;
  }
}
