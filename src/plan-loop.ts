/**
 * The planner's timer loop. One instance at a time holds the planner lock and plans
 * every job in the store: it keeps each job's next due time in a heap, sleeps on a
 * single timer for the earliest one (capped, re-checked on wake), asks the pure
 * planner what is due, and hands each decision to the store's atomic
 * `scheduleRun`. An `Allow` job's run is created `PLAN_AHEAD_MS` before its tick,
 * ready at the tick. Other instances stand by and take over when the lock expires.
 *
 * The planner also keeps the store's house: it recovers runs whose owner went
 * silent, fails runs nobody claimed within their `pendingTimeout` (on a timer of
 * its own, so they fail on time), and deletes runs past their `history.ttl`.
 */
import PQueue from 'p-queue';
import { DeadlineTimer } from './deadline-timer.js';
import { reportError, runFailedEvent, safeEmit } from './events.js';
import { MinHeap } from './heap.js';
import { OwnWrites, type WriteToken } from './own-writes.js';
import { nextBackfillTick, plan, readyAtOf, runsLeft, type MissedRange, type Plan } from './planner.js';
import { ValidationError, messageOf } from './errors.js';
import { backfillRunId, isJobName, reservedSegmentOf, scheduledRunId } from './run-id.js';
import type { Runtime } from './runtime.js';
import { LEASE_EXPIRED_ERROR, LIST_JOBS_PAGE, PENDING_TIMEOUT_ERROR, type JobRecord, type ListJobsQuery, type Lock, type LockLease, type NewRun, type RunRecord, type ScheduleRunResult, type StoreNotification } from './store.js';
import { SerialTask } from './serial-task.js';
import { toRunInfo } from './views.js';

const PLANNER_LOCK = 'planner';
/** A loaded job the planner leaves alone (see `#plannable`). */
const NOT_PLANNABLE = -1;
/** Runs recovered, expired or deleted per store call; more wait for the next heartbeat (or timer). */
const HOUSEKEEPING_BATCH = 1_000;
/** Jobs planned at once; each is one store call in flight. */
const PLAN_CONCURRENCY = 64;
/** Planning steps for one job in one wake; a guard against a store that keeps answering `conflict`. */
const MAX_STEPS_PER_WAKE = 100;
/**
 * How long before its tick an `Allow` job's run is created (ready at the tick), so
 * that the store's write is done before the tick and only the claim is left at it:
 * on Redis and Postgres that halves the time from tick to handler. Longer than
 * planning a tick that 100 jobs share takes on either; far shorter than the
 * shortest period (1 s), so a job has at most one run waiting for its tick.
 */
const PLAN_AHEAD_MS = 200;

interface PlannedJob {
  record: JobRecord;
  /** When to plan it next; undefined while it waits for a notification (suspended, CatchUp blocked, no more ticks). */
  dueAt: number | undefined;
}

export class PlanLoop {
  readonly #rt: Runtime;
  readonly #lock: Lock;
  readonly #jobs = new Map<string, PlannedJob>();
  /** Lazy-deletion heap: an entry is live only while its key equals its job's `dueAt`. */
  readonly #heap = new MinHeap<string>();
  /** The planners of due jobs, `PLAN_CONCURRENCY` at most. */
  readonly #pool = new PQueue({ concurrency: PLAN_CONCURRENCY });
  /** Jobs waiting for a run to finish (CatchUp or a backfill blocked by an active run). */
  readonly #blocked = new Set<string>();
  readonly #ownWrites = new OwnWrites();
  #lease: LockLease | undefined;
  /** Fires at the earliest due job. */
  readonly #timer: DeadlineTimer;
  /** Fires at the earliest known `pendingUntil`. */
  readonly #expiryTimer: DeadlineTimer;
  /** Plans every job that is due. */
  readonly #waking: SerialTask;
  #stopped = true;

  constructor(runtime: Runtime, lock: Lock) {
    this.#rt = runtime;
    this.#lock = lock;
    this.#timer = new DeadlineTimer(runtime.clock, () => void this.wake());
    this.#expiryTimer = new DeadlineTimer(runtime.clock, () => void this.#expirePending());
    this.#waking = new SerialTask(
      async () => {
        await this.#planDue();
        if (this.#lease !== undefined) this.#rt.health.planned();
      },
      { again: () => !this.#stopped, idle: () => this.#armTimer() },
    );
  }

  get isLeader(): boolean {
    return this.#lease !== undefined;
  }

  start(): void {
    this.#stopped = false;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer.clear();
    this.#expiryTimer.clear();
    await this.#waking.running;
    const lease = this.#lease;
    this.#resign();
    if (lease !== undefined) await this.#rt.io('lock.release', () => this.#lock.release(lease));
  }

  /** Keeps or takes the planner lease; the planner also recovers runs whose owner went silent. */
  async heartbeat(): Promise<void> {
    if (this.#stopped) return;
    const { clock, io, instanceId, leaseMs, store } = this.#rt;
    const now = clock.now();
    if (this.#lease !== undefined) await this.#renew(now);
    if (this.#lease === undefined) {
      const lease = await io('lock.acquire', () => this.#lock.acquire({ name: PLANNER_LOCK, owner: instanceId, now, leaseUntil: now + leaseMs }));
      if (lease === undefined || this.#stopped) return;
      this.#lease = lease;
      await this.#loadAll();
    } else if (store.watch === undefined) {
      // No notifications (optional): other instances' job changes are seen by reading every job again.
      await this.#loadAll(true);
    }
    const recovered = await io('recoverExpiredRuns', () => store.recoverExpiredRuns({ now, limit: HOUSEKEEPING_BATCH }));
    for (const run of recovered ?? []) this.#reportRecovered(run);
    await this.#expirePending();
    await io('deleteExpiredRuns', () => store.deleteExpiredRuns({ now, limit: HOUSEKEEPING_BATCH }));
    // Notifications are hints: re-plan the jobs that wait for a run to finish, in case it was lost.
    for (const name of this.#blocked) {
      const job = this.#jobs.get(name);
      if (job !== undefined) this.#setDue(name, job, now);
    }
    this.#blocked.clear();
    // Not awaited: under a sustained burst the wake keeps planning, and the heartbeat must go on to renew leases.
    void this.wake();
  }

  onNotification(notification: StoreNotification): void {
    if (this.#lease === undefined || this.#stopped) return;
    if (notification.type === 'run-ready') {
      // A run became claimable: if its job has a pending timeout, the store says when it fails unclaimed.
      if (notification.pendingUntil !== undefined) this.#expireAt(notification.pendingUntil);
    } else if (notification.type === 'job-changed') {
      if (!this.#ownWrites.isEcho(notification.jobName, this.#rt.clock.now())) void this.#reload(notification.jobName);
    }
    else if (notification.type === 'run-finished') {
      // A finished run may unblock the next CatchUp tick or backfill step; other jobs don't care.
      const job = this.#jobs.get(notification.jobName);
      if (job !== undefined && (waitsForRuns(job.record) || job.record.backfills.length > 0)) {
        this.#blocked.delete(notification.jobName);
        this.#setDue(notification.jobName, job, this.#rt.clock.now());
        void this.wake();
      }
    }
  }

  /**
   * A run whose owner went silent: back to pending for a retry, or failed (its lost
   * attempt was the last its retry limit allows, as the store decided).
   */
  #reportRecovered(run: RunRecord): void {
    const { events, log } = this.#rt;
    const error = run.error ?? LEASE_EXPIRED_ERROR;
    if (run.status === 'failed') return safeEmit(events, 'run:failed', () => runFailedEvent(run, error, 'error'));
    if (log.enabled) log.runRecovered(toRunInfo(run));
    safeEmit(events, 'run:retry', () => ({ run: toRunInfo(run), error, retryAt: new Date(run.readyAt) }));
  }

  /** Fails the runs nobody claimed within their pending timeout, and re-arms the timer for the next one. */
  async #expirePending(): Promise<void> {
    const { clock, io, store, events } = this.#rt;
    const expired = await io('expirePendingRuns', () => store.expirePendingRuns({ now: clock.now(), limit: HOUSEKEEPING_BATCH }));
    if (expired === undefined) return;
    for (const run of expired.runs) safeEmit(events, 'run:failed', () => runFailedEvent(run, run.error ?? PENDING_TIMEOUT_ERROR, 'pending-timeout'));
    if (expired.runs.length === HOUSEKEEPING_BATCH) this.#expireAt(clock.now());
    else if (expired.nextAt !== undefined) this.#expireAt(expired.nextAt);
  }

  #expireAt(at: number): void {
    if (this.#stopped || this.#lease === undefined) return;
    this.#expiryTimer.setEarliest(at);
  }

  /** Plans every job that is due; serialized, and re-run when asked again meanwhile. */
  wake(): Promise<void> {
    return this.#waking.run();
  }

  /**
   * Plans every job due now, up to `PLAN_CONCURRENCY` jobs at a time: a tick that
   * 100 jobs share costs a store round-trip or two of latency, not 100 in a row. A
   * pool of planners, not rounds: a planner that is done with a job takes the next
   * due one at once rather than waiting for the slowest job of its round, and jobs
   * stay on the heap until a planner takes them. A job is planned by one planner at a
   * time (it left the heap), so its steps stay in order.
   */
  async #planDue(): Promise<void> {
    const pool = this.#pool;
    for (let due = this.#nextDue(); due !== undefined; due = pool.pending < PLAN_CONCURRENCY ? this.#nextDue() : undefined) {
      const first = due;
      pool.add(() => this.#planFrom(first)).catch(this.#reportCrash);
    }
    await pool.onIdle();
  }

  /** One planner of the pool: plans `first`, then each job that is due next, until none is. */
  async #planFrom(first: [string, PlannedJob]): Promise<void> {
    for (let due: [string, PlannedJob] | undefined = first; due !== undefined; due = this.#nextDue()) await this.#planJob(...due);
  }

  readonly #reportCrash = (error: unknown): void => {
    reportError(this.#rt.events, error instanceof Error ? error : new Error(messageOf(error)));
  };

  /** Takes the earliest job that is due now off the heap. */
  #nextDue(): [string, PlannedJob] | undefined {
    if (!this.#leaseValid()) return undefined;
    const now = this.#rt.clock.now();
    for (let dueAt = this.#heap.peekKey(); dueAt !== undefined && dueAt <= now; dueAt = this.#heap.peekKey()) {
      const name = this.#heap.pop() as string;
      const job = this.#jobs.get(name);
      if (job === undefined || job.dueAt !== dueAt) continue; // a stale heap entry
      job.dueAt = undefined;
      return [name, job];
    }
    return undefined;
  }

  /** A heartbeat stuck behind a slow store cannot renew: planning stops the moment the lease may have passed on. */
  #leaseValid(): boolean {
    if (this.#lease === undefined || this.#stopped) return false;
    if (this.#lease.leaseUntil > this.#rt.clock.now()) return true;
    this.#resign();
    return false;
  }

  async #planJob(name: string, job: PlannedJob): Promise<void> {
    const { clock, io, store } = this.#rt;
    for (let step = 0; step < MAX_STEPS_PER_WAKE && this.#jobs.get(name) === job && this.#leaseValid(); step += 1) {
      // A backlog (CatchUp after an outage, a backfill) on a store that answers at once is a chain of
      // microtasks: it goes in slices, each ended by a turn of the event loop.
      const pause = this.#rt.pacer.step();
      if (pause !== undefined) {
        await pause;
        if (this.#jobs.get(name) !== job || !this.#leaseValid()) return;
      }
      const record = job.record;
      if (record.suspended) return;
      const now = clock.now();
      const decision = this.#decide(record, now);
      if (decision.kind === 'wait') {
        if (record.backfills.length > 0 && (await this.#planBackfill(name, job))) continue;
        if (decision.wakeAt !== undefined) this.#setDue(name, job, decision.wakeAt);
        return;
      }
      const tick = decision.kind === 'run' ? decision.tick : decision.cursor;
      const result = await io('scheduleRun', () =>
        store.scheduleRun({
          jobName: name,
          expectedCursor: record.cursor,
          cursor: tick,
          now,
          ...(decision.kind === 'run' ? { run: scheduledRun(record, tick, now) } : {}),
        }),
      );
      if (result === undefined) {
        this.#setDue(name, job, now + this.#rt.leaseMs / 3); // the store failed: try again later
        return;
      }
      if (!this.#apply(name, job, result, decision.missed)) return;
    }
    // Out of steps (a store that keeps answering `conflict`): try again later. Gone or no longer leader: nothing to do.
    if (this.#jobs.get(name) === job) this.#setDue(name, job, clock.now() + this.#rt.leaseMs / 3);
  }

  /** Records a `scheduleRun` result and emits its events; false when planning the job must pause. */
  #apply(name: string, job: PlannedJob, result: ScheduleRunResult, missed: MissedRange | undefined): boolean {
    const { events } = this.#rt;
    if (result.job === undefined) {
      this.#jobs.delete(name);
      return false;
    }
    job.record = result.job;
    if (result.outcome === 'conflict') return true; // re-plan from the store's cursor
    if (result.outcome === 'blocked') {
      // CatchUp, BufferOne: the tick waits; the run-finished notification (or the heartbeat) wakes the job.
      this.#blocked.add(name);
      return false;
    }
    if (missed !== undefined) {
      safeEmit(events, 'tick:missed', () => ({ jobName: name, from: new Date(missed.from), to: new Date(missed.to), reason: missed.reason }));
    }
    if (result.outcome === 'skipped') {
      safeEmit(events, 'tick:skipped', () => ({ jobName: name, scheduledAt: new Date(result.job.cursor), reason: 'forbid', active: result.active }));
    } else if (result.outcome === 'created') {
      for (const run of result.cancelled) safeEmit(events, 'run:cancelled', () => ({ run: toRunInfo(run), reason: 'replaced' }));
      safeEmit(events, 'run:created', () => ({ run: toRunInfo(result.run) }));
    }
    return true;
  }

  /** Creates the next run of the job's oldest backfill; true when the job should be planned again at once. */
  async #planBackfill(name: string, job: PlannedJob): Promise<boolean> {
    const { clock, io, store, schedules } = this.#rt;
    const record = job.record;
    const range = record.backfills[0];
    if (range === undefined) return false;
    const next = nextBackfillTick(schedules.of(record), range.next, range.to);
    const now = clock.now();
    const result = await io('scheduleBackfillRun', () =>
      store.scheduleBackfillRun({
        jobName: record.name,
        backfillId: range.id,
        expectedNext: range.next,
        ...(next === undefined ? {} : { next }),
        run: {
          id: backfillRunId(record.name, range.next),
          jobName: record.name,
          scheduledAt: range.next,
          trigger: 'backfill',
          readyAt: readyAtOf(now),
          ...(range.traceparent === undefined ? {} : { traceparent: range.traceparent }),
        },
        now,
      }),
    );
    if (result === undefined || result.job === undefined) return false;
    job.record = result.job;
    if (result.outcome === 'created') safeEmit(this.#rt.events, 'run:created', () => ({ run: toRunInfo(result.run) }));
    if (result.outcome === 'blocked') this.#blocked.add(name);
    return result.outcome !== 'blocked';
  }

  /** Call before this instance writes jobs; hand the token to `adopt` with what the write returned. */
  expectWrites(names: readonly string[]): WriteToken {
    return this.#ownWrites.expect(names, this.#rt.clock.now());
  }

  /** Plans the records this instance's own write returned (undefined: it failed) as a reload would, without reading them back. */
  adopt(token: WriteToken, records: readonly JobRecord[] | undefined): void {
    if (records === undefined) return this.#ownWrites.failed(token);
    if (this.#lease === undefined || this.#stopped) return;
    const now = this.#rt.clock.now();
    for (const record of records) if (this.#ownWrites.isCurrent(token, record.name)) this.#plan(record.name, record, now);
    void this.wake();
  }

  /** Renews the planner lease at `now`; resigns when it is lost (an unanswered renewal keeps it until it would have expired anyway). */
  async #renew(now: number): Promise<void> {
    const lease = this.#lease;
    if (lease === undefined) return;
    const { io, leaseMs } = this.#rt;
    const renewed = await io('lock.renew', () => this.#lock.renew({ ...lease, now, leaseUntil: now + leaseMs }));
    if (renewed === true) this.#lease = { ...lease, leaseUntil: now + leaseMs };
    else if (renewed === false || now >= lease.leaseUntil) this.#resign();
  }

  /**
   * Loads every job, `LIST_JOBS_PAGE` at a time, renewing the lease between pages every
   * `leaseMs / 3` as the heartbeat would: reading a million jobs takes minutes on a busy
   * machine, longer than the lease, and a load that outlived its lease would start over
   * at the next heartbeat, for ever. A lease lost meanwhile ends the load. `poll`: the
   * heartbeat's re-read of a store without notifications, which plans each job as a
   * `job-changed` reload would (a job being planned meanwhile stays in place).
   */
  async #loadAll(poll = false): Promise<void> {
    this.#ownWrites.loadingAll();
    const { clock, io, leaseMs, store } = this.#rt;
    const records: JobRecord[] = [];
    /** Each job's first due time, worked out as its page arrives (see below). */
    const dueAts: (number | undefined)[] = [];
    let renewedAt = clock.now();
    for (let after: string | undefined; ; ) {
      const query: ListJobsQuery = after === undefined ? { limit: LIST_JOBS_PAGE } : { after, limit: LIST_JOBS_PAGE };
      const page = await io('listJobs', () => store.listJobs(query));
      if (page === undefined || this.#lease === undefined || this.#stopped) return;
      records.push(...page);
      // The planning maths of a million jobs is minutes of CPU on a busy machine: done page by page, between
      // the lease renewals below, not in one go after the last page, where it outlived the lease (a 1M-job
      // load on Redis at load 18 lost its lease after each load and loaded every job again, four times).
      if (!poll) for (const record of page) dueAts.push(this.#plannable(record) ? this.#firstDue(record, clock.now()) : NOT_PLANNABLE);
      // A short page is the last; a long one, a store that ignores the limit (it listed every job).
      if (page.length !== LIST_JOBS_PAGE) break;
      after = page[page.length - 1]?.name;
      if (clock.now() - renewedAt >= leaseMs / 3) {
        renewedAt = clock.now();
        await this.#renew(renewedAt);
        if (this.#lease === undefined) return;
      }
    }
    const now = this.#rt.clock.now();
    if (poll) {
      const names = new Set(records.map((record) => record.name));
      for (const name of this.#jobs.keys()) if (!names.has(name)) this.#jobs.delete(name);
      for (const record of records) this.#plan(record.name, record, now);
      return;
    }
    this.#jobs.clear();
    this.#heap.clear();
    records.forEach((record, i) => {
      const dueAt = dueAts[i];
      if (dueAt === NOT_PLANNABLE) return;
      const job: PlannedJob = { record, dueAt: undefined };
      this.#jobs.set(record.name, job);
      if (dueAt !== undefined) this.#setDue(record.name, job, dueAt);
    });
  }

  async #reload(name: string): Promise<void> {
    this.#ownWrites.reading(name);
    const record = await this.#rt.io('getJob', () => this.#rt.store.getJob(name));
    if (this.#lease === undefined || this.#stopped) return;
    this.#plan(name, record, this.#rt.clock.now());
    await this.wake();
  }

  /** Plans a job from its current record (undefined: it is gone). */
  #plan(name: string, record: JobRecord | undefined, now: number): void {
    if (record === undefined || !this.#plannable(record)) {
      this.#jobs.delete(name);
      return;
    }
    const job = this.#jobs.get(name) ?? { record, dueAt: undefined };
    job.record = record;
    this.#jobs.set(name, job);
    const dueAt = this.#firstDue(record, now);
    if (dueAt !== undefined) this.#setDue(name, job, dueAt);
  }

  /**
   * False (and reported) for a job a store kept from before the name grammar that
   * keeps run IDs unambiguous: its runs could take another job's IDs, so it is not
   * planned until it is removed and registered under a valid name.
   */
  #plannable(record: JobRecord): boolean {
    if (isJobName(record.name)) return true;
    safeEmit(this.#rt.events, 'error', new ValidationError(`job ${JSON.stringify(record.name)} in the store`, [{
      path: 'name',
      message: `has a "${reservedSegmentOf(record.name) ?? '?'}" part, which makes its run IDs ambiguous, so it is not planned: remove it (scheduler.remove(name)) and register it under another name`,
      value: record.name,
    }]));
    return false;
  }

  /**
   * When a job just loaded must be planned: now if a tick (or a backfill) is due, at
   * its next tick otherwise, never while it is suspended or has no tick left (a change
   * notifies the planner). Taking over 100,000 jobs then plans only those that are due
   * instead of taking every job through a planning step.
   */
  #firstDue(record: JobRecord, now: number): number | undefined {
    if (record.suspended) return undefined;
    if (record.backfills.length > 0) return now;
    const decision = this.#decide(record, now);
    return decision.kind === 'wait' ? decision.wakeAt : now;
  }

  /** What the pure planner says of the job at `now`. */
  #decide(record: JobRecord, now: number): Plan {
    const schedule = this.#rt.schedules.of(record);
    const { concurrencyPolicy: policy, cursor, startingDeadlineMs } = record;
    return plan({ schedule, policy, cursor, now, startingDeadlineMs, aheadMs: aheadOf(record), runsLeft: runsLeft(record) });
  }

  #setDue(name: string, job: PlannedJob, at: number): void {
    if (job.dueAt !== undefined && job.dueAt <= at) return;
    job.dueAt = at;
    this.#heap.push(at, name);
    if (this.#waking.running === undefined) this.#armTimer();
  }

  #resign(): void {
    this.#lease = undefined;
    this.#jobs.clear();
    this.#heap.clear();
    this.#blocked.clear();
    this.#timer.clear();
    this.#expiryTimer.clear();
  }

  #armTimer(): void {
    if (this.#stopped || this.#lease === undefined) return;
    // Drop stale entries so the timer is armed for a real deadline.
    while (this.#heap.size > 0) {
      const name = this.#heap.peek() as string;
      if (this.#jobs.get(name)?.dueAt === this.#heap.peekKey()) break;
      this.#heap.pop();
    }
    const dueAt = this.#heap.peekKey();
    if (dueAt === undefined) this.#timer.clear();
    else this.#timer.set(dueAt);
  }
}

/** How long before its tick the job's next run is created: only `Allow` decides nothing on the runs active at the tick. */
function aheadOf(record: JobRecord): number {
  return record.concurrencyPolicy === 'Allow' ? PLAN_AHEAD_MS : 0;
}

/** Jobs whose due tick waits for the active run to finish: a finished run may let it run. */
function waitsForRuns(record: JobRecord): boolean {
  return record.concurrencyPolicy === 'CatchUp' || record.concurrencyPolicy === 'BufferOne';
}

/** The run of `tick`: nominal ID and `scheduledAt`, ready at the tick (later with a jitter; now if it has passed). */
function scheduledRun(record: JobRecord, tick: number, now: number): NewRun {
  const id = scheduledRunId(record.name, tick);
  return { id, jobName: record.name, scheduledAt: tick, trigger: 'schedule', readyAt: readyAtOf(now, { runId: id, at: tick, jitterMs: record.jitterMs }) };
}
