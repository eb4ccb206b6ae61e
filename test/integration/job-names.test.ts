/**
 * The job-name grammar that keeps run IDs unambiguous (src/run-id.ts), at the
 * scheduler: a name with a `manual` or `backfill` segment is refused where runs
 * are made, and a job a store kept from before the grammar is not planned but
 * reported, naming it and the fix, and can still be looked at and removed. On
 * every store.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Scheduler, ValidationError } from '../../src/index.js';
import type { JobSpec } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers } from './every-store.js';

const T0 = Date.UTC(2026, 0, 1);

afterAll(closeServers);

/** A job as an earlier version wrote it: through the store, with no grammar check. */
function legacySpec(name: string): JobSpec {
  return { name, schedule: { kind: 'every', everyMs: 1000 }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 3, failed: 1 } };
}

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`job names, ${target.kind} store`, () => {
    it('refuses names whose run IDs could be another job\'s, where runs are made', async () => {
      const opened = await target.open();
      const scheduler = new Scheduler({ store: opened.store, clock: new FakeClock(T0) });
      try {
        scheduler.register({ name: 'a', schedule: { every: '1s' }, handler: () => {} });
        for (const name of ['a.manual', 'a.backfill', 'x.manual.1767225600', 'manual']) {
          expect(() => scheduler.register({ name, schedule: { every: '1s' }, handler: () => {} }), name).toThrow(ValidationError);
          expect(() => scheduler.register({ name, schedule: { every: '1s' }, handler: () => {} }), name).toThrow(/dot-separated part/);
        }
        await scheduler.start();
        // Under the old grammar, job "a.manual"'s run of 2026-01-01T00:00:00Z was job "a"'s manual run with this key.
        const run = await scheduler.trigger('a', { idempotencyKey: '1767225600' });
        expect(run.jobName).toBe('a');
        expect((await opened.store.listJobs()).map((job) => job.name)).toEqual(['a']);
      } finally {
        await scheduler.stop();
        await opened.dispose();
      }
    });

    it('does not plan a stored job the grammar refuses; reports it with the fix; lets it be removed', async () => {
      const opened = await target.open();
      const clock = new FakeClock(T0);
      await opened.store.init();
      await opened.store.upsertJobs([{ spec: legacySpec('a.manual'), now: T0, initialCursor: T0 }]);
      const scheduler = new Scheduler({ store: opened.store, clock });
      const errors: Error[] = [];
      scheduler.on('error', (error) => void errors.push(error));
      try {
        scheduler.register({ name: 'a', schedule: { every: '1s' }, handler: () => {} });
        await scheduler.start();
        // Long enough for heartbeats (every 10 s) to find runs whose notifications the server delivered late.
        await clock.advance('1m');
        expect(await scheduler.listRuns('a.manual')).toEqual([]);
        expect((await scheduler.getJob('a'))?.succeeded).toBeGreaterThanOrEqual(1);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toBeInstanceOf(ValidationError);
        expect(errors[0]?.message).toMatch(/^job "a\.manual" in the store: name: has a "manual" part, which makes its run IDs ambiguous, so it is not planned: remove it .* and register it under another name/);
        // Still there to look at, pause and remove; not to trigger or backfill.
        expect((await scheduler.getJob('a.manual'))?.name).toBe('a.manual');
        await scheduler.pause('a.manual');
        await expect(scheduler.trigger('a.manual')).rejects.toBeInstanceOf(ValidationError);
        await expect(scheduler.backfill('a.manual', { from: T0, to: T0 })).rejects.toBeInstanceOf(ValidationError);
        expect(await scheduler.remove('a.manual')).toBe(true);
        expect(await scheduler.getJob('a.manual')).toBeUndefined();
      } finally {
        const stopping = scheduler.stop();
        await clock.advance('1s');
        await stopping;
        await opened.dispose();
      }
    });
  });
}
