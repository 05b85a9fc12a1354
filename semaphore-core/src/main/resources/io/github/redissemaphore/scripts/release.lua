-- release: gives a lease's permits back, all of them or all but some, and hands them to the head
-- of the queue.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 permit id, 3 permits the lease keeps (optional; 0, the default: give all back),
--       4 inbox of the caller's JVM (optional: with it, only a lease this JVM owns is touched, so a
--       JVM whose lease another one adopted cannot release it; without it, any lease, by id),
--       5 hand over (optional, 0 or 1; 0, the default: as above): 1 releases any lease, whichever
--       JVM owns it, and tells the JVM that owned it, if not the caller's, on its inbox
--       "<id> -<server time us>", as an adoption does (see lease): it hears of a hand-over, not of
--       a lost lease. RedisSemaphore.release(id) is this one call, not an adoption and a release.
-- Returns: {used, limit, waiters, time, earliest, previous, override, released, left}
--   released 1: the id held permits and now holds at most ARGV 3 (left: what it still holds, 0 when
--   it is gone); 0: it held nothing (released before, expired, a waiter, or never existed); -1:
--   another JVM owns it (ARGV 4 given, ARGV 5 not 1), nothing changed.
-- A part is given back as "keep at most k", not "give back n": a call a client library sends twice
-- after a reconnect gives back once, and two parts given back at once add up.
-- Keeps I1..I6: the count given back is the one recorded with the id; a part keeps its id, token
-- and deadline, and only its count goes down, with used. The hand-over message is published
-- before anything is written, and changes no key.
local id = argId(2)
local keep = ARGV[3] and argNumber(3, 0, 1000000) or 0
local inbox = ARGV[4] and argId(4)
local handOver = ARGV[5] and argNumber(5, 0, 1) == 1

purge()
local r = readInfo(id)
-- A waiter's info has token 0 (I2): only a holder's token is above.
local holds = r and r.token ~= '0'
local released, left = 0, 0
if holds and inbox and r.inbox ~= inbox and not handOver then
  released, left = -1, r.count
else
  if holds and handOver and r.inbox ~= inbox and redis.call('ZSCORE', HOLDERS, id) then
    publish(r.inbox, id .. ' -' .. string.format('%.0f', NOW_US))
  end
  if holds and keep > 0 and redis.call('ZSCORE', HOLDERS, id) then
    if keep < r.count then
      USED = math.max(USED - (r.count - keep), 0)
      r.count = keep
      writeInfo(id, r)
    end
    released, left = 1, r.count
  elseif dropHolder(id, r) then
    released = 1
  end
end
grantWaiters()
return finish({ released, left })
