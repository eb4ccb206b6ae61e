/** The Redis adapter's codec on hand-built replies: no Redis needed. */
import { expect, it } from 'vitest';
import { decodeIndex, decodeJob, decodeRun } from '../../adapters/redis/codec.js';

const SPEC = { name: 'report', schedule: { kind: 'cron', expression: '0 9 * * 1-5' }, timezone: 'UTC', concurrencyPolicy: 'Forbid', history: { succeeded: 3, failed: 1 } };

function jobReply(fields: Record<string, string>): unknown {
  return [Object.entries({ spec: JSON.stringify(SPEC), suspended: '0', createdAt: '1000', cursor: '2000', ...fields }).flat(), []];
}

it('reads a job back with its spec, counters and only the optional times it has', () => {
  expect(decodeJob(jobReply({ succeeded: '4', lastSuccessfulTime: '1500' }))).toStrictEqual({
    ...SPEC,
    suspended: false,
    createdAt: 1000,
    cursor: 2000,
    succeeded: 4,
    failed: 0,
    skipped: 0,
    scheduledRuns: 0,
    backfills: [],
    lastSuccessfulTime: 1500,
  });
});

it('hands every record on one cron expression the same frozen schedule, so its compiled schedule is found by identity', () => {
  const first = decodeJob(jobReply({ cursor: '2000' }));
  const second = decodeJob(jobReply({ cursor: '3000' }));
  expect(second.schedule).toBe(first.schedule);
  expect(second.history).toBe(first.history);
  expect(Object.isFrozen(first.schedule)).toBe(true);
  expect(second.cursor).toBe(3000);
  // A changed spec is a different text, so a different object.
  const changed = decodeJob([['spec', JSON.stringify({ ...SPEC, schedule: { kind: 'cron', expression: '0 10 * * 1-5' } }), 'createdAt', '1', 'cursor', '1'], []]);
  expect(changed.schedule).toEqual({ kind: 'cron', expression: '0 10 * * 1-5' });
  expect(changed.schedule).not.toBe(first.schedule);
});

it('reads a run back with exactly the optional fields its hash has', () => {
  const base = ['id', 'r.1', 'jobName', 'r', 'scheduledAt', '1000', 'trigger', 'schedule', 'status', 'pending', 'attempt', '1', 'createdAt', '900', 'readyAt', '1000', 'fence', '0'];
  expect(decodeRun(base)).toStrictEqual({ id: 'r.1', jobName: 'r', scheduledAt: 1000, trigger: 'schedule', status: 'pending', attempt: 1, createdAt: 900, readyAt: 1000, fence: 0 });
  const running = decodeRun([...base, 'owner', 'a', 'leaseUntil', '5000', 'data', 'null', 'error', '{"name":"E","message":"m"}', 'completions', '3', 'parallelism', '2', 'retryLimit', '1', 'fanSucceeded', '1', 'fanFailed', '0', 'fanActive', '1']);
  expect(running).toMatchObject({ owner: 'a', leaseUntil: 5000, data: null, error: { name: 'E', message: 'm' } });
  expect(running.fanOut).toStrictEqual({ completions: 3, parallelism: 2, retryLimit: 1, succeeded: 1, failed: 0, active: 1 });
  expect('startedAt' in running).toBe(false);
});

it('reads an index record back with exactly the optional fields it has', () => {
  expect(decodeIndex('r.1', '2', JSON.stringify({ status: 'running', attempt: '1', readyAt: '10', fence: '1', owner: 'a', leaseUntil: '99' }))).toStrictEqual({
    runId: 'r.1',
    index: 2,
    status: 'running',
    attempt: 1,
    readyAt: 10,
    fence: 1,
    owner: 'a',
    leaseUntil: 99,
  });
});
