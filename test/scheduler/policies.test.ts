import { describe, expect, it } from 'vitest';
import { MemoryStore, RunAbortedError, Scheduler, type Clock, type RunContext } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { eventsOf, gate, harness, recordEvents, stopWhileAdvancing, T0 } from '../helpers.js';

describe('schedules fire at their nominal times', () => {
  it('runs a cron job at each tick with its context', async () => {
    const { clock, scheduler, log } = harness();
    const seen: Omit<RunContext, 'signal'>[] = [];
    scheduler.register({
      name: 'report',
      schedule: '*/15 * * * *',
      data: { region: 'eu' },
      handler: ({ signal: _signal, ...ctx }) => void seen.push(ctx),
    });
    await scheduler.start();
    await clock.advance('30m');
    expect(seen).toEqual([
      {
        runId: 'report.1767226500',
        jobName: 'report',
        scheduledAt: new Date('2026-01-01T00:15:00Z'),
        interval: { start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-01T00:15:00Z') },
        attempt: 1,
        index: 0,
        completions: 1,
        trigger: 'schedule',
        data: { region: 'eu' },
      },
      expect.objectContaining({ runId: 'report.1767227400', scheduledAt: new Date('2026-01-01T00:30:00Z') }),
    ]);
    expect(eventsOf(log, 'run:started').map((detail) => detail)).toEqual(['report.1767226500#1', 'report.1767227400#1']);
    expect(log.filter((e) => e.event === 'run:started').map((e) => e.at)).toEqual(['2026-01-01T00:15:00.000Z', '2026-01-01T00:30:00.000Z']);
    await scheduler.stop();
  });

  it('runs `every` schedules from the creation time and one-offs once', async () => {
    const { clock, scheduler, log } = harness({ start: '2026-01-01T00:00:00.700Z' });
    scheduler.register({ name: 'tick', schedule: { every: '10s' }, handler: () => {} });
    scheduler.register({ name: 'once', schedule: { at: '2026-01-01T00:00:25Z' }, handler: () => {} });
    await scheduler.start();
    await clock.advance('30s');
    expect(log.filter((e) => e.event === 'run:started').map((e) => `${e.at} ${e.detail}`)).toEqual([
      '2026-01-01T00:00:10.000Z tick.1767225610#1',
      '2026-01-01T00:00:20.000Z tick.1767225620#1',
      '2026-01-01T00:00:25.000Z once.1767225625#1',
      '2026-01-01T00:00:30.000Z tick.1767225630#1',
    ]);
    // The anchor getJob reports is the one the ticks follow: the creation time, to the second.
    expect((await scheduler.getJob('tick'))?.schedule).toEqual({ every: 10_000, anchor: new Date('2026-01-01T00:00:00Z') });
    const once = await scheduler.getJob('once');
    expect(once?.nextRunAt).toBeUndefined();
    expect(once?.succeeded).toBe(1);
    await clock.advance('1h');
    expect(eventsOf(log, 'run:started').filter((d) => d.startsWith('once'))).toHaveLength(1);
    await scheduler.stop();
  });

  it('runs a one-off whose instant passed at once, unless it is older than the starting deadline', async () => {
    const { clock, scheduler, log } = harness({ start: '2026-01-01T12:00:00Z' });
    scheduler.register({ name: 'late', schedule: { at: '2026-01-01T11:55:00Z' }, handler: () => {} });
    scheduler.register({ name: 'too-late', schedule: { at: '2026-01-01T11:00:00Z' }, startingDeadline: '10m', handler: () => {} });
    await scheduler.start();
    await clock.advance('1s');
    expect(eventsOf(log, 'run:started')).toEqual(['late.1767268500#1']);
    expect(eventsOf(log, 'tick:missed')).toEqual(['too-late 2026-01-01T11:00:00.000Z..2026-01-01T11:00:00.000Z starting-deadline']);
    await scheduler.stop();
  });
});

describe('runs created ahead of their tick', () => {
  it('creates an Allow run PLAN_AHEAD_MS before its tick and starts it at the tick, never before', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'a', schedule: '*/10 * * * * *', handler: () => {} });
    scheduler.register({ name: 'f', schedule: '*/10 * * * * *', concurrencyPolicy: 'Forbid', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:00:09.800Z');
    expect(log.map((e) => `${e.at} ${e.event} ${e.detail}`)).toEqual(['2026-01-01T00:00:09.800Z run:created a.1767225610']);
    const job = await scheduler.getJob('a');
    expect(job).toMatchObject({ lastScheduleTime: new Date('2026-01-01T00:00:10Z'), nextRunAt: new Date('2026-01-01T00:00:10Z'), active: ['a.1767225610'] });
    expect((await scheduler.nextRuns('a', 2)).map((d) => d.toISOString())).toEqual(['2026-01-01T00:00:10.000Z', '2026-01-01T00:00:20.000Z']);
    await clock.advanceTo('2026-01-01T00:00:09.999Z');
    expect(eventsOf(log, 'run:started')).toEqual([]);
    await clock.advance('1ms');
    // Forbid decides on the runs active at the tick: its run is created then. Which of the two runs starts first
    // within the same millisecond depends on the order of timers due at once, which is no contract.
    expect(log.filter((e) => e.event !== 'run:succeeded').map((e) => `${e.at} ${e.event} ${e.detail}`).sort()).toEqual([
      '2026-01-01T00:00:09.800Z run:created a.1767225610',
      '2026-01-01T00:00:10.000Z run:created f.1767225610',
      '2026-01-01T00:00:10.000Z run:started a.1767225610#1',
      '2026-01-01T00:00:10.000Z run:started f.1767225610#1',
    ]);
    await scheduler.stop();
  });

  it('a deploy that registers the job with suspend: true cancels its run created ahead', async () => {
    const { clock, store, scheduler, log } = harness();
    scheduler.register({ name: 'a', schedule: '*/10 * * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:00:09.900Z');
    expect(eventsOf(log, 'run:created')).toEqual(['a.1767225610']);
    const next = harness({ clock, store });
    next.scheduler.register({ name: 'a', schedule: '*/10 * * * * *', suspend: true, handler: () => {} });
    await next.scheduler.start();
    expect(eventsOf(next.log, 'run:cancelled')).toEqual(['a.1767225610 suspended']);
    await clock.advanceTo('2026-01-01T00:00:30Z');
    expect([...eventsOf(log, 'run:started'), ...eventsOf(next.log, 'run:started')]).toEqual([]);
    await Promise.all([scheduler.stop(), next.scheduler.stop()]);
  });

  it('claims runs created ahead by ID at their tick, without searching the store for them', async () => {
    const { clock, store, scheduler, log } = harness({ leaseMs: 3_600_000 }); // heartbeats (which also search) stay out of the way
    let searches = 0;
    const findReadyRuns = store.findReadyRuns.bind(store);
    store.findReadyRuns = (input) => {
      searches += 1;
      return findReadyRuns(input);
    };
    for (const name of ['a', 'b', 'c']) scheduler.register({ name, schedule: '*/10 * * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:00:09.900Z');
    const before = searches;
    await clock.advanceTo('2026-01-01T00:00:10Z');
    expect(eventsOf(log, 'run:started')).toEqual(['a.1767225610#1', 'b.1767225610#1', 'c.1767225610#1']);
    expect(searches).toBe(before);
    await scheduler.stop();
  });

  it('pausing before the tick of a run created ahead cancels it; resuming plans the ticks after it', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'a', schedule: '*/10 * * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:00:09.900Z');
    expect(eventsOf(log, 'run:created')).toEqual(['a.1767225610']);
    await scheduler.pause('a');
    expect(eventsOf(log, 'run:cancelled')).toEqual(['a.1767225610 suspended']);
    await clock.advanceTo('2026-01-01T00:00:15Z');
    await scheduler.resume('a');
    await clock.advanceTo('2026-01-01T00:00:20Z');
    expect(eventsOf(log, 'run:started')).toEqual(['a.1767225620#1']);
    expect((await scheduler.listRuns('a')).map((run) => `${run.id} ${run.status}`)).toEqual(['a.1767225620 succeeded', 'a.1767225610 cancelled']);
    await scheduler.stop();
  });
});

describe('a tick that many jobs share is planned ahead of it', () => {
  it('after a wake that took a while, plans the next ticks that much earlier (and half as long again)', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    // Store calls are not tracked (no `track`), so that one can wait on the fake clock: each scheduleRun takes
    // 50 ms, and 256 jobs sharing a tick, 64 at a time, take 200 ms to plan.
    const untracked: Clock = { now: () => clock.now(), setTimer: (f, ms) => clock.setTimer(f, ms), clearTimer: (t) => clock.clearTimer(t), sleep: (d, s) => clock.sleep(d, s) };
    const scheduler = new Scheduler({ clock: untracked, store });
    const log = recordEvents(scheduler, clock);
    const scheduleRun = store.scheduleRun.bind(store);
    store.scheduleRun = async (input) => {
      await clock.sleep(50);
      return scheduleRun(input);
    };
    for (let i = 0; i < 256; i += 1) scheduler.register({ name: `j${String(i).padStart(3, '0')}`, schedule: '*/10 * * * * *', handler: () => {} });
    await scheduler.start();
    const created = (tick: string): string[] =>
      log.filter((e) => e.event === 'run:created' && e.detail.endsWith(`.${Date.parse(tick) / 1000}`)).map((e) => e.at);
    await clock.advanceTo('2026-01-01T00:00:30Z');
    // 00:00:10, the first tick, is planned 200 ms ahead (PLAN_AHEAD_MS): the last runs are created at the tick.
    const first = created('2026-01-01T00:00:10Z');
    expect([first[0], first.at(-1), first.length]).toEqual(['2026-01-01T00:00:09.850Z', '2026-01-01T00:00:10.000Z', 256]);
    // That wake took 200 ms: the next ticks are planned 200 + 1.5 × 200 ms ahead, their runs all created before them.
    const second = created('2026-01-01T00:00:20Z');
    expect([second[0], second.at(-1), second.length]).toEqual(['2026-01-01T00:00:19.550Z', '2026-01-01T00:00:19.700Z', 256]);
    expect(eventsOf(log, 'run:started')).toHaveLength(3 * 256);
    const job = await scheduler.getJob('j000');
    expect(job?.active).toHaveLength(0);
    await scheduler.stop();
  });

  it('a quick wake shortens the lead by a tenth, once: jobs taken early and put back do not count as a wake', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    // Store calls are tracked (the fake clock waits for them) once they no longer wait on it.
    const slow = (): boolean => clock.now() < Date.parse('2026-01-01T00:00:10.500Z');
    const partly: Clock = {
      now: () => clock.now(),
      setTimer: (f, ms) => clock.setTimer(f, ms),
      clearTimer: (t) => clock.clearTimer(t),
      sleep: (d, s) => clock.sleep(d, s),
      track: (work) => (slow() ? work : clock.track(work)),
    };
    const scheduler = new Scheduler({ clock: partly, store });
    const log = recordEvents(scheduler, clock);
    // The first tick's scheduleRun calls take 50 ms each, the later ones no time.
    const scheduleRun = store.scheduleRun.bind(store);
    store.scheduleRun = async (input) => {
      if (slow()) await clock.sleep(50);
      return scheduleRun(input);
    };
    for (let i = 0; i < 256; i += 1) scheduler.register({ name: `j${String(i).padStart(3, '0')}`, schedule: '*/10 * * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advanceTo('2026-01-01T00:00:40Z');
    const firstCreated = (tick: string): string | undefined => log.find((e) => e.event === 'run:created' && e.detail.endsWith(`.${Date.parse(tick) / 1000}`))?.at;
    // 00:00:10 took 200 ms: lead 500 ms. 00:00:20 took no time: lead 450 ms (a tenth less), then 405 ms.
    expect(['10', '20', '30', '40'].map((s) => firstCreated(`2026-01-01T00:00:${s}Z`))).toEqual([
      '2026-01-01T00:00:09.850Z',
      '2026-01-01T00:00:19.500Z',
      '2026-01-01T00:00:29.550Z',
      '2026-01-01T00:00:39.595Z',
    ]);
    await scheduler.stop();
  });
});

describe('concurrency policies', () => {
  it('Allow starts runs for new ticks while earlier runs are still active', async () => {
    const { clock, scheduler } = harness();
    const g = gate();
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: g.handler });
    await scheduler.start();
    await clock.advance('3m');
    expect(g.started).toBe(3);
    expect((await scheduler.getJob('a'))?.active).toHaveLength(3);
    await scheduler.stop({ abort: true });
  });

  it('Forbid skips ticks while a run is active and counts each once', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'f', schedule: '* * * * *', concurrencyPolicy: 'Forbid', handler: () => clock.sleep('150s') });
    await scheduler.start();
    await clock.advance('5m');
    // 00:01 runs until 00:03:30, so 00:02 and 00:03 are skipped; 00:04 runs until 00:06:30, so 00:05 is skipped.
    expect(eventsOf(log, 'run:started')).toEqual(['f.1767225660#1', 'f.1767225840#1']);
    expect(eventsOf(log, 'tick:skipped')).toEqual(['f 2026-01-01T00:02:00.000Z', 'f 2026-01-01T00:03:00.000Z', 'f 2026-01-01T00:05:00.000Z']);
    expect((await scheduler.getJob('f'))?.skipped).toBe(3);
    await stopWhileAdvancing(scheduler, clock);
  });

  it('Replace cancels the active run (signal reason "replaced") and starts the new one', async () => {
    const { clock, scheduler, log } = harness();
    const reasons: unknown[] = [];
    scheduler.register({
      name: 'r',
      schedule: '* * * * *',
      concurrencyPolicy: 'Replace',
      handler: async ({ signal }) => {
        await clock.sleep('90s', signal).catch((error: unknown) => {
          reasons.push(error instanceof RunAbortedError ? error.reason : error);
          throw error;
        });
      },
    });
    await scheduler.start();
    await clock.advance('2m');
    expect(reasons).toEqual(['replaced']);
    expect(eventsOf(log, 'run:cancelled')).toEqual(['r.1767225660 replaced']);
    const runs = await scheduler.listRuns('r');
    expect(runs.map((run) => [run.id, run.status])).toEqual([
      ['r.1767225720', 'running'],
      ['r.1767225660', 'cancelled'],
    ]);
    await scheduler.pause('r'); // suspending creates no more runs but leaves the active one alone
    await clock.advance('90s');
    expect((await scheduler.listRuns('r', { status: 'succeeded' })).map((run) => run.id)).toEqual(['r.1767225720']);
    expect(reasons).toEqual(['replaced']);
    await scheduler.stop();
  });

  it('CatchUp runs every missed tick oldest first, one at a time, each with its own interval', async () => {
    const { clock, scheduler, store } = harness();
    const seen: string[] = [];
    let active = 0;
    let maxActive = 0;
    const definition = {
      name: 'c',
      schedule: '*/10 * * * *',
      concurrencyPolicy: 'CatchUp' as const,
      handler: async (ctx: RunContext) => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        seen.push(`${ctx.scheduledAt.toISOString().slice(11, 16)} [${ctx.interval?.start.toISOString().slice(11, 16)}, ${ctx.interval?.end.toISOString().slice(11, 16)}] at ${clock.date.toISOString().slice(11, 19)}`);
        await clock.sleep('2m');
        active -= 1;
      },
    };
    scheduler.register(definition);
    await scheduler.start();
    await scheduler.stop();
    await clock.set('2026-01-01T00:45:00Z'); // downtime: 00:10 .. 00:40 were missed
    const again = harness({ clock, store });
    again.scheduler.register(definition);
    await again.scheduler.start();
    await clock.advance('15m');
    expect(seen).toEqual([
      '00:10 [00:00, 00:10] at 00:45:00',
      '00:20 [00:10, 00:20] at 00:47:00',
      '00:30 [00:20, 00:30] at 00:49:00',
      '00:40 [00:30, 00:40] at 00:51:00',
      '00:50 [00:40, 00:50] at 00:53:00',
      '01:00 [00:50, 01:00] at 01:00:00',
    ]);
    expect(maxActive).toBe(1);
    await stopWhileAdvancing(again.scheduler, clock);
  });

  it('misses due ticks older than the starting deadline', async () => {
    const { clock, scheduler, store } = harness();
    const definition = { name: 'd', schedule: '0 * * * *', startingDeadline: '5m', handler: () => {} } as const;
    scheduler.register(definition);
    await scheduler.start();
    await scheduler.stop();
    await clock.set('2026-01-01T03:10:00Z');
    const again = harness({ clock, store });
    again.scheduler.register(definition);
    await again.scheduler.start();
    await clock.advance('1h');
    // At 03:10 even the 03:00 tick is older than the 5-minute deadline.
    expect(eventsOf(again.log, 'tick:missed')).toEqual(['d 2026-01-01T01:00:00.000Z..2026-01-01T03:00:00.000Z starting-deadline']);
    expect(eventsOf(again.log, 'run:started')).toEqual(['d.1767240000#1']);
    await again.scheduler.stop();
  });
});

describe('downtime over 30 million missed minutes', () => {
  for (const policy of ['Allow', 'Forbid'] as const) {
    it(`${policy}: runs only the latest tick and reports one missed range`, async () => {
      const { clock, scheduler, store } = harness();
      const definition = { name: 'm', schedule: '* * * * *', concurrencyPolicy: policy, handler: () => {} };
      scheduler.register(definition);
      await scheduler.start();
      await scheduler.stop();
      const restart = Date.parse('2026-01-01T00:00:00Z') + 30_000_000 * 60_000 + 20_000;
      await clock.set(restart);
      const again = harness({ clock, store });
      again.scheduler.register(definition);
      await again.scheduler.start();
      const latest = new Date(restart - 20_000).toISOString();
      expect(eventsOf(again.log, 'tick:missed')).toEqual([
        `m 2026-01-01T00:01:00.000Z..${new Date(restart - 80_000).toISOString()} coalesced`,
      ]);
      expect(again.log.filter((e) => e.event === 'run:started').map((e) => e.detail)).toEqual([`m.${(restart - 20_000) / 1000}#1`]);
      expect((await again.scheduler.getJob('m'))?.lastScheduleTime?.toISOString()).toBe(latest);
      await again.scheduler.stop();
    });
  }

  it('Forbid: with a run still active, skips the latest tick once', async () => {
    const h = harness();
    const { clock, scheduler } = h;
    const log = () => h.log;
    const g = gate();
    const definition = { name: 'm', schedule: '* * * * *', concurrencyPolicy: 'Forbid' as const, handler: g.handler };
    scheduler.register(definition);
    await scheduler.start();
    await scheduler.trigger('m', { idempotencyKey: 'held' });
    await clock.advance('1s');
    expect(g.started).toBe(1);
    const restart = Date.parse('2026-01-01T00:00:00Z') + 30_000_000 * 60_000;
    await clock.set(restart); // the wall clock jumps; timers keep their delays and the heartbeat notices
    await clock.advance('59s');
    expect(eventsOf(log(), 'tick:skipped')).toEqual([`m ${new Date(restart).toISOString()}`]);
    expect(eventsOf(log(), 'tick:missed')).toEqual([`m 2026-01-01T00:01:00.000Z..${new Date(restart - 60_000).toISOString()} coalesced`]);
    expect((await scheduler.getJob('m'))?.skipped).toBe(1);
    g.release();
    await scheduler.stop();
  });
});
