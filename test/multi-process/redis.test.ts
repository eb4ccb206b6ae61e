/**
 * SPEC §6 with real processes against a real Redis: three schedulers share one
 * prefix; one is SIGKILLed mid-handler and restarted; then Redis stops answering
 * for 5 s (`CLIENT PAUSE 5000 ALL`).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from '../integration/servers.js';
import { sleep } from './harness.js';
import { fanOutScenario, killScenario, outageScenario } from './scenario.js';
import { shareScenario } from './share-scenario.js';

const up = await requireServer('redis');

describe.skipIf(!up)('multi-process: Redis', () => {
  let admin: Redis;
  const prefixes: string[] = [];

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await admin.client('UNPAUSE').catch(() => undefined);
    for (const prefix of prefixes) await deleteRedisKeys(admin, prefix);
    await admin.quit();
  });

  it('three processes, one SIGKILLed mid-handler: at most and at least once per tick, no overlap, recovery', async () => {
    const prefix = uniqueNamespace('twmp');
    prefixes.push(prefix);
    await killScenario('redis', { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, leaseMs: 2000, partitions: 8 });
  });

  it('three processes, the planner SIGKILLed mid-handler: planner failover, recovery, nothing twice, missed ticks reported', async () => {
    const prefix = uniqueNamespace('twmp');
    prefixes.push(prefix);
    await killScenario('redis-planner', { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, leaseMs: 2000, partitions: 1 }, { killPlanner: true });
  });

  it('8 partitions over three processes: each plans its share; one SIGKILLed, its partitions taken over within leaseMs, nothing missed or twice', async () => {
    const prefix = uniqueNamespace('twmp');
    prefixes.push(prefix);
    await shareScenario('redis-share', { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, leaseMs: 2000, partitions: 8 });
  });

  it('a fan-out run (12 indices, 4 at once) over three processes, one SIGKILLed mid-index: every index once, the killed one retried', async () => {
    const prefix = uniqueNamespace('twmp');
    prefixes.push(prefix);
    await fanOutScenario('redis-fan-out', { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, leaseMs: 2000, partitions: 8 });
  });

  /** `CLIENT PAUSE 5000 ALL` through the test's own connection: every other client's commands wait 5 s. */
  const pause = async (): Promise<{ from: number; to: number }> => {
    const from = Date.now();
    await admin.call('CLIENT', 'PAUSE', '5000', 'ALL');
    await sleep(5_000);
    await admin.ping(); // the pause ends by itself; a PING through our own connection confirms it
    return { from, to: Date.now() };
  };

  it('Redis unresponsive for 5 s (CLIENT PAUSE ALL), default clients: commands wait, no crash, nothing twice, Allow ticks coalesced, resumes', async () => {
    const prefix = uniqueNamespace('twmp');
    prefixes.push(prefix);
    await outageScenario('redis-pause', { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, leaseMs: 2000, partitions: 8 }, {
      description: 'CLIENT PAUSE 5000 ALL, ioredis defaults',
      // A paused Redis delays commands instead of failing them, and ioredis (no commandTimeout) waits: no `error` events.
      expectErrors: false,
      run: pause,
    });
  });

  it('Redis unresponsive for 5 s (CLIENT PAUSE ALL), clients with a 1 s commandTimeout: errors reported, no crash, nothing twice, resumes', async () => {
    const prefix = uniqueNamespace('twmp');
    prefixes.push(prefix);
    await outageScenario(
      'redis-pause-timeout',
      { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, redisCommandTimeoutMs: 1000, leaseMs: 2000, partitions: 8 },
      { description: 'CLIENT PAUSE 5000 ALL, commandTimeout 1000 ms', expectErrors: true, run: pause },
    );
  });
});
