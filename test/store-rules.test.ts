import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareNewestFirst, pruneHistory } from '../src/store-rules.js';
import type { RunRecord, RunStatus } from '../src/store.js';

/** pruneHistory as first written: sort everything, then slice each kind. */
function reference(finished: readonly RunRecord[], limits: { succeeded: number; failed: number }): RunRecord[] {
  const byRecency = [...finished].sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || compareNewestFirst(a, b));
  const succeeded = byRecency.filter((run) => run.status === 'succeeded');
  const failed = byRecency.filter((run) => run.status !== 'succeeded');
  return [...succeeded.slice(limits.succeeded), ...failed.slice(limits.failed)];
}

const finishedRun = fc.record({
  status: fc.constantFrom<RunStatus>('succeeded', 'failed', 'cancelled'),
  finishedAt: fc.integer({ min: 0, max: 5 }),
  createdAt: fc.integer({ min: 0, max: 3 }),
  scheduledAt: fc.integer({ min: 0, max: 3 }),
});

describe('pruneHistory', () => {
  it('deletes what sorting everything by recency would, in the same order', () => {
    fc.assert(
      fc.property(fc.array(finishedRun, { maxLength: 12 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }), (shapes, succeeded, failed) => {
        const runs: RunRecord[] = shapes.map((shape, i) => ({ ...shape, id: `j.${i}`, jobName: 'j', trigger: 'schedule', attempt: 1, readyAt: 0, fence: 1 }));
        expect(pruneHistory(runs, { succeeded, failed })).toEqual(reference(runs, { succeeded, failed }));
      }),
      { numRuns: 2000 },
    );
  });
});
