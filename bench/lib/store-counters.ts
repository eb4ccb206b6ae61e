/**
 * What a store's server did for a scenario, read before and after it: on Redis the
 * commands it ran (`INFO commandstats`, the commands scripts call included; a private
 * server, so they are all the scenario's), on Postgres the rows the schema's tables
 * had written and read (`pg_stat_user_tables`).
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { sleep } from './stats.js';
import type { StoreKind } from './store.js';

export interface StoreCounters {
  /** Redis: commands that write; Postgres: rows inserted, updated or deleted. */
  readonly writes: number;
  /** Redis: every command; Postgres: rows read by sequential and index scans. */
  readonly reads: number;
}

const REDIS_WRITES = new Set(['hset', 'hmset', 'hsetnx', 'hdel', 'hincrby', 'zadd', 'zrem', 'zremrangebyrank', 'sadd', 'srem', 'del', 'set', 'setnx', 'incr', 'rpush', 'lpush', 'lpop', 'lset', 'ltrim', 'publish', 'expire', 'pexpire', 'pexpireat']);

async function redisCounters(url: string): Promise<StoreCounters> {
  const client = new Redis(url);
  try {
    const info = await client.info('commandstats');
    let writes = 0;
    let reads = 0;
    for (const [, command, calls] of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
      if (command === 'info') continue;
      reads += Number(calls);
      if (REDIS_WRITES.has(command as string)) writes += Number(calls);
    }
    return { writes, reads };
  } finally {
    client.disconnect();
  }
}

async function postgresCounters(url: string, schema: string): Promise<StoreCounters> {
  // Backends report their table statistics when idle, at most every 10 s (PostgreSQL 15).
  await sleep(11_000);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ writes: string | null; reads: string | null }>(
      `SELECT sum(n_tup_ins + n_tup_upd + n_tup_del) AS writes, sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)) AS reads
       FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    );
    return { writes: Number(rows[0]?.writes ?? 0), reads: Number(rows[0]?.reads ?? 0) };
  } finally {
    await client.end();
  }
}

/** The counters now; undefined for the memory store. */
export function storeCounters(kind: StoreKind, url: string, namespace: string): Promise<StoreCounters | undefined> {
  if (kind === 'redis') return redisCounters(url);
  if (kind === 'postgres') return postgresCounters(url, namespace);
  return Promise.resolve(undefined);
}

export function counterDelta(before: StoreCounters | undefined, after: StoreCounters | undefined): StoreCounters | undefined {
  return before === undefined || after === undefined ? undefined : { writes: after.writes - before.writes, reads: after.reads - before.reads };
}
