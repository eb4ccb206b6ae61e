/**
 * The scheduler's typed events, and emitting them so that a throwing listener can
 * never break the loop that emitted: its error is reported on `error` instead.
 */
import type { EventEmitter } from 'eventemitter3';
import { TickworkError } from './errors.js';
import { PENDING_TIMEOUT_ERROR, type RunError, type RunRecord } from './store.js';
import type { RunInfo } from './types.js';
import { toRunInfo } from './views.js';

export interface TickMissedEvent {
  readonly jobName: string;
  /** First missed tick. */
  readonly from: Date;
  /** Last missed tick (inclusive). */
  readonly to: Date;
  /** `coalesced`: superseded by a later due tick; `starting-deadline`: too old to start. */
  readonly reason: 'coalesced' | 'starting-deadline';
}

export interface TickSkippedEvent {
  readonly jobName: string;
  readonly scheduledAt: Date;
  /** `Forbid`: a run of the job was active. */
  readonly reason: 'forbid';
  /** The active runs that caused the skip. */
  readonly active: readonly string[];
}

export interface RunEvent {
  readonly run: RunInfo;
}

/** `run:started` and `run:retry` of a fan-out run concern one index. */
export interface IndexEvent extends RunEvent {
  /** The fan-out index; absent for a plain run. */
  readonly index?: number;
}

export interface RunErrorEvent extends RunEvent {
  readonly error: { readonly name: string; readonly message: string };
}

/**
 * Why a run failed for good: its handler's errors used up the retries (`error`,
 * lost leases included), `timeout` passed, or no instance started it within
 * `pendingTimeout`.
 */
export type RunFailureReason = 'error' | 'timeout' | 'pending-timeout';

export interface RunFailedEvent extends RunErrorEvent {
  readonly reason: RunFailureReason;
}

export interface RunRetryEvent extends RunErrorEvent, IndexEvent {
  readonly retryAt: Date;
}

export interface RunCancelledEvent extends RunEvent {
  /**
   * `replaced`: a new run of a `Replace` job took its place. `suspended`: the job was
   * paused before the tick of a run created ahead of it (see `Scheduler.pause`).
   */
  readonly reason: 'replaced' | 'suspended';
}

export interface SchedulerEvents {
  'run:created': (event: RunEvent) => void;
  /** An attempt starts: of the run, or of one index of a fan-out run. */
  'run:started': (event: IndexEvent) => void;
  /** The run succeeded (a fan-out run: its last index did). */
  'run:succeeded': (event: RunEvent) => void;
  /** Final failure: retries exhausted, `timeout`, `pendingTimeout`, or lease lost too often. */
  'run:failed': (event: RunFailedEvent) => void;
  'run:retry': (event: RunRetryEvent) => void;
  'run:cancelled': (event: RunCancelledEvent) => void;
  'tick:skipped': (event: TickSkippedEvent) => void;
  'tick:missed': (event: TickMissedEvent) => void;
  /** Store or internal trouble, and listeners that threw. Never thrown into the app. */
  error: (error: Error) => void;
}

type Payload<Name extends keyof SchedulerEvents> = Parameters<SchedulerEvents[Name]>[0];

/**
 * Emits `event`; a throwing listener is reported on `error` and the emitter carries on.
 * The payload may be given as a function, built only when someone listens: the hot
 * path of a run emits several events that most apps never subscribe to.
 */
export function safeEmit<Name extends keyof SchedulerEvents>(
  emitter: EventEmitter<SchedulerEvents>,
  event: Name,
  payload: Payload<Name> | (() => Payload<Name>),
): void {
  if (emitter.listenerCount(event) === 0) return;
  // A copy: a listener may remove itself (or others) while this emits.
  const listeners = emitter.listeners(event) as ((payload: Payload<Name>) => void)[];
  const value = typeof payload === 'function' ? (payload as () => Payload<Name>)() : payload;
  for (const listener of listeners) {
    try {
      listener.call(emitter, value);
    } catch (cause) {
      if (event === 'error') continue; // an error listener that throws has nowhere left to report to
      reportError(emitter, new TickworkError('LISTENER', `a "${event}" listener threw: ${messageOf(cause)}`, { cause }));
    }
  }
}

/**
 * Where an emitter's trouble is logged besides its `error` event, listened to or
 * not: the scheduler sets it to its log. A symbol-keyed property rather than a
 * listener, so it neither counts as the app's `error` listener nor goes away with
 * `removeAllListeners()`.
 */
export const ERROR_SINK: unique symbol = Symbol('tickwork.errorSink');

interface WithErrorSink {
  readonly [ERROR_SINK]?: (error: Error) => void;
}

/**
 * Reports trouble other than a failed store call (a listener that threw, an internal
 * fault): to the emitter's log, and on `error`. Store failures are reported by the
 * runtime's store-call wrapper, which logs them once per outage.
 */
export function reportError(emitter: EventEmitter<SchedulerEvents>, error: Error): void {
  (emitter as WithErrorSink)[ERROR_SINK]?.(error);
  safeEmit(emitter, 'error', error);
}

/**
 * True when `event` has listeners. The hot path checks this before building a payload,
 * so that a run whose events nobody listens to allocates neither the payload nor the
 * function that would build it.
 */
export function listening(emitter: EventEmitter<SchedulerEvents>, event: keyof SchedulerEvents): boolean {
  return emitter.listenerCount(event) > 0;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The `{ name, message }` a run record keeps of a thrown value. */
export function toRunError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: typeof error === 'string' ? error : JSON.stringify(error) ?? String(error) };
}

/** The name of the error a run gets when its whole-run `timeout` passes. */
export const RUN_TIMEOUT_ERROR_NAME = 'RunTimeoutError';

/** The `run:failed` payload of a run the store recorded as failed with `error`. */
export function runFailedEvent(run: RunRecord, error: RunError): RunFailedEvent {
  const reason: RunFailureReason =
    error.name === PENDING_TIMEOUT_ERROR.name ? 'pending-timeout' : error.name === RUN_TIMEOUT_ERROR_NAME ? 'timeout' : 'error';
  return { run: toRunInfo(run), error, reason };
}
