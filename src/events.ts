/**
 * The scheduler's typed events, and emitting them so that a throwing (or rejecting)
 * listener can never break the loop that emitted, nor reach the app's
 * unhandled-rejection path: its error is reported on `error` instead.
 */
import type { EventEmitter } from 'eventemitter3';
import { MAX_MESSAGE_LENGTH, TickworkError, messageOf, renderValue, shorten } from './errors.js';
import type { JsonValue, RunError, RunRecord } from './store.js';
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

/** `Data`: the data type of the scheduler's jobs (`new Scheduler<Data>()`). */
export interface RunEvent<Data = JsonValue> {
  readonly run: RunInfo<Data>;
}

/** `run:started` and `run:retry` of a fan-out run concern one index. */
export interface IndexEvent<Data = JsonValue> extends RunEvent<Data> {
  /** The fan-out index; absent for a plain run. */
  readonly index?: number;
}

export interface RunErrorEvent<Data = JsonValue> extends RunEvent<Data> {
  readonly error: { readonly name: string; readonly message: string };
}

/**
 * Why a run failed for good: its handler's errors used up the retries (`error`,
 * lost leases included), `timeout` passed, or no instance started it within
 * `pendingTimeout`.
 */
export type RunFailureReason = 'error' | 'timeout' | 'pending-timeout';

export interface RunFailedEvent<Data = JsonValue> extends RunErrorEvent<Data> {
  readonly reason: RunFailureReason;
}

export interface RunRetryEvent<Data = JsonValue> extends RunErrorEvent<Data>, IndexEvent<Data> {
  readonly retryAt: Date;
}

export interface RunCancelledEvent<Data = JsonValue> extends RunEvent<Data> {
  /**
   * `replaced`: a new run of a `Replace` job took its place. `suspended`: the job was
   * paused before the tick of a run created ahead of it (see `Scheduler.pause`).
   */
  readonly reason: 'replaced' | 'suspended';
}

export interface SchedulerEvents<Data = JsonValue> {
  'run:created': (event: RunEvent<Data>) => void;
  /** An attempt starts: of the run, or of one index of a fan-out run. */
  'run:started': (event: IndexEvent<Data>) => void;
  /** The run succeeded (a fan-out run: its last index did). */
  'run:succeeded': (event: RunEvent<Data>) => void;
  /** Final failure: retries exhausted, `timeout`, `pendingTimeout`, or lease lost too often. */
  'run:failed': (event: RunFailedEvent<Data>) => void;
  'run:retry': (event: RunRetryEvent<Data>) => void;
  'run:cancelled': (event: RunCancelledEvent<Data>) => void;
  'tick:skipped': (event: TickSkippedEvent) => void;
  'tick:missed': (event: TickMissedEvent) => void;
  /** Store or internal trouble, and listeners that threw. Never thrown into the app. */
  error: (error: Error) => void;
}

type Payload<Name extends keyof SchedulerEvents> = Parameters<SchedulerEvents[Name]>[0];

/**
 * Emits `event`; a listener that throws, or returns a promise that rejects, is
 * reported on `error` and the emitter carries on. The payload may be given as a
 * function, built only when someone listens: the hot path of a run emits several
 * events that most apps never subscribe to.
 */
export function safeEmit<Name extends keyof SchedulerEvents>(
  emitter: EventEmitter<SchedulerEvents>,
  event: Name,
  payload: Payload<Name> | (() => Payload<Name>),
): void {
  if (emitter.listenerCount(event) === 0) return;
  // A copy: a listener may remove itself (or others) while this emits.
  const listeners = emitter.listeners(event) as ((payload: Payload<Name>) => unknown)[];
  const value = typeof payload === 'function' ? (payload as () => Payload<Name>)() : payload;
  for (const listener of listeners) {
    try {
      const result = listener.call(emitter, value);
      // An async listener: its rejection is caught here, never left unhandled.
      if (isThenable(result)) Promise.resolve(result).then(undefined, (cause: unknown) => listenerFailed(emitter, event, 'rejected', cause));
    } catch (cause) {
      listenerFailed(emitter, event, 'threw', cause);
    }
  }
}

function listenerFailed(emitter: EventEmitter<SchedulerEvents>, event: keyof SchedulerEvents, how: string, cause: unknown): void {
  if (event === 'error') return; // an error listener that fails has nowhere left to report to
  reportError(emitter, new TickworkError('LISTENER', `a "${event}" listener ${how}: ${messageOf(cause)}`, { cause }));
}

/** True for a promise, or anything else with a `then` method (reading `then` may throw: callers catch). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
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

/** The longest error name a run records, in characters. */
const MAX_ERROR_NAME_LENGTH = 200;

/**
 * The `{ name, message }` a run record keeps of a thrown value. Total, so that an
 * attempt's end is always recorded: an `Error`, or an error-like object with a
 * string `message` (an `Error` from another realm), keeps its name and message;
 * any other value (a string, a number, a `Symbol`, a `BigInt`, a cyclic object, a
 * revoked Proxy) is rendered as text; a getter that throws is described, not
 * rethrown. Text is cut to `MAX_MESSAGE_LENGTH` (a name to 200 characters) and made
 * storable by every store: NUL and unpaired surrogates become U+FFFD (a Postgres
 * `text` refuses NUL).
 */
export function toRunError(error: unknown): RunError {
  if (!isErrorLike(error)) {
    return { name: 'Error', message: storable(typeof error === 'string' ? error : renderValue(error, MAX_MESSAGE_LENGTH), MAX_MESSAGE_LENGTH) };
  }
  let name: unknown;
  let message: unknown;
  try {
    name = (error as { name?: unknown }).name;
  } catch {
    name = undefined; // an unreadable name is no reason to lose the message
  }
  try {
    message = (error as { message?: unknown }).message;
  } catch (cause) {
    message = `(its message could not be read: ${messageOf(cause)})`;
  }
  return {
    name: typeof name === 'string' && name !== '' ? storable(name, MAX_ERROR_NAME_LENGTH) : 'Error',
    message: storable(typeof message === 'string' ? message : renderValue(message, MAX_MESSAGE_LENGTH), MAX_MESSAGE_LENGTH),
  };
}

function isErrorLike(value: unknown): value is object {
  try {
    return value instanceof Error || (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string');
  } catch {
    return false; // a revoked Proxy, or a `message` getter that throws on an object that is not an Error
  }
}

const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(text: string, limit: number): string {
  return shorten(text, limit).replace(UNSTORABLE, '\uFFFD');
}

/** The name of the error a run gets when its whole-run `timeout` passes. */
export const RUN_TIMEOUT_ERROR_NAME = 'RunTimeoutError';

/**
 * The `run:failed` payload of a run the store recorded as failed with `error`.
 * `reason` is a value its caller knows from what ended the run (the store call it
 * made, or the outcome it wrote), never decoded from the error's name.
 */
export function runFailedEvent(run: RunRecord, error: RunError, reason: RunFailureReason): RunFailedEvent {
  return { run: toRunInfo(run), error, reason };
}
