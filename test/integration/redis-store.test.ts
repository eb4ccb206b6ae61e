/**
 * RedisStore against a real Redis: the store conformance suite, plus what only the
 * Redis adapter has (options, client ownership, script cache recovery, JSON data
 * round-trips, notifications across store instances).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../adapters/memory/index.js';
import { RedisLock, RedisStore } from '../../adapters/redis/index.js';
import { ValidationError } from '../../src/errors.js';
import { partitionOf, UPSERT_BATCH, type JobSpec, type JsonValue, type Store, type StoreNotification, type UpsertJobInput, type UpsertJobResult } from '../../src/store.js';
import { storeConformance } from '../../src/testing/conformance/index.js';
import { partitionTag } from '../../adapters/redis/key-layout.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from './servers.js';
import { redisServerAvailable, required, throwawayRedis } from '../multi-process/throwaway-servers.js';

const up = await requireServer('redis');
const T0 = Date.UTC(2026, 0, 1);

/** One job through the batch method, as most tests need. */
async function upsert(store: Store, input: UpsertJobInput): Promise<UpsertJobResult> {
  return (await store.upsertJobs([input]))[0]!;
}

/** Deletes every key of a prefix (validated, so it is safe in a MATCH pattern). */
describe.skipIf(!up)('RedisStore', () => {
  let admin: Redis;
  const prefixes = new WeakMap<Store, string>();

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await admin.quit();
  });

  storeConformance('RedisStore', {
    describe,
    it,
    expect,
    createStore: () => {
      const prefix = uniqueNamespace('tw');
      const store = new RedisStore({ url: REDIS_URL, prefix });
      prefixes.set(store, prefix);
      return store;
    },
    destroyStore: async (store) => {
      const prefix = prefixes.get(store);
      if (prefix !== undefined) await deleteRedisKeys(admin, prefix);
      await store.close();
    },
  });

  async function withStore(test: (store: RedisStore, prefix: string) => Promise<void>, client?: Redis, partitions?: number): Promise<void> {
    const prefix = uniqueNamespace('tw');
    const options = { prefix, ...(partitions === undefined ? {} : { partitions }) };
    const store = client === undefined ? new RedisStore({ url: REDIS_URL, ...options }) : new RedisStore({ client, ...options });
    await store.init();
    try {
      await test(store, prefix);
    } finally {
      await deleteRedisKeys(admin, prefix);
      await store.close();
    }
  }

  const spec = { name: 'a', schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 3, failed: 1 } } as const;

  describe('options', () => {
    const invalid = (options: unknown): ValidationError => {
      try {
        new RedisStore(options as never);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return error as ValidationError;
      }
      throw new Error('expected a ValidationError');
    };

    it('rejects a bad prefix, naming the field and the value', () => {
      for (const prefix of ['', 'a b', 'x{y}', '*', 'a'.repeat(101)]) {
        const error = invalid({ url: REDIS_URL, prefix });
        expect(error.issues[0]).toMatchObject({ path: 'prefix', value: prefix });
        expect(error.message).toContain('prefix');
      }
    });

    it('requires exactly one of client and url', () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true });
      try {
        expect(invalid({ client, url: REDIS_URL }).issues[0]).toMatchObject({ path: 'url', value: REDIS_URL });
        expect(invalid({}).message).toContain('exactly one of client or url');
        expect(invalid({ prefix: 'x' }).message).toContain('exactly one of client or url');
      } finally {
        client.disconnect();
      }
    });

    it('rejects a client that is not an ioredis client, a bad url and unknown options', () => {
      expect(invalid({ client: {} }).issues[0]?.path).toBe('client');
      expect(invalid({ url: 'http://x' }).message).toContain('"http://x"');
      expect(invalid({ url: REDIS_URL, prefx: 'a' }).message).toContain('prefx');
      expect(() => new RedisLock({ client: {} as never })).toThrow(ValidationError);
    });

    it('accepts the documented prefix characters and defaults to tickwork', () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true });
      try {
        expect(() => new RedisStore({ client, prefix: 'Ab-9_.:x' })).not.toThrow();
        expect(() => new RedisStore({ client })).not.toThrow();
      } finally {
        client.disconnect();
      }
    });
  });

  describe('client ownership', () => {
    it('leaves a client the user passed open after close()', async () => {
      const client = new Redis(REDIS_URL);
      try {
        await withStore(async (store) => {
          await upsert(store, { spec, now: T0, initialCursor: T0 });
          const unwatch = store.watch(() => {});
          unwatch();
        }, client);
        expect(client.status).toBe('ready');
        expect(await client.ping()).toBe('PONG');
      } finally {
        await client.quit();
      }
    });

    it('closes the connections it opened itself', async () => {
      const prefix = uniqueNamespace('tw');
      const store = new RedisStore({ url: REDIS_URL, prefix });
      await store.init();
      store.watch(() => {});
      await store.close();
      await expect(store.getJob('a')).rejects.toThrow();
      await deleteRedisKeys(admin, prefix);
    });

    it('works with a client that has an ioredis keyPrefix, notifications included', async () => {
      const client = new Redis(REDIS_URL, { keyPrefix: 'app:' });
      const prefix = uniqueNamespace('tw');
      const store = new RedisStore({ client, prefix });
      const seen: StoreNotification[] = [];
      const unwatch = store.watch((n) => seen.push(n));
      try {
        await vi.waitFor(async () => {
          await upsert(store, { spec, now: T0, initialCursor: T0 });
          expect(seen).toContainEqual({ type: 'job-changed', jobName: 'a' });
        }, { timeout: 5_000, interval: 50 });
        await store.createRun({ run: { id: 'a.manual.k', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        expect((await store.getRun('a.manual.k'))?.status).toBe('pending');
        expect(await admin.exists(`app:${partitionTag(prefix, partitionOf('a', store.partitions), store.partitions)}:run:a.manual.k`)).toBe(1);
      } finally {
        unwatch();
        await store.close();
        await deleteRedisKeys(admin, prefix);
        await client.quit();
      }
    });

    it('rejects operations, without crashing, while Redis is unreachable', async () => {
      // ioredis's defaults: the command waits through 20 reconnection attempts (~10 s), then rejects.
      const store = new RedisStore({ url: 'redis://127.0.0.1:1', prefix: uniqueNamespace('tw') });
      const unwatch = store.watch(() => {});
      try {
        await expect(store.init()).rejects.toThrow();
      } finally {
        unwatch();
        await store.close();
      }
    }, 30_000);

    it('closes cleanly when it never connected', async () => {
      const store = new RedisStore({ url: REDIS_URL, prefix: uniqueNamespace('tw') });
      await store.close();
    });
  });

  describe('scripts', () => {
    it('recovers when the server forgot its scripts (NOSCRIPT)', () =>
      withStore(async (store) => {
        await upsert(store, { spec, now: T0, initialCursor: T0 });
        await admin.script('FLUSH');
        const result = await store.scheduleRun({
          jobName: 'a',
          expectedCursor: T0,
          cursor: T0 + 60_000,
          run: { id: 'a.1767225660', jobName: 'a', scheduledAt: T0 + 60_000, trigger: 'schedule', readyAt: T0 + 60_000 },
          now: T0 + 60_000,
        });
        expect(result.outcome).toBe('created');
        await admin.script('FLUSH');
        expect(await store.lock().acquire({ name: 'planner', owner: 'p', now: T0, leaseUntil: T0 + 1_000 })).toMatchObject({ token: 1 });
      }));

    it('refuses a prefix laid out by another key layout version', () =>
      withStore(async (store, prefix) => {
        await admin.set(`{${prefix}}:version`, '999');
        await expect(store.init()).rejects.toThrow(/layout version 999/);
      }));
  });

  describe('data', () => {
    const values: JsonValue[] = [
      null,
      true,
      0,
      -1.5,
      0.1 + 0.2,
      Number.MAX_SAFE_INTEGER,
      1e300,
      '',
      'ünïcødé ✓ 😀 "quoted" \\ / \n',
      [],
      {},
      [[], {}, [null]],
      { empty: [], nested: { deep: [1, 'two', { three: 3 }] }, big: 9007199254740991, tiny: 5e-324 },
    ];

    it('round-trips every JSON value exactly', () =>
      withStore(async (store) => {
        await upsert(store, { spec, now: T0, initialCursor: T0 });
        for (const [index, data] of values.entries()) {
          const created = await store.createRun({ run: { id: `a.manual.${index}`, jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0, data }, now: T0 });
          expect(created.outcome).toBe('created');
          if (created.outcome === 'missing-job') return;
          expect(created.run.data).toStrictEqual(data);
          expect((await store.getRun(`a.manual.${index}`))?.data).toStrictEqual(data);
        }
        const without = await store.createRun({ run: { id: 'a.manual.none', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        expect(without.outcome === 'created' && 'data' in without.run).toBe(false);
      }));

    it('round-trips the job spec, large instants and backfill ranges', () =>
      withStore(async (store) => {
        const full = {
          ...spec,
          name: 'every.job-1_x',
          schedule: { kind: 'every', everyMs: 1_500, anchor: 8_640_000_000_000_000 },
          startingDeadlineMs: 600_000,
          history: { succeeded: 0, failed: 100 },
        } as const;
        const { job } = await upsert(store, { spec: full, now: T0 + 0.5, initialCursor: -8_640_000_000_000_000 });
        expect(job).toMatchObject({ ...full, createdAt: T0 + 0.5, cursor: -8_640_000_000_000_000 });
        const range = { id: 'range with spaces', next: 8_640_000_000_000_000, to: 8_640_000_000_000_000 };
        expect((await store.addBackfill({ jobName: full.name, range }))?.backfills).toEqual([range]);
        expect(await store.getJob(full.name)).toEqual({ ...job, backfills: [range] });
      }));
  });

  describe('identity', () => {
    /** The store's identity reads: IDENTITY script calls on `client`. */
    function countReads(client: Redis): () => number {
      const evalsha = client.evalsha.bind(client) as (...args: unknown[]) => Promise<unknown>;
      let reads = 0;
      vi.spyOn(client, 'evalsha').mockImplementation(((...args: unknown[]) => {
        // The IDENTITY script is the only one whose single key is the global tag and single argument a UUID.
        if (args[1] === 1 && typeof args[2] === 'string' && !args[2].includes('/') && /^[0-9a-f-]{36}$/.test(String(args[3]))) reads += 1;
        return evalsha(...args);
      }) as never);
      return () => reads;
    }

    /** Waits until tracking is set up (it comes with the pub/sub connection): of two answers in a row, one is read. */
    async function untilTracked(store: RedisStore, reads: () => number): Promise<void> {
      await vi.waitFor(async () => {
        const before = reads();
        await store.identity();
        await store.identity();
        expect(reads() - before).toBe(1);
      }, { timeout: 5_000, interval: 50 });
    }

    it('is answered from memory while the server tracks it, and read again once it is deleted', async () => {
      const client = new Redis(REDIS_URL);
      const prefix = uniqueNamespace('tw');
      const store = new RedisStore({ client, prefix });
      const reads = countReads(client);
      const unwatch = store.watch(() => {});
      try {
        await store.init();
        await untilTracked(store, reads);
        // A scheduler that starts watching the identity once tracking is on is told at once that its changes are pushed.
        const told: boolean[] = [];
        store.watchIdentity((pushed) => told.push(pushed))();
        expect(told).toEqual([true]);
        const identity = await store.identity();
        const before = reads();
        // Every third answer is read anyway (a pub/sub connection may die without closing); the others come from memory.
        for (let i = 0; i < 9; i += 1) expect(await store.identity()).toBe(identity);
        expect(reads()).toBe(before + 3);
        // The data is lost (the key goes as a flush or a restart would take it): the server says so, and the next answer is new.
        await admin.del(`{${prefix}}:identity`);
        await vi.waitFor(async () => expect(await store.identity()).not.toBe(identity), { timeout: 5_000, interval: 20 });
        expect(reads()).toBeGreaterThan(before);
      } finally {
        unwatch();
        await store.close();
        await deleteRedisKeys(admin, prefix);
        await client.quit();
      }
    });

    it.skipIf(!required(redisServerAvailable(), 'redis-server'))('is read again at once after a FLUSHALL and after a restart of Redis (a throwaway server), and its watchers are told', async () => {
      const server = await throwawayRedis();
      await server.up();
      const client = new Redis(server.url);
      const store = new RedisStore({ client, prefix: uniqueNamespace('tw') });
      const reads = countReads(client);
      // What the scheduler is told (`watchIdentity`): check now, and whether the changes are pushed from then on.
      const told: boolean[] = [];
      const unwatchIdentity = store.watchIdentity((pushed) => told.push(pushed));
      const unwatch = store.watch(() => {});
      const flusher = new Redis(server.url);
      try {
        await store.init();
        await untilTracked(store, reads);
        // Tracking went on (and the first read, which made the key, wrote it): pushed from here on.
        expect(told.length).toBeGreaterThan(0);
        expect(told.every(Boolean)).toBe(true);
        const identity = await store.identity();
        const before = told.length;
        await flusher.flushall();
        await vi.waitFor(() => expect(told.length).toBeGreaterThan(before), { timeout: 5_000, interval: 20 });
        expect(told.every(Boolean)).toBe(true);
        // Seen within a few answers (from memory, up to 2 would go by before a read of its own).
        let answers = 0;
        await vi.waitFor(async () => {
          answers += 1;
          expect(await store.identity()).not.toBe(identity);
        }, { timeout: 5_000, interval: 20 });
        expect(answers).toBeLessThanOrEqual(3);
        await untilTracked(store, reads);
        const afterFlush = await store.identity();
        // Restarted empty: the tracking connection closed with it, so the first answer after it is read from the new server.
        told.length = 0;
        await server.down();
        // The tracking connection closed: check now, and no longer count on pushes.
        await vi.waitFor(() => expect(told[0]).toBe(false), { timeout: 5_000, interval: 20 });
        await server.up();
        expect(await store.identity()).not.toBe(afterFlush);
      } finally {
        unwatchIdentity();
        unwatch();
        flusher.disconnect();
        await store.close();
        client.disconnect();
        await server.dispose();
      }
    }, 30_000);

    it('is read every time without a pub/sub connection (no watcher), and every third time with one', async () => {
      const client = new Redis(REDIS_URL);
      const prefix = uniqueNamespace('tw');
      const store = new RedisStore({ client, prefix });
      const reads = countReads(client);
      try {
        await store.init();
        for (let i = 0; i < 5; i += 1) await store.identity();
        expect(reads()).toBe(5);
        const unwatch = store.watch(() => {});
        try {
          await untilTracked(store, reads);
          // Two answers from memory after each read (a pub/sub connection may die without closing: the scheduler asks
          // on its heartbeats while the changes are pushed, so every third heartbeat reads).
          const before = reads();
          for (let i = 0; i < 9; i += 1) await store.identity();
          expect(reads()).toBe(before + 3);
        } finally {
          unwatch();
        }
        // The pub/sub connection closed: read every time again.
        const before = reads();
        await store.identity();
        await store.identity();
        expect(reads()).toBe(before + 2);
      } finally {
        await store.close();
        await deleteRedisKeys(admin, prefix);
        await client.quit();
      }
    });
  });

  describe('notifications', () => {
    it('reach the watchers of another store instance on the same prefix', () =>
      withStore(async (store, prefix) => {
        const other = new RedisStore({ url: REDIS_URL, prefix });
        const seen: StoreNotification[] = [];
        const unwatch = other.watch((n) => seen.push(n));
        try {
          await vi.waitFor(async () => {
            await upsert(store, { spec, now: T0, initialCursor: T0 });
            expect(seen).toContainEqual({ type: 'job-changed', jobName: 'a' });
          }, { timeout: 5_000, interval: 50 });
          await store.createRun({ run: { id: 'a.manual.k', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 + 3 }, now: T0 + 3 });
          await vi.waitFor(() => expect(seen).toContainEqual({ type: 'run-ready', jobName: 'a', runId: 'a.manual.k', readyAt: T0 + 3 }));
        } finally {
          unwatch();
          await other.close();
        }
      }));
  });

  describe('upsertJobs', () => {
    /**
     * The EVAL / EVALSHA calls on `prefix` the server receives while `action` runs,
     * seen through MONITOR (filtered by KEYS[1], so suites running in parallel on
     * the same server do not count).
     */
    async function scriptCalls(prefix: string, action: () => Promise<void>): Promise<string[]> {
      // Not admin.monitor(): while other suites flood the server, ioredis can read monitor lines before it marks the
      // connection as monitoring, and emits them as errors before the caller could listen. Lines read then precede `action`.
      const monitor = admin.duplicate({ monitor: true });
      monitor.on('error', () => {});
      const calls: string[] = [];
      const sentinel = `{${prefix}}:sentinel`;
      let done = false;
      monitor.on('monitor', (_time: string, args: string[]) => {
        // args: command, sha (or script), numkeys, KEYS[1], ...
        const command = args[0]?.toLowerCase();
        const tag = args[3] ?? '';
        if ((command === 'evalsha' || command === 'eval') && (tag === `{${prefix}}` || tag.startsWith(`{${prefix}/`))) calls.push(command);
        if (command === 'get' && args[1] === sentinel) done = true;
      });
      try {
        await new Promise((resolve) => monitor.once('monitoring', resolve));
        await action();
        // MONITOR streams in the order the server ran the commands: once the sentinel shows, the script has too.
        await admin.get(sentinel);
        await vi.waitFor(() => expect(done).toBe(true), { timeout: 5_000 });
      } finally {
        monitor.disconnect();
      }
      return calls;
    }

    /** Varies the optional fields the script copies, so an update both adds and drops them. */
    function variant(name: string, i: number): JobSpec {
      const base = { ...spec, name };
      switch (i % 3) {
        case 0:
          return { ...base, pendingTimeoutMs: 1_000 + i };
        case 1:
          return { ...base, concurrencyPolicy: 'Forbid', fanOut: { completions: 3, parallelism: 2 }, retryLimit: i % 4 };
        default:
          return { ...base, history: { succeeded: 2, failed: 5, ttlMs: 60_000 + i }, startingDeadlineMs: i };
      }
    }

    it('upserts 500 new and existing jobs in one script call per partition, as 500 single upserts would', async () => {
      // 250 existing jobs, some suspended, some with backfills or a moved cursor.
      const seeds: UpsertJobInput[] = Array.from({ length: 250 }, (_, i) => ({
        spec: variant(`job.${i}`, i),
        now: T0 + i,
        initialCursor: T0,
        ...(i % 5 === 0 ? { suspended: true } : {}),
      }));
      const probe: UpsertJobInput = { spec: { ...spec, name: 'probe' }, now: T0, initialCursor: T0 };
      async function prepare(store: Store): Promise<void> {
        await store.upsertJobs([...seeds, probe]);
        for (let i = 0; i < 250; i += 7) await store.addBackfill({ jobName: `job.${i}`, range: { id: `b${i}`, next: T0, to: T0 + i } });
        for (let i = 1; i < 250; i += 11) await store.scheduleRun({ jobName: `job.${i}`, expectedCursor: T0, cursor: T0 + 60_000, now: T0 + 60_000 });
      }
      // Names 0..498 interleaved (new from 250 on), then an earlier new name again: in order, it is no longer new.
      const inputs: UpsertJobInput[] = Array.from({ length: 499 }, (_, k) => {
        const i = (k * 37) % 499;
        const suspended = [true, false, undefined][i % 4];
        return {
          spec: variant(`job.${i}`, i + 1),
          now: T0 + 120_000,
          initialCursor: T0 + i,
          ...(suspended === undefined ? {} : { suspended }),
        };
      });
      inputs.push({ spec: variant('job.400', 2), now: T0 + 180_000, initialCursor: 0, suspended: true });

      const singles: UpsertJobResult[] = [];
      let singleJobs: readonly unknown[] = [];
      await withStore(async (store) => {
        await prepare(store);
        for (const input of inputs) singles.push(await upsert(store, input));
        singleJobs = await store.listJobs();
      });

      await withStore(async (store, prefix) => {
        await prepare(store);
        const seen: string[] = [];
        let live = false;
        const unwatch = store.watch((n) => {
          if (n.type !== 'job-changed') return;
          if (n.jobName === 'probe') live = true;
          else seen.push(n.jobName);
        });
        try {
          // Upserting the probe again changes nothing, and shows the subscription is live.
          await vi.waitFor(async () => {
            await upsert(store, probe);
            expect(live).toBe(true);
          }, { timeout: 5_000, interval: 50 });
          let batch: readonly UpsertJobResult[] = [];
          const calls = await scriptCalls(prefix, async () => {
            batch = await store.upsertJobs(inputs);
          });
          const partitions = new Set(inputs.map((input) => partitionOf(input.spec.name, store.partitions)));
          expect(partitions.size).toBeGreaterThan(1);
          expect(calls).toEqual([...partitions].map(() => 'evalsha'));
          expect(batch).toEqual(singles);
          expect(batch.map((r) => r.job.name)).toEqual(inputs.map((input) => input.spec.name));
          expect(batch.filter((r) => r.created)).toHaveLength(249);
          expect(await store.listJobs()).toEqual(singleJobs);
          // In order within each partition (each partition's jobs are one script call).
          const byPartition = (names: readonly string[]): string[][] =>
            [...partitions].map((p) => names.filter((name) => partitionOf(name, store.partitions) === p));
          await vi.waitFor(() => expect(byPartition(seen)).toEqual(byPartition(inputs.map((input) => input.spec.name))), { timeout: 5_000 });
        } finally {
          unwatch();
        }
      });
    });

    it('splits a list longer than UPSERT_BATCH into calls of at most UPSERT_BATCH, in order; an empty list calls nothing', () =>
      withStore(async (store, prefix) => {
        const inputs = Array.from({ length: 2 * UPSERT_BATCH + 1 }, (_, i) => ({ spec: variant(`job.${i % 600}`, i), now: T0 + i, initialCursor: T0 }));
        let results: readonly UpsertJobResult[] = [];
        expect(await scriptCalls(prefix, async () => {
          results = await store.upsertJobs(inputs);
          expect(await store.upsertJobs([])).toEqual([]);
        })).toEqual(['evalsha', 'evalsha', 'evalsha']);
        expect(results.map((r) => [r.job.name, r.created, r.job.createdAt])).toEqual(
          inputs.map((input, i) => [input.spec.name, i < 600, T0 + (i % 600)]),
        );
        expect(await store.getJob('job.0')).toEqual(results[600]?.job);
      }, undefined, 1));
  });

  describe('findReadyRuns', () => {
    it('is not starved by ready runs of other jobs and orders ties by scheduledAt, then id', () =>
      withStore(async (store) => {
        for (const name of ['busy', 'a']) await upsert(store, { spec: { ...spec, name }, now: T0, initialCursor: T0 });
        for (let i = 0; i < 50; i += 1) {
          await store.createRun({ run: { id: `busy.manual.${i}`, jobName: 'busy', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        }
        for (const [id, scheduledAt] of [['a.manual.z', T0 + 1], ['a.manual.y', T0 + 2], ['a.manual.x', T0 + 1]] as const) {
          await store.createRun({ run: { id, jobName: 'a', scheduledAt, trigger: 'manual', readyAt: T0 + 10 }, now: T0 + 10 });
        }
        const found = await store.findReadyRuns({ jobNames: new Set(['a']), now: T0 + 10, limit: 2 });
        expect(found.runs.map((r) => r.id)).toEqual(['a.manual.x', 'a.manual.z']);
        const both = await store.findReadyRuns({ jobNames: new Set(['a', 'busy']), now: T0 + 10, limit: 3 });
        expect(both.runs.map((r) => r.id)).toEqual(['busy.manual.0', 'busy.manual.1', 'busy.manual.10']);
      }));
  });

  // The sorted sets break score ties with order keys of createdAt and scheduledAt: check them on awkward instants.
  describe('tie order', () => {
    const scheduledAts = [T0, -8_640_000_000_000_000, -0.5, 0, 0.25, T0 + 0.5, T0 - 1, 8_640_000_000_000_000, -1e-300, T0];

    async function both(test: (store: Store) => Promise<void>): Promise<void> {
      const memory = new MemoryStore();
      await test(memory);
      await withStore(async (store) => {
        await test(store);
        expect(await store.listRuns({ jobName: 'a' })).toEqual(await memory.listRuns({ jobName: 'a' }));
      });
    }

    it('hands out ready runs sharing a readyAt by scheduledAt, then ID, as MemoryStore does', async () => {
      const found: unknown[] = [];
      await both(async (store) => {
        await upsert(store, { spec, now: T0, initialCursor: T0 });
        for (const [i, scheduledAt] of scheduledAts.entries()) {
          await store.createRun({ run: { id: `a.manual.${(i * 7) % 10}`, jobName: 'a', scheduledAt, trigger: 'manual', readyAt: T0 }, now: T0 });
        }
        found.push((await store.findReadyRuns({ jobNames: new Set(['a']), now: T0, limit: 4 })).runs.map((r) => r.id));
        found.push((await store.findReadyRuns({ jobNames: new Set(['a']), now: T0, limit: 20 })).runs.map((r) => r.id));
      });
      expect(found.slice(2)).toEqual(found.slice(0, 2));
    });

    it('prunes runs finished at the same instant by createdAt, scheduledAt, then ID, as MemoryStore does', () =>
      both(async (store) => {
        await upsert(store, { spec: { ...spec, history: { succeeded: 3, failed: 2 } }, now: T0, initialCursor: T0 });
        for (const [i, scheduledAt] of scheduledAts.entries()) {
          const id = `a.manual.${(i * 3) % 10}`;
          await store.createRun({ run: { id, jobName: 'a', scheduledAt, trigger: 'manual', readyAt: T0 + (i % 3) }, now: T0 + (i % 3) });
          const claimed = await store.claimRun({ runId: id, owner: 'o', now: T0 + 5, leaseUntil: T0 + 60_000 });
          const outcome = i % 2 === 0 ? { status: 'succeeded' as const } : { status: 'failed' as const, error: { name: 'E', message: 'm' } };
          await store.finishAttempt({ runId: id, owner: 'o', fence: claimed?.run.fence ?? 0, now: T0 + 9, outcome });
        }
      }));
  });
});
