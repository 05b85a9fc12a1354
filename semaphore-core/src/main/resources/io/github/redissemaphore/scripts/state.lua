-- state: the semaphore as Redis holds it, for introspection (after purging and granting, so it
-- shows what is true now).
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 most entries listed per table
-- Returns: {used, limit, waiters, time, earliest, previous, override, holders, queued}
--   holders: {{id, count, token, owner, lease remaining ms}, ...} soonest deadline first
--   queued:  {{id, count, owner}, ...} in the order they will be served
-- Keeps I1..I6; when it lists every holder it also recounts used (I1 self-check).
local most = argNumber(2, 1, 100000)

purge()
grantWaiters()

local holders = {}
local leases = redis.call('ZRANGE', HOLDERS, 0, most - 1, 'WITHSCORES')
if #leases > 0 then
  local ids = {}
  for i = 1, #leases, 2 do
    ids[#ids + 1] = leases[i]
  end
  local values = redis.call('HMGET', INFO, unpack(ids))
  local sum = 0
  for i, id in ipairs(ids) do
    local r = parseInfo(values[i])
    local count = r and r.count or 1
    sum = sum + count
    holders[#holders + 1] = { id, count, tonumber(r and r.token or 0), r and r.owner or '', tonumber(leases[2 * i]) - NOW_MS }
  end
  if #ids < most then
    USED = sum
  end
end

local queued = {}
local waiting = redis.call('ZRANGE', QUEUE, 0, most - 1)
if #waiting > 0 then
  local values = redis.call('HMGET', INFO, unpack(waiting))
  for i, id in ipairs(waiting) do
    local r = parseInfo(values[i])
    queued[#queued + 1] = { id, r and r.count or 0, r and r.owner or '' }
  end
end

return finish({ holders, queued })
