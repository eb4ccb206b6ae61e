/**
 * RedisStore on a real Redis Cluster (three local masters started by the test):
 * proves that every script touches keys of one slot only, that EVALSHA routing and
 * pub/sub work through `ioredis.Cluster`, and that the store leaves the user's
 * cluster client open.
 */
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../src/store.js';
import { storeConformance } from '../../src/testing/conformance/index.js';
import { clusterBinariesAvailable, startCluster, type LocalCluster } from './redis-cluster.js';
import { uniqueNamespace } from './servers.js';

const available = clusterBinariesAvailable();
if (!available) {
  const message = 'redis-server / redis-cli are not installed, so no local Redis Cluster can be started';
  if (process.env.CI) throw new Error(`${message}; CI requires them`);
  console.warn(`[tickwork] SKIPPING Redis Cluster integration tests: ${message}`);
}

async function deleteKeys(node: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 500);
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

  it('keeps every key of a store in one slot, on one shard', async () => {
    const prefix = uniqueNamespace('twc');
    const store = new RedisStore({ client, prefix });
    await store.init();
    try {
      const T0 = Date.UTC(2026, 0, 1);
      const spec = { name: 'a', schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 3, failed: 1 } } as const;
      const upserted = await store.upsertJobs([{ spec, now: T0, initialCursor: T0 }, { spec: { ...spec, name: 'b' }, now: T0, initialCursor: T0 }]);
      expect(upserted.map((r) => [r.job.name, r.created])).toEqual([['a', true], ['b', true]]);
      await store.addBackfill({ jobName: 'a', range: { id: 'b', next: T0, to: T0 } });
      await store.createRun({ run: { id: 'a.manual.1', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
      await store.lock().acquire({ name: 'planner', owner: 'p', now: T0, leaseUntil: T0 + 1_000 });
      const keysPerNode = await Promise.all(
        client.nodes('master').map(async (node) => (await node.keys(`{${prefix}}*`)).length),
      );
      expect(keysPerNode.filter((n) => n > 0)).toHaveLength(1);
      expect(keysPerNode.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(8);
      await store.close();
      expect(client.status).toBe('ready');
    } finally {
      await store.close();
      await Promise.all(client.nodes('master').map((node) => deleteKeys(node, prefix)));
    }
  });
});
