/**
 * The error hierarchy. Every error tickwork throws or reports is a `TickworkError`
 * with a stable `code`; subclasses exist only where callers need `instanceof`.
 */

/** Stable machine-readable codes; never renamed once released. */
export type TickworkErrorCode =
  | 'VALIDATION'
  | 'JOB_NOT_FOUND'
  | 'NOT_RUNNING'
  | 'RUN_ABORTED'
  | 'STORE'
  | 'LISTENER'
  | 'DRIVER_MISSING'
  /** The store lost its data (a Redis restarted empty, a Postgres schema dropped): this instance wrote its jobs again. */
  | 'STORE_RESET';

export class TickworkError extends Error {
  readonly code: TickworkErrorCode;

  constructor(code: TickworkErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem found in user input: where it is, what is wrong, and the offending value. */
export interface ValidationIssue {
  /** Dotted path of the field, e.g. `retry.initialDelay`; empty for the input as a whole. */
  readonly path: string;
  readonly message: string;
  readonly value: unknown;
}

/** Bad input at a public boundary. Thrown before anything is written. */
export class ValidationError extends TickworkError {
  readonly issues: readonly ValidationIssue[];

  constructor(context: string, issues: readonly ValidationIssue[]) {
    super('VALIDATION', `${context}: ${issues.map(formatIssue).join('; ')}`);
    this.issues = issues;
  }
}

function formatIssue(issue: ValidationIssue): string {
  const where = issue.path === '' ? '' : `${issue.path}: `;
  return `${where}${issue.message} (got ${describeValue(issue.value)})`;
}

/** A short rendering of a user value for an error message. Total: whatever the value, it returns a string. */
export function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(shorten(value, 80)) : renderValue(value, 80);
}

/**
 * A value as text, at most `limit` characters: a string as it is, a number as
 * JavaScript shows it (`NaN`, `-Infinity`, `-0`), a bigint with its `n`, an object
 * as JSON. Total: a cyclic object, a Proxy whose traps throw, or an object that
 * cannot be converted to a primitive still get a description, never an exception.
 */
export function renderValue(value: unknown, limit: number): string {
  try {
    return shorten(render(value), limit);
  } catch {
    return 'a value that cannot be shown';
  }
}

function render(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'function':
      return 'a function';
    case 'symbol':
    case 'boolean':
    case 'undefined':
      return String(value);
  }
  if (value === null) return 'null';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  try {
    return JSON.stringify(value, jsonReplacer) ?? Object.prototype.toString.call(value);
  } catch {
    // A cycle, a throwing getter or toJSON, or too deep to serialize.
    return `${Object.prototype.toString.call(value)} (not serializable)`;
  }
}

/** Shows in JSON what JSON cannot hold, rather than as `null` or an exception. */
function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}

/** `text` cut to `limit` characters with an ellipsis, never between the two halves of a surrogate pair. */
export function shorten(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit - 3;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}

/** The longest error message tickwork records or reports, in characters; longer ones are cut. */
export const MAX_MESSAGE_LENGTH = 4_096;

/** The message of a thrown value, for a message of our own. Total, like `renderValue`. */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error && typeof error.message === 'string') return shorten(error.message, MAX_MESSAGE_LENGTH);
  } catch {
    // A revoked Proxy fails `instanceof`; a getter may throw: render it as a value below.
  }
  return renderValue(error, MAX_MESSAGE_LENGTH);
}

export class JobNotFoundError extends TickworkError {
  readonly jobName: string;

  constructor(jobName: string) {
    super('JOB_NOT_FOUND', `job ${JSON.stringify(jobName)} does not exist in the store`);
    this.jobName = jobName;
  }
}

/**
 * Why a running handler's `signal` was aborted. `run-failed`: the fan-out run this
 * index belongs to failed (another index used up the retries, or it timed out).
 */
export type AbortReason = 'replaced' | 'timeout' | 'attempt-timeout' | 'lease-lost' | 'shutdown' | 'run-failed';

/**
 * The `reason` of an aborted `ctx.signal`. `reason` tells which of the causes in
 * {@link AbortReason} ended the handler, so handlers can tell a shutdown (the run
 * will be retried elsewhere) from a replacement or a timeout.
 */
export class RunAbortedError extends TickworkError {
  readonly reason: AbortReason;
  readonly runId: string;

  constructor(runId: string, reason: AbortReason) {
    super('RUN_ABORTED', `run ${runId} aborted: ${reason}`);
    this.reason = reason;
    this.runId = runId;
  }
}

/** A store operation failed; reported through the scheduler's `error` event. */
export class StoreError extends TickworkError {
  readonly operation: string;

  constructor(operation: string, cause: unknown) {
    super('STORE', `store operation ${operation} failed: ${messageOf(cause)}`, {
      cause,
    });
    this.operation = operation;
  }
}
