/**
 * SPEC §6.1–6.4 with real processes against a local 3-master Redis Cluster (started
 * by `test/integration/redis-cluster.ts`), each worker on its own `ioredis.Cluster`
 * client, the store's default partition count (12: 4 partitions' hash tags per
 * master): the three-process SIGKILL scenarios of redis.test.ts (b killed once it
 * plans its share; b the first planner), and the share scenario (partitions shared
 * out, a SIGKILLed instance's taken over within leaseMs).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DEFAULT_PARTITIONS } from '../../src/partition-option.js';
import { clusterBinariesAvailable, startCluster, type LocalCluster } from '../integration/redis-cluster.js';
import { uniqueNamespace } from '../integration/servers.js';
import type { WorkerConfig } from './harness.js';
import { killScenario } from './scenario.js';
import { shareScenario } from './share-scenario.js';

const available = clusterBinariesAvailable();
if (!available) {
  const message = 'redis-server / redis-cli are not installed, so no local Redis Cluster can be started';
  if (process.env.CI) throw new Error(`${message}; CI requires them`);
  console.warn(`[tickwork] SKIPPING Redis Cluster multi-process tests: ${message}`);
}

describe.skipIf(!available)('multi-process: Redis Cluster', () => {
  let cluster: LocalCluster | undefined;

  beforeAll(async () => {
    cluster = await startCluster();
  });

  afterAll(async () => {
    // The cluster is private to this file and has no persistence: stopping it removes every key.
    await cluster?.stop();
  });

  /** A worker configuration on the cluster, in a namespace of its own, with the store's default partitions. */
  function onCluster(): WorkerConfig & { partitions: number } {
    if (cluster === undefined) throw new Error('the local cluster did not start');
    return {
      store: 'redis-cluster',
      namespace: uniqueNamespace('twmp'),
      clusterNodes: cluster.nodes.map((node) => ({ host: node.host, port: node.port })),
      leaseMs: 2000,
      partitions: DEFAULT_PARTITIONS,
    };
  }

  it('three processes, one SIGKILLed mid-handler: at most and at least once per tick, no overlap, recovery, its partitions taken over', async () => {
    await killScenario('redis-cluster', onCluster());
  });

  it('three processes, the first planner SIGKILLed mid-handler: planner failover, recovery, nothing twice, missed ticks reported', async () => {
    await killScenario('redis-cluster-planner', onCluster(), { killPlanner: true });
  });

  it('12 partitions over three processes: each plans its share; one SIGKILLed, its partitions taken over within leaseMs, nothing missed or twice', async () => {
    await shareScenario('redis-cluster-share', onCluster());
  });
});
