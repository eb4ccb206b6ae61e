/**
 * Fractional milliseconds never reach a store. Durations and instants given with
 * fractions (every option that takes one), a retry factor that makes fractional
 * delays, a lease whose third is fractional and a custom clock whose `now()` has a
 * fraction: jobs registered with all of them run to completion on the memory,
 * Redis and Postgres stores alike (Postgres keeps instants in `bigint` and refused
 * such values), with no error, and every instant the stores recorded is whole.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Scheduler, type Clock, type TimerHandle, type Duration } from '../../src/index.js';
import type { RunRecord } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers } from './every-store.js';

const T0 = Date.UTC(2026, 0, 1);

/** A clock of the app's own whose time has a fraction: the fake clock's, plus 0.25 ms. */
class FractionalClock implements Clock {
  constructor(readonly inner: FakeClock) {}
  now(): number {
    return this.inner.now() + 0.25;
  }
  setTimer(callback: () => void, delayMs: number): TimerHandle {
    return this.inner.setTimer(callback, delayMs);
  }
  clearTimer(handle: TimerHandle): void {
    this.inner.clearTimer(handle);
  }
  sleep(duration: Duration, signal?: AbortSignal): Promise<void> {
    return this.inner.sleep(duration, signal);
  }
  track<T>(work: Promise<T>): Promise<T> {
    return this.inner.track(work);
  }
}

const INSTANTS = ['scheduledAt', 'createdAt', 'readyAt', 'startedAt', 'finishedAt', 'leaseUntil', 'deadlineAt', 'pendingUntil', 'expiresAt'] as const;

function fractionsIn(run: RunRecord): string[] {
  return INSTANTS.filter((field) => run[field] !== undefined && !Number.isInteger(run[field])).map((field) => `${run.id}.${field} = ${run[field]}`);
}

afterAll(closeServers);

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`whole milliseconds, ${target.kind} store`, () => {
    it('runs jobs given fractional durations and instants, on a clock with fractional time, to completion', async () => {
      const opened = await target.open();
      const fake = new FakeClock(T0);
      const scheduler = new Scheduler({ store: opened.store, clock: new FractionalClock(fake), leaseMs: 1000 });
      const errors: string[] = [];
      scheduler.on('error', (error) => errors.push(error.message));
      let onceAttempts = 0;
      try {
        scheduler.register({
          name: 'every',
          schedule: { every: 1000.5, anchor: T0 + 0.7 },
          startingDeadline: 1000 / 3,
          timeout: 5000.5,
          attemptTimeout: 2000.5,
          pendingTimeout: 60_000.5,
          history: { succeeded: 1000, failed: 10, ttl: 3_600_000.5 },
          handler: () => {},
        });
        scheduler.register({
          name: 'once',
          schedule: { at: T0 + 5000.9 },
          retry: { limit: 3, initialDelay: 10.5, factor: 1.1, maxDelay: 100.5, jitter: 0.3 },
          handler: () => {
            onceAttempts += 1;
            if (onceAttempts < 3) throw new Error(`attempt ${onceAttempts} fails`);
          },
        });
        await scheduler.start();
        await fake.advance('10s');
        await scheduler.backfill('every', { from: T0 + 0.5, to: T0 + 3003.5 });
        await scheduler.trigger('once');
        await fake.advance('20s');

        expect(errors).toEqual([]);
        const every = await scheduler.getJob('every');
        expect(every?.schedule).toEqual({ every: 1001, anchor: new Date(T0) });
        expect(every?.succeeded).toBeGreaterThanOrEqual(25);
        expect(every?.failed).toBe(0);
        expect((await scheduler.listRuns('every', { limit: 1000 })).filter((run) => run.trigger === 'backfill')).toHaveLength(4); // T0, +1001, +2002, +3003
        const once = await scheduler.listRuns('once');
        expect(once.map((run) => [run.trigger, run.status, run.attempt])).toEqual(
          expect.arrayContaining([['schedule', 'succeeded', 3], ['manual', 'succeeded', 1]]),
        );
        const records = (await Promise.all(['every', 'once'].map((jobName) => opened.store.listRuns({ jobName, limit: 10_000 })))).flat();
        expect(records.flatMap(fractionsIn)).toEqual([]);
        for (const job of await opened.store.listJobs()) {
          expect([job.createdAt, job.cursor, job.lastScheduleTime, job.lastSuccessfulTime].every((t) => t === undefined || Number.isInteger(t))).toBe(true);
        }
      } finally {
        const stopping = scheduler.stop();
        await fake.advance('10s');
        await stopping;
        await opened.dispose();
      }
    });
  });
}
