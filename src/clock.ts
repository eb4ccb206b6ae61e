/**
 * Time, injected. This is the only module that reads the system clock or sets real
 * timers; everything else asks a `Clock`, so a `FakeClock` drives the whole
 * scheduler (and, through the `now` the core hands them, every store) in tests.
 */
import { requireDuration, type Duration } from './duration.js';

/** An opaque handle returned by {@link Clock.setTimer}. */
export interface TimerHandle {
  readonly __timer: unique symbol;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Calls `callback` once after `delayMs`. Implementations may fire early for very
   * long delays (see {@link MAX_TIMER_DELAY_MS}); callers re-check the time on wake.
   */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  /** Resolves after `duration`, or rejects with `signal.reason` as soon as `signal` aborts. */
  sleep(duration: Duration, signal?: AbortSignal): Promise<void>;
  /**
   * Tells the clock about in-flight work (store I/O) that a test clock should wait
   * for before it lets time move on. The system clock ignores it.
   */
  track?<T>(work: Promise<T>): Promise<T>;
}

/** Node's `setTimeout` overflows (and fires at once) past 2^31−1 ms, about 24.8 days. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Builds `sleep` on top of a clock's timers, so every clock (real or fake) gets the
 * same abort semantics.
 */
export function sleepOn(clock: Pick<Clock, 'setTimer' | 'clearTimer'>, duration: Duration, signal?: AbortSignal): Promise<void> {
  const ms = requireDuration(duration, 'sleep');
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimer(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The real clock: `Date.now()` and Node timers. Timers keep the process alive, as a
 * running scheduler should; `scheduler.stop()` clears them.
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer(callback: () => void, delayMs: number): TimerHandle {
    return setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_DELAY_MS)) as unknown as TimerHandle;
  },
  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as unknown as NodeJS.Timeout);
  },
  sleep(duration: Duration, signal?: AbortSignal): Promise<void> {
    return sleepOn(systemClock, duration, signal);
  },
});

/**
 * Resolves on a later turn of the event loop (`setImmediate`): after the timers and
 * I/O callbacks that are due, so long work done in slices lets the app's own
 * callbacks run between them. Real on every clock: a fake clock moves time, not turns.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The clock the scheduler's parts read: whole milliseconds, always, so that no
 * fraction from a custom clock reaches a store (Postgres keeps instants in
 * `bigint`). The system clock's `Date.now()` is whole already and is used as it
 * is; any other clock is read through a view that floors its `now()`.
 */
export function wholeMillisecondClock(clock: Clock): Clock {
  if (clock === systemClock) return clock;
  const view: Clock = {
    now: () => Math.floor(clock.now()),
    setTimer: (callback, delayMs) => clock.setTimer(callback, delayMs),
    clearTimer: (handle) => clock.clearTimer(handle),
    sleep: (duration, signal) => clock.sleep(duration, signal),
  };
  if (clock.track !== undefined) view.track = <T>(work: Promise<T>): Promise<T> => clock.track?.(work) ?? work;
  return view;
}
