/**
 * The three stores a scheduler-level test runs on: the memory store, and Redis and
 * Postgres on the real servers, each opened in a namespace of its own (a key
 * prefix, a schema) and emptied afterwards. `snapshot()` reads everything a store
 * holds, through the store contract and, for Redis and Postgres, raw from the
 * server too, so a test can prove that a call wrote nothing.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { MemoryStore } from '../../adapters/memory/index.js';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { RedisStore } from '../../adapters/redis/index.js';
import { expect } from 'vitest';
import { Scheduler } from '../../src/index.js';
import type { Store } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';
import { DATABASE_URL, REDIS_URL, deleteRedisKeys, redisKeyPattern, requireServer, uniqueNamespace } from './servers.js';

export type StoreKind = 'memory' | 'redis' | 'postgres';

export interface OpenedStore {
  readonly kind: StoreKind;
  readonly store: Store;
  /** Everything the store holds, as comparable text. */
  snapshot(): Promise<string>;
  /** Closes the store and deletes its namespace. */
  dispose(): Promise<void>;
  /** Loses everything the store holds, under it, as a Redis restarted empty or a dropped schema would (not the memory store). */
  wipe?(): Promise<void>;
}

export interface StoreUnderTest {
  readonly kind: StoreKind;
  /** False when the server is not reachable (outside CI, where that fails instead): `describe.skipIf(!up)`. */
  readonly up: boolean;
  open(): Promise<OpenedStore>;
}

const redisUp = await requireServer('redis');
const postgresUp = await requireServer('postgres');

/** Connections shared by every store a test file opens; closed by `closeServers()` in the file's `afterAll`. */
let redisAdmin: Redis | undefined;
let postgresPool: pg.Pool | undefined;

function admin(): Redis {
  redisAdmin ??= new Redis(REDIS_URL);
  return redisAdmin;
}

function pool(): pg.Pool {
  if (postgresPool === undefined) {
    postgresPool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
    postgresPool.on('error', () => {});
  }
  return postgresPool;
}

export async function closeServers(): Promise<void> {
  await redisAdmin?.quit();
  await postgresPool?.end();
  redisAdmin = undefined;
  postgresPool = undefined;
}

/** The store's own view: every job, and every run and index record of each. */
async function contractSnapshot(store: Store): Promise<string> {
  const jobs = await store.listJobs();
  const runs = await Promise.all(jobs.map((job) => store.listRuns({ jobName: job.name, limit: 10_000 })));
  const indices = await Promise.all(runs.flat().map((run) => store.listIndices(run.id)));
  return JSON.stringify({ jobs, runs, indices });
}

export const EVERY_STORE: readonly StoreUnderTest[] = [
  {
    kind: 'memory',
    up: true,
    async open() {
      const store = new MemoryStore();
      return { kind: 'memory', store, snapshot: () => contractSnapshot(store), dispose: () => store.close() };
    },
  },
  {
    kind: 'redis',
    up: redisUp,
    async open() {
      const prefix = uniqueNamespace('tw');
      const store = new RedisStore({ url: REDIS_URL, prefix });
      const raw = async (): Promise<string> => {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, found] = await admin().scan(cursor, 'MATCH', redisKeyPattern(prefix), 'COUNT', 500);
          keys.push(...found);
          cursor = next;
        } while (cursor !== '0');
        keys.sort();
        const dumps = await Promise.all(keys.map((key) => admin().dumpBuffer(key)));
        return JSON.stringify(keys.map((key, i) => [key, dumps[i]?.toString('base64')]));
      };
      return {
        kind: 'redis',
        store,
        snapshot: async () => `${await contractSnapshot(store)}\n${await raw()}`,
        dispose: async () => {
          await store.close();
          await deleteRedisKeys(admin(), prefix);
        },
        // In one DEL, as a restart loses them: a scheduler told of its identity key's deletion (client tracking) would
        // write its jobs again while a deletion in batches went on.
        wipe: () => deleteRedisKeys(admin(), prefix, true),
      };
    },
  },
  {
    kind: 'postgres',
    up: postgresUp,
    async open() {
      const schema = uniqueNamespace('tw');
      const store = new PostgresStore({ pool: pool(), schema });
      const raw = async (): Promise<string> => {
        const { rows: tables } = await pool().query<{ name: string }>(
          'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
          [schema],
        );
        const contents = await Promise.all(
          tables.map(async ({ name }) => (await pool().query(`SELECT * FROM "${schema}"."${name}" ORDER BY 1`)).rows),
        );
        return JSON.stringify(tables.map(({ name }, i) => [name, contents[i]]));
      };
      return {
        kind: 'postgres',
        store,
        snapshot: async () => `${await contractSnapshot(store)}\n${await raw()}`,
        dispose: async () => {
          await store.close();
          await pool().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        },
        wipe: async () => void (await pool().query(`DROP SCHEMA "${schema}" CASCADE`)),
      };
    },
  },
];

/**
 * Runs `test` with a scheduler (not started) on `opened`'s store and a `FakeClock` at
 * 2026-01-01; fails when the scheduler reported an `error`; then stops the scheduler
 * and disposes of the store.
 */
export async function withFakeClockScheduler(opened: OpenedStore, test: (scheduler: Scheduler, clock: FakeClock) => Promise<void>): Promise<void> {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const scheduler = new Scheduler({ store: opened.store, clock, logger: false });
  const errors: Error[] = [];
  scheduler.on('error', (error) => errors.push(error));
  try {
    await test(scheduler, clock);
    expect(errors).toEqual([]);
  } finally {
    const stopping = scheduler.stop();
    await clock.advance('1m');
    await stopping;
    await opened.dispose();
  }
}
