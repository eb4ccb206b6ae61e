/** Conformance: the optional batch read `listActiveRuns`, which must agree with `listRuns`. */
import { ACTIVE_STATUSES } from '../../store.js';
import { MINUTE, T0, type Fixture } from './fixtures.js';

export function readTests(fx: Fixture): void {
  const { describe, it, expect, withStore, job, claim, succeed, created } = fx;
  describe('listActiveRuns (optional)', () => {
    it("answers for several jobs at once what listRuns answers for each job's active runs", () =>
      withStore(async (store) => {
        if (store.listActiveRuns === undefined) return; // optional: the scheduler falls back to listRuns
        for (const name of ['a', 'b', 'c']) await job(store, name);
        const a1 = await created(store, 'a', 1);
        await created(store, 'a', 2);
        await succeed(store, await claim(store, a1.id, 'x', T0 + 2 * MINUTE), T0 + 2 * MINUTE);
        await created(store, 'a', 3);
        await claim(store, (await created(store, 'b', 1)).id);
        const names = ['a', 'b', 'c', 'missing'];
        const runs = await store.listActiveRuns(names);
        for (const name of names) {
          const expected = await store.listRuns({ jobName: name, statuses: ACTIVE_STATUSES });
          expect(runs.filter((run) => run.jobName === name)).toEqual(expected);
        }
        expect(runs.map((run) => run.id).sort()).toEqual([`a.${(T0 + 2 * MINUTE) / 1000}`, `a.${(T0 + 3 * MINUTE) / 1000}`, `b.${(T0 + MINUTE) / 1000}`]);
        expect(await store.listActiveRuns([])).toEqual([]);
      }));
  });
}
