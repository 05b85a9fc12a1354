-- renew: one call per semaphore per tick for everything one JVM has on it. Extends the leases of
-- its held permits, refreshes the heartbeats of its waiters, and reports waiters granted meanwhile
-- (in case their inbox message was lost) and anything lost.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 waiter heartbeat ms, 3.. ids of permits to renew and of waiters
-- Returns: {used, limit, waiters, time, renewed, s1, s2, ...}: renewed = leases extended; per id in
--   ARGV order, the fencing token when it holds permits (now extended), 0 while it still waits,
--   -1 when it is gone (lease expired, released by force, wiped, or heartbeat missed)
local heartbeat = tonumber(ARGV[2])

purge()
grantWaiters()

local renewed, statuses = 0, {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local status = -1
  if redis.call('ZSCORE', HOLDERS, id) then
    local r = readInfo(id)
    if r then
      redis.call('ZADD', HOLDERS, 'XX', NOW_MS + r.lease, id)
      renewed = renewed + 1
      status = r.token
    else
      dropHolder(id)
    end
  elseif redis.call('ZSCORE', QUEUE_DEADLINE, id) then
    redis.call('ZADD', QUEUE_DEADLINE, NOW_MS + heartbeat, id)
    status = 0
  end
  statuses[#statuses + 1] = status
end

table.insert(statuses, 1, renewed)
return finish(statuses)
