import { describe, expect, it } from 'vitest';
import { MemoryStore, Scheduler, ValidationError, type RunAbortedError, type RunContext, type Duration } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { FreezableClock, T0, eventsOf, harness, recordEvents, stopWhileAdvancing, withSweepRuns } from '../helpers.js';

const AT = { at: '2026-01-01T00:00:00Z' };
const RUN = 'shards.1767225600';

/** Sleeps on the fake clock; an abort is recorded as `${label}:${reason}` before it propagates. */
async function sleepNoting(clock: FakeClock, duration: Duration, ctx: RunContext, aborted: string[], label = `${ctx.index}`): Promise<void> {
  try {
    await clock.sleep(duration, ctx.signal);
  } catch (error) {
    aborted.push(`${label}:${(ctx.signal.reason as RunAbortedError).reason}`);
    throw error;
  }
}

/** Counts indices running at once, and every (index, attempt) that started. */
function tracker() {
  const state = {
    active: 0,
    maxActive: 0,
    starts: [] as string[],
    enter(ctx: RunContext) {
      state.active += 1;
      state.maxActive = Math.max(state.maxActive, state.active);
      state.starts.push(`${ctx.index}#${ctx.attempt}`);
    },
    leave() {
      state.active -= 1;
    },
  };
  return state;
}

describe('fan-out runs (completions, parallelism)', () => {
  it('calls the handler once per index, at most `parallelism` at once, and succeeds when all have', async () => {
    const { clock, scheduler, log } = harness();
    const seen = tracker();
    const contexts: string[] = [];
    scheduler.register({
      name: 'shards',
      schedule: AT,
      completions: 12,
      parallelism: 4,
      handler: async (ctx) => {
        seen.enter(ctx);
        contexts.push(`${ctx.runId}:${ctx.index}/${ctx.completions}`);
        await clock.sleep(`${10 + ctx.index}s`, ctx.signal); // uneven, so indices finish out of order
        seen.leave();
      },
    });
    await scheduler.start();
    await clock.advance('5s');
    expect(seen.active).toBe(4);
    const [running] = await scheduler.listRuns('shards');
    expect(running).toMatchObject({ status: 'running', completions: { total: 12, parallelism: 4, succeeded: 0, failed: 0, active: 4 } });
    await clock.advance('5m');
    expect(seen.maxActive).toBe(4);
    expect([...seen.starts].sort()).toEqual(Array.from({ length: 12 }, (_, i) => `${i}#1`).sort());
    expect(contexts.filter((c) => c.endsWith('/12'))).toHaveLength(12);
    expect(eventsOf(log, 'run:started')).toHaveLength(12);
    expect(eventsOf(log, 'run:succeeded')).toEqual([RUN]);
    const [run] = await scheduler.listRuns('shards');
    expect(run).toMatchObject({ status: 'succeeded', completions: { total: 12, succeeded: 12, failed: 0, active: 0 } });
    // Ten waves of 4 would end at 00:00:40 if no index waited for another: the last ends once index 11 (21 s) has run.
    expect(run?.finishedAt?.getTime()).toBeLessThanOrEqual(Date.parse('2026-01-01T00:01:00Z'));
    expect((await scheduler.getJob('shards'))?.succeeded).toBe(1);
    await scheduler.stop();
  });

  it('spreads indices over instances, never more than `parallelism` at once across them', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const seen = tracker();
    const ranOn = new Map<string, number>();
    const instances = ['a', 'b', 'c'].map((instanceId) => {
      const scheduler = new Scheduler({ store, clock, instanceId, maxConcurrentRuns: 2 });
      scheduler.register({
        name: 'shards',
        schedule: AT,
        completions: 12,
        parallelism: 4,
        handler: async (ctx) => {
          seen.enter(ctx);
          ranOn.set(instanceId, (ranOn.get(instanceId) ?? 0) + 1);
          await clock.sleep('10s', ctx.signal);
          seen.leave();
        },
      });
      return scheduler;
    });
    for (const scheduler of instances) await scheduler.start();
    await clock.advance('5m');
    expect(seen.maxActive).toBe(4);
    expect(seen.starts).toHaveLength(12);
    expect(new Set(seen.starts).size).toBe(12);
    expect(ranOn.size).toBeGreaterThan(1); // each instance holds at most 2 of the 4
    for (const count of ranOn.values()) expect(count).toBeLessThanOrEqual(8);
    for (const scheduler of instances) await scheduler.stop();
  });

  it('retries a failed index with backoff; the run succeeds once it does', async () => {
    const { clock, scheduler, log } = harness();
    const seen = tracker();
    scheduler.register({
      name: 'shards',
      schedule: AT,
      completions: 3,
      parallelism: 3,
      retry: { limit: 2, initialDelay: '1m' },
      handler: (ctx) => {
        seen.enter(ctx);
        seen.leave();
        if (ctx.index === 1 && ctx.attempt === 1) throw new Error('index 1 broke');
      },
    });
    await scheduler.start();
    await clock.advance('59s');
    expect(eventsOf(log, 'run:succeeded')).toEqual([]);
    await clock.advance('1s');
    expect(seen.starts).toEqual(['0#1', '1#1', '2#1', '1#2']);
    expect(eventsOf(log, 'run:retry')).toEqual([`${RUN} -> 2026-01-01T00:01:00.000Z`]);
    expect(eventsOf(log, 'run:succeeded')).toEqual([RUN]);
    const [run] = await scheduler.listRuns('shards');
    expect(run).toMatchObject({ status: 'succeeded', completions: { succeeded: 3, failed: 1 } });
    await scheduler.stop();
  });

  it('counts retry.limit over the whole run: the failure past it fails the run and aborts its running indices', async () => {
    const { clock, scheduler, log } = harness();
    const aborted: string[] = [];
    const starts: string[] = [];
    scheduler.register({
      name: 'shards',
      schedule: AT,
      completions: 4,
      parallelism: 4,
      retry: { limit: 2, initialDelay: '10s', factor: 1 },
      handler: async (ctx) => {
        starts.push(`${ctx.index}#${ctx.attempt}`);
        if (ctx.index === 1 || ctx.index === 2) throw new Error(`index ${ctx.index} broke`);
        await sleepNoting(clock, '1h', ctx, aborted);
      },
    });
    await scheduler.start();
    await clock.advance('1m');
    // 1#1 and 2#1 fail (2 failures: within limit 2) and retry 10 s later; 1#2 fails third, past the limit, which
    // fails the run: 2#2's failure comes after the run ended and is fenced out, and 0 and 3 are aborted.
    expect(starts).toEqual(['0#1', '1#1', '2#1', '3#1', '1#2', '2#2']);
    expect(eventsOf(log, 'run:retry')).toHaveLength(2);
    expect(eventsOf(log, 'run:failed')).toEqual(['shards.1767225600 Error: index 1 broke']);
    expect(aborted.sort()).toEqual(['0:run-failed', '3:run-failed']);
    const [run] = await scheduler.listRuns('shards');
    expect(run).toMatchObject({ status: 'failed', completions: { failed: 3, active: 0 } });
    expect(scheduler.runningRuns).toEqual([]);
    expect((await scheduler.getJob('shards'))?.failed).toBe(1);
    await scheduler.stop();
  });

  it('fails on the first failure with retry: false', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({
      name: 'shards',
      schedule: AT,
      completions: 3,
      retry: false,
      handler: (ctx) => {
        if (ctx.index === 0) throw new Error('first broke');
      },
    });
    await scheduler.start();
    await clock.advance('1m');
    expect(eventsOf(log, 'run:failed')).toEqual([`${RUN} Error: first broke`]);
    expect(eventsOf(log, 'run:started')).toHaveLength(1); // parallelism 1: nothing else had started
    await scheduler.stop();
  });

  it('applies `timeout` to the whole run, over all indices', async () => {
    const { clock, scheduler, log } = harness();
    const aborted: string[] = [];
    const failures: string[] = [];
    scheduler.on('run:failed', ({ reason }) => failures.push(reason));
    scheduler.register({
      name: 'shards',
      schedule: AT,
      completions: 3,
      parallelism: 1,
      timeout: '1m',
      handler: (ctx) => sleepNoting(clock, '40s', ctx, aborted),
    });
    await scheduler.start();
    await clock.advance('59s');
    expect(eventsOf(log, 'run:failed')).toEqual([]);
    await clock.advance('1s');
    expect(aborted).toEqual(['1:timeout']);
    expect(eventsOf(log, 'run:failed')).toEqual([`${RUN} RunTimeoutError: run exceeded its timeout (60000 ms)`]);
    expect(failures).toEqual(['timeout']);
    await clock.advance('5m');
    expect(eventsOf(log, 'run:started')).toHaveLength(2); // index 2 never started
    await scheduler.stop();
  });

  it('Replace cancels a fan-out run and aborts all of its running indices', async () => {
    const { clock, scheduler, log } = harness();
    const aborted: string[] = [];
    scheduler.register({
      name: 'shards',
      schedule: '* * * * *',
      concurrencyPolicy: 'Replace',
      completions: 4,
      parallelism: 2,
      handler: (ctx) => sleepNoting(clock, '90s', ctx, aborted, `${ctx.runId}.${ctx.index}`),
    });
    await scheduler.start();
    await clock.advance('1m');
    expect(aborted).toEqual([]);
    await clock.advance('1m');
    expect(aborted.sort()).toEqual(['shards.1767225660.0:replaced', 'shards.1767225660.1:replaced']);
    expect(eventsOf(log, 'run:cancelled')).toEqual(['shards.1767225660 replaced']);
    expect(scheduler.runningRuns).toEqual(['shards.1767225720.0', 'shards.1767225720.1']);
    await stopWhileAdvancing(scheduler, clock);
  });

  it('Forbid skips ticks while a fan-out run is active', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({
      name: 'shards',
      schedule: '* * * * *',
      concurrencyPolicy: 'Forbid',
      completions: 3,
      parallelism: 1,
      handler: (ctx) => clock.sleep('50s', ctx.signal),
    });
    await scheduler.start();
    await clock.advance('3m');
    // Run 00:01 takes 150 s (3 × 50 s), so the 00:02 and 00:03 ticks are skipped.
    expect(eventsOf(log, 'run:created')).toEqual(['shards.1767225660']);
    expect(eventsOf(log, 'tick:skipped')).toEqual(['shards 2026-01-01T00:02:00.000Z', 'shards 2026-01-01T00:03:00.000Z']);
    await stopWhileAdvancing(scheduler, clock);
  });

  it('stop({ abort: true }) gives its indices back; another instance adopts them under the same index IDs', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const starts: string[] = [];
    const make = (instanceId: string, maxConcurrentRuns: number) => {
      const scheduler = new Scheduler({ store, clock, instanceId, maxConcurrentRuns });
      scheduler.register({
        name: 'shards',
        schedule: AT,
        completions: 4,
        parallelism: 4,
        handler: async (ctx) => {
          starts.push(`${instanceId}:${ctx.index}#${ctx.attempt}`);
          await clock.sleep('1m', ctx.signal);
        },
      });
      return scheduler;
    };
    const a = make('a', 4);
    await a.start();
    await clock.advance('1s');
    expect(a.runningRuns).toEqual([`${RUN}.0`, `${RUN}.1`, `${RUN}.2`, `${RUN}.3`]);
    await a.stop({ abort: true });
    const b = make('b', 4);
    await b.start();
    await clock.advance('2m');
    expect(starts.filter((s) => s.startsWith('b:')).sort()).toEqual(['b:0#1', 'b:1#1', 'b:2#1', 'b:3#1']);
    expect(await store.listIndices(RUN)).toHaveLength(4);
    expect((await b.listRuns('shards'))[0]).toMatchObject({ status: 'succeeded', completions: { succeeded: 4, failed: 0 } });
    await b.stop();
  });

  it('retries the index of an instance that went silent, on a survivor, as a failed attempt', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const frozen = new FreezableClock(clock);
    const starts: string[] = [];
    const make = (instanceId: string, instanceClock: FakeClock | FreezableClock) => {
      const scheduler = new Scheduler({ store, clock: instanceClock, instanceId, maxConcurrentRuns: 1, leaseMs: 30_000 });
      scheduler.register({
        name: 'shards',
        schedule: AT,
        completions: 4,
        parallelism: 2,
        handler: async (ctx) => {
          starts.push(`${instanceId}:${ctx.index}#${ctx.attempt}`);
          // The doomed instance never finishes, as a dead process would not (its timers are frozen, not the shared clock).
          await clock.sleep(instanceId === 'doomed' ? '1d' : '10s', ctx.signal);
        },
      });
      return { scheduler, log: recordEvents(scheduler, clock) };
    };
    const doomed = make('doomed', frozen);
    const survivor = make('survivor', clock);
    await doomed.scheduler.start();
    await survivor.scheduler.start();
    await clock.advance('1s');
    const doomedIndex = doomed.scheduler.runningRuns[0];
    expect(doomedIndex).toMatch(/^shards\.1767225600\.[01]$/);
    frozen.freeze(); // holds its index lease, silently
    await clock.advance('2m');
    const survivorStarts = starts.filter((s) => s.startsWith('survivor:'));
    const lost = Number(doomedIndex?.split('.').at(-1));
    expect(survivorStarts).toContain(`survivor:${lost}#2`);
    const [run] = await survivor.scheduler.listRuns('shards');
    expect(run).toMatchObject({ status: 'succeeded', completions: { succeeded: 4, failed: 1 } });
    expect(eventsOf(survivor.log, 'run:retry')).toHaveLength(1);
    const indices = await store.listIndices(RUN);
    expect(indices.map((index) => `${index.index}:${index.status}`)).toEqual(['0:succeeded', '1:succeeded', '2:succeeded', '3:succeeded']);
    expect(indices[lost]).toMatchObject({ attempt: 2, status: 'succeeded' }); // the same record, adopted
    await survivor.scheduler.stop();
  });

  it('caps parallelism at completions, and validates both', () => {
    const { scheduler } = harness();
    const handler = () => undefined;
    expect(() => scheduler.register({ name: 'a', schedule: AT, completions: 0, handler })).toThrow(ValidationError);
    expect(() => scheduler.register({ name: 'a', schedule: AT, completions: 0, handler })).toThrow(/completions.*must be 1 or more.*0/s);
    expect(() => scheduler.register({ name: 'b', schedule: AT, completions: 2, parallelism: 1.5, handler })).toThrow(/parallelism.*integer.*1\.5/s);
    expect(() => scheduler.register({ name: 'c', schedule: AT, completions: 10_001, handler })).toThrow(/completions.*at most 10000/s);
    expect(() => scheduler.register({ name: 'd', schedule: AT, completions: 2, parallelism: 8, handler })).not.toThrow();
  });

  it('reports the capped parallelism on the run', async () => {
    const { clock, scheduler } = harness();
    scheduler.register({ name: 'shards', schedule: AT, completions: 2, parallelism: 8, handler: () => undefined });
    await scheduler.start();
    await clock.advance('1s');
    expect((await scheduler.listRuns('shards'))[0]?.completions).toEqual({ total: 2, parallelism: 2, succeeded: 2, failed: 0, active: 0 });
    await scheduler.stop();
  });
});

describe('pendingTimeout', () => {
  it.each([
    ['', new MemoryStore()],
    [' (a store with sweepRuns)', withSweepRuns(new MemoryStore())],
  ])('fails a run no live instance has registered, on time, with reason pending-timeout%s', async (_, store) => {
    const clock = new FakeClock(T0);
    const gone = new Scheduler({ store, clock, instanceId: 'gone' });
    // 3 s: shorter than the heartbeat (leaseMs / 3 = 10 s), so only the planner's own timer fails it on time.
    // Ticks at second 5, off the heartbeat's 10 s grid.
    gone.register({ name: 'report', schedule: '5 */5 * * * *', pendingTimeout: '3s', handler: () => undefined });
    await gone.start();
    await gone.stop();
    // The planner below has not registered `report`: it creates the runs, but nobody can execute them.
    const planner = new Scheduler({ store, clock, instanceId: 'planner' });
    const log = recordEvents(planner, clock);
    const failed: string[] = [];
    planner.on('run:failed', ({ run, reason }) => failed.push(`${run.id} ${reason}`));
    await planner.start();
    await clock.advance('7s');
    expect(eventsOf(log, 'run:created')).toEqual(['report.1767225605']);
    expect(failed).toEqual([]);
    await clock.advance('1s');
    expect(failed).toEqual(['report.1767225605 pending-timeout']);
    const [run] = await planner.listRuns('report');
    expect(run).toMatchObject({ status: 'failed', error: { name: 'PendingTimeoutError' } });
    expect((await planner.getJob('report'))?.failed).toBe(1);
    await planner.stop();
  });

  it('does not fail a run that is claimed in time, nor an index waiting only for parallelism', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.register({ name: 'quick', schedule: '* * * * *', pendingTimeout: '1s', handler: () => clock.sleep('5m') });
    scheduler.register({
      name: 'shards',
      schedule: AT,
      completions: 3,
      parallelism: 1,
      pendingTimeout: '30s',
      handler: (ctx) => clock.sleep('2m', ctx.signal),
    });
    await scheduler.start();
    await clock.advance('10m');
    expect(eventsOf(log, 'run:failed')).toEqual([]);
    expect((await scheduler.listRuns('shards'))[0]).toMatchObject({ status: 'succeeded' });
    await stopWhileAdvancing(scheduler, clock);
  });

  it('times out a run waiting behind a busy instance (it was ready, and nobody started it)', async () => {
    const { clock, scheduler, log } = harness({ maxConcurrentRuns: 1 });
    scheduler.register({ name: 'long', schedule: AT, handler: () => clock.sleep('10m') });
    scheduler.register({ name: 'waiting', schedule: { at: '2026-01-01T00:00:01Z' }, pendingTimeout: '1m', handler: () => undefined });
    await scheduler.start();
    await clock.advance('1m');
    expect(eventsOf(log, 'run:failed')).toEqual([]);
    await clock.advance('1s');
    expect(eventsOf(log, 'run:failed')).toEqual(['waiting.1767225601 PendingTimeoutError: no instance started the run within its pendingTimeout']);
    await stopWhileAdvancing(scheduler, clock);
  });

  it('validates the duration', () => {
    const { scheduler } = harness();
    expect(() => scheduler.register({ name: 'a', schedule: AT, pendingTimeout: '-1s', handler: () => undefined })).toThrow(/pendingTimeout.*-1s/s);
    expect(() => scheduler.register({ name: 'a', schedule: AT, pendingTimeout: 0, handler: () => undefined })).toThrow(/pendingTimeout.*at least 1 ms/s);
  });
});

describe('history.ttl', () => {
  it('deletes finished runs once they are older than the TTL, besides the count limits', async () => {
    const { clock, scheduler } = harness({ leaseMs: 3_000 }); // a heartbeat every second
    scheduler.register({ name: 'minutely', schedule: '* * * * *', history: { succeeded: 100, ttl: '5m' }, handler: () => undefined });
    scheduler.register({ name: 'kept', schedule: '* * * * *', history: { succeeded: 100 }, handler: () => undefined });
    await scheduler.start();
    await clock.advance('20m30s');
    const ids = (await scheduler.listRuns('minutely')).map((run) => run.scheduledAt.toISOString().slice(11, 16));
    // Runs finished at 00:15 .. 00:20 are younger than 5 min (+ one heartbeat); older ones are gone.
    expect(ids).toEqual(['00:20', '00:19', '00:18', '00:17', '00:16']);
    expect(await scheduler.listRuns('kept')).toHaveLength(20);
    await scheduler.stop();
  });

  it('deletes a fan-out run with its index records', async () => {
    const { clock, scheduler, store } = harness({ leaseMs: 3_000 });
    scheduler.register({ name: 'shards', schedule: AT, completions: 3, history: { succeeded: 5, ttl: '1m' }, handler: () => undefined });
    await scheduler.start();
    await clock.advance('30s');
    expect(await store.listIndices(RUN)).toHaveLength(3);
    await clock.advance('1m');
    expect(await scheduler.listRuns('shards')).toEqual([]);
    expect(await store.listIndices(RUN)).toEqual([]);
    await scheduler.stop();
  });

  it('validates the duration', () => {
    const { scheduler } = harness();
    expect(() => scheduler.register({ name: 'a', schedule: AT, history: { ttl: 'soon' as Duration }, handler: () => undefined })).toThrow(/history\.ttl.*soon/s);
  });
});
