/**
 * Migration 7: runs created ahead of their tick.
 *
 * The planner creates an `Allow` job's run shortly before its tick, so that only
 * the claim is left to do at the tick. `schedule_run` now creates its run ready at
 * `GREATEST(p_now, p_scheduled_at)` (its pending timeout counts from then).
 * Suspending a job cancels its runs created ahead of a tick still to come
 * (`cancel_ahead`, the rule `isCreatedAhead` of store-rules.ts), as
 * `Store.setSuspended` and `Store.upsertJobs` say: `set_suspended` gains a `p_now`
 * argument and returns the cancelled runs with the job, and `upsert_job` returns
 * them as `cancelled` when its input suspends an existing job. The two-argument
 * `set_suspended` stays, so instances not yet upgraded keep working during a rolling
 * deploy. Append-only, like every migration.
 */
import { scheduleRunFunction, upsertJobFunction } from './migration-v4-functions.js';
import type { SqlNames } from './sql.js';

export const PLAN_AHEAD_V7_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  return `
${scheduleRunFunction(n, 'GREATEST(p_now, p_scheduled_at)')}
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

-- An overload: set_suspended(text, boolean) stays for instances not yet upgraded.
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

${upsertJobFunction(n, 'CREATE OR REPLACE', {
  statement: `  IF NOT v_created AND p_suspended IS TRUE THEN
    v_cancelled := ${s}.cancel_ahead(v_job, p_now);
    IF cardinality(v_cancelled) > 0 THEN SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job; END IF;
  END IF;
`,
  result: `, 'cancelled', CASE WHEN cardinality(v_cancelled) > 0 THEN array_to_json(v_cancelled) END`,
})}`;
};
