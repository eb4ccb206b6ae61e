/**
 * The Postgres store's schema history: numbered migrations, and the one statement
 * that applies the missing ones.
 *
 * Each migration's text is FROZEN once committed (frozen per version, not
 * recreated from a shared source): migration 1 is the whole v1 schema, tables and
 * functions; a later change is a new migration that carries its complete text
 * (`ALTER TABLE ...`, `CREATE OR REPLACE FUNCTION ...` with the whole new body, or
 * `DROP FUNCTION` + `CREATE FUNCTION` when a signature changes) in a file of its
 * own, importing nothing from another migration. `test/integration/postgres-schema.test.ts`
 * holds each migration's checksum, so an edit fails the tests, and compares the
 * catalog of a freshly migrated schema with the committed `schema.txt`, so code
 * and migrations cannot drift apart unnoticed.
 *
 * Applying is a single `DO` block, so it is one transaction on one connection
 * through any pool, PGlite or transaction pooler: it takes a transaction-level
 * advisory lock keyed on the schema (concurrent starters wait their turn), creates
 * the schema and the version table if needed, refuses a schema whose recorded
 * migrations are not this code's (a store created by the pre-release migrations of
 * 0.1.0), then runs each migration whose version is not recorded yet and records it.
 */
import { V1_SCHEMA_MIGRATION } from './migration-v1-schema.js';
import { TRACEPARENT_V2_MIGRATION } from './migration-v2-traceparent.js';
import { V3_SCHEDULE_OPTIONS_MIGRATION } from './migration-v3-schedule-options.js';
import { V4_ONE_OWNER_MIGRATION } from './migration-v4-one-owner.js';
import { V5_SET_UPSERTS_MIGRATION } from './migration-v5-set-upserts.js';
import type { SqlNames } from './sql.js';

export interface Migration {
  /** 1, 2, 3, ... in order; recorded in `<schema>.schema_migrations`. */
  readonly version: number;
  readonly name: string;
  /** The migration's SQL for one schema (several statements). */
  readonly sql: (names: SqlNames) => string;
}

/** Every migration, oldest first. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'v1 schema: tables, indexes and functions', sql: V1_SCHEMA_MIGRATION },
  { version: 2, name: "the trace context of a run's creating call", sql: TRACEPARENT_V2_MIGRATION },
  { version: 3, name: 'schedule options: window, jitter, maxRuns, BufferOne', sql: V3_SCHEDULE_OPTIONS_MIGRATION },
  { version: 4, name: 'one owner per decision: retry limit in the job spec, readyAt as given, pendingUntil notified', sql: V4_ONE_OWNER_MIGRATION },
  { version: 5, name: 'a batch of job upserts as one statement', sql: V5_SET_UPSERTS_MIGRATION },
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
  const known = migrations.map((m) => `(${m.version}, ${literal(m.name)})`).join(', ');
  const newest = Math.max(0, ...migrations.map((m) => m.version));
  // The schema and version table are created only when missing, so a role without
  // CREATE privileges can start against a schema an administrator prepared. A version
  // this code knows, recorded under another name, is a schema built by other migrations
  // (the pre-release ones of 0.1.0): it is refused, never migrated on top. Versions
  // newer than this code's are left alone (a newer instance migrated the schema).
  return `DO $tickwork_migrate$
DECLARE v_version integer; v_name text; v_expected text;
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
  END IF;
  SELECT r.version, r.name, k.name INTO v_version, v_name, v_expected
    FROM ${n.schema}.schema_migrations r
    LEFT JOIN (VALUES ${known}) AS k (version, name) ON k.version = r.version
    WHERE r.version <= ${newest} AND k.name IS DISTINCT FROM r.name
    ORDER BY r.version LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'tickwork: schema % records migration % as "%", but this version of tickwork knows it as "%". '
        'The schema was built by other migrations (those of a pre-release tickwork 0.1.0, since squashed into one '
        'v1 schema), which cannot be upgraded in place: drop it (DROP SCHEMA % CASCADE) or give the store another schema',
        ${literal(n.schemaName)}, v_version, v_name, COALESCE(v_expected, 'nothing'), ${literal(n.schema)};
  END IF;${steps.join('')}
END
$tickwork_migrate$`;
}
