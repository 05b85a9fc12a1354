-- acquire: grants permits now, or puts the caller in the queue when it will wait.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 permit id, 3 count, 4 lease ms, 5 wait (1: queue when refused, 0: don't),
--       6 fair (1: refuse while others wait, 0: take free permits regardless), 7 heartbeat ms,
--       8 inbox channel of the caller's JVM, 9 owner (host/pid/thread)
-- Returns: {used, limit, waiters, time, status, token}
--   status 1: granted, token = fencing token; 2: queued, token = ticket; 0: refused, token = 0
local id, count, lease = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local wait, fair = ARGV[5] == '1', ARGV[6] == '1'

purge()
grantWaiters()

local record = { count = count, token = 0, lease = lease, inbox = ARGV[8], owner = ARGV[9] }
local status, token = 0, 0
if USED + count <= LIMIT and (not fair or redis.call('EXISTS', QUEUE) == 0) then
  status, token = 1, hold(id, record)
elseif wait then
  status, token = 2, nextSeq()
  redis.call('ZADD', QUEUE, token, id)
  redis.call('ZADD', QUEUE_DEADLINE, NOW_MS + tonumber(ARGV[7]), id)
  writeInfo(id, record)
end

return finish({ status, token })
