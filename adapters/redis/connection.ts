/**
 * The Redis connection side of the adapter: which clients it accepts, how it runs
 * its Lua scripts by SHA (EVALSHA, falling back to EVAL when the server's script
 * cache was flushed or failed over), and how it closes the connections it owns.
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** An ioredis client: a single `Redis` connection or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/** Duck-typed so that a second copy of ioredis in `node_modules` still passes. */
export function isRedisClient(value: unknown): value is RedisClient {
  if (value === null || typeof value !== 'object') return false;
  const client = value as Record<string, unknown>;
  return typeof client.evalsha === 'function' && typeof client.eval === 'function' && typeof client.duplicate === 'function';
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
