/**
 * The memory store's tables: jobs, runs and index records in maps, the lookup sets
 * kept in step with them, and the watchers. Every write of a run goes through
 * `writeRun`, which is where the `pendingUntil` rule and `run-ready` announcements
 * live. Records are replaced, never mutated, so a record handed out is a stable
 * snapshot.
 */
import type { IndexRecord, JobRecord, RunRecord, StoreNotification } from '../../src/store.js';
import { isClaimable, isFinished, pendingUntilFor } from '../../src/store-rules.js';

/**
 * A record with some fields changed or added, as a new object. Not `{ ...record, key }`:
 * V8 (Node 20) builds a spread followed by keys the source lacks on a slow path, several
 * microseconds a record, and every write of this store adds some (`owner`, `finishedAt`, ...).
 */
export function patch<T extends object>(record: T, changes: Partial<T>): T {
  return Object.assign({}, record, changes);
}

export class MemoryTables {
  readonly #jobs = new Map<string, JobRecord>();
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
  readonly #listeners = new Set<(notification: StoreNotification) => void>();

  job(name: string): JobRecord | undefined {
    return this.#jobs.get(name);
  }

  jobs(): JobRecord[] {
    return [...this.#jobs.values()];
  }

  putJob(job: JobRecord): JobRecord {
    this.#jobs.set(job.name, job);
    return job;
  }

  /** Deletes the job with its runs and their index records; false when absent. */
  deleteJob(name: string): boolean {
    if (!this.#jobs.delete(name)) return false;
    for (const id of this.#runsByJob.get(name) ?? []) this.deleteRun(id);
    this.#runsByJob.delete(name);
    this.#finishedByJob.delete(name);
    return true;
  }

  run(id: string): RunRecord | undefined {
    return this.#runs.get(id);
  }

  allRuns(): RunRecord[] {
    return [...this.#runs.values()];
  }

  runsOf(jobName: string): RunRecord[] {
    return this.#lookUp(this.#runsByJob.get(jobName));
  }

  finishedRunsOf(jobName: string): RunRecord[] {
    return this.#lookUp(this.#finishedByJob.get(jobName));
  }

  claimableRuns(): RunRecord[] {
    return this.#lookUp(this.#claimable);
  }

  runningRuns(): RunRecord[] {
    return this.#lookUp(this.#running);
  }

  isClaimable(runId: string): boolean {
    return this.#claimable.has(runId);
  }

  index(runId: string, index: number): IndexRecord | undefined {
    return this.#indices.get(runId)?.get(index);
  }

  /** A run's index records, by index. */
  indices(runId: string): IndexRecord[] {
    return [...(this.#indices.get(runId)?.values() ?? [])].sort((a, b) => a.index - b.index);
  }

  /** Writes a new run (its ID must be free). */
  insertRun(draft: RunRecord, now: number): RunRecord {
    let ids = this.#runsByJob.get(draft.jobName);
    if (ids === undefined) this.#runsByJob.set(draft.jobName, (ids = new Set()));
    ids.add(draft.id);
    return this.writeRun(draft, now);
  }

  /**
   * Every write of a run goes through here, after its index records: it applies the
   * pendingUntil rule, keeps the lookup sets, and announces a run left claimable.
   */
  writeRun(draft: RunRecord, now: number): RunRecord {
    const claimable = isClaimable(draft, draft.fanOut === undefined ? [] : this.indices(draft.id));
    const { pendingUntil: _previous, ...rest } = draft;
    const pendingUntil = claimable ? pendingUntilFor(rest.readyAt, now, this.#jobs.get(rest.jobName)?.pendingTimeoutMs) : undefined;
    const run: RunRecord = pendingUntil === undefined ? rest : patch<RunRecord>(rest, { pendingUntil });
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
    if (claimable) this.notify({ type: 'run-ready', jobName: run.jobName, runId: run.id, readyAt: run.readyAt });
    return run;
  }

  putIndex(index: IndexRecord): IndexRecord {
    let records = this.#indices.get(index.runId);
    if (records === undefined) this.#indices.set(index.runId, (records = new Map()));
    records.set(index.index, index);
    return index;
  }

  /** Deletes a run with its index records. */
  deleteRun(id: string): void {
    const run = this.#runs.get(id);
    this.#runs.delete(id);
    this.#indices.delete(id);
    this.#claimable.delete(id);
    this.#running.delete(id);
    if (run !== undefined) {
      this.#runsByJob.get(run.jobName)?.delete(id);
      this.#finishedByJob.get(run.jobName)?.delete(id);
    }
  }

  watch(listener: (notification: StoreNotification) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(notification: StoreNotification): void {
    // Delivered after the operation completes, as a real store's notifications are.
    for (const listener of this.#listeners) {
      queueMicrotask(() => {
        try {
          listener(notification);
        } catch {
          // A watcher's failure is the watcher's business; the store's state is already consistent.
        }
      });
    }
  }

  #lookUp(ids: Iterable<string> | undefined): RunRecord[] {
    const runs: RunRecord[] = [];
    for (const id of ids ?? []) {
      const run = this.#runs.get(id);
      if (run !== undefined) runs.push(run);
    }
    return runs;
  }
}
