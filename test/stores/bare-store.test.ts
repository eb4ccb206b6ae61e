/**
 * A store with only the required methods (`StoreLifecycle`, `JobStore`, `RunQueue`): the
 * memory store stripped of notifications, its lock, `identity` and `listRunsOfJobs`.
 * It passes the conformance suite per capability, and a scheduler runs on it by polling
 * at its heartbeat, with a lock of its own: what a third-party store may start from.
 */
import { describe, expect, it } from 'vitest';
import { MemoryLock, MemoryStore } from '../../adapters/memory/index.js';
import { Scheduler, ValidationError, type Store } from '../../src/index.js';
import { FakeClock, describeJobStore, describeLock, describeRunQueue, storeConformance } from '../../src/testing/index.js';
import { T0, eventsOf, recordEvents } from '../helpers.js';

type MethodOf<T> = { [K in keyof T]-?: NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never }[keyof T];

/** Every method of `Store`, `true` when required; the compiler keeps the list whole. */
const REQUIRED: { readonly [K in MethodOf<Store>]-?: undefined extends Store[K] ? false : true } = {
  init: true, close: true, identity: false, watchIdentity: false,
  upsertJobs: true, getJob: true, listJobs: true, removeJob: true, setSuspended: true,
  scheduleRun: true, createRun: true, addBackfill: true, scheduleBackfillRun: true,
  findReadyRuns: true, claimRun: true, renewLease: true, finishAttempt: true,
  recoverExpiredRuns: true, expirePendingRuns: true, deleteExpiredRuns: true, sweepRuns: false,
  getRun: true, listRuns: true, listRunsOfJobs: false, listIndices: true,
  watch: false, flushNotifications: false, lock: false,
};

/** The required methods of a memory store, and nothing else. */
function bareStore(inner = new MemoryStore()): Store {
  const methods = Object.entries(REQUIRED).filter(([, required]) => required).map(([name]) => name as keyof MemoryStore);
  return Object.fromEntries(methods.map((name) => [name, (inner[name] as (...args: unknown[]) => unknown).bind(inner)])) as unknown as Store;
}

const api = { describe, it, expect, createStore: () => bareStore() };
describeJobStore('bare store', api);
describeRunQueue('bare store', api);
describeLock('MemoryLock', { describe, it, expect, createLock: () => new MemoryLock() });
storeConformance('bare store', api);

describe('a scheduler on a store without notifications or lock', () => {
  it('asks for a lock when the store has none, naming the option', () => {
    expect(() => new Scheduler({ store: bareStore() })).toThrow(ValidationError);
    expect(() => new Scheduler({ store: bareStore() })).toThrow(/lock.*store has no lock\(\)/);
  });

  it('refuses an optional method that is not a function', () => {
    expect(() => new Scheduler({ store: { ...bareStore(), watch: 5 } as unknown as Store, lock: new MemoryLock() })).toThrow(/watch.*must be a function when given/);
  });

  it('runs every tick, manual runs and other instances\' jobs by polling at each heartbeat', async () => {
    const clock = new FakeClock(T0);
    const store = bareStore();
    const lock = new MemoryLock();
    // leaseMs 3 s: a heartbeat, and so a poll, every second.
    const a = new Scheduler({ store, lock, clock, instanceId: 'a', leaseMs: 3_000 });
    const b = new Scheduler({ store, lock, clock, instanceId: 'b', leaseMs: 3_000 });
    const log = recordEvents(a, clock);
    const logB = recordEvents(b, clock);
    const ran: string[] = [];
    a.register({ name: 'minutely', schedule: '* * * * *', handler: (ctx) => void ran.push(ctx.runId) });
    a.register({ name: 'catch-up', schedule: '*/20 * * * * *', concurrencyPolicy: 'CatchUp', handler: () => clock.sleep('30s') });
    await a.start();
    await b.start();
    expect(a.isPlanner).toBe(true);
    // A job only b registers: a plans it once its heartbeat re-reads the jobs (no job-changed to tell it).
    b.register({ name: 'on-b', schedule: '*/30 * * * * *', handler: () => void ran.push('on-b') });
    await clock.advance('3m');
    expect(ran.filter((id) => id.startsWith('minutely'))).toHaveLength(3);
    expect(ran.filter((id) => id === 'on-b').length).toBeGreaterThanOrEqual(5);
    // CatchUp: each run of 30 s blocks the next tick, which runs once the run finished (no run-finished to tell it).
    const catchUp = [...eventsOf(log, 'run:succeeded'), ...eventsOf(logB, 'run:succeeded')].filter((id) => id.startsWith('catch-up'));
    expect(catchUp.length).toBeGreaterThanOrEqual(5);
    const manual = await a.trigger('minutely');
    await clock.advance('2s');
    expect(ran).toContain(manual.id);
    expect([...eventsOf(log, 'error'), ...eventsOf(logB, 'error')]).toEqual([]);
    const stopping = Promise.all([a.stop(), b.stop()]);
    await clock.advance('1m'); // the CatchUp handler sleeps on the fake clock
    await stopping;
  });
});
