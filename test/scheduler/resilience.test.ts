import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore, StoreError } from '../../src/index.js';
import { eventsOf, flakyStore, harness, stopWhileAdvancing } from '../helpers.js';

describe('failures never reach the app', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it('reports an unreachable store, keeps trying, and resumes under the policy rules', async () => {
    const flaky = flakyStore();
    const { clock, scheduler, log } = harness({ store: flaky.store as MemoryStore });
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('2m');
    flaky.setDown(true);
    await clock.advance('5m');
    expect(flaky.failures).toBeGreaterThan(0);
    expect(eventsOf(log, 'error').length).toBeGreaterThan(0);
    expect(eventsOf(log, 'error')[0]).toMatch(/store operation [\w.]+ failed: ECONNREFUSED/);
    flaky.setDown(false);
    await clock.advance('30s');
    // Back after 00:07: the ticks at 00:03..00:06 are coalesced into 00:07 (Allow).
    expect(eventsOf(log, 'tick:missed')).toEqual(['a 2026-01-01T00:03:00.000Z..2026-01-01T00:06:00.000Z coalesced']);
    expect(eventsOf(log, 'run:succeeded')).toEqual(['a.1767225660', 'a.1767225720', 'a.1767226020']);
    await scheduler.stop();
  });

  it('start() does not reject when the store is down; the job is written once it is back', async () => {
    const flaky = flakyStore();
    flaky.setDown(true);
    const { clock, scheduler, log } = harness({ store: flaky.store as MemoryStore });
    scheduler.register({ name: 'late', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    expect(eventsOf(log, 'error')).toContainEqual(expect.stringMatching(/store operation init failed/));
    flaky.setDown(false);
    await clock.advance('1m');
    expect(eventsOf(log, 'run:succeeded')).toEqual(['late.1767225660']);
    await scheduler.stop();
  });

  it('rejects calls the app makes itself with a StoreError', async () => {
    const flaky = flakyStore();
    const { scheduler } = harness({ store: flaky.store as MemoryStore });
    flaky.setDown(true);
    await expect(scheduler.listJobs()).rejects.toBeInstanceOf(StoreError);
    await expect(scheduler.getJob('x')).rejects.toMatchObject({ code: 'STORE', operation: 'getJob' });
  });

  it('a throwing handler fails its run; a throwing listener is reported and changes nothing', async () => {
    const { clock, scheduler, log } = harness();
    scheduler.on('run:started', () => {
      throw new Error('listener bug');
    });
    scheduler.register({ name: 'sync-throw', schedule: '* * * * *', retry: false, handler: () => { throw new RangeError('handler bug'); } });
    scheduler.register({ name: 'ok', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('2m');
    expect(eventsOf(log, 'run:failed')).toEqual(['sync-throw.1767225660 RangeError: handler bug', 'sync-throw.1767225720 RangeError: handler bug']);
    expect(eventsOf(log, 'run:succeeded')).toEqual(['ok.1767225660', 'ok.1767225720']);
    expect(eventsOf(log, 'error').filter((message) => message.includes('listener bug'))).toHaveLength(4);
    await scheduler.stop();
  });

  it('an async listener that rejects is reported like one that throws, on every event, and changes nothing', async () => {
    const { clock, scheduler, log } = harness();
    const events = ['run:created', 'run:started', 'run:succeeded', 'run:failed'] as const;
    for (const event of events) {
      scheduler.on(event, async () => {
        await Promise.resolve();
        throw new Error(`async ${event} listener bug`);
      });
    }
    // A rejection that is not even an Error, and a thenable whose `then` throws when read.
    scheduler.on('run:succeeded', () => Promise.reject(Symbol('odd reason')));
    scheduler.on('run:succeeded', () => ({ get then(): never { throw new Error('then getter bug'); } }));
    scheduler.register({ name: 'ok', schedule: '* * * * *', handler: () => {} });
    scheduler.register({ name: 'bad', schedule: '* * * * *', retry: false, handler: () => { throw new Error('handler bug'); } });
    await scheduler.start();
    await clock.advance('1m');
    expect(eventsOf(log, 'run:succeeded')).toEqual(['ok.1767225660']);
    expect(eventsOf(log, 'run:failed')).toEqual(['bad.1767225660 Error: handler bug']);
    const errors = eventsOf(log, 'error');
    for (const event of ['run:created', 'run:started'] as const) {
      expect(errors.filter((message) => message === `a "${event}" listener rejected: async ${event} listener bug`)).toHaveLength(2);
    }
    expect(errors).toContain('a "run:succeeded" listener rejected: async run:succeeded listener bug');
    expect(errors).toContain('a "run:failed" listener rejected: async run:failed listener bug');
    expect(errors).toContain('a "run:succeeded" listener rejected: Symbol(odd reason)');
    expect(errors).toContain('a "run:succeeded" listener threw: then getter bug');
    expect(errors).toHaveLength(8);
    await scheduler.stop();
  });

  it('survives an error listener that rejects (the process guard fails this test on an unhandled rejection)', async () => {
    const { clock, scheduler } = harness();
    let calls = 0;
    scheduler.on('error', async () => {
      calls += 1;
      throw new Error('async error listener bug');
    });
    scheduler.on('run:succeeded', async () => {
      throw new Error('listener bug');
    });
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('2m');
    expect(calls).toBe(2);
    expect((await scheduler.getJob('a'))?.succeeded).toBe(2);
    await scheduler.stop();
  });

  it('survives an error listener that throws', async () => {
    const flaky = flakyStore();
    const { clock, scheduler } = harness({ store: flaky.store as MemoryStore });
    scheduler.on('error', () => {
      throw new Error('error listener bug');
    });
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    flaky.setDown(true);
    await clock.advance('1m');
    flaky.setDown(false);
    await clock.advance('1m');
    // 00:01 could not be planned while the store was down: it runs late, then 00:02 on time.
    expect((await scheduler.listRuns('a')).map((run) => run.id)).toEqual(['a.1767225720', 'a.1767225660']);
    await scheduler.stop();
  });
});

describe('a store that sends no notifications', () => {
  it('still runs everything, found by the heartbeat (leaseMs / 3)', async () => {
    const inner = new MemoryStore();
    const silent = new Proxy(inner, {
      get(target, property, receiver) {
        if (property === 'watch') return () => () => {};
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { clock, scheduler, log } = harness({ store: silent as MemoryStore, leaseMs: 3_000 });
    scheduler.register({
      name: 'c',
      schedule: '*/10 * * * * *',
      concurrencyPolicy: 'CatchUp',
      handler: () => clock.sleep('15s'),
    });
    await scheduler.start();
    await clock.advance('2m');
    const started = log.filter((e) => e.event === 'run:started');
    // Each run takes 15 s, so CatchUp falls behind; runs stay in tick order and never overlap.
    const ticks = started.map((e) => Number(e.detail.slice(2, 12)));
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.length).toBeGreaterThanOrEqual(7);
    for (let i = 1; i < started.length; i += 1) {
      expect(Date.parse(started[i]!.at) - Date.parse(started[i - 1]!.at)).toBeGreaterThanOrEqual(15_000);
    }
    await stopWhileAdvancing(scheduler, clock, '20s');
  });
});

describe('stopping and writing outcomes under a slow or failing store', () => {
  it('starts no handler after stop() was called, even when the run appears while stopping', async () => {
    const inner = new MemoryStore();
    let releasePlanning: () => void = () => {};
    const planningHeld = new Promise<void>((resolve) => {
      releasePlanning = resolve;
    });
    let reachedPlanning: () => void = () => {};
    const planningReached = new Promise<void>((resolve) => {
      reachedPlanning = resolve;
    });
    const slow = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === 'scheduleRun') {
          return async (...args: unknown[]) => {
            reachedPlanning();
            await planningHeld; // the planner is inside scheduleRun when stop() is called
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { clock, scheduler } = harness({ store: slow as MemoryStore });
    let started = 0;
    scheduler.register({ name: 'j', schedule: '* * * * * *', handler: () => void (started += 1) });
    await scheduler.start();
    const advancing = clock.advance('1s'); // reaches the tick; planning then waits on the store
    await planningReached;
    const stopping = scheduler.stop();
    releasePlanning();
    await advancing;
    await stopping;
    await clock.advance('5s');
    expect(started).toBe(0);
    expect((await inner.listRuns({ jobName: 'j' })).map((run) => run.status)).toEqual(['pending']);
  });

  it('waits for a claim on its way when stop() is called, and gives the run back before resolving', async () => {
    const inner = new MemoryStore();
    let releaseClaim: () => void = () => {};
    const claimHeld = new Promise<void>((resolve) => {
      releaseClaim = resolve;
    });
    let reachedClaim: () => void = () => {};
    const claimReached = new Promise<void>((resolve) => {
      reachedClaim = resolve;
    });
    let stopped = false;
    const writesAfterStop: string[] = [];
    const slow = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || property === 'watch' || property === 'lock') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (stopped) writesAfterStop.push(String(property));
          if (property === 'claimRun') {
            reachedClaim();
            await claimHeld; // the executor is inside claimRun when stop() is called
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const { clock, scheduler } = harness({ store: slow as MemoryStore });
    let started = 0;
    scheduler.register({ name: 'j', schedule: { at: '2026-01-01T00:00:01Z' }, handler: () => void (started += 1) });
    await scheduler.start();
    const advancing = clock.advance('1s');
    await claimReached;
    const stopping = scheduler.stop().then(() => void (stopped = true));
    // Turns of the event loop (not time): everything stop() waits for, except the claim, settles.
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false); // the claim may still succeed: stop() must see it through
    releaseClaim();
    await advancing;
    await stopping;
    expect(started).toBe(0);
    expect(writesAfterStop).toEqual([]); // the run was given back before stop() resolved, not after
    expect(await inner.listRuns({ jobName: 'j' })).toMatchObject([{ status: 'pending', attempt: 1 }]);
    expect((await inner.listRuns({ jobName: 'j' }))[0]?.owner).toBeUndefined();
  });

  it('keeps trying to record a finished attempt while it holds the lease, so the handler is not run again', async () => {
    const inner = new MemoryStore();
    let failFinish = true;
    const flaky = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === 'finishAttempt') {
          return async (...args: unknown[]) => {
            if (failFinish) throw new Error('ECONNRESET');
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { clock, scheduler, log } = harness({ store: flaky as MemoryStore, leaseMs: 10_000 });
    const standby = harness({ clock, store: flaky as MemoryStore, leaseMs: 10_000 });
    let ran = 0;
    for (const s of [scheduler, standby.scheduler]) {
      s.register({ name: 'once', schedule: { at: '2026-01-01T00:00:01Z' }, handler: () => void (ran += 1) });
      await s.start();
    }
    await clock.advance('2m'); // far past the lease: the owner must have kept it
    failFinish = false;
    await clock.advance('30s');
    expect(ran).toBe(1);
    expect(await inner.listRuns({ jobName: 'once' })).toMatchObject([{ status: 'succeeded', attempt: 1 }]);
    expect(eventsOf(log, 'error').some((message) => message.includes('finishAttempt'))).toBe(true);
    await standby.scheduler.stop();
    await scheduler.stop();
  });
});

it('stop() does not hang on an outcome it cannot write: it gives up once the lease is over', async () => {
  const flaky = flakyStore();
  const { clock, scheduler } = harness({ store: flaky.store as MemoryStore, leaseMs: 9_000 });
  scheduler.register({ name: 'w', schedule: { at: '2026-01-01T00:00:01Z' }, handler: () => clock.sleep('2s') });
  await scheduler.start();
  await clock.advance('1s');
  expect(scheduler.runningRuns).toEqual(['w.1767225601']);
  flaky.setDown(true); // for good: the handler's success can never be written
  let stopped = false;
  const stopping = scheduler.stop().then(() => void (stopped = true));
  await clock.advance('5s');
  expect(stopped).toBe(false); // still within the lease: still trying
  await clock.advance('10s');
  await stopping;
  expect(stopped).toBe(true);
});
