-- cancel: a waiter gives up (timeout, interrupt, cancel, shutdown, a call that failed). If it was
-- granted meanwhile (its message may still be on the way) the caller learns so and the permit
-- never leaks: either the caller takes it (release 0: its claim is confirmed as a full lease) or
-- it is given back here (release 1).
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 waiter id, 3 release (1: give back a permit granted meanwhile)
-- Returns: {used, limit, waiters, time, earliest, previous, override, token}; token 0 when it left the queue (or was
--   unknown), else the fencing token of the permit it had been granted.
-- Keeps I1..I6 for an id in any state: a waiter leaves the queue with its info; a holder keeps
-- its info until it is dropped, so its count is always known.
local id = argId(2)
local release = ARGV[3] == '1'

purge()
local token = 0
if WAITERS == 0 or dropWaiters({ id }) == 0 then
  if redis.call('ZSCORE', HOLDERS, id) then
    local r = readInfo(id)
    token = tonumber(r and r.token or 0)
    if release then
      dropHolder(id, r)
    elseif r then
      extend(id, r.lease)
    end
  end
end
grantWaiters()
return finish({ token })
