/**
 * The Postgres schema is frozen per migration, and code and migrations agree:
 * - each migration's text (and name) has the checksum committed below, so an edit
 *   to a committed migration fails here (add a migration instead);
 * - a freshly migrated schema's catalog (tables, columns, constraints, indexes,
 *   function signatures and bodies) matches the committed `adapters/postgres/schema.txt`;
 * - every function the store calls exists with the argument types it passes;
 * - a schema built by other migrations (the pre-release ones of 0.1.0) is refused
 *   with a clear error and left untouched, while versions newer than the code's are
 *   left alone (a newer instance migrated the schema).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { MIGRATIONS } from '../../adapters/postgres/migrations.js';
import { sqlNames } from '../../adapters/postgres/sql.js';
import { catalogDump } from './postgres-catalog.js';
import { DATABASE_URL, requireServer, uniqueNamespace } from './servers.js';

/** sha256 of `name + '\n' + sql` for the schema `tickwork`, one per migration. Append only. */
const FROZEN: Record<number, string> = {
  1: '6da47c3d39e2a0efd9cc1ce92855356d4d5e72e4a1223613961a4c421b966979',
  2: 'ff5082708a553583f7cf56bdbcdab3be246270d469e5c46d100cf4a7585f4725',
  3: '407ff42fa5935781d5d4eb07d45523ace2bd9e84c7b1eaaff59249d20dc6542a',
  4: '9106cebf2e864a9e8b4512572464e7c977fea5bd6c0291bbd0ad97c2202bb48b',
  5: '6abbd4583654520702995695a0681a7528c6bb0b01eefbbe2fd72d3500e8eb74',
};

/** The names and versions the seven pre-release migrations of 0.1.0 recorded. */
const PRE_RELEASE = [
  [1, 'tables and indexes'],
  [2, 'store functions'],
  [3, 'fan-out, pending timeout, history TTL and pruning indexes'],
  [4, 'store functions for fan-out, pending timeout, history TTL and bounded pruning'],
  [5, 'batch job upserts'],
  [6, 'history pruning by primary key'],
  [7, 'runs created ahead of their tick'],
] as const;

describe('Postgres migrations are frozen', () => {
  it('keeps the committed checksum of every migration, numbered 1, 2, 3, ...', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    for (const m of MIGRATIONS) {
      const sum = createHash('sha256').update(`${m.name}\n${m.sql(sqlNames('tickwork'))}`).digest('hex');
      expect(sum, `migration ${m.version} (${m.name}) changed: committed migrations are frozen, add a new one`).toBe(
        FROZEN[m.version],
      );
    }
  });
});

const up = await requireServer('postgres');

describe.skipIf(!up)('Postgres schema on a real server', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  afterAll(() => pool.end());
  const dropSchema = (schema: string) => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);

  async function migrated<T>(test: (schema: string) => Promise<T>): Promise<T> {
    const schema = uniqueNamespace('tw_schema');
    const store = new PostgresStore({ pool, schema });
    try {
      await store.init();
      return await test(schema);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  }

  it('builds the catalog committed in adapters/postgres/schema.txt (update: vitest -u)', async () => {
    const dump = await migrated((schema) => catalogDump(pool, schema));
    await expect(dump).toMatchFileSnapshot('../../adapters/postgres/schema.txt');
  });

  it('has every function the store calls, with the argument types it passes', async () => {
    const dump = await migrated((schema) => catalogDump(pool, schema));
    const declared = new Map<string, string[]>();
    for (const [, name, args] of dump.matchAll(/^function (\w+)\((.*?)\) returns/gm)) {
      const types = args!.split(', ').filter((arg) => !arg.startsWith('OUT ')).map((arg) => arg.split(' ').at(-1)!);
      declared.set(`${name}(${types.join(', ')})`, types);
    }
    const source = readFileSync(new URL('../../adapters/postgres/postgres-store.ts', import.meta.url), 'utf8');
    const calls = [...source.matchAll(/'(\w+)\(((?:\$\d+::\w+(?:, )?)+)\)'/g)].map(
      ([, name, args]) => `${name}(${[...args!.matchAll(/::(\w+)/g)].map((m) => m[1]).join(', ')})`,
    );
    expect(calls.length).toBeGreaterThanOrEqual(12);
    for (const call of calls) expect([...declared.keys()], `the store calls ${call}`).toContain(call);
  });

  it('refuses a schema built by the pre-release migrations, naming it and the fix, and writes nothing', async () => {
    const schema = uniqueNamespace('tw_schema');
    await pool.query(`CREATE SCHEMA "${schema}"`);
    try {
      await pool.query(
        `CREATE TABLE "${schema}".schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      for (const [version, name] of PRE_RELEASE) {
        await pool.query(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, $2)`, [version, name]);
      }
      const store = new PostgresStore({ pool, schema });
      try {
        const attempt = store.init();
        await expect(attempt).rejects.toThrow(`schema ${schema} records migration 1 as "tables and indexes"`);
        await expect(attempt).rejects.toThrow(/pre-release tickwork 0\.1\.0.* cannot be upgraded in place: drop it \(DROP SCHEMA/);
        await expect(store.listJobs()).rejects.toThrow(/pre-release/);
      } finally {
        await store.close();
      }
      const { rows } = await pool.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
        [schema],
      );
      expect(rows).toEqual([{ table_name: 'schema_migrations' }]);
    } finally {
      await dropSchema(schema);
    }
  });

  it('leaves alone versions newer than its own (a newer instance migrated the schema)', async () => {
    await migrated(async (schema) => {
      await pool.query(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES (1000, 'from the future')`);
      const again = new PostgresStore({ pool, schema });
      try {
        await again.init();
        expect(await again.listJobs()).toEqual([]);
      } finally {
        await again.close();
      }
    });
  });
});
