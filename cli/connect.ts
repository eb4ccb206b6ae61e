/**
 * The CLI's store: from `--redis URL [--prefix P]` or `--postgres URL [--schema S]`
 * (with `--partitions N` when the store's apps use another count than the default), else
 * from `TICKWORK_REDIS_URL` / `TICKWORK_DATABASE_URL`. The stores' own constructors open
 * the connection, so a missing `ioredis` or `pg` is their `DRIVER_MISSING` error.
 */
import { PostgresStore } from '../adapters/postgres/index.js';
import { RedisStore } from '../adapters/redis/index.js';
import type { Store } from '../src/index.js';
import { UsageError } from './usage.js';

export interface ConnectionFlags {
  readonly redis?: string | undefined;
  readonly prefix?: string | undefined;
  readonly postgres?: string | undefined;
  readonly schema?: string | undefined;
  readonly partitions?: string | undefined;
}

/**
 * `--partitions` as the stores' option: a number when it reads as one, else the text as
 * given, for the store's validation to name (`--partitions: ... (got "x")`).
 */
function partitionsOption(flags: ConnectionFlags): { partitions?: number } {
  const value = flags.partitions;
  if (value === undefined) return {};
  return { partitions: (/^\d+$/.test(value) ? Number(value) : value) as number };
}

/** The store, and how to name it in an error message (its URL without a password). */
export interface OpenedStore {
  readonly store: Store;
  readonly label: string;
}

export function openStore(flags: ConnectionFlags, env: NodeJS.ProcessEnv): OpenedStore {
  if (flags.redis !== undefined && flags.postgres !== undefined) throw new UsageError('give either --redis or --postgres, not both');
  if (flags.prefix !== undefined && flags.schema !== undefined) throw new UsageError('give either --prefix (Redis) or --schema (Postgres), not both');
  // A flag decides the kind; without one, the environment does (Redis first).
  const envRedis = nonEmpty(env.TICKWORK_REDIS_URL);
  const envPostgres = nonEmpty(env.TICKWORK_DATABASE_URL);
  const kind =
    flags.redis !== undefined || (flags.postgres === undefined && flags.prefix !== undefined)
      ? 'redis'
      : flags.postgres !== undefined || flags.schema !== undefined
        ? 'postgres'
        : envRedis !== undefined
          ? 'redis'
          : 'postgres';
  if (kind === 'redis') {
    if (flags.schema !== undefined) throw new UsageError('--schema goes with --postgres (Redis has --prefix)');
    const url = flags.redis ?? envRedis;
    if (url === undefined) throw new UsageError('--prefix needs --redis URL (or TICKWORK_REDIS_URL)');
    const store = new RedisStore({ url, ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }), ...partitionsOption(flags) });
    return { store, label: `the Redis store at ${redacted(url)}${flags.prefix === undefined ? '' : ` (prefix ${flags.prefix})`}` };
  }
  if (flags.prefix !== undefined) throw new UsageError('--prefix goes with --redis (Postgres has --schema)');
  const connectionString = flags.postgres ?? envPostgres;
  if (connectionString === undefined) {
    throw new UsageError(
      flags.schema === undefined
        ? 'no store: give --redis URL or --postgres URL, or set TICKWORK_REDIS_URL or TICKWORK_DATABASE_URL'
        : '--schema needs --postgres URL (or TICKWORK_DATABASE_URL)',
    );
  }
  const store = new PostgresStore({ connectionString, ...(flags.schema === undefined ? {} : { schema: flags.schema }), ...partitionsOption(flags) });
  return { store, label: `the Postgres store at ${redacted(connectionString)}${flags.schema === undefined ? '' : ` (schema ${flags.schema})`}` };
}

/** A connection URL without its password. */
function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the given URL';
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
