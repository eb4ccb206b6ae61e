import { describe, expect, it } from 'vitest';
import type { RunAbortedError} from '../../src/index.js';
import { MemoryStore, Scheduler } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { FreezableClock, T0, eventsOf, harness, recordEvents, withSweepRuns } from '../helpers.js';

function instance(store: MemoryStore, clock: FakeClock | FreezableClock, instanceId: string, leaseMs = 30_000) {
  const scheduler = new Scheduler({ store, clock, instanceId, leaseMs });
  return { scheduler, log: recordEvents(scheduler, clock) };
}

describe('several schedulers on one store', () => {
  it('plan on one instance only and run each tick exactly once', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const ran: string[] = [];
    const instances = ['a', 'b', 'c'].map((id) => instance(store, clock, id));
    for (const { scheduler } of instances) {
      scheduler.register({ name: 'every-10s', schedule: '*/10 * * * * *', handler: (ctx) => void ran.push(`${ctx.runId}@${scheduler.instanceId}`) });
      scheduler.register({ name: 'forbid', schedule: '* * * * * *', concurrencyPolicy: 'Forbid', handler: () => clock.sleep('2500ms') });
      await scheduler.start();
    }
    await clock.advance('10m');
    expect(instances.filter(({ scheduler }) => scheduler.isPlanner)).toHaveLength(1);
    const ids = ran.map((entry) => entry.split('@')[0]);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
    const created = instances.flatMap(({ log }) => eventsOf(log, 'run:created').filter((id) => id.startsWith('forbid')));
    expect(new Set(created).size).toBe(created.length);
    // Never two active: a run every 3 s (2.5 s handler, the next two ticks skipped... one skipped, one started).
    const forbidRuns = instances.flatMap(({ log }) => log.filter((e) => e.event === 'run:started' && e.detail.startsWith('forbid')).map((e) => Date.parse(e.at)));
    forbidRuns.sort((x, y) => x - y);
    for (let i = 1; i < forbidRuns.length; i += 1) expect(forbidRuns[i]! - forbidRuns[i - 1]!).toBeGreaterThanOrEqual(2_500);
    for (const { scheduler } of instances) {
      const stopping = scheduler.stop();
      await clock.advance('3s');
      await stopping;
    }
  });

  it('executes a run only on an instance that registered its job', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const a = instance(store, clock, 'a');
    const b = instance(store, clock, 'b');
    const ranOn: string[] = [];
    a.scheduler.register({ name: 'only-on-b', schedule: '* * * * *', handler: () => void ranOn.push('a') });
    a.scheduler.unregister('only-on-b');
    b.scheduler.register({ name: 'only-on-b', schedule: '* * * * *', handler: () => void ranOn.push('b') });
    await a.scheduler.start(); // a plans (it is first), b executes
    await b.scheduler.start();
    await clock.advance('5m');
    expect(a.scheduler.isPlanner).toBe(true);
    expect(ranOn).toEqual(['b', 'b', 'b', 'b', 'b']);
    await a.scheduler.stop();
    await b.scheduler.stop();
  });

  it.each([
    ['', new MemoryStore()],
    [' (a store with sweepRuns)', withSweepRuns(new MemoryStore())],
  ])('recovers the run of a vanished owner after its lease expires, as a failed attempt%s', async (_, store) => {
    const clock = new FakeClock(T0);
    const frozen = new FreezableClock(clock);
    const doomed = instance(store, frozen, 'doomed', 30_000);
    const survivor = instance(store, clock, 'survivor', 30_000);
    const attempts: string[] = [];
    const handler = async ({ attempt, signal }: { attempt: number; signal: AbortSignal }) => {
      attempts.push(`${attempt}`);
      await clock.sleep('2m', signal);
    };
    doomed.scheduler.register({ name: 'work', schedule: { at: '2026-01-01T00:00:05Z' }, handler });
    await doomed.scheduler.start();
    await clock.advance('5s');
    expect(doomed.scheduler.runningRuns).toEqual(['work.1767225605']);
    survivor.scheduler.register({ name: 'work', schedule: { at: '2026-01-01T00:00:05Z' }, handler });
    await survivor.scheduler.start();
    frozen.freeze(); // the owner (and planner) goes silent, holding the run
    await clock.advance('29s');
    expect(survivor.scheduler.runningRuns).toEqual([]);
    await clock.advance('20s');
    expect(survivor.scheduler.isPlanner).toBe(true);
    expect(survivor.scheduler.runningRuns).toEqual(['work.1767225605']);
    expect(attempts).toEqual(['1', '2']);
    expect(eventsOf(survivor.log, 'run:retry')).toEqual([expect.stringMatching(/^work\.1767225605 -> /)]);
    const [run] = await survivor.scheduler.listRuns('work');
    expect(run).toMatchObject({ status: 'running', attempt: 2 });
    await clock.advance('2m');
    expect((await survivor.scheduler.listRuns('work'))[0]?.status).toBe('succeeded');
    await survivor.scheduler.stop();
  });

  it('aborts the old owner with "lease-lost" when it comes back after losing its lease', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const paused = new FreezableClock(clock);
    const slow = instance(store, paused, 'slow', 30_000);
    const other = instance(store, clock, 'other', 30_000);
    const reasons: string[] = [];
    for (const { scheduler } of [slow, other]) {
      scheduler.register({
        name: 'w',
        schedule: { at: '2026-01-01T00:00:05Z' },
        handler: async ({ signal }) => {
          await clock.sleep('10m', signal).catch((error: unknown) => {
            reasons.push(`${scheduler.instanceId}:${(error as RunAbortedError).reason}`);
            throw error;
          });
        },
      });
    }
    await slow.scheduler.start();
    await clock.advance('5s');
    await other.scheduler.start();
    paused.freeze(); // a long GC pause, say
    await clock.advance('1m');
    expect(other.scheduler.runningRuns).toEqual(['w.1767225605']);
    paused.thaw();
    await clock.advance('1s');
    expect(reasons).toEqual(['slow:lease-lost']);
    expect(slow.scheduler.runningRuns).toEqual([]);
    await clock.advance('10m');
    expect(await other.scheduler.getJob('w')).toMatchObject({ succeeded: 1, failed: 0 });
    await slow.scheduler.stop();
    await other.scheduler.stop();
  });

  it('fails a recovered run whose retries are used up', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const frozen = new FreezableClock(clock);
    const doomed = instance(store, frozen, 'doomed');
    const survivor = instance(store, clock, 'survivor');
    for (const { scheduler } of [doomed, survivor]) {
      scheduler.register({ name: 'once', schedule: { at: T0 }, retry: false, handler: ({ signal }) => clock.sleep('1h', signal) });
    }
    await doomed.scheduler.start();
    await clock.advance('1s');
    frozen.freeze();
    await survivor.scheduler.start();
    await clock.advance('2m');
    expect(eventsOf(survivor.log, 'run:failed')).toEqual([expect.stringMatching(/^once\.1767225600 LeaseExpiredError/)]);
    await survivor.scheduler.stop();
  });

  it('hands planning to a standby within the lease when the planner dies', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const frozen = new FreezableClock(clock);
    const planner = instance(store, frozen, 'planner', 10_000);
    const standby = instance(store, clock, 'standby', 10_000);
    for (const { scheduler } of [planner, standby]) {
      scheduler.register({ name: 's', schedule: '* * * * * *', handler: () => {} });
      await scheduler.start();
    }
    await clock.advance('5s');
    frozen.freeze();
    await clock.advance('30s');
    const runs = await standby.scheduler.listRuns('s', { limit: 1000 });
    const ticks = new Set(runs.map((run) => run.scheduledAt.getTime()));
    // Every second gets its run: the ticks missed while no one planned are coalesced into the next one.
    expect(standby.scheduler.isPlanner).toBe(true);
    expect(eventsOf(standby.log, 'tick:missed')).toHaveLength(1);
    expect(ticks.has(Date.parse('2026-01-01T00:00:35Z'))).toBe(true);
    await standby.scheduler.stop();
  });
});

describe('executing', () => {
  it('runs at most maxConcurrentRuns handlers at once; the rest wait in the store', async () => {
    const { clock, scheduler } = harness({ maxConcurrentRuns: 2 });
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      scheduler.register({
        name,
        schedule: { at: T0 },
        handler: async () => {
          active += 1;
          peak = Math.max(peak, active);
          order.push(`${name}@${clock.date.toISOString().slice(17, 19)}`);
          await clock.sleep('10s');
          active -= 1;
        },
      });
    }
    await scheduler.start();
    await clock.advance('1s');
    expect(scheduler.runningRuns).toHaveLength(2);
    const pending = await Promise.all(['a', 'b', 'c', 'd'].map((name) => scheduler.listRuns(name, { status: 'pending' })));
    expect(pending.flat()).toHaveLength(2);
    await clock.advance('30s');
    expect(peak).toBe(2);
    expect(order).toEqual(['a@00', 'b@00', 'c@10', 'd@10']);
    await scheduler.stop();
  });

  it('stop() waits for running handlers to finish', async () => {
    const { clock, scheduler } = harness();
    let finished = false;
    scheduler.register({ name: 'w', schedule: { at: T0 }, handler: async () => { await clock.sleep('1m'); finished = true; } });
    await scheduler.start();
    await clock.advance('1s');
    let stopped = false;
    const stopping = scheduler.stop().then(() => { stopped = true; });
    await clock.advance('30s');
    expect(stopped).toBe(false);
    await clock.advance('30s');
    await stopping;
    expect(finished).toBe(true);
    expect((await scheduler.listRuns('w'))[0]?.status).toBe('succeeded');
  });

  it('stop({ abort: true }) aborts handlers with "shutdown" and releases their runs to the next instance', async () => {
    const { clock, scheduler, store } = harness();
    const reasons: string[] = [];
    const handler = async ({ signal, attempt }: { signal: AbortSignal; attempt: number }) => {
      await clock.sleep('1h', signal).catch((error: unknown) => {
        reasons.push(`${(error as RunAbortedError).reason}#${attempt}`);
        throw error;
      });
    };
    scheduler.register({ name: 'long', schedule: { at: T0 }, handler });
    await scheduler.start();
    await clock.advance('1s');
    await scheduler.stop({ abort: true });
    expect(reasons).toEqual(['shutdown#1']);
    expect((await scheduler.listRuns('long'))[0]).toMatchObject({ status: 'pending', attempt: 1 });
    const next = harness({ clock, store });
    next.scheduler.register({ name: 'long', schedule: { at: T0 }, handler });
    await next.scheduler.start();
    await clock.advance('1s');
    expect(next.scheduler.runningRuns).toEqual(['long.1767225600']);
    await next.scheduler.stop({ abort: true });
  });

  it('is disposable with await using', async () => {
    const clock = new FakeClock(T0);
    let ran = 0;
    {
      await using scheduler = new Scheduler({ clock });
      scheduler.register({ name: 'd', schedule: '* * * * * *', handler: () => void (ran += 1) });
      await scheduler.start();
      await clock.advance('3s');
    }
    await clock.advance('3s');
    expect(ran).toBe(3);
    expect(clock.pendingTimers).toBe(0);
  });
});
