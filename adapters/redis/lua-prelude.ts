/**
 * The Lua every store script starts with: key names, number and order encodings,
 * and the record operations the scripts share (writing a run and keeping its
 * derived entries in step, finishing and pruning, fan-out index bookkeeping).
 *
 * Conventions every script follows:
 * - `KEYS` are hash tags (`key-layout.ts`): a partition's (`{prefix}` itself in a
 *   store of one partition), or the store-wide `{prefix}` for the scripts of the
 *   store as a whole (INIT, IDENTITY, FLUSH). Every key a script touches is built from
 *   one of them (`<tag>:job:<name>`, ...). A script works on one partition at a time
 *   (`usePartition`); the few that read or sweep several (FIND_READY_RUNS, LIST_JOBS,
 *   the sweeps, ...) get several tags, which a single Redis accepts and a cluster
 *   does not (CROSSSLOT): on a cluster the store calls them once per partition.
 *   Cluster routing follows KEYS[1].
 * - Time comes from ARGV (`now`, `leaseUntil`, ...); no script reads `TIME`.
 * - Numbers arrive as decimal strings written by JavaScript and are stored as they
 *   came. The few that Lua computes (`pendingUntil`, `expiresAt`, counters) are
 *   written with `%.17g`, which JavaScript's `Number()` reads back as the same
 *   double. `data`, `error` and the job spec are JSON strings written by JavaScript
 *   and never decoded here, so they round-trip exactly (cjson would turn `[]` into
 *   `{}` and round large numbers).
 * - Run records travel as flat `[field, value, ...]` arrays; index records as cjson
 *   objects whose values are all strings (so cjson never touches a number).
 * - Notifications are published from inside the script, atomically with the write.
 *
 * A run is kept in `{p}:run:<id>` and, depending on its state, in: its job's
 * `runs:` set (always), `active:` set (pending or running), `ready:` sorted set
 * (claimable, by readyAt), `succeeded:`/`failed:` history sorted set (finished, by
 * finishedAt); the partition's `running` set (a plain run's lease), `pending-until`
 * and `expiring` sorted sets. `track()` moves it between them after every write.
 * A job with claimable runs is in `ready-jobs`, scored at most its earliest readyAt
 * (a lower bound: a claim leaves it as it is, `FIND_READY_JOBS` corrects it).
 */
export const PRELUDE = `
-- KEYS[1] is a partition's tag; G, the store-wide tag \`{prefix}\`, is it without its partition part.
local G = string.gsub(KEYS[1], '/p[%d.]+}$', '}')
local EVENTS = G .. ':events'
-- The partition the script works on (usePartition): its tag and its store-wide sets.
local P, JOBS, RUN_LEASES, INDEX_LEASES, PENDING_UNTIL, EXPIRING, READY_JOBS
local function usePartition(tag)
  P = tag
  JOBS, RUN_LEASES, INDEX_LEASES = P .. ':jobs', P .. ':running', P .. ':running-indices'
  PENDING_UNTIL, EXPIRING, READY_JOBS = P .. ':pending-until', P .. ':expiring', P .. ':ready-jobs'
end
usePartition(KEYS[1])
local function jobKey(name) return P .. ':job:' .. name end
local function backfillsKey(name) return P .. ':backfills:' .. name end
local function runsKey(name) return P .. ':runs:' .. name end
local function activeKey(name) return P .. ':active:' .. name end
local function readyKey(name) return P .. ':ready:' .. name end
local function historyKey(name, status) return P .. (status == 'succeeded' and ':succeeded:' or ':failed:') .. name end
local function runKey(id) return P .. ':run:' .. id end
local function indicesKey(id) return P .. ':indices:' .. id end
local function waitingKey(id) return P .. ':waiting:' .. id end

-- A batch (batchScript) collects its notifications here and publishes them as one message.
-- The channel is the store's, whichever partition publishes.
local batchNotes = nil
local function notify(message)
  if batchNotes then batchNotes[#batchNotes + 1] = message
  else redis.call('PUBLISH', EVENTS, cjson.encode(message)) end
end

local function hgetall(key)
  local flat = redis.call('HGETALL', key)
  if #flat == 0 then return nil end
  local record = {}
  for i = 1, #flat, 2 do record[flat[i]] = flat[i + 1] end
  return record
end

-- A record as the flat array HGETALL would return.
local function flat(record)
  local out = {}
  for field, value in pairs(record) do
    out[#out + 1] = field
    out[#out + 1] = value
  end
  return out
end

-- Writes changed fields of a run (false deletes the field) to Redis and to the record.
local function put(run, changes)
  local set, del = {}, {}
  for field, value in pairs(changes) do
    if value then
      run[field] = value
      set[#set + 1] = field
      set[#set + 1] = value
    else
      run[field] = nil
      del[#del + 1] = field
    end
  end
  if #set > 0 then redis.call('HSET', runKey(run.id), unpack(set)) end
  if #del > 0 then redis.call('HDEL', runKey(run.id), unpack(del)) end
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

-- The first \`limit\` entries scored <= now of the sorted set \`suffix\` of every partition in KEYS,
-- earliest first, ties by member (the sweeps' order): { id, tag } each.
local function dueEntries(suffix, now, limit)
  local entries = {}
  for k = 1, #KEYS do
    local due = redis.call('ZRANGE', KEYS[k] .. suffix, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')
    for i = 1, #due, 2 do entries[#entries + 1] = { id = due[i], at = tonumber(due[i + 1]), tag = KEYS[k] } end
  end
  if #KEYS > 1 then
    table.sort(entries, function(a, b)
      if a.at ~= b.at then return a.at < b.at end
      return before(a.id, b.id)
    end)
  end
  while #entries > limit do table.remove(entries) end
  return entries
end

local function isActive(status) return status == 'pending' or status == 'running' end

-- A number Lua computed, as a string JavaScript's Number() reads back exactly.
local function fmt(value) return string.format('%.17g', value) end

-- A number as 16 hex digits whose byte order is the numeric order (the IEEE-754
-- bits with the sign bit flipped, or all bits for a negative number), so that
-- sorted-set members order ties as the store rules do. (One format call: it runs
-- once or more per run write.)
local ORDER_KEY = string.rep('%02x', 8)
local function orderKey(value)
  local a, b, c, d, e, f, g, h = string.byte(struct.pack('>d', tonumber(value)), 1, 8)
  if a >= 128 then return string.format(ORDER_KEY, 255 - a, 255 - b, 255 - c, 255 - d, 255 - e, 255 - f, 255 - g, 255 - h) end
  return string.format(ORDER_KEY, a + 128, b, c, d, e, f, g, h)
end

-- ready: members: readyAt ties order by scheduledAt, then ID (compareReadyOrder).
local function readyMember(run) return orderKey(run.scheduledAt) .. run.id end
local function readyMemberId(member) return string.sub(member, 17) end
-- History members: finishedAt ties order by createdAt, then scheduledAt, then ID (pruneHistory).
local function historyMember(run) return orderKey(run.createdAt) .. orderKey(run.scheduledAt) .. run.id end
local function historyMemberId(member) return string.sub(member, 33) end

-- Index numbers padded so that byte order is numeric order.
local function pad(index) return string.format('%010d', tonumber(index)) end
-- Running-indices members: leaseUntil ties order by run ID, then index (IDs are printable, above ' ').
local function indexLeaseMember(id, index) return id .. ' ' .. pad(index) end

local function getIndex(id, index)
  local encoded = redis.call('HGET', indicesKey(id), tostring(index))
  if not encoded then return nil end
  return cjson.decode(encoded)
end

local function putIndex(id, index, record)
  redis.call('HSET', indicesKey(id), tostring(index), cjson.encode(record))
end

local function indexReply(index, record) return { tostring(index), cjson.encode(record) } end

-- The index a claim of a fan-out run would take and when it is ready (nextWaitingIndex
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

/** Builds a store script: the prelude, then the script's own body. */
export function script(body: string): string {
  return `${PRELUDE}\n${body}`;
}

/**
 * A script that can also run as a batch: `lua` is the lone script, `batch` runs the
 * same body once per call in one invocation (see `batchScript`).
 */
export interface BatchableScript {
  readonly lua: string;
  readonly batch: string;
}

/**
 * The batch variant of a script body. ARGV holds the calls one after another, each
 * as the index in KEYS of its partition's tag (on a single Redis the calls of a batch
 * may work on different partitions; on a cluster a batch holds one partition's
 * calls), its argument count, then its arguments; the body runs once per call, in
 * order, as a function whose parameter \`ARGV\` shadows the global (so the body reads
 * its own call's arguments), under \`pcall\`, so that an error ends only its own
 * call, with the writes it made before it kept, exactly as a lone script's error
 * would. Returns one reply per call: the body's reply, \`false\` (nil) for none, or
 * an error reply. The prelude runs once for the whole batch, and the notifications
 * of all calls go out as one message, a JSON array in order, when the batch ends
 * (subscribers get a script's publishes only after it ends anyway).
 */
export function batchScript(body: string): string {
  return script(`
local function call(ARGV)
${body}
end
local replies, i, current = {}, 1, 1
batchNotes = {}
while i <= #ARGV do
  local key, argc = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  if key ~= current then
    usePartition(KEYS[key])
    current = key
  end
  local args = {}
  for j = 1, argc do args[j] = ARGV[i + 1 + j] end
  i = i + argc + 2
  local ok, reply = pcall(call, args)
  if not ok then
    -- redis.call raises its error reply as a table; a Lua runtime error is a string.
    if type(reply) ~= 'table' or not reply.err then reply = redis.error_reply(tostring(reply)) end
  elseif reply == nil then
    reply = false
  end
  replies[#replies + 1] = reply
end
if #batchNotes > 0 then redis.call('PUBLISH', EVENTS, cjson.encode(batchNotes)) end
return replies
`);
}

/** A script body as both its lone script and its batch variant. */
export function batchable(body: string): BatchableScript {
  return { lua: script(body), batch: batchScript(body) };
}
