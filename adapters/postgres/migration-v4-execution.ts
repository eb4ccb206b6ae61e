/**
 * Migration 4, second half: claims, lease renewal, finishes (of plain runs and of
 * fan-out indices) and the three sweeps (lease recovery, pending timeouts, TTL
 * deletion), built on the helpers of `migration-v4-functions.ts`.
 *
 * Lock order is job row, then run row, then index rows, everywhere. Claims lock
 * only the run (and its index rows). The sweeps are the only operations that lock
 * several jobs' rows; a transaction-level advisory lock per schema lets one sweep
 * run at a time, so two sweeps can never deadlock on each other's jobs.
 *
 * Statements that address one run by ID keep the planner on the primary key: they
 * never state a partial index's predicate in a form it can match (a stale estimate
 * of "few running runs" would otherwise make it scan such an index, dead entries and
 * all). A plain run or an index has an `owner` exactly while it runs under a lease,
 * so `owner = $owner` stands for `status = 'running'`; `claimable IS TRUE` is
 * `claimable` in a form that cannot select `runs_claimable_idx`.
 * Append-only, like every migration.
 */
import type { SqlNames } from './sql.js';

export const EXECUTION_V4_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const notifyReady = (run: string): string =>
    `PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', ${run}.job_name, 'runId', ${run}.id, 'readyAt', ${run}.ready_at));`;
  const [sweepClass, sweepKey] = n.sweepLock;
  const sweepLock = `PERFORM pg_advisory_xact_lock(${sweepClass}, ${sweepKey});`;
  return `
DROP FUNCTION ${s}.renew_lease(text, text, bigint, bigint);
DROP FUNCTION ${s}.finish_attempt(text, text, bigint, bigint, text, text, text, bigint);
DROP FUNCTION ${s}.recover_expired_runs(bigint, integer);

CREATE FUNCTION ${s}.claim_run(p_run_id text, p_owner text, p_now bigint, p_lease_until bigint, p_deadline_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs; v_next record; v_index ${s}.run_indices;
BEGIN
  -- A plain run: one UPDATE; racing claims queue on the row and re-check.
  UPDATE ${s}.runs r SET status = 'running', owner = p_owner, lease_until = p_lease_until, fence = r.fence + 1,
      started_at = COALESCE(r.started_at, p_now), deadline_at = COALESCE(r.deadline_at, p_deadline_at),
      claimable = false, pending_until = NULL
    WHERE r.id = p_run_id AND r.claimable IS TRUE AND r.ready_at <= p_now AND r.fan_out_completions IS NULL
    RETURNING * INTO v_run;
  IF FOUND THEN RETURN json_build_object('run', ${s}.run_json(v_run)); END IF;
  -- A fan-out run. The unlocked look first spares the row lock (and its WAL record) when the run
  -- is plain, or plainly not claimable (say, at parallelism with other claimers polling it).
  PERFORM 1 FROM ${s}.runs r
    WHERE r.id = p_run_id AND r.fan_out_completions IS NOT NULL AND r.claimable IS TRUE AND r.ready_at <= p_now;
  IF NOT FOUND THEN RETURN NULL; END IF;
  SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id FOR UPDATE;
  IF NOT FOUND OR NOT v_run.claimable OR v_run.ready_at > p_now THEN RETURN NULL; END IF;
  SELECT * INTO v_next FROM ${s}.fan_out_next(v_run.id, v_run.created_at, v_run.fan_out_completions);
  IF v_next.o_idx IS NULL OR v_next.o_ready_at > p_now THEN RETURN NULL; END IF;
  -- A first claim creates the record (attempt 1, fence 0, claimed: fence 1); a re-claim adopts it.
  INSERT INTO ${s}.run_indices AS i (run_id, idx, status, attempt, ready_at, started_at, owner, lease_until, fence)
    VALUES (v_run.id, v_next.o_idx, 'running', 1, v_next.o_ready_at, p_now, p_owner, p_lease_until, 1)
    ON CONFLICT (run_id, idx) DO UPDATE SET status = 'running', owner = p_owner, lease_until = p_lease_until,
      fence = i.fence + 1, started_at = COALESCE(i.started_at, p_now)
    RETURNING * INTO v_index;
  v_run.fan_out_active := v_run.fan_out_active + 1;
  v_run.started_at := COALESCE(v_run.started_at, p_now);
  v_run.deadline_at := COALESCE(v_run.deadline_at, p_deadline_at);
  v_run := ${s}.write_fan_out(v_run, p_now);
  RETURN json_build_object('run', ${s}.run_json(v_run), 'index', ${s}.index_json(v_index));
END
$fn$;

CREATE FUNCTION ${s}.renew_lease(p_run_id text, p_index integer, p_owner text, p_fence bigint, p_lease_until bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_status text;
BEGIN
  IF p_index IS NULL THEN
    UPDATE ${s}.runs SET lease_until = p_lease_until
      WHERE id = p_run_id AND owner = p_owner AND fence = p_fence AND fan_out_completions IS NULL;
    IF FOUND THEN RETURN json_build_object('ok', true); END IF;
    SELECT r.status INTO v_status FROM ${s}.runs r WHERE r.id = p_run_id;
  ELSE
    UPDATE ${s}.run_indices SET lease_until = p_lease_until
      WHERE run_id = p_run_id AND idx = p_index AND owner = p_owner AND fence = p_fence;
    IF FOUND THEN RETURN json_build_object('ok', true); END IF;
    SELECT i.status INTO v_status FROM ${s}.run_indices i WHERE i.run_id = p_run_id AND i.idx = p_index;
  END IF;
  RETURN json_build_object('ok', false, 'status', v_status);
END
$fn$;

-- An attempt of index p_index of fan-out run p_run (locked) ended; p_job is the job's locked row
-- (NULL for 'released', which never finishes the run). Fenced by the index's owner and fence.
CREATE FUNCTION ${s}.finish_index(p_job ${s}.jobs, p_run ${s}.runs, p_index integer, p_owner text, p_fence bigint,
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
    IF p_status = 'retry' AND v_run.fan_out_failed <= v_run.fan_out_retry_limit THEN
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

CREATE FUNCTION ${s}.finish_attempt(p_run_id text, p_index integer, p_owner text, p_fence bigint, p_now bigint,
    p_status text, p_error_name text, p_error_message text, p_ready_at bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_final boolean := p_status IN ('succeeded', 'failed');
BEGIN
  IF v_final OR (p_index IS NOT NULL AND p_status = 'retry') THEN
    -- Job row first (counters, pruning), then the run: the same order as schedule_run.
    SELECT j.* INTO v_job FROM ${s}.jobs j WHERE j.name = (SELECT r.job_name FROM ${s}.runs r WHERE r.id = p_run_id)
      FOR UPDATE;
  END IF;
  IF p_index IS NOT NULL THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN RETURN json_build_object('ok', false); END IF;
    RETURN ${s}.finish_index(v_job, v_run, p_index, p_owner, p_fence, p_now, p_status, p_error_name, p_error_message,
      p_ready_at);
  END IF;
  -- A plain run: one fenced UPDATE (no lock-then-write). A final outcome is end_run's write for a
  -- run without indices (a success clears the error: p_error_name is NULL then); a retry or a
  -- release leaves it pending, claimable: with attempt + 1 at its readyAt, or as it was, ready now.
  IF v_final THEN
    UPDATE ${s}.runs r SET status = p_status, finished_at = p_now, error_name = p_error_name,
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
    PERFORM ${s}.settle_history(v_job, p_status, 1, p_now);
  ELSE
    ${notifyReady('v_run')}
  END IF;
  RETURN json_build_object('ok', true, 'run', ${s}.run_json(v_run));
END
$fn$;

-- Expired leases of plain runs and of indices, earliest first (compareExpiredLeases), each recovered
-- under its job's and run's locks after a re-check; an index recovery is an index retry at p_now.
CREATE FUNCTION ${s}.recover_expired_runs(p_now bigint, p_limit integer, p_error_name text, p_error_message text)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_lease record; v_job ${s}.jobs; v_run ${s}.runs; v_index ${s}.run_indices; v_out json[] := '{}';
BEGIN
  ${sweepLock}
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
      UPDATE ${s}.runs SET status = 'pending', attempt = attempt + 1, ready_at = p_now,
          error_name = p_error_name, error_message = p_error_message, owner = NULL, lease_until = NULL,
          claimable = true, pending_until = p_now + v_job.pending_timeout_ms
        WHERE id = v_run.id RETURNING * INTO v_run;
      ${notifyReady('v_run')}
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

-- Claimable runs whose pendingUntil passed fail (comparePendingUntil order), as a final failure does.
CREATE FUNCTION ${s}.expire_pending_runs(p_now bigint, p_limit integer, p_error_name text, p_error_message text)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_due record; v_job ${s}.jobs; v_run ${s}.runs; v_out json[] := '{}';
BEGIN
  ${sweepLock}
  FOR v_due IN SELECT e.id, e.job_name FROM ${s}.runs e WHERE e.pending_until <= p_now
      ORDER BY e.pending_until, e.id LIMIT p_limit LOOP
    SELECT * INTO v_job FROM ${s}.jobs WHERE name = v_due.job_name FOR UPDATE;
    SELECT * INTO v_run FROM ${s}.runs WHERE id = v_due.id FOR UPDATE;
    CONTINUE WHEN NOT FOUND OR NOT (v_run.pending_until <= p_now);
    v_run := ${s}.end_run(v_run, 'failed', p_error_name, p_error_message, p_now, v_job.history_ttl_ms);
    PERFORM ${s}.settle_history(v_job, 'failed', 1, p_now);
    v_out := v_out || ${s}.run_json(v_run);
  END LOOP;
  RETURN json_build_object('runs', array_to_json(v_out),
    'nextAt', (SELECT min(e.pending_until) FROM ${s}.runs e WHERE e.pending_until IS NOT NULL));
END
$fn$;

-- Finished runs whose expiresAt passed are deleted (compareExpiresAt order, index records by cascade),
-- and their jobs' kept counts follow.
CREATE FUNCTION ${s}.delete_expired_runs(p_now bigint, p_limit integer) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE v_ids text[]; v_count integer;
BEGIN
  ${sweepLock}
  SELECT array_agg(e.id) INTO v_ids
    FROM (SELECT x.id FROM ${s}.runs x WHERE x.expires_at <= p_now ORDER BY x.expires_at, x.id LIMIT p_limit) e;
  IF v_ids IS NULL THEN RETURN 0; END IF;
  PERFORM 1 FROM ${s}.jobs j WHERE j.name IN (SELECT r.job_name FROM ${s}.runs r WHERE r.id = ANY (v_ids))
    ORDER BY j.name FOR UPDATE OF j;
  WITH gone AS (
    -- Re-checked (an ID picked above may since have been pruned and created again), in a form that
    -- keeps the planner on the primary key.
    DELETE FROM ${s}.runs r WHERE r.id = ANY (v_ids) AND (r.expires_at <= p_now) IS TRUE RETURNING r.job_name, r.status
  ), counts AS (
    SELECT g.job_name, count(*) FILTER (WHERE g.status = 'succeeded') AS ok,
           count(*) FILTER (WHERE g.status <> 'succeeded') AS bad
      FROM gone g GROUP BY g.job_name
  ), settled AS (
    UPDATE ${s}.jobs j SET kept_succeeded = j.kept_succeeded - c.ok, kept_failed = j.kept_failed - c.bad
      FROM counts c WHERE j.name = c.job_name
  )
  SELECT COALESCE(sum(c.ok + c.bad), 0) INTO v_count FROM counts c;
  RETURN v_count;
END
$fn$;
`;
};
