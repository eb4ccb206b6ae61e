/**
 * The jobs the planner plans (`plan-loop.ts`), and when each is due next: a
 * lazy-deletion heap of due times (an entry is live only while its key equals its
 * job's `dueAt`) and one timer for the earliest of them.
 */
import type { Clock } from './clock.js';
import { DeadlineTimer } from './deadline-timer.js';
import { MinHeap } from './heap.js';
import type { JobRecord } from './store.js';

export interface PlannedJob {
  record: JobRecord;
  readonly partition: number;
  /** When to plan it next; undefined while it waits for a notification (suspended, CatchUp blocked, no more ticks). */
  dueAt: number | undefined;
}

export class DueJobs {
  readonly #clock: Clock;
  readonly #jobs = new Map<string, PlannedJob>();
  /** Lazy-deletion heap: an entry is live only while its key equals its job's `dueAt`. */
  readonly #heap = new MinHeap<string>();
  /** Fires at the earliest due job. */
  readonly #timer: DeadlineTimer;

  /** `wake` is called when the earliest job is due (or the capped wait is over: it re-checks). */
  constructor(clock: Clock, wake: () => void) {
    this.#clock = clock;
    this.#timer = new DeadlineTimer(clock, wake);
  }

  get(name: string): PlannedJob | undefined {
    return this.#jobs.get(name);
  }

  set(name: string, job: PlannedJob): void {
    this.#jobs.set(name, job);
  }

  delete(name: string): void {
    this.#jobs.delete(name);
  }

  entries(): IterableIterator<[string, PlannedJob]> {
    return this.#jobs.entries();
  }

  /** Forgets the jobs `test` picks (their heap entries go stale; the heap empties with the last job); returns their names. */
  deleteWhere(test: (job: PlannedJob, name: string) => boolean): string[] {
    const deleted: string[] = [];
    for (const [name, job] of this.#jobs) {
      if (!test(job, name)) continue;
      this.#jobs.delete(name);
      deleted.push(name);
    }
    if (this.#jobs.size === 0) this.#heap.clear();
    return deleted;
  }

  /** Makes the job due at `at` unless it is due earlier already; true when that moved it. */
  setDue(name: string, job: PlannedJob, at: number): boolean {
    if (job.dueAt !== undefined && job.dueAt <= at) return false;
    job.dueAt = at;
    this.#heap.push(at, name);
    return true;
  }

  /** Takes the earliest job that is due now off the heap (it is due again once `setDue` says so). */
  takeDue(): [string, PlannedJob] | undefined {
    const now = this.#clock.now();
    for (let dueAt = this.#heap.peekKey(); dueAt !== undefined && dueAt <= now; dueAt = this.#heap.peekKey()) {
      const name = this.#heap.pop() as string;
      const job = this.#jobs.get(name);
      if (job === undefined || job.dueAt !== dueAt) continue; // a stale heap entry
      job.dueAt = undefined;
      return [name, job];
    }
    return undefined;
  }

  /** Arms the timer for the earliest due job, or clears it when none is. */
  armTimer(): void {
    // Drop stale entries so the timer is armed for a real deadline.
    while (this.#heap.size > 0) {
      const name = this.#heap.peek() as string;
      if (this.#jobs.get(name)?.dueAt === this.#heap.peekKey()) break;
      this.#heap.pop();
    }
    const dueAt = this.#heap.peekKey();
    if (dueAt === undefined) this.#timer.clear();
    else this.#timer.set(dueAt);
  }

  /** Stops the timer, keeping the jobs. */
  clearTimer(): void {
    this.#timer.clear();
  }
}
