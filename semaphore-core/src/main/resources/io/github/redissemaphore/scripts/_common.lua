-- Shared by every semaphore script: SemaphoreScripts prepends this file to each of them.
-- KEYS (all with the hash tag {name}, so one cluster slot):
--   1 holders        ZSET permit id -> lease deadline (server ms)
--   2 state          HASH seq (tickets and fencing tokens), used (permits held), limit (last seen)
--   3 queue          ZSET waiter id -> ticket (arrival order)
--   4 queue-deadline ZSET waiter id -> heartbeat deadline (server ms)
--   5 info           HASH id -> "count token leaseMs inbox owner"
-- ARGV[1]: the limit (permits) the caller is configured with; the rest is the script's own.
-- Every script returns a table that starts with used, limit, waiters (the figures for gauges) and
-- the server time in microseconds (so a client can tell the newest figures), then its own entries.

local HOLDERS, STATE, QUEUE, QUEUE_DEADLINE, INFO = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local LIMIT = tonumber(ARGV[1])
-- Bounds the work one call does on behalf of others, so no call is ever slow.
local PURGE_BATCH = 100
local GRANT_BATCH = 1000
-- Keys outlive the last lease or heartbeat by this much, then an idle semaphore is gone.
local KEY_MARGIN_MS = 5000

-- Server time only: clients' clocks never matter.
local clock = redis.call('TIME')
local NOW_MS = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local NOW_US = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

-- A state key that outlived its holders (it expires last) must not carry a stale count.
local USED = 0
if redis.call('EXISTS', HOLDERS) == 1 then
  USED = tonumber(redis.call('HGET', STATE, 'used') or '0')
end

local function readInfo(id)
  local value = redis.call('HGET', INFO, id)
  if not value then
    return nil
  end
  local count, token, lease, inbox, owner = string.match(value, '^(%d+) (%d+) (%d+) (%S+) (.*)$')
  return { count = tonumber(count), token = tonumber(token), lease = tonumber(lease), inbox = inbox, owner = owner }
end

local function writeInfo(id, r)
  redis.call('HSET', INFO, id, string.format('%d %.0f %d %s %s', r.count, r.token, r.lease, r.inbox, r.owner))
end

-- Tickets and fencing tokens: strictly increasing, and never below the server clock in
-- microseconds, so they keep increasing after the state key expired.
local function nextSeq()
  local seq = math.max(tonumber(redis.call('HGET', STATE, 'seq') or '0') + 1, NOW_US)
  redis.call('HSET', STATE, 'seq', string.format('%.0f', seq))
  return seq
end

local function hold(id, r)
  r.token = nextSeq()
  redis.call('ZADD', HOLDERS, NOW_MS + r.lease, id)
  writeInfo(id, r)
  USED = USED + r.count
  return r.token
end

local function dropHolder(id)
  if redis.call('ZREM', HOLDERS, id) == 0 then
    return false
  end
  local r = readInfo(id)
  if r then
    USED = math.max(USED - r.count, 0)
  end
  redis.call('HDEL', INFO, id)
  return true
end

local function dropWaiter(id)
  local removed = redis.call('ZREM', QUEUE, id)
  redis.call('ZREM', QUEUE_DEADLINE, id)
  redis.call('HDEL', INFO, id)
  return removed == 1
end

-- Expired leases give their permits back; waiters whose JVM stopped heartbeating leave the queue.
local function purge()
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', HOLDERS, '-inf', NOW_MS, 'LIMIT', 0, PURGE_BATCH)) do
    dropHolder(id)
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', QUEUE_DEADLINE, '-inf', NOW_MS, 'LIMIT', 0, PURGE_BATCH)) do
    dropWaiter(id)
  end
end

-- Serves the queue strictly in ticket order: the head is granted when it fits, and nobody behind
-- it is served before it (no overtaking). Each grant is handed straight to the waiting JVM on
-- its inbox channel as "id token"; token 0 tells a waiter it can never be served (the limit
-- shrank below its request).
local function grantWaiters()
  for _ = 1, GRANT_BATCH do
    local id = redis.call('ZRANGE', QUEUE, 0, 0)[1]
    if not id then
      return
    end
    local r = readInfo(id)
    if r and r.count <= LIMIT and USED + r.count > LIMIT then
      return
    end
    redis.call('ZREM', QUEUE, id)
    redis.call('ZREM', QUEUE_DEADLINE, id)
    if r and r.count <= LIMIT then
      redis.call('PUBLISH', r.inbox, id .. ' ' .. string.format('%.0f', hold(id, r)))
    else
      redis.call('HDEL', INFO, id)
      if r then
        redis.call('PUBLISH', r.inbox, id .. ' 0')
      end
    end
  end
end

-- Writes the counters back, gives every key a TTL just past the last lease or heartbeat, and
-- builds the reply: {used, limit, waiters, server time us, own...}.
local function finish(own)
  redis.call('HSET', STATE, 'used', USED, 'limit', LIMIT)
  local last = NOW_MS
  local lastLease = redis.call('ZRANGE', HOLDERS, -1, -1, 'WITHSCORES')[2]
  if lastLease then
    last = math.max(last, tonumber(lastLease))
  end
  local lastHeartbeat = redis.call('ZRANGE', QUEUE_DEADLINE, -1, -1, 'WITHSCORES')[2]
  if lastHeartbeat then
    last = math.max(last, tonumber(lastHeartbeat))
  end
  for _, key in ipairs(KEYS) do
    redis.call('PEXPIRE', key, last - NOW_MS + KEY_MARGIN_MS)
  end
  local reply = { USED, LIMIT, redis.call('ZCARD', QUEUE), NOW_US }
  for _, value in ipairs(own) do
    reply[#reply + 1] = value
  end
  return reply
end

-- ---------------------------------------------------------------------------------------------
