/**
 * The public options of `RedisStore` and `RedisLock`, and their zod schemas (the
 * constructors' validation boundary).
 */
import * as z from 'zod/mini';
import { DEFAULT_PARTITIONS, parseInput, partitionsSchema } from '../../src/adapter-kit.js';
import { isRedisClient, type RedisClient } from './connection.js';

/** Where the store keeps its keys. */
interface PrefixOption {
  /**
   * Namespaces every key (and the notification channel) of the store, as the hash
   * tag `{prefix}`: 1 to 100 letters, digits, `-`, `_`, `.` or `:`. Stores with
   * different prefixes share nothing.
   * @default 'tickwork'
   */
  readonly prefix?: string;
}

/** How the store's jobs are shared out among the planners. */
interface PartitionsOption {
  /**
   * How many partitions the jobs fall into (1 to 1,024). Each partition has its own
   * planner lease, so several instances plan about 1/N of the jobs each, and a dead
   * instance's partitions are taken over within `leaseMs`. Every instance on a prefix
   * must use the same count.
   * @default 12
   */
  readonly partitions?: number;
}

/**
 * Options of `new RedisStore(...)`: exactly one of `client` (a connection you own)
 * or `url` (the store opens and closes its own connection).
 * @example new RedisStore({ client: new Redis(process.env.REDIS_URL) })
 * @example new RedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'billing' })
 */
export type RedisStoreOptions =
  | (PrefixOption & PartitionsOption & {
      /** An ioredis `Redis` or `Cluster` you created; the store never closes it. */
      readonly client: RedisClient;
      readonly url?: never;
    })
  | (PrefixOption & PartitionsOption & {
      /** A `redis://` or `rediss://` URL; the store creates the client and closes it in `close()`. */
      readonly url: string;
      readonly client?: never;
    });

/** Options of `new RedisLock(...)`: the client (never closed by the lock) and the store's prefix. */
export interface RedisLockOptions extends PrefixOption {
  readonly client: RedisClient;
}

export const DEFAULT_PREFIX = 'tickwork';

const prefixSchema = z.string().check(z.regex(/^[A-Za-z0-9\-_.:]{1,100}$/, 'prefix must be 1 to 100 letters, digits, "-", "_", "." or ":"'));

const clientSchema = z.custom<RedisClient>(isRedisClient, 'client must be an ioredis Redis or Cluster instance');

const storeSchema = z
  .strictObject({
    client: z.optional(clientSchema),
    url: z.optional(z.string().check(z.regex(/^rediss?:\/\/\S*$/i, 'url must be a redis:// or rediss:// URL'))),
    prefix: z.optional(prefixSchema),
    partitions: partitionsSchema,
  })
  .check(
    z.superRefine((options, ctx) => {
      if (options.client !== undefined && options.url !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'give either client or url, not both' });
      } else if (options.client === undefined && options.url === undefined) {
        ctx.addIssue({ code: 'custom', path: [], message: 'give exactly one of client or url' });
      }
    }),
  );

const lockSchema = z.strictObject({ client: clientSchema, prefix: z.optional(prefixSchema) });

/** The validated store options: a client to use or a URL to connect to, and the prefix. */
export type ParsedStoreOptions = { readonly prefix: string; readonly partitions: number } & (
  | { readonly client: RedisClient; readonly url?: undefined }
  | { readonly client?: undefined; readonly url: string }
);

export function parseStoreOptions(options: unknown): ParsedStoreOptions {
  const parsed = parseInput(storeSchema, options, 'new RedisStore(options)');
  const prefix = parsed.prefix ?? DEFAULT_PREFIX;
  const partitions = parsed.partitions ?? DEFAULT_PARTITIONS;
  if (parsed.client !== undefined) return { client: parsed.client, prefix, partitions };
  // superRefine guarantees a URL when there is no client.
  return { url: parsed.url ?? '', prefix, partitions };
}

export function parseLockOptions(options: unknown): { readonly client: RedisClient; readonly prefix: string } {
  const parsed = parseInput(lockSchema, options, 'new RedisLock(options)');
  return { client: parsed.client, prefix: parsed.prefix ?? DEFAULT_PREFIX };
}
