-- acquire: grants permits now, or puts the caller in the queue when it will wait.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 permit id, 3 count, 4 lease ms, 5 wait (1: queue when refused, 0: don't),
--       6 fair (1: refuse while others wait, 0: take free permits regardless), 7 waiter heartbeat
--       ms (also the claim lease of a grant from the queue), 8 inbox channel of the caller's JVM,
--       9 owner (host/pid/thread)
-- Returns: {used, limit, waiters, time, earliest, previous, override, status, token}
--   status 1: granted, token = fencing token; 2: queued, token = ticket; 0: refused, token = 0
--   (also at once when count exceeds the limit of the call: an override below the request)
-- Idempotent per id (a client library may send a command twice after a reconnect): an id that
-- holds already is answered granted with its token (its lease confirmed in full), an id that
-- waits already is answered queued with its ticket (its heartbeat refreshed). Keeps I1..I6.
local id = argId(2)
local count = argNumber(3, 1, CONFIGURED)
local lease = argNumber(4, 1, 86400000)
local wait, fair = ARGV[5] == '1', ARGV[6] == '1'
local heartbeat = argNumber(7, 1, 86400000)
local inbox, owner = argId(8), ARGV[9] or ''

purge()
grantWaiters()

-- An id that holds already: a repeated call, or a grant from the queue it has not heard of yet.
local function held()
  local r = readInfo(id)
  extend(id, r and r.lease or lease)
  return finish({ 1, tonumber(r and r.token or 0) })
end

local record = { count = count, lease = lease, claim = heartbeat, token = '0', inbox = inbox, owner = owner }
if USED + count <= LIMIT and (WAITERS == 0 or (not fair and not redis.call('ZSCORE', QUEUE, id))) then
  if not hold(id, record, lease) then
    return held()
  end
  return finish({ 1, tonumber(record.token) })
end
if redis.call('ZSCORE', HOLDERS, id) then
  return held()
end
if not wait then
  return finish({ 0, 0 })
end
if count > LIMIT then
  -- An override below the request (I6): it cannot be served while that lasts, so it is refused now,
  -- and a resent call leaves the queue, rather than waiting to be dropped at its head. When it was
  -- the head, the waiter behind it may fit: it is served now, not at some later call (I3).
  if WAITERS > 0 and dropWaiters({ id }) > 0 then
    grantWaiters()
  end
  return finish({ 0, 0 })
end
local ticket = redis.call('ZSCORE', QUEUE, id)
if ticket then
  redis.call('ZADD', QUEUE_DEADLINE, deadline(heartbeat), id)
  return finish({ 2, tonumber(ticket) })
end
if WAITERS == 0 then
  CREATED[QUEUE] = true
  CREATED[QUEUE_DEADLINE] = true
end
ticket = nextSeq()
writeInfo(id, record)
redis.call('ZADD', QUEUE, ticket, id)
redis.call('ZADD', QUEUE_DEADLINE, deadline(heartbeat), id)
WAITERS = WAITERS + 1
return finish({ 2, tonumber(ticket) })
