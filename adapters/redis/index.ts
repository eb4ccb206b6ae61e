/** `tickwork/redis`: the Redis store and its lock (ioredis `Redis` or `Cluster`). */
export { RedisStore } from './redis-store.js';
export { RedisLock } from './redis-lock.js';
export type { RedisStoreOptions, RedisLockOptions } from './options.js';
export type { RedisClient } from './connection.js';
