/**
 * PostgresStore against the reference MemoryStore, on random sequences of contract calls.
 * TW_DIFF_RUNS sets how many sequences, TW_DIFF_SEED replays or varies them.
 */
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { assertBehavesLikeMemoryStore } from './differential.js';
import { DATABASE_URL, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('postgres');
const runs = Number(process.env.TW_DIFF_RUNS ?? 32);
const seed = process.env.TW_DIFF_SEED === undefined ? undefined : Number(process.env.TW_DIFF_SEED);
const timeout = Math.max(180_000, runs * 3_000);

describe.skipIf(!up)('PostgresStore behaves like MemoryStore', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  afterAll(() => pool.end());

  it('gives the same results for random sequences of operations', async () => {
    const schemas = new Map<PostgresStore, string>();
    await assertBehavesLikeMemoryStore({
      createStore: () => {
        const schema = uniqueNamespace('twd');
        const store = new PostgresStore({ pool, schema });
        schemas.set(store, schema);
        return store;
      },
      destroyStore: async (store) => {
        await store.close();
        await pool.query(`DROP SCHEMA IF EXISTS "${schemas.get(store as PostgresStore)}" CASCADE`);
      },
      numRuns: runs,
      seed,
      timeLimitMs: timeout - 10_000,
    });
  }, timeout);
});
