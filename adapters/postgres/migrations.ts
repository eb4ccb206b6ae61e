/**
 * The Postgres store's schema history: numbered, append-only migrations, and the one
 * statement that applies the missing ones. Never edit a released migration; append
 * a new one (`CREATE OR REPLACE FUNCTION`, `ALTER TABLE`, ...) instead.
 *
 * Applying is a single `DO` block, so it is one transaction on one connection
 * through any pool, PGlite or transaction pooler: it takes a transaction-level
 * advisory lock keyed on the schema (concurrent starters wait their turn), creates
 * the schema and the version table if needed, then runs each migration whose
 * version is not recorded yet and records it.
 */
import { FUNCTIONS_MIGRATION } from './migration-functions.js';
import { SCHEMA_V3_MIGRATION } from './migration-v3-schema.js';
import { EXECUTION_V4_MIGRATION } from './migration-v4-execution.js';
import { FUNCTIONS_V4_MIGRATION } from './migration-v4-functions.js';
import { UPSERT_JOBS_V5_MIGRATION } from './migration-v5-upsert-jobs.js';
import { PRUNE_BY_KEY_V6_MIGRATION } from './migration-v6-prune-by-key.js';
import { PLAN_AHEAD_V7_MIGRATION } from './migration-v7-plan-ahead.js';
import { SCHEDULE_OPTIONS_V8_MIGRATION } from './migration-v8-schedule-options.js';
import type { SqlNames } from './sql.js';

export interface Migration {
  /** 1, 2, 3, ... in order; recorded in `<schema>.schema_migrations`. */
  readonly version: number;
  readonly name: string;
  /** The migration's SQL for one schema (several statements). */
  readonly sql: (names: SqlNames) => string;
}

const TABLES_MIGRATION = (n: SqlNames): string => `
CREATE TABLE ${n.schema}.jobs (
  name text COLLATE "C" PRIMARY KEY,
  schedule jsonb NOT NULL,
  timezone text NOT NULL,
  concurrency_policy text NOT NULL CHECK (concurrency_policy IN ('Allow', 'Forbid', 'Replace', 'CatchUp')),
  starting_deadline_ms bigint,
  history_succeeded integer NOT NULL,
  history_failed integer NOT NULL,
  suspended boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  cursor_at bigint NOT NULL,
  last_schedule_time bigint,
  last_successful_time bigint,
  succeeded bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  skipped bigint NOT NULL DEFAULT 0,
  backfills jsonb NOT NULL DEFAULT '[]'
);

CREATE TABLE ${n.schema}.runs (
  id text COLLATE "C" PRIMARY KEY,
  job_name text COLLATE "C" NOT NULL REFERENCES ${n.schema}.jobs (name) ON DELETE CASCADE,
  scheduled_at bigint NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual', 'backfill')),
  status text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  attempt integer NOT NULL,
  created_at bigint NOT NULL,
  ready_at bigint NOT NULL,
  started_at bigint,
  finished_at bigint,
  error_name text,
  error_message text,
  -- json, not jsonb: keeps the value byte for byte (key order, \\u0000); SQL NULL = no data.
  data json,
  owner text,
  lease_until bigint,
  fence bigint NOT NULL DEFAULT 0,
  deadline_at bigint
);

-- Due-run look-up and the next wake-up time: pending runs in claim order.
CREATE INDEX runs_ready_idx ON ${n.schema}.runs (ready_at, scheduled_at, id) WHERE status = 'pending';
-- Concurrency policies: a job's active runs.
CREATE INDEX runs_active_idx ON ${n.schema}.runs (job_name) WHERE status IN ('pending', 'running');
-- Lease recovery: running runs by lease expiry.
CREATE INDEX runs_lease_idx ON ${n.schema}.runs (lease_until) WHERE status = 'running';
-- Listing newest first, history pruning, and the cascade from jobs.
CREATE INDEX runs_listing_idx ON ${n.schema}.runs (job_name, created_at DESC, scheduled_at DESC, id DESC);

CREATE TABLE ${n.schema}.locks (
  name text COLLATE "C" PRIMARY KEY,
  owner text,
  token bigint NOT NULL,
  lease_until bigint
);
`;

/** Every migration, oldest first. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'tables and indexes', sql: TABLES_MIGRATION },
  { version: 2, name: 'store functions', sql: FUNCTIONS_MIGRATION },
  { version: 3, name: 'fan-out, pending timeout, history TTL and pruning indexes', sql: SCHEMA_V3_MIGRATION },
  {
    version: 4,
    name: 'store functions for fan-out, pending timeout, history TTL and bounded pruning',
    sql: (n) => FUNCTIONS_V4_MIGRATION(n) + EXECUTION_V4_MIGRATION(n),
  },
  { version: 5, name: 'batch job upserts', sql: UPSERT_JOBS_V5_MIGRATION },
  { version: 6, name: 'history pruning by primary key', sql: PRUNE_BY_KEY_V6_MIGRATION },
  { version: 7, name: 'runs created ahead of their tick', sql: PLAN_AHEAD_V7_MIGRATION },
  { version: 8, name: 'schedule options: window, jitter, maxRuns, BufferOne', sql: SCHEDULE_OPTIONS_V8_MIGRATION },
];

/** The single statement that brings a schema up to date; safe to run concurrently and repeatedly. */
export function migrateStatement(n: SqlNames, migrations: readonly Migration[] = MIGRATIONS): string {
  const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
  const steps = migrations.map((m) => {
    const tag = `$tickwork_migration_${m.version}$`;
    const body = m.sql(n);
    if (body.includes(tag)) throw new Error(`migration ${m.version} contains its own quoting tag`);
    return `
  IF NOT EXISTS (SELECT 1 FROM ${n.schema}.schema_migrations WHERE version = ${m.version}) THEN
    EXECUTE ${tag}${body}${tag};
    INSERT INTO ${n.schema}.schema_migrations (version, name) VALUES (${m.version}, ${literal(m.name)});
  END IF;`;
  });
  const [lockClass, lockKey] = n.migrationLock;
  // The schema and version table are created only when missing, so a role without
  // CREATE privileges can start against a schema an administrator prepared.
  return `DO $tickwork_migrate$
BEGIN
  PERFORM pg_advisory_xact_lock(${lockClass}, ${lockKey});
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ${literal(n.schemaName)}) THEN
    CREATE SCHEMA ${n.schema};
  END IF;
  IF to_regclass(${literal(`${n.schema}.schema_migrations`)}) IS NULL THEN
    CREATE TABLE ${n.schema}.schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    );
  END IF;${steps.join('')}
END
$tickwork_migrate$`;
}
