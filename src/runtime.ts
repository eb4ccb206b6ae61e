/**
 * What the scheduler's parts share: the store, the clock, identity, events, the log,
 * and the one way they talk to the store. Every store call goes through `io` (or
 * `call`), which lets a test clock wait for it, records its outcome for `health()`,
 * and turns a failure into an `error` event instead of a rejection, so a failing
 * store never reaches the app's unhandled-rejection path.
 */
import type { EventEmitter } from 'eventemitter3';
import type { Clock } from './clock.js';
import { StoreError, TickworkError } from './errors.js';
import { safeEmit, type SchedulerEvents } from './events.js';
import type { HealthMonitor } from './health.js';
import type { Log } from './logging.js';
import { Pacer } from './pacer.js';
import { compileSchedule, type Schedule } from './schedule/index.js';
import { WindowedSchedule } from './schedule/window.js';
import { defaultAnchor } from './planner.js';
import type { JobRecord, ScheduleSpec, Store } from './store.js';

export interface Runtime {
  readonly store: Store;
  readonly clock: Clock;
  readonly instanceId: string;
  readonly leaseMs: number;
  readonly events: EventEmitter<SchedulerEvents>;
  /** Records every store call's outcome (and logs the store failing and recovering). */
  readonly health: HealthMonitor;
  readonly log: Log;
  readonly schedules: ScheduleCache;
  /** Slices long work into turns of the event loop. */
  readonly pacer: Pacer;
  /** Runs a store operation for a caller who wants its failure: rejects with a `StoreError`. */
  call<T>(operation: string, work: () => Promise<T>): Promise<T>;
  /** Runs a store operation in the background: resolves `undefined` (after reporting the error) when it fails. */
  io<T>(operation: string, work: () => Promise<T>): Promise<T | undefined>;
}

/**
 * The store calls that notify (see `StoreNotification`): under a test clock each is
 * done once its notifications have reached this instance's watchers too, so that
 * what they set off (a claim, a re-plan) is tracked work before `advance()` returns,
 * whatever the latency of the store's pub/sub.
 */
const NOTIFYING = new Set([
  'upsertJobs', 'removeJob', 'setSuspended', 'scheduleRun', 'createRun', 'addBackfill', 'scheduleBackfillRun',
  'claimRun', 'finishAttempt', 'recoverExpiredRuns', 'expirePendingRuns',
]);

export function createRuntime(fields: Omit<Runtime, 'call' | 'io' | 'schedules' | 'pacer'>): Runtime {
  const { clock, events, health, store } = fields;
  const flushed = <T>(result: T): Promise<T> => (store.flushNotifications as () => Promise<void>).call(store).then(() => result);
  // Every run makes several store calls: one async frame each, not one per layer.
  const start = <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    const attempt = Promise.resolve(work());
    if (clock.track === undefined) return attempt;
    return clock.track(store.flushNotifications !== undefined && NOTIFYING.has(operation) ? attempt.then(flushed) : attempt);
  };
  return {
    ...fields,
    schedules: new ScheduleCache(),
    pacer: new Pacer(clock),
    async call<T>(operation: string, work: () => Promise<T>): Promise<T> {
      let result: T;
      try {
        result = await start(operation, work);
      } catch (cause) {
        const error = storeError(operation, cause);
        health.storeFailed(operation, error);
        throw error;
      }
      health.storeSucceeded(operation);
      return result;
    },
    async io<T>(operation: string, work: () => Promise<T>): Promise<T | undefined> {
      let result: T;
      try {
        result = await start(operation, work);
      } catch (cause) {
        const error = storeError(operation, cause);
        health.storeFailed(operation, error);
        safeEmit(events, 'error', error);
        return undefined;
      }
      health.storeSucceeded(operation);
      return result;
    },
  };
}

function storeError(operation: string, cause: unknown): TickworkError {
  return cause instanceof TickworkError ? cause : new StoreError(operation, cause);
}

/** What compiling a job's schedule reads of its record. */
type ScheduleSource = Pick<JobRecord, 'schedule' | 'timezone' | 'createdAt' | 'startAt' | 'endAt'>;

/** Compiled schedules, keyed by what defines them; a job's schedule is compiled once per definition. */
export class ScheduleCache {
  readonly #compiled = new Map<string, Schedule>();
  /** Records of one job share their `schedule` object until the spec changes: a look-up without building a key. */
  readonly #bySpec = new WeakMap<object, Known>();

  /** The job's ticks, cut to its `startAt`/`endAt` window. */
  of(job: ScheduleSource): Schedule {
    const known = this.#bySpec.get(job.schedule);
    // Only an unanchored `every` depends on the job's creation: records of other jobs that share a spec share its schedule.
    if (
      known !== undefined &&
      known.timezone === job.timezone &&
      known.startAt === job.startAt &&
      known.endAt === job.endAt &&
      (known.createdAt === job.createdAt || !isUnanchored(job.schedule))
    ) {
      return known.schedule;
    }
    const schedule = this.#compile(job);
    this.#bySpec.set(job.schedule, { timezone: job.timezone, createdAt: job.createdAt, startAt: job.startAt, endAt: job.endAt, schedule });
    return schedule;
  }

  /** A record whose `schedule` object is new here (a store may read each record back from the wire): found by what defines it. */
  #compile(job: ScheduleSource): Schedule {
    const anchor = defaultAnchor(job.createdAt);
    const key = `${scheduleKey(job.schedule, job.timezone, anchor)} [${job.startAt ?? ''},${job.endAt ?? ''}]`;
    let schedule = this.#compiled.get(key);
    if (schedule === undefined) {
      const ticks = compileSchedule(job.schedule, job.timezone, anchor);
      schedule = job.startAt === undefined && job.endAt === undefined ? ticks : new WindowedSchedule(ticks, job.startAt, job.endAt);
      this.#compiled.set(key, schedule);
    }
    return schedule;
  }
}

/** What a job's compiled schedule was built from, besides its spec object (the WeakMap's key). */
interface Known {
  readonly timezone: string;
  readonly createdAt: number;
  readonly startAt: number | undefined;
  readonly endAt: number | undefined;
  readonly schedule: Schedule;
}

/** What a compiled schedule depends on: a cron's zone, an unanchored `every`'s default anchor. */
function scheduleKey(schedule: ScheduleSpec, timezone: string, defaultAnchor: number): string {
  switch (schedule.kind) {
    case 'cron':
      return `cron ${timezone} ${schedule.expression}`;
    case 'every':
      return `every ${schedule.everyMs} @${schedule.anchor ?? defaultAnchor}`;
    case 'at':
      return `at ${schedule.at}`;
  }
}

function isUnanchored(schedule: ScheduleSpec): boolean {
  return schedule.kind === 'every' && schedule.anchor === undefined;
}
