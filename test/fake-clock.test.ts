import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/index.js';
import { FakeClock } from '../src/testing/index.js';

describe('FakeClock', () => {
  it('fires timers in time order, each at its own time, and lands on the target', async () => {
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now() % 100_000}`), 3_000);
    clock.setTimer(() => fired.push(`a@${clock.now() % 100_000}`), 1_000);
    clock.setTimer(() => fired.push(`a2@${clock.now() % 100_000}`), 1_000);
    const cleared = clock.setTimer(() => fired.push('never'), 2_000);
    clock.clearTimer(cleared);
    await clock.advance('2500ms');
    expect(fired).toEqual(['a@1000', 'a2@1000']);
    expect(clock.date.toISOString()).toBe('2026-01-01T00:00:02.500Z');
    await clock.advanceTo('2026-01-01T00:00:10Z');
    expect(fired).toEqual(['a@1000', 'a2@1000', 'b@3000']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('runs timers armed by timers within the same advance, and waits for async work in between', async () => {
    const clock = new FakeClock(0);
    const log: number[] = [];
    const loop = async (): Promise<void> => {
      for (let i = 0; i < 3; i += 1) {
        await clock.sleep('1s');
        await clock.track(Promise.resolve().then(() => log.push(clock.now())));
      }
    };
    const done = loop();
    await clock.advance('10s');
    await done;
    expect(log).toEqual([1_000, 2_000, 3_000]);
  });

  it('sleep rejects with the signal reason when aborted', async () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    const sleeping = clock.sleep('1m', controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(clock.pendingTimers).toBe(0);
    await expect(clock.sleep(10, controller.signal)).rejects.toThrow('stop');
  });

  it('set() jumps the wall clock either way; timers keep their remaining delays', async () => {
    const clock = new FakeClock('2026-01-01T12:00:00Z');
    const fired: string[] = [];
    clock.setTimer(() => fired.push(clock.date.toISOString()), 60_000);
    await clock.set('2026-01-01T11:00:00Z');
    expect(clock.date.toISOString()).toBe('2026-01-01T11:00:00.000Z');
    expect(fired).toEqual([]);
    await clock.advance('1m');
    expect(fired).toEqual(['2026-01-01T11:01:00.000Z']);
  });

  it('rejects bad input', async () => {
    const clock = new FakeClock(1_000);
    await expect(clock.advance('-1s')).rejects.toBeInstanceOf(ValidationError);
    await expect(clock.advanceTo(0)).rejects.toThrow(/use set\(\) to go back/);
    expect(() => new FakeClock('not a date')).toThrow(ValidationError);
  });
});
