import { describe, expect, it } from 'vitest';
import { copyIndex, copyRun, KEEP, OMIT_ERROR, OMIT_LEASE } from '../../adapters/memory/memory-records.js';
import { jobRecord } from '../../src/job-record.js';
import { MemoryStore } from '../../adapters/memory/index.js';
import type { IndexRecord, JobRecord, RunRecord, StoreNotification } from '../../src/store.js';

// Every field set: a field added to a record type fails to compile here until it is given,
// and then fails below until the copy carries it.
const run: Required<RunRecord> = {
  id: 'j.1',
  jobName: 'j',
  scheduledAt: 1,
  trigger: 'schedule',
  status: 'running',
  attempt: 2,
  createdAt: 3,
  readyAt: 4,
  startedAt: 5,
  finishedAt: 6,
  error: { name: 'E', message: 'm' },
  data: { a: 1 },
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  owner: 'me',
  leaseUntil: 7,
  fence: 8,
  deadlineAt: 9,
  fanOut: { completions: 2, parallelism: 1, retryLimit: 0, succeeded: 0, failed: 0, active: 1 },
  pendingUntil: 10,
  expiresAt: 11,
};
const index: Required<IndexRecord> = {
  runId: 'j.1',
  index: 1,
  status: 'running',
  attempt: 1,
  readyAt: 2,
  startedAt: 3,
  finishedAt: 4,
  error: { name: 'E', message: 'm' },
  owner: 'me',
  leaseUntil: 5,
  fence: 6,
};
const job: Required<JobRecord> = {
  name: 'j',
  schedule: { kind: 'cron', expression: '* * * * *' },
  timezone: 'UTC',
  concurrencyPolicy: 'Allow',
  startingDeadlineMs: 1,
  fanOut: { completions: 2, parallelism: 1 },
  retryLimit: 0,
  pendingTimeoutMs: 2,
  history: { succeeded: 3, failed: 1 },
  suspended: false,
  createdAt: 3,
  cursor: 4,
  lastScheduleTime: 5,
  lastSuccessfulTime: 6,
  succeeded: 7,
  failed: 8,
  skipped: 9,
  scheduledRuns: 10,
  startAt: 11,
  endAt: 12,
  jitterMs: 13,
  maxRuns: 14,
  backfills: [{ id: 'b', next: 1, to: 2 }],
};

describe('memory store records', () => {
  it('copies every field of a run but pendingUntil (every write sets it afresh), leaving out what it is told to', () => {
    const { pendingUntil: _pendingUntil, ...copied } = run;
    expect(copyRun(run, KEEP)).toStrictEqual(copied);
    const { owner: _owner, leaseUntil: _leaseUntil, error: _error, ...bare } = copied;
    expect(copyRun(run, OMIT_LEASE | OMIT_ERROR)).toStrictEqual(bare);
    expect(copyRun(run, KEEP)).not.toBe(run);
  });

  it('copies every field of an index record and of a job', () => {
    expect(copyIndex(index, KEEP)).toStrictEqual(index);
    const { owner: _owner, leaseUntil: _leaseUntil, ...unleased } = index;
    expect(copyIndex(index, OMIT_LEASE)).toStrictEqual(unleased);
    expect(jobRecord(job, job)).toStrictEqual(job);
  });

  it('delivers notifications one by one, in order, to the watchers watching when each was sent', async () => {
    const store = new MemoryStore();
    const seen: string[] = [];
    const note = (who: string) => (notification: StoreNotification) => void seen.push(`${who} ${notification.type} ${'runId' in notification ? notification.runId : ''}`);
    const stopA = store.watch(note('a'));
    await store.upsertJobs([
      { spec: { name: 'j', schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 1, failed: 1 } }, now: 0, initialCursor: 0 },
    ]);
    const created = store.createRun({ run: { id: 'j.m1', jobName: 'j', scheduledAt: 0, trigger: 'manual', readyAt: 0 }, now: 0 });
    stopA(); // after the notification was sent: still delivered to `a`
    store.watch(note('b')); // after it was sent: not delivered to `b`
    await created;
    await store.createRun({ run: { id: 'j.m2', jobName: 'j', scheduledAt: 0, trigger: 'manual', readyAt: 0 }, now: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['a job-changed ', 'a run-ready j.m1', 'b run-ready j.m2']);
  });
});
