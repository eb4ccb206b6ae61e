/** UpcomingRuns: runs expected later are handed back when their time comes; searches likewise; one timer. */
import { expect, it } from 'vitest';
import { FakeClock } from '../src/testing/fake-clock.js';
import { UpcomingRuns } from '../src/upcoming-runs.js';

function upcoming(clock: FakeClock) {
  const calls: string[] = [];
  const runs = new UpcomingRuns(clock, {
    ready: (runId, jobName, now) => calls.push(`${now} ready ${runId} ${jobName}`),
    search: () => calls.push(`${clock.now()} search`),
  });
  return { runs, calls };
}

it('hands each expected run back once, when its time comes, earliest first, on one timer', async () => {
  const clock = new FakeClock(0);
  const { runs, calls } = upcoming(clock);
  runs.expect('b', 'job-b', 300);
  runs.expect('a', 'job-a', 100);
  runs.searchFrom(200);
  runs.searchFrom(250); // a later search time: the earlier one stands
  expect(clock.pendingTimers).toBe(1);
  await clock.advance(1_000);
  expect(calls).toEqual(['100 ready a job-a', '200 search', '300 ready b job-b']);
});

it('clear forgets every appointment', async () => {
  const clock = new FakeClock(0);
  const { runs, calls } = upcoming(clock);
  runs.expect('a', 'job-a', 100);
  runs.searchFrom(50);
  runs.clear();
  expect(clock.pendingTimers).toBe(0);
  await clock.advance(1_000);
  expect(calls).toEqual([]);
});

it('hands back the runs of the jobs it is told to take first before the others due at the same time', async () => {
  const clock = new FakeClock(0);
  const calls: string[] = [];
  const runs = new UpcomingRuns(clock, {
    ready: (runId) => calls.push(runId),
    search: () => {},
    first: (jobName) => jobName.startsWith('mine'),
  });
  for (const [runId, jobName] of [['a', 'theirs-a'], ['b', 'mine-b'], ['c', 'theirs-c'], ['d', 'mine-d']]) runs.expect(runId as string, jobName as string, 100);
  await clock.advance(1_000);
  expect(calls).toEqual(['b', 'd', 'a', 'c']);
});
