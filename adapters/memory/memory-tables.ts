/**
 * The memory store's tables: jobs, runs and index records in maps, the lookup sets
 * kept in step with them, and the watchers. Every write of a run goes through
 * `writeRun`, which is where the `pendingUntil` rule and `run-ready` announcements
 * live. Records are replaced, never mutated, so a record handed out is a stable
 * snapshot (`memory-records.ts` builds them).
 */
import type { IndexRecord, JobRecord, RunRecord, StoreNotification } from '../../src/store.js';
import { isClaimable, isFinished, pendingUntilFor } from '../../src/store-rules.js';
import type { Draft } from '../../src/adapter-kit.js';
import { copyRun, KEEP } from './memory-records.js';

type Listener = (notification: StoreNotification) => void;

const NO_IDS: readonly string[] = Object.freeze([]);
/** The index records of a run that has none. */
const NO_INDICES: readonly IndexRecord[] = Object.freeze([]);
const DELIVERED = Promise.resolve();

export class MemoryTables {
  readonly #jobs = new Map<string, JobRecord>();
  /** Every job name in code-point order, built on demand for `listJobs` pages and dropped when a job comes or goes. */
  #names: string[] | undefined;
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
  readonly #listeners = new Set<Listener>();
  /**
   * Notifications on their way, oldest first from `#outboxHead`, each with the watchers
   * it goes to (one, or several): those watching when it was sent.
   */
  #outbox: (StoreNotification | Listener | readonly Listener[])[] = [];
  #outboxHead = 0;

  job(name: string): JobRecord | undefined {
    return this.#jobs.get(name);
  }

  /** Jobs in name order after `after` (every one without it), at most `limit` of them. */
  jobsByName(after: string | undefined, limit = Infinity): JobRecord[] {
    this.#names ??= [...this.#jobs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const names = this.#names;
    // The first name after `after`, by binary search.
    let lo = 0;
    let hi = names.length;
    while (after !== undefined && lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((names[mid] as string) <= after) lo = mid + 1;
      else hi = mid;
    }
    const page: JobRecord[] = [];
    for (let i = lo; i < names.length && page.length < limit; i += 1) page.push(this.#jobs.get(names[i] as string) as JobRecord);
    return page;
  }

  putJob(job: JobRecord): JobRecord {
    if (!this.#jobs.has(job.name)) this.#names = undefined;
    this.#jobs.set(job.name, job);
    return job;
  }

  /** Deletes the job with its runs and their index records; false when absent. */
  deleteJob(name: string): boolean {
    if (!this.#jobs.delete(name)) return false;
    this.#names = undefined;
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

  /** The job's runs that are not finished (its active runs). */
  activeRunsOf(jobName: string): RunRecord[] {
    const runs: RunRecord[] = [];
    const finished = this.#finishedByJob.get(jobName);
    for (const id of this.#runsByJob.get(jobName) ?? NO_IDS) {
      if (finished?.has(id) === true) continue;
      const run = this.#runs.get(id);
      if (run !== undefined) runs.push(run);
    }
    return runs;
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
  indices(runId: string): readonly IndexRecord[] {
    const records = this.#indices.get(runId);
    return records === undefined ? NO_INDICES : [...records.values()].sort((a, b) => a.index - b.index);
  }

  /** Writes a new run (its ID must be free). */
  insertRun(draft: Draft<RunRecord>, now: number): RunRecord {
    let ids = this.#runsByJob.get(draft.jobName);
    if (ids === undefined) this.#runsByJob.set(draft.jobName, (ids = new Set()));
    ids.add(draft.id);
    return this.writeRun(draft, now);
  }

  /**
   * Every write of a run goes through here, after its index records: it applies the
   * pendingUntil rule, keeps the lookup sets, and announces a run left claimable.
   * `draft` is a new record (a copy), which this stores: nobody changes it after.
   * Its `pendingUntil` is set here.
   */
  writeRun(draft: Draft<RunRecord>, now: number): RunRecord {
    const claimable = isClaimable(draft, draft.fanOut === undefined ? NO_INDICES : this.indices(draft.id));
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
      this.notify(
        pendingUntil === undefined
          ? { type: 'run-ready', jobName: run.jobName, runId: run.id, readyAt: run.readyAt }
          : { type: 'run-ready', jobName: run.jobName, runId: run.id, readyAt: run.readyAt, pendingUntil },
      );
    }
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
    if (run === undefined) return;
    this.#runs.delete(id);
    if (run.fanOut !== undefined) this.#indices.delete(id);
    this.#runsByJob.get(run.jobName)?.delete(id);
    // A finished run is in no other set (`writeRun` keeps them); history pruning deletes only those.
    if (isFinished(run.status)) this.#finishedByJob.get(run.jobName)?.delete(id);
    else {
      this.#claimable.delete(id);
      this.#running.delete(id);
    }
  }

  watch(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Delivered after the operation completes, as a real store's notifications are: one
   * microtask per notification, in order. A promise reaction rather than
   * `queueMicrotask`, which costs Node an async resource per call.
   */
  notify(notification: StoreNotification): void {
    const listeners = this.#listeners;
    if (listeners.size === 0) return;
    this.#outbox.push(notification, listeners.size === 1 ? (listeners.values().next().value as Listener) : [...listeners]);
    void DELIVERED.then(this.#deliverNext);
  }

  readonly #deliverNext = (): void => {
    const outbox = this.#outbox;
    const notification = outbox[this.#outboxHead] as StoreNotification;
    const to = outbox[this.#outboxHead + 1] as Listener | readonly Listener[];
    this.#outboxHead += 2;
    if (this.#outboxHead === outbox.length) {
      this.#outbox = [];
      this.#outboxHead = 0;
    }
    if (typeof to === 'function') deliver(to, notification);
    else for (const listener of to) deliver(listener, notification);
  };

  #lookUp(ids: Iterable<string> | undefined): RunRecord[] {
    const runs: RunRecord[] = [];
    for (const id of ids ?? NO_IDS) {
      const run = this.#runs.get(id);
      if (run !== undefined) runs.push(run);
    }
    return runs;
  }
}

function deliver(listener: Listener, notification: StoreNotification): void {
  try {
    listener(notification);
  } catch {
    // A watcher's failure is the watcher's business; the store's state is already consistent.
  }
}
