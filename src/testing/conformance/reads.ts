/** Conformance: the optional batch read `listRunsOfJobs`, which must agree with `listRuns`. */
import { ACTIVE_STATUSES } from '../../store.js';
import { MINUTE, T0, type Fixture } from './fixtures.js';

export function readTests(fx: Fixture): void {
  const { describe, it, expect, withStore, job, claim, succeed, created } = fx;
  describe('listRunsOfJobs (optional)', () => {
    it('answers for several jobs at once what listRuns answers for each, grouped in the order asked', () =>
      withStore(async (store) => {
        if (store.listRunsOfJobs === undefined) return; // optional: the scheduler falls back to listRuns
        for (const name of ['a', 'b', 'c']) await job(store, name);
        const a1 = await created(store, 'a', 1);
        await created(store, 'a', 2);
        await succeed(store, await claim(store, a1.id, 'x', T0 + 2 * MINUTE), T0 + 2 * MINUTE);
        await created(store, 'a', 3);
        await claim(store, (await created(store, 'b', 1)).id);
        const jobNames = ['b', 'missing', 'a', 'c'];
        const perJob = async (statuses?: typeof ACTIVE_STATUSES) =>
          (await Promise.all(jobNames.map((jobName) => store.listRuns({ jobName, ...(statuses === undefined ? {} : { statuses }) })))).flat();
        expect(await store.listRunsOfJobs({ jobNames })).toEqual(await perJob());
        const active = await store.listRunsOfJobs({ jobNames, statuses: ACTIVE_STATUSES });
        expect(active).toEqual(await perJob(ACTIVE_STATUSES));
        expect(active.map((run) => run.id)).toEqual([`b.${(T0 + MINUTE) / 1000}`, `a.${(T0 + 3 * MINUTE) / 1000}`, `a.${(T0 + 2 * MINUTE) / 1000}`]);
        expect(await store.listRunsOfJobs({ jobNames: [] })).toEqual([]);
      }));
  });
}
