/**
 * The executor's appointments: runs announced ready at a time still to come (created
 * ahead of their tick, or retrying), to be claimed by ID when it comes, and the
 * earliest time the store said some run it did not name becomes ready, when the
 * executor looks for ready runs. One timer, for the earliest of them.
 */
import type { Clock } from './clock.js';
import { DeadlineTimer } from './deadline-timer.js';

export interface UpcomingRunsActions {
  /** A run expected at a time that has come: claim it. */
  readonly ready: (runId: string, jobName: string, now: number) => void;
  /** A search's time has come: look for ready runs. */
  readonly search: () => void;
  /**
   * Runs of these jobs are handed back first when many come due at once (the jobs this
   * instance plans: every instance expects the same runs, and claiming them in one
   * order, they would all race for the same run at a time).
   */
  readonly first?: (jobName: string) => boolean;
}

export class UpcomingRuns {
  readonly #clock: Clock;
  readonly #actions: UpcomingRunsActions;
  readonly #runs = new Map<string, { readonly jobName: string; readonly readyAt: number }>();
  /** When the store said a run it did not name becomes ready. */
  #searchAt: number | undefined;
  readonly #timer: DeadlineTimer;

  constructor(clock: Clock, actions: UpcomingRunsActions) {
    this.#clock = clock;
    this.#actions = actions;
    this.#timer = new DeadlineTimer(clock, () => this.#wake());
  }

  /** A run that becomes ready at `readyAt`: claim it then. */
  expect(runId: string, jobName: string, readyAt: number): void {
    this.#runs.set(runId, { jobName, readyAt });
    this.#timer.setEarliest(readyAt);
  }

  /** Some run becomes ready at `readyAt`: look for ready runs then. */
  searchFrom(readyAt: number): void {
    this.#searchAt = Math.min(this.#searchAt ?? readyAt, readyAt);
    this.#timer.setEarliest(readyAt);
  }

  /** Forgets every appointment and stops the timer. */
  clear(): void {
    this.#timer.clear();
    this.#runs.clear();
    this.#searchAt = undefined;
  }

  /** Claims the expected runs that are ready, searches if a search is due, and re-arms for what is left. */
  #wake(): void {
    const now = this.#clock.now();
    let next: number | undefined;
    const { ready, first } = this.#actions;
    const later: [string, string][] = [];
    for (const [runId, { jobName, readyAt }] of this.#runs) {
      if (readyAt > now) {
        next = Math.min(next ?? readyAt, readyAt);
        continue;
      }
      this.#runs.delete(runId);
      if (first === undefined || first(jobName)) ready(runId, jobName, now);
      else later.push([runId, jobName]);
    }
    for (const [runId, jobName] of later) ready(runId, jobName, now);
    if (this.#searchAt !== undefined && this.#searchAt <= now) {
      this.#searchAt = undefined;
      this.#actions.search();
    }
    const searchAt = this.#searchAt;
    if (searchAt !== undefined) next = Math.min(next ?? searchAt, searchAt);
    if (next !== undefined) this.#timer.setEarliest(next);
  }
}
