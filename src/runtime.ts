/**
 * What the scheduler's parts share: the store, the clock, identity, events, the log,
 * compiled schedules, and the one way they talk to the store. Every store call goes through `io` (or
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
import { ScheduleCache } from './schedule-cache.js';
import type { Store } from './store.js';

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
  'claimRun', 'finishAttempt', 'recoverExpiredRuns', 'expirePendingRuns', 'sweepRuns',
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
