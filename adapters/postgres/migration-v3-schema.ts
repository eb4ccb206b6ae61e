/**
 * Migration 3: the columns, table and indexes behind fan-out runs, pending
 * timeouts, history TTL and index-bounded history pruning.
 *
 * - `jobs` gains the new spec fields and `kept_succeeded` / `kept_failed`: how many
 *   finished runs of the job the table holds per history limit, so a finish prunes
 *   only when one passes its limit (maintained under the job row's lock).
 * - `runs` gains `claimable` (a claim could take the run once ready: a plain run
 *   while pending, a fan-out run while an index waits and `parallelism` allows),
 *   `pending_until`, `expires_at` and the fan-out shape and counts (NULL for plain runs).
 * - `run_indices` holds one row per started index of a fan-out run.
 *
 * Append-only: never edit this once released; add a migration instead.
 */
import type { SqlNames } from './sql.js';

export const SCHEMA_V3_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const historyOrder = 'job_name, finished_at DESC NULLS LAST, created_at DESC, scheduled_at DESC, id DESC';
  return `
ALTER TABLE ${s}.jobs
  ADD COLUMN pending_timeout_ms bigint,
  ADD COLUMN history_ttl_ms bigint,
  ADD COLUMN fan_out_completions integer,
  ADD COLUMN fan_out_parallelism integer,
  ADD COLUMN fan_out_retry_limit integer,
  ADD COLUMN kept_succeeded integer NOT NULL DEFAULT 0,
  ADD COLUMN kept_failed integer NOT NULL DEFAULT 0;

ALTER TABLE ${s}.runs
  ADD COLUMN claimable boolean NOT NULL DEFAULT false,
  ADD COLUMN pending_until bigint,
  ADD COLUMN expires_at bigint,
  ADD COLUMN fan_out_completions integer,
  ADD COLUMN fan_out_parallelism integer,
  ADD COLUMN fan_out_retry_limit integer,
  ADD COLUMN fan_out_succeeded integer,
  ADD COLUMN fan_out_failed integer,
  ADD COLUMN fan_out_active integer;

UPDATE ${s}.runs SET claimable = true WHERE status = 'pending';
UPDATE ${s}.jobs j SET kept_succeeded = c.ok, kept_failed = c.bad
  FROM (SELECT r.job_name, count(*) FILTER (WHERE r.status = 'succeeded') AS ok,
               count(*) FILTER (WHERE r.status IN ('failed', 'cancelled')) AS bad
        FROM ${s}.runs r GROUP BY r.job_name) c
  WHERE c.job_name = j.name;

CREATE TABLE ${s}.run_indices (
  run_id text COLLATE "C" NOT NULL REFERENCES ${s}.runs (id) ON DELETE CASCADE,
  idx integer NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  attempt integer NOT NULL,
  ready_at bigint NOT NULL,
  started_at bigint,
  finished_at bigint,
  error_name text,
  error_message text,
  owner text,
  lease_until bigint,
  fence bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, idx)
);
-- A fan-out claim's next index among the started ones: pending records in claim order.
CREATE INDEX run_indices_waiting_idx ON ${s}.run_indices (run_id, ready_at, idx) WHERE status = 'pending';
-- Lease recovery of indices.
CREATE INDEX run_indices_lease_idx ON ${s}.run_indices (lease_until) WHERE status = 'running';

-- Due runs and the next wake-up: claimable runs (fan-out runs with an index running included) in claim order.
DROP INDEX ${s}.runs_ready_idx;
CREATE INDEX runs_claimable_idx ON ${s}.runs (ready_at, scheduled_at, id) WHERE claimable;
-- The pending-timeout and TTL sweeps, and their next wake-ups.
CREATE INDEX runs_pending_until_idx ON ${s}.runs (pending_until, id) WHERE pending_until IS NOT NULL;
CREATE INDEX runs_expires_idx ON ${s}.runs (expires_at, id) WHERE expires_at IS NOT NULL;
-- History pruning: a job's finished runs per limit, most recently finished first
-- (pruneHistory's order), so the runs beyond a limit are an OFFSET away.
CREATE INDEX runs_succeeded_history_idx ON ${s}.runs (${historyOrder}) WHERE status = 'succeeded';
CREATE INDEX runs_failed_history_idx ON ${s}.runs (${historyOrder}) WHERE status IN ('failed', 'cancelled');
`;
};
