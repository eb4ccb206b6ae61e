/**
 * Migration 2: the trace context of the call that asked for a run.
 *
 * `trigger()` and `backfill()` hand the store the caller's W3C `traceparent`
 * (`NewRun.traceparent`, `BackfillRange.traceparent`) so that the run's span links
 * to the caller's trace on whichever instance executes it. Runs keep it in a new
 * column that `run_json` returns (its v1 body, plus `traceparent`); a backfill range keeps it in its `backfills`
 * element (`schedule_backfill_run` moves only `next`, so it stays). The existing
 * creating functions are left as they are, so instances not yet upgraded keep
 * working during a rolling deploy: `with_traceparent` wraps their result in the
 * same statement (one transaction, before the run's notification is delivered at
 * commit), and `add_backfill` gains an overload. Frozen once committed, like every
 * migration (see the README's Migrations).
 */
import type { SqlNames } from './sql.js';

export const TRACEPARENT_V2_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  return `
ALTER TABLE ${s}.runs ADD COLUMN traceparent text;

CREATE OR REPLACE FUNCTION ${s}.run_json(r ${s}.runs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'id', r.id, 'jobName', r.job_name, 'scheduledAt', r.scheduled_at, 'trigger', r.trigger,
    'status', r.status, 'attempt', r.attempt, 'createdAt', r.created_at, 'readyAt', r.ready_at,
    'startedAt', r.started_at, 'finishedAt', r.finished_at,
    'error', CASE WHEN r.error_name IS NULL THEN NULL
                  ELSE json_build_object('name', r.error_name, 'message', r.error_message) END,
    'hasData', r.data IS NOT NULL, 'data', r.data, 'traceparent', r.traceparent,
    'owner', r.owner, 'leaseUntil', r.lease_until, 'fence', r.fence, 'deadlineAt', r.deadline_at,
    'fanOut', CASE WHEN r.fan_out_completions IS NULL THEN NULL
                   ELSE json_build_object('completions', r.fan_out_completions, 'parallelism', r.fan_out_parallelism,
                     'retryLimit', r.fan_out_retry_limit, 'succeeded', r.fan_out_succeeded, 'failed', r.fan_out_failed,
                     'active', r.fan_out_active) END,
    'pendingUntil', r.pending_until, 'expiresAt', r.expires_at)
$fn$;

-- The result of create_run or schedule_backfill_run, with p_traceparent stored on the run it created.
CREATE FUNCTION ${s}.with_traceparent(p_result json, p_traceparent text) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs;
BEGIN
  IF p_traceparent IS NULL OR p_result ->> 'outcome' IS DISTINCT FROM 'created' THEN RETURN p_result; END IF;
  UPDATE ${s}.runs SET traceparent = p_traceparent WHERE id = p_result -> 'run' ->> 'id' RETURNING * INTO v_run;
  RETURN (p_result::jsonb || jsonb_build_object('run', ${s}.run_json(v_run)))::json;
END
$fn$;

CREATE FUNCTION ${s}.add_backfill(p_job text, p_id text, p_next bigint, p_to bigint, p_traceparent text)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs;
BEGIN
  UPDATE ${s}.jobs SET backfills = backfills || jsonb_build_array(jsonb_strip_nulls(
      jsonb_build_object('id', p_id, 'next', p_next, 'to', p_to, 'traceparent', p_traceparent)))
    WHERE name = p_job RETURNING * INTO v_job;
  IF NOT FOUND THEN RETURN NULL; END IF;
  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN ${s}.job_json(v_job);
END
$fn$;
`;
};
