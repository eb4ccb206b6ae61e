/** `tickwork/postgres`: the Postgres store and its lock (node-postgres `Pool`, PGlite, or any `query(text, params)` client). */
export { PostgresStore } from './postgres-store.js';
export { PostgresLock } from './postgres-lock.js';
export type { PostgresLockOptions, PostgresStoreOptions, Queryable } from './database.js';
export { MIGRATIONS, type Migration } from './migrations.js';
