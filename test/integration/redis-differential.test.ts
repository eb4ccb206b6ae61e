/**
 * RedisStore against the reference MemoryStore, on random sequences of contract calls.
 * TW_DIFF_RUNS sets how many sequences, TW_DIFF_SEED replays or varies them.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import { assertBehavesLikeMemoryStore } from './differential.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('redis');
const runs = Number(process.env.TW_DIFF_RUNS ?? 80);
const seed = process.env.TW_DIFF_SEED === undefined ? undefined : Number(process.env.TW_DIFF_SEED);
const timeout = Math.max(120_000, runs * 1_500);

describe.skipIf(!up)('RedisStore behaves like MemoryStore', () => {
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await admin.quit();
  });

  it('gives the same results for random sequences of operations', async () => {
    const prefixes = new Map<RedisStore, string>();
    await assertBehavesLikeMemoryStore({
      createStore: () => {
        const prefix = uniqueNamespace('twd');
        const store = new RedisStore({ client: admin, prefix });
        prefixes.set(store, prefix);
        return store;
      },
      destroyStore: async (store) => {
        await deleteRedisKeys(admin, prefixes.get(store as RedisStore) ?? '');
        await store.close();
      },
      numRuns: runs,
      seed,
      timeLimitMs: timeout - 10_000,
    });
  }, timeout);
});
