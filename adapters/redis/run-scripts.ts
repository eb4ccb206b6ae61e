/**
 * The Lua scripts that execute runs: claims, leases, finishes, lease recovery and the
 * two expiry sweeps (pending timeout, history TTL). Each is one atomic step; the
 * conventions and shared helpers are in `lua-prelude.ts`.
 */
import { batchable, script } from './lua-prelude.js';

/**
 * ARGV: runId, owner, now, leaseUntil, deadlineAt ('' when none).
 * Returns { run, index | nil } (index: { index, recordJson }), or nil when nothing is claimable.
 */
export const CLAIM_RUN = batchable(`
local id, owner, now, leaseUntil, deadlineAt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local run = hgetall(runKey(id))
-- A fan-out run's readyAt is its earliest waiting index's, or its tick while created ahead.
if not run or not claimable(run) or tonumber(run.readyAt) > tonumber(now) then return false end
local changes = {}
if not run.startedAt then changes.startedAt = now end
if not run.deadlineAt and deadlineAt ~= '' then changes.deadlineAt = deadlineAt end
if not run.completions then
  changes.status, changes.owner, changes.leaseUntil = 'running', owner, leaseUntil
  changes.fence = tostring(tonumber(run.fence) + 1)
  put(run, changes)
  track(run, now)
  return { flat(run), false }
end
local readyAt, index, fresh = nextWaiting(run)
if tonumber(readyAt) > tonumber(now) then return false end
-- A first claim creates the index's record; a re-claim adopts it.
local record
if fresh then
  record = { attempt = '1', readyAt = readyAt, fence = '0' }
  changes.fanStarted = tostring(index + 1)
else
  record = getIndex(id, index)
  redis.call('ZREM', waitingKey(id), pad(index))
end
record.status, record.owner, record.leaseUntil = 'running', owner, leaseUntil
record.fence = tostring(tonumber(record.fence) + 1)
if not record.startedAt then record.startedAt = now end
putIndex(id, index, record)
redis.call('ZADD', INDEX_LEASES, leaseUntil, indexLeaseMember(id, index))
changes.fanActive = tostring(tonumber(run.fanActive) + 1)
writeFanOut(run, changes, now)
return { flat(run), indexReply(index, record) }
`);

/** ARGV: runId, owner, fence, now, leaseUntil, index ('' for a plain run). Returns { '1' } or { '0', status | '' }. */
export const RENEW_LEASE = batchable(`
local id, owner, fence, leaseUntil, index = ARGV[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6]
if index == '' then
  local run = hgetall(runKey(id))
  if not run or run.completions or run.status ~= 'running' or run.owner ~= owner or tonumber(run.fence) ~= tonumber(fence) then
    return { '0', run and run.status or '' }
  end
  redis.call('HSET', runKey(id), 'leaseUntil', leaseUntil)
  redis.call('ZADD', RUN_LEASES, leaseUntil, id)
  return { '1' }
end
-- Renewing an index changes nothing its run records.
local record = getIndex(id, index)
if not record or record.status ~= 'running' or record.owner ~= owner or tonumber(record.fence) ~= tonumber(fence) then
  return { '0', record and record.status or '' }
end
record.leaseUntil = leaseUntil
putIndex(id, index, record)
redis.call('ZADD', INDEX_LEASES, leaseUntil, indexLeaseMember(id, index))
return { '1' }
`);

/**
 * ARGV: runId, owner, fence, now, outcome (succeeded | failed | retry | released),
 * errorJson, retryReadyAt, index ('' for a plain run).
 * Returns { '1', run, index | nil } or { '0', run | {} }.
 */
export const FINISH_ATTEMPT = batchable(`
local id, owner, fence, now, outcome, errorJson, retryAt, index =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local run = hgetall(runKey(id))
if not run then return { '0', {} } end
if index == '' then
  if run.completions or run.status ~= 'running' or run.owner ~= owner or tonumber(run.fence) ~= tonumber(fence) then
    return { '0', flat(run) }
  end
  finishRun(run, outcome, now, errorJson, retryAt)
  return { '1', flat(run), false }
end
local record = run.completions and getIndex(id, index)
if not record or record.status ~= 'running' or record.owner ~= owner or tonumber(record.fence) ~= tonumber(fence) then
  return { '0', flat(run) }
end
finishIndex(run, tonumber(index), record, outcome, now, errorJson, retryAt)
return { '1', flat(run), indexReply(index, record) }
`);

/**
 * The three sweeps as Lua functions over a list of partition tags: each script
 * below runs one (`RECOVER_EXPIRED_RUNS`, ...), `SWEEP_RUNS` all three in one call.
 *
 * recoverExpired(tags, now, limit, leaseExpiredErrorJson): recovers expired leases of plain
 * runs and indices together, earliest first (compareExpiredLeases: leaseUntil, then
 * run ID, then index, a plain run first), until \`limit\` are recovered; a lease whose
 * run or index has already ended takes no place. Returns the runs after each recovery.
 *
 * expirePending(tags, now, limit, pendingTimeoutErrorJson): fails the first \`limit\`
 * claimable runs whose pendingUntil <= now (earliest first, ties by ID). Returns
 * { runs, nextAt | '' }.
 *
 * deleteExpired(tags, now, limit): deletes the first \`limit\` finished runs whose
 * expiresAt <= now (earliest first, ties by ID). Returns how many.
 */
const SWEEPS = `
-- The first \`limit\` entries scored <= now of the sorted set \`suffix\` of every partition in \`tags\`,
-- earliest first, ties by member (the sweeps' order): { id, tag } each.
local function dueEntries(tags, suffix, now, limit)
  local entries = {}
  for k = 1, #tags do
    local due = redis.call('ZRANGE', tags[k] .. suffix, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')
    for i = 1, #due, 2 do entries[#entries + 1] = { id = due[i], at = tonumber(due[i + 1]), tag = tags[k] } end
  end
  if #tags > 1 then
    table.sort(entries, function(a, b)
      if a.at ~= b.at then return a.at < b.at end
      return before(a.id, b.id)
    end)
  end
  while #entries > limit do table.remove(entries) end
  return entries
end

local function recoverExpired(tags, now, limit, errorJson)
  local recovered = {}
  -- The \`count\` earliest expired leases, plain runs' and indices', in recovery order.
  local function expiredLeases(count)
    local leases = {}
    for k = 1, #tags do
      local tag = tags[k]
      local plain = redis.call('ZRANGE', tag .. ':running', '-inf', '(' .. now, 'BYSCORE', 'LIMIT', 0, count, 'WITHSCORES')
      for i = 1, #plain, 2 do table.insert(leases, { id = plain[i], leaseUntil = tonumber(plain[i + 1]), tag = tag }) end
      local indices = redis.call('ZRANGE', tag .. ':running-indices', '-inf', '(' .. now, 'BYSCORE', 'LIMIT', 0, count, 'WITHSCORES')
      for i = 1, #indices, 2 do
        local member = indices[i]
        table.insert(leases, { id = string.sub(member, 1, -12), index = tonumber(string.sub(member, -10)),
          leaseUntil = tonumber(indices[i + 1]), member = member, tag = tag })
      end
    end
    table.sort(leases, function(a, b)
      if a.leaseUntil ~= b.leaseUntil then return a.leaseUntil < b.leaseUntil end
      if a.id ~= b.id then return before(a.id, b.id) end
      return (a.index or -1) < (b.index or -1)
    end)
    return leases
end
-- Rounds until \`limit\` are recovered or none is left: a lease skipped (its run or index already ended,
-- possibly by an earlier recovery in this call) must not use up a place. Every lease a round looks at
-- leaves the lease sets (recovered or dropped), so each round makes progress.
while #recovered < limit do
  local leases = expiredLeases(limit - #recovered)
  if #leases == 0 then break end
  for _, lease in ipairs(leases) do
    if #recovered >= limit then break end
    usePartition(lease.tag)
    local run = hgetall(runKey(lease.id))
    if not lease.index then
      if run and not run.completions and run.status == 'running' then
        -- A lost lease is a failed attempt, retried at once within the retry limit.
        finishRun(run, 'retry', now, errorJson, now)
        table.insert(recovered, flat(run))
      else
        redis.call('ZREM', RUN_LEASES, lease.id)
      end
    else
      -- An earlier recovery in this call may have failed the run, cancelling this index.
      local record = run and run.completions and getIndex(lease.id, lease.index)
      if record and record.status == 'running' then
        finishIndex(run, lease.index, record, 'retry', now, errorJson, now)
        table.insert(recovered, flat(run))
      else
        redis.call('ZREM', INDEX_LEASES, lease.member)
      end
    end
  end
end
return recovered
end

local function expirePending(tags, now, limit, errorJson)
  local expired = {}
  if limit > 0 then
    for _, due in ipairs(dueEntries(tags, ':pending-until', now, limit)) do
      usePartition(due.tag)
      local id = due.id
      local run = hgetall(runKey(id))
      if run and run.pendingUntil and claimable(run) then
        finalize(run, 'failed', now, errorJson)
        table.insert(expired, flat(run))
      else
        redis.call('ZREM', PENDING_UNTIL, id)
      end
    end
end
local nextAt
for k = 1, #tags do
  local first = redis.call('ZRANGE', tags[k] .. ':pending-until', 0, 0, 'WITHSCORES')
  if #first > 0 and (not nextAt or tonumber(first[2]) < tonumber(nextAt)) then nextAt = first[2] end
end
return { expired, nextAt or '' }
end

local function deleteExpired(tags, now, limit)
  local deleted = 0
  if limit <= 0 then return deleted end
  for _, due in ipairs(dueEntries(tags, ':expiring', now, limit)) do
    usePartition(due.tag)
    local id = due.id
    local run = hgetall(runKey(id))
    if run and not isActive(run.status) then
      redis.call('ZREM', historyKey(run.jobName, run.status), historyMember(run))
      deleteFinished(id, run.jobName)
      deleted = deleted + 1
    else
      redis.call('ZREM', EXPIRING, id)
    end
end
return deleted
end
`;

/** KEYS: partition tags. ARGV: now, limit, leaseExpiredErrorJson. `recoverExpired` (SWEEPS). */
export const RECOVER_EXPIRED_RUNS = script(`${SWEEPS}
return recoverExpired(KEYS, ARGV[1], tonumber(ARGV[2]), ARGV[3])
`);

/** KEYS: partition tags. ARGV: now, limit, pendingTimeoutErrorJson. `expirePending` (SWEEPS). */
export const EXPIRE_PENDING_RUNS = script(`${SWEEPS}
return expirePending(KEYS, ARGV[1], tonumber(ARGV[2]), ARGV[3])
`);

/** KEYS: partition tags. ARGV: now, limit. `deleteExpired` (SWEEPS). */
export const DELETE_EXPIRED_RUNS = script(`${SWEEPS}
return deleteExpired(KEYS, ARGV[1], tonumber(ARGV[2]))
`);

/**
 * KEYS: partition tags. ARGV: now, limit, leaseExpiredErrorJson, pendingTimeoutErrorJson.
 * The three sweeps in order, each seeing the writes of the one before: { recovered,
 * { expired, nextAt }, deleted }. A partition none of whose four sets holds anything
 * (a store of yearly jobs, idle) costs one EXISTS instead of five reads.
 */
export const SWEEP_RUNS = script(`${SWEEPS}
local now, limit = ARGV[1], tonumber(ARGV[2])
local busy = {}
for k = 1, #KEYS do
  local tag = KEYS[k]
  if redis.call('EXISTS', tag .. ':running', tag .. ':running-indices', tag .. ':pending-until', tag .. ':expiring') > 0 then busy[#busy + 1] = tag end
end
return { recoverExpired(busy, now, limit, ARGV[3]), expirePending(busy, now, limit, ARGV[4]), deleteExpired(busy, now, limit) }
`);

/** Every run script, for `init()` to load. */
export const RUN_SCRIPTS: readonly string[] = [
  ...[CLAIM_RUN, RENEW_LEASE, FINISH_ATTEMPT].flatMap(({ lua, batch }) => [lua, batch]),
  RECOVER_EXPIRED_RUNS, EXPIRE_PENDING_RUNS, DELETE_EXPIRED_RUNS, SWEEP_RUNS,
];
