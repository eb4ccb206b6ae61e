/**
 * Where the memory store keeps its runs: runs and fan-out index records in maps, with
 * the lookup sets kept in step (claimable, running, each job's runs and finished
 * runs). Every write of a run goes through `write`, after its index records: the
 * `pendingUntil` rule, the lookup sets and `run-ready` live there. Records are
 * replaced, never mutated once stored. The run queue (memory-run-queue.ts) extends
 * it with the contract's steps, which decide what to write; the job side
 * (memory-store.ts) creates runs here and deletes a removed job's.
 */
import type { IndexRecord, JobRecord, NewRun, RunRecord, StoreNotification } from '../../src/store.js';
import { compareOldestFirst, isClaimable, isFinished, pendingUntilFor } from '../../src/store-rules.js';
import type { Draft } from '../../src/adapter-kit.js';
import { copyRun, fanOutState, KEEP } from './memory-records.js';

/** An empty list of anything (no IDs, no index records, no runs), shared rather than made each time. */
export const NONE: readonly never[] = Object.freeze([]);

export class MemoryRuns {
  /** The store's jobs, for their pending timeout. */
  readonly #jobs: ReadonlyMap<string, JobRecord>;
  readonly #notify: (notification: StoreNotification) => void;
  readonly #runs = new Map<string, RunRecord>();
  readonly #runsByJob = new Map<string, Set<string>>();
  /** Finished runs by job: what history pruning reads, without walking the job's active runs. */
  readonly #finishedByJob = new Map<string, Set<string>>();
  /** Index records by run ID, then index. */
  readonly #indices = new Map<string, Map<number, IndexRecord>>();
  /** Runs a claim could take once ready (`isClaimable`). */
  readonly #claimable = new Set<string>();
  /** Runs `running`: a plain run's lease, or a fan-out run's running indices, may expire. */
  readonly #running = new Set<string>();

  constructor(jobs: ReadonlyMap<string, JobRecord>, notify: (notification: StoreNotification) => void) {
    this.#jobs = jobs;
    this.#notify = notify;
  }

  get(id: string): RunRecord | undefined {
    return this.#runs.get(id);
  }

  all(): RunRecord[] {
    return [...this.#runs.values()];
  }

  ofJob(jobName: string): RunRecord[] {
    return this.#lookUp(this.#runsByJob.get(jobName));
  }

  /** The job's runs that are not finished (its active runs), oldest first. */
  activeOf(jobName: string): RunRecord[] {
    const runs: RunRecord[] = [];
    const finished = this.#finishedByJob.get(jobName);
    for (const id of this.#runsByJob.get(jobName) ?? NONE) {
      if (finished?.has(id) === true) continue;
      const run = this.#runs.get(id);
      if (run !== undefined) runs.push(run);
    }
    return runs.length > 1 ? runs.sort(compareOldestFirst) : runs;
  }

  finishedOf(jobName: string): RunRecord[] {
    return this.#lookUp(this.#finishedByJob.get(jobName));
  }

  claimable(): RunRecord[] {
    return this.#lookUp(this.#claimable);
  }

  running(): RunRecord[] {
    return this.#lookUp(this.#running);
  }

  isClaimable(runId: string): boolean {
    return this.#claimable.has(runId);
  }

  index(runId: string, index: number): IndexRecord | undefined {
    return this.#indices.get(runId)?.get(index);
  }

  /** A run's index records, by index. */
  indicesOf(runId: string): readonly IndexRecord[] {
    const records = this.#indices.get(runId);
    return records === undefined ? NONE : [...records.values()].sort((a, b) => a.index - b.index);
  }

  putIndex(index: IndexRecord): void {
    let records = this.#indices.get(index.runId);
    if (records === undefined) this.#indices.set(index.runId, (records = new Map()));
    records.set(index.index, index);
  }

  /**
   * Creates a run as the contract says every store does: pending, attempt 1, fence 0,
   * ready at the `readyAt` the core gave, with the job's fan-out shape and retry limit
   * and counts at 0 for a fan-out job. Its ID must be free.
   */
  insert(input: NewRun, now: number, job: JobRecord | undefined): RunRecord {
    const run: Draft<RunRecord> = {
      id: input.id,
      jobName: input.jobName,
      scheduledAt: input.scheduledAt,
      trigger: input.trigger,
      status: 'pending',
      attempt: 1,
      createdAt: now,
      readyAt: input.readyAt,
      fence: 0,
    };
    if (input.data !== undefined) run.data = input.data;
    if (input.traceparent !== undefined) run.traceparent = input.traceparent;
    if (job?.fanOut !== undefined) run.fanOut = fanOutState(job.fanOut, job.retryLimit, 0, 0, 0);
    let ids = this.#runsByJob.get(run.jobName);
    if (ids === undefined) this.#runsByJob.set(run.jobName, (ids = new Set()));
    ids.add(run.id);
    return this.write(run, now);
  }

  /**
   * Every write of a run goes through here, after its index records: it applies the
   * pendingUntil rule, keeps the lookup sets, and announces a run left claimable.
   * `draft` is a new record (a copy), which this stores: nobody changes it after.
   * Its `pendingUntil` is set here.
   */
  write(draft: Draft<RunRecord>, now: number): RunRecord {
    const claimable = isClaimable(draft, draft.fanOut === undefined ? NONE : this.indicesOf(draft.id));
    const pendingUntil = claimable ? pendingUntilFor(draft.readyAt, now, this.#jobs.get(draft.jobName)?.pendingTimeoutMs) : undefined;
    let run = draft;
    if (pendingUntil !== undefined) run.pendingUntil = pendingUntil;
    else if (draft.pendingUntil !== undefined) run = copyRun(draft, KEEP);
    this.#runs.set(run.id, run);
    if (claimable) this.#claimable.add(run.id);
    else this.#claimable.delete(run.id);
    if (run.status === 'running') this.#running.add(run.id);
    else this.#running.delete(run.id);
    if (isFinished(run.status)) {
      let finished = this.#finishedByJob.get(run.jobName);
      if (finished === undefined) this.#finishedByJob.set(run.jobName, (finished = new Set()));
      finished.add(run.id);
    }
    if (claimable) {
      this.#notify(
        pendingUntil === undefined
          ? { type: 'run-ready', jobName: run.jobName, runId: run.id, readyAt: run.readyAt }
          : { type: 'run-ready', jobName: run.jobName, runId: run.id, readyAt: run.readyAt, pendingUntil },
      );
    }
    return run;
  }

  /** Deletes a run with its index records. */
  delete(id: string): void {
    const run = this.#runs.get(id);
    if (run === undefined) return;
    this.#runs.delete(id);
    if (run.fanOut !== undefined) this.#indices.delete(id);
    this.#runsByJob.get(run.jobName)?.delete(id);
    // A finished run is in no other set (`write` keeps them); history pruning deletes only those.
    if (isFinished(run.status)) this.#finishedByJob.get(run.jobName)?.delete(id);
    else {
      this.#claimable.delete(id);
      this.#running.delete(id);
    }
  }

  /** Deletes every run of a removed job, with their index records. */
  deleteOfJob(jobName: string): void {
    for (const id of this.#runsByJob.get(jobName) ?? NONE) this.delete(id);
    this.#runsByJob.delete(jobName);
    this.#finishedByJob.delete(jobName);
  }

  #lookUp(ids: Iterable<string> | undefined): RunRecord[] {
    const runs: RunRecord[] = [];
    for (const id of ids ?? NONE) {
      const run = this.#runs.get(id);
      if (run !== undefined) runs.push(run);
    }
    return runs;
  }
}
