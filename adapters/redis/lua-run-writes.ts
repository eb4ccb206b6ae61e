/**
 * The run writes every store script shares, appended to the prelude (lua-prelude.ts,
 * whose key names, encodings and record helpers they use): which index a fan-out
 * claim takes, whether a run is claimable, keeping a run's derived entries in step
 * after every write (`track`), creating a run, finishing one (plain or fan-out index)
 * with its job's counters and history, pruning, cancelling.
 *
 * A run is kept in `{p}:run:<id>` and, depending on its state, in: its job's
 * `runs:` set (always), `active:` set (pending or running), `ready:` sorted set
 * (claimable, by readyAt), `succeeded:`/`failed:` history sorted set (finished, by
 * finishedAt); the partition's `running` set (a plain run's lease), `pending-until`
 * and `expiring` sorted sets. `track()` moves it between them after every write.
 * A job with claimable runs is in `ready-jobs`, scored at most its earliest readyAt
 * (a lower bound: a claim leaves it as it is, `FIND_READY_JOBS` corrects it).
 */
export const RUN_WRITES = `-- The index a claim of a fan-out run would take and when it is ready (nextWaitingIndex
-- in store-rules.ts): the earliest ready among the pending records (waiting:) and the
-- lowest never-started index (from fanStarted on, ready from createdAt), ties by
-- lowest index. Returns readyAt, index, and whether the index is never-started; nil
-- when no index waits.
local function nextWaiting(run)
  local readyAt, index
  local first = redis.call('ZRANGE', waitingKey(run.id), 0, 0, 'WITHSCORES')
  if #first > 0 then index, readyAt = tonumber(first[1]), first[2] end
  local fresh = tonumber(run.fanStarted)
  if fresh < tonumber(run.completions) then
    local createdAt = tonumber(run.createdAt)
    if not readyAt or createdAt < tonumber(readyAt) or (createdAt == tonumber(readyAt) and fresh < index) then
      return run.createdAt, fresh, true
    end
  end
  return readyAt, index, false
end

-- isClaimable in store-rules.ts.
local function claimable(run)
  if not run.completions then return run.status == 'pending' end
  return isActive(run.status) and tonumber(run.fanActive) < tonumber(run.parallelism)
    and (tonumber(run.fanStarted) < tonumber(run.completions) or redis.call('ZCARD', waitingKey(run.id)) > 0)
end

-- After every write to a run: its ready, active and lease entries follow its record,
-- the pendingUntil rule is applied, and a run left claimable is announced.
local function track(run, now)
  local id, jobName = run.id, run.jobName
  local ready = claimable(run)
  if ready then
    redis.call('ZADD', readyKey(jobName), run.readyAt, readyMember(run))
    redis.call('ZADD', READY_JOBS, 'LT', run.readyAt, jobName)
  else redis.call('ZREM', readyKey(jobName), readyMember(run)) end
  if isActive(run.status) then redis.call('SADD', activeKey(jobName), id)
  else redis.call('SREM', activeKey(jobName), id) end
  if run.status == 'running' and not run.completions then redis.call('ZADD', RUN_LEASES, run.leaseUntil, id)
  else redis.call('ZREM', RUN_LEASES, id) end
  local timeout = ready and redis.call('HGET', jobKey(jobName), 'pendingTimeout')
  if timeout then
    local pendingUntil = fmt(math.max(tonumber(run.readyAt), tonumber(now)) + tonumber(timeout))
    put(run, { pendingUntil = pendingUntil })
    redis.call('ZADD', PENDING_UNTIL, pendingUntil, id)
  elseif run.pendingUntil then
    put(run, { pendingUntil = false })
    redis.call('ZREM', PENDING_UNTIL, id)
  end
  if ready then notify({ type = 'run-ready', jobName = jobName, runId = id, readyAt = run.readyAt, pendingUntil = run.pendingUntil }) end
end

-- The job's active runs (pending or running), as records, oldest first (compareOldestFirst).
local function activeRuns(name)
  local active = {}
  for _, id in ipairs(redis.call('SMEMBERS', activeKey(name))) do
    local run = hgetall(runKey(id))
    if run then table.insert(active, run) end
  end
  table.sort(active, function(a, b)
    local ca, cb = tonumber(a.createdAt), tonumber(b.createdAt)
    if ca ~= cb then return ca < cb end
    local sa, sb = tonumber(a.scheduledAt), tonumber(b.scheduledAt)
    if sa ~= sb then return sa < sb end
    return before(a.id, b.id)
  end)
  return active
end

-- Creates a pending run from args[base .. base + 7] (the script's ARGV, newRunArgs in
-- codec.ts): readyAt (kept as the core gave it), id, jobName, scheduledAt, trigger, hasData
-- ('1'/'0'), data (JSON), traceparent (absent for none); a fan-out run when its job has fanOut.
local function insertRun(args, base, now)
  local id, jobName = args[base + 1], args[base + 2]
  local run = { id = id, jobName = jobName, scheduledAt = args[base + 3], trigger = args[base + 4], status = 'pending',
    attempt = '1', createdAt = now, readyAt = args[base], fence = '0' }
  if args[base + 5] == '1' then run.data = args[base + 6] end
  if args[base + 7] then run.traceparent = args[base + 7] end
  local fanOut = redis.call('HMGET', jobKey(jobName), 'fanCompletions', 'fanParallelism', 'retryLimit')
  if fanOut[1] then
    run.completions, run.parallelism, run.retryLimit = fanOut[1], fanOut[2], fanOut[3] or nil
    run.fanSucceeded, run.fanFailed, run.fanActive, run.fanStarted = '0', '0', '0', '0'
  end
  redis.call('HSET', runKey(id), unpack(flat(run)))
  redis.call('SADD', runsKey(jobName), id)
  track(run, now)
  return run
end

-- Deletes a finished run and its index records; the caller removes its history entry.
local function deleteFinished(id, jobName)
  redis.call('DEL', runKey(id), indicesKey(id), waitingKey(id))
  redis.call('SREM', runsKey(jobName), id)
  redis.call('ZREM', EXPIRING, id)
end

-- Deletes finished runs beyond the job's history limits (keep: succeeded, failed),
-- oldest first (pruneHistory in store-rules.ts): by rank in the history sets, only
-- when over a limit.
local function prune(name, keep)
  for i, status in ipairs({ 'succeeded', 'failed' }) do
    local key = historyKey(name, status)
    local excess = redis.call('ZCARD', key) - (tonumber(keep[i]) or 0)
    if excess > 0 then
      for _, member in ipairs(redis.call('ZRANGE', key, 0, excess - 1)) do deleteFinished(historyMemberId(member), name) end
      redis.call('ZREMRANGEBYRANK', key, 0, excess - 1)
    end
  end
end

-- Cancels the unfinished index records of a fan-out run that ends, fencing out their owners.
local function cancelIndices(run, now)
  local records = redis.call('HGETALL', indicesKey(run.id))
  for i = 1, #records, 2 do
    local record = cjson.decode(records[i + 1])
    if isActive(record.status) then
      if record.status == 'running' then redis.call('ZREM', INDEX_LEASES, indexLeaseMember(run.id, records[i])) end
      record.status, record.finishedAt, record.owner, record.leaseUntil = 'cancelled', now, nil, nil
      redis.call('HSET', indicesKey(run.id), records[i], cjson.encode(record))
    end
  end
  redis.call('DEL', waitingKey(run.id))
end

-- A run's final write (succeeded, failed or cancelled) and the bookkeeping it implies:
-- expiresAt, unfinished index records cancelled, the job's counters and history
-- (pruned), run-finished. Cancellations (Replace) prune too: pruning keeps the newest
-- of a total order, so pruning after each one ends where pruning once would.
local function finalize(run, status, now, errorJson)
  local jobName = run.jobName
  local job = redis.call('HMGET', jobKey(jobName), 'createdAt', 'historyTtl', 'historySucceeded', 'historyFailed')
  local changes = { status = status, finishedAt = now, owner = false, leaseUntil = false }
  -- A success clears the error of an earlier attempt; a cancellation keeps it for the record.
  if status == 'succeeded' then changes.error = false elseif status == 'failed' then changes.error = errorJson end
  if job[2] then changes.expiresAt = fmt(tonumber(now) + tonumber(job[2])) end
  if run.completions then
    -- After a success every index has succeeded: nothing to cancel.
    if status ~= 'succeeded' then cancelIndices(run, now) end
    changes.fanActive = '0'
  end
  put(run, changes)
  track(run, now)
  redis.call('ZADD', historyKey(jobName, status), now, historyMember(run))
  if run.expiresAt then redis.call('ZADD', EXPIRING, run.expiresAt, run.id) end
  if job[1] then
    if status == 'succeeded' then
      redis.call('HINCRBY', jobKey(jobName), 'succeeded', 1)
      redis.call('HSET', jobKey(jobName), 'lastSuccessfulTime', now)
    elseif status == 'failed' then
      redis.call('HINCRBY', jobKey(jobName), 'failed', 1)
    end
    prune(jobName, { job[3], job[4] })
  end
  notify({ type = 'run-finished', jobName = jobName, runId = run.id, status = status })
end

-- Suspending: cancels the job's runs created ahead of a tick still to come (isCreatedAhead in
-- store-rules.ts). Returns them, flattened.
local function cancelAhead(name, now)
  local cancelled = {}
  for _, run in ipairs(activeRuns(name)) do
    if run.trigger == 'schedule' and run.status == 'pending' and tonumber(run.scheduledAt) > tonumber(now) then
      finalize(run, 'cancelled', now, nil)
      table.insert(cancelled, flat(run))
    end
  end
  return cancelled
end

-- withinRetryLimit in store-rules.ts: a failed attempt is retried while the failed attempts,
-- it included, are at most the limit (absent: not limited).
local function withinRetryLimit(failed, limit)
  return not limit or tonumber(failed) <= tonumber(limit)
end

-- Applies an attempt's outcome to a plain run: succeeded | failed | retry | released. A
-- retry beyond the job's retry limit fails the run.
local function finishRun(run, outcome, now, errorJson, retryAt)
  if outcome == 'retry' and not withinRetryLimit(run.attempt, redis.call('HGET', jobKey(run.jobName), 'retryLimit')) then
    outcome = 'failed'
  end
  if outcome == 'retry' then
    put(run, { status = 'pending', attempt = tostring(tonumber(run.attempt) + 1), readyAt = retryAt, error = errorJson,
      owner = false, leaseUntil = false })
  elseif outcome == 'released' then
    put(run, { status = 'pending', readyAt = now, owner = false, leaseUntil = false })
  else
    return finalize(run, outcome, now, errorJson)
  end
  track(run, now)
end

-- Writes an unfinished fan-out run after its index records: status and readyAt follow
-- from the indices (with no index waiting, readyAt keeps its last value).
local function writeFanOut(run, changes, now)
  changes.status = tonumber(changes.fanActive or run.fanActive) > 0 and 'running' or 'pending'
  put(run, changes)
  local readyAt = nextWaiting(run)
  if readyAt and readyAt ~= run.readyAt then put(run, { readyAt = readyAt }) end
  track(run, now)
end

-- Applies an attempt's outcome to index \`index\` (its record \`record\`, running) of a
-- fan-out run, and what it implies for the run.
local function finishIndex(run, index, record, outcome, now, errorJson, retryAt)
  local id = run.id
  redis.call('ZREM', INDEX_LEASES, indexLeaseMember(id, index))
  record.owner, record.leaseUntil = nil, nil
  local changes = { fanActive = tostring(tonumber(run.fanActive) - 1) }
  local runStatus
  if outcome == 'succeeded' then
    record.status, record.finishedAt, record.error = 'succeeded', now, nil
    changes.fanSucceeded = tostring(tonumber(run.fanSucceeded) + 1)
    if tonumber(changes.fanSucceeded) >= tonumber(run.completions) then runStatus = 'succeeded' end
  elseif outcome == 'released' then
    record.status, record.readyAt = 'pending', now
  else
    changes.fanFailed = tostring(tonumber(run.fanFailed) + 1)
    record.error = errorJson
    if outcome == 'retry' and withinRetryLimit(changes.fanFailed, run.retryLimit) then
      record.status, record.attempt, record.readyAt = 'pending', tostring(tonumber(record.attempt) + 1), retryAt
    else
      record.status, record.finishedAt = 'failed', now
      runStatus = 'failed'
    end
  end
  putIndex(id, index, record)
  if record.status == 'pending' then redis.call('ZADD', waitingKey(id), record.readyAt, pad(index)) end
  if runStatus then
    put(run, changes)
    finalize(run, runStatus, now, errorJson)
  else
    writeFanOut(run, changes, now)
  end
end
`;
