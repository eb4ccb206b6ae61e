/**
 * The connection side of the Postgres adapter: the structural client type, option
 * validation, the pool we open from a connection string (and only that one we
 * close), and running the migrations once before the first query.
 */
import * as z from 'zod/mini';
import { parseInput, partitionsSchema, requireDriver } from '../../src/adapter-kit.js';
import { migrateStatement } from './migrations.js';
import { SCHEMA_NAME_PATTERN, sqlNames, type SqlNames } from './sql.js';

/**
 * Anything that runs one SQL statement with `$1`-style parameters: a node-postgres
 * `Pool` or `Client`, PGlite, or a wrapper of your own. The store only ever sends
 * single statements, so any pool (including PgBouncer in transaction mode) serves.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** The node-postgres pool surface used for LISTEN and for pools we create. */
export interface PgPoolLike extends Queryable {
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export interface PgClientLike extends Queryable {
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeAllListeners(event?: string): unknown;
  release(destroy?: boolean | Error): void;
}

interface BaseOptions {
  /**
   * The schema holding every table and function; created on first use.
   * Lowercase letters, digits and `_`, starting with a letter or `_`, at most 63 characters.
   * @default 'tickwork'
   */
  readonly schema?: string;
}

export type PostgresStoreOptions = BaseOptions & {
  /**
   * How many partitions the jobs fall into (1 to 1,024). Each partition has its own
   * planner lease, so several instances plan about 1/N of the jobs each, and a dead
   * instance's partitions are taken over within `leaseMs`. Every instance on a schema
   * must use the same count.
   * @default 12
   */
  readonly partitions?: number;
} &
  (
    | {
        /** A node-postgres `Pool`, PGlite, or anything with `query(text, params)`. Never closed by the store. */
        readonly pool: Queryable;
        readonly connectionString?: never;
      }
    | {
        /** The store opens its own `pg.Pool` (requires the `pg` package) and ends it in `close()`. */
        readonly connectionString: string;
        readonly pool?: never;
      }
  );

export type PostgresLockOptions = BaseOptions & {
  /** A node-postgres `Pool`, PGlite, or anything with `query(text, params)`. Never closed by the lock. */
  readonly pool: Queryable;
};

const queryableSchema = z.custom<Queryable>(
  (value) => typeof value === 'object' && value !== null && typeof (value as Queryable).query === 'function',
  { message: 'must be a pg Pool, PGlite, or an object with a query(text, params) method' },
);
/**
 * Postgres refuses to create schemas named `pg_*` (reserved for the system), and
 * `information_schema` is the SQL standard's catalog: tickwork's tables have no
 * place in either.
 */
const RESERVED_SCHEMA = /^(?:pg_|information_schema$)/;

const schemaNameSchema = z._default(
  z.string({ error: 'must be a string' }).check(
    z.regex(SCHEMA_NAME_PATTERN, 'must be 1-63 lowercase letters, digits or _, not starting with a digit'),
    z.refine((name) => !RESERVED_SCHEMA.test(name), { error: 'must not start with "pg_" nor be "information_schema": Postgres reserves them' }),
  ),
  'tickwork',
);

const storeOptionsSchema = z
  .strictObject({
    pool: z.optional(queryableSchema),
    connectionString: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
    schema: schemaNameSchema,
    partitions: partitionsSchema,
  })
  .check(
    z.superRefine((options, ctx) => {
      if ((options.pool === undefined) === (options.connectionString === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: options.pool === undefined ? [] : ['connectionString'],
          message: 'give exactly one of pool and connectionString',
        });
      }
    }),
  );

const lockOptionsSchema = z.strictObject({ pool: queryableSchema, schema: schemaNameSchema });

/** Hides a password in a connection string before it can reach an error message. */
function redact(connectionString: unknown): unknown {
  if (typeof connectionString !== 'string') return connectionString;
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return connectionString.replace(/(password\s*=\s*)('[^']*'|\S+)/gi, '$1***');
  }
}

export function parseStoreOptions(input: unknown): { pool?: Queryable; connectionString?: string; schema: string; partitions?: number } {
  const view =
    typeof input === 'object' && input !== null && 'connectionString' in input
      ? { ...input, connectionString: redact((input as { connectionString: unknown }).connectionString) }
      : input;
  const parsed = parseInput(storeOptionsSchema, view, 'new PostgresStore()');
  const connectionString = (input as { connectionString?: string }).connectionString;
  return {
    schema: parsed.schema,
    ...(parsed.partitions === undefined ? {} : { partitions: parsed.partitions }),
    ...(parsed.pool === undefined ? {} : { pool: parsed.pool }),
    ...(connectionString === undefined ? {} : { connectionString }),
  };
}

export function parseLockOptions(input: unknown): { pool: Queryable; schema: string } {
  return parseInput(lockOptionsSchema, input, 'new PostgresLock()');
}

/** One schema on one pool: lazily opened, migrated once, queried one statement at a time. */
export class Database {
  readonly names: SqlNames;
  readonly #userPool: Queryable | undefined;
  readonly #connectionString: string | undefined;
  /** The `pg` module, loaded at construction when the store is to open its own pool. */
  readonly #pg: PgModule | undefined;
  #ownPool: Promise<PgPoolLike> | undefined;
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(options: { pool?: Queryable; connectionString?: string; schema: string }) {
    this.names = sqlNames(options.schema);
    this.#userPool = options.pool;
    this.#connectionString = options.connectionString;
    // Loaded here, so a missing `pg` is reported by the constructor; PGlite and pool users never need it.
    if (options.pool === undefined) this.#pg = requireDriver<PgModule>('pg');
  }

  /** True when the store opened the pool itself (and so may hold connections on it for LISTEN). */
  get ownsPool(): boolean {
    return this.#userPool === undefined;
  }

  /** The pool or client queries go to (our own pool is opened on first call). */
  pool(): Promise<Queryable> {
    if (this.#userPool !== undefined) return Promise.resolve(this.#userPool);
    if (this.#closed) return Promise.reject(new Error('PostgresStore is closed'));
    this.#ownPool ??= Promise.resolve(openPool(this.#pg as PgModule, this.#connectionString ?? ''));
    return this.#ownPool;
  }

  /** Applies missing migrations once; a failed attempt is retried by the next call. */
  init(): Promise<void> {
    this.#ready ??= this.#migrate().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #migrate(): Promise<void> {
    await (await this.pool()).query(migrateStatement(this.names));
  }

  /**
   * Runs one statement after the migrations and resolves its rows. A statement that
   * finds the schema, a table or a function gone (the schema was dropped under us)
   * migrates the schema afresh and runs once more: the store comes back with empty
   * tables and a new identity, which the scheduler notices.
   */
  async rows(text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    await this.init();
    try {
      return (await (await this.pool()).query(text, params)).rows as Record<string, unknown>[];
    } catch (error) {
      if (!isSchemaGone(error)) throw error;
      this.#ready = undefined;
      await this.init();
      return (await (await this.pool()).query(text, params)).rows as Record<string, unknown>[];
    }
  }

  /** Runs one statement that selects one value named `result`, and resolves that value. */
  async value(text: string, params: unknown[] = []): Promise<unknown> {
    const [row] = await this.rows(text, params);
    return row?.result;
  }

  /** Ends the pool we opened; a user's pool is left alone. */
  async close(): Promise<void> {
    this.#closed = true;
    const own = this.#ownPool;
    this.#ownPool = undefined;
    if (own !== undefined) await (await own.catch(() => undefined))?.end();
  }
}

/** `invalid_schema_name`, `undefined_table`, `undefined_function`: what a dropped schema answers. */
const SCHEMA_GONE = new Set(['3F000', '42P01', '42883']);

function isSchemaGone(error: unknown): boolean {
  return typeof error === 'object' && error !== null && SCHEMA_GONE.has((error as { code?: unknown }).code as string);
}

/** The part of the `pg` module the store uses. */
interface PgModule {
  readonly Pool: new (options: { connectionString: string; connectionTimeoutMillis: number; idleTimeoutMillis: number }) => unknown;
}

/**
 * How long opening a connection of our own pool may take before the query waiting
 * for it fails (node-postgres waits forever by default): a server that does not
 * answer is reported like one that refuses, and the scheduler retries.
 */
const CONNECTION_TIMEOUT_MS = 5_000;
/**
 * How long a connection of our own pool stays open unused. node-postgres closes it
 * after 10 s by default, which is the default heartbeat's period (`leaseMs / 3`): an
 * idle instance then opened a new connection on each heartbeat, and the server forked
 * a backend for it and loaded the schema's functions into it again (measured: one new
 * connection every ~10 s per idle instance). 60 s outlasts the heartbeat of any
 * `leaseMs` up to 3 minutes.
 */
const IDLE_CONNECTION_MS = 60_000;

function openPool(pg: PgModule, connectionString: string): PgPoolLike {
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: CONNECTION_TIMEOUT_MS, idleTimeoutMillis: IDLE_CONNECTION_MS }) as PgPoolLike;
  // An idle connection dropped by the server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return pool;
}
