/**
 * One attempt of a run (or of one index of a fan-out run) on this instance: what it
 * leased, the handler's context, its deadlines, and how its handler ended. The
 * executor decides what to claim and records outcomes; this module runs a handler.
 */
import type { Clock } from './clock.js';
import { RunAbortedError, type AbortReason } from './errors.js';
import { RUN_TIMEOUT_ERROR_NAME } from './events.js';
import { LazyAbort } from './lazy-abort.js';
import type { NormalizedJob } from './options.js';
import { indexId, type Claim, type IndexRecord, type LeaseInput, type RunError, type RunRecord } from './store.js';
import type { RunContext } from './types.js';

export interface Attempt {
  readonly run: RunRecord;
  /** Fan-out runs: the index this attempt leased. */
  readonly index: IndexRecord | undefined;
  /** The run's ID, or the index's. */
  readonly key: string;
  readonly job: NormalizedJob;
  readonly abort: LazyAbort;
  /** The lease as far as this instance knows it holds it: set by the claim, extended by each renewal. */
  leaseUntil: number;
}

/** How an attempt's handler ended, as seen by the executor. */
export type Ending =
  | { readonly kind: 'returned' }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'aborted'; readonly reason: AbortReason };

export function createAttempt(claim: Claim, job: NormalizedJob): Attempt {
  const { run, index } = claim;
  return {
    run,
    index,
    key: index === undefined ? run.id : indexId(run.id, index.index),
    job,
    abort: new LazyAbort(),
    leaseUntil: (index ?? run).leaseUntil ?? 0,
  };
}

/**
 * What the store needs to know `owner` still holds the attempt's lease, with the
 * call's own fields (`leaseUntil`, `outcome`). Built with Object.assign: V8 builds
 * `{ ...lease, outcome }` on a slow path, and every run finishes through here.
 */
export function leaseOf<Extra extends object>(attempt: Attempt, owner: string, now: number, extra: Extra): LeaseInput & Extra {
  const { run, index } = attempt;
  const lease: LeaseInput =
    index === undefined ? { runId: run.id, owner, fence: run.fence, now } : { runId: run.id, index: index.index, owner, fence: index.fence, now };
  return Object.assign(lease, extra);
}

/** Aborts the attempt's handler (its first abort wins). */
export function abortAttempt(attempt: Attempt, reason: AbortReason): void {
  if (!attempt.abort.aborted) attempt.abort.abort(new RunAbortedError(attempt.run.id, reason));
}

export function timeoutError(job: NormalizedJob): RunError {
  return { name: RUN_TIMEOUT_ERROR_NAME, message: `run exceeded its timeout (${job.timeoutMs} ms)` };
}

/** Calls the handler under its deadlines; resolves as soon as the attempt's fate is known. */
export async function runHandler(attempt: Attempt, clock: Clock, interval: RunContext['interval']): Promise<Ending> {
  const { run, index, job, abort } = attempt;
  const now = clock.now();
  const attemptEnd = job.attemptTimeoutMs === undefined ? Infinity : now + job.attemptTimeoutMs;
  const runEnd = run.deadlineAt ?? Infinity;
  const deadline = Math.min(attemptEnd, runEnd);
  const timer =
    deadline === Infinity
      ? undefined
      : clock.setTimer(() => abortAttempt(attempt, runEnd <= attemptEnd ? 'timeout' : 'attempt-timeout'), deadline - now);
  const ctx: RunContext = {
    runId: run.id,
    jobName: run.jobName,
    scheduledAt: new Date(run.scheduledAt),
    interval,
    attempt: index?.attempt ?? run.attempt,
    index: index?.index ?? 0,
    completions: run.fanOut?.completions ?? 1,
    trigger: run.trigger,
    get signal() {
      return abort.signal;
    },
    data: run.data ?? job.data,
  };
  const handled: Promise<Ending> = Promise.resolve()
    .then(() => job.handler(ctx))
    .then(
      (): Ending => ({ kind: 'returned' }),
      (error: unknown): Ending => ({ kind: 'threw', error }),
    );
  // A shutdown lets the handler settle (its run is then released, or recorded if it finished);
  // every other abort ends the attempt at once, whatever the handler does next.
  const aborted = new Promise<Ending>((resolve) => {
    abort.watch(() => {
      if (abort.reason !== 'shutdown') resolve({ kind: 'aborted', reason: abort.reason as AbortReason });
    });
  });
  try {
    const ending = await Promise.race([handled, aborted]);
    // A handler that throws once its signal has aborted was ended by that abort, not by a fault of its own.
    return ending.kind === 'threw' && abort.aborted ? { kind: 'aborted', reason: abort.reason as AbortReason } : ending;
  } finally {
    if (timer !== undefined) clock.clearTimer(timer);
  }
}
