/**
 * Runs handlers. Claims ready runs of the jobs this instance registered, only while
 * it has a free slot (p-queue bounds `maxConcurrentRuns`, and a run it cannot start
 * stays in the store for another instance), then drives each attempt: the
 * handler's `AbortSignal`, `attemptTimeout` and `timeout`, lease renewal, retries
 * with backoff, and the fenced write of how the attempt ended.
 *
 * A fan-out run is claimed index by index: each claim leases one index and takes a
 * slot of its own, and the store announces the run as ready again while it has room,
 * so its indices spread over every instance with free slots. The store counts the
 * run's failed attempts and decides when it has failed.
 */
import PQueue from 'p-queue';
import { abortAttempt, createAttempt, leaseOf, runHandler, timeoutError, type Attempt, type Ending } from './attempt.js';
import { retryDelay } from './backoff.js';
import type { TimerHandle } from './clock.js';
import { runFailedEvent, safeEmit, toRunError } from './events.js';
import type { NormalizedJob } from './options.js';
import { MAX_WAIT_MS, type Runtime } from './runtime.js';
import { LEASE_EXPIRED_ERROR, type AttemptOutcome, type Claim, type RunError, type RunRecord, type StoreNotification } from './store.js';
import type { RunContext } from './types.js';
import { toRunInfo } from './views.js';

/** How a run is given back unstarted (a claim that arrived after `stop()`). */
const RELEASED: AttemptOutcome = { status: 'released' };
/** Ready runs fetched per look-up when slots are unlimited. */
const CLAIM_BATCH = 100;

export class Executor {
  readonly #rt: Runtime;
  readonly #jobs: ReadonlyMap<string, NormalizedJob>;
  readonly #jobNames: ReadonlySet<string>;
  readonly #queue: PQueue;
  /** By `Attempt.key`. */
  readonly #attempts = new Map<string, Attempt>();
  /** Fan-out runs with indices running here, by run ID: a run that ends aborts them all. */
  readonly #indexAttempts = new Map<string, Set<Attempt>>();
  /** Claims under way: they hold a slot until they resolve. */
  #claiming = 0;
  /** A ready run was left unclaimed for want of a slot: the next freed slot looks for it. */
  #backlog = false;
  #accepting = false;
  #filling: Promise<void> | undefined;
  #fillAgain = false;
  #timer: TimerHandle | undefined;
  #timerAt: number | undefined;

  constructor(runtime: Runtime, jobs: ReadonlyMap<string, NormalizedJob>, jobNames: ReadonlySet<string>, maxConcurrentRuns: number) {
    this.#rt = runtime;
    this.#jobs = jobs;
    this.#jobNames = jobNames;
    this.#queue = new PQueue({ concurrency: maxConcurrentRuns });
  }

  /** IDs of the runs (or fan-out indices, `${runId}.${index}`) this instance is executing. */
  get running(): readonly string[] {
    return [...this.#attempts.keys()];
  }

  start(): void {
    this.#accepting = true;
    this.poke();
  }

  /** Stops claiming at once; with `abort`, aborts running handlers (`'shutdown'`). Resolves once every attempt has ended. */
  async stop(abort: boolean): Promise<void> {
    this.#accepting = false;
    this.#clearTimer();
    if (abort) for (const attempt of this.#attempts.values()) abortAttempt(attempt, 'shutdown');
    await this.#filling;
    await this.#queue.onIdle();
  }

  /** Looks for ready runs now (coalesced with a look-up already under way). */
  poke(): void {
    if (!this.#accepting) return;
    if (this.#filling !== undefined) {
      this.#fillAgain = true;
      return;
    }
    this.#filling = (async () => {
      try {
        do {
          this.#fillAgain = false;
          await this.#fill();
        } while (this.#fillAgain && this.#accepting);
      } finally {
        this.#filling = undefined;
      }
    })();
  }

  /** Renews the leases of running attempts; an attempt whose lease is gone is aborted. */
  async heartbeat(): Promise<void> {
    const { clock, io, store, leaseMs, instanceId } = this.#rt;
    await Promise.all(
      [...this.#attempts.values()].map(async (attempt) => {
        const now = clock.now();
        const renewed = await io('renewLease', () => store.renewLease(leaseOf(attempt, instanceId, now, { leaseUntil: now + leaseMs })));
        if (renewed?.ok === true) attempt.leaseUntil = now + leaseMs;
        else if (renewed !== undefined) abortAttempt(attempt, renewed.status === 'cancelled' ? 'replaced' : 'lease-lost');
      }),
    );
    this.poke(); // notifications are hints; look for work anyway
  }

  onNotification(notification: StoreNotification): void {
    if (notification.type === 'run-finished') {
      const { runId, status } = notification;
      const attempt = this.#attempts.get(runId);
      if (attempt !== undefined && status === 'cancelled') abortAttempt(attempt, 'replaced');
      // A fan-out run ended elsewhere (another index failed it, Replace, a timeout): its indices here stop too.
      for (const indexAttempt of this.#indexAttempts.get(runId) ?? []) abortAttempt(indexAttempt, status === 'cancelled' ? 'replaced' : 'run-failed');
    } else if (notification.type === 'run-ready' && this.#jobNames.has(notification.jobName)) {
      // The notification names the run: claim it straight away rather than searching for it.
      if (notification.readyAt > this.#rt.clock.now()) this.#wakeAt(notification.readyAt);
      else if (this.#freeSlots() <= 0) this.#backlog = true;
      else if (this.#accepting) void this.#claim(notification.runId, notification.jobName);
    }
  }

  #freeSlots(): number {
    return this.#queue.concurrency - this.#attempts.size - this.#claiming;
  }

  /**
   * Claims a run (or the next index of a fan-out run) and starts it; false when
   * another instance got it first (or the store failed).
   */
  async #claim(runId: string, jobName: string): Promise<boolean> {
    const job = this.#jobs.get(jobName);
    if (job === undefined || this.#attempts.has(runId)) return false;
    const { clock, io, store, instanceId, leaseMs } = this.#rt;
    const now = clock.now();
    this.#claiming += 1;
    let claim: Claim | undefined;
    try {
      claim = await io('claimRun', () =>
        store.claimRun({
          runId,
          owner: instanceId,
          now,
          leaseUntil: now + leaseMs,
          ...(job.timeoutMs === undefined ? {} : { deadlineAt: now + job.timeoutMs }),
        }),
      );
    } finally {
      // Released in the same synchronous step that `#begin` takes the slot, so no other claim slips in between.
      this.#claiming -= 1;
    }
    if (claim === undefined) return false;
    const attempt = createAttempt(claim, job);
    if (!this.#accepting) {
      // Stopped while the claim was on its way: give the run straight back rather than start a handler.
      await io('finishAttempt', () => store.finishAttempt(leaseOf(attempt, instanceId, clock.now(), { outcome: RELEASED })));
      return false;
    }
    // One claim leases one index of a fan-out run; a claim that leaves more to take notifies `run-ready` again.
    this.#begin(attempt);
    return true;
  }

  async #fill(): Promise<void> {
    const { clock, io, store } = this.#rt;
    while (this.#accepting && this.#freeSlots() > 0 && this.#jobNames.size > 0) {
      const limit = Math.min(this.#freeSlots(), CLAIM_BATCH);
      const found = await io('findReadyRuns', () => store.findReadyRuns({ jobNames: this.#jobNames, now: clock.now(), limit }));
      if (found === undefined) return; // reported; the heartbeat looks again
      if (found.nextReadyAt !== undefined) this.#wakeAt(found.nextReadyAt);
      let claimed = 0;
      for (const candidate of found.runs) {
        if (!this.#accepting || this.#freeSlots() <= 0) break;
        if (await this.#claim(candidate.id, candidate.jobName)) claimed += 1;
      }
      if (found.runs.length < limit || claimed === 0) return;
    }
    if (this.#freeSlots() <= 0) this.#backlog = true;
  }

  #begin(attempt: Attempt): void {
    this.#attempts.set(attempt.key, attempt);
    if (attempt.index !== undefined) {
      const siblings = this.#indexAttempts.get(attempt.run.id) ?? new Set<Attempt>();
      siblings.add(attempt);
      this.#indexAttempts.set(attempt.run.id, siblings);
    }
    void this.#queue.add(() => this.#execute(attempt)).catch((error: unknown) => {
      safeEmit(this.#rt.events, 'error', error instanceof Error ? error : new Error(String(error)));
    });
  }

  async #execute(attempt: Attempt): Promise<void> {
    const { run, index, job } = attempt;
    const { clock } = this.#rt;
    try {
      if (index === undefined && run.attempt > job.retry.limit + 1) {
        // Recovered after a lost lease with no retries left: the lost attempt was the last. (The store
        // counts a fan-out run's lost leases itself.)
        await this.#finish(attempt, { status: 'failed', error: run.error ?? LEASE_EXPIRED_ERROR });
        return;
      }
      if (run.deadlineAt !== undefined && clock.now() >= run.deadlineAt) {
        await this.#finish(attempt, { status: 'failed', error: timeoutError(job) });
        return;
      }
      safeEmit(this.#rt.events, 'run:started', () => ({ run: toRunInfo(run), ...(index === undefined ? {} : { index: index.index }) }));
      const ending = await runHandler(attempt, this.#rt.clock, this.#interval(attempt.run));
      await this.#conclude(attempt, ending);
    } finally {
      this.#attempts.delete(attempt.key);
      const siblings = this.#indexAttempts.get(run.id);
      siblings?.delete(attempt);
      if (siblings?.size === 0) this.#indexAttempts.delete(run.id);
      // Runs are claimed as their notifications arrive; a freed slot searches only if one was turned away.
      if (this.#backlog) {
        this.#backlog = false;
        this.poke();
      }
    }
  }

  /** Writes how the attempt ended: success, retry, final failure, or release. */
  async #conclude(attempt: Attempt, ending: Ending): Promise<void> {
    const { job } = attempt;
    if (ending.kind === 'returned') return this.#finish(attempt, { status: 'succeeded' });
    if (ending.kind === 'threw') return this.#fail(attempt, toRunError(ending.error));
    switch (ending.reason) {
      case 'shutdown':
        return this.#finish(attempt, { status: 'released' });
      case 'timeout':
        return this.#finish(attempt, { status: 'failed', error: timeoutError(job) });
      case 'attempt-timeout':
        return this.#fail(attempt, {
          name: 'AttemptTimeoutError',
          message: `attempt ${attempt.index?.attempt ?? attempt.run.attempt} exceeded attemptTimeout (${job.attemptTimeoutMs} ms)`,
        });
      case 'replaced':
      case 'lease-lost':
      case 'run-failed':
        return; // the run is no longer ours: whoever took it (or ended it) records it
    }
  }

  /**
   * A failed attempt: retry after the backoff delay, unless retries or the run's
   * deadline are exhausted. A fan-out index always asks for its retry: only the
   * store knows how many attempts the run's other indices have failed, and it
   * fails the run once they exceed the limit. Its delay grows with its own attempts.
   */
  async #fail(attempt: Attempt, error: RunError): Promise<void> {
    const { run, index, job, key } = attempt;
    const attemptNumber = index?.attempt ?? run.attempt;
    if (index === undefined && attemptNumber > job.retry.limit) return this.#finish(attempt, { status: 'failed', error });
    const readyAt = this.#rt.clock.now() + retryDelay(job.retry, attemptNumber, key);
    if (run.deadlineAt !== undefined && readyAt >= run.deadlineAt) {
      return this.#finish(attempt, { status: 'failed', error: timeoutError(job) });
    }
    return this.#finish(attempt, { status: 'retry', error, readyAt });
  }

  async #finish(attempt: Attempt, outcome: AttemptOutcome): Promise<void> {
    const { abort } = attempt;
    const { clock, io, store, events, leaseMs, instanceId } = this.#rt;
    const write = () => io('finishAttempt', () => store.finishAttempt(leaseOf(attempt, instanceId, clock.now(), { outcome })));
    let result = await write();
    // The store is unreachable (reported). Keep trying while this instance may still hold the lease (the
    // heartbeat renews it while the attempt is tracked): giving up early would let another instance recover
    // the run and run a handler that already finished. Once the lease is gone, that is what must happen.
    for (
      let delay = 100;
      result === undefined && !abort.aborted && clock.now() < attempt.leaseUntil;
      delay = Math.min(delay * 2, leaseMs / 3)
    ) {
      await clock.sleep(delay);
      result = await write();
    }
    if (result === undefined || !result.ok) return; // fenced out or lease lost: whoever holds the run now records it
    // The store's answer says what happened to the run: a fan-out index's outcome may have ended it, or not.
    const { run: finished, index } = result;
    if (finished.status === 'succeeded') return safeEmit(events, 'run:succeeded', () => ({ run: toRunInfo(finished) }));
    if (finished.status === 'failed') {
      const error = finished.error ?? ('error' in outcome ? outcome.error : LEASE_EXPIRED_ERROR);
      return safeEmit(events, 'run:failed', () => runFailedEvent(finished, error));
    }
    if (outcome.status === 'retry' && (index ?? finished).status === 'pending') {
      this.#wakeAt(outcome.readyAt);
      safeEmit(events, 'run:retry', () => ({
        run: toRunInfo(finished),
        error: outcome.error,
        retryAt: new Date(outcome.readyAt),
        ...(index === undefined ? {} : { index: index.index }),
      }));
    }
  }

  #interval(run: RunRecord): RunContext['interval'] {
    if (run.trigger === 'manual') return undefined;
    const job = this.#jobs.get(run.jobName);
    if (job === undefined || job.schedule.kind === 'at') return undefined;
    // The tick before a known tick needs no anchor: `every` ticks are one period apart, and cron ticks have none.
    const start =
      job.schedule.kind === 'every'
        ? run.scheduledAt - job.schedule.everyMs
        : this.#rt.schedules.of({ schedule: job.schedule, timezone: job.timezone, createdAt: 0 }).latest(run.scheduledAt - 1);
    return start === undefined ? undefined : { start: new Date(start), end: new Date(run.scheduledAt) };
  }

  /** Arms the single wake-up timer for the earliest known future `readyAt`. */
  #wakeAt(readyAt: number): void {
    if (!this.#accepting || (this.#timerAt !== undefined && this.#timerAt <= readyAt)) return;
    this.#clearTimer();
    const now = this.#rt.clock.now();
    const at = Math.min(readyAt, now + MAX_WAIT_MS);
    this.#timerAt = at;
    this.#timer = this.#rt.clock.setTimer(() => {
      this.#timer = undefined;
      this.#timerAt = undefined;
      this.poke();
    }, at - now);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#rt.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = undefined;
  }
}
