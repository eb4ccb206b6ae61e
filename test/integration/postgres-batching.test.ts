/**
 * PostgresStore's call batching on a real server and on PGlite: concurrent calls of
 * one function travel as one statement, each function still runs whole and sees the
 * writes of the calls before it in that statement, and one failing call fails only
 * its own caller.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore, type Queryable } from '../../adapters/postgres/index.js';
import type { Store } from '../../src/store.js';
import { DATABASE_URL, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('postgres');
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

/** A client that records each statement's text and parameters (the store's migration statement aside). */
function counting(client: Queryable): { pool: Queryable; statements: string[]; params: unknown[][] } {
  const statements: string[] = [];
  const params: unknown[][] = [];
  return {
    statements,
    params,
    pool: {
      query: (text: string, values?: unknown[]) => {
        if (text.startsWith('SELECT')) {
          statements.push(text);
          params.push(values ?? []);
        }
        return client.query(text, values);
      },
    },
  };
}

async function addJob(store: Store, name: string): Promise<void> {
  await store.upsertJobs([
    {
      spec: { name, schedule: { kind: 'cron', expression: '0 0 1 1 *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 2, failed: 2 } },
      now: T0,
      initialCursor: T0,
    },
  ]);
}

const newRun = (id: string, jobName = 'a') => ({ run: { id, jobName, scheduledAt: T0, trigger: 'manual' as const, readyAt: T0 }, now: T0 });
const claim = (runId: string, owner: string) => ({ runId, owner, now: T0, leaseUntil: T0 + MINUTE });

function batchingSuite(name: string, client: () => Queryable, drop: (schema: string) => Promise<unknown>): void {
  describe(name, () => {
    async function withStore(test: (store: PostgresStore, statements: string[], params: unknown[][]) => Promise<void>): Promise<void> {
      const { pool, statements, params } = counting(client());
      const store = new PostgresStore({ pool, schema: uniqueNamespace('twb') });
      try {
        await store.init();
        await addJob(store, 'a');
        statements.length = 0;
        params.length = 0;
        await test(store, statements, params);
      } finally {
        await store.close();
        await drop(store.schema);
      }
    }

    it('sends concurrent calls of one function as one statement, each seeing the writes of the calls before it', () =>
      withStore(async (store, statements) => {
        // The same run created twice, another once: created, exists, created.
        const created = await Promise.all([store.createRun(newRun('a.manual.1')), store.createRun(newRun('a.manual.1')), store.createRun(newRun('a.manual.2'))]);
        expect(created.map((result) => result.outcome)).toEqual(['created', 'exists', 'created']);
        expect(statements).toHaveLength(1);
        expect(statements[0]).toMatch(/create_run\(\$1::text.* AS r0, .*create_run\(\$8::text.* AS r1, .*create_run\(\$15::text.* AS r2$/);

        // Two owners race for a run in one statement: the first call claims it, the second sees it claimed.
        statements.length = 0;
        const [first, second, other] = await Promise.all([
          store.claimRun(claim('a.manual.1', 'p')),
          store.claimRun(claim('a.manual.1', 'q')),
          store.claimRun(claim('a.manual.2', 'p')),
        ]);
        expect(statements).toHaveLength(1);
        expect(first?.run).toMatchObject({ id: 'a.manual.1', status: 'running', owner: 'p', fence: 1 });
        expect(second).toBeUndefined();
        expect(other?.run).toMatchObject({ id: 'a.manual.2', owner: 'p' });

        // Finished twice under the same lease: the second finish is fenced out by the first.
        statements.length = 0;
        const lease = { runId: 'a.manual.1', owner: 'p', fence: first!.run.fence, now: T0 + 1 };
        const [done, again] = await Promise.all([
          store.finishAttempt({ ...lease, outcome: { status: 'succeeded' } }),
          store.finishAttempt({ ...lease, outcome: { status: 'failed', error: { name: 'E', message: 'late' } } }),
        ]);
        expect(statements).toHaveLength(1);
        expect(done).toMatchObject({ ok: true, run: { status: 'succeeded' } });
        expect(again).toMatchObject({ ok: false, run: { status: 'succeeded' } });
        expect((await store.getJob('a'))?.succeeded).toBe(1);
        expect((await store.getJob('a'))?.failed).toBe(0);
      }));

    it('runs the functions of a statement in run-ID order, whatever order the calls came in', () =>
      withStore(async (store, statements, params) => {
        await addJob(store, 'b');
        statements.length = 0;
        params.length = 0;
        const results = await Promise.all([store.createRun(newRun('b.manual.1', 'b')), store.createRun(newRun('a.manual.1'))]);
        expect(results.map((result) => result.outcome === 'created' && result.run.id)).toEqual(['b.manual.1', 'a.manual.1']);
        expect(statements).toHaveLength(1);
        // Seven parameters per create_run call: a's call comes first.
        expect([params[0]![0], params[0]![7]]).toEqual(['a.manual.1', 'b.manual.1']);
      }));

    it('re-sends each call alone when a statement fails, so only the bad call fails', () =>
      withStore(async (store, statements) => {
        const results = await Promise.allSettled([
          store.createRun(newRun('a.manual.1')),
          store.createRun({ run: { id: null as never, jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 }),
          store.createRun(newRun('a.manual.2')),
        ]);
        expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect(results[0]).toMatchObject({ value: { outcome: 'created', run: { id: 'a.manual.1' } } });
        expect(results[2]).toMatchObject({ value: { outcome: 'created', run: { id: 'a.manual.2' } } });
        expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23502' });
        // One statement of three calls, rolled back, then each call alone.
        expect(statements.filter((text) => text.includes('create_run')).map((text) => text.split(' AS r').length - 1)).toEqual([3, 1, 1, 1]);
        expect((await store.listRuns({ jobName: 'a' })).map((run) => run.id).sort()).toEqual(['a.manual.1', 'a.manual.2']);
      }));

    it('sends a lone call in a statement of its own', () =>
      withStore(async (store, statements) => {
        expect((await store.createRun(newRun('a.manual.1'))).outcome).toBe('created');
        expect(await store.claimRun(claim('a.manual.1', 'p'))).toBeDefined();
        expect(statements.map((text) => text.split(' AS r').length - 1)).toEqual([1, 1]);
      }));
  });
}

describe.skipIf(!up)('PostgresStore batching on a real server', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  afterAll(() => pool.end());
  batchingSuite('pg', () => pool, (schema) => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
});

describe('PostgresStore batching on PGlite', () => {
  const shared = new PGlite();
  afterAll(() => shared.close());
  batchingSuite('PGlite', () => shared, (schema) => shared.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
});
