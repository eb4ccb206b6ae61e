/** Conformance (run queue): claims, leases and fencing, recovery, history pruning. */
import { LEASE_EXPIRED_ERROR } from '../../store.js';
import { MINUTE, T0, type Fixture } from './fixtures.js';

export function executionTests(fx: Fixture): void {
  const { describe, it, expect, withStore, job, tick, claim, succeed } = fx;
  describe('claims, leases and fencing', () => {
    it('finds ready runs of the given jobs, oldest first, and the next ready time', () =>
      withStore(async (store) => {
        await job(store, 'a');
        await job(store, 'b');
        await tick(store, 'a', 2, T0 + 2 * MINUTE);
        await tick(store, 'b', 1, T0 + MINUTE);
        await tick(store, 'a', 3, T0 + 9 * MINUTE);
        const found = await store.findReadyRuns({ jobNames: new Set(['a', 'b']), now: T0 + 5 * MINUTE, limit: 10 });
        expect(found.runs.map((r) => r.jobName)).toEqual(['b', 'a']);
        expect(found.nextReadyAt).toBe(T0 + 9 * MINUTE);
        const onlyA = await store.findReadyRuns({ jobNames: new Set(['a']), now: T0 + 10 * MINUTE, limit: 1 });
        expect(onlyA.runs.map((r) => r.scheduledAt)).toEqual([T0 + 2 * MINUTE]);
        expect(onlyA.nextReadyAt).toBeUndefined();
      }));

    it('lets exactly one of many racing instances claim a run, and bumps the fence', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const created = await tick(store, 'a', 1);
        if (created.outcome !== 'created') throw new Error('setup');
        const claims = await Promise.all(
          ['p', 'q', 'r', 's', 't'].map((owner) =>
            store.claimRun({ runId: created.run.id, owner, now: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE, deadlineAt: T0 + 9 * MINUTE }),
          ),
        );
        const winners = claims.filter((c) => c !== undefined);
        expect(winners).toHaveLength(1);
        expect(winners[0]?.index).toBeUndefined();
        expect(winners[0]?.run).toMatchObject({ status: 'running', fence: 1, startedAt: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE, deadlineAt: T0 + 9 * MINUTE });
      }));

    it('does not claim a run before its readyAt', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const created = await tick(store, 'a', 1, T0 + MINUTE);
        if (created.outcome !== 'created') throw new Error('setup');
        expect(await store.claimRun({ runId: created.run.id, owner: 'a', now: T0, leaseUntil: T0 + MINUTE })).toBeUndefined();
        expect(await store.claimRun({ runId: 'nope', owner: 'a', now: T0, leaseUntil: T0 + MINUTE })).toBeUndefined();
      }));

    it('renews a lease only for its owner and fence', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const created = await tick(store, 'a', 1);
        if (created.outcome !== 'created') throw new Error('setup');
        const run = await claim(store, created.run.id, 'a');
        const renew = (owner: string, fence: number) =>
          store.renewLease({ runId: run.id, owner, fence, now: T0 + MINUTE, leaseUntil: T0 + 5 * MINUTE });
        expect(await renew('b', run.fence)).toEqual({ ok: false, status: 'running' });
        expect(await renew('a', run.fence + 1)).toEqual({ ok: false, status: 'running' });
        expect(await renew('a', run.fence)).toEqual({ ok: true });
        expect((await store.getRun(run.id))?.leaseUntil).toBe(T0 + 5 * MINUTE);
      }));

    it('records success with counters and refuses a second, fenced-out finish', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const created = await tick(store, 'a', 1);
        if (created.outcome !== 'created') throw new Error('setup');
        const run = await claim(store, created.run.id);
        const done = await succeed(store, run, T0 + 2 * MINUTE);
        expect(done.ok).toBe(true);
        expect(await store.getRun(run.id)).toMatchObject({ status: 'succeeded', finishedAt: T0 + 2 * MINUTE });
        expect(await store.getJob('a')).toMatchObject({ succeeded: 1, failed: 0, lastSuccessfulTime: T0 + 2 * MINUTE });
        expect((await succeed(store, run, T0 + 3 * MINUTE)).ok).toBe(false);
        expect((await store.getJob('a'))?.succeeded).toBe(1);
      }));

    it('schedules a retry, releases, and fails for good', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const created = await tick(store, 'a', 1);
        if (created.outcome !== 'created') throw new Error('setup');
        const error = { name: 'TypeError', message: 'boom' };
        let run = await claim(store, created.run.id);
        const retry = await store.finishAttempt({ runId: run.id, owner: 'a', fence: run.fence, now: T0 + MINUTE, outcome: { status: 'retry', error, readyAt: T0 + 3 * MINUTE } });
        expect(retry.ok && retry.run).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + 3 * MINUTE, error });
        expect(await store.claimRun({ runId: run.id, owner: 'a', now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE })).toBeUndefined();
        run = await claim(store, run.id, 'b', T0 + 3 * MINUTE);
        expect(run).toMatchObject({ attempt: 2, fence: 2, startedAt: T0 + MINUTE });
        const released = await store.finishAttempt({ runId: run.id, owner: 'b', fence: run.fence, now: T0 + 4 * MINUTE, outcome: { status: 'released' } });
        expect(released.ok && released.run).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + 4 * MINUTE });
        expect((released.ok && released.run.owner) || undefined).toBeUndefined();
        run = await claim(store, run.id, 'c', T0 + 4 * MINUTE);
        await store.finishAttempt({ runId: run.id, owner: 'c', fence: run.fence, now: T0 + 5 * MINUTE, outcome: { status: 'failed', error } });
        expect(await store.getRun(run.id)).toMatchObject({ status: 'failed', attempt: 2, finishedAt: T0 + 5 * MINUTE, error });
        expect(await store.getJob('a')).toMatchObject({ succeeded: 0, failed: 1 });
      }));

    it('recovers runs whose lease expired, counting a failed attempt, and fences out the old owner', () =>
      withStore(async (store) => {
        await job(store, 'a');
        await job(store, 'b');
        const ra = await tick(store, 'a', 1);
        const rb = await tick(store, 'b', 1);
        if (ra.outcome !== 'created' || rb.outcome !== 'created') throw new Error('setup');
        const old = await claim(store, ra.run.id, 'dead', T0 + MINUTE, 10_000);
        await claim(store, rb.run.id, 'alive', T0 + MINUTE, 60_000);
        expect(await store.recoverExpiredRuns({ now: T0 + MINUTE + 10_000, limit: 10 })).toEqual([]);
        const recovered = await store.recoverExpiredRuns({ now: T0 + MINUTE + 10_001, limit: 10 });
        expect(recovered.map((r) => r.id)).toEqual([ra.run.id]);
        expect(recovered[0]).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + MINUTE + 10_001, error: LEASE_EXPIRED_ERROR });
        expect(recovered[0]?.owner).toBeUndefined();
        const taken = await claim(store, ra.run.id, 'b', T0 + 2 * MINUTE);
        expect(taken.fence).toBe(old.fence + 1);
        expect((await succeed(store, old, T0 + 2 * MINUTE)).ok).toBe(false);
        expect((await store.renewLease({ runId: old.id, owner: 'dead', fence: old.fence, now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE })).ok).toBe(false);
        expect((await succeed(store, taken, T0 + 2 * MINUTE)).ok).toBe(true);
      }));
  });


  describe('history', () => {
    it('keeps the newest finished runs per limit and keeps the counters', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Allow', { succeeded: 2, failed: 1 });
        const error = { name: 'Error', message: 'no' };
        for (let minute = 1; minute <= 6; minute += 1) {
          const created = await tick(store, 'a', minute);
          if (created.outcome !== 'created') throw new Error('setup');
          const run = await claim(store, created.run.id, 'a', T0 + minute * MINUTE);
          const outcome = minute % 2 === 0 ? { status: 'failed' as const, error } : { status: 'succeeded' as const };
          await store.finishAttempt({ runId: run.id, owner: 'a', fence: run.fence, now: T0 + minute * MINUTE + 1, outcome });
        }
        const left = await store.listRuns({ jobName: 'a' });
        expect(left.map((r) => [r.scheduledAt, r.status])).toEqual([
          [T0 + 6 * MINUTE, 'failed'],
          [T0 + 5 * MINUTE, 'succeeded'],
          [T0 + 3 * MINUTE, 'succeeded'],
        ]);
        expect(await store.getJob('a')).toMatchObject({ succeeded: 3, failed: 3 });
      }));

    it('never prunes active runs and lists newest first with filters', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Allow', { succeeded: 0, failed: 0 });
        for (let minute = 1; minute <= 3; minute += 1) await tick(store, 'a', minute);
        const created = await tick(store, 'a', 4);
        if (created.outcome !== 'created') throw new Error('setup');
        await succeed(store, await claim(store, created.run.id, 'a', T0 + 4 * MINUTE), T0 + 4 * MINUTE);
        const all = await store.listRuns({ jobName: 'a' });
        expect(all.map((r) => r.scheduledAt)).toEqual([T0 + 3 * MINUTE, T0 + 2 * MINUTE, T0 + MINUTE]);
        expect((await store.listRuns({ jobName: 'a', statuses: ['pending'], limit: 2 })).map((r) => r.scheduledAt)).toEqual([
          T0 + 3 * MINUTE,
          T0 + 2 * MINUTE,
        ]);
        expect(await store.listRuns({ jobName: 'a', statuses: ['succeeded'] })).toEqual([]);
      }));
  });
}
