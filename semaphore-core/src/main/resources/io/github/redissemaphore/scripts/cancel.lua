-- cancel: a waiter gives up (timeout, interrupt, cancel, shutdown). If it was granted meanwhile
-- (its message may still be on the way) the caller learns so and the permit never leaks: it is
-- either handed over (release 0) or given back here (release 1).
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 waiter id, 3 release (1: give back a permit granted meanwhile)
-- Returns: {used, limit, waiters, time, token}; token 0 when it left the queue (or was unknown),
--   else the fencing token of the permit it had been granted
local id = ARGV[2]

purge()
local token = 0
if not dropWaiter(id) and redis.call('ZSCORE', HOLDERS, id) then
  token = readInfo(id).token
  if ARGV[3] == '1' then
    dropHolder(id)
  end
end
grantWaiters()
return finish({ token })
