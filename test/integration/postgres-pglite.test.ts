/**
 * The Postgres store on PGlite (embedded Postgres in WebAssembly): the same
 * conformance suite as on the real server, through PGlite's `query()` and `listen()`.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { MIGRATIONS } from '../../adapters/postgres/migrations.js';
import { storeConformance } from '../../src/testing/conformance/index.js';
import { uniqueNamespace } from './servers.js';

// Booting PGlite takes seconds, so the conformance tests share one instance and
// each gets a schema of its own, exactly as they share one server.
const shared = new PGlite();
afterAll(() => shared.close());

storeConformance('PostgresStore on PGlite', {
    describe,
    it,
    expect,
  createStore: () => new PostgresStore({ pool: shared, schema: uniqueNamespace('tw') }),
  destroyStore: async (store) => {
    await store.close();
    await shared.query(`DROP SCHEMA "${(store as PostgresStore).schema}" CASCADE`);
  },
});

describe('PostgresStore on PGlite', () => {
  it('migrates a fresh database once under racing stores and leaves the client open after close()', async () => {
    const db = new PGlite();
    try {
      const stores = Array.from({ length: 3 }, () => new PostgresStore({ pool: db }));
      await Promise.all(stores.map((store) => store.init()));
      const { rows } = await db.query<{ version: number }>('SELECT version FROM tickwork.schema_migrations ORDER BY version');
      expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
      stores[0]!.watch(() => {});
      await Promise.all(stores.map((store) => store.close()));
      expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });
});
