/**
 * The Lua every store script starts with: key names, number and order encodings,
 * reading and writing records, then the run writes the scripts share
 * (lua-run-writes.ts); and how a script, or its batch variant, is assembled.
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
 */
import { RUN_WRITES } from './lua-run-writes.js';

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

${RUN_WRITES}`;

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
