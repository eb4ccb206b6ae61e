/**
 * The Lua scripts of `RedisLock`: named leases with fencing tokens, one script per
 * operation. Like the store's scripts (`scripts.ts`), they take the hash tag
 * `{prefix}` as KEYS[1] and build their keys from it, and read time only from ARGV.
 */

/**
 * The lease lives in \`{prefix}:lock:<name>\` (owner, token, leaseUntil); the token
 * counter in \`{prefix}:lock-token:<name>\` never expires, so tokens keep growing
 * across hand-overs. Decisions compare \`leaseUntil\` with \`now\` from ARGV; the
 * key's PX expiry (the lease's length plus a grace period) only collects abandoned
 * leases.
 */
const LOCK_PRELUDE = `
local P = KEYS[1]
local function leaseKey(name) return P .. ':lock:' .. name end
local function tokenKey(name) return P .. ':lock-token:' .. name end
-- The names of the locks ever taken (each lease's key may have expired): what LOCK_LIST reads.
local NAMES = P .. ':lock-names'

local function expire(key, now, leaseUntil)
  local ttl = math.floor(tonumber(leaseUntil) - tonumber(now)) + tonumber(ARGV[#ARGV])
  if ttl < 1 then ttl = 1 end
  redis.call('PEXPIRE', key, ttl)
end
`;

/** ARGV: name, owner, now, leaseUntil, graceMs. Returns the token, or nil while another owner holds the lock. */
export const LOCK_ACQUIRE = `${LOCK_PRELUDE}
local name, owner, now, leaseUntil = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local key = leaseKey(name)
local held = redis.call('HMGET', key, 'owner', 'token', 'leaseUntil')
local live = held[1] and tonumber(held[3]) > tonumber(now)
if live and held[1] ~= owner then return false end
local token
if live then token = held[2] else token = tostring(redis.call('INCR', tokenKey(name))) end
redis.call('HSET', key, 'owner', owner, 'token', token, 'leaseUntil', leaseUntil)
expire(key, now, leaseUntil)
redis.call('SADD', NAMES, name)
return token
`;

/** ARGV: name, owner, token, now, leaseUntil, graceMs. Returns 1 when renewed, 0 otherwise. */
export const LOCK_RENEW = `${LOCK_PRELUDE}
local name, owner, token, now, leaseUntil = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = leaseKey(name)
local held = redis.call('HMGET', key, 'owner', 'token', 'leaseUntil')
if not held[1] or held[1] ~= owner or tonumber(held[2]) ~= tonumber(token) or tonumber(held[3]) <= tonumber(now) then
  return 0
end
redis.call('HSET', key, 'leaseUntil', leaseUntil)
expire(key, now, leaseUntil)
return 1
`;

/** ARGV: name, owner, token. Frees the lock when held by owner with token. */
export const LOCK_RELEASE = `${LOCK_PRELUDE}
local key = leaseKey(ARGV[1])
local held = redis.call('HMGET', key, 'owner', 'token')
if held[1] and held[1] == ARGV[2] and tonumber(held[2]) == tonumber(ARGV[3]) then redis.call('DEL', key) end
return 0
`;

/**
 * renewAll(at): ARGV from \`at\` on: now, leaseUntil, then name, owner, token of each
 * lease (graceMs last). LOCK_RENEW of each lease; 1 (renewed) or 0 per lease, in order.
 *
 * list(prefix, now): [name, owner, token, leaseUntil] of each live lease whose name
 * starts with prefix; forgets the names whose lease key is gone (a name comes back
 * with its next acquire), so the set holds only the locks in use.
 */
const RENEW_AND_LIST = `
-- What renewAll just wrote, by name: a listing after it in the same call need not read those leases again.
local renewed = {}
local function renewAll(at)
  local now, leaseUntil = tonumber(ARGV[at]), ARGV[at + 1]
  local out = {}
  for i = at + 2, #ARGV - 1, 3 do
    local owner, token = ARGV[i + 1], tonumber(ARGV[i + 2])
    local key = leaseKey(ARGV[i])
    local held = redis.call('HMGET', key, 'owner', 'token', 'leaseUntil')
    if held[1] and held[1] == owner and tonumber(held[2]) == token and tonumber(held[3]) > now then
      redis.call('HSET', key, 'leaseUntil', leaseUntil)
      expire(key, now, leaseUntil)
      renewed[ARGV[i]] = { owner, held[2], leaseUntil }
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
    end
  end
  return out
end

local function list(prefix, now)
  local out = {}
  for _, name in ipairs(redis.call('SMEMBERS', NAMES)) do
    local held = renewed[name] or redis.call('HMGET', leaseKey(name), 'owner', 'token', 'leaseUntil')
    if not held[1] then redis.call('SREM', NAMES, name)
    elseif string.sub(name, 1, #prefix) == prefix and tonumber(held[3]) > now then
      out[#out + 1] = { name, held[1], held[2], held[3] }
    end
  end
  return out
end
`;

/** ARGV: now, leaseUntil, then name, owner, token of each lease, then graceMs. `renewAll` (RENEW_AND_LIST). */
export const LOCK_RENEW_ALL = `${LOCK_PRELUDE}${RENEW_AND_LIST}
return renewAll(1)
`;

/** ARGV: prefix, now. `list` (RENEW_AND_LIST). */
export const LOCK_LIST = `${LOCK_PRELUDE}${RENEW_AND_LIST}
return list(ARGV[1], tonumber(ARGV[2]))
`;

/**
 * ARGV: prefix, now of the listing, then LOCK_RENEW_ALL's. The renewal, then the
 * listing, in one call: { renewed, leases }.
 */
export const LOCK_RENEW_LIST = `${LOCK_PRELUDE}${RENEW_AND_LIST}
return { renewAll(3), list(ARGV[1], tonumber(ARGV[2])) }
`;

/** Every lock script. */
export const LOCK_SCRIPTS: readonly string[] = [LOCK_ACQUIRE, LOCK_RENEW, LOCK_RENEW_ALL, LOCK_RELEASE, LOCK_LIST, LOCK_RENEW_LIST];
