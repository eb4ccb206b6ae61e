/**
 * What every conformance test shares: a fresh store per test, and the few steps
 * (create a job, plan a tick, claim, succeed) the tests build their cases from.
 */
import type { ConcurrencyPolicy, JobSpec, NewRun, RunRecord, Store } from '../../store.js';

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

export function scheduled(jobName: string, at: number): NewRun {
  return { id: `${jobName}.${at / 1000}`, jobName, scheduledAt: at, trigger: 'schedule' };
}

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
    return (await store.upsertJob({ spec: spec(jobName, policy, history), now: T0, initialCursor: T0 })).job;
  }

  /** Creates the run for the tick one minute after the job's cursor. */
  async function tick(store: Store, jobName: string, minutes: number, now = T0 + minutes * MINUTE) {
    const current = await store.getJob(jobName);
    if (current === undefined) throw new Error(`test setup: job ${jobName} missing`);
    const at = T0 + minutes * MINUTE;
    return store.scheduleRun({ jobName, expectedCursor: current.cursor, cursor: at, run: scheduled(jobName, at), now });
  }

  async function claim(store: Store, runId: string, owner = 'a', now = T0 + MINUTE, leaseMs = 30_000) {
    const run = await store.claimRun({ runId, owner, now, leaseUntil: now + leaseMs });
    if (run === undefined) throw new Error(`test setup: could not claim ${runId}`);
    return run;
  }

  async function succeed(store: Store, run: RunRecord, now: number) {
    return store.finishAttempt({ runId: run.id, owner: run.owner ?? '', fence: run.fence, now, outcome: { status: 'succeeded' } });
  }

  return { ...options, expect, eventually, withStore, job, tick, claim, succeed };
}
