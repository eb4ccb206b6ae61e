/**
 * Runs handlers. Claims ready runs of the jobs this instance registered, only while
 * it has a free slot (a p-queue of `maxConcurrentRuns` slots: each task is a claim
 * and, if it lands, the attempt it starts; a run it cannot start stays in the store
 * for another instance, never in the queue), then drives each attempt: the handler's `AbortSignal`, `attemptTimeout`
 * and `timeout`, lease renewal, retries with backoff, and the fenced write of how
 * the attempt ended.
 *
 * A fan-out run is claimed index by index: each claim leases one index and takes a
 * slot of its own, and the store announces the run as ready again while it has room,
 * so its indices spread over every instance with free slots. The store counts
 * failed attempts, of plain and fan-out runs alike, and decides with the job's
 * retry limit when a failed attempt fails the run.
 */
import { abortAttempt, createAttempt, finishOf, intervalOf, renewalOf, runHandler, timeoutError, type Attempt, type HandlerEnding } from './attempt.js';
import { retryDelay } from './backoff.js';
import type { TimerHandle } from './clock.js';
import { messageOf } from './errors.js';
import { listening, reportError, runFailedEvent, safeEmit, toRunError, type RunFailureReason } from './events.js';
import type { NormalizedJob } from './job-definition.js';
import type { Runtime } from './runtime.js';
import { SerialTask } from './serial-task.js';
import { TaskPool } from './task-pool.js';
import { UpcomingRuns } from './upcoming-runs.js';
import {
  LEASE_EXPIRED_ERROR,
  type AttemptOutcome,
  type ClaimRunInput,
  type FinishAttemptResult,
  type RunError,
  type StoreNotification,
} from './store.js';
import { toRunInfo } from './views.js';

/** How a run is given back (unstarted after `stop()`, or on a shutdown abort). */
const RELEASED: AttemptOutcome = Object.freeze({ status: 'released' });
const SUCCEEDED: AttemptOutcome = Object.freeze({ status: 'succeeded' });
/** Ready runs fetched per look-up when slots are unlimited. */
const CLAIM_BATCH = 100;

export class Executor {
  readonly #rt: Runtime;
  readonly #jobs: ReadonlyMap<string, NormalizedJob>;
  readonly #jobNames: ReadonlySet<string>;
  readonly #maxConcurrentRuns: number;
  /** By `Attempt.key`: every attempt from its start until its end is recorded. */
  readonly #attempts = new Map<string, Attempt>();
  /** Fan-out runs with indices running here, by run ID: a run that ends aborts them all. */
  readonly #indexAttempts = new Map<string, Set<Attempt>>();
  /**
   * The slots: one task per claim, holding its slot through the attempt it starts. A
   * task is added only to a free slot, so the queue never holds a waiting task.
   */
  readonly #slots: TaskPool;
  /** A ready run was left unclaimed for want of a slot: the next freed slot looks for it. */
  #backlog = false;
  #accepting = false;
  /** Looks for ready runs, and again if asked meanwhile. */
  readonly #filling: SerialTask;
  /** Runs announced ready at a later time, claimed by ID when it comes; searches the store said are due later. */
  readonly #upcoming: UpcomingRuns;
  /** Resolves `stop()` once the last claim has settled and the last attempt has ended. */
  #drained: (() => void) | undefined;
  #draining: Promise<void> | undefined;
  /** Handlers that called `stop()` and wait for it: `stop()` does not wait for that many attempts. */
  #callersOfStop = 0;
  /** Aborts the attempts still running when `stop({ timeout })` runs out. */
  #abortTimer: TimerHandle | undefined;

  /** `first`: the jobs whose runs this instance claims first when many come due at once (see `UpcomingRuns`). */
  constructor(runtime: Runtime, jobs: ReadonlyMap<string, NormalizedJob>, jobNames: ReadonlySet<string>, maxConcurrentRuns: number, first?: (jobName: string) => boolean) {
    this.#rt = runtime;
    this.#jobs = jobs;
    this.#jobNames = jobNames;
    this.#maxConcurrentRuns = maxConcurrentRuns;
    this.#slots = new TaskPool(maxConcurrentRuns);
    this.#slots.on('next', this.#slotFreed);
    this.#filling = new SerialTask(() => this.#fill(), { again: () => this.#accepting });
    this.#upcoming = new UpcomingRuns(runtime.clock, {
      ready: (runId, jobName, now) => {
        if (this.#freeSlots() <= 0) this.#backlog = true;
        else this.#claim(runId, jobName, now);
      },
      search: () => this.poke(),
      ...(first === undefined ? {} : { first }),
    });
  }

  /** IDs of the runs (or fan-out indices, `${runId}.${index}`) this instance is executing. */
  get running(): readonly string[] {
    return [...this.#attempts.keys()];
  }

  start(): void {
    this.#accepting = true;
    this.poke();
  }

  /**
   * Stops claiming at once. Running handlers are aborted (`'shutdown'`) after
   * `abortAfterMs` (at once for 0; never when undefined); an aborted attempt ends
   * within `SHUTDOWN_GRACE_MS`. Resolves once every attempt has ended and every claim
   * on its way has settled (a claim that lands after this call gives its run back
   * first), except the attempts whose handlers called `stop()`. Called again while
   * stopping, it can only bring the abort forward.
   */
  stop(abortAfterMs: number | undefined): Promise<void> {
    this.#accepting = false;
    this.#upcoming.clear();
    if (abortAfterMs === 0) this.#abortAll();
    else if (abortAfterMs !== undefined && this.#abortTimer === undefined) {
      this.#abortTimer = this.#rt.clock.setTimer(() => this.#abortAll(), abortAfterMs);
    }
    this.#draining ??= this.#drain();
    return this.#draining;
  }

  /** A handler called `stop()` and waits for it: `stop()` must not wait for that handler. */
  callerOfStop(): void {
    this.#callersOfStop += 1;
    this.#settled();
  }

  async #drain(): Promise<void> {
    await this.#filling.running;
    if (!this.#idle()) await new Promise<void>((resolve) => (this.#drained = resolve));
    if (this.#abortTimer !== undefined) this.#rt.clock.clearTimer(this.#abortTimer);
    this.#abortTimer = undefined;
    this.#draining = undefined;
    this.#callersOfStop = 0;
  }

  #abortAll(): void {
    this.#abortTimer = undefined;
    for (const attempt of this.#attempts.values()) abortAttempt(attempt, 'shutdown');
  }

  #idle(): boolean {
    return this.#slots.pending + this.#slots.size <= this.#callersOfStop;
  }

  /** A task ended and gave its slot back: a waiting `stop()` may be done, and a run turned away may take the slot. */
  readonly #slotFreed = (): void => {
    this.#settled();
    // Runs are claimed as their notifications arrive; a freed slot searches only if one was turned away.
    if (this.#backlog) {
      this.#backlog = false;
      this.poke();
    }
  };

  /** Resolves a waiting `stop()` once nothing runs or claims here any more (but the handlers that wait for it). */
  #settled(): void {
    if (this.#drained !== undefined && this.#idle()) {
      this.#drained();
      this.#drained = undefined;
    }
  }

  /** Looks for ready runs now (coalesced with a look-up already under way). */
  poke(): void {
    if (this.#accepting) void this.#filling.run();
  }

  /** Renews the leases of running attempts; an attempt whose lease is gone is aborted. */
  async heartbeat(): Promise<void> {
    const { clock, io, store, leaseMs, instanceId } = this.#rt;
    await Promise.all(
      [...this.#attempts.values()].map(async (attempt) => {
        const now = clock.now();
        const renewed = await io('renewLease', () => store.renewLease(renewalOf(attempt, instanceId, now, now + leaseMs)));
        if (renewed?.ok === true) attempt.leaseUntil = now + leaseMs;
        else if (renewed?.status === 'cancelled') abortAttempt(attempt, 'replaced');
        else if (renewed !== undefined) {
          const { run, index } = attempt;
          this.#rt.log.leaseLost({ id: run.id, jobName: run.jobName, attempt: index?.attempt ?? run.attempt }, index?.index);
          abortAttempt(attempt, 'lease-lost');
        }
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
      const indexAttempts = this.#indexAttempts.get(runId);
      if (indexAttempts !== undefined) {
        for (const indexAttempt of indexAttempts) abortAttempt(indexAttempt, status === 'cancelled' ? 'replaced' : 'run-failed');
      }
    } else if (notification.type === 'run-ready' && this.#jobNames.has(notification.jobName)) {
      // The notification names the run: claim it straight away rather than searching for it.
      const now = this.#rt.clock.now();
      if (notification.readyAt > now) this.#expect(notification.runId, notification.jobName, notification.readyAt);
      else if (this.#freeSlots() <= 0) this.#backlog = true;
      else if (this.#accepting) this.#claim(notification.runId, notification.jobName, now);
    }
  }

  #freeSlots(): number {
    return this.#maxConcurrentRuns - this.#slots.pending - this.#slots.size;
  }

  /**
   * Claims a run (or the next index of a fan-out run) in a slot of its own, taken at
   * once, and starts it; `claimed` learns whether the claim landed (false when another
   * instance got it first, or the store failed).
   */
  #claim(runId: string, jobName: string, now = this.#rt.clock.now(), claimed?: (landed: boolean) => void): void {
    const job = this.#jobs.get(jobName);
    if (job === undefined || this.#attempts.has(runId)) return claimed?.(false);
    this.#slots.run(() => this.#claimAndRun(job, runId, now, claimed));
  }

  /** One slot's task: the claim, then the attempt it starts until its outcome is recorded. It reports its own faults, so it never rejects. */
  async #claimAndRun(job: NormalizedJob, runId: string, now: number, claimed: ((landed: boolean) => void) | undefined): Promise<void> {
    try {
      const { io, store, instanceId, leaseMs } = this.#rt;
      const input: ClaimRunInput =
        job.timeoutMs === undefined
          ? { runId, owner: instanceId, now, leaseUntil: now + leaseMs }
          : { runId, owner: instanceId, now, leaseUntil: now + leaseMs, deadlineAt: now + job.timeoutMs };
      const claim = await io('claimRun', () => store.claimRun(input));
      if (claim === undefined) return claimed?.(false);
      const attempt = createAttempt(claim, job);
      if (!this.#accepting) {
        // Stopped while the claim was on its way: give the run straight back rather than start a handler.
        await this.#write(attempt, RELEASED);
        return claimed?.(false);
      }
      // One claim leases one index of a fan-out run; a claim that leaves more to take notifies `run-ready` again.
      this.#attempts.set(attempt.key, attempt);
      if (attempt.index !== undefined) {
        const siblings = this.#indexAttempts.get(attempt.run.id) ?? new Set<Attempt>();
        siblings.add(attempt);
        this.#indexAttempts.set(attempt.run.id, siblings);
      }
      claimed?.(true);
      await this.#execute(attempt);
    } catch (error) {
      this.#reportCrash(error);
      claimed?.(false);
    }
  }

  async #fill(): Promise<void> {
    const { clock, io, store } = this.#rt;
    while (this.#accepting && this.#freeSlots() > 0 && this.#jobNames.size > 0) {
      const limit = Math.min(this.#freeSlots(), CLAIM_BATCH);
      const found = await io('findReadyRuns', () => store.findReadyRuns({ jobNames: this.#jobNames, now: clock.now(), limit }));
      if (found === undefined) return; // reported; the heartbeat looks again
      if (found.nextReadyAt !== undefined && this.#accepting) this.#upcoming.searchFrom(found.nextReadyAt);
      // All at once, as claims on notifications are: runs created ahead of a tick shared by many jobs are found
      // together at the tick. Each claim takes its slot before its first await.
      const claims: Promise<boolean>[] = [];
      for (const candidate of found.runs) {
        if (!this.#accepting || this.#freeSlots() <= 0) break;
        claims.push(new Promise<boolean>((claimed) => this.#claim(candidate.id, candidate.jobName, clock.now(), claimed)));
      }
      const claimed = (await Promise.all(claims)).filter(Boolean).length;
      if (found.runs.length < limit || claimed === 0) return;
      // A pile of ready runs on a store that answers at once: a turn of the event loop between batches.
      const pause = this.#rt.pacer.step(claimed);
      if (pause !== undefined) await pause;
    }
    if (this.#freeSlots() <= 0) this.#backlog = true;
  }

  readonly #reportCrash = (error: unknown): void => {
    reportError(this.#rt.events, error instanceof Error ? error : new Error(messageOf(error)));
  };

  async #execute(attempt: Attempt): Promise<void> {
    const { run, index, job } = attempt;
    const { clock, events } = this.#rt;
    try {
      if (run.deadlineAt !== undefined && clock.now() >= run.deadlineAt) {
        await this.#finish(attempt, { status: 'failed', error: timeoutError(job) }, 'timeout');
        return;
      }
      if (listening(events, 'run:started')) {
        safeEmit(events, 'run:started', index === undefined ? { run: toRunInfo(run) } : { run: toRunInfo(run), index: index.index });
      }
      let ending: HandlerEnding;
      try {
        ending = await runHandler(attempt, clock, intervalOf(run, job, this.#rt.schedules));
      } catch (error) {
        // Not the handler (its throws are endings of their own): the clock or the schedule threw. The
        // attempt failed all the same, and is recorded under the retry policy rather than left running.
        ending = { kind: 'threw', error };
      }
      await this.#conclude(attempt, ending);
    } finally {
      this.#attempts.delete(attempt.key);
      if (index !== undefined) {
        const siblings = this.#indexAttempts.get(run.id);
        siblings?.delete(attempt);
        if (siblings?.size === 0) this.#indexAttempts.delete(run.id);
      }
    }
  }

  /** Writes how the attempt ended: success, retry, final failure, or release. */
  #conclude(attempt: Attempt, ending: HandlerEnding): Promise<void> | undefined {
    const { job } = attempt;
    if (ending.kind === 'returned') return this.#finish(attempt, SUCCEEDED);
    if (ending.kind === 'threw') return this.#fail(attempt, toRunError(ending.error));
    switch (ending.reason) {
      case 'shutdown':
        return this.#finish(attempt, RELEASED);
      case 'timeout':
        return this.#finish(attempt, { status: 'failed', error: timeoutError(job) }, 'timeout');
      case 'attempt-timeout':
        return this.#fail(attempt, {
          name: 'AttemptTimeoutError',
          message: `attempt ${attempt.index?.attempt ?? attempt.run.attempt} exceeded attemptTimeout (${job.attemptTimeoutMs} ms)`,
        });
      case 'replaced':
      case 'lease-lost':
      case 'run-failed':
        return undefined; // the run is no longer ours: whoever took it (or ended it) records it
    }
  }

  /**
   * A failed attempt: asks for a retry after the backoff delay (its attempt's own:
   * an index's grows with the index's attempts), unless the retry would start past
   * the run's deadline. The store decides with the job's retry limit whether the
   * retry happens or the attempt was the last (see `JobSpec.retryLimit`).
   */
  #fail(attempt: Attempt, error: RunError): Promise<void> {
    const { run, index, job, key } = attempt;
    const readyAt = this.#rt.clock.now() + retryDelay(job.retry, index?.attempt ?? run.attempt, key);
    if (run.deadlineAt !== undefined && readyAt >= run.deadlineAt) {
      return this.#finish(attempt, { status: 'failed', error: timeoutError(job) }, 'timeout');
    }
    return this.#finish(attempt, { status: 'retry', error, readyAt });
  }

  /** Writes `outcome`, and announces what it did to the run; `reason`: why, should the run fail. */
  async #finish(attempt: Attempt, outcome: AttemptOutcome, reason: RunFailureReason = 'error'): Promise<void> {
    const { abort } = attempt;
    const { clock, events, leaseMs } = this.#rt;
    let result = await this.#write(attempt, outcome);
    // The store is unreachable (reported). Keep trying while this instance may still hold the lease (the
    // heartbeat renews it while the attempt is tracked): giving up early would let another instance recover
    // the run and run a handler that already finished. Once the lease is gone, that is what must happen.
    for (
      let delay = 100;
      result === undefined && !abort.aborted && clock.now() < attempt.leaseUntil;
      delay = Math.min(delay * 2, leaseMs / 3)
    ) {
      await clock.sleep(delay);
      result = await this.#write(attempt, outcome);
    }
    if (result === undefined || !result.ok) return; // fenced out or lease lost: whoever holds the run now records it
    // The store's answer says what happened to the run: a fan-out index's outcome may have ended it, or not.
    const { run: finished, index } = result;
    if (finished.status === 'succeeded') {
      if (listening(events, 'run:succeeded')) safeEmit(events, 'run:succeeded', { run: toRunInfo(finished) });
      return;
    }
    if (finished.status === 'failed') {
      const error = finished.error ?? ('error' in outcome ? outcome.error : LEASE_EXPIRED_ERROR);
      return safeEmit(events, 'run:failed', () => runFailedEvent(finished, error, reason));
    }
    const retried = index ?? finished;
    if (outcome.status === 'retry' && retried.status === 'pending') {
      // When the retry is ready is what the store recorded.
      this.#expect(finished.id, finished.jobName, retried.readyAt);
      safeEmit(events, 'run:retry', () => ({
        run: toRunInfo(finished),
        error: outcome.error,
        retryAt: new Date(retried.readyAt),
        ...(index === undefined ? {} : { index: index.index }),
      }));
    }
  }

  #write(attempt: Attempt, outcome: AttemptOutcome): Promise<FinishAttemptResult | undefined> {
    const { clock, io, store, instanceId } = this.#rt;
    const input = finishOf(attempt, instanceId, clock.now(), outcome);
    return io('finishAttempt', () => store.finishAttempt(input));
  }

  /** A run that becomes ready at `readyAt`: claim it then. */
  #expect(runId: string, jobName: string, readyAt: number): void {
    if (this.#accepting) this.#upcoming.expect(runId, jobName, readyAt);
  }
}
