/** DeadlineTimer: one timer for a deadline on the injected clock, capped at MAX_WAIT_MS, earliest or exact. */
import { expect, it } from 'vitest';
import type { Clock } from '../src/clock.js';
import { DeadlineTimer, MAX_WAIT_MS } from '../src/deadline-timer.js';
import { FakeClock } from '../src/testing/fake-clock.js';

function timer(clock: FakeClock): { timer: DeadlineTimer; fired: number[] } {
  const fired: number[] = [];
  return { timer: new DeadlineTimer(clock, () => fired.push(clock.now())), fired };
}

it('fires once at its deadline, and only when re-armed again', async () => {
  const clock = new FakeClock(1_000);
  const { timer: t, fired } = timer(clock);
  t.set(1_500);
  expect(t.at).toBe(1_500);
  await clock.advance(10_000);
  expect(fired).toEqual([1_500]);
  expect(t.at).toBeUndefined();
  expect(clock.pendingTimers).toBe(0);
});

it('setEarliest: the earliest deadline wins, a later one leaves it armed', async () => {
  const clock = new FakeClock(0);
  const { timer: t, fired } = timer(clock);
  t.setEarliest(500);
  t.setEarliest(800); // later: ignored
  t.setEarliest(300); // earlier: re-armed
  t.setEarliest(300);
  expect(t.at).toBe(300);
  expect(clock.pendingTimers).toBe(1);
  await clock.advance(1_000);
  expect(fired).toEqual([300]);
});

it('setEarliest: a later deadline does not move the timer later', async () => {
  const clock = new FakeClock(0);
  const { timer: t, fired } = timer(clock);
  t.setEarliest(500);
  t.setEarliest(800);
  expect(t.at).toBe(500);
  await clock.advance(1_000);
  expect(fired).toEqual([500]);
});

it('set: arming again for the same time keeps the timer (no clear and re-set on every wake)', () => {
  const clock = new FakeClock(0);
  let timersSet = 0;
  const counting: Clock = {
    now: () => clock.now(),
    setTimer: (callback, delayMs) => ((timersSet += 1), clock.setTimer(callback, delayMs)),
    clearTimer: (handle) => clock.clearTimer(handle),
    sleep: (duration, signal) => clock.sleep(duration, signal),
  };
  const t = new DeadlineTimer(counting, () => undefined);
  t.set(300);
  t.set(300);
  expect(timersSet).toBe(1);
  t.set(400);
  expect(timersSet).toBe(2);
});

it('set: re-arms for a later deadline as well as an earlier one, keeping one timer', async () => {
  const clock = new FakeClock(0);
  const { timer: t, fired } = timer(clock);
  t.set(300);
  t.set(700);
  expect(clock.pendingTimers).toBe(1);
  await clock.advance(1_000);
  expect(fired).toEqual([700]);
});

it('caps the wait at MAX_WAIT_MS after now, so the owner re-checks the time', async () => {
  const clock = new FakeClock(0);
  const { timer: t, fired } = timer(clock);
  t.setEarliest(10 * MAX_WAIT_MS);
  expect(t.at).toBe(MAX_WAIT_MS);
  // A deadline past the cap does not re-arm it: it already fires first.
  t.setEarliest(2 * MAX_WAIT_MS);
  await clock.advance(MAX_WAIT_MS);
  expect(fired).toEqual([MAX_WAIT_MS]);
  const { timer: exact, fired: exactFired } = timer(clock);
  exact.set(clock.now() + 5 * MAX_WAIT_MS);
  await clock.advance(5 * MAX_WAIT_MS);
  expect(exactFired).toEqual([2 * MAX_WAIT_MS]);
});

it('fires at once for a deadline already past', async () => {
  const clock = new FakeClock(1_000);
  const { timer: t, fired } = timer(clock);
  t.setEarliest(400);
  await clock.advance(0);
  expect(fired).toEqual([1_000]);
});

it('clear cancels the armed timer; it can be armed again afterwards', async () => {
  const clock = new FakeClock(0);
  const { timer: t, fired } = timer(clock);
  t.set(100);
  t.clear();
  expect(t.at).toBeUndefined();
  expect(clock.pendingTimers).toBe(0);
  await clock.advance(1_000);
  expect(fired).toEqual([]);
  t.setEarliest(1_200); // after a clear, any deadline arms it
  await clock.advance(1_000);
  expect(fired).toEqual([1_200]);
});
