/**
 * The public `Scheduler`: validates input, keeps this process's registrations, and
 * wires the planner loop, the executor, the store, the clock and the events
 * together. It decides nothing about scheduling itself (see `planner.ts`,
 * `plan-loop.ts`, `executor.ts`); its one timer is the heartbeat that renews
 * leases and keeps the store in sync.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EventEmitter } from 'eventemitter3';
import { MemoryStore } from '../adapters/memory/memory-store.js';
import { systemClock, wholeMillisecondClock, type TimerHandle } from './clock.js';
import { JobNotFoundError, TickworkError, ValidationError } from './errors.js';
import { ERROR_SINK, safeEmit, type SchedulerEvents } from './events.js';
import { calledFromHandler } from './attempt.js';
import type { Draft } from './draft.js';
import { checkBackfillSize } from './backfill.js';
import { Executor } from './executor.js';
import { HealthMonitor, type Health } from './health.js';
import { Log } from './logging.js';
import {
  backfillOptionsSchema,
  countArgSchema,
  listJobsOptionsSchema,
  listRunsOptionsSchema,
  plannerLock,
  nameSchema,
  parseJobDefinition,
  schedulerOptionsSchema,
  stopOptionsSchema,
  storedNameSchema,
  triggerOptionsSchema,
} from './options.js';
import { PlanLoop } from './plan-loop.js';
import { Registrations } from './registrations.js';
import { SerialTask } from './serial-task.js';
import { firstBackfillTick, runsLeft } from './planner.js';
import { manualRunId } from './run-id.js';
import { createRuntime, type Runtime } from './runtime.js';
import { batchesOf, isActive } from './store-rules.js';
import { ACTIVE_STATUSES, LEASE_EXPIRED_ERROR, LIST_BATCH, type JobRecord, type JsonValue, type ListJobsQuery, type NewRun, type RunRecord, type Store } from './store.js';
import type {
  BackfillOptions,
  JobDefinition,
  JobInfo,
  JsonData,
  ListJobsOptions,
  ListRunsOptions,
  RunInfo,
  SchedulerOptions,
  StopOptions,
  TriggerOptions,
} from './types.js';
import { Telemetry } from './telemetry/telemetry.js';
import { parseInput } from './validation.js';
import { toJobInfo, toRunInfo } from './views.js';

type State = 'idle' | 'running' | 'stopping';


/**
 * After a heartbeat in which a store call failed, the next starts this long after
 * it started, so work resumes within about a second of the store coming back,
 * whatever `leaseMs` is.
 */
const STORE_RETRY_MS = 1_000;
/** `start()` resolves after this long even if the store has not answered yet; the heartbeat goes on trying. */
const START_WAIT_MS = 5_000;
/**
 * How often the store's identity is checked between heartbeats (when they are further
 * apart), so a store that lost its data is noticed within seconds whatever `leaseMs`
 * is: one small read per instance.
 */
const IDENTITY_CHECK_MS = 2_000;

/**
 * `Data`: the data type of the jobs, for the run records of events, `listRuns()` and
 * `trigger()` (a union when jobs differ). @default JsonValue
 */
export class Scheduler<Data = JsonValue> extends EventEmitter<SchedulerEvents<Data>> {
  readonly #rt: Runtime;
  readonly #registrations: Registrations;
  readonly #planLoop: PlanLoop;
  readonly #executor: Executor;
  readonly #telemetry: Telemetry | undefined;
  #state: State = 'idle';
  /** Whether this instance held the planner lease at the end of the last heartbeat (for the log). */
  #wasPlanner = false;
  #heartbeatTimer: TimerHandle | undefined;
  #identityTimer: TimerHandle | undefined;
  /** One heartbeat at a time; one asked for while another runs joins it (the next comes on the timer). */
  readonly #heartbeat = new SerialTask(() => this.#beat(), { again: () => false });
  #unwatch: (() => void) | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: SchedulerOptions = {}) {
    super();
    const parsed = parseInput(schedulerOptionsSchema, options, 'new Scheduler()');
    const store: Store = parsed.store ?? new MemoryStore();
    const clock = wholeMillisecondClock(parsed.clock ?? systemClock);
    const instanceId = parsed.instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    const leaseMs = parsed.leaseMs ?? 30_000;
    const log = new Log(parsed.logger, instanceId, this);
    // Telemetry first: a missing `@opentelemetry/api` fails the constructor before anything else is set up.
    this.#telemetry = parsed.telemetry === undefined || parsed.telemetry === false ? undefined : new Telemetry(parsed.telemetry, clock);
    this.#rt = createRuntime({ store, clock, instanceId, leaseMs, events: this, log, health: new HealthMonitor(clock, log, leaseMs) });
    this.#planLoop = new PlanLoop(this.#rt, plannerLock(store, parsed.lock));
    this.#registrations = new Registrations(this.#rt, {
      cancelled: (cancelled) => this.#reportSuspended(cancelled),
      synced: () => this.#executor.poke(),
      writing: (names) => this.#planLoop.expectWrites(names),
      written: (token, records) => this.#planLoop.adopt(token, records),
    });
    const { jobs, names } = this.#registrations;
    this.#executor = new Executor(this.#rt, jobs, names, parsed.maxConcurrentRuns ?? Infinity);
    this.#observe(log);
  }

  /** This process's identity in leases and run ownership. */
  get instanceId(): string {
    return this.#rt.instanceId;
  }

  /** True from `start()` until `stop()` is called. */
  get isRunning(): boolean {
    return this.#state === 'running';
  }

  /** True while this instance holds the planner lock. */
  get isPlanner(): boolean {
    return this.#planLoop.isLeader;
  }

  /** IDs of the runs whose handlers this instance is executing. */
  get runningRuns(): readonly string[] {
    return this.#executor.running;
  }

  /**
   * This instance's health, for readiness and liveness probes: `ok`, `degraded` (the
   * store's last call failed, or as planner it has not planned for `leaseMs`) or
   * `down` (not running, or the store failing for `leaseMs`). Never waits on the store.
   */
  async health(): Promise<Health> {
    return this.#rt.health.report(this.isRunning, this.isPlanner);
  }

  /**
   * Validates a job and registers it in this process (it executes the job's runs).
   * Throws a `ValidationError` at once on bad input. The job is written to the store
   * when the scheduler starts, or right away if it is running.
   */
  register<JobData = Data>(definition: JobDefinition<JobData> & JsonData<NoInfer<JobData>>): void {
    const parsed = parseJobDefinition(definition as unknown as JobDefinition);
    const job = this.#telemetry === undefined ? parsed : { ...parsed, handler: this.#telemetry.wrap(parsed.handler, parsed.jitterMs) };
    if (this.#registrations.jobs.has(job.name)) {
      throw new ValidationError(`register(${JSON.stringify(job.name)})`, [
        { path: 'name', message: 'is already registered in this scheduler (unregister it first)', value: job.name },
      ]);
    }
    this.#registrations.add(job);
    if (this.#state === 'running') void this.#registrations.sync();
  }

  /** Stops handling the job in this process; its state in the store is kept. Returns false if it was not registered. */
  unregister(name: string): boolean {
    parseInput(storedNameSchema, name, 'unregister(name)');
    return this.#registrations.delete(name);
  }

  /**
   * Unregisters the job and deletes its state and history from the store, after any
   * write of it this scheduler has on its way (a `register()` on a running scheduler
   * writes at once). Resolves false if the store did not have it.
   */
  async remove(name: string): Promise<boolean> {
    parseInput(storedNameSchema, name, 'remove(name)');
    return this.#registrations.remove(name);
  }

  /**
   * Suspends the job everywhere: no run starts for a tick after this call. Active runs
   * go on; a run already created ahead of a later tick (an `Allow` job's run is created
   * up to `PLAN_AHEAD_MS` before it) is cancelled, with `run:cancelled` and reason
   * `'suspended'`.
   */
  async pause(name: string): Promise<void> {
    await this.#setSuspended('pause', name, true);
  }

  /** Resumes the job; ticks that passed meanwhile are planned as after downtime. */
  async resume(name: string): Promise<void> {
    await this.#setSuspended('resume', name, false);
  }

  /** Creates a manual run now. With an `idempotencyKey`, a repeated trigger returns the existing run. */
  async trigger(name: string, options: TriggerOptions<Data> & JsonData<NoInfer<Data>> = {}): Promise<RunInfo<Data>> {
    parseInput(nameSchema, name, 'trigger(name)');
    const parsed = parseInput(triggerOptionsSchema, options, `trigger(${JSON.stringify(name)})`);
    const now = this.#rt.clock.now();
    const key = parsed.idempotencyKey ?? `${now}-${randomUUID().slice(0, 8)}`;
    // Field by field, not conditional spreads: every trigger() builds one.
    const manual: Draft<NewRun> = { id: manualRunId(name, key), jobName: name, scheduledAt: now, trigger: 'manual' };
    if (parsed.data !== undefined) manual.data = parsed.data;
    const traceparent = this.#telemetry?.captureTraceparent();
    if (traceparent !== undefined) manual.traceparent = traceparent;
    const result = await this.#rt.call('createRun', () => this.#rt.store.createRun({ run: manual, now }));
    if (result.outcome === 'missing-job') throw new JobNotFoundError(name);
    const run = toRunInfo(result.run);
    if (result.outcome === 'created') safeEmit(this, 'run:created', { run });
    return run as RunInfo<Data>;
  }

  /**
   * Records a backfill: a run for every tick in `[from, to]`, oldest first, one at a
   * time. Resolves once recorded, not when its runs finish. A range of more than
   * `MAX_BACKFILL_RUNS` (100,000) ticks is a `ValidationError` (path `to`), and
   * nothing is written.
   */
  async backfill(name: string, options: BackfillOptions): Promise<void> {
    parseInput(nameSchema, name, 'backfill(name)');
    const range = parseInput(backfillOptionsSchema, options, `backfill(${JSON.stringify(name)})`);
    const record = await this.#requireJob(name);
    const schedule = this.#rt.schedules.of(record);
    const first = firstBackfillTick(schedule, range.from, range.to);
    if (first === undefined) return;
    await checkBackfillSize(name, options, schedule, first, range.to, this.#rt.pacer);
    const id = `${this.#rt.clock.now()}-${randomUUID().slice(0, 8)}`;
    const traceparent = this.#telemetry?.captureTraceparent();
    const stored = { id, next: first, to: range.to, ...(traceparent === undefined ? {} : { traceparent }) };
    const job = await this.#rt.call('addBackfill', () => this.#rt.store.addBackfill({ jobName: name, range: stored }));
    if (job === undefined) throw new JobNotFoundError(name);
  }

  async getJob(name: string): Promise<JobInfo | undefined> {
    parseInput(storedNameSchema, name, 'getJob(name)');
    const record = await this.#rt.call('getJob', () => this.#rt.store.getJob(name));
    return record === undefined ? undefined : this.#jobInfo(record);
  }

  /**
   * The jobs in the store, by name: every one, or with `limit` a page of them after
   * `after` (keyset pagination: each page reads only its own jobs from the store).
   */
  async listJobs(options?: ListJobsOptions): Promise<JobInfo[]> {
    const parsed = options === undefined ? undefined : parseInput(listJobsOptionsSchema, options, 'listJobs()');
    const query: ListJobsQuery | undefined =
      parsed === undefined ? undefined : { ...(parsed.after === undefined ? {} : { after: parsed.after }), ...(parsed.limit === undefined ? {} : { limit: parsed.limit }) };
    const { store, call } = this.#rt;
    const records = await call('listJobs', () => store.listJobs(query));
    if (store.listRunsOfJobs === undefined) return Promise.all(records.map((record) => this.#jobInfo(record)));
    // 1 + N / LIST_BATCH store calls instead of 1 + N: the active runs of LIST_BATCH jobs at a time.
    const active = new Map<string, RunRecord[]>();
    for (const jobNames of batchesOf(records.map((record) => record.name), LIST_BATCH)) {
      const runs = await call('listRunsOfJobs', () => store.listRunsOfJobs!({ jobNames, statuses: ACTIVE_STATUSES }));
      for (const run of runs) {
        if (!isActive(run.status)) continue; // whatever the store made of `statuses`
        const runs = active.get(run.jobName);
        if (runs === undefined) active.set(run.jobName, [run]);
        else runs.push(run);
      }
    }
    return records.map((record) => this.#toJobInfo(record, active.get(record.name) ?? []));
  }

  /** The job's runs, newest first. */
  async listRuns(name: string, options: ListRunsOptions = {}): Promise<RunInfo<Data>[]> {
    parseInput(storedNameSchema, name, 'listRuns(name)');
    const parsed = parseInput(listRunsOptionsSchema, options, `listRuns(${JSON.stringify(name)})`);
    const statuses = parsed.status === undefined ? undefined : Array.isArray(parsed.status) ? parsed.status : [parsed.status];
    const runs = await this.#rt.call('listRuns', () =>
      this.#rt.store.listRuns({ jobName: name, limit: parsed.limit, ...(statuses === undefined ? {} : { statuses }) }),
    );
    return runs.map(toRunInfo) as RunInfo<Data>[];
  }

  /**
   * The next `count` ticks of the job after now (a run created ahead of its tick is
   * still to come), within its `startAt`/`endAt` window and its `maxRuns`.
   */
  async nextRuns(name: string, count: number): Promise<Date[]> {
    parseInput(storedNameSchema, name, 'nextRuns(name)');
    parseInput(countArgSchema, count, 'nextRuns(count)');
    const record = await this.#requireJob(name);
    const schedule = this.#rt.schedules.of(record);
    const ticks: Date[] = [];
    let after = this.#rt.clock.now();
    const limit = Math.min(count, this.#ticksLeft(record, after));
    for (let i = 0; i < limit; i += 1) {
      const tick = schedule.next(after);
      if (tick === undefined) break;
      ticks.push(new Date(tick));
      after = tick;
    }
    return ticks;
  }

  /** Starts planning and executing. Store trouble is reported on `error` and retried; it does not reject. */
  async start(): Promise<void> {
    if (this.#state === 'running') return;
    if (this.#state === 'stopping') throw new TickworkError('NOT_RUNNING', 'start() called while the scheduler is stopping');
    this.#state = 'running';
    // A store without notifications is polled: the heartbeat looks for work and re-reads the jobs (plan-loop.ts).
    this.#unwatch = this.#rt.store.watch?.((notification) => {
      this.#planLoop.onNotification(notification);
      this.#executor.onNotification(notification);
    });
    this.#planLoop.start();
    this.#executor.start();
    this.#armIdentityCheck();
    // A store that does not answer (a client of the app's own, with long retries) cannot hold start() up.
    const { clock } = this.#rt;
    let timer: TimerHandle | undefined;
    await Promise.race([this.#heartbeat.run(), new Promise<void>((resolve) => (timer = clock.setTimer(resolve, START_WAIT_MS)))]);
    if (timer !== undefined) clock.clearTimer(timer);
  }

  /**
   * Stops planning and claiming, then waits for running handlers. With `abort`, their
   * signals abort (`'shutdown'`) at once, with `timeout` once it has passed; an aborted
   * handler's run is released to other instances, after `SHUTDOWN_GRACE_MS` at the
   * latest. Called from a handler, it does not wait for that handler (which waits for
   * it). Rejects with a `ValidationError` on bad options.
   */
  stop(options: StopOptions = {}): Promise<void> {
    let parsed: { abort?: boolean | undefined; timeout?: number | undefined };
    try {
      parsed = parseInput(stopOptionsSchema, options, 'stop()');
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.#state === 'idle') return Promise.resolve();
    // A handler that waits for stop() cannot finish before it: stop() does not wait for it.
    if (calledFromHandler()) this.#executor.callerOfStop();
    // Claiming stops now, before anything below waits: no handler starts after stop() was called.
    // While stopping, a later call can only bring the abort forward.
    const drained = this.#executor.stop(parsed.abort === true ? 0 : parsed.timeout);
    if (this.#state === 'stopping') return this.#stopping ?? Promise.resolve();
    this.#state = 'stopping';
    this.#stopping = (async () => {
      await this.#heartbeat.running;
      await this.#planLoop.stop();
      // The heartbeat keeps renewing the leases of handlers we wait for.
      await drained;
      this.#state = 'idle'; // from here on, a finishing heartbeat does not re-arm itself
      this.#wasPlanner = false; // the lease was given up, not lost
      await this.#heartbeat.running;
      if (this.#heartbeatTimer !== undefined) this.#rt.clock.clearTimer(this.#heartbeatTimer);
      this.#heartbeatTimer = undefined;
      if (this.#identityTimer !== undefined) this.#rt.clock.clearTimer(this.#identityTimer);
      this.#identityTimer = undefined;
      this.#unwatch?.();
      this.#unwatch = undefined;
      this.#stopping = undefined;
    })();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** One heartbeat: sync registrations, keep or take the planner lease, renew run leases, look for work. */
  async #beat(): Promise<void> {
    const failures = this.#rt.health.failures;
    const began = this.#rt.clock.now();
    try {
      if (this.#state === 'running') {
        await this.#registrations.checkIdentity();
        await this.#registrations.sync();
        await this.#planLoop.heartbeat();
        this.#notePlanner();
      }
      await this.#executor.heartbeat();
    } finally {
      if (this.#state !== 'idle') {
        // A store call of this beat failed (even if the store answers again by now, what failed is still undone):
        // the next beat starts STORE_RETRY_MS after this one started, at once if this one took that long.
        const { leaseMs, health, clock } = this.#rt;
        const delay = health.failures === failures ? leaseMs / 3 : Math.max(0, Math.min(leaseMs / 3, STORE_RETRY_MS) - (clock.now() - began));
        this.#heartbeatTimer = clock.setTimer(() => void this.#heartbeat.run(), delay);
      }
    }
  }

  /** Between heartbeats further apart than `IDENTITY_CHECK_MS`, checks the store's identity on a timer of its own. */
  #armIdentityCheck(): void {
    const { store, clock, leaseMs } = this.#rt;
    if (store.identity === undefined || leaseMs / 3 <= IDENTITY_CHECK_MS || this.#state !== 'running') return;
    this.#identityTimer = clock.setTimer(() => void this.#pollIdentity(), IDENTITY_CHECK_MS);
  }

  /**
   * A check between heartbeats; a change brings the next heartbeat forward. Not while
   * a heartbeat is under way (it checks by itself), nor while the store fails (the
   * heartbeat retries every second then).
   */
  async #pollIdentity(): Promise<void> {
    this.#identityTimer = undefined;
    if (this.#state !== 'running') return;
    if (this.#heartbeat.running === undefined && this.#rt.health.storeOk && (await this.#registrations.checkIdentity()) && this.#state === 'running' && this.#heartbeat.running === undefined) {
      if (this.#heartbeatTimer !== undefined) this.#rt.clock.clearTimer(this.#heartbeatTimer);
      void this.#heartbeat.run();
    }
    this.#armIdentityCheck();
  }

  /** Logs this instance becoming the planner or losing the lease (a loss between heartbeats is seen at the next one). */
  #notePlanner(): void {
    const planner = this.#planLoop.isLeader;
    if (planner === this.#wasPlanner) return;
    this.#wasPlanner = planner;
    if (planner) this.#rt.log.plannerElected();
    else this.#rt.log.plannerLost();
  }

  /**
   * Feeds the log and the metrics from the scheduler's own events, and the log from
   * every other `error` it reports (a listener that threw, an internal fault).
   */
  #observe(log: Log): void {
    Object.defineProperty(this, ERROR_SINK, { value: (error: Error) => log.error(error) });
    this.#telemetry?.observe(this);
    if (!log.enabled) return;
    // The log reads only the records' plain fields, never `data`: any `Data` will do.
    const events = this as EventEmitter<SchedulerEvents>;
    events.on('tick:missed', (event) => log.ticksMissed(event));
    events.on('tick:skipped', (event) => log.tickSkipped(event));
    events.on('run:retry', ({ run, error, index }) => {
      if (error.name === LEASE_EXPIRED_ERROR.name) log.runRecovered(run, index);
    });
    events.on('run:failed', ({ run, error, reason }) => {
      if (reason === 'pending-timeout') log.pendingTimeout(run);
      else log.runFailed(run, error, reason);
    });
  }

  async #setSuspended(method: string, name: string, suspended: boolean): Promise<void> {
    parseInput(storedNameSchema, name, `${method}(name)`);
    const result = await this.#rt.call('setSuspended', () => this.#rt.store.setSuspended({ name, suspended, now: this.#rt.clock.now() }));
    if (result === undefined) throw new JobNotFoundError(name);
    this.#reportSuspended(result.cancelled);
  }

  /** Runs created ahead of a tick still to come, cancelled by suspending their job. */
  #reportSuspended(cancelled: readonly RunRecord[]): void {
    for (const run of cancelled) safeEmit(this, 'run:cancelled', { run: toRunInfo(run), reason: 'suspended' });
  }

  async #requireJob(name: string): Promise<JobRecord> {
    const record = await this.#rt.call('getJob', () => this.#rt.store.getJob(name));
    if (record === undefined) throw new JobNotFoundError(name);
    return record;
  }

  async #jobInfo(record: JobRecord): Promise<JobInfo> {
    const active = await this.#rt.call('listRuns', () => this.#rt.store.listRuns({ jobName: record.name, statuses: ACTIVE_STATUSES }));
    return this.#toJobInfo(record, active);
  }

  #toJobInfo(record: JobRecord, active: readonly RunRecord[]): JobInfo {
    // The tick after the cursor, unless the cursor is a tick still to come (its run was created ahead of it).
    const now = this.#rt.clock.now();
    const next = this.#ticksLeft(record, now) > 0 ? this.#rt.schedules.of(record).next(Math.min(record.cursor, now)) : undefined;
    return toJobInfo(record, active, next);
  }

  /** How many ticks after now may still run under `maxRuns`: a run created ahead of its tick is counted yet still to come. */
  #ticksLeft(record: JobRecord, now: number): number {
    const left = runsLeft(record);
    return left === undefined ? Infinity : left + (record.cursor > now ? 1 : 0);
  }
}
