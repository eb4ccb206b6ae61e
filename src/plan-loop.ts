/**
 * The planner's timer loop. The store's jobs fall into partitions (`partition.ts`);
 * an instance plans the jobs of the partitions whose leases it holds
 * (`partition-leases.ts`, one instance at a time per partition, with one partition:
 * one planner for every job): it keeps each job's next due time in a heap, sleeps on a
 * single timer for the earliest one (capped, re-checked on wake), asks the pure
 * planner what is due, and hands each decision to the store's atomic
 * `scheduleRun`. An `Allow` job's run is created ahead of its tick, ready at the
 * tick: `PLAN_AHEAD_MS` before it, or as long before as planning a tick has been
 * taking (`#learnLead`). Other instances take a partition over when its lease expires.
 *
 * The jobs and their due times live in `due-jobs.ts`, their paged load in
 * `job-load.ts`, what is decided of one job in `plan-step.ts`. The holder of partition
 * 0 also keeps the store's house, for every partition (`housekeeping.ts`: recovery, pending
 * timeouts, history TTL): the lease of partition 0 elects its owner and hands it over
 * as any partition's.
 */
import { DeadlineTimer } from './deadline-timer.js';
import { DueJobs, type PlannedJob } from './due-jobs.js';
import { reportError, safeEmit } from './events.js';
import { Housekeeping } from './housekeeping.js';
import { partitionOf } from './partition.js';
import { PartitionLeases, PartitionWrites } from './partition-leases.js';
import { OwnWrites, type WriteToken } from './own-writes.js';
import type { MissedRange } from './planner.js';
import { backfillStep, decide, firstDue, PLAN_AHEAD_MS, plannable, scheduledRun, waitsForRuns } from './plan-step.js';
import { loadJobs, NOT_PLANNABLE } from './job-load.js';
import { messageOf } from './errors.js';
import type { Runtime } from './runtime.js';
import type { JobRecord, Lock, ScheduleRunResult, StoreNotification } from './store.js';
import { SerialTask } from './serial-task.js';
import { TaskPool } from './task-pool.js';
import { toRunInfo } from './views.js';

/** The partition whose holder keeps the store's house. */
const HOUSEKEEPING_PARTITION = 0;
/** Jobs planned at once; each is one store call in flight. */
const PLAN_CONCURRENCY = 64;
/** Planning steps for one job in one wake; a guard against a store that keeps answering `conflict`. */
const MAX_STEPS_PER_WAKE = 100;
/** The longest lead an `Allow` job's run is created with (see `#learnLead`). */
const MAX_AHEAD_MS = 30_000;

export class PlanLoop {
  readonly #rt: Runtime;
  readonly #leases: PartitionLeases;
  readonly #jobs: DueJobs;
  readonly #housekeeping: Housekeeping;
  /** The planners of due jobs, `PLAN_CONCURRENCY` at most. */
  readonly #pool = new TaskPool(PLAN_CONCURRENCY);
  /** Jobs waiting for a run to finish (CatchUp or a backfill blocked by an active run). */
  readonly #blocked = new Set<string>();
  readonly #ownWrites = new OwnWrites();
  /** Refreshes the leases before the next heartbeat (`PartitionLeases.refreshAt`). */
  readonly #refreshTimer: DeadlineTimer;
  /** Renews the leases and moves toward this instance's share; a refresh asked for meanwhile joins the one under way. */
  readonly #refreshing: SerialTask<readonly JobRecord[] | undefined>;
  /** Planning writes in flight, per partition (`#handOver` waits for them). */
  readonly #writes = new PartitionWrites();
  /** Plans every job that is due. */
  readonly #waking: SerialTask;
  #stopped = true;
  /** How long before its tick an `Allow` job's run is created (see `#learnLead`). */
  #aheadMs = PLAN_AHEAD_MS;
  /** Planning writes sent, ever: how many a wake made (jobs it took and put back count for nothing). */
  #sent = 0;

  constructor(runtime: Runtime, lock: Lock) {
    this.#rt = runtime;
    this.#leases = new PartitionLeases(runtime, lock, runtime.store.partitions ?? 1);
    this.#jobs = new DueJobs(runtime.clock, () => void this.wake());
    this.#housekeeping = new Housekeeping(runtime, () => !this.#stopped && this.#leases.any);
    this.#refreshTimer = new DeadlineTimer(runtime.clock, () => {
      this.#refreshing.run().then(() => this.wake()).catch(this.#reportCrash);
    });
    this.#waking = new SerialTask(
      async () => {
        await this.#planDue();
        if (this.#leases.any) this.#rt.health.planned();
      },
      { again: () => !this.#stopped, idle: () => this.#armTimer() },
    );
    this.#refreshing = new SerialTask(() => this.#refreshLeases(), {
      again: () => false,
      idle: () => {
        const at = this.#leases.refreshAt;
        if (!this.#stopped && at !== undefined) this.#refreshTimer.set(at);
      },
    });
  }

  /** True while this instance plans at least one partition. */
  get isLeader(): boolean {
    return this.#leases.any;
  }

  /** Whether this instance plans the job `name` (holds its partition's lease). */
  plans(name: string): boolean {
    return this.#leases.holds(this.#partitionOf(name));
  }

  /** The partitions this instance plans. */
  get partitions(): readonly number[] {
    return this.#leases.owned;
  }

  start(): void {
    this.#stopped = false;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#jobs.clearTimer();
    this.#housekeeping.clearTimer();
    this.#refreshTimer.clear();
    await this.#waking.running;
    await this.#refreshing.running;
    this.#drop(this.#leases.owned);
    await this.#leases.releaseAll();
  }

  /**
   * A heartbeat's first step: keeps or takes partition leases, and loads the jobs of
   * the partitions gained. A load reads every stored job (pages are by name): those
   * records are handed back, so that the registrations' sync that follows compares
   * with them rather than reading every job again (a restart with unchanged jobs
   * reads each job once).
   */
  refreshLeases(): Promise<readonly JobRecord[] | undefined> {
    return this.#refreshing.run();
  }

  /**
   * Refreshes the leases if a heartbeat would have by now: called by work that holds
   * the heartbeat up (a long sync), so the leases stay held and a surplus goes to the
   * instances that joined meanwhile.
   */
  async keepLeases(): Promise<void> {
    if (!this.#stopped && this.#leases.renewalDue) await this.#refreshing.run();
  }

  /** The rest of a heartbeat (after `refreshLeases`): the holder of partition 0 also recovers runs whose owner went silent. */
  async heartbeat(): Promise<void> {
    if (this.#stopped || !this.#leases.any) return;
    const now = this.#rt.clock.now();
    // No notifications (optional): other instances' job changes are seen by reading the jobs again.
    if (this.#rt.store.watch === undefined) await this.#loadAll(new Set(this.#leases.owned), true);
    if (this.#leases.holds(HOUSEKEEPING_PARTITION)) await this.#housekeeping.keepHouse(now);
    // Notifications are hints: re-plan the jobs that wait for a run to finish, in case it was lost.
    for (const name of this.#blocked) {
      const job = this.#jobs.get(name);
      if (job !== undefined) this.#setDue(name, job, now);
    }
    this.#blocked.clear();
    // Not awaited: under a sustained burst the wake keeps planning, and the heartbeat must go on to renew leases.
    void this.wake();
  }

  /**
   * Renews the leases and moves toward this instance's share: drops the jobs of partitions lost, loads those gained.
   * Returns every stored job when it loaded them all.
   */
  async #refreshLeases(): Promise<readonly JobRecord[] | undefined> {
    this.#refreshTimer.clear();
    const { gained, lost } = await this.#leases.refresh(this.#handOver);
    this.#drop(lost);
    return gained.length > 0 && !this.#stopped ? this.#loadAll(new Set(gained)) : undefined;
  }

  onNotification(notification: StoreNotification): void {
    if (!this.#leases.any || this.#stopped) return;
    if (notification.type === 'run-ready') {
      // A run became claimable: if its job has a pending timeout, the store says when it fails unclaimed.
      if (notification.pendingUntil !== undefined) this.#housekeeping.expireAt(notification.pendingUntil);
    } else if (notification.type === 'job-changed') {
      const name = notification.jobName;
      if (this.#leases.holds(this.#partitionOf(name)) && !this.#ownWrites.isEcho(name, this.#rt.clock.now())) void this.#reload(name);
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
    const { clock } = this.#rt;
    const [started, sent] = [clock.now(), this.#sent];
    for (let due = this.#nextDue(); due !== undefined; due = pool.pending < PLAN_CONCURRENCY ? this.#nextDue() : undefined) {
      const first = due;
      pool.run(() => this.#planFrom(first));
    }
    await pool.onIdle();
    if (this.#sent - sent >= PLAN_CONCURRENCY) this.#learnLead(clock.now() - started);
  }

  /**
   * A tick that thousands of jobs share takes seconds to plan (100,000 on Redis with
   * three instances: 15 s on a loaded 2-core machine), and runs created after their
   * tick start late. So the planner plans a tick ahead of it by half as long again
   * as its last wake with a full pool took (`PLAN_AHEAD_MS` at least, `MAX_AHEAD_MS`
   * at most, a tenth less than the last lead at least, and never before the job's
   * previous tick: see `plan`); when that lead grows, the jobs already waiting for
   * their tick are moved up to it.
   */
  #learnLead(tookMs: number): void {
    const previous = this.#aheadMs;
    // It shrinks slowly: a wake planned ahead of its tick is quicker than one that shares the machine with the tick's claims.
    this.#aheadMs = Math.min(MAX_AHEAD_MS, Math.max(PLAN_AHEAD_MS + Math.ceil(tookMs * 1.5), Math.floor(previous * 0.9)));
    if (this.#aheadMs <= previous * 1.25) return;
    const now = this.#rt.clock.now();
    for (const [name, job] of this.#jobs.entries()) {
      if (job.dueAt === undefined || job.record.concurrencyPolicy !== 'Allow') continue;
      const at = firstDue(this.#rt, job.record, now, this.#aheadMs);
      if (at !== undefined) this.#setDue(name, job, at);
    }
  }

  /** One planner of the pool: plans `first`, then each job that is due next, until none is. It reports its own faults, so it never rejects. */
  async #planFrom(first: [string, PlannedJob]): Promise<void> {
    try {
      for (let due: [string, PlannedJob] | undefined = first; due !== undefined; due = this.#nextDue()) await this.#planJob(...due);
    } catch (error) {
      this.#reportCrash(error);
    }
  }

  readonly #reportCrash = (error: unknown): void => {
    reportError(this.#rt.events, error instanceof Error ? error : new Error(messageOf(error)));
  };

  /** Takes the earliest job that is due now (skipping the jobs of partitions whose lease may have passed on). */
  #nextDue(): [string, PlannedJob] | undefined {
    if (this.#stopped) return undefined;
    for (let due = this.#jobs.takeDue(); due !== undefined; due = this.#jobs.takeDue()) if (this.#leaseValid(due[1])) return due;
    return undefined;
  }

  /**
   * A heartbeat stuck behind a slow store cannot renew: planning a job stops the moment
   * its partition's lease may have passed on (its jobs are dropped; the next refresh
   * takes the partition again if it can).
   */
  #leaseValid(job: PlannedJob): boolean {
    if (this.#stopped) return false;
    if (this.#leases.holds(job.partition)) return true;
    this.#drop([job.partition]);
    return false;
  }

  async #planJob(name: string, job: PlannedJob): Promise<void> {
    const { clock, store } = this.#rt;
    for (let step = 0; step < MAX_STEPS_PER_WAKE && this.#jobs.get(name) === job && this.#leaseValid(job); step += 1) {
      // A backlog (CatchUp after an outage, a backfill) on a store that answers at once is a chain of
      // microtasks: it goes in slices, each ended by a turn of the event loop.
      const pause = this.#rt.pacer.step();
      if (pause !== undefined) {
        await pause;
        if (this.#jobs.get(name) !== job || !this.#leaseValid(job)) return;
      }
      const record = job.record;
      if (record.suspended) return;
      const now = clock.now();
      const decision = decide(this.#rt, record, now, this.#aheadMs);
      if (decision.kind === 'wait') {
        if (record.backfills.length > 0 && (await this.#planBackfill(name, job))) continue;
        if (decision.wakeAt !== undefined) this.#setDue(name, job, decision.wakeAt);
        return;
      }
      const tick = decision.kind === 'run' ? decision.tick : decision.cursor;
      const result = await this.#writing(job, 'scheduleRun', () =>
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
    const { clock, store } = this.#rt;
    const input = backfillStep(this.#rt, job.record, clock.now());
    if (input === undefined) return false;
    const result = await this.#writing(job, 'scheduleBackfillRun', () => store.scheduleBackfillRun(input));
    if (result === undefined || result.job === undefined) return false;
    job.record = result.job;
    if (result.outcome === 'created') safeEmit(this.#rt.events, 'run:created', () => ({ run: toRunInfo(result.run) }));
    if (result.outcome === 'blocked') this.#blocked.add(name);
    return result.outcome !== 'blocked';
  }

  /** A planning write of `job`'s, counted while in flight so that a partition is given back only once its writes are done. */
  #writing<T>(job: PlannedJob, operation: string, call: () => Promise<T>): Promise<T | undefined> {
    this.#sent += 1;
    return this.#writes.track(job.partition, this.#rt.io(operation, call));
  }

  /**
   * Before giving partitions back: stops planning their jobs and waits for their writes
   * in flight, so the next holder never plans beside this one.
   */
  readonly #handOver = async (partitions: readonly number[]): Promise<void> => {
    this.#drop(partitions);
    await this.#writes.drained(partitions);
  };

  /** Call before this instance writes jobs; hand the token to `adopt` with what the write returned. */
  expectWrites(names: readonly string[]): WriteToken {
    return this.#ownWrites.expect(names, this.#rt.clock.now());
  }

  /** Plans the records this instance's own write returned (undefined: it failed) as a reload would, without reading them back. */
  adopt(token: WriteToken, records: readonly JobRecord[] | undefined): void {
    if (records === undefined) return this.#ownWrites.failed(token);
    if (!this.#leases.any || this.#stopped) return;
    const now = this.#rt.clock.now();
    for (const record of records) {
      if (this.#ownWrites.isCurrent(token, record.name) && this.#leases.holds(this.#partitionOf(record.name))) this.#plan(record.name, record, now);
    }
    void this.wake();
  }

  /**
   * Loads the jobs of `partitions` (`job-load.ts`), renewing the leases between pages; a
   * partition lost meanwhile is left out. `poll`: the heartbeat's re-read of a store without
   * notifications, which plans each job as a `job-changed` reload would (a job being
   * planned meanwhile stays in place). Returns every stored job when it read them all
   * (not when polling): a heartbeat's sync compares the registrations with them.
   */
  async #loadAll(partitions: Set<number>, poll = false): Promise<JobRecord[] | undefined> {
    this.#ownWrites.loadingAll();
    const load = await loadJobs(this.#rt, partitions, this.#leases.count, poll, () => this.#stopped, this.#renewDue);
    if (load === undefined) return undefined;
    const { loaded, read } = load;
    const now = this.#rt.clock.now();
    if (poll) {
      const names = new Set(loaded.map(({ record }) => record.name));
      this.#jobs.deleteWhere((job, name) => partitions.has(job.partition) && !names.has(name));
      for (const { record, partition } of loaded) if (this.#leases.holds(partition)) this.#plan(record.name, record, now);
      return;
    }
    for (const { record, partition, dueAt } of loaded) {
      if (!this.#leases.holds(partition) || dueAt === NOT_PLANNABLE) continue;
      const job: PlannedJob = { record, partition, dueAt: undefined };
      this.#jobs.set(record.name, job);
      if (dueAt !== undefined) this.#setDue(record.name, job, dueAt);
    }
    return read;
  }

  /** Between the pages of a load: renews the leases if a heartbeat would have by now. */
  readonly #renewDue = async (): Promise<void> => {
    if (this.#leases.renewalDue) this.#drop(await this.#leases.renew());
  };

  async #reload(name: string): Promise<void> {
    this.#ownWrites.reading(name);
    const record = await this.#rt.io('getJob', () => this.#rt.store.getJob(name));
    if (!this.#leases.holds(this.#partitionOf(name)) || this.#stopped) return;
    this.#plan(name, record, this.#rt.clock.now());
    await this.wake();
  }

  /** Plans a job from its current record (undefined: it is gone). */
  #plan(name: string, record: JobRecord | undefined, now: number): void {
    if (record === undefined || !plannable(this.#rt, record)) {
      this.#jobs.delete(name);
      return;
    }
    const job = this.#jobs.get(name) ?? { record, partition: this.#partitionOf(name), dueAt: undefined };
    job.record = record;
    this.#jobs.set(name, job);
    const dueAt = firstDue(this.#rt, record, now, this.#aheadMs);
    if (dueAt !== undefined) this.#setDue(name, job, dueAt);
  }

  #setDue(name: string, job: PlannedJob, at: number): void {
    if (this.#jobs.setDue(name, job, at) && this.#waking.running === undefined) this.#armTimer();
  }

  #partitionOf(name: string): number {
    return partitionOf(name, this.#leases.count);
  }

  /** Forgets the jobs of partitions no longer held (their heap entries go stale). */
  #drop(partitions: readonly number[]): void {
    if (partitions.length === 0) return;
    const dropped = new Set(partitions);
    for (const name of this.#jobs.deleteWhere((job) => dropped.has(job.partition))) this.#blocked.delete(name);
    if (this.#leases.any) return;
    this.#jobs.clearTimer();
    this.#housekeeping.clearTimer();
  }

  #armTimer(): void {
    if (!this.#stopped && this.#leases.any) this.#jobs.armTimer();
  }
}
