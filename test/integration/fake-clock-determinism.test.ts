/**
 * "Same inputs, same results, every time", on every store: `await clock.advance(d)`
 * returns once what the calls before it set off has happened, whatever the latency
 * of the store's pub/sub. On Postgres about 1 in 60 `trigger()` + `advance('1s')`
 * (on Redis about 1 in 10) did not start the run: the run's notification, which is
 * what the executor claims on, could arrive after `advance()` had returned. Each
 * sequence is repeated 300 times, enough to catch 1 in 60 with certainty.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { EVERY_STORE, closeServers, withFakeClockScheduler } from './every-store.js';

const REPEATS = 300;

afterAll(closeServers);

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`FakeClock determinism, ${target.kind} store`, () => {
    it(`trigger() then advance('1s') has run the handler, ${REPEATS} times in a row`, async () => {
      await withFakeClockScheduler(await target.open(), async (scheduler, clock) => {
        const ran: string[] = [];
        scheduler.register({ name: 'm', schedule: '0 0 1 1 *', history: { succeeded: 1 }, handler: ({ runId }) => void ran.push(runId) });
        await scheduler.start();
        const missed: number[] = [];
        for (let i = 0; i < REPEATS; i += 1) {
          const run = await scheduler.trigger('m', { idempotencyKey: `k${i}` });
          await clock.advance('1s');
          if (ran.at(-1) !== run.id || ran.length !== i + 1) missed.push(i);
        }
        expect(missed).toEqual([]);
      });
    }, 60_000);

    it(`an every-second job starts one run per advance('1s'), ${REPEATS / 2} times in a row`, async () => {
      await withFakeClockScheduler(await target.open(), async (scheduler, clock) => {
        const ran: number[] = [];
        scheduler.register({ name: 'tick', schedule: { every: '1s' }, history: { succeeded: 1 }, handler: ({ scheduledAt }) => void ran.push(scheduledAt.getTime()) });
        await scheduler.start();
        const wrong: string[] = [];
        for (let i = 0; i < REPEATS / 2; i += 1) {
          await clock.advance('1s');
          if (ran.length !== i + 1 || ran.at(-1) !== clock.now()) wrong.push(`${i}: ${ran.length} runs, last ${ran.at(-1)}`);
        }
        expect(wrong).toEqual([]);
      });
    }, 60_000);

    it('a job registered on a running scheduler runs at its instant, every time', async () => {
      await withFakeClockScheduler(await target.open(), async (scheduler, clock) => {
        await scheduler.start();
        const ran: string[] = [];
        const missed: number[] = [];
        for (let i = 0; i < REPEATS / 3; i += 1) {
          scheduler.register({ name: `once-${i}`, schedule: { at: clock.now() + 1_000 }, handler: ({ jobName }) => void ran.push(jobName) });
          await clock.advance('1s');
          if (ran.at(-1) !== `once-${i}`) missed.push(i);
        }
        expect(missed).toEqual([]);
      });
    }, 60_000);
  });
}
