/**
 * The scheduler's typed events, and emitting them so that a throwing listener can
 * never break the loop that emitted: its error is reported on `error` instead.
 */
import type { EventEmitter } from 'eventemitter3';
import { TickworkError } from './errors.js';
import type { RunInfo } from './types.js';

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

export interface RunErrorEvent extends RunEvent {
  readonly error: { readonly name: string; readonly message: string };
}

export interface RunRetryEvent extends RunErrorEvent {
  readonly retryAt: Date;
}

export interface RunCancelledEvent extends RunEvent {
  readonly reason: 'replaced';
}

export interface SchedulerEvents {
  'run:created': (event: RunEvent) => void;
  'run:started': (event: RunEvent) => void;
  'run:succeeded': (event: RunEvent) => void;
  /** Final failure: retries exhausted, `timeout`, or lease lost too often. */
  'run:failed': (event: RunErrorEvent) => void;
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
  const listeners = emitter.listeners(event) as ((payload: Payload<Name>) => void)[];
  if (listeners.length === 0) return;
  const value = typeof payload === 'function' ? (payload as () => Payload<Name>)() : payload;
  for (const listener of listeners) {
    try {
      listener.call(emitter, value);
    } catch (cause) {
      if (event === 'error') continue; // an error listener that throws has nowhere left to report to
      safeEmit(emitter, 'error', new TickworkError('LISTENER', `a "${event}" listener threw: ${messageOf(cause)}`, { cause }));
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The `{ name, message }` a run record keeps of a thrown value. */
export function toRunError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: typeof error === 'string' ? error : JSON.stringify(error) ?? String(error) };
}
