/**
 * The Postgres store: jobs, cursors, runs and leases in one schema, shared by every
 * instance that points at it. Each atomic contract method is ONE statement, a call
 * of a function created by the migrations (see `migration-v1-schema.ts`), so it
 * works through any pool, PGlite or a transaction-mode pooler. Instants are bigint
 * epoch milliseconds handed in by the core; the SQL never reads a clock. The hot
 * calls (runs created, scheduled, claimed, renewed, finished) go through a
 * `Batcher`, which sends concurrent calls of one function as one statement.
 */
import {
  LEASE_EXPIRED_ERROR,
  PENDING_TIMEOUT_ERROR,
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
  type ScheduleBackfillRunInput,
  type ScheduleBackfillRunResult,
  type ScheduleRunInput,
  type ScheduleRunResult,
  type SetSuspendedInput,
  type SetSuspendedResult,
  type Store,
  type StoreNotification,
  type UpsertJobInput,
  type UpsertJobResult,
} from '../../src/store.js';
import { DEFAULT_PARTITIONS, batchesOf } from '../../src/adapter-kit.js';
import { Batcher } from './batcher.js';
import { FunctionCalls } from './function-calls.js';
import { Database, parseStoreOptions, type PostgresStoreOptions } from './database.js';
import { allJobPages } from '../shared/job-pages.js';
import { NotificationFlush } from '../shared/notification-flush.js';
import { NotificationListener } from './listener.js';
import { PostgresLock } from './postgres-lock.js';
import { dataParam, toIndex, toJob, toRun, toRuns, traceParam, upsertParam } from './records.js';

/** Registered job names `findReadyRuns` sends with its query; above this, it asks which jobs have claimable runs first. */
const NAMES_INLINE = 1_000;

export class PostgresStore implements Store {
  readonly #db: Database;
  readonly #s: string;
  readonly #listener: NotificationListener;
  readonly #calls: FunctionCalls;
  #lock: PostgresLock | undefined;
  readonly #flush: NotificationFlush;

  /**
   * @throws ValidationError when the options are invalid.
   * @throws TickworkError with code `'DRIVER_MISSING'` when given a `connectionString` and the `pg` package is not installed.
   */
  constructor(options: PostgresStoreOptions) {
    const parsed = parseStoreOptions(options);
    this.partitions = parsed.partitions ?? DEFAULT_PARTITIONS;
    this.#db = new Database(parsed);
    this.#s = this.#db.names.schema;
    this.#calls = new FunctionCalls(new Batcher({ send: (text, params) => this.#db.rows(text, params) }), this.#s);
    const { channel } = this.#db.names;
    this.#flush = new NotificationFlush((marker) => this.#db.rows('SELECT pg_notify($1, $2)', [channel, marker]));
    this.#listener = new NotificationListener(() => this.#db.pool(), channel, this.#flush);
  }

  /** How many partitions the jobs fall into (`Store.partitions`). */
  readonly partitions: number;

  /** The schema this store keeps its tables in. */
  get schema(): string {
    return this.#db.names.schemaName;
  }

  /** The LISTEN/NOTIFY channel notifications travel on. */
  get channel(): string {
    return this.#db.names.channel;
  }

  init(): Promise<void> {
    return this.#db.init();
  }

  async close(): Promise<void> {
    await this.#listener.close();
    await this.#db.close();
  }

  lock(): Lock {
    // Through the store's pool (opened lazily for a connection string) and after its migrations.
    const db = this.#db;
    const pool = { query: async (text: string, params?: unknown[]) => (await db.pool()).query(text, params) };
    this.#lock ??= new PostgresLock({ pool, schema: db.names.schemaName });
    return this.#lock;
  }

  /**
   * One statement per `UPSERT_BATCH` inputs (`upsert_jobs`, one transaction): each job
   * is upserted in order and notified, and a call the scheduler makes is one round
   * trip. Longer lists are split so that no transaction holds many rows for long.
   */
  async upsertJobs(inputs: readonly UpsertJobInput[]): Promise<readonly UpsertJobResult[]> {
    const results: UpsertJobResult[] = [];
    for (const batch of batchesOf(inputs, UPSERT_BATCH)) {
      const raw = (await this.#calls.alone('upsert_jobs($1::jsonb)', [JSON.stringify(batch.map(upsertParam))])) as {
        job: unknown;
        created: boolean;
        cancelled: unknown;
      }[];
      for (const { job, created, cancelled } of raw) {
        // `cancelled` is null unless suspending cancelled runs created ahead.
        results.push(cancelled === null ? { job: toJob(job), created } : { job: toJob(job), created, cancelled: toRuns(cancelled) });
      }
    }
    return results;
  }

  async getJob(name: string): Promise<JobRecord | undefined> {
    const raw = await this.#db.value(`SELECT ${this.#s}.job_json(j) AS result FROM ${this.#s}.jobs j WHERE j.name = $1`, [name]);
    return raw === undefined ? undefined : toJob(raw);
  }

  /** Keyset pages along the primary key; without a `limit` every job (after `after`), read in pages of `LIST_JOBS_PAGE`. */
  async listJobs(query?: ListJobsQuery): Promise<readonly JobRecord[]> {
    if (query?.limit !== undefined) return this.#listJobs(query.after, query.limit);
    return allJobPages((after, limit) => this.#listJobs(after, limit), query?.after);
  }

  async #listJobs(after: string | undefined, limit: number | undefined): Promise<JobRecord[]> {
    const s = this.#s;
    const rows = await this.#db.rows(
      after === undefined
        ? `SELECT ${s}.job_json(j) AS result FROM ${s}.jobs j ORDER BY j.name LIMIT $1`
        : `SELECT ${s}.job_json(j) AS result FROM ${s}.jobs j WHERE j.name > $2 ORDER BY j.name LIMIT $1`,
      after === undefined ? [limit ?? null] : [limit ?? null, after],
    );
    return rows.map((row) => toJob(row.result));
  }

  async removeJob(name: string): Promise<boolean> {
    return (await this.#calls.alone('remove_job($1::text)', [name])) === true;
  }

  async setSuspended(input: SetSuspendedInput): Promise<SetSuspendedResult | undefined> {
    const raw = await this.#calls.alone('set_suspended($1::text, $2::boolean, $3::bigint)', [input.name, input.suspended, input.now]);
    if (raw === null) return undefined;
    const { job, cancelled } = raw as { job: unknown; cancelled: unknown };
    return { job: toJob(job), cancelled: toRuns(cancelled) };
  }

  async scheduleRun(input: ScheduleRunInput): Promise<ScheduleRunResult> {
    const { run } = input;
    const raw = (await this.#calls.batched(
      `${input.jobName}.`,
      this.#calls.traced(run, 'schedule_run($1::text, $2::bigint, $3::bigint, $4::text, $5::bigint, $6::text, $7::json, $8::bigint, $9::bigint)', 10),
      [
        input.jobName,
        input.expectedCursor,
        input.cursor,
        run?.id ?? null,
        run?.scheduledAt ?? null,
        run?.trigger ?? null,
        run === undefined ? null : dataParam(run),
        input.now,
        run?.readyAt ?? null,
        ...traceParam(run),
      ],
    )) as Record<string, unknown> & { outcome: ScheduleRunResult['outcome'] };
    const job = raw.job === undefined ? undefined : toJob(raw.job);
    switch (raw.outcome) {
      case 'created':
        return { outcome: 'created', job: job!, run: toRun(raw.run), cancelled: toRuns(raw.cancelled) };
      case 'exists':
        return { outcome: 'exists', job: job!, run: toRun(raw.run) };
      case 'skipped':
      case 'blocked':
        return { outcome: raw.outcome, job: job!, active: raw.active as string[] };
      case 'advanced':
        return { outcome: 'advanced', job: job! };
      default:
        return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
    }
  }

  async createRun(input: CreateRunInput): Promise<CreateRunResult> {
    const { run } = input;
    const raw = (await this.#calls.batched(run.id, this.#calls.traced(run, 'create_run($1::text, $2::text, $3::bigint, $4::text, $5::json, $6::bigint, $7::bigint)', 8), [
      run.id,
      run.jobName,
      run.scheduledAt,
      run.trigger,
      dataParam(run),
      input.now,
      run.readyAt,
      ...traceParam(run),
    ])) as { outcome: CreateRunResult['outcome']; run?: unknown };
    return raw.outcome === 'missing-job' ? { outcome: 'missing-job' } : { outcome: raw.outcome, run: toRun(raw.run) };
  }

  async addBackfill(input: AddBackfillInput): Promise<JobRecord | undefined> {
    const { range } = input;
    const raw =
      range.traceparent === undefined
        ? await this.#calls.alone('add_backfill($1::text, $2::text, $3::bigint, $4::bigint)', [input.jobName, range.id, range.next, range.to])
        : await this.#calls.alone('add_backfill($1::text, $2::text, $3::bigint, $4::bigint, $5::text)', [
            input.jobName,
            range.id,
            range.next,
            range.to,
            range.traceparent,
          ]);
    return raw === null ? undefined : toJob(raw);
  }

  async scheduleBackfillRun(input: ScheduleBackfillRunInput): Promise<ScheduleBackfillRunResult> {
    const { run } = input;
    const raw = (await this.#calls.batched(
      run.id,
      this.#calls.traced(run, 'schedule_backfill_run($1::text, $2::text, $3::bigint, $4::bigint, $5::text, $6::bigint, $7::text, $8::json, $9::bigint, $10::bigint)', 11),
      [
        input.jobName,
        input.backfillId,
        input.expectedNext,
        input.next ?? null,
        run.id,
        run.scheduledAt,
        run.trigger,
        dataParam(run),
        input.now,
        run.readyAt,
        ...traceParam(run),
      ],
    )) as { outcome: ScheduleBackfillRunResult['outcome']; job?: unknown; run?: unknown };
    const job = raw.job === undefined ? undefined : toJob(raw.job);
    switch (raw.outcome) {
      case 'created':
      case 'exists':
        return { outcome: raw.outcome, job: job!, run: toRun(raw.run) };
      case 'blocked':
        return { outcome: 'blocked', job: job! };
      default:
        return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
    }
  }

  /**
   * Up to `NAMES_INLINE` registered names go with the query. More (an instance that
   * registers 100,000 jobs polls this every heartbeat) would be an array of them all,
   * sent and planned each time: instead the jobs that have claimable runs are read
   * first (`runs_active_idx`, as many as there are such jobs, none while idle), and only
   * the registered ones among them are sent. Falls back to sending every name when more
   * jobs have claimable runs than this instance registered.
   */
  async findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult> {
    const { jobNames, now, limit } = input;
    if (jobNames.size <= NAMES_INLINE) return this.#findReadyRuns(jobNames, now, limit);
    const rows = await this.#db.rows(
      `SELECT r.job_name AS name, min(r.ready_at)::float8 AS first FROM ${this.#s}.runs r
       WHERE r.claimable AND r.status IN ('pending', 'running') GROUP BY r.job_name LIMIT $1`,
      [jobNames.size + 1],
    );
    if (rows.length > jobNames.size) return this.#findReadyRuns(jobNames, now, limit);
    const ready = new Set<string>();
    let later: number | undefined;
    for (const row of rows as { name: string; first: number }[]) {
      if (!jobNames.has(row.name)) continue;
      if (row.first <= now) ready.add(row.name);
      else if (later === undefined || row.first < later) later = row.first;
    }
    const found: FindReadyRunsResult = ready.size === 0 ? { runs: [] } : await this.#findReadyRuns(ready, now, limit);
    const next = found.nextReadyAt === undefined ? later : later === undefined ? found.nextReadyAt : Math.min(found.nextReadyAt, later);
    return next === undefined ? { runs: found.runs } : { runs: found.runs, nextReadyAt: next };
  }

  async #findReadyRuns(jobNames: ReadonlySet<string>, now: number, limit: number): Promise<FindReadyRunsResult> {
    const s = this.#s;
    const raw = (await this.#db.value(
      `SELECT json_build_object(
         'runs', (SELECT COALESCE(json_agg(${s}.run_json(r) ORDER BY r.ready_at, r.scheduled_at, r.id), '[]')
                  FROM (SELECT * FROM ${s}.runs p
                        WHERE p.claimable AND p.ready_at <= $2 AND p.job_name = ANY ($1::text[])
                        ORDER BY p.ready_at, p.scheduled_at, p.id LIMIT $3) r),
         'nextReadyAt', (SELECT min(p.ready_at) FROM ${s}.runs p
                         WHERE p.claimable AND p.ready_at > $2 AND p.job_name = ANY ($1::text[]))
       ) AS result`,
      [[...jobNames], now, limit],
    )) as { runs: unknown; nextReadyAt: number | null };
    const runs = toRuns(raw.runs);
    return raw.nextReadyAt === null ? { runs } : { runs, nextReadyAt: raw.nextReadyAt };
  }

  async claimRun(input: ClaimRunInput): Promise<Claim | undefined> {
    const raw = (await this.#calls.batched(input.runId, 'claim_run($1::text, $2::text, $3::bigint, $4::bigint, $5::bigint)', [
      input.runId,
      input.owner,
      input.now,
      input.leaseUntil,
      input.deadlineAt ?? null,
    ])) as { run: unknown; index?: unknown } | null;
    if (raw === null) return undefined;
    return raw.index === undefined ? { run: toRun(raw.run) } : { run: toRun(raw.run), index: toIndex(raw.index) };
  }

  async renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult> {
    const raw = (await this.#calls.batched(input.runId, 'renew_lease($1::text, $2::integer, $3::text, $4::bigint, $5::bigint)', [
      input.runId,
      input.index ?? null,
      input.owner,
      input.fence,
      input.leaseUntil,
    ])) as { ok: boolean; status?: RunRecord['status'] | null };
    if (raw.ok) return { ok: true };
    return raw.status === null || raw.status === undefined ? { ok: false } : { ok: false, status: raw.status };
  }

  async finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult> {
    const { outcome } = input;
    const error = outcome.status === 'failed' || outcome.status === 'retry' ? outcome.error : undefined;
    const raw = (await this.#calls.batched(
      input.runId,
      'finish_attempt($1::text, $2::integer, $3::text, $4::bigint, $5::bigint, $6::text, $7::text, $8::text, $9::bigint)',
      [
        input.runId,
        input.index ?? null,
        input.owner,
        input.fence,
        input.now,
        outcome.status,
        error?.name ?? null,
        error?.message ?? null,
        outcome.status === 'retry' ? outcome.readyAt : null,
      ],
    )) as { ok: boolean; run?: unknown; index?: unknown };
    if (raw.ok) {
      const run = toRun(raw.run);
      return raw.index === undefined ? { ok: true, run } : { ok: true, run, index: toIndex(raw.index) };
    }
    return raw.run === undefined ? { ok: false } : { ok: false, run: toRun(raw.run) };
  }

  async recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]> {
    return toRuns(
      await this.#calls.alone('recover_expired_runs($1::bigint, $2::integer, $3::text, $4::text)', [
        input.now,
        input.limit,
        LEASE_EXPIRED_ERROR.name,
        LEASE_EXPIRED_ERROR.message,
      ]),
    );
  }

  async expirePendingRuns(input: ExpireInput): Promise<ExpirePendingRunsResult> {
    const raw = (await this.#calls.alone('expire_pending_runs($1::bigint, $2::integer, $3::text, $4::text)', [
      input.now,
      input.limit,
      PENDING_TIMEOUT_ERROR.name,
      PENDING_TIMEOUT_ERROR.message,
    ])) as { runs: unknown; nextAt: number | null };
    const runs = toRuns(raw.runs);
    return raw.nextAt === null ? { runs } : { runs, nextAt: raw.nextAt };
  }

  async deleteExpiredRuns(input: ExpireInput): Promise<number> {
    return Number(await this.#calls.alone('delete_expired_runs($1::bigint, $2::integer)', [input.now, input.limit]));
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const raw = await this.#db.value(`SELECT ${this.#s}.run_json(r) AS result FROM ${this.#s}.runs r WHERE r.id = $1`, [id]);
    return raw === undefined ? undefined : toRun(raw);
  }

  async listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]> {
    const rows = await this.#db.rows(
      `SELECT ${this.#s}.run_json(r) AS result FROM ${this.#s}.runs r
       WHERE r.job_name = $1 AND ($2::text[] IS NULL OR r.status = ANY ($2::text[]))
       ORDER BY r.created_at DESC, r.scheduled_at DESC, r.id DESC
       LIMIT $3`,
      [query.jobName, query.statuses === undefined ? null : [...query.statuses], query.limit ?? null],
    );
    return rows.map((row) => toRun(row.result));
  }

  async listRunsOfJobs(query: ListRunsOfJobsQuery): Promise<readonly RunRecord[]> {
    const names = [...new Set(query.jobNames)];
    if (names.length === 0) return [];
    // One statement, grouped in the order asked for.
    const rows = await this.#db.rows(
      `SELECT ${this.#s}.run_json(r) AS result FROM ${this.#s}.runs r
       JOIN unnest($1::text[]) WITH ORDINALITY AS j(name, position) ON r.job_name = j.name
       WHERE $2::text[] IS NULL OR r.status = ANY ($2::text[])
       ORDER BY j.position, r.created_at DESC, r.scheduled_at DESC, r.id DESC`,
      [names, query.statuses === undefined ? null : [...query.statuses]],
    );
    return rows.map((row) => toRun(row.result));
  }

  async listIndices(runId: string): Promise<readonly IndexRecord[]> {
    const rows = await this.#db.rows(
      `SELECT ${this.#s}.index_json(i) AS result FROM ${this.#s}.run_indices i WHERE i.run_id = $1 ORDER BY i.idx`,
      [runId],
    );
    return rows.map((row) => toIndex(row.result));
  }

  /**
   * Notifications arrive over LISTEN/NOTIFY on a dedicated connection (a node-postgres
   * pool's, reconnected after errors) or PGlite's `listen()`. With any other client
   * nothing arrives, and the scheduler relies on polling.
   */
  watch(listener: (notification: StoreNotification) => void): () => void {
    return this.#listener.watch(listener);
  }

  /**
   * The identity of the schema's data: when its first migration was applied, in
   * microseconds. A schema dropped and migrated again has a new one; a dump restored
   * elsewhere keeps it (no migration of its own: the migrations table has it).
   */
  async identity(): Promise<string | undefined> {
    const identity = await this.#db.value(
      `SELECT (extract(epoch FROM min(applied_at)) * 1000000)::bigint::text AS result FROM ${this.#s}.schema_migrations`,
    );
    return typeof identity === 'string' ? identity : undefined;
  }

  /**
   * Sends a marker on the channel and waits for it to come back on the LISTEN session:
   * notifications reach a listener in commit order, so every notification of a call
   * that has resolved arrived before it.
   */
  flushNotifications(): Promise<void> {
    return this.#flush.flush();
  }
}
