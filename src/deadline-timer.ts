/**
 * One timer for a deadline: armed on the injected clock, never waiting longer than
 * `MAX_WAIT_MS` at a time (the callback re-checks the time on wake, so a wall-clock
 * jump or a deadline beyond Node's timer range is noticed within it), cleared at
 * once. The planner's due jobs, its pending-timeout sweep and the executor's
 * upcoming runs each keep one.
 */
import type { Clock, TimerHandle } from './clock.js';

/** Longest single wait of any timer loop: wakes re-check the time, so a wall-clock jump is noticed within it. */
export const MAX_WAIT_MS = 60_000;

export class DeadlineTimer {
  readonly #clock: Clock;
  readonly #fire: () => void;
  #handle: TimerHandle | undefined;
  /** When the armed timer fires (the deadline, or the cap if that came first). */
  #at: number | undefined;

  /** `fire` is called once per arming, when its time comes; it is not called after `clear()`. */
  constructor(clock: Clock, fire: () => void) {
    this.#clock = clock;
    this.#fire = fire;
  }

  /** When the timer fires, if armed. */
  get at(): number | undefined {
    return this.#at;
  }

  /** Arms the timer for `deadline` (capped), later or earlier than it was armed for. */
  set(deadline: number): void {
    const now = this.#clock.now();
    const at = Math.min(deadline, now + MAX_WAIT_MS);
    if (this.#at === at) return;
    this.clear();
    this.#arm(at, now);
  }

  /** Arms the timer for `deadline` (capped) unless it fires at or before it already: the earliest deadline wins. */
  setEarliest(deadline: number): void {
    if (this.#at !== undefined && this.#at <= deadline) return;
    this.clear();
    const now = this.#clock.now();
    this.#arm(Math.min(deadline, now + MAX_WAIT_MS), now);
  }

  #arm(at: number, now: number): void {
    this.#at = at;
    this.#handle = this.#clock.setTimer(() => {
      this.#handle = undefined;
      this.#at = undefined;
      this.#fire();
    }, at - now);
  }

  clear(): void {
    if (this.#handle !== undefined) this.#clock.clearTimer(this.#handle);
    this.#handle = undefined;
    this.#at = undefined;
  }
}
