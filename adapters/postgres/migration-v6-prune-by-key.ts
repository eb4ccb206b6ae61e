/**
 * Migration 6: `settle_history` prunes by primary key, one run at a time.
 *
 * Migration 4 deleted the runs beyond a limit with `id = ANY (ARRAY(<ordered
 * sub-select>))`. The planner cannot know the array's length and assumes ten
 * elements; on a table it believes small (never analyzed: ten pages) ten index
 * probes cost more than a sequential scan. PL/pgSQL caches that generic plan per
 * connection while the table is still small and keeps it as the table grows, so
 * every pruning finish scanned all of `runs`, dead rows included, while holding
 * the job row that every create and finish of that job waits for.
 *
 * Now the same ordered sub-select (still bounded by OFFSET limit LIMIT excess along
 * the limit's history index) feeds a loop that deletes each run by `id = $1`: one
 * row through the primary key, the form every other statement that addresses one
 * run by ID uses, and the plan the planner keeps, generic or custom. Semantics are
 * migration 4's: same runs, same counters, same recount when nothing is beyond the
 * limit. Append-only, like every migration.
 */
import type { SqlNames } from './sql.js';

export const PRUNE_BY_KEY_V6_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const historyOrder = 'f.finished_at DESC NULLS LAST, f.created_at DESC, f.scheduled_at DESC, f.id DESC';
  // Deletes the runs beyond `limit` among the job's runs matching `filter`, counting them in v_deleted.
  const prune = (filter: string, limit: string, kept: string): string => `
    v_deleted := 0;
    FOR v_id IN SELECT f.id FROM ${s}.runs f WHERE f.job_name = p_job.name AND ${filter}
        ORDER BY ${historyOrder} OFFSET ${limit} LIMIT ${kept} - ${limit} LOOP
      DELETE FROM ${s}.runs WHERE id = v_id;
      IF FOUND THEN v_deleted := v_deleted + 1; END IF;
    END LOOP;`;
  return `
-- The job side of p_count runs finishing with p_status (p_job: the job's row, locked by the caller):
-- counters, lastSuccessfulTime, and history pruning in one write of the job row. kept_* count the
-- job's finished runs per limit, so pruning happens only when one passes its limit, and deletes just
-- the runs beyond it: OFFSET limit LIMIT excess along that limit's history index, in pruneHistory's
-- order, each by primary key. Every write that finishes or deletes a run holds the job row and keeps
-- kept_* exact; should they ever run ahead (rows deleted by hand), a prune that finds nothing beyond
-- the limit recounts.
CREATE OR REPLACE FUNCTION ${s}.settle_history(p_job ${s}.jobs, p_status text, p_count integer, p_now bigint)
  RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_ok integer := p_job.kept_succeeded + CASE WHEN p_status = 'succeeded' THEN p_count ELSE 0 END;
  v_bad integer := p_job.kept_failed + CASE WHEN p_status = 'succeeded' THEN 0 ELSE p_count END;
  v_id text;
  v_deleted integer;
BEGIN
  IF v_ok > p_job.history_succeeded THEN${prune("f.status = 'succeeded'", 'p_job.history_succeeded', 'v_ok')}
    -- Nothing beyond the limit: the count ran ahead, take the real one (at most the limit).
    v_ok := CASE WHEN v_deleted > 0 THEN p_job.history_succeeded
                 ELSE (SELECT count(*) FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status = 'succeeded') END;
  END IF;
  IF v_bad > p_job.history_failed THEN${prune("f.status IN ('failed', 'cancelled')", 'p_job.history_failed', 'v_bad')}
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
`;
};
