/**
 * Migration 3: the schedule options beyond the seeds (SPEC §11).
 *
 * - `jobs` gains `start_at`, `end_at`, `jitter_ms` and `max_runs` (spec fields: the
 *   window and the jitter are planned by the core, `max_runs` is checked here) and
 *   `scheduled_runs`, the count of scheduled runs created, kept with the cursor.
 * - `concurrency_policy` admits `BufferOne`.
 * - `job_json` reports the new fields; `upsert_jobs` writes the spec fields after
 *   `upsert_job` (the job's row is locked by then, in the same transaction) and
 *   returns the job as written.
 * - `schedule_run` gains an overload with `p_ready_at` (a jittered run's ready
 *   time): it refuses a run past `max_runs`, blocks `BufferOne` behind an active run
 *   as it does `CatchUp`, and counts each created run. The eight-argument overload
 *   stays for instances not yet upgraded, as a call of the new one.
 *
 * FROZEN once committed, like every migration: a change is a new migration.
 */
import type { SqlNames } from './sql.js';

export const V3_SCHEDULE_OPTIONS_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const [sweepClass, sweepKey] = n.sweepLock;
  return `
ALTER TABLE ${s}.jobs
  ADD COLUMN start_at bigint,
  ADD COLUMN end_at bigint,
  ADD COLUMN jitter_ms bigint,
  ADD COLUMN max_runs bigint,
  ADD COLUMN scheduled_runs bigint NOT NULL DEFAULT 0,
  DROP CONSTRAINT jobs_concurrency_policy_check,
  ADD CONSTRAINT jobs_concurrency_policy_check
    CHECK (concurrency_policy IN ('Allow', 'Forbid', 'Replace', 'CatchUp', 'BufferOne'));

CREATE OR REPLACE FUNCTION ${s}.job_json(j ${s}.jobs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
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
    'succeeded', j.succeeded, 'failed', j.failed, 'skipped', j.skipped, 'backfills', j.backfills,
    'startAt', j.start_at, 'endAt', j.end_at, 'jitterMs', j.jitter_ms, 'maxRuns', j.max_runs,
    'scheduledRuns', j.scheduled_runs)
$fn$;

-- p_inputs: as before, plus startAt, endAt, jitterMs, maxRuns (JSON null when absent).
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
      (v_input->>'fanOutRetryLimit')::integer, (v_input->>'now')::bigint, (v_input->>'cursor')::bigint,
      (v_input->>'suspended')::boolean);
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

CREATE FUNCTION ${s}.schedule_run(p_job text, p_expected bigint, p_cursor bigint, p_run_id text,
    p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_active text[]; v_cancel ${s}.runs; v_cancelled json[] := '{}';
  v_ready_at bigint := GREATEST(p_now, COALESCE(p_ready_at, p_scheduled_at));
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
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, v_ready_at, p_data, 0,
      true, v_ready_at + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism, v_job.fan_out_retry_limit,
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
  PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', v_run.job_name, 'runId', v_run.id, 'readyAt', v_run.ready_at));
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run),
    'cancelled', array_to_json(v_cancelled));
END
$fn$;

-- Instances not yet upgraded call the eight-argument form: it counts their runs too.
CREATE OR REPLACE FUNCTION ${s}.schedule_run(p_job text, p_expected bigint, p_cursor bigint, p_run_id text,
    p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint)
  RETURNS json LANGUAGE sql AS $fn$
  SELECT ${s}.schedule_run(p_job, p_expected, p_cursor, p_run_id, p_scheduled_at, p_trigger, p_data, p_now, NULL::bigint)
$fn$;
`;
};
