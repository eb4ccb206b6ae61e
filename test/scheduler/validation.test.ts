import { describe, expect, it } from 'vitest';
import { JobNotFoundError, MemoryStore, Scheduler, ValidationError, type JobDefinition } from '../../src/index.js';
import { harness } from '../helpers.js';

const ok: JobDefinition = { name: 'job', schedule: '* * * * *', handler: () => {} };

function registerError(definition: Record<string, unknown>): ValidationError {
  const scheduler = new Scheduler();
  try {
    scheduler.register({ ...ok, ...definition } as JobDefinition);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('register() rejects bad definitions, naming the field and the value', () => {
  it.each([
    [{ schedule: '61 * * * *' }, 'schedule', '61 * * * *', /invalid cron expression/],
    [{ schedule: '0 0 30 2 *' }, 'schedule', '0 0 30 2 *', /invalid cron expression/],
    [{ schedule: 'every tuesday' }, 'schedule', 'every tuesday', /invalid cron expression/],
    [{ timezone: 'Mars/Olympus_Mons' }, 'timezone', 'Mars/Olympus_Mons', /IANA time zone/],
    [{ startingDeadline: -5 }, 'startingDeadline', -5, /not negative/],
    [{ startingDeadline: '10 parsecs' }, 'startingDeadline', '10 parsecs', /duration/],
    [{ retry: { initialDelay: '-1s' } }, 'retry.initialDelay', '-1s', /duration/],
    [{ retry: { limit: 1.5 } }, 'retry.limit', 1.5, /integer/],
    [{ retry: { jitter: 2 } }, 'retry.jitter', 2, /between 0 and 1/],
    [{ name: 'has space' }, 'name', 'has space', /letters, digits/],
    [{ name: 'x'.repeat(201) }, 'name', 'x'.repeat(201), /1 to 200/],
    [{ name: '' }, 'name', '', /1 to 200/],
    [{ concurrencyPolicy: 'Sometimes' }, 'concurrencyPolicy', 'Sometimes', /Allow/],
    [{ schedule: { every: '500ms' } }, 'schedule.every', '500ms', /at least 1000 ms/],
    // Text that is no duration is told the accepted forms, not a range.
    [{ schedule: { every: '90 seconds' } }, 'schedule.every', '90 seconds', /^is not a duration: use a number of milliseconds \(500\) or a string of <number><unit> pairs with units ms, s, m, h, d, w \("500ms", "10s", "5m", "2h", "1d", "1h30m"\)$/],
    [{ timeout: '10x' }, 'timeout', '10x', /is not a duration: .*units ms, s, m, h, d, w/],
    [{ schedule: { at: 'yesterday-ish' } }, 'schedule.at', 'yesterday-ish', /ISO-8601 instant/],
    [{ handler: 'not a function' }, 'handler', 'not a function', /function/],
    [{ history: { succeeded: -1 } }, 'history.succeeded', -1, /0 or more/],
    [{ data: { when: new Date(0) } }, 'data.when', new Date(0), /./],
    [{ unknownOption: true }, '', undefined, /unknownOption/],
  ])('%j', (definition, path, value, message) => {
    const error = registerError(definition);
    const issue = error.issues.find((i) => i.path === path);
    expect(issue, JSON.stringify(error.issues)).toBeDefined();
    expect(issue?.message).toMatch(message);
    if (path !== '') expect(issue?.value).toEqual(value);
    expect(error.code).toBe('VALIDATION');
    expect(error.message).toContain('register("');
  });

  it('says which field and value in the message', () => {
    expect(() => new Scheduler().register({ ...ok, timezone: 'Nowhere/Town' })).toThrow(
      'register("job"): timezone: is not a known IANA time zone (got "Nowhere/Town")',
    );
  });

  it('rejects a duplicate registration in one scheduler, and writes nothing on bad input', async () => {
    const store = new MemoryStore();
    const { scheduler } = harness({ store });
    scheduler.register(ok);
    expect(() => scheduler.register(ok)).toThrow(/name: is already registered in this scheduler/);
    expect(() => scheduler.register({ ...ok, name: 'bad', schedule: 'nope' })).toThrow(ValidationError);
    await scheduler.start();
    expect((await store.listJobs()).map((job) => job.name)).toEqual(['job']);
    scheduler.unregister('job');
    expect(() => scheduler.register(ok)).not.toThrow();
    await scheduler.stop();
  });
});

describe('every other public method validates too', () => {
  it('rejects bad arguments before touching the store', async () => {
    const { scheduler } = harness();
    await expect(scheduler.trigger('bad name')).rejects.toThrow(/trigger\(name\): name|must be 1 to 200/);
    await expect(scheduler.trigger('job', { idempotencyKey: 'no spaces allowed' })).rejects.toMatchObject({ issues: [{ path: 'idempotencyKey' }] });
    await expect(scheduler.backfill('job', { from: '2026-02-01', to: '2026-01-01' })).rejects.toMatchObject({ issues: [{ path: 'to' }] });
    await expect(scheduler.listRuns('job', { status: 'done' as never })).rejects.toMatchObject({ issues: [{ path: 'status', value: 'done' }] });
    await expect(scheduler.listRuns('job', { status: ['pending', 'done'] as never })).rejects.toMatchObject({
      issues: [{ path: 'status.1', value: 'done', message: 'must be "pending", "running", "succeeded", "failed" or "cancelled"' }],
    });
    await expect(scheduler.nextRuns('job', 0)).rejects.toBeInstanceOf(ValidationError);
    await expect(scheduler.listJobs({ limit: 0 })).rejects.toMatchObject({ issues: [{ path: 'limit', value: 0 }] });
    await expect(scheduler.listJobs({ limit: 10_001 })).rejects.toMatchObject({ issues: [{ path: 'limit', value: 10_001 }] });
    await expect(scheduler.listJobs({ after: 'no spaces' })).rejects.toMatchObject({ issues: [{ path: 'after', value: 'no spaces' }] });
    await expect(scheduler.listJobs({ page: 2 } as never)).rejects.toThrow(/page/);
    expect(() => new Scheduler({ leaseMs: -1 })).toThrow(/leaseMs/);
    expect(() => new Scheduler({ maxConcurrentRuns: 0 })).toThrow(/maxConcurrentRuns/);
    expect(() => new Scheduler({ bogus: 1 } as never)).toThrow(/bogus/);
  });

  it('throws JobNotFoundError for jobs the store does not have', async () => {
    const { scheduler } = harness();
    await expect(scheduler.trigger('ghost')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(scheduler.pause('ghost')).rejects.toMatchObject({ code: 'JOB_NOT_FOUND', jobName: 'ghost' });
    await expect(scheduler.backfill('ghost', { from: 0, to: 1 })).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(scheduler.nextRuns('ghost', 1)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await scheduler.getJob('ghost')).toBeUndefined();
  });
});
