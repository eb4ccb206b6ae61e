/** Shared set-up for scheduler tests on the fake clock. */
import { Scheduler, MemoryStore, type SchedulerOptions, type Clock, type Store, type TimerHandle, type Duration } from '../src/index.js';
import type { SchedulerEvents } from '../src/events.js';
import { FakeClock } from '../src/testing/index.js';

export const T0 = '2026-01-01T00:00:00Z';

export type EventLog = { event: keyof SchedulerEvents; at: string; detail: string }[];

/** Records every event a scheduler emits, with the fake time and a short description. */
export function recordEvents(scheduler: Scheduler, clock: Clock): EventLog {
  const log: EventLog = [];
  const at = (): string => new Date(clock.now()).toISOString();
  scheduler.on('run:created', ({ run }) => log.push({ event: 'run:created', at: at(), detail: run.id }));
  scheduler.on('run:started', ({ run }) => log.push({ event: 'run:started', at: at(), detail: `${run.id}#${run.attempt}` }));
  scheduler.on('run:succeeded', ({ run }) => log.push({ event: 'run:succeeded', at: at(), detail: run.id }));
  scheduler.on('run:failed', ({ run, error }) => log.push({ event: 'run:failed', at: at(), detail: `${run.id} ${error.name}: ${error.message}` }));
  scheduler.on('run:retry', ({ run, retryAt }) => log.push({ event: 'run:retry', at: at(), detail: `${run.id} -> ${retryAt.toISOString()}` }));
  scheduler.on('run:cancelled', ({ run, reason }) => log.push({ event: 'run:cancelled', at: at(), detail: `${run.id} ${reason}` }));
  scheduler.on('tick:skipped', (e) => log.push({ event: 'tick:skipped', at: at(), detail: `${e.jobName} ${e.scheduledAt.toISOString()}` }));
  scheduler.on('tick:missed', (e) =>
    log.push({ event: 'tick:missed', at: at(), detail: `${e.jobName} ${e.from.toISOString()}..${e.to.toISOString()} ${e.reason}` }),
  );
  scheduler.on('error', (error) => log.push({ event: 'error', at: at(), detail: error.message }));
  return log;
}

export function eventsOf(log: EventLog, event: keyof SchedulerEvents): string[] {
  return log.filter((entry) => entry.event === event).map((entry) => entry.detail);
}

export interface Harness {
  clock: FakeClock;
  store: MemoryStore;
  scheduler: Scheduler;
  log: EventLog;
}

export function harness(options: Partial<SchedulerOptions> & { start?: string; clock?: FakeClock; store?: MemoryStore } = {}): Harness {
  const { start, ...rest } = options;
  const clock = options.clock ?? new FakeClock(start ?? T0);
  const store = options.store ?? new MemoryStore();
  const scheduler = new Scheduler({ ...rest, clock, store });
  return { clock, store, scheduler, log: recordEvents(scheduler, clock) };
}

/** A handler that waits until released (or until its signal aborts), counting its starts. */
export function gate(): { handler: (ctx: { signal: AbortSignal }) => Promise<void>; release: () => void; started: number } {
  const waiting = new Set<() => void>();
  const state = {
    started: 0,
    handler: ({ signal }: { signal: AbortSignal }) => {
      state.started += 1;
      return new Promise<void>((resolve, reject) => {
        waiting.add(resolve);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
    release: () => {
      for (const resolve of waiting) resolve();
      waiting.clear();
    },
  };
  return state;
}

/** Stops a scheduler whose handlers wait on the fake clock: time moves on while it waits for them. */
export async function stopWhileAdvancing(scheduler: { stop(): Promise<void> }, clock: FakeClock, duration: Duration = '1h'): Promise<void> {
  const stopping = scheduler.stop();
  await clock.advance(duration);
  await stopping;
}

/**
 * A clock that forwards to another but can be frozen: a frozen instance's timers no
 * longer fire, as if its process had been SIGSTOPped or killed, while the shared
 * fake time moves on for the other instances.
 */
export class FreezableClock implements Clock {
  readonly #inner: FakeClock;
  #frozen = false;
  readonly #held: (() => void)[] = [];

  constructor(inner: FakeClock) {
    this.#inner = inner;
  }

  freeze(): void {
    this.#frozen = true;
  }

  /** Resumes; timers that came due while frozen fire now. */
  thaw(): void {
    this.#frozen = false;
    for (const callback of this.#held.splice(0)) callback();
  }

  now(): number {
    return this.#inner.now();
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    return this.#inner.setTimer(() => (this.#frozen ? this.#held.push(callback) : callback()), delayMs);
  }

  clearTimer(handle: TimerHandle): void {
    this.#inner.clearTimer(handle);
  }

  sleep(duration: Duration, signal?: AbortSignal): Promise<void> {
    return this.#inner.sleep(duration, signal);
  }

  track<T>(work: Promise<T>): Promise<T> {
    return this.#inner.track(work);
  }
}

/** A memory store (and its lock) that can be made unreachable: every call rejects while `down`. */
export function flakyStore(): { store: Store; setDown(down: boolean): void; failures: number } {
  const state = { down: false, failures: 0 };
  const flaky = <T extends object>(target: T, passThrough: readonly PropertyKey[]): T =>
    new Proxy(target, {
      get(inner, property, receiver) {
        const value = Reflect.get(inner, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (passThrough.includes(property)) return value.bind(inner);
        if (property === 'lock') return () => flaky((value as () => object).call(inner), []);
        return async (...args: unknown[]) => {
          if (state.down) {
            state.failures += 1;
            throw new Error('ECONNREFUSED');
          }
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    });
  const store = flaky(new MemoryStore(), ['watch']);
  return { store, setDown: (down) => void (state.down = down), get failures() { return state.failures; } };
}

/**
 * A memory store whose calls are counted by method (the proxy forwards everything else,
 * notifications included). `lock`: its lock's calls are counted too, as `lock.<method>`;
 * `renewAll: false` hides the lock's `renewAll` (a lock without it).
 */
/** `store` with `sweepRuns`, made of the three sweeps in order (as a store with it must resolve). */
export function withSweepRuns(store: MemoryStore): MemoryStore {
  const sweepRuns = async (input: { now: number; limit: number }) => {
    const recovered = await store.recoverExpiredRuns(input);
    const expired = await store.expirePendingRuns(input);
    return { recovered, expired, deleted: await store.deleteExpiredRuns(input) };
  };
  return new Proxy(store, {
    get(object, property) {
      if (property === 'sweepRuns') return sweepRuns;
      const value = Reflect.get(object, property) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
    },
  });
}

export function countingStore(options: { partitions?: number; lock?: boolean; renewAll?: boolean; sweepRuns?: boolean } = {}): { store: MemoryStore; inner: MemoryStore; calls: Map<string, number> } {
  const memory = new MemoryStore(options.partitions === undefined ? {} : { partitions: options.partitions });
  const inner = options.sweepRuns === true ? withSweepRuns(memory) : memory;
  const calls = new Map<string, number>();
  const counted = <T extends object>(target: T, prefix: string, hidden: readonly string[] = []): T =>
    new Proxy(target, {
      get(object, property, receiver) {
        if (hidden.includes(String(property))) return undefined;
        const value = Reflect.get(object, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.set(`${prefix}${String(property)}`, (calls.get(`${prefix}${String(property)}`) ?? 0) + 1);
          const result = (value as (...a: unknown[]) => unknown).apply(object, args);
          return property === 'lock' && options.lock === true ? counted(result as object, 'lock.', options.renewAll === false ? ['renewAll'] : []) : result;
        };
      },
    });
  const store = counted(inner, '');
  return { store, inner, calls };
}
