/**
 * The per-run hot path (create_run, claim_run, finish_attempt with history pruning)
 * reaches `runs` and `run_indices` through indexes only, even with the plans
 * PL/pgSQL caches per connection: generic plans built while the table was nearly
 * empty and kept as it grew (what a pool's long-lived connections do). Counted with
 * `pg_stat_xact_user_tables` inside one transaction on one session, so the numbers
 * are exact and nothing has to be flushed; the transaction is rolled back.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore, type Queryable } from '../../adapters/postgres/index.js';
import { DATABASE_URL, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('postgres');
const T0 = Date.UTC(2026, 0, 1);
/** Runs created between the first cycles and the counted ones: a table of some hundred pages. */
const BULK = 5_000;
/** Counted create-claim-finish cycles; every one prunes (history limits of 1). */
const CYCLES = 20;

/** The job `a`, keeping one succeeded and one failed run. */
async function createJob(store: PostgresStore): Promise<void> {
  await store.upsertJobs([
    {
      spec: { name: 'a', schedule: { kind: 'every', everyMs: 1000 }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 1, failed: 1 } },
      now: T0,
      initialCursor: T0,
    },
  ]);
}

interface SeqScans {
  readonly runs: number;
  readonly runIndices: number;
}

/**
 * Sequential scans of `runs` and `run_indices` by {@link CYCLES} cycles that each create,
 * claim and finish a run of job `a` (succeeded and failed in turn), on one session
 * (`db`), after the same cycles cached their generic plans on a nearly empty table and
 * {@link BULK} pending runs were added.
 */
async function seqScansOfFinishes(db: Queryable, schema: string): Promise<SeqScans> {
  const s = `"${schema}"`;
  const cycle = async (i: number): Promise<void> => {
    const id = `a.${String(i).padStart(4, '0')}`;
    const now = T0 + i;
    await db.query(`SELECT ${s}.create_run($1, 'a', $2, 'manual', NULL, $2, $2)`, [id, now]);
    const claimed = await db.query(`SELECT ${s}.claim_run($1, 'w', $2, $3, NULL) AS r`, [id, now, now + 60_000]);
    const { fence } = (claimed.rows[0] as { r: { run: { fence: number } } }).r.run;
    const status = i % 2 === 0 ? 'succeeded' : 'failed';
    const error = status === 'failed' ? 'Error' : null;
    await db.query(`SELECT ${s}.finish_attempt($1, NULL, 'w', $2, $3, $4, $5, $5, NULL)`, [id, fence, now, status, error]);
  };
  const counts = async (): Promise<SeqScans> => {
    const { rows } = await db.query(
      `SELECT relname, seq_scan::integer AS n FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname IN ('runs', 'run_indices')`,
      [schema],
    );
    const n = (name: string): number => (rows as { relname: string; n: number }[]).find((row) => row.relname === name)?.n ?? 0;
    return { runs: n('runs'), runIndices: n('run_indices') };
  };
  await db.query('BEGIN');
  try {
    // Generic plans from the first use on: what a connection settles on after five calls.
    await db.query('SET LOCAL plan_cache_mode = force_generic_plan');
    for (let i = 0; i < 4; i += 1) await cycle(i);
    await db.query(`SELECT count(${s}.create_run('a.bulk.' || g, 'a', $1, 'manual', NULL, $1, $1)) FROM generate_series(1, ${BULK}) g`, [T0]);
    const before = await counts();
    for (let i = 4; i < 4 + CYCLES; i += 1) await cycle(i);
    const after = await counts();
    return { runs: after.runs - before.runs, runIndices: after.runIndices - before.runIndices };
  } finally {
    await db.query('ROLLBACK');
  }
}

describe.skipIf(!up)('Postgres hot-path plans on a real server', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  afterAll(() => pool.end());

  it('creates, claims, finishes and prunes without a sequential scan of runs or run_indices', async () => {
    const schema = uniqueNamespace('tw');
    const store = new PostgresStore({ pool, schema });
    const client = await pool.connect();
    try {
      await createJob(store);
      expect(await seqScansOfFinishes(client, schema)).toEqual({ runs: 0, runIndices: 0 });
    } finally {
      client.release();
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

describe('Postgres hot-path plans on PGlite', () => {
  it('creates, claims, finishes and prunes without a sequential scan of runs or run_indices', async () => {
    const db = new PGlite();
    try {
      const store = new PostgresStore({ pool: db, schema: 'tw' });
      await createJob(store);
      expect(await seqScansOfFinishes(db, 'tw')).toEqual({ runs: 0, runIndices: 0 });
      await store.close();
    } finally {
      await db.close();
    }
  });
});
