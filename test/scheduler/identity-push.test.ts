/**
 * The store's identity between heartbeats: checked every 2 s on a timer of the
 * scheduler's own, unless the store pushes its changes (`Store.watchIdentity`, the
 * Redis store under client tracking): an idle instance then wakes for its heartbeats
 * alone, and a pushed change is checked at once, without waiting for any timer.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type TickworkError } from '../../src/index.js';
import { harness } from '../helpers.js';

/** A memory store with an identity the test changes, which pushes (or stops pushing) when told to. */
class IdentityStore extends MemoryStore {
  current = 'first';
  reads = 0;
  readonly watchers = new Set<(pushed: boolean) => void>();

  identity(): Promise<string> {
    this.reads += 1;
    return Promise.resolve(this.current);
  }

  watchIdentity(listener: (pushed: boolean) => void): () => void {
    this.watchers.add(listener);
    return () => void this.watchers.delete(listener);
  }

  push(pushed: boolean): void {
    for (const watcher of this.watchers) watcher(pushed);
  }
}

function setUp() {
  const store = new IdentityStore();
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
  const resets: TickworkError[] = [];
  scheduler.on('error', (error) => {
    if ((error as TickworkError).code === 'STORE_RESET') resets.push(error as TickworkError);
  });
  scheduler.register({ name: 'yearly', schedule: '0 0 1 1 *', handler: () => {} });
  return { store, clock, scheduler, resets };
}

describe('the store identity between heartbeats (leaseMs 30 s: a heartbeat every 10 s)', () => {
  it('is checked every 2 s while the store does not push its changes', async () => {
    const { store, clock, scheduler } = setUp();
    await scheduler.start();
    await clock.advance('10s');
    store.reads = 0;
    await clock.advance('1m');
    expect(store.reads).toBeGreaterThanOrEqual(30); // 6 heartbeats and 30 checks between them
    await scheduler.stop();
  });

  it('is checked on the heartbeats alone while the store pushes, and at once when it pushes a change', async () => {
    const { store, clock, scheduler, resets } = setUp();
    await scheduler.start();
    store.push(true);
    await clock.advance('10s');
    store.reads = 0;
    const timers = clock.pendingTimers;
    await clock.advance('1m');
    expect(store.reads).toBe(6); // one per heartbeat: no timer of its own between them
    expect(clock.pendingTimers).toBe(timers);
    // A change pushed: checked, reported and the jobs written again without the clock moving.
    store.current = 'second';
    store.push(true);
    await clock.settle();
    expect(resets).toHaveLength(1);
    expect(resets[0]?.message).toMatch(/from first to second/);
    await scheduler.stop();
    expect(store.watchers.size).toBe(0);
  });

  it('is checked at once and every 2 s again when the store stops pushing (its tracking connection closed)', async () => {
    const { store, clock, scheduler, resets } = setUp();
    await scheduler.start();
    store.push(true);
    await clock.advance('1m');
    store.current = 'second';
    store.push(false);
    await clock.settle();
    expect(resets).toHaveLength(1);
    store.reads = 0;
    await clock.advance('10s');
    expect(store.reads).toBeGreaterThanOrEqual(5);
    await scheduler.stop();
  });
});
