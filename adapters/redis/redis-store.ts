/**
 * The Redis store: jobs, cursors, runs, fan-out indices and leases in Redis
 * (standalone or Cluster), shared by every instance that uses the same prefix. Each
 * atomic contract method is one Lua script (`scripts.ts`, `run-scripts.ts`); reads
 * that span several keys are scripts too, so they see one consistent state.
 * Notifications travel over pub/sub on `{prefix}:events`, published by the scripts
 * themselves. Each partition's keys share one hash tag (`key-layout.ts`), so on a
 * cluster the partitions spread over the masters; calls that span partitions are in
 * `partition-calls.ts`.
 */
import { randomUUID } from 'node:crypto';
import { batchesOf } from '../../src/adapter-kit.js';
import { StoreError } from '../../src/errors.js';
import { compareNewestFirst, compareReadyOrder } from '../../src/store-rules.js';
import {
  LIST_BATCH,
  UPSERT_BATCH,
  type AddBackfillInput,
  type Claim,
  type ClaimRunInput,
  type CreateRunInput,
  type CreateRunResult,
  type ExpireInput,
  type ExpirePendingRunsResult,
  type FindReadyRunsInput,
  type FindReadyRunsResult,
  type FinishAttemptInput,
  type FinishAttemptResult,
  type IndexRecord,
  type JobRecord,
  type ListJobsQuery,
  type ListRunsOfJobsQuery,
  type ListRunsQuery,
  type Lock,
  type RecoverExpiredRunsInput,
  type RenewLeaseInput,
  type RenewLeaseResult,
  type RunRecord,
  type RunStatus,
  type ScheduleBackfillRunInput,
  type ScheduleBackfillRunResult,
  type ScheduleRunInput,
  type ScheduleRunResult,
  type SetSuspendedInput,
  type SetSuspendedResult,
  type SweepRunsResult,
  type Store,
  type StoreNotification,
  type UpsertJobInput,
  type UpsertJobResult,
} from '../../src/store.js';
import {
  asArray,
  asString,
  decodeIndex,
  decodeIndexReply,
  decodeJob,
  decodeRun,
  decodeRunOrUndefined,
  decodeRuns,
  decodeUpserts,
  encodeBackfill,
  encodeError,
  newRunArgs,
  num,
  optional,
  upsertArgs,
} from './codec.js';
import { KeyLayout } from './key-layout.js';
import { LayoutCheck } from './layout-check.js';
import { count, PartitionCalls } from './partition-calls.js';
import { allJobPages } from '../shared/job-pages.js';
import { NotificationFlush } from '../shared/notification-flush.js';
import { ScriptBatcher } from './batcher.js';
import { NotificationSubscriber } from './subscriber.js';
import { IdentityCache } from './identity-cache.js';
import { closeClient, openClient, ScriptRunner, type RedisClient } from './connection.js';
import { parseStoreOptions, type RedisStoreOptions } from './options.js';
import { LOCK_SCRIPTS } from './lock-scripts.js';
import type { BatchableScript } from './lua-prelude.js';
import { RedisLock } from './redis-lock.js';
import * as runLua from './run-scripts.js';
import * as lua from './scripts.js';

/** Registered job names `findReadyRuns` sends to its script; above this, it asks which jobs have claimable runs first. */
const NAMES_INLINE = 1_000;

export class RedisStore implements Store {
  readonly #client: RedisClient;
  /** Whether `#client` is ours to close. */
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #keys: KeyLayout;
  readonly #calls: PartitionCalls;
  /** How many partitions the jobs fall into (`Store.partitions`). */
  readonly partitions: number;
  readonly #scripts: ScriptRunner;
  readonly #batcher: ScriptBatcher;
  readonly #flush: NotificationFlush;
  readonly #subscriber: NotificationSubscriber;
  readonly #identity: IdentityCache;
  #lock: RedisLock | undefined;
  /** Whether the key layout is this store's (`layout-check.ts`). */
  readonly #layout: LayoutCheck;

  /**
   * @example new RedisStore({ client: new Redis(process.env.REDIS_URL) })
   * @example new RedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'billing' })
   * @throws ValidationError when the options are invalid (bad prefix, both or neither of `client` and `url`).
   * @throws TickworkError with code `'DRIVER_MISSING'` when given a `url` and the `ioredis` package is not installed.
   */
  constructor(options: RedisStoreOptions) {
    const parsed = parseStoreOptions(options);
    if (parsed.client !== undefined) {
      this.#client = parsed.client;
      this.#ownsClient = false;
    } else {
      this.#client = openClient(parsed.url);
      this.#ownsClient = true;
    }
    this.#prefix = parsed.prefix;
    this.partitions = parsed.partitions;
    this.#keys = new KeyLayout(parsed.prefix, parsed.partitions);
    this.#scripts = new ScriptRunner(this.#client);
    this.#layout = new LayoutCheck({ client: this.#client, scripts: this.#scripts, keys: this.#keys, prefix: parsed.prefix, partitions: parsed.partitions });
    const run = (script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> => this.#script(script, keys, args);
    this.#calls = new PartitionCalls(this.#keys, this.#client, run);
    this.#batcher = new ScriptBatcher({ run, lanePerTag: this.#calls.perPartition });
    // Pub/sub keeps order per server: on a cluster the marker leaves from every partition's node, as notifications do.
    const flushTags = this.#calls.perPartition ? this.#keys.tags : [this.#keys.global];
    this.#flush = new NotificationFlush((marker) => Promise.all(flushTags.map((tag) => run(lua.FLUSH, [tag], [marker]))), flushTags.length);
    // Scripts publish on a channel named after KEYS[1], which ioredis gives the client's `keyPrefix`; channels it does not.
    const keyPrefix = this.#client.options.keyPrefix ?? '';
    this.#identity = new IdentityCache(`${keyPrefix}${this.#keys.global}:identity`);
    this.#subscriber = new NotificationSubscriber(this.#client, `${keyPrefix}${this.#keys.global}:events`, this.#flush, this.#identity);
  }

  /**
   * Loads the scripts and checks the key layout (idempotent, safe to race). A prefix
   * in the single-tag layout (version 2, from before partitions) opened with several
   * partitions is moved to the partitioned layout first (`layout-check.ts`, `migration.ts`).
   * @throws StoreError (code `'STORE'`) when the prefix holds another layout
   *   version, or another partition count: the message names both and what to do.
   */
  async init(): Promise<void> {
    await this.#scripts.load([...lua.STORE_SCRIPTS, ...LOCK_SCRIPTS]);
    await this.#layout.init();
  }

  /** Closes the subscriber connection, and the client when the store created it from a URL. */
  async close(): Promise<void> {
    await this.#subscriber.close();
    if (this.#ownsClient) await closeClient(this.#client);
  }

  lock(): Lock {
    this.#lock ??= new RedisLock({ client: this.#client, prefix: this.#prefix });
    return this.#lock;
  }

  /**
   * One script call per `UPSERT_BATCH` inputs: each job is upserted atomically, in
   * order, and a call the scheduler makes (at most `UPSERT_BATCH`) is one round trip.
   * Longer lists are split so that no script holds the server for long.
   */
  async upsertJobs(inputs: readonly UpsertJobInput[]): Promise<readonly UpsertJobResult[]> {
    const results: UpsertJobResult[] = [];
    // Each partition's jobs in batches of its own; results in the order of the inputs.
    const positions = this.#calls.group(inputs.keys(), (i) => this.#keys.ofJob((inputs[i] as UpsertJobInput).spec.name));
    for (const [tag, indices] of positions) {
      for (const batch of batchesOf(indices, UPSERT_BATCH)) {
        const upserted = decodeUpserts(await this.#on(tag, lua.UPSERT_JOBS, batch.flatMap((i) => upsertArgs(inputs[i] as UpsertJobInput))), batch.length);
        batch.forEach((i, n) => (results[i] = upserted[n] as UpsertJobResult));
      }
    }
    return results;
  }

  async getJob(name: string): Promise<JobRecord | undefined> {
    const reply = await this.#job(name, lua.GET_JOB, [name]);
    return reply === null ? undefined : decodeJob(reply);
  }

  /** Keyset pages by name (`ZRANGE ... BYLEX`); without a `limit` every job (after `after`), read in pages of `LIST_JOBS_PAGE` so no script holds the server for long. */
  async listJobs(query?: ListJobsQuery): Promise<readonly JobRecord[]> {
    if (query?.limit !== undefined) return this.#listJobs(query.after, query.limit);
    return allJobPages((after, limit) => this.#listJobs(after, limit), query?.after);
  }

  async #listJobs(after: string | undefined, limit: number): Promise<JobRecord[]> {
    const replies = await this.#calls.jobPage(after ?? '', count(limit));
    // Byte order is code-point order for the names the grammar allows; JavaScript's order has the last word.
    const jobs = replies.flatMap((reply) => asArray(reply, 'listJobs reply').map(decodeJob));
    return jobs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, Math.max(0, limit));
  }

  async removeJob(name: string): Promise<boolean> {
    return (await this.#job(name, lua.REMOVE_JOB, [name])) === '1';
  }

  async setSuspended(input: SetSuspendedInput): Promise<SetSuspendedResult | undefined> {
    const reply = await this.#job(input.name, lua.SET_SUSPENDED, [input.name, input.suspended ? '1' : '0', num(input.now)]);
    if (reply === null) return undefined;
    const [job, cancelled] = asArray(reply, 'setSuspended reply');
    return { job: decodeJob(job), cancelled: decodeRuns(cancelled) };
  }

  async scheduleRun(input: ScheduleRunInput): Promise<ScheduleRunResult> {
    const run = input.run === undefined ? ['0'] : ['1', ...newRunArgs(input.run)];
    const reply = asArray(
      await this.#batched(lua.SCHEDULE_RUN, this.#runTag(input.jobName, input.run?.id), [input.jobName, num(input.expectedCursor), num(input.cursor), num(input.now), ...run]),
      'scheduleRun reply',
    );
    const [outcome, job, third, fourth] = reply;
    switch (outcome) {
      case 'conflict':
        return job === undefined ? { outcome } : { outcome, job: decodeJob(job) };
      case 'advanced':
        return { outcome, job: decodeJob(job) };
      case 'exists':
        return { outcome, job: decodeJob(job), run: decodeRun(third) };
      case 'skipped':
      case 'blocked':
        return { outcome, job: decodeJob(job), active: asArray(third, 'active runs').map((id) => asString(id, 'run id')) };
      case 'created':
        return { outcome, job: decodeJob(job), run: decodeRun(third), cancelled: decodeRuns(fourth) };
      default:
        throw new Error(`tickwork redis store: unexpected scheduleRun outcome ${String(outcome)}`);
    }
  }

  async createRun(input: CreateRunInput): Promise<CreateRunResult> {
    const [outcome, run] = asArray(await this.#batched(lua.CREATE_RUN, this.#runTag(input.run.jobName, input.run.id), [num(input.now), ...newRunArgs(input.run)]), 'createRun reply');
    if (outcome === 'missing-job') return { outcome };
    if (outcome === 'created' || outcome === 'exists') return { outcome, run: decodeRun(run) };
    throw new Error(`tickwork redis store: unexpected createRun outcome ${String(outcome)}`);
  }

  async addBackfill(input: AddBackfillInput): Promise<JobRecord | undefined> {
    const reply = await this.#job(input.jobName, lua.ADD_BACKFILL, [input.jobName, encodeBackfill(input.range)]);
    return reply === null ? undefined : decodeJob(reply);
  }

  async scheduleBackfillRun(input: ScheduleBackfillRunInput): Promise<ScheduleBackfillRunResult> {
    const [outcome, job, run] = asArray(
      await this.#batched(lua.SCHEDULE_BACKFILL_RUN, this.#runTag(input.jobName, input.run.id), [
        input.jobName,
        input.backfillId,
        num(input.expectedNext),
        input.next === undefined ? '' : num(input.next),
        num(input.now),
        ...newRunArgs(input.run),
      ]),
      'scheduleBackfillRun reply',
    );
    switch (outcome) {
      case 'conflict':
        return job === undefined ? { outcome } : { outcome, job: decodeJob(job) };
      case 'blocked':
        return { outcome, job: decodeJob(job) };
      case 'created':
      case 'exists':
        return { outcome, job: decodeJob(job), run: decodeRun(run) };
      default:
        throw new Error(`tickwork redis store: unexpected scheduleBackfillRun outcome ${String(outcome)}`);
    }
  }

  /**
   * Up to `NAMES_INLINE` registered names go to the script. More (an instance that
   * registers 100,000 jobs polls this every heartbeat) would be every name sent and a
   * look-up per name each time: instead the jobs that have claimable runs are read
   * first (`{p}:ready-jobs`, none while idle), and only the registered ones among them
   * are looked up. Falls back to sending every name when more jobs have claimable runs
   * than this instance registered.
   */
  async findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult> {
    const { jobNames, now, limit } = input;
    if (jobNames.size <= NAMES_INLINE) return this.#findReadyRuns(jobNames, now, limit);
    const replies = await this.#calls.everyPartition(lua.FIND_READY_JOBS, [num(now), num(jobNames.size)]);
    if (replies.includes(null)) return this.#findReadyRuns(jobNames, now, limit);
    const entries = replies.flatMap((reply) => asArray(reply, 'findReadyJobs reply'));
    const ready = new Set<string>();
    let later: number | undefined;
    for (let i = 0; i + 1 < entries.length; i += 2) {
      const name = asString(entries[i], 'job name');
      const first = Number(asString(entries[i + 1], 'readyAt'));
      if (!jobNames.has(name)) continue;
      if (first <= now) ready.add(name);
      // A lower bound of the job's next readyAt: waking then at worst finds nothing yet.
      else if (later === undefined || first < later) later = first;
    }
    const found: FindReadyRunsResult = ready.size === 0 ? { runs: [] } : await this.#findReadyRuns(ready, now, limit);
    const next = found.nextReadyAt === undefined ? later : later === undefined ? found.nextReadyAt : Math.min(found.nextReadyAt, later);
    return next === undefined ? { runs: found.runs } : { runs: found.runs, nextReadyAt: next };
  }

  async #findReadyRuns(jobNames: ReadonlySet<string>, now: number, limit: number): Promise<FindReadyRunsResult> {
    if (jobNames.size === 0) return { runs: [] };
    const groups = this.#calls.group(jobNames, (name) => this.#keys.ofJob(name));
    const ready: RunRecord[] = [];
    let next: number | undefined;
    for (const reply of await this.#calls.grouped(lua.FIND_READY_RUNS, [num(now), count(limit)], groups)) {
      const [runs, nextReadyAt] = asArray(reply, 'findReadyRuns reply');
      ready.push(...decodeRuns(runs));
      const later = asString(nextReadyAt, 'nextReadyAt');
      if (later !== '' && (next === undefined || Number(later) < next)) next = Number(later);
    }
    // The script returns them in claim order, comparing IDs as bytes; JavaScript's string order has the last word.
    const first = ready.sort(compareReadyOrder).slice(0, Math.max(0, limit));
    return next === undefined ? { runs: first } : { runs: first, nextReadyAt: next };
  }

  async claimRun(input: ClaimRunInput): Promise<Claim | undefined> {
    const reply = await this.#batched(runLua.CLAIM_RUN, this.#keys.ofRun(input.runId), [
      input.runId,
      input.owner,
      num(input.now),
      num(input.leaseUntil),
      optional(input.deadlineAt),
    ]);
    if (reply === null) return undefined;
    const [claimed, index] = asArray(reply, 'claimRun reply');
    const record = decodeIndexReply(input.runId, index);
    return record === undefined ? { run: decodeRun(claimed) } : { run: decodeRun(claimed), index: record };
  }

  async renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult> {
    const [ok, status] = asArray(
      await this.#batched(runLua.RENEW_LEASE, this.#keys.ofRun(input.runId), [
        input.runId,
        input.owner,
        num(input.fence),
        num(input.now),
        num(input.leaseUntil),
        optional(input.index),
      ]),
      'renewLease reply',
    );
    if (ok === '1') return { ok: true };
    return status === '' || status === undefined ? { ok: false } : { ok: false, status: asString(status, 'status') as RunStatus };
  }

  async finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult> {
    const { outcome } = input;
    const [ok, after, index] = asArray(
      await this.#batched(runLua.FINISH_ATTEMPT, this.#keys.ofRun(input.runId), [
        input.runId,
        input.owner,
        num(input.fence),
        num(input.now),
        outcome.status,
        outcome.status === 'failed' || outcome.status === 'retry' ? encodeError(outcome.error) : '',
        outcome.status === 'retry' ? num(outcome.readyAt) : '',
        optional(input.index),
      ]),
      'finishAttempt reply',
    );
    if (ok === '1') {
      const record = decodeIndexReply(input.runId, index);
      return record === undefined ? { ok: true, run: decodeRun(after) } : { ok: true, run: decodeRun(after), index: record };
    }
    const current = decodeRunOrUndefined(after);
    return current === undefined ? { ok: false } : { ok: false, run: current };
  }

  recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]> {
    return this.#calls.recoverExpiredRuns(input);
  }

  expirePendingRuns(input: ExpireInput): Promise<ExpirePendingRunsResult> {
    return this.#calls.expirePendingRuns(input);
  }

  deleteExpiredRuns(input: ExpireInput): Promise<number> {
    return this.#calls.deleteExpiredRuns(input);
  }

  /** The three sweeps in one round trip on a single Redis (`PartitionCalls.sweep`). */
  sweepRuns(input: ExpireInput): Promise<SweepRunsResult> {
    return this.#calls.sweep(input);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    if (!this.#layout.checked) await this.#layout.ready();
    const hash = await this.#client.hgetall(`${this.#keys.ofRun(id)}:run:${id}`);
    return decodeRunOrUndefined(Object.entries(hash).flat());
  }

  async listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]> {
    const { statuses, limit } = query;
    const runs = decodeRuns(await this.#job(query.jobName, lua.LIST_RUNS, [query.jobName]))
      .filter((run) => statuses === undefined || statuses.includes(run.status))
      .sort(compareNewestFirst);
    return limit === undefined ? runs : runs.slice(0, Math.max(0, limit));
  }

  async listRunsOfJobs(query: ListRunsOfJobsQuery): Promise<readonly RunRecord[]> {
    const { statuses } = query;
    const names = [...new Set(query.jobNames)];
    const order = new Map(names.map((name, position) => [name, position]));
    const runs: RunRecord[] = [];
    // One script per LIST_BATCH names: a bounded read each, however many jobs are asked for.
    for (const batch of batchesOf(names, LIST_BATCH)) {
      const groups = this.#calls.group(batch, (name) => this.#keys.ofJob(name));
      for (const reply of await this.#calls.grouped(lua.LIST_RUNS_OF_JOBS, [], groups)) {
        for (const run of decodeRuns(reply)) if (statuses === undefined || statuses.includes(run.status)) runs.push(run);
      }
    }
    return runs.sort((a, b) => (order.get(a.jobName) as number) - (order.get(b.jobName) as number) || compareNewestFirst(a, b));
  }

  async listIndices(runId: string): Promise<readonly IndexRecord[]> {
    if (!this.#layout.checked) await this.#layout.ready();
    const hash = await this.#client.hgetall(`${this.#keys.ofRun(runId)}:indices:${runId}`);
    return Object.entries(hash)
      .map(([index, record]) => decodeIndex(runId, index, record))
      .sort((a, b) => a.index - b.index);
  }

  /**
   * Subscribes to the store's pub/sub channel on a dedicated connection, opened by
   * the first watcher and closed when the last one leaves. Notifications are hints:
   * those published while the connection is down are lost.
   */
  watch(listener: (notification: StoreNotification) => void): () => void {
    return this.#subscriber.watch(listener);
  }

  /**
   * The identity of the data under the prefix: a Redis restarted empty (or flushed) has
   * a new one. Answered from memory while the server tracks the key for us (`identity-cache.ts`).
   */
  identity(): Promise<string> {
    return this.#identity.get(async () => asString(await this.#global(lua.IDENTITY, [randomUUID()]), 'identity'));
  }

  /**
   * Calls `listener` when the identity may have changed, with whether its changes are
   * pushed: while the store is watched, on a single Redis with client tracking.
   */
  watchIdentity(listener: (pushed: boolean) => void): () => void {
    return this.#identity.watch(listener);
  }

  /** Publishes a marker and waits for it on the subscription: pub/sub keeps order, so every earlier notification is in. */
  flushNotifications(): Promise<void> {
    return this.#flush.flush();
  }

  /** A script of the store as a whole, on the store-wide tag. */
  #global(script: string, args: readonly string[]): Promise<unknown> {
    return this.#script(script, [this.#keys.global], args);
  }

  /** Every script call of the store, once its layout is known to be this store's (`layout-check.ts`). */
  #script(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    if (this.#layout.checked) return this.#scripts.run(script, keys, args);
    return this.#layout.ready().then(() => this.#scripts.run(script, keys, args));
  }

  /** A script on partition `tag`. */
  #on(tag: string, script: string, args: readonly string[]): Promise<unknown> {
    return this.#script(script, [tag], args);
  }

  /** A script on the partition of job `name`. */
  #job(name: string, script: string, args: readonly string[]): Promise<unknown> {
    return this.#on(this.#keys.ofJob(name), script, args);
  }

  /**
   * The partition of a run of job `jobName` that the script may create with ID
   * `runId`: its job's, which must be the one the ID names, or the run could not be
   * found by its ID (the core's IDs always name their job, see `run-id.ts`).
   */
  #runTag(jobName: string, runId: string | undefined): string {
    const tag = this.#keys.ofJob(jobName);
    if (runId !== undefined && this.#keys.ofRun(runId) !== tag) {
      throw new StoreError('createRun', new Error(`run ID ${JSON.stringify(runId)} does not name its job ${JSON.stringify(jobName)}`));
    }
    return tag;
  }

  /** A hot script's call, coalesced with concurrent calls of the same script (see `batcher.ts`). */
  #batched(script: BatchableScript, tag: string, args: readonly string[]): Promise<unknown> {
    return this.#batcher.call(script, tag, args);
  }
}
