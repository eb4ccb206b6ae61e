/**
 * The public `Scheduler`: validates input, keeps this process's registrations, and
 * wires the planner loop, the executor, the store, the clock and the events
 * together. It decides nothing about scheduling itself (see `planner.ts`,
 * `plan-loop.ts`, `executor.ts`); its one timer is the heartbeat (`heartbeat.ts`)
 * that renews leases and keeps the store in sync. The read API's views of jobs are
 * in `job-reads.ts`.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EventEmitter } from 'eventemitter3';
import { MemoryStore } from '../adapters/memory/memory-store.js';
import { systemClock, wholeMillisecondClock } from './clock.js';
import { JobNotFoundError, TickworkError, ValidationError } from './errors.js';
import { ERROR_SINK, safeEmit, type SchedulerEvents } from './events.js';
import { calledFromHandler } from './attempt.js';
import type { Draft } from './draft.js';
import { checkBackfillSize } from './backfill.js';
import { Executor } from './executor.js';
import { HealthMonitor, type Health } from './health.js';
import { Heartbeat } from './heartbeat.js';
import { jobInfoOf, listJobInfos, nextTicks } from './job-reads.js';
import { Log } from './logging.js';
import {
  backfillOptionsSchema,
  countArgSchema,
  listJobsOptionsSchema,
  listRunsOptionsSchema,
  plannerLock,
  nameSchema,
  schedulerOptionsSchema,
  stopOptionsSchema,
  storedNameSchema,
  triggerOptionsSchema,
} from './options.js';
import { parseJobDefinition, type NormalizedJob } from './job-definition.js';
import { PlanLoop } from './plan-loop.js';
import { Registrations } from './registrations.js';
import { firstBackfillTick, readyAtOf } from './planner.js';
import { manualRunId } from './run-id.js';
import { createRuntime, type Runtime } from './runtime.js';
import { type JobRecord, type JsonValue, type ListJobsQuery, type NewRun, type RunRecord, type Store } from './store.js';
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
import { loadTelemetry } from './telemetry/loader.js';
import type { TelemetryHooks } from './telemetry/telemetry.js';
import { parseInput } from './validation.js';
import { toRunInfo } from './views.js';

type State = 'idle' | 'running' | 'stopping';

/**
 * `Data`: the data type of the jobs, for the run records of events, `listRuns()` and
 * `trigger()` (a union when jobs differ). @default JsonValue
 */
export class Scheduler<Data = JsonValue> extends EventEmitter<SchedulerEvents<Data>> {
  readonly #rt: Runtime;
  readonly #registrations: Registrations;
  readonly #planLoop: PlanLoop;
  readonly #executor: Executor;
  readonly #telemetry: TelemetryHooks | undefined;
  #state: State = 'idle';
  /** Whether this instance held the planner lease at the end of the last heartbeat (for the log). */
  #wasPlanner = false;
  readonly #heartbeat: Heartbeat;
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
    this.#telemetry = parsed.telemetry === undefined || parsed.telemetry === false ? undefined : loadTelemetry(parsed.telemetry, clock);
    this.#rt = createRuntime({ store, clock, instanceId, leaseMs, events: this, log, health: new HealthMonitor(clock, log, leaseMs) });
    this.#planLoop = new PlanLoop(this.#rt, plannerLock(store, parsed.lock));
    this.#registrations = new Registrations(this.#rt, {
      cancelled: (cancelled) => this.#reportSuspended(cancelled),
      synced: () => this.#executor.poke(),
      writing: (names) => this.#planLoop.expectWrites(names),
      written: (token, records) => this.#planLoop.adopt(token, records),
      pace: () => this.#planLoop.keepLeases(),
    });
    const { jobs, names } = this.#registrations;
    // The runs of the partitions it plans first: each instance claims a share of a tick's runs before the others'.
    this.#executor = new Executor(this.#rt, jobs, names, parsed.maxConcurrentRuns ?? Infinity, (name) => this.#planLoop.plans(name));
    this.#heartbeat = new Heartbeat(this.#rt, {
      beat: () => this.#beat(),
      checkIdentity: () => this.#registrations.checkIdentity(),
      running: () => this.#state === 'running',
      continues: () => this.#state !== 'idle',
    });
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

  /** True while this instance plans at least one partition of the store (with one partition: holds the planner lock). */
  get isPlanner(): boolean {
    return this.#planLoop.isLeader;
  }

  /** The partitions of the store this instance plans (`Store.partitions`; with one partition, `[0]` or `[]`). */
  get plannedPartitions(): readonly number[] {
    return this.#planLoop.partitions;
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
    return this.#rt.health.report(this.isRunning, this.plannedPartitions);
  }

  /**
   * Validates a job and registers it in this process (it executes the job's runs).
   * Throws a `ValidationError` at once on bad input. The job is written to the store
   * when the scheduler starts, or right away if it is running.
   */
  register<JobData = Data>(definition: JobDefinition<JobData> & JsonData<NoInfer<JobData>>): void {
    const job: Draft<NormalizedJob> = parseJobDefinition(definition as unknown as JobDefinition);
    // Assigned, not spread: a spread gives each job an object shape of its own (see job-record.ts).
    if (this.#telemetry !== undefined) job.handler = this.#telemetry.wrap(job.handler, job.jitterMs);
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
   * `PLAN_AHEAD_MS` before it, or earlier when many jobs share the tick) is cancelled,
   * with `run:cancelled` and reason `'suspended'`.
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
    const manual: Draft<NewRun> = { id: manualRunId(name, key), jobName: name, scheduledAt: now, trigger: 'manual', readyAt: readyAtOf(now) };
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
    return record === undefined ? undefined : jobInfoOf(this.#rt, record);
  }

  /**
   * The jobs in the store, by name: every one, or with `limit` a page of them after
   * `after` (keyset pagination: each page reads only its own jobs from the store).
   */
  async listJobs(options?: ListJobsOptions): Promise<JobInfo[]> {
    const parsed = options === undefined ? undefined : parseInput(listJobsOptionsSchema, options, 'listJobs()');
    const query: ListJobsQuery | undefined =
      parsed === undefined ? undefined : { ...(parsed.after === undefined ? {} : { after: parsed.after }), ...(parsed.limit === undefined ? {} : { limit: parsed.limit }) };
    return listJobInfos(this.#rt, query);
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
    return nextTicks(this.#rt, await this.#requireJob(name), count);
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
    await this.#heartbeat.start();
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
      this.#heartbeat.stop();
      this.#unwatch?.();
      this.#unwatch = undefined;
      this.#stopping = undefined;
    })();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /**
   * One heartbeat: keep or take planner leases (loading the jobs of partitions gained),
   * sync registrations (compared with the jobs that load read, if any, rather than
   * reading them again), keep house, renew run leases, look for work. Leases come
   * first: an instance starting with many jobs to write takes its share at once.
   */
  async #beat(): Promise<void> {
    if (this.#state !== 'running') return this.#executor.heartbeat();
    await this.#registrations.checkIdentity();
    await this.#registrations.init(); // before any other store call, the lock's included
    const stored = await this.#planLoop.refreshLeases();
    await this.#registrations.sync(stored);
    // Sent together, housekeeping first (one round trip where a connection runs its commands in order): the look for
    // work after the renewals sees the runs the sweep recovered.
    await Promise.all([this.#planLoop.heartbeat(), this.#executor.heartbeat()]);
    this.#notePlanner();
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
}
