/**
 * Keeps long work from freezing the event loop. A memory store answers every call
 * at once, so a chain of store calls (a CatchUp backlog after a long outage, a big
 * backfill, a pile of ready runs) would otherwise run to its end in microtasks and
 * starve the app's timers and I/O. Each loop of such work counts its steps here;
 * every `SLICE_STEPS` steps, every caller waits for one turn of the event loop
 * (one shared turn, so concurrent loops pause together). Networked stores yield on
 * their I/O anyway; for them the count costs nothing.
 */
import { nextTurn, type Clock } from './clock.js';

/** Steps of work (store calls, or about ten ticks counted) between two turns of the event loop. */
export const SLICE_STEPS = 100;

export class Pacer {
  readonly #clock: Clock;
  #steps = 0;
  #turn: Promise<void> | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Counts `steps` of work: undefined while the slice lasts (no await on the hot
   * path), else a promise of the next turn of the event loop to await. A test
   * clock tracks the turn, so `FakeClock.advance` waits for the work it resumes.
   */
  step(steps = 1): Promise<void> | undefined {
    if (this.#turn !== undefined) return this.#turn;
    this.#steps += steps;
    if (this.#steps < SLICE_STEPS) return undefined;
    const turn = nextTurn().then(() => {
      this.#steps = 0;
      this.#turn = undefined;
    });
    this.#turn = this.#clock.track ? this.#clock.track(turn) : turn;
    return this.#turn;
  }
}
