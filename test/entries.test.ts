/**
 * Entry points: `tickwork/store` holds the store contract; `tickwork` keeps what an
 * application uses, plus every contract name it exported before, as a deprecated
 * alias of the same thing (until 0.2.0).
 */
import { readFileSync } from 'node:fs';
import { expect, expectTypeOf, it } from 'vitest';
import * as main from '../src/index.js';
import * as store from '../src/store-entry.js';
import * as rules from '../src/store-rules.js';
import * as testing from '../src/testing/index.js';

const source = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

it('exports the contract constants from tickwork/store, and the old ones from tickwork as the same values', () => {
  const constants = ['ACTIVE_STATUSES', 'LEASE_EXPIRED_ERROR', 'LIST_BATCH', 'LIST_JOBS_PAGE', 'MAX_PARTITIONS', 'PENDING_TIMEOUT_ERROR', 'UPSERT_BATCH', 'fnv1a32', 'indexId', 'partitionOf'];
  expect(Object.keys(store).sort()).toEqual([...constants, ...Object.keys(rules)].sort());
  expect(main.ACTIVE_STATUSES).toBe(store.ACTIVE_STATUSES);
  expect(main.LEASE_EXPIRED_ERROR).toBe(store.LEASE_EXPIRED_ERROR);
  expect(main.PENDING_TIMEOUT_ERROR).toBe(store.PENDING_TIMEOUT_ERROR);
  expect(main.indexId).toBe(store.indexId);
  expectTypeOf<main.JobRecord>().toEqualTypeOf<store.JobRecord>();
  expectTypeOf<main.StoreNotification>().toEqualTypeOf<store.StoreNotification>();
  expectTypeOf<main.Store>().toEqualTypeOf<store.Store>();
});

it('exports the shared rules and each capability of the contract from tickwork/store, and the suite per capability from tickwork/testing', () => {
  expect(store.pruneHistory).toBe(rules.pruneHistory);
  expect(store.pendingUntilFor).toBe(rules.pendingUntilFor);
  expect(Object.keys(rules)).toContain('compareReadyOrder');
  // The scheduler's own helpers are not the contract's.
  for (const helper of ['sameSpec', 'batchesOf', 'allJobPages']) expect(store).not.toHaveProperty(helper);
  // Store is the sum of its capabilities, notifications and the lock optional.
  expectTypeOf<store.Store>().toMatchTypeOf<store.StoreLifecycle & store.JobStore & store.RunQueue>();
  expectTypeOf<store.StoreLifecycle & store.JobStore & store.RunQueue>().toMatchTypeOf<store.Store>();
  expectTypeOf<store.Store['watch']>().toEqualTypeOf<store.StoreNotifications['watch'] | undefined>();
  expectTypeOf<store.Store['lock']>().toEqualTypeOf<store.LockProvider['lock'] | undefined>();
  expect(Object.keys(testing).sort()).toEqual(['FakeClock', 'describeJobStore', 'describeLock', 'describeNotifications', 'describeRunQueue', 'storeConformance']);
});

/** The contract's names `tickwork` exported before `tickwork/store` existed, less the ones an app uses. */
const MOVED = [
  'AddBackfillInput', 'AttemptOutcome', 'BackfillRange', 'Claim', 'ClaimRunInput', 'CreateRunInput', 'CreateRunResult',
  'ExpireInput', 'ExpirePendingRunsResult', 'FanOutSpec', 'FanOutState', 'FindReadyRunsInput', 'FindReadyRunsResult',
  'FinishAttemptInput', 'FinishAttemptResult', 'HistoryLimits', 'IndexRecord', 'IndexStatus', 'JobRecord', 'JobSpec',
  'LeaseInput', 'ListRunsQuery', 'LockLease', 'NewRun', 'RecoverExpiredRunsInput', 'RenewLeaseInput', 'RenewLeaseResult',
  'RunError', 'RunRecord', 'ScheduleBackfillRunInput', 'ScheduleBackfillRunResult', 'ScheduleRunInput', 'ScheduleRunResult',
  'ScheduleSpec', 'SetSuspendedInput', 'SetSuspendedResult', 'StoreNotification', 'UpsertJobInput', 'UpsertJobResult',
  'ACTIVE_STATUSES', 'LEASE_EXPIRED_ERROR', 'PENDING_TIMEOUT_ERROR', 'indexId',
];

it('keeps in tickwork a deprecated alias of each contract name it exported before, and only those', () => {
  const aliases = source('../src/store-aliases.ts');
  const deprecated = [...aliases.matchAll(/\/\*\* @deprecated [^*]*\*\/\nexport (?:type|const) (\w+)/g)].map((m) => m[1]!);
  const exported = [...aliases.matchAll(/^export (?:type|const) (\w+)/gm)].map((m) => m[1]!);
  expect(deprecated).toEqual(exported);
  expect([...exported].sort()).toEqual([...MOVED].sort());
  // Each is still the contract's: tickwork/store exports it.
  const contract = [source('../src/store.ts'), source('../src/store-records.ts'), source('../src/store-calls.ts'), source('../src/schedule/types.ts')].join('\n');
  for (const name of MOVED) expect(contract).toMatch(new RegExp(`^export (?:type|interface|const|function) ${name}\\b`, 'm'));
});
