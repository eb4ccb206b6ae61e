/**
 * Migration 1, the v1 schema: tables, indexes and the store's functions, as one
 * frozen text. It squashes the seven pre-release migrations of 0.1.0 into their end
 * state (less the two-argument `set_suspended` overload, kept then for instances
 * not yet upgraded). See `migrations.ts` for the rules a later migration follows.
 *
 * FROZEN: never edit this text, not even a comment. `test/integration/postgres-schema.test.ts`
 * checks its checksum; a change is a new migration (`CREATE OR REPLACE FUNCTION`,
 * `ALTER TABLE`, ...) carrying its own complete text.
 *
 * Each contract method that must be atomic is ONE statement (`SELECT <schema>.schedule_run(...)`),
 * so it works through any pool, PGlite and transaction poolers. Each function returns its whole
 * result as `json` (instants as plain numbers, not int8 strings) and issues its `pg_notify`
 * itself, so a notification is sent exactly when its write commits. Time only ever comes from
 * the parameters. Lock order is job row, then run row, then index rows, everywhere; the sweeps
 * and batch upserts, the only operations that lock several jobs' rows, take a transaction-level
 * advisory lock per schema first.
 *
 * The helpers mirror the memory store's private steps, so each rule of `src/store-rules.ts`
 * lives in one place here too: `fan_out_next` (`nextWaitingIndex`), `write_fan_out` (an
 * unfinished fan-out run after its indices changed), `end_run` (a run finishing for good, run
 * side), `settle_history` (the job side: counters and `pruneHistory`), `cancel_ahead`
 * (`isCreatedAhead`). Statements that address one run by ID keep the planner on the primary
 * key: a plain run or an index has an `owner` exactly while it runs under a lease, so
 * `owner = $owner` stands for `status = 'running'`, and `claimable IS TRUE` is `claimable` in a
 * form that cannot select `runs_claimable_idx`.
 */
import type { SqlNames } from './sql.js';

export const V1_SCHEMA_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const channel = n.channel;
  const [sweepClass, sweepKey] = n.sweepLock;
  return `
CREATE TABLE ${s}.jobs (
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
  backfills jsonb NOT NULL DEFAULT '[]',
  pending_timeout_ms bigint,
  history_ttl_ms bigint,
  fan_out_completions integer,
  fan_out_parallelism integer,
  fan_out_retry_limit integer,
  -- How many finished runs of the job the table holds per history limit, so a finish prunes
  -- only when one passes its limit (kept under the job row's lock).
  kept_succeeded integer NOT NULL DEFAULT 0,
  kept_failed integer NOT NULL DEFAULT 0
);

CREATE TABLE ${s}.runs (
  id text COLLATE "C" PRIMARY KEY,
  job_name text COLLATE "C" NOT NULL REFERENCES ${s}.jobs (name) ON DELETE CASCADE,
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
  deadline_at bigint,
  -- A claim could take the run once ready: a plain run while pending, a fan-out run while an
  -- index waits and parallelism allows.
  claimable boolean NOT NULL DEFAULT false,
  pending_until bigint,
  expires_at bigint,
  -- The fan-out shape and counts; NULL for plain runs.
  fan_out_completions integer,
  fan_out_parallelism integer,
  fan_out_retry_limit integer,
  fan_out_succeeded integer,
  fan_out_failed integer,
  fan_out_active integer
);

-- One row per started index of a fan-out run.
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

CREATE TABLE ${s}.locks (
  name text COLLATE "C" PRIMARY KEY,
  owner text,
  token bigint NOT NULL,
  lease_until bigint
);

-- Due runs and the next wake-up: claimable runs (fan-out runs with an index running included) in claim order.
CREATE INDEX runs_claimable_idx ON ${s}.runs (ready_at, scheduled_at, id) WHERE claimable;
-- Concurrency policies: a job's active runs.
CREATE INDEX runs_active_idx ON ${s}.runs (job_name) WHERE status IN ('pending', 'running');
-- Lease recovery: running runs by lease expiry.
CREATE INDEX runs_lease_idx ON ${s}.runs (lease_until) WHERE status = 'running';
-- Listing newest first, and the cascade from jobs.
CREATE INDEX runs_listing_idx ON ${s}.runs (job_name, created_at DESC, scheduled_at DESC, id DESC);
-- The pending-timeout and TTL sweeps, and their next wake-ups.
CREATE INDEX runs_pending_until_idx ON ${s}.runs (pending_until, id) WHERE pending_until IS NOT NULL;
CREATE INDEX runs_expires_idx ON ${s}.runs (expires_at, id) WHERE expires_at IS NOT NULL;
-- History pruning: a job's finished runs per limit, most recently finished first
-- (pruneHistory's order), so the runs beyond a limit are an OFFSET away.
CREATE INDEX runs_succeeded_history_idx ON ${s}.runs (job_name, finished_at DESC NULLS LAST, created_at DESC, scheduled_at DESC, id DESC) WHERE status = 'succeeded';
CREATE INDEX runs_failed_history_idx ON ${s}.runs (job_name, finished_at DESC NULLS LAST, created_at DESC, scheduled_at DESC, id DESC) WHERE status IN ('failed', 'cancelled');
-- A fan-out claim's next index among the started ones: pending records in claim order.
CREATE INDEX run_indices_waiting_idx ON ${s}.run_indices (run_id, ready_at, idx) WHERE status = 'pending';
-- Lease recovery of indices.
CREATE INDEX run_indices_lease_idx ON ${s}.run_indices (lease_until) WHERE status = 'running';

CREATE FUNCTION ${s}.notify(payload json) RETURNS void LANGUAGE sql AS $fn$
  SELECT pg_notify('${channel}', payload::text)
$fn$;

CREATE FUNCTION ${s}.run_json(r ${s}.runs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'id', r.id, 'jobName', r.job_name, 'scheduledAt', r.scheduled_at, 'trigger', r.trigger,
    'status', r.status, 'attempt', r.attempt, 'createdAt', r.created_at, 'readyAt', r.ready_at,
    'startedAt', r.started_at, 'finishedAt', r.finished_at,
    'error', CASE WHEN r.error_name IS NULL THEN NULL
                  ELSE json_build_object('name', r.error_name, 'message', r.error_message) END,
    'hasData', r.data IS NOT NULL, 'data', r.data,
    'owner', r.owner, 'leaseUntil', r.lease_until, 'fence', r.fence, 'deadlineAt', r.deadline_at,
    'fanOut', CASE WHEN r.fan_out_completions IS NULL THEN NULL
                   ELSE json_build_object('completions', r.fan_out_completions, 'parallelism', r.fan_out_parallelism,
                     'retryLimit', r.fan_out_retry_limit, 'succeeded', r.fan_out_succeeded, 'failed', r.fan_out_failed,
                     'active', r.fan_out_active) END,
    'pendingUntil', r.pending_until, 'expiresAt', r.expires_at)
$fn$;

CREATE FUNCTION ${s}.index_json(i ${s}.run_indices) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'runId', i.run_id, 'index', i.idx, 'status', i.status, 'attempt', i.attempt, 'readyAt', i.ready_at,
    'startedAt', i.started_at, 'finishedAt', i.finished_at,
    'error', CASE WHEN i.error_name IS NULL THEN NULL
                  ELSE json_build_object('name', i.error_name, 'message', i.error_message) END,
    'owner', i.owner, 'leaseUntil', i.lease_until, 'fence', i.fence)
$fn$;

CREATE FUNCTION ${s}.job_json(j ${s}.jobs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'name', j.name, 'schedule', j.schedule, 'timezone', j.timezone,
    'concurrencyPolicy', j.concurrency_policy, 'startingDeadlineMs', j.starting_deadline_ms,
    'fanOut', CASE WHEN j.fan_out_completions IS NULL THEN NULL
                   ELSE json_build_object('completions', j.fan_out_completions, 'parallelism', j.fan_out_parallelism,
                     'retryLimit', j.fan_out_retry_limit) END,
    'pendingTimeoutMs', j.pending_timeout_ms,
    'history', json_strip_nulls(json_build_object('succeeded', j.history_succeeded, 'failed', j.history_failed,
                 'ttlMs', j.history_ttl_ms)),
    'suspended', j.suspended, 'createdAt', j.created_at, 'cursor', j.cursor_at,
    'lastScheduleTime', j.last_schedule_time, 'lastSuccessfulTime', j.last_successful_time,
    'succeeded', j.succeeded, 'failed', j.failed, 'skipped', j.skipped, 'backfills', j.backfills)
$fn$;

-- nextWaitingIndex: the waiting index a claim takes (earliest ready, ties by lowest index), or NULLs.
-- Claims take never-started indices lowest first (they all tie, ready from the run's creation), so
-- the started indices are always 0 .. n-1 and the lowest never-started one is n: two index probes.
CREATE FUNCTION ${s}.fan_out_next(p_run_id text, p_created_at bigint, p_completions integer,
    OUT o_idx integer, OUT o_ready_at bigint) LANGUAGE plpgsql STABLE AS $fn$
DECLARE v_fresh integer;
BEGIN
  SELECT i.idx, i.ready_at INTO o_idx, o_ready_at FROM ${s}.run_indices i
    WHERE i.run_id = p_run_id AND i.status = 'pending' ORDER BY i.ready_at, i.idx LIMIT 1;
  v_fresh := COALESCE((SELECT i.idx FROM ${s}.run_indices i WHERE i.run_id = p_run_id ORDER BY i.idx DESC LIMIT 1), -1) + 1;
  IF v_fresh < p_completions AND (o_idx IS NULL OR (p_created_at, v_fresh) < (o_ready_at, o_idx)) THEN
    o_idx := v_fresh;
    o_ready_at := p_created_at;
  END IF;
END
$fn$;

-- Writes an unfinished fan-out run whose index records were just written: running while an index
-- runs, readyAt of the next waiting index (kept when none waits), claimable while one waits and
-- parallelism allows, pendingUntil by the pendingUntil rule, and run-ready when left claimable.
CREATE FUNCTION ${s}.write_fan_out(p_run ${s}.runs, p_now bigint) RETURNS ${s}.runs LANGUAGE plpgsql AS $fn$
DECLARE v_next record; v_claimable boolean; v_ready bigint; v_run ${s}.runs;
BEGIN
  SELECT * INTO v_next FROM ${s}.fan_out_next(p_run.id, p_run.created_at, p_run.fan_out_completions);
  v_claimable := p_run.fan_out_active < p_run.fan_out_parallelism AND v_next.o_idx IS NOT NULL;
  v_ready := COALESCE(v_next.o_ready_at, p_run.ready_at);
  UPDATE ${s}.runs SET status = CASE WHEN p_run.fan_out_active > 0 THEN 'running' ELSE 'pending' END,
      ready_at = v_ready, started_at = p_run.started_at, deadline_at = p_run.deadline_at,
      fan_out_succeeded = p_run.fan_out_succeeded, fan_out_failed = p_run.fan_out_failed,
      fan_out_active = p_run.fan_out_active, claimable = v_claimable,
      pending_until = CASE WHEN v_claimable THEN GREATEST(v_ready, p_now)
                        + (SELECT j.pending_timeout_ms FROM ${s}.jobs j WHERE j.name = p_run.job_name) END
    WHERE id = p_run.id
    RETURNING * INTO v_run;
  IF v_claimable THEN
    PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
  END IF;
  RETURN v_run;
END
$fn$;

-- Finishes a run for good, run side: its unfinished index records cancelled (fencing out their
-- owners), lease and pendingUntil cleared, expiresAt set (p_ttl: the job's history TTL), and
-- run-finished sent. A success clears an earlier attempt's error; a cancellation keeps it.
-- The caller holds the job row and settles the job side with settle_history. (finish_attempt
-- writes a plain run's final outcome itself, fenced, in one UPDATE with the same fields.)
CREATE FUNCTION ${s}.end_run(p_run ${s}.runs, p_status text, p_error_name text, p_error_message text, p_now bigint,
    p_ttl bigint) RETURNS ${s}.runs LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs;
BEGIN
  IF p_run.fan_out_completions IS NOT NULL THEN
    UPDATE ${s}.run_indices SET status = 'cancelled', finished_at = p_now, owner = NULL, lease_until = NULL
      WHERE run_id = p_run.id AND status IN ('pending', 'running');
  END IF;
  UPDATE ${s}.runs SET status = p_status, finished_at = p_now,
      error_name = CASE p_status WHEN 'failed' THEN p_error_name WHEN 'cancelled' THEN error_name END,
      error_message = CASE p_status WHEN 'failed' THEN p_error_message WHEN 'cancelled' THEN error_message END,
      owner = NULL, lease_until = NULL, claimable = false, pending_until = NULL, expires_at = p_now + p_ttl,
      fan_out_succeeded = p_run.fan_out_succeeded, fan_out_failed = p_run.fan_out_failed,
      fan_out_active = CASE WHEN p_run.fan_out_completions IS NULL THEN NULL ELSE 0 END
    WHERE id = p_run.id
    RETURNING * INTO v_run;
  PERFORM ${s}.notify(json_build_object('type', 'run-finished', 'jobName', v_run.job_name, 'runId', v_run.id,
    'status', v_run.status));
  RETURN v_run;
END
$fn$;

-- The job side of p_count runs finishing with p_status (p_job: the job's row, locked by the caller):
-- counters, lastSuccessfulTime, and history pruning in one write of the job row. kept_* count the
-- job's finished runs per limit, so pruning happens only when one passes its limit, and deletes just
-- the runs beyond it: OFFSET limit LIMIT excess along that limit's history index, in pruneHistory's
-- order, each by primary key. Every write that finishes or deletes a run holds the job row and keeps
-- kept_* exact; should they ever run ahead (rows deleted by hand), a prune that finds nothing beyond
-- the limit recounts.
CREATE FUNCTION ${s}.settle_history(p_job ${s}.jobs, p_status text, p_count integer, p_now bigint)
  RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_ok integer := p_job.kept_succeeded + CASE WHEN p_status = 'succeeded' THEN p_count ELSE 0 END;
  v_bad integer := p_job.kept_failed + CASE WHEN p_status = 'succeeded' THEN 0 ELSE p_count END;
  v_id text;
  v_deleted integer;
BEGIN
  IF v_ok > p_job.history_succeeded THEN
    v_deleted := 0;
    FOR v_id IN SELECT f.id FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status = 'succeeded'
        ORDER BY f.finished_at DESC NULLS LAST, f.created_at DESC, f.scheduled_at DESC, f.id DESC OFFSET p_job.history_succeeded LIMIT v_ok - p_job.history_succeeded LOOP
      DELETE FROM ${s}.runs WHERE id = v_id;
      IF FOUND THEN v_deleted := v_deleted + 1; END IF;
    END LOOP;
    -- Nothing beyond the limit: the count ran ahead, take the real one (at most the limit).
    v_ok := CASE WHEN v_deleted > 0 THEN p_job.history_succeeded
                 ELSE (SELECT count(*) FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status = 'succeeded') END;
  END IF;
  IF v_bad > p_job.history_failed THEN
    v_deleted := 0;
    FOR v_id IN SELECT f.id FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status IN ('failed', 'cancelled')
        ORDER BY f.finished_at DESC NULLS LAST, f.created_at DESC, f.scheduled_at DESC, f.id DESC OFFSET p_job.history_failed LIMIT v_bad - p_job.history_failed LOOP
      DELETE FROM ${s}.runs WHERE id = v_id;
      IF FOUND THEN v_deleted := v_deleted + 1; END IF;
    END LOOP;
    v_bad := CASE WHEN v_deleted > 0 THEN p_job.history_failed
                  ELSE (SELECT count(*) FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status IN ('failed', 'cancelled')) END;
  END IF;
  UPDATE ${s}.jobs SET
      succeeded = succeeded + CASE WHEN p_status = 'succeeded' THEN p_count ELSE 0 END,
      failed = failed + CASE WHEN p_status = 'failed' THEN p_count ELSE 0 END,
      last_successful_time = CASE WHEN p_status = 'succeeded' THEN p_now ELSE last_successful_time END,
      kept_succeeded = v_ok, kept_failed = v_bad
    WHERE name = p_job.name;
END
$fn$;

-- Suspending p_job (its row, locked by the caller): cancels its runs created ahead of a tick
-- still to come, settles their history, and returns them as run_json, oldest first.
CREATE FUNCTION ${s}.cancel_ahead(p_job ${s}.jobs, p_now bigint) RETURNS json[] LANGUAGE plpgsql AS $fn$
DECLARE v_cancel ${s}.runs; v_cancelled json[] := '{}';
BEGIN
  FOR v_cancel IN SELECT * FROM ${s}.runs c
      WHERE c.job_name = p_job.name AND c.status = 'pending' AND c.trigger = 'schedule' AND c.scheduled_at > p_now
      ORDER BY c.created_at, c.scheduled_at, c.id FOR UPDATE LOOP
    v_cancel := ${s}.end_run(v_cancel, 'cancelled', NULL, NULL, p_now, p_job.history_ttl_ms);
    v_cancelled := v_cancelled || ${s}.run_json(v_cancel);
  END LOOP;
  IF cardinality(v_cancelled) > 0 THEN
    PERFORM ${s}.settle_history(p_job, 'cancelled', cardinality(v_cancelled), p_now);
  END IF;
  RETURN v_cancelled;
END
$fn$;

CREATE FUNCTION ${s}.upsert_job(p_job text, p_schedule jsonb, p_timezone text, p_policy text, p_deadline bigint,
    p_history_succeeded integer, p_history_failed integer, p_history_ttl bigint, p_pending_timeout bigint,
    p_fan_out_completions integer, p_fan_out_parallelism integer, p_fan_out_retry_limit integer,
    p_now bigint, p_cursor bigint, p_suspended boolean)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_created boolean; v_cancelled json[] := '{}';
BEGIN
  INSERT INTO ${s}.jobs AS t (name, schedule, timezone, concurrency_policy, starting_deadline_ms,
      history_succeeded, history_failed, history_ttl_ms, pending_timeout_ms,
      fan_out_completions, fan_out_parallelism, fan_out_retry_limit, suspended, created_at, cursor_at)
    VALUES (p_job, p_schedule, p_timezone, p_policy, p_deadline, p_history_succeeded, p_history_failed, p_history_ttl,
      p_pending_timeout, p_fan_out_completions, p_fan_out_parallelism, p_fan_out_retry_limit,
      COALESCE(p_suspended, false), p_now, p_cursor)
    ON CONFLICT (name) DO UPDATE SET schedule = EXCLUDED.schedule, timezone = EXCLUDED.timezone,
      concurrency_policy = EXCLUDED.concurrency_policy, starting_deadline_ms = EXCLUDED.starting_deadline_ms,
      history_succeeded = EXCLUDED.history_succeeded, history_failed = EXCLUDED.history_failed,
      history_ttl_ms = EXCLUDED.history_ttl_ms, pending_timeout_ms = EXCLUDED.pending_timeout_ms,
      fan_out_completions = EXCLUDED.fan_out_completions, fan_out_parallelism = EXCLUDED.fan_out_parallelism,
      fan_out_retry_limit = EXCLUDED.fan_out_retry_limit,
      suspended = COALESCE(p_suspended, t.suspended)
    RETURNING (t.xmax = 0) INTO v_created;
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job;
  IF NOT v_created AND p_suspended IS TRUE THEN
    v_cancelled := ${s}.cancel_ahead(v_job, p_now);
    IF cardinality(v_cancelled) > 0 THEN SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job; END IF;
  END IF;
  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN json_build_object('job', ${s}.job_json(v_job), 'created', v_created, 'cancelled', CASE WHEN cardinality(v_cancelled) > 0 THEN array_to_json(v_cancelled) END);
END
$fn$;

-- p_inputs: [{name, schedule, timezone, policy, deadline, historySucceeded, historyFailed, historyTtl,
--   pendingTimeout, fanOutCompletions, fanOutParallelism, fanOutRetryLimit, now, cursor, suspended}, ...]
-- with JSON null for an absent optional value.
CREATE FUNCTION ${s}.upsert_jobs(p_inputs jsonb) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_input jsonb; v_results json[] := '{}';
BEGIN
  IF jsonb_array_length(p_inputs) > 1 THEN
    PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});
  END IF;
  FOR v_input IN SELECT e.value FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e ORDER BY e.ordinality LOOP
    v_results := v_results || ${s}.upsert_job(v_input->>'name', v_input->'schedule', v_input->>'timezone',
      v_input->>'policy', (v_input->>'deadline')::bigint, (v_input->>'historySucceeded')::integer,
      (v_input->>'historyFailed')::integer, (v_input->>'historyTtl')::bigint, (v_input->>'pendingTimeout')::bigint,
      (v_input->>'fanOutCompletions')::integer, (v_input->>'fanOutParallelism')::integer,
      (v_input->>'fanOutRetryLimit')::integer, (v_input->>'now')::bigint, (v_input->>'cursor')::bigint,
      (v_input->>'suspended')::boolean);
  END LOOP;
  RETURN to_json(v_results);
END
$fn$;

-- Suspends or resumes p_job; suspending cancels its runs created ahead of a tick still to come.
CREATE FUNCTION ${s}.set_suspended(p_job text, p_suspended boolean, p_now bigint) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_cancelled json[] := '{}';
BEGIN
  UPDATE ${s}.jobs SET suspended = p_suspended WHERE name = p_job RETURNING * INTO v_job;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF p_suspended THEN
    v_cancelled := ${s}.cancel_ahead(v_job, p_now);
    IF cardinality(v_cancelled) > 0 THEN SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job; END IF;
  END IF;
  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN json_build_object('job', ${s}.job_json(v_job), 'cancelled', array_to_json(v_cancelled));
END
$fn$;

CREATE FUNCTION ${s}.remove_job(p_job text) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.jobs WHERE name = p_job;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN true;
END
$fn$;

CREATE FUNCTION ${s}.add_backfill(p_job text, p_id text, p_next bigint, p_to bigint) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs;
BEGIN
  UPDATE ${s}.jobs SET backfills = backfills || jsonb_build_array(jsonb_build_object('id', p_id, 'next', p_next, 'to', p_to))
    WHERE name = p_job RETURNING * INTO v_job;
  IF NOT FOUND THEN RETURN NULL; END IF;
  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN ${s}.job_json(v_job);
END
$fn$;

CREATE FUNCTION ${s}.schedule_run(p_job text, p_expected bigint, p_cursor bigint, p_run_id text,
    p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_active text[]; v_cancel ${s}.runs; v_cancelled json[] := '{}';
BEGIN
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR UPDATE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'conflict'); END IF;
  IF v_job.suspended OR v_job.cursor_at <> p_expected THEN
    RETURN json_build_object('outcome', 'conflict', 'job', ${s}.job_json(v_job));
  END IF;
  IF p_run_id IS NULL THEN
    UPDATE ${s}.jobs SET cursor_at = p_cursor, last_schedule_time = p_cursor WHERE name = p_job RETURNING * INTO v_job;
    RETURN json_build_object('outcome', 'advanced', 'job', ${s}.job_json(v_job));
  END IF;
  SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
  IF FOUND THEN
    UPDATE ${s}.jobs SET cursor_at = p_cursor, last_schedule_time = p_cursor WHERE name = p_job RETURNING * INTO v_job;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  SELECT COALESCE(array_agg(a.id ORDER BY a.created_at, a.scheduled_at, a.id), '{}') INTO v_active
    FROM ${s}.runs a WHERE a.job_name = p_job AND a.status IN ('pending', 'running');
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'Forbid' THEN
    UPDATE ${s}.jobs SET skipped = skipped + 1, cursor_at = p_cursor, last_schedule_time = p_cursor
      WHERE name = p_job RETURNING * INTO v_job;
    RETURN json_build_object('outcome', 'skipped', 'job', ${s}.job_json(v_job), 'active', to_json(v_active));
  END IF;
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'CatchUp' THEN
    RETURN json_build_object('outcome', 'blocked', 'job', ${s}.job_json(v_job), 'active', to_json(v_active));
  END IF;
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'Replace' THEN
    FOR v_cancel IN SELECT * FROM ${s}.runs c WHERE c.id = ANY (v_active)
        ORDER BY c.created_at, c.scheduled_at, c.id FOR UPDATE LOOP
      v_cancel := ${s}.end_run(v_cancel, 'cancelled', NULL, NULL, p_now, v_job.history_ttl_ms);
      v_cancelled := v_cancelled || ${s}.run_json(v_cancel);
    END LOOP;
  END IF;
  INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, data, fence,
      claimable, pending_until, fan_out_completions, fan_out_parallelism, fan_out_retry_limit,
      fan_out_succeeded, fan_out_failed, fan_out_active)
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, GREATEST(p_now, p_scheduled_at), p_data, 0,
      true, GREATEST(p_now, p_scheduled_at) + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism, v_job.fan_out_retry_limit,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END)
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;
  IF NOT FOUND THEN
    -- Another job's manual run took this ID in the meantime: same as finding it above.
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    UPDATE ${s}.jobs SET cursor_at = p_cursor, last_schedule_time = p_cursor WHERE name = p_job RETURNING * INTO v_job;
    IF cardinality(v_cancelled) > 0 THEN
      PERFORM ${s}.settle_history(v_job, 'cancelled', cardinality(v_cancelled), p_now);
    END IF;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  UPDATE ${s}.jobs SET cursor_at = p_cursor, last_schedule_time = p_cursor WHERE name = p_job RETURNING * INTO v_job;
  IF cardinality(v_cancelled) > 0 THEN
    PERFORM ${s}.settle_history(v_job, 'cancelled', cardinality(v_cancelled), p_now);
  END IF;
  PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run),
    'cancelled', array_to_json(v_cancelled));
END
$fn$;

CREATE FUNCTION ${s}.create_run(p_run_id text, p_job text, p_scheduled_at bigint, p_trigger text, p_data json,
    p_now bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs;
BEGIN
  -- A share lock on the job orders this insert against schedule_run's checks.
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR SHARE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'missing-job'); END IF;
  INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, data, fence,
      claimable, pending_until, fan_out_completions, fan_out_parallelism, fan_out_retry_limit,
      fan_out_succeeded, fan_out_failed, fan_out_active)
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, p_now, p_data, 0,
      true, p_now + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism, v_job.fan_out_retry_limit,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END)
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'run', ${s}.run_json(v_run));
  END IF;
  PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
  RETURN json_build_object('outcome', 'created', 'run', ${s}.run_json(v_run));
END
$fn$;

CREATE FUNCTION ${s}.schedule_backfill_run(p_job text, p_backfill_id text, p_expected_next bigint, p_next bigint,
    p_run_id text, p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_first jsonb;
BEGIN
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR UPDATE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'conflict'); END IF;
  v_first := v_job.backfills -> 0;
  IF v_job.suspended OR v_first IS NULL OR v_first ->> 'id' IS DISTINCT FROM p_backfill_id
     OR (v_first ->> 'next')::bigint IS DISTINCT FROM p_expected_next THEN
    RETURN json_build_object('outcome', 'conflict', 'job', ${s}.job_json(v_job));
  END IF;
  IF EXISTS (SELECT 1 FROM ${s}.runs a WHERE a.job_name = p_job AND a.status IN ('pending', 'running')
             AND a.trigger = 'backfill') THEN
    RETURN json_build_object('outcome', 'blocked', 'job', ${s}.job_json(v_job));
  END IF;
  UPDATE ${s}.jobs SET backfills = CASE WHEN p_next IS NULL THEN backfills - 0
                                        ELSE jsonb_set(backfills, '{0,next}', to_jsonb(p_next)) END
    WHERE name = p_job RETURNING * INTO v_job;
  INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, data, fence,
      claimable, pending_until, fan_out_completions, fan_out_parallelism, fan_out_retry_limit,
      fan_out_succeeded, fan_out_failed, fan_out_active)
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, p_now, p_data, 0,
      true, p_now + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism, v_job.fan_out_retry_limit,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END)
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
END
$fn$;

CREATE FUNCTION ${s}.claim_run(p_run_id text, p_owner text, p_now bigint, p_lease_until bigint, p_deadline_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs; v_next record; v_index ${s}.run_indices;
BEGIN
  -- A plain run: one UPDATE; racing claims queue on the row and re-check.
  UPDATE ${s}.runs r SET status = 'running', owner = p_owner, lease_until = p_lease_until, fence = r.fence + 1,
      started_at = COALESCE(r.started_at, p_now), deadline_at = COALESCE(r.deadline_at, p_deadline_at),
      claimable = false, pending_until = NULL
    WHERE r.id = p_run_id AND r.claimable IS TRUE AND r.ready_at <= p_now AND r.fan_out_completions IS NULL
    RETURNING * INTO v_run;
  IF FOUND THEN RETURN json_build_object('run', ${s}.run_json(v_run)); END IF;
  -- A fan-out run. The unlocked look first spares the row lock (and its WAL record) when the run
  -- is plain, or plainly not claimable (say, at parallelism with other claimers polling it).
  PERFORM 1 FROM ${s}.runs r
    WHERE r.id = p_run_id AND r.fan_out_completions IS NOT NULL AND r.claimable IS TRUE AND r.ready_at <= p_now;
  IF NOT FOUND THEN RETURN NULL; END IF;
  SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id FOR UPDATE;
  IF NOT FOUND OR NOT v_run.claimable OR v_run.ready_at > p_now THEN RETURN NULL; END IF;
  SELECT * INTO v_next FROM ${s}.fan_out_next(v_run.id, v_run.created_at, v_run.fan_out_completions);
  IF v_next.o_idx IS NULL OR v_next.o_ready_at > p_now THEN RETURN NULL; END IF;
  -- A first claim creates the record (attempt 1, fence 0, claimed: fence 1); a re-claim adopts it.
  INSERT INTO ${s}.run_indices AS i (run_id, idx, status, attempt, ready_at, started_at, owner, lease_until, fence)
    VALUES (v_run.id, v_next.o_idx, 'running', 1, v_next.o_ready_at, p_now, p_owner, p_lease_until, 1)
    ON CONFLICT (run_id, idx) DO UPDATE SET status = 'running', owner = p_owner, lease_until = p_lease_until,
      fence = i.fence + 1, started_at = COALESCE(i.started_at, p_now)
    RETURNING * INTO v_index;
  v_run.fan_out_active := v_run.fan_out_active + 1;
  v_run.started_at := COALESCE(v_run.started_at, p_now);
  v_run.deadline_at := COALESCE(v_run.deadline_at, p_deadline_at);
  v_run := ${s}.write_fan_out(v_run, p_now);
  RETURN json_build_object('run', ${s}.run_json(v_run), 'index', ${s}.index_json(v_index));
END
$fn$;

CREATE FUNCTION ${s}.renew_lease(p_run_id text, p_index integer, p_owner text, p_fence bigint, p_lease_until bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_status text;
BEGIN
  IF p_index IS NULL THEN
    UPDATE ${s}.runs SET lease_until = p_lease_until
      WHERE id = p_run_id AND owner = p_owner AND fence = p_fence AND fan_out_completions IS NULL;
    IF FOUND THEN RETURN json_build_object('ok', true); END IF;
    SELECT r.status INTO v_status FROM ${s}.runs r WHERE r.id = p_run_id;
  ELSE
    UPDATE ${s}.run_indices SET lease_until = p_lease_until
      WHERE run_id = p_run_id AND idx = p_index AND owner = p_owner AND fence = p_fence;
    IF FOUND THEN RETURN json_build_object('ok', true); END IF;
    SELECT i.status INTO v_status FROM ${s}.run_indices i WHERE i.run_id = p_run_id AND i.idx = p_index;
  END IF;
  RETURN json_build_object('ok', false, 'status', v_status);
END
$fn$;

-- An attempt of index p_index of fan-out run p_run (locked) ended; p_job is the job's locked row
-- (NULL for 'released', which never finishes the run). Fenced by the index's owner and fence.
CREATE FUNCTION ${s}.finish_index(p_job ${s}.jobs, p_run ${s}.runs, p_index integer, p_owner text, p_fence bigint,
    p_now bigint, p_status text, p_error_name text, p_error_message text, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs := p_run; v_index ${s}.run_indices;
BEGIN
  SELECT * INTO v_index FROM ${s}.run_indices WHERE run_id = p_run.id AND idx = p_index FOR UPDATE;
  IF NOT FOUND OR v_index.status <> 'running' OR v_index.owner IS DISTINCT FROM p_owner OR v_index.fence <> p_fence THEN
    RETURN json_build_object('ok', false, 'run', ${s}.run_json(p_run));
  END IF;
  v_run.fan_out_active := v_run.fan_out_active - 1;
  IF p_status = 'succeeded' THEN
    UPDATE ${s}.run_indices SET status = 'succeeded', finished_at = p_now, error_name = NULL, error_message = NULL,
        owner = NULL, lease_until = NULL
      WHERE run_id = p_run.id AND idx = p_index RETURNING * INTO v_index;
    v_run.fan_out_succeeded := v_run.fan_out_succeeded + 1;
    IF v_run.fan_out_succeeded >= v_run.fan_out_completions THEN
      v_run := ${s}.end_run(v_run, 'succeeded', NULL, NULL, p_now, p_job.history_ttl_ms);
      PERFORM ${s}.settle_history(p_job, 'succeeded', 1, p_now);
    ELSE
      v_run := ${s}.write_fan_out(v_run, p_now);
    END IF;
  ELSIF p_status = 'released' THEN
    UPDATE ${s}.run_indices SET status = 'pending', ready_at = p_now, owner = NULL, lease_until = NULL
      WHERE run_id = p_run.id AND idx = p_index RETURNING * INTO v_index;
    v_run := ${s}.write_fan_out(v_run, p_now);
  ELSE
    v_run.fan_out_failed := v_run.fan_out_failed + 1;
    IF p_status = 'retry' AND v_run.fan_out_failed <= v_run.fan_out_retry_limit THEN
      UPDATE ${s}.run_indices SET status = 'pending', attempt = attempt + 1, ready_at = p_ready_at,
          error_name = p_error_name, error_message = p_error_message, owner = NULL, lease_until = NULL
        WHERE run_id = p_run.id AND idx = p_index RETURNING * INTO v_index;
      v_run := ${s}.write_fan_out(v_run, p_now);
    ELSE
      UPDATE ${s}.run_indices SET status = 'failed', finished_at = p_now,
          error_name = p_error_name, error_message = p_error_message, owner = NULL, lease_until = NULL
        WHERE run_id = p_run.id AND idx = p_index RETURNING * INTO v_index;
      v_run := ${s}.end_run(v_run, 'failed', p_error_name, p_error_message, p_now, p_job.history_ttl_ms);
      PERFORM ${s}.settle_history(p_job, 'failed', 1, p_now);
    END IF;
  END IF;
  RETURN json_build_object('ok', true, 'run', ${s}.run_json(v_run), 'index', ${s}.index_json(v_index));
END
$fn$;

CREATE FUNCTION ${s}.finish_attempt(p_run_id text, p_index integer, p_owner text, p_fence bigint, p_now bigint,
    p_status text, p_error_name text, p_error_message text, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_final boolean := p_status IN ('succeeded', 'failed');
BEGIN
  IF v_final OR (p_index IS NOT NULL AND p_status = 'retry') THEN
    -- Job row first (counters, pruning), then the run: the same order as schedule_run.
    SELECT j.* INTO v_job FROM ${s}.jobs j WHERE j.name = (SELECT r.job_name FROM ${s}.runs r WHERE r.id = p_run_id)
      FOR UPDATE;
  END IF;
  IF p_index IS NOT NULL THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN RETURN json_build_object('ok', false); END IF;
    RETURN ${s}.finish_index(v_job, v_run, p_index, p_owner, p_fence, p_now, p_status, p_error_name, p_error_message,
      p_ready_at);
  END IF;
  -- A plain run: one fenced UPDATE (no lock-then-write). A final outcome is end_run's write for a
  -- run without indices (a success clears the error: p_error_name is NULL then); a retry or a
  -- release leaves it pending, claimable: with attempt + 1 at its readyAt, or as it was, ready now.
  IF v_final THEN
    UPDATE ${s}.runs r SET status = p_status, finished_at = p_now, error_name = p_error_name,
        error_message = p_error_message, owner = NULL, lease_until = NULL, claimable = false, pending_until = NULL,
        expires_at = p_now + v_job.history_ttl_ms
      WHERE r.id = p_run_id AND r.owner = p_owner AND r.fence = p_fence AND r.fan_out_completions IS NULL
      RETURNING * INTO v_run;
  ELSE
    UPDATE ${s}.runs r SET status = 'pending', attempt = r.attempt + CASE WHEN p_status = 'retry' THEN 1 ELSE 0 END,
        ready_at = COALESCE(p_ready_at, p_now),
        error_name = CASE WHEN p_status = 'retry' THEN p_error_name ELSE r.error_name END,
        error_message = CASE WHEN p_status = 'retry' THEN p_error_message ELSE r.error_message END,
        owner = NULL, lease_until = NULL, claimable = true,
        pending_until = GREATEST(COALESCE(p_ready_at, p_now), p_now)
          + (SELECT j.pending_timeout_ms FROM ${s}.jobs j WHERE j.name = r.job_name)
      WHERE r.id = p_run_id AND r.owner = p_owner AND r.fence = p_fence AND r.fan_out_completions IS NULL
      RETURNING * INTO v_run;
  END IF;
  IF NOT FOUND THEN
    -- Fenced out (or a fan-out run without its index): nothing written.
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    IF NOT FOUND THEN RETURN json_build_object('ok', false); END IF;
    RETURN json_build_object('ok', false, 'run', ${s}.run_json(v_run));
  END IF;
  IF v_final THEN
    PERFORM ${s}.notify(json_build_object('type', 'run-finished', 'jobName', v_run.job_name, 'runId', v_run.id,
      'status', v_run.status));
    PERFORM ${s}.settle_history(v_job, p_status, 1, p_now);
  ELSE
    PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
  END IF;
  RETURN json_build_object('ok', true, 'run', ${s}.run_json(v_run));
END
$fn$;

-- Expired leases of plain runs and of indices, earliest first (compareExpiredLeases), each recovered
-- under its job's and run's locks after a re-check; an index recovery is an index retry at p_now.
CREATE FUNCTION ${s}.recover_expired_runs(p_now bigint, p_limit integer, p_error_name text, p_error_message text)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_lease record; v_job ${s}.jobs; v_run ${s}.runs; v_index ${s}.run_indices; v_out json[] := '{}';
BEGIN
  PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});
  FOR v_lease IN
    SELECT e.id AS run_id, NULL::integer AS idx, e.lease_until, e.job_name FROM ${s}.runs e
      WHERE e.status = 'running' AND e.lease_until < p_now AND e.fan_out_completions IS NULL
    UNION ALL
    SELECT i.run_id, i.idx, i.lease_until, r.job_name FROM ${s}.run_indices i JOIN ${s}.runs r ON r.id = i.run_id
      WHERE i.status = 'running' AND i.lease_until < p_now
    ORDER BY lease_until, run_id, idx NULLS FIRST
  LOOP
    EXIT WHEN cardinality(v_out) >= p_limit;
    SELECT * INTO v_job FROM ${s}.jobs WHERE name = v_lease.job_name FOR UPDATE;
    SELECT * INTO v_run FROM ${s}.runs WHERE id = v_lease.run_id FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    IF v_lease.idx IS NULL THEN
      CONTINUE WHEN v_run.status <> 'running' OR NOT (v_run.lease_until < p_now);
      UPDATE ${s}.runs SET status = 'pending', attempt = attempt + 1, ready_at = p_now,
          error_name = p_error_name, error_message = p_error_message, owner = NULL, lease_until = NULL,
          claimable = true, pending_until = p_now + v_job.pending_timeout_ms
        WHERE id = v_run.id RETURNING * INTO v_run;
      PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
      v_out := v_out || ${s}.run_json(v_run);
    ELSE
      -- An earlier recovery in this call may have failed the run, cancelling this index.
      SELECT * INTO v_index FROM ${s}.run_indices WHERE run_id = v_lease.run_id AND idx = v_lease.idx FOR UPDATE;
      CONTINUE WHEN NOT FOUND OR v_index.status <> 'running' OR NOT (v_index.lease_until < p_now);
      v_out := v_out || (${s}.finish_index(v_job, v_run, v_index.idx, v_index.owner, v_index.fence, p_now, 'retry',
        p_error_name, p_error_message, p_now) -> 'run');
    END IF;
  END LOOP;
  RETURN array_to_json(v_out);
END
$fn$;

-- Claimable runs whose pendingUntil passed fail (comparePendingUntil order), as a final failure does.
CREATE FUNCTION ${s}.expire_pending_runs(p_now bigint, p_limit integer, p_error_name text, p_error_message text)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_due record; v_job ${s}.jobs; v_run ${s}.runs; v_out json[] := '{}';
BEGIN
  PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});
  FOR v_due IN SELECT e.id, e.job_name FROM ${s}.runs e WHERE e.pending_until <= p_now
      ORDER BY e.pending_until, e.id LIMIT p_limit LOOP
    SELECT * INTO v_job FROM ${s}.jobs WHERE name = v_due.job_name FOR UPDATE;
    SELECT * INTO v_run FROM ${s}.runs WHERE id = v_due.id FOR UPDATE;
    CONTINUE WHEN NOT FOUND OR NOT (v_run.pending_until <= p_now);
    v_run := ${s}.end_run(v_run, 'failed', p_error_name, p_error_message, p_now, v_job.history_ttl_ms);
    PERFORM ${s}.settle_history(v_job, 'failed', 1, p_now);
    v_out := v_out || ${s}.run_json(v_run);
  END LOOP;
  RETURN json_build_object('runs', array_to_json(v_out),
    'nextAt', (SELECT min(e.pending_until) FROM ${s}.runs e WHERE e.pending_until IS NOT NULL));
END
$fn$;

-- Finished runs whose expiresAt passed are deleted (compareExpiresAt order, index records by cascade),
-- and their jobs' kept counts follow.
CREATE FUNCTION ${s}.delete_expired_runs(p_now bigint, p_limit integer) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE v_ids text[]; v_count integer;
BEGIN
  PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});
  SELECT array_agg(e.id) INTO v_ids
    FROM (SELECT x.id FROM ${s}.runs x WHERE x.expires_at <= p_now ORDER BY x.expires_at, x.id LIMIT p_limit) e;
  IF v_ids IS NULL THEN RETURN 0; END IF;
  PERFORM 1 FROM ${s}.jobs j WHERE j.name IN (SELECT r.job_name FROM ${s}.runs r WHERE r.id = ANY (v_ids))
    ORDER BY j.name FOR UPDATE OF j;
  WITH gone AS (
    -- Re-checked (an ID picked above may since have been pruned and created again), in a form that
    -- keeps the planner on the primary key.
    DELETE FROM ${s}.runs r WHERE r.id = ANY (v_ids) AND (r.expires_at <= p_now) IS TRUE RETURNING r.job_name, r.status
  ), counts AS (
    SELECT g.job_name, count(*) FILTER (WHERE g.status = 'succeeded') AS ok,
           count(*) FILTER (WHERE g.status <> 'succeeded') AS bad
      FROM gone g GROUP BY g.job_name
  ), settled AS (
    UPDATE ${s}.jobs j SET kept_succeeded = j.kept_succeeded - c.ok, kept_failed = j.kept_failed - c.bad
      FROM counts c WHERE j.name = c.job_name
  )
  SELECT COALESCE(sum(c.ok + c.bad), 0) INTO v_count FROM counts c;
  RETURN v_count;
END
$fn$;
`;
};
