/**
 * The store's housekeeping, for every partition, kept by the holder of partition 0
 * (`plan-loop.ts`): it recovers runs whose owner went silent, fails runs nobody
 * claimed within their `pendingTimeout`, and deletes runs past their `history.ttl`.
 * One owner rather than one per partition: each is one store-wide, indexed call
 * bounded by its `limit`, so its cost does not grow with the partition count. (The
 * planner of a job with a pending timeout also arms the expiry timer for its runs, so
 * they fail on time; the store's expiry is atomic per run, so a run fails once
 * whoever calls it.)
 */
import { DeadlineTimer } from './deadline-timer.js';
import { runFailedEvent, safeEmit } from './events.js';
import type { Runtime } from './runtime.js';
import { LEASE_EXPIRED_ERROR, PENDING_TIMEOUT_ERROR, type ExpirePendingRunsResult, type RunRecord } from './store.js';
import { toRunInfo } from './views.js';

/** Runs recovered, expired or deleted per store call; more wait for the next heartbeat (or timer). */
const HOUSEKEEPING_BATCH = 1_000;

export class Housekeeping {
  readonly #rt: Runtime;
  /** Whether the expiry timer may be armed: this instance plans at least one partition and is not stopped. */
  readonly #active: () => boolean;
  /** Fires at the earliest known `pendingUntil`. */
  readonly #expiryTimer: DeadlineTimer;

  constructor(runtime: Runtime, active: () => boolean) {
    this.#rt = runtime;
    this.#active = active;
    this.#expiryTimer = new DeadlineTimer(runtime.clock, () => void this.#expirePending());
  }

  /** Housekeeping for every partition: recovery of expired leases, pending timeouts, history TTL. */
  async keepHouse(now: number): Promise<void> {
    const { io, store } = this.#rt;
    const input = { now, limit: HOUSEKEEPING_BATCH };
    // One call for the three sweeps when the store has it (one round trip a heartbeat rather than three).
    const sweep = store.sweepRuns?.bind(store);
    if (sweep !== undefined) {
      const swept = await io('sweepRuns', () => sweep(input));
      for (const run of swept?.recovered ?? []) this.#reportRecovered(run);
      this.#reportExpired(swept?.expired);
      return;
    }
    const recovered = await io('recoverExpiredRuns', () => store.recoverExpiredRuns(input));
    for (const run of recovered ?? []) this.#reportRecovered(run);
    await this.#expirePending();
    await io('deleteExpiredRuns', () => store.deleteExpiredRuns(input));
  }

  /** Arms the expiry timer for `at` (a run's `pendingUntil`) unless it fires earlier already. */
  expireAt(at: number): void {
    if (!this.#active()) return;
    this.#expiryTimer.setEarliest(at);
  }

  /** Stops the expiry timer (stopped, or no partition is held). */
  clearTimer(): void {
    this.#expiryTimer.clear();
  }

  /**
   * A run whose owner went silent: back to pending for a retry, or failed (its lost
   * attempt was the last its retry limit allows, as the store decided).
   */
  #reportRecovered(run: RunRecord): void {
    const { events, log } = this.#rt;
    const error = run.error ?? LEASE_EXPIRED_ERROR;
    if (run.status === 'failed') return safeEmit(events, 'run:failed', () => runFailedEvent(run, error, 'error'));
    if (log.enabled) log.runRecovered(toRunInfo(run));
    safeEmit(events, 'run:retry', () => ({ run: toRunInfo(run), error, retryAt: new Date(run.readyAt) }));
  }

  /** Fails the runs nobody claimed within their pending timeout, and re-arms the timer for the next one. */
  async #expirePending(): Promise<void> {
    const { clock, io, store } = this.#rt;
    this.#reportExpired(await io('expirePendingRuns', () => store.expirePendingRuns({ now: clock.now(), limit: HOUSEKEEPING_BATCH })));
  }

  #reportExpired(expired: ExpirePendingRunsResult | undefined): void {
    const { clock, events } = this.#rt;
    if (expired === undefined) return;
    for (const run of expired.runs) safeEmit(events, 'run:failed', () => runFailedEvent(run, run.error ?? PENDING_TIMEOUT_ERROR, 'pending-timeout'));
    if (expired.runs.length === HOUSEKEEPING_BATCH) this.expireAt(clock.now());
    else if (expired.nextAt !== undefined) this.expireAt(expired.nextAt);
  }
}
