/**
 * The store conformance suite: one call registers the tests (vitest, jest, ...) that prove a store
 * against the contract in `src/store.ts` (atomic create, cursor compare-and-set,
 * policies, leases, fencing, recovery, history pruning, backfills, notifications,
 * the lock, fan-out runs and their indices, pending timeouts and history TTL, the
 * optional batch read, the schedule options: window, jitter and maxRuns, the run
 * count, BufferOne; the decisions the core hands the store: readyAt as given, the
 * retry limit of plain runs, pendingUntil in notifications).
 * Every test gets a fresh store from the factory, so a factory that hands each
 * store its own namespace (key prefix, schema) lets suites run in parallel
 * against one server.
 */
import { decisionTests } from './decisions.js';
import { executionTests } from './execution.js';
import { expiryTests } from './expiry.js';
import { fanOutRunTests } from './fan-out-runs.js';
import { fanOutTests } from './fan-out.js';
import { fixture, type StoreConformanceOptions } from './fixtures.js';
import { planningTests } from './planning.js';
import { readTests } from './reads.js';
import { scheduleOptionTests } from './schedule-options.js';

export type { ConformanceAssertion, ConformanceTestApi, StoreConformanceOptions } from './fixtures.js';

/**
 * Registers the conformance tests for a store under `describe(name)`:
 *
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * storeConformance('MyStore', { describe, it, expect, createStore: () => new MyStore({ namespace: unique() }) });
 * ```
 */
export function storeConformance(name: string, options: StoreConformanceOptions): void {
  const fx = fixture(options);
  options.describe(`${name}: store conformance`, () => {
    planningTests(fx);
    scheduleOptionTests(fx);
    executionTests(fx);
    fanOutTests(fx);
    fanOutRunTests(fx);
    expiryTests(fx);
    readTests(fx);
    decisionTests(fx);
  });
}
