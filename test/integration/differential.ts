/**
 * A differential test of a store against the reference MemoryStore: random
 * sequences of contract calls are applied to both, and every result must be the
 * same, and so must, after each call, every job's run list, the job list and the
 * index records the call changed; after the sequence every job, every run ever seen
 * and its index records are compared once more. Jobs come with and without fan-out,
 * pending timeout and history TTL, and change shape mid-sequence; time stands still,
 * moves in whole seconds or lands on the next deadline, so that leases, deadlines
 * and readiness tie and are hit exactly. Shared by the Redis and Postgres suites.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { MemoryStore } from '../../adapters/memory/index.js';
import type { AttemptOutcome, ConcurrencyPolicy, FanOutSpec, JobSpec, LeaseInput, Store } from '../../src/store.js';

const T0 = Date.UTC(2026, 0, 1);
const JOBS = ['a', 'b'] as const;
const POLICIES: readonly ConcurrencyPolicy[] = ['Allow', 'Forbid', 'Replace', 'CatchUp'];
/**
 * The fan-out shapes and retry limits a job may take (no fanOut: a plain job; no retryLimit: not limited): parallelism 1 to `completions`,
 * retry limits 0 to 2, and some with more indices running than failures allowed, so
 * one recovery can fail a run whose other expired indices the same call then skips.
 */
const FAN_OUTS: readonly { readonly fanOut?: FanOutSpec; readonly retryLimit?: number }[] = [
  {},
  { retryLimit: 0 },
  { retryLimit: 1 },
  { fanOut: { completions: 2, parallelism: 1 }, retryLimit: 0 },
  { fanOut: { completions: 2, parallelism: 2 }, retryLimit: 0 },
  { fanOut: { completions: 3, parallelism: 2 }, retryLimit: 1 },
  { fanOut: { completions: 3, parallelism: 3 }, retryLimit: 1 },
  { fanOut: { completions: 3, parallelism: 1 }, retryLimit: 2 },
];
/** `pendingTimeoutMs` and `history.ttlMs` choices (0: none); whole seconds, like leases and time steps, so deadlines tie. */
const PENDING_TIMEOUTS: readonly (number | undefined)[] = [undefined, 2_000, 5_000];
const TTLS: readonly (number | undefined)[] = [undefined, 1, 4_000];
/** The seed of the default run; `seed` in the options varies or replays it. */
const DEFAULT_SEED = 20_260_101;

/** One job's shape in an `upsertJobs` call: indices into the tables above. */
type Shape = {
  job: number;
  policy: number;
  succeeded: number;
  failed: number;
  suspended?: boolean | undefined;
  fanOut: number;
  pendingTimeout: number;
  ttl: number;
};

type Op =
  | { kind: 'upsert'; jobs: readonly Shape[] }
  | { kind: 'suspend'; job: number; suspended: boolean }
  | { kind: 'remove'; job: number }
  | { kind: 'schedule'; job: number; minutes: number; withRun: boolean; stale: boolean }
  | { kind: 'manual'; job: number; key: number; data: boolean }
  | { kind: 'backfill'; job: number; length: number }
  | { kind: 'backfillRun'; job: number; stale: boolean }
  | { kind: 'claim'; run: number; owner: number; lease: number; claimants: number }
  | { kind: 'renew'; lease: number; fault: number; seconds: number }
  | { kind: 'finish'; lease: number; fault: number; outcome: number }
  | { kind: 'recover'; limit: number }
  | { kind: 'expirePending'; limit: number }
  | { kind: 'deleteExpired'; limit: number }
  | { kind: 'find'; jobs: number; limit: number }
  | { kind: 'indices'; run: number }
  | { kind: 'advance'; ms: number; to: 'step' | 'deadline' | 'pastDeadline' };

const job = fc.nat({ max: JOBS.length - 1 });
const stale = fc.nat({ max: 4 }).map((n) => n === 0);
/** What is wrong with a lease handed to renewLease or finishAttempt (see `withFault`); mostly nothing. */
const fault = fc.nat({ max: 11 });
const limit = fc.integer({ min: 1, max: 3 });
/** `suspended` is left out of the first upsert of each job: a job suspended from the start would schedule nothing. */
const shape = (name: fc.Arbitrary<number>, suspended = fc.option(fc.boolean(), { nil: undefined, freq: 4 })): fc.Arbitrary<Shape> =>
  fc.record(
    {
      job: name,
      policy: fc.nat({ max: 3 }),
      succeeded: fc.nat({ max: 2 }),
      failed: fc.nat({ max: 2 }),
      suspended,
      // Half the jobs fan out.
      fanOut: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: FAN_OUTS.length - 1 })),
      pendingTimeout: fc.nat({ max: PENDING_TIMEOUTS.length - 1 }),
      ttl: fc.nat({ max: TTLS.length - 1 }),
    },
    { requiredKeys: ['job', 'policy', 'succeeded', 'failed', 'fanOut', 'pendingTimeout', 'ttl'] },
  );
/** Weighted towards the calls that move runs through their life; removals and stale inputs are rarer. */
const op: fc.Arbitrary<Op> = fc.oneof(
  // One job, or two (the same one twice, or both) in one call.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('upsert' as const), jobs: fc.array(shape(job), { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('suspend' as const), job, suspended: fc.nat({ max: 2 }).map((n) => n === 0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), job }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('schedule' as const), job, minutes: fc.integer({ min: 1, max: 3 }), withRun: fc.nat({ max: 4 }).map((n) => n !== 0), stale }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('manual' as const), job, key: fc.nat({ max: 5 }), data: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('backfill' as const), job, length: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('backfillRun' as const), job, stale }) },
  // Sometimes several owners claim the same run one after another, as workers racing for a fan-out run's indices do.
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('claim' as const), run: fc.nat(), owner: fc.nat({ max: 2 }), lease: fc.integer({ min: 1, max: 5 }), claimants: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 3 })) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('renew' as const), lease: fc.nat(), fault, seconds: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('finish' as const), lease: fc.nat(), fault, outcome: fc.nat({ max: 7 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('recover' as const), limit }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('expirePending' as const), limit }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('deleteExpired' as const), limit }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('find' as const), jobs: fc.integer({ min: 1, max: 3 }), limit: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('indices' as const), run: fc.nat() }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      // Standing still and whole seconds make instants tie; any step up to 20 s makes them differ.
      ms: fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 1, max: 5 }).map((s) => s * 1_000), fc.integer({ min: 0, max: 20_000 })),
      // Half the time `ms` is ignored: time moves onto the reference's next deadline (`nextDeadline`), or 1 ms past it.
      to: fc.constantFrom('step' as const, 'step' as const, 'deadline' as const, 'pastDeadline' as const),
    }),
  },
);

function spec(step: Shape): JobSpec {
  const history = { succeeded: step.succeeded, failed: step.failed };
  const shape = FAN_OUTS[step.fanOut] ?? {};
  const pendingTimeoutMs = PENDING_TIMEOUTS[step.pendingTimeout];
  const ttlMs = TTLS[step.ttl];
  return {
    name: JOBS[step.job] ?? 'a',
    schedule: { kind: 'cron', expression: '* * * * *' },
    timezone: 'UTC',
    concurrencyPolicy: POLICIES[step.policy] ?? 'Allow',
    history: ttlMs === undefined ? history : { ...history, ttlMs },
    ...shape,
    ...(pendingTimeoutMs === undefined ? {} : { pendingTimeoutMs }),
  };
}

/** Mostly one of `likely` (so the call usually applies), one time in four one of `any`. */
function pick<T>(n: number, likely: readonly T[], any: readonly T[]): T | undefined {
  const pool = n % 4 === 0 || likely.length === 0 ? any : likely;
  return pool.length === 0 ? undefined : pool[Math.floor(n / 4) % pool.length];
}

/** A lease as renewLease and finishAttempt take it: a plain run's (no `index`) or an index's. */
type Lease = Omit<LeaseInput, 'now'>;

/** The reference's live leases (running plain runs and running indices), and one for every run and index record seen. */
async function leases(reference: Store, ids: readonly string[]): Promise<{ live: Lease[]; seen: Lease[] }> {
  const live: Lease[] = [];
  const seen: Lease[] = [];
  for (const runId of ids) {
    const run = await reference.getRun(runId);
    const plain = { runId, owner: run?.owner ?? 'o0', fence: run?.fence ?? 0 };
    seen.push(plain);
    if (run?.fanOut === undefined && run?.status === 'running') live.push(plain);
    for (const record of await reference.listIndices(runId)) {
      const lease = { runId, index: record.index, owner: record.owner ?? 'o0', fence: record.fence };
      seen.push(lease);
      if (record.status === 'running') live.push(lease);
    }
  }
  return { live, seen };
}

/** 0: a stale fence; 1: another owner; 2: the index added to a plain run's lease, or dropped from an index's; else none. */
function withFault(lease: Lease, fault: number): Lease {
  if (fault === 0) return { ...lease, fence: lease.fence - 1 };
  if (fault === 1) return { ...lease, owner: 'o9' };
  if (fault !== 2) return lease;
  if (lease.index === undefined) return { ...lease, index: 0 };
  const { index: _index, ...plain } = lease;
  return plain;
}

/**
 * The earliest instant after `now` at which something changes in the reference: a
 * run or index becomes ready, a lease, a pending timeout or a TTL runs out.
 */
async function nextDeadline(reference: Store, ids: readonly string[], now: number): Promise<number | undefined> {
  const instants: (number | undefined)[] = [];
  for (const runId of ids) {
    const run = await reference.getRun(runId);
    if (run !== undefined) instants.push(run.readyAt, run.leaseUntil, run.pendingUntil, run.expiresAt);
    for (const index of await reference.listIndices(runId)) instants.push(index.readyAt, index.leaseUntil);
  }
  const after = instants.filter((instant): instant is number => instant !== undefined && instant > now);
  return after.length === 0 ? undefined : Math.min(...after);
}

type Call = (store: Store) => Promise<unknown>;

/**
 * The call an operation makes, with its inputs read from the reference store before
 * either store runs it. `ids` are the runs seen so far; `position` is the
 * operation's place in the sequence.
 */
async function prepare(reference: Store, step: Exclude<Op, { kind: 'advance' }>, ids: readonly string[], now: number, position: number): Promise<Call> {
  switch (step.kind) {
    case 'upsert': {
      const inputs = step.jobs.map((job) => {
        const input = { spec: spec(job), now, initialCursor: now };
        return job.suspended === undefined ? input : { ...input, suspended: job.suspended };
      });
      return (store) => store.upsertJobs(inputs);
    }
    case 'suspend':
      return (store) => store.setSuspended({ name: JOBS[step.job] ?? 'a', suspended: step.suspended, now });
    case 'remove':
      return (store) => store.removeJob(JOBS[step.job] ?? 'a');
    case 'schedule': {
      const name = JOBS[step.job] ?? 'a';
      const current = await reference.getJob(name);
      const expectedCursor = (current?.cursor ?? T0) - (step.stale ? 1 : 0);
      const at = (current?.cursor ?? T0) + step.minutes * 60_000;
      const run = { id: `${name}.${at}`, jobName: name, scheduledAt: at, trigger: 'schedule' as const, readyAt: Math.max(now, at) };
      return (store) => store.scheduleRun(step.withRun ? { jobName: name, expectedCursor, cursor: at, run, now } : { jobName: name, expectedCursor, cursor: at, now });
    }
    case 'manual': {
      const name = JOBS[step.job] ?? 'a';
      const run = { id: `${name}.manual.${step.key}`, jobName: name, scheduledAt: now, trigger: 'manual' as const, readyAt: now };
      return (store) => store.createRun({ run: step.data ? { ...run, data: { k: [step.key, []] } } : run, now });
    }
    case 'backfill': {
      const name = JOBS[step.job] ?? 'a';
      const next = T0 - 10 * 60_000;
      return (store) => store.addBackfill({ jobName: name, range: { id: `bf${position}`, next, to: next + (step.length - 1) * 60_000 } });
    }
    case 'backfillRun': {
      const name = JOBS[step.job] ?? 'a';
      const first = (await reference.getJob(name))?.backfills[0] ?? { id: 'none', next: T0, to: T0 };
      const expectedNext = first.next - (step.stale ? 60_000 : 0);
      const run = { id: `${name}.backfill.${first.next / 1000}`, jobName: name, scheduledAt: first.next, trigger: 'backfill' as const, readyAt: now };
      const base = { jobName: name, backfillId: first.id, expectedNext, run, now };
      return (store) => store.scheduleBackfillRun(first.next < first.to ? { ...base, next: first.next + 60_000 } : base);
    }
    case 'claim': {
      const ready = await reference.findReadyRuns({ jobNames: new Set(JOBS), now, limit: ids.length });
      const runId = pick(step.run, ready.runs.map((run) => run.id), ids) ?? 'none';
      const claim = (store: Store, claimant: number): Promise<unknown> =>
        store.claimRun({ runId, owner: `o${(step.owner + claimant) % 3}`, now, leaseUntil: now + step.lease * 1_000, deadlineAt: now + 99_000 });
      return async (store) => {
        const claims: unknown[] = [];
        for (let claimant = 0; claimant < step.claimants; claimant += 1) claims.push(await claim(store, claimant));
        return claims;
      };
    }
    case 'renew': {
      const { live, seen } = await leases(reference, ids);
      const lease = withFault(pick(step.lease, live, seen) ?? { runId: 'none', owner: 'o0', fence: 0 }, step.fault);
      return (store) => store.renewLease({ ...lease, now, leaseUntil: now + step.seconds * 1_000 });
    }
    case 'finish': {
      const { live, seen } = await leases(reference, ids);
      const lease = withFault(pick(step.lease, live, seen) ?? { runId: 'none', owner: 'o0', fence: 0 }, step.fault);
      const error = { name: 'E', message: `m${now}` };
      const outcomes: AttemptOutcome[] = [
        { status: 'succeeded' },
        { status: 'succeeded' },
        { status: 'succeeded' },
        { status: 'succeeded' },
        { status: 'failed', error },
        { status: 'retry', error, readyAt: now + 3_000 },
        { status: 'retry', error, readyAt: now },
        { status: 'released' },
      ];
      return (store) => store.finishAttempt({ ...lease, now, outcome: outcomes[step.outcome] ?? { status: 'succeeded' } });
    }
    case 'recover':
      return (store) => store.recoverExpiredRuns({ now, limit: step.limit });
    case 'expirePending':
      return (store) => store.expirePendingRuns({ now, limit: step.limit });
    case 'deleteExpired':
      return (store) => store.deleteExpiredRuns({ now, limit: step.limit });
    case 'find': {
      const jobNames = new Set(JOBS.filter((_, index) => (step.jobs >> index) & 1));
      return (store) => store.findReadyRuns({ jobNames, now, limit: step.limit });
    }
    case 'indices': {
      const runId = pick(step.run, ids, ['none']) ?? 'none';
      return (store) => store.listIndices(runId);
    }
  }
}

/** What a sequence has seen of the reference: every run ID, and the index records of each fan-out run as last compared. */
interface Seen {
  readonly ids: string[];
  readonly indices: Map<string, string>;
}

/**
 * Compares every job's runs and the job list, and the index records of each fan-out
 * run whose records changed in the reference (the rest are compared after the
 * sequence); adds the runs to `seen`.
 */
async function expectSameState(store: Store, reference: Store, seen: Seen, after: string): Promise<void> {
  for (const jobName of JOBS) {
    const runs = await reference.listRuns({ jobName });
    expect(await store.listRuns({ jobName }), `runs of ${jobName} after ${after}`).toEqual(runs);
    for (const run of runs) {
      if (!seen.ids.includes(run.id)) seen.ids.push(run.id);
      if (run.fanOut === undefined) continue;
      const indices = await reference.listIndices(run.id);
      const records = JSON.stringify(indices);
      if (seen.indices.get(run.id) === records) continue;
      seen.indices.set(run.id, records);
      expect(await store.listIndices(run.id), `indices of ${run.id} after ${after}`).toEqual(indices);
    }
  }
  expect(await store.listJobs(), `jobs after ${after}`).toEqual(await reference.listJobs());
}

export interface DifferentialOptions {
  /** A fresh, empty store for one sequence. */
  readonly createStore: () => Store;
  /** Deletes what the store wrote and closes it. */
  readonly destroyStore: (store: Store) => Promise<void>;
  readonly numRuns: number;
  /** Replays or varies the sequences; a fixed seed by default, so every run checks the same ones. */
  readonly seed?: number | undefined;
  /**
   * Stops after this long, failing: shrinking a failure against a real server can
   * outlast the test's timeout, and this reports the smallest sequence found so far
   * instead of a bare timeout.
   */
  readonly timeLimitMs: number;
}

/** Runs `numRuns` random sequences of operations against a new store and a MemoryStore. */
export async function assertBehavesLikeMemoryStore(options: DifferentialOptions): Promise<void> {
  // Both jobs exist from the start, each in a random shape.
  const setup = fc
    .tuple(shape(fc.constant(0), fc.constant(undefined)), shape(fc.constant(1), fc.constant(undefined)))
    .map((jobs): Op => ({ kind: 'upsert', jobs }));
  const sequence = fc.tuple(setup, fc.array(op, { minLength: 10, maxLength: 80, size: 'max' }));
  await fc.assert(
    fc.asyncProperty(sequence, async ([first, ops]) => {
      const store = options.createStore();
      const memory = new MemoryStore();
      try {
        let now = T0;
        const seen: Seen = { ids: [], indices: new Map() };
        for (const [position, step] of [first, ...ops].entries()) {
          if (step.kind === 'advance') {
            const deadline = step.to === 'step' ? undefined : await nextDeadline(memory, seen.ids, now);
            now = deadline === undefined ? now + step.ms : deadline + (step.to === 'pastDeadline' ? 1 : 0);
            // No call is made, so there is nothing to compare.
            continue;
          }
          const call = await prepare(memory, step, seen.ids, now, position);
          const expected = await call(memory);
          const actual = await call(store);
          expect(actual, JSON.stringify(step)).toEqual(expected);
          await expectSameState(store, memory, seen, JSON.stringify(step));
        }
        for (const name of JOBS) expect(await store.getJob(name), `job ${name}`).toEqual(await memory.getJob(name));
        for (const id of [...seen.ids, 'none']) {
          expect(await store.getRun(id), `run ${id}`).toEqual(await memory.getRun(id));
          expect(await store.listIndices(id), `indices of ${id}`).toEqual(await memory.listIndices(id));
        }
      } finally {
        await options.destroyStore(store);
      }
    }),
    {
      numRuns: options.numRuns,
      seed: options.seed ?? DEFAULT_SEED,
      interruptAfterTimeLimit: options.timeLimitMs,
      markInterruptAsFailure: true,
    },
  );
}
