/**
 * Named leases with fencing tokens in the `locks` table: the lock adapter of
 * `PostgresStore`. A lease is a ROW, not a session advisory lock, so it works
 * through any pool or transaction pooler and survives connection churn. A released
 * lock keeps its row (owner cleared) so the next holder's token is still larger.
 */
import type { Lock, LockLease } from '../../src/store.js';
import { Database, parseLockOptions, type PostgresLockOptions } from './database.js';

export class PostgresLock implements Lock {
  readonly #db: Database;

  /** A lock on `pool` in `schema` (created and migrated on first use, like the store's). */
  constructor(options: PostgresLockOptions) {
    this.#db = new Database(parseLockOptions(options));
  }

  async acquire(input: { name: string; owner: string; now: number; leaseUntil: number }): Promise<LockLease | undefined> {
    const s = this.#db.names.schema;
    const [row] = await this.#db.rows(
      `INSERT INTO ${s}.locks AS l (name, owner, token, lease_until) VALUES ($1, $2, 1, $4::bigint)
       ON CONFLICT (name) DO UPDATE
         SET token = CASE WHEN l.owner = EXCLUDED.owner AND l.lease_until > $3::bigint THEN l.token ELSE l.token + 1 END,
             owner = EXCLUDED.owner,
             lease_until = EXCLUDED.lease_until
         WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.lease_until <= $3::bigint
       RETURNING l.token::text AS token`,
      [input.name, input.owner, input.now, input.leaseUntil],
    );
    if (row === undefined) return undefined;
    return { name: input.name, owner: input.owner, token: Number(row.token), leaseUntil: input.leaseUntil };
  }

  async renew(input: { name: string; owner: string; token: number; now: number; leaseUntil: number }): Promise<boolean> {
    const rows = await this.#db.rows(
      `UPDATE ${this.#db.names.schema}.locks SET lease_until = $5::bigint
       WHERE name = $1 AND owner = $2 AND token = $3::bigint AND lease_until > $4::bigint
       RETURNING 1 AS renewed`,
      [input.name, input.owner, input.token, input.now, input.leaseUntil],
    );
    return rows.length > 0;
  }

  /** Every lease renewed in one statement, as many `renew` calls would. */
  async renewAll(input: { leases: readonly { name: string; owner: string; token: number }[]; now: number; leaseUntil: number }): Promise<readonly boolean[]> {
    if (input.leases.length === 0) return [];
    const rows = await this.#db.rows(
      `UPDATE ${this.#db.names.schema}.locks AS l SET lease_until = $5::bigint
       FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(name, owner, token)
       WHERE l.name = r.name AND l.owner = r.owner AND l.token = r.token AND l.lease_until > $4::bigint
       RETURNING l.name, l.owner, l.token::text AS token`,
      [input.leases.map((l) => l.name), input.leases.map((l) => l.owner), input.leases.map((l) => String(l.token)), input.now, input.leaseUntil],
    );
    const key = (name: unknown, owner: unknown, token: unknown): string => JSON.stringify([String(name), String(owner), String(token)]);
    const renewed = new Set(rows.map((row) => key(row.name, row.owner, row.token)));
    return input.leases.map((lease) => renewed.has(key(lease.name, lease.owner, lease.token)));
  }

  async release(input: { name: string; owner: string; token: number }): Promise<void> {
    await this.#db.rows(
      `UPDATE ${this.#db.names.schema}.locks SET owner = NULL, lease_until = NULL
       WHERE name = $1 AND owner = $2 AND token = $3::bigint`,
      [input.name, input.owner, input.token],
    );
  }

  async list(input: { prefix: string; now: number }): Promise<readonly LockLease[]> {
    const rows = await this.#db.rows(
      `SELECT name, owner, token::text AS token, lease_until::text AS lease_until FROM ${this.#db.names.schema}.locks
       WHERE starts_with(name, $1) AND owner IS NOT NULL AND lease_until > $2::bigint`,
      [input.prefix, input.now],
    );
    return rows.map((row) => ({ name: String(row.name), owner: String(row.owner), token: Number(row.token), leaseUntil: Number(row.lease_until) }));
  }
}
