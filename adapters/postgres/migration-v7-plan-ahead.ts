/**
 * Migration 7: runs created ahead of their tick.
 *
 * The planner creates an `Allow` job's run shortly before its tick, so that only
 * the claim is left to do at the tick. `schedule_run` now creates its run ready at
 * `GREATEST(p_now, p_scheduled_at)` (its pending timeout counts from then), and
 * `set_suspended` takes `p_now`: suspending cancels the job's runs created ahead
 * of a tick still to come (`trigger` schedule, pending, `scheduled_at > p_now`),
 * as `Store.setSuspended` says, and returns them with the job. The two-argument
 * `set_suspended` stays, so instances not yet upgraded keep working during a rolling
 * deploy. Append-only, like every migration.
 */
import { scheduleRunFunction } from './migration-v4-functions.js';
import type { SqlNames } from './sql.js';

export const PLAN_AHEAD_V7_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  return `
${scheduleRunFunction(n, 'GREATEST(p_now, p_scheduled_at)')}
-- An overload: set_suspended(text, boolean) stays for instances not yet upgraded.

CREATE FUNCTION ${s}.set_suspended(p_job text, p_suspended boolean, p_now bigint) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_cancel ${s}.runs; v_cancelled json[] := '{}';
BEGIN
  UPDATE ${s}.jobs SET suspended = p_suspended WHERE name = p_job RETURNING * INTO v_job;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF p_suspended THEN
    -- Runs created ahead of a tick still to come (isCreatedAhead in store-rules.ts).
    FOR v_cancel IN SELECT * FROM ${s}.runs c
        WHERE c.job_name = p_job AND c.status = 'pending' AND c.trigger = 'schedule' AND c.scheduled_at > p_now
        ORDER BY c.created_at, c.scheduled_at, c.id FOR UPDATE LOOP
      v_cancel := ${s}.end_run(v_cancel, 'cancelled', NULL, NULL, p_now, v_job.history_ttl_ms);
      v_cancelled := v_cancelled || ${s}.run_json(v_cancel);
    END LOOP;
    IF cardinality(v_cancelled) > 0 THEN
      PERFORM ${s}.settle_history(v_job, 'cancelled', cardinality(v_cancelled), p_now);
      SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job;
    END IF;
  END IF;
  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN json_build_object('job', ${s}.job_json(v_job), 'cancelled', array_to_json(v_cancelled));
END
$fn$;
`;
};
