/**
 * The retry limit has one owner, the store, for plain and fan-out runs alike: a run
 * whose last attempt lost its lease fails when it is recovered, on every store. (It
 * was announced `run:retry` first, then failed by the instance that claimed it.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/index.js';
import type { Store } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';
import { FreezableClock, T0 } from '../helpers.js';
import { EVERY_STORE, closeServers } from './every-store.js';

afterAll(closeServers);

function instance(store: Store, clock: FakeClock | FreezableClock, instanceId: string) {
  const scheduler = new Scheduler({ store, clock, instanceId, logger: false });
  const events: string[] = [];
  scheduler.on('run:retry', ({ run, error }) => void events.push(`retry ${run.id} ${error.name}`));
  scheduler.on('run:failed', ({ run, error, reason }) => void events.push(`failed ${run.id} ${error.name} ${reason}`));
  scheduler.on('error', (error) => void events.push(`error ${error.message}`));
  return { scheduler, events };
}

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`the retry limit, ${target.kind} store`, () => {
    for (const [label, extra] of [['a plain run', {}], ['a fan-out run', { completions: 2 }]] as const) {
      it(`fails ${label} under retry: false whose lease expired, never announcing a retry`, async () => {
        const opened = await target.open();
        const clock = new FakeClock(T0);
        const frozen = new FreezableClock(clock);
        const doomed = instance(opened.store, frozen, 'doomed');
        const survivor = instance(opened.store, clock, 'survivor');
        try {
          for (const { scheduler } of [doomed, survivor]) {
            scheduler.register({ name: 'once', schedule: { at: T0 }, retry: false, ...extra, handler: ({ signal }) => clock.sleep('1h', signal) });
          }
          await doomed.scheduler.start();
          await clock.advance('1s');
          frozen.freeze(); // a long GC pause, say: its leases run out
          await survivor.scheduler.start();
          await clock.advance('2m');
          expect(survivor.events).toEqual(['failed once.1767225600 LeaseExpiredError error']);
          expect(await survivor.scheduler.getJob('once')).toMatchObject({ failed: 1, succeeded: 0 });
        } finally {
          await survivor.scheduler.stop();
          frozen.thaw();
          const stopping = doomed.scheduler.stop({ abort: true });
          await clock.advance('10s');
          await stopping;
          await opened.dispose();
        }
      });
    }
  });
}
