/**
 * Migration 2: the store's atomic operations as functions, so that each contract
 * method is ONE statement (`SELECT <schema>.schedule_run(...)`) that works through
 * any pool, PGlite and transaction poolers. Each function returns its whole result
 * as `json` (instants as plain numbers, not int8 strings) and issues its
 * `pg_notify` itself, so notifications are sent exactly when the write commits.
 *
 * Lock order is always job row, then run rows, so concurrent operations never
 * deadlock. Time only ever comes from the parameters. Append-only: change these by
 * adding a migration with `CREATE OR REPLACE FUNCTION`, never by editing this one.
 */
import type { SqlNames } from './sql.js';

export const FUNCTIONS_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const advance = `UPDATE ${s}.jobs SET cursor_at = p_cursor, last_schedule_time = p_cursor WHERE name = p_job RETURNING * INTO v_job;`;
  const notifyReady = (run: string): string =>
    `PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', ${run}.job_name, 'runId', ${run}.id, 'readyAt', ${run}.ready_at));`;
  const notifyJob = (name: string): string =>
    `PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', ${name}));`;
  const insertRun = `INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, data, fence)
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, p_now, p_data, 0)
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;`;
  return `
CREATE FUNCTION ${s}.notify(payload json) RETURNS void LANGUAGE sql AS $fn$
  SELECT pg_notify('${n.channel}', payload::text)
$fn$;

CREATE FUNCTION ${s}.run_json(r ${s}.runs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'id', r.id, 'jobName', r.job_name, 'scheduledAt', r.scheduled_at, 'trigger', r.trigger,
    'status', r.status, 'attempt', r.attempt, 'createdAt', r.created_at, 'readyAt', r.ready_at,
    'startedAt', r.started_at, 'finishedAt', r.finished_at,
    'error', CASE WHEN r.error_name IS NULL THEN NULL
                  ELSE json_build_object('name', r.error_name, 'message', r.error_message) END,
    'hasData', r.data IS NOT NULL, 'data', r.data,
    'owner', r.owner, 'leaseUntil', r.lease_until, 'fence', r.fence, 'deadlineAt', r.deadline_at)
$fn$;

CREATE FUNCTION ${s}.job_json(j ${s}.jobs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'name', j.name, 'schedule', j.schedule, 'timezone', j.timezone,
    'concurrencyPolicy', j.concurrency_policy, 'startingDeadlineMs', j.starting_deadline_ms,
    'history', json_build_object('succeeded', j.history_succeeded, 'failed', j.history_failed),
    'suspended', j.suspended, 'createdAt', j.created_at, 'cursor', j.cursor_at,
    'lastScheduleTime', j.last_schedule_time, 'lastSuccessfulTime', j.last_successful_time,
    'succeeded', j.succeeded, 'failed', j.failed, 'skipped', j.skipped, 'backfills', j.backfills)
$fn$;

-- Keeps the most recently finished runs per limit; failed and cancelled count together.
CREATE FUNCTION ${s}.prune_history(p_job text, p_succeeded integer, p_failed integer) RETURNS void LANGUAGE sql AS $fn$
  DELETE FROM ${s}.runs WHERE id IN (
    SELECT ranked.id FROM (
      SELECT f.id, f.status = 'succeeded' AS ok,
             row_number() OVER (PARTITION BY f.status = 'succeeded'
               ORDER BY COALESCE(f.finished_at, 0) DESC, f.created_at DESC, f.scheduled_at DESC, f.id DESC) AS rn
      FROM ${s}.runs f
      WHERE f.job_name = p_job AND f.status IN ('succeeded', 'failed', 'cancelled')
    ) ranked
    WHERE ranked.rn > CASE WHEN ranked.ok THEN p_succeeded ELSE p_failed END)
$fn$;

CREATE FUNCTION ${s}.upsert_job(p_job text, p_schedule jsonb, p_timezone text, p_policy text, p_deadline bigint,
    p_history_succeeded integer, p_history_failed integer, p_now bigint, p_cursor bigint, p_suspended boolean)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_created boolean;
BEGIN
  INSERT INTO ${s}.jobs AS t (name, schedule, timezone, concurrency_policy, starting_deadline_ms,
      history_succeeded, history_failed, suspended, created_at, cursor_at)
    VALUES (p_job, p_schedule, p_timezone, p_policy, p_deadline, p_history_succeeded, p_history_failed,
      COALESCE(p_suspended, false), p_now, p_cursor)
    ON CONFLICT (name) DO UPDATE SET schedule = EXCLUDED.schedule, timezone = EXCLUDED.timezone,
      concurrency_policy = EXCLUDED.concurrency_policy, starting_deadline_ms = EXCLUDED.starting_deadline_ms,
      history_succeeded = EXCLUDED.history_succeeded, history_failed = EXCLUDED.history_failed,
      suspended = COALESCE(p_suspended, t.suspended)
    RETURNING (t.xmax = 0) INTO v_created;
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job;
  ${notifyJob('p_job')}
  RETURN json_build_object('job', ${s}.job_json(v_job), 'created', v_created);
END
$fn$;

CREATE FUNCTION ${s}.set_suspended(p_job text, p_suspended boolean) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs;
BEGIN
  UPDATE ${s}.jobs SET suspended = p_suspended WHERE name = p_job RETURNING * INTO v_job;
  IF NOT FOUND THEN RETURN NULL; END IF;
  ${notifyJob('p_job')}
  RETURN ${s}.job_json(v_job);
END
$fn$;

CREATE FUNCTION ${s}.remove_job(p_job text) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.jobs WHERE name = p_job;
  IF NOT FOUND THEN RETURN false; END IF;
  ${notifyJob('p_job')}
  RETURN true;
END
$fn$;

CREATE FUNCTION ${s}.add_backfill(p_job text, p_id text, p_next bigint, p_to bigint) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs;
BEGIN
  UPDATE ${s}.jobs SET backfills = backfills || jsonb_build_array(jsonb_build_object('id', p_id, 'next', p_next, 'to', p_to))
    WHERE name = p_job RETURNING * INTO v_job;
  IF NOT FOUND THEN RETURN NULL; END IF;
  ${notifyJob('p_job')}
  RETURN ${s}.job_json(v_job);
END
$fn$;

CREATE FUNCTION ${s}.schedule_run(p_job text, p_expected bigint, p_cursor bigint, p_run_id text,
    p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_active text[]; v_cancelled json := '[]';
BEGIN
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR UPDATE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'conflict'); END IF;
  IF v_job.suspended OR v_job.cursor_at <> p_expected THEN
    RETURN json_build_object('outcome', 'conflict', 'job', ${s}.job_json(v_job));
  END IF;
  IF p_run_id IS NULL THEN
    ${advance}
    RETURN json_build_object('outcome', 'advanced', 'job', ${s}.job_json(v_job));
  END IF;
  SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
  IF FOUND THEN
    ${advance}
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  SELECT COALESCE(array_agg(a.id ORDER BY a.created_at, a.id), '{}') INTO v_active
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
    UPDATE ${s}.runs SET status = 'cancelled', finished_at = p_now, owner = NULL, lease_until = NULL
      WHERE id = ANY (v_active);
    SELECT json_agg(${s}.run_json(c) ORDER BY c.created_at, c.id) INTO v_cancelled
      FROM ${s}.runs c WHERE c.id = ANY (v_active);
    PERFORM ${s}.notify(json_build_object('type', 'run-finished', 'jobName', p_job, 'runId', x, 'status', 'cancelled'))
      FROM unnest(v_active) AS x;
  END IF;
  ${insertRun}
  IF NOT FOUND THEN
    -- Another job's manual run took this ID in the meantime: same as finding it above.
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    ${advance}
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  ${advance}
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'Replace' THEN
    PERFORM ${s}.prune_history(p_job, v_job.history_succeeded, v_job.history_failed);
  END IF;
  ${notifyReady('v_run')}
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run),
    'cancelled', v_cancelled);
END
$fn$;

CREATE FUNCTION ${s}.create_run(p_run_id text, p_job text, p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs;
BEGIN
  -- A share lock on the job orders this insert against schedule_run's checks.
  PERFORM 1 FROM ${s}.jobs WHERE name = p_job FOR SHARE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'missing-job'); END IF;
  ${insertRun}
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'run', ${s}.run_json(v_run));
  END IF;
  ${notifyReady('v_run')}
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
  ${insertRun}
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  ${notifyReady('v_run')}
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
END
$fn$;

CREATE FUNCTION ${s}.renew_lease(p_run_id text, p_owner text, p_fence bigint, p_lease_until bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_status text;
BEGIN
  UPDATE ${s}.runs SET lease_until = p_lease_until
    WHERE id = p_run_id AND status = 'running' AND owner = p_owner AND fence = p_fence;
  IF FOUND THEN RETURN json_build_object('ok', true); END IF;
  SELECT status INTO v_status FROM ${s}.runs WHERE id = p_run_id;
  RETURN json_build_object('ok', false, 'status', v_status);
END
$fn$;

CREATE FUNCTION ${s}.finish_attempt(p_run_id text, p_owner text, p_fence bigint, p_now bigint, p_status text,
    p_error_name text, p_error_message text, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_final boolean := p_status IN ('succeeded', 'failed');
BEGIN
  IF v_final THEN
    -- Job row first (counters, pruning), then the run: the same order as schedule_run.
    SELECT j.* INTO v_job FROM ${s}.jobs j WHERE j.name = (SELECT r.job_name FROM ${s}.runs r WHERE r.id = p_run_id)
      FOR UPDATE;
  END IF;
  SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id FOR UPDATE;
  IF NOT FOUND THEN RETURN json_build_object('ok', false); END IF;
  IF v_run.status <> 'running' OR v_run.owner IS DISTINCT FROM p_owner OR v_run.fence <> p_fence THEN
    RETURN json_build_object('ok', false, 'run', ${s}.run_json(v_run));
  END IF;
  IF p_status = 'retry' THEN
    UPDATE ${s}.runs SET status = 'pending', attempt = attempt + 1, ready_at = p_ready_at, error_name = p_error_name,
        error_message = p_error_message, owner = NULL, lease_until = NULL
      WHERE id = p_run_id RETURNING * INTO v_run;
    ${notifyReady('v_run')}
  ELSIF p_status = 'released' THEN
    UPDATE ${s}.runs SET status = 'pending', ready_at = p_now, owner = NULL, lease_until = NULL
      WHERE id = p_run_id RETURNING * INTO v_run;
    ${notifyReady('v_run')}
  ELSE
    -- A success clears the error of an earlier attempt (p_error_name is NULL then).
    UPDATE ${s}.runs SET status = p_status, finished_at = p_now, error_name = p_error_name,
        error_message = p_error_message, owner = NULL, lease_until = NULL
      WHERE id = p_run_id RETURNING * INTO v_run;
    IF v_job.name IS NOT NULL THEN
      UPDATE ${s}.jobs SET
          succeeded = succeeded + CASE WHEN p_status = 'succeeded' THEN 1 ELSE 0 END,
          failed = failed + CASE WHEN p_status = 'failed' THEN 1 ELSE 0 END,
          last_successful_time = CASE WHEN p_status = 'succeeded' THEN p_now ELSE last_successful_time END
        WHERE name = v_job.name;
      PERFORM ${s}.prune_history(v_job.name, v_job.history_succeeded, v_job.history_failed);
    END IF;
    PERFORM ${s}.notify(json_build_object('type', 'run-finished', 'jobName', v_run.job_name, 'runId', v_run.id,
      'status', v_run.status));
  END IF;
  RETURN json_build_object('ok', true, 'run', ${s}.run_json(v_run));
END
$fn$;

CREATE FUNCTION ${s}.recover_expired_runs(p_now bigint, p_limit integer) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_ids text[]; v_runs json;
BEGIN
  -- SKIP LOCKED: runs another instance is finishing or recovering right now are theirs.
  WITH picked AS (
    SELECT e.id FROM ${s}.runs e WHERE e.status = 'running' AND e.lease_until < p_now
      ORDER BY e.lease_until, e.id LIMIT p_limit FOR UPDATE SKIP LOCKED
  ), recovered AS (
    UPDATE ${s}.runs r SET status = 'pending', attempt = r.attempt + 1, ready_at = p_now,
        error_name = 'LeaseExpiredError', error_message = 'lease of ' || COALESCE(r.owner, 'unknown owner') || ' expired',
        owner = NULL, lease_until = NULL
      FROM picked WHERE r.id = picked.id
      RETURNING r.id
  )
  SELECT COALESCE(array_agg(recovered.id), '{}') INTO v_ids FROM recovered;
  SELECT COALESCE(json_agg(${s}.run_json(r) ORDER BY r.id), '[]') INTO v_runs FROM ${s}.runs r WHERE r.id = ANY (v_ids);
  PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', r.job_name, 'runId', r.id, 'readyAt', r.ready_at))
    FROM ${s}.runs r WHERE r.id = ANY (v_ids);
  RETURN v_runs;
END
$fn$;
`;
};
