-- renew: one call per semaphore per tick for everything one JVM has on it, and the JVM's
-- confirmation of a grant it heard of. Extends the leases of its held permits (a claim lease
-- becomes a full lease), refreshes the heartbeats of its waiters, and reports waiters granted
-- meanwhile (in case their inbox message was lost) and anything lost. Each lease is extended by
-- its own length (recorded with it: the lease of its acquisition, or of its latest extension).
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 waiter heartbeat ms, 3 inbox of the caller's JVM, 4.. ids of permits to renew
--       and of waiters
-- Returns: {used, limit, waiters, time, earliest, previous, override, renewed, s1, s2, ..., l1, l2, ...}: renewed =
--   leases extended; per id in ARGV order, the fencing token when it holds permits (now extended),
--   0 while it still waits, -1 when it is gone (lease expired, released by force, wiped, or
--   heartbeat missed), -2 when another JVM adopted it (not extended); then per id, the lease ms it
--   was extended by (0 when not extended).
-- Keeps I1..I6, and repairs what a hand outside the scripts may have broken: it re-derives the
-- queue size and the earliest deadline from the keys, and sets every key's TTL anew (a few reads
-- and writes once per tick, never on the hot path).
local heartbeat = argNumber(2, 1, 86400000)
local inbox = argId(3)

derive()
purge()
grantWaiters()

local renewed, statuses, leases = 0, { 0 }, {}
for i = 4, #ARGV do
  local id = ARGV[i]
  local status, lease = -1, 0
  if redis.call('ZSCORE', HOLDERS, id) then
    local r = readInfo(id)
    if not r then
      dropHolder(id, nil)
    elseif r.inbox ~= inbox then
      status = -2
    else
      extend(id, r.lease)
      renewed = renewed + 1
      status, lease = tonumber(r.token), r.lease
    end
  elseif WAITERS > 0 and redis.call('ZSCORE', QUEUE_DEADLINE, id) then
    redis.call('ZADD', QUEUE_DEADLINE, 'XX', deadline(heartbeat), id)
    status = 0
  end
  statuses[#statuses + 1] = status
  leases[#leases + 1] = lease
end

statuses[1] = renewed
for _, lease in ipairs(leases) do
  statuses[#statuses + 1] = lease
end
return finish(statuses, true)
