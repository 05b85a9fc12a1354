-- Shared by every semaphore script: SemaphoreScripts prepends this file to each of them.
-- KEYS (all with the hash tag {name}, so one cluster slot):
--   1 holders        ZSET permit id -> lease deadline (server ms)
--   2 state          HASH used (permits held), seq (tickets and fencing tokens), expires (server ms
--                         at which every key of the semaphore expires), limit (the configured
--                         limit of the last call), waiters (ids in the queue), next (a lower bound
--                         of the earliest lease deadline, 'none' without holders), override (the
--                         runtime limit an operator set, absent when none): one HMGET gives a
--                         script all it needs on the hot path, with no read of the holders or the
--                         queue
--   3 queue          ZSET waiter id -> ticket (arrival order)
--   4 queue-deadline ZSET waiter id -> heartbeat deadline (server ms)
--   5 info           HASH id -> "count lease claim token inbox owner" (lease and claim in ms; token 0
--                         while it waits; lease: of its acquisition, or of its latest extension;
--                         inbox: the JVM that waits for it, then the JVM that holds and renews it,
--                         which an adoption changes)
-- ARGV[1]: the limit (permits) the caller is configured with; the rest is the script's own. The
-- limit of the call (LIMIT) is the override when one is set, else ARGV[1] (I6).
-- Every script returns a table that starts with used, limit (of the call), waiters, the server
-- time in microseconds (so a client can tell the newest figures), the ms until the earliest lease
-- ends (-1: no lease; a lower bound, so a client that waits can call again then), the configured
-- limit of the previous call (0: none known; a JVM configured otherwise learns of the mismatch
-- from it) and the override (0: none), then its own entries.
--
-- Invariants, true after every call whatever happened between calls:
--   I1 used = the sum of the counts of the holders (a holder whose info is missing, which only a
--      hand outside the scripts can cause, is counted as 1 and repaired on sight);
--   I2 every holder and every waiter has its info entry; no id is both a holder and a waiter;
--      queue and queue-deadline hold the same ids;
--   I3 a grant never takes used above the limit of the call that makes it, and waiters are granted
--      strictly in ticket order (nobody overtakes the head);
--   I4 every key has a TTL past every deadline it holds, so an idle semaphore leaves nothing behind,
--      except the state key while an override is set (I6);
--   I5 state.waiters is the size of the queue, and state.next is at most the earliest lease
--      deadline (renew re-derives both from the keys, and a missing state key is rebuilt from them);
--   I6 while state.override is set it is the limit of every call, whatever the caller is
--      configured with. Setting, lowering, raising or clearing it never takes a permit from a
--      holder: after a lowering used may stay above the limit until holders leave, and nobody is
--      granted before used + count fits, in ticket order; the call that changes it serves the queue
--      under the new limit at once. An operator's limit must not vanish because the semaphore was
--      idle for a few seconds, so the state key has no TTL while it is set (clearing it gives the
--      TTL back); its counters are then trusted only until state.expires, when the other keys
--      expire, and rebuilt from the keys after that.
-- Each script checks its arguments before its first write, and every write below keeps I1..I6 for
-- any id a client can send (unknown, expired, released, granted or cancelled), so no script can
-- fail half-way (Redis does not roll back a script that errors).
-- Nor on a permission error: the README's Redis ACL rule grants exactly the commands these
-- scripts and the client send (a test reads them out of these files). A rule written before a
-- command was added lacks only that command, so a command that only some calls run, and that
-- came later than the rest, runs before the first write of its script: PERSIST, run by override
-- alone, when it sets the first runtime limit (I6). A user whose rule lacks it is refused with
-- nothing changed.

local HOLDERS, STATE, QUEUE, QUEUE_DEADLINE, INFO = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

-- Argument checks, before any write: a bad value is an error reply, and nothing has changed. (A
-- plain string: Redis 6 cannot report an error table raised from a nested function.)
local function argNumber(index, min, max)
  local value = tonumber(ARGV[index])
  if not value or value ~= math.floor(value) or value < min or value > max then
    error('semaphore script: ARGV[' .. index .. '] must be an integer between ' .. min .. ' and ' .. max
        .. ', but was ' .. tostring(ARGV[index]), 0)
  end
  return value
end

local function argId(index)
  local id = ARGV[index]
  if not id or #id == 0 or #id > 200 or string.find(id, '%s') then
    error('semaphore script: ARGV[' .. index .. '] must be an id of 1..200 characters without whitespace', 0)
  end
  return id
end

local CONFIGURED = argNumber(1, 1, 1000000)
-- Bounds the work one call does on behalf of others, so no call is ever slow.
local PURGE_BATCH = 100
local GRANT_BATCH = 1000
-- Keys outlive the last lease or heartbeat by at least KEY_MIN_MARGIN_MS. When a deadline reaches
-- past that, every key's expiry moves out to twice the new horizon plus KEY_MARGIN_MS, so most
-- calls set no TTL at all, and an idle semaphore is gone within 2 x lease + 5 s.
local KEY_MIN_MARGIN_MS = 1000
local KEY_MARGIN_MS = 5000

-- Server time only: clients' clocks never matter.
local clock = redis.call('TIME')
local NOW_MS = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local NOW_US = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

local state = redis.call('HMGET', STATE, 'used', 'seq', 'expires', 'limit', 'waiters', 'next', 'override')
local USED = tonumber(state[1]) or 0
local SEQ = tonumber(state[2]) or 0
local EXPIRES = tonumber(state[3]) or 0
local LAST_LIMIT = tonumber(state[4])
local WAITERS = tonumber(state[5]) or 0
-- Lower bound of the earliest lease deadline (nil: no holder); purging waits for it to pass.
local EARLIEST = tonumber(state[6])
-- I6: the operator's limit, when set, is the limit of this call (the override script changes it).
local OVERRIDE = tonumber(state[7])
local SAVED_OVERRIDE = OVERRIDE
local LIMIT = OVERRIDE or CONFIGURED
local SEQ_CHANGED = false
-- Latest deadline this call wrote, and keys this call created (they start without a TTL).
local HORIZON = NOW_MS
local CREATED = {}

local function parseInfo(value)
  if not value then
    return nil
  end
  local count, lease, claim, token, inbox, owner =
      string.match(value, '^(%d+) (%d+) (%d+) (%d+) (%S+) (.*)$')
  if not count then
    return nil
  end
  return { count = tonumber(count), lease = tonumber(lease), claim = tonumber(claim), token = token,
           inbox = inbox, owner = owner }
end

local function readInfo(id)
  return parseInfo(redis.call('HGET', INFO, id))
end

local function writeInfo(id, r)
  if USED == 0 and WAITERS == 0 then
    CREATED[INFO] = true
  end
  redis.call('HSET', INFO, id, r.count .. ' ' .. r.lease .. ' ' .. r.claim .. ' ' .. r.token .. ' '
      .. r.inbox .. ' ' .. r.owner)
end

local function deadline(ms)
  local at = NOW_MS + ms
  if at > HORIZON then
    HORIZON = at
  end
  return at
end

-- I1 repair: recounts used from the holders, a missing count taken as 1. Runs only when a holder
-- without info was seen, or when state lists every holder anyway.
local function recount()
  local ids = redis.call('ZRANGE', HOLDERS, 0, -1)
  local used = 0
  for i = 1, #ids, 500 do
    local chunk = { unpack(ids, i, math.min(i + 499, #ids)) }
    for _, value in ipairs(redis.call('HMGET', INFO, unpack(chunk))) do
      local r = parseInfo(value)
      used = used + (r and r.count or 1)
    end
  end
  USED = used
end

-- I5: reads the queue size and the earliest deadline from the keys themselves (renew does it on
-- every tick; any script does it when the state key is missing while other keys remain).
local function derive()
  WAITERS = redis.call('ZCARD', QUEUE)
  EARLIEST = tonumber(redis.call('ZRANGE', HOLDERS, 0, 0, 'WITHSCORES')[2])
  if not EARLIEST then
    USED = 0
  end
  -- I4: the keys' expiry must also cover deadlines other calls wrote.
  local last = math.max(tonumber(redis.call('ZRANGE', HOLDERS, -1, -1, 'WITHSCORES')[2]) or 0,
      tonumber(redis.call('ZRANGE', QUEUE_DEADLINE, -1, -1, 'WITHSCORES')[2]) or 0)
  if last > HORIZON then
    HORIZON = last
  end
end

-- A missing state key, or one kept past the expiry of the other keys by an override (I6): its
-- counters describe keys that are gone, so they are read from the keys again.
if not state[2] or (EXPIRES > 0 and EXPIRES <= NOW_MS) then
  USED, EXPIRES = 0, 0
  derive()
  if EARLIEST then
    recount()
  end
end

-- Tickets and fencing tokens: strictly increasing, and never below the server clock in
-- microseconds, so they keep increasing after the state key expired.
local function nextSeq()
  SEQ = math.max(SEQ + 1, NOW_US)
  SEQ_CHANGED = true
  return string.format('%.0f', SEQ)
end

-- Makes id a holder of r.count permits for ms; false (and nothing changed) when it holds already.
local function hold(id, r, ms)
  local at = deadline(ms)
  if USED == 0 then
    CREATED[HOLDERS] = true
  end
  if redis.call('ZADD', HOLDERS, 'NX', at, id) == 0 then
    return false
  end
  r.token = nextSeq()
  writeInfo(id, r)
  USED = USED + r.count
  if not EARLIEST or at < EARLIEST then
    EARLIEST = at
  end
  return true
end

-- Ends holder id whose info is r (read by the caller); false when it held nothing.
local function dropHolder(id, r)
  if redis.call('ZREM', HOLDERS, id) == 0 then
    return false
  end
  redis.call('HDEL', INFO, id)
  if r then
    USED = math.max(USED - r.count, 0)
  else
    recount()
  end
  return true
end

-- Takes ids out of the queue (and their info); returns how many were waiters.
local function dropWaiters(ids)
  local removed = redis.call('ZREM', QUEUE, unpack(ids))
  if removed > 0 then
    redis.call('ZREM', QUEUE_DEADLINE, unpack(ids))
    redis.call('HDEL', INFO, unpack(ids))
    WAITERS = WAITERS - removed
  end
  return removed
end

-- Sets holder id's deadline to ms from now (the owner renews or confirms a claim); id holds. The
-- new deadline may be earlier than the old one (a claim confirmed to a shorter lease), so the
-- lower bound of the earliest deadline follows it down.
local function extend(id, ms)
  local at = deadline(ms)
  redis.call('ZADD', HOLDERS, 'XX', at, id)
  if not EARLIEST or at < EARLIEST then
    EARLIEST = at
  end
end

-- Expired leases give their permits back; waiters whose JVM stopped heartbeating leave the queue.
-- Skipped while the earliest lease (its lower bound in the state) is in the future; once that has
-- passed, the bound is read again from the holders (a renewed lease moved it out).
local function purge()
  if EARLIEST and EARLIEST <= NOW_MS then
    local ids = redis.call('ZRANGEBYSCORE', HOLDERS, '-inf', NOW_MS, 'LIMIT', 0, PURGE_BATCH)
    local complete = true
    if #ids > 0 then
      local values = redis.call('HMGET', INFO, unpack(ids))
      redis.call('ZREM', HOLDERS, unpack(ids))
      redis.call('HDEL', INFO, unpack(ids))
      for i = 1, #ids do
        local r = parseInfo(values[i])
        if r then
          USED = USED - r.count
        else
          complete = false
        end
      end
    end
    EARLIEST = tonumber(redis.call('ZRANGE', HOLDERS, 0, 0, 'WITHSCORES')[2])
    if not EARLIEST then
      USED = 0
    elseif not complete or USED < 0 then
      recount()
    end
  end
  if WAITERS > 0 then
    local ids = redis.call('ZRANGEBYSCORE', QUEUE_DEADLINE, '-inf', NOW_MS, 'LIMIT', 0, PURGE_BATCH)
    if #ids > 0 then
      dropWaiters(ids)
    end
  end
end

-- Hands a grant to the waiting JVM. A channel with a hash tag lives in this semaphore's slot: it
-- is a sharded channel (Redis Cluster 7+), and SPUBLISH keeps the message on this shard. One
-- without (standalone, Sentinel, Redis 6 clusters) gets PUBLISH.
local function publish(channel, message)
  if string.find(channel, '{', 1, true) then
    redis.call('SPUBLISH', channel, message)
  else
    redis.call('PUBLISH', channel, message)
  end
end

-- Serves the queue strictly in ticket order: the head is granted when it fits, and nobody behind
-- it is served before it (no overtaking). A grant starts with the waiter's short claim lease,
-- which its JVM extends to the full lease when it hears of it, so a waiter that died just before
-- its grant blocks the permit for the claim only. Each grant is handed straight to the waiting
-- JVM on its inbox channel as "id token"; token 0 tells a waiter it can never be served (the
-- limit shrank below its request).
local function grantWaiters()
  for _ = 1, GRANT_BATCH do
    if WAITERS == 0 then
      return
    end
    local id = redis.call('ZRANGE', QUEUE, 0, 0)[1]
    if not id then
      WAITERS = 0
      return
    end
    local r = readInfo(id)
    if r and r.count <= LIMIT and USED + r.count > LIMIT then
      return
    end
    dropWaiters({ id })
    if r and r.count <= LIMIT then
      hold(id, r, r.claim)
      publish(r.inbox, id .. ' ' .. r.token)
    elseif r then
      publish(r.inbox, id .. ' 0')
    end
  end
end

-- Writes the counters back, keeps every key's TTL past every deadline (I4), and builds the
-- reply: {used, limit, waiters, server time us, ms until the earliest lease ends, configured limit
-- of the previous call, override, own...}.
-- refresh: set every key's TTL even when the horizon needs none (renew does, as a self-repair).
local function finish(own, refresh)
  local fields = { 'used', USED, 'waiters', WAITERS, 'next', EARLIEST and string.format('%.0f', EARLIEST) or 'none' }
  if SEQ_CHANGED then
    fields[#fields + 1] = 'seq'
    fields[#fields + 1] = string.format('%.0f', SEQ)
  end
  if LAST_LIMIT ~= CONFIGURED then
    fields[#fields + 1] = 'limit'
    fields[#fields + 1] = CONFIGURED
  end
  -- I6: the state key has no TTL while an override is set, and gets it back when it is cleared.
  if OVERRIDE and OVERRIDE ~= SAVED_OVERRIDE then
    fields[#fields + 1] = 'override'
    fields[#fields + 1] = OVERRIDE
  elseif SAVED_OVERRIDE and not OVERRIDE then
    redis.call('HDEL', STATE, 'override')
    CREATED[STATE] = true
  end
  -- Large numbers go out through %.0f: Redis may print a Lua number in exponent form.
  -- The expiry only ever moves out: it covers deadlines of earlier calls too (I4).
  if refresh or EXPIRES == 0 or HORIZON + KEY_MIN_MARGIN_MS > EXPIRES then
    EXPIRES = math.max(EXPIRES, HORIZON + (HORIZON - NOW_MS) + KEY_MARGIN_MS)
    local at = string.format('%.0f', EXPIRES)
    fields[#fields + 1] = 'expires'
    fields[#fields + 1] = at
    redis.call('HSET', STATE, unpack(fields))
    for _, key in ipairs(KEYS) do
      if key ~= STATE or not OVERRIDE then
        redis.call('PEXPIREAT', key, at)
      end
    end
  else
    redis.call('HSET', STATE, unpack(fields))
    local at = string.format('%.0f', EXPIRES)
    for key in pairs(CREATED) do
      if key ~= STATE or not OVERRIDE then
        redis.call('PEXPIREAT', key, at)
      end
    end
  end
  local reply = { USED, LIMIT, WAITERS, NOW_US, EARLIEST and math.max(EARLIEST - NOW_MS, 0) or -1, LAST_LIMIT or 0,
                  OVERRIDE or 0 }
  for _, value in ipairs(own) do
    reply[#reply + 1] = value
  end
  return reply
end

-- ---------------------------------------------------------------------------------------------
