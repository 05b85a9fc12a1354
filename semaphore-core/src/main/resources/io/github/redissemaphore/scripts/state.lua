-- state: the semaphore as Redis holds it, for introspection (after purging and granting, so it
-- shows what is true now).
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 most entries listed per table
-- Returns: {used, limit, waiters, time, holders, queued}
--   holders: {{id, count, token, owner, lease remaining ms}, ...} soonest deadline first
--   queued:  {{id, count, owner}, ...} in the order they will be served
local most = tonumber(ARGV[2])

purge()
grantWaiters()

local holders = {}
local leases = redis.call('ZRANGE', HOLDERS, 0, most - 1, 'WITHSCORES')
for i = 1, #leases, 2 do
  local r = readInfo(leases[i])
  if r then
    holders[#holders + 1] = { leases[i], r.count, r.token, r.owner, tonumber(leases[i + 1]) - NOW_MS }
  end
end

local queued = {}
for _, id in ipairs(redis.call('ZRANGE', QUEUE, 0, most - 1)) do
  local r = readInfo(id)
  if r then
    queued[#queued + 1] = { id, r.count, r.owner }
  end
end

return finish({ holders, queued })
