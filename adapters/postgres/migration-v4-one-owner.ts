/**
 * Migration 4: each decision in one place (issue 15, item 1).
 *
 * - The retry limit travels in the job spec for every job: `jobs.fan_out_retry_limit`
 *   becomes `jobs.retry_limit` (`JobSpec.retryLimit`, NULL: not limited), and the store
 *   decides with it for plain runs too: `finish_attempt` fails a plain run whose
 *   attempt beyond the limit asks for a retry, and `recover_expired_runs` fails a plain
 *   run whose lost attempt was its last (`withinRetryLimit` in store-rules.ts). A fan-out
 *   run still copies the limit into `runs.fan_out_retry_limit` when it is created.
 * - Runs are created at the `readyAt` the core hands in (`NewRun.readyAt`), kept as it
 *   is: `schedule_run` refuses a call without one, and `create_run` and
 *   `schedule_backfill_run` gain a `p_ready_at` overload (their former overloads, called
 *   by instances not yet upgraded, create runs ready at `p_now`, as those instances ask).
 * - `finish_index` retries every failed index attempt of a run without a retry limit.
 * - `run-ready` notifications carry the run's `pendingUntil` (`notify_ready`), which the
 *   planner's pending-timeout timer reads instead of working it out again.
 *
 * FROZEN once committed, like every migration: a change is a new migration.
 */
import type { SqlNames } from './sql.js';

export const V4_ONE_OWNER_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const [sweepClass, sweepKey] = n.sweepLock;
  return `
ALTER TABLE ${s}.jobs RENAME COLUMN fan_out_retry_limit TO retry_limit;

-- The run-ready notification of a run left claimable: its readyAt, and its pendingUntil when set.
CREATE FUNCTION ${s}.notify_ready(r ${s}.runs) RETURNS void LANGUAGE sql AS $fn$
  SELECT ${s}.notify(json_strip_nulls(json_build_object('type', 'run-ready', 'jobName', r.job_name, 'runId', r.id,
    'readyAt', r.ready_at, 'pendingUntil', r.pending_until)))
$fn$;

CREATE OR REPLACE FUNCTION ${s}.job_json(j ${s}.jobs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'name', j.name, 'schedule', j.schedule, 'timezone', j.timezone,
    'concurrencyPolicy', j.concurrency_policy, 'startingDeadlineMs', j.starting_deadline_ms,
    'fanOut', CASE WHEN j.fan_out_completions IS NULL THEN NULL
                   ELSE json_build_object('completions', j.fan_out_completions, 'parallelism', j.fan_out_parallelism) END,
    'retryLimit', j.retry_limit,
    'pendingTimeoutMs', j.pending_timeout_ms,
    'history', json_strip_nulls(json_build_object('succeeded', j.history_succeeded, 'failed', j.history_failed,
                 'ttlMs', j.history_ttl_ms)),
    'suspended', j.suspended, 'createdAt', j.created_at, 'cursor', j.cursor_at,
    'lastScheduleTime', j.last_schedule_time, 'lastSuccessfulTime', j.last_successful_time,
    'succeeded', j.succeeded, 'failed', j.failed, 'skipped', j.skipped, 'backfills', j.backfills,
    'startAt', j.start_at, 'endAt', j.end_at, 'jitterMs', j.jitter_ms, 'maxRuns', j.max_runs,
    'scheduledRuns', j.scheduled_runs)
$fn$;

DROP FUNCTION ${s}.upsert_job(text, jsonb, text, text, bigint, integer, integer, bigint, bigint, integer, integer, integer,
  bigint, bigint, boolean);

CREATE FUNCTION ${s}.upsert_job(p_job text, p_schedule jsonb, p_timezone text, p_policy text, p_deadline bigint,
    p_history_succeeded integer, p_history_failed integer, p_history_ttl bigint, p_pending_timeout bigint,
    p_fan_out_completions integer, p_fan_out_parallelism integer, p_retry_limit integer,
    p_now bigint, p_cursor bigint, p_suspended boolean)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_created boolean; v_cancelled json[] := '{}';
BEGIN
  INSERT INTO ${s}.jobs AS t (name, schedule, timezone, concurrency_policy, starting_deadline_ms,
      history_succeeded, history_failed, history_ttl_ms, pending_timeout_ms,
      fan_out_completions, fan_out_parallelism, retry_limit, suspended, created_at, cursor_at)
    VALUES (p_job, p_schedule, p_timezone, p_policy, p_deadline, p_history_succeeded, p_history_failed, p_history_ttl,
      p_pending_timeout, p_fan_out_completions, p_fan_out_parallelism, p_retry_limit,
      COALESCE(p_suspended, false), p_now, p_cursor)
    ON CONFLICT (name) DO UPDATE SET schedule = EXCLUDED.schedule, timezone = EXCLUDED.timezone,
      concurrency_policy = EXCLUDED.concurrency_policy, starting_deadline_ms = EXCLUDED.starting_deadline_ms,
      history_succeeded = EXCLUDED.history_succeeded, history_failed = EXCLUDED.history_failed,
      history_ttl_ms = EXCLUDED.history_ttl_ms, pending_timeout_ms = EXCLUDED.pending_timeout_ms,
      fan_out_completions = EXCLUDED.fan_out_completions, fan_out_parallelism = EXCLUDED.fan_out_parallelism,
      retry_limit = EXCLUDED.retry_limit,
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
--   pendingTimeout, fanOutCompletions, fanOutParallelism, retryLimit, startAt, endAt, jitterMs, maxRuns, now,
--   cursor, suspended}, ...] with JSON null for an absent optional value. (An instance not yet upgraded
--   sends fanOutRetryLimit, for fan-out jobs only.)
CREATE OR REPLACE FUNCTION ${s}.upsert_jobs(p_inputs jsonb) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_input jsonb; v_result json; v_job ${s}.jobs; v_results json[] := '{}';
BEGIN
  IF jsonb_array_length(p_inputs) > 1 THEN
    PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});
  END IF;
  FOR v_input IN SELECT e.value FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e ORDER BY e.ordinality LOOP
    v_result := ${s}.upsert_job(v_input->>'name', v_input->'schedule', v_input->>'timezone',
      v_input->>'policy', (v_input->>'deadline')::bigint, (v_input->>'historySucceeded')::integer,
      (v_input->>'historyFailed')::integer, (v_input->>'historyTtl')::bigint, (v_input->>'pendingTimeout')::bigint,
      (v_input->>'fanOutCompletions')::integer, (v_input->>'fanOutParallelism')::integer,
      COALESCE(v_input->>'retryLimit', v_input->>'fanOutRetryLimit')::integer, (v_input->>'now')::bigint,
      (v_input->>'cursor')::bigint, (v_input->>'suspended')::boolean);
    UPDATE ${s}.jobs SET start_at = (v_input->>'startAt')::bigint, end_at = (v_input->>'endAt')::bigint,
        jitter_ms = (v_input->>'jitterMs')::bigint, max_runs = (v_input->>'maxRuns')::bigint
      WHERE name = v_input->>'name' RETURNING * INTO v_job;
    -- json operators, not jsonb: the cancelled runs' JSON stays as run_json wrote it.
    v_results := v_results || json_build_object('job', ${s}.job_json(v_job), 'created', v_result->'created',
      'cancelled', v_result->'cancelled');
  END LOOP;
  RETURN to_json(v_results);
END
$fn$;

-- Creates the run ready at p_ready_at as given (the core decides it: NewRun.readyAt).
CREATE OR REPLACE FUNCTION ${s}.schedule_run(p_job text, p_expected bigint, p_cursor bigint, p_run_id text,
    p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_active text[]; v_cancel ${s}.runs; v_cancelled json[] := '{}';
BEGIN
  IF p_run_id IS NOT NULL AND p_ready_at IS NULL THEN
    RAISE EXCEPTION 'tickwork: schedule_run without the run''s readyAt: an instance older than migration 4 is planning; upgrade it';
  END IF;
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
  IF v_job.max_runs IS NOT NULL AND v_job.scheduled_runs >= v_job.max_runs THEN
    RETURN json_build_object('outcome', 'conflict', 'job', ${s}.job_json(v_job));
  END IF;
  SELECT COALESCE(array_agg(a.id ORDER BY a.created_at, a.scheduled_at, a.id), '{}') INTO v_active
    FROM ${s}.runs a WHERE a.job_name = p_job AND a.status IN ('pending', 'running');
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'Forbid' THEN
    UPDATE ${s}.jobs SET skipped = skipped + 1, cursor_at = p_cursor, last_schedule_time = p_cursor
      WHERE name = p_job RETURNING * INTO v_job;
    RETURN json_build_object('outcome', 'skipped', 'job', ${s}.job_json(v_job), 'active', to_json(v_active));
  END IF;
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy IN ('CatchUp', 'BufferOne') THEN
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
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, p_ready_at, p_data, 0,
      true, GREATEST(p_ready_at, p_now) + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE v_job.retry_limit END,
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
  UPDATE ${s}.jobs SET scheduled_runs = scheduled_runs + 1, cursor_at = p_cursor, last_schedule_time = p_cursor
    WHERE name = p_job RETURNING * INTO v_job;
  IF cardinality(v_cancelled) > 0 THEN
    PERFORM ${s}.settle_history(v_job, 'cancelled', cardinality(v_cancelled), p_now);
  END IF;
  PERFORM ${s}.notify_ready(v_run);
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run),
    'cancelled', array_to_json(v_cancelled));
END
$fn$;

CREATE FUNCTION ${s}.create_run(p_run_id text, p_job text, p_scheduled_at bigint, p_trigger text, p_data json,
    p_now bigint, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs;
BEGIN
  -- A share lock on the job orders this insert against schedule_run's checks.
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR SHARE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'missing-job'); END IF;
  INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, data, fence,
      claimable, pending_until, fan_out_completions, fan_out_parallelism, fan_out_retry_limit,
      fan_out_succeeded, fan_out_failed, fan_out_active)
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, p_ready_at, p_data, 0,
      true, GREATEST(p_ready_at, p_now) + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE v_job.retry_limit END,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END)
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'run', ${s}.run_json(v_run));
  END IF;
  PERFORM ${s}.notify_ready(v_run);
  RETURN json_build_object('outcome', 'created', 'run', ${s}.run_json(v_run));
END
$fn$;

-- Instances not yet upgraded hand no readyAt: their runs are ready at p_now, as they ask.
CREATE OR REPLACE FUNCTION ${s}.create_run(p_run_id text, p_job text, p_scheduled_at bigint, p_trigger text, p_data json,
    p_now bigint)
  RETURNS json LANGUAGE sql AS $fn$
  SELECT ${s}.create_run(p_run_id, p_job, p_scheduled_at, p_trigger, p_data, p_now, p_now)
$fn$;

CREATE FUNCTION ${s}.schedule_backfill_run(p_job text, p_backfill_id text, p_expected_next bigint, p_next bigint,
    p_run_id text, p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint, p_ready_at bigint)
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
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, p_ready_at, p_data, 0,
      true, GREATEST(p_ready_at, p_now) + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE v_job.retry_limit END,
      CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END, CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END)
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  PERFORM ${s}.notify_ready(v_run);
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
END
$fn$;

-- Instances not yet upgraded hand no readyAt: their runs are ready at p_now, as they ask.
CREATE OR REPLACE FUNCTION ${s}.schedule_backfill_run(p_job text, p_backfill_id text, p_expected_next bigint, p_next bigint,
    p_run_id text, p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint)
  RETURNS json LANGUAGE sql AS $fn$
  SELECT ${s}.schedule_backfill_run(p_job, p_backfill_id, p_expected_next, p_next, p_run_id, p_scheduled_at, p_trigger,
    p_data, p_now, p_now)
$fn$;

-- Writes an unfinished fan-out run whose index records were just written: running while an index
-- runs, readyAt of the next waiting index (kept when none waits), claimable while one waits and
-- parallelism allows, pendingUntil by the pendingUntil rule, and run-ready when left claimable.
CREATE OR REPLACE FUNCTION ${s}.write_fan_out(p_run ${s}.runs, p_now bigint) RETURNS ${s}.runs LANGUAGE plpgsql AS $fn$
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
    PERFORM ${s}.notify_ready(v_run);
  END IF;
  RETURN v_run;
END
$fn$;

-- As in migration 1, but a run without a retry limit (fan_out_retry_limit NULL) retries every failed
-- attempt (withinRetryLimit).
-- An attempt of index p_index of fan-out run p_run (locked) ended; p_job is the job's locked row
-- (NULL for 'released', which never finishes the run). Fenced by the index's owner and fence.
CREATE OR REPLACE FUNCTION ${s}.finish_index(p_job ${s}.jobs, p_run ${s}.runs, p_index integer, p_owner text, p_fence bigint,
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
    IF p_status = 'retry' AND (v_run.fan_out_retry_limit IS NULL OR v_run.fan_out_failed <= v_run.fan_out_retry_limit) THEN
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

-- As in migration 1, but a plain run's retry beyond the job's retry_limit fails it (withinRetryLimit:
-- its attempt number is its failed attempts), so every outcome but a release locks the job row first.
CREATE OR REPLACE FUNCTION ${s}.finish_attempt(p_run_id text, p_index integer, p_owner text, p_fence bigint, p_now bigint,
    p_status text, p_error_name text, p_error_message text, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_status text := p_status; v_final boolean := p_status IN ('succeeded', 'failed');
BEGIN
  IF p_status <> 'released' THEN
    -- Job row first (counters, pruning, the retry limit), then the run: the same order as schedule_run.
    SELECT j.* INTO v_job FROM ${s}.jobs j WHERE j.name = (SELECT r.job_name FROM ${s}.runs r WHERE r.id = p_run_id)
      FOR UPDATE;
  END IF;
  IF p_index IS NOT NULL THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN RETURN json_build_object('ok', false); END IF;
    RETURN ${s}.finish_index(v_job, v_run, p_index, p_owner, p_fence, p_now, p_status, p_error_name, p_error_message,
      p_ready_at);
  END IF;
  IF p_status = 'retry' AND (SELECT r.attempt FROM ${s}.runs r WHERE r.id = p_run_id) > v_job.retry_limit THEN
    v_status := 'failed';
    v_final := true;
  END IF;
  -- A plain run: one fenced UPDATE (no lock-then-write). A final outcome is end_run's write for a
  -- run without indices (a success clears the error: p_error_name is NULL then); a retry or a
  -- release leaves it pending, claimable: with attempt + 1 at its readyAt, or as it was, ready now.
  IF v_final THEN
    UPDATE ${s}.runs r SET status = v_status, finished_at = p_now, error_name = p_error_name,
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
    PERFORM ${s}.settle_history(v_job, v_status, 1, p_now);
  ELSE
    PERFORM ${s}.notify_ready(v_run);
  END IF;
  RETURN json_build_object('ok', true, 'run', ${s}.run_json(v_run));
END
$fn$;

-- Expired leases of plain runs and of indices, earliest first (compareExpiredLeases), each recovered
-- under its job's and run's locks after a re-check. A lost attempt is a failed one: a plain run goes
-- back to pending at p_now within its job's retry_limit and fails beyond it; an index recovery is an
-- index retry at p_now.
CREATE OR REPLACE FUNCTION ${s}.recover_expired_runs(p_now bigint, p_limit integer, p_error_name text, p_error_message text)
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
      IF v_run.attempt > v_job.retry_limit THEN
        v_run := ${s}.end_run(v_run, 'failed', p_error_name, p_error_message, p_now, v_job.history_ttl_ms);
        PERFORM ${s}.settle_history(v_job, 'failed', 1, p_now);
      ELSE
        UPDATE ${s}.runs SET status = 'pending', attempt = attempt + 1, ready_at = p_now,
            error_name = p_error_name, error_message = p_error_message, owner = NULL, lease_until = NULL,
            claimable = true, pending_until = p_now + v_job.pending_timeout_ms
          WHERE id = v_run.id RETURNING * INTO v_run;
        PERFORM ${s}.notify_ready(v_run);
      END IF;
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
`;
};
