/**
 * RedisStore's script-call batching on a real Redis: concurrent calls of one script
 * travel as one EVALSHA of its batch variant, each call gets exactly the reply a
 * lone call would (nil replies included), one failing call fails only its own
 * caller, and the batch's notifications all reach watchers, in order.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import { partitionTag } from '../../adapters/redis/key-layout.js';
import { partitionOf, type Store, type StoreNotification } from '../../src/store.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('redis');
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

async function addJobs(store: Store, names: readonly string[]): Promise<void> {
  await store.upsertJobs(
    names.map((name) => ({
      spec: { name, schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 2, failed: 2 } },
      now: T0,
      initialCursor: T0,
    })),
  );
}

const runId = (job: string, minute: number) => `${job}.${(T0 + minute * MINUTE) / 1000}`;

/** Creates, claims (three owners racing) and finishes one run per job for `minute`, and returns every result. */
async function tick(store: Store, jobs: readonly string[], minute: number, together: boolean): Promise<unknown[]> {
  const at = T0 + minute * MINUTE;
  const each = async <T>(calls: (() => Promise<T>)[]): Promise<T[]> => {
    if (together) return Promise.all(calls.map((call) => call()));
    const results: T[] = [];
    for (const call of calls) results.push(await call());
    return results;
  };
  const scheduled = await each(
    jobs.map((jobName) => () =>
      store.scheduleRun({ jobName, expectedCursor: at - MINUTE, cursor: at, now: at, run: { id: runId(jobName, minute), jobName, scheduledAt: at, trigger: 'schedule', readyAt: at } }),
    ),
  );
  const claims = await each(
    jobs.flatMap((jobName) => ['a', 'b', 'c'].map((owner) => () => store.claimRun({ runId: runId(jobName, minute), owner, now: at, leaseUntil: at + MINUTE }))),
  );
  const renewed = await each(
    claims.flatMap((claim) => (claim === undefined ? [] : [() => store.renewLease({ runId: claim.run.id, owner: claim.run.owner!, fence: claim.run.fence, now: at + 1, leaseUntil: at + 2 * MINUTE })])),
  );
  const finished = await each(
    claims.flatMap((claim, i) =>
      claim === undefined
        ? []
        : [
            () =>
              store.finishAttempt({
                runId: claim.run.id,
                owner: claim.run.owner!,
                fence: claim.run.fence,
                now: at + 2,
                outcome: i % 2 === 0 ? { status: 'succeeded' } : { status: 'failed', error: { name: 'Error', message: 'boom' } },
              }),
          ],
    ),
  );
  // A late finish by a loser: refused, in a batch as alone.
  const refused = await each(jobs.map((jobName) => () => store.finishAttempt({ runId: runId(jobName, minute), owner: 'nobody', fence: 1, now: at + 3, outcome: { status: 'succeeded' } })));
  const created = await each(jobs.map((jobName) => () => store.createRun({ now: at + 4, run: { id: `${jobName}.manual-${minute}`, jobName, scheduledAt: at + 4, trigger: 'manual', readyAt: at + 4 } })));
  return [scheduled, claims, renewed, finished, refused, created];
}

describe.skipIf(!up)('RedisStore call batching', () => {
  let admin: Redis;
  const prefixes: string[] = [];

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    for (const prefix of prefixes) await deleteRedisKeys(admin, prefix);
    await admin.quit();
  });

  /** A store on its own client, with every EVALSHA's script size and argument count recorded. */
  async function withStore(test: (store: RedisStore, evals: { sha: string; argc: number }[], prefix: string) => Promise<void>): Promise<void> {
    const prefix = uniqueNamespace('twb');
    prefixes.push(prefix);
    const client = new Redis(REDIS_URL);
    const evals: { sha: string; argc: number }[] = [];
    const evalsha = client.evalsha.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { evalsha: (...args: unknown[]) => Promise<unknown> }).evalsha = (...args: unknown[]) => {
      evals.push({ sha: String(args[0]), argc: args.length - 3 });
      return evalsha(...args);
    };
    const store = new RedisStore({ client, prefix });
    try {
      await store.init();
      await test(store, evals, prefix);
    } finally {
      await store.close();
      await client.quit();
    }
  }

  it('sends concurrent claims as one batch; exactly one owner wins, the others get nil', async () => {
    await withStore(async (store, evals) => {
      await addJobs(store, ['a']);
      const at = T0 + MINUTE;
      await store.scheduleRun({ jobName: 'a', expectedCursor: T0, cursor: at, now: at, run: { id: runId('a', 1), jobName: 'a', scheduledAt: at, trigger: 'schedule', readyAt: at } });
      evals.length = 0;
      const claims = await Promise.all(['x', 'y', 'z'].map((owner) => store.claimRun({ runId: runId('a', 1), owner, now: at, leaseUntil: at + MINUTE })));
      expect(evals).toHaveLength(1);
      expect(claims[0]?.run).toMatchObject({ status: 'running', owner: 'x', fence: 1 });
      expect(claims.slice(1)).toEqual([undefined, undefined]);
    });
  });

  it('gives every call of a batch the result a lone call gives', async () => {
    const jobs = ['j1', 'j2', 'j3', 'j4', 'j5'];
    const results: unknown[][] = [];
    for (const together of [false, true]) {
      await withStore(async (store, evals) => {
        await addJobs(store, jobs);
        evals.length = 0;
        const outcome: unknown[] = [];
        for (let minute = 1; minute <= 4; minute += 1) outcome.push(await tick(store, jobs, minute, together));
        outcome.push(await store.listRuns({ jobName: 'j3' }), await store.getJob('j3'));
        results.push(outcome);
        // Sequential calls go alone; concurrent ones mostly in batches.
        if (together) expect(evals.length).toBeLessThan(60);
        else expect(evals.length).toBeGreaterThan(4 * 5 * 7);
      });
    }
    expect(results[1]).toEqual(results[0]);
  });

  it('fails only the call whose script fails, keeping the rest of the batch', async () => {
    await withStore(async (store, evals, prefix) => {
      await addJobs(store, ['a']);
      const ids = ['a.1', 'a.2', 'a.3'];
      for (const id of ids) await store.createRun({ now: T0, run: { id, jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 } });
      // A run key of the wrong type: HGETALL fails inside the claim script.
      await admin.set(`${partitionTag(prefix, partitionOf('a', store.partitions), store.partitions)}:run:a.bad`, 'not a hash');
      evals.length = 0;
      const results = await Promise.allSettled(
        ['a.1', 'a.bad', 'a.2', 'a.missing', 'a.3'].map((id) => store.claimRun({ runId: id, owner: 'x', now: T0, leaseUntil: T0 + MINUTE })),
      );
      expect(evals).toHaveLength(1);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      expect(String((results[1] as PromiseRejectedResult).reason)).toContain('WRONGTYPE');
      const claimed = results.map((r) => (r.status === 'fulfilled' ? r.value?.run.id : 'error'));
      expect(claimed).toEqual(['a.1', 'error', 'a.2', undefined, 'a.3']);
      for (const id of ids) expect((await store.getRun(id))?.status).toBe('running');
    });
  });

  it('delivers every notification of a batch to watchers, in order', async () => {
    await withStore(async (store, evals, prefix) => {
      await addJobs(store, ['a']);
      const ids = Array.from({ length: 10 }, (_, i) => `a.m${i}`);
      const seen: StoreNotification[] = [];
      let allSeen!: () => void;
      const delivered = new Promise<void>((resolve) => (allSeen = resolve));
      const unwatch = store.watch((notification) => {
        seen.push(notification);
        if (seen.length === ids.length) allSeen();
      });
      try {
        // A notification published before the subscription is active is lost: wait until Redis
        // counts the store's subscriber (a round trip each, no timers).
        const channel = `{${prefix}}:events`;
        for (let i = 0; i < 10_000; i += 1) {
          const [, subscribers] = (await admin.pubsub('NUMSUB', channel)) as [string, number];
          if (Number(subscribers) > 0) break;
        }
        evals.length = 0;
        await Promise.all(ids.map((id) => store.createRun({ now: T0, run: { id, jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 } })));
        expect(evals.length).toBeLessThanOrEqual(3);
        await delivered; // published after the subscription: each one arrives (the test's timeout bounds it)
        expect(seen).toEqual(ids.map((id) => ({ type: 'run-ready', jobName: 'a', runId: id, readyAt: T0 })));
      } finally {
        unwatch();
      }
    });
  });
});
