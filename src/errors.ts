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
  | 'DRIVER_MISSING';

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

/** A short, safe rendering of a user value for an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (typeof value === 'function') return 'a function';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (typeof value === 'bigint') return `${value}n`;
  if (value === undefined) return 'undefined';
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return Object.prototype.toString.call(value);
  }
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
    super('STORE', `store operation ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.operation = operation;
  }
}
