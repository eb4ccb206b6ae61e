/**
 * Migration 5: a batch of job upserts as one statement (issue 20, a million jobs).
 *
 * `upsert_jobs` called `upsert_job` once per input, then updated the row it had just
 * written (the window, jitter and maxRuns fields of migration 3) and built its JSON
 * twice: at 1,000,000 registered jobs, 136 µs of the server's CPU per job, 90 s of a
 * start. A batch of distinct names none of which sets `suspended` (what a start
 * sends) is now one `INSERT ... ON CONFLICT DO UPDATE` of every row with every field,
 * its records built once; the `job-changed` notifications still go one per job, in
 * the batch's order. A batch that names a job twice (the later input wins, as one
 * upsert after the other) or sets `suspended` (suspending cancels the runs created
 * ahead, `cancel_ahead`) goes through the former loop, unchanged.
 *
 * FROZEN once committed, like every migration: a change is a new migration.
 */
import type { SqlNames } from './sql.js';

export const V5_SET_UPSERTS_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const [sweepClass, sweepKey] = n.sweepLock;
  return `
-- p_inputs: as in migration 4.
CREATE OR REPLACE FUNCTION ${s}.upsert_jobs(p_inputs jsonb) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_input jsonb; v_result json; v_job ${s}.jobs; v_results json[] := '{}'; v_out json; v_name text;
BEGIN
  IF jsonb_array_length(p_inputs) > 1 THEN
    PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});
  END IF;
  IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_inputs) AS e WHERE e.value->'suspended' <> 'null'::jsonb)
      AND (SELECT count(DISTINCT e.value->>'name') FROM jsonb_array_elements(p_inputs) AS e) = jsonb_array_length(p_inputs) THEN
    WITH input AS (
      SELECT e.ordinality AS ord, e.value AS v FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e
    ), written AS (
      INSERT INTO ${s}.jobs AS t (name, schedule, timezone, concurrency_policy, starting_deadline_ms,
          history_succeeded, history_failed, history_ttl_ms, pending_timeout_ms,
          fan_out_completions, fan_out_parallelism, retry_limit, suspended, created_at, cursor_at,
          start_at, end_at, jitter_ms, max_runs)
        SELECT i.v->>'name', i.v->'schedule', i.v->>'timezone', i.v->>'policy', (i.v->>'deadline')::bigint,
          (i.v->>'historySucceeded')::integer, (i.v->>'historyFailed')::integer, (i.v->>'historyTtl')::bigint,
          (i.v->>'pendingTimeout')::bigint, (i.v->>'fanOutCompletions')::integer, (i.v->>'fanOutParallelism')::integer,
          COALESCE(i.v->>'retryLimit', i.v->>'fanOutRetryLimit')::integer, false, (i.v->>'now')::bigint,
          (i.v->>'cursor')::bigint, (i.v->>'startAt')::bigint, (i.v->>'endAt')::bigint, (i.v->>'jitterMs')::bigint,
          (i.v->>'maxRuns')::bigint
        FROM input i ORDER BY i.ord
      ON CONFLICT (name) DO UPDATE SET schedule = EXCLUDED.schedule, timezone = EXCLUDED.timezone,
        concurrency_policy = EXCLUDED.concurrency_policy, starting_deadline_ms = EXCLUDED.starting_deadline_ms,
        history_succeeded = EXCLUDED.history_succeeded, history_failed = EXCLUDED.history_failed,
        history_ttl_ms = EXCLUDED.history_ttl_ms, pending_timeout_ms = EXCLUDED.pending_timeout_ms,
        fan_out_completions = EXCLUDED.fan_out_completions, fan_out_parallelism = EXCLUDED.fan_out_parallelism,
        retry_limit = EXCLUDED.retry_limit, start_at = EXCLUDED.start_at, end_at = EXCLUDED.end_at,
        jitter_ms = EXCLUDED.jitter_ms, max_runs = EXCLUDED.max_runs
      RETURNING t AS job, (t.xmax = 0) AS created
    )
    SELECT json_agg(json_build_object('job', ${s}.job_json(w.job), 'created', w.created, 'cancelled', NULL) ORDER BY i.ord)
      INTO v_out FROM written w JOIN input i ON i.v->>'name' = (w.job).name;
    FOR v_name IN SELECT e.value->>'name' FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e ORDER BY e.ordinality LOOP
      PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', v_name));
    END LOOP;
    RETURN COALESCE(v_out, '[]'::json);
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
`;
};
