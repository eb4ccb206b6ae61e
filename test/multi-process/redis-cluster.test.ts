/**
 * SPEC §6.1–6.4 with real processes against a local 3-master Redis Cluster (started
 * by `test/integration/redis-cluster.ts`): the same three-process SIGKILL scenario
 * as redis.test.ts, each worker on its own `ioredis.Cluster` client.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { clusterBinariesAvailable, startCluster, type LocalCluster } from '../integration/redis-cluster.js';
import { uniqueNamespace } from '../integration/servers.js';
import { killScenario } from './scenario.js';

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

  it('three processes, one SIGKILLed mid-handler: at most and at least once per tick, no overlap, recovery', async () => {
    if (cluster === undefined) throw new Error('the local cluster did not start');
    await killScenario('redis-cluster', {
      store: 'redis-cluster',
      namespace: uniqueNamespace('twmp'),
      clusterNodes: cluster.nodes.map((node) => ({ host: node.host, port: node.port })),
      leaseMs: 2000,
      // One partition, so a (started first) plans and the kill of b tests run recovery alone: with
      // several, whether b holds one yet at the kill depends on how fast the leases are shared out.
      partitions: 1,
    });
  });

  it('three processes, the planner SIGKILLed mid-handler: planner failover, recovery, nothing twice, missed ticks reported', async () => {
    if (cluster === undefined) throw new Error('the local cluster did not start');
    await killScenario(
      'redis-cluster-planner',
      {
        store: 'redis-cluster',
        namespace: uniqueNamespace('twmp'),
        clusterNodes: cluster.nodes.map((node) => ({ host: node.host, port: node.port })),
        leaseMs: 2000,
        partitions: 1,
      },
      { killPlanner: true },
    );
  });
});
