/**
 * Postgres at a million jobs: a schema holding 1,000,000 job rows and 1,000,000 runs
 * (one finished run per job, plus the runs the test makes), loaded with
 * `generate_series` (about 25 s on the 2-core development machine). Every statement
 * the store sends on its hot paths, and every statement inside the functions they
 * call, reaches `jobs` and `runs` through an index: the statements the store sent are
 * EXPLAINed with their own parameters (no `Seq Scan` on either table), and the
 * tables' sequential-scan counters (`pg_stat_xact_user_tables`, exact within one
 * transaction, which is rolled back) stay at zero, with the generic plans PL/pgSQL
 * caches per connection. Also: an instance that registers more jobs than
 * `findReadyRuns` sends inline polls without sending their names.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore, type Queryable } from '../../adapters/postgres/index.js';
import type { JobSpec } from '../../src/store.js';
import { DATABASE_URL, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('postgres');
const T0 = Date.UTC(2026, 0, 1);
const JOBS = 1_000_000;
const MINUTE = 60_000;
const name = (i: number): string => `job-${String(i).padStart(7, '0')}`;

function spec(jobName: string, history = { succeeded: 1, failed: 1 }): JobSpec {
  return { name: jobName, schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history };
}

interface Sent {
  readonly text: string;
  readonly params: unknown[] | undefined;
}

describe.skipIf(!up)('Postgres at a million jobs', () => {
  const schema = uniqueNamespace('tw_million');
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  admin.on('error', () => {});

  beforeAll(async () => {
    const store = new PostgresStore({ pool: admin, schema });
    await store.init();
    const s = `"${schema}"`;
    await admin.query(
      `INSERT INTO ${s}.jobs (name, schedule, timezone, concurrency_policy, history_succeeded, history_failed, created_at, cursor_at, kept_succeeded)
       SELECT 'job-' || lpad(g::text, 7, '0'), '{"kind":"cron","expression":"0 0 1 1 *"}', 'UTC', 'Allow', 1, 1, $1, $1, 1
       FROM generate_series(1, ${JOBS}) g`,
      [T0],
    );
    // One succeeded run per job: the history a year of yearly jobs leaves.
    await admin.query(
      `INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, started_at, finished_at)
       SELECT 'job-' || lpad(g::text, 7, '0') || '.' || ($1::bigint / 1000), 'job-' || lpad(g::text, 7, '0'), $1, 'schedule', 'succeeded', 1, $1, $1, $1, $1 + 1000
       FROM generate_series(1, ${JOBS}) g`,
      [T0],
    );
    await admin.query(`ANALYZE ${s}.jobs`);
    await admin.query(`ANALYZE ${s}.runs`);
    await store.close();
  }, 180_000);

  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('reaches jobs and runs only through indexes on every hot path (EXPLAIN, and no sequential scan inside the functions)', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const sent: Sent[] = [];
    const recording: Queryable = {
      query: (text: string, params?: unknown[]) => {
        sent.push({ text, params });
        return client.query(text, params);
      },
    };
    const store = new PostgresStore({ pool: recording, schema });
    const lock = store.lock();
    const seqScans = async (): Promise<Record<string, number>> => {
      const { rows } = await client.query<{ relname: string; n: number }>(
        `SELECT relname, seq_scan::integer AS n FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname IN ('jobs', 'runs', 'run_indices')`,
        [schema],
      );
      return Object.fromEntries(rows.map((row) => [row.relname, row.n]));
    };
    try {
      await store.init();
      sent.length = 0;
      await client.query('BEGIN');
      // The plans a pool's long-lived connections settle on for the functions' statements.
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      const before = await seqScans();
      const now = T0 + 10 * MINUTE;
      // A start: unchanged and new jobs upserted, the planner's lease, pages of the listing.
      await store.upsertJobs([
        { spec: spec(name(500_000)), now, initialCursor: now },
        { spec: spec('zz-new'), now, initialCursor: now },
      ]);
      const lease = await lock.acquire({ name: 'planner', owner: 'me', now, leaseUntil: now + 30_000 });
      expect(lease).toBeDefined();
      expect(await lock.renew({ name: 'planner', owner: 'me', token: lease!.token, now, leaseUntil: now + 30_000 })).toBe(true);
      expect((await store.listJobs({ limit: 100 })).map((job) => job.name)).toEqual(Array.from({ length: 100 }, (_, i) => name(i + 1)));
      expect((await store.listJobs({ after: name(999_950), limit: 100 })).map((job) => job.name)).toHaveLength(51);
      expect(await store.getJob(name(123_456))).toMatchObject({ name: name(123_456) });
      // A tick: a run scheduled ahead, a manual run, each claimed, renewed and finished (pruning the history).
      const job = name(500_000);
      const tick = T0 + 11 * MINUTE;
      const scheduled = await store.scheduleRun({
        jobName: job,
        expectedCursor: T0, // an existing job's upsert keeps its cursor
        cursor: tick,
        now,
        run: { id: `${job}.${tick / 1000}`, jobName: job, scheduledAt: tick, trigger: 'schedule', readyAt: tick },
      });
      expect(scheduled.outcome).toBe('created');
      const manual = await store.createRun({ run: { id: `${job}.manual.k`, jobName: job, scheduledAt: now, trigger: 'manual', readyAt: now }, now });
      expect(manual.outcome).toBe('created');
      const names = new Set([job, name(7), 'zz-new']);
      expect((await store.findReadyRuns({ jobNames: names, now: tick, limit: 100 })).runs.map((run) => run.id)).toEqual([`${job}.manual.k`, `${job}.${tick / 1000}`]);
      const many = new Set(Array.from({ length: 2_000 }, (_, i) => name(499_000 + i)));
      expect((await store.findReadyRuns({ jobNames: many, now: tick, limit: 100 })).runs).toHaveLength(2);
      for (const id of [`${job}.manual.k`, `${job}.${tick / 1000}`]) {
        const claim = await store.claimRun({ runId: id, owner: 'me', now: tick, leaseUntil: tick + 30_000 });
        expect(claim).toBeDefined();
        const { fence } = claim!.run;
        expect(await store.renewLease({ runId: id, owner: 'me', fence, now: tick, leaseUntil: tick + 30_000 })).toEqual({ ok: true });
        expect(await store.finishAttempt({ runId: id, owner: 'me', fence, now: tick + 1, outcome: { status: 'succeeded' } })).toMatchObject({ ok: true });
      }
      // Housekeeping, listing and job edits.
      await store.recoverExpiredRuns({ now: tick, limit: 1_000 });
      await store.expirePendingRuns({ now: tick, limit: 1_000 });
      await store.deleteExpiredRuns({ now: tick, limit: 1_000 });
      expect(await store.listRuns({ jobName: job, limit: 10 })).toHaveLength(1); // history 1: the older runs were pruned
      expect(await store.getRun(`${job}.manual.k`)).toBeUndefined();
      await store.setSuspended({ name: name(42), suspended: true, now: tick });
      expect(await seqScans()).toEqual(before);
      // Each statement the store sent, planned as it was sent.
      const plans: string[] = [];
      for (const { text, params } of sent) {
        if (/^\s*(BEGIN|SET|DO|SELECT relname)/.test(text)) continue; // the transaction, the migrations (a DO block), the counters
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
        plans.push(`${text.replace(/\s+/g, ' ').slice(0, 160)}\n${rows.map((row) => row['QUERY PLAN']).join('\n')}`);
      }
      expect(plans.length).toBeGreaterThan(15);
      expect(plans.filter((plan) => /Seq Scan on (jobs|runs)\b/.test(plan))).toEqual([]);
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      await store.close();
      await client.end();
    }
  }, 60_000);

  it('polls for ready runs without sending the names of the jobs it registered when they are many', async () => {
    const sent: Sent[] = [];
    const recording: Queryable = {
      query: (text: string, params?: unknown[]) => {
        sent.push({ text, params });
        return admin.query(text, params);
      },
    };
    const store = new PostgresStore({ pool: recording, schema });
    const now = T0 + 20 * MINUTE;
    const client = await admin.connect();
    try {
      await store.init();
      // Runs of three registered jobs (one ready later) and of a job this instance does not handle.
      const ready = [name(10), name(20)];
      for (const job of [...ready, name(30), name(999_999)]) {
        const at = job === name(30) ? now + MINUTE : now;
        await store.createRun({ run: { id: `${job}.manual.poll`, jobName: job, scheduledAt: at, trigger: 'manual', readyAt: at }, now: at });
      }
      const registered = new Set(Array.from({ length: 5_000 }, (_, i) => name(i + 1)));
      sent.length = 0;
      const found = await store.findReadyRuns({ jobNames: registered, now, limit: 100 });
      expect(found).toMatchObject({ runs: ready.map((job) => ({ id: `${job}.manual.poll` })), nextReadyAt: now + MINUTE });
      // Only the names of the two registered jobs that have ready runs went to the server.
      const largestArray = Math.max(0, ...sent.flatMap(({ params }) => (params ?? []).map((p) => (Array.isArray(p) ? p.length : 0))));
      expect(largestArray).toBe(2);
      // The same answer as with the names sent: a registered set small enough to go inline.
      expect(found).toEqual(await store.findReadyRuns({ jobNames: new Set([name(10), name(20), name(30)]), now, limit: 100 }));
      // While nothing is claimable for them, one small query and no names at all.
      expect(await store.findReadyRuns({ jobNames: new Set(Array.from({ length: 5_000 }, (_, i) => name(500_000 + i))), now, limit: 100 })).toEqual({ runs: [] });
    } finally {
      await client.query(`DELETE FROM "${schema}".runs WHERE id LIKE '%.manual.poll'`);
      client.release();
      await store.close();
    }
  });
});
