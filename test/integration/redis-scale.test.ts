/**
 * An instance that registers more jobs than `findReadyRuns` sends inline polls the
 * store-wide `ready-jobs` index instead of sending every name each heartbeat: the
 * same answers as with the names sent, scripts called with a handful of arguments,
 * stale index entries corrected, the index built once for a prefix written before it
 * existed, and every name sent when more jobs have claimable runs than it registered.
 * A page of `listJobs` on a single Redis merges the partitions' names a slice at a time;
 * a batch of upserts publishes its notifications as one message.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import { partitionOf } from '../../src/partition.js';
import { UPSERT_BATCH, type JobSpec } from '../../src/store.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('redis');
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const name = (i: number): string => `job-${String(i).padStart(5, '0')}`;

function spec(jobName: string): JobSpec {
  return { name: jobName, schedule: { kind: 'cron', expression: '0 0 1 1 *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 1, failed: 1 } };
}

describe.skipIf(!up)('Redis findReadyRuns for an instance with many jobs', () => {
  const client = new Redis(REDIS_URL);
  afterAll(() => client.quit());

  async function withStore(test: (store: RedisStore, prefix: string) => Promise<void>, partitions = 12): Promise<void> {
    const prefix = uniqueNamespace('tw');
    const store = new RedisStore({ client, prefix, partitions });
    try {
      await store.init();
      await test(store, prefix);
    } finally {
      await store.close();
      await deleteRedisKeys(client, prefix);
    }
  }

  async function jobs(store: RedisStore, names: readonly string[]): Promise<void> {
    for (let i = 0; i < names.length; i += UPSERT_BATCH) {
      await store.upsertJobs(names.slice(i, i + UPSERT_BATCH).map((job) => ({ spec: spec(job), now: T0, initialCursor: T0 })));
    }
  }

  /** The most arguments any script call got while `body` ran. */
  async function largestCall(body: () => Promise<void>): Promise<number> {
    const spy = vi.spyOn(client, 'evalsha');
    try {
      await body();
      return Math.max(0, ...spy.mock.calls.map((call) => call.length));
    } finally {
      spy.mockRestore();
    }
  }

  const registered = new Set(Array.from({ length: 5_000 }, (_, i) => name(i)));
  const now = T0 + 10 * MINUTE;

  it('gives the answer the names would, with a handful of arguments per script call', () =>
    withStore(async (store) => {
      await jobs(store, [name(10), name(20), name(30), name(40), 'elsewhere']);
      // Ready now (two jobs), ready later (one), and a ready run of a job this instance does not handle.
      for (const [job, at] of [[name(10), now], [name(20), now - MINUTE], [name(30), now + MINUTE], ['elsewhere', now]] as const) {
        await store.createRun({ run: { id: `${job}.manual.k`, jobName: job, scheduledAt: at, trigger: 'manual', readyAt: at }, now: at });
      }
      let found: Awaited<ReturnType<RedisStore['findReadyRuns']>> | undefined;
      const largest = await largestCall(async () => {
        found = await store.findReadyRuns({ jobNames: registered, now, limit: 100 });
      });
      expect(found).toEqual(await store.findReadyRuns({ jobNames: new Set([name(10), name(20), name(30), name(40)]), now, limit: 100 }));
      expect(found).toMatchObject({ runs: [{ id: `${name(20)}.manual.k` }, { id: `${name(10)}.manual.k` }], nextReadyAt: now + MINUTE });
      // sha, key count, a key per partition (the ready-jobs look-up), now and max; then for the two ready names at
      // most two keys, now and limit, and per key a name count and its names.
      expect(largest).toBeLessThanOrEqual(4 + store.partitions);
      // Claimed runs leave the index as it was; the next poll corrects it and finds nothing.
      for (const job of [name(10), name(20)]) await store.claimRun({ runId: `${job}.manual.k`, owner: 'me', now, leaseUntil: now + 30_000 });
      expect(await store.findReadyRuns({ jobNames: registered, now, limit: 100 })).toEqual({ runs: [], nextReadyAt: now + MINUTE });
      expect(await store.findReadyRuns({ jobNames: registered, now: now + MINUTE, limit: 100 })).toMatchObject({ runs: [{ id: `${name(30)}.manual.k` }] });
    }));

  it('sends no names at all while no job has a claimable run', () =>
    withStore(async (store) => {
      await jobs(store, [name(1)]);
      const largest = await largestCall(async () => {
        expect(await store.findReadyRuns({ jobNames: registered, now, limit: 100 })).toEqual({ runs: [] });
      });
      // sha, key count, a key per partition, now and max.
      expect(largest).toBeLessThanOrEqual(4 + store.partitions);
    }));

  it('indexes the claimable runs of a prefix written before the index existed, once, at init', () =>
    withStore(async (store, prefix) => {
      await jobs(store, [name(1), name(2)]);
      await store.createRun({ run: { id: `${name(1)}.manual.k`, jobName: name(1), scheduledAt: now, trigger: 'manual', readyAt: now }, now });
      await client.del(`{${prefix}}:ready-jobs`, `{${prefix}}:ready-jobs-built`);
      expect(await store.findReadyRuns({ jobNames: registered, now, limit: 100 })).toEqual({ runs: [] }); // what an old layout looks like
      const again = new RedisStore({ client, prefix, partitions: 1 });
      await again.init();
      expect((await again.findReadyRuns({ jobNames: registered, now, limit: 100 })).runs.map((run) => run.id)).toEqual([`${name(1)}.manual.k`]);
      await again.close();
    }, 1)); // the single-tag layout: the only one that existed before the index

  it('sends every name when more jobs have claimable runs than it registered', () =>
    withStore(async (store) => {
      const all = Array.from({ length: 1_500 }, (_, i) => name(i));
      await jobs(store, all);
      await Promise.all(all.map((job) => store.createRun({ run: { id: `${job}.manual.k`, jobName: job, scheduledAt: now, trigger: 'manual', readyAt: now }, now })));
      const mine = new Set(all.slice(0, 1_001));
      let found: Awaited<ReturnType<RedisStore['findReadyRuns']>> | undefined;
      const largest = await largestCall(async () => {
        found = await store.findReadyRuns({ jobNames: mine, now, limit: 5 });
      });
      expect(largest).toBeGreaterThan(1_001);
      expect(found?.runs.map((run) => run.jobName)).toEqual(all.slice(0, 5));
    }));

  it('lists pages merged from every partition, a partition that fills whole pages alone included', () =>
    withStore(async (store) => {
      // 1,500 consecutive names in partition 3 (a page's merge reads it slice after slice), 300 spread over the others,
      // and names whose order is by bytes (upper case first), not by a locale.
      const all = Array.from({ length: 6_000 }, (_, i) => name(i));
      const alone = all.filter((job) => partitionOf(job, store.partitions) === 3).slice(0, 1_500);
      const spread = all.filter((job) => partitionOf(job, store.partitions) !== 3 && job > (alone[700] as string)).slice(0, 300);
      const names = [...alone, ...spread, 'Job-B', 'job-a', 'JOB', 'job-'].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      await jobs(store, names);
      expect((await store.listJobs()).map((job) => job.name)).toEqual(names);
      for (const limit of [1, 7, 999]) {
        const pages: string[] = [];
        for (let page = await store.listJobs({ limit }); page.length > 0; page = await store.listJobs({ limit, after: page.at(-1)?.name as string })) {
          expect(page.length).toBeLessThanOrEqual(limit);
          pages.push(...page.map((job) => job.name));
        }
        expect(pages).toEqual(names);
      }
    }));

  it('publishes the job-changed notifications of a batch of upserts as one message, in order', () =>
    withStore(async (store, prefix) => {
      const subscriber = new Redis(REDIS_URL);
      const messages: string[] = [];
      try {
        subscriber.on('message', (_channel: string, message: string) => messages.push(message));
        await subscriber.subscribe(`{${prefix}}:events`);
        const names = Array.from({ length: 200 }, (_, i) => name(i)).filter((job) => partitionOf(job, store.partitions) === 5);
        await jobs(store, names);
        await jobs(store, names); // existing jobs too
        await vi.waitFor(() => expect(messages).toHaveLength(2), { timeout: 5_000, interval: 20 });
        for (const message of messages) expect(JSON.parse(message)).toEqual(names.map((jobName) => ({ type: 'job-changed', jobName })));
      } finally {
        subscriber.disconnect();
      }
    }));
});
