/**
 * A store that loses its data under a running scheduler (a Redis restarted empty,
 * a Postgres schema dropped) used to stop all scheduling for good, silently: the
 * jobs were gone and nothing wrote them again. Now the scheduler sees the store's
 * identity change at its next heartbeat, writes its jobs again, reports
 * `STORE_RESET` on `error`, and the jobs run again. (The multi-process suite
 * proves it with real processes and servers: test/multi-process/store-reset.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Scheduler, type TickworkError } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers } from './every-store.js';

afterAll(closeServers);

for (const target of EVERY_STORE.filter((store) => store.kind !== 'memory')) {
  describe.skipIf(!target.up)(`a store that loses its data, ${target.kind}`, () => {
    // With a short lease the heartbeat (every leaseMs / 3) notices; with the default (30 s), a check every 2 s of its own.
    it.each([3_000, 30_000])('is noticed within 2 s (leaseMs %i): the jobs are written again, STORE_RESET is reported, runs resume', async (leaseMs) => {
      const opened = await target.open();
      const clock = new FakeClock('2026-01-01T00:00:00Z');
      const scheduler = new Scheduler({ store: opened.store, clock, leaseMs, logger: false });
      const errors: TickworkError[] = [];
      scheduler.on('error', (error) => errors.push(error as TickworkError));
      const ran: number[] = [];
      try {
        scheduler.register({ name: 'beat', schedule: { every: '1s' }, history: { succeeded: 1 }, handler: ({ scheduledAt }) => void ran.push(scheduledAt.getTime()) });
        scheduler.register({ name: 'nightly', schedule: '0 2 * * *', handler: () => {} });
        await scheduler.start();
        await clock.advance('3s');
        expect(ran).toHaveLength(3);
        await opened.wipe?.();
        // A store that pushes its identity's changes (Redis under client tracking) does so on its pub/sub connection, in
        // order with the notifications: checked at once when the push comes, which the flush waits for.
        await opened.store.flushNotifications?.();
        const lostAt = clock.now();
        await clock.advance('2s');
        const resets = errors.filter((error) => error.code === 'STORE_RESET');
        expect(resets).toHaveLength(1);
        expect(resets[0]?.message).toMatch(/lost its data .* writing this instance's 2 jobs again/);
        expect((await scheduler.listJobs()).map((job) => job.name).sort()).toEqual(['beat', 'nightly']);
        await clock.advance('3s');
        const after = ran.filter((tick) => tick > lostAt);
        expect(after.length).toBeGreaterThanOrEqual(3);
        expect(new Set(ran).size).toBe(ran.length); // no tick ran twice
        // Once written again, the store is the one it knows: nothing more is reported.
        await clock.advance('30s');
        expect(errors.filter((error) => error.code === 'STORE_RESET')).toHaveLength(1);
      } finally {
        const stopping = scheduler.stop();
        await clock.advance('1m');
        await stopping;
        await opened.dispose();
      }
    });
  });
}

const redis = EVERY_STORE.find((store) => store.kind === 'redis');
describe.skipIf(redis === undefined || !redis.up)('a Redis store under client tracking, leaseMs 30 s', () => {
  it('is not checked between heartbeats, and a loss is noticed when the server says so, without the clock moving', async () => {
    const opened = await (redis as NonNullable<typeof redis>).open();
    const store = opened.store as Required<typeof opened.store>;
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const scheduler = new Scheduler({ store, clock, logger: false });
    const resets: TickworkError[] = [];
    scheduler.on('error', (error) => void ((error as TickworkError).code === 'STORE_RESET' && resets.push(error as TickworkError)));
    const identity = store.identity.bind(store);
    let checks = 0;
    store.identity = () => ((checks += 1), identity());
    try {
      scheduler.register({ name: 'nightly', schedule: '0 2 * * *', handler: () => {} });
      await scheduler.start();
      // Tracking is set up before the subscription the flush waits for.
      await store.flushNotifications();
      await clock.advance('10s');
      checks = 0;
      await clock.advance('1m');
      expect(checks).toBe(6); // one per heartbeat; every 2 s between them (36) before
      await opened.wipe?.();
      await store.flushNotifications(); // the server's invalidation came before the flush's marker
      await clock.settle();
      expect(resets).toHaveLength(1);
      expect((await scheduler.listJobs()).map((job) => job.name)).toEqual(['nightly']);
    } finally {
      const stopping = scheduler.stop();
      await clock.advance('1m');
      await stopping;
      await opened.dispose();
    }
  });
});
