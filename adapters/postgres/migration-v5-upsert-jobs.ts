/**
 * Migration 5: `upsert_jobs`, the batch behind `upsertJobs`, so that the scheduler's
 * `UPSERT_BATCH` jobs cost one statement instead of one each.
 *
 * It takes the batch as one `jsonb` array parameter and calls `upsert_job` (migration
 * 4) for each element in array order, so the per-job rule and its `job-changed`
 * notification stay in one place; it returns the results as a `json` array in the
 * same order. The whole batch is one transaction. (Postgres folds identical
 * notifications within a transaction, so a job named twice in one batch is notified
 * once: watchers re-read the job anyway.)
 *
 * A batch locks several jobs' rows, in the caller's order. It takes the sweeps'
 * advisory lock first (see `SqlNames.sweepLock`), so two batches, or a batch and a
 * sweep, never hold some of each other's jobs; a single input locks one job like any
 * other single-job operation and skips it. Append-only, like every migration.
 */
import type { SqlNames } from './sql.js';

export const UPSERT_JOBS_V5_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const [sweepClass, sweepKey] = n.sweepLock;
  return `
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
`;
};
