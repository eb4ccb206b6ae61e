/**
 * The move from the single-tag layout (version 2, every key under `{prefix}`, what
 * every Redis store wrote before partitions) to the partitioned layout, on any
 * client (a single Redis or a cluster). Two prefixes get the same jobs, runs, index
 * records, backfills and leases from a store of one partition (which writes exactly
 * the single-tag layout); one is then opened by a store of 12 partitions, which
 * migrates it. The migrated prefix must read back and sweep exactly as the one left
 * alone.
 */
import type { Cluster, Redis } from 'ioredis';
import { expect } from 'vitest';
import { KeyLayout } from '../../adapters/redis/key-layout.js';
import { migrateLayout } from '../../adapters/redis/migration.js';
import { RedisStore } from '../../adapters/redis/index.js';
import { StoreError } from '../../src/errors.js';
import type { JobSpec, Store } from '../../src/store.js';

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const JOBS = 24;
const names = Array.from({ length: JOBS }, (_, i) => `job-${i}`);

function specOf(name: string, i: number): JobSpec {
  const base = { name, schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 5, failed: 5 } } as const;
  if (i % 3 === 0) return { ...base, pendingTimeoutMs: 5 * MINUTE };
  if (i % 3 === 1) return { ...base, fanOut: { completions: 3, parallelism: 2 } };
  return { ...base, history: { succeeded: 5, failed: 5, ttlMs: 10 * MINUTE } };
}

/** Jobs, backfills, pending, running (leases) and finished runs, index records, a lock: in a store of one partition. */
export async function writeSingleTagLayout(client: Redis | Cluster, prefix: string): Promise<void> {
  const store = new RedisStore({ client, prefix, partitions: 1 });
  await store.init();
  try {
    await store.upsertJobs(names.map((name, i) => ({ spec: specOf(name, i), now: T0, initialCursor: T0 })));
    await store.addBackfill({ jobName: 'job-0', range: { id: 'bf', next: T0 - 10 * MINUTE, to: T0 - 5 * MINUTE } });
    for (const [i, name] of names.entries()) {
      const run = (key: string) => ({ id: `${name}.manual.${key}`, jobName: name, scheduledAt: T0, trigger: 'manual' as const, readyAt: T0 });
      await store.createRun({ run: run('pending'), now: T0 });
      await store.createRun({ run: run('running'), now: T0 });
      await store.createRun({ run: run('done'), now: T0 });
      await store.claimRun({ runId: `${name}.manual.running`, owner: 'w', now: T0, leaseUntil: T0 + MINUTE });
      const done = await store.claimRun({ runId: `${name}.manual.done`, owner: 'w', now: T0, leaseUntil: T0 + MINUTE });
      const index = done?.index === undefined ? {} : { index: done.index.index };
      const fence = done?.index?.fence ?? done?.run.fence ?? 0;
      await store.finishAttempt({ runId: `${name}.manual.done`, owner: 'w', fence, now: T0 + i, outcome: { status: 'succeeded' }, ...index });
    }
    // A lock other than the planner's (which would keep the migration from starting, see below).
    await store.lock().acquire({ name: 'planner-member/1:w', owner: 'w', now: T0, leaseUntil: T0 + MINUTE });
  } finally {
    await store.close();
  }
}

/** Everything a store reads back, and what each sweep does on it, in a stable form. */
async function readBack(store: Store): Promise<unknown> {
  const jobs = await store.listJobs();
  const runs = await Promise.all(names.map((name) => store.listRuns({ jobName: name })));
  const indices = await Promise.all(runs.flat().map((run) => store.listIndices(run.id)));
  const ready = await store.findReadyRuns({ jobNames: new Set(names), now: T0, limit: 1_000 });
  const lock = await (store as RedisStore).lock().list?.({ prefix: 'planner-member', now: T0 });
  return { jobs, runs, indices, ready, lock };
}

async function sweep(store: Store): Promise<unknown> {
  const recovered = await store.recoverExpiredRuns({ now: T0 + 2 * MINUTE, limit: 1_000 });
  const expired = await store.expirePendingRuns({ now: T0 + 60 * MINUTE, limit: 1_000 });
  const deleted = await store.deleteExpiredRuns({ now: T0 + 600 * MINUTE, limit: 1_000 });
  const ids = (runs: readonly { id: string }[]): string[] => runs.map((run) => run.id).sort();
  return { recovered: ids(recovered), expired: ids(expired.runs), nextAt: expired.nextAt, deleted, after: await readBack(store) };
}

/**
 * Writes the single-tag layout under both prefixes, migrates `migrated` (first with
 * a migration cut short after `failAfter` pipelines, when given), and checks it
 * against `reference`, left in the single-tag layout.
 */
export async function checkMigration(client: Redis | Cluster, reference: string, migrated: string, failAfter?: number): Promise<void> {
  await writeSingleTagLayout(client, reference);
  await writeSingleTagLayout(client, migrated);
  if (failAfter !== undefined) {
    // A migration that dies midway: the failAfter-th pipeline (3 per job: read, copy, delete) is lost.
    let pipelines = 0;
    const failing = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'pipeline') {
          const value = Reflect.get(target, property, receiver) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        }
        return () => {
          pipelines += 1;
          const pipeline = target.pipeline();
          if (pipelines === failAfter) pipeline.exec = () => Promise.reject(new Error('connection lost'));
          return pipeline;
        };
      },
    });
    await expect(migrateLayout({ client: failing, keys: new KeyLayout(migrated, 12), partitions: 12 })).rejects.toThrow('connection lost');
    expect(await client.get(`{${migrated}}:version`)).toBe('2');
    expect(await client.exists(`{${migrated}}:migrating`)).toBe(0);
  }
  const before = new RedisStore({ client, prefix: reference, partitions: 1 });
  const after = new RedisStore({ client, prefix: migrated, partitions: 12 });
  try {
    await before.init();
    // While an instance of the single-tag layout plans (it holds the lease "planner"), nothing moves.
    const planner = await before.lock().acquire({ name: 'planner', owner: 'old', now: T0, leaseUntil: T0 + MINUTE });
    const early = new RedisStore({ client, prefix: reference, partitions: 12 });
    const refused = await early.init().then(() => undefined, (error: unknown) => error);
    await early.close();
    expect(refused).toBeInstanceOf(StoreError);
    expect(String(refused)).toContain('still plans on this prefix');
    expect(await client.get(`{${reference}}:version`)).toBe('2');
    expect(await client.exists(`{${reference}}:migrating`)).toBe(0);
    await before.lock().release({ name: 'planner', owner: 'old', token: planner?.token ?? 0 });
    await after.init();
    expect(await client.get(`{${migrated}}:version`)).toBe('3');
    expect(await client.get(`{${migrated}}:partitions`)).toBe('12');
    // Nothing of a job is left under {prefix}: only the store-wide keys.
    const nodes: readonly Redis[] = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
    const keys = (await Promise.all(nodes.map((node) => node.keys(`{${migrated}}*`)))).flat();
    const left = keys.map((key) => key.slice(`{${migrated}}`.length)).sort();
    expect(left).toEqual([':lock-names', ':lock-token:planner-member/1:w', ':lock:planner-member/1:w', ':partitions', ':version']);
    expect(await readBack(after)).toEqual(await readBack(before));
    // Idempotent: opening it again changes nothing.
    const again = new RedisStore({ client, prefix: migrated, partitions: 12 });
    await again.init();
    await again.close();
    expect(await sweep(after)).toEqual(await sweep(before));
    // Another count is refused, naming both counts.
    for (const partitions of [1, 6]) {
      const other = new RedisStore({ client, prefix: migrated, partitions });
      const refused = await other.init().then(() => undefined, (error: unknown) => error);
      await other.close();
      expect(refused).toBeInstanceOf(StoreError);
      expect(String(refused)).toContain(`holds 12 partition(s) and this store was given partitions: ${partitions}`);
    }
  } finally {
    await before.close();
    await after.close();
  }
}
