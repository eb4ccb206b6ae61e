/**
 * Conformance (notifications, optional): `watch` tells every watcher about ready runs,
 * finished runs and changed jobs; `flushNotifications` (optional) delivers what the
 * calls already resolved sent. Other capabilities' tests check the notifications their
 * writes send, through `notified`, only when the store has `watch`.
 */
import type { Store } from '../../store.js';
import { MINUTE, T0, type Fixture } from './fixtures.js';

/** `required`: the store must have `watch` (describeNotifications); otherwise a store without it skips these tests. */
export function notificationTests(fx: Fixture, required: boolean): void {
  const { describe, it, expect, withStore, job, tick, claim, succeed, eventually, watching } = fx;
  /** Whether to test `watch`: a store without it fails here when notifications are required, and skips them otherwise. */
  const hasWatch = (store: Store): boolean => {
    if (required) expect(typeof store.watch, 'store.watch').toBe('function');
    return store.watch !== undefined;
  };
  describe('notifications', () => {
    it('tells watchers about ready runs, finished runs and changed jobs', () =>
      withStore(async (store) => {
        if (!hasWatch(store)) return;
        await watching(store, async (seen) => {
          await job(store, 'a');
          const created = await tick(store, 'a', 1);
          if (created.outcome !== 'created') throw new Error('setup');
          await succeed(store, await claim(store, created.run.id), T0 + MINUTE);
          await eventually(() => {
            expect(seen).toContainEqual({ type: 'job-changed', jobName: 'a' });
            expect(seen).toContainEqual({ type: 'run-ready', jobName: 'a', runId: created.run.id, readyAt: T0 + MINUTE });
            expect(seen).toContainEqual({ type: 'run-finished', jobName: 'a', runId: created.run.id, status: 'succeeded' });
          });
        });
      }));

    it('flushNotifications() (optional) resolves once the notifications of the calls already resolved have reached watchers', () =>
      withStore(async (store) => {
        if (store.flushNotifications === undefined || !hasWatch(store)) return;
        await watching(store, async (seen) => {
          await job(store, 'm');
          for (let i = 0; i < 20; i += 1) {
            const id = `m.manual.k${i}`;
            await store.createRun({ run: { id, jobName: 'm', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
            await store.flushNotifications?.();
            expect(seen.some((n) => n.type === 'run-ready' && n.runId === id), id).toBe(true);
          }
          // Markers are the store's own business: watchers never see them.
          expect(seen.every((n) => n.type === 'run-ready' || n.type === 'job-changed')).toBe(true);
        });
      }));
  });
}
