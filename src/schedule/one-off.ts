/** `{ at }` schedules: a single tick. */
import type { Schedule } from './types.js';

export class OneOffSchedule implements Schedule {
  readonly #at: number;

  constructor(at: number) {
    this.#at = at;
  }

  next(after: number): number | undefined {
    return this.#at > after ? this.#at : undefined;
  }

  latest(at: number): number | undefined {
    return this.#at <= at ? this.#at : undefined;
  }
}
