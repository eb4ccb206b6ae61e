/**
 * What `scheduler.health()` reports, and the state behind it: every store call's
 * success or failure (recorded by the runtime's store-call wrapper, which also
 * logs the store becoming unreachable and reachable again) and the planner's last
 * planning pass. Reading it costs nothing: a probe never waits on the store.
 *
 * Status rules, checked in order:
 * - `down`: the scheduler is not running (never started, stopping or stopped), or
 *   every store call has failed for at least `leaseMs`: by then this instance's
 *   leases have expired and other instances have taken its work over.
 * - `degraded`: the last store call failed (the scheduler is retrying), or this
 *   instance is the planner and has not planned for `leaseMs`.
 * - `ok`: otherwise.
 */
import type { Clock } from './clock.js';
import type { Log } from './logging.js';

export type HealthStatus = 'ok' | 'degraded' | 'down';

/** `scheduler.health()`: for readiness and liveness probes. */
export interface Health {
  readonly status: HealthStatus;
  /** True from `start()` until `stop()` is called. */
  readonly running: boolean;
  /** True while this instance plans at least one partition (holds a planner lease). */
  readonly planner: boolean;
  /** The partitions of the store this instance plans. */
  readonly partitions: readonly number[];
  readonly store: StoreHealth;
  /** When this instance last planned (while it was the planner). */
  readonly lastPlanAt?: Date;
}

export interface StoreHealth {
  /** The last store call succeeded (true before the first call). */
  readonly ok: boolean;
  readonly lastOkAt?: Date;
  /** The last failed call, kept after the store recovers. */
  readonly lastError?: { readonly operation: string; readonly name: string; readonly message: string; readonly at: Date };
}

/** The scheduler's view of its store and its planning, fed by the runtime and the plan loop. */
export class HealthMonitor {
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #leaseMs: number;
  #lastOkAt: number | undefined;
  /** When the current run of failures began; undefined while the store answers. */
  #failingSince: number | undefined;
  #lastError: { operation: string; name: string; message: string; at: number } | undefined;
  #lastPlanAt: number | undefined;
  #failures = 0;

  constructor(clock: Clock, log: Log, leaseMs: number) {
    this.#clock = clock;
    this.#log = log;
    this.#leaseMs = leaseMs;
  }

  /** False while the store's calls fail. */
  get storeOk(): boolean {
    return this.#failingSince === undefined;
  }

  /** Store calls failed so far: a caller compares two readings to learn whether any failed in between. */
  get failures(): number {
    return this.#failures;
  }

  /** A store call succeeded. On every store call's path: a clock read and a branch. */
  storeSucceeded(operation: string): void {
    const now = this.#clock.now();
    this.#lastOkAt = now;
    if (this.#failingSince !== undefined) {
      const downMs = now - this.#failingSince;
      this.#failingSince = undefined;
      this.#log.storeRecovered(operation, downMs);
    }
  }

  storeFailed(operation: string, error: Error): void {
    const now = this.#clock.now();
    this.#failures += 1;
    this.#lastError = { operation, name: error.name, message: error.message, at: now };
    if (this.#failingSince === undefined) {
      this.#failingSince = now;
      this.#log.storeUnreachable(operation, error);
    } else this.#log.storeFailed(operation, error);
  }

  /** The planner finished a planning pass. */
  planned(): void {
    this.#lastPlanAt = this.#clock.now();
  }

  report(running: boolean, partitions: readonly number[]): Health {
    const planner = partitions.length > 0;
    const now = this.#clock.now();
    const store: StoreHealth = {
      ok: this.storeOk,
      ...(this.#lastOkAt === undefined ? {} : { lastOkAt: new Date(this.#lastOkAt) }),
      ...(this.#lastError === undefined ? {} : { lastError: { ...this.#lastError, at: new Date(this.#lastError.at) } }),
    };
    const failingFor = this.#failingSince === undefined ? 0 : now - this.#failingSince;
    const planStale = planner && (this.#lastPlanAt === undefined || now - this.#lastPlanAt >= this.#leaseMs);
    const status: HealthStatus = !running || failingFor >= this.#leaseMs ? 'down' : !store.ok || planStale ? 'degraded' : 'ok';
    return { status, running, planner, partitions: [...partitions], store, ...(this.#lastPlanAt === undefined ? {} : { lastPlanAt: new Date(this.#lastPlanAt) }) };
  }
}
