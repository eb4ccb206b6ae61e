import { describe, expect, it } from 'vitest';
import type { RunAbortedError } from '../../src/index.js';
import { eventsOf, harness, stopWhileAdvancing } from '../helpers.js';

describe('retries', () => {
  it('waits 10 s, 20 s, 40 s, 80 s, 160 s, 320 s by default, then fails the run', async () => {
    const { clock, scheduler, log } = harness();
    const attempts: number[] = [];
    scheduler.register({
      name: 'flaky',
      schedule: { at: '2026-01-01T00:00:00Z' },
      handler: ({ attempt }) => {
        attempts.push(attempt);
        throw new TypeError(`attempt ${attempt} broke`);
      },
    });
    await scheduler.start();
    await clock.advance('2h');
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(log.filter((e) => e.event === 'run:started').map((e) => e.at.slice(11, 19))).toEqual([
      '00:00:00', '00:00:10', '00:00:30', '00:01:10', '00:02:30', '00:05:10', '00:10:30',
    ]);
    expect(eventsOf(log, 'run:retry')).toHaveLength(6);
    expect(eventsOf(log, 'run:failed')).toEqual(['flaky.1767225600 TypeError: attempt 7 broke']);
    const [run] = await scheduler.listRuns('flaky');
    expect(run).toMatchObject({ status: 'failed', attempt: 7, error: { name: 'TypeError', message: 'attempt 7 broke' } });
    expect((await scheduler.getJob('flaky'))?.failed).toBe(1);
    await scheduler.stop();
  });

  it('follows a custom policy, caps at maxDelay, and does not retry with retry: false', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({
      name: 'custom',
      schedule: { at: '2026-01-01T00:00:00Z' },
      retry: { limit: 3, initialDelay: '1m', factor: 3, maxDelay: '5m' },
      handler: () => Promise.reject(new Error('no')),
    });
    scheduler.register({ name: 'never', schedule: { at: '2026-01-01T00:00:00Z' }, retry: false, handler: () => Promise.reject(new Error('no')) });
    await scheduler.start();
    await clock.advance('1h');
    expect(log.filter((e) => e.event === 'run:started' && e.detail.startsWith('custom')).map((e) => e.at.slice(11, 19))).toEqual([
      '00:00:00', '00:01:00', '00:04:00', '00:09:00',
    ]);
    expect(eventsOf(log, 'run:started').filter((d) => d.startsWith('never'))).toEqual(['never.1767225600#1']);
    expect(eventsOf(log, 'run:failed')).toHaveLength(2);
    await scheduler.stop();
  });

  it('spreads retries by jitter deterministically', async () => {
    const times = async (): Promise<string[]> => {
      const { clock, scheduler, log } = harness();
      scheduler.register({ name: 'j', schedule: { at: '2026-01-01T00:00:00Z' }, retry: { limit: 3, jitter: 0.5 }, handler: () => Promise.reject(new Error('x')) });
      await scheduler.start();
      await clock.advance('10m');
      await scheduler.stop();
      return log.filter((e) => e.event === 'run:started').map((e) => e.at);
    };
    const first = await times();
    expect(first).toHaveLength(4);
    expect(await times()).toEqual(first);
    const gaps = first.slice(1).map((t, i) => Date.parse(t) - Date.parse(first[i]!));
    gaps.forEach((gap, i) => {
      const base = 10_000 * 2 ** i;
      expect(gap).toBeGreaterThanOrEqual(base * 0.5);
      expect(gap).toBeLessThanOrEqual(base * 1.5);
    });
    expect(gaps).not.toEqual([10_000, 20_000, 40_000]);
  });

  it('keeps a run waiting to retry active for Forbid', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({
      name: 'f',
      schedule: '* * * * *',
      concurrencyPolicy: 'Forbid',
      retry: { limit: 1, initialDelay: '90s' },
      handler: ({ attempt }) => (attempt === 1 ? Promise.reject(new Error('first try fails')) : undefined),
    });
    await scheduler.start();
    await clock.advance('3m');
    // 00:01 fails and waits until 00:02:30 to retry: 00:02 is skipped; 00:03 runs.
    expect(eventsOf(log, 'tick:skipped')).toEqual(['f 2026-01-01T00:02:00.000Z']);
    expect(eventsOf(log, 'run:started')).toEqual(['f.1767225660#1', 'f.1767225660#2', 'f.1767225780#1']);
    await scheduler.stop();
  });
});

describe('deadlines', () => {
  it('attemptTimeout aborts one attempt (reason "attempt-timeout") and retries it', async () => {
    const { clock, scheduler, log } = harness();
    const reasons: string[] = [];
    scheduler.register({
      name: 'slow',
      schedule: { at: '2026-01-01T00:00:00Z' },
      attemptTimeout: '1m',
      retry: { limit: 1, initialDelay: '10s' },
      handler: async ({ attempt, signal }) => {
        if (attempt === 2) return;
        await clock.sleep('1h', signal).catch((error: unknown) => {
          reasons.push((error as RunAbortedError).reason);
          throw error;
        });
      },
    });
    await scheduler.start();
    await clock.advance('5m');
    expect(reasons).toEqual(['attempt-timeout']);
    expect(log.filter((e) => e.event !== 'run:created').map((e) => `${e.at.slice(11, 19)} ${e.event}`)).toEqual([
      '00:00:00 run:started',
      '00:01:00 run:retry',
      '00:01:10 run:started',
      '00:01:10 run:succeeded',
    ]);
    await scheduler.stop();
  });

  it('timeout ends the whole run over all attempts (reason "timeout"), without more retries', async () => {
    const { clock, scheduler, log } = harness();
    const reasons: string[] = [];
    scheduler.register({
      name: 'bounded',
      schedule: { at: '2026-01-01T00:00:00Z' },
      timeout: '45s',
      handler: async ({ attempt, signal }) => {
        if (attempt === 1) throw new Error('first fails');
        await clock.sleep('1h', signal).catch((error: unknown) => {
          reasons.push((error as RunAbortedError).reason);
          throw error;
        });
      },
    });
    await scheduler.start();
    await clock.advance('10m');
    expect(reasons).toEqual(['timeout']);
    expect(log.filter((e) => e.event !== 'run:created').map((e) => `${e.at.slice(11, 19)} ${e.event}`)).toEqual([
      '00:00:00 run:started',
      '00:00:00 run:retry',
      '00:00:10 run:started',
      '00:00:45 run:failed',
    ]);
    const [run] = await scheduler.listRuns('bounded');
    expect(run).toMatchObject({ status: 'failed', attempt: 2, error: { name: 'RunTimeoutError' } });
    await scheduler.stop();
  });

  it('fails at once when the next retry would start after the timeout', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 't', schedule: { at: '2026-01-01T00:00:00Z' }, timeout: '5s', handler: () => Promise.reject(new Error('x')) });
    await scheduler.start();
    await clock.advance('1m');
    expect(log.filter((e) => e.event === 'run:failed').map((e) => `${e.at.slice(11, 19)} ${e.detail}`)).toEqual([
      '00:00:00 t.1767225600 RunTimeoutError: run exceeded its timeout (5000 ms)',
    ]);
    await scheduler.stop();
  });
});

describe('history', () => {
  it('keeps the newest succeeded and failed runs per the job limits, and keeps the counters', async () => {
    const { clock, scheduler } = harness();
    scheduler.register({
      name: 'h',
      schedule: '* * * * *',
      retry: false,
      history: { succeeded: 2, failed: 1 },
      handler: ({ scheduledAt }) => (scheduledAt.getUTCMinutes() % 3 === 0 ? Promise.reject(new Error('every third fails')) : undefined),
    });
    await scheduler.start();
    await clock.advance('9m');
    const runs = await scheduler.listRuns('h');
    expect(runs.map((run) => `${run.scheduledAt.toISOString().slice(14, 16)} ${run.status}`)).toEqual(['09 failed', '08 succeeded', '07 succeeded']);
    expect(await scheduler.getJob('h')).toMatchObject({ succeeded: 6, failed: 3 });
    await scheduler.stop();
  });
});

describe('manual runs and backfills', () => {
  it('creates one run per idempotency key, with the trigger data', async () => {
    const { clock, scheduler, log } = harness();
    const seen: unknown[] = [];
    scheduler.register({ name: 'm', schedule: '0 0 1 1 *', data: { from: 'job' }, handler: (ctx) => void seen.push([ctx.runId, ctx.trigger, ctx.data, ctx.interval]) });
    await scheduler.start();
    const first = await scheduler.trigger('m', { idempotencyKey: 'deploy-42', data: { from: 'trigger' } });
    const again = await scheduler.trigger('m', { idempotencyKey: 'deploy-42', data: { from: 'other' } });
    const plain = await scheduler.trigger('m');
    expect(first.id).toBe('m.manual.deploy-42');
    expect(again.id).toBe(first.id);
    expect(plain.id).toMatch(/^m\.manual\.1767225600000-[0-9a-f]{8}$/);
    await clock.advance('1s');
    expect(seen).toEqual([
      ['m.manual.deploy-42', 'manual', { from: 'trigger' }, undefined],
      [plain.id, 'manual', { from: 'job' }, undefined],
    ]);
    expect(eventsOf(log, 'run:created')).toEqual(['m.manual.deploy-42', plain.id]);
    await scheduler.stop();
  });

  it('backfills every tick of a range oldest first, one at a time', async () => {
    const { clock, scheduler } = harness({ start: '2026-01-10T00:00:00Z' });
    const seen: string[] = [];
    let active = 0;
    scheduler.register({
      name: 'daily',
      schedule: '0 6 * * *',
      handler: async ({ scheduledAt, trigger, interval }) => {
        active += 1;
        expect(active).toBe(1);
        seen.push(`${trigger} ${scheduledAt.toISOString().slice(0, 13)} from ${interval?.start.toISOString().slice(0, 13)} at ${clock.date.toISOString().slice(8, 16)}`);
        await clock.sleep('1m');
        active -= 1;
      },
    });
    await scheduler.start();
    await scheduler.backfill('daily', { from: '2026-01-01T00:00:00Z', to: new Date('2026-01-03T06:00:00Z') });
    await clock.advance('10m');
    expect(seen).toEqual([
      'backfill 2026-01-01T06 from 2025-12-31T06 at 10T00:00',
      'backfill 2026-01-02T06 from 2026-01-01T06 at 10T00:01',
      'backfill 2026-01-03T06 from 2026-01-02T06 at 10T00:02',
    ]);
    expect((await scheduler.listRuns('daily')).map((run) => run.id)).toContain('daily.backfill.1767420000');
    await scheduler.stop();
  });
});

describe('suspend, re-registration and removal', () => {
  it('creates no runs while paused, then plans the missed ticks on resume', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'p', schedule: '*/10 * * * *', handler: () => {} });
    await scheduler.start();
    await scheduler.pause('p');
    await clock.advance('35m');
    expect(eventsOf(log, 'run:created')).toEqual([]);
    expect((await scheduler.getJob('p'))?.suspended).toBe(true);
    await scheduler.resume('p');
    await clock.advance('1s');
    expect(eventsOf(log, 'tick:missed')).toEqual(['p 2026-01-01T00:10:00.000Z..2026-01-01T00:20:00.000Z coalesced']);
    expect(eventsOf(log, 'run:created')).toEqual(['p.1767227400']);
    await scheduler.stop();
  });

  it('suspend: true in the definition suspends on every registration', async () => {
    const { clock, scheduler, store } = harness();
    scheduler.register({ name: 's', schedule: '* * * * *', suspend: true, handler: () => {} });
    await scheduler.start();
    await clock.advance('5m');
    expect(await scheduler.listRuns('s')).toEqual([]);
    await scheduler.stop();
    const again = harness({ clock, store });
    again.scheduler.register({ name: 's', schedule: '* * * * *', handler: () => {} });
    await again.scheduler.start();
    expect((await again.scheduler.getJob('s'))?.suspended).toBe(true); // omitted: the flag is left as it is
    await again.scheduler.stop();
  });

  it('keeps cursor, counters and history when re-registered with a new definition', async () => {
    const { clock, scheduler, store } = harness();
    scheduler.register({ name: 'v', schedule: '*/5 * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('10m');
    await scheduler.stop();
    const deploy = harness({ clock, store });
    deploy.scheduler.register({ name: 'v', schedule: '*/2 * * * *', concurrencyPolicy: 'CatchUp', handler: () => {} });
    await deploy.scheduler.start();
    await clock.advance('3m');
    // The new schedule only fulfils ticks after the cursor (00:10): 00:12, not 00:02..00:10.
    expect(eventsOf(deploy.log, 'run:created')).toEqual(['v.1767226320']);
    expect(await deploy.scheduler.getJob('v')).toMatchObject({ succeeded: 3, schedule: '*/2 * * * *', concurrencyPolicy: 'CatchUp' });
    expect(await deploy.scheduler.listRuns('v')).toHaveLength(3);
    await deploy.scheduler.stop();
  });

  it('remove() forgets the job: registered again, it starts from its new creation time', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'x', schedule: '*/5 * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('10m');
    expect(await scheduler.remove('x')).toBe(true);
    expect(await scheduler.getJob('x')).toBeUndefined();
    expect(await scheduler.listRuns('x')).toEqual([]);
    await clock.advance('7m');
    scheduler.register({ name: 'x', schedule: '*/5 * * * *', handler: () => {} });
    await clock.advance('5m');
    expect(eventsOf(log, 'run:created')).toEqual(['x.1767225900', 'x.1767226200', 'x.1767226800']);
    expect(await scheduler.getJob('x')).toMatchObject({ succeeded: 1, createdAt: new Date('2026-01-01T00:17:00Z') });
    expect(await scheduler.remove('x')).toBe(true);
    expect(await scheduler.remove('x')).toBe(false);
    await scheduler.stop();
  });

  it('lists the next ticks and the job state', async () => {
    const { clock, scheduler } = harness();
    scheduler.register({ name: 'n', schedule: '0 9 * * 1-5', timezone: 'America/New_York', handler: () => {} });
    await scheduler.start();
    expect((await scheduler.nextRuns('n', 3)).map((d) => d.toISOString())).toEqual([
      '2026-01-01T14:00:00.000Z',
      '2026-01-02T14:00:00.000Z',
      '2026-01-05T14:00:00.000Z',
    ]);
    await clock.advance('1d');
    expect(await scheduler.getJob('n')).toMatchObject({
      name: 'n',
      schedule: '0 9 * * 1-5',
      timezone: 'America/New_York',
      concurrencyPolicy: 'Allow',
      suspended: false,
      lastScheduleTime: new Date('2026-01-01T14:00:00Z'),
      lastSuccessfulTime: new Date('2026-01-01T14:00:00Z'),
      nextRunAt: new Date('2026-01-02T14:00:00Z'),
      active: [],
      succeeded: 1,
      failed: 0,
      skipped: 0,
    });
    expect((await scheduler.listJobs()).map((job) => job.name)).toEqual(['n']);
    await stopWhileAdvancing(scheduler, clock, '1s');
  });

  it('lists jobs a page at a time, by name after the last one, and every job without options', async () => {
    const { clock, scheduler } = harness();
    for (const name of ['c', 'a', 'e', 'b', 'd']) scheduler.register({ name, schedule: '0 9 * * *', handler: () => {} });
    await scheduler.start();
    const pages: string[][] = [];
    for (let page = await scheduler.listJobs({ limit: 2 }); page.length > 0; page = await scheduler.listJobs({ limit: 2, after: page.at(-1)?.name as string })) {
      pages.push(page.map((job) => job.name));
    }
    expect(pages).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect((await scheduler.listJobs({ after: 'c' })).map((job) => job.name)).toEqual(['d', 'e']);
    expect(await scheduler.listJobs({ limit: 1 })).toEqual([await scheduler.getJob('a')]);
    expect((await scheduler.listJobs()).map((job) => job.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    await stopWhileAdvancing(scheduler, clock, '1s');
  });
});
