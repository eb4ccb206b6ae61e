/**
 * Reaching the real servers the integration suites talk to. Under CI (`CI` set) an
 * unreachable server is a failure, never a skip; locally the suites skip with a
 * visible message.
 */
import net from 'node:net';
import type { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Resolves true when the server answers. Throws under CI when it does not; warns and
 * resolves false otherwise, so the caller can `describe.skipIf(!up)`.
 */
export async function requireServer(kind: 'redis' | 'postgres'): Promise<boolean> {
  const url = kind === 'redis' ? REDIS_URL : DATABASE_URL;
  if (await reachable(url, kind === 'redis' ? 6379 : 5432)) return true;
  const message = `${kind} is not reachable at ${url}`;
  if (process.env.CI) throw new Error(`${message}; CI requires it (.ci/run starts it)`);
  console.warn(`[tickwork] SKIPPING ${kind} integration tests: ${message}`);
  return false;
}

/** A namespace unique to one test, so suites can share one server in parallel. */
export function uniqueNamespace(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * The SCAN pattern of every key of a store's prefix: under `{prefix}` and under its
 * partitions' tags `{prefix/p<i>.<n>}`, behind an ioredis `keyPrefix` too.
 */
export function redisKeyPattern(prefix: string): string {
  return `*{${prefix}[}/]*`;
}

/** Deletes every key of a store's prefix on one Redis server (SCAN, never KEYS); `atOnce`: in one DEL after the scan (atomic). */
export async function deleteRedisKeys(client: Redis, prefix: string, atOnce = false): Promise<void> {
  const all: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', redisKeyPattern(prefix), 'COUNT', 500);
    cursor = next;
    if (atOnce) all.push(...keys);
    else if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  if (all.length > 0) await client.del(...all);
}
