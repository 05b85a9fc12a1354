-- renew: one call per semaphore per tick for everything one JVM has on it, and the JVM's
-- confirmation of a grant it heard of. Extends the leases of its held permits (a claim lease
-- becomes a full lease), refreshes the heartbeats of its waiters, and reports waiters granted
-- meanwhile (in case their inbox message was lost) and anything lost.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 waiter heartbeat ms, 3.. ids of permits to renew and of waiters
-- Returns: {used, limit, waiters, time, earliest, renewed, s1, s2, ...}: renewed = leases extended;
--   per id in ARGV order, the fencing token when it holds permits (now extended), 0 while it still
--   waits, -1 when it is gone (lease expired, released by force, wiped, or heartbeat missed).
-- Keeps I1..I5, and repairs what a hand outside the scripts may have broken: it re-derives the
-- queue size and the earliest deadline from the keys, and sets every key's TTL anew (a few reads
-- and writes once per tick, never on the hot path).
local heartbeat = argNumber(2, 1, 86400000)

derive()
purge()
grantWaiters()

local renewed, statuses = 0, { 0 }
for i = 3, #ARGV do
  local id = ARGV[i]
  local status = -1
  if redis.call('ZSCORE', HOLDERS, id) then
    local r = readInfo(id)
    if r then
      extend(id, r.lease)
      renewed = renewed + 1
      status = tonumber(r.token)
    else
      dropHolder(id, nil)
    end
  elseif WAITERS > 0 and redis.call('ZSCORE', QUEUE_DEADLINE, id) then
    redis.call('ZADD', QUEUE_DEADLINE, 'XX', deadline(heartbeat), id)
    status = 0
  end
  statuses[#statuses + 1] = status
end

statuses[1] = renewed
return finish(statuses, true)
