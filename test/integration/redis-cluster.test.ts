/**
 * RedisStore on a real Redis Cluster (three local masters started by the test):
 * proves that every script touches keys of one slot only, that EVALSHA routing and
 * pub/sub work through `ioredis.Cluster`, that the partitions spread over the
 * masters (and a burst's commands with them), and that the store leaves the user's
 * cluster client open.
 */
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import { partitionTag, slotOf } from '../../adapters/redis/key-layout.js';
import { Scheduler } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import type { Store } from '../../src/store.js';
import { storeConformance } from '../../src/testing/conformance/index.js';
import { clusterBinariesAvailable, startCluster, type LocalCluster } from './redis-cluster.js';
import { checkMigration } from './redis-migration.js';
import { redisKeyPattern, uniqueNamespace } from './servers.js';

const available = clusterBinariesAvailable();
if (!available) {
  const message = 'redis-server / redis-cli are not installed, so no local Redis Cluster can be started';
  if (process.env.CI) throw new Error(`${message}; CI requires them`);
  console.warn(`[tickwork] SKIPPING Redis Cluster integration tests: ${message}`);
}

async function deleteKeys(node: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', redisKeyPattern(prefix), 'COUNT', 500);
    cursor = next;
    // One DEL per key: a node refuses a multi-key DEL only across slots, but stay simple and safe.
    for (const key of keys) await node.del(key);
  } while (cursor !== '0');
}

describe.skipIf(!available)('RedisStore on Redis Cluster', () => {
  let cluster: LocalCluster | undefined;
  let client: Cluster;
  const prefixes = new WeakMap<Store, string>();

  beforeAll(async () => {
    cluster = await startCluster();
    client = new Cluster(cluster.nodes.map((node) => ({ ...node })));
    await client.ping();
  });

  afterAll(async () => {
    await client?.quit().catch(() => client.disconnect());
    await cluster?.stop();
  });

  storeConformance('RedisStore (cluster)', {
    describe,
    it,
    expect,
    createStore: () => {
      const prefix = uniqueNamespace('twc');
      const store = new RedisStore({ client, prefix });
      prefixes.set(store, prefix);
      return store;
    },
    destroyStore: async (store) => {
      const prefix = prefixes.get(store);
      await store.close();
      if (prefix !== undefined) await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    },
  });

  const spec = { name: 'a', schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 3, failed: 1 } } as const;
  const T0 = Date.UTC(2026, 0, 1);

  /** How many keys of `prefix` each master holds. */
  function keysPerNode(prefix: string, pattern = redisKeyPattern(prefix)): Promise<number[]> {
    return Promise.all(client.nodes('master').map(async (node) => (await node.keys(pattern)).length));
  }

  it('keeps every key of a store of one partition in one slot, on one shard (the single-tag layout)', async () => {
    const prefix = uniqueNamespace('twc');
    const store = new RedisStore({ client, prefix, partitions: 1 });
    await store.init();
    try {
      const upserted = await store.upsertJobs([{ spec, now: T0, initialCursor: T0 }, { spec: { ...spec, name: 'b' }, now: T0, initialCursor: T0 }]);
      expect(upserted.map((r) => [r.job.name, r.created])).toEqual([['a', true], ['b', true]]);
      await store.addBackfill({ jobName: 'a', range: { id: 'b', next: T0, to: T0 } });
      await store.createRun({ run: { id: 'a.manual.1', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
      await store.lock().acquire({ name: 'planner', owner: 'p', now: T0, leaseUntil: T0 + 1_000 });
      const perNode = await keysPerNode(prefix);
      expect(perNode.filter((n) => n > 0)).toHaveLength(1);
      expect(perNode.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(8);
      expect(await keysPerNode(prefix, `{${prefix}}*`)).toEqual(perNode);
      await store.close();
      expect(client.status).toBe('ready');
    } finally {
      await store.close();
      await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    }
  });

  it('spreads the 12 partitions of a store over the 3 masters, 4 each; the store-wide keys stay under {prefix}', async () => {
    const prefix = uniqueNamespace('twc');
    const store = new RedisStore({ client, prefix });
    await store.init();
    try {
      expect(store.partitions).toBe(12);
      const tags = Array.from({ length: 12 }, (_, p) => partitionTag(prefix, p, 12));
      // The slot the store computes is the cluster's own.
      for (const tag of tags) expect(await client.cluster('KEYSLOT', tag)).toBe(slotOf(tag.slice(1, -1)));
      const masterOf = (tag: string): string => (client.slots[slotOf(tag.slice(1, -1))] as string[])[0] as string;
      const shares = new Map<string, number>();
      for (const tag of tags) shares.set(masterOf(tag), (shares.get(masterOf(tag)) ?? 0) + 1);
      expect([...shares.values()]).toEqual([4, 4, 4]);

      const names = Array.from({ length: 60 }, (_, i) => `job-${i}`);
      await store.upsertJobs(names.map((name) => ({ spec: { ...spec, name }, now: T0, initialCursor: T0 })));
      for (const name of names) {
        await store.createRun({ run: { id: `${name}.manual.1`, jobName: name, scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
      }
      await store.lock().acquire({ name: 'planner:0/12', owner: 'p', now: T0, leaseUntil: T0 + 1_000 });
      expect((await keysPerNode(prefix)).every((n) => n >= 20)).toBe(true);
      // Under {prefix}: the layout version and partition count, and the lock.
      expect((await keysPerNode(prefix, `{${prefix}}*`)).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5);
      expect((await store.listJobs()).map((job) => job.name)).toEqual([...names].sort());
    } finally {
      await store.close();
      await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    }
  });

  it('moves a prefix of the single-tag layout to the 12 partitions across the masters, and finishes a migration cut short', async () => {
    const prefixes = [uniqueNamespace('twc'), uniqueNamespace('twc'), uniqueNamespace('twc'), uniqueNamespace('twc')];
    try {
      await checkMigration(client, prefixes[0] as string, prefixes[1] as string);
      await checkMigration(client, prefixes[2] as string, prefixes[3] as string, 6);
    } finally {
      for (const prefix of prefixes) await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    }
  }, 60_000);

  /** Calls of `command` on every master so far (INFO commandstats). */
  async function callsOf(command: string): Promise<number> {
    const calls = await Promise.all(client.nodes('master').map(async (node) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(await node.info('commandstats'))?.[1] ?? 0)));
    return calls.reduce((a, b) => a + b, 0);
  }

  it('reads the records of a page of jobs only: the partitions\' names first, then the records of the first `limit`', async () => {
    const prefix = uniqueNamespace('twc');
    const store = new RedisStore({ client, prefix });
    await store.init();
    try {
      const names = Array.from({ length: 120 }, (_, i) => `page-${String(i).padStart(3, '0')}`);
      await store.upsertJobs(names.map((name) => ({ spec: { ...spec, name }, now: T0, initialCursor: T0 })));
      const before = await callsOf('hgetall');
      const first = await store.listJobs({ limit: 7 });
      const second = await store.listJobs({ after: first.at(-1)?.name as string, limit: 7 });
      // One HGETALL per job returned (each of the 12 partitions reading its own first 7 would be 60 or more).
      expect(await callsOf('hgetall')).toBe(before + 14);
      expect([...first, ...second].map((job) => job.name)).toEqual(names.slice(0, 14));
      const last = await store.listJobs({ after: names[115] as string, limit: 7 });
      expect(last.map((job) => job.name)).toEqual(names.slice(116));
      expect(await store.listJobs({ after: names[119] as string, limit: 7 })).toEqual([]);
    } finally {
      await store.close();
      await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    }
  });

  /** Every command each master has run so far (INFO commandstats, summed). */
  async function commandsPerNode(): Promise<number[]> {
    return Promise.all(
      client.nodes('master').map(async (node) => {
        const info = await node.info('commandstats');
        return [...info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
      }),
    );
  }

  it('shares a burst out over the masters: the busiest runs at most twice the commands of the quietest', async () => {
    const prefix = uniqueNamespace('twc');
    const store = new RedisStore({ client, prefix });
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const scheduler = new Scheduler({ store, clock, logger: false });
    const errors: Error[] = [];
    scheduler.on('error', (error) => errors.push(error));
    const JOBS = 600;
    let ran = 0;
    try {
      for (let i = 0; i < JOBS; i += 1) scheduler.register({ name: `burst-${i}`, schedule: '* * * * *', history: { succeeded: 1 }, handler: () => void (ran += 1) });
      await scheduler.start();
      const before = await commandsPerNode();
      // The top of the minute: every job's run is due at once.
      await clock.advance('1m');
      await vi.waitFor(() => expect(ran).toBe(JOBS), { timeout: 30_000, interval: 100 });
      const after = await commandsPerNode();
      // Each node also ran the one INFO of `before`.
      const perNode = after.map((n, i) => n - (before[i] as number) - 1);
      if (process.env.TICKWORK_PRINT_COMMANDSTATS) console.info(`commands per master during a burst of ${JOBS} runs: ${perNode.join(', ')}`);
      expect(Math.min(...perNode)).toBeGreaterThan(0);
      expect(Math.max(...perNode), `commands per master: ${perNode.join(', ')}`).toBeLessThanOrEqual(2 * Math.min(...perNode));
      expect(errors).toEqual([]);
    } finally {
      const stopping = scheduler.stop();
      await clock.advance('1m');
      await stopping;
      await store.close();
      await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    }
  }, 60_000);
});
