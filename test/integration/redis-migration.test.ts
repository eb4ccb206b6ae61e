/**
 * A prefix in the single-tag layout (every key under `{prefix}`, written before
 * partitions) opened by a store of several partitions is moved to the partitioned
 * layout by `init()`, reads back and sweeps as before, and a migration cut short is
 * finished by the next `init()` (on Redis Cluster: test/integration/redis-cluster.test.ts).
 */
import { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { checkMigration } from './redis-migration.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from './servers.js';

const up = await requireServer('redis');

describe.skipIf(!up)('RedisStore layout migration (single Redis)', () => {
  const client = new Redis(REDIS_URL);
  afterAll(() => client.quit());

  async function withPrefixes(test: (reference: string, migrated: string) => Promise<void>): Promise<void> {
    const prefixes = [uniqueNamespace('twm'), uniqueNamespace('twm')] as const;
    try {
      await test(...prefixes);
    } finally {
      for (const prefix of prefixes) await deleteRedisKeys(client, prefix);
    }
  }

  it('moves every job, run, index record and lease to its partition, and refuses another count afterwards', () =>
    withPrefixes((reference, migrated) => checkMigration(client, reference, migrated)), 60_000);

  it('finishes a migration that died after copying a job but before deleting it', () =>
    withPrefixes((reference, migrated) => checkMigration(client, reference, migrated, 6)), 60_000);

  it('finishes a migration that died while copying a job', () =>
    withPrefixes((reference, migrated) => checkMigration(client, reference, migrated, 5)), 60_000);
});
