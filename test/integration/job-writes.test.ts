/**
 * A running scheduler writes a job when it is registered and deletes it when it is
 * removed, in the order the app asked, on every store: a pooled store (Postgres) may
 * run two calls in any order, so `register('z')` then `remove('z')` used to lose the
 * race 14 times in 20 there, and the job was written after its removal, getting a
 * run every tick for good. Each variant is repeated, with an every-second job, and
 * the store must hold exactly what the last call asked for.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Scheduler } from '../../src/index.js';
import type { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers, withFakeClockScheduler, type OpenedStore } from './every-store.js';

const ROUNDS = 20;

afterAll(closeServers);

/** A running scheduler with one other job, and the store to look into. */
function withScheduler(opened: OpenedStore, test: (scheduler: Scheduler, clock: FakeClock, store: OpenedStore['store']) => Promise<void>): Promise<void> {
  return withFakeClockScheduler(opened, async (scheduler, clock) => {
    scheduler.register({ name: 'other', schedule: '0 0 1 1 *', handler: () => {} });
    await scheduler.start();
    await test(scheduler, clock, opened.store);
  });
}

const every = (seconds: number) => ({ every: `${seconds}s` });

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`job writes in order, ${target.kind} store`, () => {
    it('register() then remove(): the job is gone for good, and remove() answers the same every time', async () => {
      await withScheduler(await target.open(), async (scheduler, clock, store) => {
        const answers: boolean[] = [];
        for (let round = 0; round < ROUNDS; round += 1) {
          scheduler.register({ name: 'z', schedule: every(1), handler: () => {} });
          answers.push(await scheduler.remove('z'));
          // And once the registration has been written: remove() deletes it.
          scheduler.register({ name: 'z', schedule: every(1), handler: () => {} });
          await clock.advance('1s');
          answers.push(await scheduler.remove('z'));
        }
        // Nothing was written for a registration removed at once; what was written, remove() found.
        expect(answers).toEqual(Array.from({ length: ROUNDS }, () => [false, true]).flat());
        await clock.advance('10s');
        expect(await store.getJob('z')).toBeUndefined();
        expect(await store.listRuns({ jobName: 'z' })).toEqual([]);
        expect((await scheduler.listJobs()).map((job) => job.name)).toEqual(['other']);
      });
    });

    it('remove() then register(), unregister(), and a changed definition: the last call wins', async () => {
      await withScheduler(await target.open(), async (scheduler, clock, store) => {
        const ran: string[] = [];
        for (let round = 0; round < ROUNDS; round += 1) {
          // remove() not awaited, then register(): the new registration is written after the removal.
          scheduler.register({ name: 'a', schedule: every(1), handler: () => {} });
          const removed = scheduler.remove('a');
          scheduler.register({ name: 'a', schedule: every(2), handler: ({ runId }) => void ran.push(runId) });
          await removed;
          // register() then unregister(): nothing is written; the job stays as the store had it.
          scheduler.register({ name: 'b', schedule: every(1), handler: () => {} });
          scheduler.unregister('b');
          // A definition changed right after it was registered: the changed one is what the store keeps.
          scheduler.register({ name: 'c', schedule: every(1), handler: () => {} });
          scheduler.unregister('c');
          scheduler.register({ name: 'c', schedule: every(3 + round), handler: () => {} });
          await clock.settle();
          expect((await store.getJob('a'))?.schedule, `round ${round}`).toEqual({ kind: 'every', everyMs: 2_000 });
          expect(await store.getJob('b'), `round ${round}`).toBeUndefined();
          expect((await store.getJob('c'))?.schedule, `round ${round}`).toEqual({ kind: 'every', everyMs: (3 + round) * 1_000 });
          if (round < ROUNDS - 1) {
            scheduler.unregister('a');
            scheduler.unregister('c');
          }
        }
        // `a` is registered and runs every 2 s; removing it stops that for good.
        await clock.advance('4s');
        expect(ran.length).toBeGreaterThanOrEqual(2);
        expect(await scheduler.remove('a')).toBe(true);
        expect(await scheduler.remove('c')).toBe(true);
        await clock.advance('10s');
        expect(await store.getJob('a')).toBeUndefined();
        expect(await store.listRuns({ jobName: 'a' })).toEqual([]);
        expect((await scheduler.listJobs()).map((job) => job.name)).toEqual(['other']);
      });
    });
  });
}
