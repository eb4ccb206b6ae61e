/** Conformance: fan-out runs: index claims and adoption, parallelism, counts, retries over the whole run, leases and recovery of indices. */
import { LEASE_EXPIRED_ERROR, indexId, type IndexRecord, type Store } from '../../store.js';
import { ERROR, MINUTE, T0, type Fixture } from './fixtures.js';

export function fanOutTests(fx: Fixture): void {
  const { describe, it, expect, withStore, fanOutJob, created, claimIndex, finishIndex } = fx;

  async function indexOf(store: Store, runId: string, index: number): Promise<IndexRecord | undefined> {
    return (await store.listIndices(runId)).find((record) => record.index === index);
  }

  describe('fan-out: claims', () => {
    it('creates a fan-out run with its shape and zero counts', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 2, retryLimit: 1 });
        const run = await created(store, 'f', 1);
        expect(run).toMatchObject({ status: 'pending', attempt: 1, fence: 0, readyAt: T0 + MINUTE, createdAt: T0 + MINUTE });
        expect(run.fanOut).toEqual({ completions: 3, parallelism: 2, retryLimit: 1, succeeded: 0, failed: 0, active: 0 });
        expect(await store.listIndices(run.id)).toEqual([]);
        expect(await store.listIndices('nope')).toEqual([]);
        // The shape is fixed when the run is created: a changed job shapes only its later runs.
        await fanOutJob(store, 'f', { completions: 5, parallelism: 5, retryLimit: 0 });
        expect((await store.getRun(run.id))?.fanOut).toMatchObject({ completions: 3, parallelism: 2, retryLimit: 1 });
        expect((await created(store, 'f', 2)).fanOut).toMatchObject({ completions: 5, parallelism: 5, retryLimit: 0 });
      }));

    it('claims the lowest never-started index first, with a new record per index', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 2 });
        const run = await created(store, 'f', 1);
        const first = await store.claimRun({ runId: run.id, owner: 'p', now: T0 + MINUTE + 5, leaseUntil: T0 + 2 * MINUTE, deadlineAt: T0 + 9 * MINUTE });
        expect(first?.index).toMatchObject({
          runId: run.id,
          index: 0,
          status: 'running',
          attempt: 1,
          owner: 'p',
          leaseUntil: T0 + 2 * MINUTE,
          fence: 1,
          startedAt: T0 + MINUTE + 5,
          readyAt: T0 + MINUTE,
        });
        expect(first?.run).toMatchObject({ status: 'running', attempt: 1, fence: 0, startedAt: T0 + MINUTE + 5, deadlineAt: T0 + 9 * MINUTE });
        expect(first?.run.fanOut).toMatchObject({ active: 1, succeeded: 0, failed: 0 });
        expect(first?.run.owner).toBeUndefined();
        expect(first?.run.leaseUntil).toBeUndefined();
        const second = await claimIndex(store, run.id, 'q', T0 + 2 * MINUTE);
        expect(second.index).toMatchObject({ index: 1, owner: 'q', fence: 1, attempt: 1, startedAt: T0 + 2 * MINUTE });
        // startedAt and deadlineAt of the run are fixed by its first claim.
        expect(second.run).toMatchObject({ startedAt: T0 + MINUTE + 5, deadlineAt: T0 + 9 * MINUTE });
        expect(second.run.fanOut?.active).toBe(2);
        const listed = await store.listIndices(run.id);
        expect(listed.map((record) => [record.index, record.status, record.owner])).toEqual([
          [0, 'running', 'p'],
          [1, 'running', 'q'],
        ]);
        expect(indexId(run.id, 1)).toBe(`${run.id}.1`);
        expect(await store.getRun(run.id)).toEqual(second.run);
      }));

    it('lets exactly one of many racing instances claim each index, and never more than parallelism', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 5, parallelism: 3 });
        const run = await created(store, 'f', 1);
        const claims = await Promise.all(
          ['p', 'q', 'r', 's', 't', 'u'].map((owner) =>
            store.claimRun({ runId: run.id, owner, now: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE }),
          ),
        );
        const winners = claims.filter((c) => c !== undefined);
        expect(winners).toHaveLength(3);
        expect(winners.map((c) => c.index?.index).sort()).toEqual([0, 1, 2]);
        expect((await store.getRun(run.id))?.fanOut?.active).toBe(3);
      }));

    it('refuses claims while parallelism indices run, and allows one again after an index finishes', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 2 });
        const run = await created(store, 'f', 1);
        const first = await claimIndex(store, run.id, 'p');
        await claimIndex(store, run.id, 'q');
        expect(await store.claimRun({ runId: run.id, owner: 'r', now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE })).toBeUndefined();
        const done = await finishIndex(store, first.index, { status: 'succeeded' }, T0 + 2 * MINUTE);
        expect(done.ok && done.run).toMatchObject({ status: 'running' });
        expect(done.ok && done.run.fanOut).toMatchObject({ active: 1, succeeded: 1 });
        const third = await claimIndex(store, run.id, 'r', T0 + 2 * MINUTE);
        expect(third.index).toMatchObject({ index: 2, owner: 'r', fence: 1 });
        expect(third.run.fanOut?.active).toBe(2);
        // Every index is started: nothing waits, nothing to claim.
        expect(await store.claimRun({ runId: run.id, owner: 's', now: T0 + 3 * MINUTE, leaseUntil: T0 + 4 * MINUTE })).toBeUndefined();
      }));

    it('does not claim before the waiting index is ready, nor a gone or finished run', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 });
        const run = await created(store, 'f', 1);
        expect(await store.claimRun({ runId: run.id, owner: 'p', now: T0 + MINUTE - 1, leaseUntil: T0 + 2 * MINUTE })).toBeUndefined();
        expect(await store.claimRun({ runId: 'nope', owner: 'p', now: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE })).toBeUndefined();
        const a = await claimIndex(store, run.id, 'p');
        const b = await claimIndex(store, run.id, 'q');
        await finishIndex(store, a.index, { status: 'succeeded' }, T0 + 2 * MINUTE);
        await finishIndex(store, b.index, { status: 'succeeded' }, T0 + 2 * MINUTE);
        expect(await store.claimRun({ runId: run.id, owner: 'r', now: T0 + 3 * MINUTE, leaseUntil: T0 + 4 * MINUTE })).toBeUndefined();
      }));

    it('does not claim an index of a run created ahead before its tick', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 });
        const run = await created(store, 'f', 1, T0 + MINUTE - 200);
        expect(run.readyAt).toBe(T0 + MINUTE);
        expect(await store.claimRun({ runId: run.id, owner: 'p', now: T0 + MINUTE - 1, leaseUntil: T0 + 2 * MINUTE })).toBeUndefined();
        expect((await claimIndex(store, run.id, 'p', T0 + MINUTE)).index.index).toBe(0);
      }));

    it('takes the waiting index with the earliest readyAt, ties by lowest index, and adopts its record', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 3, retryLimit: 5 });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p');
        const i1 = await claimIndex(store, run.id, 'q');
        const i2 = await claimIndex(store, run.id, 'r');
        const error = { name: 'TypeError', message: 'index failed' };
        await finishIndex(store, i2.index, { status: 'retry', error, readyAt: T0 + 5 * MINUTE }, T0 + 2 * MINUTE);
        await finishIndex(store, i0.index, { status: 'retry', error, readyAt: T0 + 5 * MINUTE }, T0 + 2 * MINUTE);
        const released = await finishIndex(store, i1.index, { status: 'released' }, T0 + 3 * MINUTE);
        expect(released.ok && released.index).toMatchObject({ index: 1, status: 'pending', attempt: 1, readyAt: T0 + 3 * MINUTE, fence: 1 });
        expect(released.ok && released.run).toMatchObject({ status: 'pending', readyAt: T0 + 3 * MINUTE });
        expect(released.ok && released.run.fanOut).toMatchObject({ active: 0, failed: 2 });
        expect(await store.claimRun({ runId: run.id, owner: 's', now: T0 + 3 * MINUTE - 1, leaseUntil: T0 + 4 * MINUTE })).toBeUndefined();

        const again1 = await claimIndex(store, run.id, 's', T0 + 3 * MINUTE);
        expect(again1.index).toMatchObject({ runId: run.id, index: 1, attempt: 1, fence: 2, owner: 's', startedAt: T0 + MINUTE });
        expect(again1.run.readyAt).toBe(T0 + 5 * MINUTE);
        expect(await store.claimRun({ runId: run.id, owner: 't', now: T0 + 4 * MINUTE, leaseUntil: T0 + 5 * MINUTE })).toBeUndefined();

        const again0 = await claimIndex(store, run.id, 't', T0 + 5 * MINUTE);
        expect(again0.index).toMatchObject({ index: 0, attempt: 2, fence: 2, owner: 't', error, startedAt: T0 + MINUTE });
        const again2 = await claimIndex(store, run.id, 'u', T0 + 5 * MINUTE);
        expect(again2.index).toMatchObject({ index: 2, attempt: 2, fence: 2, owner: 'u' });
        expect(await store.listIndices(run.id)).toHaveLength(3);
        // A success clears the error of the index's earlier attempt.
        const done = await finishIndex(store, again0.index, { status: 'succeeded' }, T0 + 6 * MINUTE);
        expect(done.ok && done.index).toMatchObject({ index: 0, status: 'succeeded', attempt: 2 });
        expect(done.ok && done.index && done.index.error).toBeUndefined();
      }));

    it('takes a never-started index (ready since the run was created) before a released one', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 1 });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p');
        expect(i0.run.readyAt).toBe(T0 + MINUTE);
        const released = await finishIndex(store, i0.index, { status: 'released' }, T0 + 4 * MINUTE);
        expect(released.ok && released.run).toMatchObject({ status: 'pending', readyAt: T0 + MINUTE });
        const next = await claimIndex(store, run.id, 'q', T0 + 4 * MINUTE);
        expect(next.index.index).toBe(1);
      }));
  });

  describe('fan-out: finishing', () => {
    it('succeeds only when every index succeeded, counting once on the job', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 });
        const run = await created(store, 'f', 1);
        const a = await claimIndex(store, run.id, 'p');
        const b = await claimIndex(store, run.id, 'q');
        const first = await finishIndex(store, a.index, { status: 'succeeded' }, T0 + 2 * MINUTE);
        expect(first.ok && first.index).toMatchObject({ index: 0, status: 'succeeded', finishedAt: T0 + 2 * MINUTE });
        expect(first.ok && first.index && first.index.owner).toBeUndefined();
        expect(first.ok && first.run).toMatchObject({ status: 'running' });
        expect(first.ok && first.run.finishedAt).toBeUndefined();
        expect(await store.getJob('f')).toMatchObject({ succeeded: 0, failed: 0 });
        expect((await store.getJob('f'))?.lastSuccessfulTime).toBeUndefined();
        // A second finish of the same index is fenced out; its lease is gone.
        expect((await finishIndex(store, a.index, { status: 'succeeded' }, T0 + 2 * MINUTE)).ok).toBe(false);
        const renewal = { runId: run.id, index: 0, owner: 'p', fence: a.index.fence, now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE };
        expect(await store.renewLease(renewal)).toEqual({ ok: false, status: 'succeeded' });

        const last = await finishIndex(store, b.index, { status: 'succeeded' }, T0 + 3 * MINUTE);
        expect(last.ok && last.run).toMatchObject({ status: 'succeeded', finishedAt: T0 + 3 * MINUTE });
        expect(last.ok && last.run.fanOut).toMatchObject({ succeeded: 2, failed: 0, active: 0 });
        expect(await store.getRun(run.id)).toMatchObject({ status: 'succeeded', finishedAt: T0 + 3 * MINUTE });
        expect(await store.getJob('f')).toMatchObject({ succeeded: 1, failed: 0, lastSuccessfulTime: T0 + 3 * MINUTE });
        expect((await store.listIndices(run.id)).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      }));

    it('counts failed attempts over the whole run: beyond retryLimit the run fails and its other indices are cancelled', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 3, retryLimit: 1 });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p');
        const i1 = await claimIndex(store, run.id, 'q');
        const i2 = await claimIndex(store, run.id, 'r');
        const first = { name: 'Error', message: 'first' };
        const second = { name: 'Error', message: 'second' };
        const retried = await finishIndex(store, i0.index, { status: 'retry', error: first, readyAt: T0 + 9 * MINUTE }, T0 + 2 * MINUTE);
        expect(retried.ok && retried.index).toMatchObject({ index: 0, status: 'pending', attempt: 2, readyAt: T0 + 9 * MINUTE, error: first });
        expect(retried.ok && retried.run).toMatchObject({ status: 'running' });
        expect(retried.ok && retried.run.fanOut).toMatchObject({ failed: 1, active: 2 });
        expect(retried.ok && retried.run.error).toBeUndefined();

        const failed = await finishIndex(store, i1.index, { status: 'retry', error: second, readyAt: T0 + 9 * MINUTE }, T0 + 3 * MINUTE);
        expect(failed.ok && failed.index).toMatchObject({ index: 1, status: 'failed', attempt: 1, finishedAt: T0 + 3 * MINUTE, error: second });
        expect(failed.ok && failed.run).toMatchObject({ status: 'failed', finishedAt: T0 + 3 * MINUTE, error: second });
        expect(failed.ok && failed.run.fanOut).toMatchObject({ failed: 2, active: 0, succeeded: 0 });
        expect(await store.getJob('f')).toMatchObject({ succeeded: 0, failed: 1 });

        const indices = await store.listIndices(run.id);
        expect(indices.map((r) => [r.index, r.status, r.finishedAt])).toEqual([
          [0, 'cancelled', T0 + 3 * MINUTE],
          [1, 'failed', T0 + 3 * MINUTE],
          [2, 'cancelled', T0 + 3 * MINUTE],
        ]);
        expect(indices[2]?.owner).toBeUndefined();
        expect(indices[2]?.leaseUntil).toBeUndefined();
        const lease = { runId: run.id, index: 2, owner: 'r', fence: i2.index.fence, now: T0 + 4 * MINUTE };
        expect(await store.renewLease({ ...lease, leaseUntil: T0 + 5 * MINUTE })).toEqual({ ok: false, status: 'cancelled' });
        const late = await store.finishAttempt({ ...lease, outcome: { status: 'succeeded' } });
        expect(late.ok).toBe(false);
        expect(!late.ok && late.run).toMatchObject({ status: 'failed' });
        expect(await store.getJob('f')).toMatchObject({ succeeded: 0, failed: 1 });
        expect(await store.claimRun({ runId: run.id, owner: 's', now: T0 + 10 * MINUTE, leaseUntil: T0 + 11 * MINUTE })).toBeUndefined();
      }));

    it('fails the run at once on a failed outcome, whatever the retry limit', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2, retryLimit: 5 });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p');
        await claimIndex(store, run.id, 'q');
        const result = await finishIndex(store, i0.index, { status: 'failed', error: ERROR }, T0 + 2 * MINUTE);
        expect(result.ok && result.index).toMatchObject({ index: 0, status: 'failed', finishedAt: T0 + 2 * MINUTE, error: ERROR });
        expect(result.ok && result.run).toMatchObject({ status: 'failed', finishedAt: T0 + 2 * MINUTE, error: ERROR });
        expect(result.ok && result.run.fanOut).toMatchObject({ failed: 1, active: 0 });
        expect((await indexOf(store, run.id, 1))?.status).toBe('cancelled');
        expect(await store.getJob('f')).toMatchObject({ succeeded: 0, failed: 1 });
      }));

    it('gives a released index back: pending, same attempt, ready now, not a failure', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2, retryLimit: 0 });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p');
        const i1 = await claimIndex(store, run.id, 'q');
        const released = await finishIndex(store, i0.index, { status: 'released' }, T0 + 2 * MINUTE);
        expect(released.ok && released.index).toMatchObject({ index: 0, status: 'pending', attempt: 1, readyAt: T0 + 2 * MINUTE });
        expect(released.ok && released.index && released.index.owner).toBeUndefined();
        expect(released.ok && released.run).toMatchObject({ status: 'running', readyAt: T0 + 2 * MINUTE });
        expect(released.ok && released.run.fanOut).toMatchObject({ failed: 0, active: 1 });
        const back = await finishIndex(store, i1.index, { status: 'released' }, T0 + 3 * MINUTE);
        expect(back.ok && back.run).toMatchObject({ status: 'pending', readyAt: T0 + 2 * MINUTE });
        expect(back.ok && back.run.fanOut).toMatchObject({ active: 0 });
        const again = await claimIndex(store, run.id, 'r', T0 + 3 * MINUTE);
        expect(again.index).toMatchObject({ index: 0, attempt: 1, fence: 2 });
      }));
  });

  describe('fan-out: leases and recovery', () => {
    it('renews an index lease only for its owner, fence and index', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 });
        const run = await created(store, 'f', 1);
        const { index } = await claimIndex(store, run.id, 'p');
        await claimIndex(store, run.id, 'q');
        const renew = (owner: string, fence: number, at?: number) =>
          store.renewLease({ runId: run.id, ...(at === undefined ? {} : { index: at }), owner, fence, now: T0 + MINUTE, leaseUntil: T0 + 5 * MINUTE });
        expect(await renew('q', index.fence, 0)).toEqual({ ok: false, status: 'running' });
        expect(await renew('p', index.fence + 1, 0)).toEqual({ ok: false, status: 'running' });
        expect(await renew('p', index.fence, 1)).toEqual({ ok: false, status: 'running' });
        expect((await renew('p', index.fence)).ok).toBe(false);
        expect((await renew('p', 0)).ok).toBe(false);
        expect(await renew('p', index.fence, 0)).toEqual({ ok: true });
        expect((await indexOf(store, run.id, 0))?.leaseUntil).toBe(T0 + 5 * MINUTE);
        expect((await indexOf(store, run.id, 1))?.leaseUntil).toBe(T0 + MINUTE + 30_000);
        expect((await store.getRun(run.id))?.leaseUntil).toBeUndefined();
        expect((await store.renewLease({ runId: 'nope', index: 0, owner: 'p', fence: 1, now: T0, leaseUntil: T0 + 1 })).ok).toBe(false);
      }));

    it('refuses a finish without the index, or for another index', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 });
        const run = await created(store, 'f', 1);
        const { index } = await claimIndex(store, run.id, 'p');
        const whole = await store.finishAttempt({ runId: run.id, owner: 'p', fence: index.fence, now: T0 + 2 * MINUTE, outcome: { status: 'succeeded' } });
        expect(whole.ok).toBe(false);
        const other = await store.finishAttempt({ runId: run.id, index: 1, owner: 'p', fence: index.fence, now: T0 + 2 * MINUTE, outcome: { status: 'succeeded' } });
        expect(other.ok).toBe(false);
        expect((await store.getRun(run.id))?.fanOut).toMatchObject({ succeeded: 0, active: 1 });
        expect((await indexOf(store, run.id, 0))?.status).toBe('running');
      }));

    it('recovers an expired index lease as a failed attempt, and fails the run beyond retryLimit', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2, retryLimit: 1 });
        const run = await created(store, 'f', 1);
        const dead = await claimIndex(store, run.id, 'dead', T0 + MINUTE, 10_000);
        const alive = await claimIndex(store, run.id, 'alive', T0 + MINUTE, 60_000);
        expect(await store.recoverExpiredRuns({ now: T0 + MINUTE + 10_000, limit: 10 })).toEqual([]);
        const now = T0 + MINUTE + 10_001;
        const recovered = await store.recoverExpiredRuns({ now, limit: 10 });
        expect(recovered.map((r) => r.id)).toEqual([run.id]);
        expect(recovered[0]).toMatchObject({ status: 'running', attempt: 1, readyAt: now });
        expect(recovered[0]?.fanOut).toMatchObject({ failed: 1, active: 1 });
        expect(await indexOf(store, run.id, 0)).toMatchObject({ status: 'pending', attempt: 2, readyAt: now, error: LEASE_EXPIRED_ERROR, fence: 1 });
        expect((await indexOf(store, run.id, 0))?.owner).toBeUndefined();
        expect((await finishIndex(store, dead.index, { status: 'succeeded' }, now)).ok).toBe(false);

        const taken = await claimIndex(store, run.id, 'next', now, 10_000);
        expect(taken.index).toMatchObject({ index: 0, attempt: 2, fence: 2, owner: 'next' });
        const later = now + 10_001;
        const lost = await store.recoverExpiredRuns({ now: later, limit: 10 });
        expect(lost.map((r) => r.id)).toEqual([run.id]);
        expect(lost[0]).toMatchObject({ status: 'failed', finishedAt: later, error: LEASE_EXPIRED_ERROR });
        expect(lost[0]?.fanOut).toMatchObject({ failed: 2, active: 0 });
        expect(await indexOf(store, run.id, 0)).toMatchObject({ status: 'failed', attempt: 2, finishedAt: later, error: LEASE_EXPIRED_ERROR });
        expect(await indexOf(store, run.id, 1)).toMatchObject({ status: 'cancelled', finishedAt: later });
        expect(await store.getJob('f')).toMatchObject({ failed: 1, succeeded: 0 });
        expect((await finishIndex(store, alive.index, { status: 'succeeded' }, later)).ok).toBe(false);
      }));

    it('does not recover an index whose run an earlier recovery of the same call failed', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 3, retryLimit: 0 });
        const run = await created(store, 'f', 1);
        await claimIndex(store, run.id, 'p', T0 + MINUTE, 10_000);
        await claimIndex(store, run.id, 'q', T0 + MINUTE, 20_000);
        const now = T0 + 2 * MINUTE;
        const recovered = await store.recoverExpiredRuns({ now, limit: 10 });
        expect(recovered.map((r) => [r.id, r.status])).toEqual([[run.id, 'failed']]);
        expect(recovered[0]?.fanOut).toMatchObject({ failed: 1, active: 0 });
        expect((await store.listIndices(run.id)).map((r) => [r.index, r.status, r.attempt])).toEqual([
          [0, 'failed', 1],
          [1, 'cancelled', 1],
        ]);
        expect(await store.getJob('f')).toMatchObject({ failed: 1 });
        expect(await store.recoverExpiredRuns({ now: now + MINUTE, limit: 10 })).toEqual([]);
      }));

    it('gives an index skipped that way no place in the limit: it recovers the next lease instead', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2, retryLimit: 0 });
        const first = await created(store, 'f', 1);
        const second = await created(store, 'f', 2);
        const now = T0 + 2 * MINUTE;
        await claimIndex(store, first.id, 'p', now, 1_000);
        await claimIndex(store, first.id, 'q', now, 1_000);
        await claimIndex(store, second.id, 'r', now, 2_000);
        // first's index 0 fails its run (no retries left), which cancels index 1: the second place goes to `second`.
        const recovered = await store.recoverExpiredRuns({ now: now + 5_000, limit: 2 });
        expect(recovered.map((r) => [r.id, r.status])).toEqual([
          [first.id, 'failed'],
          [second.id, 'failed'],
        ]);
        expect((await store.listIndices(second.id)).map((r) => r.status)).toEqual(['failed']);
      }));

    it('recovers plain runs and indices in lease order, ties by run ID then index, at most limit', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 3, retryLimit: 5 });
        await fx.job(store, 'a');
        const plain = await created(store, 'a', 1);
        const run = await created(store, 'f', 1);
        await claimIndex(store, run.id, 'p', T0 + MINUTE, 10_000);
        await claimIndex(store, run.id, 'q', T0 + MINUTE, 10_000);
        await claimIndex(store, run.id, 'r', T0 + MINUTE, 5_000);
        await fx.claim(store, plain.id, 'p', T0 + MINUTE, 10_000);
        const now = T0 + MINUTE + 10_001;
        const first = await store.recoverExpiredRuns({ now, limit: 3 });
        // Index 2 expired first; then, at the same instant, run a.* before f.*, and index 0 before index 1.
        expect(first.map((r) => r.id)).toEqual([run.id, plain.id, run.id]);
        expect(first[2]?.fanOut).toMatchObject({ failed: 2, active: 1 });
        expect((await indexOf(store, run.id, 2))?.status).toBe('pending');
        expect((await indexOf(store, run.id, 0))?.status).toBe('pending');
        expect((await indexOf(store, run.id, 1))?.status).toBe('running');
        const rest = await store.recoverExpiredRuns({ now, limit: 10 });
        expect(rest.map((r) => r.id)).toEqual([run.id]);
        expect(rest[0]?.fanOut).toMatchObject({ failed: 3, active: 0 });
        expect(rest[0]).toMatchObject({ status: 'pending' });
        expect((await store.listIndices(run.id)).map((r) => [r.status, r.attempt])).toEqual([
          ['pending', 2],
          ['pending', 2],
          ['pending', 2],
        ]);
      }));
  });
}
