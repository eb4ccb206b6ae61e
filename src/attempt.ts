/**
 * One attempt of a run (or of one index of a fan-out run) on this instance: what it
 * leased, the handler's context, its deadlines, and how its handler ended. The
 * executor decides what to claim and records outcomes; this module runs a handler.
 */
import type { Clock, TimerHandle } from './clock.js';
import { RunAbortedError, type AbortReason } from './errors.js';
import { RUN_TIMEOUT_ERROR_NAME, isThenable } from './events.js';
import { cloneJson } from './json-value.js';
import { LazyAbort } from './lazy-abort.js';
import type { NormalizedJob } from './job-definition.js';
import {
  indexId,
  type AttemptOutcome,
  type Claim,
  type FinishAttemptInput,
  type IndexRecord,
  type JsonValue,
  type RenewLeaseInput,
  type RunError,
  type RunRecord,
  type RunTrigger,
} from './store.js';
import type { ScheduleCache } from './schedule-cache.js';
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

/**
 * How an attempt's handler ended, as seen by the executor: the input of its retry
 * policy, whose decision is the `AttemptOutcome` it writes to the store (and the
 * store's, a run's final status).
 */
export type HandlerEnding =
  | { readonly kind: 'returned' }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'aborted'; readonly reason: AbortReason };

/** The handler's `interval`: from the tick before the run's to the run's (none for a manual or one-off run). */
export function intervalOf(run: RunRecord, job: NormalizedJob, schedules: ScheduleCache): RunContext['interval'] {
  if (run.trigger === 'manual' || job.schedule.kind === 'at') return undefined;
  // The tick before a known tick needs no anchor: `every` ticks are one period apart, and cron ticks have none.
  const start =
    job.schedule.kind === 'every'
      ? run.scheduledAt - job.schedule.everyMs
      : schedules.of({ schedule: job.schedule, timezone: job.timezone, createdAt: 0 }).latest(run.scheduledAt - 1);
  return start === undefined ? undefined : { start: new Date(start), end: new Date(run.scheduledAt) };
}

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
 * The `renewLease` input of `owner`'s attempt. The lease inputs are literals of their
 * own rather than a shared base plus the call's fields: V8 builds `{ ...lease, key }`
 * and `Object.assign` on generic paths, and every run finishes through here.
 */
export function renewalOf(attempt: Attempt, owner: string, now: number, leaseUntil: number): RenewLeaseInput {
  const { run, index } = attempt;
  return index === undefined
    ? { runId: run.id, owner, fence: run.fence, now, leaseUntil }
    : { runId: run.id, index: index.index, owner, fence: index.fence, now, leaseUntil };
}

/** The `finishAttempt` input of `owner`'s attempt. */
export function finishOf(attempt: Attempt, owner: string, now: number, outcome: AttemptOutcome): FinishAttemptInput {
  const { run, index } = attempt;
  return index === undefined
    ? { runId: run.id, owner, fence: run.fence, now, outcome }
    : { runId: run.id, index: index.index, owner, fence: index.fence, now, outcome };
}

/** Aborts the attempt's handler (its first abort wins). */
export function abortAttempt(attempt: Attempt, reason: AbortReason): void {
  if (!attempt.abort.aborted) attempt.abort.abort(new RunAbortedError(attempt.run.id, reason));
}

export function timeoutError(job: NormalizedJob): RunError {
  return { name: RUN_TIMEOUT_ERROR_NAME, message: `run exceeded its timeout (${job.timeoutMs} ms)` };
}

const RETURNED: HandlerEnding = Object.freeze({ kind: 'returned' });

/**
 * How long a handler aborted by a shutdown (`stop({ abort: true })`, or a
 * `stop({ timeout })` that ran out) may take to settle. After it the attempt ends
 * anyway: its run is released for another instance, and whatever the handler does
 * later is fenced out. A handler that ignores its signal cannot hold `stop()` up.
 */
export const SHUTDOWN_GRACE_MS = 5_000;

/**
 * The frames through which the executor calls a handler and waits for it. Their
 * names show in the stack (async frames included) of any call the handler makes,
 * which is how `stop()` knows that a handler called it: that handler waits for
 * `stop()`, so `stop()` must not wait for it. String keys, so that minifiers keep them.
 */
const CALLS_HANDLER = 'tickwork:calls-handler';
const AWAITS_HANDLER = 'tickwork:awaits-handler';
const HANDLER_FRAMES = {
  [CALLS_HANDLER]: (job: NormalizedJob, ctx: RunContext): unknown => job.handler(ctx),
  async [AWAITS_HANDLER](result: PromiseLike<unknown>): Promise<void> {
    await result;
  },
};

/** True when the caller runs inside a handler this module called (directly, or after any number of awaits). */
export function calledFromHandler(): boolean {
  const { stackTraceLimit, prepareStackTrace } = Error;
  const holder: { stack?: unknown } = {};
  let stack: unknown;
  try {
    Error.stackTraceLimit = Infinity;
    Error.prepareStackTrace = (_, callSites) => callSites;
    Error.captureStackTrace(holder, calledFromHandler);
    stack = holder.stack; // formatted on first read: while the structured formatter is in place
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
  }
  const callSites = Array.isArray(stack) ? (stack as NodeJS.CallSite[]) : [];
  return callSites.some((site) => {
    const name = site.getFunctionName();
    return name === CALLS_HANDLER || name === AWAITS_HANDLER;
  });
}

/**
 * Calls the handler under its deadlines; resolves as soon as the attempt's fate is
 * known. The handler is called at once (a synchronous throw is its failure); the
 * attempt ends with whichever comes first, the handler's settling or an abort.
 */
export function runHandler(attempt: Attempt, clock: Clock, interval: RunContext['interval']): Promise<HandlerEnding> {
  const { run, job, abort } = attempt;
  const attemptTimeoutMs = job.attemptTimeoutMs;
  const runEnd = run.deadlineAt;
  let timer: TimerHandle | undefined;
  if (attemptTimeoutMs !== undefined || runEnd !== undefined) {
    const now = clock.now();
    const attemptEnd = attemptTimeoutMs === undefined ? Infinity : now + attemptTimeoutMs;
    const reason = runEnd !== undefined && runEnd <= attemptEnd ? 'timeout' : 'attempt-timeout';
    timer = clock.setTimer(() => abortAttempt(attempt, reason), Math.min(attemptEnd, runEnd ?? Infinity) - now);
  }
  const timers: Timers = { clock, deadline: timer, grace: undefined };
  // No named closures here: each would be built on every run (and named, under some transpilers).
  return new Promise<HandlerEnding>((resolve) => {
    // A shutdown lets the handler settle (its run is then released, or recorded if it finished) within
    // SHUTDOWN_GRACE_MS; every other abort ends the attempt at once, whatever the handler does next.
    abort.watch(() => {
      if (abort.reason !== 'shutdown') settle(resolve, timers, aborted(abort));
      else timers.grace ??= clock.setTimer(() => settle(resolve, timers, aborted(abort)), SHUTDOWN_GRACE_MS);
    });
    let result: unknown;
    try {
      result = HANDLER_FRAMES[CALLS_HANDLER](job, new AttemptContext(attempt, interval));
    } catch (error) {
      settle(resolve, timers, threw(abort, error));
      return;
    }
    if (!isThenable(result)) settle(resolve, timers, RETURNED);
    else {
      HANDLER_FRAMES[AWAITS_HANDLER](result).then(
        () => settle(resolve, timers, RETURNED),
        (error: unknown) => settle(resolve, timers, threw(abort, error)),
      );
    }
  });
}

/** An attempt's timers: its deadline (`timeout`, `attemptTimeout`) and, once a shutdown aborted it, its grace. */
interface Timers {
  readonly clock: Clock;
  readonly deadline: TimerHandle | undefined;
  grace: TimerHandle | undefined;
}

/** Ends the attempt (the first ending wins). */
function settle(resolve: (ending: HandlerEnding) => void, timers: Timers, ending: HandlerEnding): void {
  if (timers.deadline !== undefined) timers.clock.clearTimer(timers.deadline);
  if (timers.grace !== undefined) timers.clock.clearTimer(timers.grace);
  resolve(ending);
}

/** A handler that throws once its signal has aborted was ended by that abort, not by a fault of its own. */
function threw(abort: LazyAbort, error: unknown): HandlerEnding {
  return abort.aborted ? aborted(abort) : { kind: 'threw', error };
}

function aborted(abort: LazyAbort): HandlerEnding {
  return { kind: 'aborted', reason: abort.reason as AbortReason };
}

/**
 * The handler's `ctx`. A class, not an object literal with a `signal` getter: V8
 * builds such a literal on a slow path (about a microsecond, on every run). The
 * getter is the prototype's, so the `AbortSignal` is still built only when read.
 */
class AttemptContext implements RunContext {
  readonly runId: string;
  readonly jobName: string;
  readonly scheduledAt: Date;
  readonly interval: RunContext['interval'];
  readonly attempt: number;
  readonly index: number;
  readonly completions: number;
  readonly trigger: RunTrigger;
  readonly data: JsonValue | undefined;
  /** The run's stored `traceparent`, for the telemetry wrapper (not part of the public `RunContext`). */
  readonly traceparent: string | undefined;
  readonly #abort: LazyAbort;

  constructor({ run, index, job, abort }: Attempt, interval: RunContext['interval']) {
    this.runId = run.id;
    this.jobName = run.jobName;
    this.scheduledAt = new Date(run.scheduledAt);
    this.interval = interval;
    this.attempt = index?.attempt ?? run.attempt;
    this.index = index?.index ?? 0;
    this.completions = run.fanOut?.completions ?? 1;
    this.trigger = run.trigger;
    // The run's own data (JSON `null` included) or else the job's; a copy of it, so that a handler that
    // changes its `ctx.data` changes no later run's. A run without object data copies nothing.
    this.data = cloneJson(run.data === undefined ? job.data : run.data);
    this.traceparent = run.traceparent;
    this.#abort = abort;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }
}
