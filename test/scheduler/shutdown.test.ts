/**
 * Shutdown (issue 14 class 5, issue 16 item 4): `stop({ timeout })`, a handler that
 * ignores its signal, `stop({ abort: true })`, and `stop()` awaited inside a handler.
 * Every bound is in fake time: the handlers wait on the fake clock.
 */
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_GRACE_MS, ValidationError, type RunAbortedError, type RunContext, type StopOptions } from '../../src/index.js';
import type { FakeClock } from '../../src/testing/index.js';
import { T0, harness } from '../helpers.js';

/** Starts a scheduler whose one-off job `long` is running the handler `handlerOn(clock)` built, one second in. */
async function running(handlerOn: (clock: FakeClock) => (ctx: RunContext) => Promise<void> | void) {
  const h = harness({ logger: false });
  h.scheduler.register({ name: 'long', schedule: { at: T0 }, handler: handlerOn(h.clock) });
  await h.scheduler.start();
  await h.clock.advance('1s');
  expect(h.scheduler.runningRuns).toEqual(['long.1767225600']);
  return h;
}

/** Calls stop(options) and reports whether it has resolved. */
function stopping(scheduler: { stop(options?: StopOptions): Promise<void> }, options?: StopOptions) {
  const state = { done: false, promise: Promise.resolve() };
  state.promise = scheduler.stop(options).then(() => void (state.done = true));
  return state;
}

describe('stop({ timeout })', () => {
  it('waits for a handler that finishes within the timeout, and aborts nothing', async () => {
    let aborted = false;
    const { clock, scheduler } = await running((clock) => async ({ signal }) => {
      signal.addEventListener('abort', () => (aborted = true));
      await clock.sleep('8s');
    });
    const stop = stopping(scheduler, { timeout: '10s' });
    await clock.advance('6s');
    expect(stop.done).toBe(false);
    await clock.advance('2s');
    await stop.promise;
    expect(aborted).toBe(false);
    expect((await scheduler.listRuns('long'))[0]?.status).toBe('succeeded');
  });

  it('aborts a handler still running at the timeout with "shutdown", releases its run (not failed) and resolves once it settled', async () => {
    const reasons: string[] = [];
    const { clock, scheduler, log } = await running((clock) => async ({ signal }) => {
      await clock.sleep('1h', signal).catch((error: unknown) => {
        reasons.push((error as RunAbortedError).reason);
        throw error;
      });
    });
    const stop = stopping(scheduler, { timeout: '10s' });
    await clock.advance('9s');
    expect(stop.done).toBe(false);
    expect(reasons).toEqual([]);
    await clock.advance('1s');
    await stop.promise;
    expect(reasons).toEqual(['shutdown']);
    expect((await scheduler.listRuns('long'))[0]).toMatchObject({ status: 'pending', attempt: 1 });
    expect(log.filter((entry) => entry.event === 'run:failed' || entry.event === 'run:retry')).toEqual([]);
  });

  it(`bounds a handler that ignores its signal: SHUTDOWN_GRACE_MS (${SHUTDOWN_GRACE_MS} ms) after the abort its run is released and stop() resolves`, async () => {
    let finished = false;
    const { clock, scheduler, log } = await running((clock) => async () => {
      await clock.sleep('1h'); // no signal: ignores the abort
      finished = true;
    });
    const stop = stopping(scheduler, { timeout: '10s' });
    await clock.advance(10_000 + SHUTDOWN_GRACE_MS - 1);
    expect(stop.done).toBe(false);
    await clock.advance(1);
    await stop.promise;
    expect(finished).toBe(false);
    expect(scheduler.runningRuns).toEqual([]);
    expect((await scheduler.listRuns('long'))[0]).toMatchObject({ status: 'pending', attempt: 1 });
    // The handler finishing later records nothing: the run was given back.
    await clock.advance('1h');
    expect(finished).toBe(true);
    expect((await scheduler.listRuns('long'))[0]).toMatchObject({ status: 'pending', attempt: 1 });
    expect(log.filter((entry) => entry.event.startsWith('run:') && entry.event !== 'run:created' && entry.event !== 'run:started')).toEqual([]);
  });
});

describe('stop({ abort: true })', () => {
  it('is bounded the same way: a handler that ignores its signal holds it SHUTDOWN_GRACE_MS at most', async () => {
    const { clock, scheduler } = await running((clock) => () => clock.sleep('1h'));
    const stop = stopping(scheduler, { abort: true });
    await clock.advance(SHUTDOWN_GRACE_MS - 1);
    expect(stop.done).toBe(false);
    await clock.advance(1);
    await stop.promise;
    expect((await scheduler.listRuns('long'))[0]).toMatchObject({ status: 'pending', attempt: 1 });
  });

  it('called while a plain stop() waits, brings the abort forward', async () => {
    const { clock, scheduler } = await running((clock) => ({ signal }) => clock.sleep('1h', signal));
    const plain = stopping(scheduler);
    await clock.advance('1m');
    expect(plain.done).toBe(false);
    const forced = stopping(scheduler, { abort: true });
    await clock.advance(1);
    await Promise.all([plain.promise, forced.promise]);
    expect((await scheduler.listRuns('long'))[0]).toMatchObject({ status: 'pending', attempt: 1 });
  });
});

describe('stop() inside a handler', () => {
  it('awaited first thing in the handler: resolves, and the run then succeeds', async () => {
    const h = harness({ logger: false });
    let resumed = false;
    h.scheduler.register({
      name: 'quit',
      schedule: { at: T0 },
      handler: async () => {
        await h.scheduler.stop();
        resumed = true;
      },
    });
    await h.scheduler.start();
    await h.clock.advance('1s');
    expect(resumed).toBe(true);
    expect(h.scheduler.isRunning).toBe(false);
    expect((await h.store.listRuns({ jobName: 'quit', limit: 10 }))[0]?.status).toBe('succeeded');
  });

  it('awaited after other awaits, while another handler runs: waits for that one only, and neither run is left running', async () => {
    const h = harness({ logger: false });
    const order: string[] = [];
    h.scheduler.register({
      name: 'other',
      schedule: { at: T0 },
      handler: async () => {
        await h.clock.sleep('30s');
        order.push('other finished');
      },
    });
    h.scheduler.register({
      name: 'quit',
      schedule: { at: T0 },
      handler: async () => {
        await h.clock.sleep('1s');
        await Promise.resolve();
        await h.scheduler.stop({ timeout: '1m' });
        order.push('stop resolved');
      },
    });
    await h.scheduler.start();
    await h.clock.advance('1m');
    expect(order).toEqual(['other finished', 'stop resolved']);
    expect(h.scheduler.isRunning).toBe(false);
    for (const jobName of ['other', 'quit']) {
      expect((await h.store.listRuns({ jobName, limit: 10 }))[0]?.status).toBe('succeeded');
    }
  });

  it('stop({ abort: true }) from a handler aborts the others and resolves', async () => {
    const h = harness({ logger: false });
    const reasons: string[] = [];
    h.scheduler.register({
      name: 'other',
      schedule: { at: T0 },
      handler: ({ signal }) =>
        h.clock.sleep('1h', signal).catch((error: unknown) => {
          reasons.push((error as RunAbortedError).reason);
          throw error;
        }),
    });
    h.scheduler.register({
      name: 'quit',
      schedule: { at: T0 },
      handler: async () => {
        await h.clock.sleep('1s');
        await h.scheduler.stop({ abort: true });
      },
    });
    await h.scheduler.start();
    await h.clock.advance('2s');
    expect(reasons).toEqual(['shutdown']);
    expect(h.scheduler.isRunning).toBe(false);
    expect((await h.store.listRuns({ jobName: 'other', limit: 10 }))[0]).toMatchObject({ status: 'pending', attempt: 1 });
    expect((await h.store.listRuns({ jobName: 'quit', limit: 10 }))[0]?.status).not.toBe('running');
  });
});

describe('StopOptions validation', () => {
  it.each([
    [{ timeout: -1 }, 'timeout', '-1'],
    [{ timeout: 'soon' }, 'timeout', '"soon"'],
    [{ timeout: NaN }, 'timeout', 'NaN'],
    [{ abort: 'yes' }, 'abort', '"yes"'],
    [{ grace: '5s' }, '', 'grace'],
  ])('stop(%j) rejects with a ValidationError naming the field and the value, and the scheduler keeps running', async (options, path, shows) => {
    const h = harness({ logger: false });
    await h.scheduler.start();
    const error = await h.scheduler.stop(options as StopOptions).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe(path);
    expect((error as Error).message).toContain(shows);
    expect(h.scheduler.isRunning).toBe(true);
    await h.scheduler.stop();
  });
});
