/**
 * The scheduler's log: the `Logger` an app hands in (pino's and bunyan's calling
 * convention, so either plugs in as is), the default that writes errors and warnings
 * to stderr when the app gave neither a logger nor an `error` listener, and `Log`,
 * the one object the scheduler's parts call at each point worth a line. Each point
 * has a stable `event` name and structured fields; the message is for people.
 */
import type { EventEmitter } from 'eventemitter3';
import type { SchedulerEvents, TickMissedEvent, TickSkippedEvent } from './events.js';
import type { RunInfo } from './types.js';

/** What each log point is, as the `event` field of its record. */
export type LogEvent =
  | 'store.unreachable'
  | 'store.failed'
  | 'store.recovered'
  | 'planner.elected'
  | 'planner.lost'
  | 'run.lease-lost'
  | 'run.recovered'
  | 'run.pending-timeout'
  | 'run.failed'
  | 'ticks.missed'
  | 'tick.skipped'
  | 'error';

/** The structured part of a record. Fields that do not apply to an event are absent. */
export interface LogFields {
  readonly event: LogEvent;
  /** This scheduler's `instanceId`: which process of the fleet speaks. */
  readonly instanceId: string;
  readonly jobName?: string;
  readonly runId?: string;
  readonly attempt?: number;
  /** The fan-out index the record is about. */
  readonly index?: number;
  /** The error, under the key pino's and bunyan's error serializers look for. */
  readonly err?: Error;
  /** The store operation that failed (`claimRun`, `lock.renew`, ...). */
  readonly operation?: string;
  /** `store.recovered`: how long the store had been failing. */
  readonly downMs?: number;
  /** `ticks.missed`: the first and last missed tick (ISO 8601) and why. */
  readonly from?: string;
  readonly to?: string;
  readonly reason?: string;
  readonly [key: string]: unknown;
}

/** A method of `Logger`: structured fields first, then the message (pino's and bunyan's order). */
export type LogMethod = (fields: LogFields, message: string) => void;

/**
 * Where the scheduler's records go: any object with these four methods. A pino or
 * bunyan logger (or a child of one) fits as is.
 * @example new Scheduler({ logger: pino({ name: 'jobs' }) })
 */
export interface Logger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
}

export type LogLevel = keyof Logger;

/** What a run record keeps of an error (`RunInfo.error`). */
type RunError = NonNullable<RunInfo['error']>;

/** Error-like values from the store records (`{ name, message }`) become `Error`s, which serializers know. */
function asError(error: RunError | Error): Error {
  if (error instanceof Error) return error;
  const converted = new Error(error.message);
  converted.name = error.name;
  return converted;
}

/**
 * The log points of a scheduler. Built once per scheduler; every method is safe to
 * call from any loop (a logger that throws is ignored: there is nowhere left to
 * report it) and does nothing when logging is off.
 */
export class Log {
  readonly #logger: Logger | undefined;
  readonly #instanceId: string;
  /** Set for the default logger: it stays silent once the app listens on `error` itself. */
  readonly #events: EventEmitter<SchedulerEvents> | undefined;

  /**
   * @param logger the app's logger, `false` for none, or `undefined` for the default
   * (stderr, while `events` has no `error` listener).
   */
  constructor(logger: Logger | false | undefined, instanceId: string, events: EventEmitter<SchedulerEvents>) {
    this.#logger = logger === false ? undefined : (logger ?? stderrLogger());
    this.#events = logger === undefined ? events : undefined;
    this.#instanceId = instanceId;
  }

  /** False with `logger: false`: callers may skip work that only feeds the log. */
  get enabled(): boolean {
    return this.#logger !== undefined;
  }

  /** The first failed store call after a success: the store is unreachable (or refuses). */
  storeUnreachable(operation: string, err: Error): void {
    this.#write('error', { event: 'store.unreachable', operation, err }, `store unreachable: ${err.message}`);
  }

  /** Every further failed store call while the store is failing. */
  storeFailed(operation: string, err: Error): void {
    this.#write('debug', { event: 'store.failed', operation, err }, `store call ${operation} failed: ${err.message}`);
  }

  /** The first successful store call after failures. */
  storeRecovered(operation: string, downMs: number): void {
    this.#write('warn', { event: 'store.recovered', operation, downMs }, `store reachable again after ${formatMs(downMs)}`);
  }

  plannerElected(): void {
    this.#write('info', { event: 'planner.elected' }, 'this instance is now the planner');
  }

  /** The planner lease was lost (not given up by `stop()`): another instance may plan now. */
  plannerLost(): void {
    this.#write('warn', { event: 'planner.lost' }, 'this instance lost the planner lease');
  }

  /** A running attempt's lease could not be renewed: its handler is aborted (`'lease-lost'`). */
  leaseLost(run: { readonly id: string; readonly jobName: string; readonly attempt: number }, index?: number): void {
    const fields: Omit<LogFields, 'instanceId'> = { event: 'run.lease-lost', jobName: run.jobName, runId: run.id, attempt: run.attempt };
    this.#write('warn', index === undefined ? fields : { ...fields, index }, `run ${run.id} lost its lease; its handler is aborted`);
  }

  /** A run (or index) whose owner went silent was taken back by the planner, to be retried. */
  runRecovered(run: RunInfo, index?: number): void {
    const fields: Omit<LogFields, 'instanceId'> = { event: 'run.recovered', jobName: run.jobName, runId: run.id, attempt: run.attempt };
    this.#write('warn', index === undefined ? fields : { ...fields, index }, `run ${run.id} recovered from an owner that went silent; it will be retried`);
  }

  pendingTimeout(run: RunInfo): void {
    const fields = { event: 'run.pending-timeout', jobName: run.jobName, runId: run.id, attempt: run.attempt } as const;
    this.#write('warn', fields, `run ${run.id} failed: no instance started it within its pendingTimeout`);
  }

  /** A run failed for good (retries used up, or its timeout passed). */
  runFailed(run: RunInfo, error: RunError, reason: string): void {
    const fields = { event: 'run.failed', jobName: run.jobName, runId: run.id, attempt: run.attempt, reason, err: asError(error) } as const;
    this.#write('error', fields, `run ${run.id} failed (${reason}): ${error.message}`);
  }

  ticksMissed(event: TickMissedEvent): void {
    const from = event.from.toISOString();
    const to = event.to.toISOString();
    const fields = { event: 'ticks.missed', jobName: event.jobName, from, to, reason: event.reason } as const;
    const range = from === to ? from : `${from} to ${to}`;
    this.#write('warn', fields, `job ${event.jobName} missed ${range} (${event.reason})`);
  }

  tickSkipped(event: TickSkippedEvent): void {
    const fields = { event: 'tick.skipped', jobName: event.jobName, reason: event.reason } as const;
    this.#write('info', fields, `job ${event.jobName} skipped ${event.scheduledAt.toISOString()}: a run is still active (${event.reason})`);
  }

  /** Any other trouble reported on `error`: a listener that threw, an internal fault. */
  error(err: Error): void {
    this.#write('error', { event: 'error', err }, err.message);
  }

  #write(level: LogLevel, fields: Omit<LogFields, 'instanceId'>, message: string): void {
    const logger = this.#logger;
    if (logger === undefined || (this.#events !== undefined && this.#events.listenerCount('error') > 0)) return;
    try {
      logger[level]({ ...fields, instanceId: this.#instanceId } as LogFields, message);
    } catch {
      // A logger that throws has nowhere left to report to; the scheduler carries on.
    }
  }
}

/** Fields the stderr line shows, in this order, after the message. */
const SHOWN: readonly (keyof LogFields)[] = ['jobName', 'runId', 'attempt', 'index', 'operation', 'instanceId'];

/**
 * The default logger: one readable line per error or warning on stderr, e.g.
 * `tickwork ERROR store unreachable: connect ECONNREFUSED 127.0.0.1:6379 (operation=init instanceId=web-1)`.
 * Info and debug records are dropped.
 */
export function stderrLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const line = (level: string) => (fields: LogFields, message: string) => {
    const shown = SHOWN.filter((key) => fields[key] !== undefined).map((key) => `${key}=${String(fields[key])}`);
    write(`tickwork ${level} ${oneLine(message)}${shown.length === 0 ? '' : ` (${shown.join(' ')})`}\n`);
  };
  const drop = (): void => {};
  return { error: line('ERROR'), warn: line('WARN'), info: drop, debug: drop };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

function formatMs(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`;
}
