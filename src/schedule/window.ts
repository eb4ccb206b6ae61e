/**
 * A schedule cut to a window: the ticks of `inner` from `startAt` to `endAt`
 * (inclusive; either bound may be absent). `next` and `latest` keep describing one
 * tick set, so the planner's rules (latest due tick, missed ranges) hold unchanged
 * inside the window, and a job whose window has passed has no next tick: it is finished.
 */
import type { Schedule } from './types.js';

export class WindowedSchedule implements Schedule {
  readonly #inner: Schedule;
  readonly #startAt: number;
  readonly #endAt: number;

  constructor(inner: Schedule, startAt: number | undefined, endAt: number | undefined) {
    this.#inner = inner;
    this.#startAt = startAt ?? -Infinity;
    this.#endAt = endAt ?? Infinity;
  }

  next(after: number): number | undefined {
    const tick = this.#inner.next(Math.max(after, this.#startAt - 1));
    return tick === undefined || tick > this.#endAt ? undefined : tick;
  }

  latest(at: number): number | undefined {
    const tick = this.#inner.latest(Math.min(at, this.#endAt));
    return tick === undefined || tick < this.#startAt ? undefined : tick;
  }
}
