-- renew: one call per semaphore per tick for everything one JVM has on it, and the JVM's
-- confirmation of the grants it heard of. Extends the leases of its held permits (a claim lease
-- becomes a full lease), refreshes the heartbeats of its waiters, and reports waiters granted
-- meanwhile (in case their inbox message was lost) and anything lost. Each lease is extended by
-- its own length (recorded with it: the lease of its acquisition, or of its latest extension).
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
-- ARGV: 1 limit, 2 waiter heartbeat ms, 3 inbox of the caller's JVM, 4.. ids of permits to renew
--       and of waiters
-- Returns: {used, waiters, time, earliest, limits, renewed, s1, s2, ..., l1, l2, ...}:
--   renewed = leases extended; per id in ARGV order, the fencing token when it holds permits (now
--   extended), 0 while it still waits, -1 when it is gone (lease expired, released by force,
--   wiped, or heartbeat missed), -2 when another JVM adopted it (not extended); then per id, the
--   lease ms it was extended by (0 when not extended).
-- Keeps I1..I6, and repairs what a hand outside the scripts may have broken: it re-derives the
-- queue size and the earliest deadline from the keys, drops a waiter's record whose queue entry is
-- gone (its JVM joins again), and sets every key's TTL anew (a few reads and writes once per tick,
-- never on the hot path).
--@include _args.lua
local heartbeat = argNumber(2, 1, 86400000)
local inbox = argId(3)
local ID = NO_ID
--@include _read.lua
--@include _load.lua
--@include _keys.lua
REFRESH = true
-- I5: the queue size and the earliest deadline from the keys themselves.
WAITERS = redis.call('ZCARD', QUEUE)
do
  local first = redis.call('ZRANGE', DEADLINES, 0, 0, 'WITHSCORES')
  EARLIEST = first[1] and first[1] ~= '' and first[2] + 0 or 0
  if EARLIEST == 0 then
    USED = 0
  end
  -- I4: the keys' expiry must also cover deadlines other calls wrote; the last entry is the
  -- sentinel, put back if a hand outside the scripts took it (see _load.lua).
  local last = redis.call('ZRANGE', DEADLINES, -2, -1, 'WITHSCORES')
  if last[#last - 1] ~= '' then
    redis.call('ZADD', DEADLINES, '+inf', '')
  end
  if #last == 4 and last[1] ~= '' and last[2] + 0 > HORIZON then
    HORIZON = last[2] + 0
  end
end
--@include _purge.lua
--@include _grant.lua

local n = #ARGV - 3
local renewed, statuses, leases = 0, {}, {}
-- The members of the ids: the ids themselves, or "<key> <id>" for a capped semaphore's key.
local members = ARGV
if KEY then
  members = {}
  for i = 4, #ARGV do
    members[i] = KEY .. ' ' .. ARGV[i]
  end
end
-- The records of the ids, read in chunks of 1000 (a Lua call takes a few thousand arguments at most).
for from = 1, n, 1000 do
  local to = math.min(from + 999, n)
  local recs = redis.call('HMGET', STATE, unpack(members, from + 3, to + 3))
  for i = from, to do
    local id = members[i + 3]
    local status, extended = -1, 0
    local _, lease, _, token, owns = string.match(GRANTED and GRANTED[id] or recs[i - from + 1] or '',
        '^(%d+) (%d+) (%d+) (%d+) (%S+) ')
    if token and token ~= '0' then
      if owns ~= inbox then
        status = -2
      else
        setDeadline(id, lease)
        renewed = renewed + 1
        status, extended = token + 0, lease + 0
      end
    elseif token then
      if redis.call('ZSCORE', QUEUE, id) then
        setDeadline(id, heartbeat)
        status = 0
      else
        -- Its queue entry is gone (a hand outside the scripts): so is the rest; its JVM joins again.
        redis.call('ZREM', DEADLINES, id)
        redis.call('HDEL', STATE, id)
      end
    end
    statuses[i] = status
    leases[i] = extended
  end
end
OWN1 = renewed
--@include _finish.lua
for i = 1, n do
  R[6 + i] = statuses[i]
  R[6 + n + i] = leases[i]
end
return R
