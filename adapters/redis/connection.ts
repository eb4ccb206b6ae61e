/**
 * The Redis connection side of the adapter: which clients it accepts, how it opens
 * its own (ioredis loaded then, not at import), how it runs its Lua scripts by SHA
 * (EVALSHA, falling back to EVAL when the server's script cache was flushed or
 * failed over), and how it closes the connections it owns.
 */
import { createHash } from 'node:crypto';
import type * as IORedis from 'ioredis';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { requireDriver } from '../../src/adapter-kit.js';

/** An ioredis client: a single `Redis` connection or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/** Duck-typed so that a second copy of ioredis in `node_modules` still passes. */
export function isRedisClient(value: unknown): value is RedisClient {
  if (value === null || typeof value !== 'object') return false;
  const client = value as Record<string, unknown>;
  return typeof client.evalsha === 'function' && typeof client.eval === 'function' && typeof client.duplicate === 'function';
}

/**
 * How a connection the store opens itself behaves while Redis is unreachable: a
 * command fails after one failed reconnection instead of waiting through twenty
 * (ioredis's default, over a minute), so the scheduler reports the outage within
 * a second and retries on its own heartbeat; reconnection backs off from 100 ms to
 * at most 1 s, so work resumes within about a second of Redis coming back.
 */
export const OWN_CLIENT_OPTIONS: RedisOptions = {
  lazyConnect: true,
  maxRetriesPerRequest: 1,
  connectTimeout: 5_000,
  retryStrategy: (times: number) => Math.min(100 * 2 ** (times - 1), 1_000),
};

/** Opens the store's own connection to `url`; throws `DRIVER_MISSING` when ioredis is not installed. */
export function openClient(url: string): Redis {
  const { Redis: RedisClass } = requireDriver<typeof IORedis>('ioredis');
  const client = new RedisClass(url, OWN_CLIENT_OPTIONS);
  // Failures reach callers as rejected operations; without a listener ioredis would report them as unhandled.
  client.on('error', () => {});
  return client;
}

/** The hash tag every key of a store starts with: `{prefix}`, so they all share one cluster slot. */
export function hashTag(prefix: string): string {
  return `{${prefix}}`;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** Runs Lua scripts by SHA on one client. */
export class ScriptRunner {
  readonly #client: RedisClient;
  readonly #shas = new Map<string, string>();

  constructor(client: RedisClient) {
    this.#client = client;
  }

  /** Loads the scripts into the script cache of every master (idempotent). */
  async load(scripts: readonly string[]): Promise<void> {
    const nodes: readonly Redis[] = this.#client.isCluster
      ? (this.#client as Cluster).nodes('master')
      : [this.#client as Redis];
    await Promise.all(nodes.flatMap((node) => scripts.map((lua) => node.script('LOAD', lua))));
  }

  /** EVALSHA, or EVAL (which caches the script again) when the server does not know the SHA. */
  async run(lua: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const sha = this.#sha(lua);
    try {
      return await this.#client.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return await this.#client.eval(lua, keys.length, ...keys, ...args);
    }
  }

  #sha(lua: string): string {
    let sha = this.#shas.get(lua);
    if (sha === undefined) {
      sha = createHash('sha1').update(lua).digest('hex');
      this.#shas.set(lua, sha);
    }
    return sha;
  }
}

/** Closes a connection the adapter opened: QUIT when connected, a plain disconnect otherwise. */
export async function closeClient(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
