/**
 * The Lua scripts for jobs and planning: one script per atomic contract method, so
 * a decision and its writes happen in one indivisible step on the server. The
 * conventions they follow and the helpers they share are in `lua-prelude.ts`; the
 * scripts that execute runs are in `run-scripts.ts`.
 */
import { batchable, script } from './lua-prelude.js';
import { RUN_SCRIPTS } from './run-scripts.js';

/**
 * KEYS: the store-wide tag. ARGV: partitions. Records the key layout on first use: a
 * store of one partition writes version 2 (every key under \`{prefix}\`, the layout
 * from before partitions), one of several version 3 and the partition count.
 * Returns { version, partitions } as stored ('1' when none is recorded).
 */
export const INIT = script(`
local count = ARGV[1]
local version = redis.call('GET', G .. ':version')
if not version then
  if count == '1' then
    redis.call('SET', G .. ':version', '2')
    redis.call('SET', READY_JOBS .. '-built', '1')
  else
    redis.call('SET', G .. ':version', '3')
    redis.call('SET', G .. ':partitions', count)
  end
  return { redis.call('GET', G .. ':version'), count }
end
-- A prefix written before ready-jobs existed: index its jobs' claimable runs once.
if version == '2' and redis.call('SETNX', READY_JOBS .. '-built', '1') == 1 then
  for _, name in ipairs(redis.call('ZRANGE', JOBS, 0, -1)) do
    local first = redis.call('ZRANGE', readyKey(name), 0, 0, 'WITHSCORES')
    if #first > 0 then redis.call('ZADD', READY_JOBS, first[2], name) end
  end
end
return { version, redis.call('GET', G .. ':partitions') or '1' }
`);

/** How many ARGV one job takes in `UPSERT_JOBS` (`upsertArgs` in codec.ts writes them). */
export const UPSERT_ARGC = 14;

/**
 * ARGV: one group of `UPSERT_ARGC` per job, upserted in order: name, specJson,
 * policy, historySucceeded, historyFailed, then the optional historyTtl,
 * pendingTimeout, fanCompletions, fanParallelism, retryLimit, maxRuns ('' when absent),
 * now, initialCursor, suspended ('' | '0' | '1'). Returns { created, job } per job,
 * with a third element, the cancelled runs, when suspending cancelled runs created ahead.
 * A job's fields go in one HSET (and one HDEL of the optional ones it no longer has), and
 * the batch's notifications in one message, as a batch script's: a start of 1,000,000
 * jobs wrote each field with a command of its own and published each job on its own.
 */
export const UPSERT_JOBS = script(`
local results = {}
batchNotes = {}
for base = 0, #ARGV - 1, ${UPSERT_ARGC} do
  local name, now, initialCursor, suspended = ARGV[base + 1], ARGV[base + 12], ARGV[base + 13], ARGV[base + 14]
  local key = jobKey(name)
  local created = redis.call('EXISTS', key) == 0
  local set = { 'spec', ARGV[base + 2], 'policy', ARGV[base + 3], 'historySucceeded', ARGV[base + 4], 'historyFailed', ARGV[base + 5] }
  local absent = {}
  -- Copies of the spec's optional fields for the scripts; the spec is replaced as a whole.
  for i, field in ipairs({ 'historyTtl', 'pendingTimeout', 'fanCompletions', 'fanParallelism', 'retryLimit', 'maxRuns' }) do
    local value = ARGV[base + 5 + i]
    if value == '' then absent[#absent + 1] = field
    else
      set[#set + 1] = field
      set[#set + 1] = value
    end
  end
  if created then
    for _, v in ipairs({ 'createdAt', now, 'cursor', initialCursor, 'succeeded', '0', 'failed', '0', 'skipped', '0',
        'scheduledRuns', '0', 'suspended', suspended == '1' and '1' or '0' }) do set[#set + 1] = v end
  elseif suspended ~= '' then
    set[#set + 1] = 'suspended'
    set[#set + 1] = suspended
  end
  redis.call('HSET', key, unpack(set))
  if created then redis.call('ZADD', JOBS, 0, name)
  elseif #absent > 0 then redis.call('HDEL', key, unpack(absent)) end
  local cancelled = not created and suspended == '1' and cancelAhead(name, now) or {}
  notify({ type = 'job-changed', jobName = name })
  local result = { created and '1' or '0', jobReply(name) }
  if #cancelled > 0 then result[3] = cancelled end
  results[#results + 1] = result
end
if #batchNotes > 0 then redis.call('PUBLISH', EVENTS, cjson.encode(batchNotes)) end
return results
`);

/** ARGV: name. Returns the job, or nil. */
export const GET_JOB = script(`
if redis.call('EXISTS', jobKey(ARGV[1])) == 0 then return false end
return jobReply(ARGV[1])
`);

/**
 * KEYS: partition tags. ARGV: after ('' for the first page), limit, and optionally upto
 * (the last name to read). The first \`limit\` jobs by name across the partitions: each
 * jobs set's members all score 0, so its lexical order is the names' byte order, and the
 * page is a merge of the partitions' ranges. Each range is read a slice at a time as the
 * merge uses it up, and the partitions wait in the order of their next names: a page
 * reads about \`limit\` names, not \`limit\` from every partition, and compares each name
 * with a few others, not a sort of them all (with 12 partitions a 1,000-job page read
 * and sorted 12,000 names: minutes of the server's CPU to list a million jobs).
 */
export const LIST_JOBS = script(`
local limit, upto = tonumber(ARGV[2]), ARGV[3] and '[' .. ARGV[3] or '+'
local slice = math.min(limit, math.ceil(limit / #KEYS) + 16)
-- The next name of a partition's range (reading its next slice when the last is used up), or nil at its end.
local function head(r)
  if r.at > #r.names then
    if r.last then return nil end
    r.names, r.at = redis.call('ZRANGE', r.tag .. ':jobs', r.from, upto, 'BYLEX', 'LIMIT', 0, slice), 1
    r.last = #r.names < slice
    if #r.names == 0 then return nil end
    r.from = '(' .. r.names[#r.names]
  end
  return r.names[r.at]
end
-- Ranges with names left, latest next name first: the earliest is at the end.
local waiting = {}
local function wait(r)
  local name = head(r)
  if name == nil then return end
  local lo, hi = 1, #waiting + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if before(head(waiting[mid]), name) then hi = mid else lo = mid + 1 end
  end
  table.insert(waiting, lo, r)
end
for k = 1, #KEYS do wait({ tag = KEYS[k], names = {}, at = 1, from = ARGV[1] == '' and '-' or '(' .. ARGV[1] }) end
local jobs = {}
for _ = 1, limit do
  local r = table.remove(waiting)
  if r == nil then break end
  local name = r.names[r.at]
  usePartition(r.tag)
  if redis.call('EXISTS', jobKey(name)) == 1 then table.insert(jobs, jobReply(name)) end
  r.at = r.at + 1
  wait(r)
end
return jobs
`);

/** ARGV: name. Returns '1' when the job was removed, '0' when absent. */
export const REMOVE_JOB = script(`
local name = ARGV[1]
if redis.call('EXISTS', jobKey(name)) == 0 then return '0' end
for _, id in ipairs(redis.call('SMEMBERS', runsKey(name))) do
  if redis.call('HEXISTS', runKey(id), 'completions') == 1 then
    local records = redis.call('HGETALL', indicesKey(id))
    for i = 1, #records, 2 do
      if cjson.decode(records[i + 1]).status == 'running' then
        redis.call('ZREM', INDEX_LEASES, indexLeaseMember(id, records[i]))
      end
    end
  end
  redis.call('DEL', runKey(id), indicesKey(id), waitingKey(id))
  redis.call('ZREM', RUN_LEASES, id)
  redis.call('ZREM', PENDING_UNTIL, id)
  redis.call('ZREM', EXPIRING, id)
end
redis.call('DEL', jobKey(name), backfillsKey(name), runsKey(name), activeKey(name), readyKey(name),
  historyKey(name, 'succeeded'), historyKey(name, 'failed'))
redis.call('ZREM', JOBS, name)
redis.call('ZREM', READY_JOBS, name)
notify({ type = 'job-changed', jobName = name })
return '1'
`);

/**
 * ARGV: name, suspended ('0' | '1'), now. Returns { job, cancelled } (the runs created
 * ahead of a tick still to come, which suspending cancels), or nil.
 */
export const SET_SUSPENDED = script(`
local name, suspended, now = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', jobKey(name)) == 0 then return false end
redis.call('HSET', jobKey(name), 'suspended', suspended)
local cancelled = suspended == '1' and cancelAhead(name, now) or {}
notify({ type = 'job-changed', jobName = name })
return { jobReply(name), cancelled }
`);

/**
 * ARGV: jobName, expectedCursor, cursor, now, hasRun ('1' | '0'), then for a run the
 * run (readyAt, id, jobName, scheduledAt, trigger, hasData, data[, traceparent]).
 * Returns { outcome, job, run | activeIds, cancelled }.
 */
export const SCHEDULE_RUN = batchable(`
local name, expected, cursor, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local key = jobKey(name)
-- Every job has a cursor: none means no job.
local job = redis.call('HMGET', key, 'suspended', 'cursor', 'policy', 'maxRuns', 'scheduledRuns')
if not job[2] then return { 'conflict' } end
if job[1] == '1' or tonumber(job[2]) ~= tonumber(expected) then return { 'conflict', jobReply(name) } end
local function advance() redis.call('HSET', key, 'cursor', cursor, 'lastScheduleTime', cursor) end
if ARGV[5] ~= '1' then
  advance()
  return { 'advanced', jobReply(name) }
end
local runId = ARGV[7]
if redis.call('EXISTS', runKey(runId)) == 1 then
  advance()
  return { 'exists', jobReply(name), runReply(runId) }
end
if job[4] and tonumber(job[5] or '0') >= tonumber(job[4]) then return { 'conflict', jobReply(name) } end
local policy = job[3]
-- Allow creates the run whatever else is active: only the other policies read the active runs.
local active = policy == 'Allow' and {} or activeRuns(name)
local activeIds = {}
for _, run in ipairs(active) do table.insert(activeIds, run.id) end
if #active > 0 and policy == 'Forbid' then
  redis.call('HINCRBY', key, 'skipped', 1)
  advance()
  return { 'skipped', jobReply(name), activeIds }
end
if #active > 0 and (policy == 'CatchUp' or policy == 'BufferOne') then return { 'blocked', jobReply(name), activeIds } end
local cancelled = {}
if policy == 'Replace' then
  for _, run in ipairs(active) do
    finalize(run, 'cancelled', now, nil)
    table.insert(cancelled, flat(run))
  end
end
local run = insertRun(ARGV, 6, now)
redis.call('HINCRBY', key, 'scheduledRuns', 1)
advance()
return { 'created', jobReply(name), flat(run), cancelled }
`);

/** ARGV: now, then the run (readyAt, id, jobName, scheduledAt, trigger, hasData, data[, traceparent]). Returns { outcome, run }. */
export const CREATE_RUN = batchable(`
local now, id, jobName = ARGV[1], ARGV[3], ARGV[4]
if redis.call('EXISTS', jobKey(jobName)) == 0 then return { 'missing-job' } end
if redis.call('EXISTS', runKey(id)) == 1 then return { 'exists', runReply(id) } end
return { 'created', flat(insertRun(ARGV, 2, now)) }
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
 * the run (readyAt, id, jobName, scheduledAt, trigger, hasData, data[, traceparent]).
 * Returns { outcome, job, run }.
 */
export const SCHEDULE_BACKFILL_RUN = batchable(`
local name, backfillId, expectedNext, nextTick, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = jobKey(name)
if redis.call('EXISTS', key) == 0 then return { 'conflict' } end
local first = redis.call('LINDEX', backfillsKey(name), 0)
local firstNext, firstTo, firstId
-- What follows the ID (a tab and the backfill's traceparent) is kept as it is.
local firstRest
if first then firstNext, firstTo, firstId, firstRest = string.match(first, '^(%S+) (%S+) ([^\t]*)(.*)$') end
if redis.call('HGET', key, 'suspended') == '1' or not firstId or firstId ~= backfillId
  or tonumber(firstNext) ~= tonumber(expectedNext) then
  return { 'conflict', jobReply(name) }
end
for _, run in ipairs(activeRuns(name)) do
  if run.trigger == 'backfill' then return { 'blocked', jobReply(name) } end
end
if nextTick == '' then redis.call('LPOP', backfillsKey(name))
else redis.call('LSET', backfillsKey(name), 0, nextTick .. ' ' .. firstTo .. ' ' .. firstId .. firstRest) end
local runId = ARGV[7]
if redis.call('EXISTS', runKey(runId)) == 1 then return { 'exists', jobReply(name), runReply(runId) } end
return { 'created', jobReply(name), flat(insertRun(ARGV, 6, now)) }
`);

/**
 * KEYS: partition tags. ARGV: now, limit, then per tag the number of its job names
 * and the names. The first \`limit\` claimable runs with \`readyAt <= now\` across
 * those jobs, in claim order (compareReadyOrder: the ready sets order readyAt ties by
 * scheduledAt, then ID), and the earliest later \`readyAt\` ('' when none). Reads at
 * most \`limit\` entries per job and decodes at most \`limit\` runs; none of a partition
 * without claimable runs.
 */
export const FIND_READY_RUNS = script(`
local now, limit = ARGV[1], tonumber(ARGV[2])
local candidates, nextReadyAt = {}, nil
local i = 3
for k = 1, #KEYS do
  usePartition(KEYS[k])
  local names = tonumber(ARGV[i])
  -- Every job with claimable runs is in ready-jobs: none there (idle), no job to look at.
  local last = redis.call('EXISTS', READY_JOBS) == 1 and i + names or i
  for n = i + 1, last do
    local key = readyKey(ARGV[n])
    if limit > 0 then
      local ready = redis.call('ZRANGE', key, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')
      for j = 1, #ready, 2 do table.insert(candidates, { member = ready[j], readyAt = tonumber(ready[j + 1]), tag = P }) end
    end
    local later = redis.call('ZRANGE', key, '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
    if #later > 0 and (nextReadyAt == nil or tonumber(later[2]) < tonumber(nextReadyAt)) then nextReadyAt = later[2] end
  end
  i = i + names + 1
end
table.sort(candidates, function(a, b)
  if a.readyAt ~= b.readyAt then return a.readyAt < b.readyAt end
  return before(a.member, b.member)
end)
local runs = {}
for c = 1, math.min(limit, #candidates) do
  usePartition(candidates[c].tag)
  local run = runReply(readyMemberId(candidates[c].member))
  if #run > 0 then table.insert(runs, run) end
end
return { runs, nextReadyAt or '' }
`);

/**
 * KEYS: partition tags. ARGV: now, max. The jobs that have claimable runs, with their earliest readyAt:
 * { name, readyAt, ... }, or false when more than max jobs have some (the caller
 * sends its names instead). Entries due by now are corrected first (their job's
 * earliest readyAt, or removed when it has none left), so what it returns as ready is.
 */
export const FIND_READY_JOBS = script(`
local now, max = ARGV[1], tonumber(ARGV[2])
local total = 0
for k = 1, #KEYS do total = total + redis.call('ZCARD', KEYS[k] .. ':ready-jobs') end
if total > max then return false end
local out = {}
if total == 0 then return out end
for k = 1, #KEYS do
  usePartition(KEYS[k])
  for _, name in ipairs(redis.call('ZRANGE', READY_JOBS, '-inf', now, 'BYSCORE')) do
    local first = redis.call('ZRANGE', readyKey(name), 0, 0, 'WITHSCORES')
    if #first == 0 then redis.call('ZREM', READY_JOBS, name)
    else redis.call('ZADD', READY_JOBS, first[2], name) end
  end
  for _, entry in ipairs(redis.call('ZRANGE', READY_JOBS, 0, -1, 'WITHSCORES')) do out[#out + 1] = entry end
end
return out
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

/**
 * KEYS: partition tags. ARGV: per tag the number of its job names and the names.
 * Every run of each job, in one consistent read (\`listRunsOfJobs\`: \`listJobs()\`'s
 * active runs, the dashboard's jobs page; the store filters by status).
 */
export const LIST_RUNS_OF_JOBS = script(`
local runs = {}
local i = 1
for k = 1, #KEYS do
  usePartition(KEYS[k])
  local names = tonumber(ARGV[i])
  for n = i + 1, i + names do
    for _, id in ipairs(redis.call('SMEMBERS', runsKey(ARGV[n]))) do
      local run = runReply(id)
      if #run > 0 then table.insert(runs, run) end
    end
  end
  i = i + names + 1
end
return runs
`);

/** KEYS: the store-wide tag. Publishes a flush marker (`NotificationFlush`) on the channel. */
export const FLUSH = script(`
redis.call('PUBLISH', EVENTS, ARGV[1])
return 1
`);

/** KEYS: the store-wide tag. The identity of the data under the prefix (`Store.identity`): made from ARGV[1] when absent. */
export const IDENTITY = script(`
local key = G .. ':identity'
local identity = redis.call('GET', key)
if identity then return identity end
redis.call('SET', key, ARGV[1])
return ARGV[1]
`);

/** Every store script, for `init()` to load. */
export const STORE_SCRIPTS: readonly string[] = [
  INIT, FLUSH, IDENTITY, UPSERT_JOBS, GET_JOB, LIST_JOBS, REMOVE_JOB, SET_SUSPENDED, ADD_BACKFILL, FIND_READY_RUNS, FIND_READY_JOBS, LIST_RUNS, LIST_RUNS_OF_JOBS,
  ...[SCHEDULE_RUN, CREATE_RUN, SCHEDULE_BACKFILL_RUN].flatMap(({ lua, batch }) => [lua, batch]),
  ...RUN_SCRIPTS,
];
