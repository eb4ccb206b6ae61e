import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { PostgresLock, PostgresStore } from '../../adapters/postgres/index.js';
import { Database } from '../../adapters/postgres/database.js';
import { MIGRATIONS } from '../../adapters/postgres/migrations.js';
import { ValidationError } from '../../src/errors.js';
import type { JobSpec, JsonValue, Store, StoreNotification, UpsertJobInput, UpsertJobResult } from '../../src/store.js';
import { storeConformance } from '../../src/testing/conformance/index.js';
import { DATABASE_URL, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('postgres');
const T0 = Date.UTC(2026, 0, 1);

/** One job through the batch method. */
async function upsertJob(store: Store, input: UpsertJobInput): Promise<UpsertJobResult> {
  return (await store.upsertJobs([input]))[0]!;
}

describe.skipIf(!up)('PostgresStore on a real server', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
  pool.on('error', () => {});
  afterAll(() => pool.end());

  const dropSchema = (schema: string) => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);

  /** A store on the shared pool in a schema of its own, dropped after `test`. */
  async function withStore(test: (store: PostgresStore, schema: string) => Promise<void>): Promise<void> {
    const schema = uniqueNamespace('tw');
    const store = new PostgresStore({ pool, schema });
    try {
      await store.init();
      await test(store, schema);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  }

  storeConformance('PostgresStore', {
    describe,
    it,
    expect,
    createStore: () => new PostgresStore({ pool, schema: uniqueNamespace('tw') }),
    destroyStore: async (store) => {
      await store.close();
      await dropSchema((store as PostgresStore).schema);
    },
  });

  describe('options', () => {
    it('rejects a schema name that is not a plain identifier, naming the field and the value', () => {
      for (const schema of ['a"; drop table x; --', 'Upper', '1abc', '', 'a'.repeat(64), 'a-b']) {
        const attempt = () => new PostgresStore({ pool, schema });
        expect(attempt).toThrow(ValidationError);
        expect(attempt).toThrow(/schema/);
      }
      expect(() => new PostgresStore({ pool, schema: 'a"; drop' })).toThrow(/"a\\"; drop"/);
      expect(() => new PostgresLock({ pool, schema: 'x y' })).toThrow(ValidationError);
    });

    it('wants exactly one of pool and connectionString, and never shows a password', () => {
      const both = { pool, connectionString: 'postgres://u:secret@host/db' } as never;
      expect(() => new PostgresStore(both)).toThrow(ValidationError);
      expect(() => new PostgresStore(both)).toThrow(/connectionString/);
      expect(() => new PostgresStore(both)).not.toThrow(/secret/);
      expect(() => new PostgresStore({} as never)).toThrow(/exactly one of pool and connectionString/);
      expect(() => new PostgresStore({ pool: {} as never })).toThrow(/pool/);
    });
  });

  describe('migrations', () => {
    it('lets several instances start at once and records each migration once', async () => {
      const schema = uniqueNamespace('tw');
      const stores = Array.from({ length: 5 }, () => new PostgresStore({ pool, schema }));
      try {
        await Promise.all(stores.map((store) => store.init()));
        await Promise.all(stores.map((store) => store.init()));
        const { rows } = await pool.query(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
        expect(rows.map((row: { version: number }) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
        const { job } = await upsertJob(stores[0]!, {
          spec: { name: 'a', schedule: { kind: 'every', everyMs: 1000 }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 1, failed: 1 } },
          now: T0,
          initialCursor: T0,
        });
        expect(await stores[4]!.getJob('a')).toEqual(job);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await dropSchema(schema);
      }
    });

    it('migrates on first use without an explicit init()', async () => {
      const schema = uniqueNamespace('tw');
      const store = new PostgresStore({ pool, schema });
      try {
        expect(await store.listJobs()).toEqual([]);
        expect(await store.lock().acquire({ name: 'x', owner: 'o', now: T0, leaseUntil: T0 + 1 })).toMatchObject({ token: 1 });
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });
  });

  describe('connections', () => {
    it('leaves a user pool open after close()', () =>
      withStore(async (store) => {
        store.watch(() => {});
        await store.close();
        expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      }));

    it('opens and ends its own pool from a connection string', async () => {
      const schema = uniqueNamespace('tw');
      const store = new PostgresStore({ connectionString: DATABASE_URL, schema });
      try {
        const seen: StoreNotification[] = [];
        store.watch((n) => seen.push(n));
        await vi.waitFor(async () => {
          await upsertJob(store, {
            spec: { name: 'a', schedule: { kind: 'at', at: T0 }, timezone: 'UTC', concurrencyPolicy: 'Forbid', history: { succeeded: 1, failed: 1 } },
            now: T0,
            initialCursor: T0,
          });
          expect(seen).toContainEqual({ type: 'job-changed', jobName: 'a' });
        }, { timeout: 5_000, interval: 50 });
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('keeps its own pool\'s idle connection past a heartbeat (10 s by default) instead of connecting again each heartbeat', async () => {
      const database = new Database({ connectionString: DATABASE_URL, schema: uniqueNamespace('tw') });
      const backend = async (): Promise<number> => ((await (await database.pool()).query('SELECT pg_backend_pid() AS pid')) as { rows: { pid: number }[] }).rows[0]!.pid;
      // The pool's idle timer is a setTimeout: a fake one, so the test need not wait.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        const first = await backend();
        await vi.advanceTimersByTimeAsync(15_000);
        expect(await backend()).toBe(first);
      } finally {
        vi.useRealTimers();
        await database.close();
      }
    });
  });

  describe('data', () => {
    const values: [string, JsonValue][] = [
      ['a string', 'hello "world"'],
      ['a string that looks like JSON', '{"a":1}'],
      ['a number', 42.5],
      ['zero', 0],
      ['false', false],
      ['null', null],
      ['a nested object', { b: [1, 'two', null, { c: true }], a: { z: 1, y: -2.5e-7 }, '': '\u0000 ünïcode 🎉' }],
      ['an array', [[], {}, '', 0]],
    ];
    it.each(values)('round-trips %s exactly', (_label, data) =>
      withStore(async (store) => {
        await upsertJob(store, {
          spec: { name: 'a', schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 1, failed: 1 } },
          now: T0,
          initialCursor: T0,
        });
        const created = await store.createRun({ run: { id: 'a.manual.k', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0, data }, now: T0 });
        if (created.outcome === 'missing-job') throw new Error('setup');
        expect(created.run.data).toStrictEqual(data);
        const stored = await store.getRun('a.manual.k');
        expect(stored && 'data' in stored).toBe(true);
        expect(stored?.data).toStrictEqual(data);
        expect(JSON.stringify(stored?.data)).toBe(JSON.stringify(data));
      }),
    );

    it('keeps absent data absent', () =>
      withStore(async (store) => {
        await upsertJob(store, {
          spec: { name: 'a', schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow', history: { succeeded: 1, failed: 1 } },
          now: T0,
          initialCursor: T0,
        });
        await store.createRun({ run: { id: 'a.manual.k', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        const stored = await store.getRun('a.manual.k');
        expect(stored).toBeDefined();
        expect('data' in (stored ?? {})).toBe(false);
      }));
  });

  describe('batch upserts', () => {
    const spec = (i: number, version: 1 | 2): JobSpec => ({
      name: `job-${String(i).padStart(3, '0')}`,
      schedule: version === 1 ? { kind: 'every', everyMs: 1_000 + i } : { kind: 'cron', expression: `${i % 60} * * * *` },
      timezone: version === 1 ? 'UTC' : 'Europe/Paris',
      concurrencyPolicy: version === 1 ? 'Allow' : 'Forbid',
      ...(i % 3 === version ? { startingDeadlineMs: 5_000 } : {}),
      ...(i % 5 === version ? { fanOut: { completions: 4, parallelism: 2 }, retryLimit: 1 } : {}),
      ...(i % 7 === version ? { pendingTimeoutMs: 60_000 } : {}),
      history: i % 2 === version - 1 ? { succeeded: 3, failed: 2, ttlMs: 86_400_000 } : { succeeded: 1, failed: 1 },
    });
    // Even jobs exist (some suspended), odd ones are new; every input changes its job, and a
    // quarter set the suspend flag each way.
    const existing = Array.from({ length: 250 }, (_, k): UpsertJobInput => ({
      spec: spec(2 * k, 1),
      now: T0,
      initialCursor: T0,
      ...(k % 3 === 0 ? { suspended: true } : {}),
    }));
    const batch = Array.from({ length: 500 }, (_, i): UpsertJobInput => ({
      spec: spec(i, 2),
      now: T0 + 1_000,
      initialCursor: T0 + 1_000,
      ...(i % 4 === 0 ? { suspended: true } : i % 4 === 1 ? { suspended: false } : {}),
    }));

    it('writes 500 mixed new and existing jobs in one statement, as 500 single upserts do, notifying each', async () => {
      const schemas = [uniqueNamespace('tw'), uniqueNamespace('tw')];
      const statements: string[] = [];
      const counting = {
        query: (text: string, params?: unknown[]) => {
          statements.push(text);
          return pool.query(text, params);
        },
      };
      const batched = new PostgresStore({ pool: counting, schema: schemas[0]! });
      const single = new PostgresStore({ pool, schema: schemas[1]! });
      const watcher = new PostgresStore({ pool, schema: schemas[0]! });
      try {
        await Promise.all([batched.upsertJobs(existing), single.upsertJobs(existing)]);
        const seen = new Set<string>();
        watcher.watch((n) => {
          if (n.type === 'job-changed') seen.add(n.jobName);
        });
        await vi.waitFor(async () => {
          const { rows } = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE query = $1 AND state = 'idle'`, [
            `LISTEN "${watcher.channel}"`,
          ]);
          expect(rows).toHaveLength(1);
        }, { timeout: 5_000, interval: 20 });

        statements.length = 0;
        const results = await batched.upsertJobs(batch);
        expect(statements).toHaveLength(1);

        const singles: UpsertJobResult[] = [];
        for (const input of batch) singles.push(await upsertJob(single, input));
        expect(results).toEqual(singles);
        expect(results.filter((r) => r.created)).toHaveLength(250);
        expect(results.map((r) => r.job.name)).toEqual(batch.map((input) => input.spec.name));
        expect(await batched.listJobs()).toEqual(await single.listJobs());
        await vi.waitFor(() => expect(seen.size).toBe(500), { timeout: 5_000, interval: 20 });
      } finally {
        await Promise.all([batched.close(), single.close(), watcher.close()]);
        await Promise.all(schemas.map(dropSchema));
      }
    });

    it('writes a start (distinct names, no suspend flag) as one insert of every row, as the per-job path does', async () => {
      const schemas = [uniqueNamespace('tw'), uniqueNamespace('tw')];
      const [whole, perJob] = schemas.map((schema) => new PostgresStore({ pool, schema })) as [PostgresStore, PostgresStore];
      // With the window, jitter and maxRuns fields set on some, cleared on others; existing jobs keep their cursor,
      // creation time and suspend flag.
      const start = batch.map(({ spec: s }, i): UpsertJobInput => {
        const window = i % 3 === 0 ? { startAt: T0 + i, endAt: T0 + 86_400_000, jitterMs: i, maxRuns: i + 1 } : {};
        return { spec: { ...s, ...window }, now: T0 + 2_000, initialCursor: T0 + 2_000 + i };
      });
      try {
        for (const store of [whole, perJob]) {
          await store.upsertJobs(existing);
          await store.scheduleRun({ jobName: 'job-004', expectedCursor: T0, cursor: T0 + 60_000, now: T0 });
          await store.upsertJobs([{ ...(existing[5] as UpsertJobInput), spec: { ...(existing[5] as UpsertJobInput).spec, maxRuns: 3, jitterMs: 10 } }]);
        }
        const results = await whole.upsertJobs(start);
        // A name twice sends the batch through the per-job path (the later input wins): the last input again.
        const perJobResults = await perJob.upsertJobs([...start, start.at(-1) as UpsertJobInput]);
        expect(results).toEqual(perJobResults.slice(0, start.length));
        expect(results.filter((r) => r.created)).toHaveLength(250);
        expect(results.find((r) => r.job.name === 'job-004')?.job.cursor).toBe(T0 + 60_000);
        expect(results.find((r) => r.job.name === 'job-000')?.job).toMatchObject({ suspended: true, createdAt: T0, startAt: T0, maxRuns: 1 });
        expect(results.find((r) => r.job.name === 'job-010')?.job.maxRuns).toBeUndefined();
        expect(await whole.listJobs()).toEqual(await perJob.listJobs());
      } finally {
        await Promise.all([whole.close(), perJob.close()]);
        await Promise.all(schemas.map(dropSchema));
      }
    });
  });

  describe('notifications', () => {
    it('resumes after the LISTEN connection is killed', () =>
      withStore(async (store) => {
        const seen: StoreNotification[] = [];
        store.watch((n) => seen.push(n));
        const spec = (name: string) => ({
          spec: { name, schedule: { kind: 'cron' as const, expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy: 'Allow' as const, history: { succeeded: 1, failed: 1 } },
          now: T0,
          initialCursor: T0,
        });
        const sees = (name: string) => vi.waitFor(async () => {
          await upsertJob(store, spec(name));
          expect(seen).toContainEqual({ type: 'job-changed', jobName: name });
        }, { timeout: 10_000, interval: 100 });
        await sees('before');
        const { rows } = await pool.query(
          `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE query = $1`,
          [`LISTEN "${store.channel}"`],
        );
        expect(rows).toEqual([{ killed: true }]);
        await sees('after');
      }));
  });
});
