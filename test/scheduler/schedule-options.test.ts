/** The schedule options beyond the seeds, on the fake clock: window, maxRuns, jitter, BufferOne. */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type RunContext } from '../../src/index.js';
import { jitteredReadyAt } from '../../src/planner.js';
import { FakeClock } from '../../src/testing/index.js';
import { eventsOf, gate, harness } from '../helpers.js';

const startedAt = (log: ReturnType<typeof harness>['log']) => log.filter((e) => e.event === 'run:started').map((e) => `${e.at} ${e.detail}`);

describe('startAt and endAt', () => {
  it('runs only the ticks inside the window, then the job is finished', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'w', schedule: '*/5 * * * *', startAt: '2026-01-01T00:10:00Z', endAt: '2026-01-01T00:20:00Z', handler: () => {} });
    await scheduler.start();
    expect((await scheduler.nextRuns('w', 10)).map((d) => d.toISOString())).toEqual([
      '2026-01-01T00:10:00.000Z',
      '2026-01-01T00:15:00.000Z',
      '2026-01-01T00:20:00.000Z',
    ]);
    expect(await scheduler.getJob('w')).toMatchObject({ finished: false, nextRunAt: new Date('2026-01-01T00:10:00Z'), startAt: new Date('2026-01-01T00:10:00Z') });
    await clock.advance('1h');
    expect(startedAt(log)).toEqual([
      '2026-01-01T00:10:00.000Z w.1767226200#1',
      '2026-01-01T00:15:00.000Z w.1767226500#1',
      '2026-01-01T00:20:00.000Z w.1767226800#1',
    ]);
    const info = await scheduler.getJob('w');
    expect(info).toMatchObject({ finished: true, endAt: new Date('2026-01-01T00:20:00Z') });
    expect(info?.nextRunAt).toBeUndefined();
    expect(await scheduler.nextRuns('w', 3)).toEqual([]);
    await scheduler.stop();
  });

  it('applies a changed window from the cursor on: no earlier tick runs again, a later endAt goes on', async () => {
    const store = new MemoryStore();
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const first = harness({ clock, store });
    first.scheduler.register({ name: 'w', schedule: '*/5 * * * *', endAt: '2026-01-01T00:10:00Z', handler: () => {} });
    await first.scheduler.start();
    await clock.advance('12m');
    await first.scheduler.stop();
    expect(eventsOf(first.log, 'run:started')).toEqual(['w.1767225900#1', 'w.1767226200#1']);
    // A new deploy: the window now starts before the cursor and ends later.
    const again = harness({ clock, store });
    again.scheduler.register({ name: 'w', schedule: '*/5 * * * *', startAt: '2026-01-01T00:00:00Z', endAt: '2026-01-01T00:20:00Z', handler: () => {} });
    await again.scheduler.start();
    await clock.advance('20m');
    expect(eventsOf(again.log, 'run:started')).toEqual(['w.1767226500#1', 'w.1767226800#1']);
    expect((await again.scheduler.getJob('w'))?.finished).toBe(true);
    await again.scheduler.stop();
  });

  it('refuses an endAt before startAt', () => {
    const { scheduler } = harness();
    expect(() => scheduler.register({ name: 'w', schedule: '* * * * *', startAt: '2026-02-01', endAt: '2026-01-01', handler: () => {} })).toThrow(
      /endAt: must not be before startAt/,
    );
  });
});

describe('maxRuns', () => {
  it('finishes the job after N scheduled runs; manual runs do not count; the count survives a restart', async () => {
    const store = new MemoryStore();
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const first = harness({ clock, store });
    const definition = { name: 'n', schedule: '* * * * *', maxRuns: 3, handler: () => {} } as const;
    first.scheduler.register(definition);
    await first.scheduler.start();
    await first.scheduler.trigger('n');
    await clock.advance('2m');
    expect(await first.scheduler.getJob('n')).toMatchObject({ scheduledRuns: 2, maxRuns: 3, finished: false });
    expect(await first.scheduler.nextRuns('n', 10)).toEqual([new Date('2026-01-01T00:03:00Z')]);
    await first.scheduler.stop();
    const again = harness({ clock, store });
    again.scheduler.register(definition);
    await again.scheduler.start();
    await clock.advance('10m');
    expect(eventsOf(again.log, 'run:started')).toEqual(['n.1767225780#1']);
    const info = await again.scheduler.getJob('n');
    expect(info).toMatchObject({ scheduledRuns: 3, finished: true, succeeded: 4 });
    expect(info?.nextRunAt).toBeUndefined();
    expect(await again.scheduler.nextRuns('n', 3)).toEqual([]);
    await again.scheduler.stop();
  });

  it('counts a run created ahead of its tick as still to come', async () => {
    const { clock, scheduler } = harness();
    scheduler.register({ name: 'n', schedule: '* * * * *', maxRuns: 1, handler: () => {} });
    await scheduler.start();
    await clock.advance('59.9s'); // the Allow job's run is created 200 ms ahead
    expect(await scheduler.getJob('n')).toMatchObject({ scheduledRuns: 1, finished: false, nextRunAt: new Date('2026-01-01T00:01:00Z') });
    expect(await scheduler.nextRuns('n', 5)).toEqual([new Date('2026-01-01T00:01:00Z')]);
    await clock.advance('1s');
    expect((await scheduler.getJob('n'))?.finished).toBe(true);
    await scheduler.stop();
  });
});

describe('jitter', () => {
  it('starts each scheduled run at its tick plus a delay from its run ID; scheduledAt, ID and interval stay nominal', async () => {
    const { clock, scheduler, log } = harness();
    const seen: RunContext[] = [];
    const starts: number[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      scheduler.register({ name, schedule: '0 * * * *', jitter: '10m', handler: (ctx) => void (seen.push(ctx), starts.push(clock.now())) });
    }
    await scheduler.start();
    await clock.advance('2h10m');
    expect(seen).toHaveLength(8);
    const ticks = seen.map((ctx) => ctx.scheduledAt.toISOString());
    expect(new Set(ticks)).toEqual(new Set(['2026-01-01T01:00:00.000Z', '2026-01-01T02:00:00.000Z']));
    seen.forEach((ctx, i) => {
      const tick = ctx.scheduledAt.getTime();
      expect(ctx.runId).toBe(`${ctx.jobName}.${tick / 1000}`);
      expect(ctx.interval).toEqual({ start: new Date(tick - 3_600_000), end: ctx.scheduledAt });
      expect(starts[i]).toBe(jitteredReadyAt(ctx.runId, tick, 600_000));
      expect(starts[i]).toBeGreaterThanOrEqual(tick);
      expect(starts[i]).toBeLessThan(tick + 600_000);
    });
    // Spread: the jobs that share a tick do not all start at once.
    expect(new Set(starts).size).toBe(8);
    // The runs are created at the nominal tick, ready later.
    const created = log.filter((e) => e.event === 'run:created').map((e) => e.at);
    expect(created.every((at) => at.endsWith(':59:59.800Z') || at.endsWith(':00:00.000Z'))).toBe(true);
    await scheduler.stop();
  });

  it('is the same delay on every instance and every planning of the run', () => {
    expect(jitteredReadyAt('report.1767229200', 1767229200_000, 60_000)).toBe(jitteredReadyAt('report.1767229200', 1767229200_000, 60_000));
    const delays = Array.from({ length: 1000 }, (_, k) => jitteredReadyAt(`job-${k}.1767229200`, 0, 60_000));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(60_000);
    // A thousand jobs spread over the minute: no second holds more than 5% of them.
    const perSecond = new Map<number, number>();
    for (const delay of delays) perSecond.set(Math.floor(delay / 1000), (perSecond.get(Math.floor(delay / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThan(50);
  });

  it('counts the pending timeout from the jittered ready time', async () => {
    const store = new MemoryStore();
    const { clock, scheduler, log } = harness({ store });
    // Registered here, but executed by nobody: this instance stops claiming at once.
    scheduler.register({ name: 'p', schedule: '0 * * * *', jitter: '30m', pendingTimeout: '1m', handler: () => {} });
    scheduler.unregister('p');
    scheduler.register({ name: 'other', schedule: '0 0 1 1 *', handler: () => {} });
    const { scheduler: writer } = harness({ clock, store });
    writer.register({ name: 'p', schedule: '0 * * * *', jitter: '30m', pendingTimeout: '1m', handler: () => {} });
    await writer.start();
    await writer.stop();
    await scheduler.start();
    await clock.advance('1h');
    const readyAt = jitteredReadyAt('p.1767229200', Date.parse('2026-01-01T01:00:00Z'), 1_800_000);
    await clock.advanceTo(readyAt + 59_000);
    expect(eventsOf(log, 'run:failed')).toEqual([]);
    await clock.advance('2s');
    expect(eventsOf(log, 'run:failed')).toEqual(['p.1767229200 PendingTimeoutError: no instance started the run within its pendingTimeout']);
    await scheduler.stop();
  });
});

describe('BufferOne', () => {
  it('keeps the latest tick that came due while a run was active, and runs it as soon as that run finishes', async () => {
    const { clock, scheduler, log } = harness();
    const slow = gate();
    scheduler.register({ name: 'b', schedule: '* * * * *', concurrencyPolicy: 'BufferOne', handler: slow.handler });
    await scheduler.start();
    await clock.advance('1m'); // 00:01 runs
    await clock.advance('3m30s'); // 00:02, 00:03, 00:04 come due while it runs
    expect(eventsOf(log, 'run:started')).toEqual(['b.1767225660#1']);
    slow.release();
    await clock.advance(0);
    // The latest, 00:04, runs at once; 00:02 and 00:03 were replaced by a later tick: missed, not skipped.
    expect(startedAt(log)).toEqual(['2026-01-01T00:01:00.000Z b.1767225660#1', '2026-01-01T00:04:30.000Z b.1767225840#1']);
    expect(eventsOf(log, 'tick:missed')).toEqual(['b 2026-01-01T00:02:00.000Z..2026-01-01T00:03:00.000Z coalesced']);
    expect(eventsOf(log, 'tick:skipped')).toEqual([]);
    expect((await scheduler.getJob('b'))?.skipped).toBe(0);
    slow.release();
    await clock.advance('1m');
    expect(eventsOf(log, 'run:started')).toHaveLength(3); // 00:05 on time
    slow.release();
    await scheduler.stop();
  });
});
