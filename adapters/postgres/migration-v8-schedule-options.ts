/**
 * Migration 8: the schedule options beyond the seeds (SPEC §11).
 *
 * - `jobs` gains `start_at`, `end_at`, `jitter_ms` and `max_runs` (spec fields: the
 *   window and the jitter are planned by the core, `max_runs` is checked here) and
 *   `scheduled_runs`, the count of scheduled runs created, kept with the cursor.
 * - `concurrency_policy` admits `BufferOne`.
 * - `job_json` reports the new fields; `upsert_jobs` writes the spec fields after
 *   `upsert_job` (the row is locked by then, in the same transaction) and returns the
 *   job as written.
 * - `schedule_run` gains an overload with `p_ready_at` (a jittered run's ready time),
 *   refuses a run past `max_runs`, blocks `BufferOne` behind an active run as it does
 *   `CatchUp`, and counts each created run. The eight-argument overload stays for
 *   instances not yet upgraded during a rolling deploy.
 * Append-only, like every migration.
 */
import { jobJsonFunction, scheduleRunFunction } from './migration-v4-functions.js';
import type { SqlNames } from './sql.js';

export const SCHEDULE_OPTIONS_V8_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const [sweepClass, sweepKey] = n.sweepLock;
  return `
ALTER TABLE ${s}.jobs
  ADD COLUMN start_at bigint,
  ADD COLUMN end_at bigint,
  ADD COLUMN jitter_ms bigint,
  ADD COLUMN max_runs bigint,
  ADD COLUMN scheduled_runs bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}.jobs DROP CONSTRAINT IF EXISTS jobs_concurrency_policy_check;
ALTER TABLE ${s}.jobs ADD CONSTRAINT jobs_concurrency_policy_check
  CHECK (concurrency_policy IN ('Allow', 'Forbid', 'Replace', 'CatchUp', 'BufferOne'));

${jobJsonFunction(n, `,
    'startAt', j.start_at, 'endAt', j.end_at, 'jitterMs', j.jitter_ms, 'maxRuns', j.max_runs,
    'scheduledRuns', j.scheduled_runs`)}

${scheduleRunFunction(n, 'GREATEST(p_now, COALESCE(p_ready_at, p_scheduled_at))', true)}
-- p_inputs: as migration 5's, plus startAt, endAt, jitterMs, maxRuns (JSON null when absent).
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
`;
};
