import { describe, expect, it } from 'vitest';
import { MemoryStore, type Store } from '../../src/index.js';
import { eventsOf, harness } from '../helpers.js';

const started = (log: ReturnType<typeof harness>['log']) => log.filter((e) => e.event === 'run:started').map((e) => `${e.detail} at ${e.at}`);

describe('daylight saving time, end to end', () => {
  it('fires a time skipped by spring-forward once, shifted by the gap (02:30 -> 03:30 EDT)', async () => {
    const { clock, scheduler, log } = harness({ start: '2026-03-07T12:00:00Z' });
    scheduler.register({ name: 'ny', schedule: '30 2 * * *', timezone: 'America/New_York', handler: () => {} });
    await scheduler.start();
    await clock.advance('2d');
    expect(started(log)).toEqual([
      'ny.1772955000#1 at 2026-03-08T07:30:00.000Z', // 03:30 EDT on the spring-forward day
      'ny.1773037800#1 at 2026-03-09T06:30:00.000Z', // 02:30 EDT the day after
    ]);
    await scheduler.stop();
  });

  it('fires a repeated time once on fall-back, but an hourly job in both hours', async () => {
    const { clock, scheduler, log } = harness({ start: '2026-11-01T03:00:00Z' });
    scheduler.register({ name: 'fixed', schedule: '30 1 * * *', timezone: 'America/New_York', handler: () => {} });
    scheduler.register({ name: 'hourly', schedule: '0 * * * *', timezone: 'America/New_York', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-11-01T08:00:00Z');
    expect(started(log)).toEqual([
      'hourly.1793505600#1 at 2026-11-01T04:00:00.000Z', // 00:00 EDT
      'hourly.1793509200#1 at 2026-11-01T05:00:00.000Z', // 01:00 EDT
      'fixed.1793511000#1 at 2026-11-01T05:30:00.000Z', // 01:30 EDT, the first of the two 01:30s
      'hourly.1793512800#1 at 2026-11-01T06:00:00.000Z', // 01:00 EST, the repeated hour
      'hourly.1793516400#1 at 2026-11-01T07:00:00.000Z', // 02:00 EST
      'hourly.1793520000#1 at 2026-11-01T08:00:00.000Z',
    ]);
    await scheduler.stop();
  });

  it('plans correctly after downtime across a DST change', async () => {
    const store: Store = new MemoryStore();
    const first = harness({ start: '2026-10-31T12:00:00Z', store: store as MemoryStore });
    const definition = { name: 'hourly', schedule: '0 * * * *', timezone: 'Europe/Berlin', handler: () => {} };
    first.scheduler.register(definition);
    await first.scheduler.start();
    await first.clock.advanceTo('2026-10-31T20:30:00Z');
    await first.scheduler.stop();
    // Berlin fell back on 2026-10-25; this downtime spans a plain night. The range must be exact anyway.
    await first.clock.set('2026-11-01T10:30:00Z');
    const second = harness({ clock: first.clock, store: store as MemoryStore });
    second.scheduler.register(definition);
    await second.scheduler.start();
    expect(eventsOf(second.log, 'tick:missed')).toEqual(['hourly 2026-10-31T21:00:00.000Z..2026-11-01T09:00:00.000Z coalesced']);
    expect(eventsOf(second.log, 'run:created')).toEqual(['hourly.1793527200']);
    await second.scheduler.stop();
  });

  it('plans correctly after downtime across the US fall-back', async () => {
    const first = harness({ start: '2026-10-31T12:00:00Z' });
    const definition = { name: 'daily', schedule: '30 1 * * *', timezone: 'America/New_York', concurrencyPolicy: 'CatchUp' as const, handler: () => {} };
    first.scheduler.register(definition);
    await first.scheduler.start();
    await first.scheduler.stop();
    await first.clock.set('2026-11-03T12:00:00Z');
    const second = harness({ clock: first.clock, store: first.store });
    second.scheduler.register(definition);
    await second.scheduler.start();
    await first.clock.advance('1m');
    // CatchUp: each missed day once, 01:30 EDT on Nov 1 (the first of the two 01:30s), then 01:30 EST.
    expect(eventsOf(second.log, 'run:created')).toEqual(['daily.1793511000', 'daily.1793601000', 'daily.1793687400']);
    await second.scheduler.stop();
  });
});

describe('wall-clock jumps', () => {
  it('after a backwards jump, never re-runs ticks and never starts a run before its nominal time', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'm', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:05:30Z');
    await clock.set('2026-01-01T00:02:00Z');
    await clock.advanceTo('2026-01-01T00:07:30Z');
    const runs = log.filter((e) => e.event === 'run:started');
    expect(runs.map((e) => e.detail)).toEqual(['m.1767225660#1', 'm.1767225720#1', 'm.1767225780#1', 'm.1767225840#1', 'm.1767225900#1', 'm.1767225960#1', 'm.1767226020#1']);
    for (const run of runs) {
      const scheduledAt = Number(run.detail.slice(2, 12)) * 1000;
      expect(Date.parse(run.at)).toBeGreaterThanOrEqual(scheduledAt);
    }
    await scheduler.stop();
  });

  it('after a forward jump, coalesces what it skipped over', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'm', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:01:30Z');
    await clock.set('2026-01-01T03:00:30Z');
    await clock.advance('29s');
    expect(eventsOf(log, 'tick:missed')).toEqual(['m 2026-01-01T00:02:00.000Z..2026-01-01T02:59:00.000Z coalesced']);
    expect(eventsOf(log, 'run:created')).toEqual(['m.1767225660', 'm.1767236400']);
    await scheduler.stop();
  });
});
