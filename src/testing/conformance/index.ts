/**
 * The store conformance suite, whole or per capability of the contract in
 * `src/store.ts` (as unstorage's driver tests and Agenda 6's repository tests are):
 *
 * - `describeJobStore`: jobs and cursors (`JobStore`, with `identity` when present):
 *   upserts, the atomic create-run-and-advance-cursor under each policy, the schedule
 *   options, manual runs and backfills;
 * - `describeRunQueue`: the run queue and its leases (`RunQueue`): claims, leases and
 *   fencing, recovery, history pruning, fan-out runs and their indices, pending
 *   timeouts and history TTL, the optional batch read;
 * - `describeNotifications`: `watch` and `flushNotifications` (`StoreNotifications`);
 * - `describeLock`: a `Lock` (a store's `lock()`, or a lock of your own);
 * - `storeConformance`: all four, skipping notifications and the lock when the store
 *   has none (and each optional method it lacks).
 *
 * Each call registers tests (vitest, jest, ...); every test gets a fresh store from the
 * factory, so a factory that hands each store its own namespace (key prefix, schema)
 * lets suites run in parallel against one server. Jobs and runs are tested together
 * (a run belongs to a job): `describeJobStore` and `describeRunQueue` both take a
 * whole `Store`, notifications or lock optional.
 */
import { pendingUntilNotificationTests, readyAtTests, retryLimitTests } from './decisions.js';
import { executionTests } from './execution.js';
import { expiryTests } from './expiry.js';
import { fanOutRunTests } from './fan-out-runs.js';
import { fanOutTests } from './fan-out.js';
import { fixture, type Fixture, type StoreConformanceOptions } from './fixtures.js';
import { lockTests, type LockConformanceOptions } from './lock.js';
import { notificationTests } from './notifications.js';
import { planningTests } from './planning.js';
import { readTests } from './reads.js';
import { scheduleOptionTests } from './schedule-options.js';

export type { ConformanceAssertion, ConformanceTestApi, StoreConformanceOptions } from './fixtures.js';
export type { LockConformanceOptions } from './lock.js';

function jobStoreTests(fx: Fixture): void {
  planningTests(fx);
  scheduleOptionTests(fx);
  readyAtTests(fx);
}

function runQueueTests(fx: Fixture): void {
  executionTests(fx);
  fanOutTests(fx);
  fanOutRunTests(fx);
  expiryTests(fx);
  readTests(fx);
  retryLimitTests(fx);
}

/** The lock tests on each fresh store's `lock()`; skipped when the store has none. */
function storeLockTests(fx: Fixture): void {
  lockTests(fx, (test) =>
    fx.withStore(async (store) => {
      if (store.lock !== undefined) await test(store.lock());
    }),
  );
}

/**
 * Registers every conformance test for a store under `describe(name)`:
 *
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * storeConformance('MyStore', { describe, it, expect, createStore: () => new MyStore({ namespace: unique() }) });
 * ```
 */
export function storeConformance(name: string, options: StoreConformanceOptions): void {
  const fx = fixture(options);
  options.describe(`${name}: store conformance`, () => {
    jobStoreTests(fx);
    runQueueTests(fx);
    notificationTests(fx, false);
    pendingUntilNotificationTests(fx, false);
    storeLockTests(fx);
  });
}

/** Jobs and cursors (`JobStore`, and `identity` when the store has it), under `describe(`${name}: jobs and cursors`)`. */
export function describeJobStore(name: string, options: StoreConformanceOptions): void {
  options.describe(`${name}: jobs and cursors`, () => jobStoreTests(fixture(options)));
}

/** The run queue and its leases (`RunQueue`), under `describe(`${name}: run queue`)`. */
export function describeRunQueue(name: string, options: StoreConformanceOptions): void {
  options.describe(`${name}: run queue`, () => runQueueTests(fixture(options)));
}

/** Notifications (`StoreNotifications`): fails for a store without `watch`. Under `describe(`${name}: notifications`)`. */
export function describeNotifications(name: string, options: StoreConformanceOptions): void {
  options.describe(`${name}: notifications`, () => {
    const fx = fixture(options);
    notificationTests(fx, true);
    pendingUntilNotificationTests(fx, true);
  });
}

/**
 * A lock (`Lock`): a store's own (`createLock: () => store.lock()`, closing the store in
 * `destroyLock`) or one you give the scheduler as `lock`. Under `describe(`${name}: lock`)`.
 */
export function describeLock(name: string, options: LockConformanceOptions): void {
  options.describe(`${name}: lock`, () =>
    lockTests(options, async (test) => {
      const lock = await options.createLock();
      try {
        await test(lock);
      } finally {
        await options.destroyLock?.(lock);
      }
    }),
  );
}
