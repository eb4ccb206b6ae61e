/**
 * This process's registrations and how they reach the store. Job definitions are
 * written one at a time, in the order they were asked for (a `remove()` after a
 * `register()` deletes what the registration wrote and never races it: a pooled
 * store may run two calls in any order). The store's identity is checked too: a
 * store that lost its data gets every registered job again, with `STORE_RESET`.
 */
import { batchesOf } from './batches.js';
import type { Draft } from './draft.js';
import { TickworkError } from './errors.js';
import { reportError } from './events.js';
import type { NormalizedJob } from './job-definition.js';
import { initialCursor } from './planner.js';
import type { Runtime } from './runtime.js';
import type { WriteToken } from './own-writes.js';
import { UPSERT_BATCH, type JobRecord, type JobSpec, type RunRecord, type ScheduleSpec, type UpsertJobInput } from './store.js';

/** Above this many pending registrations, a sync reads every stored job first to skip the unchanged ones. */
const LIST_BEFORE_SYNC = 64;

/** A queued sync; `jobs` is set when it is closed (another write was queued after it). */
interface OpenSync {
  done: Promise<void>;
  jobs: NormalizedJob[] | undefined;
}

export interface RegistrationEvents {
  /** Runs created ahead of a tick, cancelled because a written definition suspends their job. */
  cancelled(runs: readonly RunRecord[]): void;
  /** A sync wrote what was pending: there may be runs to claim. */
  synced(): void;
  /** Upserts of these jobs are on their way: the planner plans the records they return instead of reading them back. */
  writing(names: readonly string[]): WriteToken;
  /** What the upserts returned (undefined: they failed). */
  written(token: WriteToken, records: readonly JobRecord[] | undefined): void;
  /** Between batches of a long sync (it holds the heartbeat up): the planner renews its leases if they are due. */
  pace(): Promise<void>;
}

export class Registrations {
  /** The jobs registered here, by name (the executor runs only these). */
  readonly jobs = new Map<string, NormalizedJob>();
  readonly names = new Set<string>();
  readonly #rt: Runtime;
  readonly #on: RegistrationEvents;
  /** Registrations not yet written to the store (before start, or after a failed write). */
  readonly #unsynced = new Set<string>();
  /** Syncs and removals, one at a time in the order asked. */
  #writes: Promise<unknown> = Promise.resolve();
  /** The last write queued, when it is a sync: later registrations join it until another write is queued. */
  #openSync: OpenSync | undefined;
  #initialized = false;
  /** The store's identity when this instance last wrote its jobs (see `Store.identity`). */
  #identity: string | undefined;

  constructor(runtime: Runtime, on: RegistrationEvents) {
    this.#rt = runtime;
    this.#on = on;
  }

  /** Registers a validated job (its name is not registered yet); the next sync writes it. */
  add(job: NormalizedJob): void {
    this.jobs.set(job.name, job);
    this.names.add(job.name);
    this.#unsynced.add(job.name);
  }

  /** Forgets the job here; false if it was not registered. */
  delete(name: string): boolean {
    this.#unsynced.delete(name);
    this.names.delete(name);
    return this.jobs.delete(name);
  }

  /** Unregisters the job and deletes it from the store, after the writes queued before. */
  remove(name: string): Promise<boolean> {
    this.delete(name);
    return this.#write(() => this.#rt.call('removeJob', () => this.#rt.store.removeJob(name)));
  }

  /** Queues `work` behind this scheduler's other job writes; a sync still open is closed on what is pending now. */
  #write<T>(work: () => Promise<T>): Promise<T> {
    const open = this.#openSync;
    if (open !== undefined) {
      // What is registered from here on is written by a sync queued after `work`, never before it.
      open.jobs = this.#pendingJobs();
      this.#openSync = undefined;
    }
    const result = this.#writes.then(work);
    this.#writes = result.catch(() => {});
    return result;
  }

  /**
   * Writes pending registrations, in turn with removals (see `#writes`). `stored`:
   * every stored job, just read by the planner's load in this heartbeat, which a sync
   * of many jobs compares with instead of reading them all again.
   */
  sync(stored?: readonly JobRecord[]): Promise<void> {
    if (this.#openSync !== undefined) return this.#openSync.done;
    const sync: OpenSync = { done: Promise.resolve(), jobs: undefined };
    sync.done = this.#write(() => {
      if (this.#openSync === sync) this.#openSync = undefined;
      return this.#syncNow(sync.jobs ?? this.#pendingJobs(), stored);
    });
    this.#openSync = sync;
    return sync.done;
  }

  #pendingJobs(): NormalizedJob[] {
    const jobs: NormalizedJob[] = [];
    for (const name of this.#unsynced) {
      const job = this.jobs.get(name);
      if (job !== undefined) jobs.push(job);
    }
    return jobs;
  }

  /** Initializes the store, once (a failure is reported, and the next call tries again). */
  async init(): Promise<void> {
    const { io, store } = this.#rt;
    if (!this.#initialized) this.#initialized = (await io('init', () => store.init().then(() => true))) === true;
  }

  /** Initializes the store once and writes pending registrations; what fails stays pending for the next heartbeat. */
  async #syncNow(pending: readonly NormalizedJob[], read: readonly JobRecord[] | undefined): Promise<void> {
    const { io, store, clock } = this.#rt;
    await this.init();
    // Nothing pending (every heartbeat of an instance whose jobs are written): no store call, and no look for runs
    // (the executor's own heartbeat looks anyway), so an idle heartbeat polls for ready runs once, not twice.
    if (!this.#initialized || pending.length === 0) return;
    // Many registrations at once (a start or a restart): read the store once and write only what differs,
    // so restarting an unchanged fleet of 100,000 jobs is one read, not 100,000 commits.
    const stored = pending.length <= LIST_BEFORE_SYNC ? undefined : (read ?? (await io('listJobs', () => store.listJobs())));
    const current = new Map(stored?.map((record) => [record.name, record]));
    const changed: { job: NormalizedJob; spec: JobSpec }[] = [];
    for (const job of pending) {
      const record = current.get(job.name);
      const spec = toSpec(job);
      if (record !== undefined && sameSpec(record, spec) && (job.suspend === undefined || job.suspend === record.suspended)) {
        if (this.jobs.get(job.name) === job) this.#unsynced.delete(job.name);
      } else changed.push({ job, spec });
    }
    // What differs goes in batches: with a networked store, one round-trip per UPSERT_BATCH jobs.
    for (const all of batchesOf(changed, UPSERT_BATCH)) {
      // Unregistered or registered again meanwhile: not written (a later sync writes the new definition).
      const batch = all.filter(({ job }) => this.jobs.get(job.name) === job);
      if (batch.length === 0) continue;
      const now = clock.now();
      const inputs = batch.map(({ job, spec }): UpsertJobInput => {
        const input: Draft<UpsertJobInput> = { spec, now, initialCursor: initialCursor(job.schedule, now) };
        if (job.suspend !== undefined) input.suspended = job.suspend;
        return input;
      });
      // The planner plans the records the write returns rather than reading each job back on its notification.
      const token = this.#on.writing(batch.map(({ job }) => job.name));
      const results = await io('upsertJobs', () => store.upsertJobs(inputs));
      this.#on.written(token, results?.map((result) => result.job));
      if (results === undefined) return; // reported; the next heartbeat retries
      for (const { job } of batch) if (this.jobs.get(job.name) === job) this.#unsynced.delete(job.name);
      for (const { cancelled } of results) this.#on.cancelled(cancelled ?? []);
      await this.#on.pace();
    }
    this.#on.synced();
  }

  /**
   * A store that lost its data (restarted empty, its schema dropped) lost this
   * instance's jobs with it: when its identity changes, every registered job is
   * written again (from now on: the ticks of the outage are gone with the data), and
   * `STORE_RESET` is reported.
   */
  async checkIdentity(): Promise<boolean> {
    const { store, io } = this.#rt;
    if (store.identity === undefined) return false;
    const identity = await io('identity', () => (store.identity as () => Promise<string | undefined>).call(store));
    if (identity === undefined) return false;
    const known = this.#identity;
    this.#identity = identity;
    if (known === undefined || known === identity) return false;
    this.#initialized = false;
    for (const name of this.jobs.keys()) this.#unsynced.add(name);
    const jobs = this.jobs.size;
    reportError(this.#rt.events, new TickworkError('STORE_RESET', `the store lost its data (its identity changed from ${known} to ${identity}): writing this instance's ${jobs} job${jobs === 1 ? '' : 's'} again`));
    return true;
  }
}

function toSpec(job: NormalizedJob): JobSpec {
  const spec: Draft<JobSpec> = {
    name: job.name,
    schedule: job.schedule,
    timezone: job.timezone,
    concurrencyPolicy: job.concurrencyPolicy,
    retryLimit: job.retry.limit,
    history: job.history,
  };
  // Assigned, not spread: a start with 100,000 jobs builds 100,000 of these.
  if (job.startingDeadlineMs !== undefined) spec.startingDeadlineMs = job.startingDeadlineMs;
  if (job.fanOut !== undefined) spec.fanOut = job.fanOut;
  if (job.pendingTimeoutMs !== undefined) spec.pendingTimeoutMs = job.pendingTimeoutMs;
  if (job.startAt !== undefined) spec.startAt = job.startAt;
  if (job.endAt !== undefined) spec.endAt = job.endAt;
  if (job.jitterMs !== undefined) spec.jitterMs = job.jitterMs;
  if (job.maxRuns !== undefined) spec.maxRuns = job.maxRuns;
  return spec;
}

/** True when two specs define the same job (what `upsertJobs` would write is already stored). */
function sameSpec(a: JobSpec, b: JobSpec): boolean {
  return (
    a.name === b.name &&
    a.timezone === b.timezone &&
    a.concurrencyPolicy === b.concurrencyPolicy &&
    a.startingDeadlineMs === b.startingDeadlineMs &&
    a.pendingTimeoutMs === b.pendingTimeoutMs &&
    a.history.succeeded === b.history.succeeded &&
    a.history.failed === b.history.failed &&
    a.history.ttlMs === b.history.ttlMs &&
    a.fanOut?.completions === b.fanOut?.completions &&
    a.fanOut?.parallelism === b.fanOut?.parallelism &&
    a.retryLimit === b.retryLimit &&
    a.startAt === b.startAt &&
    a.endAt === b.endAt &&
    a.jitterMs === b.jitterMs &&
    a.maxRuns === b.maxRuns &&
    sameSchedule(a.schedule, b.schedule)
  );
}

function sameSchedule(a: ScheduleSpec, b: ScheduleSpec): boolean {
  switch (a.kind) {
    case 'cron':
      return b.kind === 'cron' && a.expression === b.expression;
    case 'every':
      return b.kind === 'every' && a.everyMs === b.everyMs && a.anchor === b.anchor;
    case 'at':
      return b.kind === 'at' && a.at === b.at;
  }
}
