/**
 * Entry points: `tickwork/store` holds the store contract; `tickwork` keeps what an
 * application uses, plus every contract name it exported before, as a deprecated
 * alias of the same thing (until 0.2.0).
 */
import { readFileSync } from 'node:fs';
import { expect, expectTypeOf, it } from 'vitest';
import * as main from '../src/index.js';
import * as store from '../src/store-entry.js';

const source = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

it('exports the contract constants from tickwork/store, and the old ones from tickwork as the same values', () => {
  expect(Object.keys(store).sort()).toEqual(['ACTIVE_STATUSES', 'LEASE_EXPIRED_ERROR', 'LIST_BATCH', 'PENDING_TIMEOUT_ERROR', 'UPSERT_BATCH', 'indexId']);
  expect(main.ACTIVE_STATUSES).toBe(store.ACTIVE_STATUSES);
  expect(main.LEASE_EXPIRED_ERROR).toBe(store.LEASE_EXPIRED_ERROR);
  expect(main.PENDING_TIMEOUT_ERROR).toBe(store.PENDING_TIMEOUT_ERROR);
  expect(main.indexId).toBe(store.indexId);
  expectTypeOf<main.JobRecord>().toEqualTypeOf<store.JobRecord>();
  expectTypeOf<main.StoreNotification>().toEqualTypeOf<store.StoreNotification>();
  expectTypeOf<main.Store>().toEqualTypeOf<store.Store>();
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
  const contract = [source('../src/store.ts'), source('../src/store-records.ts'), source('../src/schedule/types.ts')].join('\n');
  for (const name of MOVED) expect(contract).toMatch(new RegExp(`^export (?:type|interface|const|function) ${name}\\b`, 'm'));
});
