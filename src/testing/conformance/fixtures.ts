/**
 * What every conformance test shares: a fresh store per test, and the few steps
 * (create a job, plan a tick, claim, succeed, and their fan-out counterparts:
 * claim an index, finish it) the tests build their cases from.
 */
import type {
  AttemptOutcome,
  ConcurrencyPolicy,
  FanOutSpec,
  HistoryLimits,
  IndexRecord,
  JobSpec,
  NewRun,
  RunRecord,
  Store,
  StoreNotification,
  UpsertJobInput,
  UpsertJobResult,
} from '../../store.js';

/** The matchers the suite uses: vitest's and jest's `expect` both provide them. */
export interface ConformanceAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeUndefined(): void;
  toBeDefined(): void;
  toHaveLength(length: number): void;
  toContainEqual(expected: unknown): void;
  toBeGreaterThan(expected: number): void;
}

/** The test framework's functions, passed in so the suite runs under vitest or jest, ESM or CommonJS. */
export interface ConformanceTestApi {
  readonly describe: (name: string, body: () => void) => void;
  readonly it: (name: string, body: () => Promise<void>, timeout?: number) => void;
  readonly expect: (actual: unknown, message?: string) => ConformanceAssertion;
}

export interface StoreConformanceOptions extends ConformanceTestApi {
  /** Creates a fresh, empty store (its own namespace). `init()` is called by the suite. */
  readonly createStore: () => Store | Promise<Store>;
  /** Disposes of a store after its test; default: `store.close()`. */
  readonly destroyStore?: (store: Store) => void | Promise<void>;
}

/** Retries `check` until it stops throwing or `timeoutMs` passes: for notifications that travel through a server. */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 5_000, intervalMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (performance.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}

export const T0 = Date.UTC(2026, 0, 1);
export const MINUTE = 60_000;

export function spec(name: string, concurrencyPolicy: ConcurrencyPolicy = 'Allow', history = { succeeded: 3, failed: 1 }): JobSpec {
  return { name, schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy, history };
}

/** One job through the batch `upsertJobs`. */
export async function upsertJob(store: Store, input: UpsertJobInput): Promise<UpsertJobResult> {
  const [result] = await store.upsertJobs([input]);
  if (result === undefined) throw new Error(`upsertJobs returned no result for ${input.spec.name}`);
  return result;
}

/** The run of the tick `at`, ready at `readyAt` (the core hands the later of now and the tick). */
export function scheduled(jobName: string, at: number, readyAt = at): NewRun {
  return { id: `${jobName}.${at / 1000}`, jobName, scheduledAt: at, trigger: 'schedule', readyAt };
}

/** A fan-out job's spec: 3 completions, parallelism 2, retry limit 1 unless given; history keeps 3 and 3. */
export function fanOutSpec(name: string, shape: Partial<FanOutSpec & { retryLimit: number }> = {}, extra: Partial<JobSpec> = {}): JobSpec {
  const history: HistoryLimits = { succeeded: 3, failed: 3 };
  const { retryLimit = 1, ...fanOut } = shape;
  return {
    ...spec(name, 'Allow', history),
    fanOut: { completions: 3, parallelism: 2, ...fanOut },
    retryLimit,
    ...extra,
  };
}

/** An attempt's error, for tests where which error does not matter. */
export const ERROR = { name: 'Error', message: 'boom' } as const;

/** The test API plus the steps bound to it. */
export type Fixture = ReturnType<typeof fixture>;

export function fixture(options: StoreConformanceOptions) {
  const { expect } = options;
  async function withStore(test: (store: Store) => Promise<void>): Promise<void> {
    const store = await options.createStore();
    await store.init();
    try {
      await test(store);
    } finally {
      await (options.destroyStore ?? ((s: Store) => s.close()))(store);
    }
  }

  async function job(store: Store, jobName: string, policy: ConcurrencyPolicy = 'Allow', history?: { succeeded: number; failed: number }) {
    return (await upsertJob(store, { spec: spec(jobName, policy, history), now: T0, initialCursor: T0 })).job;
  }

  /** Creates the run for the tick one minute after the job's cursor. */
  async function tick(store: Store, jobName: string, minutes: number, now = T0 + minutes * MINUTE) {
    const current = await store.getJob(jobName);
    if (current === undefined) throw new Error(`test setup: job ${jobName} missing`);
    const at = T0 + minutes * MINUTE;
    return store.scheduleRun({ jobName, expectedCursor: current.cursor, cursor: at, run: scheduled(jobName, at, Math.max(now, at)), now });
  }

  /** Claims a plain run; resolves the run under the caller's lease. */
  async function claim(store: Store, runId: string, owner = 'a', now = T0 + MINUTE, leaseMs = 30_000): Promise<RunRecord> {
    const claimed = await store.claimRun({ runId, owner, now, leaseUntil: now + leaseMs });
    if (claimed === undefined) throw new Error(`test setup: could not claim ${runId}`);
    if (claimed.index !== undefined) throw new Error(`test setup: ${runId} is a fan-out run`);
    return claimed.run;
  }

  async function succeed(store: Store, run: RunRecord, now: number) {
    return store.finishAttempt({ runId: run.id, owner: run.owner ?? '', fence: run.fence, now, outcome: { status: 'succeeded' } });
  }

  /** Creates (or replaces) a fan-out job; its cursor starts at `T0`. */
  async function fanOutJob(store: Store, jobName: string, fanOut: Partial<FanOutSpec & { retryLimit: number }> = {}, extra: Partial<JobSpec> = {}) {
    const spec = fanOutSpec(jobName, fanOut, extra);
    return (await upsertJob(store, { spec, now: T0, initialCursor: T0 })).job;
  }

  /** `tick` for a test that needs the run created. */
  async function created(store: Store, jobName: string, minutes: number, now = T0 + minutes * MINUTE): Promise<RunRecord> {
    const result = await tick(store, jobName, minutes, now);
    if (result.outcome !== 'created') throw new Error(`test setup: tick ${minutes} of ${jobName} was ${result.outcome}`);
    return result.run;
  }

  /** Claims the next index of a fan-out run; resolves the run and the index now leased to `owner`. */
  async function claimIndex(store: Store, runId: string, owner = 'a', now = T0 + MINUTE, leaseMs = 30_000) {
    const claimed = await store.claimRun({ runId, owner, now, leaseUntil: now + leaseMs });
    if (claimed?.index === undefined) throw new Error(`test setup: could not claim an index of ${runId}`);
    return { run: claimed.run, index: claimed.index };
  }

  /** Finishes the attempt of a claimed index with its owner and fence. */
  async function finishIndex(store: Store, index: IndexRecord, outcome: AttemptOutcome, now: number) {
    return store.finishAttempt({ runId: index.runId, index: index.index, owner: index.owner ?? '', fence: index.fence, now, outcome });
  }

  /**
   * Runs `body` with every notification the store sends collected in `seen`, once the
   * store's subscription (a connection of its own, for some stores) is live. A store
   * without notifications (`watch` is optional) runs `body` with `seen` empty: check
   * notifications with `notified`, which skips them then.
   */
  async function watching(store: Store, body: (seen: StoreNotification[]) => Promise<void>): Promise<void> {
    const seen: StoreNotification[] = [];
    const unwatch = store.watch?.((n) => seen.push(n));
    if (unwatch === undefined) return body(seen);
    try {
      await eventually(async () => {
        await upsertJob(store, { spec: spec('probe'), now: T0, initialCursor: T0 });
        expect(seen.some((n) => n.type === 'job-changed' && n.jobName === 'probe')).toBe(true);
      }, 5_000, 50);
      await body(seen);
    } finally {
      unwatch();
    }
  }

  /** Retries `check` of what `watching` saw until it passes; nothing to check when the store has no notifications. */
  async function notified(store: Store, check: () => void): Promise<void> {
    if (store.watch !== undefined) await eventually(check);
  }

  return { ...options, expect, eventually, withStore, watching, notified, job, tick, claim, succeed, fanOutJob, created, claimIndex, finishIndex };
}
