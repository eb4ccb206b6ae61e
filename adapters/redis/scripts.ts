/**
 * The Lua scripts of the Redis store: one script per atomic contract method, so a
 * decision and its writes happen in one indivisible step on the server.
 *
 * Conventions every script follows:
 * - `KEYS[1]` is the store's hash tag, `{prefix}`; every key a script touches is
 *   built from it (`{prefix}:job:<name>`, ...), so all of them live in one cluster
 *   slot and cluster routing follows KEYS[1].
 * - Time comes from ARGV (`now`, `leaseUntil`, ...); no script reads `TIME`.
 * - Numbers arrive as decimal strings written by JavaScript and are stored as they
 *   came; Lua only compares them (`tonumber`) and formats small counters (attempt,
 *   fence). `data`, `error` and the job spec are JSON strings written by
 *   JavaScript and never decoded here, so they round-trip exactly (cjson would turn
 *   `[]` into `{}` and round large numbers).
 * - Records come back as flat HGETALL arrays, decoded by `codec.ts`.
 * - Notifications are published from inside the script, atomically with the write.
 */

/** Key helpers and the record operations shared by the store scripts. */
const PRELUDE = `
local P = KEYS[1]
local JOBS = P .. ':jobs'
local RUNNING = P .. ':running'
local EVENTS = P .. ':events'
local function jobKey(name) return P .. ':job:' .. name end
local function runsKey(name) return P .. ':runs:' .. name end
local function pendingKey(name) return P .. ':pending:' .. name end
local function backfillsKey(name) return P .. ':backfills:' .. name end
local function runKey(id) return P .. ':run:' .. id end

local function notify(message) redis.call('PUBLISH', EVENTS, cjson.encode(message)) end

local function hgetall(key)
  local flat = redis.call('HGETALL', key)
  if #flat == 0 then return nil end
  local record = {}
  for i = 1, #flat, 2 do record[flat[i]] = flat[i + 1] end
  return record
end

local function jobReply(name)
  return { redis.call('HGETALL', jobKey(name)), redis.call('LRANGE', backfillsKey(name), 0, -1) }
end

local function runReply(id) return redis.call('HGETALL', runKey(id)) end

-- Byte order, as JavaScript compares ASCII IDs (Lua's own < on strings follows the server's locale).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local function isActive(status) return status == 'pending' or status == 'running' end

-- Keeps the pending and running indexes in step with a run's status.
local function index(id, jobName, status, readyAt, leaseUntil)
  if status == 'pending' then redis.call('ZADD', pendingKey(jobName), readyAt, id)
  else redis.call('ZREM', pendingKey(jobName), id) end
  if status == 'running' then redis.call('ZADD', RUNNING, leaseUntil, id)
  else redis.call('ZREM', RUNNING, id) end
end

local function deleteRun(id, jobName)
  redis.call('DEL', runKey(id))
  redis.call('ZREM', pendingKey(jobName), id)
  redis.call('ZREM', RUNNING, id)
  redis.call('SREM', runsKey(jobName), id)
end

-- The job's active runs (pending or running), as records.
local function activeRuns(name)
  local active = {}
  for _, id in ipairs(redis.call('SMEMBERS', runsKey(name))) do
    local run = hgetall(runKey(id))
    if run and isActive(run.status) then table.insert(active, run) end
  end
  -- Creation order, as the runs were added.
  table.sort(active, function(a, b)
    local ca, cb = tonumber(a.createdAt), tonumber(b.createdAt)
    if ca ~= cb then return ca < cb end
    local sa, sb = tonumber(a.scheduledAt), tonumber(b.scheduledAt)
    if sa ~= sb then return sa < sb end
    return before(a.id, b.id)
  end)
  return active
end

-- Creates a pending run from ARGV[base .. base + 5]: id, jobName, scheduledAt,
-- trigger, hasData ('1'/'0'), data (JSON). Returns the run's id and job name.
local function insertRun(base, now)
  local id, jobName = ARGV[base], ARGV[base + 1]
  local key = runKey(id)
  redis.call('HSET', key, 'id', id, 'jobName', jobName, 'scheduledAt', ARGV[base + 2], 'trigger', ARGV[base + 3],
    'status', 'pending', 'attempt', '1', 'createdAt', now, 'readyAt', now, 'fence', '0')
  if ARGV[base + 4] == '1' then redis.call('HSET', key, 'data', ARGV[base + 5]) end
  redis.call('SADD', runsKey(jobName), id)
  index(id, jobName, 'pending', now, nil)
  notify({ type = 'run-ready', jobName = jobName, runId = id, readyAt = now })
  return id
end

-- Deletes finished runs beyond the job's history limits, most recently finished kept
-- (mirrors pruneHistory in src/store-rules.ts).
local function prune(name)
  local limits = redis.call('HMGET', jobKey(name), 'historySucceeded', 'historyFailed')
  local keepSucceeded, keepFailed = tonumber(limits[1]) or 0, tonumber(limits[2]) or 0
  local finished = {}
  for _, id in ipairs(redis.call('SMEMBERS', runsKey(name))) do
    local f = redis.call('HMGET', runKey(id), 'status', 'finishedAt', 'createdAt', 'scheduledAt')
    if f[1] and not isActive(f[1]) then
      table.insert(finished, { id = id, status = f[1], finishedAt = tonumber(f[2]) or 0,
        createdAt = tonumber(f[3]) or 0, scheduledAt = tonumber(f[4]) or 0 })
    end
  end
  table.sort(finished, function(a, b)
    if a.finishedAt ~= b.finishedAt then return a.finishedAt > b.finishedAt end
    if a.createdAt ~= b.createdAt then return a.createdAt > b.createdAt end
    if a.scheduledAt ~= b.scheduledAt then return a.scheduledAt > b.scheduledAt end
    return before(b.id, a.id)
  end)
  local succeeded, failed = 0, 0
  for _, run in ipairs(finished) do
    if run.status == 'succeeded' then
      succeeded = succeeded + 1
      if succeeded > keepSucceeded then deleteRun(run.id, name) end
    else
      failed = failed + 1
      if failed > keepFailed then deleteRun(run.id, name) end
    end
  end
end

-- Applies an attempt's outcome (or a cancellation) to a running or pending run and
-- does the job-side bookkeeping; returns the run record as written (before pruning,
-- which may delete it). outcome: succeeded | failed | retry | released | cancelled.
local function finish(run, outcome, now, errorJson, retryAt)
  local key, id, jobName = runKey(run.id), run.id, run.jobName
  redis.call('HDEL', key, 'owner', 'leaseUntil')
  if outcome == 'retry' then
    redis.call('HSET', key, 'status', 'pending', 'attempt', tostring(tonumber(run.attempt) + 1), 'readyAt', retryAt,
      'error', errorJson)
    index(id, jobName, 'pending', retryAt, nil)
    notify({ type = 'run-ready', jobName = jobName, runId = id, readyAt = retryAt })
    return runReply(id)
  end
  if outcome == 'released' then
    redis.call('HSET', key, 'status', 'pending', 'readyAt', now)
    index(id, jobName, 'pending', now, nil)
    notify({ type = 'run-ready', jobName = jobName, runId = id, readyAt = now })
    return runReply(id)
  end
  -- A success clears the error of an earlier attempt; a cancellation keeps it for the record.
  if outcome == 'succeeded' then redis.call('HDEL', key, 'error') end
  if outcome == 'failed' then redis.call('HSET', key, 'error', errorJson) end
  redis.call('HSET', key, 'status', outcome, 'finishedAt', now)
  index(id, jobName, outcome, nil, nil)
  local reply = runReply(id)
  local job = jobKey(jobName)
  if redis.call('EXISTS', job) == 1 then
    if outcome == 'succeeded' then
      redis.call('HINCRBY', job, 'succeeded', 1)
      redis.call('HSET', job, 'lastSuccessfulTime', now)
    elseif outcome == 'failed' then
      redis.call('HINCRBY', job, 'failed', 1)
    end
    -- Cancellations happen inside scheduleRun, which prunes once for all of them.
    if outcome ~= 'cancelled' then prune(jobName) end
  end
  notify({ type = 'run-finished', jobName = jobName, runId = id, status = outcome })
  return reply
end

-- The run if it is running under this owner and fence.
local function owned(id, owner, fence)
  local run = hgetall(runKey(id))
  if run and run.status == 'running' and run.owner == owner and tonumber(run.fence) == tonumber(fence) then
    return run, run
  end
  return nil, run
end
`;

/** Builds a store script: the prelude, then the script's own body. */
function script(body: string): string {
  return `${PRELUDE}\n${body}`;
}

/** Records the layout version on first use and returns the stored one. */
export const INIT = script(`
local version = redis.call('GET', P .. ':version')
if not version then
  redis.call('SET', P .. ':version', ARGV[1])
  return ARGV[1]
end
return version
`);

/** ARGV: name, specJson, policy, historySucceeded, historyFailed, now, initialCursor, suspended ('' | '0' | '1'). */
export const UPSERT_JOB = script(`
local name, suspended = ARGV[1], ARGV[8]
local key = jobKey(name)
local created = redis.call('EXISTS', key) == 0
redis.call('HSET', key, 'spec', ARGV[2], 'policy', ARGV[3], 'historySucceeded', ARGV[4], 'historyFailed', ARGV[5])
if created then
  redis.call('HSET', key, 'createdAt', ARGV[6], 'cursor', ARGV[7], 'succeeded', '0', 'failed', '0', 'skipped', '0',
    'suspended', suspended == '1' and '1' or '0')
  redis.call('ZADD', JOBS, 0, name)
elseif suspended ~= '' then
  redis.call('HSET', key, 'suspended', suspended)
end
notify({ type = 'job-changed', jobName = name })
return { created and '1' or '0', jobReply(name) }
`);

/** ARGV: name. Returns the job, or nil. */
export const GET_JOB = script(`
if redis.call('EXISTS', jobKey(ARGV[1])) == 0 then return false end
return jobReply(ARGV[1])
`);

/** Every job, in one consistent read. */
export const LIST_JOBS = script(`
local jobs = {}
for _, name in ipairs(redis.call('ZRANGE', JOBS, 0, -1)) do
  if redis.call('EXISTS', jobKey(name)) == 1 then table.insert(jobs, jobReply(name)) end
end
return jobs
`);

/** ARGV: name. Returns '1' when the job was removed, '0' when absent. */
export const REMOVE_JOB = script(`
local name = ARGV[1]
if redis.call('EXISTS', jobKey(name)) == 0 then return '0' end
for _, id in ipairs(redis.call('SMEMBERS', runsKey(name))) do
  redis.call('DEL', runKey(id))
  redis.call('ZREM', RUNNING, id)
end
redis.call('DEL', jobKey(name), runsKey(name), pendingKey(name), backfillsKey(name))
redis.call('ZREM', JOBS, name)
notify({ type = 'job-changed', jobName = name })
return '1'
`);

/** ARGV: name, suspended ('0' | '1'). Returns the job, or nil. */
export const SET_SUSPENDED = script(`
local name = ARGV[1]
if redis.call('EXISTS', jobKey(name)) == 0 then return false end
redis.call('HSET', jobKey(name), 'suspended', ARGV[2])
notify({ type = 'job-changed', jobName = name })
return jobReply(name)
`);

/**
 * ARGV: jobName, expectedCursor, cursor, now, hasRun ('1' | '0'), then the run
 * (id, jobName, scheduledAt, trigger, hasData, data).
 * Returns { outcome, job, run | activeIds, cancelled }.
 */
export const SCHEDULE_RUN = script(`
local name, expected, cursor, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local key = jobKey(name)
if redis.call('EXISTS', key) == 0 then return { 'conflict' } end
local job = redis.call('HMGET', key, 'suspended', 'cursor', 'policy')
if job[1] == '1' or tonumber(job[2]) ~= tonumber(expected) then return { 'conflict', jobReply(name) } end
local function advance() redis.call('HSET', key, 'cursor', cursor, 'lastScheduleTime', cursor) end
if ARGV[5] ~= '1' then
  advance()
  return { 'advanced', jobReply(name) }
end
local runId = ARGV[6]
if redis.call('EXISTS', runKey(runId)) == 1 then
  advance()
  return { 'exists', jobReply(name), runReply(runId) }
end
local policy = job[3]
local active = activeRuns(name)
local activeIds = {}
for _, run in ipairs(active) do table.insert(activeIds, run.id) end
if #active > 0 and policy == 'Forbid' then
  redis.call('HINCRBY', key, 'skipped', 1)
  advance()
  return { 'skipped', jobReply(name), activeIds }
end
if #active > 0 and policy == 'CatchUp' then return { 'blocked', jobReply(name), activeIds } end
local cancelled = {}
if policy == 'Replace' then
  for _, run in ipairs(active) do table.insert(cancelled, finish(run, 'cancelled', now, nil, nil)) end
end
insertRun(6, now)
advance()
if #cancelled > 0 then prune(name) end
return { 'created', jobReply(name), runReply(runId), cancelled }
`);

/** ARGV: now, then the run (id, jobName, scheduledAt, trigger, hasData, data). Returns { outcome, run }. */
export const CREATE_RUN = script(`
local now, id, jobName = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', jobKey(jobName)) == 0 then return { 'missing-job' } end
if redis.call('EXISTS', runKey(id)) == 1 then return { 'exists', runReply(id) } end
insertRun(2, now)
return { 'created', runReply(id) }
`);

/** ARGV: jobName, encoded range (\`next to id\`). Returns the job, or nil. */
export const ADD_BACKFILL = script(`
local name = ARGV[1]
if redis.call('EXISTS', jobKey(name)) == 0 then return false end
redis.call('RPUSH', backfillsKey(name), ARGV[2])
notify({ type = 'job-changed', jobName = name })
return jobReply(name)
`);

/**
 * ARGV: jobName, backfillId, expectedNext, next ('' when the range ends), now, then
 * the run (id, jobName, scheduledAt, trigger, hasData, data).
 * Returns { outcome, job, run }.
 */
export const SCHEDULE_BACKFILL_RUN = script(`
local name, backfillId, expectedNext, nextTick, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = jobKey(name)
if redis.call('EXISTS', key) == 0 then return { 'conflict' } end
local first = redis.call('LINDEX', backfillsKey(name), 0)
local firstNext, firstTo, firstId
if first then firstNext, firstTo, firstId = string.match(first, '^(%S+) (%S+) (.*)$') end
if redis.call('HGET', key, 'suspended') == '1' or not firstId or firstId ~= backfillId
  or tonumber(firstNext) ~= tonumber(expectedNext) then
  return { 'conflict', jobReply(name) }
end
for _, run in ipairs(activeRuns(name)) do
  if run.trigger == 'backfill' then return { 'blocked', jobReply(name) } end
end
if nextTick == '' then redis.call('LPOP', backfillsKey(name))
else redis.call('LSET', backfillsKey(name), 0, nextTick .. ' ' .. firstTo .. ' ' .. firstId) end
local runId = ARGV[6]
if redis.call('EXISTS', runKey(runId)) == 1 then return { 'exists', jobReply(name), runReply(runId) } end
insertRun(6, now)
return { 'created', jobReply(name), runReply(runId) }
`);

/**
 * ARGV: now, limit, jobName... Ready runs of each job (up to \`limit\` each, plus
 * the rest of a tie on the last \`readyAt\` so the caller can order ties), and the
 * earliest later \`readyAt\` among those jobs ('' when none).
 */
export const FIND_READY_RUNS = script(`
local now, limit = ARGV[1], tonumber(ARGV[2])
local runs, nextReadyAt = {}, nil
for i = 3, #ARGV do
  local key = pendingKey(ARGV[i])
  local ready = redis.call('ZRANGE', key, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')
  local ids, seen = {}, {}
  for j = 1, #ready, 2 do
    table.insert(ids, ready[j])
    seen[ready[j]] = true
  end
  if limit > 0 and #ids == limit then
    local last = ready[#ready]
    for _, id in ipairs(redis.call('ZRANGE', key, last, last, 'BYSCORE')) do
      if not seen[id] then table.insert(ids, id) end
    end
  end
  for _, id in ipairs(ids) do
    local run = runReply(id)
    if #run > 0 then table.insert(runs, run) end
  end
  local later = redis.call('ZRANGE', key, '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  if #later > 0 and (nextReadyAt == nil or tonumber(later[2]) < tonumber(nextReadyAt)) then nextReadyAt = later[2] end
end
return { runs, nextReadyAt or '' }
`);

/** ARGV: runId, owner, now, leaseUntil, deadlineAt ('' when none). Returns the claimed run, or nil. */
export const CLAIM_RUN = script(`
local id, owner, now, leaseUntil, deadlineAt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local run = hgetall(runKey(id))
if not run or run.status ~= 'pending' or tonumber(run.readyAt) > tonumber(now) then return false end
local key = runKey(id)
redis.call('HSET', key, 'status', 'running', 'owner', owner, 'leaseUntil', leaseUntil,
  'fence', tostring(tonumber(run.fence) + 1))
if not run.startedAt then redis.call('HSET', key, 'startedAt', now) end
if not run.deadlineAt and deadlineAt ~= '' then redis.call('HSET', key, 'deadlineAt', deadlineAt) end
index(id, run.jobName, 'running', nil, leaseUntil)
return runReply(id)
`);

/** ARGV: runId, owner, fence, now, leaseUntil. Returns { '1' } or { '0', status | '' }. */
export const RENEW_LEASE = script(`
local id, leaseUntil = ARGV[1], ARGV[5]
local run, current = owned(id, ARGV[2], ARGV[3])
if not run then return { '0', current and current.status or '' } end
redis.call('HSET', runKey(id), 'leaseUntil', leaseUntil)
redis.call('ZADD', RUNNING, leaseUntil, id)
return { '1' }
`);

/**
 * ARGV: runId, owner, fence, now, outcome (succeeded | failed | retry | released),
 * errorJson, retryReadyAt. Returns { '1', run } or { '0', run | {} }.
 */
export const FINISH_ATTEMPT = script(`
local id, now = ARGV[1], ARGV[4]
local run, current = owned(id, ARGV[2], ARGV[3])
if not run then return { '0', current and runReply(id) or {} } end
return { '1', finish(run, ARGV[5], now, ARGV[6], ARGV[7]) }
`);

/** ARGV: now, limit. Returns the recovered runs. */
export const RECOVER_EXPIRED_RUNS = script(`
local now, limit = ARGV[1], tonumber(ARGV[2])
local recovered = {}
if limit <= 0 then return recovered end
for _, id in ipairs(redis.call('ZRANGE', RUNNING, '-inf', '(' .. now, 'BYSCORE', 'LIMIT', 0, limit)) do
  local run = hgetall(runKey(id))
  if not run or run.status ~= 'running' then
    redis.call('ZREM', RUNNING, id)
  elseif tonumber(run.leaseUntil) < tonumber(now) then
    local key = runKey(id)
    redis.call('HDEL', key, 'owner', 'leaseUntil')
    redis.call('HSET', key, 'status', 'pending', 'attempt', tostring(tonumber(run.attempt) + 1), 'readyAt', now,
      'error', cjson.encode({ name = 'LeaseExpiredError', message = 'lease of ' .. (run.owner or 'unknown owner') .. ' expired' }))
    index(id, run.jobName, 'pending', now, nil)
    notify({ type = 'run-ready', jobName = run.jobName, runId = id, readyAt = now })
    table.insert(recovered, runReply(id))
  end
end
return recovered
`);

/** ARGV: jobName. Every run of the job, in one consistent read. */
export const LIST_RUNS = script(`
local runs = {}
for _, id in ipairs(redis.call('SMEMBERS', runsKey(ARGV[1]))) do
  local run = runReply(id)
  if #run > 0 then table.insert(runs, run) end
end
return runs
`);

/** Every store script, for `init()` to load. */
export const STORE_SCRIPTS: readonly string[] = [
  INIT, UPSERT_JOB, GET_JOB, LIST_JOBS, REMOVE_JOB, SET_SUSPENDED, SCHEDULE_RUN, CREATE_RUN, ADD_BACKFILL,
  SCHEDULE_BACKFILL_RUN, FIND_READY_RUNS, CLAIM_RUN, RENEW_LEASE, FINISH_ATTEMPT, RECOVER_EXPIRED_RUNS, LIST_RUNS,
];
