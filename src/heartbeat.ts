/**
 * The scheduler's heartbeat: one beat at a time, every `leaseMs / 3`, sooner after a
 * beat in which a store call failed (`STORE_RETRY_MS`), and, between beats further
 * apart than `IDENTITY_CHECK_MS`, a check of the store's identity that brings the
 * next beat forward when the store lost its data: every `IDENTITY_CHECK_MS`, or only
 * when the store says its identity may have changed while it pushes that
 * (`Store.watchIdentity`: an idle instance then wakes for its beats alone). What a
 * beat does is the scheduler's (`beat`); this module owns when beats happen.
 */
import type { TimerHandle } from './clock.js';
import type { Runtime } from './runtime.js';
import { SerialTask } from './serial-task.js';

/**
 * After a heartbeat in which a store call failed, the next starts this long after
 * it started, so work resumes within about a second of the store coming back,
 * whatever `leaseMs` is.
 */
const STORE_RETRY_MS = 1_000;
/** `start()` resolves after this long even if the store has not answered yet; the heartbeat goes on trying. */
const START_WAIT_MS = 5_000;
/**
 * How often the store's identity is checked between heartbeats (when they are further
 * apart), so a store that lost its data is noticed within seconds whatever `leaseMs`
 * is: one small read per instance.
 */
const IDENTITY_CHECK_MS = 2_000;

export interface HeartbeatParts {
  /** One beat's work. */
  readonly beat: () => Promise<void>;
  /** True when the store's identity changed (it lost its data): the next beat comes at once. */
  readonly checkIdentity: () => Promise<boolean>;
  /** Whether the scheduler is running (identity checks happen only then). */
  readonly running: () => boolean;
  /** Whether another beat follows this one: false once the scheduler has stopped for good. */
  readonly continues: () => boolean;
}

export class Heartbeat {
  readonly #rt: Runtime;
  readonly #parts: HeartbeatParts;
  /** One beat at a time; one asked for while another runs joins it (the next comes on the timer). */
  readonly #task = new SerialTask(() => this.#beat(), { again: () => false });
  #timer: TimerHandle | undefined;
  #identityTimer: TimerHandle | undefined;
  /** Whether the store pushes identity changes now (no checks on a timer then). */
  #pushed = false;
  #unwatchIdentity: (() => void) | undefined;

  constructor(runtime: Runtime, parts: HeartbeatParts) {
    this.#rt = runtime;
    this.#parts = parts;
  }

  /** The beat under way, if any. */
  get running(): Promise<void> | undefined {
    return this.#task.running;
  }

  /**
   * Starts beating: resolves after the first beat, or after `START_WAIT_MS` if the
   * store has not answered by then (a client of the app's own, with long retries,
   * cannot hold `start()` up).
   */
  async start(): Promise<void> {
    const { clock, store } = this.#rt;
    this.#unwatchIdentity = store.watchIdentity?.((pushed) => void this.#identityHint(pushed));
    this.#armIdentityCheck();
    let timer: TimerHandle | undefined;
    await Promise.race([this.#task.run(), new Promise<void>((resolve) => (timer = clock.setTimer(resolve, START_WAIT_MS)))]);
    if (timer !== undefined) clock.clearTimer(timer);
  }

  /** Clears the timers; call once `continues()` is false and the last beat has ended. */
  stop(): void {
    const { clock } = this.#rt;
    if (this.#timer !== undefined) clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#unwatchIdentity?.();
    this.#unwatchIdentity = undefined;
    this.#pushed = false;
    this.#armIdentityCheck();
  }

  async #beat(): Promise<void> {
    const { leaseMs, health, clock } = this.#rt;
    const failures = health.failures;
    const began = clock.now();
    try {
      await this.#parts.beat();
    } finally {
      if (this.#parts.continues()) {
        // A store call of this beat failed (even if the store answers again by now, what failed is still undone):
        // the next beat starts STORE_RETRY_MS after this one started, at once if this one took that long.
        const delay = health.failures === failures ? leaseMs / 3 : Math.max(0, Math.min(leaseMs / 3, STORE_RETRY_MS) - (clock.now() - began));
        this.#timer = clock.setTimer(() => void this.#task.run(), delay);
      }
    }
  }

  /**
   * Between heartbeats further apart than `IDENTITY_CHECK_MS`, checks the store's identity on a timer of its own,
   * unless the store pushes its changes (clears the timer otherwise).
   */
  #armIdentityCheck(): void {
    const { store, clock, leaseMs } = this.#rt;
    if (this.#identityTimer !== undefined) clock.clearTimer(this.#identityTimer);
    this.#identityTimer = undefined;
    if (store.identity === undefined || leaseMs / 3 <= IDENTITY_CHECK_MS || !this.#parts.running() || this.#pushed) return;
    this.#identityTimer = clock.setTimer(() => void this.#pollIdentity(), IDENTITY_CHECK_MS);
  }

  /**
   * The store says its identity may have changed: checks it now, after the beat under way (which may have checked
   * before the change), and from now on on a timer only if the store does not push.
   */
  async #identityHint(pushed: boolean): Promise<void> {
    this.#pushed = pushed;
    await this.#task.running?.catch(() => {});
    await this.#pollIdentity();
  }

  /**
   * A check between heartbeats; a change brings the next heartbeat forward. Not while
   * a heartbeat is under way (it checks by itself), nor while the store fails (the
   * heartbeat retries every second then).
   */
  async #pollIdentity(): Promise<void> {
    const { running, checkIdentity } = this.#parts;
    if (!running()) return;
    if (this.#task.running === undefined && this.#rt.health.storeOk && (await checkIdentity()) && running() && this.#task.running === undefined) {
      if (this.#timer !== undefined) this.#rt.clock.clearTimer(this.#timer);
      void this.#task.run();
    }
    this.#armIdentityCheck();
  }
}
