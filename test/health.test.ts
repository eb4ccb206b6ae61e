import { EventEmitter } from 'eventemitter3';
import { describe, expect, it } from 'vitest';
import { MemoryStore, Scheduler } from '../src/index.js';
import { HealthMonitor } from '../src/health.js';
import { Log } from '../src/logging.js';
import { FakeClock } from '../src/testing/index.js';
import { T0, flakyStore, harness } from './helpers.js';

const at = (iso: string) => new Date(iso);

describe('scheduler.health()', () => {
  it('is down before start and after stop, ok while running with a store that answers', async () => {
    const { clock, scheduler } = harness({ leaseMs: 30_000 });
    expect(await scheduler.health()).toEqual({ status: 'down', running: false, planner: false, partitions: [], store: { ok: true } });
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('1m');
    expect(await scheduler.health()).toEqual({
      status: 'ok',
      running: true,
      planner: true,
      partitions: [0],
      store: { ok: true, lastOkAt: at('2026-01-01T00:01:00Z') },
      lastPlanAt: at('2026-01-01T00:01:00Z'),
    });
    await scheduler.stop();
    expect(await scheduler.health()).toMatchObject({ status: 'down', running: false, planner: false });
  });

  it('is degraded while the store fails, down once it has failed for leaseMs, ok again when it answers', async () => {
    const flaky = flakyStore();
    const { clock, scheduler } = harness({ store: flaky.store as MemoryStore, leaseMs: 30_000, logger: false });
    scheduler.on('error', () => {});
    await scheduler.start();
    await clock.advance('9s');
    flaky.setDown(true);
    await clock.advance('1s'); // the next heartbeat (at 00:00:10, every leaseMs / 3) is the first to fail
    const degraded = await scheduler.health();
    expect(degraded).toMatchObject({
      status: 'degraded',
      running: true,
      store: {
        ok: false,
        lastOkAt: at(T0),
        lastError: { operation: expect.any(String), name: 'StoreError', message: expect.stringMatching(/^store operation \S+ failed: ECONNREFUSED$/), at: at('2026-01-01T00:00:10Z') },
      },
    });
    await clock.advance('29s');
    expect((await scheduler.health()).status).toBe('degraded');
    await clock.advance('1s'); // 30 s of failures: this instance's leases are gone
    expect(await scheduler.health()).toMatchObject({ status: 'down', running: true, planner: false, store: { ok: false } });
    flaky.setDown(false);
    await clock.advance('1s'); // while the store fails, the heartbeat comes every second
    const back = await scheduler.health();
    expect(back).toMatchObject({ status: 'ok', planner: true, store: { ok: true, lastOkAt: at('2026-01-01T00:00:41Z') } });
    expect(back.store.lastError?.at).toEqual(at('2026-01-01T00:00:40Z')); // the last failure is kept
    await scheduler.stop();
  });
});

describe('start()', () => {
  it('resolves after 5 s even when the store never answers', async () => {
    const fake = new FakeClock(T0);
    // No `track`: the fake clock must not wait for store calls that never settle.
    const clock = { now: () => fake.now(), setTimer: fake.setTimer.bind(fake), clearTimer: fake.clearTimer.bind(fake), sleep: fake.sleep.bind(fake) };
    const hanging = new Proxy(new MemoryStore(), {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return property === 'watch' || property === 'lock' ? value.bind(target) : () => new Promise(() => {});
      },
    });
    const scheduler = new Scheduler({ store: hanging, clock, logger: false });
    let resolved = false;
    void scheduler.start().then(() => (resolved = true));
    await fake.advance('4999ms');
    expect(resolved).toBe(false);
    await fake.advance('1ms');
    expect(resolved).toBe(true);
    expect(scheduler.isRunning).toBe(true);
  });
});

describe('HealthMonitor', () => {
  const monitor = (clock: FakeClock) => new HealthMonitor(clock, new Log(false, 'i', new EventEmitter()), 30_000);

  it('reports a planner that has not planned for leaseMs as degraded', async () => {
    const clock = new FakeClock(T0);
    const health = monitor(clock);
    health.storeSucceeded('lock.acquire');
    expect(health.report(true, [0]).status).toBe('degraded'); // elected, not planned yet
    health.planned();
    expect(health.report(true, [0]).status).toBe('ok');
    await clock.advance('29s');
    expect(health.report(true, [0]).status).toBe('ok');
    await clock.advance('1s');
    expect(health.report(true, [0])).toMatchObject({ status: 'degraded', lastPlanAt: at(T0) });
    expect(health.report(true, []).status).toBe('ok'); // only the planner plans
  });
});
