/**
 * Migration 4, first half: the record encoders, the shared run-state helpers, and
 * the planning functions (jobs, scheduled, manual and backfill runs) for fan-out
 * runs, pending timeouts, history TTL and index-bounded pruning. The second half
 * (claims, finishes and sweeps) is in `migration-v4-execution.ts`.
 *
 * The helpers mirror the memory store's private steps, so each rule of
 * `src/store-rules.ts` lives in one place here too:
 * - `fan_out_next`: `nextWaitingIndex` (which index a claim takes, and when);
 * - `write_fan_out`: an unfinished fan-out run's status, `readyAt`, claimability and
 *   `pendingUntil` after its indices changed, and `run-ready` when left claimable;
 * - `end_run`: a run finishing for good (run side), `expiresAt` included;
 * - `settle_history`: the job side of finishes: counters and pruning (`pruneHistory`).
 *
 * Signatures that change are dropped and created again; the rest are replaced.
 * Append-only, like every migration.
 */
import type { SqlNames } from './sql.js';

const advance = (s: string): string =>
  `UPDATE ${s}.jobs SET cursor_at = p_cursor, last_schedule_time = p_cursor WHERE name = p_job RETURNING * INTO v_job;`;
const notifyReady = (s: string, run: string): string =>
  `PERFORM ${s}.notify(json_build_object('type', 'run-ready', 'jobName', ${run}.job_name, 'runId', ${run}.id, 'readyAt', ${run}.ready_at));`;

/**
 * Every run is created claimable: pending, ready at `readyAt` (an SQL expression:
 * `p_now`, or its tick for a run created ahead), with the job's fan-out shape at
 * zero counts.
 */
function insertRun(s: string, readyAt: string): string {
  const zero = `CASE WHEN v_job.fan_out_completions IS NULL THEN NULL ELSE 0 END`;
  return `INSERT INTO ${s}.runs (id, job_name, scheduled_at, trigger, status, attempt, created_at, ready_at, data, fence,
      claimable, pending_until, fan_out_completions, fan_out_parallelism, fan_out_retry_limit,
      fan_out_succeeded, fan_out_failed, fan_out_active)
    VALUES (p_run_id, p_job, p_scheduled_at, p_trigger, 'pending', 1, p_now, ${readyAt}, p_data, 0,
      true, ${readyAt} + v_job.pending_timeout_ms, v_job.fan_out_completions, v_job.fan_out_parallelism, v_job.fan_out_retry_limit,
      ${zero}, ${zero}, ${zero})
    ON CONFLICT (id) DO NOTHING
    RETURNING * INTO v_run;`;
}

/**
 * `upsert_job`, created with `create` (`CREATE`, or `CREATE OR REPLACE` to redefine
 * it); migration 7 adds `suspending`: a statement run after the upsert, with
 * `v_cancelled` declared, and what it adds to the result.
 */
export function upsertJobFunction(n: SqlNames, create: string, suspending?: { statement: string; result: string }): string {
  const s = n.schema;
  return `${create} FUNCTION ${s}.upsert_job(p_job text, p_schedule jsonb, p_timezone text, p_policy text, p_deadline bigint,
    p_history_succeeded integer, p_history_failed integer, p_history_ttl bigint, p_pending_timeout bigint,
    p_fan_out_completions integer, p_fan_out_parallelism integer, p_fan_out_retry_limit integer,
    p_now bigint, p_cursor bigint, p_suspended boolean)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_created boolean;${suspending === undefined ? '' : ` v_cancelled json[] := '{}';`}
BEGIN
  INSERT INTO ${s}.jobs AS t (name, schedule, timezone, concurrency_policy, starting_deadline_ms,
      history_succeeded, history_failed, history_ttl_ms, pending_timeout_ms,
      fan_out_completions, fan_out_parallelism, fan_out_retry_limit, suspended, created_at, cursor_at)
    VALUES (p_job, p_schedule, p_timezone, p_policy, p_deadline, p_history_succeeded, p_history_failed, p_history_ttl,
      p_pending_timeout, p_fan_out_completions, p_fan_out_parallelism, p_fan_out_retry_limit,
      COALESCE(p_suspended, false), p_now, p_cursor)
    ON CONFLICT (name) DO UPDATE SET schedule = EXCLUDED.schedule, timezone = EXCLUDED.timezone,
      concurrency_policy = EXCLUDED.concurrency_policy, starting_deadline_ms = EXCLUDED.starting_deadline_ms,
      history_succeeded = EXCLUDED.history_succeeded, history_failed = EXCLUDED.history_failed,
      history_ttl_ms = EXCLUDED.history_ttl_ms, pending_timeout_ms = EXCLUDED.pending_timeout_ms,
      fan_out_completions = EXCLUDED.fan_out_completions, fan_out_parallelism = EXCLUDED.fan_out_parallelism,
      fan_out_retry_limit = EXCLUDED.fan_out_retry_limit,
      suspended = COALESCE(p_suspended, t.suspended)
    RETURNING (t.xmax = 0) INTO v_created;
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job;
${suspending?.statement ?? ''}  PERFORM ${s}.notify(json_build_object('type', 'job-changed', 'jobName', p_job));
  RETURN json_build_object('job', ${s}.job_json(v_job), 'created', v_created${suspending?.result ?? ''});
END
$fn$;

`;
}

/**
 * `schedule_run`, creating its run ready at `readyAt` (see `insertRun`); migration 7
 * redefines it. Migration 8 adds `limits`: a `p_ready_at` argument (a new overload),
 * the `maxRuns` refusal, `BufferOne` blocked like `CatchUp`, and `scheduled_runs` + 1
 * with each created run.
 */
export function scheduleRunFunction(n: SqlNames, readyAt: string, limits = false): string {
  const s = n.schema;
  const blocking = limits ? `v_job.concurrency_policy IN ('CatchUp', 'BufferOne')` : `v_job.concurrency_policy = 'CatchUp'`;
  return `CREATE OR REPLACE FUNCTION ${s}.schedule_run(p_job text, p_expected bigint, p_cursor bigint, p_run_id text,
    p_scheduled_at bigint, p_trigger text, p_data json, p_now bigint${limits ? ', p_ready_at bigint' : ''})
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs; v_active text[]; v_cancel ${s}.runs; v_cancelled json[] := '{}';
BEGIN
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR UPDATE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'conflict'); END IF;
  IF v_job.suspended OR v_job.cursor_at <> p_expected THEN
    RETURN json_build_object('outcome', 'conflict', 'job', ${s}.job_json(v_job));
  END IF;
  IF p_run_id IS NULL THEN
    ${advance(s)}
    RETURN json_build_object('outcome', 'advanced', 'job', ${s}.job_json(v_job));
  END IF;
  SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
  IF FOUND THEN
    ${advance(s)}
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;${limits ? `
  IF v_job.max_runs IS NOT NULL AND v_job.scheduled_runs >= v_job.max_runs THEN
    RETURN json_build_object('outcome', 'conflict', 'job', ${s}.job_json(v_job));
  END IF;` : ''}
  SELECT COALESCE(array_agg(a.id ORDER BY a.created_at, a.scheduled_at, a.id), '{}') INTO v_active
    FROM ${s}.runs a WHERE a.job_name = p_job AND a.status IN ('pending', 'running');
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'Forbid' THEN
    UPDATE ${s}.jobs SET skipped = skipped + 1, cursor_at = p_cursor, last_schedule_time = p_cursor
      WHERE name = p_job RETURNING * INTO v_job;
    RETURN json_build_object('outcome', 'skipped', 'job', ${s}.job_json(v_job), 'active', to_json(v_active));
  END IF;
  IF cardinality(v_active) > 0 AND ${blocking} THEN
    RETURN json_build_object('outcome', 'blocked', 'job', ${s}.job_json(v_job), 'active', to_json(v_active));
  END IF;
  IF cardinality(v_active) > 0 AND v_job.concurrency_policy = 'Replace' THEN
    FOR v_cancel IN SELECT * FROM ${s}.runs c WHERE c.id = ANY (v_active)
        ORDER BY c.created_at, c.scheduled_at, c.id FOR UPDATE LOOP
      v_cancel := ${s}.end_run(v_cancel, 'cancelled', NULL, NULL, p_now, v_job.history_ttl_ms);
      v_cancelled := v_cancelled || ${s}.run_json(v_cancel);
    END LOOP;
  END IF;
  ${insertRun(s, readyAt)}
  IF NOT FOUND THEN
    -- Another job's manual run took this ID in the meantime: same as finding it above.
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    ${advance(s)}
    IF cardinality(v_cancelled) > 0 THEN
      PERFORM ${s}.settle_history(v_job, 'cancelled', cardinality(v_cancelled), p_now);
    END IF;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  ${limits ? `UPDATE ${s}.jobs SET scheduled_runs = scheduled_runs + 1, cursor_at = p_cursor, last_schedule_time = p_cursor
    WHERE name = p_job RETURNING * INTO v_job;` : advance(s)}
  IF cardinality(v_cancelled) > 0 THEN
    PERFORM ${s}.settle_history(v_job, 'cancelled', cardinality(v_cancelled), p_now);
  END IF;
  ${notifyReady(s, 'v_run')}
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run),
    'cancelled', array_to_json(v_cancelled));
END
$fn$;

`;
}

/** `job_json`: a job row as the contract's record; migration 8 adds `extra` (`, 'key', value` pairs). */
export function jobJsonFunction(n: SqlNames, extra = ''): string {
  const s = n.schema;
  return `CREATE OR REPLACE FUNCTION ${s}.job_json(j ${s}.jobs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
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
    'succeeded', j.succeeded, 'failed', j.failed, 'skipped', j.skipped, 'backfills', j.backfills${extra})
$fn$;`;
}

export const FUNCTIONS_V4_MIGRATION = (n: SqlNames): string => {
  const s = n.schema;
  const historyOrder = 'f.finished_at DESC NULLS LAST, f.created_at DESC, f.scheduled_at DESC, f.id DESC';
  return `
DROP FUNCTION ${s}.prune_history(text, integer, integer);
DROP FUNCTION ${s}.upsert_job(text, jsonb, text, text, bigint, integer, integer, bigint, bigint, boolean);

CREATE OR REPLACE FUNCTION ${s}.run_json(r ${s}.runs) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'id', r.id, 'jobName', r.job_name, 'scheduledAt', r.scheduled_at, 'trigger', r.trigger,
    'status', r.status, 'attempt', r.attempt, 'createdAt', r.created_at, 'readyAt', r.ready_at,
    'startedAt', r.started_at, 'finishedAt', r.finished_at,
    'error', CASE WHEN r.error_name IS NULL THEN NULL
                  ELSE json_build_object('name', r.error_name, 'message', r.error_message) END,
    'hasData', r.data IS NOT NULL, 'data', r.data,
    'owner', r.owner, 'leaseUntil', r.lease_until, 'fence', r.fence, 'deadlineAt', r.deadline_at,
    'fanOut', CASE WHEN r.fan_out_completions IS NULL THEN NULL
                   ELSE json_build_object('completions', r.fan_out_completions, 'parallelism', r.fan_out_parallelism,
                     'retryLimit', r.fan_out_retry_limit, 'succeeded', r.fan_out_succeeded, 'failed', r.fan_out_failed,
                     'active', r.fan_out_active) END,
    'pendingUntil', r.pending_until, 'expiresAt', r.expires_at)
$fn$;

CREATE FUNCTION ${s}.index_json(i ${s}.run_indices) RETURNS json LANGUAGE sql IMMUTABLE AS $fn$
  SELECT json_build_object(
    'runId', i.run_id, 'index', i.idx, 'status', i.status, 'attempt', i.attempt, 'readyAt', i.ready_at,
    'startedAt', i.started_at, 'finishedAt', i.finished_at,
    'error', CASE WHEN i.error_name IS NULL THEN NULL
                  ELSE json_build_object('name', i.error_name, 'message', i.error_message) END,
    'owner', i.owner, 'leaseUntil', i.lease_until, 'fence', i.fence)
$fn$;

${jobJsonFunction(n)}

-- nextWaitingIndex: the waiting index a claim takes (earliest ready, ties by lowest index), or NULLs.
-- Claims take never-started indices lowest first (they all tie, ready from the run's creation), so
-- the started indices are always 0 .. n-1 and the lowest never-started one is n: two index probes.
CREATE FUNCTION ${s}.fan_out_next(p_run_id text, p_created_at bigint, p_completions integer,
    OUT o_idx integer, OUT o_ready_at bigint) LANGUAGE plpgsql STABLE AS $fn$
DECLARE v_fresh integer;
BEGIN
  SELECT i.idx, i.ready_at INTO o_idx, o_ready_at FROM ${s}.run_indices i
    WHERE i.run_id = p_run_id AND i.status = 'pending' ORDER BY i.ready_at, i.idx LIMIT 1;
  v_fresh := COALESCE((SELECT i.idx FROM ${s}.run_indices i WHERE i.run_id = p_run_id ORDER BY i.idx DESC LIMIT 1), -1) + 1;
  IF v_fresh < p_completions AND (o_idx IS NULL OR (p_created_at, v_fresh) < (o_ready_at, o_idx)) THEN
    o_idx := v_fresh;
    o_ready_at := p_created_at;
  END IF;
END
$fn$;

-- Writes an unfinished fan-out run whose index records were just written: running while an index
-- runs, readyAt of the next waiting index (kept when none waits), claimable while one waits and
-- parallelism allows, pendingUntil by the pendingUntil rule, and run-ready when left claimable.
CREATE FUNCTION ${s}.write_fan_out(p_run ${s}.runs, p_now bigint) RETURNS ${s}.runs LANGUAGE plpgsql AS $fn$
DECLARE v_next record; v_claimable boolean; v_ready bigint; v_run ${s}.runs;
BEGIN
  SELECT * INTO v_next FROM ${s}.fan_out_next(p_run.id, p_run.created_at, p_run.fan_out_completions);
  v_claimable := p_run.fan_out_active < p_run.fan_out_parallelism AND v_next.o_idx IS NOT NULL;
  v_ready := COALESCE(v_next.o_ready_at, p_run.ready_at);
  UPDATE ${s}.runs SET status = CASE WHEN p_run.fan_out_active > 0 THEN 'running' ELSE 'pending' END,
      ready_at = v_ready, started_at = p_run.started_at, deadline_at = p_run.deadline_at,
      fan_out_succeeded = p_run.fan_out_succeeded, fan_out_failed = p_run.fan_out_failed,
      fan_out_active = p_run.fan_out_active, claimable = v_claimable,
      pending_until = CASE WHEN v_claimable THEN GREATEST(v_ready, p_now)
                        + (SELECT j.pending_timeout_ms FROM ${s}.jobs j WHERE j.name = p_run.job_name) END
    WHERE id = p_run.id
    RETURNING * INTO v_run;
  IF v_claimable THEN
    ${notifyReady(s, 'v_run')}
  END IF;
  RETURN v_run;
END
$fn$;

-- Finishes a run for good, run side: its unfinished index records cancelled (fencing out their
-- owners), lease and pendingUntil cleared, expiresAt set (p_ttl: the job's history TTL), and
-- run-finished sent. A success clears an earlier attempt's error; a cancellation keeps it.
-- The caller holds the job row and settles the job side with settle_history. (finish_attempt
-- writes a plain run's final outcome itself, fenced, in one UPDATE with the same fields.)
CREATE FUNCTION ${s}.end_run(p_run ${s}.runs, p_status text, p_error_name text, p_error_message text, p_now bigint,
    p_ttl bigint) RETURNS ${s}.runs LANGUAGE plpgsql AS $fn$
DECLARE v_run ${s}.runs;
BEGIN
  IF p_run.fan_out_completions IS NOT NULL THEN
    UPDATE ${s}.run_indices SET status = 'cancelled', finished_at = p_now, owner = NULL, lease_until = NULL
      WHERE run_id = p_run.id AND status IN ('pending', 'running');
  END IF;
  UPDATE ${s}.runs SET status = p_status, finished_at = p_now,
      error_name = CASE p_status WHEN 'failed' THEN p_error_name WHEN 'cancelled' THEN error_name END,
      error_message = CASE p_status WHEN 'failed' THEN p_error_message WHEN 'cancelled' THEN error_message END,
      owner = NULL, lease_until = NULL, claimable = false, pending_until = NULL, expires_at = p_now + p_ttl,
      fan_out_succeeded = p_run.fan_out_succeeded, fan_out_failed = p_run.fan_out_failed,
      fan_out_active = CASE WHEN p_run.fan_out_completions IS NULL THEN NULL ELSE 0 END
    WHERE id = p_run.id
    RETURNING * INTO v_run;
  PERFORM ${s}.notify(json_build_object('type', 'run-finished', 'jobName', v_run.job_name, 'runId', v_run.id,
    'status', v_run.status));
  RETURN v_run;
END
$fn$;

-- The job side of p_count runs finishing with p_status (p_job: the job's row, locked by the caller):
-- counters, lastSuccessfulTime, and history pruning in one write of the job row. kept_* count the
-- job's finished runs per limit, so pruning happens only when one passes its limit, and deletes just
-- the runs beyond it: OFFSET limit LIMIT excess along that limit's history index, in pruneHistory's
-- order. (The LIMIT also keeps the planner on that index whatever the statistics say.) Every write
-- that finishes or deletes a run holds the job row and keeps kept_* exact; should they ever run
-- ahead (rows deleted by hand), a prune that finds nothing beyond the limit recounts.
CREATE FUNCTION ${s}.settle_history(p_job ${s}.jobs, p_status text, p_count integer, p_now bigint)
  RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_ok integer := p_job.kept_succeeded + CASE WHEN p_status = 'succeeded' THEN p_count ELSE 0 END;
  v_bad integer := p_job.kept_failed + CASE WHEN p_status = 'succeeded' THEN 0 ELSE p_count END;
  v_deleted integer;
BEGIN
  IF v_ok > p_job.history_succeeded THEN
    DELETE FROM ${s}.runs WHERE id = ANY (ARRAY(
      SELECT f.id FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status = 'succeeded'
        ORDER BY ${historyOrder} OFFSET p_job.history_succeeded LIMIT v_ok - p_job.history_succeeded));
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    -- Nothing beyond the limit: the count ran ahead, take the real one (at most the limit).
    v_ok := CASE WHEN v_deleted > 0 THEN p_job.history_succeeded
                 ELSE (SELECT count(*) FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status = 'succeeded') END;
  END IF;
  IF v_bad > p_job.history_failed THEN
    DELETE FROM ${s}.runs WHERE id = ANY (ARRAY(
      SELECT f.id FROM ${s}.runs f WHERE f.job_name = p_job.name AND f.status IN ('failed', 'cancelled')
        ORDER BY ${historyOrder} OFFSET p_job.history_failed LIMIT v_bad - p_job.history_failed));
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
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

${upsertJobFunction(n, 'CREATE')}${scheduleRunFunction(n, 'p_now')}CREATE OR REPLACE FUNCTION ${s}.create_run(p_run_id text, p_job text, p_scheduled_at bigint, p_trigger text, p_data json,
    p_now bigint)
  RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE v_job ${s}.jobs; v_run ${s}.runs;
BEGIN
  -- A share lock on the job orders this insert against schedule_run's checks.
  SELECT * INTO v_job FROM ${s}.jobs WHERE name = p_job FOR SHARE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'missing-job'); END IF;
  ${insertRun(s, 'p_now')}
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'run', ${s}.run_json(v_run));
  END IF;
  ${notifyReady(s, 'v_run')}
  RETURN json_build_object('outcome', 'created', 'run', ${s}.run_json(v_run));
END
$fn$;

CREATE OR REPLACE FUNCTION ${s}.schedule_backfill_run(p_job text, p_backfill_id text, p_expected_next bigint, p_next bigint,
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
  ${insertRun(s, 'p_now')}
  IF NOT FOUND THEN
    SELECT * INTO v_run FROM ${s}.runs WHERE id = p_run_id;
    RETURN json_build_object('outcome', 'exists', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
  END IF;
  ${notifyReady(s, 'v_run')}
  RETURN json_build_object('outcome', 'created', 'job', ${s}.job_json(v_job), 'run', ${s}.run_json(v_run));
END
$fn$;
`;
};
