/**
 * A clock that moves only when told to. `advance` fires due timers one at a time in
 * time order and, after each, waits until the system is quiet again: microtasks
 * drained and every store operation the scheduler reported through `track`
 * settled. So `await clock.advance('3h')` returns once every tick in those three
 * hours has been handled: runs created, handlers started, handlers that wait only
 * on this clock finished, retries included; with any store, given its real I/O.
 */
import { sleepOn, type Clock, type TimerHandle } from '../clock.js';
import { requireDuration, type Duration } from '../duration.js';
import { instantSchema } from '../options.js';
import { parseInput } from '../validation.js';
import { ValidationError } from '../errors.js';
import { MinHeap } from '../heap.js';
import type { Instant } from '../types.js';

interface FakeTimer {
  readonly id: number;
  at: number;
  readonly callback: () => void;
}

/** Rounds of "yield to the event loop, then wait for tracked work" before settling gives up. */
const MAX_SETTLE_ROUNDS = 10_000;

export class FakeClock implements Clock {
  #now: number;
  #timers = new MinHeap<FakeTimer>();
  readonly #live = new Map<number, FakeTimer>();
  readonly #inflight = new Set<Promise<unknown>>();
  #nextId = 1;

  /** Starts at `start` (default: the Unix epoch). */
  constructor(start: Instant = 0) {
    this.#now = toMillis(start, 'start');
  }

  now(): number {
    return this.#now;
  }

  /** The current time as a `Date`. */
  get date(): Date {
    return new Date(this.#now);
  }

  /** Timers waiting to fire. */
  get pendingTimers(): number {
    return this.#live.size;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    // Whole milliseconds, rounded up (never early), so the clock's time stays whole as the system clock's does.
    const timer: FakeTimer = { id: this.#nextId++, at: this.#now + Math.ceil(Math.max(0, delayMs)), callback };
    this.#live.set(timer.id, timer);
    this.#timers.push(timer.at, timer);
    return timer.id as unknown as TimerHandle;
  }

  clearTimer(handle: TimerHandle): void {
    this.#live.delete(handle as unknown as number);
  }

  sleep(duration: Duration, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, duration, signal);
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.#inflight.add(work);
    const done = (): void => void this.#inflight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Moves time forward by `duration`, firing every timer due on the way, in order. */
  async advance(duration: Duration): Promise<void> {
    await this.#runUntil(this.#now + requireDuration(duration, 'FakeClock.advance'));
  }

  /** Moves time forward to `instant` (not backwards: use `set`), firing every timer due on the way. */
  async advanceTo(instant: Instant): Promise<void> {
    const target = toMillis(instant, 'instant');
    if (target < this.#now) {
      throw new ValidationError('FakeClock.advanceTo', [
        { path: 'instant', message: `is before the clock's time ${new Date(this.#now).toISOString()}; use set() to go back`, value: instant },
      ]);
    }
    await this.#runUntil(target);
  }

  /**
   * Jumps the wall clock to `instant`, forwards or backwards, like a system clock
   * being set: pending timers keep their remaining delays (as Node's monotonic
   * timers do), so nothing fires because of the jump itself.
   */
  async set(instant: Instant): Promise<void> {
    const target = toMillis(instant, 'instant');
    const shift = target - this.#now;
    this.#now = target;
    const timers = new MinHeap<FakeTimer>();
    for (const timer of this.#live.values()) {
      timer.at += shift;
      timers.push(timer.at, timer);
    }
    this.#timers = timers;
    await this.settle();
  }

  /** Waits until microtasks are drained and tracked work has settled, without moving time. */
  async settle(): Promise<void> {
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round += 1) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#inflight.size === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.#inflight.size === 0) return;
      }
      await Promise.allSettled([...this.#inflight]);
    }
  }

  async #runUntil(target: number): Promise<void> {
    await this.settle();
    for (;;) {
      const timer = this.#nextDue(target);
      if (timer === undefined) break;
      this.#now = Math.max(this.#now, timer.at);
      this.#live.delete(timer.id);
      timer.callback();
      await this.settle();
    }
    this.#now = Math.max(this.#now, target);
    await this.settle();
  }

  #nextDue(target: number): FakeTimer | undefined {
    for (;;) {
      const timer = this.#timers.peek();
      if (timer === undefined || timer.at > target) return undefined;
      this.#timers.pop();
      if (this.#live.get(timer.id) === timer) return timer;
    }
  }
}

/** The same instants the scheduler's API accepts, with the same errors. */
function toMillis(instant: Instant, field: string): number {
  return parseInput(instantSchema, instant, `FakeClock(${field})`);
}
