/**
 * A differential test of a store against the reference MemoryStore: random
 * sequences of contract calls are applied to both, and every result, every run
 * list and the job list must be the same (up to the order of lists the contract
 * leaves unordered). Shared by the Redis and Postgres suites.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { MemoryStore } from '../../adapters/memory/index.js';
import type { AttemptOutcome, ConcurrencyPolicy, JobSpec, RunRecord, Store } from '../../src/store.js';

const T0 = Date.UTC(2026, 0, 1);
const JOBS = ['a', 'b'] as const;
const POLICIES: readonly ConcurrencyPolicy[] = ['Allow', 'Forbid', 'Replace', 'CatchUp'];

type Op =
  | { kind: 'upsert'; job: number; policy: number; succeeded: number; failed: number; suspended?: boolean | undefined }
  | { kind: 'suspend'; job: number; suspended: boolean }
  | { kind: 'remove'; job: number }
  | { kind: 'schedule'; job: number; minutes: number; withRun: boolean; stale: boolean }
  | { kind: 'manual'; job: number; key: number; data: boolean }
  | { kind: 'backfill'; job: number; length: number }
  | { kind: 'backfillRun'; job: number; stale: boolean }
  | { kind: 'claim'; run: number; owner: number; lease: number }
  | { kind: 'renew'; run: number; stale: boolean }
  | { kind: 'finish'; run: number; outcome: number; stale: boolean }
  | { kind: 'recover' }
  | { kind: 'find'; jobs: number; limit: number }
  | { kind: 'advance'; ms: number };

const job = fc.nat({ max: JOBS.length - 1 });
const stale = fc.nat({ max: 4 }).map((n) => n === 0);
/** Weighted towards the calls that move runs through their life; removals and stale inputs are rarer. */
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('upsert' as const), job, policy: fc.nat({ max: 3 }), succeeded: fc.nat({ max: 2 }), failed: fc.nat({ max: 2 }), suspended: fc.option(fc.boolean(), { nil: undefined, freq: 3 }) }, { requiredKeys: ['kind', 'job', 'policy', 'succeeded', 'failed'] }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('suspend' as const), job, suspended: fc.nat({ max: 2 }).map((n) => n === 0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), job }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('schedule' as const), job, minutes: fc.integer({ min: 1, max: 3 }), withRun: fc.nat({ max: 4 }).map((n) => n !== 0), stale }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('manual' as const), job, key: fc.nat({ max: 3 }), data: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('backfill' as const), job, length: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('backfillRun' as const), job, stale }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), run: fc.nat(), owner: fc.nat({ max: 2 }), lease: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('renew' as const), run: fc.nat(), stale }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('finish' as const), run: fc.nat(), outcome: fc.nat({ max: 3 }), stale }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('recover' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('find' as const), jobs: fc.integer({ min: 1, max: 3 }), limit: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20_000 }) }) },
);

function spec(name: string, policy: ConcurrencyPolicy, succeeded: number, failed: number): JobSpec {
  return { name, schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: policy, history: { succeeded, failed } };
}

const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Results with the lists the contract leaves unordered put in one order. */
function normalize(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const record = { ...(value as Record<string, unknown>) };
  if (Array.isArray(record.active)) record.active = [...(record.active as string[])].sort();
  if (Array.isArray(record.cancelled)) record.cancelled = [...(record.cancelled as RunRecord[])].sort(byId);
  return record;
}

type Call = (store: Store) => Promise<unknown>;

/** The call an operation makes, with its inputs read from the reference store before either store runs it. */
async function prepare(reference: Store, step: Op, ids: readonly string[], now: number): Promise<Call> {
  /** Mostly a run in the given status (so claims and finishes usually apply), sometimes any run seen. */
  const pickRun = async (n: number, status: 'pending' | 'running'): Promise<string | undefined> => {
    const runs = (await Promise.all(JOBS.map((jobName) => reference.listRuns({ jobName, statuses: [status] })))).flat();
    const pool = n % 4 === 0 || runs.length === 0 ? ids : runs.map((run) => run.id);
    return pool.length === 0 ? undefined : pool[Math.floor(n / 4) % pool.length];
  };
  switch (step.kind) {
    case 'upsert': {
      const name = JOBS[step.job] ?? 'a';
      const input = { spec: spec(name, POLICIES[step.policy] ?? 'Allow', step.succeeded, step.failed), now, initialCursor: now };
      return (store) => store.upsertJob(step.suspended === undefined ? input : { ...input, suspended: step.suspended });
    }
    case 'suspend':
      return (store) => store.setSuspended(JOBS[step.job] ?? 'a', step.suspended);
    case 'remove':
      return (store) => store.removeJob(JOBS[step.job] ?? 'a');
    case 'schedule': {
      const name = JOBS[step.job] ?? 'a';
      const current = await reference.getJob(name);
      const expectedCursor = (current?.cursor ?? T0) - (step.stale ? 1 : 0);
      const at = (current?.cursor ?? T0) + step.minutes * 60_000;
      const run = { id: `${name}.${at / 1000}`, jobName: name, scheduledAt: at, trigger: 'schedule' as const };
      return (store) => store.scheduleRun(step.withRun ? { jobName: name, expectedCursor, cursor: at, run, now } : { jobName: name, expectedCursor, cursor: at, now });
    }
    case 'manual': {
      const name = JOBS[step.job] ?? 'a';
      const run = { id: `${name}.manual.${step.key}`, jobName: name, scheduledAt: now, trigger: 'manual' as const };
      return (store) => store.createRun({ run: step.data ? { ...run, data: { k: [step.key, []] } } : run, now });
    }
    case 'backfill': {
      const name = JOBS[step.job] ?? 'a';
      const next = T0 - 10 * 60_000;
      return (store) => store.addBackfill({ jobName: name, range: { id: `bf${now}`, next, to: next + (step.length - 1) * 60_000 } });
    }
    case 'backfillRun': {
      const name = JOBS[step.job] ?? 'a';
      const first = (await reference.getJob(name))?.backfills[0] ?? { id: 'none', next: T0, to: T0 };
      const expectedNext = first.next - (step.stale ? 60_000 : 0);
      const run = { id: `${name}.backfill.${first.next / 1000}`, jobName: name, scheduledAt: first.next, trigger: 'backfill' as const };
      const base = { jobName: name, backfillId: first.id, expectedNext, run, now };
      return (store) => store.scheduleBackfillRun(first.next < first.to ? { ...base, next: first.next + 60_000 } : base);
    }
    case 'claim': {
      const runId = (await pickRun(step.run, 'pending')) ?? 'none';
      return (store) => store.claimRun({ runId, owner: `o${step.owner}`, now, leaseUntil: now + step.lease * 1_000, deadlineAt: now + 99_000 });
    }
    case 'renew': {
      const runId = (await pickRun(step.run, 'running')) ?? 'none';
      const current = await reference.getRun(runId);
      return (store) => store.renewLease({ runId, owner: current?.owner ?? 'x', fence: (current?.fence ?? 0) - (step.stale ? 1 : 0), now, leaseUntil: now + 5_000 });
    }
    case 'finish': {
      const runId = (await pickRun(step.run, 'running')) ?? 'none';
      const current = await reference.getRun(runId);
      const error = { name: 'E', message: `m${now}` };
      const outcomes: AttemptOutcome[] = [
        { status: 'succeeded' },
        { status: 'failed', error },
        { status: 'retry', error, readyAt: now + 3_000 },
        { status: 'released' },
      ];
      return (store) => store.finishAttempt({
        runId,
        owner: current?.owner ?? 'x',
        fence: (current?.fence ?? 0) - (step.stale ? 1 : 0),
        now,
        outcome: outcomes[step.outcome] ?? { status: 'succeeded' },
      });
    }
    case 'recover':
      // Which expired runs a smaller limit picks is up to the store (Redis: earliest lease first), so take them all.
      return async (store) => [...(await store.recoverExpiredRuns({ now, limit: 10 }))].sort(byId);
    case 'find': {
      const jobNames = new Set(JOBS.filter((_, index) => (step.jobs >> index) & 1));
      return (store) => store.findReadyRuns({ jobNames, now, limit: step.limit });
    }
    case 'advance':
      return async () => undefined;
  }
}

export interface DifferentialOptions {
  /** A fresh, empty store for one sequence. */
  readonly createStore: () => Store;
  /** Deletes what the store wrote and closes it. */
  readonly destroyStore: (store: Store) => Promise<void>;
  readonly numRuns: number;
}

/** Runs `numRuns` random sequences of operations against a new store and a MemoryStore. */
export async function assertBehavesLikeMemoryStore(options: DifferentialOptions): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 60, size: 'max' }), async (ops) => {
      const store = options.createStore();
      const memory = new MemoryStore();
      try {
        let now = T0;
        const ids: string[] = [];
        const setup: Op[] = JOBS.map((_, index) => ({ kind: 'upsert', job: index, policy: index, succeeded: 1, failed: 1 }));
        for (const step of [...setup, ...ops]) {
          if (step.kind === 'advance') now += step.ms;
          const call = await prepare(memory, step, ids, now);
          const expected = normalize(await call(memory));
          const actual = normalize(await call(store));
          expect(actual, JSON.stringify(step)).toEqual(expected);
          for (const name of JOBS) {
            for (const run of await memory.listRuns({ jobName: name })) if (!ids.includes(run.id)) ids.push(run.id);
            expect(await store.listRuns({ jobName: name })).toEqual(await memory.listRuns({ jobName: name }));
          }
          expect(await store.listJobs()).toEqual(await memory.listJobs());
          now += 1;
        }
      } finally {
        await options.destroyStore(store);
      }
    }),
    { numRuns: options.numRuns },
  );
}
