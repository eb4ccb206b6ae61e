/**
 * What an idle heartbeat costs on Redis (12 partitions, one instance that plans them
 * all): which scripts it calls, and in how many round trips. The figures behind it
 * (client and server CPU per beat) are in the commit messages; this keeps the shape.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import { LOCK_LIST, LOCK_RENEW_ALL, LOCK_RENEW_LIST } from '../../adapters/redis/lock-scripts.js';
import { SWEEP_RUNS } from '../../adapters/redis/run-scripts.js';
import { FIND_READY_JOBS, FIND_READY_RUNS } from '../../adapters/redis/scripts.js';
import { Scheduler } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('redis');
const sha = (lua: string): string => createHash('sha1').update(lua).digest('hex');
const NAMES = new Map(
  Object.entries({ LOCK_RENEW_ALL, LOCK_LIST, LOCK_RENEW_LIST, SWEEP_RUNS, FIND_READY_RUNS, FIND_READY_JOBS }).map(([name, lua]) => [sha(lua), name]),
);

describe.skipIf(!up)('an idle heartbeat on Redis', () => {
  const client = new Redis(REDIS_URL);
  afterAll(() => client.quit());

  /**
   * The script calls of `beats` idle heartbeats, by name, and how many round trips they took (calls sent before a
   * reply came). Not counted: the fake clock's flushes of notifications, and the identity checks between heartbeats.
   */
  async function idleBeats(jobs: number, beats: number): Promise<{ calls: Record<string, number>; roundTrips: number }> {
    const prefix = uniqueNamespace('tw');
    const store = new RedisStore({ client, prefix });
    const clock = new FakeClock('2026-03-01T00:00:00Z');
    const scheduler = new Scheduler({ store, clock, logger: false });
    const errors: Error[] = [];
    scheduler.on('error', (error) => errors.push(error));
    const evalsha = client.evalsha;
    try {
      for (let i = 0; i < jobs; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
      await scheduler.start();
      await clock.advance('1m');
      const calls: Record<string, number> = {};
      let roundTrips = 0;
      let replied = true;
      client.evalsha = ((...args: Parameters<typeof evalsha>) => {
        const name = NAMES.get(String(args[0]));
        if (name === undefined) return evalsha.apply(client, args);
        calls[name] = (calls[name] ?? 0) + 1;
        if (replied) roundTrips += 1;
        replied = false;
        return (evalsha.apply(client, args) as Promise<unknown>).finally(() => (replied = true));
      }) as typeof evalsha;
      await clock.advance(`${beats * 10}s`); // leaseMs 30 s: a heartbeat every 10 s
      expect(errors).toEqual([]);
      return { calls, roundTrips };
    } finally {
      client.evalsha = evalsha;
      await scheduler.stop();
      await store.close();
      await deleteRedisKeys(client, prefix);
    }
  }

  it.each([100, 2_000])('with %i jobs: the leases renewed and listed in one script, then the sweeps and the look for ready runs together', async (jobs) => {
    const { calls, roundTrips } = await idleBeats(jobs, 6);
    const ready = jobs > 1_000 ? 'FIND_READY_JOBS' : 'FIND_READY_RUNS';
    expect(calls).toEqual({ LOCK_RENEW_LIST: 6, SWEEP_RUNS: 6, [ready]: 6 });
    expect(roundTrips).toBe(12);
  }, 30_000);
});
