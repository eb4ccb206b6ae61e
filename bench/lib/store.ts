/**
 * The store a tickwork benchmark runs on, by kind, in its own namespace. Redis on a
 * Redis Cluster when REDIS_CLUSTER_NODES is set (`host:port,host:port,...`): the store
 * then runs on an `ioredis.Cluster` client of this process's own.
 */
import { Cluster } from 'ioredis';
import type { Store } from '../../src/store.js';
import { load } from './tickwork.js';

export type StoreKind = 'memory' | 'redis' | 'postgres';

export function storeKindOf(value: string): StoreKind {
  if (value === 'memory' || value === 'redis' || value === 'postgres') return value;
  throw new Error(`unknown store kind ${JSON.stringify(value)} (memory, redis or postgres)`);
}

/** BENCH_PARTITIONS: the partition count of the Redis and Postgres stores (their default when unset). */
function partitions(): { partitions?: number } {
  const value = process.env.BENCH_PARTITIONS;
  return value === undefined || value === '' ? {} : { partitions: Number(value) };
}

export async function createStore(kind: StoreKind, namespace: string, urls: { redis: string; postgres: string }): Promise<Store | undefined> {
  if (kind === 'redis') {
    const { RedisStore } = await load('tickwork/redis');
    const cluster = process.env.REDIS_CLUSTER_NODES;
    if (cluster !== undefined && cluster !== '') {
      // The store leaves a client it was given open: the process's exit ends it.
      const nodes = cluster.split(',').map((node) => ({ host: node.slice(0, node.lastIndexOf(':')), port: Number(node.slice(node.lastIndexOf(':') + 1)) }));
      return new RedisStore({ client: new Cluster(nodes), prefix: namespace, ...partitions() });
    }
    return new RedisStore({ url: urls.redis, prefix: namespace, ...partitions() });
  }
  if (kind === 'postgres') {
    const { PostgresStore } = await load('tickwork/postgres');
    return new PostgresStore({ connectionString: urls.postgres, schema: namespace, ...partitions() });
  }
  return undefined; // the scheduler's default MemoryStore
}
